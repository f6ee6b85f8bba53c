"""Neutralising terminal control sequences in untrusted text (tool output, file names, model text).

OSC (titles, clipboard writes, hyperlinks), DCS/APC/PM/SOS strings, cursor movement and every other
escape or C0/C1 control are removed. `keep_sgr=True` keeps colour/style sequences (SGR, `ESC[...m`)
so a viewer can turn them into styles; nothing else survives. `reveal_controls` shows the same
characters as visible symbols instead, for text a user must judge exactly (an approval preview).

Only screen-facing text goes through here. The model's content stays byte-exact.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel

# strings terminated by BEL or ST (ESC \ or 0x9c): OSC, DCS, SOS, PM, APC — 7-bit and 8-bit forms.
# An unterminated one ends at the next escape or line break, so a stray introducer in a log
# cannot swallow the rest of it.
_STRING_SEQ = r"(?:\x1b[\]P^_X]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c\n]*(?:\x07|\x1b\\|\x9c|(?=[\x1b\n])|$)"
_CSI = r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"
# any other escape: intermediates, then one final byte (or a bare ESC)
_ESCAPE = r"\x1b[ -/]*[0-~]?"
_SEQUENCES = re.compile(f"{_STRING_SEQ}|{_CSI}|{_ESCAPE}")
_SGR = re.compile(r"\x1b\[[0-9;:]*m")
# C0 controls except tab and newline, DEL, and C1 controls
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\x80-\x9f]")
# … and lone surrogates (bytes a decoder escaped), which no screen can show and no JSON log can hold
_HAS_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")
_SURROGATE = re.compile("[\ud800-\udfff]")
_CONTROLS_BUT_NUL = re.compile(r"[\x01-\x08\x0b-\x1f\x7f\x80-\x9f]")
_PLACEHOLDER = re.compile(r"\x00(\d+)\x00")
# a chunk that ends inside a sequence (or on a CR that may be half of CRLF) holds that end back
_INCOMPLETE = re.compile(
    r"(?:\x1b(?:\[[0-?]*[ -/]*|[\]P^_X][^\x07\x1b\x9c\n]*|[ -/]*)|\x9b[0-?]*[ -/]*"
    r"|[\x90\x98\x9d\x9e\x9f][^\x07\x1b\x9c\n]*|\r)\Z")
MAX_HELD_CHARS = 4096


def neutralize(text: str, keep_sgr: bool = False) -> str:
    """Untrusted text made inert for a terminal. Carriage returns become newlines only when alone
    (`\\r\\n` → `\\n`; a bare `\\r`, used to redraw progress bars, is dropped)."""
    if not _HAS_CONTROL.search(text):
        return text
    if keep_sgr and not _HAS_CONTROL.search(_SGR.sub("", text)):
        return text  # colours and nothing else (the usual coloured output): already inert
    text = _SURROGATE.sub("\ufffd", text.replace("\r\n", "\n"))
    if keep_sgr:
        kept: list[str] = []

        def stash(match: re.Match[str]) -> str:
            kept.append(match.group(0))
            return f"\x00{len(kept) - 1}\x00"

        text = _SGR.sub(stash, text.replace("\x00", ""))
        text = _SEQUENCES.sub("", text)
        text = _CONTROLS_BUT_NUL.sub("", text)
        return _PLACEHOLDER.sub(lambda m: kept[int(m.group(1))], text)
    text = _SEQUENCES.sub("", text)
    return _CONTROLS.sub("", text)


def _picture(match: re.Match[str]) -> str:
    code = ord(match.group(0))
    if code < 0x20:
        return chr(0x2400 + code)  # ␛ ␀ ␇ … (Unicode control pictures)
    if code == 0x7F:
        return "\u2421"
    return f"<U+{code:04X}>"


def reveal_controls(text: str) -> str:
    """Every control character (but tab and newline) shown as a visible symbol, so what a user
    approves hides nothing; `\\r\\n` stays a line break."""
    if not _HAS_CONTROL.search(text):
        return text
    return _CONTROLS.sub(_picture, _SURROGATE.sub("\ufffd", text.replace("\r\n", "\n")))


class StreamNeutralizer:
    """`neutralize` for text that arrives in chunks: a sequence cut between two chunks is held
    back until its end arrives, so neither half leaks through as visible garbage."""

    def __init__(self, keep_sgr: bool = True) -> None:
        self.keep_sgr = keep_sgr
        self._held = ""

    def feed(self, chunk: str) -> str:
        text = self._held + chunk if self._held else chunk
        self._held = ""
        match = _INCOMPLETE.search(text, max(0, len(text) - MAX_HELD_CHARS))
        if match is not None:
            self._held = text[match.start():]
            text = text[: match.start()]
        return neutralize(text, self.keep_sgr)

    def finish(self) -> str:
        held, self._held = self._held, ""
        return neutralize(held, self.keep_sgr)


def neutralize_display(display: Any, reveal: bool = False) -> Any:
    """A copy of a display model (any kind) with every string in it made inert: SGR styles are
    kept in bash output, nothing else is; with `reveal`, controls are shown instead of dropped.
    Returns the same object when there was nothing to change."""
    if display is None:
        return None
    if reveal:
        return _walk(display, reveal_controls)
    keep_sgr = getattr(display, "kind", None) == "bash_output"
    return _walk(display, lambda text: neutralize(text, keep_sgr))


def _walk(value: Any, clean: Any) -> Any:
    if isinstance(value, str):
        return clean(value)
    if isinstance(value, BaseModel):
        updates = {}
        for name in type(value).model_fields:
            old = getattr(value, name)
            new = _walk(old, clean)
            if new is not old:
                updates[name] = new
        return value.model_copy(update=updates) if updates else value
    if isinstance(value, list | tuple):
        items = [_walk(item, clean) for item in value]
        if all(new is old for new, old in zip(items, value, strict=True)):
            return value
        return type(value)(items)
    if isinstance(value, dict):
        pairs = [(_walk(k, clean), _walk(v, clean)) for k, v in value.items()]
        if all(nk is k and nv is v for (nk, nv), (k, v) in zip(pairs, value.items(), strict=True)):
            return value
        return dict(pairs)
    return value
