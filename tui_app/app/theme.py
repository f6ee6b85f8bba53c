"""The theme Vigil starts with (the live app and the replay alike)."""

from __future__ import annotations

import os

#: terminals that set COLORFGBG ("15;0": white on black) say whether their background is light
LIGHT_BACKGROUNDS = frozenset({"7", "15"})


def pick_theme(env: dict[str, str] | os._Environ[str] = os.environ) -> str:
    """VIGIL_THEME when set; else light for a terminal that says it has a light background."""
    wanted = env.get("VIGIL_THEME", "").strip()
    if wanted:
        return wanted
    background = env.get("COLORFGBG", "").rsplit(";", 1)[-1].strip()
    return "textual-light" if background in LIGHT_BACKGROUNDS else "textual-dark"
