"""Embeddings and normalisation (EMB, NRM): nn.Embedding and nn.LayerNorm are ported and
run on both sides; run_pair copies the PyTorch parameters into the Cell (weight ->
embedding_table, weight/bias -> gamma/beta), so outputs must agree to rtol 1e-5."""

import ast

import numpy as np
import pytest

import msmagic
from msmagic.parity_check import run_pair, to_numpy
from tests.rules.support import check, findings, parity_cells, rules, src

HEAD = "import torch\nimport torch.nn as nn\n"


def assert_all_match(run, *names):
    assert run.torch_error is None and run.ms_error is None, run.explain()
    assert run.agree(*names), run.explain()
    assert all(r.status == "match" for r in run.rows if r.name in names), run.explain()


def assert_idempotent(run):
    assert msmagic.port(run.port.code).code == run.port.code


@pytest.mark.parametrize("ctor, expected", [
    ("nn.Embedding(10, 4, padding_idx=0)", "PaddingEmbedding(10, 4, padding_idx=0, embedding_table=Normal(1.0))"),
    ("nn.Embedding(10, 4, 0)", "PaddingEmbedding(10, 4, padding_idx=0, embedding_table=Normal(1.0))"),
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
    assert "nn.LayerNorm((shape,) if isinstance(shape, int) else shape, epsilon=1e-6)" in run.port.code
    assert not run.port.unsupported and "import torch" not in run.port.code
    assert run.agree("y", "block.norm.weight", "block.other.bias"), run.explain()


def test_layer_norm_of_a_named_shape_with_several_axes_raises_a_clear_error():
    run = run_pair(src("""
        import torch
        import torch.nn as nn
        def make(shape):
            return nn.LayerNorm(shape)
        ln = make((3, 4))
        y = ln(torch.ones(2, 3, 4))
    """))
    assert run.ms_error is not None and run.torch_error is None  # never runs on other axes


# ----------------------------------------------------------------------------- padding row gradient

NBOW = """
import torch
import torch.nn as nn

class NBoW(nn.Module):
    def __init__(self, vocab_size, embedding_dim, output_dim, pad_index):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embedding_dim, padding_idx=pad_index)
        self.fc = nn.Linear(embedding_dim, output_dim)

    def forward(self, ids):
        return self.fc(self.embedding(ids).mean(dim=1))

torch.manual_seed(0)
pad_index = 1
model = NBoW(12, 6, 2, pad_index)
model.embedding.weight.data = torch.randn(12, 6)  # pretrained: the padding row is not zero
before = model.embedding.weight.detach().clone()
ids = torch.tensor([[2, 3, 1, 1], [4, 5, 2, 1], [7, 8, 9, 10]])
label = torch.tensor([0, 1, 1])
optimizer = torch.optim.Adam(model.parameters(), lr=0.1)
criterion = nn.CrossEntropyLoss()
"""


def _assert_padding_row_kept(run, table):
    """The padding row (1) is what it was before training, on both sides; the rows the
    batch used were trained."""
    assert run.torch_error is None and run.ms_error is None, run.explain()
    gradients = [r for r in run.rows if r.name.endswith("gradients")]
    assert all(r.status == "match" for r in gradients), run.explain()  # a row when they differ
    before = to_numpy(run.torch_ns["before"])
    for w in (to_numpy(run.torch_ns["model"].embedding.weight), to_numpy(table(run.ms_ns["model"]))):
        np.testing.assert_array_equal(w[1], before[1])
        assert np.abs(w[2] - before[2]).max() > 0.05
    assert_all_match(run, "model.embedding.weight", "model.fc.weight", "losses")
    assert "class PaddingEmbedding(nn.Embedding):" in run.port.code
    assert "self.embedding = PaddingEmbedding(vocab_size, embedding_dim, padding_idx=pad_index, " \
           "embedding_table=Normal(1.0))" in run.port.code
    assert_idempotent(run)


def test_embedding_padding_row_gets_no_gradient_in_a_top_level_loop():
    loop = """
losses = []
for step in range(3):
    optimizer.zero_grad()
    loss = criterion(model(ids), label)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
"""
    run = run_pair(NBOW + loop)
    _assert_padding_row_kept(run, lambda m: m.embedding.embedding_table)


def test_embedding_padding_row_gets_no_gradient_in_a_function_receiving_the_model():
    train = """
def train(model, batches, optimizer, criterion):
    model.train()
    out = []
    for ids, label in batches:
        prediction = model(ids)
        loss = criterion(prediction, label)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        out.append(loss.item())
    return out

losses = train(model, [(ids, label)] * 3, optimizer, criterion)
"""
    run = run_pair(NBOW + train)
    _assert_padding_row_kept(run, lambda m: m.embedding.embedding_table)


def test_embedding_padding_row_positional_and_without_padding():
    """padding_idx given positionally takes the subclass; without it (or None) the
    Embedding stays MindSpore's own."""
    source = HEAD + (
        "emb = nn.Embedding(10, 4, 0)\nplain = nn.Embedding(10, 4)\nnone = nn.Embedding(10, 4, padding_idx=None)\n"
        "ids = torch.tensor([[0, 2, 9], [4, 0, 1]])\nout = emb(ids) + plain(ids) + none(ids)\n")
    run = run_pair(source)
    code = run.port.code
    assert "emb = PaddingEmbedding(10, 4, padding_idx=0, embedding_table=Normal(1.0))" in code
    assert "plain = nn.Embedding(10, 4, embedding_table=Normal(1.0))" in code
    assert "none = nn.Embedding(10, 4, padding_idx=None, embedding_table=Normal(1.0))" in code
    assert_all_match(run, "out", "emb.weight")


def test_embedding_padding_row_gets_no_gradient_in_a_later_cell(parity_shell):
    """The model built in one %%ms_parity cell, trained in the next: the gradients of
    each step agree, the padding row stays the pretrained one on both sides."""
    train = """
losses = []
for step in range(2):
    optimizer.zero_grad()
    loss = criterion(model(ids), label)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
"""
    reports, _ = parity_cells(parity_shell, [NBOW, train])
    assert reports[1].ok, reports[1].summary()  # an "optimizer: gradients" row would differ
    assert reports[1].row("losses").status == "match"
    import msmagic
    table = msmagic.shadow_namespace()["model"].embedding.embedding_table.asnumpy()
    before = to_numpy(parity_shell.user_ns["before"])
    np.testing.assert_array_equal(table[1], before[1])
    np.testing.assert_array_equal(to_numpy(parity_shell.user_ns["model"].embedding.weight)[1], before[1])


def test_embedding_from_pretrained_frozen_and_trained():
    """graykode's transformer builds positional embeddings with from_pretrained(table,
    freeze=True) inside a Module; a trainable one is updated by the optimizer."""
    run = run_pair(src("""
        import torch
        import torch.nn as nn
        class Model(nn.Module):
            def __init__(self, table):
                super().__init__()
                self.pos = nn.Embedding.from_pretrained(table, freeze=True)
                self.tok = nn.Embedding.from_pretrained(table * 2, freeze=False)
            def forward(self, ids):
                return (self.pos(ids) * self.tok(ids)).sum()
        table = torch.arange(15.0).reshape(5, 3) / 10
        model = Model(table)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        ids = torch.tensor([[0, 2, 4], [1, 1, 3]])
        for _ in range(2):
            optimizer.zero_grad()
            loss = model(ids)
            loss.backward()
            optimizer.step()
        trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    """))
    assert run.torch_error is None and run.ms_error is None, run.explain()
    assert "self.pos = embedding_from_pretrained(table, freeze=True)" in run.port.code
    assert not run.port.unsupported and "import torch" not in run.port.code
    assert run.agree("loss", "model.pos.weight", "model.tok.weight"), run.explain()
    assert run.ms_ns["trainable"] == run.torch_ns["trainable"] == 15


def test_embedding_from_pretrained_with_padding_is_flagged():
    r = msmagic.port(HEAD + "e = nn.Embedding.from_pretrained(torch.ones(3, 2), padding_idx=0)\n")
    assert [(f.line, f.rule_id) for f in r.unsupported] == [(3, "EMB001")]
def test_layer_norm_width_held_by_a_name_at_top_level():
    """``nn.LayerNorm(d_model)``: the width is a variable, an int when it runs."""
    run = check(HEAD + "torch.manual_seed(0)\nd_model = len('abcdef')\nln = nn.LayerNorm(d_model)\n"
                "x = torch.randn(2, 3, d_model) * 3 + 1\ny = ln(x)\n", "y", rule="NRM001")
    assert "nn.LayerNorm((d_model,) if isinstance(d_model, int) else d_model, epsilon=1e-5)" in run.port.code
    assert "import torch" not in run.port.code
    # a name assigned a literal is that literal
    run = check(HEAD + "torch.manual_seed(0)\nd_model = 6\nln = nn.LayerNorm(d_model)\n"
                "y = ln(torch.randn(2, 3, d_model) * 3 + 1)\n", "y", rule="NRM001")
    assert "nn.LayerNorm((d_model,), epsilon=1e-5)" in run.port.code


def test_layer_norm_width_from_a_parameter_in_a_later_cell(parity_shell):
    # a transformer block receives its width (EncoderBlock(input_dim, ...)) and a
    # later cell builds it, with an int or a one-element list
    cells = [src("""
        import torch
        import torch.nn as nn

        class Block(nn.Module):
            def __init__(self, input_dim, cfg):
                super().__init__()
                self.norm1 = nn.LayerNorm(input_dim)
                self.norm2 = nn.LayerNorm(cfg["width"], eps=1e-3)

            def forward(self, x):
                return self.norm2(self.norm1(x) * 2 + 1)
    """), src("""
        torch.manual_seed(0)
        block = Block(5, {"width": [5]})
        x = torch.randn(2, 4, 5) * 3
        y = block(x)
    """)]
    for i, cell in enumerate(cells):
        parity_shell.run_cell_magic("ms_parity", f"-o report_{i}", cell)
    report = parity_shell.user_ns["report_1"]
    assert report.ok and report.row("y").status == "match", report.summary()
    assert "(input_dim,) if isinstance(input_dim, int) else input_dim" in parity_shell.user_ns["report_0"].port.code


def test_layer_norm_width_of_several_dims_held_by_a_name_raises_on_mindspore():
    """A longer shape held by a name is passed on: MindSpore raises on the first call
    instead of normalising other axes than PyTorch."""
    run = run_pair(HEAD + "shape = tuple([3, 4])\nln = nn.LayerNorm(shape)\ny = ln(torch.ones(2, 3, 4))\n")
    assert run.torch_error is None
    assert run.ms_error is not None and "gamma or beta shape" in str(run.ms_error), run.explain()
