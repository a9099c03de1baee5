"""Attention and transformer layers (ATN): nn.MultiheadAttention, nn.TransformerEncoderLayer
and nn.TransformerEncoder are ported and run on both sides in eval mode; outputs, shapes
and dtypes must agree to rtol 1e-4.

MultiheadAttention has PyTorch's parameter names in MindSpore, so run_pair synchronises it
by itself. The encoder layer's feed-forward Dense layers are ``dense1``/``dense2`` where
PyTorch has ``linear1``/``linear2``: renaming a child module is not something lockstep's
``params`` hook can express yet (it renames leaves only), so these tests build the layer
with run_pair, copy every parameter across explicitly (``copy_weights``, which applies the
parent's ``params`` map to path segments), then run the forward call in the same
namespaces. ``test_encoder_layer_synchronises_by_itself`` is the acceptance test for that
lockstep hook."""

import ast

import libcst as cst
import mindspore as ms
import numpy as np
import pytest

import msmagic
from msmagic.engine import spec
from msmagic.parity_check import ms_name_for, run_pair, to_numpy
from tests.rules.support import findings, rules

HEAD = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
RTOL, ATOL = 1e-4, 1e-5


def assert_match(run, *names):
    assert run.torch_error is None and run.ms_error is None, run.explain()
    for n in names:
        row = run.row(n)
        assert row.status == "match", run.explain()
        assert row.torch_shape == row.ms_shape, run.explain()
        assert row.torch_dtype.replace("torch.", "").lower() == row.ms_dtype.lower(), run.explain()


def code_only(code):
    """The code without its comments (findings are reported in comments)."""
    return "\n".join(line.split("#")[0] for line in code.splitlines())


def assert_idempotent(run):
    cst.parse_module(run.port.code)
    assert msmagic.port(run.port.code).code == run.port.code  # porting again changes nothing


# ----------------------------------------------------------------------------- helpers


def _child_map(parent):
    """The ``params`` dict of the mapping entry for ``parent``'s torch class, if any."""
    for klass in type(parent).__mro__:
        if klass.__module__.startswith("torch.nn"):
            entry = spec.APIS.get(f"torch.nn.{klass.__name__}")
            if entry is not None and isinstance(entry.params, dict):
                return entry.params
    return {}


def ms_name(tmod, torch_name):
    """MindSpore name of a torch parameter: path segments renamed by the parent layer's
    ``params`` dict (linear1 -> dense1), the leaf by lockstep's ms_name_for."""
    *path, leaf = torch_name.split(".")
    out, owner = [], tmod
    for part in path:
        out.append(_child_map(owner).get(part, part))
        owner = getattr(owner, part) if not part.isdigit() else owner[int(part)]
    out.append(ms_name_for(owner, leaf))
    return ".".join(out)


def copy_weights(tmod, cell):
    """Copy every torch parameter into the Cell; each must have a MindSpore counterpart
    of the same shape, and the Cell must have no parameter left over."""
    state = dict(cell.parameters_and_names())
    seen = set()
    for name, p in tmod.named_parameters():
        target = ms_name(tmod, name)
        assert target in state, (name, target, sorted(state))
        assert tuple(state[target].shape) == tuple(p.shape), name
        state[target].set_data(ms.Tensor(p.detach().numpy(), dtype=state[target].dtype))
        seen.add(target)
    assert seen == set(state), set(state) - seen


def run_synced(build, forward, modules, names):
    """Build with run_pair, copy the modules' weights explicitly, run ``forward`` in the
    same namespaces and compare ``names``."""
    built = run_pair(HEAD + build, rtol=RTOL, atol=ATOL)
    assert built.torch_error is None and built.ms_error is None, built.explain()
    for m in modules:
        copy_weights(built.torch_ns[m], built.ms_ns[m])
    run = run_pair(HEAD + forward, torch_ns=built.torch_ns, ms_ns=built.ms_ns, names=list(names),
                   rtol=RTOL, atol=ATOL)
    assert run.torch_error is None and run.ms_error is None, run.explain()
    return built, run


# ----------------------------------------------------------------------------- ATN001

X_LNE = "x = torch.randn(5, 3, 8)\n"  # (L, N, E)
X_NLE = "x = torch.randn(3, 5, 8)\n"  # (N, L, E)
PAD = "pad = torch.tensor([[False, False, False, True, True], [False] * 5, [False, True] * 2 + [False]])\n"
CAUSAL = ("causal = torch.tensor([[j > i for j in range(5)] for i in range(5)])\n")
FLOAT_MASK = "fmask = torch.tensor([[0.0 if j <= i else -1e9 for j in range(5)] for i in range(5)])\n"


@pytest.mark.parametrize("ctor, expected, data, call", [
    ("nn.MultiheadAttention(8, 2)", "nn.MultiheadAttention(8, 2)", X_LNE, "mha(x, x, x)"),
    ("nn.MultiheadAttention(8, 2, batch_first=True)", "nn.MultiheadAttention(8, 2, batch_first=True)",
     X_NLE, "mha(x, x, x)"),
    ("nn.MultiheadAttention(8, 2, 0.0, False)", "nn.MultiheadAttention(8, 2, 0.0, False)", X_LNE,
     "mha(x, x, x)"),
    ("nn.MultiheadAttention(embed_dim=8, num_heads=4, bias=False)",
     "nn.MultiheadAttention(embed_dim=8, num_heads=4, has_bias=False)", X_LNE, "mha(x, x, x)"),
    ("nn.MultiheadAttention(8, 2, kdim=6, vdim=7)", "nn.MultiheadAttention(8, 2, kdim=6, vdim=7)",
     "q = torch.randn(4, 3, 8)\nk = torch.randn(5, 3, 6)\nv = torch.randn(5, 3, 7)\n", "mha(q, k, v)"),
    ("nn.MultiheadAttention(8, 2, add_bias_kv=True, add_zero_attn=True)",
     "nn.MultiheadAttention(8, 2, add_bias_kv=True, add_zero_attn=True)", X_LNE, "mha(x, x, x)"),
    ("nn.MultiheadAttention(8, 2)", "nn.MultiheadAttention(8, 2)", X_LNE,
     "mha(x, x, x, average_attn_weights=False)"),
    ("nn.MultiheadAttention(8, 2, batch_first=True)", "nn.MultiheadAttention(8, 2, batch_first=True)",
     X_NLE + PAD, "mha(x, x, x, key_padding_mask=pad)"),
    ("nn.MultiheadAttention(8, 2)", "nn.MultiheadAttention(8, 2)", X_LNE + CAUSAL,
     "mha(x, x, x, attn_mask=causal)"),
    ("nn.MultiheadAttention(8, 2, batch_first=True)", "nn.MultiheadAttention(8, 2, batch_first=True)",
     X_NLE + PAD + CAUSAL, "mha(x, x, x, key_padding_mask=pad, need_weights=True, attn_mask=causal)"),
    ("nn.MultiheadAttention(8, 2)", "nn.MultiheadAttention(8, 2)", X_LNE + FLOAT_MASK,
     "mha(x, x, x, attn_mask=fmask)"),
    ("nn.MultiheadAttention(8, 2)", "nn.MultiheadAttention(8, 2)", "x = torch.randn(5, 8)\n",
     "mha(x, x, x)"),  # unbatched
])
def test_multihead_attention_forward(ctor, expected, data, call):
    src = HEAD + f"mha = {ctor}\nmha.eval()\n{data}out, weights = {call}\n"
    run = run_pair(src, rtol=RTOL, atol=ATOL)
    assert f"mha = {expected}" in run.port.code, run.port.code
    assert "ATN001" in rules(run) and not findings(run)
    assert_match(run, "out", "weights", "mha.out_proj.weight")
    assert_idempotent(run)


def test_multihead_attention_without_weights_indexes_the_output():
    """need_weights=False: PyTorch returns (out, None), MindSpore (out,); [0] works in both."""
    run = run_pair(HEAD + "mha = nn.MultiheadAttention(8, 2)\n" + X_LNE
                   + "out = mha(x, x, x, need_weights=False)[0]\n", rtol=RTOL, atol=ATOL)
    assert_match(run, "out")


def test_multihead_attention_example_binds_every_parameter():
    run = run_pair(HEAD + "mha = nn.MultiheadAttention(8, 2, kdim=4, vdim=4, add_bias_kv=True)\n")
    names = {r.name for r in run.rows}
    assert {"mha.q_proj_weight", "mha.k_proj_weight", "mha.v_proj_weight", "mha.in_proj_bias",
            "mha.bias_k", "mha.bias_v", "mha.out_proj.weight", "mha.out_proj.bias"} <= names
    assert_match(run, *names)


def test_multihead_attention_dtype_is_flagged_device_dropped():
    run = run_pair(HEAD + "mha = nn.MultiheadAttention(8, 2, device='cpu', dtype=torch.float64)\n")
    assert "ATN001" in findings(run) and "DEV003" in rules(run)
    assert "dtype= has no MindSpore equivalent" in run.port.code
    assert "device" not in code_only(run.port.code) and "float64" not in run.port.code
    ast.parse(run.port.code)


def test_multihead_attention_out_proj_bias_init_differs():
    """Documented in ATN001: PyTorch zeroes out_proj.bias, MindSpore draws it."""
    run = run_pair(HEAD + "mha = nn.MultiheadAttention(64, 4)\n", sync=False)
    t, m = run.torch_ns["mha"], run.ms_ns["mha"]
    assert np.all(to_numpy(t.out_proj.bias) == 0) and np.all(to_numpy(t.in_proj_bias) == 0)
    assert np.all(m.in_proj_bias.asnumpy() == 0)
    bias = m.out_proj.bias.asnumpy()
    assert np.any(bias != 0) and np.abs(bias).max() <= 1 / 8


def test_mindspore_2_10_multihead_attention_call_differences():
    """The forward-call differences ATN001 documents, checked on the installed MindSpore."""
    mha = ms.nn.MultiheadAttention(8, 2)
    x = ms.Tensor(np.random.default_rng(0).standard_normal((5, 3, 8)), ms.float32)
    assert len(mha(x, x, x, need_weights=False)) == 1
    with pytest.raises(IndexError):
        mha(query=x, key=x, value=x)
    with pytest.raises(TypeError):
        mha(x, x, x, is_causal=False)
    byte_mask = ms.Tensor(np.zeros((3, 5), np.uint8))
    with pytest.raises(Exception, match="bool and floating"):
        mha(x, x, x, key_padding_mask=byte_mask)
    import torch  # PyTorch 2.13 refuses byte masks too (the docs say it takes them)

    t = torch.nn.MultiheadAttention(8, 2)
    tx = torch.ones(5, 3, 8)
    with pytest.raises(AssertionError, match="bool and floating"):
        t(tx, tx, tx, key_padding_mask=torch.zeros(3, 5, dtype=torch.uint8))


# ----------------------------------------------------------------------------- ATN002


@pytest.mark.parametrize("ctor, expected, data, call", [
    ("nn.TransformerEncoderLayer(8, 2, 16, 0.0)", "nn.TransformerEncoderLayer(8, 2, 16, 0.0)",
     X_LNE, "layer(x)"),
    ("nn.TransformerEncoderLayer(8, 2, 16, 0.0, 'gelu')",
     "nn.TransformerEncoderLayer(8, 2, 16, 0.0, 'gelu')", X_LNE, "layer(x)"),
    ("nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, activation=F.gelu)",
     "nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, activation='gelu')", X_LNE, "layer(x)"),
    ("nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, activation=torch.relu)",
     "nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, activation='relu')", X_LNE, "layer(x)"),
    ("nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, activation=nn.GELU())",
     "nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, activation='gelu')", X_LNE, "layer(x)"),
    ("nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, activation=nn.ReLU())",
     "nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, activation='relu')", X_LNE, "layer(x)"),
    ("nn.TransformerEncoderLayer(d_model=8, nhead=4, dim_feedforward=32, dropout=0.0, norm_first=True)",
     "nn.TransformerEncoderLayer(d_model=8, nhead=4, dim_feedforward=32, dropout=0.0, norm_first=True)",
     X_LNE, "layer(x)"),
    ("nn.TransformerEncoderLayer(8, 2, 16, 0.0, batch_first=True, layer_norm_eps=1e-2)",
     "nn.TransformerEncoderLayer(8, 2, 16, 0.0, batch_first=True, layer_norm_eps=1e-2)",
     X_NLE + PAD, "layer(x, src_key_padding_mask=pad)"),
    ("nn.TransformerEncoderLayer(8, 2, 16, 0.0)", "nn.TransformerEncoderLayer(8, 2, 16, 0.0)",
     X_LNE + CAUSAL, "layer(x, src_mask=causal)"),
    ("nn.TransformerEncoderLayer(8, 2, 16, 0.0, batch_first=True)",
     "nn.TransformerEncoderLayer(8, 2, 16, 0.0, batch_first=True)",
     X_NLE + PAD + CAUSAL, "layer(x, causal, pad)"),
    ("nn.TransformerEncoderLayer(8, 2, 16, 0.0)", "nn.TransformerEncoderLayer(8, 2, 16, 0.0)",
     "x = torch.randn(5, 8)\n", "layer(x)"),  # unbatched
])
def test_encoder_layer_forward(ctor, expected, data, call):
    built, run = run_synced(f"layer = {ctor}\nlayer.eval()\n{data}", f"y = {call}\n", ["layer"], ["y"])
    assert f"layer = {expected}" in built.port.code, built.port.code
    assert "ATN002" in rules(built) and not findings(built)
    assert_match(run, "y")
    assert_idempotent(built)


def test_encoder_layer_layer_norm_epsilon_is_pytorchs():
    """MindSpore's nn.LayerNorm defaults to 1e-7; the encoder layer passes 1e-5 like PyTorch.
    A near-constant input makes the epsilon visible."""
    built, run = run_synced("layer = nn.TransformerEncoderLayer(4, 1, 4, 0.0)\nlayer.eval()\n"
                            "x = torch.full((3, 1, 4), 0.5) + torch.arange(4.) * 1e-3\n",
                            "y = layer(x)\n", ["layer"], ["y"])
    assert built.ms_ns["layer"].norm1.epsilon == 1e-5
    assert_match(run, "y")


@pytest.mark.parametrize("arg, comment", [
    ("bias=False", "bias= has no MindSpore equivalent, removed"),
    ("dtype=torch.float64", "dtype= has no MindSpore equivalent, removed"),
    ("activation=lambda t: t.tanh()", "activation must be 'relu' or 'gelu' in MindSpore"),
    ("activation=nn.GELU(approximate='tanh')", "activation must be 'relu' or 'gelu' in MindSpore"),
    ("activation=F.silu", "activation must be 'relu' or 'gelu' in MindSpore"),
])
def test_encoder_layer_unported_arguments_are_findings(arg, comment):
    run = run_pair(HEAD + f"layer = nn.TransformerEncoderLayer(8, 2, {arg})\n")
    assert "ATN002" in findings(run)
    assert comment in run.port.code
    if arg.startswith("activation"):
        assert "activation=" in code_only(run.port.code)  # kept, not silently dropped
    else:
        assert arg not in run.port.code
    ast.parse(run.port.code)


def test_encoder_layer_device_is_dropped_without_finding():
    run = run_pair(HEAD + "layer = nn.TransformerEncoderLayer(8, 2, 16, bias=True, device='cpu')\n")
    assert not findings(run) and "DEV003" in rules(run)
    assert "device" not in run.port.code and "bias" not in run.port.code


def test_mindspore_2_10_rejects_activation_cells():
    """The docs accept nn.ReLU/nn.GELU Cells as activation; 2.10 refuses every Cell."""
    for cell in (ms.nn.ReLU(), ms.nn.GELU(approximate=False)):
        with pytest.raises(ValueError, match="ops.relu or ops.gelu"):
            ms.nn.TransformerEncoderLayer(8, 2, 16, activation=cell)
    ms.nn.TransformerEncoderLayer(8, 2, 16, activation=ms.ops.gelu)


def test_encoder_layer_synchronises_by_itself():
    """The encoder layer's entry renames its sublayers (linear1 -> dense1): parity
    copies every parameter through the mapping entries alone."""
    run = run_pair(HEAD + "layer = nn.TransformerEncoderLayer(8, 2, 16, 0.0)\nlayer.eval()\n"
                   + X_LNE + "y = layer(x)\n", rtol=RTOL, atol=ATOL)
    assert run.torch_error is None and run.ms_error is None
    assert all(r.status == "match" for r in run.rows), run.explain()


# ----------------------------------------------------------------------------- ATN003

LAYER = "layer = nn.TransformerEncoderLayer(8, 2, 16, 0.0{extra})\n"


@pytest.mark.parametrize("extra, ctor, expected, data, call", [
    ("", "nn.TransformerEncoder(layer, 2)", "nn.TransformerEncoder(layer, 2)", X_LNE, "encoder(x)"),
    ("", "nn.TransformerEncoder(layer, num_layers=2, norm=nn.LayerNorm(8))",
     "nn.TransformerEncoder(layer, num_layers=2, norm=nn.LayerNorm((8,), epsilon=1e-5))",
     X_LNE + CAUSAL, "encoder(x, causal)"),
    (", batch_first=True", "nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)",
     "nn.TransformerEncoder(layer, 2)", X_NLE + PAD, "encoder(x, src_key_padding_mask=pad)"),
    (", batch_first=True, norm_first=True", "nn.TransformerEncoder(layer, 3, None, False, False)",
     "nn.TransformerEncoder(layer, 3, None)", X_NLE + PAD, "encoder(x, None, pad)"),
])
def test_encoder_forward(extra, ctor, expected, data, call):
    built, run = run_synced(LAYER.format(extra=extra) + f"encoder = {ctor}\nencoder.eval()\n{data}",
                            f"y = {call}\n", ["encoder"], ["y"])
    assert f"encoder = {expected}" in built.port.code, built.port.code
    assert "ATN003" in rules(built) and not findings(built)
    assert_match(run, "y")
    assert_idempotent(built)


def test_encoder_without_nested_tensors_matches_under_no_grad():
    built, run = run_synced(
        LAYER.format(extra=", batch_first=True")
        + "encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)\nencoder.eval()\n"
        + X_NLE + PAD.replace("[False, True] * 2 + [False]", "[False] * 3 + [True] * 2"),
        "with torch.no_grad():\n    y = encoder(x, src_key_padding_mask=pad)\n", ["encoder"], ["y"])
    assert_match(run, "y")


def test_encoder_nested_tensor_path_zeroes_padded_positions():
    """Why enable_nested_tensor=True is flagged: under no_grad PyTorch's default leaves the
    padded positions at zero, MindSpore computes them; the other positions agree."""
    built, run = run_synced(
        LAYER.format(extra=", batch_first=True")
        + "encoder = nn.TransformerEncoder(layer, 2)\nencoder.eval()\n"
        + X_NLE + "pad = torch.tensor([[False] * 4 + [True], [False] * 5, [False] * 3 + [True] * 2])\n",
        "with torch.no_grad():\n    y = encoder(x, src_key_padding_mask=pad)\n", ["encoder"], ["y"])
    t, m = to_numpy(run.torch_ns["y"]), to_numpy(run.ms_ns["y"])
    pad = to_numpy(run.torch_ns["pad"])
    assert np.all(t[pad] == 0) and np.all(np.abs(m[pad]) > 0)
    np.testing.assert_allclose(m[~pad], t[~pad], rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("args, finding", [
    ("enable_nested_tensor=True", True),
    ("enable_nested_tensor=flag", True),
    ("enable_nested_tensor=False", False),
    ("mask_check=True", False),
    ("None, False, False", False),
])
def test_encoder_nested_tensor_options(args, finding):
    run = run_pair(HEAD + "flag = True\n" + LAYER.format(extra="")
                   + f"encoder = nn.TransformerEncoder(layer, 2, {args})\n")
    assert ("ATN003" in findings(run)) is finding
    code = code_only(run.port.code)
    assert "nested" not in code and "mask_check" not in code
    if finding:
        assert "enable_nested_tensor= has no MindSpore equivalent" in run.port.code
    ast.parse(run.port.code)


def test_attention_inside_a_module_class():
    """A Module holding MultiheadAttention and LayerNorm: parameters synchronised by name."""
    run = run_pair(HEAD + """
class Block(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.ln = nn.LayerNorm(8)

    def forward(self, x, pad):
        out, _ = self.attn(x, x, x, key_padding_mask=pad)
        return self.ln(x + out)


block = Block(8, 2)
block.eval()
""" + X_NLE + PAD + "y = block(x, pad)\n", rtol=RTOL, atol=ATOL)
    assert "ATN001" in rules(run) and not findings(run)
    assert_match(run, "y", "block.attn.in_proj_weight", "block.ln.weight")
    assert_idempotent(run)


def test_encoder_layer_bias_variable_is_flagged():
    run = run_pair(HEAD + "use_bias = False\nlayer = nn.TransformerEncoderLayer(8, 2, bias=use_bias)\n")
    assert "ATN002" in findings(run) and "use_bias)" not in run.port.code
