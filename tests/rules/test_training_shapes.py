"""Training steps of the shapes real tutorials write (TRN001, TRN002), executed: a device
branch before the forward pass (``if train_on_gpu: data, target = data.cuda(), ...``),
``net.zero_grad()`` with ``opt.step()``, gradient clipping between backward and step, a
recurrent hidden state that is both input and output of the forward pass,
``zero_grad(set_to_none=True)``, and steps inside functions that receive the model, the
optimizer and the data as parameters and are called from a later cell. Losses and trained
weights must match PyTorch's."""

import re

import numpy as np
import pytest

import msmagic
from msmagic.parity_check import ms_name_for, run_pair, to_numpy
from tests.rules.support import parity_cells, src

RTOL, ATOL = 1e-4, 1e-5


def _trained_alike(tmod, cell):
    params = {p.name: p for p in cell.get_parameters()}
    for n, p in tmod.named_parameters():
        got = params[ms_name_for(tmod, n)].asnumpy().reshape(tuple(p.shape))
        np.testing.assert_allclose(got, to_numpy(p), rtol=RTOL, atol=ATOL, err_msg=n)


CHAR_RNN = [
    src("""
        import numpy as np
        import torch
        import torch.nn as nn
        train_on_gpu = False

        class CharRNN(nn.Module):
            def __init__(self, n_chars=4, n_hidden=8):
                super().__init__()
                self.n_hidden = n_hidden
                self.lstm = nn.LSTM(n_chars, n_hidden, 1, batch_first=True)
                self.fc = nn.Linear(n_hidden, n_chars)

            def forward(self, x, hidden):
                out, hidden = self.lstm(x, hidden)
                return self.fc(out.reshape(-1, self.n_hidden)), hidden

            def init_hidden(self, batch_size):
                return (torch.zeros(1, batch_size, self.n_hidden), torch.zeros(1, batch_size, self.n_hidden))

        torch.manual_seed(0)
        net = CharRNN()
        rng = np.random.default_rng(0)
        data = [(rng.random((2, 5, 4), dtype=np.float32), rng.integers(0, 4, (2, 5))) for _ in range(3)]
    """),
    src("""
        def train(net, data, epochs=2, lr=0.01, clip=5):
            net.train()
            opt = torch.optim.Adam(net.parameters(), lr=lr)
            criterion = nn.CrossEntropyLoss()
            losses = []
            for e in range(epochs):
                h = net.init_hidden(2)
                for x, y in data:
                    inputs, targets = torch.from_numpy(x), torch.from_numpy(y)
                    if(train_on_gpu):
                        inputs, targets = inputs.cuda(), targets.cuda()
                    # new variables for the hidden state, not backprop through the history
                    h = tuple([each.data for each in h])
                    net.zero_grad()
                    output, h = net(inputs, h)
                    loss = criterion(output, targets.view(2 * 5).long())
                    loss.backward()
                    nn.utils.clip_grad_norm_(net.parameters(), clip)
                    opt.step()
                    losses.append(loss.item())
            return losses

        ready = True
    """),
    src("""
        losses = train(net, data)
    """),
]


def test_recurrent_step_in_a_function_called_from_a_later_cell(parity_shell):
    """udacity char-RNN / sentiment RNN: the hidden state h is prepared before the forward
    pass and both an input and an output of it; the device branch stays in the loop."""
    reports, _ = parity_cells(parity_shell, CHAR_RNN, f"--rtol {RTOL} --atol {ATOL}")
    assert reports[2].row("losses").status == "match", reports[2].summary()
    assert len(parity_shell.user_ns["losses"]) == 6
    _trained_alike(parity_shell.user_ns["net"], msmagic.shadow_namespace()["net"])
    code = reports[1].port.code
    assert "    def forward_fn(inputs, h, targets):\n" in code
    assert "            (loss, output, h), grads = grad_fn(inputs, h, targets)\n" in code
    # mindspore.ops, or an alias of it an earlier cell of the shared shell imported
    assert re.search(r"grads = [\w.]+\.clip_by_global_norm\(grads, clip\)", code), code
    assert not [f for f in reports[1].port.unsupported if f.rule_id.startswith("TRN")]


def test_step_after_a_device_branch_with_set_to_none():
    """udacity CIFAR-10: ``if train_on_gpu: data, target = data.cuda(), target.cuda()``
    before the step, zero_grad(set_to_none=True), the running loss weighted by the batch
    size."""
    run = run_pair(src("""
        import torch
        import torch.nn as nn
        torch.manual_seed(0)
        train_on_gpu = torch.cuda.is_available()
        model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))
        criterion = nn.CrossEntropyLoss()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
        train_loader = [(torch.randn(4, 6), torch.randint(0, 3, (4,))) for _ in range(3)]
        history = []
        for epoch in range(1, 3):
            train_loss = 0.0
            model.train()
            for data, target in train_loader:
                if train_on_gpu:
                    data, target = data.cuda(), target.cuda()
                optimizer.zero_grad(set_to_none=True)
                output = model(data)
                loss = criterion(output, target)
                loss.backward()
                optimizer.step()
                train_loss += loss.item()*data.size(0)
            history.append(train_loss / 12)
    """), rtol=RTOL, atol=ATOL)
    assert run.torch_error is None and run.ms_error is None, run.explain()
    assert run.agree("history", "train_loss"), run.explain()
    _trained_alike(run.torch_ns["model"], run.ms_ns["model"])
    assert "def forward_fn(data, target):" in run.port.code and not run.port.unsupported


TUTORIAL = [
    src("""
        import torch
        from torch import nn
        torch.manual_seed(0)
        X = torch.randn(24, 5)
        Y = (X.sum(1) > 0).long()
        dataloader = [(X[i:i + 8], Y[i:i + 8]) for i in range(0, 24, 8)]
        model = nn.Sequential(nn.Linear(5, 6), nn.ReLU(), nn.Linear(6, 2))
        loss_fn = nn.CrossEntropyLoss()
        optimizer = torch.optim.SGD(model.parameters(), lr=1e-1)
    """),
    src("""
        def train(dataloader, model, loss_fn, optimizer):
            size = len(dataloader)
            model.train()
            for batch, (X, y) in enumerate(dataloader):
                pred = model(X)
                loss = loss_fn(pred, y)
                loss.backward()
                optimizer.step()
                optimizer.zero_grad()
                if batch % 2 == 0:
                    last = f"loss: {loss.item():>7f}  [{batch:>5d}/{size:>5d}]"
            return last

        ready = True
    """),
    src("""
        printed = [train(dataloader, model, loss_fn, optimizer) for t in range(3)]
    """),
]


def test_the_tutorials_train_function_receives_everything(parity_shell):
    """The PyTorch quickstart: ``def train(dataloader, model, loss_fn, optimizer)`` with
    zero_grad after the step, defined in one cell and called from the next."""
    reports, _ = parity_cells(parity_shell, TUTORIAL, f"--rtol {RTOL} --atol {ATOL}")
    assert parity_shell.user_ns["printed"] == msmagic.shadow_namespace()["printed"]
    _trained_alike(parity_shell.user_ns["model"], msmagic.shadow_namespace()["model"])
    assert "        (loss, pred), grads = grad_fn(X, y)\n        optimizer(grads)\n" in reports[1].port.code


def _bce_training(loss_line: str, in_function: bool):
    step = src(f"""
        def train(model, batches, optimizer):
            {loss_line}
            history = []
            for epoch in range(2):
                for xb, yb in batches:
                    optimizer.zero_grad()
                    loss = criterion(model(xb), yb)
                    loss.backward()
                    optimizer.step()
                    history.append(loss.item())
            return history
        history = train(model, batches, optimizer)
    """) if in_function else src(f"""
        {loss_line}
        history = []
        for epoch in range(2):
            for xb, yb in batches:
                optimizer.zero_grad()
                loss = criterion(model(xb), yb)
                loss.backward()
                optimizer.step()
                history.append(loss.item())
    """)
    return src("""
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 2))
        optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
        # the last batch is smaller, as in every epoch of a DataLoader without drop_last
        batches = [(torch.randn(n, 5), (torch.rand(n, 2) > 0.5).float()) for n in (8, 8, 3)]
    """) + step


@pytest.mark.parametrize("loss_line", [
    "criterion = nn.BCEWithLogitsLoss()",
    "criterion = nn.BCEWithLogitsLoss(pos_weight=torch.tensor([1.0, 3.0]))",
    "criterion = lambda out, y: F.binary_cross_entropy_with_logits(out, y)",
])
@pytest.mark.parametrize("in_function", [False, True], ids=["top level", "in a function"])
def test_bce_with_logits_trains_alike_when_the_last_batch_is_smaller(loss_line, in_function):
    """MindSpore 2.10's BCEWithLogitsLoss mean has the right value but, once the batch size
    changes, a gradient scaled by the first batch's size: the port averages the
    reduction='none' loss itself (FUN008, FUN014)."""
    run = run_pair(_bce_training(loss_line, in_function), rtol=RTOL, atol=ATOL)
    assert run.torch_error is None and run.ms_error is None, run.explain()
    assert run.agree("history"), run.explain()
    _trained_alike(run.torch_ns["model"], run.ms_ns["model"])
    assert 'reduction="none").mean()' in run.port.code and not run.port.unsupported


def test_a_step_in_a_functions_own_body_is_defined_where_its_optimizer_is_bound():
    """The step sits directly in the function (no loop), with the optimizers as parameters
    (a GAN's train_discriminator(opt_D, ...)): forward_fn and value_and_grad go inside the
    function, before the step, not before the def where opt_D is not bound."""
    run = run_pair(src("""
        import torch
        import torch.nn as nn
        torch.manual_seed(0)
        G = nn.Linear(3, 3)
        D = nn.Sequential(nn.Linear(3, 1), nn.Sigmoid())
        crit = nn.BCELoss()

        def step(G, D, opt_G, opt_D, z, real):
            opt_D.zero_grad()
            d_loss = crit(D(real), torch.ones(4, 1)) + crit(D(G(z).detach()), torch.zeros(4, 1))
            d_loss.backward()
            opt_D.step()
            opt_G.zero_grad()
            g_loss = crit(D(G(z)), torch.ones(4, 1))
            g_loss.backward()
            opt_G.step()
            return d_loss.item(), g_loss.item()

        opt_G = torch.optim.Adam(G.parameters(), lr=0.01)
        opt_D = torch.optim.SGD(D.parameters(), lr=0.1)
        history = [step(G, D, opt_G, opt_D, torch.randn(4, 3), torch.rand(4, 3)) for _ in range(3)]
    """), rtol=RTOL, atol=ATOL)
    assert run.torch_error is None and run.ms_error is None, run.explain()
    assert run.agree("history"), run.explain()
    _trained_alike(run.torch_ns["G"], run.ms_ns["G"])
    _trained_alike(run.torch_ns["D"], run.ms_ns["D"])
    assert "    grad_fn = mindspore.value_and_grad(forward_fn, None, opt_D.parameters)" in run.port.code


# uvadlc tutorial 3 (activation functions): the gradients of one batch are plotted: the
# model's gradients are zeroed, one forward pass and backward(), and the .grad of each
# weight read, with no optimizer step
GRADIENT_PLOT_SETUP = src("""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(6, 5), nn.Tanh(), nn.Linear(5, 3))
    x = torch.randn(8, 6)
    y = torch.tensor([0, 1, 2, 0, 1, 2, 0, 1])
""")

GRADIENT_PLOT_FUNCTION = src("""
    def visualize_gradients(net, imgs, labels, color="C0"):
        net.eval()
        imgs, labels = imgs.to("cpu"), labels.to("cpu")

        # Pass one batch through the network, and calculate the gradients for the weights
        net.zero_grad()
        preds = net(imgs)
        loss = F.cross_entropy(preds, labels)
        loss.backward()
        # We limit our visualization to the weight parameters
        grads = {name: params.grad.data.view(-1).cpu().clone().numpy() for name, params in net.named_parameters() if "weight" in name}
        last = net[2].bias.grad.clone()
        net.zero_grad()
        return grads, last
""")


def test_gradients_read_after_backward_at_the_top_level():
    run = run_pair(GRADIENT_PLOT_SETUP + src("""
        net.zero_grad()
        preds = net(x)
        loss = F.cross_entropy(preds, y)
        loss.backward()
        grads = {name: params.grad.data.view(-1).cpu().clone().numpy() for name, params in net.named_parameters() if "weight" in name}
        w_grads = list(grads.values())
    """), rtol=RTOL, atol=ATOL)
    assert run.torch_error is None and run.ms_error is None, run.explain()
    assert run.row("w_grads").status == "match" and run.row("grads").status == "match", run.explain()
    assert len(run.ms_ns["w_grads"]) == 2 and np.abs(run.ms_ns["w_grads"][0]).sum() > 0
    assert ".get(params)" in run.port.code and "params.grad" not in run.port.code
    assert not [f for f in run.port.unsupported if f.rule_id.startswith("TRN")]


def test_gradients_read_in_a_function_receiving_the_model():
    run = run_pair(GRADIENT_PLOT_SETUP + GRADIENT_PLOT_FUNCTION
                   + "grads, last = visualize_gradients(net, x, y)\nw_grads = list(grads.values())\n",
                   rtol=RTOL, atol=ATOL)
    assert run.torch_error is None and run.ms_error is None, run.explain()
    for name in ("w_grads", "last"):
        assert run.row(name).status == "match", run.explain()
    assert [g.shape for g in run.ms_ns["w_grads"]] == [(30,), (15,)]
    code = run.port.code
    assert "zero_grad" not in code and ".grad" not in code and "backward" not in code
    assert "        return loss, preds\n" in code
    assert "    grad_of = dict(zip(net.trainable_params(), grads2))\n" in code
    assert not [f for f in run.port.unsupported if f.rule_id.startswith("TRN")]
    assert msmagic.port(code).code == code


def test_gradients_read_in_a_function_called_from_a_later_cell(parity_shell):
    cells = [GRADIENT_PLOT_SETUP, GRADIENT_PLOT_FUNCTION + "ready = True\n", src("""
        for i in range(2):
            grads, last = visualize_gradients(net, x * (i + 1), y)
        w_grads = list(grads.values())
    """)]
    reports, _ = parity_cells(parity_shell, cells, f"--rtol {RTOL} --atol {ATOL}")
    assert reports[2].row("w_grads").status == "match", reports[2].summary()
    assert reports[2].row("last").status == "match", reports[2].summary()
    torch_grads = parity_shell.user_ns["w_grads"]
    ms_grads = msmagic.shadow_namespace()["w_grads"]
    assert len(ms_grads) == 2
    np.testing.assert_allclose(ms_grads[1], torch_grads[1], rtol=RTOL, atol=ATOL)


def test_gradients_read_after_a_second_zero_grad_are_flagged():
    """PyTorch's .grad is None after the second zero_grad(): not rewritten."""
    r = msmagic.port(GRADIENT_PLOT_SETUP + src("""
        def f(net, imgs, labels):
            net.zero_grad()
            loss = F.cross_entropy(net(imgs), labels)
            loss.backward()
            net.zero_grad()
            return net[0].weight.grad
    """))
    assert "TRN004" in {f.rule_id for f in r.unsupported}
    assert "backward() not ported" in r.code
