"""TRN008, executed: a forward pass that may skip a layer, trained by an optimizer that
moves parameters whose gradient is zero. PyTorch skips a parameter without a gradient,
MindSpore steps it with zeros: the port is flagged at the step, and the flag is true
(the trained weights do differ when the layer is skipped). Where nothing can differ
(plain SGD, a loop over every layer) nothing is flagged and the weights agree."""

import numpy as np
import pytest

import msmagic
from msmagic.engine.session import PortSession
from msmagic.parity_check import ms_name_for, run_pair, to_numpy
from tests.rules.support import src

NET = src("""
    import torch
    from torch import optim

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.first = torch.nn.Linear(4, 8)
            self.middle = torch.nn.Linear(8, 8)
            self.act = torch.nn.ReLU()
            self.last = torch.nn.Linear(8, 1)

        def forward(self, x, depth):
            h = self.act(self.first(x))
            for _ in range(depth):
                h = self.act(self.middle(h))
            return self.last(h)

    torch.manual_seed(0)
    model = Net()
    x = torch.randn(16, 4)
    y = torch.randn(16, 1)
""")

LOOP = src("""
    for step in range(4):
        loss = ((model(x, DEPTH) - y) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    trained = model.middle.weight * 1.0
""")


def _middle_differs(run) -> float:
    want = to_numpy(run.torch_ns["model"].middle.weight)
    params = {p.name: p for p in run.ms_ns["model"].get_parameters()}
    got = params[ms_name_for(run.torch_ns["model"], "middle.weight")].asnumpy()
    return float(np.abs(got - want).max())


@pytest.mark.parametrize("optimizer", [
    "optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)",
    "optimizer = optim.Adam(params=model.parameters(), lr=0.01)",
    "optimizer = torch.optim.SGD(model.parameters(), 0.05, 0.9)",
    "optimizer = torch.optim.SGD(model.parameters(), lr=0.05, weight_decay=0.1)",
])
def test_a_stateful_optimizer_over_a_layer_the_forward_may_skip_is_flagged_and_differs(optimizer):
    # the middle layer runs in the first iteration only: afterwards PyTorch leaves it
    # alone, MindSpore moves it by its momentum / moments / decay
    source = NET + optimizer + "\n" + LOOP.replace("DEPTH", "1 if step == 0 else 0")
    result = msmagic.port(source)
    flagged = [f for f in result.unsupported if f.rule_id == "TRN008"]
    assert len(flagged) == 1 and "self.middle" in flagged[0].reason and "self.first" not in flagged[0].reason
    assert "self.act" not in flagged[0].reason  # a ReLU has no parameters
    run = run_pair(source, rtol=1e-4, atol=1e-5)
    assert run.torch_error is None and run.ms_error is None, run.explain()
    assert _middle_differs(run) > 1e-4  # what the finding says happens


@pytest.mark.parametrize("case", ["plain SGD", "every layer called"])
def test_nothing_is_flagged_where_no_parameter_can_be_left_out(case):
    if case == "plain SGD":
        source = NET + "optimizer = torch.optim.SGD(model.parameters(), lr=0.05)\n" + \
            LOOP.replace("DEPTH", "1 if step == 0 else 0")
    else:
        source = NET.replace("for _ in range(depth):", "for _ in range(2):") + \
            "optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)\n" + LOOP.replace("DEPTH", "0")
    result = msmagic.port(source)
    assert "TRN008" not in {f.rule_id for f in result.unsupported}
    run = run_pair(source, rtol=1e-4, atol=1e-5)
    assert run.torch_error is None and run.ms_error is None, run.explain()
    assert run.agree("trained", "loss"), run.explain()
    assert _middle_differs(run) < 1e-5


def test_the_model_and_optimizer_of_an_earlier_cell_are_found():
    session = PortSession()
    msmagic.port(NET + "optimizer = torch.optim.Adam(model.parameters(), lr=0.01)\n", session=session)
    result = msmagic.port(LOOP.replace("DEPTH", "step % 2"), session=session)
    assert "TRN008" in {f.rule_id for f in result.unsupported}


TRAIN_FUNCTION = src("""
    def train(net, opt, steps):
        for step in range(steps):
            loss = ((net(x, DEPTH) - y) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
""")


@pytest.mark.parametrize("later_cell", [False, True])
def test_an_optimizer_a_function_receives_is_flagged_for_what_it_may_be(later_cell):
    """``def train(net, opt, steps)``: where the optimizer was built is not known inside the
    function, but the model its forward statements call may skip a layer: flagged at the
    step, saying what it depends on; with momentum at the call site the weights differ."""
    function = TRAIN_FUNCTION.replace("DEPTH", "1 if step == 0 else 0")
    call = ("optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)\n"
            "train(model, optimizer, 4)\ntrained = model.middle.weight * 1.0\n")
    session = PortSession()
    if later_cell:
        msmagic.port(NET + function, session=session)
        result = msmagic.port(call, session=session)
        source = [NET + function, call]
    else:
        result = msmagic.port(NET + function + call, session=session)
        source = NET + function + call
    # a function of an earlier cell is ported again for what the call passes it
    findings = result.unsupported + [f for rev in result.revised for f in rev.result.unsupported]
    flagged = [f for f in findings if f.rule_id == "TRN008"]
    assert len(flagged) == 1 and "self.middle" in flagged[0].reason, findings
    assert "where opt was built is not known here" in flagged[0].reason
    if later_cell:
        return  # the execution is the same as in one cell
    run = run_pair(source, rtol=1e-4, atol=1e-5)
    assert run.torch_error is None and run.ms_error is None, run.explain()
    assert _middle_differs(run) > 1e-4  # what the finding says happens


def test_a_received_optimizer_over_a_forward_that_calls_every_layer_is_not_flagged():
    source = (NET.replace("for _ in range(depth):", "for _ in range(2):") + TRAIN_FUNCTION.replace("DEPTH", "0")
              + "optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)\n"
              + "train(model, optimizer, 4)\ntrained = model.middle.weight * 1.0\n")
    result = msmagic.port(source)
    assert "TRN008" not in {f.rule_id for f in result.unsupported}
    run = run_pair(source, rtol=1e-4, atol=1e-5)
    assert run.torch_error is None and run.ms_error is None, run.explain()
    assert run.agree("trained"), run.explain()
