"""Turn-loop details a provider cannot be trusted with, and the system prompt the model is given."""

from __future__ import annotations

import subprocess

from tests.fakes import SAFE, work_spec
from tui_app.agents.builtin_agent import BuiltinAgent
from tui_app.agents.system_prompt import build_system_prompt
from tui_app.providers.scripted import Script, ScriptedModel
from tui_app.runtime.registry import ToolRegistry
from tui_app.runtime.session import Session


async def test_calls_without_ids_or_with_the_same_id_still_get_one_result_each(tmp_path):
    registry = ToolRegistry()
    registry.register(work_spec("Look", SAFE))
    script = Script.model_validate({"steps": [
        {"tool_calls": [{"id": "dup", "name": "Look", "input": {"label": "one"}},
                        {"id": "dup", "name": "Look", "input": {"label": "two"}}]},
        {"text": "done"}]})
    model = ScriptedModel(script)
    session = Session(agent=BuiltinAgent(model), cwd=str(tmp_path), registry=registry, persist=False)
    await session.start()
    result = await session.run_turn("go")
    await session.close()
    assert result.reason == "completed"
    messages = model.requests[1].messages
    uses = [b.id for b in messages[-2].content if b.type == "tool_use"]
    results = [(b.tool_use_id, b.content) for b in messages[-1].content]
    assert len(set(uses)) == 2 and uses[0] == "dup"
    assert results == [(uses[0], "did one"), (uses[1], "did two")]


def test_the_system_prompt_states_the_environment(tmp_path):
    plain = build_system_prompt(str(tmp_path), ["Read", "Edit"], date="2026-05-01")
    assert f"- Working directory: {tmp_path}" in plain
    assert "- Today's date: 2026-05-01" in plain and "- Git repository: no" in plain
    assert "- Platform: linux" in plain and "- Available: Read, Edit." in plain
    subprocess.run(["git", "init", "-q", "-b", "trunk", str(tmp_path)], check=True)
    repo = build_system_prompt(str(tmp_path), ["Read"], date="2026-05-01")
    assert "- Git repository: yes" in repo and "- Git branch: trunk" in repo
