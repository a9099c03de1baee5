"""Stage: run. Both sides execute the plan's steps in lockstep.

The PyTorch side runs in the user's namespace (or a fresh one), the MindSpore side in a
shadow namespace (:func:`shadow_namespace` persists across ``%%ms_parity`` cells). After
each step :class:`~msmagic.parity_check.sync.Synchroniser` copies fresh modules and random
draws across, and what the step bound is compared to find the first divergence. Also
here: time limits, devices and seeding, bridging plain-cell data into the shadow
namespace, the module names it runs with (``__main__``, as a cell's), and readable errors.
The files each side writes are kept apart (:mod:`~msmagic.parity_check.files`), errors
MindSpore raises late are the statement's (:mod:`~msmagic.parity_check.lazy`), and what
the MindSpore side keeps across cells is a :class:`~msmagic.parity_check.state.ShadowState`.
torch and mindspore are imported inside the functions.
"""

from __future__ import annotations

from ast import PyCF_ALLOW_TOP_LEVEL_AWAIT  # a compile flag: parity parses nothing
import builtins
import contextlib
import functools
import inspect
import io
import itertools
import linecache
import signal
import sys
import threading
import time
import traceback
import types
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Optional

from msmagic.errors import PortError
from msmagic.parity_check.compare import (
    DIFFERS,
    MATCH,
    ONLY_MS,
    ONLY_TORCH,
    OUTPUT_NAME,
    Row,
    comparable,
    compare_name,
    compare_values,
    is_cell,
    is_torch_module,
    put_values,
    to_mindspore,
    to_numpy,
)
from msmagic.parity_check.draws import is_host_generator
from msmagic.parity_check.files import compare_files, files_note
from msmagic.parity_check import loops
from msmagic.parity_check.lazy import deferred_errors, raised_late, settle
from msmagic.parity_check.options import ParityOptions
from msmagic.parity_check.plan import Step, plan_steps
from msmagic.parity_check.state import shadow_state
from msmagic.parity_check.sync import Synchroniser, learn
from msmagic.signals import restore_sigint

__all__ = [
    "PairRun",
    "run_pair",
    "execute",
    "shadow_namespace",
    "available_devices",
    "ParityDeviceError",
    "SideTimeout",
]

_SHADOW: dict = {"__name__": "__main__"}
_RUNS = itertools.count(1)


class ParityDeviceError(PortError):
    """The requested device is not available here (the message lists what is)."""


class SideTimeout(BaseException):
    """A side ran past its time budget (BaseException: user code can't swallow it)."""


def shadow_namespace() -> dict:
    """The MindSpore side's namespace, shared by every ``%%ms_parity`` cell."""
    return _SHADOW


@dataclass
class PairRun:
    port: Any
    torch_ns: dict
    ms_ns: dict
    rows: list[Row] = field(default_factory=list)
    synchronised: list[str] = field(default_factory=list)
    sync_reasons: dict = field(default_factory=dict)
    torch_error: Optional[BaseException] = None
    ms_error: Optional[BaseException] = None
    torch_error_statement: Optional[int] = None
    ms_error_statement: Optional[int] = None
    #: seconds: each side's statements, and synchronising + comparing
    timings: dict = field(default_factory=lambda: {"torch": 0.0, "mindspore": 0.0, "compare": 0.0})
    #: first step after which a compared value differed, with those rows
    first_divergence: Optional[tuple[int, list[Row]]] = None
    interrupted: bool = False
    #: the statement that was running when Ctrl-C came (None: between statements)
    interrupted_step: Optional[int] = None
    timed_out: Optional[str] = None  # "PyTorch" / "MindSpore"
    #: the statement the MindSpore side was running when it ran past --timeout
    ms_timeout_statement: Optional[int] = None
    steps: list = field(default_factory=list)
    #: the pseudo file names the two sides' code runs under (PyTorch's, MindSpore's)
    filenames: tuple = ("<PyTorch cell>", "<MindSpore code>")
    #: the value of the cell's last expression on the PyTorch side
    value: Any = None
    #: what the MindSpore side printed
    ms_stdout: Any = field(default_factory=io.StringIO)
    #: what could not be synchronised (for the report's notes)
    notes: list[str] = field(default_factory=list)
    #: MindSpore's known deprecation messages kept off the output (their names)
    deprecations: list[str] = field(default_factory=list)
    #: side -> {absolute path: the modes the side's code opened it with for writing}: a
    #: cell runs once per side; the MindSpore side's files go to its shadow folder
    #: (:mod:`~msmagic.parity_check.files`)
    written: dict = field(default_factory=lambda: {"torch": {}, "mindspore": {}})
    #: name -> (the loop statement that bound it, its value in the float64 re-run of that
    #: loop's last iteration): a difference within float32 rounding of it is a match
    rounding: dict = field(default_factory=dict)
    #: statement index -> the :class:`~msmagic.parity_check.layers.LayerReport` of the
    #: layer calls it made, compared (statements traced until the first divergence)
    layer_reports: dict = field(default_factory=dict)

    @property
    def error_statement(self) -> Optional[int]:
        return self.torch_error_statement if self.torch_error else self.ms_error_statement

    def row(self, name: str) -> Row:
        for r in self.rows:
            if r.name == name:
                return r
        raise KeyError(f"{name} was not compared; compared: {[r.name for r in self.rows]}")

    def agree(self, *names: str) -> bool:
        return all(self.row(n).status == MATCH for n in names)

    def explain(self) -> str:
        lines = [f"{r.name}: {r.status} max|d|={r.max_abs} rel={r.max_rel} "
                 f"torch={r.torch_shape}/{r.torch_dtype} ms={r.ms_shape}/{r.ms_dtype} {r.note}"
                 for r in self.rows]
        if self.torch_error:
            lines.append(f"torch error: {self.torch_error!r}")
        if self.ms_error:
            lines.append(f"mindspore error: {self.ms_error!r}")
        return "\n".join(lines) + "\n--- MindSpore code ---\n" + (self.port.code if self.port else "")


def run_pair(
    torch_src: str,
    *,
    ms_src: Optional[str] = None,
    names: Optional[list[str]] = None,
    sync: bool = True,
    rtol: float = ParityOptions.rtol,
    atol: float = ParityOptions.atol,
    torch_ns: Optional[dict] = None,
    ms_ns: Optional[dict] = None,
) -> PairRun:
    """Port ``torch_src`` (or take ``ms_src``), run both in lockstep in fresh namespaces
    (or the given ones), compare.

    ``names``: compare only these (default: every name a statement binds, plus the
    parameters and buffers of every module bound by name).
    """
    import msmagic

    options = ParityOptions.create(rtol=rtol, atol=atol, sync=sync, against=ms_src)
    result = msmagic.port(torch_src)
    steps = plan_steps(torch_src, result, options.against)
    tns = torch_ns if torch_ns is not None else {"__name__": "__msmagic_torch__"}
    mns = ms_ns if ms_ns is not None else {"__name__": "__msmagic_mindspore__"}
    run = execute(steps, tns, mns, port=result, sync=options.sync, rtol=options.rtol,
                  atol=options.atol, names=names)
    run.port = result if ms_src is None else None
    return run


# ----------------------------------------------------------------------------- running


@contextmanager
def _alarm(seconds: Optional[float]):
    """Raise SideTimeout in this (main) thread after ``seconds``; no-op elsewhere."""
    if seconds is None or threading.current_thread() is not threading.main_thread():
        yield
        return
    if seconds <= 0:
        raise SideTimeout()

    def _fire(signum, frame):
        raise SideTimeout()

    previous = signal.signal(signal.SIGALRM, _fire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def execute(
    steps: list[Step],
    tns: dict,
    mns: dict,
    *,
    port=None,
    params: Optional[dict] = None,
    sync: bool = True,
    layers: bool = True,
    rtol: float = ParityOptions.rtol,
    atol: float = ParityOptions.atol,
    names: Optional[list[str]] = None,
    timeout: Optional[float] = None,
    each_step: bool = False,
    keep_output: bool = False,
    filenames: tuple[str, str] = ("<PyTorch cell>", "<MindSpore code>"),
    progress=None,
    skip_unchanged_copies: bool = False,
    files_apart: bool = False,
) -> PairRun:
    """Run the steps on both sides in lockstep.

    A PyTorch failure stops both sides (the cell failed, as it would have alone); a
    MindSpore failure stops only the MindSpore side, so the PyTorch namespace ends as the
    plain cell leaves it. ``params``: the parameter-name maps modules are synchronised
    and compared through (default: the port's ``module_params`` and those of the ports
    run before, whose modules may live on in the namespaces). ``timeout``: seconds each
    side may run in all. ``each_step``: compare what each step bound (and the modules it
    mentions) right after it, to find the first divergence. ``keep_output``: a last lone
    expression is evaluated on both sides, compared as ``<cell output>`` and kept as
    ``run.value``. ``progress(k, n, stage, step)``: called before each side of step ``k``
    of ``n`` runs ("PyTorch", "MindSpore") and before its values are compared
    ("comparing"); Ctrl-C while values are compared stops the run too.
    ``skip_unchanged_copies``: a module copied from PyTorch that nothing changed since is
    left out of the final comparison (the report lists it as synchronised); the mapping
    tests keep comparing such copies, which checks the parameter-name maps.
    ``layers``: compare each layer call of the statements that call modules
    (``run.layer_reports``). ``files_apart``: the MindSpore side's file writes go to the shadow namespace's folder
    (:mod:`~msmagic.parity_check.files`); the mapping tests give each side a folder of
    its own instead and check the files the port wrote there.
    """
    run = PairRun(port=port, torch_ns=tns, ms_ns=mns, steps=steps, filenames=filenames)
    if params is None:
        params = learn(getattr(port, "module_params", None) or {})
    syncer = Synchroniser(run, params, enabled=sync, rtol=rtol, atol=atol, state=shadow_state(mns),
                          files_apart=files_apart, layers=layers)
    ms_name = syncer.ms_name
    bound_by: dict[str, int] = {}
    budget = {"torch": timeout, "mindspore": timeout}
    state = {"ms_alive": True, "outputs": {}}
    report_progress = progress or (lambda *_: None)
    try:
        for k, step in enumerate(steps):
            if not _run_step(step, k, steps, run, syncer, tns, mns, filenames, budget, keep_output,
                             each_step, rtol, atol, ms_name, bound_by, state, report_progress):
                break
    except KeyboardInterrupt:  # Ctrl-C while values were synchronised or compared
        run.interrupted = True
    report_progress(len(steps), len(steps), "comparing", None)
    t0 = time.perf_counter()
    try:
        _final_rows(run, steps, syncer, tns, mns, names, bound_by, state["outputs"], rtol, atol,
                    ms_name, each_step, skip_unchanged_copies)
    except KeyboardInterrupt:
        run.interrupted = True
    run.timings["compare"] += time.perf_counter() - t0
    run.layer_reports = syncer.layers.reports
    restore_sigint()
    return run


def _run_step(step, k, steps, run, syncer, tns, mns, filenames, budget, keep_output, each_step,
              rtol, atol, ms_name, bound_by, state, report_progress) -> bool:
    """Run one step on both sides, synchronise and compare what it bound; False when the
    run stops here (a PyTorch failure, a timeout on the PyTorch side, Ctrl-C)."""
    last_expr = keep_output and step is steps[-1] and step.expression
    n = len(steps)
    lock, torch_code, ms_code = _loop_lockstep(step, syncer, rtol, atol)
    if step.torch_code:
        report_progress(k, n, "PyTorch", step)
        syncer.before_torch(step)
        try:
            with syncer.torch_side(step, tns), _hooked(lock, "torch", tns):
                value = _run_side(torch_code, step.torch_lines[0], 0, tns,
                                  filenames[0], run, "torch", budget, last_expr)
        except SideTimeout:
            run.timed_out = "PyTorch"
            return False
        except KeyboardInterrupt:
            run.interrupted, run.interrupted_step = True, step.index
            return False
        except BaseException as exc:  # noqa: BLE001 - reported, not raised
            run.torch_error, run.torch_error_statement = exc, step.index
            return False
        finally:
            syncer.after_torch(step)
        if last_expr and value is not _NO_VALUE:
            state["outputs"]["torch"] = run.value = value
    if step.ms_code and state["ms_alive"]:
        report_progress(k, n, "MindSpore", step)
        first = step.ms_code_start if step.ms_code_start is not None else (step.ms_lines or (1, 1))[0]
        try:
            if lock is not None:  # a boundary that differs is judged against a float64 re-run
                lock.rerun_source = (_rerun_code(step), tns, _rerun_names(step, lock), set(step.bound))
            with syncer.ms_side(step, mns), _hooked(lock, "mindspore", mns):
                value = _run_side(ms_code, first, step.ms_head, mns,
                                  filenames[1], run, "mindspore", budget, last_expr)
            # MindSpore raises some kernel errors when a value is first read: read what
            # the statement changed in place and its value now, so such an error is this
            # statement's (what it bound is read when it is compared, right after, unless
            # nothing is compared after each statement any more)
            compared = each_step and run.first_divergence is None
            read = step.names - set(step.bound) if compared else step.names | set(step.bound)
            t0 = time.perf_counter()
            try:
                settle([mns[m] for m in sorted(read) if m in mns]
                       + ([value] if value is not _NO_VALUE else []))
            finally:  # waiting for MindSpore to compute them is its time
                run.timings["mindspore"] += time.perf_counter() - t0
            if last_expr and value is not _NO_VALUE:
                state["outputs"]["mindspore"] = value
        except SideTimeout:
            run.timed_out, state["ms_alive"] = "MindSpore", False
            run.ms_timeout_statement = step.index
            reset_autograd()
        except KeyboardInterrupt:
            run.interrupted, run.interrupted_step = True, step.index
            reset_autograd()
            return False
        except BaseException as exc:  # noqa: BLE001
            run.ms_error, run.ms_error_statement, state["ms_alive"] = exc, step.index, False
            reset_autograd()
    for name in step.bound:
        bound_by[name] = step.index
    note = lock.note() if lock is not None else None
    if note:
        run.notes.append(note)
    if not state["ms_alive"]:
        return True
    report_progress(k, n, "comparing", step)
    t0 = time.perf_counter()
    try:
        with deferred_errors(run, step.index, state):
            _sync_and_compare(step, run, syncer, tns, mns, each_step, rtol, atol, ms_name, lock)
    finally:
        run.timings["compare"] += time.perf_counter() - t0
    return True


def reset_autograd() -> None:
    """After the MindSpore side stopped inside a function being differentiated
    (``value_and_grad``'s forward raised), MindSpore's executor is left recording: every
    later parity run in the process then fails at its first in-place update ("a leaf
    tensor that requires grad is being used in an inplace operator"). Clear it."""
    import sys

    if "mindspore" not in sys.modules:
        return
    try:
        from mindspore.graph.api import _pynative_executor as executor
    except ImportError:  # pragma: no cover - MindSpore before 2.9 kept it in common.api
        try:
            from mindspore.common.api import _pynative_executor as executor
        except ImportError:
            return
    try:
        if executor.grad_flag():
            executor.clear_res()
    except Exception:  # noqa: BLE001 - nothing to clear
        pass


def _loop_lockstep(step, syncer, rtol, atol):
    """(the :class:`LoopLockstep` of a top-level loop, the PyTorch and the MindSpore code
    to run): the loop's code with its iterable (or condition) wrapped in the hook, when
    synchronising is on and both sides' spans are found; the step's code otherwise."""
    loop = step.loop
    plain = (None, step.torch_code, step.ms_code)
    if loop is None or not syncer.enabled or step.torch_code != step.text:
        return plain
    first = step.ms_code_start if step.ms_code_start is not None else (step.ms_lines or (1, 1))[0]
    torch_code = loops.instrument(step.torch_code, step.torch_lines[0], loop.torch_span, loop.kind)
    ms_code = loops.instrument(step.ms_code, first, loop.ms_span, loop.kind)
    if torch_code is None or ms_code is None:
        return plain
    lock = loops.LoopLockstep(loop.carried, rtol, atol, loop.torch_span[0], mentioned=step.names,
                              ms_name=syncer.ms_name)
    return lock, torch_code, ms_code


def _rerun_names(step, lock) -> list:
    """The names a re-run of one iteration reads from before it: those the loop reads and
    does not bind, and those an iteration hands the next (what the body binds before it
    reads it, a closed file's ``f``, is not copied). The loop of a main block reads what
    the block bound before it (the model, the optimizer): the loop's own needs."""
    if _nested(step):
        return sorted(step.loop.needs)
    return [n for n in sorted(step.names) if n in lock.carried or n not in step.bound]


def _nested(step) -> bool:
    """The step's loop is the loop of its ``if __name__ == "__main__":`` block."""
    loop = step.loop
    return bool(loop is not None and loop.lines and loop.lines[0] != step.torch_lines[0])


def _rerun_code(step) -> Optional[str]:
    """The loop's PyTorch code with its iterable wrapped so that it runs one iteration
    again (:func:`loops.rerun_iteration`); None for a ``while`` loop. The loop of a main
    block runs alone (the block's other statements would build a new model)."""
    loop = step.loop
    if loop is None or loop.kind != "for":
        return None
    code, first, span = step.torch_code, step.torch_lines[0], loop.torch_span
    if _nested(step):
        lines = code.split("\n")[loop.lines[0] - first: loop.lines[1] - first + 1]
        indent = lines[0][:len(lines[0]) - len(lines[0].lstrip())] if lines else ""
        if not lines or any(line.strip() and not line.startswith(indent) for line in lines):
            return None  # a line of the loop indented less (inside a string): not cut out
        code, first = "\n".join(line[len(indent):] for line in lines), loop.lines[0]
        span = (span[0], span[1] - len(indent), span[2], span[3] - len(indent))
    return loops.instrument(code, first, span, loop.kind, method="last_only")


@contextlib.contextmanager
def _hooked(lock, side: str, ns: dict):
    """The loop hook bound in ``ns`` while one side runs the loop (removed after)."""
    if lock is None:
        yield
        return
    lock.start(side, ns)
    ns[loops.HOOK] = lock
    try:
        yield
    finally:
        ns.pop(loops.HOOK, None)


def _sync_and_compare(step, run, syncer, tns, mns, each_step, rtol, atol, ms_name, lock=None) -> None:
    """After both sides ran ``step``: synchronise what it bound, then compare it (and the
    modules it mentions) to find the first divergence. A loop's value that differs is
    judged against the float64 re-run of PyTorch's last iteration (:func:`_rounding`)."""
    failed = syncer.after(step, tns, mns)
    restore_sigint()
    run.rows.extend(failed)
    if each_step and run.first_divergence is None and failed:
        run.first_divergence = (step.index, failed)
    if run.first_divergence is not None:  # later statements start from values that differ
        syncer.layers.enabled = False
    if each_step and run.first_divergence is None:
        watch = {m for m in step.bound if syncer.values.get(m) != step.index}
        watch |= {m for m in step.names if m in syncer.modules}
        rows = []
        for m in sorted(watch):
            if not m.startswith("_"):
                rows.extend(compare_name(m, tns, mns, rtol, atol, step.index, ms_name))
        # a name only the MindSpore code binds (a helper the port wrote) is no divergence;
        # nor is a name a statement the port moved elsewhere (into the forward function
        # of a training step) has not bound yet: the end of the cell judges it
        moved = not step.ms_code.strip()
        bad = [r for r in rows
               if r.status not in (MATCH, ONLY_MS) and not (moved and r.status == ONLY_TORCH)]
        if bad and lock is not None:
            bad = _rounding(run, step, lock, tns, mns, bad, atol)
        if bad:
            run.first_divergence = (step.index, bad)
            syncer.layers.enabled = False
        restore_sigint()


def _rounding(run, step, lock, tns, mns, bad: list, atol: float) -> list:
    """The rows of ``bad`` that still differ once each is judged against PyTorch's last
    iteration of the loop run again (:func:`loops.judge_rounding`): in a loop that began
    its last iteration from PyTorch's values, a value that cancels (a sum of large
    products ending near 0) or an ill-conditioned one differs between two correct float32
    computations by far more than the tolerance; it matches when MindSpore's value is as
    close as float32 rounding lets PyTorch's own be. The rows that pass say so."""
    plain = [r for r in bad if r.status == DIFFERS and r.name in step.bound and r.name in tns and r.name in mns]
    if not plain:
        return bad
    if lock.rerun_source is None or lock.diverged is not None:
        return bad  # (a loop that diverged began its last iteration from MindSpore's own values)
    code, _, names, bound = lock.rerun_source

    def rerun(precision: str):  # each precision runs once: the lockstep keeps it
        return loops.rerun_iteration(lock, code, tns, names, None, bound, precision)

    kept = []
    for r in bad:
        if r in plain:
            verdict, values = loops.judge_by_reruns(tns[r.name], mns[r.name], rerun, lambda box: box.get(r.name),
                                                    "the loop's last iteration", atol)
            run.rounding[r.name] = (step.index, values)
            if _apply_verdict(r, verdict):
                continue
        kept.append(r)
    if len(kept) < len(bad):
        names = ", ".join(sorted(r.name for r in bad if r not in kept))
        run.notes.append(
            f"the loop on line {lock.line}: {names} differed beyond the tolerance after its last iteration, "
            "which began from PyTorch's values; PyTorch's last iteration run again (in float64, and in float32 "
            "from values moved by one rounding step) shows the difference is float32 rounding (within "
            f"{loops.ROUNDING_FACTOR:g} times PyTorch's own rounding): counted as a match")
    return kept


def _judged(row, torch_value, ms_value, values: dict, atol: float) -> bool:
    """Judge a row that differs against the re-runs of the loop's last iteration
    (``values``: precision -> the re-run's value): see :func:`_apply_verdict`."""
    return _apply_verdict(row, loops.judge_rounding(torch_value, ms_value, values, "the loop's last iteration", atol))


def _apply_verdict(row, verdict) -> bool:
    """True (the row now matches, its note says why) when the verdict is float32
    rounding; else the row keeps its status, with the distances in its note when a
    re-run stands for PyTorch's iteration."""
    if verdict is None:
        return False
    within, row.note = verdict
    if within:
        row.status = MATCH
    return within


def _final_rows(run, steps, syncer, tns, mns, names, bound_by, outputs, rtol, atol, ms_name,
                each_step, skip_unchanged_copies) -> None:
    """Compare what the cell left bound (or ``names``), and its output."""
    syncer.finish()
    run.notes.extend(syncer.notes)
    if names is None:
        wanted = [m for m in bound_by if syncer.values.get(m) != bound_by[m]]
        # modules the cell used without rebinding them (a training loop updates
        # ``model`` in place): judged by their parameters after the cell ran
        used = set().union(*(step.names for step in steps)) if steps else set()
        wanted += sorted(
            m for m in used - set(bound_by)
            if m in tns and m in mns and is_torch_module(tns[m]) and is_cell(mns[m])
        )
    else:
        wanted = names
    skipped = set()
    if run.interrupted_step is not None:
        # the interrupted statement ran further on one side than on the other
        step = next((s for s in steps if s.index == run.interrupted_step), None)
        if step is not None:  # what it bound, and the modules it may have trained in place
            skipped = set(step.bound) | {m for m in step.names if is_torch_module(tns.get(m))}
    last = steps[-1].index if steps else -1
    for m in wanted:
        if m.startswith("_") or m in skipped:
            continue
        if skip_unchanged_copies and is_torch_module(tns.get(m)) and syncer.unchanged_copy(m, tns[m]):
            continue  # copied across and not changed since: listed as synchronised
        rows = []
        with deferred_errors(run, bound_by.get(m, last)):
            rows = compare_name(m, tns, mns, rtol, atol, bound_by.get(m, -1), ms_name)
            reference = run.rounding.get(m)
            if reference is not None and reference[0] == bound_by.get(m):
                for r in rows:  # judged against the re-runs of the loop that bound it
                    if r.name == m and r.status == DIFFERS:
                        _judged(r, tns[m], mns[m], reference[1], atol)
            run.rows.extend(rows)
        if m not in bound_by and each_step and run.first_divergence is None and is_torch_module(tns.get(m)):
            # a module the cell used and changed in place (train(net, ...)): a difference
            # found at the end is the last statement's that used it
            users = [step.index for step in steps if m in step.names]
            bad = [r for r in rows if r.status not in (MATCH, ONLY_MS)]
            if bad and users:
                run.first_divergence = (users[-1], bad)
    if "torch" in outputs and "mindspore" in outputs and comparable(outputs["torch"]) and (
            last in syncer.drawn_steps):
        # the cell ends with a random draw (model.fc1.weight.data.normal_()) each side made
        # on its own: what it changed was copied across, its value is not compared
        run.synchronised.append(OUTPUT_NAME)
        run.sync_reasons[OUTPUT_NAME] = "random values drawn by the last statement"
    elif "torch" in outputs and "mindspore" in outputs and comparable(outputs["torch"]):
        with deferred_errors(run, last):
            row = compare_values(OUTPUT_NAME, outputs["torch"], outputs["mindspore"], rtol, atol, last)
            run.rows.append(row)
            if row.status != MATCH and run.first_divergence is None and each_step:
                run.first_divergence = (last, [row])
    if run.written["mindspore"] and syncer.files_apart:
        # the files both sides wrote; a checkpoint's keys are a module's of the cell
        used = set().union(*(step.names for step in steps)) if steps else set()
        modules = [tns[m] for m in sorted(used) if is_torch_module(tns.get(m))]
        files = syncer.state.files
        with deferred_errors(run, last):
            rows, not_compared = compare_files(run.written, files, rtol, atol, modules, ms_name)
            run.rows.extend(rows)
            # a file that differs diverged at the statement that last wrote it
            bad = [r for r in rows if r.status != MATCH and r.statement >= 0]
            if bad and each_step and run.first_divergence is None:
                first = min(r.statement for r in bad)
                run.first_divergence = (first, [r for r in bad if r.statement == first])
            run.notes.append(files_note(run.written, files, [r.name[5:] for r in rows], not_compared))


_NO_VALUE = object()


def _run_side(code: str, first_line: int, head: int, ns: dict, filename: str, run: PairRun,
              side: str, budget: dict, want_value: bool):
    """Execute one step's code on one side, at the line numbers it has in the cell (or
    the port), so tracebacks point there.

    ``want_value``: the step is the cell's last lone expression: the first ``head``
    lines run as statements (imports the port added), the rest is evaluated and its value
    returned (``_NO_VALUE`` when that side's code is not an expression). Top-level
    ``await`` works as in a plain IPython cell (see :func:`_run_code`). MindSpore's SIGINT
    handler is replaced by Python's again afterwards.
    """
    left = budget[side]
    t0 = time.perf_counter()
    # the PyTorch side prints like the plain cell; what the MindSpore side prints is kept
    # for the report instead of appearing twice in the notebook
    out = contextlib.redirect_stdout(run.ms_stdout) if side == "mindspore" else contextlib.nullcontext()
    quiet = _known_deprecations(run) if side == "mindspore" else contextlib.nullcontext()
    module = _as_module(ns) if side == "mindspore" else contextlib.nullcontext()
    pad = "\n" * max(first_line - 1, 0)
    try:
        with _alarm(left), out, quiet, module:
            if want_value:
                lines = code.splitlines(keepends=True)
                prelude, last = "".join(lines[:head]), "".join(lines[head:])
                try:
                    expr = _compile(pad + "\n" * prelude.count("\n") + last, filename, "eval")
                except SyntaxError:
                    expr = None  # this side's code is statements: run it, no value
                if expr is not None:
                    if prelude.strip():
                        _run_code(_compile(pad + prelude, filename, "exec"), ns)
                    return _run_code(expr, ns)
            _run_code(_compile(pad + code, filename, "exec"), ns)
            return _NO_VALUE
    finally:
        spent = time.perf_counter() - t0
        run.timings[side] += spent
        if left is not None:
            budget[side] = left - spent
        restore_sigint()


@contextmanager
def _known_deprecations(run: PairRun):
    """Keep MindSpore's known deprecation messages (see msmagic.apis.deprecations) off
    the output while the MindSpore side runs; their names go to ``run.deprecations``."""
    from msmagic.apis.deprecations import internal_warnings

    with internal_warnings() as names:
        try:
            yield
        finally:
            for name in names:
                if name not in run.deprecations:
                    run.deprecations.append(name)


class _Module:
    """A module whose ``__dict__`` is a namespace (IPython's ``DummyMod`` does the same
    for the notebook's ``__main__``)."""


@contextmanager
def _as_module(ns: dict):
    """While the MindSpore side runs: ``sys.modules[ns["__name__"]]`` is its namespace.
    The shadow namespace is ``__main__`` as a notebook cell's is, and MindSpore's graph
    compiler (``mindspore.jit``, GRAPH_MODE) resolves a function's globals by importing
    its ``__module__``: without this it would find the notebook's PyTorch names."""
    name = ns.get("__name__")
    previous = sys.modules.get(name, _NO_VALUE) if isinstance(name, str) else None
    if previous is None or getattr(previous, "__dict__", None) is ns:
        yield
        return
    module = _Module()
    module.__dict__ = ns
    sys.modules[name] = module
    try:
        yield
    finally:
        if previous is _NO_VALUE:
            sys.modules.pop(name, None)
        else:
            sys.modules[name] = previous


def _compile(source: str, filename: str, mode: str) -> types.CodeType:
    """Compile a step as IPython compiles a cell: top-level ``await`` allowed, and none
    of this module's ``__future__`` imports."""
    return compile(source, filename, mode, flags=PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True)


def _run_code(code: types.CodeType, ns: dict):
    """Run compiled step code in ``ns``; its value for an expression.

    Code with a top-level ``await`` evaluates to a coroutine, which runs to its end here on
    the event loop IPython runs such cells on. Inside a Jupyter kernel that loop's thread
    is already running the kernel's own loop, which cannot be re-entered: the coroutine
    then runs on IPython's loop (or one of msmagic's) while the kernel's loop waits.
    """
    value = eval(code, ns)
    if not code.co_flags & inspect.CO_COROUTINE:
        return value
    import asyncio

    running = asyncio._get_running_loop()
    loop = _event_loop(running)
    task = loop.create_task(value)
    asyncio._set_running_loop(None)
    try:
        return loop.run_until_complete(task)
    finally:
        asyncio._set_running_loop(running)
        if not task.done():  # stopped by --timeout or Ctrl-C: do not resume it later
            task.cancel()


_OWN_LOOP = None


def _event_loop(running):
    """The loop a top-level ``await`` runs on: IPython's, which plain cells use, unless
    that one is the loop running in this thread already."""
    global _OWN_LOOP
    import asyncio

    try:
        from IPython.core.async_helpers import get_asyncio_loop

        loop = get_asyncio_loop()
    except ImportError:
        loop = None
    if loop is None or loop is running or loop.is_closed() or loop.is_running():
        if _OWN_LOOP is None or _OWN_LOOP.is_closed():
            _OWN_LOOP = asyncio.new_event_loop()
        loop = _OWN_LOOP
    return loop


# ----------------------------------------------------------------------------- set-up


@functools.lru_cache(maxsize=1)
def available_devices() -> list[str]:
    """Devices on which both frameworks can run here (probed once per process)."""
    import mindspore.device_context as dc
    import torch

    out = ["CPU"]
    if torch.cuda.is_available() and dc.gpu.is_available():
        out.append("GPU")
    try:
        if dc.ascend.is_available():
            out.append("Ascend")
    except Exception:  # noqa: BLE001 - no Ascend runtime at all
        pass
    return out


def use_device(device: str) -> None:
    import mindspore

    available = ["CPU"] if device == "CPU" else available_devices()
    if device not in available:
        raise ParityDeviceError(
            f"device {device} is not available here; available: {', '.join(available)}"
        )
    current = mindspore.get_current_device()
    target = current[0] if isinstance(current, tuple) else current
    if target != device:
        try:
            mindspore.set_device(device)
        except RuntimeError as err:
            raise ParityDeviceError(
                f"MindSpore already runs on {target} in this process and cannot switch to "
                f"{device}; restart the kernel and run %%ms_parity --device {device} first "
                f"({err})"
            ) from None


def torch_default_device(device: str):
    """Make torch build tensors on ``device``; returns the function that undoes it."""
    import torch

    if device != "GPU":
        return lambda: None
    previous = torch.get_default_device()
    torch.set_default_device("cuda")
    return lambda: torch.set_default_device(previous)


def seed_all(seed: int) -> None:
    import random

    import mindspore
    import numpy as np
    import torch

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    mindspore.set_seed(seed)


#: the module names IPython gives a cell's namespace
MODULE_NAMES = ("__name__", "__doc__", "__package__", "__loader__", "__spec__", "__builtins__")


def main_module_names(shadow: dict, user_ns: dict) -> None:
    """Give the shadow namespace the module names the notebook's has (``__name__`` is
    ``"__main__"``, ``__builtins__``...), so ``if __name__ == "__main__":`` runs there too."""
    for key in MODULE_NAMES:
        if key in user_ns:
            shadow[key] = user_ns[key]
    shadow["__name__"] = "__main__"
    shadow.setdefault("__builtins__", builtins)


def import_earlier_modules(session, shadow: dict) -> None:
    """The port of a later cell uses the MindSpore side of imports that earlier cells
    made (``mindspore``, ``nn``); when those cells ran plainly, not under %%ms_parity,
    the shadow namespace never ran the imports, so make them here."""
    import importlib

    for local, qual in session.mindspore_names.items():
        if local in shadow:
            continue
        try:
            shadow[local] = importlib.import_module(qual)
        except ImportError:
            module, _, name = qual.rpartition(".")
            try:
                shadow[local] = getattr(importlib.import_module(module), name)
            except (ImportError, AttributeError):
                pass  # the cell itself will say what is missing


def bridge(steps: list[Step], user_ns: dict, shadow: dict, stale=()) -> tuple[list[str], list[str]]:
    """Copy into the shadow namespace the data the cell reads from the user's namespace
    (tensors become MindSpore tensors); name the PyTorch modules that cannot be (those in
    ``stale`` come from a parity cell whose MindSpore side failed: its note says so)."""
    bridged: list[str] = []
    notes: list[str] = []
    bound: set[str] = set()
    for step in steps:
        for name in sorted(step.names - bound):
            if name in shadow or name not in user_ns or hasattr(builtins, name):
                continue
            value = user_ns[name]
            if is_torch_module(value):
                if name in stale:
                    continue
                notes.append(
                    f"`{name}` is a PyTorch module from a plain cell: run the cell that "
                    f"defines `{name}` under %%ms_parity so its MindSpore port exists."
                )
                continue
            data = _bridgeable(value, name)
            if data is _NOT_DATA:
                continue
            shadow[name] = data
            bridged.append(name)
        bound |= set(step.bound)
    return bridged, notes


_NOT_DATA = object()


def realign(steps: list[Step], user_ns: dict, shadow: dict, port, rtol: float, atol: float,
            skip=()) -> dict[str, Optional[float]]:
    """Values that already differ between the sides when a cell starts (an earlier
    %%ms_parity cell diverged: a dropout mask, a tolerance that grew over a training loop)
    take PyTorch's values on the MindSpore side, so the cell is checked on its own and an
    earlier divergence does not show again as this cell's. Covers what the cell reads from
    both namespaces: modules (parameters and buffers, through the port's parameter-name
    maps), tensors and arrays (a MindSpore Parameter keeps its identity: an optimizer
    holds it), numbers and lists or dicts of them. ``skip``: names reported otherwise
    (stale ones). Returns name -> the largest difference it had (None: not numeric)."""
    from msmagic.parity_check.compare import DIFFERS, compare_module
    from msmagic.parity_check.sync import ms_name_for, sync_module

    params = learn(getattr(port, "module_params", None) or {})
    done: dict[str, Optional[float]] = {}
    seen: set[str] = set()
    for step in steps:
        for name in sorted(step.names - seen):
            seen.add(name)
            if name in skip or name.startswith("_") or name not in user_ns or name not in shadow:
                continue
            tv, mv = user_ns[name], shadow[name]
            try:
                if is_torch_module(tv) and is_cell(mv):
                    rows = compare_module(name, tv, mv, rtol, atol, -1,
                                          lambda tmod, n: ms_name_for(tmod, n, params))
                    bad = [r for r in rows if r.status == DIFFERS]
                    if bad:
                        sync_module(tv, mv, params)
                        done[name] = max((r.max_abs for r in bad if r.max_abs is not None), default=None)
                    continue
                if is_torch_module(tv) or is_cell(mv) or not comparable(tv) or isinstance(tv, (str, bytes)):
                    continue
                row = compare_values(name, tv, mv, rtol, atol)
                if row.status != DIFFERS:
                    # matched within the tolerance: left as MindSpore computed it (a cell
                    # comparing values with what MindSpore derived from them, bit for bit,
                    # needs the MindSpore side consistent with itself)
                    continue
                if _in_place(tv, mv):
                    done[name] = row.max_abs
                    continue
                copied = _realigned(tv, mv, name)
                if copied is _NOT_DATA:
                    continue
                if copied is not mv:
                    shadow[name] = copied
                if row.status == DIFFERS:
                    done[name] = row.max_abs
            except Exception:  # noqa: BLE001 - a value that cannot be compared stays as it is
                continue
        seen |= set(step.bound)
    return done


def _in_place(tv, mv) -> bool:
    """Give the MindSpore tensor or NumPy array ``mv`` PyTorch's values ``tv`` in place,
    keeping its identity; False when it is neither or the shapes differ."""
    import mindspore
    import numpy as np

    arr = to_numpy(tv)
    if arr is None or not hasattr(arr, "shape"):
        return False
    if isinstance(mv, mindspore.Tensor) and tuple(mv.shape) == tuple(arr.shape):
        put_values(mv, mindspore.Tensor(arr, dtype=mv.dtype))
        return True
    if isinstance(mv, np.ndarray) and mv.shape == arr.shape and mv.flags.writeable and not is_cell(mv):
        mv[...] = arr
        return True
    return False


def _realigned(tv, mv, name: str):
    """PyTorch's value ``tv`` for the MindSpore side, where it held ``mv``. A dict or list
    with the same keys or length keeps its identity and takes the values entry by entry,
    so a state dict of Parameters (what ``load_param_into_net`` takes) stays one."""
    import mindspore

    if isinstance(mv, mindspore.Parameter) and to_numpy(tv) is not None:
        arr = to_numpy(tv)
        if tuple(mv.shape) == tuple(arr.shape):
            put_values(mv, mindspore.Tensor(arr, dtype=mv.dtype))
            return mv
    same_dict = isinstance(tv, dict) and isinstance(mv, dict) and list(tv) == list(mv)
    same_list = isinstance(tv, list) and isinstance(mv, list) and len(tv) == len(mv)
    if same_dict or same_list:
        keys = list(tv) if same_dict else range(len(tv))
        values = [_realigned(tv[k], mv[k], k if isinstance(k, str) else name) for k in keys]
        if any(v is _NOT_DATA for v in values):
            return _NOT_DATA
        for k, v in zip(keys, values):
            if v is not mv[k]:
                mv[k] = v
        return mv
    return _bridgeable(tv, name)


def realign_note(realigned: dict) -> str:
    shown = []
    for name, d in list(realigned.items())[:8]:
        shown.append(f"`{name}`" + (f" (max |d| {d:.3g})" if d is not None else ""))
    more = " ..." if len(realigned) > 8 else ""
    return ("Already different when this cell started (an earlier %%ms_parity cell diverged): "
            + ", ".join(shown) + more + ". The MindSpore side took PyTorch's values for them, so this "
            "cell is compared on its own statements; the earlier cell's report shows where they first differed.")


def _bridgeable(value, name: str = "Parameter"):
    """The MindSpore-side copy of plain data (a torch Parameter becomes a MindSpore
    Parameter named ``name``); _NOT_DATA for anything else."""
    if isinstance(value, (bool, int, float, complex, str, type(None))):
        return value
    if isinstance(value, types.ModuleType):
        # a library a plain cell imported (numpy...); PyTorch itself is never bridged
        return _NOT_DATA if value.__name__.split(".")[0] == "torch" else value
    if is_host_generator(value):
        # a random generator: each side draws from its own copy (in the same state)
        import copy

        return copy.deepcopy(value)
    if to_numpy(value) is not None and not is_cell(value):
        arr = to_numpy(value)
        if type(value).__module__.startswith("torch"):
            return to_mindspore(value, name=name)
        return arr.copy() if hasattr(arr, "copy") else arr
    if isinstance(value, (list, tuple)) and comparable(value):
        items = [_bridgeable(v) for v in value]
        return _NOT_DATA if any(i is _NOT_DATA for i in items) else type(value)(items)
    if isinstance(value, dict) and comparable(value):
        items = {k: _bridgeable(v) for k, v in value.items()}
        return _NOT_DATA if any(i is _NOT_DATA for i in items.values()) else items
    return _NOT_DATA


# ----------------------------------------------------------------------------- errors


def filenames_for_run(torch_source: str, ms_source: str) -> tuple[str, str]:
    """Pseudo file names for this run's two sides, registered with linecache so
    tracebacks show the cell's lines."""
    run_id = next(_RUNS)
    names = (f"<ms_parity {run_id}: PyTorch cell>", f"<ms_parity {run_id}: MindSpore code>")
    for filename, text in zip(names, (torch_source, ms_source)):
        linecache.cache[filename] = (len(text), None, text.splitlines(keepends=True), filename)
    return names


def readable_traceback(exc: BaseException, filename: str) -> str:
    """The cell's own frames, then only the frame that raised: no library internals."""
    frames = traceback.extract_tb(exc.__traceback__)
    mine = [i for i, f in enumerate(frames) if f.filename == filename]
    if mine:
        keep = frames[mine[0]: mine[-1] + 1]
        if mine[-1] + 1 < len(frames):
            keep.append(frames[-1])
        frames = traceback.StackSummary.from_list(keep)
    elif raised_late(exc):
        frames = []  # raised when msmagic read a value after the statement: no frame of it
    text = "".join(traceback.format_list(frames))
    text += "".join(traceback.format_exception_only(type(exc), exc))
    # MindSpore appends long C++ stacks to its messages; keep the first paragraph
    return _trim(text)


def _trim(text: str, limit: int = 60) -> str:
    lines = text.rstrip().splitlines()
    cut = next((i for i, l in enumerate(lines) if l.startswith("----") or "C++ Call Stack" in l), None)
    if cut is not None:
        lines = lines[:cut]
    if len(lines) > limit:
        lines = lines[: limit - 1] + [f"... ({len(lines) - limit + 1} more lines)"]
    return "\n".join(lines)
