"""Linear algebra and special functions written with MindSpore ops (LNA001-LNA004)."""

from tests.fast.codemod import assert_ports, finding_ids, port


def test_special_formulas():
    assert_ports(
        """
            import torch
            y = torch.special.ndtr(x)
            z = torch.special.xlog1py(x, y + 1)
            p = torch.special.polygamma(1, x)
        """,
        """
            import mindspore
            y = 0.5 * mindspore.ops.erfc(-x * 0.7071067811865476)
            z = (lambda y: mindspore.ops.where((x == 0) & ~mindspore.ops.isnan(y), mindspore.ops.zeros_like(x * y), x * mindspore.ops.log1p(y)))(y + 1)
            p = mindspore.ops.polygamma(mindspore.tensor(1, mindspore.int64), x)
        """,
        edits={"IMP001", "LNA001"},
    )


def test_lambda_parameter_does_not_hide_an_argument():
    """xlog1py(y, <expr>): the lambda's parameter for `other` must not be named y."""
    out = port("import torch\nz = torch.special.xlog1py(y, x + 1)\n").code
    assert "lambda y_:" in out and "(y == 0)" in out


def test_linalg_formulas_and_scipy_import():
    assert_ports(
        """
            import torch
            m = torch.linalg.multi_dot([a, b, c])
            w = torch.linalg.eigvalsh(a, UPLO="U")
            v = torch.linalg.vander(x, N=3)
            t = torch.linalg.solve_triangular(a, b, upper=True)
        """,
        """
            import mindspore
            import mindspore.scipy.linalg
            m = mindspore.ops.matmul(mindspore.ops.matmul(a, b), c)
            w = (mindspore.ops.zeros(a.shape[:-1], a.dtype) if a.size == 0 else mindspore.ops.stack([mindspore.scipy.linalg.eigh(m_, lower=False, eigvals_only=True) for m_ in a.reshape((-1,) + a.shape[-2:])]).reshape(a.shape[:-1]))
            v = x.unsqueeze(-1) ** mindspore.ops.arange(3).astype(x.dtype)
            t = mindspore.ops.MatrixTriangularSolve(lower=False)(a, b)
        """,
        edits={"IMP001", "LNA002"},
    )


def test_arguments_the_formulas_do_not_cover_are_flagged():
    r = port("import torch\nq = torch.linalg.multi_dot(mats)\n"
             "t = torch.linalg.solve_triangular(a, b, upper=flag)\n"
             "u = torch.linalg.solve(a, b, left=False)\nr = torch.linalg.matrix_rank(a, hermitian=True)\n")
    assert finding_ids(r) == {"LNA002"} and len(r.unsupported) == 4
    assert r.code.count("# msmagic: LNA002") == 4


def test_signbit_tells_negative_zero():
    assert_ports(
        """
            import torch
            def f(t):
                return torch.signbit(t), t.signbit(), (t * 2).signbit()
        """,
        """
            import mindspore
            def f(t):
                return (t < 0) | ((t == 0) & (1 / t < 0)), (t < 0) | ((t == 0) & (1 / t < 0)), (lambda x: (x < 0) | ((x == 0) & (1 / x < 0)))((t * 2))
        """,
        edits={"IMP001", "LNA003"},
    )


def test_abs_of_a_complex_result_takes_the_real_part():
    assert_ports(
        """
            import torch
            mag = torch.abs(torch.fft.fft(s))
            m2 = torch.fft.rfft(s).abs().mean()
            plain = torch.abs(s) + s.abs()
        """,
        """
            import mindspore
            mag = mindspore.ops.abs(mindspore.ops.fft(s)).real()
            m2 = mindspore.ops.rfft(s).abs().real().mean()
            plain = mindspore.ops.abs(s) + s.abs()
        """,
        edits=None,
    )
