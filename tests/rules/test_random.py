"""Seeds and generators: set_seed makes the ported cell reproducible on its own, Generator
ports, in-place random fills on tensors are flagged."""

import libcst as cst
import numpy as np
import pytest

import msmagic
from msmagic.parity_check import run_pair, to_numpy

INIT_CELL = """import torch
import torch.nn as nn
torch.manual_seed(123)
layer = nn.Linear(64, 32)
nn.init.normal_(layer.weight, std=0.5)
nn.init.uniform_(layer.bias, -1.0, 1.0)
"""


def _ms_run(code):
    ns = {"__name__": "__seeded__"}
    exec(compile(code, "<mindspore>", "exec"), ns)
    return ns


@pytest.mark.parametrize("seed_call", ["torch.manual_seed(123)", "torch.random.manual_seed(123)",
                                       "torch.cuda.manual_seed(123)", "torch.cuda.manual_seed_all(123)"])
def test_set_seed_makes_ported_cell_reproducible(seed_call):
    src = INIT_CELL.replace("torch.manual_seed(123)", seed_call)
    result = msmagic.port(src)
    assert "mindspore.set_seed(123)" in result.code
    rule = "RNG002" if "cuda" in seed_call else "RNG001"
    assert rule in [e.rule_id for e in result.edits] and not result.unsupported
    first, second = _ms_run(result.code), _ms_run(result.code)
    for attr in ("weight", "bias"):
        a, b = to_numpy(getattr(first["layer"], attr)), to_numpy(getattr(second["layer"], attr))
        np.testing.assert_array_equal(a, b)
    # and the seed matters: another seed gives other numbers
    third = _ms_run(result.code.replace("set_seed(123)", "set_seed(124)"))
    assert not np.array_equal(to_numpy(first["layer"].weight), to_numpy(third["layer"].weight))


def test_set_seed_also_repeats_ops_random_draws():
    import mindspore

    code = msmagic.port("import torch\ntorch.manual_seed(5)\n").code
    draws = []
    for _ in range(2):
        ns = _ms_run(code)
        draws.append(mindspore.ops.randn(4).asnumpy())
        assert ns["mindspore"] is mindspore
    np.testing.assert_array_equal(draws[0], draws[1])


def test_manual_seed_parity_run():
    run = run_pair("import torch\nseed = 7\ntorch.manual_seed(seed)\n")
    assert run.torch_error is None and run.ms_error is None and run.agree("seed"), run.explain()
    assert "mindspore.set_seed(seed)" in run.port.code


def test_manual_seed_value_of_a_computed_seed_is_flagged():
    result = msmagic.port("import torch\ng = torch.manual_seed(int('3'))\n")
    assert [f.rule_id for f in result.unsupported] == ["RNG001"]
    assert "g = mindspore.set_seed(int('3'))  # msmagic: RNG001" in result.code


def test_generator_ports_and_behaves_like_torch():
    src = ("import torch\n"
           "g = torch.Generator(device='cpu')\n"
           "same = g.manual_seed(11) is g\n"
           "start = g.initial_seed()\n"
           "h = torch.Generator().manual_seed(3)\n"
           "h_seed = h.initial_seed()\n")
    run = run_pair(src)
    assert run.torch_error is None and run.ms_error is None, run.explain()
    assert run.agree("same", "start", "h_seed"), run.explain()
    assert "g = mindspore.Generator()" in run.port.code and "device" not in run.port.code
    assert {"RNG003"} <= {e.rule_id for e in run.port.edits}


@pytest.mark.parametrize("call", ["x.random_()", "x.random_(0, 10)", "x.exponential_()", "x.bernoulli_(0.5)",
                                  "y = x.bernoulli_(0.25)"])
def test_inplace_random_fills_are_flagged(call):
    src = f"import torch\nx = torch.zeros(3)\n{call}\n"
    result = msmagic.port(src)
    found = [f for f in result.unsupported if f.rule_id == "RNG004"]
    assert len(found) == 1 and found[0].line == 3, result.unsupported
    out_line = result.code.splitlines()[found[0].out_line - 1]
    assert out_line.startswith(call) and "# msmagic: RNG004" in out_line
    cst.parse_module(result.code)


def test_inplace_random_really_fails_on_cpu():
    """Why RNG004 flags instead of porting (and TNS008 ports normal_/uniform_ through
    copy_): the 2.10 methods exist but have no CPU kernel."""
    import mindspore

    for name, args in (("random_", (0, 5)), ("uniform_", ()), ("normal_", ())):
        x = mindspore.Tensor(np.zeros(3, np.float32))
        with pytest.raises(Exception):
            getattr(x, name)(*args).asnumpy()


def test_port_is_idempotent():
    once = msmagic.port(INIT_CELL + "g = torch.Generator()\n").code
    assert msmagic.port(once).code == once


def test_mindspore_manual_seed_alone_does_not_repeat_classic_ops():
    """Why RNG001 targets set_seed, not the mindspore.manual_seed named in the 2.4 table."""
    import mindspore

    mindspore.manual_seed(9)
    a = mindspore.ops.randn(4).asnumpy()
    mindspore.manual_seed(9)
    b = mindspore.ops.randn(4).asnumpy()
    assert not np.array_equal(a, b)


def test_manual_seed_value_is_mindsporess_default_generator():
    """``g = torch.manual_seed(s)`` gives PyTorch's default Generator: the port seeds
    MindSpore and gives MindSpore's default Generator, seeded the same way."""
    import mindspore

    result = msmagic.port("import torch\nseed = 3\ng = torch.manual_seed(seed)\nstart = g.initial_seed()\n")
    assert "g = (mindspore.set_seed(seed) or mindspore.manual_seed(seed))" in result.code
    assert not result.unsupported
    ns = _ms_run(result.code)
    assert isinstance(ns["g"], mindspore.Generator) and ns["start"] == 3
    run = run_pair("import torch\nseed = 3\ng = torch.manual_seed(seed)\nstart = g.initial_seed()\n")
    assert run.torch_error is None and run.ms_error is None and run.agree("start"), run.explain()
