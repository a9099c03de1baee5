"""Executed checks for NNF001-NNF004 (functions and Cells of mindspore.ops, in-place
functional activations, ReflectionPad.padding) and nn.MultiheadAttention's parameter
order: the port runs in both frameworks and the values agree."""

import pytest

pytest.importorskip("torch")
pytest.importorskip("mindspore")

from msmagic.parity_check import run_pair  # noqa: E402


def _agree(src, *names):
    run = run_pair(src)
    assert run.torch_error is None and run.ms_error is None, run.explain()
    for n in names:
        row = run.row(n)
        assert row.status == "match", run.explain()
    return run


def test_functions_in_a_function_receiving_tensors():
    _agree("""
import torch
import torch.nn.functional as F

def block(q, k, v, x, w):
    a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    n = F.layer_norm(x, x.shape[-1:])
    i = F.instance_norm(x.unsqueeze(0))
    b = F.bilinear(x, x, w)
    return a, n, i, b

torch.manual_seed(0)
q, k, v = torch.randn(2, 2, 4, 8), torch.randn(2, 2, 4, 8), torch.randn(2, 2, 4, 8)
x = torch.randn(3, 6)
a, n, i, b = block(q, k, v, x, torch.randn(2, 6, 6))
logp = F.log_softmax(torch.randn(3, 4), dim=1)
kl = F.kl_div(logp, F.log_softmax(torch.randn(3, 4), dim=1), reduction="batchmean", log_target=True)
d = F.pairwise_distance(x, torch.randn(3, 6), p=1.0)
""", "a", "n", "i", "b", "kl", "d")


def test_cells_and_inplace_activations():
    _agree("""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
norm = nn.InstanceNorm1d(3, affine=True)
x = torch.randn(2, 3, 7)
y = norm(x)
loss = nn.TripletMarginLoss(margin=0.5)(x[0], x[1], torch.randn(3, 7))
up = F.conv_transpose2d(torch.randn(1, 4, 3, 3), torch.randn(4, 2, 3, 3), stride=2, padding=1)
pool = nn.AdaptiveAvgPool1d(5)(x)
z = torch.randn(6)
F.relu_(z)
F.leaky_relu_(z, negative_slope=0.2)
""", "y", "loss", "up", "pool", "z")


def test_reflection_pad_padding_reads_like_pytorch():
    _agree("""
import torch.nn as nn
padding2 = nn.ReflectionPad2d((1, 2, 3, 4)).padding
pad3 = nn.ReflectionPad3d(2)
padding3 = pad3.padding
padding1 = nn.ReflectionPad1d((0, 3)).padding
""", "padding2", "padding3", "padding1")


@pytest.mark.parametrize("args", ["8, 2", "8, 2, bias=False", "8, 2, add_bias_kv=True", "8, 2, kdim=4, vdim=6"])
def test_multihead_attention_parameters_come_in_pytorch_order(args):
    # filling parameters in order (``zip(mha.parameters(), values)``) gives each
    # MindSpore parameter the value PyTorch's parameter at that position gets
    kv = "torch.randn(2, 3, 4), torch.randn(2, 3, 6)" if "kdim" in args else "x, x"
    run = _agree(f"""
import torch
import torch.nn as nn
mha = nn.MultiheadAttention({args}, batch_first=True)
values = [torch.linspace(-0.5, 0.5, p.numel()).reshape(p.shape) for p in mha.parameters()]
with torch.no_grad():
    for p, value in zip(mha.parameters(), values):
        p.copy_(value)
mha.eval()
names = [n for n, _ in mha.named_parameters()]
x = torch.linspace(-1, 1, 2 * 3 * 8).reshape(2, 3, 8)
k, v = {kv}
out, w = mha(x, k, v)
""", "values", "out", "w")
    torch_names, ms_names = run.torch_ns["names"], run.ms_ns["names"]
    assert list(torch_names) == list(ms_names)
