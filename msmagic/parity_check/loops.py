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
#: the most bytes the PyTorch side's recorded iterations may hold
MAX_BYTES = 512 * 1024 * 1024
#: the key of a boundary's record holding the modules' parameters
_MODULES = "\0modules"
#: the key of a boundary's record holding the trainable tensors the loop mentions
_LEAVES = "\0leaves"


def instrument(code: str, first_line: int, span: tuple, kind: str) -> Optional[str]:
    """``code`` (a statement starting on line ``first_line``) with the loop's iterable or
    condition at ``span`` wrapped in the hook; None when the span is not in the code."""
    lines = code.split("\n")
    line, col, end_line, end_col = span
    a, b = line - first_line, end_line - first_line
    if not (0 <= a <= b < len(lines)) or col > len(lines[a]) or end_col > len(lines[b]):
        return None
    if kind == "for":
        opening, closing = f"{HOOK}.iterate(", ")"
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

    # -- the hook the instrumented code calls
    def iterate(self, iterable):
        for item in iterable:
            self._boundary()
            yield item
        self._boundary(last=True)

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
        modules, leaves = {}, {}
        torch = __import__("sys").modules.get("torch")
        for name in self.mentioned:
            v = self.ns.get(name)
            if name in values:
                continue
            if is_torch_module(v):
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
        size = sum(_size(v) for k, v in values.items() if k not in (_MODULES, _LEAVES))
        size += sum(_size(list(m.values())) for m in modules.values()) + _size(list(leaves.values()))
        if self.bytes + size > MAX_BYTES:
            self.full = True
            return
        self.bytes += size
        self.records.append(values)

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
            if name in (_MODULES, _LEAVES):
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
        if self.full:
            text += f"; after {len(self.records)} iterations (the recording's memory limit) it ran on its own"
        if self.more:
            text += "; MindSpore ran more iterations than PyTorch"
        return text
