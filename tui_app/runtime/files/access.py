"""Where the file tools read and write text when it is not simply the local disk.

An editor driving Vigil over ACP may offer its own file system (`fs/read_text_file`,
`fs/write_text_file`): reads then see the editor's buffers (unsaved changes included) and writes
go through the editor, which keeps its buffers, undo history and disk in step. A session that has
such a client puts a `FileAccess` in its services under `file_access`; the file tools ask it first
and fall back to the disk when it declines (no such capability, not a text file, a failed request).

Calls are blocking: the tools make them from worker threads, never from the event loop.
"""

from __future__ import annotations

from typing import Protocol


class FileAccess(Protocol):
    def read(self, path: str) -> bytes | None:
        """The file's bytes as the client has them; None: read it from the disk instead."""
        ...

    def write(self, path: str, data: bytes) -> bool:
        """Write through the client; False: write it to the disk instead."""
        ...
