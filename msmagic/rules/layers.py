"""Layers: Linear becomes Dense; convolutions and pooling get an explicit ``pad_mode``
(MindSpore's defaults pad where PyTorch's do not) and an explicit pooling ``stride``."""

from __future__ import annotations

import libcst as cst

from msmagic.engine.build import join_args, parse_expression
from msmagic.engine.spec import api, member
from msmagic.rules._util import is_pure
from msmagic.rules.registry import register

GROUP = "Layers"
DIFF = "r2.4.10/api_mapping/pytorch_diff/"
MAPPING = "r2.4.10/api_mapping/pytorch_api_mapping.md"
DEVICE_RULE = "DEV003"
_NOT_LITERAL = object()

register(
    "LAY001",
    "Linear becomes Dense with has_bias",
    group=GROUP,
    why="""
        ``torch.nn.Linear(in_features, out_features, bias)`` is ``mindspore.nn.Dense(
        in_channels, out_channels, ..., has_bias)``: the same layer under other names. The
        third positional parameter of Dense is ``weight_init``, not the bias flag, so a
        positional ``bias`` is written as ``has_bias=`` by keyword. Both store the weight as
        (out, in) and both default to having a bias. Default initialisation matches too:
        weight and bias are drawn uniformly from +-1/sqrt(in_features) in both frameworks
        (the test checks the bound and the spread of a 256-input layer), so no ``weight_init``
        is needed. Reads of ``in_features``/``out_features`` on a known Linear layer become
        ``in_channels``/``out_channels``.
    """,
    seed="seeds/002 Parameter Initialization Comparison › Different Default Weight Initialization",
    reference=DIFF + "Dense.md; " + MAPPING,
    installed_note="""
        Checked on MindSpore 2.10: ``Dense(in_channels, out_channels, weight_init=None,
        bias_init=None, has_bias=True, activation=None, dtype=float32)``; with
        ``weight_init=None`` the weight is HeUniform(sqrt(5)), i.e. U(-1/sqrt(in), 1/sqrt(in))
        like PyTorch.
    """,
    example="""
        import torch
        import torch.nn as nn

        fc = nn.Linear(4, 3, False)
        x = torch.ones(2, 4)
        y = fc(x)
    """,
)

register(
    "LAY002",
    "Conv layers get pad_mode, has_bias=True and group",
    group=GROUP,
    why="""
        MindSpore's ``nn.Conv1d/2d/3d`` pad by default (``pad_mode='same'``) and have no bias
        by default (``has_bias=False``); PyTorch does not pad (``padding=0``) and adds a bias.
        Ported as is, a PyTorch conv would change its output shape and lose its bias, so
        both are always written out: ``padding=0``/``'valid'`` becomes ``pad_mode='valid'``,
        a positive padding becomes ``pad_mode='pad'`` with MindSpore's per-side layout (a
        2-D ``(ph, pw)`` is ``(ph, ph, pw, pw)``; Conv1d takes an int only), and
        ``padding='same'`` becomes ``pad_mode='same'``, which on the installed version pads
        exactly like PyTorch, the extra element of an even kernel going to the right/bottom.
        ``groups`` is ``group`` and ``bias`` is ``has_bias``. Only zero padding exists in
        MindSpore's conv layers, so ``padding_mode='reflect'/'replicate'/'circular'`` is
        flagged (pad with ``ops.pad`` first). Default initialisation is the same in both
        (uniform +-1/sqrt(fan_in) for weight and bias). Conv1d's weight has an extra axis in
        MindSpore, (out, in, 1, k), so reading ``conv1d.weight`` is flagged.
    """,
    seed="seeds/000 Differences Between MindSpore and PyTorch Operators › padding; "
    "seeds/002 Parameter Initialization Comparison › Different Default Weight Initialization",
    reference=DIFF + "Conv1d.md; " + DIFF + "Conv2d.md; " + DIFF + "Conv3d.md",
    installed_note="""
        The r2.4.10 difference pages say MindSpore's ``padding`` takes an int only; on 2.10
        Conv2d takes an int or a 4-tuple (top, bottom, left, right) and Conv3d a 6-tuple,
        while Conv1d still takes an int only (a 2-tuple raises in Conv2d). The 1.x seed says
        MindSpore's 'same' pads the other side from PyTorch for an odd total; on 2.10 it
        matches PyTorch for kernels 2-5 and dilations 1-3 in 1-D, 2-D and 3-D (checked).
        ``pad_mode='pad'`` with ``padding=0`` is accepted and pads nothing.
    """,
    example="""
        import torch
        import torch.nn as nn

        conv = nn.Conv2d(3, 8, 3, stride=2, padding=(1, 2), groups=1)
        x = torch.ones(1, 3, 9, 9)
        y = conv(x)
    """,
)

register(
    "LAY003",
    "ConvTranspose2d becomes Conv2dTranspose with output_padding folded into padding",
    group=GROUP,
    why="""
        ``nn.ConvTranspose2d`` maps to ``nn.Conv2dTranspose`` with the same weight layout
        (in, out/groups, kh, kw), ``groups`` -> ``group``, ``bias`` -> ``has_bias`` (True
        added, MindSpore's default is False) and an explicit ``pad_mode`` (MindSpore's
        default 'same' would change the output size). PyTorch's ``output_padding`` grows
        the output on the bottom/right with real computed values, whereas MindSpore's
        ``output_padding`` fills that border with zeros, so it is never passed on: PyTorch's
        ``padding=p, output_padding=op`` crops ``p`` at the top/left and ``p - op`` at the
        bottom/right, which is MindSpore's ``pad_mode='pad', padding=(p, p-op, p, p-op)``.
        When ``output_padding`` exceeds ``padding`` or is not a literal this cannot be
        expressed and is flagged.
    """,
    seed="seeds/000 Differences Between MindSpore and PyTorch Operators › padding",
    reference=DIFF + "Conv2dTranspose.md",
    installed_note="""
        Checked on MindSpore 2.10: ``Conv2dTranspose(..., pad_mode='same', padding=0,
        output_padding=0, dilation=1, group=1, has_bias=False, ...)``; with
        ``output_padding=1`` the extra row/column is zeros (PyTorch computes it), while
        ``padding=(p, p-op, p, p-op)`` reproduces PyTorch exactly.
    """,
    example="""
        import torch
        import torch.nn as nn

        up = nn.ConvTranspose2d(4, 2, 3, stride=2, padding=1, output_padding=1)
        x = torch.ones(1, 4, 5, 5)
        y = up(x)
    """,
)

register(
    "LAY004",
    "Max/avg pooling layers get an explicit stride and pad_mode='pad'",
    group=GROUP,
    why="""
        PyTorch's pooling ``stride`` defaults to ``kernel_size`` (non-overlapping windows);
        MindSpore's defaults to 1, so ``nn.MaxPool2d(2)`` would barely shrink the input.
        The stride is therefore always written out (as a copy of the kernel size when it
        was left to the default or passed as None). MindSpore pools without padding in its
        default ``pad_mode='valid'`` and refuses ``padding``, ``dilation``, ``ceil_mode``
        and ``return_indices`` there; ``pad_mode='pad'`` is PyTorch's own padding rule, so
        it is added whenever one of those is given. Padding layout (int or (ph, pw)),
        ``count_include_pad`` (default True in both), ``ceil_mode``, ``divisor_override``
        and the returned indices all match PyTorch on the installed version.
    """,
    seed="seeds/000 Differences Between MindSpore and PyTorch Operators › padding",
    reference=DIFF + "MaxPool1d.md; " + DIFF + "MaxPool2d.md; " + DIFF + "AvgPool1d.md; "
    + DIFF + "AvgPool2d.md",
    installed_note="""
        Checked on MindSpore 2.10: ``MaxPool2d(kernel_size=1, stride=1, pad_mode='valid',
        padding=0, dilation=1, return_indices=False, ceil_mode=False)`` raises ValueError
        for a non-default padding/dilation/return_indices/ceil_mode unless
        ``pad_mode='pad'``; AvgPool accepts ``ceil_mode``/``count_include_pad`` in 'valid'
        mode too.
    """,
    example="""
        import torch
        import torch.nn as nn

        pool = nn.MaxPool2d(2)
        avg = nn.AvgPool2d(3, 2, padding=1, count_include_pad=False)
        x = torch.arange(2 * 9 * 9, dtype=torch.float32).reshape(1, 2, 9, 9)
        y = pool(x)
        z = avg(x)
    """,
)

register(
    "LAY005",
    "Adaptive pooling layers keep output_size",
    group=GROUP,
    why="""
        ``nn.AdaptiveAvgPool2d`` and ``nn.AdaptiveMaxPool2d`` (including ``return_indices``)
        exist in MindSpore with the same arguments and split the input into the same
        windows as PyTorch, also when the size does not divide evenly and with ``None`` in
        ``output_size``. The 1-D layers are narrower in MindSpore (the input must be 3-D
        and its length a multiple of ``output_size``, no ``return_indices``), so they are
        ported as Cells of ``mindspore.ops`` (NNF002).
    """,
    seed="seeds/002 API Comparison › nn APIs",
    reference=DIFF + "AdaptiveAvgPool1d.md; " + DIFF + "AdaptiveMaxPool1d.md; " + MAPPING,
    installed_note="""
        Checked on MindSpore 2.10: ``AdaptiveAvgPool1d(12 -> 5)`` raises ValueError ("the
        input's last dimension must be divisible by output size") where PyTorch uses
        overlapping windows; ``output_size`` must be an int there (no 1-tuple).
    """,
    example="""
        import torch
        import torch.nn as nn

        gap = nn.AdaptiveAvgPool2d((1, 1))
        x = torch.arange(2 * 3 * 5 * 5, dtype=torch.float32).reshape(2, 3, 5, 5)
        y = gap(x)
    """,
)

register(
    "LAY006",
    "Functional pooling becomes mindspore.ops pooling with explicit stride",
    group=GROUP,
    why="""
        ``F.max_pool2d``, ``F.avg_pool1d/2d`` and ``F.adaptive_avg/max_pool2d`` have
        ``mindspore.ops`` counterparts. ``ops.avg_pool1d/2d`` default ``stride`` to 1, not
        to the kernel size, so the stride is written out; ``ops.avg_pool2d`` wants a
        4-tuple (top, bottom, left, right) padding, so a literal ``(ph, pw)`` is expanded
        (a padding that is not a literal is flagged), and it takes ``divisor_override=0``
        rather than None. ``ops.max_pool2d`` orders ``return_indices`` before
        ``ceil_mode``, so those are passed by keyword. Unlike PyTorch, ``ops.max_pool2d``
        and ``ops.avg_pool2d`` need a batched 4-D input.
    """,
    seed="seeds/002 API Comparison › functional APIs (mapping table)",
    reference=DIFF + "avg_pool1d.md; " + MAPPING,
    installed_note="""
        Checked on MindSpore 2.10: ``ops.avg_pool2d(input_x, kernel_size=1, stride=1,
        padding=0, ceil_mode=False, count_include_pad=True, divisor_override=0)`` raises
        for a 2-tuple padding and for ``divisor_override=None``; ``ops.max_pool2d`` and
        ``ops.avg_pool2d`` raise on 3-D input.
    """,
    example="""
        import torch
        import torch.nn.functional as F

        x = torch.arange(2 * 9 * 9, dtype=torch.float32).reshape(1, 2, 9, 9)
        y = F.max_pool2d(x, 2)
        z = F.avg_pool2d(x, 3, padding=(1, 0))
    """,
)


# ------------------------------------------------------------------ argument helpers


def _kw(name: str, value) -> cst.Arg:
    return cst.Arg(
        keyword=cst.Name(name),
        value=value,
        equal=cst.AssignEqual(
            whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")
        ),
    )


def _index(call: cst.Call, name: str):
    return next(
        (i for i, a in enumerate(call.args) if a.keyword is not None and a.keyword.value == name),
        None,
    )


def _set_kw(call: cst.Call, name: str, value, at=None) -> cst.Call:
    """``call`` with keyword ``name`` set to ``value`` (None: removed); a new keyword goes
    to index ``at`` (default: last)."""
    args = list(call.args)
    i = _index(call, name)
    if i is not None:
        if value is None:
            del args[i]
        else:
            args[i] = args[i].with_changes(value=value)
    elif value is not None:
        args.insert(len(args) if at is None else at, _kw(name, value))
    return call.with_changes(args=join_args(args, call.args))


def _text(value) -> cst.BaseExpression:
    return parse_expression(repr(value))


def _per_axis(value, dims: int):
    """An int or a tuple of ``dims`` ints as a list of ``dims`` ints, else None."""
    if isinstance(value, int) and not isinstance(value, bool):
        return [value] * dims
    if isinstance(value, (tuple, list)) and len(value) == dims and all(
        isinstance(v, int) and not isinstance(v, bool) for v in value
    ):
        return list(value)
    return None


def _literal(site, name: str):
    """(updated arg, Python value or _NOT_LITERAL) of argument ``name``; (None, None)."""
    arg = site.arg(name)
    if arg is None:
        return None, None
    return arg, site.literal(arg.value, _NOT_LITERAL)


# ------------------------------------------------------------------ convolutions


def _conv_padding(site, dims: int, transposed: bool):
    """(pad_mode, new padding expression or None) for a conv call."""
    arg, value = _literal(site, "padding")
    op_arg, op = _literal(site, "output_padding") if transposed else (None, None)
    if value == "same" or value == "valid":
        return value, None
    before = [0] * dims if arg is None else _per_axis(value, dims)
    after = [0] * dims if op_arg is None else _per_axis(op, dims)
    if before is None or after is None:
        what = "output_padding" if before is not None else "padding"
        bad = op_arg if before is not None else arg
        site.finding(
            site.entry.rule,
            f"{what}={site.code(bad.value).strip()} is not a literal int or tuple: ported as "
            "pad_mode='pad' with the value unchanged, which is right for an int padding; a "
            "tuple needs MindSpore's per-side layout, 'same'/'valid' need pad_mode"
            + (", and output_padding is not applied" if transposed else ""),
            comment=f"{what}= not a literal: check pad_mode/padding",
        )
        return "pad", (arg.value if arg is not None else None)
    sides = [(p, p - o) for p, o in zip(before, after)]
    if any(hi < 0 for _, hi in sides):
        site.finding(
            site.entry.rule,
            f"output_padding={site.code(op_arg.value).strip()} exceeds padding: MindSpore's "
            "output_padding adds zeros instead of computed values, so the extra rows/columns "
            "cannot be reproduced; output_padding was removed (the output is smaller)",
            comment="output_padding > padding cannot be ported",
        )
        sides = [(p, p) for p in before]
    elif any(after):
        site.changes.append("output_padding folded into padding")
    flat = [v for pair in sides for v in pair]
    if not any(flat):
        return "valid", None
    if len(set(flat)) == 1:
        return "pad", _text(flat[0])
    return "pad", _text(tuple(flat))


def _conv(dims: int, transposed: bool = False):
    def handler(site):
        target = site.entry.target
        new = site.apply(func=site.ref(target))
        if site.bound() is not None:
            mode, padding = _conv_padding(site, dims, transposed)
            new = _set_kw(new, "padding", padding)
            new = _set_kw(new, "pad_mode", _text(mode), at=_index(new, "padding"))
            shown = "" if padding is None else f", padding={site.code(padding)}"
            site.changes.append(f"pad_mode={mode!r}{shown}")
        site.edit(site.entry.rule, new, detail=site.describe(f"{site.api} -> {target}"))
        return new

    return handler


def _not_zeros(site, arg) -> bool:
    return site.literal(arg.value) != "zeros"


_PADDING_MODE = (
    _not_zeros,
    "MindSpore's conv layers only pad with zeros; pad the input with ops.pad(x, ..., "
    "mode='reflect'/'replicate'/'circular') and use pad_mode='valid'",
)

_CONV_SIG = ("in_channels", "out_channels", "kernel_size", "stride", "padding", "dilation",
             "groups", "bias", "padding_mode", "device", "dtype")
_CONV_MS_SIG = ("in_channels", "out_channels", "kernel_size", "stride", "pad_mode", "padding",
                "dilation", "group", "has_bias")
for _d in (1, 2, 3):
    api(f"torch.nn.Conv{_d}d", f"mindspore.nn.Conv{_d}d", rule="LAY002", sig=_CONV_SIG,
        ms_sig=_CONV_MS_SIG, rename={"groups": "group", "bias": "has_bias"},
        defaults={"has_bias": "True"}, drop={"device": DEVICE_RULE},
        unsupported={"padding_mode": _PADDING_MODE},
        values={"padding_mode": lambda site, arg: False},
        handler=_conv(_d), returns=f"module:torch.nn.Conv{_d}d")

_TRANSPOSED_SIG = ("in_channels", "out_channels", "kernel_size", "stride", "padding", "output_padding",
                   "groups", "bias", "dilation", "padding_mode", "device", "dtype")
#: MindSpore's positional order differs per dimension (1d has no output_padding)
_TRANSPOSED_MS_SIG = {
    1: ("in_channels", "out_channels", "kernel_size", "stride", "pad_mode", "padding", "dilation",
        "group", "has_bias"),
    2: ("in_channels", "out_channels", "kernel_size", "stride", "pad_mode", "padding", "output_padding",
        "dilation", "group", "has_bias"),
    3: ("in_channels", "out_channels", "kernel_size", "stride", "pad_mode", "padding", "dilation",
        "group", "output_padding", "has_bias"),
}
for _d, _ms_sig in _TRANSPOSED_MS_SIG.items():
    api(f"torch.nn.ConvTranspose{_d}d", f"mindspore.nn.Conv{_d}dTranspose", rule="LAY003",
        sig=_TRANSPOSED_SIG, ms_sig=_ms_sig,
        rename={"groups": "group", "bias": "has_bias"}, defaults={"has_bias": "True"},
        drop={"device": DEVICE_RULE}, unsupported={"padding_mode": _PADDING_MODE},
        values={"padding_mode": lambda site, arg: False, "output_padding": lambda site, arg: False},
        handler=_conv(_d, transposed=True), returns=f"module:torch.nn.ConvTranspose{_d}d")


def _conv_function(dims: int):
    """``F.conv2d(x, w, b, stride, padding, dilation, groups)`` -> ``ops.conv2d`` with
    ``pad_mode``: MindSpore's functional conv pads only under ``pad_mode="pad"``."""

    def handler(site):
        target = site.entry.target
        new = site.apply(func=site.ref(target))
        if site.bound() is not None:
            arg = site.arg("padding")
            value = None if arg is None else site.literal(arg.value, default=arg)
            if isinstance(value, str) and value in ("same", "valid"):
                new = _set_kw(new, "padding", None)
                new = _set_kw(new, "pad_mode", _text(value))
                site.changes.append(f"pad_mode={value!r}")
            elif arg is not None and value is not arg and value not in (0, (0,) * dims):
                new = _set_kw(new, "padding", _text(value) if isinstance(value, tuple) else arg.value)
                new = _set_kw(new, "pad_mode", _text("pad"), at=_index(new, "padding"))
                site.changes.append("pad_mode='pad'")
            elif arg is not None and value is arg:
                site.finding(site.entry.rule, "padding is not a literal: MindSpore needs pad_mode='pad' "
                             "for numbers and pad_mode='same'/'valid' for strings", comment="padding not a literal")
        site.edit(site.entry.rule, new, detail=site.describe(f"{site.api} -> {target}"))
        return new

    return handler


for _d in (1, 2):
    for _name in (f"torch.nn.functional.conv{_d}d", f"torch.conv{_d}d"):
        api(_name, f"mindspore.ops.conv{_d}d", rule="LAY002",
            sig=("input", "weight", "bias", "stride", "padding", "dilation", "groups"),
            ms_sig=("input", "weight", "bias", "stride"), handler=_conv_function(_d), returns="tensor")


def _conv1d_weight(site):
    site.finding(
        "LAY002",
        "MindSpore's Conv1d stores its weight as (out, in/group, 1, k), PyTorch's as "
        "(out, in/group, k): code using this weight's shape or loading it needs a reshape",
        comment="Conv1d weight is (out, in, 1, k) in MindSpore",
    )


member("weight", "LAY002", receiver="module:torch.nn.Conv1d", handler=_conv1d_weight,
       returns="tensor")


# ------------------------------------------------------------------ Linear


api("torch.nn.Linear", "mindspore.nn.Dense", rule="LAY001",
    sig=("in_features", "out_features", "bias", "device", "dtype"),
    ms_sig=("in_channels", "out_channels", "weight_init", "bias_init", "has_bias"),
    rename={"in_features": "in_channels", "out_features": "out_channels", "bias": "has_bias"},
    drop={"device": DEVICE_RULE}, returns="module:torch.nn.Linear")
for _old, _new in (("in_features", "in_channels"), ("out_features", "out_channels")):
    member(_old, "LAY001", receiver="module:torch.nn.Linear", target=_new)


# ------------------------------------------------------------------ pooling


def _kernel_copy(site):
    """A copy of the kernel_size expression, for a stride that defaults to it."""
    kernel = site.arg("kernel_size")
    if kernel is None:
        return None
    if not is_pure(kernel.value):
        site.finding(
            site.entry.rule,
            f"stride defaults to kernel_size in PyTorch; kernel_size="
            f"{site.code(kernel.value).strip()} was repeated as stride and is evaluated twice",
            comment="kernel_size expression repeated as stride",
        )
    return site.parse(site.code(kernel.value).strip())


def _stride(site, arg):
    """stride=None means kernel_size in PyTorch (MindSpore: invalid)."""
    if site.literal(arg.value, _NOT_LITERAL) is None:
        stride = _kernel_copy(site)
        site.changes.append(f"stride None -> {site.code(stride)} (kernel_size)")
        return stride
    return arg.value


def _add_stride(site, new):
    if site.arg("stride") is not None:
        return new
    stride = _kernel_copy(site)
    if stride is None:
        return new
    at = _index(new, "kernel_size")
    if at is None:  # passed positionally, so still at its PyTorch position
        at = site.entry.sig.index("kernel_size")
    site.changes.append(f"stride={site.code(stride)} added (PyTorch's default is kernel_size)")
    return _set_kw(new, "stride", stride, at=at + 1)


def _pool(pad_args: tuple):
    def handler(site):
        target = site.entry.target
        new = site.apply(func=site.ref(target))
        bound = site.bound()
        if bound is not None:
            new = _add_stride(site, new)
            if {name for name, _, _ in bound} & set(pad_args):
                new = _set_kw(new, "pad_mode", _text("pad"), at=_index(new, "padding"))
                site.changes.append("pad_mode='pad'")
        site.edit(site.entry.rule, new, detail=site.describe(f"{site.api} -> {target}"))
        return new

    return handler


_MAX_PAD = ("padding", "dilation", "ceil_mode", "return_indices")
for _d in (1, 2):
    api(f"torch.nn.MaxPool{_d}d", f"mindspore.nn.MaxPool{_d}d", rule="LAY004",
        sig=("kernel_size", "stride", "padding", "dilation", "return_indices", "ceil_mode"),
        ms_sig=("kernel_size", "stride"), values={"stride": _stride}, handler=_pool(_MAX_PAD),
        returns=f"module:torch.nn.MaxPool{_d}d")
api("torch.nn.AvgPool1d", "mindspore.nn.AvgPool1d", rule="LAY004",
    sig=("kernel_size", "stride", "padding", "ceil_mode", "count_include_pad"),
    ms_sig=("kernel_size", "stride"), values={"stride": _stride}, handler=_pool(("padding",)),
    returns="module:torch.nn.AvgPool1d")
api("torch.nn.AvgPool2d", "mindspore.nn.AvgPool2d", rule="LAY004",
    sig=("kernel_size", "stride", "padding", "ceil_mode", "count_include_pad", "divisor_override"),
    ms_sig=("kernel_size", "stride"), values={"stride": _stride}, handler=_pool(("padding",)),
    returns="module:torch.nn.AvgPool2d")

api("torch.nn.AdaptiveAvgPool2d", "mindspore.nn.AdaptiveAvgPool2d", rule="LAY005",
    sig=("output_size",), returns="module:torch.nn.AdaptiveAvgPool2d")
api("torch.nn.AdaptiveMaxPool2d", "mindspore.nn.AdaptiveMaxPool2d", rule="LAY005",
    sig=("output_size", "return_indices"), returns="module:torch.nn.AdaptiveMaxPool2d")


# ------------------------------------------------------------------ functional pooling


def _avg_padding(site, arg):
    """ops.avg_pool2d: an int, or a 4-tuple (top, bottom, left, right)."""
    value = site.literal(arg.value, _NOT_LITERAL)
    sides = _per_axis(value, 2)
    if sides is None:
        site.finding(
            "LAY006",
            f"padding={site.code(arg.value).strip()} is not a literal: ops.avg_pool2d takes an "
            "int or a 4-tuple (top, bottom, left, right), not PyTorch's (ph, pw)",
            comment="padding= not a literal: check its layout",
        )
        return None
    if isinstance(value, int):
        return arg.value
    new = _text((sides[0], sides[0], sides[1], sides[1]))
    site.changes.append(f"padding {site.code(arg.value).strip()} -> {site.code(new)}")
    return new


def _divisor(site, arg):
    return False if site.literal(arg.value, _NOT_LITERAL) is None else arg.value


def _functional_pool(site):
    target = site.entry.target
    new = site.apply(func=site.ref(target))
    if site.bound() is not None:
        new = _add_stride(site, new)
    site.edit("LAY006", new, detail=site.describe(f"{site.api} -> {target}"))
    return new


api("torch.nn.functional.max_pool2d", "mindspore.ops.max_pool2d", rule="LAY006",
    sig=("input", "kernel_size", "stride", "padding", "dilation", "ceil_mode", "return_indices"),
    ms_sig=("x", "kernel_size", "stride", "padding", "dilation", "return_indices", "ceil_mode"),
    rename={"input": "x"}, returns="tensor")
api("torch.nn.functional.avg_pool2d", "mindspore.ops.avg_pool2d", rule="LAY006",
    sig=("input", "kernel_size", "stride", "padding", "ceil_mode", "count_include_pad",
         "divisor_override"),
    ms_sig=("input_x", "kernel_size", "stride", "padding", "ceil_mode", "count_include_pad",
            "divisor_override"),
    rename={"input": "input_x"},
    values={"stride": _stride, "padding": _avg_padding, "divisor_override": _divisor},
    handler=_functional_pool, returns="tensor")
api("torch.nn.functional.avg_pool1d", "mindspore.ops.avg_pool1d", rule="LAY006",
    sig=("input", "kernel_size", "stride", "padding", "ceil_mode", "count_include_pad"),
    rename={"input": "input_x"}, values={"stride": _stride}, handler=_functional_pool,
    returns="tensor")
api("torch.nn.functional.adaptive_avg_pool2d", "mindspore.ops.adaptive_avg_pool2d",
    rule="LAY006", sig=("input", "output_size"), returns="tensor")
api("torch.nn.functional.adaptive_max_pool2d", "mindspore.ops.adaptive_max_pool2d",
    rule="LAY006", sig=("input", "output_size", "return_indices"), returns="tensor")


# ------------------------------------------------------------------ layer attributes

LAYER_ATTRIBUTES = "LAY007"

register(
    LAYER_ATTRIBUTES,
    "Layer attributes MindSpore stores under another name are renamed",
    group=GROUP,
    why="""
        Code reads a layer's settings back: ``fc.out_features`` to size the next layer,
        ``conv.groups``, ``ln.eps``, ``[l.out_features for l in model.layers]`` for a
        checkpoint. The MindSpore counterparts store some of these under other names, with
        the same value: Dense's ``in_channels``/``out_channels`` (rule LAY001), BiDense's
        ``in1_channels``/``in2_channels``/``out_channels``, the convolutions' ``group``,
        LayerNorm's ``epsilon``, GroupNorm's ``gamma``/``beta`` parameters, PReLU's ``w``,
        LeakyReLU's ``alpha``, Softmin's and Unflatten's ``axis``; BatchNorm3d keeps
        ``eps`` and ``num_features`` on the BatchNorm2d inside it (``bn.bn2d.eps``). Those
        reads (and writes) are renamed. When the port cannot tell what the receiver is (a
        function's parameter, a loop over a ModuleList), ``x.in_features``/
        ``x.out_features`` and Embedding's ``num_embeddings``/``embedding_dim`` become a
        choice made when the code runs: ``(x.out_channels if isinstance(x, nn.Dense) else
        x.out_features)``, right for a ported layer and for any other object with such an
        attribute (a custom layer); a write to such an attribute is flagged. Attributes
        with no counterpart are rule LAY008's.
    """,
    seed="seeds/002 API Comparison › nn APIs",
    reference=MAPPING,
    installed_note="""
        Checked on 2.10 by ``scripts/layer_attributes.py``, which builds each layer the port
        maps on both sides and compares every public attribute, parameter and buffer.
    """,
    example="""
        import torch
        import torch.nn as nn

        fc = nn.Linear(4, 3)
        conv = nn.Conv2d(4, 6, 3, groups=2)
        ln = nn.LayerNorm(6, eps=1e-6)
        layers = nn.ModuleList([nn.Linear(4, 8), nn.Linear(8, 2)])
        sizes = [layer.out_features for layer in layers]
        settings = (fc.out_features, conv.groups, ln.eps)
    """,
)

LAYER_ATTRIBUTES_MISSING = "LAY008"

register(
    LAYER_ATTRIBUTES_MISSING,
    "Layer attributes MindSpore does not store are flagged",
    group=GROUP,
    finding_only=True,
    why="""
        Some settings of a PyTorch layer have no attribute with the same value on the
        MindSpore Cell the port builds, so reading them raises AttributeError or gives
        another value, and assigning them changes nothing: the 1-D convolutions and pools
        store ``(1, k)`` for ``kernel_size``/``stride``/``dilation`` (they are 2-D layers
        inside), convolutions store their padding per side and have no ``padding_mode``,
        pools keep ``padding``/``ceil_mode``/``dilation``/``output_size`` only inside
        their operator, BatchNorm has no ``affine`` or ``track_running_stats`` and hands
        ``1 - momentum`` to its operator when built (assigning ``bn.momentum`` later has
        no effect), the Dropout2d family stores ``keep_prob`` rather than ``p``, layers
        have no ``inplace``, Softmax/ELU/Hardshrink keep ``dim``/``alpha``/``lambd`` only
        inside their operator, Embedding lacks ``max_norm``/``sparse``, the recurrent
        layers lack ``mode``/``nonlinearity``/``proj_size`` and ConvTranspose1d's weight
        is (in, out, 1, k). Each such read or write is flagged with what MindSpore has.
    """,
    seed="seeds/002 API Comparison › nn APIs",
    reference=MAPPING,
    installed_note="""
        Checked on 2.10 by ``scripts/layer_attributes.py``; assigning ``momentum`` on a
        built BatchNorm1d left the running-mean update unchanged.
    """,
    example="""
        import torch.nn as nn

        conv = nn.Conv1d(4, 6, 3)
        k = conv.kernel_size
        drop = nn.Dropout2d(0.3)
        rate = drop.p
    """,
)

#: layer -> PyTorch attribute -> the MindSpore attribute holding the same value
_RENAMED = {
    "Bilinear": {"in1_features": "in1_channels", "in2_features": "in2_channels", "out_features": "out_channels"},
    **{f"Conv{d}": {"groups": "group"} for d in ("1d", "2d", "3d", "Transpose1d", "Transpose2d", "Transpose3d")},
    "LayerNorm": {"eps": "epsilon"},
    "GroupNorm": {"weight": "gamma", "bias": "beta"},
    "PReLU": {"weight": "w"},
    "LeakyReLU": {"negative_slope": "alpha"},
    "Softmin": {"dim": "axis"},
    "Unflatten": {"dim": "axis"},
}

_AS_2D = "MindSpore's 1-D layer is a 2-D layer inside and stores (1, k)"
_PER_SIDE = "MindSpore stores the padding per side (an int or a (top, bottom, left, right) tuple)"
_NO_MODE = "MindSpore's convolutions only pad with zeros and store no padding mode"
_INTERNAL = "an internal flag of PyTorch's convolutions that MindSpore does not have"
_INPLACE = "MindSpore's layers have no in-place option"
_POOL_PAD = "MindSpore's pooling layers keep this only inside their operator"
_ACTIVATION = "MindSpore's layer keeps this only inside its operator"

#: layer -> PyTorch attribute -> why MindSpore has no attribute with its value
_LACKING: dict = {}


def _lack(layers, reasons: dict) -> None:
    for layer in layers:
        _LACKING.setdefault(layer, {}).update(reasons)


_lack(("Conv2d", "Conv3d"), {"padding": _PER_SIDE, "padding_mode": _NO_MODE, "transposed": _INTERNAL,
                             "output_padding": _INTERNAL})
_lack(("Conv1d",), {"kernel_size": _AS_2D, "stride": _AS_2D, "dilation": _AS_2D, "padding": _PER_SIDE,
                    "padding_mode": _NO_MODE, "transposed": _INTERNAL, "output_padding": _INTERNAL})
_lack(("ConvTranspose1d",), {"kernel_size": _AS_2D, "stride": _AS_2D, "dilation": _AS_2D,
                             "padding": _PER_SIDE, "output_padding": _PER_SIDE})
_lack(("ConvTranspose2d", "ConvTranspose3d"), {
    "padding": _PER_SIDE, "output_padding": "the port folds output_padding into MindSpore's padding"})
_lack(("ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"), {"padding_mode": _NO_MODE,
                                                                  "transposed": _INTERNAL})
_lack(("MaxPool1d", "AvgPool1d"), {"kernel_size": _AS_2D, "stride": _AS_2D})
_lack(("MaxPool1d", "MaxPool2d", "MaxPool3d"), {"padding": _POOL_PAD, "dilation": _POOL_PAD,
                                                "ceil_mode": _POOL_PAD})
_lack(("AvgPool1d", "AvgPool2d", "AvgPool3d"), {"padding": _POOL_PAD, "ceil_mode": _POOL_PAD,
                                                "count_include_pad": _POOL_PAD})
_lack(("AvgPool2d", "AvgPool3d"), {"divisor_override": _POOL_PAD})
_lack([f"Adaptive{k}Pool{d}" for k in ("Avg", "Max") for d in ("2d", "3d")], {"output_size": _POOL_PAD})
_lack(("BatchNorm1d", "BatchNorm2d", "BatchNorm3d"), {
    "affine": "MindSpore's BatchNorm always has gamma and beta (affine=False is flagged where it is built)",
    "track_running_stats": "MindSpore's BatchNorm has no such flag (use_batch_statistics is the closest)"})
_lack(("BatchNorm1d", "BatchNorm2d", "BatchNorm3d"), {
    "momentum": "MindSpore's BatchNorm hands 1 - momentum to its operator when it is built: the attribute "
                "reads 0.1 up to rounding and assigning it changes nothing"})
_lack(("ConvTranspose1d",), {"weight": "MindSpore's ConvTranspose1d stores its weight as (in, out/group, 1, k)"})
_lack(("LayerNorm",), {"elementwise_affine": "MindSpore's LayerNorm always has gamma and beta"})
_lack(("Dropout1d", "Dropout2d", "Dropout3d"), {"p": "MindSpore's layer stores keep_prob = 1 - p"})
_lack(("Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "ReLU", "ReLU6", "LeakyReLU", "ELU", "CELU", "SELU",
       "SiLU", "Mish", "Hardtanh", "Hardsigmoid", "Hardswish", "Threshold"), {"inplace": _INPLACE})
_lack(("ELU", "CELU"), {"alpha": _ACTIVATION})
_lack(("Hardshrink", "Softshrink"), {"lambd": _ACTIVATION})
_lack(("ReLU6",), {"min_val": _ACTIVATION, "max_val": _ACTIVATION})
_lack(("Softmax", "LogSoftmax"), {"dim": _ACTIVATION})
_lack(("PReLU",), {"num_parameters": "MindSpore's PReLU keeps it as the shape of w", "init": _ACTIVATION})
_lack(("Embedding",), dict.fromkeys(("max_norm", "norm_type", "scale_grad_by_freq", "sparse"),
                                    "MindSpore's Embedding has no such option"))
_lack(("LSTM", "GRU", "RNN"), {"mode": "an internal string of PyTorch's recurrent layers"})
_lack(("GRU", "RNN"), {"proj_size": "MindSpore's recurrent layers have no projections"})
_lack(("RNN",), {"nonlinearity": "MindSpore's RNN keeps it only inside its operator"})


def _lacking(layer: str, attr: str, reason: str):
    def handler(site):
        site.finding(LAYER_ATTRIBUTES_MISSING, f"{reason}; the attribute reads differently or raises AttributeError "
                     "in MindSpore", api=f"torch.nn.{layer}.{attr}",
                     comment=f"{layer}.{attr} has no MindSpore counterpart")

    return handler


for _layer, _attrs in _RENAMED.items():
    for _old, _new in _attrs.items():
        member(_old, LAYER_ATTRIBUTES, receiver=f"module:torch.nn.{_layer}", target=_new,
               returns="tensor" if _old in ("weight", "bias") else None)
def _inside_bn2d(site):
    """BatchNorm3d keeps its settings on the BatchNorm2d it wraps."""
    new = cst.Attribute(value=cst.Attribute(value=site.receiver, attr=cst.Name("bn2d")),
                        attr=site.updated.attr)
    site.edit(LAYER_ATTRIBUTES, new, detail=f".{site.original.attr.value} -> .bn2d.{site.original.attr.value} "
              "(BatchNorm3d)")
    return new


# what the weights of these layers are, for the methods called on them (``fc.weight.std()``)
for _layer in ("Linear", "Bilinear", "Conv2d", "Conv3d", "ConvTranspose2d", "ConvTranspose3d"):
    for _attr in ("weight", "bias"):
        member(_attr, LAYER_ATTRIBUTES, receiver=f"module:torch.nn.{_layer}", returns="tensor")
for _attr in ("eps", "num_features"):
    member(_attr, LAYER_ATTRIBUTES, receiver="module:torch.nn.BatchNorm3d", handler=_inside_bn2d)
for _layer, _attrs in _LACKING.items():
    for _attr, _why in _attrs.items():
        member(_attr, LAYER_ATTRIBUTES_MISSING, receiver=f"module:torch.nn.{_layer}",
               handler=_lacking(_layer, _attr, _why))


def _store(site) -> bool:
    """Is the attribute written (an assignment's or a ``del``'s target) rather than read?"""
    holder = site.statement
    node = site.original
    for small in getattr(holder, "body", ()):
        if isinstance(small, cst.Assign) and any(t.target is node for t in small.targets):
            return True
        if isinstance(small, (cst.AugAssign, cst.AnnAssign)) and small.target is node:
            return True
        if isinstance(small, cst.Del):
            return True
    return False


def _when_ported(classes: tuple, ms_name: str):
    """``x.out_features`` on a value of unknown kind: MindSpore's name when ``x`` is the
    ported layer, PyTorch's otherwise (a custom layer with such an attribute)."""

    def handler(site):
        recv_original = site.receiver_original
        if site.kind_of(recv_original) is not None or (
                site.classes and isinstance(recv_original, cst.Name) and recv_original.value == "self"):
            return None  # a known kind without its own entry, or a class's own attribute: no layer
        name = site.original.attr.value
        recv = site.receiver
        if not is_pure(site.receiver_original) or _store(site):
            site.finding(LAYER_ATTRIBUTES, f"if the receiver is a ported {classes[0]} layer, MindSpore calls this "
                         f"{ms_name}; the port cannot tell what the receiver is here",
                         api=f".{name}", comment=f".{name} is {ms_name} on a ported layer")
            return None
        refs = [site.ref(f"mindspore.nn.{c}") for c in classes]
        kinds = refs[0] if len(refs) == 1 else cst.Tuple([cst.Element(r) for r in refs])
        test = cst.Call(func=cst.Name("isinstance"), args=[cst.Arg(recv), cst.Arg(kinds)])
        new = cst.IfExp(test=test, body=cst.Attribute(value=recv, attr=cst.Name(ms_name)),
                        orelse=site.updated, lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        site.edit(LAYER_ATTRIBUTES, new, detail=f".{name}: .{ms_name} on a ported {'/'.join(classes)}, "
                  f".{name} on anything else")
        return new

    return handler


for _old, _classes, _new in (("in_features", ("Dense",), "in_channels"),
                             ("out_features", ("Dense", "BiDense"), "out_channels"),
                             ("num_embeddings", ("Embedding",), "vocab_size"),
                             ("embedding_dim", ("Embedding",), "embedding_size")):
    member(_old, LAYER_ATTRIBUTES, receiver="any", unambiguous=True, handler=_when_ported(_classes, _new))
