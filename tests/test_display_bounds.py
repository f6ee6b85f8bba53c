"""The bash_output card: interleaved streams, at most 150000 bytes with both ends kept, inert text."""

from __future__ import annotations

from tui_app.runtime.results.displays import MAX_BASH_OUTPUT_BYTES, BashOutputBuffer, bash_output_display


def test_a_small_output_keeps_its_interleaving_and_merges_neighbours():
    buffer = BashOutputBuffer()
    for stream, text in [("stdout", "a\n"), ("stdout", "b\n"), ("stderr", "warn\n"), ("stdout", "c\n")]:
        buffer.add(text, stream)
    card = buffer.build("make", exit_code=0, duration_ms=1200)
    assert [(s.stream, s.text) for s in card.segments] == [("stdout", "a\nb\n"), ("stderr", "warn\n"),
                                                            ("stdout", "c\n")]
    assert (card.truncated, card.omitted_bytes, card.gap_at, card.total_bytes) == (False, 0, None, 11)
    assert (card.command, card.exit_code, card.duration_ms, card.interrupted) == ("make", 0, 1200, False)


def test_a_large_output_keeps_both_ends_within_150000_bytes():
    buffer = BashOutputBuffer()
    total = 0
    for i in range(40_000):
        line = f"[{i:06d}] compiling module {i}\n"
        buffer.add(line, "stderr" if i % 1000 == 999 else "stdout")
        total += len(line)
    buffer.add("error: linker failed\n", "stderr")
    total += 21
    card = buffer.build("cargo build", exit_code=101, artifact_uri="vigil-artifact://s/a")
    kept = sum(len(s.text.encode()) for s in card.segments)
    assert kept <= MAX_BASH_OUTPUT_BYTES and kept > MAX_BASH_OUTPUT_BYTES - 100
    assert card.segments[0].text.startswith("[000000] compiling module 0\n")  # what ran, at the top
    assert card.segments[-1].stream == "stderr" and card.segments[-1].text.endswith("error: linker failed\n")
    assert card.truncated and card.total_bytes == total
    assert card.omitted_bytes == total - kept
    head_bytes = sum(len(s.text.encode()) for s in card.segments[: card.gap_at])
    assert head_bytes == MAX_BASH_OUTPUT_BYTES // 3  # the gap sits after the head's share
    assert card.artifact_uri == "vigil-artifact://s/a"


def test_one_huge_chunk_is_cut_into_head_and_tail():
    card = bash_output_display("cat big", "H" + "x" * 1_000_000 + "T", limit=300)
    texts = [s.text for s in card.segments]
    assert texts[0] == "H" + "x" * 99 and texts[-1].endswith("T")
    assert sum(len(t) for t in texts) == 300 and card.omitted_bytes == 1_000_002 - 300 and card.gap_at == 1


def test_control_sequences_are_neutralised_even_across_chunks_and_colours_survive():
    buffer = BashOutputBuffer()
    for chunk in [b"\x1b]52;c;ZXZpbA", b"==\x07\x1b[2J\x1b[3", b"1mFAIL\x1b[0m \x1b]0;title\x07\r\n"]:
        buffer.add(chunk, "stdout")
    card = buffer.build("pytest")
    assert [s.text for s in card.segments] == ["\x1b[31mFAIL\x1b[0m \n"]


def test_bytes_split_inside_a_character_and_invalid_bytes_decode_cleanly():
    buffer = BashOutputBuffer()
    data = "ünïcødé 😀\n".encode()
    for i in range(len(data)):
        buffer.add(data[i : i + 1], "stdout")
    buffer.add(b"bad \xff byte\n", "stderr")
    card = buffer.build("echo")
    assert [s.text for s in card.segments] == ["ünïcødé 😀\n", "bad \ufffd byte\n"]
    assert card.total_bytes == len(data) + 11


def test_ten_megabytes_in_small_chunks_stay_within_the_bound():
    buffer = BashOutputBuffer()
    chunk = "0123456789abcdef" * 256  # 4 KB
    for _ in range(2560):
        buffer.add(chunk)
        assert buffer.kept_bytes <= MAX_BASH_OUTPUT_BYTES
    card = buffer.build("yes")
    assert card.total_bytes == 10 * 1024 * 1024 and card.truncated
