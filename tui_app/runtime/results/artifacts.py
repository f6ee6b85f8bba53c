"""The ArtifactStore: full texts of large outputs, persisted per session, never lost.

`<home>/sessions/<session>/artifacts/<call id>-<suffix>.txt`, addressed as
`vigil-artifact://<session>/<artifact id>`. Every artifact is written to a temp file in the same
directory, fsynced, then renamed into place, so a reader never sees half an artifact; an index
(`index.jsonl`) lists them with call id, tool, size, line count, time and encoding. The files are
the truth: an artifact whose index line was lost (disk full after the rename, a crash) is still
listed, from its file.

A tool that produces output as it runs (Bash) feeds an `ArtifactWriter` chunk by chunk, so output
of any size never sits in memory. A failed write (disk full, no permission) never raises out of
`write`: the writer records the error, drops its temp file and ignores later chunks, so a tool
can keep draining its process; `close()` then raises that error. `open_writer(...,
visible_while_writing=True)` writes straight to the final name so the artifact browser can follow
a file that is still growing.
"""

from __future__ import annotations

import codecs
import json
import os
import secrets
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from tui_app.runtime.events import ArtifactRef

URI_SCHEME = "vigil-artifact://"
SUFFIX = ".txt"
# Every this many bytes the kernel is asked to start writing the artifact back (and may drop it
# from the page cache): the fsync at close then waits for the last stretch only, and a 1 GB log
# does not push everything else out of memory.
WRITEBACK_BYTES = 16 * 1024 * 1024
_FADVISE = getattr(os, "posix_fadvise", None)


class ArtifactNotFound(LookupError):
    """A reference that names no artifact of this session; the message says why, for the model."""


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


def _to_bytes(chunk: str) -> bytes:
    try:
        # lone surrogates from a surrogateescape decode go back to the bytes they came from
        return chunk.encode("utf-8", errors="surrogateescape")
    except UnicodeEncodeError:
        return chunk.encode("utf-8", errors="surrogatepass")


@dataclass(frozen=True)
class ArtifactInfo:
    """One line of the index."""

    artifact_id: str
    call_id: str
    tool: str
    bytes: int
    lines: int | None
    created: float
    #: "utf-8" when every byte decoded, "binary" otherwise (readers decode with replacement)
    encoding: str = "utf-8"
    path: str = ""

    def ref(self, session_id: str) -> ArtifactRef:
        return ArtifactRef(artifact_id=self.artifact_id, uri=artifact_uri(session_id, self.artifact_id),
                           path=self.path, bytes=self.bytes, lines=self.lines)


class _Utf8Check:
    """Whether a stream of chunks is valid UTF-8, at close to memchr speed for ASCII text."""

    def __init__(self) -> None:
        self.valid = True
        self._decoder = codecs.getincrementaldecoder("utf-8")("strict")
        self._pending = False

    def feed(self, data: bytes, final: bool = False) -> None:
        if not self.valid or (data.isascii() and not self._pending and not final):
            return
        try:
            self._decoder.decode(data, final)
        except UnicodeDecodeError:
            self.valid = False
            return
        self._pending = bool(self._decoder.getstate()[0])


def _fsync_directory(directory: Path) -> None:
    """Make a rename durable: the new name lives in the directory's own data."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some file systems cannot fsync a directory; the rename is still atomic
    finally:
        os.close(fd)


class ArtifactWriter:
    """Streams one artifact to disk. `write` takes bytes or text; `close` publishes it."""

    def __init__(self, store: ArtifactStore, call_id: str, tool: str, visible_while_writing: bool) -> None:
        self.store = store
        self.call_id = call_id
        self.tool = tool
        self.artifact_id = f"{_safe(call_id)}-{secrets.token_hex(4)}"
        self.path = store.directory / f"{self.artifact_id}{SUFFIX}"
        self._write_path = self.path if visible_while_writing else store.directory / f".{self.artifact_id}.tmp"
        #: a file others read while it is written (a background task's output, which the model is
        #: told to read) holds every chunk as it comes, not what Python's buffer let through
        self._flush_each = visible_while_writing
        self.bytes = 0
        self.newlines = 0
        self._written_back = 0
        self._last = b""
        self._utf8 = _Utf8Check()
        self.closed = False
        #: the OSError that stopped this writer (disk full, permission); later chunks are dropped
        self.error: OSError | None = None
        self._file: Any = None
        try:
            store.directory.mkdir(parents=True, exist_ok=True)
            self._file = open(self._write_path, "wb")  # noqa: SIM115 - closed in close()/abort()
        except OSError as exc:
            self._fail(exc)

    @property
    def uri(self) -> str:
        return artifact_uri(self.store.session_id, self.artifact_id)

    @property
    def failed(self) -> bool:
        return self.error is not None

    def write(self, chunk: bytes | str) -> None:
        if self.error is not None or self.closed:
            return
        data = _to_bytes(chunk) if isinstance(chunk, str) else chunk
        if not data:
            return
        try:
            self._file.write(data)
            if self._flush_each:
                self._file.flush()
        except OSError as exc:
            self._fail(exc)
            return
        self.bytes += len(data)
        # the length a deletion removes: memchr-fast, about twice bytes.count on log text
        self.newlines += len(data) - len(data.replace(b"\n", b""))
        self._last = data[-1:]
        self._utf8.feed(data)
        if self.bytes - self._written_back >= WRITEBACK_BYTES:
            self._start_writeback()

    def _start_writeback(self) -> None:
        if _FADVISE is not None:
            try:
                _FADVISE(self._file.fileno(), self._written_back, self.bytes - self._written_back,
                         os.POSIX_FADV_DONTNEED)
            except (OSError, ValueError):
                pass  # only a hint: the fsync at close still makes the artifact durable
        self._written_back = self.bytes

    def flush(self) -> None:
        if self.error is None and not self.closed:
            try:
                self._file.flush()
            except OSError as exc:
                self._fail(exc)

    def close(self) -> ArtifactRef:
        """Publish the artifact (fsync, rename, index) and return its reference. Raises the
        OSError that stopped the writer, if one did; nothing is left behind then."""
        if self.closed:
            raise ValueError("artifact already closed")
        if self.error is None:
            try:
                self._file.flush()
                os.fsync(self._file.fileno())
                self._file.close()
                if self._write_path != self.path:
                    os.replace(self._write_path, self.path)
                    _fsync_directory(self.path.parent)
            except OSError as exc:
                self._fail(exc)
        if self.error is not None:
            self.closed = True
            raise self.error
        self.closed = True
        self._utf8.feed(b"", final=True)
        lines = self.newlines + (1 if self.bytes and self._last != b"\n" else 0)
        info = ArtifactInfo(self.artifact_id, self.call_id, self.tool, self.bytes, lines, time.time(),
                            encoding="utf-8" if self._utf8.valid else "binary", path=str(self.path))
        self.store._index(info)
        return info.ref(self.store.session_id)

    def abort(self) -> None:
        """Drop a temp artifact that will never be published (a visible one is kept: it has data)."""
        if self.closed:
            return
        self.closed = True
        self._discard()

    def _fail(self, exc: OSError) -> None:
        self.error = exc
        # even a visible artifact goes: a part of an output that filled the disk holds the room
        # the session log needs, and the result says the output could not be saved
        self._discard(always=True)

    def _discard(self, always: bool = False) -> None:
        try:
            if self._file is not None:
                self._file.close()
        except OSError:
            pass  # the close of a file we are throwing away may fail the same way the write did
        finally:
            if always or self._write_path != self.path:
                try:
                    self._write_path.unlink(missing_ok=True)
                except OSError:
                    pass

    def __enter__(self) -> ArtifactWriter:
        return self

    def __exit__(self, exc_type: Any, *_: Any) -> None:
        if exc_type is not None:
            self.abort()


class ArtifactStore:
    def __init__(self, session_id: str, directory: str | Path) -> None:
        self.session_id = session_id
        self.directory = Path(directory)
        self._lock = threading.Lock()
        #: index lines that could not be written (the artifacts themselves are safe)
        self.index_errors = 0

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
        line = json.dumps(asdict(info), ensure_ascii=False) + "\n"
        try:
            with self._lock, open(self.index_path, "a", encoding="utf-8") as handle:
                handle.write(line)
        except OSError:
            # the artifact is already renamed into place: list() finds it from its file
            self.index_errors += 1

    def list(self) -> list[ArtifactInfo]:
        """Every artifact of this session, oldest first: the index, then any file it misses."""
        out: dict[str, ArtifactInfo] = {}
        try:
            text = self.index_path.read_text(encoding="utf-8")
        except OSError:
            text = ""
        for line in text.splitlines():
            try:
                data: dict[str, Any] = json.loads(line)
                info = ArtifactInfo(**data)
            except (ValueError, TypeError):
                continue  # a torn index line loses an index entry, never the artifact itself
            out[info.artifact_id] = info
        for path in self._files():
            artifact_id = path.name[: -len(SUFFIX)]
            if artifact_id not in out:
                stat = path.stat()
                out[artifact_id] = ArtifactInfo(artifact_id, "", "", stat.st_size, None, stat.st_mtime,
                                                encoding="unknown", path=str(path))
        return sorted(out.values(), key=lambda info: info.created)

    def _files(self) -> list[Path]:
        try:
            return [p for p in self.directory.iterdir()
                    if p.name.endswith(SUFFIX) and not p.name.startswith(".") and p.is_file()]
        except OSError:
            return []

    def info(self, artifact_id: str) -> ArtifactInfo | None:
        return next((i for i in self.list() if i.artifact_id == artifact_id), None)

    def locate(self, reference: str, cwd: str | None = None) -> Path:
        """The file of an artifact of *this* session, by URI, id, file name or path (a relative
        path is taken from `cwd`). Anything else raises ArtifactNotFound saying why."""
        reference = reference.strip()
        if not reference:
            raise ArtifactNotFound("No artifact given.")
        parsed = parse_artifact_uri(reference)
        if reference.startswith(URI_SCHEME) and parsed is None:
            raise ArtifactNotFound(f"Not an artifact URI: {reference} (expected {URI_SCHEME}<session>/<artifact>)")
        if parsed is not None:
            session_id, artifact_id = parsed
            if session_id != self.session_id:
                raise ArtifactNotFound(
                    f"{reference} belongs to session {session_id}; only artifacts of the current session "
                    f"({self.session_id}) can be read.")
            candidate = self.directory / f"{artifact_id.removesuffix(SUFFIX)}{SUFFIX}"
        elif "/" not in reference and os.sep not in reference and not reference.startswith("~"):
            candidate = self.directory / f"{reference.removesuffix(SUFFIX)}{SUFFIX}"
        else:
            candidate = Path(reference).expanduser()
            if not candidate.is_absolute() and cwd is not None:
                candidate = Path(cwd) / candidate
        try:
            resolved = candidate.resolve()
            home = self.directory.resolve()
        except (OSError, RuntimeError):
            raise ArtifactNotFound(f"Cannot resolve the artifact path {reference}.") from None
        if resolved.parent != home or not resolved.name.endswith(SUFFIX) or resolved.name.startswith("."):
            raise ArtifactNotFound(
                f"{reference} is not an artifact of the current session; only files in {home} can be read.")
        if not resolved.is_file():
            raise ArtifactNotFound(f"No artifact {resolved.name[: -len(SUFFIX)]} in the current session.")
        return resolved

    def resolve(self, reference: str, cwd: str | None = None) -> Path | None:
        """Like `locate`, but None for anything that is not an artifact of this session."""
        try:
            return self.locate(reference, cwd)
        except ArtifactNotFound:
            return None
