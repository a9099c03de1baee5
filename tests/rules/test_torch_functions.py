"""torch functions (TFN001-TFN004), run on both sides."""

from tests.rules.support import check, flagged, src


def test_inplace_function_forms():
    check(src("""
        import torch
        x = torch.linspace(-2, 2, 9)
        torch.abs_(x)
        torch.sqrt_(x)
        torch.exp_(x)
        y = torch.linspace(-3, 3, 7)
        z = torch.clamp_(y, min=-1, max=1) * 2
        torch.sigmoid_(y)
        w = torch.linspace(-1, 1, 5)
        torch.zero_(w)
    """), "x", "y", "z", "w", rule="TFN001")


def test_inplace_function_form_inside_a_function():
    run = check(src("""
        import torch
        def act(h):
            torch.relu_(h)
            return h * 2
        out = act(torch.linspace(-1, 1, 6))
    """), "out", rule="TFN001")
    assert "TFN001" in {f.rule_id for f in run.port.unsupported}


def test_foreach():
    check(src("""
        import torch
        xs = [torch.tensor([0.15, 0.45, 0.85]), torch.linspace(0.2, 0.8, 4).reshape(2, 2)]
        ys = torch._foreach_exp(xs)
        a, b = torch._foreach_log(xs)
        zs = [x * 2 for x in xs]
        torch._foreach_sqrt_(zs)
        torch._foreach_neg_(zs)
        first, second = zs
    """), "ys", "a", "b", "first", "second", rule="TFN002")


def test_foreach_on_shared_tensors_is_flagged():
    flagged(src("""
        import torch
        def step(params):
            torch._foreach_zero_(params)
    """), "TFN002", "only the list params is updated")
    # an element read before the update is the same tensor in PyTorch, not in MindSpore
    flagged(src("""
        import torch
        xs = [torch.ones(2), torch.ones(3)]
        first = xs[0]
        torch._foreach_zero_(xs)
    """), "TFN002", "only the list xs is updated")


def test_function_forms():
    check(src("""
        import torch
        import torch.nn.functional as F
        x = torch.arange(6.0).reshape(2, 3)
        a = torch.clone(x)
        b = torch.select(x, 1, 2)
        t = torch.take(x, torch.tensor([0, 4]))
        c = torch.bitwise_not(torch.tensor([True, False]))
        d = torch.bitwise_not(torch.tensor([3, -1]))
        gx, gy = torch.meshgrid(torch.arange(3.0), torch.arange(2.0))
        hx, hy = torch.meshgrid([torch.arange(3.0), torch.arange(2.0)], indexing="xy")
        e = torch.chain_matmul(x, x.T, x)
        f = torch.vdot(torch.tensor([1.0, 2.0]), torch.tensor([3.0, -1.0]))
        g = torch.unflatten(x, -1, (3, 1))
        h = torch.range(0, 1, 0.1)
        p = torch.cartesian_prod(torch.tensor([1, 2]))
        q = torch.cartesian_prod(torch.tensor([1, 2]), torch.tensor([3, 4, 5]))
        z = torch.view_as_real(torch.complex(x[0], x[1]))
    """), "a", "b", "t", "c", "d", "gx", "gy", "hx", "hy", "e", "f", "g", "h", "p", "q", "z", rule="TFN003")


def test_function_forms_on_parameters():
    check(src("""
        import torch
        def features(x, sizes):
            y = torch.unflatten(torch.clone(x), 1, sizes)
            return torch.select(y, 1, 0)
        out = features(torch.arange(12.0).reshape(2, 6), (2, 3))
    """), "out", rule="TFN003")


def test_shapes_and_dtype_facts():
    check(src("""
        import torch
        x = torch.ones(2, 1, 3)
        s = torch.Size([2, 3])
        same = x.shape[1:] == torch.Size([1, 3])
        is_size = isinstance(x.shape, torch.Size)
        b = torch.broadcast_shapes((2, 1), (1, 3))
        p, q = torch.broadcast_tensors(torch.ones(2, 1), torch.arange(3.0))
        eps = torch.finfo(torch.float32).eps
        tiny = torch.finfo(x.dtype).tiny
        default_eps = torch.finfo().eps
        big = torch.iinfo(torch.int64).max
    """), "s", "same", "is_size", "b", "p", "q", "eps", "tiny", "default_eps", "big", rule="TFN004")


def test_aten_losses():
    check(src("""
        import torch
        a = torch.tensor([1.0, 2.0, -1.0, 0.25])
        b = torch.tensor([0.5, 3.0, 1.0, -2.0])
        t = torch.tensor([1.0, 1.0, -1.0, -1.0])
        each = torch.margin_ranking_loss(a, b, t)
        mean = torch.margin_ranking_loss(a, b, t, 0.1, 1)
        x = torch.tensor([[1.0, 2.0, 0.5], [0.5, -1.0, 2.0]])
        y = torch.tensor([[0.5, 1.0, -1.0], [2.0, 0.0, 1.0]])
        cos = torch.cosine_embedding_loss(x, y, torch.tensor([1.0, -1.0]), margin=0.2, reduction=2)
        hinge = torch.hinge_embedding_loss(x, torch.ones(2, 3))
    """), "each", "mean", "cos", "hinge", rule="TFN005")
