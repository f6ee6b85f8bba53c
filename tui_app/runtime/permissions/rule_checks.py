"""The facts one call's subjects produce against the rules: which deny, ask or allow rule each
subject hits, which guards demand a question, and which subjects still need approval.

A call has one or more subjects: a file path (Read, Edit …), every simple command of a Bash line
and every file it redirects into, a web host, or just the tool. `RulePolicy` folds an Assessment
into one decision (deny → ask → allow → mode).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from tui_app.runtime.contract import ToolSpec
from tui_app.runtime.permissions.path_rules import (
    PROTECTED_DIRS,
    PathPattern,
    is_protected,
    literal_prefix,
    rule_path,
    spellings,
)
from tui_app.runtime.permissions.rules import Behavior, Rule, bash_matches, domain_matches, governs
from tui_app.runtime.permissions.working_dirs import WorkingDirs, inside

READERS = frozenset({"Read"})


@dataclass
class Assessment:
    #: for plan mode: does the call only read?
    read_only: bool = False
    #: (reason, rule) of the first deny hit
    deny: tuple[str, Rule | None] | None = None
    #: (reason, rule) of the first ask rule hit
    ask: tuple[str, Rule] | None = None
    #: reasons to ask that no allow rule and no mode lifts (protected path, unreadable command)
    guards: list[str] = field(default_factory=list)
    #: the exact rules that would allow the subjects nothing allows yet
    unallowed: list[str] = field(default_factory=list)
    allow_rules: list[Rule] = field(default_factory=list)
    #: a subject was allowed by the mode (acceptEdits)
    by_mode: bool = False
    #: (reason, the rule that would allow it) for each path outside the working directories
    outside: list[tuple[str, str]] = field(default_factory=list)
    #: Bash: why the line's git could run a program the repository's configuration names; the
    #: sandbox's auto-allow does not apply then
    runs_config: list[str] = field(default_factory=list)
    #: the spellings of the call's path (link, real target) the decision was made on
    paths: tuple[str, ...] = ()

    def deny_with(self, reason: str, rule: Rule | None) -> None:
        if self.deny is None:
            self.deny = (reason, rule)

    def ask_with(self, reason: str, rule: Rule) -> None:
        if self.ask is None:
            self.ask = (reason, rule)

    def hits(self, what: str, deny: Rule | None, ask: Rule | None) -> None:
        """Record the deny and ask rules one subject (`what`) hit."""
        if deny is not None:
            self.deny_with(f"{what} is denied by the rule {deny.text} ({deny.source})", deny)
        if ask is not None:
            self.ask_with(f"{what} must be confirmed (rule {ask.text}, {ask.source})", ask)


@dataclass
class RuleView:
    """The rules and places one decision is made against."""

    rules: dict[Behavior, tuple[Rule, ...]]
    mode: str
    cwd: str
    home: str
    project_dir: str
    #: the working directory and the additional directories
    dirs: WorkingDirs
    #: paths that are protected besides the usual names, each with all it holds: settings files,
    #: hook scripts, the git directories a worktree's `.git` file points to
    protected: frozenset[str] = frozenset()

    def of(self, behavior: Behavior, names: frozenset[str]) -> list[Rule]:
        return [r for r in self.rules[behavior] if r.specifier is not None and r.tool in names]

    def whole(self, behavior: Behavior, spec: ToolSpec) -> Rule | None:
        return next((r for r in self.rules[behavior] if r.specifier is None and governs(r.tool, spec)), None)

    # ---- commands, hosts, anything else -----------------------------------------------------

    def bash_hit(self, behavior: Behavior, names: frozenset[str], texts: list[str]) -> Rule | None:
        for rule in self.of(behavior, names):
            if any(bash_matches(rule.specifier, t) for t in texts):  # type: ignore[arg-type]
                return rule
        return None

    def domain_hit(self, behavior: Behavior, names: frozenset[str], host: str) -> Rule | None:
        return next((r for r in self.of(behavior, names) if domain_matches(r.specifier, host)), None)  # type: ignore[arg-type]

    # ---- paths ------------------------------------------------------------------------------

    def pattern(self, rule: Rule) -> PathPattern:
        return PathPattern(rule.specifier or "**", rule.base_dir or self.project_dir, self.cwd, self.home)

    def path_hit(self, behavior: Behavior, names: frozenset[str], paths: tuple[str, ...]) -> Rule | None:
        """The first rule that matches any spelling."""
        for rule in self.of(behavior, names):
            pattern = self.pattern(rule)
            if any(pattern.matches(p) for p in paths):
                return rule
        return None

    def path_allowed(self, names: frozenset[str], paths: tuple[str, ...]) -> Rule | None:
        """An allow holds only if every spelling (link and target) matches an allow rule."""
        used = None
        for path in paths:
            rule = self.path_hit("allow", names, (path,))
            if rule is None:
                return None
            used = used or rule
        return used

    def spell(self, raw: str) -> tuple[str, ...]:
        return spellings(raw, self.cwd, self.home)

    def check_read(self, a: Assessment, raw: str, names: frozenset[str], *, deny_only: bool = False,
                   paths: tuple[str, ...] | None = None) -> None:
        paths = paths or self.spell(raw)
        a.hits(f"reading {paths[-1]}", self.path_hit("deny", names | {"Read"}, paths),
               None if deny_only else self.path_hit("ask", names, paths))
        if deny_only:
            return
        allowed = self.path_allowed(names, paths)
        if allowed is not None:
            a.allow_rules.append(allowed)
        else:
            a.unallowed.append(f"Read({rule_path(paths[0], self.project_dir)})")

    def protects(self, paths: tuple[str, ...]) -> bool:
        return any(is_protected(p) or inside(p, self.protected) for p in paths)

    def holds_protected(self, paths: tuple[str, ...]) -> str | None:
        """A protected path that moving or removing one of these directories would move or remove
        with it (`mv hooks h2`, `rm -rf .`, `mv .claude x`), or None: a hook script's folder and
        every folder above it are as protected as the script."""
        below = [*self.protected, *(os.path.join(root, name) for root in self.dirs.roots
                                    for name in (*PROTECTED_DIRS, ".mcp.json"))]
        for path in paths:
            for held in below:
                if held != path and inside(held, (path,)) and os.path.lexists(held):
                    return held
        return None

    def check_edit_guards(self, a: Assessment, paths: tuple[str, ...], names: frozenset[str]) -> None:
        """Deny and ask rules and the protected-path guard of a path about to be written."""
        deny = self.path_hit("deny", names | {"Edit"}, paths) or self.path_hit("deny", frozenset({"Read"}), paths)
        a.hits(f"writing {paths[-1]}", deny, self.path_hit("ask", names | {"Edit"}, paths))
        if self.mode != "bypassPermissions" and self.protects(paths):
            a.guards.append(f"{paths[-1]} is a protected path: writes to it are always confirmed")

    # ---- working directories --------------------------------------------------------------------

    def check_outside_read(self, a: Assessment, paths: tuple[str, ...], names: frozenset[str] = READERS) -> None:
        """A read outside the working directories asks (every mode but bypassPermissions), unless a
        Read allow rule names the path."""
        if self.mode == "bypassPermissions" or self.dirs.may_read(paths):
            return
        out = tuple(p for p in paths if not self.dirs.may_read((p,)))
        if self.path_allowed(names | READERS, out) is not None:
            return
        a.outside.append((f"{out[0]} is outside the working directories ({self.dirs.describe()})",
                          f"Read({rule_path(out[0], self.project_dir)})"))

    def check_outside_write(self, a: Assessment, paths: tuple[str, ...], names: frozenset[str]) -> None:
        if self.mode == "bypassPermissions" or self.dirs.contains(paths):
            return
        out = tuple(p for p in paths if not self.dirs.contains((p,)))
        if self.path_allowed(names | {"Edit"}, out) is not None:
            return
        a.outside.append((f"{out[0]} is outside the working directories ({self.dirs.describe()})",
                          f"Edit({rule_path(out[0], self.project_dir)})"))

    def deny_under(self, paths: tuple[str, ...]) -> Rule | None:
        """A Read deny rule that may match something below one of these directories: a search
        through them would read it (`grep -r x .` with `Read(./secret/**)`)."""
        for rule in self.of("deny", READERS):
            prefix = literal_prefix(self.pattern(rule).pattern)
            for path in paths:
                root = path.rstrip("/") + "/"
                if prefix.startswith(root) or root.startswith(prefix) or prefix == path:
                    return rule
        return None

    def check_edit(self, a: Assessment, raw: str, names: frozenset[str], *, mode_may_allow: bool = True,
                   paths: tuple[str, ...] | None = None) -> None:
        paths = paths or self.spell(raw)
        self.check_edit_guards(a, paths, names)
        allowed = self.path_allowed(names | {"Edit"}, paths)
        if allowed is not None:
            a.allow_rules.append(allowed)
        elif mode_may_allow and self.accepts_edit(paths):
            a.by_mode = True
        elif not any(is_protected(p) for p in paths):
            a.unallowed.append(f"Edit({rule_path(paths[0], self.project_dir)})")
        else:
            a.unallowed.append("")  # needs approval, but no rule may ever allow it

    def accepts_edit(self, paths: tuple[str, ...]) -> bool:
        """acceptEdits: edits inside the working and additional directories run."""
        return self.mode == "acceptEdits" and self.dirs.contains(paths)
