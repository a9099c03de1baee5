"""Builder helpers for rules: parse a snippet into nodes, print a node, read a literal,
build attribute chains and keyword arguments. Nodes are immutable, so parsed snippets
are cached and shared between edits.
"""

from __future__ import annotations

import ast
import functools
import inspect
import re

import libcst as cst

_EMPTY_MODULE = cst.Module(body=[])


def subclasses(base) -> frozenset:
    out, todo = set(), [base]
    while todo:
        for sub in todo.pop().__subclasses__():
            todo.append(sub)
            if not getattr(sub, "__abstractmethods__", None):
                out.add(sub)
    return frozenset(out)


#: libcst node classes of statements (a line of small statements, or a compound one)
STATEMENT_TYPES = subclasses(cst.BaseCompoundStatement) | {cst.SimpleStatementLine}
#: libcst node classes of expressions
EXPRESSION_TYPES = subclasses(cst.BaseExpression)

#: node classes that carry only formatting or an operator token: no code in them (the
#: walk never visits them; more than half the nodes of a cell are such tokens)
TOKEN_TYPES = frozenset().union(*(
    subclasses(base) | {base} for base in (
        cst.BaseParenthesizableWhitespace, cst.TrailingWhitespace, cst.EmptyLine, cst.Newline,
        cst.Comment, cst.Semicolon, cst.Colon, cst.Comma, cst.Dot, cst.AssignEqual,
        cst.LeftParen, cst.RightParen, cst.LeftSquareBracket, cst.RightSquareBracket,
        cst.LeftCurlyBrace, cst.RightCurlyBrace, cst.ImportStar, cst.Asynchronous,
        cst.BaseUnaryOp, cst.BaseBinaryOp, cst.BaseBooleanOp, cst.BaseCompOp, cst.BaseAugOp,
    )
))
_FIELD_CALL = re.compile(r'visit_(\w+)\(\s*self,\s*"(\w+)"')


@functools.lru_cache(maxsize=None)
def child_fields(cls) -> tuple:
    """(field, how) in the order libcst visits them (read from libcst's own
    ``_visit_and_replace_children``, so it follows the installed version); how:
    "required", "optional", "sentinel" (may be MaybeSentinel) or "many" (a sequence)."""
    source = inspect.getsource(cls._visit_and_replace_children)
    return tuple(
        (name, "many" if how in ("sequence", "body_sequence", "iterable") else how)
        for how, name in _FIELD_CALL.findall(source)
    )


def child_nodes(node):
    """The children of ``node`` that can hold code, in source order."""
    for name, how in child_fields(type(node)):
        value = getattr(node, name)
        if how == "many" and isinstance(value, (tuple, list)):
            for item in value:
                if type(item) not in TOKEN_TYPES:
                    yield item
        elif isinstance(value, cst.CSTNode) and type(value) not in TOKEN_TYPES:
            yield value


def descendants(node):
    """``node`` and everything under it that can hold code, depth first in source order
    (plain attribute reads: a libcst visitor would rebuild or dispatch on every node)."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(list(child_nodes(n))))


_TARGETS = {
    cst.AssignTarget: ("target",), cst.AugAssign: ("target",), cst.AnnAssign: ("target",),
    cst.For: ("target",), cst.CompFor: ("target",), cst.AsName: ("name",), cst.NamedExpr: ("target",),
    cst.Param: ("name",),
}


def binds(node, name: str, header_only: bool = False) -> bool:
    """Does ``node`` (a statement, or part of one) bind ``name`` anywhere: an assignment,
    a loop or comprehension target, ``as``, ``:=``, a parameter? ``header_only``: only in
    the node's own header (a ``for`` target, a ``def``'s parameters, ``with ... as``), not
    in its body."""
    if header_only and isinstance(getattr(node, "body", None), cst.BaseSuite):
        node = node.with_changes(body=cst.IndentedBlock(body=[]))
        if isinstance(node, (cst.For, cst.While, cst.If)):
            node = node.with_changes(orelse=None)
    for n in descendants(node):
        fields = _TARGETS.get(type(n))
        if not fields:
            continue
        for f in fields:
            target = getattr(n, f, None)
            if target is not None and any(type(t) is cst.Name and t.value == name for t in descendants(target)):
                return True
    return False


@functools.lru_cache(maxsize=2048)
def parse_expression(text: str) -> cst.BaseExpression:
    return cst.parse_expression(text)


@functools.lru_cache(maxsize=512)
def parse_statement(text: str):
    return cst.parse_statement(text)


def code(node) -> str:
    """The source text of a node."""
    return _EMPTY_MODULE.code_for_node(node)


def literal(node, default=None):
    """The Python value of a literal expression, or ``default``."""
    try:
        return ast.literal_eval(code(node).strip())
    except Exception:
        return default


def attr_chain(root: str, rest: list[str]) -> cst.BaseExpression:
    """``root.a.b`` for rest ``["a", "b"]``."""
    node: cst.BaseExpression = cst.Name(root)
    for part in rest:
        node = cst.Attribute(value=node, attr=cst.Name(part))
    return node


#: ``=`` of a keyword argument written the PEP 8 way (no spaces around it)
KEYWORD_EQUAL = cst.AssignEqual(
    whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")
)


def keyword_arg(name: str, value: cst.BaseExpression) -> cst.Arg:
    """``name=value``."""
    return cst.Arg(keyword=cst.Name(name), value=value, equal=KEYWORD_EQUAL)


def comments_in(node) -> list:
    """The comments in ``node`` (whitespace included), in source order (a walk over
    ``children``: a libcst visitor dispatches on every node and costs several times more)."""
    found, stack = [], [node]
    while stack:
        n = stack.pop()
        if type(n) is cst.Comment:
            found.append(n)
        else:
            stack.extend(reversed(n.children))
    return found


def carry_comments(kept: list, dropped: cst.Arg) -> None:
    """Keep the comments of an argument a rewrite removes (``device="cpu",  # where`` on
    its own line of a call) in the call: on lines of their own after the comma of the
    last argument kept before it (``kept[-1]``), at the dropped argument's indentation.
    Nothing is kept when no argument comes before it."""
    comments = comments_in(dropped)
    if not comments or not kept or not isinstance(kept[-1].comma, cst.Comma):
        return
    comma = kept[-1].comma
    ws = comma.whitespace_after
    theirs = dropped.comma.whitespace_after if isinstance(dropped.comma, cst.Comma) else None
    if (isinstance(ws, cst.SimpleWhitespace) and isinstance(theirs, cst.ParenthesizedWhitespace)
            and len(comments_in(theirs)) == len(comments)):
        new_ws = theirs  # ``a, b=1,  # note`` + newline: the comment ends the line it was on
    elif isinstance(ws, cst.ParenthesizedWhitespace):
        new_ws = ws.with_changes(empty_lines=[*ws.empty_lines, *(
            cst.EmptyLine(indent=ws.indent, whitespace=ws.last_line, comment=c) for c in comments)])
    elif isinstance(theirs, cst.ParenthesizedWhitespace):
        lines = [cst.EmptyLine(indent=theirs.indent, whitespace=theirs.last_line, comment=c) for c in comments[1:]]
        new_ws = theirs.with_changes(first_line=cst.TrailingWhitespace(
            whitespace=cst.SimpleWhitespace("  "), comment=comments[0]), empty_lines=lines)
    else:
        return
    kept[-1] = kept[-1].with_changes(comma=comma.with_changes(whitespace_after=new_ws))


def join_args(new_args: list[cst.Arg], old_args) -> list[cst.Arg]:
    """Separators between rewritten arguments; the last argument keeps the call's
    original trailing-comma style, so multi-line calls stay multi-line."""
    if not new_args:
        return new_args
    old_args = list(old_args)
    trailing = old_args[-1].comma if old_args else cst.MaybeSentinel.DEFAULT
    sep = next(
        (a.comma for a in old_args[:-1] if isinstance(a.comma, cst.Comma)),
        cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")),
    )
    if isinstance(trailing, cst.Comma) and "\n" in code(trailing) and not any(
        "\n" in code(a.comma) for a in old_args[:-1] if isinstance(a.comma, cst.Comma)
    ):
        sep = trailing  # one argument per line, closing bracket on its own line
    out = []
    for i, a in enumerate(new_args):
        if i == len(new_args) - 1:
            # an argument that was followed by one the rewrite removed keeps its comma when
            # a comment follows it (``bias=True,  # b`` then ``device='cpu')``)
            keep = isinstance(a.comma, cst.Comma) and a.comma is not trailing and comments_in(a.comma)
            out.append(a if keep else a.with_changes(comma=trailing))
        elif isinstance(a.comma, cst.Comma) and a.comma is not trailing:
            out.append(a)
        else:
            out.append(a.with_changes(comma=sep))
    return out
