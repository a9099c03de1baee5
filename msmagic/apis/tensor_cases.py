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
