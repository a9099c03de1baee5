"""Tensors that require gradients read by the notebook's functions as globals (GRD001),
executed: the official nn tutorial makes ``weights`` and ``bias`` require gradients in
one cell, defines ``def model(xb): return log_softmax(xb @ weights + bias)`` in the next
and trains in a third with ``loss.backward()`` and ``weights -= weights.grad * lr``. The
function differentiated defines ``model`` again inside it, so that it reads the
function's parameters; the weights trained on both sides must agree, wherever the pieces
are."""

import msmagic
from msmagic.parity_check import run_pair
from tests.rules.support import parity_cells, src

WEIGHTS = src("""
    import math
    import torch

    torch.manual_seed(0)
    x_train = torch.randn(64, 20)
    y_train = torch.randint(0, 10, (64,))
    n = 64
    weights = torch.randn(20, 10) / math.sqrt(20)
    weights.requires_grad_()
    bias = torch.zeros(10, requires_grad=True)
""")

FUNCTIONS = src("""
    def log_softmax(x):
        return x - x.exp().sum(-1).log().unsqueeze(-1)

    def model(xb):
        return log_softmax(xb @ weights + bias)

    def nll(input, target):
        return -input[range(target.shape[0]), target].mean()

    loss_func = nll
""")

TRAIN = src("""
    bs, lr = 16, 0.5
    for epoch in range(2):
        for i in range((n - 1) // bs + 1):
            start_i = i * bs
            end_i = start_i + bs
            xb = x_train[start_i:end_i]
            yb = y_train[start_i:end_i]
            pred = model(xb)
            loss = loss_func(pred, yb)

            loss.backward()
            with torch.no_grad():
                weights -= weights.grad * lr
                bias -= bias.grad * lr
                weights.grad.zero_()
                bias.grad.zero_()
    final = loss_func(model(x_train), y_train)
""")


def _run(source):
    run = run_pair(source, rtol=1e-4, atol=1e-5)
    assert run.torch_error is None and run.ms_error is None, run.explain()
    assert msmagic.port(run.port.code).code == run.port.code
    assert not [f for f in run.port.unsupported if f.rule_id.startswith(("TRN", "GRD"))], run.port.unsupported
    return run


def test_the_nn_tutorials_loop_in_one_cell():
    run = _run(WEIGHTS + FUNCTIONS + TRAIN)
    assert run.agree("final", "weights", "bias", "loss"), run.explain()
    assert float(run.torch_ns["final"]) < 2.3  # it trained
    code = run.port.code
    assert "def _loss_fn(weights, bias):\n            def model(xb):" in code
    assert "mindspore.grad(_loss_fn, grad_position=(0, 1))(weights, bias)" in code


def test_a_helper_the_model_calls_reads_the_bias():
    """Transitively: ``model`` calls ``affine``, which reads ``bias``: both are defined
    again in the function, ``bias`` is differentiated too."""
    functions = FUNCTIONS.replace(
        "def model(xb):\n    return log_softmax(xb @ weights + bias)",
        "def affine(h):\n    return h + bias\n\ndef model(xb):\n    return log_softmax(affine(xb @ weights))")
    run = _run(WEIGHTS + functions + TRAIN)
    assert run.agree("final", "weights", "bias"), run.explain()
    assert "def affine(h):" in run.port.code.split("def _loss_fn")[1]


def test_weights_functions_and_training_in_separate_cells(parity_shell):
    reports, _ = parity_cells(parity_shell, [WEIGHTS, FUNCTIONS + "k = 1\n", TRAIN])
    assert reports[2].row("final").status == "match"
    assert reports[2].row("weights").status == "match"
    assert not [f for f in reports[2].port.unsupported if f.rule_id.startswith(("TRN", "GRD"))]


def test_a_function_that_declares_the_weights_global_is_not_redefined():
    """``global`` in the function: defined again inside, it would assign the notebook's
    name, not read the parameter; the backward is flagged instead."""
    functions = FUNCTIONS.replace("def model(xb):\n    return", "def model(xb):\n    global weights\n    return")
    result = msmagic.port(WEIGHTS + functions + TRAIN)
    assert "def _loss_fn" not in result.code
    assert {"TRN004"} <= {f.rule_id for f in result.unsupported} or {"GRD006"} <= {
        f.rule_id for f in result.unsupported}
