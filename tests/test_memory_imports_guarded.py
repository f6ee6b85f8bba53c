"""Memory files are sent to the provider, so they obey what a Read would (issue 27, class 5): a
project's CLAUDE.md that imports a denied file, `~/.ssh/...` or a file outside the working
directories (directly, through a symlink, or by being a symlink itself) gets none of it into the
system prompt, and MemoryLoaded says what was skipped and why. Real sessions, real files; the
canary is looked for in what the provider was sent."""

from __future__ import annotations

import os

from tests.builtin_kit import Workspace, of, run
from tests.builtin_kit import workspace as private_workspace

workspace = private_workspace

CANARY = "CANARY-memory-91c2"


async def sent_and_loaded(workspace: Workspace, **kw):
    session = workspace.session([{"text": "ok"}], **kw)
    _, events = await run(session)
    [loaded] = of(events, "MemoryLoaded")
    return session.agent.client.requests[0].system, loaded, events


def secret(workspace: Workspace, relative: str, *, under=None):
    return workspace.write(relative, f"{CANARY}\n", under=under)


async def test_an_import_of_a_home_secret_is_skipped_and_said(workspace: Workspace):
    secret(workspace, ".ssh/id_rsa", under=workspace.home)
    workspace.write("CLAUDE.md", "Project rules. Keys: @~/.ssh/id_rsa\n")
    system, loaded, events = await sent_and_loaded(workspace)
    assert CANARY not in system and "Project rules." in system
    assert loaded.skipped == [{"path": str(workspace.home / ".ssh" / "id_rsa"),
                               "reason": loaded.skipped[0]["reason"],
                               "imported_from": str(workspace.project / "CLAUDE.md")}]
    assert "outside the working directories" in loaded.skipped[0]["reason"]
    assert any("left out of the prompt" in w.message for w in of(events, "Warning"))


async def test_an_import_that_climbs_out_of_the_project_is_skipped(workspace: Workspace):
    secret(workspace, "elsewhere/notes.md", under=workspace.root)
    workspace.write("CLAUDE.md", "See @../elsewhere/notes.md\n")
    system, loaded, _ = await sent_and_loaded(workspace)
    assert CANARY not in system and len(loaded.skipped) == 1


async def test_a_symlinked_import_is_judged_by_where_it_leads(workspace: Workspace):
    target = secret(workspace, "elsewhere/notes.md", under=workspace.root)
    (workspace.project / "docs").mkdir()
    os.symlink(target, workspace.project / "docs" / "style.md")
    workspace.write("CLAUDE.md", "Style: @docs/style.md\n")
    system, loaded, _ = await sent_and_loaded(workspace)
    assert CANARY not in system
    assert loaded.skipped[0]["path"] == str(workspace.project / "docs" / "style.md")
    assert str(target) in loaded.skipped[0]["reason"]


async def test_a_memory_file_that_is_itself_a_symlink_out_is_skipped(workspace: Workspace):
    target = secret(workspace, ".aws/credentials", under=workspace.home)
    os.symlink(target, workspace.project / "AGENTS.md")
    system, loaded, _ = await sent_and_loaded(workspace)
    assert CANARY not in system and loaded.skipped[0]["path"] == str(workspace.project / "AGENTS.md")


async def test_an_import_a_read_deny_rule_covers_is_skipped(workspace: Workspace):
    secret(workspace, ".env")
    workspace.write("CLAUDE.md", "Config: @.env and @docs/ok.md\n")
    workspace.write("docs/ok.md", "Fine to read.\n")
    system, loaded, _ = await sent_and_loaded(workspace, settings={"permissions": {"deny": ["Read(.env)"]}})
    assert CANARY not in system and "Fine to read." in system
    assert [s["path"] for s in loaded.skipped] == [str(workspace.project / ".env")]
    assert "Read deny rule" in loaded.skipped[0]["reason"]


async def test_an_additional_working_directory_may_be_imported_from(workspace: Workspace):
    shared = workspace.write("shared/conventions.md", "Shared convention.\n", under=workspace.root)
    workspace.write("CLAUDE.md", f"@{shared}\n")
    system, loaded, _ = await sent_and_loaded(workspace, add_dirs=[str(shared.parent)])
    assert "Shared convention." in system and loaded.skipped == []


async def test_the_users_own_memory_may_import_from_home(workspace: Workspace):
    workspace.write("notes/mine.md", "Prefer uv.\n", under=workspace.home)
    workspace.write(".claude/CLAUDE.md", "@~/notes/mine.md\n", under=workspace.home)
    system, loaded, _ = await sent_and_loaded(workspace)
    assert "Prefer uv." in system and loaded.skipped == []


async def test_a_denied_name_is_skipped_even_when_it_links_to_an_allowed_file(workspace: Workspace):
    workspace.write("docs/env.md", f"{CANARY}\n")
    os.symlink(workspace.project / "docs" / "env.md", workspace.project / ".env")
    workspace.write("CLAUDE.md", "Config: @.env\n")
    system, loaded, _ = await sent_and_loaded(workspace, settings={"permissions": {"deny": ["Read(.env)"]}})
    assert CANARY not in system and [s["path"] for s in loaded.skipped] == [str(workspace.project / ".env")]


def test_without_a_policy_only_the_working_directories_hold(workspace: Workspace):
    from tui_app.agents.memory import MemoryService

    secret(workspace, ".ssh/id_rsa", under=workspace.home)
    workspace.write("CLAUDE.md", "Rules. @docs/a.md @~/.ssh/id_rsa\n")
    workspace.write("docs/a.md", "Inside.\n")
    memory = MemoryService(str(workspace.project), "base", str(workspace.home), policy=None).reload()
    assert "Inside." in memory.prompt_section() and CANARY not in memory.prompt_section()
    assert [s["path"] for s in memory.skipped] == [str(workspace.home / ".ssh" / "id_rsa")]
