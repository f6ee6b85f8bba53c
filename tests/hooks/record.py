#!/usr/bin/env python3
"""A hook that writes down what it was given: its stdin JSON, its environment, where it runs and
in which process group; then prints the JSON given as its second argument (if any)."""
import json
import os
import sys

log_path = sys.argv[1]
payload = json.loads(sys.stdin.read())
try:
    with open("/dev/tty"):
        has_tty = True
except OSError:
    has_tty = False
record = {
    "stdin": payload, "cwd": os.getcwd(), "pid": os.getpid(), "pgid": os.getpgrp(), "sid": os.getsid(0),
    "has_tty": has_tty, "CLAUDE_PROJECT_DIR": os.environ.get("CLAUDE_PROJECT_DIR"),
    "VIGIL_PROJECT_DIR": os.environ.get("VIGIL_PROJECT_DIR"),
}
with open(log_path, "a", encoding="utf-8") as log:
    log.write(json.dumps(record) + "\n")
if len(sys.argv) > 2:
    print(sys.argv[2])
