"""Parity keeps training comparable: optimizer steps run on PyTorch's gradients after the
gradients are compared, and random draws made inside loops are replayed in order. Both
are shown with real training loops, and each with the case where it must report a
difference."""

import textwrap


import msmagic
from msmagic.parity_check.compare import MATCH
from msmagic.parity_check.gradients import GRADIENT_RTOL

TRAIN = """
import torch
import torch.nn as nn
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 4))
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
x = torch.rand(50, 64)
y = torch.randint(0, 4, (50,))
for step in range(6):
    outputs = model(x)
    loss = criterion(outputs, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""


def _sync(report, name):
    return next(s for s in report.synchronised if s.startswith(f"{name}:"))


def test_adam_training_matches_with_gradients_compared_at_every_step():
    report = msmagic.parity(TRAIN)
    assert report.ok, report.summary()
    assert report.row("loss").status == MATCH and report.row("model.0.weight").status == MATCH
    assert "PyTorch's gradients used for 6 steps" in _sync(report, "optimizer")
    assert f"within {GRADIENT_RTOL:.0%}" in _sync(report, "optimizer")


def test_a_wrong_loss_shows_at_the_first_optimizer_step():
    """The MindSpore side's criterion sums where PyTorch averages (a porting error planted
    between two cells): the gradients are 50x larger, and the report says so at the
    training loop, while the weights still follow PyTorch's."""
    from msmagic.engine.session import PortSession

    setup, loop = TRAIN.split("for step in range(6):")
    user_ns, shadow, session = {"__name__": "__main__"}, {"__name__": "__shadow__"}, PortSession()
    first = msmagic.parity(setup, user_ns=user_ns, shadow=shadow, session=session)
    assert first.ok, first.summary()
    import mindspore

    shadow["criterion"] = lambda o, t: mindspore.ops.cross_entropy(o, t, reduction="sum")
    report = msmagic.parity("for step in range(6):" + loop, user_ns=user_ns, shadow=shadow, session=session)
    row = report.row("optimizer: gradients")
    assert row.status != MATCH and "at optimizer step 1" in row.note and "of the gradient's norm" in row.note
    assert report.first_divergence is not None and report.first_divergence.names == ["optimizer: gradients"]
    assert report.row("model.0.weight").status == MATCH
    assert report.row("loss").status != MATCH


BATCHNORM_CHAIN = """
import torch
import torch.nn as nn
torch.manual_seed(1)
layers = [nn.BatchNorm1d(1, momentum=0.5)]
for i in range(6):
    layers += [nn.Linear(1 if i == 0 else 10, 10), nn.BatchNorm1d(10, momentum=0.5), nn.Tanh()]
model = nn.Sequential(*layers, nn.Linear(10, 1))
optimizer = torch.optim.Adam(model.parameters(), lr=0.03)
x = torch.linspace(-7, 10, 64).unsqueeze(1)
y = x ** 2 - 5
for step in range(8):
    loss = nn.functional.mse_loss(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""


def test_gradients_that_batchnorm_cancels_are_compared_against_the_whole_step():
    """A Linear's bias before a BatchNorm (and the input BatchNorm's bias) has a gradient
    that is zero in exact arithmetic: in float32 it is rounding noise (1e-6 where the step's
    gradient norm is in the hundreds), different in each framework. morvan's BatchNorm
    tutorial: such a bias must not be reported as a porting error."""
    report = msmagic.parity(BATCHNORM_CHAIN)
    assert report.ok, (report.summary(), [(r.name, r.note) for r in report.rows if r.status != MATCH])
    assert "PyTorch's gradients used for 8 steps" in _sync(report, "optimizer")


def test_without_sync_the_steps_use_mindspore_gradients():
    report = msmagic.parity(TRAIN, sync=False)
    assert not any(s.startswith("optimizer:") for s in report.synchronised)


DRAWS = """
import torch
import torch.nn as nn
torch.manual_seed(0)
G = nn.Linear(2, 4)
samples = []
for step in range(3):
    z = torch.randn(5, 2)
    noise = torch.rand(5, 4) * 0.1
    samples.append(G(z) + noise)
out = torch.stack(samples)
"""


def test_draws_inside_a_loop_are_replayed_and_what_the_loop_binds_is_compared():
    report = msmagic.parity(DRAWS)
    assert report.ok, report.summary()
    assert "randn ×3" in _sync(report, "random draws") and "rand ×3" in _sync(report, "random draws")
    # z was compared, not copied: the replay covered every draw of the loop
    assert report.row("z").status == MATCH
    assert not any(s.startswith("z:") for s in report.synchronised)
    assert report.row("out").status == MATCH


def test_a_draw_of_another_shape_stops_the_replay_and_says_so():
    port = msmagic.port(DRAWS).code
    wrong = port.replace("mindspore.ops.randn(5, 2)", "mindspore.ops.randn(2, 5).T")
    assert wrong != port
    report = msmagic.parity(DRAWS, against=wrong)
    assert any("met PyTorch's of shape (5, 2)" in n for n in report.notes), report.notes


def test_draws_in_a_function_called_in_a_loop_are_replayed():
    source = textwrap.dedent("""
        import torch
        def noisy(x):
            return x + torch.randn(x.shape[0], 3)
        total = torch.zeros(4, 3)
        for _ in range(2):
            total = total + noisy(torch.ones(4, 3))
    """)
    report = msmagic.parity(source)
    assert report.ok, report.summary()
    assert report.row("total").status == MATCH


DYNAMIC_NET = """
import random
import torch
random.seed(3)
torch.manual_seed(0)
class DynamicNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.input_linear = torch.nn.Linear(6, 5)
        self.middle_linear = torch.nn.Linear(5, 5)
        self.output_linear = torch.nn.Linear(5, 2)
    def forward(self, x):
        h = self.input_linear(x).clamp(min=0)
        for _ in range(random.randint(0, 3)):
            h = self.middle_linear(h).clamp(min=0)
        return self.output_linear(h)
model = DynamicNet()
x, y = torch.randn(8, 6), torch.randn(8, 2)
criterion = torch.nn.MSELoss(reduction='sum')
optimizer = torch.optim.SGD(model.parameters(), lr=1e-3{MOMENTUM})
for t in range(12):
    loss = criterion(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""


def test_a_parameter_without_gradient_under_momentum_is_the_reported_difference():
    """jcjohnson's dynamic net: a forward that skips middle_linear leaves PyTorch's gradients
    None; PyTorch's SGD with momentum skips those parameters, MindSpore's steps them with
    zeros and its momentum moves them. Parity names that as the difference (both sides draw
    the same depths: Python's random state is shared per statement); plain SGD agrees."""
    momentum = msmagic.parity(DYNAMIC_NET.replace("{MOMENTUM}", ", momentum=0.9"))
    assert not momentum.ok
    row = momentum.row("optimizer: parameters without gradient")
    assert row.status != MATCH and "PyTorch had no gradient" in row.note, row.note
    assert momentum.first_divergence.names[0] == "optimizer: parameters without gradient"
    plain = msmagic.parity(DYNAMIC_NET.replace("{MOMENTUM}", ""))
    assert plain.ok, (plain.summary(), [(r.name, r.note) for r in plain.rows if r.status != MATCH])
    # morvan's BatchNorm tutorial: a layer the forward never uses (its gradient is None at
    # every step) keeps zero momentum and Adam moments on both sides: nothing moves, no row
    never = DYNAMIC_NET.replace("random.randint(0, 3)", "0").replace(
        "torch.optim.SGD(model.parameters(), lr=1e-3{MOMENTUM})", "torch.optim.Adam(model.parameters(), lr=1e-3)")
    unused = msmagic.parity(never)
    assert unused.ok, (unused.summary(), [(r.name, r.note) for r in unused.rows if r.status != MATCH])


SCRIPT = """
import torch
import torch.nn as nn
scale = 1.0
def criterion(outputs, target):
    return nn.functional.cross_entropy(outputs, target) * scale
if __name__ == "__main__":
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 4))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.rand(50, 64)
    y = torch.randint(0, 4, (50,))
    for step in range(6):
        loss = criterion(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
"""


def test_an_optimizer_built_in_the_statement_that_trains_steps_with_pytorch_gradients():
    """graykode's transformer script builds the model and its Adam and trains them in one
    ``if __name__ == "__main__":`` block: no name holds the optimizer before the loop runs.
    The MindSpore optimizer built in its place takes PyTorch's gradients (Adam moves an
    entry whose gradient is at rounding level by up to lr either way: unlinked, the 6-layer
    transformer's weights were reported 7e-5 apart after its third step)."""
    report = msmagic.parity(SCRIPT)
    assert report.ok, (report.summary(), [(r.name, r.note) for r in report.rows if r.status != MATCH])
    assert "PyTorch's gradients used for 6 steps" in _sync(report, "optimizer")
    assert report.row("loss").status == MATCH and report.row("model.0.weight").status == MATCH


def test_gradients_of_an_optimizer_built_in_the_statement_are_compared():
    """The loss the block computes is 50 times PyTorch's on the MindSpore side (a porting
    error planted in an earlier cell): the first step's gradients differ, and the report
    names the optimizer the block binds."""
    from msmagic.engine.session import PortSession

    head, block = SCRIPT.split('if __name__ == "__main__":')
    user_ns, shadow, session = {"__name__": "__main__"}, {"__name__": "__shadow__"}, PortSession()
    first = msmagic.parity(head, user_ns=user_ns, shadow=shadow, session=session)
    assert first.first_divergence is None and first.ms_error is None, first.summary()
    shadow["scale"] = 50.0
    report = msmagic.parity('if __name__ == "__main__":' + block, user_ns=user_ns, shadow=shadow,
                            session=session)
    row = report.row("optimizer: gradients")
    assert row.status != MATCH and "at optimizer step 1" in row.note, row.note


FIT = """
import torch
import torch.nn as nn
def fit(steps):
    torch.manual_seed(0)
    G = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 8))
    D = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
    opt_D = torch.optim.Adam(D.parameters(), lr=1e-3)
    opt_G = torch.optim.RMSprop(G.parameters(), lr=1e-3)
    for step in range(steps):
        z = torch.rand(32, 4)
        real = torch.rand(32, 8) + 1.0
        d_loss = -(torch.log(torch.sigmoid(D(real))) + torch.log(1 - torch.sigmoid(D(G(z).detach())))).mean()
        opt_D.zero_grad()
        d_loss.backward()
        opt_D.step()
        g_loss = -torch.log(torch.sigmoid(D(G(z)))).mean()
        opt_G.zero_grad()
        g_loss.backward()
        opt_G.step()
    return G, D
G, D = fit(5)
"""


def test_optimizers_built_in_a_function_pair_in_the_order_they_are_built():
    """A function that builds two models and their optimizers (of two kinds, with parameters
    of different sizes) and trains them: the k-th MindSpore optimizer built follows the k-th
    PyTorch one, before any name holds them."""
    report = msmagic.parity(FIT)
    assert report.ok, (report.summary(), [(r.name, r.note) for r in report.rows if r.status != MATCH])
    reasons = [s for s in report.synchronised if s.startswith("an optimizer built while the cell ran:")]
    assert reasons and all("PyTorch's gradients used for 5 steps" in s for s in reasons), report.synchronised
    assert report.row("G.2.weight").status == MATCH and report.row("D.0.weight").status == MATCH
