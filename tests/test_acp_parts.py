"""The ACP driver's parts that need no agent: which agents the settings and PATH offer, how a call
is gathered across updates, what Vigil's preview of an agent's diff is, how a permission request is
seen by Vigil's policy, and which of the agent's options an answer picks."""

from __future__ import annotations

from pathlib import Path

import pytest
from acp.schema import FileEditToolCallContent, PermissionOption, ToolCallLocation, ToolCallProgress, ToolCallStart

from tui_app.agents.acp.permission import build_question, pick_option
from tui_app.agents.acp.previews import changes_of, preview_of
from tui_app.agents.acp.results import unfenced
from tui_app.agents.acp.setup import PRESETS, catalog
from tui_app.agents.acp.start import UnknownAgent, acp_driver
from tui_app.agents.acp.tool_calls import AcpCall, unwrap_command, unwrap_shell
from widgets.diff.model import build_diffs


def on_path(*names: str):
    return lambda command: f"/usr/bin/{command}" if command in names else None


def test_presets_are_offered_only_when_their_command_is_on_path():
    found = catalog({}, which=on_path("gemini", "codex-acp"))
    assert sorted(found.agents) == ["codex", "gemini"] and found.problems == []
    assert found.agents["gemini"].argv == ["gemini", "--acp"]


def test_settings_add_agents_and_change_a_preset_without_repeating_it():
    values = {"agents": {
        "mine": {"protocol": "acp", "command": "~/bin/my-agent", "args": ["--stdio"], "env": {"K": "v"},
                 "mode": "ask"},
        "claude": {"env": {"CLAUDE_CODE_EXECUTABLE": "/opt/claude"}},
    }}
    found = catalog(values, which=on_path())
    mine, claude = found.agents["mine"], found.agents["claude"]
    assert mine.argv[0].endswith("/bin/my-agent") and not mine.argv[0].startswith("~")
    assert (mine.args, mine.env, mine.mode) == (("--stdio",), {"K": "v"}, "ask")
    # the preset's command, its bypass-free session options and its hooks rule stay
    assert claude.argv == ["claude-agent-acp"] and claude.env == {"CLAUDE_CODE_EXECUTABLE": "/opt/claude"}
    assert claude.session_meta == PRESETS["claude"].session_meta and claude.runs_claude_hooks


@pytest.mark.parametrize(("entry", "said"), [
    ({"protocol": "mcp", "command": "x"}, "protocol 'mcp' is not one Vigil speaks"),
    ({"protocol": "acp"}, "needs a command"),
    ({"command": "x", "args": "--acp"}, "args must be a list of strings"),
    ({"command": "x", "env": {"A": 1}}, "env must map names to strings"),
    ("gemini --acp", "must be an object"),
])
def test_an_unusable_agents_entry_is_reported_and_left_out(entry, said):
    found = catalog({"agents": {"broken": entry}}, which=on_path())
    assert "broken" not in found.agents
    assert len(found.problems) == 1 and said in found.problems[0] and "agents.broken" in found.problems[0]


def test_vigils_own_names_cannot_be_taken():
    found = catalog({"agents": {"claude-code": {"command": "x"}, "vigil": {"command": "y"}}}, which=on_path())
    assert found.agents == {} and len(found.problems) == 2


def test_an_unknown_agent_is_one_line_that_says_what_there_is(monkeypatch):
    monkeypatch.setattr("tui_app.agents.acp.setup.shutil.which", on_path())
    with pytest.raises(UnknownAgent) as raised:
        acp_driver("gemini", {"agents": {"mine": {"command": "x"}}})
    said = str(raised.value)
    assert "unknown agent 'gemini' (known: vigil, claude-code, mine)" in said
    assert "Gemini CLI needs `gemini` on PATH" in said


def _start(**kw) -> ToolCallStart:
    return ToolCallStart(session_update="tool_call", tool_call_id="c1", title=kw.pop("title", "t"), **kw)


def _update(**kw) -> ToolCallProgress:
    return ToolCallProgress(session_update="tool_call_update", tool_call_id="c1", **kw)


def test_a_call_keeps_what_earlier_updates_said():
    call = AcpCall("c1")
    call.merge(_start(title="Edit", status="pending"))
    call.merge(_update(content=[FileEditToolCallContent(type="diff", path="/p/a.py", old_text="x", new_text="y")],
                       locations=[ToolCallLocation(path="/p/a.py")], raw_input={"file_path": "/p/a.py"},
                       field_meta={"claudeCode": {"toolName": "Edit"}}))
    call.merge(_update(status="completed", content=[], title="Edit a.py"))
    assert (call.title, call.status, call.tool_name, call.kind) == ("Edit a.py", "completed", "Edit", None)
    assert list(call.diffs) == ["/p/a.py"] and call.changes_files and call.paths == ["/p/a.py"]


def test_a_call_without_a_kind_or_a_name_is_named_by_what_it_does():
    call = AcpCall("c1")
    call.merge(_start(title="`ls -la`", kind="execute"))
    assert (call.tool_name, call.command, call.target) == ("Bash", "ls -la", "ls -la")
    listed = AcpCall("c2")
    listed.merge(_start(title="run", kind="execute", raw_input={"command": ["bash", "-lc", "echo 'a b'"]}))
    assert listed.command == "echo 'a b'"  # a shell's -c is unwrapped: what runs is what Vigil judges
    assert AcpCall("c3").tool_name == "Tool"
    assert AcpCall("c3").tool_name == "Tool"


def test_only_the_exact_shell_c_form_is_unwrapped():
    assert unwrap_shell(["/bin/bash", "-lc", "rm -rf x"]) == "rm -rf x"
    assert unwrap_shell(["sh", "-c", "ls"]) == "ls"
    # another argument, another option or another program: the whole line (which rules do not match)
    assert unwrap_shell(["bash", "-lc", "echo $0", "rm"]) == "bash -lc 'echo $0' rm"
    assert unwrap_shell(["bash", "--rcfile", "evil", "-c"]) == "bash --rcfile evil -c"
    assert unwrap_shell(["bash", "-x", "ls"]) == "bash -x ls"
    assert unwrap_shell(["python3", "-c", "print(1)"]) == "python3 -c 'print(1)'"
    assert unwrap_command("bash -lc 'git status'") == "git status"
    assert unwrap_command("bash -lc 'git status' && rm -rf x") == "bash -lc 'git status' && rm -rf x"
    assert unwrap_shell(["bash", "-ic", "ls"]) == "ls"
    assert unwrap_shell(["zsh", "-c", "ls"]) == "ls" and unwrap_shell(["ksh", "-c", "ls"]) == "ls"
    assert unwrap_shell(["dash", "-c", "ls"]) == "ls"
    assert unwrap_shell(["bash", "-xc", "ls"]) == "bash -xc ls"  # -x is not -c's company
    assert unwrap_shell(["bash", "lc", "ls"]) == "bash lc ls"  # a script named lc, not an option
    assert unwrap_shell(["bash", "-l", "script"]) == "bash -l script"  # runs the file `script`
    assert unwrap_shell(["bash", "-c", "  "]) == "bash -c '  '"
    assert unwrap_shell(["fish", "-c", "ls"]) == "fish -c ls"
    assert unwrap_command("bash -lc 'unbalanced") == "bash -lc 'unbalanced"
    assert unwrap_command("python3 -c 'print(1)'") == "python3 -c 'print(1)'"


def test_vigils_preview_applies_the_agents_fragment_to_the_file_on_disk(tmp_path):
    path = tmp_path / "a.py"
    path.write_text("one\ntwo\nthree\n")
    call = AcpCall("c1", kind="edit")
    call.merge(_update(content=[FileEditToolCallContent(type="diff", path=str(path), old_text="two",
                                                        new_text="TWO")]))
    (change,) = changes_of(call)
    assert (change.proposed, change.note) == ("one\nTWO\nthree\n", "")
    assert (change.display.old_text, change.display.new_text) == ("one\ntwo\nthree\n", "one\nTWO\nthree\n")


@pytest.mark.parametrize(("disk", "old", "note"), [
    ("x\nx\n", "x", "is in the file 2 times"),
    ("something else\n", "two", "is not in the file on disk"),
    (None, "two", "does not exist"),
])
def test_a_diff_vigil_cannot_apply_is_shown_as_the_agents_and_says_so(tmp_path, disk, old, note):
    path = tmp_path / "a.py"
    if disk is not None:
        path.write_text(disk)
    call = AcpCall("c1", kind="edit")
    call.merge(_update(content=[FileEditToolCallContent(type="diff", path=str(path), old_text=old, new_text="N")]))
    (change,) = changes_of(call)
    assert change.proposed is None and note in change.note
    assert (change.display.old_text, change.display.new_text) == (old, "N")
    preview = preview_of(call, [change], "The agent")
    assert preview is not None and preview.body.startswith("Note: ") and note in preview.body


def test_a_new_file_and_a_whole_file_replacement(tmp_path):
    new, whole = tmp_path / "new.py", tmp_path / "whole.py"
    whole.write_text("old\n")
    call = AcpCall("c1", kind="edit")
    call.merge(_update(content=[FileEditToolCallContent(type="diff", path=str(new), old_text=None, new_text="n\n"),
                                FileEditToolCallContent(type="diff", path=str(whole), old_text="old\n",
                                                        new_text="new\n")]))
    created, replaced = changes_of(call)
    assert (created.operation, created.proposed) == ("create", "n\n")
    assert (replaced.operation, replaced.proposed) == ("update", "new\n")
    preview = preview_of(call, [created, replaced], "The agent")
    assert preview.display.kind == "file_diffs" and preview.summary == "Edit 2 files (+2 -1)"


def test_what_vigils_policy_is_asked_about_each_kind_of_call(tmp_path: Path):
    edit = AcpCall("e", kind="edit", locations=[str(tmp_path / "a"), str(tmp_path / "b")], title="Edit two")
    question = build_question(edit, "The agent", str(tmp_path))
    assert question.name == "Edit" and [p[0] for p in question.parts] == ["Edit", "Edit"]
    assert [p[1]["file_path"] for p in question.parts] == [str(tmp_path / "a"), str(tmp_path / "b")]
    assert "did not say what the files will contain" in question.preview.body
    run = AcpCall("r", kind="execute", raw_input={"command": "rm -rf build"})
    question = build_question(run, "The agent", str(tmp_path))
    assert (question.name, question.parts, question.command) == ("Bash", [("Bash", {"command": "rm -rf build"})],
                                                                 "rm -rf build")
    read = AcpCall("d", kind="read", locations=["/etc/passwd"])
    assert build_question(read, "The agent", str(tmp_path)).parts == [("Read", {"file_path": "/etc/passwd"})]
    fetch = AcpCall("f", kind="fetch", raw_input={"url": "https://example.com"})
    assert build_question(fetch, "The agent", str(tmp_path)).parts[0][0] == "WebFetch"
    other = AcpCall("o", kind="other", raw_input={"x": 1}, meta={"claudeCode": {"toolName": "mcp__db__drop"}})
    assert build_question(other, "The agent", str(tmp_path)).parts == [("mcp__db__drop", {"x": 1})]


def test_the_answer_picks_the_agents_option_of_that_kind():
    options = [PermissionOption(option_id="always", name="Always", kind="allow_always"),
               PermissionOption(option_id="once", name="Yes", kind="allow_once"),
               PermissionOption(option_id="no", name="No", kind="reject_once")]
    assert pick_option(options, allow=True) == "once"  # "always" is Vigil's rule: Vigil keeps being asked
    assert pick_option(options, allow=False) == "no"
    assert pick_option(options[:1], allow=True) == "always"
    assert pick_option(options[:2], allow=False) is None  # no way to say no: the answer is `cancelled`


def test_a_fenced_command_output_is_shown_as_the_output():
    assert unfenced("```console\n5\n```") == "5\n"
    assert unfenced("plain\n") == "plain\n"


def test_several_files_make_one_diff_whose_hunks_are_numbered_across_them():
    from tui_app.runtime.files.diffing import file_diff_display

    model = build_diffs([file_diff_display("/p/a.py", "a\n", "b\n"),
                         file_diff_display("/p/c.py", "1\n2\n", "1\n3\n")], cwd="/p")
    assert [line.text for line in model.lines if line.kind == "file"] == ["a.py (update)  +1 −1",
                                                                         "c.py (update)  +1 −1"]
    assert len(model.hunk_starts) == 2 and (model.added, model.removed) == (2, 2)
    assert model.section_of_hunk(1)[1].path == "/p/c.py" and model.section_of_hunk(0)[1].path == "/p/a.py"
    # each line points at its own text in the shared sources
    removed = [line for line in model.lines if line.kind == "removed"]
    assert [model.old_source[line.src] for line in removed] == ["a", "2"]
