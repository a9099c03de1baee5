"""Data loading rules (LDR001-LDR010): ported datasets and loaders are iterated on both
sides with run_pair and must give the same batches, in the same order, with the same
dtypes; what the port cannot reproduce is flagged at the loader line."""

import ast

import pytest

from tests.rules.support import findings, rules, src, run_pair

DATA = """
    import torch
    from torch.utils.data import TensorDataset, DataLoader
    x = torch.arange(30.0).reshape(10, 3)
    y = torch.arange(10)
"""


def _run(body, prelude=DATA, **kw):
    run = run_pair(src(prelude) + src(body), **kw)
    assert run.torch_error is None and run.ms_error is None, run.explain()
    return run


def _dtypes_agree(run, *names):
    """The MindSpore values have PyTorch's dtypes (float64 stays float64...)."""
    for n in names:
        t, m = run.torch_ns[n], run.ms_ns[n]
        assert str(t.dtype).replace("torch.", "") == str(m.dtype).lower(), (n, t.dtype, m.dtype)


# ----------------------------------------------------------------------------- TensorDataset


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
    assert "from mindspore.dataset.dataloader import TensorDataset, DataLoader" in code
    assert "ds = TensorDataset(x, y)" in code
    assert f"loader = DataLoader(ds, batch_size=4, shuffle=False, drop_last={drop})" in code
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
    assert "loader = DataLoader(TensorDataset(x, y), 3)" in run.port.code  # positional batch size kept
    assert run.agree("first_x", "first_y"), run.explain()
    xb, yb = run.ms_ns["first_x"], run.ms_ns["first_y"]
    assert isinstance(xb, ms.Tensor) and xb.dtype == ms.float32 and yb.dtype == ms.int64


def test_default_batch_size_is_one_and_three_tensor_dataset():
    run = _run("""
        w = x * 2
        loader = DataLoader(TensorDataset(x, y, w + 1))
        triples = [float(a.sum() + b.sum() + c.sum()) for a, b, c in loader]
        n = len(loader)
    """)
    assert run.agree("triples", "n"), run.explain()
    assert run.ms_ns["n"] == 10


def test_dataset_iteration_items_slices_and_loader_dataset():
    import mindspore as ms

    run = _run("""
        ds = TensorDataset(x, y)
        loader = DataLoader(ds, batch_size=4)
        rows = [r[0].tolist() for r in ds]
        first = ds[0]
        fx, fy = ds[3]
        last = ds[-1]
        picked = ds[torch.tensor(2)]
        head_x, head_y = ds[2:5]
        several_x, several_y = ds[[0, 7]]
        elem = ds[5][0][1]
        also = loader.dataset[1]
        n_rows = len(loader.dataset)
        same = loader.dataset is ds
        batches = len(loader)
        cols = len(ds.tensors)
    """)
    assert "also = loader.dataset[1]" in run.port.code and "first = ds[0]" in run.port.code
    assert run.agree("rows", "first", "fx", "fy", "last", "picked", "head_x", "head_y", "several_x",
                     "several_y", "elem", "also", "n_rows", "same", "batches", "cols"), run.explain()
    first = run.ms_ns["first"]
    assert isinstance(first, tuple) and all(isinstance(t, ms.Tensor) for t in first)
    assert first[0].dtype == ms.float32 and first[1].dtype == ms.int64


def test_training_loop_over_the_loader_gives_same_losses_and_weights():
    run = _run("""
        w = torch.zeros(3)
        losses = []
        loader = DataLoader(TensorDataset(x, y.float()), batch_size=4)
        for epoch in range(2):
            for i, (xb, yb) in enumerate(loader):
                pred = (xb * w).sum(1)
                err = pred - yb
                losses.append(float((err ** 2).mean()) + i)
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
    assert "loader = DataLoader(TensorDataset(x, y), batch_size=5)" in run.port.code
    assert [e.detail.split("=")[0] for e in run.port.edits if e.rule_id == "LDR004"] == \
        ["num_workers", "pin_memory", "persistent_workers"]
    assert run.agree("sums"), run.explain()


def test_a_positional_worker_option_moves_the_later_arguments_to_keywords():
    run = _run("""
        loader = DataLoader(TensorDataset(x, y), 4, False, None, None, 0, None, False, True)
        sums = [float(xb.sum()) for xb, yb in loader]
    """)
    assert "DataLoader(TensorDataset(x, y), 4, False, None, None, collate_fn=None, drop_last=True)" \
        in run.port.code
    assert run.agree("sums"), run.explain()
    assert len(run.ms_ns["sums"]) == 2


def test_shuffle_is_ported_and_flagged():
    run = _run("""
        ds = TensorDataset(x, y)
        loader = DataLoader(ds, batch_size=4, shuffle=True)
        n_batches = len(loader)
        total = sum(float(yb.sum()) for xb, yb in loader)
        seen = sorted(v for xb, yb in loader for v in yb.tolist())
    """, sync=False)
    assert "loader = DataLoader(ds, batch_size=4, shuffle=True)  # msmagic: LDR003" in run.port.code
    assert "LDR003" in rules(run) and "LDR003" in findings(run)
    # order differs (not compared); the content of an epoch is the same permutation of rows
    assert run.agree("n_batches", "total", "seen"), run.explain()


def test_unknown_and_unreproducible_arguments_are_flagged_at_the_loader_line():
    port = run_pair(src("""
        import torch
        from torch.utils.data import DataLoader
        loader = DataLoader(my_dataset, batch_size=4, worker_init_fn=seed_worker,
                            generator=torch.Generator().manual_seed(0))
        other = DataLoader(my_dataset, **options)
    """), sync=False).port
    code = port.code
    ast.parse(code)
    assert "import torch" not in code  # the dropped torch.Generator() keeps no torch import
    assert "loader = DataLoader(my_dataset, batch_size=4)  # msmagic: LDR005 worker_init_fn removed" in code
    assert "other = DataLoader(my_dataset, **options)  # msmagic: LDR005" in code
    by_rule = {(f.rule_id, f.line) for f in port.unsupported}
    assert by_rule == {("LDR005", 3), ("LDR003", 3), ("LDR005", 5)}, port.unsupported


def test_port_is_idempotent():
    import msmagic

    once = msmagic.port(src(DATA) + src("""
        loader = DataLoader(TensorDataset(x, y), batch_size=4, drop_last=True, shuffle=True)
        parts = torch.utils.data.random_split(loader.dataset, [0.5, 0.5])
    """)).code
    assert msmagic.port(once).code == once


def test_two_loaders_over_one_dataset_and_loaders_in_loops_and_functions():
    run = _run("""
        ds = TensorDataset(x, y)
        train = DataLoader(ds, batch_size=4)
        full = DataLoader(ds, batch_size=10)
        folds = []
        for k in range(3):
            fold = DataLoader(ds, batch_size=3 + k, drop_last=True)
            folds.append([yb.tolist() for xb, yb in fold])
        def make(data, size):
            return DataLoader(data, batch_size=size)
        made = [[yb.tolist() for xb, yb in make(ds, s)] for s in (2, 4)]
        train_sums = [float(xb.sum()) for xb, yb in train]
        full_labels = [yb.tolist() for xb, yb in full]
    """)
    assert "return DataLoader(data, batch_size=size)" in run.port.code
    assert run.agree("folds", "made", "train_sums", "full_labels"), run.explain()


def test_a_loader_cell_over_an_earlier_cells_dataset_can_run_again():
    from msmagic.engine.session import PortSession
    import msmagic

    session = PortSession()
    user, shadow = {"__name__": "__main__"}, {"__name__": "__shadow__"}
    first = msmagic.parity(src(DATA) + src("ds = TensorDataset(x, y)\nn = len(ds)\n"),
                           user_ns=user, shadow=shadow, session=session)
    assert first.ok, first.summary()
    cell = src("""
        loader = DataLoader(ds, batch_size=4)
        labels = [yb.tolist() for xb, yb in loader]
        rows = len(loader.dataset)
    """)
    for _ in range(2):  # run twice, as in a notebook
        report = msmagic.parity(cell, user_ns=user, shadow=shadow, session=session)
        assert report.ok, (report.summary(), report.ms_error)
        assert "loader = DataLoader(ds, batch_size=4)" in report.port.code
        assert report.row("labels").status == report.row("rows").status == "match"


# ----------------------------------------------------------------------------- custom datasets


CUSTOM = """
    import numpy as np
    import torch
    {imports}
    class Pairs({base}):
        def __init__(self, n):
            super().__init__()
            self.x = torch.arange(n * 3.0).reshape(n, 3)
            self.y = torch.arange(n) % 2
        def __len__(self):
            return self.x.shape[0]
        def __getitem__(self, idx):
            {item}
"""

ITEMS = {
    "tensors": "return self.x[idx], self.y[idx]",
    "tensor": "return self.x[idx] * 2",
    "dict": 'return {"ids": self.x[idx], "label": self.y[idx], "name": f"row{idx}"}',
    "numpy": "return self.x[idx].numpy() if hasattr(self.x[idx], 'numpy') else self.x[idx].asnumpy(), "
             "np.arange(2, dtype=np.int32) + idx",
    "numbers": "return float(idx) / 2, int(idx), idx % 2 == 0",
    "nested": 'return {"pair": (self.x[idx], int(idx)), "bits": [idx, idx + 1]}',
}

BASES = {
    "from": ("from torch.utils.data import Dataset, DataLoader", "Dataset", "DataLoader"),
    "module": ("import torch.utils.data as data", "data.Dataset", "data.DataLoader"),
    "dotted": ("", "torch.utils.data.Dataset", "torch.utils.data.DataLoader"),
}


def _flat(batch):
    """The batch's leaves in order, as (path, value) with tensors kept."""
    if isinstance(batch, dict):
        return [(f"{k}.{p}", v) for k in batch for p, v in _flat(batch[k])]
    if isinstance(batch, (list, tuple)) and batch and not isinstance(batch[0], str):
        return [(f"{i}.{p}", v) for i, b in enumerate(batch) for p, v in _flat(b)]
    return [("", batch)]


@pytest.mark.parametrize("spelling", sorted(BASES))
@pytest.mark.parametrize("item", sorted(ITEMS))
def test_a_custom_dataset_gives_the_same_batches_and_dtypes(item, spelling):
    imports, base, loader = BASES[spelling]
    prelude = CUSTOM.format(imports=imports, base=base, item=ITEMS[item])
    run = _run(f"""
        ds = Pairs(7)
        n = len(ds)
        dl = {loader}(ds, batch_size=3)
        batches = list(dl)
        n_batches = len(dl)
        rows = len(dl.dataset)
    """, prelude=prelude)
    code = run.port.code
    assert "import torch" not in code and "torch." not in code
    assert f"class Pairs({'mindspore.dataset.dataloader.Dataset' if spelling == 'dotted' else base})" in code
    if spelling == "from":  # the import changes, the names stay
        assert "from mindspore.dataset.dataloader import Dataset, DataLoader" in code
    elif spelling == "module":
        assert "import mindspore.dataset.dataloader as data" in code
    else:
        assert "LDR008" in rules(run)
    assert run.agree("n", "n_batches", "rows"), run.explain()
    tb, mb = run.torch_ns["batches"], run.ms_ns["batches"]
    assert len(tb) == len(mb) == 3
    for t, m in zip(tb, mb):
        tl, ml = _flat(t), _flat(m)
        assert [p for p, _ in tl] == [p for p, _ in ml], (tl, ml)
        for (p, tv), (_, mv) in zip(tl, ml):
            if isinstance(tv, list):  # strings stay lists of str
                assert tv == mv
                continue
            assert str(tv.dtype).replace("torch.", "") == str(mv.dtype).lower(), (item, p, tv.dtype, mv.dtype)
            assert tuple(tv.shape) == tuple(mv.shape) and tv.tolist() == mv.asnumpy().tolist(), (p, tv, mv)


def test_an_iterable_dataset_is_read_in_order():
    run = _run("""
        from torch.utils.data import IterableDataset
        class Counter(IterableDataset):
            def __init__(self, n):
                super().__init__()
                self.n = n
            def __iter__(self):
                for i in range(self.n):
                    yield torch.tensor([i, i * i]), i
        loader = DataLoader(Counter(7), batch_size=3)
        batches = [(a.tolist(), b.tolist()) for a, b in loader]
        kept = [(a.tolist(), b.tolist()) for a, b in DataLoader(Counter(7), batch_size=3, drop_last=True)]
    """)
    assert "class Counter(IterableDataset)" in run.port.code
    assert "from mindspore.dataset.dataloader import TensorDataset, DataLoader, IterableDataset" in run.port.code \
        or "from mindspore.dataset.dataloader import IterableDataset" in run.port.code
    assert run.agree("batches", "kept"), run.explain()
    assert len(run.ms_ns["kept"]) == 2


def test_default_collate_called_by_hand_and_a_lambda_collate():
    run = _run("""
        from torch.utils.data import default_collate
        examples = [{"a": torch.tensor([1.0, 2.0]), "b": i} for i in range(5)]
        merged = default_collate(examples[:2])
        a, b = merged["a"], merged["b"]
        loader = DataLoader(examples, batch_size=2, collate_fn=lambda rows: torch.stack([r["a"] * r["b"] for r in rows]))
        stacked = [t for t in loader]
        first = stacked[0]
    """)
    assert "collate_fn=lambda rows: mindspore.ops.stack(" in run.port.code
    assert run.agree("a", "b", "stacked", "first"), run.explain()
    _dtypes_agree(run, "a", "b", "first")


# ----------------------------------------------------------------------------- lists, collate_fn


EXAMPLES = """
    import torch
    import torch.nn as nn
    class ExampleList(list):
        def unique(self, column):
            return sorted({int(example[column]) for example in self})
    def generated_examples(n, start):
        examples = ExampleList()
        for i in range(start, start + n):
            length = 3 + (7 * i) % 5
            ids = torch.tensor([2 + (31 * i + 17 * j) % 40 for j in range(length)])
            examples.append({"ids": ids, "label": torch.tensor(i % 2), "length": torch.tensor(length)})
        return examples
    train_data = generated_examples(11, 0)
    pad_index = 1
"""

COLLATE = """
    def get_collate_fn(pad_index):
        def collate_fn(batch):
            batch_ids = [i["ids"] for i in batch]
            batch_ids = nn.utils.rnn.pad_sequence(
                batch_ids, padding_value=pad_index, batch_first=True
            )
            batch_length = [i["length"] for i in batch]
            batch_length = torch.stack(batch_length)
            batch_label = [i["label"] for i in batch]
            batch_label = torch.stack(batch_label)
            batch = {"ids": batch_ids, "length": batch_length, "label": batch_label}
            return batch
        return collate_fn
    def get_data_loader(dataset, batch_size, pad_index, shuffle=False):
        collate_fn = get_collate_fn(pad_index)
        data_loader = torch.utils.data.DataLoader(
            dataset=dataset,
            batch_size=batch_size,
            collate_fn=collate_fn,
            shuffle=shuffle,
        )
        return data_loader
"""


def test_a_list_of_examples_with_a_collate_factory_in_a_function():
    """bentrevett's shape: a list subclass of dicts of tensors, a collate_fn a factory
    returns (pad_sequence with a variable padding_value), the loader built in a function
    that receives the dataset, iterated as ``for batch in loader: batch["ids"]``."""
    run = _run("""
        loader = get_data_loader(train_data, 4, pad_index)
        ids, lengths, labels = [], [], []
        for batch in loader:
            ids.append(batch["ids"])
            lengths.append(batch["length"].tolist())
            labels.append(batch["label"].tolist())
        first = next(iter(loader))
        first_ids, first_label = first["ids"], first["label"]
        n_batches, n_rows = len(loader), len(loader.dataset)
        classes = loader.dataset.unique("label")
    """, prelude=src(EXAMPLES) + src(COLLATE))
    code = run.port.code
    assert "import torch" not in code and "torch." not in code
    assert "data_loader = mindspore.dataset.dataloader.DataLoader(" in code
    assert "LDR003" in findings(run)  # shuffle=shuffle may shuffle
    assert run.agree("ids", "lengths", "labels", "first_ids", "first_label", "n_batches", "n_rows",
                     "classes"), run.explain()
    _dtypes_agree(run, "first_ids", "first_label")
    assert run.ms_ns["first_ids"].shape == (4, 7)  # padded to the longest of the batch


def test_a_shuffled_list_loader_from_a_function_follows_pytorchs_order_in_a_later_cell():
    import msmagic
    from msmagic.engine.session import PortSession

    session = PortSession()
    user, shadow = {"__name__": "__main__"}, {"__name__": "__shadow__"}
    for cell in (EXAMPLES, COLLATE, """
        torch.manual_seed(3)
        train_loader = get_data_loader(train_data, 4, pad_index, shuffle=True)
    """):
        report = msmagic.parity(src(cell), user_ns=user, shadow=shadow, session=session)
        assert report.ok or report.verdict[0] == "empty", (report.summary(), report.ms_error)
    assert "train_loader: PyTorch's shuffle order used" in report.synchronised
    report = msmagic.parity(src("""
        seen = []
        for epoch in range(2):
            for batch in train_loader:
                seen.append(batch["length"].sum().item() * 100 + batch["ids"][:, 0].sum().item())
        labels = [b["label"].tolist() for b in train_loader]
    """), user_ns=user, shadow=shadow, session=session)
    assert report.ok, (report.summary(), report.rows, report.ms_error)
    assert report.row("seen").status == report.row("labels").status == "match"
    assert "train_loader: PyTorch's shuffle order used (3 epochs)" in report.synchronised
    assert sum(user["seen"][:3]) == sum(user["seen"][3:]) and user["seen"][:3] != user["seen"][3:]


def test_keyword_arguments_from_a_dict():
    run = _run("""
        loader_kwargs = {"batch_size": 4, "drop_last": True}
        loader = DataLoader(TensorDataset(x, y), **loader_kwargs)
        labels = [yb.tolist() for xb, yb in loader]
        shuffled_kwargs = dict(batch_size=5, shuffle=True)
        other = DataLoader(TensorDataset(x, y), **shuffled_kwargs)
        other_labels = [yb.tolist() for xb, yb in other]
    """)
    code = run.port.code
    assert "loader = DataLoader(TensorDataset(x, y), **loader_kwargs)\n" in code
    assert "other = DataLoader(TensorDataset(x, y), **shuffled_kwargs)  # msmagic: LDR003" in code
    assert run.agree("labels", "other_labels"), run.explain()
    assert run.sync_reasons["other"].startswith("PyTorch's shuffle order used")


# ----------------------------------------------------------------------------- Subset, random_split, samplers


def test_subset_of_a_tensor_dataset_and_of_a_list():
    run = _run("""
        from torch.utils.data import Subset
        ds = TensorDataset(x, y)
        evens = Subset(ds, [0, 2, 4, 6, 8])
        n = len(evens)
        x2, y2 = evens[1]
        labels = [yb.tolist() for xb, yb in DataLoader(evens, batch_size=2)]
        words = torch.utils.data.Subset(["a", "b", "c", "d"], range(1, 3))
        picked = [len(w) + i for i, w in enumerate(words)]
        indices = list(evens.indices)
        base_rows = len(evens.dataset)
    """)
    code = run.port.code
    assert "class Subset(mindspore.dataset.dataloader.Dataset):" in code
    assert "words = Subset([" in code and code.count("class Subset") == 1
    assert run.agree("n", "x2", "y2", "labels", "picked", "indices", "base_rows"), run.explain()


def test_concat_dataset_chains_its_parts():
    run = _run("""
        from torch.utils.data import ConcatDataset, Subset
        ds = TensorDataset(x, y)
        both = ConcatDataset([Subset(ds, [1, 3]), ds, [(x[0] * 10, y[0])]])
        n = len(both)
        sizes = list(both.cumulative_sizes)
        first_x, first_y = both[0]
        middle_x, middle_y = both[5]
        last_x, last_y = both[-1]
        labels = [yb.tolist() for xb, yb in DataLoader(both, batch_size=4)]
    """)
    assert "class ConcatDataset(mindspore.dataset.dataloader.Dataset):" in run.port.code
    assert run.agree("n", "sizes", "first_x", "first_y", "middle_x", "middle_y", "last_x", "last_y", "labels"), \
        run.explain()


@pytest.mark.parametrize("lengths, generator", [
    ("[7, 3]", ""),
    ("[0.7, 0.3]", ""),
    ("[0.5, 0.25, 0.25]", ", generator=torch.Generator().manual_seed(42)"),
])
def test_random_split_takes_pytorchs_split_under_parity(lengths, generator):
    run = _run(f"""
        ds = TensorDataset(x, y)
        parts = torch.utils.data.random_split(ds, {lengths}{generator})
        sizes = [len(p) for p in parts]
        labels = [[int(b) for a, b in p] for p in parts]
        first_loader = DataLoader(parts[0], batch_size=3)
        batches = [yb.tolist() for xb, yb in first_loader]
    """)
    code = run.port.code
    assert "import torch" not in code
    assert "def random_split(dataset, lengths, seed=None):" in code
    assert ("seed=42" in code) == bool(generator)
    assert "LDR009" not in findings(run)  # a random draw, like torch.randperm: parity copies it
    assert run.agree("sizes", "labels", "batches"), run.explain()
    assert run.sync_reasons["parts"] == "PyTorch's split used (the indices of its Subsets)"


def test_random_split_in_a_plain_run_is_a_split_of_the_right_sizes():
    """Without parity the split is NumPy's: other rows, but the sizes, the rows of each
    subset and, with a seeded generator, the split itself are reproducible."""
    run = _run("""
        a, b = torch.utils.data.random_split(TensorDataset(x, y), [0.6, 0.4], generator=torch.Generator().manual_seed(7))
        sizes = [len(a), len(b)]
        everything = sorted([int(r[1]) for r in a] + [int(r[1]) for r in b])
    """, sync=False)
    assert run.agree("sizes", "everything"), run.explain()
    import msmagic
    ns1, ns2 = {}, {}
    exec(run.port.code, ns1)
    exec(run.port.code, ns2)
    assert list(ns1["a"].indices) == list(ns2["a"].indices)  # seed=7: the same split each run
    assert msmagic.port(run.port.code).code == run.port.code


def test_subset_random_sampler_follows_pytorchs_order_and_has_its_length():
    """udacity_cifar10_cnn's shape: numpy-shuffled indices split into two
    SubsetRandomSamplers of one TensorDataset."""
    run = _run("""
        import numpy as np
        from torch.utils.data.sampler import SubsetRandomSampler
        num_train = len(y)
        indices = list(range(num_train))
        split = 3
        train_idx, valid_idx = indices[split:], indices[:split]
        train_sampler = SubsetRandomSampler(train_idx)
        valid_sampler = SubsetRandomSampler(valid_idx)
        train_data = TensorDataset(x, y)
        train_loader = torch.utils.data.DataLoader(train_data, batch_size=2, sampler=train_sampler, num_workers=0)
        valid_loader = torch.utils.data.DataLoader(train_data, batch_size=2, sampler=valid_sampler)
        dataiter = iter(train_loader)
        images, labels = next(dataiter)
        train_labels = [yb.tolist() for xb, yb in train_loader]
        valid_labels = [yb.tolist() for xb, yb in valid_loader]
        n_train, n_valid = len(train_loader.sampler), len(valid_loader.sampler)
        n_rows = len(train_loader.dataset)
    """)
    code = run.port.code
    assert "import torch" not in code
    assert "class SubsetRandomSampler(mindspore.dataset.dataloader.Sampler):" in code
    assert "LDR010" not in findings(run)  # a random draw, like shuffle=True's: parity follows it
    assert run.agree("images", "labels", "train_labels", "valid_labels", "n_train", "n_valid", "n_rows"), \
        run.explain()
    assert run.sync_reasons["train_loader"].startswith("PyTorch's shuffle order used")
    # PyTorch really shuffled: the training labels are not in index order
    assert sum(run.torch_ns["train_labels"], []) != list(range(3, 10))
    assert sorted(sum(run.ms_ns["train_labels"], [])) == list(range(3, 10))
