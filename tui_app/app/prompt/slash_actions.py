"""What the prompt box does with `/` and `#`: completion of slash commands while a name is typed,
and what the screen does with the intents of Enter (tui_app/app/prompt/intents.py): the views of
the commands that show something (/help, /cost, /permissions …), the `#` note's choice of memory
file, and the text sent as it was typed (SubmitPrompt), where the session runs the command, expands
the custom one, or starts the turn; an unknown `/name` is refused and stays in the box, so a typo
is not sent as a prompt. The actions take the screen as a `PromptHost`.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from textual.content import Content

from tui_app.agents.memory import note_text
from tui_app.app.prompt.intents import PromptHost
from tui_app.app.screens.info import ChoiceScreen, InfoScreen, memory_lines
from tui_app.runtime.commands import AddMemoryNote, Refused, SessionFacts, SubmitPrompt
from widgets.prompt_input import PromptInput
from widgets.slash_menu import SlashMenu
from widgets.text.formatting import tilde
from widgets.text.untrusted import one_line, plain

MODES = ("default", "acceptEdits", "plan", "dontAsk", "bypassPermissions")
BUSY = "A turn is still running: wait for it, or press Esc to interrupt it. Your text is kept."


# ---- completion -----------------------------------------------------------------------------------

class SlashCompleter:
    """Keeps the menu in step with the prompt box, and takes the keys that drive it."""

    def __init__(self, menu: SlashMenu, prompt: PromptInput, commands: Callable[[], Any]) -> None:
        self.menu = menu
        self.prompt = prompt
        self.commands = commands

    def typed_name(self) -> str | None:
        text = self.prompt.text
        if not text.startswith("/") or any(ch.isspace() for ch in text):
            return None
        return text[1:]

    def update(self) -> None:
        typed = self.typed_name()
        found = self.commands()
        self.menu.show_commands(found.matching(typed) if typed is not None and found is not None else [])

    def handle_key(self, key: str) -> bool:
        if not self.menu.shown:
            return False
        if key in ("up", "down"):
            self.menu.move(-1 if key == "up" else 1)
            return True
        if key == "escape":
            self.menu.hide()
            return True
        if key == "tab" or (key == "enter" and not self._exact()):
            self.complete()
            return True
        return False

    def _exact(self) -> bool:
        typed, found = self.typed_name(), self.commands()
        return typed is not None and found is not None and found.find(typed) is not None

    def complete(self) -> None:
        chosen = self.menu.chosen
        if chosen is None:
            return
        self.prompt.load_text(f"/{chosen} ")
        self.prompt.move_cursor(self.prompt.document.end)
        self.menu.hide()


# ---- Enter ----------------------------------------------------------------------------------------

async def send_prompt(screen: PromptHost, text: str) -> None:
    """The prompt as typed goes to the session; its reply says what became of it."""
    controls = screen.controls
    assert controls is not None
    reply = await controls.ask(SubmitPrompt(text=text, unknown_command="refuse"))
    if isinstance(reply, Refused):
        message = {"busy": BUSY}.get(reply.code, reply.message)
        if reply.code == "unknown_command":
            message = f"{reply.message} Your text is kept."
        screen.notify(message, severity="warning", markup=False)
        return
    _take(screen, text)
    if reply.command is not None or reply.message:
        shown = reply.output if reply.output is not None else reply.message
        if shown:
            screen.notify(shown, markup=False, timeout=6)


def _take(screen: PromptHost, text: str) -> None:
    """The box is emptied (and the command remembered) when that is where it came from, not when
    the palette ran it."""
    if screen.prompt.text == text:
        screen.prompt.accept(text)


def _done(screen: PromptHost, text: str, message: str | None = None) -> None:
    _take(screen, text)
    if message:
        screen.notify(message, markup=False, timeout=6)


async def show_command(screen: PromptHost, name: str, arguments: str, text: str) -> None:
    controls = screen.controls
    assert controls is not None
    facts = await controls.refresh()
    VIEWS_BY_NAME.get(name, _info)(screen, facts, name, arguments, text)


def _info(screen: PromptHost, facts: SessionFacts, name: str, arguments: str, text: str) -> None:
    """/model and /mode with no argument: what they are now (with an argument, the session changes them)."""
    if name == "model":
        window = f", a context window of {facts.context.window:,} tokens" if facts.context and facts.context.window \
            else ""
        _done(screen, text, f"Model: {facts.model or 'its default model'} ({facts.provider}){window}. "
                            "/model NAME switches.")
        return
    _done(screen, text, f"Permission mode: {facts.permission_mode}. /mode {' | '.join(MODES)} sets it "
                        "(shift+tab steps through them).")


def _lines(title: str, rows: list[Content]) -> list[Content]:
    return [Content.styled(title, "bold"), *rows]


def _help(screen: PromptHost, facts: SessionFacts, name: str, arguments: str, text: str) -> None:
    rows = [Content.assemble(plain(one_line(f"/{c.name} {c.hint}".strip()).ljust(34), "bold"), "  ",
                             plain(one_line(c.description, 160))) for c in facts.slash_commands]
    extra = [Content(""), Content("A line that starts with # adds a note to a memory file (you pick which)."),
             Content("Custom commands: .claude/commands/*.md in the project, ~/.claude/commands/*.md for you.")]
    _done(screen, text)
    screen.app.push_screen(InfoScreen("Slash commands", _lines("Commands (Tab completes a name):", rows) + extra))


def _memory(screen: PromptHost, facts: SessionFacts, name: str, arguments: str, text: str) -> None:
    _done(screen, text)
    screen.app.push_screen(InfoScreen("Memory files", memory_lines(screen.view.reports.memory)))


def _agents(screen: PromptHost, facts: SessionFacts, name: str, arguments: str, text: str) -> None:
    rows: list[Content] = []
    for agent in facts.agent_types:
        tools = ", ".join(agent.tools) if agent.tools else "every tool"
        rows += [Content.assemble(plain(one_line(agent.name, 40), "bold"), ("  " + one_line(agent.source, 120),
                                                                             "$foreground 60%")),
                 Content.assemble("    ", plain(one_line(agent.description, 200))),
                 Content.styled(f"    tools: {one_line(tools, 200)}" + (f" · model {agent.model}" if agent.model
                                                                        else ""), "$foreground 60%")]
    extra = [Content(""), Content("Custom types: .claude/agents/*.md in the project, ~/.claude/agents/*.md for you "
                                  "(frontmatter name, description, tools, model; the body is the prompt).")]
    _done(screen, text)
    screen.app.push_screen(InfoScreen("Subagent types", _lines("The Agent tool can start:", rows) + extra))


def _permissions(screen: PromptHost, facts: SessionFacts, name: str, arguments: str, text: str) -> None:
    by_source: dict[str, list[Any]] = {}
    for rule in facts.rules:
        by_source.setdefault(rule.source, []).append(rule)
    rows: list[Content] = [Content(f"Mode: {facts.permission_mode}")]
    for directory in facts.working_directories:  # the working directories, as given
        rows.append(Content.assemble("Working directory: ", plain(one_line(tilde(directory), 200))))
    for source, found in by_source.items():
        rows += [Content(""), plain(one_line(tilde(source), 200), "bold")]
        for rule in found:
            style = {"deny": "$text-error", "ask": "$text-warning"}.get(rule.behavior, "$text-success")
            rows.append(Content.assemble((f"  {rule.behavior:<6}", style), plain(one_line(rule.text, 200))))
    if not facts.rules:
        rows += [Content(""), Content("No rules: the mode decides (permissions.allow / ask / deny in settings).")]
    _done(screen, text)
    screen.app.push_screen(InfoScreen("Permission rules", _lines("Rules in force, by the file they came from:", rows)))


def _cost(screen: PromptHost, facts: SessionFacts, name: str, arguments: str, text: str) -> None:
    header = screen.view.header
    rows = [Content(f"Input tokens {getattr(header, 'input_tokens', 0):,} · output tokens "
                    f"{getattr(header, 'output_tokens', 0):,} (every model step, subagents included)")]
    context = facts.context
    if context is not None and context.window:
        share = f"{context.used / context.window:.0%}"
        state = "on" if context.compaction_enabled else "off"
        rows.append(Content(f"Context: {context.used:,} of {context.window:,} tokens at the last step ({share}); "
                            f"automatic compaction is {state} at {context.threshold:.0%}"))
    rows.append(Content(f"Compactions so far: {screen.view.reports.compactions}"))
    _done(screen, text)
    screen.app.push_screen(InfoScreen("Cost", _lines("This session:", rows)))


def _resume(screen: PromptHost, facts: SessionFacts, name: str, arguments: str, text: str) -> None:
    app = screen.app
    request = getattr(app, "request_resume", None)
    if request is None:
        return
    _take(screen, text)
    if arguments.strip():
        request(arguments.strip())
        return
    from tui_app.app.screens.sessions import SessionBrowserScreen

    live = screen.session_id or None

    def chosen(session_id: str | None) -> None:
        if session_id and session_id != live:
            request(session_id)

    app.push_screen(SessionBrowserScreen(live_id=live), chosen)


VIEWS_BY_NAME: dict[str, Callable[[Any, SessionFacts, str, str, str], None]] = {
    "agents": _agents, "usage": _cost, "help": _help, "memory": _memory, "permissions": _permissions, "resume": _resume,
}


# ---- `#` notes ------------------------------------------------------------------------------------

def ask_where_to_note(screen: PromptHost, text: str) -> None:
    note = note_text(text)
    controls = screen.controls
    assert controls is not None and controls.known is not None
    targets = controls.known.note_targets
    choices = [(Content.assemble(plain(label, "bold"), "  ", plain(one_line(tilde(path), 160), "$foreground 60%")),
                path) for label, path in targets]
    title = Content.assemble(("Add a note to a memory file: ", "bold"), plain(one_line(note, 200)))

    def chosen(path: Any) -> None:
        if path is None:
            return
        _take(screen, text)
        future = controls.send(AddMemoryNote(note=note, path=str(path)))
        future.add_done_callback(partial(_noted, screen))

    screen.app.push_screen(ChoiceScreen(title, choices), chosen)


def _noted(screen: PromptHost, future: Any) -> None:
    problem = future.exception()
    reply = future.result() if problem is None else None
    failed = problem is not None or (reply is not None and not reply.ok)
    message = (f"The note could not be saved: {problem or reply.message}" if failed else reply.message)
    severity = "error" if failed else "information"
    try:
        screen.app.call_from_thread(screen.notify, message, severity=severity, markup=False)
    except RuntimeError:  # done already, on the UI thread itself
        screen.notify(message, severity=severity, markup=False)
