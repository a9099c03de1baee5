"""Custom autograd functions: ``class F(torch.autograd.Function)`` with static
``forward(ctx, ...)`` / ``backward(ctx, grad)`` -> a ``mindspore.nn.Cell`` with
``construct`` and ``bprop(self, *inputs, out, dout)``; ``F.apply`` -> ``F()``."""

from __future__ import annotations

import re
import textwrap
from typing import Optional

import libcst as cst

from msmagic.engine.build import code as _code
from msmagic.engine.build import parse_expression
from msmagic.engine.spec import api, member, method, statement_hook
from msmagic.rules.registry import register

GROUP = "Autograd"
SEED = "seeds/004 Network Basic Unit: Cell › custom bprop; seeds/002 Gradient Derivation"
REF = "r2.4.10/api_mapping/pytorch_api_mapping.md (torch.autograd.Function)"

register(
    "FNC001",
    "torch.autograd.Function becomes a Cell with construct and bprop",
    group=GROUP,
    why="""
        PyTorch defines a custom gradient with a ``Function`` whose static ``forward``
        stores what the backward needs on ``ctx`` and whose ``backward`` returns one
        gradient per forward input. MindSpore attaches a custom gradient to a Cell: its
        ``bprop(self, *inputs, out, dout)`` receives the forward inputs and output
        directly, so ``ctx.save_for_backward`` disappears and ``ctx.saved_tensors``
        becomes those inputs, ``out``, or values recomputed from the forward statements.
        ``bprop`` must return a tuple with a gradient for every input, so ``None`` becomes
        ``ops.zeros_like(input)`` (MindSpore does not read ``None`` as zero: verified, it
        produced a wrong gradient). ``F.apply(x)`` becomes ``F()(x)``. Inputs that are not
        tensors need a plain ``0.0`` gradient instead of ``zeros_like``.
    """,
    seed=SEED,
    reference=REF,
    example="""
        import torch
        class MyReLU(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x.clamp(min=0)

            @staticmethod
            def backward(ctx, grad_output):
                x, = ctx.saved_tensors
                return grad_output * (x > 0).float()

        a = torch.tensor([-1.0, 0.5, 2.0], requires_grad=True)
        y = MyReLU.apply(a).sum()
        y.backward()
        ga = a.grad
    """,
)

register(
    "FNC002",
    "Custom Function that cannot become a bprop Cell",
    group=GROUP,
    finding_only=True,
    why="""
        Only the ``save_for_backward``/``saved_tensors`` protocol maps onto ``bprop``.
        ``ctx.needs_input_grad``, ``mark_dirty`` (in-place outputs),
        ``mark_non_differentiable``, ``set_materialize_grads``, values stored as ``ctx``
        attributes, default or variadic forward arguments, ``jvp``/``vmap`` and a backward
        that does not return one gradient per input have no direct counterpart: the class
        is left as it is, flagged. Write the Cell by hand: ``construct`` computes the
        forward, ``bprop(self, *inputs, out, dout)`` returns a tuple of input gradients.
    """,
    seed=SEED,
    reference=REF,
    example="""
        import torch
        class Scale(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, k):
                ctx.k = k
                return x * k

            @staticmethod
            def backward(ctx, g):
                return g * ctx.k, None
    """,
)

api("torch.autograd.Function", "mindspore.nn.Cell", rule="FNC001")

_UNSUPPORTED = ("needs_input_grad", "mark_dirty", "mark_non_differentiable", "set_materialize_grads")


def _method(body, name) -> Optional[cst.FunctionDef]:
    for stmt in body:
        if isinstance(stmt, cst.FunctionDef) and stmt.name.value == name:
            return stmt
    return None


def _plain_params(f: cst.FunctionDef) -> Optional[list]:
    p = f.params
    if p.star_arg is not cst.MaybeSentinel.DEFAULT or p.star_kwarg or p.kwonly_params or p.posonly_params:
        return None
    if any(x.default is not None for x in p.params) or len(p.params) < 1:
        return None
    return [x.name.value for x in p.params]


def _save_args(stmt, ctx) -> Optional[list]:
    """Names passed to ``ctx.save_for_backward(...)`` when ``stmt`` is that call."""
    if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1
            and isinstance(stmt.body[0], cst.Expr)):
        return None
    call = stmt.body[0].value
    if (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)
            and call.func.attr.value == "save_for_backward" and _code(call.func.value) == ctx):
        return [_code(a.value) for a in call.args]
    return None


def _lines(stmts) -> str:
    return textwrap.dedent(cst.Module(body=list(stmts)).code).strip("\n")


def _convert(ctx, cls: cst.ClassDef) -> tuple[Optional[cst.ClassDef], str]:
    body = list(cls.body.body)
    fwd, bwd = _method(body, "forward"), _method(body, "backward")
    if fwd is None or bwd is None:
        return None, "forward and backward static methods are both needed"
    extra = [s for s in body if isinstance(s, cst.FunctionDef) and s not in (fwd, bwd)]
    if extra:
        return None, f"method {extra[0].name.value} has no counterpart on a bprop Cell"
    fparams, bparams = _plain_params(fwd), _plain_params(bwd)
    if fparams is None or bparams is None or len(bparams) < 2:
        return None, "forward/backward need plain positional parameters (no defaults, *args)"
    fctx, inputs = fparams[0], fparams[1:]
    bctx, grads = bparams[0], bparams[1:]
    for f, c in ((fwd, fctx), (bwd, bctx)):
        text = _code(f.body)
        used = re.findall(rf"(?<![\w.]){c}\.(\w+)", text)
        bad = [u for u in used if u in _UNSUPPORTED or u not in ("save_for_backward", "saved_tensors")]
        if bad:
            return None, f"ctx.{bad[0]} has no bprop counterpart"
    if isinstance(fwd.body, cst.SimpleStatementSuite) or isinstance(bwd.body, cst.SimpleStatementSuite):
        return None, "one-line method bodies are not ported"
    saved, fwd_body = [], []
    for stmt in fwd.body.body:
        names = _save_args(stmt, fctx)
        if names is None:
            fwd_body.append(stmt)
        elif not all(re.fullmatch(r"\w+", n) for n in names):
            return None, "save_for_backward takes expressions; save variables"
        else:
            saved += names
    last = fwd_body[-1] if fwd_body else None
    ret = (last.body[0].value if isinstance(last, cst.SimpleStatementLine) and len(last.body) == 1
           and isinstance(last.body[0], cst.Return) else None)
    if ret is None:
        return None, "forward must end with its return statement"
    out_name = _code(ret) if isinstance(ret, cst.Name) else None
    recompute = [n for n in saved if n not in inputs and n != out_name]
    sources = {n: (n if n in inputs else "out" if n == out_name else n) for n in saved}
    # backward body: ctx.saved_tensors -> the saved values
    bwd_text = _lines(bwd.body.body)
    saved_expr = "(" + ", ".join(sources[n] for n in saved) + ("," if len(saved) == 1 else "") + ")"
    same = ", ".join(saved) + ("," if len(saved) == 1 else "")
    bwd_text = re.sub(rf"^[ \t]*\(?{re.escape(same)}\)? = {bctx}\.saved_tensors\n", "", bwd_text,
                      flags=re.M) if all(sources[n] == n for n in saved) else bwd_text
    bwd_text = re.sub(rf"(?<![\w.]){bctx}\.saved_tensors\b", saved_expr, bwd_text)
    pre = _lines(fwd_body[:-1]) + "\n" if recompute and len(fwd_body) > 1 else ""
    dout = grads[0] if len(grads) == 1 else "dout"
    unpack = "" if len(grads) == 1 else f"{', '.join(grads)} = dout\n"
    bprop_src = (f"def bprop(self, {', '.join(inputs + ['out', dout])}):\n"
                 + textwrap.indent(pre + unpack + bwd_text, "    ") + "\n")
    try:
        bprop = cst.parse_statement(bprop_src)
    except cst.ParserSyntaxError:
        return None, "the backward body could not be rebuilt"
    bprop, problem = _fix_returns(ctx, bprop, inputs)
    if problem:
        return None, problem
    construct = fwd.with_changes(
        name=cst.Name("construct"), decorators=[], leading_lines=_without_decorators(fwd),
        params=fwd.params.with_changes(params=[fwd.params.params[0].with_changes(name=cst.Name("self")),
                                               *fwd.params.params[1:]]),
        body=fwd.body.with_changes(body=fwd_body),
    )
    bprop = bprop.with_changes(leading_lines=[*_without_decorators(bwd), *bwd.lines_after_decorators])
    new_body = [construct if s is fwd else bprop if s is bwd else s for s in body]
    return cls.with_changes(body=cls.body.with_changes(body=new_body)), ""


def _without_decorators(fn: cst.FunctionDef) -> list:
    """The lines above ``fn`` once its decorators are removed: its own, and the
    comments written on and between the decorators."""
    lines = list(fn.leading_lines)
    for d in fn.decorators:
        lines += d.leading_lines
        if d.trailing_whitespace.comment is not None:
            lines.append(cst.EmptyLine(comment=d.trailing_whitespace.comment))
    return lines


class _Returns(cst.CSTTransformer):
    def __init__(self, ctx, inputs):
        super().__init__()
        self.ctx, self.inputs, self.problem = ctx, inputs, ""

    def visit_FunctionDef(self, node):
        return node.name.value == "bprop"  # nested functions keep their own returns

    def leave_Return(self, original, updated):
        value = updated.value
        items = [e.value for e in value.elements] if isinstance(value, cst.Tuple) else [value]
        if len(items) != len(self.inputs):
            self.problem = (f"backward returns {len(items)} gradient(s) for {len(self.inputs)} "
                            "forward input(s)")
            return updated
        zeros = _code(self.ctx.ref("mindspore.ops.zeros_like"))
        out = [parse_expression(f"{zeros}({x})") if isinstance(v, cst.Name) and v.value == "None"
               else v for v, x in zip(items, self.inputs)]
        text = ", ".join(_code(v) for v in out) + ("," if len(out) == 1 else "")
        return updated.with_changes(value=parse_expression(f"({text})"))


def _fix_returns(ctx, bprop, inputs):
    fixer = _Returns(ctx, inputs)
    new = bprop.visit(fixer)
    return new, fixer.problem


def _functions(ctx) -> set:
    """Names of the custom Functions this cell ported."""
    return ctx.scratch("custom_function").setdefault("classes", set())


def _earlier(ctx) -> dict:
    """Names of the custom Functions earlier cells of the session ported (a notebook
    defines the Function in one cell and calls ``MyReLU.apply`` in the next)."""
    return ctx.session_memory("custom_function")


@statement_hook("FNC001", cst.ClassDef)
def _class_hook(ctx, original, updated):
    if not any(ctx.resolve(b.value) == "torch.autograd.Function" for b in original.bases):
        _earlier(ctx).pop(original.name.value, None)  # the name now holds another class
        return updated
    new, problem = _convert(ctx, updated)
    if new is None:
        ctx.finding("FNC002", problem,
                  node=original, api="torch.autograd.Function", comment=f"custom Function not ported: {problem}")
        # the class stays a PyTorch Function: undo the base's rewrite
        ctx.forget(*(b.value for b in original.bases))
        return updated.with_changes(bases=[
            nb.with_changes(value=ctx.torch_ref("torch.autograd.Function"))
            if ctx.resolve(ob.value) == "torch.autograd.Function" else nb
            for ob, nb in zip(original.bases, updated.bases)])
    _functions(ctx).add(original.name.value)
    if ctx.at_top_level:
        _earlier(ctx)[original.name.value] = "torch.autograd.Function"
    ctx.edit("FNC001", new, node=original, api="torch.autograd.Function",
             detail=f"{original.name.value}: forward -> construct, backward -> bprop")
    return new


def _known(site) -> bool:
    recv = site.receiver_original
    return isinstance(recv, cst.Name) and (recv.value in _functions(site) or recv.value in _earlier(site))


def _apply_call(site):
    """``F.apply(x)`` -> ``F()(x)``."""
    if not _known(site):
        return None
    new = site.updated.with_changes(func=cst.Call(func=site.receiver))
    site.edit("FNC001", new, detail=f"{site.code(site.receiver)}.apply(...) -> {site.code(site.receiver)}()(...)")
    return new


def _apply_ref(site):
    """``f = F.apply`` -> ``f = F()``."""
    if not _known(site):
        return None
    new = cst.Call(func=site.receiver)
    site.edit("FNC001", new, detail=f"{site.code(site.receiver)}.apply -> {site.code(site.receiver)}()")
    return new


method("apply", "FNC001", receiver="any", unambiguous=_known, handler=_apply_call)
member("apply", "FNC001", receiver="any", unambiguous=True, handler=_apply_ref)
