"""The diff engine: its hunks rebuild the new text exactly, are minimal on small inputs, apply
with GNU patch, and the screen's card stays bounded."""

from __future__ import annotations

import random
import shutil
import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.needs import need_program
from tui_app.runtime.files.diffing import (
    CARD_MAX_HUNKS,
    CARD_MAX_LINES,
    NO_NEWLINE,
    VIEWER_TEXT_LIMIT,
    apply_hunks,
    file_diff_display,
    hunks_of,
    split_lines,
    structured_patch,
    unified_diff_text,
)
from tui_app.runtime.files.line_diff import CONFIRM, diff_lines

# few distinct lines, so repeats, near-misses and missing final newlines are all common
LINE = st.sampled_from(["a\n", "b\n", "c\n", "\n", "}\n", "a", "b", "x\r\n", "é\n", "\x0cform\n"])
TEXT = st.lists(LINE, max_size=30).map("".join)
#: up to 2 × CONFIRM lines in all: the engine diffs these exactly (longer inputs are walked,
#: which is minimal in almost every case but not all)
SHORT = st.lists(LINE, max_size=CONFIRM).map("".join)


def lcs(a: list[str], b: list[str]) -> int:
    row = [0] * (len(b) + 1)
    for x in a:
        prev_diag = 0
        for j, y in enumerate(b, 1):
            prev_diag, row[j] = row[j], prev_diag + 1 if x == y else max(row[j], row[j - 1])
    return row[-1]


def check_hunks(patch) -> None:
    last_end = 0
    for hunk in patch.hunks:
        body = [line for line in hunk.lines if line != NO_NEWLINE]
        assert all(line[:1] in (" ", "-", "+") for line in body)
        assert hunk.old_lines == sum(line[0] in " -" for line in body)
        assert hunk.new_lines == sum(line[0] in " +" for line in body)
        start = hunk.old_start - 1 if hunk.old_lines else hunk.old_start
        assert start >= last_end
        last_end = start + hunk.old_lines
    assert patch.added == sum(line[0] == "+" for h in patch.hunks for line in h.lines if line != NO_NEWLINE)
    assert patch.removed == sum(line[0] == "-" for h in patch.hunks for line in h.lines if line != NO_NEWLINE)


@settings(max_examples=400, deadline=None)
@given(TEXT, TEXT)
def test_applying_the_hunks_to_old_gives_new(old, new):
    patch = structured_patch(old, new)
    assert apply_hunks(old, patch.hunks) == new
    check_hunks(patch)


@settings(max_examples=300, deadline=None)
@given(SHORT, SHORT)
def test_short_diffs_are_minimal(old, new):
    patch = structured_patch(old, new)
    a, b = split_lines(old), split_lines(new)
    assert patch.added + patch.removed == len(a) + len(b) - 2 * lcs(a, b)


def edited(lines: list[str], rng: random.Random, vocabulary: list[str], edits: int) -> list[str]:
    out = list(lines)
    for _ in range(edits):
        at = rng.randrange(len(out) + 1)
        kind = rng.choice(("replace", "insert", "delete"))
        if kind == "replace":
            out[at:at + rng.randint(1, 4)] = [rng.choice(vocabulary) for _ in range(rng.randint(1, 4))]
        elif kind == "insert":
            out[at:at] = [rng.choice(vocabulary) for _ in range(rng.randint(1, 30))]
        else:
            del out[at:at + rng.randint(1, 30)]
    return out


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 2**32), st.sampled_from([3, 12, 400, 100_000]), st.integers(1, 40))
def test_long_files_with_scattered_edits_round_trip(seed, distinct, edits):
    """Long inputs take the walk, the anchors (single lines and windows) and Myers."""
    rng = random.Random(seed)
    vocabulary = [f"line {i}\n" for i in range(distinct)]
    old = [rng.choice(vocabulary) for _ in range(rng.randint(0, 1500))]
    new = edited(old, rng, [*vocabulary, "fresh\n", "fresh"], edits)
    old_text, new_text = "".join(old), "".join(new)
    patch = structured_patch(old_text, new_text)
    assert apply_hunks(old_text, patch.hunks) == new_text
    check_hunks(patch)


@settings(max_examples=60, deadline=None)
@given(TEXT, TEXT, st.integers(0, 40))
def test_a_spent_work_budget_still_gives_a_correct_diff(old, new, work):
    a, b = split_lines(old), split_lines(new)
    changes = diff_lines(a, b, work=work)
    assert apply_hunks(old, hunks_of(a, b, changes)) == new


def test_a_one_line_change_in_a_long_file_is_one_hunk_with_three_lines_of_context():
    old = "".join(f"line {i}\n" for i in range(1, 101))
    new = old.replace("line 50\n", "line fifty\n")
    patch = structured_patch(old, new)
    assert (patch.added, patch.removed) == (1, 1)
    [hunk] = patch.hunks
    assert (hunk.old_start, hunk.old_lines, hunk.new_start, hunk.new_lines) == (47, 7, 47, 7)
    assert hunk.lines == [" line 47", " line 48", " line 49", "-line 50", "+line fifty", " line 51",
                          " line 52", " line 53"]


def test_creating_a_file_and_dropping_the_final_newline_use_the_unified_conventions():
    created = structured_patch("", "one\ntwo")
    [hunk] = created.hunks
    assert (hunk.old_start, hunk.old_lines, hunk.new_start, hunk.new_lines) == (0, 0, 1, 2)
    assert hunk.lines == ["+one", "+two", NO_NEWLINE]
    dropped = structured_patch("x\ny\n", "x\ny")
    assert dropped.hunks[0].lines == [" x", "-y", "+y", NO_NEWLINE]


@pytest.mark.skipif(shutil.which("patch") is None, reason="GNU patch is not installed")
@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32))
def test_gnu_patch_applies_the_unified_text(tmp_path_factory, seed):
    rng = random.Random(seed)
    vocabulary = [f"v{i}\n" for i in range(30)]
    old = "".join(rng.choice(vocabulary) for _ in range(300))
    new = "".join(edited(split_lines(old), rng, vocabulary, 8)) + rng.choice(["", "tail"])
    work = tmp_path_factory.mktemp("patch")
    (work / "f.txt").write_text(old, encoding="utf-8", newline="")
    text = unified_diff_text("f.txt", structured_patch(old, new))
    subprocess.run(["patch", "-p1", "--quiet", "--no-backup-if-mismatch", "-F0"], cwd=work, input=text.encode(),
                   check=True, capture_output=True)
    assert (work / "f.txt").read_bytes() == new.encode()


def test_the_card_keeps_eight_hunks_and_says_what_it_left_out():
    old = "".join(f"{i}\n" for i in range(1000))
    new = old
    for i in range(20):
        new = new.replace(f"\n{i * 40 + 5}\n", f"\nchanged {i}\n")
    display = file_diff_display("/p/f.txt", old, new)
    assert len(display.hunks) == CARD_MAX_HUNKS
    assert display.omitted_hunks == 12
    assert display.omitted_lines == 12 * 8
    assert (display.added, display.removed) == (20, 20)
    assert display.old_text == old and display.new_text == new


def test_the_card_cuts_a_long_hunk_at_160_lines():
    display = file_diff_display("/p/new.txt", "", "".join(f"{i}\n" for i in range(500)), "create")
    [hunk] = display.hunks
    assert len(hunk.lines) == CARD_MAX_LINES and hunk.new_lines == 500
    assert display.omitted_hunks == 0 and display.omitted_lines == 340
    assert display.operation == "create" and display.added == 500


def test_texts_too_large_for_the_viewer_are_left_out_and_bad_bytes_are_made_safe():
    big = "x" * (VIEWER_TEXT_LIMIT + 1)
    display = file_diff_display("/p/big.txt", big, big + "\n")
    assert display.old_text is None and display.new_text is None
    undecodable = b"caf\xe9\n".decode("utf-8", "surrogateescape")
    card = file_diff_display("/p/latin1.txt", undecodable, "cafe\n")
    assert card.hunks[0].lines[0] == "-caf\ufffd"
    card.model_dump_json()  # the event log can write it


def _big_shapes() -> dict[str, tuple[str, str]]:


    lines = [f"    value_{i} = compute({i}, '{i * 7 % 13}')\n" for i in range(3000)]
    shuffled = list(lines)
    random.Random(3).shuffle(shuffled)
    reindented = ["    " + line if i % 2 else line for i, line in enumerate(lines)]
    moved = lines[1500:] + lines[:1500]
    return {"shuffled": ("".join(lines), "".join(shuffled)), "reindented": ("".join(lines), "".join(reindented)),
            "moved": ("".join(lines), "".join(moved) + "no newline at the end")}


@pytest.mark.parametrize("shape", ["shuffled", "reindented", "moved"])
def test_a_big_hard_diff_goes_to_git_and_its_hunks_rebuild_the_new_text(shape, monkeypatch):
    from tui_app.runtime.files import git_diff

    need_program("git")
    asked: list[int] = []
    real = git_diff.git_changes

    def counting(old: str, new: str):
        asked.append(1)
        return real(old, new)

    monkeypatch.setattr("tui_app.runtime.files.diffing.git_changes", counting)
    old, new = _big_shapes()[shape]
    patch = structured_patch(old, new)
    assert asked and apply_hunks(old, patch.hunks) == new


@pytest.mark.parametrize("shape", ["shuffled", "reindented", "moved"])
def test_without_git_the_same_shapes_are_diffed_in_python(shape, monkeypatch):
    monkeypatch.setattr("tui_app.runtime.files.diffing.git_program", lambda: None)
    old, new = _big_shapes()[shape]
    assert apply_hunks(old, structured_patch(old, new).hunks) == new


def test_a_small_edit_of_a_big_file_never_starts_git(monkeypatch):
    def no_git(old: str, new: str):
        raise AssertionError("git was asked about an edit the walk steps over")

    monkeypatch.setattr("tui_app.runtime.files.diffing.git_changes", no_git)
    lines = [f"line {i}\n" for i in range(20_000)]
    edited = list(lines)
    edited[10_000] = "changed\n"
    patch = structured_patch("".join(lines), "".join(edited))
    assert (patch.added, patch.removed) == (1, 1)


def test_git_reads_bytes_that_are_not_utf8_and_gives_lines_back_in_order():
    from tui_app.runtime.files.git_diff import git_changes

    need_program("git")
    old = "".join(f"l\udcff{i}\n" for i in range(10))  # surrogateescape: the bytes of a Latin-1 file
    new = old.replace("l\udcff5\n", "five\n")
    assert git_changes(old, new) == [(5, 6, 5, 6)]
