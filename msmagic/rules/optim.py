"""Optimizers: ``torch.optim.X(model.parameters(), lr=...)`` becomes a MindSpore optimizer
Cell over ``model.trainable_params()``: SGD becomes the classic ``mindspore.nn.SGD``
(``learning_rate=``); Adam becomes experimental AdamW with ``weight_decay=0.0`` (experimental
Adam when it has L2 weight decay); AdamW, RMSprop, Adagrad, Adadelta, Adamax, NAdam, RAdam, ASGD
and Rprop become their ``mindspore.experimental.optim`` ports, which keep PyTorch's
arguments and match its numbers (the classic nn.AdamWeightDecay/RMSProp/Adagrad do not).

Each mapping was verified by driving both optimizers with the same fixed gradients for a
few steps and comparing the weights (tests/rules/test_optim.py). The training loop itself
(``zero_grad``/``backward``/``step`` -> ``optimizer(grads)``) is another rule group's."""

from __future__ import annotations

import libcst as cst

from msmagic.engine.spec import ArgSpec, api
from msmagic.rules._util import truthy_literal
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
    "Adam becomes mindspore.experimental.optim.AdamW with weight_decay=0.0",
    group=GROUP,
    why="""
        PyTorch's Adam divides the bias-corrected first moment by ``sqrt(v_t) /
        sqrt(1 - beta2^t) + eps``. MindSpore's classic ``nn.Adam`` (and
        ``mindspore.experimental.optim.Adam``, which calls the same kernel) folds both bias
        corrections into the step size instead, so its ``eps`` acts as ``eps / sqrt(1 -
        beta2^t)`` of PyTorch's. That is invisible for ordinary gradients but not for the
        entries whose gradient is about 1e-6 or smaller (dead ReLU units, pixels that are
        always zero): PyTorch moves them by up to the learning rate, nn.Adam barely moves
        them, and after a few steps the weights are a learning rate apart.
        ``mindspore.experimental.optim.AdamW`` computes PyTorch's formula, and with
        ``weight_decay=0.0`` (its default is 0.01) AdamW *is* Adam: the port uses it, with
        the same argument names (``lr``, ``betas``, ``eps``, ``amsgrad``, ``maximize``).
        ``Adam(..., decoupled_weight_decay=True)`` is AdamW with its weight decay.
        PyTorch's Adam with L2 weight decay (``weight_decay`` > 0) adds ``weight_decay *
        param`` to the gradient; AdamW cannot do that, so that form becomes
        ``mindspore.experimental.optim.Adam`` (PyTorch's argument names, the decay reaching
        every parameter) with a finding about its eps. Not ``nn.Adam``, which computes the
        same numbers but builds the ``FusedSparseAdam`` primitive that MindSpore 2.10 marks
        deprecated, so every construction printed a deprecation warning.
    """,
    seed=SEED,
    reference="r2.4.10/api_mapping/pytorch_diff/Adam.md",
    installed_note="""
        The difference page for Adam does not mention the eps placement. Measured on
        MindSpore 2.10 (CPU), five steps on gradients between 1e-12 and 1e-1: nn.Adam and
        experimental.optim.Adam end 2.4e-3 from torch.optim.Adam at lr=1e-3, experimental
        AdamW with weight_decay=0.0 ends 3e-8 away (float32 rounding). With L2 weight decay
        nn.Adam and experimental.optim.Adam end within 1.2e-7 of each other.
    """,
    example="""
        import torch.nn as nn
        import torch.optim as optim

        model = nn.Linear(4, 2)
        optimizer = optim.Adam(model.parameters(), lr=1e-3, betas=(0.8, 0.99), eps=1e-7)
        with_l2 = optim.Adam(model.parameters(), lr=1e-3, weight_decay=0.01)
    """,
)

register(
    "OPT004",
    "AdamW becomes mindspore.experimental.optim.AdamW (not nn.AdamWeightDecay)",
    group=GROUP,
    why="""
        MindSpore's classic ``nn.AdamWeightDecay`` divides the raw moment estimates without
        PyTorch's bias correction, so its first steps are smaller and the weights drift
        apart (about 0.09 after three steps at lr=0.01). ``mindspore.experimental.optim.AdamW``
        is a port of PyTorch's AdamW: same arguments (``lr``, ``betas``, ``eps``,
        ``weight_decay``, ``amsgrad``, ``maximize``), same defaults (weight_decay 0.01, eps
        1e-8), decoupled decay and bias correction; it reproduces PyTorch's weights to
        float32 rounding, with ``amsgrad`` and ``maximize`` too. So the port keeps the call
        as it is and only changes the class (and the parameters, rule OPT002). Like every
        MindSpore optimizer it is a Cell called as ``optimizer(grads)``, with its
        parameters in ``optimizer.parameters`` (what the training-step rewrite hands to
        ``value_and_grad``). The class is marked experimental in MindSpore.
    """,
    seed=SEED,
    reference="r2.4.10/api_mapping/pytorch_diff/AdamWeightDecay.md",
    installed_note="""
        Measured on MindSpore 2.10 (CPU): nn.AdamWeightDecay has no bias correction (0.09
        apart after 3 steps); mindspore.experimental.optim.AdamW agrees with torch.optim.AdamW
        to about 1e-7 over 8 steps, with amsgrad=True and maximize=True as well.
    """,
    example="""
        import torch.nn as nn
        import torch.optim as optim

        model = nn.Linear(4, 2)
        optimizer = optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.05)
    """,
)

register(
    "OPT005",
    "RMSprop becomes mindspore.experimental.optim.RMSprop (not nn.RMSProp)",
    group=GROUP,
    why="""
        The classic ``nn.RMSProp`` starts its running mean of squared gradients at ones
        where PyTorch starts from zeros, and adds epsilon inside the square root, so early
        steps are much smaller and no argument fixes that.
        ``mindspore.experimental.optim.RMSprop`` follows PyTorch's algorithm with PyTorch's
        argument names and defaults (``lr`` 0.01, ``alpha`` 0.99, ``eps`` 1e-8,
        ``weight_decay``, ``momentum``, ``centered``, ``maximize``), so the call keeps its
        arguments and only the class changes. Weights agree with PyTorch to float32
        rounding, with momentum and centered too. The class is marked experimental.
    """,
    seed=SEED,
    reference="r2.4.10/api_mapping/pytorch_diff/RMSProp.md",
    installed_note="""
        Measured on MindSpore 2.10 (CPU): nn.RMSProp moves the weights much less in the
        first steps (its mean square starts at 1); the experimental RMSprop agrees with
        torch.optim.RMSprop to about 6e-7 over 8 steps (momentum, centered, weight_decay).
    """,
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
    "Adagrad becomes mindspore.experimental.optim.Adagrad, eps and lr_decay kept",
    group=GROUP,
    why="""
        The classic ``nn.Adagrad`` has no ``eps`` and no ``lr_decay``, starts its sum of
        squares at 0.1 and its CPU kernel is a little less exact than PyTorch's (weights
        about 3e-4 of a step apart). ``mindspore.experimental.optim.Adagrad`` has
        PyTorch's signature and defaults (``lr`` 0.01, ``lr_decay``, ``weight_decay``,
        ``initial_accumulator_value`` 0, ``eps`` 1e-10, ``maximize``) and agrees with it to
        float32 rounding, so the call keeps its arguments and only the class changes.
        Its kernel takes ``eps`` only as a Python float: an integer literal such as
        ``eps=1`` is written ``1.0`` and any other expression is wrapped in ``float()``.
    """,
    seed=SEED,
    reference="r2.4.10/api_mapping/pytorch_diff/Adagrad.md",
    installed_note="""
        Measured on MindSpore 2.10 (CPU): the experimental Adagrad agrees with
        torch.optim.Adagrad to about 1e-7 over 8 steps with lr_decay, weight_decay,
        initial_accumulator_value and eps set; ``eps=1`` (an int) raises a TypeError in
        ApplyAdagradV2.
    """,
    example="""
        import torch.nn as nn
        import torch.optim as optim

        model = nn.Linear(4, 2)
        optimizer = optim.Adagrad(model.parameters(), lr=0.05, lr_decay=0.01)
    """,
)

register(
    "OPT009",
    "Adadelta, Adamax, NAdam, RAdam, ASGD and Rprop keep their arguments",
    group=GROUP,
    why="""
        MindSpore's classic optimizers have no Adamax, NAdam, RAdam, ASGD or Rprop (and
        ``nn.Adadelta`` names and orders its arguments differently), but
        ``mindspore.experimental.optim`` has ports of all six with PyTorch's argument
        names, order and defaults (Adadelta lr 1.0, Adamax and NAdam lr 0.002, RAdam 0.001,
        ASGD 0.01 with lambd 1e-4, alpha 0.75 and t0 1e6, Rprop etas (0.5, 1.2) and
        step_sizes (1e-6, 50)), and they agree with PyTorch to float32 rounding. The call
        keeps its arguments and only the class changes. Three differences remain: NAdam's
        and RAdam's ``decoupled_weight_decay=True`` and their ``maximize=True`` have no
        counterpart and are flagged, and some arguments must be Python floats
        (Adadelta's ``rho`` and ``eps``, ASGD's ``lambd`` and ``t0``): an integer literal is
        written as a float and any other expression is wrapped in ``float()``. As in
        PyTorch, Rprop reads ``lr`` only once (its initial step size), so a scheduler does
        not change it.
    """,
    seed=SEED,
    reference=REF,
    installed_note="""
        Measured on MindSpore 2.10 (CPU) over 8 steps with every argument set: all six
        agree with PyTorch to about 3e-7. ``ASGD(t0=5)`` and ``Adadelta(rho=1)`` (ints) raise
        a TypeError in MindSpore.
    """,
    example="""
        import torch.nn as nn
        import torch.optim as optim

        model = nn.Linear(4, 2)
        optimizer = optim.NAdam(model.parameters(), lr=0.01, betas=(0.8, 0.99), momentum_decay=0.01)
    """,
)

register(
    "OPT010",
    "Parameter groups of experimental optimizers keep all their settings",
    group=GROUP,
    why="""
        Unlike the classic ``nn`` optimizers, which read only ``params``, ``lr`` and
        ``weight_decay`` per group (rule OPT006), the ``mindspore.experimental.optim``
        classes keep each group's dict like PyTorch: any setting the group names
        (``betas``, ``momentum``, ``eps``...) overrides the optimizer-wide value for that
        group, and missing ones are filled from the defaults. So the groups are kept as they
        are; only each group's ``params`` becomes a list of trainable Parameters. They
        also apply weight decay to every parameter of a group, as PyTorch does, so no
        wrapping into a group is needed (rule OPT007 is about the classic optimizers).
    """,
    seed=SEED + " › Optimizer Execution and Usage Differences",
    reference=REF,
    example="""
        import torch.nn as nn
        import torch.optim as optim

        model = nn.Sequential(nn.Linear(4, 3), nn.Linear(3, 2))
        optimizer = optim.AdamW(
            [{"params": model[0].parameters(), "betas": (0.8, 0.9)}, {"params": model[1].parameters()}],
            lr=0.01,
        )
    """,
)

register(
    "OPT011",
    "LBFGS (a closure-driven optimizer) is flagged",
    group=GROUP,
    finding_only=True,
    why="""
        ``torch.optim.LBFGS`` calls ``optimizer.step(closure)`` where the closure recomputes
        the loss and its gradients several times per step (line search, ``max_iter``
        inner iterations). MindSpore 2.10 has no LBFGS optimizer (``mindspore.nn`` and
        ``mindspore.experimental.optim`` have none), and a MindSpore optimizer is called
        once with a tuple of gradients, so there is no closure to hand it. The call is
        flagged. To port it, use ``mindspore.scipy.optimize.minimize(fn, x0,
        method="LBFGS")`` on a flat parameter vector, or switch to a first-order optimizer.
    """,
    seed=SEED,
    reference=REF,
    example="""
        import torch.nn as nn
        import torch.optim as optim

        model = nn.Linear(4, 2)
        optimizer = optim.LBFGS(model.parameters(), lr=1, max_iter=20)
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
    site.forget(call)  # the Module-method port of .parameters() is replaced
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


def _optimizer(rule: str, *, decay_default: float = 0.0, flag: str = ""):
    def handler(site):
        new = site.apply(func=site.ref(site.entry.target))
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

#: torch.optim.Adam with L2 weight decay: mindspore.experimental.optim.Adam, PyTorch's own
#: arguments (its eps sits elsewhere, OPT003). Not nn.Adam: its constructor builds the
#: FusedSparseAdam primitive, which MindSpore 2.10 marks deprecated and warns about.
_ADAM_L2 = ArgSpec(
    sig=("params", "lr", "betas", "eps", "weight_decay", "amsgrad", "foreach", "maximize", "capturable",
         "differentiable", "fused", "decoupled_weight_decay"),
    ms_sig=("params", "lr", "betas", "eps", "weight_decay", "amsgrad", "maximize"),
    values={"params": lambda site, arg: _params_all(site, arg)},
    drop={**_DROPPED, "decoupled_weight_decay": "OPT003"},
)
_ADAM_L2_TARGET = "mindspore.experimental.optim.Adam"
_ADAM_EPS = ("mindspore.experimental.optim.Adam (like nn.Adam) folds the bias corrections into the step size, "
             "so its eps acts as eps / sqrt(1 - beta2^t) of PyTorch's: gradient entries of about 1e-6 or smaller "
             "move less during the first steps. For PyTorch's exact numbers drop weight_decay= (the port is "
             "then mindspore.experimental.optim.AdamW with weight_decay=0.0) and add the L2 term "
             "0.5 * weight_decay * sum(p**2) to the loss")


def _adam(site):
    """OPT003: without weight decay, PyTorch's Adam is AdamW with weight_decay=0 (same update
    to the last bit); with L2 weight decay only experimental Adam takes it (its eps differs)."""
    wd = site.arg("weight_decay")
    if wd is None or site.literal(wd.value, None) in (0, 0.0) or _decoupled(site):
        new = site.apply(func=site.ref(site.entry.target))
        site.edit("OPT003", new, detail=site.describe(f"{site.api} -> {site.entry.target}"))
        return new
    new = site.apply(func=site.ref(_ADAM_L2_TARGET), spec=_ADAM_L2)
    site.edit("OPT003", new, detail=site.describe(f"{site.api} -> {_ADAM_L2_TARGET} (L2 weight decay)"))
    site.finding("OPT003", f"weight_decay={site.code(wd.value).strip()}: {_ADAM_EPS}",
                 comment="experimental Adam's eps differs from PyTorch's; see rule OPT003")
    return new


def optimizer_construction(site, node):
    """The original ``torch.optim.X(...)`` call last assigned to the name ``node`` before
    this statement (this cell or an earlier ported one), and its qualified name."""
    call = site.assigned_call(node.value) if isinstance(node, cst.Name) else None
    qual = site.resolve(call.func) if call is not None else None
    return (call, qual) if qual and qual.startswith("torch.optim.") else (None, None)


def ported_to_experimental(site, call, qual) -> bool:
    """Was the PyTorch optimizer construction ``call`` (of ``qual``) ported to
    ``mindspore.experimental.optim`` (its rate in ``param_groups``)?"""
    if qual in EXPERIMENTAL:
        return True
    return qual == "torch.optim.Adam" and call is not None



def _decoupled(site) -> bool:
    flag = site.arg("decoupled_weight_decay")
    return flag is not None and truthy_literal(site, flag)


def _zero_decay(site, arg):
    """weight_decay=0 stays 0.0 (AdamW's default is 0.01); Adam(decoupled_weight_decay=True)
    is AdamW and keeps its value."""
    if _decoupled(site) or isinstance(site.literal(arg.value, None), float):
        return None
    return site.parse("0.0")


api("torch.optim.Adam", "mindspore.experimental.optim.AdamW", rule="OPT003",
    sig=("params", "lr", "betas", "eps", "weight_decay", "amsgrad", "foreach", "maximize", "capturable",
         "differentiable", "fused", "decoupled_weight_decay"),
    ms_sig=("params", "lr", "betas", "eps", "weight_decay", "amsgrad", "maximize"),
    defaults={"weight_decay": "0.0"},
    values={"params": lambda site, arg: _params_all(site, arg), "weight_decay": _zero_decay},
    drop={**_DROPPED, "decoupled_weight_decay": "OPT003"},
    handler=_adam, returns="optimizer")

# ----------------------------------------------------------------------------- experimental

#: PyTorch optimizers ported to ``mindspore.experimental.optim`` (same names and arguments);
#: their learning rate lives in ``optimizer.param_groups[i]["lr"]`` (see schedulers.py).
EXPERIMENTAL = {}


def _as_float(site, arg):
    """The experimental optimizers require a Python float for some arguments."""
    value = site.literal(arg.value, None)
    if isinstance(value, float):
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        return site.parse(f"{float(value)!r}")
    return site.parse(f"float({site.code(arg.value).strip()})")


def _groups_all(site, orig, upd):
    """OPT010: experimental optimizers keep every group key; port each group's params."""
    new_elements = []
    for o_el, u_el in zip(orig.elements, upd.elements):
        if isinstance(o_el.value, cst.Dict):
            items = []
            for o_item, u_item in zip(o_el.value.elements, u_el.value.elements):
                key = site.literal(o_item.key, None) if isinstance(o_item, cst.DictElement) else None
                if key == "params":
                    value = _trainable(site, o_item.value)
                    if value is not None:
                        u_item = u_item.with_changes(value=value)
                items.append(u_item)
            u_el = u_el.with_changes(value=u_el.value.with_changes(elements=items))
        new_elements.append(u_el)
    site.edit("OPT010", None, detail="parameter groups kept with all their settings")
    return upd.with_changes(elements=new_elements)


def _params_all(site, arg):
    orig = _original_value(site, arg)
    if orig is None:
        return None
    if _is_groups(orig):
        return _groups_all(site, orig, arg.value)
    return _trainable(site, orig)


def _experimental(torch_name: str, rule: str, sig: tuple, *, floats=(), unsupported=None):
    target = f"mindspore.experimental.optim.{torch_name}"
    ms_sig = tuple(p for p in sig if p not in _DROPPED)

    def handler(site):
        new = site.apply(func=site.ref(target))
        site.edit(rule, new, detail=site.describe(f"torch.optim.{torch_name} -> {target}"))
        return new

    EXPERIMENTAL[f"torch.optim.{torch_name}"] = target
    api(f"torch.optim.{torch_name}", target, rule=rule, sig=sig, ms_sig=ms_sig,
        values={"params": _params_all, **{f: _as_float for f in floats}},
        drop=_DROPPED, unsupported=unsupported or {}, handler=handler, returns="optimizer")


_NOT_DECOUPLED = (truthy_literal, "MindSpore's {} only adds weight decay to the gradient (L2 penalty)")
_experimental("AdamW", "OPT004", ("params", "lr", "betas", "eps", "weight_decay", "amsgrad", "maximize",
                                  "foreach", "capturable", "differentiable", "fused"))
_experimental("RMSprop", "OPT005", ("params", "lr", "alpha", "eps", "weight_decay", "momentum", "centered",
                                    "capturable", "foreach", "maximize", "differentiable"))
_experimental("Adagrad", "OPT008", ("params", "lr", "lr_decay", "weight_decay", "initial_accumulator_value",
                                    "eps", "foreach", "maximize", "differentiable", "fused"), floats=("eps",))
_experimental("Adadelta", "OPT009", ("params", "lr", "rho", "eps", "weight_decay", "foreach", "capturable",
                                     "maximize", "differentiable"), floats=("rho", "eps"))
_experimental("Adamax", "OPT009", ("params", "lr", "betas", "eps", "weight_decay", "foreach", "maximize",
                                   "differentiable", "capturable"))
for _name, _sig in (("NAdam", ("params", "lr", "betas", "eps", "weight_decay", "momentum_decay",
                               "decoupled_weight_decay")),
                    ("RAdam", ("params", "lr", "betas", "eps", "weight_decay", "decoupled_weight_decay"))):
    _experimental(_name, "OPT009", _sig, unsupported={
        "decoupled_weight_decay": (_NOT_DECOUPLED[0], _NOT_DECOUPLED[1].format(_name)),
        "maximize": (truthy_literal, f"MindSpore's {_name} has no maximize; negate the loss instead"),
    })
_experimental("ASGD", "OPT009", ("params", "lr", "lambd", "alpha", "t0", "weight_decay", "foreach",
                                 "maximize", "differentiable", "capturable"), floats=("lambd", "t0"))
_experimental("Rprop", "OPT009", ("params", "lr", "etas", "step_sizes", "capturable", "foreach", "maximize",
                                  "differentiable"))


def _lbfgs(site):
    site.finding("OPT011", "torch.optim.LBFGS drives the step with a closure that re-evaluates the loss; "
                 "MindSpore 2.10 has no LBFGS optimizer. Use mindspore.scipy.optimize.minimize(fn, x0, "
                 "method='LBFGS') on a flat parameter vector, or a first-order optimizer",
                 comment="LBFGS has no MindSpore optimizer; see rule OPT011")
    return None


api("torch.optim.LBFGS", rule="OPT011", handler=_lbfgs, returns="optimizer")
