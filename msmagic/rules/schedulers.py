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

from msmagic.engine.core import parse_statement
from msmagic.engine.spec import api, member, method, module
from msmagic.rules._util import is_pure
from msmagic.rules.registry import register

GROUP = "Learning-rate schedules"
SEED = "seeds/002 Learning Rate Strategy Comparison"
REF = "r2.4.10/api_mapping/pytorch_api_mapping.md (torch.optim.lr_scheduler)"
PREFIX = "torch.optim.lr_scheduler."
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
    for body, _, index in reversed(site.t.blocks):
        for stmt in reversed(body[:max(index, 0)]):
            if not isinstance(stmt, cst.SimpleStatementLine):
                continue
            for small in stmt.body:
                if (isinstance(small, cst.Assign) and isinstance(small.value, cst.Call)
                        and any(isinstance(t.target, cst.Name) and t.target.value == node.value
                                for t in small.targets)):
                    qual = site.t.resolve(small.value.func)
                    if qual and qual.startswith(PREFIX):
                        return small.value
    earlier = site.earlier_definition(node.value)  # built in an earlier ported cell
    if earlier is not None:
        qual = site.t.resolve(earlier.func)
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
        params = [f"lr=float({opt}.learning_rate)"]
        for name, default in defaults.items():
            value = given.get(name, default)
            if value is None:
                site.finding(rule, f"{name} is required", comment=f"{name} missing")
                return None
            params.append(f"{name}={value}")
        site.require_import("itertools")
        if "math." in formula:
            site.require_import("math")
        new = site.parse(f"map(lambda epoch, {', '.join(params)}: {formula}, itertools.count())")
        assign = site.code(site.ref("mindspore.ops.assign"))
        first = parse_statement(f"{assign}({opt}.learning_rate, next({target}))\n")
        site.on_line(lambda line: cst.FlattenSentinel([line, first]))
        short = site.api.rsplit(".", 1)[-1]
        site.edit(rule, new, detail=f"{short} -> per-epoch rates {formula}; epoch-0 rate assigned")
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
    new = site.parse(f"{site.code(site.ref('mindspore.ops.assign'))}({opt}.learning_rate, next({recv}))")
    site.edit("SCH001", new, detail=f"{recv}.step() -> assign next rate to {opt}.learning_rate")
    return new


def _get_last_lr(site):
    opt = _scheduled_optimizer(site)
    if opt is None:
        return None
    new = site.parse(f"[float({opt}.learning_rate)]")
    site.edit("SCH005", new, detail=f".get_last_lr() -> [float({opt}.learning_rate)]")
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
    new = site.parse(f"float({recv}.learning_rate)")

    site.on_line(lambda line: line.visit(_Swap(marker, new)))
    site.edit("SCH005", new, detail=f'{recv}.param_groups[0]["lr"] -> float({recv}.learning_rate)')
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
