"""The session log's line format: one event per line, every fact stored once.

A line is a JSON object whose first key is `type` ("compact lines"). Next to the event's own JSON
(what the log held before, and what a reader still accepts: such a line starts with `{"seq":`):

* `seq` is left out when it is the previous line's plus one;
* `session_id` and `turn_id` are left out when they are the previous line's;
* the first line of a writer carries `ts`; the others carry `dt`, the milliseconds since the
  previous line's time, left out when it is 0 (a gap of a day or more is written as `ts` again);
* a top-level field equal to its default is left out (the reader's model fills it in);
* in a payload field (a call's input, its result, a display …) a value that an earlier line of
  the same writer already holds — a string of 32 characters or more, or a list or object of 64
  bytes or more of JSON — is written as a reference, `"\\u0000<seq>:<path>:<crc>"`: the line, the
  dotted path of the value in it, and a checksum of the value. So a Read's output is stored once
  (not again as the screen's text), a Write's content once (not again in the started call, the
  approval preview and the diff card), and a batch's group list once. A string that really starts
  with NUL gets a second NUL in front.

A writer starts afresh (absolute values, no references) and again after a failed write, so a line
never leans on a line that may be torn or missing. A reference the reader cannot resolve, or
whose checksum does not match, makes its line unreadable (reported like any bad line): the reader
never guesses.
"""

from __future__ import annotations

import re
import zlib
from collections import OrderedDict
from typing import Any

import pydantic_core
from pydantic import BaseModel

from tui_app.runtime.events import event_class

#: fields whose values may be written as references (and are walked for them)
PAYLOAD_FIELDS = frozenset({
    "input", "target", "model_content", "display", "preview", "preview_display", "flags", "groups",
    "text", "message", "todos", "raw", "questions", "answers",
})
#: fields that are remembered for later lines but always written whole (single-line readers, such
#: as the session list, read them without the lines before)
REGISTER_ONLY_FIELDS = frozenset({"prompt"})
MIN_STRING = 32
MIN_JSON = 64
#: containers this deep or deeper are not referenced whole (their strings still are)
MAX_CONTAINER_DEPTH = 2
#: strings below this depth are neither referenced nor escaped, by the writer and the reader alike
MAX_DEPTH = 64
#: a writer forgets the oldest values past this many characters
MAX_REMEMBERED = 32 << 20
#: a day of silence, in milliseconds: past it a line carries `ts` again
MAX_DT_MS = 86_400_000
_SAFE_KEY = re.compile(r"[A-Za-z0-9_]+")
_NUL = "\x00"
_HEADER = ("type", "seq", "session_id", "ts", "turn_id")
_COMPACT_PREFIX = b'{"type":'


def _crc(value: str | bytes) -> str:
    data = value if isinstance(value, bytes) else value.encode("utf-8", "surrogatepass")
    return f"{zlib.crc32(data) & 0xFFFF:04x}"


class _Plan:
    """Per event class: how its line is made."""

    __slots__ = ("defaults", "payload", "register_only", "serializer", "simple", "type_prefix")

    def __init__(self, cls: type[BaseModel]) -> None:
        fields = [n for n in cls.model_fields if n not in _HEADER]
        self.serializer = cls.__pydantic_serializer__
        self.type_prefix = b'{"type":' + pydantic_core.to_json(cls.model_fields["type"].default)
        #: written by pydantic in one go, defaults left out (none of them holds a discriminated union)
        self.simple = {n for n in fields if n not in PAYLOAD_FIELDS}
        #: written one by one, in field order, so the reader resolves them in the order written
        self.payload = tuple(n for n in fields if n in PAYLOAD_FIELDS)
        self.defaults = {n: cls.model_fields[n].get_default(call_default_factory=True)
                         for n in self.payload if not cls.model_fields[n].is_required()}
        self.register_only = tuple(n for n in fields if n in REGISTER_ONLY_FIELDS)


_PLANS: dict[type, _Plan] = {}


def _plan(cls: type[BaseModel]) -> _Plan:
    plan = _PLANS.get(cls)
    if plan is None:
        plan = _PLANS[cls] = _Plan(cls)
    return plan


_to_json = pydantic_core.to_json


class LogEncoder:
    """Turns events into compact lines. One per writer; `reset()` after a write that failed."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self._seq: int | None = None
        self._session: str | None = None
        self._turn: Any = _UNSET
        self._ts: float | None = None
        #: a long string, or the JSON bytes of a list or object → (where it was written, checksum)
        self._seen: OrderedDict[str | bytes, tuple[str, str]] = OrderedDict()
        self._seen_chars = 0
        #: id of a frozen model → (the model, the reference written for it)
        self._frozen: dict[int, tuple[Any, bytes]] = {}

    def encode(self, event: Any) -> bytes:
        plan = _plan(type(event))
        data = event.__dict__
        parts = [plan.type_prefix]
        seq = data["seq"]
        if self._seq is None or seq != self._seq + 1:
            parts.append(b',"seq":%d' % seq)
        self._seq = seq
        session = data["session_id"]
        if session != self._session:
            parts.append(b',"session_id":' + _to_json(session))
            self._session = session
        ts = data["ts"]
        dt = None if self._ts is None else round((ts - self._ts) * 1000)
        if dt is None or not 0 <= dt < MAX_DT_MS:
            parts.append(b',"ts":' + _to_json(ts))
            self._ts = ts
        else:
            if dt:
                parts.append(b',"dt":%d' % dt)
                self._ts = self._ts + dt / 1000  # exactly what the reader will compute
            # and the live event says the same: a screen and its replay agree to the millisecond
            # (a 1.4 ms call read back as 0.9 ms showed "1ms" live and "0ms" replayed)
            data["ts"] = self._ts
        turn = data["turn_id"]
        if turn != self._turn:
            parts.append(b',"turn_id":' + _to_json(turn))
            self._turn = turn
        if plan.simple:
            body = plan.serializer.to_json(event, include=plan.simple, exclude_defaults=True)
            if len(body) > 2:
                parts.append(b"," + body[1:-1])
        for name in plan.register_only:
            value = data[name]
            if isinstance(value, str) and len(value) >= MIN_STRING:
                self._remember(value, f"{seq}:{name}")
        defaults = plan.defaults
        for name in plan.payload:
            value = data[name]
            if name in defaults and value == defaults[name]:
                continue
            parts.append(b',"%s":' % name.encode() + self._field(value, f"{seq}:{name}"))
        parts.append(b"}\n")
        return b"".join(parts)

    def _field(self, value: Any, path: str) -> bytes:
        """One payload field as JSON. Most are short and written as they are; only a long one is
        looked up, and walked for what it holds only when it is new."""
        if isinstance(value, str):
            if len(value) < MIN_STRING and not value.startswith(_NUL):
                return _to_json(value)
            return _to_json(self._payload(value, path, 1))
        if isinstance(value, BaseModel) and value.model_config.get("frozen"):
            # the same frozen object again (a tool's flags on every call): the same reference
            known = self._frozen.get(id(value))
            if known is not None and known[0] is value:
                return known[1]
            written = self._container(value, path)
            if written.startswith(b'"'):
                if len(self._frozen) > 256:
                    self._frozen.clear()
                self._frozen[id(value)] = (value, written)
            return written
        return self._container(value, path)

    def _container(self, value: Any, path: str) -> bytes:
        text = _to_json(value)
        if len(text) < MIN_STRING and b"\\u0000" not in text:
            return text  # nothing in it is long enough to refer to, nor starts with NUL
        if len(text) >= MIN_JSON:
            found = self._reference(text, text)
            if found is not None:
                return _to_json(found)
            self._remember(text, path)
        plain = value if isinstance(value, dict | list) else pydantic_core.to_jsonable_python(value)
        return _to_json(self._payload(plain, path, 1, whole_done=True))

    def _payload(self, value: Any, path: str, depth: int, whole_done: bool = False) -> Any:
        """The value as written: references for what was written before, NUL-escaped strings.
        Values are remembered as they are met, so a later field of the same line may refer to an
        earlier one (the reader resolves fields in the order they are written)."""
        if isinstance(value, str):
            if path and len(value) >= MIN_STRING:
                found = self._reference(value, value)
                if found is not None:
                    return found
                self._remember(value, path)
            return _NUL + value if value.startswith(_NUL) else value
        if depth > MAX_DEPTH or not isinstance(value, dict | list):
            return value
        if path and depth <= MAX_CONTAINER_DEPTH and value and not whole_done:
            text = _to_json(value)
            if len(text) >= MIN_JSON:
                found = self._reference(text, text)
                if found is not None:
                    return found
                self._remember(text, path)
        if isinstance(value, dict):
            return {k: self._payload(v, f"{path}.{k}" if path and _SAFE_KEY.fullmatch(k) else "", depth + 1)
                    for k, v in value.items()}
        return [self._payload(v, f"{path}.{i}" if path else "", depth + 1) for i, v in enumerate(value)]

    def _reference(self, key: str | bytes, text: str | bytes) -> str | None:
        found = self._seen.get(key)
        if found is None:
            return None
        ref, crc = found
        if not crc:
            crc = _crc(text)
            self._seen[key] = (ref, crc)
        return f"{_NUL}{ref}:{crc}"

    def _remember(self, key: str | bytes, ref: str) -> None:
        if key in self._seen:
            return
        self._seen[key] = (ref, "")  # the checksum is computed on first use
        self._seen_chars += len(key)
        while self._seen_chars > MAX_REMEMBERED and self._seen:
            old, _ = self._seen.popitem(last=False)
            self._seen_chars -= len(old)


class _Unset:
    pass


_UNSET = _Unset()


class LogDecoder:
    """Reads lines of either format, in file order. A line it cannot read raises ValueError (or a
    pydantic ValidationError); the next lines still read."""

    def __init__(self) -> None:
        self._seq = 0
        self._session = ""
        self._turn: str | None = None
        self._ts = 0.0
        #: the lines that references may point at (payload-bearing events), as resolved JSON
        self._lines: dict[int, dict[str, Any]] = {}

    def decode(self, line: bytes | str) -> Any:
        data = line.encode("utf-8") if isinstance(line, str) else line
        raw = pydantic_core.from_json(data)
        if not isinstance(raw, dict):
            raise ValueError("a log line must be a JSON object")
        if data.lstrip().startswith(_COMPACT_PREFIX):
            self._fill_header(raw)
            if b"\\u0000" in data:
                self._lines[raw["seq"]] = raw  # a field may refer to an earlier field of its own line
                self._resolve(raw)
        else:  # the event's own JSON (the format before compact lines): every field is there
            self._seq = raw.get("seq", self._seq) if isinstance(raw.get("seq"), int) else self._seq
            self._session = raw.get("session_id", self._session)
            self._turn = raw.get("turn_id", self._turn)
            ts = raw.get("ts")
            self._ts = float(ts) if isinstance(ts, int | float) else self._ts
        event = event_class(raw.get("type")).model_validate(raw)
        plan = _plan(type(event))
        if plan.payload or plan.register_only:
            self._lines[event.seq] = raw
        return event

    def _fill_header(self, raw: dict[str, Any]) -> None:
        seq = raw.get("seq")
        self._seq = seq if isinstance(seq, int) else self._seq + 1
        raw["seq"] = self._seq
        if "session_id" in raw:
            self._session = raw["session_id"]
        else:
            raw["session_id"] = self._session
        if "turn_id" in raw:
            self._turn = raw["turn_id"]
        else:
            raw["turn_id"] = self._turn
        if "ts" in raw:
            ts = raw["ts"]
            if not isinstance(ts, int | float):
                raise ValueError("ts is not a number")
            self._ts = float(ts)
        else:
            dt = raw.pop("dt", 0)
            if not isinstance(dt, int):
                raise ValueError("dt is not a whole number")
            self._ts = self._ts + dt / 1000
            raw["ts"] = self._ts

    def _resolve(self, raw: dict[str, Any]) -> None:
        # in place and in the order written, so a reference to an earlier field of this line
        # finds it resolved
        for name in raw:
            if name in PAYLOAD_FIELDS:
                raw[name] = self._value(raw[name], 1)

    def _value(self, value: Any, depth: int) -> Any:
        if isinstance(value, str):
            if not value.startswith(_NUL):
                return value
            if value.startswith(_NUL * 2):
                return value[1:]
            return self._follow(value[1:])
        if depth > MAX_DEPTH:
            return value
        if isinstance(value, dict):
            for key in value:
                value[key] = self._value(value[key], depth + 1)
        elif isinstance(value, list):
            for index, item in enumerate(value):
                value[index] = self._value(item, depth + 1)
        return value

    def _follow(self, reference: str) -> Any:
        try:
            where, path, crc = reference.split(":")
            target: Any = self._lines[int(where)]
            for part in path.split("."):
                target = target[int(part)] if isinstance(target, list) else target[part]
        except (ValueError, KeyError, IndexError, TypeError):
            raise ValueError(f"a reference to a value the log does not have ({reference[:80]!r})") from None
        if _crc(target if isinstance(target, str) else _to_json(target)) != crc:
            raise ValueError(f"a reference whose value does not match ({reference[:80]!r})")
        return target
