"""More layers (LYR): activations under MindSpore's names, Softmin, PReLU/GroupNorm,
shape layers, 3-D and LP pooling, losses and LocalResponseNorm, run on both sides
(parameters copied through each entry's ``params``), with their findings."""

import msmagic
from tests.rules.support import check, flagged, src

HEAD = "import torch\nimport torch.nn as nn\n"


def test_activations_run_the_same():
    run = check(HEAD + src("""
        x = torch.linspace(-5, 5, 40).reshape(2, 4, 5)
        a = nn.CELU(0.5)(x)
        b = nn.SELU()(x)
        c = nn.Hardswish()(x)
        d = nn.Hardsigmoid()(x)
        e = nn.LogSigmoid()(x)
        f = nn.Tanhshrink()(x)
        g = nn.Mish()(x)
        h = nn.SiLU(inplace=True)(x * 1)
        i = nn.Softsign()(x)
        j = nn.ReLU6()(x)
        k = nn.Threshold(0.5, -1.0)(x)
        l = nn.Softshrink(1.5)(x)
        m = nn.Hardshrink(lambd=0.7)(x)
        n = nn.Hardtanh(-2.0, max_val=3.0)(x)
    """), *"abcdefghijklmn", rule="LYR001", atol=2e-4)  # MindSpore's Tanhshrink: |d| ~1e-4 at |x| = 5
    code = run.port.code
    for name in ("HSwish()", "HSigmoid()", "SoftShrink(1.5)", "HShrink(lambd=0.7)", "SeLU()", "SiLU()"):
        assert name in code, code
    assert "inplace" not in code


def test_hardtanh_deprecated_bounds_flagged():
    flagged(HEAD + "act = nn.Hardtanh(min_value=-2.0)\n", "LYR001", "min_value= has no MindSpore equivalent")


def test_softmin_dim_becomes_axis():
    run = check(HEAD + src("""
        x = torch.randn(2, 3, 4)
        y = nn.Softmin(dim=1)(x)
        z = nn.Softmin(-1)(x)
    """), "y", "z", rule="LYR002")
    assert "Softmin(axis=1)" in run.port.code


def test_softmin_without_dim_flagged():
    r = flagged(HEAD + "act = nn.Softmin()\n", "LYR002", "Softmin needs an explicit dim")
    assert "nn.Softmin()" in r.code


def test_prelu_and_groupnorm_parameters_copied():
    run = check(HEAD + src("""
        act = nn.PReLU(num_parameters=6, init=0.1)
        norm = nn.GroupNorm(3, 6, eps=1e-3)
        x = torch.randn(2, 6, 5)
        y = norm(x)
        z = act(y)
    """), "y", "z", "act.weight", "norm.weight", "norm.bias", rule="LYR003")
    assert "PReLU(channel=6, w=0.1)" in run.port.code


def test_groupnorm_without_bias_flagged():
    flagged(HEAD + "norm = nn.GroupNorm(2, 4, bias=False)\n", "LYR003", "bias= has no MindSpore equivalent")


def test_shape_layers():
    run = check(HEAD + src("""
        x = torch.randn(2, 8, 3, 3)
        a = nn.PixelShuffle(2)(x)
        b = nn.PixelUnshuffle(3)(x)
        c = nn.ChannelShuffle(4)(x)
        d = nn.Unflatten(dim=1, unflattened_size=(2, 4))(x)
    """), "a", "b", "c", "d", rule="LYR004")
    assert "Unflatten(axis=1" in run.port.code


def test_3d_pooling_gets_stride_and_pad_mode():
    run = check(HEAD + src("""
        x = torch.randn(1, 2, 7, 7, 7)
        a = nn.MaxPool3d(2)(x)
        b = nn.MaxPool3d(3, 2, padding=1, ceil_mode=True)(x)
        c = nn.AvgPool3d(3, stride=2, padding=1, count_include_pad=False)(x)
        d = nn.AvgPool3d(2)(x)
    """), "a", "b", "c", "d", rule="LYR005")
    code = run.port.code
    assert "MaxPool3d(2, stride=2)" in code, code
    assert code.count("pad_mode='pad'") == 2, code


def test_losses():
    run = check(HEAD + src("""
        import torch.nn.functional as F
        x = torch.randn(4, 5)
        t = torch.randn(4, 5)
        a = nn.SmoothL1Loss()(x, t)
        b = nn.SmoothL1Loss(reduction="none", beta=0.3)(x, t)
        c = nn.KLDivLoss(reduction="sum")(F.log_softmax(x, dim=1), F.softmax(t, dim=1))
        d = nn.MarginRankingLoss(0.5)(x, t, torch.sign(t))
    """), "a", "b", "c", "d", rule="LYR006", atol=1e-4)
    assert "SmoothL1Loss(reduction='mean')" in run.port.code


def test_loss_arguments_flagged():
    flagged(HEAD + "loss = nn.KLDivLoss(size_average=False)\n", "NNF002", "size_average= has no MindSpore equivalent")
    flagged(HEAD + "loss = nn.SmoothL1Loss(size_average=False)\n", "LYR006",
            "size_average= has no MindSpore equivalent")
    r = msmagic.port(HEAD + "loss = nn.MarginRankingLoss(0.1, None, None, 'sum')\n")
    assert not r.unsupported and "MarginRankingLoss(0.1, 'sum')" in r.code, r.code


def test_local_response_norm():
    run = check(HEAD + src("""
        x = torch.randn(2, 7, 4, 4)
        a = nn.LocalResponseNorm(3)(x)
        b = nn.LocalResponseNorm(5, alpha=0.01, beta=0.5, k=2.0)(x)
    """), "a", "b", rule="LYR007")
    assert "depth_radius=1" in run.port.code


def test_local_response_norm_even_size_flagged():
    r = flagged(HEAD + "lrn = nn.LocalResponseNorm(4)\n", "LYR007", "LocalResponseNorm size must be an odd literal")
    assert "nn.LocalResponseNorm(4)" in r.code


def test_lp_pool():
    check(HEAD + src("""
        x = torch.randn(2, 3, 12)
        a = nn.LPPool1d(2, 3)(x)
        b = nn.LPPool1d(1, 2, stride=1, ceil_mode=True)(x)
        c = nn.LPPool2d(4, (2, 3))(x.reshape(2, 3, 4, 3))
    """), "a", "b", "c", rule="LYR008", atol=1e-4)


def test_lp_pool_fractional_power_flagged():
    flagged(HEAD + "pool = nn.LPPool1d(1.5, 2)\n", "LYR008", "LPPool with a non-integer norm_type")
