"""A call the port left as PyTorch that receives MindSpore tensors: the parity report says
which call, its finding, and that MindSpore has no equivalent (not only "argument 'x'
must be Tensor, not Tensor")."""

import pytest

import msmagic
from msmagic.render.parity import render_parity_text

pytest.importorskip("mindspore")
pytest.importorskip("torch")

#: an API with no faithful MindSpore counterpart on the installed version (kept as PyTorch)
KEPT = "torch.special.airy_ai"

CELL = f"""import torch
x = torch.rand(4, 3) + 0.5
y = x * 2
z = {KEPT}(y)
w = z + 1
"""


def _parity(code):
    return msmagic.parity(code, user_ns={"__name__": "__main__"}, shadow={"__name__": "__main__"})


def _kept_finding(port):
    return [f for f in port.unsupported if f.api == KEPT]


def test_unported_call_is_named_as_the_cause():
    report = _parity(CELL)
    assert _kept_finding(report.port), "the port must flag the call it keeps"
    err = report.ms_error
    assert err is not None and err.statement == 3
    assert [f.api for f in err.unported] == [KEPT]
    f = err.unported[0]
    assert f.line == 4 and f.rule_id in ("GEN001", "API007")
    assert f"{KEPT} left as PyTorch" in report.summary()
    text = render_parity_text(report)
    assert "likely cause: line 4: " + KEPT + " was left as PyTorch (" + f.rule_id in text
    assert "MindSpore has no faithful equivalent" in text
    html = report._repr_mimebundle_()["text/html"]
    assert "Likely cause:" in html and KEPT in html


def test_unported_call_inside_a_function_is_named_too():
    cell = f"""import torch
def transform(t):
    return {KEPT}(t) * 3
x = torch.rand(4, 3) + 0.5
out = transform(x)
"""
    report = _parity(cell)
    err = report.ms_error
    assert err is not None
    # the error surfaces at the call of the function; the kept call sits in the def,
    # which the traceback passed through
    assert err.statement == 3
    assert [(f.api, f.line) for f in err.unported] == [(KEPT, 3)]


def test_an_error_with_nothing_kept_names_no_cause():
    cell = """import torch
x = torch.ones(3)
y = x.reshape(5)
"""
    report = _parity(cell)
    assert report.torch_error is not None  # PyTorch refuses the reshape: the cell's own bug
    assert report.ms_error is None or not report.ms_error.unported
    assert "likely cause" not in render_parity_text(report)
