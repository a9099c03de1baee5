"""Shuffled loaders under parity (LDR003, LDR009, LDR010): the MindSpore side iterates in
the order the PyTorch loader drew, epoch by epoch (a RandomSampler's permutation or a
SubsetRandomSampler's indices), and a random_split holds PyTorch's rows, so a shuffled
training loop compares step by step; plain MindSpore runs still shuffle, in MindSpore's
own order."""

import mindspore as ms
import numpy as np
import pytest

import msmagic
from msmagic.engine.session import PortSession
from tests.rules.support import findings, run_pair, src

DATA = """
    import torch
    import torch.nn as nn
    from torch.utils.data import TensorDataset, DataLoader
    torch.manual_seed(0)
    x = torch.randn(22, 3)
    y = torch.randint(0, 2, (22,))
"""

TRAIN = """
    model = nn.Linear(3, 2)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    losses, seen = [], []
    for epoch in range(2):
        for xb, yb in train_loader:
            out = model(xb)
            loss = criterion(out, yb)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
            seen.append(yb.tolist())
"""


def _run(*parts, **kw):
    run = run_pair("".join(src(p) for p in (DATA, *parts)), **kw)
    assert run.torch_error is None and run.ms_error is None, run.explain()
    return run


def _epochs(seen, per_epoch):
    return [sum(seen[i:i + per_epoch], []) for i in range(0, len(seen), per_epoch)]


def test_shuffled_two_epoch_training_loop_matches_under_parity():
    run = _run("""
        ds = TensorDataset(x, y)
        train_loader = DataLoader(ds, batch_size=6, shuffle=True)
    """, TRAIN)
    assert "train_loader = DataLoader(ds, batch_size=6, shuffle=True)  # msmagic: LDR003" in run.port.code
    assert "LDR003" in findings(run)
    assert run.agree("losses", "seen", "model.weight", "model.bias"), run.explain()
    # PyTorch really shuffled, differently each epoch, and the batches are the same rows
    labels = run.torch_ns["seen"]
    assert len(labels) == 8
    first, second = _epochs(labels, 4)
    order = run.torch_ns["y"].tolist()
    assert sorted(first) == sorted(second) == sorted(order) and first != order and first != second
    assert run.sync_reasons["train_loader"] == "PyTorch's shuffle order used (2 epochs)"


def test_the_statement_is_tagged_shuffle():
    port = msmagic.port(src(DATA) + src("""
        loader = DataLoader(TensorDataset(x, y), batch_size=4, shuffle=True)
        plain = DataLoader(TensorDataset(x, y), batch_size=4)
    """))
    tags = [s.tags for s in port.statements]
    assert "shuffle" in tags[-2] and "shuffle" not in tags[-1]
    assert [e.tags for e in port.edits if e.rule_id == "LDR003"] == [frozenset({"shuffle"})]


def test_parity_report_says_pytorchs_order_was_used_across_cells():
    """The magic's path: the loader cell and the training cell run as two %%ms_parity
    cells sharing the namespaces; each report says what was synchronised."""
    session = PortSession()
    user, shadow = {"__name__": "__main__"}, {"__name__": "__shadow__"}
    first = msmagic.parity(src(DATA) + src("""
        train_loader = DataLoader(TensorDataset(x, y), batch_size=5, shuffle=True)
        n_batches = len(train_loader)
    """), user_ns=user, shadow=shadow, session=session)
    assert first.ok, first.summary()
    assert "train_loader: PyTorch's shuffle order used" in first.synchronised
    second = msmagic.parity(src(TRAIN), user_ns=user, shadow=shadow, session=session)
    assert second.ok, (second.summary(), second.rows)
    assert second.row("losses").status == second.row("seen").status == "match"
    assert "train_loader: PyTorch's shuffle order used (2 epochs)" in second.synchronised
    # a third cell iterates the loader again: the orders still follow PyTorch's
    third = msmagic.parity(src("""
        firsts = [yb.tolist() for xb, yb in train_loader]
        again = next(iter(train_loader))[1]
    """), user_ns=user, shadow=shadow, session=session)
    assert third.ok, (third.summary(), third.rows)
    assert "train_loader: PyTorch's shuffle order used (2 epochs)" in third.synchronised


@pytest.mark.parametrize("body, ported", [
    # built in the call
    ("train_loader = DataLoader(TensorDataset(x, y), batch_size=6, shuffle=True)",
     "train_loader = DataLoader(TensorDataset(x, y), batch_size=6, shuffle=True)"),
    # a second loader over a dataset, drop_last
    ("ds = TensorDataset(x, y)\nfull = DataLoader(ds, batch_size=22)\n"
     "train_loader = DataLoader(ds, batch_size=6, shuffle=True, drop_last=True)",
     "train_loader = DataLoader(ds, batch_size=6, shuffle=True, drop_last=True)"),
    # keywords from a dict
    ("opts = {'batch_size': 6, 'shuffle': True}\ntrain_loader = DataLoader(TensorDataset(x, y), **opts)",
     "train_loader = DataLoader(TensorDataset(x, y), **opts)  # msmagic: LDR003"),
    # an explicit RandomSampler, over a list of examples
    ("rows = [(x[i], y[i]) for i in range(len(y))]\n"
     "train_loader = DataLoader(rows, batch_size=6, sampler=torch.utils.data.RandomSampler(rows))",
     "sampler=mindspore.dataset.dataloader.RandomSampler(rows)"),
])
def test_every_shuffled_form_follows_pytorchs_order(body, ported):
    run = _run(body + "\n", TRAIN)
    assert ported in run.port.code, run.port.code
    assert run.agree("losses", "seen", "model.weight", "model.bias"), run.explain()
    assert run.sync_reasons["train_loader"].startswith("PyTorch's shuffle order used")


def test_random_tensor_datasets_are_copied_and_shuffled_loaders_follow():
    """The realworld tutorials' shape: random data built inside TensorDataset, a
    shuffled train loader and an unshuffled test loader in the same cell."""
    run = _run("""
        train_dataset = torch.utils.data.TensorDataset(torch.rand(30, 1, 4, 4), torch.randint(0, 10, (30,)))
        test_dataset = torch.utils.data.TensorDataset(torch.rand(10, 1, 4, 4), torch.randint(0, 10, (10,)))
        train_loader = torch.utils.data.DataLoader(dataset=train_dataset, batch_size=8, shuffle=True)
        test_loader = torch.utils.data.DataLoader(dataset=test_dataset, batch_size=8, shuffle=False)
        train = [(float(a.sum()), b.tolist()) for a, b in train_loader]
        test = [(float(a.sum()), b.tolist()) for a, b in test_loader]
        inline = DataLoader(TensorDataset(torch.rand(9, 2)), batch_size=4, shuffle=True)
        inline_sums = [float(b[0].sum()) for b in inline]
    """, rtol=1e-5, atol=1e-4)
    assert run.agree("train", "test", "inline_sums"), run.explain()
    assert run.sync_reasons["train_dataset"] == "random values copied (the TensorDataset's tensors)"
    assert run.sync_reasons["inline"].startswith("random values copied (the TensorDataset's tensors); "
                                                 "PyTorch's shuffle order used")


def test_a_plain_mindspore_run_shuffles_in_its_own_order():
    port = msmagic.port(src("""
        import torch
        from torch.utils.data import TensorDataset, DataLoader
        y = torch.arange(30)
        train_loader = DataLoader(TensorDataset(y), batch_size=30, shuffle=True)
    """))
    ns = {}
    exec(port.code, ns)
    epochs = [next(iter(ns["train_loader"]))[0].asnumpy().tolist() for _ in range(3)]
    assert all(sorted(e) == list(range(30)) for e in epochs)
    assert epochs[0] != list(range(30))  # shuffled (each epoch anew unless a seed was set: below)
    assert isinstance(next(iter(ns["train_loader"]))[0], ms.Tensor)


def test_a_plain_run_draws_another_order_on_every_run_even_after_a_seed():
    """What LDR003's finding warns about: MindSpore's DataLoader seeds its shuffling from
    the operating system, so mindspore.set_seed (the port of torch.manual_seed) does not
    make the order repeat from one run to the next."""
    port = msmagic.port(src("""
        import torch
        from torch.utils.data import TensorDataset, DataLoader
        torch.manual_seed(0)
        y = torch.arange(30)
        train_loader = DataLoader(TensorDataset(y), batch_size=30, shuffle=True)
    """))
    assert "mindspore.set_seed(0)" in port.code
    runs = []
    try:
        for _ in range(2):
            ns = {}
            exec(port.code, ns)
            runs.append(next(iter(ns["train_loader"]))[0].asnumpy().tolist())
    finally:
        ms.set_seed(np.random.randint(1 << 30))
    assert runs[0] != runs[1] and sorted(runs[0]) == sorted(runs[1]) == list(range(30))


def test_without_sync_the_orders_differ():
    run = _run("""
        train_loader = DataLoader(TensorDataset(x, y), batch_size=22, shuffle=True)
        order = next(iter(train_loader))[1].tolist()
    """, sync=False)
    assert run.row("order").status == "differs"


SMALL = """
    import torch
    from torch.utils.data import TensorDataset, DataLoader
    x = torch.randn(22, 3)
    y = torch.randint(0, 2, (22,))
    loader = DataLoader(TensorDataset(x, y), batch_size=22, shuffle=True)
    order = next(iter(loader))[1]
"""


def _against(loader: str, use: str):
    """Explicit MindSpore code for SMALL, statement by statement."""
    return src(f"""
        import mindspore
        pass
        x = mindspore.ops.randn(22, 3)
        y = mindspore.ops.randint(0, 2, (22,))
        {loader}
        {use}
    """)


def _parity_against(code):
    return msmagic.parity(src(SMALL), user_ns={"__name__": "__main__"}, shadow={"__name__": "__s__"},
                          against=code)


def test_explicit_mindspore_code_follows_pytorchs_order_too():
    report = _parity_against(_against(
        "loader = mindspore.dataset.dataloader.DataLoader(mindspore.dataset.dataloader.TensorDataset(x, y), "
        "batch_size=22)",
        "order = next(iter(loader))[1]"))
    assert report.ok, report.rows
    assert "loader: PyTorch's shuffle order used (1 epoch)" in report.synchronised


def test_a_loader_mindspore_iterates_more_often_is_noted():
    """MindSpore code that iterates twice where PyTorch iterated once: the second epoch
    has no PyTorch order, which the report says."""
    report = _parity_against(_against(
        "loader = mindspore.dataset.dataloader.DataLoader(mindspore.dataset.dataloader.TensorDataset(x, y), "
        "batch_size=22, shuffle=True)",
        "order = next(iter(loader))[1]; order = next(iter(loader))[1]"))
    reason = next(s for s in report.synchronised if s.startswith("loader:"))
    assert reason == ("loader: PyTorch's shuffle order used (1 epoch); 1 more MindSpore epoch had no "
                      "PyTorch order to follow and was shuffled at random"), reason


def test_a_loader_parity_cannot_follow_is_noted():
    """MindSpore code whose loader is a dataset pipeline (no sampler to replace): the
    order cannot be imposed, the report's notes say so."""
    report = _parity_against(_against(
        "loader = mindspore.dataset.GeneratorDataset(lambda: iter([(1,)]), ['a']).batch(22)",
        "order = 1"))
    assert any(n.startswith("`loader`: the MindSpore loader is not a MindSpore DataLoader that batches")
               for n in report.notes), report.notes


def test_a_shuffled_loader_a_function_returns_follows_pytorchs_order():
    run = _run("""
        def make_loader(data, size):
            return DataLoader(data, batch_size=size, shuffle=True)
        ds = TensorDataset(x, y)
        train_loader = make_loader(ds, 6)
        alias = train_loader
    """, TRAIN, """
        alias_order = [yb.tolist() for xb, yb in alias]
    """)
    assert "return DataLoader(data, batch_size=size, shuffle=True)  # msmagic: LDR003" in run.port.code
    assert run.agree("losses", "seen", "alias_order", "model.weight", "model.bias"), run.explain()
    assert run.sync_reasons["train_loader"] == "PyTorch's shuffle order used (3 epochs)"


def test_a_shuffled_loader_a_function_builds_and_iterates_follows_pytorchs_order():
    """uvadlc_t3's train_model: the loader is built and iterated inside the function,
    never bound to a name of the cell; the MindSpore loader built in its place follows
    the PyTorch one, call after call."""
    run = _run("""
        from torch.utils.data import random_split
        train_set, val_set = random_split(TensorDataset(x, y), [18, 4])
        def train_model(net, epochs=2, batch_size=5):
            optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
            loss_module = nn.CrossEntropyLoss()
            train_loader_local = torch.utils.data.DataLoader(train_set, batch_size=batch_size, shuffle=True,
                                                             drop_last=True, pin_memory=True)
            seen = []
            for epoch in range(epochs):
                for imgs, labels in train_loader_local:
                    optimizer.zero_grad()
                    loss = loss_module(net(imgs), labels)
                    loss.backward()
                    optimizer.step()
                    seen.append(labels.tolist())
            return seen
        results = []
        for k in range(2):
            net = nn.Linear(3, 2)
            results.append(train_model(net))
        weight = net.weight
    """)
    assert run.agree("results", "weight"), run.explain()
    assert run.sync_reasons["train_set"] == "PyTorch's split used (the indices of its Subsets)"
    reason = run.sync_reasons["a DataLoader built while the cell ran"]
    assert reason == "PyTorch's shuffle order used (2 epochs)", run.sync_reasons
