"""A Bash line against the rules: what the writers (`touch cp mv chmod …`) write, however their
operands are spelt; deny rules however the program is spelt; the reads a line makes and who
allowed them; redirections; the sandbox's private /tmp; acceptEdits' file commands.

Each row: a command, the rules and mode, and the decision Vigil must give. Placeholders: {o} a
directory outside the project (which is the working directory)."""

from __future__ import annotations

import pytest

from tests.perm_specs import BASH
from tui_app.runtime.permissions.decision import PermissionQuery
from tui_app.runtime.permissions.policy import RulePolicy
from tui_app.runtime.permissions.rules import make_rule

OUT = "outside the working directories"
RUN_TIME = "only known at run time"


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> tuple[str, str]:
    root = tmp_path_factory.mktemp("writers")
    project, outside = root / "proj", root / "outside"
    for d in (project / "src", project / "sub", project / "secret", outside):
        d.mkdir(parents=True)
    for f in (project / "notes", project / ".env", project / "src/app.py", project / "secret/key",
              outside / "notes.txt"):
        f.write_text("x")
    return str(project), str(outside)


def decide(world, command: str, mode: str = "default", allow=(), ask=(), deny=(), sandboxed: bool = False):
    project, outside = world
    rules = [make_rule(text.replace("{o}", outside), behavior, "test", project)  # type: ignore[arg-type]
             for behavior, texts in (("allow", allow), ("ask", ask), ("deny", deny)) for text in texts]
    policy = RulePolicy(cwd=project, mode=mode, rules=rules, home=project + "/home")
    if sandboxed:
        from tui_app.runtime.permissions.sandbox_policy import SandboxPolicy, SandboxSettings

        policy.sandbox = SandboxPolicy(SandboxSettings(enabled=True, auto_allow=True), policy.dirs, project,
                                       available=True)
    data = {"command": command.replace("{o}", outside)}
    return policy.decide(PermissionQuery(BASH, data, BASH.flags_of(data), project))


def check(decision, expect: tuple[str, ...]) -> None:
    assert decision.behavior == expect[0], decision
    if len(expect) > 1:
        assert decision.decided_by == expect[1], decision
    if len(expect) > 2:
        assert expect[2] in decision.reason, decision


SRC_DENIED = ["Edit(./src/**)"]

# a writer's files however its operands are spelt: an Edit deny rule holds, a write outside asks,
# whatever Bash rule allowed the command; where the files cannot be told, it asks
WRITERS = [
    ("touch-denied", "touch src/app.py", dict(allow=["Bash(touch *)"], deny=SRC_DENIED), ("deny", "rule")),
    ("touch-stamp-option-denied", "touch -t 202001010000 src/app.py", dict(allow=["Bash(touch *)"], deny=SRC_DENIED),
     ("deny", "rule")),
    ("touch-substitution-asks", "touch $(echo src/app.py)", dict(allow=["Bash(touch *)"], deny=SRC_DENIED),
     ("ask", "guard", RUN_TIME)),
    ("touch-variable-asks", "touch $F", dict(allow=["Bash(touch *)"]), ("ask", "guard", RUN_TIME)),
    ("xargs-touch-asks", "echo pwned | xargs touch", dict(allow=["Bash(echo *)", "Bash(touch *)"]),
     ("ask", "guard", RUN_TIME)),
    ("touch-after-unknown-cd-asks", "cd $D && touch x", dict(allow=["Bash(cd *)", "Bash(touch *)"]),
     ("ask", "guard", RUN_TIME)),
    ("touch-after-unknown-cd-acceptEdits", "cd $D && touch x", dict(mode="acceptEdits"), ("ask", "guard")),
    ("mv-target-option-outside", "mv -t {o} notes", dict(allow=["Bash(mv *)"]), ("ask", "guard")),
    ("mv-target-long-abbrev-outside", "mv --target={o} notes", dict(allow=["Bash(mv *)"]), ("ask", "guard")),
    ("cp-target-in-cluster", "cp -rt src notes", dict(allow=["Bash(cp *)"], deny=SRC_DENIED), ("ask", "guard")),
    ("cp-target-long-abbrev", "cp --targ=src notes", dict(allow=["Bash(cp *)"], deny=SRC_DENIED), ("ask", "guard")),
    ("cp-target-long", "cp --target-directory=src notes", dict(allow=["Bash(cp *)"], deny=SRC_DENIED),
     ("ask", "guard")),
    ("ln-target-option", "ln -st {o} notes", dict(allow=["Bash(ln *)"]), ("ask", "guard")),
    ("install-target-option", "install -t {o} notes", dict(allow=["Bash(install *)"]), ("ask", "guard")),
    ("ln-target-joined", "ln -st{o} notes", dict(allow=["Bash(ln *)"]), ("ask", "guard")),
    ("install-target-joined", "install -t{o} notes", dict(allow=["Bash(install *)"]), ("ask", "guard")),
    ("mv-target-joined", "mv -t{o} notes", dict(allow=["Bash(mv *)"]), ("ask", "guard")),
    ("mv-into-outside", "mv notes {o}", dict(allow=["Bash(mv *)"]), ("ask", "guard", OUT)),
    ("mv-inside", "mv notes sub/", dict(allow=["Bash(mv *)"]), ("allow", "rule")),
    ("cp-variable-source-asks", "cp $F notes.bak", dict(allow=["Bash(cp *)"]), ("ask", "guard", RUN_TIME)),
    ("rm-dash-file-denied", "rm - src/app.py", dict(allow=["Bash(rm *)"], deny=SRC_DENIED), ("deny", "rule")),
    ("touch-stdout", "touch -", dict(allow=["Bash(touch *)"]), ("allow", "rule")),
    # after `--` a word like an option is a file
    ("rm-after-double-dash-denied", "rm -- -rf", dict(allow=["Bash(rm *)"], deny=["Edit(./-rf)"]), ("deny", "rule")),
    ("cp-after-double-dash", "cp -- notes -t.bak", dict(allow=["Bash(cp *)"]), ("allow", "rule")),
    ("rm-option-not-a-file", "rm -rf build", dict(allow=["Bash(rm *)"], deny=["Edit(./-rf)"]), ("allow", "rule")),
    # chmod, chown, chgrp: the mode or owner comes first — unless it is spelt like an option or a
    # --reference file gives it, and then every operand is a file
    ("chmod-denied", "chmod 644 src/app.py", dict(allow=["Bash(chmod *)"], deny=SRC_DENIED), ("deny", "rule")),
    ("chmod-recursive-denied", "chmod -R 644 notes src/app.py", dict(allow=["Bash(chmod *)"], deny=SRC_DENIED),
     ("deny", "rule")),
    ("chmod-dash-mode-denied", "chmod -w src/app.py notes", dict(allow=["Bash(chmod *)"], deny=SRC_DENIED),
     ("deny", "rule")),
    ("chmod-reference-denied", "chmod --reference=notes src/app.py notes",
     dict(allow=["Bash(chmod *)"], deny=SRC_DENIED), ("deny", "rule")),
    ("chown-reference-abbrev-denied", "chown --ref=notes src/app.py notes",
     dict(allow=["Bash(chown *)"], deny=SRC_DENIED), ("deny", "rule")),
    ("chown-denied", "chown me src/app.py", dict(allow=["Bash(chown *)"], deny=SRC_DENIED), ("deny", "rule")),
    ("chgrp-denied", "chgrp staff src/app.py", dict(allow=["Bash(chgrp *)"], deny=SRC_DENIED), ("deny", "rule")),
    ("chmod-outside", "chmod 644 {o}/notes.txt", dict(allow=["Bash(chmod *)"]), ("ask", "guard", OUT)),
    ("chmod-inside", "chmod 644 notes", dict(allow=["Bash(chmod *)"]), ("allow", "rule")),
    ("chmod-protected", "chmod 600 .git/config", dict(allow=["Bash(chmod *)"]), ("ask", "guard", "protected")),
    # ... and the mode or owner is no file: a rule about a file of that name does not apply
    ("chmod-mode-is-no-file", "chmod 644 notes", dict(allow=["Bash(chmod *)"], deny=["Edit(./644)"]),
     ("allow", "rule")),
    ("chmod-recursive-mode-is-no-file", "chmod -R 644 notes", dict(allow=["Bash(chmod *)"], deny=["Edit(./644)"]),
     ("allow", "rule")),
    ("chmod-mode-after-dashes", "chmod -- 644 notes", dict(allow=["Bash(chmod *)"], deny=["Edit(./644)"]),
     ("allow", "rule")),
    ("chown-owner-is-no-file", "chown -h me notes", dict(allow=["Bash(chown *)"], deny=["Edit(./me)"]),
     ("allow", "rule")),
    ("chgrp-group-is-no-file", "chgrp staff notes", dict(allow=["Bash(chgrp *)"], deny=["Edit(./staff)"]),
     ("allow", "rule")),
    ("chmod-unknown-file-asks", "chmod 644 $F", dict(allow=["Bash(chmod *)"]), ("ask", "guard", RUN_TIME)),
    # options that name no target directory
    ("cp-long-option-with-t", "cp --preserve=timestamps notes n.bak", dict(allow=["Bash(cp *)"]), ("allow", "rule")),
    ("cp-short-option", "cp -r sub sub2", dict(allow=["Bash(cp *)"]), ("allow", "rule")),
    ("cp-target-shortest-abbrev", "cp --t=src notes", dict(allow=["Bash(cp *)"], deny=SRC_DENIED), ("ask", "guard")),
    # cp reads its sources and writes its target
    ("cp-reads-outside", "cp {o}/notes.txt copy", dict(allow=["Bash(cp *)"]), ("ask", "guard", OUT)),
    ("cp-source-may-be-edit-denied", "cp src/app.py app.bak", dict(allow=["Bash(cp *)"], deny=SRC_DENIED),
     ("allow", "rule")),
    ("cp-target-edit-denied", "cp notes src/app.py", dict(allow=["Bash(cp *)"], deny=SRC_DENIED), ("deny", "rule")),
]


@pytest.mark.parametrize("command, settings, expect", [r[1:] for r in WRITERS], ids=[r[0] for r in WRITERS])
def test_what_a_writer_writes_is_checked_however_it_is_spelt(world, command, settings, expect):
    check(decide(world, command, **settings), expect)


# a deny rule names a program, however the line spells the program
CURL_DENIED = dict(deny=["Bash(curl *)"])
PROGRAM_SPELLINGS = [
    ("plain", "curl x", CURL_DENIED),
    ("single-quoted", "'curl' x", CURL_DENIED),
    ("double-quoted", '"curl" x', CURL_DENIED),
    ("backslash", "c\\url x", CURL_DENIED),
    ("path", "/usr/bin/curl x", CURL_DENIED),
    ("path-after-assignment", "FOO=1 /usr/bin/curl x", CURL_DENIED),
    ("wrapper-by-path", "/usr/bin/timeout 5 curl x", CURL_DENIED),
    ("wrappers-by-path", "/usr/bin/nohup /usr/bin/nice -n 5 curl x", CURL_DENIED),
    ("shell-by-path", "/bin/bash -c 'curl x'", CURL_DENIED),
    ("xargs-options", "ls | xargs -0 -n 2 rm", dict(deny=["Bash(rm *)"])),
    ("xargs-by-path", "ls | /usr/bin/xargs -0 rm", dict(deny=["Bash(rm *)"])),
    ("xargs-program-by-path", "ls | xargs -0 /bin/rm", dict(deny=["Bash(rm *)"])),
    ("ask-rule-quoted", "'git' push origin", dict(ask=["Bash(git push *)"])),
]


@pytest.mark.parametrize("command, rules", [r[1:] for r in PROGRAM_SPELLINGS], ids=[r[0] for r in PROGRAM_SPELLINGS])
def test_a_rule_names_the_program_however_it_is_spelt(world, command, rules):
    decision = decide(world, command, mode="bypassPermissions", allow=["Bash"], **rules)
    assert (decision.behavior, decision.decided_by) == ("ask" if "ask" in rules else "deny", "rule"), decision


LINES = [
    # a line that cannot be read is no exploration: plan mode denies it
    ("unparseable-in-plan", "echo 'oops", dict(mode="plan"), ("deny", "mode", "plan mode")),
    # a read allowed by the rule of the command that reads: the others need no rule for it
    ("read-by-its-own-rule", "cat {o}/notes.txt && echo hi", dict(allow=["Bash(cat *)"]), ("allow", "rule")),
    # an input redirection feeds the whole line: every command must be allowed
    ("input-redirect-needs-every-rule", "echo hi && cat < {o}/notes.txt", dict(allow=["Bash(cat *)"]),
     ("ask", "guard", OUT)),
    ("input-redirect-every-rule", "echo hi && cat < {o}/notes.txt", dict(allow=["Bash(cat *)", "Bash(echo *)"]),
     ("allow", "rule")),
    ("input-redirect-inside-runs", "wc -l < notes", {}, ("allow", "tool")),
    ("read-of-unknown-file-asks", "cat $F", {}, ("ask", "mode")),
    ("read-of-unknown-file-denied-bash", "cat $F", dict(deny=["Bash(cat *)"]), ("deny", "rule")),
    # redirections
    ("redirect-unknown-asks", "echo hi > $OUT", {}, ("ask", "guard", RUN_TIME)),
    ("redirect-acceptEdits", "echo hi > out.txt", dict(mode="acceptEdits"), ("allow", "mode")),
    ("redirect-outside", "echo hi > {o}/out.txt", dict(allow=["Bash(echo *)"]), ("ask", "guard", OUT)),
    ("redirect-after-cd-acceptEdits", "cd sub && echo x > f", dict(mode="acceptEdits"), ("ask", "mode")),
    # acceptEdits runs mkdir/touch/mv/cp inside the working directories, nothing more
    ("acceptEdits-touch", "touch new.txt", dict(mode="acceptEdits"), ("allow", "mode")),
    ("acceptEdits-with-assignment", "FOO=1 touch x", dict(mode="acceptEdits"), ("ask", "mode")),
    ("acceptEdits-rm-asks", "rm notes", dict(mode="acceptEdits"), ("ask", "mode")),
    ("acceptEdits-touch-unknown", "touch $F", dict(mode="acceptEdits"), ("ask", "guard", RUN_TIME)),
    # only a recursive search reads what is below the directory it names
    ("ls-dir-holding-denied", "ls .", dict(deny=["Read(./secret/**)"]), ("allow", "tool")),
    ("acceptEdits-after-cd", "cd sub && touch x", dict(mode="acceptEdits"), ("ask", "mode")),
    ("acceptEdits-copy-in-from-outside", "cp {o}/notes.txt copy", dict(mode="acceptEdits", allow=["Read(/{o}/**)"]),
     ("ask", "mode")),
    ("acceptEdits-copy-out", "cp notes {o}/copy", dict(mode="acceptEdits", allow=["Edit(/{o}/**)"]),
     ("ask", "mode")),
    ("acceptEdits-touch-outside", "touch {o}/x", dict(mode="acceptEdits", allow=["Edit(/{o}/**)"]),
     ("ask", "mode")),
    # syntax hiding a command: only the exact line allows it, and only when it is the line
    ("hidden-exact-rule-among-others", "echo $((X))", dict(allow=["Bash(echo *)", "Bash(echo $((X)))"]),
     ("allow", "rule")),
    ("hidden-other-exact-rule", "echo $((X))", dict(allow=["Bash(echo *)", "Bash(make)"]), ("ask", "mode")),
]


@pytest.mark.parametrize("command, settings, expect", [r[1:] for r in LINES], ids=[r[0] for r in LINES])
def test_what_a_line_reads_and_writes_decides_it(world, command, settings, expect):
    check(decide(world, command, **settings), expect)


SANDBOXED = [
    # inside the sandbox a recursive search cannot read what the Read deny rules mask
    ("search-masked-files", "grep -r x .", dict(deny=["Read(./secret/**)"]), ("allow", "tool")),
    ("search-masked-files-unsandboxed", "grep -r x .", dict(deny=["Read(./secret/**)"], sandboxed=False),
     ("ask", "guard", "searched recursively")),
    # the sandbox's /tmp is its own; the tree the project sits in is the host's
    ("scratch-redirect", "echo x > /tmp/vigil-scratch-test/out", {}, ("allow", "tool")),
    ("scratch-copy-from", "cp /tmp/vigil-scratch-test/a notes.bak", {}, ("allow", "tool")),
    ("host-redirect", "echo x > {o}/out.txt", {}, ("ask", "guard", OUT)),
    ("host-copy-from", "cp {o}/notes.txt notes.bak", {}, ("ask", "guard", OUT)),
]


@pytest.mark.parametrize("command, settings, expect", [r[1:] for r in SANDBOXED], ids=[r[0] for r in SANDBOXED])
def test_what_runs_in_the_sandbox(world, command, settings, expect):
    settings = {"sandboxed": True, **settings}
    check(decide(world, command, **settings), expect)


def test_in_the_sandbox_tmp_is_private_when_the_project_is_not_under_tmp():
    """The usual case: the project lives in a home directory, so nothing under /tmp is the host's."""
    import shutil
    import tempfile

    project = tempfile.mkdtemp(prefix="vigil-project-", dir="/var/tmp")  # wherever the checkout is
    try:
        _tmp_is_private_in_the_sandbox(project)
    finally:
        shutil.rmtree(project, ignore_errors=True)
    _tmp_is_private_in_the_sandbox("/home/alice/project")  # the usual place, whether it exists here or not


def _tmp_is_private_in_the_sandbox(project: str) -> None:
    assert not project.startswith("/tmp/")
    decision = decide((project, "/nonexistent-outside"), "cat /tmp/vigil-scratch-test/notes", sandboxed=True)
    assert (decision.behavior, decision.decided_by) == ("allow", "tool"), decision
    decision = decide((project, "/nonexistent-outside"), "cat /tmp/vigil-scratch-test/notes")
    assert (decision.behavior, decision.decided_by) == ("ask", "guard"), decision  # unsandboxed: the host's /tmp
    # the rest of the host's files are the host's, sandbox or not
    decision = decide((project, "/nonexistent-outside"), "cat /etc/hostname", sandboxed=True)
    assert (decision.behavior, decision.decided_by) == ("ask", "guard"), decision


# bypassPermissions runs writes unasked, protected paths included (docs/architecture.md §9.2): a write whose
# file is only known at run time asks there only when an Edit rule exists that it could slip past
@pytest.mark.parametrize("command", ["echo x > $F", "touch $F", "find . -name '*.o' | xargs rm", "cp -t $D a"])
@pytest.mark.parametrize(("rules", "expect"), [
    ({}, "allow"),
    ({"deny": ["Edit(./src/**)"]}, "ask"),
    ({"ask": ["Write(./notes)"]}, "ask"),
    ({"deny": ["Bash(curl *)"]}, "allow"),
], ids=["no-rules", "edit-deny", "write-ask", "other-rule"])
def test_in_bypass_a_write_known_only_at_run_time_asks_only_past_an_edit_rule(world, command, rules, expect):
    decision = decide(world, command, mode="bypassPermissions", **rules)
    assert decision.behavior == expect, decision
    if expect == "ask":
        assert RUN_TIME in decision.reason


# operands spelt like options are still files: after `--` everything is one (a file named `--`
# too), and an option getopt does not know (`--=x`) hides none of them
@pytest.mark.parametrize(("command", "deny"), [
    ("rm -- --", ["Edit(./--)"]),
    ("cp --=x notes src/app.py", SRC_DENIED),
], ids=["file-named-dashdash", "unknown-long-option"])
def test_operands_spelt_like_options_still_meet_the_deny_rules(world, command, deny):
    check(decide(world, command, allow=["Bash(rm *)", "Bash(cp *)"], deny=deny), ("deny", "rule"))


def test_in_the_sandbox_a_tmp_link_to_a_file_of_the_host_is_the_hosts(world, tmp_path_factory):
    """/tmp is the sandbox's own, but the host's link there points at the host's file: the write
    is checked as a write to that file (outside the working directories: it asks)."""
    import os
    import tempfile

    target_dir = tempfile.mkdtemp(prefix="vigil-host-", dir="/var/tmp")
    link = tempfile.mktemp(prefix="vigil-link-", dir="/tmp")
    try:
        os.symlink(os.path.join(target_dir, "file"), link)
        decision = decide(world, f"echo x > {link}", allow=["Bash(echo *)"], sandboxed=True)
        assert (decision.behavior, decision.decided_by) == ("ask", "guard"), decision
        assert OUT in decision.reason
    finally:
        os.unlink(link)
        os.rmdir(target_dir)
