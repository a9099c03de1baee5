"""Embeddings and normalisation: nn.Embedding (EMB) and nn.LayerNorm (NRM)."""

from __future__ import annotations

import libcst as cst

from msmagic.engine.spec import api, member
from msmagic.rules._util import is_pure, truthy_literal
from msmagic.rules.layers import DEVICE_RULE
from msmagic.rules.registry import register

GROUP = "Embeddings and normalisation"
EMBEDDING = "module:torch.nn.Embedding"
LAYER_NORM = "module:torch.nn.LayerNorm"

register(
    "EMB001",
    "Embedding: padding_idx row gets no gradient; N(0, 1) init written out",
    group=GROUP,
    why="""
        ``nn.Embedding(num_embeddings, embedding_dim, padding_idx)`` becomes MindSpore's
        ``nn.Embedding(vocab_size, embedding_size, padding_idx=...)``; the sizes stay
        positional and ``padding_idx`` becomes a keyword because MindSpore puts
        ``use_one_hot``, ``embedding_table`` and ``dtype`` before it. PyTorch fills the table
        from a standard normal N(0, 1), while MindSpore's default ``'normal'`` initialiser
        has a standard deviation of 0.01, a hundred times smaller, which changes training
        from the first step. The port therefore passes ``embedding_table=Normal(1.0)``
        unless an initialiser was given. The row at ``padding_idx`` is zero on both sides,
        but PyTorch also gives it no gradient (it stays what it was set to, zero or a
        pretrained row), while MindSpore's Embedding trains it like any other row. With a
        ``padding_idx`` the port therefore uses a subclass of ``nn.Embedding``, defined
        before the statement, whose ``construct`` passes the looked-up rows at padding
        positions through ``ops.stop_gradient``: the values are the same, and the padding
        row's gradient is zero as in PyTorch.
        ``max_norm`` (renormalising looked-up rows in place), ``scale_grad_by_freq``,
        ``sparse`` gradients and ``_weight``/``_freeze`` have no MindSpore counterpart and
        are removed with a finding.
    """,
    seed="seeds/004 Network Basic Unit: Cell › parameters and initialisation",
    reference="r2.4.10/api_mapping/pytorch_diff/Embedding.md",
    installed_note="""
        Verified on 2.10: nn.Embedding accepts both int64 and int32 indices; the default
        'normal' table has std 0.01; with embedding_table=Normal(1.0) and padding_idx the
        padding row is still zero, but its gradient is not (mint.nn.Embedding, which masks
        it, has no CPU kernel); the subclass's gradient is PyTorch's in PyNative and jit.
    """,
    example="""
        import torch
        import torch.nn as nn
        emb = nn.Embedding(10, 4, padding_idx=0)
        ids = torch.tensor([[0, 2, 9], [4, 0, 1]])
        out = emb(ids)
    """,
)

register(
    "EMB002",
    "Embedding weight is embedding_table; sizes are vocab_size, embedding_size",
    group=GROUP,
    why="""
        MindSpore's ``nn.Embedding`` stores its lookup table as the parameter
        ``embedding_table`` and its sizes as ``vocab_size`` and ``embedding_size``; there is
        no ``weight``, ``num_embeddings`` or ``embedding_dim`` attribute. Reads of these
        attributes on a known PyTorch Embedding are renamed so that code inspecting or
        copying the table keeps working. The table has the same (vocab, dim) layout on both
        sides, so no transpose is needed when loading weights.
    """,
    seed="seeds/004 Network Basic Unit: Cell › parameters",
    installed_note="Verified on 2.10: Embedding has embedding_table, vocab_size and embedding_size.",
    example="""
        import torch.nn as nn
        emb = nn.Embedding(6, 3)
        table = emb.weight
        rows = emb.num_embeddings
        dim = emb.embedding_dim
    """,
)

register(
    "NRM001",
    "LayerNorm: shape becomes a tuple, eps becomes epsilon=1e-5",
    group=GROUP,
    why="""
        MindSpore's ``nn.LayerNorm`` takes ``normalized_shape`` only as a tuple or list (an
        int raises), names the stability term ``epsilon`` and defaults it to 1e-7 where
        PyTorch uses 1e-5, so the port writes ``(n,)`` and ``epsilon=1e-5`` explicitly.
        MindSpore picks the normalised axes with ``begin_norm_axis``/``begin_params_axis``
        (default -1, the last axis), which matches PyTorch for a one-element shape on an
        input of any rank. For a shape of two or more dims the axes would have to be
        counted from the input's rank, which is unknown when porting, and negative values
        other than -1 are rejected, so such calls stay PyTorch and are flagged. A shape
        held by a name or attribute (``nn.LayerNorm(d_model)``, the usual spelling in a
        block that receives its width) is passed as ``(d,) if isinstance(d, int) else d``:
        an int is PyTorch's one-element shape, and a sequence is passed as it is (a
        one-element one ports exactly; MindSpore raises a ValueError on the first call
        for a longer one, whose gamma cannot match the last axis, so it never runs
        silently on other axes). Other expressions are flagged. ``elementwise_affine=False`` and ``bias=False`` are flagged
        too: MindSpore always creates trainable gamma and beta.
    """,
    seed="seeds/002 API Comparison › nn APIs",
    reference="r2.4.10/api_mapping/pytorch_diff/LayerNorm.md",
    installed_note="""
        Verified on 2.10: normalized_shape=4 raises TypeError; begin_norm_axis=-2 on a 3-D
        input raises ("should be in the range [-1, 3)"); the default epsilon is 1e-7;
        normalized_shape=(3, 4) with the default axes raises ValueError ("gamma or beta shape
        must match input shape") when called on a (2, 3, 4) input.
    """,
    example="""
        import torch
        import torch.nn as nn
        ln = nn.LayerNorm(4)
        x = torch.arange(24.).reshape(2, 3, 4)
        y = ln(x)
    """,
)

register(
    "NRM002",
    "LayerNorm weight and bias are gamma and beta",
    group=GROUP,
    why="""
        MindSpore's ``nn.LayerNorm`` names its scale and shift parameters ``gamma`` and
        ``beta`` instead of ``weight`` and ``bias``. Reads of these attributes on a known
        PyTorch LayerNorm are renamed; the shapes and initial values (ones and zeros) are
        the same, so copied values need no conversion.
    """,
    seed="seeds/002 API Comparison › nn APIs",
    installed_note="Verified on 2.10: nn.LayerNorm exposes gamma and beta.",
    example="""
        import torch.nn as nn
        ln = nn.LayerNorm(5)
        scale = ln.weight
        shift = ln.bias
    """,
)


# ----------------------------------------------------------------------------- EMB001


def _padding_embedding_source(site):
    base = site.code(site.ref("mindspore.nn.Embedding"))
    where = site.code(site.ref("mindspore.ops.where"))
    stop_gradient = site.code(site.ref("mindspore.ops.stop_gradient"))
    return lambda name: (
        f"class {name}({base}):\n"
        f'    """PyTorch\'s nn.Embedding with padding_idx: the positions that look up the padding row pass no gradient to it."""\n'
        f"\n"
        f"    def construct(self, ids):\n"
        f"        out = super().construct(ids)\n"
        f"        if self.padding_idx is None:\n"
        f"            return out\n"
        f"        padding = (ids == self.padding_idx).unsqueeze(-1)\n"
        f"        return {where}(padding, {stop_gradient}(out), out)\n"
    )


def _embedding(site):
    padding = site.arg("padding_idx")
    func, detail = site.ref("mindspore.nn.Embedding"), "nn.Embedding -> mindspore.nn.Embedding"
    if site.bound() is not None and padding is not None and _not_none(site, padding):
        name = site.define("PaddingEmbedding", _padding_embedding_source(site))
        func = cst.Name(name)
        detail = f"nn.Embedding with padding_idx -> {name}, a mindspore.nn.Embedding giving the padding row no gradient"
    new = site.apply(func=func)
    if site.bound() is not None and not any(a.keyword and a.keyword.value == "embedding_table" for a in new.args):
        init = cst.Call(func=site.ref("mindspore.common.initializer.Normal"), args=[cst.Arg(cst.Float("1.0"))])
        new = new.with_changes(args=[*new.args[:-1], new.args[-1].with_changes(
            comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
            cst.Arg(keyword=cst.Name("embedding_table"), value=init,
                    equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                                          whitespace_after=cst.SimpleWhitespace("")))])
        site.changes.append("added embedding_table=Normal(1.0) (PyTorch's N(0, 1))")
    site.edit("EMB001", new, detail=site.describe(detail))
    return new


def _not_none(site, arg) -> bool:
    return site.literal(arg.value, default=True) is not None


api("torch.nn.Embedding", rule="EMB001", params={"weight": "embedding_table"},
    sig=("num_embeddings", "embedding_dim", "padding_idx", "max_norm", "norm_type",
         "scale_grad_by_freq", "sparse", "_weight", "_freeze", "device", "dtype"),
    ms_sig=("vocab_size", "embedding_size", "use_one_hot", "embedding_table", "dtype", "padding_idx"),
    rename={"num_embeddings": "vocab_size", "embedding_dim": "embedding_size"},
    drop={"device": DEVICE_RULE},
    # MindSpore lacks these parameters: a default value is dropped, anything else is
    # dropped and flagged (the engine's handling of predicate entries)
    unsupported={
        "max_norm": (_not_none, "MindSpore's Embedding does not renormalise looked-up rows"),
        "norm_type": (lambda site, arg: site.literal(arg.value, default=None) != 2.0,
                      "only used with max_norm, which MindSpore lacks"),
        "scale_grad_by_freq": (truthy_literal, "MindSpore does not scale gradients by frequency"),
        "sparse": (truthy_literal, "MindSpore has no sparse embedding gradients"),
        "_weight": (_not_none, "pass the table as embedding_table=Tensor(...) instead"),
        "_freeze": (truthy_literal, "set embedding_table.requires_grad = False instead"),
        "dtype": "pass dtype=mindspore.<type> by hand",
    },
    handler=_embedding, returns=EMBEDDING)

for _old, _new in (("weight", "embedding_table"), ("num_embeddings", "vocab_size"),
                   ("embedding_dim", "embedding_size")):
    member(_old, "EMB002", receiver=EMBEDDING, target=_new, returns="tensor" if _old == "weight" else None)


# ----------------------------------------------------------------------------- NRM001


def _shape_value(site, node):
    """The literal shape: written out, or the literal a name was last assigned; None."""
    value = site.literal(node)
    if value is None and isinstance(node, cst.Name):
        known = site.assigned_value(node.value)
        value = site.literal(known) if known is not None else None
    return value


def _layer_norm(site):
    shape = site.arg("normalized_shape")
    if shape is None:
        return None
    value = _shape_value(site, shape.value)
    if isinstance(value, int) and not isinstance(value, bool):
        site.changes.append(f"normalized_shape {site.code(shape.value).strip()} -> "
                            f"({site.code(shape.value).strip()},)")
    elif value is None and is_pure(shape.value):
        text = site.code(shape.value).strip()
        site.changes.append(f"normalized_shape {text} -> ({text},) if it is an int")
    elif not (isinstance(value, (tuple, list)) and len(value) == 1):
        site.finding("NRM001", "MindSpore's LayerNorm chooses the normalised axes by begin_norm_axis, "
                     "counted from the input's rank; only a one-element literal shape ports for any rank",
                     comment="LayerNorm shape must be one literal dim")
        return None
    new = site.apply(func=site.ref("mindspore.nn.LayerNorm"))
    site.edit("NRM001", new, detail=site.describe("nn.LayerNorm -> mindspore.nn.LayerNorm"))
    return new


def _to_tuple(site, arg):
    value = _shape_value(site, arg.value)
    if isinstance(value, int) and not isinstance(value, bool):
        return cst.Tuple(elements=[cst.Element(arg.value, comma=cst.Comma())])
    if value is None and is_pure(arg.value):  # an int, or a sequence, when it runs
        text = site.code(arg.value).strip()
        return site.parse(f"({text},) if isinstance({text}, int) else {text}")
    return arg.value


def _is_false(site, arg) -> bool:
    return not truthy_literal(site, arg)


api("torch.nn.LayerNorm", rule="NRM001",
    sig=("normalized_shape", "eps", "elementwise_affine", "bias", "device", "dtype"),
    ms_sig=("normalized_shape",),
    rename={"eps": "epsilon"}, defaults={"epsilon": "1e-5"},
    values={"normalized_shape": _to_tuple},
    drop={"device": DEVICE_RULE},
    unsupported={
        "elementwise_affine": (_is_false, "MindSpore's LayerNorm always has trainable gamma and beta"),
        "bias": (_is_false, "MindSpore's LayerNorm always has a trainable beta"),
        "dtype": "pass dtype=mindspore.<type> by hand",
    },
    handler=_layer_norm, returns=LAYER_NORM, params={"weight": "gamma", "bias": "beta"})

for _old, _new in (("weight", "gamma"), ("bias", "beta")):
    member(_old, "NRM002", receiver=LAYER_NORM, target=_new, returns="tensor")


# ----------------------------------------------------------------------------- EMB001: from_pretrained


def _from_pretrained_source(site):
    embedding = site.code(site.ref("mindspore.nn.Embedding"))
    return lambda name: (
        f"def {name}(embeddings, freeze=True):\n"
        f'    """PyTorch\'s nn.Embedding.from_pretrained: a table holding these rows, trainable unless frozen."""\n'
        f"    layer = {embedding}(embeddings.shape[0], embeddings.shape[1], embedding_table=embeddings)\n"
        f"    layer.embedding_table.requires_grad = not freeze\n"
        f"    return layer\n"
    )


def _from_pretrained(site):
    """``nn.Embedding.from_pretrained(table, freeze=...)`` -> a function the port defines
    (MindSpore's Embedding takes the rows as ``embedding_table=``; freezing is the
    table's ``requires_grad``). ``padding_idx`` and the norm options are flagged."""
    if site.bound() is None:
        return None
    for name, why in (("padding_idx", "MindSpore's Embedding would zero the padding row the pretrained table holds"),
                      ("max_norm", "MindSpore's Embedding does not renormalise looked-up rows")):
        arg = site.arg(name)
        if arg is not None and _not_none(site, arg):
            site.finding("EMB001", f"{name}= {why}: build mindspore.nn.Embedding(..., embedding_table=...) by hand",
                         comment=f"from_pretrained {name}= not ported")
            return None
    for name in ("scale_grad_by_freq", "sparse"):
        arg = site.arg(name)
        if arg is not None and truthy_literal(site, arg):
            site.finding("EMB001", f"{name}=True has no MindSpore equivalent", comment=f"{name}= not ported")
            return None
    helper = site.define("embedding_from_pretrained", _from_pretrained_source(site))
    args = [cst.Arg(site.updated_of(site.arg("embeddings").value))]
    freeze = site.arg("freeze")
    if freeze is not None:
        args[0] = args[0].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        args.append(cst.Arg(keyword=cst.Name("freeze"), value=site.updated_of(freeze.value),
                            equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                                                  whitespace_after=cst.SimpleWhitespace(""))))
    new = cst.Call(func=cst.Name(helper), args=args)
    site.edit("EMB001", new, detail=f"nn.Embedding.from_pretrained -> {helper}(), a mindspore.nn.Embedding "
                                    "holding the rows (requires_grad off when frozen)")
    return new


api("torch.nn.Embedding.from_pretrained", rule="EMB001",
    sig=("embeddings", "freeze", "padding_idx", "max_norm", "norm_type", "scale_grad_by_freq", "sparse"),
    handler=_from_pretrained, returns="module:torch.nn.Embedding", params={"weight": "embedding_table"})
