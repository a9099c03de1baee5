"""Executed checks of the misc-breadth ports: each PyTorch snippet is ported, both run,
and the values agree (per-step learning rates and the trained parameters for
OneCycleLR/CyclicLR, window values, assert_close pass/fail outcomes, grad switches under
their torch.autograd spellings, torch.cuda calls on a CPU run)."""

import pytest

import msmagic

from msmagic.parity_check import run_pair
from tests.rules.support import src

TRAIN = src("""
    import torch
    import torch.nn as nn
    from torch.optim import lr_scheduler

    X = torch.linspace(-1, 1, 12).reshape(6, 2)
    y = X.sum(1, keepdim=True) * 0.5 + 0.25
    model = nn.Linear(2, 1)
    optimizer = OPTIMIZER
    scheduler = SCHEDULER

    def train(steps):
        losses, rates = [], []
        for step in range(steps):
            optimizer.zero_grad()
            loss = ((model(X) - y) ** 2).mean()
            loss.backward()
            optimizer.step()
            scheduler.step()
            losses.append(loss.item())
            rates.append(optimizer.param_groups[0]["lr"])
        return losses, rates

    losses, rates = train(STEPS)
""")


@pytest.mark.parametrize("optimizer,scheduler,steps", [
    ("torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)",
     "lr_scheduler.OneCycleLR(optimizer, max_lr=0.3, total_steps=12, cycle_momentum=False)", 12),
    ("torch.optim.AdamW(model.parameters(), lr=0.01)",
     "lr_scheduler.OneCycleLR(optimizer, 0.05, epochs=2, steps_per_epoch=5, anneal_strategy='linear', "
     "three_phase=True, cycle_momentum=False)", 10),
    ("torch.optim.SGD(model.parameters(), lr=0.1)",
     "lr_scheduler.CyclicLR(optimizer, base_lr=0.01, max_lr=0.2, step_size_up=2, step_size_down=3, "
     "mode='triangular2', cycle_momentum=False)", 13),
    # the default cycle_momentum=True: SGD's momentum cycles too (from 0 here: PyTorch sets 0.95)
    ("torch.optim.SGD(model.parameters(), lr=0.1)",
     "lr_scheduler.OneCycleLR(optimizer, max_lr=0.3, total_steps=12)", 12),
    ("torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.5, nesterov=True)",
     "lr_scheduler.CyclicLR(optimizer, 0.01, 0.2, step_size_up=3, mode='triangular2')", 13),
])
def test_per_step_schedulers_train_alike(optimizer, scheduler, steps):
    code = TRAIN.replace("OPTIMIZER", optimizer).replace("SCHEDULER", scheduler).replace("STEPS", str(steps))
    run = run_pair(code, rtol=1e-5, atol=1e-6)
    assert run.torch_error is None and run.ms_error is None, run.explain()
    assert run.agree("losses", "rates", "model.weight", "model.bias"), run.explain()
    assert len(set(run.torch_ns["rates"])) > 3  # the schedule really moved the rate


def test_one_cycle_past_total_steps_raises_too():
    code = TRAIN.replace("OPTIMIZER", "torch.optim.SGD(model.parameters(), lr=0.1)").replace(
        "SCHEDULER", "lr_scheduler.OneCycleLR(optimizer, max_lr=0.3, total_steps=4, cycle_momentum=False)"
    ).replace("STEPS", "6")
    with pytest.raises(ValueError):
        exec(compile(code, "<torch>", "exec"), {})
    ported = msmagic.port(code).code
    with pytest.raises(ValueError, match="past total_steps"):
        exec(compile(ported, "<mindspore>", "exec"), {"__name__": "__main__"})


def test_windows_assert_close_and_switches():
    run = run_pair(src("""
        import torch
        from torch.signal import windows

        def frames_windowed(frames):
            return frames * windows.hann(frames.shape[-1], sym=False)

        w = frames_windowed(torch.ones(2, 8))
        g = windows.gaussian(9, std=2.0)
        b = torch.signal.windows.blackman(6, dtype=torch.float64)

        def outcome(a, e, rtol=None, atol=None):
            try:
                torch.testing.assert_close(a, e, rtol=rtol, atol=atol)
                return "pass"
            except AssertionError:
                return "fail"

        x = torch.tensor([1.0, 2.0, 3.0])
        close = outcome(x, x + 1e-6)
        far = outcome(x, x + 1e-4)
        loose = outcome(x, x + 1e-3, rtol=0.0, atol=1e-2)

        v = torch.tensor([1.0, 2.0], requires_grad=True)
        with torch.autograd.grad_mode.set_grad_enabled(True):
            s = (v ** 2).sum()
        s.backward()
        grad = v.grad
        used = torch.cuda.memory_allocated()
        torch.cuda.empty_cache()
        workers = min(1, torch.multiprocessing.cpu_count())
    """))
    assert run.torch_error is None and run.ms_error is None, run.explain()
    assert run.agree("w", "g", "b", "grad", "used", "workers"), run.explain()
    outcomes = [(run.torch_ns[n], run.ms_ns[n]) for n in ("close", "far", "loose")]
    assert outcomes == [("pass", "pass"), ("fail", "fail"), ("pass", "pass")]
