"""Real builds keep working in the small world: a `pip install` of a local wheel (no network:
`--no-index`, a wheel directory in the project) and an `npm test` of a tiny package, run through
the session's real pipeline inside bubblewrap, with a home full of credentials the sandbox hides."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import sys
import zipfile
from pathlib import Path

import pytest

from tests.needs import need_program
from tests.sec_kit import attack_settings, attempt, canary_root, isolate, make_canary, open_session

__all__ = ["canary_root"]


@pytest.fixture(autouse=True)
def _needs_bubblewrap():
    need_program("bwrap")


def record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def write_wheel(directory: Path, value: int) -> Path:
    """A pure-Python wheel, made by hand (no build tool needed): `vigiltiny.VALUE == value`."""
    directory.mkdir(parents=True)
    files = {
        "vigiltiny/__init__.py": f"VALUE = {value}\n".encode(),
        "vigiltiny-0.1.dist-info/METADATA": b"Metadata-Version: 2.1\nName: vigiltiny\nVersion: 0.1\n",
        "vigiltiny-0.1.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: true\n"
        b"Tag: py3-none-any\n",
    }
    record = [record_line(name, data) for name, data in files.items()] + ["vigiltiny-0.1.dist-info/RECORD,,"]
    path = directory / "vigiltiny-0.1-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as wheel:
        for name, data in files.items():
            wheel.writestr(name, data)
        wheel.writestr("vigiltiny-0.1.dist-info/RECORD", "\n".join(record) + "\n")
    return path


@pytest.fixture
def builds(canary_root, monkeypatch):
    canary = make_canary(canary_root, attack_settings(enabled=True))
    isolate(monkeypatch, canary)
    for rel in (".ssh/id_rsa", ".npmrc", ".pypirc", ".config/pip/pip.conf"):
        (canary.home / rel).parent.mkdir(parents=True, exist_ok=True)
        (canary.home / rel).write_text(canary.outside_secret + "\n")
    return canary


async def run(canary, command: str, timeout_ms: int = 120_000):
    session = await open_session(canary)
    try:
        return await attempt(session, canary, "Bash", {"command": command, "timeout": timeout_ms})
    finally:
        await session.close()


async def test_pip_installs_a_local_package_in_the_sandbox(builds):
    write_wheel(builds.proj / "wheels", 4242)
    # the interpreter itself, not the venv's link to it: a checkout under /tmp (a CI's) holds the
    # venv in the one place the sandbox replaces with a private /tmp
    python = os.path.realpath(sys.executable)
    found = await run(
        builds,
        f"{python} -m pip install --no-index --find-links wheels --target deps "
        f"--disable-pip-version-check vigiltiny && "
        f"PYTHONPATH=deps {python} -c 'import vigiltiny; print(\"value\", vigiltiny.VALUE)'",
    )
    assert found.ran and found.sandboxed, found.describe()
    assert "value 4242" in found.text(), found.describe()
    assert (builds.proj / "deps" / "vigiltiny" / "__init__.py").is_file()
    assert not found.leaked, found.describe()


async def test_npm_test_runs_a_tiny_package_in_the_sandbox(builds):
    need_program("npm")
    package = builds.proj / "js"
    package.mkdir()
    (package / "package.json").write_text(
        json.dumps({"name": "tiny", "version": "1.0.0", "scripts": {"test": "node test.js"}})
    )
    (package / "test.js").write_text(
        "const assert = require('assert');\n"
        "assert.strictEqual(require('./sum')(2, 3), 5);\n"
        "require('fs').writeFileSync('result.txt', 'passed');\n"
        "console.log('all tests passed');\n"
    )
    (package / "sum.js").write_text("module.exports = (a, b) => a + b;\n")
    found = await run(builds, "cd js && npm test")
    assert found.ran and found.sandboxed, found.describe()
    assert "all tests passed" in found.text(), found.describe()
    assert (package / "result.txt").read_text() == "passed"
    assert not found.leaked, found.describe()
