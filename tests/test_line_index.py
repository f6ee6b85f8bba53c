"""The line index: exact line positions from a sparse index, at any block size, while the file is
still being scanned, grows or shrinks; invalid UTF-8 and huge lines decode without harm."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.waiting import DEADLINE_S
from widgets.viewer.line_index import LineIndex


def reference_starts(data: bytes) -> list[int]:
    if not data:
        return []
    starts = [0] + [i + 1 for i, byte in enumerate(data) if byte == 0x0A and i + 1 < len(data)]
    return starts


def wait(condition, timeout: float = DEADLINE_S) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.005)


@settings(max_examples=150, deadline=None)
@given(data=st.binary(max_size=600).map(lambda b: b.replace(b"\x00", b"\n")),
       block=st.sampled_from([1, 2, 3, 7, 64, 4096]))
def test_every_line_start_end_and_number_matches_a_plain_split(tmp_path_factory, data, block):
    path = tmp_path_factory.mktemp("idx") / "f.txt"
    path.write_bytes(data)
    index = LineIndex(path, block_size=block).start()
    try:
        assert index.wait_complete(5)
        starts = reference_starts(data)
        assert index.line_count == len(starts)
        for number, start in enumerate(starts):
            assert index.line_start(number) == start
            end = data.find(b"\n", start)
            assert index.line_end(start) == (len(data) if end == -1 else end)
            assert index.line_of_offset(start) == number
        assert index.line_start(len(starts)) is None
        assert index.tail_starts(4) == starts[-4:]
    finally:
        index.close()


def test_the_last_lines_are_readable_before_the_scan_has_started(tmp_path):
    path = tmp_path / "log.txt"
    path.write_bytes(b"".join(b"line %d\n" % i for i in range(100_000)))
    index = LineIndex(path)
    index.pause()
    index.start()
    try:
        time.sleep(0.05)
        assert index.progress().scanned == 0 and index.line_count is None
        tail = index.tail_starts(3)
        assert [index.decode(s).text for s in tail] == ["line 99997", "line 99998", "line 99999"]
        assert index.decode(0).text == "line 0"
        assert index.line_start(5) is None  # not indexed yet: the number is unknown, not guessed
        index.resume()
        assert index.wait_complete(5)
        assert index.line_count == 100_000
        assert index.decode(index.line_start(54_321)).text == "line 54321"
    finally:
        index.close()


def test_invalid_utf8_and_a_line_of_ten_megabytes_decode_without_failing(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_bytes(b"ok\n\xff\xfe bad \xc3\x28 bytes\n" + b"x" * (10 << 20) + b"\nafter\n")
    index = LineIndex(path, max_line_bytes=5000).start()
    try:
        assert index.wait_complete(5)
        assert index.line_count == 4
        bad = index.decode(index.line_start(1))
        assert bad.text == "\ufffd\ufffd bad \ufffd( bytes"
        long = index.decode(index.line_start(2))
        assert len(long.text) == 5000 and long.more_bytes == (10 << 20) - 5000
        assert index.decode(index.line_start(3)).text == "after"
    finally:
        index.close()


def test_a_growing_file_is_indexed_further_and_a_truncated_one_again(tmp_path):
    path = tmp_path / "grow.txt"
    path.write_bytes(b"first\n")
    seen = []
    index = LineIndex(path, block_size=8, poll_interval=0.01, on_progress=seen.append).start()
    try:
        assert index.wait_complete(5)
        assert index.line_count == 1

        def writer() -> None:
            with open(path, "ab") as handle:
                for i in range(50):
                    handle.write(b"appended %d\n" % i)
                    handle.flush()
                    time.sleep(0.002)

        thread = threading.Thread(target=writer)
        thread.start()
        thread.join()
        wait(lambda: index.line_count == 51)
        assert index.decode(index.line_start(50)).text == "appended 49"
        assert index.decode(index.tail_starts(1)[0]).text == "appended 49"

        generation = index.progress().generation
        path.write_bytes(b"new\ncontent\n")  # truncated and rewritten
        wait(lambda: index.progress().generation > generation and index.line_count == 2)
        assert index.decode(index.line_start(1)).text == "content"
        assert seen and seen[-1].complete
    finally:
        index.close()


def test_an_empty_file_has_no_lines(tmp_path):
    path = tmp_path / "empty.txt"
    path.write_bytes(b"")
    index = LineIndex(path).start()
    try:
        assert index.wait_complete(5)
        assert index.line_count == 0
        assert index.line_start(0) is None
        assert index.tail_starts(3) == []
    finally:
        index.close()


def test_the_index_of_a_big_file_is_a_few_bytes_per_block(tmp_path):
    path = tmp_path / "big.txt"
    block = b"".join(b"%08d some text in a line\n" % i for i in range(40_000))
    with open(path, "wb") as handle:
        for _ in range(20):
            handle.write(block)
    index = LineIndex(path).start()
    try:
        assert index.wait_complete(10)
        assert index.line_count == 800_000
        # 8 bytes per 256 KiB block, not 8 bytes per line
        assert len(index._cum) * index._cum.itemsize < path.stat().st_size // 30_000
        assert index.decode(index.line_start(799_999)).text == "00039999 some text in a line"
    finally:
        index.close()


def test_a_missing_file_raises_at_once(tmp_path):
    with pytest.raises(FileNotFoundError):
        LineIndex(Path(tmp_path) / "nope.txt")


def test_a_file_truncated_under_the_mapping_is_never_read_past_its_new_end(tmp_path):
    # reading a mapped page past the end of a truncated file would kill the process (SIGBUS)
    path = tmp_path / "rotated.log"
    path.write_bytes(b"".join(b"old line %d\n" % i for i in range(200_000)))
    index = LineIndex(path, poll_interval=3600).start()  # the poller must not be what saves us
    try:
        assert index.wait_complete(5)
        far = index.line_start(150_000)
        assert index.decode(far).text == "old line 150000"
        with open(path, "r+b") as handle:
            # new text over the head, then the cut: never an empty file in between, which a reader
            # could map (size 0) and, with the poller off, would never see grow again
            handle.write(b"new first\nnew second\n")
            handle.flush()
            handle.truncate(len(b"new first\nnew second\n"))
        # readers re-check the size every few milliseconds, not on every read: until they do, a
        # read may be short, never past the end (which would be SIGBUS, the end of this test run)
        assert index.decode(index.line_start(199_000) or 0).text in ("", "new first")
        deadline = time.monotonic() + DEADLINE_S
        while index.read(0, far) != b"new first\nnew second\n" and time.monotonic() < deadline:
            time.sleep(0.01)
        assert index.line_end(far) == far
        assert index.read(0, far) == b"new first\nnew second\n"
        assert [index.decode(s).text for s in index.tail_starts(5)] == ["new first", "new second"]
        assert index.wait_complete(5) and index.line_count == 2
    finally:
        index.close()


def test_a_big_file_is_counted_by_a_child_process_and_every_line_is_where_a_split_puts_it(tmp_path, monkeypatch):
    """The bulk of a big file is counted in a child process (so the UI thread keeps the GIL); the
    index it leaves is the same one counting here would."""
    import widgets.viewer.line_index as line_index

    monkeypatch.setattr(line_index, "CHILD_SCAN_BYTES", 4096)
    data = b"".join(b"%d %s\n" % (i, b"x" * (i * 37 % 300)) for i in range(3000)) + b"tail without newline"
    path = tmp_path / "big.log"
    path.write_bytes(data)
    spawned = []
    real_popen = line_index.subprocess.Popen

    def popen(*args, **kwargs):
        spawned.append(args[0])
        return real_popen(*args, **kwargs)

    monkeypatch.setattr(line_index.subprocess, "Popen", popen)
    index = LineIndex(path, block_size=1000).start()
    try:
        assert index.wait_complete(30)
        assert spawned and index._use_child
        starts = reference_starts(data)
        assert index.line_count == len(starts)
        for number in (0, 1, 999, 1500, len(starts) - 1):
            assert index.line_start(number) == starts[number]
        assert index.line_of_offset(starts[2500] + 1) == 2500
    finally:
        index.close()


def test_without_a_child_process_the_file_is_counted_here(tmp_path, monkeypatch):
    import widgets.viewer.line_index as line_index

    monkeypatch.setattr(line_index, "CHILD_SCAN_BYTES", 4096)

    def no_processes(*args, **kwargs):
        raise OSError("no processes here")

    monkeypatch.setattr(line_index.subprocess, "Popen", no_processes)
    data = b"line\n" * 5000
    path = tmp_path / "big.log"
    path.write_bytes(data)
    index = LineIndex(path, block_size=1000).start()
    try:
        assert index.wait_complete(30)
        assert not index._use_child and index.line_count == 5000 and index.line_start(4999) == 4999 * 5
    finally:
        index.close()
