"""Rules are objects that own their docs, mappings and hooks; the rules package lists
them in one explicit order; rule modules see the engine only through its public
context, kinds, builders and mapping declarations."""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from pathlib import Path

import msmagic
from msmagic import rules
from msmagic.engine import spec
from msmagic.rules import registry

ROOT = Path(__file__).resolve().parent.parent
RULES_DIR = ROOT / "msmagic" / "rules"
ENGINE_DIR = ROOT / "msmagic" / "engine"


def test_order_lists_every_registered_rule_once():
    assert len(rules.ORDER) == len(set(rules.ORDER))
    assert set(rules.ORDER) == set(registry.REGISTERED)
    assert list(registry.RULES) == list(rules.ORDER)
    assert [r.id for r in registry.all_rules()] == list(rules.ORDER)


def test_every_entry_and_hook_belongs_to_an_installed_rule():
    for item in spec.DECLARED:
        assert item.rule in registry.RULES, item
    owned = {id(e) for r in registry.RULES.values() for e in r.entries + r.hooks}
    installed = list(spec.APIS.values()) + [m for ms in spec.METHODS.values() for m in ms] + [
        m for ms in spec.MEMBERS.values() for m in ms]
    assert all(id(e) in owned for e in installed)
    hooks = [h for r in registry.RULES.values() for h in r.hooks]
    assert {h.fn for h in hooks} >= set(spec.FUNCTION_HOOKS) | set(spec.CLASS_HOOKS)
    assert registry.RULES["NGR001"].hooks and registry.RULES["GRD001"].hooks


def test_removing_a_rule_from_the_order_removes_its_docs_mappings_and_hooks():
    """In a fresh interpreter: install the rules without NGR001 (the ``with
    torch.no_grad():`` rule: mapping entries and a statement hook)."""
    script = textwrap.dedent('''
        import msmagic
        from msmagic import rules
        from msmagic.docs import render_rules_markdown
        from msmagic.engine import spec
        cell = "import torch\\nx = torch.ones(2)\\nwith torch.no_grad():\\n    y = x * 2\\n"
        before = msmagic.port(cell)
        assert "with torch.no_grad()" not in before.code, before.code
        assert "NGR001" in before.rule_ids
        assert "torch.no_grad" in spec.APIS
        rules.install(tuple(r for r in rules.ORDER if r != "NGR001"))
        after = msmagic.port(cell)
        assert "NGR001" not in after.rule_ids and "NGR001" not in render_rules_markdown()
        assert "torch.no_grad" not in spec.APIS
        assert not any(h.__name__ == "_unwrap_with" for h in spec.STATEMENT_HOOKS.get(__import__("libcst").With, []))
        assert "GEN001" in after.rule_ids  # now unmapped: flagged, not silently kept
        print("ok")
    ''')
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-3000:]


def _imports(path: Path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            yield node.module, [a.name for a in node.names], node.lineno
        elif isinstance(node, ast.Import):
            for a in node.names:
                yield a.name, [], node.lineno


#: what rule modules may import from the engine
PUBLIC_FOR_RULES = {"msmagic.engine.spec", "msmagic.engine.kinds", "msmagic.engine.build",
                    "msmagic.engine.names", "msmagic.engine.context"}


def test_no_rule_module_imports_a_private_engine_name():
    problems = []
    for path in sorted(RULES_DIR.glob("*.py")):
        for module, names, line in _imports(path):
            if module == "msmagic.engine" and names:
                module = f"msmagic.engine.{names[0]}"
                names = []
            if not module.startswith("msmagic.engine"):
                continue
            if module not in PUBLIC_FOR_RULES:
                problems.append(f"{path.name}:{line} imports {module}")
            problems += [f"{path.name}:{line} imports private {n} from {module}"
                         for n in names if n.startswith("_")]
    assert not problems, problems


def test_rules_reach_no_engine_internals_through_the_context():
    for path in sorted(RULES_DIR.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr in ("_w", "state", "edit_log", "e", "t"):
                raise AssertionError(f"{path.name}:{node.lineno} reaches .{node.attr}")


def test_each_engine_module_says_its_stage_first():
    for path in sorted(ENGINE_DIR.glob("*.py")):
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))
        assert doc and len(doc.split()) >= 8, path.name


def test_kinds_are_values_parsed_once():
    from msmagic.engine.kinds import Kind

    k = Kind.of("module:torch.nn.BatchNorm2d")
    assert (k.base, k.detail) == ("module", "torch.nn.BatchNorm2d")
    assert k.satisfies("module") and k.satisfies("module:torch.nn.BatchNorm") and k.satisfies("any")
    assert not k.satisfies("tensor") and not k.satisfies("module:torch.nn.Linear")
    assert Kind.of("named:tensor").item == "tensor"
    assert spec.APIS["torch.nn.Linear"].returns.detail == "torch.nn.Linear"


def test_fresh_names_avoid_every_name_of_the_cell():
    cell = textwrap.dedent('''\
        import torch
        _y_fn = 1
        x = torch.ones(3, requires_grad=True)
        y = (x * x).sum()
        y.backward()
        g = x.grad
    ''')
    code = msmagic.port(cell).code
    assert "def _y_fn2(x):" in code and "_y_fn = 1" in code
