"""Dropout and BatchNorm (DRP, BNM, MOD003): keep probabilities, momentum, statistics and modes."""

from tests.fast.codemod import assert_ports


def test_dropout_p_by_keyword():
    assert_ports(
        """
            import torch.nn as nn
            drop = nn.Dropout(0.2)
        """,
        """
            import mindspore.nn as nn
            drop = nn.Dropout(p=0.2).set_train()
        """,
        edits={"DRP001", "IMP001", "MOD003"},
    )


def test_dropout_default_p():
    assert_ports(
        """
            import torch.nn as nn
            drop = nn.Dropout()
        """,
        """
            import mindspore.nn as nn
            drop = nn.Dropout().set_train()
        """,
        edits={"DRP001", "IMP001", "MOD003"},
    )


def test_dropout_inplace_dropped():
    assert_ports(
        """
            import torch.nn as nn
            drop = nn.Dropout(p=0.5, inplace=False)
        """,
        """
            import mindspore.nn as nn
            drop = nn.Dropout(p=0.5).set_train()
        """,
        edits={"DRP001", "DRP002", "IMP001", "MOD003"},
    )


def test_dropout_inplace_true_flagged():
    assert_ports(
        """
            import torch.nn as nn
            drop = nn.Dropout(p=0.5, inplace=True)
        """,
        """
            import mindspore.nn as nn
            drop = nn.Dropout(p=0.5).set_train()  # msmagic: DRP002 inplace=True dropped: input not modified in place
        """,
        edits={"DRP001", "DRP002", "IMP001", "MOD003"},
        findings={"DRP002"},
    )


def test_dropout2d_layer():
    assert_ports(
        """
            import torch.nn as nn
            drop = nn.Dropout2d(0.1)
        """,
        """
            import mindspore.nn as nn
            drop = nn.Dropout2d(0.1).set_train()
        """,
        edits={"DRP001", "IMP001", "MOD003"},
    )


def test_dropout_one_is_flagged():
    assert_ports(
        """
            import torch.nn as nn
            drop = nn.Dropout(1.0)
        """,
        """
            import mindspore.nn as nn
            drop = nn.Dropout(p=1.0).set_train()  # msmagic: DRP001 p=1 is rejected by MindSpore
        """,
        edits={"DRP001", "IMP001", "MOD003"},
        findings={"DRP001"},
    )


def test_dropout_inside_module_gets_no_set_train():
    assert_ports(
        """
            import torch.nn as nn
            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.drop = nn.Dropout(0.3)

                def forward(self, x):
                    return self.drop(x)
        """,
        """
            import mindspore.nn as nn
            class Net(nn.Cell):
                def __init__(self):
                    super().__init__()
                    self.drop = nn.Dropout(p=0.3)
                    self.set_train()

                def construct(self, x):
                    return self.drop(x)
        """,
        edits={"CEL001", "CEL002", "DRP001", "IMP001", "MOD001"},
    )


def test_dropout_called_inline():
    assert_ports(
        """
            import torch.nn as nn
            y = nn.Dropout(0.5)(x)
        """,
        """
            import mindspore.nn as nn
            y = nn.Dropout(p=0.5).set_train()(x)
        """,
        edits={"DRP001", "IMP001", "MOD003"},
    )


def test_functional_dropout_training_flag():
    assert_ports(
        """
            import torch
            import torch.nn.functional as F
            y = F.dropout(x, 0.3, training=False)
            z = F.dropout(x, p=0.0)
        """,
        """
            import mindspore
            import mindspore.ops as F
            y = F.dropout(x, 0.3, training=False)
            z = F.dropout(x, p=0.0, training=True)
        """,
        edits={"DRP003", "IMP001"},
    )


def test_functional_dropout_positional_training():
    assert_ports(
        """
            import torch
            import torch.nn.functional as F
            y = F.dropout(x, 0.5, False)
        """,
        """
            import mindspore
            import mindspore.ops as F
            y = F.dropout(x, 0.5, False)
        """,
        edits={"DRP003", "IMP001"},
    )


def test_functional_dropout2d():
    assert_ports(
        """
            import torch
            import torch.nn.functional as F
            y = F.dropout2d(x, p=0.5)
        """,
        """
            import mindspore
            import mindspore.ops as F
            y = F.dropout2d(x, p=0.5, training=True)
        """,
        edits={"DRP003", "IMP001"},
    )


def test_batchnorm_default_momentum():
    assert_ports(
        """
            import torch.nn as nn
            bn = nn.BatchNorm2d(3)
        """,
        """
            import mindspore.nn as nn
            bn = nn.BatchNorm2d(3).set_train()
        """,
        edits={"BNM001", "IMP001", "MOD003"},
    )


def test_batchnorm_momentum_inverted():
    assert_ports(
        """
            import torch.nn as nn
            bn = nn.BatchNorm2d(3, momentum=0.2)
            bn1 = nn.BatchNorm1d(4, eps=1e-3, momentum=0.01)
        """,
        """
            import mindspore.nn as nn
            bn = nn.BatchNorm2d(3, momentum=0.8).set_train()
            bn1 = nn.BatchNorm1d(4, eps=1e-3, momentum=0.99).set_train()
        """,
        edits={"BNM001", "IMP001", "MOD003"},
    )


def test_batchnorm_momentum_none_flagged():
    assert_ports(
        """
            import torch.nn as nn
            bn = nn.BatchNorm1d(4, momentum=None)
        """,
        """
            import mindspore.nn as nn
            bn = nn.BatchNorm1d(4).set_train()  # msmagic: BNM001 momentum=None (cumulative average) has no MindSpore equivalent
        """,
        edits={"BNM001", "IMP001", "MOD003"},
        findings={"BNM001"},
    )


def test_batchnorm_track_running_stats():
    assert_ports(
        """
            import torch.nn as nn
            bn = nn.BatchNorm1d(4, track_running_stats=False)
        """,
        """
            import mindspore.nn as nn
            bn = nn.BatchNorm1d(4, use_batch_statistics=True).set_train()
        """,
        edits={"BNM001", "BNM002", "IMP001", "MOD003"},
    )


def test_batchnorm_affine_false():
    assert_ports(
        """
            import torch.nn as nn
            bn = nn.BatchNorm2d(3, affine=False)
        """,
        """
            import mindspore.nn as nn
            bn = nn.BatchNorm2d(3, affine=False).set_train()
        """,
        edits={"BNM001", "IMP001", "MOD003"},
    )


def test_batchnorm_running_stats_renamed():
    assert_ports(
        """
            import torch.nn as nn
            bn = nn.BatchNorm1d(3)
            mean = bn.running_mean
            var = bn.running_var
        """,
        """
            import mindspore.nn as nn
            bn = nn.BatchNorm1d(3).set_train()
            mean = bn.moving_mean
            var = bn.moving_variance
        """,
        edits={"BNM001", "BNM003", "IMP001", "MOD003"},
    )


def test_batchnorm_weight_bias_renamed():
    assert_ports(
        """
            import torch.nn as nn
            bn = nn.BatchNorm2d(3)
            scale = bn.weight
            shift = bn.bias
        """,
        """
            import mindspore.nn as nn
            bn = nn.BatchNorm2d(3).set_train()
            scale = bn.gamma
            shift = bn.beta
        """,
        edits={"BNM001", "BNM004", "IMP001", "MOD003"},
    )


def test_batchnorm_in_module_attributes():
    assert_ports(
        """
            import torch.nn as nn
            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.bn = nn.BatchNorm1d(4)
                    self.fc = nn.Linear(4, 4)

                def forward(self, x):
                    return self.fc(self.bn(x)) * self.bn.weight

            model = Net()
            w = model.bn.weight
            fw = model.fc.weight
        """,
        """
            import mindspore.nn as nn
            class Net(nn.Cell):
                def __init__(self):
                    super().__init__()
                    self.bn = nn.BatchNorm1d(4)
                    self.fc = nn.Dense(4, 4)
                    self.set_train()

                def construct(self, x):
                    return self.fc(self.bn(x)) * self.bn.gamma

            model = Net()
            w = model.bn.gamma
            fw = model.fc.weight
        """,
        edits={"BNM001", "BNM004", "CEL001", "CEL002", "IMP001", "LAY001", "MOD001"},
    )


def test_num_batches_tracked_flagged():
    assert_ports(
        """
            import torch.nn as nn
            bn = nn.BatchNorm2d(3)
            steps = bn.num_batches_tracked
        """,
        """
            import mindspore.nn as nn
            bn = nn.BatchNorm2d(3).set_train()
            steps = bn.num_batches_tracked  # msmagic: BNM005 num_batches_tracked does not exist in MindSpore
        """,
        edits={"BNM001", "IMP001", "MOD003"},
        findings={"BNM005"},
    )


def test_eval_on_a_dropout_layer():
    assert_ports(
        """
            import torch.nn as nn
            drop = nn.Dropout(0.2)
            drop.eval()
        """,
        """
            import mindspore.nn as nn
            drop = nn.Dropout(p=0.2).set_train()
            drop.set_train(False)
        """,
        edits={"DRP001", "IMP001", "MOD002", "MOD003"},
    )
