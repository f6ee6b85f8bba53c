"""The command palette (ctrl+p): every action of the main screen (live or a replay), by name.

Textual's own commands stay in the palette too: "Theme" (a picker of every theme), "Keys",
"Screenshot", "Quit"."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.content import Content

from tui_app.app.screens.info import memory_lines
from tui_app.app.screens.main import MODES, TABLE_FILTERS, MainScreen
from tui_app.app.session_actions import (
    export_transcript,
    open_add_directory,
    open_mcp_servers,
    open_session_browser,
    open_settings_files,
)

#: slash commands the palette reaches too: (name, label, help)
SLASH_PALETTE = (
    ("compact", "Compact the conversation", "the model summarizes it, freeing the context window"),
    ("clear", "Clear the conversation", "the model starts afresh; the chat and the log keep everything"),
    ("agents", "Subagent types", "what the Agent tool can start"),
    ("permissions", "Permission rules", "the rules in force, by settings file"),
    ("cost", "Tokens and context", "tokens used, and how full the context window is"),
    ("help", "Slash commands", "every command with its description"),
)


def run_slash(main: MainScreen, text: str) -> None:
    main.submit_text(text)


def open_memory_files(main: MainScreen) -> None:
    from tui_app.app.screens.info import InfoScreen

    main.app.push_screen(InfoScreen("Memory files", memory_lines(main.view.reports.memory)))

MODE_HELP = {
    "default": "ask before edits, commands and other side effects",
    "acceptEdits": "file edits run without asking; commands still ask",
    "plan": "read-only exploration: anything that changes something is denied",
    "dontAsk": "whatever would ask is denied instead",
    "bypassPermissions": "everything runs without asking (deny rules still hold)",
}


def agent_commands(main: MainScreen) -> list[tuple[str, Callable[[], Any], str]]:
    """The agent's own modes (ACP), and a new session with each agent Vigil can run."""
    found: list[tuple[str, Callable[[], Any], str]] = []
    offered = main.view.reports.agent_modes
    if offered is not None:
        for mode in offered.modes:
            found.append((f"{offered.agent} mode: {mode.name}", partial(main.set_agent_mode, mode.id),
                          mode.description or "the agent's own mode (shift+tab walks them)"))
    controls = main.controls
    names = controls.known.agent_names if controls is not None and controls.known is not None else None
    request = getattr(main.app, "request_agent", None)
    if names and request is not None:
        current = main.view.header.agent or "vigil"
        for name in names:
            if name != current:
                found.append((f"Agent: {name}", partial(request, name),
                              f"close this session and start a new one supervising {name}"))
    return found


def main_screen(provider: Provider) -> MainScreen | None:
    """The main screen (live or a replay) when the palette was opened on it. Over a dialog or
    another screen these commands would act on what is hidden behind it, so only Textual's own
    (Theme, Keys, Quit …) are offered there."""
    return provider.screen if isinstance(provider.screen, MainScreen) else None


def commands(main: MainScreen) -> list[tuple[str, Callable[[], Any], str]]:
    live = main.controls is not None
    found: list[tuple[str, Callable[[], Any], str]] = []
    if live:
        found.append(("Interrupt the turn", main.action_interrupt,
                      "Esc: running calls are cancelled, the others are not started"))
        for mode in MODES:
            found.append((f"Permission mode: {mode}", partial(main.set_mode, mode), MODE_HELP[mode]))
        found.append(("Focus the prompt", partial(main.action_focus, "prompt"), "ctrl+e"))
        found.append(("Add directory", partial(open_add_directory, main),
                      "a working directory more: reads and writes there do not ask about where they are"))
        found += [(f"/{name}: {label}", partial(run_slash, main, f"/{name}"), help_text)
                  for name, label, help_text in SLASH_PALETTE]
        found += agent_commands(main)
    replay = getattr(main, "timeline_commands", None)
    if replay is not None:
        found += replay()
    app = main.app
    found += [
        ("Sessions", partial(open_session_browser, app, main), "past sessions: pick one to replay it read-only"),
        ("Artifacts", main.action_open_artifacts, "browse every persisted output of this session"),
        ("Settings files", partial(open_settings_files, main), "which settings files were loaded, and their errors"),
        ("Memory files", partial(open_memory_files, main), "the CLAUDE.md / AGENTS.md files in the system prompt"),
        ("Export transcript", lambda: app.run_worker(export_transcript(main), group="export"),
         "write the session as Markdown to transcript.md in its directory"),
        ("MCP servers", partial(open_mcp_servers, main), "status, tools and stderr log of each server; reconnect"),
        ("Settings", main.action_open_settings,
         "F2: rules, hooks, MCP servers, sandbox, model and mode with their files; add or remove a rule"),
        ("Files panel: show / hide", partial(main.action_toggle_panel, "files"),
         "ctrl+b: the project's files, changed ones marked; Enter opens a file or its diff"),
        ("Plan panel: show / hide", partial(main.action_toggle_panel, "plan"), "ctrl+l: the agent's todo list"),
        ("Open the selected call's artifact", main.action_open_artifact, "ctrl+o"),
        ("Toggle diff: unified / side by side", main.action_toggle_split, "s in the Diff tab"),
        ("Follow the newest call", main.action_follow, "ctrl+g: the detail pane follows running calls again"),
        ("Focus the tool table", partial(main.action_focus, "table"), "ctrl+t"),
        ("Focus the chat", partial(main.action_focus, "chat"), ""),
        ("Focus the detail pane", partial(main.action_focus, "detail"), ""),
        ("Filter table by the selected call's tool", main.filter_table_by_tool, "t in the table"),
    ]
    for name in TABLE_FILTERS:
        label = "Filter table: show all calls" if name == "all" else f"Filter table: {name}"
        found.append((label, partial(main.filter_table, name), "f in the table steps through these"))
    for key, tab in enumerate(("Diff", "Output", "Input", "Result", "Events"), 1):
        found.append((f"Detail tab: {tab}", partial(main.action_tab, tab.lower()), f"{key} in the detail pane"))
    found += [
        ("Theme: dark", partial(setattr, main.app, "theme", "textual-dark"), ""),
        ("Theme: light", partial(setattr, main.app, "theme", "textual-light"), ""),
    ]
    if getattr(app, "detaches", False):  # the session lives in the host: quitting leaves it running
        found += [("Detach (quit Vigil)", app.action_quit, "ctrl+q: the session goes on in the host"),
                  ("End the session", app.end_session, "its agent and processes stop, in the host too")]
    else:
        found.append(("Quit Vigil", main.app.action_quit, "ctrl+q: every child process is stopped first"))
    return found


class VigilCommands(Provider):
    """Entries may carry an agent's words (its mode names): shown as plain text, never as markup
    (Textual's palette parses a str prompt or help as markup)."""

    async def discover(self) -> Hits:
        main = main_screen(self)
        if main is None:
            return
        for name, callback, help_text in commands(main):
            yield DiscoveryHit(Content(name), callback, text=name, help=Content(help_text) if help_text else None)

    async def search(self, query: str) -> Hits:
        main = main_screen(self)
        if main is None:
            return
        matcher = self.matcher(query)
        for name, callback, help_text in commands(main):
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, plain_highlight(matcher, name), callback, text=name,
                          help=Content(help_text) if help_text else None)


def plain_highlight(matcher: Any, name: str) -> Content:
    """The matcher's highlight of `name`, on the plain text (its own parses markup)."""
    content = Content(name)
    score, offsets = matcher.fuzzy_search.match(matcher.query, name)
    if score:
        for offset in offsets:
            if not name[offset].isspace():
                content = content.stylize(matcher.match_style, offset, offset + 1)
    return content
