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
