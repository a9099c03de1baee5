"""Tensor methods rewritten by msmagic/rules/tensor_more.py (TNS010-TNS016): ported cells
run on both sides and agree."""

from tests.rules.support import check, src


def test_rewrites_inside_a_function_agree():
    check(src("""
        import torch
        def stats(x, idx):
            filled = x.index_fill(1, idx, -1.0)
            med = x.nanmedian()
            vals, pos = x.nanmedian(dim=1)
            shaped = x.unflatten(1, (2, 2))
            dg = x.abs().polygamma(1)
            return filled, med, vals, pos, shaped, dg
        x = torch.tensor([[1.0, float('nan'), 3.0, 2.0], [4.0, 0.5, -2.0, 8.0]])
        filled, med, vals, pos, shaped, dg = stats(x, torch.tensor([0, 3]))
        d = x[1].vdot(x[1])
        same = x.is_same_size(shaped.flatten(1))
        nz = x[0, :1].is_nonzero()
        r = x.resolve_conj()
    """), "filled", "med", "vals", "pos", "shaped", "dg", "d", "same", "nz", "r", rule="TNS012")


def test_in_place_forms_rebind():
    check(src("""
        import torch
        x = torch.tensor([[0.5, 1.5, 2.0], [3.25, 4.0, 7.5]])
        x.polygamma_(0)
        x.index_fill_(0, torch.tensor([1]), 2.0)
        y = x + 1
    """), "x", "y", rule="TNS011")


def test_random_fills_draw_in_range_with_the_receivers_dtype():
    from tests.rules.support import run_pair

    run = run_pair(src("""
        import torch
        g = torch.zeros(400, dtype=torch.float64)
        g.geometric_(0.5)
        trials = bool((g >= 1).all() and (g == g.floor()).all())
        mean_ok = bool(abs(g.mean().item() - 2.0) < 0.5)
        ln = torch.zeros(400)
        ln.log_normal_(0.0, 0.25)
        positive = bool((ln > 0).all())
        c = torch.zeros(400)
        c.cauchy_()
        median_ok = bool(abs(c.median().item()) < 0.3)
        p = torch.tensor([0.0, 1.0, 1.0, 0.0])
        coin = p.bernoulli()
    """))
    assert run.torch_error is None and run.ms_error is None, run.explain()
    for name in ("trials", "mean_ok", "positive", "median_ok"):
        assert run.ms_ns[name] is True, name
    assert str(run.ms_ns["g"].dtype) == "Float64" and str(run.ms_ns["ln"].dtype) == "Float32"
    assert run.ms_ns["coin"].asnumpy().tolist() == [0.0, 1.0, 1.0, 0.0]
