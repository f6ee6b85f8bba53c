"""The ACP driver for an agent named on the command line or in the settings (`--agent NAME`)."""

from __future__ import annotations

import os
from dataclasses import replace
from typing import Any

from tui_app.agents.acp.agent import AcpAgent
from tui_app.agents.acp.setup import PRESETS, catalog


class UnknownAgent(Exception):
    """The name is no agent Vigil can run; the message says which ones it can."""


def acp_driver(name: str, values: dict[str, Any], *, command: str | None = None, model: str = "",
               resume_id: str | None = None) -> Any:
    """The ACP driver for agent `name` (a preset on PATH or an `agents` entry)."""
    found = catalog(values)
    config = found.agents.get(name)
    if config is None:
        known = ", ".join(["vigil", "claude-code", *sorted(found.agents)])
        hint = ""
        if name in PRESETS:
            hint = (f"; {PRESETS[name].label} needs `{PRESETS[name].command}` on PATH, or an entry "
                    f"agents.{name} with its command in the settings")
        raise UnknownAgent(f"unknown agent {name!r} (known: {known}){hint}")
    if command:
        config = replace(config, command=os.path.expanduser(command))
    return AcpAgent(config, model=model, resume_id=resume_id, problems=found.problems)
