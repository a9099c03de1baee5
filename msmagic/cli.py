"""Command line: ``python -m msmagic port PATH`` and ``python -m msmagic rules``.

``main(argv)`` returns the exit status instead of exiting, so tests can call it.
Exit status: 0 done; 1 ``--check`` found something msmagic could not port; 2 usage or
input error (nothing was written); 3 a notebook cell is not valid Python (that cell was
left as it is, the other cells were ported and written); 4 writing failed after some files
were written (each one is named on stderr; the others are untouched).
"""

from __future__ import annotations

import argparse
import codecs
import json
import os
import re
import stat
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

__all__ = ["main"]

EXTENSIONS = (".py", ".ipynb")
#: Cell magics whose body is Python: the body is ported, the magic line kept.
PYTHON_CELL_MAGICS = {"ms_port", "ms_parity", "time", "timeit", "capture", "prun", "debug"}
#: With a terminal on stderr the progress bar appears from this many cells on.
PROGRESS_MIN_CELLS = 10

PORT_HELP = """\
Port a PyTorch .py file, .ipynb notebook or directory (all .py/.ipynb files in it,
recursively, in sorted order; hidden directories and __pycache__ are skipped). A directory
run touches only what lies inside the directory: a symbolic link to a file or directory
outside it is skipped with a note unless --follow-symlinks is given, and a file reached
twice (through a link inside the directory) is ported once.

Where the ported code goes:
  .py, no -o          the ported code on stdout
  .ipynb, no -o       a readable listing on stdout in "percent" format: one
                      "# %% cell N" block per code cell; markdown and raw cells as
                      comments. Give -o to get a notebook.
  directory, no -o    not allowed: give -o DIR, --in-place or --check
  -o OUT              a file (for a directory: a mirrored directory tree)
  --in-place          each input the port changes is replaced after its original
                      is copied to PATH.bak; an existing backup is never
                      overwritten: the next one is PATH.bak.1, then PATH.bak.2, ...
                      A file with nothing to port is not written (and gets no backup).
  --check             report only, nothing is written unless -o/--in-place is given

Notebooks: every code cell is ported in order with one session, so imports in an
earlier cell resolve names in later cells. Markdown and raw cells are untouched;
IPython syntax (%magics, !commands) is kept. Cells whose body is not Python (%%bash,
%%html, ...) are left as they are. A cell the port changed loses its outputs (they
came from the PyTorch code); other cells keep theirs. Cells are numbered from 1 and
markdown cells count, as in the notebook.

The report (rules applied and findings, per file and cell) goes to stderr; with
--format json a JSON document goes to stdout instead of the code listing.

Nothing is overwritten unless asked: -o naming an existing file is refused without
--force. If any input cannot be read or a .py file is not valid Python, a one-line error
names it (PATH:LINE:COLUMN for a syntax error), nothing is written, and the exit status
is 2. A notebook cell that is not valid Python is reported in one line ("PATH cell
N:LINE:COLUMN", the line counted within the cell) and left as it is; the other cells are
ported and written, and the exit status is 3.

Files are written whole to hidden temporary files next to their targets
(.TARGET.PID.HOST.RANDOM.msmagic-tmp) and synced to disk; once every file is staged, they
are renamed over the targets. An interrupted run leaves each file old or complete and new;
a write that fails (a full disk) leaves nothing written. The next run on a target removes
the temporary files a killed run left there (never those of a run still going).
Only the ported code changes: a .py file keeps its encoding (UTF-8, or what its PEP 263
coding line names), its BOM and its line ends (LF, CRLF or CR); a notebook keeps its JSON
layout (indentation, key order, escapes), its format version (3 or 4) and every cell the
port did not change, byte for byte. Named pipes and other non-regular files are refused
(skipped, with a note, inside a directory).

Exit status: 0 ok; 1 with --check when there are findings; 2 errors (nothing written);
3 a notebook cell is not valid Python (left as it is; the rest ported and written);
4 a rename failed after some files were written: each file written is named ("wrote ..."),
the others are untouched."""


class CliError(Exception):
    """A one-line error; the message names the file (and cell)."""


class CellSyntaxError(CliError):
    """A cell (or a .py file) that is not valid Python; ``error`` is the PortSyntaxError
    with its line counted from the start of the cell as stored."""

    def __init__(self, where: str, error) -> None:
        self.where = where
        self.error = error
        super().__init__(f"error: {where}:{error.line}:{error.column}: {error.message}")


#: the exit status when a notebook cell is not valid Python (the other cells were ported)
EXIT_CELL_NOT_PORTED = 3


# --------------------------------------------------------------------------- model


@dataclass
class CellReport:
    index: int  # 1-based, counting every cell of the notebook
    kind: str  # "code" (ported), "skipped" (a non-Python cell magic), "error" (not valid Python)
    result: object = None  # PortResult
    line_offset: int = 0  # lines before the ported body (a %% magic line)
    note: str = ""
    error: object = None  # the PortSyntaxError of an "error" cell, lines counted in the cell

    @property
    def findings(self):
        return list(self.result.unsupported) if self.result is not None else []


@dataclass
class NotebookCell:
    """One cell of a notebook as it is in the file (format 4, or format 3's worksheets)."""

    index: int  # 1-based over the whole notebook
    cell_type: str
    source: str  # the joined source ("input" in format 3)
    raw: dict  # the cell's JSON object
    language: str = "python"
    new_source: Optional[str] = None  # set when the port changed the cell


@dataclass
class FileJob:
    path: Path
    display: str
    kind: str  # "py" or "ipynb"
    data: bytes = b""  # the file as read
    original: str = ""  # the decoded text (no BOM)
    encoding: str = "utf-8"
    bom: bool = False
    stat: Optional[os.stat_result] = None
    nb_raw: object = None  # the notebook's JSON document
    nb_version: int = 4
    nb_cells: list = field(default_factory=list)  # NotebookCell
    cells: list = field(default_factory=list)  # CellReport
    output: str = ""  # the ported file's text (no BOM)
    output_data: bytes = b""  # the ported file's bytes, as they will be written
    changed: bool = False

    @property
    def n_units(self) -> int:
        if self.kind == "py":
            return 1
        return sum(1 for c in self.nb_cells if c.cell_type == "code")


# --------------------------------------------------------------------------- progress


class Progress:
    """``\\r``-updated bar on stderr: ``porting [#####-----] 12/40 cells file``."""

    def __init__(self, total: int, enabled: bool, stream=None, width: int = 24):
        self.total = max(total, 1)
        self.enabled = enabled
        self.stream = stream or sys.stderr
        self.width = width
        self.done = 0
        self._shown = False

    def step(self, label: str) -> None:
        self.done += 1
        if not self.enabled:
            return
        filled = self.width * self.done // self.total
        bar = "#" * filled + "-" * (self.width - filled)
        self.stream.write(f"\rporting [{bar}] {self.done}/{self.total} cells {label[-40:]:<40}")
        self.stream.flush()
        self._shown = True

    def close(self) -> None:
        if self._shown:
            self.stream.write("\n")
            self.stream.flush()


# --------------------------------------------------------------------------- reading


def _collect(path: Path, follow_symlinks: bool = False) -> tuple[list[Path], list[tuple[Path, str]]]:
    """The files to port under *path*, and the (path, reason) of files skipped in a directory."""
    try:
        st = path.stat()
    except FileNotFoundError:
        kind = "a broken symbolic link" if path.is_symlink() else "no such file or directory"
        raise CliError(f"error: {path}: {kind}") from None
    except OSError as exc:
        raise CliError(f"error: {path}: {exc.strerror or exc}") from None
    if stat.S_ISDIR(st.st_mode):
        found, skipped = _collect_directory(path, follow_symlinks)
        if not found:
            raise CliError(f"error: {path}: no .py or .ipynb files in this directory")
        return found, skipped
    if path.suffix not in EXTENSIONS:
        raise CliError(f"error: {path}: unsupported file type {path.suffix or '(none)'!r}; expected .py or .ipynb")
    reason = _not_regular(path)
    if reason:
        raise CliError(f"error: {path}: {reason}; msmagic ports regular files only")
    return [path], []


def _inside(real: str, real_top: str) -> bool:
    """Whether the resolved path *real* is *real_top* or lies under it."""
    return real == real_top or real.startswith(real_top.rstrip(os.sep) + os.sep)


def _collect_directory(top: Path, follow_symlinks: bool) -> tuple[list[Path], list[tuple[Path, str]]]:
    """The files to port under the directory *top*, in sorted order, and those skipped.

    A directory run touches only what lies inside *top*: a symbolic link (to a file or a
    directory) that resolves outside it is skipped with a note unless *follow_symlinks*.
    A file reached twice (a link to a file that is also ported where it is) is ported once,
    preferably under its own name; symbolic links to directories are followed only with
    *follow_symlinks*, never round a cycle.
    """
    real_top = os.path.realpath(top)
    candidates, skipped = [], []
    chains = {str(top): frozenset([real_top])}  # a walked folder: the real folders above it and itself
    for root, dirs, files in os.walk(top, followlinks=follow_symlinks):
        chain = chains.pop(root, frozenset())
        kept = []
        for name in sorted(dirs):
            if name.startswith(".") or name == "__pycache__":
                continue
            entry = Path(root) / name
            real = os.path.realpath(entry)
            if entry.is_symlink():
                if not follow_symlinks:
                    if not _inside(real, real_top):
                        skipped.append((entry, f"a symbolic link to the directory {real}, outside {top}; "
                                        "--follow-symlinks ports what it holds"))
                    continue  # a link inside: its files are ported where they are
                if real in chain:
                    skipped.append((entry, f"a symbolic link to the directory {real}, which holds it"))
                    continue
            chains[str(entry)] = chain | {real}
            kept.append(name)
        dirs[:] = kept
        for name in sorted(files):
            if not name.endswith(EXTENSIONS) or name.startswith("."):
                continue
            entry = Path(root) / name
            reason = _not_regular(entry)
            real = os.path.realpath(entry)
            if not reason and not follow_symlinks and not _inside(real, real_top):
                reason = f"a symbolic link to {real}, outside {top}; --follow-symlinks ports it"
            if reason:
                skipped.append((entry, reason))
            else:
                candidates.append((entry, real))
    # one entry per real file: the one at the file's own place when it is listed, else the first
    candidates.sort(key=lambda item: item[0].relative_to(top).parts)
    chosen = {}
    for entry, real in candidates:
        at_home = os.path.relpath(real, real_top) == str(entry.relative_to(top))
        if real not in chosen or (at_home and not chosen[real][1]):
            chosen[real] = (entry, at_home)
    found = sorted((entry for entry, _ in chosen.values()), key=lambda p: p.relative_to(top).parts)
    for entry, real in candidates:
        if chosen[real][0] != entry:
            skipped.append((entry, f"the same file as {chosen[real][0]}, which is ported (once)"))
    skipped.sort(key=lambda item: item[0].relative_to(top).parts)
    return found, skipped


def _not_regular(path: Path) -> str:
    """Why *path* cannot be ported as a file ("" when it is a regular file)."""
    try:
        mode = path.stat().st_mode
    except OSError as exc:
        return exc.strerror or str(exc)
    if stat.S_ISREG(mode):
        return ""
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO), not a regular file"
    if stat.S_ISSOCK(mode):
        return "a socket, not a regular file"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device, not a regular file"
    return "not a regular file"


def _read_bytes(path: Path, display: str) -> tuple[bytes, os.stat_result]:
    """The file's bytes; a FIFO or device put in its place after listing is refused, not read."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise CliError(f"error: {display}: {exc.strerror or exc}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise CliError(f"error: {display}: not a regular file; msmagic ports regular files only")
        with os.fdopen(fd, "rb", closefd=False) as f:
            data = f.read()
    except OSError as exc:
        raise CliError(f"error: {display}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    return data, st


def _read(path: Path, display: str) -> FileJob:
    data, st = _read_bytes(path, display)
    if path.suffix == ".py":
        text, encoding, bom = _decode_python(data, display)
        return FileJob(path, display, "py", data=data, original=text, encoding=encoding, bom=bom, stat=st)
    bom = data.startswith(codecs.BOM_UTF8)
    try:
        text = data[len(codecs.BOM_UTF8) if bom else 0:].decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CliError(f"error: {display}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    job = FileJob(path, display, "ipynb", data=data, original=text, bom=bom, stat=st)
    _load_notebook(job)
    return job


def _decode_python(data: bytes, display: str) -> tuple[str, str, bool]:
    """(text without BOM, codec, had a UTF-8 BOM): UTF-8 unless a PEP 263 coding line says otherwise."""
    import io
    import tokenize

    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        message = str(exc.msg if hasattr(exc, "msg") else exc)
        if "invalid or missing encoding declaration" not in message:
            raise CliError(f"error: {display}: {message}") from None
        encoding = "utf-8"  # undecodable first lines and no declaration: the decode names the byte
    bom = encoding == "utf-8-sig"
    codec = "utf-8" if bom else encoding
    body = data[len(codecs.BOM_UTF8):] if bom else data
    try:
        return body.decode(codec), codec, bom
    except UnicodeDecodeError as exc:
        where = f"({exc.reason} at byte {exc.start})"
        if codec == "utf-8":
            raise CliError(f"error: {display}: not valid UTF-8 text {where}; a file in another "
                           "encoding needs a coding declaration (PEP 263)") from None
        raise CliError(f"error: {display}: not valid {codec} text, as its coding declaration "
                       f"says {where}") from None


def _load_notebook(job: FileJob) -> None:
    """Parse and validate the notebook; fill ``nb_raw``, ``nb_version`` and ``nb_cells``."""
    display = job.display
    bad = f"error: {display}: invalid notebook:"
    try:
        raw = json.loads(job.original)
    except json.JSONDecodeError as exc:
        raise CliError(f"{bad} not JSON ({exc})") from None
    except RecursionError:
        raise CliError(f"{bad} JSON nested too deeply") from None
    if not isinstance(raw, dict):
        raise CliError(f"{bad} the top level is a JSON {type(raw).__name__}, not an object")
    version = raw.get("nbformat")
    if type(version) is not int:
        raise CliError(f"{bad} no integer 'nbformat' version")
    if version not in (3, 4):
        raise CliError(f"error: {display}: notebook format {version} is not supported (msmagic reads formats 3 and 4)")
    cells = []
    if version == 4:
        raw_cells = raw.get("cells")
        if not isinstance(raw_cells, list):
            raise CliError(f"{bad} 'cells' is not a list")
        types = ("code", "markdown", "raw")
    else:
        sheets = raw.get("worksheets")
        if not isinstance(sheets, list) or not all(
            isinstance(w, dict) and isinstance(w.get("cells"), list) for w in sheets
        ):
            raise CliError(f"{bad} 'worksheets' is not a list of worksheets with cells")
        raw_cells = [c for w in sheets for c in w["cells"]]
        types = ("code", "markdown", "raw", "heading")
    for i, cell in enumerate(raw_cells, start=1):
        if not isinstance(cell, dict) or cell.get("cell_type") not in types:
            kinds = ", ".join(types[:-1]) + " or " + types[-1]
            raise CliError(f"error: {display} cell {i}: invalid notebook: not a {kinds} cell")
    if not _valid_by_schema(job.original, raw):
        _validate_with_nbformat(job.original, raw, version, display)
    source_key = "source" if version == 4 else "input"
    for i, cell in enumerate(raw_cells, start=1):
        key = source_key if cell["cell_type"] == "code" else "source"
        src = cell.get(key, "")
        cells.append(NotebookCell(
            i, cell["cell_type"], src if isinstance(src, str) else "".join(src), cell,
            language=cell.get("language", "python") if version == 3 else "python",
        ))
    job.nb_raw, job.nb_version, job.nb_cells = raw, version, cells


_SCHEMA_VALIDATORS: dict = {}


def _valid_by_schema(text: str, raw: dict) -> bool:
    """Whether the notebook passes nbformat's JSON schema for its version, checked with
    fastjsonschema (importing nbformat costs seconds). False also means "not checked here":
    the caller asks nbformat, which knows every version and words the errors well."""
    import importlib.util

    version, minor = raw.get("nbformat"), raw.get("nbformat_minor")
    spec = importlib.util.find_spec("nbformat")
    if spec is None or not spec.submodule_search_locations or type(minor) is not int:
        return False
    folder = Path(list(spec.submodule_search_locations)[0]) / f"v{version}"
    schema = folder / (f"nbformat.v4.{minor}.schema.json" if version == 4 else "nbformat.v3.schema.json")
    if not schema.is_file() or (version == 3 and minor != 0):
        return False
    try:
        import fastjsonschema
    except ImportError:
        return False
    check = _SCHEMA_VALIDATORS.get(schema)
    if check is None:
        schema_json = json.loads(schema.read_text("utf-8"))
        check = _SCHEMA_VALIDATORS[schema] = fastjsonschema.compile(schema_json, use_default=False)
    try:
        check(raw)
    except fastjsonschema.JsonSchemaException:
        return False
    except RecursionError:
        return False
    return True


def _validate_with_nbformat(text: str, raw: dict, version: int, display: str) -> None:
    """nbformat's own validation; a one-line error naming the cell when it fails."""
    import warnings

    import nbformat

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            # a second parse: nbformat may repair (change) what it validates
            nbformat.validate(json.loads(text))
    except Exception as exc:  # nbformat.ValidationError and friends
        where = display
        path = list(getattr(exc, "absolute_path", None) or [])
        if version == 3 and len(path) >= 4 and path[0] == "worksheets" and path[2] == "cells":
            path = ["cells", sum(len(w["cells"]) for w in raw["worksheets"][: path[1]]) + path[3]]
        if len(path) >= 2 and path[0] == "cells" and isinstance(path[1], int):
            where = f"{display} cell {path[1] + 1}"
        raise CliError(f"error: {where}: invalid notebook: {_first_line(exc)}") from None


def _first_line(exc: BaseException) -> str:
    text = str(getattr(exc, "message", None) or exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


# --------------------------------------------------------------------------- porting


def _split_cell_magic(source: str) -> tuple[str, str, Optional[str]]:
    """(``%%magic`` line with its newline or "", body, magic name or None)."""
    stripped = source.lstrip("\n")
    if not stripped.startswith("%%"):
        return "", source, None
    lead = source[: len(source) - len(stripped)]
    first, nl, body = stripped.partition("\n")
    name = first[2:].split(None, 1)[0] if first[2:].strip() else ""
    return lead + first + nl, body, name


# one copy of the line-end handling: the engine's (``port()`` reads cells the same way)
from msmagic.engine.line_ends import lf as _lf, restore_line_ends as _restore_line_ends  # noqa: E402


def _port_text(text: str, session, where: str):
    """(ported text in *text*'s line ends, result or None, line offset, cell magic not ported).

    The text is ported with LF line ends; it comes back unchanged (the same string) when
    the port changed nothing.
    """
    from msmagic.engine.pipeline import port
    from msmagic.errors import PortError, PortSyntaxError

    source = _lf(text)
    head, body, magic = _split_cell_magic(source)
    if magic is not None and magic not in PYTHON_CELL_MAGICS:
        return text, None, 0, magic
    offset = head.count("\n")
    try:
        result = port(body, session=session)
    except PortSyntaxError as exc:
        raise CellSyntaxError(where, exc.moved(offset)) from None
    except PortError as exc:  # valid input past msmagic's limits, or a port that does not parse
        raise CliError(f"error: {where}: {_first_line(exc)}") from None
    except RecursionError:
        raise CliError(f"error: {where}: nested too deeply for msmagic to port "
                       "(Python's recursion limit was reached); nothing was written") from None
    except MemoryError:
        raise CliError(f"error: {where}: out of memory while porting; nothing was written") from None
    ported = head + result.code
    if ported == source:
        return text, result, offset, None
    return _restore_line_ends(text, ported), result, offset, None


def _port_job(job: FileJob, session_factory, progress: Progress) -> None:
    if job.kind == "py":
        code, result, _, _ = _port_text(job.original, session_factory(), job.display)
        job.cells = [CellReport(1, "code", result)]
        job.output = code
        job.changed = code != job.original
        if job.changed:
            try:
                body = code.encode(job.encoding)
            except UnicodeEncodeError as exc:
                raise CliError(f"error: {job.display}: the ported code has {exc.object[exc.start]!r}, "
                               f"which {job.encoding} (the file's encoding) cannot hold") from None
            job.output_data = (codecs.BOM_UTF8 if job.bom else b"") + body
        else:
            job.output_data = job.data
        progress.step(job.display)
        return

    # A later cell's calls can tell what the parameters of an earlier cell's function
    # are: that function is ported again there (PortResult.revised). A notebook ported
    # at once knows those calls ahead: it is ported a second time with them as hints,
    # so each function is ported right in the cell that defines it.
    hints = None
    for first in (True, False):
        session = session_factory()
        if hints:
            session.call_site_hints = hints
        job.cells = []
        for cell in job.nb_cells:
            cell.new_source = None
        revised = _port_cells(job, session, progress if first else None)
        if not revised or not first:
            break
        hints = session.hints()
    job.changed = any(c.new_source is not None for c in job.nb_cells)
    if job.changed:
        job.output = _edit_notebook_text(job)
        job.output_data = (codecs.BOM_UTF8 if job.bom else b"") + job.output.encode("utf-8")
    else:
        job.output, job.output_data = job.original, job.data


def _port_cells(job: FileJob, session, progress) -> bool:
    """Port a notebook's code cells in order with one session; True when a cell ported a
    function of an earlier cell again."""
    revised = False
    for cell in job.nb_cells:
        if cell.cell_type != "code":
            continue
        where = f"{job.display} cell {cell.index}"
        if cell.language != "python":
            job.cells.append(CellReport(cell.index, "skipped", note=f"{cell.language} cell left as it is"))
        else:
            try:
                code, result, offset, magic = _port_text(cell.source, session, where)
            except CellSyntaxError as exc:
                job.cells.append(CellReport(cell.index, "error", note="not valid Python; left as it is",
                                            error=exc.error))
            else:
                if result is None:
                    job.cells.append(CellReport(cell.index, "skipped", note=f"%%{magic} cell left as it is"))
                else:
                    revised = revised or bool(result.revised)
                    job.cells.append(CellReport(cell.index, "code", result, offset))
                    if code != cell.source:
                        cell.new_source = code
        if progress is not None:
            progress.step(where)
    return revised


# --------------------------------------------------------------------------- notebook JSON edits
#
# A ported notebook is the original text with the changed cells' values replaced in place:
# "source" ("input" in format 3), and "outputs" and "execution_count" ("prompt_number") cleared.
# Everything else (indentation, key order, escapes, other cells) stays byte for byte.

_JSON_WS = re.compile(r"[ \t\n\r]*")
_INDENT = re.compile(r"[ \t]*")
_JSON_DECODER = json.JSONDecoder()


def _ws(text: str, i: int) -> int:
    """The index of the first non-whitespace character from *i* on."""
    return _JSON_WS.match(text, i).end()


def _json_members(text: str, i: int) -> tuple[dict, int]:
    """{key: (start, end) of its value} for the JSON object at *i*, and the object's end."""
    from json.decoder import scanstring

    spans = {}
    i = _ws(text, i + 1)
    if text[i] == "}":
        return spans, i + 1
    while True:
        key, i = scanstring(text, i + 1)
        i = _ws(text, _ws(text, i) + 1)
        end = _JSON_DECODER.raw_decode(text, i)[1]
        spans[key] = (i, end)
        i = _ws(text, end)
        if text[i] == "}":
            return spans, i + 1
        i = _ws(text, i + 1)


def _json_items(text: str, i: int) -> tuple[list, int]:
    """[(start, end)] of the items of the JSON array at *i*, and the array's end."""
    spans = []
    i = _ws(text, i + 1)
    if text[i] == "]":
        return spans, i + 1
    while True:
        end = _JSON_DECODER.raw_decode(text, i)[1]
        spans.append((i, end))
        i = _ws(text, end)
        if text[i] == "]":
            return spans, i + 1
        i = _ws(text, i + 1)


def _cell_spans(text: str, version: int) -> list:
    """(start, end) of every cell object, in notebook order."""
    top, _ = _json_members(text, _ws(text, 0))
    if version == 4:
        return _json_items(text, top["cells"][0])[0]
    spans = []
    for start, _ in _json_items(text, top["worksheets"][0])[0]:
        sheet, _ = _json_members(text, start)
        spans += _json_items(text, sheet["cells"][0])[0]
    return spans


def _line_start(text: str, i: int) -> int:
    """The index where the line holding *i* starts."""
    return max(text.rfind("\n", 0, i), text.rfind("\r", 0, i)) + 1


def _list_layout(text: str, start: int, end: int, items: list, compact: str) -> tuple[str, str, str]:
    """(after "[", between items, before "]") of a JSON array, guessed from its neighbours
    when the array has fewer than two items; *compact* separates items on one line."""
    if len(items) >= 2:
        return text[start + 1:items[0][0]], text[items[0][1]:items[1][0]], text[items[-1][1]:end - 1]
    if items:
        opening, closing = text[start + 1:items[0][0]], text[items[0][1]:end - 1]
        return opening, "," + opening if ("\n" in opening or "\r" in opening) else compact, closing
    # an empty list: indent one level more than the line that holds it
    line = _line_start(text, start)
    base = text[line:_INDENT.match(text, line).end()]
    top = _ws(text, 0) + 1
    first = _ws(text, top)
    lead = text[top:first]
    if "\n" not in lead and "\r" not in lead:
        return "", compact, ""
    newline = "\r\n" if "\r\n" in lead else ("\r" if "\r" in lead and "\n" not in lead else "\n")
    unit = lead.lstrip("\r\n") or " "
    return newline + base + unit, "," + newline + base + unit, newline + base


def _source_json(text: str, span: tuple, new: str, ensure_ascii: bool,
                 compact: str = ", ") -> tuple[str, object]:
    """(JSON text, value) of a cell's new source in the form and layout of the old one;
    *compact* is the separator between items of a list written on one line."""
    start, end = span
    if text[start] == '"':
        return json.dumps(new, ensure_ascii=ensure_ascii), new
    items, _ = _json_items(text, start)
    known = {}
    for a, b in items:
        known.setdefault(json.loads(text[a:b]), text[a:b])
    lines = _split_keep_lf(new)
    if not lines:
        return "[]", []
    opening, between, closing = _list_layout(text, start, end, items, compact)
    parts = [known.get(line) or json.dumps(line, ensure_ascii=ensure_ascii) for line in lines]
    return "[" + opening + between.join(parts) + closing + "]", lines


def _split_keep_lf(text: str) -> list:
    """*text* as a notebook's list of source lines, each but the last ending in "\\n"."""
    lines = text.split("\n")
    return [line + "\n" for line in lines[:-1]] + ([lines[-1]] if lines[-1] else [])


def _edit_notebook_text(job: FileJob) -> str:
    """The notebook's text with the ported cells' values replaced; ``nb_raw`` updated to match."""
    text = job.original
    ensure_ascii = text.isascii() and "\\u" in text
    spans = _cell_spans(text, job.nb_version)
    source_key, count_key = ("source", "execution_count") if job.nb_version == 4 else ("input", "prompt_number")
    edits = []
    for cell in job.nb_cells:
        if cell.new_source is None:
            continue
        members, _ = _json_members(text, spans[cell.index - 1][0])
        first_end = min(members.values())[1]  # the cell has several members: a key follows
        between = text[first_end:text.index('"', first_end)]
        compact = between if "\n" not in between and "\r" not in between else ", "
        new_text, value = _source_json(text, members[source_key], cell.new_source, ensure_ascii, compact)
        edits.append((members[source_key], new_text))
        cell.raw[source_key] = value
        if "outputs" in members and cell.raw["outputs"]:
            edits.append((members["outputs"], "[]"))
            cell.raw["outputs"] = []
        if count_key in members and cell.raw[count_key] is not None:
            edits.append((members[count_key], "null"))
            cell.raw[count_key] = None
    pieces, pos = [], 0
    for (start, end), new_text in sorted(edits):
        pieces += [text[pos:start], new_text]
        pos = end
    pieces.append(text[pos:])
    out = "".join(pieces)
    if json.loads(out) != job.nb_raw:  # pragma: no cover - a guard on the edit above
        raise CliError(f"error: {job.display}: internal error: the edited notebook does not read back "
                       "as intended; nothing was written")
    return out


def _listing(job: FileJob) -> str:
    """A notebook as percent-format text (what ``port NB.ipynb`` prints without -o)."""
    out = [f"# msmagic port of {job.display}"]
    for cell in job.nb_cells:
        out.append("")
        source = cell.new_source if cell.new_source is not None else cell.source
        if cell.cell_type == "code":
            out.append(f"# %% cell {cell.index}")
            out.append(source.rstrip("\n"))
        else:
            out.append(f"# %% [{cell.cell_type}] cell {cell.index}")
            out.extend(("# " + line).rstrip() for line in source.splitlines())
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------- report


def _finding_line(f, offset: int) -> str:
    return f"{f.line + offset}:{f.column} {f.rule_id} {f.api}: {f.reason}"


def _cell_label(job: FileJob, cell: CellReport) -> str:
    return job.display if job.kind == "py" else f"{job.display} cell {cell.index}"


def _error_line(job: FileJob, cell: CellReport) -> str:
    """The one line that reports a cell that is not valid Python: PATH cell N:LINE:COLUMN."""
    e = cell.error
    return f"error: {_cell_label(job, cell)}:{e.line}:{e.column}: {e.message} (cell left as it is)"


def _report_text(jobs: list[FileJob]) -> str:
    from msmagic.render import plural, rule_title

    lines = []
    n_cells = n_edits = n_findings = 0
    n_failed = sum(1 for j in jobs for c in j.cells if c.kind == "error")
    for job in jobs:
        for cell in job.cells:
            label = _cell_label(job, cell)
            if cell.kind == "error":
                lines.append(_error_line(job, cell))
                continue
            if cell.result is None:
                lines.append(f"{label}: skipped ({cell.note})")
                continue
            r = cell.result
            n_cells += 1
            n_edits += len(r.edits)
            n_findings += len(r.unsupported)
            if not r.edits and not r.unsupported:
                lines.append(f"{label}: unchanged")
                continue
            lines.append(
                f"{label}: {plural(len(r.edits), 'edit')}, {plural(len(r.unsupported), 'finding')}"
            )
            for rid in r.rule_ids:
                lines.append(f"  rule {rid} {rule_title(rid, r.edits)}".rstrip())
            for f in sorted(r.unsupported, key=lambda f: (f.line, f.column)):
                lines.append(f"  finding {_finding_line(f, cell.line_offset)}")
    failed = f"{plural(n_failed, 'cell')} not valid Python (left as it is), " if n_failed else ""
    lines.append(
        f"msmagic: {plural(len(jobs), 'file')}, {plural(n_cells, 'cell')} ported, {failed}"
        f"{plural(n_edits, 'edit')}, {plural(n_findings, 'finding')}"
    )
    return "\n".join(lines)


def _report_json(jobs: list[FileJob], include_code: bool) -> dict:
    """The ``--format json`` document. Every cell has the same keys: ``rules``, ``edits``
    (how many, as in earlier versions), ``edit_list`` (each edit's rule, title, api, detail
    and the input and output line ranges, counted in the cell as stored), ``findings`` (line, column, rule, api, reason; the top-level ``findings`` list holds
    the same with ``path`` and ``cell`` first) and,
    for a cell left as it is, ``note`` and ``error``. Totals are under ``counts``."""
    from msmagic.render import rule_title

    files, findings, errors = [], [], []
    counts = {"files": len(jobs), "cells_ported": 0, "cells_skipped": 0, "cells_not_valid_python": 0,
              "edits": 0, "findings": 0}
    for job in jobs:
        cells = []
        for cell in job.cells:
            number = cell.index if job.kind == "ipynb" else None
            entry = {"cell": number, "skipped": cell.result is None, "rules": [], "edits": 0,
                     "edit_list": [], "findings": []}
            r, offset = cell.result, cell.line_offset
            if r is not None:
                counts["cells_ported"] += 1
                entry["rules"] = [{"id": rid, "title": rule_title(rid, r.edits)} for rid in r.rule_ids]
                entry["edit_list"] = [
                    {"rule": e.rule_id, "title": e.title, "api": e.api, "detail": e.detail,
                     "input_lines": [e.before[0] + offset, e.before[1] + offset],
                     "output_lines": [e.after[0] + offset, e.after[1] + offset]}
                    for e in r.edits
                ]
                entry["edits"] = len(r.edits)
                entry["findings"] = [
                    {"line": f.line + offset, "column": f.column, "rule": f.rule_id, "api": f.api,
                     "reason": f.reason}
                    for f in sorted(r.unsupported, key=lambda f: (f.line, f.column))
                ]
                # the run's list says where each one is; a cell's list is inside its cell
                findings += [{"path": job.display, "cell": number, **f} for f in entry["findings"]]
            else:
                entry["note"] = cell.note
            if cell.kind == "error":
                counts["cells_not_valid_python"] += 1
                entry["error"] = {"path": job.display, "cell": number, "line": cell.error.line,
                                  "column": cell.error.column, "message": cell.error.message}
                errors.append(entry["error"])
            elif r is None:
                counts["cells_skipped"] += 1
            counts["edits"] += entry["edits"]
            cells.append(entry)
        item = {"path": job.display, "type": job.kind, "cells": cells}
        if include_code:
            item["code"] = job.output if job.kind == "py" else _listing(job)
        files.append(item)
    counts["findings"] = len(findings)
    return {"files": files, "findings": findings, "errors": errors, "counts": counts}


# --------------------------------------------------------------------------- writing
#
# A run writes its files in two steps. Staging: every file's new content (and with
# --in-place its backup) is written whole to a hidden temporary file next to its target,
# flushed and fsynced; no file the user sees has changed yet. If staging fails (a full disk),
# every temporary file is removed: nothing was written. Commit: file by file, the backup
# takes the first free name (PATH.bak, then PATH.bak.1, PATH.bak.2, ...; an existing backup
# is never overwritten) and the temporary file is renamed over the target (the directory
# fsynced). A crash or kill at any moment leaves each target either the old file or the
# complete new one. A commit that fails midway (rare: a rename refused) stops there, and the
# run names the files written and exits EXIT_WRITTEN_IN_PART.
#
# A temporary file is named .TARGET.PID.HOST.RANDOM.msmagic-tmp: the next run on TARGET
# removes the ones a killed run left (its PID no longer running on this host, HOST being a
# hash of the host name) and never those of a run still going. SIGINT is held off while a
# temporary file is created and registered, while one file is committed and while the
# temporaries are removed, so an interrupt never leaves one behind.

TEMP_SUFFIX = ".msmagic-tmp"
#: the exit status when a commit failed after some files were written (they are named)
EXIT_WRITTEN_IN_PART = 4


class WrittenInPart(CliError):
    """Writing stopped after some files were renamed into place; ``written`` lists them."""

    def __init__(self, message: str, written: list) -> None:
        self.written = written
        super().__init__(message)


@dataclass
class Write:
    target: Path
    data: bytes
    job: FileJob
    in_place: bool = False
    backup: Optional[Path] = None  # set once the backup is written
    mode: int = 0o644  # the permissions the target gets
    staged: Optional[str] = None  # the temporary file holding data
    staged_backup: Optional[str] = None  # the temporary file holding the original (--in-place)
    written: bool = False


def _plan_writes(jobs, src: Path, args) -> list[Write]:
    """Every file to write; checked before anything is written."""
    plan = []
    if args.in_place:
        for job in jobs:
            if job.changed:
                plan.append(Write(Path(os.path.realpath(job.path)), job.output_data, job, in_place=True))
    elif args.output is not None:
        out = Path(args.output)
        if src.is_dir():
            if out.exists() and not out.is_dir():
                raise CliError(f"error: {out}: exists and is not a directory")
            targets = [(out / job.path.relative_to(src), job) for job in jobs]
        else:
            if out.is_dir():
                raise CliError(f"error: {out}: is a directory; -o for a file names a file")
            targets = [(out, jobs[0])]
        inputs = {j.path.resolve() for j in jobs}
        for target, job in targets:
            if target.resolve() in inputs:
                raise CliError(f"error: {target}: -o would overwrite the input; use --in-place")
            if (target.exists() or target.is_symlink()) and not args.force:
                raise CliError(f"error: {target}: exists; pass --force to overwrite it")
            if target.exists() and not target.is_file():
                raise CliError(f"error: {target}: exists and is not a regular file")
            plan.append(Write(target, job.output_data, job))
    return plan


def backup_names(path: Path):
    """PATH.bak, PATH.bak.1, PATH.bak.2, ...: the names a backup of *path* may take, in order."""
    yield path.with_name(path.name + ".bak")
    n = 1
    while True:
        yield path.with_name(f"{path.name}.bak.{n}")
        n += 1


def _default_mode() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def _fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:  # e.g. a platform that cannot open directories
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


_HOST_TAG: list = []


def _host_tag() -> str:
    """8 hex digits naming this host in temporary file names (a PID means nothing elsewhere)."""
    if not _HOST_TAG:
        import hashlib
        import socket

        name = socket.gethostname().encode("utf-8", "surrogateescape")
        _HOST_TAG.append(hashlib.sha1(name).hexdigest()[:8])
    return _HOST_TAG[0]


#: what follows ".TARGET." in the name of a temporary file (mkstemp's random part: [a-z0-9_]{8})
_TEMP_TAIL = re.compile(r"(?P<pid>[0-9]+)\.(?P<host>[0-9a-f]{8})\.[a-z0-9_]{8}" + re.escape(TEMP_SUFFIX))


def _pid_running(pid: int) -> bool:
    """Whether process *pid* exists on this host (True when that cannot be told)."""
    if pid == os.getpid():
        return True
    if os.name != "posix":  # os.kill(pid, 0) is no probe elsewhere
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # e.g. another user's process
        return True
    return True


def remove_stale_temporaries(targets) -> list:
    """Remove the temporary files that runs no longer running left beside *targets*; their paths.

    Only names of the form .TARGET.PID.HOST.RANDOM.msmagic-tmp for one of *targets* are
    considered, and only those this host wrote whose PID is not running; a file of a run
    still going (or of another host) is kept.
    """
    host = _host_tag()
    by_folder: dict = {}
    for target in targets:
        by_folder.setdefault(Path(target).parent, set()).add(Path(target).name)
    removed = []
    for folder, names in sorted(by_folder.items()):
        try:
            entries = sorted(os.listdir(folder))
        except OSError:
            continue
        for entry in entries:
            if not entry.startswith(".") or not entry.endswith(TEMP_SUFFIX):
                continue
            for name in names:
                prefix = f".{name}."
                match = entry.startswith(prefix) and _TEMP_TAIL.fullmatch(entry, len(prefix))
                if match and match["host"] == host and not _pid_running(int(match["pid"])):
                    try:
                        os.unlink(folder / entry)
                    except OSError:
                        break
                    removed.append(folder / entry)
                    break
    return removed


class _SigintDeferred:
    """Hold off SIGINT for a critical section: one arriving inside it is raised at its end.

    Python runs signal handlers between bytecodes, so without this a KeyboardInterrupt can
    land between creating a file and noting its name. Outside the main thread (where no
    handler runs) it does nothing.
    """

    def __enter__(self):
        import signal

        self.received = self.active = False
        try:
            self.previous = signal.signal(signal.SIGINT, self._note)
        except (ValueError, AttributeError):  # not the main thread
            return self
        self.active = True
        if self.previous is None:  # a handler not installed from Python: the default is restored
            self.previous = signal.SIG_DFL
        return self

    def _note(self, signum, frame) -> None:
        self.received = True

    def __exit__(self, *exc_info) -> None:
        import signal

        if not self.active:
            return
        signal.signal(signal.SIGINT, self.previous)
        if self.received and exc_info[0] is None:
            if callable(self.previous):
                self.previous(signal.SIGINT, None)
            elif self.previous == signal.SIG_DFL:
                raise KeyboardInterrupt


class _Temporaries:
    """The temporary files this run has created and not yet renamed or removed."""

    def __init__(self) -> None:
        self.paths: list = []

    def create(self, target: Path, data: bytes, mode: int, times: Optional[tuple] = None) -> str:
        """A new, fsynced temporary file beside *target* holding *data*; its path."""
        prefix = f".{target.name}.{os.getpid()}.{_host_tag()}."
        with _SigintDeferred():
            fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=TEMP_SUFFIX, dir=target.parent)
            self.paths.append(tmp)
            f = os.fdopen(fd, "wb")
        with f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        if times is not None:
            os.utime(tmp, ns=times)
        return tmp

    def renamed(self, tmp: str) -> None:
        self.paths.remove(tmp)

    def remove_all(self) -> None:
        with _SigintDeferred():
            for tmp in self.paths:
                _unlink_quietly(tmp)
            self.paths.clear()


def _unlink_quietly(path) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def _check_unchanged(w: Write) -> os.stat_result:
    """The target's stat; a CliError when it is not the file that was read and ported."""
    now = os.stat(w.target)
    then = w.job.stat
    if (now.st_ino, now.st_size, now.st_mtime_ns) != (then.st_ino, then.st_size, then.st_mtime_ns):
        raise CliError(f"error: {w.job.display}: changed on disk while it was being ported; "
                       "not written (run the port again)")
    return now


def _make_folders(folder: Path, made: list) -> None:
    """Create *folder* and any missing parents, noting each one created in *made*."""
    missing = []
    while not folder.exists() and folder != folder.parent:
        missing.append(folder)
        folder = folder.parent
    for each in reversed(missing):
        try:
            each.mkdir()
        except FileExistsError:
            continue
        made.append(each)


def _stage(w: Write, temps: _Temporaries, made: list) -> None:
    """Write *w*'s content (and its backup) to temporary files beside its target."""
    if w.in_place:
        now = _check_unchanged(w)
        w.mode = stat.S_IMODE(now.st_mode)
        w.staged_backup = temps.create(w.target, w.job.data, w.mode, (now.st_atime_ns, now.st_mtime_ns))
    else:
        _make_folders(w.target.parent, made)
        try:
            w.mode = stat.S_IMODE(w.target.stat().st_mode)
        except OSError:
            w.mode = _default_mode()
    w.staged = temps.create(w.target, w.data, w.mode)


def _claim_backup(tmp: str, path: Path) -> Path:
    """Give the staged backup *tmp* the first backup name of *path* not taken; that name.

    The name is claimed with a hard link, which fails on an existing name, so an existing
    backup is never replaced.
    """
    for name in backup_names(path):
        try:
            os.link(tmp, name)
        except FileExistsError:
            continue
        except OSError:  # no hard links here: check, then rename
            if name.exists() or name.is_symlink():
                continue
            os.replace(tmp, name)
        return name


def _commit(w: Write, temps: _Temporaries) -> None:
    """Put *w*'s staged file in place (its backup first); SIGINT waits until it is done."""
    with _SigintDeferred():
        if w.in_place:
            _check_unchanged(w)
            backup = _claim_backup(w.staged_backup, w.target)
            try:
                _unlink_quietly(w.staged_backup)
                temps.renamed(w.staged_backup)
                _fsync_dir(w.target.parent)  # the backup is there before the target changes
                os.replace(w.staged, w.target)
            except BaseException:
                _unlink_quietly(backup)  # the target is unchanged: no backup of it either
                raise
            w.backup = backup
        else:
            os.replace(w.staged, w.target)
        temps.renamed(w.staged)
        w.written = True
        _fsync_dir(w.target.parent)


def _write(plan: list[Write], stale: list) -> None:
    """Stage every file, then commit them in order; on any failure no temporary file is left.

    *stale* receives the paths of temporary files of earlier, killed runs that were removed.
    A failure before the first commit leaves nothing written (CliError); one after it raises
    WrittenInPart, naming the files written.
    """
    if not plan:
        return
    stale += remove_stale_temporaries(w.target for w in plan)
    temps, made = _Temporaries(), []
    current = None
    try:
        for current in plan:
            _stage(current, temps, made)
        for current in plan:
            _commit(current, temps)
    except OSError as exc:
        _fail(plan, f"error: {current.target}: {exc.strerror or exc}")
    except CliError as exc:
        _fail(plan, str(exc))
    finally:
        temps.remove_all()
        if not any(w.written for w in plan):
            for folder in reversed(made):
                try:
                    folder.rmdir()
                except OSError:
                    pass


def _fail(plan: list[Write], message: str) -> None:
    written = [w for w in plan if w.written]
    if not written:
        raise CliError(message) from None
    raise WrittenInPart(f"{message}; {len(written)} of {len(plan)} files were written (listed above), "
                        "the others are untouched", written) from None


def _written_line(w: Write) -> str:
    shown = w.job.path if w.in_place else w.target
    return f"wrote {shown}" + (f" (backup {w.backup})" if w.backup else "")


# --------------------------------------------------------------------------- commands


def _cmd_port(args, out, err) -> int:
    from msmagic.engine.session import PortSession

    if args.in_place and args.output is not None:
        raise CliError("error: -o and --in-place cannot be combined")
    src = Path(args.path)
    paths, skipped = _collect(src, args.follow_symlinks)
    jobs = [_read(p, str(p)) for p in paths]
    writes_files = args.in_place or args.output is not None
    if src.is_dir() and not writes_files and not args.check and args.format != "json":
        raise CliError(f"error: {src}: is a directory; give -o DIR, --in-place or --check")

    total = sum(j.n_units for j in jobs)
    show = args.progress or (err.isatty() and total >= PROGRESS_MIN_CELLS and not args.quiet)
    progress = Progress(total, show, err)
    try:
        for job in jobs:
            _port_job(job, PortSession, progress)
    finally:
        progress.close()

    plan = _plan_writes(jobs, src, args)
    stale = []
    try:
        _write(plan, stale)
    except (WrittenInPart, KeyboardInterrupt):
        for w in plan:  # exactly what was written, whatever the format or --quiet
            if w.written:
                err.write(_written_line(w) + "\n")
        raise
    unchanged = [j for j in jobs if args.in_place and not j.changed]

    n_findings = sum(len(c.findings) for j in jobs for c in j.cells)
    failed = [_error_line(j, c) for j in jobs for c in j.cells if c.kind == "error"]
    if args.format == "json":
        doc = _report_json(jobs, include_code=not writes_files and not args.check)
        doc["written"] = [str(w.job.path if w.in_place else w.target) for w in plan]
        if args.in_place:
            doc["backups"] = [str(w.backup) for w in plan]
            doc["unchanged"] = [j.display for j in unchanged]
        if skipped:
            doc["skipped"] = [{"path": str(p), "reason": why} for p, why in skipped]
        if stale:
            doc["removed_temporaries"] = [str(p) for p in stale]
        out.write(json.dumps(doc, indent=2) + "\n")
        for line in failed:  # errors are shown on stderr whatever the format
            err.write(line + "\n")
    else:
        if not writes_files and not args.check:
            job = jobs[0]
            out.write(job.output if job.kind == "py" else _listing(job))
        if not args.quiet:
            for path, why in skipped:
                err.write(f"{path}: skipped ({why})\n")
            err.write(_report_text(jobs) + "\n")
            for path in stale:
                err.write(f"removed {path} (a temporary file left by an interrupted run)\n")
            for w in plan:
                err.write(_written_line(w) + "\n")
            for job in unchanged:
                err.write(f"{job.display}: nothing to port; not written, no backup\n")
        else:
            for line in failed:
                err.write(line + "\n")
    if failed:
        return EXIT_CELL_NOT_PORTED
    if args.check and n_findings:
        if args.quiet and args.format != "json":
            err.write(f"msmagic: {n_findings} finding(s)\n")
        return 1
    return 0


def _cmd_rules(args, out, err) -> int:
    from msmagic.rules.registry import all_rules

    rules = all_rules()
    if args.id:
        by_id = {r.id.upper(): r for r in rules}
        rule = by_id.get(args.id.upper())
        if rule is None:
            raise CliError(f"error: no rule {args.id!r}; `python -m msmagic rules` lists them")
        out.write(_rule_full(rule, args.format) + "\n")
        return 0
    if args.format == "json":
        out.write(json.dumps([_rule_dict(r) for r in rules], indent=2) + "\n")
    elif args.format == "markdown":
        lines = ["| id | group | title |", "|---|---|---|"]
        lines += ["| %s | %s | %s |" % (r.id, r.group, r.title.replace("|", "\\|")) for r in rules]
        out.write("\n".join(lines) + "\n")
    else:
        wid = max(len(r.id) for r in rules)
        wgroup = max(len(r.group) for r in rules)
        for r in rules:
            out.write(f"{r.id:<{wid}}  {r.group:<{wgroup}}  {r.title}\n")
        out.write(f"{len(rules)} rules; `python -m msmagic rules ID` shows one in full\n")
    return 0


def _rule_dict(rule) -> dict:
    return {
        "id": rule.id, "title": rule.title, "group": rule.group, "why": rule.why,
        "seed": rule.seed, "example": rule.example, "finding_only": rule.finding_only,
        "installed_note": rule.installed_note, "reference": rule.reference,
        "verified_on": dict(rule.verified_on),
    }


def _rule_full(rule, fmt: str) -> str:
    if fmt == "json":
        return json.dumps(_rule_dict(rule), indent=2)
    if fmt == "markdown":
        from msmagic.docs import _rule_section
        from msmagic.engine.pipeline import port

        return "\n".join(_rule_section(rule, port)).rstrip()
    lines = [f"{rule.id}: {rule.title}", f"group: {rule.group}"]
    if rule.finding_only:
        lines.append("reports a finding; the code is left unchanged")
    lines += ["", "why:", _indent(rule.why)]
    if rule.installed_note:
        lines += ["", "on the installed MindSpore:", _indent(rule.installed_note)]
    lines += ["", "example (PyTorch):", _indent(rule.example.rstrip())]
    lines += ["", f"seed: {rule.seed}"]
    if rule.reference:
        lines.append(f"reference: {rule.reference}")
    verified = ", ".join(f"{k} {v}" for k, v in rule.verified_on.items())
    lines.append(f"verified on: {verified}")
    return "\n".join(lines)


def _indent(text: str) -> str:
    return "\n".join(("    " + l).rstrip() for l in text.splitlines())


# --------------------------------------------------------------------------- entry point


def build_parser() -> argparse.ArgumentParser:
    from msmagic import __version__

    parser = argparse.ArgumentParser(
        prog="python -m msmagic",
        description="Port PyTorch code and notebooks to MindSpore; list msmagic's rules.",
    )
    parser.add_argument("--version", action="version", version=f"msmagic {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser(
        "port", help="port a .py file, .ipynb notebook or directory",
        description=PORT_HELP, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("path", metavar="PATH", help=".py file, .ipynb notebook or directory")
    p.add_argument("-o", "--output", metavar="OUT", help="write the port here (a directory for a directory)")
    p.add_argument("--in-place", action="store_true",
                   help="replace the input, keeping PATH.bak (or PATH.bak.N when that exists)")
    p.add_argument("--force", action="store_true", help="overwrite an existing -o target")
    p.add_argument("--follow-symlinks", action="store_true",
                   help="in a directory, also port what symbolic links to files or directories "
                   "outside it point to (with --in-place: rewrite it there)")
    p.add_argument("--check", action="store_true",
                   help="exit 1 when there are findings; report only unless -o/--in-place")
    p.add_argument("--quiet", action="store_true", help="no report on stderr (errors still shown)")
    p.add_argument("--format", choices=("text", "json"), default="text",
                   help="report format; json goes to stdout (default: text on stderr)")
    p.add_argument("--progress", action="store_true",
                   help="always show the progress bar (default: only on a terminal, "
                   f"from {PROGRESS_MIN_CELLS} cells)")

    r = sub.add_parser("rules", help="list the rule registry or show one rule",
                       description="List msmagic's rules (id, group, title) or show one in full.")
    r.add_argument("id", nargs="?", metavar="ID", help="show this rule in full (e.g. LAY001)")
    r.add_argument("--format", choices=("text", "markdown", "json"), default="text")

    a = sub.add_parser("apis", help="list the API mapping table with its verification status",
                       description="List every PyTorch API msmagic maps: the MindSpore target, status "
                       "(verified / flagged / failing / unverified), the dtypes and argument patterns "
                       "it was verified on, and the rule that explains it.")
    a.add_argument("keys", nargs="*", metavar="API", help="only these APIs (e.g. torch.sort Tensor.add_)")
    a.add_argument("--family", help="only this family (e.g. 'Tensor methods', nn.functional)")
    a.add_argument("--status", choices=("verified", "flagged", "failing", "unverified"))
    a.add_argument("--format", choices=("text", "markdown", "json"), default="text")
    return parser


def _cmd_apis(args, out, err) -> int:
    from msmagic.apis import catalog

    rows = catalog.entries()
    if args.keys:
        known = {e.key for e in rows}
        missing = [k for k in args.keys if k not in known]
        if missing:
            raise CliError(f"msmagic apis: not in the mapping table: {', '.join(missing)}")
        rows = [e for e in rows if e.key in args.keys]
    if args.family:
        if args.family not in catalog.FAMILIES:
            raise CliError(f"msmagic apis: unknown family {args.family!r}; one of: "
                           + ", ".join(catalog.FAMILIES))
        rows = [e for e in rows if e.family == args.family]
    if args.status:
        rows = [e for e in rows if e.status == args.status]
    render = {"text": catalog.render_text, "markdown": catalog.render_markdown,
              "json": catalog.render_json}[args.format]
    out.write(render(rows))
    return 0


def main(argv: Optional[list] = None, stdout=None, stderr=None) -> int:
    if stdout is None:
        _tolerate_unencodable(sys.stdout)
    if stderr is None:
        _tolerate_unencodable(sys.stderr)
    out = stdout or sys.stdout
    err = stderr or sys.stderr
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version, usage errors
        return int(exc.code or 0)
    if args.command is None:
        parser.print_help(err)
        return 2
    try:
        if args.command == "port":
            return _cmd_port(args, out, err)
        if args.command == "apis":
            return _cmd_apis(args, out, err)
        return _cmd_rules(args, out, err)
    except WrittenInPart as exc:
        err.write(f"{exc}\n")
        return EXIT_WRITTEN_IN_PART
    except CliError as exc:
        err.write(f"{exc}\n")
        return 2
    except BrokenPipeError:  # e.g. piped into head
        if stdout is None:
            _silence_stdout()
        return 0
    except KeyboardInterrupt:
        err.write("msmagic: interrupted; files already written are complete, the others untouched\n")
        return 130
    except RecursionError:
        err.write("error: input nested too deeply for msmagic (Python's recursion limit was reached)\n")
        return 2
    except MemoryError:
        err.write("error: out of memory\n")
        return 2
    except Exception as exc:
        if os.environ.get("MSMAGIC_TRACEBACK"):
            raise
        err.write(f"error: internal error in msmagic: {type(exc).__name__}: {_first_line(exc)} "
                  "(set MSMAGIC_TRACEBACK=1 to see the traceback)\n")
        return 2


def _tolerate_unencodable(stream) -> None:
    """Let *stream* write characters its encoding lacks as escapes (an ASCII-only terminal)."""
    try:
        stream.reconfigure(errors="backslashreplace")
    except (AttributeError, ValueError, OSError):
        pass


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush does not fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass
