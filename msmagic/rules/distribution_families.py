"""Distribution families MindSpore lacks, or computes otherwise than PyTorch, written out
as classes in the ported cell: PyTorch's formulas with MindSpore ops, PyTorch's interface
(properties ``mean``/``variance``/``stddev``, ``batch_shape``/``event_shape``,
``log_prob``/``cdf``/``icdf``/``entropy``, ``sample``/``rsample``), so the methods and
properties called on them port as written. The ported code needs only MindSpore."""

import libcst as cst

from msmagic.engine.spec import api, member, method, module
from msmagic.rules import distribution_sources as S
from msmagic.rules.distributions import _VALIDATE, DIST, GROUP, SEED, _called, _family, _written_out
from msmagic.rules._util import is_pure
from msmagic.rules.registry import register

REF = "torch/distributions/*.py (PyTorch 2.x formulas); r2.4.10/api_mapping/pytorch_api_mapping.md"

register(
    "DST006",
    "Beta, Gamma, Laplace, Poisson... are written out as classes with MindSpore ops",
    group=GROUP,
    why="""
        MindSpore's ``nn.probability.distribution`` has a Beta, Gamma, Poisson... but its
        classes are Cells with another interface (``mean()`` methods, no ``icdf``, no
        ``batch_shape``) and some lack CPU kernels or PyTorch's parameterisation, and it has
        no Binomial, Multinomial, Dirichlet, MultivariateNormal, Chi2 or Independent at all.
        So the port writes PyTorch's class into the cell as a small class computing
        PyTorch's own formulas with ``mindspore.ops`` (``lgamma``, ``digamma``, ``igamma``,
        ``xlogy``, ``erfinv``...): the properties, ``log_prob``, ``cdf``, ``icdf``,
        ``entropy``, ``batch_shape``/``event_shape`` and ``kl_divergence`` to the same
        family keep PyTorch's names and values. ``sample``/``rsample`` give PyTorch's shape
        and dtype from MindSpore's generator (``standard_normal``, ``uniform``,
        ``random_gamma``, ``random_poisson``, ``multinomial``), so the values differ by design
        and gradients through ``rsample`` are not checked. Parameters are not validated
        (``validate_args=True`` is flagged).
    """,
    seed=SEED,
    reference=REF,
    installed_note="""
        Verified on MindSpore 2.10 CPU against torch 2.13: log_prob, cdf, icdf, entropy,
        mean, mode, variance, stddev and same-family KL of each family (float32), sample
        shapes and dtypes. ops.random_gamma/random_poisson need the shape as a Tensor.
    """,
    example="""
        import torch
        from torch.distributions import Beta, Gamma, Laplace
        x = torch.tensor([0.25, 0.5])
        lb = Beta(torch.tensor([2.0, 0.5]), torch.tensor([3.0, 0.5])).log_prob(x)
        hg = Gamma(torch.tensor([2.0, 3.0]), torch.tensor([1.0, 0.5])).entropy()
        cl = Laplace(0.0, torch.tensor([1.0, 2.0])).cdf(x)
    """,
)

register(
    "DST007",
    "Independent, TransformedDistribution and transforms are written out",
    group=GROUP,
    why="""
        ``Independent(base, n)`` sums the base's ``log_prob``/``entropy`` over its rightmost
        ``n`` batch axes, ``TransformedDistribution(base, transforms)`` pushes samples
        through the transforms and pulls ``log_prob``/``cdf`` values back through their
        inverses and log-Jacobians; both are written into the cell as small classes, and
        so are ``ExpTransform``, ``AffineTransform``, ``SigmoidTransform``,
        ``TanhTransform``, ``AbsTransform``, ``PowerTransform`` and ``ComposeTransform``
        (PyTorch's formulas with ``mindspore.ops``). A base ported to MindSpore's own
        Normal/Uniform/Exponential/Bernoulli/Categorical is read through PyTorch's names.
        Transforms with ``event_dim > 0`` are not written out.
    """,
    seed=SEED,
    reference=REF,
    example="""
        import torch
        from torch.distributions import Normal, Independent, TransformedDistribution
        from torch.distributions.transforms import ExpTransform, AffineTransform
        _base = Normal(torch.zeros(2, 3), torch.ones(2, 3))
        li = Independent(_base, 1).log_prob(torch.full((2, 3), 0.5))
        _t = TransformedDistribution(Normal(torch.tensor([0.0, 1.0]), torch.tensor([1.0, 0.5])),
                                     [ExpTransform(), AffineTransform(1.0, 2.0)])
        lt = _t.log_prob(torch.tensor([2.5, 4.0]))
    """,
)

#: family: (torch module, signature, rule)
FAMILIES = {
    "Laplace": ("laplace", ("loc", "scale", "validate_args"), "DST006"),
    "Cauchy": ("cauchy", ("loc", "scale", "validate_args"), "DST006"),
    "Gumbel": ("gumbel", ("loc", "scale", "validate_args"), "DST006"),
    "LogNormal": ("log_normal", ("loc", "scale", "validate_args"), "DST006"),
    "Gamma": ("gamma", ("concentration", "rate", "validate_args"), "DST006"),
    "Chi2": ("chi2", ("df", "validate_args"), "DST006"),
    "Beta": ("beta", ("concentration1", "concentration0", "validate_args"), "DST006"),
    "StudentT": ("studentT", ("df", "loc", "scale", "validate_args"), "DST006"),
    "Poisson": ("poisson", ("rate", "validate_args"), "DST006"),
    "Geometric": ("geometric", ("probs", "logits", "validate_args"), "DST006"),
    "Binomial": ("binomial", ("total_count", "probs", "logits", "validate_args"), "DST006"),
    "Multinomial": ("multinomial", ("total_count", "probs", "logits", "validate_args"), "DST006"),
    "Dirichlet": ("dirichlet", ("concentration", "validate_args"), "DST006"),
    "MultivariateNormal": ("multivariate_normal",
                           ("loc", "covariance_matrix", "precision_matrix", "scale_tril", "validate_args"), "DST006"),
    "HalfNormal": ("half_normal", ("scale", "validate_args"), "DST006"),
    "HalfCauchy": ("half_cauchy", ("scale", "validate_args"), "DST006"),
    "Weibull": ("weibull", ("scale", "concentration", "validate_args"), "DST006"),
    "Pareto": ("pareto", ("scale", "alpha", "validate_args"), "DST006"),
    "FisherSnedecor": ("fishersnedecor", ("df1", "df2", "validate_args"), "DST006"),
    "Kumaraswamy": ("kumaraswamy", ("concentration1", "concentration0", "validate_args"), "DST006"),
    "NegativeBinomial": ("negative_binomial", ("total_count", "probs", "logits", "validate_args"), "DST006"),
    "OneHotCategorical": ("one_hot_categorical", ("probs", "logits", "validate_args"), "DST006"),
    "MixtureSameFamily": ("mixture_same_family",
                          ("mixture_distribution", "component_distribution", "validate_args"), "DST007"),
    "Independent": ("independent", ("base_distribution", "reinterpreted_batch_ndims", "validate_args"), "DST007"),
    "TransformedDistribution": ("transformed_distribution", ("base_distribution", "transforms", "validate_args"),
                                "DST007"),
}

#: families with a same-family kl_divergence method
KL = {"Laplace", "Cauchy", "Gumbel", "LogNormal", "Gamma", "Chi2", "Beta", "Poisson", "Geometric", "Dirichlet",
      "MultivariateNormal", "Independent"}

TRANSFORMS = {
    "ExpTransform": ("cache_size",),
    "AffineTransform": ("loc", "scale", "event_dim", "cache_size"),
    "SigmoidTransform": ("cache_size",),
    "TanhTransform": ("cache_size",),
    "AbsTransform": ("cache_size",),
    "PowerTransform": ("exponent", "cache_size"),
    "ComposeTransform": ("parts", "cache_size"),
    "SoftmaxTransform": ("cache_size",),
    "SoftplusTransform": ("cache_size",),
}


def _fill(source: str, **names) -> str:
    for key, value in names.items():
        source = source.replace(key, value)
    return source.lstrip("\n")


def _ms(site) -> str:
    """The name the cell reaches ``mindspore`` by (``mindspore``, ``ms``...)."""
    text = site.code(site.ref("mindspore.ops.exp"))
    if text.endswith(".ops.exp") and "." not in text[:-len(".ops.exp")].strip("."):
        return text[:-len(".ops.exp")]
    return site.require_import("mindspore")


def _base(site) -> str:
    ms = _ms(site)
    return site.define("Distribution", lambda n: _fill(S.BASE_SOURCE, NAME=n, MS=ms),
                       ("torch.distributions.Distribution",))


def family_class(site, family: str) -> str:
    """The name of the written-out class of ``family`` in this cell (written once)."""
    ms = _ms(site)
    base = _base(site)
    extra = {}
    if family == "Chi2":
        extra["GAMMA"] = family_class(site, "Gamma")
    stands = tuple(f"{p}.{family}" for p in ("torch.distributions", f"torch.distributions.{FAMILIES[family][0]}"))
    return site.define(family, lambda n: _fill(S.SOURCES[family], NAME=n, BASE=base, MS=ms, **extra), stands)


def _transform_class(site, name: str) -> str:
    ms = _ms(site)
    tbase = site.define("Transform", lambda n: _fill(S.TRANSFORM_BASE, NAME=n, MS=ms),
                        ("torch.distributions.transforms.Transform",))
    stands = (f"torch.distributions.{name}", f"torch.distributions.transforms.{name}")
    return site.define(name, lambda n: _fill(S.TRANSFORMS[name], NAME=n, TBASE=tbase, MS=ms), stands)


def _family_handler(family: str, rule: str):
    def handler(site):
        if site.bound() is None:
            site.finding(rule, f"{family}(*args) cannot be checked against the written-out {family}",
                         comment="*args/**kwargs not checked")
            return None
        validate = site.arg("validate_args")
        if validate is not None and _VALIDATE[0](site, validate):
            site.finding(rule, f"validate_args=True: {_VALIDATE[1]}", comment="validate_args=True not ported")
            return None
        name = family_class(site, family)
        new = site.updated.with_changes(func=cst.Name(name))
        site.edit(rule, new, detail=f"{site.api} -> {name} (written out with MindSpore ops)")
        return new
    return handler


def _transform_handler(tname: str):
    def handler(site):
        if site.bound() is None:
            site.finding("DST007", f"{tname}(*args) cannot be checked", comment="*args/**kwargs not checked")
            return None
        event_dim = site.arg("event_dim")
        if event_dim is not None and site.literal(event_dim.value, 0) != 0:
            site.finding("DST007", f"{tname} with event_dim > 0 is not written out",
                         comment="event_dim > 0 not ported")
            return None
        name = _transform_class(site, tname)
        new = site.updated.with_changes(func=cst.Name(name))
        site.edit("DST007", new, detail=f"{site.api} -> {name} (written out with MindSpore ops)")
        return new
    return handler


for _fam, (_mod, _sig, _rule) in FAMILIES.items():
    for _prefix in ("torch.distributions", f"torch.distributions.{_mod}"):
        api(f"{_prefix}.{_fam}", rule=_rule, sig=_sig, unsupported={"validate_args": _VALIDATE},
            handler=_family_handler(_fam, _rule), returns=f"{DIST}:{_fam}")

module("torch.distributions.transforms", None)
for _t, _sig in TRANSFORMS.items():
    for _prefix in ("torch.distributions", "torch.distributions.transforms"):
        api(f"{_prefix}.{_t}", rule="DST007", sig=_sig, handler=_transform_handler(_t), returns=None)


# --- properties and methods PyTorch's Distribution has: kept on a written-out class; on
# MindSpore's own Normal/Uniform/Exponential/Bernoulli/Categorical written with what they have

def _msd_family(site, recv):
    return _family(site.kind_of(recv))


def _keep(site, what: str):
    site.edit("DST006", site.updated, detail=f"{what} kept (written-out class)")
    return site.updated


def _batch_shape(site):
    recv = site.original.value
    if _called(site):
        return None
    if _written_out(site, recv):
        return _keep(site, ".batch_shape")
    if _msd_family(site, recv) == "Categorical":
        # MindSpore's Categorical reports the shape of probs, PyTorch's drops the classes
        new = site.parse(f"{site.code(site.updated.value)}.probs.shape[:-1]")
        site.edit("DST006", new, detail="Categorical.batch_shape -> probs.shape[:-1]")
        return new
    return _keep(site, ".batch_shape")


def _event_shape(site):
    recv = site.original.value
    if _called(site):
        return None
    if _written_out(site, recv):
        return _keep(site, ".event_shape")
    new = cst.Tuple(elements=[])  # MindSpore's families all have scalar events
    site.edit("DST006", new, detail=".event_shape -> () (scalar events)")
    return new


def _probs(site):
    recv = site.original.value
    if _called(site):
        return None
    if _written_out(site, recv) or _msd_family(site, recv) in ("Bernoulli", "Categorical"):
        # MindSpore's Bernoulli/Categorical hold the (normalised) probabilities they were built with
        return _keep(site, ".probs")
    return None


def _logits(site):
    recv = site.original.value
    if _called(site):
        return None
    if _written_out(site, recv):
        return _keep(site, ".logits")
    if _msd_family(site, recv) in ("Bernoulli", "Categorical"):
        site.finding("DST006", "MindSpore's Bernoulli/Categorical keep only probs: logits recomputed from them "
                     "lose precision where PyTorch keeps the logits given", comment="no logits in MindSpore")
    return None


def _written_only(what: str, why: str):
    def handler(site):
        recv = site.original.value if isinstance(site.original, cst.Attribute) else site.original.func.value
        if isinstance(site.original, cst.Attribute) and _called(site):
            return None
        if _written_out(site, recv):
            return _keep(site, what)
        site.finding("DST006", why, comment=f"{what} not ported")
        return None
    return handler


def _perplexity(site):
    recv = site.original.func.value
    if _written_out(site, recv):
        return _keep(site, ".perplexity()")
    ops = site.code(site.ref("mindspore.ops"))
    new = site.parse(f"{ops}.exp({site.code(site.updated.func.value)}.entropy())")
    site.edit("DST006", new, detail=".perplexity() -> ops.exp(entropy())")
    return new


def _sample_n(site):
    recv = site.original.func.value
    if _written_out(site, recv):
        return _keep(site, ".sample_n()")
    bound = site.bound()
    if not bound or len(bound) != 1:
        site.finding("DST006", "sample_n needs n", comment="sample_n not ported")
        return None
    n = site.code(bound[0][1].value)
    new = site.parse(f"{site.code(site.updated.func.value)}.sample(({n},))")
    site.edit("DST006", new, detail=".sample_n(n) -> .sample((n,))")
    return new


member("batch_shape", "DST006", receiver=DIST, handler=_batch_shape, returns=None)
member("event_shape", "DST006", receiver=DIST, handler=_event_shape, returns=None)
member("probs", "DST006", receiver=DIST, handler=_probs, returns="tensor")
member("logits", "DST006", receiver=DIST, handler=_logits, returns="tensor")
for _name in ("concentration1", "concentration0"):
    member(_name, "DST006", receiver=DIST, returns="tensor",
           handler=_written_only(f".{_name}", f"{_name} belongs to Beta (written out)"))
method("perplexity", "DST006", receiver=DIST, handler=_perplexity)
method("sample_n", "DST006", receiver=DIST, sig=("n",), handler=_sample_n, random=True)
method("enumerate_support", "DST006", receiver=DIST, sig=("expand",), returns="tensor",
       handler=_written_only(".enumerate_support()", "enumerate_support is written out for Binomial only "
                             "(MindSpore's Bernoulli/Categorical have none)"))


def _expand(site):
    site.finding("DST006", "Distribution.expand is not ported (build the distribution with broadcast "
                 "parameters instead)", comment="expand not ported")
    return None


method("expand", "DST006", receiver=DIST, sig=("batch_shape", "_instance"), returns=None, handler=_expand)


# --- what is not written out: flagged with the reason

NOT_WRITTEN = {
    "ContinuousBernoulli": ("continuous_bernoulli", "its normaliser switches to a Taylor expansion near "
                            "probs=0.5 (lims); not written out"),
    "LowRankMultivariateNormal": ("lowrank_multivariate_normal", "the Woodbury/capacitance algebra is not "
                                  "written out (use MultivariateNormal with the full covariance)"),
    "LKJCholesky": ("lkj_cholesky", "its onion-method sampler and log-normaliser are not written out"),
    "Wishart": ("wishart", "its Bartlett sampler and multivariate log-gamma normaliser are not written out"),
    "VonMises": ("von_mises", "its rejection sampler and Bessel-function normaliser are not written out"),
    "RelaxedBernoulli": ("relaxed_bernoulli", "the logit-space relaxed distribution is not written out"),
    "RelaxedOneHotCategorical": ("relaxed_categorical", "the Gumbel-softmax distribution is not written out"),
    "LogisticNormal": ("logistic_normal", "the stick-breaking transform is not written out"),
    "GeneralizedPareto": ("generalized_pareto", "not written out"),
}


def _not_written(family: str, why: str):
    def handler(site):
        site.finding("DST006", f"{family}: {why}", comment=f"{family} not ported")
        return None
    return handler


for _fam, (_mod, _why) in NOT_WRITTEN.items():
    for _prefix in ("torch.distributions", f"torch.distributions.{_mod}"):
        api(f"{_prefix}.{_fam}", rule="DST006", handler=_not_written(_fam, _why), returns=f"{DIST}:{_fam}")


def _register_kl(site):
    site.finding("DST005", "register_kl adds PyTorch KL implementations: the written-out classes compute "
                 "KL with their own kl_divergence method", comment="register_kl not ported")
    return None


for _q in ("torch.distributions.kl.register_kl", "torch.distributions.register_kl"):
    api(_q, rule="DST005", handler=_register_kl, returns=None)


def _set_default_validate_args(site):
    bound = site.bound()
    value = bound[0][1].value if bound and len(bound) == 1 else None
    if value is None or site.literal(value, True) is not False:
        site.finding("DST006", "validation on: MindSpore never checks the values given to log_prob/cdf",
                     comment="validate_args=True not ported")
        return None
    new = cst.Name("None")
    site.edit("DST006", new, detail="set_default_validate_args(False) -> None (the port never validates)")
    return new


for _q in ("torch.distributions.Distribution.set_default_validate_args",
           "torch.distributions.distribution.Distribution.set_default_validate_args"):
    api(_q, rule="DST006", sig=("value",), handler=_set_default_validate_args, returns=None)
