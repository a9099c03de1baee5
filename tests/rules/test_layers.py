"""Layers (LAY): Linear, convolutions and pooling are ported and executed on both sides.

Inputs are fixed random arrays handed to both namespaces (``x``: 4-D, ``x1``: 3-D,
``x3``: 5-D); run_pair copies each PyTorch layer's parameters into the ported Cell, so
outputs must agree to rtol 1e-4 / atol 1e-5.
"""

import ast
import math

import numpy as np
import pytest

import msmagic
from msmagic.parity_check import to_numpy
from tests.rules.support import findings, rules, run_with_inputs

HEAD = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
_RNG = np.random.default_rng(0)
INPUTS = {
    "x": _RNG.standard_normal((2, 4, 9, 10)).astype(np.float32),
    "x1": _RNG.standard_normal((2, 4, 12)).astype(np.float32),
    "x3": _RNG.standard_normal((1, 4, 5, 6, 7)).astype(np.float32),
}


def pair(body, check=True, **kw):
    return run_with_inputs(HEAD + body, INPUTS, check, rtol=1e-4, atol=1e-5, **kw)


def assert_all_match(run):
    assert run.rows and all(r.status == "match" for r in run.rows), run.explain()


def assert_idempotent(run):
    assert msmagic.port(run.port.code).code == run.port.code


# ------------------------------------------------------------------ Linear


@pytest.mark.parametrize("ctor, expected", [
    ("nn.Linear(10, 3)", "nn.Dense(10, 3)"),
    ("nn.Linear(10, 3, False)", "nn.Dense(10, 3, has_bias=False)"),
    ("nn.Linear(in_features=10, out_features=3, bias=True, device='cpu')",
     "nn.Dense(in_channels=10, out_channels=3, has_bias=True)"),
])
def test_linear_becomes_dense(ctor, expected):
    run = pair(f"fc = {ctor}\ny = fc(x)\nn_in = fc.in_features\nn_out = fc.out_features\n")
    code = run.port.code
    assert f"fc = {expected}" in code
    assert "n_in = fc.in_channels" in code and "n_out = fc.out_channels" in code
    assert "LAY001" in rules(run)
    assert run.agree("y", "n_in", "n_out", "fc.weight")
    assert_all_match(run)
    assert_idempotent(run)


def test_linear_weight_keeps_its_name():
    run = pair("fc = nn.Linear(10, 3)\nw = fc.weight\nb = fc.bias\ny = fc(x)\n")
    assert "w = fc.weight" in run.port.code and "b = fc.bias" in run.port.code
    assert run.agree("w", "b", "y")


@pytest.mark.parametrize("ctor, fan_in", [
    ("nn.Linear(256, 64)", 256),
    ("nn.Conv2d(16, 32, 3)", 16 * 9),
])
def test_default_init_is_the_same_distribution(ctor, fan_in):
    """Not synchronised: each framework initialises on its own, both U(+-1/sqrt(fan_in))."""
    run = pair(f"layer = {ctor}\n", sync=False)
    bound = 1 / math.sqrt(fan_in)
    for side, ns in (("torch", run.torch_ns), ("mindspore", run.ms_ns)):
        for name in ("weight", "bias"):
            w = to_numpy(getattr(ns["layer"], name))
            assert np.abs(w).max() <= bound * (1 + 1e-6), (side, name)
        w = to_numpy(ns["layer"].weight)
        assert abs(w.std() - bound / math.sqrt(3)) < 0.05 * bound / math.sqrt(3), (side, w.std())
        assert abs(w.mean()) < 0.05 * bound, side


# ------------------------------------------------------------------ convolutions

CONVS = [
    # (constructor, input, expected MindSpore constructor)
    ("nn.Conv2d(4, 6, 3)", "x", "nn.Conv2d(4, 6, 3, has_bias=True, pad_mode='valid')"),
    ("nn.Conv2d(4, 6, 3, padding=0)", "x", "nn.Conv2d(4, 6, 3, has_bias=True, pad_mode='valid')"),
    ("nn.Conv2d(4, 6, 3, padding='valid')", "x", "nn.Conv2d(4, 6, 3, has_bias=True, pad_mode='valid')"),
    ("nn.Conv2d(4, 6, 3, 1, 1)", "x", "nn.Conv2d(4, 6, 3, 1, pad_mode='pad', padding=1, has_bias=True)"),
    ("nn.Conv2d(4, 6, 3, padding=(1, 2))", "x",
     "nn.Conv2d(4, 6, 3, pad_mode='pad', padding=(1, 1, 2, 2), has_bias=True)"),
    ("nn.Conv2d(4, 6, 3, padding=(1, 1))", "x", "nn.Conv2d(4, 6, 3, pad_mode='pad', padding=1, has_bias=True)"),
    ("nn.Conv2d(4, 6, 4, padding='same')", "x", "nn.Conv2d(4, 6, 4, has_bias=True, pad_mode='same')"),
    ("nn.Conv2d(4, 6, 3, padding='same')", "x", "nn.Conv2d(4, 6, 3, has_bias=True, pad_mode='same')"),
    ("nn.Conv2d(4, 6, (2, 3), padding='same', dilation=3)", "x", "pad_mode='same'"),
    ("nn.Conv2d(4, 6, 3, stride=2, padding=1)", "x", "stride=2, pad_mode='pad', padding=1"),
    ("nn.Conv2d(4, 6, 3, dilation=2, padding=2)", "x", "dilation=2, pad_mode='pad', padding=2"),
    ("nn.Conv2d(4, 6, 3, groups=2, bias=False)", "x", "group=2, has_bias=False, pad_mode='valid'"),
    ("nn.Conv2d(in_channels=4, out_channels=6, kernel_size=3, stride=1, padding=1, dilation=1, "
     "groups=2, bias=False, padding_mode='zeros')", "x",
     "nn.Conv2d(in_channels=4, out_channels=6, kernel_size=3, stride=1, pad_mode='pad', padding=1, "
     "dilation=1, group=2, has_bias=False)"),
    ("nn.Conv1d(4, 6, 3)", "x1", "nn.Conv1d(4, 6, 3, has_bias=True, pad_mode='valid')"),
    ("nn.Conv1d(4, 6, 4, padding='same')", "x1", "pad_mode='same'"),
    ("nn.Conv1d(4, 6, 3, padding=(2,))", "x1", "pad_mode='pad', padding=2"),
    ("nn.Conv3d(4, 2, 3, padding=(1, 0, 2))", "x3", "pad_mode='pad', padding=(1, 1, 0, 0, 2, 2)"),
    ("nn.Conv3d(4, 2, 2, padding='same')", "x3", "pad_mode='same'"),
    ("nn.ConvTranspose2d(4, 6, 3, stride=2)", "x",
     "nn.Conv2dTranspose(4, 6, 3, stride=2, has_bias=True, pad_mode='valid')"),
    ("nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1)", "x",
     "nn.Conv2dTranspose(4, 6, 3, stride=2, pad_mode='pad', padding=(1, 0, 1, 0), has_bias=True)"),
    ("nn.ConvTranspose2d(4, 6, 4, 3, (2, 3), (1, 2), 2, True, 2)", "x",
     "pad_mode='pad', padding=(2, 1, 3, 1), group=2, has_bias=True, dilation=2"),
]


@pytest.mark.parametrize("ctor, inp, expected", CONVS, ids=[c[0] for c in CONVS])
def test_conv_computes_the_same(ctor, inp, expected):
    run = pair(f"conv = {ctor}\ny = conv({inp})\n")
    code = run.port.code
    assert expected in code, code
    assert rules(run) & {"LAY002", "LAY003"}
    assert not run.port.unsupported, run.port.unsupported
    assert run.agree("y", "conv.weight")
    assert_all_match(run)
    assert_idempotent(run)


def test_cnn_module_forward():
    run = pair('''
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(4, 8, 3, padding=1)
        self.conv2 = nn.Conv2d(8, 8, 4, padding="same", groups=2, bias=False)
        self.pool = nn.MaxPool2d(2)
        self.gap = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(8, 3)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        x = self.gap(self.conv2(x))
        return self.fc(torch.flatten(x, 1))

model = Net()
y = model(x)
''')
    assert run.agree("y", "model.conv1.weight", "model.conv2.weight", "model.fc.weight")
    assert_all_match(run)
    assert {"LAY001", "LAY002", "LAY004", "LAY005"} <= rules(run)


def test_padding_mode_other_than_zeros_is_flagged():
    run = pair("conv = nn.Conv2d(4, 6, 3, padding=1, padding_mode='reflect')\ny = conv(x)\n")
    assert "LAY002" in findings(run)
    assert "# msmagic: LAY002 padding_mode= has no MindSpore equivalent" in run.port.code
    assert "padding_mode" not in run.port.code.split("#")[0]
    ast.parse(run.port.code)
    assert run.row("y").status == "differs"  # zero padding instead of reflection: flagged


def test_non_literal_padding_is_ported_as_pad_and_flagged():
    run = pair("p = 1\nconv = nn.Conv2d(4, 6, 3, padding=p)\ny = conv(x)\n")
    assert "nn.Conv2d(4, 6, 3, pad_mode='pad', padding=p, has_bias=True)" in run.port.code
    assert "LAY002" in findings(run)
    assert "# msmagic: LAY002 padding= not a literal" in run.port.code
    assert run.agree("y")  # exact for an int


def test_output_padding_beyond_padding_is_flagged():
    run = pair("up = nn.ConvTranspose2d(4, 6, 3, stride=2, output_padding=1)\ny = up(x)\n")
    assert "LAY003" in findings(run)
    assert "output_padding" not in run.port.code.split("#")[0]
    assert "# msmagic: LAY003 output_padding > padding cannot be ported" in run.port.code
    ast.parse(run.port.code)


def test_conv1d_weight_read_is_flagged():
    run = pair("conv = nn.Conv1d(4, 6, 3)\nw = conv.weight\ny = conv(x1)\n")
    assert "LAY002" in findings(run)
    assert "(out, in, 1, k)" in run.port.code
    assert run.row("w").status == "differs" and "shape" in run.row("w").note
    assert run.agree("y")


# ------------------------------------------------------------------ pooling

POOLS = [
    ("nn.MaxPool2d(2)", "x", "nn.MaxPool2d(2, stride=2)"),
    ("nn.MaxPool2d(kernel_size=3)", "x", "nn.MaxPool2d(kernel_size=3, stride=3)"),
    ("nn.MaxPool2d(3, 2, 1)", "x", "nn.MaxPool2d(3, 2, pad_mode='pad', padding=1)"),
    ("nn.MaxPool2d(3, None, (1, 0))", "x", "nn.MaxPool2d(3, 3, pad_mode='pad', padding=(1, 0))"),
    ("nn.MaxPool2d(3, stride=2, padding=1, dilation=2, ceil_mode=True)", "x",
     "nn.MaxPool2d(3, stride=2, pad_mode='pad', padding=1, dilation=2, ceil_mode=True)"),
    ("nn.MaxPool2d(2, ceil_mode=True)", "x", "nn.MaxPool2d(2, stride=2, ceil_mode=True, pad_mode='pad')"),
    ("nn.MaxPool1d(3, 2, 1)", "x1", "nn.MaxPool1d(3, 2, pad_mode='pad', padding=1)"),
    ("nn.MaxPool1d(2)", "x1", "nn.MaxPool1d(2, stride=2)"),
    ("nn.AvgPool2d(2)", "x", "nn.AvgPool2d(2, stride=2)"),
    ("nn.AvgPool2d(3, 2, 1, count_include_pad=False)", "x",
     "nn.AvgPool2d(3, 2, pad_mode='pad', padding=1, count_include_pad=False)"),
    ("nn.AvgPool2d(3, padding=(1, 0), ceil_mode=True, divisor_override=2)", "x",
     "nn.AvgPool2d(3, stride=3, pad_mode='pad', padding=(1, 0), ceil_mode=True, divisor_override=2)"),
    ("nn.AvgPool2d(3, 2, ceil_mode=True)", "x", "nn.AvgPool2d(3, 2, ceil_mode=True)"),
    ("nn.AvgPool1d(3, padding=1)", "x1", "nn.AvgPool1d(3, stride=3, pad_mode='pad', padding=1)"),
    ("nn.AdaptiveAvgPool2d((4, 3))", "x", "nn.AdaptiveAvgPool2d((4, 3))"),
    ("nn.AdaptiveAvgPool2d((None, 3))", "x", "nn.AdaptiveAvgPool2d((None, 3))"),
    ("nn.AdaptiveMaxPool2d(4)", "x", "nn.AdaptiveMaxPool2d(4)"),
]


@pytest.mark.parametrize("ctor, inp, expected", POOLS, ids=[p[0] for p in POOLS])
def test_pooling_computes_the_same(ctor, inp, expected):
    run = pair(f"pool = {ctor}\ny = pool({inp})\n")
    assert f"pool = {expected}" in run.port.code, run.port.code
    assert rules(run) & {"LAY004", "LAY005"}
    assert not run.port.unsupported
    assert run.agree("y")
    assert_idempotent(run)


@pytest.mark.parametrize("ctor", ["nn.MaxPool2d(3, 2, 1, return_indices=True)",
                                  "nn.AdaptiveMaxPool2d((4, 3), return_indices=True)"])
def test_pooling_indices_match(ctor):
    run = pair(f"pool = {ctor}\ny, idx = pool(x)\n")
    assert run.agree("y", "idx")
    assert run.row("idx").ms_dtype.lower() == "int64"


def test_stride_from_a_computed_kernel_is_flagged():
    run = pair("k = 2.0\npool = nn.MaxPool2d(int(k))\ny = pool(x)\n")
    assert "nn.MaxPool2d(int(k), stride=int(k))" in run.port.code
    assert "LAY004" in findings(run)
    assert run.agree("y")


@pytest.mark.parametrize("ctor", ["nn.AdaptiveAvgPool1d(4)", "nn.AdaptiveMaxPool1d(4)"])
def test_adaptive_1d_becomes_a_cell_for_any_length(ctor):
    # MindSpore's 1-D adaptive pools need a length that is a multiple of output_size:
    # the port defines a Cell of mindspore.ops with PyTorch's windows (NNF002)
    run = pair(f"pool = {ctor}\ny = pool(x1)\nodd = pool(x1[:, :, :10])\n")
    assert "NNF002" in rules(run) and not findings(run)
    assert run.agree("y", "odd")


def test_adaptive_max_1d_return_indices_is_ported():
    run = pair("pool = nn.AdaptiveMaxPool1d(3, return_indices=True)\ny, idx = pool(x1[:, :, :10])\n")
    assert "return_indices=True" in run.port.code
    assert run.agree("y", "idx")


FUNCTIONAL = [
    ("F.max_pool2d(x, 2)", "ops.max_pool2d(x, 2)"),
    ("F.max_pool2d(x, 3, 2, 1, 1, True)", "ops.max_pool2d(x, 3, 2, 1, 1, ceil_mode=True)"),
    ("F.max_pool2d(input=x, kernel_size=3, padding=1)", "ops.max_pool2d(x=x, kernel_size=3, padding=1)"),
    ("F.avg_pool2d(x, 2)", "ops.avg_pool2d(x, 2, stride=2)"),
    ("F.avg_pool2d(x, 3, padding=(1, 0), count_include_pad=False)",
     "ops.avg_pool2d(x, 3, stride=3, padding=(1, 1, 0, 0), count_include_pad=False)"),
    ("F.avg_pool2d(x, 3, None, 1, True, True, None)", "ops.avg_pool2d(x, 3, 3, 1, True, True)"),
    ("F.avg_pool1d(x1, 3, padding=1)", "ops.avg_pool1d(x1, 3, stride=3, padding=1)"),
    ("F.adaptive_avg_pool2d(x, (4, 3))", "ops.adaptive_avg_pool2d(x, (4, 3))"),
    ("F.adaptive_max_pool2d(x, 1)", "ops.adaptive_max_pool2d(x, 1)"),
]


@pytest.mark.parametrize("call, expected", FUNCTIONAL, ids=[f[0] for f in FUNCTIONAL])
def test_functional_pooling_computes_the_same(call, expected):
    run = pair(f"y = {call}\n")
    assert f"y = F.{expected[4:]}" in run.port.code, run.port.code
    assert "LAY006" in rules(run)
    assert not run.port.unsupported
    assert run.agree("y")
    assert_idempotent(run)


def test_functional_avg_pool_non_literal_padding_is_flagged():
    run = pair("p = (1, 0)\ny = F.avg_pool2d(x, 3, padding=p)\n", check=False)
    assert "LAY006" in findings(run)
    assert "# msmagic: LAY006 padding= not a literal" in run.port.code
    ast.parse(run.port.code)


@pytest.mark.parametrize("call, expected", [
    ("F.conv2d(x, w, b, 1, 1)", "pad_mode='pad', padding=1"),
    ("F.conv2d(x, w, padding=(1, 2))", "pad_mode='pad', padding=(1, 2)"),
    ("F.conv2d(x, w, padding='same')", "pad_mode='same'"),
    ("torch.conv2d(x, w, b, stride=2)", "stride=2"),
])
def test_functional_conv2d_pads_through_pad_mode(call, expected):
    """ops.conv2d pads only under pad_mode='pad' (2.10): the port writes it; a string
    padding becomes the pad_mode."""
    from tests.rules.support import check

    run = check(HEAD + "x = torch.linspace(-1, 1, 2 * 3 * 5 * 6).reshape(2, 3, 5, 6)\n"
                "w = torch.linspace(-0.5, 0.5, 4 * 3 * 3 * 3).reshape(4, 3, 3, 3)\n"
                "b = torch.tensor([0.1, -0.2, 0.3, 0.0])\n"
                f"y = {call}\n", "y", rule="LAY002", atol=1e-5)
    assert expected in run.port.code


def test_functional_conv1d_and_transposed_1d_3d_layers():
    from tests.rules.support import check

    run = check(HEAD + "x = torch.linspace(-1, 1, 2 * 3 * 7).reshape(2, 3, 7)\n"
                "w = torch.linspace(-0.5, 0.5, 4 * 3 * 3).reshape(4, 3, 3)\n"
                "y = F.conv1d(x, w, padding=1)\n"
                "up1 = nn.ConvTranspose1d(3, 2, 3, stride=2, padding=1)\n"
                "z1 = up1(x)\n"
                "up3 = nn.ConvTranspose3d(3, 2, 2, stride=2)\n"
                "z3 = up3(x.reshape(1, 3, 7, 2, 1)[..., :1].repeat(1, 1, 1, 1, 2))\n",
                "y", "z1", "z3", "up1.bias", "up3.weight", rule="LAY003", atol=1e-5)
    assert "nn.Conv1dTranspose(3, 2, 3" in run.port.code and "has_bias=True" in run.port.code


# ------------------------------------------------------------------ layer attributes (LAY007)


def test_renamed_layer_attributes_read_the_same():
    run = pair(
        "bil = nn.Bilinear(2, 3, 4)\n"
        "conv = nn.Conv2d(4, 6, 3, groups=2)\n"
        "up = nn.ConvTranspose2d(4, 6, 3, groups=2)\n"
        "ln = nn.LayerNorm(6, eps=1e-6)\n"
        "gn = nn.GroupNorm(2, 4)\n"
        "pr = nn.PReLU()\n"
        "act = nn.LeakyReLU(0.2)\n"
        "smin = nn.Softmin(dim=1)\n"
        "unf = nn.Unflatten(1, (2, 2))\n"
        "bn3 = nn.BatchNorm3d(5, eps=1e-3)\n"
        "sizes = (bil.in1_features, bil.in2_features, bil.out_features)\n"
        "groups = (conv.groups, up.groups)\n"
        "eps = (ln.eps, bn3.eps, bn3.num_features)\n"
        "gn_scale, gn_shift, slope = gn.weight, gn.bias, pr.weight\n"
        "axes = (act.negative_slope, smin.dim, unf.dim)\n"
    )
    code = run.port.code
    for text in ("bil.in1_channels", "conv.group, up.group", "ln.epsilon", "bn3.bn2d.eps", "bn3.bn2d.num_features",
                 "gn.gamma, gn.beta, pr.w", "act.alpha, smin.axis, unf.axis"):
        assert text in code, code
    assert not run.port.unsupported, run.port.unsupported
    assert run.agree("sizes", "groups", "eps", "gn_scale", "gn_shift", "slope", "axes")
    assert_idempotent(run)


def test_layer_attributes_of_unknown_receivers_choose_at_run_time():
    # a loop over a ModuleList, a function's parameter, a method of a Module, and objects
    # that are no layer at all but have such attributes: each reads what PyTorch reads
    run = pair(
        "class Custom(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.in_features = 7\n"
        "class Net(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.hidden = nn.ModuleList([nn.Linear(4, 8), nn.Linear(8, 6)])\n"
        "        self.emb = nn.Embedding(5, 3)\n"
        "    def widths(self):\n"
        "        return [layer.out_features for layer in self.hidden]\n"
        "class Plain:\n"
        "    out_features = 11\n"
        "def describe(model):\n"
        "    first = model.hidden[0]\n"
        "    return first.in_features, model.emb.num_embeddings, model.emb.embedding_dim\n"
        "def width(layer):\n"
        "    return layer.out_features * 2\n"
        "net = Net()\n"
        "sizes = [each.out_features for each in net.hidden]\n"
        "own = net.widths()\n"
        "described = describe(net)\n"
        "twice = (width(net.hidden[1]), width(Plain()))\n"
        "custom = Custom().in_features\n"
    )
    code = run.port.code
    assert "(each.out_channels if isinstance(each, (nn.Dense, nn.BiDense)) else each.out_features)" in code
    assert "custom = Custom().in_features" in code  # a known user Module keeps its attribute
    assert not run.port.unsupported, run.port.unsupported
    assert run.agree("sizes", "own", "described", "twice", "custom")
    assert run.torch_ns["twice"] == (12, 22)
    assert_idempotent(run)


def test_layer_attributes_without_counterpart_are_flagged():
    src = HEAD + (
        "conv = nn.Conv2d(4, 6, 3)\nmode = conv.padding_mode\n"
        "drop = nn.Dropout2d(0.3)\nrate = drop.p\n"
        "bn = nn.BatchNorm2d(4)\nbn.momentum = 0.01\n"
        "pool = nn.MaxPool1d(2)\nk = pool.kernel_size\n"
        "def resize(layer):\n    layer.out_features = 3\n"
    )
    r = msmagic.port(src)
    found = {(f.api, f.rule_id) for f in r.unsupported}
    assert {("torch.nn.Conv2d.padding_mode", "LAY008"), ("torch.nn.Dropout2d.p", "LAY008"),
            ("torch.nn.BatchNorm2d.momentum", "LAY008"), ("torch.nn.MaxPool1d.kernel_size", "LAY008"),
            (".out_features", "LAY007")} <= found, found
    assert "layer.out_features = 3  # msmagic: LAY007" in r.code
    ast.parse(r.code)
