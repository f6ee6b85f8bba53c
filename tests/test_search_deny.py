"""Read deny rules reach into searches: Grep and Glob never hand the model a denied file, and say
how many they left out. Real tools, real files, a session assembled from a settings file."""

from __future__ import annotations

import json

import pytest

from tui_app.assemble import SessionOptions, build_session

SECRET = "AWS_SECRET=hunter2"


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.setenv("VIGIL_HOME", str(tmp_path / "home"))
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / "secrets").mkdir()
    (root / ".env").write_text(f"{SECRET}\n")
    (root / "src" / "config.py").write_text('AWS_SECRET = os.environ["AWS_SECRET"]\n')
    (root / "secrets" / "prod.key").write_text(f"{SECRET}\n")
    (root / "src" / ".env").write_text(f"{SECRET}\n")  # a bare name matches at any depth
    return root


async def results_of(project, tmp_path, calls, deny):
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"steps": [{"tool_calls": calls}, {"text": "done"}]}))
    settings = json.dumps({"permissions": {"deny": deny}})
    session = build_session(SessionOptions(cwd=str(project), script=str(script), settings_file=settings,
                                           no_claude_settings=True, interactive=False))
    outcomes = {}
    session.subscribe(lambda e: outcomes.__setitem__(e.call_id, e)
                      if e.type in ("ToolCallResult", "ToolCallError") else None)
    await session.start()
    try:
        await session.run_turn("look for secrets")
    finally:
        await session.close()
    return outcomes


async def test_grep_and_glob_leave_out_what_read_may_not_read(project, tmp_path):
    calls = [
        {"id": "g1", "name": "Grep", "input": {"pattern": "AWS_SECRET", "output_mode": "content"}},
        {"id": "g2", "name": "Grep", "input": {"pattern": "AWS_SECRET"}},
        {"id": "g3", "name": "Glob", "input": {"pattern": "**/*"}},
        {"id": "g4", "name": "Grep", "input": {"pattern": "AWS_SECRET", "output_mode": "count", "glob": "*.key"}},
    ]
    got = await results_of(project, tmp_path, calls, ["Read(.env)", "Read(./secrets/**)"])
    content = got["g1"].model_content
    assert "config.py" in content and "hunter2" not in content
    assert "(1 matching file left out: Read deny rules)" in content  # Grep skips hidden files anyway
    files = got["g2"].model_content
    assert "config.py" in files and ".env" not in files and "prod.key" not in files
    listing = got["g3"].model_content
    assert "config.py" in listing and ".env" not in listing and "secrets" not in listing
    assert "(3 matching files left out: Read deny rules)" in listing
    only_denied = got["g4"].model_content
    assert "prod.key" not in only_denied and "(1 matching file left out: Read deny rules)" in only_denied


async def test_a_deny_rule_for_grep_itself_filters_grep_only(project, tmp_path):
    calls = [
        {"id": "g1", "name": "Grep", "input": {"pattern": "AWS_SECRET"}},
        {"id": "g2", "name": "Glob", "input": {"pattern": "**/*.key"}},
    ]
    got = await results_of(project, tmp_path, calls, ["Grep(./secrets/**)"])
    assert "prod.key" not in got["g1"].model_content and "1 matching file left out" in got["g1"].model_content
    assert "prod.key" in got["g2"].model_content and "left out" not in got["g2"].model_content


async def test_without_path_deny_rules_nothing_is_left_out(project, tmp_path):
    got = await results_of(project, tmp_path, [{"id": "g1", "name": "Grep", "input": {"pattern": "AWS_SECRET"}}],
                           ["Bash(curl *)"])
    text = got["g1"].model_content
    assert "prod.key" in text and "config.py" in text and "left out" not in text
