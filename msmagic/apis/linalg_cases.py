"""Verification cases for torch.linalg, torch.fft and torch.special APIs that PyTorch's
op_db does not sample (frequency helpers, the incomplete gamma functions...), and for
the formulas of rules LNA* (linear algebra and special functions written with MindSpore
ops). Values are chosen away from poles and branch cuts; each case binds what is
compared."""

from __future__ import annotations

from msmagic.apis.cases import case

# --- torch.fft frequency helpers

case("torch.fft.fftfreq", """
    import torch
    f5 = torch.fft.fftfreq(5)
    f8 = torch.fft.fftfreq(8)
""")
case("torch.fft.fftfreq", """
    import torch
    f6 = torch.fft.fftfreq(6, 0.5)
""")
case("torch.fft.fftfreq", """
    import torch
    f6 = torch.fft.fftfreq(6, d=0.25)
""")
case("torch.fft.rfftfreq", """
    import torch
    r7 = torch.fft.rfftfreq(7)
    r8 = torch.fft.rfftfreq(8)
""")
case("torch.fft.rfftfreq", """
    import torch
    r7 = torch.fft.rfftfreq(7, 0.1)
""")
case("torch.fft.rfftfreq", """
    import torch
    r7 = torch.fft.rfftfreq(7, d=2.0)
""")

# --- torch.special: incomplete gamma, multivariate log-gamma, polygamma

_AX = """
    import torch
    a = torch.tensor([[0.5, 1.0, 2.5], [4.0, 0.75, 3.0]])
    x = torch.tensor([[0.2, 1.5, 2.0], [6.0, 0.1, 3.5]])
"""
case("torch.special.gammainc", _AX + """
    p = torch.special.gammainc(a, x)
""")
case("torch.special.gammainc", _AX.replace("])\n", "], dtype=torch.float64)\n") + """
    p = torch.special.gammainc(a, x)
""", dtype="float64")
case("torch.special.gammaincc", _AX + """
    q = torch.special.gammaincc(a, x)
""")
case("torch.special.gammaincc", _AX.replace("])\n", "], dtype=torch.float64)\n") + """
    q = torch.special.gammaincc(a, x)
""", dtype="float64")
case("torch.special.multigammaln", """
    import torch
    x = torch.tensor([[2.5, 3.0, 4.25], [1.75, 6.0, 2.0]])
    m1 = torch.special.multigammaln(x, 1)
    m3 = torch.special.multigammaln(x, 3)
""")
case("torch.special.multigammaln", """
    import torch
    x = torch.tensor([2.5, 3.0, 4.25], dtype=torch.float64)
    m2 = torch.special.multigammaln(x, p=2)
""", dtype="float64")
case("torch.special.polygamma", """
    import torch
    x = torch.tensor([[0.5, 1.0, 2.5], [4.0, 0.75, 3.0]])
    p0 = torch.special.polygamma(0, x)
    p1 = torch.special.polygamma(1, x)
    p3 = torch.special.polygamma(3, x)
""")
case("torch.special.polygamma", """
    import torch
    x = torch.tensor([0.5, 1.0, 2.5, 7.0], dtype=torch.float64)
    p2 = torch.special.polygamma(2, x)
""", dtype="float64")
case("torch.polygamma", """
    import torch
    x = torch.tensor([[0.5, 1.0, 2.5], [4.0, 0.75, 3.0]])
    p1 = torch.polygamma(1, x)
    p2 = torch.polygamma(2, x.double())
""")

# --- torch.linalg written with MindSpore ops (LNA002): the patterns notebooks use

_M = """
    import torch
    a = torch.tensor([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])
    b = torch.tensor([[1.0, 2.0], [0.5, -1.0], [2.0, 0.0]])
"""
case("torch.linalg.eigvalsh", _M + """
    w = torch.linalg.eigvalsh(a)
    wb = torch.linalg.eigvalsh(torch.stack([a, a * 2]))
""")
case("torch.linalg.eigvalsh", _M + """
    w = torch.linalg.eigvalsh(a, UPLO="U")
""")
case("torch.linalg.matrix_rank", _M + """
    r = torch.linalg.matrix_rank(a)
    r1 = torch.linalg.matrix_rank(torch.outer(b[:, 0], b[:, 1]))
""")
case("torch.linalg.multi_dot", _M + """
    m = torch.linalg.multi_dot([a, a, b])
    v = torch.linalg.multi_dot((b[:, 0], a, b))
""")
case("torch.linalg.solve", _M + """
    x = torch.linalg.solve(a, b)
    v = torch.linalg.solve(a, b[:, 1])
""")
case("torch.linalg.solve_triangular", _M + """
    t = torch.linalg.solve_triangular(a.triu(), b, upper=True)
    lo = torch.linalg.solve_triangular(a.tril(), b, upper=False)
""")
case("torch.linalg.vander", """
    import torch
    v = torch.linalg.vander(torch.tensor([1.0, 2.0, 3.0]))
    v4 = torch.linalg.vander(torch.tensor([[1.0, -2.0], [0.5, 3.0]]), N=4)
""")
case("torch.linalg.svdvals", _M + """
    s = torch.linalg.svdvals(b)
""")

# --- signbit of signed zeros (LNA003): MindSpore's own ops.signbit says False for -0.0

case("torch.signbit", """
    import torch
    z = torch.tensor([-0.0, 0.0, -1.5, 2.0, float("-inf"), float("inf")])
    s = torch.signbit(z)
    d = torch.signbit(z.double())
""")
case("Tensor.signbit", """
    import torch
    z = torch.tensor([-0.0, 0.0, -1.5, 2.0, float("-inf"), float("inf")])
    s = z.signbit()
    n = (-z).signbit()
""")

# --- cond (result cast to PyTorch's dtype) and lu_solve (arguments reordered)

case("torch.linalg.cond", _M + """
    c = torch.linalg.cond(a)
    c64 = torch.linalg.cond(a.double())
""")
case("torch.linalg.cond", _M + """
    cf = torch.linalg.cond(a, "fro")
    c1 = torch.linalg.cond(a, 1)
""")
case("torch.linalg.cond", _M + """
    cp = torch.linalg.cond(a, p=2)
""")
case("torch.linalg.lu_solve", _M + """
    LU = torch.tensor([[4.0, 1.0, 0.5], [0.25, 2.75, 0.075], [0.125, 0.02727273, 1.9354545]])
    piv = torch.tensor([1, 2, 3], dtype=torch.int32)
    x = torch.linalg.lu_solve(LU, piv, b)
    swapped = torch.linalg.lu_solve(LU, torch.tensor([2, 2, 3], dtype=torch.int32), b)
""")
case("torch.linalg.lu_factor", _M + """
    LU, piv = torch.linalg.lu_factor(a)
    c = torch.tensor([[0.5, 2.0, 1.0], [3.0, 1.0, 0.2], [1.0, 0.1, 4.0]])
    LUb, pivb = torch.linalg.lu_factor(torch.stack([a, c]))
    LUc, pivc = torch.linalg.lu_factor(c.double())
""")
case("torch.linalg.tensorinv", """
    import torch
    a = torch.eye(6).reshape(6, 2, 3) * 2 + torch.linspace(0, 0.5, 36).reshape(6, 2, 3)
    inv = torch.linalg.tensorinv(a, ind=1)
    b = (torch.eye(4) * 3 + torch.linspace(0, 1, 16).reshape(4, 4)).reshape(2, 2, 2, 2)
    inv2 = torch.linalg.tensorinv(b)
""")
case("torch.linalg.tensorsolve", """
    import torch
    a = (torch.eye(6) * 3 + torch.linspace(0, 1, 36).reshape(6, 6)).reshape(2, 3, 6)
    b = torch.linspace(-1, 1, 6).reshape(2, 3)
    x = torch.linalg.tensorsolve(a, b)
""")
