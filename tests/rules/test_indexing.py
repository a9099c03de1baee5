"""Indexing, gathering and scattering (IDX): ported, run on both frameworks, compared by
value, shape and dtype; what MindSpore 2.10 cannot do is flagged."""

import pytest

import msmagic
from msmagic.parity_check import run_pair
from tests.rules import support

pytest.importorskip("mindspore")
pytest.importorskip("torch")

HEAD = "import torch\n"
X = HEAD + ("x = torch.tensor([[1., 5., 3., 0.], [4., 2., 6., 0.], [7., 7., 1., 2.]])\n"
            "idx = torch.tensor([[2, 0], [1, 1], [3, 0]])\n")

check = support.check
flagged = support.flagged


def dtypes_agree(run, *names):
    for n in names:
        row = run.row(n)
        assert row.torch_dtype.replace("torch.", "").lower() == row.ms_dtype.lower(), run.explain()


def check_all(src, *names, rule=None):
    run = check(src, *names, rule=rule)
    dtypes_agree(run, *names)
    return run


# ------------------------------------------------------------------ IDX001


def test_einsum_flagged_and_kept():
    r = flagged(X + "y = torch.einsum('ij,kj->ik', x, x)\n", "IDX001", "einsum has no CPU kernel")
    assert "torch.einsum(" in r.code
    assert msmagic.port(r.code).code == r.code


# ------------------------------------------------------------------ IDX002


@pytest.mark.parametrize("expr", [
    "torch.gather(x, 1, idx)", "torch.gather(x, 0, idx.T[:, :3] % 3)", "torch.gather(x, -1, idx)",
    "torch.gather(input=x, dim=1, index=idx)", "torch.gather(x, 1, idx.int())",
    "torch.gather(x, 1, idx, sparse_grad=False)", "torch.gather(x.long(), 1, idx)",
])
def test_gather(expr):
    run = check_all(X + f"y = {expr}\n", "y", rule="IDX002")
    assert "gather_elements" in run.port.code


@pytest.mark.parametrize("expr", [
    "torch.take_along_dim(x, torch.tensor([5, 0, 11]))",
    "torch.take_along_dim(x * 2, torch.tensor([[1, 0]]))",
    "x.take_along_dim(torch.tensor([2, 3]))",
])
def test_take_along_dim_flat(expr):
    run = check_all(X + f"y = {expr}\n", "y", rule="IDX002")
    assert not run.port.unsupported


@pytest.mark.parametrize("expr", [
    "torch.take_along_dim(x, torch.argsort(x, dim=1), dim=1)",
    "torch.take_along_dim(x, x.argmax(dim=0, keepdim=True), 0)",
    "x.take_along_dim(idx, dim=1)",
])
def test_take_along_dim_with_dim_ported_and_flagged(expr):
    run = check_all(X + f"y = {expr}\n", "y", rule="IDX002")
    assert "IDX002" in {f.rule_id for f in run.port.unsupported}
    assert "take_along_dim: indices are not broadcast" in run.port.code


def test_gather_sparse_grad_flagged():
    flagged(X + "y = torch.gather(x, 1, idx, sparse_grad=True)\n", "IDX002", "sparse_grad= has no MindSpore")


# ------------------------------------------------------------------ IDX003

S = HEAD + ("z = torch.zeros(3, 4)\n"
            "col = torch.tensor([[1], [3], [0]])\n"
            "two = torch.tensor([[0, 1], [2, 3], [3, 0]])\n"
            "dup = torch.tensor([[0, 0], [2, 2], [3, 3]])\n"
            "vals = torch.tensor([[5., 6.], [7., 8.], [9., 10.]])\n")


@pytest.mark.parametrize("expr", [
    "z.scatter(1, col, 1.0)", "z.scatter(1, col, 1)", "torch.scatter(z, 1, two, vals)",
    "torch.scatter(z, 1, col, value=2.5)", "torch.scatter(input=z, dim=1, index=two, src=vals)",
    "z.scatter(dim=1, index=col, value=-1.0)", "z.scatter(-1, two, vals)",
    "torch.arange(12).reshape(3, 4).scatter(1, col, 7)",
    "torch.scatter(z, 1, two, vals, reduce='add')", "z.scatter(1, dup, vals, reduce='add')",
])
def test_scatter(expr):
    run = check_all(S + f"y = {expr}\n", "y", rule="IDX003")
    assert not run.port.unsupported, run.port.unsupported


def test_scatter_inplace_rebinds():
    run = check_all(S + "z.scatter_(1, col, 3)\nw = z * 2\n", "z", "w", rule="IDX003")
    assert "z = " in run.port.code.splitlines()[-2]


def test_scatter_inplace_in_expression():
    run = check_all(S + "y = z.scatter_(1, two, vals) + 1\n", "y", "z", rule="IDX003")
    assert "(z := " in run.port.code


@pytest.mark.parametrize("expr,comment", [
    ("torch.scatter(z, 1, two, vals, reduce='multiply')", "scatter reduce not ported"),
    ("z.scatter(1, col, 2.0, reduce='add')", "scatter reduce not ported"),
])
def test_scatter_reduce_flagged(expr, comment):
    flagged(S + f"y = {expr}\n", "IDX003", comment)


def test_scatter_inplace_on_attribute_flagged():
    r = msmagic.port(S + "class M:\n    pass\nm = M()\nm.z = z\nm.z.scatter_(1, col, 1.0)\n")
    assert "API003" in {f.rule_id for f in r.unsupported}


# ------------------------------------------------------------------ IDX004


@pytest.mark.parametrize("expr", [
    "torch.scatter_add(z, 1, two, vals)", "z.scatter_add(1, dup, vals)", "torch.scatter_add(z, 1, dup, vals)",
    "z.scatter_add(-1, two, vals)",
    "torch.scatter_add(input=z, dim=1, index=two, src=vals)",
    "torch.zeros(5).scatter_add(0, torch.tensor([0, 0, 4, 0]), torch.ones(4))",
    "torch.zeros(2, dtype=torch.long).scatter_add(0, torch.tensor([1, 1, 0]), torch.tensor([3, 4, 5]))",
    # src larger than index: PyTorch uses the part index covers
    "z.scatter_add(1, col, vals)",
    # thousands of additions into four rows: the sums must not lose any of them
    "torch.zeros(4, 3).scatter_add(0, torch.arange(12000).reshape(4000, 3) % 4, "
    "(torch.arange(12000.) % 7).reshape(4000, 3))",
    "torch.zeros(2, 3, 4).scatter_add(1, torch.arange(48).reshape(2, 6, 4) % 3, torch.ones(2, 6, 4))",
    "z.scatter(1, dup, vals, reduce='add')",
    "torch.zeros(3, dtype=torch.bool).scatter_add(0, torch.tensor([0, 0, 2]), torch.tensor([True, False, True]))",
])
def test_scatter_add(expr):
    run = check_all(S + f"y = {expr}\n", "y", rule="IDX004" if "scatter_add" in expr else "IDX003")
    assert "scatter_add_in_order(" in run.port.code
    assert "tensor_scatter_elements(" not in run.port.code


def test_scatter_add_in_a_function_receiving_the_tensors_and_through_kwargs():
    first = S + "def add_at(t, d, i, s):\n    return t.scatter_add(d, i, s)\n"
    run = check_all(first + "y = add_at(z, 1, dup, vals)\nw = add_at(torch.ones(3, 4), -1, two, vals)\n",
                    "y", "w", rule="IDX004")
    assert run.port.code.count("def scatter_add_in_order(") == 1
    for call in ("z.scatter_add(**args)", "torch.scatter_add(z, **args)", "z.index_add(**args)"):
        r = msmagic.port(S + f"args = dict(dim=1, index=dup, src=vals)\ny = {call}\n")
        assert [f.rule_id for f in r.unsupported] == ["GEN003"], (call, r.unsupported)
        assert "hide the arguments" in r.code


def test_scatter_add_inplace_rebinds():
    run = check_all(S + "z.scatter_add_(1, two, vals)\nz.scatter_add_(1, two, vals)\n", "z", rule="IDX004")
    assert run.port.code.count("z = scatter_add_in_order(z,") == 2


def test_scatter_add_inplace_inside_function_flagged():
    r = msmagic.port(S + "def f(z):\n    z.scatter_add_(1, two, vals)\n    return z\n")
    assert "API003" in {f.rule_id for f in r.unsupported}


# ------------------------------------------------------------------ IDX005

I = HEAD + ("base = torch.zeros(3, 4)\n"
            "rows = torch.tensor([2, 0, 2])\n"
            "src = torch.arange(12.).reshape(3, 4)\n")


@pytest.mark.parametrize("expr", [
    "torch.index_add(base, 0, rows, src)", "base.index_add(0, rows, src)",
    "base.index_add(0, rows, src, alpha=2)", "torch.index_add(base, 1, rows[:2], src[:, :2], alpha=0.5)",
    "torch.index_add(input=base, dim=0, index=rows, source=src)", "(base + 1).index_add(-1, rows, src[:, :3])",
    "base.double().index_add(0, rows, src.double())", "base.int().index_add(0, rows, src.int())",
    "base.long().index_add(0, rows, src.long())", "(base > 0).index_add(0, rows, src > 3)",
])
def test_index_add(expr):
    # `same` checks the input is left untouched (MindSpore's kernel writes in place)
    run = check_all(I + f"y = {expr}\nsame = base\n", "y", "same", rule="IDX005")
    assert "index_add_in_order(" in run.port.code and ".index_add(" not in run.port.code


def test_index_add_inplace():
    run = check_all(I + "base.index_add_(0, rows, src)\nafter = base + 0\n", "base", "after", rule="IDX005")
    assert "base = index_add_in_order(base, 0, rows, src)" in run.port.code


def test_index_add_sums_thousands_of_repeated_rows_and_works_in_functions():
    src = I + ("def accumulate(acc, rows, values, scale=1.0):\n"
               "    return acc.index_add(0, rows, values, alpha=scale)\n"
               "many = torch.arange(6000) % 3\n"
               "vals = (torch.arange(24000.) % 5).reshape(6000, 4)\n"
               "y = accumulate(base, many, vals)\n"
               "w = accumulate(base, many, vals, scale=2)\n"
               "v = torch.zeros(4, 3).index_add(1, many, vals.t(), alpha=2)\n")
    check_all(src, "y", "w", "v", rule="IDX005")


# ------------------------------------------------------------------ IDX006

M = HEAD + ("x = torch.tensor([[3., 1., 4., 1.], [5., 9., 2., 6.], [5., 3., 5., 8.]])\n"
            "odd = torch.tensor([2., 7., 1., 8., 2.])\n"
            "ints = torch.tensor([5, 2, 8, 1])\n")


@pytest.mark.parametrize("expr", [
    "torch.median(x)", "x.median()", "odd.median()", "ints.median()", "torch.median(x.double())",
    "(x * 2).median()", "torch.median(x[0])", "torch.median(torch.tensor(3.))",
    "torch.median(x, 1)", "torch.median(x, dim=0, keepdim=True)", "x.median(1)", "x.median(dim=-1)",
])
def test_median(expr):
    check_all(M + f"y = {expr}\n", "y", rule="IDX006")


def test_median_with_dim_unpacks():
    run = check_all(M + "v, i = torch.median(x, dim=1)\nw, j = x.median(0, keepdim=True)\n",
                    "v", "i", "w", "j", rule="IDX006")
    assert run.row("i").torch_dtype == "torch.int64"


# ------------------------------------------------------------------ IDX007

E = HEAD + "a = torch.tensor([[1., 2.], [3., 4.]])\nb = torch.tensor([1., 2.])\n"


@pytest.mark.parametrize("expr", [
    "torch.equal(a, a)", "torch.equal(a, a * 1)", "torch.equal(a, a + 1)", "a.equal(a[:1])",
    "torch.equal(a[0], b)", "torch.equal(a, b)", "a.equal(a.double())", "(a * 2).equal(a + a)",
    "torch.equal(torch.tensor([float('nan')]), torch.tensor([float('nan')]))",
])
def test_equal(expr):
    run = check_all(E + f"y = {expr}\n", "y", rule="IDX007")
    assert run.row("y").torch_dtype == "bool"


def test_equal_in_condition():
    check_all(E + "y = 1 if torch.equal(a, a) else 0\nz = 1 if a.equal(b) else 0\n", "y", "z", rule="IDX007")


# ------------------------------------------------------------------ IDX008

C = HEAD + "x = torch.tensor([[0., 1., 2.], [0., 0., 3.]])\n"


@pytest.mark.parametrize("expr", [
    "torch.count_nonzero(x)", "torch.count_nonzero(x, dim=1)", "torch.count_nonzero(x, 0)",
    "torch.count_nonzero(x, (0, 1))", "torch.count_nonzero(x > 1)", "x.count_nonzero()",
    "x.count_nonzero(dim=1)", "x.count_nonzero(0)", "(x - 1).count_nonzero()",
    "torch.count_nonzero(torch.tensor([float('nan'), 0.]))", "torch.count_nonzero(x.long(), dim=-1)",
])
def test_count_nonzero(expr):
    run = check_all(C + f"y = {expr}\n", "y", rule="IDX008")
    assert run.row("y").torch_dtype == "torch.int64"


# ------------------------------------------------------------------ IDX009

P = HEAD + "p = torch.tensor([0.1, 0.0, 0.6, 0.3])\nq = torch.tensor([[0.5, 0.5, 0.], [0., 0.2, 0.8]])\n"


@pytest.mark.parametrize("expr,expect", [
    ("torch.multinomial(p, 2)", "replacement=False"),
    ("torch.multinomial(p, 3, True)", "replacement=True"),
    ("p.multinomial(2)", "replacement=False"),
    ("q.multinomial(num_samples=4, replacement=True)", "replacement=True"),
    ("torch.multinomial(q, 2)", "replacement=False"),
])
def test_multinomial(expr, expect):
    # torch.multinomial: the MindSpore draw returns PyTorch's values (the generators
    # differ), and y is compared, its dtype included (int64, not MindSpore's int32). The
    # method form is not replayed: its draw is copied, and one of another shape or dtype
    # would show up as a row for y
    run = check_all(P + f"y = {expr}\ns = y * 2\n", "s", rule="IDX009")
    if expr.startswith("torch."):
        assert run.synchronised == ["random draws"] and run.row("y").status == "match", run.explain()
    else:
        assert "y" in run.synchronised and "y" not in {r.name for r in run.rows}, run.explain()
    assert expect in run.port.code and "astype(mindspore.int64)" in run.port.code
    assert run.row("s").torch_dtype == "torch.int64"


def test_multinomial_draws_are_valid_without_replacement():
    code = msmagic.port(P + "y = torch.multinomial(p, 3)\n").code
    ns = {}
    exec(code, ns)
    drawn = ns["y"].asnumpy().tolist()
    assert len(set(drawn)) == 3 and 1 not in drawn  # no repeats, never the zero-probability class


def test_multinomial_generator_flagged():
    flagged(P + "g = torch.Generator()\ny = torch.multinomial(p, 2, generator=g)\n", "IDX009",
            "generator= has no MindSpore equivalent")


def test_range_and_numpy_index_arrays_port_and_match():
    """IDX010: MindSpore 2.10 raises IndexError for range and NumPy index arrays."""
    src = """
        import numpy as np
        import torch
        logits = torch.randn(4, 5)
        target = torch.tensor([0, 2, 1, 4])
        picked = logits[range(4), target]
        rows = logits[np.array([3, 0])]
        cols = logits[:, np.arange(1, 3)]
        mask = logits[np.array([True, False, True, False])]
        plain = logits[1, 2]
    """
    import textwrap

    run = run_pair(textwrap.dedent(src))
    assert "logits[list(range(4)), target]" in run.port.code
    assert "logits[mindspore.Tensor(np.array([3, 0]))]" in run.port.code
    assert "logits[1, 2]" in run.port.code
    assert run.synchronised == ["random draws"]  # PyTorch's draw, compared, then indexed
    assert {r.name: r.status for r in run.rows} == {n: "match" for n in (
        "logits", "target", "picked", "rows", "cols", "mask", "plain")}


def test_index_arrays_on_values_not_known_to_be_tensors_are_left_alone():
    import msmagic

    code = msmagic.port("import torch\nimport numpy as np\nrows = table[np.array([1, 0])]\n"
                        "r = list_of_things[range(2)]\n").code
    # a NumPy index stays (a NumPy array takes it as it is); a range becomes a list,
    # which indexes an array the same way
    assert "table[np.array([1, 0])]" in code and "list_of_things[list(range(2))]" in code


def test_range_index_in_a_function_the_port_cannot_type():
    """The nn tutorial's ``def nll(input, target): return -input[range(target.shape[0]),
    target].mean()`` used through ``loss_func = nll``: no call types ``input``, and the
    range becomes a list all the same (a NumPy array indexes with it exactly as with the
    range), so the MindSpore run does not raise IndexError."""
    run = support.check(support.src("""
        import numpy as np
        import torch
        def nll(input, target):
            return -input[range(target.shape[0]), target].mean()
        loss_func = nll
        logits = torch.linspace(-2, 2, 12).reshape(4, 3).log_softmax(-1)
        yb = torch.tensor([0, 2, 1, 1])
        loss = loss_func(logits, yb)
        arr = np.arange(12.0).reshape(4, 3)
        picked = nll(arr, np.array([0, 2, 1, 1]))
    """), "loss", "picked", rule="IDX010")
    assert "input[list(range(target.shape[0])), target]" in run.port.code


def test_a_batch_of_one_written_into_rows_inside_a_function_and_a_method():
    """IDX011 where real code puts it: a helper receiving the tensor it fills (its kind
    from the call site), a method filling an attribute's buffer, a 3-D block's slot."""
    run = check(support.src("""
        import torch
        torch.manual_seed(0)
        net = torch.nn.Linear(4, 3)
        x = torch.randn(5, 4)

        def fill(out, model, inputs):
            for i in range(inputs.shape[0]):
                out[i] = model(inputs[[i]])
            return out

        class Recorder:
            def __init__(self):
                self.rows = torch.zeros(5, 3)

            def record(self, model, inputs):
                for i in range(5):
                    self.rows[i, :] = model(inputs[i:i + 1])

        rows = fill(torch.zeros(5, 3), net, x)
        rec = Recorder()
        rec.record(net, x)
        recorded = rec.rows * 1.0
        block = torch.zeros(3, 5, 3)
        block[1:2] = rows.unsqueeze(0).unsqueeze(0)
    """), "rows", "recorded", "block", rule="IDX011")
    assert run.port.code.count("without_leading_ones(") == 4  # the definition and three slots
