"""What parity returns: the comparison of a PyTorch cell and its MindSpore port.

Plain data, like :class:`msmagic.result.PortResult`: it imports nothing but the result
classes and the comparison's statuses. The renderers in ``msmagic.render`` turn it into
text, HTML or a widget; they find the parity views through :attr:`ParityReport.render_kind`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Optional

from msmagic.parity_check.compare import MATCH, ONLY_MS, OUTPUT_NAME, Row
from msmagic.result import PortResult

__all__ = ["ParityReport", "StatementError", "Divergence"]


@dataclass
class StatementError:
    """An exception raised by one side, located at the statement that raised it."""

    side: str  # "PyTorch" or "MindSpore"
    statement: int  # index of the top-level input statement
    lines: tuple[int, int]  # lines of that statement in this side's code
    type: str  # exception class name
    message: str
    #: the traceback restricted to the cell's own frames, readable in a notebook
    traceback: str
    exception: Any = field(default=None, repr=False, compare=False)
    #: the port's findings for calls in this statement that it left as PyTorch (no
    #: MindSpore equivalent, or one that is not faithful): a PyTorch function handed the
    #: MindSpore side's tensors is the likely cause of a MindSpore-side error
    unported: list = field(default_factory=list)

    def __str__(self) -> str:
        text = f"{self.side} raised {self.type} at line {self.lines[0]}: {self.message}"
        if self.unported:
            text += f" ({self.cause()})"
        return text

    def cause(self) -> str:
        """One line naming the calls left as PyTorch in the failing statement."""
        if not self.unported:
            return ""
        parts = [f"line {f.line}: {f.api} was left as PyTorch ({f.rule_id}: {f.reason})" for f in self.unported]
        return ("; ".join(parts) + ". MindSpore has no faithful equivalent the port could use, so the "
                "PyTorch call received MindSpore tensors: port this call by hand (or compare your own "
                "code with --against)")


@dataclass
class Divergence:
    """The first statement after which a compared value differs between the sides."""

    statement: int
    before: tuple[int, int]  # input (PyTorch) lines
    after: Optional[tuple[int, int]]  # output (MindSpore) lines
    names: list[str]  # the values that differed there
    rule_ids: list[str]  # rules whose edits touched the statement
    max_abs: Optional[float] = None


@dataclass
class ParityReport:
    #: the port that ran; with --against, a PortResult of the explicit code whose
    #: ``statements`` pair each input statement with the explicit lines it ran with
    port: PortResult
    rows: list[Row] = field(default_factory=list)
    #: values copied from PyTorch to MindSpore instead of compared (random draws,
    #: freshly initialised module parameters), with why
    synchronised: list[str] = field(default_factory=list)
    #: names bridged from the user's namespace into the shadow namespace
    bridged: list[str] = field(default_factory=list)
    first_divergence: Optional[Divergence] = None
    torch_error: Optional[StatementError] = None
    ms_error: Optional[StatementError] = None
    #: seconds: "PyTorch", "MindSpore" (each side's statements), "total"
    timings: dict = field(default_factory=dict)
    device: str = "CPU"
    rtol: float = 1e-5
    atol: float = 1e-5
    notes: list[str] = field(default_factory=list)
    interrupted: bool = False
    #: "PyTorch" or "MindSpore" when that side ran past --timeout
    timed_out: Optional[str] = None
    #: explicit MindSpore code given with --against instead of the port
    against: bool = False
    #: presentation options (``view``), read by the renderers
    options: dict = field(default_factory=dict)
    #: the value of the cell's last expression on the PyTorch side (what the plain cell
    #: would have displayed)
    value: Any = field(default=None, repr=False)
    #: names the cell read that an earlier parity cell left unset or half-updated on the
    #: MindSpore side (it failed, timed out or was interrupted there): name -> that cell
    #: and what happened
    stale: dict = field(default_factory=dict)
    #: names that already differed between the sides when the cell started (an earlier
    #: parity cell diverged) and took PyTorch's values on the MindSpore side first: name
    #: -> the largest difference they had (None where not numeric)
    realigned: dict = field(default_factory=dict)
    #: the layer calls of the statement that diverged (or failed on the MindSpore side),
    #: compared one by one: a :class:`~msmagic.parity_check.layers.LayerReport` whose
    #: ``first`` is the first layer whose output differs while its input matched; None
    #: when that statement called no layer both sides have
    layers: Any = None

    #: which renderers show it (``msmagic.render`` dispatches on this)
    render_kind: ClassVar[str] = "parity"

    @property
    def verdict(self) -> tuple[str, str]:
        """The one status of the run, ``(kind, label)``: kind is ``ok``, ``differs``,
        ``error`` or ``empty``. Computed from the rows the table shows and the first
        divergence, so the title, the table and the divergence box never disagree.
        A value only the MindSpore code binds (a helper the port wrote, such as
        ``grads``) is listed apart and does not count; a PyTorch value the MindSpore side
        lacks is a divergence."""
        if self.interrupted:
            return "error", "interrupted"
        if self.timed_out:
            return "error", "timed out"
        if self.torch_error is not None or self.ms_error is not None:
            return "error", "error"
        compared = self.compared_rows
        if self.first_divergence is not None or any(r.status != MATCH for r in compared):
            return "differs", "differs"
        if not compared:
            return "empty", "nothing compared"
        return "ok", "ok"

    @property
    def ok(self) -> bool:
        """Something was compared, every compared value matches, no statement diverged
        on the way, and neither side failed (``verdict`` is ok)."""
        return self.verdict[0] == "ok"

    @property
    def compared_rows(self) -> list[Row]:
        """The rows of values both sides hold, or PyTorch holds and MindSpore lacks: the
        cell's output first, then plain values, then module parameters."""
        rows = [r for r in self.rows if r.status != ONLY_MS]

        def order(r: Row) -> int:
            if r.name == OUTPUT_NAME:
                return 0
            return 2 if "." in r.name else 1

        return sorted(rows, key=order)

    @property
    def ms_only(self) -> list[str]:
        """Names only the MindSpore code binds (not compared)."""
        return [r.name for r in self.rows if r.status == ONLY_MS]

    @property
    def compared(self) -> int:
        return len(self.compared_rows)

    def row(self, name: str) -> Row:
        for r in self.rows:
            if r.name == name:
                return r
        raise KeyError(f"{name} was not compared; compared: {[r.name for r in self.rows]}")

    def counts(self) -> dict[str, int]:
        """Compared rows per status."""
        out: dict[str, int] = {}
        for r in self.compared_rows:
            out[r.status] = out.get(r.status, 0) + 1
        return out

    def strict_failure(self) -> Optional[str]:
        """Why ``%%ms_parity --strict`` fails the cell, in one line; None when it passes.

        The run passes when neither side failed or ran past ``--timeout`` and nothing
        diverged: every compared value matches, and none differed on the way (a cell
        that binds nothing to compare passes too). Otherwise the line says how many
        statements diverged or failed, and where the first did. The PyTorch side's
        error and Ctrl-C fail the cell with or without ``--strict``."""
        if self.interrupted:
            return "the run was interrupted"
        if self.timed_out:
            return f"the {self.timed_out} side ran past --timeout"
        failed = self.torch_error or self.ms_error
        if failed is not None:
            message = " ".join(str(failed.message).split())
            if len(message) > 200:
                message = message[:199] + "…"
            return (f"1 statement failed on the {failed.side} side (statement {failed.statement + 1}, "
                    f"line {failed.lines[0]}: {failed.type}: {message})")
        if self.verdict[0] != "differs":
            return None
        compared = self.compared_rows
        differing = [r for r in compared if r.status != MATCH]
        statements = {r.statement for r in differing if r.statement >= 0}
        d = self.first_divergence
        if d is not None:
            statements.add(d.statement)
        count = len(statements)
        text = (f"{count} statement{'s' if count != 1 else ''} diverged; "
                f"{len(differing)} of {len(compared)} compared values differ")
        if d is not None:
            text += f"; first after statement {d.statement + 1} (line {d.before[0]}): {', '.join(d.names)}"
        return text

    def summary(self) -> str:
        kind, label = self.verdict
        if self.interrupted:
            return "interrupted"
        if self.timed_out:
            return f"{self.timed_out} side timed out"
        if self.torch_error:
            return f"PyTorch side failed: {self.torch_error.type}"
        if self.ms_error:
            kept = ", ".join(dict.fromkeys(f.api for f in self.ms_error.unported))
            return f"MindSpore side failed: {self.ms_error.type}" + (f" ({kept} left as PyTorch)" if kept else "")
        if kind == "empty":
            return "nothing compared"
        counts = self.counts()
        if kind == "ok":
            return f"all {counts.get(MATCH, 0)} compared values match"
        text = ", ".join(f"{n} {status}" for status, n in counts.items())
        if not any(status != MATCH for status in counts) and self.first_divergence is not None:
            d = self.first_divergence
            text += (f"; but {', '.join(d.names)} differed after statement {d.statement + 1} "
                     "on the way")
        return text

    def __repr__(self) -> str:
        return f"<ParityReport: {self.summary()}>"

    def _repr_mimebundle_(self, include=None, exclude=None):
        # the display edge, as PortResult's: lazy, so no import cycle
        from msmagic.render import mimebundle

        return mimebundle(self, include=include, exclude=exclude)
