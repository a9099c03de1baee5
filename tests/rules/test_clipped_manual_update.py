"""A manual update after clipping the gradients (PyTorch's word-language-model example):
``loss.backward()``, ``clip_grad_norm_(model.parameters(), clip)``, then ``for p in
model.parameters(): p.data.add_(p.grad, alpha=-lr)``. Executed: the port clips the
gradient tuple and updates each Parameter from it, and the trained weights agree."""

import numpy as np
import pytest

import msmagic
from msmagic.parity_check import ms_name_for, run_pair, to_numpy
from tests.rules.support import src

MODEL = src("""
    import torch
    import torch.nn as nn

    class RNNModel(nn.Module):
        def __init__(self, ntoken, ninp, nhid):
            super().__init__()
            self.encoder = nn.Embedding(ntoken, ninp)
            self.rnn = nn.LSTM(ninp, nhid)
            self.decoder = nn.Linear(nhid, ntoken)
            self.nhid = nhid

        def forward(self, input, hidden):
            emb = self.encoder(input)
            output, hidden = self.rnn(emb, hidden)
            return self.decoder(output), hidden

        def init_hidden(self, bsz):
            weight = next(self.parameters())
            return (weight.new_zeros(1, bsz, self.nhid), weight.new_zeros(1, bsz, self.nhid))

    def repackage_hidden(h):
        if isinstance(h, torch.Tensor):
            return h.detach()
        return tuple(repackage_hidden(v) for v in h)

    torch.manual_seed(0)
    ntokens = 12
    model = RNNModel(ntokens, 6, 8)
    criterion = nn.CrossEntropyLoss()
    train_data = torch.randint(0, ntokens, (21, 3))
    bptt, clip = 5, CLIP
""")

TRAIN = src("""
    def get_batch(source, i):
        seq_len = min(bptt, len(source) - 1 - i)
        return source[i:i + seq_len], source[i + 1:i + 1 + seq_len].reshape(-1)

    def train(lr):
        model.train()
        total_loss = 0.
        hidden = model.init_hidden(3)
        for batch, i in enumerate(range(0, train_data.size(0) - 1, bptt)):
            data, targets = get_batch(train_data, i)
            model.zero_grad()
            if MODEL_KIND == 'Transformer':
                output = model(data)
            else:
                hidden = repackage_hidden(hidden)
                output, hidden = model(data, hidden)
            loss = criterion(output.view(-1, ntokens), targets)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
            for p in model.parameters():
                p.data.add_(p.grad, alpha=-lr)
            total_loss += loss.item()
        return total_loss

    MODEL_KIND = 'LSTM'
    total = train(0.5)
    total2 = train(0.5)
""")


def _weights_agree(run) -> float:
    tmod, cell = run.torch_ns["model"], run.ms_ns["model"]
    params = {p.name: p for p in cell.get_parameters()}
    worst = 0.0
    for name, t in tmod.named_parameters():
        got = params[ms_name_for(tmod, name)].asnumpy()
        worst = max(worst, float(np.abs(got - to_numpy(t)).max()))
    return worst


@pytest.mark.parametrize("clip", ["0.25", "100.0"])
def test_a_clipped_manual_update_in_a_function_trains_like_pytorch(clip):
    """0.25 clips every step (the gradients' norm is larger), 100.0 none: both agree."""
    source = MODEL.replace("CLIP", clip) + TRAIN
    result = msmagic.port(source)
    assert not [f for f in result.unsupported if f.rule_id.startswith(("TRN", "API"))], result.unsupported
    assert "clip_by_global_norm(grads" in result.code
    run = run_pair(source, rtol=1e-4, atol=1e-5)
    assert run.torch_error is None and run.ms_error is None, run.explain()
    assert run.agree("total", "total2"), run.explain()
    assert _weights_agree(run) < 1e-4


def test_clipping_another_module_than_the_one_updated_stays_flagged():
    """The clip names other parameters than the update loop: not one training step the
    port can rewrite; flagged, as before."""
    source = MODEL.replace("CLIP", "0.25") + TRAIN.replace(
        "clip_grad_norm_(model.parameters(), clip)", "clip_grad_norm_(model.decoder.parameters(), clip)")
    result = msmagic.port(source)
    assert {"TRN004", "TRN002"} <= {f.rule_id for f in result.unsupported}
