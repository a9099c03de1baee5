import pytest

import msmagic
from tests.rules.support import check, flagged, src


def test_functional_autograd():
    check(src("""
        import torch
        from torch.autograd.functional import jacobian, hessian, jvp, vjp
        x = torch.tensor([1.0, 2.0, 3.0])
        y = torch.tensor([0.5, 1.0, 1.5])
        v = torch.tensor([1.0, 0.5, -1.0])
        J = jacobian(torch.sin, x, create_graph=False)
        Jf = jacobian(torch.cos, x, vectorize=True, strategy="forward-mode")
        Jt = jacobian(torch.mul, (x, y))
        H = hessian(torch.sum, x)
        out, jv = jvp(torch.exp, x, v)
        out2, vj = vjp(torch.sin, x, v)
    """), "J", "Jf", "Jt", "H", "out", "jv", "out2", "vj", rule="UTL001")


def test_helpers():
    check(src("""
        import torch
        a = torch.tensor([1.0, 2.0, 3.0])
        same = torch.allclose(a, a + 1e-7)
        near = torch.allclose(a, a + 0.1, atol=0.2)
        b = torch.bucketize(torch.tensor([0.5, 2.0, 3.5]), a)
        b32 = torch.bucketize(torch.tensor([0.5, 2.0, 3.5]), a, out_int32=True)
        c = torch.as_tensor([1.0, 2.0], dtype=torch.float64)
    """), "same", "near", "b", "b32", "c", rule="UTL002")


def test_findings():
    flagged(src("""
        import torch
        from torch.autograd.functional import vjp
        def run(f, xs):
            return vjp(f, xs)
    """), "UTL001", "pass v explicitly")
    flagged(src("""
        import torch
        from torch.autograd.functional import jacobian
        def run(f, xs):
            return jacobian(f, xs)
    """), "UTL001", "inputs not known")


def test_idempotent():
    code = msmagic.port(src("""
        import torch
        x = torch.tensor([1.0, 2.0])
        ok = torch.allclose(x, x)
    """)).code
    assert msmagic.port(code).code == code


def test_version_becomes_mindspores():
    import mindspore

    run = check(src("""
        import torch
        print("running on", torch.__version__)
        x = torch.ones(2)
    """), "x", rule="UTL004")
    assert "print(\"running on\", mindspore.__version__)" in run.port.code
    r = flagged(src("""
        import torch
        version = torch.__version__
    """), "UTL004", "review the version check")
    ns = {}
    exec(r.code, ns)
    assert ns["version"] == mindspore.__version__


def test_pad_sequence_with_computed_padding_and_layout():
    """bentrevett's collate functions: padding_value=pad_index (a variable) on int64 id
    sequences, batch_first from a variable; the value is cast to the ids' dtype."""
    run = check(src("""
        import torch
        import torch.nn as nn
        pad_index = 1
        first = True
        def collate_fn(batch):
            ids = [example["ids"] for example in batch]
            return nn.utils.rnn.pad_sequence(ids, padding_value=pad_index)
        batch = [{"ids": torch.tensor([5, 6, 7])}, {"ids": torch.tensor([8])}]
        padded = collate_fn(batch)
        fractional = nn.utils.rnn.pad_sequence([torch.tensor([2, 3]), torch.tensor([4])], padding_value=2.5)
        rows = nn.utils.rnn.pad_sequence([torch.ones(2, 3), torch.zeros(1, 3)], batch_first=first,
                                         padding_value=-pad_index)
    """), "padded", "fractional", "rows", rule="UTL003")
    assert not run.port.unsupported


# ----------------------------------------------------------------------------- pad_sequence (UTL003)


@pytest.mark.parametrize("call", [
    "pad_sequence(seqs, batch_first=True, padding_value=pad_index)",
    "pad_sequence(seqs, padding_value=pad_index)",
    "pad_sequence(seqs, first, pad_index)",
    "nn.utils.rnn.pad_sequence(seqs, batch_first=first, padding_value=2.7)",
    "torch.nn.utils.rnn.pad_sequence(tuple(seqs), batch_first=True, padding_side='left')",
    "pad_sequence(planes, batch_first=True, padding_value=-1.0)",
    "pad_sequence(flags, batch_first=True)",
])
def test_pad_sequence_with_variable_arguments(call):
    run = check(src(f"""
        import torch
        import torch.nn as nn
        from torch.nn.utils.rnn import pad_sequence
        pad_index = 1
        first = True
        seqs = [torch.tensor([5, 6, 7]), torch.tensor([8]), torch.tensor([9, 10])]
        planes = [torch.ones(3, 2), torch.full((1, 2), 2.0), torch.zeros(2, 2)]
        flags = [torch.tensor([True, False]), torch.tensor([True])]
        padded = {call}
    """), "padded", rule="UTL003")
    assert str(run.ms_ns["padded"].dtype).lower() == str(run.torch_ns["padded"].dtype).replace("torch.", "")
    assert "torch" not in run.port.code.replace("mindspore", "")


def test_pad_sequence_in_a_collate_function_from_a_factory():
    run = check(src("""
        import torch
        import torch.nn as nn
        def get_collate_fn(pad_index):
            def collate_fn(batch):
                ids = nn.utils.rnn.pad_sequence([b["ids"] for b in batch], padding_value=pad_index)
                return {"ids": ids}
            return collate_fn
        collate = get_collate_fn(3)
        batch = collate([{"ids": torch.tensor([1, 2])}, {"ids": torch.tensor([4, 5, 6, 7])}])
        ids = batch["ids"]
    """), "ids", rule="UTL003")
    assert run.ms_ns["ids"].asnumpy().tolist() == [[1, 4], [2, 5], [3, 6], [3, 7]]


# ----------------------------------------------------------------------------- packed sequences (UTL009)


PACKED = """
    import torch
    import torch.nn as nn
    from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence
    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = nn.{layer}(3, 4, 2, batch_first={first}, bidirectional=True)
        def forward(self, x, lengths):
            packed = pack_padded_sequence(x, lengths, batch_first={first}, enforce_sorted={ordered})
            packed_output, hidden = self.rnn(packed)
            output, output_lengths = pad_packed_sequence(packed_output, batch_first={unpack_first},
                                                         padding_value={value}, total_length={total})
            return output, hidden, output_lengths
    model = Encoder()
    x = torch.randn({shape})
    output, hidden, output_lengths = model(x, {lengths})
"""


@pytest.mark.parametrize("layer, first, unpack_first, ordered, value, total, lengths", [
    ("LSTM", True, False, False, 0.0, None, "torch.tensor([2, 5, 3])"),
    ("LSTM", False, False, True, -1.0, None, "[5, 3, 2]"),
    ("GRU", True, True, False, 0.5, 7, "torch.tensor([1, 4, 2])"),
    ("RNN", False, True, False, 0.0, None, "torch.tensor([3, 1, 2])"),
])
def test_a_layer_on_a_packed_sequence_gives_pytorchs_states_and_outputs(layer, first, unpack_first, ordered,
                                                                         value, total, lengths):
    shape = "3, 5, 3" if first else "5, 3, 3"
    run = check(src(PACKED.format(layer=layer, first=first, unpack_first=unpack_first, ordered=ordered,
                                  value=value, total=total, shape=shape, lengths=lengths)),
                "output", "hidden", "output_lengths", rule="UTL009", atol=1e-4)
    assert "run_packed(self.rnn, packed)" in run.port.code
    assert "import torch" not in run.port.code


def test_bentrevett_lstm_classifier_forward():
    """The sentiment LSTM: embedding, packed bidirectional 2-layer LSTM, the last
    hidden states of both directions concatenated, the padded output unused."""
    check(src("""
        import torch
        import torch.nn as nn
        class LSTM(nn.Module):
            def __init__(self, vocab_size, embedding_dim, hidden_dim, output_dim, pad_index):
                super().__init__()
                self.embedding = nn.Embedding(vocab_size, embedding_dim, padding_idx=pad_index)
                self.lstm = nn.LSTM(embedding_dim, hidden_dim, 2, bidirectional=True, dropout=0.0,
                                    batch_first=True)
                self.fc = nn.Linear(hidden_dim * 2, output_dim)
            def forward(self, ids, length):
                embedded = self.embedding(ids)
                packed_embedded = nn.utils.rnn.pack_padded_sequence(
                    embedded, length, batch_first=True, enforce_sorted=False
                )
                packed_output, (hidden, cell) = self.lstm(packed_embedded)
                output, output_length = nn.utils.rnn.pad_packed_sequence(packed_output)
                if self.lstm.bidirectional:
                    hidden = torch.cat([hidden[-1], hidden[-2]], dim=-1)
                else:
                    hidden = hidden[-1]
                return self.fc(hidden)
        model = LSTM(20, 6, 5, 2, 1)
        ids = torch.tensor([[3, 4, 5, 1, 1], [6, 7, 8, 9, 10], [11, 12, 1, 1, 1]])
        prediction = model(ids, torch.tensor([3, 5, 2]))
    """), "prediction", rule="UTL009", atol=1e-5)


def test_unsorted_lengths_raise_when_sorting_is_enforced():
    cell = src("""
        import torch
        from torch.nn.utils.rnn import pack_padded_sequence
        x = torch.zeros(3, 4, 2)
        packed = pack_padded_sequence(x, {lengths}, batch_first=True)
    """)
    for lengths, fails in (("[2, 4, 3]", True), ("[4, 3, 3]", False)):
        for code in (cell.format(lengths=lengths), msmagic.port(cell.format(lengths=lengths)).code):
            try:
                exec(code, {})
            except RuntimeError as exc:
                assert fails and "sorted in decreasing order" in str(exc)
            else:
                assert not fails


def test_training_through_a_packed_lstm_with_an_initial_state_matches():
    """Gradients flow through the packed port: two SGD steps give PyTorch's weights."""
    run = check(src("""
        import torch
        import torch.nn as nn
        from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence
        class Tagger(nn.Module):
            def __init__(self):
                super().__init__()
                self.lstm = nn.LSTM(3, 4, 2, batch_first=False)
            def forward(self, x, lengths, state):
                out, (h, c) = self.lstm(pack_padded_sequence(x, lengths, enforce_sorted=False), state)
                padded, _ = pad_packed_sequence(out, batch_first=True, padding_value=-2.0)
                return padded.sum(-1).mean() + h.sum() + c.mean()
        model = Tagger()
        x = torch.randn(5, 3, 3)
        state = (torch.randn(2, 3, 4), torch.randn(2, 3, 4))
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        losses = []
        for step in range(2):
            loss = model(x, torch.tensor([5, 2, 4]), state)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
    """), "losses", "model.lstm.weight_hh_l0", "model.lstm.bias_ih_l1", rule="UTL009", atol=1e-5)
    assert "run_packed(self.lstm, pack_padded_sequence(x, lengths, enforce_sorted=False), " in run.port.code
