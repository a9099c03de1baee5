"""Custom autograd Function -> Cell with construct/bprop (FNC001/FNC002): forward values
and the gradients (PyTorch backward vs mindspore.grad through bprop) must agree."""

import libcst as cst

import msmagic
from tests.rules.support import rules, run_pair, src

TOL = dict(rtol=1e-5, atol=1e-6)


def _check(run, *names):
    assert run.torch_error is None and run.ms_error is None, run.explain()
    assert run.agree(*names), run.explain()
    assert not run.port.unsupported, run.port.unsupported
    assert msmagic.port(run.port.code).code == run.port.code


def test_custom_relu_forward_and_gradient():
    run = run_pair(src("""
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
        out = MyReLU.apply(a)
        y = (out * torch.tensor([1.0, 2.0, 3.0])).sum()
        y.backward()
        ga = a.grad
    """), **TOL)
    code = run.port.code
    assert "class MyReLU(mindspore.nn.Cell):\n    def construct(self, x):\n        return x.clamp(min=0)\n" in code
    assert ("    def bprop(self, x, out, grad_output):\n"
            "        return (grad_output * (x > 0).float(),)\n") in code
    assert "out = MyReLU()(a)\n" in code
    assert {"FNC001", "GRD001"} <= rules(run)
    _check(run, "out", "y", "ga")


def test_straight_through_estimator_and_apply_alias():
    run = run_pair(src("""
        import torch
        class RoundSTE(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return torch.clamp(x, -1.0, 1.0)

            @staticmethod
            def backward(ctx, g):
                return g

        ste = RoundSTE.apply
        w = torch.tensor([0.3, 1.6, -2.4], requires_grad=True)
        q = ste(w * 1.5)
        loss = (q * w).sum()
        loss.backward()
        gw = w.grad
    """), **TOL)
    code = run.port.code
    assert "ste = RoundSTE()\n" in code and "        return (g,)\n" in code
    _check(run, "q", "loss", "gw")


def test_backward_of_an_expression_after_apply_and_through_an_alias():
    run = run_pair(src("""
        import torch
        class MyExp(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                out = x.exp()
                ctx.save_for_backward(out)
                return out

            @staticmethod
            def backward(ctx, g):
                out, = ctx.saved_tensors
                return g * out * 0.5

        x = torch.tensor([0.5, 1.0, -1.0], requires_grad=True)
        f = MyExp.apply
        f(x).sum().backward()
        g1 = x.grad
        x.grad = None
        MyExp.apply(x * 2).mean().backward()
        g2 = x.grad
        x.grad = None
        y = MyExp.apply(x)
        (y * y).sum().backward()
        g3 = x.grad
    """), **TOL)
    code = run.port.code
    assert "f = MyExp()\ndef _backward_fn(x):\n    return f(x).sum()\n" in code
    assert "def _backward_fn2(x):\n    return MyExp()(x * 2).mean()\n" in code
    assert "def _backward_fn3(x):\n    y = MyExp()(x)\n    return (y * y).sum()\n" in code
    # the custom (halved) gradient is the one MindSpore uses, as PyTorch does
    _check(run, "g1", "g2", "g3")


def test_clamp_with_custom_gradient_two_inputs_none_and_saved_output():
    run = run_pair(src("""
        import torch
        class ScaledClamp(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, s):
                mask = (x > -1.0) & (x < 1.0)
                y = torch.clamp(x, -1.0, 1.0) * s
                ctx.save_for_backward(mask, y, s)
                return y

            @staticmethod
            def backward(ctx, grad):
                mask, y, s = ctx.saved_tensors
                return grad * mask.float() * s + 0.01 * y, None

        x = torch.tensor([-3.0, -0.5, 0.25, 2.0], requires_grad=True)
        s = torch.tensor([2.0, 2.0, 2.0, 2.0])
        z = ScaledClamp.apply(x, s).sum()
        z.backward()
        gx = x.grad
    """), **TOL)
    code = run.port.code
    # mask is recomputed from the forward statements; y is the output; s an input
    assert "    def bprop(self, x, s, out, grad):\n        mask = (x > -1.0) & (x < 1.0)\n" in code
    assert "mask, y, s = (mask, out, s)\n" in code
    assert "return (grad * mask.float() * s + 0.01 * y, mindspore.ops.zeros_like(s))" in code
    assert "save_for_backward" not in code
    _check(run, "z", "gx")


def test_several_grad_outputs_unpack_dout():
    run = run_pair(src("""
        import torch
        class Split(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2, x * 3

            @staticmethod
            def backward(ctx, ga, gb):
                return ga * 2 + gb * 3

        x = torch.tensor([1.0, -2.0], requires_grad=True)
        a, b = Split.apply(x)
        z = (a * b).sum()
        z.backward()
        gx = x.grad
    """), **TOL)
    assert "    def bprop(self, x, out, dout):\n        ga, gb = dout\n" in run.port.code
    _check(run, "a", "b", "gx")


def _flagged(text, reason):
    port = msmagic.port(src(text))
    assert "FNC002" in {f.rule_id for f in port.unsupported}, port.code
    f = next(f for f in port.unsupported if f.rule_id == "FNC002")
    assert reason in f.reason and f.line == 2
    assert "(torch.autograd.Function):  # msmagic: FNC002 custom Function not ported" in port.code
    assert "FNC001" not in {e.rule_id for e in port.edits}
    cst.parse_module(port.code)


def test_unsupported_ctx_uses_are_flagged():
    _flagged("""
        import torch
        class Scale(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, k):
                ctx.k = k
                return x * k

            @staticmethod
            def backward(ctx, g):
                return g * ctx.k, None
    """, "ctx.k")
    _flagged("""
        import torch
        class Sel(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                return x + y

            @staticmethod
            def backward(ctx, g):
                gx = g if ctx.needs_input_grad[0] else None
                return gx, g
    """, "ctx.needs_input_grad")
    _flagged("""
        import torch
        class Inplace(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.mark_dirty(x)
                return x.mul_(2)

            @staticmethod
            def backward(ctx, g):
                return g * 2
    """, "ctx.mark_dirty")


def test_wrong_gradient_count_and_default_arguments_are_flagged():
    _flagged("""
        import torch
        class Two(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                return x * y

            @staticmethod
            def backward(ctx, g):
                return g
    """, "returns 1 gradient(s) for 2 forward input(s)")
    _flagged("""
        import torch
        class Pow(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, p=2.0):
                return x ** p

            @staticmethod
            def backward(ctx, g):
                return g, None
    """, "plain positional parameters")


def test_apply_in_a_later_cell_and_in_a_function(parity_shell):
    """jcjohnson's custom_function: the Function is defined in one cell; a later cell calls
    MyReLU.apply in a training loop, another passes it around from a function."""
    define = src("""
        import torch
        class MyReLU(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x.clamp(min=0)

            @staticmethod
            def backward(ctx, grad_output):
                x, = ctx.saved_tensors
                grad_x = grad_output.clone()
                grad_x[x < 0] = 0
                return grad_x
    """)
    train = src("""
        torch.manual_seed(0)
        x, y = torch.randn(8, 5), torch.randn(8, 2)
        w1 = torch.randn(5, 4, requires_grad=True)
        w2 = torch.randn(4, 2, requires_grad=True)
        for t in range(3):
            y_pred = MyReLU.apply(x.mm(w1)).mm(w2)
            loss = (y_pred - y).pow(2).sum()
            loss.backward()
            with torch.no_grad():
                w1 -= 1e-3 * w1.grad
                w2 -= 1e-3 * w2.grad
                w1.grad.zero_()
                w2.grad.zero_()
    """)
    use = src("""
        def hidden(inputs, weights):
            relu = MyReLU.apply
            return relu(inputs @ weights)
        h = hidden(x, w1)
    """)
    from IPython.utils.capture import capture_output

    reports = []
    for i, cell in enumerate([define, train, use]):
        with capture_output():
            parity_shell.run_cell_magic("ms_parity", f"-o report_{i}", cell)
        reports.append(parity_shell.user_ns[f"report_{i}"])
    assert reports[0].verdict[0] == "empty" and reports[1].ok and reports[2].ok, [r.summary() for r in reports]
    assert "MyReLU()(x.mm(w1))" in reports[1].port.code and "relu = MyReLU()" in reports[2].port.code
    assert reports[1].row("loss").status == "match" and reports[1].row("w1").status == "match"
    assert reports[2].row("h").status == "match"
