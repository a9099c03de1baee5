"""Data loading (LDR) and distributions (DST): TensorDataset/DataLoader and torch.distributions."""

from tests.fast.codemod import assert_ports


SHUFFLED = "# msmagic: LDR003 shuffled in MindSpore's own order (%%ms_parity uses PyTorch's)"


def test_tensor_dataset_keeps_its_tensors():
    assert_ports(
        """
            import torch
            from torch.utils.data import TensorDataset
            x = torch.arange(12.0).reshape(6, 2)
            y = torch.arange(6)
            ds = TensorDataset(x, y)
            n = len(ds)
        """,
        """
            import mindspore
            from mindspore.dataset.dataloader import TensorDataset
            x = mindspore.ops.arange(12.0).reshape(6, 2)
            y = mindspore.ops.arange(6)
            ds = TensorDataset(x, y)
            n = len(ds)
        """,
        edits={"FUN001", "IMP001", "LDR001"},
    )


def test_dataloader_keeps_its_arguments():
    assert_ports(
        """
            import torch
            from torch.utils.data import TensorDataset, DataLoader
            ds = TensorDataset(x, y)
            loader = DataLoader(ds, batch_size=4, drop_last=True)
            again = DataLoader(ds, 8)
        """,
        """
            import mindspore
            from mindspore.dataset.dataloader import TensorDataset, DataLoader
            ds = TensorDataset(x, y)
            loader = DataLoader(ds, batch_size=4, drop_last=True)
            again = DataLoader(ds, 8)
        """,
        edits={"IMP001", "LDR001", "LDR002"},
    )


def test_dataloader_spelled_through_the_module():
    assert_ports(
        """
            import torch
            import torch.utils.data as data
            loader = data.DataLoader(data.TensorDataset(x, y), batch_size=4, drop_last=False)
            other = torch.utils.data.DataLoader(dataset=ds, batch_size=2)
        """,
        """
            import mindspore
            import mindspore.dataset.dataloader as data
            loader = data.DataLoader(data.TensorDataset(x, y), batch_size=4, drop_last=False)
            other = mindspore.dataset.dataloader.DataLoader(dataset=ds, batch_size=2)
        """,
        edits={"IMP001", "LDR001", "LDR002"},
    )


def test_dataloader_shuffle_is_flagged():
    assert_ports(
        """
            import torch
            from torch.utils.data import TensorDataset, DataLoader
            loader = DataLoader(TensorDataset(x), batch_size=2, shuffle=True)
            maybe = DataLoader(ds, batch_size=2, shuffle=shuffle)
            never = DataLoader(ds, batch_size=2, shuffle=False)
        """,
        f"""
            import mindspore
            from mindspore.dataset.dataloader import TensorDataset, DataLoader
            loader = DataLoader(TensorDataset(x), batch_size=2, shuffle=True)  {SHUFFLED}
            maybe = DataLoader(ds, batch_size=2, shuffle=shuffle)  {SHUFFLED}
            never = DataLoader(ds, batch_size=2, shuffle=False)
        """,
        edits={"IMP001", "LDR001", "LDR002", "LDR003"},
        findings={"LDR003"},
    )


def test_dataloader_worker_options_dropped():
    assert_ports(
        """
            import torch
            from torch.utils.data import DataLoader
            loader = DataLoader(ds, batch_size=5, num_workers=2, pin_memory=True, persistent_workers=True)
            positional = DataLoader(ds, 4, False, None, None, 2, my_collate)
        """,
        """
            import mindspore
            from mindspore.dataset.dataloader import DataLoader
            loader = DataLoader(ds, batch_size=5)
            positional = DataLoader(ds, 4, False, None, None, collate_fn=my_collate)
        """,
        edits={"IMP001", "LDR002", "LDR004"},
    )


def test_dataloader_collate_sampler_and_generator():
    assert_ports(
        """
            import torch
            from torch.utils.data import DataLoader, RandomSampler
            loader = DataLoader(my_dataset, batch_size=4, collate_fn=my_collate, sampler=my_sampler)
            by_lambda = DataLoader(my_dataset, batch_size=4, collate_fn=lambda b: torch.stack(b))
            seeded = DataLoader(my_dataset, batch_size=4, shuffle=True, generator=torch.Generator().manual_seed(0))
            sampled = DataLoader(my_dataset, sampler=RandomSampler(my_dataset, replacement=True))
        """,
        f"""
            import mindspore
            from mindspore.dataset.dataloader import DataLoader, RandomSampler
            loader = DataLoader(my_dataset, batch_size=4, collate_fn=my_collate, sampler=my_sampler)
            by_lambda = DataLoader(my_dataset, batch_size=4, collate_fn=lambda b: mindspore.ops.stack(b))
            seeded = DataLoader(my_dataset, batch_size=4, shuffle=True)  # msmagic: LDR003 torch generator dropped: MindSpore's own order; LDR003 shuffled in MindSpore's own order (%%ms_parity uses PyTorch's)
            sampled = DataLoader(my_dataset, sampler=RandomSampler(my_dataset, replacement=True))
        """,
        edits={"FUN002", "IMP001", "LDR002", "LDR003", "LDR010"},
        findings={"LDR003"},
    )


def test_dataloader_with_unpacked_keywords():
    assert_ports(
        """
            import torch
            from torch.utils.data import DataLoader
            loader_kwargs = {"batch_size": 64, "shuffle": True}
            train = DataLoader(train_ds, **loader_kwargs)
            test_kwargs = dict(batch_size=1000, num_workers=1)
            test = DataLoader(test_ds, **test_kwargs, pin_memory=True)
            def make(ds, **options):
                return DataLoader(ds, **options)
        """,
        f"""
            import mindspore
            from mindspore.dataset.dataloader import DataLoader
            loader_kwargs = {{"batch_size": 64, "shuffle": True}}
            train = DataLoader(train_ds, **loader_kwargs)  {SHUFFLED}
            test_kwargs = dict(batch_size=1000, num_workers=1)
            test = DataLoader(test_ds, **test_kwargs)
            def make(ds, **options):
                return DataLoader(ds, **options)  # msmagic: LDR005 unpacked DataLoader arguments not checked
        """,
        edits={"IMP001", "LDR002", "LDR003", "LDR004"},
        findings={"LDR003", "LDR005"},
    )


def test_dataloader_worker_init_flagged():
    assert_ports(
        """
            from torch.utils.data import DataLoader
            loader = DataLoader(my_dataset, batch_size=4, worker_init_fn=seed_worker)
        """,
        """
            from mindspore.dataset.dataloader import DataLoader
            loader = DataLoader(my_dataset, batch_size=4)  # msmagic: LDR005 worker_init_fn removed (no worker processes)
        """,
        edits={"IMP001", "LDR002"},
        findings={"LDR005"},
    )


def test_iterating_a_loader_and_its_dataset_unchanged():
    assert_ports(
        """
            import torch
            from torch.utils.data import TensorDataset, DataLoader
            ds = TensorDataset(x, y)
            loader = DataLoader(ds, batch_size=4)
            for i, (xb, yb) in enumerate(loader):
                total = xb.sum()
            for batch in loader:
                ids = batch["ids"]
            first = next(iter(loader))
            n = len(loader.dataset) + len(loader)
            image, label = ds[0]
            last = loader.dataset[-1]
            head = ds[:3]
        """,
        """
            import mindspore
            from mindspore.dataset.dataloader import TensorDataset, DataLoader
            ds = TensorDataset(x, y)
            loader = DataLoader(ds, batch_size=4)
            for i, (xb, yb) in enumerate(loader):
                total = xb.sum()
            for batch in loader:
                ids = batch["ids"]
            first = next(iter(loader))
            n = len(loader.dataset) + len(loader)
            image, label = ds[0]
            last = loader.dataset[-1]
            head = ds[:3]
        """,
        edits={"IMP001", "LDR001", "LDR002"},
    )


def test_dataset_base_classes():
    assert_ports(
        """
            import torch
            import torch.utils.data as data
            from torch.utils.data import Dataset, IterableDataset
            class A(Dataset):
                def __len__(self):
                    return 3
                def __getitem__(self, i):
                    return torch.tensor(i)
            class B(data.Dataset):
                pass
            class C(torch.utils.data.Dataset):
                pass
            class D(IterableDataset):
                def __iter__(self):
                    return iter(range(3))
            merged = data.default_collate([A()[0], A()[1]])
        """,
        """
            import mindspore
            import mindspore.dataset.dataloader as data
            from mindspore.dataset.dataloader import Dataset, IterableDataset
            class A(Dataset):
                def __len__(self):
                    return 3
                def __getitem__(self, i):
                    return mindspore.Tensor(i)
            class B(data.Dataset):
                pass
            class C(mindspore.dataset.dataloader.Dataset):
                pass
            class D(IterableDataset):
                def __iter__(self):
                    return iter(range(3))
            merged = data.default_collate([A()[0], A()[1]])
        """,
        edits={"DAT001", "IMP001", "LDR008"},
    )


def test_distributions_map_to_mindspore_classes():
    assert_ports(
        """
            import torch
            from torch.distributions import Normal, Uniform, Exponential, Bernoulli, Categorical, kl_divergence
            lp = Normal(loc, scale).log_prob(x)
            c = Uniform(low, high).cdf(x)
            h = Exponential(rate).entropy()
        """,
        """
            import mindspore
            from mindspore.nn.probability.distribution import Normal, Uniform, Exponential, Bernoulli, Categorical
            lp = Normal(loc, scale).log_prob(x)
            c = Uniform(low, high).cdf(x)
            h = Exponential(rate).entropy()
        """,
        edits={"DST001", "DST003", "IMP001"},
    )


def test_bernoulli_logits_become_probs():
    assert_ports(
        """
            import torch
            from torch.distributions import Normal, Uniform, Exponential, Bernoulli, Categorical, kl_divergence
            lb = Bernoulli(logits=logits).log_prob(x)
        """,
        """
            import mindspore
            from mindspore.nn.probability.distribution import Normal, Uniform, Exponential, Bernoulli, Categorical
            lb = Bernoulli(probs=mindspore.ops.sigmoid(logits), dtype=mindspore.float32).log_prob(x)
        """,
        edits={"DST002", "DST003", "IMP001"},
    )


def test_categorical_probs_normalised():
    assert_ports(
        """
            import torch
            from torch.distributions import Normal, Uniform, Exponential, Bernoulli, Categorical, kl_divergence
            p = torch.tensor([[1.0, 2.0, 1.0], [0.5, 0.2, 0.3]])
            lc = Categorical(p).log_prob(torch.tensor([2, 0]))
        """,
        """
            import mindspore
            from mindspore.nn.probability.distribution import Normal, Uniform, Exponential, Bernoulli, Categorical
            p = mindspore.Tensor([[1.0, 2.0, 1.0], [0.5, 0.2, 0.3]])
            lc = Categorical(p / p.sum(-1, keepdims=True), dtype=mindspore.int64).log_prob(mindspore.Tensor([2, 0]))
        """,
        edits={"DAT001", "DST002", "DST003", "IMP001"},
    )


def test_distribution_properties_become_methods():
    assert_ports(
        """
            import torch
            from torch.distributions import Normal, Uniform, Exponential, Bernoulli, Categorical, kl_divergence
            d = Normal(loc, scale)
            m = d.mean
            s = d.stddev
            v = d.variance
        """,
        """
            import mindspore
            from mindspore.nn.probability.distribution import Normal, Uniform, Exponential, Bernoulli, Categorical
            d = Normal(loc, scale)
            m = d.mean()
            s = d.sd()
            v = d.var()
        """,
        edits={"DST001", "DST003", "IMP001"},
    )


def test_distribution_sample_shape():
    assert_ports(
        """
            import torch
            from torch.distributions import Normal, Uniform, Exponential, Bernoulli, Categorical, kl_divergence
            s = Normal(torch.zeros(2), torch.ones(2)).sample((3,))
        """,
        """
            import mindspore
            from mindspore.nn.probability.distribution import Normal, Uniform, Exponential, Bernoulli, Categorical
            s = Normal(mindspore.ops.zeros(2), mindspore.ops.ones(2)).sample((3,))
        """,
        edits={"DST001", "DST004", "FUN009", "IMP001"},
    )


def test_kl_divergence_becomes_kl_loss():
    assert_ports(
        """
            import torch
            from torch.distributions import Normal, Uniform, Exponential, Bernoulli, Categorical, kl_divergence
            p = Normal(torch.tensor([0.0, 1.0]), torch.tensor([1.0, 2.0]))
            q = Normal(torch.tensor([0.5, 0.0]), torch.tensor([1.5, 1.0]))
            kl = kl_divergence(p, q)
        """,
        """
            import mindspore
            from mindspore.nn.probability.distribution import Normal, Uniform, Exponential, Bernoulli, Categorical
            p = Normal(mindspore.Tensor([0.0, 1.0]), mindspore.Tensor([1.0, 2.0]))
            q = Normal(mindspore.Tensor([0.5, 0.0]), mindspore.Tensor([1.5, 1.0]))
            kl = p.kl_loss("Normal", q.mean(), q.sd())
        """,
        edits={"DAT001", "DST001", "DST005", "IMP001"},
    )
