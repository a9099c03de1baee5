"""More Tensor methods whose MindSpore counterpart needs a small rewrite: another
argument order (``polygamma``), an index dtype (``index_fill``), a reshape
(``unflatten``), a conjugate (``vdot``), a whole-tensor reduction (``nanmedian()``),
and methods that are the identity on MindSpore tensors (``resolve_conj``).

Each rewrite was run on MindSpore 2.10 (CPU) against PyTorch; the rule's example and the
cases in ``msmagic/apis/tensor_cases.py`` are the proof.
"""

import libcst as cst

from msmagic.engine.spec import method
from msmagic.rules.api_table import _rebind
from msmagic.rules.registry import register

GROUP = "Tensor methods"
SEED = "seeds/002 API Comparison › Tensor/Parameter"
REF = "r2.4.10/api_mapping/pytorch_api_mapping.md"

RESOLVE = "TNS010"
POLYGAMMA = "TNS011"
INDEX_FILL = "TNS012"
NANMEDIAN = "TNS013"
UNFLATTEN = "TNS014"
VDOT = "TNS015"
PREDICATES = "TNS016"

_COMMA = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))


def _args(*nodes) -> list:
    return [cst.Arg(n, comma=_COMMA if i < len(nodes) - 1 else cst.MaybeSentinel.DEFAULT)
            for i, n in enumerate(nodes)]


def _bound(site, name: str, rule: str):
    """{PyTorch parameter: value node}, or None (with a finding) under *args/**kwargs."""
    bound = site.bound()
    if bound is None:
        site.finding(rule, f"{name} with *args/**kwargs cannot be mapped", comment=f"Tensor.{name} not ported")
        return None
    return {p: a.value for p, a, _ in bound}


def _maybe_rebind(site, name: str, rule: str, new, detail: str):
    if name.endswith("_"):
        rebound = _rebind(site, f"Tensor.{name}", new)
        if rebound is None:
            return site.updated
        site.edit(rule, rebound, detail=detail + "; in-place: name rebound")
        return rebound
    site.edit(rule, new, detail=detail)
    return new


def _plain(node) -> bool:
    """A name or an attribute chain of names: safe to write twice."""
    while isinstance(node, cst.Attribute):
        node = node.value
    return isinstance(node, cst.Name)


# ----------------------------------------------------------------------------- resolve_conj

register(
    RESOLVE,
    "resolve_conj() and resolve_neg() are dropped: no lazy conjugate in MindSpore",
    group=GROUP,
    why="""
        PyTorch may represent ``x.conj()`` of a complex tensor (and some negations) lazily,
        as a view with a conjugate or negative bit; ``resolve_conj()``/``resolve_neg()``
        return a tensor with that bit applied to the data, with the same values. MindSpore
        has no such bits: ``ops.conj`` and ``-x`` compute new data, so every MindSpore
        tensor is already resolved and the call is removed (``x.resolve_conj()`` ->
        ``x``). The values are the same; on a real tensor both methods return the tensor
        itself in PyTorch too.
    """,
    seed=SEED,
    reference=REF,
    installed_note="Checked on 2.10: Tensor has no resolve_conj, resolve_neg or is_conj.",
    example="""
        import torch
        x = torch.tensor([[1.0, -2.0], [3.5, 0.25]])
        y = x.resolve_conj() * 2
        z = x.t().resolve_neg()
    """,
)


def _resolve(site):
    if site.updated.args:
        return None
    site.edit(RESOLVE, site.receiver, detail=f".{site.original.func.attr.value}() removed")
    return site.receiver


for _name in ("resolve_conj", "resolve_neg"):
    method(_name, RESOLVE, unambiguous=True, handler=_resolve, returns="same")


# ----------------------------------------------------------------------------- polygamma

register(
    POLYGAMMA,
    "x.polygamma(n) becomes ops.polygamma(mindspore.Tensor(n), x)",
    group=GROUP,
    why="""
        ``x.polygamma(n)`` is the n-th derivative of the digamma function at ``x``.
        MindSpore's Tensor has no ``polygamma`` method; ``mindspore.ops.polygamma(n,
        input)`` computes it with the order first, and takes the order only as a tensor
        (a Python int raises TypeError), so the port writes
        ``mindspore.ops.polygamma(mindspore.Tensor(n), x)``. ``x.polygamma_(n)`` becomes
        that with the name rebound (API003).
    """,
    seed=SEED,
    reference=REF,
    installed_note="""
        Checked on 2.10 (CPU): ``ops.polygamma(1, x)`` raises "the input[0] should be a
        Tensor, but got Int64"; with ``mindspore.Tensor(n)`` the values of n = 0, 1, 2, 3
        match PyTorch's in float32 and float64.
    """,
    example="""
        import torch
        x = torch.tensor([[0.5, 1.5, 2.0], [3.25, 4.0, 7.5]])
        d1 = x.polygamma(1)
        d2 = x.double().polygamma(n=2)
        x.polygamma_(0)
    """,
)


def _polygamma(site):
    name = site.original.func.attr.value
    args = _bound(site, name, POLYGAMMA)
    if args is None or set(args) != {"n"}:
        return None
    order = cst.Call(func=site.ref("mindspore.Tensor"), args=[cst.Arg(args["n"])])
    new = cst.Call(func=site.ref("mindspore.ops.polygamma"), args=_args(order, site.receiver))
    return _maybe_rebind(site, name, POLYGAMMA, new, f".{name}(n) -> ops.polygamma(mindspore.Tensor(n), x)")


for _name in ("polygamma", "polygamma_"):
    method(_name, POLYGAMMA, unambiguous=True, sig=("n",), handler=_polygamma)


# ----------------------------------------------------------------------------- index_fill

register(
    INDEX_FILL,
    "x.index_fill(dim, index, value) becomes ops.index_fill with an int32 index",
    group=GROUP,
    why="""
        ``x.index_fill(dim, index, value)`` writes ``value`` into the slices of ``x``
        along ``dim`` that ``index`` names. MindSpore's ``Tensor.index_fill`` and
        ``ops.index_fill(x, axis, index, value)`` compute the same, but the CPU kernel
        accepts only an int32 index, where PyTorch's indices are int64; the port casts the
        index: ``mindspore.ops.index_fill(x, dim, index.astype(mindspore.int32),
        value)``. ``x.index_fill_(...)`` becomes that with the name rebound (API003).
        Indices beyond int32's range do not occur for a dimension MindSpore can hold.
    """,
    seed=SEED,
    reference=REF,
    installed_note="""
        Checked on 2.10 (CPU): ``index_fill`` with an int64 index raises "the input
        argument[index] must be a type of {Tensor[Int32]}"; with an int32 index a float or
        0-d tensor value, a negative dim and repeated indices give PyTorch's values.
    """,
    example="""
        import torch
        x = torch.arange(12.0).reshape(3, 4)
        a = x.index_fill(1, torch.tensor([0, 2]), -1.0)
        b = x.index_fill(dim=0, index=torch.tensor([1]), value=torch.tensor(5.0))
        x.index_fill_(-1, torch.tensor([3, 3]), 0.5)
    """,
)


def _index_fill(site):
    name = site.original.func.attr.value
    args = _bound(site, name, INDEX_FILL)
    if args is None or set(args) != {"dim", "index", "value"}:
        return None
    index = cst.Call(func=cst.Attribute(value=args["index"], attr=cst.Name("astype")),
                     args=[cst.Arg(site.ref("mindspore.int32"))])
    new = cst.Call(func=site.ref("mindspore.ops.index_fill"),
                   args=_args(site.receiver, args["dim"], index, args["value"]))
    return _maybe_rebind(site, name, INDEX_FILL, new, f".{name}(...) -> ops.index_fill(x, dim, int32 index, value)")


for _name in ("index_fill", "index_fill_"):
    method(_name, INDEX_FILL, unambiguous=True, sig=("dim", "index", "value"), handler=_index_fill)


# ----------------------------------------------------------------------------- nanmedian

register(
    NANMEDIAN,
    "nanmedian() reduces the flattened tensor; nanmedian(dim) maps to ops.nanmedian",
    group=GROUP,
    why="""
        ``x.nanmedian()`` is the lower median of the values that are not NaN, over the
        whole tensor, as a 0-d tensor. MindSpore's ``nanmedian`` always reduces one axis
        (the last by default) and returns ``(values, indices)``, so the whole-tensor form
        becomes ``mindspore.ops.nanmedian(x.reshape(-1), 0)[0]``. With a ``dim``,
        ``x.nanmedian(dim, keepdim)`` returns ``(values, indices)`` in both frameworks and
        becomes ``mindspore.ops.nanmedian(x, dim, keepdim)`` (``axis``/``keepdims``).
    """,
    seed=SEED,
    reference=REF,
    installed_note="""
        Checked on 2.10 (CPU): ``Tensor.nanmedian()`` returns a tuple where PyTorch returns
        a tensor; ``ops.nanmedian`` of a flattened tensor along 0 gives PyTorch's value
        (NaNs ignored, lower median for an even count), and along a dim its values and
        indices.
    """,
    example="""
        import torch
        x = torch.tensor([[1.0, float('nan'), 3.0, 2.0], [4.0, 0.5, float('nan'), 8.0]])
        m = x.nanmedian()
        v, i = x.nanmedian(1)
        r = x.nanmedian(dim=0, keepdim=True)
        vals = r[0]
    """,
)


def _nanmedian(site):
    args = _bound(site, "nanmedian", NANMEDIAN)
    if args is None:
        return None
    func = site.ref("mindspore.ops.nanmedian")
    if not args:
        flat = cst.Call(func=cst.Attribute(value=site.receiver, attr=cst.Name("reshape")),
                        args=[cst.Arg(cst.UnaryOperation(cst.Minus(), cst.Integer("1")))])
        call = cst.Call(func=func, args=_args(flat, cst.Integer("0")))
        new = cst.Subscript(value=call, slice=[cst.SubscriptElement(cst.Index(cst.Integer("0")))])
        site.edit(NANMEDIAN, new, detail=".nanmedian() -> ops.nanmedian(x.reshape(-1), 0)[0]")
        return new
    if "dim" not in args or set(args) - {"dim", "keepdim"}:
        return None
    rest = [args["dim"]] + ([args["keepdim"]] if "keepdim" in args else [])
    new = cst.Call(func=func, args=_args(site.receiver, *rest))
    site.edit(NANMEDIAN, new, detail=".nanmedian(dim) -> ops.nanmedian(x, dim)")
    return new


method("nanmedian", NANMEDIAN, unambiguous=True, sig=("dim", "keepdim"), handler=_nanmedian)


# ----------------------------------------------------------------------------- unflatten

register(
    UNFLATTEN,
    "x.unflatten(dim, sizes) becomes a reshape of that dimension",
    group=GROUP,
    why="""
        ``x.unflatten(dim, sizes)`` splits dimension ``dim`` into ``sizes`` (one of them
        may be -1). MindSpore 2.10 has no ``unflatten`` (neither a Tensor method nor an
        op); the port writes the reshape it stands for:
        ``x.reshape(x.shape[:dim] + tuple(sizes) + x.shape[dim:][1:])``, which is right
        for a negative ``dim`` too (``x.shape[dim:][1:]`` is what follows the dimension).
        The receiver is written three times, so it must be a name or an attribute; a
        computed receiver is flagged (bind it to a name first).
    """,
    seed=SEED,
    reference=REF,
    installed_note="Checked on 2.10: Tensor has no unflatten; mindspore.ops and mint have none either.",
    example="""
        import torch
        x = torch.arange(24.0).reshape(2, 12)
        a = x.unflatten(1, (3, 4))
        b = x.unflatten(-1, (2, -1))
        c = x.unflatten(dim=0, sizes=[1, 2])
    """,
)


def _unflatten(site):
    args = _bound(site, "unflatten", UNFLATTEN)
    if args is None or set(args) != {"dim", "sizes"}:
        return None
    if not _plain(site.receiver_original):
        site.finding(UNFLATTEN, "unflatten of a computed tensor: bind it to a name first (the reshape "
                     "that replaces it reads the tensor's shape)", comment="Tensor.unflatten not ported")
        return None
    r = site.code(site.receiver).strip()
    d = site.code(args["dim"]).strip()
    if not isinstance(args["dim"], (cst.Name, cst.Integer, cst.Attribute, cst.UnaryOperation)):
        d = f"({d})"
    sizes = site.code(args["sizes"]).strip()
    new = site.parse(f"{r}.reshape({r}.shape[:{d}] + tuple({sizes}) + {r}.shape[{d}:][1:])")
    site.edit(UNFLATTEN, new, detail=".unflatten(dim, sizes) -> reshape")
    return new


method("unflatten", UNFLATTEN, unambiguous=True, sig=("dim", "sizes"), handler=_unflatten)


# ----------------------------------------------------------------------------- vdot

register(
    VDOT,
    "x.vdot(y) becomes ops.inner(ops.conj(x), y)",
    group=GROUP,
    why="""
        ``x.vdot(y)`` is the dot product of two 1-D tensors with the first one
        conjugated. MindSpore 2.10 has no ``vdot`` (``mint.vdot`` has no CPU kernel); for
        1-D tensors ``ops.inner`` is the dot product and ``ops.conj`` the conjugate (the
        values themselves for a real tensor), so the port writes
        ``mindspore.ops.inner(mindspore.ops.conj(x), y)``.
    """,
    seed=SEED,
    reference=REF,
    installed_note="Checked on 2.10 (CPU): Tensor has no vdot, mint.vdot raises 'Not implement exception'.",
    example="""
        import torch
        a = torch.tensor([1.0, -2.0, 3.5])
        b = torch.tensor([0.5, 4.0, -1.0])
        d = a.vdot(b)
        e = a.double().vdot(other=b.double())
    """,
)


def _vdot(site):
    args = _bound(site, "vdot", VDOT)
    if args is None or set(args) != {"other"}:
        return None
    conj = cst.Call(func=site.ref("mindspore.ops.conj"), args=[cst.Arg(site.receiver)])
    new = cst.Call(func=site.ref("mindspore.ops.inner"), args=_args(conj, args["other"]))
    site.edit(VDOT, new, detail=".vdot(y) -> ops.inner(ops.conj(x), y)")
    return new


method("vdot", VDOT, unambiguous=True, sig=("other",), handler=_vdot)


# ----------------------------------------------------------------------------- predicates

register(
    PREDICATES,
    "is_nonzero() becomes bool(x); is_same_size(y) becomes a shape comparison",
    group=GROUP,
    why="""
        ``x.is_nonzero()`` is the truth value of a one-element tensor (an error for any
        other size), ``x.is_same_size(y)`` whether two tensors have the same shape. Neither
        method exists on MindSpore's Tensor; ``bool(x)`` (which raises for more than one
        element there too) and ``x.shape == y.shape`` (tuples in both frameworks) give the
        same Python bools.
    """,
    seed=SEED,
    reference=REF,
    installed_note="Checked on 2.10: Tensor has neither method; bool() of a one-element tensor and shape tuples agree.",
    example="""
        import torch
        x = torch.tensor([0.0])
        y = torch.tensor([[2.5]])
        a = x.is_nonzero()
        b = y.is_nonzero()
        same = x.is_same_size(torch.zeros(1))
        other = x.is_same_size(y)
    """,
)


def _is_nonzero(site):
    if site.updated.args:
        return None
    new = cst.Call(func=cst.Name("bool"), args=[cst.Arg(site.receiver)])
    site.edit(PREDICATES, new, detail=".is_nonzero() -> bool(x)")
    return new


def _is_same_size(site):
    args = _bound(site, "is_same_size", PREDICATES)
    if args is None or set(args) != {"other"}:
        return None
    new = cst.Comparison(
        lpar=[cst.LeftParen()], rpar=[cst.RightParen()],
        left=cst.Attribute(value=site.receiver, attr=cst.Name("shape")),
        comparisons=[cst.ComparisonTarget(cst.Equal(), cst.Attribute(value=args["other"], attr=cst.Name("shape")))])
    site.edit(PREDICATES, new, detail=".is_same_size(y) -> x.shape == y.shape")
    return new


method("is_nonzero", PREDICATES, unambiguous=True, handler=_is_nonzero, returns=None)
method("is_same_size", PREDICATES, unambiguous=True, sig=("other",), handler=_is_same_size, returns=None)


# ----------------------------------------------------------------------------- random draws

RANDOM_FILL = "TNS017"
BERNOULLI = "TNS018"

register(
    RANDOM_FILL,
    "geometric_, cauchy_ and log_normal_ become copy_ of a draw",
    group=GROUP,
    why="""
        These methods overwrite a tensor in place with random draws; MindSpore 2.10's
        Tensor has none of them. As for ``normal_`` (TNS008), the port writes
        ``x.copy_(draw)``, with the draw built from MindSpore's uniform and normal
        generators: ``geometric_(p)`` is ``ceil(log(1 - U) / log(1 - p))`` (the number of
        trials up to the first success, 1, 2, ...; at least 1), ``cauchy_(median=0, sigma=1)`` is
        ``median + sigma * tan(pi * (U - 0.5))`` and ``log_normal_(mean=1, std=2)`` is
        ``exp(mean + std * N)``, the inverse CDFs PyTorch samples with. ``copy_`` casts to
        the receiver's dtype, as the in-place methods keep it. The draws come from
        MindSpore's generator: the distribution is PyTorch's, the values are not (parity
        copies PyTorch's values across). ``generator=`` is flagged, and so is an element,
        slice or computed receiver, as for ``copy_`` (TNS004). (``random_``,
        ``exponential_`` and ``bernoulli_`` are flagged by RNG004.)
    """,
    seed=SEED,
    reference=REF,
    installed_note="""
        Checked on 2.10 (CPU): Tensor has no ``geometric_``, ``cauchy_`` or
        ``log_normal_``; ``ops.rand_like`` and ``ops.randn_like`` draw on CPU (float32 for
        ``randn_like``: ``copy_`` casts).
    """,
    example="""
        import torch
        g = torch.zeros(100)
        g.geometric_(0.3)
        at_least_one = bool((g >= 1).all())
        whole = bool((g == g.floor()).all())
        c = torch.zeros(4, 2, dtype=torch.float64)
        c.cauchy_()
        shape = c.shape
        ln = torch.zeros(50)
        ln.log_normal_(0.0, 0.5)
        positive = bool((ln > 0).all())
    """,
)


def _draw(site, name: str, args: dict, r: str):
    """Text of the draw that fills a tensor like ``r``, or None (with a finding)."""
    ref = lambda t: site.code(site.ref(t)).strip()  # noqa: E731
    arg = lambda k, default: f"({site.code(args[k]).strip()})" if k in args else default  # noqa: E731
    rand = f"{ref('mindspore.ops.rand_like')}({r})"
    if name == "geometric_":
        if "p" not in args:
            return None
        math = site.require_import("math")
        # a draw of exactly 0 would give 0 trials: the first trial succeeds then (clamped to 1)
        return (f"{ref('mindspore.ops.ceil')}({ref('mindspore.ops.log1p')}(-{rand}) / {math}.log1p(-{arg('p', '')}))"
                ".clamp(min=1)")
    if name == "cauchy_":
        math = site.require_import("math")
        return (f"{arg('median', '0.0')} + {arg('sigma', '1.0')} * {ref('mindspore.ops.tan')}"
                f"({math}.pi * ({rand} - 0.5))")
    if name == "log_normal_":
        return f"{ref('mindspore.ops.exp')}({ref('mindspore.ops.randn_like')}({r}) * {arg('std', '2.0')} + {arg('mean', '1.0')})"
    return None


def _random_fill(name: str):
    def handler(site):
        from msmagic.rules.tensor_methods import _view_receiver

        args = _bound(site, name, RANDOM_FILL)
        if args is None:
            return None
        if "generator" in args:
            site.finding(RANDOM_FILL, f"{name}(generator=...): MindSpore draws from its global seed and takes no "
                         "generator", comment=f"Tensor.{name} generator= not ported")
            return None
        if _view_receiver(site, name):
            return None
        recv = site.receiver
        text = _draw(site, name, args, site.code(recv).strip())
        if text is None:
            return None
        new = cst.Call(func=cst.Attribute(value=recv, attr=cst.Name("copy_")), args=[cst.Arg(site.parse(text))])
        site.edit(RANDOM_FILL, new, detail=f".{name}(...) -> .copy_(draw)")
        return new

    return handler


# random_, exponential_ and bernoulli_ belong to RNG004 (flagged)
for _name, _sig in (("geometric_", ("p", "generator")), ("cauchy_", ("median", "sigma", "generator")),
                    ("log_normal_", ("mean", "std", "generator"))):
    method(_name, RANDOM_FILL, unambiguous=True, sig=_sig, handler=_random_fill(_name), returns="same",
           random=True)


register(
    BERNOULLI,
    "x.bernoulli() becomes ops.bernoulli(x, x): the tensor holds the probabilities",
    group=GROUP,
    why="""
        ``x.bernoulli()`` draws 0 or 1 for each element with the element as the
        probability of 1; ``x.bernoulli(p)`` draws with probability ``p`` in ``x``'s shape.
        MindSpore's ``Tensor.bernoulli`` has no CPU kernel (BernoulliExt), and
        ``ops.bernoulli(input, p=0.5)`` takes the shape and dtype from ``input`` and the
        probability from ``p`` (0.5 by default, not the values of ``input``), so the port
        passes the tensor twice: ``mindspore.ops.bernoulli(x, x)``, or
        ``mindspore.ops.bernoulli(x, p)``. The draws come from MindSpore's generator
        (parity copies PyTorch's values); ``generator=`` is flagged.
    """,
    seed=SEED,
    reference=REF,
    installed_note="""
        Checked on 2.10 (CPU): ``Tensor.bernoulli()`` raises "The kernel BernoulliExt
        unregistered"; ``ops.bernoulli(x, x)`` of probabilities 0 and 1 gives 0 and 1
        exactly, and the mean of many draws at 0.3 is near 0.3.
    """,
    example="""
        import torch
        probs = torch.tensor([[0.0, 1.0, 1.0], [1.0, 0.0, 0.0]])
        sure = probs.bernoulli()
        half = torch.zeros(1000).bernoulli(0.5)
        near = bool(abs(half.mean().item() - 0.5) < 0.1)
    """,
)


def _bernoulli(site):
    args = _bound(site, "bernoulli", BERNOULLI)
    if args is None:
        return None
    if "generator" in args:
        site.finding(BERNOULLI, "bernoulli(generator=...): MindSpore draws from its global seed and takes no "
                     "generator", comment="Tensor.bernoulli generator= not ported")
        return None
    recv = site.receiver
    if "p" in args:
        prob = args["p"]
    elif _plain(site.receiver_original):
        prob = recv
    else:
        site.finding(BERNOULLI, "bernoulli() of a computed tensor: bind it to a name first (MindSpore takes the "
                     "probabilities as a second argument)", comment="Tensor.bernoulli not ported")
        return None
    new = cst.Call(func=site.ref("mindspore.ops.bernoulli"), args=_args(recv, prob))
    site.edit(BERNOULLI, new, detail=".bernoulli() -> ops.bernoulli(x, probabilities)")
    return new


method("bernoulli", BERNOULLI, unambiguous=True, sig=("p", "generator"), handler=_bernoulli, random=True)


# ----------------------------------------------------------------------------- unique

UNIQUE = "TNS019"
NO_OP = "TNS020"

register(
    UNIQUE,
    "x.unique() becomes ops.unique(x)[0].sort()[0]",
    group=GROUP,
    why="""
        ``x.unique()`` returns the distinct values of the flattened tensor in ascending
        order. MindSpore's ``Tensor.unique`` has no CPU kernel (Unique2) on 2.10;
        ``ops.unique(x)`` returns ``(values, inverse indices)`` with the values in order
        of first appearance, so the port sorts them:
        ``mindspore.ops.unique(x)[0].sort()[0]``. ``sorted=True`` (the default) is
        accepted; ``return_inverse``, ``return_counts``, ``dim`` and ``sorted=False`` are
        flagged (the inverse indices would have to follow the sort).
    """,
    seed=SEED,
    reference=REF,
    installed_note="""
        Checked on 2.10 (CPU): ``Tensor.unique()`` raises "The kernel Unique2
        unregistered" when read; ``ops.unique`` of an int64 or float32 tensor and of a
        2-D tensor (flattened), sorted, give PyTorch's values; a bool tensor raises.
    """,
    example="""
        import torch
        labels = torch.tensor([[3, 1, 2], [3, 1, 7]])
        classes = labels.unique()
        n = len(labels.flatten().unique(sorted=True))
    """,
)


def _unique(site):
    args = _bound(site, "unique", UNIQUE)
    if args is None:
        return None
    other = set(args) - {"sorted"}
    if other or ("sorted" in args and site.literal(args["sorted"], None) is not True):
        what = ", ".join(sorted(other)) or "sorted=False"
        site.finding(UNIQUE, f"unique({what}) has no faithful MindSpore 2.10 counterpart on CPU (ops.unique gives "
                     "the values in order of appearance and no counts)", comment=f"Tensor.unique {what} not ported")
        return None
    call = cst.Call(func=site.ref("mindspore.ops.unique"), args=[cst.Arg(site.receiver)])
    first = cst.Subscript(value=call, slice=[cst.SubscriptElement(cst.Index(cst.Integer("0")))])
    new = cst.Subscript(value=cst.Call(func=cst.Attribute(value=first, attr=cst.Name("sort"))),
                        slice=[cst.SubscriptElement(cst.Index(cst.Integer("0")))])
    site.edit(UNIQUE, new, detail=".unique() -> ops.unique(x)[0].sort()[0]")
    return new


method("unique", UNIQUE, unambiguous=True, sig=("sorted", "return_inverse", "return_counts", "dim"),
       handler=_unique)


# ----------------------------------------------------------------------------- memory placement

register(
    NO_OP,
    "pin_memory() and share_memory_() are dropped: the values are the tensor's",
    group=GROUP,
    why="""
        ``x.pin_memory()`` copies a tensor into page-locked host memory (for faster copies
        to a GPU) and ``x.share_memory_()`` moves it to shared memory (for worker
        processes); both keep the values, and ``share_memory_`` returns the tensor itself.
        MindSpore has neither: its tensors are placed by the runtime and its data
        pipelines copy what they need. The calls are removed (``x.pin_memory()`` ->
        ``x``), as ``.cuda()`` and ``.cpu()`` are (DEV004). On a machine without an
        accelerator PyTorch's ``pin_memory`` raises, which is why notebooks guard it with
        ``torch.cuda.is_available()``.
    """,
    seed=SEED,
    reference=REF,
    installed_note="Checked on 2.10: Tensor has no pin_memory or share_memory_.",
    example="""
        import torch
        x = torch.arange(6.0).reshape(2, 3)
        x.share_memory_()
        y = x.share_memory_() * 2
        z = x.pin_memory() if torch.cuda.is_available() else x
    """,
)


def _no_op(site):
    if site.updated.args:
        return None
    site.edit(NO_OP, site.receiver, detail=f".{site.original.func.attr.value}() removed")
    return site.receiver


# a receiver of unknown kind is flagged (GEN002): a storage has these methods too
for _name in ("pin_memory", "share_memory_"):
    method(_name, NO_OP, handler=_no_op, returns="same")
