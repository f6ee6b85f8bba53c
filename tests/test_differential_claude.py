"""The differential test: Vigil and the pinned Claude Code (2.1.332) given the same model stream,
the same project and the same settings (tests/differential_claude.py has the matrix). Per call,
ran / denied / failed must agree, or the disagreement must be one of the explained ones below;
the hook input Vigil sends must hold every key Claude Code's holds; the official Agent SDK's
parser must read every stream-json line of both."""

from __future__ import annotations

import asyncio
import os
from collections import defaultdict

import pytest
from claude_agent_sdk._internal.message_parser import parse_message

from tests.differential_claude import EFFECTS, CaseReport, run_matrix, table
from tests.real_agents import claude_binary

SANDBOX = ("Vigil runs Bash in its sandbox (on wherever bubblewrap works; Claude Code's is off by default): the "
           "permissions let `touch ../outside.txt` run, and the sandbox stops the write (Read-only file system)")
PLAN_READ = ("plan mode: Claude Code 2.1.332 lets Read reach outside the working directories; Vigil asks there in "
             "every mode but bypassPermissions (issue 14; headless: denied)")
ACCEPT_RM = ("acceptEdits: Claude Code 2.1.332 lets `rm` inside the project run; Vigil auto-allows only "
             "mkdir/touch/mv/cp there (docs/architecture.md §9.2) and asks for rm (headless: denied)")
ORDER = ("nothing runs on either side: Claude Code applies deny rules and PreToolUse hooks before the tool's own "
         "checks; Vigil runs the tool's checks first (docs §4, stage 3), and this file was never read (that Read "
         "was refused), so the Edit fails its read-before-edit check instead of being denied")
BARE_EDIT = ("a bare `Edit` allow rule: Vigil applies it to every editing tool (docs §9.2); Claude Code 2.1.332 "
             "matches a bare name to that tool only, so its Write asks (headless: denied)")
WRITE_PATH = ("a `Write(path)` rule: Vigil matches the path; Claude Code 2.1.332 ignores a path on Write rules "
              "(it spells file rules `Edit(path)`), so its ask rule does not apply")

EXPLAINED: dict[tuple[str, str], str] = {
    **{(case, f"{p}_outside"): SANDBOX
       for case, p in [("bypassPermissions", "bp"), ("deny rules over bypass", "dn"),
                       ("PostToolUse block and hook allow under a deny rule", "po"),
                       ("SDK can_use_tool, acceptEdits, hook asks", "sh")]},
    ("plan", "pl_readout"): PLAN_READ,
    ("acceptEdits", "ae_rm"): ACCEPT_RM,
    ("deny rules over bypass", "dn_edit"): ORDER,
    ("PreToolUse hooks", "hk_edit"): ORDER,
    ("PreToolUse hooks", "hk_edit2"): ORDER,
    ("allow rules", "al_write"): f"{BARE_EDIT}; and {WRITE_PATH}",
    ("PostToolUse block and hook allow under a deny rule", "po_write"): BARE_EDIT,
    ("ask rules", "ak_write"): WRITE_PATH,
}
#: explained disagreements that must still be refusals on both sides (neither runs the call)
NOT_RUN_EITHER_WAY = {key for key, why in EXPLAINED.items() if why == ORDER}


def disagreements(reports: list[CaseReport]) -> list[tuple[str, str, str, str]]:
    return [(r.case.name, call_id, theirs, ours) for r in reports for call_id, _, theirs, ours in r.rows
            if theirs != ours]


# about a minute alone; the suite's 300 s per test is not enough at load 30 (pytest-timeout then ends
# the worker, which xdist reports as a crash)
@pytest.mark.timeout(1200)
def test_vigil_and_claude_code_side_by_side():
    """One run of the whole matrix, then three checks on it."""
    reports = asyncio.run(run_matrix(claude_binary()))
    check_runs_are_real(reports)
    check_call_outcomes(reports)
    check_hook_input_keys(reports)
    check_the_sdk_parser_reads_every_line(reports)


def check_runs_are_real(reports: list[CaseReport]) -> None:
    report_text = table(reports, EXPLAINED)
    for report in reports:
        for side, run in (("claude", report.claude), ("vigil", report.vigil)):
            # each side really ran the case: every reply was asked for, and every call got its result
            assert run.requests == len(report.case.steps) + 1, f"{report.case.name} {side}: {run.stderr[-2000:]}"
            assert all("missing" not in (theirs, ours) for _, _, theirs, ours in report.rows), report_text
            # "ran" means it ran: the effect is on disk exactly when the call is counted as run
            for call_id, outcome in run.outcomes().items():
                effect = EFFECTS.get(call_id.split("_", 1)[1])
                if effect is not None:
                    exists = os.path.exists(run.project / effect)
                    assert exists == (outcome == "ran"), f"{side} {report.case.name} {call_id}: {outcome}, {exists}"


def check_call_outcomes(reports: list[CaseReport]) -> None:
    report_text = table(reports, EXPLAINED)
    unexplained = [d for d in disagreements(reports) if (d[0], d[1]) not in EXPLAINED]
    assert unexplained == [], f"unexplained disagreements {unexplained}\n{report_text}"
    for case, call_id, theirs, ours in disagreements(reports):
        if (case, call_id) in NOT_RUN_EITHER_WAY:
            assert "ran" not in (theirs, ours), (case, call_id)
    total = sum(len(r.rows) for r in reports)
    agreeing = sum(r.agreeing for r in reports)
    print(f"\n{report_text}")  # `pytest -s` shows the table; `python -m tests.differential_claude` too
    # the figure this branch reports; a change that makes them differ more must explain itself above
    assert agreeing / total >= 0.85, report_text


def check_hook_input_keys(reports: list[CaseReport]) -> None:
    """Vigil's hook input holds every key Claude Code's holds, event by event."""
    theirs: dict[str, set[str]] = defaultdict(set)
    ours: dict[str, set[str]] = defaultdict(set)
    for report in reports:
        for keys, run in ((theirs, report.claude), (ours, report.vigil)):
            for payload in run.hook_inputs:
                keys[payload["hook_event_name"]].update(payload)
    assert set(theirs) == {"PreToolUse", "PostToolUse", "PermissionRequest", "UserPromptSubmit", "Stop"}
    assert set(ours) == set(theirs)
    for event, keys in theirs.items():
        assert keys <= ours[event], f"{event}: Vigil lacks {sorted(keys - ours[event])}"


def check_the_sdk_parser_reads_every_line(reports: list[CaseReport]) -> None:
    for report in reports:
        for side, run in (("claude", report.claude), ("vigil", report.vigil)):
            kinds = set()
            for line in run.lines:
                if line.get("type") in ("control_request", "control_response", "control_cancel_request"):
                    continue  # the control protocol is the SDK's Query's business, not its message parser's
                parse_message(line)  # raises MessageParseError on a missing required field
                kinds.add((line["type"], line.get("subtype")))
            assert {("system", "init"), ("assistant", None), ("user", None)} <= kinds, (side, kinds)
            assert ("result", "success") in kinds, (side, report.case.name, kinds)
            if report.case.name == "default":  # headless refusals are announced by both
                assert ("system", "permission_denied") in kinds, (side, kinds)
