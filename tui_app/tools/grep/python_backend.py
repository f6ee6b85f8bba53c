"""The pure-Python backend, for machines without ripgrep. It follows rg's rules so that the same
call gives the same text: .gitignore files (in the tree and above it) are respected, hidden
files and directories are skipped unless a glob, a type or a `!` rule names them, symlinks are
not followed, and a file holding a NUL byte is binary and skipped.

Regular expressions are Python's `re`; the common syntax is the same as rg's (Rust regex), the
exotic corners (`\\p{Greek}`, look-around) differ. Checked often for `stop` so a cancelled search
ends its thread soon.
"""

from __future__ import annotations

import bisect
import os
import re
import threading
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from fnmatch import fnmatchcase

from tui_app.tools.common import BINARY_SNIFF_BYTES
from tui_app.tools.globmatch import expand_braces
from tui_app.tools.grep.search import (
    NEWLINE_MESSAGE,
    UTF16_BOMS,
    FileHits,
    GrepQuery,
    Line,
    SearchFailed,
    can_match_newline,
    invalid_regex_message,
    strip_line_end,
    unknown_type_message,
)
from tui_app.tools.ignore import RuleSet

# File types as ripgrep defines them (`rg --type-list`), for the most used ones.
FILE_TYPES: dict[str, tuple[str, ...]] = {
    "c": ("*.[chH]", "*.[chH].in", "*.cats"),
    "cpp": ("*.[ChH]", "*.[ChH].in", "*.[ch]pp", "*.[ch]pp.in", "*.[ch]xx", "*.[ch]xx.in", "*.cc", "*.cc.in",
            "*.hh", "*.hh.in", "*.inl"),
    "cs": ("*.cs",),
    "css": ("*.css", "*.scss"),
    "csv": ("*.csv",),
    "docker": ("*Dockerfile*",),
    "go": ("*.go",),
    "h": ("*.h", "*.hpp"),
    "html": ("*.ejs", "*.htm", "*.html"),
    "java": ("*.java", "*.jsp", "*.jspx", "*.properties"),
    "js": ("*.js", "*.jsx", "*.vue"),
    "json": ("*.json", "composer.lock"),
    "jsonl": ("*.jsonl",),
    "kotlin": ("*.kt", "*.kts"),
    "lua": ("*.lua",),
    "make": ("*.mak", "*.mk", "[Gg][Nn][Uu]makefile", "[Gg][Nn][Uu]makefile.am", "[Gg][Nn][Uu]makefile.in",
             "[Mm]akefile", "[Mm]akefile.am", "[Mm]akefile.in"),
    "markdown": ("*.markdown", "*.md", "*.mdown", "*.mkdn"),
    "md": ("*.markdown", "*.md", "*.mdown", "*.mkdn"),
    "php": ("*.php", "*.php3", "*.php4", "*.php5", "*.phtml"),
    "protobuf": ("*.proto",),
    "py": ("*.py",),
    "rst": ("*.rst",),
    "ruby": ("*.gemspec", "*.rb", "*.rbw", ".irbrc", "Gemfile", "Rakefile", "config.ru"),
    "rust": ("*.rs",),
    "scala": ("*.sbt", "*.scala"),
    "sh": ("*.bash", "*.bashrc", "*.csh", "*.cshrc", "*.ksh", "*.kshrc", "*.sh", "*.tcsh", "*.zsh", ".bash_login",
           ".bash_logout", ".bash_profile", ".bashrc", ".cshrc", ".kshrc", ".login", ".logout", ".profile",
           ".tcshrc", ".zlogin", ".zlogout", ".zprofile", ".zshenv", ".zshrc", "bash_login", "bash_logout",
           "bash_profile", "bashrc", "profile", "zlogin", "zlogout", "zprofile", "zshenv", "zshrc"),
    "sql": ("*.psql", "*.sql"),
    "swift": ("*.swift",),
    "tf": ("*.tf",),
    "toml": ("*.toml", "Cargo.lock"),
    "ts": ("*.ts", "*.tsx"),
    "txt": ("*.txt",),
    "xml": ("*.dtd", "*.rng", "*.sch", "*.xhtml", "*.xjb", "*.xml", "*.xml.dist", "*.xsd", "*.xsl", "*.xslt"),
    "yaml": ("*.yaml", "*.yml"),
}

_UTF8_BOM = b"\xef\xbb\xbf"


class _Binary(Exception):
    pass


# ---- which files are searched ---------------------------------------------------------------------

@dataclass
class Filters:
    root: str
    #: the user's globs, as rg's overrides: a matching glob includes, a `!glob` excludes
    overrides: RuleSet | None
    type_globs: tuple[str, ...] | None
    #: with at least one plain (not `!`) glob, a file must match one of them
    must_match_glob: bool = field(init=False)

    def __post_init__(self) -> None:
        self.must_match_glob = self.overrides is not None and any(r.ignores for r in self.overrides.rules)

    def excluded(self, path: str, name: str, is_dir: bool, ignores: list[RuleSet]) -> bool:
        if self.overrides is not None:
            said = self.overrides.match(path, is_dir)
            if said is not None:
                return not said  # rules are written as ignore patterns: "ignored" = chosen by the glob
            if self.must_match_glob and not is_dir:
                return True
        named = False  # named by a `!` rule or the type: hidden or not, it is searched
        for rules in reversed(ignores):  # the deepest ignore file that has a say decides
            said = rules.match(path, is_dir)
            if said is True:
                return True
            if said is False:
                named = True
                break
        if self.type_globs is not None and not is_dir:
            if not any(fnmatchcase(name, g) for g in self.type_globs):
                return True
            named = True
        return not named and name.startswith(".")


def ancestor_ignores(root: str) -> list[RuleSet]:
    """The .gitignore files above the search root, outermost first."""
    out: list[RuleSet] = []
    current = os.path.dirname(root)
    while True:
        rules = RuleSet.from_file(os.path.join(current, ".gitignore"))
        if rules is not None:
            out.append(rules)
        parent = os.path.dirname(current)
        if parent == current:
            return out[::-1]
        current = parent


def walk(filters: Filters, stop: threading.Event) -> Iterator[str]:
    """Files under filters.root that pass the filters (no order promised)."""
    stack = [(filters.root, ancestor_ignores(filters.root))]
    while stack and not stop.is_set():
        directory, inherited = stack.pop()
        own = RuleSet.from_file(os.path.join(directory, ".gitignore"))
        ignores = [*inherited, own] if own is not None else inherited
        try:
            entries = list(os.scandir(directory))
        except OSError:
            continue  # unreadable directory: rg skips it silently too (--no-messages)
        for entry in entries:
            try:
                if entry.is_symlink():
                    continue
                is_dir = entry.is_dir(follow_symlinks=False)
                if not is_dir and not entry.is_file(follow_symlinks=False):
                    continue
            except OSError:
                continue
            if filters.excluded(entry.path, entry.name, is_dir, ignores):
                continue
            if is_dir:
                stack.append((entry.path, ignores))
            else:
                yield entry.path


def make_filters(query: GrepQuery) -> Filters:
    overrides = None
    if query.globs:
        lines = [expanded for glob in query.globs for expanded in _override_lines(glob)]
        overrides = RuleSet(query.root, lines)
    type_globs = FILE_TYPES[query.file_type] if query.file_type is not None else None
    return Filters(query.root, overrides, type_globs)


def _override_lines(glob: str) -> list[str]:
    # an rg glob includes, `!glob` excludes; a gitignore rule is the other way round
    if glob.startswith("!"):
        return ["!" + g for g in expand_braces(glob[1:])]
    return expand_braces(glob)


# ---- what is found in one file ----------------------------------------------------------------------

def compile_pattern(query: GrepQuery) -> re.Pattern[str]:
    if not query.multiline and can_match_newline(query.pattern):
        raise SearchFailed(NEWLINE_MESSAGE)
    flags = re.IGNORECASE if query.ignore_case else 0
    if query.multiline:
        flags |= re.MULTILINE | re.DOTALL
    try:
        return re.compile(query.pattern, flags)
    except re.error as exc:
        raise SearchFailed(invalid_regex_message(query.pattern, exc.msg)) from None
    except (OverflowError, RecursionError) as exc:
        raise SearchFailed(invalid_regex_message(query.pattern, str(exc) or type(exc).__name__)) from None


def count_matches(regex: re.Pattern[str], text: str) -> int:
    """Matches as Rust's regex counts them: an empty match right where the previous one ended
    does not count (Python's `re` would count it)."""
    count, last_end = 0, -1
    for found in regex.finditer(text):
        if found.start() == found.end() == last_end:
            continue
        count += 1
        last_end = found.end()
    return count


#: lines between two looks at the stop flag: a search inside one huge file stops soon too
STOP_CHECK_LINES = 4096


class _Stopped(Exception):
    """The search was cancelled while inside a file."""


def _lines_of(f, stop: threading.Event | None = None) -> Iterator[str]:  # type: ignore[no-untyped-def]
    first = True
    for number, raw in enumerate(f):
        if stop is not None and number % STOP_CHECK_LINES == 0 and stop.is_set():
            raise _Stopped
        if b"\0" in raw:
            raise _Binary
        if first:
            raw = raw.removeprefix(_UTF8_BOM)
            first = False
        yield raw.rstrip(b"\n").decode("utf-8", errors="replace")


def _with_context(lines: Iterator[str], is_match: Callable[[int, str], bool], before: int,
                  after: int) -> list[Line]:
    out: list[Line] = []
    recent: deque[tuple[int, str]] = deque(maxlen=before)
    after_left = 0
    for number, text in enumerate(lines, 1):
        if is_match(number, text):
            out.extend(Line(n, strip_line_end(t), False) for n, t in recent)
            recent.clear()
            out.append(Line(number, strip_line_end(text), True))
            after_left = after
        elif after_left > 0:
            out.append(Line(number, strip_line_end(text), False))
            after_left -= 1
        elif before:
            recent.append((number, text))
    return out


def split_lines(text: str) -> list[str]:
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def scan_lines(lines: Iterator[str], regex: re.Pattern[str], query: GrepQuery) -> FileHits | None:
    """Line by line, the way rg searches when multiline is off."""
    if query.mode == "files_with_matches":
        # keep reading after the first match: a NUL further on still makes the file binary
        found = False
        for text in lines:
            found = found or regex.search(text) is not None
        return FileHits("") if found else None
    if query.mode == "count":
        total = sum(count_matches(regex, text) for text in lines)
        return FileHits("", count=total) if total else None
    hits = _with_context(lines, lambda _, text: regex.search(text) is not None, query.before, query.after)
    return FileHits("", lines=hits) if hits else None


def scan_text(text: str, regex: re.Pattern[str], query: GrepQuery) -> FileHits | None:
    """The whole text at once, for multiline patterns: a match marks every line it spans."""
    if query.mode == "files_with_matches":
        return FileHits("") if regex.search(text) is not None else None
    if query.mode == "count":
        total = count_matches(regex, text)
        return FileHits("", count=total) if total else None
    starts = [0] + [i + 1 for i, c in enumerate(text) if c == "\n"]
    matched: set[int] = set()
    for found in regex.finditer(text):
        first = bisect.bisect_right(starts, found.start())
        last = bisect.bisect_right(starts, max(found.start(), found.end() - 1))
        matched.update(range(first, last + 1))
    hits = _with_context(iter(split_lines(text)), lambda number, _: number in matched, query.before, query.after)
    return FileHits("", lines=hits) if hits else None


def _no_link(path: str, flags: int) -> int:
    return os.open(path, flags | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))


def search_file(path: str, regex: re.Pattern[str], query: GrepQuery,
                stop: threading.Event | None = None, *, walked: bool = False) -> FileHits | None:
    """`walked`: found by the walk, which skips symlinks; a name that became one since is not
    followed either (it would read whatever the link was pointed at in between), and a FIFO put
    there does not block."""
    try:
        with open(path, "rb", opener=_no_link if walked else None) as f:
            head = f.read(2)
            f.seek(0)
            if head in UTF16_BOMS:
                # rg transcodes UTF-16 with a byte-order mark; so do we
                text = f.read().decode("utf-16", errors="replace")
                found = (scan_text(text, regex, query) if query.multiline
                         else scan_lines(iter(split_lines(text)), regex, query))
            elif query.multiline:
                data = f.read()
                if b"\0" in data:
                    return None
                found = scan_text(data.removeprefix(_UTF8_BOM).decode("utf-8", errors="replace"), regex, query)
            else:
                # a NUL up front settles it before a newline-free blob is read as one "line"
                if b"\0" in f.read(BINARY_SNIFF_BYTES):
                    return None
                f.seek(0)
                found = scan_lines(_lines_of(f, stop), regex, query)
    except (_Binary, OSError):
        return None
    if found is not None:
        found.path = path
    return found


def search(query: GrepQuery, stop: threading.Event) -> list[FileHits]:
    regex = compile_pattern(query)
    if query.file_type is not None and query.file_type not in FILE_TYPES:
        raise SearchFailed(unknown_type_message(query.file_type))
    hits: list[FileHits] = []
    try:
        if os.path.isfile(query.root):
            # a file named explicitly is searched whatever the ignore rules say, as with rg
            found = search_file(query.root, regex, query, stop)
            return [found] if found is not None else []
        for path in walk(make_filters(query), stop):
            if stop.is_set():
                break
            found = search_file(path, regex, query, stop, walked=True)
            if found is not None:
                hits.append(found)
    except _Stopped:
        pass  # nobody waits for these hits any more
    return hits
