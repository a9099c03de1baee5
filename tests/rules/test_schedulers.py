"""Learning-rate schedulers: the ported cell runs on both sides and the per-epoch rates
(read back through get_last_lr() and param_groups[0]["lr"]) agree with PyTorch's to
float32 rounding (rtol 1e-6); a short training loop with a scheduler ends with the same
weights and losses."""

import ast

import numpy as np
import pytest

import msmagic
from msmagic.parity_check import run_pair
from tests.rules.support import findings, rules, src

HEAD = src("""
    import torch
    import torch.nn as nn
    from torch.optim import lr_scheduler

    model = nn.Linear(3, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
""")
LOOP = src("""
    rates, reads = [], []
    for epoch in range(EPOCHS):
        scheduler.step()
        rates.append(scheduler.get_last_lr()[0])
        reads.append(optimizer.param_groups[0]["lr"])
    start_lr = rates[0]
""")
TOL = dict(rtol=1e-6, atol=1e-12)


def _rates(line, epochs=8, head=HEAD):
    run = run_pair(head + line + "\nfirst = optimizer.param_groups[0]['lr']\n"
                   + LOOP.replace("EPOCHS", str(epochs)), **TOL)
    assert run.torch_error is None and run.ms_error is None, run.explain()
    assert run.agree("first", "rates", "reads"), run.explain()
    # the schedule really changed the rate (a constant sequence would prove nothing)
    assert len(set(run.torch_ns["rates"])) > 1
    assert "torch" not in run.port.code and "lr_scheduler" not in run.port.code
    ast.parse(run.port.code)
    return run


@pytest.mark.parametrize("line, text, rule", [
    ("scheduler = lr_scheduler.StepLR(optimizer, step_size=3, gamma=0.5)",
     "step_size=3, gamma=0.5: lr * gamma ** (epoch // step_size)", "SCH002"),
    ("scheduler = lr_scheduler.StepLR(optimizer, 2)",  # positional, default gamma 0.1
     "step_size=2, gamma=0.1:", "SCH002"),
    ("scheduler = lr_scheduler.MultiStepLR(optimizer, milestones=[2, 5], gamma=0.3)",
     "milestones=[2, 5], gamma=0.3: lr * gamma ** sum(epoch >= m for m in milestones)", "SCH002"),
    ("scheduler = lr_scheduler.MultiStepLR(optimizer, [1, 1, 4])",  # repeated milestone: two decays
     "milestones=[1, 1, 4], gamma=0.1", "SCH002"),
    ("scheduler = lr_scheduler.ExponentialLR(optimizer, 0.8)", "gamma=0.8: lr * gamma ** epoch", "SCH002"),
    ("scheduler = lr_scheduler.CosineAnnealingLR(optimizer, T_max=3)",  # past T_max: climbs back
     "T_max=3, eta_min=0.0:", "SCH003"),
    ("scheduler = lr_scheduler.CosineAnnealingLR(optimizer, 4, eta_min=0.02)",
     "T_max=4, eta_min=0.02: eta_min + (lr - eta_min) * (1 + math.cos(math.pi * epoch / T_max)) / 2",
     "SCH003"),
    ("scheduler = lr_scheduler.LambdaLR(optimizer, lr_lambda=lambda e: 0.9 ** e + e // 3)",
     "lr_lambda=lambda e: 0.9 ** e + e // 3: lr * lr_lambda(epoch)", "SCH004"),
    ("scheduler = lr_scheduler.ConstantLR(optimizer)", "factor=1.0 / 3, total_iters=5:", "SCH008"),
    ("scheduler = lr_scheduler.ConstantLR(optimizer, 0.5, 2)",
     "factor=0.5, total_iters=2: lr * (factor if epoch < total_iters else 1.0)", "SCH008"),
    ("scheduler = lr_scheduler.LinearLR(optimizer, start_factor=0.2, total_iters=4)",
     "start_factor=0.2, end_factor=1.0, total_iters=4:", "SCH008"),
    ("scheduler = lr_scheduler.LinearLR(optimizer, 1.0, 0.1, 3)", "start_factor=1.0, end_factor=0.1", "SCH008"),
    ("scheduler = lr_scheduler.PolynomialLR(optimizer, total_iters=6, power=2.0)",
     "total_iters=6, power=2.0: lr * (1.0 - min(epoch, total_iters) / total_iters) ** power", "SCH008"),
    ("scheduler = lr_scheduler.MultiplicativeLR(optimizer, lambda e: 0.95 if e % 2 else 0.8)",
     "lr * math.prod(lr_lambda(k) for k in range(1, epoch + 1))", "SCH009"),
    ("scheduler = lr_scheduler.CosineAnnealingWarmRestarts(optimizer, T_0=3, eta_min=0.01)",
     "math.cos(math.pi * (epoch % T_0) / T_0)", "SCH010"),
    ("scheduler = lr_scheduler.CosineAnnealingWarmRestarts(optimizer, 2, 2)", "T_mult ** n", "SCH010"),
    ("scheduler = lr_scheduler.CosineAnnealingWarmRestarts(optimizer, 1, T_mult=3)", "T_mult ** n", "SCH010"),
])
def test_rate_sequence_matches(line, text, rule):
    run = _rates(line, epochs=40 if "WarmRestarts" in line else 8)
    assert text in run.port.code
    assert {rule, "SCH001", "SCH005"} <= rules(run)
    assert "scheduler.step()" not in run.port.code
    assert "ops.assign(optimizer.learning_rate, next(scheduler))" in run.port.code


def test_lambda_factor_at_epoch_zero_applies_immediately():
    # PyTorch sets lr * lr_lambda(0) when the scheduler is built: here rate 0 at first
    run = _rates("lbd = lambda epoch: epoch // 2\n"
                 "scheduler = lr_scheduler.LambdaLR(optimizer, lbd)")
    assert run.torch_ns["first"] == 0.0 and run.ms_ns["first"] == 0.0
    lines = run.port.code.splitlines()
    at = next(i for i, l in enumerate(lines) if l.startswith("scheduler = map("))
    assert lines[at + 1] == "mindspore.ops.assign(optimizer.learning_rate, next(scheduler))"


def test_training_loop_with_scheduler_gives_same_weights():
    """Per-epoch StepLR around an SGD+momentum loop. The scheduler lines come from the
    port; the gradient step is written by hand (the training-loop rewrite is another
    rule group's), so the MindSpore side is passed explicitly as ms_src."""
    torch_src = src("""
        import torch
        import torch.nn as nn
        model = nn.Linear(3, 1)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.5)
        x = torch.arange(12.).reshape(4, 3) / 10
        y = torch.ones(4, 1)
        losses = []
        for epoch in range(4):
            for i in range(2):
                optimizer.zero_grad()
                loss = ((model(x) - y) ** 2).mean()
                loss.backward()
                optimizer.step()
                losses.append(loss.item())
            scheduler.step()
        lr = optimizer.param_groups[0]["lr"]
    """)
    ported = msmagic.port(torch_src).code
    sched = next(l for l in ported.splitlines() if l.startswith("scheduler = "))
    step = "    mindspore.ops.assign(optimizer.learning_rate, next(scheduler))"
    assert step in ported.splitlines() and "lr = float(optimizer.learning_rate)" in ported
    ms_src = src("""
        import mindspore, itertools
        import mindspore.nn as nn
        model = nn.Dense(3, 1)
        optimizer = mindspore.nn.SGD(model.trainable_params(), learning_rate=0.1, momentum=0.9)
        SCHED; mindspore.ops.assign(optimizer.learning_rate, next(scheduler))
        x = mindspore.ops.arange(12.).reshape(4, 3) / 10
        y = mindspore.ops.ones((4, 1))
        losses = []
        for epoch in range(4):
            for i in range(2):
                grad_fn = mindspore.value_and_grad(lambda: ((model(x) - y) ** 2).mean(), None, optimizer.parameters)
                loss, grads = grad_fn()
                optimizer(grads)
                losses.append(loss.item())
            STEP
        lr = float(optimizer.learning_rate)
    """).replace("SCHED", sched).replace("    STEP", step)
    run = run_pair(torch_src, ms_src=ms_src, rtol=1e-5, atol=1e-6)
    assert run.torch_error is None and run.ms_error is None, run.explain()
    assert run.agree("losses", "lr", "model.weight", "model.bias"), run.explain()
    assert run.torch_ns["lr"] == pytest.approx(0.1 * 0.5 ** 4)
    tl = np.array(run.torch_ns["losses"])
    assert not np.allclose(tl[2:4] - tl[3:5], tl[4:6] - tl[5:7])  # the rate did change


@pytest.mark.parametrize("opt", ["Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam",
                                 "ASGD", "Rprop"])
def test_experimental_optimizer_rate_is_param_groups_lr(opt):
    head = HEAD.replace("torch.optim.SGD(model.parameters(), lr=0.1)", f"torch.optim.{opt}(model.parameters(), lr=0.1)")
    run = _rates("scheduler = lr_scheduler.LinearLR(optimizer, start_factor=0.25, total_iters=4)", head=head)
    assert 'ops.assign(optimizer.param_groups[0]["lr"], next(scheduler))' in run.port.code
    assert 'lr=float(optimizer.param_groups[0]["lr"])' in run.port.code
    assert "SCH007" in rules(run) and "learning_rate" not in run.port.code


@pytest.mark.parametrize("opt", ["Adam", "AdamW", "NAdam", "ASGD", "Adadelta"])
def test_training_with_experimental_optimizer_and_scheduler(opt):
    """The compiled experimental update reads the assigned rate: same weights as PyTorch."""
    code = src(f"""
        import torch
        import torch.nn as nn
        model = nn.Linear(3, 1)
        optimizer = torch.optim.{opt}(model.parameters(), lr=0.1)
        scheduler = torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma=0.5)
        x = torch.arange(12.).reshape(4, 3) / 10
        y = torch.ones(4, 1)
        def train(epochs):
            losses = []
            for epoch in range(epochs):
                optimizer.zero_grad()
                loss = ((model(x) - y) ** 2).mean()
                loss.backward()
                optimizer.step()
                scheduler.step()
                losses.append(loss.item())
            return losses
        losses = train(5)
        lr = optimizer.param_groups[0]["lr"]
    """)
    run = run_pair(code, rtol=1e-5, atol=1e-6)
    assert run.torch_error is None and run.ms_error is None, run.explain()
    assert run.agree("losses", "lr", "model.weight", "model.bias"), run.explain()


def test_experimental_optimizer_with_groups_is_flagged():
    res = _flagged("opt2 = torch.optim.AdamW([{'params': model.weight}, {'params': model.bias, 'lr': 0.01}], lr=0.1)\n"
                   "scheduler = lr_scheduler.StepLR(opt2, 2)\n", "SCH002")
    assert "StepLR" in res.code


@pytest.mark.parametrize("line", [
    "scheduler = lr_scheduler.ReduceLROnPlateau(optimizer, 'min')",
    "adam = torch.optim.Adam(model.parameters())\nscheduler = lr_scheduler.CyclicLR(adam, 0.01, 0.1)",
    "adam = torch.optim.Adam(model.parameters())\nscheduler = lr_scheduler.OneCycleLR(adam, max_lr=0.1, total_steps=100)",
    "scheduler = lr_scheduler.OneCycleLR(optimizer, max_lr=0.1, total_steps=100, cycle_momentum=flag)",
    "scheduler = lr_scheduler.SequentialLR(optimizer, [a, b], milestones=[2])",
    "scheduler = lr_scheduler.ChainedScheduler([a, b])",
])
def test_unported_schedulers_are_flagged(line):
    _flagged(line + "\n", "SCH011")


def test_warm_restarts_non_literal_t_mult_is_flagged():
    _flagged("scheduler = lr_scheduler.CosineAnnealingWarmRestarts(optimizer, 2, T_mult=m)\n", "SCH010")
    _flagged("scheduler = lr_scheduler.MultiplicativeLR(optimizer, [lambda e: 0.9])\n", "SCH009")


# ----------------------------------------------------------------------------- findings


def _flagged(body, rule):
    res = msmagic.port(HEAD + body)
    assert rule in {f.rule_id for f in res.unsupported}, res.unsupported
    assert f"# msmagic: {rule}" in res.code
    ast.parse(res.code)
    return res


def test_scheduler_from_another_cell_is_flagged():
    res = _flagged("scheduler.step()\nlr = scheduler.get_last_lr()\n", "SCH001")  # not guessed
    assert "scheduler.step()" in res.code and "scheduler.get_last_lr()" in res.code


def test_step_without_visible_construction_is_flagged():
    res = _flagged("def make():\n    return lr_scheduler.StepLR(optimizer, 2)\n"
                   "s = make()\n", "SCH002")
    assert "StepLR" in res.code


def test_resuming_and_list_lambdas_are_flagged():
    _flagged("scheduler = lr_scheduler.StepLR(optimizer, 2, last_epoch=4)\n", "SCH002")
    _flagged("scheduler = lr_scheduler.LambdaLR(optimizer, [lambda e: 1.0])\n", "SCH004")
    _flagged("scheduler = lr_scheduler.StepLR(optimizer, 2)\nscheduler.step(3)\n", "SCH001")


def test_param_group_writes_and_weight_decay_schedule_are_flagged():
    res = _flagged('optimizer.param_groups[0]["lr"] = 0.01\n', "SCH006")
    assert 'optimizer.param_groups[0]["lr"] = 0.01' in res.code
    res = _flagged('for g in optimizer.param_groups:\n    g["weight_decay"] *= 0.1\n', "SCH006")
    run = run_pair(HEAD + 'lr2 = optimizer.param_groups[0]["lr"] * 2\n', **TOL)
    assert run.agree("lr2") and "SCH005" in rules(run) and not findings(run), run.explain()


def test_port_is_idempotent():
    res = msmagic.port(HEAD + "scheduler = lr_scheduler.StepLR(optimizer, 2)\n" + LOOP.replace("EPOCHS", "3"))
    again = msmagic.port(res.code)
    assert again.code == res.code and not again.edits
