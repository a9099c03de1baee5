"""Padding, resizing and normalising tensors: F.pad, F.interpolate / nn.Upsample,
F.normalize and F.one_hot (PAD)."""

from __future__ import annotations

import libcst as cst

from msmagic.engine.spec import TENSOR, api
from msmagic.rules._util import is_pure, truthy_literal
from msmagic.rules.registry import register

GROUP = "Padding and resizing"
SEED = "seeds/002 API Comparison › functional APIs"
F = "torch.nn.functional"

register(
    "PAD001",
    "F.pad becomes ops.pad (input_x, padding); 3-D reflect padding flagged",
    group=GROUP,
    why="""
        ``mindspore.ops.pad(input_x, padding, mode='constant', value=None)`` reads the
        padding tuple like PyTorch (pairs from the last axis backwards, negative values
        crop) and supports the ``constant`` (with ``value``), ``reflect``, ``replicate`` and
        ``circular`` modes. Only the first two parameter names differ, so positional calls
        are unchanged and ``input=``/``pad=`` keywords are renamed. One gap: reflect
        padding of three axes (a 6-element pad tuple) raises in MindSpore, so such a call
        is flagged.
    """,
    seed=SEED,
    reference="r2.4.10/api_mapping/pytorch_diff/pad.md",
    installed_note="""
        Verified on 2.10: constant/reflect/replicate/circular with 2-, 4- and 6-element pads
        match PyTorch on 3-D to 5-D inputs (the docs say circular is not supported; it is),
        except reflect with a 6-element pad, which raises "input dims for reflect mode must
        be less than or equal to 4".
    """,
    example="""
        import torch
        import torch.nn.functional as F
        x = torch.arange(24.).reshape(1, 2, 3, 4)
        a = F.pad(x, (1, 2), value=-1.0)
        b = F.pad(x, (1, 1, 2, 0), mode="reflect")
        c = F.pad(x, (1, 1, 1, 1), mode="circular")
    """,
)

register(
    "PAD002",
    "interpolate/Upsample: float scale_factor with recompute_scale_factor=True",
    group=GROUP,
    why="""
        ``ops.interpolate`` and ``nn.Upsample`` take PyTorch's parameters, but on 2.10 a
        ``scale_factor`` is refused for the nearest/linear/bilinear/bicubic modes of 3-D and
        4-D inputs, and an ``int`` scale factor is refused outright. The port writes the
        factor as a float and adds ``recompute_scale_factor=True``: MindSpore then computes
        the output size ``floor(in * factor)`` and interpolates to it. For whole-number
        factors (and for ``area``, ``align_corners=True`` or a PyTorch call that itself
        recomputes) this is exactly PyTorch's result. For a fractional factor PyTorch maps
        coordinates with the factor itself, not with the size ratio, so results differ and
        the call is flagged; pass ``size=`` instead. ``bicubic`` uses another kernel in
        MindSpore (differences up to ~0.06, ~4e-4 with ``align_corners=True``) and is
        flagged, as are ``antialias=True`` and a mode that is not a literal.
    """,
    seed=SEED,
    reference="r2.4.10/api_mapping/pytorch_diff/interpolate.md",
    installed_note="""
        Verified on 2.10: size= matches PyTorch for nearest, nearest-exact, linear, bilinear,
        trilinear and area; scale_factor=2 raises "must be float"; scale_factor=2.0 raises
        for nearest/bilinear on 4-D unless recompute_scale_factor=True; bicubic differs even
        with align_corners=True (the docs only mention align_corners=False). ops.interpolate's
        input parameter is called input (the docs say x).
    """,
    example="""
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        x = torch.arange(30.).reshape(1, 2, 3, 5)
        a = F.interpolate(x, scale_factor=2)
        b = F.interpolate(x, size=(4, 7), mode="bilinear", align_corners=False)
        c = nn.Upsample(scale_factor=2, mode="bilinear", align_corners=True)(x)
    """,
)

register(
    "PAD003",
    "F.normalize is built from ops.vector_norm and ops.clamp",
    group=GROUP,
    why="""
        MindSpore 2.10 has no ``ops.normalize``. PyTorch divides the input by its p-norm
        along ``dim``, clamped below by ``eps``: ``x / max(||x||_p, eps)``. The port writes
        exactly that with ``ops.vector_norm(x, ord=p, axis=dim, keepdims=True)`` and
        ``ops.clamp(..., min=eps)``; the kept dimension broadcasts like PyTorch's
        ``expand_as``. ``ops.norm`` is not used because its kernel rejects float64. When the
        input is not a plain name it is evaluated once through a lambda. ``out=`` is flagged.
    """,
    seed=SEED,
    reference="r2.4.10/api_mapping/pytorch_api_mapping.md (no normalize entry)",
    installed_note="""
        Verified on 2.10: mindspore.ops has no normalize; ops.norm(x, ord=2, dim=1) raises for
        float64 (LpNorm kernel) while ops.vector_norm works for float16/32/64 and p = 1, 2,
        3, inf; all-zero rows give zeros like PyTorch.
    """,
    example="""
        import torch
        import torch.nn.functional as F
        x = torch.arange(12.).reshape(3, 4) - 5
        a = F.normalize(x)
        b = F.normalize(x, p=1.0, dim=0)
    """,
)

register(
    "PAD004",
    "F.one_hot becomes ops.one_hot; num_classes=-1 is computed from the input",
    group=GROUP,
    why="""
        ``ops.one_hot(indices, depth)`` gives the same int64 one-hot tensor as PyTorch for
        int64 or int32 indices, but it has no default depth: PyTorch's ``num_classes=-1``
        means one more than the largest index. The port writes that out as
        ``int(t.max()) + 1`` (through a lambda when the input is not a plain name).
        ``num_classes=`` becomes the positional depth. Note that MindSpore gives a zero row
        for an index out of range where PyTorch raises.
    """,
    seed=SEED,
    reference="r2.4.10/api_mapping/pytorch_api_mapping.md (torch.nn.functional.one_hot)",
    installed_note="""
        Verified on 2.10: ops.one_hot(indices, depth) returns int64 for int64 and int32
        indices; ops.one_hot(t, num_classes=3) raises TypeError (no such keyword).
    """,
    example="""
        import torch
        import torch.nn.functional as F
        labels = torch.tensor([0, 2, 1, 2])
        a = F.one_hot(labels, 4)
        b = F.one_hot(labels)
    """,
)


# ----------------------------------------------------------------------------- helpers


def _kw(name: str, value) -> cst.Arg:
    return cst.Arg(keyword=cst.Name(name), value=value,
                   equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                                         whitespace_after=cst.SimpleWhitespace("")))


def _append(call: cst.Call, *args: cst.Arg) -> cst.Call:
    items = list(call.args)
    if items:
        items[-1] = items[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
    out = items + list(args)
    out = [a.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
           if i < len(out) - 1 else a.with_changes(comma=cst.MaybeSentinel.DEFAULT)
           for i, a in enumerate(out)]
    return call.with_changes(args=out)


def _text(site, name: str, default: str) -> str:
    arg = site.arg(name)
    return default if arg is None else site.code(arg.value).strip()


# ----------------------------------------------------------------------------- PAD001


def _pad(site):
    mode_arg = site.arg("mode")
    mode = "constant" if mode_arg is None else site.literal(mode_arg.value)
    pad_arg = site.arg("pad")
    pad = site.literal(pad_arg.value) if pad_arg is not None else None
    if mode == "reflect" and isinstance(pad, (tuple, list)) and len(pad) > 4:
        site.finding("PAD001", "reflect padding of three axes (a 6-element pad) raises in MindSpore "
                     "2.10 (reflect is limited to 4-D inputs); pad one pair of axes at a time",
                     comment="3-axis reflect padding unsupported")
    new = site.apply(func=site.ref("mindspore.ops.pad"))
    site.edit("PAD001", new, detail=site.describe("torch.nn.functional.pad -> mindspore.ops.pad"))
    return new


api(f"{F}.pad", rule="PAD001", sig=("input", "pad", "mode", "value"),
    rename={"input": "input_x", "pad": "padding"}, ms_sig=("input_x", "padding", "mode", "value"),
    handler=_pad, returns=TENSOR)

# ----------------------------------------------------------------------------- PAD002

_LINEAR = {"linear", "bilinear", "trilinear", "bicubic"}


def _whole(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and float(v) == int(v)


def _is_arg(arg: cst.Arg, keyword: str, original=None) -> bool:
    """Is ``arg`` passed as ``keyword=``, or (positionally) the argument ``original``?"""
    if arg.keyword is not None:
        return arg.keyword.value == keyword
    return original is not None and arg.value is original.value


def _float_text(v) -> str:
    return repr(float(v))


def _interpolate(target: str):
    def handler(site):
        bound = site.bound()
        if bound is None:
            new = site.apply(func=site.ref(target))
            site.edit("PAD002", new, detail=site.describe(f"-> {target}"))
            return new
        mode_arg = site.arg("mode")
        mode = "nearest" if mode_arg is None else site.literal(mode_arg.value)
        if not isinstance(mode, str):
            site.finding("PAD002", "mode is not a literal: MindSpore's bicubic differs from PyTorch's "
                         "and fractional scale factors behave differently per mode; check the mode",
                         comment="interpolate mode not a literal")
        elif mode == "bicubic":
            site.finding("PAD002", "MindSpore's bicubic interpolation uses another kernel: values differ "
                         "from PyTorch's (up to ~0.06; ~4e-4 with align_corners=True)",
                         comment="bicubic values differ in MindSpore")
        sf_arg = site.arg("scale_factor")
        ac = site.arg("align_corners")
        rc = site.arg("recompute_scale_factor")
        torch_recomputes = rc is not None and site.literal(rc.value) is True
        new = site.apply(func=site.ref(target))
        if sf_arg is not None and site.code(sf_arg.value).strip() != "None":
            sf = site.literal(sf_arg.value, default=None)
            factors = list(sf) if isinstance(sf, (tuple, list)) else [sf]
            literal = all(isinstance(f, (int, float)) and not isinstance(f, bool) for f in factors)
            # the factor as floats (MindSpore refuses ints)
            if literal:
                text = (_float_text(sf) if not isinstance(sf, (tuple, list)) else
                        "(" + ", ".join(_float_text(f) for f in factors) + ("," if len(factors) == 1 else "") + ")")
                new = new.with_changes(args=[
                    a.with_changes(value=site.parse(text)) if _is_arg(a, "scale_factor", sf_arg) else a
                    for a in new.args])
                if text != site.code(sf_arg.value).strip():
                    site.changes.append("scale_factor written as a float")
            exact = (literal and all(_whole(f) for f in factors)) or torch_recomputes or mode == "area" or (
                mode in _LINEAR and ac is not None and site.literal(ac.value) is True)
            if not literal:
                site.finding("PAD002", "scale_factor is not a literal: MindSpore needs a float (an int raises) "
                             "and matches PyTorch only for whole-number factors; pass size= to be exact",
                             comment="scale_factor not a literal: must be a float")
            elif not exact:
                site.finding("PAD002", f"fractional scale_factor {site.code(sf_arg.value).strip()}: PyTorch maps "
                             "coordinates with the factor, MindSpore with the recomputed size ratio, so values "
                             "differ; pass size= (or recompute_scale_factor=True in PyTorch)",
                             comment="fractional scale_factor: values may differ")
            if not torch_recomputes:
                kept = [a for a in new.args if not _is_arg(a, "recompute_scale_factor")]
                new = _append(new.with_changes(args=kept), _kw("recompute_scale_factor", cst.Name("True")))
                site.changes.append("added recompute_scale_factor=True")
        site.edit("PAD002", new, detail=site.describe(f"-> {target}"))
        return new

    return handler


_ANTIALIAS = {"antialias": (truthy_literal, "MindSpore's interpolate has no anti-aliasing; results differ "
                            "when downsampling")}
_INTERP_SIG = ("input", "size", "scale_factor", "mode", "align_corners", "recompute_scale_factor", "antialias")
api(f"{F}.interpolate", rule="PAD002", sig=_INTERP_SIG, ms_sig=_INTERP_SIG[:6],
    unsupported=_ANTIALIAS, handler=_interpolate("mindspore.ops.interpolate"), returns=TENSOR)
api(f"{F}.upsample", rule="PAD002", sig=_INTERP_SIG[:5], ms_sig=_INTERP_SIG[:6],
    handler=_interpolate("mindspore.ops.interpolate"), returns=TENSOR)
api("torch.nn.Upsample", rule="PAD002", sig=_INTERP_SIG[1:6], ms_sig=_INTERP_SIG[1:6],
    handler=_interpolate("mindspore.nn.Upsample"), returns="module:torch.nn.Upsample")

# ----------------------------------------------------------------------------- PAD003


def _normalize(site):
    x = site.arg("input")
    if x is None or site.bound() is None:
        return None
    out = site.arg("out")
    if out is not None and site.code(out.value).strip() != "None":
        site.finding("PAD003", f"out={site.code(out.value).strip()}: MindSpore functions return new tensors; "
                     "assign the result instead", comment="out= has no MindSpore equivalent, removed")
    p, dim, eps = _text(site, "p", "2.0"), _text(site, "dim", "1"), _text(site, "eps", "1e-12")
    norm = site.code(site.ref("mindspore.ops.vector_norm"))
    clamp = site.code(site.ref("mindspore.ops.clamp"))

    def body(v: str) -> str:
        return f"{v} / {clamp}({norm}({v}, ord={p}, axis={dim}, keepdims=True), min={eps})"

    if is_pure(x.value):
        text = f"({body(site.code(x.value).strip())})"
    else:
        text = f"(lambda _x: {body('_x')})({site.code(x.value).strip()})"
    new = site.parse(text)
    site.edit("PAD003", new, detail="torch.nn.functional.normalize -> x / ops.clamp(ops.vector_norm(...), min=eps)")
    return new


api(f"{F}.normalize", rule="PAD003", sig=("input", "p", "dim", "eps", "out"), handler=_normalize, returns=TENSOR)

# ----------------------------------------------------------------------------- PAD004


def _one_hot(site):
    x = site.arg("input") or site.arg("tensor")
    if x is None or site.bound() is None:
        return None
    nc = site.arg("num_classes")
    one_hot = site.code(site.ref("mindspore.ops.one_hot"))
    src = site.code(x.value).strip()
    if nc is not None and site.literal(nc.value) != -1:
        new = site.parse(f"{one_hot}({src}, {site.code(nc.value).strip()})")
    elif is_pure(x.value):
        new = site.parse(f"{one_hot}({src}, int({src}.max()) + 1)")
        site.changes.append("num_classes=-1 computed as max + 1")
    else:
        new = site.parse(f"(lambda _t: {one_hot}(_t, int(_t.max()) + 1))({src})")
        site.changes.append("num_classes=-1 computed as max + 1")
    site.edit("PAD004", new, detail=site.describe("torch.nn.functional.one_hot -> mindspore.ops.one_hot"))
    return new


api(f"{F}.one_hot", rule="PAD004", sig=("input", "num_classes"), handler=_one_hot, returns=TENSOR)

# nn.UpsamplingNearest2d / nn.UpsamplingBilinear2d: nn.Upsample with the mode (and, for
# bilinear, align_corners=True) these deprecated classes fix
api("torch.nn.UpsamplingNearest2d", rule="PAD002", sig=("size", "scale_factor"), ms_sig=("size", "scale_factor"),
    handler=_interpolate("mindspore.nn.Upsample"), returns="module:torch.nn.Upsample")
api("torch.nn.UpsamplingBilinear2d", rule="PAD002", sig=("size", "scale_factor"), ms_sig=("size", "scale_factor"),
    defaults={"mode": '"bilinear"', "align_corners": "True"},
    handler=_interpolate("mindspore.nn.Upsample"), returns="module:torch.nn.Upsample")
