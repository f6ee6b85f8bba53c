"""What the prompt box does with `/` and `#`: completion of slash commands while a name is typed,
and on Enter the built-in commands' work, a custom command's prompt, or a `#` note for a memory
file (the user picks which file).

A text that is not a command (`/usr/bin/env is missing`, with more slashes) goes to the model as
it is; an unknown `/name` is reported and stays in the box, so a typo is not sent as a prompt.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

from textual.content import Content

from tui_app.agents.compaction import account_of
from tui_app.agents.memory import is_memory_note, note_targets, note_text
from tui_app.agents.slash_commands import expand, parse_invocation
from tui_app.app.screens.info import ChoiceScreen, InfoScreen, memory_lines
from widgets.prompt_input import PromptInput
from widgets.slash_menu import SlashMenu
from widgets.text.formatting import tilde
from widgets.text.untrusted import one_line, plain

if TYPE_CHECKING:
    from tui_app.app.screens.main import MainScreen

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

def handle_prompt(screen: MainScreen, text: str) -> bool:
    """True when `text` was a command or a note (done here); False: send it to the model."""
    controls = screen.controls
    if controls is not None and controls.commands is None:
        return False  # an external agent (Claude Code) has commands and memory of its own: the text is its
    if is_memory_note(text):
        ask_where_to_note(screen, text)
        return True
    invocation = parse_invocation(text)
    if invocation is None or controls is None:
        return False
    name, arguments = invocation
    found = controls.commands
    command = found.find(name) if found is not None else None
    if command is None:
        screen.notify(f"There is no command /{one_line(name, 60)}: /help lists them. To send this text to the "
                      "model as it is, start it with a space.", severity="warning", markup=False)
        return True
    if command.kind == "custom":
        if controls.submit(expand(command, arguments)):
            _take(screen, text)
        else:
            screen.notify(BUSY, severity="warning", markup=False)
        return True
    BUILTINS[command.name](screen, arguments, text)
    return True


def _take(screen: MainScreen, text: str) -> None:
    """The box is emptied (and the command remembered) when that is where it came from, not when
    the palette ran it."""
    if screen.prompt.text == text:
        screen.prompt.accept(text)


def _done(screen: MainScreen, text: str, message: str | None = None) -> None:
    _take(screen, text)
    if message:
        screen.notify(message, markup=False, timeout=6)


def _clear(screen: MainScreen, arguments: str, text: str) -> None:
    if screen.controls.clear() is None:
        screen.notify(BUSY, severity="warning", markup=False)
        return
    _done(screen, text, "The conversation was cleared: the model starts afresh (the chat and the log keep it all).")


def _compact(screen: MainScreen, arguments: str, text: str) -> None:
    if screen.controls.compact(arguments) is None:
        screen.notify(BUSY, severity="warning", markup=False)
        return
    _done(screen, text, "Compacting: the model is writing a summary of the conversation (Esc stops it).")


def _model(screen: MainScreen, arguments: str, text: str) -> None:
    controls = screen.controls
    model = controls.session.model
    if arguments:
        name = controls.set_model(arguments.split()[0])
        _done(screen, text, f"Model: {name} from the next request on" + (
            " (the scripted model plays its script whatever the name)" if model.provider == "scripted" else ""))
        return
    account = controls.service("context")
    window = f", a context window of {account.window(controls.session):,} tokens" if account is not None else ""
    _done(screen, text, f"Model: {model.model} ({model.provider}){window}. /model NAME switches.")


def _mode(screen: MainScreen, arguments: str, text: str) -> None:
    wanted = arguments.strip()
    if not wanted:
        _done(screen, text, f"Permission mode: {screen.controls.mode}. /mode {' | '.join(MODES)} sets it "
                            "(shift+tab steps through them).")
        return
    if wanted not in MODES:
        screen.notify(f"No mode {one_line(wanted, 40)}: choose one of {', '.join(MODES)}.", severity="warning",
                      markup=False)
        return
    _take(screen, text)
    screen.set_mode(wanted)


def _add_dir(screen: MainScreen, arguments: str, text: str) -> None:
    if not arguments.strip():
        screen.notify("/add-dir needs a directory: /add-dir ../lib", severity="warning", markup=False)
        return
    ok, what = screen.controls.add_directory(arguments)
    if not ok:
        screen.notify(f"Not added: {one_line(what, 200)}", severity="warning", markup=False)
        return
    _done(screen, text, f"{tilde(what)} is now a working directory of this session.")


def _lines(title: str, rows: list[Content]) -> list[Content]:
    return [Content.styled(title, "bold"), *rows]


def _help(screen: MainScreen, arguments: str, text: str) -> None:
    found = screen.controls.commands
    rows = [Content.assemble(plain(one_line(c.label).ljust(34), "bold"), "  ", plain(one_line(c.description, 160)))
            for c in (found.commands if found is not None else [])]
    extra = [Content(""), Content("A line that starts with # adds a note to a memory file (you pick which)."),
             Content("Custom commands: .claude/commands/*.md in the project, ~/.claude/commands/*.md for you.")]
    _done(screen, text)
    screen.app.push_screen(InfoScreen("Slash commands", _lines("Commands (Tab completes a name):", rows) + extra))


def _memory(screen: MainScreen, arguments: str, text: str) -> None:
    _done(screen, text)
    screen.app.push_screen(InfoScreen("Memory files", memory_lines(screen.memory_reports)))


def _agents(screen: MainScreen, arguments: str, text: str) -> None:
    types = screen.controls.service("agent_types")
    rows: list[Content] = []
    for agent in (types.types.values() if types is not None else []):
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


def _permissions(screen: MainScreen, arguments: str, text: str) -> None:
    policy = screen.controls.session.policy
    rules = policy.rules() if hasattr(policy, "rules") else []
    by_source: dict[str, list[Any]] = {}
    for rule in rules:
        by_source.setdefault(rule.source, []).append(rule)
    rows: list[Content] = [Content(f"Mode: {policy.mode}")]
    for directory in getattr(getattr(policy, "dirs", None), "dirs", ()):  # the working directories, as given
        rows.append(Content.assemble("Working directory: ", plain(one_line(tilde(directory), 200))))
    for source, found in by_source.items():
        rows += [Content(""), plain(one_line(tilde(source), 200), "bold")]
        for rule in found:
            style = {"deny": "$text-error", "ask": "$text-warning"}.get(rule.behavior, "$text-success")
            rows.append(Content.assemble((f"  {rule.behavior:<6}", style), plain(one_line(rule.text, 200))))
    if not rules:
        rows += [Content(""), Content("No rules: the mode decides (permissions.allow / ask / deny in settings).")]
    _done(screen, text)
    screen.app.push_screen(InfoScreen("Permission rules", _lines("Rules in force, by the file they came from:", rows)))


def _cost(screen: MainScreen, arguments: str, text: str) -> None:
    header = screen.header.state
    controls = screen.controls
    account = account_of(controls.session)
    rows = [Content(f"Input tokens {getattr(header, 'input_tokens', 0):,} · output tokens "
                    f"{getattr(header, 'output_tokens', 0):,} (every model step, subagents included)")]
    if account is not None:
        window = account.window(controls.session)
        used = account.reported or 0
        share = f"{used / window:.0%}" if window else "?"
        state = "on" if account.settings.enabled else "off"
        rows.append(Content(f"Context: {used:,} of {window:,} tokens at the last step ({share}); automatic compaction "
                            f"is {state} at {account.settings.threshold:.0%}"))
    rows.append(Content(f"Compactions so far: {screen.compactions}"))
    _done(screen, text)
    screen.app.push_screen(InfoScreen("Cost", _lines("This session:", rows)))


def _resume(screen: MainScreen, arguments: str, text: str) -> None:
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


BUILTINS: dict[str, Callable[[Any, str, str], None]] = {
    "add-dir": _add_dir, "agents": _agents, "clear": _clear, "compact": _compact, "cost": _cost, "help": _help,
    "memory": _memory, "mode": _mode, "model": _model, "permissions": _permissions, "resume": _resume,
}


# ---- `#` notes ------------------------------------------------------------------------------------

def ask_where_to_note(screen: MainScreen, text: str) -> None:
    note = note_text(text)
    controls = screen.controls
    targets = note_targets(controls.session.cwd)
    choices = [(Content.assemble(plain(label, "bold"), "  ", plain(one_line(tilde(str(path)), 160), "$foreground 60%")),
                path) for label, path in targets]
    title = Content.assemble(("Add a note to a memory file: ", "bold"), plain(one_line(note, 200)))

    def chosen(path: Any) -> None:
        if path is None:
            return
        _take(screen, text)
        future = controls.add_memory_note(path, note)
        future.add_done_callback(partial(_noted, screen, path))

    screen.app.push_screen(ChoiceScreen(title, choices), chosen)


def _noted(screen: MainScreen, path: Any, future: Any) -> None:
    problem = future.exception()
    message = f"Noted in {tilde(str(path))}; the system prompt has it from the next request on." if problem is None \
        else f"The note could not be saved: {problem}"
    severity = "information" if problem is None else "error"
    try:
        screen.app.call_from_thread(screen.notify, message, severity=severity, markup=False)
    except RuntimeError:  # done already, on the UI thread itself
        screen.notify(message, severity=severity, markup=False)
