"""BatchNorm: momentum is the weight of the running statistic in MindSpore (1 - PyTorch's),
track_running_stats becomes use_batch_statistics, and the parameters and buffers have
other names (gamma/beta/moving_mean/moving_variance)."""

from __future__ import annotations

import libcst as cst

from msmagic.engine.build import parse_expression

from msmagic.engine.spec import api, member
from msmagic.rules.cells import train_mode
from msmagic.rules.registry import register

GROUP = "BatchNorm"
DIFF = "r2.4.10/api_mapping/pytorch_diff/"
SEED = "seeds/002 nn APIs › nn.BatchNorm2d"
BN = "module:torch.nn.BatchNorm"
BN3D = "module:torch.nn.BatchNorm3d"
_NOT_LITERAL = object()

register(
    "BNM001",
    "BatchNorm momentum becomes 1 - momentum",
    group=GROUP,
    why="""
        Both frameworks update the running statistics as a weighted average, but the weight
        called ``momentum`` sits on opposite terms: PyTorch computes ``running = (1 - m) *
        running + m * batch`` while MindSpore computes ``moving = m * moving + (1 - m) *
        batch``. PyTorch's default 0.1 is therefore MindSpore's default 0.9, and an explicit
        ``momentum=m`` is ported as ``1 - m`` (computed when it is a number, written as
        ``1 - (expr)`` otherwise). Copying the number unchanged would make the running
        statistics follow the last batch almost entirely. ``momentum=None`` (PyTorch's
        cumulative average over all batches) has no MindSpore counterpart and is flagged.
        ``eps`` and ``affine`` mean the same in both, training-mode normalisation and the
        running variance (unbiased) update identically, and BatchNorm1d accepts (N, C) and
        (N, C, L) input in both. A BatchNorm built outside a Module gets ``.set_train()``
        so it starts in training mode as in PyTorch (MOD003).
    """,
    seed=SEED,
    reference=DIFF + "BatchNorm1d.md; " + DIFF + "BatchNorm2d.md; " + DIFF + "BatchNorm3d.md",
    installed_note="""
        Checked on MindSpore 2.10: ``BatchNorm2d(num_features, eps=1e-05, momentum=0.9,
        affine=True, gamma_init, beta_init, moving_mean_init, moving_var_init,
        use_batch_statistics=None, data_format, dtype)``; after three training-mode batches
        the moving statistics equal PyTorch's running statistics. ``nn.BatchNorm3d`` keeps
        its parameters in an inner BatchNorm2d named ``bn2d``.
    """,
    example="""
        import torch
        import torch.nn as nn

        bn = nn.BatchNorm2d(3, momentum=0.2)
        bn.train()
        x = torch.arange(2 * 3 * 4 * 4, dtype=torch.float32).reshape(2, 3, 4, 4)
        y = bn(x)
        mean = bn.running_mean
    """,
)

register(
    "BNM002",
    "track_running_stats becomes use_batch_statistics",
    group=GROUP,
    why="""
        PyTorch's ``track_running_stats=False`` normalises every batch with its own
        statistics, in training and in eval mode alike. MindSpore expresses this with
        ``use_batch_statistics=True``; its default ``None`` switches between batch
        statistics in training and moving statistics in inference, which is PyTorch's
        ``track_running_stats=True``. So False becomes ``use_batch_statistics=True``, True
        is removed, and a non-literal flag ``f`` becomes ``None if f else True``. One
        difference remains: MindSpore still keeps (unused) moving statistics where PyTorch
        has ``running_mean = None``.
    """,
    seed=SEED,
    reference=DIFF + "BatchNorm2d.md",
    installed_note="""
        Checked on MindSpore 2.10: ``use_batch_statistics=True`` gives PyTorch's
        ``track_running_stats=False`` output in both ``set_train(True)`` and
        ``set_train(False)`` for BatchNorm1d/2d/3d.
    """,
    example="""
        import torch
        import torch.nn as nn

        bn = nn.BatchNorm1d(4, track_running_stats=False)
        bn.eval()
        x = torch.arange(12, dtype=torch.float32).reshape(3, 4)
        y = bn(x)
    """,
)

register(
    "BNM003",
    "running_mean/running_var become moving_mean/moving_variance",
    group=GROUP,
    why="""
        MindSpore's BatchNorm keeps its running statistics as non-trainable Parameters named
        ``moving_mean`` and ``moving_variance``; PyTorch's buffers are ``running_mean`` and
        ``running_var``. No other PyTorch object has attributes with these names, so every
        read or write is renamed. MindSpore's BatchNorm3d wraps a BatchNorm2d, so on a known
        BatchNorm3d the statistics are reached as ``bn.bn2d.moving_mean``. These are
        Parameters in MindSpore: assign new values with ``set_data`` rather than by
        rebinding the attribute.
    """,
    seed=SEED,
    reference=DIFF + "BatchNorm2d.md",
    installed_note="""
        Checked on MindSpore 2.10: ``nn.BatchNorm3d(4)`` has no ``moving_mean`` attribute;
        its parameters are ``bn2d.moving_mean``, ``bn2d.moving_variance``, ``bn2d.gamma``,
        ``bn2d.beta``.
    """,
    example="""
        import torch
        import torch.nn as nn

        bn = nn.BatchNorm1d(3)
        mean = bn.running_mean
        var = bn.running_var
    """,
)

register(
    "BNM004",
    "BatchNorm weight/bias become gamma/beta",
    group=GROUP,
    why="""
        The learnable scale and shift of a MindSpore BatchNorm are ``gamma`` and ``beta``;
        PyTorch calls them ``weight`` and ``bias``. ``weight`` and ``bias`` are common names
        (every Linear and Conv has them), so they are renamed only where the value is known
        to be a BatchNorm layer: a name or ``self.`` attribute bound to ``nn.BatchNorm*d``,
        or such an attribute of a known Module subclass (``model.bn.weight``). Inside a loop
        over ``model.modules()`` the layer type is not known and the read is left unchanged.
        With ``affine=False`` PyTorch's weight is None while MindSpore's gamma is a frozen
        tensor of ones.
    """,
    seed=SEED,
    reference=DIFF + "BatchNorm2d.md",
    example="""
        import torch
        import torch.nn as nn

        bn = nn.BatchNorm2d(3)
        scale = bn.weight
        shift = bn.bias
    """,
)

register(
    "BNM005",
    "num_batches_tracked has no MindSpore counterpart",
    group=GROUP,
    finding_only=True,
    why="""
        PyTorch counts the training batches a BatchNorm has seen in ``num_batches_tracked``
        (used by ``momentum=None`` and saved in state dicts). MindSpore keeps no such
        counter, so a read is left unchanged and flagged; count the steps yourself if the
        value is needed, and drop the key when converting a PyTorch checkpoint.
    """,
    seed=SEED,
    reference=DIFF + "BatchNorm2d.md",
    example="""
        import torch
        import torch.nn as nn

        bn = nn.BatchNorm2d(3)
        steps = bn.num_batches_tracked
    """,
)


def _momentum(site, arg):
    value = site.literal(arg.value, _NOT_LITERAL)
    text = site.code(arg.value).strip()
    if value is None:
        site.finding(
            "BNM001",
            "momentum=None makes PyTorch keep a cumulative average over all batches; "
            "MindSpore only has an exponential moving average. Removed: MindSpore's default "
            "(PyTorch's 0.1) is used",
            comment="momentum=None (cumulative average) has no MindSpore equivalent",
        )
        return False
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        new = parse_expression(repr(float(f"{1 - value:.12g}")))
    elif isinstance(arg.value, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)):
        new = parse_expression(f"1 - {text}")
    else:
        new = parse_expression(f"1 - ({text})")
    site.changes.append(f"momentum {text} -> {site.code(new)}")
    return new


def _track(site, arg):
    value = site.literal(arg.value, _NOT_LITERAL)
    text = site.code(arg.value).strip()
    if value is True:
        site.edit("BNM002", None, detail="track_running_stats=True removed (MindSpore's default)")
        return False
    new = "True" if value is False else f"None if {text} else True"
    site.changes.append(f"track_running_stats {text} -> use_batch_statistics={new}")
    site.edit("BNM002", None, detail=f"track_running_stats={text} -> use_batch_statistics={new}")
    return "use_batch_statistics", parse_expression(new)


def _layer(site):
    target = site.entry.target
    new = site.apply(func=site.ref(target))
    site.edit("BNM001", new, detail=site.describe(f"{site.api} -> {target}"))
    return train_mode(site, new)


#: parameter and buffer names: MindSpore's BatchNorm3d keeps them on an inner ``bn2d``
BN_PARAMS = {"weight": "gamma", "bias": "beta", "running_mean": "moving_mean",
             "running_var": "moving_variance"}
BN3D_PARAMS = {k: f"bn2d.{v}" for k, v in BN_PARAMS.items()}

for _d in ("1d", "2d", "3d"):
    api(f"torch.nn.BatchNorm{_d}", f"mindspore.nn.BatchNorm{_d}", rule="BNM001",
        sig=("num_features", "eps", "momentum", "affine", "track_running_stats", "device",
             "dtype"),
        ms_sig=("num_features", "eps", "momentum", "affine"),
        values={"momentum": _momentum, "track_running_stats": _track},
        drop={"device": "DEV003"}, handler=_layer, returns=f"module:torch.nn.BatchNorm{_d}",
        params=BN3D_PARAMS if _d == "3d" else BN_PARAMS)


def _inner(target: str, rule: str):
    """BatchNorm3d: the parameter lives on the inner ``bn2d`` BatchNorm2d."""

    def handler(site):
        new = cst.Attribute(
            value=cst.Attribute(value=site.receiver, attr=cst.Name("bn2d")), attr=cst.Name(target)
        )
        site.edit(rule, new, detail=f".{site.original.attr.value} -> .bn2d.{target} (BatchNorm3d)")
        return new

    return handler


for _old, _new, _rule in (
    ("running_mean", "moving_mean", "BNM003"),
    ("running_var", "moving_variance", "BNM003"),
    ("weight", "gamma", "BNM004"),
    ("bias", "beta", "BNM004"),
):
    member(_old, _rule, receiver=BN3D, handler=_inner(_new, _rule), returns="tensor")
    if _rule == "BNM003":
        member(_old, _rule, receiver="module", target=_new, unambiguous=True, returns="tensor")
    else:
        member(_old, _rule, receiver=BN, target=_new, returns="tensor")


def _num_batches(site):
    site.finding(
        "BNM005",
        "MindSpore's BatchNorm has no batch counter (num_batches_tracked); count training "
        "steps yourself if you need it",
        comment="num_batches_tracked does not exist in MindSpore",
    )


member("num_batches_tracked", "BNM005", receiver="module", handler=_num_batches, unambiguous=True)
