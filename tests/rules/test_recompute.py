"""Gradient checkpointing (RCP001), executed: ``checkpoint(fn, *args)`` is ``fn(*args)``
on the MindSpore side; outputs and a trained model agree, and the reentrant form is
flagged."""

from tests.rules.support import findings, run_pair, src

NET = """
    import torch
    import torch.nn as nn
    import torch.utils.checkpoint as cp
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 4))
            self.head = nn.Linear(4, 1)
        def forward(self, x):
            h = cp.checkpoint(self.inner, x, use_reentrant=False)
            return self.head(h)
    torch.manual_seed(0)
    net = Net()
    x = torch.linspace(-1, 1, 12).reshape(3, 4)
"""


def test_checkpointed_model_trains_as_pytorchs():
    run = run_pair(src(NET) + src("""
        opt = torch.optim.SGD(net.parameters(), lr=0.1)
        for step in range(3):
            opt.zero_grad()
            loss = net(x).pow(2).mean()
            loss.backward()
            opt.step()
        y = net(x)
        final = loss.item()
    """))
    assert run.torch_error is None and run.ms_error is None, run.explain()
    assert run.agree("y", "final"), run.explain()
    assert "checkpoint" not in run.port.code and "self.inner(x)" in run.port.code
    assert not findings(run)


def test_reentrant_checkpoint_is_ported_with_a_finding():
    run = run_pair(src("""
        import torch
        from torch.utils.checkpoint import checkpoint
        layer = torch.nn.Linear(3, 2)
        x = torch.ones(2, 3, requires_grad=True)
        y = checkpoint(layer, x)
        z = checkpoint(lambda t: t * 2, x, use_reentrant=True, preserve_rng_state=False)
    """))
    assert run.torch_error is None and run.ms_error is None, run.explain()
    assert run.agree("y", "z"), run.explain()
    assert findings(run) == {"RCP001"}
    assert "y = layer(x)  # msmagic: RCP001" in run.port.code
    assert "z = (lambda t: t * 2)(x)  # msmagic: RCP001" in run.port.code


def test_checkpoint_sequential_over_a_sequential_and_a_list():
    run = run_pair(src("""
        import torch
        import torch.nn as nn
        from torch.utils.checkpoint import checkpoint_sequential
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(4, 6), nn.ReLU(), nn.Linear(6, 2))
        x = torch.linspace(-2, 2, 12).reshape(3, 4)
        y = checkpoint_sequential(model, 2, x, use_reentrant=False)
        z = checkpoint_sequential([model[0], model[1]], 1, x, use_reentrant=False)
    """))
    assert run.torch_error is None and run.ms_error is None, run.explain()
    assert run.agree("y", "z"), run.explain()
    assert not findings(run)
