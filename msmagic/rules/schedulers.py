"""Learning-rate schedulers: ``torch.optim.lr_scheduler.X(optimizer, ...)`` with
``scheduler.step()`` per epoch.

Design (verified on MindSpore 2.10): a MindSpore optimizer keeps a fixed learning rate
in a Parameter, ``optimizer.learning_rate``, that its compiled update reads on every
call. The scheduler becomes an iterator of the rates PyTorch would set (a ``map`` of the
closed-form rate over the epochs ``itertools.count()``), and ``scheduler.step()``
assigns the next rate to that Parameter with ``ops.assign``. This keeps the user's loop
as it is, whatever its shape, with no need to know the number of steps per epoch.
"""

from __future__ import annotations

import libcst as cst

from msmagic.engine.build import parse_statement
from msmagic.engine.spec import api, member, method, module
from msmagic.rules._util import is_pure
from msmagic.rules.registry import register

GROUP = "Learning-rate schedules"
SEED = "seeds/002 Learning Rate Strategy Comparison"
REF = "r2.4.10/api_mapping/pytorch_api_mapping.md (torch.optim.lr_scheduler)"
PREFIX = "torch.optim.lr_scheduler."
OPTIM = "torch.optim."
KIND = "scheduler"
_NOTE = """
    Verified on MindSpore 2.10 (CPU): ``Parameter.set_data`` on ``optimizer.learning_rate``
    is NOT seen by the ``@jit``-compiled ``construct`` of nn.SGD/nn.Momentum (they kept
    stepping with the old rate), while ``ops.assign`` is seen by SGD, Momentum, Adam,
    AdamWeightDecay, RMSProp and Adagrad. The seed says the current rate cannot be read;
    on 2.10 ``float(optimizer.learning_rate)`` (or ``optimizer.get_lr()``) reads it.
"""

register(
    "SCH001",
    "scheduler.step() assigns the next rate to optimizer.learning_rate",
    group=GROUP,
    why="""
        A PyTorch scheduler edits ``param_groups[i]["lr"]`` of the optimizer it was built on,
        once per ``scheduler.step()``. MindSpore's optimizers take a schedule at
        construction (a per-step list or a ``LearningRateSchedule`` indexed by the number of
        optimizer calls), which cannot express a per-epoch schedule without knowing how many
        steps an epoch has. A fixed MindSpore learning rate, however, lives in the Parameter
        ``optimizer.learning_rate``, read on every update. So the port turns the scheduler
        into an iterator of the rates PyTorch would use at epochs 0, 1, 2, ... and each
        ``scheduler.step()`` into ``ops.assign(optimizer.learning_rate, next(scheduler))``;
        building the scheduler assigns the epoch-0 rate, as PyTorch does. Use ``ops.assign``
        (not ``set_data``) if you edit the rate yourself: the compiled optimizer does not
        see ``set_data``. Optimizers with a per-group ``lr`` hold a tuple of rates and are
        not supported by this rewrite (the assignment raises).
    """,
    seed=SEED + " › Dynamic Learning Rate Differences",
    reference=REF,
    installed_note=_NOTE,
    example="""
        import torch
        import torch.nn as nn

        model = nn.Linear(2, 1)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        scheduler = torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma=0.5)
        for epoch in range(3):
            scheduler.step()
        lr = optimizer.param_groups[0]["lr"]
    """,
)

register(
    "SCH002",
    "StepLR, MultiStepLR and ExponentialLR become closed-form per-epoch rates",
    group=GROUP,
    why="""
        These three schedulers multiply the rate by ``gamma`` at certain epochs: every
        ``step_size`` epochs (StepLR), at each epoch listed in ``milestones`` (MultiStepLR)
        or every epoch (ExponentialLR). The rate at epoch ``e`` is therefore
        ``lr * gamma ** k`` where ``k`` counts the decays so far; the port writes that
        formula as a lambda whose defaults hold the scheduler's arguments, evaluated once
        like PyTorch's. ``lr`` is the optimizer's rate when the scheduler is built (PyTorch's
        ``initial_lr``). PyTorch multiplies step by step in double precision and MindSpore
        stores the rate as float32, so rates agree to float32 rounding. A ``last_epoch``
        other than -1 (resuming a schedule) is not ported: it needs ``initial_lr`` in the
        optimizer's groups; restart the ``itertools.count`` at that epoch by hand.
    """,
    seed=SEED + " › Dynamic Learning Rate Differences",
    reference=REF,
    installed_note=_NOTE,
    example="""
        import torch
        import torch.nn as nn
        from torch.optim import lr_scheduler

        model = nn.Linear(2, 1)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        scheduler = lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
        rates = []
        for epoch in range(5):
            scheduler.step()
            rates.append(scheduler.get_last_lr()[0])
        last = rates[-1]
    """,
)

register(
    "SCH003",
    "CosineAnnealingLR becomes its closed form (eta_min kept; not nn.CosineDecayLR)",
    group=GROUP,
    why="""
        ``CosineAnnealingLR`` moves the rate from ``lr`` down to ``eta_min`` along half a
        cosine over ``T_max`` epochs: ``eta_min + (lr - eta_min) * (1 + cos(pi * e / T_max)) / 2``.
        PyTorch computes it recursively from the previous rate, which equals this closed
        form, including after ``T_max`` where the rate climbs back up (period ``2 * T_max``).
        MindSpore's ``nn.CosineDecayLR``/``nn.cosine_decay_lr`` count optimizer steps and
        stay at the minimum after the decay, so they differ past ``T_max``; the port writes
        the closed form instead (``math.cos``, ``math.pi``) and assigns it per epoch.
    """,
    seed=SEED + " › Dynamic Learning Rate Differences",
    reference="r2.4.10/api_mapping/pytorch_diff/CosineDecayLR.md",
    installed_note=_NOTE,
    example="""
        import torch
        import torch.nn as nn

        model = nn.Linear(2, 1)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=4, eta_min=0.01)
        for epoch in range(6):
            scheduler.step()
        lr = optimizer.param_groups[0]["lr"]
    """,
)

register(
    "SCH004",
    "LambdaLR becomes lr * lr_lambda(epoch), with the epoch-0 factor applied at once",
    group=GROUP,
    why="""
        ``LambdaLR`` sets the rate to ``initial lr * lr_lambda(epoch)``. MindSpore has no
        lambda scheduler (the seed suggests a Python list of rates or a custom
        ``LearningRateSchedule``), so the port calls the same function per epoch. Note that
        PyTorch applies ``lr_lambda(0)`` as soon as the scheduler is built, so with a lambda
        like ``epoch // 5`` training starts at rate 0; the port assigns that epoch-0 rate
        right after building the schedule too. A list of lambdas (one per parameter group)
        is not supported and is flagged.
    """,
    seed=SEED + " › Custom Learning Rate Differences",
    reference=REF,
    installed_note=_NOTE,
    example="""
        import torch
        import torch.nn as nn

        model = nn.Linear(2, 1)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lr_lambda=lambda e: 1 / (e + 1))
        first = optimizer.param_groups[0]["lr"]
        scheduler.step()
        second = scheduler.get_last_lr()[0]
    """,
)

register(
    "SCH005",
    "param_groups[0][\"lr\"] and get_last_lr() read optimizer.learning_rate",
    group=GROUP,
    why="""
        PyTorch exposes the current rate as ``optimizer.param_groups[i]["lr"]`` and, on a
        scheduler, ``get_last_lr()`` (a list with one rate per group). A MindSpore optimizer
        with one fixed rate keeps it in the float32 Parameter ``optimizer.learning_rate``, so
        the reads become ``float(optimizer.learning_rate)`` and
        ``[float(optimizer.learning_rate)]``: Python floats, like PyTorch's, equal to the
        rate rounded to float32. Other uses of ``param_groups`` (writing a rate or a weight
        decay, iterating over the groups) have no MindSpore counterpart and are flagged.
    """,
    seed=SEED + " › Obtaining the Learning Rate",
    reference=REF,
    installed_note=_NOTE,
    example="""
        import torch
        import torch.nn as nn

        model = nn.Linear(2, 1)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
        lr = optimizer.param_groups[0]["lr"]
    """,
)

register(
    "SCH006",
    "Changing settings through param_groups (weight-decay schedules) is flagged",
    group=GROUP,
    finding_only=True,
    why="""
        PyTorch lets a loop change any optimizer setting between steps by writing to
        ``optimizer.param_groups`` (for example ``group["weight_decay"] *= 0.1`` per epoch).
        MindSpore optimizers fix their settings at construction and only accept schedules
        for the learning rate and the weight decay: pass a ``Cell`` whose ``construct`` maps
        the global step to a value as ``weight_decay=`` (as the seed shows), or assign a new
        learning rate with ``ops.assign(optimizer.learning_rate, value)``. msmagic cannot
        derive such a schedule from arbitrary loop code, so these uses are left unchanged
        and flagged.
    """,
    seed="seeds/002 Optimizer Comparison › Weight Decay",
    reference=REF,
    example="""
        import torch
        import torch.nn as nn

        model = nn.Linear(2, 1)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1, weight_decay=0.1)
        for group in optimizer.param_groups:
            group["weight_decay"] *= 0.5
    """,
)


register(
    "SCH007",
    "With an experimental optimizer the rate is param_groups[0][\"lr\"]",
    group=GROUP,
    why="""
        Optimizers ported to ``mindspore.experimental.optim`` (AdamW, RMSprop, Adagrad,
        Adadelta, Adamax, NAdam, RAdam, ASGD, Rprop) have no ``learning_rate`` attribute:
        like PyTorch they keep one rate per parameter group, as a float32 Parameter in
        ``optimizer.param_groups[i]["lr"]`` that their compiled update reads on every call.
        So for them the scheduler rewrite (SCH001) assigns to
        ``optimizer.param_groups[0]["lr"]`` and the reads (SCH005) become
        ``float(optimizer.param_groups[0]["lr"])``. The optimizer is recognised by its
        construction earlier in the cell (or an earlier ported cell). An experimental
        optimizer built on several parameter groups has one rate Parameter per group,
        which the single-rate rewrite cannot drive: such a scheduler is flagged.
    """,
    seed=SEED + " › Obtaining the Learning Rate",
    reference=REF,
    installed_note="""
        Verified on MindSpore 2.10 (CPU): ``ops.assign(optimizer.param_groups[0]["lr"], 0.0)``
        stops AdamW, RMSprop, Adagrad, Adadelta, Adamax, NAdam and RAdam from moving the
        weights on the next call; ASGD and Rprop, like PyTorch's, do not use the current
        rate that way (Rprop reads it only at the first step).
    """,
    example="""
        import torch
        import torch.nn as nn

        model = nn.Linear(2, 1)
        optimizer = torch.optim.AdamW(model.parameters(), lr=0.1)
        scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.5)
        for epoch in range(3):
            scheduler.step()
        lr = optimizer.param_groups[0]["lr"]
    """,
)

register(
    "SCH008",
    "ConstantLR, LinearLR and PolynomialLR become closed-form per-epoch rates",
    group=GROUP,
    why="""
        These warm-up and decay schedulers scale the initial rate by a factor that depends
        only on the epoch: ``ConstantLR`` by ``factor`` before ``total_iters`` and by 1
        after; ``LinearLR`` by a factor moving linearly from ``start_factor`` to
        ``end_factor`` over ``total_iters`` epochs; ``PolynomialLR`` by
        ``(1 - min(epoch, total_iters) / total_iters) ** power``. PyTorch updates the rate
        step by step with ratios of consecutive factors, which equals these closed forms
        (its own ``_get_closed_form_lr``) up to rounding, so the port writes the closed form
        and assigns it per epoch (SCH001). MindSpore's ``nn.PolynomialDecayLR`` and
        ``nn.WarmUpLR`` count optimizer steps, not epochs, and their formulas differ
        (``end_learning_rate``, no start factor), so they are not used. PyTorch's defaults
        (factor 1/3, start_factor 1/3, total_iters 5) are written out.
    """,
    seed=SEED + " › Dynamic Learning Rate Differences",
    reference=REF,
    installed_note=_NOTE,
    example="""
        import torch
        import torch.nn as nn

        model = nn.Linear(2, 1)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        scheduler = torch.optim.lr_scheduler.LinearLR(optimizer, start_factor=0.25, total_iters=3)
        rates = []
        for epoch in range(5):
            scheduler.step()
            rates.append(optimizer.param_groups[0]["lr"])
    """,
)

register(
    "SCH009",
    "MultiplicativeLR becomes lr times the product of lr_lambda over the epochs",
    group=GROUP,
    why="""
        ``MultiplicativeLR`` multiplies the current rate by ``lr_lambda(epoch)`` at every
        ``step()`` (epochs 1, 2, ...; the rate at epoch 0 is the optimizer's own). The rate
        at epoch ``e`` is therefore ``lr * math.prod(lr_lambda(k) for k in range(1, e + 1))``,
        which the port writes and assigns per epoch (SCH001); the function is called once
        per epoch and factor, as often as PyTorch calls it over the run, so it should be a
        pure function of the epoch. A list of functions (one per parameter group) is not
        supported and is flagged.
    """,
    seed=SEED + " › Custom Learning Rate Differences",
    reference=REF,
    installed_note=_NOTE,
    example="""
        import torch
        import torch.nn as nn

        model = nn.Linear(2, 1)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        scheduler = torch.optim.lr_scheduler.MultiplicativeLR(optimizer, lr_lambda=lambda e: 0.9)
        rates = []
        for epoch in range(4):
            scheduler.step()
            rates.append(scheduler.get_last_lr()[0])
    """,
)

register(
    "SCH010",
    "CosineAnnealingWarmRestarts (stepped per epoch) becomes its closed form",
    group=GROUP,
    why="""
        Stepped once per epoch without arguments, ``CosineAnnealingWarmRestarts`` follows a
        cosine from ``lr`` to ``eta_min`` over ``T_0`` epochs, then restarts, each cycle
        ``T_mult`` times longer. The cycle position ``T_cur`` and length ``T_i`` are whole
        numbers of epochs, so the port computes them exactly with integers (cycle ``k``
        starts at epoch ``T_0 * (T_mult ** k - 1) // (T_mult - 1)``, or ``T_0 * k`` when
        ``T_mult`` is 1) instead of PyTorch's ``math.log`` formula for ``step(epoch)``, which
        can land on the wrong cycle at a boundary, and writes
        ``eta_min + (lr - eta_min) * (1 + cos(pi * T_cur / T_i)) / 2``. Fractional steps,
        ``step(epoch + i / iters)`` within an epoch, are not ported (SCH001), and ``T_mult``
        must be an integer literal.
    """,
    seed=SEED + " › Dynamic Learning Rate Differences",
    reference=REF,
    installed_note=_NOTE,
    example="""
        import torch
        import torch.nn as nn

        model = nn.Linear(2, 1)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        scheduler = torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(optimizer, T_0=2, T_mult=2)
        rates = []
        for epoch in range(8):
            scheduler.step()
            rates.append(optimizer.param_groups[0]["lr"])
    """,
)

register(
    "SCH011",
    "ReduceLROnPlateau, CyclicLR, OneCycleLR and scheduler chains are flagged",
    group=GROUP,
    finding_only=True,
    why="""
        These schedulers cannot become a fixed sequence of per-epoch rates assigned to
        one Parameter. ``ReduceLROnPlateau`` decides from the metric passed to
        ``step(metric)`` at run time. ``CyclicLR`` and ``OneCycleLR`` also cycle the
        optimizer's momentum (``cycle_momentum=True`` by default): that is ported for SGD
        (SCH013), but Adam-style optimizers fix their ``beta1`` at construction in
        MindSpore.
        ``SequentialLR`` and ``ChainedScheduler`` combine other scheduler objects that each
        set the rate when built. All are flagged; port them by hand: compute the rates in
        Python and ``ops.assign`` them to the optimizer's rate Parameter (SCH001, SCH007),
        or, for ``ReduceLROnPlateau``, keep the bookkeeping in Python and assign the
        reduced rate when it changes.
    """,
    seed=SEED + " › Dynamic Learning Rate Differences",
    reference=REF,
    example="""
        import torch
        import torch.nn as nn

        model = nn.Linear(2, 1)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, factor=0.5, patience=2)
    """,
)


register(
    "SCH013",
    "OneCycleLR/CyclicLR with cycle_momentum=False become per-step closed forms",
    group=GROUP,
    why="""
        ``OneCycleLR`` and ``CyclicLR`` are stepped once per batch and compute each rate from
        the step number alone: OneCycleLR anneals (cosine or linear) from ``max_lr /
        div_factor`` up to ``max_lr`` over the first ``pct_start`` of ``total_steps`` (or
        ``epochs * steps_per_epoch``) and down to ``max_lr / div_factor /
        final_div_factor`` (three phases with ``three_phase=True``); CyclicLR moves between
        ``base_lr`` and ``max_lr`` in triangles of ``step_size_up + step_size_down`` steps,
        scaled by ``mode`` (``triangular``, ``triangular2``, ``exp_range``) or by your
        ``scale_fn``. The port writes PyTorch's ``get_lr`` as one expression of the step
        number and assigns it at every ``scheduler.step()`` (SCH001), whatever the loop
        counts. Both also cycle the optimizer's momentum (or Adam's ``beta1``) unless
        ``cycle_momentum=False`` is given (even plain SGD gets a momentum, 0.95 at first
        for OneCycleLR). ``torch.optim.SGD`` ports to ``mindspore.nn.SGD``, whose
        ``momentum`` is a Parameter its compiled update reads on every call, so the
        expression also ``ops.assign``-s PyTorch's cycled momentum to it at each step.
        For other optimizers (Adam's ``betas`` are fixed at construction in MindSpore)
        only calls that write ``cycle_momentum=False`` are ported; the others, and a
        non-literal ``cycle_momentum``, are flagged (SCH011). OneCycleLR ignores the optimizer's own ``lr``, as
        PyTorch's does; stepping past ``total_steps`` raises a ValueError, as in PyTorch. Rates agree to float32 rounding (the rate Parameter is
        float32).
    """,
    seed=SEED + " › Dynamic Learning Rate Differences",
    reference=REF,
    installed_note=_NOTE,
    example="""
        import torch
        import torch.nn as nn

        model = nn.Linear(2, 1)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=0.5, total_steps=8,
                                                        cycle_momentum=False)
        rates = []
        for step in range(8):
            scheduler.step()
            rates.append(optimizer.param_groups[0]["lr"])
    """,
)


# ----------------------------------------------------------------------------- helpers


def _assigned_name(site):
    """``name`` when the call is the whole value of ``name = call``; else None."""
    holder = site.statement
    if not isinstance(holder, cst.SimpleStatementLine) or len(holder.body) != 1:
        return None
    stmt = holder.body[0]
    if (isinstance(stmt, cst.Assign) and stmt.value is site.original and len(stmt.targets) == 1
            and isinstance(stmt.targets[0].target, cst.Name)):
        return stmt.targets[0].target.value
    return None


def _construction(site, node):
    """The original ``lr_scheduler.X(...)`` call last assigned to the name ``node`` in
    the statements before this one (innermost block first, then enclosing ones)."""
    if not isinstance(node, cst.Name):
        return None
    for body, index in reversed(site.blocks):
        for stmt in reversed(body[:max(index, 0)]):
            if not isinstance(stmt, cst.SimpleStatementLine):
                continue
            for small in stmt.body:
                if (isinstance(small, cst.Assign) and isinstance(small.value, cst.Call)
                        and any(isinstance(t.target, cst.Name) and t.target.value == node.value
                                for t in small.targets)):
                    qual = site.resolve(small.value.func)
                    if qual and qual.startswith(PREFIX):
                        return small.value
    earlier = site.earlier_definition(node.value)  # built in an earlier ported cell
    if earlier is not None:
        qual = site.resolve(earlier.func)
        if qual and qual.startswith(PREFIX):
            return earlier
    return None


def _optimizer_text(site, call):
    """Code of the optimizer argument of an original scheduler call (a plain name or
    attribute chain), or None."""
    for i, arg in enumerate(call.args):
        if (arg.keyword is None and i == 0) or (arg.keyword is not None and arg.keyword.value == "optimizer"):
            value = site.updated_of(arg.value)
            return site.code(value).strip() if is_pure(value) else None
    return None


def _scheduled_optimizer(site):
    """Code of the optimizer a scheduler method's receiver was built on, or None (flagged)."""
    call = _construction(site, site.receiver_original)
    opt = _optimizer_text(site, call) if call is not None else None
    if opt is None:
        recv = site.code(site.receiver_original).strip()
        site.finding(
            "SCH001",
            f"cannot find the optimizer {recv} was built on (the scheduler must be created "
            "earlier in this cell, as name = lr_scheduler.X(optimizer, ...))",
            comment=f"{recv}: scheduler built elsewhere; port it in the same cell",
        )
    return opt


def _is_experimental(site, opt_text: str) -> bool:
    """Was the optimizer named ``opt_text`` ported to mindspore.experimental.optim?"""
    from msmagic.rules.optim import optimizer_construction, ported_to_experimental

    try:
        node = cst.parse_expression(opt_text)
    except Exception:
        return False
    call, qual = optimizer_construction(site, node)
    return ported_to_experimental(site, call, qual)


def _lr_param(site, opt_text: str) -> str:
    """The Parameter holding the optimizer's (first group's) learning rate: classic
    ``mindspore.nn`` optimizers keep it in ``learning_rate``, the experimental ones in
    ``param_groups[0]["lr"]`` (SCH007)."""
    if _is_experimental(site, opt_text):
        site.edit("SCH007", None, detail=f'{opt_text}.param_groups[0]["lr"] holds the rate')
        return f'{opt_text}.param_groups[0]["lr"]'
    return f"{opt_text}.learning_rate"


def _several_groups(site, opt_text: str) -> bool:
    """An experimental optimizer built on a list of parameter groups: each group has its
    own rate Parameter, which the single-rate rewrite cannot drive."""
    try:
        node = cst.parse_expression(opt_text)
    except Exception:
        return False
    from msmagic.rules.optim import optimizer_construction, ported_to_experimental

    call, qual = optimizer_construction(site, node)
    if call is None or not ported_to_experimental(site, call, qual):
        return False
    first = call.args[0].value if call.args else None
    for a in call.args:
        if a.keyword is not None and a.keyword.value == "params":
            first = a.value
    return isinstance(first, (cst.List, cst.Tuple)) and any(isinstance(e.value, cst.Dict) for e in first.elements)


# ----------------------------------------------------------------------------- schedulers


def _scheduler(rule: str, formula: str, defaults: dict, *, extra=()):
    """Handler for ``lr_scheduler.X``: ``formula`` uses ``epoch``, ``lr`` and the names in
    ``defaults`` (PyTorch parameter -> default text, None when required)."""

    def handler(site):
        bound = site.bound()
        if bound is None:
            site.finding("GEN003", f"arguments passed with * or ** cannot be checked for {site.api}",
                         comment="*args/**kwargs not checked")
            return None
        given = {}
        for name, arg, _ in bound:
            text = site.code(arg.value).strip()
            if name == "last_epoch" and site.literal(arg.value, None) == -1:
                continue
            if name == "verbose" and site.literal(arg.value, True) in (False, "deprecated"):
                continue
            if name in ("last_epoch", "verbose") or name is None:
                site.finding(rule, f"{name or 'argument'}={text}: resuming or printing schedules is "
                             "not ported; set the rate with ops.assign by hand",
                             comment=f"{name or 'extra argument'}= not ported")
                return None
            given[name] = text
        opt = given.pop("optimizer", None)
        target = _assigned_name(site)
        if opt is None or not is_pure(site.parse(opt)) or target is None:
            site.finding(rule, f"{site.api} is ported only as `name = {site.api.rsplit('.', 1)[-1]}"
                         "(optimizer, ...)` with the optimizer named directly",
                         comment="scheduler not ported: assign it to a name, pass the optimizer by name")
            return None
        for check in extra:
            problem = check(site, given)
            if problem:
                site.finding(rule, problem, comment=problem.split(";")[0])
                return None
        if _several_groups(site, opt):
            site.finding(rule, f"{opt} has several parameter groups, each with its own rate; the port "
                         "drives one rate only", comment="scheduler over parameter groups not ported")
            return None
        lr_param = _lr_param(site, opt)
        params = [f"lr=float({lr_param})"]
        for name, default in defaults.items():
            value = given.get(name, default)
            if value is None:
                site.finding(rule, f"{name} is required", comment=f"{name} missing")
                return None
            params.append(f"{name}={value}")
        site.require_import("itertools")
        if "math." in (formula(given) if callable(formula) else formula):
            site.require_import("math")
        text = formula(given) if callable(formula) else formula
        new = site.parse(f"map(lambda epoch, {', '.join(params)}: {text}, itertools.count())")
        assign = site.code(site.ref("mindspore.ops.assign"))
        first = parse_statement(f"{assign}({lr_param}, next({target}))\n")
        site.replace_line(lambda line: cst.FlattenSentinel([line, first]))
        short = site.api.rsplit(".", 1)[-1]
        site.edit(rule, new, detail=f"{short} -> per-epoch rates {text}; epoch-0 rate assigned")
        return new

    return handler


def _lambda_list(site, given):
    value = site.parse(given.get("lr_lambda", "None"))
    if isinstance(value, (cst.List, cst.Tuple)):
        return "lr_lambda as a list (one per parameter group) is not supported; use one function"
    return None


module(PREFIX[:-1], None)  # `from torch.optim import lr_scheduler`: each use is ported
_COMMON = dict(returns=KIND)
api(PREFIX + "StepLR", rule="SCH002", sig=("optimizer", "step_size", "gamma", "last_epoch", "verbose"),
    handler=_scheduler("SCH002", "lr * gamma ** (epoch // step_size)", {"step_size": None, "gamma": "0.1"}),
    **_COMMON)
api(PREFIX + "MultiStepLR", rule="SCH002", sig=("optimizer", "milestones", "gamma", "last_epoch", "verbose"),
    handler=_scheduler("SCH002", "lr * gamma ** sum(epoch >= m for m in milestones)",
                       {"milestones": None, "gamma": "0.1"}),
    **_COMMON)
api(PREFIX + "ExponentialLR", rule="SCH002", sig=("optimizer", "gamma", "last_epoch", "verbose"),
    handler=_scheduler("SCH002", "lr * gamma ** epoch", {"gamma": None}), **_COMMON)
api(PREFIX + "CosineAnnealingLR", rule="SCH003",
    sig=("optimizer", "T_max", "eta_min", "last_epoch", "verbose"),
    handler=_scheduler("SCH003", "eta_min + (lr - eta_min) * (1 + math.cos(math.pi * epoch / T_max)) / 2",
                       {"T_max": None, "eta_min": "0.0"}),
    **_COMMON)
api(PREFIX + "LambdaLR", rule="SCH004", sig=("optimizer", "lr_lambda", "last_epoch", "verbose"),
    handler=_scheduler("SCH004", "lr * lr_lambda(epoch)", {"lr_lambda": None}, extra=(_lambda_list,)),
    **_COMMON)


api(PREFIX + "ConstantLR", rule="SCH008", sig=("optimizer", "factor", "total_iters", "last_epoch", "verbose"),
    handler=_scheduler("SCH008", "lr * (factor if epoch < total_iters else 1.0)",
                       {"factor": "1.0 / 3", "total_iters": "5"}),
    **_COMMON)
api(PREFIX + "LinearLR", rule="SCH008",
    sig=("optimizer", "start_factor", "end_factor", "total_iters", "last_epoch", "verbose"),
    handler=_scheduler("SCH008", "lr * (start_factor + (end_factor - start_factor) * min(epoch, total_iters) "
                       "/ total_iters)", {"start_factor": "1.0 / 3", "end_factor": "1.0", "total_iters": "5"}),
    **_COMMON)
api(PREFIX + "PolynomialLR", rule="SCH008", sig=("optimizer", "total_iters", "power", "last_epoch", "verbose"),
    handler=_scheduler("SCH008", "lr * (1.0 - min(epoch, total_iters) / total_iters) ** power",
                       {"total_iters": "5", "power": "1.0"}),
    **_COMMON)
api(PREFIX + "MultiplicativeLR", rule="SCH009", sig=("optimizer", "lr_lambda", "last_epoch", "verbose"),
    handler=_scheduler("SCH009", "lr * math.prod(lr_lambda(k) for k in range(1, epoch + 1))",
                       {"lr_lambda": None}, extra=(_lambda_list,)),
    **_COMMON)


def _t_mult(site, given):
    value = site.literal(site.parse(given.get("T_mult", "1")), None)
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        return f"T_mult={given['T_mult']}: only an integer literal >= 1 is ported; write it out"
    return None


def _warm_restarts(given):
    cosine = "eta_min + (lr - eta_min) * (1 + math.cos(math.pi * {cur} / {length})) / 2"
    if int(given.get("T_mult", "1")) == 1:
        return cosine.format(cur="(epoch % T_0)", length="T_0")
    start = "T_0 * (T_mult ** {k} - 1) // (T_mult - 1)"
    inner = cosine.format(cur=f"(epoch - {start.format(k='n')})", length="(T_0 * T_mult ** n)")
    count = f"sum({start.format(k='k')} <= epoch for k in range(1, epoch.bit_length() + 2))"
    return f"(lambda n: {inner})({count})"


api(PREFIX + "CosineAnnealingWarmRestarts", rule="SCH010",
    sig=("optimizer", "T_0", "T_mult", "eta_min", "last_epoch", "verbose"),
    handler=_scheduler("SCH010", _warm_restarts, {"T_0": None, "T_mult": "1", "eta_min": "0.0"},
                       extra=(_t_mult,)),
    **_COMMON)

def _scalar(*names):
    def check(site, given):
        for name in names:
            if isinstance(site.parse(given.get(name, "0.0")), (cst.List, cst.Tuple)):
                return f"{name} as a list (one per parameter group) is not supported; give one rate"
        return None
    return check


def _choice(name, default, allowed):
    def check(site, given):
        value = site.literal(site.parse(given.get(name, repr(default))), None)
        if value not in allowed:
            return f"{name}={given.get(name)}: only a literal {' / '.join(map(repr, allowed))} is ported"
        return None
    return check


def _anneal(strategy, start, end, pct):
    if strategy == "linear":
        return f"(({end}) - ({start})) * ({pct}) + ({start})"
    return f"({end}) + (({start}) - ({end})) / 2.0 * (math.cos(math.pi * ({pct})) + 1)"


def _one_cycle(given, momentum=None):
    """PyTorch's OneCycleLR.get_lr as one expression of ``epoch`` (the step number): the
    phases' end steps are PyTorch's own floats, the last phase takes every later step,
    and a step past total_steps raises ValueError, as PyTorch's does. With ``momentum``
    (``(assign, parameter)``) the expression first assigns the cycled momentum."""
    strategy = ast_literal(given.get("anneal_strategy", "'cos'"))
    three = ast_literal(given.get("three_phase", "False"))
    init, top, low = "max_lr / div_factor", "max_lr", "max_lr / div_factor / final_div_factor"
    hi, lo = "max_momentum", "base_momentum"
    if three:
        def phases(a, b, c, d):
            return (f"{_anneal(strategy, a, b, 'epoch / e1')} if epoch <= e1 else "
                    f"{_anneal(strategy, b, a, '(epoch - e1) / (e2 - e1)')} if epoch <= e2 else "
                    f"{_anneal(strategy, c, d, '(epoch - e2) / (T - 1 - e2)')}")
        body, mom = phases(init, top, init, low), phases(hi, lo, hi, hi)
        ends = "float(pct_start * T) - 1, float(2 * pct_start * T) - 2"
    else:
        def phases(a, b, c):
            return (f"{_anneal(strategy, a, b, 'epoch / e1')} if epoch <= e1 else "
                    f"{_anneal(strategy, b, c, '(epoch - e1) / (T - 1 - e1)')}")
        body, mom = phases(init, top, low), phases(hi, lo, hi)
        ends = "float(pct_start * T) - 1, None"
    if momentum is not None:
        assign, param = momentum
        body = f"({assign}({param}, {mom}), {body})[1]"
    return (f"(lambda T: (lambda e1, e2: ({body}) if epoch <= T else int('OneCycleLR stepped past total_steps'))"
            f"({ends}))(total_steps if total_steps is not None else epochs * steps_per_epoch)")


def _cyclic(given, momentum=None):
    """PyTorch's CyclicLR.get_lr as one expression of ``epoch`` (the batch number); with
    ``momentum`` (``(assign, parameter)``) it first assigns the cycled momentum."""
    mode = ast_literal(given.get("mode", "'triangular'"))
    if given.get("scale_fn", "None") != "None":
        scale_mode = ast_literal(given.get("scale_mode", "'cycle'"))
        scale = "scale_fn(cycle)" if scale_mode == "cycle" else "scale_fn(epoch)"
    elif mode == "triangular":
        scale = "1.0"
    elif mode == "triangular2":
        scale = "1 / (2.0 ** (cycle - 1))"
    else:
        scale = "gamma ** epoch"
    up = "float(step_size_up)"
    total = f"({up} + (float(step_size_down) if step_size_down is not None else {up}))"
    lr = "base_lr + (max_lr - base_lr) * sf * ({scale})".format(scale=scale)
    if momentum is not None:
        assign, param = momentum
        lr = f"({assign}({param}, max_momentum - (max_momentum - base_momentum) * sf * ({scale})), {lr})[1]"
    return (f"(lambda total, cycle: (lambda ratio, x: (lambda sf: {lr})"
            f"(x / ratio if x <= ratio else (x - 1) / (ratio - 1)))"
            f"({up} / total, 1.0 + epoch / total - cycle))"
            f"({total}, math.floor(1 + epoch / {total}))")


def ast_literal(text):
    import ast

    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return None


_ONE_CYCLE_SIG = ("optimizer", "max_lr", "total_steps", "epochs", "steps_per_epoch", "pct_start",
                  "anneal_strategy", "cycle_momentum", "base_momentum", "max_momentum", "div_factor",
                  "final_div_factor", "three_phase", "last_epoch")
_CYCLIC_SIG = ("optimizer", "base_lr", "max_lr", "step_size_up", "step_size_down", "mode", "gamma",
               "scale_fn", "scale_mode", "cycle_momentum", "base_momentum", "max_momentum", "last_epoch")


def _needs_total(site, given):
    if given.get("total_steps", "None") == "None" and "None" in (given.get("epochs", "None"),
                                                                   given.get("steps_per_epoch", "None")):
        return "OneCycleLR needs total_steps or epochs and steps_per_epoch"
    return None


_ONE_CYCLE_EXTRA = (_scalar("max_lr", "base_momentum", "max_momentum"),
                    _choice("anneal_strategy", "cos", ("cos", "linear")),
                    _choice("three_phase", False, (False, True)), _needs_total)
_CYCLIC_EXTRA = (_scalar("base_lr", "max_lr", "base_momentum", "max_momentum"),
                 _choice("mode", "triangular", ("triangular", "triangular2", "exp_range")),
                 _choice("scale_mode", "cycle", ("cycle", "iterations")))
_one_cycle_port = _scheduler("SCH013", _one_cycle, {
    "max_lr": None, "total_steps": "None", "epochs": "None", "steps_per_epoch": "None", "pct_start": "0.3",
    "div_factor": "25.0", "final_div_factor": "1e4"}, extra=_ONE_CYCLE_EXTRA)
_cyclic_port = _scheduler("SCH013", _cyclic, {
    "base_lr": None, "max_lr": None, "step_size_up": "2000", "step_size_down": "None", "gamma": "1.0",
    "scale_fn": "None"}, extra=_CYCLIC_EXTRA)


_ONE_CYCLE_DEFAULTS = {"max_lr": None, "total_steps": "None", "epochs": "None", "steps_per_epoch": "None",
                       "pct_start": "0.3", "div_factor": "25.0", "final_div_factor": "1e4"}
_CYCLIC_DEFAULTS = {"base_lr": None, "max_lr": None, "step_size_up": "2000", "step_size_down": "None",
                    "gamma": "1.0", "scale_fn": "None"}
_MOMENTUM_DEFAULTS = {"OneCycleLR": {"base_momentum": "0.85", "max_momentum": "0.95"},
                      "CyclicLR": {"base_momentum": "0.8", "max_momentum": "0.9"}}


def _sgd_optimizer(site, opt_text):
    """Is ``opt_text`` a ``torch.optim.SGD`` ported to ``mindspore.nn.SGD``, whose
    ``momentum`` is a Parameter its compiled update reads on every call?"""
    from msmagic.rules.optim import optimizer_construction

    try:
        node = cst.parse_expression(opt_text)
    except Exception:
        return False
    _, qual = optimizer_construction(site, node)
    return qual == "torch.optim.SGD"


def _momentum_switch(name, port):
    """``cycle_momentum=False`` written: rates only. PyTorch's default also cycles the
    optimizer's momentum: ported for an SGD optimizer (``mindspore.nn.SGD`` reads its
    ``momentum`` Parameter on every step), flagged otherwise (Adam's beta1)."""

    def handler(site):
        bound = site.bound()
        if bound is None:
            return _unported(name)(site)
        values = {pname: arg for pname, arg, _ in bound}
        flag = values.get("cycle_momentum")
        if flag is not None and site.literal(flag.value, None) is False:
            return port(site)
        if flag is not None and site.literal(flag.value, None) is not True:
            return _unported(name)(site)
        opt = values.get("optimizer")
        opt_text = site.code(opt.value).strip() if opt is not None else ""
        if not opt_text or not _sgd_optimizer(site, opt_text):
            return _unported(name)(site)
        assign = site.code(site.ref("mindspore.ops.assign")).strip()
        momentum = (assign, f"{opt_text}.momentum")
        formula = _one_cycle if name == "OneCycleLR" else _cyclic
        defaults = {**(_ONE_CYCLE_DEFAULTS if name == "OneCycleLR" else _CYCLIC_DEFAULTS), **_MOMENTUM_DEFAULTS[name]}
        extra = _ONE_CYCLE_EXTRA if name == "OneCycleLR" else _CYCLIC_EXTRA
        site.edit("SCH013", None, detail=f"{name} also cycles {opt_text}.momentum (ops.assign per step)")
        return _scheduler("SCH013", lambda given: formula(given, momentum), defaults, extra=extra)(site)

    return handler


api(PREFIX + "OneCycleLR", rule="SCH013", sig=_ONE_CYCLE_SIG,
    handler=_momentum_switch("OneCycleLR", _one_cycle_port), **_COMMON)
api(PREFIX + "CyclicLR", rule="SCH013", sig=_CYCLIC_SIG,
    handler=_momentum_switch("CyclicLR", _cyclic_port), **_COMMON)


_UNPORTED = {
    "ReduceLROnPlateau": "it reduces the rate from the metric values passed to step(metric) at run time "
                         "(patience, threshold, cooldown), so no sequence of rates fixed in advance "
                         "reproduces it",
    "CyclicLR": "with cycle_momentum=True (the default) it also cycles the optimizer's momentum "
                "(Adam's beta1 here), which this MindSpore optimizer fixes at construction; it is "
                "ported for torch.optim.SGD, or with cycle_momentum=False written out (SCH013)",
    "OneCycleLR": "with cycle_momentum=True (the default) it also cycles the optimizer's momentum "
                  "(Adam's beta1 here), which this MindSpore optimizer fixes at construction; it is "
                  "ported for torch.optim.SGD, or with cycle_momentum=False written out (SCH013)",
    "SequentialLR": "it chains other scheduler objects, each of which sets the rate when built",
    "ChainedScheduler": "it chains other scheduler objects, each of which sets the rate when built",
}
register(
    "SCH012",
    "A scheduler class of your own derives from MindSpore's experimental LRScheduler",
    group=GROUP,
    why="""
        Tutorials write their own schedule by subclassing ``_LRScheduler`` (or
        ``LRScheduler``): ``__init__`` stores settings and calls ``super().__init__(optimizer)``,
        ``get_lr()`` returns one rate per parameter group from ``self.base_lrs`` and
        ``self.last_epoch``, and ``step()`` (inherited) advances ``last_epoch`` and writes the
        rates into the optimizer. ``mindspore.experimental.optim.lr_scheduler.LRScheduler``
        has the same protocol (``__init__(optimizer, last_epoch=-1)``, ``base_lrs``,
        ``last_epoch``, ``get_lr()``, ``step()``, ``get_last_lr()``) for the
        ``mindspore.experimental.optim`` optimizers, which is what PyTorch's Adam, AdamW,
        RMSprop, Adagrad... port to; so the base class is replaced and the class body stays
        as written. Differences: ``last_epoch`` is a float32 Parameter rather than an int, so
        the rates are computed in float32 (a relative difference near 1e-7) and
        ``get_last_lr()`` returns tensors; and the class works only with an experimental
        optimizer: built on a ``mindspore.nn`` optimizer (SGD ports to ``nn.SGD``) it raises
        a TypeError when constructed.
    """,
    seed=SEED + " › Dynamic Learning Rate Differences",
    reference="r2.6.0/api_mapping/pytorch_api_mapping.md (torch.optim.lr_scheduler.LRScheduler)",
    installed_note="""
        Verified on 2.10: a subclass with the tutorial's cosine-warmup ``get_lr`` gives the
        rates PyTorch gives, step after step, through ``optimizer.param_groups[0]["lr"]``.
    """,
    example="""
        import numpy as np
        import torch
        import torch.optim as optim

        class CosineWarmupScheduler(optim.lr_scheduler._LRScheduler):
            def __init__(self, optimizer, warmup, max_iters):
                self.warmup = warmup
                self.max_num_iters = max_iters
                super().__init__(optimizer)

            def get_lr(self):
                lr_factor = self.get_lr_factor(epoch=self.last_epoch)
                return [base_lr * lr_factor for base_lr in self.base_lrs]

            def get_lr_factor(self, epoch):
                lr_factor = 0.5 * (1 + np.cos(np.pi * epoch / self.max_num_iters))
                if epoch <= self.warmup:
                    lr_factor *= epoch * 1.0 / self.warmup
                return lr_factor

        p = torch.nn.Parameter(torch.zeros(4, 4))
        optimizer = optim.Adam([p], lr=1e-3)
        scheduler = CosineWarmupScheduler(optimizer=optimizer, warmup=10, max_iters=200)
        rates = []
        for _ in range(15):
            optimizer.step()
            scheduler.step()
            rates.append(float(optimizer.param_groups[0]["lr"]))
    """,
)


def _unported(name):
    def handler(site):
        site.finding("SCH011", f"{name} is not ported: {_UNPORTED[name]}; compute the rates in Python and "
                     "ops.assign them to the optimizer's rate Parameter (rules SCH001, SCH007)",
                     comment=f"{name} not ported; see rule SCH011")
        return None
    return handler


for _name in ("ReduceLROnPlateau", "SequentialLR", "ChainedScheduler"):
    api(PREFIX + _name, rule="SCH011", handler=_unported(_name), **_COMMON)
for _name in ("LRScheduler", "_LRScheduler"):  # as the base class of a user's scheduler
    api(PREFIX + _name, "mindspore.experimental.optim.lr_scheduler.LRScheduler", rule="SCH012")


# ----------------------------------------------------------------------------- methods


def _step(site):
    if site.original.args:
        site.finding("SCH001", "scheduler.step(epoch) (deprecated in PyTorch) is not ported; call "
                     "step() once per epoch", comment="step(epoch) not ported")
        return None
    opt = _scheduled_optimizer(site)
    if opt is None:
        return None
    recv = site.code(site.receiver).strip()
    lr_param = _lr_param(site, opt)
    new = site.parse(f"{site.code(site.ref('mindspore.ops.assign'))}({lr_param}, next({recv}))")
    site.edit("SCH001", new, detail=f"{recv}.step() -> assign next rate to {lr_param}")
    return new


def _get_last_lr(site):
    opt = _scheduled_optimizer(site)
    if opt is None:
        return None
    lr_param = _lr_param(site, opt)
    new = site.parse(f"[float({lr_param})]")
    site.edit("SCH005", new, detail=f".get_last_lr() -> [float({lr_param})]")
    return new


def _unknown_scheduler(site) -> bool:
    """A receiver of unknown kind named like a scheduler (built in another cell): flag it,
    never port it on a guess."""
    recv = site.code(site.receiver_original).strip()
    if "sched" in recv.lower():
        site.finding("SCH001", f"{recv} was not built in this cell, so msmagic cannot tell which "
                     "optimizer it drives; port the cell that builds it together with this one",
                     comment=f"{recv}: scheduler built elsewhere; port it in the same cell")
    return False


method("step", "SCH001", receiver=KIND, handler=_step, unambiguous=_unknown_scheduler, returns=None)
method("get_last_lr", "SCH005", receiver=KIND, handler=_get_last_lr, unambiguous=_unknown_scheduler,
       returns=None)


def _lr_read(site):
    """``optimizer.param_groups[0]["lr"]`` (a read) -> ``float(optimizer.learning_rate)``;
    any other use of ``param_groups`` is flagged (SCH006)."""
    holder = site.statement
    simple = isinstance(holder, cst.SimpleStatementLine)
    chain = _lr_subscript(holder, site.original) if simple else None
    recv = site.code(site.receiver).strip()
    if chain is None:
        site.finding(
            "SCH006",
            f"{recv}.param_groups is used to read or change optimizer settings other than reading "
            "param_groups[0]['lr']; MindSpore optimizers fix them at construction (learning rate: "
            "ops.assign(optimizer.learning_rate, v); weight decay schedule: pass a Cell as weight_decay=)",
            comment="param_groups has no MindSpore counterpart; see rule SCH006",
        )
        return None
    marker = site.updated.with_changes()  # a fresh node to find in the ported line
    lr_param = _lr_param(site, recv)
    new = site.parse(f"float({lr_param})")

    site.replace_line(lambda line: line.visit(_Swap(marker, new)))
    site.edit("SCH005", new, detail=f'{recv}.param_groups[0]["lr"] -> float({lr_param})')
    return marker


def _lr_subscript(holder, attr):
    """Is ``attr`` (``opt.param_groups``) read as ``attr[0]["lr"]`` in ``holder``?"""
    found = []

    class _Find(cst.CSTVisitor):
        def visit_Subscript(self, node):
            inner = node.value
            if (isinstance(inner, cst.Subscript) and inner.value is attr
                    and _only_index(inner) == 0 and _only_index(node) == "lr"):
                found.append(node)

        def visit_AssignTarget(self, node):
            return False  # a write is not a read

        def visit_AugAssign(self, node):
            node.value.visit(self)
            return False

    holder.visit(_Find())
    return found[0] if found else None


def _only_index(sub: cst.Subscript):
    if len(sub.slice) != 1 or not isinstance(sub.slice[0].slice, cst.Index):
        return None
    value = sub.slice[0].slice.value
    if isinstance(value, cst.Integer):
        return int(value.value)
    if isinstance(value, cst.SimpleString):
        return value.evaluated_value
    return None


class _Swap(cst.CSTTransformer):
    """Replace ``marker[0]["lr"]`` by ``new`` in a ported line."""

    def __init__(self, marker, new):
        super().__init__()
        self.marker, self.new = marker, new

    def leave_Subscript(self, original, updated):
        inner = original.value
        if isinstance(inner, cst.Subscript) and inner.value is self.marker:
            return self.new
        return updated


member("param_groups", "SCH005", receiver="optimizer", handler=_lr_read)
