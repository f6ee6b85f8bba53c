"""The ArtifactStore: full texts of large outputs, persisted per session, never lost.

`<home>/sessions/<session>/artifacts/<call id>-<suffix>.txt`, addressed as
`vigil-artifact://<session>/<artifact id>`. Every artifact is written to a temp file in the same
directory, fsynced, then renamed into place, so a reader never sees half an artifact; an index
(`index.jsonl`) lists them with call id, tool, size, line count, time and encoding.

A tool that produces output as it runs (Bash) feeds an `ArtifactWriter` chunk by chunk, so output
of any size never sits in memory; `open_writer(..., visible_while_writing=True)` writes straight to
the final name so the artifact browser can follow a file that is still growing.
"""

from __future__ import annotations

import json
import os
import secrets
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tui_app.runtime.events import ArtifactRef

URI_SCHEME = "vigil-artifact://"


def artifact_uri(session_id: str, artifact_id: str) -> str:
    return f"{URI_SCHEME}{session_id}/{artifact_id}"


def parse_artifact_uri(uri: str) -> tuple[str, str] | None:
    if not uri.startswith(URI_SCHEME):
        return None
    rest = uri[len(URI_SCHEME):]
    session_id, _, artifact_id = rest.partition("/")
    if not session_id or not artifact_id or "/" in artifact_id:
        return None
    return session_id, artifact_id


def _safe(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in text)[:64] or "call"


@dataclass(frozen=True)
class ArtifactInfo:
    """One line of the index."""

    artifact_id: str
    call_id: str
    tool: str
    bytes: int
    lines: int | None
    created: float
    encoding: str = "utf-8"
    path: str = ""

    def ref(self, session_id: str) -> ArtifactRef:
        return ArtifactRef(artifact_id=self.artifact_id, uri=artifact_uri(session_id, self.artifact_id),
                           path=self.path, bytes=self.bytes, lines=self.lines)


class ArtifactWriter:
    """Streams one artifact to disk. `write` takes bytes or text; `close` publishes it."""

    def __init__(self, store: ArtifactStore, call_id: str, tool: str, visible_while_writing: bool) -> None:
        self.store = store
        self.call_id = call_id
        self.tool = tool
        self.artifact_id = f"{_safe(call_id)}-{secrets.token_hex(4)}"
        self.path = store.directory / f"{self.artifact_id}.txt"
        self._write_path = self.path if visible_while_writing else store.directory / f".{self.artifact_id}.tmp"
        store.directory.mkdir(parents=True, exist_ok=True)
        self._file = open(self._write_path, "wb")  # noqa: SIM115 - closed in close()/abort()
        self.bytes = 0
        self.newlines = 0
        self._last = b""
        self.closed = False

    @property
    def uri(self) -> str:
        return artifact_uri(self.store.session_id, self.artifact_id)

    def write(self, chunk: bytes | str) -> None:
        data = chunk.encode("utf-8", errors="surrogateescape") if isinstance(chunk, str) else chunk
        if not data:
            return
        self._file.write(data)
        self.bytes += len(data)
        self.newlines += data.count(b"\n")
        self._last = data[-1:]

    def flush(self) -> None:
        self._file.flush()

    def close(self) -> ArtifactRef:
        if self.closed:
            raise ValueError("artifact already closed")
        self._file.flush()
        os.fsync(self._file.fileno())
        self._file.close()
        if self._write_path != self.path:
            os.replace(self._write_path, self.path)
        self.closed = True
        lines = self.newlines + (1 if self.bytes and self._last != b"\n" else 0)
        info = ArtifactInfo(self.artifact_id, self.call_id, self.tool, self.bytes, lines, time.time(),
                            path=str(self.path))
        self.store._index(info)
        return info.ref(self.store.session_id)

    def abort(self) -> None:
        """Drop a temp artifact that will never be published (a visible one is kept: it has data)."""
        if self.closed:
            return
        self.closed = True
        try:
            self._file.close()
        finally:
            if self._write_path != self.path:
                self._write_path.unlink(missing_ok=True)


class ArtifactStore:
    def __init__(self, session_id: str, directory: str | Path) -> None:
        self.session_id = session_id
        self.directory = Path(directory)
        self._lock = threading.Lock()

    @property
    def index_path(self) -> Path:
        return self.directory / "index.jsonl"

    def open_writer(self, call_id: str, tool: str, visible_while_writing: bool = False) -> ArtifactWriter:
        return ArtifactWriter(self, call_id, tool, visible_while_writing)

    def persist_text(self, call_id: str, tool: str, text: str) -> ArtifactRef:
        writer = self.open_writer(call_id, tool)
        try:
            writer.write(text)
            return writer.close()
        except BaseException:
            writer.abort()
            raise

    def _index(self, info: ArtifactInfo) -> None:
        line = json.dumps(info.__dict__, ensure_ascii=False) + "\n"
        with self._lock, open(self.index_path, "a", encoding="utf-8") as handle:
            handle.write(line)

    def list(self) -> list[ArtifactInfo]:
        try:
            text = self.index_path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return []
        out = []
        for line in text.splitlines():
            try:
                data: dict[str, Any] = json.loads(line)
                out.append(ArtifactInfo(**data))
            except (ValueError, TypeError):
                continue  # a torn index line loses an index entry, never the artifact itself
        return out

    def resolve(self, reference: str) -> Path | None:
        """The file of an artifact of *this* session, by URI, id or path; None for anything else."""
        parsed = parse_artifact_uri(reference)
        if parsed is not None:
            session_id, artifact_id = parsed
            if session_id != self.session_id:
                return None
            candidate = self.directory / f"{artifact_id}.txt"
        elif "/" not in reference and reference.endswith(".txt") is False and reference:
            candidate = self.directory / f"{reference}.txt"
        else:
            candidate = Path(reference).expanduser()
        try:
            resolved = candidate.resolve()
        except OSError:
            return None
        if resolved.parent != self.directory.resolve() or not resolved.is_file():
            return None
        return resolved
