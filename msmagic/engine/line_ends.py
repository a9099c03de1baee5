"""Line ends: the port reads every cell with LF line ends, as Python does, and the
ported code is written back with the cell's own.

Python reads CRLF and a lone CR as a line end, and so does IPython; the port's
IPython lines, margins and comment tails are found line by line at ``\\n``. A cell (or
file) with CR or CRLF line ends is ported with LF ones and each line of the output gets
back the line end it had: a line the port left as it was, or rewrote in place, keeps its
own; a new line gets the most common one.
"""

from __future__ import annotations

import difflib
import re
from collections import Counter

_NEWLINE = re.compile(r"(\r\n|\r|\n)")


def lf(text: str) -> str:
    """*text* with CRLF and CR line ends read as LF, as Python reads source files."""
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def restore_line_ends(original: str, ported: str) -> str:
    """*ported* (LF line ends, the port of ``lf(original)``) written with *original*'s
    line ends.

    A text with one style gets it throughout. In a text with mixed line ends, each line
    the port left as it was, or rewrote into one line, keeps its own line end; new lines
    get the most common one.
    """
    parts = _NEWLINE.split(original)
    ends = parts[1::2]
    styles = set(ends)
    if not styles or styles == {"\n"}:
        return ported
    if len(styles) == 1:
        return ported.replace("\n", ends[0])
    common = Counter(ends).most_common(1)[0][0]
    bodies = parts[0::2]
    ends = ends + [""]
    new = ported.split("\n")
    chosen = [common] * (len(new) - 1) + [""]
    matcher = difflib.SequenceMatcher(None, bodies, new, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal" or (op == "replace" and i2 - i1 == j2 - j1):
            for i, j in zip(range(i1, i2), range(j1, j2)):
                if j < len(new) - 1 and ends[i]:
                    chosen[j] = ends[i]
    return "".join(body + end for body, end in zip(new, chosen))
