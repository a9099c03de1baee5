"""Set IPython syntax aside so libcst can parse the cell, and put it back afterwards.

Lines such as ``%time x = f()``, ``!pip install ...``, ``x?`` and ``files = !ls`` are
not Python. Each is replaced by a placeholder statement of the same indentation and
restored byte for byte after the port (at the indentation its statement has then: a
rule that unwraps a ``with`` block moves it). ``%time``/``%timeit``/``%prun`` lines with
a statement after their options keep that statement visible to the port, so
``%time out = model(x)`` is ported like ``out = model(x)``.

A cell magic on the cell's first line (``%%time``, ``%%timeit -n 3``, ``%%capture out``,
``%%writefile train.py``) is kept byte for byte above the ported body; it becomes a
comment for the port, so a parity run does not run it as a statement. A statement
written after ``%%timeit``/``%%prun`` options (timeit's setup code) is ported like the
body. A cell magic whose body is not Python (``%%bash``, ``%%html``, ``%%writefile
notes.txt``, or an unknown magic whose body does not parse) leaves the whole cell as
it is.
"""

from __future__ import annotations

import ast
import re
from typing import NamedTuple, Optional

_PLACEHOLDER = "__msmagic_ipython_{}__"
#: what the cell-magic line is while the body is ported: a comment, so it is no
#: statement (libcst keeps leading comments in the module header, above added imports)
_HEADER = "# __msmagic_ipython_cell__"
_MAGIC_START = re.compile(r"^[ \t]*(?:%%?[A-Za-z_]|![^=])")
_ASSIGN_MAGIC = re.compile(r"^(?P<indent>[ \t]*)[\w.]+\s*=\s*(?:%|!)\S")
_TIMED = re.compile(r"^(?P<indent>[ \t]*)%(?P<name>time|timeit|prun)(?P<rest>(?:[ \t].*)?)$")
_HELP = re.compile(r"^[ \t]*(?:\?\??[\w.]+|[\w.()\[\]]+\?\??)[ \t]*$")
_CELL_MAGIC = re.compile(r"^%%(?P<name>[A-Za-z_][\w.]*)(?P<rest>(?:[ \t].*)?)$")

#: the options of the magics that take a statement after them (getopt spelling, as
#: IPython parses them: ``-n 3``, ``-n3``, ``-qo``), and their long flags
_OPTIONS = {
    "time": ("", ("--no-raise-error",)),
    "timeit": ("n:r:tcp:qov:", ()),
    "prun": ("D:l:rs:T:q", ()),
}
#: cell magics whose body is not Python: such a cell is left as it is
NOT_PYTHON = frozenset(
    "bash sh script sx system html HTML javascript js latex markdown svg perl ruby "
    "cmd powershell sql".split()
)
#: cell magics that run their body as Python (the body is ported, the line kept)
PYTHON_BODY = frozenset("time timeit prun capture debug python python3 pypy ms_port ms_parity".split())
#: cell magics that write their body to the file they name (ported when it is a .py file)
WRITES_FILE = frozenset({"writefile", "file"})


class CellMagic(NamedTuple):
    """The cell magic on a cell's first line: ``%%name rest``."""

    index: int  # 0-based line (after leading blank lines)
    name: str
    rest: str  # what follows the name on the line, as written
    line: str  # the whole line

    @property
    def statement_at(self) -> int:
        """Where the statement written after the options starts in ``line`` (its
        length when there is none, or for magics that take no statement)."""
        start = len(self.name) + 2
        if self.name not in _OPTIONS:
            return len(self.line)
        return start + options_end(self.name, self.rest)

    @property
    def python_body(self) -> Optional[bool]:
        """True: IPython runs (or writes) the body as Python; False: it is not Python;
        None: an unknown magic."""
        if self.name in NOT_PYTHON:
            return False
        if self.name in WRITES_FILE:
            target = self.rest.split()[-1] if self.rest.split() else ""
            return target.endswith((".py", ".ipy"))
        return True if self.name in PYTHON_BODY else None


def cell_magic(source: str) -> Optional[CellMagic]:
    """The cell magic a cell starts with (IPython skips blank lines before it), or None."""
    lines = source.split("\n")
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        m = _CELL_MAGIC.match(line.rstrip("\r"))
        if m is None:
            return None
        return CellMagic(i, m.group("name"), m.group("rest"), line)
    return None


def options_end(name: str, rest: str) -> int:
    """Index in ``rest`` (what follows ``%name``) where the statement after the magic's
    options starts; ``len(rest)`` when only options follow."""
    spec, longs = _OPTIONS[name]
    wants_value = False
    for m in re.finditer(r"\S+", rest):
        tok = m.group()
        if wants_value:
            wants_value = False
            continue
        if tok in longs:
            continue
        if len(tok) < 2 or tok[0] != "-" or tok[1] == "-":
            return m.start()
        for j, c in enumerate(tok[1:], start=1):
            k = spec.find(c) if c != ":" else -1
            if k < 0:
                return m.start()  # not an option: the statement (``%time -x``)
            if spec[k + 1: k + 2] == ":":
                wants_value = j == len(tok) - 1  # ``-n 3`` (the value is the next token)
                break
    return len(rest)


class Masked:
    """Result of masking: the parseable text and what to put back."""

    def __init__(self, text: str, restore: dict[str, str], prefixes: dict[int, str],
                 header: Optional[CellMagic] = None, verbatim: Optional[str] = None):
        self.text = text
        self.restore = restore  # placeholder line content -> original line
        self.prefixes = prefixes  # 0-based line index -> "%time " prefix removed
        #: the cell magic on the first line, kept above the ported body
        self.header = header
        #: the whole cell, when it is not Python and is left as it is
        self.verbatim = verbatim

    @property
    def changed(self) -> bool:
        return bool(self.restore or self.prefixes or self.header or self.verbatim is not None)


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
    header = cell_magic(source)
    if header is not None and header.python_body is False:
        return _verbatim(source)
    restore: dict[str, str] = {}
    prefixes: dict[int, str] = {}
    out = []
    for i, line in enumerate(lines):
        if header is not None and i == header.index:
            at = header.statement_at
            if header.line[at:].strip():  # %%timeit -n 3 <setup statement>
                prefixes[i] = header.line[:at]
                out.append(header.line[at:])
            else:
                out.append(_HEADER)
            continue
        timed = _timed(line)
        if timed is not None:
            indent, prefix, stmt = timed
            prefixes[i] = prefix
            out.append(indent + stmt)
            continue
        stripped = line.lstrip()
        if _MAGIC_START.match(line) or _HELP.match(line) or _ASSIGN_MAGIC.match(line):
            indent = line[: len(line) - len(stripped)]
            key = _PLACEHOLDER.format(len(restore))
            restore[key] = line
            out.append(f"{indent}{key}")
            continue
        out.append(line)
    masked = Masked("\n".join(out), restore, prefixes, header)
    if header is not None and header.python_body is None:
        try:  # an unknown cell magic: its body is ported only when it is Python
            ast.parse(masked.text)
        except (SyntaxError, ValueError):
            return _verbatim(source)
    return masked


def _verbatim(source: str) -> Masked:
    """A cell whose body is not Python: blank lines for the port, the cell unchanged."""
    return Masked("\n".join("" for _ in source.split("\n")), {}, {}, verbatim=source)


def _timed(line: str) -> Optional[tuple[str, str, str]]:
    """``%time <statement>`` -> (indent, "%time ", statement); None for other lines
    and for a timing magic with options only."""
    m = _TIMED.match(line)
    if m is None:
        return None
    name, rest = m.group("name"), m.group("rest")
    at = options_end(name, rest)
    stmt = rest[at:]
    if not stmt.strip():
        return None
    indent = m.group("indent")
    return indent, line[len(indent): len(line) - len(stmt)], stmt


def unmask(text: str, masked: Masked) -> str:
    """Put the IPython lines back into ported ``text``.

    Placeholders are found by name wherever they moved and keep the indentation their
    line has now; timed statements are found near their line by content, then by first
    token (a statement the port removed loses its timing prefix: nothing is left to
    time). The cell magic goes back on the first line.
    """
    if masked.verbatim is not None:
        return masked.verbatim
    if not masked.changed:
        return text
    lines = text.split("\n")
    for i, line in enumerate(lines):
        key = line.strip()
        if key in masked.restore:
            indent = line[: len(line) - len(line.lstrip())]
            lines[i] = indent + masked.restore[key].lstrip()
    header = masked.header
    header_line = None
    if masked.prefixes:
        src_lines = masked.text.split("\n")
        for idx, prefix in masked.prefixes.items():
            target = _find_line(lines, idx, src_lines[idx])
            if target is None:
                continue
            line = lines[target]
            body = line.lstrip()
            indent = line[: len(line) - len(body)]
            lines[target] = indent + prefix + body
            if header is not None and idx == header.index:
                header_line = lines.pop(target)
    if header is not None:
        if header_line is None:
            header_line = header.line
            stripped = [l.strip() for l in lines]
            if _HEADER in stripped:
                del lines[stripped.index(_HEADER)]
        at = header.index if all(not l.strip() for l in lines[: header.index]) else 0
        lines.insert(at, header_line)
    return "\n".join(lines)


def _find_line(lines: list[str], idx: int, original: str) -> Optional[int]:
    """The output line holding the port of the statement that was ``original`` on line
    ``idx``: the same text nearest to ``idx``, else the same first token (indentation
    may differ: a rule may have unwrapped the block); None when there is none."""
    window = [idx] + [j for d in range(1, 50) for j in (idx + d, idx - d)]
    window = [j for j in window if 0 <= j < len(lines)]
    want = original.strip()
    for j in window:
        if lines[j].strip() == want:
            return j
    for j in window:
        if lines[j].strip() and _same_start(lines[j], original):
            return j
    return None


def _same_start(a: str, b: str) -> bool:
    ta = re.split(r"[\s=(.]", a.strip(), maxsplit=1)[0]
    tb = re.split(r"[\s=(.]", b.strip(), maxsplit=1)[0]
    return ta == tb
