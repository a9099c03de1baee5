"""The layering of msmagic, checked statically (the ``ast`` of every module).

* the result and report classes are plain data: ``msmagic.result`` and
  ``msmagic.parity_check.report`` import nothing from msmagic but each other's kind
  (``msmagic.result``, ``msmagic.errors``, ``msmagic.parity_check.compare``) and the
  line alignment their diff uses (``msmagic.lines``, a leaf), at any depth;
  the one edge upwards is displaying themselves (``msmagic.render``, lazily, inside
  ``_repr_mimebundle_``);
* the renderers (``msmagic.render*``) dispatch on the object's ``render_kind``: they
  import neither ``msmagic.result`` nor the parity report nor the parity runner;
* parity never parses the cell: no module of ``msmagic.parity_check`` imports ``ast``;
* no import cycle among msmagic's modules (imports at module level).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent / "msmagic"


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(ROOT.rglob("*.py")):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _is_package(name: str) -> bool:
    return MODULES[name].name == "__init__.py"


def _resolve(module: str, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    package = module if _is_package(module) else module.rpartition(".")[0]
    for _ in range(node.level - 1):
        package = package.rpartition(".")[0]
    return f"{package}.{node.module}" if node.module else package


def _targets(module: str, node) -> list[str]:
    """The modules an import statement names (``from pkg import sub`` names ``pkg.sub``
    when that is a module, else ``pkg``)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = _resolve(module, node)
    out = []
    for alias in node.names:
        sub = f"{base}.{alias.name}"
        out.append(sub if sub in MODULES else base)
    return out


def _imports(module: str, top_level_only: bool) -> list[tuple[str, str]]:
    """(imported msmagic module, name of the enclosing function or "") pairs."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    found: list[tuple[str, str]] = []

    def visit(node, func: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                if not top_level_only:
                    visit(child, getattr(child, "name", "<lambda>"))
                continue
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                continue
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                found.extend((t, func) for t in _targets(module, child)
                             if t == "msmagic" or t.startswith("msmagic."))
            visit(child, func)

    visit(tree, "")
    return found


def test_the_module_list_is_sane():
    assert {"msmagic.result", "msmagic.parity_check", "msmagic.parity_check.report", "msmagic.render",
            "msmagic.render.parity"} <= set(MODULES)
    for gone in ("msmagic.parity_runner", "msmagic.parity_report"):
        assert gone not in MODULES


@pytest.mark.parametrize("module", ["msmagic.result", "msmagic.parity_check.report"])
def test_results_are_plain_data(module):
    allowed = {"msmagic.result", "msmagic.errors", "msmagic.parity_check.compare", "msmagic.lines"}
    bad = [(target, func) for target, func in _imports(module, top_level_only=False)
           if target not in allowed and not (target == "msmagic.render" and func == "_repr_mimebundle_")]
    assert bad == [], f"{module} imports {bad}"


def test_the_line_alignment_is_a_leaf():
    assert [target for target, _ in _imports("msmagic.lines", top_level_only=False)
            if target.startswith("msmagic")] == []


def test_the_comparison_constants_the_report_reads_import_nothing_above():
    # msmagic.parity_check.report imports msmagic.parity_check.compare, which loads the package:
    # both stay below the report
    assert [t for t, _ in _imports("msmagic.parity_check", top_level_only=True)] == []
    assert {t for t, _ in _imports("msmagic.parity_check.compare", top_level_only=False)} == set()


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m == "msmagic.render" or m.startswith("msmagic.render.")))
def test_renderers_import_no_result_class_nor_the_runner(module):
    banned = {"msmagic.result", "msmagic.parity_check", "msmagic.parity_check.report", "msmagic.parity_check.run"}
    bad = sorted({t for t, _ in _imports(module, top_level_only=False) if t in banned})
    assert bad == [], f"{module} imports {bad}"


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m == "msmagic.parity_check" or m.startswith("msmagic.parity_check.")))
def test_parity_never_parses_the_cell(module):
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            assert all(a.name != "ast" for a in node.names), f"{module} imports ast"
        if isinstance(node, ast.ImportFrom) and node.module == "ast":
            # the compile flag for top-level await is no parsing
            assert [a.name for a in node.names] == ["PyCF_ALLOW_TOP_LEVEL_AWAIT"], f"{module} imports from ast"


#: cycles that predate the layering and are not parity's: the API verification cases
#: register themselves by importing the shared ``case`` helper from msmagic.apis.cases,
#: which imports them at its end
KNOWN_CYCLES = {
    ("msmagic.apis.cases", "msmagic.apis.layer_cases"),
    ("msmagic.apis.cases", "msmagic.apis.optim_cases"),
    ("msmagic.apis.cases", "msmagic.apis.utility_cases"),
    ("msmagic.apis.cases", "msmagic.apis.torchfn_cases"),
    ("msmagic.apis.cases", "msmagic.apis.tensor_cases"),
    ("msmagic.apis.cases", "msmagic.apis.nn_cases"),
    ("msmagic.apis.cases", "msmagic.apis.linalg_cases"),
    ("msmagic.apis.cases", "msmagic.apis.dist_cases"),
    ("msmagic.apis.cases", "msmagic.apis.data_cases"),
    ("msmagic.apis.cases", "msmagic.apis.misc_cases"),
}


def test_no_import_cycle_among_modules():
    graph = {m: sorted({t for t, _ in _imports(m, top_level_only=True) if t in MODULES and t != m})
             for m in MODULES}
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []
    cycles: list[list[str]] = []

    def visit(m: str) -> None:
        state[m] = 1
        path.append(m)
        for t in graph[m]:
            if state.get(t) == 1:
                cycles.append(path[path.index(t):] + [t])
            elif t not in state:
                visit(t)
        path.pop()
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m)
    cycles = [c for c in cycles if tuple(sorted(set(c))) not in KNOWN_CYCLES]
    assert cycles == [], "import cycles: " + "; ".join(" -> ".join(c) for c in cycles)


def test_row_statuses_keep_their_published_import_path():
    """Scripts written against msmagic 0.1 (the real-world acceptance runner among them)
    import the row statuses from msmagic.lockstep."""
    from msmagic.lockstep import DIFFERS, MATCH, NOT_COMPARABLE, ONLY_MS, ONLY_TORCH
    from msmagic.parity_check import compare

    assert (MATCH, DIFFERS, ONLY_TORCH, ONLY_MS, NOT_COMPARABLE) == (
        compare.MATCH, compare.DIFFERS, compare.ONLY_TORCH, compare.ONLY_MS, compare.NOT_COMPARABLE)
