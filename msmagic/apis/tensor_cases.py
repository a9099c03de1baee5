"""Hand-written cases for Tensor methods PyTorch's ``op_db`` does not sample as methods
(``x.det()``, ``x.inverse()``...: op_db tests ``torch.linalg.*``), in-place forms and
conversions. Each case binds the values to compare."""

from __future__ import annotations

from msmagic.apis.cases import case

# --- linear algebra on a batch of well-conditioned matrices

_MATS = """
    import torch
    a = torch.tensor([[[2.0, 0.5, 0.1], [0.3, 3.0, 0.2], [0.1, 0.4, 1.5]],
                      [[1.0, 0.2, 0.0], [0.2, 2.0, 0.3], [0.0, 0.3, 4.0]]])
    m = a[0]
"""

case("Tensor.det", _MATS + """
    d = a.det()
    d1 = m.det()
""")
case("Tensor.inverse", _MATS + """
    inv = a.inverse()
    inv1 = m.inverse()
""")
case("Tensor.matrix_power", _MATS + """
    p3 = a.matrix_power(3)
    p0 = m.matrix_power(0)
    pinv = m.matrix_power(-2)
""")
case("Tensor.matrix_power", _MATS + """
    p = a.matrix_power(n=2)
""")
case("Tensor.slogdet", _MATS + """
    sign, logabs = a.slogdet()
    s1, l1 = m.slogdet()
""")
case("Tensor.mvlgamma", """
    import torch
    x = torch.tensor([[2.5, 3.0, 4.2], [1.7, 6.0, 2.2]])
    y = x.mvlgamma(2)
    d = x.double().mvlgamma(1)
""")
case("Tensor.mvlgamma_", """
    import torch
    x = torch.tensor([[2.5, 3.0, 4.2], [1.7, 6.0, 2.2]])
    x.mvlgamma_(2)
""")
case("Tensor.divide_", """
    import torch
    x = torch.tensor([[1.0, -2.0, 3.0], [4.0, 5.0, -6.5]])
    x.divide_(2)
    y = torch.tensor([1.0, 2.0, 4.0])
    y.divide_(torch.tensor([2.0, 8.0, 0.5]))
""")
case("Tensor.mvlgamma", """
    import torch
    x = torch.tensor([[2.5, 3.0, 4.2], [1.7, 6.0, 2.2]])
    z = x.mvlgamma(p=3)
""")
case("Tensor.nonzero", """
    import torch
    x = torch.tensor([[0.0, 1.5, 0.0], [2.0, 0.0, -1.0]])
    idx = x.nonzero()
    b = (x > 0).nonzero()
    i = torch.tensor([0, 3, 0, 7]).nonzero()
""")
case("Tensor.relu_", """
    import torch
    x = torch.tensor([[1.0, -2.0, 3.0], [-0.5, 0.0, 2.5]])
    x.relu_()
    y = x * 2
""")
case("Tensor.detach_", """
    import torch
    x = torch.tensor([[1.0, -2.0, 3.0], [-0.5, 0.0, 2.5]])
    x.detach_()
    y = x * 2
""")
case("Tensor.polygamma", """
    import torch
    x = torch.tensor([[0.5, 1.5, 2.0], [3.25, 4.0, 7.5]])
    d0 = x.polygamma(0)
    d3 = x.double().polygamma(3)
""")
case("Tensor.polygamma_", """
    import torch
    x = torch.tensor([[0.5, 1.5, 2.0], [3.25, 4.0, 7.5]])
    x.polygamma_(1)
""")
case("Tensor.is_nonzero", """
    import torch
    a = torch.tensor([3]).is_nonzero()
    b = torch.tensor([[0.0]]).is_nonzero()
    c = torch.tensor(True).is_nonzero()
""")
case("Tensor.is_same_size", """
    import torch
    x = torch.zeros(2, 3)
    a = x.is_same_size(torch.ones(2, 3))
    b = x.is_same_size(torch.ones(3, 2))
    c = not x.is_same_size(x.t())
""")
case("Tensor.unflatten", """
    import torch
    x = torch.arange(24).reshape(4, 6)
    a = x.unflatten(1, (2, 3))
    b = x.unflatten(0, (-1, 2))
    c = x.unflatten(-2, [2, 2])
""")
case("Tensor.vdot", """
    import torch
    a = torch.tensor([1.0, -2.0, 3.5])
    b = torch.tensor([0.5, 4.0, -1.0])
    d = a.vdot(b)
    i = torch.tensor([1, 2, 3]).vdot(torch.tensor([4, 5, 6]))
""")
case("Tensor.nanmedian", """
    import torch
    x = torch.tensor([[1.0, float('nan'), 3.0, 2.0], [4.0, 0.5, float('nan'), 8.0]])
    m = x.nanmedian()
    v, i = x.nanmedian(1)
    w, j = x.nanmedian(dim=0, keepdim=True)
    n = torch.tensor([5, 1, 4, 2]).nanmedian()
""")
case("Tensor.index_fill", """
    import torch
    x = torch.arange(12.0).reshape(3, 4)
    a = x.index_fill(1, torch.tensor([0, 2]), -1.0)
    b = x.index_fill(dim=0, index=torch.tensor([1]), value=torch.tensor(5.0))
    c = torch.arange(6).reshape(2, 3).index_fill(-1, torch.tensor([2, 2]), 7)
""")
case("Tensor.index_fill_", """
    import torch
    x = torch.arange(12.0).reshape(3, 4)
    x.index_fill_(1, torch.tensor([0, 3]), -2.5)
""")
case("Tensor.resolve_conj", """
    import torch
    x = torch.tensor([[1.0, -2.0], [3.5, 0.25]])
    y = x.resolve_conj()
    z = x.resolve_neg()
""")
case("Tensor.unflatten", """
    import torch
    x = torch.arange(24.0).reshape(2, 12)
    c = x.unflatten(dim=1, sizes=(3, -1))
""")
case("Tensor.index_fill", """
    import torch
    x = torch.arange(12.0).reshape(3, 4)
    b = x.index_fill(dim=0, index=torch.tensor([1]), value=torch.tensor(5.0))
""")
case("Tensor.polygamma", """
    import torch
    x = torch.tensor([[0.5, 1.5, 2.0], [3.25, 4.0, 7.5]])
    d2 = x.polygamma(n=2)
""")
case("Tensor.vdot", """
    import torch
    a = torch.tensor([1.0, -2.0, 3.5])
    d = a.vdot(other=torch.tensor([0.5, 4.0, -1.0]))
""")

# --- Python protocols (kept as written; catalog.PROTOCOLS lists them)

case("Tensor.__len__", """
    import torch
    x = torch.zeros(4, 3)
    n = len(x)
    m = len(x[0])
""")
case("Tensor.__bool__", """
    import torch
    a = bool(torch.tensor([2.5]))
    b = bool(torch.tensor(0))
    c = 1 if torch.tensor([[True]]) else 0
    d = not torch.tensor(0.0)
""")
case("Tensor.__int__", """
    import torch
    a = int(torch.tensor(3.7))
    b = int(torch.tensor([-2.9]))
    c = int(torch.tensor(7))
""")
case("Tensor.__float__", """
    import torch
    a = float(torch.tensor(3))
    b = float(torch.tensor([[-2.5]]))
""")
case("Tensor.__index__", """
    import torch
    items = [10, 20, 30, 40]
    a = items[torch.tensor(2)]
    b = list(range(10))[torch.tensor(1):torch.tensor(7):torch.tensor(2)]
""")
case("Tensor.__array__", """
    import numpy as np
    import torch
    x = torch.tensor([[1.5, -2.0], [3.0, 4.25]])
    a = np.asarray(x)
    b = np.array(x, dtype=np.float64)
    c = np.array(torch.tensor([1, 2, 3])).sum()
""")
case("Tensor.__setitem__", """
    import torch
    x = torch.zeros(3, 4)
    alias = x
    x[0, 1:3] = 5.0
    x[1] = torch.tensor([1.0, 2.0, 3.0, 4.0])
    x[:, -1] = -1
    x[x > 4] = 9.0
    i = torch.arange(6)
    i[torch.tensor([0, 5])] = 7
""")
case("Tensor.__iter__", """
    import torch
    x = torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    rows = [r * 2 for r in x]
    total = sum(r.sum() for r in x)
    a, b, c = x
""")
case("Tensor.__contains__", """
    import torch
    x = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    a = 3.0 in x
    b = 7 in x
    c = torch.tensor(2.0) in x
""")

# --- random draws (parity copies PyTorch's values; shapes and dtypes are compared)

case("Tensor.bernoulli", """
    import torch
    probs = torch.tensor([[0.0, 1.0, 1.0], [1.0, 0.0, 0.0]])
    sure = probs.bernoulli()
    draws = torch.full((4, 5), 0.3).bernoulli()
    half = torch.zeros(3, 2, dtype=torch.float64).bernoulli(0.5)
""")
case("Tensor.geometric_", """
    import torch
    g = torch.zeros(3, 4)
    g.geometric_(0.25)
""")
case("Tensor.cauchy_", """
    import torch
    c = torch.zeros(2, 5)
    c.cauchy_(1.0, 2.0)
    d = torch.zeros(3, dtype=torch.float64)
    d.cauchy_(median=0.5)
""")
case("Tensor.log_normal_", """
    import torch
    x = torch.zeros(6)
    x.log_normal_()
    y = torch.zeros(2, 2, dtype=torch.float64)
    y.log_normal_(mean=0.0, std=0.25)
""")

case("Tensor.unique", """
    import torch
    labels = torch.tensor([[3, 1, 2], [3, 1, 7]])
    classes = labels.unique()
    f = torch.tensor([2.5, -1.0, 2.5, 0.0]).unique(sorted=True)
""")
case("Tensor.share_memory_", """
    import torch
    x = torch.arange(6.0).reshape(2, 3)
    x.share_memory_()
    y = x.share_memory_() + 1
""")
case("Tensor.pin_memory", """
    import torch
    x = torch.arange(6.0).reshape(2, 3)
    y = x.pin_memory() if torch.cuda.is_available() else x
""")

case("Tensor.unsafe_chunk", """
    import torch
    x = torch.arange(12.0).reshape(3, 4)
    a, b = x.unsafe_chunk(2, 1)
    parts = x.unsafe_chunk(3)
""")
case("Tensor.unsafe_split", """
    import torch
    x = torch.arange(12.0).reshape(3, 4)
    a, b = x.unsafe_split(2, 1)
    parts = x.unsafe_split(1)
""")
case("Tensor.unsafe_split_with_sizes", """
    import torch
    x = torch.arange(12.0).reshape(3, 4)
    a, b = x.unsafe_split_with_sizes([1, 3], 1)
    parts = x.unsafe_split_with_sizes([2, 1])
""")
case("Tensor.prelu", """
    import torch
    x = torch.tensor([[-1.0, 2.0, -3.0], [0.5, -0.25, 4.0]]).reshape(1, 3, 2)
    y = x.prelu(torch.tensor([0.25, 0.1, 0.5]))
    z = x.prelu(torch.tensor([0.2]))
""")
case("Tensor.dtype", """
    import torch
    x = torch.ones(2, dtype=torch.float64)
    same = x.dtype == torch.float64
    other = torch.tensor([1, 2]).dtype == torch.int64
    y = torch.zeros(3, dtype=x.dtype)
    f = torch.ones(2).dtype in (torch.float32, torch.float16)
""")
