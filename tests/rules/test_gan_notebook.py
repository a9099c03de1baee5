"""A GAN notebook (TRN007, OPT003, parity's draw replay and gradient lockstep), executed
cell by cell under ``%%ms_parity`` in one IPython shell as a user runs it: shuffled
random data, a discriminator and a generator with two Adam optimizers and a
``reset_grad()`` helper, a training loop that draws fresh noise at every step and steps
both optimizers, then sampling under no_grad and a checkpoint. Every cell must match
with the default tolerance, and the reports must say what was taken from PyTorch."""

import numpy as np
import pytest

import msmagic
from msmagic.parity_check import to_numpy
from tests.rules.support import parity_cells, src

NOTEBOOK = [
    src("""
        import torch
        import torch.nn as nn

        torch.manual_seed(0)
        latent_size, image_size, batch_size = 8, 16, 10
        data = torch.utils.data.TensorDataset(torch.rand(40, image_size) * 2 - 1, torch.randint(0, 3, (40,)))
        loader = torch.utils.data.DataLoader(data, batch_size=batch_size, shuffle=True)
    """),
    src("""
        D = nn.Sequential(nn.Linear(image_size, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1), nn.Sigmoid())
        G = nn.Sequential(nn.Linear(latent_size, 32), nn.ReLU(), nn.Linear(32, image_size), nn.Tanh())
        criterion = nn.BCELoss()
        d_optimizer = torch.optim.Adam(D.parameters(), lr=0.0002)
        g_optimizer = torch.optim.Adam(G.parameters(), lr=0.0002)

        def reset_grad():
            d_optimizer.zero_grad()
            g_optimizer.zero_grad()
    """),
    src("""
        d_losses, g_losses = [], []
        for epoch in range(2):
            for images, _ in loader:
                real_labels = torch.ones(batch_size, 1)
                fake_labels = torch.zeros(batch_size, 1)

                outputs = D(images)
                d_loss_real = criterion(outputs, real_labels)
                real_score = outputs
                z = torch.randn(batch_size, latent_size)
                fake_images = G(z)
                outputs = D(fake_images)
                d_loss_fake = criterion(outputs, fake_labels)
                d_loss = d_loss_real + d_loss_fake
                reset_grad()
                d_loss.backward()
                d_optimizer.step()

                z = torch.randn(batch_size, latent_size)
                fake_images = G(z)
                g_loss = criterion(D(fake_images), real_labels)
                reset_grad()
                g_loss.backward()
                g_optimizer.step()
                d_losses.append(d_loss.item())
                g_losses.append(g_loss.item())
            print(f"epoch {epoch}: d_loss {d_loss:.4f}, g_loss {g_loss:.4f}, D(x) {real_score.mean():.2f}")
    """),
    src("""
        with torch.no_grad():
            samples = G(torch.randn(4, latent_size))
        torch.save(G.state_dict(), "G.ckpt")
        curve = torch.tensor(g_losses).numpy()
    """),
]


@pytest.fixture
def ip(parity_shell, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the checkpoint cell writes files
    return parity_shell


def _synced(report, name):
    return next((s for s in report.synchronised if s.startswith(f"{name}:")), "")


def test_gan_notebook_cell_by_cell_in_one_shell(ip, tmp_path):
    reports, printed = parity_cells(ip, NOTEBOOK)
    setup, models, train, sample = reports
    assert "PyTorch's shuffle order used" in _synced(setup, "loader")
    assert "TRN007" in train.port.rule_ids and "OPT003" in models.port.rule_ids
    # both optimizers stepped on PyTorch's gradients after agreeing with them, and the
    # noise drawn in the loop was PyTorch's
    for opt in ("d_optimizer", "g_optimizer"):
        assert "PyTorch's gradients used for 8 steps (the gradients MindSpore computed agreed" in _synced(train, opt)
    assert "randn ×16" in _synced(train, "random draws")
    for name in ("d_losses", "g_losses", "real_score", "z", "D.0.weight", "G.2.bias"):
        assert train.row(name).status == "match", train.summary()
    assert "epoch 1: d_loss" in printed[2]
    shadow = msmagic.shadow_namespace()
    np.testing.assert_allclose(shadow["samples"].asnumpy(), to_numpy(ip.user_ns["samples"]), rtol=1e-5, atol=1e-5)
    assert (tmp_path / "G.ckpt").exists()
    assert ip.user_ns["g_losses"] != ip.user_ns["d_losses"]


MORVAN_GAN = [
    src("""
        import torch
        import torch.nn as nn
        G = nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, 8))
        D = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1), nn.Sigmoid())
        opt_D = torch.optim.Adam(D.parameters(), lr=0.0001)
        opt_G = torch.optim.Adam(G.parameters(), lr=0.0001)
        def artist_works():
            return torch.linspace(-1, 1, 8).repeat(6, 1) * 2
    """),
    src("""
        for step in range(4):
            artist_paintings = artist_works()
            G_ideas = torch.randn(6, 5, requires_grad=True)  # the noise asks for a gradient nobody reads
            G_paintings = G(G_ideas)
            prob_artist1 = D(G_paintings)
            G_loss = torch.mean(torch.log(1. - prob_artist1))
            opt_G.zero_grad()
            G_loss.backward()
            opt_G.step()

            prob_artist0 = D(artist_paintings)
            prob_artist1 = D(G_paintings.detach())
            D_loss = - torch.mean(torch.log(prob_artist0) + torch.log(1. - prob_artist1))
            opt_D.zero_grad()
            D_loss.backward(retain_graph=True)
            opt_D.step()
    """),
]


def test_gan_with_requires_grad_noise_is_a_training_step(ip):
    """Morvan's GAN draws its noise with ``requires_grad=True`` and reads no ``.grad``: the
    two optimizer steps are ported as training steps (not as a gradient of the noise)
    and both models train as in PyTorch."""
    reports, _ = parity_cells(ip, MORVAN_GAN)
    train = reports[1]
    assert "TRN007" in train.port.rule_ids and not train.port.unsupported, train.port.code
    for name in ("G_loss", "D_loss", "G.0.weight", "D.2.bias"):
        assert train.row(name).status == "match", train.summary()


OPTIMIZER_ZOO = [
    src("""
        import torch
        import torch.nn as nn
        x = torch.linspace(-1, 1, 32).reshape(32, 1)
        y = x.pow(2)
        nets = [nn.Sequential(nn.Linear(1, 8), nn.ReLU(), nn.Linear(8, 1)) for _ in range(3)]
        optimizers = [torch.optim.SGD(nets[0].parameters(), lr=0.05),
                      torch.optim.SGD(nets[1].parameters(), lr=0.05, momentum=0.8),
                      torch.optim.Adam(nets[2].parameters(), lr=0.01, betas=(0.9, 0.99))]
        loss_func = nn.MSELoss()
        losses_his = [[], [], []]
    """),
    src("""
        def train(epochs):
            for epoch in range(epochs):
                for net, opt, l_his in zip(nets, optimizers, losses_his):
                    output = net(x)
                    loss = loss_func(output, y)
                    opt.zero_grad()
                    loss.backward()
                    opt.step()
                    l_his.append(loss.item())
        train(3)
        for net, opt in zip(nets, optimizers):
            opt.zero_grad()
            loss_func(net(x), y).backward()
            opt.step()
        final = [net(x) for net in nets]
    """),
    src("""
        hist = torch.tensor(losses_his)
    """),
]


def test_optimizer_bound_by_the_loop_that_steps_it(ip):
    """Morvan's optimizer comparison: ``for net, opt, l_his in zip(nets, optimizers,
    losses_his)``: the optimizer is the loop's own variable, so the forward function and
    value_and_grad are made inside that loop (in a function and at top level)."""
    reports, _ = parity_cells(ip, OPTIMIZER_ZOO)
    train = reports[1]
    assert not train.port.unsupported, train.port.code
    assert "opt.parameters" in train.port.code
    assert train.row("final").status == "match", train.summary()
    assert reports[2].row("hist").status == "match" and reports[2].row("hist").torch_shape == (3, 3)


SIDE_BY_SIDE = [
    src("""
        import torch
        import torch.nn as nn
        torch.manual_seed(1)
        x = torch.unsqueeze(torch.linspace(-1, 1, 20), 1)
        y = x + 0.3 * torch.normal(torch.zeros(20, 1), torch.ones(20, 1))
        net_overfitting = nn.Sequential(nn.Linear(1, 32), nn.ReLU(), nn.Linear(32, 1))
        net_dropped = nn.Sequential(nn.Linear(1, 32), nn.Dropout(0.5), nn.ReLU(), nn.Linear(32, 1))
        optimizer_ofit = torch.optim.Adam(net_overfitting.parameters(), lr=0.01)
        optimizer_drop = torch.optim.SGD(net_dropped.parameters(), lr=0.1, momentum=0.5)
        loss_func = torch.nn.MSELoss()
    """),
    src("""
        def fit(steps, net_a, net_b, opt_a, opt_b):
            history = []
            for t in range(steps):
                pred_a = net_a(x)
                pred_b = net_b(x)
                loss_a = loss_func(pred_a, y)
                loss_b = loss_func(pred_b, y)
                opt_a.zero_grad()
                opt_b.zero_grad()
                loss_a.backward()
                loss_b.backward()
                opt_a.step()
                opt_b.step()
                history.append((loss_a.item(), loss_b.item()))
            return history
        history = fit(5, net_overfitting, net_dropped, optimizer_ofit, optimizer_drop)
        for t in range(3):
            pred_ofit = net_overfitting(x)
            pred_drop = net_dropped(x)
            loss_ofit = loss_func(pred_ofit, y)
            loss_drop = loss_func(pred_drop, y)
            optimizer_ofit.zero_grad()
            optimizer_drop.zero_grad()
            loss_ofit.backward()
            loss_drop.backward()
            optimizer_ofit.step()
            optimizer_drop.step()
        net_overfitting.eval()
        net_dropped.eval()
        final = (net_overfitting(x), net_dropped(x))
    """),
]


def test_two_models_trained_side_by_side_in_one_block(ip):
    """Morvan's dropout comparison zeroes both optimizers, runs both backward() calls,
    then steps both: each optimizer steps on the gradient of the summed losses with
    respect to its own parameters (what PyTorch accumulated), at top level and in a
    function given the models and optimizers; dropout masks replayed."""
    reports, _ = parity_cells(ip, SIDE_BY_SIDE)
    train = reports[1]
    assert not train.port.unsupported, train.port.code
    assert "(*opt_a.parameters, *opt_b.parameters)" in train.port.code and "TRN007" in train.port.rule_ids
    assert "[len(optimizer_ofit.parameters):])" in train.port.code and "opt_a(grads[:len(opt_a.parameters)])" in train.port.code
    for name in ("history", "final", "loss_ofit", "loss_drop"):
        assert train.row(name).status == "match", train.summary()
