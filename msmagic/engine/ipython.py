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

What libcst does not keep by itself is set aside here too and put back as written: a
byte order mark, a ``\r`` ending the cell, form feeds in the indentation of a statement,
blank or comment lines ending the cell that libcst would drop, and the indentation of a
block that does not start with its parent block's (a tab under spaces, which CPython
reads by columns and libcst refuses).

Identifiers are read as Python reads them, NFKC-normalised (``ｔｏｒｃｈ.ones(2)`` is
``torch.ones(2)``), strings and comments as they are; a name the port leaves in place
goes back as written, a name it writes is ASCII. A timed statement carries a comment
naming it (and the magics timing it) through the port, so its prefix goes back on the
statement it timed, whatever a rule made of it; a rule that moves the statement where the
magic would not work (into a function it generates) moves the comment, and with it the
timing, or marks the timing dropped (:func:`timing_marks`).
"""

from __future__ import annotations

import ast
import difflib
import io
import keyword
import re
import tokenize
import unicodedata
from typing import NamedTuple, Optional

_PLACEHOLDER = "__msmagic_ipython_{}__"
#: the comment naming a timed statement: its line and the magics timing it, outermost
#: first (``__msmagic_timed_4_time__``, ``__msmagic_timed_7_time_timeit__``)
_TIMED_MARK = "__msmagic_timed_{}_{}__"
_TIMED_MARK_RE = re.compile(r"__msmagic_timed_(\d+)_(\w+?)__")
#: what the cell-magic line is while the body is ported: a comment, so it is no
#: statement (libcst keeps leading comments in the module header, above added imports)
_HEADER = "# __msmagic_ipython_cell__"
_MAGIC_START = re.compile(r"^[ \t]*(?:%%?[A-Za-z_]|![^=])")
_ASSIGN_MAGIC = re.compile(r"^(?P<indent>[ \t]*)[\w.]+\s*=\s*(?:%|!)\S")
_TIMED = re.compile(r"^(?P<indent>[ \t]*)%(?P<name>time|timeit|prun)(?P<rest>(?:[ \t].*)?)$")
_HELP = re.compile(r"^[ \t]*(?:\?\??[\w.]+|[\w.()\[\]]+\?\??)[ \t]*\r?$")
#: a line indented with a tab (the only indentation libcst may not hold: see _set_indents_aside)
_TAB_INDENT = re.compile(r"^[ \t]*\t", re.MULTILINE)
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
        #: 0-based line index of a timed statement -> the comment text marking its line
        #: (so the prefix goes back on the statement it timed, wherever a rule put it)
        self.markers: dict[int, str] = {}
        #: placeholders of the lines a backslash joins to an IPython line above them
        #: (``!pip install \\`` then ``  torch``): put back exactly as written
        self.continued: set[str] = set()
        #: what libcst would drop, put back byte for byte: a byte order mark, a last
        #: ``\r``, the form feeds before statements (0-based line -> leading text up to
        #: the last form feed) and the comment lines ending the cell
        self.bom = ""
        self.last_cr = ""
        self.form_feeds: dict[int, str] = {}
        self.tail = ""
        #: the indentation standing in for a block's that libcst cannot hold -> that
        #: block's indentation as written
        self.indents: dict[str, str] = {}
        #: identifiers written in a form Python normalises (NFKC): 0-based line ->
        #: [(column in the normalised line, the name Python reads, the name as written)]
        self.names: dict[int, list[tuple[int, str, str]]] = {}

    @property
    def changed(self) -> bool:
        return bool(self.restore or self.prefixes or self.header or self.verbatim is not None
                    or self.bom or self.last_cr or self.form_feeds or self.tail or self.indents
                    or self.names)


def mask(source: str) -> Masked:
    """The cell as Python libcst keeps byte for byte, and what :func:`unmask` puts back."""
    bom = "\ufeff" if source.startswith("\ufeff") else ""
    body = source[len(bom):]
    last_cr = "\r" if body.endswith("\r") else ""
    masked = _mask_ipython(body[: len(body) - len(last_cr)])
    if masked.verbatim is not None:
        masked.verbatim = source
        return masked
    masked.bom, masked.last_cr = bom, last_cr
    if "\x0c" in masked.text:
        _set_form_feeds_aside(masked)
    if "\t" in masked.text and _TAB_INDENT.search(masked.text):
        _set_indents_aside(masked)
    if not masked.text.isascii() and unicodedata.normalize("NFKC", masked.text) != masked.text:
        _normalise_names(masked)
    _set_tail_aside(masked)
    for end in ("\\\r\n", "\\\n"):  # a comment ending in a backslash: libcst drops the line end
        if masked.text.endswith(end):
            masked.text, masked.tail = masked.text[:-len(end) + 1], end[1:] + masked.tail
            break
    return masked


def _mask_ipython(source: str) -> Masked:
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
    markers: dict[int, str] = {}
    continued: set[str] = set()
    out = []
    cont = None  # indentation of the IPython line a trailing backslash continues
    for i, line in enumerate(lines):
        if cont is not None:  # IPython joins it to the line above: kept as written
            key = _PLACEHOLDER.format(len(restore))
            restore[key] = line
            continued.add(key)
            out.append(f"{cont}{key}")
            cont = cont if line.rstrip("\r").endswith("\\") else None
            continue
        if header is not None and i == header.index:
            at = header.statement_at
            if header.line[at:].strip():  # %%timeit -n 3 <setup statement>
                prefixes[i] = header.line[:at]
                out.append(_marked(header.line[at:], i, markers, (header.name,)))
            else:
                out.append(_HEADER)
            continue
        timed = _timed(line)
        if timed is not None:
            indent, prefix, stmt, names = timed
            prefixes[i] = prefix
            out.append(indent + _marked(stmt, i, markers, names))
            continue
        stripped = line.lstrip()
        if _MAGIC_START.match(line) or _HELP.match(line) or _ASSIGN_MAGIC.match(line):
            indent = line[: len(line) - len(stripped)]
            key = _PLACEHOLDER.format(len(restore))
            restore[key] = line
            out.append(f"{indent}{key}")
            if line.rstrip("\r").endswith("\\"):
                cont = indent
            continue
        out.append(line)
    masked = Masked("\n".join(out), restore, prefixes, header)
    masked.markers = markers
    masked.continued = continued
    if header is not None and header.python_body is None:
        try:  # an unknown cell magic: its body is ported only when it is Python
            ast.parse(masked.text)
        except (SyntaxError, ValueError):
            return _verbatim(source)
    return masked


def _marked(stmt: str, index: int, markers: dict[int, str], names: tuple) -> str:
    """A timed statement with a comment naming it (and the magics ``names`` timing it),
    when the statement is whole on its line (a comment cannot follow a line that
    continues: ``f(x,`` or ``s = '''...``)."""
    end = len(stmt) - len(stmt.rstrip("\r"))
    code = stmt[: len(stmt) - end]
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(code.strip() + "\n").readline))
        ast.parse(code.strip())
    except (SyntaxError, ValueError, tokenize.TokenError, IndentationError):
        return stmt
    key = _TIMED_MARK.format(index, "_".join(names))
    has_comment = any(t.type == tokenize.COMMENT for t in tokens)
    markers[index] = f"  {key}" if has_comment else f"  # {key}"
    return code + markers[index] + stmt[len(stmt) - end:]


def timing_marks(text: str) -> list[tuple[str, tuple]]:
    """The comments naming timed statements in ``text`` (code as the rules see it):
    (the mark, the magics timing its statement, outermost first: ``("time",)``), in
    order. A rule that moves a timed statement where its magic would not work (into a
    function it generates: ``%time`` runs a statement in a copy of the function's locals,
    so what it binds is lost) moves the mark with the timing, onto the line that keeps
    the statement's bindings visible."""
    return [(m.group(0), tuple(m.group(2).split("_"))) for m in _TIMED_MARK_RE.finditer(text)]


def timing_dropped(mark: str) -> str:
    """What a rule writes in place of a timing mark whose timing it drops (the statement
    moved where the timing cannot follow, and another statement's timing went on the
    line that replaced it): :func:`unmask` takes the statement's timing prefix off and
    this text away, and changes no line."""
    return mark.replace("__msmagic_timed_", "__msmagic_untimed_", 1)


def without_timing_marks(comment: str) -> str:
    """The text of a comment without the timed-statement marks in it ("" when nothing
    else is left)."""
    text = re.sub(r"[ \t]*#?[ \t]*" + _TIMED_MARK_RE.pattern, "", comment).strip()
    return "" if text in ("", "#") else text


def _logical_starts(text: str) -> Optional[set[int]]:
    """0-based indexes of the lines where a statement starts (not lines continuing a
    bracket or a string); None when the text does not tokenize."""
    starts: set[int] = set()
    at_start = True
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type in (tokenize.NEWLINE, tokenize.NL):
                at_start = tok.type == tokenize.NEWLINE or at_start
                continue
            if tok.type in (tokenize.INDENT, tokenize.DEDENT, tokenize.COMMENT, tokenize.ENDMARKER):
                continue
            if at_start:
                starts.add(tok.start[0] - 1)
                at_start = False
    except (SyntaxError, tokenize.TokenError, IndentationError):
        return None
    return starts


def _set_form_feeds_aside(masked: Masked) -> None:
    """Form feeds in the indentation of a statement's first line, which libcst drops.
    Python resets the indentation count at a form feed, so the line without the text
    up to the last one means the same."""
    starts = _logical_starts(masked.text)
    if starts is None:
        return
    lines = masked.text.split("\n")
    for i in sorted(starts):
        line = lines[i]
        lead = line[: len(line) - len(line.lstrip(" \t\x0c"))]
        cut = lead.rfind("\x0c") + 1
        if cut:
            masked.form_feeds[i] = line[:cut]
            lines[i] = line[cut:]
    masked.text = "\n".join(lines)


def _set_indents_aside(masked: Masked) -> None:
    """Indentations libcst cannot parse, replaced while the port runs. libcst keeps a
    block's indentation as what follows its parent block's, so a block whose indentation
    does not start with its parent's (``if a:`` at one space, a block in it at a tab and
    a space: CPython compares columns and runs it) is "no matching outer block" to it.
    Each statement of such a block (and of the blocks in it) is indented with its
    parent's stand-in and spaces, a string no line of the cell starts with, which
    :func:`unmask` turns back into the block's indentation as written."""
    text = masked.text
    lines = text.split("\n")
    taken = {line[: len(line) - len(line.lstrip(" \t"))] for line in lines}
    stack = [("", "")]  # (indentation as written, stand-in) of the open blocks
    stand_ins: dict[int, str] = {}  # 0-based line -> the stand-in for its indentation
    at_start = True
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.INDENT:
                written, stand_in = stack[-1]
                new = tok.string
                if stand_in != written or not new.startswith(written):
                    new = stand_in + " "
                    while new in taken:
                        new += " "
                    taken.add(new)
                stack.append((tok.string, new))
            elif tok.type == tokenize.DEDENT:
                stack.pop()
            elif tok.type in (tokenize.NEWLINE, tokenize.NL):
                at_start = tok.type == tokenize.NEWLINE or at_start
            elif tok.type not in (tokenize.COMMENT, tokenize.ENDMARKER) and at_start:
                at_start = False
                written, stand_in = stack[-1]
                if stand_in != written and lines[tok.start[0] - 1].startswith(written):
                    stand_ins[tok.start[0] - 1] = stand_in
                    masked.indents[stand_in] = written
    except (SyntaxError, tokenize.TokenError, IndentationError):
        masked.indents = {}
        return
    for i, stand_in in stand_ins.items():
        lines[i] = stand_in + lines[i][len(masked.indents[stand_in]):]
    masked.text = "\n".join(lines)


def _normalise_names(masked: Masked) -> None:
    """Identifiers as Python reads them: CPython's tokenizer NFKC-normalises every
    identifier (not strings or comments), so ``ｔｏｒｃｈ`` is the module ``torch``. The
    port sees the normalised names; :func:`unmask` writes back the ones it left. A name
    that normalises to a keyword stays as written (CPython matches keywords as written)."""
    lines = masked.text.split("\n")
    found: dict[int, list[tuple[int, str, str]]] = {}
    try:
        for tok in tokenize.generate_tokens(io.StringIO(masked.text).readline):
            if tok.type == tokenize.NAME and not tok.string.isascii():
                name = unicodedata.normalize("NFKC", tok.string)
                # a name that reads as a keyword is a name to CPython (``ｉｍｐｏｒｔ = 1``):
                # left as written, it stays one
                if name != tok.string and not keyword.iskeyword(name) and not keyword.issoftkeyword(name):
                    found.setdefault(tok.start[0] - 1, []).append((tok.start[1], name, tok.string))
    except (SyntaxError, tokenize.TokenError, IndentationError):
        return
    for i, names in found.items():
        line, shift, fixed = lines[i], 0, []
        for col, name, written in names:  # in line order: columns move by earlier changes
            at = col + shift
            line = line[:at] + name + line[at + len(written):]
            fixed.append((at, name, written))
            shift += len(name) - len(written)
        lines[i] = line
        masked.names[i] = fixed
    masked.text = "\n".join(lines)


def _put_names_back(text: str, masked: Masked) -> str:
    """The identifiers :func:`_normalise_names` changed, as written, where the port left
    them: on the output line the input line became (kept, or rewritten into one line),
    in a run of characters the port kept, and still a whole name there."""
    try:
        spans = {(t.start[0] - 1, t.start[1], t.end[1]) for t in
                 tokenize.generate_tokens(io.StringIO(text).readline) if t.type == tokenize.NAME}
    except (SyntaxError, tokenize.TokenError, IndentationError):  # pragma: no cover
        return text
    src = masked.text.split("\n")
    out = text.split("\n")
    aligned = _align(src, out)
    for i, names in masked.names.items():
        j = aligned.get(i)
        if j is None:
            continue
        blocks = difflib.SequenceMatcher(None, src[i], out[j], autojunk=False).get_matching_blocks()
        line = out[j]
        for col, name, written in reversed(names):
            for a, b, size in blocks:
                if a <= col and col + len(name) <= a + size:
                    at = b + col - a
                    if (j, at, at + len(name)) in spans:
                        line = line[:at] + written + line[at + len(name):]
                    break
        out[j] = line
    return "\n".join(out)


def _put_indents_back(text: str, indents: dict[str, str]) -> str:
    """The indentation as written on the statements indented with a stand-in."""
    starts = _logical_starts(text)
    if starts is None:  # pragma: no cover - the port's output tokenizes
        return text
    lines = text.split("\n")
    for i in starts:
        line = lines[i]
        lead = line[: len(line) - len(line.lstrip(" \t"))]
        if lead in indents:
            lines[i] = indents[lead] + line[len(lead):]
    return "\n".join(lines)


def _set_tail_aside(masked: Masked) -> None:
    """The blank and comment lines that end the cell, put back as written when libcst
    would not keep them: when one of the comments is indented to no block open there
    (libcst keeps only the last of those), or a line of spaces (or a lone backslash)
    follows other lines there (it drops blank lines before it). The comment standing for
    the cell magic is no part of the tail: it goes back as the magic's line."""
    text = masked.text
    lines = text.split("\n")
    n = len(lines)
    first = masked.header.index + 1 if masked.header is not None else 0
    while n > first and (lines[n - 1].strip() in ("", "\\") or lines[n - 1].lstrip().startswith("#")):
        n -= 1
    if n == len(lines):
        return
    head = "\n".join(lines[:n]) + ("\n" if n else "")
    comments = [l for l in lines[n:] if l.strip()]
    spaces = [l for l in lines[n:] if l.strip() in ("", "\\") and l.strip("\r")]
    if not spaces or spaces == [lines[-1]] and n == len(lines) - 1:
        if not any(l[:1] in (" ", "\t", "\x0c") for l in comments):
            return
        open_blocks = _open_indents(head)
        if open_blocks is not None and all(
                l[: len(l) - len(l.lstrip())] in open_blocks for l in comments):
            return
    masked.text, masked.tail = head, text[len(head):]


def _open_indents(text: str) -> Optional[set[str]]:
    """The indentations of the blocks still open at the end of ``text`` (and "")."""
    stack = [""]
    opened = {""}
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.INDENT:
                stack.append(tok.string)
            elif tok.type == tokenize.DEDENT:
                stack.pop()
            elif tok.type == tokenize.NEWLINE:
                opened = set(stack)
    except (SyntaxError, tokenize.TokenError, IndentationError):
        return None
    return opened


def _verbatim(source: str) -> Masked:
    """A cell whose body is not Python: blank lines for the port, the cell unchanged."""
    return Masked("\n".join("" for _ in source.split("\n")), {}, {}, verbatim=source)


def _timed(line: str) -> Optional[tuple[str, str, str, tuple]]:
    """``%time <statement>`` -> (indent, "%time ", statement, ("time",)); None for
    other lines and for a timing magic with options only. Stacked magics (``%time
    %timeit -n 3 stmt``, which IPython runs) are one prefix, their names outermost
    first."""
    m = _TIMED.match(line)
    if m is None:
        return None
    indent = m.group("indent")
    stmt = line
    names = []
    while m is not None:
        name, rest = m.group("name"), m.group("rest")
        names.append(name)
        stmt = rest[options_end(name, rest):]
        m = _TIMED.match(stmt)
    if not stmt.strip():
        return None
    return indent, line[len(indent): len(line) - len(stmt)], stmt, tuple(names)


def unmask(text: str, masked: Masked) -> str:
    """Put the IPython lines, and what libcst would drop, back into ported ``text``.

    Placeholders are found by name wherever they moved and keep the indentation their
    line has now. A timed statement is found by the comment marking it (a rule that
    rewrites a line keeps its comment), else by lining the output up with the masked
    cell; a statement the port removed loses its timing prefix: nothing is left to
    time. The cell magic goes back on the first line.
    """
    if masked.verbatim is not None:
        return masked.verbatim
    if not masked.changed:
        return text
    if masked.names:
        text = _put_names_back(text, masked)
    if masked.indents:
        text = _put_indents_back(text, masked.indents)
    lines = text.split("\n")
    src_lines = masked.text.split("\n")
    for i, line in enumerate(lines):
        key = line.strip()
        if key in masked.continued:
            lines[i] = masked.restore[key]
        elif key in masked.restore:
            indent = line[: len(line) - len(line.lstrip())]
            lines[i] = indent + masked.restore[key].lstrip()
    found: dict[int, int] = {}  # masked line -> output line
    gone: set[int] = set()  # output lines that held nothing but a marker
    removed: set[int] = set()  # timed statements the port removed (a rule kept the marker)
    for idx, suffix in masked.markers.items():
        key = suffix.lstrip(" #")
        dropped = timing_dropped(key)
        for j, line in enumerate(lines):
            if dropped in line:  # a rule dropped this timing (see timing_dropped)
                lines[j] = re.sub(r"[ \t]*#?[ \t]*" + re.escape(dropped), "", line, count=1)
                removed.add(idx)
                if not lines[j].strip():
                    gone.add(j)
        for j, line in enumerate(lines):
            if key not in line:
                continue
            lines[j] = _unmarked(line, suffix, key)
            code = lines[j].strip()
            if not code:
                gone.add(j)
            if not code or code.startswith("#"):  # only its comment was carried on
                removed.add(idx)
            elif idx not in found:
                found[idx] = j
    aligned = None
    if masked.form_feeds or any(idx not in found for idx in masked.prefixes):
        aligned = _align(src_lines, lines)
    header = masked.header
    header_at = None
    for idx, prefix in masked.prefixes.items():
        target = found.get(idx)
        if target is None and idx in removed:
            continue
        if target is None:
            target = _find_line(lines, idx, src_lines[idx], aligned)
        if target is None:
            continue
        line = lines[target]
        body = line.lstrip()
        lines[target] = line[: len(line) - len(body)] + prefix + body
        if header is not None and idx == header.index:
            header_at = target
    for idx, lead in masked.form_feeds.items():
        target = aligned.get(idx)
        if target is not None and lines[target].strip() == src_lines[idx].strip():
            lines[target] = lead + lines[target]
    header_line = None
    if header_at is not None:
        header_line = lines[header_at]
        gone.add(header_at)
    if gone:
        lines = [line for j, line in enumerate(lines) if j not in gone]
    if header is not None:
        if header_line is None:
            header_line = header.line
            stripped = [l.strip() for l in lines]
            if _HEADER in stripped:
                del lines[stripped.index(_HEADER)]
        at = header.index if all(not l.strip() for l in lines[: header.index]) else 0
        lines.insert(at, header_line)
    return masked.bom + "\n".join(lines) + masked.tail + masked.last_cr


def _unmarked(line: str, suffix: str, key: str) -> str:
    if suffix in line:
        return line.replace(suffix, "", 1)
    return re.sub(r"[ \t]*#?[ \t]*" + re.escape(key), "", line, count=1)


def _align(src: list[str], out: list[str]) -> dict[int, int]:
    """Masked line -> output line, for the lines the port left as they were (up to
    indentation) and, where a run of lines was rewritten into as many lines, line by
    line."""
    matcher = difflib.SequenceMatcher(None, [l.strip() for l in src], [l.strip() for l in out],
                                      autojunk=False)
    mapping: dict[int, int] = {}
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal" or (op == "replace" and i2 - i1 == j2 - j1):
            mapping.update(zip(range(i1, i2), range(j1, j2)))
    return mapping


def _find_line(lines: list[str], idx: int, original: str, aligned: Optional[dict]) -> Optional[int]:
    """The output line holding the port of the statement that was ``original`` on line
    ``idx`` when no marker says so: the same text nearest to ``idx``, else the line the
    alignment gives; None when there is none."""
    window = [idx] + [j for d in range(1, 50) for j in (idx + d, idx - d)]
    want = original.strip()
    for j in window:
        if 0 <= j < len(lines) and lines[j].strip() == want:
            return j
    target = (aligned or {}).get(idx)
    return target if target is not None and lines[target].strip() else None
