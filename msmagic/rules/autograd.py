"""Scalar autograd: ``z.backward()`` / ``torch.autograd.backward`` / ``torch.autograd.grad``
on tensors created with ``requires_grad=True`` -> ``mindspore.grad`` (or ``mindspore.vjp``)
of a function that re-derives ``z`` from those tensors; ``x.grad`` reads -> the gradient.

PyTorch records the graph while the forward statements run; MindSpore differentiates a
function. The port stays statement-aligned: the forward statements are left where they
are, and the backward statement becomes a ``def`` rebuilt from the (already ported)
statements that computed ``z`` (a backward slice over the block) plus one assignment of
the gradients. Training loops over a model's parameters (``loss.backward()`` with no
``requires_grad`` leaf in sight) are left to the training-step rules."""

from __future__ import annotations

import ast
import bisect
import heapq
import re
import textwrap
from dataclasses import dataclass, field
from typing import Optional

import libcst as cst

from msmagic.engine.build import STATEMENT_TYPES
from msmagic.engine.build import code as _code
from msmagic.engine.names import MARKER
from msmagic.engine.spec import api, handled_by_statement_rules, statement_hook
from msmagic.rules.registry import register

# ported (or flagged) by the statement-level hooks below, not by the method table
handled_by_statement_rules("backward", "register_hook", "retain_grad")

GROUP = "Autograd"
SEED = "seeds/002 Gradient Derivation"
REF = "r2.4.10/api_mapping/pytorch_api_mapping.md (torch.autograd)"

register(
    "GRD001",
    "z.backward() becomes mindspore.grad of a function re-deriving z",
    group=GROUP,
    why="""
        PyTorch records every operation on tensors created with ``requires_grad=True``
        while the forward code runs, and ``z.backward()`` walks that record and stores
        ``dz/dx`` in ``x.grad``. MindSpore records nothing during a forward pass: it
        differentiates a function of its inputs (``mindspore.grad(fn, grad_position)``).
        So the statements that computed ``z`` are gathered into a function of the
        ``requires_grad`` tensors (their values at the backward call), and the backward
        statement becomes one call of ``mindspore.grad`` that assigns one gradient
        variable per tensor; ``requires_grad=True`` is dropped at creation. The forward
        statements run once more inside the function, so keep them free of side effects
        and random draws.
    """,
    seed=f"{SEED} › torch.autograd.backward",
    reference=REF,
    example="""
        import torch
        x = torch.tensor(1.0, requires_grad=True)
        y = torch.tensor(2.0, requires_grad=True)
        z = x**2 + y
        z.backward()
        dx = x.grad
        dy = y.grad
    """,
)

register(
    "GRD002",
    "torch.autograd.grad becomes mindspore.grad over the inputs",
    group=GROUP,
    why="""
        ``torch.autograd.grad(z, inputs)`` returns the gradients of ``z`` with respect to
        ``inputs`` as a tuple instead of storing them in ``.grad``. The port builds a
        function of exactly those inputs from the statements that computed ``z`` (an input
        may be an intermediate tensor: the slice stops there) and calls ``mindspore.grad``
        with one ``grad_position`` per input. The result is kept a tuple, also for a single
        input, so ``g, = ...`` and ``out[0]`` keep working.
    """,
    seed=f"{SEED} › torch.autograd.grad",
    reference=REF,
    example="""
        import torch
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        y = torch.tensor(3.0, requires_grad=True)
        z = (torch.exp(x) * y).sum()
        gx, gy = torch.autograd.grad(z, (x, y))
    """,
)

register(
    "GRD003",
    "retain_graph= and create_graph= are dropped",
    group=GROUP,
    why="""
        PyTorch frees the recorded graph after a backward pass unless
        ``retain_graph=True``, and records the backward pass itself (so it can be
        differentiated again) only with ``create_graph=True``. MindSpore keeps no recorded
        graph: every ``mindspore.grad`` call re-runs the function, and a gradient
        function can itself be differentiated by nesting ``mindspore.grad``. Both
        arguments are therefore removed; a second derivative is ported by re-deriving
        the first gradient inside the next function.
    """,
    seed=f"{SEED} › retain_graph, High-order Derivatives",
    reference=REF,
    example="""
        import torch
        x = torch.tensor(2.0, requires_grad=True)
        y = x**3
        g, = torch.autograd.grad(y, x, create_graph=True)
        h, = torch.autograd.grad(g, x)
    """,
)

register(
    "GRD004",
    "backward(gradient=v) becomes mindspore.vjp",
    group=GROUP,
    why="""
        For a non-scalar ``z``, ``z.backward(v)`` (and ``grad_outputs=`` of
        ``torch.autograd.grad``) computes the vector-Jacobian product ``v^T dz/dx``.
        ``mindspore.grad`` has no such argument (it uses ones for ``v``), so the port
        calls ``mindspore.vjp(fn, *inputs)``, which returns the output and a function
        mapping ``v`` to the gradients of every input.
    """,
    seed=f"{SEED} › torch.autograd.backward (grad_tensor)",
    reference=REF,
    example="""
        import torch
        x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x * x
        v = torch.tensor([1.0, 0.1, 0.01])
        y.backward(v)
        gx = x.grad
    """,
)

register(
    "GRD005",
    "x.grad becomes the gradient variable; zeroing resets it",
    group=GROUP,
    why="""
        A MindSpore tensor has no ``.grad``: gradients are values returned by
        ``mindspore.grad``. After a ported backward, reads of ``x.grad`` become the
        variable holding ``x``'s gradient, ``x.grad = None`` rebinds it, and
        ``x.grad.zero_()`` becomes ``_x_grad = ops.zeros_like(_x_grad)`` (in-place
        ``zero_`` has no CPU kernel on MindSpore 2.10). PyTorch adds each backward's
        gradient to ``x.grad``; the port assigns it, so a second backward without zeroing
        in between is flagged instead of ported.
    """,
    seed=f"{SEED} › torch.autograd.backward",
    reference=REF,
    installed_note="""
        ``Tensor.zero_()`` fails on the 2.10 CPU backend (InplaceZero kernel not
        registered), hence ``ops.zeros_like``.
    """,
    example="""
        import torch
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        y = (x ** 3).sum()
        y.backward()
        first = x.grad * 1.0
        x.grad = None
        z = (x * 4.0).sum()
        z.backward()
        second = x.grad
    """,
)

register(
    "GRD006",
    "Backward pass that cannot be re-derived as a function",
    group=GROUP,
    finding_only=True,
    why="""
        The port re-derives ``z`` from the statements of the same block. It refuses (and
        leaves the PyTorch call, flagged) when that would compute something else: a
        ``requires_grad`` tensor reassigned between its creation and the backward, a name
        the forward statements read that is reassigned before the backward, gradients
        that PyTorch would accumulate (a second backward, or a backward in a loop over a
        tensor created outside it, without ``x.grad = None``/``x.grad.zero_()``), or
        arguments such as ``inputs=``/``allow_unused=`` with no counterpart. Rewrite the
        computation as a function and call ``mindspore.grad`` on it.
    """,
    seed=f"{SEED} › torch.autograd.backward",
    reference=REF,
    example="""
        import torch
        x = torch.tensor(1.0, requires_grad=True)
        z = x * 3
        z.backward(retain_graph=True)
        z.backward()
    """,
)

_FIND = "GRD006"


# ----------------------------------------------------------------------------- analysis


def _memo(ctx, kind: str) -> dict:
    """This port's cache for one kind of per-statement fact (keyed by id of the original
    statement, which lives as long as the port)."""
    return ctx.scratch("autograd").setdefault(kind, {})


def _stmt_code(ctx, stmt) -> str:
    memo = _memo(ctx, "code")
    code = memo.get(id(stmt))
    if code is None:
        code = memo[id(stmt)] = _code(stmt)
    return code


def _names_of(ctx, stmt) -> tuple[set, set]:
    """``_names`` of an original statement, computed once per port."""
    memo = _memo(ctx, "names")
    hit = memo.get(id(stmt))
    if hit is None:
        hit = memo[id(stmt)] = _names(stmt, _stmt_code(ctx, stmt))
    return hit


def _names(stmt, code: Optional[str] = None) -> tuple[set, set]:
    """(names bound, names read) by an original statement."""
    try:
        tree = ast.parse(textwrap.dedent(code if code is not None else _code(stmt)))
    except SyntaxError:
        return set(), set()
    bound, read = set(), set()
    todo = [tree]
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Name):
            (read if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, ast.alias):
            bound.add((node.asname or node.name).split(".")[0])
        if isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)):
            bound.add(node.name)  # a definition: its body runs later, in its own scope
        elif not isinstance(node, ast.Lambda):
            todo.extend(ast.iter_child_nodes(node))
    return bound, read


def _leaf_name(ctx, stmt) -> Optional[str]:
    """``x = torch.<factory>(..., requires_grad=True)`` -> "x"."""
    if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1):
        return None
    small = stmt.body[0]
    if not (isinstance(small, cst.Assign) and len(small.targets) == 1
            and isinstance(small.targets[0].target, cst.Name) and isinstance(small.value, cst.Call)):
        return None
    call = small.value
    qual = ctx.resolve(call.func)
    if not qual or not qual.startswith("torch."):
        return None
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == "requires_grad":
            if isinstance(arg.value, cst.Name) and arg.value.value == "True":
                return small.targets[0].target.value
    return None


def _is_import(stmt) -> bool:
    return isinstance(stmt, cst.SimpleStatementLine) and all(
        isinstance(s, (cst.Import, cst.ImportFrom)) for s in stmt.body)


def _dependent(chosen: list, params: set) -> list:
    """Keep the statements whose value depends on the parameters (the others compute
    constants, read from the enclosing scope), and those rebinding a name a kept
    statement binds (the function would otherwise read it before assignment)."""
    dep, keep = set(params), []
    for item in chosen:
        if item[3] & dep:
            keep.append(item)
            dep |= item[2]
    kept_bound = set().union(*(b for _, _, b, _ in keep)) if keep else set()
    return [c for c in chosen if c in keep or c[2] & kept_bound]


@dataclass
class Plan:
    params: list = field(default_factory=list)  # function parameters, in order
    body: list = field(default_factory=list)  # original statements re-derived, in order
    problem: str = ""


class _BlockIndex:
    """Per block, computed once per port: which statements bind each name, which create
    a ``requires_grad`` leaf of each name, which reset each name's ``.grad``. Slicing a
    backward then looks up the statements it needs instead of walking every earlier
    sibling, so a cell with many backward calls ports in linear time."""

    def __init__(self, ctx, body):
        self.binders: dict = {}
        self.leaves: dict = {}
        self.zeroed: dict = {}
        for i, stmt in enumerate(body):
            bound, _ = _names_of(ctx, stmt)
            for n in bound:
                self.binders.setdefault(n, []).append(i)
            leaf = _leaf_name(ctx, stmt)
            if leaf is not None:
                self.leaves.setdefault(leaf, []).append(i)
            for a, b in _ZEROED.findall(_stmt_code(ctx, stmt)):
                self.zeroed.setdefault(a or b, []).append(i)

    def last_binder(self, name: str, limit: int) -> int:
        """Index of the last statement before ``limit`` binding ``name`` (-1: none)."""
        found = self.binders.get(name)
        if not found:
            return -1
        return found[bisect.bisect_left(found, limit) - 1] if found[0] < limit else -1

    def first_binder(self, name: str, after: int, limit: int, skip) -> int:
        """Index of the first statement in (after, limit) binding ``name`` and not in
        ``skip`` (-1: none)."""
        found = self.binders.get(name, ())
        for j in found[bisect.bisect_right(found, after):]:
            if j >= limit:
                break
            if j not in skip:
                return j
        return -1


_GRAD_OF = re.compile(r"(?<![\w.])([A-Za-z_]\w*)\.grad\b")
_ZEROED = re.compile(r"(?<![\w.])([A-Za-z_]\w*)\.grad(?:\.data)?\.zero_\(\)|"
                     r"(?<![\w.])([A-Za-z_]\w*)\.grad\s*=\s*None")


def _zeroes(ctx, stmt, name: str) -> bool:
    """Does the statement reset ``name.grad`` (``= None`` / ``.zero_()``)?"""
    return any(name in (a, b) for a, b in _ZEROED.findall(_stmt_code(ctx, stmt)))


def _index(ctx, body) -> _BlockIndex:
    memo = _memo(ctx, "index")
    found = memo.get(id(body))
    if found is None:
        found = memo[id(body)] = _BlockIndex(ctx, body)
    return found


def _plan(ctx, target: str, inputs: Optional[list] = None) -> Plan:
    """Backward slice of ``target`` over the current block. ``inputs``: the variables to
    differentiate (autograd.grad); None: the requires_grad tensors reached (backward)."""
    blocks = ctx.blocks
    if not blocks:
        return Plan()
    depth = len(blocks) - 1
    body, index = blocks[-1]
    idx = _index(ctx, body)
    fixed = set(inputs or ())
    needed = {target} - fixed
    chosen: list = []  # (index, statement, bound, read), latest first
    leaves: dict = {}  # name -> (depth, index)
    # the statements binding a needed name, latest first: what a walk back over every
    # earlier sibling would stop at, found through the block's index
    heap: list = []

    def push(names, limit):
        for n in names:
            j = idx.last_binder(n, limit)
            if j >= 0:
                heapq.heappush(heap, -j)

    push(needed, index)
    seen: set = set()
    while heap:
        i = -heapq.heappop(heap)
        if i in seen:
            continue
        seen.add(i)
        stmt = body[i]
        bound, read = _names_of(ctx, stmt)
        hit = bound & needed
        if not hit:
            continue
        if _is_import(stmt):
            push(hit, i)
            continue
        leaf = _leaf_name(ctx, stmt)
        if leaf in hit:  # an independent variable: a parameter, or read as it is
            if inputs is None:
                leaves[leaf] = (depth, i)
            needed.discard(leaf)
            push(hit - {leaf}, i)
            continue
        chosen.append((i, stmt, bound, read))
        kept = needed - bound
        needed = kept | (read - fixed)
        push(needed - kept, i)
    chosen.reverse()
    if inputs is None:  # requires_grad tensors created in enclosing blocks (before a loop)
        for d in range(depth - 1, -1, -1):
            outer, at = blocks[d]
            oidx = _index(ctx, outer)
            heap = [-j for j in (oidx.last_binder(n, at) for n in needed) if j >= 0]
            heapq.heapify(heap)
            seen = set()
            while heap:
                i = -heapq.heappop(heap)
                if i in seen:
                    continue
                seen.add(i)
                bound, _ = _names_of(ctx, outer[i])
                if not bound & needed:
                    continue
                leaf = _leaf_name(ctx, outer[i])
                if leaf in needed:
                    leaves[leaf] = (d, i)
                needed -= bound
    params = list(inputs) if inputs is not None else sorted(leaves, key=leaves.get)
    chosen = _dependent(chosen, set(params))
    plan = Plan(params, [s for _, s, _, _ in chosen])
    if not params:
        return plan
    bound_in = set().union(*(b for _, _, b, _ in chosen)) if chosen else set()
    if bound_in & set(params) and inputs is None:
        plan.problem = (f"{', '.join(sorted(bound_in & set(params)))} is reassigned after being "
                        "created with requires_grad=True; its gradient would be taken of the new value")
        return plan
    free = set().union(*(r for _, _, _, r in chosen)) - bound_in - set(params) if chosen else set()
    first = chosen[0][0] if chosen else index
    used = {i for i, _, _, _ in chosen}
    # the first statement rebinding a free name after the slice starts, or a leaf after
    # its creation: re-deriving the target would read the new value
    late = [idx.first_binder(n, first, index, used) for n in free]
    late += [idx.first_binder(n, leaves[n][1], index, used) for n in params
             if n in leaves and leaves[n][0] == depth]
    late = [i for i in late if i >= 0]
    if late:
        i = min(late)
        bound, _ = _names_of(ctx, body[i])
        late_leaf = {n for n in bound & set(params) if n in leaves and leaves[n][1] < i
                     and leaves[n][0] == depth}
        stale = (bound & free) if i > first else set()
        plan.problem = (f"{', '.join(sorted(stale | late_leaf))} is reassigned between the forward "
                        f"computation of {target} and the backward; re-deriving {target} would use "
                        "the new value")
        return plan
    if any(re.search(r"(?<!autograd)\.grad\b(?!\s*\()", _code(s)) for s in plan.body):
        plan.problem = f"{target} is computed from a .grad value; differentiate through it by hand"
    return plan


# ----------------------------------------------------------------------------- state


@dataclass
class _State:
    ported: dict = field(default_factory=dict)  # id(original statement) -> output statements
    active: dict = field(default_factory=dict)  # leaf name -> [grad variable, fresh?]


def _state(ctx) -> _State:
    scratch = ctx.scratch("autograd")
    st = scratch.get("state")
    if st is None:
        st = scratch["state"] = _State()
    return st


def _body_text(ctx, plan: Plan) -> Optional[str]:
    st = _state(ctx)
    parts = []
    for stmt in plan.body:
        out = st.ported.get(id(stmt))
        if out is None:
            return None
        text = cst.Module(body=out).code
        text = "\n".join(re.sub(rf"\s*{MARKER}.*$", "", line) for line in text.splitlines())
        parts.append(textwrap.dedent(text).strip("\n"))
    return "\n".join(parts)


def _def_text(ctx, fn: str, plan: Plan, target: str) -> Optional[str]:
    body = _body_text(ctx, plan)
    if body is None:
        return None
    lines = (body + "\n" if body else "") + f"return {target}"
    return f"def {fn}({', '.join(plan.params)}):\n" + textwrap.indent(lines, "    ") + "\n"


def _ms(ctx, target: str) -> str:
    return _code(ctx.ref(target))


def _grad_call(ctx, fn: str, params: list, vector: Optional[str]) -> str:
    """Expression computing the gradients: a tuple when ``vector`` or several params."""
    args = ", ".join(params)
    if vector is not None:
        return f"{_ms(ctx, 'mindspore.vjp')}({fn}, {args})[1]({vector})"
    pos = "0" if len(params) == 1 else f"({', '.join(str(i) for i in range(len(params)))})"
    return f"{_ms(ctx, 'mindspore.grad')}({fn}, grad_position={pos})({args})"


def _flag(ctx, node, api_name: str, reason: str, comment: str):
    ctx.finding(_FIND, reason, node=node, api=api_name, comment=comment)


# ----------------------------------------------------------------------------- backward


_BACKWARD_SIG = ("gradient", "retain_graph", "create_graph", "inputs")


def _bind(args, sig) -> Optional[dict]:
    out = {}
    for i, a in enumerate(args):
        if a.star:
            return None
        name = a.keyword.value if a.keyword is not None else (sig[i] if i < len(sig) else None)
        if name is None:
            return None
        out[name] = a
    return out


def _backward_target(ctx, stmt) -> Optional[tuple]:
    """(z name, original args, api label) for ``z.backward(...)`` / torch.autograd.backward."""
    if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1
            and isinstance(stmt.body[0], cst.Expr) and isinstance(stmt.body[0].value, cst.Call)):
        return None
    call = stmt.body[0].value
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value == "backward" and isinstance(func.value, cst.Name):
        if ctx.resolve(func.value) is None:
            return func.value.value, list(call.args), "Tensor.backward"
    if ctx.resolve(func) == "torch.autograd.backward" and call.args and isinstance(call.args[0].value, cst.Name):
        args = list(call.args)
        first = args[0]
        if first.keyword is not None and first.keyword.value != "tensors":
            return None
        rest = [a.with_changes(keyword=cst.Name("gradient")) if a.keyword is not None
                and a.keyword.value == "grad_tensors" else a for a in args[1:]]
        return first.value.value, rest, "torch.autograd.backward"
    return None


def _port_backward(ctx, original, updated):
    found = _backward_target(ctx, original)
    if found is None:
        return None
    target, args, api_name = found
    bound = _bind(args, _BACKWARD_SIG)
    plan = _plan(ctx, target)
    if not plan.params:
        return None  # no requires_grad tensor in sight: a training step (other rules)
    comment = f"{target}.backward() not ported"
    if bound is None or "inputs" in bound:
        _flag(ctx, original, api_name, "inputs= / *args of backward are not ported; call mindspore.grad "
              "with grad_position for the inputs you need", comment)
        return updated
    if plan.problem:
        _flag(ctx, original, api_name, plan.problem, comment)
        return updated
    st = _state(ctx)
    loops = any(isinstance(h, (cst.For, cst.While)) for h in ctx.enclosing_statements[:-1])
    body, index = ctx.blocks[-1]
    idx = _index(ctx, body)
    for p in plan.params:
        act = st.active.get(p)
        if act is not None and not act[1]:
            _flag(ctx, original, api_name, f"{p}.grad already holds a gradient here and PyTorch adds this "
                  f"backward's gradient to it; set {p}.grad = None before, or sum the gradients by hand",
                  f"{p}.grad accumulates; not ported")
            return updated
        created_here = any(j < index for j in idx.leaves.get(p, ()))
        if loops and not created_here and not any(j != index for j in idx.zeroed.get(p, ())):
            _flag(ctx, original, api_name, f"inside this loop {p}.grad accumulates over iterations in "
                  f"PyTorch; add {p}.grad = None (or {p}.grad.zero_()) in the loop body, or sum by hand",
                  f"{p}.grad accumulates over iterations; not ported")
            return updated
    fn = ctx.fresh_name(f"_{target}_fn")
    def_text = _def_text(ctx, fn, plan, target)
    if def_text is None:
        _flag(ctx, original, api_name, f"a statement computing {target} was rewritten by another rule; "
              "write the function for mindspore.grad by hand", comment)
        return updated
    vector = None
    if "gradient" in bound:
        vector = _code(_updated_arg(ctx, bound["gradient"]).value)
    for key in ("retain_graph", "create_graph"):
        if key in bound:
            ctx.edit("GRD003", None, node=original, api=api_name,
                     detail=f"{key}={_code(bound[key].value)} dropped")
    grads = []
    for p in plan.params:
        act = st.active.get(p)
        grads.append(act[0] if act else ctx.fresh_name(f"_{p}_grad"))
        st.active[p] = [grads[-1], False]
    lhs = ", ".join(grads) if len(grads) > 1 else (f"({grads[0]},)" if vector else grads[0])
    # one parse for both generated statements (libcst's per-call cost dominates here)
    func, assign = cst.parse_module(
        f"{def_text}{lhs} = {_grad_call(ctx, fn, plan.params, vector)}\n").body
    assign = assign.with_changes(trailing_whitespace=updated.trailing_whitespace)
    func = func.with_changes(leading_lines=updated.leading_lines)
    rule = "GRD004" if vector else "GRD001"
    how = "mindspore.vjp" if vector else "mindspore.grad"
    ctx.edit(rule, assign.body[0], node=original, api=api_name,
             detail=f"{target}.backward() -> {how} of {fn}({', '.join(plan.params)}) "
                    f"re-deriving {target} from {len(plan.body)} statement(s); -> {', '.join(grads)}")
    return cst.FlattenSentinel([func, assign])


def _updated_arg(ctx, arg):
    return arg.with_changes(value=ctx.updated_of(arg.value))


# ----------------------------------------------------------------------------- autograd.grad


_GRAD_SIG = ("outputs", "inputs", "grad_outputs", "retain_graph", "create_graph", "only_inputs",
             "allow_unused", "is_grads_batched", "materialize_grads")


def _single(node):
    """``z`` / ``[z]`` / ``(z,)`` -> z; None otherwise."""
    if isinstance(node, (cst.List, cst.Tuple)):
        return node.elements[0].value if len(node.elements) == 1 else None
    return node


def _autograd_grad(site):
    bound = _bind(site.original.args, _GRAD_SIG)
    comment = "torch.autograd.grad not ported"
    if bound is None or "outputs" not in bound or "inputs" not in bound:
        site.finding(_FIND, "outputs and inputs must be passed by name or position", comment=comment)
        return None
    out = _single(bound["outputs"].value)
    ins = bound["inputs"].value
    ins = [e.value for e in ins.elements] if isinstance(ins, (cst.List, cst.Tuple)) else [ins]
    if not isinstance(out, cst.Name) or not all(isinstance(i, cst.Name) for i in ins):
        site.finding(_FIND, "outputs and inputs must be variables for the forward computation to be "
                     "re-derived", comment=comment)
        return None
    for key in ("allow_unused", "is_grads_batched", "materialize_grads"):
        if key in bound and site.literal(bound[key].value, True) is not False:
            site.finding(_FIND, f"{key}= has no mindspore.grad counterpart (unused inputs get zero "
                         "gradients, never None)", comment=comment)
            return None
    target, params = out.value, [i.value for i in ins]
    if len(set(params)) != len(params):
        site.finding(_FIND, "an input is listed twice", comment=comment)
        return None
    plan = _plan(site, target, inputs=params)
    if plan.problem:
        site.finding(_FIND, plan.problem, comment=comment)
        return None
    fn = site.fresh_name(f"_{target}_fn")
    def_text = _def_text(site, fn, plan, target)
    if def_text is None:
        site.finding(_FIND, f"a statement computing {target} was rewritten by another rule", comment=comment)
        return None
    vector = None
    if "grad_outputs" in bound:
        v = site.updated_of(bound["grad_outputs"].value)
        v = _single(v) if isinstance(v, (cst.List, cst.Tuple)) else v
        if v is None:
            site.finding(_FIND, "grad_outputs for several outputs is not ported", comment=comment)
            return None
        vector = _code(v)
    for key in ("retain_graph", "create_graph", "only_inputs"):
        if key in bound:
            site.edit("GRD003", None, node=site.original, api=site.api,
                     detail=f"{key}={_code(bound[key].value)} dropped")
    call = _grad_call(site, fn, params, vector)
    if vector is None and len(params) == 1:
        call = f"({call},)"
    new = site.parse(call)
    func = cst.parse_statement(def_text)

    def insert(line):
        return cst.FlattenSentinel([func.with_changes(leading_lines=line.leading_lines),
                                    line.with_changes(leading_lines=[])])

    if not site.replace_line(insert):
        site.finding(_FIND, "torch.autograd.grad is only ported in a simple statement", comment=comment)
        return None
    rule = "GRD004" if vector else "GRD002"
    site.edit(rule, new, detail=f"torch.autograd.grad({target}, {', '.join(params)}) -> "
                                f"{'mindspore.vjp' if vector else 'mindspore.grad'} of {fn} re-deriving "
                                f"{target} from {len(plan.body)} statement(s)")
    return new


api("torch.autograd.grad", rule="GRD002", handler=_autograd_grad, returns=None)


def _autograd_backward(site):
    """The statement hook ports the line; here only the call itself is accepted."""
    found = _backward_target(site, site.statement) if site.is_statement else None
    if found is None or not _plan(site, found[0]).params:
        site.finding(_FIND, "torch.autograd.backward is ported only as a statement on a tensor "
                     "computed from requires_grad tensors in the same block",
                     comment="torch.autograd.backward not ported")
        return None
    return site.updated


api("torch.autograd.backward", rule="GRD001", handler=_autograd_backward, returns=None)


# ----------------------------------------------------------------------------- .grad reads


class _GradReads(cst.CSTTransformer):
    def __init__(self, active: dict):
        super().__init__()
        self.active = active
        self.hidden: list[set] = []
        self.changed: list[str] = []

    def visit_FunctionDef(self, node):
        self.hidden.append({p.name.value for p in node.params.params})
        return True

    def leave_FunctionDef(self, original, updated):
        self.hidden.pop()
        return updated

    def visit_Lambda(self, node):
        self.hidden.append({p.name.value for p in node.params.params})
        return True

    def leave_Lambda(self, original, updated):
        self.hidden.pop()
        return updated

    def leave_Attribute(self, original, updated):
        if (updated.attr.value == "grad" and isinstance(updated.value, cst.Name)
                and updated.value.value in self.active
                and not any(updated.value.value in h for h in self.hidden)):
            self.changed.append(updated.value.value)
            return cst.Name(self.active[updated.value.value][0])
        return updated


def _zero_stmt(ctx, original, updated):
    """``x.grad.zero_()`` (x's gradient ported) -> ``_x_grad = ops.zeros_like(_x_grad)``."""
    st = _state(ctx)
    if not (st.active and isinstance(original, cst.SimpleStatementLine) and len(original.body) == 1
            and isinstance(original.body[0], cst.Expr)):
        return None
    text = _code(original.body[0]).strip()
    if not text.endswith(".zero_()"):
        return None
    zeroed = {a or b for a, b in _ZEROED.findall(text)}
    for name, act in st.active.items():
        if name in zeroed:
            new = cst.parse_statement(f"{act[0]} = {_ms(ctx, 'mindspore.ops.zeros_like')}({act[0]})\n")
            new = new.with_changes(leading_lines=updated.leading_lines,
                                   trailing_whitespace=updated.trailing_whitespace)
            act[1] = True
            ctx.edit("GRD005", new.body[0], node=original, api="Tensor.grad.zero_",
                     detail=f"{name}.grad.zero_() -> {act[0]} = ops.zeros_like({act[0]})")
            return new
    return None


def _statement_hook(ctx, original, updated):
    st = _state(ctx)
    if not st.active and not isinstance(original, cst.SimpleStatementLine):
        st.ported[id(original)] = [updated]
        return updated
    if isinstance(original, cst.SimpleStatementLine):
        new = _port_backward(ctx, original, updated)
        if new is None:
            new = _zero_stmt(ctx, original, updated)
        if new is not None:
            st.ported[id(original)] = list(new.nodes) if isinstance(new, cst.FlattenSentinel) else [new]
            return new
    if st.active and ".grad" in _stmt_code(ctx, original):
        params = {p for f in ctx.functions for p in _param_names(f)}
        mentioned = set(_GRAD_OF.findall(_stmt_code(ctx, original)))
        visible = {k: st.active[k] for k in mentioned if k in st.active and k not in params}
        reads = _GradReads(visible)
        new = updated.visit(reads)
        if reads.changed:
            for name in dict.fromkeys(reads.changed):
                if _zeroes(ctx, original, name):
                    st.active[name][1] = True
            ctx.edit("GRD005", None, node=original, api="Tensor.grad",
                     detail="; ".join(f"{n}.grad -> {st.active[n][0]}" for n in dict.fromkeys(reads.changed)))
            updated = new
    if st.active:
        # a new requires_grad tensor under the same name: its .grad starts empty
        st.active.pop(_leaf_name(ctx, original), None)
    st.ported[id(original)] = [updated]
    return updated


def _param_names(f) -> set:
    return {p.name.value for p in f.params.params}


statement_hook("GRD001", *STATEMENT_TYPES)(_statement_hook)


# ----------------------------------------------------------------------------- leaves


def differentiated_leaf(site) -> bool:
    """Is the call creating a ``requires_grad=True`` tensor whose gradient a later
    backward in the cell asks for? (Then ``requires_grad`` is dropped, not flagged: the
    autograd rules port the differentiation.)"""
    holder = site.statement
    name = _leaf_name(site, holder) if holder is not None else None
    if name is None:
        return False
    block, i = site.blocks[-1]
    if i >= len(block) - 1:
        return False
    # per block: for each statement, whether a backward call follows it and the last
    # statement mentioning each identifier (the same matches the text search made)
    memo = _memo(site, "later")
    facts = memo.get(id(block))
    if facts is None:
        facts = memo[id(block)] = _later_facts(site, block)
    backward_after, last_mention = facts
    return backward_after[i] and last_mention.get(name, -1) > i


_BACKWARD = re.compile(r"\.backward\(|autograd\.(grad|backward)\(")
_IDENT = re.compile(r"(?<![\w.])([A-Za-z_]\w*)")


def _later_facts(ctx, block) -> tuple[list, dict]:
    n = len(block)
    backward_after = [False] * (n + 1)
    last_mention: dict = {}
    for i in range(n - 1, -1, -1):
        code = _stmt_code(ctx, block[i])
        backward_after[i] = backward_after[i + 1] or bool(_BACKWARD.search(code))
        for ident in set(_IDENT.findall(code)):
            last_mention.setdefault(ident, i)
    # backward_after[i]: some statement after i calls backward
    return [backward_after[i + 1] for i in range(n)] + [False], last_mention


def drop_requires_grad(site, arg):
    """``values`` transform for factories: drop ``requires_grad=True`` with GRD001."""
    value = site.code(arg.value).strip()
    if site.literal(arg.value, True) is False:  # nothing to track: a plain drop
        site.edit("FUN017", None, detail=f"requires_grad={value} dropped")
    else:
        site.edit("GRD001", None, detail=f"requires_grad={value} dropped: the tensor is "
                                         "differentiated by the ported backward")
    return False

