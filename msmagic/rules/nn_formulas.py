"""``torch.nn.functional`` APIs and ``torch.nn`` layers with no faithful MindSpore function
on CPU, ported as a small function or Cell written with classic ``mindspore.ops``
(NNF001, NNF002), and the in-place functional activations (NNF003).

Each definition goes once into the ported cell, before the statement that needs it, and
keeps PyTorch's signature, so the call's arguments stay as written."""

from __future__ import annotations

import libcst as cst

from msmagic.engine.build import literal
from msmagic.engine.spec import api, member
from msmagic.rules.api_table import _rebind
from msmagic.rules.layers import _store
from msmagic.rules.registry import register

GROUP = "Layers and functional APIs"
REF = "r2.4.10/api_mapping/pytorch_api_mapping.md"
F = "torch.nn.functional"
DEVICE_RULE = "DEV003"
_DEPRECATED = "deprecated in PyTorch and absent in MindSpore: use reduction"


def _not_none(site, arg) -> bool:
    return literal(arg.value, "?") is not None


_LOSS_UNSUPPORTED = {"size_average": (_not_none, _DEPRECATED), "reduce": (_not_none, _DEPRECATED)}

register(
    "NNF001",
    "Functional APIs without a CPU kernel become a function of mindspore.ops",
    group=GROUP,
    why="""
        ``F.layer_norm``, ``F.instance_norm``, ``F.kl_div``, ``F.soft_margin_loss``,
        ``F.pairwise_distance``, ``F.poisson_nll_loss``, ``F.local_response_norm``,
        ``F.bilinear`` and ``F.scaled_dot_product_attention`` have no MindSpore function
        that gives PyTorch's values on CPU: the same-named ``mindspore.ops`` /
        ``mindspore.mint`` functions lack CPU kernels (LayerNormExt, KLDiv, SoftMarginLoss),
        take other arguments (``ops.kl_div`` has no ``log_target``) or do not exist. Each
        is short in PyTorch's own definition, so the port writes that definition once in
        the cell as a function with PyTorch's signature, built from classic
        ``mindspore.ops`` (mean, sqrt, exp, log1p, norm, matmul, softmax, pad), and calls
        it with the arguments as written. ``F.instance_norm`` computes the input's own
        statistics: ``use_input_stats=False`` (running statistics) is left as PyTorch, and
        the in-place update of ``running_mean``/``running_var`` is not ported (flagged).
        ``scaled_dot_product_attention`` applies ``dropout_p`` with ``ops.dropout`` (a
        random draw, like PyTorch's: flagged, the values cannot match PyTorch's draw).
    """,
    seed="seeds/002 API Comparison › functional APIs (mapping table)",
    reference=REF,
    installed_note="""
        Checked on MindSpore 2.10 (CPU): ``ops.layer_norm`` raises "Create kernelmod for op
        LayerNormExt failed", ``mint.nn.functional.kl_div`` and ``soft_margin_loss`` raise
        "kernel ... unregistered", and there is no ``ops.pairwise_distance``,
        ``ops.local_response_norm``, ``ops.bilinear`` nor
        ``ops.scaled_dot_product_attention``.
    """,
    example="""
        import torch
        import torch.nn.functional as F
        x = torch.linspace(-2, 2, 24).reshape(2, 3, 4)
        y = F.layer_norm(x, (4,))
        d = F.pairwise_distance(x[0], x[1], p=1.0)
        q = torch.linspace(-1, 1, 48).reshape(1, 2, 4, 6)
        a = F.scaled_dot_product_attention(q, q * 0.5, q + 1.0, is_causal=True)
    """,
)

register(
    "NNF002",
    "Layers without a faithful MindSpore Cell become a Cell of mindspore.ops",
    group=GROUP,
    why="""
        ``nn.InstanceNorm1d/2d/3d`` (MindSpore's ``nn.InstanceNorm*d`` raise on CPU and
        always have affine parameters), ``nn.KLDivLoss`` (no ``log_target`` in
        ``mindspore.nn``, and ``mint.nn.KLDivLoss`` has no CPU kernel),
        ``nn.SoftMarginLoss`` (kernel unregistered on CPU), ``nn.PairwiseDistance`` and
        ``nn.CosineSimilarity`` (MindSpore's ``nn.CosineSimilarity`` is another API, a
        similarity matrix) become a small ``mindspore.nn.Cell`` the port writes once in
        the cell, with PyTorch's constructor arguments and the functions of NNF001 in its
        ``construct``. InstanceNorm's affine parameters are named ``weight`` and ``bias``
        as in PyTorch; ``track_running_stats=True`` is left as PyTorch (flagged).
    """,
    seed="seeds/002 API Comparison › nn APIs",
    reference=REF,
    installed_note="""
        Checked on MindSpore 2.10 (CPU): ``nn.InstanceNorm2d(3)(x)`` raises a RuntimeError,
        ``nn.SoftMarginLoss()`` raises "The kernel SoftMarginLoss unregistered".
    """,
    example="""
        import torch
        import torch.nn as nn
        norm = nn.InstanceNorm2d(3, affine=True)
        x = torch.linspace(-3, 3, 2 * 3 * 4 * 5).reshape(2, 3, 4, 5)
        y = norm(x)
        dist = nn.PairwiseDistance(p=2.0)
        d = dist(x[0, 0], x[1, 0])
    """,
)

register(
    "NNF003",
    "In-place functional activations become the activation and a rebinding",
    group=GROUP,
    why="""
        ``F.relu_(x)``, ``F.rrelu_`` (through the function of NNF001), ``F.elu_`` (``alpha=1.0`` only: MindSpore's ``ops.elu`` refuses
        other values, so another alpha is left as PyTorch), ``F.leaky_relu_``, ``F.hardtanh_`` and ``F.threshold_``
        overwrite their input. MindSpore 2.10 on CPU has no in-place kernels for them
        (``mint.nn.functional.relu_`` raises), so the call becomes the out-of-place
        ``mindspore.ops`` activation and the name is rebound: ``F.relu_(x)`` ->
        ``x = ops.relu(x)`` (``(x := ops.relu(x))`` inside an expression).
        ``leaky_relu_``'s ``negative_slope`` becomes ``ops.leaky_relu``'s ``alpha``
        (written out: MindSpore's default is 0.2, PyTorch's 0.01), ``threshold_``'s
        ``threshold`` becomes ``thr``. Only a plain name can be rebound; other references
        to the same tensor keep the old values (flagged where the port sees one, and
        inside a function).
    """,
    seed="seeds/002 API Comparison › functional APIs (mapping table)",
    reference=REF,
    example="""
        import torch
        import torch.nn.functional as F
        x = torch.linspace(-2, 2, 9)
        F.relu_(x)
        y = torch.linspace(-2, 2, 9)
        F.leaky_relu_(y, 0.1)
        z = torch.linspace(-2, 2, 9)
        F.hardtanh_(z, -1.0, 0.5)
    """,
)


register(
    "NNF004",
    "ReflectionPad's padding attribute reads as PyTorch's flat tuple",
    group=GROUP,
    why="""
        ``nn.ReflectionPad1d/2d/3d`` store ``padding`` as PyTorch's flat tuple, last
        dimension first: ``ReflectionPad2d((1, 2, 3, 4)).padding == (1, 2, 3, 4)`` (left,
        right, top, bottom). MindSpore's layers store it as a list of ``[before, after]``
        pairs, first dimension first: ``[[3, 4], [1, 2]]``. Code that reads the attribute
        (to log it, or to compute an output size) would get the other structure, so a read
        of ``pad.padding`` on a ported ReflectionPad becomes ``tuple(v for pair in
        reversed(pad.padding) for v in pair)``, which is PyTorch's tuple. Assigning the
        attribute is flagged: MindSpore's layer pads with what it computed when built.
        (The other padding layers, ``ReplicationPad*``, ``ZeroPad2d``, ``ConstantPad*``,
        already store PyTorch's tuple.)
    """,
    seed="seeds/002 API Comparison › nn APIs",
    reference=REF,
    installed_note="""
        Checked on MindSpore 2.10: ``nn.ReflectionPad2d((1, 2, 3, 4)).padding`` is
        ``[[3, 4], [1, 2]]``, ``nn.ReflectionPad3d(2).padding`` is ``[[2, 2], [2, 2], [2,
        2]]``; ``nn.ReplicationPad2d(2).padding`` is ``(2, 2, 2, 2)`` as in PyTorch.
    """,
    example="""
        import torch
        import torch.nn as nn
        pad = nn.ReflectionPad2d((1, 2, 3, 4))
        padding = pad.padding
        y = pad(torch.arange(2 * 5 * 6, dtype=torch.float32).reshape(1, 2, 5, 6))
    """,
)


register(
    "NNF005",
    "nn.utils and nn.init helpers MindSpore lacks become a defined function",
    group=GROUP,
    why="""
        ``nn.modules.utils._single/_pair/_triple/_ntuple`` (the argument parsers custom
        layers borrow), ``nn.utils.vector_to_parameters(vec, parameters)`` (the inverse of
        ``parameters_to_vector``), ``nn.utils.rnn.unpad_sequence(padded, lengths,
        batch_first)`` and ``nn.init._calculate_fan_in_and_fan_out(tensor)`` have no
        MindSpore function. Each is a few lines in PyTorch; the port writes them once in
        the cell with PyTorch's signature: the slices of ``vec`` are written into the
        Parameters with ``Parameter.set_data`` (PyTorch assigns ``param.data``), the
        sequences are cut to their lengths (with ``batch_first=False`` PyTorch also
        transposes the caller's tensor in place, which is not ported: flagged), and the fans are computed from the shape as
        PyTorch does (``mindspore.common.initializer._calculate_fan_in_and_fan_out`` takes
        a shape, not a tensor, and is private).
    """,
    seed="seeds/002 API Comparison › nn APIs",
    reference=REF,
    installed_note="""
        Checked on MindSpore 2.10: no ``vector_to_parameters``, ``unpad_sequence`` nor a
        public fan computation.
    """,
    example="""
        import torch
        import torch.nn as nn
        layer = nn.Linear(3, 2)
        nn.utils.vector_to_parameters(torch.arange(8, dtype=torch.float32), layer.parameters())
        y = layer(torch.ones(1, 3))
        fan_in, fan_out = nn.init._calculate_fan_in_and_fan_out(layer.weight)
    """,
)


# ----------------------------------------------------------------------------- sources
# ``{name}`` is the defined name, ``{ops}`` the ported code's ``mindspore.ops``,
# ``{ms}`` its ``mindspore``.

_REDUCE = (
    "    if reduction == 'mean':\n"
    "        return loss.mean()\n"
    "    if reduction == 'sum':\n"
    "        return loss.sum()\n"
    "    return loss\n"
)

FUNCTIONS = {
    "layer_norm": (
        "def {name}(input, normalized_shape, weight=None, bias=None, eps=1e-05):\n"
        '    """PyTorch\'s F.layer_norm: normalise over the last len(normalized_shape) dimensions."""\n'
        "    if isinstance(normalized_shape, int):\n"
        "        normalized_shape = (normalized_shape,)\n"
        "    axes = tuple(range(input.ndim - len(normalized_shape), input.ndim))\n"
        "    mean = {ops}.mean(input, axes, True)\n"
        "    var = {ops}.mean((input - mean) ** 2, axes, True)\n"
        "    out = (input - mean) / {ops}.sqrt(var + eps)\n"
        "    if weight is not None:\n"
        "        out = out * weight\n"
        "    if bias is not None:\n"
        "        out = out + bias\n"
        "    return out\n"
    ),
    "instance_norm": (
        "def {name}(input, running_mean=None, running_var=None, weight=None, bias=None,\n"
        "        use_input_stats=True, momentum=0.1, eps=1e-05):\n"
        '    """PyTorch\'s F.instance_norm with the input\'s own statistics (per sample and channel)."""\n'
        "    axes = tuple(range(2, input.ndim))\n"
        "    mean = {ops}.mean(input, axes, True)\n"
        "    var = {ops}.mean((input - mean) ** 2, axes, True)\n"
        "    out = (input - mean) / {ops}.sqrt(var + eps)\n"
        "    shape = (1, -1) + (1,) * (input.ndim - 2)\n"
        "    if weight is not None:\n"
        "        out = out * weight.reshape(shape)\n"
        "    if bias is not None:\n"
        "        out = out + bias.reshape(shape)\n"
        "    return out\n"
    ),
    "kl_div": (
        "def {name}(input, target, size_average=None, reduce=None, reduction='mean', log_target=False):\n"
        '    """PyTorch\'s F.kl_div: input holds log-probabilities; target probabilities\n'
        '    (log-probabilities with log_target=True)."""\n'
        "    if log_target:\n"
        "        loss = {ops}.exp(target) * (target - input)\n"
        "    else:\n"
        "        plogp = {ops}.where(target == 0, {ops}.zeros_like(target), target * {ops}.log(target))\n"
        "        loss = plogp - target * input\n"
        "    if reduction == 'batchmean':\n"
        "        return loss.sum() / (input.shape[0] if input.ndim > 0 else 1)\n"
        + _REDUCE
    ),
    "soft_margin_loss": (
        "def {name}(input, target, size_average=None, reduce=None, reduction='mean'):\n"
        '    """PyTorch\'s F.soft_margin_loss: log(1 + exp(-target * input))."""\n'
        "    loss = {ops}.log1p({ops}.exp(-target * input))\n"
        + _REDUCE
    ),
    "pairwise_distance": (
        "def {name}(x1, x2, p=2.0, eps=1e-06, keepdim=False):\n"
        '    """PyTorch\'s F.pairwise_distance: the p-norm of x1 - x2 + eps over the last dimension."""\n'
        "    return {ops}.norm(x1 - x2 + eps, ord=float(p), dim=-1, keepdim=keepdim)\n"
    ),
    "poisson_nll_loss": (
        "def {name}(input, target, log_input=True, full=False, size_average=None, eps=1e-08,\n"
        "        reduce=None, reduction='mean'):\n"
        '    """PyTorch\'s F.poisson_nll_loss."""\n'
        "    if log_input:\n"
        "        loss = {ops}.exp(input) - target * input\n"
        "    else:\n"
        "        loss = input - target * {ops}.log(input + eps)\n"
        "    if full:\n"
        "        stirling = target * {ops}.log(target) - target + 0.5 * {ops}.log(6.283185307179586 * target)\n"
        "        loss = loss + {ops}.where(target > 1, stirling, {ops}.zeros_like(stirling))\n"
        + _REDUCE
    ),
    "local_response_norm": (
        "def {name}(input, size, alpha=0.0001, beta=0.75, k=1.0):\n"
        '    """PyTorch\'s F.local_response_norm: each value over the mean of the squares of\n'
        '    `size` neighbouring channels (zero-padded)."""\n'
        "    channels = input.shape[1]\n"
        "    padding = (0, 0) * (input.ndim - 2) + (size // 2, (size - 1) // 2)\n"
        "    squares = {ops}.pad(input * input, padding)\n"
        "    div = squares[:, 0:channels]\n"
        "    for i in range(1, size):\n"
        "        div = div + squares[:, i:i + channels]\n"
        "    div = (div / size) * alpha + k\n"
        "    return input / div ** beta\n"
    ),
    "bilinear": (
        "def {name}(input1, input2, weight, bias=None):\n"
        '    """PyTorch\'s F.bilinear: y[..., o] = sum_ij input1[..., i] weight[o, i, j] input2[..., j] + bias[o]."""\n'
        "    out_features, in1, in2 = weight.shape\n"
        "    lead = tuple(input1.shape[:-1])\n"
        "    w = {ops}.permute(weight, (1, 0, 2)).reshape(in1, out_features * in2)\n"
        "    t = {ops}.matmul(input1.reshape(-1, in1), w).reshape(-1, out_features, in2)\n"
        "    out = (t * input2.reshape(-1, 1, in2)).sum(-1).reshape(lead + (out_features,))\n"
        "    if bias is not None:\n"
        "        out = out + bias\n"
        "    return out\n"
    ),
    "scaled_dot_product_attention": (
        "def {name}(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,\n"
        "        enable_gqa=False):\n"
        '    """PyTorch\'s F.scaled_dot_product_attention (its reference formula)."""\n'
        "    length, source = query.shape[-2], key.shape[-2]\n"
        "    scale_factor = query.shape[-1] ** -0.5 if scale is None else scale\n"
        "    if enable_gqa:\n"
        "        key = {ops}.repeat_interleave(key, query.shape[-3] // key.shape[-3], -3)\n"
        "        value = {ops}.repeat_interleave(value, query.shape[-3] // value.shape[-3], -3)\n"
        "    scores = {ops}.matmul(query, {ops}.swapaxes(key, -2, -1)) * scale_factor\n"
        "    if is_causal:\n"
        "        keep = {ops}.tril({ops}.ones((length, source), {ms}.int32)) > 0\n"
        "        scores = scores.masked_fill({ops}.logical_not(keep), float('-inf'))\n"
        "    if attn_mask is not None:\n"
        "        if attn_mask.dtype == {ms}.bool_:\n"
        "            scores = scores.masked_fill({ops}.logical_not(attn_mask), float('-inf'))\n"
        "        else:\n"
        "            scores = scores + attn_mask\n"
        "    weights = {ops}.softmax(scores, -1)\n"
        "    if dropout_p > 0.0:\n"
        "        weights = {ops}.dropout(weights, p=dropout_p)\n"
        "    return {ops}.matmul(weights, value)\n"
    ),
}

FUNCTIONS.update({
    "fold": (
        "def {name}(input, output_size, kernel_size, dilation=1, padding=0, stride=1):\n"
        '    """PyTorch\'s F.fold: ops.fold takes output_size as an int32 Tensor."""\n'
        "    if isinstance(output_size, int):\n"
        "        output_size = (output_size, output_size)\n"
        "    unbatched = input.ndim == 2\n"
        "    x = input.unsqueeze(0) if unbatched else input\n"
        "    out = {ops}.fold(x, {ms}.Tensor(tuple(output_size), {ms}.int32), kernel_size, dilation, padding, stride)\n"
        "    return out.squeeze(0) if unbatched else out\n"
    ),
    "unfold": (
        "def {name}(input, kernel_size, dilation=1, padding=0, stride=1):\n"
        '    """PyTorch\'s F.unfold (ops.unfold wants a batched input)."""\n'
        "    unbatched = input.ndim == 3\n"
        "    x = input.unsqueeze(0) if unbatched else input\n"
        "    out = {ops}.unfold(x, kernel_size, dilation, padding, stride)\n"
        "    return out.squeeze(0) if unbatched else out\n"
    ),
    "embedding": (
        "def {name}(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,\n"
        "        scale_grad_by_freq=False, sparse=False):\n"
        '    """PyTorch\'s F.embedding: the rows of weight at input (the padding row gets no gradient)."""\n'
        "    out = {ops}.gather(weight, input, 0)\n"
        "    if padding_idx is not None:\n"
        "        if padding_idx < 0:\n"
        "            padding_idx = weight.shape[0] + padding_idx\n"
        "        keep = (input != padding_idx).unsqueeze(-1)\n"
        "        out = {ops}.where(keep, out, {ops}.stop_gradient(out))\n"
        "    return out\n"
    ),
    "triplet_margin_loss": (
        "def {name}(anchor, positive, negative, margin=1.0, p=2, eps=1e-06, swap=False,\n"
        "        size_average=None, reduce=None, reduction='mean'):\n"
        '    """PyTorch\'s F.triplet_margin_loss: max(d(a, p) - d(a, n) + margin, 0), d the p-norm distance."""\n'
        "    d_pos = {ops}.norm(anchor - positive + eps, ord=float(p), dim=-1)\n"
        "    d_neg = {ops}.norm(anchor - negative + eps, ord=float(p), dim=-1)\n"
        "    if swap:\n"
        "        d_neg = {ops}.minimum(d_neg, {ops}.norm(positive - negative + eps, ord=float(p), dim=-1))\n"
        "    loss = {ops}.relu(margin + d_pos - d_neg)\n"
        + _REDUCE
    ),
    "triplet_margin_with_distance_loss": (
        "def {name}(anchor, positive, negative, *, distance_function=None, margin=1.0, swap=False,\n"
        "        reduction='mean'):\n"
        '    """PyTorch\'s F.triplet_margin_with_distance_loss (default distance: pairwise_distance)."""\n'
        "    if distance_function is None:\n"
        "        def distance_function(x1, x2):\n"
        "            return {ops}.norm(x1 - x2 + 1e-06, ord=2, dim=-1)\n"
        "    d_pos = distance_function(anchor, positive)\n"
        "    d_neg = distance_function(anchor, negative)\n"
        "    if swap:\n"
        "        d_neg = {ops}.minimum(d_neg, distance_function(positive, negative))\n"
        "    loss = {ops}.relu(margin + d_pos - d_neg)\n"
        + _REDUCE
    ),
    "multi_margin_loss": (
        "def {name}(input, target, p=1, margin=1.0, weight=None, size_average=None, reduce=None,\n"
        "        reduction='mean'):\n"
        '    """PyTorch\'s F.multi_margin_loss: sum over i != y of max(0, margin - x[y] + x[i]) ** p / C."""\n'
        "    x = input.reshape(1, -1) if input.ndim < 2 else input\n"
        "    t = target.reshape(-1)\n"
        "    classes = x.shape[1]\n"
        "    x_y = {ops}.gather_elements(x, 1, t.reshape(-1, 1))\n"
        "    m = {ops}.relu(margin - x_y + x)\n"
        "    if p == 2:\n"
        "        m = m * m\n"
        "    if weight is not None:\n"
        "        m = m * {ops}.gather(weight, t, 0).reshape(-1, 1)\n"
        "    on, off = {ops}.ones((), {ms}.float32), {ops}.zeros((), {ms}.float32)\n"
        "    others = 1 - {ops}.one_hot(t, classes, on, off).astype(x.dtype)\n"
        "    loss = (m * others).sum(1) / classes\n"
        "    if input.ndim < 2:\n"
        "        loss = loss.reshape(())\n"
        + _REDUCE
    ),
    "multilabel_margin_loss": (
        "def {name}(input, target, size_average=None, reduce=None, reduction='mean'):\n"
        '    """PyTorch\'s F.multilabel_margin_loss: the target classes come before the first -1;\n'
        '    sum over them (j) and the other classes (i) of max(0, 1 - (x[j] - x[i])) / C."""\n'
        "    x = input.reshape(1, -1) if input.ndim < 2 else input\n"
        "    t = target.reshape(x.shape)\n"
        "    classes = x.shape[1]\n"
        "    valid = {ops}.cumprod((t >= 0).astype(x.dtype), 1)\n"
        "    idx = {ops}.where(t >= 0, t, {ops}.zeros_like(t))\n"
        "    hits = (idx.unsqueeze(2) == {ops}.arange(classes).astype(idx.dtype)).astype(x.dtype)\n"
        "    is_target = ((hits * valid.unsqueeze(2)).sum(1) > 0).astype(x.dtype)\n"
        "    x_j = {ops}.gather_elements(x, 1, idx)\n"
        "    margins = {ops}.relu(1 - x_j.unsqueeze(2) + x.unsqueeze(1))\n"
        "    mask = valid.unsqueeze(2) * (1 - is_target).unsqueeze(1)\n"
        "    loss = (margins * mask).sum((1, 2)) / classes\n"
        "    if input.ndim < 2:\n"
        "        loss = loss.reshape(())\n"
        + _REDUCE
    ),
})


FUNCTIONS.update({
    "conv_transpose2d": (
        "def {name}(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):\n"
        '    """PyTorch\'s F.conv_transpose2d with the classic Conv2DTranspose primitive (CPU kernel)."""\n'
        "    def pair(v):\n"
        "        return (v, v) if isinstance(v, int) else tuple(v)\n"
        "    stride, padding, output_padding, dilation = pair(stride), pair(padding), pair(output_padding), pair(dilation)\n"
        "    unbatched = input.ndim == 3\n"
        "    x = input.unsqueeze(0) if unbatched else input\n"
        "    kernel = (weight.shape[2], weight.shape[3])\n"
        "    out_channels = weight.shape[1] * groups\n"
        "    size = (x.shape[0], out_channels) + tuple(\n"
        "        (x.shape[2 + i] - 1) * stride[i] - 2 * padding[i] + dilation[i] * (kernel[i] - 1) + output_padding[i] + 1\n"
        "        for i in range(2))\n"
        "    op = {ops}.Conv2DTranspose(out_channels, kernel, pad_mode='pad',\n"
        "                               pad=(padding[0], padding[0], padding[1], padding[1]),\n"
        "                               stride=stride, dilation=dilation, group=groups)\n"
        "    out = op(x, weight, size)\n"
        "    if bias is not None:\n"
        "        out = out + bias.reshape(1, -1, 1, 1)\n"
        "    return out.squeeze(0) if unbatched else out\n"
    ),
    "conv_transpose1d": (
        "def {name}(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):\n"
        '    """PyTorch\'s F.conv_transpose1d as a 2-D transposed convolution of height 1."""\n'
        "    def one(v):\n"
        "        return v if isinstance(v, int) else v[0]\n"
        "    unbatched = input.ndim == 2\n"
        "    x = input.unsqueeze(0) if unbatched else input\n"
        "    out = {dep}(x.unsqueeze(2), weight.unsqueeze(2), bias, (1, one(stride)), (0, one(padding)),\n"
        "               (0, one(output_padding)), groups, (1, one(dilation))).squeeze(2)\n"
        "    return out.squeeze(0) if unbatched else out\n"
    ),
    "conv_transpose3d": (
        "def {name}(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):\n"
        '    """PyTorch\'s F.conv_transpose3d with the classic Conv3DTranspose primitive (CPU kernel)."""\n'
        "    def triple(v):\n"
        "        return (v, v, v) if isinstance(v, int) else tuple(v)\n"
        "    padding = triple(padding)\n"
        "    unbatched = input.ndim == 4\n"
        "    x = input.unsqueeze(0) if unbatched else input\n"
        "    op = {ops}.Conv3DTranspose(weight.shape[0], weight.shape[1] * groups, tuple(weight.shape[2:]),\n"
        "                               pad_mode='pad', pad=(padding[0], padding[0], padding[1], padding[1],\n"
        "                                                    padding[2], padding[2]),\n"
        "                               stride=triple(stride), dilation=triple(dilation), group=groups,\n"
        "                               output_padding=triple(output_padding))\n"
        "    out = op(x, weight)\n"
        "    if bias is not None:\n"
        "        out = out + bias.reshape(1, -1, 1, 1, 1)\n"
        "    return out.squeeze(0) if unbatched else out\n"
    ),
    "adaptive_avg_pool1d": (
        "def {name}(input, output_size):\n"
        '    """PyTorch\'s F.adaptive_avg_pool1d: window i spans [floor(i*L/n), ceil((i+1)*L/n))."""\n'
        "    n = output_size if isinstance(output_size, int) else output_size[0]\n"
        "    length = input.shape[-1]\n"
        "    return {ops}.cat([{ops}.mean(input[..., (i * length) // n:-((-(i + 1) * length) // n)], -1, True)\n"
        "                    for i in range(n)], -1)\n"
    ),
    "adaptive_max_pool1d": (
        "def {name}(input, output_size, return_indices=False):\n"
        '    """PyTorch\'s F.adaptive_max_pool1d: window i spans [floor(i*L/n), ceil((i+1)*L/n))."""\n'
        "    n = output_size if isinstance(output_size, int) else output_size[0]\n"
        "    length = input.shape[-1]\n"
        "    bounds = [((i * length) // n, -((-(i + 1) * length) // n)) for i in range(n)]\n"
        "    values = {ops}.cat([{ops}.amax(input[..., a:b], -1, True) for a, b in bounds], -1)\n"
        "    if not return_indices:\n"
        "        return values\n"
        "    indices = {ops}.cat([{ops}.argmax(input[..., a:b], -1, True) + a for a, b in bounds], -1)\n"
        "    return values, indices.astype({ms}.int64)\n"
    ),
    "avg_pool3d": (
        "def {name}(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,\n"
        "        divisor_override=None):\n"
        '    """PyTorch\'s F.avg_pool3d: ops.avg_pool3d defaults stride to 1, not to the kernel size."""\n'
        "    if stride is None or (not isinstance(stride, int) and len(stride) == 0):\n"
        "        stride = kernel_size\n"
        "    if not isinstance(padding, int):\n"
        "        padding = tuple(p for p in padding for _ in range(2))\n"
        "    unbatched = input.ndim == 4\n"
        "    x = input.unsqueeze(0) if unbatched else input\n"
        "    out = {ops}.avg_pool3d(x, kernel_size, stride, padding, ceil_mode, count_include_pad,\n"
        "                          divisor_override or 0)\n"
        "    return out.squeeze(0) if unbatched else out\n"
    ),
    "max_pool1d": (
        "def {name}(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):\n"
        '    """PyTorch\'s F.max_pool1d as a 2-D max pooling of height 1."""\n'
        "    def one(v):\n"
        "        return v if isinstance(v, int) else v[0]\n"
        "    kernel = one(kernel_size)\n"
        "    step = kernel if stride is None or (not isinstance(stride, int) and len(stride) == 0) else one(stride)\n"
        "    unbatched = input.ndim == 2\n"
        "    x = (input.unsqueeze(0) if unbatched else input).unsqueeze(2)\n"
        "    out = {ops}.max_pool2d(x, (1, kernel), (1, step), (0, one(padding)), (1, one(dilation)),\n"
        "                          return_indices=return_indices, ceil_mode=ceil_mode)\n"
        "    def back(t):\n"
        "        t = t.squeeze(2)\n"
        "        return t.squeeze(0) if unbatched else t\n"
        "    return (back(out[0]), back(out[1])) if return_indices else back(out)\n"
    ),
})
DEPENDS = {"conv_transpose1d": "conv_transpose2d"}


_ALPHA_DROPOUT = (
    "def {name}(input, p=0.5, training=False, inplace=False):\n"
    '    """PyTorch\'s F.{torch_name}: in training, dropped {what} are set to the SELU\n'
    '    saturation value and the result is scaled to keep mean and variance."""\n'
    "    if not training or p == 0:\n"
    "        return input\n"
    "    if p == 1:\n"
    "        return input * 0\n"
    "    alpha = 1.7580993408473766\n"
    "    a = 1.0 / ((alpha * alpha * p + 1) * (1 - p)) ** 0.5\n"
    "    shape = {shape}\n"
    "    keep = ({ops}.rand(*shape) >= p).astype(input.dtype)\n"
    "    b = (keep - 1) * (alpha * a) + alpha * a * p\n"
    "    return input * (keep * a) + b\n"
)
FUNCTIONS.update({
    "alpha_dropout": _ALPHA_DROPOUT.replace("{torch_name}", "alpha_dropout").replace("{what}", "elements")
    .replace("{shape}", "input.shape"),
    "feature_alpha_dropout": _ALPHA_DROPOUT.replace("{torch_name}", "feature_alpha_dropout")
    .replace("{what}", "channels").replace("{shape}", "tuple(input.shape[:2]) + (1,) * (input.ndim - 2)"),
    "rrelu": (
        "def {name}(input, lower=0.125, upper=0.3333333333333333, training=False, inplace=False):\n"
        '    """PyTorch\'s F.rrelu: negative values times a slope drawn from U(lower, upper) in\n'
        '    training, times (lower + upper) / 2 otherwise."""\n'
        "    if training:\n"
        "        slope = {ops}.rand(*input.shape).astype(input.dtype) * (upper - lower) + lower\n"
        "    else:\n"
        "        slope = (lower + upper) / 2\n"
        "    return {ops}.where(input >= 0, input, input * slope)\n"
    ),
    "prelu": (
        "def {name}(input, weight):\n"
        '    """PyTorch\'s F.prelu: negative values times weight, one slope per channel (dim 1)."""\n'
        "    if input.ndim >= 2 and weight.ndim == 1 and weight.shape[0] > 1:\n"
        "        weight = weight.reshape((-1,) + (1,) * (input.ndim - 2))\n"
        "    return {ops}.where(input >= 0, input, input * weight)\n"
    ),
    "vector_to_parameters": (
        "def {name}(vec, parameters):\n"
        '    """PyTorch\'s nn.utils.vector_to_parameters: slices of vec written into the parameters."""\n'
        "    offset = 0\n"
        "    for param in parameters:\n"
        "        count = param.size\n"
        "        param.set_data(vec[offset:offset + count].reshape(param.shape).astype(param.dtype))\n"
        "        offset += count\n"
    ),
    "unpad_sequence": (
        "def {name}(padded_sequences, lengths, batch_first=False):\n"
        '    """PyTorch\'s nn.utils.rnn.unpad_sequence: the first length[i] steps of each sequence."""\n'
        "    if not batch_first:\n"
        "        padded_sequences = {ops}.swapaxes(padded_sequences, 0, 1)\n"
        "    return [padded_sequences[i][:int(length)] for i, length in enumerate(lengths)]\n"
    ),
    "_calculate_fan_in_and_fan_out": (
        "def {name}(tensor):\n"
        '    """PyTorch\'s nn.init._calculate_fan_in_and_fan_out: (fan_in, fan_out) of a weight."""\n'
        "    if tensor.ndim < 2:\n"
        "        raise ValueError('Fan in and fan out can not be computed for tensor with fewer than 2 dimensions')\n"
        "    receptive = 1\n"
        "    for size in tensor.shape[2:]:\n"
        "        receptive *= size\n"
        "    return tensor.shape[1] * receptive, tensor.shape[0] * receptive\n"
    ),
})


FUNCTIONS["_ntuple"] = (
    "def {name}(n, name='parse'):\n"
    '    """PyTorch\'s nn.modules.utils._ntuple: a parser repeating a single value n times\n'
    '    (an iterable other than a string is returned as a tuple)."""\n'
    "    def parse(x):\n"
    "        if hasattr(x, '__iter__') and not isinstance(x, str):\n"
    "            return tuple(x)\n"
    "        return tuple([x] * n)\n"
    "    parse.__name__ = name\n"
    "    return parse\n"
)
for _n, _k in (("_single", 1), ("_pair", 2), ("_triple", 3)):
    FUNCTIONS[_n] = (
        "def {name}(x):\n"
        '    """PyTorch\'s nn.modules.utils.' + _n + ': x repeated ' + str(_k) + ' times\n'
        '    (an iterable other than a string is returned as a tuple)."""\n'
        "    if hasattr(x, '__iter__') and not isinstance(x, str):\n"
        "        return tuple(x)\n"
        "    return tuple([x] * " + str(_k) + ")\n"
    )


_INSTANCE_NORM_CLASS = (
    "class {name}({cell}):\n"
    '    """PyTorch\'s nn.InstanceNorm{d}d without running statistics: each sample and\n'
    '    channel normalised by its own mean and variance (weight and bias when affine)."""\n'
    "\n"
    "    def __init__(self, num_features, eps=1e-05, momentum=0.1, affine=False, track_running_stats=False):\n"
    "        super().__init__()\n"
    "        self.num_features = num_features\n"
    "        self.eps = eps\n"
    "        self.momentum = momentum\n"
    "        self.affine = affine\n"
    "        self.track_running_stats = track_running_stats\n"
    "        if affine:\n"
    "            self.weight = {ms}.Parameter({ops}.ones(num_features, {ms}.float32), name='weight')\n"
    "            self.bias = {ms}.Parameter({ops}.zeros(num_features, {ms}.float32), name='bias')\n"
    "        else:\n"
    "            self.weight = None\n"
    "            self.bias = None\n"
    "\n"
    "    def construct(self, input):\n"
    "        unbatched = input.ndim == {d} + 1\n"
    "        x = input.unsqueeze(0) if unbatched else input\n"
    "        out = {fn}(x, weight=self.weight, bias=self.bias, eps=self.eps)\n"
    "        return out.squeeze(0) if unbatched else out\n"
)

CLASSES = {
    "KLDivLoss": (
        ("kl_div",),
        "class {name}({cell}):\n"
        '    """PyTorch\'s nn.KLDivLoss."""\n'
        "\n"
        "    def __init__(self, size_average=None, reduce=None, reduction='mean', log_target=False):\n"
        "        super().__init__()\n"
        "        self.reduction = reduction\n"
        "        self.log_target = log_target\n"
        "\n"
        "    def construct(self, input, target):\n"
        "        return {fn}(input, target, reduction=self.reduction, log_target=self.log_target)\n"
    ),
    "SoftMarginLoss": (
        ("soft_margin_loss",),
        "class {name}({cell}):\n"
        '    """PyTorch\'s nn.SoftMarginLoss."""\n'
        "\n"
        "    def __init__(self, size_average=None, reduce=None, reduction='mean'):\n"
        "        super().__init__()\n"
        "        self.reduction = reduction\n"
        "\n"
        "    def construct(self, input, target):\n"
        "        return {fn}(input, target, reduction=self.reduction)\n"
    ),
    "PairwiseDistance": (
        ("pairwise_distance",),
        "class {name}({cell}):\n"
        '    """PyTorch\'s nn.PairwiseDistance."""\n'
        "\n"
        "    def __init__(self, p=2.0, eps=1e-06, keepdim=False):\n"
        "        super().__init__()\n"
        "        self.norm = p\n"
        "        self.eps = eps\n"
        "        self.keepdim = keepdim\n"
        "\n"
        "    def construct(self, x1, x2):\n"
        "        return {fn}(x1, x2, p=self.norm, eps=self.eps, keepdim=self.keepdim)\n"
    ),
    "CosineSimilarity": (
        (),
        "class {name}({cell}):\n"
        '    """PyTorch\'s nn.CosineSimilarity: cosine similarity of x1 and x2 along dim."""\n'
        "\n"
        "    def __init__(self, dim=1, eps=1e-08):\n"
        "        super().__init__()\n"
        "        self.dim = dim\n"
        "        self.eps = eps\n"
        "\n"
        "    def construct(self, x1, x2):\n"
        "        return {ops}.cosine_similarity(x1, x2, dim=self.dim, eps=self.eps)\n"
    ),
}
CLASSES.update({
    "Fold": (
        ("fold",),
        "class {name}({cell}):\n"
        '    """PyTorch\'s nn.Fold."""\n'
        "\n"
        "    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1):\n"
        "        super().__init__()\n"
        "        self.output_size = output_size\n"
        "        self.kernel_size = kernel_size\n"
        "        self.dilation = dilation\n"
        "        self.padding = padding\n"
        "        self.stride = stride\n"
        "\n"
        "    def construct(self, input):\n"
        "        return {fn}(input, self.output_size, self.kernel_size, self.dilation, self.padding, self.stride)\n"
    ),
    "Unfold": (
        ("unfold",),
        "class {name}({cell}):\n"
        '    """PyTorch\'s nn.Unfold."""\n'
        "\n"
        "    def __init__(self, kernel_size, dilation=1, padding=0, stride=1):\n"
        "        super().__init__()\n"
        "        self.kernel_size = kernel_size\n"
        "        self.dilation = dilation\n"
        "        self.padding = padding\n"
        "        self.stride = stride\n"
        "\n"
        "    def construct(self, input):\n"
        "        return {fn}(input, self.kernel_size, self.dilation, self.padding, self.stride)\n"
    ),
    "TripletMarginLoss": (
        ("triplet_margin_loss",),
        "class {name}({cell}):\n"
        '    """PyTorch\'s nn.TripletMarginLoss."""\n'
        "\n"
        "    def __init__(self, margin=1.0, p=2.0, eps=1e-06, swap=False, size_average=None, reduce=None,\n"
        "            reduction='mean'):\n"
        "        super().__init__()\n"
        "        self.margin = margin\n"
        "        self.p = p\n"
        "        self.eps = eps\n"
        "        self.swap = swap\n"
        "        self.reduction = reduction\n"
        "\n"
        "    def construct(self, anchor, positive, negative):\n"
        "        return {fn}(anchor, positive, negative, margin=self.margin, p=self.p, eps=self.eps,\n"
        "                    swap=self.swap, reduction=self.reduction)\n"
    ),
    "TripletMarginWithDistanceLoss": (
        ("triplet_margin_with_distance_loss",),
        "class {name}({cell}):\n"
        '    """PyTorch\'s nn.TripletMarginWithDistanceLoss."""\n'
        "\n"
        "    def __init__(self, *, distance_function=None, margin=1.0, swap=False, reduction='mean'):\n"
        "        super().__init__()\n"
        "        self.distance_function = distance_function\n"
        "        self.margin = margin\n"
        "        self.swap = swap\n"
        "        self.reduction = reduction\n"
        "\n"
        "    def construct(self, anchor, positive, negative):\n"
        "        return {fn}(anchor, positive, negative, distance_function=self.distance_function,\n"
        "                    margin=self.margin, swap=self.swap, reduction=self.reduction)\n"
    ),
    "MultiLabelMarginLoss": (
        ("multilabel_margin_loss",),
        "class {name}({cell}):\n"
        '    """PyTorch\'s nn.MultiLabelMarginLoss."""\n'
        "\n"
        "    def __init__(self, size_average=None, reduce=None, reduction='mean'):\n"
        "        super().__init__()\n"
        "        self.reduction = reduction\n"
        "\n"
        "    def construct(self, input, target):\n"
        "        return {fn}(input, target, reduction=self.reduction)\n"
    ),
})
CLASSES.update({
    "AdaptiveAvgPool1d": (
        ("adaptive_avg_pool1d",),
        "class {name}({cell}):\n"
        '    """PyTorch\'s nn.AdaptiveAvgPool1d (any input length)."""\n'
        "\n"
        "    def __init__(self, output_size):\n"
        "        super().__init__()\n"
        "        self.output_size = output_size\n"
        "\n"
        "    def construct(self, input):\n"
        "        return {fn}(input, self.output_size)\n"
    ),
    "AdaptiveMaxPool1d": (
        ("adaptive_max_pool1d",),
        "class {name}({cell}):\n"
        '    """PyTorch\'s nn.AdaptiveMaxPool1d (any input length)."""\n'
        "\n"
        "    def __init__(self, output_size, return_indices=False):\n"
        "        super().__init__()\n"
        "        self.output_size = output_size\n"
        "        self.return_indices = return_indices\n"
        "\n"
        "    def construct(self, input):\n"
        "        return {fn}(input, self.output_size, self.return_indices)\n"
    ),
})
_DROPOUT_CLASS = (
    "class {name}({cell}):\n"
    '    """PyTorch\'s nn.{torch_name}: identity unless the Cell is training."""\n'
    "\n"
    "    def __init__(self, p=0.5, inplace=False):\n"
    "        super().__init__()\n"
    "        self.p = p\n"
    "        self.inplace = inplace\n"
    "\n"
    "    def construct(self, input):\n"
    "        return {fn}(input, self.p, self.training)\n"
)
CLASSES.update({
    "AlphaDropout": (("alpha_dropout",), _DROPOUT_CLASS.replace("{torch_name}", "AlphaDropout")),
    "FeatureAlphaDropout": (("feature_alpha_dropout",),
                            _DROPOUT_CLASS.replace("{torch_name}", "FeatureAlphaDropout")),
    "RReLU": (
        ("rrelu",),
        "class {name}({cell}):\n"
        '    """PyTorch\'s nn.RReLU: a random negative slope in training, the mean slope otherwise."""\n'
        "\n"
        "    def __init__(self, lower=0.125, upper=0.3333333333333333, inplace=False):\n"
        "        super().__init__()\n"
        "        self.lower = lower\n"
        "        self.upper = upper\n"
        "        self.inplace = inplace\n"
        "\n"
        "    def construct(self, input):\n"
        "        return {fn}(input, self.lower, self.upper, self.training)\n"
    ),
})
for _d in (1, 2, 3):
    CLASSES[f"InstanceNorm{_d}d"] = (("instance_norm",), _INSTANCE_NORM_CLASS.replace("{d}", str(_d)))


def _define_function(site, base: str) -> str:
    ops = site.code(site.ref("mindspore.ops"))
    ms = site.code(site.ref("mindspore"))
    source = FUNCTIONS[base]
    dep = _define_function(site, DEPENDS[base]) if base in DEPENDS else ""
    return site.define(base, lambda n: source.format(name=n, ops=ops, ms=ms, dep=dep),
                       stands_for=(site.api,))


def _define_class(site, base: str) -> str:
    uses, source = CLASSES[base]
    fn = _define_function(site, uses[0]) if uses else ""
    ops = site.code(site.ref("mindspore.ops"))
    ms = site.code(site.ref("mindspore"))
    cell = site.code(site.ref("mindspore.nn.Cell"))
    return site.define(base, lambda n: source.format(name=n, ops=ops, ms=ms, cell=cell, fn=fn),
                       stands_for=(site.api,))


def _function_handler(base: str, rule: str = "NNF001", check=None, rebind=False, training=False):
    def handler(site):
        if site.bound() is None:
            return None
        if check is not None and not check(site):
            return None
        name = _define_class(site, base) if rule == "NNF002" else _define_function(site, base)
        new = site.apply(func=cst.Name(name))
        if rebind:
            new = _rebind_first(site, new)
            if new is None:
                return None
        what = "a mindspore.nn.Cell" if rule == "NNF002" else "a function of mindspore.ops"
        site.edit(rule, new, detail=site.describe(f"{site.api} -> {name}(), {what} the port defines"))
        if training:
            from msmagic.rules.cells import train_mode
            return train_mode(site, new)
        return new
    return handler


def _literal(site, name, default):
    arg = site.arg(name)
    if arg is None:
        return default
    return literal(arg.value, "?")


def _instance_norm_check(site) -> bool:
    if _literal(site, "use_input_stats", True) is not True:
        site.finding("NNF001", "F.instance_norm(use_input_stats=False) normalises with the running statistics: "
                     "not ported", comment="instance_norm with running statistics not ported")
        return False
    return True


def _instance_norm_layer_check(site) -> bool:
    if _literal(site, "track_running_stats", False) is not False:
        site.finding("NNF002", "InstanceNorm with track_running_stats=True uses and updates running statistics "
                     "(eval mode normalises with them): not ported", comment="track_running_stats=True not ported")
        return False
    return True


def _running_stats(site, arg) -> bool:
    return literal(arg.value, "?") is not None


def _dropout_check(site) -> bool:
    value = _literal(site, "dropout_p", 0.0)
    if value != 0:
        site.finding("NNF001", "scaled_dot_product_attention with dropout_p > 0 drops attention weights at "
                     "random (ops.dropout): the values differ from PyTorch's draw",
                     comment="dropout_p > 0: random, values differ from PyTorch's")
    return True


_STATS = "the in-place update of PyTorch's running statistics is not ported (the output does not use them)"

api(f"{F}.layer_norm", rule="NNF001", sig=("input", "normalized_shape", "weight", "bias", "eps"),
    handler=_function_handler("layer_norm"))
api(f"{F}.instance_norm", rule="NNF001",
    sig=("input", "running_mean", "running_var", "weight", "bias", "use_input_stats", "momentum", "eps"),
    unsupported={"running_mean": (_running_stats, _STATS), "running_var": (_running_stats, _STATS)},
    handler=_function_handler("instance_norm", check=_instance_norm_check))
api(f"{F}.kl_div", rule="NNF001", sig=("input", "target", "size_average", "reduce", "reduction", "log_target"),
    unsupported=_LOSS_UNSUPPORTED, handler=_function_handler("kl_div"))
api(f"{F}.soft_margin_loss", rule="NNF001", sig=("input", "target", "size_average", "reduce", "reduction"),
    unsupported=_LOSS_UNSUPPORTED, handler=_function_handler("soft_margin_loss"))
api(f"{F}.pairwise_distance", rule="NNF001", sig=("x1", "x2", "p", "eps", "keepdim"),
    handler=_function_handler("pairwise_distance"))
api(f"{F}.poisson_nll_loss", rule="NNF001",
    sig=("input", "target", "log_input", "full", "size_average", "eps", "reduce", "reduction"),
    unsupported=_LOSS_UNSUPPORTED, handler=_function_handler("poisson_nll_loss"))
api(f"{F}.local_response_norm", rule="NNF001", sig=("input", "size", "alpha", "beta", "k"),
    handler=_function_handler("local_response_norm"))
api(f"{F}.bilinear", rule="NNF001", sig=("input1", "input2", "weight", "bias"),
    handler=_function_handler("bilinear"))
api(f"{F}.scaled_dot_product_attention", rule="NNF001",
    sig=("query", "key", "value", "attn_mask", "dropout_p", "is_causal", "scale", "enable_gqa"),
    handler=_function_handler("scaled_dot_product_attention", check=_dropout_check))

api(f"{F}.fold", rule="NNF001", sig=("input", "output_size", "kernel_size", "dilation", "padding", "stride"),
    handler=_function_handler("fold"))
api(f"{F}.unfold", rule="NNF001", sig=("input", "kernel_size", "dilation", "padding", "stride"),
    handler=_function_handler("unfold"))
api(f"{F}.embedding", rule="NNF001",
    sig=("input", "weight", "padding_idx", "max_norm", "norm_type", "scale_grad_by_freq", "sparse"),
    unsupported={"max_norm": (_not_none, "max_norm renormalises the looked-up rows of weight in place: "
                              "not ported"),
                 "scale_grad_by_freq": (lambda site, arg: literal(arg.value, "?") is not False,
                                        "MindSpore has no gradient scaling by frequency")},
    handler=_function_handler("embedding"))
api(f"{F}.triplet_margin_loss", rule="NNF001",
    sig=("anchor", "positive", "negative", "margin", "p", "eps", "swap", "size_average", "reduce", "reduction"),
    unsupported=_LOSS_UNSUPPORTED, handler=_function_handler("triplet_margin_loss"))
api(f"{F}.triplet_margin_with_distance_loss", rule="NNF001",
    sig=("anchor", "positive", "negative", "distance_function", "margin", "swap", "reduction"),
    handler=_function_handler("triplet_margin_with_distance_loss"))
api(f"{F}.multi_margin_loss", rule="NNF001",
    sig=("input", "target", "p", "margin", "weight", "size_average", "reduce", "reduction"),
    unsupported=_LOSS_UNSUPPORTED, handler=_function_handler("multi_margin_loss"))
api(f"{F}.multilabel_margin_loss", rule="NNF001", sig=("input", "target", "size_average", "reduce", "reduction"),
    unsupported=_LOSS_UNSUPPORTED, handler=_function_handler("multilabel_margin_loss"))
api("torch.nn.Fold", rule="NNF002", sig=("output_size", "kernel_size", "dilation", "padding", "stride"),
    handler=_function_handler("Fold", "NNF002"), returns="module:torch.nn.Fold")
api("torch.nn.Unfold", rule="NNF002", sig=("kernel_size", "dilation", "padding", "stride"),
    handler=_function_handler("Unfold", "NNF002"), returns="module:torch.nn.Unfold")
api("torch.nn.TripletMarginLoss", rule="NNF002",
    sig=("margin", "p", "eps", "swap", "size_average", "reduce", "reduction"),
    unsupported=_LOSS_UNSUPPORTED, handler=_function_handler("TripletMarginLoss", "NNF002"),
    returns="module:torch.nn.TripletMarginLoss")
api("torch.nn.TripletMarginWithDistanceLoss", rule="NNF002",
    sig=("distance_function", "margin", "swap", "reduction"),
    handler=_function_handler("TripletMarginWithDistanceLoss", "NNF002"),
    returns="module:torch.nn.TripletMarginWithDistanceLoss")
api("torch.nn.MultiLabelMarginLoss", rule="NNF002", sig=("size_average", "reduce", "reduction"),
    unsupported=_LOSS_UNSUPPORTED, handler=_function_handler("MultiLabelMarginLoss", "NNF002"),
    returns="module:torch.nn.MultiLabelMarginLoss")

_CONV_SIG = ("input", "weight", "bias", "stride", "padding", "output_padding", "groups", "dilation")


def _dilation_one(site) -> bool:
    value = _literal(site, "dilation", 1)
    if value not in (1, (1, 1, 1), [1, 1, 1]):
        site.finding("NNF001", "F.conv_transpose3d with dilation other than 1: MindSpore 2.10's Conv3DTranspose "
                     "refuses a depth dilation other than 1", comment="conv_transpose3d dilation not ported")
        return False
    return True


for _d in (1, 2, 3):
    api(f"{F}.conv_transpose{_d}d", rule="NNF001", sig=_CONV_SIG,
        handler=_function_handler(f"conv_transpose{_d}d", check=_dilation_one if _d == 3 else None))
api(f"{F}.adaptive_avg_pool1d", rule="NNF001", sig=("input", "output_size"),
    handler=_function_handler("adaptive_avg_pool1d"))
api(f"{F}.adaptive_max_pool1d", rule="NNF001", sig=("input", "output_size", "return_indices"),
    handler=_function_handler("adaptive_max_pool1d"))
api(f"{F}.avg_pool3d", rule="NNF001",
    sig=("input", "kernel_size", "stride", "padding", "ceil_mode", "count_include_pad", "divisor_override"),
    handler=_function_handler("avg_pool3d"))
api(f"{F}.max_pool1d", rule="NNF001",
    sig=("input", "kernel_size", "stride", "padding", "dilation", "ceil_mode", "return_indices"),
    handler=_function_handler("max_pool1d"))
api("torch.nn.AdaptiveAvgPool1d", rule="NNF002", sig=("output_size",),
    handler=_function_handler("AdaptiveAvgPool1d", "NNF002"), returns="module:torch.nn.AdaptiveAvgPool1d")
api("torch.nn.AdaptiveMaxPool1d", rule="NNF002", sig=("output_size", "return_indices"),
    handler=_function_handler("AdaptiveMaxPool1d", "NNF002"), returns="module:torch.nn.AdaptiveMaxPool1d")

_INPLACE_TRUE = (lambda site, arg: literal(arg.value, "?") is not False,
                 "inplace=True: the input is not overwritten in MindSpore")
for _f in ("alpha_dropout", "feature_alpha_dropout"):
    api(f"{F}.{_f}", rule="NNF001", sig=("input", "p", "training", "inplace"),
        unsupported={"inplace": _INPLACE_TRUE}, handler=_function_handler(_f), random=True)
for _c in ("AlphaDropout", "FeatureAlphaDropout"):
    api(f"torch.nn.{_c}", rule="NNF002", sig=("p", "inplace"), unsupported={"inplace": _INPLACE_TRUE},
        handler=_function_handler(_c, "NNF002", training=True), returns=f"module:torch.nn.{_c}")
api(f"{F}.rrelu", rule="NNF001", sig=("input", "lower", "upper", "training", "inplace"),
    unsupported={"inplace": _INPLACE_TRUE}, handler=_function_handler("rrelu"), random=True)
api(f"{F}.rrelu_", rule="NNF003", sig=("input", "lower", "upper", "training"),
    handler=_function_handler("rrelu", "NNF003", rebind=True))
api("torch.nn.RReLU", rule="NNF002", sig=("lower", "upper", "inplace"), unsupported={"inplace": _INPLACE_TRUE},
    handler=_function_handler("RReLU", "NNF002", training=True), returns="module:torch.nn.RReLU")
api(f"{F}.prelu", rule="NNF001", sig=("input", "weight"), handler=_function_handler("prelu"))
api("torch.nn.utils.vector_to_parameters", rule="NNF005", sig=("vec", "parameters"),
    handler=_function_handler("vector_to_parameters", "NNF005"), returns=None)
def _unpad_check(site) -> bool:
    if _literal(site, "batch_first", False) is not True:
        site.finding("NNF005", "with batch_first=False PyTorch's unpad_sequence also transposes padded_sequences "
                     "in place (the caller's tensor becomes batch-first); the port leaves it as it was",
                     comment="unpad_sequence: the in-place transpose of the input is not ported")
    return True


api("torch.nn.utils.rnn.unpad_sequence", rule="NNF005", sig=("padded_sequences", "lengths", "batch_first"),
    handler=_function_handler("unpad_sequence", "NNF005", check=_unpad_check), returns=None)
api("torch.nn.init._calculate_fan_in_and_fan_out", rule="NNF005", sig=("tensor",),
    handler=_function_handler("_calculate_fan_in_and_fan_out", "NNF005"), returns=None)

api("torch.nn.modules.utils._ntuple", rule="NNF005", sig=("n", "name"),
    handler=_function_handler("_ntuple", "NNF005"), returns=None)
for _n in ("_single", "_pair", "_triple"):
    api(f"torch.nn.modules.utils.{_n}", rule="NNF005", sig=("x",),
        handler=_function_handler(_n, "NNF005"), returns=None)

api("torch.nn.KLDivLoss", rule="NNF002", sig=("size_average", "reduce", "reduction", "log_target"),
    unsupported=_LOSS_UNSUPPORTED, handler=_function_handler("KLDivLoss", "NNF002"),
    returns="module:torch.nn.KLDivLoss")
api("torch.nn.SoftMarginLoss", rule="NNF002", sig=("size_average", "reduce", "reduction"),
    unsupported=_LOSS_UNSUPPORTED, handler=_function_handler("SoftMarginLoss", "NNF002"),
    returns="module:torch.nn.SoftMarginLoss")
api("torch.nn.PairwiseDistance", rule="NNF002", sig=("p", "eps", "keepdim"),
    handler=_function_handler("PairwiseDistance", "NNF002"), returns="module:torch.nn.PairwiseDistance")
api("torch.nn.CosineSimilarity", rule="NNF002", sig=("dim", "eps"),
    handler=_function_handler("CosineSimilarity", "NNF002"), returns="module:torch.nn.CosineSimilarity")
for _d in (1, 2, 3):
    api(f"torch.nn.InstanceNorm{_d}d", rule="NNF002",
        sig=("num_features", "eps", "momentum", "affine", "track_running_stats", "device", "dtype"),
        drop={"device": DEVICE_RULE},
        unsupported={"dtype": "pass dtype by hand: the defined Cell holds float32 parameters"},
        handler=_function_handler(f"InstanceNorm{_d}d", "NNF002", check=_instance_norm_layer_check),
        returns=f"module:torch.nn.InstanceNorm{_d}d")


# ----------------------------------------------------------------------------- NNF003


def _rebind_first(site, new):
    """``F.relu_(x)`` -> ``x = ops.relu(x)``: the first argument rebound (API003's logic)."""
    bound = site.bound() or []
    first = next((a for p, a, _ in bound if p == "input"), None)
    original = site.original.args[0].value if site.original.args else None
    if first is None or original is None:
        site.finding("NNF003", f"{site.api}: only a plain name can be rebound to the result; assign the "
                     "out-of-place result yourself", comment=f"{site.api}: in-place update not ported")
        return None
    return _rebind(site, site.api, new, recv=original, rule="NNF003")


def _inplace(target: str, check=None):
    def handler(site):
        if site.bound() is None:
            return None
        if check is not None and not check(site):
            return None
        new = site.apply(func=site.ref(target))
        rebound = _rebind_first(site, new)
        if rebound is None:
            return None
        site.edit("NNF003", rebound, detail=site.describe(f"{site.api} -> {target}, name rebound"))
        return rebound
    return handler


api(f"{F}.relu_", rule="NNF003", sig=("input",), handler=_inplace("mindspore.ops.relu"))
def _elu_alpha(site) -> bool:
    if _literal(site, "alpha", 1.0) != 1.0:
        site.finding("NNF003", "F.elu_ with alpha other than 1.0: MindSpore 2.10's ops.elu accepts only "
                     "alpha=1.0 (ValueError otherwise)", comment="elu_ alpha != 1.0 not ported")
        return False
    return True


api(f"{F}.elu_", rule="NNF003", sig=("input", "alpha"), rename={"input": "input_x"},
    handler=_inplace("mindspore.ops.elu", check=_elu_alpha))
api(f"{F}.leaky_relu_", rule="NNF003", sig=("input", "negative_slope"), rename={"negative_slope": "alpha"},
    ms_sig=("input", "alpha"), defaults={"alpha": "0.01"}, handler=_inplace("mindspore.ops.leaky_relu"))
api(f"{F}.hardtanh_", rule="NNF003", sig=("input", "min_val", "max_val"), handler=_inplace("mindspore.ops.hardtanh"))
api(f"{F}.threshold_", rule="NNF003", sig=("input", "threshold", "value"), rename={"threshold": "thr"},
    ms_sig=("input", "thr", "value"), handler=_inplace("mindspore.ops.threshold"))


# ----------------------------------------------------------------------------- NNF004


_is_store = _store  # is the attribute written rather than read (layers.py)


def _reflection_padding(site):
    if _is_store(site):
        site.finding("NNF004", "MindSpore's ReflectionPad pads with the padding computed when it was built; "
                     "assigning .padding changes nothing", comment="ReflectionPad.padding assignment not ported")
        return None
    text = site.code(site.updated).strip()
    new = site.parse(f"tuple(v for pair in reversed({text}) for v in pair)")
    site.edit("NNF004", new, detail=".padding -> PyTorch's flat tuple from MindSpore's [before, after] pairs")
    return new


for _d in (1, 2, 3):
    member("padding", "NNF004", receiver=f"module:torch.nn.ReflectionPad{_d}d", handler=_reflection_padding)
