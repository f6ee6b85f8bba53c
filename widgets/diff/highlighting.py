"""Syntax highlighting with `textual.highlight`, one Content per source line. Pure functions, safe
to call from a worker thread (the `$variable` styles are resolved later, when a line renders)."""

from __future__ import annotations

import os

from pygments.lexers import get_lexer_for_filename
from pygments.token import Token
from pygments.util import ClassNotFound
from textual.content import Content
from textual.highlight import HighlightTheme, highlight


class CodeTheme(HighlightTheme):
    """Token colours from theme variables that differ in every built-in theme (Textual's default
    theme uses $text-accent and $text-warning, which are the same orange in textual-dark)."""

    STYLES = {  # noqa: RUF012 - the shape HighlightTheme defines
        **HighlightTheme.STYLES,
        Token.Comment: "$foreground 55% italic",
        Token.Keyword: "$text-error",
        Token.Keyword.Constant: "$text-secondary",
        Token.Keyword.Namespace: "$text-error",
        Token.Keyword.Type: "$text-primary",
        Token.Name: "",
        Token.Name.Builtin: "$text-primary",
        Token.Name.Class: "bold $text-primary",
        Token.Name.Decorator: "$text-primary",
        Token.Name.Function: "$text-primary",
        Token.Name.Function.Magic: "$text-primary",
        Token.Name.Variable: "",
        Token.Number: "$text-secondary",
        Token.Literal.Number: "$text-secondary",
        Token.Operator: "",
        Token.Operator.Word: "$text-error",
    }


def language_for(path: str) -> str | None:
    """Pygments language from the file name alone (guessing from content is slow on big files)."""
    try:
        lexer = get_lexer_for_filename(os.path.basename(path) or path)
    except ClassNotFound:
        return None
    return lexer.aliases[0] if lexer.aliases else lexer.name


def _align(highlighted: list[Content], source: list[str]) -> list[Content]:
    """`highlight()` drops trailing empty lines and may add a closing newline; put the count back."""
    if len(highlighted) == len(source) + 1 and not highlighted[-1].plain:
        return highlighted[:-1]
    missing = source[len(highlighted):]
    if missing and not any(missing):
        return highlighted + [Content("") for _ in missing]
    return highlighted


def highlight_lines(source: list[str], language: str | None) -> list[Content]:
    """One Content per line of `source`, highlighted when the lexer keeps the line count."""
    if not language or not source:
        return [Content(line) for line in source]
    highlighted = _align(highlight("\n".join(source), language=language, theme=CodeTheme).split("\n"), source)
    if len(highlighted) != len(source):
        return [Content(line) for line in source]
    return highlighted
