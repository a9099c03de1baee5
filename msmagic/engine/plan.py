"""Stage: the statement plan. What the port knows about each top-level statement, handed
to parity so it never parses the cell again.

For every top-level input statement: its line range, the output lines it became, the
names it binds and mentions, whether it is a lone expression, its tags (``random``: it
draws random numbers) and the parameter-name map of each layer it constructs. Ranges,
bound and mentioned names come from one ``ast`` pass over the statement list (ten times
cheaper than the libcst parse), so the plan costs the same per line for any cell,
including one with no PyTorch at all.

``a = 1; b = 2`` is one statement here, as it is one line: the port, parity's table and
the divergence box all count it once.
"""

from __future__ import annotations

import ast

from msmagic.result import Statement


def statement_facts(tree: ast.Module) -> list[tuple[tuple[int, int], frozenset, frozenset, bool]]:
    """(line range, names bound, names mentioned, lone expression) per top-level
    statement of a parsed cell; statements sharing a line are one statement."""
    out: list[list] = []
    for node in tree.body:
        start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
        binds = _bound_names(node)
        reads = {n.id for n in ast.walk(node) if type(n) is ast.Name}
        if out and out[-1][0][1] >= start:  # "a = 1; b = 2": one line, one statement
            prev = out[-1]
            prev[0] = (prev[0][0], max(prev[0][1], node.end_lineno))
            prev[1] |= binds
            prev[2] |= reads
            prev[3] = False
        else:
            out.append([(start, node.end_lineno), binds, reads, isinstance(node, ast.Expr)])
    return [(r, frozenset(b), frozenset(n), e) for r, b, n, e in out]


def plan_code(text: str) -> list[Statement]:
    """The plan of code that was not produced by a port (explicit MindSpore code given
    to parity): statements with ranges, names and no output link."""
    from msmagic.engine.ipython import mask

    facts = statement_facts(ast.parse(mask(text).text))
    return [
        Statement(i, rng, None, binds=tuple(sorted(b)), reads=n, expression=e)
        for i, (rng, b, n, e) in enumerate(facts)
    ]


def build(
    in_facts: list,
    out_binds: dict[int, frozenset],
    after: dict[int, tuple[int, int]],
    tags: dict[int, set],
    modules: dict[int, dict],
) -> list[Statement]:
    """Join the input facts with what the port did to each statement."""
    return [
        Statement(
            i, rng, after.get(i),
            binds=tuple(sorted(b | out_binds.get(i, frozenset()))),
            reads=n,
            expression=e,
            tags=frozenset(tags.get(i, ())),
            modules=dict(modules.get(i, {})),
        )
        for i, (rng, b, n, e) in enumerate(in_facts)
    ]


def _bound_names(node: ast.stmt) -> set[str]:
    """Names an assignment-like statement binds at the cell's top level (through
    ``for``/``if``/``with``/``try`` blocks; not inside functions or classes)."""
    names: set[str] = set()

    def targets(t):
        if isinstance(t, ast.Name):
            names.add(t.id)
        elif isinstance(t, (ast.Tuple, ast.List)):
            for e in t.elts:
                targets(e)
        elif isinstance(t, ast.Starred):
            targets(t.value)

    if isinstance(node, ast.Assign):
        for t in node.targets:
            targets(t)
    elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
        targets(node.target)
    elif isinstance(node, (ast.For, ast.AsyncFor)):
        targets(node.target)
        for sub in node.body + node.orelse:
            names |= _bound_names(sub)
    elif isinstance(node, (ast.If, ast.While, ast.With, ast.AsyncWith, ast.Try)):
        for sub in getattr(node, "body", []) + getattr(node, "orelse", []):
            names |= _bound_names(sub)
        for h in getattr(node, "handlers", []):
            for sub in h.body:
                names |= _bound_names(sub)
        for sub in getattr(node, "finalbody", []):
            names |= _bound_names(sub)
    return names


def out_binds(code: str, out_ranges: dict[int, tuple[int, int]], changed: set) -> dict[int, frozenset]:
    """Names the output statements of each changed input statement bind (an unchanged
    statement binds what it bound). Only those chunks of the output are parsed, so the
    plan never holds a second tree of the whole cell."""
    lines = code.splitlines(keepends=True)
    found: dict[int, frozenset] = {}
    for i in changed:
        rng = out_ranges.get(i)
        if rng is None:
            continue
        try:
            tree = ast.parse("".join(lines[rng[0] - 1: rng[1]]))
        except SyntaxError:  # pragma: no cover - the port writes whole statements
            continue
        found[i] = frozenset().union(*(_bound_names(node) for node in tree.body))
    return found
