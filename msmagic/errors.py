"""Errors msmagic raises on purpose.

``port()`` raises :class:`PortSyntaxError` for input it cannot read (what CPython
rejects), :class:`PortLimitError` for valid input it cannot port within its limits and
:class:`PortOutputError` rather than return code that does not parse; every other
problem in the input becomes a finding on the result, never an exception.
"""

from __future__ import annotations


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
