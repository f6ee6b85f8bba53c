"""The replay's timeline: positions, turns, the pieces the log is applied in, what the bar says."""

from __future__ import annotations

import itertools

from tests.tui.replay_data import position_after, two_turns
from tui_app.app.screens.replay import log_note
from widgets.replay_timeline import Timeline
from widgets.timeline_bar import label, track


def test_turns_start_right_after_their_prompt_and_jumps_stop_at_the_ends():
    events = two_turns()
    line = Timeline(events)
    first, second = position_after(events, "TurnStarted"), position_after(events, "TurnStarted") + 49
    assert line.turn_starts == [first, second] and events[second - 1].prompt == "Now run the linter."
    assert [line.turn_at(p) for p in (0, first - 1, first, second - 1, second, line.end)] == [0, 0, 1, 1, 2, 2]
    assert line.next_turn(0) == first and line.next_turn(first) == second and line.next_turn(second) == line.end
    assert line.previous_turn(line.end) == second and line.previous_turn(second) == first
    assert line.previous_turn(first) == 0 and line.previous_turn(0) == 0
    assert (line.clamp(-3), line.clamp(10_000)) == (0, line.end)


def test_the_log_is_cut_after_every_event_that_can_move_the_detail_pane():
    events = two_turns()
    line = Timeline(events)
    pieces = line.pieces(0, line.end)
    assert pieces[0][0] == 0 and pieces[-1][1] == line.end
    assert all(a < b for a, b in pieces) and all(p[1] == q[0] for p, q in itertools.pairwise(pieces))
    for start, stop in pieces:
        movers = [e.type for e in events[start:stop] if e.type in (
            "PermissionRequested", "ToolCallStarted", "ToolCallError", "TurnStarted")]
        assert len(movers) <= 1 and (not movers or events[stop - 1].type == movers[0])
    assert line.pieces(5, 5) == [] and line.pieces(3, 4) == [(3, 4)]


def test_the_bar_says_where_it_stands_and_what_happened_then(utc):
    events = two_turns()
    line = Timeline(events)
    asked = position_after(events, "PermissionRequested")
    moment = line.moment(asked)
    assert (moment.position, moment.total, moment.turn, moment.turns) == (asked, 59, 1, 2)
    assert moment.clock == "22:13:23" and moment.kind == "PermissionRequested" and moment.detail == "Edit"
    text = label(moment).plain
    assert text.startswith(f"event {asked} of 59 · turn 1 of 2 · 22:13:23 PermissionRequested Edit")
    assert label(line.moment(0)).plain == "event 0 of 59 · turn 0 of 2 · before the first event"
    error = line.moment(position_after(events, "ToolCallError", "toolu_10"))
    assert (error.kind, error.detail) == ("ToolCallError", "Bash execution_failed")
    assert line.moment(position_after(events, "TurnStarted")).detail == "Why does test_even fail? Fix it."


def test_log_text_in_the_bar_is_one_plain_line():
    events = two_turns()
    hostile = events[1].model_copy(update={"prompt": "fix [/] it\x1b]52;c;ZXZpbA==\x07\nnow [@click=app.quit]x"})
    moment = Timeline([events[0], hostile]).moment(2)
    assert moment.detail == "fix [/] it now [@click=app.quit]x"
    assert "\x1b" not in label(moment).plain and "\x07" not in label(moment).plain
    assert "[@click=app.quit]x" in label(moment).plain  # literal text, not an action


def test_the_track_marks_the_cursor_and_the_turns():
    bar = track(30, 100, [10, 60], 52).plain
    assert len(bar) == 52 and bar[0] == "├" and bar[-1] == "┤"
    inner = bar[1:-1]
    assert inner.index("●") == 15 and inner.count("┼") == 2
    assert set(inner[:15]) <= {"━", "┼"} and set(inner[16:]) <= {"─", "┼"}
    assert track(0, 0, [], 10).plain.count("●") == 1


def test_the_note_about_a_torn_log():
    assert log_note(["x: the last line is incomplete"], True, 41) == (
        "the log ends mid-line (cut short while it was written); showing up to event 41")
    assert log_note(["a:3: unreadable", "a:9: unreadable"], False, 9) == "2 unreadable lines skipped"
    assert log_note([], False, 3) == ""
