"""Verification cases for top-level ``torch.*`` functions: in-place function forms
(rule TFN001), ``torch._foreach_*`` (TFN002) and the table entries op_db does not cover."""

from __future__ import annotations

from msmagic.apis.cases import case

# --- in-place function forms (op_db covers the others through their Tensor.X_ samples)

case("torch.zero_", """
    import torch
    w = torch.linspace(-1, 1, 5)
    torch.zero_(w)
""")
case("torch.clamp_", """
    import torch
    y = torch.linspace(-3, 3, 7)
    z = torch.clamp_(y, -1, 1) * 2
""")
case("torch.clamp_", """
    import torch
    y = torch.linspace(-3, 3, 7)
    torch.clamp_(y, min=-0.5, max=2.0)
""")
case("torch.relu_", """
    import torch
    h = torch.linspace(-3, 3, 8).reshape(2, 4)
    torch.relu_(h)
""")
case("torch.sigmoid_", """
    import torch
    h = torch.linspace(-3, 3, 8).reshape(2, 4)
    torch.sigmoid_(h)
""")
case("torch.tanh_", """
    import torch
    h = torch.linspace(-3, 3, 8).reshape(2, 4)
    torch.tanh_(h)
""")
case("torch.celu_", """
    import torch
    h = torch.linspace(-3, 3, 8).reshape(2, 4)
    torch.celu_(h)
""")
case("torch.selu_", """
    import torch
    h = torch.linspace(-3, 3, 8).reshape(2, 4)
    torch.selu_(h)
""")
case("torch.exp_", """
    import torch
    h = torch.linspace(-3, 3, 8).reshape(2, 4)
    torch.exp_(h)
""")

# --- torch._foreach_*

_POSITIVE = """
    import torch
    xs = [torch.tensor([0.15, 0.45, 0.85]), torch.linspace(0.2, 0.8, 4).reshape(2, 2)]
"""
_SIGNED = """
    import torch
    xs = [torch.tensor([-2.35, -0.45, 0.15, 1.7]), torch.linspace(-0.8, 0.7, 6).reshape(2, 3)]
"""
_UNARY = ("abs", "acos", "asin", "atan", "ceil", "cos", "cosh", "erf", "erfc", "exp", "expm1", "floor",
          "frac", "lgamma", "log", "log10", "log1p", "log2", "neg", "reciprocal", "round", "sigmoid", "sin",
          "sinh", "sqrt", "tan", "trunc")
_DOMAIN_0_1 = ("acos", "asin", "log", "log10", "log2", "sqrt", "lgamma", "reciprocal", "log1p")

for _name in _UNARY:
    for _pre in (_POSITIVE,) if _name in _DOMAIN_0_1 else (_POSITIVE, _SIGNED):
        case(f"torch._foreach_{_name}", _pre + f"""
    ys = torch._foreach_{_name}(xs)
    a = ys[0]
    b = ys[1]
""")
        case(f"torch._foreach_{_name}_", _pre + f"""
    torch._foreach_{_name}_(xs)
    a = xs[0]
    b = xs[1]
""")
case("torch._foreach_zero_", _SIGNED + """
    torch._foreach_zero_(xs)
    a = xs[0]
    b = xs[1]
""")
