"""Vigil and the real Claude Code, side by side: the same model stream (the loopback Anthropic
server), the same project files, the same settings and flags; then, per tool call, did it run, was
it denied, or did it fail? Also: the keys of the hook input each sends, and whether the official
Agent SDK's parser reads every stream-json line of both.

    python -m tests.differential_claude        # the matrix, one line per call, and the agreement

Each case runs headless (`-p … --output-format stream-json --verbose`), so a call that would ask
is denied by both. Each CLI gets a fresh project, a fresh HOME (Claude Code's trust dialog marked
accepted, so project rules count) and its own loopback server with the case's replies queued.
"""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.wire_server import LoopbackServer, Reply, anthropic_events, sse

ROOT = Path(__file__).resolve().parent.parent
RECORD = ROOT / "tests" / "hooks" / "record.py"
CLAUDE_ENV = {"ANTHROPIC_API_KEY": "sk-test", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
              "DISABLE_TELEMETRY": "1", "DISABLE_AUTOUPDATER": "1",
              # as root, Claude Code takes bypassPermissions only in a declared sandbox
              "IS_SANDBOX": "1"}
FILES = {"notes.txt": "hello world\n", "src/app.py": "def main():\n    return 0\n"}
PROMPT = "Work on the project."


def hook(response: dict[str, Any] | None = None, exit_code: int = 0, message: str = "") -> dict[str, Any]:
    """A command hook that records its stdin to $HOOK_LOG, then answers (JSON, or an exit code)."""
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(RECORD))} \"$HOOK_LOG\""
    if response is not None:
        command += " " + shlex.quote(json.dumps(response))
    if exit_code:
        command += f"; echo {shlex.quote(message)} >&2; exit {exit_code}"
    return {"type": "command", "command": command}


def pre(word: str, reason: str) -> dict[str, Any]:
    return hook({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": word,
                                        "permissionDecisionReason": reason}})


@dataclass
class Case:
    name: str
    #: model steps; each a list of tool calls ({id, name, input}); `$PROJ` is the project's path
    steps: list[list[dict[str, Any]]]
    settings: dict[str, Any] = field(default_factory=dict)
    mode: str | None = None
    #: driven by the Agent SDK (`query()` with a `can_use_tool` that allows these tools and
    #: denies the rest) instead of `-p`
    sdk_allows: tuple[str, ...] | None = None


def call(call_id: str, name: str, **data: Any) -> dict[str, Any]:
    return {"id": call_id, "name": name, "input": data}


#: the probe calls, reused across cases: reads in and out of the project, edits of a file that was
#: read, writes, commands that only read, that change the project, or that reach outside it
def probes(prefix: str) -> list[list[dict[str, Any]]]:
    p = prefix
    return [
        [call(f"{p}_read", "Read", file_path="$PROJ/notes.txt"),
         call(f"{p}_read2", "Read", file_path="$PROJ/src/app.py"),
         call(f"{p}_readout", "Read", file_path="/etc/hostname"),
         call(f"{p}_ls", "Bash", command="ls"),
         call(f"{p}_cat", "Bash", command="cat notes.txt"),
         call(f"{p}_catout", "Bash", command="cat /etc/hostname")],
        [call(f"{p}_edit", "Edit", file_path="$PROJ/notes.txt", old_string="hello", new_string="goodbye"),
         call(f"{p}_edit2", "Edit", file_path="$PROJ/src/app.py", old_string="return 0", new_string="return 1"),
         call(f"{p}_write", "Write", file_path="$PROJ/created.txt", content="new file\n"),
         call(f"{p}_touch", "Bash", command="touch touched.txt"),
         call(f"{p}_rm", "Bash", command="rm -rf build"),
         call(f"{p}_redirect", "Bash", command="echo hi > redirected.txt"),
         call(f"{p}_compound", "Bash", command="ls && touch compound.txt"),
         call(f"{p}_subst", "Bash", command="echo $(touch substituted.txt)"),
         call(f"{p}_mkdir", "Bash", command="mkdir made"),
         call(f"{p}_outside", "Bash", command="touch ../outside.txt")],
    ]


#: what a call leaves behind when it runs (checked on both sides: "ran" must mean it ran)
EFFECTS = {"write": "created.txt", "touch": "touched.txt", "redirect": "redirected.txt",
           "compound": "compound.txt", "subst": "substituted.txt", "mkdir": "made", "outside": "../outside.txt"}

CASES = [
    Case("default", probes("d")),
    Case("acceptEdits", probes("ae"), mode="acceptEdits"),
    Case("plan", probes("pl"), mode="plan"),
    Case("dontAsk", probes("da"), mode="dontAsk"),
    Case("bypassPermissions", probes("bp"), mode="bypassPermissions"),
    Case("allow rules", probes("al"), settings={"permissions": {
        "allow": ["Bash(touch *)", "Edit", "Write(/created.txt)", "Bash(mkdir:*)"]}}),
    Case("deny rules over bypass", probes("dn"), mode="bypassPermissions", settings={"permissions": {
        "deny": ["Bash(rm *)", "Read(./notes.txt)", "Write", "Bash(ls)"]}}),
    Case("ask rules", probes("ak"), settings={"permissions": {
        "allow": ["Bash", "Edit", "Write"], "ask": ["Bash(touch *)", "Write(/created.txt)"]}}),
    Case("PreToolUse hooks", probes("hk"), settings={"hooks": {"PreToolUse": [
        {"matcher": "Write", "hooks": [pre("allow", "writes are fine")]},
        {"matcher": "Read|Glob", "hooks": [pre("ask", "a person must look")]},
        {"matcher": "Bash", "hooks": [hook(exit_code=2, message="no shell")]},
        {"matcher": "Edit", "hooks": [pre("deny", "no edits")]}]}}),
    Case("PostToolUse block and hook allow under a deny rule", probes("po"), settings={
        "permissions": {"allow": ["Edit", "Bash(touch *)"], "deny": ["Bash(mkdir *)"]},
        "hooks": {"PostToolUse": [{"matcher": "Edit|Bash", "hooks": [hook({"decision": "block",
                                                                            "reason": "lint says no"})]}],
                  "PreToolUse": [{"matcher": "Bash", "hooks": [pre("allow", "hook allows shell")]}]}}),
    Case("hooks that only listen", probes("ls"), settings={"hooks": {
        "PermissionRequest": [{"matcher": "Bash|Edit|Write", "hooks": [hook()]}],
        "UserPromptSubmit": [{"hooks": [hook()]}], "Stop": [{"hooks": [hook()]}]}}),
    # the Agent SDK drives both: asks go to its can_use_tool callback, which allows edits and denies commands
    Case("SDK can_use_tool", probes("sd"), sdk_allows=("Edit", "Write")),
    Case("SDK can_use_tool, acceptEdits, hook asks", probes("sh"), mode="acceptEdits", sdk_allows=("Read", "Bash"),
         settings={"hooks": {"PreToolUse": [{"matcher": "Edit", "hooks": [pre("ask", "look at this edit")]}]}}),
]


# ---- running one side -----------------------------------------------------------------------------

def replies(steps: list[list[dict[str, Any]]], project: Path) -> list[Reply]:
    out = []
    for number, calls in enumerate([*steps, []]):
        concrete = json.loads(json.dumps(calls).replace("$PROJ", str(project)))
        events = anthropic_events(text=f"Step {number + 1}." if concrete else "All done.", tool_calls=concrete)
        events[0]["message"]["id"] = f"msg_diff_{number:03d}"  # each reply its own id (Claude Code merges same ids)
        out.append(Reply(pieces=sse(events)))
    return out


@dataclass
class Run:
    lines: list[dict[str, Any]]
    stderr: str
    returncode: int
    requests: int
    hook_inputs: list[dict[str, Any]]
    project: Path
    #: calls the SDK's can_use_tool callback was asked about (SDK cases)
    asked: list[str] = field(default_factory=list)

    @property
    def result(self) -> dict[str, Any]:
        return next((ln for ln in reversed(self.lines) if ln.get("type") == "result"), {})

    def outcomes(self) -> dict[str, str]:
        """Per call: `denied` (in permission_denials), `failed` (an error result), `ran`."""
        denied = {d["tool_use_id"] for d in self.result.get("permission_denials", [])}
        results: dict[str, dict[str, Any]] = {}
        for line in self.lines:
            if line.get("type") == "user" and isinstance(line.get("message", {}).get("content"), list):
                for block in line["message"]["content"]:
                    if isinstance(block, dict) and block.get("type") == "tool_result":
                        results[block["tool_use_id"]] = block
        out = {}
        for call_id, block in results.items():
            out[call_id] = "denied" if call_id in denied else "failed" if block.get("is_error") else "ran"
        return out


def claude_command(binary: Path, case: Case) -> list[str]:
    mode = ["--permission-mode", case.mode] if case.mode else []
    return [str(binary), "-p", PROMPT, "--output-format", "stream-json", "--verbose", *mode]


def vigil_command(case: Case) -> list[str]:
    mode = ["--permission-mode", case.mode] if case.mode else []
    return [sys.executable, "-m", "tui_app", "-p", PROMPT, "--output-format", "stream-json", "--verbose", *mode]


def wrapper_script(base: Path, side: str, claude: Path) -> Path:
    """What `cli_path` points at: this worktree's vigil, or the pinned Claude Code; stdout is
    copied, so the lines compared are exactly those the SDK read."""
    target = shlex.quote(str(claude)) if side == "claude" else f"{shlex.quote(sys.executable)} -m tui_app"
    script = base / f"{side}-cli"
    script.write_text(f"#!/bin/sh\n{target} \"$@\" | tee {shlex.quote(str(base / 'stdout.jsonl'))}\n")
    script.chmod(0o755)
    return script


async def drive_with_sdk(case: Case, command: Path, project: Path, env: dict[str, str], base: Path,
                         timeout: float) -> tuple[list[str], str, int]:
    from claude_agent_sdk import ClaudeAgentOptions, PermissionResultAllow, PermissionResultDeny, query

    asked: list[str] = []
    stderr: list[str] = []
    allows = case.sdk_allows or ()

    async def can_use_tool(name: str, data: dict[str, Any], context: Any) -> Any:
        asked.append(context.tool_use_id or name)
        return PermissionResultAllow() if name in allows else PermissionResultDeny(message=f"{name} is refused")

    async def prompts() -> Any:
        yield {"type": "user", "message": {"role": "user", "content": PROMPT}}

    options = ClaudeAgentOptions(cli_path=str(command), cwd=str(project), env=env, can_use_tool=can_use_tool,
                                 permission_mode=case.mode, stderr=stderr.append)  # type: ignore[arg-type]
    code = 0
    try:
        async with asyncio.timeout(timeout):
            async for _message in query(prompt=prompts(), options=options):
                pass
    except Exception as exc:
        stderr.append(f"{type(exc).__name__}: {exc}")
        code = 1
    return asked, "\n".join(stderr), code


async def run_side(side: str, case: Case, claude: Path, timeout: float = 180.0) -> Run:
    base = Path(tempfile.mkdtemp(prefix=f"diff-{side}-"))
    project, home = base / "project", base / "home"
    for name, text in FILES.items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text(text)
    home.mkdir()
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").write_text(json.dumps(case.settings))
    (home / ".claude.json").write_text(json.dumps({"projects": {str(project): {"hasTrustDialogAccepted": True}}}))
    hook_log = base / "hooks.jsonl"
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("ANTHROPIC_", "CLAUDE_", "OPENAI_", "VIGIL_", "MAX_THINKING"))}
    with LoopbackServer() as server:
        server.queue(*replies(case.steps, project))
        # both CLIs trust the project, as a user who accepted each one's trust dialog: Claude Code's
        # mark is in ~/.claude.json above, Vigil's is VIGIL_TRUST_PROJECT (its hooks run only then)
        env.update(CLAUDE_ENV, HOME=str(home), ANTHROPIC_BASE_URL=server.url, HOOK_LOG=str(hook_log),
                   PYTHONPATH=str(ROOT), VIGIL_HOME=str(base / "vigil-home"), VIGIL_TRUST_PROJECT="1")
        asked: list[str] = []
        if case.sdk_allows is not None:
            sdk_env = {**CLAUDE_ENV, "HOME": str(home), "ANTHROPIC_BASE_URL": server.url, "HOOK_LOG": str(hook_log),
                       "PYTHONPATH": str(ROOT), "VIGIL_HOME": str(base / "vigil-home"), "OPENAI_API_KEY": "",
                       "OPENAI_BASE_URL": "", "VIGIL_TRUST_PROJECT": "1"}
            asked, errors, code = await drive_with_sdk(case, wrapper_script(base, side, claude), project, sdk_env,
                                                       base, timeout)
            out_text = (base / "stdout.jsonl").read_text() if (base / "stdout.jsonl").exists() else ""
        else:
            command = claude_command(claude, case) if side == "claude" else vigil_command(case)
            process = await asyncio.create_subprocess_exec(*command, cwd=project, env=env,
                                                           stdin=asyncio.subprocess.DEVNULL,
                                                           stdout=asyncio.subprocess.PIPE,
                                                           stderr=asyncio.subprocess.PIPE)
            try:
                out, err = await asyncio.wait_for(process.communicate(), timeout)
            except TimeoutError:
                process.kill()
                out, err = await process.communicate()
            out_text, errors, code = out.decode(), err.decode(), process.returncode or 0
        requests = len(server.requests)
    lines = [json.loads(line) for line in out_text.splitlines() if line.strip().startswith("{")]
    hooks = [json.loads(line)["stdin"] for line in hook_log.read_text().splitlines()] if hook_log.exists() else []
    return Run(lines, errors, code, requests, hooks, project, asked)


# ---- comparing --------------------------------------------------------------------------------------

@dataclass
class CaseReport:
    case: Case
    claude: Run
    vigil: Run
    rows: list[tuple[str, str, str, str]]  # (call id, tool, claude outcome, vigil outcome)

    @property
    def agreeing(self) -> int:
        return sum(1 for _, _, c, v in self.rows if c == v)


async def compare(case: Case, claude: Path) -> CaseReport:
    claude_run, vigil_run = await asyncio.gather(run_side("claude", case, claude), run_side("vigil", case, claude))
    ours, theirs = vigil_run.outcomes(), claude_run.outcomes()
    rows = []
    for step in case.steps:
        for c in step:
            rows.append((c["id"], c["name"], theirs.get(c["id"], "missing"), ours.get(c["id"], "missing")))
    return CaseReport(case, claude_run, vigil_run, rows)


async def run_matrix(claude: Path, cases: list[Case] = CASES, parallel: int = 2) -> list[CaseReport]:
    gate = asyncio.Semaphore(parallel)

    async def one(case: Case) -> CaseReport:
        async with gate:
            return await compare(case, claude)

    return list(await asyncio.gather(*(one(c) for c in cases)))


def table(reports: list[CaseReport], explained: dict[tuple[str, str], str] | None = None) -> str:
    explained = explained or {}
    out = []
    total = agree = 0
    for report in reports:
        out.append(f"## {report.case.name}")
        for call_id, tool, theirs, ours in report.rows:
            total += 1
            agree += theirs == ours
            mark = "  " if theirs == ours else "≠ "
            why = explained.get((report.case.name, call_id), "") if theirs != ours else ""
            out.append(f"{mark}{call_id:<14} {tool:<6} claude={theirs:<7} vigil={ours:<7} {why}")
    ran = sum((theirs == "ran") == (ours == "ran") for r in reports for _, _, theirs, ours in r.rows)
    out.append(f"\nagreement: {agree}/{total} calls ({100 * agree / max(total, 1):.1f}%) on ran / denied / failed; "
               f"{ran}/{total} ({100 * ran / max(total, 1):.1f}%) on ran / not run")
    return "\n".join(out)


if __name__ == "__main__":
    from tests.real_agents import CLAUDE_BINARY
    from tests.test_differential_claude import EXPLAINED

    print(table(asyncio.run(run_matrix(CLAUDE_BINARY)), EXPLAINED))
