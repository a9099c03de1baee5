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


def kind_of_value(value) -> Optional[str]:  # noqa: C901 - one case per kind
    torch = sys.modules.get("torch")
    if torch is not None:
        try:
            if isinstance(value, torch.Tensor):
                return "tensor"
            if isinstance(value, torch.nn.Module):
                cls = type(value)
                if cls.__module__.startswith("torch.nn.modules") and getattr(torch.nn, cls.__name__, None) is cls:
                    return f"module:torch.nn.{cls.__name__}"
                return f"module:{cls.__name__}"
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
