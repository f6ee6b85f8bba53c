"""The issue's headless session, end to end: `vigil -p` in default mode with
`allow: Bash(echo *), Bash(touch:*)`, `deny: Bash(rm *), Read(./secret/**)`. Reads and writes
outside the working directory ask, and headless an ask is a denial listed in `permission_denials`
(what Claude Code 2.1.332 does with the same settings and calls); a NUL byte in a path is an input
error the model reads, and the run goes on to the end with exit code 0.
"""

from __future__ import annotations

import io
import json

from tests.sec_kit import attack_settings, canary_root, isolate, make_canary, session_for
from tui_app.headless.runner import run_headless

__all__ = ["canary_root"]


async def test_outside_paths_are_denials_and_nul_bytes_are_input_errors(canary_root, monkeypatch):
    settings = attack_settings()
    settings["permissions"]["allow"].append("Bash(touch:*)")
    canary = make_canary(canary_root, settings)
    isolate(monkeypatch, canary)
    notes = str(canary.proj / "notes.txt")
    calls = [
        ("passwd", "Read", {"file_path": "/etc/passwd"}),
        ("cat", "Bash", {"command": "cat /etc/passwd"}),
        ("touch", "Bash", {"command": "touch ../outside.txt"}),
        ("touch-in", "Bash", {"command": "touch inside.txt"}),
        ("read-nul", "Read", {"file_path": notes + "\x00.txt"}),
        ("write-nul", "Write", {"file_path": notes + "\x00", "content": "x"}),
        ("edit-nul", "Edit", {"file_path": "\x00" + notes, "old_string": "a", "new_string": "b"}),
        ("glob-nul", "Glob", {"pattern": "*\x00"}),
        ("artifact-nul", "ReadArtifact", {"artifact": "x\x00"}),
        ("grep-nul", "Grep", {"pattern": "x", "path": "src\x00"}),
        ("too-long", "Write", {"file_path": str(canary.proj / ("b" * 300) / "x"), "content": "x"}),
    ]
    steps = [{"tool_calls": [{"id": i, "name": n, "input": d} for i, n, d in calls]}, {"text": "done"}]
    session = session_for(canary, steps=steps)
    out = io.StringIO()
    code = await run_headless(session, "go", "stream-json", out)
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert code == 0
    result = lines[-1]
    assert result["type"] == "result" and not result["is_error"]
    denied = {d["tool_use_id"] for d in result["permission_denials"]}
    assert denied == {"passwd", "cat", "touch"}
    blocks = {b["tool_use_id"]: b for ln in lines if ln["type"] == "user" for b in ln["message"]["content"]}
    for call_id in ("read-nul", "write-nul", "edit-nul", "glob-nul", "artifact-nul", "grep-nul"):
        assert blocks[call_id]["is_error"] and "NUL byte" in blocks[call_id]["content"], blocks[call_id]
    assert blocks["too-long"]["is_error"] and "File name too long" in blocks["too-long"]["content"]
    assert "root:" not in json.dumps(blocks)
    assert not (canary.root / "outside.txt").exists()
    assert (canary.proj / "inside.txt").exists()


def test_add_dir_makes_a_directory_a_working_directory(canary_root, monkeypatch, capsys):
    from tui_app.cli import main

    canary = make_canary(canary_root)
    isolate(monkeypatch, canary)
    steps = [{"tool_calls": [{"id": "r", "name": "Read", "input": {"file_path": str(canary.outside / "outside.txt")}}]},
             {"text": "done"}]
    (canary.root / "steps.json").write_text(json.dumps({"steps": steps}))
    args = ["-p", "read it", "--script", str(canary.root / "steps.json"), "--cwd", str(canary.proj),
            "--no-claude-settings", "--output-format", "stream-json"]
    assert main([*args, "--add-dir", "../outside"]) == 0
    added = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert added[-1]["permission_denials"] == [] and canary.outside_secret in json.dumps(added)
    assert main(args) == 0
    without = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [d["tool_use_id"] for d in without[-1]["permission_denials"]] == ["r"]
    assert main([*args, "--add-dir", "../no-such-dir"]) == 2
    assert "--add-dir ../no-such-dir: no such directory" in capsys.readouterr().err
