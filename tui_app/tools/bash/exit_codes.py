"""What a command's exit status means.

Non-zero is a failure, except exit 1 of commands for which 1 is an answer: grep/rg ("no match"),
find (some paths unreadable), diff and `git diff` ("they differ"), test/[ ("false"), `git grep`.
The status of a command line is the status of its last command, so that is the one looked at.
"""

from __future__ import annotations

import os
import re
import shlex

ANSWER_ON_ONE = frozenset({"grep", "egrep", "fgrep", "rg", "find", "diff", "test", "["})
GIT_ANSWER_ON_ONE = frozenset({"diff", "grep"})
_SEPARATORS = frozenset({"|", "||", "&&", ";", "&", "|&", ";;", "(", ")", "\n"})
_PREFIXES = frozenset({"command", "exec", "time", "nice", "nohup", "builtin", "env"})
# `<(…)`, `>(…)`, `$(…)` and backticks: inner commands whose status is not the line's
_SUBSTITUTION = re.compile(r"[<>$]\([^()]*\)|`[^`]*`")
# git options that take a separate value
_GIT_VALUE_OPTIONS = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path"})


def last_command(command: str) -> list[str]:
    """The words of the last simple command of a command line ([] when it cannot be parsed)."""
    previous = None
    while previous != command:  # innermost first, so nested substitutions go too
        previous, command = command, _SUBSTITUTION.sub(" ", command)
    lexer = shlex.shlex(command.replace("\n", " ; "), posix=True, punctuation_chars=";&|()<>")
    lexer.whitespace_split = True
    try:
        tokens = list(lexer)
    except ValueError:  # unbalanced quotes: the shell would have failed anyway
        return []
    segments: list[list[str]] = [[]]
    for token in tokens:
        if token in _SEPARATORS:
            segments.append([])
        else:
            segments[-1].append(token)
    # a line may end with a separator (`grep x f &`): the last segment that has words
    words = next((s for s in reversed(segments) if s), [])
    return _without_prefixes(words)


def _without_prefixes(words: list[str]) -> list[str]:
    index = 0
    while index < len(words):
        word = words[index]
        if "=" in word and word.split("=", 1)[0].isidentifier():
            index += 1  # VAR=value before the command
        elif word in _PREFIXES:
            index += 1
        else:
            break
    return words[index:]


def answers_with_one(command: str) -> bool:
    words = last_command(command)
    if not words:
        return False
    name = os.path.basename(words[0])
    if name in ANSWER_ON_ONE:
        return True
    if name != "git":
        return False
    rest = iter(words[1:])
    for word in rest:
        if word in _GIT_VALUE_OPTIONS:
            next(rest, None)
        elif not word.startswith("-"):
            return word in GIT_ANSWER_ON_ONE
    return False


def is_failure(command: str, exit_code: int) -> bool:
    if exit_code == 0:
        return False
    return not (exit_code == 1 and answers_with_one(command))
