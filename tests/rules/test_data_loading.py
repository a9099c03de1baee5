"""Data loading rules (LDR001-LDR005): ported loaders are iterated on both sides with
run_pair and must give the same batches, in the same order, with the same dtypes."""

import ast

import pytest

from tests.rules.support import findings, rules, src, run_pair

DATA = """
    import torch
    from torch.utils.data import TensorDataset, DataLoader
    x = torch.arange(30.0).reshape(10, 3)
    y = torch.arange(10)
"""


def _run(body, **kw):
    run = run_pair(src(DATA) + src(body), **kw)
    assert run.torch_error is None and run.ms_error is None, run.explain()
    return run


@pytest.mark.parametrize("drop", [False, True])
def test_batches_in_order_with_and_without_remainder(drop):
    run = _run(f"""
        ds = TensorDataset(x, y)
        loader = DataLoader(ds, batch_size=4, shuffle=False, drop_last={drop})
        sums = [float(xb.sum()) for xb, yb in loader]
        labels = [yb.tolist() for xb, yb in loader]
        shapes = [tuple(xb.shape) for xb, yb in loader]
        n_batches = len(loader)
        n_rows = len(ds)
    """)
    code = run.port.code
    assert "ds = mindspore.dataset.NumpySlicesDataset((x.asnumpy(), y.asnumpy()), shuffle=False)" in code
    assert f"loader = ds.batch(4, drop_remainder={drop})" in code
    assert {"LDR001", "LDR002"} <= rules(run) and not findings(run)
    assert run.agree("sums", "labels", "shapes", "n_batches", "n_rows"), run.explain()
    assert run.ms_ns["n_batches"] == (2 if drop else 3)  # the remainder batch is really there / gone


def test_batches_are_mindspore_tensors_with_dtypes_kept_and_next_iter():
    import mindspore as ms

    run = _run("""
        loader = DataLoader(TensorDataset(x, y), 3)
        xb, yb = next(iter(loader))
        first_x, first_y = xb, yb
    """)
    assert "loader = mindspore.dataset.NumpySlicesDataset((x.asnumpy(), y.asnumpy()), shuffle=False).batch(3)" \
        in run.port.code  # positional batch size kept
    assert run.agree("first_x", "first_y"), run.explain()  # compare checks dtype kinds too
    xb, yb = run.ms_ns["first_x"], run.ms_ns["first_y"]
    assert isinstance(xb, ms.Tensor) and xb.dtype == ms.float32 and yb.dtype == ms.int64


def test_default_batch_size_is_one_and_three_tensor_dataset():
    run = _run("""
        w = x * 2
        loader = DataLoader(TensorDataset(x, y, w + 1))
        triples = [float(a.sum() + b.sum() + c.sum()) for a, b, c in loader]
        n = len(loader)
    """)
    assert "NumpySlicesDataset((x.asnumpy(), y.asnumpy(), (w + 1).asnumpy()), shuffle=False).batch(1)" \
        in run.port.code
    assert run.agree("triples", "n"), run.explain()
    assert run.ms_ns["n"] == 10


def test_single_tensor_dataset_and_dataset_iteration():
    run = _run("""
        ds = TensorDataset(x)
        rows = [r[0].tolist() for r in ds]
        batches = [b[0].tolist() for b in DataLoader(ds, batch_size=6)]
    """)
    assert "NumpySlicesDataset((x.asnumpy(),), shuffle=False)" in run.port.code
    assert run.agree("rows", "batches"), run.explain()


def test_training_loop_over_the_loader_gives_same_losses_and_weights():
    """The iteration half of a training loop (group A ports the step itself): a manual
    SGD update from per-batch statistics, no autograd involved."""
    run = _run("""
        w = torch.zeros(3)
        losses = []
        loader = DataLoader(TensorDataset(x, y.float()), batch_size=4)
        for epoch in range(2):
            for xb, yb in loader:
                pred = (xb * w).sum(1)
                err = pred - yb
                losses.append(float((err ** 2).mean()))
                w = w - 0.001 * (xb * err.reshape(-1, 1)).mean(0)
    """, rtol=1e-5, atol=1e-5)
    assert run.agree("losses", "w"), run.explain()
    assert len(run.ms_ns["losses"]) == 6


def test_worker_options_dropped():
    run = _run("""
        loader = DataLoader(TensorDataset(x, y), batch_size=5, num_workers=2, pin_memory=True,
                            persistent_workers=True)
        sums = [float(xb.sum()) for xb, yb in loader]
    """)
    assert "batch(5)" in run.port.code and "num_workers" not in run.port.code
    assert [e.detail.split("=")[0] for e in run.port.edits if e.rule_id == "LDR004"] == \
        ["num_workers", "pin_memory", "persistent_workers"]
    assert run.agree("sums"), run.explain()


def test_shuffle_is_ported_and_flagged():
    run = _run("""
        ds = TensorDataset(x, y)
        loader = DataLoader(ds, batch_size=4, shuffle=True)
        n_batches = len(loader)
        total = sum(float(yb.sum()) for xb, yb in loader)
        seen = sorted(v for xb, yb in loader for v in yb.tolist())
    """)
    code = run.port.code
    assert "loader = ds.shuffle(len(ds)).batch(4)  # msmagic: LDR003" in code
    assert "LDR003" in rules(run) and "LDR003" in findings(run)
    # order differs (not compared); the content of an epoch is the same permutation of rows
    assert run.agree("n_batches", "total", "seen"), run.explain()


def test_flagged_arguments_and_unknown_source():
    port = run_pair(src("""
        import torch
        from torch.utils.data import DataLoader
        loader = DataLoader(my_dataset, batch_size=4, collate_fn=my_collate, sampler=my_sampler)
    """), sync=False).port
    code = port.code
    ast.parse(code)
    assert "loader = my_dataset.batch(4)  # msmagic: LDR005" in code
    reasons = [f.reason for f in port.unsupported if f.rule_id == "LDR005"]
    assert any(r.startswith("collate_fn=my_collate") for r in reasons)
    assert any(r.startswith("sampler=my_sampler") for r in reasons)
    assert any("GeneratorDataset" in r for r in reasons)
    assert all(f.line == 3 for f in port.unsupported)


def test_port_is_idempotent():
    import msmagic

    once = msmagic.port(src(DATA) + src("""
        loader = DataLoader(TensorDataset(x, y), batch_size=4, drop_last=True)
    """)).code
    assert msmagic.port(once).code == once


# ----------------------------------------------------------------------------- LDR006


def test_two_loaders_over_one_dataset_both_iterate():
    run = _run("""
        ds = TensorDataset(x, y)
        train = DataLoader(ds, batch_size=4)
        full = DataLoader(ds, batch_size=10)
        train_sums = [float(xb.sum()) for xb, yb in train]
        full_labels = [yb.tolist() for xb, yb in full]
        again = [yb.tolist() for xb, yb in train]
        n_train, n_full = len(train), len(full)
    """)
    code = run.port.code
    assert "train = ds.batch(4)" in code
    assert "full = mindspore.dataset.GeneratorDataset(ds, ds.get_col_names(), shuffle=False).batch(10)" in code
    assert "LDR006" in rules(run)
    assert run.agree("train_sums", "full_labels", "again", "n_train", "n_full"), run.explain()


def test_loaders_built_in_a_loop_and_in_functions():
    run = _run("""
        ds = TensorDataset(x, y)
        folds = []
        for k in range(3):
            fold = DataLoader(ds, batch_size=3 + k, drop_last=True)
            folds.append([yb.tolist() for xb, yb in fold])
        def make(data, size):
            return DataLoader(data, batch_size=size)
        def fresh(a, b):
            inner = TensorDataset(a, b)
            return DataLoader(inner, batch_size=5)
        made = [[yb.tolist() for xb, yb in make(ds, s)] for s in (2, 4)]
        fresh_sums = [float(xb.sum()) for _ in range(2) for xb, yb in fresh(x, y)]
    """)
    code = run.port.code
    assert "fold = mindspore.dataset.GeneratorDataset(ds, ds.get_col_names(), shuffle=False).batch(3 + k, " \
           "drop_remainder=True)" in code
    assert "return mindspore.dataset.GeneratorDataset(data, data.get_col_names(), shuffle=False).batch(size)" in code
    assert "return inner.batch(5)" in code  # built by the function itself: batched directly
    assert run.agree("folds", "made", "fresh_sums"), run.explain()


def test_a_loader_cell_over_an_earlier_cells_dataset_can_run_again():
    from msmagic.engine.session import PortSession

    session = PortSession()
    user, shadow = {"__name__": "__main__"}, {"__name__": "__shadow__"}
    import msmagic

    first = msmagic.parity(src(DATA) + src("ds = TensorDataset(x, y)\nn = len(ds)\n"),
                           user_ns=user, shadow=shadow, session=session)
    assert first.ok, first.summary()
    cell = src("""
        loader = DataLoader(ds, batch_size=4)
        labels = [yb.tolist() for xb, yb in loader]
    """)
    for _ in range(2):  # run twice, as in a notebook
        report = msmagic.parity(cell, user_ns=user, shadow=shadow, session=session)
        assert report.ok, (report.summary(), report.ms_error)
        assert "GeneratorDataset(ds, ds.get_col_names(), shuffle=False).batch(4)" in report.port.code


# ----------------------------------------------------------------------------- LDR007


def test_dataset_items_are_tuples_of_tensors():
    import mindspore as ms

    run = _run("""
        ds = TensorDataset(x, y)
        loader = DataLoader(ds, batch_size=4)
        first = ds[0]
        fx, fy = ds[3]
        last = ds[-1]
        picked = ds[torch.tensor(2)]
        elem = ds[5][0][1]
        also = loader.dataset[1]
        rows = len(loader.dataset)
        batches = len(loader)
    """)
    code = run.port.code
    assert "first = tuple(mindspore.Tensor(numpy.asarray(c)) for c in ds[0])" in code
    assert "ds[len(ds) - 1]" in code and "ds[int(mindspore.Tensor(2))]" in code
    assert "also = tuple(mindspore.Tensor(numpy.asarray(c)) for c in ds[1])" in code
    assert "rows = len(ds)" in code
    assert run.agree("first", "fx", "fy", "last", "picked", "elem", "also", "rows", "batches"), run.explain()
    first = run.ms_ns["first"]
    assert isinstance(first, tuple) and all(isinstance(t, ms.Tensor) for t in first)
    assert first[0].dtype == ms.float32 and first[1].dtype == ms.int64


def test_loader_dataset_from_an_earlier_cell():
    from msmagic.engine.session import PortSession
    import msmagic

    session = PortSession()
    user, shadow = {"__name__": "__main__"}, {"__name__": "__shadow__"}
    msmagic.parity(src(DATA) + src("""
        test_dataset = TensorDataset(x, y)
        test_loader = DataLoader(test_dataset, batch_size=4)
    """), user_ns=user, shadow=shadow, session=session)
    report = msmagic.parity(src("""
        correct = 0
        for images, labels in test_loader:
            correct += (labels % 2 == 0).sum().item()
        accuracy = 100 * correct / len(test_loader.dataset)
    """), user_ns=user, shadow=shadow, session=session)
    assert "accuracy = 100 * correct / len(test_dataset)" in report.port.code
    assert report.ok and report.row("accuracy").status == "match", report.rows


def test_slicing_and_unknown_loader_dataset_are_flagged():
    port = run_pair(src(DATA) + src("""
        ds = TensorDataset(x, y)
        head = ds[:3]
        several = ds[[0, 1]]
        n = len(DataLoader(TensorDataset(x, y), batch_size=2).dataset)
    """), sync=False).port
    code = port.code
    ast.parse(code)
    assert "head = ds[:3]  # msmagic: LDR007 TensorDataset slicing not ported: slice the tensors" in code
    assert "several = ds[[0, 1]]  # msmagic: LDR007" in code
    assert "# msmagic: LDR007 loader.dataset has no MindSpore counterpart" in code
    assert sorted(f.line for f in port.unsupported if f.rule_id == "LDR007") == [6, 7, 8]
