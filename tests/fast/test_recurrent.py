"""Calls of recurrent layer instances (RNN005) and str methods that share a tensor
method's name."""

from tests.fast.codemod import assert_ports


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
