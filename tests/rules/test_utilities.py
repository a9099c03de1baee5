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
