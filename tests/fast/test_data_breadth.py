"""torch.utils.data beyond TensorDataset/DataLoader (LDR008-LDR010), before and after:
sampler bases and MindSpore's samplers, the written-out ChainDataset and
WeightedRandomSampler, random_split's seed taken from a named generator, and the
submodules notebooks import from."""

import ast

from tests.fast.codemod import assert_ports, dedent, edit_ids, finding_ids, port


def _ported(before, *, edits, findings=frozenset()):
    result = port(dedent(before))
    ast.parse(result.code)
    assert set(edit_ids(result)) == set(edits) and finding_ids(result) == set(findings), \
        (edit_ids(result), result.unsupported)
    assert port(result.code).code == result.code
    return result


def test_sampler_subclass_and_distributed_sampler_become_mindsporess():
    assert_ports(
        """
            import torch
            from torch.utils.data import Sampler, DataLoader
            from torch.utils.data.distributed import DistributedSampler
            class Backwards(Sampler):
                def __init__(self, n):
                    self.n = n
                def __iter__(self):
                    return iter(range(self.n - 1, -1, -1))
                def __len__(self):
                    return self.n
            shard = DistributedSampler(ds, num_replicas=2, rank=0, shuffle=False)
            loader = DataLoader(ds, batch_size=2, sampler=Backwards(len(ds)))
        """,
        """
            import mindspore
            from mindspore.dataset.dataloader import Sampler, DataLoader
            from mindspore.dataset.dataloader import DistributedSampler
            class Backwards(Sampler):
                def __init__(self, n):
                    self.n = n
                def __iter__(self):
                    return iter(range(self.n - 1, -1, -1))
                def __len__(self):
                    return self.n
            shard = DistributedSampler(ds, num_replicas=2, rank=0, shuffle=False)
            loader = DataLoader(ds, batch_size=2, sampler=Backwards(len(ds)))
        """,
        edits={"IMP001", "LDR002", "LDR010"},
    )


def test_weighted_random_sampler_is_written_out_and_a_torch_generator_flagged():
    result = _ported(
        """
            import torch
            from torch.utils.data import WeightedRandomSampler
            balanced = WeightedRandomSampler(weights, num_samples=len(weights), replacement=False)
            seeded = WeightedRandomSampler(weights, 10, generator=torch.Generator())
        """,
        edits={"IMP001", "LDR010"},
        findings={"LDR003"},
    )
    code = result.code
    assert code.count("class WeightedRandomSampler(mindspore.dataset.dataloader.Sampler):") == 1
    assert "balanced = WeightedRandomSampler(weights, num_samples=len(weights), replacement=False)\n" in code
    assert "seeded = WeightedRandomSampler(weights, 10)  # msmagic: LDR003" in code
    assert "numpy.random.choice(len(p), self.num_samples, replace=self.replacement, p=p)" in code
    assert "import torch" not in code


def test_chain_dataset_is_written_out_over_mindspores_iterable_dataset():
    result = _ported(
        """
            import torch.utils.data as data
            stream = data.ChainDataset([first, second])
            again = data.dataset.ChainDataset(datasets=[first])
        """,
        edits={"IMP001", "LDR009"},
    )
    code = result.code
    assert "class ChainDataset(data.IterableDataset):" in code
    assert "stream = ChainDataset([first, second])" in code
    assert "again = ChainDataset(datasets=[first])" in code


def test_random_split_takes_the_seed_of_a_named_generator():
    result = _ported(
        """
            import torch
            from torch.utils.data import random_split
            g = torch.Generator().manual_seed(7)
            train, val = random_split(ds, [0.8, 0.2], generator=g)
        """,
        edits={"IMP001", "LDR009", "RNG003"},
    )
    assert "train, val = random_split(ds, [0.8, 0.2], seed=7)" in result.code


def test_random_split_with_an_opaque_generator_is_flagged():
    result = _ported(
        """
            import torch
            from torch.utils.data import random_split
            train, val = random_split(ds, [8, 2], generator=make_generator())
        """,
        edits={"IMP001", "LDR009"},
        findings={"LDR009"},
    )
    assert "train, val = random_split(ds, [8, 2])  # msmagic: LDR009 random_split generator dropped" in result.code


def test_submodules_import_the_dataloader_package():
    assert_ports(
        """
            import torch.utils.data.dataloader as D
            from torch.utils.data._utils.collate import default_collate
            batch = D.default_collate(items)
            again = default_collate(items)
        """,
        """
            import mindspore.dataset.dataloader as D
            from mindspore.dataset.dataloader import default_collate
            batch = D.default_collate(items)
            again = default_collate(items)
        """,
        edits={"IMP001", "LDR008"},
    )
