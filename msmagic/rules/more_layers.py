"""More ``torch.nn`` layers: activations under MindSpore's names (LYR001), Softmin's
axis (LYR002), layers with renamed parameters (LYR003), shape layers (LYR004), 3-D
pooling (LYR005), losses whose defaults or arguments differ (LYR006), local response
normalisation (LYR007) and LP pooling (LYR008)."""

from __future__ import annotations

import libcst as cst

from msmagic.engine.spec import api
from msmagic.rules._util import truthy_literal
from msmagic.rules.layers import DEVICE_RULE, _MAX_PAD, _kw, _pool, _stride
from msmagic.rules.registry import register

GROUP = "More layers"
SEED = "seeds/002 API Comparison › nn APIs"
DIFF = "r2.4.10/api_mapping/pytorch_diff/"
MAPPING = "r2.4.10/api_mapping/pytorch_api_mapping.md"
INPLACE_RULE = "FUN013"  # inplace= is dropped: MindSpore returns a new tensor

register(
    "LYR001",
    "Activation layers: same computation, MindSpore's class names",
    group=GROUP,
    why="""
        These activation layers compute the same element-wise function in both frameworks;
        only some class names differ: ``Hardswish`` is ``HSwish``, ``Hardsigmoid`` is
        ``HSigmoid``, ``Softshrink`` is ``SoftShrink``, ``Hardshrink`` is ``HShrink`` and
        ``SELU`` is ``SeLU``. ``CELU(alpha)``, ``Hardtanh(min_val, max_val)``,
        ``Threshold(threshold, value)`` and the shrink layers' ``lambd`` keep PyTorch's
        parameter names, order and defaults. MindSpore returns a new tensor and has no
        ``inplace`` argument, so ``inplace`` is dropped (see FUN013). ``Hardtanh``'s
        deprecated ``min_value``/``max_value`` have no MindSpore spelling and are flagged.
    """,
    seed=SEED,
    reference=MAPPING + "; " + DIFF + "HShrink.md; " + DIFF + "SoftShrink.md",
    installed_note="""
        Checked on MindSpore 2.10 (CPU) against PyTorch on random inputs: all listed layers
        agree to 1e-6. ``mindspore.mint.nn`` also has PyTorch-named versions (``Hardswish``,
        ``SELU``, ``Mish``, ``Threshold``...), but several of them have no CPU kernel on 2.10
        ("The kernel SeLUExt unregistered"), so the classic ``mindspore.nn`` layers are used.
        MindSpore's ``Tanhshrink`` is less precise than PyTorch's: up to 1e-4 absolute
        (2.5e-5 relative) off ``x - tanh(x)`` near |x| = 5, against 3e-7 for PyTorch.
    """,
    example="""
        import torch
        import torch.nn as nn

        x = torch.linspace(-4, 4, 12).reshape(3, 4)
        a = nn.Hardswish()(x)
        b = nn.Hardtanh(-2.0, 2.0, inplace=False)(x)
        c = nn.Softshrink(0.7)(x)
        d = nn.SELU()(x)
    """,
)

register(
    "LYR002",
    "Softmin: dim becomes axis and must be given",
    group=GROUP,
    why="""
        ``nn.Softmin(dim)`` is MindSpore's ``nn.Softmin(axis)``. Without ``dim`` PyTorch
        picks an axis from the input's rank at call time (axis 0 for 0-, 1- and 3-D input,
        else 1, with a deprecation warning) while MindSpore uses the last axis, so a
        ``Softmin()`` without ``dim`` is flagged and left unchanged: write the axis out.
    """,
    seed=SEED,
    reference=DIFF + "softmin.md",
    installed_note="""
        Checked on MindSpore 2.10: ``nn.Softmin()`` normalises over axis -1; on a 4-D input
        PyTorch's ``nn.Softmin()`` normalises over axis 1, so the results differ.
    """,
    example="""
        import torch
        import torch.nn as nn

        x = torch.linspace(-2, 2, 24).reshape(2, 3, 4)
        y = nn.Softmin(dim=1)(x)
    """,
)

register(
    "LYR003",
    "PReLU and GroupNorm: renamed arguments and parameters",
    group=GROUP,
    why="""
        ``nn.PReLU(num_parameters, init)`` is MindSpore's ``nn.PReLU(channel, w)``; the
        learned slopes are the parameter ``w`` rather than ``weight`` (same shape, same
        initial 0.25). ``nn.GroupNorm(num_groups, num_channels, eps, affine)`` keeps its
        arguments and defaults, but the scale and shift are ``gamma`` and ``beta`` rather
        than ``weight`` and ``bias``; reads of these attributes are not renamed, so code
        touching them needs the MindSpore names. ``device`` is dropped; ``dtype`` is
        flagged (pass ``dtype=mindspore.<type>`` by hand).
    """,
    seed=SEED,
    reference=DIFF + "PReLU.md; " + DIFF + "GroupNorm.md",
    installed_note="""
        Checked on MindSpore 2.10: ``PReLU(channel=1, w=0.25)`` stores its slopes in
        ``self.w`` (the Parameter is named ``a``); ``GroupNorm(num_groups, num_channels,
        eps=1e-05, affine=True, ...)`` stores ``gamma`` and ``beta``. Both agree with
        PyTorch once the parameters are copied across.
    """,
    example="""
        import torch
        import torch.nn as nn

        act = nn.PReLU(3)
        norm = nn.GroupNorm(3, 6)
        x = torch.linspace(-3, 3, 2 * 6 * 4).reshape(2, 6, 4)
        y = norm(x)
        z = act(y[:, :3])
    """,
)

register(
    "LYR004",
    "Shape layers: PixelShuffle, PixelUnshuffle, ChannelShuffle, Unflatten",
    group=GROUP,
    why="""
        ``nn.PixelShuffle``, ``nn.PixelUnshuffle`` and ``nn.ChannelShuffle`` exist in
        MindSpore with the same argument and move elements in the same order.
        ``nn.Unflatten(dim, unflattened_size)`` is ``nn.Unflatten(axis, unflattened_size)``:
        only the first name differs, so a ``dim=`` keyword becomes ``axis=``.
    """,
    seed=SEED,
    reference=MAPPING,
    installed_note="""
        Checked on MindSpore 2.10 on 4-D inputs: identical values and shapes.
    """,
    example="""
        import torch
        import torch.nn as nn

        x = torch.arange(2 * 8 * 3 * 3, dtype=torch.float32).reshape(2, 8, 3, 3)
        a = nn.PixelShuffle(2)(x)
        b = nn.PixelUnshuffle(3)(x)
        c = nn.ChannelShuffle(4)(x)
        d = nn.Unflatten(dim=1, unflattened_size=(2, 4))(x)
    """,
)

register(
    "LYR005",
    "3-D max/avg pooling get an explicit stride and pad_mode='pad'",
    group=GROUP,
    why="""
        ``nn.MaxPool3d`` and ``nn.AvgPool3d`` are ported like their 1-D and 2-D versions
        (LAY004): MindSpore's ``stride`` defaults to 1 rather than to the kernel size, so
        it is always written out, and ``pad_mode='pad'`` (PyTorch's padding rule) is added
        whenever ``padding``, ``dilation``, ``ceil_mode`` or ``return_indices`` is given,
        because MindSpore's default ``'valid'`` mode refuses them.
    """,
    seed="seeds/000 Differences Between MindSpore and PyTorch Operators › padding",
    reference=DIFF + "MaxPool3d.md; " + DIFF + "AvgPool3d.md",
    installed_note="""
        Checked on MindSpore 2.10: ``MaxPool3d(kernel_size=1, stride=1, pad_mode='valid',
        ...)`` and ``AvgPool3d(kernel_size=1, stride=1, pad_mode='valid', ...)``; with
        ``pad_mode='pad'`` padding, ceil_mode, count_include_pad and divisor_override give
        PyTorch's values.
    """,
    example="""
        import torch
        import torch.nn as nn

        x = torch.arange(2 * 6 * 6 * 6, dtype=torch.float32).reshape(1, 2, 6, 6, 6)
        a = nn.MaxPool3d(2)(x)
        b = nn.AvgPool3d(3, 2, padding=1)(x)
    """,
)

register(
    "LYR006",
    "Losses: SmoothL1Loss gets reduction='mean'; size_average/reduce flagged",
    group=GROUP,
    why="""
        ``nn.SmoothL1Loss``, ``nn.MarginRankingLoss`` and
        ``nn.MultiLabelMarginLoss`` (MindSpore's ``MultilabelMarginLoss``) compute the
        same losses. MindSpore's ``SmoothL1Loss`` defaults to ``reduction='none'`` (one
        loss per element) where PyTorch averages, so ``reduction='mean'`` is written out;
        its parameters are ordered ``(beta, reduction)``, so they are passed by keyword.
        PyTorch's deprecated ``size_average``/``reduce`` have no MindSpore equivalent and
        are flagged unless None (use ``reduction``). ``nn.KLDivLoss`` is NNF002: MindSpore's
        ``nn.KLDivLoss`` has no ``log_target`` and differs on targets with zeros.
        MindSpore's ``MarginRankingLoss`` requires the target to have the inputs' dtype.
    """,
    seed=SEED,
    reference=DIFF + "SmoothL1Loss.md; " + MAPPING,
    installed_note="""
        Checked on MindSpore 2.10: ``SmoothL1Loss(beta=1.0, reduction='none')``;
        ``MarginRankingLoss`` raises TypeError for an int64 target
        with float32 inputs, which PyTorch accepts.
    """,
    example="""
        import torch
        import torch.nn as nn

        x = torch.linspace(-2, 2, 12).reshape(3, 4)
        t = torch.linspace(1, -1, 12).reshape(3, 4)
        a = nn.SmoothL1Loss()(x, t)
        b = nn.SmoothL1Loss(reduction="sum", beta=0.5)(x, t)
        c = nn.MarginRankingLoss(0.2)(x, t, torch.ones(3, 4))
    """,
)


# ----------------------------------------------------------------------------- LYR001


def _not_none(site, arg) -> bool:
    return site.literal(arg.value, default=True) is not None


_ACTIVATIONS = (
    # torch name, MindSpore name, PyTorch signature
    ("CELU", "CELU", ("alpha", "inplace")),
    ("SELU", "SeLU", ("inplace",)),
    ("Hardswish", "HSwish", ("inplace",)),
    ("Hardsigmoid", "HSigmoid", ("inplace",)),
    ("LogSigmoid", "LogSigmoid", ()),
    ("Mish", "Mish", ("inplace",)),
    ("SiLU", "SiLU", ("inplace",)),
    ("Softsign", "Softsign", ()),
    ("ReLU6", "ReLU6", ("inplace",)),
    ("Threshold", "Threshold", ("threshold", "value", "inplace")),
    ("Softshrink", "SoftShrink", ("lambd",)),
    ("Hardshrink", "HShrink", ("lambd",)),
)
for _torch, _ms, _sig in _ACTIVATIONS:
    api(f"torch.nn.{_torch}", f"mindspore.nn.{_ms}", rule="LYR001", sig=_sig,
        drop={"inplace": INPLACE_RULE} if "inplace" in _sig else {},
        returns=f"module:torch.nn.{_torch}")

api("torch.nn.Hardtanh", "mindspore.nn.Hardtanh", rule="LYR001",
    sig=("min_val", "max_val", "inplace", "min_value", "max_value"),
    drop={"inplace": INPLACE_RULE},
    unsupported={"min_value": (_not_none, "deprecated: use min_val"),
                 "max_value": (_not_none, "deprecated: use max_val")},
    returns="module:torch.nn.Hardtanh")


# ----------------------------------------------------------------------------- LYR002


def _softmin(site):
    if site.bound() is not None and site.arg("dim") is None:
        site.finding("LYR002", "Softmin() without dim: PyTorch picks the axis from the input's "
                     "rank (1 for 2-D and 4-D input), MindSpore uses the last axis; pass dim",
                     comment="Softmin needs an explicit dim")
        return None
    new = site.apply(func=site.ref("mindspore.nn.Softmin"))
    site.edit("LYR002", new, detail=site.describe("nn.Softmin -> mindspore.nn.Softmin"))
    return new


api("torch.nn.Softmin", "mindspore.nn.Softmin", rule="LYR002", sig=("dim",),
    rename={"dim": "axis"}, handler=_softmin, returns="module:torch.nn.Softmin")


# ----------------------------------------------------------------------------- LYR003

api("torch.nn.PReLU", "mindspore.nn.PReLU", rule="LYR003",
    sig=("num_parameters", "init", "device", "dtype"), ms_sig=("channel", "w"),
    rename={"num_parameters": "channel", "init": "w"}, drop={"device": DEVICE_RULE},
    unsupported={"dtype": "pass dtype=mindspore.<type> by hand"},
    params={"weight": "w"}, returns="module:torch.nn.PReLU")

api("torch.nn.GroupNorm", "mindspore.nn.GroupNorm", rule="LYR003",
    sig=("num_groups", "num_channels", "eps", "affine", "device", "dtype"),
    drop={"device": DEVICE_RULE},
    unsupported={"dtype": "pass dtype=mindspore.<type> by hand",
                 "bias": (lambda site, arg: not truthy_literal(site, arg),
                          "MindSpore's GroupNorm always has a beta when affine=True")},
    params={"weight": "gamma", "bias": "beta"}, returns="module:torch.nn.GroupNorm")


# ----------------------------------------------------------------------------- LYR004

for _name, _arg in (("PixelShuffle", "upscale_factor"), ("PixelUnshuffle", "downscale_factor"),
                    ("ChannelShuffle", "groups")):
    api(f"torch.nn.{_name}", f"mindspore.nn.{_name}", rule="LYR004", sig=(_arg,),
        returns=f"module:torch.nn.{_name}")
api("torch.nn.Unflatten", "mindspore.nn.Unflatten", rule="LYR004",
    sig=("dim", "unflattened_size"), rename={"dim": "axis"}, returns="module:torch.nn.Unflatten")


# ----------------------------------------------------------------------------- LYR005

api("torch.nn.MaxPool3d", "mindspore.nn.MaxPool3d", rule="LYR005",
    sig=("kernel_size", "stride", "padding", "dilation", "return_indices", "ceil_mode"),
    ms_sig=("kernel_size", "stride"), values={"stride": _stride}, handler=_pool(_MAX_PAD),
    returns="module:torch.nn.MaxPool3d")
api("torch.nn.AvgPool3d", "mindspore.nn.AvgPool3d", rule="LYR005",
    sig=("kernel_size", "stride", "padding", "ceil_mode", "count_include_pad", "divisor_override"),
    ms_sig=("kernel_size", "stride"), values={"stride": _stride}, handler=_pool(("padding",)),
    returns="module:torch.nn.AvgPool3d")


# ----------------------------------------------------------------------------- LYR006

_DEPRECATED = {
    "size_average": (_not_none, "deprecated in PyTorch and absent in MindSpore: use reduction"),
    "reduce": (_not_none, "deprecated in PyTorch and absent in MindSpore: use reduction"),
}

api("torch.nn.SmoothL1Loss", "mindspore.nn.SmoothL1Loss", rule="LYR006",
    sig=("size_average", "reduce", "reduction", "beta"), ms_sig=("beta", "reduction"),
    defaults={"reduction": "'mean'"}, unsupported=dict(_DEPRECATED),
    returns="module:torch.nn.SmoothL1Loss")
api("torch.nn.MarginRankingLoss", "mindspore.nn.MarginRankingLoss", rule="LYR006",
    sig=("margin", "size_average", "reduce", "reduction"), ms_sig=("margin", "reduction"),
    unsupported=dict(_DEPRECATED), returns="module:torch.nn.MarginRankingLoss")



# ----------------------------------------------------------------------------- LYR007


def _number(site, name: str, default):
    """(source text, literal value or None) of argument ``name`` or its default."""
    arg = site.arg(name)
    if arg is None:
        return repr(default), default
    value = site.literal(arg.value)
    ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    return site.code(arg.value).strip(), (value if ok else None)


def _lrn(site):
    if site.bound() is None:
        return None
    size_text, size = _number(site, "size", None)
    if not isinstance(size, int) or size % 2 == 0:
        site.finding("LYR007", f"size={size_text}: MindSpore's LRN sums over a window of "
                     "2 * depth_radius + 1 channels, centred; only an odd literal size has that "
                     "shape (PyTorch puts the extra channel of an even window before the centre)",
                     comment="LocalResponseNorm size must be an odd literal")
        return None
    alpha_text, alpha = _number(site, "alpha", 1e-4)
    beta_text, _ = _number(site, "beta", 0.75)
    k_text, _ = _number(site, "k", 1.0)
    scaled = repr(alpha / size) if alpha is not None else f"({alpha_text}) / {size}"
    new = cst.Call(func=site.ref("mindspore.nn.LRN"), args=[
        _kw("depth_radius", site.parse(str((size - 1) // 2))),
        _kw("bias", site.parse(k_text)),
        _kw("alpha", site.parse(scaled)),
        _kw("beta", site.parse(beta_text)),
    ])
    new = new.with_changes(args=[a.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
                                 for a in new.args[:-1]] + [new.args[-1]])
    site.changes.append(f"size={size} -> depth_radius={(size - 1) // 2}; alpha divided by size")
    site.edit("LYR007", new, detail=site.describe("nn.LocalResponseNorm -> mindspore.nn.LRN"))
    return new


api("torch.nn.LocalResponseNorm", "mindspore.nn.LRN", rule="LYR007",
    sig=("size", "alpha", "beta", "k"), handler=_lrn, returns="module:torch.nn.LocalResponseNorm")


# ----------------------------------------------------------------------------- LYR008


def _lp_pool(site):
    new = site.apply(func=site.ref(site.entry.target))
    if site.bound() is not None:
        text, p = _number(site, "norm_type", None)
        if p is None or float(p) != int(p):
            site.finding("LYR008", f"norm_type={text}: for a non-integer power PyTorch gives NaN "
                         "on windows with negative values, MindSpore gives 0; check the input "
                         "is non-negative", comment="LPPool with a non-integer norm_type")
    site.edit("LYR008", new, detail=site.describe(f"{site.api} -> {site.entry.target}"))
    return new


for _d in (1, 2):
    api(f"torch.nn.LPPool{_d}d", f"mindspore.nn.LPPool{_d}d", rule="LYR008",
        sig=("norm_type", "kernel_size", "stride", "ceil_mode"), handler=_lp_pool,
        returns=f"module:torch.nn.LPPool{_d}d")

register(
    "LYR007",
    "LocalResponseNorm becomes LRN with depth_radius and alpha / size",
    group=GROUP,
    why="""
        PyTorch's ``nn.LocalResponseNorm(size, alpha, beta, k)`` divides each value by
        ``(k + alpha / size * sum of squares over size neighbouring channels) ** beta``.
        MindSpore's ``nn.LRN(depth_radius, bias, alpha, beta)`` computes
        ``(bias + alpha * sum over 2 * depth_radius + 1 channels) ** beta``: the window is
        given by its radius and ``alpha`` is not divided by the window size. An odd
        ``size`` therefore becomes ``depth_radius=(size - 1) // 2`` and ``alpha`` becomes
        ``alpha / size``; ``k`` is ``bias``, and every argument is written out because
        MindSpore's defaults (5, 1.0, 1.0, 0.5) differ from PyTorch's. An even or
        non-literal ``size`` is flagged (its window is not centred in PyTorch).
    """,
    seed=SEED,
    reference=DIFF + "LRN.md",
    installed_note="""
        Checked on MindSpore 2.10: ``LRN(depth_radius=5, bias=1.0, alpha=1.0, beta=0.5,
        norm_region='ACROSS_CHANNELS')``; with the conversion above sizes 3 and 5 agree
        with PyTorch. MindSpore's LRN takes 4-D (N, C, H, W) input only and raises
        otherwise; PyTorch also accepts 3-D and 5-D input.
    """,
    example="""
        import torch
        import torch.nn as nn

        x = torch.linspace(-3, 3, 2 * 6 * 3 * 3).reshape(2, 6, 3, 3)
        lrn = nn.LocalResponseNorm(3, alpha=0.01, beta=0.5, k=2.0)
        y = lrn(x)
    """,
)

register(
    "LYR008",
    "LPPool1d/2d port as is; a non-integer norm_type is flagged",
    group=GROUP,
    why="""
        ``nn.LPPool1d/2d(norm_type, kernel_size, stride, ceil_mode)`` exist in MindSpore
        with the same arguments and defaults (``stride=None`` is the kernel size in both).
        For an integer power they agree, negative inputs included. For a non-integer power
        PyTorch's ``x ** p`` gives NaN on negative values and so NaN for the window,
        while MindSpore gives 0 there, so such a ``norm_type`` is ported and flagged.
    """,
    seed=SEED,
    reference=MAPPING,
    installed_note="""
        Checked on MindSpore 2.10: p = 1, 2, 3, 4 agree with PyTorch on signed inputs
        (with ``ceil_mode`` too); p = 1.5 gives 0 where PyTorch gives NaN.
        ``LPPool2d`` needs a batched 4-D input (a 3-D one raises "AvgPool3D, the x_rank
        must be equal to 5"), unlike PyTorch.
    """,
    example="""
        import torch
        import torch.nn as nn

        x = torch.linspace(-3, 3, 2 * 3 * 8).reshape(2, 3, 8)
        y = nn.LPPool1d(2, 3, stride=2)(x)
        z = nn.LPPool2d(3, 2)(x.abs().reshape(1, 2, 6, 4))
    """,
)


register(
    "LYR009",
    "nn.Softplus becomes a function of ops.softplus",
    group=GROUP,
    why="""
        MindSpore 2.10 has no ``nn.Softplus`` layer, but ``ops.softplus(input, beta,
        threshold)`` computes PyTorch's ``log(1 + exp(beta * x)) / beta`` with the same
        linear region above ``threshold``. The layer becomes
        ``(lambda input: mindspore.ops.softplus(input, beta, threshold))``, a callable
        used like the layer (``act(x)``); it is not a Cell, so it cannot sit inside a
        ``SequentialCell``: write ``ops.softplus`` in ``construct`` there instead.
    """,
    seed="seeds/002 API Comparison › nn APIs",
    reference="r2.4.10/api_mapping/pytorch_api_mapping.md (torch.nn.Softplus)",
    installed_note="Verified on 2.10: mindspore.nn has no Softplus; ops.softplus matches torch's to 1e-6.",
    example="""
        import torch
        import torch.nn as nn
        act = nn.Softplus(beta=2.0, threshold=5.0)
        x = torch.linspace(-4, 4, 9)
        y = act(x)
        z = nn.Softplus()(x)
    """,
)


def _softplus_layer(site):
    if site.bound() is None:
        return None
    beta = site.arg("beta")
    threshold = site.arg("threshold")
    b = site.code(beta.value).strip() if beta is not None else "1.0"
    t = site.code(threshold.value).strip() if threshold is not None else "20.0"
    softplus = site.code(site.ref("mindspore.ops.softplus"))
    new = site.parse(f"(lambda input: {softplus}(input, {b}, {t}))")
    site.edit("LYR009", new, detail="torch.nn.Softplus -> a function of ops.softplus")
    return new


api("torch.nn.Softplus", rule="LYR009", sig=("beta", "threshold"), handler=_softplus_layer,
    returns="loss function")


register(
    "LYR010",
    "Zero and circular padding layers",
    group=GROUP,
    why="""
        ``nn.ZeroPad1d``/``nn.ZeroPad3d`` have no class of that name in MindSpore 2.10;
        ``nn.ConstantPad1d``/``nn.ConstantPad3d`` with ``value=0.0`` pad the same way (the
        padding tuple is read in PyTorch's order, last axis first). ``nn.CircularPad1d/2d/3d``
        have no layer either: they become a function of ``ops.pad(input, padding,
        mode="circular")``, which wraps the input around like PyTorch; an int padding is
        spelled out for every side. Like other ported functions, it is not a Cell.
    """,
    seed="seeds/002 API Comparison › nn APIs",
    reference="r2.4.10/api_mapping/pytorch_api_mapping.md (torch.nn.ZeroPad2d, torch.nn.functional.pad)",
    installed_note="Verified on 2.10: no nn.ZeroPad1d/3d or CircularPad*; ops.pad(mode='circular') matches.",
    example="""
        import torch
        import torch.nn as nn
        x = torch.arange(24.0).reshape(1, 2, 3, 4)
        a = nn.ZeroPad1d((1, 2))(x[0])
        b = nn.CircularPad2d(1)(x)
        c = nn.CircularPad1d((2, 1))(x[0])
    """,
)

for _d in (1, 3):
    api(f"torch.nn.ZeroPad{_d}d", f"mindspore.nn.ConstantPad{_d}d", rule="LYR010", sig=("padding",),
        defaults={"value": "0.0"}, returns=f"module:torch.nn.ZeroPad{_d}d")


def _circular(dims: int):
    def handler(site):
        arg = site.arg("padding")
        if arg is None or site.bound() is None:
            return None
        value = site.literal(arg.value, default=None)
        if isinstance(value, int):
            pad = repr((value,) * (2 * dims))
        elif isinstance(value, (tuple, list)) and len(value) == 2 * dims:
            pad = repr(tuple(value))
        else:
            site.finding("LYR010", f"padding={site.code(arg.value).strip()} is not a literal int or "
                         f"{2 * dims}-tuple: write it out per side for ops.pad", comment="padding not a literal")
            return None
        pad_fn = site.code(site.ref("mindspore.ops.pad"))
        new = site.parse(f'(lambda input: {pad_fn}(input, {pad}, mode="circular"))')
        site.edit("LYR010", new, detail=f"{site.api} -> a function of ops.pad(mode='circular')")
        return new

    return handler


for _d in (1, 2, 3):
    api(f"torch.nn.CircularPad{_d}d", rule="LYR010", sig=("padding",), handler=_circular(_d),
        returns="loss function")
