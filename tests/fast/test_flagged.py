"""Flagged cases: what cannot be ported faithfully gets a ``# msmagic: RULE ...`` comment
on its line and a finding with that rule id; the rest of the cell is still ported."""

from tests.fast.codemod import assert_ports


def test_unknown_torch_api_left_as_pytorch():
    assert_ports(
        """
            import torch
            y = torch.special.airy_ai(torch.ones(3))
        """,
        """
            import mindspore
            import torch  # msmagic: kept for the PyTorch calls flagged below
            y = torch.special.airy_ai(mindspore.ops.ones(3))  # msmagic: GEN001 torch.special.airy_ai has no known MindSpore mapping; left as PyTorch
        """,
        edits={"FUN009", "IMP001"},
        findings={"GEN001"},
    )


def test_method_on_unknown_receiver():
    assert_ports(
        """
            import torch
            def spread(t):
                return t.std()
        """,
        """
            import mindspore
            def spread(t):
                return t.std()  # msmagic: GEN002 cannot tell whether the receiver of .std() is a tensor; left unchanged
        """,
        edits={"IMP001"},
        findings={"GEN002"},
    )


def test_star_kwargs_not_checked():
    assert_ports(
        """
            import torch
            import torch.nn as nn
            cfg = dict(in_features=4, out_features=2, bias=False)
            layer = nn.Linear(**cfg)
        """,
        """
            import mindspore
            import mindspore.nn as nn
            cfg = dict(in_features=4, out_features=2, bias=False)
            layer = nn.Dense(**cfg)  # msmagic: GEN003 *args/**kwargs not checked
        """,
        edits={"IMP001", "LAY001"},
        findings={"GEN003"},
    )


def test_unverified_tensor_method():
    assert_ports(
        """
            import torch
            x = torch.ones(3)
            y = x.frobnicate()
        """,
        """
            import mindspore
            x = mindspore.ops.ones(3)
            y = x.frobnicate()  # msmagic: API005 Tensor.frobnicate not verified for MindSpore
        """,
        edits={"FUN009", "IMP001"},
        findings={"API005"},
    )


def test_unverified_keyword():
    assert_ports(
        """
            import torch
            x = torch.arange(6.0).reshape(2, 3)
            y = torch.logaddexp(x, x, out=None)
        """,
        """
            import mindspore
            x = mindspore.ops.arange(6.0).reshape(2, 3)
            y = mindspore.ops.logaddexp(x, x)  # msmagic: API006 torch.logaddexp: keyword out= not verified
        """,
        edits={"API001", "API008", "FUN001", "IMP001"},
        findings={"API006"},
    )


def test_api_that_differs_in_mindspore():
    assert_ports(
        """
            import torch
            x = torch.tensor([[1.0, 3.0], [2.0, 0.5]])
            m = x.diag()
        """,
        """
            import mindspore
            x = mindspore.Tensor([[1.0, 3.0], [2.0, 0.5]])
            m = x.diag()  # msmagic: API007 Tensor.diag not ported: differs in MindSpore
        """,
        edits={"DAT001", "IMP001"},
        findings={"API007"},
    )


def test_einsum_has_no_cpu_kernel():
    assert_ports(
        """
            import torch
            a = torch.ones(2, 3)
            b = torch.einsum('ij,kj->ik', a, a)
        """,
        """
            import mindspore
            import torch  # msmagic: kept for the PyTorch calls flagged below
            a = mindspore.ops.ones((2, 3))
            b = torch.einsum('ij,kj->ik', a, a)  # msmagic: IDX001 einsum has no CPU kernel
        """,
        edits={"FUN009", "IMP001"},
        findings={"IDX001"},
    )


def test_where_with_one_argument():
    assert_ports(
        """
            import torch
            x = torch.ones(3)
            idx = torch.where(x > 0)
        """,
        """
            import mindspore
            import torch  # msmagic: kept for the PyTorch calls flagged below
            x = mindspore.ops.ones(3)
            idx = torch.where(x > 0)  # msmagic: FUN001 where(cond) not ported
        """,
        edits={"FUN009", "IMP001"},
        findings={"FUN001"},
    )


def test_relu_inplace_true():
    assert_ports(
        """
            import torch
            import torch.nn.functional as F
            y = F.relu(x, inplace=True)
        """,
        """
            import mindspore
            import mindspore.ops as F
            y = F.relu(x)  # msmagic: FUN001 inplace= has no MindSpore equivalent, removed
        """,
        edits={"FUN001", "IMP001"},
        findings={"FUN001"},
    )


def test_factory_requires_grad():
    """At the top level a later cell may differentiate z: dropped (GRD001); in a function
    with no backward nothing will, and the tensor does not track gradients: flagged."""
    assert_ports(
        """
            import torch
            z = torch.zeros(3, requires_grad=True)
            def make():
                return torch.zeros(3, requires_grad=True)
        """,
        """
            import mindspore
            z = mindspore.ops.zeros(3)
            def make():
                return mindspore.ops.zeros(3)  # msmagic: FUN009 requires_grad= has no MindSpore equivalent, removed
        """,
        edits={"FUN009", "IMP001", "GRD001"},
        findings={"FUN009"},
    )


def test_linspace_dtype():
    assert_ports(
        """
            import torch
            a = torch.linspace(0, 1, 5, dtype=torch.float64)
        """,
        """
            import mindspore
            a = mindspore.ops.linspace(0, 1, 5)  # msmagic: FUN001 dtype= has no MindSpore equivalent, removed
        """,
        edits={"DAT005", "FUN001", "IMP001"},
        findings={"FUN001"},
    )


def test_softmax_without_dim_on_an_expression():
    assert_ports(
        """
            import torch
            import torch.nn.functional as F
            p = F.softmax(x * 2)
        """,
        """
            import mindspore
            import mindspore.ops as F

            <definition softmax_in_float64>

            p = softmax_in_float64(x * 2)  # msmagic: FUN005 softmax without dim: axis differs
        """,
        edits={"FUN005", "FUN020", "IMP001"},
        findings={"FUN005"},
    )


def test_softmax_layer_without_dim():
    assert_ports(
        """
            import torch.nn as nn
            sm = nn.Softmax()
        """,
        """
            import mindspore.nn as nn
            import mindspore

            <definition softmax_in_float64>

            <definition SoftmaxInFloat64>

            sm = SoftmaxInFloat64()  # msmagic: FUN005 no dim: axis differs
        """,
        edits={"FUN005", "FUN020", "IMP001"},
        findings={"FUN005"},
    )


def test_add_with_alpha():
    assert_ports(
        """
            import torch
            x = torch.ones(3)
            y = torch.add(x, x, alpha=2)
        """,
        """
            import mindspore
            x = mindspore.ops.ones(3)
            y = mindspore.ops.add(x, x)  # msmagic: FUN001 alpha= has no MindSpore equivalent, removed
        """,
        edits={"FUN001", "FUN009", "IMP001"},
        findings={"FUN001"},
    )


def test_mse_loss_weight():
    assert_ports(
        """
            import torch
            import torch.nn.functional as F
            a = torch.ones(2)
            loss = F.mse_loss(a, a, weight=a)
        """,
        """
            import mindspore
            import mindspore.ops as F
            a = mindspore.ops.ones(2)
            loss = F.mse_loss(a, a)  # msmagic: FUN007 weight= has no MindSpore equivalent, removed
        """,
        edits={"FUN007", "FUN009", "IMP001"},
        findings={"FUN007"},
    )


def test_cross_entropy_size_average():
    assert_ports(
        """
            import torch
            import torch.nn.functional as F
            loss = F.cross_entropy(logits, target, None, None, 1)
            summed = F.cross_entropy(logits, target, None, False, 1)
            flagged = F.cross_entropy(logits, target, size_average=mean)
        """,
        """
            import mindspore
            import mindspore.ops as F
            loss = F.cross_entropy(logits, target, None, 1)
            summed = F.cross_entropy(logits, target, None, reduction='sum', ignore_index=1)
            flagged = F.cross_entropy(logits, target)  # msmagic: FUN006 size_average= has no MindSpore equivalent, removed
        """,
        edits={"FUN006", "IMP001"},
        findings={"FUN006"},
    )


def test_loss_layer_size_average():
    assert_ports(
        """
            import torch
            import torch.nn as nn
            c = nn.MSELoss(size_average=False)
            d = nn.NLLLoss(None, True, -100, False)
        """,
        """
            import mindspore
            import mindspore.nn as nn
            c = nn.MSELoss(reduction='sum')
            d = nn.NLLLoss(None, reduction='none', ignore_index=-100)
        """,
        edits={"FUN014", "IMP001"},
    )


def test_loss_layer_reduction_not_a_literal():
    assert_ports(
        """
            import torch
            import torch.nn as nn
            r = 'sum'
            c = nn.BCELoss(reduction=r)
        """,
        """
            import mindspore
            import mindspore.nn as nn
            import torch  # msmagic: kept for the PyTorch calls flagged below
            r = 'sum'
            c = torch.nn.BCELoss(reduction=r)  # msmagic: FUN014 reduction not a literal
        """,
        edits={"IMP001"},
        findings={"FUN014"},
    )


def test_full_dtype_not_inferable():
    assert_ports(
        """
            import torch
            v = 0.5
            y = torch.full((2,), v)
        """,
        """
            import mindspore
            v = 0.5
            y = mindspore.ops.full((2,), v)  # msmagic: FUN010 dtype not inferable: add dtype=
        """,
        edits={"FUN010", "IMP001"},
        findings={"FUN010"},
    )


def test_random_generator_keyword():
    assert_ports(
        """
            import torch
            gen = None
            a = torch.randn(2, generator=gen)
        """,
        """
            import mindspore
            gen = None
            a = mindspore.ops.randn(2)  # msmagic: FUN011 generator= has no MindSpore equivalent, removed
        """,
        edits={"FUN011", "IMP001"},
        findings={"FUN011"},
    )


def test_values_on_a_named_max_result():
    assert_ports(
        """
            import torch
            x = torch.ones(2, 3)
            r = torch.max(x, 1)
            v = r.values
        """,
        """
            import mindspore
            x = mindspore.ops.ones((2, 3))
            r = mindspore.ops.max(x, 1)
            v = r.values  # msmagic: FUN004 .values may need [0]
        """,
        edits={"FUN004", "FUN009", "IMP001"},
        findings={"FUN004"},
    )


def test_bce_weight_on_an_expression():
    assert_ports(
        """
            import torch
            import torch.nn.functional as F
            p = torch.ones(3, 2)
            y = torch.ones(3, 2)
            w = torch.ones(2)
            loss = F.binary_cross_entropy(p * 1, y, weight=w)
        """,
        """
            import mindspore
            import mindspore.ops as F
            p = mindspore.ops.ones((3, 2))
            y = mindspore.ops.ones((3, 2))
            w = mindspore.ops.ones(2)
            loss = F.binary_cross_entropy(p * 1, y, weight=w, reduction="none").mean()  # msmagic: FUN008 weight must match input shape
        """,
        edits={"FUN008", "FUN009", "IMP001"},
        findings={"FUN008"},
    )


def test_conv_padding_mode_reflect():
    assert_ports(
        """
            import torch.nn as nn
            conv = nn.Conv2d(4, 6, 3, padding=1, padding_mode='reflect')
        """,
        """
            import mindspore.nn as nn
            conv = nn.Conv2d(4, 6, 3, pad_mode='pad', padding=1, has_bias=True)  # msmagic: LAY002 padding_mode= has no MindSpore equivalent, removed
        """,
        edits={"IMP001", "LAY002"},
        findings={"LAY002"},
    )


def test_conv_padding_not_a_literal():
    assert_ports(
        """
            import torch.nn as nn
            p = 1
            conv = nn.Conv2d(4, 6, 3, padding=p)
        """,
        """
            import mindspore.nn as nn
            p = 1
            conv = nn.Conv2d(4, 6, 3, pad_mode='pad', padding=p, has_bias=True)  # msmagic: LAY002 padding= not a literal: check pad_mode/padding
        """,
        edits={"IMP001", "LAY002"},
        findings={"LAY002"},
    )


def test_conv_transpose_output_padding_beyond_padding():
    assert_ports(
        """
            import torch.nn as nn
            up = nn.ConvTranspose2d(4, 6, 3, stride=2, output_padding=1)
        """,
        """
            import mindspore.nn as nn
            up = nn.Conv2dTranspose(4, 6, 3, stride=2, has_bias=True, pad_mode='valid')  # msmagic: LAY003 output_padding > padding cannot be ported
        """,
        edits={"IMP001", "LAY003"},
        findings={"LAY003"},
    )


def test_conv1d_weight_shape_differs():
    assert_ports(
        """
            import torch.nn as nn
            conv = nn.Conv1d(4, 6, 3)
            w = conv.weight
        """,
        """
            import mindspore.nn as nn
            conv = nn.Conv1d(4, 6, 3, has_bias=True, pad_mode='valid')
            w = conv.weight  # msmagic: LAY002 Conv1d weight is (out, in, 1, k) in MindSpore
        """,
        edits={"IMP001", "LAY002"},
        findings={"LAY002"},
    )


def test_pool_stride_from_a_computed_kernel():
    assert_ports(
        """
            import torch.nn as nn
            k = 2.0
            pool = nn.MaxPool2d(int(k))
        """,
        """
            import mindspore.nn as nn
            k = 2.0
            pool = nn.MaxPool2d(int(k), stride=int(k))  # msmagic: LAY004 kernel_size expression repeated as stride
        """,
        edits={"IMP001", "LAY004"},
        findings={"LAY004"},
    )


def test_functional_avg_pool_padding_not_a_literal():
    assert_ports(
        """
            import torch
            import torch.nn.functional as F
            p = (1, 0)
            y = F.avg_pool2d(x, 3, padding=p)
        """,
        """
            import mindspore
            import mindspore.ops as F
            p = (1, 0)
            y = F.avg_pool2d(x, 3, stride=3, padding=p)  # msmagic: LAY006 padding= not a literal: check its layout
        """,
        edits={"IMP001", "LAY006"},
        findings={"LAY006"},
    )


def test_new_tensor_requires_grad():
    assert_ports(
        """
            import torch
            x = torch.zeros(2)
            w = x.new_tensor([1.0], requires_grad=True)
        """,
        """
            import mindspore
            x = mindspore.ops.zeros(2)
            w = x.new_tensor([1.0], requires_grad=True)  # msmagic: TNS003 new_tensor requires_grad= not ported
        """,
        edits={"FUN009", "IMP001"},
        findings={"TNS003"},
    )


def test_zero_on_an_element():
    assert_ports(
        """
            import torch
            x = torch.ones(2, 3)
            x[0].zero_()
        """,
        """
            import mindspore
            x = mindspore.ops.ones((2, 3))
            x[0].zero_()  # msmagic: TNS004 Tensor.zero_ on x[0] not ported
        """,
        edits={"FUN009", "IMP001"},
        findings={"TNS004"},
    )


def test_type_without_dtype():
    assert_ports(
        """
            import torch
            x = torch.tensor([1.7, -2.2])
            name = x.type()
            y = x.type('torch.IntTensor')
        """,
        """
            import mindspore
            x = mindspore.Tensor([1.7, -2.2])
            name = x.type()  # msmagic: TNS005 Tensor.type() name differs in MindSpore
            y = x.type('torch.IntTensor')  # msmagic: TNS005 Tensor.type(...) not ported
        """,
        edits={"DAT001", "IMP001"},
        findings={"TNS005"},
    )


def test_requires_grad_and_get_device():
    assert_ports(
        """
            import torch
            def make():
                w = torch.ones(3).requires_grad_()
                dev = w.get_device()
        """,
        """
            import mindspore
            def make():
                w = mindspore.ops.ones(3).requires_grad_()  # msmagic: TNS006 Tensor.requires_grad_ not ported
                dev = w.get_device()  # msmagic: TNS006 Tensor.get_device not ported
        """,
        edits={"FUN009", "IMP001"},
        findings={"TNS006"},
    )


def test_second_backward_without_zeroing():
    assert_ports(
        """
            import torch
            x = torch.tensor(1.0, requires_grad=True)
            z = x * 3
            z.backward(retain_graph=True)
            z.backward()
        """,
        """
            import mindspore
            x = mindspore.Tensor(1.0)
            z = x * 3
            def _z_fn(x):
                z = x * 3
                return z
            _x_grad = mindspore.grad(_z_fn, grad_position=0)(x)
            z.backward()  # msmagic: GRD006 x.grad accumulates; not ported
        """,
        edits={"DAT001", "GRD001", "GRD003", "IMP001"},
        findings={"GRD006"},
    )


def test_backward_accumulating_in_a_loop():
    assert_ports(
        """
            import torch
            w = torch.tensor(1.0, requires_grad=True)
            for i in range(3):
                loss = w * i
                loss.backward()
        """,
        """
            import mindspore
            w = mindspore.Tensor(1.0)
            for i in range(3):
                loss = w * i
                loss.backward()  # msmagic: GRD006 w.grad accumulates over iterations; not ported
        """,
        edits={"DAT001", "IMP001"},
        findings={"GRD006"},  # the autograd rules own it: no TRN004 on the loop as well
    )


def test_backward_of_a_reassigned_leaf():
    assert_ports(
        """
            import torch
            x = torch.tensor(1.0, requires_grad=True)
            x = x * 2
            z = x ** 2
            z.backward()
        """,
        """
            import mindspore
            x = mindspore.Tensor(1.0)
            x = x * 2
            z = x ** 2
            z.backward()  # msmagic: GRD006 z.backward() not ported
        """,
        edits={"DAT001", "IMP001"},
        findings={"GRD006"},
    )


def test_autograd_grad_allow_unused():
    assert_ports(
        """
            import torch
            x = torch.tensor(1.0, requires_grad=True)
            y = torch.tensor(1.0, requires_grad=True)
            z = x * 2
            g = torch.autograd.grad(z, (x, y), allow_unused=True)
        """,
        """
            import mindspore
            import torch  # msmagic: kept for the PyTorch calls flagged below
            x = mindspore.Tensor(1.0)
            y = mindspore.Tensor(1.0)
            z = x * 2
            g = torch.autograd.grad(z, (x, y), allow_unused=True)  # msmagic: GRD006 torch.autograd.grad not ported
        """,
        edits={"DAT001", "IMP001"},
        findings={"GRD006"},
    )


def test_custom_function_with_ctx_attribute():
    assert_ports(
        """
            import torch
            class Scale(torch.autograd.Function):
                @staticmethod
                def forward(ctx, x, k):
                    ctx.k = k
                    return x * k

                @staticmethod
                def backward(ctx, g):
                    return g * ctx.k, None
        """,
        """
            import mindspore
            import torch  # msmagic: kept for the PyTorch calls flagged below
            class Scale(torch.autograd.Function):  # msmagic: FNC002 custom Function not ported: ctx.k has no bprop counterpart
                @staticmethod
                def forward(ctx, x, k):
                    ctx.k = k
                    return x * k

                @staticmethod
                def backward(ctx, g):
                    return g * ctx.k, None
        """,
        edits={"IMP001"},
        findings={"FNC002"},
    )


def test_device_from_a_formatted_string():
    """A device name held by a variable is mapped when the code runs (test_device.py); a
    formatted one (``f"cuda:{rank}"``) carries an index that would be lost: flagged."""
    assert_ports(
        """
            import torch
            rank = 1
            a = torch.device(f"cuda:{rank}")
        """,
        """
            import mindspore
            import torch  # msmagic: kept for the PyTorch calls flagged below
            rank = 1
            a = torch.device(f"cuda:{rank}")  # msmagic: DEV001 device not ported; set mindspore.set_device by hand
        """,
        edits={"IMP001"},
        findings={"DEV001"},
    )


def test_lbfgs_optimizer():
    assert_ports(
        """
            import torch
            import torch.nn as nn
            model = nn.Linear(4, 2)
            optimizer = torch.optim.LBFGS(model.parameters(), lr=1, max_iter=20)
        """,
        """
            import mindspore
            import mindspore.nn as nn
            import torch  # msmagic: kept for the PyTorch calls flagged below
            model = nn.Dense(4, 2)
            optimizer = torch.optim.LBFGS(model.get_parameters(), lr=1, max_iter=20)  # msmagic: OPT011 LBFGS has no MindSpore optimizer; see rule OPT011
        """,
        edits={"CEL004", "IMP001", "LAY001"},
        findings={"OPT011"},
    )


def test_init_on_a_call_result():
    assert_ports(
        """
            import torch
            import torch.nn as nn
            w = nn.init.xavier_uniform_(torch.empty(3, 5))
        """,
        """
            import mindspore
            import mindspore.nn as nn
            import torch  # msmagic: kept for the PyTorch calls flagged below
            w = torch.nn.init.xavier_uniform_(mindspore.ops.zeros((3, 5)))  # msmagic: INI006 target is not a plain name/attribute; left as PyTorch
        """,
        edits={"FUN009", "IMP001"},
        findings={"INI006"},
    )


def test_one_cycle_lr():
    assert_ports(
        """
            import torch
            import torch.nn as nn
            model = nn.Linear(2, 1)
            optimizer = torch.optim.Adam(model.parameters(), lr=0.1)
            scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=0.1, total_steps=10)
        """,
        """
            import mindspore
            import mindspore.nn as nn
            import torch  # msmagic: kept for the PyTorch calls flagged below
            model = nn.Dense(2, 1)
            optimizer = mindspore.experimental.optim.AdamW(model.trainable_params(), lr=0.1, weight_decay=0.0)
            scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=0.1, total_steps=10)  # msmagic: SCH011 OneCycleLR not ported; see rule SCH011
        """,
        edits={"IMP001", "LAY001", "OPT002", "OPT003"},
        findings={"SCH011"},
    )


def test_param_group_unknown_key():
    assert_ports(
        """
            import torch
            import torch.nn as nn
            model = nn.Linear(2, 1)
            optimizer = torch.optim.SGD([{'params': model.parameters(), 'momentum': 0.5}], lr=0.1)
        """,
        """
            import mindspore
            import mindspore.nn as nn
            model = nn.Dense(2, 1)
            optimizer = mindspore.nn.SGD([{'params': model.trainable_params()}], learning_rate=0.1)  # msmagic: OPT006 group key 'momentum' has no MindSpore equivalent, removed
        """,
        edits={"IMP001", "LAY001", "OPT001", "OPT002", "OPT006"},
        findings={"OPT006"},
    )


def test_layernorm_list_shape():
    assert_ports(
        """
            import torch.nn as nn
            ln = nn.LayerNorm([3, 4], eps=1e-6)
        """,
        """
            import mindspore.nn as nn
            import torch  # msmagic: kept for the PyTorch calls flagged below
            ln = torch.nn.LayerNorm([3, 4], eps=1e-6)  # msmagic: NRM001 LayerNorm shape must be one literal dim
        """,
        edits={"IMP001"},
        findings={"NRM001"},
    )


def test_lp_pool_fractional_norm():
    assert_ports(
        """
            import torch.nn as nn
            pool = nn.LPPool2d(1.5, 2)
        """,
        """
            import mindspore.nn as nn
            pool = nn.LPPool2d(1.5, 2)  # msmagic: LYR008 LPPool with a non-integer norm_type
        """,
        edits={"IMP001", "LYR008"},
        findings={"LYR008"},
    )


def test_transformer_custom_activation():
    assert_ports(
        """
            import torch
            import torch.nn as nn
            layer = nn.TransformerEncoderLayer(8, 2, activation=torch.tanh)
        """,
        """
            import mindspore
            import mindspore.nn as nn

            def tanh_via_sigmoid(input):
                \"\"\"tanh(x) = 2 * sigmoid(2x) - 1: MindSpore's CPU tanh is up to 1e-4 off.\"\"\"
                return 2 * mindspore.ops.sigmoid(2 * input) - 1

            layer = nn.TransformerEncoderLayer(8, 2, activation=tanh_via_sigmoid)  # msmagic: ATN002 activation must be 'relu' or 'gelu' in MindSpore
        """,
        edits={"ATN002", "FUN018", "IMP001"},
        findings={"ATN002"},
    )


def test_pad_reflect_3d():
    assert_ports(
        """
            import torch
            import torch.nn.functional as F
            x = torch.ones(1, 1, 2, 3, 4)
            y = F.pad(x, (1, 1, 1, 1, 1, 1), mode='reflect')
        """,
        """
            import mindspore
            import mindspore.ops as F
            x = mindspore.ops.ones((1, 1, 2, 3, 4))
            y = F.pad(x, (1, 1, 1, 1, 1, 1), mode='reflect')  # msmagic: PAD001 3-axis reflect padding unsupported
        """,
        edits={"FUN009", "IMP001", "PAD001"},
        findings={"PAD001"},
    )


def test_call_of_a_function_of_an_earlier_cell_whose_port_is_flagged():
    """The failing statement is the call, in a later cell: it is flagged there too
    (GEN004), directly, through another function, in a loop and under ``__main__``; a
    call of a function without findings is not, and the port of the output is unchanged."""
    from msmagic.engine.session import PortSession

    session = PortSession()
    first = assert_ports(
        """
            import torch
            net = torch.nn.Linear(1, 2)
            def save():
                torch.save(net.state_dict(), 'net.pkl', pickle_protocol=2)  # an option
            def run_all():
                save()
            def clean():
                return 1
        """,
        """
            import mindspore
            import torch  # msmagic: kept for the PyTorch calls flagged below
            net = mindspore.nn.Dense(1, 2)
            def save():
                torch.save(net.parameters_dict(), 'net.pkl', pickle_protocol=2)  # an option  # msmagic: CKP001 torch.save arguments not ported
            def run_all():
                save()
            def clean():
                return 1
        """,
        edits={"IMP001", "LAY001", "CEL006"},
        findings={"CKP001"},
        session=session,
    )
    later = assert_ports(
        """
            save()
            for i in range(2):
                run_all()
            if __name__ == "__main__":
                x = clean()
        """,
        """
            save()  # msmagic: GEN004 save() runs flagged code (CKP001 save)
            for i in range(2):  # msmagic: GEN004 run_all() -> save() runs flagged code (CKP001 save)
                run_all()
            if __name__ == "__main__":
                x = clean()
        """,
        edits=set(),
        findings={"GEN004"},
        session=session,
    )
    assert [(f.line, f.column, f.api, f.statement) for f in later.unsupported] == [
        (1, 1, "save()", 0), (3, 5, "run_all()", 1)]
    assert first.unsupported[0].line == 4


def test_function_defined_and_called_in_one_cell_and_fixed_later():
    """A call in the defining cell is flagged too; once a later cell defines the
    function again without findings, its calls are no longer flagged."""
    from msmagic.engine.session import PortSession

    session = PortSession()
    assert_ports(
        """
            import torch
            def show(x):
                return torch.special.airy_ai(x)
            y = show(torch.ones(2))
        """,
        """
            import mindspore
            import torch  # msmagic: kept for the PyTorch calls flagged below
            def show(x):
                return torch.special.airy_ai(x)  # msmagic: GEN001 torch.special.airy_ai has no known MindSpore mapping; left as PyTorch
            y = show(mindspore.ops.ones(2))  # msmagic: GEN004 show() runs flagged code (GEN001 airy_ai)
        """,
        edits=None,
        findings={"GEN001", "GEN004"},
        session=session,
    )
    assert_ports(
        """
            def show(x):
                return x
        """,
        """
            def show(x):
                return x
        """,
        edits=set(),
        session=session,
    )
    assert_ports("z = show(1)\n", "z = show(1)\n", edits=set(), session=session, dedent_text=False)
