"""The known list: programs that only read, each with the options known to be safe.

An allow-list, not a deny-list: an option that is not listed makes the command not read-only.
That closes the holes a deny-list leaves — GNU long options may be abbreviated (`sort --out=x` is
`--output`), options may follow operands (`grep x -r .`), values may be glued to their flag
(`sort -ox`), and a program may have an option nobody thought of (`sort --files0-from=-`,
`date -f FILE`, `uniq IN OUT`). What each program does with its operands is stated too: the files
it reads (checked against Read deny rules and the working directories), whether it reads
directories recursively, and what it reads when given none (`grep -r x` reads `.`).

    use = program_use(command)      # a Use, or a str: why the command is not read-only
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from tui_app.runtime.permissions.bash.parse import SimpleCommand, Word
from tui_app.runtime.permissions.bash.words import word_text

Operands = Literal["files", "names", "none", "pattern", "dir"]


@dataclass(frozen=True)
class Program:
    #: short flags without a value, and those that take one (glued `-n5` or next word `-n 5`)
    short: str = ""
    short_value: str = ""
    #: long options: plain, with a required value (`--x=v` or `--x v`), with an optional `=v`
    long: frozenset[str] = frozenset()
    long_value: frozenset[str] = frozenset()
    long_optional: frozenset[str] = frozenset()
    #: what the operands are: files it reads, names it lists (metadata only), nothing, a pattern
    #: then files, or one directory (cd)
    operands: Operands = "files"
    #: options whose value is a file it reads
    path_options: frozenset[str] = frozenset()
    #: options that make directory operands read recursively; "*" = always recursive
    recursive: frozenset[str] = frozenset()
    #: with no path operand it reads "." (listings, recursive searches)
    implicit_dot: bool = False
    max_operands: int | None = None
    #: `-NUM` is an option (head -5)
    numeric_flag: bool = False
    #: the first operand must look like this (date: `+FORMAT` only)
    operand_check: Callable[[str], bool] | None = None
    #: echo-like: every word is data, nothing is an option that matters
    data_only: bool = False


def _s(text: str) -> frozenset[str]:
    return frozenset(text.split())


LS = Program(
    short="aAbBcCdfFgGhHiklLmnNopqQrRsStuUvxXZ1", short_value="ITw",
    long=_s("all almost-all author escape ignore-backups directory dired classify file-type human-readable si "
            "dereference-command-line dereference-command-line-symlink-to-dir inode kibibytes dereference "
            "numeric-uid-gid "
            "literal hide-control-chars show-control-chars quote-name reverse recursive size full-time "
            "group-directories-first no-group context zero"),
    long_value=_s("block-size format hide ignore indicator-style quoting-style sort time time-style tabsize width"),
    long_optional=_s("color hyperlink"), operands="names", recursive=frozenset({"R", "recursive"}), implicit_dot=True)
CAT = Program(short="AbeEnstTuv", long=_s("show-all number-nonblank show-ends number squeeze-blank show-tabs "
                                           "show-nonprinting"))
HEAD_TAIL = Program(short="qvz", short_value="cn", long=_s("quiet silent verbose zero-terminated"),
                    long_value=_s("bytes lines"), numeric_flag=True)
WC = Program(short="clmwL", long=_s("bytes chars lines words max-line-length"), long_value=_s("total"))
NL = Program(short="p", short_value="bdfhijlnsvw",
             long=_s("no-renumber"), long_value=_s("body-numbering section-delimiter footer-numbering header-numbering "
                                                  "line-increment join-blank-lines number-format number-separator "
                                                  "starting-line-number number-width"))
CUT = Program(short="nsz", short_value="bcdf", long=_s("complement only-delimited zero-terminated"),
              long_value=_s("bytes characters delimiter fields output-delimiter"))
TR = Program(short="cCdst", long=_s("complement delete squeeze-repeats truncate-set1"), operands="none")
SUMS = Program(short="btz", long=_s("binary text zero tag"))
STAT = Program(short="LtfZ", short_value="c", long=_s("dereference file-system terse"),
               long_value=_s("format printf"), operands="names")
DU = Program(short="0abchklmsSxDHL", short_value="dBt",
             long=_s("null all apparent-size bytes total dereference-args human-readable si count-links dereference "
                     "no-dereference separate-dirs summarize one-file-system"),
             long_value=_s("max-depth block-size threshold exclude time-style"), long_optional=_s("time"),
             operands="names", recursive=frozenset({"*"}), implicit_dot=True)
DF = Program(short="ahHiklPTv", short_value="Btx",
             long=_s("all human-readable si inodes local portability print-type no-sync sync total"),
             long_value=_s("block-size type exclude-type"), long_optional=_s("output"), operands="names")
DIFF = Program(short="abBdEiNpqstTuwy", short_value="CUFIW",
               long=_s("brief report-identical-files ignore-case ignore-tab-expansion ignore-trailing-space "
                       "ignore-space-change ignore-all-space ignore-blank-lines text strip-trailing-cr minimal "
                       "speed-large-files side-by-side suppress-common-lines left-column expand-tabs initial-tab "
                       "suppress-blank-empty new-file unidirectional-new-file normal show-c-function "
                       "no-dereference"),
               long_value=_s("ignore-matching-lines label show-function-line width tabsize"),
               long_optional=_s("color context unified"), max_operands=2)
CMP = Program(short="blsv", short_value="in", long=_s("print-bytes verbose quiet silent"),
              long_value=_s("ignore-initial bytes"), max_operands=4)
COMM = Program(short="123z", long=_s("check-order nocheck-order total zero-terminated"),
               long_value=_s("output-delimiter"), max_operands=2)
SORT = Program(short="bdfgiMhnRrVcCmsuz", short_value="kSt",
               long=_s("ignore-leading-blanks dictionary-order ignore-case general-numeric-sort ignore-nonprinting "
                       "month-sort human-numeric-sort numeric-sort random-sort reverse version-sort check merge "
                       "stable unique zero-terminated debug"),
               long_value=_s("key buffer-size field-separator parallel"), long_optional=_s("sort"))
UNIQ = Program(short="cdDiuz", short_value="fsw",
               long=_s("count repeated ignore-case unique zero-terminated"),
               long_value=_s("skip-fields skip-chars check-chars"), long_optional=_s("all-repeated group"),
               max_operands=1)  # a second operand is a file uniq WRITES
TAC = Program(short="br", short_value="s", long=_s("before regex"), long_value=_s("separator"))
REV = Program()
OD = Program(short="bcdfilosvx", short_value="AjNtwS",
             long=_s("output-duplicates traditional"),
             long_value=_s("address-radix skip-bytes read-bytes format"), long_optional=_s("strings width"))
STRINGS = Program(short="afw", short_value="nte", long=_s("all include-all-whitespace print-file-name"),
                  long_value=_s("bytes radix encoding"))
GREP = Program(short="EFGPivwxyclLoqsbHhnTZzaIrU", short_value="eABCm",
               long=_s("extended-regexp fixed-strings basic-regexp perl-regexp ignore-case no-ignore-case "
                       "invert-match word-regexp line-regexp count files-with-matches files-without-match "
                       "only-matching quiet silent no-messages byte-offset with-filename no-filename line-number "
                       "initial-tab null null-data text recursive line-buffered"),
               long_value=_s("regexp after-context before-context context max-count include exclude exclude-dir "
                             "label binary-files"),
               long_optional=_s("color colour"), operands="pattern", path_options=frozenset({"f", "file"}),
               recursive=frozenset({"r", "recursive"}))
RG = Program(short="iSsvwxFclonNHaP0u.", short_value="eABCmgtTdMjrE",
             long=_s("ignore-case smart-case case-sensitive invert-match word-regexp line-regexp fixed-strings "
                     "count count-matches files-with-matches files-without-match only-matching quiet line-number "
                     "no-line-number with-filename no-filename heading no-heading text pcre2 null hidden no-ignore "
                     "no-ignore-vcs no-ignore-dot no-ignore-parent unrestricted files type-list json vimgrep "
                     "column no-column byte-offset trim stats sort-files multiline multiline-dotall crlf "
                     "no-messages passthru no-config"),
             long_value=_s("regexp after-context before-context context max-count glob iglob type type-not "
                           "max-depth max-columns max-filesize sort sortr threads engine encoding replace"),
             long_optional=_s("color colors"), operands="pattern", path_options=frozenset({"f", "file"}),
             recursive=frozenset({"*"}), implicit_dot=True)
ECHO = Program(data_only=True, operands="none")
TRUE = Program(data_only=True, operands="none")
PWD = Program(short="LP", operands="none", max_operands=0)
WHICH = Program(short="as", operands="none")
TYPE = Program(short="afptP", operands="none")
BASENAME = Program(short="az", short_value="s", long=_s("multiple zero"), long_value=_s("suffix"), operands="none")
DIRNAME = Program(short="z", long=_s("zero"), operands="none")
READLINK = Program(short="efmnqsvz", long=_s("canonicalize canonicalize-existing canonicalize-missing no-newline "
                                             "quiet silent verbose zero"), operands="names")
REALPATH = Program(short="emLPqsz", long=_s("canonicalize-existing canonicalize-missing logical physical quiet "
                                            "strip no-symlinks zero"),
                   long_value=_s("relative-to relative-base"), operands="names")
WHOAMI = Program(operands="none", max_operands=0)
ID = Program(short="agGnruzZ", long=_s("context group groups name real user zero"), operands="none")
UNAME = Program(short="asnrvmpio", long=_s("all kernel-name nodename kernel-release kernel-version machine "
                                           "processor hardware-platform operating-system"), operands="none",
                max_operands=0)
HOSTNAME = Program(short="aAdfiIsy", long=_s("alias all-fqdns domain fqdn long all-ip-addresses ip-address short "
                                             "yp nis"), operands="none", max_operands=0)
DATE = Program(short="uR", short_value="dr", long=_s("utc universal rfc-email rfc-2822 debug"),
               long_value=_s("date reference rfc-3339"), long_optional=_s("iso-8601"),
               operands="none", max_operands=1, operand_check=lambda v: v.startswith("+"),
               path_options=frozenset({"r", "reference"}))
CD = Program(short="LPe@", operands="dir", max_operands=1)

PROGRAMS: dict[str, Program] = {
    "ls": LS, "cat": CAT, "head": HEAD_TAIL, "tail": HEAD_TAIL, "wc": WC, "nl": NL, "cut": CUT, "tr": TR,
    "md5sum": SUMS, "sha1sum": SUMS, "sha256sum": SUMS, "sha512sum": SUMS, "stat": STAT, "du": DU, "df": DF,
    "diff": DIFF, "cmp": CMP, "comm": COMM, "sort": SORT, "uniq": UNIQ, "tac": TAC, "rev": REV,
    "od": OD, "strings": STRINGS, "grep": GREP, "egrep": GREP, "fgrep": GREP, "rg": RG, "echo": ECHO,
    "true": TRUE, "false": TRUE, ":": TRUE, "pwd": PWD, "which": WHICH, "type": TYPE, "basename": BASENAME,
    "dirname": DIRNAME, "readlink": READLINK, "realpath": REALPATH, "whoami": WHOAMI, "id": ID, "uname": UNAME,
    "hostname": HOSTNAME, "date": DATE, "cd": CD, "pushd": CD,
}


@dataclass
class Use:
    """What one read-only command reads."""

    #: operand (and option value) words that name files it reads, with whether it reads them
    #: recursively (a directory's whole content)
    reads: list[tuple[Word, bool]] = field(default_factory=list)
    #: it reads the current directory when given no path (recursively when `recursive`)
    implicit_dot: bool = False
    recursive: bool = False
    #: cd/pushd: the directory it moves to (None for a bare `cd`: home)
    cd: Word | None = None
    moves: bool = False


def program_use(cmd: SimpleCommand) -> Use | str:
    """How a command on the known list uses its words, or why it is not read-only."""
    name = cmd.name
    if name is None:
        return "it has no program name"
    if name in SPECIAL:
        return SPECIAL[name](cmd)
    program = PROGRAMS.get(name)
    if program is None:
        return f"`{name}` is not on the list of read-only programs"
    return _parse(name, program, cmd.args)


def _parse(name: str, program: Program, args: tuple[Word, ...]) -> Use | str:
    use = Use(implicit_dot=program.implicit_dot)
    operands: list[Word] = []
    flags: set[str] = set()
    pattern_given = False
    if program.data_only:
        return use
    i = 0
    only_operands = False
    while i < len(args):
        word = args[i]
        text = word_text(word)
        i += 1
        if only_operands or not _looks_like_option(word, text):
            operands.append(word)
            continue
        if text is None:
            return f"`{word.source}` may be an option of {name} (only known at run time)"
        if text == "--":
            only_operands = True
            continue
        if text.startswith("--"):
            option, eq, _ = text[2:].partition("=")
            if (option in program.long and not eq) or option in program.long_optional:
                flags.add(option)
            elif option in program.long_value:
                flags.add(option)
                if not eq:
                    if i >= len(args):
                        return f"{name} --{option} has no value"
                    value_word = args[i]
                    i += 1
                    if option in program.path_options:
                        use.reads.append((value_word, False))
                    elif word_text(value_word) is None:
                        return f"the value of {name} --{option} is only known at run time"
                elif option in program.path_options:
                    return f"{name} --{option}= names a file it reads"
                pattern_given |= option in ("regexp", "file")
            else:
                return f"{name} --{option} is not a known read-only option"
            continue
        cluster = text[1:]
        if program.numeric_flag and cluster.isdigit():
            continue
        for j, letter in enumerate(cluster):
            if letter in program.short:
                flags.add(letter)
                continue
            if letter in program.short_value:
                flags.add(letter)
                rest = cluster[j + 1:]
                if rest:
                    if letter in program.path_options:
                        return f"{name} -{letter} names a file it reads"
                elif i < len(args):
                    value_word = args[i]
                    i += 1
                    if letter in program.path_options:
                        use.reads.append((value_word, False))
                    elif word_text(value_word) is None:
                        return f"the value of {name} -{letter} is only known at run time"
                else:
                    return f"{name} -{letter} has no value"
                pattern_given |= letter in ("e", "f")
                break
            return f"{name} -{letter} is not a known read-only option"
    if program.operands == "pattern" and not pattern_given and operands:
        pattern = operands.pop(0)
        if word_text(pattern) is None and _may_expand(pattern):
            return f"the pattern `{pattern.source}` may expand into file names"
    if program.max_operands is not None and len(operands) > program.max_operands:
        return f"{name} takes at most {program.max_operands} operand(s) here"
    if program.operand_check is not None:
        for word in operands:
            text = word_text(word)
            if text is None or not program.operand_check(text):
                return f"`{word.source}` is not an operand {name} only reads"
    use.recursive = "*" in program.recursive or bool(flags & program.recursive)
    if program.operands == "none":
        use.implicit_dot = False
        for word in operands:
            if word_text(word) is None and _may_expand(word):
                return f"`{word.source}` is only known at run time"
        return use
    if program.operands == "dir":
        use.moves = True
        use.cd = operands[0] if operands else None
        return use
    use.reads += [(w, use.recursive) for w in operands]
    use.implicit_dot = (program.implicit_dot or use.recursive) and not operands
    return use


def _looks_like_option(word: Word, text: str | None) -> bool:
    if text is not None:
        return text.startswith("-") and text != "-"
    first = word.pieces[0] if word.pieces else ("unknown", "")
    if first[0] in ("raw", "lit"):
        return first[1].startswith("-") or first[1] == ""
    return first[0] not in ("var", "qvar") or first[1] not in ("PWD", "HOME")


def _may_expand(word: Word) -> bool:
    return any(kind not in ("lit",) for kind, _ in word.pieces) if word.pieces else word.value is None


# ---- programs with a grammar of their own --------------------------------------------------------

FIND_TESTS_WITH_VALUE = _s("-name -iname -path -ipath -wholename -iwholename -regex -iregex -type -xtype -size "
                           "-mtime -mmin -atime -amin -ctime -cmin -user -group -uid -gid -perm -links -inum "
                           "-maxdepth -mindepth -newer -anewer -cnewer -samefile -printf -used -regextype -fstype "
                           "-lname -ilname")
FIND_TESTS = _s("-print -print0 -ls -prune -not -a -and -o -or -empty -true -false -depth -xdev -mount -nouser "
                "-nogroup -readable -writable -executable -quit -noleaf -daystart -ignore_readdir_race "
                "-noignore_readdir_race -P ! ( ) ,")
FIND_PATH_VALUES = _s("-newer -anewer -cnewer -samefile")


def _find(cmd: SimpleCommand) -> Use | str:
    """find [paths] [expression]: only tests and printing actions; no -exec, -delete, -fprint,
    -L/-follow; names only."""
    use = Use(recursive=True, implicit_dot=True)
    args = cmd.args
    i = 0
    while i < len(args):
        text = word_text(args[i])
        if text is not None and (text.startswith("-") or text in ("!", "(", ")", ",")):
            break
        if text is None and _looks_like_option(args[i], None):
            return f"`{args[i].source}` may be an option of find (only known at run time)"
        use.reads.append((args[i], True))
        i += 1
    if use.reads:
        use.implicit_dot = False
    while i < len(args):
        text = word_text(args[i])
        if text is None:
            return f"`{args[i].source}` is only known at run time"
        i += 1
        if text in FIND_TESTS:
            continue
        if text in FIND_TESTS_WITH_VALUE:
            if i >= len(args):
                return f"find {text} has no value"
            if text in FIND_PATH_VALUES:
                use.reads.append((args[i], False))
            elif word_text(args[i]) is None:
                return f"the value of find {text} is only known at run time"
            i += 1
            continue
        return f"find {text} is not a known read-only expression"
    return use


TEST_UNARY = _s("-a -b -c -d -e -f -g -h -k -p -r -s -t -u -w -x -G -L -N -O -S -z -n")
TEST_BINARY = _s("= == != < > -nt -ot -ef -eq -ne -lt -le -gt -ge")


def _test(cmd: SimpleCommand) -> Use | str:
    """test / [: file tests and comparisons. Not `-v` or `-R` (bash evaluates an array subscript,
    and a `$( )` in it, even from a quoted word), and no word that looks like a subscript with a
    substitution in it, whatever the operator."""
    words = list(cmd.args)
    if cmd.name == "[":
        if not words or word_text(words[-1]) != "]":
            return "`[` without its closing `]`"
        words = words[:-1]
    use = Use()
    for word in words:
        text = word_text(word)
        if text is None:
            if _may_expand(word) and not all(k in ("lit", "raw", "var", "qvar") for k, _ in word.pieces):
                return f"`{word.source}` is only known at run time"
            if any(k in ("var", "qvar") and v not in ("PWD", "HOME") for k, v in word.pieces):
                return f"`{word.source}` is only known at run time"
            continue
        if text in ("-v", "-R"):
            return f"test {text} evaluates an array subscript (which can run commands)"
        if _subscript_like(text):
            return f"`{word.source}` looks like an array subscript with a command in it"
        if text.startswith("-") and len(text) == 2 and text not in TEST_UNARY | TEST_BINARY | {"-o", "-a"}:
            return f"test {text} is not a known operator"
    return use


def _subscript_like(text: str) -> bool:
    return "[" in text and ("$(" in text or "`" in text or "$((" in text)


def _printf(cmd: SimpleCommand) -> Use | str:
    """printf FORMAT ARGS: never `-v` (assigns, and evaluates a subscript)."""
    for word in cmd.args:
        text = word_text(word)
        if text is None:
            if any(k not in ("lit", "raw") for k, _ in word.pieces):
                return f"`{word.source}` is only known at run time"
            continue
        if text.startswith("-v"):
            return "printf -v assigns a variable (and evaluates a subscript)"
        if _subscript_like(text):
            return f"`{word.source}` looks like an array subscript with a command in it"
        if text == "--":
            break
    first = word_text(cmd.args[0]) if cmd.args else None
    if first is not None and first.startswith("-") and first not in ("--",):
        return f"printf {first} is not a known read-only option"
    return Use()


GIT_COMMANDS = frozenset({"status", "diff", "log", "show", "branch"})
#: long options (and every abbreviation git would accept for them) that write or run things
GIT_DANGEROUS = ("output", "output-directory", "ext-diff", "no-index", "open-files-in-pager", "exec",
                 "upload-pack", "receive-pack", "textconv", "contents", "orderfile")
GIT_BRANCH_LISTING = _s("-a --all -r --remotes -l --list -v -vv --verbose --no-color --color --contains "
                        "--no-contains --merged --no-merged --points-at --sort --format --show-current "
                        "--column --no-column -i --ignore-case --abbrev --no-abbrev --omit-empty")


def _git(cmd: SimpleCommand) -> Use | str:
    """git status|diff|log|show|branch (listing): no global options but --no-pager, no option
    that writes a file or runs a program (abbreviations included), no `--no-index`; path
    operands are reads, `REV:path` reads that path."""
    values = [word_text(w) for w in cmd.args]
    i = 0
    while i < len(values) and values[i] == "--no-pager":
        i += 1
    if i >= len(values) or values[i] not in GIT_COMMANDS:
        first = values[i] if i < len(values) else None
        return f"git {first or ''} is not a read-only git command".replace("  ", " ")
    sub = values[i]
    use = Use(implicit_dot=True)
    rest = cmd.args[i + 1:]
    after_dashes = False
    for word in rest:
        text = word_text(word)
        if text is None:
            if _looks_like_option(word, None):
                return f"`{word.source}` may be an option of git (only known at run time)"
            use.reads.append((word, False))
            continue
        if after_dashes:
            use.reads.append((word, False))
            continue
        if text == "--":
            after_dashes = True
            continue
        if text.startswith("--"):
            option = text[2:].split("=", 1)[0]
            if len(option) < 2 or any(d.startswith(option) for d in GIT_DANGEROUS):
                return f"git {sub} --{option} may write a file or run a program"
            if sub == "branch" and "--" + option not in GIT_BRANCH_LISTING:
                return f"git branch --{option} may change a branch"
            continue
        if text.startswith("-"):
            if text.startswith("-O") or text.startswith("-o"):
                return f"git {sub} {text} reads or writes a file"
            if sub == "branch" and text not in GIT_BRANCH_LISTING:
                return f"git branch {text} may change a branch"
            continue
        if sub == "branch":
            listing = {word_text(w) or "" for w in rest} & {"-l", "--list"}
            if not listing:
                return "git branch NAME creates a branch"
            continue  # a pattern of `git branch --list`
        if ":" in text:
            use.reads.append((Word(text.split(":", 1)[1], text.split(":", 1)[1], (("lit", text.split(":", 1)[1]),)),
                              False))
        else:
            use.reads.append((word, False))
    return use


SPECIAL: dict[str, Callable[[SimpleCommand], Use | str]] = {
    "find": _find, "test": _test, "[": _test, "printf": _printf, "git": _git,
}

#: what configuration each program on the list reads that could make it run something, and why
#: that cannot come from the project (a program added to the list must be added here too: a test
#: checks). A line can set only the variables of SAFE_ASSIGNMENTS, and only to plain words.
CONFIGURATION: dict[str, str] = {
    **dict.fromkeys(("ls", "cat", "head", "tail", "wc", "nl", "cut", "tr", "md5sum", "sha1sum", "sha256sum",
                     "sha512sum", "stat", "du", "df", "cmp", "comm", "uniq", "tac", "rev", "od", "strings", "echo",
                     "true", "false", ":", "pwd", "which", "type", "basename", "dirname", "readlink", "realpath",
                     "whoami", "id", "uname", "hostname", "date", "cd", "pushd", "test", "[", "printf", "find",
                     "diff", "sort"),
                    "no configuration that runs a program (sort's --compress-program and find's -exec are not "
                    "on its option list)"),
    **dict.fromkeys(("grep", "egrep", "fgrep"), "GREP_OPTIONS is ignored by grep 3; GREP_COLORS only colours"),
    "rg": "RIPGREP_CONFIG_PATH (its config may name --pre): the user's, kept when absolute; a relative one "
          "(a file of whatever project the command runs in) is dropped by the git guard's run environment",
    "git": "the repository's configuration: see git_guard",
}
