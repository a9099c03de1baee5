"""Data idioms of training tutorials (LDR003, LDR006, LDR007, DAT007): shuffled loaders,
several loaders over one dataset, dataset items, ``loader.dataset`` and the legacy typed
constructors, before and after."""

from tests.fast.codemod import assert_ports

SHUFFLED = "# msmagic: LDR003 shuffled in MindSpore's own order (%%ms_parity uses PyTorch's)"


def test_two_loaders_over_one_dataset():
    assert_ports(
        """
            import torch
            from torch.utils.data import TensorDataset, DataLoader
            ds = TensorDataset(x, y)
            train = DataLoader(ds, batch_size=4, shuffle=True)
            full = DataLoader(ds, batch_size=8)
        """,
        f"""
            import mindspore
            ds = mindspore.dataset.NumpySlicesDataset((x.asnumpy(), y.asnumpy()), shuffle=False)
            train = ds.shuffle(len(ds)).batch(4)  {SHUFFLED}
            full = mindspore.dataset.GeneratorDataset(ds, ds.get_col_names(), shuffle=False).batch(8)
        """,
        edits={"IMP001", "LDR001", "LDR002", "LDR003", "LDR006"},
        findings={"LDR003"},
    )


def test_shuffled_loader_over_a_dataset_built_in_the_call():
    assert_ports(
        """
            import torch
            from torch.utils.data import TensorDataset, DataLoader
            loader = DataLoader(TensorDataset(x, y), batch_size=2, shuffle=True, drop_last=True)
        """,
        f"""
            import mindspore
            loader = mindspore.dataset.NumpySlicesDataset((x.asnumpy(), y.asnumpy()), shuffle=True).batch(2, drop_remainder=True)  {SHUFFLED}
        """,
        edits={"IMP001", "LDR001", "LDR002", "LDR003"},
        findings={"LDR003"},
    )


def test_loaders_in_loops_and_functions():
    assert_ports(
        """
            import torch
            from torch.utils.data import TensorDataset, DataLoader
            ds = TensorDataset(x, y)
            for k in range(3):
                fold = DataLoader(ds, batch_size=3, shuffle=True)
            def make(data, size):
                return DataLoader(data, batch_size=size)
            def fresh(a, b):
                inner = TensorDataset(a, b)
                return DataLoader(inner, batch_size=5)
        """,
        f"""
            import mindspore
            ds = mindspore.dataset.NumpySlicesDataset((x.asnumpy(), y.asnumpy()), shuffle=False)
            for k in range(3):
                fold = mindspore.dataset.GeneratorDataset(ds, ds.get_col_names(), shuffle=True).batch(3)  {SHUFFLED}
            def make(data, size):
                return mindspore.dataset.GeneratorDataset(data, data.get_col_names(), shuffle=False).batch(size)  # msmagic: LDR005 source must be a mindspore.dataset
            def fresh(a, b):
                inner = mindspore.dataset.NumpySlicesDataset((a.asnumpy(), b.asnumpy()), shuffle=False)
                return inner.batch(5)
        """,
        edits={"IMP001", "LDR001", "LDR002", "LDR003", "LDR006"},
        findings={"LDR003", "LDR005"},
    )


def test_loader_over_an_earlier_cells_dataset_reads_it_through_generator_dataset():
    from msmagic.engine.session import PortSession

    session = PortSession()
    assert_ports(
        """
            import torch
            from torch.utils.data import TensorDataset, DataLoader
            train_dataset = TensorDataset(x, y)
        """,
        """
            import mindspore
            train_dataset = mindspore.dataset.NumpySlicesDataset((x.asnumpy(), y.asnumpy()), shuffle=False)
        """,
        edits={"IMP001", "LDR001"},
        session=session,
    )
    assert_ports(
        """
            train_loader = DataLoader(train_dataset, batch_size=100)
            n = len(train_loader.dataset)
        """,
        """
            train_loader = mindspore.dataset.GeneratorDataset(train_dataset, train_dataset.get_col_names(), shuffle=False).batch(100)
            n = len(train_dataset)
        """,
        edits={"LDR002", "LDR006", "LDR007"},
        session=session,
    )


def test_dataset_items_and_loader_dataset():
    assert_ports(
        """
            import torch
            from torch.utils.data import TensorDataset, DataLoader
            ds = TensorDataset(x, y)
            loader = DataLoader(ds, batch_size=4)
            image, label = ds[0]
            last = ds[-1]
            picked = loader.dataset[torch.tensor(2)]
            rows = len(loader.dataset)
            head = ds[:3]
        """,
        """
            import mindspore
            import numpy
            ds = mindspore.dataset.NumpySlicesDataset((x.asnumpy(), y.asnumpy()), shuffle=False)
            loader = ds.batch(4)
            image, label = tuple(mindspore.Tensor(numpy.asarray(c)) for c in ds[0])
            last = tuple(mindspore.Tensor(numpy.asarray(c)) for c in ds[len(ds) - 1])
            picked = tuple(mindspore.Tensor(numpy.asarray(c)) for c in ds[int(mindspore.Tensor(2))])
            rows = len(ds)
            head = ds[:3]  # msmagic: LDR007 TensorDataset slicing not ported: slice the tensors
        """,
        edits={"DAT001", "IMP001", "LDR001", "LDR002", "LDR007"},
        findings={"LDR007"},
    )


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
