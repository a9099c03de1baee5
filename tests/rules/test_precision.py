"""Precision rules (PRC001-PRC002) and parameter freezing, run on both sides."""


import numpy as np

import msmagic
from msmagic.parity_check import run_pair
from tests.rules.support import rule_list as rules
from tests.rules.support import src

#: float16 keeps ~3 significant digits; the two CPU kernels accumulate differently.
FP16 = dict(rtol=1e-2, atol=1e-3)


def test_model_half_casts_parameters_and_forward_matches():
    run = run_pair(src("""
        import torch
        import torch.nn as nn
        model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
        model.half()
        x = torch.randn(5, 4)
        y = model(x.half())
    """), **FP16)
    code = run.port.code
    assert "model.to(mindspore.float16)\n" in code and "y = model(x.half())\n" in code
    assert "PRC001" in rules(run.port)
    assert run.agree("y", "model.0.weight", "model.2.bias"), run.explain()
    assert run.row("y").ms_dtype == "Float16" and run.row("y").torch_dtype == "torch.float16"
    assert run.row("model.0.weight").ms_dtype == "Float16"


def test_module_dtype_forms():
    run = run_pair(src("""
        import torch
        import torch.nn as nn
        x = torch.tensor([[0.5, -1.0, 2.0]])
        net = nn.Linear(3, 2)
        net = net.half()
        a = net(x.half())
        wide = nn.Linear(3, 2)
        wide.double()
        b = wide(x.double())
        same = nn.Linear(3, 2).to(torch.float16).float()
        c = same(x)
    """), **FP16)
    code = run.port.code
    assert "net = net.to(mindspore.float16)\n" in code
    assert "wide.to(mindspore.float64)\n" in code
    assert "same = nn.Dense(3, 2).to(mindspore.float16).to(mindspore.float32)\n" in code
    assert rules(run.port).count("PRC001") == 3
    assert run.agree("a", "b", "c", "net.weight", "wide.weight", "same.weight"), run.explain()
    assert [run.row(n).ms_dtype for n in "abc"] == ["Float16", "Float64", "Float32"]


def test_half_on_a_model_of_unknown_type_is_left_alone():
    port = msmagic.port(src("""
        import torch
        def cast(t):
            return t.half()
    """))
    assert "return t.half()\n" in port.code and not port.unsupported


def test_detach_becomes_stop_gradient():
    run = run_pair(src("""
        import torch
        x = torch.tensor([1.0, -2.0, 3.0])
        y = x.detach() * 2
        z = (x + 1).detach()
    """))
    code = run.port.code
    assert "y = mindspore.ops.stop_gradient(x) * 2\nz = mindspore.ops.stop_gradient((x + 1))\n" in code
    assert rules(run.port).count("PRC002") == 2
    assert run.agree("y", "z"), run.explain()


def test_stop_gradient_blocks_gradient_like_detach():
    import mindspore
    import torch

    cell = src("""
        import torch
        def f(x):
            return (x * x.detach()).sum()
    """)
    ns = {"__name__": "ported"}  # MindSpore reads the function's module name
    exec(msmagic.port(cell).code, ns)
    data = np.array([1.0, -2.0, 3.0], dtype=np.float32)
    grad_ms = mindspore.grad(ns["f"])(mindspore.Tensor(data)).asnumpy()
    tns = {}
    exec(cell, tns)
    xt = torch.tensor(data, requires_grad=True)
    tns["f"](xt).backward()
    np.testing.assert_allclose(grad_ms, xt.grad.numpy(), rtol=1e-6)
    assert not np.allclose(grad_ms, 2 * data)  # the detached factor got no gradient


def test_freezing_with_requires_grad_false_keeps_working():
    run = run_pair(src("""
        import torch
        import torch.nn as nn
        model = nn.Linear(3, 2)
        for p in model.parameters():
            p.requires_grad = False
        model.bias.requires_grad = True
        n_trainable = sum(1 for p in model.parameters() if p.requires_grad)
    """))
    assert "    p.requires_grad = False\n" in run.port.code
    assert run.agree("n_trainable"), run.explain()
    assert [p.name for p in run.ms_ns["model"].trainable_params()] == ["bias"]
