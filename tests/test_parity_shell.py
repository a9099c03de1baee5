"""%%ms_parity scenarios through a real IPython shell, as a notebook user runs them."""

import numpy as np
import pytest
import torch
from IPython.utils.capture import capture_output

import msmagic
from msmagic.parity_check import DIFFERS, MATCH
from tests.test_parity import CNN, MLP, TRAIN_MINDSPORE, TRAIN_TORCH


@pytest.fixture
def ip(parity_shell):
    return parity_shell


def parity_cell(ip, cell, options=""):
    with capture_output() as captured:
        ip.run_cell_magic("ms_parity", f"-o rep {options}".strip(), cell)
    return ip.user_ns["rep"], captured


def test_mlp_random_init_and_inputs(ip):
    rep, captured = parity_cell(ip, MLP)
    assert rep.ok, rep.summary()
    assert isinstance(ip.user_ns["model"], torch.nn.Module)  # the notebook keeps working
    assert isinstance(ip.user_ns["probs"], torch.Tensor)
    assert "msm-parity-table" in captured.outputs[0].data["text/html"]


def test_cnn_batchnorm_dropout_eval(ip):
    rep, _ = parity_cell(ip, CNN, "--rtol 1e-4 --atol 1e-5")
    assert rep.ok, rep.summary()
    # eval mode changed nothing in the copied module: it is synchronised, not compared
    assert any(s.startswith("net:") for s in rep.synchronised)
    assert not any(r.name.startswith("net.") for r in rep.rows)


def test_training_loop_against_explicit_code(ip):
    ip.user_ns["ms_training"] = TRAIN_MINDSPORE
    rep, _ = parity_cell(ip, TRAIN_TORCH, "--against ms_training --rtol 1e-4")
    assert rep.ok, (rep.summary(), rep.ms_error and rep.ms_error.traceback)
    assert rep.row("model.weight").status == MATCH
    assert len(ip.user_ns["losses"]) == 3


def test_wrong_mindspore_side_located_with_max_difference(ip):
    ip.user_ns["wrong"] = msmagic.port(MLP).code.replace("probs = model(x)", "probs = model(x) + 0.05")
    rep, captured = parity_cell(ip, MLP, "--against wrong")
    assert not rep.ok
    assert rep.first_divergence.names == ["probs"]
    assert MLP.splitlines()[rep.first_divergence.before[0] - 1] == "probs = model(x)"
    assert rep.row("probs").status == DIFFERS
    assert rep.row("probs").max_abs == pytest.approx(0.05, rel=1e-4)
    assert "msm-first-divergence" in captured.outputs[0].data["text/html"]


def test_cell_raising_on_the_pytorch_side_is_a_normal_cell_error(ip):
    with capture_output() as captured:
        result = ip.run_cell("%%ms_parity -o rep\nimport torch\nx = torch.ones(2)\ny = x @ torch.ones(3)\n")
    assert type(result.error_in_exec) is RuntimeError  # the cell failed, as the plain one would
    rep = ip.user_ns["rep"]
    assert rep.torch_error is not None and rep.torch_error.lines == (3, 3)
    assert captured.stdout.count("Traceback") + captured.stderr.count("Traceback") <= 1
    assert "RuntimeError" in captured.stdout + captured.stderr


def test_cell_raising_on_the_mindspore_side_keeps_the_user_namespace(ip):
    cell = "import torch\nx = torch.arange(4.0)\ny = torch.special.airy_ai(x)\nz = x * 2\n"
    plain = {}
    exec(cell, plain)
    before = set(ip.user_ns)
    rep, _ = parity_cell(ip, cell)
    assert rep.ms_error is not None and rep.torch_error is None
    added = set(ip.user_ns) - before - {"rep"}
    assert added == {k for k in plain if not k.startswith("__")}
    for name in ("x", "y", "z"):
        assert torch.equal(ip.user_ns[name], plain[name])


def test_nothing_compared(ip):
    rep, captured = parity_cell(ip, "import torch\nlabel = 'cat'\n")
    assert rep.ok is False and rep.rows == []
    assert "nothing compared" in captured.outputs[0].data["text/plain"]


def test_shadow_namespace_persists_across_two_cells(ip):
    first, _ = parity_cell(ip, "import torch\nimport torch.nn as nn\nlayer = nn.Linear(3, 2)\n")
    assert first.verdict[0] == "empty"  # the layer was copied across, nothing compared
    second, _ = parity_cell(ip, "x = torch.ones(4, 3)\nout = layer(x)\n")
    assert second.ok, second.summary()
    shadow = msmagic.shadow_namespace()
    assert type(shadow["layer"]).__module__.startswith("mindspore")
    assert np.allclose(shadow["out"].asnumpy(), ip.user_ns["out"].detach().numpy(), atol=1e-6)
