"""Initialisation: ``torch.nn.init.*_`` fill a tensor in place; MindSpore fills a
Parameter with ``param.set_data(initializer(Init(...), param.shape, param.dtype))``.

Every distribution below was checked on a 512x512 (and a conv-shaped) tensor in both
frameworks: bounds, mean and standard deviation against the value PyTorch's arguments
imply (tests/rules/test_init.py)."""

from __future__ import annotations

import math

import libcst as cst

from msmagic.engine.spec import api
from msmagic.rules._util import is_pure
from msmagic.rules.registry import register

GROUP = "Initialisation"
SEED = "seeds/002 nn APIs › weight initialization; seeds/004 Parameter initialization"
REF = "r2.4.10/api_mapping/pytorch_diff/init.md"
INIT = "mindspore.common.initializer."

register(
    "INI001",
    "nn.init fills become Parameter.set_data(initializer(...))",
    group=GROUP,
    why="""
        ``torch.nn.init`` functions overwrite a tensor in place and return it. MindSpore keeps
        the distributions as Initializer objects in ``mindspore.common.initializer``:
        ``initializer(Init, shape, dtype)`` builds a new tensor and ``Parameter.set_data``
        puts it into the parameter, which is then returned like PyTorch's result. So
        ``xavier_uniform_``/``xavier_normal_`` become ``XavierUniform``/``XavierNormal`` with
        the same ``gain`` and the same fan computation (fan_in = in_channels x kernel size),
        ``orthogonal_`` becomes ``Orthogonal`` and ``constant_``/``zeros_``/``ones_``/``eye_``
        become ``Constant``/``Zero``/``One``/``Identity``. The target expression is written
        three times (value, shape, dtype), so it must be free of side effects (a name or
        attribute such as ``self.fc.weight``); a trailing ``.data`` is dropped because
        MindSpore's ``Parameter.data`` is a detached Tensor that has no ``set_data``. The
        target must be a Parameter (module weights always are): a plain MindSpore Tensor
        has no ``set_data``.
    """,
    seed=SEED,
    reference=REF,
    example="""
        import torch.nn as nn

        layer = nn.Linear(4, 3)
        nn.init.constant_(layer.weight, 0.5)
        nn.init.zeros_(layer.bias)
    """,
)

register(
    "INI002",
    "kaiming_uniform_/kaiming_normal_ become HeUniform/HeNormal",
    group=GROUP,
    why="""
        He (Kaiming) initialisation is ``HeUniform``/``HeNormal`` in MindSpore. PyTorch's
        negative slope ``a`` is called ``negative_slope``; ``mode`` ('fan_in'/'fan_out') and
        ``nonlinearity`` keep their names and defaults (slope 0, 'fan_in', 'leaky_relu', which
        gives gain sqrt(2)), and the gain and fan formulas are the same, so the bound or the
        standard deviation is gain / sqrt(fan) times sqrt(3) or 1 in both. MindSpore does not
        know the 'selu' gain; that case is flagged (rule INI006).
    """,
    seed=SEED,
    reference=REF,
    example="""
        import math
        import torch.nn as nn

        def he_bound_respected(fan_in):
            layer = nn.Linear(fan_in, 64)
            nn.init.kaiming_uniform_(layer.weight, mode="fan_in", nonlinearity="relu")
            bound = math.sqrt(2.0) * math.sqrt(3.0 / fan_in)
            return bool(layer.weight.abs().max() <= bound)

        ok = he_bound_respected(256)
    """,
)

register(
    "INI003",
    "normal_/trunc_normal_ become Normal/TruncatedNormal with sigma first",
    group=GROUP,
    why="""
        MindSpore's ``Normal(sigma, mean)`` takes the standard deviation first and defaults
        it to 0.01, where ``torch.nn.init.normal_(t, mean, std)`` takes the mean first and
        defaults std to 1. The port therefore always writes ``sigma=`` (1.0 when PyTorch
        used its default) and passes the mean by keyword. ``trunc_normal_`` becomes
        ``TruncatedNormal(sigma, mean, a, b)``; its cut-offs ``a`` and ``b`` are absolute
        values in both frameworks (not multiples of the standard deviation).
    """,
    seed=SEED,
    reference=REF,
    example="""
        import torch.nn as nn

        def normal_std(std):
            layer = nn.Linear(512, 512)
            nn.init.normal_(layer.weight, std=std)
            return round(layer.weight.std().item() / std, 1)

        ratio = normal_std(0.02)
    """,
)

register(
    "INI004",
    "uniform_(a, b) becomes a shifted symmetric Uniform",
    group=GROUP,
    why="""
        ``torch.nn.init.uniform_(t, a=0, b=1)`` samples from U(a, b), but MindSpore's
        ``Uniform(scale)`` only samples the symmetric interval U(-scale, scale). The port
        keeps the distribution exact by using U(a, b) = (a + b) / 2 + U(-(b - a) / 2,
        (b - a) / 2): the half width becomes ``scale`` and, when the interval is not
        centred on zero, the centre is added to the initialised tensor. Literal bounds are
        folded at port time; bounds given as names are written into the expressions.
    """,
    seed=SEED,
    reference="r2.4.10/api_mapping/pytorch_diff/Uniform.md",
    example="""
        import torch.nn as nn

        def uniform_range():
            layer = nn.Linear(256, 256)
            nn.init.uniform_(layer.weight)
            w = layer.weight
            return bool(w.min() >= 0.0), bool(w.max() <= 1.0), round(w.mean().item(), 1)

        nonneg, below_one, mean = uniform_range()
    """,
)

register(
    "INI005",
    "calculate_gain is evaluated when porting",
    group=GROUP,
    why="""
        MindSpore has no public counterpart of ``torch.nn.init.calculate_gain``: its
        Initializers compute the gain internally from a nonlinearity name. When the
        nonlinearity (and the leaky ReLU slope) are literals, the gain is a constant, so the
        port writes the number PyTorch would return (1 for linear, conv and sigmoid, 5/3 for
        tanh, sqrt(2) for relu, sqrt(2 / (1 + slope^2)) for leaky_relu with slope 0.01 by
        default, 3/4 for selu). A nonlinearity only known at run time is flagged (rule
        INI006) and left as PyTorch.
    """,
    seed=SEED,
    reference=REF,
    example="""
        import torch.nn as nn

        relu_gain = nn.init.calculate_gain("relu")
        leaky_gain = nn.init.calculate_gain("leaky_relu", 0.2)
    """,
)

register(
    "INI006",
    "Initialisation that cannot be rewritten faithfully",
    group=GROUP,
    finding_only=True,
    why="""
        Some ``torch.nn.init`` calls are left as PyTorch and flagged rather than guessed:
        a target that is not a plain name or attribute (``nn.init.zeros_(torch.empty(3))``,
        ``nn.init.ones_(next(it))``) because the rewrite must repeat it; a ``generator=``
        argument, because MindSpore's initializers draw from the global seed
        (``mindspore.set_seed``) and take no generator; the 'selu' gain, which MindSpore's
        He initializers do not know; uniform bounds that are computed expressions; and
        ``calculate_gain`` with a nonlinearity only known at run time. Write the MindSpore
        code by hand for these, usually by binding the tensor to a Parameter first.
    """,
    seed=SEED,
    reference=REF,
    example="""
        import torch
        import torch.nn as nn

        w = nn.init.xavier_uniform_(torch.empty(3, 5))
    """,
)

#: torch init function -> (PyTorch parameters after ``tensor``, MindSpore Initializer,
#: {torch parameter: Initializer keyword} in the Initializer's order, rule)
_HE = {"a": "negative_slope", "mode": "mode", "nonlinearity": "nonlinearity"}
_FILLS = {
    "xavier_uniform_": (("gain",), "XavierUniform", {"gain": "gain"}, "INI001"),
    "xavier_normal_": (("gain",), "XavierNormal", {"gain": "gain"}, "INI001"),
    "orthogonal_": (("gain",), "Orthogonal", {"gain": "gain"}, "INI001"),
    "constant_": (("val",), "Constant", {"val": "value"}, "INI001"),
    "zeros_": ((), "Zero", {}, "INI001"),
    "ones_": ((), "One", {}, "INI001"),
    "eye_": ((), "Identity", {}, "INI001"),
    "dirac_": (("groups",), "Dirac", {"groups": "groups"}, "INI001"),
    "kaiming_uniform_": (("a", "mode", "nonlinearity"), "HeUniform", _HE, "INI002"),
    "kaiming_normal_": (("a", "mode", "nonlinearity"), "HeNormal", _HE, "INI002"),
    "normal_": (("mean", "std"), "Normal", {"std": "sigma", "mean": "mean"}, "INI003"),
    "trunc_normal_": (("mean", "std", "a", "b"), "TruncatedNormal",
                      {"std": "sigma", "mean": "mean", "a": "a", "b": "b"}, "INI003"),
    "uniform_": (("a", "b"), "Uniform", {}, "INI004"),
}
#: the Initializers that draw nothing
_DETERMINISTIC = frozenset({"Constant", "Zero", "One", "Identity", "Dirac"})
#: Initializer keywords PyTorch's default differs from MindSpore's: always written.
_ALWAYS = {"Normal": {"sigma": "1.0"}, "TruncatedNormal": {"sigma": "1.0"}}


def _flag(site, reason: str, comment: str):
    site.finding("INI006", reason, comment=comment)
    return None


def _fill_handler(name: str):
    _, cls, params, rule = _FILLS[name]

    def handler(site):
        bound = site.bound()
        if bound is None:
            return _flag(site, "arguments passed with * or ** cannot be mapped to an Initializer",
                         "*args/**kwargs in nn.init call; left as PyTorch")
        args = {p: a.value for p, a, _ in bound}
        if None in args or "tensor" not in args:
            return _flag(site, f"unexpected arguments for nn.init.{name}", "unexpected arguments; left as PyTorch")
        if "generator" in args:
            return _flag(
                site, "MindSpore initializers draw from the global seed (mindspore.set_seed) and take no generator",
                "generator= has no MindSpore initializer equivalent; left as PyTorch")
        target = args.pop("tensor")
        if isinstance(target, cst.Attribute) and target.attr.value == "data":
            target = target.value  # Parameter.data is a detached Tensor in MindSpore
        if not is_pure(target):
            return _flag(
                site, f"the target {site.code(target).strip()} is not a plain name or attribute; "
                "the rewrite would evaluate it three times",
                "target is not a plain name/attribute; left as PyTorch")
        if site.literal(args.get("nonlinearity"), None) == "selu":
            return _flag(site, "MindSpore's He initializers have no 'selu' gain",
                         "nonlinearity='selu' unsupported by HeUniform/HeNormal; left as PyTorch")
        t = site.code(target).strip()
        if cls == "Uniform":
            scale_center = _uniform(site, args)
            if scale_center is None:
                return None
            scale, center = scale_center
            init_args = [f"scale={scale}"]
        else:
            kw = dict(_ALWAYS.get(cls, {}))
            kw.update({params[p]: site.code(v).strip() for p, v in args.items()})
            order = list(params.values())
            init_args = [f"{k}={v}" for k, v in sorted(kw.items(), key=lambda kv: order.index(kv[0]))]
            center = None
        init = site.code(site.ref(INIT + "initializer"))
        obj = f"{site.code(site.ref(INIT + cls))}({', '.join(init_args)})"
        value = f"{init}({obj}, {t}.shape, {t}.dtype)"
        if center is not None:
            value = f"{value}.init_data() + {center}"
        new = site.parse(f"{t}.set_data({value})")
        # a random initialiser draws values parity cannot replay: it copies PyTorch's
        tags = () if cls in _DETERMINISTIC else ("random", f"random:nn.init.{name}")
        site.edit(rule, new, detail=f"nn.init.{name} -> set_data(initializer({obj}, ...))", tags=tags)
        return new

    return handler


def _num(x: float) -> str:
    """Shortest text for x at 15 significant digits (0.1 rather than 0.09999999999999999)."""
    return repr(float(f"{x:.15g}"))


def _uniform(site, args):
    """(scale, centre or None) texts for U(a, b); None after a finding."""
    a, b = args.get("a"), args.get("b")
    la = 0.0 if a is None else site.literal(a, None)
    lb = 1.0 if b is None else site.literal(b, None)
    if isinstance(la, (int, float)) and isinstance(lb, (int, float)):
        center = _num((la + lb) / 2)
        return _num((lb - la) / 2), (center if float(center) else None)
    if not all(is_pure(v) for v in (a, b) if v is not None):
        return _flag(site, "uniform_ bounds are computed expressions; the rewrite would evaluate them twice",
                     "uniform_ bounds are not plain names/numbers; left as PyTorch")
    ta = "0.0" if a is None else site.code(a).strip()
    tb = "1.0" if b is None else site.code(b).strip()
    return f"({tb} - {ta}) / 2", f"({ta} + {tb}) / 2"


for _name, (_sig, _, _, _rule) in _FILLS.items():
    api(f"torch.nn.init.{_name}", rule=_rule, sig=("tensor", *_sig), handler=_fill_handler(_name),
        returns="tensor")


def _torch_gain(nonlinearity: str, param=None):
    """PyTorch's calculate_gain for a literal nonlinearity (None: unknown name)."""
    if nonlinearity in ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
                        "conv_transpose2d", "conv_transpose3d", "sigmoid"):
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else param
        if isinstance(slope, bool) or not isinstance(slope, (int, float)):
            return None
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    return None


def _gain(site):
    bound = site.bound()
    args = {p: a.value for p, a, _ in bound} if bound is not None else {}
    nl = site.literal(args.get("nonlinearity"), None)
    param = site.literal(args["param"], "?") if "param" in args else None
    gain = _torch_gain(nl, param) if isinstance(nl, str) and param != "?" else None
    if bound is None or gain is None:
        return _flag(site, "calculate_gain's arguments are not literals, so the gain cannot be fixed when porting",
                     "calculate_gain with non-literal arguments; left as PyTorch")
    new = site.parse(repr(gain))
    site.edit("INI005", new, detail=f"calculate_gain({nl!r}{'' if param is None else f', {param!r}'}) = {gain!r}")
    return new


api("torch.nn.init.calculate_gain", rule="INI005", sig=("nonlinearity", "param"), handler=_gain, returns="float")
