"""Emitted calls bind to the installed MindSpore's signatures (API008), and the random
factories port in every spelling PyTorch accepts (FUN011): each case runs both
frameworks and compares values (random draws are PyTorch's, replayed on the MindSpore
side by the parity runner)."""

import numpy as np
import pytest

import msmagic
from msmagic.parity_check import run_pair

from .support import check, flagged, src

HEAD = "import torch\n"


def _dtype(run, name: str) -> str:
    """The MindSpore side's dtype of a compared value, checked equal to PyTorch's."""
    row = run.row(name)
    assert str(row.ms_dtype).lower() == str(row.torch_dtype).replace("torch.", ""), (row.ms_dtype, row.torch_dtype)
    return str(row.ms_dtype).lower()


# ----------------------------------------------------------------------------- API008


def test_size_keyword_of_a_star_size_factory_is_passed_by_position():
    run = check(HEAD + "a = torch.rand(size=(3, 4))\nb = torch.randn(size=(2, 3), dtype=torch.float64)\n"
                "c = torch.zeros(size=(2, 2))\nd = a.sum() + b.sum()\n", "a", "b", "c", "d", rule="API008")
    assert "ops.rand((3, 4))" in run.port.code and "ops.randn((2, 3), dtype=mindspore.float64)" in run.port.code
    assert _dtype(run, "b") == "float64"


def test_out_keyword_rebinds_the_name():
    run = check(HEAD + src("""
        a = torch.linspace(-1, 1, 6).reshape(2, 3)
        b = torch.linspace(0, 2, 12).reshape(3, 4)
        y = torch.empty(2, 4)
        torch.matmul(a, b, out=y)
        z = torch.matmul(a, b * 2, out=y) + 1
        s = torch.add(a, a, out=None)
    """), "y", "z", "s", rule="API008")
    assert "y = mindspore.ops.matmul(a, b)\n" in run.port.code
    assert "(y := mindspore.ops.matmul(" in run.port.code
    assert not run.port.unsupported


def test_out_keyword_inside_a_function_is_flagged_for_aliases():
    run = run_pair(HEAD + src("""
        def product(a, b, buf):
            torch.matmul(a, b, out=buf)
            return buf
        a = torch.linspace(-1, 1, 6).reshape(2, 3)
        r = product(a, a.t(), torch.zeros(2, 2))
    """))
    assert run.torch_error is None and run.ms_error is None and run.agree("r"), run.explain()
    assert [f.rule_id for f in run.port.unsupported] == ["API008", "GEN004"]  # GEN004: product()'s call
    assert "buf = mindspore.ops.matmul(a, b)" in run.port.code


def test_keyword_spellings_of_functions_and_methods():
    """PyTorch's parameter names by keyword: kept where MindSpore has them, passed by
    position or renamed where it names them differently."""
    run = check(HEAD + src("""
        x = torch.linspace(-2, 2, 12).reshape(3, 4)
        a = torch.sum(input=x, dim=1, keepdim=True)
        b = x.sum(dim=0, keepdim=True)
        c = x.repeat(repeats=(2, 1))
        d = x.view(size=(4, 3))
        e = torch.cumsum(input=x, dim=1)
        f = torch.atan2(input=x, other=x + 3)
        g = torch.softmax(input=x, dim=1)
        h = x.transpose(dim0=0, dim1=1)
        j = torch.max(input=x)
    """), *"abcdefghj")
    assert not run.port.unsupported or {f.rule_id for f in run.port.unsupported} == {"API006"}
    assert "x.tile((2, 1))" in run.port.code and "x.view((4, 3))" in run.port.code


def test_an_argument_mindspore_rejects_is_removed_and_flagged():
    r = flagged(HEAD + "x = torch.ones(2, 3)\ny = x.is_contiguous(memory_format=torch.contiguous_format)\n",
                "API008", "memory_format= removed")
    assert "is_contiguous()" in r.code


# ----------------------------------------------------------------------------- randint


RANDINT = src("""
    n = 4
    a = torch.randint(0, 10, (200,))
    b = torch.randint(10, (5,))
    c = torch.randint(high=10, size=(5,))
    d = torch.randint(low=0, high=2, size=(n, 2), dtype=torch.float32)
    e = torch.randint(3, size=(n, 7))
    f = torch.randint(2, 9, size=(3,), dtype=torch.int32)
    g = torch.randint(5, (2,), dtype=torch.long, device="cpu")
""")


def test_randint_in_every_spelling_runs_and_matches():
    run = check(HEAD + RANDINT, *"abcdefg", rule="FUN011")
    assert run.synchronised == ["random draws"]
    assert _dtype(run, "d") == "float32" and _dtype(run, "a") == "int64"
    assert _dtype(run, "f") == "int32"
    assert ".astype(mindspore.float32)" in run.port.code and not run.port.unsupported


def test_randint_in_a_dataset_method():
    """uvadlc's XORDataset and ReverseDataset draw in a method, by keyword."""
    run = check(HEAD + src("""
        class Data:
            def __init__(self, size, seq_len, num_categories):
                self.size, self.seq_len, self.num_categories = size, seq_len, num_categories
                self.labels = torch.randint(low=0, high=2, size=(self.size, 2), dtype=torch.float32)
                self.data = torch.randint(self.num_categories, size=(self.size, self.seq_len))
        ds = Data(6, 3, 10)
        labels, data = ds.labels, ds.data
    """), "labels", "data")
    assert "randint(0, self.num_categories, size=(self.size, self.seq_len))" in run.port.code


def test_randint_generator_is_dropped_with_a_finding():
    run = run_pair(HEAD + "g = torch.Generator().manual_seed(3)\nx = torch.randint(0, 5, (4,), generator=g)\n")
    assert run.torch_error is None and run.ms_error is None, run.explain()
    assert run.row("x").status == "match"
    assert "FUN011" in {f.rule_id for f in run.port.unsupported}


def test_randint_like_keeps_the_input_dtype():
    run = check(HEAD + src("""
        x = torch.zeros(2, 3)
        i = torch.zeros(4, dtype=torch.int32)
        a = torch.randint_like(x, 10)
        b = torch.randint_like(x, 2, 10)
        c = torch.randint_like(i, high=7)
        d = torch.randint_like(x * 2, 5, dtype=torch.float64)
        e = torch.randint_like(x + 1, 5)
    """), *"abcde", rule="FUN011")
    assert _dtype(run, "a") == "float32" and _dtype(run, "c") == "int32"
    assert _dtype(run, "d") == "float64" and _dtype(run, "e") == "float32"
    assert not run.port.unsupported
