"""Probability distributions: ``torch.distributions`` classes become the
``mindspore.nn.probability.distribution`` classes, their properties become method calls,
and ``kl_divergence(p, q)`` becomes ``p.kl_loss(<family>, <q's parameters>)``."""

import libcst as cst

from msmagic.engine.spec import api, member, method, module
from msmagic.rules._util import is_pure
from msmagic.rules.registry import register

GROUP = "Distributions"
SEED = "seeds/002 API Comparison › torch.distributions"
REF = "r2.4.10/api_mapping/pytorch_api_mapping.md (torch.distributions)"
MSD = "mindspore.nn.probability.distribution"
DIST = "distribution"  # kind prefix of a ported distribution: "distribution:Normal"

register(
    "DST001",
    "Normal, Uniform and Exponential map to MindSpore distribution classes",
    group=GROUP,
    why="""
        ``mindspore.nn.probability.distribution`` has the same families with the same
        densities: ``Normal(mean, sd)`` (PyTorch's ``loc``/``scale``), ``Uniform(low,
        high)`` and ``Exponential(rate)``. They accept tensors or Python numbers and
        broadcast their parameters like PyTorch's. Their ``dtype`` argument is the dtype of
        the results (float32 by default): float64 parameters give float32 results where
        PyTorch keeps float64. ``validate_args=False`` (or ``None``) is dropped: MindSpore
        checks the parameters when the distribution is built and never checks the values
        given to ``log_prob``/``cdf``, which is what ``validate_args=False`` does;
        ``validate_args=True`` has no counterpart and is flagged.
    """,
    seed=SEED,
    reference=REF,
    installed_note="""
        Verified on 2.10: Normal/Uniform/Exponential log_prob, cdf, entropy, mean, sd, var
        and mode equal PyTorch's (float32); Normal(0.0, 1.0) with Python floats works.
    """,
    example="""
        import torch
        from torch.distributions import Normal, Uniform, Exponential
        x = torch.tensor([0.5, 2.5])
        lp = Normal(torch.tensor([0.0, 1.0]), torch.tensor([1.0, 2.0])).log_prob(x)
        c = Uniform(torch.tensor([0.0, 1.0]), torch.tensor([2.0, 3.0])).cdf(x)
        h = Exponential(torch.tensor([0.5, 2.0])).entropy()
    """,
)

register(
    "DST002",
    "Bernoulli/Categorical: logits become probs, probs are normalised",
    group=GROUP,
    why="""
        MindSpore's ``Bernoulli(probs)`` and ``Categorical(probs)`` have no ``logits``
        parameter: ``logits=`` becomes ``probs=ops.sigmoid(logits)`` (Bernoulli) or
        ``probs=ops.softmax(logits, axis=-1)`` (Categorical), the probabilities PyTorch
        derives from them. PyTorch's Categorical normalises ``probs`` along the last axis
        while MindSpore's raises unless each row already sums to one, so the port divides
        by the sum (``ops.softmax(ops.log(p), axis=-1)`` when ``p`` is not a plain name, so
        it is evaluated once). Samples: MindSpore draws int32 by default for both, while
        PyTorch's Bernoulli draws floats and its Categorical int64, so ``dtype=`` is added
        (``mindspore.float32`` / ``mindspore.int64``). ``Categorical.mean``/``.variance``
        are NaN in PyTorch but numbers in MindSpore: flagged.
    """,
    seed=SEED,
    reference=REF,
    installed_note="""
        Verified on 2.10: Categorical([.1, .2, .3]) raises "Probabilities for each category
        should sum to one"; Bernoulli().sample() is Int32 unless dtype=mindspore.float32
        (log_prob, entropy, mean and var are unchanged by that dtype).
    """,
    example="""
        import torch
        from torch.distributions import Bernoulli, Categorical
        logits = torch.tensor([0.3, -1.0, 2.0])
        lb = Bernoulli(logits=logits).log_prob(torch.tensor([1.0, 0.0, 1.0]))
        p = torch.tensor([[1.0, 2.0, 1.0], [0.5, 0.2, 0.3]])
        lc = Categorical(p).log_prob(torch.tensor([2, 0]))
        hc = Categorical(probs=p).entropy()
    """,
)

register(
    "DST003",
    "mean, stddev, variance and mode are methods in MindSpore",
    group=GROUP,
    why="""
        PyTorch's distributions expose their moments as properties (``d.mean``,
        ``d.stddev``, ``d.variance``, ``d.mode``); MindSpore's are methods ``d.mean()``,
        ``d.sd()``, ``d.var()``, ``d.mode()``. A Normal's ``loc``/``scale`` become
        ``mean()``/``sd()``. ``log_prob``, ``cdf``, ``entropy`` keep their names and
        arguments. PyTorch has no ``prob``; ``d.log_prob(x).exp()`` ports as written.
        ``icdf`` has no MindSpore counterpart and is flagged.
    """,
    seed=SEED,
    reference=REF,
    example="""
        import torch
        from torch.distributions import Normal
        loc, scale = torch.tensor([0.0, 1.0]), torch.tensor([1.0, 2.0])
        m = Normal(loc, scale).mean
        s = Normal(loc, scale).stddev
        v = Normal(loc, scale).variance
        p = Normal(loc, scale).log_prob(torch.tensor([0.5, 0.3])).exp()
    """,
)

register(
    "DST004",
    "sample(shape): same shape and dtype, values drawn by MindSpore",
    group=GROUP,
    why="""
        ``d.sample(sample_shape)`` becomes ``d.sample(shape)``: the result has PyTorch's
        shape (``sample_shape + batch_shape``) and dtype, drawn from MindSpore's own
        generator, so the values differ by design (the parity check copies them across).
        ``rsample`` becomes ``sample`` too, flagged: MindSpore's Normal samples are drawn
        as ``mean + sd * noise`` as well, but gradients through them are not checked.
    """,
    seed=SEED,
    reference=REF,
    example="""
        import torch
        from torch.distributions import Normal
        s = Normal(torch.zeros(2), torch.ones(2)).sample((3,))
        shape = tuple(s.shape)
        lp = Normal(torch.zeros(2), torch.ones(2)).log_prob(s)
    """,
)

register(
    "DST005",
    "kl_divergence(p, q) becomes p.kl_loss(family, q's parameters)",
    group=GROUP,
    why="""
        MindSpore computes the KL divergence as a method of the first distribution,
        given the second one's family name and parameters:
        ``p.kl_loss("Normal", q.mean(), q.sd())``. The family comes from how ``q`` was
        built in this cell; MindSpore only has KL between two distributions of the same
        family, so mixed families, and a ``q`` the port cannot see being built, are
        flagged. Values equal PyTorch's for Normal, Bernoulli, Categorical, Uniform and
        Exponential.
    """,
    seed=SEED,
    reference=REF,
    example="""
        import torch
        from torch.distributions import Normal, kl_divergence
        _p = Normal(torch.tensor([0.0, 1.0]), torch.tensor([1.0, 2.0]))
        _q = Normal(torch.tensor([0.5, 0.0]), torch.tensor([1.5, 1.0]))
        kl = kl_divergence(_p, _q)
    """,
)


def _kw(name, value):
    return cst.Arg(keyword=cst.Name(name), value=value,
                   equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                                         whitespace_after=cst.SimpleWhitespace("")))


def _with_arg(call: cst.Call, arg: cst.Arg) -> cst.Call:
    args = list(call.args)
    if args:
        args[-1] = args[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
    return call.with_changes(args=args + [arg])


def _validate_true(site, arg) -> bool:
    return site.literal(arg.value, True) not in (False, None)


_VALIDATE = (_validate_true, "MindSpore never checks the values given to log_prob/cdf "
                             "(only the parameters, when the distribution is built)")


def _ctor(family: str, rule: str, dtype: str = ""):
    def handler(site):
        if site.bound() is None:
            site.finding(rule, f"{family}(*args) cannot be checked against MindSpore's {family}",
                         comment="*args/**kwargs not checked")
            return None
        new = site.apply(func=site.ref(f"{MSD}.{family}"))
        if family == "Categorical":
            new = _normalise(site, new)
            if new is None:
                return None
        if dtype:
            new = _with_arg(new, _kw("dtype", site.ref(dtype)))
            site.changes.append(f"added dtype={dtype}")
        site.edit(rule, new, detail=site.describe(f"{site.api} -> {MSD}.{family}"))
        return new
    return handler


def _sigmoid(site, arg):
    return "probs", cst.Call(func=site.ref("mindspore.ops.sigmoid"), args=[cst.Arg(arg.value)])


def _softmax(site, arg):
    return "probs", cst.Call(func=site.ref("mindspore.ops.softmax"),
                             args=[cst.Arg(arg.value, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
                                   _kw("axis", cst.UnaryOperation(cst.Minus(), cst.Integer("1")))])


def _normalise(site, new: cst.Call):
    """Categorical: PyTorch normalises ``probs``; MindSpore requires rows summing to one."""
    had_logits = site.arg("logits") is not None
    if had_logits:
        return new
    args = list(new.args)
    for i, a in enumerate(args):
        if (a.keyword is None and i == 0) or (a.keyword is not None and a.keyword.value == "probs"):
            p = a.value
            if is_pure(p) and isinstance(p, (cst.Name, cst.Attribute)):
                text = site.code(p)
                norm = site.parse(f"{text} / {text}.sum(-1, keepdims=True)")
            else:
                log = cst.Call(func=site.ref("mindspore.ops.log"), args=[cst.Arg(p)])
                norm = cst.Call(func=site.ref("mindspore.ops.softmax"),
                                args=[cst.Arg(log, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
                                      _kw("axis", cst.UnaryOperation(cst.Minus(), cst.Integer("1")))])
            args[i] = a.with_changes(value=norm)
            site.changes.append("probs normalised")
            return new.with_changes(args=args)
    return new


_FAMILIES = {
    # family: (torch module, sig, rename, rule, sample dtype, accessors of the parameters)
    "Normal": ("normal", ("loc", "scale", "validate_args"), {"loc": "mean", "scale": "sd"},
               "DST001", "", ("{q}.mean()", "{q}.sd()")),
    "Uniform": ("uniform", ("low", "high", "validate_args"), {}, "DST001", "", ("{q}.low", "{q}.high")),
    "Exponential": ("exponential", ("rate", "validate_args"), {}, "DST001", "", ("{q}.rate",)),
    "Bernoulli": ("bernoulli", ("probs", "logits", "validate_args"), {}, "DST002",
                  "mindspore.float32", ("{q}.probs",)),
    "Categorical": ("categorical", ("probs", "logits", "validate_args"), {}, "DST002",
                    "mindspore.int64", ("{q}.probs",)),
}

module("torch.distributions", None)
for _fam, (_mod, _sig, _rename, _rule, _dtype, _) in _FAMILIES.items():
    _ms_sig = tuple(_rename.get(p, p) for p in _sig if p not in ("logits", "validate_args"))
    _values = {}
    if _fam == "Bernoulli":
        _values["logits"] = _sigmoid
    if _fam == "Categorical":
        _values["logits"] = _softmax
    for _prefix in ("torch.distributions", f"torch.distributions.{_mod}"):
        api(f"{_prefix}.{_fam}", f"{MSD}.{_fam}", rule=_rule, sig=_sig, ms_sig=_ms_sig,
            rename=_rename, values=_values, unsupported={"validate_args": _VALIDATE},
            handler=_ctor(_fam, _rule, _dtype), returns=f"{DIST}:{_fam}")


# --- properties -> methods (DST003)

#: families written out as classes with PyTorch's interface (msmagic.rules.distribution_families):
#: their properties and methods port as written
WRITTEN_OUT = frozenset((
    "Laplace", "Cauchy", "Gumbel", "LogNormal", "Gamma", "Chi2", "Beta", "StudentT", "Poisson", "Geometric",
    "Binomial", "Multinomial", "Dirichlet", "MultivariateNormal", "Independent", "TransformedDistribution",
    "HalfNormal", "HalfCauchy", "Weibull", "Pareto", "FisherSnedecor", "Kumaraswamy", "NegativeBinomial",
    "OneHotCategorical", "MixtureSameFamily"))


#: written-out families whose rsample goes through Gamma draws
_GAMMA_DRAWN = frozenset(("Gamma", "Chi2", "Beta", "Dirichlet", "StudentT", "FisherSnedecor"))


def _written_out(site, receiver) -> bool:
    kind = site.kind_of(receiver)
    return kind is not None and kind.base == DIST and kind.detail in WRITTEN_OUT


def _called(site) -> bool:
    return bool(site.enclosing_calls) and site.enclosing_calls[-1].func is site.original


def _prop(target: str, name: str):
    def handler(site):
        if _called(site) or _written_out(site, site.original.value):
            return None
        new = cst.Call(func=site.updated.with_changes(attr=cst.Name(target)))
        site.edit("DST003", new, detail=f".{name} -> .{target}()")
        return new
    return handler


def _categorical_moment(site):
    if _called(site):
        return None
    site.finding("DST002", f"Categorical.{site.original.attr.value} is NaN in PyTorch but a number "
                 "in MindSpore", comment="no MindSpore equivalent (NaN in PyTorch)")
    return None


for _name in ("mean", "variance"):
    member(_name, "DST002", receiver=f"{DIST}:Categorical", handler=_categorical_moment)
for _name, _target in (("mean", "mean"), ("stddev", "sd"), ("variance", "var"), ("mode", "mode")):
    member(_name, "DST003", receiver=DIST, handler=_prop(_target, _name), returns="tensor")
member("loc", "DST003", receiver=f"{DIST}:Normal", handler=_prop("mean", "loc"), returns="tensor")
member("scale", "DST003", receiver=f"{DIST}:Normal", handler=_prop("sd", "scale"), returns="tensor")


# --- methods

def _same(rule: str):
    def handler(site):
        new = site.apply()
        site.edit(rule, new, detail=f".{site.original.func.attr.value}() kept")
        return new
    return handler


def _sample(site):
    recv = site.original.func.value
    if _written_out(site, recv):
        # the written-out class has PyTorch's sample/rsample: kept, tagged as a draw
        name = site.original.func.attr.value
        site.edit("DST006", site.updated, detail=f".{name}() kept (written-out class)")
        family = _family(site.kind_of(recv))
        if name == "rsample" and family in _GAMMA_DRAWN:
            site.finding("DST006", f"{family}.rsample draws Gamma variates with MindSpore's random_gamma: "
                         "gradients through them are not PyTorch's (implicit reparameterisation)",
                         comment="rsample gradients not PyTorch's")
        return site.updated
    new = site.apply(func=site.updated.func.with_changes(attr=cst.Name("sample")))
    name = site.original.func.attr.value
    site.edit("DST004", new, detail=f".{name}() -> .sample()")
    if name == "rsample":
        site.finding("DST004", "rsample -> sample: gradients through MindSpore's samples are not "
                     "verified", comment="reparameterised gradients not verified")
    return new


#: icdf of MindSpore's own classes, PyTorch's formula on their parameters ({d}: the
#: distribution, {v}: the probabilities)
_ICDF = {
    "Normal": "{d}.mean() + {d}.sd() * {ops}.erfinv(2 * {v} - 1) * 2 ** 0.5",
    "Uniform": "{v} * ({d}.high - {d}.low) + {d}.low",
    "Exponential": "-{ops}.log1p(-{v}) / {d}.rate",
}


def _icdf(site):
    recv = site.original.func.value
    if _written_out(site, recv):
        site.edit("DST006", site.updated, detail=".icdf() kept (written-out class)")
        return site.updated
    family = _family(site.kind_of(recv))
    bound = site.bound()
    if family in _ICDF and bound and len(bound) == 1 and is_pure(recv) and isinstance(recv, (cst.Name, cst.Attribute)):
        value = bound[0][1].value
        if not isinstance(value, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)):
            value = value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        ops = site.code(site.ref("mindspore.ops"))
        new = site.parse(_ICDF[family].format(d=site.code(site.updated.func.value), v=site.code(value), ops=ops))
        site.edit("DST003", new, detail=f"{family}.icdf -> PyTorch's formula on its parameters")
        return new
    site.finding("DST003", "MindSpore's distributions have no icdf (Normal, Uniform and Exponential bound "
                 "to a name get PyTorch's formula)", comment="no MindSpore icdf")
    return None


method("log_prob", "DST003", receiver=DIST, sig=("value",), handler=_same("DST003"))
method("cdf", "DST003", receiver=DIST, sig=("value",), handler=_same("DST003"))
method("entropy", "DST003", receiver=DIST, handler=_same("DST003"))
method("icdf", "DST003", receiver=DIST, sig=("value",), handler=_icdf)
method("sample", "DST004", receiver=DIST, sig=("sample_shape",), ms_sig=("shape",),
       rename={"sample_shape": "shape"}, handler=_sample, random=True)
method("rsample", "DST004", receiver=DIST, sig=("sample_shape",), ms_sig=("shape",),
       rename={"sample_shape": "shape"}, handler=_sample, random=True)


# --- kl_divergence (DST005)

def _family(kind):
    return kind.detail if kind is not None and kind.base == DIST else None


def _kl(site):
    bound = site.bound()
    if bound is None or len(bound) != 2:
        site.finding("DST005", "kl_divergence needs p and q", comment="not ported")
        return None
    args = {n: a for n, a, _ in bound}
    p, q = args.get("p"), args.get("q")
    if p is None or q is None:
        return None
    originals = {n: o for (n, _, _), o in zip(bound, site.original.args)}
    fp = _family(site.kind_of(originals["p"].value))
    fq = _family(site.kind_of(originals["q"].value))
    if fq is None or fp is None:
        site.finding("DST005", "the families of p and q are not known here (build them in this "
                     "cell with a torch.distributions class)", comment="kl_loss needs q's family")
        return None
    if fp in WRITTEN_OUT or fq in WRITTEN_OUT:
        return _kl_written_out(site, p, q, fp, fq)
    if fp != fq:
        site.finding("DST005", f"MindSpore has no KL between {fp} and {fq}",
                     comment="no MindSpore KL for mixed families")
        return None
    if not isinstance(q.value, cst.Name):
        site.finding("DST005", "q must be a name: kl_loss takes its parameters one by one",
                     comment="bind q to a name first")
        return None
    qn = q.value.value
    params = [site.parse(t.format(q=qn)) for t in _FAMILIES[fq][5]]
    recv = p.value
    if not isinstance(recv, (cst.Name, cst.Attribute, cst.Call)):
        recv = recv.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    sep = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    new = cst.Call(func=cst.Attribute(value=recv, attr=cst.Name("kl_loss")),
                   args=[cst.Arg(cst.SimpleString(f'"{fq}"'), comma=sep)]
                   + [cst.Arg(v, comma=sep) for v in params[:-1]] + [cst.Arg(params[-1])])
    site.edit("DST005", new, detail=f"kl_divergence(p, q) -> p.kl_loss(\"{fq}\", ...)")
    return new


#: written-out families with a same-family kl_divergence method (Chi2 is a Gamma)
_KL_WRITTEN = {"Laplace", "Cauchy", "Gumbel", "LogNormal", "Gamma", "Chi2", "Beta", "Poisson", "Geometric",
               "Dirichlet", "MultivariateNormal", "Independent"}


def _kl_written_out(site, p, q, fp, fq):
    """kl_divergence(p, q) of written-out classes: p.kl_divergence(q) (same family)."""
    gamma = {"Gamma", "Chi2"}
    if not (fp == fq or {fp, fq} <= gamma) or fp not in _KL_WRITTEN:
        site.finding("DST005", f"the KL between {fp} and {fq} is not written out",
                     comment="KL of these families not ported")
        return None
    recv = p.value
    if not isinstance(recv, (cst.Name, cst.Attribute, cst.Call)):
        recv = recv.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    new = cst.Call(func=cst.Attribute(value=recv, attr=cst.Name("kl_divergence")), args=[cst.Arg(q.value)])
    site.edit("DST005", new, detail="kl_divergence(p, q) -> p.kl_divergence(q) (written-out class)")
    return new


for _q in ("torch.distributions.kl_divergence", "torch.distributions.kl.kl_divergence"):
    api(_q, rule="DST005", sig=("p", "q"), handler=_kl)
