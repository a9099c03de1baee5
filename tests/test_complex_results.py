"""Complex numbers and signed zeros (msmagic issue 20, point 4): each class of call is
ported from a PyTorch snippet, run on both frameworks (complex128 inputs) and compared
value by value with the dtypes checked exactly."""

from __future__ import annotations

import numpy as np
import pytest

import msmagic
from msmagic.parity_check import run_pair
from msmagic.parity_check.compare import compare_values

X = ("import torch\n"
     "x = torch.tensor([[1+2j, 3-1j, 0.5j], [0.5+0.25j, -2+1j, 4.0]], dtype=torch.complex128)\n")


def _agree(src, *names):
    run = run_pair(src)
    assert run.torch_error is None and run.ms_error is None, run.explain()
    for n in names:
        row = run.row(n)
        assert row.status == "match", run.explain()
        assert str(row.torch_dtype).split(".")[-1].lower() == str(row.ms_dtype).lower(), run.explain()
    return run


@pytest.mark.parametrize("call", [
    "torch.fft.fft(x)", "torch.fft.fft2(x)", "torch.fft.fftn(x)", "torch.fft.ifft(x)",
    "torch.fft.ifft2(x)", "torch.fft.ifftn(x)", "torch.fft.irfft(x)", "torch.fft.irfft2(x)",
    "torch.fft.hfft(x)", "torch.fft.hfft2(x)", "torch.fft.ifft(x, dim=0)",
])
def test_fft_of_complex128_keeps_double_precision(call):
    """complex128 in: complex128 (or float64) out on both sides, the same values."""
    run = _agree(X + f"y = {call}\n", "y")
    assert "complex" in str(run.row("y").torch_dtype) or "float64" in str(run.row("y").torch_dtype)
    assert "float32" not in str(run.row("y").ms_dtype).lower()


def test_ihfft_of_float64_is_complex128():
    """torch.fft.ihfft returns a lazily conjugated tensor: compared after resolving it."""
    _agree("import torch\nr = torch.tensor([1.0, -2.0, 0.5, 3.0], dtype=torch.float64)\n"
           "y = torch.fft.ihfft(r)\n", "y")


def test_real_and_mT_of_complex128():
    run = _agree(X + "re = x.real\nmt = x.mT\nre2 = torch.real(x)\n", "re", "mt", "re2")
    assert str(run.row("re").ms_dtype).lower() == "float64"


def test_conj_and_adjoint_values():
    """conj/adjoint: the imaginary parts are compared too (a sign error must show)."""
    _agree(X + "c1 = torch.conj(x)\nc2 = x.conj()\nad = torch.adjoint(x)\nad2 = x.adjoint()\n",
           "c1", "c2", "ad", "ad2")


def test_comparison_sees_imaginary_parts():
    """The comparison behind %%ms_parity and the harness: complex values are compared as
    complex numbers, so a conjugate compared with the original differs."""
    a = np.array([1 + 2j, 3 - 1j])
    assert compare_values("v", a, a.copy(), 1e-5, 1e-5).status == "match"
    assert compare_values("v", a, a.conj(), 1e-5, 1e-5).status == "differs"


def test_abs_of_fft_result_is_real():
    """MindSpore's abs of a complex tensor stays complex: the port takes its real part
    where it sees the operand is complex (LNA004)."""
    src = ("import torch\ns = torch.tensor([1.0, -2.0, 0.5, 3.0, 0.0, 1.5], dtype=torch.float64)\n"
           "mag = torch.abs(torch.fft.fft(s))\nm2 = torch.fft.rfft(s).abs().mean()\n"
           "m3 = torch.fft.fft2(s.reshape(2, 3)).abs().max()\n")
    run = _agree(src, "mag", "m2", "m3")
    assert str(run.row("m2").ms_dtype).lower() == "float64"
    assert "LNA004" in {e.rule_id for e in run.port.edits}


def test_abs_of_complex_variable_is_reported_by_parity():
    """abs of a complex tensor held in a variable: the port cannot see the dtype; the run
    reports it (complex128 against float64) instead of a silent match."""
    run = run_pair(X + "am = x.abs().mean()\n")
    row = run.row("am")
    assert row.status == "differs" and "complex128" in str(row.ms_dtype).lower(), run.explain()


def test_abs_of_real_tensor_is_unchanged():
    out = msmagic.port("import torch\ny = torch.abs(x)\nz = x.abs()\n").code
    assert "real" not in out and "mindspore.ops.abs(x)" in out and "x.abs()" in out


def test_signbit_of_negative_zero():
    """MindSpore's ops.signbit says False for -0.0; the port's comparison does not (LNA003)."""
    src = ("import torch\nz = torch.tensor([-0.0, 0.0, -1.5, 2.0, float('-inf')])\n"
           "s = torch.signbit(z)\nt = z.signbit()\nu = torch.signbit(z.double() * 1)\n"
           "def neg_zero(v):\n    return v.signbit()\nw = neg_zero(-z)\n")
    run = _agree(src, "s", "t", "u", "w")
    assert "signbit" not in run.port.code
