"""Stage: sync. The first layer whose output differs, found while a statement runs.

A statement such as ``out = model(x)`` or a training loop calls dozens of layers; when
what it bound differs, the report would stop at the statement and leave the user to
bisect the model by hand. So, while the PyTorch side of a statement that can call a
module runs, every layer call is recorded (PyTorch's global forward hooks): the model it
belongs to (the name the namespace holds it under), its path inside that model
(``layer2.0.bn1``), the call's index for that path (a layer called twice), a copy of its
first input and of its output, and of the buffers it updated (a BatchNorm's running
statistics). While the MindSpore side runs the same statement, ``Cell.__call__`` is
wrapped: each Cell called is placed by the same model name and by its own path, which
the port's parameter-name maps turn into PyTorch's path (the map that copies weights:
``linear1`` -> ``dense1``, ``bn.weight`` -> ``bn.gamma``); its input, output and updated
buffers are compared with PyTorch's as soon as it returns, and PyTorch's copies are
dropped. What is kept is a summary per call (:class:`LayerRow`).

The first layer, in PyTorch's order of completion, whose output (or updated state)
differs while its input matched is the one whose computation differs: a leaf layer
completes before its parent, so a parent is named only when its own code between its
children (a functional call in its ``forward``) changed the value. A PyTorch layer that
no Cell stood for is listed as missing ("the structures differ"). Copies are bounded
(:data:`MAX_CALLS` per layer, :data:`MAX_BYTES` per statement); the calls beyond are
counted, not compared. Tracing stops after the first statement in which a layer diverged:
after it the two sides no longer start from the same values.
"""

from __future__ import annotations

import contextlib
import types
import weakref
from dataclasses import dataclass, field
from typing import Optional

__all__ = ["LayerRow", "LayerReport", "LayerTrace", "MAX_CALLS", "MAX_BYTES"]

#: calls of one layer compared per statement (a training loop's first iterations)
MAX_CALLS = 4
#: bytes of PyTorch's copies kept per statement until the MindSpore side compares them
MAX_BYTES = 1 << 26

MATCH, DIFFERS, FOLLOWS, MISSING, SHAPE, STATE, RANDOM = (
    "match", "differs", "follows", "missing", "shape", "state differs", "random")


@dataclass
class LayerRow:
    """One call of one layer, compared."""

    model: str  # the name of the model it belongs to (``model``; ``#1`` for an unnamed one)
    path: str  # its PyTorch path in that model ("" for the model itself)
    torch_class: str
    ms_class: str = ""
    ms_path: str = ""
    call: int = 0  # the call's index among this layer's calls in the statement
    order: int = 0  # the call's place in PyTorch's order of completion
    start: int = 0  # the call's place in PyTorch's order of calls (a parent before its children)
    in_max_abs: Optional[float] = None
    out_max_abs: Optional[float] = None
    status: str = ""  # set when compared (or found missing); "" for a call not compared
    note: str = ""
    #: rules that ported this layer's class (the port's edits of its constructor)
    rule_ids: list = field(default_factory=list)
    #: what this call drew that no replay reaches ("" when nothing): its output differs
    #: by design, and the report names it as the cause
    random: str = ""

    @property
    def where(self) -> str:
        """``model.layer2.0.bn1`` (the model's name, then the layer's path)."""
        return f"{self.model}.{self.path}" if self.path else self.model


@dataclass
class LayerReport:
    """The layer calls of one statement, compared."""

    statement: int
    rows: list = field(default_factory=list)
    #: the first layer whose computation differs (its input matched), or None
    first: Optional[LayerRow] = None
    #: PyTorch layer calls in the statement, and how many of them were compared
    calls: int = 0
    compared: int = 0
    notes: list = field(default_factory=list)
    #: when an optimizer's gradients differed in the statement: the first parameters whose
    #: gradients differ, by layer, with how that layer's forward output compared:
    #: [(layer path, (parameter names...), status of its first call or "")]
    gradients: list = field(default_factory=list)

    def row_for(self, ms_path: str) -> Optional[LayerRow]:
        """The first call of the layer whose MindSpore path is ``ms_path``."""
        return next((r for r in self.rows if r.ms_path == ms_path and r.status), None)

    def summary(self) -> str:
        if self.first is None:
            return (f"statement {self.statement + 1}: {self.compared} of {self.calls} layer calls compared, "
                    "none differs where its input matched")
        f = self.first
        return (f"first divergent layer: {f.where} ({f.torch_class} \u2192 {f.ms_class or '?'}), call {f.call + 1}: "
                f"input max |\u0394| {_fmt(f.in_max_abs)}, output max |\u0394| {_fmt(f.out_max_abs)}"
                + (f" ({f.note})" if f.note else ""))


def _fmt(x) -> str:
    return "-" if x is None else f"{x:.3g}"


def _arrays(value, limit: int = 4) -> list:
    """The tensors in a layer's output (a tensor, or a tuple/list of them, nested)."""
    out: list = []

    def walk(v):
        if len(out) >= limit:
            return
        if isinstance(v, (tuple, list)):
            for item in v:
                walk(item)
        elif getattr(v, "is_nested", False):
            return  # a nested tensor (ragged): no shape to compare
        elif hasattr(v, "shape") and hasattr(v, "dtype"):
            out.append(v)

    walk(value)
    return out


def _torch_numpy(t):
    try:
        return t.detach().cpu().float().numpy().copy() if t.is_floating_point() else t.detach().cpu().numpy().copy()
    except Exception:  # noqa: BLE001 - not a plain tensor
        return None


def _ms_numpy(t):
    try:
        import numpy as np

        return np.asarray(t.asnumpy(), dtype=np.float32) if "float" in str(t.dtype).lower() else t.asnumpy()
    except Exception:  # noqa: BLE001
        return None


def _delta(a, b) -> tuple[Optional[float], bool]:
    """(max |a - b| or None when either is missing, same shape): NumPy arrays compared in
    their own float precision (integers in float64); NaN on both sides at the same place
    counts as equal, NaN on one side as inf."""
    import numpy as np

    if a is None or b is None:
        return None, True
    if tuple(a.shape) != tuple(b.shape):
        if a.size != b.size:
            return None, False
        b = b.reshape(a.shape)
    if a.size == 0:
        return 0.0, True
    if a.dtype.kind != "f" or b.dtype.kind != "f":
        a, b = a.astype(np.float64), b.astype(np.float64)
    diff = np.abs(a - b)
    worst = diff.max()
    if np.isnan(worst):  # rare: only then the NaN masks are built
        diff[np.isnan(a) & np.isnan(b)] = 0.0
        diff[np.isnan(diff)] = np.inf
        worst = diff.max()
    return float(worst), True


class _Recorded:
    """PyTorch's record of one layer call, until the MindSpore side compares it."""

    __slots__ = ("row", "inputs", "outputs", "buffers", "nbytes")

    def __init__(self, row, inputs, outputs, buffers):
        self.row, self.inputs, self.outputs, self.buffers = row, inputs, outputs, buffers
        self.nbytes = sum(a.nbytes for a in [inputs, *outputs, *buffers.values()] if a is not None)


class LayerTrace:
    """A part of the synchroniser: records PyTorch's layer calls, compares MindSpore's.

    ``params``: the port's parameter-name maps; ``ms_name_for(torch_module, name,
    params)``: the MindSpore name of a PyTorch parameter or buffer through them (the
    synchroniser's, which copies weights with the same maps). ``rtol``/``atol``: the run's
    tolerances, applied to each layer's input and output as to a compared value."""

    def __init__(self, params, ms_name_for, rtol: float, atol: float, enabled: bool = True) -> None:
        self.params = params
        self.ms_name_for = ms_name_for
        self.rtol, self.atol = rtol, atol
        self.enabled = enabled
        #: the report of the first statement in which a layer diverged (tracing stops)
        self.found: Optional[LayerReport] = None
        #: statement index -> its layer report
        self.reports: dict = {}
        self._paired: set = set()
        #: id(MindSpore output) -> (it, PyTorch's copy, max |Δ|, same shape, close): the
        #: last few outputs compared, which the next layers take as inputs
        self._outputs: dict = {}
        self._records: dict = {}  # (model, torch path, call) -> _Recorded
        self._roots: dict = {}  # model name -> the PyTorch model (while a statement runs)
        self._rows: list = []
        self._calls = 0
        self._traced = False

    # ------------------------------------------------------------------ PyTorch side

    def _wanted(self, step, tns: dict) -> bool:
        """Does the statement call modules (a model it reads, a function or class it
        calls, which may build and call one)? Hooks go only on those."""
        if not self.enabled or self.found is not None:
            return False
        torch = _torch()
        for name in step.names:
            value = tns.get(name)
            if isinstance(value, torch.nn.Module) or isinstance(value, (types.FunctionType, types.MethodType)):
                return True
            if isinstance(value, type) and issubclass(value, torch.nn.Module):
                return True
            if isinstance(value, (list, tuple, dict)):
                inner = value.values() if isinstance(value, dict) else value
                if any(isinstance(v, torch.nn.Module) for v in list(inner)[:64]):
                    return True
        return False

    @contextlib.contextmanager
    def torch_side(self, step, tns: dict):
        self._traced = self._wanted(step, tns)
        self._records, self._roots, self._rows, self._calls = {}, {}, [], 0
        if not self._traced:
            yield
            return
        torch = _torch()
        stack: list = []  # (module, model name, path, start)
        roots: dict = {}  # id(root) -> (a weak reference to it, model name, {id(sub): path})
        started = [0]
        counts: dict = {}
        budget = [MAX_BYTES]
        unnamed = [0]
        #: one copy per tensor: a layer's input is mostly the output of the layer before
        #: it (the same tensor object), a container's output that of its last child.
        #: id -> (a weak reference to the tensor, its version counter, the copy): a hit
        #: needs the same live tensor, unchanged in place since
        copies: dict = {}
        shared = [0]  # bytes of the copies the call being recorded reused

        def copy(t):
            hit = copies.get(id(t))
            try:
                version = t._version
            except Exception:  # noqa: BLE001 - not a plain tensor
                return _torch_numpy(t)
            if hit is not None and hit[0]() is t and hit[1] == version:
                if hit[2] is not None:
                    shared[0] += hit[2].nbytes
                return hit[2]
            arr = _torch_numpy(t)
            try:
                copies[id(t)] = (weakref.ref(t), version, arr)
            except TypeError:  # not weakly referable: not shared
                pass
            return arr

        def pre(module, inputs):
            try:
                enter(module)
            except Exception as exc:  # noqa: BLE001 - never fail the user's forward pass
                failed.append(exc)

        def post(module, inputs, output):
            try:
                leave(module, inputs, output)
            except Exception as exc:  # noqa: BLE001
                failed.append(exc)

        failed: list = []

        def enter(module):
            if not stack:
                known = roots.get(id(module))
                if known is None or known[0]() is not module:  # new (an id may be reused)
                    name = _name_in(tns, module)
                    if name is None:
                        unnamed[0] += 1
                        name = f"#{unnamed[0]}"
                    paths = {id(m): p for p, m in module.named_modules(remove_duplicate=False)}
                    roots[id(module)] = (weakref.ref(module), name, paths)
                    self._roots[name] = module
                started[0] += 1
                stack.append((module, roots[id(module)][1], "", started[0]))
                return None
            name = stack[0][1]
            paths = roots[id(stack[0][0])][2]
            path = paths.get(id(module))
            if path is None:  # a module passed in as an argument: not part of the model
                path = f"<{type(module).__name__}>"
            started[0] += 1
            stack.append((module, name, path, started[0]))
            return None

        def leave(module, inputs, output):
            if not stack:
                return None
            _, name, path, start = stack.pop()
            if path.startswith("<"):
                return None
            self._calls += 1
            key = (name, path)
            call = counts.get(key, 0)
            counts[key] = call + 1
            if call >= MAX_CALLS:  # counted only: a long loop keeps no row per call
                return None
            row = LayerRow(name, path, type(module).__name__, call=call, order=len(self._rows), start=start)
            row.random = unreplayed_randomness(module)
            self._rows.append(row)
            if budget[0] <= 0:
                row.status, row.note = "", "not compared (the statement's layer copies reached their bound)"
                return None
            first = next(iter(_arrays(inputs, 1)), None)
            inp = copy(first) if first is not None else None
            outs = [copy(t) for t in _arrays(output)]
            buffers = {}
            for b, value in module.named_buffers(recurse=False):
                if value is not None and value.is_floating_point():
                    buffers[b] = _torch_numpy(value)
            rec = _Recorded(row, inp, outs, buffers)
            budget[0] -= rec.nbytes - shared[0]
            shared[0] = 0
            if budget[0] < 0:
                row.status, row.note = "", "not compared (the statement's layer copies reached their bound)"
                return None
            self._records[(name, path, call)] = rec
            return None

        h1 = torch.nn.modules.module.register_module_forward_pre_hook(pre)
        h2 = torch.nn.modules.module.register_module_forward_hook(post, always_call=True)
        try:
            yield
        finally:
            h1.remove()
            h2.remove()
            if failed:
                self._give_up(step, failed[0])

    # ------------------------------------------------------------------ MindSpore side

    @contextlib.contextmanager
    def ms_side(self, step, mns: dict):
        """While the MindSpore side runs the statement: each Cell call compared as it
        returns. The statement's :class:`LayerReport` is made when it ends (a MindSpore
        exception included: the layer that changed a shape is often what raised)."""
        if not self._traced or not self._records:
            self._traced = False
            self._records, self._rows, self._roots = {}, [], {}
            yield
            return
        import mindspore

        cls = mindspore.nn.Cell
        original = cls.__call__
        trace = self
        stack: list = []  # (the root's info, this Cell's MindSpore path or None)
        #: id(root Cell) -> [a weak reference to it, the PyTorch model's name (None: a Cell
        #: no PyTorch model stands for), {id(sub Cell): its path}, {its path: PyTorch's}]
        roots: dict = {}
        counts: dict = {}
        done = [False]

        def root_info(cell):
            info = roots.get(id(cell))
            if info is not None and info[0]() is cell:
                return info
            name = _name_in(mns, cell)
            if name is None or name not in trace._roots:
                name = _unnamed_match(trace._roots, [i[1] for i in roots.values()])
            _, paths, pairs = trace._ms_root(name, cell) if name is not None else (None, {}, {})
            try:
                ref = weakref.ref(cell)
            except TypeError:  # kept alive for the statement
                ref = (lambda c: (lambda: c))(cell)
            info = roots[id(cell)] = [ref, name, paths, pairs]
            return info

        def call(cell, *args, **kwargs):
            if done[0]:
                return original(cell, *args, **kwargs)
            if not stack:
                info = root_info(cell)
                path = "" if info[1] is not None else None
            else:
                info, parent_path = stack[0][0], stack[-1][1]
                path = None
                if info[1] is not None:
                    path = info[2].get(id(cell))
                    if path is None:
                        path = info[2][id(cell)] = _child_path(parent_path, stack[-1][2], cell)
            stack.append((info, path, cell))
            try:
                out = original(cell, *args, **kwargs)
            finally:
                stack.pop()
            torch_path = info[3].get(path) if path is not None else None
            if torch_path is not None:
                key = (info[1], torch_path)
                k = counts.get(key, 0)
                counts[key] = k + 1
                rec = trace._records.pop((info[1], torch_path, k), None)
                if not trace._records and not stack:
                    # every PyTorch record is compared: the rest of the statement pays
                    # nothing more (MindSpore's own Cell.__call__ again, unless another
                    # wrapper went on top of this one: then this one passes through)
                    done[0] = True
                    if cls.__call__ is call:
                        cls.__call__ = original
                if rec is not None:
                    try:
                        trace._compare(rec, cell, path, args, out)
                    except Exception as exc:  # noqa: BLE001 - a value MindSpore cannot read
                        text = str(exc).splitlines()[0][:120] if str(exc) else repr(exc)
                        rec.row.status, rec.row.note = "", f"its output could not be read ({type(exc).__name__}: {text})"
            return out

        cls.__call__ = call
        stopped = False
        try:
            yield
        except BaseException:
            stopped = True  # the layers it did not reach are not missing
            raise
        finally:
            if cls.__call__ is call:
                cls.__call__ = original
            self._paired = {info[1] for info in roots.values() if info[1] is not None}
            try:
                self._report(step, stopped)
            except Exception as exc:  # noqa: BLE001 - the drill-down never fails the run
                self._give_up(step, exc)

    def _ms_root(self, name: str, cell) -> tuple:
        """(name, {id(sub cell): its MindSpore path}, {MindSpore path: PyTorch path}) for a
        Cell standing for the PyTorch model ``name``."""
        tmod = self._roots[name]
        ms_paths = {id(c): p for p, c in cell.cells_and_names()}
        torch_paths = [p for p, _ in tmod.named_modules()]
        pairs = {}
        for p in torch_paths:
            q = self._ms_path(tmod, p)
            if q is not None:
                pairs.setdefault(q, p)
        return name, ms_paths, pairs

    def _ms_path(self, tmod, path: str) -> Optional[str]:
        """The MindSpore path of the PyTorch layer ``path``: through the name its first
        parameter or buffer takes (the port's maps), else its parent's path and its own
        attribute name."""
        if path == "":
            return ""
        try:
            sub = tmod.get_submodule(path)
        except AttributeError:
            return None
        own = next(iter([n for n, _ in sub.named_parameters()] + [n for n, _ in sub.named_buffers()]), None)
        if own is not None:
            try:
                full = self.ms_name_for(tmod, f"{path}.{own}", self.params)
            except Exception:  # noqa: BLE001 - a map that does not apply: the same path
                return path
            depth = own.count(".") + 1
            parts = full.split(".")
            return ".".join(parts[:-depth]) if len(parts) > depth else path
        parent, _, last = path.rpartition(".")
        above = self._ms_path(tmod, parent) if parent else ""
        if above is None:
            return None
        return f"{above}.{last}" if above else last

    def _compare(self, rec: _Recorded, cell, ms_path: str, inputs, out) -> None:
        row = rec.row
        row.ms_class = f"nn.{type(cell).__name__}" if type(cell).__module__.startswith("mindspore") \
            else type(cell).__name__
        row.ms_path = ms_path
        first = next(iter(_arrays(inputs, 1)), None)
        seen = self._outputs.get(id(first)) if first is not None else None
        if seen is not None and seen[0] is first and seen[1] is rec.inputs:
            # the output of a layer compared just before (the same MindSpore tensor, and
            # the same PyTorch copy): its comparison stands for this input
            in_delta, in_same, in_ok = seen[2:]
        else:
            ms_in = _ms_numpy(first) if first is not None else None
            in_delta, in_same = _delta(rec.inputs, ms_in)
            in_ok = in_same and self._close(rec.inputs, in_delta)
        row.in_max_abs = in_delta
        ms_tensors = _arrays(out)
        worst, shape_ok, out_ok = 0.0, True, True
        for t, tensor in zip(rec.outputs, ms_tensors):
            m = _ms_numpy(tensor)
            d, same = _delta(t, m)
            if not same:
                shape_ok = False
                row.note = f"output shape {tuple(t.shape)} in PyTorch, {tuple(m.shape)} in MindSpore"
            elif d is not None:
                worst = max(worst, d)
                close = self._close(t, d)
                out_ok = out_ok and close
                self._remember(tensor, t, d, close)
        row.out_max_abs = worst if shape_ok else None
        state_bad = []
        if rec.buffers:
            from msmagic.parity_check.compare import ms_state

            state = ms_state(cell)
            tmod = self._roots[row.model]
            for b, arr in rec.buffers.items():
                try:
                    full = self.ms_name_for(tmod, f"{row.path}.{b}" if row.path else b, self.params)
                except Exception:  # noqa: BLE001
                    continue
                local = full[len(ms_path) + 1:] if ms_path and full.startswith(ms_path + ".") else full
                p = state.get(local)
                if p is None:
                    continue
                value = _ms_numpy(p)
                d, same = _delta(arr, value)
                if not same or not self._close(arr, d):
                    state_bad.append((b, local, d))
        if not shape_ok:
            row.status = SHAPE if in_ok else FOLLOWS
        elif not out_ok and in_ok and row.random:
            row.status, row.note = RANDOM, f"{row.random}: its output differs by design"
        elif not out_ok:
            row.status = DIFFERS if in_ok else FOLLOWS
        elif state_bad:
            row.status = STATE if in_ok else FOLLOWS
            b, local, d = state_bad[0]
            row.note = (f"its output matched; {b} (MindSpore {local}) after the call differs by up to {_fmt(d)}")
        else:
            row.status = MATCH

    def _remember(self, tensor, torch_arr, delta: float, close: bool) -> None:
        """Keep the comparison of a MindSpore output for the layer it feeds next (a few
        at a time: a strong reference keeps the id from being reused meanwhile)."""
        self._outputs[id(tensor)] = (tensor, torch_arr, delta, True, close)
        while len(self._outputs) > 8:
            self._outputs.pop(next(iter(self._outputs)))

    def _close(self, torch_arr, delta: Optional[float]) -> bool:
        """Is ``delta`` (a max |Δ| against ``torch_arr``) within the run's tolerance,
        ``atol + rtol * max |PyTorch value|``? (Nothing to compare is close.)"""
        import numpy as np

        if torch_arr is None or delta is None or not torch_arr.size:
            return True
        if delta <= self.atol:
            return True
        magnitude = np.abs(torch_arr)
        scale = float(magnitude.max())
        if not np.isfinite(scale):  # rare: the largest finite magnitude
            finite = magnitude[np.isfinite(magnitude)]
            scale = float(finite.max()) if finite.size else 0.0
        return delta <= self.atol + self.rtol * scale

    # ------------------------------------------------------------------ after the step

    def _give_up(self, step, exc: BaseException) -> None:
        """The drill-down itself failed (a layer it could not read): it stops, with a note
        in the statement's report, and the run goes on as without it."""
        self.enabled = self._traced = False
        self._records, self._rows, self._roots = {}, [], {}
        report = LayerReport(statement=step.index)
        report.notes.append(f"the layer drill-down stopped: {type(exc).__name__}: {exc}"[:300])
        self.reports[step.index] = report

    def _report(self, step, stopped: bool = False) -> None:
        """The statement's layer report, kept in :attr:`reports` (none when it called no
        layer of a model the MindSpore side called too)."""
        self._traced = False
        self._outputs = {}
        if not self._rows or not self._paired:
            self._records, self._rows, self._roots = {}, [], {}
            return
        rows = [r for r in self._rows if r.model in self._paired]
        report = LayerReport(statement=step.index, rows=rows, calls=self._calls)
        missing = set()
        for (name, path, call), rec in self._records.items():  # no Cell took them
            if name not in self._paired:
                continue
            if stopped:
                rec.row.status, rec.row.note = "", "not reached: the MindSpore side stopped before it"
                continue
            rec.row.status = MISSING
            rec.row.note = "no MindSpore layer stood for it"
            missing.add(rec.row.where)
        self._records, self._rows, self._roots = {}, [], {}
        report.compared = sum(1 for r in report.rows if r.status in (MATCH, DIFFERS, FOLLOWS, SHAPE, STATE, RANDOM))
        for row in report.rows:
            if row.status in (DIFFERS, SHAPE, STATE, RANDOM):
                report.first = row
                break
        if missing and report.compared:
            shown = sorted(missing)[:6]
            report.notes.append(
                "the structures differ: no MindSpore layer stood for "
                + ", ".join(shown) + (f" and {len(missing) - len(shown)} more" if len(missing) > len(shown) else ""))
        self.reports[step.index] = report
        if report.first is not None and self.found is None:
            self.found = report


def unreplayed_randomness(module) -> str:
    """What a PyTorch layer call draws in training mode that parity cannot give the
    MindSpore side ("" for none): draws made inside a fused kernel, where no recording
    sees the mask, or noise no MindSpore port takes."""
    if not getattr(module, "training", False):
        return ""
    kind = type(module).__name__
    torch = _torch()
    p = getattr(module, "dropout", 0)
    if isinstance(module, torch.nn.MultiheadAttention) and isinstance(p, float) and p > 0:
        return (f"{kind} draws its attention-weight dropout (p={p:g}) inside PyTorch's attention kernel, "
                "where its masks cannot be recorded; build it with dropout=0 to compare the rest")
    if isinstance(module, torch.nn.RNNBase) and isinstance(p, float) and p > 0 and module.num_layers > 1:
        return (f"{kind} draws its dropout between layers (p={p:g}) inside PyTorch's recurrent kernel, where "
                "its masks cannot be recorded; build it with dropout=0 to compare the rest")
    if isinstance(module, (torch.nn.AlphaDropout, torch.nn.FeatureAlphaDropout)) and module.p > 0:
        return f"{kind} draws alpha-dropout noise that no MindSpore port takes"
    if isinstance(module, torch.nn.RReLU):
        return f"{kind} draws a random negative slope per element in training mode"
    return ""


def _child_path(parent_path: Optional[str], parent, cell) -> Optional[str]:
    """The path of ``cell`` under the Cell that is calling it, for a child
    ``cells_and_names`` leaves out (MindSpore skips an empty ``SequentialCell``)."""
    if parent_path is None:
        return None
    for attr, child in getattr(parent, "_cells", {}).items():
        if child is cell:
            return f"{parent_path}.{attr}" if parent_path else attr
    return None


def _torch():
    import torch

    return torch


def _name_in(ns: dict, obj) -> Optional[str]:
    """The name ``ns`` holds ``obj`` under (or ``name[i]``/``name[key]`` for one held in a
    list, tuple or dict), None when it holds it nowhere."""
    for name, value in ns.items():
        if value is obj and not name.startswith("_"):
            return name
    for name, value in ns.items():
        if name.startswith("_"):
            continue
        if isinstance(value, (list, tuple)):
            for i, v in enumerate(value[:64]):
                if v is obj:
                    return f"{name}[{i}]"
        elif isinstance(value, dict):
            for k, v in list(value.items())[:64]:
                if v is obj:
                    return f"{name}[{k!r}]"
    return None


def _unnamed_match(torch_roots: dict, taken_names) -> Optional[str]:
    """An unnamed PyTorch model (``#k``, built in the statement) for the next unnamed
    MindSpore one, in the order each side first called them (``taken_names``: the names
    the MindSpore side paired so far)."""
    taken = set(taken_names)
    for name in torch_roots:
        if name.startswith("#") and name not in taken:
            return name
    return None


def layer_table(report: LayerReport, limit: Optional[int] = 40) -> list[LayerRow]:
    """The rows to show, as a call tree (a parent before its children): the first call of
    each layer, and its later calls where they did not match; at most ``limit`` of them,
    a window around the first divergent layer when it lies further down."""
    rows = sorted(report.rows, key=lambda r: r.start)
    shown, seen = [], set()
    for row in rows:
        key = (row.model, row.path)
        if key in seen and row.status in (MATCH, ""):
            continue
        seen.add(key)
        shown.append(row)
    if limit is None or len(shown) <= limit:
        return shown
    if report.first is not None and report.first in shown[limit:]:
        # a window around the first divergent layer, so the table shows it (and the
        # model's own row first)
        at = shown.index(report.first)
        start = max(1, min(at - limit // 2, len(shown) - limit + 1))
        return shown[:1] + shown[start:start + limit - 1]
    return shown[:limit]

