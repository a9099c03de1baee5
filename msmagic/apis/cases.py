"""Hand-written verification cases for APIs PyTorch's test databases do not cover.

``op_db`` and ``module_db`` cover operators and layers. Factories, dtypes, ``nn.init``,
optimizers, schedulers, Tensor conversions and utilities get cases here: a PyTorch
snippet (with its imports) that uses the API. The harness ports it, runs both sides
in lockstep and compares every value the snippet binds (random draws are copied
across and their shapes and dtypes checked, as ``%%ms_parity`` does).
"""

from __future__ import annotations

import ast
import textwrap
from dataclasses import dataclass

CASES: dict[str, list["Case"]] = {}


@dataclass(frozen=True)
class Case:
    key: str
    code: str
    dtype: str = "float32"
    positional: int = 0
    keywords: tuple = ()


def case(key: str, code: str, *, dtype: str = "float32") -> None:
    code = textwrap.dedent(code).strip("\n") + "\n"
    positional, keywords = _pattern(key, code)
    CASES.setdefault(key, []).append(Case(key, code, dtype, positional, keywords))


#: key -> snippet whose port must flag the API: entries whose every use is reported, not
#: ported (running them would start processes or needs a cluster). The harness ports the
#: snippet and records "flagged" only when the finding is there.
FLAGGED: dict[str, str] = {}


def flagged(key: str, code: str) -> None:
    FLAGGED[key] = textwrap.dedent(code).strip("\n") + "\n"


def _pattern(key: str, code: str) -> tuple[int, tuple]:
    """Argument pattern of the first call to ``key`` in the snippet."""
    name = key.rsplit(".", 1)[-1]
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Call):
            func = node.func
            last = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if last == name:
                return len(node.args), tuple(sorted(k.arg for k in node.keywords if k.arg))
    return 0, ()


# ----------------------------------------------------------------------------- cases
# (added by family below; each case binds the values to compare)


# --- tensors, factories and conversions

case("torch.tensor", """
    import torch
    a = torch.tensor([1.0, 2.5])
    b = torch.tensor([[1, 2], [3, 4]])
    c = torch.tensor([True, False])
""")
case("torch.tensor", """
    import torch
    a = torch.tensor([[1, 2], [3, 4]], dtype=torch.float32)
""")
case("torch.from_numpy", """
    import numpy as np
    import torch
    arr = np.arange(6.0).reshape(2, 3)
    t = torch.from_numpy(arr)
    i = torch.from_numpy(np.arange(4, dtype=np.int32))
""")
case("torch.rand", """
    import torch
    a = torch.rand(2, 3)
    b = a * 2
""")
case("torch.rand", """
    import torch
    a = torch.rand((4,))
    b = a + 1
""")
case("torch.randperm", """
    import torch
    p = torch.randperm(7)
    q = torch.randperm(5, dtype=torch.int32)
    rows = torch.arange(14.0).reshape(7, 2)[p]
""")

# dtypes, compared through a cast and a factory
for _dt in ("float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8"):
    case(f"torch.{_dt}", f"""
        import torch
        x = torch.tensor([1.0, 2.0, 3.0])
        a = x.to(torch.{_dt})
        b = torch.zeros(2, dtype=torch.{_dt})
        same = a.dtype == torch.{_dt}
    """)
for _dt in ("complex64", "complex128"):
    case(f"torch.{_dt}", f"""
        import torch
        x = torch.tensor([1.0, 2.0, 3.0])
        a = torch.zeros(2, dtype=torch.{_dt})
        b = torch.ones(3).to(torch.{_dt})
        same = torch.zeros(2, dtype=torch.{_dt}).dtype == torch.{_dt}
    """)

# --- functions op_db samples under another variant name

case("torch.div", """
    import torch
    a = torch.tensor([[1.0, -2.0], [3.0, 5.0]])
    b = torch.tensor([2.0, 4.0])
    q = torch.div(a, b)
    r = torch.div(a, 2)
""")
case("torch.max", """
    import torch
    x = torch.tensor([[1., 5., 3.], [4., 2., 6.]])
    top = torch.max(x)
""")
case("torch.max", """
    import torch
    x = torch.tensor([[1., 5., 3.], [4., 2., 6.]])
    v, i = torch.max(x, 1)
""")
case("torch.max", """
    import torch
    x = torch.tensor([[1., 5., 3.], [4., 2., 6.]])
    v, i = torch.max(x, dim=0, keepdim=True)
""")
case("torch.max", """
    import torch
    x = torch.tensor([[1., 5., 3.], [4., 2., 6.]])
    both = torch.max(x, torch.full((2, 3), 3.))
""")
case("torch.min", """
    import torch
    x = torch.tensor([[1., 5., 3.], [4., 2., 6.]])
    low = torch.min(x)
""")
case("torch.min", """
    import torch
    x = torch.tensor([[1., 5., 3.], [4., 2., 6.]])
    v, i = torch.min(x, 1)
""")
case("torch.min", """
    import torch
    x = torch.tensor([[1., 5., 3.], [4., 2., 6.]])
    lo = torch.min(x, dim=0, keepdim=True).values
""")
case("torch.relu", """
    import torch
    x = torch.linspace(-2, 2, 9)
    y = torch.relu(x)
""")
case("Tensor.relu", """
    import torch
    x = torch.linspace(-2, 2, 9).reshape(3, 3)
    y = x.relu()
""")
case("Tensor.max", """
    import torch
    x = torch.tensor([[1., 5., 3.], [4., 2., 6.]])
    top = x.max()
""")
case("Tensor.max", """
    import torch
    x = torch.tensor([[1., 5., 3.], [4., 2., 6.]])
    v, i = x.max(1)
    j = x.max(dim=1).indices
""")
case("Tensor.max", """
    import torch
    x = torch.tensor([[1., 5., 3.], [4., 2., 6.]])
    v = x.max(dim=0, keepdim=True)[0]
""")
case("Tensor.min", """
    import torch
    x = torch.tensor([[1., 5., 3.], [4., 2., 6.]])
    low = x.min()
""")
case("Tensor.min", """
    import torch
    x = torch.tensor([[1., 5., 3.], [4., 2., 6.]])
    v, i = x.min(1)
""")
case("Tensor.min", """
    import torch
    x = torch.tensor([[1., 5., 3.], [4., 2., 6.]])
    v = x.min(dim=1, keepdim=True).values
""")
case("object.values", """
    import torch
    x = torch.tensor([[1., 5., 3.], [4., 2., 6.]])
    v = torch.max(x, dim=1).values
""")
case("object.indices", """
    import torch
    x = torch.tensor([[1., 5., 3.], [4., 2., 6.]])
    i = torch.max(x, dim=1).indices
""")
case("Tensor.detach", """
    import torch
    x = torch.tensor([1.0, -2.0, 3.0])
    y = x.detach() * 2
""")
case("Tensor.numpy", """
    import torch
    t = torch.tensor([1.5, -2.0])
    a = t.numpy()
    b = t.detach().cpu().numpy()
""")
case("Tensor.size", """
    import torch
    x = torch.zeros(2, 3, 4)
    rows = x.size(0)
    last = x.size(-1)
    shape = x.size()
""")
case("Tensor.size", """
    import torch
    x = torch.zeros(2, 3, 4)
    mid = x.size(dim=1)
""")
case("torch.nn.functional.softmax", """
    import torch
    import torch.nn.functional as F
    x = torch.arange(24.).reshape(2, 3, 4) / 10
    p = F.softmax(x, dim=1)
    q = F.softmax(x, -1)
""")
case("torch.nn.functional.log_softmax", """
    import torch
    import torch.nn.functional as F
    x = torch.arange(24.).reshape(2, 3, 4) / 10
    p = F.log_softmax(x, dim=1)
    q = F.log_softmax(x, -1)
""")
case("torch.nn.functional.sigmoid", """
    import torch
    import torch.nn.functional as F
    x = torch.linspace(-3, 3, 7)
    y = F.sigmoid(x)
""")
case("torch.nn.functional.tanh", """
    import torch
    import torch.nn.functional as F
    x = torch.linspace(-3, 3, 7)
    y = F.tanh(x)
""")
case("torch.nn.functional.dropout1d", """
    import torch
    import torch.nn.functional as F
    x = torch.ones(2, 3, 4)
    y = F.dropout1d(x, 0.5, training=False)
    z = F.dropout1d(x, p=0.0)
""")

# --- Tensor methods of msmagic.rules.tensor_methods
case("Tensor.item", """
    import torch
    x = torch.arange(6.0).reshape(2, 3)
    f = x[1, 2].item()
    n = torch.tensor([3, 1])[0].item()
    b = torch.tensor([True])[0].item()
    s = x.sum().item()
""")
case("Tensor.tolist", """
    import torch
    rows = torch.arange(6.0).reshape(2, 3).tolist()
    ints = torch.tensor([3, 1, 2]).tolist()
    scalar = torch.tensor(1.5).tolist()
""")
case("Tensor.dim", """
    import torch
    d = torch.zeros(2, 3).dim()
    s = torch.tensor(1.0).dim()
""")
case("Tensor.ndimension", """
    import torch
    d = torch.zeros(2, 3, 4).ndimension()
""")
case("Tensor.numel", """
    import torch
    n = torch.zeros(2, 3).numel()
    s = torch.tensor(1.0).numel()
""")
case("Tensor.nelement", """
    import torch
    n = torch.zeros(2, 3).nelement()
""")
case("Tensor.is_floating_point", """
    import torch
    a = torch.zeros(2).is_floating_point()
    b = torch.tensor([1, 2]).is_floating_point()
    c = torch.tensor([True]).is_floating_point()
""")
case("Tensor.is_contiguous", """
    import torch
    x = torch.arange(6.0).reshape(2, 3)
    a = x.is_contiguous()
    b = x.t().is_contiguous()
    c = x[:, ::2].is_contiguous()
    d = x.t().contiguous().is_contiguous()
""")
case("Tensor.data_ptr", """
    import torch
    x = torch.arange(6.0)
    shared = x.data_ptr() == x.view(2, 3).data_ptr()
    copied = x.data_ptr() == x.clone().data_ptr()
""")
case("Tensor.type_as", """
    import torch
    x = torch.arange(4.0)
    i = torch.tensor([1, 2]).type_as(x)
    b = x.type_as(torch.tensor([True]))
""")
case("Tensor.element_size", """
    import torch
    a = torch.zeros(2).element_size()
    b = torch.zeros(2, dtype=torch.float16).element_size()
    c = torch.zeros(2, dtype=torch.int64).element_size()
    d = torch.zeros(2, dtype=torch.bool).element_size()
""")
case("Tensor.new_tensor", """
    import torch
    x = torch.zeros(2, dtype=torch.float64)
    a = x.new_tensor([1, 2, 3])
    b = torch.tensor([1, 2]).new_tensor([2.7, -1.2])
""")
case("Tensor.new_tensor", """
    import torch
    x = torch.zeros(2)
    a = x.new_tensor([[0.5]], dtype=torch.float64)
""")
case("Tensor.zero_", """
    import torch
    x = torch.arange(6.0).reshape(2, 3)
    alias = x
    x.zero_()
    i = torch.tensor([4, 5])
    j = i.zero_()
""")
case("Tensor.copy_", """
    import torch
    x = torch.zeros(2, 3)
    alias = x
    x.copy_(torch.tensor([1.5, 2.5, 3.5]))
    n = torch.zeros(3, dtype=torch.int64)
    n.copy_(torch.tensor([1.7, -2.2, 3.9]))
""")
case("Tensor.type", """
    import torch
    x = torch.tensor([1.7, -2.2])
    i = x.type(torch.int32)
""")
case("Tensor.type", """
    import torch
    x = torch.tensor([1.7, -2.2])
    d = x.type(dtype=torch.float64)
""")

# --- layers and containers module_db does not sample

case("torch.nn.Dropout", """
    import torch
    import torch.nn as nn
    drop = nn.Dropout(0.2)
    drop.eval()
    y = drop(torch.ones(4, 8))
""")
case("torch.nn.Dropout", """
    import torch
    import torch.nn as nn
    drop = nn.Dropout(p=0.5)
    drop.eval()
    y = drop(torch.ones(4, 8))
""")
for _cls, _shape in (("Dropout1d", "(2, 3, 4)"), ("Dropout2d", "(2, 3, 4, 4)"), ("Dropout3d", "(1, 2, 3, 4, 4)")):
    case(f"torch.nn.{_cls}", f"""
        import torch
        import torch.nn as nn
        drop = nn.{_cls}(0.3)
        drop.eval()
        y = drop(torch.ones{_shape})
    """)
case("torch.nn.Flatten", """
    import torch
    import torch.nn as nn
    x = torch.arange(24.).reshape(2, 3, 4)
    y = nn.Flatten()(x)
""")
case("torch.nn.Flatten", """
    import torch
    import torch.nn as nn
    x = torch.arange(24.).reshape(2, 3, 4)
    y = nn.Flatten(0, 1)(x)
""")
case("torch.nn.Identity", """
    import torch
    import torch.nn as nn
    x = torch.arange(6.).reshape(2, 3)
    y = nn.Identity()(x)
""")
_NET = """
    import torch
    import torch.nn as nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 3)
            self.scale = nn.Parameter(torch.tensor([0.5, 2.0, -1.0]))

        def forward(self, x):
            return self.fc(x) * self.scale

    net = Net()
    y = net(torch.arange(8.).reshape(2, 4))
"""
case("torch.nn.Module", _NET)
case("torch.nn.Parameter", """
    import torch
    import torch.nn as nn
    w = nn.Parameter(torch.tensor([1.0, 2.0]))
    y = w * 2
""")
case("torch.nn.Parameter", """
    import torch
    import torch.nn as nn
    frozen = nn.Parameter(torch.tensor([3.0]), requires_grad=False)
    y = frozen + 1
""")
case("torch.nn.parameter.Parameter", """
    import torch
    from torch.nn.parameter import Parameter
    w = Parameter(torch.tensor([1.0, 2.0]))
    y = w * 2
""")
case("torch.nn.Sequential", """
    import torch
    import torch.nn as nn
    model = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))
    y = model(torch.arange(8.).reshape(2, 4))
    first = model[0](torch.ones(1, 4))
""")
case("torch.nn.ModuleList", """
    import torch
    import torch.nn as nn
    heads = nn.ModuleList([nn.Linear(3, 2), nn.Linear(3, 1)])
    x = torch.ones(2, 3)
    outs = [h(x) for h in heads]
    n = len(heads)
""")
case("torch.nn.ModuleDict", """
    import torch
    import torch.nn as nn
    heads = nn.ModuleDict({"a": nn.Linear(3, 2), "b": nn.Linear(3, 1)})
    x = torch.ones(2, 3)
    a = heads["a"](x)
    b = heads["b"](x)
""")

# --- nn.init: deterministic fills compared exactly; random ones through statistics
# (the parity runner copies random draws it knows of, but an init fills a layer's
# parameter in place: nothing is bound, so nothing is copied across)

case("torch.nn.init.constant_", """
    import torch.nn as nn
    layer = nn.Linear(4, 3)
    nn.init.constant_(layer.weight, 0.5)
    nn.init.constant_(layer.bias, val=-1.0)
""")
case("torch.nn.init.zeros_", """
    import torch.nn as nn
    layer = nn.Linear(4, 3)
    nn.init.zeros_(layer.weight)
    nn.init.zeros_(layer.bias)
""")
case("torch.nn.init.ones_", """
    import torch.nn as nn
    layer = nn.Linear(4, 3)
    nn.init.ones_(layer.weight)
""")
case("torch.nn.init.eye_", """
    import torch.nn as nn
    layer = nn.Linear(4, 3)
    nn.init.eye_(layer.weight)
""")
case("torch.nn.init.calculate_gain", """
    import torch.nn as nn
    relu_gain = nn.init.calculate_gain("relu")
    tanh_gain = nn.init.calculate_gain("tanh")
""")
case("torch.nn.init.calculate_gain", """
    import torch.nn as nn
    leaky_gain = nn.init.calculate_gain("leaky_relu", 0.2)
""")


def _init_case(key: str, call: str, check: str) -> None:
    case(key, f"""
        import math
        import torch
        import torch.nn as nn

        def init_stats():
            layer = nn.Linear(256, 128)
            {call}
            w = layer.weight
            return {check}

        stats = init_stats()
    """)


_XAV = "math.sqrt(6.0 / (256 + 128))"
_init_case("torch.nn.init.xavier_uniform_", "nn.init.xavier_uniform_(layer.weight)",
           f"bool(w.abs().max() <= {_XAV}), round(w.abs().max().item() / {_XAV}, 1), tuple(w.shape)")
_init_case("torch.nn.init.xavier_uniform_", "nn.init.xavier_uniform_(layer.weight, gain=2.0)",
           f"bool(w.abs().max() <= 2 * {_XAV}), round(w.abs().max().item() / (2 * {_XAV}), 1)")
_init_case("torch.nn.init.xavier_normal_", "nn.init.xavier_normal_(layer.weight)",
           "round(math.sqrt(((w - w.mean()) ** 2).mean().item()) / math.sqrt(2.0 / (256 + 128)), 1), round(w.mean().item(), 1)")
_init_case("torch.nn.init.kaiming_uniform_", "nn.init.kaiming_uniform_(layer.weight, nonlinearity='relu')",
           "bool(w.abs().max() <= math.sqrt(6.0 / 256)), round(w.abs().max().item() / math.sqrt(6.0 / 256), 1)")
_init_case("torch.nn.init.kaiming_uniform_", "nn.init.kaiming_uniform_(layer.weight, a=math.sqrt(5))",
           "bool(w.abs().max() <= 1 / math.sqrt(256)), round(w.abs().max().item() * math.sqrt(256), 1)")
_init_case("torch.nn.init.kaiming_normal_", "nn.init.kaiming_normal_(layer.weight, mode='fan_out', nonlinearity='relu')",
           "round(math.sqrt(((w - w.mean()) ** 2).mean().item()) / math.sqrt(2.0 / 128), 1), round(w.mean().item(), 1)")
_init_case("torch.nn.init.kaiming_normal_", "nn.init.kaiming_normal_(layer.weight)",
           "round(math.sqrt(((w - w.mean()) ** 2).mean().item()) / math.sqrt(2.0 / 256), 1)")
_init_case("torch.nn.init.normal_", "nn.init.normal_(layer.weight, std=0.02)",
           "round(math.sqrt(((w - w.mean()) ** 2).mean().item()) / 0.02, 1), round(w.mean().item(), 2)")
_init_case("torch.nn.init.normal_", "nn.init.normal_(layer.weight, 1.0, 0.5)",
           "round(math.sqrt(((w - w.mean()) ** 2).mean().item()) / 0.5, 1), round(w.mean().item(), 1)")
_init_case("torch.nn.init.trunc_normal_", "nn.init.trunc_normal_(layer.weight, std=0.02)",
           "bool(w.abs().max() <= 2.0), round(math.sqrt(((w - w.mean()) ** 2).mean().item()) / 0.02, 1), round(w.mean().item(), 2)")
_init_case("torch.nn.init.trunc_normal_", "nn.init.trunc_normal_(layer.weight, mean=0.0, std=1.0, a=-0.5, b=0.5)",
           "bool(w.abs().max() <= 0.5), round(w.abs().max().item(), 1)")
_init_case("torch.nn.init.uniform_", "nn.init.uniform_(layer.weight)",
           "bool(w.min() >= 0.0), bool(w.max() <= 1.0), round(w.mean().item(), 1)")
_init_case("torch.nn.init.uniform_", "nn.init.uniform_(layer.weight, -0.1, 0.1)",
           "bool(w.abs().max() <= 0.1), round(w.abs().max().item(), 2), round(w.mean().item(), 1)")
_init_case("torch.nn.init.uniform_", "nn.init.uniform_(layer.weight, a=2.0, b=4.0)",
           "bool(w.min() >= 2.0), bool(w.max() <= 4.0), round(w.mean().item())")
_init_case("torch.nn.init.orthogonal_", "nn.init.orthogonal_(layer.weight)",
           "round((w @ w.T - torch.eye(128)).abs().max().item(), 3)")

# --- optimizers: a few steps of the training loop the training rule ports, on a tiny
# model with a fixed loss; the model's parameters are compared after the steps


def _train_case(key: str, make: str) -> None:
    case(key, f"""
        import torch
        import torch.nn as nn

        X = torch.linspace(-1, 1, 12).reshape(6, 2)
        y = X.sum(1, keepdim=True) * 0.5 + 0.25
        model = nn.Linear(2, 1)
        loss_fn = nn.MSELoss()
        optimizer = {make}

        def train(steps):
            losses = []
            for step in range(steps):
                optimizer.zero_grad()
                loss = loss_fn(model(X), y)
                loss.backward()
                optimizer.step()
                losses.append(loss.item())
            return losses

        losses = train(3)
    """)


_train_case("torch.optim.SGD", "torch.optim.SGD(model.parameters(), lr=0.1)")
_train_case("torch.optim.SGD", "torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, nesterov=True)")
_train_case("torch.optim.SGD", "torch.optim.SGD(model.parameters(), 0.1, momentum=0.5, weight_decay=0.01)")
_train_case("torch.optim.Adam", "torch.optim.Adam(model.parameters(), lr=0.01)")
_train_case("torch.optim.Adam", "torch.optim.Adam(model.parameters(), lr=0.01, betas=(0.8, 0.99), eps=1e-7)")
_train_case("torch.optim.Adam", "torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=0.01)")
_train_case("torch.optim.Adagrad", "torch.optim.Adagrad(model.parameters(), lr=0.05)")
_train_case("torch.optim.AdamW", "torch.optim.AdamW(model.parameters(), lr=0.01, weight_decay=0.05)")
_train_case("torch.optim.RMSprop", "torch.optim.RMSprop(model.parameters(), lr=0.01)")
_train_case("torch.optim.RMSprop", "torch.optim.RMSprop(model.parameters(), lr=0.01, momentum=0.9)")

# --- schedulers: the learning rate the optimizer holds after each epoch


def _sched_case(key: str, make: str, epochs: int = 5) -> None:
    case(key, f"""
        import torch
        import torch.nn as nn
        from torch.optim import lr_scheduler

        model = nn.Linear(2, 1)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        scheduler = {make}
        rates = []
        for epoch in range({epochs}):
            scheduler.step()
            rates.append(optimizer.param_groups[0]["lr"])
        last = scheduler.get_last_lr()[0]
    """)


_sched_case("torch.optim.lr_scheduler.StepLR", "lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)")
_sched_case("torch.optim.lr_scheduler.StepLR", "lr_scheduler.StepLR(optimizer, 2)")
_sched_case("torch.optim.lr_scheduler.MultiStepLR", "lr_scheduler.MultiStepLR(optimizer, milestones=[1, 3], gamma=0.1)")
_sched_case("torch.optim.lr_scheduler.ExponentialLR", "lr_scheduler.ExponentialLR(optimizer, gamma=0.9)")
_sched_case("torch.optim.lr_scheduler.ExponentialLR", "lr_scheduler.ExponentialLR(optimizer, 0.5)")
_sched_case("torch.optim.lr_scheduler.CosineAnnealingLR", "lr_scheduler.CosineAnnealingLR(optimizer, T_max=4)", 6)
_sched_case("torch.optim.lr_scheduler.CosineAnnealingLR",
            "lr_scheduler.CosineAnnealingLR(optimizer, T_max=4, eta_min=0.01)", 6)
_sched_case("torch.optim.lr_scheduler.LambdaLR", "lr_scheduler.LambdaLR(optimizer, lr_lambda=lambda e: 1 / (e + 1))")
_sched_case("torch.optim.lr_scheduler.LambdaLR", "lr_scheduler.LambdaLR(optimizer, lambda e: 0.9 ** e)")
_sched_case("LRScheduler.step", "lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.5)", 3)
_sched_case("LRScheduler.get_last_lr", "lr_scheduler.ExponentialLR(optimizer, gamma=0.5)", 3)
case("Optimizer.param_groups", """
    import torch
    import torch.nn as nn
    model = nn.Linear(2, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    lr = optimizer.param_groups[0]["lr"]
""")
_OPT_STATE = """
    import os
    import tempfile
    import torch
    import torch.nn as nn

    path = os.path.join(tempfile.mkdtemp(), "optimizer.pt")
    model = nn.Linear(2, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    torch.save(optimizer.state_dict(), path)
    restored = torch.optim.SGD(model.parameters(), lr=0.5, momentum=0.9)
    restored.load_state_dict(torch.load(path))
    lr = restored.param_groups[0]["lr"]
"""
case("Optimizer.state_dict", _OPT_STATE)
case("Optimizer.load_state_dict", _OPT_STATE)

# --- calls of layer instances, the type of dtypes

case("Module.__call__", """
    import torch
    import torch.nn as nn
    torch.manual_seed(0)
    lstm = nn.LSTM(3, 4, batch_first=True)
    x = torch.randn(2, 5, 3)
    states = (torch.zeros(1, 2, 4), torch.zeros(1, 2, 4))
    states = [s.detach() for s in states]
    out, (h, c) = lstm(x, states)
""")
case("torch.dtype", """
    import torch
    x = torch.ones(2)
    is_dtype = isinstance(x.dtype, torch.dtype)
    float_is_dtype = isinstance(torch.float32, torch.dtype)
""")

# --- grad modes, seeds, autograd

case("torch.no_grad", """
    import torch
    import torch.nn as nn
    model = nn.Linear(4, 3)
    x = torch.ones(5, 4)
    with torch.no_grad():
        logits = model(x)
        pred = logits.argmax(1)
""")
case("torch.no_grad", """
    import torch
    import torch.nn as nn
    model = nn.Linear(4, 3)

    @torch.no_grad()
    def predict(x):
        return model(x).argmax(1)

    pred = predict(torch.ones(5, 4))
""")
case("torch.enable_grad", """
    import torch
    import torch.nn as nn
    model = nn.Linear(4, 3)
    with torch.enable_grad():
        y = model(torch.ones(2, 4))
""")
case("torch.inference_mode", """
    import torch
    import torch.nn as nn
    model = nn.Linear(4, 3)
    with torch.inference_mode():
        y = model(torch.ones(2, 4))
""")
case("torch.set_grad_enabled", """
    import torch
    import torch.nn as nn
    model = nn.Linear(4, 3)
    torch.set_grad_enabled(False)
    y = model(torch.ones(2, 4))
    torch.set_grad_enabled(True)
""")
case("torch.set_grad_enabled", """
    import torch
    import torch.nn as nn
    model = nn.Linear(4, 3)
    with torch.set_grad_enabled(False):
        y = model(torch.ones(2, 4))
""")
for _key, _call in (("torch.manual_seed", "torch.manual_seed(42)"),
                    ("torch.random.manual_seed", "torch.random.manual_seed(42)"),
                    ("torch.cuda.manual_seed", "torch.cuda.manual_seed(42)"),
                    ("torch.cuda.manual_seed_all", "torch.cuda.manual_seed_all(42)")):
    case(_key, f"""
        import torch
        {_call}
        a = torch.rand(3)
        b = a * 2
    """)
case("torch.Generator", """
    import torch
    g = torch.Generator()
    g.manual_seed(7)
    start = g.initial_seed()
""")
case("torch.autograd.Variable", """
    import torch
    from torch.autograd import Variable
    x = Variable(torch.tensor([1.0, 2.0]))
    w = Variable(torch.tensor([0.5, -1.0]), requires_grad=True)
    y = x * w
""")
case("torch.autograd.grad", """
    import torch
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = torch.tensor(3.0, requires_grad=True)
    z = (torch.exp(x) * y).sum()
    gx, gy = torch.autograd.grad(z, (x, y))
""")
case("torch.autograd.grad", """
    import torch
    x = torch.tensor(2.0, requires_grad=True)
    y = x ** 3
    g, = torch.autograd.grad(y, x)
""")
case("torch.autograd.backward", """
    import torch
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    z = (x ** 2).sum()
    torch.autograd.backward(z)
    gx = x.grad
""")
case("torch.autograd.Function", """
    import torch

    class MyReLU(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.clamp(min=0)

        @staticmethod
        def backward(ctx, grad_output):
            x, = ctx.saved_tensors
            return grad_output * (x > 0).float()

    a = torch.tensor([-1.0, 0.5, 2.0], requires_grad=True)
    y = MyReLU.apply(a).sum()
    y.backward()
    ga = a.grad
""")
case("object.apply", """
    import torch

    class Double(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    a = torch.tensor([1.0, -2.0])
    y = Double.apply(a)
""")
for _key in ("torch.nn.utils.clip_grad_norm_", "torch.nn.utils.clip_grad_value_"):
    _arg = "1.0" if _key.endswith("norm_") else "0.5"
    case(_key, f"""
        import torch
        import torch.nn as nn

        X = torch.linspace(-3, 3, 12).reshape(6, 2)
        y = X.sum(1, keepdim=True) * 4.0
        model = nn.Linear(2, 1)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.05)

        def train(steps):
            losses = []
            for step in range(steps):
                optimizer.zero_grad()
                loss = ((model(X) - y) ** 2).mean()
                loss.backward()
                {_key}(model.parameters(), {_arg})
                optimizer.step()
                losses.append(loss.item())
            return losses

        losses = train(3)
    """)

# --- devices

case("torch.device", """
    import torch
    device = torch.device("cpu")
    x = torch.tensor([1.0, 2.0]).to(device)
""")
case("torch.cuda.is_available", """
    import torch
    has_gpu = torch.cuda.is_available()
    x = torch.ones(2) * 2
""")
case("torch.cuda.synchronize", """
    import torch
    x = torch.ones(2) * 2
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    y = x + 1
""")
case("object.to", """
    import torch
    device = torch.device("cpu")
    x = torch.tensor([[1.0, 2.0], [3.0, 4.0]]).to(device)
    z = x.to(torch.float16)
""")
case("object.cpu", """
    import torch
    x = torch.tensor([1.0, 2.0]).cpu()
""")
case("object.cuda", """
    import torch
    x = torch.tensor([1.0, 2.0])
    y = x.cuda() if torch.cuda.is_available() else x
""")

# --- checkpoints

case("torch.save", """
    import os
    import tempfile
    import torch
    import torch.nn as nn

    path = os.path.join(tempfile.mkdtemp(), "linear.pt")
    src = nn.Linear(3, 2)
    torch.save(src.state_dict(), path)
    w = torch.load(path)["weight"]
    b = torch.load(path)["bias"]
""")
case("torch.load", """
    import os
    import tempfile
    import torch
    import torch.nn as nn

    path = os.path.join(tempfile.mkdtemp(), "load.pt")
    model = nn.Linear(2, 2)
    torch.save(model.state_dict(), path)
    w = torch.load(path, map_location="cpu")["weight"]
""")

# --- data loading

case("torch.utils.data.TensorDataset", """
    import torch
    from torch.utils.data import TensorDataset
    x = torch.arange(12.0).reshape(6, 2)
    y = torch.arange(6)
    ds = TensorDataset(x, y)
    n = len(ds)
    firsts = [float(a.sum()) for a, b in ds]
""")
case("torch.utils.data.dataset.TensorDataset", """
    import torch
    from torch.utils.data.dataset import TensorDataset
    ds = TensorDataset(torch.arange(6.0))
    n = len(ds)
""")
case("torch.utils.data.DataLoader", """
    import torch
    from torch.utils.data import TensorDataset, DataLoader
    x = torch.arange(20.0).reshape(10, 2)
    y = torch.arange(10)
    loader = DataLoader(TensorDataset(x, y), batch_size=4, drop_last=False)
    sums = [float(xb.sum()) for xb, yb in loader]
    n_batches = len(loader)
""")
case("torch.utils.data.DataLoader", """
    import torch
    from torch.utils.data import TensorDataset, DataLoader
    ds = TensorDataset(torch.arange(10.0))
    loader = DataLoader(ds, batch_size=4, drop_last=True)
    sums = [float(b[0].sum()) for b in loader]
""")
case("torch.utils.data.dataloader.DataLoader", """
    import torch
    from torch.utils.data import TensorDataset
    from torch.utils.data.dataloader import DataLoader
    loader = DataLoader(TensorDataset(torch.arange(6.0)), batch_size=3)
    sums = [float(b[0].sum()) for b in loader]
""")

# --- Module methods and attributes

case("Module.eval", """
    import torch
    import torch.nn as nn
    model = nn.Sequential(nn.Linear(4, 2), nn.Dropout(0.5))
    model.eval()
    flag = model.training
    y = model(torch.ones(3, 4))
""")
case("Module.train", """
    import torch.nn as nn
    model = nn.Sequential(nn.Linear(4, 2), nn.Dropout(0.5))
    model.eval()
    model.train()
    flag = model.training
""")
case("Module.train", """
    import torch.nn as nn
    model = nn.Sequential(nn.Linear(4, 2), nn.Dropout(0.5))
    model.train(False)
    flag = model.training
""")
_WALK = """
    import torch.nn as nn
    model = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))
"""
case("Module.parameters", _WALK + """
    n_params = sum(p.numel() for p in model.parameters())
    shapes = [tuple(p.shape) for p in model.parameters()]
""")
case("Module.named_parameters", _WALK + """
    names = [n for n, _ in model.named_parameters()]
    total = sum(p.numel() for _, p in model.named_parameters())
""")
case("Module.children", _WALK + """
    n_children = len(list(model.children()))
""")
case("Module.named_children", _WALK + """
    children = [n for n, _ in model.named_children()]
""")
case("Module.modules", _WALK + """
    n_modules = len(list(model.modules()))
""")
case("Module.named_modules", _WALK + """
    n_named = len([n for n, _ in model.named_modules()])
""")
case("Module.state_dict", _WALK + """
    sd = model.state_dict()
    keys = list(sd.keys())
    w = sd["0.weight"]
""")
case("Module.load_state_dict", """
    import torch.nn as nn
    src = nn.Linear(3, 2)
    dst = nn.Linear(3, 2)
    missing, unexpected = dst.load_state_dict(src.state_dict(), strict=False)
""")
case("Module.forward", """
    import torch
    import torch.nn as nn

    class AddOne(nn.Module):
        def forward(self, x):
            return x + 1

    net = AddOne()
    y = net.forward(torch.zeros(2))
""")
case("Module.add_module", """
    import torch
    import torch.nn as nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            for i in range(2):
                self.add_module(f"fc{i}", nn.Linear(3, 3))

        def forward(self, x):
            return self.fc1(self.fc0(x))

    net = Net()
    y = net(torch.ones(2, 3))
""")
case("Module.register_module", """
    import torch
    import torch.nn as nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_module("fc", nn.Linear(3, 2))

        def forward(self, x):
            return self.fc(x)

    net = Net()
    y = net(torch.ones(2, 3))
""")
for _name, _dtype in (("half", "float16"), ("float", "float32"), ("double", "float64")):
    case(f"Module.{_name}", f"""
        import torch
        import torch.nn as nn

        class Scale(nn.Module):
            def __init__(self):
                super().__init__()
                self.w = nn.Parameter(torch.tensor([0.5, 2.0, -1.0]))

            def forward(self, x):
                return x * self.w

        model = Scale()
        model.{_name}()
        y = model(torch.tensor([1.0, 2.0, 3.0]).to(torch.{_dtype}))
    """)
case("Module.bfloat16", """
    import torch
    import torch.nn as nn

    class Scale(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(torch.tensor([0.5, 2.0, -1.0]))

        def forward(self, x):
            return x * self.w

    model = Scale()
    model.bfloat16()
    y = model(torch.tensor([1.0, 2.0, 3.0]).to(torch.bfloat16)).float()
""")
case("Module.in_features", """
    import torch.nn as nn
    fc = nn.Linear(4, 3)
    sizes = (fc.in_features, fc.out_features)
""")
case("Module.out_features", """
    import torch.nn as nn
    fc = nn.Linear(4, 3)
    n_out = fc.out_features
""")
case("Module.num_embeddings", """
    import torch.nn as nn
    emb = nn.Embedding(6, 3)
    rows = emb.num_embeddings
""")
case("Module.embedding_dim", """
    import torch.nn as nn
    emb = nn.Embedding(6, 3)
    dim = emb.embedding_dim
""")
case("Module.weight", """
    import torch.nn as nn
    bn = nn.BatchNorm2d(3)
    scale = bn.weight * 1
""")
case("Module.bias", """
    import torch.nn as nn
    bn = nn.BatchNorm2d(3)
    shift = bn.bias + 0
""")
case("Module.running_mean", """
    import torch
    import torch.nn as nn
    bn = nn.BatchNorm1d(3)
    bn.train()
    y = bn(torch.arange(12.0).reshape(4, 3))
    mean = bn.running_mean * 1
""")
case("Module.running_var", """
    import torch
    import torch.nn as nn
    bn = nn.BatchNorm1d(3)
    bn.train()
    y = bn(torch.arange(12.0).reshape(4, 3))
    var = bn.running_var * 1
""")

# --- distributed (a one-process gloo group; ports apart from the rule examples')

case("torch.distributed.init_process_group", """
    import torch
    import torch.distributed as dist
    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:29541", rank=0, world_size=1)
    rank = dist.get_rank()
    dist.destroy_process_group()
""")
case("torch.distributed.destroy_process_group", """
    import torch
    import torch.distributed as dist
    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:29542", rank=0, world_size=1)
    world = dist.get_world_size()
    dist.destroy_process_group()
""")
case("torch.distributed.get_rank", """
    import torch
    import torch.distributed as dist
    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:29543", rank=0, world_size=1)
    rank = dist.get_rank()
    dist.destroy_process_group()
""")
case("torch.distributed.get_world_size", """
    import torch
    import torch.distributed as dist
    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:29544", rank=0, world_size=1)
    world = dist.get_world_size()
    dist.destroy_process_group()
""")

# --- table entries whose op_db sample sits under a variant name (div) or is absent

case("torch.divide", """
    import torch
    a = torch.tensor([[1.0, -2.0], [3.0, 5.0]])
    q = torch.divide(a, torch.tensor([2.0, 4.0]))
""")
case("Tensor.div", """
    import torch
    a = torch.tensor([[1.0, -2.0], [3.0, 5.0]])
    q = a.div(torch.tensor([2.0, 4.0]))
    r = a.div(2)
""")
case("Tensor.divide", """
    import torch
    a = torch.tensor([[1.0, -2.0], [3.0, 5.0]])
    q = a.divide(4.0)
""")
case("Tensor.div_", """
    import torch
    a = torch.tensor([[1.0, -2.0], [3.0, 5.0]])
    a.div_(2)
""")
case("torch.is_tensor", """
    import torch
    a = torch.is_tensor(torch.ones(2))
    b = torch.is_tensor([1.0])
""")
case("torch.is_floating_point", """
    import torch
    a = torch.is_floating_point(torch.ones(2))
    b = torch.is_floating_point(torch.tensor([1, 2]))
""")
case("torch.is_complex", """
    import torch
    a = torch.is_complex(torch.ones(2))
    b = torch.is_complex(torch.zeros(2, dtype=torch.complex64))
""")
case("Tensor.is_complex", """
    import torch
    a = torch.ones(2).is_complex()
    b = torch.zeros(2, dtype=torch.complex64).is_complex()
""")
case("Tensor.is_signed", """
    import torch
    a = torch.ones(2).is_signed()
    b = torch.tensor([1, 2], dtype=torch.uint8).is_signed()
""")
case("torch.numel", """
    import torch
    n = torch.numel(torch.zeros(2, 3))
""")


# Recurrent layers: module_db samples them unbatched, which MindSpore 2.10 rejects (the
# rule explanation says so); notebooks feed batches, as these cases do.
case("torch.nn.LSTM", """
    import torch
    import torch.nn as nn
    lstm = nn.LSTM(3, 4, 2, batch_first=True, bidirectional=True)
    x = torch.randn(2, 5, 3)
    out, (h_n, c_n) = lstm(x)
""")
case("torch.nn.LSTM", """
    import torch
    import torch.nn as nn
    lstm = nn.LSTM(input_size=3, hidden_size=4, bias=False)
    x = torch.randn(5, 2, 3)
    h0 = torch.randn(1, 2, 4)
    c0 = torch.randn(1, 2, 4)
    out, (h_n, c_n) = lstm(x, (h0, c0))
""")
case("torch.nn.GRU", """
    import torch
    import torch.nn as nn
    gru = nn.GRU(3, 4, num_layers=2, bidirectional=True)
    x = torch.randn(5, 2, 3)
    h0 = torch.randn(4, 2, 4)
    out, h_n = gru(x, h0)
""")
case("torch.nn.GRU", """
    import torch
    import torch.nn as nn
    gru = nn.GRU(input_size=3, hidden_size=4, bias=False, batch_first=True)
    out, h_n = gru(torch.randn(2, 5, 3))
""")
case("torch.nn.RNN", """
    import torch
    import torch.nn as nn
    rnn = nn.RNN(3, 4, 2, 'relu', batch_first=True)
    out, h_n = rnn(torch.randn(2, 5, 3))
""")
case("torch.nn.RNN", """
    import torch
    import torch.nn as nn
    rnn = nn.RNN(input_size=3, hidden_size=4, bidirectional=True, bias=False)
    out, h_n = rnn(torch.randn(5, 2, 3), torch.randn(2, 2, 4))
""")
case("torch.nn.LSTMCell", """
    import torch
    import torch.nn as nn
    cell = nn.LSTMCell(3, 4)
    h, c = cell(torch.randn(2, 3), (torch.randn(2, 4), torch.randn(2, 4)))
""")
case("torch.nn.GRUCell", """
    import torch
    import torch.nn as nn
    cell = nn.GRUCell(3, 4, bias=False)
    h = cell(torch.randn(2, 3), torch.randn(2, 4))
""")
case("torch.nn.RNNCell", """
    import torch
    import torch.nn as nn
    cell = nn.RNNCell(3, 4, True, 'relu')
    h = cell(torch.randn(2, 3), torch.randn(2, 4))
""")


# dtype aliases: the same dtype under PyTorch's C-style names
for _alias in ("double", "float", "half", "int", "long", "short", "bool", "bfloat16", "cfloat"):
    case(f"torch.{_alias}", f"""
        import torch
        x = torch.ones(2, 3, dtype=torch.{_alias})
        y = torch.arange(4).to(torch.{_alias})
    """)

# adaptive 1-D pooling (NNF002; more lengths in nn_cases.py)
for _cls in ("AdaptiveAvgPool1d", "AdaptiveMaxPool1d"):
    case(f"torch.nn.{_cls}", f"""
        import torch
        import torch.nn as nn
        pool = nn.{_cls}(3)
        x = torch.arange(24.0).reshape(2, 2, 6)
        y = pool(x)
    """)

case("torch.nn.TransformerEncoder", """
    import torch
    import torch.nn as nn
    layer = nn.TransformerEncoderLayer(8, 2, 16, 0.0, batch_first=True)
    encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
    encoder.eval()
    x = torch.randn(3, 5, 8)
    y = encoder(x)
""")

case("torch.cdouble", """
    import torch
    x = torch.ones(2, dtype=torch.cdouble)
    r = x.real
""")
case("Tensor.real", """
    import torch
    x = torch.linspace(-1, 1, 4)
    r = x.real
""")
case("torch.nn.functional.upsample", """
    import torch
    import torch.nn.functional as F
    x = torch.arange(16.0).reshape(1, 1, 4, 4)
    y = F.upsample(x, scale_factor=2.0, mode="nearest")
""")
case("Module.input_size", """
    import torch
    import torch.nn as nn
    lstm = nn.LSTM(3, 4)
    n = lstm.input_size
""")


flagged("torch.multiprocessing.spawn.spawn", """
    import torch.multiprocessing as mp
    def worker(rank):
        pass
    mp.spawn(worker, nprocs=2)
""")
flagged("torch.nn.parallel.distributed.DistributedDataParallel", """
    import torch.nn as nn
    from torch.nn.parallel import DistributedDataParallel as DDP
    model = DDP(nn.Linear(2, 2))
""")
flagged("Module.module", """
    import torch.nn as nn
    from torch.nn.parallel import DistributedDataParallel as DDP
    model = DDP(nn.Linear(2, 2))
    inner = model.module
""")
flagged("Module.proj_size", """
    import torch.nn as nn
    lstm = nn.LSTM(3, 4)
    p = lstm.proj_size
""")

# Tensor attributes that read the same on 2.10
case("Tensor.shape", """
    import torch
    x = torch.arange(6.0).reshape(2, 3)
    s = x.shape
    rows = x.shape[0]
""")
case("Tensor.ndim", """
    import torch
    x = torch.arange(6.0).reshape(2, 3)
    n = x.ndim
    m = x.sum().ndim
""")
case("Tensor.T", """
    import torch
    x = torch.arange(6.0).reshape(2, 3)
    t = x.T
""")
case("Tensor.mT", """
    import torch
    x = torch.arange(12.0).reshape(2, 2, 3)
    t = x.mT
""")
case("Tensor.itemsize", """
    import torch
    a = torch.ones(3).itemsize
    b = torch.ones(3, dtype=torch.float64).itemsize
    c = torch.ones(3, dtype=torch.int64).itemsize
""")
case("Tensor.nbytes", """
    import torch
    a = torch.ones(2, 3).nbytes
    b = torch.ones(4, dtype=torch.int64).nbytes
""")

flagged("torch.einsum", """
    import torch
    x = torch.ones(2, 3)
    y = torch.einsum("ij,kj->ik", x, x)
""")

# cases kept beside the rule modules they verify
import msmagic.apis.layer_cases  # noqa: E402,F401
import msmagic.apis.optim_cases  # noqa: E402,F401

# std/var called the way notebooks call them (op_db samples pass dim and unbiased by keyword)
case("Tensor.var", """
    import torch
    x = torch.linspace(-1, 2, 24).reshape(2, 3, 4)
    v = x.var(1)
""")
case("Tensor.var", """
    import torch
    x = torch.linspace(-1, 2, 24).reshape(2, 3, 4)
    legacy = x.var(False)
""")
case("Tensor.std", """
    import torch
    x = torch.linspace(-1, 2, 24).reshape(2, 3, 4)
    pos = x.std(1, False, True)
""")
case("Tensor.std", """
    import torch
    x = torch.linspace(-1, 2, 24).reshape(2, 3, 4)
    c = x.std(dim=2, correction=0)
""")
case("torch.std", """
    import torch
    x = torch.linspace(-1, 2, 24).reshape(2, 3, 4)
    legacy2 = torch.std(x, True)
""")
case("torch.std_mean", """
    import torch
    x = torch.linspace(-1, 2, 24).reshape(2, 3, 4)
    sd, mean = torch.std_mean(x, 0)
""")
import msmagic.apis.utility_cases  # noqa: E402,F401
import msmagic.apis.dist_cases  # noqa: E402,F401
import msmagic.apis.linalg_cases  # noqa: E402,F401

# APIs the statement-level rules port: the whole training step or backward pass changes
case("Tensor.backward", """
    import torch
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = (x * x).sum()
    y.backward()
    g = x.grad
""")
case("Tensor.grad", """
    import torch
    w = torch.tensor([0.5, -1.0], requires_grad=True)
    z = (w.exp() * 3).sum()
    z.backward()
    gw = w.grad
""")
for _api in ("Optimizer.zero_grad", "Optimizer.step"):
    case(_api, """
        import torch
        import torch.nn as nn
        model = nn.Linear(3, 2)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        x = torch.linspace(-1, 1, 12).reshape(4, 3)
        target = torch.linspace(0, 1, 8).reshape(4, 2)
        for step in range(3):
            optimizer.zero_grad()
            loss = ((model(x) - target) ** 2).mean()
            loss.backward()
            optimizer.step()
    """)

case("torch.nn.TransformerDecoderLayer", """
    import torch
    import torch.nn as nn
    layer = nn.TransformerDecoderLayer(8, 2, dim_feedforward=16, dropout=0.0, batch_first=True)
    layer.eval()
    tgt = torch.randn(2, 3, 8)
    memory = torch.randn(2, 4, 8)
    y = layer(tgt, memory)
""")
case("torch.nn.TransformerDecoder", """
    import torch
    import torch.nn as nn
    layer = nn.TransformerDecoderLayer(8, 2, dim_feedforward=16, dropout=0.0)
    decoder = nn.TransformerDecoder(layer, 2)
    decoder.eval()
    tgt = torch.randn(3, 2, 8)
    memory = torch.randn(4, 2, 8)
    y = decoder(tgt, memory)
""")

case("Module.named_buffers", """
    import torch
    import torch.nn as nn
    class Scaler(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("scale", torch.tensor([2.0, 3.0]))
        def forward(self, x):
            return x * self.scale
    m = Scaler()
    names = [n for n, _ in m.named_buffers()]
    total = sum(b.sum() for _, b in m.named_buffers())
    y = m(torch.ones(2))
""")
case("Module.buffers", """
    import torch
    import torch.nn as nn
    class Scaler(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("scale", torch.tensor([2.0, 3.0]))
        def forward(self, x):
            return x * self.scale
    m = Scaler()
    count = len(list(m.buffers()))
    first = list(m.buffers())[0]
""")

case("torch.Tensor", """
    import torch
    def double(x: torch.Tensor) -> torch.Tensor:
        return x * 2
    x = torch.ones(3)
    is_tensor = isinstance(x, torch.Tensor)
    is_not = isinstance([1.0], torch.Tensor)
    y = double(x)
""")
import msmagic.apis.data_cases  # noqa: E402,F401
import msmagic.apis.misc_cases  # noqa: E402,F401
import msmagic.apis.torchfn_cases  # noqa: E402,F401
import msmagic.apis.tensor_cases  # noqa: E402,F401
import msmagic.apis.nn_cases  # noqa: E402,F401
