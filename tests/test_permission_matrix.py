"""The rule matrix: (tool, input, rules, mode) → decision, who decided, and why — one row per
behaviour of docs/architecture.md §9.2, on a real directory tree with real symlinks.

The specs are the real tools' (tests/perm_specs.py).

Placeholders: {p} the project (and working directory), {o} a directory outside it, {h} home,
{e} a sibling of the project whose name starts with the project's (`proj-evil`).
A rule written "home:Edit(/x)" comes from a user-level file (its `/` anchor is home).
"""

from __future__ import annotations

import os
import unicodedata
from dataclasses import dataclass, field
from typing import Any

import pytest

from tests.perm_specs import BY_NAME
from tui_app.runtime.permissions.decision import PermissionQuery
from tui_app.runtime.permissions.policy import DenyGuard, RulePolicy
from tui_app.runtime.permissions.rules import make_rule

NFC_NAME = unicodedata.normalize("NFC", "café.md")
NFD_NAME = unicodedata.normalize("NFD", "café.md")


@dataclass
class Case:
    id: str
    tool: str
    input: dict[str, Any]
    expect: str
    by: str | None = None
    why: str | None = None
    mode: str = "default"
    rules: dict[str, list[str]] = field(default_factory=dict)
    guards: tuple[DenyGuard, ...] = ()
    extra_dirs: tuple[str, ...] = ()
    suggest: tuple[str, ...] | None = None


def C(id: str, tool: str, data: Any, expect: str, by: str | None = None, why: str | None = None, *,
      mode: str = "default", allow=(), ask=(), deny=(), **kw: Any) -> Case:
    if isinstance(data, str):
        data = {"command": data} if tool == "Bash" else {"file_path": data}
    rules = {"allow": list(allow), "ask": list(ask), "deny": list(deny)}
    return Case(id, tool, data, expect, by, why, mode, rules, **kw)


BASH_CASES = [
    # exact, wildcards, word boundary, legacy :*
    C("exact-match", "Bash", "npm test", "allow", "rule", "Bash(npm test)", allow=["Bash(npm test)"]),
    C("exact-needs-exact", "Bash", "npm test --watch", "ask", "mode", allow=["Bash(npm test)"]),
    C("star-anywhere", "Bash", "git push origin main", "allow", "rule", allow=["Bash(git * main)"]),
    C("star-anywhere-miss", "Bash", "git push origin dev", "ask", "mode", allow=["Bash(git * main)"]),
    C("space-star-args", "Bash", "npm run build", "allow", "rule", allow=["Bash(npm run *)"]),
    C("space-star-bare", "Bash", "npm run", "allow", "rule", allow=["Bash(npm run *)"]),
    C("space-star-boundary", "Bash", "npm runx", "ask", "mode", allow=["Bash(npm run *)"]),
    C("legacy-colon-star", "Bash", "npm run test --watch", "allow", "rule", allow=["Bash(npm run test:*)"]),
    C("legacy-colon-star-bare", "Bash", "npm run test", "allow", "rule", allow=["Bash(npm run test:*)"]),
    C("legacy-colon-star-boundary", "Bash", "npm run testx", "ask", "mode", allow=["Bash(npm run test:*)"]),
    C("colon-star-only-at-end", "Bash", "make a:xb", "allow", "rule", allow=["Bash(make a:*b)"]),
    C("colon-star-mid-is-literal-colon", "Bash", "make a xb", "ask", "mode", allow=["Bash(make a:*b)"]),
    C("star-without-space-no-boundary", "Bash", "npmx install", "allow", "rule", allow=["Bash(npm*)"]),
    C("bare-Bash-allows-all", "Bash", "rm -rf build", "allow", "rule", allow=["Bash"]),
    C("Bash-star-same-as-bare", "Bash", "rm -rf build", "allow", "rule", allow=["Bash(*)"]),
    C("bare-Bash-deny", "Bash", "ls", "deny", "rule", "Bash", deny=["Bash"]),
    # compound commands
    C("compound-all-allowed", "Bash", "npm test && npm run build", "allow", "rule",
      allow=["Bash(npm test)", "Bash(npm run build)"]),
    C("compound-one-unallowed", "Bash", "npm test && make", "ask", "mode", allow=["Bash(npm test)"],
      suggest=("Bash(make)",)),
    C("compound-and-deny", "Bash", "ls && curl http://x", "deny", "rule", "curl http://x", deny=["Bash(curl *)"]),
    C("compound-pipe-deny", "Bash", "cat notes | curl -d @- x", "deny", "rule", deny=["Bash(curl *)"]),
    C("compound-semicolon-deny", "Bash", "npm test; curl x", "deny", "rule", allow=["Bash(npm test)"],
      deny=["Bash(curl *)"]),
    C("compound-newline-deny", "Bash", "echo hi\ncurl x", "deny", "rule", deny=["Bash(curl *)"]),
    C("compound-or-deny", "Bash", "make || curl x", "deny", "rule", deny=["Bash(curl *)"]),
    C("compound-pipe-amp-deny", "Bash", "make |& curl x", "deny", "rule", deny=["Bash(curl *)"]),
    C("compound-background-deny", "Bash", "curl x & ls", "deny", "rule", deny=["Bash(curl *)"]),
    C("dollar-paren-deny", "Bash", "echo $(curl x)", "deny", "rule", deny=["Bash(curl *)"]),
    C("backticks-deny", "Bash", "echo `curl x`", "deny", "rule", deny=["Bash(curl *)"]),
    C("subshell-deny", "Bash", "(cd /tmp && curl x)", "deny", "rule", deny=["Bash(curl *)"]),
    C("process-substitution-deny", "Bash", "diff <(curl a) b", "deny", "rule", deny=["Bash(curl *)"]),
    C("substitution-needs-allow-too", "Bash", "echo $(make)", "ask", "mode", allow=["Bash(echo *)"],
      suggest=("Bash(make)",)),
    C("bash-c-inner-deny", "Bash", "bash -c 'curl x'", "deny", "rule", deny=["Bash(curl *)"]),
    C("bash-c-inner-needs-allow", "Bash", "bash -c 'make'", "ask", "mode", allow=["Bash(bash -c *)"]),
    C("eval-unknown-asks", "Bash", "eval $CMD", "ask", "guard", "run time", allow=["Bash"]),
    # wrappers, assignments, program paths, xargs
    C("timeout-stripped-deny", "Bash", "timeout 5 curl x", "deny", "rule", deny=["Bash(curl *)"]),
    C("nohup-nice-stripped-deny", "Bash", "nohup nice -n 5 curl x", "deny", "rule", deny=["Bash(curl *)"]),
    C("time-stripped-allow", "Bash", "time npm test", "allow", "rule", allow=["Bash(npm test)"]),
    C("stdbuf-stripped-allow", "Bash", "stdbuf -oL npm test", "allow", "rule", allow=["Bash(npm test)"]),
    C("command-builtin-stripped-allow", "Bash", "command npm test", "allow", "rule", allow=["Bash(npm test)"]),
    C("bare-xargs-stripped-deny", "Bash", "find . -name '*.o' | xargs rm", "deny", "rule", deny=["Bash(rm *)"]),
    C("xargs-with-options-deny", "Bash", "ls | xargs -0 -n 2 rm", "deny", "rule", deny=["Bash(rm *)"]),
    C("assignment-prefix-deny", "Bash", "FOO=1 curl x", "deny", "rule", deny=["Bash(curl *)"]),
    C("assignment-must-be-allowed", "Bash", "NODE_ENV=test npm test", "ask", "mode", allow=["Bash(npm test)"]),
    C("program-path-deny", "Bash", "/usr/bin/curl x", "deny", "rule", deny=["Bash(curl *)"]),
    C("bare-assignment-is-a-command", "Bash", "PATH=/tmp/evil; ls", "ask", "mode", suggest=("Bash(PATH=/tmp/evil)",)),
    C("export-is-a-command", "Bash", "export PATH=/tmp/evil && git status", "deny", "mode", mode="dontAsk"),
    # order: deny → ask → allow, specificity does not matter
    C("deny-beats-specific-allow", "Bash", "aws s3 ls", "deny", "rule", deny=["Bash(aws *)"],
      allow=["Bash(aws s3 ls)"]),
    C("ask-beats-allow", "Bash", "git push origin", "ask", "rule", "git push *", ask=["Bash(git push *)"],
      allow=["Bash(git *)"]),
    C("ask-rule-on-read-only", "Bash", "git status", "ask", "rule", ask=["Bash(git status)"]),
    C("deny-beats-ask-both-matching", "Bash", "git push origin", "deny", "rule", "Bash(git push *)",
      deny=["Bash(git push *)"], ask=["Bash(git *)"]),
    C("bare-ask-Bash-asks", "Bash", "make", "ask", "rule", "Bash", ask=["Bash"], allow=["Bash(make)"]),
    C("bare-ask-Bash-asks-in-bypass", "Bash", "make", "ask", "rule", "Bash", ask=["Bash"],
      mode="bypassPermissions"),
    # unparseable and long commands always ask
    C("unparseable-asks", "Bash", "echo 'unterminated", "ask", "guard", "not valid shell", allow=["Bash"]),
    C("unparseable-asks-in-bypass", "Bash", "ls (", "ask", "guard", mode="bypassPermissions"),
    C("unparseable-denied-by-whole-text", "Bash", "echo 'oops", "deny", "rule", deny=["Bash(echo *)"]),
    C("unparseable-dontAsk-denies", "Bash", "ls (", "deny", "mode", "dontAsk", mode="dontAsk"),
    C("too-long-asks", "Bash", "echo " + "a" * 10_001, "ask", "guard", "10000 characters", allow=["Bash"]),
    # redirects are edits
    C("redirect-asks-as-edit", "Bash", "echo hi > out.txt", "ask", "mode", suggest=("Edit(/out.txt)",)),
    C("redirect-acceptEdits-inside", "Bash", "echo hi > out.txt", "allow", "mode", mode="acceptEdits"),
    C("redirect-allowed-by-edit-rule", "Bash", "echo hi >> out.txt", "allow", "rule", allow=["Edit(/out.txt)"]),
    C("redirect-edit-deny", "Bash", "echo hi > out.txt", "deny", "rule", "Edit(./out.txt)",
      deny=["Edit(./out.txt)"]),
    C("redirect-read-deny-blocks", "Bash", "echo x > .env", "deny", "rule", "Read(./.env)", deny=["Read(./.env)"]),
    C("redirect-dev-null-not-edit", "Bash", "ls > /dev/null 2>&1", "allow", "tool", mode="dontAsk"),
    C("redirect-protected-rc", "Bash", "echo x >> ~/.zshrc", "ask", "guard", "protected", mode="acceptEdits"),
    C("redirect-protected-bypass", "Bash", "echo x >> ~/.zshrc", "allow", "mode", mode="bypassPermissions"),
    C("redirect-unknown-target", "Bash", "echo hi > $OUT", "ask", "guard", "run time", mode="acceptEdits"),
    C("redirect-after-cd-not-auto", "Bash", "cd sub && echo x > f", "ask", "mode", mode="acceptEdits"),
    # read-only commands never ask, in any mode
    C("readonly-git-status-dontAsk", "Bash", "git status", "allow", "tool", mode="dontAsk"),
    C("readonly-pipeline-plan", "Bash", "ls -la | grep x | wc -l", "allow", "tool", mode="plan"),
    C("readonly-git-diff", "Bash", "git diff HEAD~1 -- src", "allow", "tool"),
    C("readonly-git-branch-list", "Bash", "git branch -a", "allow", "tool"),
    C("git-branch-delete-not-readonly", "Bash", "git branch -D old", "ask", "mode"),
    C("find-delete-not-readonly", "Bash", "find . -name x -delete", "ask", "guard"),  # removes unknown files
    C("find-exec-not-readonly", "Bash", "find . -exec rm {} ;", "ask", "guard"),  # removes unknown files
    C("find-execdir-not-readonly", "Bash", "find . -execdir rm {} ;", "ask", "guard"),
    C("sort-compress-program-not-readonly", "Bash", "sort --compress-program=sh notes", "ask", "mode"),
    C("sort-compress-program-dontAsk-denies", "Bash", "sort --compress-program=sh notes", "deny", "mode",
      mode="dontAsk"),
    C("rg-pre-not-readonly", "Bash", "rg --pre cat foo", "ask", "mode"),
    C("sort-output-not-readonly", "Bash", "sort -o out.txt notes", "ask", "mode"),
    C("readonly-cat-denied-path", "Bash", "cat .env", "deny", "rule", "Read(./.env)", deny=["Read(./.env)"]),
    C("readonly-cat-dotdot-denied", "Bash", "cat sub/../.env", "deny", "rule", deny=["Read(./.env)"]),
    C("readonly-cat-symlink-denied", "Bash", "head -n 1 link_env", "deny", "rule", deny=["Read(./.env)"]),
    C("readonly-grep-file-denied", "Bash", "grep SECRET .env", "deny", "rule", deny=["Read(./.env)"]),
    C("input-redirect-from-denied-path", "Bash", "cat < .env", "deny", "rule", "Read(./.env)",
      deny=["Read(./.env)"]),
    C("input-redirect-from-denied-path-bypass", "Bash", "wc -l < sub/../.env", "deny", "rule",
      mode="bypassPermissions", deny=["Read(./.env)"]),
    # a recursive search through a directory holding a denied file would read it
    C("search-home-holding-denied-dir", "Bash", "grep -r x ~", "ask", "guard", "searched recursively",
      deny=["Read(~/.ssh/**)"]),
    C("search-dir-holding-denied-file", "Bash", "grep -r x {p}/sub", "ask", "guard", "searched recursively",
      deny=["Read(./sub/.env)"]),
    C("search-inside-dir-holding-denied-files", "Bash", "grep -r x {p}/secrets/deep", "ask", "guard",
      "searched recursively", deny=["Read(./secrets/**/*.pem)"]),
    C("search-dir-whose-name-prefixes-a-denied-one", "Bash", "grep -r x {p}/sec", "allow", "tool",
      deny=["Read(./secrets/**)"]),
    C("search-sibling-of-denied-dir", "Bash", "grep -r x {p}/secrets-old", "allow", "tool",
      deny=["Read(./secrets/**)"]),
    # after a `cd` the reads are judged where the shell is; after a `cd` to a place only known at run
    # time nothing more is read-only
    C("cd-then-read-denied", "Bash", "cd sub && cat .env", "deny", "rule", deny=["Read(./sub/.env)"]),
    C("cd-then-input-redirect-denied", "Bash", "cd sub && wc -l < .env", "deny", "rule", deny=["Read(./sub/.env)"]),
    C("cd-home-then-read-denied", "Bash", "cd && cat .ssh/id_rsa", "deny", "rule", deny=["Read(~/.ssh/**)"]),
    C("cd-known-then-ls", "Bash", "cd sub && ls", "allow", "tool"),
    C("cd-outside-then-ls", "Bash", "cd {o} && ls", "ask", "guard", "outside the working directories"),
    C("cd-unknown-then-ls", "Bash", "cd $D && ls", "ask", "mode"),
    C("cd-back-then-ls", "Bash", "cd - && ls", "ask", "mode"),
    C("pushd-unknown-then-cat", "Bash", "pushd $D && cat notes", "ask", "mode"),
    C("popd-then-cat", "Bash", "popd && cat notes", "ask", "mode"),
    C("cd-unknown-then-input-redirect", "Bash", "cd $D && wc -l < notes", "ask", "mode"),
    C("cd-unknown-later", "Bash", "ls; cd $D; ls", "ask", "mode"),
    C("locale-assignment-is-read-only", "Bash", "LC_ALL=C ls", "allow", "tool"),
    C("assignment-with-substitution", "Bash", "LC_ALL=$(touch x) ls", "ask", "mode"),
    C("grep-pattern-is-not-a-path", "Bash", "grep .env notes", "allow", "tool", deny=["Read(./.env)"]),
    # modes
    C("mode-default-asks", "Bash", "rm -rf build", "ask", "mode", suggest=("Bash(rm -rf build)",)),
    C("mode-acceptEdits-bash-asks", "Bash", "rm -rf build", "ask", "mode", mode="acceptEdits"),
    C("mode-plan-denies-command", "Bash", "rm -rf build", "deny", "mode", "plan mode", mode="plan"),
    C("mode-dontAsk-denies", "Bash", "rm -rf build", "deny", "mode", "dontAsk", mode="dontAsk"),
    C("mode-bypass-runs", "Bash", "rm -rf build", "allow", "mode", mode="bypassPermissions"),
    C("bypass-still-asks-ask-rule", "Bash", "npm publish", "ask", "rule", mode="bypassPermissions",
      ask=["Bash(npm publish)"]),
    C("bypass-still-denies", "Bash", "curl x", "deny", "rule", mode="bypassPermissions", deny=["Bash(curl *)"]),
    C("dontAsk-rule-allowed-runs", "Bash", "npm test", "allow", "rule", mode="dontAsk", allow=["Bash(npm test)"]),
    C("acceptEdits-fs-commands", "Bash", "mkdir -p build/out && touch build/out/x && cp notes build/n",
      "allow", "mode", mode="acceptEdits"),
    C("acceptEdits-fs-outside", "Bash", "mkdir {o}/new", "ask", "guard", "outside the working directories",
      mode="acceptEdits"),
    C("acceptEdits-fs-sibling-prefix", "Bash", "touch {e}/x.txt", "ask", "guard", "outside the working directories",
      mode="acceptEdits"),
    C("acceptEdits-redirect-sibling-prefix", "Bash", "echo x > {e}/x.txt", "ask", "guard",
      "outside the working directories", mode="acceptEdits"),
    C("acceptEdits-mv-protected", "Bash", "mv notes .git/notes", "ask", "guard", "protected", mode="acceptEdits"),
    C("cp-from-denied-path", "Bash", "cp .env leak.txt", "deny", "rule", mode="acceptEdits",
      deny=["Read(./.env)"]),
    C("fs-target-edit-deny", "Bash", "touch src/app.py", "deny", "rule", deny=["Edit(./src/**)"]),
]

PATH_CASES = [
    C("read-deny-dot-slash", "Read", "{p}/.env", "deny", "rule", "Read(./.env)", deny=["Read(./.env)"]),
    C("read-dot-slash-is-anchored", "Read", "{p}/sub/.env", "allow", "tool", deny=["Read(./.env)"]),
    C("read-bare-name-any-depth", "Read", "{p}/sub/.env", "deny", "rule", deny=["Read(.env)"]),
    C("read-bare-name-top", "Read", "{p}/.env", "deny", "rule", deny=["Read(.env)"]),
    C("read-dotdot-spelling", "Read", "{p}/src/../.env", "deny", "rule", deny=["Read(./.env)"]),
    C("read-relative-spelling", "Read", "sub/../.env", "deny", "rule", deny=["Read(./.env)"]),
    C("read-symlink-target-denied", "Read", "{p}/link_env", "deny", "rule", deny=["Read(./.env)"]),
    C("read-nfd-path-nfc-rule", "Read", "{p}/docs/" + NFD_NAME, "deny", "rule", deny=["Read(./docs/" + NFC_NAME + ")"]),
    C("read-nfc-path-nfd-rule", "Read", "{p}/docs/" + NFC_NAME, "deny", "rule", deny=["Read(./docs/" + NFD_NAME + ")"]),
    C("read-double-star", "Read", "{p}/secrets/deep/key.pem", "deny", "rule", deny=["Read(./secrets/**)"]),
    C("read-single-star-one-segment", "Read", "{p}/key.pem", "deny", "rule", deny=["Read(./*.pem)"]),
    C("read-single-star-anchored", "Read", "{p}/secrets/deep/key.pem", "allow", "tool", deny=["Read(./*.pem)"]),
    C("read-tilde-anchor", "Read", "{h}/.ssh/id_rsa", "deny", "rule", deny=["Read(~/.ssh/**)"]),
    C("read-tilde-in-input", "Read", "~/.ssh/id_rsa", "deny", "rule", deny=["Read(~/.ssh/**)"]),
    C("read-root-anchor", "Read", "{o}/notes.txt", "deny", "rule", deny=["Read(/{o}/**)"]),
    C("read-slash-anchor-project", "Read", "{p}/secrets/deep/key.pem", "deny", "rule", deny=["Read(/secrets/**)"]),
    C("read-slash-anchor-home-file", "Read", "{h}/secrets/key", "deny", "rule", deny=["home:Read(/secrets/**)"]),
    C("read-slash-anchor-home-not-project", "Read", "{p}/secrets/deep/key.pem", "allow", "tool",
      deny=["home:Read(/secrets/**)"]),
    C("read-ask-rule", "Read", "{p}/src/app.py", "ask", "rule", ask=["Read(./src/**)"]),
    C("read-runs-in-dontAsk", "Read", "{p}/src/app.py", "allow", "tool", mode="dontAsk"),
    C("read-runs-in-plan", "Read", "{p}/src/app.py", "allow", "tool", mode="plan"),
    C("grep-dir-denied", "Grep", {"pattern": "x", "path": "{p}/secrets"}, "deny", "rule",
      deny=["Read(./secrets/**)"]),
    C("glob-dir-allowed", "Glob", {"pattern": "*.py", "path": "{p}/src"}, "allow", "tool",
      deny=["Read(./secrets/**)"]),
    C("edit-default-asks", "Edit", "{p}/src/app.py", "ask", "mode", suggest=("Edit(/src/app.py)",)),
    C("edit-allow-rule", "Edit", "{p}/src/app.py", "allow", "rule", allow=["Edit(/src/**)"]),
    C("edit-through-link-to-protected", "Edit", "{p}/link_git", "ask", "guard", "protected", mode="acceptEdits",
      allow=["Edit(/link_git)"]),
    # bare family rules: `Edit` speaks for every editing tool, `Read` for every reader
    C("bare-Edit-deny-governs-write", "Write", {"file_path": "{p}/src/app.py", "content": "x"}, "deny", "rule",
      "Edit", deny=["Edit"]),
    C("bare-Edit-deny-governs-multiedit-bypass", "MultiEdit", {"file_path": "{p}/src/app.py", "edits": [
        {"old_string": "x", "new_string": "y"}]}, "deny", "rule", "Edit", deny=["Edit"], mode="bypassPermissions"),
    C("bare-Edit-ask-governs-write-acceptEdits", "Write", {"file_path": "{p}/src/app.py", "content": "x"}, "ask",
      "rule", "Edit", ask=["Edit"], mode="acceptEdits"),
    C("bare-Read-deny-governs-grep", "Grep", {"pattern": "x", "path": "{p}/src"}, "deny", "rule", "Read",
      deny=["Read"]),
    C("bare-Read-deny-governs-glob", "Glob", {"pattern": "*", "path": "{p}/src"}, "deny", "rule", "Read",
      deny=["Read"]),
    C("bare-Read-deny-does-not-govern-edit", "Edit", "{p}/src/app.py", "allow", "mode", deny=["Read"],
      mode="acceptEdits"),
    C("bare-Edit-deny-does-not-govern-read", "Read", "{p}/src/app.py", "allow", "tool", deny=["Edit"]),
    C("edit-rule-governs-write", "Write", {"file_path": "{p}/src/app.py", "content": "x"}, "deny", "rule",
      deny=["Edit(./src/**)"]),
    C("edit-rule-governs-multiedit", "MultiEdit", {"file_path": "{p}/src/app.py", "edits": [
        {"old_string": "x", "new_string": "y"}]}, "allow", "rule", "Edit(/src/**)", allow=["Edit(/src/**)"]),
    C("edit-deny-governs-multiedit", "MultiEdit", {"file_path": "{p}/src/app.py", "edits": [
        {"old_string": "x", "new_string": "y"}]}, "deny", "rule", "Edit(./src/**)", deny=["Edit(./src/**)"]),
    # a rule names its own tool; only `Edit(…)` speaks for the family (Claude Code 2.1.332 asks here too)
    C("multiedit-rule-does-not-govern-edit", "Edit", "{p}/src/app.py", "ask", "mode", allow=["MultiEdit(/src/**)"]),
    C("multiedit-rule-governs-multiedit", "MultiEdit", {"file_path": "{p}/src/app.py", "edits": [
        {"old_string": "x", "new_string": "y"}]}, "allow", "rule", allow=["MultiEdit(/src/**)"]),
    C("read-deny-blocks-edit", "Edit", "{p}/.env", "deny", "rule", "Read(./.env)", deny=["Read(./.env)"]),
    C("edit-symlink-target-outside", "Edit", "{p}/src/link_out", "ask", "guard", "outside the working",
      allow=["Edit(/src/**)"]),
    C("edit-symlink-both-allowed", "Edit", "{p}/src/link_out", "allow", "rule",
      allow=["Edit(/src/**)", "Edit(/{o}/**)"]),
    C("edit-symlink-link-denied", "Edit", "{p}/src/link_out", "deny", "rule", deny=["Edit(/src/link_out)"]),
    C("edit-symlink-target-denied", "Edit", "{p}/src/link_out", "deny", "rule", deny=["Edit(/{o}/**)"]),
    C("edit-acceptEdits-inside", "Edit", "{p}/src/app.py", "allow", "mode", mode="acceptEdits"),
    C("edit-acceptEdits-outside", "Edit", "{o}/notes.txt", "ask", "guard", "outside the working", mode="acceptEdits"),
    C("edit-acceptEdits-additional-dir", "Edit", "{o}/notes.txt", "allow", "mode", mode="acceptEdits",
      extra_dirs=("{o}",)),
    C("edit-acceptEdits-symlink-out", "Edit", "{p}/src/link_out", "ask", "guard", mode="acceptEdits"),
    C("edit-plan-denied", "Edit", "{p}/src/app.py", "deny", "mode", "plan mode", mode="plan"),
    C("edit-dontAsk-denied", "Edit", "{p}/src/app.py", "deny", "mode", "dontAsk", mode="dontAsk"),
    C("edit-bypass-runs", "Edit", "{p}/src/app.py", "allow", "mode", mode="bypassPermissions"),
    C("protected-git", "Edit", "{p}/.git/config", "ask", "guard", "protected"),
    C("protected-git-acceptEdits", "Edit", "{p}/.git/config", "ask", "guard", "protected", mode="acceptEdits"),
    C("protected-not-lifted-by-allow", "Edit", "{p}/.git/config", "ask", "guard", allow=["Edit(/.git/**)"]),
    C("protected-bypass", "Edit", "{p}/.git/config", "allow", "mode", mode="bypassPermissions"),
    C("protected-dontAsk", "Edit", "{p}/.git/config", "deny", "mode", "protected", mode="dontAsk"),
    C("protected-mcp-json", "Write", {"file_path": "{p}/.mcp.json", "content": "{}"}, "ask", "guard",
      mode="acceptEdits"),
    C("protected-vigil-dir", "Write", {"file_path": "{p}/.vigil/settings.json", "content": "{}"}, "ask", "guard",
      mode="acceptEdits"),
    C("protected-claude-dir", "Edit", "{p}/.claude/settings.json", "ask", "guard", mode="acceptEdits"),
    C("protected-shell-rc", "Edit", "{h}/.zshrc", "ask", "guard", allow=["Edit(~/**)"]),
    C("protected-via-symlink", "Edit", "{p}/link_git", "ask", "guard", "protected", mode="acceptEdits"),
]

OUT = "outside the working directories"
WORKING_DIR_CASES = [
    # Read, Glob, Grep: outside asks in every mode but bypassPermissions; symlinks and `..` resolved
    C("wd-read-outside", "Read", "{o}/notes.txt", "ask", "guard", OUT, suggest=("Read(/{o}/notes.txt)",)),
    C("wd-read-outside-dotdot", "Read", "{p}/../outside/notes.txt", "ask", "guard", OUT),
    C("wd-read-outside-relative-dotdot", "Read", "src/../../outside/notes.txt", "ask", "guard", OUT),
    C("wd-read-symlink-out", "Read", "{p}/src/link_out", "ask", "guard", OUT),
    C("wd-read-symlinked-dir-out", "Read", "{p}/linkdir/notes.txt", "ask", "guard", OUT),
    C("wd-read-dotdot-back-in", "Read", "{p}/src/../notes", "allow", "tool"),
    C("wd-read-sibling-prefix", "Read", "{e}/x.txt", "ask", "guard", OUT),
    C("wd-read-outside-plan", "Read", "{o}/notes.txt", "ask", "guard", mode="plan"),
    C("wd-read-outside-acceptEdits", "Read", "{o}/notes.txt", "ask", "guard", mode="acceptEdits"),
    C("wd-read-outside-dontAsk", "Read", "{o}/notes.txt", "deny", "mode", "dontAsk", mode="dontAsk"),
    C("wd-read-outside-bypass", "Read", "{o}/notes.txt", "allow", "tool", mode="bypassPermissions"),
    C("wd-read-outside-allow-rule", "Read", "{o}/notes.txt", "allow", "tool", allow=["Read(/{o}/**)"]),
    C("wd-grep-outside-read-rule", "Grep", {"pattern": "x", "path": "{o}"}, "allow", "tool", allow=["Read(/{o}/**)"]),
    C("wd-read-additional-dir", "Read", "{o}/notes.txt", "allow", "tool", extra_dirs=("{o}",)),
    C("wd-read-additional-dir-relative", "Read", "{o}/notes.txt", "allow", "tool", extra_dirs=("../outside",)),
    C("wd-glob-outside", "Glob", {"pattern": "*", "path": "{o}"}, "ask", "guard", OUT),
    C("wd-glob-home-tilde", "Glob", {"pattern": "*", "path": "~"}, "ask", "guard", OUT),
    C("wd-glob-outside-dotdot", "Glob", {"pattern": "*", "path": "{p}/.."}, "ask", "guard", OUT),
    C("wd-glob-inside", "Glob", {"pattern": "*", "path": "{p}/src"}, "allow", "tool"),
    C("wd-grep-outside", "Grep", {"pattern": "x", "path": "{h}"}, "ask", "guard", OUT),
    C("wd-grep-symlinked-dir", "Grep", {"pattern": "x", "path": "{p}/linkdir"}, "ask", "guard", OUT),
    # Write, Edit: outside asks, acceptEdits included; an Edit allow rule naming the path lifts it
    C("wd-write-outside", "Write", {"file_path": "{o}/new.txt", "content": "x"}, "ask", "guard", OUT,
      suggest=("Edit(/{o}/new.txt)",)),
    C("wd-write-outside-acceptEdits", "Write", {"file_path": "{o}/new.txt", "content": "x"}, "ask", "guard",
      mode="acceptEdits"),
    C("wd-write-sibling-acceptEdits", "Write", {"file_path": "{e}/x.txt", "content": "x"}, "ask", "guard", OUT,
      mode="acceptEdits"),
    C("wd-write-inside-acceptEdits", "Write", {"file_path": "{p}/new.txt", "content": "x"}, "allow", "mode",
      mode="acceptEdits"),
    C("wd-edit-dotdot-acceptEdits", "Edit", "{p}/src/../../outside/notes.txt", "ask", "guard", OUT,
      mode="acceptEdits"),
    C("wd-edit-symlinked-dir-acceptEdits", "Edit", "{p}/linkdir/notes.txt", "ask", "guard", mode="acceptEdits"),
    C("wd-edit-outside-allow-rule", "Edit", "{o}/notes.txt", "allow", "rule", allow=["Edit(/{o}/**)"]),
    C("wd-edit-outside-bypass", "Edit", "{o}/notes.txt", "allow", "mode", mode="bypassPermissions"),
    C("wd-edit-outside-dontAsk", "Edit", "{o}/notes.txt", "deny", "mode", mode="dontAsk"),
    # Bash: read-only commands and writers, their path arguments and redirects, `cd` and globs
    C("wd-bash-cat-outside", "Bash", "cat {o}/notes.txt", "ask", "guard", OUT),
    C("wd-bash-cat-dotdot", "Bash", "cat ../outside/notes.txt", "ask", "guard", OUT),
    C("wd-bash-cd-dotdot", "Bash", "cd .. && cat outside/notes.txt", "ask", "guard", OUT),
    C("wd-bash-cat-symlink", "Bash", "cat src/link_out", "ask", "guard", OUT),
    C("wd-bash-cat-symlinked-dir", "Bash", "head linkdir/notes.txt", "ask", "guard", OUT),
    C("wd-bash-ls-parent", "Bash", "ls ..", "ask", "guard", OUT),
    C("wd-bash-glob-outside", "Bash", "cat ../*/notes.txt", "ask", "guard", OUT),
    C("wd-bash-tilde", "Bash", "cat ~/.zshrc", "ask", "guard", OUT),
    C("wd-bash-outside-plan", "Bash", "cat {o}/notes.txt", "ask", "guard", mode="plan"),
    C("wd-bash-outside-dontAsk", "Bash", "cat {o}/notes.txt", "deny", "mode", mode="dontAsk"),
    C("wd-bash-outside-bypass", "Bash", "cat {o}/notes.txt", "allow", "tool", mode="bypassPermissions"),
    C("wd-bash-outside-read-rule", "Bash", "cat {o}/notes.txt", "allow", "tool", allow=["Read(/{o}/**)"]),
    C("wd-bash-additional-dir", "Bash", "cat {o}/notes.txt", "allow", "tool", extra_dirs=("{o}",)),
    C("wd-bash-read-allowed-by-its-rule", "Bash", "cat {o}/notes.txt", "allow", "rule", allow=["Bash(cat *)"]),
    C("wd-bash-read-bare-bash-rule", "Bash", "cat {o}/notes.txt", "allow", "rule", allow=["Bash"]),
    C("wd-bash-read-other-command-rule", "Bash", "echo hi && cat {o}/notes.txt", "ask", "guard", OUT,
      allow=["Bash(echo *)"]),
    C("wd-bash-redirect-read-needs-every-command", "Bash", "echo hi && cat < {o}/notes.txt", "ask", "guard", OUT,
      allow=["Bash(cat *)"]),
    C("wd-bash-touch-outside-allowed", "Bash", "touch ../outside.txt", "ask", "guard", OUT,
      allow=["Bash(touch:*)"]),
    C("wd-bash-touch-inside-allowed", "Bash", "touch new.txt", "allow", "rule", allow=["Bash(touch:*)"]),
    C("wd-bash-rm-outside-allowed", "Bash", "rm -f {o}/notes.txt", "ask", "guard", OUT, allow=["Bash(rm *)"]),
    C("wd-bash-redirect-outside-acceptEdits", "Bash", "echo x > ../x.txt", "ask", "guard", OUT,
      mode="acceptEdits"),
    C("wd-bash-sibling-acceptEdits", "Bash", "touch ../proj-evil/y", "ask", "guard", OUT, mode="acceptEdits"),
    C("wd-bash-cp-out-acceptEdits", "Bash", "cp notes {o}/copy", "ask", "guard", OUT, mode="acceptEdits"),
    # syntax in which bash may run a command no simple command shows needs an allow rule of its own
    C("hidden-subscript-needs-its-own-rule", "Bash", "echo hi && [[ -v 'a[$(touch p)]' ]]", "ask", "mode",
      allow=["Bash(echo *)"], suggest=("Bash(echo hi && [[ -v 'a[$(touch p)]' ]])",)),
]

OTHER_CASES = [
    C("web-domain-allow", "WebFetch", {"url": "https://example.com/a"}, "allow", "rule",
      allow=["WebFetch(domain:example.com)"]),
    C("web-domain-exact", "WebFetch", {"url": "https://api.example.com/a"}, "ask", "mode",
      allow=["WebFetch(domain:example.com)"], suggest=("WebFetch(domain:api.example.com)",)),
    C("web-subdomain-star", "WebFetch", {"url": "https://api.example.com/a"}, "allow", "rule",
      allow=["WebFetch(domain:*.example.com)"]),
    C("web-subdomain-star-not-apex", "WebFetch", {"url": "https://example.com/a"}, "ask", "mode",
      allow=["WebFetch(domain:*.example.com)"]),
    C("web-host-case", "WebFetch", {"url": "https://EXAMPLE.com/"}, "allow", "rule",
      allow=["WebFetch(domain:example.com)"]),
    C("web-domain-deny", "WebFetch", {"url": "http://evil.com/x"}, "deny", "rule", deny=["WebFetch(domain:evil.com)"]),
    C("web-lookalike-not-denied", "WebFetch", {"url": "http://notevil.com/x"}, "ask", "mode",
      deny=["WebFetch(domain:evil.com)"]),
    C("mcp-server-rule", "mcp__files__read_file", {"path": "a"}, "allow", "rule", allow=["mcp__files"]),
    C("mcp-server-star", "mcp__files__write_file", {"path": "a"}, "allow", "rule", allow=["mcp__files__*"]),
    C("mcp-exact-tool", "mcp__files__read_file", {"path": "a"}, "allow", "rule", allow=["mcp__files__read_file"]),
    C("mcp-exact-other-tool", "mcp__files__write_file", {"path": "a"}, "ask", "mode",
      allow=["mcp__files__read_file"], suggest=("mcp__files__write_file",)),
    C("mcp-other-server", "mcp__files__read_file", {"path": "a"}, "ask", "mode", allow=["mcp__other"]),
    C("mcp-all-denied", "mcp__files__read_file", {"path": "a"}, "deny", "rule", deny=["mcp__*"]),
    C("mcp-readonly-hint-still-asks", "mcp__files__read_file", {"path": "a"}, "ask", "mode"),
    C("mcp-readonly-in-plan-asks", "mcp__files__read_file", {"path": "a"}, "ask", "mode", mode="plan"),
    C("mcp-write-in-plan-denied", "mcp__files__write_file", {"path": "a"}, "deny", "mode", mode="plan"),
    C("always-ask-default", "Deploy", {"target": "prod"}, "ask", "tool", "always asks"),
    C("always-ask-bypass", "Deploy", {"target": "prod"}, "ask", "tool", mode="bypassPermissions"),
    C("always-ask-rule-allows", "Deploy", {"target": "staging"}, "allow", "rule", allow=["Deploy(stag*)"]),
    C("other-tool-deny-specifier", "Deploy", {"target": "prod-eu"}, "deny", "rule", "Deploy(prod*)",
      deny=["Deploy(prod*)"], allow=["Deploy"]),
    C("other-tool-ask-specifier", "Deploy", {"target": "prod-eu"}, "ask", "rule", ask=["Deploy(prod*)"],
      allow=["Deploy(prod*)"]),
    C("other-tool-specifier-miss", "Deploy", {"target": "staging"}, "allow", "rule", allow=["Deploy(stag*)"],
      deny=["Deploy(prod*)"]),
    C("other-tool-specifier-not-text", "Deploy", {"target": ["prod"]}, "ask", "tool", deny=["Deploy(prod*)"]),
    C("always-ask-dontAsk", "Deploy", {"target": "prod"}, "deny", "mode", mode="dontAsk"),
    C("user-interaction-in-plan", "AskUserQuestion", {}, "allow", "tool", "asks the user itself", mode="plan"),
    C("unknown-deny-guard-any-tool", "Read", "{p}/src/app.py", "ask", "guard", "could not be loaded",
      guards=(DenyGuard("bad.json", "line 3: not valid JSON"),)),
    C("unknown-deny-guard-readonly-bash", "Bash", "git status", "ask", "guard",
      guards=(DenyGuard("bad.json", "line 3"),)),
    C("unknown-deny-guard-other-tool", "Read", "{p}/src/app.py", "allow", "tool",
      guards=(DenyGuard("bad.json", "Bash( rule", ("Bash",)),)),
    C("unknown-deny-guard-its-tool", "Bash", "npm test", "ask", "guard", allow=["Bash(npm test)"],
      guards=(DenyGuard("bad.json", "Bash( rule", ("Bash",)),)),
    C("unknown-deny-guard-dontAsk", "Edit", "{p}/src/app.py", "deny", "mode", mode="dontAsk",
      guards=(DenyGuard("bad.json", "x"),)),
    C("deny-beats-guard", "Bash", "curl x", "deny", "rule", deny=["Bash(curl *)"],
      guards=(DenyGuard("bad.json", "x"),)),
    C("unknown-deny-guard-one-of-its-tools", "Bash", "npm test", "ask", "guard", allow=["Bash(npm test)"],
      guards=(DenyGuard("bad.json", "Edit( rule; Bash( rule", ("Edit", "Bash")),)),
    C("unknown-deny-guard-edit-family", "Write", {"file_path": "{p}/src/app.py", "content": "x"}, "ask", "guard",
      allow=["Write"], guards=(DenyGuard("bad.json", "Edit( rule", ("Edit",)),)),
    # a trailing dot spells the same host: a deny must hold for it
    C("web-domain-deny-trailing-dot", "WebFetch", {"url": "http://evil.com./x"}, "deny", "rule",
      deny=["WebFetch(domain:evil.com)"]),
    C("web-domain-rule-trailing-dot", "WebFetch", {"url": "http://evil.com/x"}, "deny", "rule",
      deny=["WebFetch(domain:evil.com.)"]),
    # `mcp__git` is a server: it does not name the tools of a server called `github`
    C("mcp-server-rule-is-a-whole-name", "mcp__files__read_file", {"path": "a"}, "ask", "mode", allow=["mcp__fil"]),
]

CASES = BASH_CASES + PATH_CASES + WORKING_DIR_CASES + OTHER_CASES


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("world")
    p, o, h, e = root / "proj", root / "outside", root / "home", root / "proj-evil"
    for d in (p / "src", p / "sub", p / "secrets" / "deep", p / "docs", p / ".git", o, h / ".ssh", h / "secrets", e):
        d.mkdir(parents=True)
    for f in (p / "src/app.py", p / ".env", p / "sub/.env", p / "secrets/deep/key.pem", p / "key.pem",
              p / "notes", p / ".git/config", p / "docs" / NFC_NAME, o / "notes.txt", h / ".zshrc",
              h / ".ssh/id_rsa", h / "secrets/key", e / "x.txt"):
        f.write_text("x")
    os.symlink(p / ".env", p / "link_env")
    os.symlink(o / "notes.txt", p / "src/link_out")
    os.symlink(p / ".git/config", p / "link_git")
    os.symlink(o, p / "linkdir")
    return {"p": str(p), "o": str(o), "h": str(h), "e": str(e)}


def fill(value: Any, world: dict[str, str]) -> Any:
    if isinstance(value, str):
        return (value.replace("{p}", world["p"]).replace("{o}", world["o"]).replace("{h}", world["h"])
                .replace("{e}", world["e"]))
    if isinstance(value, dict):
        return {k: fill(v, world) for k, v in value.items()}
    return value


def policy_for(case: Case, world: dict[str, str]) -> RulePolicy:
    rules = []
    for behavior, texts in case.rules.items():
        for text in texts:
            base = world["p"]
            if text.startswith("home:"):
                text, base = text[5:], world["h"]
            rules.append(make_rule(fill(text, world), behavior, "matrix", base))  # type: ignore[arg-type]
    return RulePolicy(cwd=world["p"], mode=case.mode, rules=rules, guards=case.guards, home=world["h"],  # type: ignore[arg-type]
                      additional_dirs=[fill(d, world) for d in case.extra_dirs])


def test_the_matrix_covers_at_least_80_cases():
    assert len(CASES) >= 80
    assert len({c.id for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_rule_matrix(case: Case, world: dict[str, str]):
    spec = BY_NAME[case.tool]
    data = fill(case.input, world)
    policy = policy_for(case, world)
    decision = policy.decide(PermissionQuery(spec, data, spec.flags_of(data), world["p"]))
    assert (decision.behavior, decision.decided_by if case.by else None) == (case.expect, case.by), decision
    if case.why:
        assert case.why in decision.reason or case.why == decision.rule, decision
    if case.suggest is not None:
        assert decision.suggested_rules == tuple(fill(s, world) for s in case.suggest)
    if decision.behavior == "ask" and "outside the working directories" in decision.reason:
        # a path outside is lifted by a Read/Edit allow rule naming it: that rule is what is offered
        assert decision.suggested_rules and all(r.startswith(("Read(//", "Edit(//")) for r in decision.suggested_rules)
    elif decision.behavior == "ask" and decision.decided_by != "mode":
        # an always-allow that no rule could honour is never offered
        assert decision.suggested_rules == ()
