"""Small helpers shared by rule modules."""

from __future__ import annotations

import libcst as cst


def pack_positional(call: cst.Call, start: int = 0) -> cst.Call:
    """``f(a, 2, 3, k=1)`` -> ``f(a, (2, 3), k=1)``: the positional arguments from index
    ``start`` on become one tuple (for PyTorch's ``*size`` varargs where MindSpore takes
    a single shape). Unchanged when there is at most one such argument."""
    args = list(call.args)
    pos = [i for i, a in enumerate(args) if a.keyword is None and not a.star]
    packed = [i for i in pos if i >= start]
    if len(packed) < 2:
        return call
    first, last = packed[0], packed[-1]
    elements = [
        cst.Element(
            value=args[i].value,
            comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")) if i != last else cst.MaybeSentinel.DEFAULT,
        )
        for i in packed
    ]
    merged = cst.Arg(value=cst.Tuple(elements=elements), comma=args[last].comma)
    return call.with_changes(args=[*args[:first], merged, *args[last + 1:]])


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
