"""Hand-written cases for ``torch.utils.data`` (rules LDR001-LDR010).

Each case binds what a notebook reads from its data: lengths, items, and the batches a
loader yields, in order. Loaders are unshuffled, or read a random sampler whose order
parity makes the MindSpore side follow (PyTorch's RandomSampler, SubsetRandomSampler,
WeightedRandomSampler, a shuffling DistributedSampler); a ``random_split`` is a random
draw whose indices parity copies (the subsets' sizes must agree for that), so what is
compared after it (sizes, items, batches) checks the port's arithmetic.
"""

from __future__ import annotations

import textwrap

from msmagic.apis.cases import case


def _joined(*parts: str) -> str:
    """Snippets dedented one by one, then joined (a shared prelude + the case's lines)."""
    return "".join(textwrap.dedent(p).strip("\n") + "\n" for p in parts)


#: a map-style dataset class, as notebooks write it
_SQUARES = """
    import torch
    from torch.utils.data import Dataset, DataLoader
    class Squares(Dataset):
        def __init__(self, n):
            self.x = torch.arange(float(n))
        def __len__(self):
            return len(self.x)
        def __getitem__(self, i):
            return self.x[i], self.x[i] ** 2
"""

#: an iterable dataset class
_STREAM = """
    import torch
    from torch.utils.data import IterableDataset, DataLoader
    class Stream(IterableDataset):
        def __init__(self, start, n):
            self.start, self.n = start, n
        def __iter__(self):
            for i in range(self.start, self.start + self.n):
                yield torch.tensor([float(i), 2.0 * i])
        def __len__(self):
            return self.n
"""

# ----------------------------------------------------------------------------- Dataset subclasses

for _base in ("torch.utils.data.Dataset", "torch.utils.data.dataset.Dataset"):
    case(_base, _joined(_SQUARES.replace("(Dataset)", f"({_base})"), """
        ds = Squares(10)
        n = len(ds)
        x3, y3 = ds[3]
        batches = [(a.tolist(), b.tolist()) for a, b in DataLoader(ds, batch_size=4)]
        kept = [b.tolist() for a, b in DataLoader(ds, batch_size=4, drop_last=True)]
    """))
case("torch.utils.data.Dataset", """
    import torch
    import numpy as np
    import torch.utils.data as data
    class Records(data.Dataset):
        def __init__(self):
            super().__init__()
            self.features = np.arange(12, dtype=np.float32).reshape(6, 2)
            self.labels = [0, 1, 1, 0, 2, 1]
        def __len__(self):
            return len(self.labels)
        def __getitem__(self, idx):
            return {"x": torch.from_numpy(self.features[idx]), "y": self.labels[idx]}
    ds = Records()
    loader = data.DataLoader(ds, batch_size=4, collate_fn=None)
    xs = [b["x"] for b in loader]
    ys = [b["y"] for b in loader]
    n_batches = len(loader)
""")
case("torch.utils.data.Dataset", """
    import torch
    from torch.utils.data import Dataset, DataLoader
    class Words(Dataset):
        def __init__(self, sentences):
            self.sentences = sentences
        def __len__(self):
            return len(self.sentences)
        def __getitem__(self, i):
            words = self.sentences[i].split()
            return torch.tensor([len(w) for w in words])
    def pad(batch):
        longest = max(len(t) for t in batch)
        out = torch.zeros(len(batch), longest, dtype=torch.long)
        for row, t in enumerate(batch):
            out[row, :len(t)] = t
        return out
    ds = Words(["a bb ccc", "dddd", "ee f", "g hh iii jjjj", "kk"])
    padded = [b for b in DataLoader(ds, batch_size=2, collate_fn=pad, drop_last=True)]
    all_padded = [b for b in DataLoader(ds, batch_size=2, collate_fn=pad)]
""")

# ----------------------------------------------------------------------------- Subset, ConcatDataset, ChainDataset

for _name in ("torch.utils.data.Subset", "torch.utils.data.dataset.Subset"):
    case(_name, _joined(_SQUARES, f"""
        part = {_name}(Squares(10), [1, 3, 5, 9])
        n = len(part)
        values = [float(part[i][1]) for i in range(n)]
        last = part[-1][1]
        indices = list(part.indices)
        batches = [b.tolist() for a, b in DataLoader(part, batch_size=3)]
    """))
case("torch.utils.data.Subset", _joined(_SQUARES, """
    part = torch.utils.data.Subset(dataset=Squares(8), indices=range(2, 8, 2))
    n = len(part)
    values = [float(part[i][0]) for i in range(n)]
"""))
case("torch.utils.data.Subset", """
    import torch
    from torch.utils.data import TensorDataset, Subset, DataLoader
    ds = TensorDataset(torch.arange(20.0).reshape(10, 2), torch.arange(10))
    train = Subset(ds, list(range(0, 7)))
    test = Subset(ds, list(range(7, 10)))
    sizes = (len(train), len(test))
    tx, ty = test[0]
    labels = [yb.tolist() for xb, yb in DataLoader(train, batch_size=3)]
""")

for _name in ("torch.utils.data.ConcatDataset", "torch.utils.data.dataset.ConcatDataset"):
    case(_name, _joined(_SQUARES, f"""
        both = {_name}([Squares(3), Squares(4)])
        n = len(both)
        firsts = [float(both[i][1]) for i in range(n)]
        last = both[-1][1]
        sizes = list(both.cumulative_sizes)
        batches = [b.tolist() for a, b in DataLoader(both, batch_size=3)]
    """))
case("torch.utils.data.ConcatDataset", """
    import torch
    from torch.utils.data import TensorDataset, ConcatDataset, DataLoader
    a = TensorDataset(torch.arange(6.0).reshape(3, 2), torch.tensor([0, 1, 2]))
    b = TensorDataset(torch.arange(10.0, 14.0).reshape(2, 2), torch.tensor([3, 4]))
    joined = ConcatDataset(datasets=[a, b])
    n = len(joined)
    x4, y4 = joined[4]
    batches = [(xb, yb) for xb, yb in DataLoader(joined, batch_size=2)]
""")

for _name in ("torch.utils.data.ChainDataset", "torch.utils.data.dataset.ChainDataset"):
    case(_name, _joined(_STREAM, f"""
        chained = {_name}([Stream(0, 3), Stream(10, 2)])
        n = len(chained)
        items = [t.tolist() for t in chained]
        batches = [b for b in DataLoader(chained, batch_size=2)]
    """))

for _name in ("torch.utils.data.StackDataset", "torch.utils.data.dataset.StackDataset"):
    case(_name, _joined(_SQUARES, f"""
        pairs = {_name}(Squares(4), torch.utils.data.TensorDataset(torch.arange(8.0).reshape(4, 2)))
        n = len(pairs)
        (a, b), (row,) = pairs[2]
        batches = [(sq[1], t[0]) for sq, t in DataLoader(pairs, batch_size=3)]
    """))
case("torch.utils.data.StackDataset", _joined(_SQUARES, """
    from torch.utils.data import StackDataset
    named = StackDataset(image=Squares(5), label=list(range(10, 15)))
    n = len(named)
    item = named[3]
    batches = [(b["image"][1], b["label"]) for b in DataLoader(named, batch_size=2)]
"""))

# ----------------------------------------------------------------------------- random_split

for _name in ("torch.utils.data.random_split", "torch.utils.data.dataset.random_split"):
    case(_name, _joined(_SQUARES, f"""
        train, valid = {_name}(Squares(10), [7, 3])
        sizes = [len(train), len(valid)]
        train_items = [float(train[i][0]) for i in range(len(train))]
        valid_items = [float(valid[i][1]) for i in range(len(valid))]
    """))
    case(_name, _joined(_SQUARES, f"""
        train, valid = {_name}(Squares(10), [0.8, 0.2], generator=torch.Generator().manual_seed(42))
        sizes = [len(train), len(valid)]
        train_batches = [b.tolist() for a, b in DataLoader(train, batch_size=3)]
        valid_items = [float(valid[i][0]) for i in range(len(valid))]
    """))
case("torch.utils.data.random_split", """
    import torch
    from torch.utils.data import TensorDataset, DataLoader, random_split
    ds = TensorDataset(torch.arange(22.0).reshape(11, 2), torch.arange(11))
    parts = random_split(ds, [0.5, 0.3, 0.2])
    sizes = [len(p) for p in parts]
    firsts = [p[0][1] for p in parts]
    batches = [(xb, yb) for xb, yb in DataLoader(parts[0], batch_size=4)]
""")
case("torch.utils.data.random_split", """
    import torch
    from torch.utils.data import TensorDataset, random_split
    g = torch.Generator().manual_seed(0)
    ds = TensorDataset(torch.arange(9.0))
    a, b, c = random_split(dataset=ds, lengths=[4, 3, 2], generator=g)
    sizes = (len(a), len(b), len(c))
    items = [float(s[i][0]) for s in (a, b, c) for i in range(len(s))]
""")

# ----------------------------------------------------------------------------- samplers

for _name in ("torch.utils.data.Sampler", "torch.utils.data.sampler.Sampler"):
    case(_name, _joined(_SQUARES, f"""
        class Backwards({_name}):
            def __init__(self, data_source):
                self.n = len(data_source)
            def __iter__(self):
                return iter(range(self.n - 1, -1, -1))
            def __len__(self):
                return self.n
        ds = Squares(7)
        order = list(Backwards(ds))
        batches = [b.tolist() for a, b in DataLoader(ds, batch_size=3, sampler=Backwards(ds))]
    """))
case("torch.utils.data.Sampler", _joined(_SQUARES, """
    from torch.utils.data import Sampler
    class Pairs(Sampler):
        def __init__(self, n):
            self.n = n
        def __iter__(self):
            for start in range(0, self.n, 2):
                yield [start, min(start + 1, self.n - 1)]
        def __len__(self):
            return (self.n + 1) // 2
    loader = DataLoader(Squares(5), batch_sampler=Pairs(5))
    batches = [b.tolist() for a, b in loader]
    n_batches = len(loader)
"""))

for _name in ("torch.utils.data.RandomSampler", "torch.utils.data.sampler.RandomSampler"):
    case(_name, _joined(_SQUARES, f"""
        ds = Squares(8)
        loader = DataLoader(ds, batch_size=3, sampler={_name}(ds))
        batches = [b.tolist() for a, b in loader]
        again = [b.tolist() for a, b in loader]
        n_batches = len(loader)
    """))
case("torch.utils.data.RandomSampler", _joined(_SQUARES, """
    from torch.utils.data import RandomSampler
    ds = Squares(6)
    sampler = RandomSampler(ds, replacement=True, num_samples=10)
    n = len(sampler)
    batches = [b.tolist() for a, b in DataLoader(ds, batch_size=4, sampler=sampler, drop_last=True)]
"""))

for _name in ("torch.utils.data.SubsetRandomSampler", "torch.utils.data.sampler.SubsetRandomSampler"):
    case(_name, _joined(_SQUARES, f"""
        sampler = {_name}([0, 2, 4, 6, 7])
        n = len(sampler)
        loader = DataLoader(Squares(8), batch_size=2, sampler=sampler)
        batches = [b.tolist() for a, b in loader]
        n_batches = len(loader)
    """))
case("torch.utils.data.SubsetRandomSampler", """
    import torch
    import numpy as np
    from torch.utils.data import TensorDataset, DataLoader
    from torch.utils.data.sampler import SubsetRandomSampler
    ds = TensorDataset(torch.arange(20.0).reshape(10, 2), torch.arange(10))
    split = 7
    train_idx, valid_idx = list(range(split)), list(range(split, 10))
    train_loader = DataLoader(ds, batch_size=3, sampler=SubsetRandomSampler(train_idx))
    valid_loader = DataLoader(ds, batch_size=3, sampler=SubsetRandomSampler(indices=valid_idx))
    train_labels = [yb.tolist() for xb, yb in train_loader]
    valid_x = [xb for xb, yb in valid_loader]
""")

for _name in ("torch.utils.data.WeightedRandomSampler", "torch.utils.data.sampler.WeightedRandomSampler"):
    case(_name, _joined(_SQUARES, f"""
        sampler = {_name}([0.1, 0.4, 0.2, 0.3, 0.5], 8)
        n = len(sampler)
        loader = DataLoader(Squares(5), batch_size=3, sampler=sampler)
        batches = [b.tolist() for a, b in loader]
        n_batches = len(loader)
    """))
case("torch.utils.data.WeightedRandomSampler", """
    import torch
    from torch.utils.data import TensorDataset, DataLoader, WeightedRandomSampler
    labels = torch.tensor([0, 0, 0, 0, 1, 1])
    counts = torch.bincount(labels)
    weights = 1.0 / counts[labels].float()
    sampler = WeightedRandomSampler(weights=weights, num_samples=len(weights), replacement=False)
    ds = TensorDataset(torch.arange(12.0).reshape(6, 2), labels)
    loader = DataLoader(ds, batch_size=2, sampler=sampler)
    seen = sorted(yb.tolist() for xb, yb in loader)
    batches = [(xb, yb) for xb, yb in loader]
""")

for _name in ("torch.utils.data.SequentialSampler", "torch.utils.data.sampler.SequentialSampler"):
    case(_name, _joined(_SQUARES, f"""
        ds = Squares(5)
        order = list({_name}(ds))
        n = len({_name}(ds))
        batches = [b.tolist() for a, b in DataLoader(ds, batch_size=2, sampler={_name}(ds))]
    """))
for _name in ("torch.utils.data.BatchSampler", "torch.utils.data.sampler.BatchSampler"):
    case(_name, _joined(_SQUARES, f"""
        from torch.utils.data import SequentialSampler
        groups = list({_name}(SequentialSampler(range(7)), batch_size=3, drop_last=False))
        kept = list({_name}(SequentialSampler(range(7)), 3, True))
        loader = DataLoader(Squares(7), batch_sampler={_name}(SequentialSampler(range(7)), 3, False))
        batches = [b.tolist() for a, b in loader]
        n_batches = len(loader)
    """))

for _name in ("torch.utils.data.DistributedSampler", "torch.utils.data.distributed.DistributedSampler"):
    case(_name, _joined(_SQUARES, f"""
        ds = Squares(7)
        first = {_name}(ds, num_replicas=2, rank=0, shuffle=False)
        second = {_name}(ds, num_replicas=2, rank=1, shuffle=False)
        orders = [list(first), list(second)]
        n = len(second)
        dropped = list({_name}(ds, num_replicas=3, rank=2, shuffle=False, drop_last=True))
        batches = [b.tolist() for a, b in DataLoader(ds, batch_size=2, sampler=second)]
    """))
case("torch.utils.data.DistributedSampler", _joined(_SQUARES, """
    from torch.utils.data.distributed import DistributedSampler
    ds = Squares(9)
    sampler = DistributedSampler(ds, num_replicas=2, rank=1, seed=3)
    sampler.set_epoch(1)
    loader = DataLoader(ds, batch_size=2, sampler=sampler)
    batches = [b.tolist() for a, b in loader]
    n = len(sampler)
"""))

# ----------------------------------------------------------------------------- collate, workers

for _name in ("torch.utils.data.default_collate", "torch.utils.data.dataloader.default_collate",
              "torch.utils.data._utils.collate.default_collate"):
    case(_name, f"""
        import torch
        import {_name.rsplit('.', 1)[0]} as _m
        batch = _m.default_collate([(torch.tensor([1.0, 2.0]), 3), (torch.tensor([4.0, 5.0]), 6)])
        x, y = batch
        d = _m.default_collate([{{"a": 1.5, "b": torch.tensor([1])}}, {{"a": 2.5, "b": torch.tensor([2])}}])
        a, b = d["a"], d["b"]
    """)
case("torch.utils.data.default_collate", """
    import torch
    from torch.utils.data import DataLoader, TensorDataset, default_collate
    ds = TensorDataset(torch.arange(10.0).reshape(5, 2), torch.arange(5))
    def doubled(batch):
        x, y = default_collate(batch)
        return x * 2, y
    batches = [b for b in DataLoader(ds, batch_size=2, collate_fn=doubled, drop_last=True)]
""")
for _name in ("torch.utils.data.default_convert", "torch.utils.data.dataloader.default_convert",
              "torch.utils.data._utils.collate.default_convert"):
    case(_name, f"""
        import numpy as np
        import torch
        import {_name.rsplit('.', 1)[0]} as _m
        t = _m.default_convert(np.arange(4.0).reshape(2, 2))
        i = _m.default_convert(np.array([1, 2, 3], dtype=np.int32))
        pair = _m.default_convert((np.ones(2, dtype=np.float32), 7))
        d = _m.default_convert({{"x": np.arange(3), "name": "a"}})
        x, name = d["x"], d["name"]
    """)
case("torch.utils.data.default_convert", """
    import numpy as np
    import torch
    from torch.utils.data import DataLoader, Dataset
    class Rows(Dataset):
        def __len__(self):
            return 3
        def __getitem__(self, i):
            return np.full(2, float(i))
    unbatched = [r for r in DataLoader(Rows(), batch_size=None)]
""")
for _name in ("torch.utils.data.dataloader.get_worker_info", "torch.utils.data._utils.worker.get_worker_info"):
    case(_name, f"""
        import torch
        import {_name.rsplit('.', 1)[0]} as _m
        is_main = _m.get_worker_info() is None
    """)
case("torch.utils.data.get_worker_info", """
    import torch
    info = torch.utils.data.get_worker_info()
    is_main = info is None
""")
case("torch.utils.data.get_worker_info", _joined(_STREAM, """
    from torch.utils.data import get_worker_info
    class Sharded(IterableDataset):
        def __iter__(self):
            info = get_worker_info()
            start, step = (0, 1) if info is None else (info.id, info.num_workers)
            return iter(torch.arange(6.0)[start::step])
    items = [b for b in DataLoader(Sharded(), batch_size=4)]
"""))

# ----------------------------------------------------------------------------- torch.utils.dlpack

case("torch.utils.dlpack.from_dlpack", """
    import torch
    from torch.utils.dlpack import from_dlpack, to_dlpack
    x = torch.arange(6.0).reshape(2, 3)
    y = from_dlpack(to_dlpack(x))
    doubled = y * 2
""")
case("torch.utils.dlpack.to_dlpack", """
    import torch
    import torch.utils.dlpack
    x = torch.tensor([[1, 2], [3, 4]])
    back = torch.utils.dlpack.from_dlpack(torch.utils.dlpack.to_dlpack(x))
    total = back.sum()
""")

# ----------------------------------------------------------------------------- torch.utils.checkpoint (RCP001)

case("torch.utils.checkpoint.checkpoint", """
    import torch
    import torch.nn as nn
    from torch.utils.checkpoint import checkpoint
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = nn.ModuleList([nn.Sequential(nn.Linear(4, 4), nn.ReLU()) for _ in range(3)])
            self.head = nn.Linear(4, 2)
        def forward(self, x):
            for block in self.blocks:
                x = checkpoint(block, x, use_reentrant=False)
            return self.head(x)
    torch.manual_seed(0)
    net = Net()
    y = net(torch.linspace(-1, 1, 8).reshape(2, 4))
""")
case("torch.utils.checkpoint.checkpoint", """
    import torch
    import torch.utils.checkpoint
    def scaled(a, b, scale=1.0):
        return (a * b).sum(dim=-1) * scale
    x = torch.arange(6.0).reshape(2, 3)
    w = torch.tensor([0.5, -1.0, 2.0])
    out = torch.utils.checkpoint.checkpoint(scaled, x, w, use_reentrant=False, scale=3.0)
""")
case("torch.utils.checkpoint.checkpoint_sequential", """
    import torch
    import torch.nn as nn
    from torch.utils.checkpoint import checkpoint_sequential
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 6), nn.ReLU(), nn.Linear(6, 6), nn.Tanh(), nn.Linear(6, 2))
    x = torch.linspace(-2, 2, 12).reshape(3, 4)
    y = checkpoint_sequential(model, 2, x, use_reentrant=False)
    layers = [nn.Linear(2, 2), nn.Sigmoid()]
    z = checkpoint_sequential(layers, 1, y, use_reentrant=False)
""")

# an IterableDataset subclass read directly and through a DataLoader (the base class is the
# API: its records came only from the LDR008 rule example before)
for _name in ("torch.utils.data.IterableDataset", "torch.utils.data.dataset.IterableDataset"):
    case(_name, _joined(_STREAM, """
        items = [t.tolist() for t in Stream(0, 4)]
        batches = [b for b in DataLoader(Stream(5, 5), batch_size=2)]
        ragged = [b for b in DataLoader(Stream(1, 3), batch_size=2, drop_last=True)]
    """))
