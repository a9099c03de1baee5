"""Imports: torch modules become their MindSpore counterparts, in place."""

from msmagic.engine.spec import module
from msmagic.rules.registry import register

register(
    "IMP001",
    "PyTorch imports become MindSpore imports",
    group="Imports",
    why="""
        ``torch`` becomes ``mindspore``, ``torch.nn`` becomes ``mindspore.nn`` (layers are
        Cells there) and ``torch.nn.functional`` becomes ``mindspore.ops``, which holds
        MindSpore's functional operators. ``torch.optim`` has no module of its own in
        MindSpore: optimizers are Cells in ``mindspore.nn``, so that import is removed and
        each optimizer is reached through ``mindspore.nn``. Imports keep the names you gave
        them (``import torch.nn as nn`` becomes ``import mindspore.nn as nn``), and an import
        msmagic needs for a rewritten call is added once, after the cell's own imports.
    """,
    seed="seeds/002 Basic Logic; seeds/004 Network Basic Unit: Cell",
    reference="r2.4.10/api_mapping/pytorch_api_mapping.md",
    example="""
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        from torch import optim

        x = torch.ones(2, 3)
        y = F.relu(x)
    """,
)

module("torch", "mindspore")
module("torch.nn", "mindspore.nn")
module("torch.nn.functional", "mindspore.ops")
module("torch.optim", None)
module("torch.nn.init", None)
module("torch.autograd", None)
module("torch.cuda", None)
module("torch.backends", None)
module("torch.backends.cudnn", None)
module("torch.backends.cuda", None)
module("torch.backends.mps", None)
module("torch.accelerator", None)
module("torch.onnx", None)
module("torch.nn.parameter", None)
