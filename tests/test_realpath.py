"""The kernel's answer for a real path is os.path.realpath's, on every shape a permission check meets."""

from __future__ import annotations

import os

import pytest

from tui_app.runtime.files.realpath import real_path


@pytest.fixture
def tree(tmp_path):
    (tmp_path / "dir" / "sub").mkdir(parents=True)
    (tmp_path / "dir" / "sub" / "file.txt").write_text("x")
    (tmp_path / "link_dir").symlink_to(tmp_path / "dir")
    (tmp_path / "link_file").symlink_to(tmp_path / "dir" / "sub" / "file.txt")
    (tmp_path / "relative_link").symlink_to("dir/sub")
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "unicodé.txt").write_text("x")
    return tmp_path


@pytest.mark.parametrize("name", [
    "dir/sub/file.txt", "link_dir/sub/file.txt", "link_file", "relative_link/file.txt", "link_dir/../dir/sub",
    "link_dir/sub/../sub/./file.txt", "dangling", "loop", "missing/file.txt", "fifo", "unicodé.txt", "dir/",
    "link_dir", "link_file/..",
])
def test_real_path_agrees_with_os_path_realpath(tree, name):
    path = str(tree / name) if not name.endswith("/") else str(tree / name) + "/"
    assert real_path(path) == os.path.realpath(path)


def test_a_relative_path_is_resolved_from_the_working_directory(tree, monkeypatch):
    monkeypatch.chdir(tree)
    assert real_path("link_dir/sub/file.txt") == os.path.realpath("link_dir/sub/file.txt")
    assert real_path("") == os.path.realpath("")
