"""In-place updates where the tensor's memory is shared (API003): the NumPy array
``torch.from_numpy`` wrapped, and the element a ``for`` loop hands out. MindSpore 2.10's
in-place methods (``t.mul_(3)``) return a new tensor on CPU and leave ``t`` as it was, so
the port rebinds the name (``t = t.mul(3)``); the other holder then keeps the old values,
and the line is flagged rather than passed silently."""

import numpy as np
import pytest

import msmagic
from msmagic.parity_check import run_pair
from tests.rules.support import src


def test_mindspore_in_place_methods_leave_the_receiver_as_it_was():
    # the fact the rebinding rests on; if a MindSpore release fixes it, this fails
    import mindspore

    t = mindspore.Tensor(np.ones(2, np.float32))
    out = t.mul_(3)
    assert out.asnumpy().tolist() == [3.0, 3.0] and t.asnumpy().tolist() == [1.0, 1.0]


def test_an_in_place_update_of_a_tensor_from_numpy_is_flagged_and_the_tensor_is_right():
    # udacity intro part 1: "Numpy array matches new values from Tensor"
    run = run_pair(src("""
        import numpy as np
        import torch
        a = np.arange(12.0).reshape(4, 3)
        b = torch.from_numpy(a)
        b.mul_(2)
        seen = a.copy()
    """))
    assert run.torch_error is None and run.ms_error is None, run.explain()
    assert [(f.line, f.rule_id) for f in run.port.unsupported] == [(5, "API003")]
    assert "shares its memory with the NumPy array" in run.port.unsupported[0].reason
    assert run.agree("b"), run.explain()  # the tensor itself is right
    assert not np.array_equal(run.ms_ns["seen"], run.torch_ns["seen"])  # the array is not: flagged


@pytest.mark.parametrize("where", ["top level", "function"])
def test_an_in_place_update_of_a_loop_element_is_flagged(where):
    body = "for t in ts:\n    t.mul_(3)\n"
    code = ("import torch\nts = [torch.ones(2), torch.arange(3.0)]\n"
            + (body if where == "top level" else
               "def bump(ts):\n" + "".join("    " + line + "\n" for line in body.splitlines()) + "bump(ts)\n"))
    r = msmagic.port(code)
    line = 4 if where == "top level" else 5
    calls = [(6, "GEN004")] if where == "function" else []  # the call of the flagged function
    assert [(f.line, f.rule_id) for f in r.unsupported] == [(line, "API003"), *calls], r.unsupported
    assert "element of the container the loop iterates" in r.unsupported[0].reason
    assert "t = t.mul(3)  # msmagic: API003" in r.code


def test_a_plain_in_place_update_at_top_level_is_rebound_silently():
    run = run_pair("import torch\nz = torch.ones(2)\nz.add_(1)\nfor i in range(2):\n    z.mul_(2)\n")
    assert not run.port.unsupported and "z = z.add(1)" in run.port.code
    assert run.agree("z"), run.explain()
