"""The permission engine: Claude Code-compatible rules and modes, as a `PermissionPolicy`.

Order, for one call: a bare deny of the tool → deny rules on any subject → plan mode (anything
that is not read-only is denied) → ask rules → guards (a settings file whose deny list did not
load, a protected path, a command that cannot be parsed) → a path outside the working directories
(asks in every mode but bypassPermissions, unless a Read/Edit allow rule names it) → a Bash call
that asks to leave the sandbox → tools that need no approval → allow rules (every subject must be
allowed) → the sandbox's auto-allow (not for a line whose git could run what its repository's
configuration names, see bash/git_guard) → `always_ask` → the mode. In dontAsk mode whatever would ask
is denied. The first list that matches decides; specificity does not matter; a deny anywhere
beats an allow anywhere.

A read-only Bash command is auto-allowed only where it will run in the sandbox, or where there is
no sandbox at all (then the classifier's stricter checks apply); a command that runs outside an
available sandbox (`excludedCommands`, `dangerouslyDisableSandbox`) asks like any other.
"""

from __future__ import annotations

import dataclasses
import os
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path

from tui_app.runtime.contract import ToolSpec
from tui_app.runtime.files.opened import Identity
from tui_app.runtime.permissions.bash.rules import assess_bash
from tui_app.runtime.permissions.decision import (
    Behavior,
    PermissionDecision,
    PermissionMode,
    PermissionQuery,
    suggested_rule,
)
from tui_app.runtime.permissions.descriptor_checks import opened_refusal
from tui_app.runtime.permissions.path_rules import PathPattern
from tui_app.runtime.permissions.rule_checks import Assessment, RuleView
from tui_app.runtime.permissions.rules import (
    BEHAVIORS,
    EDIT_FAMILY,
    Rule,
    RuleError,
    governs,
    hides,
    host_of,
    make_rule,
    names_tool,
)
from tui_app.runtime.permissions.sandbox_policy import SandboxPolicy
from tui_app.runtime.permissions.settings_writer import SettingsWriteError, append_rules, update_rules
from tui_app.runtime.permissions.working_dirs import WorkingDirs

#: the kinds of tool a path rule's deny reaches besides its own: a Read deny also stops edits of
#: the path and the commands that read it (`cat`, `grep -r`); an Edit-family deny the commands that
#: write it (`> file`)
_ALSO_DENIES = {"Read": ("edit", "bash"), **{name: ("bash",) for name in EDIT_FAMILY}}


@dataclass(frozen=True)
class DenyGuard:
    """A settings file whose deny (or ask) rules could not be read: every call it could have
    denied is asked, never silently allowed."""

    source: str
    detail: str
    #: tool names (rule tool parts) the lost rules were about; None: any tool
    tools: tuple[str, ...] | None = None

    def covers(self, spec: ToolSpec) -> bool:
        return self.tools is None or any(governs(t, spec) or spec.permission.kind in _ALSO_DENIES.get(t, ())
                                         for t in self.tools)

    @property
    def reason(self) -> str:
        return f"{self.source} could not be loaded ({self.detail}); it may deny this call, so Vigil asks"

    @property
    def announcement(self) -> str:
        which = f"{', '.join(self.tools)} call" if self.tools else "call"
        return (f"Rules or hooks of {self.source} could not be loaded ({self.detail}). Until it is fixed, "
                f"Vigil asks before every {which} they could have denied.")


class RulePolicy:
    def __init__(
        self,
        *,
        cwd: str,
        mode: PermissionMode = "default",
        project_dir: str | None = None,
        rules: Iterable[Rule] = (),
        additional_dirs: Iterable[str] = (),
        guards: Iterable[DenyGuard] = (),
        destinations: dict[str, Path] | None = None,
        home: str | None = None,
        on_warning: Callable[[str, str], None] | None = None,
    ) -> None:
        self.mode: PermissionMode = mode
        self.cwd = cwd
        self.project_dir = project_dir or cwd
        self.home = home or os.path.expanduser("~")
        self.guards = tuple(guards)
        self.destinations = dict(destinations or {})
        self.on_warning = on_warning
        self._lock = threading.Lock()
        self._rules: dict[Behavior, tuple[Rule, ...]] = {b: () for b in BEHAVIORS}
        for rule in rules:
            self._rules[rule.behavior] += (rule,)
        self.dirs = WorkingDirs(cwd, additional_dirs)
        #: settings files and hook scripts: writes to them always ask
        self.protected_paths: set[str] = set()
        #: the Bash sandbox, when the session has one (see sandbox_policy)
        self.sandbox: SandboxPolicy | None = None

    @property
    def workdirs(self) -> tuple[str, ...]:
        """Every spelling of every working directory."""
        return self.dirs.roots

    def add_directories(self, directories: Iterable[str]) -> list[str]:
        """Working directories: reads and writes there need no question about where they are,
        acceptEdits lets edits run there, and the sandbox lets commands write there."""
        return self.dirs.add(directories)

    def protect(self, paths: Iterable[str]) -> None:
        """Files that are written only after asking, in every mode but bypassPermissions."""
        for path in paths:
            self.protected_paths.update({os.path.normpath(path), os.path.realpath(path)})

    def read_patterns(self) -> list[PathPattern]:
        """The Read deny rules as path patterns (what the sandbox masks)."""
        view = self._view()
        return [view.pattern(r) for r in view.of("deny", frozenset({"Read"}))]

    def web_domains(self) -> tuple[list[str], list[str]]:
        """Hosts `WebFetch(domain:…)` allow and deny rules name (the sandbox's network follows them)."""
        view = self._view()
        names = frozenset({"WebFetch"})
        return ([r.specifier or "" for r in view.of("allow", names)],
                [r.specifier or "" for r in view.of("deny", names)])

    # ---- the PermissionPolicy protocol ----------------------------------------------------------

    def rules(self, behavior: Behavior | None = None) -> list[Rule]:
        behaviors = (behavior,) if behavior else BEHAVIORS
        return [r for b in behaviors for r in self._rules[b]]

    def hides_tool(self, name: str) -> bool:
        return any(r.specifier is None and hides(r.tool, name) for r in self._rules["deny"])

    def decide(self, query: PermissionQuery) -> PermissionDecision:
        decision = self._decide(query)
        if query.spec.permission.kind == "bash":
            decision = dataclasses.replace(decision, sandboxed=self._sandboxed(query))
        if self.mode == "dontAsk" and decision.behavior == "ask":
            why = (f"{query.spec.name} would need approval" if decision.decided_by == "mode"
                   else decision.reason)
            return PermissionDecision("deny", "mode", f"{why}; in dontAsk mode anything that would ask is denied",
                                      rule=decision.rule)
        return decision

    def add_rules(self, behavior: Behavior, rules: list[str], destination: str = "localSettings") -> list[str]:
        """Rules take effect at once; for a file destination they are also saved there.
        Returns the rules now in effect (a rule that does not parse is reported and skipped)."""
        base = self.home if destination == "userSettings" else self.project_dir
        source = str(self.destinations.get(destination, destination))
        accepted: dict[str, Rule] = {}
        for text in rules:
            try:
                accepted[text.strip()] = make_rule(text, behavior, source, base)
            except RuleError as exc:
                self._warn("rule_invalid", f"Not saved: {exc}")
        if not accepted:
            return []
        with self._lock:
            known = {r.text for r in self._rules[behavior]}
            self._rules[behavior] += tuple(r for r in accepted.values() if r.text not in known)
        path = self.destinations.get(destination)
        if path is not None:
            try:
                append_rules(path, behavior, list(accepted))
            except SettingsWriteError as exc:
                self._warn("settings_write_failed", f"{exc}. The rule applies to this session only.")
        return list(accepted)

    def opened_refusal(self, tool: str, kind: str, who: Identity, checked: tuple[str, ...] | None) -> str | None:
        """For a file tool, once it has opened its file: why it must not use what it opened (a
        link or a directory changed since the decision, a hard link to a denied file), or None.
        `checked`: the spellings the call's decision was made on (None: no decision yet)."""
        return opened_refusal(self._view(), tool, kind, who, checked)

    def read_denial(self, tool: str) -> Callable[[str], bool] | None:
        """For a search tool (Grep, Glob): whether a file it found is one that Read or the tool
        may not read, so it is left out of the result. None when no deny rule names a path for
        them, and then nothing needs checking."""
        view = self._view()
        names = frozenset({tool, "Read"})
        if not view.of("deny", names):
            return None
        return lambda path: view.path_hit("deny", names, view.spell(path)) is not None

    def remove_rules(self, behavior: Behavior, rules: list[str], destination: str = "session",
                     replace_with: list[str] | None = None) -> list[str]:
        """Drop `rules` of `destination` (with `replace_with`: all of its rules of this behavior,
        then add those). In effect at once; a file destination is rewritten too. Returns the rules
        the destination holds for this behavior afterwards."""
        source = str(self.destinations.get(destination, destination))
        base = self.home if destination == "userSettings" else self.project_dir
        wanted: dict[str, Rule] = {}
        for text in replace_with or []:
            try:
                wanted[text.strip()] = make_rule(text, behavior, source, base)
            except RuleError as exc:
                self._warn("rule_invalid", f"Not saved: {exc}")
        gone = set(rules)
        with self._lock:
            kept = [r for r in self._rules[behavior] if not (r.source == source and (
                replace_with is not None or r.text in gone))]
            self._rules[behavior] = tuple(kept) + tuple(wanted.values())
        path = self.destinations.get(destination)
        if path is not None:
            try:
                update_rules(path, behavior, add=list(wanted), remove=list(gone), replace=replace_with is not None)
            except SettingsWriteError as exc:
                self._warn("settings_write_failed", f"{exc}. The change applies to this session only.")
        return [r.text for r in self._rules[behavior] if r.source == source]

    def remove_directories(self, directories: Iterable[str]) -> None:
        """No longer working directories (the cwd always stays)."""
        self.dirs.remove(directories)

    # ---- the decision ---------------------------------------------------------------------------

    def _view(self) -> RuleView:
        return RuleView(dict(self._rules), self.mode, self.cwd, self.home, self.project_dir, self.dirs,
                        frozenset(self.protected_paths))

    def _sandboxed(self, query: PermissionQuery) -> bool:
        return self.sandbox is not None and self.sandbox.runs_sandboxed(query.input)

    def _decide(self, query: PermissionQuery) -> PermissionDecision:
        spec = query.spec
        view = self._view()
        whole_deny = view.whole("deny", spec)
        if whole_deny is not None:
            return _deny("rule", f"{spec.name} is denied by the rule {whole_deny.text} ({whole_deny.source})",
                         whole_deny)
        a = self._assess(view, query)
        decision = self._decide_assessed(view, a, query)
        # the spellings the decision was made on: a file tool compares what it opened with them
        return dataclasses.replace(decision, paths=a.paths) if a.paths else decision

    def _decide_assessed(self, view: RuleView, a: Assessment, query: PermissionQuery) -> PermissionDecision:
        spec, flags = query.spec, query.flags
        if a.deny is not None:
            reason, rule = a.deny
            return _deny("rule", reason[0].upper() + reason[1:], rule)
        if self.mode == "plan" and not a.read_only and not flags.requires_user_interaction:
            return _deny("mode", f"{spec.name} is not allowed in plan mode: plan mode only explores "
                                 f"(read-only tools and commands)")
        whole_ask = view.whole("ask", spec)
        if whole_ask is not None:
            return PermissionDecision("ask", "rule", f"{spec.name} must be confirmed (rule {whole_ask.text}, "
                                                     f"{whole_ask.source})", rule=whole_ask.text)
        if a.ask is not None:
            reason, rule = a.ask
            return PermissionDecision("ask", "rule", reason[0].upper() + reason[1:], rule=rule.text)
        guards = [g.reason for g in self.guards if g.covers(spec)] + a.guards
        if guards:
            return PermissionDecision("ask", "guard", "; ".join(guards))
        if a.outside:
            reasons = "; ".join(dict.fromkeys(reason for reason, _ in a.outside))
            return PermissionDecision("ask", "guard", reasons[0].upper() + reasons[1:],
                                      suggested_rules=tuple(dict.fromkeys(rule for _, rule in a.outside)))
        sandbox = self.sandbox if spec.permission.kind == "bash" else None
        if sandbox is not None and sandbox.required and not sandbox.active:
            return _deny("guard", f"the sandbox is required (sandbox.failIfUnavailable) but cannot run here: "
                                  f"{sandbox.unavailable_reason or 'bubblewrap is not available'}")
        if sandbox is not None and self.mode != "bypassPermissions" and self._sandboxed(query):
            gap = sandbox.mask_gap()  # the masks are the boundary here: incomplete ones ask (fail closed)
            if gap:
                return PermissionDecision("ask", "guard", gap[0].upper() + gap[1:])
        if (sandbox is not None and sandbox.active and sandbox.unsandboxed_requested(query.input)
                and self.mode != "bypassPermissions"):
            return PermissionDecision("ask", "guard", "the command asks to run outside the sandbox "
                                                      "(dangerouslyDisableSandbox): it could change anything")
        if spec.permission.kind != "bash" and not flags.needs_approval and not flags.requires_user_interaction:
            return PermissionDecision("allow", "tool", "needs no approval")
        whole_allow = view.whole("allow", spec)
        if whole_allow is not None:
            return PermissionDecision("allow", "rule", f"allowed by the rule {whole_allow.text}",
                                      rule=whole_allow.text)
        if not a.unallowed:
            if a.allow_rules:
                used = a.allow_rules[0]
                return PermissionDecision("allow", "rule", f"allowed by the rule {used.text} ({used.source})",
                                          rule=used.text)
            if a.by_mode:
                return PermissionDecision("allow", "mode", "acceptEdits mode: edits inside the working directories")
            if sandbox is None or not sandbox.active or self._sandboxed(query):
                return PermissionDecision("allow", "tool", "read-only" + (" (runs in the sandbox)"
                                                                          if self._sandboxed(query) else ""))
            # read-only, but it would run outside an available sandbox: it asks like any command
            a.unallowed.append(suggested_rule(spec, query.input))
        if sandbox is not None and sandbox.auto_allow and self._sandboxed(query) and not a.runs_config:
            return PermissionDecision("allow", "tool", "runs in the sandbox (sandbox.autoAllowBashIfSandboxed)")
        if spec.permission.always_ask:
            return PermissionDecision("ask", "tool", f"{spec.name} always asks")
        if flags.requires_user_interaction:
            return PermissionDecision("allow", "tool", "asks the user itself")
        if self.mode == "bypassPermissions":
            return PermissionDecision("allow", "mode", "bypassPermissions mode")
        suggestions = tuple(dict.fromkeys(r for r in a.unallowed if r))
        why = f": {a.runs_config[0]}" if a.runs_config else ""
        return PermissionDecision("ask", "mode", f"{spec.name} needs approval in {self.mode} mode{why}",
                                  suggested_rules=suggestions)

    def _assess(self, view: RuleView, query: PermissionQuery) -> Assessment:
        spec, data = query.spec, query.input
        kind = spec.permission.kind
        key = spec.permission.rule_key or ("command" if kind == "bash" else None)
        target = data.get(key) if key else None
        names = frozenset({spec.name, *spec.aliases})
        if kind == "bash" and isinstance(target, str):
            return assess_bash(view, spec, target, sandboxed=self._sandboxed(query))
        a = Assessment(read_only=query.flags.read_only)
        if kind == "read":
            path = target if isinstance(target, str) and target else query.cwd
            a.paths = view.spell(path)
            view.check_read(a, path, names | {"Read"}, paths=a.paths)
            if not path.startswith("vigil-artifact://"):
                view.check_outside_read(a, a.paths, names)
        elif kind == "edit" and isinstance(target, str) and target:
            a.paths = view.spell(target)
            view.check_edit(a, target, names, paths=a.paths)
            view.check_outside_write(a, a.paths, names)
        elif kind == "web" and isinstance(target, str):
            self._check_web(view, a, spec, target, names | {"WebFetch"})
        else:
            self._check_other(view, a, spec, data, target, names)
        return a

    @staticmethod
    def _check_web(view: RuleView, a: Assessment, spec: ToolSpec, url: str, names: frozenset[str]) -> None:
        host = host_of(url)
        if host is None:
            a.unallowed.append("")
            return
        a.hits(f"fetching from {host}", view.domain_hit("deny", names, host), view.domain_hit("ask", names, host))
        rule = view.domain_hit("allow", names, host)
        if rule is not None:
            a.allow_rules.append(rule)
        else:
            a.unallowed.append(f"{spec.name}(domain:{host})")

    @staticmethod
    def _check_other(view: RuleView, a: Assessment, spec: ToolSpec, data: dict, target: object,
                     names: frozenset[str]) -> None:
        """Any other tool: `Tool(pattern)` matches its target with `*` wildcards."""
        def hit(behavior: Behavior) -> Rule | None:
            if not isinstance(target, str):
                return None
            return next((r for r in view.rules[behavior] if r.specifier is not None
                         and names_tool(r.tool, spec.name, spec.aliases)
                         and fnmatchcase(target, r.specifier)), None)

        a.hits(f"{spec.name} {target}", hit("deny"), hit("ask"))
        rule = hit("allow")
        if rule is not None:
            a.allow_rules.append(rule)
        else:
            a.unallowed.append(suggested_rule(spec, data))

    def _warn(self, code: str, message: str) -> None:
        if self.on_warning is not None:
            self.on_warning(code, message)


def _deny(by: str, reason: str, rule: Rule | None = None) -> PermissionDecision:
    return PermissionDecision("deny", by, reason, rule=rule.text if rule else None, final=True)  # type: ignore[arg-type]
