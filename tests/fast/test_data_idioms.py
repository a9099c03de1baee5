"""Data idioms of training tutorials (LDR003, LDR006, LDR007, DAT007): shuffled loaders,
several loaders over one dataset, dataset items, ``loader.dataset`` and the legacy typed
constructors, before and after."""

import ast

from tests.fast.codemod import assert_ports, dedent, edit_ids, finding_ids, port

SHUFFLED = "# msmagic: LDR003 shuffled in MindSpore's own order (%%ms_parity uses PyTorch's)"


def test_two_loaders_over_one_dataset_in_loops_and_functions():
    assert_ports(
        """
            import torch
            from torch.utils.data import TensorDataset, DataLoader
            ds = TensorDataset(x, y)
            train = DataLoader(ds, batch_size=4, shuffle=True)
            full = DataLoader(ds, batch_size=8)
            for k in range(3):
                fold = DataLoader(ds, batch_size=3)
            def make(data, size):
                return DataLoader(data, batch_size=size)
        """,
        f"""
            import mindspore
            from mindspore.dataset.dataloader import TensorDataset, DataLoader
            ds = TensorDataset(x, y)
            train = DataLoader(ds, batch_size=4, shuffle=True)  {SHUFFLED}
            full = DataLoader(ds, batch_size=8)
            for k in range(3):
                fold = DataLoader(ds, batch_size=3)
            def make(data, size):
                return DataLoader(data, batch_size=size)
        """,
        edits={"IMP001", "LDR001", "LDR002", "LDR003"},
        findings={"LDR003"},
    )


def test_loader_over_an_earlier_cells_dataset():
    from msmagic.engine.session import PortSession

    session = PortSession()
    assert_ports(
        """
            import torch
            import torch.utils.data as data
            train_dataset = data.TensorDataset(x, y)
        """,
        """
            import mindspore
            import mindspore.dataset.dataloader as data
            train_dataset = data.TensorDataset(x, y)
        """,
        edits={"IMP001", "LDR001"},
        session=session,
    )
    assert_ports(
        """
            train_loader = data.DataLoader(train_dataset, batch_size=100, num_workers=2)
            n = len(train_loader.dataset)
        """,
        """
            train_loader = data.DataLoader(train_dataset, batch_size=100)
            n = len(train_loader.dataset)
        """,
        edits={"LDR002", "LDR004"},
        session=session,
    )


def test_a_custom_dataset_class_and_its_loader():
    """uvadlc's XORDataset: ``torch.utils.data as data``, a Dataset subclass built in one
    cell, its loader in the next."""
    assert_ports(
        """
            import torch
            import torch.utils.data as data
            class XORDataset(data.Dataset):
                def __init__(self, size, std=0.1):
                    super().__init__()
                    self.size = size
                    self.data = torch.randint(low=0, high=2, size=(size, 2)).float()
                    self.label = (self.data.sum(dim=1) == 1).to(torch.long)
                def __len__(self):
                    return self.size
                def __getitem__(self, idx):
                    return self.data[idx], self.label[idx]
            dataset = XORDataset(size=200)
            data_loader = data.DataLoader(dataset, batch_size=8, shuffle=True)
            data_inputs, data_labels = next(iter(data_loader))
        """,
        f"""
            import mindspore
            import mindspore.dataset.dataloader as data
            class XORDataset(data.Dataset):
                def __init__(self, size, std=0.1):
                    super().__init__()
                    self.size = size
                    self.data = mindspore.ops.randint(low=0, high=2, size=(size, 2)).float()
                    self.label = (self.data.sum(dim=1) == 1).to(mindspore.int64)
                def __len__(self):
                    return self.size
                def __getitem__(self, idx):
                    return self.data[idx], self.label[idx]
            dataset = XORDataset(size=200)
            data_loader = data.DataLoader(dataset, batch_size=8, shuffle=True)  {SHUFFLED}
            data_inputs, data_labels = next(iter(data_loader))
        """,
        edits={"DAT005", "FUN011", "IMP001", "LDR002", "LDR003"},
        findings={"LDR003"},
    )


def test_subset_and_random_split_are_written_out_once():
    """uvadlc_t3's shape: random_split of a TensorDataset, then loaders over the parts;
    a Subset later in the same cell reuses the definition."""
    assert_ports(
        """
            import torch
            import torch.utils.data as data
            train_dataset = torch.utils.data.TensorDataset(x, y)

            # split it
            train_set, val_set = torch.utils.data.random_split(train_dataset, [1000, 100])
            train_loader = data.DataLoader(train_set, batch_size=1024, shuffle=True, drop_last=False)
            head = data.Subset(train_dataset, range(10))
        """,
        f"""
            import mindspore
            import mindspore.dataset.dataloader as data
            import numpy
            train_dataset = mindspore.dataset.dataloader.TensorDataset(x, y)

            class Subset(mindspore.dataset.dataloader.Dataset):
                \"\"\"The items of a dataset at the given indices (PyTorch's Subset).\"\"\"

                def __init__(self, dataset, indices):
                    super().__init__()
                    self.dataset = dataset
                    self.indices = indices

                def __getitem__(self, idx):
                    if isinstance(idx, list):
                        return self.dataset[[self.indices[i] for i in idx]]
                    return self.dataset[self.indices[idx]]

                def __len__(self):
                    return len(self.indices)

            def random_split(dataset, lengths, seed=None):
                \"\"\"PyTorch's random_split: consecutive Subsets of one random permutation of the rows.\"\"\"
                lengths = list(lengths)
                total = sum(lengths)
                if abs(total - 1) <= 1e-9 and total <= 1:  # fractions of the dataset
                    counts = [int(len(dataset) * frac) for frac in lengths]
                    for i in range(len(dataset) - sum(counts)):
                        counts[i % len(counts)] += 1
                    lengths = counts
                if sum(lengths) != len(dataset):
                    raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
                generator = numpy.random if seed is None else numpy.random.default_rng(seed)
                order = generator.permutation(len(dataset)).tolist()
                subsets, start = [], 0
                for n in lengths:
                    subsets.append(Subset(dataset, order[start:start + n]))
                    start += n
                return subsets

            # split it
            train_set, val_set = random_split(train_dataset, [1000, 100])
            train_loader = data.DataLoader(train_set, batch_size=1024, shuffle=True, drop_last=False)  {SHUFFLED}
            head = Subset(train_dataset, range(10))
        """,
        edits={"IMP001", "LDR001", "LDR002", "LDR003", "LDR009"},
        findings={"LDR003"},
    )


def _ported(before, *, edits, findings):
    """The port of ``before`` (checked: valid Python, the rule ids, porting it again
    changes nothing), for tests that look at parts of a long output."""
    result = port(dedent(before))
    ast.parse(result.code)
    assert set(edit_ids(result)) == set(edits) and finding_ids(result) == set(findings), \
        (edit_ids(result), result.unsupported)
    assert port(result.code).code == result.code
    return result


def test_random_split_with_a_seeded_torch_generator_takes_the_seed():
    result = _ported(
        """
            from torch.utils.data import random_split
            import torch
            a, b = random_split(ds, [0.8, 0.2], generator=torch.Generator().manual_seed(42))
        """,
        edits={"IMP001", "LDR009"},
        findings=set(),
    )
    assert "a, b = random_split(ds, [0.8, 0.2], seed=42)" in result.code
    assert "import torch" not in result.code and "Generator" not in result.code
    assert "class Subset(" in result.code and "def random_split(" in result.code


def test_subset_random_sampler_is_written_out():
    """udacity_cifar10_cnn's shape: the sampler imported from torch.utils.data.sampler,
    two samplers in one cell, loaders in the next."""
    from msmagic.engine.session import PortSession

    session = PortSession()
    result = assert_ports(
        """
            import torch
            from torch.utils.data.sampler import SubsetRandomSampler
            train_sampler = SubsetRandomSampler(train_idx)
            valid_sampler = SubsetRandomSampler(valid_idx)
        """,
        """
            import mindspore
            import numpy

            class SubsetRandomSampler(mindspore.dataset.dataloader.Sampler):
                \"\"\"Yields the given indices in a new random order each epoch (PyTorch's SubsetRandomSampler).\"\"\"

                def __init__(self, indices):
                    super().__init__()
                    self.indices = indices

                def __iter__(self):
                    for i in numpy.random.permutation(len(self.indices)).tolist():
                        yield self.indices[i]

                def __len__(self):
                    return len(self.indices)

            train_sampler = SubsetRandomSampler(train_idx)
            valid_sampler = SubsetRandomSampler(valid_idx)
        """,
        edits={"IMP001", "LDR010"},
        session=session,
    )
    assert_ports(
        """
            train_loader = torch.utils.data.DataLoader(train_data, batch_size=batch_size,
                sampler=train_sampler, num_workers=num_workers)
            n = len(train_loader.sampler)
        """,
        """
            train_loader = mindspore.dataset.dataloader.DataLoader(train_data, batch_size=batch_size,
                sampler=train_sampler)
            n = len(train_loader.sampler)
        """,
        edits={"LDR002", "LDR004"},
        session=session,
    )


def test_a_collate_factory_with_pad_sequence_and_a_loader_function():
    """bentrevett's shape: pad_sequence with the pad index the factory receives; the
    loader built in a function that receives the dataset."""
    result = _ported(
        """
            import torch
            import torch.nn as nn
            def get_collate_fn(pad_index):
                def collate_fn(batch):
                    batch_ids = [i["ids"] for i in batch]
                    batch_ids = nn.utils.rnn.pad_sequence(batch_ids, padding_value=pad_index)
                    return {"ids": batch_ids, "label": torch.stack([i["label"] for i in batch])}
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
        """,
        edits={"FUN002", "IMP001", "LDR002", "LDR003", "UTL003"},
        findings={"LDR003"},
    )
    code = result.code
    assert "batch_ids = pad_sequence(batch_ids, padding_value=pad_index)" in code
    assert code.index("def pad_sequence(") < code.index("def get_collate_fn(")
    assert "    data_loader = mindspore.dataset.dataloader.DataLoader(\n        dataset=dataset," in code
    assert "import torch" not in code


def test_typed_legacy_constructors():
    assert_ports(
        """
            import torch
            ids = torch.LongTensor([3, 1, 2])
            grid = torch.FloatTensor(2, 3)
            tokens = 0
            for line in lines:
                tokens += len(line)
            buf = torch.LongTensor(tokens)
            as_long = ids.type(torch.FloatTensor)
            unknown = torch.FloatTensor(q)
            kind = isinstance(ids, torch.LongTensor)
        """,
        """
            import mindspore
            import torch  # msmagic: kept for the PyTorch calls flagged below
            ids = mindspore.Tensor([3, 1, 2], mindspore.int64)
            grid = mindspore.ops.zeros((2, 3), mindspore.float32)  # msmagic: DAT007 torch.FloatTensor(sizes) was uninitialised in PyTorch; zeros here
            tokens = 0
            for line in lines:
                tokens += len(line)
            buf = mindspore.ops.zeros(tokens, mindspore.int64)  # msmagic: DAT007 torch.LongTensor(sizes) was uninitialised in PyTorch; zeros here
            as_long = ids.type(mindspore.float32)
            unknown = mindspore.Tensor(q, mindspore.float32)  # msmagic: DAT007 torch.FloatTensor(x): x taken as data
            kind = isinstance(ids, torch.LongTensor)  # msmagic: DAT007 torch.LongTensor as a type
        """,
        edits={"DAT007", "IMP001", "TNS005"},
        findings={"DAT007"},
    )


def test_index_arrays_bound_earlier_become_tensors_where_they_index():
    assert_ports(
        """
            import numpy as np
            import torch
            x = torch.arange(12.0).reshape(3, 4)
            a = np.array([0.1, 0.9, 0.3])
            i = np.argmax(a)
            idx = np.where(a > 0.2)[0]
            order = np.argsort(a)
            row = x[i]
            sel = x[idx]
            both = x[np.nonzero(a > 0.2)]
            for order in [[0, 1]]:
                y = x[order]
        """,
        """
            import numpy as np
            import mindspore
            x = mindspore.ops.arange(12.0).reshape(3, 4)
            a = np.array([0.1, 0.9, 0.3])
            i = np.argmax(a)
            idx = np.where(a > 0.2)[0]
            order = np.argsort(a)
            row = x[mindspore.Tensor(i)]
            sel = x[mindspore.Tensor(idx)]
            both = x[np.nonzero(a > 0.2)]
            for order in [[0, 1]]:
                y = x[order]
        """,
    )


def test_a_definition_avoids_a_name_an_earlier_cell_bound():
    """A user's own ``Subset`` from an earlier cell is not overwritten by the definition."""
    from msmagic.engine.session import PortSession

    session = PortSession()
    port(dedent("""
        import torch
        def Subset(items, keep):
            return [items[i] for i in keep]
    """), session=session)
    result = port(dedent("""
        part = torch.utils.data.Subset(ds, [0, 1])
        mine = Subset([5, 6, 7], [2])
    """), session=session)
    assert "class Subset2(mindspore.dataset.dataloader.Dataset):" in result.code
    assert "part = Subset2(ds, [0, 1])" in result.code and "mine = Subset([5, 6, 7], [2])" in result.code
