"""Where the ACP SDK's own log lines go: a file in the session's directory, never the terminal.

The SDK logs with the module-level `logging.exception(...)` (the root logger) when an agent writes
a line that is not JSON, or a request handler fails. Python would print that to stderr, over the
TUI. A filter on the root logger takes the records that come from the SDK's files and writes them
to `acp-sdk.log`; every other record goes on as before.
"""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path

import acp

SDK_DIR = os.path.dirname(os.path.abspath(acp.__file__)) + os.sep


class SdkLogRoute(logging.Filter):
    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path
        self.formatter = logging.Formatter("%(asctime)s %(levelname)s %(message)s")
        self._lock = threading.Lock()

    def filter(self, record: logging.LogRecord) -> bool:
        if not record.pathname.startswith(SDK_DIR):
            return True
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self._lock, open(self.path, "a", encoding="utf-8") as handle:
                handle.write(self.formatter.format(record) + "\n")
        except OSError:
            pass  # a log that cannot be written is no reason to print over the screen
        return False


def route_sdk_logs(path: Path) -> SdkLogRoute:
    route = SdkLogRoute(path)
    logging.getLogger().addFilter(route)
    return route


def stop_routing(route: SdkLogRoute | None) -> None:
    if route is not None:
        logging.getLogger().removeFilter(route)
