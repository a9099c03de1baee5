"""Table fixes (TBL001-TBL003): flagged table entries ported with the logic they need."""

import msmagic
from tests.rules.support import check, src


def test_std_var_default_to_pytorchs_correction():
    run = check(src("""
        import torch
        x = torch.linspace(-1, 2, 24).reshape(2, 3, 4)
        s = x.std()
        v = x.var(1)
        s1 = torch.std(x, dim=1, unbiased=True, keepdim=True)
        v0 = torch.var(x, dim=(0, 2), unbiased=False)
        c = x.std(dim=2, correction=0)
        legacy = x.var(False)
        legacy2 = torch.std(x, True)
        sd, mean = torch.std_mean(x, 0)
        vm = torch.var_mean(x, dim=2, keepdim=True)
        pos = x.std(1, False, True)
    """), "s", "v", "s1", "v0", "c", "legacy", "legacy2", "sd", "mean", "vm", "pos", rule="TBL001")
    assert "x.std(ddof=1)" in run.port.code
    assert "x.var(ddof=0)" in run.port.code
    assert "mindspore.ops.std(x, ddof=1)" in run.port.code
    assert not run.port.unsupported


def test_inplace_comparisons_keep_the_receivers_dtype():
    run = check(src("""
        import torch
        x = torch.tensor([[1.0, -2.0, 3.0], [0.0, 5.0, -1.0]])
        y = torch.tensor([1.0, 5.0, -1.0])
        i = torch.tensor([3, 0, 2, -1])
        b = torch.tensor([True, False, True])
        x.gt_(0)
        x.logical_and_(y)
        i.ne_(0)
        i.logical_not_()
        b.logical_xor_(torch.tensor([True, True, False]))
        z = torch.tensor([0.5, 1.5])
        w = z.le_(1.0) * 2
    """), "x", "i", "b", "z", "w", rule="TBL002")
    assert "x = x.gt(0).astype(x.dtype)" in run.port.code
    assert "(z := z.le(1.0).astype(z.dtype)) * 2" in run.port.code
    for name in ("x", "i", "b", "z"):
        assert str(run.ms_ns[name].dtype).lower() == str(run.torch_ns[name].dtype).split(".")[-1], name


def test_inplace_comparison_on_an_attribute_is_flagged():
    r = msmagic.port(src("""
        import torch
        class Box:
            pass
        box = Box()
        box.t = torch.ones(3)
        box.t.eq_(1)
    """))
    assert "box.t.eq_(1)" in r.code
    assert r.unsupported  # left as written, with a finding


def test_bincount_counts_are_int64():
    run = check(src("""
        import torch
        labels = torch.tensor([0, 2, 2, 5, 1, 2])
        counts = torch.bincount(labels)
        padded = labels.bincount(minlength=8)
        plain = labels.bincount(None, 3)
    """), "counts", "padded", "plain", rule="TBL003")
    assert str(run.ms_ns["counts"].dtype) == "Int64"


def test_bincount_with_weights_is_flagged():
    r = msmagic.port(src("""
        import torch
        labels = torch.tensor([0, 2, 2])
        w = torch.tensor([0.5, 1.0, 2.0])
        s = torch.bincount(labels, weights=w)
    """))
    assert "TBL003" in {f.rule_id for f in r.unsupported}
    assert "torch.bincount(labels, weights=w)" in r.code


def test_var_and_std_run_on_cpu_under_gradients_and_in_float64():
    # MindSpore 2.10 (CPU) computes var/std, also when differentiated (normalising with
    # batch statistics in a loss) and in float64: no missing kernel surfaces later
    run = check(src("""
        import torch
        x = torch.linspace(-1, 2, 24).reshape(4, 6).requires_grad_(True)
        w = torch.ones(6, requires_grad=True)
        z = ((x * w) - (x * w).mean(dim=0)) / (x * w).std(dim=0)
        loss = (z ** 2).sum() + (x * w).var(dim=1).sum()
        loss.backward()
        gw = w.grad
        d = x.double().var(1, keepdim=True)
    """), "z", "loss", "gw", "d")
    assert "var(axis=1, ddof=1)" in run.port.code


def test_var_with_torch_keywords_on_an_untyped_receiver():
    """A hand-written BatchNorm (a plain class, makemore's) gets ``x`` from a loop over
    layers: the port cannot type it, but ``keepdim=`` is PyTorch's spelling, so the call
    is ported (left as written, MindSpore fails lazily: no CPU Var kernel). Without such a
    keyword the call stays flagged."""
    run = check(src("""
        import torch
        class BatchNorm1d:
            def __init__(self, dim, eps=1e-5):
                self.eps = eps
                self.gamma = torch.ones(dim)
                self.beta = torch.zeros(dim)
            def __call__(self, x):
                xmean = x.mean(0, keepdim=True)
                xvar = x.var(0, keepdim=True)
                self.out = self.gamma * (x - xmean) / torch.sqrt(xvar + self.eps) + self.beta
                return self.out
        class Scale:
            def __call__(self, x):
                return x * 2
        layers = [Scale(), BatchNorm1d(4)]
        x = torch.linspace(-1, 2, 24).reshape(6, 4) ** 2
        for layer in layers:
            x = layer(x)
        spread = x.std(dim=1, unbiased=False)
    """), "x", "spread", rule="TBL001")
    assert "x.var(0, keepdims=True, ddof=1)" in run.port.code
    r = msmagic.port(src("""
        def stat(v):
            return v.var(0)
    """).replace("def", "import torch\ndef", 1))
    assert [f.rule_id for f in r.unsupported] == ["GEN002"]
