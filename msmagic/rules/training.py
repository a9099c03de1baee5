"""The training step: ``optimizer.zero_grad()`` / forward / ``loss.backward()`` /
``optimizer.step()`` in a loop (or function) body becomes a forward function, a
``value_and_grad`` over the optimizer's parameters defined once before the loop, and
``loss, grads = grad_fn(...)`` + ``optimizer(grads)`` in the body.

The analysis works on the ORIGINAL statements of the block (``_analyse``, cached per
block so line handlers and the loop hook agree); the output is built from the ported
statements. Loop shapes that cannot be rewritten faithfully are flagged (TRN004)."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Optional

import libcst as cst

from msmagic.engine.build import code as _code
from msmagic.engine.spec import api, statement_hook
from msmagic.rules.registry import register

GROUP = "Autograd and training"
SEED = "seeds/002 Automatic Differentiation"
CLIPS = ("torch.nn.utils.clip_grad_norm_", "torch.nn.utils.clip_grad_value_")

register(
    "TRN001",
    "zero_grad/backward/step becomes value_and_grad and optimizer(grads)",
    group=GROUP,
    why="""
        PyTorch records the graph while the forward statements run, ``loss.backward()``
        accumulates gradients into each parameter's ``.grad`` and ``optimizer.step()`` reads
        them, so ``zero_grad()`` is needed to clear the previous step. MindSpore instead
        differentiates a function: the statements that compute the loss become
        ``forward_fn`` (names that change from one iteration to the next are its parameters),
        ``mindspore.value_and_grad(forward_fn, None, optimizer.parameters)`` is built once
        before the loop, and each step calls it and hands the fresh gradients to
        ``optimizer(grads)``; there is nothing to zero. Values the forward statements bind
        besides the loss (predictions, logits) come back as auxiliary outputs
        (``has_aux=True``) so code after the step still sees them. MindSpore 2.10 rejects
        ``has_aux=True`` for a single output, so it is only set when there are aux values.
        Frozen parameters need nothing special: ``optimizer.parameters`` only holds the
        trainable ones.
    """,
    seed=SEED + " › nn.Cell gradient / Optimizer Execution and Usage Differences",
    reference="r2.4.10/api_mapping/pytorch_api_mapping.md (torch.Tensor.backward)",
    installed_note="""
        Verified on 2.10: value_and_grad(fn, None, weights, has_aux=True) raises "When has_aux
        is True, origin fn requires more than one outputs" for a one-output function, so the
        port uses has_aux=False there.
    """,
    example="""
        import torch
        import torch.nn as nn

        X = torch.linspace(-1, 1, 12).reshape(6, 2)
        y = X.sum(1, keepdim=True) * 0.5
        model = nn.Linear(2, 1)
        loss_fn = nn.MSELoss()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

        def train(steps):
            losses = []
            for step in range(steps):
                optimizer.zero_grad()
                pred = model(X)
                loss = loss_fn(pred, y)
                loss.backward()
                optimizer.step()
                losses.append(loss.item())
            return losses

        losses = train(3)
    """,
)

register(
    "TRN002",
    "clip_grad_norm_ / clip_grad_value_ clip the grads tuple before optimizer(grads)",
    group=GROUP,
    why="""
        PyTorch clips the ``.grad`` fields of the parameters in place between ``backward()``
        and ``step()``. In MindSpore the gradients are a tuple returned by ``grad_fn``, so
        clipping is a function of that tuple: ``ops.clip_by_global_norm(grads, max_norm)``
        scales every gradient by ``max_norm / max(total_norm, max_norm)`` and
        ``ops.clip_by_value(grads, -v, v)`` clamps each one. PyTorch adds 1e-6 to the norm
        before dividing, a relative difference of about 1e-6 / norm. The clip covers every
        gradient the optimizer receives, so it must name the same parameters as the
        optimizer; only the 2-norm is ported, and using the returned total norm is flagged.
    """,
    seed=SEED + " › Gradient clipping",
    reference="r2.4.10/api_mapping/pytorch_api_mapping.md (torch.nn.utils.clip_grad_norm_)",
    example="""
        import torch
        import torch.nn as nn

        X = torch.linspace(-3, 3, 12).reshape(6, 2)
        y = X.sum(1, keepdim=True) * 4.0
        model = nn.Linear(2, 1)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.05)

        def train(steps):
            losses = []
            for step in range(steps):
                optimizer.zero_grad()
                loss = ((model(X) - y) ** 2).mean()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                optimizer.step()
                losses.append(loss.item())
            return losses

        losses = train(3)
    """,
)

register(
    "TRN003",
    "Several backward() calls before one step() differentiate the sum of the losses",
    group=GROUP,
    why="""
        Calling ``backward()`` on two losses before ``step()`` adds both gradients into
        ``.grad`` (``retain_graph=True`` keeps the shared graph alive for the second call).
        That is the gradient of their sum, so the forward function returns ``loss1 + loss2``
        as the value to differentiate and the individual losses as auxiliary outputs.
        ``retain_graph`` is dropped: MindSpore keeps no graph between calls, and each
        ``grad_fn`` call runs the forward pass again. The result equals summing the losses
        before a single ``backward()`` in PyTorch.
    """,
    seed=SEED,
    reference="r2.4.10/api_mapping/pytorch_api_mapping.md (torch.Tensor.backward)",
    example="""
        import torch
        import torch.nn as nn

        X = torch.linspace(-1, 1, 12).reshape(6, 2)
        model = nn.Linear(2, 2)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

        def train(steps):
            for step in range(steps):
                optimizer.zero_grad()
                out = model(X)
                loss1 = out.pow(2).mean()
                loss2 = out.abs().mean()
                loss1.backward(retain_graph=True)
                loss2.backward()
                optimizer.step()
            return loss1.item(), loss2.item()

        last = train(3)
    """,
)

register(
    "TRN004",
    "Training loops that cannot be rewritten faithfully are flagged",
    group=GROUP,
    finding_only=True,
    why="""
        The rewrite needs one block holding the whole step: the backward call(s), exactly
        one ``optimizer.step()`` and a ``zero_grad()``, with the loss computed by plain
        assignments. Otherwise (gradients accumulated over several iterations, a step inside
        an ``if``, no ``zero_grad()`` so PyTorch keeps adding to ``.grad``, two optimizers, a
        step at the top level of a cell) the loop is left as it is and flagged. To port it by
        hand: move the loss computation into a function, build ``grad_fn =
        mindspore.value_and_grad(fn, None, optimizer.parameters)``, and for accumulation sum
        the returned gradient tuples (``acc = tuple(a + g for a, g in zip(acc, grads))``)
        and call ``optimizer(acc)`` where PyTorch steps.
    """,
    seed=SEED,
    example="""
        import torch
        import torch.nn as nn

        model = nn.Linear(2, 1)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        X = torch.ones(4, 2)
        for i in range(4):
            loss = model(X).mean() / 2
            loss.backward()
            if i % 2 == 1:
                optimizer.step()
                optimizer.zero_grad()
    """,
)


# ----------------------------------------------------------------------------- analysis


def _call_of(stmt) -> Optional[cst.Call]:
    """The call of a one-expression statement line (``x.f()``), else None."""
    if (
        isinstance(stmt, cst.SimpleStatementLine)
        and len(stmt.body) == 1
        and isinstance(stmt.body[0], cst.Expr)
        and isinstance(stmt.body[0].value, cst.Call)
    ):
        return stmt.body[0].value
    return None


def _method_name(call) -> Optional[str]:
    return call.func.attr.value if call is not None and isinstance(call.func, cst.Attribute) else None


def _names(node, ctx) -> list[str]:
    """Names read (ast.Load) or bound (ast.Store) in a statement, in order."""
    tree = ast.parse(_code(node).strip() + "\n")
    out = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ctx):
            out.append(n.id)
        elif ctx is ast.Store and isinstance(n, ast.arg):
            out.append(n.arg)
    return list(dict.fromkeys(out))


def _reads_in_order(stmt) -> list[str]:
    tree = ast.parse(_code(stmt).strip() + "\n")
    return [n.id for n in sorted((n for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)),
                                 key=lambda n: (n.lineno, n.col_offset))]


@dataclass
class _Plan:
    problem: Optional[tuple] = None  # (original node, reason, comment)
    zero: list = field(default_factory=list)
    backs: list = field(default_factory=list)  # original backward Calls
    step: Optional[cst.Call] = None
    clips: list = field(default_factory=list)  # (statement index, Call)
    forward: list = field(default_factory=list)  # statement indices
    index: dict = field(default_factory=dict)  # statement index -> role


def _is_optimizer(ctx, recv, zero_recvs) -> bool:
    kind = ctx.kind_of(recv)
    if kind == "optimizer":
        return True
    if kind is not None:
        return False
    text = _code(recv).strip()
    return text in zero_recvs or (isinstance(recv, cst.Name) and "opt" in recv.value.lower())


def _analyse(ctx, stmts) -> _Plan:
    cache = ctx.scratch("training").setdefault("plans", {})
    key = id(stmts[0]) if stmts else 0
    if key not in cache:
        cache[key] = _plan(ctx, stmts)
    return cache[key]


def _plan(ctx, stmts) -> _Plan:
    p = _Plan()
    calls = [_call_of(s) for s in stmts]
    zero_recvs = {_code(c.func.value).strip() for c in calls if _method_name(c) == "zero_grad"}
    steps = []
    for i, c in enumerate(calls):
        name = _method_name(c)
        if name == "backward":
            p.backs.append(c)
            p.index[i] = "backward"
        elif name == "zero_grad":
            p.zero.append(c)
            p.index[i] = "zero"
        elif name == "step" and _is_optimizer(ctx, c.func.value, zero_recvs):
            steps.append((i, c))
            p.index[i] = "step"
        elif c is not None and ctx.resolve(c.func) in CLIPS:
            p.clips.append((i, c))
            p.index[i] = "clip"
    if not p.backs:
        if steps:
            p.problem = (steps[0][1], "optimizer.step() without loss.backward() in the same block: the "
                         "gradients come from elsewhere (accumulation or a conditional step)",
                         "step without backward here; port the gradient computation by hand")
        return p
    first_back = min(i for i, r in p.index.items() if r == "backward")
    last_back = max(i for i, r in p.index.items() if r == "backward")
    back = p.backs[0]
    if len(steps) != 1:
        why = ("no optimizer.step() in the same block as loss.backward() (gradient accumulation or "
               "a conditional step)") if not steps else "several optimizer.step() calls in one block"
        p.problem = (back, why, "training step not rewritten; see rule TRN004")
        return p
    step_i, p.step = steps[0]
    if p.step.args:
        p.problem = (p.step, "optimizer.step(closure) has no MindSpore counterpart",
                     "step(closure) not ported")
        return p
    if not p.zero:
        p.problem = (back, "no zero_grad() in this block: PyTorch lets the gradients accumulate across "
                     "iterations, MindSpore's grad_fn returns fresh ones; add zero_grad() or sum the "
                     "grads tuples by hand",
                     "gradients accumulate across iterations; port by hand (rule TRN004)")
        return p
    zero_i = [i for i, r in p.index.items() if r == "zero"]
    if len(zero_i) > 1 or first_back < zero_i[0] < step_i:
        p.problem = (p.zero[0], "zero_grad() between backward() and step() (or called twice): the "
                     "step does not use the gradients of this block's loss", "zero_grad placement not ported")
        return p
    if any(not (last_back < i < step_i) for i, _ in p.clips):
        p.problem = (p.clips[0][1], "gradient clipping outside backward()..step()", "clip not ported")
        return p
    for c in p.backs:
        for a in c.args:
            kw = a.keyword.value if a.keyword else None
            if kw == "retain_graph":
                continue
            p.problem = (c, f"backward({_code(a).strip()}) has no counterpart in the training-step rewrite",
                         "backward arguments not ported")
            return p
    # forward statements: those the losses depend on, before the last backward
    needed = set()
    for c in p.backs:
        needed |= set(_names(c.func.value, ast.Load))
    forward = []
    for i in range(last_back - 1, -1, -1):
        if i in p.index:
            continue
        s = stmts[i]
        bound = set(_names(s, ast.Store))
        if not bound & needed:
            continue
        if not (isinstance(s, cst.SimpleStatementLine)
                and all(isinstance(b, (cst.Assign, cst.AugAssign, cst.AnnAssign)) for b in s.body)):
            p.problem = (back, "the loss is computed by a compound statement; only plain assignments "
                         "can be moved into the forward function", "loss computation not ported")
            return p
        forward.append(i)
        needed |= set(_names(s, ast.Load))
    p.forward = sorted(forward)
    return p


def _literal(node):
    try:
        return ast.literal_eval(_code(node).strip())
    except Exception:
        return None


# ----------------------------------------------------------------------------- rewrite

_LOOPS = (cst.For, cst.While)


def _varying(owner) -> set:
    """Names that may change per iteration / call: bound anywhere in the loop (target
    and body) or the function (parameters and body)."""
    return set(_names(owner, ast.Store))


def _stmt(text: str):
    return cst.parse_statement(text)


def _training_step(ctx, original, updated):
    if not ctx.torch_in_scope or not isinstance(updated, type(original)):
        return updated
    hoisted = _hoisted(ctx).pop(id(original), None)
    if isinstance(original, cst.FunctionDef) and ctx.classes:
        return updated
    body = original.body
    if not isinstance(body, cst.IndentedBlock):
        return _emit(ctx, original, updated, hoisted)
    stmts = list(body.body)
    p = _analyse(ctx, stmts)
    if not p.backs or p.problem:
        if p.problem:
            node, reason, comment = p.problem
            ctx.finding("TRN004", reason, node=node, api=".backward()", comment=comment)
        return _emit(ctx, original, updated, hoisted)
    new_body = list(updated.body.body)
    if len(new_body) != len(stmts):
        ctx.finding("TRN004", "a statement of this block was split while porting; the training step was not rewritten",
                  node=p.backs[0], api=".backward()",
                  comment="training step not rewritten; see rule TRN004")
        return _emit(ctx, original, updated, hoisted)
    # owners the definitions are hoisted before: this statement, and enclosing loops
    owners = [original]
    for h in reversed(ctx.enclosing_statements[:-1]):
        if isinstance(h, _LOOPS) and isinstance(owners[-1], _LOOPS):
            owners.append(h)
        else:
            break
    varying = set().union(*(_varying(o) for o in owners))
    # forward function
    defined, params = set(), []
    for i in p.forward:
        for n in _reads_in_order(stmts[i]):
            if n not in defined and n in varying and n not in params:
                params.append(n)
        defined |= set(_names(stmts[i], ast.Store))
    for c in p.backs:
        for n in _names(c.func.value, ast.Load):
            if n not in defined and n in varying and n not in params:
                params.append(n)
    losses = [c.func.value for c in p.backs]
    loss_names = [x.value for x in losses if isinstance(x, cst.Name)]
    aux = [n for i in p.forward for n in _names(stmts[i], ast.Store) if n not in loss_names]
    aux = list(dict.fromkeys(aux))
    up = [_code(ctx.updated_of(x)).strip() for x in losses]
    if len(losses) == 1:
        first = [up[0]]
        targets = [loss_names[0] if loss_names else "_"]
    else:
        first = [" + ".join(f"({u})" if not isinstance(x, (cst.Name, cst.Call, cst.Attribute)) else u
                            for u, x in zip(up, losses))] + loss_names
        targets = ["_"] + loss_names
    outs = first + aux
    targets += aux
    fwd_name, grad_name = ctx.fresh_name("forward_fn"), ctx.fresh_name("grad_fn")
    grads = ctx.fresh_name("grads")
    step_i = next(i for i, r in p.index.items() if r == "step")
    opt = _code(new_body[step_i].body[0].value.func.value).strip()
    vag = _code(ctx.ref("mindspore.value_and_grad")).strip()
    has_aux = len(outs) > 1
    fwd_body = [new_body[i] for i in p.forward]
    ret = _stmt(f"return {', '.join(outs)}\n")
    header = _stmt(f"def {fwd_name}({', '.join(params)}):\n    pass\n")
    fn = header.with_changes(body=header.body.with_changes(body=[*fwd_body, ret]))
    gfn = _stmt(f"{grad_name} = {vag}({fwd_name}, None, {opt}.parameters"
                f"{', has_aux=True' if has_aux else ''})\n")
    unpack = f"({', '.join(targets)}{',' if len(targets) == 1 else ''})" if has_aux else targets[0]
    call = _stmt(f"{unpack}, {grads} = {grad_name}({', '.join(params)})\n")
    # the loop body
    out = []
    _forget(ctx, [stmts[i] for i in p.index])  # their own edits/findings: the statements are replaced
    first_fwd = p.forward[0] if p.forward else min(i for i, r in p.index.items() if r == "backward")
    for i, (o, u) in enumerate(zip(stmts, new_body)):
        role = p.index.get(i)
        if i == first_fwd:
            out.append(call.with_changes(leading_lines=u.leading_lines if i not in p.forward else ()))
            continue
        if i in p.forward:
            continue
        if role in ("zero", "backward"):
            continue
        if role == "clip":
            out.append(_clip(ctx, o, u, grads).with_changes(leading_lines=u.leading_lines))
            continue
        if role == "step":
            new_step = _stmt(f"{opt}({grads})\n").with_changes(leading_lines=u.leading_lines,
                                                                 trailing_whitespace=u.trailing_whitespace)
            out.append(new_step)
            continue
        out.append(u)
    detail = (f"{fwd_name}({', '.join(params)}) returns {', '.join(outs)}; "
              f"{grad_name} = value_and_grad(...) before the loop; {opt}(grads) steps")
    ctx.edit("TRN001", call, node=p.backs[0], api="loss.backward()", detail=detail)
    if len(p.backs) > 1:
        ctx.edit("TRN003", call, node=p.backs[1], api="loss.backward()",
                 detail=f"{len(p.backs)} backward() calls -> gradient of {first[0]}")
    for c in p.backs:
        if c.args:
            ctx.edit("TRN003", call, node=c, api="loss.backward()", detail="retain_graph= dropped")
    new = updated.with_changes(body=updated.body.with_changes(body=out))
    defs = [fn.with_changes(leading_lines=()), gfn] + (hoisted or [])
    if len(owners) > 1:  # defined before the outermost loop: stash them with it
        _hoisted(ctx).setdefault(id(owners[-1]), [])[:0] = defs
        return new
    return _emit(ctx, original, new, defs)


def _emit(ctx, original, updated, defs):
    if not defs:
        return updated
    lead = updated.leading_lines
    defs = [defs[0].with_changes(leading_lines=lead), *defs[1:]]
    return cst.FlattenSentinel([*defs, updated.with_changes(leading_lines=())])


def _clip(ctx, o, u, grads):
    call = _call_of(o)
    qual = ctx.resolve(call.func)
    args = {a.keyword.value if a.keyword else i: a for i, a in enumerate(u.body[0].value.args)}
    limit = args.get(1) or args.get("max_norm") or args.get("clip_value")
    text = _code(ctx.updated_of(limit.value)).strip()
    if qual.endswith("norm_"):
        target = _code(ctx.ref("mindspore.ops.clip_by_global_norm")).strip()
        new = _stmt(f"{grads} = {target}({grads}, {text})\n")
    else:
        target = _code(ctx.ref("mindspore.ops.clip_by_value")).strip()
        new = _stmt(f"{grads} = {target}({grads}, -({text}), {text})\n")
    ctx.edit("TRN002", new, node=call, api=qual, detail=f"{qual.rsplit('.', 1)[1]} -> {target} on {grads}")
    return new


def _forget(ctx, originals) -> None:
    """Drop edits and findings logged for nodes inside statements the rewrite replaced."""
    nodes = []

    class _Nodes(cst.CSTVisitor):
        def on_visit(self, node):
            nodes.append(node)
            return True

    for o in originals:
        o.visit(_Nodes())
    ctx.forget(*nodes, findings_too=True)


def _hoisted(ctx) -> dict:
    """id(original loop or function) -> helper definitions to put above it."""
    return ctx.scratch("training").setdefault("hoist", {})


statement_hook("TRN001", cst.For, cst.While, cst.FunctionDef)(_training_step)


# ----------------------------------------------------------------------------- clipping calls


def _clip_call(site):
    """Clipping is rewritten by the training-step hook when it sits in a recognised step;
    anywhere else it is flagged."""
    if site.is_statement and site.blocks and site.depth > 0:
        p = _analyse(site, site.blocks[-1][0])  # the block holding the call's statement
        if p.backs and not p.problem and any(c is site.original for _, c in p.clips):
            args = {a.keyword.value if a.keyword else i: a for i, a in enumerate(site.original.args)}
            norm = args.get(2) or args.get("norm_type")
            if site.api.endswith("norm_") and norm is not None and _literal(norm.value) not in (2, 2.0):
                p.problem = (site.original, "only the 2-norm is ported", "norm_type not ported")
            elif not (args.get(1) or args.get("max_norm") or args.get("clip_value")):
                p.problem = (site.original, "clip limit not found", "clip not ported")
            else:
                return site.updated
    site.finding("TRN002", f"{site.api} outside a recognised training step (or its result is used): clip the "
                 "gradient tuple from value_and_grad with ops.clip_by_global_norm / ops.clip_by_value",
                 comment=f"{site.api.rsplit('.', 1)[1]} not ported; clip the grads tuple instead")
    return None


for _qual in CLIPS:
    api(_qual, rule="TRN002", handler=_clip_call)


# ----------------------------------------------------------------------------- stray steps


@statement_hook("TRN004", cst.SimpleStatementLine)
def _stray(ctx, original, updated):
    """``optimizer.step()`` / ``zero_grad()`` / ``backward()`` in a block that is no
    training step the loop hook rewrites (top level of a cell, inside an ``if``)."""
    c = _call_of(original)
    name = _method_name(c)
    if name not in ("step", "zero_grad") or not ctx.torch_in_scope:
        return updated
    p = _analyse(ctx, ctx.blocks[-1][0])  # the block holding this statement
    if name == "step" and not _is_optimizer(ctx, c.func.value, set()) and not p.backs:
        return updated
    owner = ctx.enclosing_statements[-2] if len(ctx.enclosing_statements) > 1 else None
    if name != "step" or isinstance(owner, _LOOPS) or (isinstance(owner, cst.FunctionDef) and not ctx.classes):
        return updated  # the loop / function hook rewrites the step or reports its problem
    reason = p.problem[1] if p.problem else "the training step is not the body of a loop or function"
    ctx.finding("TRN004", f"{reason}; move the step into a loop or function body, or port it by "
              "hand with value_and_grad and optimizer(grads)",
              node=c, api=".step()", comment="training step not rewritten; see rule TRN004")
    return updated

