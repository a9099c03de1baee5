"""Distribution families written out as classes (DST006/DST007): the port's text."""

from tests.fast.codemod import dedent, edit_ids, finding_ids, port


def test_family_is_written_out_once_before_its_first_use():
    r = port(dedent("""
        import torch
        import torch.distributions as D
        a = D.Beta(torch.tensor([2.0]), torch.tensor([3.0]))
        b = D.Beta(1.0, 2.0)
        m = a.mean
        s = a.sample((3,))
    """))
    code = r.code
    assert code.count("class Beta(Distribution):") == 1 and code.count("class Distribution:") == 1
    assert code.index("class Beta") < code.index("a = Beta(")
    assert "m = a.mean\n" in code and "s = a.sample((3,))" in code
    assert "import torch" not in code and "DST006" in edit_ids(r)
    assert port(code).code == code


def test_transforms_and_transformed_distribution():
    r = port(dedent("""
        import torch
        from torch.distributions import Normal, TransformedDistribution
        from torch.distributions.transforms import ExpTransform, AffineTransform
        d = TransformedDistribution(Normal(0.0, 1.0), [ExpTransform(), AffineTransform(1.0, 2.0)])
        lp = d.log_prob(x)
    """))
    code = r.code
    for cls in ("class Transform:", "class ExpTransform(Transform):", "class AffineTransform(Transform):",
                "class TransformedDistribution(Distribution):"):
        assert cls in code
    assert "from mindspore.nn.probability.distribution import Normal" in code
    assert {"DST007"} <= set(edit_ids(r)) and not finding_ids(r)


def test_normal_icdf_by_formula_and_kl_method():
    r = port(dedent("""
        import torch
        from torch.distributions import Normal, Laplace, kl_divergence
        n = Normal(loc, scale)
        q = n.icdf(p)
        a, b = Laplace(0.0, 1.0), Laplace(1.0, 2.0)
        kl = kl_divergence(a, b)
    """))
    assert "q = n.mean() + n.sd() * mindspore.ops.erfinv(2 * p - 1) * 2 ** 0.5" in r.code
    assert "kl = a.kl_divergence(b)" in r.code
    assert not finding_ids(r)


def test_categorical_batch_shape_and_event_shape():
    r = port(dedent("""
        import torch
        from torch.distributions import Categorical
        c = Categorical(p)
        bs, es = c.batch_shape, c.event_shape
    """))
    assert "bs, es = c.probs.shape[:-1], ()" in r.code
