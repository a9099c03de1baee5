"""Data loading: ``torch.utils.data`` becomes ``mindspore.dataset.dataloader``, MindSpore's
map-style datasets and DataLoader with PyTorch's parameters, so a custom ``Dataset``, a
list of examples, a ``TensorDataset`` and the loaders over them give the same batches in
the same order. ``Subset``, ``random_split``, ``ConcatDataset``, ``ChainDataset``,
``SubsetRandomSampler`` and ``WeightedRandomSampler``, which MindSpore lacks, are written
out as small definitions; shuffled loaders are tagged so parity can impose PyTorch's
order."""

import libcst as cst

from msmagic.engine.spec import api, module
from msmagic.rules.registry import register

GROUP = "Data loading"
SEED = "seeds/002 API Comparison › Dataset/DataLoader"
REF = "r2.4.10/api_mapping/pytorch_api_mapping.md; r2.4.10/migration_guide/model_development/dataset.md"
DATASET = "dataset"  # kind of a ported TensorDataset
LOADER = "loader"  # kind of a ported DataLoader
TARGET = "mindspore.dataset.dataloader"

_INSTALLED = """
    The r2.4.10 mapping table sends ``DataLoader`` to ``GeneratorDataset``, a pipeline with
    named columns that converts every item to NumPy. MindSpore 2.10 ships
    ``mindspore.dataset.dataloader`` (``Dataset``, ``IterableDataset``, ``TensorDataset``,
    ``DataLoader``, ``RandomSampler``, ``SequentialSampler``, ``BatchSampler``,
    ``default_collate``) with PyTorch's signatures and semantics, which the port uses
    (checked by running both on the same data).
"""

register(
    "LDR001",
    "TensorDataset becomes mindspore.dataset.dataloader.TensorDataset",
    group=GROUP,
    why="""
        ``mindspore.dataset.dataloader.TensorDataset(*tensors)`` is PyTorch's TensorDataset
        over MindSpore tensors: ``ds[i]`` is the tuple ``(x[i], y[i])`` of tensors (a
        negative index, a tensor index and a slice ``ds[a:b]`` index the tensors as in
        PyTorch), ``len(ds)`` is the number of rows, iterating it yields the rows,
        ``ds.tensors`` holds the tensors, and it can be indexed by a ``Subset`` or read by
        any number of DataLoaders. The data stays in the tensors it was given: no
        conversion, the dtypes are kept.
    """,
    seed=SEED,
    reference=REF,
    installed_note=_INSTALLED,
    example="""
        import torch
        from torch.utils.data import TensorDataset
        x = torch.arange(12.0).reshape(6, 2)
        y = torch.arange(6)
        ds = TensorDataset(x, y)
        n = len(ds)
        first_x, first_y = ds[0]
        last_x, last_y = ds[-1]
        head_x, head_y = ds[1:3]
        firsts = [float(a.sum()) for a, b in ds]
    """,
)

register(
    "LDR002",
    "DataLoader becomes mindspore.dataset.dataloader.DataLoader, arguments kept",
    group=GROUP,
    why="""
        MindSpore 2.10's ``mindspore.dataset.dataloader.DataLoader`` takes PyTorch's
        parameters in PyTorch's order (``dataset, batch_size=1, shuffle, sampler,
        batch_sampler, num_workers, collate_fn, pin_memory, drop_last, ...``) and batches
        the same way: a ``BatchSampler`` groups the indices the sampler yields
        (sequential unless shuffled), ``drop_last`` drops the short last batch, and
        ``collate_fn`` (a function of the cell, one a factory returns, a lambda) gets the
        list of items. Its ``default_collate`` is PyTorch's: tensors are stacked, Python
        ints become int64 and floats float64 tensors, NumPy arrays become tensors of their
        dtype, dicts are collated per key, tuples and lists per position (a list of
        batches), strings stay lists. So any map-style dataset works as it did: a custom
        ``Dataset`` subclass, a list of examples (dicts of tensors), a ``Subset``, a
        ``TensorDataset``, built in this cell, an earlier one or handed to a function.
        Iteration, ``next(iter(loader))``, ``len(loader)`` (the number of batches),
        ``loader.dataset`` and ``loader.batch_size`` behave as in PyTorch, and
        ``DataLoader(ds, **kwargs)`` passes the keywords on unchanged. One known
        difference: MindSpore's default collate turns a batch of NumPy float64 scalars into
        a float32 tensor and NumPy int32 scalars into int64 (PyTorch keeps their dtypes);
        items that are NumPy arrays, Python numbers or tensors are not affected.
    """,
    seed=SEED,
    reference=REF,
    installed_note=_INSTALLED,
    example="""
        import torch
        from torch.utils.data import Dataset, DataLoader
        class Squares(Dataset):
            def __len__(self):
                return 10
            def __getitem__(self, i):
                return {"x": torch.tensor([float(i), float(i * i)]), "y": i % 3}
        loader = DataLoader(Squares(), batch_size=4, drop_last=False)
        sums = [float(b["x"].sum()) for b in loader]
        labels = [b["y"].tolist() for b in loader]
        n_batches = len(loader)
        rows = len(loader.dataset)
    """,
)

register(
    "LDR003",
    "shuffle=True draws MindSpore's own order, flagged; a generator= is dropped",
    group=GROUP,
    why="""
        ``DataLoader(shuffle=True)`` draws a new permutation of the dataset every epoch
        with a ``RandomSampler``. MindSpore's DataLoader does the same, but with a NumPy
        generator it seeds from the operating system when it is built
        (``numpy.random.default_rng()``), not from PyTorch's generator: a plain run sees
        the batches in another order than PyTorch's, and in another order on every run,
        even after ``mindspore.set_seed``. Losses per step therefore differ while
        epoch-level results should be statistically alike; the port is flagged. A
        ``generator=torch.Generator()`` cannot be given to MindSpore (it takes a
        ``numpy.random.Generator``), so it is dropped with the same finding. Under
        ``%%ms_parity`` the statement is tagged ``shuffle``: parity records the order
        PyTorch's sampler yields each time the loader is iterated (a ``RandomSampler``
        or a ``SubsetRandomSampler``) and makes the MindSpore loader take the same indices,
        so both sides see the same batches (the report lists the loader as synchronised:
        "PyTorch's shuffle order used").
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
        GPU copies), not which batches come out. MindSpore's DataLoader accepts most of
        them, but the port loads in the main process, as PyTorch does with
        ``num_workers=0``: the batches are the same, no process is started (each worker
        would import MindSpore and receive the dataset), and pinned memory does nothing on
        CPU (MindSpore warns about it). So these are removed. Inside a ``**kwargs`` dict
        they are passed on, and MindSpore's DataLoader then starts its workers.
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
    "DataLoader inputs the port cannot check or reproduce are flagged",
    group=GROUP,
    finding_only=True,
    why="""
        ``worker_init_fn`` runs in PyTorch's worker processes only; the port loads in the
        main process (rule LDR004), so a function that seeds or opens per-worker state is
        never called there: it is removed with a finding saying to set that state up
        front. Arguments passed as ``*args`` or ``**kwargs`` whose contents the port cannot
        see (a dict built elsewhere, a function's own ``**kwargs``) are passed on to
        MindSpore's DataLoader, which takes PyTorch's names, but whether they ask for a
        shuffle (MindSpore's own order, rule LDR003), a ``torch.Generator`` or worker
        processes is not known: the call is flagged.
    """,
    seed=SEED,
    reference=REF,
    example="""
        import torch
        from torch.utils.data import DataLoader
        loader = DataLoader(my_dataset, batch_size=4, worker_init_fn=seed_worker)
        other = DataLoader(my_dataset, **loader_options)
    """,
)

register(
    "LDR008",
    "Dataset, IterableDataset and default_collate become MindSpore's dataloader ones",
    group=GROUP,
    why="""
        A PyTorch dataset is any class with ``__len__`` and ``__getitem__``, usually
        derived from ``torch.utils.data.Dataset`` (map-style) or ``IterableDataset``
        (``__iter__``). ``mindspore.dataset.dataloader.Dataset`` and ``IterableDataset``
        are the same bases (``__init__`` takes no arguments, ``super().__init__()`` works),
        and MindSpore's DataLoader treats their subclasses as PyTorch's does (an
        ``IterableDataset`` is read in order, without a sampler). So the base class is
        the only change; the methods are ported like any other code, and items may be
        tensors, tuples, dicts, NumPy arrays or Python numbers. ``default_collate``, called
        by hand in a ``collate_fn``, becomes MindSpore's, which collates the same way
        (rule LDR002), ``default_convert`` (NumPy arrays to tensors, what a loader with
        ``batch_size=None`` applies) MindSpore's, and ``get_worker_info()`` MindSpore's (``None`` in the main
        process, where the port loads).
    """,
    seed=SEED,
    reference=REF,
    installed_note=_INSTALLED,
    example="""
        import torch
        import torch.utils.data as data
        class Pairs(data.Dataset):
            def __init__(self, n):
                super().__init__()
                self.x = torch.arange(n * 2.0).reshape(n, 2)
            def __len__(self):
                return self.x.shape[0]
            def __getitem__(self, idx):
                return self.x[idx], self.x[idx].sum()
        ds = Pairs(5)
        n = len(ds)
        x0, s0 = ds[0]
        batch = data.default_collate([ds[1], ds[2]])
        stacked, sums = batch
    """,
)

register(
    "LDR009",
    "Subset, random_split, ConcatDataset, ChainDataset: written out as definitions",
    group=GROUP,
    why="""
        MindSpore 2.10 has no ``Subset``, ``random_split``, ``ConcatDataset`` or
        ``ChainDataset``. They are short, so the port defines them before the first
        statement that uses them, with PyTorch's behaviour: ``Subset(ds, indices)`` gives
        ``ds[indices[i]]`` for item ``i``, has ``len(indices)`` items and keeps ``.dataset``
        and ``.indices``; ``ConcatDataset(datasets)`` chains the datasets' items (a
        negative index counts from the end) and keeps ``.datasets`` and
        ``.cumulative_sizes``; ``ChainDataset(datasets)`` iterates ``IterableDataset``s one
        after the other (its length is the sum of theirs); ``StackDataset(a, b)`` (or
        ``StackDataset(x=a, y=b)``) makes item ``i`` the tuple (or dict) of the datasets'
        items ``i``; ``random_split(ds, lengths)``
        takes integer lengths or fractions (turned into counts as PyTorch does: each
        ``floor(len(ds) * fraction)``, the remainder spread one by one from the first
        subset), draws one permutation of all rows and cuts it into consecutive Subsets.
        The split is a random draw, like ``torch.randperm``: the permutation comes from
        NumPy's global generator (seeded by ``mindspore.set_seed``) or, for
        ``generator=torch.Generator().manual_seed(k)`` (written in the call or assigned to
        a name first), from ``numpy.random.default_rng(k)``, reproducible for a given
        ``k`` but not PyTorch's rows. Under ``%%ms_parity`` the MindSpore Subsets take the
        indices of PyTorch's (reported as synchronised: "PyTorch's split used"), so what
        is compared after is the same rows; the subsets' sizes must agree for that copy
        to happen. A generator that is not visibly ``torch.Generator().manual_seed(k)``
        is dropped and flagged.
    """,
    seed=SEED,
    reference=REF,
    example="""
        import torch
        from torch.utils.data import TensorDataset, Subset, DataLoader
        ds = TensorDataset(torch.arange(20.0).reshape(10, 2), torch.arange(10))
        evens = Subset(ds, [0, 2, 4, 6, 8])
        n = len(evens)
        x2, y2 = evens[1]
        labels = [yb.tolist() for xb, yb in DataLoader(evens, batch_size=2)]
    """,
)

register(
    "LDR010",
    "Samplers become MindSpore's; Subset- and WeightedRandomSampler are written out",
    group=GROUP,
    why="""
        ``Sampler`` (the base of a user's sampler), ``RandomSampler``,
        ``SequentialSampler``, ``BatchSampler`` and ``DistributedSampler`` exist in
        ``mindspore.dataset.dataloader`` with PyTorch's parameters (a ``generator=`` must
        be a NumPy generator there: a torch one is dropped and flagged, rule LDR003) and
        yield the same kind of indices, so ``sampler=`` and ``batch_sampler=`` work
        unchanged; ``DistributedSampler(ds, num_replicas, rank, shuffle=False)`` yields
        PyTorch's indices (the same padding and striding). ``SubsetRandomSampler(indices)``
        and ``WeightedRandomSampler(weights, num_samples, replacement=True)``, which
        MindSpore lacks, are written out as small classes: each epoch the first yields
        ``indices`` in a new random order, the second ``num_samples`` indices drawn with
        probability proportional to ``weights`` (with or without replacement);
        ``len(sampler)`` is as in PyTorch. The orders of the random samplers are random
        draws (NumPy's generator, not PyTorch's, like ``shuffle=True``): under
        ``%%ms_parity`` a DataLoader reading one follows PyTorch's order.
    """,
    seed=SEED,
    reference=REF,
    installed_note=_INSTALLED,
    example="""
        import torch
        from torch.utils.data import TensorDataset, DataLoader, BatchSampler, SequentialSampler
        ds = TensorDataset(torch.arange(14.0).reshape(7, 2))
        batches = BatchSampler(SequentialSampler(ds), batch_size=3, drop_last=True)
        loader = DataLoader(ds, batch_sampler=batches)
        sums = [float(b[0].sum()) for b in loader]
        n = len(loader)
    """,
)

_LOADER_SIG = ("dataset", "batch_size", "shuffle", "sampler", "batch_sampler", "num_workers",
               "collate_fn", "pin_memory", "drop_last", "timeout", "worker_init_fn",
               "multiprocessing_context", "generator")
_DROPPED = ("num_workers", "pin_memory", "pin_memory_device", "persistent_workers",
            "prefetch_factor", "timeout", "multiprocessing_context", "in_order")
_SHUFFLED = ("MindSpore shuffles with its own random order (a NumPy generator seeded from the "
             "operating system): in a plain run the batches come in another order than PyTorch's, "
             "and in another order on every run, so per-step values differ (%%ms_parity makes the "
             "MindSpore side use PyTorch's orders)")
_SHUFFLED_COMMENT = "shuffled in MindSpore's own order (%%ms_parity uses PyTorch's)"


def _shuffle_flagged(site) -> None:
    site.finding("LDR003", _SHUFFLED, comment=_SHUFFLED_COMMENT)


def _subtree(node) -> list:
    out, stack = [], [node]
    while stack:
        n = stack.pop()
        out.append(n)
        stack.extend(n.children)
    return out


def _drop(site, arg) -> str:
    """The argument is dropped from the port: what the rules logged for its code (a
    ``torch.Generator()`` left as PyTorch and flagged) goes with it. Returns its
    original text."""
    original = site.original.args[list(site.updated.args).index(arg)].value
    site.forget(*_subtree(original), findings_too=True)
    return site.code(original).strip()


def _torch_generator(site, arg):
    """``generator=`` of a loader or sampler: MindSpore takes a NumPy generator only."""
    text = _drop(site, arg)
    site.finding("LDR003", f"generator={text}: MindSpore's samplers take a "
                 "numpy.random.Generator, not PyTorch's; dropped: the order is MindSpore's own "
                 "(%%ms_parity uses PyTorch's)", comment="torch generator dropped: MindSpore's own order")
    return False


def _worker_init(site, arg):
    text = _drop(site, arg)
    site.finding("LDR005", f"worker_init_fn={text}: the port loads in the main "
                 "process, where no worker is started; set up what it initialises before the loop",
                 comment="worker_init_fn removed (no worker processes)")
    return False


def _truthy(site, node) -> bool:
    return site.literal(node, True) not in (False, None, 0)


def _keywords_of(site, node):
    """The keyword -> value nodes of a dict the call unpacks (``**kw``): a dict literal
    or ``dict(...)`` call, written in the call or assigned to the name; None when not
    visible."""
    if isinstance(node, cst.Name):
        node = site.assigned_value(node.value)
    if isinstance(node, cst.Dict):
        out = {}
        for el in node.elements:
            if not isinstance(el, cst.DictElement):
                return None
            key = site.literal(el.key, None)
            if not isinstance(key, str):
                return None
            out[key] = el.value
        return out
    if (isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "dict"
            and all(a.keyword is not None for a in node.args)):
        return {a.keyword.value: a.value for a in node.args}
    return None


def _loader(site):
    target = site.ref(f"{TARGET}.DataLoader")
    bound = site.bound()
    if bound is None:
        return _loader_unpacked(site, target)
    shuffle = site.arg("shuffle")
    new = site.apply(func=target)
    site.edit("LDR002", new, detail=site.describe("DataLoader -> mindspore.dataset.dataloader.DataLoader"))
    if shuffle is not None and _truthy(site, shuffle.value):
        site.edit("LDR003", new, detail="shuffle=True: MindSpore's RandomSampler", tags=("shuffle",))
        _shuffle_flagged(site)
    return new


def _loader_unpacked(site, target):
    """``DataLoader(ds, **kw)`` / ``(*args)``: MindSpore's DataLoader has PyTorch's
    parameters, so the call is kept; what the unpacked dict holds is checked when it
    can be seen, flagged otherwise."""
    args = []
    hidden = []
    shuffled = False
    for arg in site.updated.args:
        name = arg.keyword.value if arg.keyword is not None else None
        if name in _DROPPED:
            site.edit("LDR004", None, detail=f"{name}= dropped: {site.code(arg.value).strip()}")
            continue
        if name == "generator":
            _torch_generator(site, arg)
            continue
        if name == "worker_init_fn":
            _worker_init(site, arg)
            continue
        if name == "shuffle":
            shuffled = shuffled or _truthy(site, arg.value)
        if arg.star == "**":
            original = site.original.args[list(site.updated.args).index(arg)].value
            keywords = _keywords_of(site, original)
            if keywords is None:
                hidden.append(site.code(arg).strip())
            else:
                shuffled = shuffled or ("shuffle" in keywords and _truthy(site, keywords["shuffle"]))
                odd = sorted(k for k in keywords if k in ("generator", "worker_init_fn"))
                if odd:
                    hidden.append(f"{site.code(arg).strip()} (with {', '.join(odd)}=)")
        elif arg.star == "*":
            hidden.append(site.code(arg).strip())
        args.append(arg)
    new = site.updated.with_changes(func=target, args=args)
    if len(args) != len(site.updated.args):
        last = args[-1].with_changes(comma=site.updated.args[-1].comma) if args else None
        new = new.with_changes(args=[*args[:-1], last] if last is not None else [])
    site.edit("LDR002", new, detail="DataLoader -> mindspore.dataset.dataloader.DataLoader (unpacked arguments)")
    if hidden:
        site.finding("LDR005", f"DataLoader({', '.join(hidden)}): passed on to MindSpore's DataLoader, which "
                     "takes PyTorch's parameter names; not checked for shuffle=True (MindSpore's own "
                     "order), a torch.Generator or worker_init_fn", comment="unpacked DataLoader arguments not checked")
    if shuffled:
        site.edit("LDR003", new, detail="shuffle=True: MindSpore's RandomSampler", tags=("shuffle",))
        _shuffle_flagged(site)
    return new


# ----------------------------------------------------------------------------- entries

module("torch.utils", None)
# DLPack exchange (``torch.utils.dlpack.from_dlpack``): the table maps the functions
module("torch.utils.dlpack", "mindspore.utils.dlpack")
module("torch.utils.data", TARGET)
# ``import torch.utils.data.dataloader as D`` (``from torch.utils.data.dataset import ...``):
# what it names resolves to the entries below
for _sub in ("dataset", "dataloader", "sampler", "distributed", "_utils", "_utils.collate", "_utils.worker"):
    module(f"torch.utils.data.{_sub}", TARGET)
for _prefix in ("torch.utils.data", "torch.utils.data.dataset"):
    api(f"{_prefix}.TensorDataset", f"{TARGET}.TensorDataset", rule="LDR001", returns=DATASET)
    api(f"{_prefix}.Dataset", f"{TARGET}.Dataset", rule="LDR008", attr=True, returns=None)
    api(f"{_prefix}.IterableDataset", f"{TARGET}.IterableDataset", rule="LDR008", attr=True, returns=None)
for _prefix in ("torch.utils.data", "torch.utils.data.dataloader"):
    api(f"{_prefix}.DataLoader", f"{TARGET}.DataLoader", rule="LDR002", sig=_LOADER_SIG,
        drop={name: "LDR004" for name in _DROPPED},
        values={"generator": _torch_generator, "worker_init_fn": _worker_init},
        handler=_loader, returns=LOADER)
for _qual in ("torch.utils.data.default_collate", "torch.utils.data.dataloader.default_collate",
              "torch.utils.data._utils.collate.default_collate"):
    api(_qual, f"{TARGET}.default_collate", rule="LDR008", returns=None)
for _qual in ("torch.utils.data.default_convert", "torch.utils.data.dataloader.default_convert",
              "torch.utils.data._utils.collate.default_convert"):
    # NumPy arrays (and those inside lists, tuples, dicts) become tensors; the rest is kept
    api(_qual, f"{TARGET}.default_convert", rule="LDR008", returns=None)
# None in the main process, where the port loads (LDR004), as in PyTorch without workers
for _qual in ("torch.utils.data.get_worker_info", "torch.utils.data.dataloader.get_worker_info",
              "torch.utils.data._utils.worker.get_worker_info"):
    api(_qual, f"{TARGET}.get_worker_info", rule="LDR008", returns=None)


# ----------------------------------------------------------------------------- samplers


def _sampler(site):
    new = site.apply(func=site.ref(f"{TARGET}.{site.api.rsplit('.', 1)[-1]}"))
    site.edit("LDR010", new, detail=site.describe(f"{site.api} -> {TARGET}"))
    return new


for _prefix in ("torch.utils.data", "torch.utils.data.sampler"):
    api(f"{_prefix}.RandomSampler", f"{TARGET}.RandomSampler", rule="LDR010",
        sig=("data_source", "replacement", "num_samples", "generator"),
        values={"generator": _torch_generator}, handler=_sampler, returns=None)
    api(f"{_prefix}.SequentialSampler", f"{TARGET}.SequentialSampler", rule="LDR010", returns=None)
    api(f"{_prefix}.BatchSampler", f"{TARGET}.BatchSampler", rule="LDR010", returns=None)
    # the base of a user's sampler (``class MySampler(Sampler): __iter__/__len__``)
    api(f"{_prefix}.Sampler", f"{TARGET}.Sampler", rule="LDR010", attr=True, returns=None)
for _qual in ("torch.utils.data.DistributedSampler", "torch.utils.data.distributed.DistributedSampler"):
    # PyTorch's padding, striding and set_epoch; shuffle=True draws NumPy's order (LDR010)
    api(_qual, f"{TARGET}.DistributedSampler", rule="LDR010",
        sig=("dataset", "num_replicas", "rank", "shuffle", "seed", "drop_last"), returns=None)


def _subset_random_sampler_source(site):
    base = site.code(site.ref(f"{TARGET}.Sampler"))
    numpy = site.require_import("numpy")
    return lambda name: (
        f"class {name}({base}):\n"
        f'    """Yields the given indices in a new random order each epoch (PyTorch\'s SubsetRandomSampler)."""\n'
        f"\n"
        f"    def __init__(self, indices):\n"
        f"        super().__init__()\n"
        f"        self.indices = indices\n"
        f"\n"
        f"    def __iter__(self):\n"
        f"        for i in {numpy}.random.permutation(len(self.indices)).tolist():\n"
        f"            yield self.indices[i]\n"
        f"\n"
        f"    def __len__(self):\n"
        f"        return len(self.indices)\n"
    )


def _subset_random_sampler(site):
    bound = site.bound()
    indices = site.arg("indices")
    if bound is None or indices is None:
        site.finding("LDR010", "SubsetRandomSampler needs its indices passed as an argument (no * or **)",
                     comment="SubsetRandomSampler not ported")
        return None
    generator = site.arg("generator")
    if generator is not None:
        _torch_generator(site, generator)
    name = site.define("SubsetRandomSampler", _subset_random_sampler_source(site),
                       ("torch.utils.data.SubsetRandomSampler", "torch.utils.data.sampler.SubsetRandomSampler"))
    new = cst.Call(func=cst.Name(name), args=[cst.Arg(indices.value)])
    # a random draw (NumPy's order, like shuffle=True): %%ms_parity makes a loader follow PyTorch's
    site.edit("LDR010", new, detail="SubsetRandomSampler -> a definition drawing NumPy's order")
    return new


for _prefix in ("torch.utils.data", "torch.utils.data.sampler"):
    api(f"{_prefix}.SubsetRandomSampler", rule="LDR010", sig=("indices", "generator"),
        handler=_subset_random_sampler, returns=None)


def _weighted_sampler_source(site):
    base = site.code(site.ref(f"{TARGET}.Sampler"))
    numpy = site.require_import("numpy")
    return lambda name: (
        f"class {name}({base}):\n"
        f'    """num_samples indices drawn with probability proportional to weights (PyTorch\'s\n'
        f'    WeightedRandomSampler)."""\n'
        f"\n"
        f"    def __init__(self, weights, num_samples, replacement=True):\n"
        f"        super().__init__()\n"
        f"        if not isinstance(num_samples, int) or isinstance(num_samples, bool) or num_samples <= 0:\n"
        f'            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={{num_samples}}")\n'
        f"        if not isinstance(replacement, bool):\n"
        f'            raise ValueError(f"replacement should be a boolean value, but got replacement={{replacement}}")\n'
        f"        weights = weights.asnumpy() if hasattr(weights, 'asnumpy') else weights\n"
        f"        self.weights = {numpy}.asarray(weights, dtype={numpy}.float64)\n"
        f"        if self.weights.ndim != 1:\n"
        f'            raise ValueError(f"weights should be a 1d sequence but given weights have shape {{self.weights.shape}}")\n'
        f"        self.num_samples = num_samples\n"
        f"        self.replacement = replacement\n"
        f"\n"
        f"    def __iter__(self):\n"
        f"        p = self.weights / self.weights.sum()\n"
        f"        yield from {numpy}.random.choice(len(p), self.num_samples, replace=self.replacement, p=p).tolist()\n"
        f"\n"
        f"    def __len__(self):\n"
        f"        return self.num_samples\n"
    )


_WEIGHTED = ("torch.utils.data.WeightedRandomSampler", "torch.utils.data.sampler.WeightedRandomSampler")


def _weighted_sampler(site):
    bound = site.bound()
    if bound is None or site.arg("weights") is None or site.arg("num_samples") is None:
        site.finding("LDR010", "WeightedRandomSampler needs its weights and num_samples passed as arguments "
                     "(no * or **)", comment="WeightedRandomSampler not ported")
        return None
    generator = site.arg("generator")
    if generator is not None:
        _torch_generator(site, generator)
    name = site.define("WeightedRandomSampler", _weighted_sampler_source(site), _WEIGHTED)
    args = [a for a in site.updated.args if a is not generator]
    if generator is not None and args:
        args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    new = site.updated.with_changes(func=cst.Name(name), args=args)
    # a random draw (NumPy's, like shuffle=True): %%ms_parity makes a loader follow PyTorch's
    site.edit("LDR010", new, detail="WeightedRandomSampler -> a definition drawing with NumPy")
    return new


for _qual in _WEIGHTED:
    api(_qual, rule="LDR010", sig=("weights", "num_samples", "replacement", "generator"),
        handler=_weighted_sampler, returns=None)


# ----------------------------------------------------------------------------- Subset, random_split


_SUBSET = ("torch.utils.data.Subset", "torch.utils.data.dataset.Subset")
_RANDOM_SPLIT = ("torch.utils.data.random_split", "torch.utils.data.dataset.random_split")


def _subset_source(site):
    base = site.code(site.ref(f"{TARGET}.Dataset"))
    return lambda name: (
        f"class {name}({base}):\n"
        f'    """The items of a dataset at the given indices (PyTorch\'s Subset)."""\n'
        f"\n"
        f"    def __init__(self, dataset, indices):\n"
        f"        super().__init__()\n"
        f"        self.dataset = dataset\n"
        f"        self.indices = indices\n"
        f"\n"
        f"    def __getitem__(self, idx):\n"
        f"        if isinstance(idx, list):\n"
        f"            return self.dataset[[self.indices[i] for i in idx]]\n"
        f"        return self.dataset[self.indices[idx]]\n"
        f"\n"
        f"    def __len__(self):\n"
        f"        return len(self.indices)\n"
    )


def _subset(site):
    if site.bound() is None:
        site.finding("LDR009", "Subset(*args) cannot be ported", comment="Subset not ported")
        return None
    name = site.define("Subset", _subset_source(site), _SUBSET)
    new = site.updated.with_changes(func=cst.Name(name))
    site.edit("LDR009", new, detail="Subset -> a definition of PyTorch's Subset")
    return new


def _random_split_source(site, subset: str):
    numpy = site.require_import("numpy")
    return lambda name: (
        f"def {name}(dataset, lengths, seed=None):\n"
        f'    """PyTorch\'s random_split: consecutive Subsets of one random permutation of the rows."""\n'
        f"    lengths = list(lengths)\n"
        f"    total = sum(lengths)\n"
        f"    if abs(total - 1) <= 1e-9 and total <= 1:  # fractions of the dataset\n"
        f"        counts = [int(len(dataset) * frac) for frac in lengths]\n"
        f"        for i in range(len(dataset) - sum(counts)):\n"
        f"            counts[i % len(counts)] += 1\n"
        f"        lengths = counts\n"
        f"    if sum(lengths) != len(dataset):\n"
        f'        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")\n'
        f"    generator = {numpy}.random if seed is None else {numpy}.random.default_rng(seed)\n"
        f"    order = generator.permutation(len(dataset)).tolist()\n"
        f"    subsets, start = [], 0\n"
        f"    for n in lengths:\n"
        f"        subsets.append({subset}(dataset, order[start:start + n]))\n"
        f"        start += n\n"
        f"    return subsets\n"
    )


def _seed_of(site, node):
    """``k`` of ``torch.Generator().manual_seed(k)`` (the original node), or None."""
    if (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
            and node.func.attr.value == "manual_seed" and len(node.args) == 1
            and isinstance(node.func.value, cst.Call) and not node.func.value.args
            and site.resolve(node.func.value.func) == "torch.Generator"):
        return node.args[0].value
    return None


def _random_split(site):
    bound = site.bound()
    dataset, lengths = site.arg("dataset"), site.arg("lengths")
    if bound is None or dataset is None or lengths is None:
        site.finding("LDR009", "random_split needs its dataset and lengths passed as arguments",
                     comment="random_split not ported")
        return None
    subset = site.define("Subset", _subset_source(site), _SUBSET)
    name = site.define("random_split", _random_split_source(site, subset), _RANDOM_SPLIT)
    args = [cst.Arg(dataset.value), cst.Arg(lengths.value)]
    generator = site.arg("generator")
    if generator is not None:
        original = site.original.args[list(site.updated.args).index(generator)].value
        seed = _seed_of(site, original)
        if seed is None and isinstance(original, cst.Name):
            # ``g = torch.Generator().manual_seed(42)`` assigned first
            assigned = site.assigned_value(original.value)
            seed = _seed_of(site, assigned) if assigned is not None else None
            seed = seed if seed is not None and site.literal(seed, None) is not None else None
        _drop(site, generator)
        if seed is None:
            site.finding("LDR009", f"generator={site.code(generator.value).strip()}: only "
                         "torch.Generator().manual_seed(k) is ported (as seed=k); the split is drawn "
                         "from NumPy's global generator", comment="random_split generator dropped")
        else:
            value = site.updated_of(seed) if site.literal(seed, None) is None else seed
            args.append(cst.Arg(value, keyword=cst.Name("seed"),
                                equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                                                      whitespace_after=cst.SimpleWhitespace(""))))
    args = [a.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
            for a in args[:-1]] + [args[-1]]
    new = cst.Call(func=cst.Name(name), args=args)
    # the permutation is a random draw (NumPy's, like torch.randperm's port): under
    # %%ms_parity the Subsets take PyTorch's indices (tag "split")
    site.edit("LDR009", new, detail="random_split -> a definition of PyTorch's random_split",
              tags=("split",))
    return new


_CONCAT = ("torch.utils.data.ConcatDataset", "torch.utils.data.dataset.ConcatDataset")


def _concat_source(site):
    base = site.code(site.ref(f"{TARGET}.Dataset"))
    bisect = site.require_import("bisect")
    return lambda name: (
        f"class {name}({base}):\n"
        f'    """The items of several datasets one after the other (PyTorch\'s ConcatDataset)."""\n'
        f"\n"
        f"    def __init__(self, datasets):\n"
        f"        super().__init__()\n"
        f"        self.datasets = list(datasets)\n"
        f"        self.cumulative_sizes, total = [], 0\n"
        f"        for dataset in self.datasets:\n"
        f"            total += len(dataset)\n"
        f"            self.cumulative_sizes.append(total)\n"
        f"\n"
        f"    def __len__(self):\n"
        f"        return self.cumulative_sizes[-1]\n"
        f"\n"
        f"    def __getitem__(self, idx):\n"
        f"        if idx < 0:\n"
        f"            if -idx > len(self):\n"
        f'                raise ValueError("absolute value of index should not exceed dataset length")\n'
        f"            idx = len(self) + idx\n"
        f"        which = {bisect}.bisect_right(self.cumulative_sizes, idx)\n"
        f"        start = self.cumulative_sizes[which - 1] if which else 0\n"
        f"        return self.datasets[which][idx - start]\n"
    )


def _concat(site):
    if site.bound() is None or site.arg("datasets") is None:
        site.finding("LDR009", "ConcatDataset(*args) cannot be ported", comment="ConcatDataset not ported")
        return None
    name = site.define("ConcatDataset", _concat_source(site), _CONCAT)
    new = site.updated.with_changes(func=cst.Name(name))
    site.edit("LDR009", new, detail="ConcatDataset -> a definition of PyTorch's ConcatDataset")
    return new


_CHAIN = ("torch.utils.data.ChainDataset", "torch.utils.data.dataset.ChainDataset")


def _chain_source(site):
    base = site.code(site.ref(f"{TARGET}.IterableDataset"))
    return lambda name: (
        f"class {name}({base}):\n"
        f'    """The items of several iterable datasets one after the other (PyTorch\'s ChainDataset)."""\n'
        f"\n"
        f"    def __init__(self, datasets):\n"
        f"        super().__init__()\n"
        f"        self.datasets = datasets\n"
        f"\n"
        f"    def __iter__(self):\n"
        f"        for dataset in self.datasets:\n"
        f'            assert isinstance(dataset, {base}), "ChainDataset only supports IterableDataset"\n'
        f"            yield from dataset\n"
        f"\n"
        f"    def __len__(self):\n"
        f"        total = 0\n"
        f"        for dataset in self.datasets:\n"
        f'            assert isinstance(dataset, {base}), "ChainDataset only supports IterableDataset"\n'
        f"            total += len(dataset)\n"
        f"        return total\n"
    )


def _chain(site):
    if site.bound() is None or site.arg("datasets") is None:
        site.finding("LDR009", "ChainDataset(*args) cannot be ported", comment="ChainDataset not ported")
        return None
    name = site.define("ChainDataset", _chain_source(site), _CHAIN)
    new = site.updated.with_changes(func=cst.Name(name))
    site.edit("LDR009", new, detail="ChainDataset -> a definition of PyTorch's ChainDataset")
    return new


_STACK = ("torch.utils.data.StackDataset", "torch.utils.data.dataset.StackDataset")


def _stack_source(site):
    base = site.code(site.ref(f"{TARGET}.Dataset"))
    return lambda name: (
        f"class {name}({base}):\n"
        f'    """Item i is the tuple (or dict) of the datasets\' items i (PyTorch\'s StackDataset)."""\n'
        f"\n"
        f"    def __init__(self, *args, **kwargs):\n"
        f"        super().__init__()\n"
        f"        if args and kwargs:\n"
        f'            raise ValueError("Supported either ``tuple``- (via ``args``) or``dict``- (via ``kwargs``) like "\n'
        f'                             "input/output, but both types are given.")\n'
        f"        if not args and not kwargs:\n"
        f'            raise ValueError("At least one dataset should be passed")\n'
        f"        self.datasets = args if args else kwargs\n"
        f"        sizes = [len(d) for d in (args if args else kwargs.values())]\n"
        f"        self._length = sizes[0]\n"
        f"        if any(n != self._length for n in sizes):\n"
        f'            raise ValueError("Size mismatch between datasets")\n'
        f"\n"
        f"    def __getitem__(self, index):\n"
        f"        if isinstance(self.datasets, dict):\n"
        f"            return {{k: dataset[index] for k, dataset in self.datasets.items()}}\n"
        f"        return tuple(dataset[index] for dataset in self.datasets)\n"
        f"\n"
        f"    def __len__(self):\n"
        f"        return self._length\n"
    )


def _stack(site):
    name = site.define("StackDataset", _stack_source(site), _STACK)
    new = site.updated.with_changes(func=cst.Name(name))
    site.edit("LDR009", new, detail="StackDataset -> a definition of PyTorch's StackDataset")
    return new


for _prefix in ("torch.utils.data", "torch.utils.data.dataset"):
    api(f"{_prefix}.ChainDataset", rule="LDR009", sig=("datasets",), handler=_chain, returns=None)
    api(f"{_prefix}.StackDataset", rule="LDR009", handler=_stack, returns=None)
    api(f"{_prefix}.Subset", rule="LDR009", sig=("dataset", "indices"), handler=_subset, returns=None)
    api(f"{_prefix}.ConcatDataset", rule="LDR009", sig=("datasets",), handler=_concat, returns=None)
    api(f"{_prefix}.random_split", rule="LDR009", sig=("dataset", "lengths", "generator"),
        handler=_random_split, returns=None)
