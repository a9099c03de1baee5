"""The parity runner: both sides run in lockstep; differences are found and located."""

import textwrap

import numpy as np
import pytest
import torch

import msmagic
from msmagic.parity_check import DEVICES, DIFFERS, MATCH, ParityDeviceError, available_devices


def src(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def run(cell, **kw):
    kw.setdefault("user_ns", {"__name__": "__main__"})
    kw.setdefault("shadow", {"__name__": "__shadow__"})
    return msmagic.parity(cell, **kw)


MLP = src("""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(8, 16)
            self.fc2 = nn.Linear(16, 3)

        def forward(self, x):
            return F.softmax(self.fc2(F.relu(self.fc1(x))), dim=1)

    model = MLP()
    x = torch.randn(5, 8)
    probs = model(x)
""")


def test_mlp_with_random_init_and_inputs_matches():
    report = run(MLP)
    assert report.ok, report.rows
    names = {r.name for r in report.rows}
    # the model was copied across and nothing changed it since: its parameters are
    # listed as synchronised, not compared (they could only match)
    assert "probs" in names and not any(n.startswith("model.") for n in names)
    # a random draw: the MindSpore draw returned PyTorch's values, so x is compared
    assert report.row("x").status == "match"
    assert any(s.startswith("model:") for s in report.synchronised)
    assert any(s.startswith("random draws:") and "randn ×1" in s for s in report.synchronised)
    assert report.first_divergence is None
    assert report.timings["PyTorch"] > 0 and report.timings["MindSpore"] > 0


CNN = src("""
    import torch
    import torch.nn as nn

    class CNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 8, 3, padding=1)
            self.bn = nn.BatchNorm2d(8)
            self.pool = nn.MaxPool2d(2)
            self.drop = nn.Dropout(0.5)
            self.fc = nn.Linear(8 * 4 * 4, 10)

        def forward(self, x):
            x = self.pool(torch.relu(self.bn(self.conv(x))))
            return self.fc(self.drop(x.view(x.size(0), -1)))

    net = CNN()
    net.eval()
    images = torch.randn(4, 3, 8, 8)
    logits = net(images)
    top = logits.argmax(dim=1)
""")


def test_cnn_with_batchnorm_and_dropout_in_eval_mode_matches():
    report = run(CNN, rtol=1e-4, atol=1e-5)
    assert report.ok, [(r.name, r.status, r.max_abs) for r in report.rows]
    assert report.row("logits").torch_shape == (4, 10) == report.row("logits").ms_shape
    # eval mode: the module is the copy made when it was built, so it is not compared
    assert not any(r.name.startswith("net.") for r in report.rows)
    assert any(s.startswith("net:") for s in report.synchronised)


TRAIN_TORCH = src("""
    import torch
    import torch.nn as nn
    model = nn.Linear(4, 1)
    data = torch.randn(16, 4)
    target = torch.randn(16, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    losses = []
    for step in range(3):
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(data), target)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
""")

TRAIN_MINDSPORE = src("""
    import mindspore
    from mindspore import nn, ops
    model = nn.Dense(4, 1)
    data = ops.randn(16, 4)
    target = ops.randn(16, 1)
    optimizer = nn.SGD(model.trainable_params(), learning_rate=0.1)
    def forward(data, target):
        return ops.mse_loss(model(data), target)
    grad_fn = mindspore.value_and_grad(forward, None, optimizer.parameters)
    losses = []
    for step in range(3):
        loss, grads = grad_fn(data, target)
        optimizer(grads)
        losses.append(loss.item())
""")


def test_short_training_loop_against_explicit_mindspore_code_matches():
    report = run(TRAIN_TORCH, against=TRAIN_MINDSPORE, rtol=1e-4, atol=1e-6)
    assert report.against
    assert report.ok, [(r.name, r.status, r.max_abs) for r in report.rows]
    assert report.row("losses").status == MATCH
    assert report.row("model.weight").status == MATCH  # judged by the weights it produced


def test_wrong_mindspore_side_is_located_with_its_difference():
    good = msmagic.port(MLP).code
    wrong = good.replace("probs = model(x)", "probs = model(x) * 1.01")
    ns = {"__name__": "__main__"}
    report = run(MLP, against=wrong, user_ns=ns)
    assert not report.ok
    div = report.first_divergence
    assert div is not None and div.names == ["probs"]
    assert MLP.splitlines()[div.before[0] - 1] == "probs = model(x)"
    # the reported difference is the one injected: 1% of each probability
    expected = float(np.max(np.abs(ns["probs"].detach().numpy()) * 0.01))
    row = report.row("probs")
    assert row.status == DIFFERS
    assert row.max_abs == pytest.approx(expected, rel=1e-3)
    assert div.max_abs == pytest.approx(expected, rel=1e-3)


def test_divergence_names_the_rules_that_rewrote_the_statement():
    # MindSpore's BatchNorm default momentum is opposite: leave it unported by hand and
    # the divergence lands on the training-mode forward pass, naming the BatchNorm rule
    cell = src("""
        import torch
        import torch.nn as nn
        bn = nn.BatchNorm1d(3, momentum=0.3)
        x = torch.randn(8, 3)
        y = bn(x)
        stats = bn.running_mean
    """)
    wrong = msmagic.port(cell).code.replace("momentum=0.7", "momentum=0.3")
    report = run(cell, against=wrong)
    assert report.first_divergence is not None
    assert "stats" in report.first_divergence.names or "bn" in " ".join(report.first_divergence.names)
    ported = run(cell)
    assert ported.ok
    # with the port itself, the statement that built the layer carries BNM001
    assert any(e.rule_id == "BNM001" for e in ported.port.edits)


def test_a_cell_raising_on_the_pytorch_side():
    ns = {"__name__": "__main__"}
    report = run("import torch\nx = torch.ones(2)\ny = x + missing\nz = x * 2\n", user_ns=ns)
    err = report.torch_error
    assert err is not None and err.type == "NameError" and err.lines == (3, 3)
    assert "y = x + missing" in err.traceback
    assert "z" not in ns  # the cell stopped there, as it would have alone
    assert not report.ok


def test_a_cell_raising_on_the_mindspore_side_leaves_the_user_namespace_as_the_plain_cell():
    cell = src("""
        import torch
        x = torch.arange(4.0)
        y = torch.special.airy_ai(x)
        z = x * 2
    """)
    ns = {"__name__": "__main__"}
    plain = {"__name__": "__main__"}
    exec(cell, plain)
    report = run(cell, user_ns=ns)
    err = report.ms_error
    assert err is not None and err.side == "MindSpore"
    assert report.port.code.splitlines()[err.lines[0] - 1].startswith("y = torch.special.airy_ai(x)")
    assert {k for k in ns if not k.startswith("__")} == {k for k in plain if not k.startswith("__")}
    for name in ("x", "y", "z"):
        assert torch.equal(ns[name], plain[name])
    assert not report.ok


def test_nothing_compared_is_not_ok():
    report = run("import torch\nname = 'resnet'\ndevice = torch.device('cpu')\n")
    assert report.rows == []
    assert report.ok is False
    assert any("Nothing compared" in n for n in report.notes)


def test_shadow_namespace_persists_across_cells():
    user_ns = {"__name__": "__main__"}
    shadow = {"__name__": "__shadow__"}
    first = run("import torch\nimport torch.nn as nn\nlayer = nn.Linear(3, 2)\n",
                user_ns=user_ns, shadow=shadow)
    assert first.verdict[0] == "empty" and first.synchronised[0].startswith("layer:")
    second = run("x = torch.ones(4, 3)\nout = layer(x)\n", user_ns=user_ns, shadow=shadow,
                 session=_session("import torch\nimport torch.nn as nn\n"))
    assert second.ok, [(r.name, r.status) for r in second.rows]
    assert "out" in shadow and type(shadow["out"]).__module__.startswith("mindspore")


def test_data_from_a_plain_cell_is_bridged_and_modules_are_named():
    user_ns = {"__name__": "__main__"}
    exec("import torch\nimport torch.nn as nn\nfeatures = torch.randn(2, 3)\nhead = nn.Linear(3, 1)\n",
         user_ns)
    report = run("scaled = features * 2\nscore = head(features)\n", user_ns=user_ns,
                 session=_session("import torch\nimport torch.nn as nn\n"))
    assert "features" in report.bridged
    assert any("run the cell that defines `head` under %%ms_parity" in n for n in report.notes)
    assert report.row("scaled").status == MATCH


def test_timeout_stops_a_runaway_side():
    report = run("import torch\nx = torch.ones(2)\nwhile True:\n    x = x + 1\n", timeout=0.3)
    assert report.timed_out == "PyTorch"
    assert not report.ok
    assert any("--timeout" in n for n in report.notes)


def test_keyboard_interrupt_is_reported_not_raised():
    report = run("import torch\nx = torch.ones(2)\nraise KeyboardInterrupt\n")
    assert report.interrupted and not report.ok


def test_no_sync_shows_random_initialisation_as_a_difference():
    cell = "import torch\nimport torch.nn as nn\nlayer = nn.Linear(16, 16)\n"
    synced = run(cell)
    assert synced.verdict[0] == "empty" and synced.synchronised[0].startswith("layer:")
    report = run(cell, sync=False)
    assert report.row("layer.weight").status == DIFFERS
    assert report.synchronised == []


def test_ipython_syntax_in_the_cell_runs():
    report = run("import torch\n%time x = torch.ones(3) * 2\ny = x.sum()\n")
    assert report.ok, report.rows
    assert report.row("y").status == MATCH


def test_last_expression_is_the_cell_value_and_is_compared():
    report = run("import torch\nx = torch.arange(3.0)\nx * 2\n")
    assert torch.equal(report.value, torch.arange(3.0) * 2)
    assert report.row("<cell output>").status == MATCH


def test_unavailable_device_is_refused_with_the_available_list():
    assert "CPU" in available_devices()
    missing = [d for d in DEVICES if d not in available_devices()]
    if not missing:
        pytest.skip("every device is available here")
    with pytest.raises(ParityDeviceError) as info:
        run("import torch\nx = torch.ones(2)\n", device=missing[0])
    assert "available: CPU" in str(info.value)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU")
def test_gpu_parity():
    report = run(MLP, device="GPU", rtol=1e-4, atol=1e-5)
    assert report.ok and report.device == "GPU"


def test_syntax_error_in_against_code():
    with pytest.raises(msmagic.PortSyntaxError):
        run("import torch\nx = torch.ones(2)\n", against="x = (\n")


def _session(text):
    from msmagic.engine.session import PortSession

    s = PortSession()
    s.learn(text)
    return s


def test_a_random_draw_of_another_dtype_is_reported():
    # the MindSpore draw returns PyTorch's values, but it must agree in shape and dtype;
    # here the explicit MindSpore code casts its draw to float16
    report = run("import torch\nnoise = torch.randn(3, 2)\n",
                 against="import mindspore\nnoise = mindspore.ops.randn(3, 2).astype(mindspore.float16)\n")
    row = report.row("noise")
    assert row.status == DIFFERS and "float16" in row.note.lower()
    assert not report.ok
    # a draw of another shape is not replayed: its values are copied and the row says so
    report = run("import torch\nnoise = torch.randn(3, 2)\n",
                 against="import mindspore\nnoise = mindspore.ops.randn(2, 3)\n")
    row = report.row("noise")
    assert row.status == DIFFERS and "another shape or dtype" in row.note
    assert any("met PyTorch's of shape (3, 2)" in n for n in report.notes)


def test_mindspore_side_output_goes_to_the_report(capsys):
    report = run("import torch\nx = torch.ones(2)\nprint('total', float(x.sum()))\n")
    assert capsys.readouterr().out.count("total 2.0") == 1  # printed once, by PyTorch
    assert any("The MindSpore side printed:\ntotal 2.0" in n for n in report.notes)


def test_imports_from_a_plain_cell_reach_the_mindspore_side():
    from msmagic.engine.session import PortSession

    user_ns, shadow = {"__name__": "__main__"}, {"__name__": "__shadow__"}
    plain = "import torch\nimport torch.nn as nn\n"
    exec(plain, user_ns)  # a cell the user ran without %%ms_parity
    session = PortSession()
    session.learn(plain)
    report = run("layer = nn.Linear(3, 2)\nout = layer(torch.ones(4, 3))\n",
                 user_ns=user_ns, shadow=shadow, session=session)
    assert report.ok, (report.summary(), report.ms_error and report.ms_error.traceback)


def test_in_place_random_init_copies_the_module_again():
    """nn.init.normal_ draws on each side (INI003 tags the statement random): parity copies
    PyTorch's values into the MindSpore layer again, so statistics of the weights compare
    equal; without the copy the weights differ at that statement."""
    cell = src("""
        import torch
        import torch.nn as nn
        layer = nn.Linear(64, 64)
        nn.init.normal_(layer.weight, mean=0.0, std=0.02)
        weight_sum = layer.weight.sum().item()
    """)
    port = msmagic.port(cell)
    assert "random:nn.init.normal_" in port.statements[3].tags
    report = run(cell)
    assert report.ok, report.summary()
    assert report.row("weight_sum").max_abs < 1e-5
    assert any(s.startswith("layer:") and "in-place random initialisation" in s
               for s in report.synchronised)
    unsynced = run(cell, sync=False)
    assert unsynced.verdict[0] == "differs"
