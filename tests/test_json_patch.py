"""Settings files are changed by editing their text: the change is what json.loads sees, and every
byte outside it stays as the user wrote it."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tui_app.runtime.permissions.json_patch import JsonPatchError, add_to_list, remove_from_list, set_value
from tui_app.runtime.permissions.settings_writer import SettingsWriteError, set_setting, update_rules

USER_FILE = """{
    // not JSON: never reached, see test_comments_are_refused
}"""

HAND_WRITTEN = """{
    "$schema": "https://json.schemastore.org/claude-code-settings.json",
    "model":"claude-sonnet-4-5",

    "env": {"FOO": "b\\u00e4r", "EMPTY": ""},
    "permissions": {
        "allow": [
            "Bash(npm run lint)",
            "Read(~/notes/**)"
        ],
        "deny": ["Read(./.env)"]
    },
    "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "x.sh"}]}]}
}"""


def test_a_rule_is_added_after_the_last_one_in_the_same_layout():
    text = add_to_list(HAND_WRITTEN, ("permissions", "allow"), "Bash(npm test)")
    assert text == HAND_WRITTEN.replace('"Read(~/notes/**)"\n', '"Read(~/notes/**)",\n            "Bash(npm test)"\n')
    assert json.loads(text)["permissions"]["allow"][-1] == "Bash(npm test)"


def test_removing_what_was_added_gives_back_the_same_bytes():
    for behavior in ("allow", "deny"):
        added = add_to_list(HAND_WRITTEN, ("permissions", behavior), "WebFetch(domain:example.com)")
        assert remove_from_list(added, ("permissions", behavior), "WebFetch(domain:example.com)") == HAND_WRITTEN


def test_a_rule_removed_from_the_middle_takes_its_comma_with_it():
    text = remove_from_list(HAND_WRITTEN, ("permissions", "allow"), "Bash(npm run lint)")
    assert text == HAND_WRITTEN.replace('            "Bash(npm run lint)",\n', "")
    assert remove_from_list(text, ("permissions", "allow"), "nothing there") == text


def test_a_missing_list_and_object_are_created_where_they_belong():
    text = add_to_list('{\n  "model": "x"\n}\n', ("permissions", "ask"), "Bash(git push *)")
    assert text == '{\n  "model": "x",\n  "permissions": {\n    "ask": [\n      "Bash(git push *)"\n    ]\n  }\n}\n'
    assert add_to_list("", ("permissions", "allow"), "Read") == \
        '{\n  "permissions": {\n    "allow": [\n      "Read"\n    ]\n  }\n}\n'


def test_a_one_line_file_stays_on_one_line():
    text = add_to_list('{"a": 1, "permissions": {"allow": ["Read"]}}', ("permissions", "allow"), "Grep")
    assert text == '{"a": 1, "permissions": {"allow": ["Read", "Grep"]}}'


def test_a_scalar_is_replaced_in_place_or_added():
    assert set_value(HAND_WRITTEN, ("model",), "opus") == HAND_WRITTEN.replace('"claude-sonnet-4-5"', '"opus"')
    moded = set_value(HAND_WRITTEN, ("permissions", "defaultMode"), "plan")
    assert moded == HAND_WRITTEN.replace('"deny": ["Read(./.env)"]\n', '"deny": ["Read(./.env)"],\n'
                                         '        "defaultMode": "plan"\n')


def test_a_duplicate_is_not_added_twice():
    assert add_to_list(HAND_WRITTEN, ("permissions", "deny"), "Read(./.env)") == HAND_WRITTEN


def test_wrong_shapes_are_refused_with_a_reason():
    with pytest.raises(JsonPatchError, match="not a list"):
        add_to_list('{"permissions": {"allow": "Read"}}', ("permissions", "allow"), "Grep")
    with pytest.raises(JsonPatchError, match="not an object"):
        add_to_list('{"permissions": []}', ("permissions", "allow"), "Grep")
    with pytest.raises(JsonPatchError):
        add_to_list("[1, 2]", ("permissions", "allow"), "Grep")


def test_comments_are_refused_and_the_file_is_left_alone(tmp_path):
    path = tmp_path / "settings.json"
    path.write_text(USER_FILE)
    with pytest.raises(SettingsWriteError, match="not valid JSON"):
        update_rules(path, "allow", add=["Read"])
    with pytest.raises(SettingsWriteError, match="not valid JSON"):
        set_setting(path, ("model",), "opus")
    assert path.read_text() == USER_FILE


def test_the_writer_keeps_every_other_byte(tmp_path):
    path = tmp_path / "settings.local.json"
    path.write_text(HAND_WRITTEN)  # no final newline: it stays without one
    update_rules(path, "allow", add=["Bash(make *)"])
    update_rules(path, "allow", remove=["Bash(make *)"])
    assert path.read_bytes() == HAND_WRITTEN.encode()
    assert update_rules(path, "deny", replace=True, add=["Bash(rm *)"]) == ["Bash(rm *)"]
    assert path.read_text() == HAND_WRITTEN.replace('["Read(./.env)"]', '["Bash(rm *)"]')


# ---- any file, any layout ----------------------------------------------------------------------

scalars = st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6), st.text(max_size=8))
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                          st.dictionaries(st.text(max_size=5), inner, max_size=3)),
                      max_leaves=8)
layouts = st.sampled_from([None, 0, 2, 4, "\t"])


@settings(max_examples=150, deadline=None)
@given(data=st.dictionaries(st.text(max_size=6).filter(lambda k: k != "permissions"), values, max_size=4),
       rules=st.lists(st.text(min_size=1, max_size=10), max_size=3, unique=True),
       indent=layouts, rule=st.text(min_size=1, max_size=12))
def test_any_file_gains_and_loses_a_rule_without_other_change(data, rules, indent, rule):
    document = {**data, "permissions": {"allow": rules}}
    text = json.dumps(document, indent=indent, ensure_ascii=bool(len(rules) % 2))
    added = add_to_list(text, ("permissions", "allow"), rule)
    expected = rules if rule in rules else [*rules, rule]
    assert json.loads(added) == {**document, "permissions": {"allow": expected}}
    if rule not in rules and rules:
        assert remove_from_list(added, ("permissions", "allow"), rule) == text
