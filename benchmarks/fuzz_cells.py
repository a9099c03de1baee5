"""Fuzz the port with real cells: mutations that keep a cell valid, and some that do not.

The cells are the project's real ones: the code cells of ``demo_notebooks/`` and the
``# %%`` cells of the acceptance cases (``benchmarks/realworld/cases`` and, when present,
``../shared/realworld/cases``). Each fuzzed cell is a real cell under one to three
mutations that keep it valid IPython, applied in this order:

* Python text (the cell is tokenized): comments inline, on their own line and inside
  calls; blank lines; ``import torch as T`` with every ``torch`` renamed; ``F.x`` spelled
  ``torch.nn.functional.x`` and back; an argument written by keyword instead of by
  position and back; an identifier in fullwidth letters (``ｍｏｄｅｌ``, which Python
  reads as ``model``);
* IPython syntax: a ``%time`` / ``%timeit -n1 -r1`` prefix on a statement, a
  ``%matplotlib inline`` line, an ``x?`` help line, a ``%%time`` / ``%%timeit`` /
  ``%%capture`` cell magic above the cell;
* layout: every line indented alike, the first line indented more, indentation in
  tabs, CRLF or CR-only line ends;

and a share of the cells get a random token-level mutation instead (a token deleted,
repeated, swapped or inserted, the cell cut short), which may make them invalid.

Whether a cell is valid is IPython's word, not msmagic's: the cell is valid when
``TransformerManager().transform_cell(cell)`` compiles (for a cell magic that runs its
body as Python, the body must compile too). Each cell is ported with ``msmagic.port``
(what ``%%ms_port`` calls, with a session that saw the cell's earlier cells, as in a
notebook) in a worker process, under a time limit, and classified:

* crash: an exception that is not a :class:`msmagic.PortError` (or the worker died);
* refusal: a valid cell the port rejected (``PortSyntaxError`` / ``PortLimitError``);
* port output error: ``PortOutputError`` (the port's own output did not parse);
* does not compile: the ported code fails IPython's transform + compile;
* not idempotent: porting the ported code again (with a session that saw the ported
  earlier cells) changes it;
* bytes outside: an input line outside the statements the port edited (its edits and
  findings name them) that does not come back byte for byte (line ends included);
* comments lost: a ``#`` comment of the input that the output does not contain;
* hang: the port ran past ``--cell-timeout``;
* for invalid cells: accepted (the port returned a result for a cell IPython rejects;
  a figure, not a failure) and crash, as above.

Run: ``PYTHONPATH=. .venv/bin/python benchmarks/fuzz_cells.py [--seed 0] [--count 800]
[--jobs 2] [--time-budget 600] [--examples DIR] [--records FILE] [--json]``. It prints the
figures, a breakdown by mutation kind and timings; ``--examples DIR`` writes the first
failing cells of each category there (the cell byte for byte, and what happened),
``--records FILE`` one line per cell. The same seed and count fuzz the same cells (as
long as the source cells are the same); ``--time-budget`` stops early, so compare runs
by ``--count``.
"""

from __future__ import annotations

import argparse
import ast
import copy
import io
import json
import keyword
import multiprocessing
import random
import re
import statistics
import subprocess
import sys
import time
import tokenize
import traceback
from collections import Counter, defaultdict
from pathlib import Path
from typing import Callable, Optional

ROOT = Path(__file__).resolve().parent.parent


def _shared_cases() -> Path:
    """``../shared/realworld/cases`` beside the main checkout (a git worktree finds it
    through the repository it belongs to)."""
    here = ROOT.parent / "shared" / "realworld" / "cases"
    if here.is_dir():
        return here
    try:
        common = subprocess.run(["git", "rev-parse", "--git-common-dir"], cwd=ROOT, text=True,
                                capture_output=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return here
    if not common:
        return here
    return (ROOT / common).resolve().parent.parent / "shared" / "realworld" / "cases"


SOURCE_DIRS = (
    ROOT / "demo_notebooks",
    ROOT / "benchmarks" / "realworld" / "cases",
    _shared_cases(),
)

#: the categories of a fuzzed cell's outcome, in the order the table shows them
FAILURES = ("crash", "refusal", "port_output_error", "does_not_compile", "not_idempotent",
            "bytes_outside", "comments_lost", "hang")
LABELS = {
    "crash": "crashes (not a PortError, or the worker died)",
    "refusal": "refusals of valid cells",
    "port_output_error": "PortOutputError on valid cells",
    "does_not_compile": "outputs that do not transform+compile",
    "not_idempotent": "not idempotent (port of the output changes it)",
    "bytes_outside": "bytes changed outside touched statements",
    "comments_lost": "comments lost",
    "hang": "hangs (past --cell-timeout)",
    "invalid_accepted": "invalid cells the port accepted (a figure)",
}


# --------------------------------------------------------------------------- sources


class Source:
    """A notebook or case file: its name and its code cells, in order."""

    def __init__(self, name: str, cells: list) -> None:
        self.name = name
        self.cells = cells


def load_sources(dirs=SOURCE_DIRS) -> list:
    """The demo notebooks' code cells and the cases' ``# %%`` cells (empty cells left out)."""
    sources = []
    for folder in dirs:
        if not folder.is_dir():
            continue
        for path in sorted(folder.iterdir()):
            label = f"shared/{path.name}" if "shared" in folder.parts else path.name
            if path.suffix == ".ipynb":
                nb = json.loads(path.read_text(encoding="utf-8"))
                cells = ["".join(c["source"]) if isinstance(c["source"], list) else c["source"]
                         for c in nb["cells"] if c["cell_type"] == "code"]
            elif path.suffix == ".py":
                cells = re.split(r"^# %%[^\n]*\n", path.read_text(encoding="utf-8"), flags=re.M)
            else:
                continue
            cells = [_magic_body(c) for c in cells]
            cells = [c for c in cells if c.strip()]
            if cells:
                sources.append(Source(label, cells))
    return sources


def _magic_body(cell: str) -> str:
    """A ``%%ms_port`` / ``%%ms_parity`` cell's body (what the magic ports); other cells
    as they are."""
    stripped = cell.lstrip("\n")
    if stripped.startswith(("%%ms_port", "%%ms_parity")):
        return stripped.partition("\n")[2]
    return cell


# --------------------------------------------------------------------------- validity


#: cell magics that run (or time) their body as Python: the body must compile too
_PYTHON_BODY_MAGICS = {"time", "timeit", "prun", "capture"}


def ipython_python(cell: str) -> Optional[str]:
    """The Python IPython runs for *cell* when it compiles, else None (the reference for
    validity). A ``%%time``-like cell magic's body is checked the same way."""
    from IPython.core.inputtransformer2 import TransformerManager

    try:
        code = TransformerManager().transform_cell(cell)
        compile(code, "<cell>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    except Exception:  # IPython's transformers fail on some invalid input
        return None
    body = _cell_magic_body(code)
    if body is not None:
        return code if ipython_python(body) is not None else None
    return code


def _cell_magic_body(code: str) -> Optional[str]:
    """The body of ``get_ipython().run_cell_magic(name, line, body)`` for the magics
    that run their body as Python, else None."""
    if "run_cell_magic" not in code:
        return None
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return None
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.Expr):
        return None
    call = tree.body[0].value
    if (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
            and call.func.attr == "run_cell_magic" and len(call.args) == 3
            and all(isinstance(a, ast.Constant) for a in call.args)
            and call.args[0].value in _PYTHON_BODY_MAGICS):
        return call.args[2].value
    return None


def comments(python: str) -> Counter:
    """The ``#`` comments of Python text (what tokenize calls comments), counted."""
    found: Counter = Counter()
    python = python.replace("\r\n", "\n").replace("\r", "\n")
    try:
        for tok in tokenize.generate_tokens(io.StringIO(python).readline):
            if tok.type == tokenize.COMMENT:
                found[tok.string.rstrip()] += 1
    except (tokenize.TokenError, SyntaxError, IndentationError):
        pass
    return found


# --------------------------------------------------------------------------- mutations
#
# Each mutation takes the cell and a random.Random and returns the mutated cell, or None
# when it does not apply to this cell. The Python-text ones need the cell to tokenize.

_LINE_SPLIT = re.compile(r"(?<=\n)|(?<=\r)(?!\n)")


def split_lines(text: str) -> list:
    """*text*'s lines with their ends (LF, CRLF or CR; nothing else ends a line here)."""
    return [line for line in _LINE_SPLIT.split(text) if line]


def _tokens(cell: str) -> Optional[list]:
    try:
        return list(tokenize.generate_tokens(io.StringIO(cell).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return None


def _logical_lines(cell: str) -> Optional[list]:
    """(first row, column, last row, first token, last token before NEWLINE) of each
    logical line, rows 1-based; None when the cell does not tokenize."""
    toks = _tokens(cell)
    if toks is None:
        return None
    out, start, last = [], None, None
    for tok in toks:
        if tok.type in (tokenize.NL, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT,
                        tokenize.ENCODING, tokenize.ENDMARKER):
            continue
        if tok.type == tokenize.NEWLINE:
            if start is not None:
                out.append((start.start[0], start.start[1], tok.start[0], start, last))
            start = None
            continue
        if start is None:
            start = tok
        last = tok
    return out


def _insert_line(cell: str, row: int, text: str) -> str:
    lines = cell.split("\n")
    lines.insert(row - 1, text)
    return "\n".join(lines)


def _statement_starts(cell: str) -> list:
    """(row, indentation) of the logical lines that start their physical line."""
    logical = _logical_lines(cell) or []
    lines = cell.split("\n")
    return [(row, lines[row - 1][:col]) for row, col, _, _, _ in logical
            if not lines[row - 1][:col].strip()]


def _simple_one_line(cell: str) -> list:
    """(row, column) of logical lines on one physical line that are no block header."""
    lines = cell.split("\n")
    return [(row, col) for row, col, end, first, last in _logical_lines(cell) or []
            if row == end and last.string != ":" and not lines[row - 1][:col].strip()
            and first.string not in ("else", "elif", "except", "finally", "case", "@")]


def m_comment_inline(cell, rng):
    logical = _logical_lines(cell)
    if not logical:
        return None
    toks = _tokens(cell)
    ends = [t for t in toks if t.type == tokenize.NEWLINE and t.string]
    if not ends:
        return None
    tok = rng.choice(ends)
    lines = cell.split("\n")
    row, col = tok.start
    lines[row - 1] = lines[row - 1][:col] + "  # fuzz: inline note" + lines[row - 1][col:]
    return "\n".join(lines)


def m_comment_own_line(cell, rng):
    starts = _statement_starts(cell)
    if not starts:
        return None
    row, indent = rng.choice(starts)
    return _insert_line(cell, row, indent + "# fuzz: own-line note")


def m_comment_in_call(cell, rng):
    """A comment after an opening bracket or a comma inside brackets; the rest of the
    line goes on the next line."""
    toks = _tokens(cell)
    if toks is None:
        return None
    depth, spots = 0, []
    for i, tok in enumerate(toks):
        if tok.type == tokenize.OP and tok.string in "([{":
            depth += 1
        elif tok.type == tokenize.OP and tok.string in ")]}":
            depth -= 1
        if depth > 0 and tok.type == tokenize.OP and tok.string in ("(", "[", "{", ",") \
                and i + 1 < len(toks) and toks[i + 1].start[0] == tok.end[0] \
                and toks[i + 1].type not in (tokenize.NL, tokenize.COMMENT) \
                and toks[i + 1].string not in (")", "]", "}"):
            spots.append(tok)
    if not spots:
        return None
    tok = rng.choice(spots)
    lines = cell.split("\n")
    row, col = tok.end
    line = lines[row - 1]
    indent = line[: len(line) - len(line.lstrip())]
    lines[row - 1] = line[:col] + "  # fuzz: in call\n" + indent + "    " + line[col:].lstrip()
    return "\n".join(lines)


def m_blank_lines(cell, rng):
    starts = _statement_starts(cell)
    if not starts:
        return None
    blank = rng.choice(["", "", "    ", "\t"])
    n = rng.randint(1, 3)
    where = rng.random()
    if where < 0.2:
        return "\n" * n + cell
    if where < 0.4:
        return cell + ("\n" if not cell.endswith("\n") else "") + (blank + "\n") * n
    row, _ = rng.choice(starts)
    for _ in range(n):
        cell = _insert_line(cell, row, blank)
    return cell


def _names(toks) -> list:
    return [t for t in toks if t.type == tokenize.NAME and not keyword.iskeyword(t.string)
            and not keyword.issoftkeyword(t.string)]


def _replace_tokens(cell: str, spans: list) -> str:
    """*cell* with ((row, col), (row, col), text) spans replaced (rows 1-based)."""
    lines = cell.split("\n")
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line) + 1)
    out, at = [], 0
    for (r1, c1), (r2, c2), text in sorted(spans):
        a, b = offsets[r1 - 1] + c1, offsets[r2 - 1] + c2
        out.append(cell[at:a])
        out.append(text)
        at = b
    out.append(cell[at:])
    return "".join(out)


def _import_line_rows(toks) -> set:
    rows, in_import = set(), False
    for tok in toks:
        if tok.type == tokenize.NAME and tok.string in ("import", "from") and not in_import:
            in_import = True
            start = tok.start[0]
        if tok.type == tokenize.NEWLINE and in_import:
            rows.update(range(start, tok.end[0] + 1))
            in_import = False
    return rows


def _prepend(cell: str, line: str) -> str:
    """*line* above the cell's first statement (after leading comments and blank lines)."""
    starts = _statement_starts(cell)
    row = next((r for r, indent in starts if not indent), 1)
    return _insert_line(cell, row, line)


def m_alias_torch(cell, rng):
    """``import torch as T`` at the top and every ``torch`` outside imports read ``T``."""
    toks = _tokens(cell)
    if toks is None or any(t.string == "T" for t in _names(toks)):
        return None
    imports = _import_line_rows(toks)
    spans = []
    for i, tok in enumerate(toks):
        if tok.type == tokenize.NAME and tok.string == "torch" and tok.start[0] not in imports \
                and not (i and toks[i - 1].string == "."):
            spans.append((tok.start, tok.end, "T"))
    if not spans:
        return None
    return _prepend(_replace_tokens(cell, spans), "import torch as T")


def m_alias_functional(cell, rng):
    """``torch.nn.functional.x`` / ``nn.functional.x`` read ``F.x`` (with the import
    above), or ``F.x`` reads ``torch.nn.functional.x``."""
    toks = _tokens(cell)
    if toks is None:
        return None
    sig = [t for t in toks if t.type not in (tokenize.NL, tokenize.COMMENT)]
    imports = _import_line_rows(toks)
    spans = []
    for i in range(len(sig) - 4):
        words = [t.string for t in sig[i:i + 6]]
        if sig[i].start[0] in imports or (i and sig[i - 1].string == "."):
            continue
        if words[:6] == ["torch", ".", "nn", ".", "functional", "."]:
            spans.append((sig[i].start, sig[i + 5].end, "F."))
        elif words[:4] == ["nn", ".", "functional", "."]:
            spans.append((sig[i].start, sig[i + 3].end, "F."))
    if spans and not any(t.string == "F" for t in _names(toks)):
        return _prepend(_replace_tokens(cell, spans), "import torch.nn.functional as F")
    spans = [(t.start, sig[i + 1].end, "torch.nn.functional.") for i, t in enumerate(sig[:-1])
             if t.type == tokenize.NAME and t.string == "F" and sig[i + 1].string == "."
             and t.start[0] not in imports and not (i and sig[i - 1].string == ".")]
    if not spans:
        return None
    return _prepend(_replace_tokens(cell, spans), "import torch\nimport torch.nn.functional")


#: parameter names, in order, of calls whose arguments may be spelled either way:
#: layer classes (matched by name) and functions (matched on ``torch.``/``F.``/``nn.``)
_LAYER_PARAMS = {
    "Linear": ("in_features", "out_features", "bias"),
    "Conv1d": ("in_channels", "out_channels", "kernel_size", "stride", "padding"),
    "Conv2d": ("in_channels", "out_channels", "kernel_size", "stride", "padding"),
    "Embedding": ("num_embeddings", "embedding_dim"),
    "Dropout": ("p",),
    "BatchNorm1d": ("num_features", "eps", "momentum"),
    "BatchNorm2d": ("num_features", "eps", "momentum"),
    "LayerNorm": ("normalized_shape", "eps"),
    "LSTM": ("input_size", "hidden_size", "num_layers"),
    "GRU": ("input_size", "hidden_size", "num_layers"),
    "RNN": ("input_size", "hidden_size", "num_layers"),
    "MaxPool2d": ("kernel_size", "stride", "padding"),
    "SGD": ("params", "lr"),
    "Adam": ("params", "lr"),
    "AdamW": ("params", "lr"),
}
_FUNCTION_PARAMS = {
    "softmax": ("input", "dim"),
    "log_softmax": ("input", "dim"),
    "cross_entropy": ("input", "target"),
    "mse_loss": ("input", "target"),
    "matmul": ("input", "other"),
    "cat": ("tensors", "dim"),
    "stack": ("tensors", "dim"),
    "argmax": ("input", "dim"),
    "manual_seed": ("seed",),
    "tanh": ("input",),
    "relu": ("input",),
    "sigmoid": ("input",),
    "exp": ("input",),
}


def _call_params(func) -> Optional[tuple]:
    import libcst as cst

    if isinstance(func, cst.Name):
        return _LAYER_PARAMS.get(func.value)
    if isinstance(func, cst.Attribute):
        name = func.attr.value
        if name in _LAYER_PARAMS:
            return _LAYER_PARAMS[name]
        if name in _FUNCTION_PARAMS and isinstance(func.value, cst.Name) \
                and func.value.value in ("torch", "F", "functional"):
            return _FUNCTION_PARAMS[name]
    return None


def m_keyword_args(cell, rng):
    """One call's arguments: the last positional ones by keyword, or its leading
    keyword ones (in parameter order) by position."""
    import libcst as cst

    try:
        module = cst.parse_module(cell)
    except Exception:
        return None

    def spellable(call) -> Optional[tuple]:
        params = _call_params(call.func)
        if params is None or any(a.star for a in call.args):
            return None
        positional = [a for a in call.args if a.keyword is None]
        keywords = [a.keyword.value for a in call.args if a.keyword is not None]
        if positional and len(positional) <= len(params):
            return ("by_keyword", params, len(positional))
        n = 0
        while n < min(len(keywords), len(params)) and keywords[n] == params[n]:
            n += 1
        return ("by_position", params, n) if n and not positional else None

    class Find(cst.CSTVisitor):
        def __init__(self):
            self.found = 0

        def visit_Call(self, node):
            if spellable(node):
                self.found += 1

    finder = Find()
    module.visit(finder)
    if not finder.found:
        return None
    pick = rng.randrange(finder.found)
    no_space = cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                               whitespace_after=cst.SimpleWhitespace(""))

    class Respell(cst.CSTTransformer):
        def __init__(self):
            self.seen = 0

        def leave_Call(self, original, updated):
            how = spellable(original)
            if not how:
                return updated
            self.seen += 1
            if self.seen - 1 != pick:
                return updated
            mode, params, n = how
            args = list(updated.args)
            if mode == "by_keyword":
                k = rng.randint(1, n)
                for i in range(n - k, n):
                    args[i] = args[i].with_changes(keyword=cst.Name(params[i]), equal=no_space)
            else:
                k = rng.randint(1, n)
                for i in range(k):
                    args[i] = args[i].with_changes(keyword=None, equal=cst.MaybeSentinel.DEFAULT)
            return updated.with_changes(args=args)

    return module.visit(Respell()).code


def _fullwidth(text: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if c.isascii() and c.isalnum() else c for c in text)


def m_fullwidth(cell, rng):
    """One identifier (every occurrence, or one) in fullwidth letters and digits."""
    toks = _tokens(cell)
    if toks is None:
        return None
    names = [t for t in _names(toks) if t.string.isascii() and not t.string[0].isdigit()
             and t.string not in ("print", "get_ipython")]
    if not names:
        return None
    chosen = rng.choice(names).string
    hits = [t for t in names if t.string == chosen]
    if rng.random() < 0.5:
        hits = [rng.choice(hits)]
    return _replace_tokens(cell, [(t.start, t.end, _fullwidth(t.string)) for t in hits])


def m_line_magic(cell, rng):
    """``%time`` / ``%timeit -n1 -r1`` before a one-line statement, or a
    ``%matplotlib inline`` line."""
    if rng.random() < 0.6:
        spots = _simple_one_line(cell)
        if spots:
            row, col = rng.choice(spots)
            lines = cell.split("\n")
            prefix = rng.choice(["%time ", "%timeit -n1 -r1 ", "%time  "])
            lines[row - 1] = lines[row - 1][:col] + prefix + lines[row - 1][col:]
            return "\n".join(lines)
    starts = _statement_starts(cell)
    if not starts:
        return None
    row, indent = rng.choice(starts)
    return _insert_line(cell, row, indent + rng.choice(["%matplotlib inline", "%time", "%who"]))


def m_help_line(cell, rng):
    """A ``name?`` / ``name??`` / ``?name`` line naming a name of the cell."""
    toks = _tokens(cell)
    starts = _statement_starts(cell)
    if toks is None or not starts:
        return None
    names = _names(toks)
    if not names:
        return None
    name = rng.choice(names).string
    row, indent = rng.choice(starts)
    return _insert_line(cell, row, indent + rng.choice([f"{name}?", f"{name}??", f"?{name}"]))


def m_cell_magic(cell, rng):
    if cell.lstrip().startswith("%%"):
        return None
    return rng.choice(["%%time\n", "%%timeit -n1 -r1\n", "%%capture captured\n"]) + cell


def m_indent_all(cell, rng):
    margin = rng.choice(["    ", "  ", "\t"])
    return "\n".join(margin + line if line.strip() else line for line in cell.split("\n"))


def m_indent_first(cell, rng):
    lines = cell.split("\n")
    for i, line in enumerate(lines):
        if line.strip():
            lines[i] = rng.choice(["    ", "  "]) + line
            return "\n".join(lines)
    return None


def m_tabs(cell, rng):
    """Every 4 (or 2) leading spaces read as a tab."""
    lines = cell.split("\n")
    width = 2 if any(l.startswith("  ") and not l.startswith("    ") for l in lines) else 4
    out, changed = [], False
    for line in lines:
        body = line.lstrip(" ")
        n = len(line) - len(body)
        if n >= width:
            changed = True
        out.append("\t" * (n // width) + " " * (n % width) + body)
    return "\n".join(out) if changed else None


def m_crlf(cell, rng):
    return cell.replace("\n", "\r\n") if "\n" in cell else None


def m_cr(cell, rng):
    return cell.replace("\n", "\r") if "\n" in cell else None


_RANDOM_TOKENS = ["(", ")", "[", "]", ":", ",", "=", ".", "lambda", "%", "?", "!", "\\", "'", '"""',
                  "if", "else", "\n", "\n    ", "\t", "#", "@", "**", "torch", "nn.", "%%time\n", ";"]


def m_token_random(cell, rng):
    """A random token-level change: one that may make the cell invalid."""
    toks = _tokens(cell)
    how = rng.choice(["delete", "repeat", "swap", "insert", "cut"])
    if how == "cut" or not toks:
        at = rng.randrange(len(cell) + 1)
        return cell[:at]
    real = [t for t in toks if t.type not in (tokenize.ENDMARKER, tokenize.DEDENT, tokenize.ENCODING)
            and t.string]
    if len(real) < 2:
        return None
    i = rng.randrange(len(real) - 1)
    tok, nxt = real[i], real[i + 1]
    if how == "delete":
        return _replace_tokens(cell, [(tok.start, tok.end, "")])
    if how == "repeat":
        return _replace_tokens(cell, [(tok.start, tok.end, tok.string + " " + tok.string)])
    if how == "swap" and tok.end <= nxt.start:
        return _replace_tokens(cell, [(tok.start, tok.end, nxt.string), (nxt.start, nxt.end, tok.string)])
    return _replace_tokens(cell, [(tok.end, tok.end, rng.choice(_RANDOM_TOKENS))])


#: the mutations meant to keep a cell valid, by phase: a fuzzed cell takes one to
#: three of them, applied in this order (Python text, IPython syntax, layout)
PHASES = (
    ("comment_inline", "comment_own_line", "comment_in_call", "blank_lines", "alias_torch",
     "alias_functional", "keyword_args", "fullwidth"),
    ("line_magic", "help_line", "cell_magic"),
    ("indent_all", "indent_first", "tabs", "crlf", "cr"),
)
MUTATIONS: dict = {name: globals()["m_" + name] for phase in PHASES for name in phase}
MUTATIONS["token_random"] = m_token_random


def fuzz_cell(cell: str, rng: random.Random, random_share: float = 0.15) -> tuple:
    """(mutated cell, names of the mutations applied): a random token-level mutation
    with probability *random_share*, else one to three mutations meant to keep the cell
    valid, in phase order (a mutation that does not apply is left out)."""
    if rng.random() < random_share:
        out = m_token_random(cell, rng)
        if out is not None:
            return out, ("token_random",)
    wanted = set(rng.sample(sorted(MUTATIONS.keys() - {"token_random"}), rng.randint(1, 3)))
    applied = []
    for phase in PHASES:
        for name in phase:
            if name in wanted:
                out = MUTATIONS[name](cell, rng)
                if out is not None and out != cell:
                    cell = out
                    applied.append(name)
                # a later layout change would undo the line ends: only one of those
                if name in ("crlf", "cr") and applied and applied[-1] == name:
                    break
    return cell, tuple(applied) or ("none",)


# --------------------------------------------------------------------------- the check


class Worker:
    """Ports fuzzed cells in this process, with sessions that saw each source's earlier
    cells (cached per source)."""

    def __init__(self, sources: list) -> None:
        import msmagic  # noqa: F401  (imported once, before the clock starts)
        from msmagic import rules  # noqa: F401

        self.sources = sources
        self._chains: dict = {}

    def _sessions(self, si: int, ci: int) -> tuple:
        """(session before cell *ci* of source *si*, session before it for the ported
        cells): the first has ported the earlier cells, the second their ported code,
        what porting ported code again starts from. Extended as far as asked, cached."""
        import msmagic
        from msmagic.engine.session import PortSession

        chain = self._chains.setdefault(si, {"torch": PortSession(), "ms": PortSession(),
                                             "before": [], "before_ms": []})
        cells = self.sources[si].cells
        while len(chain["before"]) <= ci:
            chain["before"].append(copy.deepcopy(chain["torch"]))
            chain["before_ms"].append(copy.deepcopy(chain["ms"]))
            cell = cells[len(chain["before"]) - 1]
            try:
                code = msmagic.port(cell, session=chain["torch"]).code
            except Exception:
                code = cell
            try:
                msmagic.port(code, session=chain["ms"])
            except Exception:
                pass
        return chain["before"][ci], chain["before_ms"][ci]

    def check(self, job: dict) -> dict:
        import msmagic

        cell = job["cell"]
        before, before_ms = self._sessions(job["source"], job["cell_index"])
        record = {"id": job["id"], "valid": ipython_python(cell) is not None, "problems": []}
        start = time.perf_counter()
        try:
            result = msmagic.port(cell, session=copy.deepcopy(before))
        except msmagic.PortError as exc:
            record["seconds"] = time.perf_counter() - start
            record["error"] = f"{type(exc).__name__}: {exc}"
            if record["valid"]:
                record["problems"].append(
                    "port_output_error" if isinstance(exc, msmagic.PortOutputError) else "refusal")
            return record
        except BaseException as exc:  # noqa: BLE001 - what the fuzzer is after
            record["seconds"] = time.perf_counter() - start
            record["error"] = f"{type(exc).__name__}: {exc}"
            record["traceback"] = traceback.format_exc()
            record["problems"].append("crash")
            return record
        record["seconds"] = time.perf_counter() - start
        record["output"] = result.code
        if not record["valid"]:
            record["problems"].append("invalid_accepted")
            return record
        out_python = ipython_python(result.code)
        if out_python is None:
            record["problems"].append("does_not_compile")
        try:
            again = msmagic.port(result.code, session=copy.deepcopy(before_ms)).code
        except BaseException as exc:  # noqa: BLE001
            again = f"<second port raised {type(exc).__name__}: {exc}>"
        if again != result.code:
            record["problems"].append("not_idempotent")
            record["again"] = again
        outside = changed_outside(result)
        if outside:
            record["problems"].append("bytes_outside")
            record["outside"] = outside
        lost = [c for c, n in comments(ipython_python(cell) or "").items() if result.code.count(c) < n]
        if lost:
            record["problems"].append("comments_lost")
            record["lost"] = lost
        return record


def touched_lines(result) -> set:
    """Input lines (1-based) of the statements the port edited or flagged, and of its
    edits."""
    statements = {e.statement for e in result.edits} | {f.statement for f in result.unsupported}
    lines = set()
    for s in result.statements:
        if s.index in statements:
            lines.update(range(s.before[0], s.before[1] + 1))
    for e in result.edits:
        lines.update(range(e.before[0], e.before[1] + 1))
    lines.update(f.line for f in result.unsupported)
    return lines


def changed_outside(result) -> list:
    """Input lines (1-based) outside the touched statements that the output does not
    keep byte for byte (aligned with difflib; line ends count)."""
    import difflib

    src, out = split_lines(result.source), split_lines(result.code)
    kept = set()
    matcher = difflib.SequenceMatcher(None, src, out, autojunk=False)
    for i, _, size in matcher.get_matching_blocks():
        kept.update(range(i + 1, i + size + 1))
    touched = touched_lines(result)
    return [n for n in range(1, len(src) + 1) if n not in kept and n not in touched]


def _serve(sources, conn) -> None:
    """The worker process: check the jobs the parent sends until it sends None. Before
    each check it ports the cell's earlier cells (cached) and says "prepared", so the
    time limit counts the fuzzed cell's check only."""
    worker = Worker(sources)
    conn.send("ready")
    while True:
        job = conn.recv()
        if job is None:
            return
        worker._sessions(job["source"], job["cell_index"])
        conn.send("prepared")
        conn.send(worker.check(job))


class Runner:
    """One worker process; a cell past the time limit kills it (a new one is started)."""

    #: how much longer than a cell's check porting its earlier cells may take
    PREPARE_FACTOR = 30

    def __init__(self, sources: list, timeout: float) -> None:
        self.sources = sources
        self.timeout = timeout
        self.ctx = multiprocessing.get_context("fork")
        self.proc = None

    def _start(self) -> None:
        self.conn, child = self.ctx.Pipe()
        self.proc = self.ctx.Process(target=_serve, args=(self.sources, child), daemon=True)
        self.proc.start()
        child.close()
        if self.conn.recv() != "ready":  # pragma: no cover
            raise RuntimeError("the fuzz worker did not start")

    def _answer(self, timeout: float):
        """The worker's next message, or None when none came in *timeout* seconds or
        the worker died."""
        if self.conn.poll(timeout):
            try:
                return self.conn.recv()
            except EOFError:
                return None
        return None

    def check(self, job: dict) -> dict:
        if self.proc is None or not self.proc.is_alive():
            self._start()
        self.conn.send(job)
        prepared = self._answer(self.timeout * self.PREPARE_FACTOR) == "prepared"
        start = time.perf_counter()
        record = self._answer(self.timeout) if prepared else None
        if record is not None:
            return record
        waited = time.perf_counter() - start
        self.proc.kill()
        self.proc.join()
        code = self.proc.exitcode
        self.proc = None
        valid = ipython_python(job["cell"]) is not None
        if prepared and waited >= self.timeout:
            return {"id": job["id"], "valid": valid, "problems": ["hang"], "seconds": waited,
                    "error": f"no answer in {self.timeout:g} s"}
        what = "porting the earlier cells" if not prepared else "checking the cell"
        return {"id": job["id"], "valid": valid, "problems": ["crash"], "seconds": waited,
                "error": f"the worker died or stopped answering {what} (exit code {code})"}

    def close(self) -> None:
        if self.proc is not None and self.proc.is_alive():
            self.conn.send(None)
            self.proc.join(5)
            if self.proc.is_alive():
                self.proc.kill()


def run_jobs(jobs: list, sources: list, timeout: float, workers: int, budget: Optional[float]) -> list:
    """The records of the jobs checked before *budget* seconds ran out, from *workers*
    worker processes; each takes the jobs of every n-th source file (so each source's
    earlier cells are ported by one worker only)."""
    import threading

    start = time.perf_counter()
    records: list = []
    lock = threading.Lock()

    def shard(k: int) -> None:
        runner = Runner(sources, timeout)
        try:
            for job in jobs:
                if job["source"] % workers != k:
                    continue
                if budget is not None and time.perf_counter() - start > budget:
                    break
                record = runner.check(job)
                with lock:
                    records.append(record)
        finally:
            runner.close()

    threads = [threading.Thread(target=shard, args=(k,)) for k in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sorted(records, key=lambda r: r["id"])


# --------------------------------------------------------------------------- report


def make_jobs(sources: list, count: int, seed: int) -> list:
    rng = random.Random(seed)
    cells = [(si, ci) for si, s in enumerate(sources) for ci in range(len(s.cells))]
    jobs = []
    for n in range(count):
        si, ci = rng.choice(cells)
        cell, kinds = fuzz_cell(sources[si].cells[ci], rng)
        jobs.append({"id": n, "source": si, "cell_index": ci, "cell": cell, "kinds": kinds})
    return jobs


def summarize(jobs: list, records: list, sources: list, elapsed: float) -> dict:
    by_id = {r["id"]: r for r in records}
    done = [j for j in jobs if j["id"] in by_id]
    counts = Counter()
    by_kind: dict = defaultdict(Counter)
    for job in done:
        rec = by_id[job["id"]]
        validity = {True: "valid", False: "invalid", None: "unknown"}[rec["valid"]]
        counts[validity] += 1
        for kind in job["kinds"]:
            by_kind[kind]["cells"] += 1
            by_kind[kind][validity] += 1
        for problem in set(rec["problems"]):
            counts[problem] += 1
            if rec["valid"] is False and problem == "crash":
                counts["crash_on_invalid"] += 1
            for kind in job["kinds"]:
                by_kind[kind][problem] += 1
        if rec["valid"] is False and not rec["problems"]:
            counts["invalid_refused"] += 1
    seconds = [by_id[j["id"]]["seconds"] for j in done if "seconds" in by_id[j["id"]]]
    return {
        "cells_fuzzed": len(done),
        "source_files": len(sources),
        "source_cells": sum(len(s.cells) for s in sources),
        "valid": counts["valid"],
        "invalid": counts["invalid"],
        "unknown_validity": counts["unknown"],
        **{name: counts[name] for name in FAILURES},
        "crash_on_invalid": counts["crash_on_invalid"],
        "invalid_refused_with_port_error": counts["invalid_refused"],
        "invalid_accepted": counts["invalid_accepted"],
        "by_kind": {k: dict(v) for k, v in sorted(by_kind.items())},
        "port_seconds": {
            "median": round(statistics.median(seconds), 4) if seconds else None,
            "max": round(max(seconds), 3) if seconds else None,
            "total": round(sum(seconds), 1),
        },
        "elapsed_seconds": round(elapsed, 1),
    }


def print_table(summary: dict, out=sys.stdout) -> None:
    w = out.write
    w(f"cells fuzzed: {summary['cells_fuzzed']} (from {summary['source_cells']} cells of "
      f"{summary['source_files']} files)\n")
    w(f"  valid (IPython compiles them): {summary['valid']}\n")
    w(f"  invalid: {summary['invalid']} (refused with a PortError: "
      f"{summary['invalid_refused_with_port_error']}, accepted: {summary['invalid_accepted']}, "
      f"crashes: {summary['crash_on_invalid']})\n")
    if summary["unknown_validity"]:
        w(f"  unknown (hang or worker death before the check): {summary['unknown_validity']}\n")
    w("\n")
    for name in FAILURES:
        w(f"{LABELS[name]:<50} {summary[name]:>6}\n")
    w("\nby mutation kind (a cell counts under each kind it took)\n")
    cols = ["cells", "valid", "invalid", *FAILURES, "invalid_accepted"]
    short = {"cells": "cells", "valid": "valid", "invalid": "inval", "crash": "crash",
             "refusal": "refuse", "port_output_error": "outerr", "does_not_compile": "nocomp",
             "not_idempotent": "nidem", "bytes_outside": "bytes", "comments_lost": "comm",
             "hang": "hang", "invalid_accepted": "inv_ok"}
    w(f"{'kind':<18}" + "".join(f"{short[c]:>7}" for c in cols) + "\n")
    for kind, row in summary["by_kind"].items():
        w(f"{kind:<18}" + "".join(f"{row.get(c, 0):>7}" for c in cols) + "\n")
    t = summary["port_seconds"]
    w(f"\nport time per cell: median {t['median']} s, max {t['max']} s; "
      f"elapsed {summary['elapsed_seconds']} s\n")


def write_examples(folder: Path, jobs: list, records: list, sources: list, per: int) -> None:
    by_id = {r["id"]: r for r in records}
    written: Counter = Counter()
    for job in jobs:
        rec = by_id.get(job["id"])
        if rec is None:
            continue
        for problem in rec["problems"]:
            if written[problem] >= per:
                continue
            written[problem] += 1
            where = folder / problem
            where.mkdir(parents=True, exist_ok=True)
            stem = f"{written[problem]:02d}-{Path(sources[job['source']].name).stem}-cell{job['cell_index'] + 1}"
            with open(where / f"{stem}.py", "w", encoding="utf-8", newline="") as f:
                f.write(job["cell"])
            info = {
                "source": sources[job["source"]].name,
                "cell": job["cell_index"] + 1,
                "mutations": list(job["kinds"]),
                "valid": rec["valid"],
                **{k: rec[k] for k in ("error", "traceback", "outside", "lost", "seconds") if k in rec},
            }
            with open(where / f"{stem}.json", "w", encoding="utf-8") as f:
                json.dump(info, f, indent=1, ensure_ascii=False)
            for key, suffix in (("output", "out.py"), ("again", "again.py")):
                if key in rec:
                    with open(where / f"{stem}.{suffix}", "w", encoding="utf-8", newline="") as f:
                        f.write(rec[key])


def write_records(path: Path, jobs: list, records: list, sources: list) -> None:
    """One JSON line per fuzzed cell: id, source, cell, mutations, validity, problems,
    error (the same seed and count give the same cells, so two runs compare line by line)."""
    by_id = {r["id"]: r for r in records}
    with open(path, "w", encoding="utf-8") as f:
        for job in jobs:
            rec = by_id.get(job["id"])
            if rec is None:
                continue
            line = {"id": job["id"], "source": sources[job["source"]].name, "cell": job["cell_index"] + 1,
                    "mutations": list(job["kinds"]), "valid": rec["valid"], "problems": rec["problems"],
                    "error": rec.get("error", "")}
            f.write(json.dumps(line, ensure_ascii=False) + "\n")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--count", type=int, default=800, help="cells to fuzz")
    parser.add_argument("--time-budget", type=float, default=None,
                        help="stop starting new cells after this many seconds")
    parser.add_argument("--cell-timeout", type=float, default=60.0,
                        help="seconds a cell's check may take before it counts as a hang")
    parser.add_argument("--jobs", type=int, default=1,
                        help="worker processes (each takes the cells of every n-th source file)")
    parser.add_argument("--examples", type=Path, help="write the first failing cells of each category here")
    parser.add_argument("--per-category", type=int, default=5, help="examples per category")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--records", type=Path,
                        help="write one JSON line per fuzzed cell (what it was, what happened) here, "
                             "to compare two runs cell by cell")
    parser.add_argument("--show", type=Path, help="print the table of an earlier run's --json output")
    args = parser.parse_args(argv)
    if args.show:
        print_table(json.loads(args.show.read_text(encoding="utf-8")))
        return 0

    start = time.perf_counter()
    sources = load_sources()
    jobs = make_jobs(sources, args.count, args.seed)
    records = run_jobs(jobs, sources, args.cell_timeout, args.jobs, args.time_budget)
    summary = summarize(jobs, records, sources, time.perf_counter() - start)
    summary["workers"] = args.jobs
    summary["seed"] = args.seed
    summary["count"] = args.count
    if args.examples:
        write_examples(args.examples, jobs, records, sources, args.per_category)
    if args.records:
        write_records(args.records, jobs, records, sources)
    if args.json:
        json.dump(summary, sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        print_table(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
