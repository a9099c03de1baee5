"""Command line: ``python -m msmagic port PATH`` and ``python -m msmagic rules``.

``main(argv)`` returns the exit status instead of exiting, so tests can call it.
Exit status: 0 done; 1 ``--check`` found something msmagic could not port; 2 usage or
input error (nothing was written).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
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
recursively, in sorted order; hidden directories and __pycache__ are skipped).

Where the ported code goes:
  .py, no -o          the ported code on stdout
  .ipynb, no -o       a readable listing on stdout in "percent" format: one
                      "# %% cell N" block per code cell; markdown and raw cells as
                      comments. Give -o to get a notebook.
  directory, no -o    not allowed: give -o DIR, --in-place or --check
  -o OUT              a file (for a directory: a mirrored directory tree)
  --in-place          each input is overwritten after its original is copied to
                      PATH.bak; refused when PATH.bak exists (unless --force)
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
--force. If any input cannot be read or any cell is not valid Python, a one-line error
names the file and cell, nothing is written, and the exit status is 2.

Exit status: 0 ok; 1 with --check when there are findings; 2 errors."""


class CliError(Exception):
    """A one-line error; the message names the file (and cell)."""


# --------------------------------------------------------------------------- model


@dataclass
class CellReport:
    index: int  # 1-based, counting every cell of the notebook
    kind: str  # "code" (ported), "skipped" (a non-Python cell magic)
    result: object = None  # PortResult
    line_offset: int = 0  # lines before the ported body (a %% magic line)
    note: str = ""

    @property
    def findings(self):
        return list(self.result.unsupported) if self.result is not None else []


@dataclass
class FileJob:
    path: Path
    display: str
    kind: str  # "py" or "ipynb"
    original: str = ""
    notebook: object = None
    cells: list = field(default_factory=list)  # CellReport
    output: str = ""  # the ported file's text

    @property
    def n_units(self) -> int:
        if self.kind == "py":
            return 1
        return sum(1 for c in self.notebook.cells if c.cell_type == "code")

    @property
    def changed(self) -> bool:
        return self.output != self.original


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


def _collect(path: Path) -> list[Path]:
    if not path.exists():
        raise CliError(f"error: {path}: no such file or directory")
    if path.is_dir():
        found = []
        for root, dirs, files in os.walk(path):
            dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__pycache__")
            for name in sorted(files):
                if name.endswith(EXTENSIONS) and not name.startswith("."):
                    found.append(Path(root) / name)
        if not found:
            raise CliError(f"error: {path}: no .py or .ipynb files in this directory")
        return sorted(found, key=lambda p: p.relative_to(path).parts)
    if path.suffix not in EXTENSIONS:
        raise CliError(f"error: {path}: unsupported file type {path.suffix or '(none)'!r}; expected .py or .ipynb")
    return [path]


def _read(path: Path, display: str) -> FileJob:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise CliError(f"error: {display}: not UTF-8 text ({exc.reason})") from None
    except OSError as exc:
        raise CliError(f"error: {display}: {exc.strerror or exc}") from None
    if path.suffix == ".py":
        return FileJob(path, display, "py", original=text)
    import nbformat

    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CliError(f"error: {display}: invalid notebook: not JSON ({exc})") from None
    bad = f"error: {display}: invalid notebook:"
    if not isinstance(raw, dict):
        raise CliError(f"{bad} the top level is a JSON {type(raw).__name__}, not an object")
    if not isinstance(raw.get("nbformat"), int):
        raise CliError(f"{bad} no integer 'nbformat' version")
    if raw["nbformat"] >= 4:
        cells = raw.get("cells")
        if not isinstance(cells, list):
            raise CliError(f"{bad} 'cells' is not a list")
        for i, cell in enumerate(cells, start=1):
            if not isinstance(cell, dict) or cell.get("cell_type") not in ("code", "markdown", "raw"):
                raise CliError(f"error: {display} cell {i}: invalid notebook: not a code, markdown or raw cell")
    import warnings

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if raw["nbformat"] >= 4:  # the raw form first: its errors carry a cell path
                import copy

                nbformat.validate(copy.deepcopy(raw))
            nb = nbformat.reads(text, as_version=4)
            nbformat.validate(nb)
    except Exception as exc:  # nbformat.ValidationError and friends
        where = display
        path = list(getattr(exc, "absolute_path", None) or [])
        if len(path) >= 2 and path[0] == "cells" and isinstance(path[1], int):
            where = f"{display} cell {path[1] + 1}"
        raise CliError(f"error: {where}: invalid notebook: {_first_line(exc)}") from None
    return FileJob(path, display, "ipynb", original=text, notebook=nb)


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


def _port_cell(source: str, session, where: str) -> tuple[str, object, int, Optional[str]]:
    """(ported source, result or None, line offset, cell magic that was not ported)."""
    from msmagic.engine.pipeline import port
    from msmagic.errors import PortSyntaxError

    head, body, magic = _split_cell_magic(source)
    if magic is not None and magic not in PYTHON_CELL_MAGICS:
        return source, None, 0, magic
    offset = head.count("\n")
    try:
        result = port(body, session=session)
    except PortSyntaxError as exc:
        raise CliError(
            f"error: {where}: line {exc.line + offset}, column {exc.column}: {exc.message}"
        ) from None
    return head + result.code, result, offset, None


def _port_job(job: FileJob, session_factory, progress: Progress) -> None:
    if job.kind == "py":
        code, result, _, _ = _port_cell(job.original, session_factory(), job.display)
        job.cells = [CellReport(1, "code", result)]
        job.output = code
        progress.step(job.display)
        return
    import nbformat

    session = session_factory()
    nb = job.notebook
    for i, cell in enumerate(nb.cells, start=1):
        if cell.cell_type != "code":
            continue
        where = f"{job.display} cell {i}"
        code, result, offset, magic = _port_cell(cell.source, session, where)
        if result is None:
            job.cells.append(CellReport(i, "skipped", note=f"%%{magic} cell left as it is"))
        else:
            job.cells.append(CellReport(i, "code", result, offset))
            if code != cell.source:
                cell.source = code
                cell.outputs = []
                cell.execution_count = None
        progress.step(f"{job.display} cell {i}")
    try:
        nbformat.validate(nb)
    except Exception as exc:  # pragma: no cover - the port only changes sources
        raise CliError(f"error: {job.display}: ported notebook is invalid: {_first_line(exc)}") from None
    job.output = nbformat.writes(nb) + "\n"
    job.notebook = nb


def _listing(job: FileJob) -> str:
    """A notebook as percent-format text (what ``port NB.ipynb`` prints without -o)."""
    out = [f"# msmagic port of {job.display}"]
    for i, cell in enumerate(job.notebook.cells, start=1):
        out.append("")
        if cell.cell_type == "code":
            out.append(f"# %% cell {i}")
            out.append(cell.source.rstrip("\n"))
        else:
            out.append(f"# %% [{cell.cell_type}] cell {i}")
            out.extend(("# " + line).rstrip() for line in cell.source.splitlines())
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------- report


def _finding_line(f, offset: int) -> str:
    return f"{f.line + offset}:{f.column} {f.rule_id} {f.api}: {f.reason}"


def _cell_label(job: FileJob, cell: CellReport) -> str:
    return job.display if job.kind == "py" else f"{job.display} cell {cell.index}"


def _report_text(jobs: list[FileJob]) -> str:
    from msmagic.render import plural, rule_title

    lines = []
    n_cells = n_edits = n_findings = 0
    for job in jobs:
        for cell in job.cells:
            label = _cell_label(job, cell)
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
    lines.append(
        f"msmagic: {plural(len(jobs), 'file')}, {plural(n_cells, 'cell')} ported, "
        f"{plural(n_edits, 'edit')}, {plural(n_findings, 'finding')}"
    )
    return "\n".join(lines)


def _report_json(jobs: list[FileJob], include_code: bool) -> dict:
    from msmagic.render import rule_title

    files = []
    for job in jobs:
        cells = []
        for cell in job.cells:
            entry = {"cell": cell.index if job.kind == "ipynb" else None, "skipped": cell.result is None}
            if cell.result is not None:
                r = cell.result
                entry["rules"] = [{"id": rid, "title": rule_title(rid, r.edits)} for rid in r.rule_ids]
                entry["edits"] = len(r.edits)
                entry["findings"] = [
                    {"line": f.line + cell.line_offset, "column": f.column, "rule": f.rule_id,
                     "api": f.api, "reason": f.reason}
                    for f in r.unsupported
                ]
            else:
                entry["note"] = cell.note
            cells.append(entry)
        item = {"path": job.display, "type": job.kind, "cells": cells}
        if include_code:
            item["code"] = job.output if job.kind == "py" else _listing(job)
        files.append(item)
    total = sum(len(c.findings) for j in jobs for c in j.cells)
    return {"files": files, "findings": total}


# --------------------------------------------------------------------------- writing


def _plan_writes(jobs, src: Path, args) -> list[tuple[Path, str, Optional[Path]]]:
    """(target, text, backup) for every file to write; checked before anything is written."""
    plan = []
    if args.in_place:
        for job in jobs:
            if not job.changed:
                continue
            backup = job.path.with_name(job.path.name + ".bak")
            if backup.exists() and not args.force:
                raise CliError(f"error: {backup}: backup exists; remove it or pass --force")
            plan.append((job.path, job.output, backup))
    elif args.output is not None:
        out = Path(args.output)
        if src.is_dir():
            if out.exists() and not out.is_dir():
                raise CliError(f"error: {out}: exists and is not a directory")
            targets = [(out / job.path.relative_to(src), job.output) for job in jobs]
        else:
            if out.is_dir():
                raise CliError(f"error: {out}: is a directory; -o for a file names a file")
            targets = [(out, jobs[0].output)]
        for target, text in targets:
            if target.resolve() in {j.path.resolve() for j in jobs}:
                raise CliError(f"error: {target}: -o would overwrite the input; use --in-place")
            if target.exists() and not args.force:
                raise CliError(f"error: {target}: exists; pass --force to overwrite it")
            plan.append((target, text, None))
    return plan


def _write(plan) -> None:
    import shutil

    for target, text, backup in plan:
        try:
            if backup is not None:
                shutil.copy2(target, backup)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
        except OSError as exc:
            raise CliError(f"error: {target}: {exc.strerror or exc}") from None


# --------------------------------------------------------------------------- commands


def _cmd_port(args, out, err) -> int:
    from msmagic.engine.session import PortSession

    if args.in_place and args.output is not None:
        raise CliError("error: -o and --in-place cannot be combined")
    src = Path(args.path)
    paths = _collect(src)
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
    _write(plan)

    n_findings = sum(len(c.findings) for j in jobs for c in j.cells)
    if args.format == "json":
        doc = _report_json(jobs, include_code=not writes_files and not args.check)
        doc["written"] = [str(t) for t, _, _ in plan]
        out.write(json.dumps(doc, indent=2) + "\n")
    else:
        if not writes_files and not args.check:
            job = jobs[0]
            out.write(job.output if job.kind == "py" else _listing(job))
        if not args.quiet:
            err.write(_report_text(jobs) + "\n")
            for target, _, backup in plan:
                err.write(f"wrote {target}" + (f" (backup {backup})" if backup else "") + "\n")
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
    p.add_argument("--in-place", action="store_true", help="overwrite the input, keeping PATH.bak")
    p.add_argument("--force", action="store_true", help="overwrite an existing -o target or .bak file")
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
    except CliError as exc:
        err.write(f"{exc}\n")
        return 2
    except BrokenPipeError:  # e.g. piped into head
        return 0
