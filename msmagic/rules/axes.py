"""Axes and shapes: transpose, permute, flatten, squeeze, repeat and the shape methods
that MindSpore 2.10 already accepts in their PyTorch form."""

from msmagic.engine.spec import api, method
from msmagic.rules.registry import register

GROUP = "Axes and shapes"
REF = "r2.4.10/api_mapping/pytorch_api_mapping.md"

register(
    "AXS001",
    "transpose(x, dim0, dim1) becomes swapaxes",
    group=GROUP,
    why="""
        PyTorch's ``transpose`` always exchanges exactly two axes. MindSpore's
        ``ops.transpose(input, dims)`` is a full permutation (PyTorch's ``permute``): called
        with two axes it raises, and a two-element permutation is only right for 2-D
        inputs. The two-axis swap is ``ops.swapaxes`` / ``Tensor.swapaxes``, with the same
        meaning for negative axes, so both the function and the method are rewritten to
        it (``dim0``/``dim1`` keywords become ``axis0``/``axis1``). MindSpore 2.10's
        ``Tensor.transpose(a, b)`` does swap two axes too, but it is overloaded with the
        permutation form, so the explicit ``swapaxes`` keeps the intent unmistakable.
        ``k.transpose(-2, -1)`` on a value the port cannot type (a function's parameter)
        is ported too when its two axes are literals or ``dim0=``/``dim1=``: NumPy's
        ``transpose`` with two axes only runs on 2-D arrays, where it is this swap or does
        nothing; other calls of unknown receivers are left alone.
    """,
    seed="seeds/000 API differences › transpose",
    reference=f"{REF} (torch.transpose -> mindspore.ops.swapaxes, Tensor.transpose -> Tensor.swapaxes)",
    installed_note="""
        Verified on 2.10: ops.transpose(x, 0, 1) raises TypeError; Tensor.transpose(0, 1) on
        3-D and 4-D inputs swaps the two axes; swapaxes matches torch for negative axes.
    """,
    example="""
        import torch
        x = torch.arange(24.).reshape(2, 3, 4)
        y = torch.transpose(x, 0, 1)
        z = x.transpose(-1, -2)
    """,
)

register(
    "AXS002",
    "torch.permute becomes ops.permute (dims is called axis)",
    group=GROUP,
    why="""
        Both frameworks reorder all axes with ``permute``. The function form takes the
        order as one sequence; PyTorch calls that parameter ``dims`` and MindSpore's
        ``ops.permute`` calls it ``axis`` and rejects ``dims=``, so a keyword is renamed.
        ``Tensor.permute`` needs no change: on 2.10 it accepts the axes both spread out
        (``x.permute(2, 0, 1)``) and as one tuple, negative axes included.
    """,
    seed="seeds/002 API Comparison › functional APIs",
    reference=f"{REF} (torch.permute -> mindspore.ops.permute)",
    installed_note="Verified on 2.10: ops.permute(x, dims=...) raises TypeError; Tensor.permute accepts varargs and a tuple.",
    example="""
        import torch
        x = torch.arange(24.).reshape(2, 3, 4)
        y = torch.permute(x, dims=(2, 0, 1))
        z = x.permute(2, 0, 1)
    """,
)

register(
    "AXS003",
    "torch.flatten's start_dim=0 default is made explicit for ops.flatten",
    group=GROUP,
    why="""
        ``torch.flatten(x)`` flattens every axis (``start_dim=0``) while
        ``mindspore.ops.flatten(x)`` keeps the first axis as a batch axis
        (``start_dim=1``), so the same call returns a different shape. The port adds
        ``start_dim=0`` when the PyTorch call leaves it out. ``ops.flatten`` takes
        ``start_dim``/``end_dim`` only as keywords (its second positional parameter is the
        memory ``order``), so positional values become keywords. ``Tensor.flatten()`` and
        ``nn.Flatten`` already use PyTorch's defaults (0 and 1 respectively) and are kept.
    """,
    seed="seeds/002 API Comparison › functional APIs",
    reference="r2.4.10/api_mapping/pytorch_diff/flatten.md",
    installed_note="Verified on 2.10: ops.flatten(x) on (2, 3, 4) gives (2, 12); Tensor.flatten() gives (24,).",
    example="""
        import torch
        x = torch.arange(24.).reshape(2, 3, 4)
        a = torch.flatten(x)
        b = torch.flatten(x, 1)
    """,
)

register(
    "AXS004",
    "squeeze takes axis=, not dim=",
    group=GROUP,
    why="""
        Both frameworks drop size-1 axes with ``squeeze`` and, when an axis is named that
        is not of size 1, both leave the tensor unchanged. The difference is the keyword:
        MindSpore's ``ops.squeeze`` and ``Tensor.squeeze`` call it ``axis`` and raise on
        ``dim=``. Positional calls need no change.
    """,
    seed="seeds/002 API Comparison › functional APIs",
    reference=f"{REF} (torch.squeeze: parameter names differ)",
    installed_note="Verified on 2.10: ops.squeeze(x, dim=1) and Tensor.squeeze(dim=1) raise TypeError.",
    example="""
        import torch
        x = torch.zeros(2, 1, 3, 1)
        a = torch.squeeze(x, dim=1)
        b = x.squeeze(dim=-1)
    """,
)

register(
    "AXS005",
    "Tensor.repeat becomes Tensor.tile",
    group=GROUP,
    why="""
        PyTorch's ``Tensor.repeat(*sizes)`` tiles the whole tensor (NumPy's ``tile``,
        not NumPy's ``repeat``). MindSpore 2.10 has a ``Tensor.repeat`` but it has no CPU
        kernel, and ``Tensor.tile`` computes exactly PyTorch's result, including prepending
        new axes when more sizes than axes are given; it accepts the sizes spread out or
        as one tuple. The receiver must be known to be a tensor: on a NumPy array
        ``repeat`` means something else.
    """,
    seed="seeds/002 API Comparison",
    reference="r2.4.10/api_mapping/pytorch_diff/tensor_repeat.md",
    installed_note="Verified on 2.10 (CPU): Tensor.repeat raises \"'repeat' is not supported on this device\".",
    example="""
        import torch
        x = torch.arange(6.).reshape(2, 3)
        y = x.repeat(2, 1, 1)
    """,
)

register(
    "AXS006",
    "Shape functions that keep their PyTorch form",
    group=GROUP,
    why="""
        ``torch.unsqueeze`` and ``torch.reshape`` have the same parameters in
        ``mindspore.ops`` and only change module. The tensor methods ``view``, ``reshape``
        (shape spread out or as one tuple, ``-1`` allowed), ``unsqueeze``, ``expand``,
        ``permute``, ``flatten``, ``contiguous`` and ``t``, and the ``T``/``mT`` attributes,
        behave as in PyTorch on MindSpore 2.10 and are left untouched; msmagic still
        tracks that they return tensors so calls chained on them are ported.
    """,
    seed="seeds/002 API Comparison › functional APIs",
    reference=REF,
    installed_note="Verified on 2.10: view/reshape accept varargs and tuples; expand accepts -1.",
    example="""
        import torch
        x = torch.arange(24.).reshape(2, 3, 4)
        y = torch.unsqueeze(x, 0)
        z = torch.reshape(x, (4, -1))
        w = x.view(6, 4).unsqueeze(0)
    """,
)


api("torch.transpose", "mindspore.ops.swapaxes", rule="AXS001", sig=("input", "dim0", "dim1"),
    rename={"dim0": "axis0", "dim1": "axis1"}, returns="tensor")


def _two_axes(site) -> bool:
    """``k.transpose(-2, -1)`` with two literal axes (or dim0=/dim1=) on a receiver of
    unknown kind: PyTorch's swap. NumPy's transpose takes a whole permutation: with two
    axes it only runs on a 2-D array, where (1, 0) is the same swap and (0, 1) does
    nothing, which no code writes; swapaxes is right for both."""
    args = site.original.args
    if len(args) != 2 or any(a.star for a in args):
        return False
    if all(a.keyword is not None and a.keyword.value in ("dim0", "dim1") for a in args):
        return True
    return all(a.keyword is None and isinstance(site.literal(a.value), int) for a in args)


method("transpose", "AXS001", target="swapaxes", sig=("dim0", "dim1"),
       rename={"dim0": "axis0", "dim1": "axis1"}, unambiguous=_two_axes)
api("torch.permute", "mindspore.ops.permute", rule="AXS002", sig=("input", "dims"),
    rename={"dims": "axis"}, returns="tensor")
api("torch.flatten", "mindspore.ops.flatten", rule="AXS003", sig=("input", "start_dim", "end_dim"),
    ms_sig=("input",), defaults={"start_dim": "0"}, returns="tensor")
api("torch.squeeze", "mindspore.ops.squeeze", rule="AXS004", sig=("input", "dim"),
    rename={"dim": "axis"}, returns="tensor")
method("squeeze", "AXS004", unambiguous=True, sig=("dim",), rename={"dim": "axis"})
method("repeat", "AXS005", target="tile")
api("torch.unsqueeze", "mindspore.ops.unsqueeze", rule="AXS006", returns="tensor")
api("torch.reshape", "mindspore.ops.reshape", rule="AXS006", returns="tensor")
for _name in ("view", "reshape", "unsqueeze", "expand", "permute", "flatten", "contiguous", "t"):
    method(_name, "AXS006", unambiguous=True)
