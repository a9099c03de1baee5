"""Every rule is documented, exemplified and proven by running its example."""

import ast

import pytest

import msmagic
from msmagic.docs import DOCS_PATH, render_rules_markdown
from msmagic.parity_check import MATCH, ONLY_MS, run_pair
from msmagic.rules.registry import VERIFIED_ON, all_rules

RULES = all_rules()


def test_installed_versions_are_the_verified_ones():
    import mindspore
    import torch

    assert mindspore.__version__ == VERIFIED_ON["mindspore"]
    assert torch.__version__.split("+")[0] == VERIFIED_ON["torch"]


@pytest.mark.parametrize("rule", RULES, ids=[r.id for r in RULES])
def test_rule_is_documented(rule):
    assert rule.title and len(rule.title) < 80 and "\n" not in rule.title
    assert len(rule.why.split()) >= 20, "the explanation says what differs and why"
    assert rule.seed.startswith("seeds/")
    ast.parse(rule.example)


@pytest.mark.parametrize("rule", RULES, ids=[r.id for r in RULES])
def test_rule_example_ports_and_computes_the_same(rule):
    result = msmagic.port(rule.example)
    ast.parse(result.code)
    if rule.finding_only:
        assert rule.id in {f.rule_id for f in result.unsupported}
        return
    assert rule.id in {e.rule_id for e in result.edits}, result.code
    for name in _missing_imports(rule.example):  # torchvision: not installable with CPU torch here
        pytest.skip(f"the example's PyTorch side needs {name}, which is not installed")
    run = run_pair(rule.example, rtol=1e-4, atol=1e-5)
    assert run.torch_error is None and run.ms_error is None, run.explain()
    # values only the MindSpore side binds (grad_fn, grads) are helpers, as in
    # ParityReport.ok; every PyTorch value must be there and match
    assert any(r.status == MATCH for r in run.rows), "the example binds a comparable value"
    assert all(r.status in (MATCH, ONLY_MS) for r in run.rows), run.explain()


def _missing_imports(example: str) -> list[str]:
    import importlib.util

    roots = set()
    for node in ast.walk(ast.parse(example)):
        if isinstance(node, ast.Import):
            roots |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            roots.add(node.module.split(".")[0])
    return sorted(r for r in roots if importlib.util.find_spec(r) is None)


def test_every_rule_id_used_in_the_tables_is_registered():
    from msmagic.engine import spec
    from msmagic.rules.registry import RULES as REG

    used = {a.rule for a in spec.APIS.values()}
    used |= {m.rule for ms in spec.METHODS.values() for m in ms}
    used |= {m.rule for ms in spec.MEMBERS.values() for m in ms}
    used |= {r for a in spec.APIS.values() for r in a.drop.values()}
    assert used - set(REG) == set()


def test_docs_are_generated_from_the_registry():
    assert DOCS_PATH.read_text() == render_rules_markdown(), "run `make docs` (python -m msmagic.docs)"
