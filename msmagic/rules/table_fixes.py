"""Table fixes: APIs the data table flagged because the same-named MindSpore API
computed something else on PyTorch's samples, ported here with the logic a faithful
port needs (another default, a result cast, a rebinding with the receiver's dtype).

These entries take precedence over the table's entries of the same key (the table no
longer lists them); like the table's, they are verified on PyTorch's ``op_db`` samples
by ``python -m msmagic.apis.harness``.
"""

from __future__ import annotations

import libcst as cst

from msmagic.engine.spec import TENSOR, api, method
from msmagic.rules.api_table import cast_result, check_pattern, _rebind
from msmagic.rules.registry import register

GROUP = "Table fixes"
SEED = "seeds/002 API Comparison"
REF = "r2.4.10/api_mapping/pytorch_api_mapping.md"

# ----------------------------------------------------------------------------- TBL001

register(
    "TBL001",
    "std and var: PyTorch's unbiased/correction is MindSpore's ddof (default 0)",
    group=GROUP,
    seed=SEED,
    reference=REF,
    why="""
        PyTorch's ``std``, ``var``, ``std_mean`` and ``var_mean`` divide by N - 1 unless
        told otherwise (``unbiased=True``, or ``correction=1``). MindSpore's counterparts
        take the correction as ``ddof`` and default it to 0: the population statistic,
        slightly smaller values for the same call. The port writes ``ddof=1`` when the
        call gives neither argument, turns ``unbiased``/``correction`` into ``ddof``, and
        ``dim``/``keepdim`` into ``axis``/``keepdims``. PyTorch's legacy form
        ``x.std(False)`` (a bool where the dimension goes) is the ``unbiased`` flag.
    """,
    installed_note="""
        Verified on 2.10 (CPU): ``x.std()`` and ``ops.std(x)`` use ddof=0; ``ddof=1``
        (or ``ddof=True``) gives PyTorch's values, also with ``axis=`` and ``keepdims=``.
        ``mint.std`` (PyTorch's signature) has no CPU kernel.
    """,
    example="""
        import torch
        x = torch.linspace(-1, 2, 12).reshape(3, 4)
        s = x.std()
        v = torch.var(x, dim=1, keepdim=True)
        sd, mean = torch.std_mean(x, 0)
        pop = x.var(unbiased=False)
    """,
)


def _bool_dim(site, arg):
    """``x.std(True)``: a bool where the dimension goes is PyTorch's ``unbiased``."""
    value = site.literal(arg.value)
    if isinstance(value, bool):
        return "ddof", cst.Integer(str(int(value)))
    return None


def _unbiased(site, arg):
    value = site.literal(arg.value)
    if isinstance(value, bool):
        return cst.Integer(str(int(value)))
    return None  # an expression: a bool is an int in MindSpore's ddof


def _with_pattern_check(key: str, rule: str, target=None):
    def handler(site):
        check_pattern(site, key)
        func = site.ref(target) if target else site.updated.func
        new = site.apply(func=func)
        site.edit(rule, new, detail=site.describe(f"{key} -> {target}" if target else ""))
        return new

    return handler


_STD_RENAME = {"dim": "axis", "keepdim": "keepdims", "unbiased": "ddof", "correction": "ddof"}
_STD_VALUES = {"dim": _bool_dim, "unbiased": _unbiased}
_STD_UNSUPPORTED = {"out": "MindSpore functions return new tensors"}

for _name in ("std", "var", "std_mean", "var_mean"):
    api(f"torch.{_name}", f"mindspore.ops.{_name}", rule="TBL001",
        sig=("input", "dim", "unbiased", "keepdim"), ms_sig=("input", "axis", "ddof", "keepdims"),
        rename=dict(_STD_RENAME), values=dict(_STD_VALUES), defaults={"ddof": "1"},
        unsupported=dict(_STD_UNSUPPORTED), returns=None if _name.endswith("_mean") else TENSOR,
        handler=_with_pattern_check(f"torch.{_name}", "TBL001", f"mindspore.ops.{_name}"))
def _torch_statistic_keywords(site) -> bool:
    """``x.var(dim, keepdim=True)`` on a receiver the port cannot type: ``keepdim=``,
    ``unbiased=``, ``correction=`` and ``dim=`` are PyTorch's spellings (NumPy's and
    pandas' ``var``/``std`` take ``axis``/``keepdims``/``ddof``), so the receiver is a
    tensor. Left as written, MindSpore 2.10 would fail lazily (no CPU ``Var`` kernel)."""
    return any(a.keyword is not None and a.keyword.value in ("keepdim", "unbiased", "correction", "dim")
               for a in site.original.args)


for _name in ("std", "var"):
    method(_name, "TBL001", receiver=TENSOR, sig=("dim", "unbiased", "keepdim"), unambiguous=_torch_statistic_keywords,
           flag_unknown=True,
           ms_sig=("axis", "ddof", "keepdims"), rename=dict(_STD_RENAME), values=dict(_STD_VALUES),
           defaults={"ddof": "1"}, handler=_with_pattern_check(f"Tensor.{_name}", "TBL001"))

# ----------------------------------------------------------------------------- TBL002

register(
    "TBL002",
    "In-place comparisons keep the tensor's dtype",
    group=GROUP,
    seed=SEED,
    reference=REF,
    why="""
        PyTorch's in-place comparisons and logical operations (``x.eq_(y)``, ``x.lt_(0)``,
        ``x.logical_and_(m)``...) write the 0/1 result into ``x`` itself, so ``x`` keeps
        its dtype: a float tensor holds 1.0 and 0.0 afterwards. MindSpore's out-of-place
        comparison returns a bool tensor, and its same-named in-place methods do not
        update the tensor. The port computes the comparison, casts it to the receiver's
        dtype and rebinds the name: ``x = x.eq(y).astype(x.dtype)`` (with the aliasing
        caveat of every rebinding, API003).
    """,
    installed_note="""
        Verified on 2.10 (CPU): ``x.eq(y)``, ``x.lt(y)``, ``x.logical_and(y)``... return
        bool tensors for float and int64 inputs.
    """,
    example="""
        import torch
        x = torch.tensor([[1.0, -2.0, 3.0], [0.0, 5.0, -1.0]])
        x.gt_(0)
        m = torch.tensor([3, 0, 2])
        m.logical_not_()
    """,
)

_COMPARISONS = ("eq", "ne", "not_equal", "ge", "greater_equal", "gt", "greater", "le", "less_equal",
                "lt", "less", "logical_and", "logical_or", "logical_xor", "logical_not")


def _inplace_comparison(name: str):
    key = f"Tensor.{name}_"

    def handler(site):
        check_pattern(site, key)
        recv = site.receiver
        new = site.apply(func=site.updated.func.with_changes(attr=cst.Name(name)))
        new = cst.Call(func=cst.Attribute(value=new, attr=cst.Name("astype")),
                       args=[cst.Arg(cst.Attribute(value=recv, attr=cst.Name("dtype")))])
        rebound = _rebind(site, key, new)
        if rebound is None:
            return None
        site.edit("TBL002", rebound, detail=f".{name}_() -> {site.code(recv)} = .{name}() cast to "
                  f"{site.code(recv)}.dtype")
        return rebound

    return handler


for _name in _COMPARISONS:
    method(f"{_name}_", "TBL002", receiver=TENSOR, sig=() if _name == "logical_not" else ("other",),
           handler=_inplace_comparison(_name), returns=TENSOR)

# ----------------------------------------------------------------------------- TBL003

register(
    "TBL003",
    "bincount counts are cast to PyTorch's int64",
    group=GROUP,
    seed=SEED,
    reference=REF,
    why="""
        Without weights, PyTorch's ``bincount`` counts occurrences and returns int64.
        MindSpore's ``ops.bincount`` (and ``Tensor.bincount``) returns the same counts as
        float32, which changes what the counts can be used for (indexing, integer
        arithmetic, comparisons with int64 tensors). The port casts the counts to int64.
        With weights both return the weights' sum per bin; that form is left as PyTorch
        and flagged, because its result dtype was not verified.
    """,
    installed_note="Verified on 2.10 (CPU): ops.bincount(x) returns float32 counts; mint.bincount has no CPU kernel.",
    example="""
        import torch
        labels = torch.tensor([0, 2, 2, 5, 1, 2])
        counts = torch.bincount(labels)
        padded = labels.bincount(minlength=8)
    """,
)


def _bincount(key: str, target=None):
    def handler(site):
        weights = site.arg("weights")
        if weights is not None and site.literal(weights.value, ...) is not None:
            site.finding("TBL003", f"{key} with weights: MindSpore's result dtype for weighted bins was "
                         "not verified; port this call by hand", comment=f"{key}(weights=...) not ported")
            return None
        check_pattern(site, key)
        new = site.apply(func=site.ref(target) if target else site.updated.func)
        new = cast_result(site, new, "int64")
        site.changes.append("result cast to int64")
        site.edit("TBL003", new, detail=site.describe(f"{key} -> {target}" if target else ""))
        return new

    return handler


api("torch.bincount", "mindspore.ops.bincount", rule="TBL003", sig=("input", "weights", "minlength"),
    handler=_bincount("torch.bincount", "mindspore.ops.bincount"))
method("bincount", "TBL003", receiver=TENSOR, sig=("weights", "minlength"), handler=_bincount("Tensor.bincount"))
