"""How parity's tolerance treats float32 rounding: an element is compared relative to at
least its tensor's RMS magnitude (a sum of products rounds in proportion to what it
summed), integers and lone numbers element by element."""

import numpy as np
import pytest

from msmagic.parity_check.compare import compare_values


def _status(a, b):
    return compare_values("v", np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-5).status


def test_an_element_that_cancels_is_compared_at_its_tensors_scale():
    a = np.array([120.0, -95.0, 0.001, 80.0], dtype=np.float32)
    assert _status(a, a + np.array([0, 0, 2e-4, 0], dtype=np.float32)) == "match"
    # an error at the tensor's own scale still shows
    assert _status(a, a + np.array([0, 0, 5e-2, 0], dtype=np.float32)) == "differs"
    assert _status(a, a * 1.001) == "differs"


def test_lone_numbers_and_integers_are_compared_element_by_element():
    assert _status(np.float32(0.001), np.float32(0.0012)) == "differs"
    assert _status(np.array([1_000_000, 0, 3]), np.array([1_000_000, 1, 3])) == "differs"  # no RMS slack
    assert _status(np.array([1_000_000, 0, 3]), np.array([1_000_000, 0, 3])) == "match"
    assert _status(np.array([np.inf, 1.0, np.nan]), np.array([np.inf, 1.0, np.nan])) == "match"


def test_a_float32_matmul_chain_matches_and_a_wrong_weight_does_not():
    """jcjohnson's two-layer net: x @ w1 @ w2 with 1000 inputs, computed by both
    frameworks: some output elements cancel to near 0 and differ by more than 1e-5 of
    themselves; a weight off by 0.1% is still reported."""
    torch = pytest.importorskip("torch")
    ms = pytest.importorskip("mindspore")
    rng = np.random.default_rng(0)
    x, w1, w2 = (rng.standard_normal(s).astype(np.float32) for s in ((64, 1000), (1000, 100), (100, 10)))
    t = (torch.tensor(x).mm(torch.tensor(w1)).clamp(min=0).mm(torch.tensor(w2))).numpy()
    m = ms.ops.matmul(ms.ops.clamp(ms.ops.matmul(ms.Tensor(x), ms.Tensor(w1)), min=0), ms.Tensor(w2)).asnumpy()
    elementwise = np.abs(t - m) <= 1e-5 + 1e-5 * np.abs(t)
    assert _status(t, m) == "match", (np.abs(t - m).max(), elementwise.all())
    bad = ms.ops.matmul(ms.ops.clamp(ms.ops.matmul(ms.Tensor(x), ms.Tensor(w1 * 1.001)), min=0),
                        ms.Tensor(w2)).asnumpy()
    assert _status(t, bad) == "differs"
