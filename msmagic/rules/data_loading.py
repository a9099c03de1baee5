"""Data loading: ``TensorDataset`` + ``DataLoader`` become a ``mindspore.dataset``
pipeline (``NumpySlicesDataset`` + ``.batch``) that yields MindSpore tensors in the same
batches and order; shuffled loaders are tagged so parity can impose PyTorch's order;
dataset items and ``loader.dataset`` port too."""

import libcst as cst

from msmagic.engine.spec import TENSOR, api, member, module, statement_hook
from msmagic.rules._util import is_pure
from msmagic.rules.data import _paren
from msmagic.rules.registry import register

GROUP = "Data loading"
SEED = "seeds/002 API Comparison › Dataset/DataLoader"
REF = "r2.4.10/api_mapping/pytorch_api_mapping.md"
DATASET = "dataset"  # kind of a ported TensorDataset
LOADER = "loader"  # kind of a ported DataLoader

register(
    "LDR001",
    "TensorDataset becomes an unshuffled NumpySlicesDataset of the NumPy data",
    group=GROUP,
    why="""
        ``TensorDataset(x, y)`` indexes its tensors along the first dimension; MindSpore's
        ``mindspore.dataset.NumpySlicesDataset`` slices NumPy arrays the same way, one
        column per array (named ``column_0``, ``column_1``, ...). It refuses MindSpore
        tensors, so each tensor is passed as ``t.asnumpy()``; dtypes are kept (float32
        stays float32, int64 stays int64) and iteration yields MindSpore tensors again.
        Unlike TensorDataset, a NumpySlicesDataset shuffles by default, so ``shuffle=False``
        is added to keep PyTorch's order. ``len(ds)`` counts the rows in both frameworks;
        indexing ``ds[i]`` has no MindSpore counterpart.
    """,
    seed=SEED,
    reference=REF,
    example="""
        import torch
        from torch.utils.data import TensorDataset
        x = torch.arange(12.0).reshape(6, 2)
        y = torch.arange(6)
        ds = TensorDataset(x, y)
        n = len(ds)
        firsts = [float(a.sum()) for a, b in ds]
    """,
)

register(
    "LDR002",
    "DataLoader(ds, batch_size, drop_last) becomes ds.batch(size, drop_remainder)",
    group=GROUP,
    why="""
        A MindSpore dataset batches itself: ``ds.batch(batch_size, drop_remainder=...)``
        groups consecutive rows exactly as ``DataLoader`` does without shuffling, including
        the short last batch unless ``drop_last=True``. PyTorch's default batch size is 1
        while ``batch`` has no default, so ``1`` is written out when the call had none.
        Iterating the result (``for xb, yb in loader``, ``next(iter(loader))``) yields a
        list of MindSpore tensors per batch, and ``len(loader)`` is the number of batches,
        as in PyTorch. A MindSpore dataset object can feed only one pipeline, so only the
        first loader over a dataset built in the same cell batches it directly; other
        loaders read it through ``GeneratorDataset`` (rule LDR006).
    """,
    seed=SEED,
    reference=REF,
    example="""
        import torch
        from torch.utils.data import TensorDataset, DataLoader
        x = torch.arange(20.0).reshape(10, 2)
        y = torch.arange(10)
        loader = DataLoader(TensorDataset(x, y), batch_size=4, drop_last=False)
        sums = [float(xb.sum()) for xb, yb in loader]
        n_batches = len(loader)
    """,
)

register(
    "LDR003",
    "shuffle=True shuffles the MindSpore dataset, flagged: MindSpore's own order",
    group=GROUP,
    why="""
        ``DataLoader(shuffle=True)`` draws a new permutation of the whole dataset every
        epoch from PyTorch's generator. The port shuffles the whole MindSpore dataset every
        epoch too: ``ds.shuffle(len(ds))`` (a buffer as large as the dataset) for a dataset
        bound to a name, ``NumpySlicesDataset(..., shuffle=True)`` for a TensorDataset built
        in the call, ``GeneratorDataset(ds, ..., shuffle=True)`` where rule LDR006 reads the
        dataset through one. MindSpore's permutations are seeded by
        ``mindspore.dataset.config.set_seed`` and are not PyTorch's: a plain run sees the
        batches in another order, so losses per step differ while epoch-level results
        should be statistically alike. Once a seed is set (``mindspore.set_seed``, the
        port of ``torch.manual_seed``), every new iteration of the dataset is seeded
        alike, so each epoch of a plain run repeats one order where PyTorch draws a new
        one. The port is flagged for these reasons. Under
        ``%%ms_parity`` the statement is tagged ``shuffle``: parity records the
        permutation PyTorch's loader draws each time it is iterated and makes the
        MindSpore loader iterate its own rows in that order, so both sides train on the
        same batches (the report lists the loader as synchronised: "PyTorch's shuffle
        order used").
    """,
    seed=SEED,
    reference=REF,
    example="""
        import torch
        from torch.utils.data import TensorDataset, DataLoader
        ds = TensorDataset(torch.arange(8.0))
        loader = DataLoader(ds, batch_size=2, shuffle=True)
        n_batches = len(loader)
        total = sum(float(b[0].sum()) for b in loader)
    """,
)

register(
    "LDR004",
    "Worker and memory options of DataLoader are dropped",
    group=GROUP,
    why="""
        ``num_workers``, ``pin_memory``, ``pin_memory_device``, ``persistent_workers``,
        ``prefetch_factor``, ``timeout``, ``multiprocessing_context`` and ``in_order`` tune
        how PyTorch loads batches (worker processes, page-locked host memory for faster
        GPU copies), not which batches come out. A MindSpore pipeline runs its own
        parallel workers and prefetching (``num_parallel_workers=`` on each operation,
        ``mindspore.dataset.config``) and places data on the device by itself, so these are
        removed; the batches are unchanged.
    """,
    seed=SEED,
    reference=REF,
    example="""
        import torch
        from torch.utils.data import TensorDataset, DataLoader
        ds = TensorDataset(torch.arange(6.0))
        loader = DataLoader(ds, batch_size=3, num_workers=2, pin_memory=True)
        sums = [float(b[0].sum()) for b in loader]
    """,
)

register(
    "LDR005",
    "DataLoader inputs with no direct dataset counterpart are flagged",
    group=GROUP,
    finding_only=True,
    why="""
        ``sampler``, ``batch_sampler``, ``collate_fn``, ``generator`` and
        ``worker_init_fn`` change which rows form a batch or how they are combined, in ways
        MindSpore expresses differently (a ``sampler=`` on the source dataset,
        ``per_batch_map=`` on ``batch``, ``mindspore.dataset.config.set_seed``), so they
        are removed with a finding saying what to write. A DataLoader over a dataset msmagic
        did not see being built (a custom ``Dataset`` class, or a TensorDataset from an
        earlier cell) is ported to ``.batch(...)`` and flagged: it works when the source is
        a MindSpore dataset; wrap a custom dataset with ``mindspore.dataset.GeneratorDataset(
        ds, column_names=[...], shuffle=False)`` first.
    """,
    seed=SEED,
    reference=REF,
    example="""
        import torch
        from torch.utils.data import DataLoader
        loader = DataLoader(my_dataset, batch_size=4, collate_fn=my_collate)
    """,
)

register(
    "LDR006",
    "A loader over a dataset that feeds a pipeline reads it via GeneratorDataset",
    group=GROUP,
    why="""
        A MindSpore dataset object can feed only one pipeline: a second ``.batch(...)`` on
        it makes iteration fail with "The data pipeline is not a tree". PyTorch has no such
        limit, so two DataLoaders over one dataset, a loader built in a loop or a function
        over a dataset built outside it, or a loader cell run again over the dataset of an
        earlier cell all work there. The first loader built from a TensorDataset in the
        cell (and block) that builds it batches the dataset directly (rule LDR002); any
        other loader over a ported dataset, and a loader a function builds over a dataset
        it is given, reads it as a random-access source,
        ``mindspore.dataset.GeneratorDataset(ds, ds.get_col_names(), shuffle=...)``, which
        yields the same rows in the same order (or shuffled, rule LDR003) and leaves ``ds``
        free for other loaders.
    """,
    seed=SEED,
    reference=REF,
    example="""
        import torch
        from torch.utils.data import TensorDataset, DataLoader
        ds = TensorDataset(torch.arange(12.0).reshape(6, 2), torch.arange(6))
        train = DataLoader(ds, batch_size=4)
        full = DataLoader(ds, batch_size=6)
        sums = [float(xb.sum()) for xb, yb in train] + [float(xb.sum()) for xb, yb in full]
    """,
)

register(
    "LDR007",
    "ds[i] gives a tuple of tensors, loader.dataset the dataset; slicing is flagged",
    group=GROUP,
    why="""
        ``TensorDataset(x, y)[i]`` is the tuple ``(x[i], y[i])`` of tensors. A ported
        dataset (a ``NumpySlicesDataset``) can be indexed too, but gives NumPy values, and
        only for indices ``0 <= i < len(ds)``: ``ds[i]`` becomes
        ``tuple(mindspore.Tensor(numpy.asarray(c)) for c in ds[i])``, a negative literal index
        ``ds[len(ds) - k]`` and a tensor index ``int(i)``. Slicing a TensorDataset
        (``ds[a:b]``) returns the tuple of sliced tensors, which a MindSpore dataset cannot
        do: it is flagged; slice the tensors themselves (``x[a:b], y[a:b]``).
        A MindSpore batch pipeline has no ``.dataset``: ``loader.dataset`` becomes the
        dataset the loader was built from when that was a name (in this cell or an earlier
        one), so ``len(loader.dataset)`` counts the rows; otherwise it is flagged.
    """,
    seed=SEED,
    reference=REF,
    example="""
        import torch
        from torch.utils.data import TensorDataset, DataLoader
        ds = TensorDataset(torch.arange(12.0).reshape(6, 2), torch.arange(6))
        loader = DataLoader(ds, batch_size=4)
        first_x, first_y = ds[0]
        last_x, last_y = ds[-1]
        rows = len(loader.dataset)
    """,
)

_LOADER_SIG = ("dataset", "batch_size", "shuffle", "sampler", "batch_sampler", "num_workers",
               "collate_fn", "pin_memory", "drop_last", "timeout", "worker_init_fn",
               "multiprocessing_context", "generator")
_DROPPED = {"num_workers", "pin_memory", "pin_memory_device", "persistent_workers",
            "prefetch_factor", "timeout", "multiprocessing_context", "in_order"}
_FLAGGED = {
    "sampler": "pass a sampler to the source dataset (NumpySlicesDataset(..., sampler=...))",
    "batch_sampler": "build batches with the source dataset's sampler and .batch(...)",
    "collate_fn": "combine rows with .batch(..., per_batch_map=fn, input_columns=[...])",
    "generator": "seed MindSpore's shuffling with mindspore.dataset.config.set_seed",
    "worker_init_fn": "MindSpore workers are not initialised per worker; set state up front",
}


def _kw(name: str, value) -> cst.Arg:
    return cst.Arg(value=value, keyword=cst.Name(name),
                   equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                                         whitespace_after=cst.SimpleWhitespace("")))


def _sep(args: list) -> list:
    comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    return [a.with_changes(comma=comma if i < len(args) - 1 else cst.MaybeSentinel.DEFAULT)
            for i, a in enumerate(args)]


def _scope(site):
    """The function the node is in (None at the cell's level): names are per scope."""
    return id(site.functions[-1]) if site.functions else None


def _assigned_name(site):
    """``name`` when the call is the whole value of ``name = <call>``."""
    holder = site.statement
    if isinstance(holder, cst.SimpleStatementLine) and len(holder.body) == 1:
        stmt = holder.body[0]
        if (isinstance(stmt, cst.Assign) and stmt.value is site.original and len(stmt.targets) == 1
                and isinstance(stmt.targets[0].target, cst.Name)):
            return stmt.targets[0].target.value
    return None


def _tensor_dataset(site):
    bound = site.bound()
    if bound is None or not bound or any(not positional for _, _, positional in bound):
        site.finding("LDR001", "TensorDataset's tensors must be passed positionally and "
                     "without * to be converted", comment="TensorDataset not ported")
        return None
    columns = [cst.Element(cst.Call(func=cst.Attribute(value=_paren(a.value), attr=cst.Name("asnumpy"))))
               for _, a, _ in bound]
    data = cst.Tuple(elements=[e.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
                               for e in columns[:-1]] + [columns[-1].with_changes(comma=cst.Comma())
                                                         if len(columns) == 1 else columns[-1]])
    new = cst.Call(func=site.ref("mindspore.dataset.NumpySlicesDataset"),
                   args=_sep([cst.Arg(data), _kw("shuffle", cst.Name("False"))]))
    site.edit("LDR001", new, detail=f"TensorDataset of {len(bound)} tensors -> NumpySlicesDataset"
                                    "(..., shuffle=False)")
    name = _assigned_name(site)
    if name is not None:
        # a fresh dataset: the first loader over it in this block may batch it directly
        site.scratch("LDR006")[(_scope(site), name)] = {
            "around": {id(s) for s in site.enclosing_statements}, "feeds": 0}
    return new


def _feeds_directly(site, source) -> bool:
    """May the loader batch ``source`` (a Name of a ported dataset) itself? Only the
    first loader over a dataset built in this cell, not in a loop or function the
    dataset statement is outside of (it would build a second pipeline on it)."""
    info = site.scratch("LDR006").get((_scope(site), source.value))
    if info is None or info["feeds"]:
        return False
    repeats = (cst.For, cst.While, cst.FunctionDef)
    if any(isinstance(s, repeats) and id(s) not in info["around"] for s in site.enclosing_statements):
        return False
    info["feeds"] += 1
    return True


def _shuffle_flagged(site) -> None:
    site.finding("LDR003", "MindSpore shuffles with its own random order: in a plain run the "
                 "batches come in another order than PyTorch's, so per-step values differ, and "
                 "once a seed is set every epoch repeats one order (%%ms_parity makes the "
                 "MindSpore side use PyTorch's orders)",
                 comment="shuffled in MindSpore's own order (%%ms_parity uses PyTorch's)")


def _loader(site):
    bound = site.bound()
    if bound is None:
        site.finding("LDR005", "DataLoader arguments passed with * or ** cannot be ported",
                     comment="DataLoader(*args) not ported")
        return None
    args = {name: arg for name, arg, _ in bound}
    source = args.get("dataset")
    if source is None:
        return None
    original_source = site.original.args[[a for _, a, _ in bound].index(source)].value
    for name, arg, _ in bound:
        if name in _DROPPED:
            site.edit("LDR004", None, detail=f"{name}= dropped: {site.code(arg.value).strip()}")
        elif name in _FLAGGED:
            site.finding("LDR005", f"{name}={site.code(arg.value).strip()}: {_FLAGGED[name]}",
                         comment=f"{name}= removed: {_FLAGGED[name]}")
    data = _paren(source.value)
    known = site.kind_of(original_source) == DATASET
    if not known:
        site.finding("LDR005", "the dataset was not built by a TensorDataset in this cell; "
                     ".batch() needs a mindspore.dataset (wrap a custom Dataset with "
                     "mindspore.dataset.GeneratorDataset(ds, column_names=[...], shuffle=False))",
                     comment="source must be a mindspore.dataset")
    shuffle = args.get("shuffle")
    shuffled = shuffle is not None and site.literal(shuffle.value, True) is not False
    inline = known and isinstance(original_source, cst.Call) and isinstance(source.value, cst.Call)
    # a loader in a function over a dataset it is given may be built again on the same
    # dataset at the next call: read through GeneratorDataset too
    wrapped = (not inline and is_pure(source.value) and (known or bool(site.functions))
               and not (known and isinstance(original_source, cst.Name)
                        and _feeds_directly(site, original_source)))
    if wrapped:
        columns = cst.Call(func=cst.Attribute(value=data, attr=cst.Name("get_col_names")))
        data = cst.Call(func=site.ref("mindspore.dataset.GeneratorDataset"), args=_sep([
            cst.Arg(source.value), cst.Arg(columns), _kw("shuffle", cst.Name("True" if shuffled else "False"))]))
        site.edit("LDR006", data, detail=f"{site.code(source.value).strip()} already feeds a pipeline "
                                         "(or may) -> GeneratorDataset(ds, ds.get_col_names())")
        if shuffled:
            site.edit("LDR003", data, detail="shuffle=True -> GeneratorDataset(..., shuffle=True)",
                      tags=("shuffle",))
            _shuffle_flagged(site)
    elif shuffled and inline:
        data = data.with_changes(args=[
            a.with_changes(value=cst.Name("True")) if a.keyword is not None and a.keyword.value == "shuffle" else a
            for a in data.args])
        site.edit("LDR003", data, detail="shuffle=True -> NumpySlicesDataset(..., shuffle=True)",
                  tags=("shuffle",))
        _shuffle_flagged(site)
    elif shuffled:
        if not is_pure(source.value):
            site.finding("LDR003", "shuffle=True needs the dataset bound to a name to size the "
                         "shuffle buffer; batches come unshuffled", comment="not shuffled")
        else:
            data = cst.Call(func=cst.Attribute(value=data, attr=cst.Name("shuffle")),
                            args=[cst.Arg(cst.Call(func=cst.Name("len"), args=[cst.Arg(source.value)]))])
            site.edit("LDR003", data, detail="shuffle=True -> .shuffle(len(ds))", tags=("shuffle",))
            _shuffle_flagged(site)
    size = args.get("batch_size")
    batch_args = [cst.Arg(size.value if size is not None else cst.Integer("1"))]
    drop = args.get("drop_last")
    if drop is not None:
        batch_args.append(_kw("drop_remainder", drop.value))
    new = cst.Call(func=cst.Attribute(value=data, attr=cst.Name("batch")), args=_sep(batch_args))
    site.edit("LDR002", new, detail=f"DataLoader -> .batch({site.code(batch_args[0].value)}"
                                    f"{', drop_remainder' if drop is not None else ''})")
    name = _assigned_name(site)
    if name is not None:
        # ``loader.dataset`` is the dataset the loader was built from (rule LDR007)
        site.scratch("LDR007")[(_scope(site), name)] = (
            original_source.value if isinstance(original_source, cst.Name) else None)
    return new


module("torch.utils", None)
module("torch.utils.data", None)
for _prefix in ("torch.utils.data", "torch.utils.data.dataset"):
    api(f"{_prefix}.TensorDataset", rule="LDR001", handler=_tensor_dataset, returns=DATASET)
for _prefix in ("torch.utils.data", "torch.utils.data.dataloader"):
    api(f"{_prefix}.DataLoader", rule="LDR002", sig=_LOADER_SIG, handler=_loader, returns=LOADER)


# ----------------------------------------------------------------------------- loader.dataset


def _source_of(site, loader):
    """The name of the dataset ``loader`` (a Name) was built from, or None."""
    known = site.scratch("LDR007")
    for key in ((_scope(site), loader.value), (None, loader.value)):
        if key in known:
            return known[key]
    call = site.earlier_definition(loader.value)
    if isinstance(call, cst.Call) and site.code(call.func).strip().endswith("DataLoader"):
        for i, arg in enumerate(call.args):
            if arg.star:
                return None
            if (arg.keyword is None and i == 0) or (arg.keyword is not None and arg.keyword.value == "dataset"):
                return arg.value.value if isinstance(arg.value, cst.Name) else None
    return None


def _loader_dataset(site):
    loader = site.receiver_original
    name = _source_of(site, loader) if isinstance(loader, cst.Name) else None
    if name is None:
        site.finding("LDR007", "a MindSpore batch pipeline has no .dataset: keep the dataset the "
                     "loader is built from in a variable and use it (len(ds) counts its rows)",
                     comment="loader.dataset has no MindSpore counterpart")
        return None
    new = cst.Name(name)
    site.edit("LDR007", new, detail=f"{site.code(site.original).strip()} -> {name}")
    return new


member("dataset", "LDR007", receiver=LOADER, handler=_loader_dataset, returns=DATASET)


# ----------------------------------------------------------------------------- ds[i]


_SKIPPED_FIELDS = ("whitespace", "lpar", "rpar", "comma", "equal", "dot", "semicolon", "leading_lines",
                   "trailing", "lbracket", "rbracket", "lbrace", "rbrace", "colon", "star", "header",
                   "footer", "newline", "operator", "asynchronous")
_FIELDS: dict = {}


def _fields(cls) -> tuple:
    out = _FIELDS.get(cls)
    if out is None:
        out = _FIELDS[cls] = tuple(f for f in getattr(cls, "__dataclass_fields__", ())
                                   if not f.startswith(_SKIPPED_FIELDS))
    return out


def _subscripts(node, out: list) -> list:
    """Every Subscript under ``node`` (a quick scan that skips formatting fields)."""
    if type(node) is cst.Subscript:
        out.append(node)
    for name in _fields(type(node)):
        value = getattr(node, name)
        if isinstance(value, cst.CSTNode):
            _subscripts(value, out)
        elif isinstance(value, (tuple, list)):
            for item in value:
                if isinstance(item, cst.CSTNode):
                    _subscripts(item, out)
    return out


class _Replace(cst.CSTTransformer):
    def __init__(self, new: dict):
        super().__init__()
        self.new = new
        self.done: set = set()

    def leave_Subscript(self, original, updated):
        new = self.new.get(id(original))
        if new is None:
            return updated
        self.done.add(id(original))
        return new


def _item(ctx, sub: cst.Subscript, updated: cst.Subscript):
    """The MindSpore expression for ``ds[i]`` (``updated``: its ported form), or None
    with a finding."""
    where = ctx.code(sub).strip()
    if len(sub.slice) != 1 or not isinstance(sub.slice[0].slice, cst.Index):
        ctx.finding("LDR007", f"{where}: slicing a TensorDataset gives its tensors sliced; a "
                    "MindSpore dataset cannot be sliced: slice the tensors themselves "
                    "(x[a:b], y[a:b])", node=sub, api="TensorDataset[...]",
                    comment="TensorDataset slicing not ported: slice the tensors")
        return None
    index = sub.slice[0].slice.value
    new_index = updated.slice[0].slice.value
    value = updated.value
    if isinstance(index, (cst.List, cst.Tuple, cst.ListComp)):
        ctx.finding("LDR007", f"{where}: indexing a TensorDataset with several indices has no "
                    "MindSpore counterpart: index the tensors themselves", node=sub,
                    api="TensorDataset[...]", comment="TensorDataset[indices] not ported")
        return None
    text = ctx.code(new_index).strip()
    if (isinstance(index, cst.UnaryOperation) and isinstance(index.operator, cst.Minus)
            and isinstance(index.expression, cst.Integer)):
        if not is_pure(value):
            ctx.finding("LDR007", f"{where}: a MindSpore dataset takes no negative index; "
                        "bind the dataset to a name and index it with len(ds) - k", node=sub,
                        api="TensorDataset[...]", comment="negative dataset index not ported")
            return None
        text = f"len({ctx.code(value).strip()}) - {index.expression.value}"
    elif ctx.kind_of(index) == TENSOR:
        text = f"int({text})"
    tensor = ctx.code(ctx.ref("mindspore.Tensor"))
    numpy = ctx.require_import("numpy")  # numpy.longlong items are no Tensor input, arrays are
    new = ctx.parse(f"tuple({tensor}({numpy}.asarray(c)) for c in {ctx.code(_paren(value)).strip()}[{text}])")
    return new


@statement_hook("LDR007", cst.SimpleStatementLine)
def _dataset_items(ctx, original, updated):
    if not ctx.torch_in_scope:
        return updated
    found = [s for s in _subscripts(original, []) if ctx.kind_of(s.value) == DATASET]
    if not found:
        return updated
    new = {}
    for sub in found:
        ported = ctx.updated_of(sub)
        item = _item(ctx, sub, ported)
        if item is not None:
            new[id(ported)] = (sub, item)
    if not new:
        return updated
    replacer = _Replace({k: v[1] for k, v in new.items()})
    result = updated.visit(replacer)
    for key, (sub, item) in new.items():
        if key in replacer.done:
            ctx.edit("LDR007", item, node=sub, api="TensorDataset[...]",
                     detail=f"{ctx.code(sub).strip()} -> tuple of MindSpore tensors")
        else:  # another rule rebuilt the expression around it
            ctx.finding("LDR007", f"{ctx.code(sub).strip()}: a MindSpore dataset item is a tuple of "
                        "NumPy values: wrap it as tuple(mindspore.Tensor(numpy.asarray(c)) for c in ds[i])",
                        node=sub, api="TensorDataset[...]", comment="dataset item not ported")
    return result
