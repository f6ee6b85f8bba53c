"""Neutralising terminal control sequences in untrusted text (tool output, file names, model text).

OSC (titles, clipboard writes, hyperlinks), DCS/APC/PM/SOS strings, cursor movement and every other
escape or C0/C1 control are removed. `keep_sgr=True` keeps colour/style sequences (SGR, `ESC[...m`)
so a viewer can turn them into styles; nothing else survives.
"""

from __future__ import annotations

import re

_ESC = "\x1b"
# strings terminated by BEL or ST (ESC \ or 0x9c): OSC, DCS, SOS, PM, APC — 7-bit and 8-bit forms
_STRING_SEQ = r"(?:\x1b[\]P^_X]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c|$)"
_CSI = r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"
_TWO_CHAR = r"\x1b[@-Z\\-_ -/]*[0-~]?"
_SEQUENCES = re.compile(f"{_STRING_SEQ}|{_CSI}|{_TWO_CHAR}")
_SGR = re.compile(r"\x1b\[[0-9;:]*m")
# C0 controls except tab and newline, DEL, and C1 controls
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\x80-\x9f]")
_HAS_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def neutralize(text: str, keep_sgr: bool = False) -> str:
    """Untrusted text made inert for a terminal. Carriage returns become newlines only when alone
    (`\\r\\n` → `\\n`; a bare `\\r`, used to redraw progress bars, is dropped)."""
    if not _HAS_CONTROL.search(text):
        return text
    text = text.replace("\r\n", "\n")
    if keep_sgr:
        kept: list[str] = []

        def stash(match: re.Match[str]) -> str:
            kept.append(match.group(0))
            return f"\x00{len(kept) - 1}\x00"

        text = _SGR.sub(stash, text.replace("\x00", ""))
        text = _SEQUENCES.sub("", text)
        text = re.sub(r"[\x01-\x08\x0b-\x1f\x7f\x80-\x9f]", "", text)
        return re.sub(r"\x00(\d+)\x00", lambda m: kept[int(m.group(1))], text)
    text = _SEQUENCES.sub("", text)
    return _CONTROLS.sub("", text)
