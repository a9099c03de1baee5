"""Gradient-mode switches (NGR*): unwrapped or removed; the evaluation code under them
must compute the same values as PyTorch."""

import ast

import torch

import msmagic
from msmagic.parity_check import run_pair
from tests.rules.support import rules, src

EVAL = src("""
    import torch
    import torch.nn as nn

    torch.manual_seed(0)
    X = torch.randn(20, 4)
    Y = torch.tensor([0, 1, 2, 1, 0] * 4)
    model = nn.Sequential(nn.Linear(4, 6), nn.Tanh(), nn.Linear(6, 3))
    model.eval()
    correct = 0
    scores = []
    with torch.no_grad():  # evaluation
        for i in range(0, 20, 5):
            logits = model(X[i:i + 5])
            scores.append(logits.max(1)[0].sum().item())
            correct += (logits.argmax(1) == Y[i:i + 5]).sum().item()
    accuracy = correct / 20
""")


def _run(source):
    run = run_pair(source, rtol=1e-5, atol=1e-6)
    assert run.torch_error is None and run.ms_error is None, run.explain()
    return run


def test_eval_loop_under_no_grad_is_unwrapped_and_matches():
    run = _run(EVAL)
    code = run.port.code
    assert "with" not in code and "no_grad" not in code
    assert "# evaluation\nfor i in range(0, 20, 5):\n    logits = model(X[i:i + 5])\n" in code  # dedented
    assert "NGR001" in rules(run)
    assert run.agree("accuracy", "scores", "correct", "logits"), run.explain()
    assert msmagic.port(code).code == code


def test_inside_a_function_and_next_to_other_context_managers():
    source = src("""
        import contextlib
        import torch
        import torch.nn as nn

        model = nn.Linear(3, 2)
        def predict(x):
            with torch.inference_mode(), contextlib.nullcontext():
                out = model(x)
            with torch.enable_grad(): twice = out * 2
            return twice

        y = predict(torch.ones(4, 3))
    """)
    run = _run(source)
    assert "    with contextlib.nullcontext():\n        out = model(x)\n    twice = out * 2\n" in run.port.code
    assert run.agree("y"), run.explain()


def test_no_grad_decorator_removed():
    source = src("""
        import torch
        import torch.nn as nn

        model = nn.Linear(4, 3)

        # predictions only
        @torch.no_grad()
        def predict(x):
            return model(x).argmax(1)

        pred = predict(torch.arange(8.0).reshape(2, 4))
    """)
    run = _run(source)
    assert "# predictions only\ndef predict(x):" in run.port.code and "@" not in run.port.code
    assert "NGR002" in rules(run)
    assert run.agree("pred"), run.explain()


def test_set_grad_enabled_as_with_and_as_statement():
    source = src("""
        import torch
        import torch.nn as nn

        model = nn.Linear(4, 3)
        x = torch.ones(2, 4)
        training = False
        with torch.set_grad_enabled(training):
            a = model(x)
        torch.set_grad_enabled(False)
        b = model(x) + 1
        if training:
            torch.set_grad_enabled(True)
    """)
    try:
        run = _run(source)
    finally:
        torch.set_grad_enabled(True)  # the PyTorch side switched it off for this process
    code = run.port.code
    assert "set_grad_enabled" not in code and "with" not in code
    assert "if training:\n    pass\n" in code  # an emptied block keeps a pass
    assert {"NGR001", "NGR003"} <= rules(run)
    assert run.agree("a", "b"), run.explain()


def test_grad_mode_used_as_a_value_is_flagged():
    out = msmagic.port("import torch\nctx = torch.no_grad()\n")
    assert [f.rule_id for f in out.unsupported] == ["NGR001"]
    assert out.unsupported[0].line == 2
    assert "# msmagic: NGR001" in out.code
    ast.parse(out.code)


def test_unwrapped_test_pass_inside_a_training_loop():
    """The with body joins the loop body (one statement becomes two): the training step
    of the same loop is still rewritten, and the evaluation computes the same values."""
    run = _run(src("""
        import torch
        import torch.nn as nn

        torch.manual_seed(0)
        X = torch.randn(12, 4)
        y = torch.randn(12, 1)
        model = nn.Linear(4, 1)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        test_losses = []
        for epoch in range(3):
            model.train()
            optimizer.zero_grad()
            loss = ((model(X[:8]) - y[:8]) ** 2).mean()
            loss.backward()
            optimizer.step()
            model.eval()
            with torch.no_grad():
                test_loss = ((model(X[8:]) - y[8:]) ** 2).mean()
                test_losses.append(test_loss.item())
    """))
    code = run.port.code
    assert "no_grad" not in code and "backward" not in code
    assert "    test_loss = ((model(X[8:]) - y[8:]) ** 2).mean()\n    test_losses.append" in code
    assert {"NGR001", "TRN001"} <= rules(run)
    assert run.agree("test_losses", "loss", "test_loss"), run.explain()
