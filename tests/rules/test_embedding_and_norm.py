"""Embeddings and normalisation (EMB, NRM): nn.Embedding and nn.LayerNorm are ported and
run on both sides; run_pair copies the PyTorch parameters into the Cell (weight ->
embedding_table, weight/bias -> gamma/beta), so outputs must agree to rtol 1e-5."""

import ast

import numpy as np
import pytest

import msmagic
from msmagic.parity_check import run_pair, to_numpy
from tests.rules.support import findings, rules, src

HEAD = "import torch\nimport torch.nn as nn\n"


def assert_all_match(run, *names):
    assert run.torch_error is None and run.ms_error is None, run.explain()
    assert run.agree(*names), run.explain()
    assert all(r.status == "match" for r in run.rows if r.name in names), run.explain()


def assert_idempotent(run):
    assert msmagic.port(run.port.code).code == run.port.code


@pytest.mark.parametrize("ctor, expected", [
    ("nn.Embedding(10, 4, padding_idx=0)", "nn.Embedding(10, 4, padding_idx=0, embedding_table=Normal(1.0))"),
    ("nn.Embedding(10, 4, 0)", "nn.Embedding(10, 4, padding_idx=0, embedding_table=Normal(1.0))"),
    ("nn.Embedding(num_embeddings=10, embedding_dim=4)",
     "nn.Embedding(vocab_size=10, embedding_size=4, embedding_table=Normal(1.0))"),
])
def test_embedding_forward_on_int64_indices(ctor, expected):
    run = run_pair(HEAD + f"emb = {ctor}\nids = torch.tensor([[0, 2, 9], [4, 0, 1]])\nout = emb(ids)\n")
    assert f"emb = {expected}" in run.port.code
    assert "from mindspore.common.initializer import Normal" in run.port.code
    assert "EMB001" in rules(run)
    assert str(run.row("ids").torch_dtype).endswith("int64")
    assert_all_match(run, "ids", "out", "emb.weight")
    assert_idempotent(run)


def test_embedding_init_and_padding_row_without_sync():
    """Each side initialises on its own: N(0, 1) on both, padding row zero on both."""
    run = run_pair(HEAD + "emb = nn.Embedding(2000, 16, padding_idx=3)\n", sync=False)
    for w in (to_numpy(run.torch_ns["emb"].weight), to_numpy(run.ms_ns["emb"].embedding_table)):
        assert np.all(w[3] == 0)
        assert abs(w.std() - 1.0) < 0.05 and abs(w.mean()) < 0.05, w.std()


def test_embedding_attributes_renamed():
    run = run_pair(HEAD + "emb = nn.Embedding(6, 3)\ntable = emb.weight\nrows = emb.num_embeddings\n"
                   "dim = emb.embedding_dim\n")
    code = run.port.code
    assert "table = emb.embedding_table" in code and "rows = emb.vocab_size" in code
    assert "dim = emb.embedding_size" in code and "EMB002" in rules(run)
    assert_all_match(run, "table", "rows", "dim")


@pytest.mark.parametrize("arg", ["max_norm=1.0", "scale_grad_by_freq=True", "sparse=True"])
def test_embedding_unported_arguments_are_findings(arg):
    run = run_pair(HEAD + f"emb = nn.Embedding(5, 3, {arg})\n")
    assert "EMB001" in findings(run)
    assert f"{arg.split('=')[0]}= has no MindSpore equivalent" in run.port.code
    assert arg not in run.port.code
    ast.parse(run.port.code)


def test_embedding_default_flags_are_not_findings():
    run = run_pair(HEAD + "emb = nn.Embedding(5, 3, sparse=False, max_norm=None)\n")
    assert not findings(run) and "sparse" not in run.port.code and "max_norm" not in run.port.code


@pytest.mark.parametrize("ctor, expected, shape", [
    ("nn.LayerNorm(4)", "nn.LayerNorm((4,), epsilon=1e-5)", (2, 4)),
    ("nn.LayerNorm(4)", "nn.LayerNorm((4,), epsilon=1e-5)", (2, 3, 4)),
    ("nn.LayerNorm([4], 1e-3)", "nn.LayerNorm([4], epsilon=1e-3)", (2, 3, 5, 4)),
    ("nn.LayerNorm(normalized_shape=(4,), eps=1e-6, elementwise_affine=True)",
     "nn.LayerNorm(normalized_shape=(4,), epsilon=1e-6)", (3, 4)),
])
def test_layer_norm_last_axis(ctor, expected, shape):
    n = int(np.prod(shape))
    body = f"ln = {ctor}\nx = torch.sin(torch.arange({n}.)).reshape{shape} * 3 + 1\ny = ln(x)\n"
    run = run_pair(HEAD + body, rtol=1e-4, atol=1e-5)
    assert f"ln = {expected}" in run.port.code and "NRM001" in rules(run)
    assert_all_match(run, "x", "y")
    assert_idempotent(run)


def test_layer_norm_eps_matters():
    """A tiny-variance input shows the epsilon default: 1e-5 written out matches PyTorch."""
    run = run_pair(HEAD + "ln = nn.LayerNorm(3)\nx = torch.tensor([[0.0, 0.003, 0.006]])\ny = ln(x)\n",
                   rtol=1e-4, atol=1e-5)
    assert "epsilon=1e-5" in run.port.code
    assert_all_match(run, "y")


def test_layer_norm_parameters_renamed():
    run = run_pair(HEAD + "ln = nn.LayerNorm(5)\nscale = ln.weight\nshift = ln.bias\n")
    assert "scale = ln.gamma" in run.port.code and "shift = ln.beta" in run.port.code
    assert "NRM002" in rules(run)
    assert_all_match(run, "scale", "shift")


@pytest.mark.parametrize("ctor", ["nn.LayerNorm((3, 4))", "nn.LayerNorm(shape)"])
def test_layer_norm_multi_dim_or_unknown_shape_is_flagged(ctor):
    run = run_pair(HEAD + f"shape = (3, 4)\nln = {ctor}\n")
    assert "NRM001" in findings(run) and "NRM001" not in rules(run)
    assert f"torch.{ctor}" in run.port.code and "LayerNorm shape must be one literal dim" in run.port.code
    ast.parse(run.port.code)


@pytest.mark.parametrize("arg", ["elementwise_affine=False", "bias=False"])
def test_layer_norm_without_affine_is_flagged(arg):
    run = run_pair(HEAD + f"ln = nn.LayerNorm(4, {arg})\n")
    assert "NRM001" in findings(run)
    assert arg not in run.port.code and "has no MindSpore equivalent" in run.port.code
    ast.parse(run.port.code)


def test_embedding_table_written_through_data_and_copy_in_a_chain():
    # bentrevett: model.embedding.weight.data = pretrained; the table read back, in place
    # copies and shapes: every member in the chain is ported, in a class and after it
    run = run_pair(HEAD + (
        "class Net(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.embedding = nn.Embedding(6, 3)\n"
        "    def forward(self, ids):\n"
        "        return self.embedding(ids)\n"
        "    def table_shape(self):\n"
        "        return tuple(self.embedding.weight.shape)\n"
        "model = Net()\n"
        "pretrained = torch.arange(18.0).reshape(6, 3)\n"
        "model.embedding.weight.data = pretrained\n"
        "first = model(torch.tensor([[1, 5]]))\n"
        "with torch.no_grad():\n"
        "    model.embedding.weight.data.copy_(pretrained * 2)\n"
        "second = model(torch.tensor([[1, 5]]))\n"
        "read = model.embedding.weight.data\n"
        "shape = model.table_shape()\n"
        "rows = model.embedding.weight.shape[0]\n"
    ))
    code = run.port.code
    assert "model.embedding.embedding_table.data = pretrained" in code
    assert "model.embedding.embedding_table.data.copy_(pretrained * 2)" in code
    assert "tuple(self.embedding.embedding_table.shape)" in code
    assert not run.port.unsupported, run.port.unsupported
    assert_all_match(run, "first", "second", "read", "shape", "rows")


@pytest.mark.parametrize("shape", ["d_model", "(d_model,)", "[d_model]"])
def test_layer_norm_of_a_named_shape(shape):
    """graykode's transformer: nn.LayerNorm(d_model) with d_model a variable, in a Module
    built later (a parameter of __init__, a global)."""
    run = run_pair(src(f"""
        import torch
        import torch.nn as nn
        class Block(nn.Module):
            def __init__(self, shape):
                super().__init__()
                self.norm = nn.LayerNorm(shape, eps=1e-6)
                self.other = nn.LayerNorm(d_model)
            def forward(self, x):
                return self.norm(x) * 2 + self.other(x)
        d_model = 4
        torch.manual_seed(0)
        block = Block({shape})
        with torch.no_grad():
            block.norm.weight.uniform_()
            block.norm.bias.uniform_()
        x = torch.randn(2, 3, 4) * 5 + 1
        y = block(x)
    """))
    assert run.torch_error is None and run.ms_error is None, run.explain()
    assert "nn.LayerNorm(layer_norm_shape(shape), epsilon=1e-6)" in run.port.code
    assert not run.port.unsupported and "import torch" not in run.port.code
    assert run.agree("y", "block.norm.weight", "block.other.bias"), run.explain()


def test_layer_norm_of_a_named_shape_with_several_axes_raises_a_clear_error():
    run = run_pair(src("""
        import torch
        import torch.nn as nn
        def make(shape):
            return nn.LayerNorm(shape)
        ln = make((3, 4))
    """))
    assert run.ms_error is not None and "LayerNorm over several axes (3, 4)" in str(run.ms_error)
