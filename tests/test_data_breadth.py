"""torch.utils.data beyond TensorDataset/DataLoader, executed (LDR008-LDR010): user
Dataset/IterableDataset/Sampler subclasses, Subset, random_split, ConcatDataset,
ChainDataset and the samplers, in the spellings notebooks use. Both sides run in
lockstep and the lengths, items and batches (in order) must agree; the random ones
(random_split, the random samplers) take PyTorch's draw under parity, and in a plain run
keep PyTorch's sizes."""

import pytest

import msmagic
from tests.rules.support import findings, run_pair, src

SQUARES = """
    import torch
    from torch.utils.data import Dataset, DataLoader, random_split
    class Squares(Dataset):
        def __init__(self, n):
            self.x = torch.arange(float(n))
        def __len__(self):
            return len(self.x)
        def __getitem__(self, i):
            return self.x[i], self.x[i] ** 2
"""


def _run(body, prelude=SQUARES, **kw):
    run = run_pair(src(prelude) + src(body), **kw)
    assert run.torch_error is None and run.ms_error is None, run.explain()
    return run


@pytest.mark.parametrize("lengths, generator", [
    ("[0.8, 0.2]", ", generator=torch.Generator().manual_seed(42)"),
    ("[0.5, 0.3, 0.2]", ""),
    ("[6, 3, 2]", ", generator=g"),
])
def test_random_split_sizes_items_and_loaders_match_with_pytorchs_permutation(lengths, generator):
    run = _run(f"""
        g = torch.Generator().manual_seed(3)
        ds = Squares(11)
        parts = random_split(ds, {lengths}{generator})
        sizes = [len(p) for p in parts]
        items = [[float(p[i][0]) for i in range(len(p))] for p in parts]
        batches = [b.tolist() for a, b in DataLoader(parts[0], batch_size=3, drop_last=True)]
    """)
    assert run.agree("sizes", "items", "batches"), run.explain()
    assert run.sync_reasons["parts"] == "PyTorch's split used (the indices of its Subsets)"
    assert "LDR009" not in findings(run)
    if generator:
        assert "seed=" in run.port.code


def test_random_split_in_a_plain_run_keeps_pytorchs_sizes_and_covers_every_row():
    run = _run("""
        train, valid, test = torch.utils.data.random_split(Squares(10), [0.6, 0.25, 0.15])
        sizes = (len(train), len(valid), len(test))
        rows = sorted(float(s[i][0]) for s in (train, valid, test) for i in range(len(s)))
    """, sync=False)
    assert run.agree("sizes", "rows"), run.explain()
    assert run.torch_ns["sizes"] == (7, 2, 1)  # floors 6, 2, 1; the remainder to the first


def test_subset_with_keywords_and_concat_of_subsets():
    run = _run("""
        ds = Squares(10)
        head = torch.utils.data.Subset(dataset=ds, indices=[0, 1, 2])
        tail = torch.utils.data.Subset(ds, range(7, 10))
        both = torch.utils.data.ConcatDataset([head, tail])
        n = len(both)
        values = [float(both[i][1]) for i in range(-n, n)]
        sizes = both.cumulative_sizes
        batches = [(a.tolist(), b.tolist()) for a, b in DataLoader(both, batch_size=4)]
    """)
    assert run.agree("n", "values", "sizes", "batches"), run.explain()
    code = run.port.code
    assert "class Subset(" in code and "class ConcatDataset(" in code and "import torch" not in code


def test_iterable_datasets_chained_and_batched():
    run = _run("""
        import torch
        from torch.utils.data import IterableDataset, ChainDataset, DataLoader
        class Counter(IterableDataset):
            def __init__(self, start, n):
                super().__init__()
                self.start, self.n = start, n
            def __iter__(self):
                for i in range(self.start, self.start + self.n):
                    yield {"x": torch.tensor([float(i)]), "i": i}
            def __len__(self):
                return self.n
        chained = ChainDataset([Counter(0, 3), Counter(100, 4)])
        n = len(chained)
        xs = [b["x"] for b in DataLoader(chained, batch_size=3)]
        ids = [b["i"].tolist() for b in DataLoader(chained, batch_size=3, drop_last=True)]
    """, prelude="")
    assert run.agree("n", "xs", "ids"), run.explain()


def test_samplers_sequential_custom_batch_and_distributed():
    run = _run("""
        from torch.utils.data import Sampler, SequentialSampler, BatchSampler, DistributedSampler
        class EvensFirst(Sampler):
            def __init__(self, data_source):
                self.n = len(data_source)
            def __iter__(self):
                return iter(list(range(0, self.n, 2)) + list(range(1, self.n, 2)))
            def __len__(self):
                return self.n
        ds = Squares(7)
        custom = [b.tolist() for a, b in DataLoader(ds, batch_size=3, sampler=EvensFirst(ds))]
        grouped = DataLoader(ds, batch_sampler=BatchSampler(SequentialSampler(ds), batch_size=2, drop_last=True))
        pairs = [b.tolist() for a, b in grouped]
        n_pairs = len(grouped)
        shards = [list(DistributedSampler(ds, num_replicas=3, rank=r, shuffle=False)) for r in range(3)]
        shard_batches = [a.tolist() for a, b in DataLoader(ds, batch_size=2,
                         sampler=DistributedSampler(ds, num_replicas=2, rank=1, shuffle=False, drop_last=True))]
    """)
    assert run.agree("custom", "pairs", "n_pairs", "shards", "shard_batches"), run.explain()


@pytest.mark.parametrize("sampler", [
    "RandomSampler(ds)",
    "RandomSampler(ds, replacement=True, num_samples=12)",
    "SubsetRandomSampler([1, 3, 5, 7, 8])",
    "WeightedRandomSampler([0.0, 1.0, 2.0, 0.5, 1.0, 3.0, 0.0, 1.0, 1.0], num_samples=7)",
    "WeightedRandomSampler(torch.tensor([1.0, 1.0, 2.0, 2.0, 1.0, 1.0, 1.0, 1.0, 1.0]), 6, replacement=False)",
    "DistributedSampler(ds, num_replicas=2, rank=0, seed=5)",
])
def test_random_samplers_follow_pytorchs_order_under_parity(sampler):
    run = _run(f"""
        from torch.utils.data import RandomSampler, SubsetRandomSampler, WeightedRandomSampler
        from torch.utils.data.distributed import DistributedSampler
        ds = Squares(9)
        loader = DataLoader(ds, batch_size=2, sampler={sampler})
        first = [b.tolist() for a, b in loader]
        second = [b.tolist() for a, b in loader]
        n_batches = len(loader)
    """)
    assert run.agree("first", "second", "n_batches"), run.explain()
    assert run.sync_reasons["loader"].startswith("PyTorch's shuffle order used"), run.sync_reasons
    assert not findings(run)


def test_weighted_sampler_in_a_plain_run_draws_only_weighted_rows():
    run = _run("""
        from torch.utils.data import WeightedRandomSampler
        sampler = WeightedRandomSampler([0.0, 1.0, 0.0, 2.0], num_samples=20)
        n = len(sampler)
        drawn = sorted(set(sampler))
        once = sorted(WeightedRandomSampler([1.0, 1.0, 5.0], 3, replacement=False))
    """, sync=False)
    assert run.agree("n", "drawn", "once"), run.explain()
    assert run.ms_ns["drawn"] == [1, 3]


def test_collate_fn_drop_last_and_shuffle_together():
    """A shuffled loader with its own collate_fn and drop_last: flagged (LDR003) for a plain
    run, the same batches under parity."""
    run = _run("""
        from torch.utils.data import default_collate
        def stacked(batch):
            x, y = default_collate(batch)
            return torch.stack([x, y], dim=1)
        loader = DataLoader(Squares(10), batch_size=3, shuffle=True, drop_last=True, collate_fn=stacked)
        batches = [b for b in loader]
        n_batches = len(loader)
    """)
    assert run.agree("batches", "n_batches"), run.explain()
    assert findings(run) == {"LDR003"}


def test_a_dataset_class_defined_in_one_cell_is_used_in_the_next():
    from msmagic.engine.session import PortSession

    from tests.fast.codemod import dedent

    cells = [
        """
            import torch
            from torch.utils.data import Dataset, DataLoader, random_split
            class Pairs(Dataset):
                def __init__(self, n):
                    self.data = torch.arange(n * 2.0).reshape(n, 2)
                def __len__(self):
                    return len(self.data)
                def __getitem__(self, idx):
                    return self.data[idx], idx % 2
        """,
        """
            ds = Pairs(9)
            train_set, val_set = random_split(ds, [0.7, 0.3], generator=torch.Generator().manual_seed(0))
            sizes = (len(train_set), len(val_set))
        """,
        """
            loader = DataLoader(train_set, batch_size=4, shuffle=False)
            xs = [x for x, y in loader]
            ys = [y.tolist() for x, y in loader]
            val_rows = [val_set[i][0] for i in range(len(val_set))]
        """,
    ]
    user_ns, shadow, session = {"__name__": "__main__"}, {"__name__": "__shadow__"}, PortSession()
    reports = [msmagic.parity(dedent(cell), user_ns=user_ns, shadow=shadow, session=session)
               for cell in cells]
    for rep in reports[1:]:
        assert rep.ms_error is None and rep.torch_error is None, rep.summary()
        assert all(r.status == "match" for r in rep.rows), [(r.name, r.status) for r in rep.rows]
    assert {r.name for r in reports[1].rows} >= {"sizes"}
    assert {r.name for r in reports[2].rows} >= {"xs", "ys", "val_rows"}
    assert "class Pairs(mindspore.dataset.dataloader.Dataset)" in reports[0].port.code or \
        "class Pairs(Dataset)" in reports[0].port.code


def test_stack_dataset_tuples_and_dicts():
    run = _run("""
        from torch.utils.data import StackDataset, TensorDataset
        pairs = StackDataset(Squares(4), TensorDataset(torch.arange(8.0).reshape(4, 2)))
        named = torch.utils.data.StackDataset(image=Squares(4), label=[3, 1, 4, 1])
        n = (len(pairs), len(named))
        (a, b), (row,) = pairs[1]
        item = named[2]
        batches = [(b["image"][0], b["label"]) for b in DataLoader(named, batch_size=3)]
    """)
    assert run.agree("n", "a", "b", "row", "item", "batches"), run.explain()
    assert run.port.code.count("class StackDataset(") == 1
