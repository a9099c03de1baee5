"""Kind inference across functions and cells, executed: the idioms rules port only on a
known tensor / module / loader work inside functions that receive the objects as
parameters, called from the cell, from a later cell (the earlier cell's function is
ported again and run on the MindSpore side), and are flagged where the calls disagree."""

import pytest

import msmagic
from tests.rules.support import check, parity_cells, src

NLL = src("""
    def nll(input, target):
        return -input[range(target.shape[0]), target].mean() / input.std()
""")

IDIOMS = src("""
    def first_rows(x, n):
        return x.transpose(0, 1)[:, :n]

    def batch_size_of(batch):
        return batch.size(0)

    def pick(logits, target):
        return logits[range(target.shape[0]), target]
""")


def test_a_function_called_after_its_definition_ports_its_tensor_idioms():
    run = check("import torch\n" + NLL + IDIOMS + src("""
        logits = torch.randn(4, 5)
        target = torch.tensor([1, 2, 0, 3])
        loss = nll(logits, target)
        rows = first_rows(logits, 2)
        n = batch_size_of(logits)
        picked = pick(logits, target)
    """), "loss", "rows", "n", "picked")
    assert not run.port.unsupported, run.port.unsupported
    assert "list(range(target.shape[0]))" in run.port.code
    assert "swapaxes" in run.port.code


def test_a_function_that_receives_the_model_and_the_loader():
    run = check(src("""
        import torch
        from torch import nn
        from torch.utils.data import DataLoader, TensorDataset

        def evaluate(loader, model):
            model.eval()
            total, first = 0.0, None
            with torch.no_grad():
                for i, (xb, yb) in enumerate(loader):
                    out = model(xb)
                    picked = out[range(yb.shape[0]), yb]
                    total += picked.sum().item()
                    if first is None:
                        first = out.transpose(0, 1)
            return total, first

        x = torch.randn(12, 4)
        y = torch.randint(0, 3, (12,))
        net = nn.Sequential(nn.Linear(4, 3))
        loader = DataLoader(TensorDataset(x, y), batch_size=4)
        total, first = evaluate(loader, net)
    """), "total", "first")
    assert not run.port.unsupported, run.port.unsupported


def _parity(shell, cells):
    reports = []
    for i, cell in enumerate(cells):
        shell.run_cell_magic("ms_parity", f"-o report_{i}", cell)
        reports.append(shell.user_ns[f"report_{i}"])
    return reports


def test_a_later_cell_runs_the_function_ported_again(parity_shell):
    reports = _parity(parity_shell, [
        "import torch\n",
        NLL + IDIOMS,
        src("""
            logits = torch.randn(4, 5)
            target = torch.tensor([1, 2, 0, 3])
            loss = nll(logits, target)
            rows = first_rows(logits, 2)
            picked = pick(logits, target)
        """),
    ])
    defs, calls = reports[1], reports[2]
    # the definitions alone could not tell what the parameters are: flagged there
    assert {f.rule_id for f in defs.port.unsupported} == {"GEN002"}
    assert sorted(r.name for r in calls.port.revised) == ["first_rows", "nll", "pick"]
    assert calls.ok, calls.summary()
    assert {r.name for r in calls.rows if r.status == "match"} >= {"loss", "rows", "picked"}
    assert any("Ported again" in note for note in calls.notes)


def test_a_function_whose_calls_disagree_is_flagged_at_the_use():
    cell = src("""
        import numpy as np
        import torch
        def center(x):
            return x - x.mean(dim=0)
        a = center(torch.randn(4, 3))
        b = center(np.ones((4, 3)))
    """)
    port = msmagic.port(cell)
    finding, *calls = port.unsupported
    assert finding.rule_id == "GEN002" and finding.line == 4
    assert [(f.rule_id, f.line) for f in calls] == [("GEN004", 5), ("GEN004", 6)]  # both calls
    assert "whose calls pass a NumPy array and a tensor" in finding.reason
    # the line is left as PyTorch wrote it: the tensor call ports and matches, and the
    # NumPy call fails on both sides alike (NumPy's mean takes no dim=)
    rep = msmagic.parity(cell)
    assert rep.torch_error is not None and "dim" in rep.torch_error.message
    assert rep.row("a").status == "match", rep.summary()


@pytest.mark.parametrize("spelling", [
    "loss = nll(logits, target)",
    "loss = nll(target=target, input=logits)",
    "kw = {}\nloss = nll(logits, target, **kw)",
])
def test_call_spellings(spelling):
    cell = "import torch\n" + NLL.replace("(input, target)", "(input, target, **extra)") + src("""
        logits = torch.randn(3, 4)
        target = torch.tensor([0, 3, 1])
    """) + spelling + "\n"
    port = msmagic.port(cell)
    if "**kw" in spelling:  # what **kw holds is unknown: flagged, not guessed
        assert {f.rule_id for f in port.unsupported} == {"GEN002", "GEN004"}  # GEN004: the call
        return
    check(cell, "loss")


def test_user_layers_that_are_no_modules_run_as_written():
    run = check(src("""
        import torch
        g = torch.Generator().manual_seed(42)

        class Linear:
            def __init__(self, fan_in, fan_out, bias=True):
                self.weight = torch.randn((fan_in, fan_out), generator=g) / fan_in**0.5
                self.bias = torch.zeros(fan_out) if bias else None
            def __call__(self, x):
                self.out = x @ self.weight
                if self.bias is not None:
                    self.out = self.out + self.bias
                return self.out
            def parameters(self):
                return [self.weight] + ([] if self.bias is None else [self.bias])

        class Tanh:
            def __call__(self, x):
                self.out = torch.tanh(x)
                return self.out
            def parameters(self):
                return []

        layers = [Linear(3, 4), Tanh(), Linear(4, 2, bias=False)]
        parameters = [p for layer in layers for p in layer.parameters()]
        n_params = sum(p.nelement() for p in parameters)
        x = torch.randn(5, 3, generator=g)
        for layer in layers:
            x = layer(x)
        out = x
    """), "n_params", "out", atol=1e-4)  # MindSpore's CPU tanh is up to 1e-4 off
    assert "get_parameters" not in run.port.code


def test_kinds_through_a_returned_tuple(tmp_path, monkeypatch):
    """rasbt's ``train_losses, val_losses, tokens_seen, model = main(cfg)``: each name takes
    the kind of its element of the tuple ``main`` returns, so ``model.state_dict()`` is a
    module's checkpoint (not an unknown receiver pickled); an index into the tuple too."""
    monkeypatch.chdir(tmp_path)
    run = check(src("""
        import torch
        import torch.nn as nn
        torch.manual_seed(0)
        def main(width):
            model = nn.Sequential(nn.Linear(2, width), nn.Tanh(), nn.Linear(width, 1))
            x = torch.linspace(-1, 1, 8).reshape(4, 2)
            return [float(model(x).sum())], x, model
        losses, x, model = main(3)
        torch.save(model.state_dict(), "model.pth")
        model = main(3)[2]
        model.load_state_dict(torch.load("model.pth"))
        model.eval()
        out = model(x)
    """), "losses", "out")
    assert "GEN002" not in run.port.code and "save_checkpoint(model" in run.port.code
    assert "set_train(False)" in run.port.code


HAND_WRITTEN_LAYERS = [
    src("""
        import torch

        class Embedding:
            def __init__(self, num_embeddings, embedding_dim):
                self.weight = torch.randn((num_embeddings, embedding_dim))
            def __call__(self, IX):
                return self.weight[IX]
            def parameters(self):
                return [self.weight]

        class Linear:
            def __init__(self, fan_in, fan_out):
                self.weight = torch.randn((fan_in, fan_out)) / fan_in**0.5
            def __call__(self, x):
                return x @ self.weight
            def parameters(self):
                return [self.weight]

        class Sequential:
            def __init__(self, layers):
                self.layers = layers
            def __call__(self, x):
                for layer in self.layers:
                    x = layer(x)
                return x
            def parameters(self):
                return [p for layer in self.layers for p in layer.parameters()]

        n_classes = 3
    """),
    src("""
        torch.manual_seed(0)
        model = Sequential([Embedding(10, 4), Linear(4, n_classes)])
        parameters = model.parameters()
        count = sum(p.nelement() for p in parameters)
        out = model(torch.tensor([1, 2, 3]))
    """),
]


def test_a_user_class_defining_parameters_keeps_its_callers_in_an_earlier_cell(parity_shell):
    """makemore's hand-written layers each define ``parameters()``; the class cell comes
    before any cell that builds them, so ``layer.parameters()`` has an unknown receiver: it
    is the user's method (left as written, flagged), not Module.parameters."""
    reports, _ = parity_cells(parity_shell, HAND_WRITTEN_LAYERS)
    assert "layer.parameters()" in reports[0].port.code
    assert "GEN002" in {f.rule_id for f in reports[0].port.unsupported}
    assert reports[1].row("count").status == "match"
    assert reports[1].row("out").status == "match"
    assert msmagic.shadow_namespace()["count"] == 10 * 4 + 4 * 3
