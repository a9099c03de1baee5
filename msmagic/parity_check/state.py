"""What the MindSpore side keeps across ``%%ms_parity`` cells besides its names.

:class:`ShadowState` lives in the shadow namespace (under ``__msmagic_state__``, so
``%ms_shadow --clear`` drops it with the names): the MindSpore side's files
(:class:`~msmagic.parity_check.files.ShadowFiles`), the names bound to Python's or NumPy's
random generators (:class:`~msmagic.parity_check.draws.HostRandom` follows them), and the
names an earlier cell left unset or half-updated on the MindSpore side because its
MindSpore side failed, ran past ``--timeout`` or was interrupted while the PyTorch side
went on: a later cell that reads them says so in its report.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from typing import Optional

from msmagic.parity_check.compare import is_cell, is_torch_module
from msmagic.parity_check.files import ShadowFiles

__all__ = ["ShadowState", "shadow_state", "stale_note", "Stale", "STATE_KEY"]

#: the shadow namespace's entry holding its ShadowState
STATE_KEY = "__msmagic_state__"

_RUNS = itertools.count(1)


@dataclass
class Stale:
    """Why a name is unset or half-updated on the MindSpore side."""

    cell: str  # "cell In[5]" or "parity run 3"
    why: str  # "failed there at line 4 (NameError: ...)"

    def __str__(self) -> str:
        return f"{self.cell}, which {self.why}"


class ShadowState:
    def __init__(self) -> None:
        self.files = ShadowFiles()
        self.generators: set[str] = set()
        self.stale: dict[str, Stale] = {}

    def stale_inputs(self, steps) -> dict[str, Stale]:
        """The stale names the cell uses before binding them, in order (a name the
        statement binds itself does not count: the plan does not tell its reads from its
        targets)."""
        if not self.stale:
            return {}
        bound: set[str] = set()
        out: dict[str, Stale] = {}
        for step in steps:
            for name in sorted(step.names - bound - set(step.bound)):
                if name in self.stale and name not in out:
                    out[name] = self.stale[name]
            bound |= set(step.bound)
        return out

    def after_run(self, run, steps, tns: dict, mns: dict) -> None:
        """Forget the names the MindSpore side bound again; remember those this run left
        unset or half-updated there."""
        stopped = ms_stopped(run)
        for step in steps:
            if stopped is not None and step.index >= stopped:
                break
            for name in step.bound:
                self.stale.pop(name, None)
        if stopped is None:
            return
        last = run.torch_error_statement if run.torch_error is not None else (
            run.interrupted_step if run.interrupted_step is not None else None)
        stale = Stale(_cell_label(), _why(run, steps, stopped))
        for step in steps:
            if step.index < stopped or (last is not None and step.index > last):
                continue
            # what the statement bound, and the modules it may have changed in place
            # (trained, initialised)
            names = set(step.bound)
            names |= {n for n in step.names if _module(tns.get(n)) or _module(mns.get(n))}
            if step.index == stopped:  # tensors it may have updated in place (hand-written training)
                names |= {n for n in step.names if _holds_tensors(tns.get(n)) and not _is_tensor(tns.get(n))}
            for name in names:
                if not name.startswith("_") and (name in tns or name in mns):
                    self.stale[name] = stale


def stale_note(stale: dict, bridged: list) -> str:
    """The report's note on the stale names a cell reads."""
    by_cell: dict[str, list[str]] = {}
    for name, why in stale.items():
        by_cell.setdefault(str(why), []).append(name)
    parts = []
    for why, names in by_cell.items():
        shown = ", ".join(f"`{n}`" for n in names[:8]) + (" ..." if len(names) > 8 else "")
        parts.append(f"{shown}: left unset or half-updated on the MindSpore side by {why}")
    text = ("This cell uses names an earlier %%ms_parity cell did not finish on the MindSpore side ("
            + "; ".join(parts) + "): a MindSpore error or difference here may come from there")
    copied = [n for n in stale if n in bridged]
    if copied:
        text += f"; {', '.join(f'`{n}`' for n in copied)} took PyTorch's value"
    return text + ". Run that cell again (under %%ms_parity) once its MindSpore side works."


def ms_stopped(run) -> Optional[int]:
    """The statement where the MindSpore side stopped while the PyTorch side ran it:
    an error, a timeout, or Ctrl-C during it (None: it ran as far as PyTorch)."""
    if run.ms_error is not None:
        return run.ms_error_statement
    if run.ms_timeout_statement is not None:
        return run.ms_timeout_statement
    return run.interrupted_step


def _is_tensor(value) -> bool:
    return type(value).__name__ in ("Tensor", "Parameter") and type(value).__module__.startswith("torch")


def _holds_tensors(value, depth: int = 0) -> bool:
    """Is ``value`` a PyTorch tensor, or a list, tuple, dict or plain object holding one
    (makemore's ``parameters`` list, its hand-written ``Sequential`` of layer objects)? A
    statement that failed on the MindSpore side may have updated those in place on the
    PyTorch side (``p.data += -lr * p.grad``)."""
    if value is None or depth > 2:
        return False
    if _is_tensor(value):
        return True
    if isinstance(value, (list, tuple)):
        return any(_holds_tensors(v, depth + 1) for v in value[:16])
    if isinstance(value, dict):
        return any(_holds_tensors(v, depth + 1) for v in list(value.values())[:16])
    if depth < 2 and hasattr(value, "__dict__") and not isinstance(value, type) and \
            not type(value).__module__.startswith(("torch", "numpy", "mindspore", "builtins", "IPython")):
        return any(_holds_tensors(v, depth + 1) for v in list(vars(value).values())[:16])
    return False


def _module(value) -> bool:
    return value is not None and (is_torch_module(value) or is_cell(value))


def _why(run, steps, stopped: int) -> str:
    step = next((s for s in steps if s.index == stopped), None)
    a, b = step.torch_lines if step is not None else (0, 0)
    where = f"line {a}" if a == b else f"lines {a}-{b}"
    if run.ms_error is not None:
        text = re.sub(r"\x1b\[[0-9;]*m", "", str(run.ms_error)).strip().splitlines()
        return (f"failed on the MindSpore side at {where} "
                f"({type(run.ms_error).__name__}: {text[0][:120] if text else ''})").replace(": )", ")")
    if run.ms_timeout_statement is not None:
        return f"ran past --timeout on the MindSpore side at {where}"
    return f"was interrupted (Ctrl-C) at {where}"


def _cell_label() -> str:
    """``cell In[n]`` for the %%ms_parity cell running in IPython (the last input its
    history holds), else ``parity run k``."""
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover
        shell = None
    else:
        shell = get_ipython()
    inputs = shell.user_ns.get("In") if shell is not None else None
    if isinstance(inputs, list) and len(inputs) > 1 and "ms_parity" in str(inputs[-1]):
        return f"cell In[{len(inputs) - 1}]"
    return f"parity run {next(_RUNS)}"


def shadow_state(shadow: dict) -> ShadowState:
    """The ShadowState of a shadow namespace (created on first use)."""
    state = shadow.get(STATE_KEY)
    if not isinstance(state, ShadowState):
        state = shadow[STATE_KEY] = ShadowState()
    return state
