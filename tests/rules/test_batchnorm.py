"""BatchNorm (BNM): ported layers are run for several training-mode batches and in eval
mode on both sides; outputs and running statistics must agree (rtol 1e-4, atol 1e-5).

Batches are fixed random arrays handed to both namespaces (``b1``..``b3``: (8, 4, 5, 5),
``v1``..``v3``: (8, 4), ``s1``..``s3``: (8, 4, 6), ``c1``..``c3``: (2, 4, 3, 3, 3)), scaled and
shifted so the statistics move away from their initial values.
"""

import ast

import numpy as np
import pytest

import msmagic
from tests.rules.support import findings, rules, run_with_inputs

HEAD = "import torch\nimport torch.nn as nn\n"
_RNG = np.random.default_rng(1)
SHAPES = {"b": (8, 4, 5, 5), "v": (8, 4), "s": (8, 4, 6), "c": (2, 4, 3, 3, 3)}
INPUTS = {
    f"{k}{i}": (_RNG.standard_normal(shape) * 2 + 1).astype(np.float32)
    for k, shape in SHAPES.items() for i in (1, 2, 3)
}


def pair(body, check=True, **kw):
    return run_with_inputs(HEAD + body, INPUTS, check, rtol=1e-4, atol=1e-5, **kw)


def steps(x):
    """Three training-mode batches, then eval mode; the statistics are read at the end."""
    return (
        f"bn.train()\ny1 = bn({x}1)\ny2 = bn({x}2)\ny3 = bn({x}3)\n"
        f"bn.eval()\ny_eval = bn({x}1)\nmean = bn.running_mean\nvar = bn.running_var\n"
    )


OUTPUTS = ("y1", "y2", "y3", "y_eval", "mean", "var")

MOMENTUM = [
    ("nn.BatchNorm2d(4)", "nn.BatchNorm2d(4)"),
    ("nn.BatchNorm2d(4, momentum=0.3)", "nn.BatchNorm2d(4, momentum=0.7)"),
    ("nn.BatchNorm2d(4, 1e-3, 0.01, True)", "nn.BatchNorm2d(4, 1e-3, 0.99, True)"),
    ("nn.BatchNorm2d(4, momentum=m)", "nn.BatchNorm2d(4, momentum=1 - m)"),
    ("nn.BatchNorm2d(4, momentum=m / 2, affine=False)", "nn.BatchNorm2d(4, momentum=1 - (m / 2), affine=False)"),
    ("nn.BatchNorm2d(num_features=4, eps=1e-5, momentum=0.5, track_running_stats=True, device='cpu')",
     "nn.BatchNorm2d(num_features=4, eps=1e-5, momentum=0.5)"),
]


@pytest.mark.parametrize("ctor, expected", MOMENTUM, ids=[m[0] for m in MOMENTUM])
def test_training_steps_update_the_same_statistics(ctor, expected):
    run = pair(f"m = 0.25\nbn = {ctor}\n" + steps("b"))
    code = run.port.code
    assert f"bn = {expected}.set_train()" in code, code
    assert "mean = bn.moving_mean" in code and "var = bn.moving_variance" in code
    assert {"BNM001", "BNM003"} <= rules(run)
    assert run.agree(*OUTPUTS)
    assert all(r.status == "match" for r in run.rows), run.explain()
    assert not np.allclose(run.torch_ns["mean"].numpy(), 0)  # the statistics did move
    assert msmagic.port(code).code == code


@pytest.mark.parametrize("ctor, x", [("nn.BatchNorm1d(4)", "v"), ("nn.BatchNorm1d(4, momentum=0.2)", "s")])
def test_batchnorm1d_2d_and_3d_input(ctor, x):
    run = pair(f"bn = {ctor}\n" + steps(x))
    assert run.agree(*OUTPUTS)


def test_batchnorm3d_reaches_the_inner_bn2d():
    run = pair("bn = nn.BatchNorm3d(4, momentum=0.2)\n" + steps("c") + "w = bn.weight\nb = bn.bias\n")
    code = run.port.code
    assert "mean = bn.bn2d.moving_mean" in code and "var = bn.bn2d.moving_variance" in code
    assert "w = bn.bn2d.gamma" in code and "b = bn.bn2d.beta" in code
    assert run.agree(*OUTPUTS, "w", "b")


@pytest.mark.parametrize("flag, expected", [
    ("False", "use_batch_statistics=True"),
    ("flag", "use_batch_statistics=None if flag else True"),
])
def test_track_running_stats_false_uses_batch_statistics_in_both_modes(flag, expected):
    run = pair(f"flag = False\nbn = nn.BatchNorm2d(4, track_running_stats={flag})\n"
               "bn.train()\ny1 = bn(b1)\nbn.eval()\ny2 = bn(b2)\n")
    assert expected in run.port.code
    assert "BNM002" in rules(run)
    assert run.agree("y1", "y2")


def test_track_running_stats_true_keeps_mode_dependence():
    run = pair("flag = True\nbn = nn.BatchNorm2d(4, track_running_stats=flag)\n" + steps("b"))
    assert "use_batch_statistics=None if flag else True" in run.port.code
    assert run.agree(*OUTPUTS)


def test_weight_and_bias_of_known_batchnorm_become_gamma_beta():
    run = pair('''
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.bn = nn.BatchNorm1d(4)

    def forward(self, x):
        return self.bn(self.fc(x)) * self.bn.weight + self.bn.running_mean

model = Net()
y = model(v1)
w = model.bn.weight
b = model.bn.bias
fw = model.fc.weight
mean = model.bn.running_mean
''')
    code = run.port.code
    assert "self.bn.gamma + self.bn.moving_mean" in code
    assert "w = model.bn.gamma" in code and "b = model.bn.beta" in code
    assert "fw = model.fc.weight" in code  # not a BatchNorm: unchanged
    assert "BNM004" in rules(run)
    assert run.agree("y", "w", "b", "fw", "mean")
    assert all(r.status == "match" for r in run.rows), run.explain()


def test_momentum_none_is_flagged():
    run = pair("bn = nn.BatchNorm2d(4, momentum=None)\ny = bn(b1)\n")
    assert "BNM001" in findings(run)
    assert "# msmagic: BNM001 momentum=None (cumulative average) has no MindSpore equivalent" in run.port.code
    assert "momentum" not in run.port.code.split("#")[0]
    ast.parse(run.port.code)
    assert run.agree("y")  # the first batch is the same; later running stats differ


def test_num_batches_tracked_is_flagged():
    run = pair("bn = nn.BatchNorm2d(4)\nn = bn.num_batches_tracked\n", check=False)
    assert "BNM005" in findings(run)
    assert "# msmagic: BNM005 num_batches_tracked does not exist in MindSpore" in run.port.code
    ast.parse(run.port.code)


def test_batchnorm3d_parameters_synchronise_through_the_mapping_entry():
    """MindSpore's BatchNorm3d keeps gamma/beta/moving stats on an inner ``bn2d``: the
    entry's ``params`` map says so, so parity copies and compares them like 1d/2d. The
    weights are drawn at random on each side: only the copy makes the outputs agree."""
    import torch

    from msmagic.parity_check import ms_name_for, run_pair

    assert ms_name_for(torch.nn.BatchNorm3d(3), "weight") == "bn2d.gamma"
    assert ms_name_for(torch.nn.Sequential(torch.nn.BatchNorm3d(3)), "0.running_var") == "0.bn2d.moving_variance"
    src = ("import torch\nimport torch.nn as nn\n"
           "class Net(nn.Module):\n"
           "    def __init__(self):\n"
           "        super().__init__()\n"
           "        self.bn = nn.BatchNorm3d(3)\n"
           "        nn.init.uniform_(self.bn.weight, 0.5, 2.0)\n"
           "        nn.init.uniform_(self.bn.bias, -1.0, 1.0)\n"
           "    def forward(self, x):\n"
           "        return self.bn(x)\n"
           "net = Net()\n"
           "net.eval()\n"
           "x = torch.arange(3 * 2 * 2 * 2 * 2, dtype=torch.float32).reshape(2, 3, 2, 2, 2) / 10\n"
           "y = net(x)\n")
    run = run_pair(src)
    assert run.torch_error is None and run.ms_error is None, run.explain()
    assert run.agree("net.bn.weight", "net.bn.bias", "y"), run.explain()
