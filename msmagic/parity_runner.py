"""``%%ms_parity``: run a PyTorch cell and its MindSpore port, compare what they compute.

The PyTorch side runs in the user's namespace, statement by statement, so the notebook
ends up exactly as if the plain cell had run. The MindSpore side runs in a persistent
shadow namespace (:func:`shadow_namespace`) that carries over between parity cells.
Both run in lockstep (``msmagic.lockstep``): freshly built modules and random draws are
copied from PyTorch to MindSpore, everything else is compared after each statement, so
the report can name the first statement where the two sides diverge and the rules that
rewrote it.
"""

from __future__ import annotations

import builtins
import functools
import linecache
import itertools
import time
import traceback
import types
from typing import Optional, Union

from msmagic.errors import PortError, PortSyntaxError
from msmagic.lockstep import (
    Step,
    _comparable,
    _is_cell,
    _is_torch_module,
    execute,
    plan_steps,
    to_mindspore,
    to_numpy,
)
from msmagic.parity_report import Divergence, ParityReport, StatementError
from msmagic.result import PortResult

DEVICES = ("CPU", "GPU", "Ascend")
_SHADOW: dict = {"__name__": "__msmagic_shadow__"}
_RUNS = itertools.count(1)


class ParityDeviceError(PortError):
    """The requested device is not available here (the message lists what is)."""


def shadow_namespace() -> dict:
    """The MindSpore side's namespace, shared by every ``%%ms_parity`` cell."""
    return _SHADOW


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


def parity(
    source: str,
    *,
    device: Optional[str] = None,
    rtol: float = 1e-5,
    atol: float = 1e-6,
    seed: Optional[int] = None,
    timeout: Optional[float] = None,
    sync: bool = True,
    against: Union[str, PortResult, None] = None,
    user_ns: Optional[dict] = None,
    shadow: Optional[dict] = None,
    session=None,
    view: Optional[str] = None,
) -> ParityReport:
    """Port ``source``, run both versions in lockstep and compare.

    ``against``: explicit MindSpore code (a str, or a PortResult's code) to run instead
    of the port. ``user_ns``: the PyTorch side's namespace (default: a fresh one).
    ``shadow``: the MindSpore side's (default: :func:`shadow_namespace`).
    Raises :class:`PortSyntaxError` for a cell that is not Python and
    :class:`ParityDeviceError` for a device that is not available.
    """
    started = time.perf_counter()
    device = device or "CPU"
    if device not in DEVICES:
        raise ParityDeviceError(f"unknown device {device!r}; choose one of {', '.join(DEVICES)}")
    port_result = _port(source, session)
    against_code = _against_code(against)
    _use_device(device)
    if seed is not None:
        _seed(seed)
    user_ns = user_ns if user_ns is not None else {"__name__": "__main__"}
    shadow = shadow if shadow is not None else shadow_namespace()
    # functions defined in a namespace without __name__ get __module__ None, which
    # MindSpore's autodiff cannot handle
    shadow.setdefault("__name__", "__msmagic_shadow__")
    steps = plan_steps(source, port_result, against_code)
    run_id = next(_RUNS)
    names = (f"<ms_parity {run_id}: PyTorch cell>", f"<ms_parity {run_id}: MindSpore code>")
    _register_source(names[0], source)
    _register_source(names[1], against_code if against_code is not None else port_result.code)
    if session is not None:
        _import_earlier_modules(session, shadow)
    bridged, notes = _bridge(steps, user_ns, shadow)
    restore = _torch_default_device(device)
    try:
        run = execute(
            # random draws are a property of the PyTorch statements: synchronised with
            # explicit MindSpore code too (statements are paired in order)
            steps, user_ns, shadow, port=port_result,
            sync=sync, rtol=rtol, atol=atol, timeout=timeout, each_step=True,
            keep_output=True, filenames=names,
        )
    finally:
        restore()
    shown = port_result
    if against_code is not None:
        shown = PortResult(source=source, code=against_code,
                           notes=["Compared against explicit MindSpore code (--against)."],
                           options={})
    report = ParityReport(
        port=shown,
        rows=run.rows,
        synchronised=[f"{n}: {run.sync_reasons.get(n, 'copied')}" for n in run.synchronised],
        bridged=bridged,
        timings={
            "PyTorch": run.timings["torch"],
            "MindSpore": run.timings["mindspore"],
            "total": time.perf_counter() - started,
        },
        device=device,
        rtol=rtol,
        atol=atol,
        notes=notes,
        interrupted=run.interrupted,
        timed_out=run.timed_out,
        against=against_code is not None,
        options={"view": view} if view else {},
        value=run.value,
    )
    if run.first_divergence is not None:
        index, rows = run.first_divergence
        step = steps[index]
        rule_ids = []
        if against_code is None:
            rule_ids = list(dict.fromkeys(e.rule_id for e in port_result.edits if e.statement == index))
        abs_values = [r.max_abs for r in rows if r.max_abs is not None]
        report.first_divergence = Divergence(
            statement=index,
            before=step.torch_lines,
            after=step.ms_lines,
            names=[r.name for r in rows],
            rule_ids=rule_ids,
            max_abs=max(abs_values) if abs_values else None,
        )
    if run.torch_error is not None:
        report.torch_error = _statement_error("PyTorch", run.torch_error, steps[run.torch_error_statement], names[0])
    if run.ms_error is not None:
        report.ms_error = _statement_error("MindSpore", run.ms_error, steps[run.ms_error_statement], names[1])
    printed = run.ms_stdout.getvalue().rstrip()
    if printed:
        lines = printed.splitlines()
        shown = "\n".join(lines[:20]) + (f"\n... ({len(lines) - 20} more lines)" if len(lines) > 20 else "")
        report.notes.append(f"The MindSpore side printed:\n{shown}")
    if run.timed_out:
        report.notes.append(f"The {run.timed_out} side ran past --timeout {timeout:g} s and was stopped.")
    if run.interrupted:
        report.notes.append("Interrupted (Ctrl-C): the values compared so far are shown.")
    if not report.rows and not (run.torch_error or run.ms_error or run.interrupted or run.timed_out):
        report.notes.append(
            "Nothing compared: the cell binds no tensor, array, number or module "
            "(bind a result to a name to compare it)."
        )
    return report


# ----------------------------------------------------------------------------- set-up


def _port(source: str, session) -> PortResult:
    import msmagic

    if not isinstance(source, str):
        raise TypeError("parity() takes the cell's source as a str")
    return msmagic.port(source, session=session)


def _against_code(against) -> Optional[str]:
    if against is None:
        return None
    code = against.code if hasattr(against, "code") else against
    if not isinstance(code, str):
        raise TypeError("against must be MindSpore source code (str) or a PortResult")
    from msmagic.engine.ipython import mask

    import ast

    try:
        ast.parse(mask(code).text)
    except SyntaxError as err:
        raise PortSyntaxError(f"in the MindSpore code: {err.msg}", err.lineno or 1, err.offset or 1) from None
    return code


def _use_device(device: str) -> None:
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


def _torch_default_device(device: str):
    import torch

    if device != "GPU":
        return lambda: None
    previous = torch.get_default_device()
    torch.set_default_device("cuda")
    return lambda: torch.set_default_device(previous)


def _seed(seed: int) -> None:
    import random

    import mindspore
    import numpy as np
    import torch

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    mindspore.set_seed(seed)


def _import_earlier_modules(session, shadow: dict) -> None:
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


def _bridge(steps: list[Step], user_ns: dict, shadow: dict) -> tuple[list[str], list[str]]:
    """Copy into the shadow namespace the data the cell reads from the user's namespace
    (tensors become MindSpore tensors); name the PyTorch modules that cannot be."""
    bridged: list[str] = []
    notes: list[str] = []
    bound: set[str] = set()
    for step in steps:
        for name in sorted(step.names - bound):
            if name in shadow or name not in user_ns or hasattr(builtins, name):
                continue
            value = user_ns[name]
            if _is_torch_module(value):
                notes.append(
                    f"`{name}` is a PyTorch module from a plain cell: run the cell that "
                    f"defines `{name}` under %%ms_parity so its MindSpore port exists."
                )
                continue
            data = _bridgeable(value)
            if data is _NOT_DATA:
                continue
            shadow[name] = data
            bridged.append(name)
        bound |= set(step.bound)
    return bridged, notes


_NOT_DATA = object()


def _bridgeable(value):
    """The MindSpore-side copy of plain data; _NOT_DATA for anything else."""
    if isinstance(value, (bool, int, float, complex, str, type(None))):
        return value
    if isinstance(value, types.ModuleType):
        # a library a plain cell imported (numpy...); PyTorch itself is never bridged
        return _NOT_DATA if value.__name__.split(".")[0] == "torch" else value
    if to_numpy(value) is not None and not _is_cell(value):
        arr = to_numpy(value)
        if type(value).__module__.startswith("torch"):
            return to_mindspore(value)
        return arr.copy() if hasattr(arr, "copy") else arr
    if isinstance(value, (list, tuple)) and _comparable(value):
        items = [_bridgeable(v) for v in value]
        return _NOT_DATA if any(i is _NOT_DATA for i in items) else type(value)(items)
    if isinstance(value, dict) and _comparable(value):
        items = {k: _bridgeable(v) for k, v in value.items()}
        return _NOT_DATA if any(i is _NOT_DATA for i in items.values()) else items
    return _NOT_DATA


# ----------------------------------------------------------------------------- errors


def _register_source(filename: str, text: str) -> None:
    lines = text.splitlines(keepends=True)
    linecache.cache[filename] = (len(text), None, lines, filename)


def _statement_error(side: str, exc: BaseException, step: Step, filename: str) -> StatementError:
    lines = step.torch_lines if side == "PyTorch" else (step.ms_lines or step.torch_lines)
    return StatementError(
        side=side,
        statement=step.index,
        lines=lines,
        type=type(exc).__name__,
        message=str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__,
        traceback=_readable_traceback(exc, filename),
        exception=exc,
    )


def _readable_traceback(exc: BaseException, filename: str) -> str:
    """The cell's own frames, then only the frame that raised: no library internals."""
    frames = traceback.extract_tb(exc.__traceback__)
    mine = [i for i, f in enumerate(frames) if f.filename == filename]
    if mine:
        keep = frames[mine[0]: mine[-1] + 1]
        if mine[-1] + 1 < len(frames):
            keep.append(frames[-1])
        frames = traceback.StackSummary.from_list(keep)
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


__all__ = [
    "parity",
    "shadow_namespace",
    "available_devices",
    "ParityDeviceError",
    "ParityReport",
    "DEVICES",
]
