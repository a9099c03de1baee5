"""Training steps (TRN*): each PyTorch loop and its port run on CPU with the same initial
weights (run_pair copies them); the per-step losses and the final weights must agree
(rtol 1e-4), and the rewrite itself is checked in the ported code."""

import ast

import mindspore as ms
import numpy as np
import pytest
import torch

import msmagic
from msmagic.parity_check import ms_name_for, run_pair, to_numpy
from tests.rules.support import findings, rules, src

RTOL, ATOL = 1e-4, 1e-5

REGRESSION = src("""
    import torch
    import torch.nn as nn

    torch.manual_seed(0)
    X = torch.randn(16, 3)
    y = X @ torch.tensor([[1.0], [-2.0], [0.5]]) + 0.3
    model = nn.Linear(3, 1)
    loss_fn = nn.MSELoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    losses = []
    model.train()
    for step in range(6):
        optimizer.zero_grad()
        pred = model(X)
        loss = loss_fn(pred, y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
""")


def _run(source, **kw):
    run = run_pair(source, rtol=RTOL, atol=ATOL, **kw)
    assert run.torch_error is None and run.ms_error is None, run.explain()
    return run


def _weights(run, name="model"):
    """(torch, MindSpore) arrays of every parameter of module ``name`` after the cell."""
    tmod, cell = run.torch_ns[name], run.ms_ns[name]
    ms_params = {p.name: p for p in cell.get_parameters()}
    out = {}
    for n, p in tmod.named_parameters():
        m = ms_params[ms_name_for(tmod, n)].asnumpy().reshape(tuple(p.shape))
        out[n] = (to_numpy(p), m)
    return out


def _assert_trained_alike(run, *names, model="model"):
    assert run.agree(*names), run.explain()
    for n, (t, m) in _weights(run, model).items():
        np.testing.assert_allclose(m, t, rtol=RTOL, atol=ATOL, err_msg=n)


def _idempotent(run):
    again = msmagic.port(run.port.code)
    assert again.code == run.port.code


def test_sgd_regression_loop_over_range():
    run = _run(REGRESSION)
    code = run.port.code
    assert "grad_fn = mindspore.value_and_grad(forward_fn, None, optimizer.parameters, has_aux=True)" in code
    assert "    (loss, pred), grads = grad_fn()\n    optimizer(grads)\n" in code
    assert "zero_grad" not in code and "backward" not in code and ".step()" not in code
    assert code.index("def forward_fn") < code.index("for step in range(6):")
    assert "TRN001" in rules(run) and "MOD002" in rules(run)  # model.train() before the loop
    assert len(run.ms_ns["losses"]) == 6
    _assert_trained_alike(run, "losses", "loss", "pred")
    assert run.torch_ns["losses"][-1] < run.torch_ns["losses"][0]  # it trained
    _idempotent(run)


def test_other_orders_and_no_aux():
    """zero_grad after the step; loss computed in one expression: no aux -> has_aux off."""
    source = REGRESSION.replace(
        "    optimizer.zero_grad()\n    pred = model(X)\n    loss = loss_fn(pred, y)\n    loss.backward()\n"
        "    optimizer.step()\n",
        "    loss = loss_fn(model(X), y)\n    loss.backward()\n    optimizer.step()\n    optimizer.zero_grad()\n")
    run = _run(source)
    assert "grad_fn = mindspore.value_and_grad(forward_fn, None, optimizer.parameters)\n" in run.port.code
    assert "    loss, grads = grad_fn()\n" in run.port.code
    _assert_trained_alike(run, "losses")


CLASSIFIER = src("""
    import torch
    import torch.nn as nn

    torch.manual_seed(1)
    X = torch.randn(24, 4)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    batches = [(X[i:i + 8], Y[i:i + 8]) for i in range(0, 24, 8)]
    history = []
    accuracy = []
    model.train()
    for epoch in range(3):
        correct = 0
        for xb, yb in batches:
            optimizer.zero_grad()
            logits = model(xb)
            loss = criterion(logits, yb)
            loss.backward()
            optimizer.step()
            history.append(loss.item())
            correct += (logits.argmax(1) == yb).sum().item()
        accuracy.append(correct / 24)
""")


def test_adam_classifier_nested_loops_with_aux_predictions():
    """Adam + CrossEntropyLoss over a Python list of batches inside an epoch loop; the
    logits are an aux output and feed the accuracy after the step. Both sides get the
    same int64 labels (FUN015 ports the loss to ops.cross_entropy, which takes them)."""
    labels = np.random.default_rng(0).integers(0, 3, 24)
    run = _run(CLASSIFIER, torch_ns={"__name__": "t", "Y": torch.tensor(labels)},
               ms_ns={"__name__": "m", "Y": ms.Tensor(labels)})
    code = run.port.code
    assert "FUN015" in rules(run) and "FUN015" not in findings(run)
    assert "def forward_fn(xb, yb):" in code
    assert "        (loss, logits), grads = grad_fn(xb, yb)\n        optimizer(grads)\n" in code
    # defined once, before the outer loop
    assert code.index("grad_fn = mindspore.value_and_grad") < code.index("for epoch in range(3):")
    _assert_trained_alike(run, "history", "accuracy")
    assert len(run.ms_ns["history"]) == 9
    _idempotent(run)


def test_training_step_in_a_function():
    source = REGRESSION.replace(
        "for step in range(6):\n    optimizer.zero_grad()\n    pred = model(X)\n    loss = loss_fn(pred, y)\n"
        "    loss.backward()\n    optimizer.step()\n    losses.append(loss.item())\n",
        "def train_step(xb, yb):\n    optimizer.zero_grad()\n    loss = loss_fn(model(xb), yb)\n"
        "    loss.backward()\n    optimizer.step()\n    return loss.item()\n\n"
        "for step in range(4):\n    losses.append(train_step(X, y))\n")
    run = _run(source)
    assert "def forward_fn(xb, yb):" in run.port.code
    assert "    loss, grads = grad_fn(xb, yb)\n" in run.port.code
    _assert_trained_alike(run, "losses")


def test_frozen_parameter_stays_unchanged():
    source = REGRESSION.replace("loss_fn = nn.MSELoss()\n", "loss_fn = nn.MSELoss()\nmodel.bias.requires_grad = False\n")
    run = _run(source)
    _assert_trained_alike(run, "losses")
    t_bias, m_bias = _weights(run)["bias"]
    assert (t_bias == m_bias).all()
    # the initial bias (copied to MindSpore when the model was bound) did not move
    run2 = _run(source.split("losses = []")[0])
    np.testing.assert_array_equal(_weights(run2)["bias"][1], m_bias)
    assert len(run.ms_ns["optimizer"].parameters) == 1


def test_clip_grad_norm_matches_ops_clip_by_global_norm():
    source = REGRESSION.replace("y = X @", "y = 20.0 * X @").replace(
        "    loss.backward()\n", "    loss.backward()\n    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=0.5)\n")
    run = _run(source)
    assert "    grads = mindspore.ops.clip_by_global_norm(grads, 0.5)\n    optimizer(grads)\n" in run.port.code
    assert "TRN002" in rules(run)
    _assert_trained_alike(run, "losses")
    # clipping was active: without it the weights end elsewhere
    plain = _run(source.replace("    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=0.5)\n", ""))
    assert not np.allclose(_weights(plain)["weight"][0], _weights(run)["weight"][0], rtol=1e-2)


def test_clip_grad_value():
    source = ("from torch.nn.utils import clip_grad_value_\n" + REGRESSION).replace("y = X @", "y = 20.0 * X @").replace(
        "    loss.backward()\n", "    loss.backward()\n    clip_grad_value_(model.parameters(), 0.3)\n")
    run = _run(source)
    assert "grads = mindspore.ops.clip_by_value(grads, -(0.3), 0.3)" in run.port.code
    _assert_trained_alike(run, "losses")


def test_two_backward_calls_are_the_gradient_of_the_sum():
    two = src("""
        import torch
        import torch.nn as nn

        torch.manual_seed(0)
        X = torch.linspace(-1, 1, 12).reshape(6, 2)
        model = nn.Linear(2, 2)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        l1s, l2s = [], []
        for step in range(4):
            optimizer.zero_grad()
            out = model(X)
            loss1 = out.pow(2).mean()
            loss2 = (out - 1.0).abs().mean()
            loss1.backward(retain_graph=True)
            loss2.backward()
            optimizer.step()
            l1s.append(loss1.item())
            l2s.append(loss2.item())
    """)
    run = _run(two)
    assert "return loss1 + loss2, loss1, loss2, out" in run.port.code
    assert "(_, loss1, loss2, out), grads = grad_fn()" in run.port.code
    assert "TRN003" in rules(run) and "retain_graph" not in run.port.code
    _assert_trained_alike(run, "l1s", "l2s")
    summed = _run(two.replace("    loss1.backward(retain_graph=True)\n    loss2.backward()\n",
                              "    (loss1 + loss2).backward()\n"))
    np.testing.assert_allclose(_weights(summed)["weight"][0], _weights(run)["weight"][0], rtol=1e-6)
    assert "    _, grads = grad_fn()\n" not in summed.port.code  # aux: loss1, loss2, out


def _flagged(source, line):
    out = msmagic.port(source)
    ast.parse(out.code)
    hits = [f for f in out.unsupported if f.rule_id == "TRN004"]
    assert hits and hits[0].line == line, out.unsupported
    assert "# msmagic: TRN004" in out.code
    return out


def test_gradient_accumulation_is_flagged():
    source = src("""
        import torch
        import torch.nn as nn

        model = nn.Linear(2, 1)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        X = torch.ones(4, 2)
        for i in range(4):
            loss = model(X).mean() / 2
            loss.backward()
            if i % 2 == 1:
                optimizer.step()
                optimizer.zero_grad()
    """)
    out = _flagged(source, 9)
    assert "optimizer.step()  # msmagic: TRN004" in out.code  # left as it was, visibly
    assert "loss.backward()  # msmagic: TRN004" in out.code  # each flagged on its own line
    assert "grad_fn =" not in out.code
    assert "for i in range(4):\n" in out.code  # not on the loop


def test_missing_zero_grad_is_flagged():
    body = REGRESSION.replace("    optimizer.zero_grad()\n", "")
    out = _flagged(body, 15)
    assert "accumulate" in [f for f in out.unsupported if f.rule_id == "TRN004"][0].reason


def test_clip_with_other_norm_is_flagged():
    source = REGRESSION.replace(
        "    loss.backward()\n", "    loss.backward()\n    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0, norm_type=1)\n")
    out = msmagic.port(source)
    assert {"TRN002", "TRN004"} <= {f.rule_id for f in out.unsupported}
    ast.parse(out.code)


def test_top_level_step_with_clipping():
    """A step at the top level of a cell: the forward statements move into forward_fn,
    the data and the model stay where they are, the clip applies to the grads tuple."""
    run = _run(src("""
        import torch
        import torch.nn as nn

        torch.manual_seed(0)
        X = torch.randn(8, 3) * 5
        y = torch.randn(8, 1)
        model = nn.Linear(3, 1)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        optimizer.zero_grad()
        pred = model(X)
        loss = ((pred - y) ** 2).mean()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        optimizer.step()
    """))
    code = run.port.code
    assert "(loss, pred), grads = grad_fn()\ngrads = mindspore.ops.clip_by_global_norm(grads, 0.5)\n" \
           "optimizer(grads)\n" in code
    assert code.index("model = nn.Dense") < code.index("def forward_fn")
    assert {"TRN001", "TRN002"} <= rules(run) and not findings(run)
    _assert_trained_alike(run, "loss", "pred")
    _idempotent(run)


LOSS_BATCH = src("""
    import torch
    import torch.nn.functional as F

    def loss_batch(model, loss_func, xb, yb, opt=None):
        loss = loss_func(model(xb), yb)

        if opt is not None:
            loss.backward()
            opt.step()
            opt.zero_grad()

        return loss.item(), len(xb)
""")


@pytest.mark.parametrize("call", [
    "loss_batch(model, F.cross_entropy, xb, yb, opt)",
    "loss_batch(model, F.cross_entropy, xb, yb, opt=opt)",
    "loss_batch(model, F.cross_entropy, **dict(xb=xb, yb=yb, opt=opt))",
])
def test_step_under_if_in_a_function_of_an_earlier_cell_trains_and_evaluates_alike(call):
    """The official nn tutorial's loss_batch (step only when an optimizer is given),
    defined in one cell and called in a later one from a fit() that trains a model with
    dropout and BatchNorm, then evaluates it under no_grad with opt=None: the forward pass
    must run once per call on either branch (BatchNorm's running statistics count the
    calls), the losses and weights must agree."""
    from msmagic.engine.session import PortSession

    session, ns, shadow = PortSession(), {"__name__": "__main__"}, {"__name__": "__shadow__"}
    first = msmagic.parity(LOSS_BATCH, user_ns=ns, shadow=shadow, session=session, progress=None)
    assert first.ms_error is None and not first.port.unsupported, first.port.unsupported
    assert "else:\n        loss = forward_fn(" in first.port.code
    second = msmagic.parity(src(f"""
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(4, 16), torch.nn.BatchNorm1d(16), torch.nn.ReLU(),
                                    torch.nn.Dropout(0.25), torch.nn.Linear(16, 3))
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        xb = torch.randn(32, 4)
        yb = torch.randint(0, 3, (32,))

        def fit(epochs):
            losses = []
            for epoch in range(epochs):
                model.train()
                losses.append({call}[0])
                model.eval()
                with torch.no_grad():
                    losses.append(loss_batch(model, F.cross_entropy, xb, yb)[0])
            return losses

        losses = fit(4)
        running_mean = model[1].running_mean
    """), user_ns=ns, shadow=shadow, session=session, progress=None)
    assert second.ms_error is None and second.torch_error is None, second.ms_error or second.torch_error
    rows = {r.name: r for r in second.rows}
    assert len(ns["losses"]) == 8 and ns["losses"][0] != ns["losses"][2]  # it trained
    for name in ("losses", "running_mean", "model.0.weight", "model.4.weight"):
        assert rows[name].status == "match", (name, rows[name])


def test_step_under_if_in_a_loop_keeps_predictions_and_batchnorm_statistics():
    source = src("""
        import torch
        import torch.nn as nn

        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(3, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 2))
        loss_fn = nn.CrossEntropyLoss()
        optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
        X = torch.randn(24, 3)
        Y = (X[:, 0] > 0).long()
        batches = [(X[i:i + 8], Y[i:i + 8]) for i in range(0, 24, 8)]
        history = []
        for epoch in range(3):
            for phase in ["train", "val"]:
                model.train(phase == "train")
                for xb, yb in batches:
                    out = model(xb)
                    loss = loss_fn(out, yb)
                    if phase == "train":
                        optimizer.zero_grad()
                        loss.backward()
                        optimizer.step()
                    history.append((loss.item(), (out.argmax(1) == yb).float().mean().item()))
        running_var = model[1].running_var
    """)
    run = _run(source)
    assert "            else:\n                loss, out = forward_fn(xb, yb)\n" in run.port.code
    assert not run.port.unsupported
    _assert_trained_alike(run, "history", "running_var")
    assert len(run.ms_ns["history"]) == 18
    _idempotent(run)
