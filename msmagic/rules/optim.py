"""Optimizers: ``torch.optim.X(model.parameters(), lr=...)`` becomes a MindSpore optimizer
Cell over ``model.trainable_params()`` with ``learning_rate=``.

Each mapping was verified by driving both optimizers with the same fixed gradients for a
few steps and comparing the weights (tests/rules/test_optim.py). The training loop itself
(``zero_grad``/``backward``/``step`` -> ``optimizer(grads)``) is another rule group's."""

from __future__ import annotations

import libcst as cst

from msmagic.engine.spec import api
from msmagic.rules._util import is_pure, truthy_literal
from msmagic.rules.registry import register

GROUP = "Optimizers"
SEED = "seeds/002 Optimizer Comparison"
REF = "r2.4.10/api_mapping/pytorch_api_mapping.md (torch.optim)"

register(
    "OPT001",
    "torch.optim.SGD becomes nn.SGD with an explicit learning_rate",
    group=GROUP,
    why="""
        MindSpore optimizers are Cells in ``mindspore.nn``; ``nn.SGD`` takes the same
        ``momentum``, ``dampening``, ``weight_decay`` and ``nesterov`` in the same order and
        applies them with the same update rule (the first momentum step also skips
        dampening), but the step size is called ``learning_rate`` and defaults to 0.1 where
        PyTorch 2.x defaults ``lr`` to 0.001. The port therefore always writes
        ``learning_rate=``. PyTorch's implementation switches (``foreach``, ``fused``,
        ``capturable``, ``differentiable``) have no counterpart and do not change the
        result, so they are dropped; ``maximize=True`` has no counterpart and is flagged.
        The optimizer is then used as ``optimizer(grads)`` instead of ``step()``.
    """,
    seed=SEED + " › Optimizer Execution and Usage Differences",
    reference=REF,
    example="""
        import torch.nn as nn
        import torch.optim as optim

        model = nn.Linear(4, 2)
        optimizer = optim.SGD(model.parameters(), lr=0.05, momentum=0.9, nesterov=True)
    """,
)

register(
    "OPT002",
    "model.parameters() given to an optimizer becomes model.trainable_params()",
    group=GROUP,
    why="""
        A MindSpore optimizer needs the list of Parameters it updates, and the gradients it
        is later called with must come in the same order. ``model.trainable_params()`` is
        that list: it leaves out Parameters with ``requires_grad=False``. PyTorch optimizers
        receive every parameter but skip the frozen ones because their ``grad`` stays
        ``None``, so the two update exactly the same parameters. For the same reason
        ``filter(lambda p: p.requires_grad, model.parameters())`` and
        ``model.named_parameters()`` become ``model.trainable_params()`` as well.
    """,
    seed=SEED + " › Optimizer Execution and Usage Differences",
    reference=REF,
    example="""
        import torch.nn as nn
        import torch.optim as optim

        model = nn.Linear(4, 2)
        model.bias.requires_grad = False
        optimizer = optim.SGD(filter(lambda p: p.requires_grad, model.parameters()), lr=0.1)
    """,
)

register(
    "OPT003",
    "Adam becomes nn.Adam with betas split into beta1 and beta2",
    group=GROUP,
    why="""
        ``nn.Adam`` takes the two decay rates as separate ``beta1``/``beta2`` arguments instead
        of a ``betas`` tuple, calls ``amsgrad`` ``use_amsgrad``, and adds ``weight_decay`` to
        the gradient like PyTorch's Adam (L2 penalty, not AdamW's decoupled decay). One
        detail differs: MindSpore folds the bias corrections into the step size, so its
        ``eps`` is effectively ``eps / sqrt(1 - beta2^t)`` of PyTorch's. With the usual
        eps=1e-8 this only matters for gradient entries of about 1e-6 or smaller, which then
        move less during the first few hundred steps; for ordinary gradients the weights
        agree to float32 rounding.
    """,
    seed=SEED,
    reference="r2.4.10/api_mapping/pytorch_diff/Adam.md",
    installed_note="""
        The difference page for Adam does not mention the eps placement; it was measured on
        MindSpore 2.10 (CPU) by comparing nn.Adam against both update formulas.
    """,
    example="""
        import torch.nn as nn
        import torch.optim as optim

        model = nn.Linear(4, 2)
        optimizer = optim.Adam(model.parameters(), lr=1e-3, betas=(0.8, 0.99), eps=1e-7)
    """,
)

register(
    "OPT004",
    "AdamW becomes nn.AdamWeightDecay, which has no bias correction (flagged)",
    group=GROUP,
    why="""
        MindSpore's closest classic optimizer to ``torch.optim.AdamW`` is
        ``nn.AdamWeightDecay``: same decoupled weight decay (``lr * weight_decay * param``
        is subtracted), ``beta1``/``beta2`` instead of ``betas``, but different defaults
        (eps 1e-6 and weight_decay 0.0 against PyTorch's 1e-8 and 0.01), so the port writes
        them explicitly. Its update, however, divides the raw moment estimates without
        PyTorch's bias correction, so the first steps are smaller and the weights drift
        apart (about 0.09 after three steps at lr=0.01 in the test). The rewrite is kept
        because it is the nearest classic optimizer, and it is always flagged. On 2.10,
        ``mindspore.experimental.optim.AdamW`` reproduces PyTorch's AdamW to float32
        rounding and is the faithful replacement if you can use the experimental API.
    """,
    seed=SEED,
    reference="r2.4.10/api_mapping/pytorch_diff/AdamWeightDecay.md",
    example="""
        import torch.nn as nn
        import torch.optim as optim

        model = nn.Linear(4, 2)
        optimizer = optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.05)
    """,
)

register(
    "OPT005",
    "RMSprop becomes nn.RMSProp, whose mean square starts at one (flagged)",
    group=GROUP,
    why="""
        ``nn.RMSProp`` names PyTorch's ``alpha`` ``decay`` and ``eps`` ``epsilon``, and its
        defaults differ (learning_rate 0.1, decay 0.9, epsilon 1e-10 against lr 0.01,
        alpha 0.99, eps 1e-8), so all three are written explicitly. Two differences
        remain that no argument fixes: MindSpore initialises the running mean of squared
        gradients to ones where PyTorch starts from zeros, so early steps are much smaller,
        and it adds epsilon inside the square root. The port is therefore always flagged.
        ``mindspore.experimental.optim.RMSprop`` matches PyTorch on 2.10 if the
        experimental API is acceptable.
    """,
    seed=SEED,
    reference="r2.4.10/api_mapping/pytorch_diff/RMSProp.md",
    example="""
        import torch.nn as nn
        import torch.optim as optim

        model = nn.Linear(4, 2)
        optimizer = optim.RMSprop(model.parameters(), lr=0.01, momentum=0.9)
    """,
)

register(
    "OPT006",
    "Parameter groups keep params, lr and weight_decay; other keys are flagged",
    group=GROUP,
    why="""
        Both frameworks accept a list of dicts, one per parameter group, where a group's
        ``lr`` and ``weight_decay`` override the optimizer-wide values. Each group's
        ``params`` becomes a list of trainable Parameters (rule OPT002). MindSpore only reads
        ``params``, ``lr``, ``weight_decay`` and ``grad_centralization`` (plus an
        ``order_params`` entry) and raises a KeyError for any other per-group setting
        (``momentum``, ``betas``, ``eps``...). Such keys are removed and flagged: the group
        then uses the optimizer-wide value, which is not what PyTorch did.
    """,
    seed=SEED + " › Optimizer Execution and Usage Differences",
    reference=REF,
    example="""
        import torch.nn as nn
        import torch.optim as optim

        model = nn.Sequential(nn.Linear(4, 3), nn.Linear(3, 2))
        optimizer = optim.SGD(
            [{"params": model[0].parameters(), "lr": 0.01}, {"params": model[1].parameters()}],
            lr=0.1,
            momentum=0.9,
        )
    """,
)

register(
    "OPT007",
    "Weight decay on plain parameter lists: parameters are wrapped in one group",
    group=GROUP,
    why="""
        Given a plain list of parameters, a MindSpore optimizer silently skips weight decay
        for every Parameter whose name contains 'gamma' or 'beta' (BatchNorm and LayerNorm
        scales and shifts), while PyTorch decays every parameter it is given. With
        parameter groups MindSpore decays every parameter of a group whose weight_decay is
        positive. So when weight decay is on, the port passes the parameters as one group,
        ``[{"params": ...}]``, which makes MindSpore decay exactly what PyTorch decays.
    """,
    seed=SEED + " › Weight Decay",
    reference=REF,
    installed_note="""
        Verified in MindSpore 2.10's nn.Optimizer source and numerically: without groups a
        Parameter named 'gamma' is not decayed; inside a group it is.
    """,
    example="""
        import torch.nn as nn
        import torch.optim as optim

        model = nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4))
        optimizer = optim.SGD(model.parameters(), lr=0.1, weight_decay=1e-4)
    """,
)

register(
    "OPT008",
    "Adagrad becomes nn.Adagrad with accum starting at zero",
    group=GROUP,
    why="""
        ``nn.Adagrad`` starts its sum of squared gradients at ``accum=0.1`` where PyTorch's
        ``initial_accumulator_value`` is 0, and its learning rate defaults to 0.001 instead
        of 0.01; the port writes both. MindSpore's update has no ``eps`` term (a zero
        accumulated gradient leaves the weight unchanged, as PyTorch's tiny default eps
        does), so the default eps is dropped and any other value is flagged, as is a
        non-zero ``lr_decay``, which MindSpore's Adagrad does not have. The CPU kernel's
        arithmetic is a little less exact than PyTorch's: weights agree to about 0.03% of
        one step.
    """,
    seed=SEED,
    reference="r2.4.10/api_mapping/pytorch_diff/Adagrad.md",
    example="""
        import torch.nn as nn
        import torch.optim as optim

        model = nn.Linear(4, 2)
        optimizer = optim.Adagrad(model.parameters(), lr=0.05)
    """,
)

_GROUP_KEYS = {"params", "lr", "weight_decay"}


# ----------------------------------------------------------------------------- params


def _original_value(site, arg: cst.Arg):
    for new, old in zip(site.updated.args, site.original.args):
        if new is arg:
            return old.value
    return None


def _trainable(site, orig) -> cst.BaseExpression | None:
    """``X.parameters()``, ``X.named_parameters()`` and ``filter(lambda p:
    p.requires_grad, X.parameters())`` -> ``X.trainable_params()``."""
    call = orig
    if (
        isinstance(orig, cst.Call)
        and isinstance(orig.func, cst.Name)
        and orig.func.value == "filter"
        and len(orig.args) == 2
        and _is_requires_grad_lambda(orig.args[0].value)
    ):
        call = orig.args[1].value
    if not (
        isinstance(call, cst.Call)
        and isinstance(call.func, cst.Attribute)
        and call.func.attr.value in ("parameters", "named_parameters")
        and not call.args
    ):
        return None
    site.discard(call)  # the Module-method port of .parameters() is replaced
    recv = site.code(site.updated_of(call.func.value)).strip()
    new = site.parse(f"{recv}.trainable_params()")
    site.edit("OPT002", new, detail=f"{site.code(orig).strip()} -> {recv}.trainable_params()")
    return new


def _is_requires_grad_lambda(node) -> bool:
    if not isinstance(node, cst.Lambda) or len(node.params.params) != 1:
        return False
    p = node.params.params[0].name.value
    body = node.body
    return (
        isinstance(body, cst.Attribute)
        and body.attr.value == "requires_grad"
        and isinstance(body.value, cst.Name)
        and body.value.value == p
    )


def _groups(site, orig, upd):
    """A list of group dicts: port each group's params, flag keys MindSpore ignores."""
    new_elements = []
    for o_el, u_el in zip(orig.elements, upd.elements):
        if not isinstance(o_el.value, cst.Dict):
            new_elements.append(u_el)
            continue
        new_items = []
        for o_item, u_item in zip(o_el.value.elements, u_el.value.elements):
            key = site.literal(o_item.key, None) if isinstance(o_item, cst.DictElement) else None
            if key == "params":
                value = _trainable(site, o_item.value)
                if value is not None:
                    u_item = u_item.with_changes(value=value)
            elif key not in _GROUP_KEYS:
                shown = site.code(o_item).strip()
                site.finding(
                    "OPT006",
                    f"parameter group entry {shown}: MindSpore optimizers accept only 'params', 'lr', "
                    "'weight_decay' and 'grad_centralization' per group; the entry was removed, so "
                    "the group uses the optimizer-wide value",
                    comment=f"group key {shown.split(':')[0]} has no MindSpore equivalent, removed",
                )
                continue
            new_items.append(u_item)
        old_items = u_el.value.elements
        if new_items and len(new_items) < len(old_items):  # a removed key: fix the last comma
            new_items[-1] = new_items[-1].with_changes(comma=old_items[-1].comma)
        new_elements.append(u_el.with_changes(value=u_el.value.with_changes(elements=new_items)))
    site.edit("OPT006", None, detail="parameter groups kept")
    return upd.with_changes(elements=new_elements)


def _is_groups(node) -> bool:
    return isinstance(node, (cst.List, cst.Tuple)) and any(isinstance(e.value, cst.Dict) for e in node.elements)


def _params(site, arg):
    orig = _original_value(site, arg)
    if orig is None:
        return None
    if _is_groups(orig):
        return _groups(site, orig, arg.value)
    return _trainable(site, orig)


# ----------------------------------------------------------------------------- handler


def _kw(name: str, value, comma=cst.MaybeSentinel.DEFAULT) -> cst.Arg:
    return cst.Arg(
        keyword=cst.Name(name),
        value=value,
        equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                              whitespace_after=cst.SimpleWhitespace("")),
        comma=comma,
    )


def _split_betas(site, call: cst.Call) -> cst.Call:
    args = list(call.args)
    for i, a in enumerate(args):
        if a.keyword is None or a.keyword.value != "betas":
            continue
        v = a.value
        if isinstance(v, (cst.Tuple, cst.List)) and len(v.elements) == 2:
            b1, b2 = v.elements[0].value, v.elements[1].value
        elif is_pure(v):
            b1, b2 = site.parse(f"{site.code(v).strip()}[0]"), site.parse(f"{site.code(v).strip()}[1]")
        else:
            site.finding(
                "OPT003", f"betas={site.code(v).strip()} is not a pair or a name; it cannot be split into "
                "beta1/beta2 without evaluating it twice",
                comment="betas= not split; set beta1=/beta2= by hand")
            if i and i == len(args) - 1:  # the previous argument becomes the last one
                args[i - 1] = args[i - 1].with_changes(comma=a.comma)
            return call.with_changes(args=[*args[:i], *args[i + 1:]])
        sep = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
        new = [_kw("beta1", b1, sep), _kw("beta2", b2, a.comma)]
        site.changes.append(f"betas -> beta1={site.code(b1)}, beta2={site.code(b2)}")
        return call.with_changes(args=[*args[:i], *new, *args[i + 1:]])
    return call


def _wrap_for_decay(site, call: cst.Call, decay_default: float) -> cst.Call:
    """OPT007: weight decay on a plain parameter list -> one parameter group."""
    wd = site.arg("weight_decay")
    decay = decay_default if wd is None else site.literal(wd.value, None)
    params = site.arg("params")
    if decay == 0 or params is None or _is_groups(_original_value(site, params)):
        return call
    args = list(call.args)
    i = 0 if args[0].keyword is None else next(
        j for j, a in enumerate(args) if a.keyword is not None and a.keyword.value == "params")
    group = site.parse(f'[{{"params": {site.code(args[i].value).strip()}}}]')
    site.edit("OPT007", group, detail="parameters wrapped in one group so every parameter is decayed")
    args[i] = args[i].with_changes(value=group)
    return call.with_changes(args=args)


def _optimizer(rule: str, *, betas: bool = False, decay_default: float = 0.0, flag: str = ""):
    def handler(site):
        new = site.apply(func=site.ref(site.entry.target))
        if betas:
            new = _split_betas(site, new)
        new = _wrap_for_decay(site, new, decay_default)
        site.edit(rule, new, detail=site.describe(f"{site.api} -> {site.entry.target}"))
        if flag:
            site.finding(rule, flag, comment=flag.split(";")[0])
        return new

    return handler


_DROPPED = {p: "OPT001" for p in ("foreach", "fused", "capturable", "differentiable")}
_MAXIMIZE = (truthy_literal, "MindSpore optimizers always minimise; negate the loss instead")
_COMMON = dict(values={"params": _params}, drop=_DROPPED, returns="optimizer")

api("torch.optim.SGD", "mindspore.nn.SGD", rule="OPT001",
    sig=("params", "lr", "momentum", "dampening", "weight_decay", "nesterov"),
    rename={"lr": "learning_rate"}, defaults={"learning_rate": "0.001"},
    unsupported={"maximize": _MAXIMIZE}, handler=_optimizer("OPT001"), **_COMMON)

api("torch.optim.Adam", "mindspore.nn.Adam", rule="OPT003",
    sig=("params", "lr", "betas", "eps", "weight_decay", "amsgrad"),
    ms_sig=("params", "learning_rate", "beta1", "beta2", "eps", "use_locking", "use_nesterov",
            "weight_decay", "loss_scale", "use_amsgrad"),
    rename={"lr": "learning_rate", "amsgrad": "use_amsgrad"}, defaults={"learning_rate": "0.001"},
    unsupported={
        "maximize": _MAXIMIZE,
        "decoupled_weight_decay": (truthy_literal, "nn.Adam only adds weight decay to the gradient"),
    },
    handler=_optimizer("OPT003", betas=True), **_COMMON)

api("torch.optim.AdamW", "mindspore.nn.AdamWeightDecay", rule="OPT004",
    sig=("params", "lr", "betas", "eps", "weight_decay", "amsgrad"),
    ms_sig=("params", "learning_rate", "beta1", "beta2", "eps", "weight_decay"),
    rename={"lr": "learning_rate"},
    defaults={"learning_rate": "0.001", "eps": "1e-08", "weight_decay": "0.01"},
    unsupported={
        "maximize": _MAXIMIZE,
        "amsgrad": (truthy_literal, "nn.AdamWeightDecay has no AMSGrad variant"),
    },
    handler=_optimizer(
        "OPT004", betas=True, decay_default=0.01,
        flag="nn.AdamWeightDecay has no bias correction; early steps differ from torch AdamW "
             "(mindspore.experimental.optim.AdamW matches it)"),
    **_COMMON)

api("torch.optim.RMSprop", "mindspore.nn.RMSProp", rule="OPT005",
    sig=("params", "lr", "alpha", "eps", "weight_decay", "momentum", "centered"),
    ms_sig=("params", "learning_rate", "decay", "momentum", "epsilon", "use_locking", "centered",
            "loss_scale", "weight_decay"),
    rename={"lr": "learning_rate", "alpha": "decay", "eps": "epsilon"},
    defaults={"learning_rate": "0.01", "decay": "0.99", "epsilon": "1e-08"},
    unsupported={"maximize": _MAXIMIZE},
    handler=_optimizer(
        "OPT005",
        flag="nn.RMSProp starts its mean square at 1 (PyTorch: 0) and adds epsilon inside the "
             "square root; early steps differ (mindspore.experimental.optim.RMSprop matches)"),
    **_COMMON)


def _adagrad_eps(site, arg):
    if site.literal(arg.value, None) == 1e-10:
        site.edit("OPT008", None, detail="eps=1e-10 dropped (MindSpore's Adagrad has no eps)")
    else:
        site.finding("OPT008", f"eps={site.code(arg.value).strip()}: MindSpore's Adagrad has no eps term",
                     comment="eps= has no MindSpore equivalent, removed")
    return False


api("torch.optim.Adagrad", "mindspore.nn.Adagrad", rule="OPT008",
    sig=("params", "lr", "lr_decay", "weight_decay", "initial_accumulator_value", "eps"),
    ms_sig=("params", "accum", "learning_rate", "update_slots", "loss_scale", "weight_decay"),
    rename={"lr": "learning_rate", "initial_accumulator_value": "accum"},
    defaults={"learning_rate": "0.01", "accum": "0.0"},
    values={"params": _params, "eps": _adagrad_eps},
    drop=_DROPPED,
    unsupported={
        "maximize": _MAXIMIZE,
        "lr_decay": (lambda site, arg: site.literal(arg.value, None) != 0,
                     "MindSpore's Adagrad has no learning-rate decay; use a dynamic learning_rate"),
    },
    handler=_optimizer("OPT008"), returns="optimizer")
