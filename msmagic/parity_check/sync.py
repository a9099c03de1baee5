"""Stage: sync. What is copied from PyTorch to MindSpore instead of compared.

* a PyTorch module bound to a name whose MindSpore value is a Cell gets its parameters
  and buffers copied into that Cell, once, when the name is bound to a new module, so
  random initialisation does not show up as a difference while training still does;
* a value bound by a statement the port tagged ``random`` (``torch.randn``...) is copied
  to the MindSpore side; a TensorDataset of random tensors gives its tensors to the
  MindSpore TensorDataset of the same name (or of the loader bound);
* a ``Subset`` (or the list ``random_split`` returns) takes the indices of PyTorch's, so
  a random split holds the same rows on both sides;
* a shuffled DataLoader has its MindSpore port iterate in the order PyTorch's loader
  drew: each time the PyTorch loader is iterated, the indices its RandomSampler,
  SubsetRandomSampler, WeightedRandomSampler or shuffling DistributedSampler yields are
  recorded (:class:`ShuffleLink`), and the MindSpore
  loader's BatchSampler takes them in turn (:class:`TorchOrder`), so both sides see the
  same batches. Loaders are paired as they are built while a statement runs (the k-th
  MindSpore DataLoader built follows the k-th PyTorch one, so a loader a function builds
  and iterates is followed too) and by the name a statement binds;
* random draws made while a statement runs (inside a loop or a function), and the masks
  of PyTorch's dropout layers, are recorded on the PyTorch side and replayed in order on
  the MindSpore side (:mod:`.draws`);
* every layer call of a statement that calls a model is compared as the MindSpore side
  makes it, to name the first layer whose output differs (:mod:`.layers`);
* an optimizer's steps run on PyTorch's gradients after comparing them
  (:mod:`.gradients`); an optimizer built while a statement runs (a script's
  ``if __name__ == "__main__":`` block, a function that builds and fits) is paired, as
  loaders are, with the MindSpore optimizer built in its place: the k-th with the k-th.

The draw replay and the layer drill-down are *parts*: objects with ``torch_side(step,
tns)`` and ``ms_side(step, mns)``, context managers open while that side of a statement
runs, which :class:`Synchroniser` enters in the order of its ``parts``.

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
from msmagic.parity_check.layers import LayerTrace
from msmagic.parity_check.state import ShadowState
from msmagic.parity_check.compare import (
    DIFFERS,
    Row,
    draw_mismatch,
    is_cell,
    is_tensor_like,
    is_torch_module,
    ms_state,
    put_values,
    to_mindspore,
    to_numpy,
    torch_state,
)

__all__ = ["ms_name_for", "sync_module", "learn", "known_params", "Synchroniser", "ShuffleLink",
           "link_shuffle", "follow_order", "copy_tensor_dataset", "copy_split"]

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
        put_values(p, mindspore.Tensor(arr, dtype=p.dtype))
        copied.append(name)
    return copied


class Synchroniser:
    """Applies the sync after each step of a run and remembers what it copied.

    ``params``: the port's parameter-name maps; ``run``: the PairRun that records what
    was synchronised (and a row when a random draw had another shape or dtype).
    """

    def __init__(self, run, params: dict, enabled: bool = True, rtol: float = 1e-5,
                 atol: float = 1e-5, state=None, files_apart: bool = True, layers: bool = True) -> None:
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
        #: steps that drew random values the MindSpore side did not replay (what they
        #: bound was copied; a value they leave as the cell's output is not compared)
        self.drawn_steps: set[int] = set()
        #: what could not be synchronised, for the report's notes
        self.notes: list[str] = []
        #: shuffled loaders' links -> epochs the MindSpore side had taken when the run began
        self._taken: dict = {}
        #: random draws made while statements run (inside loops and functions)
        self.draws = DrawReplay()
        #: the DataLoaders the PyTorch side of the step being run built, in order: the
        #: link of each shuffled one, None for the others
        self._built: list = []
        #: likewise the optimizers: the gradient link recording each one's steps (None for
        #: one whose steps cannot be followed)
        self._recorders: list = []
        #: Python's and NumPy's random state, the same at the start of each side
        self.host_random = HostRandom(self.state.generators)
        #: modules a statement builds and calls before it ends (a script's
        #: ``if __name__ == "__main__":`` block builds the model and trains it)
        self.first_calls = FirstCalls()
        #: every layer call compared as the MindSpore side makes it (the first layer
        #: whose computation differs)
        self.layers = LayerTrace(params, ms_name_for, rtol, atol, enabled=enabled and layers)
        #: the parts that act while each side of a statement runs, in this order: each has
        #: ``torch_side(step, tns)`` and ``ms_side(step, mns)``, context managers open
        #: while that side runs. Draws are replayed before layers are traced, so a traced
        #: layer sees the values it computes with.
        self.parts = (self.draws, self.layers)

    @contextlib.contextmanager
    def torch_side(self, step, tns: dict):
        """While the PyTorch side of a step runs: record its random draws (torch's
        factories; Python's and NumPy's state), the modules it builds and calls, and the
        files it writes."""
        with contextlib.ExitStack() as stack:
            stack.enter_context(self.host_random.torch_side(step, tns))
            if self.enabled:
                for part in self.parts:
                    stack.enter_context(part.torch_side(step, tns))
                stack.enter_context(self.first_calls.recording(tns))
                # the shuffled loaders it builds are linked, for the MindSpore side to follow
                self._built = []
                stack.enter_context(_on_build(_torch_loader_class(), self._torch_loader_built))
                # so do the optimizers it builds, for the MindSpore optimizer built in their place
                self._recorders = []
                stack.enter_context(_on_build(_torch_optimizer_class(), self._torch_optimizer_built))
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
                for part in self.parts:
                    stack.enter_context(part.ms_side(step, mns))
                stack.enter_context(self.first_calls.replaying(mns, self.params))
                # the loaders it builds follow the orders of those PyTorch built in the same place
                built = iter(list(self._built))
                stack.enter_context(_on_build(_ms_loader_class(),
                                              lambda loader: self._ms_loader_built(loader, built)))
                recorders = iter(list(self._recorders))
                for cls in _optimizer_classes():
                    stack.enter_context(_on_build(cls, lambda opt: self._ms_optimizer_built(opt, recorders, mns)))
            files = self.state.files
            written = self.run.written["mindspore"]
            stack.enter_context(files.ms_side(written) if self.files_apart else files.recorded(written))
            yield

    def _torch_loader_built(self, loader) -> None:
        """A PyTorch DataLoader built while a step runs (in a function, a loop): linked
        when it shuffles, so the MindSpore loader built in its place can follow it."""
        link = None
        if _shuffle_state(loader) == "unlinked":
            link, _ = link_shuffle("a DataLoader built while the cell ran", loader)
            if link is not None:
                self._taken.setdefault(link, (0, 0))
                link.recording = True
        self._built.append(link)

    def _ms_loader_built(self, loader, built) -> None:
        link = next(built, None)
        if link is not None and follow_order(loader, link):
            self.notes.append("a DataLoader built while the cell ran: its MindSpore port cannot follow "
                              "PyTorch's shuffle order; its batches come in another order")

    def _torch_optimizer_built(self, optimizer) -> None:
        """A PyTorch optimizer built while a step runs (a script's ``if __name__ ==
        "__main__":`` block builds the model, its optimizer and trains them): its steps'
        gradients are recorded from now on, before any name holds it."""
        self._recorders.append(gradients.recorder("an optimizer built while the cell ran", optimizer,
                                                  self.rtol, self.atol))

    def _ms_optimizer_built(self, optimizer, recorders, mns: dict) -> None:
        """The MindSpore optimizer built in the place of the next PyTorch one steps with its
        gradients (the k-th built follows the k-th, as loaders do)."""
        if getattr(type(optimizer), "_msmagic_link", None) is not None:
            return  # its build called the hook once already
        link = next(recorders, None)
        if link is None:
            return
        problem = gradients.attach(link, optimizer, self.run.torch_ns, mns, self.params)
        if problem:
            link.close()
            self.notes.append(f"an optimizer built while the cell ran: the MindSpore optimizer steps with its own "
                              f"gradients ({problem})")

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
        for n in step.bound:  # an optimizer the statement built and bound takes its name
            link = getattr(type(mns.get(n)), "_msmagic_link", None)
            if link is not None and link in self._recorders and link.torch_optimizer() is tns.get(n):
                link.name = n
        failed = [row for link in list(gradients.LINKS) if (row := link.report(run, step.index))]
        for link in self._recorders:
            if link is None:
                continue
            link.held = None
            if link.pairs is None:  # no MindSpore optimizer was built in its place
                link.close()
        self._recorders = []
        inits = any(initialiser(api) for api in random_apis(step.tags))
        if inits:
            self._initialisers(step, tns)
        # the MindSpore side took every draw PyTorch made: what the step bound is compared
        replayed = self.draws.covers(step.tags)
        self._loaders(step, tns, mns)
        for n in step.bound:
            if n in tns and n in mns and self._module_list(n, tns[n], mns[n]):
                continue
            if n in tns and n in mns and is_torch_module(tns[n]) and is_cell(mns[n]):
                if self.modules.get(n) != id(tns[n]) and self.first_calls.gave(tns[n]):
                    # built and called in the statement: its Cell took PyTorch's weights
                    # before the first call, so what the statement did with it (trained
                    # it) is compared, not copied over
                    self.modules[n] = id(tns[n])
                    self.copied_versions[n] = None
                    run.synchronised.append(n)
                    run.sync_reasons[n] = ("parameters and buffers copied as initialised, before the "
                                           "statement first called it; compared after it")
                elif self.modules.get(n) != id(tns[n]):
                    sync_module(tns[n], mns[n], self.params)
                    self.modules[n] = id(tns[n])
                    self.copied_versions[n] = tensor_versions(tns[n])
                    run.synchronised.append(n)
                    run.sync_reasons[n] = "parameters and buffers copied as initialised"
            elif "random" in step.tags and n in tns and n in mns and _is_tensor_dataset(tns[n]):
                copied, problem = copy_tensor_dataset(tns[n], mns[n])
                if not copied:
                    self.notes.append(f"`{n}`: the random tensors of the TensorDataset were not "
                                      f"copied to MindSpore: {problem}")
                    continue
                run.synchronised.append(n)
                self.values[n] = step.index
                if problem:
                    run.rows.append(Row(n, DIFFERS, statement=step.index, note=(
                        f"random values synchronised, but {problem}")))
                run.sync_reasons[n] = "random values copied (the TensorDataset's tensors)"
            elif n in tns and n in mns and copy_split(tns[n], mns[n]):
                run.synchronised.append(n)
                run.sync_reasons[n] = "PyTorch's split used (the indices of its Subsets)"
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
        if "random" in step.tags and not replayed:
            self.drawn_steps.add(step.index)  # a last value it draws is not compared
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
            pairs = [(n, tns.get(n), mns.get(n))]
            if _same_length_sequences(tns.get(n), mns.get(n)):  # opts = [Adam(net.parameters()) for net in nets]
                pairs = [(f"{n}[{i}]", t, m) for i, (t, m) in enumerate(zip(tns[n], mns[n]))]
            for label, topt, mopt in pairs:
                if gradients.is_torch_optimizer(topt) and gradients.is_ms_optimizer(mopt):
                    link, problem = gradients.link_optimizer(label, topt, mopt, tns, mns, self.params,
                                                             self.rtol, self.atol)
                    if link is None:
                        self.notes.append(f"`{label}`: the MindSpore optimizer steps with its own gradients "
                                          f"({problem})")
        return failed

    def _module_list(self, n: str, tvalue, mvalue) -> bool:
        """``nets = [Net(False), Net(True)]``: a list or tuple of modules bound by the step;
        each module's parameters and buffers are copied to the cell at its place. True when
        ``n`` was such a list (handled)."""
        if not _same_length_sequences(tvalue, mvalue) or not tvalue:
            return False
        if not all(is_torch_module(t) and is_cell(m) for t, m in zip(tvalue, mvalue)):
            return False
        if self.modules.get(n) == tuple(id(t) for t in tvalue):
            return True
        for t, m in zip(tvalue, mvalue):
            sync_module(t, m, self.params)
        self.modules[n] = tuple(id(t) for t in tvalue)
        self.copied_versions[n] = [tensor_versions(t) for t in tvalue]
        self.run.synchronised.append(n)
        self.run.sync_reasons[n] = (f"parameters and buffers of its {len(tvalue)} modules copied as "
                                    "initialised")
        return True

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

        A loader the statement builds (linked as it was built, and named here) or gets
        from a function (``train_loader = make_loader(ds)``) is linked when PyTorch
        shuffles it; one already linked by an earlier statement (``b = a``) keeps its
        link."""
        for n in step.bound:
            loader = tns.get(n)
            if n not in mns or not _is_torch_loader(loader):
                continue
            reasons = []
            if "random" in step.tags and _is_tensor_dataset(loader.dataset):
                copied, _ = copy_tensor_dataset(loader.dataset, getattr(mns[n], "dataset", None))
                if copied:
                    reasons.append("random values copied (the TensorDataset's tensors)")
                    self.values[n] = step.index
                else:
                    self.notes.append(f"`{n}`: the random data of its TensorDataset was not copied "
                                      "to MindSpore (the MindSpore loader reads no TensorDataset)")
            state = _shuffle_state(loader)
            link = loader.batch_sampler.sampler.link if state == "linked" else None
            if link is not None and link in self._built:
                link.name = n  # linked when the statement built it: named as it is bound
            elif state == "unlinked" or (state == "other" and "shuffle" in step.tags):
                link, problem = link_shuffle(n, loader)
                if link is None:
                    self.notes.append(f"`{n}`: PyTorch's shuffle order is not used on the MindSpore "
                                      f"side ({problem}); its batches come in another order")
            else:
                link = None
            if link is not None:
                problem = follow_order(mns[n], link)
                if problem:
                    unlink(loader)
                    self.notes.append(f"`{n}`: the MindSpore loader {problem}, so PyTorch's shuffle "
                                      "order is not used; its batches come in another order")
                else:
                    reasons.append("PyTorch's shuffle order used")
            if not reasons:
                continue
            if n not in self.run.synchronised:
                self.run.synchronised.append(n)
            self.run.sync_reasons[n] = "; ".join(reasons)


class FirstCalls:
    """Modules built and trained within one statement start from the same weights.

    The synchroniser copies a module into its Cell after the statement that built it; a
    statement that builds a model and trains it too (a script's ``if __name__ ==
    "__main__":`` block, a function that builds and fits) would train MindSpore's own
    random initialisation instead. So, while the PyTorch side runs a statement, the state
    of each module it calls for the first time from outside any module (a model, not its
    layers) is recorded just before that call; while the MindSpore side runs it, each Cell
    called for the first time the same way takes the next recorded state (through the
    parameter-name maps), in order. Modules the namespace held when the statement began
    are left to the synchroniser. Only modules with weights pair up: a loss module has
    none (and may be a function on the MindSpore side), and a MindSpore optimizer is a
    Cell called with the gradients where PyTorch's is no module. A module counts as seen
    only while it lives: one that is freed (a loop rebinding ``net`` to a new model each
    time) may leave its id to a model built later, which is new."""

    def __init__(self) -> None:
        self.states: list = []  # (torch module, {name: array}) in first-call order
        self.synced = 0
        self.seen: dict = {}
        #: the PyTorch modules whose weights a Cell took while the last statement ran
        self.given: list = []

    def gave(self, module) -> bool:
        """Did a Cell take ``module``'s weights at its first call in the last statement?"""
        return any(m is module for m in self.given)

    @staticmethod
    def _add(seen: dict, modules) -> None:
        """Note the modules in ``seen``: id -> a weak reference to the module."""
        for m in modules:
            try:
                seen[id(m)] = weakref.ref(m)
            except TypeError:  # not weakly referable: kept alive for the statement
                seen[id(m)] = lambda m=m: m

    @staticmethod
    def _seen(seen: dict, module) -> bool:
        ref = seen.get(id(module))
        return ref is not None and ref() is module

    @classmethod
    def _held(cls, ns: dict) -> dict:
        held: dict = {}
        for value in ns.values():
            # a module, or one in a list, tuple or dict (``nets = [Net(False), Net(True)]``)
            inner = value.values() if isinstance(value, dict) else value if isinstance(value, (list, tuple)) else ()
            for v in (value, *inner):
                if is_torch_module(v) or is_cell(v):
                    cls._add(held, [v, *(v.modules() if is_torch_module(v) else (c for _, c in v.cells_and_names()))])
        return held

    @contextlib.contextmanager
    def recording(self, tns: dict):
        import torch

        self.states = []
        self.given = []
        self.seen = self._held(tns)

        def first(module):
            if self._seen(self.seen, module):
                return
            self._add(self.seen, module.modules())
            values = {n: v.detach().cpu().numpy().copy() for n, v in torch_state(module)}
            if values:  # a loss or an activation has no weights to give
                self.states.append((module, values))

        with _top_level_calls(torch.nn.Module, first):
            yield

    @contextlib.contextmanager
    def replaying(self, mns: dict, params):
        if not self.states:
            yield
            return
        import mindspore

        queue = collections.deque(self.states)
        seen = self._held(mns)
        optimizers = _optimizer_classes()

        def first(cell):
            if self._seen(seen, cell) or not queue or not _takes_weights(cell, optimizers):
                return
            self._add(seen, (c for _, c in cell.cells_and_names()))
            tmod, values = queue.popleft()
            state = ms_state(cell)
            for name, arr in values.items():
                p = state.get(ms_name_for(tmod, name, params))
                if p is None or p.size != arr.size:
                    continue
                put_values(p, mindspore.Tensor(arr.reshape(p.shape), dtype=p.dtype), in_forward=True)
            self.synced += 1
            self.given.append(tmod)

        try:
            with _top_level_calls(mindspore.nn.Cell, first):
                yield
        finally:
            self.states = []


@contextlib.contextmanager
def _top_level_calls(cls, first):
    """While it is open, ``first(obj)`` runs before each call of an instance of ``cls``
    made from outside any such call (a model, not the layers its forward pass calls)."""
    original = cls.__call__
    depth = [0]

    def call(obj, *args, **kwargs):
        if depth[0] == 0:
            first(obj)
        depth[0] += 1
        try:
            return original(obj, *args, **kwargs)
        finally:
            depth[0] -= 1

    cls.__call__ = call
    try:
        yield
    finally:
        cls.__call__ = original


def _takes_weights(cell, optimizers: tuple) -> bool:
    """A Cell that can stand for a PyTorch module called with weights: it has parameters
    and is no optimizer (a MindSpore optimizer is a Cell, called with the gradients, and
    holds the model's parameters; PyTorch's is no module)."""
    return not isinstance(cell, optimizers) and any(True for _ in cell.get_parameters())


def _torch_optimizer_class():
    import torch

    return torch.optim.Optimizer


def _optimizer_classes() -> tuple:
    import mindspore

    try:
        from mindspore.experimental.optim import Optimizer
    except ImportError:  # pragma: no cover - the installed version has it
        return (mindspore.nn.Optimizer,)
    return mindspore.nn.Optimizer, Optimizer


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
            put_values(ms_value, mindspore.Tensor(arr, dtype=ms_value.dtype))
            return ms_value
    return to_mindspore(torch_value, name=name)


# ----------------------------------------------------------------------------- datasets


def tensor_versions(tmod) -> tuple:
    """(identity, version counter) of each parameter and buffer of a torch module."""
    out = []
    for t in list(tmod.parameters()) + list(tmod.buffers()):
        out.append((id(t), getattr(t, "_version", None)))
    return tuple(out)


def _is_torch_data(v, name: str) -> bool:
    return type(v).__module__.startswith("torch.utils.data") and type(v).__name__ == name


def _is_torch_loader(v) -> bool:
    return _is_torch_data(v, "DataLoader")


def _is_tensor_dataset(v) -> bool:
    return _is_torch_data(v, "TensorDataset")


def copy_tensor_dataset(tds, ms_value) -> tuple[bool, str]:
    """Give the MindSpore TensorDataset ``ms_value`` (``mindspore.dataset.dataloader``'s,
    as the port builds it) the values of the torch TensorDataset ``tds``, in place, so
    loaders and Subsets over it read them too: (copied, problem), problem saying how
    the MindSpore side's own tensors differed in number, shape or dtype ("" when they
    agree)."""
    from msmagic.parity_check.compare import _kind

    tensors = getattr(ms_value, "tensors", None)
    if not isinstance(tensors, tuple) or not hasattr(ms_value, "__getitem__"):
        return False, "the MindSpore value is no TensorDataset"
    problem = ""
    if len(tensors) != len(tds.tensors):
        problem = f"the MindSpore dataset had {len(tensors)} tensors, PyTorch's {len(tds.tensors)}"
    else:
        for i, (m, t) in enumerate(zip(tensors, tds.tensors)):
            shape, dtype = tuple(getattr(m, "shape", ())), str(getattr(m, "dtype", type(m).__name__))
            if shape != tuple(t.shape) or _kind(dtype) != _kind(str(t.dtype)):
                problem = (f"tensor {i} of the MindSpore dataset had shape {shape} and dtype {dtype}, "
                           f"PyTorch's {tuple(t.shape)} and {t.dtype}")
                break
    ms_value.tensors = tuple(to_mindspore(t) for t in tds.tensors)
    return True, problem


def copy_split(tv, mv) -> int:
    """A torch ``Subset`` (or a list/tuple of them, as ``random_split`` returns) and its
    MindSpore port: the port takes PyTorch's indices (the rows a random split chose).
    Returns how many subsets took PyTorch's indices."""
    if isinstance(tv, (list, tuple)) and isinstance(mv, (list, tuple)) and len(tv) == len(mv):
        return sum(copy_split(t, m) for t, m in zip(tv, mv))
    if not _is_torch_data(tv, "Subset") or type(mv).__module__.startswith("torch"):
        return 0
    indices = getattr(mv, "indices", None)
    if indices is None or len(indices) != len(tv.indices):
        return 0
    wanted = [int(i) for i in tv.indices]
    if list(indices) == wanted:
        return 0
    mv.indices = wanted
    return 1


# ----------------------------------------------------------------------------- shuffle


#: every live link (a PyTorch loader's recorded orders), across parity runs: loaders live
#: on in the namespaces after the cell that built them
_LINKS: "weakref.WeakSet" = weakref.WeakSet()


class ShuffleLink:
    """The orders a shuffled PyTorch DataLoader's sampler yielded, for its MindSpore port.

    The PyTorch side appends one order (the list of indices the sampler yielded) per
    iteration of the loader, while a parity step runs; the MindSpore side's sampler takes
    them first in, first out.
    """

    def __init__(self, name: str, size: int):
        self.name = name
        self.size = size
        self.pending: collections.deque = collections.deque()
        self.recording = False
        self.taken = 0  # orders the MindSpore side took
        self.missed = 0  # MindSpore epochs that found no order and drew their own

    def record(self, order: list) -> None:
        if self.recording:
            self.pending.append(order)

    def take(self, own=None) -> list:
        """The next PyTorch order; without one, ``own``'s (the MindSpore sampler's own
        draw) or a random permutation."""
        if self.pending:
            self.taken += 1
            return self.pending.popleft()
        import numpy as np

        self.missed += 1
        return list(own) if own is not None else np.random.permutation(self.size).tolist()


class _RecordingSampler:
    """Stands in for a DataLoader's shuffling sampler inside its BatchSampler: the same
    order, drawn at the same moment (when the first index is asked for), recorded for
    the MindSpore side."""

    def __init__(self, sampler, link: ShuffleLink):
        self.sampler = sampler
        self.link = link

    def __len__(self) -> int:
        return len(self.sampler)

    def __iter__(self):
        # recorded as the loader takes them: a sampler of ``num_samples=int(1e10)`` (an
        # "infinite" loader read with next()) gives the MindSpore side the indices
        # PyTorch used, not all it could draw
        order: list = []
        self.link.record(order)
        for i in self.sampler:
            order.append(int(i))
            yield order[-1]

    def __getattr__(self, name):
        return getattr(self.sampler, name)


class TorchOrder:
    """The MindSpore loader's sampler under parity: each epoch, the next order the PyTorch
    loader drew (its own sampler's draw when there is none)."""

    def __init__(self, link: ShuffleLink, own):
        self.link = link
        self.own = own

    def __iter__(self):
        return iter(self.link.take(self.own))

    def __len__(self) -> int:
        return self.link.size


def _shuffling_samplers() -> tuple:
    from torch.utils.data import RandomSampler, SubsetRandomSampler, WeightedRandomSampler

    return RandomSampler, SubsetRandomSampler, WeightedRandomSampler


def _draws_order(sampler) -> bool:
    """A sampler whose order is a random draw parity can follow: PyTorch's
    RandomSampler, SubsetRandomSampler, WeightedRandomSampler, or a DistributedSampler
    that shuffles."""
    from torch.utils.data import DistributedSampler

    if type(sampler) is DistributedSampler:
        return bool(sampler.shuffle)
    return type(sampler) in _shuffling_samplers()


def _shuffle_state(loader) -> str:
    """"unlinked": the loader draws its order with a random sampler (:func:`_draws_order`);
    "linked": its orders are recorded already; "sequential": not shuffled; "other": a
    sampler parity cannot follow."""
    from torch.utils.data import SequentialSampler

    inner = getattr(getattr(loader, "batch_sampler", None), "sampler", None)
    if isinstance(inner, _RecordingSampler):
        return "linked"
    if isinstance(getattr(loader, "sampler", None), SequentialSampler):
        return "sequential"
    return "unlinked" if _draws_order(inner) else "other"


def _same_length_sequences(a, b) -> bool:
    return isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and len(a) == len(b)


def link_shuffle(name: str, loader):
    """Start recording the orders a shuffled torch DataLoader draws: (link, "") or
    (None, why not)."""
    batches = getattr(loader, "batch_sampler", None)
    inner = getattr(batches, "sampler", None)
    if batches is None or not _draws_order(inner):
        return None, ("it does not batch indices from a RandomSampler, SubsetRandomSampler, "
                      "WeightedRandomSampler or shuffling DistributedSampler")
    link = ShuffleLink(name, len(inner))
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
def _torch_loader_class():
    from torch.utils.data import DataLoader

    return DataLoader


@functools.lru_cache(maxsize=1)
def _ms_loader_class():
    from mindspore.dataset.dataloader import DataLoader

    return DataLoader


@contextlib.contextmanager
def _on_build(cls, hook):
    """While the block runs, ``hook(loader)`` after each ``cls(...)`` (or subclass) is
    built."""
    original = cls.__init__

    @functools.wraps(original)
    def init(self, *args, **kwargs):
        original(self, *args, **kwargs)
        hook(self)

    cls.__init__ = init
    try:
        yield
    finally:
        cls.__init__ = original


def follow_order(ms_loader, link: ShuffleLink) -> str:
    """Make the MindSpore loader (``mindspore.dataset.dataloader.DataLoader``, as the
    port builds it) take its indices in the orders ``link`` records, in place: "" or
    why it cannot."""
    batches = getattr(ms_loader, "batch_sampler", None)
    inner = getattr(batches, "sampler", None)
    if inner is None or not hasattr(ms_loader, "dataset"):
        return "is not a MindSpore DataLoader that batches the indices of a sampler"
    own = inner.own if isinstance(inner, TorchOrder) else inner
    try:
        size = len(own)
    except TypeError:
        return "has a sampler without a length"
    if size != link.size:
        return f"samples {size} rows where PyTorch's samples {link.size}"
    batches.sampler = TorchOrder(link, own)
    try:
        ms_loader.sampler = batches.sampler
    except AttributeError:  # pragma: no cover - a loader that guards the attribute
        pass
    return ""
