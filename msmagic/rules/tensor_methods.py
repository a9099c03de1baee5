"""Common Tensor methods that PyTorch's operator database does not test: queries
(``item``, ``numel``, ``dim``...), conversions (``tolist``, ``type_as``, ``type``),
constructors on a tensor (``new_tensor``) and in-place fills (``zero_``, ``copy_``).

Each was run on MindSpore 2.10 (CPU): the same name does not always mean the same
result (``element_size`` is missing, ``requires_grad_`` returns None, ``zero_`` has no
CPU kernel), so every method here is either checked to give PyTorch's result type and
value, rewritten, or flagged.
"""

import libcst as cst

from msmagic.engine.spec import TENSOR, method
from msmagic.rules.device import DEVICE_ARG_RULE
from msmagic.rules.registry import register

GROUP = "Tensor methods"
SEED = "seeds/002 API Comparison › Tensor/Parameter"
REF = "r2.4.10/api_mapping/pytorch_api_mapping.md"

SAME = "TNS001"
ELEMENT_SIZE = "TNS002"
NEW_TENSOR = "TNS003"
IN_PLACE = "TNS004"
TYPE = "TNS005"
NO_COUNTERPART = "TNS006"

register(
    SAME,
    "Tensor queries and conversions that keep their PyTorch form",
    group=GROUP,
    why="""
        ``mindspore.Tensor`` has these methods with PyTorch's results, checked value and
        type by type on the installed version: ``item()`` returns a Python ``float``,
        ``int`` or ``bool`` (not a 0-d tensor); ``tolist()`` nested Python lists;
        ``dim()``/``ndimension()`` and ``numel()``/``nelement()`` Python ints;
        ``is_floating_point()`` and ``is_contiguous()`` Python bools (a transposed, sliced
        or expanded tensor is not contiguous in either framework); ``type_as(other)``
        casts to the other tensor's dtype; ``data_ptr()`` is the address of the data, equal
        for a tensor and its ``view``/``reshape`` and different for a copy, as in PyTorch.
        The calls are left as written.
    """,
    seed=SEED,
    reference=REF,
    installed_note="""
        Checked on 2.10 (CPU): ``Tensor.item`` of float32/float64/float16, int64 and bool
        tensors gives float, int and bool; ``tolist`` of a 0-d tensor gives a number;
        ``dim``/``numel`` of a 0-d tensor give 0 and 1.
    """,
    example="""
        import torch
        x = torch.arange(6.0).reshape(2, 3)
        n = x.numel()
        d = x.dim()
        v = x[1, 2].item()
        rows = x.tolist()
        flt = x.is_floating_point()
        i = torch.tensor([1, 2]).type_as(x)
    """,
)

register(
    ELEMENT_SIZE,
    "element_size() becomes the itemsize attribute",
    group=GROUP,
    why="""
        ``Tensor.element_size()`` (bytes per element) does not exist on MindSpore's Tensor;
        the ``itemsize`` attribute gives the same number (4 for float32, 2 for float16, 8
        for int64 and float64, 1 for bool and int8). ``x.element_size() * x.numel()``,
        the usual memory estimate, keeps its value.
    """,
    seed=SEED,
    reference=REF,
    installed_note="Checked on 2.10: Tensor has no element_size; Tensor.itemsize is an int attribute.",
    example="""
        import torch
        x = torch.zeros(4, 3)
        nbytes = x.element_size() * x.numel()
        half = x.half().element_size()
    """,
)

register(
    NEW_TENSOR,
    "x.new_tensor(data) becomes mindspore.Tensor(data, dtype=x.dtype)",
    group=GROUP,
    why="""
        ``x.new_tensor(data)`` builds a tensor from ``data`` with ``x``'s dtype (not the
        dtype ``torch.tensor`` would infer: ``x.new_tensor([1, 2])`` is float32 when ``x``
        is). MindSpore's Tensor has no ``new_tensor``; ``mindspore.Tensor(data,
        dtype=x.dtype)`` gives the same values and dtype, or the ``dtype=`` the call
        passes. ``device=`` is dropped (rule DEV003); other arguments
        (``requires_grad=``) are flagged.
    """,
    seed=SEED,
    reference=REF,
    installed_note="Checked on 2.10: Tensor.new_tensor raises AttributeError.",
    example="""
        import torch
        x = torch.zeros(2, dtype=torch.float64)
        a = x.new_tensor([1, 2, 3])
        b = x.new_tensor([[0.5]], dtype=torch.float32)
    """,
)

register(
    IN_PLACE,
    "zero_() becomes copy_(ops.zeros_like(x)); copy_ stays in place",
    group=GROUP,
    why="""
        ``x.zero_()`` overwrites the tensor's memory with zeros. MindSpore 2.10 has a
        ``zero_`` method, but no CPU kernel for it (it raises). Its ``copy_`` does work in
        place on CPU: it writes into the tensor or Parameter, so other names for it (an
        alias, a layer holding it as a parameter) see the new values, as in PyTorch, and it
        casts and broadcasts the source like PyTorch's. So ``x.copy_(src)`` is kept and
        ``x.zero_()`` becomes ``x.copy_(mindspore.ops.zeros_like(x))``. The receiver must be
        a name or an attribute (``layer.bias``, ``p.data``): an element or slice
        (``x[0].copy_(...)``) is a non-contiguous view that MindSpore's CPU copy rejects or
        silently does not reach, so such calls are flagged and left unchanged.
    """,
    seed=SEED,
    reference=REF,
    installed_note="""
        Checked on 2.10 (CPU): ``Tensor.zero_`` raises "kernel InplaceZero unregistered";
        ``copy_`` updates a Tensor, a Parameter of a Cell (and what the Cell computes),
        a ``.data`` and a contiguous ``view``, and the result shares the receiver's memory;
        on ``x[0]`` it raises when the value is read and on ``x.T`` it does nothing. A
        name bound to a transposed or sliced tensor has the same limit.
    """,
    example="""
        import torch
        import torch.nn as nn
        layer = nn.Linear(3, 2)
        with torch.no_grad():
            layer.bias.zero_()
            layer.weight.copy_(torch.ones(2, 3))
        x = torch.arange(6.0).reshape(2, 3)
        alias = x
        x.zero_()
        y = layer(torch.ones(1, 3))
    """,
)

register(
    TYPE,
    "x.type(dtype) is kept; x.type() and type strings are flagged",
    group=GROUP,
    why="""
        ``x.type(torch.int32)`` casts like MindSpore's ``x.type(mindspore.int32)`` (the
        dtype is ported by rule DAT005). Without an argument PyTorch returns a type name
        such as ``'torch.FloatTensor'`` where MindSpore returns ``'Float32'``, and a type
        string (``x.type('torch.IntTensor')``) is rejected by MindSpore: both are flagged.
        Compare ``x.dtype`` instead.
    """,
    seed=SEED,
    reference=REF,
    installed_note="Checked on 2.10: Tensor.type() returns 'Float32'; Tensor.type('torch.IntTensor') raises TypeError.",
    example="""
        import torch
        x = torch.tensor([1.7, -2.2])
        i = x.type(torch.int32)
        d = x.type(dtype=torch.float64)
    """,
)

register(
    NO_COUNTERPART,
    "Tensor methods with no faithful MindSpore counterpart",
    group=GROUP,
    finding_only=True,
    why="""
        ``requires_grad_()`` marks a tensor for autograd; MindSpore has no such flag on
        tensors (it differentiates functions with respect to their inputs, or a Cell's
        Parameters), and its same-named method returns None, so ``w =
        torch.randn(3).requires_grad_()`` would bind None. Create the tensor with
        ``requires_grad=True`` (which the autograd rules port) or make it a
        ``mindspore.Parameter``; at the top level of a cell, where a later cell may
        differentiate the tensor, the autograd rules drop the mark (GRD001). ``get_device()`` returns PyTorch's device index (-1 on
        CPU); MindSpore tensors have no device index (``x.device`` is a string). These
        calls are flagged and left unchanged.
    """,
    seed=SEED,
    reference=REF,
    installed_note="Checked on 2.10: Tensor.requires_grad_() returns None; Tensor has no get_device.",
    example="""
        import torch

        def make():
            w = torch.ones(3).requires_grad_()
            return w, w.get_device()
    """,
)

# ----------------------------------------------------------------------------- same form



def _kept(rule: str):
    def handler(site):
        # logged although the text does not change: the call was recognised and its
        # result checked on the installed MindSpore
        site.edit(rule, site.updated, detail=f".{site.original.func.attr.value}() kept")
        return site.updated

    return handler


for _name in ("item", "tolist", "dim", "ndimension", "numel", "nelement", "is_floating_point",
              "is_contiguous", "data_ptr"):
    method(_name, SAME, unambiguous=True, handler=_kept(SAME), returns=None)
method("type_as", SAME, unambiguous=True, sig=("other",), handler=_kept(SAME))


# ----------------------------------------------------------------------------- element_size


def _element_size(site):
    if site.updated.args:
        return None
    new = cst.Attribute(value=site.receiver, attr=cst.Name("itemsize"))
    site.edit(ELEMENT_SIZE, new, detail=".element_size() -> .itemsize")
    return new


method("element_size", ELEMENT_SIZE, unambiguous=True, handler=_element_size, returns=None)


# ----------------------------------------------------------------------------- new_tensor


def _kw(name: str, value) -> cst.Arg:
    return cst.Arg(keyword=cst.Name(name), value=value,
                   equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                                         whitespace_after=cst.SimpleWhitespace("")))


def _new_tensor(site):
    bound = site.bound()
    if bound is None:
        site.finding(NEW_TENSOR, "new_tensor with *args/**kwargs cannot be mapped", comment="new_tensor not ported")
        return None
    args = {}
    for name, arg, _ in bound:
        if name == "device":
            site.edit(DEVICE_ARG_RULE, None, detail=f"device= dropped: {site.code(arg.value).strip()}")
            continue
        if name not in ("data", "dtype"):
            site.finding(NEW_TENSOR, f"new_tensor({name or 'positional'}=...) has no mindspore.Tensor counterpart; "
                         "left as PyTorch", comment=f"new_tensor {name}= not ported")
            return None
        args[name] = arg.value
    if "data" not in args:
        site.finding(NEW_TENSOR, "new_tensor without data", comment="new_tensor not ported")
        return None
    dtype = args.get("dtype") or cst.Attribute(value=site.receiver, attr=cst.Name("dtype"))
    new = cst.Call(func=site.ref("mindspore.Tensor"), args=[cst.Arg(args["data"]), _kw("dtype", dtype)])
    site.edit(NEW_TENSOR, new, detail="x.new_tensor(data) -> mindspore.Tensor(data, dtype=...)")
    return new


method("new_tensor", NEW_TENSOR, unambiguous=True, sig=("data", "dtype", "device", "requires_grad"),
       handler=_new_tensor)


# ----------------------------------------------------------------------------- in place


def _plain_target(node) -> bool:
    """A name or an attribute chain of names (``x``, ``layer.bias``, ``p.data``)."""
    while isinstance(node, cst.Attribute):
        node = node.value
    return isinstance(node, cst.Name)


def _view_receiver(site, name: str) -> bool:
    if _plain_target(site.receiver_original):
        return False
    recv = site.code(site.receiver_original).strip()
    site.finding(IN_PLACE, f"{recv}.{name}(): MindSpore's in-place copy does not reach an element, a slice "
                 "or a computed view on CPU; assign the values to a name or attribute instead",
                 comment=f"Tensor.{name} on {recv} not ported")
    return True


def _zero(site):
    if site.updated.args or _view_receiver(site, "zero_"):
        return None
    recv = site.receiver
    zeros = cst.Call(func=site.ref("mindspore.ops.zeros_like"), args=[cst.Arg(recv)])
    new = cst.Call(func=cst.Attribute(value=recv, attr=cst.Name("copy_")), args=[cst.Arg(zeros)])
    site.edit(IN_PLACE, new, detail=".zero_() -> .copy_(ops.zeros_like(...))")
    return new


def _copy(site):
    if _view_receiver(site, "copy_"):
        return None
    return _kept(IN_PLACE)(site)


method("zero_", IN_PLACE, unambiguous=True, handler=_zero)
method("copy_", IN_PLACE, unambiguous=True, sig=("src", "non_blocking"), handler=_copy)


# ----------------------------------------------------------------------------- type


def _type(site):
    bound = site.bound()
    if not bound:
        site.finding(TYPE, "x.type() returns 'torch.FloatTensor' in PyTorch and 'Float32' in MindSpore; "
                     "compare x.dtype instead", comment="Tensor.type() name differs in MindSpore")
        return None
    dtype = next((a.value for n, a, _ in bound if n == "dtype"), None)
    if dtype is None or len(bound) > 1 or isinstance(dtype, (cst.SimpleString, cst.ConcatenatedString,
                                                            cst.FormattedString)):
        site.finding(TYPE, "x.type() with a type string or other arguments has no MindSpore counterpart; "
                     "use x.to(dtype)", comment="Tensor.type(...) not ported")
        return None
    return _kept(TYPE)(site)


method("type", TYPE, receiver=TENSOR, unambiguous=False, sig=("dtype", "non_blocking"), handler=_type)


# ----------------------------------------------------------------------------- no counterpart


def _requires_grad_(site):
    site.finding(NO_COUNTERPART, "requires_grad_() has no MindSpore counterpart (its same-named method returns "
                 "None): create the tensor with requires_grad=True or as a mindspore.Parameter",
                 comment="Tensor.requires_grad_ not ported")
    return None


def _get_device(site):
    site.finding(NO_COUNTERPART, "get_device() has no MindSpore counterpart: MindSpore tensors have no device "
                 "index (x.device is a string such as 'CPU')", comment="Tensor.get_device not ported")
    return None


method("requires_grad_", NO_COUNTERPART, handler=_requires_grad_, returns="same")
method("get_device", NO_COUNTERPART, unambiguous=True, handler=_get_device, returns=None)
