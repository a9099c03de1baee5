"""Verification cases for the written-out distribution families and transforms (rules
DST006/DST007): each family's log_prob, cdf/icdf (where PyTorch has them), entropy,
mean/mode/variance/stddev, batch/event shapes, sample shapes and dtypes (the draws are
copied across by parity: ``sample``/``rsample`` are random), and same-family KL.
Distribution objects are bound to names starting with ``_``."""

from __future__ import annotations

from msmagic.apis.cases import case, flagged

_H = """
    import torch
    import torch.distributions as D
    from torch.distributions import kl_divergence
"""

case("torch.distributions.Laplace", _H + """
    _d = D.Laplace(torch.tensor([0.0, 1.0, -2.0]), torch.tensor([1.0, 2.0, 0.5]))
    x = torch.tensor([0.5, -1.0, -2.5])
    lp, c, h = _d.log_prob(x), _d.cdf(x), _d.entropy()
    q = _d.icdf(torch.tensor([0.1, 0.5, 0.9]))
    m, mo, v, s = _d.mean, _d.mode, _d.variance, _d.stddev
    bs, es = tuple(_d.batch_shape), tuple(_d.event_shape)
    kl = kl_divergence(_d, D.Laplace(torch.tensor([0.5, 0.0, 0.0]), torch.tensor([1.5, 1.0, 1.0])))
    r = _d.rsample((4,))
    rs = tuple(r.shape)
    lq = D.Laplace(loc=0.0, scale=2.0).log_prob(x)
""")
case("torch.distributions.Cauchy", _H + """
    _d = D.Cauchy(torch.tensor([0.0, 1.0]), torch.tensor([1.0, 2.0]))
    x = torch.tensor([0.5, -1.0])
    lp, c, h = _d.log_prob(x), _d.cdf(x), _d.entropy()
    q = _d.icdf(torch.tensor([0.2, 0.7]))
    mo = _d.mode
    kl = kl_divergence(_d, D.Cauchy(torch.tensor([0.5, 0.0]), torch.tensor([1.5, 1.0])))
    s = _d.sample((3, 2))
    ss = tuple(s.shape)
""")
case("torch.distributions.Gumbel", _H + """
    _d = D.Gumbel(torch.tensor([0.0, 1.0]), torch.tensor([1.0, 2.0]))
    x = torch.tensor([0.5, -1.0])
    lp, c, h = _d.log_prob(x), _d.cdf(x), _d.entropy()
    q = _d.icdf(torch.tensor([0.2, 0.7]))
    m, mo, v, sd = _d.mean, _d.mode, _d.variance, _d.stddev
    kl = kl_divergence(_d, D.Gumbel(torch.tensor([0.5, 0.0]), torch.tensor([1.5, 1.0])))
    s = _d.sample((3,))
    ss = tuple(s.shape)
""")
case("torch.distributions.LogNormal", _H + """
    _d = D.LogNormal(torch.tensor([0.0, 1.0]), torch.tensor([0.5, 0.25]))
    x = torch.tensor([0.5, 3.0])
    lp, c, h = _d.log_prob(x), _d.cdf(x), _d.entropy()
    q = _d.icdf(torch.tensor([0.2, 0.7]))
    m, mo, v, sd = _d.mean, _d.mode, _d.variance, _d.stddev
    kl = kl_divergence(_d, D.LogNormal(torch.tensor([0.5, 0.0]), torch.tensor([1.5, 1.0])))
    s = _d.rsample((5,))
    ss = tuple(s.shape)
""")
case("torch.distributions.Gamma", _H + """
    _d = D.Gamma(torch.tensor([2.0, 0.5, 3.0]), torch.tensor([1.0, 2.0, 0.5]))
    x = torch.tensor([0.5, 1.5, 4.0])
    lp, c, h = _d.log_prob(x), _d.cdf(x), _d.entropy()
    m, mo, v, sd = _d.mean, _d.mode, _d.variance, _d.stddev
    kl = kl_divergence(_d, D.Gamma(torch.tensor([1.0, 1.0, 2.0]), torch.tensor([2.0, 1.0, 1.0])))
    s = _d.sample((4,))
    ss = tuple(s.shape)
    lk = D.Gamma(concentration=2.0, rate=torch.tensor([1.0, 3.0])).log_prob(torch.tensor([0.5, 0.2]))
""")
case("torch.distributions.Chi2", _H + """
    _d = D.Chi2(torch.tensor([1.0, 3.0, 5.0]))
    x = torch.tensor([0.5, 1.5, 4.0])
    lp, c, h = _d.log_prob(x), _d.cdf(x), _d.entropy()
    m, v, df = _d.mean, _d.variance, _d.df
    kl = kl_divergence(_d, D.Chi2(torch.tensor([2.0, 2.0, 2.0])))
    s = _d.sample((2,))
    ss = tuple(s.shape)
""")
case("torch.distributions.Beta", _H + """
    _d = D.Beta(torch.tensor([2.0, 0.5, 5.0]), torch.tensor([3.0, 0.5, 1.0]))
    x = torch.tensor([0.25, 0.5, 0.9])
    lp, h = _d.log_prob(x), _d.entropy()
    m, v, sd = _d.mean, _d.variance, _d.stddev
    mo = D.Beta(torch.tensor([2.0, 3.0]), torch.tensor([3.0, 2.0])).mode
    c1, c0 = _d.concentration1, _d.concentration0
    kl = kl_divergence(_d, D.Beta(torch.tensor([1.0, 2.0, 2.0]), torch.tensor([1.0, 2.0, 3.0])))
    s = _d.sample((4,))
    ss = tuple(s.shape)
    lk = D.Beta(concentration1=2.0, concentration0=3.0).log_prob(x)
""")
case("torch.distributions.StudentT", _H + """
    _d = D.StudentT(torch.tensor([3.0, 1.5, 10.0]), torch.tensor([0.0, 1.0, -1.0]), torch.tensor([1.0, 2.0, 0.5]))
    x = torch.tensor([0.5, -1.0, 2.0])
    lp, h = _d.log_prob(x), _d.entropy()
    m, mo, v = _d.mean, _d.mode, _d.variance
    l1 = D.StudentT(4.0).log_prob(x)
    s = _d.sample((3,))
    ss = tuple(s.shape)
""")
case("torch.distributions.Poisson", _H + """
    _d = D.Poisson(torch.tensor([0.5, 2.0, 10.0]))
    x = torch.tensor([0.0, 3.0, 8.0])
    lp = _d.log_prob(x)
    m, mo, v = _d.mean, _d.mode, _d.variance
    kl = kl_divergence(_d, D.Poisson(torch.tensor([1.0, 1.0, 12.0])))
    s = _d.sample((4,))
    ss, sdt = tuple(s.shape), str(s.dtype).split(".")[-1].lower()
""")
case("torch.distributions.Geometric", _H + """
    _d = D.Geometric(torch.tensor([0.2, 0.5, 0.9]))
    x = torch.tensor([0.0, 3.0, 1.0])
    lp, h = _d.log_prob(x), _d.entropy()
    m, mo, v = _d.mean, _d.mode, _d.variance
    lg = _d.logits
    l2 = D.Geometric(logits=torch.tensor([0.0, -1.0, 2.0])).log_prob(x)
    kl = kl_divergence(_d, D.Geometric(torch.tensor([0.3, 0.3, 0.3])))
    s = _d.sample((4,))
    ss = tuple(s.shape)
""")
case("torch.distributions.Binomial", _H + """
    _d = D.Binomial(10, torch.tensor([0.2, 0.5, 0.9]))
    x = torch.tensor([0.0, 3.0, 9.0])
    lp, h = _d.log_prob(x), _d.entropy()
    m, mo, v = _d.mean, _d.mode, _d.variance
    l2 = D.Binomial(total_count=torch.tensor([5.0, 8.0]), logits=torch.tensor([0.3, -1.0])).log_prob(torch.tensor([2.0, 1.0]))
    es = _d.enumerate_support()
    s = _d.sample((4,))
    ss = tuple(s.shape)
""")
case("torch.distributions.Multinomial", _H + """
    _d = D.Multinomial(6, torch.tensor([[0.2, 0.3, 0.5], [1.0, 1.0, 2.0]]))
    x = torch.tensor([[1.0, 2.0, 3.0], [0.0, 0.0, 6.0]])
    lp = _d.log_prob(x)
    m, v, p = _d.mean, _d.variance, _d.probs
    bs, es = tuple(_d.batch_shape), tuple(_d.event_shape)
    l2 = D.Multinomial(4, logits=torch.tensor([0.0, 1.0, -1.0])).log_prob(torch.tensor([1.0, 3.0, 0.0]))
    s = _d.sample((5,))
    ss, total = tuple(s.shape), s.sum(-1)
""")
case("torch.distributions.Dirichlet", _H + """
    _d = D.Dirichlet(torch.tensor([[1.0, 2.0, 3.0], [0.5, 4.0, 1.5]]))
    x = torch.tensor([[0.2, 0.3, 0.5], [0.1, 0.6, 0.3]])
    lp, h = _d.log_prob(x), _d.entropy()
    m, v, mo = _d.mean, _d.variance, _d.mode
    bs, es = tuple(_d.batch_shape), tuple(_d.event_shape)
    kl = kl_divergence(_d, D.Dirichlet(torch.tensor([[1.0, 1.0, 1.0], [2.0, 2.0, 2.0]])))
    s = _d.sample((3,))
    ss, total = tuple(s.shape), s.sum(-1)
""")
case("torch.distributions.MultivariateNormal", _H + """
    loc = torch.tensor([0.0, 1.0, -1.0])
    cov = torch.tensor([[2.0, 0.5, 0.1], [0.5, 1.0, 0.2], [0.1, 0.2, 0.5]])
    _d = D.MultivariateNormal(loc, covariance_matrix=cov)
    x = torch.tensor([[0.5, 0.5, 0.5], [1.0, -1.0, 0.0]])
    lp, h = _d.log_prob(x), _d.entropy()
    m, v = _d.mean, _d.variance
    L, P, C = _d.scale_tril, _d.precision_matrix, _d.covariance_matrix
    bs, es = tuple(_d.batch_shape), tuple(_d.event_shape)
    _e = D.MultivariateNormal(torch.zeros(2, 3), scale_tril=torch.tensor([[1.4142135, 0.0, 0.0], [0.35355338, 0.93541434, 0.0], [0.07071068, 0.18708284, 0.67823303]]))
    le = _e.log_prob(x)
    _f = D.MultivariateNormal(loc, precision_matrix=torch.tensor([[0.5714286, -0.2857143, 0.0], [-0.2857143, 1.2298138, -0.4347826], [0.0, -0.4347826, 2.173913]]))
    lf = _f.log_prob(x)
    kl = kl_divergence(_d, D.MultivariateNormal(torch.zeros(3), torch.eye(3) * 2.0))
    s = _d.rsample((4,))
    ss = tuple(s.shape)
""")
case("torch.distributions.Independent", _H + """
    _b = D.Normal(torch.zeros(2, 3), torch.ones(2, 3) * 2.0)
    _d = D.Independent(_b, 1)
    x = torch.full((2, 3), 0.5)
    lp, h = _d.log_prob(x), _d.entropy()
    m, v = _d.mean, _d.variance
    bs, es = tuple(_d.batch_shape), tuple(_d.event_shape)
    _g = D.Independent(D.Gamma(torch.ones(4, 2), torch.ones(4, 2) * 2.0), reinterpreted_batch_ndims=2)
    lg = _g.log_prob(torch.full((4, 2), 0.3))
    kl = kl_divergence(_d, D.Independent(D.Normal(torch.ones(2, 3), torch.ones(2, 3)), 1))
    s = _d.sample((3,))
    ss = tuple(s.shape)
""")
case("torch.distributions.TransformedDistribution", _H + """
    from torch.distributions.transforms import ExpTransform, AffineTransform, SigmoidTransform
    _b = D.Normal(torch.tensor([0.0, 1.0]), torch.tensor([1.0, 0.5]))
    _d = D.TransformedDistribution(_b, [ExpTransform(), AffineTransform(1.0, 2.0)])
    y = torch.tensor([2.5, 4.0])
    lp, c = _d.log_prob(y), _d.cdf(y)
    _s = D.TransformedDistribution(_b, SigmoidTransform())
    ls = _s.log_prob(torch.tensor([0.3, 0.8]))
    _n = D.TransformedDistribution(D.Laplace(torch.tensor([0.0, 1.0]), 1.0), [AffineTransform(0.0, -2.0)])
    ln, cn = _n.log_prob(y), _n.cdf(y)
    qn = _n.icdf(torch.tensor([0.2, 0.6]))
    s = _d.sample((3,))
    ss = tuple(s.shape)
""")

_T = _H + """
    from torch.distributions import transforms as T
    x = torch.tensor([0.3, -1.2, 2.0])
"""
case("torch.distributions.ExpTransform", _T + """
    _t = T.ExpTransform()
    y = _t(x)
    back = _t.inv(y)
    j = _t.log_abs_det_jacobian(x, y)
""")
case("torch.distributions.AffineTransform", _T + """
    _t = T.AffineTransform(loc=1.0, scale=torch.tensor([2.0, -0.5, 3.0]))
    y = _t(x)
    back = _t.inv(y)
    j = _t.log_abs_det_jacobian(x, y)
    _u = T.AffineTransform(0.5, 2.0)
    ju = _u.log_abs_det_jacobian(x, _u(x))
""")
case("torch.distributions.SigmoidTransform", _T + """
    _t = T.SigmoidTransform()
    y = _t(x)
    back = _t.inv(y)
    j = _t.log_abs_det_jacobian(x, y)
""")
case("torch.distributions.TanhTransform", _T + """
    _t = T.TanhTransform()
    y = _t(x)
    back = _t.inv(y)
    j = _t.log_abs_det_jacobian(x, y)
""")
case("torch.distributions.AbsTransform", _T + """
    _t = T.AbsTransform()
    y = _t(x)
    back = _t.inv(y)
""")
case("torch.distributions.PowerTransform", _T + """
    _t = T.PowerTransform(2.0)
    z = torch.tensor([0.3, 1.2, 2.0])
    y = _t(z)
    back = _t.inv(y)
    j = _t.log_abs_det_jacobian(z, y)
""")
case("torch.distributions.ComposeTransform", _T + """
    _t = T.ComposeTransform([T.AffineTransform(0.5, 2.0), T.ExpTransform()])
    y = _t(x)
    back = _t.inv(y)
    j = _t.log_abs_det_jacobian(x, y)
""")

# --- argument patterns real code uses (a case proves the pattern of its first call)
case("torch.distributions.Laplace", _H + """
    lq = D.Laplace(loc=torch.tensor([0.0, 1.0]), scale=2.0).log_prob(torch.tensor([0.5, -1.0]))
""")
case("torch.distributions.Gamma", _H + """
    lk = D.Gamma(concentration=2.0, rate=torch.tensor([1.0, 3.0])).log_prob(torch.tensor([0.5, 0.2]))
""")
case("torch.distributions.Gamma", _H + """
    lk = D.Gamma(torch.tensor([2.0, 0.7]), rate=torch.tensor([1.0, 3.0])).log_prob(torch.tensor([0.5, 0.2]))
""")
case("torch.distributions.Beta", _H + """
    lk = D.Beta(concentration1=torch.tensor([2.0, 0.7]), concentration0=3.0).log_prob(torch.tensor([0.5, 0.2]))
""")
case("torch.distributions.StudentT", _H + """
    l1 = D.StudentT(4.0).log_prob(torch.tensor([0.5, -1.0]))
""")
case("torch.distributions.StudentT", _H + """
    l1 = D.StudentT(df=torch.tensor([4.0, 2.5]), loc=1.0, scale=torch.tensor([2.0, 0.5])).log_prob(torch.tensor([0.5, -1.0]))
""")
case("torch.distributions.Cauchy", _H + """
    l1 = D.Cauchy(loc=0.0, scale=torch.tensor([2.0, 0.5])).log_prob(torch.tensor([0.5, -1.0]))
""")
case("torch.distributions.Gumbel", _H + """
    l1 = D.Gumbel(loc=0.0, scale=torch.tensor([2.0, 0.5])).log_prob(torch.tensor([0.5, -1.0]))
""")
case("torch.distributions.LogNormal", _H + """
    l1 = D.LogNormal(loc=0.0, scale=torch.tensor([2.0, 0.5])).log_prob(torch.tensor([0.5, 1.5]))
""")
case("torch.distributions.Poisson", _H + """
    l1 = D.Poisson(rate=torch.tensor([2.0, 0.5])).log_prob(torch.tensor([1.0, 0.0]))
""")
case("torch.distributions.Chi2", _H + """
    l1 = D.Chi2(df=torch.tensor([2.0, 0.5])).log_prob(torch.tensor([1.0, 0.3]))
""")
case("torch.distributions.Geometric", _H + """
    l2 = D.Geometric(logits=torch.tensor([0.0, -1.0, 2.0])).log_prob(torch.tensor([0.0, 3.0, 1.0]))
""")
case("torch.distributions.Geometric", _H + """
    l2 = D.Geometric(probs=torch.tensor([0.1, 0.6])).log_prob(torch.tensor([2.0, 1.0]))
""")
case("torch.distributions.Binomial", _H + """
    l2 = D.Binomial(total_count=torch.tensor([5.0, 8.0]), logits=torch.tensor([0.3, -1.0])).log_prob(torch.tensor([2.0, 1.0]))
""")
case("torch.distributions.Binomial", _H + """
    l2 = D.Binomial(4, probs=torch.tensor([0.3, 0.9])).log_prob(torch.tensor([2.0, 4.0]))
""")
case("torch.distributions.Multinomial", _H + """
    l2 = D.Multinomial(4, logits=torch.tensor([0.0, 1.0, -1.0])).log_prob(torch.tensor([1.0, 3.0, 0.0]))
""")
case("torch.distributions.Multinomial", _H + """
    l2 = D.Multinomial(total_count=3, probs=torch.tensor([0.2, 0.8])).log_prob(torch.tensor([1.0, 2.0]))
""")
case("torch.distributions.Dirichlet", _H + """
    l2 = D.Dirichlet(concentration=torch.tensor([0.5, 1.5, 2.0])).log_prob(torch.tensor([0.2, 0.3, 0.5]))
""")
case("torch.distributions.MultivariateNormal", _H + """
    _e = D.MultivariateNormal(torch.zeros(2, 2), scale_tril=torch.tensor([[1.5, 0.0], [0.3, 0.8]]))
    le = _e.log_prob(torch.tensor([[0.5, 0.5], [1.0, -1.0]]))
    he = _e.entropy()
""")
case("torch.distributions.MultivariateNormal", _H + """
    _f = D.MultivariateNormal(torch.tensor([1.0, -1.0]), precision_matrix=torch.tensor([[2.0, 0.5], [0.5, 1.0]]))
    lf = _f.log_prob(torch.tensor([[0.5, 0.5], [1.0, -1.0]]))
    cf = _f.covariance_matrix
""")
case("torch.distributions.MultivariateNormal", _H + """
    _g = D.MultivariateNormal(torch.tensor([1.0, -1.0]), torch.tensor([[2.0, 0.5], [0.5, 1.0]]))
    lg = _g.log_prob(torch.tensor([0.5, 0.5]))
""")
case("torch.distributions.Independent", _H + """
    _g = D.Independent(D.Gamma(torch.ones(4, 2), torch.ones(4, 2) * 2.0), reinterpreted_batch_ndims=2)
    lg = _g.log_prob(torch.full((4, 2), 0.3))
""")
case("torch.distributions.Independent", _H + """
    _u = D.Independent(base_distribution=D.Uniform(torch.zeros(3), torch.ones(3) * 2.0), reinterpreted_batch_ndims=1)
    lu = _u.log_prob(torch.tensor([0.3, 1.0, 1.5]))
    hu = _u.entropy()
""")
case("torch.distributions.TransformedDistribution", _H + """
    from torch.distributions.transforms import TanhTransform
    _t = D.TransformedDistribution(base_distribution=D.Normal(torch.zeros(2), torch.ones(2)), transforms=[TanhTransform()])
    lt = _t.log_prob(torch.tensor([0.3, -0.8]))
""")
case("torch.distributions.AffineTransform", _T + """
    _u = T.AffineTransform(0.5, 2.0)
    ju = _u.log_abs_det_jacobian(x, _u(x))
""")
case("torch.distributions.PowerTransform", _T + """
    _t = T.PowerTransform(exponent=torch.tensor([2.0, 0.5, 3.0]))
    z = torch.tensor([0.3, 1.2, 2.0])
    y = _t(z)
    j = _t.log_abs_det_jacobian(z, y)
""")

# --- Distribution properties and methods (on written-out classes and MindSpore's own)
case("Distribution.batch_shape", _H + """
    bs = tuple(D.Gamma(torch.ones(2, 3), 1.0).batch_shape)
    _c = D.Categorical(torch.tensor([[0.2, 0.8], [0.5, 0.5], [0.1, 0.9]]))
    bc = tuple(_c.batch_shape)
    bn = tuple(D.Normal(torch.zeros(2, 3), torch.ones(3)).batch_shape)
    bd = tuple(D.Dirichlet(torch.ones(4, 3)).batch_shape)
""")
case("Distribution.event_shape", _H + """
    es = tuple(D.Dirichlet(torch.ones(4, 3)).event_shape)
    en = tuple(D.Normal(torch.zeros(2), torch.ones(2)).event_shape)
    ei = tuple(D.Independent(D.Normal(torch.zeros(2, 3), torch.ones(2, 3)), 1).event_shape)
""")
case("Distribution.probs", _H + """
    pg = D.Geometric(logits=torch.tensor([0.0, -1.0, 2.0])).probs
    pc = D.Categorical(torch.tensor([[1.0, 3.0], [0.5, 0.5]])).probs
    pb = D.Bernoulli(torch.tensor([0.2, 0.7])).probs
    pm = D.Multinomial(3, logits=torch.tensor([0.0, 1.0])).probs
""")
case("Distribution.logits", _H + """
    lg = D.Geometric(torch.tensor([0.2, 0.5])).logits
    lb = D.Binomial(5, logits=torch.tensor([0.3, -2.0])).logits
    lm = D.Multinomial(3, torch.tensor([0.2, 0.8])).logits
""")
case("Distribution.concentration1", _H + """
    c1 = D.Beta(torch.tensor([2.0, 0.5]), torch.tensor([3.0, 0.5])).concentration1
""")
case("Distribution.concentration0", _H + """
    c0 = D.Beta(torch.tensor([2.0, 0.5]), torch.tensor([3.0, 0.5])).concentration0
""")
case("Distribution.perplexity", _H + """
    pl = D.Laplace(torch.zeros(2), torch.tensor([1.0, 2.0])).perplexity()
    _n = D.Normal(torch.zeros(2), torch.tensor([1.0, 2.0]))
    pn = _n.perplexity()
""")
case("Distribution.sample_n", _H + """
    s = D.Gamma(torch.ones(2), 1.0).sample_n(3)
    ss = tuple(s.shape)
    _n = D.Normal(torch.zeros(2), torch.ones(2))
    t = _n.sample_n(4)
    ts = tuple(t.shape)
""")
case("Distribution.enumerate_support", _H + """
    es = D.Binomial(3, torch.tensor([0.2, 0.5])).enumerate_support()
""")
case("Distribution.icdf", _H + """
    _n = D.Normal(torch.tensor([0.0, 1.0]), torch.tensor([1.0, 2.0]))
    qn = _n.icdf(torch.tensor([0.1, 0.9]))
    _u = D.Uniform(torch.tensor([0.0, 1.0]), torch.tensor([2.0, 3.0]))
    qu = _u.icdf(torch.tensor([0.25, 0.5]))
    _e = D.Exponential(torch.tensor([0.5, 2.0]))
    qe = _e.icdf(torch.tensor([0.25, 0.5]))
    ql = D.Laplace(0.0, torch.tensor([1.0, 2.0])).icdf(torch.tensor([0.3, 0.6]))
    qg = D.Gumbel(0.0, torch.tensor([1.0, 2.0])).icdf(torch.tensor([0.3, 0.6]))
""")
flagged("Distribution.expand", _H + """
    d = D.Gamma(torch.ones(2), 1.0).expand((3, 2))
""")

case("torch.distributions.HalfNormal", _H + """
    _d = D.HalfNormal(torch.tensor([1.0, 2.0, 0.5]))
    x = torch.tensor([0.5, 1.0, 2.5])
    lp, c, h = _d.log_prob(x), _d.cdf(x), _d.entropy()
    q = _d.icdf(torch.tensor([0.1, 0.5, 0.9]))
    m, mo, v, sd = _d.mean, _d.mode, _d.variance, _d.stddev
    s = _d.rsample((3,))
    ss = tuple(s.shape)
""")
case("torch.distributions.HalfNormal", _H + """
    l1 = D.HalfNormal(scale=2.0).log_prob(torch.tensor([0.5, 3.0]))
""")
case("torch.distributions.HalfCauchy", _H + """
    _d = D.HalfCauchy(torch.tensor([1.0, 2.0, 0.5]))
    x = torch.tensor([0.5, 1.0, 2.5])
    lp, c, h = _d.log_prob(x), _d.cdf(x), _d.entropy()
    q = _d.icdf(torch.tensor([0.1, 0.5, 0.9]))
    mo = _d.mode
    s = _d.sample((3,))
    ss = tuple(s.shape)
""")
case("torch.distributions.Weibull", _H + """
    _d = D.Weibull(torch.tensor([1.0, 2.0, 0.5]), torch.tensor([1.5, 0.8, 3.0]))
    x = torch.tensor([0.5, 1.0, 2.5])
    lp, c, h = _d.log_prob(x), _d.cdf(x), _d.entropy()
    q = _d.icdf(torch.tensor([0.1, 0.5, 0.9]))
    m, v, mo = _d.mean, _d.variance, _d.mode
    s = _d.rsample((3,))
    ss = tuple(s.shape)
""")
case("torch.distributions.Weibull", _H + """
    l1 = D.Weibull(scale=2.0, concentration=torch.tensor([1.5, 2.0])).log_prob(torch.tensor([0.5, 3.0]))
""")
case("torch.distributions.Pareto", _H + """
    _d = D.Pareto(torch.tensor([1.0, 2.0, 0.5]), torch.tensor([1.5, 0.8, 3.0]))
    x = torch.tensor([1.5, 2.5, 2.5])
    lp, c, h = _d.log_prob(x), _d.cdf(x), _d.entropy()
    q = _d.icdf(torch.tensor([0.1, 0.5, 0.9]))
    m, v, mo = _d.mean, _d.variance, _d.mode
    s = _d.rsample((3,))
    ss = tuple(s.shape)
""")
case("torch.distributions.FisherSnedecor", _H + """
    _d = D.FisherSnedecor(torch.tensor([1.0, 4.0, 6.0]), torch.tensor([1.5, 3.0, 8.0]))
    x = torch.tensor([0.5, 1.0, 2.5])
    lp = _d.log_prob(x)
    m, v, mo = _d.mean, _d.variance, _d.mode
    s = _d.sample((3,))
    ss = tuple(s.shape)
""")
case("torch.distributions.Kumaraswamy", _H + """
    _d = D.Kumaraswamy(torch.tensor([1.5, 4.0, 2.0]), torch.tensor([1.5, 3.0, 0.8]))
    x = torch.tensor([0.2, 0.5, 0.9])
    lp, h = _d.log_prob(x), _d.entropy()
    m, v, mo = _d.mean, _d.variance, _d.mode
    s = _d.rsample((3,))
    ss = tuple(s.shape)
""")
case("torch.distributions.NegativeBinomial", _H + """
    _d = D.NegativeBinomial(torch.tensor([3.0, 5.0, 1.5]), torch.tensor([0.2, 0.5, 0.7]))
    x = torch.tensor([0.0, 4.0, 2.0])
    lp = _d.log_prob(x)
    m, v, mo = _d.mean, _d.variance, _d.mode
    l2 = D.NegativeBinomial(4, logits=torch.tensor([0.3, -1.0])).log_prob(torch.tensor([2.0, 1.0]))
    s = _d.sample((3,))
    ss = tuple(s.shape)
""")
case("torch.distributions.NegativeBinomial", _H + """
    l2 = D.NegativeBinomial(total_count=4, probs=torch.tensor([0.3, 0.6])).log_prob(torch.tensor([2.0, 1.0]))
""")
case("torch.distributions.OneHotCategorical", _H + """
    _d = D.OneHotCategorical(torch.tensor([[0.2, 0.3, 0.5], [1.0, 1.0, 2.0]]))
    x = torch.tensor([[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]])
    lp, h = _d.log_prob(x), _d.entropy()
    m, v, mo, p = _d.mean, _d.variance, _d.mode, _d.probs
    bs, es = tuple(_d.batch_shape), tuple(_d.event_shape)
    sup = _d.enumerate_support()
    s = _d.sample((4,))
    ss, total = tuple(s.shape), s.sum(-1)
""")
case("torch.distributions.OneHotCategorical", _H + """
    l2 = D.OneHotCategorical(logits=torch.tensor([0.0, 1.0, -1.0])).log_prob(torch.tensor([0.0, 1.0, 0.0]))
""")
case("torch.distributions.SoftmaxTransform", _T + """
    _t = T.SoftmaxTransform()
    y = _t(x)
    back = _t.inv(y)
""")
case("torch.distributions.SoftplusTransform", _T + """
    _t = T.SoftplusTransform()
    y = _t(x)
    back = _t.inv(y)
    j = _t.log_abs_det_jacobian(x, y)
""")

case("torch.distributions.MixtureSameFamily", _H + """
    _mix = D.Categorical(torch.tensor([0.3, 0.5, 0.2]))
    _comp = D.Normal(torch.tensor([-1.0, 0.0, 2.0]), torch.tensor([0.5, 1.0, 0.7]))
    _d = D.MixtureSameFamily(_mix, _comp)
    x = torch.tensor([0.3, -1.2, 2.5, 0.0])
    lp, c = _d.log_prob(x), _d.cdf(x)
    m, v = _d.mean, _d.variance
    bs, es = tuple(_d.batch_shape), tuple(_d.event_shape)
    s = _d.sample((5,))
    ss = tuple(s.shape)
""")
case("torch.distributions.MixtureSameFamily", _H + """
    _g = D.MixtureSameFamily(mixture_distribution=D.Categorical(logits=torch.zeros(2, 3)),
                             component_distribution=D.Independent(D.Laplace(torch.ones(2, 3, 4), torch.ones(2, 3, 4) * 0.5), 1))
    lg = _g.log_prob(torch.full((2, 4), 0.5))
    mg = _g.mean
""")
case("torch.distributions.Distribution.set_default_validate_args", _H + """
    torch.distributions.Distribution.set_default_validate_args(False)
    lp = D.Gamma(torch.tensor([2.0]), 1.0).log_prob(torch.tensor([0.5]))
""")
_MODS = {"ContinuousBernoulli": "continuous_bernoulli", "LowRankMultivariateNormal": "lowrank_multivariate_normal",
         "LKJCholesky": "lkj_cholesky", "Wishart": "wishart", "VonMises": "von_mises",
         "RelaxedBernoulli": "relaxed_bernoulli", "RelaxedOneHotCategorical": "relaxed_categorical",
         "LogisticNormal": "logistic_normal", "GeneralizedPareto": "generalized_pareto"}
for _fam, _code in {
    "ContinuousBernoulli": "D.ContinuousBernoulli(torch.tensor([0.3]))",
    "LowRankMultivariateNormal": "D.LowRankMultivariateNormal(torch.zeros(2), torch.ones(2, 1), torch.ones(2))",
    "LKJCholesky": "D.LKJCholesky(3, 0.5)",
    "Wishart": "D.Wishart(torch.tensor(3.0), torch.eye(2))",
    "VonMises": "D.VonMises(torch.tensor([0.0]), torch.tensor([1.0]))",
    "RelaxedBernoulli": "D.RelaxedBernoulli(torch.tensor(0.5), torch.tensor([0.3]))",
    "RelaxedOneHotCategorical": "D.RelaxedOneHotCategorical(torch.tensor(0.5), torch.tensor([0.3, 0.7]))",
    "LogisticNormal": "D.LogisticNormal(torch.zeros(2), torch.ones(2))",
    "GeneralizedPareto": "D.GeneralizedPareto(0.0, 1.0, 0.5)",
}.items():
    for _mod in ("", _MODS[_fam] + "."):
        flagged(f"torch.distributions.{_mod}{_fam}", _H + f"""
    _d = {_code}
""")
flagged("torch.distributions.register_kl", _H + """
    from torch.distributions import register_kl
    @register_kl(D.Gamma, D.Beta)
    def kl_gamma_beta(p, q):
        return p.mean
""")
flagged("torch.distributions.kl.register_kl", _H + """
    from torch.distributions.kl import register_kl
    @register_kl(D.Gamma, D.Beta)
    def kl_gamma_beta(p, q):
        return p.mean
""")
case("torch.distributions.distribution.Distribution.set_default_validate_args", _H + """
    torch.distributions.distribution.Distribution.set_default_validate_args(False)
    lp = D.Laplace(torch.tensor([0.0]), 1.0).log_prob(torch.tensor([0.5]))
""")
