"""Search over a mapped file: the same matches as a line-by-line regex, found forwards and
backwards across window edges, counted as the scan runs, cancellable."""

from __future__ import annotations

import re
import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.waiting import DEADLINE_S
from widgets.viewer.line_search import Query, SearchError, SearchRun, count, find, find_wrapping

QUERIES = ["ab", "xa", "a+b", "^x", "b$", "abx", "b.a", "[ab]x"]


def line_matches(data: bytes, query: Query) -> list[int]:
    """Non-overlapping match starts, found line by line (what grep -c counts)."""
    starts, offset = [], 0
    for line in data.split(b"\n"):
        starts += [offset + m.start() for m in query.pattern.finditer(line)]
        offset += len(line) + 1
    return starts


def match_positions(data: bytes, query: Query) -> list[int]:
    """Every offset where a match starts, overlapping or not (where n and N may stop)."""
    positions, offset = [], 0
    for line in data.split(b"\n"):
        positions += [offset + i for i in range(len(line) + 1) if query.pattern.match(line, i)]
        offset += len(line) + 1
    return positions


@settings(max_examples=400, deadline=None)
@given(data=st.text(alphabet="abx\n", max_size=300).map(str.encode), text=st.sampled_from(QUERIES),
       window=st.sampled_from([1, 2, 3, 5, 16, 1 << 20]), where=st.floats(0, 1))
def test_find_and_count_agree_with_a_line_by_line_scan(data, text, window, where):
    query = Query.parse(text)
    assert count(data, len(data), query, window=window) == len(line_matches(data, query))
    positions = match_positions(data, query)
    origin = int(where * len(data))
    forward = find(data, len(data), query, origin, True, window=window)
    after = [s for s in positions if s >= origin]
    assert (forward.start if forward else None) == (after[0] if after else None)
    backward = find(data, len(data), query, origin, False, window=window)
    before = [s for s in positions if s < origin]
    assert (backward.start if backward else None) == (before[-1] if before else None)


def test_a_literal_is_found_across_a_window_edge_and_counted_once():
    data = b"." * 99 + b"NEEDLE" + b"." * 100 + b"NEEDLE\n"
    query = Query.parse("NEEDLE")
    assert query.literal == b"NEEDLE"
    assert find(data, len(data), query, 0, window=100).start == 99
    assert find(data, len(data), query, 100, window=100).start == 205
    assert find(data, len(data), query, len(data), False, window=7).start == 205
    assert count(data, len(data), query, window=100) == 2


def test_search_wraps_around_the_end_and_says_so():
    data = b"one match here\nnothing\nnothing\n"
    query = Query.parse("match")
    match, wrapped = find_wrapping(data, len(data), query, 20, forward=True)
    assert (match.start, wrapped) == (4, True)
    match, wrapped = find_wrapping(data, len(data), query, 4, forward=False)
    assert (match.start, wrapped) == (4, True)
    assert find_wrapping(data, len(data), Query.parse("absent"), 0) == (None, False)


def test_count_reports_progress_as_the_scan_runs():
    data = b"hit\n" * 100_000
    reports: list[tuple[int, int]] = []
    total = count(data, len(data), Query.parse("hit"), lambda n, s: reports.append((n, s)),
                  window=4096, interval=0)
    assert total == 100_000
    assert len(reports) > 10
    assert [n for n, _ in reports] == sorted(n for n, _ in reports)
    assert reports[-1] == (100_000, len(data))


def test_a_cancelled_scan_stops_and_returns_nothing():
    data = b"x" * 1_000_000
    calls = []

    def cancelled() -> bool:
        calls.append(1)
        return len(calls) > 2

    assert find(data, len(data), Query.parse("y"), 0, cancelled=cancelled, window=1000) is None
    assert len(calls) == 3
    assert count(data, len(data), Query.parse("y"), cancelled=lambda: True) is None


def test_a_search_run_reports_the_match_first_then_the_count():
    data = b"a\nneedle\nb\nneedle\n"
    events: list[tuple] = []
    done = threading.Event()

    def counted(n: int, scanned: int, final: bool) -> None:
        events.append(("count", n, final))
        if final:
            done.set()

    SearchRun(data, len(data), Query.parse("needle"), 3, True,
              lambda m, w: events.append(("found", m.start, w)), counted).start()
    assert done.wait(DEADLINE_S)
    assert events[0] == ("found", 11, False)
    assert events[-1] == ("count", 2, True)


@pytest.mark.parametrize("text, message", [("", "nothing to search for"), ("(", "bad pattern"),
                                           ("a*", "matches empty text")])
def test_bad_queries_are_refused_with_a_reason(text, message):
    with pytest.raises(SearchError, match=re.escape(message)):
        Query.parse(text)


def test_regex_and_literal_queries_are_told_apart():
    assert Query.parse("error: x").literal == b"error: x"
    assert Query.parse("err(or)?").literal is None
    assert Query.parse("(?i)ERROR").pattern.search(b"an error") is not None


def test_a_search_stops_when_the_file_no_longer_holds_what_it_scans():
    data = b"x" * (20 << 20) + b"needle\n"
    found = []
    run = SearchRun(data, len(data), Query.parse("needle"), 0, True, lambda m, w: found.append(m),
                    still_readable=lambda: False).start()
    run.join(DEADLINE_S)
    assert found == [] and run.cancelled
