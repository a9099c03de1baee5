"""Autograd (GRD, FNC, NGR, UTL001): backward passes become mindspore.grad / vjp functions."""

from tests.fast.codemod import assert_ports


def test_backward_of_two_leaves():
    assert_ports(
        """
            import torch
            x = torch.tensor(1.5, requires_grad=True)
            y = torch.tensor(-2.0, requires_grad=True)
            z = x**3 * y + 2 * y**2
            z.backward()
            dx = x.grad
            dy = y.grad
        """,
        """
            import mindspore
            x = mindspore.Tensor(1.5)
            y = mindspore.Tensor(-2.0)
            z = x**3 * y + 2 * y**2
            def _z_fn(x, y):
                z = x**3 * y + 2 * y**2
                return z
            _x_grad, _y_grad = mindspore.grad(_z_fn, grad_position=(0, 1))(x, y)
            dx = _x_grad
            dy = _y_grad
        """,
        edits={"DAT001", "GRD001", "GRD005", "IMP001"},
    )


def test_backward_through_a_chain_with_print():
    assert_ports(
        """
            import torch
            w = torch.ones(3, requires_grad=True)
            c = torch.tensor([0.5, 1.0, 2.0])
            h = torch.sqrt(w * c)
            s = torch.log(h.sum() + 1.0)
            s.backward()
            print(w.grad)
        """,
        """
            import mindspore
            w = mindspore.ops.ones(3)
            c = mindspore.Tensor([0.5, 1.0, 2.0])
            h = mindspore.ops.sqrt(w * c)
            s = mindspore.ops.log(h.sum() + 1.0)
            def _s_fn(w):
                h = mindspore.ops.sqrt(w * c)
                s = mindspore.ops.log(h.sum() + 1.0)
                return s
            _w_grad = mindspore.grad(_s_fn, grad_position=0)(w)
            print(_w_grad)
        """,
        edits={"DAT001", "FUN009", "FUN013", "GRD001", "GRD005", "IMP001"},
    )


def test_autograd_backward_function_form():
    assert_ports(
        """
            import torch
            x = torch.tensor(1.0, requires_grad=True)
            z = x**2
            torch.autograd.backward(z)
            gx = x.grad
        """,
        """
            import mindspore
            x = mindspore.Tensor(1.0)
            z = x**2
            def _z_fn(x):
                z = x**2
                return z
            _x_grad = mindspore.grad(_z_fn, grad_position=0)(x)
            gx = _x_grad
        """,
        edits={"DAT001", "GRD001", "GRD005", "IMP001"},
    )


def test_autograd_grad_single_input_is_a_tuple():
    assert_ports(
        """
            import torch
            x = torch.tensor(1.0, requires_grad=True)
            y = torch.tensor(2.0, requires_grad=True)
            z = x**2 + y
            out = torch.autograd.grad(z, x)
        """,
        """
            import mindspore
            x = mindspore.Tensor(1.0)
            y = mindspore.Tensor(2.0)
            z = x**2 + y
            def _z_fn(x):
                z = x**2 + y
                return z
            out = (mindspore.grad(_z_fn, grad_position=0)(x),)
        """,
        edits={"DAT001", "GRD002", "IMP001"},
    )


def test_autograd_grad_several_inputs_retain_graph_dropped():
    assert_ports(
        """
            import torch
            x = torch.tensor([1.0, 2.0], requires_grad=True)
            y = torch.tensor(3.0, requires_grad=True)
            z = (torch.sigmoid(x) * y).sum()
            gx, gy = torch.autograd.grad(z, (x, y), retain_graph=True)
        """,
        """
            import mindspore
            x = mindspore.Tensor([1.0, 2.0])
            y = mindspore.Tensor(3.0)
            z = (mindspore.ops.sigmoid(x) * y).sum()
            def _z_fn(x, y):
                z = (mindspore.ops.sigmoid(x) * y).sum()
                return z
            gx, gy = mindspore.grad(_z_fn, grad_position=(0, 1))(x, y)
        """,
        edits={"DAT001", "FUN013", "GRD002", "GRD003", "IMP001"},
    )


def test_create_graph_second_derivative():
    assert_ports(
        """
            import torch
            x = torch.tensor(2.0, requires_grad=True)
            y = x**3
            g, = torch.autograd.grad(y, x, create_graph=True)
            h, = torch.autograd.grad(g, x)
        """,
        """
            import mindspore
            x = mindspore.Tensor(2.0)
            y = x**3
            def _y_fn(x):
                y = x**3
                return y
            g, = (mindspore.grad(_y_fn, grad_position=0)(x),)
            def _g_fn(x):
                y = x**3
                g, = (mindspore.grad(_y_fn, grad_position=0)(x),)
                return g
            h, = (mindspore.grad(_g_fn, grad_position=0)(x),)
        """,
        edits={"DAT001", "GRD002", "GRD003", "IMP001"},
    )


def test_backward_with_gradient_is_a_vjp():
    assert_ports(
        """
            import torch
            x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
            y = x * x
            v = torch.tensor([1.0, 0.1, 0.01])
            y.backward(gradient=v)
            gx = x.grad
        """,
        """
            import mindspore
            x = mindspore.Tensor([1.0, 2.0, 3.0])
            y = x * x
            v = mindspore.Tensor([1.0, 0.1, 0.01])
            def _y_fn(x):
                y = x * x
                return y
            (_x_grad,) = mindspore.vjp(_y_fn, x)[1](v)
            gx = _x_grad
        """,
        edits={"DAT001", "GRD004", "GRD005", "IMP001"},
    )


def test_grad_reset_to_none():
    assert_ports(
        """
            import torch
            x = torch.tensor([1.0, 2.0], requires_grad=True)
            y = (x ** 3).sum()
            y.backward()
            first = x.grad * 1.0
            x.grad = None
        """,
        """
            import mindspore
            x = mindspore.Tensor([1.0, 2.0])
            y = (x ** 3).sum()
            def _y_fn(x):
                y = (x ** 3).sum()
                return y
            _x_grad = mindspore.grad(_y_fn, grad_position=0)(x)
            first = _x_grad * 1.0
            _x_grad = None
        """,
        edits={"DAT001", "GRD001", "GRD005", "IMP001"},
    )


def test_manual_descent_step_with_zeroing():
    assert_ports(
        """
            import torch
            w = torch.tensor([0.5, -0.5], requires_grad=True)
            x = torch.tensor([1.0, 2.0])
            loss = ((w * x).sum() - 1.0) ** 2
            loss.backward()
            with torch.no_grad():
                w -= 0.1 * w.grad
            w.grad.zero_()
        """,
        """
            import mindspore
            w = mindspore.Tensor([0.5, -0.5])
            x = mindspore.Tensor([1.0, 2.0])
            loss = ((w * x).sum() - 1.0) ** 2
            def _loss_fn(w):
                loss = ((w * x).sum() - 1.0) ** 2
                return loss
            _w_grad = mindspore.grad(_loss_fn, grad_position=0)(w)
            mindspore.ops.assign(w, w - (0.1 * _w_grad))
            _w_grad = mindspore.ops.zeros_like(_w_grad)
        """,
        edits={"DAT001", "GRD001", "GRD005", "IMP001", "NGR001", "TNS004"},
    )


def test_no_grad_block_unwrapped():
    assert_ports(
        """
            import torch
            import torch.nn as nn
            model = nn.Linear(4, 3)
            with torch.no_grad():
                logits = model(x)
                pred = logits.argmax(1)
        """,
        """
            import mindspore
            import mindspore.nn as nn
            model = nn.Dense(4, 3)
            logits = model(x)
            pred = logits.argmax(1)
        """,
        edits={"IMP001", "LAY001", "NGR001"},
    )


def test_inference_mode_and_enable_grad_unwrapped():
    assert_ports(
        """
            import torch
            with torch.inference_mode():
                y = x * 2
            with torch.enable_grad():
                z = y + 1
        """,
        """
            import mindspore
            y = x * 2
            z = y + 1
        """,
        edits={"IMP001", "NGR001"},
    )


def test_no_grad_decorator_removed():
    assert_ports(
        """
            import torch
            @torch.no_grad()
            def predict(model, x):
                return model(x)
        """,
        """
            import mindspore
            def predict(model, x):
                return model(x)
        """,
        edits={"IMP001", "NGR002"},
    )


def test_set_grad_enabled_statement_removed():
    assert_ports(
        """
            import torch
            torch.set_grad_enabled(False)
            y = x * 2
            torch.set_grad_enabled(True)
        """,
        """
            import mindspore
            y = x * 2
        """,
        edits={"IMP001", "NGR003"},
    )


def test_emptied_block_keeps_pass():
    assert_ports(
        """
            import torch
            if training:
                torch.set_grad_enabled(True)
        """,
        """
            import mindspore
            if training:
                pass
        """,
        edits={"IMP001", "NGR003"},
    )


def test_custom_function_becomes_bprop_cell():
    assert_ports(
        """
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

            y = MyReLU.apply(a)
        """,
        """
            import mindspore
            class MyReLU(mindspore.nn.Cell):
                def construct(self, x):
                    return x.clamp(min=0)

                def bprop(self, x, out, grad_output):
                    return (grad_output * (x > 0).float(),)

            y = MyReLU()(a)
        """,
        edits={"FNC001", "IMP001"},
    )


def test_functional_jacobian_hessian_jvp():
    assert_ports(
        """
            import torch
            from torch.autograd.functional import jacobian, hessian, jvp
            x = torch.tensor([1.0, 2.0, 3.0])
            v = torch.tensor([1.0, 0.5, -1.0])
            J = jacobian(torch.sin, x)
            H = hessian(torch.sum, x)
            out, jv = jvp(torch.exp, x, v)
        """,
        """
            import mindspore
            x = mindspore.Tensor([1.0, 2.0, 3.0])
            v = mindspore.Tensor([1.0, 0.5, -1.0])
            J = mindspore.jacrev(mindspore.ops.sin)(x)
            H = mindspore.jacfwd(mindspore.jacrev(mindspore.ops.sum))(x)
            out, jv = mindspore.jvp(mindspore.ops.exp, x, v)
        """,
        edits={"DAT001", "FUN001", "FUN019", "IMP001", "UTL001"},
    )


def test_functional_vjp():
    assert_ports(
        """
            import torch
            from torch.autograd.functional import vjp
            x = torch.tensor([1.0, 2.0, 3.0])
            v = torch.tensor([1.0, 0.5, -1.0])
            out, vj = vjp(torch.sin, x, v)
        """,
        """
            import mindspore
            x = mindspore.Tensor([1.0, 2.0, 3.0])
            v = mindspore.Tensor([1.0, 0.5, -1.0])
            out, vj = (lambda _out, _fn: (_out, _fn(v)[0]))(*mindspore.vjp(mindspore.ops.sin, x))
        """,
        edits={"DAT001", "FUN001", "IMP001", "UTL001"},
    )


def test_a_notebook_function_reading_the_leaves_is_defined_again_inside():
    """nn tutorial: ``model`` reads ``weights`` and ``bias`` as globals; inside the
    function differentiated it is defined again so that it reads the parameters."""
    assert_ports(
        """
            import torch
            w = torch.randn(3, 2)
            w.requires_grad_()
            b = torch.zeros(2, requires_grad=True)

            def model(xb):
                return xb @ w + b

            for i in range(3):
                loss = model(X).pow(2).mean()
                loss.backward()
                with torch.no_grad():
                    w -= w.grad * 0.1
                    b -= b.grad * 0.1
                    w.grad.zero_()
                    b.grad.zero_()
        """,
        """
            import mindspore
            w = mindspore.ops.randn(3, 2)
            b = mindspore.ops.zeros(2)

            def model(xb):
                return xb @ w + b

            for i in range(3):
                loss = model(X).pow(2).mean()
                def _loss_fn(w, b):
                    def model(xb):
                        return xb @ w + b
                    loss = model(X).pow(2).mean()
                    return loss
                _w_grad, _b_grad = mindspore.grad(_loss_fn, grad_position=(0, 1))(w, b)
                mindspore.ops.assign(w, w - (_w_grad * 0.1))
                mindspore.ops.assign(b, b - (_b_grad * 0.1))
                _w_grad = mindspore.ops.zeros_like(_w_grad)
                _b_grad = mindspore.ops.zeros_like(_b_grad)
        """,
        edits={"API002", "FUN009", "FUN011", "GRD001", "GRD005", "IMP001", "NGR001", "TNS004"},
    )
