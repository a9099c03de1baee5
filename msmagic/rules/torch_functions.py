"""Top-level ``torch.*`` functions that port through another mapping: the in-place
function forms (``torch.abs_(x)``) and the ``torch._foreach_*`` list functions."""

from __future__ import annotations

import libcst as cst

from msmagic.engine import spec as S
from msmagic.engine.spec import TENSOR, api
from msmagic.rules.api_table import _rebind
from msmagic.rules.registry import register

GROUP = "Torch functions"
REF = "r2.4.10/api_mapping/pytorch_api_mapping.md"


# ----------------------------------------------------------------------------- TFN001

register(
    "TFN001",
    "In-place function forms (torch.abs_(x)) become the out-of-place port, rebound",
    group=GROUP,
    why="""
        ``torch.abs_(x)``, ``torch.relu_(x)``, ``torch.clamp_(x, 0, 1)``... are the function
        spellings of the in-place Tensor methods: they overwrite ``x`` and return it.
        MindSpore 2.10 has no such functions, and its in-place kernels are missing on CPU
        (``InplaceClampTensor``, ``InplaceTanh``... are unregistered). The call is ported
        exactly as its out-of-place form ``torch.abs(x)`` is (the same MindSpore function,
        the same argument handling, the same verified corrections such as ``tanh`` through
        ``sigmoid``), and the name is rebound: ``x = mindspore.ops.abs(x)`` as a statement,
        ``(x := mindspore.ops.abs(x))`` where the value is used. As for in-place methods
        (API003), another reference to the same tensor keeps its old values: inside a
        function the port is flagged for that reason, and an attribute or element
        (``torch.relu_(self.h)``) is flagged and left as PyTorch.
    """,
    seed="seeds/002 API Comparison › functional APIs",
    reference=REF,
    installed_note="""
        Checked on 2.10 (CPU): ``mindspore.ops`` has none of the ``*_`` functions, and the
        in-place Tensor methods ``clamp_``, ``tanh_`` and ``zero_`` raise (kernel
        unregistered); the out-of-place ops give PyTorch's values.
    """,
    example="""
        import torch
        x = torch.linspace(-2, 2, 9)
        torch.abs_(x)
        torch.sqrt_(x)
        y = torch.linspace(-3, 3, 7)
        z = torch.clamp_(y, -1, 1) * 2
        w = torch.linspace(-1, 1, 5)
        torch.zero_(w)
    """,
)

#: torch.X_ -> torch.X: the out-of-place form whose mapping the port reuses
_INPLACE_FUNCTIONS = (
    "abs", "acos", "acosh", "addmv", "arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctanh",
    "asin", "asinh", "atan", "atanh", "ceil", "celu", "clamp", "clamp_max", "clamp_min", "clip",
    "cos", "cosh", "deg2rad", "erf", "erfc", "exp", "exp2", "expm1", "fix", "floor", "frac", "gcd",
    "i0", "lcm", "ldexp", "log", "log10", "log1p", "log2", "logit", "nan_to_num", "neg", "negative",
    "rad2deg", "reciprocal", "relu", "round", "rsqrt", "selu", "sigmoid", "sin", "sinc", "sinh",
    "sqrt", "square", "tan", "tanh", "trunc", "xlogy",
)


def _first_tensor(site):
    """The original expression of the tensor an in-place function updates (its first
    argument, positional or ``input=``), or None."""
    for arg in site.original.args:
        if arg.star:
            return None
        if arg.keyword is None or arg.keyword.value == "input":
            return arg.value
    return None


def _through(site, base_key: str):
    """Port the call as ``base_key`` is ported: its entry's handler, or its target."""
    base = S.APIS.get(base_key)
    if base is None:
        return None
    own = site.entry
    site.entry = base  # the base's argument spec binds and renames the arguments
    try:
        if base.handler is not None:
            return base.handler(site)
        if base.target is None:
            return None
        new = site.apply(func=site.ref(base.target))
        site.edit(base.rule, new, detail=site.describe(f"{base_key} -> {base.target}"))
        return new
    finally:
        site.entry = own


def _inplace(key: str, build):
    def handler(site):
        target = _first_tensor(site)
        if not isinstance(target, cst.Name):
            what = site.code(target).strip() if target is not None else "its argument"
            site.finding("TFN001", f"{key} on {what}: MindSpore has no in-place function and an attribute "
                         "or element cannot be rebound faithfully; assign the out-of-place result yourself",
                         comment=f"{key}: in-place update not ported")
            return None
        new = build(site)
        if new is None:
            return None
        rebound = _rebind(site, key, new, recv=target, rule="TFN001")
        if rebound is None:
            return None
        site.edit("TFN001", rebound, detail=f"{key}: in-place, the name {target.value} is rebound")
        return rebound

    return handler


for _name in _INPLACE_FUNCTIONS:
    api(f"torch.{_name}_", rule="TFN001", sig=("input",), returns=TENSOR,
        handler=_inplace(f"torch.{_name}_", lambda site, _b=f"torch.{_name}": _through(site, _b)))


def _zeros_like(site):
    x = site.updated.args[0].value if site.updated.args else None
    if x is None:
        return None
    new = cst.Call(func=site.ref("mindspore.ops.zeros_like"), args=[cst.Arg(x)])
    site.edit("TFN001", new, detail="torch.zero_(x) -> mindspore.ops.zeros_like(x)")
    return new


api("torch.zero_", rule="TFN001", sig=("input",), returns=TENSOR, handler=_inplace("torch.zero_", _zeros_like))


# ----------------------------------------------------------------------------- TFN002

register(
    "TFN002",
    "torch._foreach_* list functions become list comprehensions",
    group=GROUP,
    why="""
        ``torch._foreach_exp(xs)`` applies ``torch.exp`` to every tensor of the list ``xs``
        in one fused kernel launch (optimizers use them); the result is the list of results.
        MindSpore has no fused list kernels, and the values are those of the element-wise
        function, so the call becomes ``tuple(mindspore.ops.exp(t) for t in xs)`` (a tuple, as
        PyTorch 2.13 returns). The in-place
        form ``torch._foreach_exp_(xs)`` (a statement; it returns None) becomes
        ``xs[:] = [... for t in xs]``: the list object is kept and holds the new tensors.
        PyTorch overwrites the tensors themselves, so another reference to one of them (the
        list built from ``model.parameters()``, a name the tensor was also bound to) keeps
        its old values in MindSpore: unless ``xs`` was built just before from fresh tensors
        (a list display or comprehension of calls) and nothing read it since, the port is
        flagged for that reason. A
        tuple (what the out-of-place functions return) cannot be updated that way: flagged.
    """,
    seed="seeds/002 API Comparison › functional APIs",
    reference=REF,
    installed_note="""
        Checked on 2.10 (CPU): ``mindspore.ops`` has no ``_foreach_*`` functions; the
        element-wise ops used give PyTorch's values within 1e-5 (``exp`` is computed in
        float64 as rule FUN019 does).
    """,
    example="""
        import torch
        xs = [torch.linspace(-1, 1, 5), torch.linspace(0.5, 2, 4)]
        ys = torch._foreach_exp(xs)
        zs = [x * 2 for x in xs]
        torch._foreach_sqrt_(zs)
    """,
)

_FOREACH = (
    "abs", "acos", "asin", "atan", "ceil", "cos", "cosh", "erf", "erfc", "exp", "expm1", "floor", "frac",
    "lgamma", "log", "log10", "log1p", "log2", "neg", "reciprocal", "round", "sigmoid", "sin", "sinh",
    "sqrt", "tan", "trunc",
)


def _element(site, name: str, x):
    """The ported ``torch.<name>(x)`` of one element."""
    if name == "exp":
        from msmagic.rules.functional import _exp_call

        return _exp_call(site, x)
    if name == "zero":
        return cst.Call(func=site.ref("mindspore.ops.zeros_like"), args=[cst.Arg(x)])
    return cst.Call(func=site.ref(f"mindspore.ops.{name}"), args=[cst.Arg(x)])


def _comprehension(site, name: str):
    """``[ops.<name>(t) for t in xs]`` of the call's one list argument, or None."""
    args = site.updated.args
    if len(args) != 1 or args[0].star or (args[0].keyword is not None and args[0].keyword.value != "self"):
        return None
    var = site.fresh_name("t")
    return cst.ListComp(
        elt=_element(site, name, cst.Name(var)),
        for_in=cst.CompFor(target=cst.Name(var), iter=args[0].value),
    )


def _fresh_list(site, target) -> bool:
    """Was the list ``target`` just built from fresh tensors (``[torch.ones(2), ...]``, a
    comprehension of calls, a ``_foreach`` result)? Then no other name holds its tensors."""
    if not isinstance(target, cst.Name):
        return False
    def fresh(node) -> bool:  # a torch factory or function call, or arithmetic: a new tensor
        if isinstance(node, cst.BinaryOperation):
            return True
        if not isinstance(node, cst.Call):
            return False
        if (site.resolve(node.func) or "").startswith("torch."):
            return True
        # a method of a new tensor (``torch.linspace(0, 1, 4).reshape(2, 2)``)
        return isinstance(node.func, cst.Attribute) and fresh(node.func.value)

    value = site.assigned_value(target.value)
    if isinstance(value, cst.List):
        built = all(isinstance(e, cst.Element) and fresh(e.value) for e in value.elements)
    elif isinstance(value, cst.ListComp):
        built = fresh(value.elt)
    else:
        built = False
    return built and not _read_since(site, target.value, value)


def _read_since(site, name: str, value) -> bool:
    """Is ``name`` used, other than as the list of a ``_foreach`` function, between the
    statement that assigned it ``value`` and this one (``first = xs[0]`` holds a tensor
    of the list)? True as well when that assignment is not in this block."""
    before, _ = site.siblings()
    start = next((i for i in range(len(before) - 1, -1, -1)
                  if any(n is value for n in _descendants(before[i]))), None)
    if start is None:
        return True
    for stmt in before[start + 1:]:
        calls = [n for n in _descendants(stmt) if isinstance(n, cst.Call)]
        foreach_args = {id(c.args[0].value) for c in calls if c.args and
                        (site.resolve(c.func) or "").startswith("torch._foreach_")}
        if any(isinstance(n, cst.Name) and n.value == name and id(n) not in foreach_args
               for n in _descendants(stmt)):
            return True
    return False


def _descendants(node):
    yield node
    for child in node.children:
        yield from _descendants(child)


def _a_tuple(site, target) -> bool:
    """Is ``target`` visibly a tuple (a tuple display, a ``torch._foreach_*`` result)?"""
    if not isinstance(target, cst.Name):
        return False
    value = site.assigned_value(target.value)
    if isinstance(value, cst.Tuple):
        return True
    return isinstance(value, cst.Call) and (site.resolve(value.func) or "").startswith("torch._foreach_")


def _foreach(key: str, name: str):
    def handler(site):
        comp = _comprehension(site, name)
        if comp is None:
            site.finding("TFN002", f"{key}: only a call with one list argument is ported",
                         comment=f"{key} not ported")
            return None
        # PyTorch 2.13 returns a tuple
        new = cst.Call(func=cst.Name("tuple"), args=[cst.Arg(cst.GeneratorExp(elt=comp.elt, for_in=comp.for_in, lpar=[], rpar=[]))])
        site.edit("TFN002", new, detail=f"{key}(xs) -> tuple(ops.{name}(t) for t in xs)")
        return new

    return handler


def _foreach_inplace(key: str, name: str):
    def handler(site):
        original = site.original.args[0].value if len(site.original.args) == 1 else None
        if not site.is_statement or not isinstance(original, (cst.Name, cst.Attribute)):
            site.finding("TFN002", f"{key}: ported only as a statement on a list named by a name or an "
                         "attribute (it returns None and updates the list's tensors)",
                         comment=f"{key} not ported")
            return None
        new = _comprehension(site, name)
        if new is None:
            site.finding("TFN002", f"{key}: only a call with one list argument is ported",
                         comment=f"{key} not ported")
            return None
        xs = site.updated.args[0].value
        if _a_tuple(site, original):
            site.finding("TFN002", f"{key}({site.code(original).strip()}): a tuple cannot be updated in place; "
                         "rebind the name to the out-of-place result yourself", comment=f"{key} not ported")
            return None
        if not _fresh_list(site, original):
            what = site.code(original).strip()
            site.finding("TFN002", f"{key}({what}) is ported as `{what}[:] = [...]`: the list holds the new "
                         "tensors, but another reference to one of its tensors (a model's parameter, "
                         "another name) keeps the old values, where PyTorch updates the tensors themselves",
                         comment=f"{key}: only the list {what} is updated")

        def assign(line):
            body = []
            for stmt in line.body:
                if isinstance(stmt, cst.Expr) and stmt.value is new:
                    target = cst.Subscript(value=xs, slice=[cst.SubscriptElement(cst.Slice(lower=None, upper=None))])
                    stmt = cst.Assign(targets=[cst.AssignTarget(target)], value=new, semicolon=stmt.semicolon)
                body.append(stmt)
            return line.with_changes(body=body)

        site.replace_line(assign)
        site.edit("TFN002", new, detail=f"{key}(xs) -> xs[:] = [ops.{name}(t) for t in xs]")
        return new

    return handler


for _name in _FOREACH:
    api(f"torch._foreach_{_name}", rule="TFN002", sig=("self",), returns=None, handler=_foreach(
        f"torch._foreach_{_name}", _name))
    api(f"torch._foreach_{_name}_", rule="TFN002", sig=("self",), returns=None, handler=_foreach_inplace(
        f"torch._foreach_{_name}_", _name))
api("torch._foreach_zero_", rule="TFN002", sig=("self",), returns=None,
    handler=_foreach_inplace("torch._foreach_zero_", "zero"))


# ----------------------------------------------------------------------------- TFN003

register(
    "TFN003",
    "torch functions MindSpore spells another way: a method, a composition, a helper",
    group=GROUP,
    why="""
        These ``torch.*`` functions have no same-named MindSpore function that computes
        the same thing on the installed version, but a short faithful spelling exists:
        ``torch.clone(x)`` is ``x.copy()`` (MindSpore's ``clone`` kernel is not registered
        on CPU, rule FUN016); ``torch.select(x, d, i)`` and ``torch.take(x, i)`` are the
        verified Tensor methods ``x.select(d, i)`` and ``x.take(i)``;
        ``torch.complex(re, im)`` is ``ops.Complex()(re, im)``; ``torch.chain_matmul(a, b,
        c)`` is ``ops.matmul(ops.matmul(a, b), c)``; ``torch.cartesian_prod(a)`` of one
        tensor is that tensor (``ops.cartesian_prod`` returns a column there);
        ``torch.meshgrid`` passes PyTorch's default ``indexing='ij'`` (MindSpore's default
        is ``'xy'``) and spreads a list of tensors (``ops.meshgrid`` takes them one by
        one). ``torch.bitwise_not`` becomes a helper that takes ``ops.logical_not`` for a
        bool tensor and ``-x - 1`` (the two's-complement identity of ``~x``, wrapping as
        PyTorch does for every integer dtype) otherwise: ``ops.invert`` is deprecated on
        2.10 and refuses bool, and ``~`` of an integer tensor is a logical not there; ``torch.vdot`` a helper that
        conjugates a complex first argument and sums the products (``mint.vdot`` is not
        implemented on CPU); ``torch.unflatten`` a helper that reshapes;
        ``torch.range(start, end, step)`` (deprecated; ``end`` included, float32 by
        default) a helper that computes ``start + i * step`` in float64 for PyTorch's
        ``int((end - start) / step) + 1`` values and casts to the dtype asked for;
        ``torch.view_as_complex`` a helper calling ``ops.Complex`` on the last axis's two
        halves (a new tensor, not a view); ``torch.kthvalue`` a helper that sorts and takes
        the k-th values and their int64 indices (where the k-th value is tied, the index
        may be another of its positions: said by a finding, API006). ``torch.nonzero(x)`` is ``ops.argwhere(x)``
        (MindSpore's ``nonzero`` kernel is not registered on CPU), and with
        ``as_tuple=True`` its columns, unbound. ``torch.blackman_window(n)`` and
        ``torch.bartlett_window(n)`` pass the length as a tensor (MindSpore 2.10 refuses a
        Python int there) and PyTorch's float32 as dtype. ``torch._assert(cond, msg)``
        becomes a helper raising ``AssertionError(msg)`` unless ``cond`` holds.
    """,
    seed="seeds/002 API Comparison › functional APIs",
    reference=REF,
    installed_note="""
        Checked on 2.10 (CPU): ``mint.clone``, ``mint.vdot``, ``mint.bitwise_not`` raise
        (kernel unregistered / not implemented); ``ops.invert`` refuses bool tensors (and
        is deprecated);
        ``ops.meshgrid`` refuses a list; ``ops.cartesian_prod(a)`` returns shape (n, 1)
        where PyTorch returns (n,).
    """,
    example="""
        import torch
        x = torch.arange(6.0).reshape(2, 3)
        a = torch.clone(x)
        b = torch.select(x, 1, 2)
        c = torch.bitwise_not(torch.tensor([True, False]))
        d = torch.bitwise_not(torch.tensor([3, -1]))
        gx, gy = torch.meshgrid(torch.arange(3.0), torch.arange(2.0))
        e = torch.chain_matmul(x, x.T, x)
        f = torch.vdot(torch.tensor([1.0, 2.0]), torch.tensor([3.0, -1.0]))
        g = torch.unflatten(x, 1, (3, 1))
        h = torch.range(0, 1, 0.25)
    """,
)


def _atom(node):
    """``node`` wrapped in parentheses unless it can take ``.attr`` as it is."""
    if isinstance(node, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)) or getattr(node, "lpar", None):
        return node
    return node.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def _positional(site):
    """The updated positional arguments, or None when a keyword or ``*`` is there."""
    args = site.updated.args
    if any(a.keyword is not None or a.star for a in args):
        return None
    return [a.value for a in args]


def _plain_args(args):
    out = []
    for i, a in enumerate(args):
        comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")) if i < len(args) - 1 else cst.MaybeSentinel.DEFAULT
        out.append(a.with_changes(comma=comma))
    return out


def _as_method(name: str, arity: int, keywords=()):
    """``torch.name(x, *rest)`` -> ``x.name(*rest)`` (``rest``: positional or ``keywords``)."""
    def handler(site):
        args = list(site.updated.args)
        if not args or args[0].keyword is not None or args[0].star or any(a.star for a in args) or \
                len([a for a in args if a.keyword is None]) > arity or \
                any(a.keyword is not None and a.keyword.value not in keywords for a in args):
            site.finding("TFN003", f"{site.api}: only the call with PyTorch's positional arguments is ported",
                         comment=f"{site.api} not ported")
            return None
        new = cst.Call(func=cst.Attribute(value=_atom(args[0].value), attr=cst.Name(name)),
                       args=_plain_args(args[1:]))
        site.edit("TFN003", new, detail=f"{site.api}(x, ...) -> x.{name}(...)")
        return new

    return handler


def _clone(site):
    args = list(site.updated.args)
    extra = [a for a in args[1:] if not (a.keyword is not None and a.keyword.value == "memory_format")]
    if not args or args[0].keyword is not None or args[0].star or extra:
        site.finding("TFN003", f"{site.api}: only torch.clone(x) is ported", comment=f"{site.api} not ported")
        return None
    if len(args) > 1:
        site.finding("TFN003", "memory_format= has no MindSpore counterpart (tensors are always contiguous); "
                     "it was removed", comment="memory_format removed")
    new = cst.Call(func=cst.Attribute(value=_atom(args[0].value), attr=cst.Name("copy")), args=[])
    site.edit("TFN003", new, detail="torch.clone(x) -> x.copy()")
    return new


api("torch.clone", rule="TFN003", sig=("input",), returns=TENSOR, handler=_clone)
api("torch.select", rule="TFN003", sig=("input", "dim", "index"), returns=TENSOR, handler=_as_method("select", 3))
api("torch.take", rule="TFN003", sig=("input", "index"), returns=TENSOR, handler=_as_method("take", 2))


def _complex(site):
    args = _positional(site)
    if args is None or len(args) != 2:
        site.finding("TFN003", "torch.complex: only torch.complex(real, imag) is ported", comment="not ported")
        return None
    prim = cst.Call(func=site.ref("mindspore.ops.Complex"), args=[])
    new = cst.Call(func=prim, args=_plain_args([cst.Arg(a) for a in args]))
    site.edit("TFN003", new, detail="torch.complex(re, im) -> ops.Complex()(re, im)")
    return new


api("torch.complex", rule="TFN003", sig=("real", "imag"), returns=TENSOR, handler=_complex)


def _chain_matmul(site):
    args = _positional(site)
    if not args:
        site.finding("TFN003", "torch.chain_matmul: only matrices passed one by one are ported",
                     comment="not ported")
        return None
    new = args[0]
    for m in args[1:]:
        new = cst.Call(func=site.ref("mindspore.ops.matmul"), args=_plain_args([cst.Arg(new), cst.Arg(m)]))
    site.edit("TFN003", new, detail="torch.chain_matmul(a, b, ...) -> ops.matmul(ops.matmul(a, b), ...)")
    return new


api("torch.chain_matmul", rule="TFN003", sig=(), returns=TENSOR, handler=_chain_matmul)


def _cartesian_prod(site):
    args = _positional(site)
    if not args:
        site.finding("TFN003", "torch.cartesian_prod: only tensors passed one by one are ported",
                     comment="not ported")
        return None
    if len(args) == 1:
        new = args[0]
        site.edit("TFN003", new, detail="torch.cartesian_prod(a) -> a")
        return new
    new = cst.Call(func=site.ref("mindspore.ops.cartesian_prod"), args=_plain_args([cst.Arg(a) for a in args]))
    site.edit("TFN003", new, detail="torch.cartesian_prod -> mindspore.ops.cartesian_prod")
    return new


api("torch.cartesian_prod", rule="TFN003", sig=(), returns=TENSOR, handler=_cartesian_prod)


def _meshgrid(site):
    args = list(site.updated.args)
    originals = list(site.original.args)
    pos = [(a, o) for a, o in zip(args, originals) if a.keyword is None]
    kws = [a for a in args if a.keyword is not None]
    if any(a.star == "**" for a in args) or any(a.keyword.value != "indexing" for a in kws):
        site.finding("TFN003", "torch.meshgrid: only tensors (or one list of them) and indexing= are ported",
                     comment="not ported")
        return None
    tensors = []
    if len(pos) == 1 and not pos[0][0].star:
        value, original = pos[0][0].value, pos[0][1].value
        if isinstance(value, (cst.List, cst.Tuple)):
            tensors = [cst.Arg(e.value, star="*" if isinstance(e, cst.StarredElement) else "")
                       for e in value.elements]
        elif site.kind_of(original) == TENSOR:
            tensors = [cst.Arg(value)]
        else:
            site.finding("TFN003", f"torch.meshgrid({site.code(original).strip()}): the port cannot tell whether "
                         "this is one tensor or a list of tensors (ops.meshgrid takes them one by one)",
                         comment="meshgrid argument unknown")
            return None
    else:
        tensors = [cst.Arg(a.value, star=a.star) for a, _ in pos]
    indexing = kws[0].value if kws else cst.SimpleString("'ij'")
    new = cst.Call(func=site.ref("mindspore.ops.meshgrid"),
                   args=_plain_args(tensors + [cst.Arg(indexing, keyword=cst.Name("indexing"),
                                                       equal=cst.AssignEqual(
                                                           whitespace_before=cst.SimpleWhitespace(""),
                                                           whitespace_after=cst.SimpleWhitespace("")))]))
    site.edit("TFN003", new, detail="torch.meshgrid -> mindspore.ops.meshgrid(..., indexing='ij' unless given)")
    return new


for _name in ("torch.meshgrid", "torch.functional.meshgrid"):
    api(_name, rule="TFN003", sig=(), returns=None, handler=_meshgrid)


def _helper_call(name: str, source, detail: str, allowed=None, drop=()):
    """``torch.f(...)`` -> ``helper(...)`` (the same arguments), the helper defined in the
    cell by ``source(site, name) -> text``; ``allowed``: the keywords it takes."""
    def handler(site):
        args = [a for a in site.updated.args if not (a.keyword is not None and a.keyword.value in drop)]
        bad = [a.keyword.value for a in args if a.keyword is not None and allowed is not None
               and a.keyword.value not in allowed]
        if bad or any(a.star == "**" for a in args):
            site.finding("TFN003", f"{site.api}: {', '.join(b + '=' for b in bad) or '**'} not ported",
                         comment=f"{site.api} not ported")
            return None
        helper = site.define(name, lambda n: source(site, n))
        new = cst.Call(func=cst.Name(helper), args=_plain_args(args))
        site.edit("TFN003", new, detail=detail.format(helper=helper))
        return new

    return handler


def _ms(site) -> str:
    return site.code(site.ref("mindspore"))


def _bitwise_not_source(site, n):
    ms = _ms(site)
    return (f"def {n}(input):\n"
            f'    """torch.bitwise_not: a logical not for bool tensors, a bitwise not otherwise."""\n'
            f"    if input.dtype == {ms}.bool_:\n"
            f"        return {ms}.ops.logical_not(input)\n"
            f"    return -input - 1  # two's complement: ~x, for signed and unsigned integers\n")


def _vdot_source(site, n):
    ms = _ms(site)
    return (f"def {n}(input, other):\n"
            f'    """torch.vdot: the sum of conj(input) * other for 1-D tensors."""\n'
            f"    if {ms}.ops.is_complex(input):\n"
            f"        input = {ms}.ops.conj(input)\n"
            f"    return (input * other).sum()\n")


def _unflatten_source(site, n):
    return (f"def {n}(input, dim, sizes):\n"
            f'    """torch.unflatten: dimension dim of input reshaped to sizes."""\n'
            f"    dim = dim % input.ndim\n"
            f"    return input.reshape(tuple(input.shape[:dim]) + tuple(sizes) + tuple(input.shape[dim + 1:]))\n")


def _range_source(site, n):
    ms = _ms(site)
    return (f"def {n}(start, end, step=1, dtype=None):\n"
            f'    """torch.range: start + i * step for the int((end - start) / step) + 1 values up to end\n'
            f'    included, computed in float64; float32 unless dtype is given."""\n'
            f"    count = int((end - start) / step) + 1\n"
            f"    values = {ms}.ops.arange(0, count, dtype={ms}.float64) * step + start\n"
            f"    return values.astype({ms}.float32 if dtype is None else dtype)\n")


api("torch.bitwise_not", rule="TFN003", sig=("input",), returns=TENSOR,
    handler=_helper_call("bitwise_not", _bitwise_not_source, "torch.bitwise_not -> {helper} (logical_not / -x - 1)",
                         allowed=()))
api("torch.vdot", rule="TFN003", sig=("input", "other"), returns=TENSOR,
    handler=_helper_call("vdot", _vdot_source, "torch.vdot -> {helper}", allowed=()))
api("torch.unflatten", rule="TFN003", sig=("input", "dim", "sizes"), returns=TENSOR,
    handler=_helper_call("unflatten", _unflatten_source, "torch.unflatten -> {helper} (a reshape)",
                         allowed=("input", "dim", "sizes")))
api("torch.range", rule="TFN003", sig=("start", "end", "step"), returns=TENSOR,
    handler=_helper_call("range_inclusive", _range_source, "torch.range -> {helper} (end included)",
                         allowed=("start", "end", "step", "dtype"), drop=("device",)))


# ----------------------------------------------------------------------------- TFN004

register(
    "TFN004",
    "Shapes and dtype facts: torch.Size, broadcast_shapes/tensors, finfo, iinfo",
    group=GROUP,
    why="""
        A MindSpore tensor's ``shape`` is a plain tuple, so ``torch.Size(s)`` becomes
        ``tuple(s)`` (and ``torch.Size`` used as a type, ``isinstance(s, torch.Size)``,
        becomes ``tuple``). ``torch.broadcast_shapes(*shapes)`` is NumPy's
        ``numpy.broadcast_shapes`` (a tuple of ints, as PyTorch's ``torch.Size`` compares);
        ``torch.broadcast_tensors(*tensors)`` becomes a helper that broadcasts each tensor
        to that shape with ``ops.broadcast_to`` and returns the tuple. MindSpore has no
        ``finfo``/``iinfo``: ``torch.finfo(dtype)`` and ``torch.iinfo(dtype)`` become helpers
        that read NumPy's ``finfo``/``iinfo`` of the MindSpore dtype (by its name:
        ``Float32`` is NumPy's ``float32``) and give PyTorch's attributes as Python numbers
        (``bits``, ``eps``, ``max``, ``min``, ``tiny``, ``smallest_normal``,
        ``resolution``; ``dtype`` as its name); ``torch.finfo()`` is that of float32,
        PyTorch's default dtype. ``bfloat16`` has no NumPy type: that call raises.
    """,
    seed="seeds/002 API Comparison › functional APIs",
    reference=REF,
    installed_note="""
        Checked on 2.10: ``Tensor.shape`` is a tuple; the lower-cased names of float16/32/64
        and the integer dtypes are NumPy's (``mindspore.dtype_to_nptype`` is deprecated).
    """,
    example="""
        import torch
        x = torch.ones(2, 1, 3)
        s = torch.Size([2, 3])
        same = x.shape[1:] == torch.Size([1, 3])
        b = torch.broadcast_shapes((2, 1), (1, 3))
        p, q = torch.broadcast_tensors(torch.ones(2, 1), torch.arange(3.0))
        eps = torch.finfo(torch.float32).eps
        big = torch.iinfo(torch.int64).max
    """,
)


def _size(site):
    args = _positional(site)
    if args is None or len(args) > 1:
        site.finding("TFN004", "torch.Size: only torch.Size(sizes) is ported", comment="not ported")
        return None
    new = cst.Call(func=cst.Name("tuple"), args=[cst.Arg(a) for a in args])
    site.edit("TFN004", new, detail="torch.Size(s) -> tuple(s)")
    return new


def _size_value(site):
    new = cst.Name("tuple")
    site.edit("TFN004", new, detail="torch.Size -> tuple (a MindSpore shape is a tuple)")
    return new


api("torch.Size", rule="TFN004", sig=("sizes",), returns=None, handler=_size, as_value=_size_value)


def _broadcast_shapes(site):
    if any(a.keyword is not None or a.star == "**" for a in site.updated.args):
        site.finding("TFN004", f"{site.api}: only shapes passed one by one are ported", comment="not ported")
        return None
    np_name = site.require_import("numpy")
    new = site.updated.with_changes(func=cst.Attribute(value=cst.Name(np_name), attr=cst.Name("broadcast_shapes")))
    site.edit("TFN004", new, detail=f"{site.api} -> numpy.broadcast_shapes")
    return new


for _name in ("torch.broadcast_shapes", "torch.functional.broadcast_shapes"):
    api(_name, rule="TFN004", sig=(), returns=None, handler=_broadcast_shapes)


def _broadcast_tensors(site):
    if any(a.keyword is not None or a.star == "**" for a in site.updated.args):
        site.finding("TFN004", "torch.broadcast_tensors: only tensors passed one by one are ported",
                     comment="not ported")
        return None
    np_name = site.require_import("numpy")
    ms = _ms(site)
    helper = site.define("broadcast_tensors", lambda n: (
        f"def {n}(*tensors):\n"
        f'    """torch.broadcast_tensors: each tensor broadcast to their common shape."""\n'
        f"    shape = {np_name}.broadcast_shapes(*(tuple(t.shape) for t in tensors))\n"
        f"    return tuple({ms}.ops.broadcast_to(t, shape) for t in tensors)\n"))
    new = cst.Call(func=cst.Name(helper), args=_plain_args(list(site.updated.args)))
    site.edit("TFN004", new, detail=f"torch.broadcast_tensors -> {helper}")
    return new


api("torch.broadcast_tensors", rule="TFN004", sig=(), returns=None, handler=_broadcast_tensors)


def _info(kind: str):
    attrs = ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution") if kind == "finfo" else (
        "bits", "max", "min")

    def handler(site):
        args = list(site.updated.args)
        if len(args) > 1 or any(a.star or (a.keyword is not None and a.keyword.value != "type") for a in args):
            site.finding("TFN004", f"{site.api}: only {site.api}(dtype) is ported", comment="not ported")
            return None
        if not args and kind == "iinfo":
            return None
        np_name = site.require_import("numpy")
        ms = _ms(site)
        default = f"{ms}.float32" if kind == "finfo" else None
        fields = ", ".join(f"{a}={'int' if a == 'bits' or kind == 'iinfo' else 'float'}(info.{a})" for a in attrs)

        def source(n):
            head = f"def {n}(type={default}):\n" if default else f"def {n}(type):\n"
            return (head +
                    f'    """torch.{kind}: NumPy\'s {kind} of the MindSpore dtype, as Python numbers."""\n'
                    f"    import types\n"
                    f"    info = {np_name}.{kind}(str(type).lower())  # mindspore.float32 -> 'float32'\n"
                    f"    return types.SimpleNamespace({fields}, dtype=str(info.dtype))\n")

        helper = site.define(kind, source)
        new = cst.Call(func=cst.Name(helper), args=[a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in args])
        site.edit("TFN004", new, detail=f"{site.api} -> {helper} (NumPy's {kind})")
        return new

    return handler


api("torch.finfo", rule="TFN004", sig=("type",), returns=None, handler=_info("finfo"))
api("torch.iinfo", rule="TFN004", sig=("type",), returns=None, handler=_info("iinfo"))


def _view_as_complex_source(site, n):
    ms = _ms(site)
    return (f"def {n}(input):\n"
            f'    """torch.view_as_complex: the last dimension (of size 2) as real and imaginary parts\n'
            f'    (a new tensor: MindSpore has no complex views)."""\n'
            f"    return {ms}.ops.Complex()(input[..., 0], input[..., 1])\n")


def _kthvalue_source(site, n):
    ms = _ms(site)
    return (f"def {n}(input, k, dim=-1, keepdim=False):\n"
            f'    """torch.kthvalue: the k-th smallest values along dim and their int64 indices."""\n'
            f"    values, indices = {ms}.ops.sort(input, axis=dim)\n"
            f"    values = values.narrow(dim, k - 1, 1)\n"
            f"    indices = indices.narrow(dim, k - 1, 1).astype({ms}.int64)\n"
            f"    if not keepdim:\n"
            f"        values, indices = values.squeeze(dim), indices.squeeze(dim)\n"
            f"    return values, indices\n")


api("torch.view_as_complex", rule="TFN003", sig=("input",), returns=TENSOR,
    handler=_helper_call("view_as_complex", _view_as_complex_source, "torch.view_as_complex -> {helper}",
                         allowed=()))
_kthvalue_port = _helper_call("kthvalue", _kthvalue_source, "torch.kthvalue -> {helper} (a sort)",
                              allowed=("input", "k", "dim", "keepdim"))


def _kthvalue(site):
    new = _kthvalue_port(site)
    if new is not None:
        site.finding("API006", "torch.kthvalue: the values are PyTorch's; where the k-th value occurs more "
                     "than once, the index may be another of its positions (PyTorch does not specify which)",
                     comment="kthvalue: index of a tied value may differ")
    return new


api("torch.kthvalue", rule="TFN003", sig=("input", "k", "dim", "keepdim"), returns=None, handler=_kthvalue)


def _nonzero(site):
    args = list(site.updated.args)
    pos = [a for a in args if a.keyword is None]
    kws = {a.keyword.value: a for a in args if a.keyword is not None}
    if len(pos) != 1 or pos[0].star or set(kws) - {"as_tuple"}:
        site.finding("TFN003", "torch.nonzero: only torch.nonzero(x) and as_tuple= are ported", comment="not ported")
        return None
    as_tuple = False
    if "as_tuple" in kws:
        as_tuple = site.literal(kws["as_tuple"].value, None)
        if as_tuple not in (True, False):
            site.finding("TFN003", "torch.nonzero: as_tuple= must be a literal True or False to be ported",
                         comment="as_tuple not a literal")
            return None
    new = cst.Call(func=site.ref("mindspore.ops.argwhere"), args=[cst.Arg(pos[0].value)])
    if as_tuple:
        new = cst.Call(func=cst.Name("tuple"), args=[cst.Arg(cst.Call(
            func=site.ref("mindspore.ops.unbind"),
            args=_plain_args([cst.Arg(new), cst.Arg(cst.Integer("1"))])))])
    site.edit("TFN003", new, detail="torch.nonzero -> mindspore.ops.argwhere" + (" unbound by column" if as_tuple else ""))
    return new


api("torch.nonzero", rule="TFN003", sig=("input",), returns=None, handler=_nonzero)


def _window_length_tensor(target: str):
    """``torch.blackman_window(n, ...)`` -> ``ops.blackman_window(mindspore.tensor(n), ...)``:
    MindSpore 2.10 takes the length as a tensor there."""
    def handler(site):
        args = [a for a in site.updated.args if not (a.keyword is not None and a.keyword.value == "device")]
        if not args or args[0].keyword is not None or args[0].star or any(
                a.keyword is not None and a.keyword.value not in ("periodic", "dtype") for a in args):
            site.finding("TFN003", f"{site.api}: only the length, periodic= and dtype= are ported",
                         comment=f"{site.api} not ported")
            return None
        ms = _ms(site)
        length = site.parse(f"{ms}.tensor({site.code(args[0].value).strip()}, {ms}.int64)")
        rest = list(args[1:])
        if not any(a.keyword is not None and a.keyword.value == "dtype" for a in rest):
            rest.append(cst.Arg(site.ref("mindspore.float32"), keyword=cst.Name("dtype"),
                                equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                                                      whitespace_after=cst.SimpleWhitespace(""))))
        new = cst.Call(func=site.ref(target), args=_plain_args([cst.Arg(length)] + rest))
        site.edit("TFN003", new, detail=f"{site.api} -> {target} (the length as a tensor)")
        return new

    return handler


for _name in ("blackman_window", "bartlett_window"):
    api(f"torch.{_name}", rule="TFN003", sig=("window_length", "periodic"), returns=TENSOR,
        handler=_window_length_tensor(f"mindspore.ops.{_name}"))


# ----------------------------------------------------------------------------- TFN005

register(
    "TFN005",
    "torch.* loss functions take reduction as an int and default to no reduction",
    group=GROUP,
    why="""
        ``torch.margin_ranking_loss``, ``torch.cosine_embedding_loss`` and
        ``torch.hinge_embedding_loss`` are the ATen forms of the ``F.*`` losses: their
        ``reduction`` is an int (0: ``'none'``, 1: ``'mean'``, 2: ``'sum'``) and, called
        without it, PyTorch 2.13 returns the loss of every element (no reduction), where
        the ``F.*`` functions and MindSpore's ``ops.*`` average. The call becomes the
        MindSpore loss with the arguments in the same order and ``reduction`` spelled as
        the string, ``'none'`` when the call does not pass one. A reduction that is not a
        literal int is flagged.
    """,
    seed="seeds/002 API Comparison › functional APIs",
    reference=REF,
    installed_note="""
        Checked on torch 2.13: ``torch.margin_ranking_loss(a, b, t)`` returns one loss per
        element, ``torch.margin_ranking_loss(a, b, t, 0.0, 1)`` their mean.
    """,
    example="""
        import torch
        a = torch.tensor([1.0, 2.0, -1.0])
        b = torch.tensor([0.5, 3.0, 1.0])
        t = torch.tensor([1.0, 1.0, -1.0])
        each = torch.margin_ranking_loss(a, b, t)
        mean = torch.margin_ranking_loss(a, b, t, 0.1, 1)
    """,
)

_REDUCTIONS = {0: "'none'", 1: "'mean'", 2: "'sum'"}


def _aten_loss(target: str, sig: tuple):
    def handler(site):
        bound = site.bound()
        if bound is None or any(p is None for p, _, _ in bound):
            site.finding("TFN005", f"{site.api}: only PyTorch's arguments by position or name are ported",
                         comment=f"{site.api} not ported")
            return None
        by_name = {p: a for p, a, _ in bound}
        reduction = "'none'"
        if "reduction" in by_name:
            value = site.literal(by_name["reduction"].value, None)
            if value not in _REDUCTIONS or isinstance(value, bool):
                site.finding("TFN005", f"{site.api}: reduction= is not a literal 0, 1 or 2",
                             comment="reduction not a literal")
                return None
            reduction = _REDUCTIONS[value]
        names = [p for p in sig[:-1] if p in by_name]
        if names != list(sig[:len(names)]) or len(names) < len(sig) - 2:
            # a tensor missing, or the margin skipped: not PyTorch's call
            site.finding("TFN005", f"{site.api}: only calls passing the tensors (and the margin) are ported",
                         comment=f"{site.api} not ported")
            return None
        args = [cst.Arg(by_name[p].value) for p in names]
        args.append(cst.Arg(site.parse(reduction), keyword=cst.Name("reduction"),
                            equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                                                  whitespace_after=cst.SimpleWhitespace(""))))
        new = cst.Call(func=site.ref(target), args=_plain_args(args))
        site.edit("TFN005", new, detail=f"{site.api} -> {target} (reduction={reduction})")
        return new

    return handler


for _name, _sig in (("margin_ranking_loss", ("input1", "input2", "target", "margin", "reduction")),
                    ("cosine_embedding_loss", ("input1", "input2", "target", "margin", "reduction")),
                    ("hinge_embedding_loss", ("self", "target", "margin", "reduction"))):
    api(f"torch.{_name}", rule="TFN005", sig=_sig, returns=TENSOR,
        handler=_aten_loss(f"mindspore.ops.{_name}", _sig))


def _assert_source(site, n):
    return (f"def {n}(condition, message):\n"
            f'    """torch._assert: AssertionError(message) unless condition holds."""\n'
            f"    if not condition:\n"
            f"        raise AssertionError(message)\n")


api("torch._assert", rule="TFN003", sig=("condition", "message"), returns=None,
    handler=_helper_call("torch_assert", _assert_source, "torch._assert -> {helper}",
                         allowed=("condition", "message")))
