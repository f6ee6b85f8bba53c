"""The one-walk write place (`opened.walk_to`) on the shapes a project has: links on the way and at
the end (relative, absolute, with `..`), missing directories, loops. The place named is where the
kernel would have written, and the write lands there."""

from __future__ import annotations

import os

import pytest

from tui_app.runtime.files.atomic import write_atomically
from tui_app.runtime.files.opened import OpenedFile, PathChanged, walk_to


@pytest.fixture
def tree(tmp_path):
    (tmp_path / "real" / "sub").mkdir(parents=True)
    (tmp_path / "real" / "sub" / "f.txt").write_text("old")
    (tmp_path / "abs").symlink_to(tmp_path / "real")
    (tmp_path / "rel").symlink_to("real/sub")
    (tmp_path / "up").symlink_to("real/sub/../sub")
    (tmp_path / "real" / "file-link").symlink_to("sub/f.txt")
    (tmp_path / "loop").symlink_to("loop")
    return tmp_path


@pytest.mark.parametrize("name", ["real/sub/f.txt", "abs/sub/f.txt", "rel/f.txt", "up/f.txt", "real/file-link",
                                  "abs/file-link", "real/sub/new.txt", "rel/new.txt"])
def test_the_place_is_where_the_kernel_would_write(tree, name):
    with walk_to(str(tree / name)) as place:
        assert place.real == os.path.realpath(tree / name)


def test_missing_directories_are_made_only_when_asked(tree):
    with pytest.raises(FileNotFoundError):
        walk_to(str(tree / "abs" / "new" / "deeper" / "x.txt"))
    assert not (tree / "real" / "new").exists()
    with walk_to(str(tree / "abs" / "new" / "deeper" / "x.txt"), make_dirs=True) as place:
        assert place.real == str(tree / "real" / "new" / "deeper" / "x.txt")


def test_a_loop_and_a_file_as_a_directory_are_errors(tree):
    with pytest.raises(OSError):
        walk_to(str(tree / "loop" / "x"))
    with pytest.raises(NotADirectoryError):
        walk_to(str(tree / "real" / "sub" / "f.txt" / "x"))
    with pytest.raises(IsADirectoryError):
        write_atomically(str(tree / "abs"), b"x", None)  # a link to a directory: never replaced by a file
    assert os.path.islink(tree / "abs") and (tree / "real" / "sub" / "f.txt").read_text() == "old"


def test_the_write_lands_at_the_links_target_and_the_link_stays(tree):
    write_atomically(str(tree / "abs" / "file-link"), b"new", None)
    assert (tree / "real" / "sub" / "f.txt").read_text() == "new"
    assert os.path.islink(tree / "real" / "file-link")
    assert sorted(os.listdir(tree / "real" / "sub")) == ["f.txt"]  # no temp file left


def test_a_name_that_became_a_link_after_the_walk_is_not_followed(tree):
    with walk_to(str(tree / "real" / "sub" / "f.txt")) as place:
        os.rename(tree / "real" / "sub" / "f.txt", tree / "real" / "sub" / "moved.txt")
        os.symlink(tree / "real" / "sub" / "moved.txt", tree / "real" / "sub" / "f.txt")
        with pytest.raises(PathChanged):
            place.open_current()


def test_a_read_reads_the_inode_that_was_opened(tree):
    with OpenedFile(str(tree / "rel" / "f.txt")) as opened:
        os.rename(tree / "real" / "sub" / "f.txt", tree / "real" / "sub" / "gone.txt")
        (tree / "real" / "sub" / "f.txt").write_text("swapped in")
        assert opened.who.real == str(tree / "real" / "sub" / "f.txt")
        with opened.read_handle() as handle:
            assert handle.read() == b"old"
