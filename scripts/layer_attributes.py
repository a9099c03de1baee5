"""Compare the public attributes of each PyTorch layer msmagic maps with its MindSpore port.

usage: python scripts/layer_attributes.py [LAYER ...]   (e.g. torch.nn.Linear; default: all)

For every layer the engine's tables map (an entry returning ``module:torch.nn.X``), the
layer is built from a typical constructor call (``CTORS`` below, else the first
constructor sample of PyTorch's ``module_db``), the construction is ported with
``msmagic.port`` and run on MindSpore, and each public attribute of the PyTorch layer
(its ``vars()`` that do not start with ``_``, its parameters and buffers) is looked up on
the MindSpore Cell under the same name and under the name a ``MEMBERS`` entry renames it
to. One line per attribute that does not read the same:

    torch.nn.Linear  out_features  3  -> missing (mapped: out_channels = 3)

``missing``: the Cell has no such attribute; ``differs``: it has one with another value.
What the port does about each is shown after ``mapped:`` (a rename and the value read
through it), ``flagged`` (a member entry with a handler) or ``UNHANDLED``. The script
imports both frameworks; it is a tool for the rule authors, not part of the port.
"""

from __future__ import annotations

import sys
import warnings

warnings.filterwarnings("ignore")

#: typical constructor arguments (what notebooks write) per layer
CTORS = {
    "Linear": "4, 3", "Bilinear": "2, 3, 4", "Embedding": "10, 4, padding_idx=0",
    "Conv1d": "2, 4, 3", "Conv2d": "2, 4, 3, stride=2, padding=1", "Conv3d": "2, 4, 3",
    "ConvTranspose1d": "2, 4, 3", "ConvTranspose2d": "2, 4, 3, stride=2", "ConvTranspose3d": "2, 4, 3",
    "BatchNorm1d": "4", "BatchNorm2d": "4", "BatchNorm3d": "4", "LayerNorm": "4", "GroupNorm": "2, 4",
    "Dropout": "0.3", "Dropout1d": "0.3", "Dropout2d": "0.3", "Dropout3d": "0.3",
    "LSTM": "3, 5, 2, batch_first=True", "GRU": "3, 5, 2, batch_first=True", "RNN": "3, 5, 2",
    "LSTMCell": "3, 5", "GRUCell": "3, 5", "RNNCell": "3, 5",
    "MaxPool1d": "2", "MaxPool2d": "2", "MaxPool3d": "2", "AvgPool1d": "2", "AvgPool2d": "2",
    "AvgPool3d": "2", "AdaptiveAvgPool1d": "2", "AdaptiveAvgPool2d": "(2, 2)", "AdaptiveAvgPool3d": "2",
    "AdaptiveMaxPool1d": "2", "AdaptiveMaxPool2d": "(2, 2)", "AdaptiveMaxPool3d": "2",
    "LeakyReLU": "0.2", "ELU": "0.5", "CELU": "0.5", "Hardtanh": "-2.0, 2.0", "Threshold": "0.1, 20.0",
    "Softmax": "dim=1", "LogSoftmax": "dim=1", "Softmin": "dim=1", "Flatten": "", "Unflatten": "1, (2, 2)",
    "PReLU": "", "PixelShuffle": "2", "PixelUnshuffle": "2", "ChannelShuffle": "2",
    "MultiheadAttention": "8, 2", "TransformerEncoderLayer": "8, 2, 16", "TransformerDecoderLayer": "8, 2, 16",
    "LocalResponseNorm": "2", "LPPool1d": "2, 2", "LPPool2d": "2, 2", "ConstantPad1d": "2, 1.5",
    "ConstantPad2d": "2, 1.5", "ConstantPad3d": "2, 1.5", "ReflectionPad1d": "2", "ReflectionPad2d": "2",
    "ReflectionPad3d": "2", "ReplicationPad1d": "2", "ReplicationPad2d": "2", "ReplicationPad3d": "2",
    "ZeroPad1d": "2", "ZeroPad2d": "2", "ZeroPad3d": "2", "Softshrink": "0.4", "Hardshrink": "0.4",
    "GLU": "", "Upsample": "scale_factor=2", "GELU": "", "ReLU": "", "Sigmoid": "", "Tanh": "",
    "Identity": "", "Softmax2d": "", "ReLU6": "", "SiLU": "", "Mish": "", "SELU": "", "Softsign": "",
    "Tanhshrink": "", "LogSigmoid": "", "Hardsigmoid": "", "Hardswish": "",
}


#: attributes not worth a mapping: (layer, attribute) -> why
IGNORED = {
    ("TransformerEncoderLayer", "activation"): "a function object of each framework",
    ("TransformerDecoderLayer", "activation"): "a function object of each framework",
    ("TransformerEncoderLayer", "activation_relu_or_gelu"): "PyTorch's internal fast-path flag",
    ("Upsample", "name"): "PyTorch's internal name; the port builds another Cell (PAD002)",
    ("Upsample", "recompute_scale_factor"): "the port builds another Cell (PAD002)",
}


def _layers(only):
    import msmagic.rules  # noqa: F401  (fills the engine's tables)
    from msmagic.engine import spec as S

    for key, entry in sorted(S.APIS.items()):
        if only and key not in only:
            continue
        if entry.attr or not (entry.returns or "").startswith("module:torch.nn."):
            continue
        name = key.rsplit(".", 1)[-1]
        if name in CTORS:
            yield key, f"{key}({CTORS[name]})"


def _public(module) -> dict:
    """PyTorch's public per-instance attributes, parameters and buffers."""
    out = {k: v for k, v in vars(module).items() if not k.startswith("_") and k != "training"}
    out.update(dict(module.named_parameters(recurse=False)))
    out.update(dict(module.named_buffers(recurse=False)))
    return out


def _same(t, m) -> bool:
    import numpy as np
    import torch

    if isinstance(t, torch.Tensor):
        return hasattr(m, "shape") and tuple(t.shape) == tuple(m.shape)
    if isinstance(t, (tuple, list)) and not isinstance(m, (tuple, list)):
        return all(x == m for x in t)
    if isinstance(t, (tuple, list)):
        return tuple(t) == tuple(m)
    try:
        return bool(np.all(t == m))
    except Exception:
        return False


def _mapping(layer_kind: str, attr: str):
    """(how the port reads ``attr`` on this layer kind, the MindSpore name or None)."""
    from msmagic.engine import spec as S

    for m in S.MEMBERS.get(attr, ()):
        if S.kind_matches(m.receiver, layer_kind):
            if m.target:
                return "mapped", m.target
            if m.handler is not None:
                return "handled", None
    return None, None


def main(argv) -> int:
    import torch  # noqa: F401
    import mindspore  # noqa: F401

    import msmagic

    problems = 0
    for key, call in _layers(set(argv)):
        src = f"import torch\nlayer = {call}\n"
        tns: dict = {}
        exec(src, tns)
        port = msmagic.port(src)
        mns: dict = {}
        try:
            exec(port.code, mns)
        except Exception as exc:
            print(f"{key:40s} (port does not build: {type(exc).__name__}: {str(exc)[:80]})")
            continue
        tl, ml = tns["layer"], mns["layer"]
        for attr, value in sorted(_public(tl).items()):
            if (key.rsplit(".", 1)[-1], attr) in IGNORED:
                continue
            has = hasattr(ml, attr)
            if has and _same(value, getattr(ml, attr)):
                continue
            state = "differs" if has else "missing"
            how, target = _mapping(f"module:{key}", attr)
            if how == "mapped":
                got = getattr(ml, target, "<missing>")
                ok = _same(value, got)
                note = f"mapped: {target} = {_short(got)}" + ("" if ok else "  MAPPED VALUE DIFFERS")
                problems += not ok
            elif how == "handled":
                note = "handled by a rule (flagged or rewritten)"
            else:
                note = "UNHANDLED"
                problems += 1
            mine = _short(getattr(ml, attr)) if has else ""
            print(f"{key:40s} {attr:24s} {_short(value):28s} -> {state} {mine}  ({note})")
    print(f"{problems} attribute(s) neither mapped nor handled")
    return 0


def _short(v) -> str:
    import torch

    if isinstance(v, torch.Tensor) or type(v).__name__ in ("Tensor", "Parameter"):
        return f"tensor{tuple(v.shape)}"
    text = repr(v)
    return text if len(text) <= 28 else text[:25] + "..."


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
