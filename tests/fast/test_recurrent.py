"""Calls of recurrent layer instances (RNN005) and str methods that share a tensor
method's name."""

from tests.fast.codemod import assert_ports, port


def test_lstm_state_list_becomes_a_tuple():
    assert_ports(
        """
            import torch
            import torch.nn as nn
            lstm = nn.LSTM(3, 4)
            out, (h, c) = lstm(x, [h0, c0])
            out, states = lstm(x, states)
            out, states = lstm(x, detach(states))
            out, states = lstm(x, (h0, c0))
            out, states = lstm(x)
            out, states = lstm(x, None)
        """,
        """
            import mindspore
            import mindspore.nn as nn
            lstm = nn.LSTM(3, 4)
            out, (h, c) = lstm(x, (h0, c0))
            out, states = lstm(x, None if states is None else tuple(states))
            out, states = lstm(x, tuple(detach(states)))
            out, states = lstm(x, (h0, c0))
            out, states = lstm(x)
            out, states = lstm(x, None)
        """,
        edits=["IMP001", "IMP001", "RNN001", "RNN005", "RNN005", "RNN005"],
    )


def test_lstm_attribute_of_a_module_is_typed_and_gru_is_left_alone():
    assert_ports(
        """
            import torch.nn as nn
            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.lstm = nn.LSTM(3, 4, batch_first=True)
                    self.gru = nn.GRU(3, 4)
                def forward(self, x, h):
                    out, h = self.lstm(x, h)
                    out2, g = self.gru(x, h[0])
                    return out, h
        """,
        """
            import mindspore.nn as nn
            class Net(nn.Cell):
                def __init__(self):
                    super().__init__()
                    self.lstm = nn.LSTM(3, 4, batch_first=True)
                    self.gru = nn.GRU(3, 4)
                    self.set_train()
                def construct(self, x, h):
                    out, h = self.lstm(x, None if h is None else tuple(h))
                    out2, g = self.gru(x, h[0])
                    return out, h
        """,
        edits={"IMP001", "CEL001", "CEL002", "MOD001", "RNN001", "RNN005"},
    )


def test_str_split_is_not_flagged_as_a_tensor_method():
    assert_ports(
        """
            import torch
            words = line.split() + ["<eos>"]
            cols = row.split(",")
            parts = x.split(2)
        """,
        """
            import mindspore
            words = line.split() + ["<eos>"]
            cols = row.split(",")
            parts = x.split(2)
        """,
    )


GETATTR_RNN = """
import torch
import torch.nn as nn
class RNNModel(nn.Module):
    def __init__(self, rnn_type, nlayers, dropout):
        super().__init__()
        if rnn_type in ['LSTM', 'GRU']:
            self.rnn = getattr(nn, rnn_type)(4, 8, LAYERS_HERE, dropout=dropout)
        else:
            self.rnn = nn.RNN(4, 8, nlayers)
    def forward(self, x):
        return self.rnn(x)[0]
if MODEL == 'Transformer':
    model = None
else:
    model = RNNModel('LSTM', NLAYERS, DROPOUT)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
def train():
    for i in range(2):
        opt.zero_grad()
        loss = model(torch.ones(3, 1, 4)).sum()
        loss.backward()
        opt.step()
train()
"""


def test_a_recurrent_layer_picked_by_name_is_flagged_and_its_dropout_followed():
    """word_language_model: ``getattr(nn, rnn_type)(..., nlayers, dropout=dropout)`` is
    flagged where it is built (GEN005), and the statement that trains the model (bound in a
    branch) is flagged for its dropout between layers (RNN006)."""
    result = port(GETATTR_RNN.replace("LAYERS_HERE", "nlayers").replace("NLAYERS", "2").replace("DROPOUT", "0.2"))
    found = [(f.rule_id, f.line) for f in result.unsupported]
    assert ("GEN005", 8) in found and ("RNN006", 24) in found, found  # train()
    assert "getattr(nn, rnn_type)(4, 8, nlayers, dropout=dropout)  # msmagic: GEN005" in result.code
    # one layer: PyTorch's dropout between layers does nothing, nothing to say about training
    single = port(GETATTR_RNN.replace("LAYERS_HERE", "1").replace("NLAYERS", "1").replace("DROPOUT", "0.2"))
    assert "RNN006" not in {f.rule_id for f in single.unsupported}
