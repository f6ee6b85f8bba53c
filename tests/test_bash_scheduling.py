"""A batch with the real tools: `Read a, Read b, Edit c, Bash d, Read e` → `[a b] [c] [d] [e]`,
and a command the read-only classifier lets through shares a group with the reads around it."""

from __future__ import annotations

from tests.file_tools import file_env
from tui_app.runtime.executor import TurnControl, run_batch
from tui_app.runtime.permissions.decision import ModePolicy
from tui_app.runtime.pipeline import ToolCall
from tui_app.runtime.results.artifacts import ArtifactStore
from tui_app.tools.bash.tool import BASH
from tui_app.tools.edit import EDIT


async def test_read_read_edit_bash_read_groups(tmp_path):
    for name in "abce":
        (tmp_path / name).write_text(f"content of {name}\n")
    files = file_env(tmp_path, EDIT, BASH, policy=ModePolicy(allow={"Bash", "Edit"}))
    env, rec = files.env, files.rec
    env.services["artifacts"] = ArtifactStore("test", tmp_path / ".artifacts")
    assert (await files.call("Read", {"file_path": str(tmp_path / "c")})).type == "ToolCallResult"  # Edit's baseline
    calls = [ToolCall("a", "Read", {"file_path": str(tmp_path / "a")}),
             ToolCall("b", "Read", {"file_path": str(tmp_path / "b")}),
             ToolCall("c", "Edit", {"file_path": str(tmp_path / "c"), "old_string": "content",
                                    "new_string": "CONTENT"}),
             ToolCall("d", "Bash", {"command": "cp c d.out && cat d.out"}),  # writes a file: a group of its own
             ToolCall("e", "Read", {"file_path": str(tmp_path / "e")})]
    outcomes = await run_batch(calls, env, TurnControl())

    scheduled = rec.of("ToolCallScheduled")
    assert scheduled[0].groups == [["a", "b"], ["c"], ["d"], ["e"]]
    assert [(e.call_id, e.group) for e in scheduled] == [("a", 0), ("b", 0), ("c", 1), ("d", 2), ("e", 3)]
    assert [o.call_id for o in outcomes] == ["a", "b", "c", "d", "e"]
    assert [o.type for o in outcomes] == ["ToolCallResult"] * 5
    seq = {(e.type, e.call_id): e.seq for e in rec.events}
    # a group starts only when the one before it has finished
    assert seq[("ToolCallStarted", "d")] > seq[("ToolCallResult", "c")]
    assert seq[("ToolCallStarted", "e")] > seq[("ToolCallResult", "d")]
    assert outcomes[3].model_content == "CONTENT of c\n"  # Bash saw the Edit's result


async def test_a_command_the_classifier_calls_read_only_shares_a_group_with_reads(tmp_path):
    (tmp_path / "a").write_text("a\n")
    files = file_env(tmp_path, BASH, policy=ModePolicy())
    calls = [ToolCall("a", "Read", {"file_path": "a"}), ToolCall("b", "Bash", {"command": "ls"}),
             ToolCall("c", "Bash", {"command": "touch x"}), ToolCall("d", "Read", {"file_path": "a"})]
    outcomes = await run_batch(calls, files.env, TurnControl())
    assert files.rec.of("ToolCallScheduled")[0].groups == [["a", "b"], ["c"], ["d"]]
    assert outcomes[1].type == "ToolCallResult" and "a\n" in outcomes[1].model_content  # no approval asked
    assert outcomes[2].code == "no_permission_client"  # the writer still needs one
    assert not (tmp_path / "x").exists()
