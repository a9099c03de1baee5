"""Stage: name resolution. Which local names reach PyTorch (through the cell's imports
and the session's), which the cell rebinds, and what a dotted expression refers to.

Full libcst scope analysis is not used: on a 2,000-line file it cost more than the parse
itself, and a cell's imports say everything the port needs. Functions and lambdas whose
parameters (or local assignments) reuse an imported name hide the import inside them;
the walk keeps that stack of shadowed names.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

MARKER = "# msmagic:"
#: top-level packages whose imports the port follows: PyTorch and the ecosystem
#: libraries notebooks import beside it (their APIs are mapped or flagged by rules)
TORCH_ROOTS = frozenset({"torch", "torchvision", "torchmetrics", "torchinfo"})


def is_torch(qual: str) -> bool:
    """Does a qualified name belong to PyTorch or a library of its ecosystem?"""
    return qual.split(".")[0] in TORCH_ROOTS


def dotted(node) -> str:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return f"{dotted(node.value)}.{node.attr.value}"
    raise TypeError(type(node).__name__)


def root_name(node) -> Optional[str]:
    """``nn`` for ``nn.functional.relu``; None when the chain does not start at a name."""
    while isinstance(node, cst.Attribute):
        node = node.value
    return node.value if isinstance(node, cst.Name) else None


def collect_imports(module: cst.Module) -> dict[str, str]:
    """local name -> fully qualified imported name, for imports at the top level of a
    cell and directly inside top-level ``if``/``try``/``with`` blocks."""
    found: dict[str, str] = {}
    for stmt in _top_statements(module.body):
        if isinstance(stmt, cst.Import):
            for alias in stmt.names:
                full = dotted(alias.name)
                if alias.asname is not None:
                    found[alias.asname.name.value] = full
                else:
                    root = full.split(".")[0]
                    found[root] = root
        elif isinstance(stmt, cst.ImportFrom) and not stmt.relative:
            if stmt.module is None or isinstance(stmt.names, cst.ImportStar):
                continue
            base = dotted(stmt.module)
            for alias in stmt.names:
                name = alias.name.value if isinstance(alias.name, cst.Name) else dotted(alias.name)
                local = alias.asname.name.value if alias.asname is not None else name
                found[local] = f"{base}.{name}"
    return found


def import_positions(module: cst.Module) -> dict[str, int]:
    """local name -> index of the first top-level statement of the cell importing it
    (what :func:`collect_imports` reads): generated code before that statement cannot
    refer to the name."""
    out: dict[str, int] = {}
    for i, stmt in enumerate(module.body):
        for local in collect_imports(cst.Module(body=[stmt])):
            out.setdefault(local, i)
    return out


def _top_statements(body):
    for stmt in body:
        if isinstance(stmt, cst.SimpleStatementLine):
            comment = stmt.trailing_whitespace.comment
            if comment is not None and MARKER in comment.value:
                continue  # an import msmagic kept on purpose binds nothing to port
            yield from stmt.body
        elif isinstance(stmt, (cst.If, cst.Try, cst.With)):
            inner = stmt.body
            if isinstance(inner, cst.IndentedBlock):
                yield from _top_statements(inner.body)
            if isinstance(stmt, cst.If) and stmt.orelse is not None:
                orelse = stmt.orelse
                if isinstance(orelse.body, cst.IndentedBlock):
                    yield from _top_statements(orelse.body.body)
            if isinstance(stmt, cst.Try):
                for handler in stmt.handlers:
                    if isinstance(handler.body, cst.IndentedBlock):
                        yield from _top_statements(handler.body.body)


def torch_bindings(module: cst.Module, imports: dict, session_torch_names: dict) -> dict[str, str]:
    """local name -> qualified torch name, for every name of the cell that reaches
    PyTorch: the session's, less those the cell rebinds, plus the cell's torch imports."""
    bindings = dict(session_torch_names)
    for name in top_level_rebinds(module):
        if name not in imports:
            bindings.pop(name, None)
    for local, qual in imports.items():
        if is_torch(qual):
            bindings[local] = qual
        else:
            bindings.pop(local, None)
    return bindings


def top_level_calls(module: cst.Module) -> dict:
    """name -> the call of a top-level ``name = call(...)`` statement (original node)."""
    out = {}
    for stmt in module.body:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if (isinstance(small, cst.Assign) and len(small.targets) == 1
                        and isinstance(small.targets[0].target, cst.Name)
                        and isinstance(small.value, cst.Call)):
                    out[small.targets[0].target.value] = small.value
    return out


def module_aliases(module: cst.Module) -> set[str]:
    """Names a cell binds to modules with ``import x`` / ``import x.y as z``."""
    out = set()
    for stmt in _top_statements(module.body):
        if isinstance(stmt, cst.Import):
            for alias in stmt.names:
                out.add(alias.asname.name.value if alias.asname is not None else dotted(alias.name).split(".")[0])
    return out


def top_level_functions(module: cst.Module) -> dict:
    """name -> the original ``def name(...)`` at the top level of a cell."""
    return {stmt.name.value: stmt for stmt in module.body if isinstance(stmt, cst.FunctionDef)}


def top_level_rebinds(module: cst.Module) -> set[str]:
    names: set[str] = set()
    for stmt in module.body:
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            names.add(stmt.name.value)
        elif isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                targets = []
                if isinstance(small, cst.Assign):
                    targets = [t.target for t in small.targets]
                elif isinstance(small, (cst.AnnAssign, cst.AugAssign)):
                    targets = [small.target]
                for t in targets:
                    names.update(target_names(t))
        elif isinstance(stmt, cst.For):
            names.update(target_names(stmt.target))
    return names


def target_names(t) -> set[str]:
    """Names an assignment target binds (``a``, ``a, (b, *c)``)."""
    if isinstance(t, cst.Name):
        return {t.value}
    if isinstance(t, (cst.Tuple, cst.List)):
        out = set()
        for el in t.elements:
            out |= target_names(el.value)
        return out
    if isinstance(t, cst.StarredElement):
        return target_names(t.value)
    return set()


def param_names(params: cst.Parameters) -> set[str]:
    out = {p.name.value for p in params.params}
    out |= {p.name.value for p in params.posonly_params}
    out |= {p.name.value for p in params.kwonly_params}
    if isinstance(params.star_arg, cst.Param):
        out.add(params.star_arg.name.value)
    if params.star_kwarg is not None:
        out.add(params.star_kwarg.name.value)
    return out


def positional_params(params: cst.Parameters) -> list[str]:
    return [p.name.value for p in list(params.posonly_params) + list(params.params)]


def same_ref(a, b) -> bool:
    """Do two expressions name the same dotted path?"""
    try:
        return dotted(a) == dotted(b)
    except TypeError:
        return False
