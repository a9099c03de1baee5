"""Stage: compare. What the two sides hold, value against value.

Statuses, the :class:`Row` of the report's table, conversion of either framework's
tensors to NumPy, and the comparison of a name (a value, or a module through its
parameters and buffers). numpy, torch and mindspore are imported inside the functions:
importing this module (the report and the renderers read its constants) costs nothing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Optional

__all__ = [
    "MATCH",
    "DIFFERS",
    "ONLY_TORCH",
    "ONLY_MS",
    "NOT_COMPARABLE",
    "OUTPUT_NAME",
    "Row",
    "compare_values",
    "compare_name",
    "compare_module",
    "to_numpy",
    "to_mindspore",
]

MATCH = "match"
DIFFERS = "differs"
ONLY_TORCH = "only on PyTorch side"
ONLY_MS = "only on MindSpore side"
NOT_COMPARABLE = "not comparable"

#: the row of the cell's last expression (what the plain cell would display)
OUTPUT_NAME = "<cell output>"

#: torch buffers with no MindSpore counterpart: neither copied nor compared
SKIP_BUFFERS = {"num_batches_tracked"}


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
    #: a numeric sequence (a list of losses, a 1-D tensor): (PyTorch's values,
    #: MindSpore's values), at most SERIES_POINTS evenly spaced of them, for a chart
    series: Optional[tuple] = None
    #: for an optimizer's gradients row: the first parameters whose gradients differed,
    #: grouped by layer: ((MindSpore layer path, (parameter names...)), ...)
    parameters: tuple = ()


# ----------------------------------------------------------------------------- values


def is_torch_module(v) -> bool:
    try:
        import torch
    except ImportError:  # pragma: no cover
        return False
    return isinstance(v, torch.nn.Module)


def is_cell(v) -> bool:
    try:
        import mindspore
    except ImportError:  # pragma: no cover
        return False
    return isinstance(v, mindspore.nn.Cell)


def is_tensor_like(v) -> bool:
    return to_numpy(v) is not None


def to_numpy(v):
    """A NumPy array for a tensor of either framework or an array; None otherwise."""
    import numpy as np

    if isinstance(v, type):  # a class (``f = torch.tensor`` ports to mindspore.Tensor)
        return None
    mod = type(v).__module__
    if mod.startswith("torch") and hasattr(v, "detach"):  # not torch.device/dtype
        t = v.detach().cpu()
        if str(t.dtype) == "torch.bfloat16":
            t = t.float()
        # a lazy conjugate or negation (``x.conj()``, ``torch.fft.ihfft``) is a view with a
        # bit set that ``numpy()`` refuses: its values are materialised first
        return t.resolve_conj().resolve_neg().numpy()
    # a MindSpore Parameter's class is created dynamically: its __module__ is "abc"
    if hasattr(v, "asnumpy"):
        return v.asnumpy()
    if isinstance(v, np.ndarray):
        return v
    if isinstance(v, np.generic):
        return np.asarray(v)
    return None


def to_mindspore(v, name: str = "Parameter"):
    """A MindSpore tensor of ``v``'s values; a torch ``nn.Parameter`` becomes a MindSpore
    Parameter (named ``name``, ``requires_grad`` kept)."""
    import mindspore

    arr = to_numpy(v)
    if arr is None:
        return v
    if _is_torch_parameter(v):
        return mindspore.Parameter(mindspore.Tensor(arr), name=name, requires_grad=bool(v.requires_grad))
    return mindspore.Tensor(arr)


def put_values(target, data, in_forward: bool = False) -> None:
    """Give a MindSpore Parameter or tensor ``data``'s values in its own storage.

    ``set_data`` gives a Parameter new storage, and an optimizer that has already stepped
    it goes on updating the old one, so its next steps are lost to the model (seen on 2.10
    with SGD and momentum). ``copy_`` writes into the storage in use; but it is refused
    while a differentiated forward pass runs (lazily, when a value is next read), so a
    copy made there (``in_forward``: a model's first call, which may run inside
    ``value_and_grad``) goes through the ``Assign`` primitive, which a later
    ``Cell.to(dtype)`` does not follow. A plain tensor takes ``assign_value``, or
    ``.data =`` when it was given to a ``grad`` call (which refuses ``assign_value``)."""
    import mindspore

    if isinstance(target, mindspore.Parameter):
        if in_forward:
            mindspore.ops.Assign()(target, data)
        else:
            target.copy_(data)
        return
    try:
        target.assign_value(data)
    except RuntimeError:
        target.data = data


def _is_torch_parameter(v) -> bool:
    torch = __import__("sys").modules.get("torch")
    return torch is not None and isinstance(v, torch.nn.Parameter)


def comparable(v) -> bool:
    if isinstance(v, bool) or isinstance(v, (int, float)):
        return True
    if to_numpy(v) is not None:
        return True
    if isinstance(v, (list, tuple)):
        return len(v) > 0 and all(comparable(x) for x in v)
    if isinstance(v, dict):
        return len(v) > 0 and all(comparable(x) for x in v.values())
    return False


def torch_state(tmod):
    """A torch module's parameters and buffers (without the ones MindSpore lacks)."""
    for name, p in tmod.named_parameters():
        yield name, p
    for name, b in tmod.named_buffers():
        if name.rsplit(".", 1)[-1] not in SKIP_BUFFERS and b is not None:
            yield name, b


def ms_state(cell) -> dict:
    """MindSpore parameters and (2.x Cells have them) registered buffers, by name."""
    state = dict(cell.parameters_and_names())
    if hasattr(cell, "named_buffers"):
        for name, buf in cell.named_buffers():
            state.setdefault(name, buf)
    return state


# ----------------------------------------------------------------------------- comparing


def _same_name(tmod, torch_name: str) -> str:
    return torch_name


def compare_name(name, tns, mns, rtol, atol, statement, ms_name: Callable = _same_name) -> list[Row]:
    """Rows for ``name`` in the two namespaces. ``ms_name(torch_module, parameter)``: the
    MindSpore name of a module's parameter (see :func:`msmagic.parity_check.sync.ms_name_for`)."""
    if name not in tns and name not in mns:
        return []
    if name not in mns:
        return [Row(name, ONLY_TORCH, statement=statement)] if comparable(tns[name]) else []
    if name not in tns:
        return [Row(name, ONLY_MS, statement=statement)] if comparable(mns[name]) else []
    tv, mv = tns[name], mns[name]
    if type(tv).__module__.startswith("torch.optim") and is_cell(mv):
        return []  # optimizers (Cells in MindSpore) show through the parameters they update
    if type(tv).__module__.startswith("torch.distributions") and is_cell(mv):
        return []  # a distribution (a parameterless Cell in MindSpore) shows through its values
    if is_torch_module(tv) or is_cell(mv):
        if is_torch_module(tv) and is_cell(mv):
            return compare_module(name, tv, mv, rtol, atol, statement, ms_name)
        if is_torch_module(tv) and next(torch_state(tv), None) is None:
            return []  # a stateless layer (a loss, an activation): nothing to compare
        if is_torch_module(tv) and not list(tv.parameters()) and callable(mv) and not is_cell(mv):
            return []  # a loss ported to a function (its weight is a constant): compared by its values
        if not is_torch_module(tv) and callable(tv) and is_cell(mv) and not list(mv.get_parameters()):
            return []  # a function ported to a parameterless Cell (torch.exp -> exp_in_float64): by its values
        return [Row(name, NOT_COMPARABLE, statement=statement, note="module on one side only")]
    if not (comparable(tv) or comparable(mv)):
        return []
    return [compare_values(name, tv, mv, rtol, atol, statement)]


def compare_module(name, tmod, cell, rtol, atol, statement, ms_name: Callable = _same_name) -> list[Row]:
    rows = []
    ms_params = ms_state(cell)
    for pname, value in torch_state(tmod):
        target = ms_name(tmod, pname)
        full = f"{name}.{pname}"
        if target not in ms_params:
            rows.append(Row(full, ONLY_TORCH, statement=statement, note=f"no MindSpore parameter {target}"))
            continue
        mv = ms_params[target]
        arr_t, arr_m = to_numpy(value), mv.asnumpy()
        if arr_t.shape != arr_m.shape and arr_t.size == arr_m.size:
            arr_m = arr_m.reshape(arr_t.shape)
        rows.append(compare_values(full, arr_t, arr_m, rtol, atol, statement,
                                   shapes=(tuple(value.shape), tuple(mv.shape)),
                                   dtypes=(str(value.dtype), str(mv.dtype)), series=False))
    return rows


def draw_mismatch(name: str, torch_value, ms_value, statement: int) -> Optional[Row]:
    """A row when a random draw copied across had another shape or dtype on the
    MindSpore side (a porting error); None when the draws agree in kind."""
    t_arr = to_numpy(torch_value)
    m_arr = to_numpy(ms_value) if ms_value is not None else None
    if t_arr is None or m_arr is None:
        return None
    if t_arr.shape == m_arr.shape and _kind(str(t_arr.dtype)) == _kind(str(m_arr.dtype)):
        return None
    return Row(name, DIFFERS, tuple(t_arr.shape), _dtype(torch_value), tuple(m_arr.shape),
               _dtype(ms_value), statement=statement,
               note="random values synchronised, but the MindSpore draw had another shape or dtype")


def _flatten(v, prefix=""):
    if isinstance(v, dict):
        for k in v:
            yield from _flatten(v[k], f"{prefix}[{k!r}]")
    elif isinstance(v, (list, tuple)) and not hasattr(v, "shape"):
        for i, x in enumerate(v):
            yield from _flatten(x, f"{prefix}[{i}]")
    else:
        yield prefix, v


def compare_values(name, tv, mv, rtol, atol, statement=-1, shapes=None, dtypes=None,
                   series: bool = True) -> Row:
    """The row comparing ``tv`` with ``mv``; ``series``: keep a numeric sequence's values
    for its chart (not for module parameters)."""
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
        if not (
            (xa.dtype == bool or np.issubdtype(xa.dtype, np.number))
            and (xb.dtype == bool or np.issubdtype(xb.dtype, np.number))
        ):
            ok = ok and bool(np.all(xa == xb))
            continue
        part_abs, part_rel, part_ok = _compare_arrays(xa, xb, rtol, atol)
        max_abs, max_rel, ok = max(max_abs, part_abs), max(max_rel, part_rel), ok and part_ok
    row.max_abs, row.max_rel = max_abs, max_rel
    row.series = _series(tparts, mparts) if series else None
    if not ok:
        row.status = DIFFERS
    if tdt and mdt and _kind(tdt) != _kind(mdt):
        row.status = DIFFERS
        row.note = (row.note + f" dtype {tdt} vs {mdt}").strip()
    return row


#: elements compared at a time: the float64 temporaries of a comparison are a few
#: times this, not a few times the tensor (two 256 MB float32 tensors took 3.5 GB)
COMPARE_CHUNK = 1 << 20


def _compare_arrays(xa, xb, rtol, atol) -> tuple[float, float, bool]:
    """(max abs difference, max relative difference, all close) of two numeric arrays of
    one shape, compared in float64 (complex128 for complex values: a cast to float64
    would keep only the real parts, and an imaginary part of the wrong sign would
    match) chunk by chunk of :data:`COMPARE_CHUNK` elements. NaN on both sides is
    equal, as are equal infinities; ``max_abs`` is infinite when no element gives a
    difference (all NaN)."""
    import numpy as np

    ra, rb = np.ravel(xa), np.ravel(xb)  # views unless the array is not contiguous
    bools = xa.dtype == bool or xb.dtype == bool
    wide = np.complex128 if np.iscomplexobj(xa) or np.iscomplexobj(xb) else np.float64
    if not ra.size:
        return 0.0, 0.0, True

    def chunks(r):
        for start in range(0, r.size, COMPARE_CHUNK):
            part = r[start : start + COMPARE_CHUNK]
            yield (part.astype(np.int64) if bools else part).astype(wide)

    rms = _rms(chunks(ra), ra.size) if ra.size > 1 and np.issubdtype(xa.dtype, np.inexact) else None
    max_abs, max_rel, ok, any_difference = 0.0, 0.0, True, False
    for fa, fb in zip(chunks(ra), chunks(rb)):
        with np.errstate(invalid="ignore"):
            d = np.abs(fa - fb)
        same = (np.isnan(fa) & np.isnan(fb)) | (fa == fb)  # equal infinities too
        d = np.where(same, 0.0, d)
        if not np.all(np.isnan(d)):
            any_difference = True
            max_abs = max(max_abs, float(np.nanmax(d)))
        mag = np.abs(fa)
        denom = np.maximum(mag, 1e-12)
        max_rel = max(max_rel, float(np.nanmax(d / denom)))
        if rms is not None:
            mag = np.maximum(mag, rms)
        with np.errstate(invalid="ignore"):
            close = same | (d <= atol + rtol * mag)  # NaN on both sides: equal
        if not np.all(close) or np.any(np.isnan(fa) != np.isnan(fb)):
            ok = False
    return (max_abs if any_difference else math.inf), max_rel, ok


def _rms(chunks, size: int) -> Optional[float]:
    """The RMS magnitude of the finite elements, or None. What ``rtol`` is relative to,
    per element, is the element's magnitude, and for a floating-point tensor at least
    this RMS magnitude: a sum of products (a matmul, a gradient) carries a rounding error
    proportional to the magnitudes summed, not to the result: an element that cancels
    to nearly 0 in a tensor of hundreds differs between two correct float32
    computations by far more than ``rtol`` times itself."""
    import numpy as np

    total, count = 0.0, 0
    for fa in chunks:
        mag = np.abs(fa)
        finite = mag[np.isfinite(mag)]
        total += float(np.sum(finite ** 2))
        count += finite.size
    return float(np.sqrt(total / count)) if count else None


#: the most points of a sequence kept for its chart
SERIES_POINTS = 400
#: the fewest values that make a sequence worth a chart
SERIES_MIN = 8


def _series(tparts: list, mparts: list) -> Optional[tuple]:
    """Both sides of a 1-D numeric sequence as lists of floats (evenly thinned to
    ``SERIES_POINTS``), or None: a list or tuple of numbers (or of one-element tensors),
    or one 1-D tensor or array."""
    import numpy as np

    def values(parts):
        if len(parts) == 1:
            arr = _as_array(parts[0][1])
            if arr is None or arr.ndim != 1:
                return None
            return arr
        out = []
        for _, v in parts:
            arr = _as_array(v)
            if arr is None or arr.size != 1:
                return None
            out.append(arr.reshape(()))
        return np.asarray(out)

    a, b = values(tparts), values(mparts)
    if a is None or b is None or a.shape != b.shape or a.size < SERIES_MIN:
        return None
    if not (np.issubdtype(a.dtype, np.number) and np.issubdtype(b.dtype, np.number)):
        return None
    if a.dtype == bool or b.dtype == bool or np.iscomplexobj(a) or np.iscomplexobj(b):
        return None
    index = np.unique(np.linspace(0, a.size - 1, min(a.size, SERIES_POINTS)).round().astype(int))
    return ([float(x) for x in a.astype(np.float64)[index]],
            [float(x) for x in b.astype(np.float64)[index]])


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
    """float32 / Float32 / torch.float32 -> 'float32'; python types stay as they are, but
    every mapping is a 'dict': a state dict is an OrderedDict in PyTorch and MindSpore's
    load_checkpoint returns a plain dict of the same entries."""
    d = dtype.lower().replace("torch.", "").replace("mindspore.", "")
    return {"float": "float", "int": "int", "bool": "bool", "bool_": "bool",
            "ordereddict": "dict", "defaultdict": "dict"}.get(d, d)
