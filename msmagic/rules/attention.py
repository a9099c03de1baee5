"""Attention and transformer layers: nn.MultiheadAttention (ATN001),
nn.TransformerEncoderLayer (ATN002) and nn.TransformerEncoder (ATN003)."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from msmagic.engine.spec import api
from msmagic.rules.layers import DEVICE_RULE
from msmagic.rules.registry import register

GROUP = "Attention and transformer layers"
SEED = "seeds/002 API Comparison › nn APIs"
DIFF = "r2.4.10/api_mapping/pytorch_diff/"
MHA = "module:torch.nn.MultiheadAttention"
ENCODER_LAYER = "module:torch.nn.TransformerEncoderLayer"
ENCODER = "module:torch.nn.TransformerEncoder"

register(
    "ATN001",
    "MultiheadAttention keeps its arguments; bias becomes has_bias",
    group=GROUP,
    why="""
        ``nn.MultiheadAttention(embed_dim, num_heads, dropout, bias, add_bias_kv,
        add_zero_attn, kdim, vdim, batch_first)`` becomes MindSpore's
        ``nn.MultiheadAttention`` with the same arguments in the same order, except that the
        bias flag is called ``has_bias``. The forward call is the same: ``(query, key,
        value, key_padding_mask, need_weights, attn_mask, average_attn_weights)`` returning
        ``(attn_output, attn_weights)``; boolean masks use PyTorch's convention (True means
        "not attended") and float masks are added to the scores, so masks pass through
        unchanged. The parameters have PyTorch's names and layout (``in_proj_weight``
        packing q/k/v, or ``q/k/v_proj_weight`` when kdim/vdim differ, ``in_proj_bias``,
        ``out_proj.weight/bias``, ``bias_k``, ``bias_v``), so weights copy over as they are.
        Differences that remain: PyTorch starts ``out_proj.bias`` at zero, MindSpore draws it
        uniformly from +-1/sqrt(embed_dim); with ``need_weights=False`` MindSpore returns
        the 1-tuple ``(attn_output,)`` instead of ``(attn_output, None)`` (index ``[0]``
        rather than unpacking two values); the forward call has no ``is_causal`` hint and
        must receive query, key and value positionally. ``dtype`` is flagged: pass
        ``dtype=mindspore.<type>`` by hand.
    """,
    seed=SEED,
    reference=DIFF + "MultiheadAttention.md",
    installed_note="""
        Verified on 2.10 against PyTorch 2.13 in eval mode (max |d| < 1e-6): self- and
        cross-attention, batch_first, bias=False, kdim/vdim, add_bias_kv, add_zero_attn,
        average_attn_weights=False, unbatched input, bool and float attn_mask (2-D and 3-D)
        and key_padding_mask. Unlike the docs' table, MindSpore already has PyTorch's
        batch_first and average_attn_weights. Not in the docs: ``mha(query=q, key=k,
        value=v)`` raises IndexError (MindSpore's ``__call__`` reads ``args[0]``), and a
        query row whose keys are all masked gives NaN in PyTorch but unpredictable values
        in MindSpore, for every row of the batch. The docs' byte (uint8) masks are refused by
        PyTorch 2.13 itself ("only bool and floating types"), as by MindSpore for
        key_padding_mask.
    """,
    example="""
        import torch
        import torch.nn as nn
        mha = nn.MultiheadAttention(8, 2, bias=True, batch_first=True)
        mha.eval()
        x = torch.randn(2, 5, 8)
        pad = torch.tensor([[False, False, False, True, True], [False] * 5])
        out, weights = mha(x, x, x, key_padding_mask=pad)
    """,
)

register(
    "ATN002",
    "TransformerEncoderLayer ports as is; activation must be 'relu' or 'gelu'",
    group=GROUP,
    why="""
        ``nn.TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout, activation,
        layer_norm_eps, batch_first, norm_first)`` becomes MindSpore's
        ``nn.TransformerEncoderLayer`` with the same arguments and defaults (2048, 0.1,
        'relu', 1e-5, False, False); the LayerNorm epsilon is PyTorch's 1e-5, not
        MindSpore's nn.LayerNorm default of 1e-7, so nothing needs to be written out. The
        forward call is the same ``(src, src_mask, src_key_padding_mask)``. MindSpore accepts
        only the strings 'relu'/'gelu' or the functions ``ops.relu``/``ops.gelu`` as the
        activation: ``F.relu``, ``F.gelu``, ``torch.relu``, ``nn.ReLU()`` and ``nn.GELU()``
        are written as the string, and any other callable (a lambda, tanh-approximated GELU,
        your own function) is flagged. ``bias=False`` is flagged (MindSpore's layer always has
        biases), as is ``dtype``. The feed-forward layers are called ``dense1``/``dense2``
        where PyTorch says ``linear1``/``linear2``; LayerNorm weights are ``gamma``/``beta``.
    """,
    seed=SEED,
    reference=DIFF + "TransformerEncoderLayer.md",
    installed_note="""
        Verified on 2.10 (max |d| < 1e-6 with copied weights, eval mode): post- and pre-norm,
        relu and gelu, batch_first, layer_norm_eps, unbatched input, bool src_mask and
        src_key_padding_mask. The docs list batch_first, norm_first and layer_norm_eps as
        MindSpore-only; PyTorch 2.13 has them too, with the same defaults. The docs say a
        ``nn.ReLU``/``nn.GELU`` Cell is accepted as activation, but 2.10 raises ValueError
        for any Cell ("must be ops.relu or ops.gelu instance").
    """,
    example="""
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        layer = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0, activation=F.gelu,
                                           batch_first=True, norm_first=True)
        layer.eval()
        x = torch.randn(2, 5, 8)
        y = layer(x)
    """,
)

register(
    "ATN003",
    "TransformerEncoder: nested-tensor options have no MindSpore counterpart",
    group=GROUP,
    why="""
        ``nn.TransformerEncoder(encoder_layer, num_layers, norm)`` becomes MindSpore's
        ``nn.TransformerEncoder`` with the same arguments. PyTorch's
        ``enable_nested_tensor`` lets an eval-mode encoder skip padded positions when it runs
        under ``torch.no_grad()`` with a batch_first layer and a ``src_key_padding_mask``:
        their outputs are then zeros, where MindSpore (and PyTorch with
        ``enable_nested_tensor=False``) computes them. The other positions agree. An explicit
        ``enable_nested_tensor=False`` is removed, ``True`` is flagged; ``mask_check`` only
        serves the nested path and is removed. PyTorch copies ``encoder_layer``, weights
        included, into every layer; MindSpore builds new layers from its settings, so the
        layers do not start with ``encoder_layer``'s weights. The forward call's ``mask=``
        is ``src_mask=`` in MindSpore.
    """,
    seed=SEED,
    reference=DIFF + "TransformerEncoder.md",
    installed_note="""
        Verified on 2.10: the signature is ``(encoder_layer, num_layers, norm=None)`` (the
        2.10 docstring announces enable_nested_tensor/mask_check for a later version); two
        stacked layers with a final LayerNorm, a causal src_mask and a padding mask match
        PyTorch (with enable_nested_tensor=False, or outside no_grad) to 1e-6.
    """,
    example="""
        import torch
        import torch.nn as nn
        layer = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0)
        encoder = nn.TransformerEncoder(layer, num_layers=2, norm=nn.LayerNorm(8),
                                        enable_nested_tensor=False)
        encoder.eval()
        x = torch.randn(5, 2, 8)
        y = encoder(x)
    """,
)


def _not_true(site, arg) -> bool:
    """Anything but a literal True (a variable may hold False)."""
    return site.literal(arg.value, default=None) is not True


_DTYPE = "pass dtype=mindspore.<type> by hand"

# ----------------------------------------------------------------------------- ATN001

api("torch.nn.MultiheadAttention", "mindspore.nn.MultiheadAttention", rule="ATN001",
    sig=("embed_dim", "num_heads", "dropout", "bias", "add_bias_kv", "add_zero_attn", "kdim",
         "vdim", "batch_first", "device", "dtype"),
    ms_sig=("embed_dim", "num_heads", "dropout", "has_bias", "add_bias_kv", "add_zero_attn",
            "kdim", "vdim", "batch_first"),
    rename={"bias": "has_bias"},
    drop={"device": DEVICE_RULE},
    unsupported={"dtype": _DTYPE},
    returns=MHA,
    # same names and layouts: in_proj_weight / q,k,v_proj_weight, in_proj_bias,
    # bias_k, bias_v; out_proj is a Linear (weight, bias on both sides)
    params={})


# ----------------------------------------------------------------------------- ATN002

_ACTIVATION_FUNCS = {
    "torch.nn.functional.relu": "relu", "torch.relu": "relu", "torch.nn.functional.gelu": "gelu",
}
_ACTIVATION_LAYERS = {"torch.nn.ReLU": "relu", "torch.nn.GELU": "gelu"}


def _original_arg(site, arg) -> Optional[cst.Arg]:
    for old, new in zip(site.original.args, site.updated.args):
        if new is arg:
            return old
    return None


def _activation(site, arg):
    value = site.literal(arg.value)
    if value in ("relu", "gelu"):
        return arg.value
    old = _original_arg(site, arg)
    node = old.value if old is not None else None
    name = None
    if node is not None:
        qual = site.resolve(node)
        if qual in _ACTIVATION_FUNCS:
            name = _ACTIVATION_FUNCS[qual]
        elif isinstance(node, cst.Call) and site.resolve(node.func) in _ACTIVATION_LAYERS:
            args = [(a.keyword.value if a.keyword else None, site.literal(a.value, default=object()))
                    for a in node.args]
            if all(k in (None, "approximate", "inplace") for k, _ in args) and all(
                    v in ("none", False) for k, v in args if k != "inplace"):
                name = _ACTIVATION_LAYERS[site.resolve(node.func)]
    if name is not None:
        site.changes.append(f"activation {site.code(node).strip()} -> '{name}'")
        return cst.SimpleString(f"'{name}'")
    site.finding(
        "ATN002",
        f"activation={site.code(arg.value).strip()}: MindSpore's TransformerEncoderLayer accepts "
        "only 'relu'/'gelu' (or ops.relu/ops.gelu); pass one of these or keep the layer in PyTorch",
        comment="activation must be 'relu' or 'gelu' in MindSpore",
    )
    return None


api("torch.nn.TransformerEncoderLayer", "mindspore.nn.TransformerEncoderLayer", rule="ATN002",
    sig=("d_model", "nhead", "dim_feedforward", "dropout", "activation", "layer_norm_eps",
         "batch_first", "norm_first", "bias", "device", "dtype"),
    ms_sig=("d_model", "nhead", "dim_feedforward", "dropout", "activation", "layer_norm_eps",
            "batch_first", "norm_first"),
    values={"activation": _activation},
    drop={"device": DEVICE_RULE},
    unsupported={
        "bias": (_not_true, "MindSpore's TransformerEncoderLayer always has biases"),
        "dtype": _DTYPE,
    },
    returns=ENCODER_LAYER,
    # child submodules renamed (linear1 -> dense1): needs lockstep to consult the parent's
    # map for path segments; the leaves follow the Linear and LayerNorm entries
    params={"linear1": "dense1", "linear2": "dense2"})


# ----------------------------------------------------------------------------- ATN003


def _nested_tensor(site, arg) -> bool:
    return site.literal(arg.value, default=True) is not False


api("torch.nn.TransformerEncoder", "mindspore.nn.TransformerEncoder", rule="ATN003",
    sig=("encoder_layer", "num_layers", "norm", "enable_nested_tensor", "mask_check"),
    ms_sig=("encoder_layer", "num_layers", "norm"),
    drop={"mask_check": "ATN003"},
    unsupported={
        "enable_nested_tensor": (
            _nested_tensor,
            "MindSpore computes padded positions that PyTorch's nested-tensor path (eval, "
            "no_grad, batch_first, src_key_padding_mask) leaves at zero; the other positions agree",
        ),
    },
    returns=ENCODER,
    params={})


# ----------------------------------------------------------------------------- ATN004

register(
    "ATN004",
    "TransformerDecoderLayer and TransformerDecoder port as is",
    group=GROUP,
    why="""
        ``nn.TransformerDecoderLayer(d_model, nhead, dim_feedforward, dropout, activation,
        layer_norm_eps, batch_first, norm_first)`` and ``nn.TransformerDecoder(decoder_layer,
        num_layers, norm)`` exist in MindSpore with the same arguments, defaults and
        forward signature ``(tgt, memory, tgt_mask, memory_mask, tgt_key_padding_mask,
        memory_key_padding_mask)``, and compute the same outputs in eval mode. As in the
        encoder layer, the feed-forward sublayers are called ``dense1``/``dense2`` where
        PyTorch says ``linear1``/``linear2``: the entry maps those names, so parity copies
        and compares every weight. The activation must be 'relu' or 'gelu' (ATN002), and
        ``bias=False`` has no counterpart (MindSpore's layer always has biases).
    """,
    seed="seeds/002 API Comparison › nn APIs",
    reference=DIFF + "TransformerDecoderLayer.md",
    installed_note="""
        Verified on 2.10: parameter names match PyTorch's except linear1/linear2 ->
        dense1/dense2; layer_norm_eps defaults to 1e-5 like PyTorch.
    """,
    example="""
        import torch
        import torch.nn as nn
        layer = nn.TransformerDecoderLayer(8, 2, dim_feedforward=16, dropout=0.0, batch_first=True)
        layer.eval()
        tgt = torch.linspace(-1, 1, 2 * 3 * 8).reshape(2, 3, 8)
        memory = torch.linspace(1, -1, 2 * 4 * 8).reshape(2, 4, 8)
        y = layer(tgt, memory)
    """,
)

_LAYER_ARGS = ("d_model", "nhead", "dim_feedforward", "dropout", "activation", "layer_norm_eps",
               "batch_first", "norm_first")


def _same_arguments(cls: str, ms_args: tuple) -> dict:
    """The declarative part shared by the decoder layer and the whole Transformer: PyTorch's
    arguments plus ``bias``/``device``/``dtype``, which MindSpore's classes lack."""
    return dict(
        sig=ms_args + ("bias", "device", "dtype"), ms_sig=ms_args,
        values={"activation": _activation}, drop={"device": DEVICE_RULE},
        unsupported={"bias": (_not_true, f"MindSpore's {cls} always has biases"), "dtype": _DTYPE},
    )


api("torch.nn.TransformerDecoderLayer", "mindspore.nn.TransformerDecoderLayer", rule="ATN004",
    returns="module:torch.nn.TransformerDecoderLayer", params={"linear1": "dense1", "linear2": "dense2"},
    **_same_arguments("TransformerDecoderLayer", _LAYER_ARGS))
api("torch.nn.TransformerDecoder", "mindspore.nn.TransformerDecoder", rule="ATN004",
    sig=("decoder_layer", "num_layers", "norm"), returns="module:torch.nn.TransformerDecoder",
    params={})
api("torch.nn.Transformer", "mindspore.nn.Transformer", rule="ATN004",
    returns="module:torch.nn.Transformer", params={},
    **_same_arguments("Transformer", ("d_model", "nhead", "num_encoder_layers", "num_decoder_layers",
                                      "dim_feedforward", "dropout", "activation", "custom_encoder",
                                      "custom_decoder", "layer_norm_eps", "batch_first", "norm_first")))
