"""Scalar autograd: ``z.backward()`` / ``torch.autograd.backward`` / ``torch.autograd.grad``
on tensors created with ``requires_grad=True`` -> ``mindspore.grad`` (or ``mindspore.vjp``)
of a function that re-derives ``z`` from those tensors; ``x.grad`` reads -> the gradient.

PyTorch records the graph while the forward statements run; MindSpore differentiates a
function. The port stays statement-aligned: the forward statements are left where they
are, and the backward statement becomes a ``def`` rebuilt from the (already ported)
statements that computed ``z`` (a backward slice over the block) plus one assignment of
the gradients. The target may be an expression (``y.sum().backward()``): the function
then returns it. Leaves are tensors created with ``requires_grad=True`` or marked with
``requires_grad_()`` / ``requires_grad = True``; values computed under
``torch.no_grad()`` are constants of the function, ``enable_grad`` blocks are re-derived
bare. Reads of ``requires_grad`` / ``is_leaf`` / ``grad_fn`` become constants where the
creating statement decides them (GRD007). Training loops over a model's parameters
(``loss.backward()`` with no ``requires_grad`` leaf in sight) are left to the
training-step rules."""

from __future__ import annotations

import ast
import bisect
import heapq
import itertools
import re
import textwrap
from dataclasses import dataclass, field
from typing import Optional

import libcst as cst

from msmagic.engine.build import STATEMENT_TYPES, descendants
from msmagic.engine.build import code as _code
from msmagic.engine.names import MARKER, param_names
from msmagic.engine.spec import (
    METHODS, TENSOR, api, handled_by_statement_rules, kind_matches, member, method, statement_hook,
)
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
        variable per tensor; ``requires_grad=True`` is dropped at creation, and so are
        ``requires_grad_()`` and ``x.requires_grad = True`` marks. The target may be an
        expression (``y.sum().backward()``, ``(a * b).mean().backward()``): the function
        returns it. Values computed under ``torch.no_grad()`` are not re-derived (they
        are constants, as for PyTorch's graph), and an ``enable_grad`` block is re-derived
        without its ``with``. The forward statements run once more inside the function,
        so keep them free of side effects and random draws. Notebooks spread this over
        cells: the tensors made to require gradients, the statements computing from them
        at the top level of a cell and the gradients computed are remembered for the
        cells after it, so ``z.backward()`` re-derives ``z`` from earlier cells' statements
        and a later cell's ``x.grad`` reads the gradient. A list of tensors marked in a
        loop (``for p in parameters: p.requires_grad = True``, makemore) makes each a
        tensor the function is differentiated by, in the list's order; the loop stays
        (it binds ``p``, and the attribute is harmless on a MindSpore tensor). After
        ``t.retain_grad()`` on intermediate tensors (manual backprop lessons read
        ``t.grad`` inside a helper that receives ``t``), each one's gradient comes from a
        function re-deriving the target from it, and the gradients of the intermediates
        and of the tensors differentiated are stored as their ``.grad`` attributes (a
        MindSpore tensor takes one), so reads through any name find them. A notebook
        function the forward statements call that reads such tensors as globals (the
        official nn tutorial's ``def model(xb): return log_softmax(xb @ weights + bias)``)
        would read the notebook's tensors, not the function's parameters, and get no
        gradient: it is defined again (its ported text) at the top of the function, where
        ``weights`` and ``bias`` are the parameters, and so is a function it calls that
        reads them. A function declaring ``global`` is not.
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
        in between is flagged instead of ported. A read of ``x.grad`` that runs once, in
        order, before any backward reached ``x`` reads None (PyTorch's value there, also
        for a tensor that does not require grad). A loop over a list of such tensors
        (``for p in parameters: p.data += -lr * p.grad``) iterates over
        ``zip(parameters, (_a_grad, _b_grad))`` with ``p_grad`` for ``p.grad``, and
        ``p.grad = None`` in such a loop resets the gradient variables. An update of a
        differentiated tensor itself (``w -= lr * w.grad``, in place under ``no_grad()`` in
        PyTorch) becomes ``ops.assign(w, w - lr * _w_grad)``: ``w -= ...`` binds a new
        tensor to the name in MindSpore, and a list holding the tensor, or the caller's
        variable when a function received it, would keep the old values. A function that
        receives tensors and reads their ``.grad`` after a backward differentiates them
        (PyTorch would have no gradient to read otherwise), also when it unpacks them from
        a list it loops over (``w, b = params``); it must reset them, since PyTorch adds
        each call's gradient to the last.
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
        tensor created outside it, without ``x.grad = None``/``x.grad.zero_()``),
        arguments such as ``inputs=``/``allow_unused=`` with no counterpart, a
        ``requires_grad`` tensor created in a form it does not recognise (``torch.ones(3,
        requires_grad=True).to(dev)``, a tuple assignment), or a ``with`` mixing a
        grad-mode switch with other context managers. Rewrite the computation as a
        function and call ``mindspore.grad`` on it.
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

register(
    "GRD007",
    "x.requires_grad / x.is_leaf / x.grad_fn read on a tensor",
    group=GROUP,
    why="""
        A PyTorch tensor carries its autograd state: ``requires_grad``, ``is_leaf`` and
        ``grad_fn`` (the node of the recorded graph that produced it). MindSpore records no
        graph, so a plain MindSpore tensor has none of these attributes (only a
        ``Parameter`` has ``requires_grad``). Where the answer is known from the statement
        that created the tensor in the same block, the read becomes that constant: a tensor
        created with ``requires_grad=True`` (or marked with ``requires_grad_()``) has
        ``requires_grad`` True, ``is_leaf`` True and ``grad_fn`` None; a tensor a factory
        created without it has False, True and None. ``requires_grad`` of anything else
        (a Parameter, a value of unknown origin) is kept, since Parameters have it. At
        the top level of a cell (earlier cells included), a tensor computed from one that
        requires grad, outside ``no_grad()``, has ``requires_grad`` True and ``is_leaf``
        False, and its ``grad_fn``, PyTorch's graph node, reads as a string naming the
        node (``'<PowBackward0 object>'``, what printing it shows without the address; not
        None, as the node is not); that read is flagged, since code using the node itself
        has no counterpart. Other reads of computed tensors depend on the recorded graph:
        those (and every ``grad_fn`` or ``is_leaf`` read that cannot be decided) are
        flagged.
    """,
    seed=f"{SEED} › torch.autograd.backward",
    reference=REF,
    example="""
        import torch
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        w = torch.ones(2).requires_grad_()
        c = torch.ones(2)
        flags = (x.requires_grad, x.is_leaf, x.grad_fn is None, w.requires_grad, c.requires_grad, c.is_leaf)
        y = (x * w * c).sum()
        y.backward()
        gx, gw = x.grad, w.grad
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
        hit = _names(stmt, _stmt_code(ctx, stmt))
        marked = _marked_leaf(stmt)
        if marked is not None:  # ``x.requires_grad_()`` makes x a new leaf: it binds x
            hit = (hit[0] | {marked}, hit[1])
        memo[id(stmt)] = hit
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


def _requires_grad_call(node) -> bool:
    """``<expr>.requires_grad_()`` / ``.requires_grad_(True)`` / ``(requires_grad=True)``."""
    if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
            and node.func.attr.value == "requires_grad_"):
        return False
    if not node.args:
        return True
    if len(node.args) != 1 or node.args[0].star:
        return False
    arg = node.args[0]
    if arg.keyword is not None and arg.keyword.value != "requires_grad":
        return False
    return isinstance(arg.value, cst.Name) and arg.value.value == "True"


def _marked_leaf(stmt) -> Optional[str]:
    """``x.requires_grad_()`` / ``x.requires_grad = True`` as a statement -> "x": the
    statement turns the tensor bound to x into a leaf that requires grad."""
    if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1):
        return None
    small = stmt.body[0]
    if isinstance(small, cst.Expr) and _requires_grad_call(small.value):
        recv = small.value.func.value
        return recv.value if isinstance(recv, cst.Name) else None
    if (isinstance(small, cst.Assign) and len(small.targets) == 1
            and isinstance(small.value, cst.Name) and small.value.value == "True"):
        t = small.targets[0].target
        if (isinstance(t, cst.Attribute) and t.attr.value == "requires_grad"
                and isinstance(t.value, cst.Name)):
            return t.value.value
    return None


def _leaf_name(ctx, stmt) -> Optional[str]:
    """The name a statement makes a leaf tensor that requires grad: ``x =
    torch.<factory>(..., requires_grad=True)``, ``x = <expr>.requires_grad_()``,
    ``x.requires_grad_()`` or ``x.requires_grad = True`` -> "x"."""
    if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1):
        return None
    marked = _marked_leaf(stmt)
    if marked is not None:
        return marked
    small = stmt.body[0]
    if not (isinstance(small, cst.Assign) and len(small.targets) == 1
            and isinstance(small.targets[0].target, cst.Name) and isinstance(small.value, cst.Call)):
        return None
    call = small.value
    if _requires_grad_call(call):
        # ``x = y.requires_grad_()`` makes y the same leaf: an alias the slice cannot follow
        recv = call.func.value
        name = small.targets[0].target.value
        aliased = isinstance(recv, (cst.Attribute, cst.Subscript)) or (
            isinstance(recv, cst.Name) and recv.value != name)
        return None if aliased else name
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
    #: every statement of the slice, also those not depending on a parameter
    reached: list = field(default_factory=list)
    #: the notebook's functions the slice calls that read a parameter as a global
    #: (``def model(xb): return xb @ weights + bias``), defined again inside the function
    #: so that they read its parameters
    inline: list = field(default_factory=list)


class _BlockIndex:
    """Per block, computed once per port: which statements bind each name, which create
    a ``requires_grad`` leaf of each name, which reset each name's ``.grad``. Slicing a
    backward then looks up the statements it needs instead of walking every earlier
    sibling, so a cell with many backward calls ports in linear time."""

    def __init__(self, ctx, body):
        self.binders: dict = {}
        self.leaves: dict = {}
        self.zeroed: dict = {}
        #: statement index -> the names a ``for p in L: p.requires_grad = True`` makes leaves
        self.marks: dict = {}
        lists: dict = {}  # name -> the names of the list literal last bound to it here
        unpacks: list = []  # (index, list name, names) of ``w, b = params``
        for i, stmt in enumerate(body):
            bound, _ = _names_of(ctx, stmt)
            elements = _list_loop(ctx, stmt, lists)
            if elements is not None and _loop_only(stmt, _marked_leaf):
                self.marks[i] = elements
                bound = bound | set(elements)
            for n in bound:
                self.binders.setdefault(n, []).append(i)
                lists[n] = None  # bound to something else than a list of names
            if isinstance(stmt, cst.SimpleStatementLine) and _elements(stmt) is not None:
                lists[stmt.body[0].targets[0].target.value] = _elements(stmt)
            unpacked = _unpacked(stmt)
            if unpacked is not None and lists.get(unpacked[0]) is None:
                lists[unpacked[0]] = unpacked[1]  # w, b = params: params holds (w, b)
                unpacks.append((i, *unpacked))
            leaf = _leaf_name(ctx, stmt)
            if leaf is not None:
                self.leaves.setdefault(leaf, []).append(i)
            for n in self.marks.get(i, ()):
                self.leaves.setdefault(n, []).append(i)
            for a, b in _ZEROED.findall(_stmt_code(ctx, stmt)):
                self.zeroed.setdefault(a or b, []).append(i)
            if "for" in _stmt_code(ctx, stmt):  # for p in L: ... p.grad = None (also in a with)
                for loop in (n for n in (stmt, *descendants(stmt)) if type(n) is cst.For):
                    names = _list_loop(ctx, loop, lists)
                    if names and any(_zeroes_var(x) == loop.target.value for x in loop.body.body):
                        for n in names:
                            self.zeroed.setdefault(n, []).append(i)

        # ``w, b = params`` in a function that receives ``params`` and reads ``p.grad`` in a
        # loop over it after a backward: w and b are the tensors differentiated
        for i, name, names in unpacks:
            if any(_loop_var(s) is not None and isinstance(s.iter, cst.Name) and s.iter.value == name
                   and re.search(rf"(?<![\w.]){re.escape(s.target.value)}\.grad\b", _code(s.body))
                   for s in body[i + 1:]):
                self.marks[i] = names

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


_GRAD_OFF = ("torch.no_grad", "torch.inference_mode")
_GRAD_SWITCHES = _GRAD_OFF + ("torch.enable_grad", "torch.set_grad_enabled")


def _canonical(qual):
    from msmagic.rules.nograd import canonical_grad_mode

    return canonical_grad_mode(qual)


def _switch_mode(ctx, node) -> Optional[str]:
    """A grad-mode switch call (``torch.no_grad()``, ``set_grad_enabled(False)``...):
    "off" when it stops recording, "on" when it records (or changes nothing: the
    ``mode=False`` forms), "unknown" for a flag that is not a literal; None for any
    other expression."""
    if not isinstance(node, cst.Call):
        return None
    from msmagic.rules.nograd import canonical_grad_mode

    qual = canonical_grad_mode(ctx.resolve(node.func))
    if qual not in _GRAD_SWITCHES:
        return None
    if qual == "torch.enable_grad":
        return "on"
    flag = node.args[0].value if len(node.args) == 1 and not node.args[0].star else None
    if not node.args:
        return "off" if qual in _GRAD_OFF else "unknown"
    if not (isinstance(flag, cst.Name) and flag.value in ("True", "False")):
        return "unknown"
    on = flag.value == "True"
    if qual == "torch.set_grad_enabled":
        return "on" if on else "off"
    return "off" if on else "on"  # no_grad/inference_mode(mode=False) change nothing


def _with_mode(ctx, stmt) -> Optional[str]:
    """For a ``with`` statement of grad-mode switches: "off" / "on" (the last switch
    wins), "mixed" when it also enters other context managers or a flag is not a
    literal; None when it enters no switch."""
    if not isinstance(stmt, cst.With):
        return None
    modes = [_switch_mode(ctx, item.item) for item in stmt.items]
    if all(m is None for m in modes):
        return None
    if any(m in (None, "unknown") for m in modes) or stmt.asynchronous is not None:
        return "mixed"
    return modes[-1]


class _Switches(cst.CSTVisitor):
    def __init__(self, ctx):
        super().__init__()
        self.ctx, self.modes = ctx, set()

    def visit_Call(self, node):
        mode = _switch_mode(self.ctx, node)
        if mode is not None:
            self.modes.add(mode)


def _switches_inside(ctx, stmt, modes) -> bool:
    """Does a statement call a grad-mode switch of one of ``modes`` ("on", "off",
    "unknown") anywhere, header and body (``with torch.no_grad():``,
    ``torch.set_grad_enabled(False)``)?"""
    memo = _memo(ctx, "switches")
    found = memo.get(id(stmt))
    if found is None:
        visitor = _Switches(ctx)
        stmt.visit(visitor)
        found = memo[id(stmt)] = visitor.modes
    return bool(found & set(modes))


def _recording_off(ctx) -> bool:
    """Does the current statement run with gradient recording switched off (inside
    ``with torch.no_grad():`` or a function decorated ``@torch.no_grad()``, with no
    ``enable_grad`` nearer)?"""
    for holder in reversed(ctx.enclosing_statements[:-1]):
        mode = _with_mode(ctx, holder)
        if mode in ("on", "off"):
            return mode == "off"
        if isinstance(holder, cst.FunctionDef):
            for d in holder.decorators:
                m = _switch_mode(ctx, d.decorator)
                if m is None and _canonical(ctx.resolve(d.decorator)) in _GRAD_OFF:
                    m = "off"  # the bare ``@torch.no_grad`` form
                if m in ("on", "off"):
                    return m == "off"
            return False
    return False


def _plan(ctx, target: str, inputs: Optional[list] = None, reads: Optional[set] = None) -> Plan:
    """Backward slice of ``target`` over the current block. ``inputs``: the variables to
    differentiate (autograd.grad); None: the requires_grad tensors reached (backward).
    ``reads``: the names an expression target reads (``y.sum().backward()``); the
    slice then starts from them and ``target`` only names the expression in messages.
    Statements that ran with recording switched off (``with torch.no_grad():``) are not
    re-derived: what they bind is a constant of the function, as it is for PyTorch."""
    blocks = ctx.blocks
    if not blocks:
        return Plan()
    depth = len(blocks) - 1
    body, index = blocks[-1]
    idx = _index(ctx, body)
    fixed = set(inputs or ())
    needed = (set(reads) if reads is not None else {target}) - fixed
    off = _recording_off(ctx)
    consts: set = set()  # indices of statements whose results are constants
    consts_reached: list = []
    mixed = ""
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
        hit = (bound | set(idx.marks.get(i, ()))) & needed
        if not hit:
            continue
        if _is_import(stmt):
            push(hit, i)
            continue
        leaf = _leaf_name(ctx, stmt)
        made = hit & ({leaf, *idx.marks.get(i, ())})
        if made:  # independent variables: parameters, or read as they are
            if inputs is None:
                order = [*idx.marks.get(i, ()), leaf]
                for n in sorted(made, key=order.index):
                    leaves[n] = (depth, i, order.index(n))
            needed -= made
            push(hit - made, i)
            continue
        mode = _with_mode(ctx, stmt)
        if mode == "off" or (off and mode != "on"):
            # computed without recording: PyTorch's graph stops here, so do not re-derive
            if (not mixed and not isinstance(stmt, cst.SimpleStatementLine)
                    and _switches_inside(ctx, stmt, ("on", "unknown"))):
                mixed = (f"the statement computing {', '.join(sorted(hit))} switches gradient recording "
                         "off and back on inside (torch.no_grad() around enable_grad()); write the "
                         "function for mindspore.grad by hand, with ops.stop_gradient where PyTorch "
                         "stops recording")
            consts.add(i)
            consts_reached.append(stmt)
            needed -= hit
            continue
        if mode == "mixed" and not mixed:
            mixed = (f"a with statement computing {', '.join(sorted(hit))} enters a grad-mode switch "
                     "together with other context managers (or with a computed flag); split the with "
                     "statement or write the function for mindspore.grad by hand")
        if (not mixed and not isinstance(stmt, cst.SimpleStatementLine)
                and _switches_inside(ctx, stmt, ("off", "unknown"))):
            mixed = (f"the compound statement computing {', '.join(sorted(hit))} switches gradient "
                     "recording inside (torch.no_grad() / set_grad_enabled); re-derived in a function "
                     "its values would be differentiated; write the function for mindspore.grad by "
                     "hand, with ops.stop_gradient where PyTorch stops recording")
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
                marks = oidx.marks.get(i, ())
                bound = _names_of(ctx, outer[i])[0] | set(marks)
                if not bound & needed:
                    continue
                order = [*marks, _leaf_name(ctx, outer[i])]
                for leaf in set(order) & needed:
                    leaves[leaf] = (d, i, order.index(leaf))
                needed -= bound
    if not ctx.classes:
        earlier, problem = _earlier_slice(ctx, needed - fixed - _locals(ctx),
                                          leaves if inputs is None else None, top=depth == 0)
        mixed = mixed or problem
        chosen = [(k - len(earlier), *item) for k, item in enumerate(earlier)] + chosen
    mem, local = _memory(ctx), _locals(ctx)
    if inputs is None and any(n in local or n not in mem for n in needed - leaves.keys() - fixed):
        # tensors a function receives: what the code does with them says
        for k, name in enumerate(_grads_read_after(ctx)):
            if name in needed and name not in leaves and (name in local or name not in mem):
                leaves[name] = (-2, 0, k)
    inline: list = []
    if inputs is None and chosen:  # leaves a notebook function reads as globals
        through = _leaves_through_calls(ctx, set().union(*(r for _, _, _, r in chosen)))
        for name, (made, fns) in through.items():
            if name not in leaves and name not in fixed:
                leaves[name] = made
            inline += [f for f in fns if f not in inline]
        if through:
            via = {}
            for f in inline:
                via[f] = {n for n, (_, fns) in through.items() if f in fns}
            chosen = [(i, stmt, bound, read | set().union(*(via[f] for f in read if f in via)))
                      for i, stmt, bound, read in chosen]
    params = list(inputs) if inputs is not None else sorted(leaves, key=leaves.get)
    reached = [s for _, s, _, _ in chosen] + consts_reached
    chosen = _dependent(chosen, set(params))
    plan = Plan(params, [s for _, s, _, _ in chosen], reached=reached, problem=mixed, inline=inline)
    if not params or mixed:
        return plan
    bound_in = set().union(*(b for _, _, b, _ in chosen)) if chosen else set()
    if bound_in & set(params) and inputs is None:
        plan.problem = (f"{', '.join(sorted(bound_in & set(params)))} is reassigned after being "
                        "created with requires_grad=True; its gradient would be taken of the new value")
        return plan
    free = set().union(*(r for _, _, _, r in chosen)) - bound_in - set(params) if chosen else set()
    first = chosen[0][0] if chosen else index
    used = {i for i, _, _, _ in chosen} | consts
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


def _grads_read_after(ctx) -> list:
    """The names whose ``.grad`` the statements after the current one in its block read,
    directly or through a loop over a list of names (``for p in [w, b]: p -= lr * p.grad``):
    a backward differentiates them (PyTorch would have no gradient to read otherwise)."""
    body, index = ctx.blocks[-1]
    return grads_read_after(ctx, body[index + 1:])


def grads_read_after(ctx, stmts) -> list:
    """:func:`_grads_read_after` over the statements ``stmts``."""
    out: list = []
    for stmt in stmts:
        code = _stmt_code(ctx, stmt)
        if ".grad" not in code:
            continue
        out += _GRAD_OF.findall(code)
        for loop in (n for n in (stmt, *descendants(stmt)) if type(n) is cst.For):
            names = _list_loop(ctx, loop)
            if names and re.search(rf"(?<![\w.]){re.escape(loop.target.value)}\.grad\b", _code(loop.body)):
                out += names
    return list(dict.fromkeys(out))


def _earlier_slice(ctx, needed: set, leaves: Optional[dict], top: bool) -> tuple[list, str]:
    """The statements of earlier cells (top-level statements of this one too, for a
    backward in a loop) that compute the ``needed`` names, in order, as (statement,
    bound, read), and a problem ("" when none). A leaf goes to ``leaves`` (None: the
    inputs are given). Statements are re-derived only for a backward at the top level of
    a cell: in a loop, what was computed before it is a constant of the function."""
    mem, st = _memory(ctx), _state(ctx)
    found, problem, seen = {}, "", set()
    todo = list(needed)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        fact = mem.get(name)
        if fact is None:
            continue
        if fact.leaf:
            if leaves is not None:
                leaves[name] = (-1, fact.seq, 0)
            continue
        if fact.stmt is None or not top:
            if fact.tainted and not problem:
                problem = (f"{name} was computed from requires_grad tensors by a compound statement or in "
                           "an earlier cell of a loop's; compute it again next to the backward")
            continue
        if id(fact.stmt) not in found:
            found[id(fact.stmt)] = fact
            st.ported.setdefault(id(fact.stmt), fact.ported)
            todo.extend(_names_of(ctx, fact.stmt)[1])
    out = []
    for fact in sorted(found.values(), key=lambda f: f.seq):
        bound, read = _names_of(ctx, fact.stmt)
        stale = [n for n in read if n in mem and mem[n].seq > fact.seq and id(mem[n].stmt) not in found]
        if stale and not problem:
            problem = (f"{', '.join(sorted(stale))} was reassigned after an earlier cell computed "
                       f"{', '.join(sorted(bound))} from it; re-deriving it would use the new value")
        out.append((fact.stmt, bound, read))
    return out, problem


# ----------------------------------------------------------------------------- state


@dataclass
class _State:
    ported: dict = field(default_factory=dict)  # id(original statement) -> output statements
    #: leaf name -> [grad variable, fresh?, scope]: the variable holding the leaf's
    #: gradient since a ported backward; scope: ids of the functions enclosing it
    active: dict = field(default_factory=dict)
    #: leaves whose gradient a backward the port did not rewrite changed: no read of
    #: their ``.grad`` is decided
    unknown: set = field(default_factory=set)


def _state(ctx) -> _State:
    scratch = ctx.scratch("autograd")
    st = scratch.get("state")
    if st is None:
        st = scratch["state"] = _State()
        for name, fact in _memory(ctx).items():  # gradients earlier cells computed
            if fact.grad is not None:
                st.active[name] = [*fact.grad[:2], ()]
            if fact.unknown:
                st.unknown.add(name)
    return st


# ----------------------------------------------------------------------------- earlier cells

#: the key of this module's facts in the session (``Context.session_memory``)
_MEMORY = "autograd"
#: orders the statements of all cells (a fact's ``seq``)
_SEQ = itertools.count()


@dataclass
class _Fact:
    """What a top-level statement left a name bound to, for the cells after it: a notebook
    makes a tensor require gradients in one cell, computes from it in the next and calls
    ``backward()`` and reads ``.grad`` in later ones."""

    seq: int
    #: the original statement line that bound the name (re-derived by a later backward);
    #: None: bound by a compound statement or an augmented assignment
    stmt: Optional[cst.CSTNode] = None
    ported: list = field(default_factory=list)  # the statement's ported form
    leaf: bool = False  # a tensor created (or marked) to require gradients
    tainted: bool = False  # computed from such a tensor with recording on
    grad: Optional[list] = None  # [gradient variable, fresh?] after a ported backward
    unknown: bool = False  # a backward the port did not rewrite changed its gradient
    elements: Optional[tuple] = None  # ``[a, b, c]`` / ``(a, b)`` of names: the names


def _memory(ctx) -> dict:
    return ctx.session_memory(_MEMORY)


def earlier_leaves(ctx) -> dict:
    """Names that hold ``requires_grad`` tensors made in earlier cells (or earlier at the
    top level of this one) -> their facts; not the names the enclosing functions bind."""
    local = _locals(ctx)
    return {n: f for n, f in _memory(ctx).items() if f.leaf and n not in local}


def _locals(ctx) -> set:
    """Names the functions enclosing the current statement bind (parameters included)."""
    memo = _memo(ctx, "locals")
    out: set = set()
    for f in ctx.functions:
        found = memo.get(id(f))
        if found is None:
            found = {p.name.value for p in (*f.params.params, *f.params.kwonly_params, *f.params.posonly_params)}
            for star in (f.params.star_arg, f.params.star_kwarg):
                if isinstance(star, cst.Param):
                    found.add(star.name.value)
            if isinstance(f.body, cst.IndentedBlock):
                for stmt in f.body.body:
                    found |= _names_of(ctx, stmt)[0]
            memo[id(f)] = found
        out |= found
    return out


def earlier_elements(ctx, name: str) -> Optional[tuple]:
    """The names a top-level ``name = [a, b, c]`` of an earlier cell listed."""
    fact = _memory(ctx).get(name)
    return fact.elements if fact is not None else None


def _elements(stmt) -> Optional[tuple]:
    """``L = [a, b, c]`` (or a tuple) -> ("a", "b", "c")."""
    small = stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 else None
    if not (isinstance(small, cst.Assign) and len(small.targets) == 1
            and isinstance(small.value, (cst.List, cst.Tuple)) and small.value.elements):
        return None
    names = [e.value.value for e in small.value.elements
             if isinstance(e, cst.Element) and isinstance(e.value, cst.Name)]
    return tuple(names) if len(names) == len(small.value.elements) else None


def list_marks(ctx, stmt) -> list:
    """``for p in L: p.requires_grad = True`` (or ``p.requires_grad_()``; ``L`` a list of
    names built before, or a list literal of names) -> the names it makes leaves."""
    if not _loop_only(stmt, _marked_leaf):
        return []
    return list(_list_loop(ctx, stmt) or ())


def _loop_var(stmt) -> Optional[str]:
    """The variable of ``for p in <list>:`` with a plain body, else None."""
    if (isinstance(stmt, cst.For) and isinstance(stmt.target, cst.Name) and stmt.asynchronous is None
            and isinstance(stmt.body, cst.IndentedBlock) and not stmt.orelse and stmt.body.body):
        return stmt.target.value
    return None


def _loop_only(stmt, test) -> bool:
    """Is every statement of the loop's body one ``test(statement)`` names its variable in?"""
    var = _loop_var(stmt)
    return var is not None and all(test(s) == var for s in stmt.body.body)


def _zeroes_var(stmt) -> Optional[str]:
    """``p.grad = None`` / ``p.grad.zero_()`` / ``p.grad.data.zero_()`` -> "p"."""
    if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1):
        return None
    found = _ZEROED.fullmatch(_code(stmt.body[0]).strip())
    return (found.group(1) or found.group(2)) if found else None


def _list_loop(ctx, stmt, lists: Optional[dict] = None) -> Optional[tuple]:
    """For ``for p in L:`` / ``for p in [a, b]:``: the names the list holds (``lists``: the
    lists of the block so far; else the last binding before the statement, or an earlier
    cell's); None when unknown."""
    if _loop_var(stmt) is None:
        return None
    it = stmt.iter
    if isinstance(it, (cst.List, cst.Tuple)):
        names = [e.value.value for e in it.elements if isinstance(e, cst.Element) and isinstance(e.value, cst.Name)]
        return tuple(names) if names and len(names) == len(it.elements) else None
    if isinstance(it, cst.Name):
        if lists is not None:
            return lists[it.value] if it.value in lists else earlier_elements(ctx, it.value)
        return elements_of(ctx, it.value)
    return None


def elements_of(ctx, name: str) -> Optional[tuple]:
    """The names of the list ``name`` holds at the current statement: the last ``name =
    [a, b, c]`` (or ``a, b, c = name``) before it in its block or an enclosing one, else
    of an earlier cell."""
    for body, at in reversed(ctx.blocks):
        j = _index(ctx, body).last_binder(name, at)
        for k in range(at - 1, j, -1):
            unpacked = _unpacked(body[k])
            if unpacked is not None and unpacked[0] == name:
                return unpacked[1]
        if j >= 0:
            return _elements(body[j])
    return earlier_elements(ctx, name)


def _unpacked(stmt) -> Optional[tuple]:
    """``a, b = L`` -> ("L", ("a", "b"))."""
    small = stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 else None
    if not (isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.value, cst.Name)
            and isinstance(small.targets[0].target, (cst.Tuple, cst.List))):
        return None
    names = [e.value.value for e in small.targets[0].target.elements
             if isinstance(e, cst.Element) and isinstance(e.value, cst.Name)]
    return (small.value.value, tuple(names)) if names and len(names) == len(small.targets[0].target.elements) else None


def _remember(ctx, original) -> None:
    """Record what a top-level statement bound (see :class:`_Fact`)."""
    mem, st = _memory(ctx), _state(ctx)
    seq = next(_SEQ)
    marks = list_marks(ctx, original)
    marked = _marked_leaf(original) if isinstance(original, cst.SimpleStatementLine) else None
    for name in marks + ([marked] if marked else []):
        fact = mem.setdefault(name, _Fact(seq))
        fact.leaf, fact.tainted, fact.seq = True, False, seq
        seq = next(_SEQ)  # the parameters of a function differentiating them keep the list's order
    if marks or marked:
        return
    bound, read = _names_of(ctx, original)
    simple = isinstance(original, cst.SimpleStatementLine)
    rebound = _rebound(original) if simple else set()
    tainted = any((f := mem.get(n)) is not None and (f.leaf or f.tainted) for n in read) and \
        _with_mode(ctx, original) != "off"
    leaf = _leaf_name(ctx, original) if simple else None
    ported = st.ported.get(id(original), [])
    for name in bound:
        old = mem.get(name)
        if simple and name not in rebound and old is not None and old.leaf:
            continue  # ``x -= lr * x.grad``: the same leaf, changed in place
        mem[name] = _Fact(seq, original if simple and name in rebound else None, ported,
                          leaf=name == leaf, tainted=tainted and name != leaf,
                          elements=_elements(original) if simple else None)
    for name, act in st.active.items():
        if not act[2] and name in mem:
            mem[name].grad = act[:2]
    for name in st.unknown:
        if name in mem:
            mem[name].unknown = True


def _body_text(ctx, plan: Plan) -> Optional[str]:
    st = _state(ctx)
    parts = []
    for stmt in plan.body:
        out = st.ported.get(id(stmt))
        if out is None:
            return None
        if len(out) == 1 and isinstance(out[0], cst.With) and _with_mode(ctx, stmt) == "on":
            # ``with torch.enable_grad():`` has nothing to switch inside the function: its
            # body (already ported) is re-derived as it is (rule NGR001 unwraps the with)
            inner = out[0].body
            out = ([cst.SimpleStatementLine(body=inner.body)] if isinstance(inner, cst.SimpleStatementSuite)
                   else list(inner.body))
        # the comment lines above a statement stay with the original (a "# %%" cell
        # marker re-derived into a function would split it)
        out = [o.with_changes(leading_lines=()) if getattr(o, "leading_lines", None) else o for o in out]
        text = cst.Module(body=out).code
        text = "\n".join(re.sub(rf"\s*{MARKER}.*$", "", line) for line in text.splitlines())
        parts.append(textwrap.dedent(text).strip("\n"))
    return "\n".join(parts)


def _def_text(ctx, fn: str, plan: Plan, target: str) -> Optional[str]:
    """``def fn(params): <re-derived statements>; return <target>`` (``target``: a name,
    or the ported text of an expression); the notebook functions in ``plan.inline`` are
    defined again first, so that they read the parameters."""
    body = _body_text(ctx, plan)
    if body is None:
        return None
    defs = []
    for name in plan.inline:
        text = _ported_function(ctx, name)
        if text is None:
            return None
        defs.append(text)
    lines = "".join(d + "\n" for d in defs) + (body + "\n" if body else "") + f"return {target}"
    return f"def {fn}({', '.join(plan.params)}):\n" + textwrap.indent(lines, "    ") + "\n"


def _function_reads(ctx, name: str) -> Optional[tuple]:
    """(the global names a notebook function's body reads, the notebook functions it
    calls) for a top-level ``def name`` of this cell or an earlier one; None for another
    name (or a function that declares globals)."""
    fdef = ctx.function_definition(name)
    kind = ctx.kind_of(cst.Name(name)) if fdef is not None else None
    if kind is None or kind.base != "function":
        return None  # not a function here (``model`` rebound to a Module since)
    memo = _memo(ctx, "function reads")
    if id(fdef) in memo:
        return memo[id(fdef)]
    found = None
    if not any(type(n) in (cst.Global, cst.Nonlocal) for n in descendants(fdef)):
        params = param_names(fdef.params)
        bound, read = set(), set()
        for stmt in fdef.body.body if isinstance(fdef.body, cst.IndentedBlock) else ():
            b, r = _names(stmt)
            bound |= b
            read |= r
        free = read - bound - params
        calls = {n.func.value for n in descendants(fdef) if type(n) is cst.Call and type(n.func) is cst.Name}
        found = (free, {c for c in calls if c != name and ctx.function_definition(c) is not None})
    memo[id(fdef)] = found
    return found


def _leaves_through_calls(ctx, names: set) -> dict:
    """The ``requires_grad`` tensors the notebook functions among ``names`` (and the ones
    they call) read as globals: leaf -> (where it was made, for the parameters' order; the
    functions, outermost first, that reach it)."""
    known = earlier_leaves(ctx)
    block_leaves: dict = {}
    for depth, (body, at) in enumerate(ctx.blocks):
        idx = _index(ctx, body)
        for leaf, where in idx.leaves.items():
            made = [j for j in where if j < at]
            if made:
                block_leaves[leaf] = (depth, made[-1], 0)
    out: dict = {}
    todo = [(n, ()) for n in sorted(names)]
    seen: set = set()
    while todo:
        name, path = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        found = _function_reads(ctx, name)
        if found is None:
            continue
        free, calls = found
        chain = (*path, name)
        for leaf in free:
            made = block_leaves.get(leaf) or ((-1, known[leaf].seq, 0) if leaf in known else None)
            if made is not None:
                entry = out.setdefault(leaf, (made, []))
                entry[1].extend(f for f in chain if f not in entry[1])
        todo += [(c, chain) for c in sorted(calls)]
    return out


def leaves_through_calls(ctx, names: set) -> set:
    """The ``requires_grad`` tensors notebook functions named in ``names`` read as
    globals (the training rules leave such a backward to these rules)."""
    return set(_leaves_through_calls(ctx, names))


def _ported_function(ctx, name: str) -> Optional[str]:
    """The ported text of the notebook's ``def name`` (of this cell or an earlier one)."""
    fdef = ctx.function_definition(name)
    out = _state(ctx).ported.get(id(fdef)) if fdef is not None else None
    if out is None:
        fact = _memory(ctx).get(name)
        out = fact.ported if fact is not None and fact.ported else None
    if not out or not isinstance(out[0], cst.FunctionDef):
        return None
    text = cst.Module(body=[o.with_changes(leading_lines=()) for o in out]).code
    text = "\n".join(re.sub(rf"\s*{MARKER}.*$", "", line) for line in text.splitlines())
    return textwrap.dedent(text).strip("\n")


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


@dataclass
class _Target:
    """What a backward differentiates: a variable (``z.backward()``) or an expression
    (``y.sum().backward()``, ``(a * b).mean().backward()``)."""

    node: cst.BaseExpression  # the original expression
    args: list
    api: str
    name: Optional[str] = None  # the variable, when the target is one

    @property
    def label(self) -> str:
        return self.name or _code(self.node).strip()

    @property
    def base(self) -> str:
        """Stem of the function's name: the variable, or the variable a chain of
        argument-less method calls starts from (``y.sum()`` -> y); else "backward"."""
        node = self.node
        while True:
            if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and not node.args:
                node = node.func.value
            elif isinstance(node, (cst.Attribute, cst.Subscript)):
                node = node.value
            else:
                break
        return node.value if isinstance(node, cst.Name) else "backward"

    def reads(self) -> Optional[set]:
        """Names the expression reads (None for a variable target)."""
        return None if self.name else _names(None, _code(self.node).strip())[1]

    def plan(self, ctx) -> Plan:
        return _plan(ctx, self.label, reads=self.reads())

    def returned(self, ctx) -> str:
        """What the function returns: the variable, or the ported expression."""
        return self.name or _code(ctx.updated_of(self.node)).strip()


def _tensor_expression(ctx, node) -> bool:
    """Can ``node`` be the tensor a backward differentiates (not a tuple of tensors, not
    a PyTorch object)?"""
    if isinstance(node, cst.Name):
        return ctx.resolve(node) is None
    if isinstance(node, (cst.List, cst.Tuple, cst.Set, cst.Dict, cst.Lambda, cst.GeneratorExp,
                         cst.BaseString, cst.Integer, cst.Float, cst.Imaginary)):
        return False
    return ctx.resolve(node) is None


def _backward_target(ctx, stmt) -> Optional[_Target]:
    """The target of ``z.backward(...)`` / ``expr.backward(...)`` /
    ``torch.autograd.backward(...)`` as a statement."""
    if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1
            and isinstance(stmt.body[0], cst.Expr) and isinstance(stmt.body[0].value, cst.Call)):
        return None
    call = stmt.body[0].value
    func = call.func
    if (isinstance(func, cst.Attribute) and func.attr.value == "backward"
            and _tensor_expression(ctx, func.value)):
        value = func.value
        return _Target(value, list(call.args), "Tensor.backward",
                       value.value if isinstance(value, cst.Name) else None)
    if (ctx.resolve(func) == "torch.autograd.backward" and call.args
            and _tensor_expression(ctx, call.args[0].value)):
        args = list(call.args)
        first = args[0]
        if first.keyword is not None and first.keyword.value != "tensors":
            return None
        rest = [a.with_changes(keyword=cst.Name("gradient")) if a.keyword is not None
                and a.keyword.value == "grad_tensors" else a for a in args[1:]]
        value = first.value
        return _Target(value, rest, "torch.autograd.backward",
                       value.value if isinstance(value, cst.Name) else None)
    return None


def leaf_grads_read(ctx, rest, leaves: set) -> bool:
    """Is a leaf's ``.grad`` read in ``rest`` (the block from the backward on), in the
    statements after the enclosing ones, or in the cell's statement holding them?"""
    later = list(rest)
    for depth in range(len(ctx.blocks)):
        later += ctx.siblings(depth)[1]
    texts = [_code(s) for s in later]
    return any(re.search(rf"(?<![\w.]){re.escape(name)}\.grad\b", t) for name in leaves for t in texts)


def _steps_after(body, index: int) -> bool:
    """Does an ``optimizer.step()`` statement follow statement ``index`` of ``body``,
    before another ``backward()`` (the step this backward's gradients are for)?"""
    for s in body[index + 1:]:
        if (isinstance(s, cst.SimpleStatementLine) and len(s.body) == 1 and isinstance(s.body[0], cst.Expr)
                and isinstance(s.body[0].value, cst.Call) and isinstance(s.body[0].value.func, cst.Attribute)):
            method = s.body[0].value.func.attr.value
            if method == "step" and not s.body[0].value.args:
                return True
            if method == "backward":
                return False
    return False


def _port_backward(ctx, original, updated):
    found = _backward_target(ctx, original)
    if found is None:
        return None
    target = found.label
    api_name = found.api
    bound = _bind(found.args, _BACKWARD_SIG)
    plan = found.plan(ctx)
    if not plan.params:
        _no_leaf(ctx, original, found, plan)
        return None  # no requires_grad tensor in sight: a training step (other rules)
    body, index = ctx.blocks[-1]
    if _steps_after(body, index) and not leaf_grads_read(ctx, body[index:], set(plan.params)):
        return None  # an optimizer steps on it and no leaf's .grad is read: a training step (TRN001)
    comment = f"{target}.backward() not ported"
    st = _state(ctx)
    st.unknown.update(plan.params)  # until the backward is ported below
    if bound is None or "inputs" in bound:
        _flag(ctx, original, api_name, "inputs= / *args of backward are not ported; call mindspore.grad "
              "with grad_position for the inputs you need", comment)
        return updated
    if plan.problem:
        _flag(ctx, original, api_name, plan.problem, comment)
        return updated
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
        received = bool(ctx.functions) and p in _locals(ctx) and not created_here
        if received and not any(j != index for j in idx.zeroed.get(p, ())):
            _flag(ctx, original, api_name, f"{p} comes from outside the function, and PyTorch adds this "
                  f"backward's gradient to what {p}.grad held before the call; reset it in the function "
                  f"({p}.grad = None or {p}.grad.zero_()), or sum by hand", f"{p}.grad accumulates; not ported")
            return updated
        if loops and not created_here and not any(j != index for j in idx.zeroed.get(p, ())):
            _flag(ctx, original, api_name, f"inside this loop {p}.grad accumulates over iterations in "
                  f"PyTorch; add {p}.grad = None (or {p}.grad.zero_()) in the loop body, or sum by hand",
                  f"{p}.grad accumulates over iterations; not ported")
            return updated
    fn = ctx.fresh_name(f"_{found.base}_fn")
    def_text = _def_text(ctx, fn, plan, found.returned(ctx))
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
    scope = tuple(id(f) for f in ctx.functions)
    for p in plan.params:
        act = st.active.get(p)
        grads.append(act[0] if act and act[2] == scope else ctx.fresh_name(f"_{p}_grad"))
        st.active[p] = [grads[-1], False, scope]
        st.unknown.discard(p)
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
    retained = _retained_before(ctx) if vector is None else []
    if not retained:
        return cst.FlattenSentinel([func, assign])
    return cst.FlattenSentinel([func, assign, *_retained_grads(ctx, found, plan.params, grads, retained)])


def _retain_var(stmt) -> Optional[str]:
    """``t.retain_grad()`` as a statement -> "t"."""
    call = stmt.body[0].value if (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1
                                  and isinstance(stmt.body[0], cst.Expr)) else None
    if (isinstance(call, cst.Call) and not call.args and isinstance(call.func, cst.Attribute)
            and call.func.attr.value == "retain_grad" and isinstance(call.func.value, cst.Name)):
        return call.func.value.value
    return None


def _retains(ctx, stmt) -> Optional[list]:
    """The names ``t.retain_grad()`` / ``for t in [a, b]: t.retain_grad()`` asks PyTorch
    to keep the gradients of; None for another statement."""
    name = _retain_var(stmt)
    if name is not None:
        return [name]
    if _loop_only(stmt, _retain_var):
        return list(_list_loop(ctx, stmt) or ()) or None
    return None


def _retained_before(ctx) -> list:
    """The intermediate tensors the statements before the current one in its block (since
    the last backward) asked to keep their gradients, in order."""
    body, index = ctx.blocks[-1]
    out: list = []
    for stmt in reversed(body[:index]):
        if _BACKWARD.search(_stmt_code(ctx, stmt)):
            break
        out[:0] = _retains(ctx, stmt) or []
    return list(dict.fromkeys(out))


def _retained_grads(ctx, found: _Target, params: list, grads: list, retained: list) -> list:
    """After a backward with ``retain_grad()`` on intermediates (manual backprop lessons
    compare hand-derived gradients with ``t.grad``, often inside a helper that receives
    ``t``): each intermediate's gradient, from a function re-deriving the target from it,
    and every gradient stored as the tensor's ``.grad`` attribute (a MindSpore tensor
    takes one), so reads through any name find it."""
    out = []
    if params:
        out.append(f"{', '.join(f'{p}.grad' for p in params)} = {', '.join(grads)}\n")
    for name in retained:
        plan = _plan(ctx, found.label, inputs=[name], reads=found.reads())
        fn = ctx.fresh_name(f"_{found.base}_fn")
        text = None if plan.problem else _def_text(ctx, fn, plan, found.returned(ctx))
        if text is None or not plan.body:
            ctx.finding(_FIND, f"the gradient of {name} (retain_grad()) is not ported: "
                        + (plan.problem or f"{found.label} is not computed from {name} in this block"),
                        node=ctx.statement, api="Tensor.retain_grad",
                        comment=f"{name}.grad not ported")
            continue
        out.append(text + f"{name}.grad = {_grad_call(ctx, fn, [name], None)}\n")
    ctx.edit("GRD001", None, node=ctx.statement, api="Tensor.retain_grad",
             detail=f"{', '.join(retained)}.grad: mindspore.grad of functions re-deriving {found.label} "
                    "from each; the gradients are stored as .grad attributes")
    return list(cst.parse_module("".join(out)).body)


def slice_reads(ctx, target) -> set:
    """The names the statements computing ``target`` (an expression of the current
    statement) read, in this cell and, at the top level, earlier cells."""
    found = _Target(target, [], "", target.value if isinstance(target, cst.Name) else None)
    plan = _plan(ctx, found.label, inputs=[], reads=found.reads())
    reads = set(found.reads() or {found.name})
    for stmt in plan.reached:
        reads |= _names_of(ctx, stmt)[1]
    return reads


def next_seq() -> int:
    """A number greater than those of every statement remembered so far."""
    return next(_SEQ)


def seq_of(ctx, stmt) -> Optional[int]:
    """The order of a top-level statement of an earlier cell that bound a name still
    remembered (None: not one)."""
    for fact in _memory(ctx).values():
        if fact.stmt is stmt:
            return fact.seq
    return None


def rederive(ctx, target, inputs: list):
    """(name, text, statements) of ``def fn(): <the statements computing target>; return
    target``, the slice stopping at ``inputs`` (a model: what its parameters feed is
    re-derived); a string saying why not."""
    found = _Target(target, [], "", target.value if isinstance(target, cst.Name) else None)
    plan = _plan(ctx, found.label, inputs=inputs, reads=found.reads())
    if plan.problem:
        return plan.problem
    fn = ctx.fresh_name(f"_{found.base}_fn")
    plan.params = []
    text = _def_text(ctx, fn, plan, found.returned(ctx))
    if text is None:
        return f"a statement computing {found.label} was rewritten by another rule"
    return fn, text, plan.body


_LEAF_TEXT = re.compile(r"requires_grad\s*=\s*True|\.requires_grad_\(")


def _leaf_like(ctx, names) -> list:
    """The names (of ``names``) whose last binding before the current statement, in its
    block or an enclosing one, is a simple statement with a ``requires_grad`` text
    (``w = torch.ones(3, requires_grad=True).to(dev)``, ``t.requires_grad_()``...)."""
    out = []
    for name in sorted(names):
        for body, at in reversed(ctx.blocks):
            j = _index(ctx, body).last_binder(name, at)
            if j < 0:
                continue
            stmt = body[j]
            if isinstance(stmt, cst.SimpleStatementLine) and _LEAF_TEXT.search(_stmt_code(ctx, stmt)):
                out.append(name)
            break
    return out


def _no_leaf(ctx, original, found: _Target, plan: Plan) -> None:
    """A backward whose slice reaches no leaf the port can differentiate. When it reads
    no ``requires_grad`` tensor at all, it is a backward over a model's parameters: the
    training rules (TRN*) port or flag it. When it does read one created in another form
    (``w = torch.ones(3, requires_grad=True).to(dev)``, a tuple assignment...), the
    training rules leave it to these rules, so it is flagged here."""
    if found.api == "torch.autograd.backward":
        return  # its call handler flagged it already
    reads = set(found.reads() or {found.name})
    for stmt in plan.reached:
        reads |= _names_of(ctx, stmt)[1]
    seen = _leaf_like(ctx, reads)
    if not seen:
        return
    _state(ctx).unknown.update(seen)
    target = found.label
    if plan.problem:
        _flag(ctx, original, found.api, plan.problem, f"{target}.backward() not ported")
        return
    _flag(ctx, original, found.api,
          f"{target} is computed from {', '.join(seen)}, created with requires_grad in a form the port "
          "cannot re-derive; create each such tensor as x = torch.<factory>(..., requires_grad=True) "
          "or x = t.requires_grad_() in this block (or an enclosing one), or write the function "
          "for mindspore.grad by hand", f"{target}.backward() not ported")


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
    if (out is None or not _tensor_expression(site, out)
            or not all(isinstance(i, cst.Name) for i in ins)):
        site.finding(_FIND, "inputs must be variables and outputs one tensor for the forward "
                     "computation to be re-derived", comment=comment)
        return None
    for key in ("allow_unused", "is_grads_batched", "materialize_grads"):
        if key in bound and site.literal(bound[key].value, True) is not False:
            site.finding(_FIND, f"{key}= has no mindspore.grad counterpart (unused inputs get zero "
                         "gradients, never None)", comment=comment)
            return None
    found = _Target(out, [], site.api, out.value if isinstance(out, cst.Name) else None)
    target, params = found.label, [i.value for i in ins]
    if len(set(params)) != len(params):
        site.finding(_FIND, "an input is listed twice", comment=comment)
        return None
    plan = _plan(site, target, inputs=params, reads=found.reads())
    if plan.problem:
        site.finding(_FIND, plan.problem, comment=comment)
        return None
    fn = site.fresh_name(f"_{found.base}_fn")
    def_text = _def_text(site, fn, plan, found.returned(site))
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
    if found is None or not found.plan(site).params:
        site.finding(_FIND, "torch.autograd.backward is ported only as a statement on a tensor "
                     "computed from requires_grad tensors in the same block",
                     comment="torch.autograd.backward not ported")
        return None
    return site.updated


api("torch.autograd.backward", rule="GRD001", handler=_autograd_backward, returns=None)


# ----------------------------------------------------------------------------- .grad reads


class _GradReads(cst.CSTTransformer):
    """``x.grad`` -> the name ``swap`` maps x to (outside functions and lambdas taking a
    parameter x)."""

    def __init__(self, swap: dict):
        super().__init__()
        self.active = swap
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
            return cst.Name(self.active[updated.value.value])
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
    result = _port_statement(ctx, original, updated)
    if ctx.depth == 0:
        _remember(ctx, original)
    return result


def _port_statement(ctx, original, updated):
    st = _state(ctx)
    if isinstance(original, cst.For) and _loop_only(original, _retain_var):
        return _retain_stmt(ctx, original, updated, _retains(ctx, original) or [])
    if isinstance(original, cst.For) and st.active and (new := _list_grads(ctx, st, original, updated)) is not None:
        st.ported[id(original)] = list(new.nodes) if isinstance(new, cst.FlattenSentinel) else [new]
        return new
    if not isinstance(original, cst.SimpleStatementLine):
        st.ported[id(original)] = [updated]
        return updated
    marked = _marked_leaf(original)
    if marked is not None and _differentiated(ctx, marked):
        return _drop_marker(ctx, original, updated, marked)
    if _retain_var(original) is not None:
        holders = ctx.enclosing_statements
        if len(holders) > 1 and isinstance(holders[-2], cst.For) and _loop_only(holders[-2], _retain_var):
            return updated  # the loop's hook ports the loop
        return _retain_stmt(ctx, original, updated, [_retain_var(original)])
    new = _port_backward(ctx, original, updated)
    if new is None:
        new = _zero_stmt(ctx, original, updated)
    if new is not None:
        st.ported[id(original)] = list(new.nodes) if isinstance(new, cst.FlattenSentinel) else [new]
        return new
    code = _stmt_code(ctx, original)
    if ".retain_grad(" in code:  # not the forms ported above (layer.out.retain_grad(), a value used)
        ctx.finding(_FIND, "retain_grad() asks PyTorch to keep an intermediate tensor's gradient at the next "
                    "backward(); it is ported only as a statement on a name (t.retain_grad(), or a loop over a "
                    "list of names) with a backward() later in the same block: compute the gradient with "
                    "mindspore.grad of a function of the tensor", api="Tensor.retain_grad",
                    node=original, comment="retain_grad() not ported")
    if ".grad" in code:
        updated = _read_grads(ctx, st, original, updated, code)
    if st.active and isinstance(updated, cst.SimpleStatementLine):
        updated = _update_in_place(ctx, st, original, updated)
    if ".grad_fn" in code and " is " in code:
        updated = updated.visit(_NodeIsNone())
    if _marked_leaf(original) is None:
        # a new tensor under the same name (a requires_grad leaf or not): its .grad starts
        # empty; ``x -= ...`` and ``x.requires_grad_()`` keep the tensor, and its .grad
        for name in _rebound(original) | {_leaf_name(ctx, original)}:
            st.active.pop(name, None)
            st.unknown.discard(name)
    st.ported[id(original)] = [updated]
    return updated


def _read_grads(ctx, st, original, updated, code: str):
    """``x.grad`` -> the variable holding x's gradient since a ported backward; ``None``
    for a leaf no backward has reached yet (what PyTorch holds there)."""
    mentioned = set(_GRAD_OF.findall(code))
    swap = {k: st.active[k][0] for k in mentioned if k in st.active and _visible(ctx, k, st.active[k][2])}
    for name in sorted(mentioned - swap.keys()):
        if _gradless(ctx, st, name, code):
            swap[name] = "None"
    if not swap:
        return updated
    reads = _GradReads(swap)
    new = updated.visit(reads)
    if not reads.changed:
        return updated
    for name in dict.fromkeys(reads.changed):
        if name in st.active and _zeroes(ctx, original, name):
            st.active[name][1] = True
    ctx.edit("GRD005", None, node=original, api="Tensor.grad",
             detail="; ".join(f"{n}.grad -> {swap[n]}" + (" (no backward has reached it yet)" if swap[n] == "None"
                                                          else "") for n in dict.fromkeys(reads.changed)))
    return new


def _update_in_place(ctx, st, original, updated):
    """``w -= lr * w.grad`` on a tensor a ported backward differentiated (PyTorch: in
    place, under ``no_grad()``) -> ``ops.assign(w, w - lr * _w_grad)``: in MindSpore
    ``w -= ...`` binds a new tensor to the name, and the caller's tensor (a function's
    parameter) or a list holding it would keep the old values."""
    if not (len(original.body) == 1 and isinstance(original.body[0], cst.AugAssign)
            and isinstance(original.body[0].target, cst.Name) and len(updated.body) == 1
            and isinstance(updated.body[0], cst.AugAssign)):
        return updated
    name = original.body[0].target.value
    small = updated.body[0]
    act = st.active.get(name)
    if act is None or not _visible(ctx, name, act[2]) or type(small.operator) not in _IN_PLACE:
        return updated
    value = small.value
    text = _code(value).strip()
    if not isinstance(value, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)):
        text = f"({text})"
    assign = _ms(ctx, "mindspore.ops.assign")
    new = updated.with_changes(body=[cst.Expr(ctx.parse(
        f"{assign}({name}, {name} {_IN_PLACE[type(small.operator)]} {text})"))])
    ctx.edit("GRD005", new, node=original, api="Tensor.__isub__",
             detail=f"{_code(original.body[0]).strip()} -> {assign}(...): an update in place of the tensor")
    return new


def _retain_stmt(ctx, original, updated, names: list):
    """``t.retain_grad()`` (or a loop of them): a backward later in the block computes the
    gradients of these tensors (``_retained_grads``), so the call goes (a loop keeps its
    variable, with ``pass`` as its body); without one it is flagged."""
    body, index = ctx.blocks[-1]
    later = any(_BACKWARD.search(_stmt_code(ctx, s)) for s in body[index + 1:])
    if not later or not names:
        ctx.finding(_FIND, "retain_grad() asks PyTorch to keep an intermediate tensor's gradient at the next "
                    "backward(); it is ported only with a backward() later in the same block, and only for "
                    "tensors named in a list: compute the gradient with mindspore.grad of a function of the "
                    "tensor", node=original, api="Tensor.retain_grad", comment="retain_grad() not ported")
        return updated
    _state(ctx).ported[id(original)] = []
    if isinstance(original, cst.For):
        new = updated.with_changes(body=updated.body.with_changes(
            body=[cst.SimpleStatementLine(body=[cst.Pass()])]))
    else:
        new = updated.with_changes(body=[cst.Pass()])
    ctx.edit("GRD001", new, node=original, api="Tensor.retain_grad",
             detail=f"{', '.join(names)}.retain_grad(): the backward below computes their gradients")
    if isinstance(original, cst.SimpleStatementLine) and ctx.siblings()[0] + ctx.siblings()[1]:
        ctx.carry_lines(updated.leading_lines)
        return cst.RemovalSentinel.REMOVE
    return new


def list_loop_ported(ctx, loop) -> bool:
    """Will the loop's hook read its variable's ``.grad`` from the gradients a ported
    backward computed for each element of the list (``_list_grads``)?"""
    names, st = _list_loop(ctx, loop), _state(ctx)
    return bool(names) and all(n in st.active and _visible(ctx, n, st.active[n][2]) for n in names)


def _list_grads(ctx, st, original, updated):
    """A loop over a list of leaves whose gradients a ported backward computed:
    ``for p in params: p.grad = None`` -> ``_a_grad = _b_grad = None``; ``for p in
    params: p.data -= lr * p.grad`` -> ``for p, p_grad in zip(params, (_a_grad,
    _b_grad)): ...`` (an update of ``p`` itself becomes ``ops.assign``: ``p -= ...``
    would bind a new tensor to the loop variable and leave the list's unchanged)."""
    names = _list_loop(ctx, original)
    var = _loop_var(original)
    if not names or not isinstance(updated, cst.For) or not isinstance(updated.body, cst.IndentedBlock):
        return None
    acts = [st.active.get(n) for n in names]
    if not all(a is not None and _visible(ctx, n, a[2]) for n, a in zip(names, acts)):
        return None
    grads = [a[0] for a in acts]
    zero = _ms(ctx, "mindspore.ops.zeros_like")
    resets = []
    for line in original.body.body:  # p.grad = None / p.grad.zero_() in the loop
        if _zeroes_var(line) == var:
            resets.append("None" if _code(line).strip().endswith("None") else "zeros")
    if resets:
        for a in acts:
            a[1] = True
        if resets[-1] == "None":
            reset = f"{' = '.join(grads)} = None\n"
        else:
            reset = f"{', '.join(grads)} = {', '.join(f'{zero}({g})' for g in grads)}\n"
        reset = ctx.parse_statement(reset)
    if _loop_only(original, _zeroes_var):
        new = reset.with_changes(leading_lines=updated.leading_lines)
        ctx.edit("GRD005", new, node=original, api="Tensor.grad",
                 detail=f"{var}.grad over {', '.join(names)} -> {', '.join(grads)} reset")
        return new
    if not re.search(rf"(?<![\w.]){re.escape(var)}\.grad\b", _code(original.body)):
        return None
    name = ctx.fresh_name(f"{var}_grad")
    assign = _ms(ctx, "mindspore.ops.assign")
    body = []
    for line, new_line in zip(original.body.body, updated.body.body):
        if _zeroes_var(line) == var:
            continue
        new_line = new_line.visit(_GradReads({var: name}))
        if isinstance(line, cst.SimpleStatementLine):
            smalls = []
            for small in new_line.body:
                if (isinstance(small, cst.AugAssign) and isinstance(small.target, cst.Name)
                        and small.target.value == var and type(small.operator) in _IN_PLACE):
                    value = small.value
                    text = _code(value).strip()
                    if not isinstance(value, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)):
                        text = f"({text})"
                    small = cst.Expr(ctx.parse(f"{assign}({var}, {var} {_IN_PLACE[type(small.operator)]} {text})"))
                smalls.append(small)
            new_line = new_line.with_changes(body=smalls)
        body.append(new_line)
    if not body:
        body = [cst.SimpleStatementLine(body=[cst.Pass()])]
    where = _code(original.iter).strip()
    new = updated.with_changes(
        target=ctx.parse(f"({var}, {name})").with_changes(lpar=[], rpar=[]),
        iter=ctx.parse(f"zip({_code(updated.iter).strip()}, ({', '.join(grads)}{',' if len(grads) == 1 else ''}))"),
        body=updated.body.with_changes(body=body))
    ctx.edit("GRD005", new, node=original, api="Tensor.grad",
             detail=f"{var}.grad over {where} -> {name} from zip({where}, ({', '.join(grads)}))")
    return cst.FlattenSentinel([new, reset]) if resets else new


_IN_PLACE = {cst.AddAssign: "+", cst.SubtractAssign: "-", cst.MultiplyAssign: "*", cst.DivideAssign: "/"}


def _visible(ctx, name: str, scope: tuple) -> bool:
    """Does ``name`` at the current statement hold the leaf whose gradient a backward
    ported in the functions ``scope`` assigned (no function in between takes a
    parameter of that name)?"""
    functions = ctx.functions
    if tuple(id(f) for f in functions[:len(scope)]) != scope:
        return False
    return not any(name in _param_names(f) for f in functions[len(scope):])


def _gradless(ctx, st, name: str, code: str) -> bool:
    """Is ``name`` a leaf whose ``.grad`` is still None here: created (or marked) to
    require gradients, no backward since, and the read runs once, in order (not in a loop
    or a function, where an earlier iteration or call may have filled it)?"""
    if name in st.unknown or re.search(rf"(?<![\w.]){re.escape(name)}\.grad\s*=(?!=)|\bdel\b", code):
        return False
    if any(isinstance(h, (cst.For, cst.While, cst.FunctionDef, cst.ClassDef, cst.Lambda))
           for h in ctx.enclosing_statements[:-1]):
        return False
    return _origin(ctx, name) in ("leaf", "plain")  # a tensor not requiring grad has none either


def _rebound(stmt) -> set:
    """Names a simple statement line binds to a new value with ``=``."""
    out: set = set()
    if not isinstance(stmt, cst.SimpleStatementLine):
        return out

    def add(target):
        if isinstance(target, cst.Name):
            out.add(target.value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for el in target.elements:
                add(el.value)

    for small in stmt.body:
        if isinstance(small, cst.Assign):
            for t in small.targets:
                add(t.target)
        elif isinstance(small, cst.AnnAssign) and small.value is not None:
            add(small.target)
    return out


def _drop_marker(ctx, original, updated, name: str):
    """``x.requires_grad_()`` / ``x.requires_grad = True`` on a tensor a later backward
    differentiates: removed (x becomes a parameter of the function mindspore.grad
    differentiates)."""
    st = _state(ctx)
    what = _code(original.body[0] if isinstance(original, cst.SimpleStatementLine) else original).strip()
    what = what.splitlines()[0] + (" ..." if "\n" in what else "")
    ctx.edit("GRD001", None, node=original, api="Tensor.requires_grad_",
             detail=f"{what} removed: {name} is differentiated where a backward asks for its gradient")
    before, after = ctx.siblings()
    commented = any(line.comment is not None for line in updated.leading_lines)
    if (before or after) and (ctx.depth == 0 or not commented):
        if ctx.depth == 0:  # blank lines and comments above it stay
            ctx.carry_lines(updated.leading_lines)
        st.ported[id(original)] = []
        return cst.RemovalSentinel.REMOVE
    # the only statement of its block, or comments above it in a nested block: a pass
    # holds the place (and the comments)
    new = updated.with_changes(body=[cst.Pass()])
    st.ported[id(original)] = [new]
    return new


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
    return _differentiated(site, name)


def _top_level(ctx) -> bool:
    """Is the current statement at the top level of the cell (where a later cell sees
    what it binds)?"""
    return len(ctx.blocks) == 1


def _differentiated(ctx, name: str) -> bool:
    """Does a backward follow the current statement in its block, with ``name``
    mentioned after it?"""
    if not ctx.blocks:
        return False
    if _top_level(ctx):
        return True  # a backward in this cell or a later one may differentiate it
    block, i = ctx.blocks[-1]
    if i >= len(block) - 1:
        return False
    # per block: for each statement, whether a backward call follows it and the last
    # statement mentioning each identifier (the same matches the text search made)
    memo = _memo(ctx, "later")
    facts = memo.get(id(block))
    if facts is None:
        facts = memo[id(block)] = _later_facts(ctx, block)
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
                                         "differentiated where a backward asks for its gradient")
    return False



# ----------------------------------------------------------------------------- requires_grad_()


def _marks_leaf(site) -> bool:
    """Is this ``requires_grad_()`` call what makes its statement's leaf (``x =
    <expr>.requires_grad_()`` / ``x.requires_grad_()``), with a later backward
    differentiating x?"""
    holder = site.statement
    if not (_requires_grad_call(site.original) and isinstance(holder, cst.SimpleStatementLine)
            and len(holder.body) == 1 and getattr(holder.body[0], "value", None) is site.original):
        return False
    name = _leaf_name(site, holder)
    return name is not None and _differentiated(site, name)


def _requires_grad_(site):
    """``x = t.requires_grad_()`` -> ``x = t`` when x is differentiated by a ported
    backward (the statement form is removed by the statement hook); otherwise the
    call is left to the next entry (TNS006 flags it)."""
    if _marks_leaf(site):
        if _marked_leaf(site.statement) is not None:
            return None  # ``x.requires_grad_()``: the statement hook removes the line
        new = site.receiver
        site.edit("GRD001", new, detail=f"{_code(site.original.func.value).strip()}.requires_grad_() -> "
                                        f"{_code(new).strip()}: differentiated where a backward asks for its gradient")
        return new
    recv = site.kind_of(site.receiver_original)
    for entry in METHODS.get("requires_grad_", ()):
        if entry.rule != "GRD001" and entry.handler is not None and kind_matches(entry.receiver, recv):
            return entry.handler(site)
    return None


method("requires_grad_", "GRD001", unambiguous=_marks_leaf, handler=_requires_grad_, returns="same")


# ----------------------------------------------------------------------------- GRD007 reads

#: factories creating a new tensor (requires_grad False unless asked)
_FACTORIES = frozenset(f"torch.{n}" for n in (
    "tensor", "as_tensor", "from_numpy", "zeros", "ones", "full", "empty", "eye", "arange",
    "linspace", "logspace", "rand", "randn", "randint", "randperm", "normal", "zeros_like",
    "ones_like", "full_like", "empty_like", "rand_like", "randn_like", "randint_like",
))
_PARAMETERS = frozenset({"torch.nn.Parameter", "torch.nn.parameter.Parameter"})
#: (requires_grad, is_leaf, grad_fn) by origin; None: not decided
_KNOWN = {"leaf": ("True", "True", "None"), "plain": ("False", "True", "None"),
          "param": (None, "True", "None"), "tainted": ("True", "False", None)}
_ATTRS = ("requires_grad", "is_leaf", "grad_fn")
#: the class of the node PyTorch 2.13 records for an operation (checked on tensors)
_NODES = {cst.Add: "AddBackward0", cst.Subtract: "SubBackward0", cst.Multiply: "MulBackward0",
          cst.Divide: "DivBackward0", cst.Power: "PowBackward0", cst.Minus: "NegBackward0"}
_NODE_METHODS = frozenset({"mean", "sum", "exp", "log", "tanh", "sigmoid", "relu", "sqrt", "abs", "sin", "cos",
                           "clone"})


def _node_name(ctx, value) -> Optional[str]:
    """The class of PyTorch's grad_fn for a value computed by ``value`` (the expression a
    tensor that requires grad was assigned): the outermost operation, where it is known
    without the operands' shapes; None otherwise."""
    if isinstance(value, cst.BinaryOperation) and type(value.operator) in _NODES:
        numeric = (cst.Integer, cst.Float)
        if isinstance(value.left, numeric) or (
                isinstance(value.operator, cst.Power) and not isinstance(value.right, numeric)):
            return None  # 2 - x is RsubBackward1, x ** t is PowBackward1
        return _NODES[type(value.operator)]
    if isinstance(value, cst.UnaryOperation) and type(value.operator) in _NODES:
        return _NODES[type(value.operator)]
    if isinstance(value, cst.Call) and isinstance(value.func, (cst.Attribute, cst.Name)):
        qual = ctx.resolve(value.func) or ""
        method = value.func.attr.value if isinstance(value.func, cst.Attribute) else ""
        if qual.startswith("torch.") and len(value.args) == 1:
            method = qual[len("torch."):]
        elif qual or value.args:
            return None
        if method in _NODE_METHODS:
            return method.capitalize() + "Backward0"
    return None


class _NodeIsNone(cst.CSTTransformer):
    """``'<MulBackward0 object>' is None`` (a grad_fn read the port replaced by its
    stand-in) -> ``False`` (``is not None``: ``True``): PyTorch's node is not None, and a
    literal compared with ``is`` draws a SyntaxWarning."""

    def leave_Comparison(self, original_node, updated_node):
        left = updated_node.left
        if (len(updated_node.comparisons) == 1 and isinstance(left, cst.SimpleString)
                and _STAND_IN.fullmatch(left.value)):
            target = updated_node.comparisons[0]
            if isinstance(target.comparator, cst.Name) and target.comparator.value == "None":
                if isinstance(target.operator, cst.Is):
                    return cst.Name("False", lpar=updated_node.lpar, rpar=updated_node.rpar)
                if isinstance(target.operator, cst.IsNot):
                    return cst.Name("True", lpar=updated_node.lpar, rpar=updated_node.rpar)
        return updated_node


_STAND_IN = re.compile(r"'<(\w+Backward\d object|grad_fn of \w+)>'")


def _grad_fn_stand_in(site, name: str) -> str:
    """What the port reads for ``name.grad_fn`` of a tensor computed from one that
    requires grad: a string naming the node (what printing it shows, without the
    address), which is not None as the node is not."""
    fact = _memory(site).get(name)
    small = fact.stmt.body[0] if fact is not None and fact.stmt is not None else None
    node = _node_name(site, small.value) if isinstance(small, cst.Assign) else None
    return f"<{node} object>" if node else f"<grad_fn of {name}>"


def _mutates(name: str):
    return re.compile(rf"(?<![\w.]){re.escape(name)}\s*(?:\[[^\n]*\]\s*=(?!=)|\.\w+_\(|\.data\b"
                      rf"|\.requires_grad\s*=)")


def _origin_of(ctx, stmt, name: str) -> Optional[str]:
    """How the statement binding ``name`` made it: "leaf" (requires_grad=True),
    "plain" (a factory without it), "param" (nn.Parameter), "computed" (any other
    value), None (not a plain assignment)."""
    if _leaf_name(ctx, stmt) == name:
        return "leaf"
    if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1
            and isinstance(stmt.body[0], cst.Assign) and len(stmt.body[0].targets) == 1
            and isinstance(stmt.body[0].targets[0].target, cst.Name)
            and stmt.body[0].targets[0].target.value == name):
        return None
    value = stmt.body[0].value
    qual = ctx.resolve(value.func) if isinstance(value, cst.Call) else None
    if qual in _PARAMETERS:
        return "param"
    if qual in _FACTORIES:
        grad = next((a for a in value.args if a.keyword is not None and a.keyword.value == "requires_grad"), None)
        if grad is None or (isinstance(grad.value, cst.Name) and grad.value.value == "False"):
            return "plain"
        return None
    return "computed"


def _origin(ctx, name: str) -> Optional[str]:
    """The origin (see :func:`_origin_of`) of the tensor ``name`` holds at the current
    statement: its last binding before it in the block (or an enclosing block, outside
    functions), with no in-place change in between; None when unknown."""
    blocks = ctx.blocks
    if not blocks or _scoped(ctx, name):
        return None
    reach = 1 if ctx.functions or ctx.classes else len(blocks)
    mutates = _mutates(name)
    for depth, (body, at) in enumerate(reversed(blocks[len(blocks) - reach:])):
        idx = _index(ctx, body)
        if depth and name in _names_of(ctx, body[at])[0]:
            return None  # bound by the statement enclosing the read (a loop target...)
        j = idx.last_binder(name, at)
        if any(mutates.search(_stmt_code(ctx, body[k])) for k in range(max(j, -1) + 1, at)):
            return None
        if j >= 0 and name in idx.marks.get(j, ()):
            return "leaf"  # for p in L: p.requires_grad = True
        if j >= 0:
            origin = _origin_of(ctx, body[j], name)
            fact = _memory(ctx).get(name) if origin == "computed" else None
            return "tainted" if fact is not None and fact.stmt is body[j] and fact.tainted else origin
    fact = _memory(ctx).get(name) if reach == len(blocks) else None
    if fact is None:
        return None
    if fact.leaf:
        return "leaf"
    return "tainted" if fact.tainted else (_origin_of(ctx, fact.stmt, name) if fact.stmt is not None else None)


def _scoped(ctx, name: str) -> bool:
    """Is ``name`` a lambda parameter or a comprehension variable of the current
    statement (``[p.requires_grad for p in ...]``)?"""
    memo = _memo(ctx, "scoped")
    stmt = ctx.statement
    found = memo.get(id(stmt))
    if found is None:
        found = set()
        try:
            tree = ast.parse(textwrap.dedent(_stmt_code(ctx, stmt)))
        except SyntaxError:
            tree = None
        for node in ast.walk(tree) if tree is not None else ():
            if isinstance(node, ast.arg):
                found.add(node.arg)
            elif isinstance(node, ast.comprehension):
                found |= {n.id for n in ast.walk(node.target) if isinstance(n, ast.Name)}
        memo[id(stmt)] = found
    return name in found


def _assigned(site) -> bool:
    """Is the attribute the target of an assignment (``x.requires_grad = False``)?"""
    holder = site.statement
    if not isinstance(holder, cst.SimpleStatementLine):
        return False
    for small in holder.body:
        targets = ([t.target for t in small.targets] if isinstance(small, cst.Assign)
                   else [small.target] if isinstance(small, (cst.AugAssign, cst.AnnAssign)) else [])
        if any(t is site.original for t in targets):
            return True
        if isinstance(small, cst.Del) and small.target is site.original:
            return True
    return False


def _autograd_attr(site):
    attr = site.original.attr.value
    if _assigned(site):
        return None
    recv = site.receiver_original
    kind = site.kind_of(recv)
    if kind is not None and kind != TENSOR:
        return None
    origin = _origin(site, recv.value) if isinstance(recv, cst.Name) else None
    value = _KNOWN.get(origin, (None, None, None))[_ATTRS.index(attr)]
    who = _code(recv).strip()
    if value is not None:
        new = cst.Name(value)
        how = {"leaf": "created with requires_grad=True", "plain": "created without requires_grad",
               "param": "a Parameter", "tainted": "computed from a tensor that requires grad"}[origin]
        site.edit("GRD007", new, api=f"Tensor.{attr}", detail=f"{who}.{attr} -> {value} ({who} was {how})")
        return new
    if attr == "grad_fn" and origin == "tainted":
        text = _grad_fn_stand_in(site, recv.value)
        new = cst.SimpleString(repr(text))
        site.finding("GRD007", f"{who}.grad_fn is the node of PyTorch's recorded graph that computed {who}; "
                     f"MindSpore records no graph, so the read becomes the string {text!r} (what printing "
                     "the node shows, without its address; not None, as the node is not). Code that uses "
                     "the node itself (next_functions, hooks) has no MindSpore counterpart",
                     api="Tensor.grad_fn", comment=f"Tensor.grad_fn is PyTorch's graph node; {text!r} stands in")
        return new
    if attr == "requires_grad" and not (origin == "computed" and kind == TENSOR):
        return None  # a Parameter (or unknown): MindSpore Parameters have requires_grad
    if attr == "is_leaf" and origin is None and kind != TENSOR:
        return None  # not known to be a tensor
    why = {"requires_grad": f"in PyTorch {who} requires grad when it was computed from a tensor that "
                            "does (outside torch.no_grad()); a MindSpore tensor has no requires_grad",
           "is_leaf": f"in PyTorch {who} is a leaf unless it was computed from a tensor that requires "
                      "grad; MindSpore records no graph and its tensors have no is_leaf",
           "grad_fn": f"{who}.grad_fn is the node of PyTorch's recorded graph that produced {who}; "
                      "MindSpore records no graph and its tensors have no grad_fn"}[attr]
    site.finding("GRD007", f"{why}: replace the read with the value you expect here (True/False/None), "
                 "or drop it", api=f"Tensor.{attr}",
                 comment=f"Tensor.{attr} has no MindSpore counterpart; replace it with its value")
    return None


for _attr in _ATTRS:
    member(_attr, "GRD007", receiver=TENSOR, unambiguous=True, handler=_autograd_attr)
