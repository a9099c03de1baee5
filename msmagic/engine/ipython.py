"""Set IPython syntax aside so libcst can parse the cell, and put it back afterwards.

Lines such as ``%time x = f()``, ``!pip install ...``, ``x?`` and ``files = !ls`` are
not Python. Each is replaced by a placeholder statement of the same indentation and
restored byte for byte after the port. ``%time``/``%timeit``/``%prun`` lines with a
statement after them keep that statement visible to the port, so
``%time out = model(x)`` is ported like ``out = model(x)``.
"""

from __future__ import annotations

import ast
import re

_PLACEHOLDER = "__msmagic_ipython_{}__"
_MAGIC_START = re.compile(r"^[ \t]*(?:%%?[A-Za-z_]|![^=])")
_ASSIGN_MAGIC = re.compile(r"^(?P<indent>[ \t]*)[\w.]+\s*=\s*(?:%|!)\S")
_TIMED = re.compile(r"^(?P<indent>[ \t]*)(?P<magic>%(?:time|timeit|prun)(?:\s+-\S+)*\s+)(?P<stmt>\S.*)$")
_HELP = re.compile(r"^[ \t]*(?:\?\??[\w.]+|[\w.()\[\]]+\?\??)[ \t]*$")


class Masked:
    """Result of masking: the parseable text and what to put back."""

    def __init__(self, text: str, restore: dict[str, str], prefixes: dict[int, str]):
        self.text = text
        self.restore = restore  # placeholder line content -> original line
        self.prefixes = prefixes  # 0-based line index -> "%time " prefix removed

    @property
    def changed(self) -> bool:
        return bool(self.restore or self.prefixes)


def mask(source: str) -> Masked:
    if not any(
        _MAGIC_START.match(l) or _HELP.match(l) or _ASSIGN_MAGIC.match(l) or _TIMED.match(l)
        for l in source.split("\n")
        if l[:1] in (" ", "\t", "%", "!", "?") or "?" in l or "=" in l
    ):
        return Masked(source, {}, {})
    try:
        ast.parse(source)
    except (SyntaxError, ValueError):
        pass
    else:  # plain Python: nothing to set aside
        return Masked(source, {}, {})
    lines = source.split("\n")
    restore: dict[str, str] = {}
    prefixes: dict[int, str] = {}
    out = []
    for i, line in enumerate(lines):
        timed = _TIMED.match(line)
        if timed:
            stmt = timed.group("stmt")
            prefixes[i] = timed.group("magic")
            out.append(timed.group("indent") + stmt)
            continue
        stripped = line.lstrip()
        if _MAGIC_START.match(line) or _HELP.match(line) or _ASSIGN_MAGIC.match(line):
            indent = line[: len(line) - len(stripped)]
            key = _PLACEHOLDER.format(len(restore))
            restore[key] = line
            out.append(f"{indent}{key}")
            continue
        out.append(line)
    return Masked("\n".join(out), restore, prefixes)


def unmask(text: str, masked: Masked) -> str:
    """Put the IPython lines back into ported ``text``.

    Placeholders are found by name wherever they moved; timed statements are matched
    by line number when the port did not change the line count before them, and by
    content otherwise.
    """
    if not masked.changed:
        return text
    lines = text.split("\n")
    for i, line in enumerate(lines):
        key = line.strip()
        if key in masked.restore:
            lines[i] = masked.restore[key]
    if masked.prefixes:
        src_lines = masked.text.split("\n")
        for idx, prefix in masked.prefixes.items():
            stmt = src_lines[idx]
            target = _find_line(lines, idx, stmt)
            if target is None:
                continue
            line = lines[target]
            body = line.lstrip()
            indent = line[: len(line) - len(body)]
            lines[target] = indent + prefix + body
    return "\n".join(lines)


def _find_line(lines: list[str], idx: int, original: str) -> int | None:
    # The ported statement may differ from the original; prefer the same line number,
    # then search nearby for a line with the same indentation and first token.
    if 0 <= idx < len(lines) and _same_start(lines[idx], original):
        return idx
    for delta in range(1, 50):
        for j in (idx + delta, idx - delta):
            if 0 <= j < len(lines) and _same_start(lines[j], original):
                return j
    return idx if 0 <= idx < len(lines) else None


def _same_start(a: str, b: str) -> bool:
    ia = len(a) - len(a.lstrip())
    ib = len(b) - len(b.lstrip())
    if ia != ib:
        return False
    ta = re.split(r"[\s=(.]", a.strip(), maxsplit=1)[0]
    tb = re.split(r"[\s=(.]", b.strip(), maxsplit=1)[0]
    return ta == tb
