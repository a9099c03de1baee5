"""Data loading (LDR) and distributions (DST): TensorDataset/DataLoader and torch.distributions."""

from tests.fast.codemod import assert_ports


def test_tensor_dataset_becomes_numpy_slices():
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
            x = mindspore.ops.arange(12.0).reshape(6, 2)
            y = mindspore.ops.arange(6)
            ds = mindspore.dataset.NumpySlicesDataset((x.asnumpy(), y.asnumpy()), shuffle=False)
            n = len(ds)
        """,
        edits={"FUN001", "IMP001", "LDR001"},
    )


def test_dataloader_becomes_batch():
    assert_ports(
        """
            import torch
            from torch.utils.data import TensorDataset, DataLoader
            ds = TensorDataset(x, y)
            loader = DataLoader(ds, batch_size=4, drop_last=True)
        """,
        """
            import mindspore
            ds = mindspore.dataset.NumpySlicesDataset((x.asnumpy(), y.asnumpy()), shuffle=False)
            loader = ds.batch(4, drop_remainder=True)
        """,
        edits={"IMP001", "LDR001", "LDR002"},
    )


def test_dataloader_positional_batch_size():
    assert_ports(
        """
            import torch
            from torch.utils.data import TensorDataset, DataLoader
            ds = TensorDataset(x, y)
            loader = DataLoader(ds, 8)
        """,
        """
            import mindspore
            ds = mindspore.dataset.NumpySlicesDataset((x.asnumpy(), y.asnumpy()), shuffle=False)
            loader = ds.batch(8)
        """,
        edits={"IMP001", "LDR001", "LDR002"},
    )


def test_dataloader_inline_dataset():
    assert_ports(
        """
            import torch
            from torch.utils.data import TensorDataset, DataLoader
            loader = DataLoader(TensorDataset(x, y), batch_size=4, drop_last=False)
        """,
        """
            import mindspore
            loader = mindspore.dataset.NumpySlicesDataset((x.asnumpy(), y.asnumpy()), shuffle=False).batch(4, drop_remainder=False)
        """,
        edits={"IMP001", "LDR001", "LDR002"},
    )


def test_dataloader_shuffle_is_flagged():
    assert_ports(
        """
            import torch
            from torch.utils.data import TensorDataset, DataLoader
            ds = TensorDataset(x)
            loader = DataLoader(ds, batch_size=2, shuffle=True)
        """,
        """
            import mindspore
            ds = mindspore.dataset.NumpySlicesDataset((x.asnumpy(),), shuffle=False)
            loader = ds.shuffle(len(ds)).batch(2)  # msmagic: LDR003 shuffled in MindSpore's own order (%%ms_parity uses PyTorch's)
        """,
        edits={"IMP001", "LDR001", "LDR002", "LDR003"},
        findings={"LDR003"},
    )


def test_dataloader_worker_options_dropped():
    assert_ports(
        """
            import torch
            from torch.utils.data import TensorDataset, DataLoader
            ds = TensorDataset(x)
            loader = DataLoader(ds, batch_size=5, num_workers=2, pin_memory=True, persistent_workers=True)
        """,
        """
            import mindspore
            ds = mindspore.dataset.NumpySlicesDataset((x.asnumpy(),), shuffle=False)
            loader = ds.batch(5)
        """,
        edits={"IMP001", "LDR001", "LDR002", "LDR004"},
    )


def test_dataloader_unknown_dataset_and_collate_flagged():
    assert_ports(
        """
            from torch.utils.data import DataLoader
            loader = DataLoader(my_dataset, batch_size=4, collate_fn=my_collate)
        """,
        """
            loader = my_dataset.batch(4)  # msmagic: LDR005 collate_fn= removed: combine rows with .batch(..., per_batch_map=fn, input_columns=[...]); LDR005 source must be a mindspore.dataset
        """,
        edits={"IMP001", "LDR002"},
        findings={"LDR005"},
    )


def test_iterating_a_loader_unchanged():
    assert_ports(
        """
            import torch
            from torch.utils.data import TensorDataset, DataLoader
            ds = TensorDataset(x, y)
            loader = DataLoader(ds, batch_size=4)
            for xb, yb in loader:
                total = xb.sum()
        """,
        """
            import mindspore
            ds = mindspore.dataset.NumpySlicesDataset((x.asnumpy(), y.asnumpy()), shuffle=False)
            loader = ds.batch(4)
            for xb, yb in loader:
                total = xb.sum()
        """,
        edits={"IMP001", "LDR001", "LDR002"},
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
