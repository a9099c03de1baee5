"""Axes and shapes (AXS): each mapping ported, run on both frameworks, compared."""

import pytest

import msmagic
from tests.rules import support
from msmagic.rules.registry import VERIFIED_ON

pytest.importorskip("mindspore")
pytest.importorskip("torch")

X = "import torch\nx = torch.arange(24.).reshape(2, 3, 4)\n"


def check(src, *names, rule=None, atol=1e-6):
    return support.check(src, *names, rule=rule, atol=atol)


def test_versions():
    import mindspore
    import torch

    assert mindspore.__version__ == VERIFIED_ON["mindspore"]
    assert torch.__version__.split("+")[0] == VERIFIED_ON["torch"]


@pytest.mark.parametrize("call", ["torch.transpose(x, 0, 1)", "torch.transpose(x, -1, 0)",
                                  "torch.transpose(x, dim0=2, dim1=1)"])
def test_transpose_function_swaps_two_axes(call):
    run = check(X + f"y = {call}\n", "y", rule="AXS001")
    assert "ops.swapaxes(x" in run.port.code
    assert "ops.transpose" not in run.port.code


@pytest.mark.parametrize("call", ["x.transpose(0, 1)", "x.transpose(-1, -2)", "x.transpose(dim0=0, dim1=2)",
                                  "x.view(6, 4).transpose(0, 1)"])
def test_transpose_method_becomes_swapaxes(call):
    run = check(X + f"y = {call}\n", "y", rule="AXS001")
    assert ".swapaxes(" in run.port.code and ".transpose(" not in run.port.code


def test_transpose_method_on_2d_and_4d():
    src = ("import torch\nm = torch.arange(6.).reshape(2, 3)\nt = m.transpose(0, 1)\n"
           "q = torch.arange(120.).reshape(2, 3, 4, 5).transpose(1, 2)\n")
    check(src, "t", "q", rule="AXS001")


def test_two_axis_transpose_of_an_unknown_receiver_is_a_swap():
    # uvadlc: torch.matmul(q, k.transpose(-2, -1)) in a function receiving q and k; a
    # function only ever called with a NumPy array keeps NumPy's transpose
    run = check(X + (
        "import numpy as np\n"
        "def logits(q, k):\n    return torch.matmul(q, k.transpose(-2, -1))\n"
        "def flip(a):\n    return a.transpose(1, 0)\n"
        "def named(a):\n    return a.transpose(dim0=0, dim1=2)\n"
        "y = logits(x, x)\nz = named(x)\n"
        "m = flip(np.arange(6.0).reshape(2, 3))\n"
    ), "y", "z", "m", rule="AXS001")
    assert "k.swapaxes(-2, -1)" in run.port.code and "a.swapaxes(axis0=0, axis1=2)" in run.port.code
    assert "return a.transpose(1, 0)" in run.port.code
    assert not run.port.unsupported


def test_transpose_of_an_unknown_receiver_with_computed_axes_is_left_alone():
    r = msmagic.port("import torch\ndef f(a, d):\n    return a.transpose(d, 0), a.transpose(1, 0, 2)\n")
    assert "return a.transpose(d, 0), a.transpose(1, 0, 2)" in r.code


@pytest.mark.parametrize("call,expect", [
    ("torch.permute(x, (2, 0, 1))", "ops.permute(x, (2, 0, 1))"),
    ("torch.permute(x, dims=(2, 0, -2))", "ops.permute(x, axis=(2, 0, -2))"),
])
def test_permute_function(call, expect):
    run = check(X + f"y = {call}\n", "y", rule="AXS002")
    assert expect in run.port.code


@pytest.mark.parametrize("call", ["x.permute(2, 0, 1)", "x.permute((2, 0, 1))", "x.permute(-1, 0, 1)",
                                  "x.permute(dims=(1, 2, 0))"])
def test_permute_method_unchanged(call):
    run = check(X + f"y = {call}\n", "y")
    assert call in run.port.code


@pytest.mark.parametrize("call,expect", [
    ("torch.flatten(x)", "ops.flatten(x, start_dim=0)"),
    ("torch.flatten(x, 1)", "ops.flatten(x, start_dim=1)"),
    ("torch.flatten(x, 0, 1)", "ops.flatten(x, start_dim=0, end_dim=1)"),
    ("torch.flatten(x, end_dim=-2)", "ops.flatten(x, end_dim=-2, start_dim=0)"),
])
def test_flatten_default_start_dim(call, expect):
    run = check(X + f"y = {call}\n", "y", rule="AXS003")
    assert expect in run.port.code


def test_flatten_method_and_layer_defaults_kept():
    src = X + "import torch.nn as nn\na = x.flatten()\nb = x.flatten(1)\nc = nn.Flatten()(x)\n"
    run = check(src, "a", "b", "c")
    assert "x.flatten()" in run.port.code and "nn.Flatten()(x)" in run.port.code


@pytest.mark.parametrize("call", ["torch.squeeze(s, dim=1)", "torch.squeeze(s, 1)", "torch.squeeze(s)",
                                  "torch.squeeze(s, 0)", "s.squeeze(dim=-1)", "s.squeeze(1)", "s.squeeze()"])
def test_squeeze(call):
    src = f"import torch\ns = torch.zeros(2, 1, 3, 1)\ny = {call}\n"
    run = check(src, "y")
    assert "dim=" not in run.port.code.splitlines()[-1]


def test_squeeze_keyword_renamed():
    run = check("import torch\ns = torch.zeros(2, 1, 3, 1)\na = torch.squeeze(s, dim=1)\nb = s.squeeze(dim=-1)\n",
                "a", "b", rule="AXS004")
    assert "ops.squeeze(s, axis=1)" in run.port.code and "s.squeeze(axis=-1)" in run.port.code


@pytest.mark.parametrize("call", ["m.repeat(2, 1)", "m.repeat((1, 3))", "m.repeat(2, 1, 2)"])
def test_repeat_becomes_tile(call):
    run = check(f"import torch\nm = torch.arange(6.).reshape(2, 3)\ny = {call}\n", "y", rule="AXS005")
    assert ".tile(" in run.port.code and ".repeat(" not in run.port.code


def test_repeat_on_unknown_receiver_left_and_flagged():
    r = msmagic.port("import torch\ndef twice(a):\n    return a.repeat(2, 0)\n")
    assert "a.repeat(2, 0)" in r.code
    assert [f.rule_id for f in r.unsupported] == ["GEN002"]
    # a NumPy array is no tensor: its repeat is left as it is, with nothing to flag
    r = msmagic.port("import torch\nimport numpy as np\na = np.arange(3)\nb = a.repeat(2, 0)\n")
    assert "a.repeat(2, 0)" in r.code and not r.unsupported


def test_shape_functions_and_methods():
    src = X + ("a = torch.unsqueeze(x, 0)\nb = torch.reshape(x, (4, -1))\nc = x.view(6, 4)\n"
               "d = x.view((-1,))\ne = x.reshape(-1, 4).unsqueeze(dim=1)\nf = x[:, :1].expand(2, 5, 4)\n"
               "g = x[0].t()\nh = x.T\ni = x.contiguous().view(x.size(0), -1)\n")
    run = check(src, *"abcdefghi", rule="AXS006")
    assert "ops.unsqueeze(x, 0)" in run.port.code and "ops.reshape(x, (4, -1))" in run.port.code


def test_chained_methods_are_typed():
    run = check(X + "y = x.view(6, 4).unsqueeze(0).transpose(0, 2).repeat(1, 2, 1)\n", "y")
    assert ".swapaxes(0, 2).tile(1, 2, 1)" in run.port.code
