"""Course-notebook training loops (TRN001, TRN005, TRN006 with NGR001), executed: each
PyTorch cell and its port run on CPU with the same initial weights, and the losses,
metrics and trained weights must agree. The last test runs a whole course notebook
(data, model, train-and-test loop, checkpoint, plotting data) cell by cell under
``%%ms_parity`` in one IPython shell, as a user does."""

import mindspore as ms
import numpy as np
import pytest

import msmagic
from msmagic.parity_check import ms_name_for, run_pair, to_numpy
from tests.rules.support import findings, parity_cells, rules, src

RTOL, ATOL = 1e-4, 1e-5

DATA = src("""
    import torch
    import torch.nn as nn

    torch.manual_seed(0)
    centers = torch.tensor([[2.0, 0.0], [-2.0, 0.0], [0.0, 2.5]])
    labels = torch.arange(3).repeat_interleave(16)
    points = centers[labels] + 0.8 * torch.randn(48, 2)
    X, X_test = points[0::2], points[1::2]
    y, y_test = labels[0::2], labels[1::2]
""")


def _run(source, **kw):
    run = run_pair(source, rtol=RTOL, atol=ATOL, **kw)
    assert run.torch_error is None and run.ms_error is None, run.explain()
    assert msmagic.port(run.port.code).code == run.port.code  # porting again changes nothing
    return run


def _trn(run) -> set:
    return {f for f in findings(run) if f.startswith(("TRN", "GRD"))}


def _trained_alike(run, *names, model="model"):
    assert run.agree(*names), run.explain()
    tmod, cell = run.torch_ns[model], run.ms_ns[model]
    params = {p.name: p for p in cell.get_parameters()}
    for n, p in tmod.named_parameters():
        got = params[ms_name_for(tmod, n)].asnumpy().reshape(tuple(p.shape))
        np.testing.assert_allclose(got, to_numpy(p), rtol=RTOL, atol=ATOL, err_msg=n)


COURSE = DATA + src("""
    model = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 3))
    loss_fn = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    log = []
    for epoch in range(6):
        model.train()
        y_logits = model(X)
        y_pred = torch.softmax(y_logits, dim=1).argmax(dim=1)
        loss = loss_fn(y_logits, y)
        acc = (y_pred == y).sum() / len(y) * 100
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        model.eval()
        with torch.inference_mode():
            test_logits = model(X_test)
            test_loss = loss_fn(test_logits, y_test)
            test_acc = (test_logits.argmax(dim=1) == y_test).float().mean()
        log.append(f"Epoch: {epoch} | Loss: {loss:.5f}, Acc: {acc:.2f}% | Test loss: {test_loss:.5f}, "
                   f"Test acc: {test_acc:.2%}")
""")


def test_course_loop_trains_and_tests_in_the_same_iteration():
    run = _run(COURSE)
    code = run.port.code
    assert "    (loss, y_logits), grads = grad_fn()\n" in code
    assert "inference_mode" not in code and "backward" not in code
    assert "{loss.item():.5f}" in code and "{test_acc.item():.2%}" in code
    assert {"TRN001", "TRN005", "NGR001"} <= rules(run) and not _trn(run)
    _trained_alike(run, "loss", "acc", "test_loss", "test_acc", "y_pred", "test_logits")
    assert run.torch_ns["log"] == run.ms_ns["log"]  # the printed progress is the same text
    assert len(run.ms_ns["log"]) == 6


def test_course_step_in_a_function_with_a_no_grad_test_pass():
    run = _run(DATA + src("""
        model = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 3))
        loss_fn = nn.CrossEntropyLoss()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

        def run_epoch():
            model.train()
            loss = loss_fn(model(X), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            model.eval()
            with torch.no_grad():
                test_loss = loss_fn(model(X_test), y_test)
            return loss.item(), f"{test_loss:.5f}"

        history = [run_epoch() for epoch in range(4)]
        losses = [h[0] for h in history]
        printed = [h[1] for h in history]
    """))
    assert "    loss, grads = grad_fn()\n" in run.port.code and "no_grad" not in run.port.code
    _trained_alike(run, "losses")
    assert run.torch_ns["printed"] == run.ms_ns["printed"]


def test_one_step_at_the_top_level_of_a_cell():
    run = _run(DATA + src("""
        model = nn.Linear(2, 3)
        loss_fn = nn.CrossEntropyLoss()
        optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
        logits = model(X)
        loss = loss_fn(logits, y)
        before = f"{loss:.4f}"
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        after = loss_fn(model(X), y)
    """))
    assert "(loss, logits), grads = grad_fn()\n" in run.port.code
    assert run.port.code.index("def forward_fn") > run.port.code.index("optimizer = ")
    assert "TRN001" in rules(run)
    _trained_alike(run, "loss", "logits", "after")
    assert run.torch_ns["before"] == run.ms_ns["before"]


def test_model_zero_grad_instead_of_the_optimizers():
    run = _run(DATA + src("""
        model = nn.Linear(2, 3)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        losses = []
        for step in range(4):
            model.zero_grad()
            loss = nn.functional.cross_entropy(model(X), y)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
    """))
    assert "zero_grad" not in run.port.code
    _trained_alike(run, "losses")


@pytest.mark.parametrize("update", [
    "    with torch.no_grad():\n        for p in model.parameters():\n            p -= lr * p.grad\n"
    "        model.zero_grad()\n",
    "    with torch.no_grad():\n        for p in model.parameters():\n            p -= lr * p.grad\n"
    "            p.grad.zero_()\n",
    "    for p in model.parameters():\n        p.data -= lr * p.grad.data\n        p.grad = None\n",
])
def test_manual_sgd_over_the_parameters(update):
    source = DATA + src("""
        model = nn.Sequential(nn.Linear(2, 6), nn.Tanh(), nn.Linear(6, 3))
        lr = 0.2
        losses = []
        for epoch in range(5):
            loss = nn.functional.cross_entropy(model(X), y)
            loss.backward()
        UPDATE
            losses.append(loss.item())
    """).replace("UPDATE\n", update)
    run = _run(source)
    assert "mindspore.ops.assign(p, p - (lr * p_grad))" in run.port.code
    assert ".grad" not in run.port.code.replace("p_grad", "")
    assert "TRN001" in rules(run) and not _trn(run)
    _trained_alike(run, "losses")
    assert run.torch_ns["losses"][-1] < run.torch_ns["losses"][0]


@pytest.mark.parametrize("update", [
    "    for param in model.parameters():\n        param.data.add_(-lr * param.grad)\n",
    "    with torch.no_grad():\n        for param in model.parameters():\n            param.sub_(param.grad, alpha=lr)\n",
])
@pytest.mark.parametrize("where", ["top", "function"])
def test_manual_update_with_add_and_sub_methods(update, where):
    """PyTorch's regression example updates with ``param.data.add_(-0.1 * param.grad)``
    after ``fc.zero_grad()`` at the top of the loop; ``sub_(grad, alpha=lr)`` is the other
    spelling. Both are the hand-written SGD step, at top level or in a function given the model."""
    body = src("""
        for epoch in range(5):
            model.zero_grad()
            loss = nn.functional.cross_entropy(model(X), y)
            loss.backward()
        UPDATE
            losses.append(loss.item())
    """).replace("UPDATE\n", update)
    if where == "function":
        body = "def fit(model, lr):\n" + "".join("    " + ln + "\n" for ln in body.splitlines()) + "fit(model, lr)\n"
    source = DATA + src("""
        model = nn.Sequential(nn.Linear(2, 6), nn.Tanh(), nn.Linear(6, 3))
        lr = 0.2
        losses = []
    """) + body
    run = _run(source)
    assert "mindspore.ops.assign(param, param " in run.port.code, run.port.code
    assert ".grad" not in run.port.code.replace("param_grad", "") and "msmagic:" not in run.port.code[len(DATA):]
    assert "TRN001" in rules(run) and not _trn(run)
    _trained_alike(run, "losses")
    assert run.torch_ns["losses"][-1] < run.torch_ns["losses"][0]


def test_steps_without_backward_are_no_ops_in_a_scheduler_demo():
    run = _run(src("""
        import torch
        import torch.nn as nn

        model = nn.Linear(3, 2)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
        lrs = []
        for epoch in range(6):
            optimizer.zero_grad()
            optimizer.step()
            scheduler.step()
            lrs.append(scheduler.get_last_lr()[0])
        weight = model.weight * 1.0
    """))
    assert ".step()" not in run.port.code.replace("scheduler", "") and "zero_grad" not in run.port.code
    assert rules(run) >= {"TRN006"}
    _trained_alike(run, "lrs", "weight")


def test_format_specs_print_the_same_text():
    run = _run(DATA + src("""
        model = nn.Linear(2, 3)
        logits = model(X)
        loss = nn.functional.cross_entropy(logits, y)
        correct = (logits.argmax(1) == y).sum()
        total = len(y)
        line = f"{loss:.4f} {loss:10.3e} {correct:d}/{total} = {100 * correct / total:.1f}% {correct / total:.1%}"
        other = "loss {:.3f}, {n} right".format(loss, n=correct)
        kept = f"{loss.item():.4f} {total:>4}"
    """))
    assert "TRN005" in rules(run)
    for name in ("line", "other", "kept"):
        assert run.torch_ns[name] == run.ms_ns[name], (run.torch_ns[name], run.ms_ns[name])


def test_format_spec_of_a_name_rebound_to_a_number_by_tuple_assignment():
    """The official quickstart: ``loss, current = loss.item(), (batch + 1) * len(X)`` then
    ``f"{loss:>7f}"``: loss is a float there, so it is formatted as it is (a ``.item()``
    added on it fails: 'float' object has no attribute 'item')."""
    run = _run(DATA + src("""
        model = nn.Linear(2, 3)
        lines = []
        def train(model, X, y):
            for batch in range(3):
                loss = nn.functional.cross_entropy(model(X), y)
                if batch % 2 == 0:
                    loss, current = loss.item(), (batch + 1) * len(X)
                    lines.append(f"loss: {loss:>8.3f}  [{current:>5d}]")
        train(model, X, y)
        loss = nn.functional.cross_entropy(model(X), y)
        first, (value, n) = loss, (loss.item(), 2)
        more = f"{first:.3f} {value:.3f} {n:d}"
    """))
    assert "{loss:>8.3f}" in run.port.code and "{value:.3f}" in run.port.code
    for name in ("lines", "more"):
        assert run.torch_ns[name] == run.ms_ns[name], (run.torch_ns[name], run.ms_ns[name])


def test_format_specs_of_values_the_port_cannot_type():
    # udacity intro part 5: "Test Loss: {:.3f}".format(test_losses[-1]) with a list of
    # tensors, a function's parameters, a self-documenting field and format(); values the
    # port cannot type are formatted through float()/operator.index(), plain numbers kept
    run = _run(DATA + src("""
        model = nn.Linear(2, 3)
        test_losses = []
        for i in range(2):
            test_loss = 0
            test_loss += nn.functional.cross_entropy(model(X), y)
            test_losses.append(test_loss / 2)
        correct = (model(X).argmax(1) == y).sum()
        def report(loss, hits):
            return "Test Loss: {:.3f}.. {:d} hits, {:.1%}".format(loss, hits, loss)
        line = report(test_losses[-1], correct)
        fields = f"{test_losses[-1]:.4f} {test_losses[0]=:.2f} {correct=:03d}"
        width = format(correct, "04d") + format(test_losses[0], ".3e")
        numbers = report(0.25, 3) + "{:.2f} {:d} {:>4} {:.4f}".format(0.5, 3, 'x', test_losses[0].item())
    """))
    code = run.port.code
    assert '.format(float(loss), operator.index(hits), float(loss))' in code, code
    assert "test_losses[0]={float(test_losses[0]):.2f}" in code and "correct={correct.item():03d}" in code
    assert '.format(0.5, 3, ' in code and "import operator" in code
    assert "TRN005" in rules(run)
    for name in ("line", "fields", "width", "numbers"):
        assert run.torch_ns[name] == run.ms_ns[name], (run.torch_ns[name], run.ms_ns[name])


def test_a_flagged_step_is_left_runnable_in_pytorch_terms():
    out = msmagic.port(DATA + src("""
        model = nn.Linear(2, 3)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        for i in range(4):
            loss = nn.functional.cross_entropy(model(X), y) / 2
            loss.backward()
            if i % 2 == 1:
                optimizer.step()
                optimizer.zero_grad()
    """))
    lines = {f.line: f for f in out.unsupported if f.rule_id == "TRN004"}
    text = out.code.splitlines()
    assert [text[n - 1].strip().split("  #")[0] for n in sorted(lines)] == [
        "loss.backward()", "optimizer.step()", "optimizer.zero_grad()"]  # each line left as PyTorch, not the loop
    assert "grad_fn" not in out.code


# ----------------------------------------------------------------------------- a whole notebook

NOTEBOOK = [
    src("""
        import numpy as np
        import torch
        import torch.nn as nn

        torch.manual_seed(0)
        centers = torch.tensor([[2.0, 0.0], [-2.0, 0.0], [0.0, 2.5]])
        labels = torch.arange(3).repeat_interleave(30)
        points = centers[labels] + 0.7 * torch.randn(90, 2)
        X_train, X_test = points[0::2], points[1::2]
        y_train, y_test = labels[0::2], labels[1::2]
        print(f"{len(X_train)} training and {len(X_test)} test samples")
    """),
    src("""
        class Classifier(nn.Module):
            def __init__(self):
                super().__init__()
                self.layer_1 = nn.Linear(2, 16)
                self.layer_2 = nn.Linear(16, 3)
                self.relu = nn.ReLU()

            def forward(self, x):
                return self.layer_2(self.relu(self.layer_1(x)))


        model = Classifier()
        loss_fn = nn.CrossEntropyLoss()
        optimizer = torch.optim.SGD(params=model.parameters(), lr=0.1)
    """),
    src("""
        epochs = 20
        train_losses, test_losses = [], []
        for epoch in range(epochs):
            model.train()
            y_logits = model(X_train)
            y_pred = torch.softmax(y_logits, dim=1).argmax(dim=1)
            loss = loss_fn(y_logits, y_train)
            acc = (y_pred == y_train).sum() / len(y_train) * 100
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

            model.eval()
            with torch.inference_mode():
                test_logits = model(X_test)
                test_pred = torch.softmax(test_logits, dim=1).argmax(dim=1)
                test_loss = loss_fn(test_logits, y_test)
                test_acc = (test_pred == y_test).float().mean()
            train_losses.append(loss.item())
            test_losses.append(test_loss.item())
            if epoch % 5 == 0:
                print(f"Epoch: {epoch} | Loss: {loss:.5f}, Accuracy: {acc:.2f}% | "
                      f"Test loss: {test_loss:.5f}, Test acc: {test_acc:.2%}")
    """),
    src("""
        from pathlib import Path

        MODEL_PATH = Path("models")
        MODEL_PATH.mkdir(parents=True, exist_ok=True)
        MODEL_SAVE_PATH = MODEL_PATH / "course_model.pth"
        torch.save(model.state_dict(), MODEL_SAVE_PATH)
        loaded_model = Classifier()
        loaded_model.load_state_dict(torch.load(MODEL_SAVE_PATH))
        loaded_model.eval()
        with torch.inference_mode():
            loaded_logits = loaded_model(X_test)
    """),
    src("""
        xx, yy = np.meshgrid(np.linspace(-4, 4, 21), np.linspace(-3, 5, 21))
        grid = torch.from_numpy(np.column_stack((xx.ravel(), yy.ravel()))).float()
        model.eval()
        with torch.inference_mode():
            grid_pred = torch.softmax(model(grid), dim=1).argmax(dim=1).reshape(xx.shape).numpy()
        loss_curve = np.array(train_losses)
        gap = np.abs(loss_curve - np.array(test_losses)).max()
    """),
]


@pytest.fixture
def ip(parity_shell, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the checkpoint cell writes files
    return parity_shell


def test_course_notebook_cell_by_cell_in_one_shell(ip, tmp_path):
    reports, printed = parity_cells(ip, NOTEBOOK, f"--rtol {RTOL} --atol {ATOL}")
    train = reports[2]
    for name in ("train_losses", "test_losses", "test_acc", "acc"):
        assert train.row(name).status == "match", train.summary()
    assert "Epoch: 15 | Loss:" in printed[2]
    shadow = msmagic.shadow_namespace()
    np.testing.assert_allclose(shadow["loaded_logits"].asnumpy(), to_numpy(ip.user_ns["loaded_logits"]),
                               rtol=RTOL, atol=ATOL)
    assert isinstance(shadow["loaded_model"], ms.nn.Cell)
    assert (tmp_path / "models" / "course_model.pth").exists()
    assert np.array_equal(shadow["grid_pred"], ip.user_ns["grid_pred"])
    assert ip.user_ns["train_losses"][-1] < ip.user_ns["train_losses"][0]
