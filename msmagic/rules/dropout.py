"""Dropout: layers and functions keep PyTorch's ``p`` (probability of zeroing); the old
``keep_prob`` meaning, ``inplace`` and the training-mode default are handled here."""

from msmagic.engine.spec import api
from msmagic.rules.cells import train_mode
from msmagic.rules.registry import register

GROUP = "Dropout"
DIFF = "r2.4.10/api_mapping/pytorch_diff/"

register(
    "DRP001",
    "Dropout layers keep p, passed by keyword",
    group=GROUP,
    why="""
        PyTorch's ``p`` is the probability of zeroing an element. MindSpore 1.x's
        ``nn.Dropout`` took ``keep_prob``, the probability of keeping one (so ``p=0.2`` was
        ``keep_prob=0.8``); 2.x accepts ``p`` with PyTorch's meaning, but ``keep_prob`` is
        still the first positional parameter. ``nn.Dropout(0.2)`` would therefore keep 20%
        and drop 80%, so ``p`` is always passed by keyword. Survivors are scaled by
        ``1/(1-p)`` in both frameworks. ``Dropout1d/2d/3d`` take ``p`` first and port
        unchanged, but MindSpore's 2d/3d versions need batched 4-D/5-D input, and some
        MindSpore dropouts reject an int ``p`` (``0``), so int literals are written as
        floats. ``p=1`` (drop everything) is rejected by MindSpore and flagged. Dropout only acts in
        training mode, which a fresh Cell is not in: see MOD001/MOD003.
    """,
    seed="seeds/002 nn APIs › nn.Dropout; seeds/000 Differences Between MindSpore and PyTorch Operators › nn.Dropout",
    reference=DIFF + "Dropout.md",
    installed_note="""
        Checked on MindSpore 2.10: the signature is ``Dropout(keep_prob=0.5, p=None,
        dtype=float32)`` and ``nn.Dropout(0.2)`` keeps 20% of the elements.
        ``Dropout(p=1.0)`` raises ValueError ("p must be in range [0, 1)");
        ``Dropout2d`` rejects 3-D and ``Dropout3d`` 4-D (unbatched) input, which PyTorch
        accepts; ``Dropout1d/2d/3d(0)`` raise TypeError for the int ``0``.
    """,
    example="""
        import torch
        import torch.nn as nn

        drop = nn.Dropout(0.2)
        drop.eval()
        x = torch.ones(4, 8)
        y = drop(x)
    """,
)

register(
    "DRP002",
    "inplace= is dropped: MindSpore returns a new tensor",
    group=GROUP,
    why="""
        MindSpore's dropout (and other layers taking ``inplace`` in PyTorch) always returns a
        new tensor and has no ``inplace`` parameter, so the argument is removed.
        ``inplace=False`` is exactly the MindSpore behaviour. With ``inplace=True`` PyTorch
        also overwrites the input tensor; the port leaves the input untouched, which only
        matters when the code reads the input again after the call, so that case is
        flagged for you to check.
    """,
    seed="seeds/002 nn APIs › nn.Dropout",
    reference=DIFF + "Dropout.md",
    example="""
        import torch
        import torch.nn as nn

        drop = nn.Dropout(p=0.5, inplace=False)
        drop.eval()
        y = drop(torch.ones(3))
    """,
)

register(
    "DRP003",
    "Functional dropout becomes ops.dropout with an explicit training flag",
    group=GROUP,
    why="""
        ``F.dropout``/``dropout1d``/``dropout2d``/``dropout3d`` map to the ``mindspore.ops``
        functions of the same name and parameter order (``input, p, training``). Unlike the
        layer, the functional form does not look at the module's mode: its ``training``
        parameter defaults to True in both frameworks, so ``F.dropout(x, 0.5)`` inside
        ``forward`` drops even after ``eval()``. msmagic writes ``training=True`` out when it
        was left to the default, to make that visible; pass ``training=self.training``
        (``Cell.training`` exists) to follow the mode. An int literal ``p`` is written as a
        float and ``p=1`` is flagged, as for the layers (DRP001).
    """,
    seed="seeds/002 nn APIs › nn.Dropout",
    reference=DIFF + "drop_out.md; " + DIFF + "dropout2d.md; " + DIFF + "dropout3d.md",
    installed_note="""
        Checked on MindSpore 2.10: ``ops.dropout(input, p=0.5, training=True, seed=None)``;
        ``ops.dropout(x, p=1.0)`` raises RuntimeError from the CPU kernel;
        ``ops.dropout(x, 0)`` and ``ops.dropout1d(x, 0)`` raise TypeError for the int ``p``.
    """,
    example="""
        import torch
        import torch.nn.functional as F

        x = torch.ones(4, 8)
        y = F.dropout(x, 0.3, training=False)
        z = F.dropout(x, p=0.0)
    """,
)


def _p(site, arg):
    """Keep ``p``; write an int literal as a float (several MindSpore dropouts reject an
    int); flag ``p=1``, which MindSpore rejects (it would raise at run time)."""
    value = site.literal(arg.value)
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return arg.value
    if value >= 1:
        site.finding(
            site.entry.rule,
            f"p={site.code(arg.value).strip()}: MindSpore requires 0 <= p < 1 and raises an "
            "error; PyTorch zeroes everything. Use ops.zeros_like(x) instead",
            comment="p=1 is rejected by MindSpore",
        )
        return None
    if isinstance(value, int):
        site.changes.append(f"p={value} -> p={float(value)!r}")
        return site.parse(repr(float(value)))
    return arg.value


def _inplace(site, arg):
    value = site.literal(arg.value)
    site.edit("DRP002", None, detail=f"inplace={site.code(arg.value).strip()} dropped")
    if value is not False:
        site.finding(
            "DRP002",
            f"inplace={site.code(arg.value).strip()}: the input is not overwritten in "
            "MindSpore; code reading the input after this call sees undropped values",
            comment="inplace=True dropped: input not modified in place",
        )
    return False


def _layer(site):
    target = site.entry.target
    new = site.apply(func=site.ref(target))
    site.edit("DRP001", new, detail=site.describe(f"{site.api} -> {target}"))
    return train_mode(site, new)


api("torch.nn.Dropout", "mindspore.nn.Dropout", rule="DRP001", sig=("p", "inplace"),
    ms_sig=("keep_prob", "p"), values={"p": _p, "inplace": _inplace}, handler=_layer,
    returns="module:torch.nn.Dropout")
for _n in ("1d", "2d", "3d"):
    api(f"torch.nn.Dropout{_n}", f"mindspore.nn.Dropout{_n}", rule="DRP001",
        sig=("p", "inplace"), values={"p": _p, "inplace": _inplace}, handler=_layer,
        returns=f"module:torch.nn.Dropout{_n}")

for _f in ("dropout", "dropout1d", "dropout2d", "dropout3d"):
    api(f"torch.nn.functional.{_f}", f"mindspore.ops.{_f}", rule="DRP003",
        sig=("input", "p", "training", "inplace"),
        values={"p": _p, "inplace": _inplace}, defaults={"training": "True"},
        random=True, returns="tensor")
