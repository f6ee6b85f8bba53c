"""What `make mutate` mutates, and which tests it may run against each mutant.

The permission room: rules, the policy, path rules, bash parsing and classification, the working
directories, the second look at what a file tool opened (descriptor checks), the sandbox's
decisions, what memory files may put into the prompt, the broker and the approval stage, and the
hook decisions (what a hook's output means, how several hooks' words combine, which hooks run, and
where the pipeline folds their word into the policy's).

Left unmutated, on purpose:

* the option allow-lists of the read-only programs (`short`, `short_value`, `long`, `long_value`,
  `long_optional` of each `Program`) and the other lists of what is known to be safe
  (`ALLOWED_NODES`, `SAFE_ASSIGNMENTS`, `FIND_TESTS`, `TEST_UNARY` …). Taking an entry out of an
  allow-list only makes the classifier ask where it did not; an allow-list fails open by holding
  an entry it should not, which no mutation produces — the attack corpus and the property test
  try those. (Deny-lists — `GIT_DANGEROUS`, `UNSAFE_WRAPPERS`, `WRITERS`, protected names,
  output operators … — are mutated: there taking an entry out opens a hole.)
* messages (f-strings and the text of reasons), docstrings, type annotations and `assert`s.
"""

from __future__ import annotations

import os
from pathlib import Path

_ROOT = Path(__file__).resolve().parents[2]

#: file → the top-level functions / classes (qualname prefixes) to mutate; None: the whole file.
#: `make mutate` mutates DECISIONS (what decides allow / ask / deny, within 15 minutes on two
#: loaded cores); `make mutate SCOPE=all` the whole room (the bash parser, the read-only programs'
#: tables, the sandbox's policy, hook configuration too: about twice as long).
ALL_TARGETS: dict[str, tuple[str, ...] | None] = {
    "tui_app/runtime/permissions/rules.py": None,
    "tui_app/runtime/permissions/decision.py": None,
    "tui_app/runtime/permissions/policy.py": None,
    "tui_app/runtime/permissions/rule_checks.py": None,
    "tui_app/runtime/permissions/path_rules.py": None,
    "tui_app/runtime/permissions/working_dirs.py": None,
    "tui_app/runtime/permissions/bash/parse.py": None,
    "tui_app/runtime/permissions/bash/words.py": None,
    "tui_app/runtime/permissions/bash/readonly.py": None,
    "tui_app/runtime/permissions/bash/programs.py": None,
    "tui_app/runtime/permissions/bash/rules.py": None,
    "tui_app/runtime/permissions/bash/git_guard.py": None,
    "tui_app/runtime/permissions/bash/outputs.py": None,
    "tui_app/runtime/permissions/bash/launchers.py": None,
    "tui_app/runtime/permissions/bash/trees.py": None,
    "tui_app/runtime/permissions/sandbox_policy.py": None,
    "tui_app/runtime/permissions/sandbox_secrets.py": None,
    "tui_app/runtime/permissions/self_protection.py": None,
    "tui_app/runtime/permissions/descriptor_checks.py": None,
    "tui_app/runtime/permissions/network_ask.py": None,
    "tui_app/runtime/permissions/broker.py": None,
    "tui_app/runtime/permissions/updates.py": None,
    "tui_app/runtime/approval_stage.py": None,
    "tui_app/runtime/hooks/output.py": None,
    "tui_app/runtime/hooks/seal.py": None,
    "tui_app/runtime/hooks/config.py": ("compile_matcher", "MatcherGroup", "HookConfig"),
    "tui_app/runtime/hooks/command.py": ("compose_inputs", "CommandHooks.has_permission_request_hooks",
                                         "CommandHooks.pre_tool_use", "CommandHooks.permission_request"),
    "tui_app/runtime/pipeline.py": ("pre_tool_use", "decide_permission", "note_checked_paths", "start"),
    "tui_app/agents/memory.py": ("_Loader.refusal", "_Loader.skip", "policy_guard"),
    # trust before code: what a project's own files may run, and when
    "tui_app/project_trust.py": ("fingerprint", "truthy", "TrustStore", "ProjectTrust.trusted",
                                 "ProjectTrust.needs_answer", "ProjectTrust.server_allowed", "ProjectTrust.held",
                                 "ProjectTrust.waiting", "ProjectTrust.grant", "ProjectTrust.answer",
                                 "user_mcp_choices", "decide_trust"),
    "tui_app/assemble.py": ("build_trust",),
    # the host: who may use its socket, and what a killed host's open requests become (never an allow)
    "tui_app/host/server.py": ("peer_allowed", "peer_uid"),
    "tui_app/runtime/log/lost_calls.py": None,
    # an ACP agent's `bash -lc CMD` is judged as CMD: only the exact form may unwrap
    "tui_app/agents/acp/tool_calls.py": ("unwrap_shell", "unwrap_command", "shell_c", "SHELLS"),
}

#: parsing, the read-only programs' option tables, the sandbox and hook configuration: `SCOPE=all`
NOT_IN_DECISIONS = frozenset({
    "tui_app/runtime/permissions/bash/parse.py", "tui_app/runtime/permissions/bash/words.py",
    "tui_app/runtime/permissions/bash/programs.py", "tui_app/runtime/permissions/sandbox_policy.py",
    "tui_app/runtime/permissions/sandbox_secrets.py",
    "tui_app/runtime/permissions/network_ask.py", "tui_app/runtime/permissions/updates.py",
    "tui_app/runtime/hooks/config.py",
})
DECISIONS = {f: q for f, q in ALL_TARGETS.items() if f not in NOT_IN_DECISIONS}
TARGETS = ALL_TARGETS if os.environ.get("VIGIL_MUTATE_SCOPE") == "all" else DECISIONS

#: keyword arguments of these calls are allow-lists (see above)
ALLOW_LIST_CALLS = {"Program": frozenset({"short", "short_value", "long", "long_value", "long_optional"}),
                    # the options of a writer whose value is no file: one taken out only makes more words files
                    "Writes": frozenset({"value_short", "value_long"})}
#: module-level names whose values are allow-lists (see above)
ALLOW_LIST_NAMES = frozenset({
    "ALLOWED_NODES", "SAFE_ASSIGNMENTS", "FIND_TESTS", "FIND_TESTS_WITH_VALUE", "TEST_UNARY", "TEST_BINARY",
    "GIT_COMMANDS", "GIT_BRANCH_LISTING", "PROGRAMS", "SPECIAL", "PERMISSION_MODES", "HOOK_EVENTS",
})
#: module-level names never mutated: the allow-lists, and `__all__` (it only steers `import *`)
UNMUTATED_NAMES = ALLOW_LIST_NAMES | {"__all__"}

#: the tests that may kill a mutant: everything that runs the permission room in this process
#: (tests that only drive a `vigil` subprocess cannot see a mutant, and are left out)
TEST_FILES = (
    "tests/test_permission_matrix.py",
    "tests/test_rule_policy.py",
    "tests/test_bash_classifier.py",
    "tests/test_bash_parts.py",
    "tests/test_classifier_property.py",
    "tests/test_permission_pipeline.py",
    "tests/test_policy_decisions.py",
    "tests/test_hook_verdicts.py",
    "tests/test_approval_property.py",
    "tests/test_approval_race.py",
    "tests/test_approval_text.py",
    "tests/test_command_hooks.py",
    "tests/test_headless_permissions.py",
    "tests/test_plan_mode.py",
    "tests/test_settings.py",
    "tests/test_search_deny.py",
    "tests/test_descriptor_checks.py",
    "tests/test_memory_files.py",
    "tests/test_memory_imports_guarded.py",
    "tests/test_pipeline_failures.py",
    "tests/test_sandbox.py",
    "tests/test_sandbox_network.py",
    "tests/test_sandbox_secrets.py",
    "tests/test_attack_corpus.py",
    "tests/test_sandbox_protected_trees.py",
    "tests/test_hook_seal.py",
    "tests/test_project_trust.py",
    "tests/test_project_trust_parts.py",
    "tests/tui/test_trust_dialog.py",
    "tests/test_attack_options_and_spellings.py",
    "tests/host/test_host_inprocess.py",
    "tests/test_acp_parts.py",
    *sorted(str(p.relative_to(_ROOT)) for p in (_ROOT / "tests" / "permission").glob("test_*.py")),
)
