"""Slash commands: built-ins with one-line descriptions, custom commands in Claude Code's format
(frontmatter, $ARGUMENTS / $1 / $2, sub-folder namespaces), and `-p "/name args"` headless."""

from __future__ import annotations

import io

from tests.builtin_kit import Workspace, of
from tests.builtin_kit import workspace as private_workspace
from tui_app.agents.slash_commands import expand, expand_prompt, load_commands, parse_invocation
from tui_app.headless.runner import run_headless

workspace = private_workspace  # the fixture, visible to this module's tests

REVIEW = """---
description: Review a file for bugs
argument-hint: <file> [focus]
allowed-tools: Read, Grep, Bash(git diff:*)
model: claude-haiku-4-5
---
Review $1 for bugs, focusing on $2.
All arguments: $ARGUMENTS
"""


def commands(workspace: Workspace):
    workspace.write(".claude/commands/review.md", REVIEW)
    workspace.write(".claude/commands/frontend/component.md", "Make a component named $ARGUMENTS")
    workspace.write(".claude/commands/hello.md", "Say hello from the project")
    workspace.write(".claude/commands/hello.md", "Say hello from home", under=workspace.home)
    workspace.write(".claude/commands/notes.md", "# Summarize my notes\nRead NOTES.md", under=workspace.home)
    workspace.write(".claude/commands/compact.md", "not allowed to replace a built-in")
    return load_commands(workspace.project, workspace.home)


def test_builtins_and_custom_commands_with_their_descriptions(workspace: Workspace):
    found = commands(workspace)
    names = [c.name for c in found.commands]
    for builtin in ("clear", "compact", "model", "permissions", "mode", "add-dir", "usage", "memory", "agents",
                    "help", "resume"):
        assert builtin in names and found.find(builtin).description
    review = found.find("review")
    assert (review.kind, review.scope, review.description) == ("custom", "project", "Review a file for bugs (project)")
    assert review.argument_hint == "<file> [focus]" and review.model == "claude-haiku-4-5"
    assert review.allowed_tools == ("Read", "Grep", "Bash(git diff:*)")
    component = found.find("frontend:component")
    assert component is found.find("component") and component.description.endswith("(project:frontend)")
    assert found.find("hello").body == "Say hello from the project"  # the project's wins over the user's
    assert found.find("notes").description == "Summarize my notes (user)"
    assert found.find("compact").kind == "builtin"
    assert any("/compact is a built-in command" in p for p in found.problems)


def test_completion_lists_names_that_start_with_what_was_typed_first(workspace: Workspace):
    found = commands(workspace)
    assert [c.name for c in found.matching("co")][:4] == ["compact", "context", "frontend:component", "usage"]
    assert [c.name for c in found.matching("")] == sorted(c.name for c in found.commands)
    assert [c.name for c in found.matching("mem")] == ["memory"]


def test_arguments_fill_the_placeholders(workspace: Workspace):
    found = commands(workspace)
    text = expand(found.find("review"), 'calc.py "error handling"')
    assert text == 'Review calc.py for bugs, focusing on error handling.\nAll arguments: calc.py "error handling"'
    assert expand(found.find("review"), "calc.py").startswith("Review calc.py for bugs, focusing on .")
    assert expand(found.find("hello"), "to Ada") == "Say hello from the project\n\nARGUMENTS: to Ada"
    assert expand_prompt("/component Button", found)[0] == "Make a component named Button"
    assert expand_prompt("/usr/bin/env is a path", found) == ("/usr/bin/env is a path", None)
    assert expand_prompt("/nosuch thing", found) == ("/nosuch thing", None)
    assert parse_invocation("/add-dir ../lib") == ("add-dir", "../lib")


async def test_headless_runs_a_custom_command_expanded(workspace: Workspace):
    workspace.write(".claude/commands/review.md", REVIEW)
    session = workspace.session([{"text": "Reviewed."}])
    events: list = []
    session.subscribe(events.append)
    code = await run_headless(session, '/review calc.py "naming"', "text", io.StringIO())
    assert code == 0
    [started] = of(events, "TurnStarted")
    assert started.prompt.startswith("Review calc.py for bugs, focusing on naming.")
    assert session.agent.client.requests[0].messages[0].content[0].text == started.prompt
