"""torch functions (TFN001-TFN004): in-place function forms, _foreach_*, function forms
spelled another way, shapes and dtype facts."""

from tests.fast.codemod import assert_ports, finding_ids, port


def test_inplace_function_forms_rebind_the_name():
    assert_ports(
        """
            import torch
            x = torch.linspace(-2, 2, 9)
            torch.abs_(x)
            torch.sqrt_(input=x)
            z = torch.clamp_(x, -1, 1) * 2
            torch.tanh_(x)
        """,
        """
            import mindspore
            x = mindspore.ops.linspace(-2, 2, 9)
            x = mindspore.ops.abs(x)
            x = mindspore.ops.sqrt(x=x)
            z = (x := mindspore.ops.clamp(x, -1, 1)) * 2
            x = (2 * mindspore.ops.sigmoid(2 * x) - 1)
        """,
        edits=None,
    )


def test_inplace_function_forms_flag_aliases_and_attributes():
    r = port("""import torch
import torch.nn.functional as F
def f(a):
    torch.relu_(a)
    return a
class M:
    pass
m = M()
torch.relu_(m.h)
""")
    assert "a = mindspore.ops.relu(a)  # msmagic: TFN001" in r.code
    assert "torch.relu_(m.h)  # msmagic: TFN001" in r.code
    assert finding_ids(r) == {"TFN001"}


def test_zero_becomes_zeros_like():
    assert_ports(
        """
            import torch
            w = torch.ones(3)
            torch.zero_(w)
        """,
        """
            import mindspore
            w = mindspore.ops.ones(3)
            w = mindspore.ops.zeros_like(w)
        """,
        edits=None,
    )


def test_foreach_out_of_place_and_in_place():
    assert_ports(
        """
            import torch
            xs = [torch.ones(2), torch.zeros(3)]
            ys = torch._foreach_sin(xs)
            torch._foreach_neg_(xs)
        """,
        """
            import mindspore
            xs = [mindspore.ops.ones(2), mindspore.ops.zeros(3)]
            ys = tuple(mindspore.ops.sin(t) for t in xs)
            xs[:] = [mindspore.ops.neg(t2) for t2 in xs]
        """,
        edits=None,
    )


def test_foreach_in_place_flags_shared_tensors_and_tuples():
    r = port("""import torch
def step(params):
    torch._foreach_zero_(params)
ys = torch._foreach_abs([torch.ones(2)])
torch._foreach_abs_(ys)
""")
    assert "params[:] = [mindspore.ops.zeros_like(" in r.code
    assert "torch._foreach_abs_(ys)  # msmagic: TFN002" in r.code
    assert finding_ids(r) == {"TFN002"}


def test_function_forms_spelled_another_way():
    assert_ports(
        """
            import torch
            a = torch.clone(x + 1)
            b = torch.select(x, 1, 2)
            c = torch.take(x, idx)
            d = torch.chain_matmul(x, y, x)
            e = torch.cartesian_prod(v)
            g1, g2 = torch.meshgrid([v, w])
            z = torch.complex(x, y)
        """,
        """
            import mindspore
            a = (x + 1).copy()
            b = x.select(1, 2)
            c = x.take(idx)
            d = mindspore.ops.matmul(mindspore.ops.matmul(x, y), x)
            e = v
            g1, g2 = mindspore.ops.meshgrid(v, w, indexing='ij')
            z = mindspore.ops.Complex()(x, y)
        """,
        edits=None,
    )


def test_helpers_are_defined_once():
    r = port("""import torch
a = torch.bitwise_not(m)
b = torch.bitwise_not(n)
c = torch.unflatten(x, -1, (2, 3))
d = torch.range(0, 1, 0.25)
e = torch.vdot(u, v)
""")
    assert r.code.count("def bitwise_not(input):") == 1
    assert "a = bitwise_not(m)" in r.code and "b = bitwise_not(n)" in r.code
    assert "c = unflatten(x, -1, (2, 3))" in r.code
    assert "d = range_inclusive(0, 1, 0.25)" in r.code
    assert "e = vdot(u, v)" in r.code
    assert not r.unsupported


def test_meshgrid_of_an_unknown_value_is_flagged():
    r = port("""import torch
def grid(axes):
    return torch.meshgrid(axes)
""")
    assert finding_ids(r) == {"TFN003"}


def test_shapes_and_dtype_facts():
    r = port("""import torch
s = torch.Size([2, 3])
ok = isinstance(s, torch.Size)
b = torch.broadcast_shapes((2, 1), (1, 3))
p, q = torch.broadcast_tensors(x, y)
eps = torch.finfo(torch.float32).eps
top = torch.iinfo(torch.int64).max
""")
    assert "s = tuple([2, 3])" in r.code
    assert "ok = isinstance(s, tuple)" in r.code
    assert "b = numpy.broadcast_shapes((2, 1), (1, 3))" in r.code
    assert "p, q = broadcast_tensors(x, y)" in r.code
    assert "eps = finfo(mindspore.float32).eps" in r.code
    assert "top = iinfo(mindspore.int64).max" in r.code
    assert not r.unsupported


def test_aten_losses_spell_the_reduction():
    assert_ports(
        """
            import torch
            each = torch.margin_ranking_loss(a, b, t)
            mean = torch.margin_ranking_loss(a, b, t, 0.1, 1)
            total = torch.hinge_embedding_loss(x, h, margin=2.0, reduction=2)
        """,
        """
            import mindspore
            each = mindspore.ops.margin_ranking_loss(a, b, t, reduction='none')
            mean = mindspore.ops.margin_ranking_loss(a, b, t, 0.1, reduction='mean')
            total = mindspore.ops.hinge_embedding_loss(x, h, 2.0, reduction='sum')
        """,
        edits=None,
    )
    r = port("import torch\nloss = torch.cosine_embedding_loss(x, y, s, 0.0, mode)\n")
    assert finding_ids(r) == {"TFN005"}
