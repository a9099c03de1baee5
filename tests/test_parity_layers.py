"""Parity finds the layer: the first layer whose output differs while its input matched.

Executed both-framework tests. A ResNet-style model (nested Sequentials, residual blocks,
functional calls between layers) is trained for two SGD steps and evaluated; its hand
port to MindSpore (``--against``) is correct, or carries one planted mistake deep in the
model. The report must name exactly that layer first (and, where gradients differ, the
parameters by layer), and a correct port must report no divergent layer.
"""

from __future__ import annotations

import textwrap

import pytest

pytest.importorskip("torch")
pytest.importorskip("mindspore")

TORCH = textwrap.dedent('''
    import torch, torch.nn as nn, torch.nn.functional as F
    torch.manual_seed(0)
    class Block(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.conv1 = nn.Conv2d(c, c, 3, padding=1)
            self.bn1 = nn.BatchNorm2d(c)
            self.conv2 = nn.Conv2d(c, c, 3, padding=1)
            self.bn2 = nn.BatchNorm2d(c)
        def forward(self, x):
            out = F.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            return F.relu(out + x)
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU())
            self.layer1 = nn.Sequential(Block(8), Block(8))
            self.layer2 = nn.Sequential(Block(8), Block(8))
            self.pool = nn.AdaptiveAvgPool2d(1)
            self.fc = nn.Linear(8, 8)
            self.head = nn.Linear(8, 3)
        def forward(self, x):
            x = self.pool(self.layer2(self.layer1(self.stem(x)))).flatten(1)
            return self.head(F.relu(self.fc(x)))
    model = Net()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(4, 3, 8, 8), torch.tensor([0, 1, 2, 0])
    for step in range(2):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
    model.eval()
    with torch.no_grad():
        out = model(x)
''')

# the hand port: Block(8, PLANT) in layer2 carries the planted mistake
MINDSPORE = textwrap.dedent('''
    import mindspore, mindspore.nn as nn, mindspore.ops as ops
    mindspore.set_seed(0)
    class Block(nn.Cell):
        def __init__(self, c, mom=0.9, act=True, pad=1):
            super().__init__()
            self.act = act
            self.conv1 = nn.Conv2d(c, c, 3, pad_mode="pad", padding=1, has_bias=True)
            self.bn1 = nn.BatchNorm2d(c, momentum=0.9)
            self.conv2 = nn.Conv2d(c, c, 3, pad_mode="pad", padding=pad, has_bias=True)
            self.bn2 = nn.BatchNorm2d(c, momentum=mom)
        def construct(self, x):
            out = self.bn1(self.conv1(x))
            out = ops.relu(out) if self.act else out
            out = self.bn2(self.conv2(out))
            return ops.relu(out + x)
    class MyDense(nn.Cell):
        def __init__(self, n, transposed=False):
            super().__init__()
            self.transposed = transposed
            self.weight = mindspore.Parameter(ops.zeros((n, n)))
            self.bias = mindspore.Parameter(ops.zeros(n))
        def construct(self, x):
            w = self.weight if self.transposed else self.weight.T
            return ops.matmul(x, w) + self.bias
    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.stem = nn.SequentialCell(nn.Conv2d(3, 8, 3, pad_mode="pad", padding=1, has_bias=True),
                                          nn.BatchNorm2d(8, momentum=0.9), nn.ReLU())
            self.layer1 = nn.SequentialCell(Block(8), Block(8))
            self.layer2 = nn.SequentialCell(Block(8), Block(8, PLANT))
            self.pool = nn.AdaptiveAvgPool2d(1)
            self.fc = MyDense(8, FC)
            self.head = nn.Dense(8, 3)
        def construct(self, x):
            x = self.pool(self.layer2(self.layer1(self.stem(x)))).flatten(1)
            return self.head(BETWEEN(self.fc(x)))
    model = Net()
    opt = nn.SGD(model.trainable_params(), learning_rate=0.1)
    x, y = ops.randn(4, 3, 8, 8), mindspore.Tensor([0, 1, 2, 0], mindspore.int64)
    for step in range(2):
        model.set_train()
        grad_fn = mindspore.value_and_grad(lambda x, y: ops.cross_entropy(model(x), y), None, opt.parameters)
        loss, grads = grad_fn(x, y)
        opt(grads)
    model.set_train(False)
    out = model(x)
''')


def _parity(plant: str = "", fc: str = "False", between: str = "ops.relu"):
    import msmagic

    code = MINDSPORE.replace("PLANT", plant).replace("FC", fc).replace("BETWEEN", between)
    return msmagic.parity(TORCH, against=code, progress=None, user_ns={"__name__": "__main__"},
                          shadow={"__name__": "__main__"})


def _first(report):
    assert report.layers is not None, (report.summary(), report.notes)
    return report.layers.first


def test_a_correct_hand_port_has_no_divergent_layer():
    report = _parity()
    assert report.ok, (report.summary(), report.first_divergence, report.notes)
    layers = report.layers
    # the last statement's forward pass was compared layer by layer, and everything matched
    assert layers is not None and layers.first is None
    assert layers.compared == layers.calls == 30, layers.summary()
    assert {r.status for r in layers.rows} == {"match"}
    paths = {r.where for r in layers.rows}
    assert {"model.stem.0", "model.layer2.1.bn2", "model.fc", "model.layer1"} <= paths
    # paired through the module map: PyTorch's Linear is the hand port's own layer
    fc = next(r for r in layers.rows if r.path == "fc")
    assert (fc.torch_class, fc.ms_class, fc.ms_path) == ("Linear", "MyDense", "fc")


def test_batchnorm_momentum_not_converted_in_one_block_is_named():
    """momentum=0.1 in MindSpore keeps 10 % of the new batch's statistics where PyTorch's
    0.1 takes 10 %: the forward output in training mode still matches (batch statistics),
    the running statistics after the call do not."""
    report = _parity("mom=0.1")
    assert not report.ok
    first = _first(report)
    assert first.where == "model.layer2.1.bn2" and first.call == 0, report.layers.summary()
    assert first.status == "state differs" and "running_mean" in first.note, first
    assert first.in_max_abs is not None and first.in_max_abs < 1e-4
    # every layer before it matched
    before = [r for r in report.layers.rows if r.order < first.order]
    assert before and all(r.status == "match" for r in before)


def test_a_missing_activation_names_the_block_whose_forward_lost_it():
    """The block's own code between its layers differs: its children matched up to the
    missing ReLU, then the block's output differs while its input matched."""
    report = _parity("act=False")
    first = _first(report)
    assert first.where == "model.layer2.1" and first.status == "differs", report.layers.summary()
    assert (first.torch_class, first.ms_class) == ("Block", "Block")
    assert first.out_max_abs > 0.1 and first.in_max_abs < 1e-4
    conv1 = next(r for r in report.layers.rows if r.where == "model.layer2.1.conv1")
    conv2 = next(r for r in report.layers.rows if r.where == "model.layer2.1.conv2")
    assert conv1.status == "match" and conv2.status == "follows"
    # the gradients row names the parameters, by layer, with how each layer's forward compared
    grads = report.row("opt: gradients")
    assert grads.status == "differs" and "by layer" in grads.note
    statuses = dict((layer, status) for layer, _, status in report.layers.gradients)
    assert statuses["layer2.1.conv2"] == "follows" and statuses["stem.0"] == "match"
    assert ("layer2.1.bn2", ("gamma", "beta")) in grads.parameters


def test_a_transposed_weight_names_that_layer():
    report = _parity(fc="True")
    first = _first(report)
    assert first.where == "model.fc" and first.status == "differs", report.layers.summary()
    assert (first.torch_class, first.ms_class) == ("Linear", "MyDense")
    # its gradients differ too, and the gradients row names its parameters among the first
    grads = report.row("opt: gradients")
    assert grads.status == "differs" and ("fc", ("weight", "bias")) in grads.parameters, grads.parameters
    statuses = {layer: status for layer, _, status in report.layers.gradients}
    assert statuses["fc"] == "differs" and statuses["head"] == "follows"


def test_msmagics_own_port_of_the_residual_network_matches_layer_by_layer():
    """The same PyTorch cell, ported by msmagic: training steps and evaluation match, and
    every layer call of the evaluation was compared (paired through the port's module
    map: BatchNorm2d's weight is gamma, Linear is nn.Dense)."""
    import msmagic

    report = msmagic.parity(TORCH, progress=None, user_ns={"__name__": "__main__"},
                            shadow={"__name__": "__main__"})
    assert report.ok, (report.summary(), report.notes)
    layers = report.layers
    assert layers is not None and layers.first is None
    assert layers.compared == layers.calls == 30 and {r.status for r in layers.rows} == {"match"}
    head = next(r for r in layers.rows if r.path == "head")
    assert (head.torch_class, head.ms_class) == ("Linear", "nn.Dense")


def test_padding_lost_in_one_conv_names_that_conv_with_both_shapes():
    """padding=0 in one conv: its output shape differs; the MindSpore side then fails at
    the residual addition, and the report names the conv, not the addition."""
    report = _parity("pad=0")
    assert report.ms_error is not None
    first = _first(report)
    assert first.where == "model.layer2.1.conv2" and first.status == "shape"
    assert "(4, 8, 8, 8) in PyTorch, (4, 8, 6, 6) in MindSpore" in first.note
    unreached = [r for r in report.layers.rows if "not reached" in r.note]
    assert unreached and not report.layers.notes  # no "structures differ" for what never ran


def test_a_functional_call_between_layers_names_the_model_that_makes_it():
    """sigmoid where PyTorch applies relu between fc and head: every layer matches, and
    the model's own forward (the functional call) is what differs."""
    report = _parity(between="ops.sigmoid")
    first = _first(report)
    assert first.where == "model" and first.status == "differs", report.layers.summary()
    head = next(r for r in report.layers.rows if r.where == "model.head")
    assert head.status == "follows"
    fc = next(r for r in report.layers.rows if r.where == "model.fc")
    assert fc.status == "match"


def test_the_port_of_a_model_with_module_lists_and_a_shared_layer_matches_layer_by_layer():
    """msmagic's own port: a ModuleList, nested Sequentials and a layer called twice
    (calls paired by index) all match; the layers are paired through the port's module
    map (Linear -> nn.Dense, BatchNorm1d's weight -> gamma)."""
    import msmagic

    source = textwrap.dedent('''
        import torch, torch.nn as nn
        torch.manual_seed(0)
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.blocks = nn.ModuleList([nn.Sequential(nn.Linear(6, 6), nn.BatchNorm1d(6)) for _ in range(2)])
                self.shared = nn.Linear(6, 6)
                self.out = nn.Sequential(nn.Sequential(nn.Tanh(), nn.Linear(6, 2)))
            def forward(self, x):
                for block in self.blocks:
                    x = self.shared(torch.relu(block(x)))
                return self.out(x)
        net = Net()
        x = torch.randn(5, 6)
        y = net(x)
    ''')
    report = msmagic.parity(source, progress=None, user_ns={"__name__": "__main__"},
                            shadow={"__name__": "__main__"})
    assert report.ok, (report.summary(), report.notes)
    layers = report.layers
    assert layers is not None and layers.first is None and layers.compared == layers.calls
    shared = [r for r in layers.rows if r.path == "shared"]
    assert [r.call for r in shared] == [0, 1] and all(r.status == "match" for r in shared)
    bn = next(r for r in layers.rows if r.path == "blocks.1.1")
    assert (bn.torch_class, bn.ms_class) == ("BatchNorm1d", "nn.BatchNorm1d")
    assert any(r.path == "out.0.1" and r.ms_class == "nn.Dense" for r in layers.rows)


def test_the_layers_show_in_text_and_html():
    from msmagic.render.parity import render_parity_html, render_parity_text

    report = _parity("act=False")
    text = render_parity_text(report)
    assert "first divergent layer: model.layer2.1 (Block \u2192 Block)" in text
    assert "gradients differ in" in text
    html = render_parity_html(report)
    assert 'data-first="model.layer2.1"' in html and "<details" in html
    assert 'data-path="model.layer2.1.conv2" data-status="follows"' in html
    # a run where everything matched shows no layer section
    assert "msm-layers" not in render_parity_html(_parity())


def test_a_mindspore_failure_inside_a_gradient_leaves_the_next_run_working():
    """The planted padding mistake makes the MindSpore side raise inside
    ``value_and_grad``'s forward pass. MindSpore's executor was left recording, and every
    later run in the kernel failed at its first in-place update; parity clears it."""
    failed = _parity("pad=0")
    assert failed.ms_error is not None
    again = _parity()
    assert again.ok, (again.summary(), again.ms_error)


def test_attention_dropout_is_named_as_the_random_layer_that_cannot_be_replayed():
    """nn.TransformerEncoderLayer(dropout=0.1) in training: its own nn.Dropout layers take
    PyTorch's masks, but the attention-weight dropout is drawn inside PyTorch's attention
    kernel. The report names the attention layer as the cause (status ``random``), and the
    gradients row says so instead of "the forward pass or the loss differs"."""
    import msmagic

    source = textwrap.dedent('''
        import torch, torch.nn as nn, torch.nn.functional as F
        torch.manual_seed(0)
        model = nn.Sequential(nn.TransformerEncoderLayer(16, 2, 32, dropout=0.1, batch_first=True), nn.Flatten(),
                              nn.Linear(16 * 5, 3))
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        x, y = torch.randn(4, 5, 16), torch.tensor([0, 1, 2, 0])
        for step in range(2):
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
    ''')
    report = msmagic.parity(source, progress=None, user_ns={"__name__": "__main__"},
                            shadow={"__name__": "__main__"})
    first = _first(report)
    assert first.where == "model.0.self_attn" and first.status == "random", report.layers.summary()
    assert "attention-weight dropout (p=0.1)" in first.random
    replayed = next(s for s in report.synchronised if s.startswith("random draws:"))
    assert "dropout masks replayed: 3 layers or call sites, 6 calls" in replayed, replayed
    grads = report.row("model: gradients") if any(r.name == "model: gradients" for r in report.rows) \
        else next(r for r in report.rows if r.name.endswith(": gradients"))
    assert "a random layer, model.0.self_attn, drew numbers parity cannot replay" in grads.note, grads.note


def test_the_first_divergent_layer_takes_the_rules_that_ported_its_class():
    """The rules listed with the first divergent layer are the port's edits of that
    layer's class (BatchNorm2d's constructor: BNM001 converts its momentum)."""
    import msmagic
    from msmagic.parity_check import _layer_report
    from msmagic.parity_check.layers import LayerReport, LayerRow
    from msmagic.parity_check.options import ParityOptions
    from msmagic.parity_check.report import ParityReport

    port = msmagic.port("import torch.nn as nn\nbn = nn.BatchNorm2d(4)\nfc = nn.Linear(2, 2)\n")

    def run_with(row):
        class Run:
            layer_reports = {3: LayerReport(statement=3, rows=[row], first=row, calls=1, compared=1)}
            ms_error = None
        return Run

    row = LayerRow("model", "bn", "BatchNorm2d", "nn.BatchNorm2d", status="differs")
    chosen = _layer_report(run_with(row), ParityReport(port=port), port, ParityOptions())
    bn_rules = {e.rule_id for e in port.edits if e.api == "torch.nn.BatchNorm2d"}
    assert chosen.first is row and "BNM001" in row.rule_ids and set(row.rule_ids) == bn_rules, row.rule_ids
    linear = LayerRow("model", "fc", "Linear", "nn.Dense", status="differs")
    _layer_report(run_with(linear), ParityReport(port=port), port, ParityOptions())
    assert linear.rule_ids and "BNM001" not in linear.rule_ids, linear.rule_ids
    # with --against, no port rule wrote the MindSpore code: none is listed
    mine = LayerRow("model", "bn", "BatchNorm2d", "nn.BatchNorm2d", status="differs")
    _layer_report(run_with(mine), ParityReport(port=port), port, ParityOptions(against="x = 1"))
    assert mine.rule_ids == []


def test_a_long_table_keeps_the_first_divergent_layer_in_view():
    """The collapsed table shows at most 40 rows: when the first divergent layer lies
    further down, the window moves to it (the model's own row stays first)."""
    from msmagic.parity_check.layers import LayerReport, LayerRow, layer_table

    rows = [LayerRow("model", f"blocks.{i}", "Linear", "nn.Dense", status="match", start=i + 1, order=i)
            for i in range(100)]
    rows.insert(0, LayerRow("model", "", "Net", "Net", status="differs", start=0, order=100))
    rows[71].status = "differs"
    report = LayerReport(statement=0, rows=rows, first=rows[71], calls=101, compared=101)
    shown = layer_table(report)
    assert len(shown) == 40 and shown[0].path == "" and rows[71] in shown
    assert layer_table(report, limit=None) == sorted(rows, key=lambda r: r.start)
    report.first = rows[5]
    assert layer_table(report)[:6] == sorted(rows, key=lambda r: r.start)[:6]
