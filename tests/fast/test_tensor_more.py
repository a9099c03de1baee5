"""Tensor methods rewritten by msmagic/rules/tensor_more.py (TNS010-TNS016): text only."""

from tests.fast.codemod import assert_ports


def test_polygamma_order_first_as_tensor_and_in_place_rebinds_with_a_finding_in_a_function():
    assert_ports(
        """
            import torch
            def f(x):
                y = x.polygamma(1)
                x.polygamma_(n=2)
                return y, x
        """,
        """
            import mindspore
            def f(x):
                y = mindspore.ops.polygamma(mindspore.Tensor(1), x)
                x = mindspore.ops.polygamma(mindspore.Tensor(2), x)  # msmagic: API003 Tensor.polygamma_: rebinding updates only the local name
                return y, x
        """,
        edits={"TNS011", "IMP001"},
        findings={"API003"},
    )


def test_index_fill_casts_the_index():
    assert_ports(
        """
            import torch
            x = torch.zeros(3, 4)
            idx = torch.tensor([0, 2])
            a = x.index_fill(1, idx, -1.0)
            x.index_fill_(dim=0, index=idx, value=2)
        """,
        """
            import mindspore
            x = mindspore.ops.zeros((3, 4))
            idx = mindspore.Tensor([0, 2])
            a = mindspore.ops.index_fill(x, 1, idx.astype(mindspore.int32), -1.0)
            x = mindspore.ops.index_fill(x, 0, idx.astype(mindspore.int32), 2)
        """,
        findings=set(),
    )


def test_nanmedian_whole_tensor_and_dim():
    assert_ports(
        """
            import torch
            x = torch.ones(2, 3)
            m = x.nanmedian()
            v, i = x.nanmedian(dim=1, keepdim=True)
        """,
        """
            import mindspore
            x = mindspore.ops.ones((2, 3))
            m = mindspore.ops.nanmedian(x.reshape(-1), 0)[0]
            v, i = mindspore.ops.nanmedian(x, 1, True)
        """,
        findings=set(),
    )


def test_unflatten_reshapes_and_flags_computed_receivers():
    assert_ports(
        """
            import torch
            x = torch.ones(2, 12)
            a = x.unflatten(-1, (3, 4))
            b = (x * 2).unflatten(1, (3, 4))
        """,
        """
            import mindspore
            x = mindspore.ops.ones((2, 12))
            a = x.reshape(x.shape[:-1] + tuple((3, 4)) + x.shape[-1:][1:])
            b = (x * 2).unflatten(1, (3, 4))  # msmagic: TNS014 Tensor.unflatten not ported
        """,
        findings={"TNS014"},
    )


def test_vdot_resolve_and_predicates():
    assert_ports(
        """
            import torch
            a = torch.ones(3)
            d = a.vdot(a)
            r = a.resolve_conj().resolve_neg()
            nz = a[:1].is_nonzero()
            same = 1 + a.is_same_size(a)
        """,
        """
            import mindspore
            a = mindspore.ops.ones(3)
            d = mindspore.ops.inner(mindspore.ops.conj(a), a)
            r = a
            nz = bool(a[:1])
            same = 1 + (a.shape == a.shape)
        """,
        findings=set(),
    )


def test_random_fills_become_copy_of_a_draw():
    assert_ports(
        """
            import torch
            w = torch.zeros(3, 2)
            w.cauchy_()
            w.log_normal_(mean=0.5)
            p = torch.full((2,), 0.3)
            b = p.bernoulli()
            c = p.bernoulli(0.5)
        """,
        """
            import mindspore
            import math
            w = mindspore.ops.zeros((3, 2))
            w.copy_(0.0 + 1.0 * mindspore.ops.tan(math.pi * (mindspore.ops.rand_like(w) - 0.5)))
            w.copy_(mindspore.ops.exp(mindspore.ops.randn_like(w) * 2.0 + (0.5)))
            p = mindspore.ops.full((2,), 0.3, dtype=mindspore.float32)
            b = mindspore.ops.bernoulli(p, p)
            c = mindspore.ops.bernoulli(p, 0.5)
        """,
        findings=set(),
    )


def test_random_fill_of_a_slice_or_with_a_generator_is_flagged():
    assert_ports(
        """
            import torch
            g = torch.Generator()
            w = torch.zeros(3, 2)
            w[0].geometric_(0.5)
            w.cauchy_(generator=g)
        """,
        """
            import mindspore
            g = mindspore.Generator()
            w = mindspore.ops.zeros((3, 2))
            w[0].geometric_(0.5)  # msmagic: TNS004 Tensor.geometric_ on w[0] not ported
            w.cauchy_(generator=g)  # msmagic: TNS017 Tensor.cauchy_ generator= not ported
        """,
        findings={"TNS004", "TNS017"},
    )


def test_unique_sorts_and_flags_the_other_forms():
    assert_ports(
        """
            import torch
            def classes(labels):
                return labels.unique(), labels.unique(return_counts=True)
        """,
        """
            import mindspore
            def classes(labels):
                return mindspore.ops.unique(labels)[0].sort()[0], labels.unique(return_counts=True)  # msmagic: TNS019 Tensor.unique return_counts not ported
        """,
        findings={"TNS019"},
    )


def test_pin_memory_and_share_memory_are_dropped():
    assert_ports(
        """
            import torch
            x = torch.ones(2)
            y = x.pin_memory()
            z = x.share_memory_() + 1
        """,
        """
            import mindspore
            x = mindspore.ops.ones(2)
            y = x
            z = x + 1
        """,
        findings=set(),
    )
