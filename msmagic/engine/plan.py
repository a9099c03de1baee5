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

from msmagic.result import Loop, Statement


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
    loops: dict = None,
) -> list[Statement]:
    """Join the input facts with what the port did to each statement."""
    loops = loops or {}
    return [
        Statement(
            i, rng, after.get(i),
            binds=tuple(sorted(b | out_binds.get(i, frozenset()))),
            reads=n,
            expression=e,
            tags=frozenset(tags.get(i, ())),
            modules=dict(modules.get(i, {})),
            loop=loops.get(i),
        )
        for i, (rng, b, n, e) in enumerate(in_facts)
    ]


# ----------------------------------------------------------------------------- loops


def loop_facts(tree: ast.Module, text: str) -> dict[int, tuple]:
    """Top-level ``for``/``while`` loops without ``else``, and the one loop of a top-level
    ``if __name__ == "__main__":`` block (statement index -> (kind, carried names, span of
    the iterable or condition in characters, the loop's first and last line, the names an
    iteration reads from outside it)). Counted like :func:`statement_facts` counts
    statements."""
    lines = text.splitlines()
    found: dict[int, tuple] = {}
    index, last_end = -1, 0
    for node in tree.body:
        start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
        if index < 0 or last_end < start:
            index += 1
        last_end = max(last_end, node.end_lineno)
        loop = node if isinstance(node, (ast.For, ast.While)) else _main_loop(node)
        if loop is not None and not loop.orelse:
            head = loop.iter if isinstance(loop, ast.For) else loop.test
            carried = _carried(loop)
            mentioned = {n.id for n in ast.walk(loop) if type(n) is ast.Name}
            needs = frozenset(mentioned - _bound_names(loop) | set(carried))
            found[index] = (_kind(loop), carried, _span(head, lines), (loop.lineno, loop.end_lineno), needs)
    return found


def _is_main_guard(node) -> bool:
    """``if __name__ == "__main__":`` (either order, no ``else``): always true in a
    notebook cell."""
    if not isinstance(node, ast.If) or node.orelse or not isinstance(node.test, ast.Compare):
        return False
    test = node.test
    if len(test.ops) != 1 or not isinstance(test.ops[0], ast.Eq):
        return False
    sides = [test.left, test.comparators[0]]
    return (any(isinstance(x, ast.Name) and x.id == "__name__" for x in sides)
            and any(isinstance(x, ast.Constant) and x.value == "__main__" for x in sides))


def _main_loop(node):
    """The one ``for``/``while`` loop directly in the body of a script's ``if __name__ ==
    "__main__":`` block (the training loop of a script pasted into a notebook), or None
    (no such block, or several loops in it)."""
    if not _is_main_guard(node):
        return None
    loops = [st for st in node.body if isinstance(st, (ast.For, ast.While))]
    return loops[0] if len(loops) == 1 else None


def loop_of(facts: tuple, code: str, after) -> "Loop | None":
    """The :class:`Loop` of an input loop whose output lines ``after`` end with a loop of
    the same kind (definitions the port hoisted may come first)."""
    if after is None:
        return None
    lines = code.splitlines(keepends=True)
    chunk = "".join(lines[after[0] - 1: after[1]])
    try:
        tree = ast.parse(chunk)
    except SyntaxError:  # pragma: no cover - the port writes whole statements
        return None
    if not tree.body:
        return None
    node = tree.body[-1]
    node = _main_loop(node) or node
    kind, carried, span, loop_lines, needs = facts
    if not isinstance(node, (ast.For, ast.While)) or _kind(node) != kind or node.orelse:
        return None
    head = node.iter if isinstance(node, ast.For) else node.test
    line, col, end_line, end_col = _span(head, chunk.splitlines())
    shift = after[0] - 1
    return Loop(kind, carried, span, (line + shift, col, end_line + shift, end_col), loop_lines, needs)


def _kind(node) -> str:
    return "for" if isinstance(node, ast.For) else "while"


def _span(node: ast.expr, lines: list[str]) -> tuple:
    """(line, column, end line, end column) of ``node``, columns in characters (ast
    gives UTF-8 byte offsets)."""
    def chars(line: int, offset: int) -> int:
        return len(lines[line - 1].encode("utf-8")[:offset].decode("utf-8", "replace"))

    return (node.lineno, chars(node.lineno, node.col_offset),
            node.end_lineno, chars(node.end_lineno, node.end_col_offset))


def _carried(loop: ast.stmt) -> tuple:
    """Names the loop body reads before binding them, in evaluation order (a value is
    read before its target is bound; ``x += 1`` reads ``x``): what an iteration takes
    from the one before. A ``for`` loop's own target is bound by the loop, not carried."""
    first: dict[str, str] = {}  # name -> "load" / "store", whichever came first

    def load(node) -> None:
        for n in _names_in(node):
            first.setdefault(n, "load")

    def store(target) -> None:
        for n in ast.walk(target):
            if isinstance(n, ast.Name):
                first.setdefault(n.id, "store")

    def run(stmts) -> None:
        for st in stmts:
            if isinstance(st, ast.Assign):
                load(st.value)
                for t in st.targets:
                    load_subscripts(t)
                    store(t)
            elif isinstance(st, ast.AugAssign):
                load(st.value)
                load(st.target)
                store(st.target)
            elif isinstance(st, ast.AnnAssign):
                if st.value is not None:
                    load(st.value)
                    store(st.target)
            elif isinstance(st, (ast.For, ast.AsyncFor)):
                load(st.iter)
                store(st.target)
                run(st.body)
                run(st.orelse)
            elif isinstance(st, (ast.While, ast.If)):
                load(st.test)
                run(st.body)
                run(st.orelse)
            elif isinstance(st, (ast.With, ast.AsyncWith)):
                for item in st.items:
                    load(item.context_expr)
                    if item.optional_vars is not None:
                        store(item.optional_vars)
                run(st.body)
            elif isinstance(st, ast.Try):
                run(st.body)
                for h in st.handlers:
                    if h.name:
                        first.setdefault(h.name, "store")
                    run(h.body)
                run(st.orelse)
                run(st.finalbody)
            elif isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                first.setdefault(st.name, "store")
            elif isinstance(st, (ast.Import, ast.ImportFrom)):
                for a in st.names:
                    first.setdefault((a.asname or a.name).split(".")[0], "store")
            else:
                load(st)

    def load_subscripts(target) -> None:  # x[i] = v and m.w = v read x, i and m
        for n in ast.walk(target):
            if isinstance(n, (ast.Subscript, ast.Attribute)):
                load(n)

    if isinstance(loop, ast.For):
        store(loop.target)
    else:
        load(loop.test)
    run(loop.body)
    stored = {n for n, how in first.items() if how == "store"}
    binds = set()
    for st in loop.body:
        binds |= _bound_names(st)
    return tuple(sorted(n for n, how in first.items() if how == "load" and n in binds and n not in stored))


def _names_in(node) -> list[str]:
    """Names an expression (or statement) reads, leaving out the names comprehensions
    and lambdas bind for themselves."""
    own: set[str] = set()
    for n in ast.walk(node):
        if isinstance(n, ast.comprehension):
            own |= {t.id for t in ast.walk(n.target) if isinstance(t, ast.Name)}
        elif isinstance(n, ast.Lambda):
            own |= {a.arg for a in n.args.args}
    return [n.id for n in ast.walk(node) if isinstance(n, ast.Name) and n.id not in own]


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
        for item in getattr(node, "items", []):  # with ... as f
            if item.optional_vars is not None:
                targets(item.optional_vars)
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
