"""Errors msmagic raises on purpose.

``port()`` raises only :class:`PortSyntaxError` for input it cannot read; every other
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
