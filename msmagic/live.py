"""What the objects of a live namespace are, in the port's kinds.

In a notebook the earlier cells really ran: a name the port cannot type from the cells it
saw (bound by a plain cell, or by a function's return) holds an object that can be looked
at, the way IPython's completer looks at live objects. :func:`live_kind` says what kind
the port gives such an object ("tensor", "module:torch.nn.Linear", "optimizer",
"loader", "ndarray", "list:tensor"...), using only what is already imported: it never
imports torch, and a namespace without torch objects costs a dictionary lookup per name.
The magics hand it to the port (``PortSession.live``); static inference still answers
for every name it knows, and the two agree where both answer (``tests/test_live_kinds.py``).
"""

from __future__ import annotations

import sys
from typing import Optional

#: a list is typed by its first items (a list of a million tensors costs no more)
_LIST_SAMPLE = 8


def live_kind(namespace: dict, name: str) -> Optional[str]:
    """The kind of ``namespace[name]``, or None when it is absent or of no kind the port
    uses."""
    try:
        value = namespace[name]
    except (KeyError, TypeError):
        return None
    return kind_of_value(value)


#: public PyTorch namespaces whose classes the mapping entries name
_PUBLIC = ("torch.nn", "torch.optim", "torch.optim.lr_scheduler", "torch.utils.data")


def _public_name(cls) -> Optional[str]:
    """``torch.nn.Linear`` for the class of a Linear (None for a user class)."""
    if not cls.__module__.startswith("torch."):
        return None
    for namespace in _PUBLIC:
        module = sys.modules.get(namespace)
        if module is not None and getattr(module, cls.__name__, None) is cls:
            return f"{namespace}.{cls.__name__}"
    return None


def _declared(cls) -> Optional[str]:
    """The kind the mapping entry of a PyTorch class says its instances are: what the
    port itself gives ``x = torch.nn.CrossEntropyLoss()``."""
    from msmagic.engine import spec

    name = _public_name(cls)
    entry = spec.APIS.get(name) if name else None
    return str(entry.returns) if entry is not None and entry.returns else None


def kind_of_value(value) -> Optional[str]:  # noqa: C901 - one case per kind
    torch = sys.modules.get("torch")
    if torch is not None:
        try:
            if isinstance(value, torch.Tensor):
                return "tensor"
            if isinstance(value, (torch.nn.Module, torch.optim.Optimizer, torch.optim.lr_scheduler.LRScheduler)):
                declared = _declared(type(value))
                if declared:
                    return declared
            if isinstance(value, torch.nn.Module):
                return f"module:{type(value).__name__}"
            if isinstance(value, torch.optim.Optimizer):
                return "optimizer"
            if isinstance(value, torch.optim.lr_scheduler.LRScheduler):
                return "scheduler"
            data = sys.modules.get("torch.utils.data")
            if data is not None:
                if isinstance(value, data.DataLoader):
                    return "loader"
                if isinstance(value, data.TensorDataset):
                    return "dataset"
        except Exception:  # noqa: BLE001 - a proxy object whose isinstance raises is no kind
            return None
    numpy = sys.modules.get("numpy")
    if numpy is not None and isinstance(value, (numpy.ndarray, numpy.generic)):
        return "ndarray"
    if type(value) is list and value:
        kinds = {kind_of_value(v) for v in value[:_LIST_SAMPLE]}
        if len(kinds) == 1:
            item = kinds.pop()
            if item is not None and not item.startswith("list"):
                return f"list:{item}"
    return None
