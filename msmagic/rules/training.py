"""The training step: ``optimizer.zero_grad()`` / forward / ``loss.backward()`` /
``optimizer.step()`` in a loop (or function) body becomes a forward function, a
``value_and_grad`` over the optimizer's parameters defined once before the loop, and
``loss, grads = grad_fn(...)`` + ``optimizer(grads)`` in the body. A step at the top level
of a cell is rewritten statement by statement; a manual update of a model's parameters
from their ``.grad`` becomes ``ops.assign`` from the gradient tuple; steps in a cell with
no backward are no-ops; tensors given a format spec are formatted through ``.item()``.

The analysis works on the ORIGINAL statements of the block (``_analyse``, cached per
block so line handlers and the loop hook agree); the output is built from the ported
statements, found by the ported forms of their expressions (other rules may split a
statement into several: ``with torch.no_grad():`` is unwrapped into its body). Shapes
that cannot be rewritten faithfully are flagged (TRN004) at the line where the rewrite
fails."""

from __future__ import annotations

import ast
import builtins
import re
import string
import textwrap
from dataclasses import dataclass, field
from typing import Optional

import libcst as cst

from msmagic.engine.build import code as _code
from msmagic.engine.build import parse_expression as build_expression
from msmagic.engine.build import STATEMENT_TYPES, child_nodes, descendants
from msmagic.engine import build as B
from msmagic.engine.context import timing_dropped, timing_marks, without_timing_marks
from msmagic.engine.kinds import TENSOR
from msmagic.engine.names import param_names
from msmagic.engine.spec import api, statement_hook
from msmagic.rules.autograd import (
    earlier_leaves, grads_read_after, leaf_grads_read, leaves_through_calls, list_loop_ported, list_marks, next_seq,
    rederive, seq_of,
    slice_reads,
)
from msmagic.rules.hand_written_layers import (
    delegates_to_parameters, layer_classes, listed_tensors, mixed_lists, trains_parameters,
)
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
        trainable ones. At the top level of a cell, where the code after the step reads a
        parameter's gradient
        (``print(linear.weight.grad)``), it reads ``grad_of[linear.weight]`` from
        ``grad_of = dict(zip(optimizer.parameters, grads))``: a Parameter hashes by
        identity, so that is the gradient the step computed for it. Teaching notebooks
        split a step over the top level of several cells: ``loss.backward()`` with no step
        in its block becomes ``mindspore.grad`` of a function re-deriving the loss (from
        the statements of this cell and earlier ones that compute it from the model) over
        the model's parameters (the optimizer's, once one is built on them); a
        ``.grad`` read after it reads that gradient, one before any backward reads None,
        ``zero_grad()`` forgets the gradients and a later ``optimizer.step()`` applies
        them (``optimizer(grads)``). The loss is not re-derived (the backward is flagged)
        when the model changed in between (a step, ``eval()``) or its forward pass draws
        random numbers (dropout): the function would compute other values. In a loop or
        function body the forward function starts at the first statement that reads the
        model; the data preparation before it (``if train_on_gpu: x = x.cuda()``) stays in
        the loop and reaches the function as arguments. A forward pass chosen by an
        ``if``/``elif``/``else`` of plain statements (``if args.model == 'Transformer':
        output = model(data) else: output, hidden = model(data, hidden)``) moves into the
        function whole, when every name a branch binds is bound by every branch or read by
        the statement (then it is an argument, returned unchanged where a branch leaves
        it); otherwise the step is flagged. A function that only looks at the
        gradients of one batch (a gradient plot: ``net.zero_grad()``, the forward pass,
        ``loss.backward()``, then ``{n: p.grad for n, p in net.named_parameters()}``, with
        no step) gets the same forward function and ``value_and_grad`` over the model's
        trainable parameters, defined in its body where the forward pass was; the
        ``.grad`` reads look the gradients up in ``grad_of = dict(zip(
        net.trainable_params(), grads))`` as ``grad_of.get(p)``, None for a frozen
        parameter as in PyTorch, and the ``zero_grad()`` calls go. The same holds at the
        top level for a name a loop binds to the parameters. This needs the gradients
        zeroed before the forward pass (else PyTorch adds them to older ones) and no read
        after a later ``zero_grad()`` (PyTorch's ``.grad`` is None then); otherwise the
        backward is flagged (TRN004). A timing magic on a statement that moves into the
        forward function (``%time loss = criterion(out, y)``), or on ``backward()``, times
        the step call instead (``%time (loss, out), grads = grad_fn()``): IPython runs the
        statement of ``%time`` in a copy of a function's variables and that of ``%prun`` in
        the notebook's namespace, so in ``forward_fn`` the names it binds would be lost.
        In a function's step the timing of ``backward()`` is dropped (on the step call it
        would lose the call's names). ``%timeit`` (it binds nothing and runs a statement
        many times), and ``%time``/``%prun`` on the forward pass of a function's step (they
        bind nothing there in PyTorch either), leave the step flagged (TRN004).
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
        The same holds before a manual update (PyTorch's word-language-model example clips
        ``model.parameters()`` and then updates each one with ``p.data.add_(p.grad,
        alpha=-lr)``): the tuple is clipped, then each Parameter is assigned from it; a
        clip of other parameters than the update's is flagged.
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
    "Training steps that cannot be rewritten faithfully are flagged",
    group=GROUP,
    finding_only=True,
    why="""
        The rewrite needs one block holding the whole step: the backward call(s), one
        ``optimizer.step()`` (or several complete steps, TRN007) and a ``zero_grad()``, with
        the loss computed by plain assignments in the same block. The block may be a loop
        body, a function body or the top level of a cell; at the top level ``zero_grad()``
        may be missing when the model and its optimizer are built in the same cell (no
        ``.grad`` can hold anything yet), and a step split over cells is ported statement
        by statement (TRN001). Otherwise (gradients accumulated over several iterations, a
        step inside an ``if``, no ``zero_grad()`` so PyTorch keeps adding to ``.grad``,
        ``backward()`` with no step in a loop, whose gradients PyTorch leaves in ``.grad``
        for the code to read, a step or ``.grad`` read after a training loop, whose last
        gradients only PyTorch keeps) the statements are left as they are and the line
        where the rewrite fails is flagged.
        To port it by hand: move the loss computation into a function, build ``grad_fn =
        mindspore.value_and_grad(fn, None, optimizer.parameters)`` (or
        ``model.trainable_params()``), and for accumulation sum the returned gradient
        tuples (``acc = tuple(a + g for a, g in zip(acc, grads))``) and call
        ``optimizer(acc)`` where PyTorch steps.
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

register(
    "TRN005",
    "Values given a number format (f\"{loss:.4f}\") are formatted as Python numbers",
    group=GROUP,
    why="""
        Training loops print their progress with format specs on tensors:
        ``f"{loss:.5f}"``, ``f"{acc:.2%}"``, ``"{:.4f}".format(loss)`` or
        ``format(n, "d")``. A PyTorch tensor with one element formats its Python number
        (``Tensor.__format__`` calls ``item()``); a MindSpore 2.10 tensor raises
        ``TypeError: unsupported format string passed to Tensor.__format__`` for any
        non-empty spec. A value the port knows to be a tensor is formatted as
        ``loss.item()``, which prints the same text. A value whose kind it cannot tell
        (a list element such as ``test_losses[-1]``, a function's parameter) is converted
        as the spec's presentation type asks: ``float(x)`` for ``e``, ``f``, ``g`` and
        ``%``, ``operator.index(x)`` for ``d``, ``x``, ``o``, ``b`` and ``c``. Python
        formats ints, bools, floats and NumPy numbers through these same conversions, so
        the text is unchanged for them and PyTorch's for a tensor (only a Decimal or
        Fraction would be rounded to a float, a rare value in a notebook). This is done
        in cells that use PyTorch; in a cell that does not (it prints a report's
        numbers) only known tensors are converted. Values known not to be tensors
        (literals, ``len()``, ``x.item()``, sums of those), fields with no spec
        (``{loss}`` prints the tensor in either framework, in its own style), ``!r``/``!s``
        conversions and other spec types (a string's ``>10``) are left alone; a
        self-documenting ``{x=:.3f}`` keeps its ``x=`` text.
    """,
    seed=SEED + " (printing training progress)",
    installed_note="""
        Verified on 2.10: ``f"{ms.Tensor(0.5):.2f}"`` raises TypeError (unsupported format
        string passed to Tensor.__format__); an empty spec works; ``float()`` and
        ``operator.index()`` of 0-d float, int and bool tensors give the Python number
        PyTorch's ``item()`` gives.
    """,
    example="""
        import torch
        import torch.nn as nn

        model = nn.Linear(3, 1)
        x = torch.ones(4, 3)
        loss = model(x).pow(2).mean()
        acc = (model(x) > 0).float().mean()
        line = f"loss {loss:.5f}, accuracy {acc:.2%}"
        other = "loss {:.3f}".format(loss)
    """,
)

register(
    "TRN006",
    "step() and zero_grad() in a cell with no backward() are no-ops, removed",
    group=GROUP,
    why="""
        ``optimizer.step()`` skips every parameter whose ``.grad`` is ``None``, so a cell
        that never calls ``backward()`` (a learning-rate scheduler demo that steps the
        optimizer before ``scheduler.step()`` to avoid PyTorch's warning) changes no
        weight, and ``zero_grad()`` has nothing to clear. MindSpore optimizers have no
        ``step``/``zero_grad`` methods (they are called with a gradient tuple), so these
        statements are removed (an emptied block keeps ``pass``). Where the cell does
        call ``backward()``, steps and ``zero_grad()`` calls that are not part of a
        rewritten training step are flagged instead (TRN004). What the top-level
        statements of earlier cells left in a module's gradients is remembered (this
        rule's hook records it after each statement): a step whose gradients a ported
        ``backward()`` of an earlier cell computed applies them (TRN001), and one after a
        training loop or a backward the port did not rewrite (PyTorch's ``.grad`` then
        holds gradients MindSpore never computed) is flagged.
    """,
    seed=SEED + " › Optimizer Execution and Usage Differences",
    example="""
        import torch
        import torch.nn as nn

        model = nn.Linear(3, 2)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
        lrs = []
        for epoch in range(5):
            optimizer.zero_grad()
            optimizer.step()
            scheduler.step()
            lrs.append(scheduler.get_last_lr()[0])
        weight = model.weight
    """,
)

register(
    "TRN007",
    "Several optimizer steps in one loop body: a forward function for each",
    group=GROUP,
    why="""
        A GAN trains two networks in one loop body: the discriminator's loss, its
        ``backward()`` and ``d_optimizer.step()``, then the generator's loss, its
        ``backward()`` and ``g_optimizer.step()``. In PyTorch each ``backward()`` fills the
        ``.grad`` of every parameter the loss depends on (the generator's too, for the
        discriminator's loss on fake images), and ``zero_grad()`` before each backward keeps
        one step's gradients out of the other. MindSpore differentiates a function with
        respect to named parameters, so each step becomes its own forward function (the
        statements since the previous step that its loss depends on) and its own
        ``value_and_grad`` over that optimizer's parameters: the discriminator's gradients
        are taken only for the discriminator, as ``d_optimizer.step()`` only applied those.
        Each step must be complete on its own (zero_grad, forward, backward, step);
        otherwise the block is flagged (TRN004). A helper such as ``reset_grad()`` whose
        body only calls ``zero_grad()`` counts as a zero_grad where it is called, and its
        body becomes ``pass``: MindSpore's gradients are fresh values, there is nothing to
        clear. Two models trained side by side in the other common shape (both
        optimizers' ``zero_grad()``, then both ``backward()`` calls, then both ``step()``
        calls) become one forward function returning the sum of the losses and one
        ``value_and_grad`` over all the optimizers' parameters; each optimizer is given its
        share of the gradients (``grads[:len(opt_a.parameters)]``). That is what PyTorch
        computed: each ``backward()`` added its loss's gradients, so every parameter held
        the gradient of the sum.
    """,
    seed=SEED + " › Optimizer Execution and Usage Differences",
    example="""
        import torch
        import torch.nn as nn

        torch.manual_seed(0)
        D = nn.Sequential(nn.Linear(4, 8), nn.LeakyReLU(0.2), nn.Linear(8, 1), nn.Sigmoid())
        G = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 4), nn.Tanh())
        criterion = nn.BCELoss()
        d_optimizer = torch.optim.Adam(D.parameters(), lr=0.01)
        g_optimizer = torch.optim.Adam(G.parameters(), lr=0.01)
        data = torch.linspace(-1, 1, 24).reshape(6, 4)
        noise = torch.linspace(-1, 1, 12).reshape(6, 2)
        real_labels = torch.ones(6, 1)
        fake_labels = torch.zeros(6, 1)

        def reset_grad():
            d_optimizer.zero_grad()
            g_optimizer.zero_grad()

        for step in range(3):
            outputs = D(data)
            d_loss_real = criterion(outputs, real_labels)
            fake_images = G(noise)
            d_loss_fake = criterion(D(fake_images), fake_labels)
            d_loss = d_loss_real + d_loss_fake
            reset_grad()
            d_loss.backward()
            d_optimizer.step()

            fake_images = G(noise)
            g_loss = criterion(D(fake_images), real_labels)
            reset_grad()
            g_loss.backward()
            g_optimizer.step()
    """,
)


register(
    "TRN008",
    "A layer the forward pass may skip is still stepped by a stateful optimizer",
    group=GROUP,
    finding_only=True,
    why="""
        A forward pass that calls a layer a random or data-dependent number of times
        (``for _ in range(random.randint(0, 3)): h = self.middle(h)``, a layer under an
        ``if``) leaves that layer's parameters without a gradient in the iterations that
        skip it. PyTorch's ``zero_grad()`` sets gradients to None and its optimizers skip a
        parameter whose gradient is None: it does not move, and its momentum or Adam
        moments stay as they were. MindSpore's ``value_and_grad`` returns a gradient of
        zeros for it, and an optimizer with state (SGD with momentum or weight decay, Adam,
        AdamW, RMSprop, Adagrad...) still moves it by its momentum, moments or decay, so the
        trained weights drift apart from PyTorch's. Nothing in the gradients tells a
        skipped layer from a zero gradient, so the step is ported and flagged at
        ``optimizer.step()``; plain SGD (no momentum, no weight decay) is not affected, as a
        zero gradient moves nothing.
    """,
    seed=SEED + " › Optimizer Execution and Usage Differences",
    example="""
        import torch

        class Net(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.first = torch.nn.Linear(4, 8)
                self.middle = torch.nn.Linear(8, 8)
                self.last = torch.nn.Linear(8, 1)

            def forward(self, x, depth):
                h = self.first(x).relu()
                for _ in range(depth):
                    h = self.middle(h).relu()
                return self.last(h)

        torch.manual_seed(0)
        model = Net()
        x = torch.randn(16, 4)
        y = torch.randn(16, 1)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
        for step in range(4):
            loss = ((model(x, step % 2) - y) ** 2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    """,
)


# ----------------------------------------------------------------------------- analysis

_STEP_COMMENT = "training step not rewritten; see rule TRN004"
_NO_STEP = ("{loss}.backward() with no optimizer.step() in the same block: PyTorch leaves the gradients in "
            "each parameter's .grad (for a later step, an accumulation, a manual update or a read), and "
            "MindSpore has no .grad. Compute them as values with grad_fn = mindspore.value_and_grad(fn, "
            "None, model.trainable_params()), fn returning {loss}; sum the returned grads tuples to "
            "accumulate and call optimizer(grads) where PyTorch steps")
_MANUAL = ("; where the code reads p.grad use the matching gradient (for p, g in "
           "zip(model.trainable_params(), grads)), and update a Parameter with ops.assign(p, p - lr * g): "
           "p -= ... makes a new tensor and leaves the Parameter unchanged")
_NO_STEP_COMMENT = "backward() not ported: no optimizer.step() in this block; use mindspore.value_and_grad"
_TIMEIT = ("%timeit on `{stmt}` in the training step: timeit runs a statement many times in a namespace "
           "of its own (it binds nothing, and a timed backward() adds up its gradients), which the "
           "rewrite into a forward function cannot keep; time the step with %time, or port it by hand")
_TIMED_IN_FUNCTION = (
    "%{magic} on `{stmt}` in a function: IPython runs it in {where}, so {what}, in PyTorch too; the "
    "timing cannot move onto the step call (the names that call binds would be lost the same way); "
    "time the call of the function, or port the step by hand")
_TIMEIT_COMMENT = "%timeit in the training step; step not rewritten (rule TRN004)"


_CONSTANTS = frozenset({"True", "False", "None"})
_STORE_FIELDS = {
    cst.Assign: (("targets", True), ("value", False)),
    cst.AssignTarget: (("target", True),),
    cst.AugAssign: (("target", True), ("value", False)),
    cst.AnnAssign: (("target", True), ("annotation", False), ("value", False)),
    cst.For: (("target", True), ("iter", False), ("body", False), ("orelse", False)),
    cst.CompFor: (("target", True), ("iter", False), ("ifs", False), ("inner_for_in", False)),
    cst.NamedExpr: (("target", True), ("value", False)),
    cst.AsName: (("name", True),),
}


def _fast_names(stmt) -> tuple[set, set]:
    """(names bound, names read) by a statement, as ``_names`` finds them with ``ast``
    (parameters count as bound; imported, def and class names do not) but read off the
    tree directly."""
    bound, read = set(), set()
    stack = [(stmt, False)]
    while stack:
        node, store = stack.pop()
        t = type(node)
        if t is cst.Name:
            if node.value not in _CONSTANTS:
                (bound if store else read).add(node.value)
        elif t is cst.Attribute:
            stack.append((node.value, False))
        elif t is cst.Subscript:
            stack.append((node.value, False))
            stack.extend((e, False) for e in node.slice)
        elif t is cst.Param:
            bound.add(node.name.value)
            stack.extend((x, False) for x in (node.annotation, node.default) if x is not None)
        elif t in (cst.Arg, cst.Import, cst.ImportFrom, cst.Global, cst.Nonlocal):
            if t is cst.Arg:
                stack.append((node.value, False))
        elif t in (cst.FunctionDef, cst.ClassDef, cst.ExceptHandler):
            stack.extend((c, False) for c in child_nodes(node) if c is not node.name)
        elif t in _STORE_FIELDS:
            for name, is_store in _STORE_FIELDS[t]:
                value = getattr(node, name)
                if value is None or isinstance(value, cst.MaybeSentinel):
                    continue
                items = value if isinstance(value, (tuple, list)) else (value,)
                stack.extend((v, is_store) for v in items if isinstance(v, cst.CSTNode))
        elif t in (cst.Tuple, cst.List, cst.Element, cst.StarredElement, cst.StarredDictElement):
            stack.extend((c, store) for c in child_nodes(node))
        else:
            stack.extend((c, False) for c in child_nodes(node))
    return bound, read


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


def _zeroed_by_helper(ctx, call) -> Optional[list]:
    """For ``reset_grad()``, a call of a function of this cell or an earlier one whose body
    only calls ``X.zero_grad()``: the receivers it zeroes; None for any other call."""
    if call is None or type(call.func) is not cst.Name or call.args:
        return None
    memo = ctx.scratch("training").setdefault("zero_helpers", {})
    name = call.func.value
    if name not in memo:
        memo[name] = _zero_helper_receivers(ctx.function_definition(name))
    return memo[name]


def _zero_helper_receivers(fdef) -> Optional[list]:
    if fdef is None or fdef.params.params or fdef.params.star_arg not in (None, cst.MaybeSentinel.DEFAULT) \
            or not isinstance(fdef.body, cst.IndentedBlock):
        return None
    receivers = []
    body = fdef.body.body
    for stmt in body[_docstring(body):]:
        c = _call_of(stmt)
        if _method_name(c) != "zero_grad" or any(a.keyword is None or a.keyword.value != "set_to_none"
                                                 for a in c.args):
            return None
        receivers.append(_code(c.func.value).strip())
    return receivers or None


def _role_name(ctx, call) -> Optional[str]:
    """The method name of a step's call; ``zero_grad`` for a call of a zeroing helper."""
    name = _method_name(call)
    if name is None and _zeroed_by_helper(ctx, call) is not None:
        return "zero_grad"
    return name


def _callee(call) -> str:
    """``optimizer`` for ``optimizer.step()``; ``reset_grad`` for ``reset_grad()``."""
    return _code(call.func.value if isinstance(call.func, cst.Attribute) else call.func).strip()


def _names(node, ctx) -> list[str]:
    """Names read (ast.Load) or bound (ast.Store) in a statement, in order."""
    tree = ast.parse(textwrap.dedent(_code(node)).strip() + "\n")
    out = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ctx):
            out.append(n.id)
        elif ctx is ast.Store and isinstance(n, ast.arg):
            out.append(n.arg)
    return list(dict.fromkeys(out))


def _reads_in_order(stmt) -> list[str]:
    """The names a statement reads, in order; in a branch of a plain ``if``
    (:func:`_is_plain_if`) only those it reads before binding them there."""
    if isinstance(stmt, cst.If):
        out = _names(stmt.test, ast.Load)
        for body in _branches(stmt):
            bound: set = set()
            for s in body or ():
                out += [n for n in _reads_in_order(s) if n not in bound]
                bound |= set(_names(s, ast.Store))
        return out
    tree = ast.parse(_code(stmt).strip() + "\n")
    return [n.id for n in sorted((n for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)),
                                 key=lambda n: (n.lineno, n.col_offset))]


def _has_call(node) -> bool:
    return any(isinstance(n, ast.Call) for n in ast.walk(ast.parse(_code(node).strip())))


@dataclass
class _Plan:
    problem: Optional[tuple] = None  # (original node, reason, comment)
    zero: list = field(default_factory=list)
    backs: list = field(default_factory=list)  # original backward Calls
    step: Optional[cst.Call] = None
    clips: list = field(default_factory=list)  # (statement index, Call)
    forward: list = field(default_factory=list)  # statement indices
    index: dict = field(default_factory=dict)  # statement index -> role
    #: the step can be rewritten (by the loop/function hook, or line by line at the top level)
    rewrite: bool = False
    #: the backward(s) differentiate requires_grad tensors: the autograd rules port them
    grd: bool = False
    #: steps / zero_grad in a cell without any backward(): PyTorch no-ops
    noop: bool = False
    #: the block is the cell's top level
    top: bool = False
    #: top level: statements between the forward pass and the backward, moved after it
    between: list = field(default_factory=list)
    calls: dict = field(default_factory=dict)  # statement index -> its call, for the roles
    #: a manual update of the parameters from their .grad instead of optimizer.step()
    manual: Optional["_Manual"] = None
    #: several optimizers stepping in one block (a GAN): the plan of each step, with the
    #: statement indices of the block
    segments: list = field(default_factory=list)
    #: statements after the backward that read a parameter's ``.grad``
    grad_reads: list = field(default_factory=list)
    #: no step: the gradients of a function's own body are computed to be read
    inspect: Optional["_Inspect"] = None
    #: several optimizers zeroed, then every backward, then each optimizer's step (two
    #: models trained side by side): the statement indices of the steps, in order
    joint: list = field(default_factory=list)

    def position(self, call) -> Optional[int]:
        """Index of the statement whose call (with a role) is ``call``."""
        return next((i for i, c in self.calls.items() if c is call), None)


def _is_optimizer(ctx, recv, zero_recvs) -> bool:
    # a copy: the plan may be made before the walk reaches the receiver, and kinds are
    # cached per node
    kind = ctx.kind_of(recv.deep_clone())
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
        top = bool(ctx.blocks) and len(stmts) > 0 and stmts[0] is ctx.blocks[0][0][0]
        cache[key] = _plan(ctx, stmts, top)
    return cache[key]


def _is_backward_call(node) -> bool:
    return type(node) is cst.Call and type(node.func) is cst.Attribute and node.func.attr.value == "backward"


def _cell_has_backward(ctx) -> bool:
    """Does the cell call ``.backward(...)`` (``torch.autograd.backward`` included)?"""
    memo = ctx.scratch("training")
    if "has_backward" not in memo:
        cell = ctx.blocks[0][0] if ctx.blocks else ()
        memo["has_backward"] = any(_is_backward_call(n) for s in cell for n in descendants(s))
    return memo["has_backward"]


def _marks_leaf(node) -> bool:
    """``requires_grad=True`` (argument or attribute assignment) or ``.requires_grad_(``."""
    t = type(node)
    if t is cst.Arg:
        return (node.keyword is not None and node.keyword.value == "requires_grad"
                and type(node.value) is cst.Name and node.value.value == "True")
    if t is cst.Assign:
        return (type(node.value) is cst.Name and node.value.value == "True" and any(
            type(a.target) is cst.Attribute and a.target.attr.value == "requires_grad" for a in node.targets))
    return t is cst.Attribute and node.attr.value == "requires_grad_"


def _leaves(ctx, stmts) -> set:
    """Names bound by statements creating ``requires_grad`` tensors in this block or an
    enclosing one (what the autograd rules differentiate)."""
    memo = ctx.scratch("training").setdefault("leaves", {})
    out = set()
    for block in [stmts, *(b for b, _ in ctx.blocks)]:
        key = id(block[0]) if block else 0
        if key not in memo:
            found = set()
            for s in block:
                if isinstance(s, cst.SimpleStatementLine) and any(_marks_leaf(n) for n in descendants(s)):
                    found |= _bound_read(ctx, s)[0]
                    for small in s.body:  # x.requires_grad_(): x
                        if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
                            func = small.value.func
                            if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name):
                                found.add(func.value.value)
                elif isinstance(s, cst.For):  # for p in params: p.requires_grad = True
                    found.update(list_marks(ctx, s))
            memo[key] = found
        out |= memo[key]
    return out | set(earlier_leaves(ctx))  # made to require grad in an earlier cell


def _slice(ctx, stmts, p, last_back) -> list:
    """Indices of the statements the losses depend on, before the last backward."""
    needed = set()
    for c in p.backs:
        needed |= set(_names(c.func.value, ast.Load))
    found = []
    for i in range(last_back - 1, -1, -1):
        if i in p.index:
            continue
        bound, read = _bound_read(ctx, stmts[i])
        if not bound & needed:
            continue
        found.append(i)
        needed |= read
    return sorted(found)


def _bound_read(ctx, stmt) -> tuple[set, set]:
    memo = ctx.scratch("training").setdefault("names", {})
    hit = memo.get(id(stmt))
    if hit is None:
        hit = memo[id(stmt)] = _fast_names(stmt)
    return hit


def _leave_leaf_backwards(ctx, stmts, p) -> None:
    """A block with backward() calls of both kinds (``y.backward()`` of requires_grad
    tensors, which the autograd rules port, and a model's ``loss.backward()``, a
    notebook's autograd demo followed by a training step): the first kind is no part of
    the training step."""
    if len(p.backs) < 2 or not _leaves(ctx, stmts):
        return
    leafy = [i for i, r in p.index.items() if r == "backward" and _reaches_leaf(ctx, stmts, p, i)]
    if not leafy or len(leafy) == len(p.backs):
        return
    gone = [p.calls[i] for i in leafy]
    p.backs = [b for b in p.backs if not any(b is g for g in gone)]
    for i in leafy:
        del p.index[i], p.calls[i]


def _reads_grad(stmt) -> bool:
    return any(type(n) is cst.Attribute and n.attr.value == "grad" and type(n.value) is cst.Attribute
               for n in descendants(stmt))


class _GradReads(cst.CSTTransformer):
    """``model.fc.weight.grad`` -> ``grad_of[model.fc.weight]``; with ``names``, the
    ``.grad`` of a name too (``p`` of ``for name, p in model.named_parameters()``), read
    as ``grad_of.get(p)``: None for a parameter with no gradient, as in PyTorch."""

    def __init__(self, table: str, names: bool = False):
        super().__init__()
        self.table, self.names = table, names

    def leave_Attribute(self, original_node, updated_node):
        if updated_node.attr.value != "grad":
            return updated_node
        if self.names and isinstance(updated_node.value, (cst.Name, cst.Attribute)):
            return build_expression(f"{self.table}.get({_code(updated_node.value).strip()})")
        if isinstance(updated_node.value, cst.Attribute):
            return cst.Subscript(value=cst.Name(self.table),
                                 slice=[cst.SubscriptElement(cst.Index(updated_node.value))])
        return updated_node


def _grad_lookup(ctx, p, stmts, opt: str, grads: str) -> list:
    """``grad_of = dict(zip(optimizer.parameters, grads))`` after the step's call when
    later statements read a parameter's ``.grad`` (a Parameter hashes by identity)."""
    state = ctx.scratch("training").setdefault("top_step", {})
    if not p.grad_reads:
        return []
    name = ctx.fresh_name("grad_of")
    state["grad_of"] = name
    return [_stmt(f"{name} = dict(zip({opt}.parameters, {grads}))\n")]


def _read_grads(ctx, original, updated, table: str):
    new = updated.visit(_GradReads(table))
    ctx.edit("TRN001", new, api="Tensor.grad",
             detail=f"param.grad -> {table}[param]: the gradient the step computed for that parameter")
    return new


def _reaches_leaf(ctx, stmts, p, i: int) -> bool:
    """Does the backward of statement ``i`` differentiate a ``requires_grad`` tensor? Its
    values are followed back through the block (a plain assignment ends a name's trail)
    to a statement creating one, or to a name an enclosing block creates as one."""
    needed = set(_names(p.calls[i].func.value, ast.Load))
    for k in range(i - 1, -1, -1):
        if k in p.index:
            continue
        bound, read = _bound_read(ctx, stmts[k])
        hit = bound & needed
        if not hit:
            continue
        if any(_marks_leaf(n) for n in descendants(stmts[k])):
            return True
        if isinstance(stmts[k], cst.SimpleStatementLine) and all(
                isinstance(small, cst.Assign) for small in stmts[k].body):
            needed -= hit
        needed |= read
    outer = ctx.blocks[:-1] if ctx.blocks and ctx.blocks[-1][0] is stmts else ctx.blocks
    needed |= leaves_through_calls(ctx, needed)  # def model(xb): return xb @ weights + bias
    return bool(needed & set().union(set(), *(_leaves(ctx, b) for b, _ in outer)))


def _fresh_parameters(ctx, stmts, step_call, first_back: int) -> bool:
    """A step at the top level of a cell with no zero_grad(): nothing can accumulate when
    the optimizer was built in this cell on ``model.parameters()`` of a model also built
    here, and no backward() ran in between (their ``.grad`` are still None)."""
    opt = step_call.func.value if step_call is not None else None
    if not isinstance(opt, cst.Name):
        return False
    classes = {s.name.value for s in stmts if isinstance(s, cst.ClassDef)}
    made, opt_at, model = {}, None, None
    for i, s in enumerate(stmts[:first_back]):
        if any(_is_backward_call(n) for n in descendants(s)):
            made.clear()  # what was built before has gradients now
            opt_at = None
            continue
        if not isinstance(s, cst.SimpleStatementLine):
            continue
        for small in s.body:
            if not (isinstance(small, cst.Assign) and len(small.targets) == 1
                    and isinstance(small.targets[0].target, cst.Name) and isinstance(small.value, cst.Call)):
                continue
            name, call = small.targets[0].target.value, small.value
            qual = ctx.resolve(call.func) or ""
            if (qual.startswith("torch.nn.") and qual.rsplit(".", 1)[-1][:1].isupper()) or (
                    isinstance(call.func, cst.Name) and call.func.value in classes):
                made[name] = i
            elif name == opt.value and qual.startswith("torch.optim.") and call.args:
                first = call.args[0].value
                if (isinstance(first, cst.Call) and not first.args and isinstance(first.func, cst.Attribute)
                        and first.func.attr.value == "parameters" and isinstance(first.func.value, cst.Name)):
                    opt_at, model = i, first.func.value.value
                else:
                    opt_at = None
    return opt_at is not None and model in made and made[model] < opt_at


def _interleaved(ctx, stmts, p, forward: list, last_back: int) -> list:
    """The forward statements, with the statements among them that read a value a later
    forward statement rebinds (``real_score = outputs`` before ``outputs = D(fake)``):
    left in the loop they would run after the forward function and see the last value."""
    if not forward:
        return forward
    fwd = set(forward)
    changed = True
    while changed:
        changed = False
        for i in range(min(fwd) + 1, last_back):
            if i in fwd or i in p.index:
                continue
            read = _bound_read(ctx, stmts[i])[1]
            if any(read & _bound_read(ctx, stmts[j])[0] for j in fwd if j > i):
                fwd.add(i)
                changed = True
    return sorted(fwd)


def _is_plain(stmt) -> bool:
    return isinstance(stmt, cst.SimpleStatementLine) and all(
        isinstance(b, (cst.Assign, cst.AugAssign, cst.AnnAssign)) for b in stmt.body)


def _is_plain_loop(stmt) -> bool:
    """``for layer in layers: x = layer(x)``: a loop of plain assignments (makemore's
    forward pass over a list of layers), which moves into the forward function whole."""
    return (isinstance(stmt, cst.For) and stmt.asynchronous is None and not stmt.orelse
            and isinstance(stmt.body, cst.IndentedBlock) and all(_is_plain(s) for s in stmt.body.body))


def _branches(stmt: cst.If) -> list:
    """The statements of each branch of an ``if``/``elif``/``else`` chain (None for a
    missing ``else``)."""
    out: list = []
    node = stmt
    while isinstance(node, cst.If):
        out.append(node.body.body if isinstance(node.body, cst.IndentedBlock) else None)
        node = node.orelse
        if isinstance(node, cst.Else):
            out.append(node.body.body if isinstance(node.body, cst.IndentedBlock) else None)
            break
        if node is None:
            out.append(None)
    return out


def _is_plain_if(stmt) -> bool:
    """``if args.model == 'Transformer': output = model(data) else: hidden = ...; output,
    hidden = model(data, hidden)``: branches of plain assignments (PyTorch's word-language-
    model example picks its forward pass by the model's kind), which move into the forward
    function whole. Only when every name a branch binds is bound by every branch or read
    by the statement: the forward function then takes it as an argument and returns it
    unchanged where a branch leaves it alone (never unbound)."""
    if not isinstance(stmt, cst.If):
        return False
    branches = _branches(stmt)
    binds = []
    for body in branches:
        if body is None:
            binds.append(set())
            continue
        if not all(_is_plain(s) for s in body):
            return False
        binds.append({n for s in body for n in _names(s, ast.Store)})
    every, some = set.intersection(*binds), set.union(*binds)
    reads = set(_reads_in_order(stmt))
    return all(n in every or n in reads for n in some)


def _loop_targets(stmt) -> set:
    """The names a plain loop of the forward pass binds in its header (``layer``): neither
    arguments nor outputs of the forward function."""
    if not isinstance(stmt, cst.For):
        return set()
    return {n.value for n in (stmt.target, *descendants(stmt.target)) if type(n) is cst.Name}


def _top_forward(ctx, stmts, found) -> list:
    """At the top level of a cell the slice reaches back to the data and the model; the
    forward pass starts at the first statement that reads a module (its parameters) or a
    value computed from one. Statements (re)binding a module stay where they are."""
    classes = {s.name.value for s in stmts if isinstance(s, cst.ClassDef)}
    modules = set()
    for s in stmts:
        if not isinstance(s, cst.SimpleStatementLine):
            continue
        for small in s.body:
            if not (isinstance(small, cst.Assign) and isinstance(small.value, cst.Call)):
                continue
            func = small.value.func
            qual = ctx.resolve(func) or ""
            last = qual.rsplit(".", 1)[-1]
            made = (qual.startswith("torch.nn.") and last[:1].isupper()) or (
                isinstance(func, cst.Name) and func.value in classes)
            if made or (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)
                        and func.value.value in modules):  # model = model.to(device)
                modules |= {t.target.value for t in small.targets if isinstance(t.target, cst.Name)}

    def is_module(name):
        if name in modules:
            return True
        kind = ctx.kind_of(cst.Name(name))  # a module of an earlier cell
        return kind is not None and kind.base == "module"

    forward, dependent = [], set()
    for i in found:
        bound, read = _bound_read(ctx, stmts[i])
        if any(is_module(n) for n in bound):
            continue
        if not forward and not (dependent | {n for n in read if is_module(n)}):
            continue
        forward.append(i)
        dependent |= bound
    return forward


def _parameters_of(node) -> Optional[str]:
    """``model.parameters()`` -> "model"."""
    if (isinstance(node, cst.Call) and not node.args and isinstance(node.func, cst.Attribute)
            and node.func.attr.value == "parameters" and isinstance(node.func.value, cst.Name)):
        return node.func.value.value
    return None


def _sources(ctx, p) -> set:
    """Names through which a step's forward pass reaches the parameters it trains: the
    model the optimizer was built on (``optimizer = SGD(model.parameters())``), a module
    whose ``zero_grad()`` the step calls, the module a clip names."""
    out = set()
    for i, role in p.index.items():
        c = p.calls[i]
        recv = c.func.value if isinstance(c.func, cst.Attribute) else None
        if role in ("zero", "step") and isinstance(recv, cst.Name):
            made = ctx.assigned_call(recv.value)
            model = _parameters_of(made.args[0].value) if made is not None and made.args else None
            if model is not None:
                out.add(model)
            elif role == "zero" and recv.value not in {_callee(x) for x in p.calls.values()
                                                       if _method_name(x) == "step"}:
                out.add(recv.value)  # net.zero_grad() with opt.step()
        elif role == "clip" and c.args and (model := _parameters_of(c.args[0].value)) is not None:
            out.add(model)
    return out


def _holds_layers(ctx, kind) -> bool:
    """Is a value of ``kind`` a hand-written layer (HWL001), or a list of them, whose
    Parameters a forward pass reads (``emb = layers[0](Xb)`` belongs to it)?"""
    if kind.base == "list":
        kind = kind.item
        if kind is None:
            return False
    if kind.base != "object":
        return False
    classes = layer_classes(ctx)
    return classes.get(kind.detail) is not None if kind.detail else trains_parameters(ctx)


def _loop_forward(ctx, stmts, p, found: list) -> list:
    """In a loop or function body the slice reaches back to the data preparation
    (``x = one_hot(x)``, ``if train_on_gpu: x = x.cuda()``): the forward pass starts at
    the first statement that reads the model (a name the optimizer, zero_grad() or a clip
    ties to it, or a module), else at the first that calls a name that may be one (no
    function, class or builtin the port knows); what comes before stays in the loop and
    reaches the forward function as arguments."""
    if not found:
        return found
    sources = _sources(ctx, p)
    # a tensor a list of hand-written layers' parameters holds (HWL003: ``emb = C[Xb]``),
    # in this cell or an earlier one
    for s in stmts:
        if type(s) is cst.For and type(s.iter) is cst.Name and (value := ctx.assigned_value(s.iter.value)) is not None:
            sources.update(listed_tensors(ctx, value) or ())
    for names in mixed_lists(ctx).values():
        sources.update(names)
    classes = {s.name.value for s in ctx.blocks[0][0] if isinstance(s, cst.ClassDef)} if ctx.blocks else set()

    def reads_model(stmt) -> bool:
        for n in descendants(stmt):
            if type(n) is cst.Name and (n.value in sources or (
                    (kind := ctx.kind_of(n)) is not None and (kind.base == "module" or _holds_layers(ctx, kind)))):
                return True
            if type(n) is cst.Call and type(n.func) is cst.Name:  # a helper that uses the model
                fdef = ctx.function_definition(n.func.value)
                if fdef is not None and _fast_names(fdef)[1] & sources:
                    return True
        return False

    def calls_unknown(stmt) -> bool:
        for n in descendants(stmt):
            if type(n) is cst.Call and type(n.func) is cst.Name:
                name = n.func.value
                if (name not in _BUILTINS and name not in classes and ctx.resolve(n.func) is None
                        and ctx.function_definition(name) is None):
                    return True
        return False

    for test in (reads_model, calls_unknown):
        start = next((k for k, i in enumerate(found) if test(stmts[i])), None)
        if start is not None:
            return found[start:]
    return found


_BUILTINS = frozenset(dir(builtins))


@dataclass
class _Manual:
    """``with torch.no_grad(): for p in model.parameters(): p -= lr * p.grad`` after the
    backward: the update statement, its loop, the module and the loop variable."""

    index: int  # the statement after the backward (the with or the for)
    loop: cst.For
    module: cst.BaseExpression
    param: str
    zero_calls: list  # model.zero_grad() calls inside the with (dropped with it)
    zeroed: bool  # the update zeroes the gradients (in the loop or the with)
    #: ``for p in <the same parameters>: p.grad = None`` loops before the backward (dropped)
    zero_loops: list = field(default_factory=list)
    #: the weights: "trainable_params" (a Module), "parameters" (a hand-written layer's
    #: method), "list" (the list of a hand-written layer's Parameters itself)
    form: str = "trainable_params"


def _grad_of(node, param) -> bool:
    """``p.grad`` / ``p.grad.data``."""
    text = _code(node).strip()
    return text in (f"{param}.grad", f"{param}.grad.data")


def _update_of(small, param: str) -> Optional[tuple]:
    """("+" or "-", the amount, its ``alpha=`` factor or None) for an in-place update of ``param`` from its gradient:
    ``p -= lr * p.grad``, ``p.data += ...``, ``p.data.add_(-lr * p.grad)``,
    ``p.sub_(p.grad, alpha=lr)``; None for anything else."""
    if isinstance(small, cst.AugAssign) and isinstance(small.operator, (cst.SubtractAssign, cst.AddAssign)) \
            and _code(small.target).strip() in (param, f"{param}.data"):
        return ("-" if isinstance(small.operator, cst.SubtractAssign) else "+"), small.value, None
    if not (isinstance(small, cst.Expr) and isinstance(small.value, cst.Call)):
        return None
    call = small.value
    func = call.func
    if not (isinstance(func, cst.Attribute) and func.attr.value in ("add_", "sub_")
            and _code(func.value).strip() in (param, f"{param}.data")):
        return None
    args = [a for a in call.args if a.keyword is None]
    alpha = [a for a in call.args if a.keyword is not None and a.keyword.value == "alpha"]
    if len(args) != 1 or len(args) + len(alpha) != len(call.args) or args[0].star:
        return None
    return ("-" if func.attr.value == "sub_" else "+"), args[0].value, alpha[0].value if alpha else None


def _hand_written(ctx, node) -> bool:
    """Is ``node`` an instance of a hand-written layer class (HWL001) whose
    ``parameters()`` return Parameters?"""
    kind = ctx.kind_of(node.deep_clone())
    return (kind is not None and kind.base == "object" and layer_classes(ctx).get(kind.detail) is not None
            and trains_parameters(ctx))


def _parameter_list(ctx, name: str, stmts) -> bool:
    """Does ``name`` hold the Parameters of hand-written layers: ``name =
    model.parameters()`` of one, or ``[p for layer in layers for p in
    layer.parameters()]`` while every hand-written layer class of the session returns
    Parameters, or a list a function receives to train a hand-written layer that
    ``stmts`` (the step) call?"""
    value = ctx.assigned_value(name)
    if value is None and name in mixed_lists(ctx) and not ctx.functions:
        return trains_parameters(ctx)  # ``[C] + [p for layer in layers ...]`` of an earlier cell
    if isinstance(value, cst.Call) and not value.args and isinstance(value.func, cst.Attribute) \
            and value.func.attr.value == "parameters" and isinstance(value.func.value, cst.Name):
        return _hand_written(ctx, cst.Name(value.func.value.value))
    if value is not None:
        return trains_parameters(ctx) and (delegates_to_parameters(value) or listed_tensors(ctx, value) is not None)
    kind = ctx.kind_of(cst.Name(name))
    if not (ctx.functions and name in param_names(ctx.functions[-1].params) and kind is not None
            and kind.base == "list" and trains_parameters(ctx)):
        return False
    return any((type(n) is cst.Call and type(n.func) is cst.Name and _hand_written(ctx, n.func))
               or (type(n) is cst.Name and (k := ctx.kind_of(n)) is not None and k.base == "list"
                   and _holds_layers(ctx, k))
               for s in stmts for n in descendants(s))


def _weights(ctx, m) -> str:
    """What value_and_grad differentiates for the manual update ``m``: a Module's
    ``trainable_params()``, a hand-written layer's ``parameters()``, or the list itself."""
    text = _code(ctx.updated_of(m.module)).strip()
    return text if m.form == "list" else f"{text}.{m.form}()"


def _update_loop(ctx, stmt, stmts) -> Optional[tuple]:
    """(module, param, zeroes, form) for ``for p in model.parameters():`` (or ``for p in
    params:`` over the Parameters of hand-written layers, ``module`` then the list) whose
    body only updates ``p`` in place from ``p.grad`` and resets ``p.grad``; None
    otherwise. ``form``: how the weights are named (:func:`_weights`)."""
    it, target = stmt.iter, stmt.target
    if not (isinstance(target, cst.Name) and isinstance(stmt.body, cst.IndentedBlock) and not stmt.orelse):
        return None
    if isinstance(it, cst.Name) and _parameter_list(ctx, it.value, stmts):
        module, form = it, "list"
    elif (isinstance(it, cst.Call) and not it.args and isinstance(it.func, cst.Attribute)
            and it.func.attr.value == "parameters"):
        module = it.func.value
        form = "parameters" if _hand_written(ctx, module) else "trainable_params"
    else:
        return None
    param = target.value
    updates = zeroes = 0
    for line in stmt.body.body:
        if not isinstance(line, cst.SimpleStatementLine):
            return None
        for small in line.body:
            text = _code(small).strip().replace(" ", "")
            update = _update_of(small, param)
            if update is not None:
                rest = re.sub(rf"(?<![\w.]){param}\.grad(\.data)?(?![\w.])", "", _code(update[1]))
                if ".grad" in rest or re.search(rf"(?<![\w.]){param}(?![\w])", rest):
                    return None
                updates += 1
            elif text in _zeroing(param):
                zeroes += 1
            else:
                return None
    return (module, param, zeroes > 0, form) if updates else None


def _zeroing(param: str) -> tuple:
    """The texts (spaces removed) of a statement resetting ``param``'s gradient."""
    return (f"{param}.grad.zero_()", f"{param}.grad.data.zero_()", f"{param}.grad=None")


def _zero_loop(stmt, it_text: str) -> bool:
    """``for p in <it_text>: p.grad = None`` (or ``p.grad.zero_()``), nothing else."""
    if not (isinstance(stmt, cst.For) and isinstance(stmt.target, cst.Name) and not stmt.orelse
            and isinstance(stmt.body, cst.IndentedBlock) and _code(stmt.iter).strip() == it_text):
        return False
    zeroes = _zeroing(stmt.target.value)
    return all(isinstance(line, cst.SimpleStatementLine)
               and all(_code(small).strip().replace(" ", "") in zeroes for small in line.body)
               for line in stmt.body.body)


def _manual(ctx, stmts, p, first_back, last_back) -> Optional[_Manual]:
    found = None
    for i in range(last_back + 1, len(stmts)):
        s = stmts[i]
        if isinstance(s, cst.With):
            if not (all(ctx.resolve(item.item.func) == "torch.no_grad" for item in s.items
                        if isinstance(item.item, cst.Call)) and all(isinstance(item.item, cst.Call) for item in s.items)
                    and isinstance(s.body, cst.IndentedBlock)):
                continue
            loops = [(k, x) for k, x in enumerate(s.body.body) if isinstance(x, cst.For)]
            if len(loops) != 1 or (hit := _update_loop(ctx, loops[0][1], stmts)) is None:
                continue
            zeros = []
            for k, x in enumerate(s.body.body):
                if x is loops[0][1]:
                    continue
                c = _call_of(x)
                if _method_name(c) != "zero_grad" or c.args or k < loops[0][0] \
                        or _code(c.func.value).strip() != _code(hit[0]).strip():
                    return None
                zeros.append(c)
            if found is not None:
                return None
            found = _Manual(i, loops[0][1], hit[0], hit[1], zeros, hit[2] or bool(zeros), form=hit[3])
        elif isinstance(s, cst.For) and (hit := _update_loop(ctx, s, stmts)) is not None:
            if found is not None:
                return None
            found = _Manual(i, s, hit[0], hit[1], [], hit[2], form=hit[3])
        elif ".grad" in _code(s):
            return None
    if found is None:
        return None
    module = _code(found.module).strip()
    it_text = _code(found.loop.iter).strip()
    found.zero_loops = [i for i in range(first_back) if _zero_loop(stmts[i], it_text)]
    found.zeroed = found.zeroed or bool(found.zero_loops)
    for i, r in p.index.items():
        if r == "zero":
            c = p.calls[i]
            if _callee(c) != module or first_back < i < found.index or c.args:
                return None
            found.zeroed = True
        elif r == "clip" and last_back < i < found.index and found.form == "trainable_params" \
                and p.calls[i].args and _code(p.calls[i].args[0].value).strip() == f"{module}.parameters()":
            continue  # the gradients are clipped before the update (word_language_model)
        elif r in ("clip", "step"):
            return None
    return found if found.zeroed else None


@dataclass
class _Inspect:
    """A function's own body that zeroes a model's gradients, runs the forward pass and
    ``loss.backward()``, and reads the parameters' ``.grad`` (to plot or log them), with
    no optimizer step: the zero_grad() receiver and whether it is an optimizer."""

    receiver: cst.BaseExpression
    optimizer: bool


def _grad_receivers_ok(node) -> bool:
    """Is every ``X.grad`` read of the statement on a name or an attribute chain?"""
    return all(isinstance(n.value, (cst.Name, cst.Attribute)) for n in descendants(node)
               if type(n) is cst.Attribute and n.attr.value == "grad")


def _inspect(ctx, stmts, p, first_back: int, last_back: int) -> Optional[_Inspect]:
    """The gradient-reading shape of :class:`_Inspect`, or None. PyTorch's ``.grad`` then
    holds exactly this loss's gradients (they were zeroed before the forward pass), so
    they can be computed as values and read from a table; reads after a later
    ``zero_grad()`` would see None, and are not taken."""
    fn = next((h for h in reversed(ctx.enclosing_statements) if isinstance(h, cst.FunctionDef)
               and isinstance(h.body, cst.IndentedBlock) and h.body.body and h.body.body[0] is stmts[0]), None)
    if fn is None or ctx.classes or p.clips:
        return None
    zeros = sorted(i for i, r in p.index.items() if r == "zero")
    if not zeros or zeros[0] > first_back or any(first_back < i < last_back for i in zeros):
        return None
    recvs = {_code(p.calls[i].func.value).strip() for i in zeros}
    if len(recvs) != 1:
        return None
    recv = p.calls[zeros[0]].func.value
    kind = ctx.kind_of(recv.deep_clone())
    optimizer = kind == "optimizer"
    if not (optimizer or (kind is not None and kind.base == "module")
            or (kind is None and isinstance(recv, cst.Name) and B.binds(fn, recv.value, header_only=True))):
        return None  # not known to be a model (or an optimizer over one)
    later_zero = next((i for i in zeros if i > last_back), len(stmts))
    for i, s in enumerate(stmts):
        if i in p.index or ".grad" not in _code(s) or not _reads_grad_any(s):
            continue
        if not (last_back < i < later_zero) or not _grad_receivers_ok(s):
            return None
    return _Inspect(recv, optimizer)


def _first_small(stmt):
    """The node a statement's findings are logged on: a simple line's first statement."""
    return stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) and stmt.body else stmt


def _reads_grad_any(stmt) -> bool:
    """Does the statement read ``X.grad`` of a name or an attribute chain?"""
    return any(type(n) is cst.Attribute and n.attr.value == "grad" and isinstance(n.value, (cst.Name, cst.Attribute))
               for n in descendants(stmt))


def _plan(ctx, stmts, top: bool = False) -> _Plan:
    p = _Plan(top=top)
    calls = [_call_of(s) for s in stmts]
    zero_recvs = set()
    for c in calls:
        if _method_name(c) == "zero_grad":
            zero_recvs.add(_code(c.func.value).strip())
        else:
            zero_recvs.update(_zeroed_by_helper(ctx, c) or ())
    steps = []
    for i, c in enumerate(calls):
        name = _role_name(ctx, c)
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
        if i in p.index:
            p.calls[i] = c
    _leave_leaf_backwards(ctx, stmts, p)
    if not p.backs:
        if (steps or p.zero) and not _cell_has_backward(ctx) and not any(c.args for _, c in steps):
            p.noop = True
        elif steps:
            p.problem = (steps[0][1], "optimizer.step() without loss.backward() in the same block: the "
                         "gradients come from elsewhere (accumulation or a conditional step)",
                         "step without backward here; port the gradient computation by hand")
        elif p.zero:
            p.problem = (p.zero[0], "zero_grad() outside a training step: the gradients it clears come "
                         "from a backward() that is not rewritten here; MindSpore's grad_fn returns fresh "
                         "gradients, so remove it once that step is ported by hand",
                         "zero_grad() not ported; see rule TRN004")
        return p
    first_back = min(i for i, r in p.index.items() if r == "backward")
    last_back = max(i for i, r in p.index.items() if r == "backward")
    found = _slice(ctx, stmts, p, last_back)
    forward = _interleaved(ctx, stmts, p, _top_forward(ctx, stmts, found) if top else
                           _loop_forward(ctx, stmts, p, found), last_back)
    compound = not all(_is_plain(stmts[i]) or _is_plain_loop(stmts[i]) or _is_plain_if(stmts[i]) for i in forward)
    fbound, fread = set(), set()
    for i in forward:
        bound, read = _bound_read(ctx, stmts[i])
        fbound |= bound
        fread |= read
    leaves = _leaves(ctx, stmts)
    p.grd = bool(leaves) and any(
        _reaches_leaf(ctx, stmts, p, i) for i, r in p.index.items() if r == "backward")
    if p.grd and steps and not leaf_grads_read(ctx, stmts[first_back:], leaves):
        # an optimizer steps, and no later statement reads a leaf's .grad (a GAN's noise
        # made with requires_grad=True): the step needs only the parameters' gradients
        p.grd = False
    if not p.grd and ctx.functions and not steps:  # w.grad read after: w is differentiated (GRD)
        p.grd = bool(set(grads_read_after(ctx, stmts[last_back + 1:])) & (fread | set().union(
            *(_names(c.func.value, ast.Load) for c in p.backs))))
    back = p.backs[0]
    if len(steps) > 1:
        return _several_steps(ctx, stmts, p, [i for i, _ in steps], top)
    if not steps:
        if p.grd:  # the autograd rules port the backward (or flag it)
            return p
        p.manual = None if top else _manual(ctx, stmts, p, first_back, last_back)
        if p.manual is None:
            p.inspect = None if top else _inspect(ctx, stmts, p, first_back, last_back)
        if p.manual is None and p.inspect is None:
            reason = _NO_STEP.format(loss=_code(back.func.value).strip())
            if any(".grad" in _code(s) for s in stmts[last_back + 1:]):
                reason += _MANUAL
            p.problem = (back, reason, _NO_STEP_COMMENT)
            return p
        steps = [(p.manual.index if p.manual is not None else len(stmts), None)]
    step_i, p.step = steps[0]
    if p.manual is not None or p.inspect is not None:
        pass  # its zeroing and placement were checked by _manual / _inspect
    elif p.step.args:
        p.problem = (p.step, "optimizer.step(closure) has no MindSpore counterpart",
                     "step(closure) not ported")
        return p
    elif not p.zero and top and not _fresh_parameters(ctx, stmts, p.step, first_back):
        p.problem = (back, "no zero_grad() before this step and the model is not built in this cell: "
                     "PyTorch adds these gradients to any an earlier backward() left in .grad, "
                     "MindSpore's grad_fn returns fresh ones; call optimizer.zero_grad() first if "
                     "nothing is meant to accumulate",
                     "gradients may accumulate from earlier cells; see rule TRN004")
        return p
    elif not p.zero and not top:
        p.problem = (back, "no zero_grad() in this block: PyTorch lets the gradients accumulate across "
                     "iterations, MindSpore's grad_fn returns fresh ones; add zero_grad() or sum the "
                     "grads tuples by hand",
                     "gradients accumulate across iterations; port by hand (rule TRN004)")
        return p
    zero_i = [i for i, r in p.index.items() if r == "zero"]
    if p.manual is None and p.inspect is None and zero_i and (len(zero_i) > 1 or first_back < zero_i[0] < step_i):
        p.problem = (p.zero[0], "zero_grad() between backward() and step() (or called twice): the "
                     "step does not use the gradients of this block's loss", "zero_grad placement not ported")
        return p
    if any(not (last_back < i < step_i) for i, _ in p.clips):
        p.problem = (p.clips[0][1], "gradient clipping outside backward()..step()", "clip not ported")
        return p
    for _, c in p.clips:
        qual = ctx.resolve(c.func)
        args = {a.keyword.value if a.keyword else i: a for i, a in enumerate(c.args)}
        norm = args.get(2) or args.get("norm_type")
        if qual.endswith("norm_") and norm is not None and _literal(norm.value) not in (2, 2.0):
            p.problem = (c, "only the 2-norm is ported: clip_by_global_norm scales by the 2-norm of all "
                         "gradients", "norm_type not ported")
            return p
        if not (args.get(1) or args.get("max_norm") or args.get("clip_value")) or any(a.star for a in c.args):
            p.problem = (c, "clip limit not found", "clip not ported")
            return p
    if step_i < last_back and p.step is not None:
        p.problem = (p.step, "optimizer.step() before loss.backward() in the same block: the step uses "
                     "the gradients of an earlier backward", _STEP_COMMENT)
        return p
    for c in p.backs:
        for a in c.args:
            kw = a.keyword.value if a.keyword else None
            if kw == "retain_graph":
                continue
            p.problem = (c, f"backward({_code(a).strip()}) has no counterpart in the training-step rewrite",
                         "backward arguments not ported")
            return p
    if compound:
        p.problem = (back, "the loss is computed by a compound statement; only plain assignments "
                     "can be moved into the forward function", "loss computation not ported")
        return p
    for c in p.backs:
        recv = c.func.value
        if not set(_names(recv, ast.Load)) & fbound and not _has_call(recv):
            p.problem = (c, f"{_code(recv).strip()} is not computed in this block (an earlier cell, or "
                         "before the loop): MindSpore differentiates a function, so move the forward pass "
                         "that computes it next to backward()",
                         "loss computed elsewhere; move its computation here (rule TRN004)")
            return p
    p.forward = forward
    for i, _, magics in _timings(ctx, stmts, p):
        if "timeit" in magics:
            p.problem = (back, _TIMEIT.format(stmt=_statement_text(stmts[i])), _TIMEIT_COMMENT)
            return p
        if (p.index.get(i) != "backward" or "prun" in magics) and _in_function(ctx):
            magic = "prun" if "prun" in magics else magics[0]
            p.problem = (back, _TIMED_IN_FUNCTION.format(
                magic=magic, stmt=_statement_text(stmts[i]),
                where="the notebook's namespace" if magic == "prun" else "a copy of the function's variables",
                what="it does not see the function's variables" if magic == "prun" else
                "the names it binds are not the function's"),
                f"%{magic} in the training step of a function; step not rewritten (rule TRN004)")
            return p
    if top and p.grd:
        p.problem = (p.step, "the gradients of this step are taken of requires_grad tensors at the top "
                     "level of the cell; put the step in a loop or function body, or port it by hand "
                     "with value_and_grad and optimizer(grads)", _STEP_COMMENT)
        return p
    if top:
        first_fwd = forward[0] if forward else first_back
        for i in range(first_fwd, last_back):
            if i in p.index or i in forward:
                continue
            s = stmts[i]
            bound, read = _bound_read(ctx, s)
            if (not isinstance(s, cst.SimpleStatementLine) or bound & (fbound | fread)
                    or read & (fread - fbound)):
                text = _code(s).strip().splitlines()[0]
                p.problem = (back, f"`{text}` sits between the forward pass and backward() and changes or "
                             "uses what the forward pass reads; move it after the training step",
                             _STEP_COMMENT)
                return p
            p.between.append(i)
    reads = _reads_grad_any if p.inspect is not None else _reads_grad
    p.grad_reads = [i for i in range(last_back + 1, len(stmts))
                    if i not in p.index and ".grad" in _code(stmts[i]) and reads(stmts[i])]
    p.rewrite = True
    return p


def _timings(ctx, stmts, p) -> list:
    """The statements of a step that carry a timing magic (``%time``, ``%prun``,
    ``%timeit``) and leave their place: those moving into the forward function and the
    backward() calls the step call replaces. (statement index, the mark naming its
    timing, the magics), in order."""
    memo = ctx.scratch("training")
    if "times" not in memo:
        memo["times"] = ctx.times_statements
    if not memo["times"]:
        return []
    backs = [i for i, r in p.index.items() if r == "backward"]
    return [(i, mark, magics) for i in sorted({*p.forward, *backs})
            for mark, magics in timing_marks(_code(stmts[i].with_changes(leading_lines=())))]


def _in_function(ctx) -> bool:
    """Is the statement being ported inside a function (where a line magic does not bind
    the function's names)?"""
    return any(type(h) is cst.FunctionDef for h in ctx.enclosing_statements)


def _statement_text(stmt) -> str:
    """A statement's code as a finding names it: its first line, without its comment."""
    if isinstance(stmt, cst.SimpleStatementLine):
        return "; ".join(_code(small).strip() for small in stmt.body)
    return _code(stmt.with_changes(leading_lines=())).strip().splitlines()[0].split("  #")[0]


class _Untimed(cst.CSTTransformer):
    """The lines of the forward pass without their timing marks; each mark but ``keep``
    (the timing that goes on the step call) is collected as a timing dropped."""

    def __init__(self, keep: str):
        super().__init__()
        self.keep, self.dropped = keep, []

    def leave_TrailingWhitespace(self, original_node, updated_node):
        if updated_node.comment is None:
            return updated_node
        marks = [m for m, _ in timing_marks(updated_node.comment.value)]
        if not marks:
            return updated_node
        self.dropped += [m for m in marks if m != self.keep]
        return _comment_set(updated_node, without_timing_marks(updated_node.comment.value))


def _untimed_line(line, untimed: _Untimed):
    """``line`` with its timing marks off (see :class:`_Untimed`); a simple line keeps
    the nodes of its statements."""
    if isinstance(line, cst.SimpleStatementLine):
        return line.with_changes(trailing_whitespace=untimed.leave_TrailingWhitespace(
            line.trailing_whitespace, line.trailing_whitespace))
    return line.visit(untimed)


def _comment_set(tw, text: str):
    """Trailing whitespace ``tw`` with the comment ``text`` (none when empty)."""
    if not text:
        return tw.with_changes(comment=None, whitespace=cst.SimpleWhitespace(""))
    return tw.with_changes(comment=cst.Comment(text),
                           whitespace=tw.whitespace if tw.comment is not None else cst.SimpleWhitespace("  "))


def _timed_call(call, tw, mark: Optional[str]):
    """The step call ending in ``tw`` (the trailing whitespace of the line it replaces),
    timed by ``mark``: the other timing marks in ``tw`` are dropped."""
    if tw.comment is not None and timing_marks(tw.comment.value):
        text = tw.comment.value
        for other, _ in timing_marks(text):
            if other != mark:
                text = text.replace(other, timing_dropped(other))
        tw = tw.with_changes(comment=cst.Comment(text))
        if mark is None or mark in text:
            return call.with_changes(trailing_whitespace=tw)
    if mark is not None:
        text = f"{tw.comment.value}  # {mark}" if tw.comment is not None else f"# {mark}"
        tw = _comment_set(tw, text)
    return call.with_changes(trailing_whitespace=tw)


def _several_steps(ctx, stmts, p, step_at: list, top: bool) -> _Plan:
    """Several ``optimizer.step()`` calls in one block (a GAN's discriminator and
    generator): each step, with the statements since the previous one, must be a
    training step of its own (zero_grad, forward, backward, step); each becomes its own
    forward function and value_and_grad (TRN007)."""
    if top:
        p.problem = (p.backs[0], "several optimizer.step() calls at the top level of a cell: put the "
                     "steps in a loop or function body", _STEP_COMMENT)
        return p
    joint = _joint(ctx, stmts, p, step_at)
    if joint is not None:
        return joint
    segments, lo = [], 0
    for at in step_at:
        seg = _plan(ctx, stmts[lo:at + 1])
        if seg.problem:
            p.problem = seg.problem
            return p
        if not seg.rewrite or seg.manual is not None or seg.grd:
            p.problem = (p.calls[at], "several optimizer.step() calls in one block, and the statements "
                         "before this one are not a training step of their own (zero_grad, forward, "
                         "backward, step)", _STEP_COMMENT)
            return p
        segments.append(_shifted(seg, lo))
        lo = at + 1
    late = [i for i in p.index if i > step_at[-1]]
    if late:
        p.problem = (p.calls[late[0]], "zero_grad()/backward() after the last optimizer.step() of the block",
                     _STEP_COMMENT)
        return p
    p.segments = segments
    p.forward = sorted(i for seg in segments for i in seg.forward)
    p.clips = [c for seg in segments for c in seg.clips]
    p.step = segments[0].step
    p.rewrite = True
    return p


def _joint(ctx, stmts, p, step_at: list) -> Optional[_Plan]:
    """Two models trained side by side: ``opt_a.zero_grad(); opt_b.zero_grad();
    loss_a.backward(); loss_b.backward(); opt_a.step(); opt_b.step()``. Each optimizer
    then steps on the gradients of the sum of the losses (what the backward calls
    accumulated) with respect to its own parameters: one forward function returning the
    sum, one value_and_grad over all the optimizers' parameters, each step given its
    share. The shape: every zero_grad() before the first backward(), every step() after
    the last, each stepped optimizer zeroed once and no other. None for any other shape."""
    zeros = sorted(i for i, r in p.index.items() if r == "zero")
    backs = sorted(i for i, r in p.index.items() if r == "backward")
    if not zeros or p.clips or not backs or max(zeros) > min(backs) or max(backs) > min(step_at):
        return None
    if any(not isinstance(p.calls[i].func, cst.Attribute) or p.calls[i].args for i in [*zeros, *step_at]):
        return None
    stepped = [_callee(p.calls[i]) for i in step_at]
    zeroed = [_callee(p.calls[i]) for i in zeros]
    if len(set(stepped)) != len(stepped) or sorted(zeroed) != sorted(stepped):
        return None
    if any(i not in p.index for i in range(min(step_at), max(step_at) + 1)):
        return None  # something runs between the steps
    # the block without the other zero_grad()s and steps is a training step of one optimizer
    extra = set(zeros[1:]) | set(step_at[:-1])
    keep = [i for i in range(len(stmts)) if i not in extra]
    one = _plan(ctx, [stmts[i] for i in keep])
    if one.problem or not one.rewrite or one.manual is not None or one.grd or one.segments:
        return None
    one.index = {keep[k]: r for k, r in one.index.items()}
    one.calls = {keep[k]: c for k, c in one.calls.items()}
    one.forward = [keep[k] for k in one.forward]
    one.between = [keep[k] for k in one.between]
    one.grad_reads = [keep[k] for k in one.grad_reads]
    for i in extra:
        one.index[i] = p.index[i]
        one.calls[i] = p.calls[i]
    one.joint = list(step_at)
    one.backs = p.backs
    return one


def _shifted(seg: _Plan, lo: int) -> _Plan:
    """A plan of ``stmts[lo:...]`` with the indices of the whole block."""
    seg.index = {i + lo: r for i, r in seg.index.items()}
    seg.calls = {i + lo: c for i, c in seg.calls.items()}
    seg.forward = [i + lo for i in seg.forward]
    seg.clips = [(i + lo, c) for i, c in seg.clips]
    return seg


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
    return _fast_names(owner)[0]


def _stmt(text: str):
    return cst.parse_statement(text)


@dataclass
class _Step:
    fn: cst.FunctionDef  # def forward_fn(...)
    gfn: cst.SimpleStatementLine  # grad_fn = value_and_grad(...)
    call: cst.SimpleStatementLine  # (loss, aux), grads = grad_fn(...)
    grads: str
    detail: str
    first: list
    #: statements right after the call (the table of gradients a .grad read looks up)
    after: list = field(default_factory=list)
    #: the timing mark the call carries (see :func:`_timings`), or None
    timing: Optional[str] = None


def _build(ctx, p, stmts, fwd_lines, varying, weights, how) -> _Step:
    """The forward function over the ported forward statements ``fwd_lines``, the
    value_and_grad definition and the call replacing the step; names in ``varying``
    become parameters."""
    defined, params, targets = set(), [], set()
    for i in p.forward:
        own = _loop_targets(stmts[i])
        targets |= own
        for n in _reads_in_order(stmts[i]):
            if n not in defined and n in varying and n not in params and n not in own:
                params.append(n)
        defined |= set(_names(stmts[i], ast.Store))
    for c in p.backs:
        for n in _names(c.func.value, ast.Load):
            if n not in defined and n in varying and n not in params:
                params.append(n)
    losses = [c.func.value for c in p.backs]
    loss_names = [x.value for x in losses if isinstance(x, cst.Name)]
    aux = [n for i in p.forward for n in _names(stmts[i], ast.Store) if n not in loss_names and n not in targets]
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
    # a timing magic on a statement moving into the forward function would run there,
    # where %time binds nothing the function sees (it executes in a copy of its locals) and
    # %prun reads the notebook's names only: the first timing goes on the step call, whose
    # names stay where the statements' were; a timed backward() is timed there too
    timed = _timings(ctx, stmts, p)
    dropped = timed if _in_function(ctx) else timed[1:]  # in a function: timed backward() calls
    untimed = _Untimed(timed[0][1] if timed and len(dropped) < len(timed) else "")
    timed_at = {i for i, _, _ in timed}
    # only the timed lines change (the nodes of the others are what their edits point at)
    fwd_lines = [_untimed_line(line, untimed) if i in timed_at else line for i, line in zip(p.forward, fwd_lines)]
    vag = _code(ctx.ref("mindspore.value_and_grad")).strip()
    has_aux = len(outs) > 1
    ret = _stmt(f"return {', '.join(outs)}\n")
    if untimed.dropped:  # their timing goes: the step call has one
        ret = ret.with_changes(trailing_whitespace=_comment_set(
            ret.trailing_whitespace, "# " + "  ".join(timing_dropped(m) for m in untimed.dropped)))
    header = _stmt(f"def {fwd_name}({', '.join(params)}):\n    pass\n")
    fn = header.with_changes(body=header.body.with_changes(body=[*fwd_lines, ret]))
    gfn = _stmt(f"{grad_name} = {vag}({fwd_name}, None, {weights}"
                f"{', has_aux=True' if has_aux else ''})\n")
    unpack = f"({', '.join(targets)}{',' if len(targets) == 1 else ''})" if has_aux else targets[0]
    call = _stmt(f"{unpack}, {grads} = {grad_name}({', '.join(params)})\n")
    detail = (f"{fwd_name}({', '.join(params)}) returns {', '.join(outs)}; "
              f"{grad_name} = value_and_grad(...) before the loop; {how}")
    step = _Step(fn, gfn, call, grads, detail, first)
    if len(dropped) < len(timed):
        i, step.timing, magics = timed[0]
        call = step.call = _timed_call(call, call.trailing_whitespace, step.timing)
        detail += (f"; %{magics[0]} on `{_statement_text(stmts[i])}` times the step call {unpack}, {grads} = "
                   f"{grad_name}(...) (the forward pass and the gradients), where the names it binds stay "
                   "visible")
    if dropped:
        detail += "; the timing of " + ", ".join(f"`{_statement_text(stmts[j])}`" for j, _, _ in dropped) + (
            " is dropped" if len(dropped) < len(timed) else
            " is dropped: in a function, timing the step call would lose the names it binds")
    step.detail = detail
    return step


def _log(ctx, p, step: _Step) -> None:
    ctx.edit("TRN001", step.call, node=p.backs[0], api="loss.backward()", detail=step.detail)
    if len(p.backs) > 1:
        ctx.edit("TRN003", step.call, node=p.backs[1], api="loss.backward()",
                 detail=f"{len(p.backs)} backward() calls -> gradient of {step.first[0]}")
    for c in p.backs:
        if c.args:
            ctx.edit("TRN003", step.call, node=c, api="loss.backward()", detail="retain_graph= dropped")


def _key(stmt):
    """An expression of an original statement whose ported form the ported statement
    holds (to find it among the ported statements of the block)."""
    if isinstance(stmt, cst.SimpleStatementLine) and stmt.body:
        small = stmt.body[0]
        value = getattr(small, "value", None)
        if isinstance(small, (cst.Assign, cst.AugAssign, cst.Expr, cst.AnnAssign)) and value is not None:
            return value, lambda u: getattr(u.body[0], "value", None) if (
                isinstance(u, cst.SimpleStatementLine) and u.body) else None
    if isinstance(stmt, cst.For):
        return stmt.iter, lambda u: u.iter if isinstance(u, cst.For) else None
    if isinstance(stmt, (cst.While, cst.If)):
        return stmt.test, lambda u: u.test if isinstance(u, type(stmt)) else None
    return None


def _align(ctx, stmts, new_body, wanted) -> Optional[dict]:
    """Original statement index -> index of the ported statement it became, for the
    ``wanted`` ones (other rules may have split a statement into several, or removed
    one: ``with torch.no_grad():`` unwrapped into its body); None when one of them
    cannot be found, or became more than one statement."""
    found, j = {}, 0
    for i, s in enumerate(stmts):
        key = _key(s)
        if key is None:
            continue
        node, get = key
        target = ctx.updated_of(node)
        for k in range(j, len(new_body)):
            if get(new_body[k]) is target:
                found[i] = k
                j = k + 1
                break
    for i in wanted:
        if i not in found:
            break
        for d in (-1, 1):
            if i + d in found and found[i + d] != found[i] + d:
                break
        else:
            continue
        break
    else:
        return {i: found[i] for i in wanted}
    if len(new_body) == len(stmts):  # nothing split or removed: statement i is statement i
        return {i: i for i in wanted}
    return None


def _find(ctx, new_body, originals) -> Optional[list]:
    """Indices of the ported statements holding the ported forms of these original
    statements (a loop, zero_grad() calls) wherever they ended up in the block."""
    out = []
    for o in originals:
        if isinstance(o, cst.Call):
            node, get = o, (lambda u: getattr(u.body[0], "value", None)
                            if isinstance(u, cst.SimpleStatementLine) and len(u.body) == 1 else None)
        else:
            node, get = _key(o)
        target = ctx.updated_of(node)
        hits = [j for j, u in enumerate(new_body) if get(u) is target]
        if len(hits) != 1:
            return None
        out.append(hits[0])
    return out


class _GradToName(cst.CSTTransformer):
    def __init__(self, param: str, name: str):
        super().__init__()
        self.param, self.name = param, name

    def leave_Attribute(self, original_node, updated_node):
        v = updated_node.value
        if updated_node.attr.value == "grad" and isinstance(v, cst.Name) and v.value == self.param:
            return cst.Name(self.name)
        if updated_node.attr.value == "data" and isinstance(v, cst.Name) and v.value == self.name:
            return v
        return updated_node


def _manual_loop(ctx, m, loop, weights, grads):
    """``for p in model.parameters(): p -= lr * p.grad`` ->
    ``for p, p_grad in zip(model.trainable_params(), grads): ops.assign(p, p - (lr * p_grad))``
    (``weights``: what was differentiated); resetting ``p.grad`` goes (MindSpore's
    gradients are fresh values)."""
    name = ctx.fresh_name(f"{m.param}_grad")
    assign = _code(ctx.ref("mindspore.ops.assign")).strip()
    lines = []
    originals = list(m.loop.body.body)
    if len(originals) != len(loop.body.body):
        originals = list(loop.body.body)
    for line, original in zip(loop.body.body, originals):
        smalls = []
        for small in (original.body if len(original.body) == len(line.body) else line.body):
            # read from the original statement (another rule may have rewritten the
            # in-place call), its amounts as ported
            update = _update_of(small, m.param)
            if update is None:
                continue  # p.grad.zero_() / p.grad = None
            op, value, alpha = update
            value = ctx.updated_of(value).visit(_GradToName(m.param, name))
            if alpha is not None:
                value = build_expression(f"({_code(ctx.updated_of(alpha)).strip()}) * ({_code(value).strip()})")
            text = _code(value).strip()
            if not isinstance(value, (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.Integer, cst.Float)):
                text = f"({text})"
            smalls.append(cst.Expr(build_expression(f"{assign}({m.param}, {m.param} {op} {text})")))
        if smalls:
            tw = line.trailing_whitespace
            if tw.comment is not None and "# msmagic:" in tw.comment.value:  # notes on the replaced update
                own = tw.comment.value.split("# msmagic:")[0].rstrip()
                tw = tw.with_changes(comment=cst.Comment(own) if own else None,
                                     whitespace=tw.whitespace if own else cst.SimpleWhitespace(""))
            lines.append(line.with_changes(body=smalls, trailing_whitespace=tw))
    new = loop.with_changes(
        target=build_expression(f"({m.param}, {name})").with_changes(lpar=[], rpar=[]),
        iter=build_expression(f"zip({weights}, {grads})"),
        body=loop.body.with_changes(body=lines),
    )
    ctx.edit("TRN001", new, node=m.loop, api="Tensor.grad",
             detail=f"{m.param} -= ... {m.param}.grad -> {assign}({m.param}, ...) over zip({weights}, {grads})")
    return new


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
    if not p.rewrite and not p.backs and not p.problem:
        found = _conditional(ctx, stmts)
        if found is not None:
            return _conditional_step(ctx, original, updated, stmts, hoisted, *found)
    if not p.rewrite:  # the statement hooks flagged what is not ported
        return _emit(ctx, original, updated, hoisted)
    new_body = list(updated.body.body)
    wanted = [*p.index, *p.forward]
    if p.manual is not None and isinstance(stmts[p.manual.index], cst.For):
        wanted.append(p.manual.index)
    if p.inspect is not None:
        wanted += p.grad_reads
    where = _align(ctx, stmts, new_body, wanted)
    if where is None:
        _not_rewritten(ctx, p)
        return _emit(ctx, original, updated, hoisted)
    owners = _owners(ctx, original)
    varying = set().union(*(_varying(o) for o in owners))
    replace, drop = {}, set()
    built = []  # (plan of one step, its _Step, optimizer text)
    blank: dict = {}  # first forward statement -> the blank lines above it
    if p.manual is not None:
        m = p.manual
        zero_loops = [stmts[i] for i in m.zero_loops]
        found = _find(ctx, new_body, [m.loop, *m.zero_calls, *zero_loops])
        if found is None:
            ctx.finding("TRN004", "the parameter update was rewritten by another rule while porting; the "
                        "training step was not rewritten", node=p.backs[0], api=".backward()",
                        comment=_STEP_COMMENT)
            return _emit(ctx, original, updated, hoisted)
        module = _code(ctx.updated_of(m.module)).strip()
        weights = _weights(ctx, m)
        step = _build(ctx, p, stmts, [new_body[where[i]] for i in p.forward], varying,
                      weights, f"the Parameters in {module} updated from grads" if m.form == "list"
                      else f"{module}'s parameters updated from grads")
        loop_j, *zero_js = found
        replace[loop_j] = _manual_loop(ctx, m, new_body[loop_j], weights, step.grads)
        drop.update(zero_js)
        for k, j in zip(m.zero_loops, zero_js[len(m.zero_calls):]):
            ctx.edit("TRN001", None, node=stmts[k], api="Tensor.grad",
                     detail=f"{_code(stmts[k].target).strip()}.grad = None loop dropped: grad_fn returns "
                            "fresh gradients")
        _forget(ctx, [m.loop.iter, m.loop.body, *m.zero_calls, *(x.body for x in zero_loops)])
        built.append((p, step, None))
    elif p.inspect is not None:
        recv = _code(ctx.updated_of(p.inspect.receiver)).strip()
        weights = f"{recv}.parameters" if p.inspect.optimizer else f"{recv}.trainable_params()"
        lines = [new_body[where[i]] for i in p.forward]
        # defined right before its call: the function's values reach it as closure
        # variables, only names the forward pass rebinds are passed
        bound = set().union(*(_names(stmts[i], ast.Store) for i in p.forward))
        step = _build(ctx, p, stmts, lines, bound, weights,
                      "the gradients are computed as values for the .grad reads after it")
        table = ctx.fresh_name("grad_of") if p.grad_reads else None
        for i in p.grad_reads:
            j = where[i]
            replace[j] = new_body[j].visit(_GradReads(table, names=True))
            ctx.edit("TRN001", replace[j], node=_first_small(stmts[i]), api="Tensor.grad",
                     detail=f"param.grad -> {table}.get(param): the gradient computed for that parameter")
        if table is not None:
            step.after.append(_stmt(f"{table} = dict(zip({weights}, {step.grads}))\n"))
        built.append((p, step, None))
    else:
        for seg in p.segments or [p]:
            step_i = next(i for i, r in seg.index.items() if r == "step")
            opt = _code(new_body[where[step_i]].body[0].value.func.value).strip()
            if p.joint:
                joint = [_code(new_body[where[i]].body[0].value.func.value).strip() for i in p.joint]
                weights = "(" + ", ".join(f"*{o}.parameters" for o in joint) + ")"
            lines = [new_body[where[i]] for i in seg.forward]
            if lines:  # blank lines above the forward pass stay in the loop, comments move with it
                blank[seg.forward[0]], lines[0] = _blank_lines_apart(lines[0])
            if p.joint:
                step = _build(ctx, seg, stmts, lines, varying, weights,
                              f"{', '.join(joint)} step on their shares of grads")
            else:
                step = _build(ctx, seg, stmts, lines, varying, f"{opt}.parameters", f"{opt}(grads) steps")
            built.append((seg, step, opt))
    # the loop body
    _forget(ctx, [stmts[i] for i in p.index])  # their own edits/findings: the statements are replaced
    for seg, _, opt in built:
        if opt:
            _skipped_layers_stepped(ctx, seg.calls[next(i for i, r in seg.index.items() if r == "step")],
                                    [stmts[i] for i in seg.forward])
    owner_of, firsts = {}, {}
    for seg, step, opt in built:
        for i in [*seg.index, *seg.forward]:
            owner_of[i] = (seg, step, opt)
        first = seg.forward[0] if seg.forward else min(i for i, r in seg.index.items() if r == "backward")
        firsts[first] = (seg, step, opt)
    origin = {j: i for i, j in where.items()}
    # a step in a function's own body whose optimizer (or module) the function binds, a
    # parameter say, or in a loop that binds it (``for net, opt in zip(nets, opts)``):
    # its definitions go inside, where that name exists
    in_function = (isinstance(original, cst.FunctionDef) and p.inspect is not None) or (
        isinstance(original, (cst.FunctionDef, cst.For, cst.While)) and any(
            B.binds(original, root, header_only=True) or any(B.binds(st, root) for st in stmts)
            for root in _roots(built, p, ctx)))
    out = []
    for j, u in enumerate(new_body):
        i = origin.get(j)
        if j in replace:
            out.append(replace[j])
            continue
        if j in drop:
            out.append(_comments_of(u))
            continue
        if i is None:
            out.append(u)
            continue
        if i in firsts:
            seg, step, _ = firsts[i]
            call = step.call.with_changes(
                leading_lines=u.leading_lines if i not in seg.forward else blank.get(i, ()))
            if in_function:
                # the step sits in the function's own body: its definitions go right
                # before it, where the function's parameters (the optimizer) are bound
                out.extend([step.fn.with_changes(leading_lines=call.leading_lines), step.gfn])
                call = call.with_changes(leading_lines=())
            out.append(call)
            out.extend(step.after)  # the gradient table
            continue
        if i not in owner_of:
            out.append(u)
            continue
        seg, step, opt = owner_of[i]
        role = seg.index.get(i)
        if i in seg.forward:
            continue
        if role in ("zero", "backward"):
            out.append(_comments_of(u, blank=p.inspect is not None))
            continue
        elif role == "clip":
            out.append(_clip(ctx, stmts[i], u, step.grads).with_changes(leading_lines=u.leading_lines))
        elif role == "step":
            given = step.grads
            if p.joint:
                opt = _code(u.body[0].value.func.value).strip()
                k = p.joint.index(i)
                lens = [f"len({o}.parameters)" for o in joint]
                lo, hi = " + ".join(lens[:k]), " + ".join(lens[:k + 1])
                given = f"{step.grads}[{lo}:{hi if k + 1 < len(joint) else ''}]"
            new_step = _stmt(f"{opt}({given})\n").with_changes(
                leading_lines=u.leading_lines, trailing_whitespace=u.trailing_whitespace)
            ctx.edit("TRN001", new_step, node=seg.calls[i], api="optimizer.step()",
                     detail=f"{opt}.step() -> {opt}({given})")
            out.append(new_step)
        else:
            out.append(u)
    defs = []
    for seg, step, opt in built:
        _log(ctx, seg, step)
        if not in_function:
            defs += [step.fn.with_changes(leading_lines=()) if not defs else step.fn, step.gfn]
    if p.joint:
        ctx.edit("TRN007", None, node=p.calls[p.joint[1]], api="optimizer.step()",
                 detail=f"{len(p.joint)} optimizers zeroed, then every backward(), then each step(): one "
                        "forward function returning the summed losses, each optimizer given its share")
    if len(built) > 1:
        ctx.edit("TRN007", None, node=p.backs[1], api="optimizer.step()",
                 detail=f"{len(built)} optimizer steps in one block: one forward function and "
                        "value_and_grad each")
    out, tail = _place_comments(out)
    new = updated.with_changes(body=updated.body.with_changes(body=out, footer=[*tail, *updated.body.footer]))
    defs += hoisted or []
    if len(owners) > 1:  # defined before the outermost loop: stash them with it
        _hoisted(ctx).setdefault(id(owners[-1]), [])[:0] = defs
        return new
    return _emit(ctx, original, new, defs)


#: optimizers whose update moves a parameter whose gradient is zero (moments, decoupled decay)
_MOVE_ON_ZERO = frozenset(f"torch.optim.{n}" for n in ("Adam", "AdamW", "Adamax", "NAdam", "RAdam"))
#: optimizers that move such a parameter only with these arguments (name -> positional index)
_MOVE_WITH = {
    "torch.optim.SGD": {"momentum": 2, "weight_decay": 4},
    "torch.optim.RMSprop": {"momentum": 5, "weight_decay": 4},
    "torch.optim.Adagrad": {"weight_decay": 3},
    "torch.optim.Adadelta": {"weight_decay": 4},
}
#: layers without parameters: skipping them changes no gradient
_NO_PARAMETERS = frozenset({
    "ReLU", "ReLU6", "LeakyReLU", "ELU", "SELU", "CELU", "GELU", "SiLU", "Mish", "Sigmoid", "Tanh", "Softmax",
    "LogSoftmax", "Softplus", "Hardtanh", "Hardswish", "Hardsigmoid", "Dropout", "Dropout1d", "Dropout2d",
    "Dropout3d", "AlphaDropout", "Identity", "Flatten", "Unflatten", "MaxPool1d", "MaxPool2d", "MaxPool3d",
    "AvgPool1d", "AvgPool2d", "AvgPool3d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveMaxPool2d",
    "Upsample", "ZeroPad2d", "ConstantPad2d",
})


def _moves_on_zero(ctx, call) -> bool:
    """Does the optimizer built by ``call`` move a parameter whose gradient is zero?"""
    qual = ctx.resolve(call.func) or ""
    if qual in _MOVE_ON_ZERO:
        return True
    spots = _MOVE_WITH.get(qual)
    if spots is None:
        return False
    for k, a in enumerate(call.args):
        name = a.keyword.value if a.keyword is not None else next((n for n, i in spots.items() if i == k), None)
        if a.star or (name in spots and _literal(a.value) not in (0, 0.0)):
            return True
    return False


def _conditional_layers(forward: cst.FunctionDef) -> list:
    """The ``self.<layer>`` attributes a forward pass calls inside an ``if``, a ``while`` or a
    ``for`` whose count may be zero (not a loop over ``self.<layers>`` or ``range(<n > 0>)``)."""
    found: list = []

    def walk(node, inside: bool):
        for child in child_nodes(node):
            if isinstance(child, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                continue
            here = inside
            if isinstance(child, (cst.If, cst.While, cst.IfExp)):
                here = True
            elif isinstance(child, cst.For):
                it = child.iter
                sure = (isinstance(it, cst.Attribute) and isinstance(it.value, cst.Name)
                        and it.value.value == "self") or (
                    isinstance(it, cst.Call) and isinstance(it.func, cst.Name) and it.func.value == "range"
                    and len(it.args) == 1 and isinstance(_literal(it.args[0].value), int)
                    and _literal(it.args[0].value) > 0)
                here = inside or not sure
            if (here and isinstance(child, cst.Call) and isinstance(child.func, cst.Attribute)
                    and isinstance(child.func.value, cst.Name) and child.func.value.value == "self"
                    and child.func.attr.value not in found):
                found.append(child.func.attr.value)
            walk(child, here)

    walk(forward.body, False)
    return found


def _skipped_layers_stepped(ctx, step_call, forward_statements=()) -> None:
    """TRN008: flag ``optimizer.step()`` when the optimizer moves parameters whose gradient
    is zero and the model's forward pass may skip a layer with parameters. An optimizer
    whose construction the port cannot see (a function's parameter, one a helper builds)
    may be such an optimizer: the models the forward statements call are checked, and the
    finding says what it depends on."""
    recv = step_call.func.value if isinstance(step_call.func, cst.Attribute) else None
    if not isinstance(recv, cst.Name):
        return
    made = ctx.assigned_call(recv.value)
    if made is not None and (ctx.resolve(made.func) or "").startswith("torch.optim."):
        if not made.args or not _moves_on_zero(ctx, made):
            return
        models, unsure = [_parameters_of(made.args[0].value)], False
    elif (ctx.kind_of(recv) or "").startswith("optimizer"):
        models = [c.func.value for st in forward_statements for c in descendants(st)
                  if type(c) is cst.Call and type(c.func) is cst.Name]
        models, unsure = list(dict.fromkeys(models)), True
    else:
        return
    for model in models:
        kind = ctx.kind_of(cst.Name(model)) if model is not None else None
        if kind is None or kind.base != "module" or not kind.detail or "." in kind.detail:
            continue  # not a user Module class (a torch layer or Sequential calls all its layers)
        if _flag_skipped_layers(ctx, step_call, recv, kind, unsure):
            return


def _flag_skipped_layers(ctx, step_call, recv, kind, unsure: bool) -> bool:
    """TRN008 for one model of user class ``kind.detail``: True when it was flagged."""
    forward = ctx.method_definition(kind.detail, "forward")
    init = ctx.method_definition(kind.detail, "__init__")
    if forward is None:
        return False
    made_by = {}
    for stmt in (init.body.body if init is not None and isinstance(init.body, cst.IndentedBlock) else ()):
        for small in getattr(stmt, "body", ()) if isinstance(stmt, cst.SimpleStatementLine) else ():
            if isinstance(small, cst.Assign) and isinstance(small.value, cst.Call) and len(small.targets) == 1:
                t = small.targets[0].target
                if isinstance(t, cst.Attribute) and isinstance(t.value, cst.Name) and t.value.value == "self":
                    made_by[t.attr.value] = (ctx.resolve(small.value.func) or "").rsplit(".", 1)[-1]
    layers = [a for a in _conditional_layers(forward) if made_by.get(a) not in _NO_PARAMETERS]
    if not layers:
        return False
    opt = _code(recv).strip()
    which = ", ".join(f"self.{a}" for a in layers)
    reason = (f"{kind.detail}.forward may skip {which} (called under a condition or in a loop "
              f"that can run zero times): PyTorch's {opt}.step() leaves a parameter without a gradient "
              f"as it is, while MindSpore's optimizer gets a zero gradient for it and, with momentum, "
              f"moments or weight decay, still moves it; the trained weights can differ")
    if unsure:
        reason += (f" (where {opt} was built is not known here: this holds if it is Adam or its family, or "
                   "has momentum or weight decay)")
    ctx.finding("TRN008", reason, node=step_call, api="optimizer.step()",
                comment=f"{which} may be skipped; PyTorch does not step them then, MindSpore does")
    return True


def _owners(ctx, original) -> list:
    """The statements a step's definitions are hoisted before: ``original`` and the loops
    directly enclosing it (innermost first)."""
    owners = [original]
    for h in reversed(ctx.enclosing_statements[:-1]):
        if isinstance(h, _LOOPS) and isinstance(owners[-1], _LOOPS):
            owners.append(h)
        else:
            break
    return owners


def _not_rewritten(ctx, p) -> None:
    ctx.finding("TRN004", "a statement of the training step was rewritten by another rule while "
                "porting (split, removed or replaced); the training step was not rewritten",
                node=p.backs[0], api=".backward()", comment=_STEP_COMMENT)


def _blank_lines_apart(line) -> tuple:
    """(the blank lines above ``line`` before its first comment line, ``line`` without
    them): blank lines stay where the statement was, its comments move with it."""
    lead = list(line.leading_lines)
    k = next((n for n, e in enumerate(lead) if e.comment is not None), len(lead))
    return lead[:k], line.with_changes(leading_lines=lead[k:])


def _user_comment(tw) -> str:
    """The user's comment ending a line, without the ``# msmagic:`` notes rules put there."""
    return tw.comment.value.split("# msmagic:")[0].rstrip() if tw.comment is not None else ""


def _own_comment(tw):
    """A line's trailing whitespace without the ``# msmagic:`` notes rules put on it
    (the user's own comment stays)."""
    if tw.comment is None or "# msmagic:" not in tw.comment.value:
        return tw
    own = _user_comment(tw)
    return tw.with_changes(comment=cst.Comment(own) if own else None,
                           whitespace=tw.whitespace if own else cst.SimpleWhitespace(""))


def _conditional(ctx, stmts) -> Optional[tuple]:
    """(index of the ``if``, plan, statements as one block) for a body whose training step
    sits in an ``if`` after the forward pass (``loss = loss_func(model(xb), yb)`` then
    ``if opt is not None: loss.backward(); opt.step(); opt.zero_grad()``: the official
    tutorial's ``loss_batch``): the forward pass and the step's calls make one step when
    the ``if`` is read as part of the block. None when it is not that shape: the ``if``
    has an ``else``, its test reads what the forward pass binds, statements between the
    forward pass and the ``if`` use it, or the ``if`` holds more than the step."""
    for k, s in enumerate(stmts):
        if not (isinstance(s, cst.If) and s.orelse is None and isinstance(s.body, cst.IndentedBlock)):
            continue
        inner = list(s.body.body)
        if not any(_is_backward_call(_call_of(x)) for x in inner):
            continue
        virtual = [*stmts[:k], *inner]
        p = _plan(ctx, virtual)
        if (not p.rewrite or p.manual is not None or p.inspect is not None or p.segments or p.joint
                or p.grd or p.grad_reads or len(p.backs) != 1 or p.step is None):
            return None
        if any(i < k for i in p.index) or not p.forward or any(i >= k for i in p.forward):
            return None
        if any(i not in p.index and (not _is_plain(x) or ".grad" in _code(x))
               for i, x in enumerate(inner, start=k)):
            return None
        fbound, fread = set(), set()
        for i in p.forward:
            bound, read = _bound_read(ctx, stmts[i])
            fbound |= bound
            fread |= read
        if set(_names(s.test, ast.Load)) & fbound:
            return None
        for i in range(p.forward[0], k):
            if i not in p.forward:
                bound, read = _bound_read(ctx, stmts[i])
                if (bound | read) & fbound or bound & fread:
                    return None
        return k, p, virtual
    return None


def _conditional_step(ctx, original, updated, stmts, hoisted, k, p, virtual):
    """The step of :func:`_conditional`: the forward function is called through
    value_and_grad in the ``if`` branch and on its own in a new ``else`` branch, so the
    forward pass runs once either way (a BatchNorm's running statistics and dropout's
    draws are what PyTorch's single forward pass made)."""
    new_body = list(updated.body.body)
    where = _align(ctx, stmts, new_body, [*p.forward, k])
    branch = new_body[where[k]] if where is not None else None
    inner = list(stmts[k].body.body)
    roles = [i - k for i in p.index]
    inner_where = (_align(ctx, inner, list(branch.body.body), roles)
                   if isinstance(branch, cst.If) and isinstance(branch.body, cst.IndentedBlock) else None)
    if inner_where is None:
        _not_rewritten(ctx, p)
        return _emit(ctx, original, updated, hoisted)
    inner_new = list(branch.body.body)
    step_i = next(i for i, r in p.index.items() if r == "step")
    opt = _code(inner_new[inner_where[step_i - k]].body[0].value.func.value).strip()
    owners = _owners(ctx, original)
    varying = set().union(*(_varying(o) for o in owners))
    lines = [new_body[where[i]] for i in p.forward]
    blank, lines[0] = _blank_lines_apart(lines[0])  # blank lines stay above the function, comments move in
    step = _build(ctx, p, virtual, lines, varying, f"{opt}.parameters", f"{opt}(grads) steps")
    step.fn = step.fn.with_changes(leading_lines=blank)
    root = _leading_name(opt)
    in_function = B.binds(original, root, header_only=True) or any(B.binds(st, root) for st in stmts)
    if in_function:
        step.detail = step.detail.replace("before the loop", "in the `if` branch")
    _forget(ctx, [virtual[i] for i in p.index])
    # the branch: the call where backward() was, opt(grads) for step(), zero_grad() dropped
    origin = {j: i + k for i, j in inner_where.items()}
    out, placed = [], False
    for j, u in enumerate(inner_new):
        role = p.index.get(origin.get(j, -1))
        if role == "backward" and not placed:
            # value_and_grad is made where the optimizer is known to exist
            first = [step.gfn.with_changes(leading_lines=u.leading_lines), step.call] if in_function else [
                step.call.with_changes(leading_lines=u.leading_lines)]
            out.extend(first)
            own = _comments_of(u.with_changes(leading_lines=()))
            if own:  # the comment at the end of the backward() line goes above the next one
                out.append(own)
            placed = True
        elif role in ("zero", "backward"):
            out.append(_comments_of(u))
        elif role == "step":
            new_step = _stmt(f"{opt}({step.grads})\n").with_changes(
                leading_lines=u.leading_lines, trailing_whitespace=_own_comment(u.trailing_whitespace))
            ctx.edit("TRN001", new_step, node=p.calls[origin[j]], api="optimizer.step()",
                     detail=f"{opt}.step() -> {opt}({step.grads})")
            out.append(new_step)
        elif role == "clip":
            out.append(_clip(ctx, virtual[origin[j]], u, step.grads).with_changes(leading_lines=u.leading_lines))
        else:
            out.append(u)
    out, tail = _place_comments(out)
    assign = step.call.body[0]
    target_node = assign.targets[0].target.elements[0].value
    if isinstance(target_node, cst.Tuple):  # (loss, out) = ... -> loss, out = ...
        target_node = target_node.with_changes(lpar=(), rpar=())
    target = _code(target_node).strip()
    fn = step.fn.name.value
    args = ", ".join(_code(a.value).strip() for a in assign.value.args)
    otherwise = _stmt(f"{target} = {fn}({args})\n")
    new_branch = branch.with_changes(
        body=branch.body.with_changes(body=out, footer=[*tail, *branch.body.footer]),
        orelse=cst.Else(body=cst.IndentedBlock(body=[otherwise])))
    _log(ctx, p, step)
    ctx.edit("TRN001", new_branch, node=stmts[k], api="loss.backward()",
             detail=f"the forward pass moved into the `if` (value_and_grad, then {opt}(grads)) and a new "
                    f"`else` ({target} = {fn}({args})): it runs once on either branch, as in PyTorch")
    forward = set(p.forward)
    origin_outer = {j: i for i, j in where.items()}
    body_out = []
    for j, u in enumerate(new_body):
        i = origin_outer.get(j)
        if i in forward:
            if in_function and i == p.forward[0]:
                body_out.append(step.fn)
            continue
        if i == k:
            body_out.append(new_branch)
            continue
        body_out.append(u)
    new = updated.with_changes(body=updated.body.with_changes(body=body_out))
    defs = [] if in_function else [step.fn.with_changes(leading_lines=()), step.gfn]
    defs += hoisted or []
    if len(owners) > 1 and defs:
        _hoisted(ctx).setdefault(id(owners[-1]), [])[:0] = defs
        return new
    return _emit(ctx, original, new, defs)


def _roots(built, p, ctx) -> set:
    """The names the value_and_grad of the built steps reads: each optimizer's (or, for a
    hand-written update, the module's) leading name."""
    texts = [opt for _, _, opt in built if opt]
    texts += [_callee(p.calls[i]) for i in p.joint]
    if p.manual is not None:
        texts.append(_code(ctx.updated_of(p.manual.module)).strip())
    return {_leading_name(t) for t in texts}


def _leading_name(text: str) -> str:
    """``opt`` for ``opt.param_groups[0]``: the name an expression's text starts with."""
    return text.split(".", 1)[0].split("[", 1)[0].split("(", 1)[0]


def _comments_of(line, blank: bool = False) -> list:
    """The comment lines of a statement the rewrite drops: those above it (with the
    blank lines, when ``blank``) and the one ending its line."""
    kept = [e for e in line.leading_lines if blank or e.comment is not None]
    if isinstance(line, cst.BaseCompoundStatement):  # a loop: its header's and body lines' comments
        ends = [line.body.header] if isinstance(line.body, cst.IndentedBlock) else []
        for inner in getattr(line.body, "body", ()):
            kept += [e for e in getattr(inner, "leading_lines", ()) if e.comment is not None]
            if isinstance(inner, cst.SimpleStatementLine):
                ends.append(inner.trailing_whitespace)
    else:
        ends = [line.trailing_whitespace]
    for end in ends:
        own = _user_comment(end)
        if own:
            kept.append(cst.EmptyLine(comment=cst.Comment(own)))
    return kept


def _place_comments(out: list) -> tuple[list, list]:
    """``out`` holds statements and, where dropped statements were, their comment lines:
    the comment lines go above the next statement; those after the last one are
    returned apart, for the end of the block."""
    nodes, pending = [], []
    for item in out:
        if isinstance(item, list):
            pending += item
        elif pending and isinstance(item, cst.CSTNode):
            nodes.append(item.with_changes(leading_lines=[*pending, *item.leading_lines]))
            pending = []
        else:
            nodes.append(item)
    return nodes, pending


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
    """Clipping is rewritten with the training step when it sits in one (the plan checked
    its arguments); anywhere else it is flagged."""
    if site.is_statement and site.blocks:
        p = _analyse(site, site.blocks[-1][0])  # the block holding the call's statement
        if p.rewrite and any(c is site.original for _, c in p.clips):
            return site.updated
        if p.problem and p.problem[0] is site.original:  # the step is flagged too (TRN004)
            site.finding("TRN002", p.problem[1], comment=p.problem[2])
            return None
    site.finding("TRN002", f"{site.api} outside a recognised training step (or its result is used): clip the "
                 "gradient tuple from value_and_grad with ops.clip_by_global_norm / ops.clip_by_value",
                 comment=f"{site.api.rsplit('.', 1)[1]} not ported; clip the grads tuple instead")
    return None


for _qual in CLIPS:
    api(_qual, rule="TRN002", handler=_clip_call)


# ----------------------------------------------------------------------------- statements of a step


def _lines(ctx) -> dict:
    """Top-level rewrite: index of a statement of the cell -> its ported line, kept for
    the forward function (or to follow the step)."""
    return ctx.scratch("training").setdefault("top", {})


@statement_hook("TRN004", cst.SimpleStatementLine)
def _step_line(ctx, original, updated):
    """The statements of a training step, one by one: flag the one where the rewrite
    fails, drop no-op steps, rewrite a step at the top level of a cell. Steps in a loop
    or function body are rewritten by the hook of the loop or function."""
    if not ctx.torch_in_scope or not ctx.blocks:
        return updated
    stmts, index = ctx.blocks[-1]
    c = _call_of(original)
    name = _role_name(ctx, c)
    if name not in ("step", "zero_grad", "backward") and not (c is not None and ctx.resolve(c.func) in CLIPS):
        if ctx.depth == 0 and _cell_has_backward(ctx):
            p = _analyse(ctx, stmts)
            if p.rewrite and p.top and (index in p.forward or index in p.between):
                _lines(ctx)[index] = _format_line(ctx, original, updated)
                return cst.RemovalSentinel.REMOVE
            if p.rewrite and p.top and index in p.grad_reads:
                return _read_grads(ctx, original, updated, ctx.scratch("training")["top_step"]["grad_of"])
        if ctx.depth == 0 and ".grad" in _code(original):
            return _module_grad_reads(ctx, original, updated)
        return updated
    p = _analyse(ctx, stmts)
    i = p.position(c)
    if i is None or i != index:
        return updated
    role = p.index[i]
    if p.noop:
        if ctx.depth == 0:  # what earlier cells left in the gradients
            new = _sequential(ctx, p, role, c, original, updated, noop=True)
            if new is not None:
                return new
        return _drop(ctx, p, original, updated, name)
    owner = ctx.enclosing_statements[-2] if len(ctx.enclosing_statements) > 1 else None
    if (role == "zero" and not p.backs and isinstance(owner, cst.FunctionDef) and not ctx.classes
            and len(p.index) == len(stmts) - _docstring(stmts) and _zero_helper_receivers(owner) is not None):
        return _drop(ctx, p, original, updated, name, rule="TRN007",
                     why=f"{owner.name.value}() only clears gradients; MindSpore's grad_fn returns fresh ones")
    if p.problem and p.top and not p.grd and role != "clip":
        new = _sequential(ctx, p, role, c, original, updated)
        if new is not None:
            return new
    if p.problem:
        if p.problem[0] is c:
            _, reason, comment = p.problem
            ctx.finding("TRN004", reason, node=c, api=f".{name}()" if name else "", comment=comment)
        elif role != "clip":  # each statement of the step fails on its own (no zero_grad()/step() in MindSpore)
            ctx.finding("TRN004", f"part of a training step that is not rewritten: {p.problem[1]}",
                        node=c, api=f".{name}()", comment=f"{name}() not ported; see rule TRN004")
        return updated
    if not p.rewrite:  # backward() left to the autograd rules; zero_grad() / step() beside it
        if role in ("zero", "step"):
            ctx.finding("TRN004", f"{name}() next to a backward() of requires_grad tensors (ported by the "
                        "autograd rules); MindSpore optimizers have no zero_grad()/step(): apply the "
                        "gradients by hand", node=c, api=f".{name}()", comment=f"{name}() not ported")
        return updated
    if isinstance(owner, _LOOPS) or (isinstance(owner, cst.FunctionDef) and not ctx.classes):
        return updated  # the loop / function hook rewrites the step
    if p.top:
        return _top_step(ctx, p, stmts, i, original, updated)
    if role == "step":
        what = "a method" if isinstance(owner, cst.FunctionDef) else f"an `{type(owner).__name__.lower()}` block"
        ctx.finding("TRN004", f"the training step is in {what}, not the body of a loop, a function or the "
                    "cell; move it there, or port it by hand with value_and_grad and optimizer(grads)",
                    node=c, api=".step()", comment=_STEP_COMMENT)
    return updated


# ----------------------------------------------------------------------------- steps across cells

#: the key of this module's facts in the session (``Context.session_memory``)
_MEMORY = "training"


@dataclass
class _Grads:
    """What the top-level statements so far (of earlier cells too) left in the ``.grad``
    of a module's parameters, or which module an optimizer steps. Teaching notebooks
    split a step over cells: ``loss.backward()`` and a read of ``model[0].weight.grad``
    in one, ``optimizer.step()`` in the next."""

    module: bool = False
    kind: str = ""  # the module's kind ("module:torch.nn.Linear")
    #: the variable holding the gradients PyTorch keeps in ``.grad`` (a tuple aligned
    #: with ``weights``); None: no gradient (a fresh module, or zeroed)
    grads: Optional[str] = None
    weights: str = ""
    table: Optional[str] = None  # dict parameter -> gradient, for ``.grad`` reads
    #: ``.grad`` holds what the port did not compute (a flagged backward, a training loop)
    unknown: bool = False
    model: Optional[str] = None  # an optimizer: the module whose parameters it holds
    #: when a top-level statement last changed the module (a step, ``eval()``...): a
    #: forward pass computed before it cannot be re-derived for a backward after it
    touched: int = -1
    #: its forward pass draws random numbers (dropout): re-deriving it gives other values
    random: bool = False


def _memory(ctx) -> dict:
    return ctx.session_memory(_MEMORY)


def _model_of(ctx, opt: str) -> Optional[str]:
    fact = _memory(ctx).get(opt)
    return fact.model if fact is not None else None


def _is_model(ctx, name: str) -> bool:
    """Is ``name`` a module with parameters built at the top level (not a loss)?"""
    fact = _memory(ctx).get(name)
    return fact is not None and fact.module and not fact.kind.endswith("Loss")


def _sequential(ctx, p, role, call, original, updated, noop: bool = False):
    """A step split over the top level of one or several cells (no complete step in the
    block, or one the block rewrite cannot take): each statement acts on what the cells
    so far left in the module's ``.grad``: ``backward()`` computes the gradients
    (``mindspore.grad`` of a function re-deriving the loss), ``zero_grad()`` forgets
    them, ``step()`` applies them (``optimizer(grads)``). None: not decided here (the
    caller flags it)."""
    mem = _memory(ctx)
    recv = call.func.value if isinstance(call.func, cst.Attribute) else None
    if role == "backward":
        return _module_backward(ctx, call, original, updated)
    if not isinstance(recv, cst.Name):
        return None
    model = recv.value if _is_model(ctx, recv.value) else _model_of(ctx, recv.value)
    fact = mem.get(model) if model is not None else None
    if fact is None or not fact.module:
        return None
    if role == "zero":
        held = fact.grads is not None or fact.unknown
        fact.grads, fact.table, fact.unknown = None, None, False
        if noop and not held:
            return None  # nothing to clear: TRN006 removes it
        return _drop(ctx, p, original, updated, "zero_grad", rule="TRN001",
                     why=f"the gradients of {model} are values MindSpore computes afresh at each backward")
    if role != "step" or call.args or recv.value == model:
        return None
    if fact.unknown:
        ctx.finding("TRN004", f"{recv.value}.step() applies the gradients a backward() the port did not rewrite "
                    f"left in {model}'s .grad (a training loop leaves its last step's there); compute them with "
                    "mindspore.value_and_grad and call the optimizer with them", node=call, api=".step()",
                    comment="step() of gradients not ported; see rule TRN004")
        return updated
    if fact.grads is None:
        return None  # PyTorch skips parameters without .grad: TRN006 removes it
    opt = recv.value
    new = _stmt(f"{opt}({fact.grads})\n").with_changes(leading_lines=updated.leading_lines,
                                                       trailing_whitespace=updated.trailing_whitespace)
    ctx.edit("TRN001", new, node=call, api="optimizer.step()",
             detail=f"{opt}.step() -> {opt}({fact.grads}): the gradients the backward() before computed")
    return new


def _module_backward(ctx, call, original, updated):
    """``loss.backward()`` of a module's loss at the top level, with no step in the block:
    ``mindspore.grad`` of a function re-deriving the loss (from this cell's statements and
    earlier cells') with respect to the module's parameters; a dict from each parameter
    to its gradient serves the ``.grad`` reads."""
    mem = _memory(ctx)
    loss = call.func.value
    if call.args:
        return None
    models = sorted(n for n in slice_reads(ctx, loss) if _is_model(ctx, n))
    if len(models) != 1:
        return None
    model = models[0]
    fact = mem[model]
    if fact.unknown or fact.grads is not None:
        return None  # PyTorch adds to gradients the port does not hold: flagged
    opts = [n for n, f in mem.items() if f.model == model]
    weights = f"{opts[-1]}.parameters" if opts else f"{model}.trainable_params()"
    made = rederive(ctx, loss, [model])
    if isinstance(made, str) or _changed_since(ctx, model, made[2]) or fact.random:
        return None
    fn, def_text, _ = made
    grads = ctx.fresh_name(f"_{model}_grads")
    later, index = ctx.blocks[0]
    # a dict from each parameter to its gradient, when this cell reads a .grad after
    # (a later cell builds it where it reads one)
    table = ctx.fresh_name("_grad_of") if any(_reads_grad(s) for s in later[index + 1:]) else None
    grad = _code(ctx.ref("mindspore.grad")).strip()
    stmts = cst.parse_module(f"{def_text}{grads} = {grad}({fn}, None, {weights})()\n"
                             + (f"{table} = dict(zip({weights}, {grads}))\n" if table else "")).body
    stmts = [stmts[0].with_changes(leading_lines=updated.leading_lines), *stmts[1:]]
    stmts[1] = stmts[1].with_changes(trailing_whitespace=updated.trailing_whitespace)
    fact.grads, fact.weights, fact.table = grads, weights, table
    _handled(ctx).add(id(original))
    ctx.edit("TRN001", stmts[1], node=call, api="loss.backward()",
             detail=f"{_code(loss).strip()}.backward() -> mindspore.grad of {fn}() over {weights}"
                    + (f"; {table}[param] is param.grad" if table else ""))
    return cst.FlattenSentinel(stmts)


def _param_root(node) -> Optional[str]:
    """``model`` for ``model[0].weight`` / ``model.fc.bias``."""
    while isinstance(node, (cst.Attribute, cst.Subscript)):
        node = node.value
    return node.value if isinstance(node, cst.Name) else None


_PARAMETER_ITERATORS = frozenset({"parameters", "named_parameters"})


def _iterated_parameters(stmt) -> dict:
    """Names a ``for`` (or comprehension) of the statement binds to the parameters of a
    module: ``p`` of ``for name, p in model.named_parameters()`` -> "model"."""
    out = {}
    for n in descendants(stmt):
        if type(n) not in (cst.For, cst.CompFor):
            continue
        it = n.iter
        if not (type(it) is cst.Call and not it.args and type(it.func) is cst.Attribute
                and it.func.attr.value in _PARAMETER_ITERATORS):
            continue
        root = _param_root(it.func.value) if not isinstance(it.func.value, cst.Name) else it.func.value.value
        target = n.target
        if it.func.attr.value == "named_parameters":
            elements = target.elements if type(target) is cst.Tuple else ()
            target = elements[1].value if len(elements) == 2 else None
        if type(target) is cst.Name and root is not None:
            out[target.value] = root
    return out


class _ModuleGrads(cst.CSTTransformer):
    """``model.fc.weight.grad`` -> ``_grad_of[model.fc.weight]`` (or ``None``); the
    ``.grad`` of a name a loop binds to the module's parameters (``p`` of ``for name, p
    in model.named_parameters()``) -> ``_grad_of.get(p)`` (None for a frozen one)."""

    def __init__(self, ctx, iterated: Optional[dict] = None):
        super().__init__()
        self.ctx, self.changed, self.unknown = ctx, [], []
        self.iterated = iterated or {}

    def leave_Attribute(self, original_node, updated_node):
        if updated_node.attr.value != "grad":
            return updated_node
        value = updated_node.value
        if type(value) is cst.Name and value.value in self.iterated:
            root = self.iterated[value.value]
            fact = _memory(self.ctx).get(root)
            if fact is None or not fact.module:
                return updated_node
            if fact.unknown:
                self.unknown.append(_code(value).strip())
                return updated_node
            self.changed.append(_code(value).strip())
            if fact.grads is None:
                return cst.Name("None")
            table = fact.table or f"dict(zip({fact.weights}, {fact.grads}))"
            return build_expression(f"{table}.get({value.value})")
        if not isinstance(value, (cst.Attribute, cst.Subscript)):
            return updated_node
        root = _param_root(updated_node.value)
        fact = _memory(self.ctx).get(root) if root else None
        if fact is None or not fact.module:
            return updated_node
        if fact.unknown:
            self.unknown.append(_code(updated_node.value).strip())
            return updated_node
        self.changed.append(_code(updated_node.value).strip())
        if fact.grads is None:
            return cst.Name("None")
        table = (cst.Name(fact.table) if fact.table else
                 build_expression(f"dict(zip({fact.weights}, {fact.grads}))"))
        return cst.Subscript(value=table, slice=[cst.SubscriptElement(cst.Index(updated_node.value))])


def _module_grad_reads(ctx, original, updated):
    """A read of a module parameter's ``.grad`` at the top level: the gradient the
    cells so far computed for it, or None where no backward() filled it."""
    if not _memory(ctx) or not _reads_grad_any(original):
        return updated
    reads = _ModuleGrads(ctx, _iterated_parameters(original))
    new = updated.visit(reads)
    for w in reads.unknown:
        ctx.finding("TRN004", f"{w}.grad holds what a backward() the port did not rewrite as a value left "
                    "(a training loop keeps its last step's gradients there); MindSpore parameters have no "
                    ".grad: compute the gradient with mindspore.grad where it is read",
                    node=original.body[0], api="Tensor.grad", comment=f"{w}.grad not ported")
    if not reads.changed:
        return updated
    ctx.edit("TRN001", None, node=original.body[0], api="Tensor.grad",
             detail="; ".join(f"{w}.grad -> the gradient the backward() before computed" for w in reads.changed))
    return new


_READ_ONLY = frozenset({"parameters", "named_parameters", "state_dict", "zero_grad", "children", "modules",
                        "named_modules", "named_children", "buffers", "named_buffers", "trainable_params"})


def _changed_roots(stmt) -> set:
    """The names whose object the statement changes: ``model.eval()``,
    ``optimizer.step()``, ``model.fc.weight.data = ...``; every name a compound statement
    reads. Calling a module (the forward pass) and printing change nothing."""
    if not isinstance(stmt, cst.SimpleStatementLine):
        return _fast_names(stmt)[1]
    out = set()
    for small in stmt.body:
        if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
            func = small.value.func
            if isinstance(func, cst.Attribute) and func.attr.value not in _READ_ONLY:
                out.add(_param_root(func))
        targets = ([t.target for t in small.targets] if isinstance(small, cst.Assign)
                   else [small.target] if isinstance(small, (cst.AugAssign, cst.AnnAssign)) else [])
        out.update(_param_root(t) for t in targets if isinstance(t, (cst.Attribute, cst.Subscript)))
    out.discard(None)
    return out


def _touches(stmt, watched: set) -> bool:
    """Does the statement change a watched module (or step an optimizer of it)?"""
    return bool(_changed_roots(stmt) & watched)


def _changed_since(ctx, model: str, body: list) -> bool:
    """Did a statement change ``model`` after the first of the forward statements
    ``body`` (of this cell or earlier ones) that a backward would re-derive?"""
    mem = _memory(ctx)
    watched = {model} | {n for n, f in mem.items() if f.model == model}
    stmts, index = ctx.blocks[0]
    position = {id(s): k for k, s in enumerate(stmts)}
    here = [position[id(s)] for s in body if id(s) in position]
    earlier = [q for q in (seq_of(ctx, s) for s in body if id(s) not in position) if q is not None]
    if earlier and mem[model].touched > min(earlier):
        return True
    first = min(here) if here and not earlier else 0
    inside = {id(s) for s in body}
    return any(id(stmts[k]) not in inside and _touches(stmts[k], watched) for k in range(first, index))


def _first_backward(ctx, body) -> float:
    """Index of the first statement of a block that calls ``.backward()`` (inf: none),
    computed once per block."""
    memo = ctx.scratch("training").setdefault("first_backward", {})
    key = id(body[0]) if body else 0
    if key not in memo:
        memo[key] = next((k for k, s in enumerate(body) if any(_is_backward_call(n) for n in descendants(s))),
                         float("inf"))
    return memo[key]


class _GradLoads(cst.CSTVisitor):
    """The ``x.grad`` reads of a statement (not ``x.grad = ...`` targets)."""

    def __init__(self):
        super().__init__()
        self.found: list = []
        self.nodes: list = []
        self.targets: set = set()

    def visit_AssignTarget(self, node):
        self.targets.add(id(node.target))

    def visit_Attribute(self, node):
        if node.attr.value == "grad" and id(node) not in self.targets:
            self.found.append(_code(node).strip())
            self.nodes.append(node)


def _unported_grad_reads(ctx, original, updated):
    """A ``.grad`` read after a backward() of its block (or an enclosing one) that no rule
    ported: the gradient was not computed as a value here, and a MindSpore tensor has no
    ``.grad``: flagged (the backward is flagged too)."""
    if ".grad" not in _code(original) or not isinstance(updated, cst.SimpleStatementLine):
        return
    if not any(_first_backward(ctx, body) < at for body, at in ctx.blocks):
        return
    for body, at in ctx.blocks:  # read from the table of gradients the rewrite computes
        if _first_backward(ctx, body) < at and (p := _analyse(ctx, body)).rewrite \
                and p.inspect is not None and at in p.grad_reads:
            return
    loads = _GradLoads()
    if not isinstance(original, cst.SimpleStatementLine):
        return  # the statements inside are checked themselves
    before, loads = _GradLoads(), _GradLoads()
    original.visit(before)  # the reads of the PyTorch code (not torch.autograd.grad)...
    updated.visit(loads)  # ...that no rule rewrote
    kept = {r for r, n in zip(before.found, before.nodes) if ctx.resolve(n) is None}
    found = [r for r in loads.found if r in kept]
    loop = next((h for h in reversed(ctx.enclosing_statements[:-1]) if isinstance(h, cst.For)), None)
    if loop is not None and isinstance(loop.target, cst.Name):
        var = loop.target.value
        ported = list_loop_ported(ctx, loop) or any(
            (p := _analyse(ctx, body)).rewrite and p.manual is not None and p.manual.loop is loop
            for body, _ in ctx.blocks[-3:-1])
        if ported:  # the loop's rewrite reads the gradient of each element
            found = [r for r in found if not (r == f"{var}.grad" or r.startswith(f"{var}.grad."))]
    node = original.body[0]
    for read in dict.fromkeys(found):
        ctx.finding("TRN004", f"{read} is read after a backward() whose gradients the port did not compute as "
                    "values (see the finding on that backward); a MindSpore tensor has no .grad",
                    node=node, api="Tensor.grad", comment=f"{read} not ported")


def _earlier_backward(ctx) -> dict:
    """{"backward": its code} while the last top-level ``backward()`` of an earlier cell (or
    of this one) was left as PyTorch: the gradients it would have stored do not exist on the
    MindSpore side."""
    return ctx.session_memory("unported_backward")


def _grad_reads_after_earlier_backward(ctx, original, updated) -> None:
    """makemore's backprop exercise: cell 10 calls ``loss.backward()`` (flagged: left as
    PyTorch), cells 11-19 compare their hand-derived gradients with ``t.grad``, directly or
    through ``cmp(...)`` defined in an earlier cell. With no backward earlier in this cell,
    each such read (or call of a function that reads ``.grad``) is flagged."""
    if ctx.functions or not isinstance(original, cst.SimpleStatementLine):
        return
    if any(_first_backward(ctx, body) < at for body, at in ctx.blocks):
        return  # this cell's own backward: _unported_grad_reads decides
    where = _earlier_backward(ctx).get("backward")
    code = _code(original)
    reads = []
    if ".grad" in code:
        before, loads = _GradLoads(), _GradLoads()
        original.visit(before)
        updated.visit(loads)
        kept = {r for r, n in zip(before.found, before.nodes) if ctx.resolve(n) is None}
        reads = [(f"{r} is read", r) for r in dict.fromkeys(loads.found) if r in kept]
    for n in descendants(original):
        if type(n) is cst.Call and type(n.func) is cst.Name:
            fdef = ctx.function_definition(n.func.value)
            if fdef is not None and ".grad" in _code(fdef) and ".backward(" not in _code(fdef):
                reads.append((f"{n.func.value}(...) reads .grad", f"{n.func.value}(...)"))
    for what, short in dict.fromkeys(reads):
        ctx.finding("TRN004", f"{what} after {where} of an earlier cell, which the port left as PyTorch (see the "
                    "finding there): its gradients were not computed on the MindSpore side, and a MindSpore "
                    "tensor has no .grad", node=original.body[0], api="Tensor.grad",
                    comment=f"{short} reads a .grad that was not computed")


def _remember(ctx, original, updated):
    """Record what a top-level statement did to the modules' gradients (``_Grads``)."""
    if ctx.torch_in_scope and ctx.blocks:
        _unported_grad_reads(ctx, original, updated)
        if _earlier_backward(ctx):
            _grad_reads_after_earlier_backward(ctx, original, updated)
    if ctx.depth != 0 or not ctx.torch_in_scope:
        return updated
    mem = _memory(ctx)
    code = _code(original)
    if ".backward(" in code and not isinstance(original, (cst.FunctionDef, cst.ClassDef)):
        if ".backward(" in _code(updated):
            call = next((n for n in descendants(original) if _is_backward_call(n)), None)
            _earlier_backward(ctx)["backward"] = _code(call).strip() if call is not None else "backward()"
        else:
            _earlier_backward(ctx).pop("backward", None)
    seq = next_seq()
    for root in _changed_roots(original):  # a module, or an optimizer stepping one
        fact = mem.get(root)
        model = mem.get(fact.model) if fact is not None and fact.model else fact
        if model is not None and model.module:
            model.touched = seq
    if (".backward(" in code and id(original) not in _handled(ctx)) or _trains(ctx, original):
        for fact in mem.values():  # a training loop (or a call of a function holding one)
            if fact.module:
                fact.unknown, fact.grads = True, None
    small = original.body[0] if isinstance(original, cst.SimpleStatementLine) and len(original.body) == 1 else None
    for name in _bound_read(ctx, original)[0]:
        value = small.value if isinstance(small, cst.Assign) and any(
            isinstance(t.target, cst.Name) and t.target.value == name for t in small.targets) else None
        kind = ctx.kind_of(value) if isinstance(value, cst.Call) else None
        if kind is not None and kind.base == "module" and (
                isinstance(value.func, cst.Name) or ctx.resolve(value.func) is not None):  # built here
            mem[name] = _Grads(module=True, kind=str(kind), touched=seq,
                               random="dropout" in _code(value).lower() or _random_class(ctx, kind.detail))
        elif kind == "optimizer" and value.args and (model := _parameters_of(value.args[0].value)) is not None:
            mem[name] = _Grads(model=model)
        elif isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and name in mem and \
                _param_root(value.func) == name:
            pass  # model = model.to(device): the same module
        else:
            mem.pop(name, None)
    return updated


def _random_class(ctx, detail: str) -> bool:
    """Is ``detail`` a class of this cell whose definition uses dropout (its forward
    pass then draws random numbers in training mode)?"""
    for stmt in ctx.blocks[0][0] if ctx.blocks else ():
        if isinstance(stmt, cst.ClassDef) and stmt.name.value == detail:
            return "dropout" in _code(stmt).lower()
    return False


def _handled(ctx) -> set:
    """ids of the top-level backward() statements whose gradients the port computed as
    values (their modules' ``_Grads`` say where)."""
    return ctx.scratch("training").setdefault("handled", set())


def _trains(ctx, stmt) -> bool:
    """Does the statement call a function of this cell or an earlier one whose body calls
    ``backward()``?"""
    for n in descendants(stmt):
        if type(n) is cst.Call and type(n.func) is cst.Name:
            fdef = ctx.function_definition(n.func.value)
            if fdef is not None and ".backward(" in _code(fdef):
                return True
    return False


statement_hook("TRN006", *STATEMENT_TYPES)(_remember)  # after the step lines (TRN004)


def _docstring(stmts) -> int:
    """1 when the block starts with a docstring, else 0."""
    first = stmts[0] if stmts else None
    return int(isinstance(first, cst.SimpleStatementLine) and len(first.body) == 1
               and isinstance(first.body[0], cst.Expr) and isinstance(first.body[0].value, cst.SimpleString))


def _drop(ctx, p, original, updated, name, rule="TRN006",
          why="no backward() in the cell, nothing to apply or clear"):
    """A no-op ``step()`` / ``zero_grad()`` (no backward in the cell, or the body of a
    function that only clears gradients): removed."""
    c = _call_of(original)
    what = f"{_callee(c)}.{name}()" if isinstance(c.func, cst.Attribute) else f"{_callee(c)}()"
    ctx.edit(rule, None, node=c, api=f".{name}()", detail=f"{what} removed: {why}")
    if ctx.depth == 0:
        ctx.carry_lines(_comments_of(updated, blank=True))
        return cst.RemovalSentinel.REMOVE
    stmts, index = ctx.blocks[-1]
    dropped = {i for i, r in p.index.items() if r in ("step", "zero")}
    if _docstring(stmts) or len(dropped) < len(stmts) or index != min(dropped):
        ctx.carry_lines(_comments_of(updated))
        return cst.RemovalSentinel.REMOVE
    return updated.with_changes(body=[cst.Pass()])  # the first statement of an emptied block


def _unindented(line):
    """A top-level line moved into a function: its blank lines carry no indentation."""
    return line.with_changes(leading_lines=[
        e.with_changes(indent=False) if e.comment is None else e for e in line.leading_lines])


def _top_step(ctx, p, stmts, i, original, updated):
    """A training step at the top level of a cell: the forward statements were kept
    (``_lines``) and removed; the last backward() becomes the forward function, the
    value_and_grad definition and its call, followed by the statements that sat between
    the forward pass and the backward; the step becomes ``optimizer(grads)``."""
    role = p.index[i]
    state = ctx.scratch("training").setdefault("top_step", {})
    last_back = max(k for k, r in p.index.items() if r == "backward")
    _forget(ctx, [original])
    if role == "zero" or (role == "backward" and i != last_back):
        ctx.carry_lines(_comments_of(updated, blank=True))
        return cst.RemovalSentinel.REMOVE
    if role == "backward":
        kept = _lines(ctx)
        missing = [k for k in [*p.forward, *p.between] if k not in kept]
        if missing:  # another rule replaced one of them: put them back, unported
            ctx.finding("TRN004", "a statement of the forward pass was rewritten by another rule; the "
                        "training step was not rewritten", node=p.backs[0], api=".backward()",
                        comment=_STEP_COMMENT)
            back = [kept[k] for k in sorted(kept)]
            return cst.FlattenSentinel([*back, updated]) if back else updated
        opt = _code(p.step.func.value).strip()
        lines = [_unindented(kept[k]) for k in p.forward]
        lead = list(lines[0].leading_lines) if lines else []
        if lines:  # the comments above the forward pass go above the function
            lines[0] = lines[0].with_changes(leading_lines=())
        # names the forward pass rebinds are its parameters (read before they are bound)
        varying = set().union(*(_bound_read(ctx, stmts[k])[0] for k in p.forward))
        step = _build(ctx, p, stmts, lines, varying, f"{opt}.parameters", f"{opt}(grads) steps")
        state.update(grads=step.grads, opt=opt)
        lookup = _grad_lookup(ctx, p, stmts, opt, step.grads)
        model = _model_of(ctx, opt)
        if model is not None and model in _memory(ctx):  # what .grad holds after the step
            _memory(ctx)[model] = _Grads(module=True, kind=_memory(ctx)[model].kind, grads=step.grads,
                                         weights=f"{opt}.parameters",
                                         table=state.get("grad_of") if lookup else None)
            _handled(ctx).add(id(original))
        _log(ctx, p, step)
        fn = step.fn.with_changes(leading_lines=[*lead, *updated.leading_lines])
        call = _timed_call(step.call, updated.trailing_whitespace, step.timing)
        return cst.FlattenSentinel([fn, step.gfn, call, *lookup, *[kept[k] for k in p.between]])
    if role == "clip":
        return _clip(ctx, original, updated, state["grads"]).with_changes(leading_lines=updated.leading_lines)
    new_step = _stmt(f"{state['opt']}({state['grads']})\n").with_changes(
        leading_lines=updated.leading_lines, trailing_whitespace=updated.trailing_whitespace)
    ctx.edit("TRN001", new_step, node=p.calls[i], api="optimizer.step()",
             detail=f"{state['opt']}.step() -> {state['opt']}({state['grads']})")
    return new_step


# ----------------------------------------------------------------------------- format specs


class _Strings:
    """f-strings and ``"...".format(...)`` calls of a statement line."""

    def __init__(self, line):
        self.fstrings, self.formats, self.builtins = [], [], []
        for node in descendants(line):
            t = type(node)
            if t is cst.FormattedString:
                self.fstrings.append(node)
            elif t is cst.Call:
                f = node.func
                if (type(f) is cst.Attribute and f.attr.value == "format"
                        and isinstance(f.value, (cst.SimpleString, cst.ConcatenatedString))):
                    self.formats.append(node)
                elif type(f) is cst.Name and f.value == "format" and len(node.args) == 2:
                    self.builtins.append(node)


class _Swap(cst.CSTTransformer):
    def __init__(self, swaps: dict):
        super().__init__()
        self.swaps = swaps

    def on_leave(self, original_node, updated_node):
        return self.swaps.get(id(original_node), updated_node)


def _item(expr):
    """``expr.item()``, parenthesised where needed."""
    if not isinstance(expr, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)) and not expr.lpar:
        expr = expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return cst.Call(func=cst.Attribute(value=expr, attr=cst.Name("item")))


def _fields(text: str) -> Optional[list]:
    """(positional index or keyword, format spec: "" for none, None with a ``!r``/``!s``
    conversion) of each replacement field of a str.format template; None when a field
    indexes or reaches into its argument or nests fields in its spec (``{:{w}.2f}``)."""
    out, auto = [], 0
    try:
        parsed = list(string.Formatter().parse(text))
    except ValueError:
        return None
    for _, name, spec, conversion in parsed:
        if name is None:
            continue
        if name == "":
            key, auto = auto, auto + 1
        elif name.isdigit():
            key = int(name)
        elif name.isidentifier():
            key = name
        else:
            return None
        if "{" in spec:
            return None
        out.append((key, spec if conversion is None else None))
    return out


def _shown_text(fstring, field) -> Optional[str]:
    """The text a self-documenting field ``{x=:.3f}`` prints before its value ("x="),
    escaped as f-string text; None for spellings with spaces around the ``=``."""
    spaces = (field.whitespace_before_expression, field.whitespace_after_expression,
              field.equal.whitespace_before, field.equal.whitespace_after)
    if any(_code(w) for w in spaces):
        return None
    text = _code(field.expression) + "="
    return text.replace("{", "{{").replace("}", "}}")


def _cell_uses_torch(ctx) -> bool:
    """Does the cell name anything of PyTorch (an import, ``torch.``, ``nn.``...)? A cell
    that does not (it prints a report's numbers) gets no conversion of values of unknown
    kind, only of values known to be tensors (computed once per cell)."""
    memo = ctx.scratch("training")
    if "uses_torch" not in memo:
        names = {n.value for stmt in (ctx.blocks[0][0] if ctx.blocks else ())
                 for n in descendants(stmt) if type(n) is cst.Name}
        memo["uses_torch"] = any(ctx.resolve(cst.Name(n)) for n in names)
    return memo["uses_torch"]


_FLOAT_SPECS = frozenset("eEfFgG%")
_INT_SPECS = frozenset("bcdoxX")


def _formatted(ctx, original, updated, specs: list):
    """``updated`` as the value each spec of ``specs`` formats (None: unchanged). A
    tensor is formatted through ``.item()`` where any spec is given; a value of unknown
    kind through ``float()`` or ``operator.index()`` where every spec asks for a float or
    an integer presentation (what Python formats numbers through)."""
    if not any(specs) or None in specs:
        return None
    verdict = _tensorish(ctx, original)
    if verdict:
        return _item(updated)
    if verdict is False or not all(specs) or not _cell_uses_torch(ctx):
        return None
    types = {spec[-1] for spec in specs}
    if types <= _FLOAT_SPECS:
        return cst.Call(func=cst.Name("float"), args=[cst.Arg(updated)])
    if types <= _INT_SPECS:
        module = ctx.require_import("operator")
        return cst.Call(func=cst.Attribute(value=cst.Name(module), attr=cst.Name("index")),
                        args=[cst.Arg(updated)])
    return None


#: tensor methods whose result is no tensor
_NOT_TENSOR_METHODS = frozenset({
    "item", "tolist", "numpy", "size", "dim", "ndimension", "numel", "nelement", "element_size",
    "data_ptr", "is_contiguous", "type", "get_device", "equal", "allclose", "is_floating_point",
    "is_complex", "stride", "storage_offset", "__len__", "asnumpy",
})
_NUMBER_BUILTINS = frozenset({"float", "int", "len", "round", "bool", "str", "repr", "format"})


def _bindings(ctx) -> tuple[dict, dict]:
    """(id(original statement) -> its position in the cell, name -> [(position, augmented,
    value)]) for the assignments of the cell, in source order (computed once)."""
    memo = ctx.scratch("training")
    if "bindings" not in memo:
        positions, binds = {}, {}
        stack = list(reversed(ctx.blocks[0][0])) if ctx.blocks else []
        while stack:
            n = stack.pop()
            if isinstance(n, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
                positions[id(n)] = len(positions)
            if isinstance(n, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
                for small in n.body:
                    if isinstance(small, cst.Assign):
                        for t in small.targets:
                            for name, value in _unpacked(t.target, small.value):
                                binds.setdefault(name, []).append((len(positions), False, value))
                    elif isinstance(small, cst.AugAssign) and isinstance(small.target, cst.Name):
                        binds.setdefault(small.target.value, []).append((len(positions), True, small.value))
                continue
            stack.extend(reversed([c for c in child_nodes(n) if isinstance(c, _BLOCKS)]))
        memo["bindings"] = (positions, binds)
    return memo["bindings"]


def _unpacked(target, value) -> list:
    """(name, value or None when unknown) for each name an assignment target binds:
    ``loss, n = loss.item(), len(X)`` binds ``loss`` to ``loss.item()``."""
    if isinstance(target, cst.Name):
        return [(target.value, value)]
    if isinstance(target, (cst.Tuple, cst.List)):
        elements = [e.value for e in target.elements]
        values = [e.value for e in value.elements] if isinstance(value, (cst.Tuple, cst.List)) and not any(
            isinstance(e, cst.StarredElement) for e in (*target.elements, *value.elements)) else None
        if values is not None and len(values) == len(elements):
            return [pair for e, v in zip(elements, values) for pair in _unpacked(e, v)]
        return [pair for e in elements for pair in _unpacked(e, None)]
    return []


_BLOCKS = (cst.SimpleStatementLine, cst.BaseCompoundStatement, cst.IndentedBlock, cst.SimpleStatementSuite,
           cst.Else, cst.ExceptHandler, cst.ExceptStarHandler, cst.Finally, cst.MatchCase)


def _tensorish(ctx, node, depth: int = 0) -> Optional[bool]:
    """Is an (original) expression a tensor? True, False, or None: unknown. The engine's
    kinds first, then what the expression is built from (a comparison of tensors, a
    tensor method, a loss function's call, the value last assigned to a name)."""
    if depth > 6:
        return None
    kind = ctx.kind_of(node)
    if kind == TENSOR:
        return True
    if kind is not None and not isinstance(node, cst.Name):
        return False
    if isinstance(node, (cst.Integer, cst.Float, cst.SimpleString, cst.FormattedString,
                         cst.ConcatenatedString, cst.List, cst.Dict, cst.Tuple)):
        return False
    if isinstance(node, cst.Call):
        func = node.func
        if isinstance(func, cst.Name) and func.value in _NUMBER_BUILTINS:
            return False
        if isinstance(func, cst.Attribute):
            if func.attr.value in _NOT_TENSOR_METHODS:
                return False
            if _tensorish(ctx, func.value, depth + 1):
                return True
        fk = ctx.kind_of(func)
        if fk is not None and (fk.base == "module" or "loss" in str(fk)):
            return True
        return None
    if isinstance(node, cst.Comparison):
        sides = [node.left, *(c.comparator for c in node.comparisons)]
        return True if any(_tensorish(ctx, x, depth + 1) for x in sides) else None
    if isinstance(node, cst.BinaryOperation):
        sides = [_tensorish(ctx, node.left, depth + 1), _tensorish(ctx, node.right, depth + 1)]
        return True if True in sides else (False if sides == [False, False] else None)
    if isinstance(node, cst.UnaryOperation):
        return _tensorish(ctx, node.expression, depth + 1)
    if isinstance(node, cst.Subscript):
        return True if _tensorish(ctx, node.value, depth + 1) else None
    if isinstance(node, cst.Name):
        if kind is not None:
            return False
        positions, binds = _bindings(ctx)
        here = positions.get(id(ctx.statement), len(positions))
        found = [b for b in binds.get(node.value, ()) if b[0] <= here]
        if not found:
            return None
        last = max(k for k, b in enumerate(found) if not b[1]) if any(not b[1] for b in found) else -1
        values = [b[2] for b in found[max(last, 0):]]
        verdicts = [None if v is None else _tensorish(ctx, v, depth + 1) for v in values]
        if True in verdicts:
            return True
        return False if verdicts and all(v is False for v in verdicts) else None
    return None


def _format_line(ctx, original, updated):
    """TRN005: values given a number format spec are formatted as Python numbers."""
    found = _Strings(original)
    if not (found.fstrings or found.formats or found.builtins):
        return updated
    swaps, details = {}, []
    for fs in found.fstrings:
        new_fs = ctx.updated_of(fs)
        if not isinstance(new_fs, cst.FormattedString) or len(new_fs.parts) != len(fs.parts):
            continue
        parts, changed = [], False
        for o, u in zip(fs.parts, new_fs.parts):
            new = None
            if (isinstance(o, cst.FormattedStringExpression) and o.format_spec and o.conversion is None
                    and all(isinstance(p, cst.FormattedStringText) for p in o.format_spec)):
                spec = "".join(p.value for p in o.format_spec)
                new = _formatted(ctx, o.expression, u.expression, [spec])
            if new is None:
                parts.append(u)
                continue
            if o.equal is not None:
                # ``{x=:.3f}`` prints its own text, "x=": written out, so that the
                # converted value does not show in it
                shown = _shown_text(fs, o)
                if shown is None:
                    parts.append(u)
                    continue
                parts.append(cst.FormattedStringText(shown))
                u = u.with_changes(equal=None)
            parts.append(u.with_changes(expression=new))
            details.append(f"{_code(o.expression).strip()} -> {_code(new).strip()}")
            changed = True
        if changed:
            swaps[id(new_fs)] = new_fs.with_changes(parts=parts)
    for call in found.formats:
        template = _literal(call.func.value)
        fields = _fields(template) if isinstance(template, str) else None
        new_call = ctx.updated_of(call)
        if not fields or not isinstance(new_call, cst.Call) or len(new_call.args) != len(call.args):
            continue
        if any(a.star for a in call.args):
            continue
        uses: dict = {}
        for key, spec in fields:
            uses.setdefault(key, []).append(spec)
        args, changed, pos = list(new_call.args), False, 0
        for k, a in enumerate(call.args):
            key = a.keyword.value if a.keyword is not None else pos
            if a.keyword is None:
                pos += 1
            new = _formatted(ctx, a.value, args[k].value, uses.get(key, []))
            if new is not None:
                args[k] = args[k].with_changes(value=new)
                details.append(f"{_code(a.value).strip()} -> {_code(new).strip()}")
                changed = True
        if changed:
            swaps[id(new_call)] = new_call.with_changes(args=args)
    for call in found.builtins:  # format(x, ".3f")
        value, spec = call.args
        text = _literal(spec.value)
        new_call = ctx.updated_of(call)
        if (not isinstance(text, str) or "{" in text or value.star or value.keyword is not None
                or not isinstance(new_call, cst.Call) or len(new_call.args) != 2):
            continue
        new = _formatted(ctx, value.value, new_call.args[0].value, [text])
        if new is not None:
            swaps[id(new_call)] = new_call.with_changes(args=[new_call.args[0].with_changes(value=new),
                                                              new_call.args[1]])
            details.append(f"{_code(value.value).strip()} -> {_code(new).strip()}")
    if not swaps:
        return updated
    new = updated.visit(_Swap(swaps))
    ctx.edit("TRN005", None, node=original.body[0], api="Tensor.__format__",
             detail=f"formatted as Python numbers: {', '.join(dict.fromkeys(details))}")
    return new


@statement_hook("TRN005", cst.SimpleStatementLine)
def _format_specs(ctx, original, updated):
    if not ctx.torch_in_scope or not isinstance(updated, cst.SimpleStatementLine):
        return updated
    return _format_line(ctx, original, updated)
