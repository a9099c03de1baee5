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

# --- table entries op_db does not cover (or covers only for complex dtypes)

case("torch.detach", """
    import torch
    x = torch.tensor([1.0, -2.0, 3.0])
    y = torch.detach(x) * 2
""")
case("torch.imag", """
    import torch
    z = torch.tensor([1 + 2j, 3 - 1j, -0.5j], dtype=torch.complex64)
    im = torch.imag(z)
""")
case("torch.view_as_real", """
    import torch
    z = torch.complex(torch.tensor([1.0, 3.0]), torch.tensor([2.0, -1.0]))
    re = torch.view_as_real(z)
""")
case("torch.vander", """
    import torch
    x = torch.tensor([1.0, 2.0, 3.0, 5.0])
    v = torch.vander(x)
    w = torch.vander(x, N=3)
    i = torch.vander(torch.tensor([1, 2, 3]), 2)
""")
for _win in ("hann_window", "hamming_window", "kaiser_window"):
    for _call in ("8", "7, periodic=False", "5, False", "5, dtype=torch.float64", "6, False, dtype=torch.float64"):
        case(f"torch.{_win}", f"""
    import torch
    w = torch.{_win}({_call})
""")
case("torch.hamming_window", """
    import torch
    d = torch.hamming_window(6, True, 0.5, 0.5)
""")
case("torch.kaiser_window", """
    import torch
    d = torch.kaiser_window(6, True, 8.0)
""")
case("torch.is_nonzero", """
    import torch
    a = torch.is_nonzero(torch.tensor([1.5]))
    b = torch.is_nonzero(torch.tensor(0.0))
""")
case("torch.slogdet", """
    import torch
    m = torch.tensor([[2.0, 1.0, 0.5], [1.0, 3.0, -1.0], [0.0, 1.0, -2.0]])
    sign, logabsdet = torch.slogdet(m)
""")
case("torch.scalar_tensor", """
    import torch
    a = torch.scalar_tensor(3.5)
    b = torch.scalar_tensor(2, dtype=torch.int64)
    c = torch.scalar_tensor(1)
""")
case("torch.max_pool2d", """
    import torch
    x = torch.arange(64.0).reshape(1, 2, 4, 8) % 7
    a = torch.max_pool2d(x, 2)
    c = torch.max_pool2d(x, (2, 3), (2, 2))
""")
case("torch.max_pool2d", """
    import torch
    x = torch.arange(64.0).reshape(1, 2, 4, 8) % 7
    b = torch.max_pool2d(x, kernel_size=3, stride=1, padding=1)
""")
case("torch.max_pool3d", """
    import torch
    x = torch.arange(128.0).reshape(1, 2, 4, 4, 4) % 9
    a = torch.max_pool3d(x, 2)
""")
case("torch.max_pool3d", """
    import torch
    x = torch.arange(128.0).reshape(1, 2, 4, 4, 4) % 9
    b = torch.max_pool3d(x, kernel_size=3, stride=1, padding=1)
""")
case("torch.histogram", """
    import torch
    x = torch.tensor([1.0, 2.0, 1.0, 4.0, 2.5, 3.0])
    hist, edges = torch.histogram(x, bins=4)
    h2, e2 = torch.histogram(x, 3, range=(0.0, 6.0))
""")
case("torch.isin", """
    import torch
    e = torch.tensor([[1, 2, 3], [4, 5, 6]])
    a = torch.isin(e, torch.tensor([2, 6, 9]))
""")
case("torch.isin", """
    import torch
    e = torch.tensor([[1, 2, 3], [4, 5, 6]])
    b = torch.isin(e, torch.tensor([2, 6, 9]), invert=True)
""")
case("torch.isin", """
    import torch
    e = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    c = torch.isin(elements=e, test_elements=torch.tensor([1.0, 5.0]))
""")
case("torch.cdist", """
    import torch
    x = torch.linspace(-1, 1, 12).reshape(4, 3)
    y = torch.linspace(0, 2, 6).reshape(2, 3)
    a = torch.cdist(x, y)
    c = torch.cdist(x.reshape(2, 2, 3), y.reshape(1, 2, 3).expand(2, 2, 3))
""")
case("torch.cdist", """
    import torch
    x = torch.linspace(-1, 1, 12).reshape(4, 3)
    y = torch.linspace(0, 2, 6).reshape(2, 3)
    b = torch.cdist(x, y, p=1.0)
""")
case("torch.cdist", """
    import torch
    x = torch.linspace(-1, 1, 12).reshape(4, 3)
    y = torch.linspace(0, 2, 6).reshape(2, 3)
    b = torch.cdist(x, y, 3.0)
""")
case("torch.narrow_copy", """
    import torch
    x = torch.arange(12.0).reshape(3, 4)
    a = torch.narrow_copy(x, 1, 1, 2)
    b = torch.narrow_copy(x, 0, 0, 2)
""")
case("torch.corrcoef", """
    import torch
    x = torch.tensor([[1.0, 2.0, 4.0, 7.0], [0.5, -1.0, 2.0, 3.0], [3.0, 1.0, 0.0, -2.0]])
    r = torch.corrcoef(x)
""")
case("torch.functional.atleast_1d", """
    import torch
    a = torch.functional.atleast_1d(torch.tensor(2.0))
""")
case("torch.functional.atleast_2d", """
    import torch
    a = torch.functional.atleast_2d(torch.tensor([1.0, 2.0]))
""")
case("torch.functional.atleast_3d", """
    import torch
    a = torch.functional.atleast_3d(torch.tensor([[1.0, 2.0]]))
""")
case("torch.functional.split", """
    import torch
    x = torch.arange(10.0).reshape(5, 2)
    a, b = torch.functional.split(x, 3)
""")
case("torch.functional.split", """
    import torch
    x = torch.arange(10.0).reshape(5, 2)
    c, d = torch.functional.split(x, [2, 3], dim=0)
""")
case("torch.functional.unique_consecutive", """
    import torch
    x = torch.tensor([1, 1, 2, 2, 3, 1, 1, 2])
    u = torch.functional.unique_consecutive(x)
""")

case("torch.scalar_tensor", """
    import torch
    b = torch.scalar_tensor(2, dtype=torch.int64)
""")
case("torch.vander", """
    import torch
    w = torch.vander(torch.tensor([1.0, 2.0, 3.0, 5.0]), N=3)
""")
case("torch.narrow_copy", """
    import torch
    x = torch.arange(12.0).reshape(3, 4)
    a = torch.narrow_copy(x, dim=1, start=1, length=2)
""")

# --- TFN003

case("torch.clone", """
    import torch
    x = torch.arange(6.0).reshape(2, 3)
    a = torch.clone(x)
    b = torch.clone(x * 2)
""")
case("torch.clone", """
    import torch
    x = torch.arange(6.0).reshape(2, 3)
    a = torch.clone(x, memory_format=torch.preserve_format)
""")
case("torch.select", """
    import torch
    x = torch.arange(24.0).reshape(2, 3, 4)
    a = torch.select(x, 1, 2)
    b = torch.select(x, -1, 0)
""")
case("torch.take", """
    import torch
    x = torch.arange(12.0).reshape(3, 4)
    a = torch.take(x, torch.tensor([0, 5, 11]))
    b = torch.take(x + 1, torch.tensor([[1, 2], [3, 4]]))
""")
case("torch.complex", """
    import torch
    z = torch.complex(torch.tensor([1.0, 3.0]), torch.tensor([2.0, -1.0]))
    re = torch.view_as_real(z)
""")
case("torch.complex", """
    import torch
    z = torch.complex(torch.tensor([1.0, 3.0], dtype=torch.float64), torch.tensor([2.0, -1.0], dtype=torch.float64))
""")
case("torch.chain_matmul", """
    import torch
    a = torch.linspace(-1, 1, 6).reshape(2, 3)
    b = torch.linspace(0, 1, 12).reshape(3, 4)
    c = torch.linspace(1, 2, 8).reshape(4, 2)
    r = torch.chain_matmul(a, b, c)
    s = torch.chain_matmul(a, b)
""")
case("torch.cartesian_prod", """
    import torch
    a = torch.tensor([1, 2, 3])
    b = torch.tensor([4, 5])
    p = torch.cartesian_prod(a, b)
    q = torch.cartesian_prod(a)
    r = torch.cartesian_prod(a, b, torch.tensor([0, 1]))
""")
case("torch.meshgrid", """
    import torch
    x = torch.arange(3.0)
    y = torch.arange(2.0)
    gx, gy = torch.meshgrid(x, y)
""")
case("torch.meshgrid", """
    import torch
    x = torch.arange(3.0)
    y = torch.arange(2.0)
    gx, gy = torch.meshgrid(x, y, indexing="xy")
""")
case("torch.meshgrid", """
    import torch
    x = torch.arange(3.0)
    y = torch.arange(2.0)
    gx, gy = torch.meshgrid([x, y], indexing="ij")
""")
case("torch.functional.meshgrid", """
    import torch
    x = torch.arange(3.0)
    y = torch.arange(2.0)
    gx, gy = torch.functional.meshgrid(x, y, indexing="ij")
""")
case("torch.bitwise_not", """
    import torch
    a = torch.bitwise_not(torch.tensor([True, False, True]))
    b = torch.bitwise_not(torch.tensor([3, -1, 0]))
    c = torch.bitwise_not(torch.tensor([1, 2], dtype=torch.int32))
""")
case("torch.vdot", """
    import torch
    a = torch.vdot(torch.tensor([1.0, 2.0, -0.5]), torch.tensor([3.0, -1.0, 4.0]))
    b = torch.vdot(torch.tensor([1, 2]), torch.tensor([3, 4]))
""")
case("torch.unflatten", """
    import torch
    x = torch.arange(24.0).reshape(2, 12)
    a = torch.unflatten(x, 1, (3, 4))
    b = torch.unflatten(x, -1, (2, -1))
    c = torch.unflatten(x, 0, (1, 2))
""")
case("torch.range", """
    import torch
    a = torch.range(0, 4)
    b = torch.range(1, 2, 0.3)
    c = torch.range(0, 1, 0.1)
    d = torch.range(-1, 1, 0.5)
""")
case("torch.range", """
    import torch
    e = torch.range(0, 6, 2, dtype=torch.int64)
""")

# --- TFN004

case("torch.Size", """
    import torch
    x = torch.ones(2, 1, 3)
    s = torch.Size([2, 3])
    same = x.shape[1:] == torch.Size([1, 3])
    is_size = isinstance(x.shape, torch.Size)
    n = len(torch.Size((4, 5, 6)))
""")
case("torch.broadcast_shapes", """
    import torch
    b = torch.broadcast_shapes((2, 1), (1, 3))
    c = torch.broadcast_shapes((5, 1, 4), (3, 1), (4,))
""")
case("torch.functional.broadcast_shapes", """
    import torch
    b = torch.functional.broadcast_shapes((2, 1), (1, 3))
""")
case("torch.broadcast_tensors", """
    import torch
    p, q = torch.broadcast_tensors(torch.ones(2, 1), torch.arange(3.0))
    r = torch.broadcast_tensors(torch.arange(4.0).reshape(4, 1, 1), torch.ones(2, 1), torch.tensor(5.0))
""")
case("torch.finfo", """
    import torch
    x = torch.ones(2, dtype=torch.float64)
    eps = torch.finfo(torch.float32).eps
    big = torch.finfo(torch.float32).max
    small = torch.finfo(torch.float32).min
    tiny = torch.finfo(torch.float16).tiny
    bits = torch.finfo(x.dtype).bits
    eps64 = torch.finfo(x.dtype).eps
    res = torch.finfo(torch.float32).resolution
    norm = torch.finfo(torch.float64).smallest_normal
    name = torch.finfo(torch.float32).dtype
""")
case("torch.finfo", """
    import torch
    eps = torch.finfo().eps
""")
case("torch.iinfo", """
    import torch
    big = torch.iinfo(torch.int64).max
    small = torch.iinfo(torch.int32).min
    bits = torch.iinfo(torch.uint8).bits
    top = torch.iinfo(torch.int8).max
    name = torch.iinfo(torch.int16).dtype
""")

case("torch.view_as_complex", """
    import torch
    x = torch.tensor([[1.0, 2.0], [3.0, -1.0], [0.5, 0.0]])
    z = torch.view_as_complex(x)
    re = torch.view_as_real(z)
""")
case("torch.kthvalue", """
    import torch
    x = torch.tensor([[1.5, -2.0, 3.0, 0.25], [0.5, 4.0, -1.0, 2.0]])
    v, i = torch.kthvalue(x, 2)
""")
case("torch.kthvalue", """
    import torch
    x = torch.tensor([[1.5, -2.0, 3.0, 0.25], [0.5, 4.0, -1.0, 2.0]])
    v, i = torch.kthvalue(x, 1, 0)
""")
case("torch.kthvalue", """
    import torch
    x = torch.tensor([[1.5, -2.0, 3.0, 0.25], [0.5, 4.0, -1.0, 2.0]])
    v, i = torch.kthvalue(x, 3, dim=1, keepdim=True)
""")
case("torch.nonzero", """
    import torch
    x = torch.tensor([[1.5, 0.0, 3.0], [0.0, 4.0, -1.0]])
    i = torch.nonzero(x)
""")
case("torch.nonzero", """
    import torch
    x = torch.tensor([[1.5, 0.0, 3.0], [0.0, 4.0, -1.0]])
    rows, cols = torch.nonzero(x, as_tuple=True)
""")
case("torch.conj_physical", """
    import torch
    x = torch.tensor([[1.5, 0.0, 3.0], [0.0, 4.0, -1.0]])
    c = torch.conj_physical(x)
""")
for _win in ("blackman_window", "bartlett_window"):
    for _call in ("8", "7, periodic=False", "5, False", "5, dtype=torch.float64", "6, False, dtype=torch.float64"):
        case(f"torch.{_win}", f"""
    import torch
    w = torch.{_win}({_call})
""")

# --- TFN005

_LOSS = """
    import torch
    a = torch.tensor([1.0, 2.0, -1.0, 0.25])
    b = torch.tensor([0.5, 3.0, 1.0, -2.0])
    t = torch.tensor([1.0, 1.0, -1.0, -1.0])
    x = torch.tensor([[1.0, 2.0, 0.5], [0.5, -1.0, 2.0]])
    y = torch.tensor([[0.5, 1.0, -1.0], [2.0, 0.0, 1.0]])
    s = torch.tensor([1.0, -1.0])
    h = torch.tensor([[1.0, -1.0, 1.0], [-1.0, 1.0, -1.0]])
"""
for _call in ("a, b, t", "a, b, t, 0.5", "a, b, t, 0.1, 1", "a, b, t, 0.2, 2", "a, b, t, 0.3, 0",
              "a, b, t, margin=0.2, reduction=1"):
    case("torch.margin_ranking_loss", _LOSS + f"""
    loss = torch.margin_ranking_loss({_call})
""")
for _call in ("x, y, s", "x, y, s, 0.5", "x, y, s, 0.1, 1", "x, y, s, 0.2, 2", "x, y, s, margin=0.2, reduction=1"):
    case("torch.cosine_embedding_loss", _LOSS + f"""
    loss = torch.cosine_embedding_loss({_call})
""")
for _call in ("x, h", "x, h, 0.5", "x, h, 1.0, 1", "x, h, 2.0, 2", "x, h, margin=0.5, reduction=1"):
    case("torch.hinge_embedding_loss", _LOSS + f"""
    loss = torch.hinge_embedding_loss({_call})
""")

case("torch._assert", """
    import torch
    x = torch.ones(2, 3)
    torch._assert(x.shape[0] == 2, "two rows")
    ok = x.sum()
""")
case("torch.asarray", """
    import torch
    a = torch.asarray([1.0, 2.5])
    b = torch.asarray([[1, 2], [3, 4]])
""")
case("torch.asarray", """
    import numpy as np
    import torch
    c = torch.asarray(np.arange(4.0), dtype=torch.float32)
""")
