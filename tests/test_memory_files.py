"""Memory files: which CLAUDE.md / AGENTS.md are read, their @imports (depth-limited, cycles
refused, code left alone), and how they reach the system prompt and the log."""

from __future__ import annotations

import subprocess

from tests.builtin_kit import Workspace, of, run
from tests.builtin_kit import workspace as private_workspace
from tui_app.agents.memory import (
    MAX_IMPORT_DEPTH,
    append_note,
    imports_in,
    is_memory_note,
    load_memory,
    note_targets,
    note_text,
)

workspace = private_workspace  # the fixture, visible to this module's tests


def repo(workspace: Workspace) -> None:
    subprocess.run(["git", "init", "-q", str(workspace.project)], check=True)


def test_user_files_then_the_project_from_the_repository_root_down_to_the_cwd(workspace: Workspace):
    repo(workspace)
    workspace.write(".claude/CLAUDE.md", "user rule", under=workspace.home)
    workspace.write("CLAUDE.md", "outside the repository", under=workspace.root)
    workspace.write("CLAUDE.md", "root rule")
    workspace.write("pkg/AGENTS.md", "package rule")
    workspace.write("pkg/.claude/CLAUDE.md", "package claude rule")
    workspace.write("pkg/CLAUDE.local.md", "my own rule")
    memory = load_memory(workspace.project / "pkg", workspace.home)
    assert [(f.path.removeprefix(str(workspace.root)), f.scope) for f in memory.files] == [
        ("/home/.claude/CLAUDE.md", "user"), ("/project/CLAUDE.md", "project"),
        ("/project/pkg/.claude/CLAUDE.md", "project"), ("/project/pkg/AGENTS.md", "project"),
        ("/project/pkg/CLAUDE.local.md", "local")]
    section = memory.prompt_section()
    assert section.index("user rule") < section.index("root rule") < section.index("my own rule")
    assert "outside the repository" not in section and memory.problems == []


def test_outside_a_repository_only_the_cwd_is_the_project(workspace: Workspace):
    workspace.write("CLAUDE.md", "parent of an unrelated directory", under=workspace.root)
    workspace.write("AGENTS.md", "here")
    memory = load_memory(workspace.project, workspace.home)
    assert [f.text for f in memory.files] == ["here"]


def test_imports_are_followed_relative_to_the_file_and_from_home(workspace: Workspace):
    workspace.write(".claude/CLAUDE.md", "Mine: @~/notes/mine.md\n", under=workspace.home)
    workspace.write("CLAUDE.md", "See @docs/style.md and @~/notes/mine.md.\nMail me@example.com, ask @alice.\n")
    workspace.write("docs/style.md", "Use four spaces.\n")
    workspace.write("notes/mine.md", "Prefer uv.\n", under=workspace.home)
    memory = load_memory(workspace.project, workspace.home)
    user_file = str(workspace.home / ".claude" / "CLAUDE.md")
    assert [(f.path.removeprefix(str(workspace.root)), f.imported_from) for f in memory.files] == [
        ("/home/.claude/CLAUDE.md", None),
        ("/home/notes/mine.md", user_file),
        ("/project/CLAUDE.md", None),
        ("/project/docs/style.md", str(workspace.project / "CLAUDE.md"))]
    assert "Use four spaces." in memory.prompt_section() and "Prefer uv." in memory.prompt_section()


def test_at_signs_in_code_are_not_imports():
    text = "Run `npm i @types/node` first.\n```\n@decorator.py\n```\n~~~python\n@also.md\n~~~\nthen @real.md\n"
    assert imports_in(text) == ["real.md"]


def test_a_cycle_is_refused_and_each_file_is_read_once(workspace: Workspace):
    workspace.write("CLAUDE.md", "top @a.md")
    workspace.write("a.md", "a imports @b.md")
    workspace.write("b.md", "b imports @a.md and @CLAUDE.md")
    memory = load_memory(workspace.project, workspace.home)
    assert [f.path.rsplit("/", 1)[-1] for f in memory.files] == ["CLAUDE.md", "a.md", "b.md"]
    assert len(memory.problems) == 2 and all("cycle" in p for p in memory.problems)


def test_imports_go_at_most_five_levels_deep(workspace: Workspace):
    workspace.write("CLAUDE.md", "start @l1.md")
    for level in range(1, 9):
        workspace.write(f"l{level}.md", f"level {level} @l{level + 1}.md")
    memory = load_memory(workspace.project, workspace.home)
    assert len(memory.files) == 1 + MAX_IMPORT_DEPTH
    assert any("at most 5 levels" in p for p in memory.problems)


def test_a_missing_import_that_looks_like_a_file_is_reported(workspace: Workspace):
    workspace.write("CLAUDE.md", "see @docs/gone.md")
    memory = load_memory(workspace.project, workspace.home)
    assert len(memory.problems) == 1 and "@docs/gone.md does not exist" in memory.problems[0]


async def test_the_session_prompt_carries_the_memory_and_the_log_lists_the_files(workspace: Workspace):
    workspace.write(".claude/CLAUDE.md", "Always answer in English.", under=workspace.home)
    workspace.write("AGENTS.md", "Run tests with `make test`.")
    session = workspace.session([{"text": "ok"}])
    _, events = await run(session)
    system = session.agent.client.requests[0].system
    assert "Always answer in English." in system and "Run tests with `make test`." in system
    assert system.index("# Environment") < system.index("# Memory files")
    [loaded] = of(events, "MemoryLoaded")
    assert [f["scope"] for f in loaded.files] == ["user", "project"]
    assert loaded.files[1]["path"] == str(workspace.project / "AGENTS.md")


def test_a_hash_line_is_a_note_and_it_is_appended_on_its_own_line(workspace: Workspace):
    assert is_memory_note("# always use uv") and note_text("#  always use uv ") == "always use uv"
    assert not is_memory_note("#") and not is_memory_note("# title\nand a body") and not is_memory_note("fix #12")
    targets = note_targets(workspace.project, workspace.home)
    assert [t[1] for t in targets] == [workspace.project / "CLAUDE.md", workspace.project / "CLAUDE.local.md",
                                       workspace.home / ".claude" / "CLAUDE.md"]
    workspace.write("CLAUDE.md", "# Rules\n- be brief")  # no newline at the end
    append_note(targets[0][1], "always use uv")
    assert (workspace.project / "CLAUDE.md").read_text() == "# Rules\n- be brief\n- always use uv\n"
    created = append_note(targets[2][1], "I like tabs")
    assert created.read_text() == "- I like tabs\n"


def test_a_project_with_only_agents_md_gets_its_notes_there(workspace: Workspace):
    workspace.write("AGENTS.md", "rules")
    assert note_targets(workspace.project, workspace.home)[0][1] == workspace.project / "AGENTS.md"
