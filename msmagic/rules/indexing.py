"""Indexing, gathering and scattering: einsum, gather/take_along_dim, scatter,
scatter_add, index_add, median, equal, count_nonzero and multinomial (IDX)."""

from __future__ import annotations

import libcst as cst

from msmagic.engine.spec import TENSOR, api, method, statement_hook, subscript_hook
from msmagic.rules._util import is_pure, truthy_literal
from msmagic.rules.api_table import _rebind
from msmagic.rules.registry import register

GROUP = "Indexing, gathering and scattering"
SEED = "seeds/002 API Comparison › functional APIs"
REF = "r2.4.10/api_mapping/pytorch_api_mapping.md"
OUT = {"out": "MindSpore functions return new tensors"}

register(
    "IDX001",
    "torch.einsum has no CPU kernel in MindSpore 2.10",
    group=GROUP,
    finding_only=True,
    why="""
        The mapping table lists ``mindspore.ops.einsum`` as consistent with ``torch.einsum``,
        but the installed CPU build has no ``Einsum`` kernel: every call raises "Unsupported
        op [Einsum] on CPU". The call is left as PyTorch and flagged; rewrite it with
        ``ops.matmul``, ``ops.bmm``, ``ops.mul`` + ``ops.sum`` and ``ops.transpose`` (or run on
        GPU/Ascend, where the kernel exists).
    """,
    seed=SEED,
    reference=f"{REF} (torch.einsum listed as consistent)",
    installed_note="Verified on 2.10 (CPU): ops.einsum('ij,kj->ik', a, a) raises 'Unsupported op [Einsum] on CPU'.",
    example="""
        import torch
        a = torch.ones(2, 3)
        b = torch.einsum("ij,kj->ik", a, a)
    """,
)

register(
    "IDX002",
    "gather and take_along_dim become ops.gather_elements",
    group=GROUP,
    why="""
        ``torch.gather(input, dim, index)`` picks ``input`` elements along ``dim`` at
        ``index`` (same rank, possibly smaller). MindSpore's ``ops.gather`` is another
        operation (``index_select``-like, ``(params, indices, axis)``): the PyTorch
        operation is ``ops.gather_elements(input, dim, index)``, which gives the same values
        for int64 or int32 indices, also when ``index`` is smaller than ``input``.
        ``torch.take_along_dim(input, indices)`` without ``dim`` works on the flattened
        tensors and is ported as ``gather_elements`` on ``reshape(-1)``. With ``dim``,
        PyTorch broadcasts ``indices`` against ``input`` while ``gather_elements`` does not,
        so the port is exact when the indices have the input's shape outside ``dim`` (as
        from ``argsort``, ``topk`` or ``argmax(dim, keepdim=True)``) and flagged so that
        other shapes are checked. ``sparse_grad=True`` has no counterpart (flagged).
    """,
    seed=SEED,
    reference="r2.4.10/api_mapping/pytorch_api_mapping.md (torch.Tensor.gather -> Tensor.gather_elements)",
    installed_note="""
        Verified on 2.10: ops.gather_elements matches torch.gather for int64/int32 indices and
        smaller index tensors; torch.take_along_dim(x, i, dim=1) with i of shape (1, 2) on a
        (3, 4) input gives (3, 2) in PyTorch and (1, 2) with gather_elements. Tensor.gather(dim,
        index) already behaves like PyTorch's on 2.10.
    """,
    example="""
        import torch
        x = torch.tensor([[1., 5., 3.], [4., 2., 6.]])
        idx = torch.tensor([[2, 0], [1, 1]])
        g = torch.gather(x, 1, idx)
        order = torch.argsort(x, dim=1)
        s = torch.take_along_dim(x, order, dim=1)
        flat = torch.take_along_dim(x, torch.tensor([5, 0]))
    """,
)

register(
    "IDX003",
    "scatter becomes ops.scatter; reduce='add' is scatter_add",
    group=GROUP,
    why="""
        ``ops.scatter(input, axis, index, src)`` writes ``src`` (a tensor, or a float) like
        ``torch.scatter``/``Tensor.scatter``. ``Tensor.scatter`` in MindSpore accepts the same
        positional arguments but silently ignores ``reduce=`` and rejects ``value=``, so all
        forms become ``ops.scatter``; ``value=`` becomes the ``src`` argument and an integer
        literal is written as a float (the CPU kernel only takes a float scalar, also for
        integer tensors). ``reduce='add'`` is ``scatter_add`` and is ported as IDX004 ports it
        (``scatter_add_in_order``); ``reduce='multiply'`` has no CPU counterpart and is flagged.
        ``x.scatter_(...)`` becomes ``x = ops.scatter(x, ...)`` (see API003 for aliasing).
        MindSpore needs ``index`` and ``src`` of the same shape; PyTorch also accepts a
        larger ``src`` (MindSpore then raises). When several indices hit the same element
        (undefined in PyTorch too) the written value can differ from PyTorch's.
    """,
    seed=SEED,
    reference="r2.4.10/api_mapping/pytorch_diff/scatter.md",
    installed_note="""
        Verified on 2.10: ops.scatter(x, 0, idx, 3) raises (int scalar), 3.0 works on float and
        int64 tensors; Tensor.scatter(0, idx, src, reduce='add') returns the plain scatter;
        Tensor.scatter(dim=0, index=idx, value=3.0) raises; tensor_scatter_elements rejects
        reduction 'mul'; a src larger than index crashes the Scatter kernel.
    """,
    example="""
        import torch
        x = torch.zeros(3, 4)
        idx = torch.tensor([[1], [3], [0]])
        one_hot = x.scatter(1, idx, 1.0)
        y = torch.scatter(x, 1, idx, torch.tensor([[5.], [6.], [7.]]))
        x.scatter_(1, idx, 2)
    """,
)

register(
    "IDX004",
    "scatter_add sums duplicates in one thread: scatter_add_in_order",
    group=GROUP,
    why="""
        ``torch.scatter_add(input, dim, index, src)`` adds ``src`` into ``input`` at
        ``index`` along ``dim``, summing duplicates. MindSpore's ``ops.scatter_add`` is a
        different operation (``ScatterNdAdd``-like, no ``dim``), ``Tensor.scatter_add`` has
        no CPU kernel on 2.10, and ``ops.tensor_scatter_elements(..., reduction='add')``,
        the documented counterpart, is not safe with duplicate indices: its CPU kernel
        splits the elements between threads and adds them with a plain ``+=``, so two
        threads adding into the same element can lose one of the additions. That happens
        rarely and only on some runs (a 3x4 example lost 7.0 of 15.0 once, in a test run
        that passed hundreds of times). So the call becomes ``scatter_add_in_order(input,
        dim, index, src)``, a function defined in the cell: it builds the full coordinates
        of every ``index`` element and calls the ``ops.TensorScatterAdd`` primitive (the
        function ``ops.tensor_scatter_add`` is marked deprecated on 2.10), whose CPU kernel
        adds the updates one after another in index order, as PyTorch's CPU kernel does,
        for float and integer tensors. Like PyTorch, it uses only the part of ``src`` that
        ``index`` covers (``src`` may be larger). ``x.scatter_add_(...)`` becomes a
        rebinding ``x = ...`` (see API003 for aliasing).
    """,
    seed=SEED,
    reference="r2.4.10/api_mapping/pytorch_diff/scatter_add.md",
    installed_note="""
        Verified on 2.10: Tensor.scatter_add raises "The kernel ScatterAddExt unregistered";
        ops.scatter_add(x, 0, idx, src) raises TypeError (3 parameters);
        tensor_scatter_elements(reduction='add') lost an addition into a duplicated index
        once in CI (its kernel's threads add without atomics; MindSpore's source shows
        ParallelLaunchAutoSearch over a plain +=); TensorScatterAdd's CPU kernel loops over
        the updates in one thread, but has no bool kernel (bool goes through int32).
        scatter_add_in_order matches torch exactly (max|d| = 0) for 0-3 dimensions, negative
        dims, larger src, float, int64 and bool tensors (op_db: 16 samples), and gradients
        flow to src.
    """,
    example="""
        import torch
        x = torch.zeros(2, 4)
        idx = torch.tensor([[0, 0, 3], [1, 1, 1]])
        src = torch.tensor([[1., 2., 3.], [4., 5., 6.]])
        y = torch.scatter_add(x, 1, idx, src)
        z = x.scatter_add(1, idx, src)
    """,
)

register(
    "IDX005",
    "index_add sums duplicates in one thread: index_add_in_order",
    group=GROUP,
    why="""
        MindSpore's ``Tensor.index_add(dim, index, source, alpha=1)`` computes PyTorch's sum
        when it works, but on 2.10 its ``IndexAdd`` kernel requires int32 indices (PyTorch's
        int64 indices raise), overwrites the tensor it is called on even though it is not
        the in-place form, and splits the additions between threads with a plain ``+=``, so
        two threads adding into the same row (a repeated index) can lose one of them, on
        some runs only. ``torch.index_add(x, ...)``, ``x.index_add(...)`` therefore become
        ``index_add_in_order(x, dim, index, source)``, a function defined in the cell: it
        moves ``dim`` to the front and calls the ``ops.TensorScatterAdd`` primitive, whose
        CPU kernel adds the slices one after another in index order (as PyTorch's CPU
        kernel does), returns a new tensor and takes int64 or int32 indices; ``alpha``
        multiplies ``source`` first, as in PyTorch. ``x`` is left unchanged; ``x.index_add_(...)`` becomes
        ``x = index_add_in_order(x, ...)`` (see API003).
    """,
    seed=SEED,
    reference="r2.4.10/api_mapping/pytorch_api_mapping.md (torch.Tensor.index_add listed as consistent)",
    installed_note="""
        Verified on 2.10 (CPU): index_add with int64 indices raises (IndexAdd needs int32);
        x.index_add(...) modifies x itself; Tensor.index_add_ raises "The kernel
        InplaceIndexAddExt unregistered"; ops.index_add and mint.index_add share the kernel,
        whose source adds from several threads without atomics (ParallelLaunchAutoSearch over
        a plain +=). index_add_in_order matches torch exactly (max|d| = 0) for 0-3
        dimensions, negative dims, alpha, float, int64 and bool tensors (op_db: 16 samples;
        IndexAdd itself rejected int64 values), and gradients flow to both inputs.
    """,
    example="""
        import torch
        x = torch.zeros(3, 4)
        idx = torch.tensor([2, 0, 2])
        src = torch.arange(12.).reshape(3, 4)
        y = torch.index_add(x, 0, idx, src)
        z = x.index_add(0, idx, src, alpha=2)
        w = x
    """,
)

register(
    "IDX006",
    "median without dim: median of the flattened tensor, value only",
    group=GROUP,
    why="""
        ``torch.median(x)`` / ``x.median()`` return the median of all elements as one tensor
        (the lower of the two middle values for an even count). ``ops.median(x)`` and
        MindSpore's ``Tensor.median()`` work along the last axis and return a (values,
        indices) tuple, so the port computes ``ops.median(x.reshape(-1), 0)[0]``, which
        has PyTorch's lower-median convention. With ``dim``, both frameworks return
        (values, indices) with int64 indices: the call becomes ``ops.median(x, axis=dim,
        keepdims=keepdim)``; read ``.values``/``.indices`` as ``[0]``/``[1]``.
    """,
    seed=SEED,
    reference="r2.4.10/api_mapping/pytorch_diff/median.md",
    installed_note="""
        Verified on 2.10: Tensor.median() on a (2, 3) tensor returns a tuple of per-row
        medians; ops.median(x.reshape(-1), 0)[0] matches PyTorch for odd and even counts,
        int64 and float64.
    """,
    example="""
        import torch
        x = torch.tensor([[3., 1., 4.], [1., 5., 9.]])
        m = torch.median(x)
        n = x.median()
        v, i = torch.median(x, dim=1)
    """,
)

register(
    "IDX007",
    "torch.equal returns a Python bool: same shape and same values",
    group=GROUP,
    why="""
        ``torch.equal(a, b)`` / ``a.equal(b)`` answer one question with a Python ``bool``:
        do the tensors have the same shape and the same elements? MindSpore's
        ``ops.equal`` and ``Tensor.equal`` compare element by element, broadcast, and
        return a bool tensor, so ``if a.equal(b):`` would raise or, after broadcasting,
        answer another question. The port writes ``a.shape == b.shape and
        bool(ops.equal(a, b).all())`` (through a lambda when an operand is not a plain name).
        Like PyTorch, values of different dtypes compare by value and NaN is unequal.
    """,
    seed=SEED,
    reference=f"{REF} (torch.eq -> mindspore.ops.equal is elementwise)",
    installed_note="Verified on 2.10: Tensor.equal(other) returns an elementwise bool tensor.",
    example="""
        import torch
        a = torch.tensor([[1., 2.], [3., 4.]])
        same = torch.equal(a, a * 1)
        other = a.equal(a[:1])
    """,
)

register(
    "IDX008",
    "count_nonzero is counted as ops.sum(x != 0), an int64 like PyTorch",
    group=GROUP,
    why="""
        ``torch.count_nonzero`` returns int64 counts. ``ops.count_nonzero`` defaults to an
        int32 result, calls the axis ``axis``, and rejects bool tensors on 2.10 (the
        common ``count_nonzero(mask)``); ``Tensor.count_nonzero`` returns int32 and has no
        ``dim=``. ``ops.sum(x != 0, dim=dim)`` counts the same elements (NaN counts as
        nonzero, as in PyTorch) for every dtype and sums bools to int64, so the port uses it.
    """,
    seed=SEED,
    reference=f"{REF} (torch.count_nonzero: parameter names differ)",
    installed_note="""
        Verified on 2.10: ops.count_nonzero returns int32 and raises for bool input;
        Tensor.count_nonzero(dim=1) raises TypeError; ops.sum(x != 0) is int64.
    """,
    example="""
        import torch
        x = torch.tensor([[0., 1., 2.], [0., 0., 3.]])
        n = torch.count_nonzero(x)
        per_row = x.count_nonzero(dim=1)
        masked = torch.count_nonzero(x > 1)
    """,
)

register(
    "IDX009",
    "multinomial: replacement=False written out, indices cast to int64",
    group=GROUP,
    why="""
        ``ops.multinomial(input, num_samples, replacement=True)`` samples like
        ``torch.multinomial`` but defaults to sampling with replacement where PyTorch
        samples without, and returns int32 indices where PyTorch returns int64. The port
        writes ``replacement=False`` when PyTorch's call leaves it out and casts the result
        to int64. The two generators never draw the same samples, so the parity check
        copies the values across. ``generator=`` has no counterpart (flagged; seed with
        ``mindspore.set_seed``).
    """,
    seed="seeds/002 API Comparison › random",
    reference="r2.4.10/api_mapping/pytorch_diff/multinomial.md",
    installed_note="Verified on 2.10: ops.multinomial and Tensor.multinomial return int32 indices.",
    example="""
        import torch
        p = torch.tensor([0.1, 0.0, 0.6, 0.3])
        draws = torch.multinomial(p, 2)
        more = p.multinomial(3, replacement=True)
        picked = p[draws]
    """,
)


# ----------------------------------------------------------------------------- helpers


def _src(site, arg) -> str:
    return site.code(arg.value).strip()


def _atom(site, node) -> str:
    """Code of an expression, parenthesised unless it binds tighter than any operator."""
    text = site.code(node).strip()
    if isinstance(node, (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.Integer, cst.Float)) or getattr(
            node, "lpar", None):
        return text
    return f"({text})"


def _input(site, method_form: bool, name: str = "input"):
    """The (updated) input node: the receiver for a method, else the ``name`` argument."""
    if method_form:
        return site.receiver
    arg = site.arg(name)
    return None if arg is None else arg.value


def _finish(site, rule: str, text: str, detail: str, inplace_key: str = ""):
    new = site.parse(text)
    if inplace_key:
        rebound = _rebind(site, inplace_key, new)
        if rebound is None:
            return site.updated
        new = rebound
        site.changes.append("in-place: name rebound")
    site.edit(rule, new, detail=site.describe(detail))
    return new


# ----------------------------------------------------------------------------- IDX001


def _einsum(site):
    site.finding("IDX001", "MindSpore 2.10 has no CPU kernel for ops.einsum (it raises 'Unsupported op "
                 "[Einsum] on CPU'); rewrite with ops.matmul/ops.bmm/ops.sum", comment="einsum has no CPU kernel")
    return None


api("torch.einsum", rule="IDX001", handler=_einsum, returns=TENSOR)

# ----------------------------------------------------------------------------- IDX002

_SPARSE = {"sparse_grad": (truthy_literal, "MindSpore has no sparse gradient for gather_elements")}


def _gather(site):
    new = site.apply(func=site.ref("mindspore.ops.gather_elements"))
    site.edit("IDX002", new, detail=site.describe("torch.gather -> mindspore.ops.gather_elements"))
    return new


api("torch.gather", rule="IDX002", sig=("input", "dim", "index", "sparse_grad"),
    ms_sig=("input", "dim", "index"), unsupported={**_SPARSE, **OUT}, handler=_gather, returns=TENSOR)


def _take_along_dim(method_form: bool):
    def handler(site):
        if site.bound() is None:
            return None
        x = _input(site, method_form)
        idx = site.arg("indices")
        if x is None or idx is None:
            return None
        ge = site.code(site.ref("mindspore.ops.gather_elements"))
        dim = site.arg("dim")
        if dim is None or site.literal(dim.value, default=0) is None:
            text = f"{ge}({_atom(site, x)}.reshape(-1), 0, {_atom(site, idx.value)}.reshape(-1))"
            return _finish(site, "IDX002", text, "take_along_dim without dim -> gather_elements on flattened tensors")
        site.finding("IDX002", "ops.gather_elements does not broadcast indices against the input as "
                     "take_along_dim does: exact when indices have the input's shape outside dim (argsort, "
                     "topk, argmax(keepdim=True)); expand them otherwise",
                     comment="take_along_dim: indices are not broadcast")
        text = f"{ge}({site.code(x).strip()}, {_src(site, dim)}, {_src(site, idx)})"
        return _finish(site, "IDX002", text, "take_along_dim -> mindspore.ops.gather_elements")

    return handler


api("torch.take_along_dim", rule="IDX002", sig=("input", "indices", "dim"), unsupported=OUT,
    handler=_take_along_dim(False), returns=TENSOR)
method("take_along_dim", "IDX002", unambiguous=True, sig=("indices", "dim"), handler=_take_along_dim(True))

# ----------------------------------------------------------------------------- IDX003


def _scatter(method_form: bool, inplace: bool = False):
    key = "Tensor.scatter_" if inplace else "Tensor.scatter" if method_form else "torch.scatter"

    def handler(site):
        if site.bound() is None:
            return None
        x = _input(site, method_form)
        dim, index = site.arg("dim"), site.arg("index")
        src = site.arg("src") or site.arg("value")
        if x is None or dim is None or index is None or src is None:
            return None
        reduce = site.arg("reduce")
        reduce_value = None if reduce is None else site.literal(reduce.value, default="?")
        value = site.literal(src.value, default=None)
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        if reduce_value is not None and (reduce_value != "add" or number):
            site.finding("IDX003", f"reduce={site.code(reduce.value).strip()}"
                         f"{' with a scalar value' if number else ''} has no MindSpore CPU counterpart "
                         "(only reduce='add' with a tensor src is ported)",
                         comment="scatter reduce not ported")
            return None
        src_text = repr(float(value)) if number else _src(site, src)
        x_text = site.code(x).strip()
        if reduce_value == "add":
            name = _scatter_add_function(site)
            text = f"{name}({x_text}, {_src(site, dim)}, {_src(site, index)}, {src_text})"
            detail = f"{key}(reduce='add') -> {name} (duplicates summed in index order)"
        else:
            scatter = site.code(site.ref("mindspore.ops.scatter"))
            text = f"{scatter}({x_text}, {_src(site, dim)}, {_src(site, index)}, {src_text})"
            detail = f"{key} -> mindspore.ops.scatter"
        if number and src_text != _src(site, src):
            site.changes.append("scalar written as a float")
        return _finish(site, "IDX003", text, detail, key if inplace else "")

    return handler


_SCATTER_SIG = ("dim", "index", "src")
api("torch.scatter", rule="IDX003", sig=("input",) + _SCATTER_SIG, unsupported=OUT,
    handler=_scatter(False), returns=TENSOR)
method("scatter", "IDX003", sig=_SCATTER_SIG, handler=_scatter(True))
method("scatter_", "IDX003", unambiguous=True, sig=_SCATTER_SIG, handler=_scatter(True, inplace=True))

# ----------------------------------------------------------------------------- IDX004


def _scatter_add_function(site) -> str:
    ms = site.code(site.ref("mindspore"))
    ops = site.code(site.ref("mindspore.ops"))
    return site.define("scatter_add_in_order", lambda n: (
        f"def {n}(input, dim, index, src):\n"
        f'    """torch.scatter_add: src added into input at index along dim, duplicates summed one\n'
        f"    after another (MindSpore's tensor_scatter_elements kernel adds from several threads\n"
        f'    and can lose an addition); only the part of src that index covers is used."""\n'
        f"    if index.size == 0:\n"
        f"        return input.copy()\n"
        f"    if input.ndim == 0:\n"
        f"        return {n}(input.reshape(1), 0, index.reshape(1), src.reshape(-1)).reshape(())\n"
        f"    if input.dtype == {ms}.bool_:  # True + True is True\n"
        f"        return {n}(input.astype({ms}.int32), dim, index, src.astype({ms}.int32)) > 0\n"
        f"    dim = dim % input.ndim\n"
        f"    src = src[tuple(slice(0, n) for n in index.shape)]\n"
        f"    coords = list({ops}.meshgrid(*[{ops}.arange(n, dtype=index.dtype) for n in index.shape], indexing=\"ij\"))\n"
        f"    coords[dim] = index\n"
        f"    return {ops}.TensorScatterAdd()(input, {ops}.stack(coords, -1), src)\n"
    ), ("torch.scatter_add",))


def _scatter_add(method_form: bool, inplace: bool = False):
    key = "Tensor.scatter_add_" if inplace else "Tensor.scatter_add" if method_form else "torch.scatter_add"

    def handler(site):
        if site.bound() is None:
            return None
        x = _input(site, method_form)
        dim, index, src = site.arg("dim"), site.arg("index"), site.arg("src")
        if x is None or dim is None or index is None or src is None:
            return None
        name = _scatter_add_function(site)
        text = f"{name}({site.code(x).strip()}, {_src(site, dim)}, {_src(site, index)}, {_src(site, src)})"
        return _finish(site, "IDX004", text, f"{key} -> {name} (duplicates summed in index order)",
                       key if inplace else "")

    return handler


api("torch.scatter_add", rule="IDX004", sig=("input",) + _SCATTER_SIG, unsupported=OUT,
    handler=_scatter_add(False), returns=TENSOR)
method("scatter_add", "IDX004", unambiguous=True, sig=_SCATTER_SIG, handler=_scatter_add(True))
method("scatter_add_", "IDX004", unambiguous=True, sig=_SCATTER_SIG, handler=_scatter_add(True, inplace=True))

# ----------------------------------------------------------------------------- IDX005


def _index_add_function(site) -> str:
    ms = site.code(site.ref("mindspore"))
    ops = site.code(site.ref("mindspore.ops"))
    return site.define("index_add_in_order", lambda n: (
        f"def {n}(input, dim, index, source, alpha=1):\n"
        f'    """torch.index_add: alpha * source added into input at index along dim, repeated\n'
        f"    indices summed one after another (MindSpore's IndexAdd kernel adds from several\n"
        f'    threads, writes into input and needs int32 indices)."""\n'
        f"    if input.ndim == 0:\n"
        f"        return {n}(input.reshape(1), 0, index.reshape(-1), source.reshape(-1), alpha).reshape(())\n"
        f"    if input.dtype == {ms}.bool_:  # True + True is True\n"
        f"        return {n}(input.astype({ms}.int32), dim, index, source.astype({ms}.int32), alpha) > 0\n"
        f"    dim = dim % input.ndim\n"
        f"    if alpha != 1:\n"
        f"        source = source * alpha\n"
        f"    front = {ops}.movedim(input, dim, 0)\n"
        f"    front = {ops}.TensorScatterAdd()(front, index.reshape(-1, 1), {ops}.movedim(source, dim, 0))\n"
        f"    return {ops}.movedim(front, 0, dim)\n"
    ), ("torch.index_add",))


def _index_add(method_form: bool, inplace: bool = False):
    key = "Tensor.index_add_" if inplace else "Tensor.index_add" if method_form else "torch.index_add"

    def handler(site):
        if site.bound() is None:
            return None
        x = _input(site, method_form)
        dim, index, source = site.arg("dim"), site.arg("index"), site.arg("source")
        if x is None or dim is None or index is None or source is None:
            return None
        alpha = site.arg("alpha")
        alpha_text = "" if alpha is None else f", alpha={_src(site, alpha)}"
        name = _index_add_function(site)
        text = (f"{name}({site.code(x).strip()}, {_src(site, dim)}, {_src(site, index)}, "
                f"{_src(site, source)}{alpha_text})")
        return _finish(site, "IDX005", text, f"{key} -> {name} (repeated indices summed in index order)",
                       key if inplace else "")

    return handler


_INDEX_ADD_SIG = ("dim", "index", "source", "alpha")
api("torch.index_add", rule="IDX005", sig=("input",) + _INDEX_ADD_SIG, unsupported=OUT,
    handler=_index_add(False), returns=TENSOR)
method("index_add", "IDX005", unambiguous=True, sig=_INDEX_ADD_SIG, handler=_index_add(True))
method("index_add_", "IDX005", unambiguous=True, sig=_INDEX_ADD_SIG, handler=_index_add(True, inplace=True))

# ----------------------------------------------------------------------------- IDX006


def _median(method_form: bool):
    def handler(site):
        if site.bound() is None:
            return None
        x = _input(site, method_form)
        if x is None:
            return None
        median = site.code(site.ref("mindspore.ops.median"))
        dim, keepdim = site.arg("dim"), site.arg("keepdim")
        if dim is None:
            text = f"{median}({_atom(site, x)}.reshape(-1), 0)[0]"
            return _finish(site, "IDX006", text, "median of all elements -> ops.median(x.reshape(-1), 0)[0]")
        keep = "" if keepdim is None else f", keepdims={_src(site, keepdim)}"
        text = f"{median}({site.code(x).strip()}, axis={_src(site, dim)}{keep})"
        return _finish(site, "IDX006", text, "median(dim) -> ops.median(x, axis) (a (values, indices) tuple)")

    return handler


api("torch.median", rule="IDX006", sig=("input", "dim", "keepdim"), unsupported=OUT,
    handler=_median(False), returns=TENSOR)
method("median", "IDX006", sig=("dim", "keepdim"), handler=_median(True))

# ----------------------------------------------------------------------------- IDX007


def _equal(method_form: bool):
    def handler(site):
        if site.bound() is None:
            return None
        a = _input(site, method_form)
        b = site.arg("other")
        if a is None or b is None:
            return None
        eq = site.code(site.ref("mindspore.ops.equal"))

        def body(x: str, y: str) -> str:
            return f"{x}.shape == {y}.shape and bool({eq}({x}, {y}).all())"

        a_text, b_text = site.code(a).strip(), _src(site, b)
        if is_pure(a) and is_pure(b.value):
            text = f"({body(a_text, b_text)})"
        else:
            text = f"(lambda _a, _b: {body('_a', '_b')})({a_text}, {b_text})"
        return _finish(site, "IDX007", text, "equal -> same shape and all(ops.equal) (a Python bool)")

    return handler


api("torch.equal", rule="IDX007", sig=("input", "other"), handler=_equal(False), returns="bool")
method("equal", "IDX007", sig=("other",), handler=_equal(True), returns="bool")

# ----------------------------------------------------------------------------- IDX008


def _count_nonzero(method_form: bool):
    def handler(site):
        if site.bound() is None:
            return None
        x = _input(site, method_form)
        if x is None:
            return None
        dim = site.arg("dim")
        dim_text = "" if dim is None or _src(site, dim) == "None" else f", dim={_src(site, dim)}"
        text = f"{site.code(site.ref('mindspore.ops.sum'))}({_atom(site, x)} != 0{dim_text})"
        return _finish(site, "IDX008", text, "count_nonzero -> ops.sum(x != 0) (int64)")

    return handler


api("torch.count_nonzero", rule="IDX008", sig=("input", "dim"), handler=_count_nonzero(False), returns=TENSOR)
method("count_nonzero", "IDX008", unambiguous=True, sig=("dim",), handler=_count_nonzero(True))

# ----------------------------------------------------------------------------- IDX009

_GENERATOR = {"generator": "MindSpore has no per-call generator; use mindspore.set_seed"}


def _multinomial(method_form: bool):
    def handler(site):
        if site.bound() is None:
            return None
        x = _input(site, method_form)
        n = site.arg("num_samples")
        if x is None or n is None:
            return None
        for name, reason in {**_GENERATOR, **OUT}.items():
            arg = site.arg(name)
            if arg is not None and _src(site, arg) != "None":
                site.finding("IDX009", f"{name}={_src(site, arg)}: {reason}",
                             comment=f"{name}= has no MindSpore equivalent, removed")
        repl = site.arg("replacement")
        repl_text = "False" if repl is None else _src(site, repl)
        if repl is None:
            site.changes.append("added replacement=False")
        mult = site.code(site.ref("mindspore.ops.multinomial"))
        i64 = site.code(site.ref("mindspore.int64"))
        text = f"{mult}({site.code(x).strip()}, {_src(site, n)}, replacement={repl_text}).astype({i64})"
        site.changes.append("result cast to int64")
        return _finish(site, "IDX009", text, "multinomial -> mindspore.ops.multinomial")

    return handler


api("torch.multinomial", rule="IDX009", sig=("input", "num_samples", "replacement"),
    handler=_multinomial(False), random=True, returns=TENSOR)
method("multinomial", "IDX009", unambiguous=True, sig=("num_samples", "replacement"),
       handler=_multinomial(True), random=True)


# ----------------------------------------------------------------------------- index arrays

register(
    "IDX010",
    "range() and NumPy index arrays become an index list and a Tensor",
    group=GROUP,
    why="""
        PyTorch indexes a tensor with a ``range`` object (``logits[range(n), target]``, the
        classic way to pick each row's target score) and with NumPy integer or boolean
        arrays. MindSpore 2.10 raises IndexError for both. The same advanced indexing
        works with a list and with a MindSpore Tensor, so the port writes
        ``list(range(...))`` and ``mindspore.Tensor(np....)`` where the index is built in
        the subscript, or bound to a name by the last assignment before it (``idx =
        np.array(...)``, in the same block or at the top level of an earlier cell). An
        index array that arrives otherwise (a function's return value, a loop variable)
        cannot be seen: write ``mindspore.Tensor(idx)`` where a NumPy array is an index.
        A ``range`` index becomes a list even where the port cannot tell what is indexed
        (a function's parameter that no call types, ``loss_func = nll``): a NumPy array
        indexes with the list exactly as with the range.
    """,
    seed="seeds/002 API Comparison › Tensor indexing",
    reference="r2.4.10/api_mapping/pytorch_api_mapping.md (Tensor indexing)",
    installed_note="Verified on 2.10: x[range(n), t] and x[np.array(...)] raise IndexError; "
                   "x[list(range(n)), t] and x[mindspore.Tensor(np.array(...))] give PyTorch's values.",
    example="""
        import numpy as np
        import torch
        scores = torch.arange(12.0).reshape(3, 4)
        target = torch.tensor([0, 2, 1])
        picked = scores[range(3), target]
        rows = scores[np.array([2, 0])]
        order = np.argsort([3, 1, 2])
        sorted_rows = scores[order]
        cols = scores[:, np.arange(1, 3)]
    """,
)

_NUMPY_ROOTS = ("np.", "numpy.")


#: NumPy functions returning a tuple of index arrays (one per axis): left alone, MindSpore
#: raises IndexError for them rather than index with one Tensor made of the tuple
_TUPLES = {"where", "nonzero", "unravel_index", "ix_", "diag_indices", "tril_indices", "triu_indices",
           "mask_indices", "indices"}


@subscript_hook("IDX010")
def _index_arrays(ctx, original, updated):
    """``x[range(n), t]`` -> ``x[list(range(n)), t]`` (on a tensor, and on a value of
    unknown kind: a NumPy array takes the list as it takes the range);
    ``x[np.array(...)]`` -> ``x[mindspore.Tensor(np.array(...))]`` on a tensor, flagged on
    a value whose kind is unknown (a NumPy array or a list takes such an index as it is)."""
    kind = ctx.kind_of(original.value)
    if kind != TENSOR and (kind is not None or not ctx.torch_in_scope):
        return updated
    elements = list(updated.slice)
    changed = []
    for i, (old, new) in enumerate(zip(original.slice, updated.slice)):
        if not isinstance(old.slice, cst.Index):
            continue
        call, picked = old.slice.value, False
        if isinstance(call, cst.Name):  # idx = np.array(...) (or np.where(...)[0]) earlier; x[idx]
            call = ctx.assigned_value(call.value)
            while isinstance(call, (cst.Subscript, cst.Attribute)):
                picked = picked or isinstance(call, cst.Subscript)
                call = call.value
        if not isinstance(call, cst.Call):
            continue
        func = ctx.code(call.func).strip()
        if func.rsplit(".", 1)[-1] in _TUPLES and not picked:
            continue  # a tuple of index arrays: one Tensor of it would index another way
        value = new.slice.value
        if func == "range":
            wrapped = cst.Call(func=cst.Name("list"), args=[cst.Arg(value)])
        elif func.startswith(_NUMPY_ROOTS):
            wrapped = cst.Call(func=ctx.ref("mindspore.Tensor"), args=[cst.Arg(value)])
        else:
            continue
        elements[i] = new.with_changes(slice=new.slice.with_changes(value=wrapped))
        changed.append(func)
    if not changed:
        return updated
    if kind is None and set(changed) == {"range"}:
        # list(range(...)) indexes a NumPy array (or anything else that takes a range)
        # exactly as the range does: made whatever the value is
        result = updated.with_changes(slice=elements)
        ctx.edit("IDX010", result, api="Tensor.__getitem__",
                 detail="range(...) index wrapped in list(): the same index for a tensor or an array")
        return result
    if kind is None:
        why = ctx.why_unknown(original.value)
        ctx.finding(
            "GEN002",
            f"{', '.join(f'{f}(...)' for f in dict.fromkeys(changed))} as an index: MindSpore 2.10 "
            f"raises IndexError for it on a tensor, but the value indexed may be no tensor"
            f"{f' ({why})' if why else ''}; left unchanged (on a tensor write list(range(...)) "
            "or mindspore.Tensor(index))",
            node=original, api="Tensor.__getitem__", comment="range/NumPy index on a value of unknown kind",
        )
        return updated
    result = updated.with_changes(slice=elements)
    ctx.edit("IDX010", result, api="Tensor.__getitem__",
             detail="; ".join(f"{f}(...) index wrapped" for f in dict.fromkeys(changed)))
    return result


# ----------------------------------------------------------------------------- assignment into a slot

register(
    "IDX011",
    "A tensor assigned into an indexed slot loses its leading size-1 dimensions",
    group=GROUP,
    why="""
        ``logits[i] = model(x[[i]])`` writes a ``(1, 27)`` result into a ``(27,)`` row.
        PyTorch accepts a value with more dimensions than the slot as long as the extra
        leading ones have size 1 (it drops them, then broadcasts); MindSpore 2.10 raises
        "input's rank should be less equal to the number of proposed_shape". Where a tensor
        of unknown shape is assigned into an indexed tensor (the value is no number
        literal), the port passes it through a small function defined in the cell,
        ``without_leading_ones(value, tensor[index])``, which drops leading size-1
        dimensions while the value has more than the slot and leaves everything else
        (numbers, arrays, values of the slot's rank) as it is; broadcasting then works as
        in PyTorch. The index is evaluated twice, so this is done only where it is made of
        names, numbers, attributes, arithmetic and slices of those (no calls).
    """,
    seed="seeds/002 API Comparison › Tensor indexing",
    reference="r2.4.10/api_mapping/pytorch_api_mapping.md (Tensor indexing)",
    installed_note="Verified on 2.10: t = ops.zeros((8, 27)); t[0] = ops.ones((1, 27)) raises ValueError "
                   "(BroadcastTo); t[0] = ops.ones((27,)) and t[0:2] = ops.ones((27,)) work.",
    example="""
        import torch
        torch.manual_seed(0)
        layer = torch.nn.Linear(4, 3)
        x = torch.randn(5, 4)
        rows = torch.zeros(5, 3)
        for i in range(5):
            rows[i] = layer(x[[i]])
        block = torch.zeros(2, 5, 3)
        block[1] = rows.unsqueeze(0)
        rows[0] = 1.5
    """,
)

_SLOT_SOURCE = '''def {name}(value, slot):
    """The value PyTorch writes into tensor[index]: one with more dimensions than the slot
    loses its leading size-1 dimensions (MindSpore raises for them instead)."""
    ndim = getattr(slot, "ndim", 0)
    while getattr(value, "ndim", 0) > ndim and value.shape[0] == 1:
        value = value[0]
    return value
'''


def _plain_index(node) -> bool:
    """Names, numbers, attributes, arithmetic and slices of those: evaluated twice, the
    same."""
    if node is None or is_pure(node):
        return True
    if isinstance(node, cst.BinaryOperation):
        return _plain_index(node.left) and _plain_index(node.right)
    if isinstance(node, cst.UnaryOperation):
        return _plain_index(node.expression)
    return False


def _plain_slot(sub: cst.Subscript) -> bool:
    if not is_pure(sub.value) or isinstance(sub.value, cst.Subscript):
        return False
    for element in sub.slice:
        s = element.slice
        if isinstance(s, cst.Index):
            if s.star is not None or not _plain_index(s.value):
                return False
        elif not (_plain_index(s.lower) and _plain_index(s.upper) and _plain_index(s.step)):
            return False
    return True


def _scalar(ctx, node) -> bool:
    if isinstance(node, (cst.Integer, cst.Float, cst.SimpleString)):
        return True
    if isinstance(node, cst.UnaryOperation):
        return _scalar(ctx, node.expression)
    if isinstance(node, cst.BinaryOperation):
        return _scalar(ctx, node.left) and _scalar(ctx, node.right)
    if isinstance(node, cst.Name) and node.value in ("True", "False", "None"):
        return True
    if isinstance(node, cst.Call) and (
            (isinstance(node.func, cst.Name) and node.func.value in ("int", "float", "bool", "len", "round"))
            or (isinstance(node.func, cst.Attribute) and node.func.attr.value == "item" and not node.args)):
        return True
    kind = ctx.kind_of(node)
    return kind is not None and kind != TENSOR and kind.base not in ("module output",)


@statement_hook("IDX011", cst.SimpleStatementLine)
def _slot_assignment(ctx, original, updated):
    if len(original.body) != 1 or not isinstance(original.body[0], cst.Assign) \
            or not isinstance(updated, cst.SimpleStatementLine) or len(updated.body) != 1 \
            or not isinstance(updated.body[0], cst.Assign) or not ctx.torch_in_scope:
        return updated
    small = original.body[0]
    if len(small.targets) != 1 or not isinstance(small.targets[0].target, cst.Subscript):
        return updated
    target = small.targets[0].target
    if ctx.kind_of(target.value) != TENSOR or not _plain_slot(target) or _scalar(ctx, small.value):
        return updated
    new_target = updated.body[0].targets[0].target
    if not isinstance(new_target, cst.Subscript):
        return updated
    name = ctx.define("without_leading_ones", lambda n: _SLOT_SOURCE.format(name=n))
    slot = ctx.code(new_target).strip()
    value = ctx.code(updated.body[0].value).strip()
    new = updated.with_changes(body=[updated.body[0].with_changes(
        value=ctx.parse(f"{name}({value}, {slot})"))])
    ctx.edit("IDX011", new, node=original, api="Tensor.__setitem__",
             detail=f"{slot} = value -> {slot} = {name}(value, {slot}): leading size-1 dimensions dropped")
    return new
