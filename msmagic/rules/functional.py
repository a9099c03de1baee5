"""Functional ops, tensor factories, reductions, activations and losses (functions,
tensor methods and their nn module forms)."""

from typing import Optional

import libcst as cst

from msmagic.engine.context import bind_arguments
from msmagic.engine.spec import TENSOR, api, member, method
from msmagic.rules._util import pack_positional, truthy_literal
from msmagic.rules.api_table import _rebind
from msmagic.rules.autograd import differentiated_leaf, drop_requires_grad
from msmagic.rules.hand_written_layers import made_parameter
from msmagic.rules.registry import register

GROUP = "Functional ops"
REF = "r2.4.10/api_mapping/pytorch_api_mapping.md"
F = "torch.nn.functional"

register(
    "FUN001",
    "Functions with the same parameters move to mindspore.ops",
    group=GROUP,
    why="""
        These functions have a MindSpore counterpart in ``mindspore.ops`` with the same
        parameter names, order and defaults on 2.10 (``sum`` and ``argmax`` even accept
        ``dim``/``keepdim``; older MindSpore versions needed ``axis``/``keepdims``), so only
        the module changes. Watch integer inputs: PyTorch promotes them to float for
        ``exp``/``log``/``sigmoid``/``tanh`` while the MindSpore CPU kernels reject them,
        and MindSpore's elementwise ops do not propagate NaN the way PyTorch does.
        ``torch.where(cond)`` with one argument (the indices form) is flagged: MindSpore
        2.10 has no CPU kernel for it. ``inplace=True`` on ``relu`` is flagged too (no CPU
        in-place kernel); the result is still computed, the input is not overwritten.
    """,
    seed="seeds/002 API Comparison › functional APIs",
    reference=REF,
    installed_note="""
        Verified on 2.10: ops.sum/ops.argmax accept dim=/keepdim=; ops.arange(5) is int64
        and ops.arange(0., 1., .1) float32 like torch; ops.sum of int32/bool gives int64 like
        torch; ops.where(cond) alone raises; ops.relu(x, inplace=True) has no CPU kernel.
    """,
    example="""
        import torch
        import torch.nn.functional as F
        x = torch.linspace(-2, 2, 12).reshape(3, 4)
        y = torch.matmul(x, x.T)
        s = torch.sum(x, dim=1, keepdim=True)
        c = torch.clamp(x, min=0)
        w = torch.where(x > 0, x, torch.zeros_like(x))
        r = F.relu(x)
        i = torch.argmax(x, dim=1)
    """,
)

register(
    "FUN002",
    "cat and stack take axis=, not dim=",
    group=GROUP,
    why="""
        ``ops.cat`` and ``ops.stack`` join tensors like PyTorch's, but their axis parameter
        is called ``axis`` and ``dim=`` raises. A positional axis needs no change. Both
        accept a list or a tuple of tensors. ``torch.roll``/``Tensor.roll`` move to
        ``mindspore.numpy.roll(a, shift, axis)``: ``ops.roll`` and ``Tensor.roll`` exist but
        the installed MindSpore has no CPU kernel for them ("The kernel Roll unregistered").
    """,
    seed="seeds/002 API Comparison › functional APIs",
    reference="r2.4.10/api_mapping/pytorch_diff/cat.md",
    installed_note="Verified on 2.10: ops.cat(xs, dim=1) and ops.stack(xs, dim=1) raise TypeError.",
    example="""
        import torch
        a = torch.ones(2, 3)
        b = torch.zeros(2, 3)
        c = torch.cat([a, b], dim=1)
        d = torch.stack((a, b), dim=0)
    """,
)

register(
    "FUN003",
    "torch.mean's dim/keepdim become axis/keep_dims",
    group=GROUP,
    why="""
        ``mindspore.ops.mean(x, axis=None, keep_dims=False)`` computes the same mean but
        rejects PyTorch's ``dim``/``keepdim`` keywords, so they are renamed; positional
        calls are unchanged. ``Tensor.mean(dim=..., keepdim=...)`` is accepted as is.
        Note that PyTorch refuses the mean of an integer tensor while MindSpore returns an
        integer (truncated) mean.
    """,
    seed="seeds/002 API Comparison › functional APIs",
    reference=f"{REF} (torch.mean: parameter names differ)",
    installed_note="Verified on 2.10: ops.mean(x, dim=1) raises TypeError; Tensor.mean(dim=1, keepdim=True) works.",
    example="""
        import torch
        x = torch.arange(24.).reshape(2, 3, 4)
        m = torch.mean(x, dim=1, keepdim=True)
        n = torch.mean(x, (0, 2))
    """,
)

register(
    "FUN004",
    "max/min: whole-tensor, per-axis and elementwise forms",
    group=GROUP,
    why="""
        ``torch.max`` has three forms. ``torch.max(x)`` returns one tensor, but
        ``ops.max(x)`` returns a (value, index) pair, so the port takes ``[0]``.
        ``torch.max(x, dim, keepdim)`` returns a (values, indices) named tuple; ``ops.max``
        returns a plain tuple with ``axis``/``keepdims`` keywords, so unpacking works and
        ``.values``/``.indices`` become ``[0]``/``[1]``. ``torch.max(x, other)`` is the
        elementwise maximum, ``ops.maximum``. The same holds for ``min``. The tensor
        methods ``x.max()``/``x.max(dim)`` match PyTorch as they are; ``x.max(other)``
        becomes ``ops.maximum``. When the second argument could be either an axis or a
        tensor, the call is ported as an axis and flagged. MindSpore's max/maximum skip
        NaN where PyTorch propagates it.
    """,
    seed="seeds/002 API Comparison › functional APIs",
    reference="r2.4.10/api_mapping/pytorch_diff/max.md; pytorch_diff/tensor_max.md",
    installed_note="""
        Verified on 2.10: ops.max(x) with no axis returns a tuple (value, index), not a
        tensor; ops.max(x, dim=1) raises; Tensor.max(dim=1) returns (values, indices);
        Tensor.max(other) raises.
    """,
    example="""
        import torch
        x = torch.tensor([[1., 5., 3.], [4., 2., 6.]])
        top = torch.max(x)
        v, i = torch.max(x, dim=1)
        lo = torch.min(x, 0, keepdim=True).values
        both = torch.max(x, torch.full((2, 3), 3.))
    """,
)

register(
    "FUN005",
    "softmax/log_softmax: dim becomes axis; the implicit axis is spelled out",
    group=GROUP,
    why="""
        MindSpore names the softmax axis ``axis`` (``ops.softmax``, ``ops.log_softmax``,
        ``Tensor.softmax``, ``nn.Softmax``, ``nn.LogSoftmax``) and rejects ``dim=``. When
        PyTorch's ``dim`` is left out, PyTorch picks it from the input's rank (axis 0 for
        0-, 1- and 3-D inputs, else 1) while MindSpore uses the last axis; the port writes
        PyTorch's choice out as an expression on the input, and flags the call when the
        input is not a plain name (module forms always: their input is not known there).
        ``ops.log_softmax`` has no ``dtype`` parameter (flagged). PyTorch's internal
        ``_stacklevel`` argument is dropped.
    """,
    seed="seeds/002 API Comparison › functional APIs",
    reference="r2.4.10/api_mapping/pytorch_diff/softmax.md; log_softmax.md; nn_Softmax.md",
    installed_note="Verified on 2.10: ops.softmax(x, dim=1), ops.log_softmax(x, dim=1) and Tensor.softmax(dim=1) raise TypeError.",
    example="""
        import torch
        import torch.nn.functional as F
        x = torch.arange(24.).reshape(2, 3, 4) / 10
        p = F.softmax(x, dim=1)
        q = F.log_softmax(x, -1)
        r = F.softmax(x)
        s = x.softmax(dim=0)
    """,
)

register(
    "FUN006",
    "cross_entropy and nll_loss keep their PyTorch meaning",
    group=GROUP,
    why="""
        ``ops.cross_entropy`` and ``ops.nll_loss`` take the same ``weight``,
        ``ignore_index`` (default -100), ``reduction`` and ``label_smoothing`` as PyTorch
        and give the same values for int64 class indices, for class-probability targets
        and for N-D inputs (classes on axis 1). The deprecated ``size_average``/``reduce``
        arguments become the ``reduction`` they stand for
        (PyTorch's own rule: ``size_average=False`` -> ``"sum"``, ``reduce=False`` ->
        ``"none"``); when one is not a literal, or ``reduction=`` is given too, they are
        flagged. They sit between ``weight`` and ``ignore_index`` in
        PyTorch's order, so later positional arguments become keywords.
    """,
    seed="seeds/002 API Comparison › functional APIs",
    reference="r2.4.10/api_mapping/pytorch_diff/CrossEntropyLoss.md",
    installed_note="Verified on 2.10: ops.cross_entropy accepts int64 targets (unlike the nn.CrossEntropyLoss Cell).",
    example="""
        import torch
        import torch.nn.functional as F
        logits = torch.tensor([[2.0, 0.5, -1.0], [0.1, 0.2, 3.0], [1.0, 1.0, 1.0]])
        target = torch.tensor([0, 2, -100])
        loss = F.cross_entropy(logits, target, label_smoothing=0.1)
        nll = F.nll_loss(F.log_softmax(logits, dim=1), target, reduction="sum")
    """,
)

register(
    "FUN007",
    "mse_loss and l1_loss: reduction kept, weight flagged",
    group=GROUP,
    why="""
        ``ops.mse_loss`` and ``ops.l1_loss`` compute the same losses with the same
        ``reduction`` values. PyTorch 2.13 added a ``weight`` argument that MindSpore does
        not have: it is flagged and removed, so multiply the unreduced loss by the weight by
        hand. The deprecated ``size_average``/``reduce`` become the ``reduction`` they stand for
        (PyTorch's own rule: ``size_average=False`` -> ``"sum"``, ``reduce=False`` ->
        ``"none"``); when one is not a literal, or ``reduction=`` is given too, they are
        flagged.
    """,
    seed="seeds/002 API Comparison › functional APIs",
    reference=REF,
    example="""
        import torch
        import torch.nn.functional as F
        a = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
        b = torch.tensor([[1.5, 1.0], [2.0, 5.0]])
        mse = F.mse_loss(a, b)
        l1 = F.l1_loss(a, b, reduction="sum")
    """,
)

register(
    "FUN008",
    "binary_cross_entropy: weight is broadcast to the input's shape",
    group=GROUP,
    why="""
        ``ops.binary_cross_entropy(logits, labels, weight, reduction)`` takes
        probabilities like PyTorch's, but its ``weight`` must already have the input's
        full shape: on 2.10 a broadcastable weight (one value per column, say) produces
        garbage values instead of an error. The port wraps the weight in
        ``ops.broadcast_to(weight, input.shape)`` when the input is a plain name, and
        flags the call otherwise. On 2.10 a ``mean`` or ``sum`` over a single element
        comes out doubled (a batch of one), while the ``reduction="none"`` values are
        right, so the port asks for ``reduction="none"`` and reduces with ``.mean()`` /
        ``.sum()`` itself. ``binary_cross_entropy_with_logits`` broadcasts correctly and keeps its
        ``weight``/``pos_weight``; MindSpore orders its parameters ``weight, pos_weight,
        reduction``, so positional ones become keywords. Its ``mean`` has a wrong gradient on
        2.10 once the batch size changes (the backward keeps the first batch's 1/N: a
        smaller last batch trains with a scaled gradient), so the port averages the
        ``reduction="none"`` values itself there too.
    """,
    seed="seeds/002 API Comparison › functional APIs",
    reference="r2.4.10/api_mapping/pytorch_diff/BCEWithLogitsLoss.md",
    installed_note="""
        Verified on 2.10: ops.binary_cross_entropy with a (4,) weight on (5, 4) inputs returns
        values around -8e35; on a (1,) input its mean and sum are twice PyTorch's (and
        nn.BCELoss's too); reduction="none" is right. binary_cross_entropy_with_logits
        (and nn.BCEWithLogitsLoss) with reduction="mean" under value_and_grad: batches of 4,
        then 2, then 8 give the right loss but weight gradients off by up to 0.32 from the
        second batch on; the mean of reduction="none" and reduction="sum" are right.
    """,
    example="""
        import torch
        import torch.nn.functional as F
        p = torch.tensor([[0.9, 0.2], [0.3, 0.6], [0.5, 0.5]])
        y = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0]])
        w = torch.tensor([1.0, 2.0])
        bce = F.binary_cross_entropy(p, y, weight=w)
        bcel = F.binary_cross_entropy_with_logits(p, y, pos_weight=w)
    """,
)

register(
    "FUN009",
    "zeros/ones/empty take the shape as one tuple",
    group=GROUP,
    why="""
        PyTorch accepts a shape spread out (``torch.zeros(2, 3)``) or as one sequence.
        ``ops.zeros(size, dtype)`` and ``ops.ones(shape, dtype)`` take one shape: the
        second number is read as the dtype and raises. The port packs spread-out sizes
        into a tuple. ``torch.empty`` has no MindSpore function on 2.10; its contents are
        unspecified anyway, so it becomes ``ops.zeros`` (and the parity check copies the
        PyTorch values rather than comparing them). ``torch.ones(size=...)`` becomes
        ``shape=``.
    """,
    seed="seeds/002 API Comparison › Tensor/Parameter",
    reference="r2.4.10/api_mapping/pytorch_diff/zeros.md",
    installed_note="Verified on 2.10: ops.zeros(4, 3) raises \"input 'dtype' should be mindspore dtype, but got 3\"; ops.empty does not exist.",
    example="""
        import torch
        z = torch.zeros(2, 3)
        o = torch.ones((4,), dtype=torch.float32)
        e = torch.zeros_like(o)
    """,
)

register(
    "FUN010",
    "torch.full's inferred dtype is written out",
    group=GROUP,
    why="""
        ``torch.full(size, value)`` takes its dtype from the value: float32 for a float,
        int64 for an int, bool for a bool. ``ops.full`` without ``dtype`` always makes an
        int64 tensor, so ``ops.full((2, 2), 0.5)`` is all zeros and ``float('-inf')``
        becomes a huge negative integer. The port adds the dtype PyTorch would infer when
        the value is a literal, and flags the call when it cannot tell.
    """,
    seed="seeds/002 API Comparison › Tensor/Parameter",
    reference=f"{REF} (torch.full listed as consistent)",
    installed_note="Verified on 2.10: ops.full((2, 3), 1.5) gives int64 ones; the docs list torch.full as consistent.",
    example="""
        import torch
        a = torch.full((2, 3), 1.5)
        b = torch.full((2,), -0.5)
        c = torch.full((3,), 7)
    """,
)

register(
    "FUN011",
    "Random tensors: same distributions, values synchronised",
    group=GROUP,
    why="""
        ``rand``/``randn``/``randint``/``rand_like``/``randn_like`` exist in
        ``mindspore.ops`` with the same shapes and default dtypes (float32, int64 for
        ``randint``), but the two frameworks' generators never produce the same numbers,
        so the parity check copies these values across instead of comparing them.
        ``torch.randint(high, size)`` (no ``low``, positional or ``high=``/``size=``)
        gets ``low=0`` written out, which MindSpore requires. PyTorch's ``randint``
        accepts a float ``dtype=`` (the integers drawn, as floats); MindSpore's raises
        "the 'dtype' must be an int type", so the integers are drawn as int64 and cast
        with ``.astype``. ``torch.randint_like(x, [low,] high)`` keeps ``x``'s dtype, a
        float one too; MindSpore's ``randint_like`` refuses a float dtype, so it draws
        int64 and the result is cast to ``x.dtype``. A ``generator`` argument has no
        counterpart and is flagged; seed MindSpore with ``mindspore.set_seed``.
    """,
    seed="seeds/002 API Comparison › random",
    reference=REF,
    installed_note="""
        MindSpore 2.10 marks ``ops.randint`` and ``ops.rand_like`` deprecated (its warning
        names ``mint.randint``/``mint.rand_like``), and ``ops.rand``, ``ops.rand_like`` and
        ``ops.randint`` run the deprecated ``UniformReal``/``UniformInt`` primitives, so the
        first call prints a deprecation warning. The port still uses them: on CPU the
        ``mint`` versions, ``Tensor.uniform_`` and ``Tensor.random_`` fail with "Create
        kernelmod for op InplaceUniform/InplaceRandom failed", and ``ops.uniform`` runs the
        same primitives. ``ops.randn`` and ``ops.randn_like`` print nothing.
    """,
    example="""
        import torch
        a = torch.randn(2, 3)
        b = torch.rand((4,))
        c = torch.randint(10, (2, 2))
        f = torch.randint(low=0, high=2, size=(3, 2), dtype=torch.float32)
        g = torch.randint_like(a, 5)
        d = torch.randn_like(a)
        e = a * 2
    """,
)

register(
    "FUN012",
    "leaky_relu: negative_slope becomes alpha with PyTorch's 0.01 default",
    group=GROUP,
    why="""
        MindSpore calls the negative slope ``alpha`` and defaults it to 0.2, where
        PyTorch's default is 0.01. The argument is renamed and, when the PyTorch call
        leaves it out, ``alpha=0.01`` is written so the negative side is not scaled 20
        times more. Applies to ``F.leaky_relu`` and ``nn.LeakyReLU``.
    """,
    seed="seeds/002 API Comparison › functional APIs",
    reference="r2.4.10/api_mapping/pytorch_diff/leaky_relu.md; LeakyReLU.md",
    installed_note="Verified on 2.10: ops.leaky_relu(x) and nn.LeakyReLU() use 0.2.",
    example="""
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        x = torch.linspace(-3, 3, 7)
        a = F.leaky_relu(x)
        b = nn.LeakyReLU(0.1)(x)
    """,
)

register(
    "FUN013",
    "Activation and shape layers keep PyTorch's defaults",
    group=GROUP,
    why="""
        ``nn.ReLU``, ``nn.Tanh``, ``nn.Sigmoid``, ``nn.Identity`` and ``nn.Flatten`` (both
        default to ``start_dim=1``) map one to one. ``nn.GELU`` defaults to the tanh
        approximation in MindSpore but to the exact erf form in PyTorch, so
        ``approximate=False`` is written unless PyTorch asked for ``'tanh'``.
        ``inplace=True`` (``nn.ReLU``, ``nn.LeakyReLU``) lets PyTorch overwrite the layer's
        input; MindSpore layers take no such argument, so it is dropped: the layer's output
        is the same, but code that reads the input tensor again afterwards sees the
        original values in MindSpore where PyTorch had overwritten them.
        ``F.gelu``, ``F.sigmoid`` and ``torch.exp/log/sqrt/abs/sigmoid`` go to
        ``mindspore.ops`` unchanged (``tanh``: rule FUN018).
    """,
    seed="seeds/002 API Comparison › nn APIs",
    reference="r2.4.10/api_mapping/pytorch_diff/GELU.md",
    installed_note="Verified on 2.10: nn.GELU() differs from torch.nn.GELU() by ~2e-4; nn.GELU(approximate=False) matches.",
    example="""
        import torch
        import torch.nn as nn
        x = torch.linspace(-3, 3, 8).reshape(2, 4)
        act = nn.GELU()
        y = act(x)
        z = nn.Sequential(nn.ReLU(inplace=True), nn.Flatten())(x * 2)
    """,
)

register(
    "FUN014",
    "Loss layers keep reduction, weight and ignore_index",
    group=GROUP,
    why="""
        ``nn.MSELoss``, ``nn.L1Loss``, ``nn.NLLLoss``, ``nn.BCELoss`` and
        ``nn.BCEWithLogitsLoss`` compute the same losses with the same ``reduction``,
        ``weight``, ``pos_weight`` and ``ignore_index`` (-100) defaults. MindSpore's
        ``nn.BCEWithLogitsLoss`` orders its parameters ``reduction, weight, pos_weight``,
        so positional arguments become keywords. The deprecated ``size_average``/``reduce``
        become the ``reduction`` they stand for
        (PyTorch's own rule: ``size_average=False`` -> ``"sum"``, ``reduce=False`` ->
        ``"none"``); when one is not a literal, or ``reduction=`` is given too, they are
        flagged. ``nn.BCELoss`` becomes a function of ``(input, target)`` computing
        ``ops.binary_cross_entropy(..., reduction="none")`` and reducing it: MindSpore's
        Cell doubles the loss of a single-element batch and needs the weight in the input's
        full shape, which the function broadcasts on each call (see FUN008). It is not a
        Cell, like the CrossEntropyLoss port (FUN015). ``nn.BCEWithLogitsLoss`` with the
        default ``mean`` also becomes such a function (averaging
        ``ops.binary_cross_entropy_with_logits(..., reduction="none")``, its ``weight`` and
        ``pos_weight`` bound once as default arguments): MindSpore's Cell computes the right
        mean, but on 2.10 its gradient keeps the first batch's size when a later batch is
        smaller, so every epoch's last batch would train differently.
    """,
    seed="seeds/002 API Comparison › nn APIs",
    reference="r2.4.10/api_mapping/pytorch_diff/BCEWithLogitsLoss.md",
    example="""
        import torch
        import torch.nn as nn
        a = torch.tensor([[0.2, 0.7], [0.9, 0.4]])
        b = torch.tensor([[0.0, 1.0], [1.0, 0.0]])
        mse = nn.MSELoss(reduction="sum")(a, b)
        bce = nn.BCEWithLogitsLoss(pos_weight=torch.tensor([1.0, 3.0]))(a, b)
    """,
)

register(
    "FUN015",
    "nn.CrossEntropyLoss becomes a partial of ops.cross_entropy",
    group=GROUP,
    why="""
        ``torch.nn.CrossEntropyLoss`` and MindSpore's loss take the same ``weight``,
        ``ignore_index``, ``reduction`` and ``label_smoothing`` and compute the same
        values. But MindSpore's ``nn.CrossEntropyLoss`` Cell raises for int64 class
        labels, and int64 is the dtype PyTorch requires and datasets deliver.
        ``ops.cross_entropy`` accepts int64 labels (and probability targets) with the same
        parameters. So the layer becomes
        ``functools.partial(mindspore.ops.cross_entropy, ...)``, a callable used exactly
        like the layer: ``criterion(logits, labels)``. It is not a Cell: code that puts the
        loss inside a ``SequentialCell`` or calls Cell methods on it needs the MindSpore
        layer and int32 labels instead.
    """,
    seed="seeds/002 API Comparison › nn APIs",
    reference="r2.4.10/api_mapping/pytorch_diff/CrossEntropyLoss.md",
    installed_note="""
        Verified on 2.10: nn.CrossEntropyLoss()(logits, int64 labels) raises "labels should
        be Int32"; ops.cross_entropy gives PyTorch's values for int64 labels and for
        probability targets.
    """,
    example="""
        import torch
        import torch.nn as nn
        logits = torch.tensor([[2.0, 0.5, -1.0], [0.1, 0.2, 3.0]])
        probs = torch.tensor([[0.7, 0.2, 0.1], [0.0, 0.0, 1.0]])
        loss = nn.CrossEntropyLoss(label_smoothing=0.05)(logits, probs)
    """,
)

register(
    "FUN016",
    "Tensor.clone becomes Tensor.copy",
    group=GROUP,
    why="""
        ``Tensor.clone()`` exists in MindSpore 2.10 but its kernel is not registered on
        CPU, so it fails at run time. ``Tensor.copy()`` returns an independent tensor with
        the same values and dtype, which is what notebooks use ``clone`` for. Gradients
        flow through both.
    """,
    seed="seeds/002 API Comparison › Tensor/Parameter",
    reference=REF,
    installed_note="Verified on 2.10 (CPU): Tensor.clone() raises \"The kernel Clone unregistered\".",
    example="""
        import torch
        x = torch.ones(2, 2)
        y = x.clone()
    """,
)

register(
    "FUN017",
    "device= on tensor factories is dropped",
    group=GROUP,
    why="""
        PyTorch places each new tensor on a device given per call. MindSpore tensors
        have no per-tensor device: where computation runs is set once for the process
        (``mindspore.set_device``), so the argument is removed. ``requires_grad=True``
        has no counterpart on a plain tensor and is flagged (wrap it in a
        ``mindspore.Parameter`` or differentiate with ``mindspore.grad``).
    """,
    seed="seeds/002 Other APIs › torch.device",
    reference=REF,
    example="""
        import torch
        z = torch.zeros(3, device="cpu")
    """,
)


# ----------------------------------------------------------------------------- helpers


def _is_tensor_arg(site, arg) -> bool:
    return site.kind_of(_original_arg(site, arg)) == TENSOR


def _original_arg(site, arg):
    """The input-tree node of an updated argument (same position in the call)."""
    for orig, upd in zip(site.original.args, site.updated.args):
        if upd is arg:
            return orig.value
    return arg.value


def _simple(node) -> bool:
    """A name or attribute chain: safe to repeat in generated code."""
    while isinstance(node, cst.Attribute):
        node = node.value
    return isinstance(node, cst.Name)


def _input_expr(site, name: str):
    arg = site.arg(name)
    return None if arg is None or not _simple(arg.value) else arg.value


_FACTORY = dict(
    drop={"device": "FUN017"},
    unsupported={
        "requires_grad": (lambda site, arg: truthy_literal(site, arg) and not differentiated_leaf(site)
                          and made_parameter(site, site.statement) is None,
                          "a plain MindSpore tensor does not track gradients"),
        "out": "MindSpore functions return new tensors",
        "generator": "MindSpore has no per-call generator; use mindspore.set_seed",
        "layout": "MindSpore tensors are always strided",
        "pin_memory": "MindSpore has no pinned host memory option",
        "memory_format": "MindSpore has no memory format option",
    },
)


def _factory(**unsupported) -> dict:
    """Keyword arguments shared by the tensor factories, plus extra unsupported ones."""
    return {"drop": _FACTORY["drop"], "unsupported": {**_FACTORY["unsupported"], **unsupported},
            "values": {"requires_grad": drop_requires_grad}}


# ----------------------------------------------------------------------------- FUN001

_SAME = {
    "torch.matmul": "matmul", "torch.log": "log", "torch.sqrt": "sqrt",
    "torch.abs": "abs", "torch.sigmoid": "sigmoid",
    "torch.clamp": "clamp", "torch.masked_fill": "masked_fill",
    "torch.sum": "sum", "torch.argmax": "argmax",
    f"{F}.gelu": "gelu", f"{F}.sigmoid": "sigmoid",
}
_RENAMED_INPUT = {"sqrt": "x", "masked_fill": "input_x"}


def _real_if_complex(site, new, operand):
    """``abs`` of an operand the port sees is complex: the real part of MindSpore's
    complex-typed magnitudes (LNA004)."""
    from msmagic.rules.linalg import complex_call

    if operand is None or not complex_call(operand):
        return new
    out = cst.Call(func=cst.Attribute(value=new, attr=cst.Name("real")))
    site.edit("LNA004", out, detail="abs of a complex tensor -> the real part of MindSpore's result")
    return out


def _abs(site):
    new = site.apply(func=site.ref("mindspore.ops.abs"))
    site.edit("FUN013", new, detail=site.describe("torch.abs -> mindspore.ops.abs"))
    first = site.original.args[0].value if site.original.args else None
    return _real_if_complex(site, new, first)


for _torch, _ms in _SAME.items():
    _rule = "FUN013" if _ms in ("exp", "log", "sqrt", "abs", "tanh", "sigmoid", "gelu") else "FUN001"
    api(_torch, f"mindspore.ops.{_ms}", rule=_rule, sig=("input",),
        rename={"input": _RENAMED_INPUT[_ms]} if _ms in _RENAMED_INPUT else {}, returns=TENSOR,
        handler=_abs if _torch == "torch.abs" else None)

# Element-wise maths and reductions whose MindSpore 2.10 op has PyTorch's parameters
# (names, order, defaults, result dtype): verified value by value against torch.
_SAME_SIGNATURE = {
    "sin": ("input",), "cos": ("input",), "tan": ("input",), "asin": ("input",),
    "acos": ("input",), "atan": ("input",), "sinh": ("input",), "cosh": ("input",),
    "log2": ("input",), "log10": ("input",), "log1p": ("input",), "expm1": ("input",),
    "exp2": ("input",), "rsqrt": ("input",), "neg": ("input",), "reciprocal": ("input",),
    "square": ("input",), "sign": ("input",), "floor": ("input",), "ceil": ("input",),
    "round": ("input",), "trunc": ("input",), "erf": ("input",), "erfc": ("input",),
    "isnan": ("input",), "isinf": ("input",),
    "atan2": ("input", "other"), "pow": ("input", "exponent"), "maximum": ("input", "other"),
    "minimum": ("input", "other"), "fmod": ("input", "other"), "remainder": ("input", "other"),
    "mul": ("input", "other"), "div": ("input", "other"), "lerp": ("input", "end", "weight"),
    "add": ("input", "other"), "sub": ("input", "other"),
    "logsumexp": ("input", "dim", "keepdim"), "cumprod": ("input", "dim"),
}
_ALPHA = {"alpha": (lambda site, arg: site.literal(arg.value, None) != 1,
                    "alpha= has no MindSpore equivalent: multiply `other` by alpha yourself")}
for _name, _sig in _SAME_SIGNATURE.items():
    api(f"torch.{_name}", f"mindspore.ops.{_name}", rule="FUN001", sig=_sig, returns=TENSOR,
        unsupported=_ALPHA if _name in ("add", "sub") else {})
api("torch.cumsum", "mindspore.ops.cumsum", rule="FUN001", sig=("input", "dim"),
    rename={"input": "x", "dim": "axis"}, returns=TENSOR)

for _name in ("torch.relu", f"{F}.relu"):
    api(_name, "mindspore.ops.relu", rule="FUN001",
        sig=("input", "inplace"),
        unsupported={"inplace": (truthy_literal, "MindSpore 2.10 has no in-place ReLU kernel on CPU; "
                                 "the result is computed out of place")},
        returns=TENSOR)


def _where(site):
    bound = site.bound()
    if bound is not None and len(bound) == 1:
        site.finding("FUN001", "torch.where(condition) (indices of True elements) has no CPU "
                     "kernel in MindSpore 2.10; use ops.nonzero", comment="where(cond) not ported")
        return None
    new = site.apply(func=site.ref("mindspore.ops.where"))
    site.edit("FUN001", new, detail="torch.where -> mindspore.ops.where")
    return new


api("torch.where", rule="FUN001", sig=("condition", "input", "other"), handler=_where, returns=TENSOR)
api("torch.zeros_like", "mindspore.ops.zeros_like", rule="FUN001", sig=("input",), returns=TENSOR,
    **_factory())
api("torch.ones_like", "mindspore.ops.ones_like", rule="FUN001", sig=("input",), returns=TENSOR,
    **_factory())
api("torch.eye", "mindspore.ops.eye", rule="FUN001", sig=("n", "m"), returns=TENSOR, **_factory())
api("torch.arange", "mindspore.ops.arange", rule="FUN001", sig=("start", "end", "step"),
    returns=TENSOR, **_factory())
api("torch.linspace", "mindspore.ops.linspace", rule="FUN001", sig=("start", "end", "steps"),
    returns=TENSOR, **_factory(dtype="ops.linspace has no dtype; cast the result with .astype"))

# Tensor methods that MindSpore 2.10 accepts in their PyTorch form (dim=/keepdim= included).
for _name in ("sum", "mean", "argmax", "masked_fill", "clamp", "log", "sqrt",
              "sigmoid", "matmul"):
    method(_name, "FUN001", unambiguous=True)


def _abs_method(site):
    new = site.apply()
    if site.changes:
        site.edit("FUN001", new, detail=site.describe(""))
    return _real_if_complex(site, new, site.receiver_original)


method("abs", "FUN001", unambiguous=True, handler=_abs_method)


def _argmin_method(site):
    """``Tensor.argmin`` returns int32 on 2.10 where PyTorch gives int64: cast (API004)."""
    from msmagic.rules.api_table import CAST_RULE, cast_result

    new = cast_result(site, site.apply(), "int64")
    site.edit(CAST_RULE, new, detail=".argmin() result cast to int64")
    return new


method("argmin", "FUN001", unambiguous=True, sig=("dim", "keepdim"), handler=_argmin_method)


def _relu_method(site):
    """MindSpore 2.10's Tensor has no ``relu`` method: ``x.relu()`` -> ``ops.relu(x)``."""
    new = cst.Call(func=site.ref("mindspore.ops.relu"), args=[cst.Arg(site.receiver)])
    site.edit("FUN001", new, detail=".relu() -> mindspore.ops.relu(x)")
    return new


method("relu", "FUN001", unambiguous=lambda site: not site.updated.args, handler=_relu_method)

# ----------------------------------------------------------------------------- FUN002/003

api("torch.cat", "mindspore.ops.cat", rule="FUN002", sig=("tensors", "dim"), rename={"dim": "axis"},
    unsupported={"out": "MindSpore functions return new tensors"}, returns=TENSOR)
api("torch.stack", "mindspore.ops.stack", rule="FUN002", sig=("tensors", "dim"), rename={"dim": "axis"},
    unsupported={"out": "MindSpore functions return new tensors"}, returns=TENSOR)
api("torch.roll", "mindspore.numpy.roll", rule="FUN002", sig=("input", "shifts", "dims"),
    rename={"input": "a", "shifts": "shift", "dims": "axis"}, returns=TENSOR)


def _roll_method(site):
    """``x.roll(shifts, dims)`` -> ``mindspore.numpy.roll(x, shift, axis)``: the Roll kernel
    behind ``Tensor.roll`` and ``ops.roll`` is missing on CPU (2.10)."""
    args = []
    for a in site.updated.args:
        if a.star:
            return None
        if a.keyword is not None:
            name = {"shifts": "shift", "dims": "axis"}.get(a.keyword.value)
            if name is None:
                return None
            a = a.with_changes(keyword=cst.Name(name))
        args.append(a.with_changes(comma=cst.MaybeSentinel.DEFAULT))
    receiver = cst.Arg(site.receiver)
    new = cst.Call(func=site.ref("mindspore.numpy.roll"), args=[receiver, *args])
    site.edit("FUN002", new, detail="Tensor.roll -> mindspore.numpy.roll (no CPU Roll kernel)")
    return new


method("roll", "FUN002", sig=("shifts", "dims"), handler=_roll_method, returns=TENSOR)
api("torch.mean", "mindspore.ops.mean", rule="FUN003", sig=("input", "dim", "keepdim"),
    rename={"input": "x", "dim": "axis", "keepdim": "keep_dims"},
    unsupported={"dtype": "ops.mean has no dtype; cast the input first",
                 "out": "MindSpore functions return new tensors"},
    returns=TENSOR)

# ----------------------------------------------------------------------------- FUN004


def _second_arg(site, bound):
    """What torch.max/min's second argument is: "tensor" (elementwise ``other``), "dim"
    (an axis) or None (cannot be told)."""
    names = {name for name, _, _ in bound}
    if "other" in names:
        return "tensor"
    if names & {"dim", "keepdim"} and not any(p for n, _, p in bound if n == "dim"):
        return "dim"
    if len(bound) < 2:
        return None
    second = bound[1][1]
    if _is_tensor_arg(site, second):
        return "tensor"
    if isinstance(site.literal(second.value), int):
        return "dim"
    return None


def _max_min(which: str):
    elementwise = {"max": "maximum", "min": "minimum"}[which]

    def handler(site):
        bound = site.bound()
        if bound is None:
            return None
        if len(bound) == 1 and (bound[0][2] or bound[0][0] == "input"):  # torch.max(x): a single tensor
            call = site.updated.with_changes(func=site.ref(f"mindspore.ops.{which}"))
            new = cst.Subscript(value=call, slice=[cst.SubscriptElement(cst.Index(cst.Integer("0")))])
            site.edit("FUN004", new, detail=f"torch.{which}(x) -> ops.{which}(x)[0] (ops.{which} returns (value, index))")
            return new
        hint = _second_arg(site, bound)
        if hint == "tensor":
            new = site.updated.with_changes(func=site.ref(f"mindspore.ops.{elementwise}"))
            site.edit("FUN004", new, detail=f"torch.{which}(x, other) -> ops.{elementwise}")
            return new
        if hint is None:
            site.finding("FUN004", f"cannot tell whether the second argument of torch.{which} is an "
                         f"axis or a tensor; ported as an axis (use ops.{elementwise} for a tensor)",
                         comment="2nd argument taken as an axis")
        new = site.apply(func=site.ref(f"mindspore.ops.{which}"))
        site.edit("FUN004", new, detail=site.describe(f"torch.{which}(x, dim) -> ops.{which}(x, axis)"))
        return new

    return handler


def _max_min_method(which: str):
    elementwise = {"max": "maximum", "min": "minimum"}[which]

    def handler(site):
        bound = site.bound()
        if not bound:
            return None
        other = next((a for n, a, _ in bound if n == "other"), None)
        if other is None and bound[0][2] and _is_tensor_arg(site, bound[0][1]):
            other = bound[0][1]
        if other is None:
            return None  # x.max() / x.max(dim, keepdim): same in MindSpore
        if site.kind_of(site.receiver_original) != TENSOR:
            site.finding("GEN002", f"cannot tell whether the receiver of .{which}(tensor) is a tensor; left unchanged")
            return None
        new = cst.Call(func=site.ref(f"mindspore.ops.{elementwise}"),
                       args=[cst.Arg(site.receiver), other.with_changes(keyword=None, equal=cst.MaybeSentinel.DEFAULT)])
        site.edit("FUN004", new, detail=f".{which}(other) -> ops.{elementwise}(x, other)")
        return new

    return handler


def _values_of(index: int):
    def handler(site):
        node = site.receiver_original
        name = site.original.attr.value
        if isinstance(node, cst.Call) and (_is_max_min_with_dim(site, node) or _named_pair(site, node)):
            new = cst.Subscript(value=site.receiver,
                                slice=[cst.SubscriptElement(cst.Index(cst.Integer(str(index))))])
            site.edit("FUN004", new, detail=f".{name} -> [{index}]")
            return new
        if site.kind_of(node) == TENSOR or (isinstance(node, cst.Call) and _maybe_pair(node)):
            site.finding("FUN004", f"MindSpore returns a plain tuple where PyTorch returns a named tuple: "
                         f"if this is the result of max/min with a dim, use [{index}]",
                         comment=f".{name} may need [{index}]")
        return None

    return handler


#: methods returning PyTorch's (values, indices) named tuple under a name no other
#: common type's method has with that result (list.sort returns None)
_PAIR_METHODS = frozenset({"topk", "sort", "kthvalue", "cummax", "cummin"})
#: methods returning the pair when given a dim (pandas' max/median/mode return a Series,
#: whose .values is an array: told apart by the dim= / keepdim= keywords)
_PAIR_WITH_DIM = frozenset({"max", "min", "median", "nanmedian", "mode"})
_PAIR_FUNCTIONS = frozenset({f"torch.{n}" for n in _PAIR_METHODS | {"median", "nanmedian", "mode"}})


def _named_pair(site, call) -> bool:
    """Does ``call`` return PyTorch's (values, indices) named tuple, whatever its receiver?"""
    if site.resolve(call.func) in _PAIR_FUNCTIONS:
        return True
    func = call.func
    if not isinstance(func, cst.Attribute) or site.resolve(func):
        return False
    if func.attr.value in _PAIR_METHODS and site.kind_of(func.value) in (None, TENSOR):
        return True
    keywords = {a.keyword.value for a in call.args if a.keyword is not None}
    return (func.attr.value in _PAIR_WITH_DIM and site.kind_of(func.value) in (None, TENSOR)
            and bool(keywords & {"dim", "keepdim"}))


def _maybe_pair(call) -> bool:
    """``x.max(1).values`` on a receiver of unknown kind: a tensor's pair, or a pandas
    Series' array; flagged."""
    func = call.func
    return isinstance(func, cst.Attribute) and func.attr.value in _PAIR_WITH_DIM and bool(call.args)


def _is_max_min_with_dim(site, call) -> bool:
    qual = site.resolve(call.func)
    if qual in ("torch.max", "torch.min"):
        return len(call.args) >= 2 and not _is_tensor_arg_original(site, call)
    func = call.func
    return (
        isinstance(func, cst.Attribute)
        and func.attr.value in ("max", "min")
        and site.kind_of(func.value) == TENSOR
        and len(call.args) >= 1
        and not _is_tensor_arg_original(site, call, 0)
    )


def _is_tensor_arg_original(site, call, index: int = 1) -> bool:
    for i, a in enumerate(call.args):
        if (a.keyword is not None and a.keyword.value == "other") or (a.keyword is None and i == index
                                                                      and site.kind_of(a.value) == TENSOR):
            return True
    return False


for _which in ("max", "min"):
    api(f"torch.{_which}", rule="FUN004", sig=("input", "dim", "keepdim"),
        rename={"dim": "axis", "keepdim": "keepdims"}, ms_sig=("input", "axis", "keepdims"),
        unsupported={"out": "MindSpore functions return new tensors"},
        handler=_max_min(_which), returns=TENSOR)
    method(_which, "FUN004", unambiguous=True, sig=("dim", "keepdim"), handler=_max_min_method(_which))
member("values", "FUN004", unambiguous=True, handler=_values_of(0), returns=TENSOR)
member("indices", "FUN004", unambiguous=True, handler=_values_of(1), returns=TENSOR)

# ----------------------------------------------------------------------------- FUN005


def _softmax(target: str):
    def handler(site):
        new = site.apply(func=site.ref(target))
        exact = target.endswith(".softmax")
        if site.arg("dim") is None and site.bound() is not None:
            x = _input_expr(site, "input")
            if x is None:
                site.finding("FUN005", "no dim given: PyTorch picks the axis from the input's rank "
                             "(0 for 0/1/3-D, else 1) while MindSpore uses -1; pass dim explicitly",
                             comment="softmax without dim: axis differs")
            else:
                expr = site.parse(f"0 if {site.code(x)}.ndim in (0, 1, 3) else 1")
                new = new.with_changes(args=[*new.args[:-1], new.args[-1].with_changes(
                    comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
                    cst.Arg(keyword=cst.Name("axis"), value=expr,
                            equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                                                  whitespace_after=cst.SimpleWhitespace("")))])
                site.changes.append("implicit dim written out")
        site.edit("FUN005", new, detail=site.describe(f"-> {target}"))
        if exact:
            return _softmax_in_float64(site, new)
        return new

    return handler


def _softmax_function_name(site) -> str:
    ms = site.code(site.ref("mindspore"))
    return site.define("softmax_in_float64", lambda n: (
        f"def {n}(input, axis=-1, dtype=None, dim=None):\n"
        f'    """softmax computed in float64 and rounded to float32: MindSpore\'s CPU float32\n'
        f'    softmax is up to 2.4e-5 relative off (dim: PyTorch\'s name, from a ** mapping)."""\n'
        f"    if dim is not None:\n"
        f"        axis = dim\n"
        f"    if dtype is not None:\n"
        f"        input = input.astype(dtype)\n"
        f"    if input.dtype != {ms}.float32:\n"
        f"        return {ms}.ops.softmax(input, axis)\n"
        f"    return {ms}.ops.softmax(input.astype({ms}.float64), axis).astype({ms}.float32)\n"
    ), ("torch.softmax", f"{F}.softmax", "Tensor.softmax", "torch.nn.Softmax"))


def _softmax_in_float64(site, call: cst.Call) -> cst.Call:
    """``ops.softmax(...)`` (arguments already ported) as ``softmax_in_float64(...)``."""
    name = _softmax_function_name(site)
    new = call.with_changes(func=cst.Name(name))
    site.edit("FUN020", new, detail=f"softmax -> {name}: MindSpore's CPU float32 softmax is up to 2.4e-5 off")
    return new


def _softmax_method(site):
    """``x.softmax(dim)`` -> ``softmax_in_float64(x, axis)``."""
    bound = site.bound()
    if bound is None:
        return None
    ported = site.apply()
    args = [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in ported.args]
    call = cst.Call(func=site.ref("mindspore.ops.softmax"), args=[cst.Arg(site.receiver), *args])
    call = site.parse(site.code(call))  # commas and spacing as written text has them
    site.edit("FUN005", call, detail=site.describe("Tensor.softmax -> ops.softmax"))
    return _softmax_in_float64(site, call)


_SOFTMAX_KW = dict(sig=("input", "dim", "_stacklevel", "dtype"), drop={"_stacklevel": "FUN005"}, returns=TENSOR)
api(f"{F}.softmax", rule="FUN005", rename={"dim": "axis"}, ms_sig=("input", "axis"),
    handler=_softmax("mindspore.ops.softmax"), **_SOFTMAX_KW)
api("torch.softmax", rule="FUN005", rename={"dim": "axis"}, ms_sig=("input", "axis"),
    handler=_softmax("mindspore.ops.softmax"), **_SOFTMAX_KW)
api(f"{F}.log_softmax", rule="FUN005", rename={"input": "logits", "dim": "axis"}, ms_sig=("logits", "axis"),
    unsupported={"dtype": "ops.log_softmax has no dtype; cast the input first"},
    handler=_softmax("mindspore.ops.log_softmax"), **_SOFTMAX_KW)
method("softmax", "FUN005", unambiguous=True, sig=("dim", "dtype"), rename={"dim": "axis"},
       handler=_softmax_method)


def _softmax_module(site):
    target = "mindspore.nn." + site.api.rsplit(".", 1)[-1]
    new = site.apply(func=site.ref(target))
    if site.arg("dim") is None and site.bound() is not None:
        site.finding("FUN005", "no dim given: PyTorch picks the axis from each input's rank "
                     "(0 for 0/1/3-D, else 1) while MindSpore uses -1; pass dim explicitly",
                     comment="no dim: axis differs")
    site.edit("FUN005", new, detail=site.describe(f"-> {target}"))
    if target.endswith(".Softmax"):
        name = _softmax_class(site)
        new = new.with_changes(func=cst.Name(name))
        site.edit("FUN020", new, detail=f"nn.Softmax -> {name}: MindSpore's CPU float32 softmax is up to 2.4e-5 off")
    return new


def _softmax_class(site) -> str:
    function = _softmax_function_name(site)
    cell = site.code(site.ref("mindspore.nn.Cell"))
    return site.define("SoftmaxInFloat64", lambda n: (
        f"class {n}({cell}):\n"
        f'    """PyTorch\'s nn.Softmax computed in float64 and rounded to float32: MindSpore\'s\n'
        f'    CPU float32 softmax is up to 2.4e-5 relative off."""\n'
        f"\n"
        f"    def __init__(self, axis=-1):\n"
        f"        super().__init__()\n"
        f"        self.axis = axis\n"
        f"\n"
        f"    def construct(self, input):\n"
        f"        return {function}(input, self.axis)\n"
    ), ("torch.nn.Softmax",))


for _cls in ("Softmax", "LogSoftmax"):
    api(f"torch.nn.{_cls}", rule="FUN005", sig=("dim",), rename={"dim": "axis"},
        handler=_softmax_module, returns=f"module:torch.nn.{_cls}")

# ----------------------------------------------------------------------------- losses

_DEPRECATED = "deprecated in PyTorch and absent in MindSpore; use reduction="
_NOT_LITERAL = object()


def legacy_reduction(site) -> Optional[str]:
    """The ``reduction`` PyTorch derives from the deprecated ``size_average``/``reduce``
    (torch.nn._reduction.legacy_get_string: None counts as True; both True -> "mean",
    reduce only -> "sum", reduce=False -> "none"). "" when neither is given or both are
    None (then ``reduction`` stands); None when one is not a literal or ``reduction=`` is
    given as well (flagged)."""
    given = [site.arg("size_average"), site.arg("reduce")]
    values = [None if a is None else site.literal(a.value, _NOT_LITERAL) for a in given]
    if all(v is None for v in values):
        return ""
    if _NOT_LITERAL in values or site.arg("reduction") is not None:
        return None
    size_average, reduce = (True if v is None else bool(v) for v in values)
    return "mean" if size_average and reduce else ("sum" if reduce else "none")


def _legacy(site, arg):
    """size_average=/reduce= -> the reduction= they mean (on the first of them)."""
    red = legacy_reduction(site)
    first = next(a for a in (site.arg("size_average"), site.arg("reduce")) if a is not None)
    if not red or arg is not first:
        return False
    site.changes.append(f"{site.code(arg.value).strip()} for {'size_average' if arg is site.arg('size_average') else 'reduce'} means reduction={red!r}")
    return "reduction", site.parse(repr(red))


_LEGACY_PROBLEM = (lambda site, arg: legacy_reduction(site) is None,
                   "deprecated in PyTorch and absent in MindSpore; with a value that is not a literal "
                   "(or with reduction= as well) it cannot be turned into reduction=")
_LOSS_UNSUPPORTED = {"size_average": _LEGACY_PROBLEM, "reduce": _LEGACY_PROBLEM}
_LOSS_VALUES = {"size_average": _legacy, "reduce": _legacy}
_CE_SIG = ("input", "target", "weight", "size_average", "ignore_index", "reduce", "reduction", "label_smoothing")
api(f"{F}.cross_entropy", "mindspore.ops.cross_entropy", rule="FUN006", sig=_CE_SIG,
    ms_sig=("input", "target", "weight", "ignore_index", "reduction", "label_smoothing"),
    unsupported=_LOSS_UNSUPPORTED, values=_LOSS_VALUES, returns=TENSOR)
api(f"{F}.nll_loss", "mindspore.ops.nll_loss", rule="FUN006", sig=_CE_SIG[:7],
    rename={"input": "inputs"}, ms_sig=("inputs", "target", "weight", "ignore_index", "reduction"),
    unsupported=_LOSS_UNSUPPORTED, values=_LOSS_VALUES, returns=TENSOR)
for _name in ("mse_loss", "l1_loss"):
    api(f"{F}.{_name}", f"mindspore.ops.{_name}", rule="FUN007",
        sig=("input", "target", "size_average", "reduce", "reduction", "weight"),
        ms_sig=("input", "target", "reduction"),
        unsupported={**_LOSS_UNSUPPORTED, "weight": "MindSpore's loss has no weight; multiply the "
                     "reduction='none' loss by the weight instead"},
        values=_LOSS_VALUES, returns=TENSOR)


def _bce_weight(site, arg):
    x = _input_expr(site, "input")
    if x is None:
        site.finding("FUN008", "MindSpore needs weight in the input's full shape; wrap it in "
                     "ops.broadcast_to(weight, input.shape)", comment="weight must match input shape")
        return None
    site.changes.append("weight broadcast to the input's shape")
    return cst.Call(func=site.ref("mindspore.ops.broadcast_to"),
                    args=[cst.Arg(arg.value, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
                          cst.Arg(site.parse(f"{site.code(x)}.shape"))])


_DOUBLED = "MindSpore's mean/sum over a single element is doubled on 2.10"
_STALE_GRADIENT = ("the gradient of MindSpore's mean is scaled by the first batch's size on 2.10 "
                   "when the batch size changes")


def _reduce_apart(site, new, rule: str, why: str = _DOUBLED, reduce=("mean", "sum")):
    """``ops.binary_cross_entropy`` doubles a mean or sum over a single element on 2.10;
    its ``reduction="none"`` values are right, so the port reduces them itself (``reduce``:
    the reductions that need it)."""
    arg = site.arg("reduction")
    red = legacy_reduction(site) or ("mean" if arg is None else site.literal(arg.value))
    if red == "none" or (red in ("mean", "sum") and red not in reduce):
        return new
    if red not in ("mean", "sum"):
        site.finding(rule, f"reduction is not a literal: {why}, so use reduction='none' and "
                     "reduce the result yourself", comment="reduction not a literal")
        return new
    args = [a for a in new.args if not (a.keyword is not None and a.keyword.value == "reduction")]
    args.append(cst.Arg(keyword=cst.Name("reduction"), value=cst.SimpleString('"none"'),
                        equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                                              whitespace_after=cst.SimpleWhitespace(""))))
    sep = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    args = [a.with_changes(comma=sep) for a in args[:-1]] + [args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)]
    site.changes.append(f"reduction='none' then .{red}()")
    return cst.Call(func=cst.Attribute(value=new.with_changes(args=args), attr=cst.Name(red)))


def _bce(site):
    new = _reduce_apart(site, site.apply(func=site.ref("mindspore.ops.binary_cross_entropy")), "FUN008")
    site.edit("FUN008", new, detail=site.describe("-> mindspore.ops.binary_cross_entropy"))
    return new


api(f"{F}.binary_cross_entropy", rule="FUN008",
    sig=("input", "target", "weight", "size_average", "reduce", "reduction"),
    rename={"input": "logits", "target": "labels"}, ms_sig=("logits", "labels", "weight", "reduction"),
    values={"weight": _bce_weight, **_LOSS_VALUES}, unsupported=_LOSS_UNSUPPORTED, handler=_bce,
    returns=TENSOR)


def _bce_logits(site):
    new = _reduce_apart(site, site.apply(func=site.ref("mindspore.ops.binary_cross_entropy_with_logits")),
                        "FUN008", _STALE_GRADIENT, reduce=("mean",))
    site.edit("FUN008", new, detail=site.describe("-> mindspore.ops.binary_cross_entropy_with_logits"))
    return new


api(f"{F}.binary_cross_entropy_with_logits", rule="FUN008",
    sig=("input", "target", "weight", "size_average", "reduce", "reduction", "pos_weight"),
    ms_sig=("input", "target", "weight", "pos_weight", "reduction"),
    unsupported=_LOSS_UNSUPPORTED, values=_LOSS_VALUES, handler=_bce_logits, returns=TENSOR)

_MODULE_LOSSES = {
    "MSELoss": (("size_average", "reduce", "reduction"), ("reduction",)),
    "L1Loss": (("size_average", "reduce", "reduction"), ("reduction",)),
    "NLLLoss": (("weight", "size_average", "ignore_index", "reduce", "reduction"),
                ("weight", "ignore_index", "reduction")),
    "BCELoss": (("weight", "size_average", "reduce", "reduction"), ("weight", "reduction")),
    "BCEWithLogitsLoss": (("weight", "size_average", "reduce", "reduction", "pos_weight"),
                          ("reduction", "weight", "pos_weight")),
}
for _cls, (_sig, _ms_sig) in _MODULE_LOSSES.items():
    if _cls in ("BCELoss", "BCEWithLogitsLoss"):
        continue
    api(f"torch.nn.{_cls}", f"mindspore.nn.{_cls}", rule="FUN014", sig=_sig, ms_sig=_ms_sig,
        unsupported=dict(_LOSS_UNSUPPORTED), values=dict(_LOSS_VALUES), returns=f"module:torch.nn.{_cls}")


def _bce_module(site):
    """``nn.BCELoss(...)`` -> a function of (input, target) computing the loss with
    ``ops.binary_cross_entropy``: MindSpore's Cell doubles a mean or sum over a single
    element and needs the weight in the input's full shape (broadcast here per call)."""
    if site.bound() is None:
        return None
    arg = site.arg("reduction")
    legacy = legacy_reduction(site)
    red = legacy or ("mean" if arg is None else site.literal(arg.value))
    for name in ("size_average", "reduce"):
        if site.arg(name) is not None and legacy is None:
            site.finding("FUN014", f"{name}= {_LEGACY_PROBLEM[1]}", comment=f"{name}= has no MindSpore equivalent")
            return None
    if red not in ("mean", "sum", "none"):
        site.finding("FUN014", "reduction is not a literal; port nn.BCELoss by hand with "
                     "ops.binary_cross_entropy(..., reduction='none') and reduce the result",
                     comment="reduction not a literal")
        return None
    bce = site.code(site.ref("mindspore.ops.binary_cross_entropy"))
    weight = site.arg("weight")
    w = ""
    if weight is not None and site.literal(weight.value, default=0) is not None:
        w = f", {site.code(site.ref('mindspore.ops.broadcast_to'))}({site.code(weight.value).strip()}, input.shape)"
    tail = "" if red == "none" else f".{red}()"
    new = site.parse(f'(lambda input, target: {bce}(input, target{w}, reduction="none"){tail})')
    site.edit("FUN014", new, detail="torch.nn.BCELoss -> a function of ops.binary_cross_entropy"
              + ("; weight broadcast to the input" if w else ""))
    return new


api("torch.nn.BCELoss", rule="FUN014", sig=("weight", "size_average", "reduce", "reduction"),
    handler=_bce_module, returns="loss function")

_BCE_LOGITS_SIG, _BCE_LOGITS_MS_SIG = _MODULE_LOSSES["BCEWithLogitsLoss"]
_BCE_LOGITS_LAYER = dict(sig=_BCE_LOGITS_SIG, ms_sig=_BCE_LOGITS_MS_SIG, unsupported=dict(_LOSS_UNSUPPORTED),
                         values=dict(_LOSS_VALUES))


def _bce_logits_module(site):
    """``nn.BCEWithLogitsLoss(...)``: MindSpore's Cell (the same loss) for ``sum`` and
    ``none``; for the default ``mean``, a function of (input, target) averaging
    ``ops.binary_cross_entropy_with_logits(..., reduction="none")``, whose gradient stays
    right when the batch size changes (the Cell's mean gradient keeps the first batch's
    scale on 2.10). ``weight``/``pos_weight`` are bound once, as default arguments."""
    red = legacy_reduction(site) if site.bound() is not None else None
    arg = site.arg("reduction")
    if red == "":
        red = "mean" if arg is None else site.literal(arg.value)
    if red is None or red not in ("mean", "sum", "none") or site.bound() is None:
        new = site.apply(func=site.ref("mindspore.nn.BCEWithLogitsLoss"))
        if red not in ("sum", "none"):
            site.finding("FUN014", f"reduction is not a literal: {_STALE_GRADIENT}; with the default "
                         "'mean', train with ops.binary_cross_entropy_with_logits(..., reduction='none').mean()",
                         comment="reduction not a literal")
        site.edit("FUN014", new, detail=site.describe("-> mindspore.nn.BCEWithLogitsLoss"))
        return new
    if red != "mean":
        new = site.apply(func=site.ref("mindspore.nn.BCEWithLogitsLoss"))
        site.edit("FUN014", new, detail=site.describe("-> mindspore.nn.BCEWithLogitsLoss"))
        return new
    bound = []
    for name in ("weight", "pos_weight"):
        given = site.arg(name)
        if given is not None and site.literal(given.value, default=0) is not None:
            bound.append(f", {name}={site.code(given.value).strip()}")
    fn = site.code(site.ref("mindspore.ops.binary_cross_entropy_with_logits"))
    passed = "".join(f", {n}={n}" for n in ("weight", "pos_weight") if any(b.startswith(f", {n}=") for b in bound))
    new = site.parse(f'(lambda input, target{"".join(bound)}: {fn}(input, target{passed}, reduction="none").mean())')
    site.edit("FUN014", new, detail="torch.nn.BCEWithLogitsLoss -> a function averaging "
              "ops.binary_cross_entropy_with_logits(reduction='none')")
    return new


api("torch.nn.BCEWithLogitsLoss", rule="FUN014", **_BCE_LOGITS_LAYER, handler=_bce_logits_module,
    returns="loss function")


def _ce_module(site):
    functools = site.require_import("functools")
    call = site.apply(func=site.parse(f"{functools}.partial"))  # every argument by keyword
    loss_fn = cst.Arg(site.ref("mindspore.ops.cross_entropy"),
                      comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")) if call.args
                      else cst.MaybeSentinel.DEFAULT)
    new = call.with_changes(args=[loss_fn, *call.args])
    site.edit("FUN015", new, detail=site.describe(
        "torch.nn.CrossEntropyLoss -> functools.partial(mindspore.ops.cross_entropy)"))
    return new


api("torch.nn.CrossEntropyLoss", rule="FUN015",
    sig=("weight", "size_average", "ignore_index", "reduce", "reduction", "label_smoothing"),
    ms_sig=(), unsupported=_LOSS_UNSUPPORTED, values=_LOSS_VALUES, handler=_ce_module, returns="loss function")

# ----------------------------------------------------------------------------- factories


def _shape_factory(target: str, rule: str):
    def handler(site):
        # a spread size (``*x.shape``) is packed first, so that the arguments can be bound
        site.updated = pack_positional(site.updated)
        new = pack_positional(site.apply(func=site.ref(target)))
        site.edit(rule, new, detail=site.describe(f"-> {target}; size as one tuple"))
        return new

    return handler


api("torch.zeros", rule="FUN009", handler=_shape_factory("mindspore.ops.zeros", "FUN009"),
    returns=TENSOR, **_factory())
api("torch.ones", rule="FUN009", rename={"size": "shape"},
    handler=_shape_factory("mindspore.ops.ones", "FUN009"), returns=TENSOR, **_factory())
api("torch.empty", rule="FUN009", handler=_shape_factory("mindspore.ops.zeros", "FUN009"),
    random=True, returns=TENSOR, **_factory())


def _fill_dtype(site) -> str:
    arg = site.arg("fill_value")
    if arg is None:
        return ""
    value = site.literal(arg.value, default=None)
    text = site.code(arg.value).strip()
    if isinstance(value, bool):
        return "bool_"
    if isinstance(value, int):
        return "int64"
    if isinstance(value, float) or text.startswith(("float(", "-float(")):
        return "float32"
    return ""


def _full(site):
    new = site.apply(func=site.ref("mindspore.ops.full"))
    if site.arg("dtype") is None and site.bound() is not None:
        dtype = _fill_dtype(site)
        if dtype:
            new = new.with_changes(args=[*new.args[:-1], new.args[-1].with_changes(
                comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
                cst.Arg(keyword=cst.Name("dtype"), value=site.ref(f"mindspore.{dtype}"),
                        equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                                              whitespace_after=cst.SimpleWhitespace("")))])
            site.changes.append(f"added dtype=mindspore.{dtype}")
        else:
            site.finding("FUN010", "ops.full makes int64 unless dtype is given; PyTorch takes the dtype "
                         "from the fill value, which is not a literal here: add dtype=",
                         comment="dtype not inferable: add dtype=")
    site.edit("FUN010", new, detail=site.describe("torch.full -> mindspore.ops.full"))
    return new


api("torch.full", rule="FUN010", sig=("size", "fill_value"), handler=_full, returns=TENSOR, **_factory())


#: integer dtypes MindSpore's randint/randint_like accept as ``dtype=`` (torch spellings)
_INT_DTYPES = frozenset(f"torch.{n}" for n in ("int8", "int16", "int32", "int64", "long", "int", "short",
                                                "uint8"))


def _randint_parts(bound, like: bool = False):
    """PyTorch's randint overloads are ``(high, size)`` and ``(low, high, size)``
    (``randint_like``: ``(input, high)`` and ``(input, low, high)``): {role: Arg} for
    low/high/size, or None when the arguments fit neither."""
    positional = [a for n, a, p in bound if p and not (like and n == "input")]
    keywords = {n: a for n, a, p in bound if not p}
    if "size" in keywords or like:
        roles = {0: [], 1: ["low"] if "high" in keywords else ["high"], 2: ["low", "high"]}
    else:
        roles = {2: ["high", "size"], 3: ["low", "high", "size"]}
    if len(positional) not in roles:
        return None
    parts = dict(zip(roles[len(positional)], positional))
    for role in ("low", "high", "size"):
        if role in keywords:
            if role in parts:
                return None
            parts[role] = keywords[role]
    return parts


def _int_dtype(site, arg) -> bool:
    original = next((o.value for o in site.original.args if o.keyword is not None
                     and o.keyword.value == "dtype"), None)
    return site.resolve(original) in _INT_DTYPES if original is not None else False


def _randint_call(site, parts: dict, n_leading: int, target: str, head=None):
    """The applied call to ``target`` with ``low=0`` written where PyTorch leaves it out
    (MindSpore requires it: positional before ``high``, else by keyword); a dtype
    MindSpore's randint refuses (a float: PyTorch allows it) is taken out and returned to
    be applied by ``.astype`` on the integers drawn. ``head``: what replaces the input
    of ``randint_like``. (None, None) when high (or randint's size) is missing."""
    call = site.apply()  # device=, requires_grad=, generator=... as the entry says
    if "high" not in parts or (target.endswith(".randint") and "size" not in parts):
        return None, None
    args = list(call.args)
    if head is not None:
        args[0] = args[0].with_changes(value=head)
    if "low" not in parts:
        n_pos = sum(1 for a in args if a.keyword is None)
        if n_pos > n_leading:  # high is positional: 0 goes before it
            args.insert(n_leading, cst.Arg(cst.Integer("0")))
        else:  # high by keyword: low=0 before it
            at = next(i for i, a in enumerate(args) if a.keyword is not None and a.keyword.value == "high")
            args.insert(at, cst.Arg(cst.Integer("0"), keyword=cst.Name("low"), equal=cst.AssignEqual(
                whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))))
        site.changes.append("low=0 written out")
    dtype = next((a for a in args if a.keyword is not None and a.keyword.value == "dtype"), None)
    cast = None
    if dtype is not None and not _int_dtype(site, dtype):
        args.remove(dtype)
        cast = dtype.value
        site.changes.append("dtype applied by .astype (MindSpore's randint draws integer dtypes only)")
    args = [a.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))) for a in args[:-1]] + [
        args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)]
    return cst.Call(func=site.ref(target), args=args), cast


def _astype(new, dtype):
    return cst.Call(func=cst.Attribute(value=new, attr=cst.Name("astype")), args=[cst.Arg(dtype)])


def _randint(site):
    """``torch.randint`` in every spelling PyTorch accepts: ``(high, size)``, ``(low,
    high, size)``, any of them by keyword, with a float ``dtype=``."""
    bound = site.bound()
    parts = _randint_parts(bound) if bound is not None else None
    if parts is None:
        new = site.apply(func=site.ref("mindspore.ops.randint"))
        if bound is not None:
            site.finding("FUN011", "torch.randint's arguments fit neither (high, size) nor (low, high, size)",
                         comment="randint arguments not recognised")
        site.edit("FUN011", new, detail=site.describe("torch.randint -> mindspore.ops.randint"))
        return new
    new, cast = _randint_call(site, parts, 0, "mindspore.ops.randint")
    if new is None:
        site.finding("FUN011", "torch.randint without high or size", comment="randint needs high and size")
        return None
    if cast is not None:
        new = _astype(new, cast)
    site.edit("FUN011", new, detail=site.describe("torch.randint -> mindspore.ops.randint"))
    return new


def _randint_like(site):
    """``torch.randint_like(x, [low,] high)`` keeps ``x``'s dtype, a float one included;
    MindSpore's ``randint_like`` takes ``low`` and refuses a float dtype: the integers
    are drawn as int64 and cast to ``x``'s dtype (or the ``dtype=`` given)."""
    bound = site.bound()
    if bound is None or not bound or bound[0][0] != "input":
        return None
    parts = _randint_parts(bound, like=True)
    x = bound[0][1].value
    if parts is None or "size" in parts:
        return None
    head = x if _simple(x) else cst.Name("t")  # an expression is evaluated once, in a lambda
    new, cast = _randint_call(site, parts, 1 if bound[0][2] else 0, "mindspore.ops.randint_like", head=head)
    if new is None:
        return None
    if cast is None and not any(a.keyword is not None and a.keyword.value == "dtype" for a in new.args):
        cast = site.parse(f"{site.code(head)}.dtype")
        site.changes.append("the input's dtype applied by .astype")
    if cast is not None:
        new = new.with_changes(args=[*new.args[:-1], new.args[-1].with_changes(
            comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
            cst.Arg(site.ref("mindspore.int64"), keyword=cst.Name("dtype"), equal=cst.AssignEqual(
                whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")))])
        new = _astype(new, cast)
    if head is not x:
        new = site.parse(f"(lambda t: {site.code(new)})({site.code(x)})")
    site.edit("FUN011", new, detail=site.describe("torch.randint_like -> mindspore.ops.randint_like"))
    return new


for _name in ("rand", "randn"):
    api(f"torch.{_name}", f"mindspore.ops.{_name}", rule="FUN011", random=True, returns=TENSOR, **_factory())
def _like_dtype(target: str):
    """``ops.randn_like`` returns float32 for a float64 input (2.10): PyTorch keeps the
    input's dtype, so ``dtype=<input>.dtype`` is written when the call gives none."""

    def handler(site):
        new = site.apply(func=site.ref(target))
        x = _input_expr(site, "input")
        if site.arg("dtype") is None and site.bound() is not None:
            if x is None:
                site.finding("FUN011", "MindSpore keeps float32 for float64 inputs: pass dtype= explicitly",
                             comment="dtype not written: input not a plain name")
            else:
                new = new.with_changes(args=[*new.args[:-1], new.args[-1].with_changes(
                    comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
                    cst.Arg(keyword=cst.Name("dtype"), value=site.parse(f"{site.code(x)}.dtype"),
                            equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                                                  whitespace_after=cst.SimpleWhitespace("")))])
                site.changes.append("dtype=input.dtype written out")
        site.edit("FUN011", new, detail=site.describe(f"-> {target}"))
        return new

    return handler


for _name in ("rand_like", "randn_like"):
    api(f"torch.{_name}", rule="FUN011", sig=("input",), random=True, handler=_like_dtype(f"mindspore.ops.{_name}"),
        returns=TENSOR, **_factory())
def _normal(site):
    """``torch.normal`` in its three forms: ``(mean, std, size)`` with numbers,
    ``(mean_tensor, std=1.0)`` and ``(mean, std_tensor)``. MindSpore's ``ops.normal``
    always takes the shape first: it is the size given, else the shape of whichever of
    mean and std is the tensor (decided at run time when neither is a number literal)."""
    new = site.apply(func=site.ref("mindspore.ops.normal"))
    bound = arguments_of(new, ("mean", "std", "size"))
    if bound is None or "mean" not in bound[0]:
        site.finding("FUN011", "torch.normal's arguments fit none of its forms", comment="normal arguments not recognised")
        return None
    roles, rest = bound
    mean, std = roles["mean"].value, roles["std"].value if "std" in roles else cst.Float("1.0")
    tail = "".join(", " + site.code(a).strip().rstrip(",") for a in rest)
    ops = site.code(new.func)
    if "size" in roles:
        text = f"{ops}({site.code(roles['size'].value)}, {site.code(mean)}, {site.code(std)}{tail})"
    else:
        number = lambda e: isinstance(site.literal(e, None), (int, float)) and not isinstance(site.literal(e, None), bool)  # noqa: E731
        if number(mean) and number(std):
            site.finding("FUN011", "torch.normal with two numbers needs size=", comment="normal without size")
            return None
        if number(mean) or number(std):
            tensor, other = (std, mean) if number(mean) else (mean, std)
            if _simple(tensor):
                shape = f"{site.code(tensor)}.shape"
                text = (f"{ops}({shape}, {site.code(mean)}, {site.code(std)}{tail})")
            else:
                shape = "s.shape" if number(mean) else "m.shape"
                text = f"(lambda m, s: {ops}({shape}, m, s{tail}))({site.code(mean)}, {site.code(std)})"
        else:
            tensor_type = site.code(site.ref("mindspore.Tensor"))
            text = (f"(lambda m, s: {ops}(m.shape if isinstance(m, {tensor_type}) else s.shape, m, s{tail}))"
                    f"({site.code(mean)}, {site.code(std)})")
    out = site.parse(text)
    site.edit("FUN011", out, detail=site.describe("torch.normal -> mindspore.ops.normal(shape, mean, stddev)"))
    return out


def arguments_of(call: cst.Call, names: tuple):
    """({name: Arg} for the leading parameters ``names``, [other Args]) of a call, bound
    as the engine binds PyTorch calls; None with ``*args``/``**kwargs`` or too many
    positional arguments."""
    bound = bind_arguments(names, call.args)
    if bound is None or any(name is None for name, _, _ in bound):
        return None
    return ({name: a for name, a, _ in bound if name in names},
            [a for name, a, _ in bound if name not in names])


api("torch.normal", rule="FUN011", sig=("mean", "std", "size"), handler=_normal, random=True,
    returns=TENSOR, **_factory())


def _randperm(site):
    """``ops.randperm`` with its default ``seed=0`` returns the same permutation at every
    call (2.10): ``ops.shuffle(ops.arange(n))`` draws a new one each time, like PyTorch."""
    new = site.apply()
    bound = arguments_of(new, ("n",))
    if bound is None or "n" not in bound[0]:
        return None
    roles, rest = bound
    dtype = next((a for a in rest if a.keyword is not None and a.keyword.value == "dtype"), None)
    others = [a for a in rest if a is not dtype]
    if others:
        return None
    n = site.code(roles["n"].value)
    arange = site.code(site.ref("mindspore.ops.arange"))
    text = f"{site.code(site.ref('mindspore.ops.shuffle'))}({arange}({n}))"
    if dtype is not None:
        text += f".astype({site.code(dtype.value)})"
    out = site.parse(text)
    site.edit("FUN011", out, detail=site.describe("torch.randperm(n) -> mindspore.ops.shuffle(mindspore.ops.arange(n))"))
    return out


api("torch.randperm", rule="FUN011", sig=("n",), handler=_randperm, random=True, returns=TENSOR, **_factory())


api("torch.randint", rule="FUN011", sig=("low", "high", "size"), handler=_randint, random=True,
    returns=TENSOR, **_factory())
api("torch.randint_like", rule="FUN011", sig=("input", "low", "high"), handler=_randint_like, random=True,
    returns=TENSOR, **_factory())

# ----------------------------------------------------------------------------- activations

api(f"{F}.leaky_relu", "mindspore.ops.leaky_relu", rule="FUN012", sig=("input", "negative_slope", "inplace"),
    rename={"negative_slope": "alpha"}, defaults={"alpha": "0.01"},
    unsupported={"inplace": (truthy_literal, "MindSpore has no in-place leaky_relu")}, returns=TENSOR)
api("torch.nn.LeakyReLU", "mindspore.nn.LeakyReLU", rule="FUN012", sig=("negative_slope", "inplace"),
    rename={"negative_slope": "alpha"}, defaults={"alpha": "0.01"}, drop={"inplace": "FUN013"},
    returns="module:torch.nn.LeakyReLU")
for _cls in ("ReLU", "Sigmoid", "Identity", "Flatten"):
    api(f"torch.nn.{_cls}", f"mindspore.nn.{_cls}", rule="FUN013",
        sig=("start_dim", "end_dim") if _cls == "Flatten" else ("inplace",) if _cls == "ReLU" else (),
        drop={"inplace": "FUN013"} if _cls == "ReLU" else {}, returns=f"module:torch.nn.{_cls}")


def _gelu_approx(site, arg):
    value = site.literal(arg.value)
    if value not in ("none", "tanh"):
        site.finding("FUN013", f"approximate={site.code(arg.value)} is not a literal: MindSpore needs "
                     "approximate=True for 'tanh', False for 'none'", comment="approximate not a literal")
        return None
    return site.parse(str(value == "tanh"))


api("torch.nn.GELU", "mindspore.nn.GELU", rule="FUN013", sig=("approximate",),
    values={"approximate": _gelu_approx}, defaults={"approximate": "False"}, returns="module:torch.nn.GELU")

method("clone", "FUN016", unambiguous=True, target="copy",
       unsupported={"memory_format": "MindSpore has no memory format option"})


# ----------------------------------------------------------------------------- FUN018

register(
    "FUN018",
    "tanh is computed as 2 * sigmoid(2x) - 1",
    group=GROUP,
    why="""
        MindSpore 2.10's CPU ``tanh`` kernel (``ops.tanh``, ``Tensor.tanh``, and inside
        ``nn.Tanh``) is an approximation: on float32 it is up to 1e-4 away from the true
        value and returns more than 1 (1.0000098 at x = 5), so a port through it differs
        from PyTorch beyond the 1e-5 a parity check allows. ``tanh(x) = 2 * sigmoid(2x) -
        1`` exactly, and MindSpore's sigmoid is accurate: over float32 from -30 to 30 (and
        at 0, +-1e-8, +-inf, NaN) the formula stays within 2e-7 of PyTorch's tanh and
        within [-1, 1], and its gradient within 1e-6 of PyTorch's. So ``torch.tanh(x)``,
        ``F.tanh(x)`` and ``x.tanh()`` become ``(2 * mindspore.ops.sigmoid(2 * x) - 1)``,
        and ``torch.tanh`` passed or stored as a value (``ACTIVATION = torch.tanh``) becomes
        a function ``tanh_via_sigmoid`` defined in the cell. ``nn.Tanh()`` layers (and
        ``nn.Tanh`` passed as a class, ``act_fn=nn.Tanh``) become ``TanhViaSigmoid``, a Cell
        defined in the cell that computes the formula (MindSpore's ``nn.Tanh`` uses the
        approximate kernel). On float16 the formula is as coarse as the type (1.5e-3).
        The in-place ``x.tanh_()`` becomes ``x = (2 * mindspore.ops.sigmoid(2 * x) - 1)``
        (a rebinding, API003), and ``tanhshrink`` (``x - tanh(x)``: ``F.tanhshrink(x)``,
        ``nn.Tanhshrink()``) uses the same formula, ``TanhshrinkViaSigmoid`` for the layer:
        MindSpore's own ``ops.tanhshrink`` and ``nn.Tanhshrink`` run the same approximate
        kernel.
    """,
    seed="seeds/002 API Comparison › functional APIs",
    reference=REF,
    installed_note="""
        Measured on 2.10 (CPU) against torch 2.13 on 2,000,013 float32 points: ops.tanh max
        |d| 1.0e-4 with values above 1 near |x| = 5; 2 * ops.sigmoid(2 * x) - 1 max |d|
        1.8e-7, float64 3.3e-16. ops.tanhshrink and nn.Tanhshrink: max |d| 9.2e-5 on
        PyTorch's op_db and module_db samples, so they are not used.
    """,
    example="""
        import torch
        import torch.nn.functional as F
        x = torch.linspace(-6, 6, 25)
        a = torch.tanh(x)
        b = F.tanh(x * 0.5)
        c = x.tanh().abs().max()
        layer = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.Tanh())
        d = layer(x[:6].reshape(2, 3) * 3)
        activation = torch.tanh
        e = activation(x)
        y = x * 0.9
        y.tanh_()
        s = F.tanhshrink(x)
        t = torch.nn.Tanhshrink()(x)
    """,
)


def _atomic(node) -> bool:
    return isinstance(node, (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.Integer, cst.Float)) or bool(
        getattr(node, "lpar", None))


def _tanh_formula(site, x):
    if not _atomic(x):
        x = x.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    two = cst.Integer("2")
    inner = cst.Call(func=site.ref("mindspore.ops.sigmoid"),
                     args=[cst.Arg(cst.BinaryOperation(left=two, operator=cst.Multiply(), right=x))])
    new = cst.BinaryOperation(left=cst.BinaryOperation(left=two, operator=cst.Multiply(), right=inner),
                              operator=cst.Subtract(), right=cst.Integer("1"),
                              lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    site.edit("FUN018", new, detail="tanh(x) -> (2 * ops.sigmoid(2 * x) - 1): MindSpore's CPU tanh is 1e-4 off")
    return new


def _one_input(build):
    """(function handler, method handler) porting ``torch.f(x)`` / ``x.f()`` through
    ``build(site, x)``; other argument lists are left to the entry's table port."""
    def function(site):
        bound = site.bound()
        if bound is None or len(bound) != 1 or bound[0][0] != "input":
            return None
        return build(site, bound[0][1].value)

    def method_(site):
        if site.updated.args:
            return None
        return build(site, site.receiver)

    return function, method_


_tanh, _tanh_method = _one_input(_tanh_formula)


def _tanh_function(site):
    """``torch.tanh`` used as a value (``ACTIVATION = torch.tanh``, ``activation=F.tanh``):
    a function computing the formula, defined once in the cell."""
    sigmoid = site.code(site.ref("mindspore.ops.sigmoid"))
    name = site.define("tanh_via_sigmoid", lambda n: (
        f"def {n}(input):\n"
        f'    """tanh(x) = 2 * sigmoid(2x) - 1: MindSpore\'s CPU tanh is up to 1e-4 off."""\n'
        f"    return 2 * {sigmoid}(2 * input) - 1\n"
    ), ("torch.tanh", f"{F}.tanh"))
    new = cst.Name(name)
    site.edit("FUN018", new, detail=f"{site.api} -> {name}, a function computing 2 * ops.sigmoid(2 * x) - 1")
    return new


def _tanh_class(site) -> str:
    cell = site.code(site.ref("mindspore.nn.Cell"))
    sigmoid = site.code(site.ref("mindspore.ops.sigmoid"))
    return site.define("TanhViaSigmoid", lambda n: (
        f"class {n}({cell}):\n"
        f'    """PyTorch\'s nn.Tanh as tanh(x) = 2 * sigmoid(2x) - 1: MindSpore\'s CPU tanh is\n'
        f'    up to 1e-4 off."""\n'
        f"\n"
        f"    def construct(self, input):\n"
        f"        return 2 * {sigmoid}(2 * input) - 1\n"
    ), ("torch.nn.Tanh",))


def _tanh_layer(site):
    """``nn.Tanh()`` -> ``TanhViaSigmoid()``, a Cell computing the formula."""
    if site.updated.args:
        return None
    name = _tanh_class(site)
    new = site.updated.with_changes(func=cst.Name(name))
    site.edit("FUN018", new, detail=f"nn.Tanh -> {name}, a Cell computing 2 * ops.sigmoid(2 * x) - 1")
    return new


def _tanh_layer_class(site):
    """``nn.Tanh`` as a value (``act_fn=nn.Tanh``, called later): the Cell class."""
    name = _tanh_class(site)
    new = cst.Name(name)
    site.edit("FUN018", new, detail=f"nn.Tanh -> {name}, a Cell computing 2 * ops.sigmoid(2 * x) - 1")
    return new


api("torch.nn.Tanh", rule="FUN018", handler=_tanh_layer, as_value=_tanh_layer_class,
    returns="module:torch.nn.Tanh")


def _tanh_inplace(site):
    """``x.tanh_()`` -> ``x = (2 * mindspore.ops.sigmoid(2 * x) - 1)``."""
    if site.updated.args:
        return None
    formula = _tanh_formula(site, site.receiver)
    return _rebind(site, "Tensor.tanh_", formula)


method("tanh_", "FUN018", handler=_tanh_inplace)


def _tanhshrink_formula(site, x):
    if not _atomic(x):
        x = x.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    two = cst.Integer("2")
    tanh = cst.BinaryOperation(
        left=cst.BinaryOperation(left=two, operator=cst.Multiply(), right=cst.Call(
            func=site.ref("mindspore.ops.sigmoid"),
            args=[cst.Arg(cst.BinaryOperation(left=two, operator=cst.Multiply(), right=x))])),
        operator=cst.Subtract(), right=cst.Integer("1"), lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    new = cst.BinaryOperation(left=x, operator=cst.Subtract(), right=tanh,
                              lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    site.edit("FUN018", new, detail="tanhshrink(x) -> (x - (2 * ops.sigmoid(2 * x) - 1)): MindSpore's CPU "
              "tanh is 1e-4 off")
    return new


_tanhshrink, _ = _one_input(_tanhshrink_formula)


def _tanhshrink_layer(site):
    """``nn.Tanhshrink()`` -> ``TanhshrinkViaSigmoid()``."""
    if site.updated.args:
        return None
    cell = site.code(site.ref("mindspore.nn.Cell"))
    sigmoid = site.code(site.ref("mindspore.ops.sigmoid"))
    name = site.define("TanhshrinkViaSigmoid", lambda n: (
        f"class {n}({cell}):\n"
        f'    """PyTorch\'s nn.Tanhshrink, x - tanh(x), with tanh(x) = 2 * sigmoid(2x) - 1:\n'
        f'    MindSpore\'s CPU tanh is up to 1e-4 off."""\n'
        f"\n"
        f"    def construct(self, input):\n"
        f"        return input - (2 * {sigmoid}(2 * input) - 1)\n"
    ), ("torch.nn.Tanhshrink",))
    new = site.updated.with_changes(func=cst.Name(name))
    site.edit("FUN018", new, detail=f"nn.Tanhshrink -> {name}, a Cell computing x - (2 * ops.sigmoid(2 * x) - 1)")
    return new


api("torch.nn.Tanhshrink", rule="FUN018", handler=_tanhshrink_layer, returns="module:torch.nn.Tanhshrink")
api(f"{F}.tanhshrink", "mindspore.ops.tanhshrink", rule="FUN018", sig=("input",), handler=_tanhshrink,
    returns=TENSOR)

for _qual in ("torch.tanh", f"{F}.tanh"):
    api(_qual, "mindspore.ops.tanh", rule="FUN018", sig=("input",),
        unsupported={"out": "MindSpore functions return new tensors"}, handler=_tanh, returns=TENSOR,
        as_value=_tanh_function)
method("tanh", "FUN018", unambiguous=True, handler=_tanh_method)


# ----------------------------------------------------------------------------- FUN019

register(
    "FUN019",
    "float32 exp is computed in float64 and rounded back",
    group=GROUP,
    why="""
        MindSpore 2.10's CPU ``exp`` kernel for float32 (``ops.exp``, ``Tensor.exp``) is an
        approximation: up to 2.3e-5 relative away from the true value (PyTorch's is within
        6e-8), so a softmax written by hand (makemore's ``counts = logits.exp()``) or any
        value built on ``exp`` differs from PyTorch beyond the 1e-5 a parity check allows.
        Computed in float64 and rounded to float32, it is within 1.2e-7 of PyTorch's. So
        ``torch.exp(x)`` and ``x.exp()`` become ``exp_in_float64(x)``, a function defined
        in the cell: float32 input (and integer
        or bool input, which PyTorch's exp turns into float32) goes through float64 and
        back; float16, bfloat16 and float64 input use ``ops.exp`` directly. The casts are
        differentiable: the gradient is computed in float64 too (more exact than PyTorch's
        float32 ``grad * result``, within float32 rounding of it); ``grad``,
        ``value_and_grad`` and ``jacrev`` work through it. ``torch.exp`` passed as a value
        (``jvp(torch.exp, x, v)``) stays MindSpore's own ``ops.exp``: ``jvp``/``jacfwd``
        compile the function they are given from its source file, which a function defined
        in a notebook cell or run by ``exec`` does not have (the same holds for a Cell with a
        custom ``bprop``, which would otherwise reproduce PyTorch's rounding of the gradient).
    """,
    seed="seeds/002 API Comparison › functional APIs",
    reference=REF,
    installed_note="""
        Measured on 2.10 (CPU) against torch 2.13 on 2,000,001 float32 points in [-87, 88]:
        ops.exp max relative difference 1.0e-5 (2.3e-5 to the true value); exp of the float64
        cast, rounded to float32, 1.2e-7. exp(5.0) is 1.8e-4 off in float32.
    """,
    example="""
        import torch
        logits = torch.linspace(-20, 25, 46).reshape(2, 23)
        counts = logits.exp()
        probs = counts / counts.sum(1, keepdim=True)
        e = torch.exp(torch.tensor([5.0, 10.0, 20.0]))
        i = torch.exp(torch.arange(3))
    """,
)


register(
    "FUN020",
    "float32 softmax is computed in float64 and rounded back",
    group=GROUP,
    why="""
        MindSpore 2.10's CPU ``softmax`` kernel for float32 (``ops.softmax``,
        ``Tensor.softmax``, ``nn.Softmax``) is up to 2.4e-5 relative away from the true
        value (PyTorch's is within 4e-6), so attention weights and probabilities differ from
        PyTorch's beyond the 1e-5 a parity check allows (the Transformer tutorial's
        ``dec_self_attns``). Computed in float64 and rounded to float32 the result is within
        6e-8 of the true value. So ``torch.softmax``, ``F.softmax`` and ``x.softmax`` become
        ``softmax_in_float64(x, axis)``, a function defined in the cell, and ``nn.Softmax``
        becomes ``SoftmaxInFloat64(axis)``, a Cell defined in the cell that calls it; the
        axis is ported as FUN005 ports it. Other dtypes use ``ops.softmax`` directly; a
        ``dtype=`` casts the input first, as PyTorch does. The casts are differentiable.
        ``log_softmax`` is left to ``ops.log_softmax`` (its float32 results are within
        8e-6 absolute of PyTorch's).
    """,
    seed="seeds/002 API Comparison › functional APIs",
    reference=REF,
    installed_note="""
        Measured on 2.10 (CPU) against torch 2.13 on 256x64 float32 inputs of scale 1, 5
        and 20: ops.softmax max relative error 3.6e-6, 1.2e-5, 2.4e-5 (torch 3.9e-7, 1.3e-6,
        4.0e-6); softmax of the float64 cast, rounded to float32, 5.9e-8.
    """,
    example="""
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        scores = torch.linspace(-20, 25, 48).reshape(2, 4, 6)
        p = F.softmax(scores, dim=-1)
        q = torch.softmax(scores, 1)
        r = scores.softmax(dim=0)
        attn = nn.Softmax(dim=-1)(scores)
    """,
)


def _exp_function_name(site) -> str:
    ms = site.code(site.ref("mindspore"))
    return site.define("exp_in_float64", lambda n: (
        f"def {n}(input):\n"
        f'    """exp computed in float64 and rounded to float32 (PyTorch\'s result type for float32,\n'
        f'    integer and bool input): MindSpore\'s CPU float32 exp is up to 2.3e-5 relative off."""\n'
        f"    if input.dtype in ({ms}.float16, {ms}.bfloat16, {ms}.float64):\n"
        f"        return {ms}.ops.exp(input)\n"
        f"    return {ms}.ops.exp(input.astype({ms}.float64)).astype({ms}.float32)\n"
    ), ("torch.exp",))


def _exp_call(site, x):
    name = _exp_function_name(site)
    new = cst.Call(func=cst.Name(name), args=[cst.Arg(x)])
    site.edit("FUN019", new, detail=f"exp -> {name}: MindSpore's CPU float32 exp is up to 2.3e-5 off")
    return new


_exp, _exp_method = _one_input(_exp_call)


def _exp_value(site):
    """``torch.exp`` passed as a value (``jvp(torch.exp, x, v)``): MindSpore's own
    ``ops.exp``. Functional transforms compile the function they are given from its source
    file, which a function defined in a notebook cell (or code run by ``exec``) lacks."""
    new = site.ref("mindspore.ops.exp")
    site.edit("FUN019", new, detail="torch.exp -> mindspore.ops.exp (passed as a value: MindSpore's own exp)")
    return new


api("torch.exp", "mindspore.ops.exp", rule="FUN019", sig=("input",),
    unsupported={"out": "MindSpore functions return new tensors"}, handler=_exp, as_value=_exp_value,
    returns=TENSOR)
method("exp", "FUN019", unambiguous=True, handler=_exp_method)
