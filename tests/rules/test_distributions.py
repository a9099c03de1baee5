import msmagic
from tests.rules.support import check, flagged, src


def test_normal_family_and_moments():
    check(src("""
        import torch
        from torch.distributions import Normal
        loc, scale = torch.tensor([0.0, 1.0]), torch.tensor([1.0, 2.0])
        d = Normal(loc, scale, validate_args=False)
        lp = d.log_prob(torch.tensor([0.5, 0.3]))
        m, s, v = d.mean, d.stddev, d.variance
        h = d.entropy()
        c = d.cdf(torch.tensor([0.5, 0.3]))
    """), "lp", "m", "s", "v", "h", "c", rule="DST003")


def test_module_alias_and_logits():
    check(src("""
        import torch
        import torch.distributions as D
        b = D.Bernoulli(logits=torch.tensor([0.3, -1.0]))
        lb = b.log_prob(torch.tensor([1.0, 0.0]))
        c = D.Categorical(torch.tensor([1.0, 2.0, 1.0]))
        lc = c.log_prob(torch.tensor(2))
    """), "lb", "lc", rule="DST002")


def test_sample_shape_and_dtype():
    run = check(src("""
        import torch
        from torch.distributions import Bernoulli, Categorical
        b = Bernoulli(torch.tensor([0.2, 0.7])).sample((4,))
        c = Categorical(torch.tensor([0.2, 0.8])).sample((5,))
    """), rule="DST004")
    assert run.ms_ns["b"].shape == (4, 2) and str(run.ms_ns["c"].dtype) == "Int64"


def test_kl_divergence():
    check(src("""
        import torch
        from torch.distributions import Exponential, kl_divergence
        p = Exponential(torch.tensor([0.5, 2.0]))
        q = Exponential(torch.tensor([1.0, 1.0]))
        kl = kl_divergence(p, q)
    """), "kl", rule="DST005")


def test_findings():
    flagged(src("""
        import torch
        from torch.distributions import Normal, Uniform, kl_divergence
        p = Normal(0.0, 1.0)
        q = Uniform(0.0, 1.0)
        kl = kl_divergence(p, q)
    """), "DST005", "no MindSpore KL")
    flagged(src("""
        import torch
        from torch.distributions import Normal
        d = Normal(0.0, 1.0, validate_args=True)
    """), "DST001", "validate_args")
    flagged(src("""
        import torch
        from torch.distributions import Categorical
        m = Categorical(torch.tensor([0.5, 0.5])).mean
    """), "DST002", "NaN in PyTorch")
    flagged(src("""
        import torch
        from torch.distributions import Bernoulli
        d = Bernoulli(torch.tensor([0.5]))
        y = d.icdf(torch.tensor([0.5]))
    """), "DST003", "no MindSpore icdf")


def test_icdf_of_a_named_normal_is_pytorchs_formula():
    check(src("""
        import torch
        from torch.distributions import Normal
        d = Normal(0.0, 1.0)
        y = d.icdf(torch.tensor([0.1, 0.5, 0.9]))
    """), "y", rule="DST003")


def test_idempotent():
    code = msmagic.port(src("""
        import torch
        from torch.distributions import Normal
        d = Normal(0.0, 1.0)
        m = d.mean
    """)).code
    assert "d.mean()" in code and msmagic.port(code).code == code
