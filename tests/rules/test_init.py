"""nn.init -> set_data(initializer(...)): deterministic fills compared exactly, random
distributions checked statistically in both frameworks against the theoretical values
PyTorch's arguments imply."""

import math

import libcst as cst
import numpy as np
import pytest

import msmagic
from msmagic.parity_check import run_pair, to_numpy

HEAD = "import math\nimport torch\nimport torch.nn as nn\n"


def _weights(src, layer="layer", attr="weight"):
    """Run the cell on both sides; the initialised parameter from each side."""
    run = run_pair(HEAD + src)
    assert run.torch_error is None and run.ms_error is None, run.explain()
    t = to_numpy(getattr(run.torch_ns[layer], attr))
    m = to_numpy(getattr(run.ms_ns[layer], attr))
    assert t.shape == m.shape and m.dtype == np.float32, run.explain()
    return run, t, m


def _check_std(run, arrays, std, *, mean=0.0, rel=0.03):
    for side, a in zip(("torch", "mindspore"), arrays):
        assert abs(float(a.mean()) - mean) < 0.05 * std, (side, a.mean(), run.port.code)
        assert abs(float(a.std()) / std - 1) < rel, (side, a.std(), std, run.port.code)


def _rules(run):
    return [e.rule_id for e in run.port.edits]


# ----------------------------------------------------------------------------- exact fills


def test_constant_zeros_ones_exact_and_forms():
    src = (
        "layer = nn.Linear(4, 3)\n"
        "nn.init.constant_(layer.weight, 0.25)\n"
        "nn.init.ones_(tensor=layer.bias)\n"
        "other = nn.Linear(3, 3)\n"
        "nn.init.constant_(tensor=other.weight, val=-1.5)\n"
        "nn.init.zeros_(other.bias)\n"
        "square = nn.Linear(3, 3, bias=False)\n"
        "nn.init.eye_(square.weight)\n"
    )
    run = run_pair(HEAD + src)
    assert run.agree("layer.weight", "layer.bias", "other.weight", "other.bias", "square.weight"), run.explain()
    code = run.port.code
    assert "layer.weight.set_data(initializer(Constant(value=0.25), layer.weight.shape, layer.weight.dtype))" in code
    assert "layer.bias.set_data(initializer(One(), layer.bias.shape, layer.bias.dtype))" in code
    assert "Constant(value=-1.5)" in code and "Zero()" in code and "Identity()" in code
    assert "from mindspore.common.initializer import initializer" in code
    assert _rules(run).count("INI001") == 5
    np.testing.assert_array_equal(to_numpy(run.ms_ns["square"].weight), np.eye(3, dtype=np.float32))


def test_init_inside_module_class_and_data_attribute():
    src = (
        "class Net(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.fc = nn.Linear(5, 2)\n"
        "        nn.init.constant_(self.fc.weight.data, 0.5)\n"
        "        nn.init.zeros_(self.fc.bias)\n"
        "    def forward(self, x):\n"
        "        return self.fc(x)\n"
        "net = Net()\n"
        "fresh = Net()\n"
        "y = fresh(torch.ones(1, 5))\n"
    )
    run = run_pair(HEAD + src, sync=False)  # no copying: the init itself must agree
    assert run.agree("fresh.fc.weight", "fresh.fc.bias", "y"), run.explain()
    assert "self.fc.weight.set_data(initializer(Constant(value=0.5), self.fc.weight.shape" in run.port.code
    assert ".data" not in run.port.code


def test_return_value_is_the_parameter():
    run = run_pair(HEAD + "layer = nn.Linear(2, 2)\nw = nn.init.ones_(layer.weight)\ntotal = w.sum().item()\n")
    assert run.agree("total", "layer.weight"), run.explain()
    assert "w = layer.weight.set_data(" in run.port.code


# ----------------------------------------------------------------------------- random distributions


@pytest.mark.parametrize("gain", [1.0, 2.0])
def test_xavier_uniform_bound_and_std(gain):
    run, t, m = _weights(f"layer = nn.Linear(512, 256)\nnn.init.xavier_uniform_(layer.weight, gain={gain})\n")
    bound = gain * math.sqrt(6.0 / (512 + 256))
    for a in (t, m):
        assert np.abs(a).max() <= bound + 1e-7 and np.abs(a).max() > 0.99 * bound
    _check_std(run, (t, m), bound / math.sqrt(3))
    assert f"XavierUniform(gain={gain})" in run.port.code and "INI001" in _rules(run)


def test_xavier_normal_conv_fans():
    run, t, m = _weights("layer = nn.Conv2d(32, 64, 3)\nnn.init.xavier_normal_(layer.weight)\n")
    fan_in, fan_out = 32 * 9, 64 * 9
    _check_std(run, (t, m), math.sqrt(2.0 / (fan_in + fan_out)))
    assert "XavierNormal()" in run.port.code


def test_kaiming_uniform_relu_fan_in():
    run, t, m = _weights(
        "layer = nn.Linear(512, 256)\nnn.init.kaiming_uniform_(layer.weight, mode='fan_in', nonlinearity='relu')\n")
    bound = math.sqrt(2.0) * math.sqrt(3.0 / 512)
    for a in (t, m):
        assert bound * 0.99 < np.abs(a).max() <= bound + 1e-7
    _check_std(run, (t, m), bound / math.sqrt(3))
    assert "HeUniform(mode='fan_in', nonlinearity='relu')" in run.port.code
    assert "INI002" in _rules(run)


def test_kaiming_normal_positional_slope_fan_out_conv():
    run, t, m = _weights("layer = nn.Conv2d(32, 64, 3)\nnn.init.kaiming_normal_(layer.weight, 0.2, 'fan_out')\n")
    gain = math.sqrt(2.0 / (1 + 0.2 ** 2))  # leaky_relu with slope a
    _check_std(run, (t, m), gain / math.sqrt(64 * 9))
    assert "HeNormal(negative_slope=0.2, mode='fan_out')" in run.port.code


def test_kaiming_uniform_default_slope_expression():
    # the default in PyTorch's own Linear.reset_parameters: a=math.sqrt(5)
    run, t, m = _weights("layer = nn.Linear(512, 128)\nnn.init.kaiming_uniform_(layer.weight, a=math.sqrt(5))\n")
    bound = math.sqrt(2.0 / 6) * math.sqrt(3.0 / 512)
    for a in (t, m):
        assert bound * 0.99 < np.abs(a).max() <= bound + 1e-7
    assert "HeUniform(negative_slope=math.sqrt(5))" in run.port.code


def test_normal_mean_std_and_default_sigma():
    run, t, m = _weights("layer = nn.Linear(512, 512)\nnn.init.normal_(layer.weight, 0.5, 0.02)\n")
    _check_std(run, (t, m), 0.02, mean=0.5)
    assert "Normal(sigma=0.02, mean=0.5)" in run.port.code and "INI003" in _rules(run)
    # PyTorch's default std is 1; MindSpore's Normal default sigma is 0.01 -> written explicitly
    run, t, m = _weights("layer = nn.Linear(512, 512)\nnn.init.normal_(layer.weight)\n")
    _check_std(run, (t, m), 1.0)
    assert "Normal(sigma=1.0)" in run.port.code


def test_trunc_normal_absolute_bounds():
    run, t, m = _weights("layer = nn.Linear(512, 512)\nnn.init.trunc_normal_(layer.weight, std=1.0, a=-0.5, b=0.5)\n")
    for a in (t, m):
        assert a.min() >= -0.5 and a.max() <= 0.5 and a.max() > 0.49
    # std of N(0, 1) truncated to [-0.5, 0.5]
    phi = math.exp(-0.125) / math.sqrt(2 * math.pi)
    z = math.erf(0.5 / math.sqrt(2))
    _check_std(run, (t, m), math.sqrt(1 - 2 * 0.5 * phi / z))
    assert "TruncatedNormal(sigma=1.0, a=-0.5, b=0.5)" in run.port.code


@pytest.mark.parametrize("args, lo, hi, text", [
    ("", 0.0, 1.0, "Uniform(scale=0.5), layer.weight.shape, layer.weight.dtype).init_data() + 0.5"),
    (", -0.1, 0.3", -0.1, 0.3, "Uniform(scale=0.2), layer.weight.shape, layer.weight.dtype).init_data() + 0.1"),
    (", a=-0.2, b=0.2", -0.2, 0.2, "Uniform(scale=0.2), layer.weight.shape, layer.weight.dtype))"),
])
def test_uniform_is_exact_interval(args, lo, hi, text):
    run, t, m = _weights(f"layer = nn.Linear(512, 512)\nnn.init.uniform_(layer.weight{args})\n")
    for a in (t, m):
        assert a.min() >= lo - 1e-6 and a.max() <= hi + 1e-6
        assert a.min() < lo + 0.01 * (hi - lo) and a.max() > hi - 0.01 * (hi - lo)
    _check_std(run, (t, m), (hi - lo) / math.sqrt(12), mean=(lo + hi) / 2)
    assert text in run.port.code and "INI004" in _rules(run)


def test_uniform_with_named_bounds():
    run, t, m = _weights("lo = 2.0\nhi = 3.0\nlayer = nn.Linear(256, 256)\nnn.init.uniform_(layer.weight, lo, hi)\n")
    for a in (t, m):
        assert a.min() >= 2.0 and a.max() <= 3.0
    _check_std(run, (t, m), 1 / math.sqrt(12), mean=2.5)
    assert "Uniform(scale=(hi - lo) / 2)" in run.port.code and "+ (lo + hi) / 2" in run.port.code


def test_orthogonal_gain():
    run, t, m = _weights("layer = nn.Linear(256, 128)\nnn.init.orthogonal_(layer.weight, gain=2.0)\n")
    for a in (t, m):  # rows <= cols: W W^T = gain^2 I
        np.testing.assert_allclose(a @ a.T, 4.0 * np.eye(128), atol=1e-4)
    assert "Orthogonal(gain=2.0)" in run.port.code


# ----------------------------------------------------------------------------- calculate_gain


@pytest.mark.parametrize("call", [
    "'linear'", "'conv2d'", "'conv_transpose3d'", "'sigmoid'", "'tanh'", "'relu'", "'selu'",
    "'leaky_relu'", "'leaky_relu', 0.2", "nonlinearity='leaky_relu', param=1", "'relu', None",
])
def test_calculate_gain_matches_torch(call):
    run = run_pair(HEAD + f"gain = nn.init.calculate_gain({call})\n")
    assert run.agree("gain"), run.explain()
    assert run.row("gain").max_abs == 0.0
    assert "calculate_gain" not in run.port.code and "INI005" in _rules(run)


# ----------------------------------------------------------------------------- findings


@pytest.mark.parametrize("stmt, api", [
    ("w = nn.init.xavier_uniform_(torch.empty(3, 5))", "torch.nn.init.xavier_uniform_"),
    ("nn.init.normal_(layer.weight, generator=g)", "torch.nn.init.normal_"),
    ("nn.init.kaiming_normal_(layer.weight, nonlinearity='selu')", "torch.nn.init.kaiming_normal_"),
    ("nn.init.uniform_(layer.weight, -bound(), bound())", "torch.nn.init.uniform_"),
    ("g2 = nn.init.calculate_gain(name)", "torch.nn.init.calculate_gain"),
    ("nn.init.zeros_(*args)", "torch.nn.init.zeros_"),
])
def test_findings_keep_pytorch(stmt, api):
    src = HEAD + "layer = nn.Linear(2, 2)\n" + stmt + "\n"
    result = msmagic.port(src)
    found = [f for f in result.unsupported if f.rule_id == "INI006"]
    assert len(found) == 1 and found[0].api == api and found[0].line == 5, result.unsupported
    line = result.code.splitlines()[found[0].out_line - 1]
    assert "# msmagic: INI006" in line and "torch.nn.init." in line
    cst.parse_module(result.code)
    compile(result.code, "<port>", "exec")


def test_port_is_idempotent():
    src = HEAD + (
        "layer = nn.Linear(4, 4)\n"
        "nn.init.xavier_uniform_(layer.weight, gain=nn.init.calculate_gain('tanh'))\n"
        "nn.init.uniform_(layer.bias)\n"
    )
    once = msmagic.port(src).code
    assert msmagic.port(once).code == once
