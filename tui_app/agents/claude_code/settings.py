"""Which of the user's settings Vigil applies itself when Claude Code is the agent.

Claude Code reads ~/.claude and <project>/.claude settings itself and runs their hooks; Vigil
running them again would run every hook twice. Vigil keeps the hooks of its own files
(~/.config/vigil, .vigil/, --settings). Rules of every file stay in Vigil's policy: a rule Claude
Code also applies decides the same way twice, which costs nothing.
"""

from __future__ import annotations

from pathlib import Path

from tui_app.runtime.hooks.config import HookConfig, MatcherGroup


def is_claude_settings_file(source: str) -> bool:
    path = Path(source)
    return path.parent.name == ".claude" and path.name in ("settings.json", "settings.local.json")


def vigil_only_hooks(config: HookConfig) -> HookConfig:
    kept = HookConfig()
    for groups in config.groups.values():
        for group in groups:
            handlers = tuple(h for h in group.handlers if not is_claude_settings_file(h.source))
            if handlers:
                kept.extend([MatcherGroup(group.event, group.matcher, handlers, group.test)])
    return kept
