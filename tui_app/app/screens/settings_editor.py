"""The settings screen (palette "Settings", F2): the permission rules, hooks, MCP servers, sandbox,
model and mode in force, each with the file it comes from; a rule can be added (to the file you
pick) or removed (from its file), the mode and the model switched for the session and, if you
want, saved as the default in the file you pick. Files are changed in Claude Code's format by
editing their text: nothing else in them changes (runtime/permissions/json_patch.py).

Everything shown comes from files or the model's rules: plain text, never markup.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen, Screen
from textual.widgets import DataTable, Footer, Input, Static

from tui_app.app.screens.info import ChoiceScreen
from tui_app.app.settings_model import Entry, SettingsFile, SettingsView, build_view, settings_files
from tui_app.runtime.commands import EditRule, SessionFacts, SetModel
from tui_app.runtime.permissions.rules import RuleError, make_rule
from tui_app.runtime.permissions.settings_writer import SettingsWriteError, set_setting
from widgets.text.formatting import tilde
from widgets.text.line_render import load_css
from widgets.text.untrusted import one_line, plain

SECTIONS = (("model", "Model"), ("mode", "Permission mode"), ("rules", "Permission rules"), ("hooks", "Hooks"),
            ("mcp", "MCP servers"), ("sandbox", "Sandbox"), ("notifications", "Notifications"),
            ("problems", "Problems"))
MODES = ("default", "acceptEdits", "plan", "dontAsk", "bypassPermissions")
BEHAVIORS = ("allow", "ask", "deny")
SETTING_WIDTH = 70


class TextPromptScreen(ModalScreen[str | None]):
    """One line of text (Enter) or nothing (Esc)."""

    DEFAULT_CSS = load_css("settings_editor")
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, title: str, placeholder: str = "", value: str = "") -> None:
        super().__init__()
        self.title_text, self.placeholder, self.value = title, placeholder, value

    def compose(self) -> ComposeResult:
        with Vertical(id="text-prompt-box"):
            yield Static(plain(self.title_text, "bold"))
            yield Input(value=self.value, placeholder=self.placeholder, id="text-prompt-input")
            yield Static(Content.styled("enter saves · esc cancels", "$foreground 60%"))

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(event.value.strip() or None)

    def action_cancel(self) -> None:
        self.dismiss(None)


class SettingsScreen(Screen[None]):
    DEFAULT_CSS = load_css("settings_editor")
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "close", "Close"),
        Binding("a", "add_rule", "Add rule"),
        Binding("x,delete", "remove_rule", "Remove rule"),
        Binding("m", "switch_mode", "Mode"),
        Binding("o", "switch_model", "Model"),
        Binding("n", "toggle_notifications", "Desktop notifications"),
        Binding("r", "refresh", "Reload", show=False),
    ]

    def __init__(self, main: Any, facts: SessionFacts) -> None:
        super().__init__()
        self.main = main
        #: the session's facts as last asked (each change asks again)
        self.facts = facts
        self.view = SettingsView()
        self.row_entries: dict[str, Entry] = {}

    @property
    def controls(self) -> Any:
        return self.main.controls

    def compose(self) -> ComposeResult:
        with Vertical(id="settings-box"):
            yield Static(id="settings-title")
            yield DataTable(id="settings-table", cursor_type="row", zebra_stripes=False)
            yield Static(id="settings-files")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_column("setting", width=SETTING_WIDTH)
        table.add_column("from")
        self.refresh_view()
        table.focus()

    # ---- what is shown ----------------------------------------------------------------------

    async def reload(self) -> None:
        """Ask the session again (after a change), then redraw."""
        self.facts = await self.controls.refresh()
        self.refresh_view()

    def refresh_view(self) -> None:
        facts = self.facts
        files = settings_files(facts.project_dir, no_claude_settings=facts.no_claude_settings,
                               settings_file=facts.settings_file)
        notifier = getattr(self.app, "notifier", None)
        enabled = notifier.enabled if notifier is not None else facts.notifications
        self.view = build_view(facts, files, enabled)
        table = self.query_one(DataTable)
        cursor = table.cursor_row
        table.clear()
        self.row_entries = {}
        for section, title in SECTIONS:
            entries = [e for e in self.view.entries if e.section == section]
            if not entries and section in ("problems", "sandbox", "mcp", "hooks"):
                if section == "problems":
                    continue
                entries = [Entry(section, "(none)", "")]
            table.add_row(Text(title, style="bold"), Text(""), key=f"head-{section}")
            for number, entry in enumerate(entries):
                key = f"{section}-{number}"
                self.row_entries[key] = entry
                table.add_row(Text("  " + one_line(entry.text, SETTING_WIDTH - 2)),
                              Text(one_line(tilde(entry.source), 120),
                                   style="dim"), key=key)
        if cursor is not None and table.row_count:
            table.move_cursor(row=min(cursor, table.row_count - 1))
        self.query_one("#settings-title", Static).update(Content.assemble(
            ("Settings", "bold"), "  the settings in force and the file each comes from — ",
            Content.styled("a add rule · x remove rule · m mode · o model · n notifications · esc close",
                           "$foreground 60%")))
        lines = [Content.styled("Settings files, lowest priority first:", "bold")]
        for f in self.view.files:
            state = "" if f.exists else "  (not there yet)"
            state = f"  ({f.problem})" if f.problem else state
            lines.append(Content.assemble("  ", plain(one_line(tilde(str(f.path)), 120)), "  ",
                                          plain(f.label + state, "$foreground 60%")))
        self.query_one("#settings-files", Static).update(Content("\n").join(lines))

    def selected(self) -> Entry | None:
        table = self.query_one(DataTable)
        if table.row_count == 0:
            return None
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        return self.row_entries.get(key or "")

    def _writable(self) -> list[SettingsFile]:
        return [f for f in self.view.files if f.problem == "" and f.label != "--settings"]

    def _pick_file(self, title: str, then: Callable[[SettingsFile], None]) -> None:
        files = self._writable()
        choices = [(Content.assemble(plain(f.label, "bold"), "  ", plain(one_line(tilde(str(f.path)), 120),
                                                                         "$foreground 60%")), f) for f in files]

        def chosen(value: Any) -> None:
            if value is not None:
                then(value)

        self.app.push_screen(ChoiceScreen(Content.styled(title, "bold"), choices), chosen)

    # ---- rules ------------------------------------------------------------------------------

    def action_add_rule(self) -> None:
        def got_rule(text: str | None) -> None:
            if not text:
                return
            try:
                make_rule(text, "allow", "check", self.facts.cwd)
            except RuleError as exc:
                self.notify(f"Not a rule: {exc}", severity="error", markup=False)
                return
            choices = [(Content.styled(b, "bold"), b) for b in BEHAVIORS]

            def got_behavior(behavior: Any) -> None:
                if behavior is not None:
                    self._pick_file(f"Save {behavior} {text} to:", lambda f: self._add(behavior, text, f))

            self.app.push_screen(ChoiceScreen(Content.assemble(("Add ", "bold"), plain(text), (" as:", "bold")),
                                              choices), got_behavior)

        self.app.push_screen(TextPromptScreen("A rule in Claude Code's syntax", "Bash(npm test:*)  ·  Read(./docs/**)"
                                              "  ·  WebFetch(domain:example.com)"), got_rule)

    def _add(self, behavior: str, text: str, target: SettingsFile) -> None:
        command = EditRule(action="add", behavior=behavior, rules=[text], destination=str(target.path))  # type: ignore[arg-type]

        async def add() -> None:
            reply = await self.controls.ask(command)
            if not reply.ok or reply.message:
                self.notify(reply.message, severity="error", markup=False)
            else:
                self.notify(f"{behavior} {text}: in force now, saved to {tilde(str(target.path))}", markup=False)
            await self.reload()

        self.run_worker(add(), group="rules")

    def action_remove_rule(self) -> None:
        entry = self.selected()
        if entry is None or entry.rule is None:
            self.notify("Select a rule to remove (the rows under Permission rules).", markup=False)
            return
        behavior, text = entry.rule
        source = entry.source
        path = Path(source)
        in_file = path.is_absolute() and any(f.path == path for f in self._writable())
        destination = str(path) if in_file else source
        command = EditRule(action="remove", behavior=behavior, rules=[text], destination=destination)  # type: ignore[arg-type]

        async def remove() -> None:
            reply = await self.controls.ask(command)
            if not reply.ok:
                self.notify(reply.message, severity="error", markup=False)
            else:
                where = f"removed from {tilde(source)}" if in_file else "removed for this session"
                self.notify(f"{behavior} {text}: {where}", markup=False)
            await self.reload()

        self.run_worker(remove(), group="rules")

    # ---- mode and model ---------------------------------------------------------------------

    def action_switch_mode(self) -> None:
        choices = [(Content.assemble(plain(mode, "bold"), ("  (now)" if mode == self.view.mode else "",
                                                           "$foreground 60%")), mode) for mode in MODES]

        def chosen(mode: Any) -> None:
            if mode is None:
                return
            self.main.set_mode(mode)
            self.view.mode = mode
            self._offer_save(f"Mode {mode} for this session. Save it as the default mode too?",
                             ("permissions", "defaultMode"), mode)

        self.app.push_screen(ChoiceScreen(Content.styled("Permission mode", "bold"), choices), chosen)

    def action_switch_model(self) -> None:
        if not self.facts.capabilities.set_model:
            self.notify(f"{self.facts.agent_label} chooses its own model: Vigil cannot switch it.", markup=False)
            return

        async def switch(name: str) -> None:
            reply = await self.controls.ask(SetModel(model=name))
            if not reply.ok:
                self.notify(reply.message, severity="error", markup=False)
                return
            self._offer_save(f"Model {name} from the next request on. Save it as the default model too?",
                             ("model",), name)

        def chosen(name: str | None) -> None:
            if name:
                self.run_worker(switch(name), group="model")

        self.app.push_screen(TextPromptScreen("Model name", "claude-sonnet-4-5 · gpt-4.1 · llama3.1",
                                              self.facts.model), chosen)

    def action_toggle_notifications(self) -> None:
        notifier = getattr(self.app, "notifier", None)
        if notifier is None:
            return
        notifier.enabled = not notifier.enabled
        state = "on" if notifier.enabled else "off"
        self._offer_save(f"Desktop notifications {state} for this session. Save it too?", ("desktopNotifications",),
                         notifier.enabled)

    def _offer_save(self, title: str, key: tuple[str, ...], value: Any) -> None:
        files = self._writable()
        choices: list[tuple[Content, Any]] = [(Content.styled("No: this session only", "bold"), None)]
        choices += [(Content.assemble(plain(f"Save to {f.label}", "bold"), "  ",
                                      plain(one_line(tilde(str(f.path)), 120), "$foreground 60%")), f) for f in files]

        def chosen(target: Any) -> None:
            if target is not None:
                try:
                    set_setting(target.path, key, value)
                except SettingsWriteError as exc:
                    self.notify(str(exc), severity="error", markup=False)
                else:
                    self.notify(f"Saved {'.'.join(key)} = {value} to {tilde(str(target.path))}", markup=False)
            self.run_worker(self.reload(), group="reload")

        self.app.push_screen(ChoiceScreen(Content.styled(title, "bold"), choices), chosen)

    def action_refresh(self) -> None:
        self.run_worker(self.reload(), group="reload")

    def action_close(self) -> None:
        self.app.pop_screen()


def open_settings(main: Any) -> None:
    if main.controls is None:
        main.notify("Settings can be changed in a live session only.", markup=False)
        return

    async def show() -> None:
        facts = await main.controls.refresh()
        await main.app.push_screen(SettingsScreen(main, facts))

    main.run_worker(show(), group="settings")
