"""Scalar autograd rules (GRD001-GRD006), each run on both sides: the gradients the port
computes with mindspore.grad / vjp must equal PyTorch's x.grad / autograd.grad values."""

import libcst as cst

import msmagic
from tests.rules.support import findings, rule_list, rules, run_pair, src

#: float32 gradients from the two CPU kernels agree to rounding
TOL = dict(rtol=1e-5, atol=1e-6)


def _check(run, *names):
    assert run.torch_error is None and run.ms_error is None, run.explain()
    assert run.agree(*names), run.explain()
    assert not run.port.unsupported, run.port.unsupported
    again = msmagic.port(run.port.code)
    assert again.code == run.port.code and not again.edits


def test_backward_of_a_polynomial_in_two_leaves():
    run = run_pair(src("""
        import torch
        x = torch.tensor(1.5, requires_grad=True)
        y = torch.tensor(-2.0, requires_grad=True)
        z = x**3 * y + 2 * y**2
        z.backward()
        dx = x.grad
        dy = y.grad
    """), **TOL)
    code = run.port.code
    assert "def _z_fn(x, y):\n    z = x**3 * y + 2 * y**2\n    return z\n" in code
    assert "_x_grad, _y_grad = mindspore.grad(_z_fn, grad_position=(0, 1))(x, y)\n" in code
    assert "dx = _x_grad\ndy = _y_grad\n" in code
    assert {"GRD001", "GRD005"} <= rules(run)
    _check(run, "dx", "dy", "z")


def test_backward_through_exp_log_chain_with_factory_leaf_and_constant():
    run = run_pair(src("""
        import torch
        w = torch.ones(3, requires_grad=True)
        c = torch.tensor([0.5, 1.0, 2.0])
        h = torch.exp(w * c)
        s = torch.log(h.sum() + 1.0)
        print("forward", s)
        s.backward()
        print(w.grad)
        g = w.grad
    """), **TOL)
    code = run.port.code
    # both forward statements re-derived, the print and the constant are not
    assert "def _s_fn(w):\n    h = mindspore.ops.exp(w * c)\n    s = mindspore.ops.log(h.sum() + 1.0)\n    return s\n" in code
    assert "_w_grad = mindspore.grad(_s_fn, grad_position=0)(w)\nprint(_w_grad)\n" in code
    # requires_grad=True on the factory: dropped by the autograd rule, not flagged
    assert "w = mindspore.ops.ones(3)\n" in code and "FUN017" not in findings(run)
    assert rule_list(run.port).count("GRD001") == 2
    _check(run, "g", "s", "h")


def test_matrix_expression_gradient():
    run = run_pair(src("""
        import torch
        import numpy as np
        A = torch.tensor(np.arange(6.0).reshape(2, 3), dtype=torch.float32, requires_grad=True)
        B = torch.tensor([[1.0, -1.0], [0.5, 2.0], [3.0, 0.0]], requires_grad=True)
        loss = (torch.matmul(A, B) * 0.1).tanh().pow(2).mean()
        loss.backward()
        gA, gB = A.grad, B.grad
    """), **TOL)
    assert "_A_grad, _B_grad = mindspore.grad(_loss_fn, grad_position=(0, 1))(A, B)" in run.port.code
    _check(run, "gA", "gB", "loss")


def test_torch_autograd_backward_function_form():
    run = run_pair(src("""
        import torch
        x = torch.tensor(1.0, requires_grad=True)
        y = torch.tensor(2.0, requires_grad=True)
        z = x**2 + y
        torch.autograd.backward(z)
        gx, gy = x.grad, y.grad
    """), **TOL)
    assert "_x_grad, _y_grad = mindspore.grad(_z_fn, grad_position=(0, 1))(x, y)\n" in run.port.code
    assert "GRD001" in rules(run)
    _check(run, "gx", "gy")


def test_autograd_grad_single_input_returns_a_tuple():
    run = run_pair(src("""
        import torch
        x = torch.tensor(1.0, requires_grad=True)
        y = torch.tensor(2.0, requires_grad=True)
        z = x**2 + y
        out = torch.autograd.grad(z, x)
        out1 = torch.autograd.grad(z, [y])
    """), **TOL)
    code = run.port.code
    assert "def _z_fn(x):\n    z = x**2 + y\n    return z\nout = (mindspore.grad(_z_fn, grad_position=0)(x),)\n" in code
    assert "out1 = (mindspore.grad(_z_fn2, grad_position=0)(y),)" in code
    assert rule_list(run.port).count("GRD002") == 2
    _check(run, "out", "out1")


def test_autograd_grad_several_inputs_and_intermediate_input():
    run = run_pair(src("""
        import torch
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        y = torch.tensor(3.0, requires_grad=True)
        u = torch.sigmoid(x) * y
        z = (u * u).sum()
        gx, gy = torch.autograd.grad(z, (x, y), retain_graph=True)
        (gu,) = torch.autograd.grad(outputs=z, inputs=u)
    """), **TOL)
    code = run.port.code
    assert "gx, gy = mindspore.grad(_z_fn, grad_position=(0, 1))(x, y)\n" in code
    # differentiating w.r.t. the intermediate u: the slice stops at u
    assert "def _z_fn2(u):\n    z = (u * u).sum()\n    return z\n" in code
    assert "GRD003" in rules(run)
    _check(run, "gx", "gy", "gu")


def test_second_derivative_with_create_graph():
    run = run_pair(src("""
        import torch
        x = torch.tensor([0.5, 2.0], requires_grad=True)
        y = (x**3 + torch.sigmoid(x)).sum()
        g, = torch.autograd.grad(y, x, create_graph=True)
        s = g.sum()
        h, = torch.autograd.grad(s, x)
    """), **TOL)
    code = run.port.code
    # the second function re-derives g, itself a mindspore.grad call: nested grad
    assert ("def _s_fn(x):\n    y = (x**3 + mindspore.ops.sigmoid(x)).sum()\n"
            "    g, = (mindspore.grad(_y_fn, grad_position=0)(x),)\n    s = g.sum()\n    return s\n") in code
    assert "GRD003" in rules(run) and "create_graph=True dropped" in str(run.port.edits)
    _check(run, "g", "h")


def test_backward_with_gradient_vector_is_a_vjp():
    run = run_pair(src("""
        import torch
        x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x * x
        v = torch.tensor([1.0, 0.1, 0.01])
        y.backward(gradient=v)
        gx = x.grad
        a = torch.tensor([1.0, -1.0], requires_grad=True)
        b = a.exp()
        (ga,) = torch.autograd.grad(b, a, grad_outputs=torch.ones(2) * 2)
    """), **TOL)
    code = run.port.code
    assert "(_x_grad,) = mindspore.vjp(_y_fn, x)[1](v)\n" in code
    assert "ga, = mindspore.vjp(_b_fn, a)[1](mindspore.ops.ones(2) * 2)" in code.replace("(ga,)", "ga,")
    assert rule_list(run.port).count("GRD004") == 2
    _check(run, "gx", "ga")


def test_grad_reset_and_second_backward():
    run = run_pair(src("""
        import torch
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        y = (x ** 3).sum()
        y.backward()
        first = x.grad * 1.0
        x.grad = None
        z = (x * 4.0).sum()
        z.backward()
        second = x.grad
    """), **TOL)
    code = run.port.code
    assert "_x_grad = None\n" in code and "_x_grad = mindspore.grad(_z_fn, grad_position=0)(x)\n" in code
    _check(run, "first", "second")


def test_manual_gradient_descent_loop_with_zeroing():
    run = run_pair(src("""
        import torch
        w = torch.tensor([0.5, -0.5], requires_grad=True)
        x = torch.tensor([1.0, 2.0])
        losses = []
        for step in range(4):
            loss = ((w * x).sum() - 1.0) ** 2
            loss.backward()
            losses.append(loss.item())
            with torch.no_grad():
                w -= 0.1 * w.grad
            w.grad.zero_()
        final = w * 1.0
    """), **TOL)
    code = run.port.code
    assert "w -= 0.1 * _w_grad\n" in code
    assert "    _w_grad = mindspore.ops.zeros_like(_w_grad)\n" in code
    assert run.torch_error is None and run.ms_error is None, run.explain()
    assert run.agree("losses", "final"), run.explain()
    assert "GRD005" in rules(run) and "GRD006" not in findings(run)


def _flagged(text, needle):
    port = msmagic.port(src(text))
    assert "GRD006" in {f.rule_id for f in port.unsupported}, port.code
    assert needle in port.code, port.code
    cst.parse_module(port.code)
    return port


def test_second_backward_without_zeroing_is_flagged():
    port = _flagged("""
        import torch
        x = torch.tensor(1.0, requires_grad=True)
        z = x * 3
        z.backward(retain_graph=True)
        z.backward()
    """, "z.backward()  # msmagic: GRD006 x.grad accumulates; not ported")
    assert port.code.count("mindspore.grad(") == 1


def test_loop_accumulation_without_zeroing_is_flagged():
    _flagged("""
        import torch
        w = torch.tensor(1.0, requires_grad=True)
        for i in range(3):
            loss = w * i
            loss.backward()
    """, "loss.backward()  # msmagic: GRD006 w.grad accumulates over iterations; not ported")


def test_reassigned_leaf_and_stale_input_are_flagged():
    _flagged("""
        import torch
        x = torch.tensor(1.0, requires_grad=True)
        x = x * 2
        z = x ** 2
        z.backward()
    """, "# msmagic: GRD006 z.backward() not ported")
    port = _flagged("""
        import torch
        a = torch.tensor(2.0)
        x = torch.tensor(1.0, requires_grad=True)
        z = a * x
        a = torch.tensor(5.0)
        z.backward()
    """, "# msmagic: GRD006 z.backward() not ported")
    assert "reassigned between" in port.unsupported[0].reason


def test_autograd_grad_unsupported_arguments_are_flagged():
    port = _flagged("""
        import torch
        x = torch.tensor(1.0, requires_grad=True)
        y = torch.tensor(1.0, requires_grad=True)
        z = x * 2
        g = torch.autograd.grad(z, (x, y), allow_unused=True)
    """, "torch.autograd.grad(z, (x, y), allow_unused=True)  # msmagic: GRD006")
    assert port.unsupported[0].line == 5


def test_training_loss_without_leaves_is_left_to_the_training_rules():
    port = msmagic.port(src("""
        import torch
        import torch.nn as nn
        model = nn.Linear(2, 1)
        loss = model(torch.ones(1, 2)).sum()
        loss.backward()
    """))
    assert "loss.backward()\n" in port.code
    assert not any(e.rule_id.startswith("GRD") for e in port.edits)
