"""A directory operand is everything below it. Reading, archiving or copying a directory that
holds a file a Read deny rule covers reads that file (asks without the sandbox, whose masks hide
it); moving it, or hard-linking what is in it, gives the file a name no rule covers (denied, in
the sandbox too). A file with other names (hard links) may be a denied file under another name:
it asks. A link inside that points at a denied file is the denied file (`cp -rL`)."""

from __future__ import annotations

import os

import pytest

from tests.permission.test_bash_writers_and_spellings import check, decide

DENY = ["Read(./vault/secret/**)"]


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> tuple[str, str]:
    root = tmp_path_factory.mktemp("trees")
    project, outside = root / "proj", root / "outside"
    for d in (project / "vault" / "secret", project / "src", project / "docs", outside):
        d.mkdir(parents=True)
    (project / "vault" / "secret" / "key").write_text("CANARY")
    (project / "vault" / "readme").write_text("x")
    (project / "src" / "app.py").write_text("x")
    os.symlink("../vault/secret/key", project / "docs" / "key_link")
    for d in ("harmless", "cycle", "dirlink"):
        os.mkdir(project / d)
    os.symlink("../src/app.py", project / "harmless" / "app_link")
    os.symlink(".", project / "cycle" / "self")
    os.symlink("../vault", project / "dirlink" / "vault_link")
    os.mkdir(project / "linked")
    os.link(project / "vault" / "secret" / "key", project / "linked" / "copy")
    return str(project), str(outside)


SEEN = "without the sandbox it would be read"
HARD = "hard links"
ROWS = [
    # moves and hard links: denied, sandbox or not
    ("mv-dir", "mv vault public", dict(mode="acceptEdits"), ("deny", "rule", "new name")),
    ("mv-dir-allowed", "mv vault public", dict(allow=["Bash(mv *)"]), ("deny", "rule", "new name")),
    ("mv-into-dir", "mv vault src/", dict(mode="acceptEdits"), ("deny", "rule")),
    ("cp-hard-links", "cp -rl vault public", dict(mode="acceptEdits"), ("deny", "rule", "new name")),
    ("cp-link-long", "cp -r --link vault public", dict(mode="acceptEdits"), ("deny", "rule", "new name")),
    ("ln-hard", "ln vault/secret/key public", dict(allow=["Bash(ln *)"]), ("deny", "rule")),
    # copies and archives: the sandbox masks the file; without it they ask
    ("cp-r", "cp -r vault public", dict(mode="acceptEdits"), ("ask", "guard", SEEN)),
    ("cp-rL-through-link", "cp -rL docs public", dict(mode="acceptEdits"), ("ask", "guard", SEEN)),
    ("cp-rL-through-dir-link", "cp -rL dirlink public", dict(mode="acceptEdits"), ("ask", "guard", SEEN)),
    ("rsync", "rsync -a vault/ public/", dict(allow=["Bash(rsync *)"]), ("ask", "guard", SEEN)),
    ("tar-create", "tar czf out.tgz vault", dict(allow=["Bash(tar *)"]), ("ask", "guard", SEEN)),
    ("tar-create-dot", "tar -cf out.tar .", dict(allow=["Bash(tar *)"]), ("ask", "guard", SEEN)),
    ("zip-r", "zip -r out.zip vault", dict(allow=["Bash(zip *)"]), ("ask", "guard", SEEN)),
    ("diff-dirs", "diff vault src", {}, ("ask", "guard", SEEN)),
    ("cat-dir", "cat vault", dict(allow=["Bash(cat *)"]), ("ask", "guard", SEEN)),
    ("grep-r-parent", "grep -r x vault", {}, ("ask", "guard")),
    ("tar-variable", "tar cf out.tar $D", dict(allow=["Bash(tar *)"]), ("ask", "guard", "only known at run time")),
    # a file with other names
    ("cat-hard-link", "cat linked/copy", {}, ("ask", "guard", HARD)),
    ("grep-tree-with-hard-link", "grep -r x linked", dict(sandboxed=True), ("ask", "guard", HARD)),
    # what holds no denied file runs as before; a listing lists names
    ("cp-r-clean", "cp -r src public", dict(mode="acceptEdits"), ("allow", "mode")),
    ("cp-r-harmless-link", "cp -rL harmless public", dict(mode="acceptEdits"), ("allow", "mode")),
    ("cp-r-link-cycle", "cp -rL cycle public", dict(mode="acceptEdits"), ("allow", "mode")),
    ("cat-plain-file", "cat src/app.py", {}, ("allow", "tool")),
    ("tar-clean", "tar cf out.tar src", dict(allow=["Bash(tar *)"]), ("allow", "rule")),
    ("mv-clean", "mv src lib", dict(mode="acceptEdits"), ("allow", "mode")),
    ("ls-lists-names", "ls vault", {}, ("allow", "tool")),
    ("ln-symbolic", "ln -s vault public", dict(allow=["Bash(ln *)"]), ("allow", "rule")),
    ("cp-r-in-sandbox", "cp -r vault public", dict(mode="acceptEdits", sandboxed=True), ("allow", "mode")),
]


@pytest.mark.parametrize("command, settings, expect", [r[1:] for r in ROWS], ids=[r[0] for r in ROWS])
def test_a_directory_operand_is_everything_below_it(world, command, settings, expect):
    check(decide(world, command, deny=DENY, **settings), expect)


@pytest.mark.parametrize("command", ["mv vault public", "cp -r vault public", "cat linked/copy"])
def test_without_read_deny_rules_nothing_is_looked_for(world, command):
    check(decide(world, command, mode="acceptEdits", allow=["Bash(cat *)"]), ("allow",))


def test_a_tree_just_small_enough_is_looked_through(world, monkeypatch):
    from tui_app.runtime.permissions.bash import trees

    monkeypatch.setattr(trees, "MAX_ENTRIES", 1)  # src holds one file
    check(decide(world, "cp -r src public", mode="acceptEdits", deny=DENY), ("allow", "mode"))


def test_a_tree_too_big_to_look_through_asks(world, monkeypatch):
    from tui_app.runtime.permissions.bash import trees

    monkeypatch.setattr(trees, "MAX_ENTRIES", 0)
    check(
        decide(world, "cp -r src public", mode="acceptEdits", deny=DENY, sandboxed=True),
        ("ask", "guard", "too many files"),
    )
