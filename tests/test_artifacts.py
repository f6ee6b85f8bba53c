"""The artifact store on a real disk: atomic publication, the index, streaming in bounded memory,
session boundaries, and the fallbacks when the disk says no."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fakes import SAFE, make_env
from tui_app.runtime.contract import RawResult, StrictInput, ToolSpec
from tui_app.runtime.events import ToolCallResult
from tui_app.runtime.pipeline import ToolCall, run_call
from tui_app.runtime.results import budgets
from tui_app.runtime.results.artifacts import ArtifactNotFound, ArtifactStore, ArtifactWriter, parse_artifact_uri

ROOT = Path(__file__).resolve().parent.parent


def test_persist_text_publishes_a_file_an_index_line_and_a_uri(tmp_path):
    store = ArtifactStore("sess-1", tmp_path / "artifacts")
    ref = store.persist_text("toolu_01", "Grep", "a\nb\nc")
    path = Path(ref.path)
    assert path.read_text(encoding="utf-8") == "a\nb\nc"
    assert path.parent == tmp_path / "artifacts" and path.name.startswith("toolu_01-")
    assert ref.uri == f"vigil-artifact://sess-1/{ref.artifact_id}"
    assert parse_artifact_uri(ref.uri) == ("sess-1", ref.artifact_id)
    (line,) = (tmp_path / "artifacts" / "index.jsonl").read_text(encoding="utf-8").splitlines()
    entry = json.loads(line)
    assert {k: entry[k] for k in ("artifact_id", "call_id", "tool", "bytes", "lines", "encoding")} == {
        "artifact_id": ref.artifact_id, "call_id": "toolu_01", "tool": "Grep", "bytes": 5, "lines": 3,
        "encoding": "utf-8"}
    assert entry["created"] > 0 and entry["path"] == ref.path
    assert [i.artifact_id for i in store.list()] == [ref.artifact_id]


def test_the_same_call_id_twice_gets_two_artifacts(tmp_path):
    store = ArtifactStore("s", tmp_path)
    first, second = store.persist_text("c/1", "Bash", "one"), store.persist_text("c/1", "Bash", "two")
    assert first.path != second.path and "/" not in first.artifact_id
    assert Path(first.path).read_text() == "one" and Path(second.path).read_text() == "two"


def test_a_streamed_artifact_appears_only_when_complete(tmp_path):
    store = ArtifactStore("s", tmp_path)
    writer = store.open_writer("toolu_9", "Bash")
    writer.write("first line\n")
    writer.write(b"second ")
    writer.flush()
    assert not writer.path.exists()  # a reader never sees half an artifact
    assert [p.name for p in tmp_path.iterdir()] == [f".{writer.artifact_id}.tmp"]
    assert store.list() == []
    writer.write("line, no newline at the end")
    ref = writer.close()
    assert Path(ref.path).read_bytes() == b"first line\nsecond line, no newline at the end"
    assert (ref.bytes, ref.lines) == (45, 2)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["index.jsonl", Path(ref.path).name]


def test_a_writer_visible_while_writing_can_be_followed(tmp_path):
    store = ArtifactStore("s", tmp_path)
    writer = store.open_writer("toolu_9", "Bash", visible_while_writing=True)
    writer.write("partial\n")
    writer.flush()
    assert writer.path.read_text() == "partial\n"
    assert store.resolve(writer.uri) == writer.path  # already listed from its file
    writer.close()


def test_the_encoding_is_utf8_even_when_a_character_spans_two_chunks(tmp_path):
    store = ArtifactStore("s", tmp_path)
    data = "naïve café 😀\n".encode() * 3
    writer = store.open_writer("c", "Bash")
    for i in range(0, len(data), 5):  # chunk boundaries cut through multi-byte characters
        writer.write(data[i : i + 5])
    writer.close()
    assert store.list()[0].encoding == "utf-8"


@pytest.mark.parametrize("data", [b"\x89PNG\r\n\x1a\n\x00\x00", b"ok \xe9t\xe9\n", b"cut \xf0\x9f\x98"])
def test_binary_or_invalid_utf8_is_kept_byte_for_byte_and_marked(tmp_path, data):
    store = ArtifactStore("s", tmp_path)
    writer = store.open_writer("c", "Bash")
    writer.write(data)
    ref = writer.close()
    assert Path(ref.path).read_bytes() == data
    assert store.list()[0].encoding == "binary"


def test_text_with_escaped_bytes_goes_back_to_those_bytes(tmp_path):
    store = ArtifactStore("s", tmp_path)
    text = b"raw \xff\xfe bytes".decode("utf-8", "surrogateescape")
    ref = store.persist_text("c", "Bash", text)
    assert Path(ref.path).read_bytes() == b"raw \xff\xfe bytes"


STREAM_SCRIPT = """
import json, resource, sys, tracemalloc
sys.path.insert(0, sys.argv[3])
from tui_app.runtime.results.artifacts import ArtifactStore

def rss_kb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

store = ArtifactStore("s", sys.argv[2])
before = rss_kb()
tracemalloc.start()
writer = store.open_writer("toolu_big", "Bash")
with open(sys.argv[1], "rb") as source:
    while chunk := source.read(65536):
        writer.write(chunk)
ref = writer.close()
traced_peak = tracemalloc.get_traced_memory()[1]
tracemalloc.stop()
print(json.dumps({"rss_growth_kb": rss_kb() - before, "traced_peak": traced_peak, "path": ref.path,
                  "bytes": ref.bytes, "lines": ref.lines}))
"""


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def test_200_mb_streams_through_the_writer_in_bounded_memory(tmp_path):
    source = tmp_path / "source.log"
    lines = 0
    with open(source, "wb") as f:
        for block in range(200):
            chunk = b"".join(f"[{block:03d}:{i:05d}] INFO worker ok, latency {i % 97} ms\n".encode()
                             for i in range(26_000))[: 1 << 20]
            lines += chunk.count(b"\n")
            f.write(chunk)
    size = source.stat().st_size
    assert size == 200 * (1 << 20)
    result = subprocess.run([sys.executable, "-c", STREAM_SCRIPT, str(source), str(tmp_path / "artifacts"),
                             str(ROOT)], capture_output=True, text=True, check=True, timeout=300)
    facts = json.loads(result.stdout)
    assert facts["rss_growth_kb"] < 50 * 1024, facts  # peak RSS growth under 50 MB
    assert facts["traced_peak"] < 8 * (1 << 20), facts  # Python objects: a few chunks, never the output
    assert facts["bytes"] == size
    assert facts["lines"] == lines + 1  # the last 1 MB block ends inside a line
    assert sha256(Path(facts["path"])) == sha256(source)


# ---- when the disk says no ---------------------------------------------------------------------------

class FullDisk:
    """A file whose writes fail the way a full disk does."""

    def __init__(self, real):
        self.real = real

    def write(self, data):
        raise OSError(errno.ENOSPC, "No space left on device")

    def __getattr__(self, name):
        return getattr(self.real, name)


class FullDiskStore(ArtifactStore):
    def open_writer(self, call_id, tool, visible_while_writing=False) -> ArtifactWriter:
        writer = super().open_writer(call_id, tool, visible_while_writing)
        writer._file = FullDisk(writer._file)
        return writer


class EmitInput(StrictInput):
    text: str


async def emit_text(args, ctx):
    return RawResult(text=args.text)


GREP = ToolSpec(name="Grep", description="", handler=emit_text, input_model=EmitInput, flags=SAFE,
                budget=budgets.GREP)


async def assert_falls_back_to_truncation(store, directory: Path):
    env, rec = make_env(GREP)
    env.services["artifacts"] = store
    text = "match\n" * 10_000
    out = await run_call(ToolCall("toolu_1", "Grep", {"text": text}), env)
    assert isinstance(out, ToolCallResult)  # the call still succeeded
    assert (out.strategy, out.truncated, out.artifacts) == ("truncate", True, [])
    assert out.model_content.endswith(
        "\n\n[Tool output truncated by resultBudget: original 60000 bytes, limit 20000 bytes]")
    assert text.startswith(out.model_content.rpartition("\n\n")[0])
    (warning,) = rec.of("Warning")
    assert warning.code == "artifact_fallback" and "Could not persist the output of Grep" in warning.message
    assert rec.types() == ["ToolCallStarted", "Warning", "ToolCallResult"]
    leftovers = [p.name for p in directory.iterdir()] if directory.is_dir() else []
    assert not [n for n in leftovers if n.endswith((".tmp", ".txt"))]
    return warning


async def test_a_full_disk_falls_back_to_truncation_with_a_warning(tmp_path):
    warning = await assert_falls_back_to_truncation(FullDiskStore("test", tmp_path / "a"), tmp_path / "a")
    assert "No space left on device" in warning.message


def test_a_writer_that_hits_a_full_disk_keeps_taking_chunks_and_raises_on_close(tmp_path):
    store = FullDiskStore("s", tmp_path)
    writer = store.open_writer("c", "Bash")
    for _ in range(3):
        writer.write(b"x" * 1000)  # a tool draining its process never sees an exception here
    assert writer.failed and writer.error.errno == errno.ENOSPC
    with pytest.raises(OSError) as raised:
        writer.close()
    assert raised.value.errno == errno.ENOSPC
    assert list(tmp_path.iterdir()) == []  # the temp file is gone


def _unwritable_directory(tmp_path: Path) -> tuple[Path, str]:
    """A real directory this process cannot create files in, and how it was made so."""
    directory = tmp_path / "readonly"
    directory.mkdir()
    directory.chmod(0o500)
    probe = directory / "probe"
    try:
        probe.write_text("x")
    except PermissionError:
        return directory, "chmod 0o500"
    # root ignores permission bits; an immutable directory stops root too
    probe.unlink()
    chattr = shutil.which("chattr")
    if chattr and subprocess.run([chattr, "+i", str(directory)], capture_output=True).returncode == 0:
        try:
            probe.write_text("x")
        except PermissionError:
            return directory, "chattr +i"
        subprocess.run([chattr, "-i", str(directory)], check=True)
    # last resort that holds for every user: the directory's place is taken by a regular file
    directory.chmod(0o700)
    shutil.rmtree(directory)
    blocker = tmp_path / "blocker"
    blocker.write_text("not a directory")
    return blocker / "artifacts", "parent is a file"


async def test_a_read_only_directory_falls_back_to_truncation_with_a_warning(tmp_path):
    directory, how = _unwritable_directory(tmp_path)
    try:
        warning = await assert_falls_back_to_truncation(ArtifactStore("test", directory), directory)
        assert any(word in warning.message for word in ("Permission denied", "Operation not permitted",
                                                        "Not a directory")), (how, warning.message)
    finally:
        if how == "chattr +i":
            subprocess.run(["chattr", "-i", str(directory)], check=True)
        if directory.is_dir():
            directory.chmod(0o700)


async def test_a_tool_whose_own_artifact_failed_gets_the_warning_too():
    async def streamed_and_failed(args, ctx):
        return RawResult(text=args.text, artifact=OSError(errno.ENOSPC, "No space left on device"))

    spec = ToolSpec(name="Bash", description="", handler=streamed_and_failed, input_model=EmitInput, flags=SAFE,
                    budget=budgets.BASH)
    env, rec = make_env(spec)
    out = await run_call(ToolCall("t", "Bash", {"text": "y" * 40_000}), env)
    assert isinstance(out, ToolCallResult) and out.strategy == "truncate"
    assert "No space left on device" in rec.of("Warning")[0].message
    # the tool's text already fits (it kept only the ends): the lost artifact is still reported
    small = await run_call(ToolCall("u", "Bash", {"text": "Exit code 1\n[... 5 GB omitted ...]"}), env)
    assert small.strategy == "inline" and len(rec.of("Warning")) == 2


async def test_an_artifact_the_tool_streamed_is_reported_even_when_the_text_fits(tmp_path):
    store = ArtifactStore("test", tmp_path)

    async def streamed(args, ctx):
        writer = ctx.service("artifacts").open_writer(ctx.call_id, "Bash")
        writer.write(args.text)
        return RawResult(text=args.text, artifact=writer.close())

    spec = ToolSpec(name="Bash", description="", handler=streamed, input_model=EmitInput, flags=SAFE,
                    budget=budgets.BASH)
    env, rec = make_env(spec)
    env.services["artifacts"] = store
    out = await run_call(ToolCall("t", "Bash", {"text": "short"}), env)
    assert out.model_content == "short" and out.strategy == "inline"
    assert [e.artifact for e in rec.of("ArtifactPersisted")] == out.artifacts and len(out.artifacts) == 1


def test_a_lost_index_line_loses_no_artifact(tmp_path):
    store = ArtifactStore("s", tmp_path)
    (tmp_path / "index.jsonl").mkdir(parents=True)  # appending to the index now fails for real
    ref = store.persist_text("c", "Bash", "kept\n")
    assert store.index_errors == 1
    (info,) = store.list()
    assert (info.artifact_id, info.bytes, info.path) == (ref.artifact_id, 5, ref.path)
    assert store.resolve(ref.uri) == Path(ref.path)


def test_a_torn_index_line_is_skipped(tmp_path):
    store = ArtifactStore("s", tmp_path)
    ref = store.persist_text("c", "Bash", "x")
    with open(tmp_path / "index.jsonl", "a") as f:
        f.write('{"artifact_id": "half')
    assert [i.artifact_id for i in store.list()] == [ref.artifact_id]


# ---- which references name an artifact of this session -----------------------------------------------

def test_an_artifact_is_found_by_uri_id_file_name_and_path(tmp_path):
    store = ArtifactStore("mine", tmp_path / "mine" / "artifacts")
    ref = store.persist_text("c", "Bash", "x")
    path = Path(ref.path)
    for reference in (ref.uri, ref.artifact_id, path.name, ref.path, f"  {ref.uri}\n"):
        assert store.locate(reference) == path
    assert store.locate(f"mine/artifacts/{path.name}", cwd=str(tmp_path)) == path


@pytest.mark.parametrize(("reference", "words"), [
    ("vigil-artifact://theirs/abc", "belongs to session theirs"),
    ("vigil-artifact://", "Not an artifact URI"),
    ("nothing-here", "No artifact nothing-here"),
    ("/etc/passwd", "not an artifact of the current session"),
    ("index.jsonl", "No artifact"),
    ("", "No artifact given"),
])
def test_anything_else_is_refused_with_a_reason(tmp_path, reference, words):
    store = ArtifactStore("mine", tmp_path / "mine" / "artifacts")
    store.persist_text("c", "Bash", "x")
    with pytest.raises(ArtifactNotFound, match=words):
        store.locate(reference)
    assert store.resolve(reference) is None


def test_another_sessions_artifact_is_refused_by_path_too(tmp_path):
    theirs = ArtifactStore("theirs", tmp_path / "theirs" / "artifacts")
    ref = theirs.persist_text("c", "Bash", "secret")
    mine = ArtifactStore("mine", tmp_path / "mine" / "artifacts")
    mine.persist_text("c", "Bash", "x")
    for reference in (ref.path, ref.uri, f"{tmp_path}/mine/artifacts/../../theirs/artifacts/{Path(ref.path).name}"):
        with pytest.raises(ArtifactNotFound):
            mine.locate(reference)


def test_a_symlink_out_of_the_directory_and_the_index_are_not_artifacts(tmp_path):
    store = ArtifactStore("s", tmp_path / "a")
    store.persist_text("c", "Bash", "x")
    outside = tmp_path / "outside.txt"
    outside.write_text("private")
    (tmp_path / "a" / "link.txt").symlink_to(outside)
    for reference in ("link", "link.txt", str(tmp_path / "a" / "index.jsonl")):
        with pytest.raises(ArtifactNotFound):
            store.locate(reference)


def test_the_composition_root_keeps_artifacts_under_vigil_home(tmp_path, monkeypatch):
    from tui_app.assemble import SessionOptions, build_services

    monkeypatch.setenv("VIGIL_HOME", str(tmp_path))
    store = build_services(SessionOptions(cwd=str(tmp_path)), "20250101-000000-abcdef")["artifacts"]
    ref = store.persist_text("c", "Bash", "x")
    assert Path(ref.path).parent == tmp_path / "sessions" / "20250101-000000-abcdef" / "artifacts"
    assert ref.uri.startswith("vigil-artifact://20250101-000000-abcdef/")
    assert os.path.isfile(ref.path)
