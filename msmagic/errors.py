"""Errors msmagic raises on purpose.

``port()`` raises :class:`PortSyntaxError` for input it cannot read (what CPython
rejects), :class:`PortLimitError` for valid input it cannot port within its limits and
:class:`PortOutputError` rather than return code that does not parse; every other
problem in the input becomes a finding on the result, never an exception.
"""

from __future__ import annotations

import re

#: a line number inside a CPython message ("... on line 3"): it counts lines as the error's do
_ON_LINE = re.compile(r"\bon line (\d+)\b")
#: longest source line shown in full under a syntax error; longer ones are cut around the column
_EXCERPT_WIDTH = 100


class PortError(Exception):
    """Base class of the errors msmagic documents."""


class PortSyntaxError(PortError):
    """The cell is not valid Python (after IPython syntax is set aside).

    ``line`` and ``column`` are 1-based positions in the cell as the user typed it.
    """

    def __init__(self, message: str, line: int, column: int) -> None:
        self.message = message
        self.line = line
        self.column = column
        super().__init__(f"line {line}, column {column}: {message}")

    def moved(self, lines: int = 0, columns: int = 0) -> "PortSyntaxError":
        """The same error for the cell seen from further out: *lines* more lines above it
        (a ``%%`` magic line, a file's cell boundary) and *columns* more characters before
        the error's line (indentation IPython removed). Line numbers the message itself
        names ("... on line 2") move with it."""
        if not lines and not columns:
            return self
        message = _ON_LINE.sub(lambda m: f"on line {int(m.group(1)) + lines}", self.message)
        return PortSyntaxError(message, self.line + lines, self.column + columns)


def source_excerpt(text: str, column: int, indent: str = "    ") -> str:
    """*text* (the line a syntax error is on) and a caret under 1-based *column*, as two
    lines each starting with *indent*; "" for a blank line. A tab before the column is
    copied into the caret line, so the caret lines up however wide tabs are shown; a line
    longer than the screen is cut around the column, the cuts marked with "...".
    """
    text = text.rstrip("\r\n")
    if not text.strip():
        return ""
    index = min(max(column, 1), len(text) + 1) - 1
    if len(text) > _EXCERPT_WIDTH:
        start = max(0, min(index - _EXCERPT_WIDTH // 2, len(text) - _EXCERPT_WIDTH))
        end = start + _EXCERPT_WIDTH
        head = "..." if start > 0 else ""
        tail = "..." if end < len(text) else ""
        text, index = head + text[start:end] + tail, index - start + len(head)
    pad = "".join(c if c == "\t" else " " for c in text[:index])
    return f"{indent}{text}\n{indent}{pad}^"


class PortLimitError(PortError):
    """The cell is valid Python, but porting it ran past what msmagic can do: it is
    nested deeper than the port's recursion allows, or memory ran out."""


class PortOutputError(PortError):
    """The port produced code that does not parse: a bug in msmagic, reported instead
    of returning the code. ``line``/``column`` are 1-based positions in that code."""

    def __init__(self, message: str, line: int, column: int) -> None:
        self.message = message
        self.line = line
        self.column = column
        super().__init__(f"msmagic produced code that does not parse (line {line}, column "
                         f"{column}: {message}); this is a bug in msmagic, please report it "
                         "with the cell")
