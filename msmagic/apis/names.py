"""The methods PyTorch's classes have and MindSpore's counterparts lack, as data.

``receiver_methods.json`` lists, for ``Tensor`` (``mindspore.Tensor``), ``Module``
(``mindspore.nn.Cell``) and ``Optimizer`` (``mindspore.nn.Optimizer``), the public
methods of the PyTorch class that the MindSpore class does not have, less the names
Python's builtin types and NumPy arrays also use (``copy``, ``index``, ``sort``...): on a
value whose kind the port cannot tell, a call of one of these names fails in MindSpore if
the value is what its name says, and is certain to be nothing else. The port flags such
calls (rule GEN002) instead of passing them through.

The port never imports the frameworks: this file is generated from the installed
versions by ``python -m msmagic.apis.names`` (part of ``make docs``), and a test fails
when it is stale.
"""

from __future__ import annotations

import json
import sys
from functools import lru_cache
from pathlib import Path

PATH = Path(__file__).resolve().parent / "receiver_methods.json"


@lru_cache(maxsize=1)
def receiver_methods() -> dict:
    """``{"Tensor": [...], "Module": [...], "Optimizer": [...]}`` (empty when absent)."""
    if not PATH.exists():
        return {}
    return json.loads(PATH.read_text())["methods"]


def generate() -> dict:
    """The listing, from the installed torch and MindSpore (imports both)."""
    import mindspore
    import numpy
    import torch

    shared = set()
    for typ in (list, dict, str, set, tuple, bytes, int, float, object, numpy.ndarray, numpy.generic):
        shared |= set(dir(typ))

    def only(torch_cls, ms_cls) -> list:
        ms = set(dir(ms_cls))
        return sorted(n for n in dir(torch_cls)
                      if not n.startswith("_") and callable(getattr(torch_cls, n, None))
                      and n not in ms and n not in shared)

    return {
        "versions": {"torch": torch.__version__.split("+")[0], "mindspore": mindspore.__version__},
        "methods": {
            "Tensor": only(torch.Tensor, mindspore.Tensor),
            "Module": only(torch.nn.Module, mindspore.nn.Cell),
            "Optimizer": only(torch.optim.Optimizer, mindspore.nn.Optimizer),
        },
    }


def main(argv=None) -> int:
    data = generate()
    text = json.dumps(data, indent=1, sort_keys=True) + "\n"
    if "--check" in (argv if argv is not None else sys.argv[1:]):
        return 0 if PATH.exists() and PATH.read_text() == text else 1
    PATH.write_text(text)
    print(f"wrote {PATH}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
