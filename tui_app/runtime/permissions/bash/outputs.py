"""Files a command writes through its options and operands, whatever rule allowed it.

An allow rule such as `Bash(git log *)` or `Bash(sort *)` allows a program, not every file it may
be told to write: `git log --output=~/.bashrc`, `sort -o .git/config x`, `curl -o ~/.ssh/config URL`
write there. So the files written by option (`--output=F`, `--output F`, `-o F`, `-oF`, an
abbreviation getopt accepts such as `--outp=F`, a value glued inside a cluster `-sSoF`) or by
position (`uniq IN OUT`, `rsync SRC DEST`, `sed -i … FILE`) are written files like a redirection
target, and go through the same checks: deny rules, protected paths, the working directories.

* Every program (unless it only prints its words, like `echo`): the long options that name an
  output or log file by convention (`--output`, `--output-file`, `--log-file` …), and `-o FILE`
  unless the program is a known read-only one whose `-o` is a plain flag (`ls -o`, `grep -o`).
* The programs of `TABLE`: their own output options and operands.
* When the files cannot be told (a word that may be an option but is only known at run time; an
  archive or a patch that names its files; `curl -J`; `wget -r`), the writes are unknown: the
  caller asks, as for a redirection to `$F`.

Over-counting is cheap here (a word taken for a file that is not one is a file inside the
working directory, which no check stops); under-counting is a hole. See docs/architecture.md §12.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tui_app.runtime.permissions.bash.parse import SimpleCommand, Word, program_name
from tui_app.runtime.permissions.bash.programs import PROGRAMS
from tui_app.runtime.permissions.bash.words import word_text

#: long options that name a file or directory written, for any program (and any abbreviation)
GENERIC_LONG = frozenset(
    {
        "output",
        "output-file",
        "output-document",
        "outfile",
        "out-file",
        "log-file",
        "logfile",
        "output-dir",
        "output-directory",
        "dump-header",
        "cookie-jar",
        "save-cookies",
        "junitxml",
        "junit-xml",
        "write-batch",
        "only-write-batch",
        "basetemp",
        "pretty-print",
        "dump-variables",
        "profile-output",
        "result-log",
    }
)
#: single-dash long options naming an output file (`openssl … -out F`, `find -fprint F`)
GENERIC_WORDS = frozenset(
    {"-out", "-output", "-outfile", "-keyout", "-logfile", "-fprint", "-fprint0", "-fprintf", "-fls"}
)
#: values that are no file of anybody's
HARMLESS = frozenset({"-", "/dev/null", "/dev/stdout", "/dev/stderr"})


@dataclass(frozen=True)
class Writes:
    """One program's ways of writing files (besides GENERIC_LONG and GENERIC_WORDS)."""

    #: short options whose value is a written file (`-o F`, `-oF`)
    short: str = ""
    long: frozenset[str] = frozenset()
    #: operands written: those from this index on (0: all of them); None: none
    operands_from: int | None = None
    #: the last operand is written (`rsync SRC… DEST`)
    last_operand: bool = False
    #: `KEY=FILE` operands that name a written file (`dd of=F`)
    keys: frozenset[str] = frozenset()
    #: with one of these the operands are written (`sed -i`, `perl -i`); without, they are read
    in_place_short: str = ""
    in_place_long: frozenset[str] = frozenset()
    #: options after which the files written are only known at run time
    unknown_short: str = ""
    unknown_long: frozenset[str] = frozenset()
    #: the files written are only known at run time unless one of these is given (`unzip -l`)
    unknown_unless_short: str | None = None
    unknown_unless_long: frozenset[str] = frozenset()
    #: it writes the last path segment of each URL operand into the current (or output) directory
    url_names: bool = False
    #: ... only with one of these options (`curl -O`)
    url_names_short: str = ""
    url_names_long: frozenset[str] = frozenset()
    #: options that take a value which is no file (so the value is not taken for an operand)
    value_short: str = ""
    value_long: frozenset[str] = frozenset()


def _s(text: str) -> frozenset[str]:
    return frozenset(text.split())


_COMPRESSOR = Writes(operands_from=0, unknown_unless_short="cltd", unknown_unless_long=_s("stdout to-stdout list test"))
_CC = Writes(short="o", long=_s("output"), value_short="IDLlUx")

TABLE: dict[str, Writes] = {
    "git": Writes(short="o", long=_s("output output-directory")),
    "sort": Writes(short="oT", long=_s("output temporary-directory"), value_short="kSt"),
    "shuf": Writes(short="o", long=_s("output")),
    "iconv": Writes(short="o", long=_s("output"), value_short="ft"),
    "sdiff": Writes(short="o", long=_s("output")),
    "uniq": Writes(operands_from=1, value_short="fsw"),
    "xxd": Writes(operands_from=1, value_short="cglos"),
    "ptx": Writes(operands_from=1),
    "split": Writes(operands_from=1, value_short="abClnt"),
    "csplit": Writes(short="f", long=_s("prefix")),
    "dd": Writes(keys=_s("of")),
    "curl": Writes(
        short="oDc",
        long=_s("output dump-header cookie-jar trace trace-ascii stderr libcurl output-dir etag-save hsts alt-svc"),
        unknown_short="JK",
        unknown_long=_s("remote-header-name config"),
        url_names_short="O",
        url_names_long=_s("remote-name remote-name-all"),
        value_short="HdXAeuFbTwmxyYzCErQ",
        value_long=_s("header data data-raw data-binary request user-agent referer user form"),
    ),
    "wget": Writes(
        short="OoaP",
        long=_s("output-document output-file append-output directory-prefix save-cookies warc-file"),
        unknown_short="rmpxeiK",
        unknown_long=_s(
            "recursive mirror page-requisites force-directories execute input-file config content-disposition"
        ),
        url_names=True,
        value_short="UtTwlQAR",
    ),
    "rsync": Writes(
        short="T", long=_s("log-file temp-dir partial-dir backup-dir"), last_operand=True, value_short="efe"
    ),
    "scp": Writes(last_operand=True, value_short="cFiJloPS"),
    "tar": Writes(
        short="fC",
        long=_s("file directory"),
        unknown_short="x",
        unknown_long=_s("extract get to-command"),
        value_short="bgHKLNTVX",
    ),
    "zip": Writes(short="O", long=_s("output-file"), operands_from=0, value_short="bnt"),
    "unzip": Writes(short="d", unknown_unless_short="lptvZ", value_short="x"),
    "7z": Writes(operands_from=0),
    "gzip": _COMPRESSOR,
    "gunzip": _COMPRESSOR,
    "bzip2": _COMPRESSOR,
    "bunzip2": _COMPRESSOR,
    "xz": _COMPRESSOR,
    "unxz": _COMPRESSOR,
    "zstd": Writes(short="o", operands_from=0, unknown_unless_short="cltd", unknown_unless_long=_s("stdout list test")),
    "sed": Writes(in_place_short="i", in_place_long=_s("in-place"), value_short="efl"),
    "perl": Writes(in_place_short="i", value_short="eEIlmMx"),
    "patch": Writes(
        short="orB",
        long=_s("output reject-file prefix"),
        unknown_unless_long=_s("dry-run"),
        unknown_unless_short="",
        value_short="pDFVYzdi",
    ),
    "gcc": _CC,
    "g++": _CC,
    "cc": _CC,
    "c++": _CC,
    "clang": _CC,
    "clang++": _CC,
    "ld": _CC,
    "as": _CC,
    "pandoc": Writes(short="o", long=_s("output")),
    "gpg": Writes(short="o", long=_s("output")),
    "ssh": Writes(short="E", value_short="bcDeFiIJlLmOopQRSWw"),
    "ssh-keygen": Writes(short="f"),
    "mktemp": Writes(short="p", long=_s("tmpdir"), operands_from=0),
    "find": Writes(),
}

#: programs that only print their words
_DATA_ONLY = frozenset({"echo", "printf", "true", "false", ":", "test", "["})
_FIND_UNKNOWN = frozenset({"-delete"})


@dataclass
class Outputs:
    """The words naming files a command writes, and why some are only known at run time."""

    words: list[Word] = field(default_factory=list)
    unknown: str | None = None

    def lose(self, reason: str) -> None:
        if self.unknown is None:
            self.unknown = reason


def output_writes(cmd: SimpleCommand) -> Outputs:
    """What `cmd` writes by option or operand (its redirections and the writers' operands aside)."""
    out = Outputs()
    name = program_name(cmd.name)
    if not cmd.words or name in _DATA_ONLY:
        return out
    writes = TABLE.get(name, Writes())
    known = PROGRAMS.get(name)
    generic_o = name not in TABLE and not (known is not None and "o" in known.short)
    short = writes.short + ("o" if generic_o else "")
    longs = GENERIC_LONG | writes.long
    operands: list[Word] = []
    given_short: set[str] = set()
    given_long: set[str] = set()
    args = cmd.args
    i = 0
    only_operands = False
    while i < len(args):
        word = args[i]
        text = word_text(word)
        i += 1
        if only_operands:
            operands.append(word)
            continue
        if text is None:
            if _may_be_option(word) and name in TABLE:
                out.lose(f"`{word.source}` may be an option of {name} that writes a file (only known at run time)")
            if not _may_be_option(word):
                operands.append(word)
            continue
        if text == "--":
            only_operands = True
            continue
        if text in GENERIC_WORDS:
            if i < len(args):
                out.words.append(args[i])
                i += 1
            continue
        if name == "find" and text in _FIND_UNKNOWN:
            out.lose(f"find {text} removes files only known at run time")
            continue
        if text.startswith("--") and len(text) > 2:
            option, eq, _ = text[2:].partition("=")
            named = (
                *longs,
                *writes.unknown_long,
                *writes.url_names_long,
                *writes.unknown_unless_long,
                *writes.in_place_long,
            )
            given_long.update(n for n in named if _abbreviates(option, n))
            if any(_abbreviates(option, n) for n in longs):
                if eq:
                    out.words.extend(_tail_words(word, len(option) + 3))
                elif i < len(args):
                    out.words.append(args[i])
                    i += 1
            elif not eq and any(_abbreviates(option, n) for n in writes.value_long) and i < len(args):
                i += 1
            continue
        if text.startswith("-") and text != "-":
            if name == "find":
                continue  # find's tests and actions are words of their own (GENERIC_WORDS above)
            cluster = text[1:]
            for j, letter in enumerate(cluster):
                given_short.add(letter)
                if letter in short:
                    if j + 1 < len(cluster):
                        out.words.extend(_tail_words(word, j + 2))
                    elif i < len(args):
                        out.words.append(args[i])
                        i += 1
                    break
                if letter in writes.value_short:
                    if j + 1 == len(cluster) and i < len(args):
                        i += 1
                    break
            continue
        if name == "tar" and not operands and not text.startswith("-") and _old_tar_mode(text):
            _old_tar(text, args, i, out)
            given_short.update(text)
            continue
        operands.append(word)
    _by_position(name, writes, cmd, operands, given_short, given_long, out)
    return out


def _by_position(
    name: str,
    writes: Writes,
    cmd: SimpleCommand,
    operands: list[Word],
    given_short: set[str],
    given_long: set[str],
    out: Outputs,
) -> None:
    unknown = f"`{cmd.text}` writes files whose names are only known at run time"
    if given_short & set(writes.unknown_short) or given_long & writes.unknown_long:
        out.lose(unknown)
    conditional = writes.unknown_unless_short is not None or bool(writes.unknown_unless_long)
    spared = bool(given_short & set(writes.unknown_unless_short or "") or given_long & writes.unknown_unless_long)
    if conditional and not spared and writes.operands_from is None:
        out.lose(unknown)
    if writes.operands_from is not None and not (conditional and spared):
        out.words.extend(operands[writes.operands_from :])
    if given_short & set(writes.in_place_short) or given_long & writes.in_place_long:
        out.words.extend(operands)
    if writes.last_operand and operands:
        out.words.append(operands[-1])
    for word in operands:
        text = word_text(word) or ""
        key, eq, _ = text.partition("=")
        if eq and key in writes.keys:
            out.words.extend(_tail_words(word, len(key) + 1))
    if writes.url_names or given_short & set(writes.url_names_short) or given_long & writes.url_names_long:
        for word in operands:
            text = word_text(word)
            if text is None:
                out.lose(f"`{cmd.text}` writes a file named after a URL only known at run time")
                continue
            if "://" in text or name == "wget":
                base = text.split("?", 1)[0].split("#", 1)[0].rstrip("/").rsplit("/", 1)[-1]
                if "://" in text and base == text.split("://", 1)[1].split("/", 1)[0]:
                    base = "index.html"
                out.words.append(Word(base, base, (("lit", base),)))
    out.words = [w for w in out.words if word_text(w) not in HARMLESS]


def _abbreviates(typed: str, option: str) -> bool:
    """`--outp` is `--output`: getopt takes any unambiguous abbreviation (an ambiguous one is an
    error, so counting it errs on the safe side)."""
    return bool(typed) and option.startswith(typed)


def _may_be_option(word: Word) -> bool:
    """A word only known at run time that may turn out to start with `-`."""
    if not word.pieces:
        return True
    kind, text = word.pieces[0]
    if kind in ("var", "qvar"):
        return text not in ("PWD", "HOME")
    if kind == "lit":
        return text.startswith("-") or text == ""
    if kind == "raw":
        brace = text.startswith("{") and ("," in text or ".." in text)  # `{}` stays as it is
        return text.startswith("-") or text[:1] in ("*", "?", "[") or brace
    return True


def _tail_words(word: Word, skip: int) -> list[Word]:
    """The rest of a word after its first `skip` characters (the value glued to an option):
    itself, and — since bash expands a `~` after `NAME=` and a program may do so itself — with a
    leading `~` both as written and expanded. An unknown tail is an unknown word."""
    pieces: list[tuple[str, str]] = []
    left = skip
    for kind, chunk in word.pieces or (("lit", word.value or ""),):
        if left <= 0:
            pieces.append((kind, chunk))
            continue
        if kind not in ("raw", "lit"):
            return [Word(word.source, None, (("unknown", word.source),))]
        if len(chunk) > left:
            pieces.append((kind, chunk[left:]))
        left -= len(chunk)
    if not pieces:
        return [Word("", "", (("lit", ""),))]
    value = "".join(c for _, c in pieces) if all(k in ("raw", "lit") for k, _ in pieces) else None
    words = [Word(word.source[skip:] if value is None else value, value, tuple(pieces))]
    if pieces[0][0] == "lit" and pieces[0][1].startswith("~"):
        words.append(Word(word.source, value, (("raw", pieces[0][1]), *pieces[1:])))
    elif pieces[0][0] == "raw" and pieces[0][1].startswith("~"):
        words.append(Word(word.source, value, (("lit", pieces[0][1]), *pieces[1:])))
    return words


_TAR_MODES = set("ctxruA")


def _old_tar_mode(text: str) -> bool:
    """`tar cf out.tar src`: the first word is a cluster of options without a dash."""
    return bool(text) and text[0] in _TAR_MODES and all(c.isalpha() for c in text)


def _old_tar(text: str, args: tuple[Word, ...], i: int, out: Outputs) -> None:
    if "x" in text:
        out.lose("tar x extracts files whose names are only known at run time")
    if "f" in text and i < len(args):
        out.words.append(args[i])
