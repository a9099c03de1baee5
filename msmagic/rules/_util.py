"""Small helpers shared by rule modules."""

from __future__ import annotations

import libcst as cst


def pack_positional(call: cst.Call, start: int = 0) -> cst.Call:
    """``f(a, 2, 3, k=1)`` -> ``f(a, (2, 3), k=1)``: the positional arguments from index
    ``start`` on become one tuple (for PyTorch's ``*size`` varargs where MindSpore takes
    a single shape); a spread ``f(*t.shape)`` becomes ``f((*t.shape,))``. Unchanged when
    there is at most one plain such argument, or a ``**`` mapping."""
    args = list(call.args)
    if any(a.star == "**" for a in args):
        return call
    pos = [i for i, a in enumerate(args) if a.keyword is None]
    packed = [i for i in pos if i >= start]
    spread = any(args[i].star == "*" for i in packed)
    if len(packed) < 2 and not spread:
        return call
    first, last = packed[0], packed[-1]

    def element(i):
        comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")) if i != last else (
            cst.Comma() if len(packed) == 1 else cst.MaybeSentinel.DEFAULT)
        if i != last and _has_comment(args[i].comma):  # ``torch.zeros(3,  # rows`` keeps it
            comma = args[i].comma
        if args[i].star == "*":
            return cst.StarredElement(value=args[i].value, comma=comma)
        return cst.Element(value=args[i].value, comma=comma)

    merged = cst.Arg(value=cst.Tuple(elements=[element(i) for i in packed]), comma=args[last].comma)
    return call.with_changes(args=[*args[:first], merged, *args[last + 1:]])


def _has_comment(node) -> bool:
    """Does the whitespace of ``node`` (a comma) hold a comment?"""
    ws = getattr(node, "whitespace_after", None)
    return isinstance(ws, cst.ParenthesizedWhitespace) and (
        ws.first_line.comment is not None or any(e.comment is not None for e in ws.empty_lines))


def truthy_literal(site, arg) -> bool:
    """Is the argument anything but a literal False/None/0 (e.g. ``inplace=True``)?"""
    return bool(site.literal(arg.value, default=True))


def is_pure(node) -> bool:
    """Can the expression be evaluated twice with the same result and no side effect?
    Names, attribute chains, constant subscripts of those, and literal numbers/strings
    (possibly negated)."""
    if isinstance(node, (cst.Name, cst.Integer, cst.Float, cst.SimpleString)):
        return True
    if isinstance(node, cst.Attribute):
        return is_pure(node.value)
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        return is_pure(node.expression)
    if isinstance(node, cst.Subscript):
        return is_pure(node.value) and all(
            isinstance(s.slice, cst.Index) and isinstance(s.slice.value, (cst.Integer, cst.SimpleString))
            for s in node.slice
        )
    return False


def unwrap_with(ctx, original, updated, drop):
    """A ``with`` statement without the context managers ``drop(ctx, item_node)`` picks
    (grad modes, no-op contexts): the others stay; with none left, its body takes the
    statement's place, keeping the comments on the ``with`` line and after the body."""
    if not isinstance(updated, cst.With) or original.asynchronous is not None:
        return updated
    keep = [u for o, u in zip(original.items, updated.items) if not drop(ctx, o.item)]
    if len(keep) == len(updated.items):
        return updated
    if keep:  # other context managers stay
        keep[-1] = keep[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        return updated.with_changes(items=keep, lpar=cst.MaybeSentinel.DEFAULT, rpar=cst.MaybeSentinel.DEFAULT)
    body = updated.body
    lead = list(updated.leading_lines)
    if isinstance(body, cst.SimpleStatementSuite):
        stmts = [cst.SimpleStatementLine(body=body.body, trailing_whitespace=body.trailing_whitespace)]
    else:
        stmts = list(body.body)
        if body.header.comment is not None:  # a comment on the `with` line
            lead.append(cst.EmptyLine(comment=body.header.comment))
        # comment lines after the body's last statement stay after it
        ctx.carry_lines(body.footer)
    stmts[0] = stmts[0].with_changes(leading_lines=[*lead, *stmts[0].leading_lines])
    return stmts[0] if len(stmts) == 1 else cst.FlattenSentinel(stmts)
