"""Settings files: the hierarchy, the merge, the flags, and files that are broken."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.perm_specs import BASH, READ
from tui_app.assemble import SessionOptions, build_hooks, build_policy
from tui_app.config import SettingsError, load_settings, settings_events
from tui_app.runtime.hooks.command import CommandHooks
from tui_app.runtime.hooks.config import compile_matcher
from tui_app.runtime.hooks.runner import NoHooks
from tui_app.runtime.permissions.decision import PermissionQuery
from tui_app.runtime.permissions.policy import RulePolicy


@pytest.fixture
def places(tmp_path, monkeypatch):
    home, config, project = tmp_path / "home", tmp_path / "config" / "vigil", tmp_path / "project"
    for d in (home, config, project):
        d.mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    return {"home": home, "config": config, "project": project}


def write(path: Path, data) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data, indent=2))
    return path


def levels(places) -> list[Path]:
    h, c, p = places["home"], places["config"], places["project"]
    return [h / ".claude/settings.json", c / "settings.json", p / ".claude/settings.json", p / ".vigil/settings.json",
            p / ".claude/settings.local.json", p / ".vigil/settings.local.json"]


def load(places, **kw):
    return load_settings(cwd=str(places["project"]), home=places["home"], config_dir=places["config"], **kw)


def decide(policy: RulePolicy, spec, data):
    return policy.decide(PermissionQuery(spec, data, spec.flags_of(data), policy.cwd))


def test_every_level_is_read_lowest_first_and_arrays_merge(places):
    paths = levels(places)
    for i, path in enumerate(paths):
        write(path, {"permissions": {"allow": [f"Bash(step{i})"], "defaultMode": "plan" if i < 5 else "acceptEdits"}})
    loaded = load(places)
    assert loaded.files == [str(p) for p in paths]
    assert [r.text for r in loaded.rules] == [f"Bash(step{i})" for i in range(6)]
    assert loaded.default_mode == "acceptEdits"  # scalars: the highest wins
    assert [r.source for r in loaded.rules] == [str(p) for p in paths]


def test_no_claude_settings_skips_the_claude_files(places):
    for i, path in enumerate(levels(places)):
        write(path, {"permissions": {"allow": [f"Bash(step{i})"]}})
    loaded = load(places, no_claude_settings=True)
    assert [r.text for r in loaded.rules] == ["Bash(step1)", "Bash(step3)", "Bash(step5)"]
    assert all(".claude" not in f for f in loaded.files)


def test_settings_flag_then_cli_flags_come_last(places, tmp_path):
    write(places["project"] / ".vigil/settings.local.json", {"permissions": {"defaultMode": "plan"}})
    extra = write(tmp_path / "extra.json", {"permissions": {"defaultMode": "dontAsk", "deny": ["Bash(curl *)"]}})
    loaded = load(places, settings_file=str(extra), allowed_tools=["Bash(git diff *)"], disallowed_tools=["WebFetch"])
    assert loaded.default_mode == "dontAsk"
    assert loaded.files[-1] == str(extra)
    assert [(r.behavior, r.text, r.source) for r in loaded.rules] == [
        ("deny", "Bash(curl *)", str(extra)), ("allow", "Bash(git diff *)", "--allowedTools"),
        ("deny", "WebFetch", "--disallowedTools")]
    assert load(places, settings_file=str(extra), permission_mode="acceptEdits").default_mode == "acceptEdits"


def test_settings_flag_takes_json_text_too(places):
    loaded = load(places, settings_file='{"permissions": {"ask": ["Bash(git push *)"]}}')
    assert [(r.behavior, r.text) for r in loaded.rules] == [("ask", "Bash(git push *)")]


def test_a_missing_settings_file_given_by_flag_stops_the_start(places):
    with pytest.raises(SettingsError, match="does not exist"):
        load(places, settings_file="/nope/settings.json")


def test_malformed_json_is_reported_with_line_and_never_an_empty_deny_list(places):
    write(places["project"] / ".vigil/settings.json", {"permissions": {"allow": ["Bash(make)"]}})
    broken = write(places["project"] / ".claude/settings.json",
                   '{\n  "permissions": {\n    "deny": ["Read(./.env)"],\n  }\n}\n')
    loaded = load(places)
    assert loaded.errors == [{"file": str(broken), "line": 4, "reason": loaded.errors[0]["reason"]}]
    assert "not valid JSON" in loaded.errors[0]["reason"]
    assert str(broken) not in loaded.files and [r.text for r in loaded.rules] == ["Bash(make)"]
    policy = RulePolicy(cwd=loaded.project_dir, rules=loaded.rules, guards=loaded.guards)
    for spec, data in ((READ, {"file_path": str(places["project"] / ".env")}), (BASH, {"command": "make"})):
        decision = decide(policy, spec, data)
        assert (decision.behavior, decision.decided_by) == ("ask", "guard")
        assert str(broken) in decision.reason


def test_broken_file_that_could_not_have_denied_anything_only_reports(places):
    write(places["project"] / ".vigil/settings.json", '{"model": "x",}')
    loaded = load(places)
    assert loaded.errors and loaded.guards == []


def test_one_bad_deny_rule_guards_its_tool_only(places):
    path = write(places["project"] / ".vigil/settings.json",
                 '{\n "permissions": {\n  "deny": [\n   "Bash(curl *",\n   "Read(./.env)"\n  ]\n }\n}')
    loaded = load(places)
    assert loaded.errors == [{"file": str(path), "line": 4, "reason": loaded.errors[0]["reason"]}]
    assert "no closing parenthesis" in loaded.errors[0]["reason"]
    policy = RulePolicy(cwd=loaded.project_dir, rules=loaded.rules, guards=loaded.guards)
    assert decide(policy, BASH, {"command": "ls"}).decided_by == "guard"
    assert decide(policy, READ, {"file_path": str(places["project"] / "a.py")}).behavior == "allow"
    assert decide(policy, READ, {"file_path": str(places["project"] / ".env")}).behavior == "deny"


@pytest.mark.parametrize("typo", ["Web Fetch(domain:evil.com)", "(rm -rf *)", "Bash rm(x)"])
def test_a_deny_rule_whose_tool_cannot_be_told_guards_every_tool(places, typo):
    """The lost rule could have been about anything: nothing is silently allowed."""
    write(places["project"] / ".vigil/settings.json", {"permissions": {"deny": [typo], "allow": ["Bash(make)"]}})
    loaded = load(places)
    assert loaded.errors and loaded.guards
    policy = RulePolicy(cwd=loaded.project_dir, rules=loaded.rules, guards=loaded.guards)
    for spec, data in ((READ, {"file_path": str(places["project"] / "a.py")}), (BASH, {"command": "make"})):
        assert (decide(policy, spec, data).behavior, decide(policy, spec, data).decided_by) == ("ask", "guard")


def test_structural_errors_name_the_line(places):
    path = write(places["project"] / ".vigil/settings.json",
                 '{\n "permissions": {\n  "allow": "Bash",\n  "defaultMode": "yolo",\n'
                 '  "additionalDirectories": "../lib"\n }\n}')
    loaded = load(places)
    assert [(e["line"], e["file"]) for e in loaded.errors] == [(3, str(path)), (4, str(path)), (5, str(path))]
    assert loaded.guards == []  # an allow list that failed can only deny more


def test_additional_directories_and_slash_rules_are_relative_to_the_files_base(places):
    write(places["home"] / ".claude/settings.json", {"permissions": {"deny": ["Edit(/notes/**)"]}})
    write(places["project"] / ".vigil/settings.json", {"permissions": {"additionalDirectories": ["../lib"],
                                                                       "deny": ["Edit(/dist/**)"]}})
    loaded = load(places)
    assert loaded.additional_dirs == [str(places["project"].parent / "lib")]
    assert [(r.text, r.base_dir) for r in loaded.rules] == [("Edit(/notes/**)", str(places["home"])),
                                                           ("Edit(/dist/**)", str(places["project"]))]


def test_hooks_merge_across_files_in_order_and_bad_ones_are_reported(places):
    write(places["home"] / ".claude/settings.json", {"hooks": {"PreToolUse": [
        {"matcher": "Bash", "hooks": [{"type": "command", "command": "user-hook"}]}]}})
    path = write(places["project"] / ".claude/settings.json", {"hooks": {
        "PreToolUse": [{"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "project-hook",
                                                            "timeout": 5},
                                                           {"type": "http", "url": "http://x"}]}],
        "PreCompact": [{"hooks": [{"type": "command", "command": "ignored"}]}],
        "PermissionRequest": [{"matcher": "(", "hooks": [{"type": "command", "command": "x"}]}]}})
    loaded = load(places)
    assert [h.command for h in loaded.hooks.handlers("PreToolUse", "Bash")] == ["user-hook"]
    assert [(h.command, h.timeout_s) for h in loaded.hooks.handlers("PreToolUse", "Write")] == [("project-hook", 5.0)]
    reasons = {e["reason"]: e for e in loaded.errors}
    http = next(e for r, e in reasons.items() if "'http' skipped" in r)
    assert http["severity"] == "warning" and http["file"] == str(path)
    assert any("not a valid regular expression" in r for r in reasons)
    assert [g.source for g in loaded.guards] == [str(path)]  # a PermissionRequest hook that may deny is lost


@pytest.mark.parametrize("matcher, hits, misses", [
    (None, ["Bash", "Read"], []), ("*", ["Bash"], []), ("", ["Edit"], []),
    ("Bash|Edit", ["Bash", "Edit"], ["Write", "Bas"]), ("Edit, Write", ["Write", "Edit"], ["MultiEdit"]),
    ("mcp__.*__write.*", ["mcp__fs__write_file"], ["mcp__fs__read"]), ("Ed", [], ["Edit"]),
    ("^Read$", ["Read"], ["ReadX"]), ("Notebook.*", ["NotebookEdit"], ["Edit"]),
])
def test_matcher_forms(matcher, hits, misses):
    test = compile_matcher(matcher)
    assert all(test(h) for h in hits) and not any(test(m) for m in misses)


def test_settings_are_announced_and_every_problem_is_loud(places):
    write(places["project"] / ".vigil/settings.json", {"permissions": {"allow": ["Bash(make)"]}})
    write(places["project"] / ".vigil/settings.local.json", '{"permissions": {"deny": [}')
    events = settings_events(load(places))
    assert events[0].type == "SettingsLoaded" and events[0].files == [str(places["project"] / ".vigil/settings.json")]
    assert [e.code for e in events[1:]] == ["settings_invalid", "settings_deny_unknown"]
    assert "asks before every call" in events[2].message


def test_assemble_builds_the_rule_engine_and_command_hooks(places):
    write(places["project"] / ".vigil/settings.json", {"permissions": {"defaultMode": "acceptEdits"},
                                                       "hooks": {"Stop": [{"hooks": [{"command": "true"}]}]}})
    options = SessionOptions(cwd=str(places["project"]), allowed_tools=["Bash(make)"], disallowed_tools=["Write"])
    policy = build_policy(options)
    assert isinstance(policy, RulePolicy) and policy.mode == "acceptEdits" and policy.hides_tool("Write")
    assert decide(policy, BASH, {"command": "make"}).behavior == "allow"
    assert isinstance(build_hooks(options, emit=lambda e: e), CommandHooks)


def test_no_hooks_configured_means_no_hook_runner(places):
    assert isinstance(build_hooks(SessionOptions(cwd=str(places["project"]))), NoHooks)
