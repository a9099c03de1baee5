"""torch.distributions breadth (rules DST003-DST007): each written-out family, transform
and Distribution member is ported, run on both sides and compared (log_prob, cdf, icdf,
entropy, moments, shapes, same-family KL; sample shapes and dtypes, the draws being
copied across by parity), plus the sampling of MindSpore's own Categorical."""

import numpy as np
import pytest

import msmagic
from msmagic.apis import dist_cases  # noqa: F401  (registers the cases)
from msmagic.apis.cases import CASES
from msmagic.parity_check import MATCH, ONLY_MS, run_pair
from msmagic.parity_check.options import DEFAULT_ATOL as ATOL, DEFAULT_RTOL as RTOL
from tests.rules.support import src

_KEYS = sorted(k for k, cs in CASES.items() if any("torch.distributions as D" in c.code for c in cs))


def _agree(code: str):
    run = run_pair(code, rtol=RTOL, atol=ATOL)
    assert run.torch_error is None and run.ms_error is None, run.explain()
    assert not [f for f in run.port.unsupported if f.rule_id != "API006"], run.port.unsupported
    assert any(r.status == MATCH for r in run.rows), run.explain()
    bad = [r for r in run.rows if r.status not in (MATCH, ONLY_MS)]
    assert not bad, run.explain()
    return run


@pytest.mark.parametrize("key", _KEYS)
def test_dist_cases_agree(key):
    for c in CASES[key]:
        _agree(c.code)


def test_written_out_families_in_functions_and_aliases():
    run = _agree(src("""
        import torch
        from torch.distributions import Beta, Gamma, kl_divergence
        from torch.distributions.transforms import ExpTransform
        def nll(a, b, x):
            return -Beta(a, b).log_prob(x).sum()
        loss = nll(torch.tensor([2.0, 0.5]), torch.tensor([3.0, 0.5]), torch.tensor([0.3, 0.6]))
        p = Gamma(torch.tensor([2.0, 3.0]), torch.tensor([1.0, 0.5]))
        q = Gamma(torch.tensor([1.0, 1.0]), torch.tensor([2.0, 2.0]))
        kl = kl_divergence(p, q)
        y = ExpTransform()(torch.tensor([0.1, 0.2]))
        s = p.sample((5, 2))
        shape = tuple(s.shape)
    """))
    assert "torch" not in "".join(l for l in run.port.code.splitlines() if "import" in l)
    assert run.ms_ns["shape"] == (5, 2, 2)


def test_float64_parameters_keep_float64():
    run = _agree(src("""
        import torch
        import torch.distributions as D
        _d = D.Gamma(torch.tensor([2.0, 3.0], dtype=torch.float64), torch.tensor([1.0, 0.5], dtype=torch.float64))
        lp = _d.log_prob(torch.tensor([0.5, 1.5], dtype=torch.float64))
        h = _d.entropy()
        _b = D.Beta(torch.tensor([2.0], dtype=torch.float64), 3.0)
        lb = _b.log_prob(torch.tensor([0.4], dtype=torch.float64))
    """))
    assert str(run.ms_ns["lp"].dtype) == "Float64" and str(run.ms_ns["lb"].dtype) == "Float64"


def test_written_out_draws_have_pytorch_shapes_and_dtypes():
    code = msmagic.port(src("""
        import torch
        import torch.distributions as D
        g = D.Gamma(torch.ones(2, 3), 1.0).sample((4,))
        p = D.Poisson(torch.tensor([1.0, 5.0])).sample((6,))
        m = D.Multinomial(5, torch.tensor([[0.2, 0.8], [0.5, 0.5]])).sample((3,))
        d = D.Dirichlet(torch.ones(3)).sample((2,))
        b = D.Binomial(4, torch.tensor([0.5, 0.9])).sample()
        v = D.MultivariateNormal(torch.zeros(2), torch.eye(2)).sample((7,))
    """)).code
    ns = {}
    exec(code, ns)
    assert tuple(ns["g"].shape) == (4, 2, 3) and (ns["g"].asnumpy() > 0).all()
    assert tuple(ns["p"].shape) == (6, 2) and str(ns["p"].dtype) == "Float32"
    assert tuple(ns["m"].shape) == (3, 2, 2) and (ns["m"].asnumpy().sum(-1) == 5).all()
    assert tuple(ns["d"].shape) == (2, 3) and np.allclose(ns["d"].asnumpy().sum(-1), 1.0, atol=1e-5)
    assert tuple(ns["b"].shape) == (2,)
    assert tuple(ns["v"].shape) == (7, 2)


def test_categorical_draws_follow_probs():
    """Issue 20 point 4: MindSpore's own Categorical draws (not copied from PyTorch) follow
    PyTorch's probabilities for 1-D, batched, logits and unnormalised probs, with
    PyTorch's shapes (sample(), (n,), (a, b)) and dtype int64."""
    code = msmagic.port(src("""
        import torch
        from torch.distributions import Categorical
        p = torch.tensor([[0.1, 0.2, 0.7], [0.5, 0.25, 0.25]])
        s = Categorical(p).sample((20000,))
        l = Categorical(logits=torch.tensor([0.0, 1.0, 2.0])).sample((20000,))
        u = Categorical(torch.tensor([1.0, 3.0])).sample((20000,))
        one = Categorical(p).sample()
        grid = Categorical(p).sample((3, 4))
    """)).code
    ns = {}
    exec(code, ns)
    s, l, u = (ns[k].asnumpy() for k in ("s", "l", "u"))
    assert s.dtype == np.int64 and s.shape == (20000, 2)
    freq = np.stack([np.bincount(s[:, j], minlength=3) / len(s) for j in range(2)])
    assert np.abs(freq - [[0.1, 0.2, 0.7], [0.5, 0.25, 0.25]]).max() < 0.02
    soft = np.exp([0.0, 1.0, 2.0]) / np.exp([0.0, 1.0, 2.0]).sum()
    assert np.abs(np.bincount(l, minlength=3) / len(l) - soft).max() < 0.02
    assert np.abs(np.bincount(u, minlength=2) / len(u) - [0.25, 0.75]).max() < 0.02
    assert tuple(ns["one"].shape) == (2,) and tuple(ns["grid"].shape) == (3, 4, 2)


def test_icdf_of_mindspore_classes():
    _agree(src("""
        import torch
        from torch.distributions import Normal, Uniform, Exponential
        n = Normal(torch.tensor([0.0, 1.0]), torch.tensor([1.0, 2.0]))
        q = n.icdf(torch.tensor([0.1, 0.9]))
        e = Exponential(torch.tensor([0.5, 2.0]))
        qe = e.icdf(torch.tensor([0.3, 0.6]))
        qs = [Uniform(0.0, 2.0).cdf(torch.tensor([0.5]))]
    """))


def test_findings():
    def found(code, rule, text):
        r = msmagic.port(src(code))
        assert any(f.rule_id == rule and text in str(f) for f in r.unsupported), r.unsupported

    found("""
        import torch
        from torch.distributions import Normal, Gamma, kl_divergence
        p = Gamma(1.0, 1.0)
        q = Normal(0.0, 1.0)
        kl = kl_divergence(p, q)
    """, "DST005", "not written out")
    found("""
        import torch
        from torch.distributions import Beta
        d = Beta(1.0, 1.0, validate_args=True)
    """, "DST006", "validate_args")
    found("""
        import torch
        from torch.distributions import Gamma
        d = Gamma(torch.ones(2), 1.0).expand((3, 2))
    """, "DST006", "expand")
    found("""
        import torch
        from torch.distributions import Bernoulli
        b = Bernoulli(logits=torch.tensor([0.3]))
        l = b.logits
    """, "DST006", "logits")
    found("""
        import torch
        from torch.distributions.transforms import AffineTransform
        t = AffineTransform(0.0, torch.ones(3), event_dim=1)
    """, "DST007", "event_dim")


def test_gamma_drawn_rsample_is_flagged():
    r = msmagic.port(src("""
        import torch
        from torch.distributions import Beta, Laplace
        s = Beta(torch.ones(2), torch.ones(2)).rsample((3,))
        t = Laplace(torch.zeros(2), torch.ones(2)).rsample((3,))
    """))
    found = [f for f in r.unsupported if f.rule_id == "DST006"]
    assert len(found) == 1 and "Beta.rsample" in str(found[0])


def test_transforms_take_pytorchs_cache_size():
    """``SigmoidTransform(cache_size=1)``: the written-out transforms accept PyTorch's
    ``cache_size`` (caching changes no value)."""
    from msmagic.parity_check import MATCH, run_pair

    run = run_pair("""import torch
x = torch.linspace(-2, 2, 6)
a = torch.distributions.SigmoidTransform(cache_size=1)(x)
b = torch.distributions.transforms.SoftmaxTransform(cache_size=0)(x)
c = torch.distributions.ExpTransform()(x)
""")
    assert run.ms_error is None, run.explain()
    assert all(r.status == MATCH for r in run.rows if r.name in "abc"), run.explain()
