"""Read-before-write: what the model has read of each file, and whether that still holds.

A whole-file Read records a baseline (sha256 of the bytes, size, mtime). Edit, and Write over an
existing file, go ahead only when the model has read the whole file and the bytes on disk still
hash to what it read; they check once before any hook or dialog and again on the very bytes
they are about to change, inside the write. A successful write records a new baseline, so a
follow-up Edit needs no new Read.

A watcher (watchfiles, on its own thread, started with the first baseline) marks a baseline
stale the moment its file changes outside Vigil and emits `FileChangedExternally`. Only files
with a baseline are judged, and a change is one of content: an editor that saves the same bytes
or a `touch` is not a change.

Writers to one file (by any name: keys are resolved through symlinks) are serialised by a lock
that is released only when the write has really finished, even when the call that started it
was cancelled: a cancelled write that lands late must not overwrite a newer one.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import threading
import unicodedata
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from typing import Any, Literal, TypeVar

from tui_app.runtime.contract import ToolFailure
from tui_app.runtime.events import FileChangedExternally, Warning
from tui_app.runtime.files.realpath import kernel_absolute, real_path

T = TypeVar("T")
Staleness = Literal["modified", "deleted"]

WATCH_DEBOUNCE_MS = 400
WATCH_STEP_MS = 50
#: the watcher thread wakes this often even when nothing changes (to notice a stop promptly)
WATCH_TICK_MS = 300
_MAX_PREVIEWS = 256


def absolute_path(path: str, cwd: str) -> str:
    """The absolute, normalised form of a path the model gave (NFC: a name typed on macOS,
    often NFD, compares equal to the same name typed elsewhere); a `..` after a symlink is the
    target's parent, as for the kernel."""
    expanded = os.path.expanduser(path)
    if not os.path.isabs(expanded):
        expanded = os.path.join(cwd, expanded)
    return unicodedata.normalize("NFC", kernel_absolute(expanded))


def file_key(path: str) -> str:
    """One key per file, whatever name reached it."""
    return unicodedata.normalize("NFC", real_path(path))


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class Baseline:
    path: str
    sha256: str
    #: bytes read (the whole file's size when `full`)
    size: int
    mtime_ns: int
    full: bool
    source: Literal["read", "write"] = "read"
    stale: Staleness | None = None


def not_read(path: str) -> ToolFailure:
    return ToolFailure(f"File has not been read yet: {path}. Read it first before writing to it.",
                       code="precondition_failed")


def read_in_part(path: str) -> ToolFailure:
    return ToolFailure(f"File has only been read in part (offset/limit): {path}. Read the whole file "
                       "first before writing to it.", code="precondition_failed")


def stale(path: str, how: Staleness) -> ToolFailure:
    if how == "deleted":
        text = f"File was deleted since you read it: {path}. Check with the user or read it again before writing it."
    else:
        text = (f"File has changed since you read it (edited by the user, a formatter or another process): "
                f"{path}. Read it again before writing to it.")
    return ToolFailure(text, code="stale_file_baseline")


class FileState:
    """The session service "file_state". `emit` may be bound after construction (the session
    that owns the emit is built after its services)."""

    def __init__(self, root: str | None = None, *, emit: Callable[[Any], Any] | None = None,
                 watch: bool = True) -> None:
        self.root = file_key(root) if root else None
        self._emit = emit
        self._watch = watch and root is not None
        self._guard = threading.Lock()
        self._baselines: dict[str, Baseline] = {}
        self._writing: dict[str, int] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._previews: OrderedDict[str, tuple[str, str]] = OrderedDict()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._closed = False
        self.watch_error: str | None = None

    def bind(self, emit: Callable[[Any], Any]) -> None:
        self._emit = emit

    # ---- baselines ----------------------------------------------------------------------------

    def record_read(self, *, path: str, data_sha256: str, size: int, mtime_ns: int, full: bool) -> None:
        """Called by Read. A partial read never replaces what a whole read established for the
        same bytes, and never counts as one."""
        key = file_key(path)
        with self._guard:
            previous = self._baselines.get(key)
            if (not full and previous is not None and previous.full and previous.stale is None
                    and previous.mtime_ns == mtime_ns):
                return
            self._baselines[key] = Baseline(key, data_sha256, size, mtime_ns, full)
        self._start_watching()

    def record_write(self, path: str, data: bytes, mtime_ns: int) -> None:
        """What Vigil itself just wrote: the model knows these bytes. Thread-safe."""
        key = file_key(path)
        with self._guard:
            self._baselines[key] = Baseline(key, sha256_hex(data), len(data), mtime_ns, True, "write")

    def baseline(self, path: str) -> Baseline | None:
        with self._guard:
            return self._baselines.get(file_key(path))

    def check(self, path: str, current: bytes) -> None:
        """The file exists with bytes `current`: may the model write over it? Raises ToolFailure
        with `precondition_failed` (not read, or read in part) or `stale_file_baseline`."""
        base = self.baseline(path)
        if base is None:
            raise not_read(path)
        if not base.full:
            raise read_in_part(path)
        if base.stale is not None:
            raise stale(path, base.stale)
        if sha256_hex(current) != base.sha256:
            raise stale(path, "modified")

    # ---- the diff the user approved ------------------------------------------------------------

    def remember_preview(self, call_id: str, path: str, old_sha256: str) -> None:
        """The bytes an approval diff was computed from; the write refuses any others."""
        with self._guard:
            self._previews[call_id] = (file_key(path), old_sha256)
            while len(self._previews) > _MAX_PREVIEWS:
                self._previews.popitem(last=False)

    def take_preview(self, call_id: str) -> tuple[str, str] | None:
        with self._guard:
            return self._previews.pop(call_id, None)

    # ---- writers --------------------------------------------------------------------------------

    def _lock_of(self, key: str) -> asyncio.Lock:
        lock = self._locks.get(key)
        if lock is None:
            lock = self._locks[key] = asyncio.Lock()
        return lock

    @asynccontextmanager
    async def locked(self, path: str) -> AsyncIterator[None]:
        """Hold a file's mutation lock (for writers that do their own I/O on the loop)."""
        async with self._lock_of(file_key(path)):
            yield

    async def mutate(self, path: str, work: Callable[[], T]) -> T:
        """Run `work` (blocking file I/O) on a thread while holding the file's mutation lock.
        The lock goes when `work` returns, not when the awaiting call is cancelled."""
        key = file_key(path)
        lock = self._lock_of(key)
        await lock.acquire()
        self._start_watching()
        with self._guard:
            self._writing[key] = self._writing.get(key, 0) + 1

        def finished(_: object) -> None:
            with self._guard:
                left = self._writing.pop(key, 1) - 1
                if left:
                    self._writing[key] = left
            lock.release()

        try:
            future = asyncio.get_running_loop().run_in_executor(None, work)
        except BaseException:
            finished(None)
            raise
        future.add_done_callback(finished)
        return await asyncio.shield(future)

    # ---- the watcher ----------------------------------------------------------------------------

    @property
    def watching(self) -> bool:
        return self._thread is not None and self._thread.is_alive() and self.watch_error is None

    async def wait_until_watching(self, timeout: float = 5.0) -> bool:
        """True once the watcher sees changes (it starts with the first baseline)."""
        self._start_watching()
        if self._thread is None:
            return False
        await asyncio.to_thread(self._ready.wait, timeout)
        return self.watching and self._ready.is_set()

    def _start_watching(self) -> None:
        if not self._watch or self._closed or self._thread is not None:
            return
        try:
            self._loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # no loop to report to (a synchronous caller); the next async caller starts it
        self._thread = threading.Thread(target=self._watch_files, name="vigil-file-watch", daemon=True)
        self._thread.start()

    def _watch_files(self) -> None:
        try:
            from watchfiles import watch

            if not os.path.isdir(self.root or ""):  # watchfiles skips missing paths silently
                raise FileNotFoundError("the directory does not exist")
            for changes in watch(self.root, watch_filter=self._tracked, stop_event=self._stop,  # type: ignore[arg-type]
                                 debounce=WATCH_DEBOUNCE_MS, step=WATCH_STEP_MS, rust_timeout=WATCH_TICK_MS,
                                 yield_on_timeout=True, raise_interrupt=False, ignore_permission_denied=True):
                self._ready.set()
                for _, path in changes:
                    self._judge(unicodedata.normalize("NFC", path))
        except Exception as exc:  # inotify limits, a vanished root: the pre-write check still holds
            self.watch_error = str(exc) or type(exc).__name__
            self._post(Warning(code="file_watch_failed", message=(
                f"Stopped watching {self.root} for outside changes: {self.watch_error}. Edits are still "
                "checked against what was read just before each write.")))
        finally:
            self._ready.set()

    def _tracked(self, _change: object, path: str) -> bool:
        return unicodedata.normalize("NFC", path) in self._baselines

    def _judge(self, key: str) -> None:
        """Runs on the watcher thread: is a tracked file's content still what the model saw?"""
        with self._guard:
            base = self._baselines.get(key)
            if base is None or base.stale is not None or key in self._writing:
                return  # a write of ours is settling: the writer records the new baseline
        how: Staleness = "modified"
        try:
            st = os.stat(key)
            if st.st_mtime_ns == base.mtime_ns and (st.st_size == base.size or not base.full):
                return
            if base.full and st.st_size == base.size:
                with open(key, "rb") as handle:
                    if sha256_hex(handle.read()) == base.sha256:  # touched or saved unchanged
                        self._refresh(key, base, st.st_mtime_ns)
                        return
        except FileNotFoundError:
            how = "deleted"
        except OSError:
            return
        with self._guard:
            if self._baselines.get(key) is not base or key in self._writing:
                return  # Vigil wrote it meanwhile: that write is the new baseline
            self._baselines[key] = replace(base, stale=how)
        self._post(FileChangedExternally(path=key, change=how))

    def _refresh(self, key: str, base: Baseline, mtime_ns: int) -> None:
        with self._guard:
            if self._baselines.get(key) is base:
                self._baselines[key] = replace(base, mtime_ns=mtime_ns)

    def _post(self, event: Any) -> None:
        loop = self._loop
        if loop is None or self._emit is None:
            return
        try:
            loop.call_soon_threadsafe(self._deliver, event)
        except RuntimeError:
            pass  # the loop is closed: the session is over

    def _deliver(self, event: Any) -> None:
        if self._emit is not None and not self._closed:
            self._emit(event)

    async def aclose(self) -> None:
        self._closed = True
        self._stop.set()
        thread = self._thread
        if thread is not None and thread.is_alive():
            await asyncio.to_thread(thread.join, 5.0)
