"""A property of the read-only classifier: whatever it lets run without asking changes nothing and
reveals nothing a Read deny rule covers.

Random command lines come from a grammar of programs (read-only ones and others), their flags
(safe, dangerous, abbreviated, glued), arguments (plain paths, the canary's denied path in every
spelling — globs, `$PWD`, `~+`, `$'…'`, `..` — substitutions, subscripts), quoting, `cd`, pipes,
lists and redirections. Each is decided by the policy of a headless session on the canary
workspace; every line decided read-only is then run for real:

* with the sandbox: through the session's own Bash tool, inside Vigil's sandbox;
* without a sandbox (the policy told there is none): inside a bare bubblewrap that keeps the host
  safe but masks nothing and lets the whole test directory be written — so the classifier and
  the path checks alone stand between the command and the canary.

Either way: no file under the test's root changes, no canary is printed, nothing reaches the
network.
"""

from __future__ import annotations

import asyncio
import shutil
import socket
import subprocess

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.needs import need_program
from tests.sec_kit import Tripwire, attack_settings, attempt, canary_root, isolate, make_canary, open_session
from tui_app.runtime.permissions.decision import PermissionQuery

__all__ = ["canary_root"]

READERS = ["cat", "ls", "head", "tail", "wc", "grep", "rg", "find", "sort", "uniq", "diff", "stat", "du", "git",
           "echo", "printf", "test", "[", "date", "cut", "nl", "od", "tac", "basename", "realpath", "cd", "pwd"]
OTHERS = ["touch", "rm", "cp", "mv", "tee", "sed", "awk", "env", "xargs", "python3", "curl", "bash", "less",
          "mkdir", "ln", "chmod", "hostname"]
FLAGS = {
    "cat": ["-n", "-A", "--number"], "ls": ["-la", "-R", "-1", "--color=never", "-I", "--hide=x"],
    "head": ["-n", "-5", "-c1"], "tail": ["-n", "+1", "-f"], "wc": ["-l", "--files0-from=-"],
    "grep": ["-r", "-R", "-n", "-e", "-f", "-i", "--include=*.txt", "-d", "recurse", "-o"],
    "rg": ["-n", "--pre", "cat", "-uu", "-L", "-z", "--files"], "find": ["-name", "-type", "f", "-delete",
                                                                        "-exec", "-fprint", "-maxdepth", "1"],
    "sort": ["-o", "-opwned", "--out=pwned", "--compress-program=touch", "-T", "-r", "--files0-from=-"],
    "uniq": ["-c"], "diff": ["-u", "-r", "--from-file"], "git": ["status", "diff", "log", "show", "--no-index",
                                                                  "--output=pwned", "--outp=pwned", "-c", "branch",
                                                                  "-p", "--stat", "-C", ".."],
    "date": ["-s", "--set=2001-01-01", "-f", "+%s", "-u", "-r"], "printf": ["-v", "%s\\n", "%d"],
    "test": ["-v", "-f", "-e", "-R", "-n", "="], "[": ["-v", "-f", "-e", "]"], "echo": ["-n", "-e"],
    "cd": ["-P"], "du": ["-sh", "-X", "-a"], "stat": ["-c", "%s"], "cut": ["-c1-"], "od": ["-c"],
}
PATHS = ["notes.txt", "src", "src/app.py", ".", "..", "secret/key", "se*/key", "secre?/key", "*/key", "s[e]cret/key",
         "[^x]ecret/key", "secret", "secret/*", "$PWD/secret/key", "\"$PWD\"/secret/key", "~+/secret/key",
         "$'\\x73ecret/key'", "src/../secret/key", "docs/secret_link", "{outside}/outside.txt",
         "../outside/outside.txt", "~/.bashrc", "/etc/hostname", "-", "se{cret,x}/key", "$HOME/.bashrc",
         "{root}/proj-evil/x.txt", "pwned", "*"]
NASTY = ["'a[$(touch pwned)]'", "\"a[\\$(touch pwned)]\"", "$(touch pwned)", "`touch pwned`",
         "${x:-$(touch pwned)}", "$(( a[$(touch pwned)] ))", "$_", "<(touch pwned)", "CANARY", "hello",
         "'$(touch pwned)'"]
PREFIXES = ["", "", "", "", "", "", "cd secret && ", "cd .. && ", "cd src; ", "LANG=C ", "FOO=1 ", "timeout 5 ",
            "nohup ",
            ": -v; ", "cd se* && "]
JOINERS = [" && ", " ; ", " | ", " || "]
REDIRECTS = ["", "", "", "", "", "", " 2>/dev/null", " > pwned", " >> notes.txt", " < secret/key", " < notes.txt",
             " 2>&1", " > /dev/null"]


@st.composite
def simple_command(draw):
    program = draw(st.sampled_from(READERS * 4 + OTHERS))
    words = [program]
    for _ in range(draw(st.integers(0, 3))):
        kind = draw(st.sampled_from(["flag", "flag", "path", "path", "path", "nasty"]))
        if kind == "flag":
            words.append(draw(st.sampled_from(FLAGS.get(program, ["-x"]))))
        elif kind == "path":
            words.append(draw(st.sampled_from(PATHS)))
        else:
            words.append(draw(st.sampled_from(NASTY)))
    return " ".join(words)


#: syntax where bash evaluates a subscript or arithmetic without any command showing
CONSTRUCTS = ["[[ -v {x} ]]", "[[ 1 -eq {x} ]]", "(( {x} ))", "echo $(( {x} ))", "echo ${{v:-{x}}}",
              "echo \"${{v:{x}}}\"", "declare -p {x}", "read -t 0 {x}", "let {x}",
              "for (( i={x}; i<1; i++ )); do :; done",
              "a[{x}]=1", "unset {x}", "echo ${{!v}}"]


@st.composite
def construct(draw):
    return draw(st.sampled_from(CONSTRUCTS)).format(x=draw(st.sampled_from([*NASTY, "'a[1]'", "x"])))


@st.composite
def command_line(draw):
    parts = [draw(st.one_of(simple_command(), simple_command(), simple_command(), construct()))
             for _ in range(draw(st.sampled_from([1, 1, 1, 2, 2, 3])))]
    line = parts[0]
    for part in parts[1:]:
        line += draw(st.sampled_from(JOINERS)) + part
    return draw(st.sampled_from(PREFIXES)) + line + draw(st.sampled_from(REDIRECTS))


ATTACKS = ["test -v 'a[$(touch pwned)]'", "cat se*/key", "cd secret && cat key", "grep -r CANARY .",
           "cat $'\\x73ecret/key'", "sort --out=pwned notes.txt", "git diff --no-index /dev/null secret/key",
           "cat ~+/secret/key", "cat [^x]ecret/key", ": -v; printf \"$_\" 'a[$(touch pwned)]' x",
           "cat {outside}/outside.txt", "cd .. && cat outside/outside.txt", "uniq notes.txt pwned", "cat *"]


class Bench:
    """One canary, one session, one event loop for all the examples of a test."""

    def __init__(self, root, monkeypatch, sandbox: bool):
        self.canary = make_canary(root, attack_settings(**({} if sandbox else {"enabled": False})))
        isolate(monkeypatch, self.canary)
        self.tripwire = Tripwire()
        self.loop = asyncio.new_event_loop()
        self.session = self.loop.run_until_complete(open_session(self.canary))
        self.sandbox = sandbox
        self.before = self.canary.snapshot()
        self.ran = 0

    def close(self) -> None:
        self.loop.run_until_complete(self.session.close())
        self.loop.close()
        self.tripwire.close()

    def auto_allowed(self, command: str) -> bool:
        spec = self.session.registry.resolve("Bash")
        data = {"command": command}
        decision = self.session.policy.decide(PermissionQuery(spec, data, spec.flags_of(data),
                                                              str(self.canary.proj)))
        return decision.behavior == "allow" and decision.decided_by == "tool"

    def check(self, command: str) -> None:
        command = self.canary.fill(command).replace("{tw}", self.tripwire.url)
        if not self.auto_allowed(command):
            return
        self.ran += 1
        if self.sandbox:
            found = self.loop.run_until_complete(attempt(self.session, self.canary, "Bash", {"command": command}))
            assert found.sandboxed, found.describe()
            text, changed = found.text(), found.changed
        else:
            text = bare_bubblewrap(self.canary, command)
            after = self.canary.snapshot()
            changed = {k for k in set(after) | set(self.before) if after.get(k) != self.before.get(k)}
        assert self.canary.secret not in text and self.canary.outside_secret not in text, (command, text[:500])
        assert not changed, (command, changed)
        assert not self.tripwire.hits, (command, self.tripwire.hits)


def bare_bubblewrap(canary, command: str) -> str:
    """Root read-only, no network, the whole test root writable, nothing masked: the host is safe,
    the canaries are not."""
    argv = [shutil.which("bwrap") or "bwrap", "--die-with-parent", "--unshare-all", "--ro-bind", "/", "/",
            "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--bind", str(canary.root), str(canary.root),
            "--chdir", str(canary.proj), "--", "bash", "-c", command]
    done = subprocess.run(argv, capture_output=True, timeout=60, stdin=subprocess.DEVNULL,
                          env={"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(canary.home), "LANG": "C.UTF-8"})
    return done.stdout.decode("utf-8", "replace") + done.stderr.decode("utf-8", "replace")


@pytest.fixture(params=["sandboxed", "no-sandbox"])
def bench(request, canary_root, monkeypatch):
    need_program("bwrap")
    need_program("socat")
    made = Bench(canary_root, monkeypatch, sandbox=request.param == "sandboxed")
    yield made
    made.close()


PROPERTY = settings(max_examples=400, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                           HealthCheck.filter_too_much])


@PROPERTY
@given(line=command_line())
@example(line=ATTACKS[0]).via("the issue's attacks")
def test_what_runs_unasked_changes_nothing_and_reveals_nothing(bench, line):
    bench.check(line)


def test_the_attacks_and_the_grammar_really_run_something(bench):
    """The property is not empty: plain reads are auto-allowed and run; the attacks are not."""
    for attack in ATTACKS:
        bench.check(attack)
    assert bench.ran <= 1  # `cat *` (every match checked) at most
    for plain in ("cat notes.txt", "ls -la src", "grep -rn hello src", "git status", "wc -l notes.txt src/app.py"):
        assert bench.auto_allowed(bench.canary.fill(plain)), plain
        bench.check(plain)


# ---- under allow rules: what a rule allows writes no file it should not, opens no socket, and
# runs no denied program, however the line spells it (issue 27 class 7) ---------------------------

RULED = {"permissions": {"allow": ["Bash(echo *)", "Bash(git log *)", "Bash(sort *)", "Bash(uniq *)", "Bash(cat *)",
                                   "Bash(git diff *)"],
                         "deny": ["Bash(touch *)", "Bash(rm *)", "Read(./secret/**)"]},
         "sandbox": {"enabled": False}}
TOUCH = ["touch", "\\touch", "'touch'", '"touch"', "/usr/bin/touch", "$'\\x74ouch'", "t''ouch", "$T", "${T}",
         "$(echo touch)", "`echo touch`", "/usr/bin/tou?h"]
LAUNCH = ["", "", "exec ", "env ", "env -i PATH=/usr/bin:/bin ", "command ", "nice -n 1 ", "timeout 5 ", "nohup ",
          "env -- ", "builtin exec "]
TARGETS = ["~/.bashrc", "{home}/.bashrc", "$HOME/.bashrc", ".git/config", "./.git/config", "{outside}/w.txt",
           "../outside/w.txt", "~+/../outside/w.txt", "written.txt"]
WRITERS = ["git log", "git diff", "sort notes.txt", "uniq notes.txt", "echo hi", "cat notes.txt"]
OPTIONS = ["--output={t}", "--output {t}", "--outp={t}", "--out={t}", "-o {t}", "-o{t}", "-ro {t}", "'--output={t}'",
           "\"--output\" {t}", "{t}"]
DEVICES = ["/dev/tcp/127.0.0.2/{port}", "\"/dev/tcp/127.0.0.2/{port}\"", "'/dev/tcp/127.0.0.2/{port}'",
           "/dev/t\\cp/127.0.0.2/{port}", "$'/dev/\\x74cp/127.0.0.2/{port}'", "/dev/udp/127.0.0.2/{port}"]
NET_OPS = ["<", ">", ">>", "&>", "2>", "3<", ">|"]


@st.composite
def ruled_line(draw):
    kind = draw(st.sampled_from(["spelled", "spelled", "option", "option", "network"]))
    if kind == "spelled":
        program = draw(st.sampled_from(TOUCH))
        shape = draw(st.sampled_from(["{l}{p} touched", "{l}{p} touched", "trap '{p} touched' EXIT",
                                      "find . -maxdepth 0 -exec {p} touched ';'", "echo touched | xargs -n 1 {p}",
                                      "env bash -c '{p} touched'", "echo hi && {l}{p} touched"]))
        line = shape.format(l=draw(st.sampled_from(LAUNCH)), p=program)
        return ("T=touch; " if "T" in program else "") + line
    if kind == "option":
        option = draw(st.sampled_from(OPTIONS)).format(t=draw(st.sampled_from(TARGETS)))
        writer = draw(st.sampled_from(WRITERS))
        program, _, rest = writer.partition(" ")
        return f"{writer} {option}" if draw(st.booleans()) else f"{program} {option} {rest}"
    device = draw(st.sampled_from(DEVICES))
    return f"{draw(st.sampled_from(['echo hi', 'cat notes.txt']))} {draw(st.sampled_from(NET_OPS))} {device}"


class RuledBench:
    """One canary under RULED; a line the policy allows is run as plain bash in the canary's home
    (no sandbox at all: the rules alone stand between the line and the files)."""

    def __init__(self, root, monkeypatch):
        self.canary = make_canary(root, RULED)
        isolate(monkeypatch, self.canary)
        self.loop = asyncio.new_event_loop()
        self.session = self.loop.run_until_complete(open_session(self.canary))
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.2", 0))
        self.listener.listen(64)
        self.listener.setblocking(False)
        self.port = self.listener.getsockname()[1]
        self.allowed = 0

    def close(self) -> None:
        self.loop.run_until_complete(self.session.close())
        self.loop.close()
        self.listener.close()

    def guarded(self) -> dict[str, str]:
        """What no allowed line may change: everything outside the project, `.git/config`, and
        whether the denied program left its mark anywhere."""
        snap = self.canary.snapshot()
        return {k: v for k, v in snap.items()
                if not k.startswith("proj/") or k == "proj/.git/config" or k.endswith("touched")}

    def connections(self) -> int:
        count = 0
        while True:
            try:
                conn, _ = self.listener.accept()
            except (BlockingIOError, OSError):
                return count
            conn.close()
            count += 1

    def check(self, line: str) -> None:
        command = self.canary.fill(line).replace("{port}", str(self.port))
        spec = self.session.registry.resolve("Bash")
        data = {"command": command}
        decision = self.session.policy.decide(PermissionQuery(spec, data, spec.flags_of(data), str(self.canary.proj)))
        if decision.behavior != "allow":
            return
        self.allowed += 1
        before = self.guarded()
        subprocess.run(["bash", "-c", command], cwd=self.canary.proj, capture_output=True, timeout=30,
                       stdin=subprocess.DEVNULL, env={"PATH": "/usr/local/bin:/usr/bin:/bin",
                                                      "HOME": str(self.canary.home), "LANG": "C.UTF-8"})
        after = self.guarded()
        changed = {k for k in set(before) | set(after) if before.get(k) != after.get(k)}
        assert not changed, (command, decision, changed)
        assert not self.connections(), (command, decision)


@pytest.fixture
def ruled(canary_root, monkeypatch):
    made = RuledBench(canary_root, monkeypatch)
    yield made
    made.close()


@settings(max_examples=250, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(line=ruled_line())
@example(line="git log --output ~/.bashrc").via("the issue's attack")
@example(line="echo hi < /dev/tcp/127.0.0.2/{port}").via("the issue's attack")
@example(line="T=touch; env -i $T touched").via("the issue's attack")
def test_what_a_rule_allows_writes_no_guarded_file_and_opens_no_socket(ruled, line):
    ruled.check(line)


def test_the_ruled_property_runs_something(ruled):
    """Not empty: a harmless line under the rules is allowed and run, and the effect the property
    looks for is real when the rules are not asked (plain bash)."""
    ruled.check("sort -o written.txt notes.txt && echo hi")
    assert ruled.allowed == 1
    subprocess.run(["bash", "-c", f"echo hi > /dev/tcp/127.0.0.2/{ruled.port}"], timeout=30)
    assert ruled.connections() == 1
