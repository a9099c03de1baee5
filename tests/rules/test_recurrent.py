"""Recurrent layers (RNN): nn.LSTM/GRU/RNN and the cells are ported and run on both sides.
run_pair copies the PyTorch weights into the Cell by name (MindSpore uses PyTorch's names
and gate order), so outputs and final states must agree to rtol 1e-4.

Inputs are fixed arrays handed to both namespaces: ``x`` (5, 2, 3) sequence-first,
``xb`` (2, 5, 3) batch-first, ``h1``/``c1`` (1, 2, 4), ``h2``/``c2`` (2, 2, 4),
``h4``/``c4`` (4, 2, 4) initial states, ``xc`` (2, 3) and ``hc``/``cc`` (2, 4) for the cells.
"""

import ast

import numpy as np
import pytest

import msmagic
from msmagic.parity_check import run_pair, to_numpy
from tests.rules.support import findings, rules, run_with_inputs

HEAD = "import torch\nimport torch.nn as nn\n"
_RNG = np.random.default_rng(7)
SHAPES = {"x": (5, 2, 3), "xb": (2, 5, 3), "h1": (1, 2, 4), "c1": (1, 2, 4), "h2": (2, 2, 4),
          "c2": (2, 2, 4), "h4": (4, 2, 4), "c4": (4, 2, 4), "xc": (2, 3), "hc": (2, 4), "cc": (2, 4)}
INPUTS = {k: _RNG.standard_normal(s).astype(np.float32) for k, s in SHAPES.items()}


def pair(body, check=True):
    return run_with_inputs(HEAD + body, INPUTS, check, rtol=1e-4, atol=1e-5)


def assert_match(run, *names):
    assert run.torch_error is None and run.ms_error is None, run.explain()
    for n in names:
        row = run.row(n)
        assert row.status == "match", run.explain()
        assert row.torch_shape == row.ms_shape, run.explain()
    # every value, every copied parameter included, agrees
    assert all(r.status == "match" for r in run.rows), run.explain()


def assert_idempotent(run):
    assert msmagic.port(run.port.code).code == run.port.code  # porting again changes nothing


# ----------------------------------------------------------------------------- RNN001

LSTM_CASES = [
    # (constructor, ported constructor, call, initial-state names)
    ("nn.LSTM(3, 4)", "nn.LSTM(3, 4)", "lstm(x)"),
    ("nn.LSTM(3, 4)", "nn.LSTM(3, 4)", "lstm(x, (h1, c1))"),
    ("nn.LSTM(input_size=3, hidden_size=4, num_layers=2)",
     "nn.LSTM(input_size=3, hidden_size=4, num_layers=2)", "lstm(x, (h2, c2))"),
    ("nn.LSTM(3, 4, 2, False)", "nn.LSTM(3, 4, 2, False)", "lstm(x)"),
    ("nn.LSTM(3, 4, bias=False, batch_first=True)", "nn.LSTM(3, 4, has_bias=False, batch_first=True)",
     "lstm(xb, (h1, c1))"),
    ("nn.LSTM(3, 4, 2, bidirectional=True)", "nn.LSTM(3, 4, 2, bidirectional=True)", "lstm(x, (h4, c4))"),
    ("nn.LSTM(3, hidden_size=4, num_layers=2, batch_first=True, bidirectional=True, device='cpu')",
     "nn.LSTM(3, hidden_size=4, num_layers=2, batch_first=True, bidirectional=True)", "lstm(xb)"),
    ("nn.LSTM(3, 4, 2, True, False, 0.0, True, 0)", "nn.LSTM(3, 4, 2, True, False, 0.0, True)", "lstm(x)"),
]


@pytest.mark.parametrize("ctor, expected, call", LSTM_CASES, ids=[f"{c[0]}-{c[2]}" for c in LSTM_CASES])
def test_lstm_output_and_final_state(ctor, expected, call):
    run = pair(f"lstm = {ctor}\noutput, (h_n, c_n) = {call}\nlast = output[-1]\n")
    assert f"lstm = {expected}\n" in run.port.code, run.port.code
    assert "RNN001" in rules(run) and not findings(run)
    assert_match(run, "output", "h_n", "c_n", "last", "lstm.weight_ih_l0", "lstm.weight_hh_l0")
    assert run.row("output").torch_dtype == "torch.float32" and run.row("output").ms_dtype == "Float32"
    assert_idempotent(run)


GRU_RNN_CASES = [
    ("nn.GRU(3, 4)", "nn.GRU(3, 4)", "layer(x)"),
    ("nn.GRU(3, 4, 2)", "nn.GRU(3, 4, 2)", "layer(x, h2)"),
    ("nn.GRU(input_size=3, hidden_size=4, bias=False, batch_first=True)",
     "nn.GRU(input_size=3, hidden_size=4, has_bias=False, batch_first=True)", "layer(xb, h1)"),
    ("nn.GRU(3, 4, num_layers=2, bidirectional=True)", "nn.GRU(3, 4, num_layers=2, bidirectional=True)",
     "layer(x, h4)"),
    ("nn.GRU(3, 4, 2, True, True, 0, True)", "nn.GRU(3, 4, 2, True, True, 0.0, True)", "layer(xb)"),
    ("nn.RNN(3, 4)", "nn.RNN(3, 4)", "layer(x)"),
    ("nn.RNN(3, 4, 2, 'relu')", "nn.RNN(3, 4, 2, nonlinearity='relu')", "layer(x, h2)"),
    ("nn.RNN(3, 4, 1, 'tanh', False, True)", "nn.RNN(3, 4, 1, nonlinearity='tanh', has_bias=False, batch_first=True)",
     "layer(xb)"),
    ("nn.RNN(input_size=3, hidden_size=4, num_layers=2, nonlinearity='relu', bidirectional=True)",
     "nn.RNN(input_size=3, hidden_size=4, num_layers=2, nonlinearity='relu', bidirectional=True)", "layer(x, h4)"),
]


@pytest.mark.parametrize("ctor, expected, call", GRU_RNN_CASES, ids=[f"{c[0]}-{c[2]}" for c in GRU_RNN_CASES])
def test_gru_and_rnn_output_and_final_state(ctor, expected, call):
    run = pair(f"layer = {ctor}\noutput, h_n = {call}\n")
    assert f"layer = {expected}\n" in run.port.code, run.port.code
    assert "RNN001" in rules(run) and not findings(run)
    assert_match(run, "output", "h_n", "layer.weight_ih_l0")
    assert_idempotent(run)


def test_relu_and_tanh_differ_so_nonlinearity_is_really_passed():
    run = pair("a = nn.RNN(3, 4, 1, 'relu')\nb = nn.RNN(3, 4)\nb.load_state_dict(a.state_dict())\n"
               "ya, _ = a(x)\nyb, _ = b(x)\n", check=False)
    ya, yb = to_numpy(run.torch_ns["ya"]), to_numpy(run.torch_ns["yb"])
    assert not np.allclose(ya, yb)
    single = pair("layer = nn.RNN(3, 4, 1, 'relu')\nout, h = layer(x)\n")
    assert (to_numpy(single.ms_ns["out"]) >= 0).all()  # relu, not tanh, on the MindSpore side
    assert_match(single, "out", "h")


def test_lstm_inside_a_module_with_flatten_parameters():
    body = """
class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.LSTM(3, 4, num_layers=2, batch_first=True, bidirectional=True)
        self.head = nn.Linear(8, 2)

    def forward(self, x):
        self.rnn.flatten_parameters()
        out, (h, c) = self.rnn(x)
        return self.head(out[:, -1])

model = Encoder()
y = model(xb)
"""
    run = pair(body)
    code = run.port.code
    assert "flatten_parameters" not in code and "RNN004" in rules(run)
    assert "self.rnn = nn.LSTM(3, 4, num_layers=2, batch_first=True, bidirectional=True)" in code
    assert_match(run, "y", "model.rnn.weight_ih_l1_reverse", "model.head.weight")
    assert_idempotent(run)


def test_flatten_parameters_alone_in_a_block_becomes_pass():
    body = "gru = nn.GRU(3, 4)\ndef prepare(m):\n    m.flatten_parameters()\nprepare(gru)\nout, h = gru(x)\n"
    run = pair(body)
    assert "def prepare(m):\n    pass\n" in run.port.code, run.port.code
    assert_match(run, "out", "h")
    ast.parse(run.port.code)


def test_flatten_parameters_value_used_is_flagged():
    r = msmagic.port(HEAD + "gru = nn.GRU(3, 4)\nres = gru.flatten_parameters()\n")
    assert "RNN004" in [f.rule_id for f in r.unsupported]
    assert "flatten_parameters() does not exist in MindSpore" in r.code


@pytest.mark.parametrize("value, ported", [("0", "0.0"), ("p", "float(p)"), ("float(p)", "float(p)")])
def test_dropout_is_a_float(value, ported):
    run = pair(f"p = 0\nlstm = nn.LSTM(3, 4, 2, dropout={value})\nlstm.eval()\nout, (h, c) = lstm(x)\n")
    assert f"nn.LSTM(3, 4, 2, dropout={ported})" in run.port.code, run.port.code
    assert_match(run, "out", "h", "c")
    assert_idempotent(run)


def test_dropout_between_layers_acts_in_training_mode_only():
    """A non-zero dropout gets .set_train() (PyTorch layers start in training mode): the
    MindSpore layer then drops (its output differs from eval mode), and in eval mode
    both sides agree exactly."""
    body = ("torch.manual_seed(0)\nlstm = nn.LSTM(3, 4, 2, dropout=0.5)\nout_train, _ = lstm(x)\n"
            "lstm.eval()\nout_eval, (h, c) = lstm(x)\n")
    run = pair(body, check=False)
    assert "nn.LSTM(3, 4, 2, dropout=0.5).set_train()" in run.port.code
    assert run.torch_error is None and run.ms_error is None, run.explain()
    for ns in (run.torch_ns, run.ms_ns):
        assert not np.allclose(to_numpy(ns["out_train"]), to_numpy(ns["out_eval"]))
    for name in ("out_eval", "h", "c"):
        assert run.row(name).status == "match", run.explain()


def test_float64_layer_keeps_its_dtype():
    run = pair("layer = nn.GRU(3, 4, dtype=torch.float64)\nout, h = layer(x.double())\n")
    assert "nn.GRU(3, 4, dtype=mindspore.float64)" in run.port.code, run.port.code
    assert run.row("out").ms_dtype == "Float64" and run.row("out").torch_dtype == "torch.float64"
    assert_match(run, "out", "h")


@pytest.mark.parametrize("ctor", ["nn.LSTM(3, 4, proj_size=2)", "nn.LSTM(3, 4, 1, True, False, 0.0, False, 2)"])
def test_proj_size_is_flagged(ctor):
    run = pair(f"lstm = {ctor}\n", check=False)
    assert "RNN001" in findings(run)
    assert "proj_size= has no MindSpore equivalent" in run.port.code
    assert ", 2)" not in run.port.code and "proj_size=2" not in run.port.code
    ast.parse(run.port.code)


def test_default_proj_size_is_not_a_finding():
    run = pair("lstm = nn.LSTM(3, 4, proj_size=0)\nout, (h, c) = lstm(x)\n")
    assert not findings(run) and "proj_size" not in run.port.code
    assert_match(run, "out", "h", "c")


def test_default_initialisation_has_the_same_bound():
    """Without copying, both frameworks draw from U(-1/sqrt(hidden), 1/sqrt(hidden))."""
    run = run_pair(HEAD + "lstm = nn.LSTM(8, 64)\ncell = nn.GRUCell(8, 64)\n", sync=False)
    bound = 1 / 8
    ms_lstm, ms_cell = run.ms_ns["lstm"], run.ms_ns["cell"]
    for w in (to_numpy(run.torch_ns["lstm"].weight_hh_l0), ms_lstm.weight_hh_l0.asnumpy(),
              to_numpy(run.torch_ns["cell"].weight_ih), ms_cell.weight_ih.asnumpy()):
        assert np.abs(w).max() <= bound and np.abs(w).max() > 0.95 * bound
        assert abs(w.std() - bound / np.sqrt(3)) < 0.1 * bound


def test_unbatched_input_raises_in_mindspore():
    """PyTorch accepts (L, input_size); MindSpore 2.10 raises: documented in RNN001."""
    run = pair("lstm = nn.LSTM(3, 4)\nout, (h, c) = lstm(x[:, 0])\n", check=False)
    assert run.torch_error is None and run.ms_error is not None


# ----------------------------------------------------------------------------- RNN002


def test_attributes():
    body = ("lstm = nn.LSTM(6, 4, 2, bias=False, batch_first=True, bidirectional=True)\n"
            "n_in = lstm.input_size\nhas_bias = lstm.bias\nhidden = lstm.hidden_size\n"
            "layers = lstm.num_layers\nbf = lstm.batch_first\nbi = lstm.bidirectional\n"
            "w = lstm.weight_hh_l1_reverse\ncell = nn.GRUCell(6, 4)\ncell_in = cell.input_size\n"
            "cell_bias = cell.bias\n")
    run = pair(body)
    code = run.port.code
    assert "n_in = lstm.w_ih_list[0].shape[1]" in code and "has_bias = lstm.has_bias" in code
    assert "cell_in = cell.input_size" in code and "cell_bias = cell.has_bias" in code
    assert "RNN002" in rules(run)
    assert_match(run, "n_in", "has_bias", "hidden", "layers", "bf", "bi", "w", "cell_in", "cell_bias")
    assert_idempotent(run)


def test_proj_size_attribute_is_flagged():
    r = msmagic.port(HEAD + "lstm = nn.LSTM(3, 4)\nk = lstm.proj_size\n")
    assert "RNN002" in [f.rule_id for f in r.unsupported]
    assert "proj_size does not exist in MindSpore" in r.code


# ----------------------------------------------------------------------------- RNN003

CELL_CASES = [
    ("nn.LSTMCell(3, 4)", "nn.LSTMCell(3, 4)", "h, c = cell(xc, (hc, cc))", ("h", "c")),
    ("nn.LSTMCell(3, 4, False)", "nn.LSTMCell(3, 4, False)", "h, c = cell(xc, (hc, cc))", ("h", "c")),
    ("nn.GRUCell(input_size=3, hidden_size=4, bias=False)",
     "nn.GRUCell(input_size=3, hidden_size=4, has_bias=False)", "h = cell(xc, hc)", ("h",)),
    ("nn.GRUCell(3, 4, device='cpu')", "nn.GRUCell(3, 4)", "h = cell(xc, hc)", ("h",)),
    ("nn.RNNCell(3, 4, True, 'relu')", "nn.RNNCell(3, 4, True, 'relu')", "h = cell(xc, hc)", ("h",)),
    ("nn.RNNCell(3, 4, nonlinearity='tanh')", "nn.RNNCell(3, 4, nonlinearity='tanh')", "h = cell(xc, hc)", ("h",)),
]


@pytest.mark.parametrize("ctor, expected, call, outs", CELL_CASES, ids=[c[0] for c in CELL_CASES])
def test_cells(ctor, expected, call, outs):
    run = pair(f"cell = {ctor}\n{call}\n")
    assert f"cell = {expected}\n" in run.port.code, run.port.code
    assert "RNN003" in rules(run) and not findings(run)
    assert_match(run, *outs, "cell.weight_ih")
    assert_idempotent(run)


def test_cell_unrolled_over_a_sequence():
    body = ("cell = nn.GRUCell(3, 4)\nh = hc\nouts = []\nfor t in range(x.shape[0]):\n"
            "    h = cell(x[t], h)\n    outs.append(h)\nseq = torch.stack(outs)\n")
    run = pair(body)
    assert_match(run, "seq", "h")
    assert_idempotent(run)


def test_cell_without_state_raises_in_mindspore():
    """PyTorch starts from zeros; MindSpore 2.10 requires hx: documented in RNN003."""
    run = pair("cell = nn.GRUCell(3, 4)\nh = cell(xc)\n", check=False)
    assert run.torch_error is None and run.ms_error is not None


def test_mindspore_tanh_is_approximate_for_large_preactivations():
    """Documented in RNN001's installed_note: GRU/RNN run MindSpore's float32 tanh, which
    on 2.10 CPU is off by up to ~1e-4 near |x| = 5 (and exceeds 1); LSTM's fused kernel
    is not affected. Weights are set by hand so the pre-activation is exactly x."""
    import mindspore as ms
    import torch

    x = np.array([[[4.5]], [[5.0]]], np.float32)  # (L=2, N=1, 1)
    t = torch.nn.RNN(1, 1, bias=False)
    m = ms.nn.RNN(1, 1, has_bias=False)
    with torch.no_grad():
        t.weight_ih_l0.fill_(1.0)
        t.weight_hh_l0.fill_(0.0)
    m.weight_ih_l0.set_data(ms.Tensor(np.ones((1, 1), np.float32)))
    m.weight_hh_l0.set_data(ms.Tensor(np.zeros((1, 1), np.float32)))
    ref = np.tanh(x.astype(np.float64))
    tout = t(torch.tensor(x))[0].detach().numpy()
    mout = m(ms.Tensor(x))[0].asnumpy()
    assert np.abs(tout - ref).max() < 1e-6
    assert 2e-5 < np.abs(mout - ref).max() < 2e-4


RNN_DROPOUT = """
import torch
import torch.nn as nn
torch.manual_seed(0)
class CharRNN(nn.Module):
    def __init__(self, drop_prob):
        super().__init__()
        self.lstm = nn.LSTM(3, 8, 2, dropout=drop_prob, batch_first=True)
        self.fc = nn.Linear(8, 2)
    def forward(self, x):
        out, _ = self.lstm(x)
        return self.fc(out[:, -1])
net = CharRNN(DROP)
opt = torch.optim.SGD(net.parameters(), lr=0.5)
x, y = torch.randn(6, 5, 3), torch.tensor([0, 1, 1, 0, 1, 0])
def train(net, epochs):
    losses = []
    for e in range(epochs):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(net(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses
losses = train(net, 3)
"""


def test_dropout_between_recurrent_layers_is_flagged_where_training_differs():
    """The masks of nn.LSTM(num_layers=2, dropout=p) are drawn inside PyTorch's RNN kernel:
    parity cannot replay them, so the training statement really differs, and that is the
    statement the port flags (RNN006). With dropout=0 nothing is flagged and it matches."""
    import msmagic

    report = msmagic.parity(RNN_DROPOUT.replace("DROP", "0.5"))
    flagged = [f for f in report.port.unsupported if f.rule_id == "RNN006"]
    assert len(flagged) == 1 and flagged[0].api == "torch.nn.LSTM"
    assert report.first_divergence is not None and report.first_divergence.statement == flagged[0].statement
    assert report.row("losses").status == "differs"
    # a dropout given as a parameter may be non-zero: flagged; a literal 0 is not
    clean = msmagic.parity(RNN_DROPOUT.replace("DROP", "0.0").replace("dropout=drop_prob", "dropout=0"))
    assert not [f for f in clean.port.unsupported if f.rule_id == "RNN006"]
    assert clean.row("losses").status == "match", clean.summary()
