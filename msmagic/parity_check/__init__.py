"""Parity: run a PyTorch cell and its MindSpore port in lockstep and compare them.

:func:`parity` (``msmagic.parity(source, **options)``) orchestrates five stages, one
module each:

* :mod:`~msmagic.parity_check.plan` -- the steps, from the port's statement plan
  (``PortResult.statements``); the cell is never parsed again;
* :mod:`~msmagic.parity_check.run` -- both sides execute the steps in lockstep (namespaces,
  bridging, devices, time limits, errors);
* :mod:`~msmagic.parity_check.sync` -- fresh modules and random draws are copied from PyTorch
  to MindSpore, through the port's parameter-name maps (with :mod:`.draws` for the draws
  made while a statement runs and Python's and NumPy's random state, :mod:`.gradients`
  for optimizer steps, :mod:`.files` for the files each side writes; :mod:`.lazy` gives
  errors MindSpore raises late to their statement; :mod:`.state` is what the MindSpore
  side keeps across cells);
* :mod:`~msmagic.parity_check.compare` -- what both sides bound is compared;
* :mod:`~msmagic.parity_check.report` -- the :class:`ParityReport`, plain data.

:class:`~msmagic.parity_check.options.ParityOptions` holds the options, validated once, for
the ``%%ms_parity`` magic and this API alike. The PyTorch side runs in ``user_ns`` (the
notebook ends as if the plain cell had run), the MindSpore side in a persistent shadow
namespace (:func:`shadow_namespace`). Importing this package imports nothing else: the
stages load on first use, torch and mindspore when something runs.
"""

from __future__ import annotations

import importlib
import re
import time
from typing import Optional

__all__ = [
    "parity",
    "run_pair",
    "shadow_namespace",
    "available_devices",
    "ParityOptions",
    "OptionError",
    "ParityReport",
    "Divergence",
    "StatementError",
    "ParityDeviceError",
    "PairRun",
    "Row",
    "MATCH",
    "DIFFERS",
    "ONLY_TORCH",
    "ONLY_MS",
    "NOT_COMPARABLE",
    "DEVICES",
    "to_numpy",
    "to_mindspore",
    "ms_name_for",
    "sync_module",
]

#: public name -> the stage module defining it (loaded on first access)
_EXPORTS = {
    "ParityOptions": "options", "OptionError": "options", "DEVICES": "options",
    "Step": "plan", "plan_steps": "plan", "plan_against": "plan",
    "PairRun": "run", "run_pair": "run", "execute": "run", "shadow_namespace": "run",
    "available_devices": "run", "ParityDeviceError": "run",
    "ms_name_for": "sync", "sync_module": "sync",
    "Row": "compare", "MATCH": "compare", "DIFFERS": "compare", "ONLY_TORCH": "compare",
    "ONLY_MS": "compare", "NOT_COMPARABLE": "compare", "OUTPUT_NAME": "compare",
    "to_numpy": "compare", "to_mindspore": "compare", "compare_values": "compare",
    "compare_name": "compare",
    "ParityReport": "report", "Divergence": "report", "StatementError": "report",
}


def __getattr__(name: str):
    stage = _EXPORTS.get(name)
    if stage is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{stage}"), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_EXPORTS))


def parity(
    source: str,
    options=None,
    *,
    user_ns: Optional[dict] = None,
    shadow: Optional[dict] = None,
    session=None,
    progress="auto",
    **values,
):
    """Port ``source``, run both versions in lockstep and compare; a :class:`ParityReport`.

    ``options``: a :class:`ParityOptions`; ``values`` (``device``, ``rtol``, ``atol``,
    ``seed``, ``timeout``, ``sync``, ``against``) are validated into one, on top of it.
    ``user_ns``: the PyTorch side's namespace (default: a fresh one); ``shadow``: the
    MindSpore side's (default: :func:`shadow_namespace`); ``session``: the PortSession
    of the earlier cells. Raises :class:`~msmagic.parity_check.options.OptionError` (a
    ValueError) for a bad option, :class:`msmagic.PortSyntaxError` for a cell or
    ``against`` code that is not Python and :class:`ParityDeviceError` for a device
    that is not available. An exception either side raises (SystemExit and Ctrl-C's
    KeyboardInterrupt included) is not raised here: the run stops and the report holds
    it (``torch_error``, ``ms_error``, ``interrupted``). Python's SIGINT handler is in
    place again when this returns (see :mod:`msmagic.signals`).

    ``progress``: ``"auto"`` shows statement k of n, the side running and the time spent
    (a line updated in place in a Jupyter kernel, or on a terminal's stderr); None shows
    nothing; a callable ``progress(k, n, stage, step)`` is called instead.
    """
    import msmagic
    from msmagic.parity_check import run as R
    from msmagic.parity_check.options import ParityOptions
    from msmagic.parity_check.plan import plan_against, plan_steps
    from msmagic.parity_check.state import shadow_state, stale_note
    from msmagic.signals import interrupts_from_mindspore, restore_sigint

    started = time.perf_counter()
    opts = ParityOptions.create(options, **values)
    if not isinstance(source, str):
        raise TypeError("parity() takes the cell's source as a str")
    # plan
    port = msmagic.port(source, session=session)
    ported = time.perf_counter()
    imports = _import_frameworks()
    shown_progress = None
    if progress is not None and progress != "auto" and not callable(progress):
        raise TypeError("progress must be 'auto', None or a callable progress(k, n, stage, step)")
    if progress == "auto":
        from msmagic.parity_check.progress import default_progress

        progress = shown_progress = default_progress()
    against_plan = plan_against(opts.against) if opts.against is not None else None
    # Ctrl-C while MindSpore executes reaches Python as SIGTERM from MindSpore's handler
    with interrupts_from_mindspore():
        try:
            R.use_device(opts.device)
            if opts.seed is not None:
                R.seed_all(opts.seed)
            user_ns = user_ns if user_ns is not None else {"__name__": "__main__"}
            shadow = shadow if shadow is not None else R.shadow_namespace()
            # the module names a notebook cell runs with (``if __name__ == "__main__":``)
            R.main_module_names(shadow, user_ns)
            steps = plan_steps(source, port, opts.against, against_plan)
            filenames = R.filenames_for_run(source, opts.against if opts.against is not None else port.code)
            # run, synchronising and comparing after each step
            if session is not None:
                R.import_earlier_modules(session, shadow)
            state = shadow_state(shadow)
            stale = state.stale_inputs(steps)
            bridged, notes = R.bridge(steps, user_ns, shadow, stale)
            realigned = R.realign(steps, user_ns, shadow, port, opts.rtol, opts.atol, skip=stale) \
                if opts.sync else {}
            if realigned:
                notes.append(R.realign_note(realigned))
            if opts.against is None:
                notes = notes + _define_revised(port, shadow)
            restore = R.torch_default_device(opts.device)
            try:
                run = R.execute(
                    # random draws are a property of the PyTorch statements: synchronised with
                    # explicit MindSpore code too (statements are paired in order)
                    steps, user_ns, shadow, port=port,
                    sync=opts.sync, layers=opts.layers, rtol=opts.rtol, atol=opts.atol, timeout=opts.timeout,
                    each_step=True, keep_output=True, filenames=filenames, progress=progress,
                    skip_unchanged_copies=True, files_apart=True,
                )
            finally:
                restore()
            state.after_run(run, steps, user_ns, shadow)
        finally:
            # MindSpore's worker threads install a native SIGINT handler that ends the
            # process on Ctrl-C: Ctrl-C after the run is a KeyboardInterrupt again
            restore_sigint()
            if shown_progress is not None:
                shown_progress.stop()
    if stale:
        notes.append(stale_note(stale, bridged))
    report = _report(source, opts, port, steps, run, bridged, notes, filenames, started,
                     port_seconds=ported - started, import_seconds=imports)
    report.stale = {name: str(why) for name, why in stale.items()}
    report.realigned = realigned
    if shown_progress is not None:
        shown_progress.finish(f"msmagic parity: ran {len(steps)} statements on each side in "
                              f"{report.timings['total']:.1f} s (report below)")
    return report


def _define_revised(port, shadow: dict) -> list:
    """Run, on the MindSpore side, the functions of earlier cells that the port ported
    again with what this cell's calls pass them (``PortResult.revised``); a note for the
    report."""
    if not port.revised:
        return []
    names = []
    for rev in port.revised:
        exec(compile(rev.result.code, f"<msmagic: {rev.name} ported again>", "exec"), shadow)  # noqa: S102
        kinds = ", ".join(f"{p}: {k}" for p, k in sorted(rev.kinds.items()))
        names.append(f"{rev.name}() ({kinds})" if kinds else f"{rev.name}()")
    return ["Ported again for what this cell passes them, and defined anew on the MindSpore side: "
            + "; ".join(names) + "."]


def _timings(run, started, port_seconds, import_seconds) -> dict:
    """Where the run's time went; the parts add up to ``total`` (``other``: planning,
    bridging names, building the report)."""
    total = time.perf_counter() - started
    parts = {
        "imports": import_seconds,
        "port": port_seconds,
        "PyTorch": run.timings["torch"],
        "MindSpore": run.timings["mindspore"],
        "sync and compare": run.timings.get("compare", 0.0),
    }
    parts["other"] = max(total - sum(parts.values()), 0.0)
    parts["total"] = total
    return parts


def _import_frameworks() -> float:
    """Import torch and mindspore when this process has not yet (seconds spent): the
    first import takes seconds, and the report says so instead of adding it to a side.
    Ctrl-C during the imports takes effect when they are done: an import of MindSpore
    cut in the middle leaves a half-initialised module (and a script that then exits
    aborts while MindSpore's threads start)."""
    import signal
    import sys
    import threading

    missing = [name for name in ("torch", "mindspore") if name not in sys.modules]
    if not missing:
        return 0.0
    t0 = time.perf_counter()
    pressed: list = []
    defer = threading.current_thread() is threading.main_thread()
    if defer:
        previous = signal.getsignal(signal.SIGINT)
        signal.signal(signal.SIGINT, lambda *_: pressed.append(True))
    try:
        for name in missing:
            importlib.import_module(name)
    finally:
        if defer:
            signal.signal(signal.SIGINT, previous if previous is not None else signal.default_int_handler)
    if pressed:
        raise KeyboardInterrupt()
    return time.perf_counter() - t0


def _report(source, opts, port, steps, run, bridged, notes, filenames, started,
            port_seconds=0.0, import_seconds=0.0):
    """The ParityReport of a run."""
    from msmagic.parity_check.report import Divergence, ParityReport, StatementError
    from msmagic.parity_check.run import readable_traceback
    from msmagic.result import PortResult, Statement

    shown = port
    if opts.against is not None:
        # the explicit code's own plan: each input statement with the lines it ran with
        shown = PortResult(
            source=source, code=opts.against,
            notes=["Compared against explicit MindSpore code (--against)."],
            statements=[
                Statement(s.index, s.torch_lines, s.ms_lines, binds=tuple(s.bound), reads=s.names,
                          expression=s.expression, tags=s.tags)
                for s in steps if s.text
            ],
            module_params=dict(port.module_params),
            options={},
        )
    report = ParityReport(
        port=shown,
        rows=run.rows,
        synchronised=[f"{n}: {run.sync_reasons.get(n, 'copied')}" for n in run.synchronised],
        bridged=bridged,
        timings=_timings(run, started, port_seconds, import_seconds),
        device=opts.device,
        rtol=opts.rtol,
        atol=opts.atol,
        notes=notes + run.notes,
        interrupted=run.interrupted,
        timed_out=run.timed_out,
        against=opts.against is not None,
        options={},
        value=run.value,
    )
    if run.first_divergence is not None:
        index, rows = run.first_divergence
        step = steps[index]
        rule_ids = []
        if opts.against is None:
            rule_ids = list(dict.fromkeys(e.rule_id for e in port.edits if e.statement == index))
        abs_values = [r.max_abs for r in rows if r.max_abs is not None]
        report.first_divergence = Divergence(
            statement=index,
            before=step.torch_lines,
            after=step.ms_lines,
            names=[r.name for r in rows],
            rule_ids=rule_ids,
            max_abs=max(abs_values) if abs_values else None,
        )

    report.layers = _layer_report(run, report, port, opts)

    def error(side, exc, step, filename):
        lines = step.torch_lines if side == "PyTorch" else (step.ms_lines or step.torch_lines)
        text = str(exc).strip()
        return StatementError(
            side=side, statement=step.index, lines=lines, type=type(exc).__name__,
            message=text.splitlines()[0] if text else type(exc).__name__,
            traceback=readable_traceback(exc, filename), exception=exc,
        )

    if run.torch_error is not None:
        report.torch_error = error("PyTorch", run.torch_error, steps[run.torch_error_statement], filenames[0])
    if run.ms_error is not None:
        report.ms_error = error("MindSpore", run.ms_error, steps[run.ms_error_statement], filenames[1])
        if not opts.against:
            report.ms_error.unported = left_as_pytorch(port, steps[run.ms_error_statement].index,
                                                       run.ms_error, filenames[1])
    printed = run.ms_stdout.getvalue().rstrip()
    if printed:
        lines = printed.splitlines()
        text = "\n".join(lines[:20]) + (f"\n... ({len(lines) - 20} more lines)" if len(lines) > 20 else "")
        report.notes.append(f"The MindSpore side printed:\n{text}")
    if run.deprecations:
        from msmagic.apis.deprecations import INTERNAL

        report.notes.append(
            "MindSpore 2.10 logged deprecation warnings that were kept off the output: "
            + "; ".join(f"{name}: {INTERNAL.get(name, '')}".rstrip(": ") for name in run.deprecations)
            + ". They come from MindSpore's own internals or from a target with no replacement "
            "that runs on this device, not from your code."
        )
    if run.timed_out:
        report.notes.append(f"The {run.timed_out} side ran past --timeout {opts.timeout:g} s and was stopped.")
    if run.interrupted:
        text = "Interrupted (Ctrl-C): the values compared so far are shown."
        if run.interrupted_step is not None:
            step = next((s for s in steps if s.index == run.interrupted_step), None)
            if step is not None:
                a, b = step.torch_lines
                where = f"line {a}" if a == b else f"lines {a}-{b}"
                text += (f" Statement {step.index + 1} ({where}) was running and had run further on "
                         "one side than on the other: what it binds or uses is not compared.")
        report.notes.append(text)
    if not report.compared_rows and not (run.torch_error or run.ms_error or run.interrupted
                                         or run.timed_out):
        if report.synchronised:
            report.notes.append(
                "Nothing compared: what the cell bound was copied from PyTorch to MindSpore "
                "(listed as synchronised); a later cell that uses it compares the results."
            )
        else:
            report.notes.append(
                "Nothing compared: the cell binds no tensor, array, number or module "
                "(bind a result to a name to compare it)."
            )
    return report


#: rules whose finding means the call was kept as PyTorch (no mapping known, the
#: installed MindSpore's counterpart is not faithful, a Tensor method MindSpore lacks)
_KEPT_RULES = frozenset({"GEN001", "API005", "API007"})


def _traceback_lines(exc, filename: str) -> set:
    """Lines of ``filename`` (the cell's code) that the exception's traceback passed
    through: the failing statement and the function bodies of the cell it called."""
    lines = set()
    tb = getattr(exc, "__traceback__", None)
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == filename:
            lines.add(tb.tb_lineno)
        tb = tb.tb_next
    return lines


def left_as_pytorch(port, statement: int, exc=None, filename: str = "") -> list:
    """The port's findings whose call it kept as PyTorch, in input statement
    ``statement`` or on an output line the exception's traceback passed through (a
    function of the cell that the statement called): a rule that keeps calls, or an
    output line that still calls ``torch`` outside its ``# msmagic:`` comment."""
    out_lines = port.code.splitlines()
    through = _traceback_lines(exc, filename) if exc is not None else set()
    found = []
    for f in port.unsupported:
        if f.statement != statement and f.out_line not in through:
            continue
        kept = f.rule_id in _KEPT_RULES
        if not kept and 0 < f.out_line <= len(out_lines):
            code = out_lines[f.out_line - 1].split("# msmagic:")[0]
            kept = re.search(r"\btorch\.", code) is not None
        if kept and all((g.line, g.api) != (f.line, f.api) for g in found):
            found.append(f)
    return found


def _layer_report(run, report, port, opts):
    """The layer report shown: that of the statement that diverged, else of the one the
    MindSpore side failed in, else of the first statement in which a layer diverged, else
    (nothing diverged) of the last statement that called layers. The
    first divergent layer takes the rules that ported its class (none with --against)."""
    reports = run.layer_reports
    chosen = None
    if report.first_divergence is not None:
        chosen = reports.get(report.first_divergence.statement)
    elif run.ms_error is not None:
        chosen = reports.get(run.ms_error_statement)
    if chosen is None:
        chosen = next((r for _, r in sorted(reports.items()) if r.first is not None), None)
    if chosen is None and report.first_divergence is None and reports:
        chosen = reports[max(reports)]  # all matched: the last statement's layers, for the record
    if chosen is not None and chosen.first is not None and chosen.first.random:
        # the gradients differ because of a draw no replay reaches, not a porting mistake
        for row in report.rows:
            if row.statement == chosen.statement and "(the forward pass or the loss differs)" in row.note:
                row.note = row.note.replace(
                    "(the forward pass or the loss differs)",
                    f"(a random layer, {chosen.first.where}, drew numbers parity cannot replay: "
                    f"{chosen.first.random})")
    if chosen is not None:
        for row in report.rows:
            if row.statement == chosen.statement and row.parameters:
                for layer, leaves in row.parameters:
                    found = chosen.row_for(layer)
                    chosen.gradients.append((layer, leaves, found.status if found is not None else ""))
                break
    if chosen is not None and chosen.first is not None and opts.against is None:
        cls = chosen.first.torch_class
        chosen.first.rule_ids = list(dict.fromkeys(
            e.rule_id for e in port.edits if e.api and e.api.rsplit(".", 1)[-1] == cls))
    return chosen
