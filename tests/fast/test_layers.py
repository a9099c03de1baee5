"""Layers (LAY, LYR, NRM, EMB, ATN, RNN): constructors, renamed arguments and attributes."""

from tests.fast.codemod import assert_ports


def test_linear_becomes_dense():
    assert_ports(
        """
            import torch.nn as nn
            fc = nn.Linear(10, 3)
            n_in = fc.in_features
            n_out = fc.out_features
        """,
        """
            import mindspore.nn as nn
            fc = nn.Dense(10, 3)
            n_in = fc.in_channels
            n_out = fc.out_channels
        """,
        edits={"IMP001", "LAY001"},
    )


def test_linear_positional_bias_false():
    assert_ports(
        """
            import torch.nn as nn
            fc = nn.Linear(10, 3, False)
        """,
        """
            import mindspore.nn as nn
            fc = nn.Dense(10, 3, has_bias=False)
        """,
        edits={"IMP001", "LAY001"},
    )


def test_linear_keywords_and_device_dropped():
    assert_ports(
        """
            import torch.nn as nn
            fc = nn.Linear(in_features=10, out_features=3, bias=True, device='cpu')
        """,
        """
            import mindspore.nn as nn
            fc = nn.Dense(in_channels=10, out_channels=3, has_bias=True)
        """,
        edits={"DEV003", "IMP001", "LAY001"},
    )


def test_linear_weight_keeps_its_name():
    assert_ports(
        """
            import torch.nn as nn
            fc = nn.Linear(10, 3)
            w = fc.weight
            b = fc.bias
        """,
        """
            import mindspore.nn as nn
            fc = nn.Dense(10, 3)
            w = fc.weight
            b = fc.bias
        """,
        edits={"IMP001", "LAY001"},
    )


def test_conv2d_default_padding_is_valid():
    assert_ports(
        """
            import torch.nn as nn
            conv = nn.Conv2d(4, 6, 3)
        """,
        """
            import mindspore.nn as nn
            conv = nn.Conv2d(4, 6, 3, has_bias=True, pad_mode='valid')
        """,
        edits={"IMP001", "LAY002"},
    )


def test_conv2d_positional_padding():
    assert_ports(
        """
            import torch.nn as nn
            conv = nn.Conv2d(4, 6, 3, 1, 1)
        """,
        """
            import mindspore.nn as nn
            conv = nn.Conv2d(4, 6, 3, 1, pad_mode='pad', padding=1, has_bias=True)
        """,
        edits={"IMP001", "LAY002"},
    )


def test_conv2d_tuple_padding_is_expanded():
    assert_ports(
        """
            import torch.nn as nn
            conv = nn.Conv2d(4, 6, 3, padding=(1, 2))
        """,
        """
            import mindspore.nn as nn
            conv = nn.Conv2d(4, 6, 3, pad_mode='pad', padding=(1, 1, 2, 2), has_bias=True)
        """,
        edits={"IMP001", "LAY002"},
    )


def test_conv2d_same_padding():
    assert_ports(
        """
            import torch.nn as nn
            conv = nn.Conv2d(4, 6, 3, padding='same')
        """,
        """
            import mindspore.nn as nn
            conv = nn.Conv2d(4, 6, 3, has_bias=True, pad_mode='same')
        """,
        edits={"IMP001", "LAY002"},
    )


def test_conv2d_groups_becomes_group():
    assert_ports(
        """
            import torch.nn as nn
            conv = nn.Conv2d(4, 6, 3, groups=2, bias=False)
        """,
        """
            import mindspore.nn as nn
            conv = nn.Conv2d(4, 6, 3, group=2, has_bias=False, pad_mode='valid')
        """,
        edits={"IMP001", "LAY002"},
    )


def test_conv2d_all_keywords():
    assert_ports(
        """
            import torch.nn as nn
            conv = nn.Conv2d(in_channels=4, out_channels=6, kernel_size=3, stride=1, padding=1, dilation=1, groups=2, bias=False, padding_mode='zeros')
        """,
        """
            import mindspore.nn as nn
            conv = nn.Conv2d(in_channels=4, out_channels=6, kernel_size=3, stride=1, pad_mode='pad', padding=1, dilation=1, group=2, has_bias=False)
        """,
        edits={"IMP001", "LAY002"},
    )


def test_conv1d():
    assert_ports(
        """
            import torch.nn as nn
            conv = nn.Conv1d(4, 6, 3, padding=(2,))
        """,
        """
            import mindspore.nn as nn
            conv = nn.Conv1d(4, 6, 3, pad_mode='pad', padding=2, has_bias=True)
        """,
        edits={"IMP001", "LAY002"},
    )


def test_conv3d_padding_tuple():
    assert_ports(
        """
            import torch.nn as nn
            conv = nn.Conv3d(4, 2, 3, padding=(1, 0, 2))
        """,
        """
            import mindspore.nn as nn
            conv = nn.Conv3d(4, 2, 3, pad_mode='pad', padding=(1, 1, 0, 0, 2, 2), has_bias=True)
        """,
        edits={"IMP001", "LAY002"},
    )


def test_conv_transpose2d():
    assert_ports(
        """
            import torch.nn as nn
            up = nn.ConvTranspose2d(4, 6, 3, stride=2)
        """,
        """
            import mindspore.nn as nn
            up = nn.Conv2dTranspose(4, 6, 3, stride=2, has_bias=True, pad_mode='valid')
        """,
        edits={"IMP001", "LAY003"},
    )


def test_conv_transpose2d_output_padding_folded():
    assert_ports(
        """
            import torch.nn as nn
            up = nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1)
        """,
        """
            import mindspore.nn as nn
            up = nn.Conv2dTranspose(4, 6, 3, stride=2, pad_mode='pad', padding=(1, 0, 1, 0), has_bias=True)
        """,
        edits={"IMP001", "LAY003"},
    )


def test_maxpool2d_gets_stride():
    assert_ports(
        """
            import torch.nn as nn
            pool = nn.MaxPool2d(2)
        """,
        """
            import mindspore.nn as nn
            pool = nn.MaxPool2d(2, stride=2)
        """,
        edits={"IMP001", "LAY004"},
    )


def test_maxpool2d_padding():
    assert_ports(
        """
            import torch.nn as nn
            pool = nn.MaxPool2d(3, 2, 1)
        """,
        """
            import mindspore.nn as nn
            pool = nn.MaxPool2d(3, 2, pad_mode='pad', padding=1)
        """,
        edits={"IMP001", "LAY004"},
    )


def test_maxpool2d_ceil_mode():
    assert_ports(
        """
            import torch.nn as nn
            pool = nn.MaxPool2d(2, ceil_mode=True)
        """,
        """
            import mindspore.nn as nn
            pool = nn.MaxPool2d(2, stride=2, ceil_mode=True, pad_mode='pad')
        """,
        edits={"IMP001", "LAY004"},
    )


def test_avgpool2d_count_include_pad():
    assert_ports(
        """
            import torch.nn as nn
            pool = nn.AvgPool2d(3, 2, 1, count_include_pad=False)
        """,
        """
            import mindspore.nn as nn
            pool = nn.AvgPool2d(3, 2, pad_mode='pad', padding=1, count_include_pad=False)
        """,
        edits={"IMP001", "LAY004"},
    )


def test_avgpool1d_padding():
    assert_ports(
        """
            import torch.nn as nn
            pool = nn.AvgPool1d(3, padding=1)
        """,
        """
            import mindspore.nn as nn
            pool = nn.AvgPool1d(3, stride=3, pad_mode='pad', padding=1)
        """,
        edits={"IMP001", "LAY004"},
    )


def test_adaptive_pools_unchanged_arguments():
    assert_ports(
        """
            import torch.nn as nn
            gap = nn.AdaptiveAvgPool2d((4, 3))
            gmp = nn.AdaptiveMaxPool2d(4)
        """,
        """
            import mindspore.nn as nn
            gap = nn.AdaptiveAvgPool2d((4, 3))
            gmp = nn.AdaptiveMaxPool2d(4)
        """,
        edits={"IMP001", "LAY005"},
    )


def test_functional_max_pool2d():
    assert_ports(
        """
            import torch.nn.functional as F
            y = F.max_pool2d(x, 3, 2, 1, 1, True)
        """,
        """
            import mindspore.ops as F
            y = F.max_pool2d(x, 3, 2, 1, 1, ceil_mode=True)
        """,
        edits={"IMP001", "LAY006"},
    )


def test_functional_avg_pool2d_stride_and_padding():
    assert_ports(
        """
            import torch.nn.functional as F
            y = F.avg_pool2d(x, 3, padding=(1, 0), count_include_pad=False)
            z = F.avg_pool2d(x, 2)
        """,
        """
            import mindspore.ops as F
            y = F.avg_pool2d(x, 3, stride=3, padding=(1, 1, 0, 0), count_include_pad=False)
            z = F.avg_pool2d(x, 2, stride=2)
        """,
        edits={"IMP001", "LAY006"},
    )


def test_functional_conv2d_padding():
    assert_ports(
        """
            import torch
            import torch.nn.functional as F
            y = F.conv2d(x, w, b, 1, 1)
        """,
        """
            import mindspore
            import mindspore.ops as F
            y = F.conv2d(x, w, b, 1, pad_mode='pad', padding=1)
        """,
        edits={"IMP001", "LAY002"},
    )


def test_activation_layers_renamed():
    assert_ports(
        """
            import torch.nn as nn
            a = nn.Hardswish()
            b = nn.Hardtanh(-2.0, 2.0, inplace=False)
            c = nn.Softshrink(0.7)
            d = nn.SELU()
        """,
        """
            import mindspore.nn as nn
            a = nn.HSwish()
            b = nn.Hardtanh(-2.0, 2.0)
            c = nn.SoftShrink(0.7)
            d = nn.SeLU()
        """,
        edits={"FUN013", "IMP001", "LYR001"},
    )


def test_gelu_approximate():
    assert_ports(
        """
            import torch.nn as nn
            a = nn.GELU()
            b = nn.GELU(approximate='tanh')
        """,
        """
            import mindspore.nn as nn
            a = nn.GELU(approximate=False)
            b = nn.GELU(approximate=True)
        """,
        edits={"FUN013", "IMP001"},
    )


def test_relu_inplace_dropped():
    assert_ports(
        """
            import torch.nn as nn
            act = nn.ReLU(inplace=True)
        """,
        """
            import mindspore.nn as nn
            act = nn.ReLU()
        """,
        edits={"FUN013", "IMP001"},
    )


def test_leaky_relu_layer_default_slope():
    assert_ports(
        """
            import torch.nn as nn
            a = nn.LeakyReLU()
            b = nn.LeakyReLU(0.2, inplace=True)
        """,
        """
            import mindspore.nn as nn
            a = nn.LeakyReLU(alpha=0.01)
            b = nn.LeakyReLU(0.2)
        """,
        edits={"FUN012", "FUN013", "IMP001"},
    )


def test_softmin_dim_becomes_axis():
    assert_ports(
        """
            import torch.nn as nn
            sm = nn.Softmin(dim=1)
        """,
        """
            import mindspore.nn as nn
            sm = nn.Softmin(axis=1)
        """,
        edits={"IMP001", "LYR002"},
    )


def test_softmax_layers():
    assert_ports(
        """
            import torch.nn as nn
            a = nn.Softmax(dim=1)
            b = nn.LogSoftmax(dim=-1)
        """,
        """
            import mindspore.nn as nn
            import mindspore

            <definition softmax_in_float64>

            <definition SoftmaxInFloat64>

            a = SoftmaxInFloat64(axis=1)
            b = nn.LogSoftmax(axis=-1)
        """,
        edits={"FUN005", "FUN020", "IMP001"},
    )


def test_prelu_and_groupnorm():
    assert_ports(
        """
            import torch.nn as nn
            act = nn.PReLU(3)
            norm = nn.GroupNorm(3, 6)
        """,
        """
            import mindspore.nn as nn
            act = nn.PReLU(3)
            norm = nn.GroupNorm(3, 6)
        """,
        edits={"IMP001", "LYR003"},
    )


def test_shape_layers():
    assert_ports(
        """
            import torch.nn as nn
            a = nn.PixelShuffle(2)
            d = nn.Unflatten(dim=1, unflattened_size=(2, 4))
            f = nn.Flatten(0, 1)
        """,
        """
            import mindspore.nn as nn
            a = nn.PixelShuffle(2)
            d = nn.Unflatten(axis=1, unflattened_size=(2, 4))
            f = nn.Flatten(0, 1)
        """,
        edits={"FUN013", "IMP001", "LYR004"},
    )


def test_pool3d_gets_stride():
    assert_ports(
        """
            import torch.nn as nn
            a = nn.MaxPool3d(2)
            b = nn.AvgPool3d(3, 2, padding=1)
        """,
        """
            import mindspore.nn as nn
            a = nn.MaxPool3d(2, stride=2)
            b = nn.AvgPool3d(3, 2, pad_mode='pad', padding=1)
        """,
        edits={"IMP001", "LYR005"},
    )


def test_smooth_l1_gets_reduction():
    assert_ports(
        """
            import torch.nn as nn
            a = nn.SmoothL1Loss()
            b = nn.SmoothL1Loss(reduction='sum', beta=0.5)
        """,
        """
            import mindspore.nn as nn
            a = nn.SmoothL1Loss(reduction='mean')
            b = nn.SmoothL1Loss(reduction='sum', beta=0.5)
        """,
        edits={"IMP001", "LYR006"},
    )


def test_local_response_norm_becomes_lrn():
    assert_ports(
        """
            import torch.nn as nn
            lrn = nn.LocalResponseNorm(3, alpha=0.01, beta=0.5, k=2.0)
        """,
        """
            import mindspore.nn as nn
            lrn = nn.LRN(depth_radius=1, bias=2.0, alpha=0.0033333333333333335, beta=0.5)
        """,
        edits={"IMP001", "LYR007"},
    )


def test_softplus_becomes_a_function():
    assert_ports(
        """
            import torch.nn as nn
            act = nn.Softplus(beta=2.0, threshold=5.0)
        """,
        """
            import mindspore.nn as nn
            from mindspore import ops
            act = (lambda input: ops.softplus(input, 2.0, 5.0))
        """,
        edits={"IMP001", "LYR009"},
    )


def test_zero_and_circular_padding_layers():
    assert_ports(
        """
            import torch.nn as nn
            a = nn.ZeroPad1d((1, 2))
            b = nn.CircularPad2d(1)
        """,
        """
            import mindspore.nn as nn
            from mindspore import ops
            a = nn.ConstantPad1d((1, 2), value=0.0)
            b = (lambda input: ops.pad(input, (1, 1, 1, 1), mode="circular"))
        """,
        edits={"IMP001", "LYR010"},
    )


def test_layernorm_shape_tuple_and_epsilon():
    assert_ports(
        """
            import torch.nn as nn
            ln = nn.LayerNorm(4)
            ln2 = nn.LayerNorm([3, 4], eps=1e-6)
        """,
        """
            import mindspore.nn as nn
            import torch  # msmagic: kept for the PyTorch calls flagged below
            ln = nn.LayerNorm((4,), epsilon=1e-5)
            ln2 = torch.nn.LayerNorm([3, 4], eps=1e-6)  # msmagic: NRM001 LayerNorm shape must be one literal dim
        """,
        edits={"IMP001", "NRM001"},
        findings={"NRM001"},
    )


def test_layernorm_weight_bias_gamma_beta():
    assert_ports(
        """
            import torch.nn as nn
            ln = nn.LayerNorm(5)
            scale = ln.weight
            shift = ln.bias
        """,
        """
            import mindspore.nn as nn
            ln = nn.LayerNorm((5,), epsilon=1e-5)
            scale = ln.gamma
            shift = ln.beta
        """,
        edits={"IMP001", "NRM001", "NRM002"},
    )


def test_embedding_init_written_out():
    assert_ports(
        '''
            import torch.nn as nn
            emb = nn.Embedding(10, 4, padding_idx=0)
        ''',
        '''
            import mindspore.nn as nn
            from mindspore import ops
            from mindspore.common.initializer import Normal

            class PaddingEmbedding(nn.Embedding):
                """PyTorch's nn.Embedding with padding_idx: the positions that look up the padding row pass no gradient to it."""

                def construct(self, ids):
                    out = super().construct(ids)
                    if self.padding_idx is None:
                        return out
                    padding = (ids == self.padding_idx).unsqueeze(-1)
                    return ops.where(padding, ops.stop_gradient(out), out)

            emb = PaddingEmbedding(10, 4, padding_idx=0, embedding_table=Normal(1.0))
        ''',
        edits={"EMB001", "IMP001"},
    )


def test_embedding_with_a_padding_index_in_a_class_body_is_defined_once_before_the_class():
    assert_ports(
        '''
            import torch.nn as nn
            class Encoder(nn.Module):
                def __init__(self, vocab, dim, pad):
                    super().__init__()
                    self.words = nn.Embedding(vocab, dim, pad)
                    self.tags = nn.Embedding(8, dim, padding_idx=0)
                    self.plain = nn.Embedding(vocab, dim, padding_idx=None)
        ''',
        '''
            import mindspore.nn as nn
            from mindspore import ops
            from mindspore.common.initializer import Normal

            class PaddingEmbedding(nn.Embedding):
                """PyTorch's nn.Embedding with padding_idx: the positions that look up the padding row pass no gradient to it."""

                def construct(self, ids):
                    out = super().construct(ids)
                    if self.padding_idx is None:
                        return out
                    padding = (ids == self.padding_idx).unsqueeze(-1)
                    return ops.where(padding, ops.stop_gradient(out), out)

            class Encoder(nn.Cell):
                def __init__(self, vocab, dim, pad):
                    super().__init__()
                    self.words = PaddingEmbedding(vocab, dim, padding_idx=pad, embedding_table=Normal(1.0))
                    self.tags = PaddingEmbedding(8, dim, padding_idx=0, embedding_table=Normal(1.0))
                    self.plain = nn.Embedding(vocab, dim, padding_idx=None, embedding_table=Normal(1.0))
                    self.set_train()
        ''',
        edits={"CEL001", "EMB001", "IMP001", "MOD001"},
    )


def test_embedding_attributes():
    assert_ports(
        """
            import torch.nn as nn
            emb = nn.Embedding(6, 3)
            table = emb.weight
            rows = emb.num_embeddings
            dim = emb.embedding_dim
        """,
        """
            import mindspore.nn as nn
            from mindspore.common.initializer import Normal
            emb = nn.Embedding(6, 3, embedding_table=Normal(1.0))
            table = emb.embedding_table
            rows = emb.vocab_size
            dim = emb.embedding_size
        """,
        edits={"EMB001", "EMB002", "IMP001"},
    )


def test_multihead_attention_bias():
    assert_ports(
        """
            import torch.nn as nn
            mha = nn.MultiheadAttention(8, 2, bias=True, batch_first=True)
        """,
        """
            import mindspore.nn as nn
            mha = nn.MultiheadAttention(8, 2, has_bias=True, batch_first=True)
        """,
        edits={"ATN001", "IMP001"},
    )


def test_transformer_encoder_layer_activation_function():
    assert_ports(
        """
            import torch.nn as nn
            import torch.nn.functional as F
            layer = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0, activation=F.gelu, batch_first=True)
        """,
        """
            import mindspore.nn as nn
            import mindspore.ops as F
            layer = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0, activation='gelu', batch_first=True)
        """,
        edits={"ATN002", "IMP001"},
    )


def test_transformer_encoder_nested_tensor_dropped():
    assert_ports(
        """
            import torch.nn as nn
            layer = nn.TransformerEncoderLayer(8, 2)
            enc = nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)
        """,
        """
            import mindspore.nn as nn
            layer = nn.TransformerEncoderLayer(8, 2)
            enc = nn.TransformerEncoder(layer, num_layers=2)
        """,
        edits={"ATN002", "ATN003", "IMP001"},
    )


def test_lstm_bias_becomes_has_bias():
    assert_ports(
        """
            import torch.nn as nn
            lstm = nn.LSTM(3, 4, bias=False, batch_first=True)
        """,
        """
            import mindspore.nn as nn
            lstm = nn.LSTM(3, 4, has_bias=False, batch_first=True)
        """,
        edits={"IMP001", "RNN001"},
    )


def test_lstm_device_dropped():
    assert_ports(
        """
            import torch.nn as nn
            lstm = nn.LSTM(3, hidden_size=4, num_layers=2, bidirectional=True, device='cpu')
        """,
        """
            import mindspore.nn as nn
            lstm = nn.LSTM(3, hidden_size=4, num_layers=2, bidirectional=True)
        """,
        edits={"DEV003", "IMP001", "RNN001"},
    )


def test_gru_attributes():
    assert_ports(
        """
            import torch.nn as nn
            gru = nn.GRU(6, 4, bias=False)
            n_in = gru.input_size
            has_bias = gru.bias
        """,
        """
            import mindspore.nn as nn
            gru = nn.GRU(6, 4, has_bias=False)
            n_in = gru.w_ih_list[0].shape[1]
            has_bias = gru.has_bias
        """,
        edits={"IMP001", "RNN001", "RNN002"},
    )


def test_rnn_cells_unchanged():
    assert_ports(
        """
            import torch.nn as nn
            cell = nn.LSTMCell(3, 4)
            gcell = nn.GRUCell(3, 4)
        """,
        """
            import mindspore.nn as nn
            cell = nn.LSTMCell(3, 4)
            gcell = nn.GRUCell(3, 4)
        """,
        edits={"IMP001", "RNN003"},
    )


def test_flatten_parameters_removed():
    assert_ports(
        """
            import torch.nn as nn
            gru = nn.GRU(3, 4)
            gru.flatten_parameters()
            out, h = gru(x)
        """,
        """
            import mindspore.nn as nn
            gru = nn.GRU(3, 4)
            out, h = gru(x)
        """,
        edits={"IMP001", "RNN001", "RNN004"},
    )


def test_loss_layers():
    assert_ports(
        """
            import torch.nn as nn
            a = nn.MSELoss(reduction='sum')
            b = nn.NLLLoss(ignore_index=0)
            c = nn.BCELoss()
        """,
        """
            import mindspore.nn as nn
            from mindspore import ops
            a = nn.MSELoss(reduction='sum')
            b = nn.NLLLoss(ignore_index=0)
            c = (lambda input, target: ops.binary_cross_entropy(input, target, reduction="none").mean())
        """,
        edits={"FUN014", "IMP001"},
    )


def test_bce_with_logits_positional_weight():
    assert_ports(
        """
            import torch
            import torch.nn as nn
            crit = nn.BCEWithLogitsLoss(torch.tensor([1., 2.]))
            total = nn.BCEWithLogitsLoss(torch.tensor([1., 2.]), reduction="sum")
        """,
        """
            import mindspore
            import mindspore.nn as nn
            crit = (lambda input, target, weight=mindspore.Tensor([1., 2.]): mindspore.ops.binary_cross_entropy_with_logits(input, target, weight=weight, reduction="none").mean())
            total = nn.BCEWithLogitsLoss(weight=mindspore.Tensor([1., 2.]), reduction="sum")
        """,
        edits={"DAT001", "FUN014", "IMP001"},
    )


def test_cross_entropy_loss_becomes_partial():
    assert_ports(
        """
            import torch.nn as nn
            crit = nn.CrossEntropyLoss(label_smoothing=0.05)
        """,
        """
            import mindspore.nn as nn
            import functools
            from mindspore import ops
            crit = functools.partial(ops.cross_entropy, label_smoothing=0.05)
        """,
        edits={"FUN015", "IMP001"},
    )


def test_cross_entropy_loss_default():
    assert_ports(
        """
            import torch.nn as nn
            crit = nn.CrossEntropyLoss()
            loss = crit(logits, target)
        """,
        """
            import mindspore.nn as nn
            import functools
            from mindspore import ops
            crit = functools.partial(ops.cross_entropy)
            loss = crit(logits, target)
        """,
        edits={"FUN015", "IMP001"},
    )


def test_upsample_scale_factor_float():
    assert_ports(
        """
            import torch.nn as nn
            up = nn.Upsample(scale_factor=2, mode='bilinear', align_corners=True)
        """,
        """
            import mindspore.nn as nn
            up = nn.Upsample(scale_factor=2.0, mode='bilinear', align_corners=True, recompute_scale_factor=True)
        """,
        edits={"IMP001", "PAD002"},
    )


def test_identity_and_tanh():
    assert_ports(
        """
            import torch.nn as nn
            a = nn.Identity()
            b = nn.Tanh()
            c = nn.Sigmoid()
        """,
        """
            import mindspore.nn as nn
            from mindspore import ops
            a = nn.Identity()

            class TanhViaSigmoid(nn.Cell):
                \"\"\"PyTorch's nn.Tanh as tanh(x) = 2 * sigmoid(2x) - 1: MindSpore's CPU tanh is
                up to 1e-4 off.\"\"\"

                def construct(self, input):
                    return 2 * ops.sigmoid(2 * input) - 1

            b = TanhViaSigmoid()
            c = nn.Sigmoid()
        """,
        edits={"FUN013", "FUN018", "IMP001"},
    )


def test_transformer_decoder_ported_as_is():
    assert_ports(
        """
            import torch.nn as nn
            layer = nn.TransformerDecoderLayer(8, 2, dim_feedforward=16, dropout=0.0, batch_first=True)
            decoder = nn.TransformerDecoder(layer, num_layers=2)
        """,
        """
            import mindspore.nn as nn
            layer = nn.TransformerDecoderLayer(8, 2, dim_feedforward=16, dropout=0.0, batch_first=True)
            decoder = nn.TransformerDecoder(layer, num_layers=2)
        """,
        edits={"ATN004", "IMP001"},
    )


def test_range_and_numpy_index_arrays_are_wrapped():
    assert_ports(
        """
        import numpy as np
        import torch
        x = torch.zeros(3, 4)
        t = torch.tensor([0, 2, 1])
        a = x[range(3), t]
        b = x[np.array([2, 0])]
        """,
        """
        import numpy as np
        import mindspore
        x = mindspore.ops.zeros((3, 4))
        t = mindspore.Tensor([0, 2, 1])
        a = x[list(range(3)), t]
        b = x[mindspore.Tensor(np.array([2, 0]))]
        """,
        edits={"IMP001", "FUN009", "DAT001", "IDX010"},
    )


def test_member_chain_after_a_renamed_attribute():
    assert_ports(
        """
            import torch
            import torch.nn as nn
            emb = nn.Embedding(6, 3)
            emb.weight.data = torch.zeros(6, 3)
            emb.weight.data.copy_(torch.ones(6, 3))
            rows = emb.weight.shape[0]
        """,
        """
            import mindspore
            import mindspore.nn as nn
            from mindspore.common.initializer import Normal
            emb = nn.Embedding(6, 3, embedding_table=Normal(1.0))
            emb.embedding_table.data = mindspore.ops.zeros((6, 3))
            emb.embedding_table.data.copy_(mindspore.ops.ones((6, 3)))
            rows = emb.embedding_table.shape[0]
        """,
    )


def test_layer_attributes_renamed_or_flagged_by_layer_kind():
    assert_ports(
        """
            import torch.nn as nn
            conv = nn.Conv2d(4, 6, 3, groups=2)
            ln = nn.LayerNorm(6, eps=1e-6)
            g = conv.groups
            e = ln.eps
            mode = conv.padding_mode
        """,
        """
            import mindspore.nn as nn
            conv = nn.Conv2d(4, 6, 3, group=2, has_bias=True, pad_mode='valid')
            ln = nn.LayerNorm((6,), epsilon=1e-6)
            g = conv.group
            e = ln.epsilon
            mode = conv.padding_mode  # msmagic: LAY008 Conv2d.padding_mode has no MindSpore counterpart
        """,
        edits={"IMP001", "LAY002", "NRM001", "LAY007"},
        findings={"LAY008"},
    )


def test_layer_attribute_of_unknown_receiver_is_chosen_when_run():
    assert_ports(
        """
            import torch.nn as nn
            layers = nn.ModuleList([nn.Linear(4, 8), nn.Linear(8, 2)])
            sizes = [each.out_features for each in layers]
            def fan_in(layer):
                return layer.in_features
            def rows(model):
                return model.embedding.num_embeddings
            def resize(layer):
                layer.out_features = 3
        """,
        """
            import mindspore.nn as nn
            layers = nn.CellList([nn.Dense(4, 8), nn.Dense(8, 2)]).set_train()
            sizes = [(each.out_channels if isinstance(each, (nn.Dense, nn.BiDense)) else each.out_features) for each in layers]
            def fan_in(layer):
                return (layer.in_channels if isinstance(layer, nn.Dense) else layer.in_features)
            def rows(model):
                return (model.embedding.vocab_size if isinstance(model.embedding, nn.Embedding) else model.embedding.num_embeddings)
            def resize(layer):
                layer.out_features = 3  # msmagic: LAY007 .out_features is out_channels on a ported layer
        """,
        findings={"LAY007"},
    )
