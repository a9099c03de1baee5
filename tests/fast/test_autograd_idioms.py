"""Autograd idioms (issue 10): backward of an expression, requires_grad factories and
marks as differentiated leaves, reads of requires_grad / is_leaf / grad_fn, grad-mode
blocks inside the re-derived function, and the backward calls left to other rules."""

from tests.fast.codemod import assert_ports, port


def test_backward_of_a_method_chain_on_a_variable():
    assert_ports(
        """
            import torch
            x = torch.tensor([1.0, 2.0], requires_grad=True)
            y = x * x
            y.sum().backward()
            g = x.grad
        """,
        """
            import mindspore
            x = mindspore.Tensor([1.0, 2.0])
            y = x * x
            def _y_fn(x):
                y = x * x
                return y.sum()
            _x_grad = mindspore.grad(_y_fn, grad_position=0)(x)
            g = _x_grad
        """,
        edits={"DAT001", "GRD001", "GRD005", "IMP001"},
    )


def test_backward_of_an_expression_of_leaves():
    assert_ports(
        """
            import torch
            a = torch.ones(2, requires_grad=True)
            b = torch.full((2,), 3.0, requires_grad=True)
            (a * b).mean().backward()
            ga, gb = a.grad, b.grad
        """,
        """
            import mindspore
            a = mindspore.ops.ones(2)
            b = mindspore.ops.full((2,), 3.0, dtype=mindspore.float32)
            def _backward_fn(a, b):
                return (a * b).mean()
            _a_grad, _b_grad = mindspore.grad(_backward_fn, grad_position=(0, 1))(a, b)
            ga, gb = _a_grad, _b_grad
        """,
        edits={"FUN009", "FUN010", "GRD001", "GRD005", "IMP001"},
    )


def test_backward_through_an_apply_alias_on_an_eye_leaf():
    assert_ports(
        """
            import torch
            class Twice(torch.autograd.Function):
                @staticmethod
                def forward(ctx, x):
                    return x * 2

                @staticmethod
                def backward(ctx, g):
                    return g * 2

            x = torch.eye(2, requires_grad=True)
            f = Twice.apply
            f(x).sum().backward()
            gx = x.grad
        """,
        """
            import mindspore
            class Twice(mindspore.nn.Cell):
                def construct(self, x):
                    return x * 2

                def bprop(self, x, out, g):
                    return (g * 2,)

            x = mindspore.ops.eye(2)
            f = Twice()
            def _backward_fn(x):
                return f(x).sum()
            _x_grad = mindspore.grad(_backward_fn, grad_position=0)(x)
            gx = _x_grad
        """,
        edits={"FNC001", "FUN001", "GRD001", "GRD005", "IMP001"},
    )


def test_autograd_grad_of_an_expression():
    assert_ports(
        """
            import torch
            x = torch.tensor([0.5, 1.0], requires_grad=True)
            y = torch.sin(x)
            gx, = torch.autograd.grad(y.sum(), x)
        """,
        """
            import mindspore
            x = mindspore.Tensor([0.5, 1.0])
            y = mindspore.ops.sin(x)
            def _y_fn(x):
                y = mindspore.ops.sin(x)
                return y.sum()
            gx, = (mindspore.grad(_y_fn, grad_position=0)(x),)
        """,
        edits={"DAT001", "FUN001", "GRD002", "IMP001"},
    )


def test_requires_grad_marks_make_leaves_and_are_dropped():
    assert_ports(
        """
            import torch
            a = torch.tensor([1.0, -2.0])
            x = a.detach().requires_grad_()
            w = torch.randn(2).requires_grad_(True)
            p = torch.zeros(2)
            p.requires_grad_()
            q = torch.ones(2)
            q.requires_grad = True
            y = (x * w * p * q).sum()
            y.backward()
            grads = (x.grad, w.grad, p.grad, q.grad)
        """,
        """
            import mindspore
            a = mindspore.Tensor([1.0, -2.0])
            x = mindspore.ops.stop_gradient(a)
            w = mindspore.ops.randn(2)
            p = mindspore.ops.zeros(2)
            q = mindspore.ops.ones(2)
            y = (x * w * p * q).sum()
            def _y_fn(x, w, p, q):
                y = (x * w * p * q).sum()
                return y
            _x_grad, _w_grad, _p_grad, _q_grad = mindspore.grad(_y_fn, grad_position=(0, 1, 2, 3))(x, w, p, q)
            grads = (_x_grad, _w_grad, _p_grad, _q_grad)
        """,
        edits={"DAT001", "FUN009", "FUN011", "GRD001", "GRD005", "IMP001", "PRC002"},
    )


def test_requires_grad_mark_in_a_loop_body():
    assert_ports(
        """
            import torch
            gs = []
            for i in range(2):
                x = torch.ones(2) * i
                # mark it
                x.requires_grad_()
                y = (x ** 2).sum()
                y.backward()
                gs.append(x.grad)
        """,
        """
            import mindspore
            gs = []
            for i in range(2):
                x = mindspore.ops.ones(2) * i
                # mark it
                pass
                y = (x ** 2).sum()
                def _y_fn(x):
                    y = (x ** 2).sum()
                    return y
                _x_grad = mindspore.grad(_y_fn, grad_position=0)(x)
                gs.append(_x_grad)
        """,
        edits={"FUN009", "GRD001", "GRD005", "IMP001"},
    )


def test_requires_grad_mark_at_the_top_level_waits_for_a_later_cell():
    """A later cell may call backward() and read w.grad: the mark is dropped (MindSpore
    differentiates where a gradient is asked for)."""
    assert_ports(
        """
            import torch
            w = torch.ones(3).requires_grad_()
            v = torch.zeros(2, requires_grad=True)
        """,
        """
            import mindspore
            w = mindspore.ops.ones(3)
            v = mindspore.ops.zeros(2)
        """,
        edits={"FUN009", "IMP001", "GRD001"},
        findings=set(),
    )


def test_requires_grad_mark_with_no_backward_is_left_flagged():
    assert_ports(
        """
            import torch
            def make():
                w = torch.ones(3).requires_grad_()
                return w
        """,
        """
            import mindspore
            def make():
                w = mindspore.ops.ones(3).requires_grad_()  # msmagic: TNS006 Tensor.requires_grad_ not ported
                return w
        """,
        edits={"FUN009", "IMP001"},
        findings={"TNS006"},
    )


def test_autograd_state_reads():
    assert_ports(
        """
            import torch
            import torch.nn as nn
            x = torch.linspace(0, 1, 2, requires_grad=True)
            c = torch.arange(2.0)
            model = nn.Linear(2, 1)
            y = x * c
            flags = (x.requires_grad, x.is_leaf, x.grad_fn, c.requires_grad, c.is_leaf)
            trainable = [p.requires_grad for p in model.parameters()]
            info = (y.requires_grad, y.grad_fn)
            y.sum().backward()
        """,
        """
            import mindspore
            import mindspore.nn as nn
            x = mindspore.ops.linspace(0, 1, 2)
            c = mindspore.ops.arange(2.0)
            model = nn.Dense(2, 1)
            y = x * c
            flags = (True, True, None, False, True)
            trainable = [p.requires_grad for p in model.get_parameters()]
            info = (True, '<MulBackward0 object>')  # msmagic: GRD007 Tensor.grad_fn is PyTorch's graph node; '<MulBackward0 object>' stands in
            def _y_fn(x):
                y = x * c
                return y.sum()
            _x_grad = mindspore.grad(_y_fn, grad_position=0)(x)
        """,
        edits={"CEL004", "FUN001", "GRD001", "GRD007", "IMP001", "LAY001"},
        findings={"GRD007"},
    )


def test_assigning_requires_grad_false_is_kept():
    assert_ports(
        """
            import torch.nn as nn
            model = nn.Linear(2, 1)
            model.bias.requires_grad = False
            frozen = model.bias.requires_grad
        """,
        """
            import mindspore.nn as nn
            model = nn.Dense(2, 1)
            model.bias.requires_grad = False
            frozen = model.bias.requires_grad
        """,
        edits={"IMP001", "LAY001"},
    )


def test_no_grad_values_are_constants_and_enable_grad_is_unwrapped():
    assert_ports(
        """
            import torch
            x = torch.tensor([1.0, 2.0], requires_grad=True)
            with torch.no_grad():
                c = x * 2
            with torch.enable_grad():
                y = (x * c).sum()
            y.backward()
            g = x.grad
        """,
        """
            import mindspore
            x = mindspore.Tensor([1.0, 2.0])
            c = x * 2
            y = (x * c).sum()
            def _y_fn(x):
                y = (x * c).sum()
                return y
            _x_grad = mindspore.grad(_y_fn, grad_position=0)(x)
            g = _x_grad
        """,
        edits={"DAT001", "GRD001", "GRD005", "IMP001", "NGR001"},
    )


def test_backward_inside_no_grad_with_an_enable_grad_block():
    assert_ports(
        """
            import torch
            x = torch.rand(2, requires_grad=True)
            with torch.no_grad():
                d = x * 2
                with torch.enable_grad():
                    z = (x * d).sum()
                z.backward()
            g = x.grad
        """,
        """
            import mindspore
            x = mindspore.ops.rand(2)
            d = x * 2
            z = (x * d).sum()
            def _z_fn(x):
                z = (x * d).sum()
                return z
            _x_grad = mindspore.grad(_z_fn, grad_position=0)(x)
            g = _x_grad
        """,
        edits={"FUN011", "GRD001", "GRD005", "IMP001", "NGR001"},
    )


def test_leaf_created_in_another_form_is_flagged():
    assert_ports(
        """
            import torch
            w = torch.ones(3, requires_grad=True).to("cpu")
            y = (w * 2).sum()
            y.backward()
        """,
        """
            import mindspore
            w = mindspore.ops.ones(3)  # msmagic: FUN009 requires_grad= has no MindSpore equivalent, removed
            y = (w * 2).sum()
            y.backward()  # msmagic: GRD006 y.backward() not ported
        """,
        edits={"DEV004", "FUN009", "IMP001"},
        findings={"FUN009", "GRD006"},
    )


def test_backward_over_model_parameters_is_left_to_the_training_rules():
    r = port(
        "import torch\n"
        "import torch.nn as nn\n"
        "model = nn.Linear(2, 1)\n"
        "model(torch.ones(3, 2)).sum().backward()\n"
    )
    assert not any(e.rule_id.startswith("GRD") for e in r.edits)
    assert not r.unsupported, r.unsupported
    assert "mindspore.grad(_backward_fn, None, model.trainable_params())()" in r.code  # TRN001
