"""Plain words in the approval dialog: what will happen and why Vigil asks."""

from __future__ import annotations

from tests.tui.session_data import CWD, bash_request, edit_request
from tui_app.runtime.display import FileDiffDisplay
from tui_app.runtime.events import PermissionRequested
from widgets.approval_text import describe_action, describe_always, describe_facts, describe_reason


def request(tool: str, data: dict, **extra) -> PermissionRequested:
    return PermissionRequested(call_id="c", request_id="r", tool=tool, input=data, input_sha256="ab" * 32,
                               summary=f"{tool} thing", **extra)


def test_an_edit_says_which_file_and_how_many_lines():
    assert describe_action(edit_request(), CWD) == "Edit calc/stats.py: 4 lines added, 2 lines removed"


def test_one_replaced_line():
    display = FileDiffDisplay(path=f"{CWD}/src/sum.ts", added=1, removed=1)
    assert describe_action(request("Edit", {"file_path": "x"}, preview_display=display), CWD) == \
        "Edit src/sum.ts: 1 line replaced"


def test_create_and_overwrite():
    created = FileDiffDisplay(path="/tmp/n.py", operation="create", added=3)
    assert describe_action(request("Write", {}, preview_display=created), CWD) == "Create /tmp/n.py: new file, 3 lines"
    overwritten = FileDiffDisplay(path=f"{CWD}/a.py", added=2, removed=5)
    assert describe_action(request("Write", {}, preview_display=overwritten), CWD) == \
        "Overwrite a.py: 2 lines added, 5 lines removed"


def test_a_command_and_where_it_runs():
    assert describe_action(bash_request("npm test"), "/srv/proj") == "Run `npm test` in /srv/proj"


def test_a_long_multi_line_command_is_summarised_not_hidden():
    command = "make " + "x" * 200 + "\nrm -rf /"
    text = describe_action(bash_request(command), "/srv/p")
    assert text.startswith("Run `make xxx") and text.endswith("…` (+1 more line) in /srv/p")


def test_a_fetch_and_a_fallback():
    assert describe_action(request("WebFetch", {"url": "https://a.example"})) == "Fetch https://a.example"
    assert describe_action(request("mcp__gh__create_issue", {"title": "x"})) == "mcp__gh__create_issue thing"


def test_why_names_who_asks():
    assert describe_reason(edit_request()) == \
        "The permission mode asks before this call: file edits ask in default mode"
    assert describe_reason(request("Bash", {}, decided_by="hook")) == "A PreToolUse hook asked for approval"
    assert describe_reason(request("Bash", {}, decided_by="rule", reason="Bash(git push *)")) == \
        "A permission rule asks before this call: Bash(git push *)"
    asked = request("Read", {}, decided_by="agent", reason="Claude Code asks: /etc is outside its working directories")
    assert describe_reason(asked) == "Claude Code asks: /etc is outside its working directories"


def test_facts_show_risk_scope_and_the_short_hash():
    assert describe_facts(edit_request()) == "risk medium · touches workspace · input sha256 9c1f3ab2e4d5"


def test_always_allow_shows_the_exact_rules_and_where_they_go():
    text = describe_always(["Bash(npm test:*)"])
    assert "1 rule will be saved to .vigil/settings.local.json" in text
    assert "\n    Bash(npm test:*)\n" in text
