"""Data objects: tensors, parameters, dtypes and shape queries. MindSpore keeps two data
objects, Tensor and Parameter, where PyTorch has Tensor, Variable, Parameter and buffers."""

import libcst as cst

from msmagic.engine.spec import api, method
from msmagic.rules.device import DEVICE_ARG_RULE
from msmagic.rules.registry import register

GROUP = "Data objects"
SEED = "seeds/002 API Comparison › Tensor/Parameter"
PARAMS_SEED = "seeds/004 Parameters Management"
REF = "r2.4.10/api_mapping/pytorch_api_mapping.md"

register(
    "DAT001",
    "torch.tensor becomes mindspore.Tensor",
    group=GROUP,
    why="""
        ``mindspore.Tensor(data, dtype=...)`` builds a tensor from Python or NumPy data like
        ``torch.tensor``. The dtype each infers was checked to agree: Python floats give
        float32, Python ints int64, bools bool, and NumPy arrays keep their own dtype
        (float64 stays float64 in both), so no explicit dtype is added. ``device=`` and
        ``pin_memory=`` are dropped (rule DEV003). ``requires_grad=`` is dropped too:
        MindSpore takes gradients of a function with respect to its inputs or a Cell's
        Parameters (``mindspore.grad``), not of tensors flagged beforehand; the tensor's
        values are unchanged, and the code that differentiates is ported by the autograd
        rules.
    """,
    seed=SEED,
    reference=REF,
    example="""
        import torch
        import numpy as np
        a = torch.tensor([1.0, 2.5])
        b = torch.tensor([[1, 2], [3, 4]], dtype=torch.float32)
        c = torch.tensor(np.arange(3.0), requires_grad=True)
    """,
)

register(
    "DAT002",
    "torch.from_numpy becomes mindspore.Tensor.from_numpy",
    group=GROUP,
    why="""
        Both wrap a NumPy array without copying it: the tensor keeps the array's dtype and
        shares its memory, so writing to the array afterwards changes the tensor in both
        frameworks (verified on the installed versions). Use ``mindspore.Tensor(array)``
        instead when you want a copy that later writes to the array cannot reach.
    """,
    seed=SEED,
    reference=REF,
    example="""
        import torch
        import numpy as np
        arr = np.arange(6.0).reshape(2, 3)
        t = torch.from_numpy(arr)
    """,
)

register(
    "DAT003",
    "Variable is unwrapped; Variable(..., requires_grad=True) becomes Parameter",
    group=GROUP,
    why="""
        ``torch.autograd.Variable`` has been a plain Tensor since PyTorch 0.4 and MindSpore
        has no such class, so ``Variable(t)`` becomes ``t`` (parenthesised when needed) and
        the no-op ``volatile=`` goes away. A Variable that asks for gradients becomes a
        ``mindspore.Parameter``, MindSpore's data object that is differentiated and
        updated; arithmetic on it returns ordinary Tensors with the same values. An unnamed
        Parameter outside a Cell is called ``Parameter#N``; names only matter once it is
        assigned to a Cell.
    """,
    seed=SEED,
    reference=REF,
    example="""
        import torch
        from torch.autograd import Variable
        x = Variable(torch.tensor([1.0, 2.0]))
        w = Variable(torch.tensor([0.5, -1.0]), requires_grad=True)
        y = x * w
    """,
)

register(
    "DAT004",
    "nn.Parameter becomes mindspore.Parameter",
    group=GROUP,
    why="""
        ``mindspore.Parameter`` is the counterpart of ``torch.nn.Parameter``: assigned to a
        Cell attribute it joins the Cell's parameters, named after the attribute (``self.w``
        is ``w``, ``sub.w`` inside a sub-cell), and ``requires_grad`` says whether it is
        trained. The positional order differs: MindSpore's second parameter is ``name``, so
        a positional ``requires_grad`` is passed by keyword. ``self.register_buffer(...)``
        needs no rewrite: MindSpore 2.10 Cells have it, with PyTorch's ``persistent=``,
        ``state_dict`` and ``named_buffers`` behaviour.
    """,
    installed_note="""
        The r2.4.10 docs turn buffers into ``Parameter(requires_grad=False)``; 2.10 adds
        ``Cell.register_buffer``, so buffers stay buffers (checked by running a Cell with a
        persistent and a non-persistent buffer).
    """,
    seed=PARAMS_SEED,
    reference=REF,
    example="""
        import torch
        import torch.nn as nn
        w = nn.Parameter(torch.tensor([1.0, 2.0]))
        frozen = nn.Parameter(torch.tensor([3.0]), False)
        y = w * 2
    """,
)

register(
    "DAT005",
    "torch dtypes become mindspore dtypes",
    group=GROUP,
    why="""
        Each PyTorch dtype object has a MindSpore counterpart of the same width:
        ``torch.float32``/``torch.float`` -> ``mindspore.float32``, ``torch.long`` ->
        ``mindspore.int64``, ``torch.half`` -> ``mindspore.float16``, ``torch.bool`` ->
        ``mindspore.bool_`` and so on. The aliases are spelled out as the sized name so the
        ported code is unambiguous. Tensor cast methods (``.float()``, ``.long()``,
        ``.int()``, ``.double()``, ``.half()``, ``.bool()``) and ``.item()``, ``.tolist()``,
        ``.numel()``, ``.dim()`` exist on MindSpore 2.10 tensors with the same results and
        are left as they are.
    """,
    seed=SEED,
    reference=REF,
    installed_note="""
        The r2.4.10 mapping table routes casts through ``Tensor.astype``; MindSpore 2.10
        tensors have ``float()``, ``long()``, ``int()``, ``double()``, ``half()``,
        ``bool()``, ``item()``, ``tolist()``, ``numel()`` and ``dim()`` with PyTorch's
        results (checked by running them), so those calls are kept.
    """,
    example="""
        import torch
        x = torch.tensor([1.7, -2.2], dtype=torch.float64)
        n = torch.tensor([1, 2], dtype=torch.long)
        h = x.half()
    """,
)

register(
    "DAT006",
    ".size() becomes .shape, .size(i) becomes .shape[i]",
    group=GROUP,
    why="""
        In MindSpore ``Tensor.size`` is a property holding the number of elements (like
        NumPy's), so ``x.size()`` would fail and ``x.size`` means ``numel``. The shape is
        ``x.shape``, a tuple, which compares and indexes like PyTorch's ``torch.Size``:
        ``x.size()`` becomes ``x.shape`` and ``x.size(i)`` / ``x.size(dim=i)`` become
        ``x.shape[i]`` (negative indices work the same). The call form is ported whatever
        the receiver, since only PyTorch tensors have a callable ``size``.
    """,
    seed="seeds/002 API Comparison › functional APIs (mapping table)",
    reference=REF,
    example="""
        import torch
        x = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
        rows = x.size(0)
        last = x.size(dim=-1)
        shape = x.size()
    """,
)


api("torch.tensor", "mindspore.Tensor", rule="DAT001", sig=("data",),
    rename={"data": "input_data"}, ms_sig=("input_data", "dtype"),
    drop={"device": DEVICE_ARG_RULE, "pin_memory": DEVICE_ARG_RULE, "requires_grad": "DAT001"},
    returns="tensor")
api("torch.from_numpy", "mindspore.Tensor.from_numpy", rule="DAT002", returns="tensor")


def _paren(node):
    if isinstance(node, (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.SimpleString,
                         cst.Integer, cst.Float, cst.List, cst.Tuple, cst.Dict)) or node.lpar:
        return node
    return node.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def _variable(site):
    data, grad = site.arg("data"), site.arg("requires_grad")
    if data is None:
        return None
    if grad is None or site.literal(grad.value, True) is False:
        new = _paren(data.value)
        site.edit("DAT003", new, detail="Variable(t) -> t")
        return new
    args = [cst.Arg(data.value)]
    if site.literal(grad.value) is not True:
        args = [args[0].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
                cst.Arg(grad.value, keyword=cst.Name("requires_grad"),
                        equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                                              whitespace_after=cst.SimpleWhitespace("")))]
    new = cst.Call(func=site.ref("mindspore.Parameter"), args=args)
    site.edit("DAT003", new, detail="Variable(t, requires_grad=True) -> mindspore.Parameter(t)")
    return new


api("torch.autograd.Variable", rule="DAT003", sig=("data", "requires_grad", "volatile"),
    handler=_variable, returns="tensor")

for _qual in ("torch.nn.Parameter", "torch.nn.parameter.Parameter"):
    api(_qual, "mindspore.Parameter", rule="DAT004", sig=("data", "requires_grad"),
        rename={"data": "default_input"}, ms_sig=("default_input", "name", "requires_grad"),
        returns="tensor")

DTYPES = {
    "float32": "float32", "float": "float32", "float64": "float64", "double": "float64",
    "float16": "float16", "half": "float16", "bfloat16": "bfloat16",
    "int8": "int8", "int16": "int16", "short": "int16", "int32": "int32", "int": "int32",
    "int64": "int64", "long": "int64", "uint8": "uint8", "bool": "bool_",
    "complex64": "complex64", "cfloat": "complex64", "complex128": "complex128",
    "cdouble": "complex128",
}
for _torch, _ms in DTYPES.items():
    api(f"torch.{_torch}", f"mindspore.{_ms}", rule="DAT005", attr=True, returns="dtype")

# Same method and results on MindSpore tensors: kept, and typed so later calls port.
for _name in ("float", "long", "int", "double", "half", "bool", "bfloat16"):
    method(_name, "DAT005", unambiguous=True)


def _size(site):
    bound = site.bound()
    if bound is None or len(bound) > 1:
        return None
    new = cst.Attribute(value=site.receiver, attr=cst.Name("shape"))
    if bound:
        new = cst.Subscript(value=new, slice=[cst.SubscriptElement(cst.Index(bound[0][1].value))])
    site.edit("DAT006", new, detail=f".size({site.code(bound[0][1].value) if bound else ''}) -> "
                                    f"{site.code(new)[len(site.code(site.receiver)):]}")
    return new


method("size", "DAT006", unambiguous=True, sig=("dim",), handler=_size, returns=None)


def _tensor_type(site):
    """``torch.Tensor`` as a type (``isinstance(x, torch.Tensor)``, annotations) is
    ``mindspore.Tensor``. Called, it is PyTorch's legacy constructor (float32 from data,
    uninitialised from a shape), which ``mindspore.Tensor`` does not reproduce: flagged."""
    if isinstance(site.original, cst.Call):
        site.finding("DAT001", "torch.Tensor(...) is the legacy constructor (float32 data, or an "
                     "uninitialised tensor from a shape): use torch.tensor(data, dtype=torch.float32) "
                     "or torch.zeros(shape)", comment="legacy torch.Tensor(...) constructor")
        return None
    new = site.ref("mindspore.Tensor")
    site.edit("DAT001", new, detail="torch.Tensor (the type) -> mindspore.Tensor")
    return new


api("torch.Tensor", "mindspore.Tensor", rule="DAT001", attr=True, handler=_tensor_type, returns=None)
