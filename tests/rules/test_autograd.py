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
    assert "def _s_fn(w):\n    h = exp_in_float64(w * c)\n    s = mindspore.ops.log(h.sum() + 1.0)\n    return s\n" in code
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
    assert "mindspore.ops.assign(w, w - (0.1 * _w_grad))\n" in code
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
    """No requires_grad tensor: the gradients are the model's, computed by the training
    rules (TRN001: mindspore.grad over its parameters), not by these rules."""
    run = run_pair(src("""
        import torch
        import torch.nn as nn
        model = nn.Linear(2, 1)
        loss = model(torch.tensor([[1.0, -2.0]])).sum()
        loss.backward()
        gw = model.weight.grad * 1.0
        gb = model.bias.grad * 1.0
    """))
    assert not any(e.rule_id.startswith("GRD") for e in run.port.edits)
    assert "TRN001" in {e.rule_id for e in run.port.edits} and not run.port.unsupported
    assert run.torch_error is None and run.ms_error is None, run.explain()
    assert run.agree("gw", "gb"), run.explain()

def test_backward_of_expressions_sum_and_mean():
    run = run_pair(src("""
        import torch
        x = torch.tensor([1.0, -2.0, 0.5], requires_grad=True)
        y = x * x + torch.sin(x)
        y.sum().backward()
        gx = x.grad
        a = torch.tensor([1.0, 2.0], requires_grad=True)
        b = torch.tensor([3.0, -4.0], requires_grad=True)
        (a * b).mean().backward()
        ga, gb = a.grad, b.grad
    """), **TOL)
    code = run.port.code
    assert "def _y_fn(x):\n    y = x * x + mindspore.ops.sin(x)\n    return y.sum()\n" in code
    assert "def _backward_fn(a, b):\n    return (a * b).mean()\n" in code
    assert "_a_grad, _b_grad = mindspore.grad(_backward_fn, grad_position=(0, 1))(a, b)" in code
    assert rule_list(run.port).count("GRD001") == 2  # torch.tensor's requires_grad: DAT001
    _check(run, "gx", "ga", "gb", "y")


def test_expression_backward_in_a_loop_and_with_a_gradient_vector():
    run = run_pair(src("""
        import torch
        w = torch.tensor([0.5, -0.5], requires_grad=True)
        xs = torch.tensor([1.0, 2.0])
        hist = []
        for step in range(3):
            w.grad = None
            ((w * xs).sum() - 1.0).pow(2).backward()
            hist.append(w.grad * 1.0)
            with torch.no_grad():
                w -= 0.1 * w.grad
        v = torch.tensor([1.0, 0.5])
        u = torch.tensor([2.0, 3.0], requires_grad=True)
        (u ** 2).backward(v)
        gu = u.grad
        final = w * 1.0
    """), **TOL)
    assert "(_u_grad,) = mindspore.vjp(_backward_fn2, u)[1](v)" in run.port.code
    _check(run, "hist", "final", "gu")


def test_autograd_grad_and_backward_of_expressions():
    run = run_pair(src("""
        import torch
        x = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
        y = torch.sin(x) * 2
        gx, = torch.autograd.grad(y.sum(), x, retain_graph=True)
        gy, = torch.autograd.grad(outputs=[(y * x).mean()], inputs=[x])
        z = torch.tensor([1.0, 3.0], requires_grad=True)
        torch.autograd.backward((z ** 3).sum())
        gz = z.grad
    """), **TOL)
    code = run.port.code
    assert "gx, = (mindspore.grad(_y_fn, grad_position=0)(x),)" in code
    assert "    return (y * x).mean()\n" in code
    _check(run, "gx", "gy", "gz")


def test_factories_with_requires_grad_as_differentiated_leaves():
    run = run_pair(src("""
        import torch
        e = torch.eye(3, requires_grad=True)
        z = torch.zeros(3, requires_grad=True)
        o = torch.ones(2, 3, requires_grad=True)
        f = torch.full((3,), 2.0, requires_grad=True)
        r = torch.arange(3.0, requires_grad=True)
        u = torch.rand(3, requires_grad=True)
        n = torch.randn(3, requires_grad=True)
        l = torch.linspace(0, 1, 3, requires_grad=True)
        t = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64, requires_grad=True)
        k = torch.zeros_like(u, requires_grad=True)
        m = torch.empty(3, requires_grad=True)
        loss = ((e @ (z + 1.0)).sum() + (o * f).sum() + (r * u * n).sum() + (l ** 2).sum()
                + (t ** 3).sum().float() + (k * 5).sum() + (m * 2).sum())
        loss.backward()
        ge, gz, go, gf, gr, gu, gn, gl, gt, gk, gm = (e.grad, z.grad, o.grad, f.grad, r.grad, u.grad,
                                                      n.grad, l.grad, t.grad, k.grad, m.grad)
    """), **TOL)
    code = run.port.code
    assert "requires_grad" not in code
    assert "grad_position=(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10))(e, z, o, f, r, u, n, l, t, k, m)" in code
    assert rule_list(run.port).count("GRD001") == 10 + 1  # torch.tensor's: DAT001
    _check(run, "ge", "gz", "go", "gf", "gr", "gu", "gn", "gl", "gt", "gk", "gm")


def test_requires_grad_marks_become_leaves():
    run = run_pair(src("""
        import torch
        a = torch.tensor([1.0, -2.0, 3.0])
        x = a.detach().requires_grad_(True)
        w = torch.randn(3).requires_grad_()
        p = torch.ones(3)
        p.requires_grad_()
        q = torch.tensor([2.0, 2.0, 2.0])
        q.requires_grad = True
        y = (x * w * p * q).sum()
        y.backward()
        gx, gw, gp, gq = x.grad, w.grad, p.grad, q.grad
    """), **TOL)
    code = run.port.code
    assert "x = mindspore.ops.stop_gradient(a)\nw = mindspore.ops.randn(3)\np = mindspore.ops.ones(3)\n" in code
    assert "requires_grad" not in code
    assert "_x_grad, _w_grad, _p_grad, _q_grad = mindspore.grad(_y_fn, grad_position=(0, 1, 2, 3))" in code
    _check(run, "gx", "gw", "gp", "gq", "y")


def test_requires_grad_is_leaf_and_grad_fn_reads():
    run = run_pair(src("""
        import torch
        import torch.nn as nn
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        c = torch.ones(2)
        model = nn.Linear(2, 1)
        flags = (x.requires_grad, x.is_leaf, x.grad_fn is None, c.requires_grad, c.is_leaf, c.grad_fn is None)
        frozen = [p.requires_grad for p in model.parameters()]
        model.bias.requires_grad = False
        trainable = [p.requires_grad for p in model.parameters()]
        y = (x * c).sum()
        y.backward()
        g = x.grad
    """), **TOL)
    code = run.port.code
    assert "flags = (True, True, None is None, False, True, None is None)\n" in code
    assert "frozen = [p.requires_grad for p in model.get_parameters()]" in code
    assert "model.bias.requires_grad = False\n" in code
    assert rule_list(run.port).count("GRD007") == 6
    _check(run, "flags", "frozen", "trainable", "g")


def test_reads_of_computed_tensors_at_the_top_level_are_decided():
    """At the top level of a cell the port knows y was computed from a tensor that
    requires grad (outside no_grad): requires_grad True, is_leaf False, and grad_fn a
    string naming PyTorch's node (flagged: it only stands in for the node object)."""
    run = run_pair(src("""
        import torch
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        info = (y.requires_grad, y.is_leaf, y.grad_fn is None, bool(y.grad_fn))
        node = str(y.grad_fn)
    """))
    assert run.torch_error is None and run.ms_error is None, run.explain()
    assert run.agree("info"), run.explain()
    assert run.ms_ns["info"] == (True, False, False, True)
    assert run.ms_ns["node"] == "<MulBackward0 object>"
    assert run.torch_ns["node"].startswith("<MulBackward0 object at ")
    assert [f.api for f in run.port.unsupported] == ["Tensor.grad_fn"] * 3
    assert "(True, False, False, bool('<MulBackward0 object>'))" in run.port.code  # no "literal is None"


def test_reads_of_computed_tensors_are_flagged():
    port = msmagic.port(src("""
        import torch
        def info_of(x):
            y = torch.exp(x)
            return (y.requires_grad, y.is_leaf, y.grad_fn)
        w = torch.ones(2)
        w.add_(1.0)
        state = w.requires_grad
    """))
    found = [f for f in port.unsupported if f.rule_id == "GRD007"]
    assert [f.api for f in found] == ["Tensor.requires_grad", "Tensor.is_leaf", "Tensor.grad_fn"], found
    assert "# msmagic: GRD007 Tensor.requires_grad has no MindSpore counterpart" in port.code
    assert "state = w.requires_grad" in port.code  # changed in place: not decided, not flagged
    cst.parse_module(port.code)


def test_grad_mode_blocks_inside_the_rederived_function():
    run = run_pair(src("""
        import torch
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        y0 = x * 2
        with torch.no_grad():
            c = x * 3
        with torch.enable_grad():
            y = (y0 * c).sum()
        y.backward()
        g1 = x.grad
        x.grad = None
        with torch.set_grad_enabled(False):
            d = x * 2
            with torch.enable_grad():
                z = (x * d).sum()
            z.backward()
        g2 = x.grad
        v = torch.tensor([1.0, -1.0])
        with torch.no_grad():
            base = v * 3
            with torch.enable_grad():
                vi = v.detach().requires_grad_()
                out = (vi ** 2 * base).sum()
                gv, = torch.autograd.grad(out, vi)
    """), **TOL)
    code = run.port.code
    # recorded-off values are constants of the function; enable_grad's body is re-derived bare
    assert "def _y_fn(x):\n    y0 = x * 2\n    y = (y0 * c).sum()\n    return y\n" in code
    assert "def _z_fn(x):\n    z = (x * d).sum()\n    return z\n" in code
    assert "torch" not in code
    _check(run, "g1", "g2", "gv", "base")


def test_leaf_in_another_form_is_flagged():
    _flagged("""
        import torch
        w = torch.ones(3, requires_grad=True).to("cpu")
        y = (w * 2).sum()
        y.backward()
    """, "y.backward()  # msmagic: GRD006 y.backward() not ported")


def test_with_mixing_a_grad_switch_and_another_manager_is_flagged():
    port = _flagged("""
        import contextlib
        import torch
        x = torch.tensor(1.0, requires_grad=True)
        with torch.enable_grad(), contextlib.nullcontext():
            y = x * 3
        y.backward()
    """, "y.backward()  # msmagic: GRD006 y.backward() not ported")
    assert "split the with statement" in port.unsupported[0].reason


def test_no_grad_nested_in_a_rederived_compound_statement_is_flagged():
    port = _flagged("""
        import torch
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        with torch.enable_grad():
            with torch.no_grad():
                c = x * 2
            y = (x * c).sum()
        y.backward()
    """, "y.backward()  # msmagic: GRD006 y.backward() not ported")
    assert "ops.stop_gradient" in port.unsupported[0].reason


def test_requires_grad_through_an_alias_is_not_a_leaf():
    port = msmagic.port(src("""
        import torch
        y = torch.ones(3)
        x = y.requires_grad_()
        z = (y * 2).sum()
        z.backward()
        g = x.grad
    """))
    assert "mindspore.grad" not in port.code  # x and y are one tensor: not re-derived
    assert {f.line for f in port.unsupported} >= {3, 5}, port.unsupported
