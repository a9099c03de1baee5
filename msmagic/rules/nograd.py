"""Gradient-mode switches: ``torch.no_grad()``, ``torch.enable_grad()``,
``torch.inference_mode()`` and ``torch.set_grad_enabled(...)`` have nothing to switch in
MindSpore, whose forward passes record no graph; they are unwrapped or removed.

The call handlers log the edit (and flag uses they cannot see through); the statement
hooks do the structural part: a ``with`` block's body moves into the parent block, a
decorator or a statement call disappears."""

from __future__ import annotations

import libcst as cst

from msmagic.engine.spec import statement_hook, api
from msmagic.rules._util import unwrap_with
from msmagic.rules.registry import register

GROUP = "Autograd and training"
SEED = "seeds/002 Automatic Differentiation"
#: the module-path spellings of the same switches (``torch.autograd.grad_mode`` defines them)
GRAD_MODE_ALIASES = {
    f"torch.autograd{sub}.{name}": f"torch.{name}"
    for sub in ("", ".grad_mode") for name in ("no_grad", "enable_grad", "set_grad_enabled", "inference_mode")
}
GRAD_MODES = ("torch.no_grad", "torch.enable_grad", "torch.inference_mode", "torch.set_grad_enabled",
              *GRAD_MODE_ALIASES)


def canonical_grad_mode(qual):
    """``torch.autograd.grad_mode.set_grad_enabled`` -> ``torch.set_grad_enabled``."""
    return GRAD_MODE_ALIASES.get(qual, qual)

register(
    "NGR001",
    "with torch.no_grad() and the other grad-mode switches are unwrapped",
    group=GROUP,
    why="""
        PyTorch records every operation on tensors that require gradients while the forward
        pass runs, so evaluation code switches recording off with ``torch.no_grad()`` (or
        ``inference_mode``/``set_grad_enabled(False)``) to save memory and keep results
        detached. MindSpore records nothing during an ordinary call: gradients exist only
        where a function is differentiated explicitly with ``mindspore.grad`` or
        ``value_and_grad``. The context manager therefore has no counterpart and its body
        runs unchanged, so the port removes the ``with`` line and moves the body into the
        enclosing block. ``torch.enable_grad()`` and ``set_grad_enabled(True)`` are
        unwrapped for the same reason. Other context managers in the same ``with`` stay.
    """,
    seed=SEED + " (forward functions record no graph)",
    reference="r2.4.10/api_mapping/pytorch_api_mapping.md (torch.no_grad)",
    example="""
        import torch
        import torch.nn as nn

        model = nn.Linear(4, 3)
        x = torch.ones(5, 4)
        with torch.no_grad():
            logits = model(x)
            pred = logits.argmax(1)
    """,
)

register(
    "NGR002",
    "@torch.no_grad() decorators are removed",
    group=GROUP,
    why="""
        Decorating an evaluation or prediction function with ``@torch.no_grad()`` (or
        ``@torch.inference_mode()``) stops PyTorch from recording the autograd graph while the
        function runs. MindSpore functions never record a graph unless they are wrapped by
        ``mindspore.grad``/``value_and_grad``, so the decorator has nothing to do and is
        removed; the function body is ported as usual. A function that is itself meant to be
        differentiated later needs no decorator in either framework. The bare form
        ``@torch.no_grad`` is removed the same way.
    """,
    seed=SEED + " (forward functions record no graph)",
    reference="r2.4.10/api_mapping/pytorch_api_mapping.md (torch.no_grad)",
    example="""
        import torch
        import torch.nn as nn

        model = nn.Linear(4, 3)

        @torch.no_grad()
        def predict(x):
            return model(x).argmax(1)

        pred = predict(torch.ones(5, 4))
    """,
)

register(
    "NGR003",
    "torch.set_grad_enabled(...) as a statement is removed",
    group=GROUP,
    why="""
        ``torch.set_grad_enabled(False)`` called on its own switches autograd recording off
        for the rest of the thread, typically before an evaluation section. MindSpore has no
        global recording switch because nothing is recorded outside a function given to
        ``mindspore.grad``/``value_and_grad``, so the statement is removed (an empty block
        keeps a ``pass``). The computation that follows is unchanged; if the PyTorch code
        later relies on gradients being switched back on, the training step is ported by the
        training rules (TRN*) and needs no switch either.
    """,
    seed=SEED + " (forward functions record no graph)",
    reference="r2.4.10/api_mapping/pytorch_api_mapping.md (torch.set_grad_enabled)",
    example="""
        import torch
        import torch.nn as nn

        model = nn.Linear(4, 3)
        torch.set_grad_enabled(False)
        y = model(torch.ones(2, 4))
        torch.set_grad_enabled(True)
    """,
)


# ----------------------------------------------------------------------------- calls


def _grad_mode(site):
    holder = site.statement
    call = site.original
    if not isinstance(call, cst.Call):  # a bare reference: only the decorator form ports
        if isinstance(holder, cst.FunctionDef) and any(d.decorator is call for d in holder.decorators) \
                and canonical_grad_mode(site.api) != "torch.set_grad_enabled":
            site.edit("NGR002", None, detail=f"@{site.api} removed")
            return site.updated
        site.finding("NGR001", f"{site.api} is used as a value here; MindSpore has no gradient-recording "
                     "mode to switch, so remove it where it is used",
                     comment=f"{site.api} has no MindSpore counterpart; remove it")
        return site.torch_ref(site.api)
    if isinstance(holder, cst.With) and any(item.item is call for item in holder.items):
        site.edit("NGR001", None, detail=f"with {site.api}(...): unwrapped")
        return site.updated
    if isinstance(holder, cst.FunctionDef) and any(d.decorator is call for d in holder.decorators):
        site.edit("NGR002", None, detail=f"@{site.api}(...) removed")
        return site.updated
    if canonical_grad_mode(site.api) == "torch.set_grad_enabled" and site.is_statement:
        site.edit("NGR003", None, detail="torch.set_grad_enabled(...) removed")
        return site.updated
    site.finding(
        "NGR001",
        f"{site.api}() is used as a value here; MindSpore has no gradient-recording mode to "
        "switch, so remove it (or use contextlib.nullcontext()) where it is entered",
        comment=f"{site.api}() has no MindSpore counterpart; remove it",
    )
    return None


for _qual in GRAD_MODES:
    # attr=True: the handler also sees the bare reference (``@torch.no_grad``)
    api(_qual, rule="NGR001", handler=_grad_mode, attr=True)


# ----------------------------------------------------------------------------- statements


def _is_grad_mode(ctx, node) -> bool:
    if isinstance(node, (cst.Name, cst.Attribute)):  # bare decorator: @torch.no_grad
        return ctx.resolve(node) in GRAD_MODES and canonical_grad_mode(ctx.resolve(node)) != "torch.set_grad_enabled"
    return isinstance(node, cst.Call) and ctx.resolve(node.func) in GRAD_MODES


@statement_hook("NGR001", cst.With)
def _unwrap_with(ctx, original: cst.With, updated):
    return unwrap_with(ctx, original, updated, _is_grad_mode)


@statement_hook("NGR002", cst.FunctionDef)
def _drop_decorators(ctx, original: cst.FunctionDef, updated):
    if not isinstance(updated, cst.FunctionDef):
        return updated
    drop = [_is_grad_mode(ctx, o.decorator) for o in original.decorators]
    if not any(drop):
        return updated
    # the lines above a removed decorator and its comment go above what follows it
    keep, pending = [], []
    for gone, d in zip(drop, updated.decorators):
        if gone:
            pending += d.leading_lines
            if d.trailing_whitespace.comment is not None:
                pending.append(cst.EmptyLine(comment=d.trailing_whitespace.comment))
        else:
            keep.append(d.with_changes(leading_lines=[*pending, *d.leading_lines]) if pending else d)
            pending = []
    return updated.with_changes(decorators=keep,
                                lines_after_decorators=[*pending, *updated.lines_after_decorators])


@statement_hook("NGR003", cst.SimpleStatementLine)
def _drop_switch(ctx, original: cst.SimpleStatementLine, updated):
    if not (
        len(original.body) == 1
        and isinstance(original.body[0], cst.Expr)
        and _is_grad_mode(ctx, original.body[0].value)
        and canonical_grad_mode(ctx.resolve(original.body[0].value.func)) == "torch.set_grad_enabled"
    ):
        return updated
    before, after = ctx.siblings()
    if before or after:
        if ctx.depth == 0:  # blank lines and comments above it stay
            ctx.carry_lines(updated.leading_lines)
        return cst.RemovalSentinel.REMOVE
    return updated.with_changes(body=[cst.Pass()])


