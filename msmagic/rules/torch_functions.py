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
    "In-place function forms (torch.abs_(x)) become the out-of-place port and a rebinding",
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
        (a list display or comprehension of calls), the port is flagged for that reason. A
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
        return all(isinstance(e, cst.Element) and fresh(e.value) for e in value.elements)
    if isinstance(value, cst.ListComp):
        return fresh(value.elt)
    return False


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
