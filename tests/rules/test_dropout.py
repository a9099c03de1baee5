"""Dropout (DRP) and the training mode it depends on: both sides are executed.

Dropout masks are random, so training-mode outputs are compared by statistics (fraction
zeroed, scale of the survivors) on each side; inference-mode outputs must match exactly.
"""

import ast

import numpy as np
import pytest
import torch

import mindspore as ms
from msmagic.parity_check import run_pair, to_numpy
from tests.rules.support import findings, rules

HEAD = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
SHAPE = (200, 500)  # 100k elements: the zero fraction is within 0.005 of p


def pair(body, shape=SHAPE, check=True, **kw):
    arr = np.random.default_rng(0).uniform(1.0, 2.0, shape).astype(np.float32)
    run = run_pair(HEAD + body, torch_ns={"x": torch.tensor(arr)}, ms_ns={"x": ms.Tensor(arr)}, **kw)
    if check:
        assert run.torch_error is None and run.ms_error is None, run.explain()
    return run, arr


def assert_dropped(run, arr, name, p, axes=None):
    """On both sides: about ``p`` of the elements (or channels) are zero, the rest are the
    input scaled by 1/(1-p)."""
    for side, ns in (("torch", run.torch_ns), ("mindspore", run.ms_ns)):
        y = to_numpy(ns[name])
        zero = y == 0
        if axes is not None:  # channel dropout: whole channels are zero or kept
            assert np.all(zero.all(axis=axes) | (~zero).all(axis=axes)), side
            zero = zero.all(axis=axes)
        assert abs(zero.mean() - p) < 0.05, f"{side}: zero fraction {zero.mean()} for p={p}\n{run.port.code}"
        kept = y != 0
        np.testing.assert_allclose(y[kept], arr[kept] / (1 - p), rtol=1e-5, err_msg=side)


MODEL = """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.drop = nn.Dropout(p=0.5)

    def forward(self, x):
        return self.drop(x)

model = Net()
"""


def test_model_never_put_in_training_mode_drops_like_pytorch():
    run, arr = pair(MODEL + "y = model(x)\n")
    assert_dropped(run, arr, "y", 0.5)
    assert "self.set_train()" in run.port.code
    assert {"DRP001", "MOD001"} <= rules(run)


def test_eval_mode_is_identity_on_both_sides():
    run, arr = pair(MODEL + "model.eval()\ny = model(x)\n")
    assert run.agree("y"), run.explain()
    np.testing.assert_array_equal(to_numpy(run.ms_ns["y"]), arr)


def test_top_level_dropout_layer_keeps_training_behaviour():
    run, arr = pair("drop = nn.Dropout(0.5)\ny = drop(x)\n")
    assert_dropped(run, arr, "y", 0.5)
    assert "drop = nn.Dropout(p=0.5).set_train()" in run.port.code
    assert "MOD003" in rules(run)


def test_layer_built_inside_forward_keeps_training_behaviour():
    run, arr = pair("""
class Noisy(nn.Module):
    def forward(self, x):
        return nn.Dropout(0.5)(x)

y = Noisy()(x)
""")
    assert_dropped(run, arr, "y", 0.5)
    assert "nn.Dropout(p=0.5).set_train()(x)" in run.port.code


def test_positional_p_becomes_keyword_not_keep_prob():
    # nn.Dropout(0.2) on MindSpore would be keep_prob=0.2: 80% zeros
    run, arr = pair("drop = nn.Dropout(0.2)\ny = drop(x)\n")
    assert_dropped(run, arr, "y", 0.2)
    assert "nn.Dropout(p=0.2)" in run.port.code


def test_default_p_and_container_at_top_level():
    run, arr = pair("""
model = nn.Sequential(nn.Dropout())
y = model(x)
""")
    assert_dropped(run, arr, "y", 0.5)
    assert "nn.SequentialCell(nn.Dropout()).set_train()" in run.port.code


@pytest.mark.parametrize("layer,shape,axes", [
    ("nn.Dropout1d(0.5)", (64, 32, 10), (2,)),
    ("nn.Dropout2d(p=0.5)", (32, 64, 3, 3), (2, 3)),
    ("nn.Dropout3d(0.5)", (16, 64, 2, 2, 2), (2, 3, 4)),
])
def test_channel_dropout_layers(layer, shape, axes):
    run, arr = pair(f"drop = {layer}\ny = drop(x)\n", shape=shape)
    assert_dropped(run, arr, "y", 0.5, axes=axes)
    assert layer + ".set_train()" in run.port.code
    assert "DRP001" in rules(run)


def test_inplace_false_is_dropped_silently():
    run, arr = pair("drop = nn.Dropout(0.3, inplace=False)\ndrop.eval()\ny = drop(x)\n")
    assert run.agree("y"), run.explain()
    np.testing.assert_array_equal(to_numpy(run.ms_ns["y"]), arr)
    assert "nn.Dropout(p=0.3).set_train()" in run.port.code
    assert "DRP002" in rules(run) and not run.port.unsupported


def test_inplace_true_is_flagged():
    run, arr = pair("drop = nn.Dropout(p=0.5, inplace=True)\ny = drop(x)\n")
    assert "DRP002" in findings(run)
    assert "# msmagic: DRP002" in run.port.code and "inplace" not in run.port.code.split("#")[0]
    ast.parse(run.port.code)
    assert_dropped(run, arr, "y", 0.5)
    # the finding's point: PyTorch overwrote x, the port did not
    assert (to_numpy(run.torch_ns["x"]) == 0).any() and not (to_numpy(run.ms_ns["x"]) == 0).any()


@pytest.mark.parametrize("call", ["nn.Dropout(1.0)", "F.dropout(x, p=1.0)"])
def test_p_one_is_flagged(call):
    run, _ = pair(f"y = {call}\n", check=False)
    assert run.torch_error is None and isinstance(run.ms_error, (ValueError, RuntimeError))
    bad = [f for f in run.port.unsupported if f.rule_id in ("DRP001", "DRP003")]
    assert len(bad) == 1 and bad[0].line == 4
    assert "p=1 is rejected by MindSpore" in run.port.code
    ast.parse(run.port.code)


def test_int_p_is_written_as_float():
    # MindSpore's Dropout1d/2d/3d and ops.dropout raise TypeError for an int p
    run, arr = pair("""
y = nn.Dropout2d(0)(x)
z = F.dropout(x, 0)
""", shape=(4, 3, 2, 2), sync=False)
    assert run.agree("y", "z"), run.explain()
    assert "nn.Dropout2d(0.0).set_train()(x)" in run.port.code
    assert "F.dropout(x, 0.0, training=True)" in run.port.code


def test_functional_dropout_default_training_is_explicit():
    run, arr = pair("y = F.dropout(x, 0.5)\n", sync=False)
    assert_dropped(run, arr, "y", 0.5)
    assert "y = F.dropout(x, 0.5, training=True)" in run.port.code
    assert "DRP003" in rules(run)


def test_functional_dropout_training_false_matches():
    run, arr = pair("""
y = F.dropout(x, 0.5, False)
z = F.dropout(x, p=0.5, training=False, inplace=False)
""", sync=False)
    assert run.agree("y", "z"), run.explain()
    assert "F.dropout(x, 0.5, False)" in run.port.code
    assert "F.dropout(x, p=0.5, training=False)" in run.port.code


@pytest.mark.parametrize("fn,shape,axes", [
    ("dropout1d", (64, 32, 10), (2,)),
    ("dropout2d", (32, 64, 3, 3), (2, 3)),
    ("dropout3d", (16, 64, 2, 2, 2), (2, 3, 4)),
])
def test_functional_channel_dropout(fn, shape, axes):
    run, arr = pair(f"y = F.{fn}(x, p=0.5)\n", shape=shape, sync=False)
    assert_dropped(run, arr, "y", 0.5, axes=axes)
    assert f"F.{fn}(x, p=0.5, training=True)" in run.port.code


def test_functional_dropout_following_module_mode():
    run, arr = pair("""
class Net(nn.Module):
    def forward(self, x):
        return F.dropout(x, 0.5, training=self.training)

model = Net()
y_train = model(x)
model.eval()
y_eval = model(x)
""", sync=False)
    assert_dropped(run, arr, "y_train", 0.5)
    assert run.agree("y_eval"), run.explain()
    # no __init__ in PyTorch: one that sets the training mode is added
    assert "    def __init__(self):\n        super().__init__()\n        self.set_train()\n\n" in run.port.code
    np.testing.assert_array_equal(to_numpy(run.ms_ns["y_eval"]), arr)
