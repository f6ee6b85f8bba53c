"""The command line: one-line reasons and non-zero exits for what a user gets wrong."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent


def vigil(*args: str, cwd: Path | None = None, home: Path | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    if home is not None:
        env["VIGIL_HOME"] = str(home)
    env.pop("ANTHROPIC_API_KEY", None)
    env.pop("OPENAI_API_KEY", None)
    return subprocess.run([sys.executable, "-m", "tui_app", *args], capture_output=True, text=True,
                          cwd=cwd or ROOT, env=env, timeout=60)


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["-p", "hi", "--output-format", "yaml"], "invalid choice: 'yaml'"),
        (["-p", "hi", "--permission-mode", "yolo"], "invalid choice: 'yolo'"),
        (["-p", "hi", "--max-turns", "0"], "must be at least 1"),
        (["--no-such-flag"], "unrecognized arguments: --no-such-flag"),
    ],
)
def test_a_bad_flag_exits_2_with_one_line(args, words):
    out = vigil(*args)
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0] and lines[0].startswith("vigil: ")


def test_a_missing_script_exits_2_with_one_line(tmp_path):
    out = vigil("-p", "hi", "--script", str(tmp_path / "nope.json"), home=tmp_path)
    assert out.returncode == 2
    assert out.stderr.strip() == f"vigil: cannot read script {tmp_path / 'nope.json'}: No such file or directory"


def test_an_invalid_script_names_the_problem(tmp_path):
    script = tmp_path / "bad.json"
    script.write_text(json.dumps({"steps": [{"tool_calls": [{"input": {}}]}]}))
    out = vigil("-p", "hi", "--script", str(script), home=tmp_path)
    assert out.returncode == 2
    assert "invalid script" in out.stderr and "steps.0.tool_calls.0.name" in out.stderr


def test_a_missing_cwd_exits_2_with_one_line(tmp_path):
    out = vigil("-p", "hi", "--cwd", str(tmp_path / "gone"), home=tmp_path)
    assert out.returncode == 2
    assert out.stderr.strip() == f"vigil: working directory {tmp_path / 'gone'} does not exist or is not a directory"


def test_an_empty_prompt_is_refused(tmp_path):
    out = vigil("-p", "  ", home=tmp_path)
    assert (out.returncode, out.stderr.strip()) == (2, "vigil: the prompt is empty")


@pytest.mark.parametrize("args", [["--demo", "--output-format", "text"], []])
def test_the_demo_without_a_terminal_is_a_plain_transcript(tmp_path, args):
    """`vigil --demo --output-format text`, and bare `vigil` when stdout is not a terminal."""
    out = vigil(*args, home=tmp_path, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("Vigil demo: a scripted model works on a fresh copy of a sample project")
    assert "Glob" in out.stdout and "[completed]" in out.stdout
    assert "\x1b[?1049h" not in out.stdout  # no full-screen app was started
    # nobody is there to ask: the demo fixes its copy and the re-run passes
    assert "✓ Edit" in out.stdout and "no_permission_client" not in out.stdout
    assert out.stdout.rstrip().splitlines()[-1].startswith("[completed]")


@pytest.mark.parametrize("fmt", ["stream-json", "events", "json"])
def test_the_headless_demo_honours_a_machine_readable_output_format(tmp_path, fmt):
    out = vigil("--demo", "--output-format", fmt, home=tmp_path, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    lines = [json.loads(line) for line in out.stdout.splitlines()]  # every line of stdout is JSON
    if fmt == "stream-json":
        assert (lines[0]["type"], lines[0]["subtype"]) == ("system", "init")
        assert lines[-1]["type"] == "result" and lines[-1]["subtype"] == "success"
        assert any(b.get("name") == "Edit" for line in lines if line["type"] == "assistant"
                   for b in line["message"]["content"])
    elif fmt == "events":
        kinds = [line["type"] for line in lines]
        assert "ToolCallResult" in kinds and "TurnEnded" in kinds
    else:
        [result] = lines
        assert result["type"] == "result" and not result["is_error"]
    assert "Vigil demo: a scripted model" in out.stderr  # the words for a person go to stderr


def test_the_headless_demo_denies_what_would_ask_when_the_user_picks_the_mode(tmp_path):
    out = vigil("--demo", "--output-format", "text", "--permission-mode", "default", home=tmp_path, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "Nobody is asked" not in out.stdout
    assert out.stdout.count("✗ no_permission_client") == 3  # the two test runs and the Edit
    assert "✓ Edit" not in out.stdout


def test_the_demo_is_what_runs_when_nothing_names_a_model(monkeypatch):
    from tui_app.cli import build_parser, wants_demo

    for name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    parse = build_parser().parse_args
    assert wants_demo(parse([]))
    assert wants_demo(parse(["--demo", "--script", "s.json"]))
    assert not wants_demo(parse(["--script", "s.json"]))
    assert not wants_demo(parse(["--resume", "20250101-120000-abc123"]))
    assert not wants_demo(parse(["--provider", "openai", "--base-url", "http://127.0.0.1:1/v1", "--model", "m"]))
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:11434/v1")
    assert not wants_demo(parse([]))
