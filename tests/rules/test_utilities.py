import msmagic
from tests.rules.support import check, flagged, src


def test_functional_autograd():
    check(src("""
        import torch
        from torch.autograd.functional import jacobian, hessian, jvp, vjp
        x = torch.tensor([1.0, 2.0, 3.0])
        y = torch.tensor([0.5, 1.0, 1.5])
        v = torch.tensor([1.0, 0.5, -1.0])
        J = jacobian(torch.sin, x, create_graph=False)
        Jf = jacobian(torch.cos, x, vectorize=True, strategy="forward-mode")
        Jt = jacobian(torch.mul, (x, y))
        H = hessian(torch.sum, x)
        out, jv = jvp(torch.exp, x, v)
        out2, vj = vjp(torch.sin, x, v)
    """), "J", "Jf", "Jt", "H", "out", "jv", "out2", "vj", rule="UTL001")


def test_helpers():
    check(src("""
        import torch
        a = torch.tensor([1.0, 2.0, 3.0])
        same = torch.allclose(a, a + 1e-7)
        near = torch.allclose(a, a + 0.1, atol=0.2)
        b = torch.bucketize(torch.tensor([0.5, 2.0, 3.5]), a)
        b32 = torch.bucketize(torch.tensor([0.5, 2.0, 3.5]), a, out_int32=True)
        c = torch.as_tensor([1.0, 2.0], dtype=torch.float64)
    """), "same", "near", "b", "b32", "c", rule="UTL002")


def test_findings():
    flagged(src("""
        import torch
        from torch.autograd.functional import vjp
        def run(f, xs):
            return vjp(f, xs)
    """), "UTL001", "pass v explicitly")
    flagged(src("""
        import torch
        from torch.autograd.functional import jacobian
        def run(f, xs):
            return jacobian(f, xs)
    """), "UTL001", "inputs not known")


def test_idempotent():
    code = msmagic.port(src("""
        import torch
        x = torch.tensor([1.0, 2.0])
        ok = torch.allclose(x, x)
    """)).code
    assert msmagic.port(code).code == code


def test_version_becomes_mindspores():
    import mindspore

    run = check(src("""
        import torch
        print("running on", torch.__version__)
        x = torch.ones(2)
    """), "x", rule="UTL004")
    assert "print(\"running on\", mindspore.__version__)" in run.port.code
    r = flagged(src("""
        import torch
        version = torch.__version__
    """), "UTL004", "review the version check")
    ns = {}
    exec(r.code, ns)
    assert ns["version"] == mindspore.__version__


def test_pad_sequence_with_computed_padding_and_layout():
    """bentrevett's collate functions: padding_value=pad_index (a variable) on int64 id
    sequences, batch_first from a variable; the value is cast to the ids' dtype."""
    run = check(src("""
        import torch
        import torch.nn as nn
        pad_index = 1
        first = True
        def collate_fn(batch):
            ids = [example["ids"] for example in batch]
            return nn.utils.rnn.pad_sequence(ids, padding_value=pad_index)
        batch = [{"ids": torch.tensor([5, 6, 7])}, {"ids": torch.tensor([8])}]
        padded = collate_fn(batch)
        fractional = nn.utils.rnn.pad_sequence([torch.tensor([2, 3]), torch.tensor([4])], padding_value=2.5)
        rows = nn.utils.rnn.pad_sequence([torch.ones(2, 3), torch.zeros(1, 3)], batch_first=first,
                                         padding_value=-pad_index)
    """), "padded", "fractional", "rows", rule="UTL003")
    assert not run.port.unsupported
    flagged(src("""
        import torch
        side = "left"
        p = torch.nn.utils.rnn.pad_sequence([torch.ones(2)], padding_side=side)
    """), "UTL003", "padding_side not ported")
