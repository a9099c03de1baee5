"""Precision and gradient blocking: casting whole models, and ``detach``."""

import libcst as cst

from msmagic.engine.spec import method
from msmagic.rules.registry import register

GROUP = "Precision"
REF = "r2.4.10/api_mapping/pytorch_api_mapping.md"

register(
    "PRC001",
    "model.half() / .float() / .double() / .bfloat16() become Cell.to(dtype)",
    group=GROUP,
    why="""
        ``model.half()`` casts every floating-point parameter and buffer of a PyTorch module
        to float16, after which the module must be fed float16 inputs. MindSpore 2.10's
        ``Cell.to(mindspore.float16)`` does the same: parameters and buffers become
        float16, the Cell is returned, and a float32 input raises a dtype mismatch just as
        in PyTorch. Outputs agree to float16 precision (about 1e-3 relative), not bit for
        bit, since the two frameworks' CPU kernels accumulate differently.
        ``Cell.to_float(mindspore.float16)``, the older MindSpore idiom, is not used: it
        keeps parameters in float32 and casts inputs at run time, so parameter dtypes,
        checkpoints and the float32-input behaviour would differ from PyTorch. Known 2.10
        quirk: a ``Dense`` that has already run in float16 and is cast back with
        ``.to(mindspore.float32)`` fails in its bias add; build a fresh model instead.
    """,
    seed="seeds/004 Manual Mixed-precision",
    reference=REF,
    installed_note="""
        The r2.4.10 docs (and seeds/004) map ``model.half()``/``model.to(torch.float16)`` to
        ``to_float``. MindSpore 2.10 adds ``Cell.to(dtype)``, which casts parameters like
        PyTorch (checked: parameter dtypes and outputs match), so it is used instead.
    """,
    example="""
        import torch
        import torch.nn as nn

        class Scale(nn.Module):
            def __init__(self):
                super().__init__()
                self.w = nn.Parameter(torch.tensor([0.5, 2.0, -1.0]))

            def forward(self, x):
                return x * self.w

        model = Scale()
        model.half()
        y = model(torch.tensor([1.0, 2.0, 3.0]).half())
    """,
)

register(
    "PRC002",
    "x.detach() becomes mindspore.ops.stop_gradient(x)",
    group=GROUP,
    why="""
        ``detach()`` returns the same values cut off from autograd so no gradient flows back
        through them. MindSpore tensors have no ``detach``; ``ops.stop_gradient(x)`` marks the
        value as a constant for ``mindspore.grad``/``value_and_grad`` and returns the same
        values. Unlike ``detach()`` it does not promise to share memory with ``x``, so code
        that writes into the detached tensor to change the original needs a hand port.
        Before ``.numpy()`` the whole chain becomes ``.asnumpy()`` instead (rule DEV005).
        Freezing parameters with ``p.requires_grad = False`` needs no rewrite: MindSpore
        Parameters have ``requires_grad``, and ``trainable_params()`` leaves them out.
    """,
    seed="seeds/004 Parameters Management › Gradient Freezing",
    reference=REF,
    example="""
        import torch
        x = torch.tensor([1.0, -2.0, 3.0])
        y = x.detach() * 2
    """,
)


def _cast(dtype):
    def handler(site):
        new = site.updated.with_changes(
            func=site.updated.func.with_changes(attr=cst.Name("to")),
            args=[cst.Arg(site.ref(f"mindspore.{dtype}"))],
        )
        site.edit("PRC001", new, detail=f".{site.original.func.attr.value}() -> .to(mindspore.{dtype})")
        return new

    return handler


for _name, _dtype in (("half", "float16"), ("float", "float32"), ("double", "float64"),
                      ("bfloat16", "bfloat16")):
    method(_name, "PRC001", receiver="module", handler=_cast(_dtype), returns="same")


def _detach(site):
    new = cst.Call(func=site.ref("mindspore.ops.stop_gradient"), args=[cst.Arg(site.receiver)])
    site.edit("PRC002", new, detail=".detach() -> ops.stop_gradient()")
    return new


method("detach", "PRC002", unambiguous=True, handler=_detach)
