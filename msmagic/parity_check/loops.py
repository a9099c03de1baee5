"""Stage: loops. A top-level loop run iteration by iteration in lockstep.

A loop that updates tensors by hand (``w1 -= learning_rate * grad_w1``) or carries a
state from one iteration to the next (``hidden``, a running sum) compounds float32
rounding: two correct programs whose single steps agree to 1e-7 end a hundred
iterations apart by far more than a parity check allows, and the report would blame the
port. So, as an optimizer's steps run on PyTorch's gradients (:mod:`.gradients`), such a
loop runs on the MindSpore side from PyTorch's values: the PyTorch side records the
values of the names an iteration hands the next (the port's ``Loop.carried``) at each
iteration boundary; the MindSpore side, at the same boundary, compares its own values
with them (the difference one iteration made) and continues from PyTorch's. A boundary
whose values differ beyond the tolerance is a real divergence: from there the MindSpore
side runs on its own values, and the report says at which iteration it began.

The boundaries are found without changing the code's lines: the loop's iterable
becomes ``__msmagic_loop__.iterate(<iterable>)`` and a ``while`` loop's condition
``__msmagic_loop__.tick() and (<condition>)`` (spans from the port's plan).
"""

from __future__ import annotations

from typing import Optional

from msmagic.parity_check.compare import (
    MATCH, compare_values, is_cell, is_torch_module, ms_state, put_values, to_numpy, torch_state,
)

__all__ = ["HOOK", "instrument", "LoopLockstep"]

#: the name the instrumented loop calls (left out of comparisons: it starts with "_")
HOOK = "__msmagic_loop__"
#: the most bytes the PyTorch side's recorded iterations may hold (a 40M-parameter model
#: trained for a few iterations fits, as in the gradients' recording)
MAX_BYTES = 1 << 30
#: the most bytes the optimizers' and schedulers' states of all boundaries may hold
#: (Adam's is twice its parameters: as much as the recorded iterations themselves, so a
#: model the recording holds has its optimizer's states too, and every iteration the
#: lockstep judges can be run again); beyond it only the last two boundaries' are kept,
#: enough for the float64 re-run of the last iteration
STEPPER_BYTES = 1 << 30
#: the key of a boundary's record holding the modules' parameters
_MODULES = "\0modules"
#: the key of a boundary's record holding the trainable tensors the loop mentions
_LEAVES = "\0leaves"
#: the key of a boundary's record holding the optimizers' and learning-rate schedulers'
#: states (what a float64 re-run of the iteration starts its optimizer from)
_STEPPERS = "\0steppers"
#: the key of a boundary's record holding the random states (torch, Python, NumPy) the
#: iteration began with: a re-run draws what PyTorch's iteration drew
_RANDOM = "\0random"
#: about what the three random states of one boundary hold
RANDOM_BYTES = 13 * 1024
#: the keys of a boundary's record that are not names
_KEYS = (_MODULES, _LEAVES, _STEPPERS, _RANDOM)
#: an iteration's item not kept (beyond the recording's memory)
_NO_ITEM = object()


def _stepper_kind(v, torch) -> int:
    """1 for a PyTorch optimizer, 2 for a learning-rate scheduler, else 0."""
    optim = getattr(torch, "optim", None) if torch is not None else None
    if optim is None:
        return 0
    if isinstance(v, optim.Optimizer):
        return 1
    return 2 if isinstance(v, getattr(optim.lr_scheduler, "LRScheduler", ())) else 0


def _random_states(torch) -> tuple:
    """The random states a re-run of an iteration starts from: torch's, Python's, NumPy's."""
    import random

    try:
        import numpy

        np_state = numpy.random.get_state()
    except Exception:  # noqa: BLE001
        np_state = None
    return (torch.random.get_rng_state() if torch is not None else None, random.getstate(), np_state)


def _put_random_states(states, torch) -> None:
    import random

    t, py, np_state = states
    if t is not None and torch is not None:
        torch.random.set_rng_state(t)
    random.setstate(py)
    if np_state is not None:
        import numpy

        numpy.random.set_state(np_state)


def _stepper_state(v, torch):
    """A copy of an optimizer's or scheduler's state that later steps do not change (None:
    it cannot be copied, so no re-run starts from it)."""
    import copy

    try:
        if _stepper_kind(v, torch) == 1:
            sd = v.state_dict()
            return {"state": {i: {k: (t.detach().clone() if isinstance(t, torch.Tensor) else copy.deepcopy(t))
                                  for k, t in s.items()} for i, s in sd["state"].items()},
                    "param_groups": copy.deepcopy(sd["param_groups"])}
        return copy.deepcopy(v.state_dict())
    except Exception:  # noqa: BLE001 - a state that does not copy: no re-run from it
        return None


def instrument(code: str, first_line: int, span: tuple, kind: str, method: str = "iterate") -> Optional[str]:
    """``code`` (a statement starting on line ``first_line``) with the loop's iterable or
    condition at ``span`` wrapped in the hook (a ``for`` loop's in ``method``); None when
    the span is not in the code."""
    lines = code.split("\n")
    line, col, end_line, end_col = span
    a, b = line - first_line, end_line - first_line
    if not (0 <= a <= b < len(lines)) or col > len(lines[a]) or end_col > len(lines[b]):
        return None
    if kind == "for":
        opening, closing = f"{HOOK}.{method}(", ")"
    else:
        opening, closing = f"{HOOK}.tick() and (", ")"
    lines[b] = lines[b][:end_col] + closing + lines[b][end_col:]
    lines[a] = lines[a][:col] + opening + lines[a][col:]
    return "\n".join(lines)


def _torch_value(v):
    """What is recorded of a carried value: a detached copy of a tensor, a number as it
    is, a tuple or list of those; None for anything else (not synchronised)."""
    torch = __import__("sys").modules.get("torch")
    if isinstance(v, bool) or isinstance(v, (int, float)):
        return v
    if torch is not None and isinstance(v, torch.Tensor):
        return v.detach().clone()
    if isinstance(v, (tuple, list)) and v:
        parts = [_torch_value(x) for x in v]
        if all(p is not None for p in parts):
            return type(v)(parts) if isinstance(v, list) else tuple(parts)
    return None


def _size(v) -> int:
    if isinstance(v, (tuple, list)):
        return sum(_size(x) for x in v)
    arr = to_numpy(v) if not isinstance(v, (int, float)) else None
    return int(arr.nbytes) if arr is not None else 8


def _ms_value(recorded, current):
    """PyTorch's recorded value in the form the MindSpore side holds (a MindSpore
    tensor of the current one's dtype, a number); None when they do not correspond."""
    import mindspore

    if isinstance(recorded, (tuple, list)):
        if not isinstance(current, (tuple, list)) or len(current) != len(recorded):
            return None
        parts = [_ms_value(r, c) for r, c in zip(recorded, current)]
        if any(p is None for p in parts):
            return None
        return list(parts) if isinstance(current, list) else tuple(parts)
    if isinstance(recorded, (bool, int, float)):
        return recorded if isinstance(current, (bool, int, float)) else None
    if not isinstance(current, mindspore.Tensor):
        return None
    arr = to_numpy(recorded)
    if arr is None or tuple(arr.shape) != tuple(current.shape):
        return None
    return mindspore.Tensor(arr).astype(current.dtype)


class LoopLockstep:
    """The two sides of one loop statement: :meth:`iterate`/:meth:`tick` record on the
    PyTorch side and follow on the MindSpore side (see the module docstring)."""

    def __init__(self, carried, rtol: float, atol: float, line: int, mentioned=(), ms_name=None):
        self.carried = tuple(carried)
        #: names the loop mentions: those holding a PyTorch module on the PyTorch side
        #: (updated in place, ``param.data.add_(-lr * param.grad)``) are followed too
        self.mentioned = tuple(sorted(mentioned))
        self.ms_name = ms_name or (lambda tmod, n: n)
        self.modules: dict = {}  # name -> the PyTorch module recorded
        self.rtol, self.atol = rtol, atol
        self.line = line
        self.records: list = []  # per boundary: {name: value}
        self.bytes = 0
        self.full = False  # recording stopped at MAX_BYTES
        self.side = "torch"
        self.ns: dict = {}
        self.boundary = 0
        self.followed = 0  # boundaries the MindSpore side continued from PyTorch's values
        self.largest: dict = {}  # name -> largest one-iteration max|d|
        self.diverged: Optional[tuple] = None  # (iteration, rows) of the first divergence
        self.more = False  # MindSpore ran more iterations than PyTorch recorded
        self.names_followed: set = set()
        self.iterations = 0  # iterations the MindSpore side ran
        self.items: list = []  # the item of each PyTorch iteration (a ``for`` loop)
        self.rerun_item = None
        self.finished = False  # PyTorch's ``for`` loop ran to its end (no break)
        #: boundary k -> the namespace the float64 re-run of iteration k left ({}: none)
        self.reruns: dict = {}
        #: what a re-run needs from the PyTorch side: (code, namespace, names mentioned);
        #: set by the run when the loop is a ``for`` loop (None: no re-runs)
        self.rerun_source: Optional[tuple] = None
        self.rounding_names: set = set()  # names judged within float32 rounding at a boundary
        self.stepper_bytes = 0  # bytes of the optimizers' states held within STEPPER_BYTES
        self.rolling: list = []  # records holding states beyond STEPPER_BYTES (the last two)

    # -- the hook the instrumented code calls
    def iterate(self, iterable):
        for item in iterable:
            self._boundary()
            if self.side == "torch":
                self._keep_item(item)
            yield item
        self._boundary(last=True)
        if self.side == "torch":
            self.finished = True

    def last_only(self, iterable):
        """The float64 re-run's iterable: the item of the PyTorch iteration it runs again."""
        return [self.rerun_item]

    def _keep_item(self, item) -> None:
        """Keep the item of each PyTorch iteration for a float64 re-run of it (within the
        recording's memory: beyond it, that iteration cannot be run again)."""
        size = _size(item) if isinstance(item, (tuple, list)) or to_numpy(item) is not None else 8
        if self.bytes + size > MAX_BYTES:
            self.items.append(_NO_ITEM)
            return
        self.bytes += size
        self.items.append(item)

    def tick(self) -> bool:
        self._boundary()
        return True

    def _boundary(self, last: bool = False) -> None:
        k = self.boundary
        self.boundary += 1
        if self.side == "torch":
            self._record()
        elif k > 0:  # the state before the first iteration was compared as the cell ran
            self.iterations = k
            self._follow(k, last)

    # -- PyTorch side
    def _record(self) -> None:
        if self.full:
            return
        values = {}
        for name in self.carried:
            if name in self.ns:
                v = _torch_value(self.ns[name])
                if v is not None:
                    values[name] = v
        modules, leaves, steppers = {}, {}, {}
        torch = __import__("sys").modules.get("torch")
        for name in self.mentioned:
            v = self.ns.get(name)
            if name in values:
                continue
            if _stepper_kind(v, torch):
                steppers[name] = v  # its state is copied below, once the boundary is recorded
            elif is_torch_module(v):
                self.modules[name] = v
                modules[name] = {p: t.detach().clone() for p, t in torch_state(v)}
            elif torch is not None and isinstance(v, torch.Tensor) and v.requires_grad and v.is_leaf:
                # a trainable tensor updated in place (``p.data += -lr * p.grad`` over a
                # list holding it): followed in place on the MindSpore side too
                leaves[name] = v.detach().clone()
        if modules:
            values[_MODULES] = modules
        if leaves:
            values[_LEAVES] = leaves
        size = sum(_size(v) for k, v in values.items() if k not in _KEYS)
        size += sum(_size(list(m.values())) for m in modules.values()) + _size(list(leaves.values()))
        randoms = _random_states(torch)
        size += RANDOM_BYTES
        if self.bytes + size > MAX_BYTES:
            self.full = True
            return
        self.bytes += size
        values[_RANDOM] = randoms
        if steppers:
            steppers = {name: _stepper_state(v, torch) for name, v in steppers.items()}
            values[_STEPPERS] = steppers
            self._hold_steppers(values, steppers)
        self.records.append(values)

    def _hold_steppers(self, values: dict, steppers: dict) -> None:
        """Count a boundary's optimizer states against ``STEPPER_BYTES``; beyond it they
        are held only until two later boundaries are recorded."""
        size = sum(_size(list(s.values())) for st in steppers.values() if st and "state" in st
                   for s in st["state"].values())
        if self.stepper_bytes + size <= STEPPER_BYTES:
            self.stepper_bytes += size
            return
        self.rolling.append(values)
        if len(self.rolling) > 2:
            self.rolling.pop(0)[_STEPPERS] = {n: None for n in steppers}  # no re-run from there

    # -- MindSpore side
    def _follow(self, k: int, last: bool = False) -> None:
        """Compare the MindSpore side's values at boundary ``k`` with PyTorch's and go on
        from PyTorch's (after the last iteration of a ``for`` loop its own values stay:
        the comparison at the end of the cell shows what the last iteration made)."""
        if self.diverged is not None:
            return
        if k >= len(self.records):
            self.more = not self.full
            return
        bad = []
        updates = {}
        record = self.records[k]
        copies = self._module_copies(record.get(_MODULES, {}), bad)
        copies.update(self._leaf_copies(record.get(_LEAVES, {}), bad))
        for name, recorded in record.items():
            if name in _KEYS:
                continue
            current = self.ns.get(name)
            if current is None:
                continue
            row = compare_values(name, recorded, current, self.rtol, self.atol, series=False)
            if row.status != MATCH:
                bad.append(row)
                continue
            self.largest[name] = max(self.largest.get(name, 0.0), row.max_abs)
            new = _ms_value(recorded, current)
            if new is not None:
                updates[name] = new
        if bad:
            bad = self._rounding(k, bad)
        if bad:
            self.diverged = (k, bad)
            return
        if last:
            return
        for name, new in updates.items():
            current = self.ns[name]
            if type(current).__name__ == "Parameter":
                put_values(current, new)
            else:
                self.ns[name] = new
            self.names_followed.add(name)
        for name, pairs in copies.items():
            for target, data in pairs:
                put_values(target, data)
            self.names_followed.add(name)
        if updates or copies:
            self.followed += 1

    def _rounding(self, k: int, bad: list) -> list:
        """The rows of ``bad`` (boundary ``k``) that still differ once judged against
        PyTorch's iteration ``k - 1`` run again from the values it began with
        (:func:`judge_by_reruns`): a value that cancels, or an ill-conditioned one, differs
        between two correct float32 iterations by more than the tolerance."""
        if self.rerun_source is None:
            return bad
        code, tns, names, bound = self.rerun_source
        record = self.records[k]

        def rerun(precision: str):  # each precision runs once: ``reruns`` keeps it
            return rerun_iteration(self, code, tns, names, k - 1, bound, precision)

        kept = []
        for row in bad:
            recorded, current = self._recorded(row.name, record), self._current(row.name, record)
            verdict = None
            if recorded is not None and current is not None:
                verdict, _ = judge_by_reruns(recorded, current, rerun,
                                             lambda box: self._value_in(box, row.name, record),
                                             "that iteration", self.atol)
            if verdict is not None and verdict[0]:
                self.rounding_names.add(row.name)
                continue
            if verdict is not None:
                row.note = verdict[1]
            kept.append(row)
        return kept

    @staticmethod
    def _value_in(box: dict, name: str, record: dict):
        """A row's value in a re-run's namespace (a module's parameter by its name)."""
        mod, _, param = name.partition(".")
        if param and mod in record.get(_MODULES, {}):
            module = box.get(mod)
            own = dict(module.named_parameters()) if hasattr(module, "named_parameters") else {}
            if hasattr(module, "named_buffers"):
                own.update(dict(module.named_buffers()))
            return own.get(param)
        return box.get(name)

    def _recorded(self, name: str, record: dict):
        mod, _, param = name.partition(".")
        if param and mod in record.get(_MODULES, {}):
            return record[_MODULES][mod].get(param)
        return record.get(mod, record.get(_LEAVES, {}).get(name))

    def _current(self, name: str, record: dict):
        mod, _, param = name.partition(".")
        if param and mod in record.get(_MODULES, {}):
            return self._ms_param(mod, param)
        return self.ns.get(name)

    def _ms_param(self, name: str, param: str):
        """The MindSpore parameter a PyTorch module's parameter maps to (None: none)."""
        cell = self.ns.get(name)
        if not is_cell(cell) or name not in self.modules:
            return None
        return ms_state(cell).get(self.ms_name(self.modules[name], param))

    def _leaf_copies(self, recorded: dict, bad: list) -> dict:
        """Trainable tensors recorded at this boundary: compared, and copied in place
        (a list the loop updates through holds the same MindSpore tensor)."""
        import mindspore

        copies = {}
        for name, value in recorded.items():
            current = self.ns.get(name)
            if not isinstance(current, mindspore.Tensor):
                continue
            row = compare_values(name, value, current, self.rtol, self.atol, series=False)
            if row.status != MATCH:
                bad.append(row)
                continue
            self.largest[name] = max(self.largest.get(name, 0.0), row.max_abs)
            new = _ms_value(value, current)
            if new is not None:
                copies[name] = [(current, new)]
        return copies

    def _module_copies(self, recorded: dict, bad: list) -> dict:
        """For each module recorded at this boundary whose name holds a Cell on the
        MindSpore side: its parameters compared (a row per parameter beyond the tolerance
        goes to ``bad``) and the (MindSpore parameter, PyTorch's value) pairs to copy."""
        import mindspore

        copies = {}
        for name, state in recorded.items():
            cell = self.ns.get(name)
            if not is_cell(cell):
                continue
            tmod = self.modules[name]
            ms_params = ms_state(cell)
            pairs = []
            for pname, value in state.items():
                target = ms_params.get(self.ms_name(tmod, pname))
                if target is None:
                    continue
                arr_t, arr_m = to_numpy(value), target.asnumpy()
                if arr_t.shape != arr_m.shape:
                    if arr_t.size != arr_m.size:
                        continue
                    arr_t = arr_t.reshape(arr_m.shape)
                row = compare_values(f"{name}.{pname}", arr_t, arr_m, self.rtol, self.atol, series=False)
                if row.status != MATCH:
                    bad.append(row)
                    continue
                self.largest[name] = max(self.largest.get(name, 0.0), row.max_abs)
                pairs.append((target, mindspore.Tensor(arr_t, dtype=target.dtype)))
            if pairs:
                copies[name] = pairs
        return copies

    def start(self, side: str, ns: dict) -> None:
        self.side, self.ns, self.boundary = side, ns, 0

    def note(self) -> Optional[str]:
        """What the report says about the loop (None when nothing was followed)."""
        where = f"the loop on line {self.line}"
        if self.diverged is not None:
            k, rows = self.diverged
            worst = max(rows, key=lambda r: r.max_abs)
            return (f"{where} ran in lockstep with PyTorch's values until iteration {k} ended: then "
                    f"{', '.join(r.name for r in rows)} differed beyond the tolerance "
                    f"({worst.name} max|d|={worst.max_abs:.3g}); from there the MindSpore side ran on its own values")
        if not self.followed:
            return None
        names = ", ".join(sorted(self.names_followed))
        largest = ", ".join(f"{n} {self.largest[n]:.2g}" for n in sorted(self.largest) if n in self.names_followed)
        text = (f"{where}: MindSpore began each of its {self.iterations} iterations from PyTorch's values of "
                f"{names}, so float32 rounding does not compound across iterations (largest difference "
                f"one iteration made: {largest})")
        if self.rounding_names:
            text += (f"; {', '.join(sorted(self.rounding_names))} differed beyond the tolerance after some "
                     "iterations, by no more than float32 rounding: PyTorch's iteration run again from the "
                     "same values (in float64, or in float32 from values moved by one rounding step) is as far "
                     f"from PyTorch's result (within {ROUNDING_FACTOR:g} times) as MindSpore's")
        if self.full:
            text += f"; after {len(self.records)} iterations (the recording's memory limit) it ran on its own"
        if self.more:
            text += "; MindSpore ran more iterations than PyTorch"
        return text


# ----------------------------------------------------------------------------- float64 re-run

#: how far MindSpore's value may be from the float64 re-run, in multiples of PyTorch's
#: own distance from it (plus atol, and never beyond RERUN_AGREEMENT of the values' RMS
#: magnitude): both are float32 computations of one iteration
ROUNDING_FACTOR = 10.0
#: the re-run stands for PyTorch's iteration only if PyTorch's float32 value is this close
#: to it (relative to its RMS magnitude): else it drew other random numbers, read other
#: data, or the iteration is too ill-conditioned for a float32 verdict
RERUN_AGREEMENT = 1e-3


class _Unsafe(Exception):
    """A value the re-run cannot copy: running the iteration again could change it."""


def _copy(v, memo: dict, torch, user_globals: dict, wide: bool = True):
    """A float64 copy of ``v`` (``wide``; else a copy of the same dtype) for the re-run (tensors, modules, containers of them,
    numbers, classes, modules and library functions as they are; an optimizer or a
    learning-rate scheduler as a copy over the copies of its parameters); raises
    :class:`_Unsafe` for anything the iteration could change for the user (a data loader, a
    function of the notebook, which reads and writes the notebook's own names)."""
    import copy
    import types

    key = id(v)
    if key in memo:
        return memo[key]
    if v is None or isinstance(v, (bool, int, float, complex, str, bytes, range, slice, type, types.ModuleType,
                                   types.BuiltinFunctionType)):
        out = v
    elif isinstance(v, (torch.device, torch.dtype)):
        out = v
    elif type(v).__module__ == "numpy" and hasattr(v, "copy"):
        out = v.copy()  # an array or a NumPy scalar: a copy the iteration may change
    elif isinstance(v, torch.Generator):
        out = torch.Generator(device=v.device)  # a copy: the user's generator is not advanced
        out.set_state(v.get_state())
    elif isinstance(v, torch.Tensor):
        if v.is_floating_point():
            out = v.detach().to(torch.float64) if wide else v.detach().clone()
            if v.requires_grad:
                out.requires_grad_(True)
        else:
            out = v.detach().clone()
    elif isinstance(v, torch.nn.Module):
        copies: dict = {}
        out = copy.deepcopy(v, copies)
        if wide:
            out.double()  # in place: the Parameter objects stay
        for t in list(v.parameters()) + list(v.buffers()):
            if id(t) in copies:  # an optimizer copied later steps these same copies
                memo.setdefault(id(t), copies[id(t)])
    elif _stepper_kind(v, torch) == 1:
        # an optimizer over the copies of its parameters (its state is replaced by
        # the boundary's record); the user's optimizer is not stepped
        seeded = {id(p): _copy(p, memo, torch, user_globals, wide) for g in v.param_groups for p in g["params"]}
        out = copy.deepcopy(v, seeded)
        out.__dict__.pop("step", None)  # a scheduler's wrapper of step() calls the user's optimizer
    elif _stepper_kind(v, torch) == 2:
        out = copy.deepcopy(v, {id(v.optimizer): _copy(v.optimizer, memo, torch, user_globals, wide)})
    elif isinstance(v, (list, tuple)):
        parts = [_copy(x, memo, torch, user_globals, wide) for x in v]
        out = parts if isinstance(v, list) else (type(v)(*parts) if hasattr(v, "_fields") else tuple(parts))
    elif isinstance(v, dict):
        out = {k: _copy(x, memo, torch, user_globals, wide) for k, x in v.items()}
    elif isinstance(v, types.FunctionType) and v.__globals__ is not user_globals:
        out = v  # a library's function
    elif callable(v) and type(v).__module__.startswith("torch") and not hasattr(v, "state_dict"):
        out = v  # torch's own functions and callables (torch.relu, a torch.autograd.Function's apply)
    else:
        raise _Unsafe(type(v).__name__)
    memo[key] = out
    return out


def _load_state(module, state: dict, torch) -> None:
    """Put a recorded state (name -> tensor) into a copy of its module."""
    own = dict(module.named_parameters())
    own.update(dict(module.named_buffers()))
    with torch.no_grad():
        for name, value in state.items():
            target = own.get(name)
            if target is not None and tuple(target.shape) == tuple(value.shape):
                target.copy_(value.to(target.dtype))


#: the precisions an iteration is run again in: float64 (the reference a float32 result
#: is judged by), float32 as PyTorch ran it (it must give PyTorch's values: else the
#: re-run is not PyTorch's iteration) and float32 from values moved by one rounding step
#: (how far float32 rounding alone moves the result), in further samples of random
#: directions ("nudged:1"...) where the first does not settle it: one sample
#: underestimates how far rounding can move an ill-conditioned iteration (a ReLU input
#: within rounding of 0 that one direction leaves on its side and another flips)
NUDGED = ("nudged", "nudged:1", "nudged:2", "nudged:3")
PRECISIONS = ("float64", "float32", *NUDGED)
#: the relative size of the nudge: one float32 rounding step
NUDGE = 2.0 ** -23


def rerun_iteration(lock: "LoopLockstep", code: Optional[str], tns: dict, names,
                    k: Optional[int] = None, bound=(), precision: str = "float64") -> Optional[dict]:
    """PyTorch's iteration ``k`` of the loop (default: the last) run once more, in a
    copy of the namespace, from the values it began with (the lockstep's record of
    boundary ``k``: modules, trainable tensors, the optimizers' and schedulers' states,
    the random states) in one of ``PRECISIONS``: the namespace it leaves, or None when it
    cannot be run faithfully (a ``while`` loop, a last iteration that broke off, an
    iteration not recorded, a value the re-run could change for the user, an error).
    ``bound``: the names the loop binds (a value of one the re-run cannot copy is left
    out: the iteration binds it again before reading it, or the re-run fails). Computed
    once per iteration and precision."""
    if k is None:
        if not lock.finished:
            return None
        k = len(lock.records) - 2
    if (k, precision) in lock.reruns:
        return lock.reruns[k, precision] or None
    lock.reruns[k, precision] = {}
    if code is None or not (0 <= k < len(lock.items)) or k + 1 >= len(lock.records) or lock.items[k] is _NO_ITEM:
        return None
    import contextlib
    import copy
    import io
    import os
    import sys
    import tempfile

    torch = sys.modules.get("torch")
    if torch is None:
        return None
    wide = precision == "float64"
    start = lock.records[k]  # the boundary the iteration began at
    memo: dict = {}
    box = {"__builtins__": tns.get("__builtins__", __builtins__), "__name__": tns.get("__name__", "__main__")}
    try:  # optimizers after the modules and tensors they step, schedulers after those
        for name in sorted(names, key=lambda n: _stepper_kind(tns.get(n), torch)):
            if name in tns and not name.startswith("__"):
                try:
                    box[name] = _copy(tns[name], memo, torch, tns, wide)
                except _Unsafe:
                    if name not in bound:
                        raise
        for name, value in start.items():
            if name == _MODULES:
                for mod, state in value.items():
                    if isinstance(box.get(mod), torch.nn.Module):
                        _load_state(box[mod], state, torch)
            elif name == _STEPPERS:
                for held, state in value.items():
                    if held in box:
                        if state is None:
                            raise _Unsafe(held)
                        box[held].load_state_dict(copy.deepcopy(state))  # it steps what it loads
            elif name == _LEAVES:
                for leaf, t in value.items():
                    if isinstance(box.get(leaf), torch.Tensor):
                        with torch.no_grad():
                            box[leaf].copy_(t.to(box[leaf].dtype))
            elif name == _RANDOM:
                continue
            elif name in box:
                held = box[name]
                if (isinstance(held, torch.Tensor) and isinstance(value, torch.Tensor)
                        and held.shape == value.shape and held.is_floating_point() and held.is_leaf):
                    with torch.no_grad():  # in place: a list holding it and requires_grad stay
                        held.copy_(value.to(held.dtype))
                else:
                    box[name] = _copy(value, {}, torch, tns, wide)
        loaded = start.get(_STEPPERS, {})
        if any(_stepper_kind(v, torch) and n not in loaded for n, v in box.items()):
            return None  # an optimizer at the state the loop left, not the iteration's
        if precision in NUDGED:
            _nudge([box[n] for n in sorted(box) if not n.startswith("__")], torch,
                   seed=int(precision.partition(":")[2] or 0))
    except _Unsafe:
        return None
    except Exception:  # noqa: BLE001 - a copy that fails: no re-run
        return None
    box[HOOK] = lock
    lock.rerun_item = lock.items[k]
    users = _random_states(torch)
    default = torch.get_default_dtype()
    cwd = os.getcwd()
    try:
        with tempfile.TemporaryDirectory() as folder, contextlib.redirect_stdout(io.StringIO()), \
                contextlib.redirect_stderr(io.StringIO()):
            os.chdir(folder)  # whatever the iteration writes goes there
            if _RANDOM in start:
                _put_random_states(start[_RANDOM], torch)  # what PyTorch's iteration drew
            if wide:
                torch.set_default_dtype(torch.float64)
            exec(compile(code, f"<{precision} re-run>", "exec"), box)  # noqa: S102
    except BaseException as exc:  # noqa: BLE001 - the re-run tells nothing then
        if isinstance(exc, KeyboardInterrupt):
            raise
        return None
    finally:
        os.chdir(cwd)
        torch.set_default_dtype(default)
        _put_random_states(users, torch)  # the user's random states, as PyTorch left them
    lock.reruns[k, precision] = box
    return box


def _nudge(values: list, torch, seed: int = 0) -> None:
    """Move every floating-point value the re-run starts from (tensors, modules'
    parameters and buffers, optimizers' states, in containers) by one float32 rounding
    step, up or down at random (a generator of its own, ``seed``: no random state moves)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    seen: set = set()

    def nudge(t) -> None:
        if id(t) in seen or not t.is_floating_point() or not t.numel():
            return
        seen.add(id(t))
        signs = torch.from_numpy(rng.choice(np.array([-NUDGE, NUDGE]), size=tuple(t.shape)))
        with torch.no_grad():
            t.mul_(1 + signs.to(t.dtype))

    def walk(v) -> None:
        if isinstance(v, torch.Tensor):
            nudge(v)
        elif isinstance(v, torch.nn.Module):
            for t in list(v.parameters()) + list(v.buffers()):
                nudge(t)
        elif _stepper_kind(v, torch) == 1:
            for state in v.state.values():
                for key, t in state.items():
                    if key != "step" and isinstance(t, torch.Tensor):
                        nudge(t)
        elif isinstance(v, (list, tuple)):
            for x in v:
                walk(x)
        elif isinstance(v, dict):
            for x in v.values():
                walk(x)

    for v in values:
        walk(v)


def _as_shaped(ms_array, torch_array):
    """MindSpore's value in PyTorch's shape where only the layout of one parameter
    differs (a Conv1d's weight is 4-D in MindSpore)."""
    if ms_array is None or torch_array is None or ms_array.shape == torch_array.shape:
        return ms_array
    return ms_array.reshape(torch_array.shape) if ms_array.size == torch_array.size else ms_array


def within_rounding(torch_value, ms_value, reference, atol: float) -> Optional[tuple]:
    """(within, PyTorch's distance from the float64 re-run, MindSpore's): ``within`` when
    MindSpore's value is as close to the re-run's as float32 rounding lets PyTorch's own
    be (see ``ROUNDING_FACTOR``); None when the re-run does not stand for PyTorch's
    iteration (or the values cannot be compared so)."""
    import numpy as np

    t, m, r = to_numpy(torch_value), _as_shaped(to_numpy(ms_value), to_numpy(torch_value)), to_numpy(reference)
    if t is None or m is None or r is None or not (t.shape == m.shape == r.shape) or not t.size:
        return None
    if not all(np.issubdtype(a.dtype, np.floating) for a in (t, m, r)):
        return None
    t, m, r = (a.astype(np.float64) for a in (t, m, r))
    if not (np.all(np.isfinite(t)) and np.all(np.isfinite(m)) and np.all(np.isfinite(r))):
        return None
    err_t, err_m = float(np.max(np.abs(t - r))), float(np.max(np.abs(m - r)))
    scale = float(np.sqrt(np.mean(r ** 2)))
    if err_t > RERUN_AGREEMENT * scale + atol:
        return None  # the re-run is not PyTorch's iteration
    # further than PyTorch's rounding allows, or than 0.1% of the values: not within
    return err_m <= min(ROUNDING_FACTOR * err_t, RERUN_AGREEMENT * scale) + atol, err_t, err_m


def further_note(verdict: tuple, what: str) -> str:
    """A row's note when MindSpore's value is further from the float64 re-run than float32
    rounding explains: both distances, so a port that is right but whose kernel rounds
    more (MindSpore's CPU tanh, exp) reads differently from one that computes something
    else."""
    _, err_t, err_m = verdict
    ratio = f" ({err_m / err_t:.3g} times further)" if err_t > 0 else ""
    return (f"{what} is {err_t:.2g} from PyTorch's value and {err_m:.2g} from MindSpore's{ratio}: "
            "more than float32 rounding explains")


def within_spread(torch_value, ms_value, exact, nudged, atol: float) -> Optional[tuple]:
    """(within, spread, MindSpore's distance from PyTorch's value): ``spread`` is how far
    PyTorch's own iteration lands from its value when what it starts from moves by one
    float32 rounding step (the ``nudged`` re-runs, one value or a list of samples: the
    farthest); ``within`` when MindSpore's value is no further from PyTorch's than
    ``ROUNDING_FACTOR`` spreads. None unless the float32 re-run (``exact``) gave
    PyTorch's value: else the re-run drew or read something else and its spread says
    nothing."""
    import numpy as np

    samples = nudged if isinstance(nudged, list) else [nudged]
    arrays = [to_numpy(v) for v in (torch_value, ms_value, exact, *samples)]
    arrays[1] = _as_shaped(arrays[1], arrays[0])
    if any(a is None for a in arrays) or len({a.shape for a in arrays}) != 1 or not arrays[0].size:
        return None
    if not all(np.issubdtype(a.dtype, np.floating) for a in arrays):
        return None
    t, m, e, *ns = (a.astype(np.float64) for a in arrays)
    if not all(np.all(np.isfinite(a)) for a in (t, m, e, *ns)):
        return None
    scale = float(np.sqrt(np.mean(t ** 2)))
    if float(np.max(np.abs(e - t))) > EXACT * scale:
        return None  # the float32 re-run is not PyTorch's iteration
    spread = max(float(np.max(np.abs(n - t))) for n in ns)
    d_m = float(np.max(np.abs(m - t)))
    if spread <= 0:
        return None
    return d_m <= ROUNDING_FACTOR * spread + atol, spread, d_m


#: the float32 re-run stands for PyTorch's iteration when it gives PyTorch's values to
#: this (relative to their RMS size): the same operations on the same values
EXACT = 1e-6


def judge_rounding(torch_value, ms_value, boxes: dict, what: str, atol: float) -> Optional[tuple]:
    """(within, note) for a value beyond the tolerance after an iteration that began from
    PyTorch's values, judged against the re-runs of that iteration (``boxes``: precision
    -> the re-run's value, None where it has none): within float32 rounding when
    MindSpore's value is as close to the float64 result as PyTorch's rounding lets its
    own be, or as close to PyTorch's value as PyTorch's own iteration lands when what it
    starts from moves by one rounding step (an ill-conditioned iteration: a ReLU mask on
    values near 0, Adam dividing a gradient at rounding level by its own size). None when
    no re-run stands for PyTorch's iteration."""
    wide = None if boxes.get("float64") is None else within_rounding(torch_value, ms_value, boxes["float64"], atol)
    if wide is not None and wide[0]:
        return True, (f"within float32 rounding: the float64 re-run of {what} is {wide[1]:.2g} from PyTorch's "
                      f"value, {wide[2]:.2g} from MindSpore's")
    near = None
    samples = [boxes[p] for p in NUDGED if boxes.get(p) is not None]
    if boxes.get("float32") is not None and samples:
        near = within_spread(torch_value, ms_value, boxes["float32"], samples, atol)
    if near is not None and near[0]:
        return True, (f"within float32 rounding: {what} run again in float32 from values moved by one rounding "
                      f"step (in {len(samples)} random direction{'s' if len(samples) > 1 else ''}) lands up to "
                      f"{near[1]:.2g} from PyTorch's value; MindSpore's is {near[2]:.2g} from it")
    if wide is not None:
        return False, further_note(wide, f"the float64 re-run of {what}")
    if near is not None:
        return False, (f"{what} run again in float32 from values moved by one rounding step lands {near[1]:.2g} "
                       f"from PyTorch's value, MindSpore's is {near[2]:.2g} ({near[2] / near[1]:.3g} times "
                       "further): more than float32 rounding explains")
    return None


def judge_by_reruns(torch_value, ms_value, rerun, value_of, what: str, atol: float) -> tuple:
    """(:func:`judge_rounding`'s verdict, precision -> the re-run's value) for one value,
    the re-runs taken in ``PRECISIONS`` order and the float32 pair only where float64
    does not settle it. ``rerun(precision)``: the re-run's namespace or None (computed once
    per iteration and precision, see :func:`rerun_iteration`); ``value_of(namespace)``: the value
    there."""
    values: dict = {}
    verdict = None
    for precision in PRECISIONS:
        box = rerun(precision)
        value = None if box is None else value_of(box)
        if value is not None:
            values[precision] = value
        if precision == "float32":
            continue  # judged with its nudged twin
        if precision in NUDGED[1:] and (value is None or within_spread(
                torch_value, ms_value, values.get("float32"), values.get(NUDGED[0]), atol) is None):
            break  # the float32 re-runs are not PyTorch's iteration: more samples tell nothing
        verdict = judge_rounding(torch_value, ms_value, values, what, atol)
        if verdict is not None and verdict[0]:
            break
    return verdict, values

