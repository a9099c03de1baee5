"""The API table as data, its verification records and the port-time policy they drive.

* the committed records match the registry (stale -> fail) and were made on the
  installed versions; every emitted table mapping has a verified record;
* a method on a value known to be a tensor with no verified entry is a finding;
* each class of installed-MindSpore difference is ported so that MindSpore computes
  what PyTorch computed (executed: values, shapes and dtypes) or flagged;
* ``python -m msmagic apis`` lists the table; ``docs/api_coverage.md`` is generated.
"""

import io
import json

import pytest

import msmagic
from msmagic import apis
from msmagic.apis import catalog
from msmagic.cli import main as cli
from msmagic.parity_check import run_pair
from msmagic.rules.registry import VERIFIED_ON

HEAD = "import torch\n"


def _findings(result, rule=None):
    return [f for f in result.unsupported if rule is None or f.rule_id == rule]


# ----------------------------------------------------------------------------- data


def test_records_were_made_on_the_installed_versions():
    assert apis.verification()["versions"] == {"torch": VERIFIED_ON["torch"], "mindspore": VERIFIED_ON["mindspore"]}


def test_records_match_the_registry():
    """Every mapping the engine emits has a record and no record names a mapping that is
    gone: a change to the tables without `make verify-apis` fails here."""
    keys = {e.key for e in catalog.entries()}
    records = apis.verification()["records"]
    gone = sorted(set(records) - keys)
    assert not gone, f"records for mappings no longer in the tables (run make verify-apis): {gone[:20]}"
    emitted = [e for e in catalog.entries() if e.status != "flagged"]
    missing = sorted(e.key for e in emitted if e.key not in records)
    assert not missing, f"mappings with no verification record (run make verify-apis): {missing[:20]}"


def test_every_emitted_table_mapping_is_verified():
    failing = [(e.key, apis.record(e.key)) for e in catalog.entries()
               if e.table and e.status != "flagged" and e.status != "verified"]
    assert not failing, failing[:10]


def test_table_entries_use_one_spelling_per_field():
    allowed = {"target", "rule", "sig", "ms_sig", "rename", "drop", "defaults", "unsupported", "cast",
               "fields", "inplace", "pack", "returns", "random", "flagged", "caveat", "note"}
    for key, fields in apis.table().items():
        assert set(fields) <= allowed, (key, set(fields) - allowed)
        assert ("target" in fields) != ("flagged" in fields), key
        if key.startswith("Tensor."):  # a method name, or the function form (mindspore.ops.X)
            target = fields.get("target", "")
            assert "." not in target or target.startswith("mindspore.ops."), key
        elif "target" in fields:
            assert fields["target"].startswith("mindspore."), key


def test_breadth():
    """At least 1,100 distinct PyTorch APIs mapped and verified (a module-path spelling of
    a listed name is not counted twice)."""
    assert catalog.distinct_verified(catalog.entries()) >= 1100


def test_api_coverage_doc_is_generated():
    assert catalog.DOCS_PATH.read_text() == catalog.render_markdown(), "run `make docs`"


# ----------------------------------------------------------------------------- policy


def test_unknown_method_on_a_known_tensor_is_a_finding():
    result = msmagic.port(HEAD + "x = torch.ones(3)\ny = x.frobnicate()\nz = x.is_neg()\n")
    apis_flagged = {f.api for f in _findings(result, "API005")}
    assert apis_flagged == {"Tensor.frobnicate", "Tensor.is_neg"}, result.unsupported
    assert "x.frobnicate()  # msmagic: API005" in result.code


def test_unknown_method_on_an_unknown_receiver_is_left_alone():
    result = msmagic.port(HEAD + "def f(obj):\n    return obj.frobnicate()\n")
    assert not _findings(result, "API005")


def test_statement_rule_methods_are_not_unknown():
    result = msmagic.port(HEAD + "x = torch.ones(3, requires_grad=True)\ny = (x * x).sum()\ny.backward()\n")
    assert not _findings(result, "API005"), result.unsupported


def test_unverified_keyword_is_ported_and_flagged():
    result = msmagic.port(HEAD + "x = torch.ones(3)\ny = torch.logaddexp(x, x, out=None)\n")
    found = _findings(result, "API006")
    assert found and "out=" in found[0].reason, result.unsupported
    assert "mindspore.ops.logaddexp" in result.code


def test_verified_pattern_is_silent():
    result = msmagic.port(HEAD + "x = torch.ones(3)\ny = torch.logaddexp(x, x)\n")
    assert not result.unsupported, result.unsupported
    assert "API001" in {e.rule_id for e in result.edits}


# ----------------------------------------------------------------------------- installed differences


def _agree(src, *names, atol=1e-6):
    run = run_pair(src, atol=atol)
    assert run.torch_error is None and run.ms_error is None, run.explain()
    for n in names:
        row = run.row(n)
        assert row.status == "match", run.explain()
        assert row.torch_shape == row.ms_shape, run.explain()
        assert row.torch_dtype.split(".")[-1].lower() == row.ms_dtype.lower(), run.explain()
    assert msmagic.port(run.port.code).code == run.port.code
    return run


@pytest.mark.parametrize("call", ["x.add_(y)", "x.sub_(y)", "x.div_(2)", "x.exp_()", "x.floor_divide_(y)",
                                  "x.mul_(y)", "x.abs_()", "x.clamp_(min=0.5)"])
def test_inplace_methods_rebind_and_compute_what_pytorch_computed(call):
    src = HEAD + f"x = torch.linspace(-2, 3, 6)\ny = torch.full((6,), 0.5)\n{call}\nz = x\n"
    run = _agree(src, "x", "z")
    assert "API003" in {e.rule_id for e in run.port.edits}
    assert f"x = x.{call.split('.')[1].split('_(')[0]}(" in run.port.code


def test_inplace_inside_an_expression_is_an_assignment_expression():
    run = _agree(HEAD + "x = torch.linspace(-2, 3, 6)\ny = x.mul_(2) + 1\n", "x", "y")
    assert "(x := x.mul(2))" in run.port.code


def test_inplace_inside_a_function_is_flagged_for_aliasing():
    result = msmagic.port(HEAD + "def f():\n    t = torch.ones(2)\n    t.add_(1)\n    return t\nx = f()\n")
    assert any("caller" in f.reason for f in _findings(result, "API003")), result.unsupported
    assert "t = t.add(1)" in result.code


def test_inplace_on_an_attribute_is_flagged_and_left():
    src = HEAD + "x = torch.ones(2, 3)\nx[0].add_(1)\n"
    result = msmagic.port(src)
    assert "x[0].add_(1)" in result.code
    assert _findings(result, "API003"), result.unsupported


@pytest.mark.parametrize("line, names", [
    ("order = torch.argsort(x, dim=1)", ("order",)),
    ("v, i = torch.sort(x, dim=1, descending=True)", ("v", "i")),
    ("v, i = torch.topk(x, 2)", ("v", "i")),
    ("v, i = x.topk(2, dim=1)", ("v", "i")),
    ("i = x.argsort()", ("i",)),
])
def test_index_results_are_int64_like_pytorch(line, names):
    src = HEAD + f"x = torch.tensor([[3.0, 1.0, 2.0], [0.5, 4.0, -1.0]])\n{line}\n"
    run = _agree(src, *names)
    assert "int64" in run.port.code


@pytest.mark.parametrize("line", ["d = x.equal(x)", "c = x.conj()", "dev = x.device"])
def test_apis_computing_something_else_are_not_passed_through(line):
    """Same name on mindspore.Tensor, another kind of result on 2.10: ported faithfully or
    flagged, never passed through silently."""
    src = HEAD + f"x = torch.tensor([1.0, 2.0])\n{line}\n"
    result = msmagic.port(src)
    name = line.split(" = ")[0]
    if result.unsupported:
        return
    run = _agree(src, name)
    assert run.port.edits


def test_a_corner_case_caveat_is_ported_and_flagged():
    """torch.cross differs on 2.10 only in a case the port cannot see (broadcasting):
    ported, with a finding naming it, so the cell runs without torch and computes
    PyTorch's values on ordinary inputs. torch.mm differs only for an empty inner
    dimension, as MindSpore's matmul and @ do: ported with that in its entry's note."""
    src = HEAD + ("a = torch.linspace(-1, 1, 6).reshape(2, 3)\nb = torch.linspace(0, 1, 12).reshape(3, 4)\n"
                  "y = torch.mm(a, b)\nz = a.mm(b)\nc = torch.cross(a, a * 2 + 1, dim=1)\n")
    run = run_pair(src)
    assert run.torch_error is None and run.ms_error is None and run.agree("y", "z", "c"), run.explain()
    assert "import torch" not in run.port.code
    found = {(f.line, f.rule_id) for f in run.port.unsupported}
    assert found == {(6, "API006")}
    assert "broadcast" in run.port.unsupported[0].reason


# ----------------------------------------------------------------------------- listing


def _cli(*argv):
    out, err = io.StringIO(), io.StringIO()
    rc = cli(list(argv), stdout=out, stderr=err)
    return rc, out.getvalue(), err.getvalue()


def test_cli_lists_the_table_as_json():
    rc, out, _ = _cli("apis", "--format", "json")
    assert rc == 0
    data = json.loads(out)
    assert data["versions"]["mindspore"] == VERIFIED_ON["mindspore"]
    by_key = {e["key"]: e for e in data["entries"]}
    assert by_key["torch.logaddexp"]["target"] == "mindspore.ops.logaddexp"
    assert by_key["torch.logaddexp"]["status"] == "verified"
    assert by_key["torch.logaddexp"]["dtypes"]["float32"] == "ok"
    assert by_key["Tensor.add_"]["inplace"] is True
    assert sum(data["counts"][f]["total"] for f in data["counts"]) == len(data["entries"])


def test_cli_filters_and_text_summary():
    rc, out, _ = _cli("apis", "torch.logaddexp", "Tensor.add_")
    assert rc == 0
    lines = [line for line in out.splitlines() if line.startswith(("torch.logaddexp", "Tensor.add_"))]
    assert len(lines) == 2 and "verified" in lines[0]
    assert "verified on torch" in out
    rc, out, _ = _cli("apis", "--family", "nn.functional", "--status", "verified", "--format", "markdown")
    assert rc == 0 and "| `torch.nn.functional." in out
    rc, _, err = _cli("apis", "torch.frobnicate")
    assert rc == 2 and "not in the mapping table" in err


# ----------------------------------------------------------------------------- harness


def test_a_fixed_sample_reverifies_as_committed():
    """The harness itself, on a fixed sample of entries (the same every run): what it finds
    now is what the committed records say (a full run is `make verify-apis`)."""
    from msmagic.apis import harness

    keys = harness.fixed_sample(12)
    assert len(keys) == 12
    results = harness.Pool(1).run(harness.plan_jobs(keys))
    records = harness.merge(results)
    committed = apis.verification()["records"]
    assert set(records) == set(keys)
    for key, rec in records.items():
        assert rec["status"] == committed[key]["status"], (key, rec, committed[key])
        assert rec["patterns"] == committed[key]["patterns"], key


def test_harness_compares_values_shapes_and_dtypes():
    import mindspore as ms
    import numpy as np
    import torch

    from msmagic.apis.harness import compare

    t = torch.tensor([1, 2, 3])
    assert compare(t, ms.Tensor(np.array([1, 2, 3], np.int64))) is None
    assert "dtype int32" in compare(t, ms.Tensor(np.array([1, 2, 3], np.int32)))
    assert "shape" in compare(t, ms.Tensor(np.array([[1, 2, 3]], np.int64)))
    assert "values differ" in compare(t.float(), ms.Tensor(np.array([1, 2, 3.5], np.float32)))
    assert "tuple" in compare((t, t), ms.Tensor(np.array([1, 2, 3], np.int64)))
    assert "Python number" in compare(3, ms.Tensor(np.array(3, np.int64)))


def test_random_like_keeps_a_float64_input_dtype():
    """ops.randn_like gives float32 for a float64 input on 2.10: the port writes the dtype."""
    run = run_pair(HEAD + "x = torch.ones(2, 3, dtype=torch.float64)\ny = torch.randn_like(x)\nz = torch.rand_like(x)\n")
    assert run.torch_error is None and run.ms_error is None, run.explain()
    # the MindSpore draws return PyTorch's values, compared with their dtype (float64)
    assert run.row("y").status == "match" and run.row("z").status == "match"
    assert "dtype=x.dtype" in run.port.code
    import mindspore

    ns = {}
    exec(run.port.code, ns)  # the ported code alone, without parity's copying
    assert ns["y"].dtype == mindspore.float64 and ns["z"].dtype == mindspore.float64
    assert tuple(ns["y"].shape) == (2, 3)


@pytest.mark.parametrize("line, api", [
    ("m = x.diag()", "Tensor.diag"),
    ("u = torch.linalg.svd(x)", "torch.linalg.svd"),
    ("u = x.svd()", "Tensor.svd"),
    ("k = x.kthvalue(1)", "Tensor.kthvalue"),
])
def test_results_of_another_shape_are_flagged_not_ported(line, api):
    """Same name on MindSpore 2.10, another result shape or structure: left as PyTorch with
    the difference the verification found."""
    result = msmagic.port(HEAD + f"x = torch.tensor([[1.0, 3.0], [2.0, 0.5]])\n{line}\n")
    found = [f for f in result.unsupported if f.api == api]
    assert found and found[0].rule_id == "API007", result.unsupported
    last = result.code.splitlines()[-1]
    assert line in last and "# msmagic: API007" in last  # left as written, marked


def test_tensor_attributes_that_read_the_same_are_kept():
    run = _agree(HEAD + "x = torch.arange(12.0).reshape(2, 2, 3)\ns = x.shape\nn = x.ndim\nt = x.mT\nb = x.nbytes\n",
                 "t")
    assert "s = x.shape" in run.port.code and not run.port.unsupported
    assert run.row("n").status == "match" and run.row("b").status == "match"


def test_operators_are_verified_and_integer_invert_is_flagged():
    """Operators are kept as written: their records come from op_db samples; `~` on an
    integer tensor is a logical not in MindSpore 2.10, so `~t` is flagged, `~(a > b)` not."""
    rec = apis.record("Tensor.__floordiv__")
    assert rec["status"] == "verified" and rec["dtypes"]["float32"] == "ok"
    inv = apis.record("Tensor.__invert__")
    assert inv["dtypes"]["bool"] == "ok" and inv["dtypes"]["int64"].startswith("differs")
    result = msmagic.port(HEAD + "x = torch.arange(4)\ny = ~x\nm = ~(x > 1)\n")
    assert [f.line for f in _findings(result, "API006")] == [3], result.unsupported
    run = run_pair(HEAD + "x = torch.tensor([True, False])\ny = ~(x == x)\nz = x // 1 + x % 2 - x ** 2\n")
    assert run.agree("y", "z"), run.explain()


def test_receiver_only_methods_are_those_of_the_installed_versions():
    """``receiver_methods.json`` (the methods only PyTorch's Tensor / Module / Optimizer
    has, flagged on values of unknown kind) is what the installed versions give."""
    import json

    from msmagic.apis import names

    assert json.loads(names.PATH.read_text()) == names.generate(), \
        "receiver_methods.json is stale: run python -m msmagic.apis.names"
