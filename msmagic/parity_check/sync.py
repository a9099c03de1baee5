"""Stage: sync. What is copied from PyTorch to MindSpore instead of compared.

* a PyTorch module bound to a name whose MindSpore value is a Cell gets its parameters
  and buffers copied into that Cell, once, when the name is bound to a new module, so
  random initialisation does not show up as a difference while training still does;
* a value bound by a statement the port tagged ``random`` (``torch.randn``...) is copied
  to the MindSpore side.

Parameter names come from the port: each ported statement carries, for every PyTorch
layer it constructs, the parameter-name map of the layer's mapping entry
(``PortResult.module_params`` gathers them for a cell and the earlier cells of its
session), so BatchNorm3d's ``weight`` becomes ``bn2d.gamma`` and a Transformer layer's
``linear1`` becomes ``dense1``.
"""

from __future__ import annotations

import functools
from typing import Callable, Optional

from msmagic.parity_check.compare import (
    draw_mismatch,
    is_cell,
    is_tensor_like,
    is_torch_module,
    ms_state,
    to_mindspore,
    torch_state,
)

__all__ = ["ms_name_for", "sync_module", "learn", "known_params", "Synchroniser"]

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

    def __init__(self, run, params: dict, enabled: bool = True) -> None:
        self.run = run
        self.params = params
        self.enabled = enabled
        #: name -> id of the torch module last copied into the Cell of that name
        self.modules: dict[str, int] = {}
        #: random draws copied across: name -> the step that drew them (reported as
        #: synchronised, not compared, unless a later statement rebinds the name)
        self.values: dict[str, int] = {}

    def ms_name(self, tmod, torch_name: str) -> str:
        return ms_name_for(tmod, torch_name, self.params)

    def after(self, step, tns: dict, mns: dict) -> None:
        if not self.enabled:
            return
        run = self.run
        for n in step.bound:
            if n in tns and n in mns and is_torch_module(tns[n]) and is_cell(mns[n]):
                if self.modules.get(n) != id(tns[n]):
                    sync_module(tns[n], mns[n], self.params)
                    self.modules[n] = id(tns[n])
                    run.synchronised.append(n)
                    run.sync_reasons[n] = "parameters and buffers copied as initialised"
            elif "random" in step.tags and n in tns and is_tensor_like(tns[n]):
                drawn = mns.get(n)
                mns[n] = to_mindspore(tns[n])
                run.synchronised.append(n)
                self.values[n] = step.index
                # the values are copied, but the MindSpore draw must have had the
                # same shape and dtype: a mismatch is a porting error worth a row
                mismatch = draw_mismatch(n, tns[n], drawn, step.index)
                if mismatch is not None:
                    run.rows.append(mismatch)
                run.sync_reasons[n] = "random values copied"

