"""Top-level loops run iteration by iteration: the MindSpore side starts each iteration
from PyTorch's values of what the iteration before handed on, so float32 rounding does
not compound; a real difference is still found, at the iteration it began."""

import textwrap

import pytest

import msmagic
from msmagic.parity_check import MATCH, loops

pytest.importorskip("mindspore")
torch = pytest.importorskip("torch")


def src(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def run(cell, **kw):
    kw.setdefault("user_ns", {"__name__": "__main__"})
    kw.setdefault("shadow", {"__name__": "__shadow__"})
    return msmagic.parity(cell, progress=None, **kw)


# a chaotic map: the matmul's float32 rounding differs between the frameworks by ~1e-8
# per iteration, and sixty iterations amplify that to differences of order 1
SETUP = src("""
    import torch
    torch.manual_seed(0)
    M = torch.rand(64, 64)
    M = M / M.sum(1, keepdim=True)
    x = torch.rand(64)
""")
CHAOS = src("""
    for step in range(60):
        y = x @ M
        x = 3.9 * y * (1 - y)
""")


def rows(report):
    return {r.name: r for r in report.rows}


def test_compounding_rounding_is_not_reported_as_a_divergence():
    report = run(SETUP + CHAOS)
    got = rows(report)
    assert got["x"].status == MATCH and got["y"].status == MATCH, report.rows
    note = next(n for n in report.notes if "the loop on line 6" in n)
    assert "each of its 60 iterations from PyTorch's values of x" in note


def test_without_the_lockstep_the_same_loop_differs(monkeypatch):
    # the check above can fail: run free, the two sides end far apart
    monkeypatch.setattr(loops, "instrument", lambda *a: None)
    report = run(SETUP + CHAOS)
    assert rows(report)["x"].status != MATCH and rows(report)["x"].max_abs > 1e-2
    assert not any("the loop on line" in n for n in report.notes)


def test_a_loop_in_a_later_cell_with_break_continue_and_a_running_sum():
    user, shadow = {"__name__": "__main__"}, {"__name__": "__shadow__"}
    run(SETUP, user_ns=user, shadow=shadow)
    report = run(src("""
        total = 0.0
        for step in range(200):
            if step % 7 == 3:
                continue
            y = x @ M
            x = 3.9 * y * (1 - y)
            total += x.sum().item()
            if step == 150:
                break
    """), user_ns=user, shadow=shadow)
    got = rows(report)
    assert got["x"].status == MATCH and got["total"].status == MATCH, report.rows
    assert any("PyTorch's values of total, x" in n for n in report.notes)
    for ns in (user, shadow):  # the hook is gone from both namespaces
        assert loops.HOOK not in ns


def test_a_while_loop_runs_in_lockstep_too():
    report = run(SETUP + src("""
        n = 0
        while n < 60:
            y = x @ M
            x = 3.9 * y * (1 - y)
            n += 1
    """))
    got = rows(report)
    assert got["x"].status == MATCH and got["n"].status == MATCH, report.rows
    assert any("the loop on line 7" in n and "values of n, x" in n for n in report.notes)


def test_an_iteration_that_really_differs_is_found_and_the_rest_runs_free():
    """Both sides of a loop run through the hook, the MindSpore body wrong from its
    fifth iteration on: the lockstep stops there and says so."""
    import mindspore

    torch_ns = {"torch": torch, "w": torch.ones(3)}
    ms_ns = {"mindspore": mindspore, "w": mindspore.ops.ones(3)}
    torch_code = "for i in range(10):\n    w = w * 1.5\n"
    ms_code = "for i in range(10):\n    w = w * (1.5 if i < 4 else 1.6)\n"
    lock = loops.LoopLockstep(("w",), 1e-5, 1e-5, line=1)
    for side, code, ns in (("torch", torch_code, torch_ns), ("mindspore", ms_code, ms_ns)):
        lock.start(side, ns)
        ns[loops.HOOK] = lock
        exec(loops.instrument(code, 1, (1, 9, 1, 18), "for"), ns)
    k, bad = lock.diverged
    assert k == 5 and [r.name for r in bad] == ["w"]
    assert "until iteration 5 ended" in lock.note()
    # from the divergence on the MindSpore side ran on its own values
    assert abs(float(ms_ns["w"][0].asnumpy()) - 1.5 ** 4 * 1.6 ** 6) < 1e-3


def test_instrument_keeps_every_line_where_it_was():
    code = "for (a,\n     b) in zip(\n        xs, ys):\n    pass\n"
    out = loops.instrument(code, 10, (11, 11, 12, 15), "for")
    assert out.count("\n") == code.count("\n")
    assert "in __msmagic_loop__.iterate(zip(\n        xs, ys)):" in out
    assert loops.instrument(code, 10, (20, 0, 20, 3), "for") is None


MODULE_CHAOS = src("""
    import torch
    import torch.nn as nn
    torch.manual_seed(0)
    M = torch.rand(64, 64)
    M = M / M.sum(1, keepdim=True)
    net = nn.Linear(64, 64, bias=False)
    net.weight.data = torch.rand(64, 64)
    for step in range(60):
        y = net.weight.data @ M
        net.weight.data = 3.9 * y * (1 - y)
""")


def test_a_module_the_loop_updates_in_place_is_followed():
    # nothing is rebound by name: the state is the layer's weight
    report = run(MODULE_CHAOS)
    assert rows(report)["y"].status == MATCH, report.rows
    assert any("the loop on line 8" in n and "values of net" in n for n in report.notes)


def test_the_module_loop_run_free_differs(monkeypatch):
    monkeypatch.setattr(loops, "instrument", lambda *a: None)
    report = run(MODULE_CHAOS)
    assert rows(report)["y"].status != MATCH and rows(report)["y"].max_abs > 1e-2


def test_trainable_tensors_updated_through_a_list_are_followed_in_place():
    # makemore's loop: the weights are never rebound, the list holding them is iterated
    report = run(src("""
        import torch
        import torch.nn.functional as F
        torch.manual_seed(0)
        X = torch.randint(0, 27, (64, 3))
        Y = torch.randint(0, 27, (64,))
        C = torch.randn(27, 10)
        W1 = torch.randn(30, 50)
        b1 = torch.randn(50)
        W2 = torch.randn(50, 27)
        b2 = torch.randn(27)
        parameters = [C, W1, b1, W2, b2]
        for p in parameters:
            p.requires_grad = True
        for i in range(60):
            emb = C[X]
            h = torch.tanh(emb.view(-1, 30) @ W1 + b1)
            logits = h @ W2 + b2
            loss = F.cross_entropy(logits, Y)
            for p in parameters:
                p.grad = None
            loss.backward()
            for p in parameters:
                p.data += -0.1 * p.grad
        same = all(p is q for p, q in zip(parameters, [C, W1, b1, W2, b2]))
    """))
    got = rows(report)
    assert report.ms_error is None, report.ms_error
    for name in ("loss", "C", "W1", "b2", "same"):
        assert got[name].status == MATCH, (name, report.rows)
    assert any("values of C, W1, W2, b1, b2" in n for n in report.notes), report.notes


def test_values_put_into_a_parameter_an_optimizer_stepped_are_trained_on():
    """Parity gives MindSpore Parameters PyTorch's values in loops, at a cell's start and
    at a model's first call. An optimizer that has stepped a Parameter keeps updating the
    storage it had, so the values go into that storage (``set_data`` would give the
    Parameter new storage and the next steps would be lost)."""
    import mindspore
    import numpy as np
    from msmagic.parity_check.compare import put_values

    model = mindspore.nn.Dense(3, 1)
    opt = mindspore.nn.SGD(model.trainable_params(), learning_rate=0.1, momentum=0.9)
    x = mindspore.Tensor(np.ones((4, 3), np.float32))
    grad_fn = mindspore.value_and_grad(lambda: (model(x) ** 2).mean(), None, opt.parameters)
    _, grads = grad_fn()
    opt(grads)
    put_values(model.weight, mindspore.Tensor(np.full((1, 3), 0.5, np.float32)))
    assert np.allclose(model.weight.asnumpy(), 0.5)
    _, grads = grad_fn()
    opt(grads)
    moved = model.weight.asnumpy()
    assert not np.allclose(moved, 0.5)  # the second step reached the values put there


# jcjohnson's two-layer network trained by hand: y_pred, the gradients and the loss are
# sums of products around 30 that cancel to about 1, so one iteration's float32 rounding
# (the same weights on both sides) differs between the frameworks by more than rtol=1e-5
CANCELLING_SETUP = src("""
    import torch
    torch.manual_seed(0)
    x = torch.randn(64, 1000)
    y = torch.randn(64, 10)
    w1 = torch.randn(1000, 100)
    w2 = torch.randn(100, 10)
""")
CANCELLING = src("""
    losses = []
    for t in range(40):
        h = x.mm(w1)
        h_relu = h.clamp(min=0)
        y_pred = h_relu.mm(w2)
        loss = (y_pred - y).pow(2).sum()
        losses.append(loss.item())
        grad_y_pred = 2.0 * (y_pred - y)
        grad_w2 = h_relu.t().mm(grad_y_pred)
        grad_h = grad_y_pred.mm(w2.t())
        grad_h[h < 0] = 0
        grad_w1 = x.t().mm(grad_h)
        w1 -= 1e-6 * grad_w1
        w2 -= 1e-6 * grad_w2
""")


def _cancelling(loop=CANCELLING, **kw):
    from msmagic.engine.session import PortSession

    ns, shadow, session = {"__name__": "__main__"}, {"__name__": "__shadow__"}, PortSession()
    run(CANCELLING_SETUP, user_ns=ns, shadow=shadow, session=session)
    return run(loop, user_ns=ns, shadow=shadow, session=session, **kw), ns


def test_values_that_cancel_in_the_last_iteration_match_within_float32_rounding():
    report, ns = _cancelling()
    assert all(r.status == MATCH for r in report.rows), [(r.name, r.status, r.max_abs) for r in report.rows]
    rows = {r.name: r for r in report.rows}
    for name in ("y_pred", "grad_w2", "grad_w1"):  # beyond atol + rtol * the values' RMS magnitude
        assert rows[name].max_abs > 1e-5 + 1e-5 * float(ns[name].pow(2).mean().sqrt())
        assert rows[name].note.startswith("within float32 rounding: the float64 re-run"), rows[name].note
    assert any("run again (in float64" in n for n in report.notes)
    assert len(ns["losses"]) == 40  # the re-run appended to a copy


def test_without_the_float64_rerun_the_same_values_differ(monkeypatch):
    monkeypatch.setattr(loops, "ROUNDING_FACTOR", 0.0)
    report, _ = _cancelling()
    assert {r.name for r in report.rows if r.status != MATCH} >= {"y_pred", "grad_w2"}


def test_a_real_difference_of_a_tenth_of_a_percent_is_still_found():
    """Both sides of the loop run through the hook, the MindSpore body scaling the
    gradient of the loss by 1.001: at the first boundary the weights differ, the float64
    re-run of that iteration shows MindSpore's values far further from it than PyTorch's
    rounding, and the lockstep stops there, saying how much further."""
    import mindspore
    from mindspore import ops

    torch.manual_seed(0)
    t = {"torch": torch, "x": torch.randn(64, 1000), "y": torch.randn(64, 10),
         "w1": torch.randn(1000, 100), "w2": torch.randn(100, 10)}
    body = src("""
        for t in range(5):
            h = MM(x, w1)
            h_relu = h.clamp(min=0)
            y_pred = MM(h_relu, w2)
            grad_y_pred = TWO * (y_pred - y)
            grad_w2 = MM(h_relu.T, grad_y_pred)
            grad_h = MM(grad_y_pred, w2.T)
            grad_h[h < 0] = 0
            grad_w1 = MM(x.T, grad_h)
            w1 = w1 - 1e-6 * grad_w1
            w2 = w2 - 1e-6 * grad_w2
    """)
    span = (1, 9, 1, 17)
    torch_code = body.replace("MM", "torch.matmul").replace("TWO", "2.0")

    def lockstep(two):
        m = {"ops": ops, **{k: mindspore.Tensor(v.numpy()) for k, v in t.items() if k != "torch"}}
        tns = dict(t)
        lock = loops.LoopLockstep(("w1", "w2"), 1e-5, 1e-5, line=1)
        lock.rerun_source = (loops.instrument(torch_code, 1, span, "for", method="last_only"), tns,
                             ["range", "torch", "w1", "w2", "x", "y"], {"h", "h_relu", "y_pred", "w1", "w2", "t"})
        ms_code = body.replace("MM", "ops.matmul").replace("TWO", two)
        for side, code, ns in (("torch", torch_code, tns), ("mindspore", ms_code, m)):
            lock.start(side, ns)
            ns[loops.HOOK] = lock
            exec(loops.instrument(code, 1, span, "for"), ns)
        return lock

    assert lockstep("2.0").diverged is None  # the right body follows PyTorch to the end
    lock = lockstep("2.002")
    k, bad = lock.diverged
    assert k == 1 and {r.name for r in bad} == {"w1", "w2"}
    for row in bad:
        assert "the float64 re-run of that iteration is" in row.note and "times further" in row.note, row.note


def test_the_rerun_leaves_the_users_files_lists_and_random_state_alone(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    loop = CANCELLING.replace("    losses.append(loss.item())\n",
                              "    losses.append(loss.item())\n"
                              "    draws.append(float(torch.rand(1)))\n"
                              "    with open('log.txt', 'a') as f:\n"
                              "        f.write(f'{t}\\n')\n").replace("losses = []\n", "losses = []\ndraws = []\n")
    report, ns = _cancelling(loop)
    assert report.row("y_pred").status == MATCH and "float64 re-run" in report.row("y_pred").note
    assert len(ns["losses"]) == 40 and len(ns["draws"]) == 40
    assert (tmp_path / "log.txt").read_text().split() == [str(t) for t in range(40)]
    after = float(torch.rand(1))
    plain = {"__name__": "__main__"}  # the same cells run by PyTorch alone
    exec(CANCELLING_SETUP + loop.replace("'log.txt'", "'plain.txt'"), plain)
    assert after == float(plain["torch"].rand(1))


MAIN_BLOCK = src("""
    if __name__ == "__main__":
        total = 0.0
        for step in range(60):
            y = x @ M
            x = 3.9 * y * (1 - y)
            total += float(x.sum())
        final = x.sum()
""")


@pytest.mark.parametrize("guard", ['__name__ == "__main__"', "'__main__' == __name__"])
def test_the_loop_of_a_scripts_main_block_runs_in_lockstep(guard):
    """A script pasted into a notebook trains in ``if __name__ == "__main__":``: its one
    loop is followed iteration by iteration as a top-level loop is, and what the block
    computes after it compares."""
    report = run(SETUP + MAIN_BLOCK.replace('__name__ == "__main__"', guard))
    got = rows(report)
    assert got["x"].status == MATCH and got["final"].status == MATCH, report.rows
    assert any("the loop on line 8: MindSpore began each of its 60 iterations" in n for n in report.notes), report.notes


def test_the_main_block_run_free_differs(monkeypatch):
    monkeypatch.setattr(loops, "instrument", lambda *a, **k: None)
    report = run(SETUP + MAIN_BLOCK)
    assert rows(report)["x"].status != MATCH and rows(report)["x"].max_abs > 1e-2


# a training loop: its last y_pred is a sum of products around 30 that cancels to about
# 1, so the two frameworks' float32 rounding differs beyond rtol=1e-5 (see CANCELLING)
TRAINING_SETUP = src("""
    import torch
    from torch import nn
    torch.manual_seed(0)
    x = torch.randn(64, 1000)
    y = torch.randn(64, 10)
    model = nn.Sequential(nn.Linear(1000, 100, bias=False), nn.ReLU(), nn.Linear(100, 10, bias=False))
    with torch.no_grad():
        model[0].weight.copy_(torch.randn(100, 1000))
        model[2].weight.copy_(torch.randn(10, 100))
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-6, momentum=0.5)
""")
TRAINING = src("""
    for t in range(40):
        optimizer.zero_grad()
        y_pred = model(x)
        loss = (y_pred - y).pow(2).sum()
        loss.backward()
        optimizer.step()
""")
SCHEDULED = ("scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=10, gamma=0.5)\n",
             "    scheduler.step()\n")


@pytest.mark.parametrize("scheduled, spelling", [(False, None), (True, None), (False, "alias")],
                         ids=["optimizer", "optimizer and scheduler", "aliased module, keyword params"])
def test_a_training_loops_last_values_are_judged_against_a_float64_rerun_with_the_optimizer(scheduled, spelling):
    """The last iteration reads the optimizer (and a scheduler): the re-run steps float64
    copies of them, so y_pred, beyond the tolerance by rounding alone, matches."""
    from msmagic.engine.session import PortSession

    setup, loop = TRAINING_SETUP, TRAINING
    if spelling == "alias":
        setup = setup.replace("optimizer = torch.optim.SGD(model.parameters(),",
                              "from torch import optim as O\noptimizer = O.SGD(params=model.parameters(),")
    if scheduled:
        setup, loop = setup + SCHEDULED[0], loop + SCHEDULED[1]
    ns, shadow, session = {"__name__": "__main__"}, {"__name__": "__shadow__"}, PortSession()
    run(setup, user_ns=ns, shadow=shadow, session=session)
    report = run(loop, user_ns=ns, shadow=shadow, session=session)
    row = report.row("y_pred")
    assert row.max_abs > 1e-5 + 1e-5 * float(ns["y_pred"].detach().pow(2).mean().sqrt())
    assert row.status == MATCH and row.note.startswith("within float32 rounding: the float64 re-run"), row.note
    if scheduled:
        assert ns["scheduler"].last_epoch == 40 and ns["optimizer"].param_groups[0]["lr"] == pytest.approx(1e-6 / 16)


def _adam_loop():
    """A small Adam + StepLR loop run on the PyTorch side through the hook: (lock, namespace,
    the re-run's code, the names it reads)."""
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 3)
    opt = torch.optim.Adam(model.parameters(), lr=0.1)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    body = src("""
        for t in range(5):
            opt.zero_grad()
            loss = model(x).pow(2).sum()
            loss.backward()
            opt.step()
            sched.step()
    """)
    span = (1, 9, 1, 17)
    tns = {"torch": torch, "model": model, "opt": opt, "sched": sched, "x": torch.randn(8, 4)}
    names = ["model", "opt", "range", "sched", "x"]
    lock = loops.LoopLockstep((), 1e-5, 1e-5, line=1, mentioned=names)
    lock.start("torch", tns)
    tns[loops.HOOK] = lock
    exec(loops.instrument(body, 1, span, "for"), tns)  # noqa: S102
    return lock, tns, loops.instrument(body, 1, span, "for", method="last_only"), names


def test_the_rerun_starts_the_optimizer_and_scheduler_from_the_iterations_own_state():
    """Iteration k run again in float64 from boundary k's record gives PyTorch's float32
    parameters after iteration k to float32 rounding: Adam's moments, its step count and
    the scheduler's learning rate are those iteration k began with, not those the loop
    left; the user's optimizer, scheduler and model are not stepped."""
    lock, tns, code, names = _adam_loop()
    model, opt, sched = tns["model"], tns["opt"], tns["sched"]
    weights = model.weight.detach().clone()
    for k in (1, 3, 4):
        box = loops.rerun_iteration(lock, code, tns, names, k, {"t", "loss"})
        assert box is not None
        after = lock.records[k + 1][loops._MODULES]["model"]
        for name, p in box["model"].named_parameters():
            assert p.dtype == torch.float64
            assert torch.allclose(p.detach().float(), after[name], atol=1e-6), (k, name)
        assert box["opt"].state[box["model"].weight]["step"] == k + 1
        assert box["opt"].param_groups[0]["lr"] == pytest.approx(0.1 * 0.5 ** ((k + 1) // 2))
    assert opt.state[model.weight]["step"] == 5 and sched.last_epoch == 5
    assert torch.equal(model.weight, weights) and opt.param_groups[0]["lr"] == pytest.approx(0.025)


def test_optimizer_states_beyond_their_memory_are_kept_for_the_last_iteration_only(monkeypatch):
    monkeypatch.setattr(loops, "STEPPER_BYTES", 0)
    lock, tns, code, names = _adam_loop()
    assert loops.rerun_iteration(lock, code, tns, names, 1, {"t", "loss"}) is None
    box = loops.rerun_iteration(lock, code, tns, names, None, {"t", "loss"})  # the last: k = 4
    assert box is not None and box["opt"].state[box["model"].weight]["step"] == 5
    held = {k for k, r in enumerate(lock.records) if r[loops._STEPPERS]["opt"] is not None}
    assert held == {0, 4, 5}  # Adam's state before its first step is empty


@pytest.mark.parametrize("made, loop", [(TRAINING_SETUP, TRAINING), (CANCELLING_SETUP, CANCELLING)],
                         ids=["module and optimizer", "tensors by hand"])
def test_the_loop_of_a_main_block_is_run_again_alone_from_what_the_block_built(made, loop):
    """A script's main block builds the model (or the weights) and the optimizer, then
    trains: the float64 re-run runs the loop's last iteration alone (the block's first
    lines would draw other weights) with the names the loop reads from the block."""
    block = "if __name__ == '__main__':\n" + textwrap.indent(
        made.split("torch.manual_seed(0)\n")[1] + loop + "print('done')\n", "    ")
    ns = {"__name__": "__main__"}
    report = run("import torch\nfrom torch import nn\ntorch.manual_seed(0)\n" + block, user_ns=ns)
    row = report.row("y_pred")
    assert row.max_abs > 1e-5 + 1e-5 * float(ns["y_pred"].detach().pow(2).mean().sqrt())
    assert row.status == MATCH and row.note.startswith("within float32 rounding: the float64 re-run"), row.note


# the same hand-written loop run 100 iterations: at the last one a few entries of h lie
# within rounding of 0, so grad_h[h < 0] = 0 keeps them on one side and zeroes them on
# the other; the float64 re-run masks yet other entries (it is not PyTorch's iteration
# there), but PyTorch's own iteration, started from values moved by one float32 rounding
# step, flips entries too, by as much
MASKED = CANCELLING.replace("range(40)", "range(100)")


def _masked(**kw):
    from msmagic.engine.session import PortSession

    ns, shadow, session = {"__name__": "__main__"}, {"__name__": "__shadow__"}, PortSession()
    run(CANCELLING_SETUP, user_ns=ns, shadow=shadow, session=session)
    return run(MASKED, user_ns=ns, shadow=shadow, session=session, **kw), ns


def test_a_mask_on_values_within_rounding_of_zero_is_judged_by_pytorchs_own_spread():
    report, ns = _masked()
    for name in ("grad_h", "grad_w1"):
        row = report.row(name)
        assert row.max_abs > 1e-5 + 1e-5 * float(ns[name].pow(2).mean().sqrt())
        assert row.status == MATCH, (name, row.note)
        assert row.note.startswith("within float32 rounding: the loop's last iteration run again in float32 "
                                   "from values moved by one rounding step"), row.note
    assert len(ns["losses"]) == 100


def test_without_the_nudged_rerun_the_mask_differs(monkeypatch):
    monkeypatch.setattr(loops, "NUDGE", 0.0)  # PyTorch's own iteration moves nothing then
    report, _ = _masked()
    assert report.row("grad_h").status != MATCH and report.row("grad_w1").status != MATCH


def test_a_float32_rerun_that_is_not_pytorchs_iteration_judges_nothing():
    """The nudged spread counts only where the float32 re-run gives PyTorch's values: a
    re-run that draws other random numbers, or reads other data, says nothing."""
    t = torch.tensor([1.0, 2.0, 3.0])
    m = t + torch.tensor([0.0, 0.5, 0.0])
    assert loops.within_spread(t, m, t.clone(), t + 0.1, atol=0.0) == (True, pytest.approx(0.1), 0.5)
    assert loops.within_spread(t, m, t + 1e-3, t + 0.1, atol=0.0) is None
    assert loops.within_spread(t, m, t.clone(), t + 0.01, atol=0.0)[0] is False


def test_a_first_rounding_direction_that_flips_nothing_is_not_the_last_word(monkeypatch):
    """The spread is sampled in further random directions where the first does not settle
    the value: here the first sample moves nothing (as a direction that leaves every
    entry near 0 on its side would), the next ones flip entries as MindSpore's rounding
    did, and the value is judged within rounding by them."""
    real = loops._nudge

    def first_moves_nothing(values, torch_module, seed=0):
        if seed:
            real(values, torch_module, seed=seed)

    monkeypatch.setattr(loops, "_nudge", first_moves_nothing)
    report, _ = _masked()
    for name in ("grad_h", "grad_w1"):
        row = report.row(name)
        assert row.status == MATCH, (name, row.note)
        assert "random directions) lands up to" in row.note, row.note


def test_the_spread_is_the_farthest_of_its_samples_and_sampling_stops_when_settled():
    t = torch.tensor([1.0, 2.0, 3.0])
    m = t + torch.tensor([0.0, 0.5, 0.0])
    assert loops.within_spread(t, m, t.clone(), [t + 0.01, t + 0.1], atol=0.0) == (True, pytest.approx(0.1), 0.5)
    asked = []
    values = {"float64": t + 5.0, "float32": t.clone(), "nudged": t + 0.01, "nudged:1": t + 0.1,
              "nudged:2": t + 0.2, "nudged:3": t + 0.3}

    def rerun(precision):
        asked.append(precision)
        return {"v": values[precision]}

    verdict, _ = loops.judge_by_reruns(t, m, rerun, lambda box: box["v"], "it", atol=0.0)
    assert verdict[0] is True and asked == ["float64", "float32", "nudged", "nudged:1"]
    asked.clear()
    values["float32"] = t + 1e-3  # not PyTorch's iteration: no further samples are taken
    verdict, _ = loops.judge_by_reruns(t, m, rerun, lambda box: box["v"], "it", atol=0.0)
    assert asked == ["float64", "float32", "nudged", "nudged:1"] and verdict is None
