"""Data loading: ``TensorDataset`` + ``DataLoader`` become a ``mindspore.dataset``
pipeline (``NumpySlicesDataset`` + ``.batch``) that yields MindSpore tensors in the same
batches and order."""

import libcst as cst

from msmagic.engine.spec import api, module
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
        as in PyTorch. Watch for one difference: a MindSpore dataset object can feed only
        one pipeline, so two loaders built from the same dataset object (or re-running the
        loader cell alone) raise "The data pipeline is not a tree"; build each loader from
        its own dataset, and re-run the cell that builds the dataset too.
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
    "shuffle=True becomes .shuffle(len(ds)), flagged: the order differs",
    group=GROUP,
    why="""
        ``DataLoader(shuffle=True)`` draws a new permutation of the whole dataset every
        epoch from PyTorch's generator. ``ds.shuffle(buffer_size)`` with a buffer as large
        as the dataset gives MindSpore's full reshuffle, again new every epoch, seeded by
        ``mindspore.dataset.config.set_seed``. Both are uniform permutations, but not the
        same ones: the batches come in a different order than PyTorch's even with equal
        seeds, so losses per step differ while epoch-level results should be statistically
        alike. The port is flagged for that reason; compare runs with ``shuffle=False``.
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
    return new


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
    if site.kind_of(original_source) != DATASET:
        site.finding("LDR005", "the dataset was not built by a TensorDataset in this cell; "
                     ".batch() needs a mindspore.dataset (wrap a custom Dataset with "
                     "mindspore.dataset.GeneratorDataset(ds, column_names=[...], shuffle=False))",
                     comment="source must be a mindspore.dataset")
    shuffle = args.get("shuffle")
    if shuffle is not None and site.literal(shuffle.value, True) is not False:
        if not is_pure(source.value):
            site.finding("LDR003", "shuffle=True needs the dataset bound to a name to size the "
                         "shuffle buffer; batches come unshuffled", comment="not shuffled")
        else:
            data = cst.Call(func=cst.Attribute(value=data, attr=cst.Name("shuffle")),
                            args=[cst.Arg(cst.Call(func=cst.Name("len"), args=[cst.Arg(source.value)]))])
            site.edit("LDR003", data, detail="shuffle=True -> .shuffle(len(ds))")
            site.finding("LDR003", "MindSpore shuffles with its own random order: batches differ "
                         "from PyTorch's, so per-step values cannot be compared",
                         comment="shuffled in a different order than PyTorch")
    size = args.get("batch_size")
    batch_args = [cst.Arg(size.value if size is not None else cst.Integer("1"))]
    drop = args.get("drop_last")
    if drop is not None:
        batch_args.append(_kw("drop_remainder", drop.value))
    new = cst.Call(func=cst.Attribute(value=data, attr=cst.Name("batch")), args=_sep(batch_args))
    site.edit("LDR002", new, detail=f"DataLoader -> .batch({site.code(batch_args[0].value)}"
                                    f"{', drop_remainder' if drop is not None else ''})")
    return new


module("torch.utils", None)
module("torch.utils.data", None)
for _prefix in ("torch.utils.data", "torch.utils.data.dataset"):
    api(f"{_prefix}.TensorDataset", rule="LDR001", handler=_tensor_dataset, returns=DATASET)
for _prefix in ("torch.utils.data", "torch.utils.data.dataloader"):
    api(f"{_prefix}.DataLoader", rule="LDR002", sig=_LOADER_SIG, handler=_loader, returns=LOADER)
