"""Stage: sync. What is copied from PyTorch to MindSpore instead of compared.

* a PyTorch module bound to a name whose MindSpore value is a Cell gets its parameters
  and buffers copied into that Cell, once, when the name is bound to a new module, so
  random initialisation does not show up as a difference while training still does;
* a value bound by a statement the port tagged ``random`` (``torch.randn``...) is copied
  to the MindSpore side; a TensorDataset of random tensors becomes a MindSpore dataset of
  the same rows;
* a shuffled DataLoader bound by a statement the port tagged ``shuffle`` has its
  MindSpore port iterate in the order PyTorch's loader drew: each time the PyTorch
  loader is iterated, the permutation its RandomSampler draws is recorded
  (:class:`ShuffleLink`), and the MindSpore loader is rebuilt over the same rows with a
  sampler that takes those permutations in turn, so both sides see the same batches;
* random draws made while a statement runs (inside a loop or a function) are recorded on
  the PyTorch side and replayed in order on the MindSpore side (:mod:`.draws`);
* an optimizer's steps run on PyTorch's gradients after comparing them
  (:mod:`.gradients`).

Parameter names come from the port: each ported statement carries, for every PyTorch
layer it constructs, the parameter-name map of the layer's mapping entry
(``PortResult.module_params`` gathers them for a cell and the earlier cells of its
session), so BatchNorm3d's ``weight`` becomes ``bn2d.gamma`` and a Transformer layer's
``linear1`` becomes ``dense1``.
"""

from __future__ import annotations

import collections
import contextlib
import functools
import types
import weakref
from typing import Callable, Optional

from msmagic.parity_check import gradients
from msmagic.parity_check.draws import DrawReplay, HostRandom, initialiser, random_apis
from msmagic.parity_check.state import ShadowState
from msmagic.parity_check.compare import (
    DIFFERS,
    Row,
    draw_mismatch,
    is_cell,
    is_tensor_like,
    is_torch_module,
    ms_state,
    to_mindspore,
    to_numpy,
    torch_state,
)

__all__ = ["ms_name_for", "sync_module", "learn", "known_params", "Synchroniser", "ShuffleLink",
           "link_shuffle"]

#: the report's name for the random draws the MindSpore side took from PyTorch
DRAWS = "random draws"

#: PyTorch functions whose definition draws values parity cannot replay (``nn.init.normal_``
#: in ``def init_weights(m)``): a copied module they are applied to
#: (``model.apply(init_weights)``) is copied again after the statement
_INITIALISERS: "weakref.WeakSet" = weakref.WeakSet()

#: layer (qualified name) -> parameter-name map, from every port parity ran in this
#: process: modules live on in the shadow namespace after the cell that built them
_LEARNED: dict = {}


def learn(module_params: dict) -> dict:
    """Remember the parameter-name maps of a port; returns every map known so far."""
    _LEARNED.update(module_params or {})
    return dict(_LEARNED)


def known_params() -> dict:
    return dict(_LEARNED)


def ms_name_for(tmod, torch_name: str, params: Optional[dict] = None) -> str:
    """The MindSpore name of the torch parameter/buffer ``torch_name`` of ``tmod``.

    ``params``: layer qualified name -> parameter-name map (a dict, or a function
    ``(torch_module, leaf) -> name``), as the port gives them (``PortResult.module_params``).
    A parent's map may rename a child layer (``linear1`` -> ``dense1``), the owner's
    renames the leaf. A layer the maps do not name (one a torch layer builds inside
    itself, such as the LayerNorms of a TransformerEncoderLayer; or any layer, for a
    caller without a port) takes the map of the ports parity ran so far, else its
    mapping entry's.
    """
    lookup = _lookup(params)
    *path, leaf = torch_name.split(".")
    out, owner = [], tmod
    for part in path:
        names = lookup(type(owner))
        out.append(names.get(part, part) if isinstance(names, dict) else part)
        owner = owner.get_submodule(part)
    names = lookup(type(owner))
    if callable(names):
        leaf = names(owner, leaf)
    elif names:
        leaf = names.get(leaf, leaf)
    return ".".join(out + [leaf])


def _lookup(params: Optional[dict]) -> Callable:
    maps = [params] if params else []
    maps.append(_LEARNED)

    def find(cls):
        """The map for a torch layer class (or its torch base class, for user
        subclasses of a torch layer)."""
        for klass in cls.__mro__:
            if klass.__module__.startswith("torch.nn"):
                key = f"torch.nn.{klass.__name__}"
                for known in maps:
                    if key in known:
                        return known[key]
                found = _table_params(key)
                if found is not None:
                    return found
        return None

    return find


@functools.lru_cache(maxsize=None)
def _table_params(qualname: str):
    """The ``params`` of the mapping entry for ``qualname``, for layers no port named."""
    try:
        from msmagic.engine import spec
        from msmagic.rules.registry import _load

        _load()
        entry = spec.APIS.get(qualname)
    except Exception:  # noqa: BLE001 - no table: names stay as they are
        return None
    return getattr(entry, "params", None)


def sync_module(tmod, cell, params: Optional[dict] = None) -> list[str]:
    """Copy a torch module's parameters and buffers into the matching MindSpore Cell;
    returns the torch names copied. ``params``: as for :func:`ms_name_for`."""
    import mindspore

    copied = []
    state = ms_state(cell)
    for name, value in torch_state(tmod):
        p = state.get(ms_name_for(tmod, name, params))
        if p is None:
            continue
        arr = value.detach().cpu().numpy()
        if tuple(p.shape) != arr.shape:
            if p.size != arr.size:
                continue
            arr = arr.reshape(p.shape)
        data = mindspore.Tensor(arr, dtype=p.dtype)
        if hasattr(p, "set_data"):
            p.set_data(data)
        else:  # a registered buffer is a plain Tensor
            p.assign_value(data)
        copied.append(name)
    return copied


class Synchroniser:
    """Applies the sync after each step of a run and remembers what it copied.

    ``params``: the port's parameter-name maps; ``run``: the PairRun that records what
    was synchronised (and a row when a random draw had another shape or dtype).
    """

    def __init__(self, run, params: dict, enabled: bool = True, rtol: float = 1e-5,
                 atol: float = 1e-5, state=None, files_apart: bool = True) -> None:
        self.run = run
        #: the MindSpore side writes into its shadow folder (else where its code says)
        self.files_apart = files_apart
        #: what the MindSpore side keeps across cells (its files, the random generators)
        self.state = state if state is not None else ShadowState()
        self.rtol, self.atol = rtol, atol
        self.params = params
        self.enabled = enabled
        #: name -> id of the torch module last copied into the Cell of that name
        self.modules: dict[str, int] = {}
        #: name -> the version counters of that torch module's tensors when it was copied
        #: (an in-place update, an optimizer step or a BatchNorm forward, bumps them)
        self.copied_versions: dict[str, tuple] = {}
        #: random draws copied across: name -> the step that drew them (reported as
        #: synchronised, not compared, unless a later statement rebinds the name)
        self.values: dict[str, int] = {}
        #: what could not be synchronised, for the report's notes
        self.notes: list[str] = []
        #: shuffled loaders' links -> epochs the MindSpore side had taken when the run began
        self._taken: dict = {}
        #: random draws made while statements run (inside loops and functions)
        self.draws = DrawReplay()
        #: Python's and NumPy's random state, the same at the start of each side
        self.host_random = HostRandom(self.state.generators)

    @contextlib.contextmanager
    def torch_side(self, step, tns: dict):
        """While the PyTorch side of a step runs: record its random draws (torch's
        factories; Python's and NumPy's state) and the files it writes."""
        with contextlib.ExitStack() as stack:
            stack.enter_context(self.host_random.torch_side(step, tns))
            if self.enabled:
                stack.enter_context(self.draws.recording())
            stack.enter_context(self.state.files.torch_side(self.run.written["torch"], step.index, tns))
            yield

    @contextlib.contextmanager
    def ms_side(self, step, mns: dict):
        """While the MindSpore side of a step runs: its draws return PyTorch's, it starts
        from the random state PyTorch's side started from, and its files are its own.
        Python's and NumPy's random state is synchronised with --no-sync too: both sides
        run the same library, as a plain run of the port would."""
        with contextlib.ExitStack() as stack:
            stack.enter_context(self.host_random.ms_side(mns))
            if self.enabled:
                stack.enter_context(self.draws.replaying(step.index))
            files = self.state.files
            written = self.run.written["mindspore"]
            stack.enter_context(files.ms_side(written) if self.files_apart else files.recorded(written))
            yield

    def ms_name(self, tmod, torch_name: str) -> str:
        return ms_name_for(tmod, torch_name, self.params)

    def before_torch(self, step) -> None:
        """The PyTorch side is about to run ``step``: the shuffle orders its loaders draw
        now are the ones the MindSpore side of the same step takes (earlier leftovers,
        which MindSpore did not take, are dropped). Likewise the gradients its optimizers
        step with."""
        for link in list(gradients.LINKS):
            link.clear()
            link.reset()
            link.recording = self.enabled
            link.rtol, link.atol = self.rtol, self.atol
        if not self.enabled:
            return
        for link in list(_LINKS):
            self._taken.setdefault(link, (link.taken, link.missed))
            link.pending.clear()
            link.recording = True

    def after_torch(self, step) -> None:
        for link in list(_LINKS) + list(gradients.LINKS):
            link.recording = False

    def finish(self) -> None:
        """Say which loaders gave the MindSpore side PyTorch's shuffle order in this run,
        and which random draws it took from PyTorch."""
        drawn = self.draws.summary()
        if drawn:
            self.run.synchronised.append(DRAWS)
            self.run.sync_reasons[DRAWS] = drawn
        self.notes.extend(self.draws.problems)
        for link, (taken, missed) in self._taken.items():
            used, extra = link.taken - taken, link.missed - missed
            if not used and not extra:
                continue
            reason = f"PyTorch's shuffle order used ({used} epoch{'s' if used != 1 else ''})"
            if extra:
                reason += (f"; {extra} more MindSpore epoch{'s' if extra != 1 else ''} had no "
                           f"PyTorch order to follow and {'were' if extra != 1 else 'was'} "
                           "shuffled at random")
            if link.name not in self.run.synchronised:
                self.run.synchronised.append(link.name)
            before = self.run.sync_reasons.get(link.name, "")
            kept = [part for part in before.split("; ") if part and "shuffle order" not in part]
            self.run.sync_reasons[link.name] = "; ".join(kept + [reason])

    def unchanged_copy(self, name: str, tmod) -> bool:
        """The torch module ``name`` was copied to MindSpore and nothing has changed its
        tensors since: comparing it would only compare the copy."""
        return (self.modules.get(name) == id(tmod)
                and self.copied_versions.get(name) == tensor_versions(tmod))

    def after(self, step, tns: dict, mns: dict) -> list[Row]:
        """Synchronise what ``step`` bound; returns the rows of gradients that differed
        at the optimizer steps it took."""
        self.host_random.learn(step, tns)
        if not self.enabled:
            return []
        run = self.run
        failed = [row for link in list(gradients.LINKS) if (row := link.report(run, step.index))]
        inits = any(initialiser(api) for api in random_apis(step.tags))
        if inits:
            self._initialisers(step, tns)
        # the MindSpore side took every draw PyTorch made: what the step bound is compared
        replayed = self.draws.covers(step.tags)
        self._loaders(step, tns, mns)
        for n in step.bound:
            if n in tns and n in mns and is_torch_module(tns[n]) and is_cell(mns[n]):
                if self.modules.get(n) != id(tns[n]):
                    sync_module(tns[n], mns[n], self.params)
                    self.modules[n] = id(tns[n])
                    self.copied_versions[n] = tensor_versions(tns[n])
                    run.synchronised.append(n)
                    run.sync_reasons[n] = "parameters and buffers copied as initialised"
            elif "random" in step.tags and n in tns and n in mns and _is_tensor_dataset(tns[n]):
                new, problem = dataset_from_torch(tns[n], mns[n])
                if new is None:
                    self.notes.append(f"`{n}`: the random tensors of the TensorDataset were not "
                                      f"copied to MindSpore: {problem}")
                    continue
                mns[n] = new
                run.synchronised.append(n)
                self.values[n] = step.index
                if problem:
                    run.rows.append(Row(n, DIFFERS, statement=step.index, note=(
                        f"random values synchronised, but {problem}")))
                run.sync_reasons[n] = "random values copied (the TensorDataset's tensors)"
            elif "random" in step.tags and n in tns and is_tensor_like(tns[n]) and not replayed:
                drawn = mns.get(n)
                mns[n] = _copied_draw(tns[n], drawn, n)
                run.synchronised.append(n)
                self.values[n] = step.index
                # the values are copied, but the MindSpore draw must have had the
                # same shape and dtype: a mismatch is a porting error worth a row
                mismatch = draw_mismatch(n, tns[n], drawn, step.index)
                if mismatch is not None:
                    run.rows.append(mismatch)
                run.sync_reasons[n] = "random values copied"
        # a random initialisation in place: nn.init.normal_ in the statement, or a function
        # whose definition calls one (model.apply(init_weights)). The draws differ on each
        # side and no replay covers them, so PyTorch's values are copied again into what the
        # statement mentions (a module, a tensor); other random statements (a training loop
        # with dropout) copy nothing back: that would hide what training changed
        initialises = inits or any(
            isinstance(tns.get(n), types.FunctionType) and tns[n] in _INITIALISERS for n in step.names)
        if initialises:
            for n in sorted(step.names - set(step.bound)):
                if n not in tns or n not in mns:
                    continue
                if _initialised_tensor(tns[n], mns[n]):
                    # nn.init.xavier_uniform_(W) on a tensor or Parameter of its own
                    mns[n] = _copied_draw(tns[n], mns[n], n)
                    if n not in run.synchronised:
                        run.synchronised.append(n)
                    run.sync_reasons[n] = "random values copied (an in-place random initialisation)"
                    continue
                if is_torch_module(tns[n]) and is_cell(mns[n]):
                    sync_module(tns[n], mns[n], self.params)
                    self.modules[n] = id(tns[n])
                    self.copied_versions[n] = tensor_versions(tns[n])
                    if n not in run.synchronised:
                        run.synchronised.append(n)
                    run.sync_reasons[n] = ("parameters and buffers copied as initialised, and again "
                                           "after an in-place random initialisation")
        for n in step.bound:
            if gradients.is_torch_optimizer(tns.get(n)) and gradients.is_ms_optimizer(mns.get(n)):
                link, problem = gradients.link_optimizer(n, tns[n], mns[n], tns, mns, self.params,
                                                         self.rtol, self.atol)
                if link is None:
                    self.notes.append(f"`{n}`: the MindSpore optimizer steps with its own gradients "
                                      f"({problem})")
        return failed

    def _initialisers(self, step, tns: dict) -> None:
        """Remember the functions ``step`` defined (a ``def`` binds no name in the plan:
        they are found by the lines of their code) or bound: their calls draw values
        parity cannot replay."""
        first, last = step.torch_lines
        for value in list(tns.values()):
            if isinstance(value, types.FunctionType) and (
                    value.__code__.co_filename == self.run.filenames[0]
                    and first <= value.__code__.co_firstlineno <= last):
                _INITIALISERS.add(value)
        for n in step.bound:
            if isinstance(tns.get(n), types.FunctionType):
                _INITIALISERS.add(tns[n])

    def _loaders(self, step, tns: dict, mns: dict) -> None:
        """Loaders the step bound: random TensorDataset data copied, shuffle linked.

        A loader the statement builds (tagged ``shuffle``) or gets from a function
        (``train_loader = make_loader(ds)``) is linked when PyTorch shuffles it; one
        already linked (``b = a``) keeps its link."""
        for n in step.bound:
            loader = tns.get(n)
            if n not in mns or not _is_torch_loader(loader):
                continue
            rows = None
            if "random" in step.tags and _is_tensor_dataset(loader.dataset):
                rows = _Columns([to_numpy(t) for t in loader.dataset.tensors])
            link = None
            state = _shuffle_state(loader)
            if state == "unlinked" or (state == "other" and "shuffle" in step.tags):
                link, problem = link_shuffle(n, loader)
                if link is None:
                    self.notes.append(f"`{n}`: PyTorch's shuffle order is not used on the MindSpore "
                                      f"side ({problem}); its batches come in another order")
                    continue
            if link is None and rows is None:
                continue
            new, problem = rebuild_loader(mns[n], link, rows)
            if new is None:
                if link is not None:
                    unlink(loader)
                self.notes.append(f"`{n}`: the MindSpore loader {problem}, so "
                                  + ("PyTorch's shuffle order is not used; its batches come in "
                                     "another order" if link is not None else
                                     "the random data of its TensorDataset was not copied"))
                continue
            mns[n] = new
            if n not in self.run.synchronised:
                self.run.synchronised.append(n)
            reasons = []
            if rows is not None:
                reasons.append("random values copied (the TensorDataset's tensors)")
                self.values[n] = step.index
            if link is not None:
                reasons.append("PyTorch's shuffle order used")
            self.run.sync_reasons[n] = "; ".join(reasons)


def _initialised_tensor(torch_value, ms_value) -> bool:
    """A PyTorch tensor and the MindSpore tensor of the same name, of one shape."""
    import mindspore

    return (type(torch_value).__module__.startswith("torch") and hasattr(torch_value, "detach")
            and isinstance(ms_value, mindspore.Tensor)
            and tuple(torch_value.shape) == tuple(ms_value.shape))


def _copied_draw(torch_value, ms_value, name: str):
    """PyTorch's random values for the MindSpore side: a MindSpore Parameter the statement
    bound (``w = nn.Parameter(torch.randn(3))``) keeps its identity and takes the values."""
    import mindspore

    if isinstance(ms_value, mindspore.Parameter):
        arr = to_numpy(torch_value)
        if tuple(ms_value.shape) == arr.shape:
            ms_value.set_data(mindspore.Tensor(arr, dtype=ms_value.dtype))
            return ms_value
    return to_mindspore(torch_value, name=name)


# ----------------------------------------------------------------------------- datasets


def tensor_versions(tmod) -> tuple:
    """(identity, version counter) of each parameter and buffer of a torch module."""
    out = []
    for t in list(tmod.parameters()) + list(tmod.buffers()):
        out.append((id(t), getattr(t, "_version", None)))
    return tuple(out)


def _is_torch_loader(v) -> bool:
    return type(v).__module__.startswith("torch.utils.data") and type(v).__name__ == "DataLoader"


def _is_tensor_dataset(v) -> bool:
    return type(v).__module__.startswith("torch.utils.data") and type(v).__name__ == "TensorDataset"


class _Columns:
    """Rows of NumPy columns, randomly accessible: a source for a GeneratorDataset."""

    def __init__(self, columns: list):
        self.columns = columns

    def __getitem__(self, i):
        return tuple(c[i] for c in self.columns)

    def __len__(self) -> int:
        return len(self.columns[0]) if self.columns else 0


def _ms_source(ms_value):
    """The source dataset of a MindSpore value (a dataset, or ``.batch`` of one, with a
    ``.shuffle`` between): (batch node or None, source, whether it was shuffled), or a
    str saying why there is none."""
    import mindspore.dataset as mds
    from mindspore.dataset.engine.datasets import BatchDataset, ShuffleDataset

    batch = None
    node = ms_value
    if isinstance(node, BatchDataset):
        if node.per_batch_map is not None or node.batch_size_func is not None or len(node.children) != 1:
            return "batches with a per_batch_map or a batch-size function"
        batch, node = node, node.children[0]
    shuffled = False
    if isinstance(node, ShuffleDataset):
        shuffled, node = True, node.children[0]
    if not isinstance(node, mds.GeneratorDataset) or node.children or not hasattr(node.source, "__getitem__"):
        return "is not built from a randomly accessible dataset (NumpySlicesDataset or GeneratorDataset)"
    return batch, node, shuffled or bool(node.is_shuffled())


def dataset_from_torch(tds, ms_value):
    """A MindSpore dataset of a TensorDataset's rows, with the columns of ``ms_value``
    (the MindSpore side's dataset): (dataset, problem) where problem says how the
    MindSpore side's own rows differed in kind ("" when they agree); (None, why) when
    ``ms_value`` is no dataset that can be rebuilt."""
    found = _ms_source(ms_value)
    if isinstance(found, str):
        return None, f"the MindSpore value {found}"
    batch, source, shuffled = found
    if batch is not None:
        return None, "the MindSpore value is batched"
    import mindspore.dataset as mds

    columns = [to_numpy(t) for t in tds.tensors]
    problem = _rows_mismatch(columns, source)
    new = mds.NumpySlicesDataset(tuple(columns), column_names=list(source.column_names) or None,
                                 shuffle=shuffled)
    return new, problem


def _rows_mismatch(columns: list, source) -> str:
    """How the MindSpore source's rows differ in number, shape or dtype from the torch
    columns ("" when they agree)."""
    from msmagic.parity_check.compare import _kind

    if len(source.source) != len(columns[0]):
        return f"the MindSpore dataset had {len(source.source)} rows, PyTorch's {len(columns[0])}"
    if not len(source.source):
        return ""
    row = source.source[0]
    row = row if isinstance(row, tuple) else (row,)
    if len(row) != len(columns):
        return f"the MindSpore dataset had {len(row)} columns, PyTorch's {len(columns)}"
    for i, (m, t) in enumerate(zip(row, columns)):
        m = to_numpy(m) if to_numpy(m) is not None else m
        shape, dtype = getattr(m, "shape", ()), str(getattr(m, "dtype", type(m).__name__))
        if tuple(shape) != tuple(t.shape[1:]) or _kind(dtype) != _kind(str(t.dtype)):
            return (f"column {i} of the MindSpore dataset had rows of shape {tuple(shape)} and dtype "
                    f"{dtype}, PyTorch's {tuple(t.shape[1:])} and {t.dtype}")
    return ""


# ----------------------------------------------------------------------------- shuffle


#: every live link (a PyTorch loader's recorded orders), across parity runs: loaders live
#: on in the namespaces after the cell that built them
_LINKS: "weakref.WeakSet" = weakref.WeakSet()


class ShuffleLink:
    """The permutations a shuffled PyTorch DataLoader drew, for its MindSpore port.

    The PyTorch side appends one order per iteration of the loader (while a parity step
    runs); the MindSpore side's sampler takes them first in, first out.
    """

    def __init__(self, name: str, size: int):
        self.name = name
        self.size = size
        self.pending: collections.deque = collections.deque()
        self.recording = False
        self.taken = 0  # orders the MindSpore side took
        self.missed = 0  # MindSpore epochs that found no order and were shuffled at random

    def record(self, order: list) -> None:
        if self.recording:
            self.pending.append(order)

    def take(self) -> list:
        if self.pending:
            self.taken += 1
            return self.pending.popleft()
        import numpy as np

        self.missed += 1
        return np.random.permutation(self.size).tolist()


class _RecordingSampler:
    """Stands in for a DataLoader's RandomSampler inside its BatchSampler: the same
    permutation, drawn at the same moment (when the first index is asked for), recorded
    for the MindSpore side."""

    def __init__(self, sampler, link: ShuffleLink):
        self.sampler = sampler
        self.link = link

    def __len__(self) -> int:
        return len(self.sampler)

    def __iter__(self):
        order = list(self.sampler)
        self.link.record(order)
        yield from order

    def __getattr__(self, name):
        return getattr(self.sampler, name)


def _shuffle_state(loader) -> str:
    """"unlinked": the loader draws its order with a RandomSampler; "linked": its
    orders are recorded already; "sequential": not shuffled; "other": a sampler parity
    cannot follow."""
    from torch.utils.data import RandomSampler, SequentialSampler

    inner = getattr(getattr(loader, "batch_sampler", None), "sampler", None)
    if isinstance(inner, _RecordingSampler):
        return "linked"
    if isinstance(getattr(loader, "sampler", None), SequentialSampler):
        return "sequential"
    return "unlinked" if type(inner) is RandomSampler else "other"


def link_shuffle(name: str, loader):
    """Start recording the orders a shuffled torch DataLoader draws: (link, "") or
    (None, why not)."""
    from torch.utils.data import RandomSampler

    batches = getattr(loader, "batch_sampler", None)
    inner = getattr(batches, "sampler", None)
    if batches is None or type(inner) is not RandomSampler:
        return None, "it does not draw its order with a RandomSampler"
    if inner.replacement or inner.num_samples != len(inner.data_source):
        return None, "it samples with replacement or not every row"
    link = ShuffleLink(name, len(inner.data_source))
    batches.sampler = _RecordingSampler(inner, link)
    _LINKS.add(link)
    return link, ""


def unlink(loader) -> None:
    batches = getattr(loader, "batch_sampler", None)
    inner = getattr(batches, "sampler", None)
    if isinstance(inner, _RecordingSampler):
        _LINKS.discard(inner.link)
        batches.sampler = inner.sampler


@functools.lru_cache(maxsize=1)
def _order_sampler_class():
    import mindspore.dataset as mds

    class TorchOrder(mds.Sampler):
        """Yields, each epoch, the next permutation the PyTorch loader drew."""

        def __init__(self, link: ShuffleLink):
            self.link = link
            super().__init__()

        def __iter__(self):
            return iter(self.link.take())

        def __len__(self) -> int:
            return self.link.size

        def __deepcopy__(self, memo):
            # MindSpore copies the pipeline for every iteration: the copies must share
            # the link's queue
            return self

    return TorchOrder


def rebuild_loader(ms_loader, link: Optional[ShuffleLink], rows=None):
    """The MindSpore loader ``ms_loader`` (``[.shuffle(n)].batch(...)`` of a source
    dataset) rebuilt over the same rows (or ``rows``: the PyTorch side's random data) in
    the order ``link`` gives: (loader, "") or (None, why not)."""
    import mindspore.dataset as mds

    found = _ms_source(ms_loader)
    if isinstance(found, str):
        return None, found
    batch, source, shuffled = found
    if batch is None:
        return None, "is not a batched dataset"
    data = rows if rows is not None else source.source
    if link is not None and len(data) != link.size:
        return None, f"has {len(data)} rows where PyTorch's has {link.size}"
    options = {"sampler": _order_sampler_class()(link)} if link is not None else {"shuffle": shuffled}
    new = mds.GeneratorDataset(data, column_names=list(source.column_names), **options)
    return new.batch(batch.batch_size, drop_remainder=batch.drop_remainder), ""
