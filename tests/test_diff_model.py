"""Diff rows from a FileDiffDisplay: numbering, pairing for side-by-side and word emphasis."""

from __future__ import annotations

from tests.tui.session_data import NEW_STATS, OLD_STATS, stats_diff
from tui_app.runtime.display import DiffHunk, FileDiffDisplay
from widgets.diff.model import build_diff, changed_spans, describe_change


def test_from_full_texts_lines_are_numbered_on_both_sides():
    model = build_diff(stats_diff())
    kinds = [line.kind for line in model.lines]
    assert kinds[0] == "hunk" and kinds.count("removed") == 2 and kinds.count("added") == 4
    assert (model.added, model.removed) == (4, 2)
    removed = [line for line in model.lines if line.kind == "removed"]
    assert [(r.old_no, r.new_no, r.text) for r in removed] == [
        (12, None, "    return total(values) / len(values)"),
        (18, None, "    return ordered[middle]"),
    ]
    context = next(line for line in model.lines if line.kind == "context" and line.text == "def median(values):")
    assert (context.old_no, context.new_no) == (15, 15)
    assert model.max_line_no == 20


def test_replaced_lines_are_paired_and_extra_added_lines_stand_alone():
    model = build_diff(stats_diff())
    split = [(model.lines[left].kind if left is not None else None,
              model.lines[right].kind if right is not None else None)
             for left, right in model.split_rows]
    assert ("removed", "added") in split
    assert (None, "added") in split
    first_removed = next(i for i, line in enumerate(model.lines) if line.kind == "removed")
    partner = model.lines[model.lines[first_removed].pair]
    assert partner.text == "    return total(values) / max(len(values), 1)"


def test_from_hunks_with_a_note_for_what_the_card_left_out():
    display = FileDiffDisplay(path="a.ts", hunks=[DiffHunk(old_start=3, old_lines=2, new_start=3, new_lines=2,
                                                           lines=[" a", "-b", "+B", "\\ No newline at end of file"])],
                              added=1, removed=1, omitted_hunks=7, omitted_lines=120)
    model = build_diff(display)
    assert [line.kind for line in model.lines] == ["hunk", "context", "removed", "added", "note"]
    assert model.lines[-1].text == "… 7 more hunks, 120 more lines not carried by this preview"
    assert model.lines[2].old_no == 4 and model.lines[3].new_no == 4


def test_a_created_file_is_all_added():
    model = build_diff(FileDiffDisplay(path="n.py", operation="create", old_text="", new_text="a\nb\n"))
    assert [line.kind for line in model.lines] == ["hunk", "added", "added"]


def test_identical_texts_say_so():
    model = build_diff(FileDiffDisplay(path="n.py", old_text="a\n", new_text="a\n"))
    assert [(line.kind, line.text) for line in model.lines] == [("note", "(no changes)")]


def test_multiple_hunks_are_found_in_a_long_file():
    old = "".join(f"line {i}\n" for i in range(200))
    new = old.replace("line 20\n", "line twenty\n").replace("line 150\n", "")
    model = build_diff(FileDiffDisplay(path="x.txt", old_text=old, new_text=new))
    assert len(model.hunk_starts) == 2
    assert len(model.split_hunk_rows) == 2


def test_control_sequences_in_diff_text_are_neutralised():
    model = build_diff(FileDiffDisplay(path="x", old_text="a\x1b]52;c;QQ==\x07\n", new_text="b\x1b[2J\tc\n"))
    texts = [line.text for line in model.lines if line.kind in ("removed", "added")]
    assert texts == ["a", "b   c"]


def test_word_level_spans_cover_only_the_changed_words():
    old, new = "    return total(values) / len(values)", "    return total(values) / max(len(values), 1)"
    old_spans, new_spans = changed_spans(old, new)
    assert [new[a:b] for a, b in new_spans] == ["max(", ", 1)"]
    assert old_spans == []
    old_spans, new_spans = changed_spans("x = compute(a, b)", "x = compute(a, c)")
    assert (old_spans, new_spans) == ([(15, 16)], [(15, 16)])


def test_a_rewritten_line_gets_no_word_noise():
    assert changed_spans("alpha beta gamma", "completely different words here") == ([], [])


def test_plain_words_for_a_change():
    assert describe_change(1, 1) == "1 line replaced"
    assert describe_change(4, 2) == "4 lines added, 2 lines removed"
    assert describe_change(3, 0, "create") == "new file, 3 lines"
    assert describe_change(0, 5, "delete") == "file deleted, 5 lines"
    assert describe_change(0, 0) == "no changes"


def test_sources_line_up_with_lines_for_highlighting():
    model = build_diff(FileDiffDisplay(path="s.py", old_text=OLD_STATS, new_text=NEW_STATS))
    for line in model.lines:
        if line.kind == "removed":
            assert model.old_source[line.src] == line.text
        elif line.kind in ("added", "context"):
            assert model.new_source[line.src] == line.text
