"""A shell command line split into the simple commands it would run, with tree-sitter-bash.

Permission rules are about simple commands, not command lines: `git status && rm -rf build` runs
two commands, `echo $(curl x)` runs curl too, and `timeout 5 npm test > log` runs `npm test` and
writes `log`. This module turns a command line into:

* every simple command, wherever it sits (lists, pipelines, subshells, `$( )`, backticks,
  process substitutions, heredoc bodies, function bodies, `bash -c '…'`, `eval` and `trap` strings),
  with the wrappers `timeout time nice nohup stdbuf command builtin` and bare `xargs` stripped;
* every redirection with its target;
* or, when the text is not valid shell (or is over 10,000 characters), the reason it could not
  be read — such a command is never matched against an allow rule.

A real grammar is used because every regex split has a hole (quotes, escapes, nested `$( )`).
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tree_sitter import Node, Parser

MAX_COMMAND_CHARS = 10_000
MAX_NESTING = 4
SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh"})
OUTPUT_OPS = frozenset({">", ">>", "&>", "&>>", ">|", "<>"})
HARMLESS_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr"})
_REDIRECT_NODES = frozenset({"file_redirect", "heredoc_redirect", "herestring_redirect"})
_STATEMENT_COMMANDS = frozenset({"declaration_command", "unset_command"})

_local = threading.local()


@lru_cache(maxsize=1)
def _language() -> object:
    # loaded with the first command parsed: a session that runs no Bash never pays for it
    import tree_sitter_bash
    from tree_sitter import Language

    return Language(tree_sitter_bash.language())


def _parser() -> Parser:
    # a Parser is not safe to share between threads; the runtime and a UI thread may both parse
    parser = getattr(_local, "parser", None)
    if parser is None:
        from tree_sitter import Parser

        parser = _local.parser = Parser(_language())
    return parser


#: one run of a word: ("raw", text) unquoted (globs, braces and `~` are live), ("lit", text) quoted or
#: escaped, ("var", name) / ("qvar", name) a plain parameter unquoted / quoted, ("unknown", source)
#: anything else that expands at run time (substitutions, `${x:-…}`, `$_` …)
Piece = tuple[str, str]


@dataclass(frozen=True)
class Word:
    #: the word as written (quotes included)
    source: str
    #: its value after quote removal, or None when it expands at run time ($VAR, $( ), globs stay)
    value: str | None
    #: what the word is made of, for resolving it (see `bash_words`)
    pieces: tuple[Piece, ...] = ()


@dataclass(frozen=True)
class Redirect:
    op: str
    target: Word
    fd: str | None = None

    @property
    def writes(self) -> bool:
        """Output to a file (not a descriptor copy like `2>&1`, not /dev/null)."""
        if self.op == ">&":
            return not (self.target.value or "").isdigit() and self.target.value != "-"
        return self.op in OUTPUT_OPS and self.target.value not in HARMLESS_TARGETS

    @property
    def reads(self) -> bool:
        return self.op in ("<", "<>")


@dataclass(frozen=True)
class SimpleCommand:
    words: tuple[Word, ...]
    assignments: tuple[str, ...] = ()
    wrappers: tuple[str, ...] = ()

    @property
    def text(self) -> str:
        """The command as rules see it: wrappers stripped, words joined by one space."""
        return " ".join(w.source for w in self.words)

    @property
    def full_text(self) -> str:
        return " ".join((*self.assignments, self.text)).strip()

    @property
    def name(self) -> str | None:
        return self.words[0].value if self.words else None

    @property
    def args(self) -> tuple[Word, ...]:
        return self.words[1:]


@dataclass(frozen=True)
class ParsedCommand:
    source: str
    commands: tuple[SimpleCommand, ...] = ()
    redirects: tuple[Redirect, ...] = ()
    #: why the command could not be read (then `commands` is empty)
    error: str | None = None
    #: every kind of syntax node in the line (the classifier allows only a few)
    node_types: frozenset[str] = frozenset()

    @property
    def ok(self) -> bool:
        return self.error is None


class _Unreadable(Exception):
    pass


@lru_cache(maxsize=2048)
def parse_command(source: str) -> ParsedCommand:
    if len(source) > MAX_COMMAND_CHARS:
        return ParsedCommand(source, error=f"the command is longer than {MAX_COMMAND_CHARS} characters")
    types: set[str] = set()
    try:
        commands, redirects = _split(source, 0, types)
    except _Unreadable as exc:
        return ParsedCommand(source, error=str(exc))
    return ParsedCommand(source, tuple(commands), tuple(redirects), node_types=frozenset(types))


def _split(source: str, depth: int, types: set[str] | None = None) -> tuple[list[SimpleCommand], list[Redirect]]:
    if depth > MAX_NESTING:
        raise _Unreadable("shell strings are nested too deeply to check")
    tree = _parser().parse(source.encode("utf-8"))
    root = tree.root_node
    if root.has_error:
        raise _Unreadable(_syntax_error(root, source))
    commands: list[SimpleCommand] = []
    redirects: list[Redirect] = []
    _walk(root, commands, redirects, depth, types if types is not None else set())
    return commands, redirects


def _syntax_error(root: Node, source: str) -> str:
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "ERROR" or node.is_missing:
            line, col = node.start_point
            near = source.encode("utf-8")[node.start_byte:node.start_byte + 20].decode("utf-8", "replace")
            return f"the command is not valid shell (line {line + 1}, column {col + 1}, near {near!r})"
        stack.extend(reversed(node.children))
    return "the command is not valid shell"


def _walk(node: Node, commands: list[SimpleCommand], redirects: list[Redirect], depth: int,
          types: set[str]) -> None:
    kind = node.type
    if kind == "test_command" and node.children and node.children[0].type == "[":
        # `[ … ]` is the `[` builtin, a command like `test` (only `[[ … ]]` is syntax of its own)
        _bracket_test(node, commands, depth, types)
        return
    if node.is_named:
        types.add(kind)
    if kind == "expansion" and [c.type for c in node.children] != ["${", "variable_name", "}"]:
        # `${x:-…}`, `${x:offset}`, `${!x}` …: arithmetic and indirection can run commands
        types.add("expansion_with_operator")
    if kind == "compound_statement" and node.children and node.children[0].type == "((":
        types.add("arithmetic_command")  # `(( … ))` evaluates subscripts, and a `$( )` in one
    if kind == "command":
        command = _simple_command(node)
        commands.append(command)
        _nested_strings(command, commands, redirects, depth)
    elif kind == "file_redirect":
        redirects.append(_redirect(node))
    elif kind in _STATEMENT_COMMANDS:
        # `export PATH=/x`, `unset X`: they change what later commands run, so they are commands too
        commands.append(SimpleCommand(tuple(Word(_text(c), _literal(c) if c.is_named else c.type)
                                            for c in node.children)))
    elif kind in ("variable_assignment", "variable_assignments") and node.parent is not None and (
            node.parent.type not in ("command", "declaration_command", "variable_assignments")):
        # a bare `PATH=/tmp/evil; ls` is not a prefix of one command: it changes every later one
        assignments = node.children if kind == "variable_assignments" else [node]
        commands.append(SimpleCommand((), tuple(_text(a) for a in assignments)))
    for child in node.children:
        _walk(child, commands, redirects, depth, types)


def _bracket_test(node: Node, commands: list[SimpleCommand], depth: int, types: set[str]) -> None:
    """`[ EXPR ]` as the simple command `[ EXPR ]` (read like `test EXPR ]`), and the commands
    its substitutions run."""
    inner = _text(node)[1:-1]
    found: list[SimpleCommand] = []
    tree = _parser().parse(f"test {inner} ]".encode())
    if tree.root_node.has_error:
        raise _Unreadable(_syntax_error(tree.root_node, inner))
    _walk(tree.root_node, found, [], depth, types)
    head = found[0]
    commands.append(SimpleCommand((Word("[", "[", (("lit", "["),)), *head.words[1:]), head.assignments,
                                  head.wrappers))
    commands.extend(found[1:])


def _text(node: Node) -> str:
    return node.text.decode("utf-8", "replace") if node.text is not None else ""


def _simple_command(node: Node) -> SimpleCommand:
    assignments: list[str] = []
    words: list[Word] = []
    for child in node.children:
        if child.type == "variable_assignment":
            assignments.append(_text(child))
        elif child.type in _REDIRECT_NODES:
            continue
        elif child.type == "command_name":
            words.append(_word(child.children[0] if child.children else child))
        elif child.is_named:
            words.append(_word(child))
    # `echo >> log hi`: words after a redirect's target belong to the command
    parent = node.parent
    if parent is not None and parent.type == "redirected_statement":
        for redirect in _redirect_nodes(parent):
            words.extend(_word(extra) for extra in _destinations(redirect)[1:])
    stripped, wrappers = strip_wrappers(tuple(words))
    return SimpleCommand(stripped, tuple(assignments), wrappers)


def _redirect_nodes(statement: Node) -> list[Node]:
    found = []
    for child in statement.children:
        if child.type == "file_redirect":
            found.append(child)
        elif child.type == "heredoc_redirect":
            found.extend(c for c in child.children if c.type == "file_redirect")
    return found


def _destinations(redirect: Node) -> list[Node]:
    return [c for i, c in enumerate(redirect.children) if redirect.field_name_for_child(i) == "destination"]


def _redirect(node: Node) -> Redirect:
    fd = None
    op = ""
    for i, child in enumerate(node.children):
        field = node.field_name_for_child(i)
        if field == "descriptor":
            fd = _text(child)
        elif field != "destination" and not child.is_named:
            op = child.type
    targets = _destinations(node)
    target = _word(targets[0]) if targets else Word("", None)
    return Redirect(op, target, fd)


# ---- words ---------------------------------------------------------------------------------------

def _word(node: Node) -> Word:
    return Word(_text(node), _literal(node), _pieces(node))


def _literal(node: Node) -> str | None:
    kind = node.type
    if kind in ("word", "number"):
        return _unescape(_text(node))
    if kind == "raw_string":
        return _text(node)[1:-1]
    if kind == "string":
        parts = []
        for child in node.children:
            if child.type == '"':
                continue
            if child.type != "string_content":
                return None
            parts.append(_unescape(_text(child), '$`"\\\n'))
        return "".join(parts)
    if kind == "concatenation":
        values = [_literal(c) for c in node.children]
        return None if any(v is None for v in values) else "".join(values)  # type: ignore[arg-type]
    return None


def _pieces(node: Node) -> tuple[Piece, ...]:
    """The runs a word is made of (see `Piece`). A composite node whose children do not cover its
    text exactly (a `$"…"` string, a token the grammar left out) is unknown as a whole."""
    kind = node.type
    if kind == "word":
        return _unquoted_pieces(_text(node))
    if kind == "number":
        return (("raw", _text(node)),)
    if kind == "raw_string":
        return (("lit", _text(node)[1:-1]),)
    if kind == "ansi_c_string":
        decoded = ansi_c(_text(node)[2:-1])
        return (("lit", decoded),) if decoded is not None else (("unknown", _text(node)),)
    if kind in ("simple_expansion", "expansion"):
        name = _parameter(node)
        return (("var", name),) if name else (("unknown", _text(node)),)
    if kind == "string":
        inner = [c for c in node.children if c.type != '"']
        if not _covers(node, inner, 1, 1):
            return (("unknown", _text(node)),)
        out: list[Piece] = []
        for child in inner:
            if child.type == "string_content":
                out.append(("lit", _unescape(_text(child), '$`"\\\n')))
            elif child.type in ("simple_expansion", "expansion") and _parameter(child):
                out.append(("qvar", _parameter(child) or ""))
            else:
                out.append(("unknown", _text(child)))
        return tuple(out) or (("lit", ""),)
    if kind == "concatenation" and _covers(node, node.children, 0, 0):
        return tuple(piece for child in node.children for piece in _pieces(child))
    return (("unknown", _text(node)),)


def _covers(node: Node, children: list[Node], head: int, tail: int) -> bool:
    """The children, back to back, are exactly the node's text between `head` and `tail` bytes."""
    at = node.start_byte + head
    for child in children:
        if child.start_byte != at:
            return False
        at = child.end_byte
    return at == node.end_byte - tail


def _parameter(node: Node) -> str | None:
    """`$NAME` or `${NAME}`: the name. Special parameters (`$_`, `$@`, `$1` …) and any operator
    (`${x:-…}`, `${#x}`, `${!x}`) are not plain parameters."""
    named = [c for c in node.children if c.is_named]
    if len(named) != 1 or named[0].type != "variable_name":
        return None
    if node.type == "expansion" and [c.type for c in node.children] != ["${", "variable_name", "}"]:
        return None
    return _text(named[0])


def _unquoted_pieces(text: str) -> tuple[Piece, ...]:
    out: list[Piece] = []

    def add(kind: str, chunk: str) -> None:
        if out and out[-1][0] == kind:
            out[-1] = (kind, out[-1][1] + chunk)
        else:
            out.append((kind, chunk))

    i = 0
    while i < len(text):
        if text[i] == "\\" and i + 1 < len(text):
            if text[i + 1] != "\n":
                add("lit", text[i + 1])
            i += 2
            continue
        add("raw", text[i])
        i += 1
    return tuple(out)


_SIMPLE_ESCAPES = {"a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r",
                   "t": "\t", "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?"}


def ansi_c(body: str) -> str | None:
    """The value of `$'…'` (its body): bash's escapes; None for what is not worth guessing
    (`\\c` control characters). A NUL ends the string, as in bash."""
    out, i = [], 0
    while i < len(body):
        ch = body[i]
        if ch != "\\" or i + 1 >= len(body):
            out.append(ch)
            i += 1
            continue
        nxt = body[i + 1]
        if nxt in _SIMPLE_ESCAPES:
            out.append(_SIMPLE_ESCAPES[nxt])
            i += 2
        elif nxt in "01234567":
            j = i + 1
            while j < len(body) and j < i + 4 and body[j] in "01234567":
                j += 1
            out.append(chr(int(body[i + 1:j], 8) & 0xFF))
            i = j
        elif nxt in "xuU":
            width = {"x": 2, "u": 4, "U": 8}[nxt]
            j = i + 2
            while j < len(body) and j < i + 2 + width and body[j] in "0123456789abcdefABCDEF":
                j += 1
            if j == i + 2:
                out.append("\\" + nxt)
            else:
                try:
                    out.append(chr(int(body[i + 2:j], 16)))
                except (ValueError, OverflowError):
                    return None
            i = j
        elif nxt == "c":
            return None
        else:
            out.append("\\" + nxt)
            i += 2
    text = "".join(out)
    return text.split("\x00", 1)[0]


def _unescape(text: str, escapable: str | None = None) -> str:
    """Backslash removal: before any character unquoted; inside double quotes only before
    dollar, backtick, double quote, backslash and newline."""
    out, i = [], 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text) and (escapable is None or text[i + 1] in escapable):
            if text[i + 1] != "\n":
                out.append(text[i + 1])
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


# ---- wrappers and nested shells -----------------------------------------------------------------

def _value(words: tuple[Word, ...], i: int) -> str | None:
    return words[i].value if i < len(words) else None


def _skip_options(words: tuple[Word, ...], i: int, with_value: frozenset[str]) -> int | None:
    """Skip a wrapper's options; None when one of them cannot be read (then nothing is stripped)."""
    while i < len(words):
        value = words[i].value
        if value is None:
            return None
        if value == "--":
            return i + 1
        if not value.startswith("-") or value == "-":
            return i
        i += 2 if value in with_value else 1
    return i


#: where a program named by its path is the system's program of that name: `/usr/bin/timeout 5 curl`
#: runs curl. Anywhere else (`./timeout 5 ls`) the path names whatever was put there — a script in
#: the project, say — which is no wrapper and no read-only command.
SYSTEM_BIN = frozenset({"/bin", "/usr/bin", "/usr/local/bin", "/sbin", "/usr/sbin"})


def program_name(name: str | None) -> str:
    """`/usr/bin/timeout` is `timeout`; `./timeout` and `/tmp/x/timeout` stay as written."""
    head, _, base = (name or "").rpartition("/")
    return base if head in SYSTEM_BIN else (name or "")


def _after_wrapper(words: tuple[Word, ...]) -> int | None:
    """Where the wrapped command starts, or None when words[0] is not a strippable wrapper."""
    name = program_name(_value(words, 0))
    if name in ("time", "nohup", "builtin"):
        return _skip_options(words, 1, frozenset())
    if name == "command":
        following = _value(words, 1) or ""
        if following.startswith("-") and following.strip("-p") != "":
            return None  # `command -v x` asks a question; it does not wrap
        return _skip_options(words, 1, frozenset())
    if name == "nice":
        return _skip_options(words, 1, frozenset({"-n", "--adjustment"}))
    if name == "stdbuf":
        return _skip_options(words, 1, frozenset({"-i", "-o", "-e"}))
    if name == "timeout":
        start = _skip_options(words, 1, frozenset({"-s", "-k", "--signal", "--kill-after"}))
        return None if start is None or start >= len(words) else start + 1  # the duration
    if name == "xargs" and len(words) > 1 and not (_value(words, 1) or "-").startswith("-"):
        return 1
    return None


XARGS_VALUE_OPTIONS = frozenset({"-a", "-d", "-E", "-I", "-L", "-n", "-P", "-s"})


def strip_wrappers(words: tuple[Word, ...]) -> tuple[tuple[Word, ...], tuple[str, ...]]:
    wrappers: list[str] = []
    while words:
        start = _after_wrapper(words)
        if start is None or start >= len(words):
            break
        wrappers.append(program_name(words[0].value))
        words = words[start:]
    return words, tuple(wrappers)


def _trap_action(command: SimpleCommand) -> str | None:
    """`trap 'CMD' EXIT`: the command a trap runs later in the same shell (None: it sets none)."""
    args = list(command.args)
    while args and args[0].value in ("-p", "-l", "-P"):
        args.pop(0)
    if args and args[0].value == "--":
        args.pop(0)
    if len(args) < 2 or args[0].value == "-":
        return None  # `trap INT`, `trap - INT`: reset, nothing to run
    if args[0].value is None:
        raise _Unreadable("`trap` sets a command only known at run time")
    return args[0].value


def _nested_strings(command: SimpleCommand, commands: list[SimpleCommand], redirects: list[Redirect],
                    depth: int) -> None:
    """`bash -c 'curl x'`, `eval 'curl x'` and `trap 'curl x' EXIT` run commands the outer line
    only quotes."""
    # `/bin/bash -c …` too, and `./bash -c …`: whatever it is, the quoted commands count as well
    # (the outer command is still one of the line's, so this only ever adds to what must be allowed)
    name = os.path.basename(command.name or "")
    script: str | None = None
    if name in SHELLS:
        args = command.args
        for i, word in enumerate(args):
            flag = word.value or ""
            if flag.startswith("-") and not flag.startswith("--") and "c" in flag:
                if i + 1 >= len(args):
                    raise _Unreadable(f"`{name} -c` has no command string")
                script = args[i + 1].value
                if script is None:
                    raise _Unreadable(f"`{name} -c` runs a command string that is only known at run time")
                break
    elif name == "trap":
        script = _trap_action(command)
    elif name == "eval":
        values = [w.value for w in command.args]
        if any(v is None for v in values):
            raise _Unreadable("`eval` runs a command string that is only known at run time")
        script = " ".join(values)  # type: ignore[arg-type]
    if script is None:
        return
    inner_commands, inner_redirects = _split(script, depth + 1)
    commands.extend(inner_commands)
    redirects.extend(inner_redirects)
