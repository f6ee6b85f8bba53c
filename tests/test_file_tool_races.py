"""Check, then use (issue 27, class 3): a background process flips a link, or swaps a directory for
a link, in a tight loop while Read, Edit and Write run against it thousands of times through the
real pipeline and the real policy. The denied canary never reaches what the model gets, and no
write lands outside the working directories or in a protected file. Hard links to a denied file
are refused too. Real files, a real second process, no mocks."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.file_tools import file_env
from tui_app.runtime.events import ToolCallResult
from tui_app.runtime.permissions.policy import RulePolicy
from tui_app.runtime.permissions.rules import make_rule
from tui_app.tools.edit import EDIT
from tui_app.tools.write import WRITE

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="descriptor checks use /proc")

CANARY = "CANARY-7f3a1c"
#: attempts at most; a run stops earlier once the race has been caught often enough
MAX_ATTEMPTS = 4000
ENOUGH = 25

# flips `name` between what `a` and `b` say, as fast as it can, until killed:
#   file:<text>  a regular file    link:<target>  a symlink    dir:<path>  a directory renamed in
FLIPPER = r"""
import os, sys
name, a, b = sys.argv[1:4]
def put(spec, tmp):
    kind, _, value = spec.partition(":")
    if kind == "file":
        with open(tmp, "w") as f:
            f.write(value)
        os.replace(tmp, name)
    elif kind == "link":
        os.symlink(value, tmp)
        os.replace(tmp, name)
    else:  # a directory: moved in (what stood there goes to its own spare name first)
        try:
            os.rename(name, name + ".link")
        except FileNotFoundError:
            pass
        os.rename(value, name)
def take(spec):
    kind, _, value = spec.partition(":")
    if kind == "dir":
        os.rename(name, value)
        os.rename(name + ".link", name)
print("ready", flush=True)
n = 0
while True:
    n += 1
    put(a, f"{name}.tmp{n}a")
    if a.startswith("dir:"):
        take(a)
    put(b, f"{name}.tmp{n}b")
    if b.startswith("dir:"):
        take(b)
"""


class Flipper:
    def __init__(self, name: Path, a: str, b: str) -> None:
        self.proc = subprocess.Popen([sys.executable, "-c", FLIPPER, str(name), a, b], stdout=subprocess.PIPE)
        assert self.proc.stdout is not None and self.proc.stdout.readline() == b"ready\n"

    def __enter__(self) -> Flipper:
        return self

    def __exit__(self, *_: object) -> None:
        self.proc.kill()
        self.proc.wait()


@pytest.fixture
def place(tmp_path, monkeypatch):
    monkeypatch.setenv("VIGIL_HOME", str(tmp_path / "vigil-home"))
    proj, outside = tmp_path / "proj", tmp_path / "outside"
    (outside / "dir").mkdir(parents=True)
    (outside / "canary.txt").write_text(CANARY + "\n")
    (outside / "dir" / "file.txt").write_text(CANARY + "\n")
    (proj / "realdir").mkdir(parents=True)
    (proj / "realdir" / "file.txt").write_text("harmless\n")
    (proj / ".env").write_text(CANARY + "\n")
    (proj / ".claude").mkdir()
    (proj / ".claude" / "settings.json").write_text('{"permissions": {}}\n')
    return proj, outside


def env_for(proj: Path, mode: str = "default"):
    policy = RulePolicy(cwd=str(proj), home=str(proj.parent / "home"), mode=mode,  # type: ignore[arg-type]
                        rules=[make_rule("Read(.env)", "deny", "project settings", str(proj))])
    fe = file_env(proj, EDIT, WRITE, policy=policy)
    fe.env.services["path_guard"] = policy.opened_refusal
    return fe


class Tally:
    def __init__(self) -> None:
        self.read = self.caught = self.other = self.attempts = 0

    def enough(self) -> bool:
        return self.attempts >= MAX_ATTEMPTS or (self.caught >= ENOUGH and self.read >= ENOUGH)


def judge(out, tally: Tally, readable: str) -> None:
    tally.attempts += 1
    content = out.model_content
    assert CANARY not in content, content
    if isinstance(out, ToolCallResult) and readable in content:
        tally.read += 1
    elif "Refused:" in content:
        tally.caught += 1  # the decision saw one file, the open another: the second look refused it
    else:
        tally.other += 1  # denied or asked at the decision, or the name was gone for a moment


@pytest.mark.parametrize("target", ["outside", "denied"])
async def test_a_read_never_returns_what_a_flipped_link_points_at(place, target):
    proj, outside = place
    fe = env_for(proj)
    flip = proj / "flip.txt"
    flip.write_text("harmless\n")
    bad = str(outside / "canary.txt") if target == "outside" else str(proj / ".env")
    tally = Tally()
    with Flipper(flip, "file:harmless\n", f"link:{bad}"):
        while not tally.enough():
            judge(await fe.call("Read", {"file_path": str(flip)}), tally, "harmless")
    assert tally.caught > 0 and tally.read > 0, vars(tally)


async def test_a_read_through_a_swapped_directory_never_returns_the_outside_file(place):
    proj, outside = place
    fe = env_for(proj)
    swapped = proj / "d"
    swapped.symlink_to(outside / "dir")
    tally = Tally()
    with Flipper(swapped, f"dir:{proj / 'realdir'}", f"link:{outside / 'dir'}"):
        while not tally.enough():
            judge(await fe.call("Read", {"file_path": str(swapped / "file.txt")}), tally, "harmless")
    assert tally.caught > 0, vars(tally)  # a directory stands there only briefly: few plain reads


async def test_a_write_never_lands_in_the_protected_file_a_flipped_link_points_at(place):
    proj, _ = place
    settings = proj / ".claude" / "settings.json"
    before = settings.read_bytes()
    fe = env_for(proj, "acceptEdits")
    flip = proj / "notes.txt"
    # the model has read both: only the permission checks stand between it and the settings file
    assert isinstance(await fe.call("Read", {"file_path": str(settings)}), ToolCallResult)
    tally = Tally()
    with Flipper(flip, "link:.claude/settings.json", "link:plain.txt"):
        while not tally.enough():
            n = tally.attempts
            out = await fe.call("Write", {"file_path": str(flip), "content": f"written {n}\n"})
            tally.attempts += 1
            if isinstance(out, ToolCallResult):
                tally.read += 1
            elif "Refused:" in out.model_content:
                tally.caught += 1
            assert settings.read_bytes() == before, out.model_content
    assert settings.read_bytes() == before
    assert tally.caught > 0 and tally.read > 0, vars(tally)
    assert sorted(p.name for p in (proj / ".claude").iterdir()) == ["settings.json"]


async def test_an_edit_never_changes_the_protected_file_a_flipped_link_points_at(place):
    proj, _ = place
    settings = proj / ".claude" / "settings.json"
    before = settings.read_bytes()
    fe = env_for(proj, "acceptEdits")
    plain = proj / "plain.txt"
    plain.write_text('{"permissions": {}}\n')  # the same text as the settings file: the same baseline
    flip = proj / "notes.txt"
    for path in (settings, plain):
        assert isinstance(await fe.call("Read", {"file_path": str(path)}), ToolCallResult)
    tally = Tally()
    edit = {"file_path": str(flip), "old_string": '{"permissions": {}}',
            "new_string": '{"permissions": {"allow": ["Bash(*)"]}}'}
    with Flipper(flip, "link:.claude/settings.json", "link:plain.txt"):
        while not tally.enough():
            out = await fe.call("Edit", edit)
            tally.attempts += 1
            if isinstance(out, ToolCallResult):
                tally.read += 1
                plain.write_text('{"permissions": {}}\n')
                await fe.call("Read", {"file_path": str(plain)})
            elif "Refused:" in out.model_content:
                tally.caught += 1
            assert settings.read_bytes() == before, out.model_content
    assert tally.caught > 0, vars(tally)


async def test_a_write_through_a_swapped_directory_never_lands_outside(place):
    proj, outside = place
    fe = env_for(proj, "acceptEdits")
    swapped = proj / "d"
    swapped.symlink_to(outside / "dir")
    tally = Tally()
    with Flipper(swapped, f"dir:{proj / 'realdir'}", f"link:{outside / 'dir'}"):
        while not tally.enough():
            n = tally.attempts
            out = await fe.call("Write", {"file_path": str(swapped / f"new{n}.txt"), "content": "x\n"})
            tally.attempts += 1
            if isinstance(out, ToolCallResult):
                tally.read += 1
            elif "Refused:" in out.model_content:
                tally.caught += 1
    assert sorted(os.listdir(outside / "dir")) == ["file.txt"]
    assert tally.caught > 0, vars(tally)


# ---- hard links ------------------------------------------------------------------------------------

async def test_a_hard_link_to_a_denied_file_is_not_read(place):
    proj, _ = place
    fe = env_for(proj)
    os.link(proj / ".env", proj / "innocent.txt")
    out = await fe.call("Read", {"file_path": str(proj / "innocent.txt")})
    assert CANARY not in out.model_content
    assert "hard links" in out.model_content and "Read deny rule" in out.model_content


async def test_a_hard_link_to_a_denied_file_is_not_edited_or_shown_in_a_diff(place):
    proj, _ = place
    fe = env_for(proj, "acceptEdits")
    os.link(proj / ".env", proj / "innocent.txt")
    out = await fe.call("Write", {"file_path": str(proj / "innocent.txt"), "content": "x\n"})
    assert CANARY not in out.model_content and "hard links" in out.model_content
    assert (proj / ".env").read_text() == CANARY + "\n"


async def test_a_hard_link_to_a_protected_file_is_not_written(place):
    proj, _ = place
    settings = proj / ".claude" / "settings.json"
    fe = env_for(proj, "acceptEdits")
    os.link(settings, proj / "innocent.json")
    fe.env.policy.protected_paths.add(str(settings))
    assert isinstance(await fe.call("Read", {"file_path": str(proj / "innocent.json")}), ToolCallResult)
    out = await fe.call("Write", {"file_path": str(proj / "innocent.json"), "content": "{}\n"})
    assert "hard links" in out.model_content and "protected" in out.model_content
    assert settings.read_text() == '{"permissions": {}}\n'


async def test_an_ordinary_hard_link_is_read_and_written(place):
    proj, _ = place
    fe = env_for(proj, "acceptEdits")
    (proj / "a.txt").write_text("shared\n")
    os.link(proj / "a.txt", proj / "b.txt")
    out = await fe.call("Read", {"file_path": str(proj / "b.txt")})
    assert isinstance(out, ToolCallResult) and "shared" in out.model_content
    out = await fe.call("Write", {"file_path": str(proj / "b.txt"), "content": "mine\n"})
    assert isinstance(out, ToolCallResult), out.model_content
    assert (proj / "b.txt").read_text() == "mine\n"


async def test_a_real_session_checks_what_its_file_tools_open(tmp_path, monkeypatch):
    """The session assembled from settings wires the policy's check into the file tools."""
    from tests.builtin_kit import Workspace, of, run

    space = Workspace(tmp_path)
    for name, value in (("HOME", space.home), ("VIGIL_HOME", space.vigil_home)):
        monkeypatch.setenv(name, str(value))
    space.write(".env", CANARY + "\n")
    os.link(space.project / ".env", space.project / "innocent.txt")
    session = space.session([{"tool_calls": [{"id": "r1", "name": "Read",
                                              "input": {"file_path": str(space.project / "innocent.txt")}}]},
                             {"text": "done"}], settings={"permissions": {"deny": ["Read(.env)"]}})
    _, events = await run(session)
    [error] = of(events, "ToolCallError", call_id="r1")
    assert "hard links" in error.model_content
    assert all(CANARY not in str(request) for request in session.agent.client.requests)
