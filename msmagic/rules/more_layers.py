"""More ``torch.nn`` layers: activations under MindSpore's names (LYR001), Softmin's
axis (LYR002), layers with renamed parameters (LYR003), shape layers (LYR004), 3-D
pooling (LYR005), losses whose defaults or arguments differ (LYR006), local response
normalisation (LYR007) and LP pooling (LYR008)."""

from __future__ import annotations

from msmagic.engine.spec import api
from msmagic.rules._util import truthy_literal
from msmagic.rules.layers import DEVICE_RULE, _MAX_PAD, _pool, _stride
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
    "Losses: SmoothL1Loss gets reduction='mean'; deprecated size_average/reduce flagged",
    group=GROUP,
    why="""
        ``nn.SmoothL1Loss``, ``nn.KLDivLoss``, ``nn.MarginRankingLoss`` and
        ``nn.MultiLabelMarginLoss`` (MindSpore's ``MultilabelMarginLoss``) compute the
        same losses. MindSpore's ``SmoothL1Loss`` defaults to ``reduction='none'`` (one
        loss per element) where PyTorch averages, so ``reduction='mean'`` is written out;
        its parameters are ordered ``(beta, reduction)``, so they are passed by keyword.
        PyTorch's deprecated ``size_average``/``reduce`` have no MindSpore equivalent and
        are flagged unless None (use ``reduction``). ``KLDivLoss(log_target=True)`` is
        flagged: MindSpore's ``nn.KLDivLoss`` always takes the target as probabilities.
        MindSpore's ``MarginRankingLoss`` requires the target to have the inputs' dtype.
    """,
    seed=SEED,
    reference=DIFF + "SmoothL1Loss.md; " + MAPPING,
    installed_note="""
        Checked on MindSpore 2.10: ``SmoothL1Loss(beta=1.0, reduction='none')``;
        ``KLDivLoss(reduction='mean')`` has no ``log_target`` (``mint.nn.KLDivLoss`` has,
        but no CPU kernel); ``MarginRankingLoss`` raises TypeError for an int64 target
        with float32 inputs, which PyTorch accepts.
    """,
    example="""
        import torch
        import torch.nn as nn

        x = torch.linspace(-2, 2, 12).reshape(3, 4)
        t = torch.linspace(1, -1, 12).reshape(3, 4)
        a = nn.SmoothL1Loss()(x, t)
        b = nn.SmoothL1Loss(reduction="sum", beta=0.5)(x, t)
        c = nn.KLDivLoss(reduction="batchmean")(x.log_softmax(1), t.softmax(1))
        d = nn.MarginRankingLoss(0.2)(x, t, torch.ones(3, 4))
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
    ("Tanhshrink", "Tanhshrink", ()),
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
api("torch.nn.KLDivLoss", "mindspore.nn.KLDivLoss", rule="LYR006",
    sig=("size_average", "reduce", "reduction", "log_target"), ms_sig=("reduction",),
    unsupported={**_DEPRECATED,
                 "log_target": (truthy_literal, "MindSpore's nn.KLDivLoss takes the target as "
                                "probabilities: pass target.exp() instead")},
    returns="module:torch.nn.KLDivLoss")
api("torch.nn.MarginRankingLoss", "mindspore.nn.MarginRankingLoss", rule="LYR006",
    sig=("margin", "size_average", "reduce", "reduction"), ms_sig=("margin", "reduction"),
    unsupported=dict(_DEPRECATED), returns="module:torch.nn.MarginRankingLoss")

for _d in (1, 2):
    api(f"torch.nn.LPPool{_d}d", f"mindspore.nn.LPPool{_d}d", rule="LYR005",
        sig=("norm_type", "kernel_size", "stride", "ceil_mode"),
        returns=f"module:torch.nn.LPPool{_d}d")
