"""Dropout in training mode under %%ms_parity: the MindSpore side applies the masks the
PyTorch side drew (``nn.Dropout`` layers and ``F.dropout`` calls, in order), so a correct
port of a model with dropout matches instead of diverging by design."""

import textwrap

import pytest
from IPython.utils.capture import capture_output

from msmagic.parity_check import run_pair
from msmagic.parity_check.draws import DrawReplay


def src(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


MODEL = src("""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    torch.manual_seed(0)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(1, 4, 3)
            self.fc1 = nn.Linear(4 * 6 * 6, 16)
            self.dropout = nn.Dropout(0.25)
            self.fc2 = nn.Linear(16, 3)

        def forward(self, x):
            x = F.max_pool2d(F.relu(self.conv(x)), 1)
            x = self.dropout(torch.flatten(x, 1))
            x = F.dropout(F.relu(self.fc1(x)), p=0.5, training=self.training)
            return self.fc2(x)

    model = Net()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    criterion = nn.CrossEntropyLoss()
    # the last batch is smaller, as a DataLoader without drop_last gives it
    batches = [(torch.randn(n, 1, 8, 8), torch.randint(0, 3, (n,))) for n in (6, 6, 4)]
""")

TRAIN = src("""
    def train(model, batches, optimizer, criterion):
        model.train()
        total = 0.0
        for xb, yb in batches:
            optimizer.zero_grad()
            loss = criterion(model(xb), yb)
            loss.backward()
            optimizer.step()
            total += loss.item()
        return total / len(batches)

    history = [train(model, batches, optimizer, criterion) for epoch in range(3)]
""")

EVALUATE = src("""
    model.eval()
    with torch.no_grad():
        scores = model(torch.ones(2, 1, 8, 8))
    scores
""")


def test_a_model_with_dropout_trains_alike_across_cells(parity_shell):
    reports = []
    for cell in (MODEL, TRAIN, EVALUATE):
        parity_shell.user_ns.pop("rep", None)
        with capture_output():
            parity_shell.run_cell("%%ms_parity -o rep\n" + cell, store_history=True)
        reports.append(parity_shell.user_ns["rep"])
    for rep in reports:
        assert rep.ok, (rep.summary(), [(r.name, r.status, r.max_abs) for r in rep.rows], rep.notes)
    assert reports[1].row("history").status == "match"
    assert any(r.name.startswith("model.fc1") and r.status == "match" for r in reports[1].rows)


def test_without_the_masks_the_same_port_diverges(monkeypatch):
    # the replay is what makes the difference: with MindSpore's own masks it diverges
    code = MODEL + TRAIN
    assert run_pair(code).agree("history")
    monkeypatch.setattr(DrawReplay, "_dropout_recorder", lambda self, fn, kind: fn)
    assert not run_pair(code).agree("history")


def test_a_dropout_of_another_shape_stops_the_replay_with_a_note():
    import mindspore
    import torch
    import torch.nn.functional as F

    replay = DrawReplay()
    with replay.recording():
        F.dropout(torch.ones(4, 5), p=0.5, training=True)
        F.dropout(torch.ones(4, 5), p=0.5, training=False)  # eval mode draws nothing
    assert replay.recorded == 1
    with replay.replaying(0):
        out = mindspore.ops.dropout(mindspore.ops.ones((5, 4)), p=0.5, training=True)
    assert out.shape == (5, 4) and "shape (5, 4)" in replay.stopped


def test_mindsporess_own_lstm_dropout_does_not_take_the_users_masks():
    """udacity's CharRNN: nn.LSTM(num_layers=2, dropout=0.5, batch_first=True) then the
    model's own nn.Dropout. MindSpore's LSTM applies its between-layer dropout through an
    nn.Dropout of its own (time-major); it must not take the mask PyTorch's nn.Dropout
    drew for the model's layer (PyTorch's between-layer masks are drawn inside its kernel
    and never recorded): the user's layer gets it, and the replay is not stopped."""
    import textwrap

    import msmagic

    report = msmagic.parity(textwrap.dedent("""
        import torch
        import torch.nn as nn
        torch.manual_seed(0)
        class CharRNN(nn.Module):
            def __init__(self):
                super().__init__()
                self.lstm = nn.LSTM(3, 8, 2, dropout=0.5, batch_first=True)
                self.dropout = nn.Dropout(0.3)
                self.fc = nn.Linear(8, 2)
            def forward(self, x):
                out, _ = self.lstm(x)
                return self.fc(self.dropout(out))
        net = CharRNN()
        x = torch.randn(6, 5, 3)
        out = net(x)
    """))
    assert not any("met PyTorch's mask" in n for n in report.notes), report.notes
    assert any("dropout mask ×1" in s for s in report.synchronised), report.synchronised
    assert report.row("out").status == "differs"  # the LSTM's own masks differ (RNN006)


def test_a_model_trained_in_place_diverges_at_the_statement_that_trained_it(parity_shell):
    """A cell that trains a model built in an earlier cell by calling ``train(net, ...)``
    binds nothing: the first divergence is the statement that trained the model (where
    RNN006's finding is), not "no statement". The optimizer ``train`` builds steps on
    PyTorch's gradients (paired in build order), so the difference shows in its gradients
    at the first step (the LSTM's dropout masks differ), not in weights that drifted."""
    import textwrap

    cells = [textwrap.dedent("""
        import torch
        import torch.nn as nn
        torch.manual_seed(0)
        class CharRNN(nn.Module):
            def __init__(self):
                super().__init__()
                self.lstm = nn.LSTM(3, 8, 2, dropout=0.5, batch_first=True)
                self.fc = nn.Linear(8, 2)
            def forward(self, x):
                out, _ = self.lstm(x)
                return self.fc(out[:, -1])
        net = CharRNN()
        x, y = torch.randn(6, 5, 3), torch.tensor([0, 1, 1, 0, 1, 0])
        def train(net, epochs):
            opt = torch.optim.SGD(net.parameters(), lr=0.5)
            for e in range(epochs):
                opt.zero_grad()
                loss = nn.functional.cross_entropy(net(x), y)
                loss.backward()
                opt.step()
    """), "print('training')\ntrain(net, 3)\n"]
    for cell in cells:
        parity_shell.user_ns.pop("rep", None)
        parity_shell.run_cell("%%ms_parity -o rep\n" + cell, store_history=True)
    report = parity_shell.user_ns["rep"]
    flagged = [f for f in report.port.unsupported if f.rule_id == "RNN006"]
    assert flagged and report.first_divergence is not None, report.summary()
    assert report.first_divergence.statement == flagged[0].statement == 1
    row = report.row("an optimizer built while the cell ran: gradients")
    assert row.status == "differs" and "at optimizer step 1" in row.note, row.note
    assert report.first_divergence.names == [row.name]


def test_channel_dropout_masks_are_replayed():
    """pytorch/examples' MNIST net has ``nn.Dropout2d()``: its channel masks go to the
    MindSpore side (one per channel, read from PyTorch's output), so a training step with
    them in training mode matches exactly, at the top level and through the functional
    forms, in 1d, 2d and 3d."""
    import msmagic

    source = textwrap.dedent("""
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        torch.manual_seed(0)
        net = nn.Sequential(nn.Conv2d(1, 4, 3), nn.Dropout2d(P), nn.Flatten(), nn.Linear(4 * 6 * 6, 3))
        optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
        x, y = torch.randn(8, 1, 8, 8), torch.tensor([0, 1, 2, 0, 1, 2, 0, 1])
        for step in range(3):
            optimizer.zero_grad()
            loss = nn.functional.cross_entropy(net(x), y)
            loss.backward()
            optimizer.step()
        d1 = nn.Dropout1d(P)(torch.randn(2, 5, 7))
        d3 = F.dropout3d(torch.randn(2, 3, 2, 2, 2), p=P, training=True)
        fn = F.dropout2d(torch.ones(2, 6, 3, 3), P)
    """)
    dropped = msmagic.parity(source.replace("P", "0.5"))
    assert dropped.ok, (dropped.summary(), dropped.notes, dropped.first_divergence)
    assert not any("not replayed" in n for n in dropped.notes), dropped.notes
    replayed = next(s for s in dropped.synchronised if s.startswith("random draws:"))
    assert "dropout masks replayed: 4 layers or call sites, 6 calls" in replayed, replayed
    assert dropped.row("loss").status == "match" and dropped.row("d1").status == "match"
    kept = msmagic.parity(source.replace("P", "0.0"))
    assert kept.ok and not any("dropout masks" in s for s in kept.synchronised), (kept.summary(), kept.synchronised)


def test_channel_dropout_ported_to_an_element_dropout_is_not_given_the_mask():
    """A hand port that drops single elements where PyTorch dropped whole channels does
    not take PyTorch's channel mask: the replay stops and the notes say why (the value,
    a random draw no replay covered, is then copied as every such draw is)."""
    import msmagic

    source = "import torch\nx = torch.ones(4, 8, 3, 3)\ny = torch.nn.functional.dropout2d(x, 0.5)\n"
    against = "import mindspore\nx = mindspore.ops.ones((4, 8, 3, 3))\ny = mindspore.ops.dropout(x, 0.5)\n"
    report = msmagic.parity(source, against=against)
    assert not any("dropout masks replayed" in s for s in report.synchronised), report.synchronised
    assert any("drops one element at a time where PyTorch's dropped one channel" in n for n in report.notes), report.notes


def test_alpha_dropout_noise_is_named_as_not_replayed():
    """AlphaDropout has no MindSpore port (it stays PyTorch's, flagged): its noise is
    counted and named in the notes when a statement draws it in training mode."""
    import msmagic

    source = textwrap.dedent("""
        import torch
        torch.manual_seed(0)
        x = torch.randn(4, 6)
        y = torch.nn.functional.alpha_dropout(x, 0.5, True)
    """)
    report = msmagic.parity(source)
    assert any("random masks not replayed (F.alpha_dropout ×1" in n for n in report.notes), report.notes
    # under a default-device context (a TorchFunctionMode) the function dispatches to
    # itself by its module name: the call still counts once
    import torch

    with torch.device("cpu"):
        again = msmagic.parity(source)
    assert any("random masks not replayed (F.alpha_dropout ×1" in n for n in again.notes), again.notes
