"""Run a PyTorch cell and its MindSpore port side by side and compare what they bound.

This is the engine room of parity checking. ``run_pair`` executes the two versions top-level
statement by top-level statement (the port's ``statements`` links say which output
statements came from which input statement). After each step it synchronises:

* a PyTorch module bound to a name whose MindSpore value is a Cell gets its parameters
  and buffers copied into that Cell (by structure: Linear/Dense weight and bias,
  BatchNorm weight/bias/running stats -> gamma/beta/moving_mean/moving_variance,
  Embedding weight -> embedding_table, ...), once, when the name is bound to a new
  module, so random initialisation does not show up as a difference while training
  still does;
* a value bound by a statement the port tagged ``random`` (``torch.randn``...) is copied
  to the MindSpore side.

Everything else is compared, never overwritten. torch and mindspore are imported here,
lazily, never by ``%load_ext`` or ``%%ms_port``.
"""

from __future__ import annotations

import ast
import math
import time
from dataclasses import dataclass, field
from typing import Any, Optional

MATCH = "match"
DIFFERS = "differs"
ONLY_TORCH = "only on PyTorch side"
ONLY_MS = "only on MindSpore side"
NOT_COMPARABLE = "not comparable"

#: leaf parameter names that differ: (torch layer class name prefix, torch name) -> MindSpore name
_LEAF_NAMES = {
    "BatchNorm": {"weight": "gamma", "bias": "beta", "running_mean": "moving_mean",
                  "running_var": "moving_variance"},
    "Embedding": {"weight": "embedding_table"},
    "LayerNorm": {"weight": "gamma", "bias": "beta"},
    "GroupNorm": {"weight": "gamma", "bias": "beta"},
}
_SKIP_BUFFERS = {"num_batches_tracked"}


@dataclass
class Row:
    name: str
    status: str
    torch_shape: Optional[tuple] = None
    torch_dtype: str = ""
    ms_shape: Optional[tuple] = None
    ms_dtype: str = ""
    max_abs: Optional[float] = None
    max_rel: Optional[float] = None
    statement: int = -1  # input statement that last bound the name
    note: str = ""


@dataclass
class PairRun:
    port: Any
    torch_ns: dict
    ms_ns: dict
    rows: list[Row] = field(default_factory=list)
    synchronised: list[str] = field(default_factory=list)
    torch_error: Optional[BaseException] = None
    ms_error: Optional[BaseException] = None
    error_statement: Optional[int] = None
    timings: dict = field(default_factory=lambda: {"torch": 0.0, "mindspore": 0.0})

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
    rtol: float = 1e-5,
    atol: float = 1e-6,
    torch_ns: Optional[dict] = None,
    ms_ns: Optional[dict] = None,
) -> PairRun:
    """Port ``torch_src`` (or take ``ms_src``), run both in lockstep, compare.

    ``names``: compare only these (default: every name a statement binds, plus the
    parameters and buffers of every module bound by name).
    """
    import msmagic

    result = msmagic.port(torch_src) if ms_src is None else None
    steps = _steps(torch_src, ms_src, result)
    tns = torch_ns if torch_ns is not None else {"__name__": "__msmagic_torch__"}
    mns = ms_ns if ms_ns is not None else {"__name__": "__msmagic_mindspore__"}
    run = PairRun(port=result, torch_ns=tns, ms_ns=mns)
    bound_by: dict[str, int] = {}
    synced_modules: dict[str, int] = {}
    random_stmts = {e.statement for e in (result.edits if result else []) if "random" in e.tags}
    for index, (tcode, mcode, bound) in enumerate(steps):
        if tcode:
            t0 = time.perf_counter()
            try:
                exec(compile(tcode, f"<pytorch statement {index + 1}>", "exec"), tns)
            except BaseException as exc:  # noqa: BLE001 - reported, not raised
                run.torch_error, run.error_statement = exc, index
                break
            finally:
                run.timings["torch"] += time.perf_counter() - t0
        if mcode:
            t0 = time.perf_counter()
            try:
                exec(compile(mcode, f"<mindspore statement {index + 1}>", "exec"), mns)
            except BaseException as exc:  # noqa: BLE001
                run.ms_error, run.error_statement = exc, index
                break
            finally:
                run.timings["mindspore"] += time.perf_counter() - t0
        for n in bound:
            bound_by[n] = index
        if sync:
            for n in bound:
                if n in tns and n in mns and _is_torch_module(tns[n]) and _is_cell(mns[n]):
                    if synced_modules.get(n) != id(tns[n]):
                        sync_module(tns[n], mns[n])
                        synced_modules[n] = id(tns[n])
                        run.synchronised.append(f"{n} (parameters)")
                elif index in random_stmts and n in tns and _is_tensor_like(tns[n]):
                    mns[n] = to_mindspore(tns[n])
                    run.synchronised.append(n)
    wanted = names if names is not None else list(bound_by)
    for n in wanted:
        if n.startswith("_"):
            continue
        run.rows.extend(compare_name(n, tns, mns, rtol, atol, bound_by.get(n, -1)))
    return run


# ----------------------------------------------------------------------------- steps


def _steps(torch_src: str, ms_src: Optional[str], result) -> list[tuple[str, str, list[str]]]:
    tstmts = _split(torch_src)
    if ms_src is not None:
        mstmts = _split(ms_src)
        # explicit MindSpore code: pair statements in order, extra ones run last
        n = max(len(tstmts), len(mstmts))
        out = []
        for i in range(n):
            t = tstmts[i] if i < len(tstmts) else ("", [])
            m = mstmts[i] if i < len(mstmts) else ("", [])
            out.append((t[0], m[0], sorted(set(t[1]) | set(m[1]))))
        return out
    code_lines = result.code.splitlines(keepends=True)
    linked = [s for s in result.statements]
    used = set()
    for s in linked:
        if s.after:
            used.update(range(s.after[0], s.after[1] + 1))
    out = []
    pending_extra: list[int] = []
    # output lines not linked to any input statement (added imports) run before the
    # first linked statement that follows them
    extra_lines = [i for i in range(1, len(code_lines) + 1) if i not in used]
    for idx, (tcode, tnames) in enumerate(tstmts):
        link = linked[idx] if idx < len(linked) else None
        mcode = ""
        if link and link.after:
            start = link.after[0]
            pending_extra = [i for i in extra_lines if i < start]
            extra_lines = [i for i in extra_lines if i >= start]
            pre = "".join(code_lines[i - 1] for i in pending_extra)
            body = "".join(code_lines[link.after[0] - 1: link.after[1]])
            mcode = _dedent_safe(pre) + body
        out.append((tcode, mcode, tnames))
    if extra_lines and out:
        tail = "".join(code_lines[i - 1] for i in extra_lines)
        t, m, b = out[-1]
        out[-1] = (t, m + tail, b)
    return out


def _dedent_safe(text: str) -> str:
    return "\n".join(l for l in text.splitlines() if l.strip()) + ("\n" if text.strip() else "")


def _split(src: str) -> list[tuple[str, list[str]]]:
    """Top-level statements of ``src`` with the names each binds."""
    tree = ast.parse(src)
    lines = src.splitlines(keepends=True)
    out = []
    for node in tree.body:
        start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
        text = "".join(lines[start - 1: node.end_lineno])
        out.append((text, sorted(_bound_names(node))))
    return out


def _bound_names(node: ast.stmt) -> set[str]:
    names: set[str] = set()

    def targets(t):
        if isinstance(t, ast.Name):
            names.add(t.id)
        elif isinstance(t, (ast.Tuple, ast.List)):
            for e in t.elts:
                targets(e)
        elif isinstance(t, ast.Starred):
            targets(t.value)

    if isinstance(node, ast.Assign):
        for t in node.targets:
            targets(t)
    elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
        targets(node.target)
    elif isinstance(node, (ast.For, ast.AsyncFor)):
        targets(node.target)
        for sub in node.body + node.orelse:
            names |= _bound_names(sub)
    elif isinstance(node, (ast.If, ast.While, ast.With, ast.Try)):
        for sub in getattr(node, "body", []) + getattr(node, "orelse", []):
            names |= _bound_names(sub)
        for h in getattr(node, "handlers", []):
            for sub in h.body:
                names |= _bound_names(sub)
        for sub in getattr(node, "finalbody", []):
            names |= _bound_names(sub)
    return names


# ----------------------------------------------------------------------------- values


def _is_torch_module(v) -> bool:
    try:
        import torch
    except ImportError:  # pragma: no cover
        return False
    return isinstance(v, torch.nn.Module)


def _is_cell(v) -> bool:
    try:
        import mindspore
    except ImportError:  # pragma: no cover
        return False
    return isinstance(v, mindspore.nn.Cell)


def _is_tensor_like(v) -> bool:
    return to_numpy(v) is not None


def to_numpy(v):
    """A NumPy array for a tensor of either framework or an array; None otherwise."""
    import numpy as np

    mod = type(v).__module__
    if mod.startswith("torch") and hasattr(v, "detach"):  # not torch.device/dtype
        t = v.detach().cpu()
        if str(t.dtype) == "torch.bfloat16":
            t = t.float()
        return t.numpy()
    # a MindSpore Parameter's class is created dynamically: its __module__ is "abc"
    if hasattr(v, "asnumpy"):
        return v.asnumpy()
    if isinstance(v, np.ndarray):
        return v
    if isinstance(v, np.generic):
        return np.asarray(v)
    return None


def to_mindspore(v):
    import mindspore

    arr = to_numpy(v)
    return mindspore.Tensor(arr) if arr is not None else v


def sync_module(tmod, cell) -> list[str]:
    """Copy a torch module's parameters and buffers into the matching MindSpore Cell."""
    import mindspore

    copied = []
    ms_params = dict(cell.parameters_and_names())
    for name, value in _torch_state(tmod):
        ms_name = ms_name_for(tmod, name)
        p = ms_params.get(ms_name)
        if p is None:
            continue
        arr = value.detach().cpu().numpy()
        if tuple(p.shape) != arr.shape:
            if p.size != arr.size:
                continue
            arr = arr.reshape(p.shape)
        p.set_data(mindspore.Tensor(arr, dtype=p.dtype))
        copied.append(name)
    return copied


def _torch_state(tmod):
    for name, p in tmod.named_parameters():
        yield name, p
    for name, b in tmod.named_buffers():
        if name.rsplit(".", 1)[-1] not in _SKIP_BUFFERS and b is not None:
            yield name, b


def ms_name_for(tmod, torch_name: str) -> str:
    """The MindSpore parameter name of the torch parameter/buffer ``torch_name``."""
    path, _, leaf = torch_name.rpartition(".")
    owner = tmod.get_submodule(path) if path else tmod
    cls = type(owner).__name__
    for prefix, table in _LEAF_NAMES.items():
        if cls.startswith(prefix) and leaf in table:
            leaf = table[leaf]
            break
    return f"{path}.{leaf}" if path else leaf


def compare_name(name, tns, mns, rtol, atol, statement) -> list[Row]:
    if name not in tns and name not in mns:
        return []
    if name not in mns:
        return [Row(name, ONLY_TORCH, statement=statement)] if _comparable(tns[name]) else []
    if name not in tns:
        return [Row(name, ONLY_MS, statement=statement)] if _comparable(mns[name]) else []
    tv, mv = tns[name], mns[name]
    if type(tv).__module__.startswith("torch.optim") and _is_cell(mv):
        return []  # optimizers (Cells in MindSpore) show through the parameters they update
    if _is_torch_module(tv) or _is_cell(mv):
        if _is_torch_module(tv) and _is_cell(mv):
            return compare_module(name, tv, mv, rtol, atol, statement)
        return [Row(name, NOT_COMPARABLE, statement=statement, note="module on one side only")]
    if not (_comparable(tv) or _comparable(mv)):
        return []
    return [compare_values(name, tv, mv, rtol, atol, statement)]


def compare_module(name, tmod, cell, rtol, atol, statement) -> list[Row]:
    rows = []
    ms_params = dict(cell.parameters_and_names())
    for pname, value in _torch_state(tmod):
        ms_name = ms_name_for(tmod, pname)
        full = f"{name}.{pname}"
        if ms_name not in ms_params:
            rows.append(Row(full, ONLY_TORCH, statement=statement, note=f"no MindSpore parameter {ms_name}"))
            continue
        mv = ms_params[ms_name]
        arr_t, arr_m = to_numpy(value), mv.asnumpy()
        if arr_t.shape != arr_m.shape and arr_t.size == arr_m.size:
            arr_m = arr_m.reshape(arr_t.shape)
        rows.append(compare_values(full, arr_t, arr_m, rtol, atol, statement,
                                   shapes=(tuple(value.shape), tuple(mv.shape)),
                                   dtypes=(str(value.dtype), str(mv.dtype))))
    return rows


def _comparable(v) -> bool:
    if isinstance(v, bool) or isinstance(v, (int, float)):
        return True
    if to_numpy(v) is not None:
        return True
    if isinstance(v, (list, tuple)):
        return len(v) > 0 and all(_comparable(x) for x in v)
    if isinstance(v, dict):
        return len(v) > 0 and all(_comparable(x) for x in v.values())
    return False


def _flatten(v, prefix=""):
    if isinstance(v, dict):
        for k in v:
            yield from _flatten(v[k], f"{prefix}[{k!r}]")
    elif isinstance(v, (list, tuple)) and not hasattr(v, "shape"):
        for i, x in enumerate(v):
            yield from _flatten(x, f"{prefix}[{i}]")
    else:
        yield prefix, v


def compare_values(name, tv, mv, rtol, atol, statement=-1, shapes=None, dtypes=None) -> Row:
    import numpy as np

    tparts, mparts = list(_flatten(tv)), list(_flatten(mv))
    tshape = shapes[0] if shapes else _shape(tv)
    mshape = shapes[1] if shapes else _shape(mv)
    tdt = dtypes[0] if dtypes else _dtype(tv)
    mdt = dtypes[1] if dtypes else _dtype(mv)
    row = Row(name, MATCH, tshape, tdt, mshape, mdt, statement=statement)
    if [p for p, _ in tparts] != [p for p, _ in mparts]:
        row.status, row.note = NOT_COMPARABLE, "different structure"
        return row
    max_abs = 0.0
    max_rel = 0.0
    ok = True
    for (_, a), (_, b) in zip(tparts, mparts):
        xa, xb = _as_array(a), _as_array(b)
        if xa is None or xb is None:
            if a != b:
                ok = False
            continue
        if xa.shape != xb.shape:
            row.status, row.note = DIFFERS, f"shape {xa.shape} vs {xb.shape}"
            return row
        if xa.dtype == bool or xb.dtype == bool:
            xa, xb = xa.astype(np.int64), xb.astype(np.int64)
        if not (np.issubdtype(xa.dtype, np.number) and np.issubdtype(xb.dtype, np.number)):
            ok = ok and bool(np.all(xa == xb))
            continue
        fa, fb = xa.astype(np.float64), xb.astype(np.float64)
        if fa.size:
            with np.errstate(invalid="ignore"):
                d = np.abs(fa - fb)
            same = (np.isnan(fa) & np.isnan(fb)) | (fa == fb)  # equal infinities too
            d = np.where(same, 0.0, d)
            max_abs = max(max_abs, float(np.nanmax(d)) if not np.all(np.isnan(d)) else math.inf)
            denom = np.maximum(np.abs(fa), 1e-12)
            max_rel = max(max_rel, float(np.nanmax(d / denom)))
            if not np.all(d <= atol + rtol * np.abs(fa)) or np.any(np.isnan(fa) != np.isnan(fb)):
                ok = False
    row.max_abs, row.max_rel = max_abs, max_rel
    if not ok:
        row.status = DIFFERS
    if tdt and mdt and _kind(tdt) != _kind(mdt):
        row.status = DIFFERS
        row.note = (row.note + f" dtype {tdt} vs {mdt}").strip()
    return row


def _as_array(v):
    import numpy as np

    arr = to_numpy(v)
    if arr is not None:
        return np.asarray(arr)
    if isinstance(v, (bool, int, float)):
        return np.asarray(v)
    return None


def _shape(v):
    if hasattr(v, "shape"):
        return tuple(v.shape)
    if isinstance(v, (list, tuple)):
        return (len(v),)
    return ()


def _dtype(v) -> str:
    if hasattr(v, "dtype"):
        return str(v.dtype)
    if isinstance(v, tuple):  # torch.Size is a tuple
        return "tuple"
    return type(v).__name__


def _kind(dtype: str) -> str:
    """float32 / Float32 / torch.float32 -> 'float32'; python types stay as they are."""
    d = dtype.lower().replace("torch.", "").replace("mindspore.", "")
    return {"float": "float", "int": "int", "bool": "bool", "bool_": "bool"}.get(d, d)
