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
from msmagic.rules._util import pack_positional
from msmagic.rules.api_table import _rebind
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
NEW_SHAPED = "TNS007"
FILL = "TNS008"
RESIZE = "TNS009"

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


#: methods whose result is a new tensor nothing else refers to
_FRESH_METHODS = frozenset({"new", "new_zeros", "new_ones", "new_empty", "new_full", "new_tensor", "clone"})
#: PyTorch functions that build a new tensor
_FRESH_FACTORIES = frozenset({f"torch.{n}" for n in (
    "empty", "zeros", "ones", "full", "rand", "randn", "randint", "tensor", "arange", "linspace",
    "empty_like", "zeros_like", "ones_like", "full_like", "rand_like", "randn_like", "Tensor",
    "FloatTensor", "LongTensor", "DoubleTensor", "IntTensor")})


#: factories whose result is float32 unless given a dtype (randn_like draws float32)
_FLOAT32_FACTORIES = frozenset({f"torch.{n}" for n in (
    "empty", "zeros", "ones", "rand", "randn", "Tensor", "FloatTensor")})


def _fresh(site) -> bool:
    """Is the receiver a tensor just built (``w.new(...)``, ``torch.empty(...)``), so
    that filling it in place and using a filled copy are the same?"""
    node = site.receiver_original
    if not isinstance(node, cst.Call):
        return False
    func = node.func
    if isinstance(func, cst.Attribute) and func.attr.value in _FRESH_METHODS:
        return True
    return site.resolve(func) in _FRESH_FACTORIES


def _zero(site):
    if site.updated.args:
        return None
    recv = site.receiver
    if _fresh(site):
        if isinstance(recv, cst.Call) and isinstance(recv.func, cst.Attribute) and recv.func.attr.value == "new_zeros":
            site.edit(IN_PLACE, recv, detail=".zero_() of new zeros dropped")
            return recv
        new = cst.Call(func=site.ref("mindspore.ops.zeros_like"), args=[cst.Arg(recv)])
        site.edit(IN_PLACE, new, detail=".zero_() of a new tensor -> ops.zeros_like(...)")
        return new
    if _view_receiver(site, "zero_"):
        return None
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


# a receiver of unknown kind (``equals.type(torch.FloatTensor)`` in a function) is
# handled as a tensor: a dtype argument is kept as written (right for any receiver), the
# forms whose result differs are flagged either way
method("type", TYPE, receiver=TENSOR, unambiguous=True, sig=("dtype", "non_blocking"), handler=_type)


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


# ----------------------------------------------------------------------------- new(*size)

register(
    NEW_SHAPED,
    "x.new(*size) and new_* with spread-out sizes take one shape tuple",
    group=GROUP,
    why="""
        ``x.new(2, 3)`` (the legacy constructor, common in RNN notebooks as
        ``weight.new(n_layers, batch, hidden).zero_()``) builds an uninitialised tensor of
        that size with ``x``'s dtype; MindSpore's Tensor has no ``new``. ``new_zeros`` and
        ``new_ones`` exist but take the shape as one argument, so ``x.new_zeros(2, 3)``
        raises there. The port writes one shape tuple: ``x.new(2, 3)`` and
        ``x.new_empty(2, 3)`` become ``x.new_zeros((2, 3))`` (zeros are one valid content
        of an uninitialised tensor, and MindSpore's ``new_empty`` hands back whatever the
        memory held), ``x.new_ones(2, 3)`` becomes ``x.new_ones((2, 3))``. ``x.new()`` is an
        empty tensor, ``new_zeros((0,))``; ``x.new([1, 2])`` (a list or tuple literal: data,
        not a size) becomes ``mindspore.Tensor([1, 2], dtype=x.dtype)``; a single argument
        that may be either (a name) is flagged. ``x.new_full(size, v)`` becomes
        ``mindspore.ops.full(size, v, dtype=x.dtype)`` (MindSpore's ``new_full`` is
        Ascend-only). ``dtype=`` is kept, ``device=`` dropped (DEV003), other options
        (``requires_grad=``) flagged. A ``.zero_()`` on the new tensor is then redundant and
        dropped (TNS004).
    """,
    seed=SEED,
    reference=REF,
    installed_note="""
        Checked on 2.10: Tensor has no ``new``; ``new_zeros(2, 2)`` raises TypeError
        ("argument 'dtype' must be mstype, not int"); ``new_zeros``/``new_ones`` accept an
        int, a tuple or a list and ``dtype=``; ``new_full`` raises NotImplementedError
        (Ascend only) on CPU.
    """,
    example="""
        import torch
        w = torch.ones(3, 2, dtype=torch.float64)
        h = w.new(2, 4, 5).zero_()
        z = w.new_zeros(2, 3)
        o = w.new_ones(4, dtype=torch.int64)
        e = w.new_empty(3, 1).shape
        f = w.new_full((2, 2), 7)
        d = w.new([1, 2, 3])
        n = w.new().shape
    """,
)

def _shape_like(node) -> bool:
    """An expression that is a size: an int literal, ``x.shape``, ``x.size()``..."""
    if isinstance(node, cst.Integer):
        return True
    if isinstance(node, cst.Attribute) and node.attr.value == "shape":
        return True
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "size"


def _new_shaped(name: str, target: str):
    def handler(site):
        call, original = site.updated, site.original
        if any(a.star == "**" or (a.star and a.keyword is not None) for a in call.args):
            site.finding(NEW_SHAPED, f"{name} with **kwargs cannot be mapped", comment=f"{name} not ported")
            return None
        args, dtype = [], None
        for arg, orig in zip(call.args, original.args):
            key = arg.keyword.value if arg.keyword is not None else None
            if key is None or key == "size":
                args.append((arg, orig))
            elif key == "dtype" and name != "new":
                dtype = arg
            elif key == "device":
                site.edit(DEVICE_ARG_RULE, None, detail=f"device= dropped: {site.code(arg.value).strip()}")
            else:
                site.finding(NEW_SHAPED, f"{name}({key}=...) has no MindSpore counterpart; left as PyTorch",
                             comment=f"Tensor.{name} {key}= not ported")
                return None
        recv = site.receiver
        spread = any(a.star for a, _ in args)  # ``w.new_zeros(*shape)``: the sizes spread out
        if name == "new" and len(args) == 1 and not spread and isinstance(args[0][1].value, (cst.List, cst.Tuple)):
            new = cst.Call(func=site.ref("mindspore.Tensor"), args=[
                cst.Arg(args[0][0].value), _kw("dtype", cst.Attribute(value=recv, attr=cst.Name("dtype")))])
            site.edit(NEW_SHAPED, new, detail="x.new(data) -> mindspore.Tensor(data, dtype=x.dtype)")
            return new
        if name == "new" and len(args) == 1 and not spread and not _shape_like(args[0][1].value):
            site.finding(NEW_SHAPED, f"x.new({site.code(args[0][1].value).strip()}): a size (an int, a "
                         "torch.Size) or data (a list) depending on the value; write x.new_zeros(size) or "
                         "mindspore.Tensor(data, dtype=x.dtype)", comment="Tensor.new: size or data?")
            return None
        if not args:
            if name != "new":
                return None
            shape = cst.Tuple([cst.Element(cst.Integer("0"), comma=cst.Comma())])
        elif len(args) == 1 and not spread:
            shape = args[0][0].value
        else:
            shape = pack_positional(cst.Call(func=cst.Name("_"), args=[a for a, _ in args])).args[0].value
        new_args = [cst.Arg(shape)]
        if dtype is not None:
            new_args.append(dtype.with_changes(comma=cst.MaybeSentinel.DEFAULT))
        new = cst.Call(func=cst.Attribute(value=recv, attr=cst.Name(target)), args=new_args)
        site.edit(NEW_SHAPED, new, detail=f".{name}(...) -> .{target}(shape)")
        return new

    return handler


for _name, _target in (("new", "new_zeros"), ("new_empty", "new_zeros"), ("new_zeros", "new_zeros"),
                       ("new_ones", "new_ones")):
    # new_empty's values are whatever memory held: parity copies them, like torch.empty's
    method(_name, NEW_SHAPED, unambiguous=True, handler=_new_shaped(_name, _target), random=_name == "new_empty")


def _new_full(site):
    bound = site.bound()
    if bound is None:
        site.finding(NEW_SHAPED, "new_full with *args/**kwargs cannot be mapped", comment="new_full not ported")
        return None
    args = {}
    for name, arg, _ in bound:
        if name == "device":
            site.edit(DEVICE_ARG_RULE, None, detail=f"device= dropped: {site.code(arg.value).strip()}")
        elif name in ("size", "fill_value", "dtype"):
            args[name] = arg.value
        else:
            site.finding(NEW_SHAPED, f"new_full({name or 'positional'}=...) has no MindSpore counterpart; left as "
                         "PyTorch", comment=f"Tensor.new_full {name}= not ported")
            return None
    if "size" not in args or "fill_value" not in args:
        return None
    dtype = args.get("dtype") or cst.Attribute(value=site.receiver, attr=cst.Name("dtype"))
    new = cst.Call(func=site.ref("mindspore.ops.full"),
                   args=[cst.Arg(args["size"], comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
                         cst.Arg(args["fill_value"], comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
                         _kw("dtype", dtype)])
    site.edit(NEW_SHAPED, new, detail="x.new_full(size, v) -> mindspore.ops.full(size, v, dtype=x.dtype)")
    return new


method("new_full", NEW_SHAPED, unambiguous=True, sig=("size", "fill_value", "dtype", "device", "requires_grad"),
       handler=_new_full)


# ----------------------------------------------------------------------------- fills

register(
    FILL,
    "fill_, normal_ and uniform_ become copy_ of a filled or drawn tensor",
    group=GROUP,
    why="""
        ``x.fill_(v)``, ``x.normal_(mean, std)`` and ``x.uniform_(a, b)`` overwrite a
        tensor in place, typically a layer's weights (``model.fc1.bias.data.fill_(0)``,
        ``model.fc1.weight.data.normal_(std=0.01)``). MindSpore 2.10 has the same methods
        but no CPU kernels for them (InplaceFillScalar, InplaceNormal, InplaceUniform).
        Its ``copy_`` does work in place on CPU (TNS004), so the port writes
        ``x.copy_(mindspore.ops.full_like(x, v))``, ``x.copy_(mindspore.ops.randn_like(x) *
        std + mean)`` and ``x.copy_(mindspore.ops.rand_like(x) * (b - a) + a)``: the
        tensor, the Parameter behind ``.data`` and the layer using it see the new values.
        ``copy_`` casts to the receiver's dtype, as ``fill_`` does (2.7 into an int64
        tensor is 2). The draws come from MindSpore's generator, so the values differ from
        PyTorch's while the distribution is the same (parity copies PyTorch's values into
        a layer filled this way). A tensor just built (``torch.empty(3).fill_(1)``) is
        replaced by the filled one (``ops.full_like``); an element or slice receiver is
        flagged, as for ``copy_``. ``generator=`` has no counterpart and is flagged.
    """,
    seed=SEED,
    reference=REF,
    installed_note="""
        Checked on 2.10 (CPU): ``Tensor.fill_`` raises "The kernel InplaceFillScalar
        unregistered", ``normal_``/``uniform_`` raise "Create kernelmod for op InplaceNormal
        / InplaceUniform failed"; ``ops.randn_like`` of a float64 tensor is float32 (the
        cast happens in ``copy_``), ``ops.rand_like`` keeps the dtype.
    """,
    example="""
        import torch
        import torch.nn as nn
        model = nn.Linear(4, 3)
        model.bias.data.fill_(0)
        model.weight.data.normal_(std=0.01)
        x = torch.zeros(2, 3, dtype=torch.int64)
        x.fill_(2.7)
        y = model(torch.ones(1, 4))
        spread = model.weight.std().item() < 0.05
    """,
)


def _num(site, node, default: float):
    """(text of a number argument, its literal value or None)."""
    if node is None:
        return repr(default), default
    value = site.literal(node, None)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return f"({site.code(node).strip()})", None
    return site.code(node).strip(), value


def _filled(site, name: str, recv_text: str):
    """The expression of a tensor like ``recv_text`` holding what ``name`` writes."""
    args = {}
    for pname, arg, _ in site.bound() or []:
        args[pname] = arg.value
    if "generator" in args:
        site.finding(FILL, f"{name}(generator=...): MindSpore draws from its global seed and takes no generator",
                     comment=f"Tensor.{name} generator= not ported")
        return None
    if name == "fill_":
        if "value" not in args:
            return None
        full = site.code(site.ref("mindspore.ops.full_like")).strip()
        return site.parse(f"{full}({recv_text}, {site.code(args['value']).strip()})")
    if name == "normal_":
        mean, mv = _num(site, args.get("mean"), 0.0)
        std, sv = _num(site, args.get("std"), 1.0)
        draw = f"{site.code(site.ref('mindspore.ops.randn_like')).strip()}({recv_text})"
        text = draw if sv == 1 else f"{draw} * {std}"
        if mv is None or mv > 0:
            text = f"{text} + {mean}"
        elif mv < 0:
            text = f"{text} - {-mv!r}"
        return site.parse(text)
    low, lv = _num(site, args.get("from"), 0.0)
    high, hv = _num(site, args.get("to"), 1.0)
    draw = f"{site.code(site.ref('mindspore.ops.rand_like')).strip()}({recv_text})"
    if lv is not None and hv is not None:
        width = float(f"{hv - lv:.15g}")
        text = draw if width == 1 else f"{draw} * {width!r}"
        if lv:
            text = f"{text} - {-lv!r}" if lv < 0 else f"{text} + {lv!r}"
    else:
        text = f"{draw} * ({high} - {low}) + {low}"
    return site.parse(text)


def _fill(name: str):
    def handler(site):
        if site.bound() is None:
            site.finding(FILL, f"{name} with *args/**kwargs cannot be mapped", comment=f"Tensor.{name} not ported")
            return None
        recv = site.receiver
        if _fresh(site):
            fresh_float32 = name != "normal_" or (
                site.resolve(site.receiver_original.func) in _FLOAT32_FACTORIES
                and not any(a.keyword is not None and a.keyword.value == "dtype" for a in site.receiver_original.args))
            if not fresh_float32:
                site.finding(FILL, "normal_() of a new tensor that may not be float32: MindSpore's randn_like always "
                             "draws float32; build the tensor with ops.randn(shape, dtype=...)",
                             comment="Tensor.normal_ not ported")
                return None
            new = _filled(site, name, site.code(recv).strip())
            if new is None:
                return None
            site.edit(FILL, new, detail=f".{name}() of a new tensor -> the filled tensor")
            return new
        if _view_receiver(site, name):
            return None
        text = site.code(recv).strip()
        value = _filled(site, name, text)
        if value is None:
            return None
        new = cst.Call(func=cst.Attribute(value=recv, attr=cst.Name("copy_")), args=[cst.Arg(value)])
        site.edit(FILL, new, detail=f".{name}(...) -> .copy_(...) (no CPU kernel for {name})")
        return new

    return handler


method("fill_", FILL, unambiguous=True, sig=("value",), handler=_fill("fill_"), returns="same")
method("normal_", FILL, unambiguous=True, sig=("mean", "std", "generator"), handler=_fill("normal_"),
       returns="same", random=True)
method("uniform_", FILL, unambiguous=True, sig=("from", "to", "generator"), handler=_fill("uniform_"),
       returns="same", random=True)


# ----------------------------------------------------------------------------- resize_

register(
    RESIZE,
    "x.resize_(*size) becomes x = x.reshape(size)",
    group=GROUP,
    why="""
        ``images.resize_(64, 1, 784)`` gives a tensor a new shape in place; the udacity
        notebooks use it to flatten image batches. MindSpore's Tensor has no ``resize_``.
        When the number of elements stays the same, which is what this idiom does,
        ``resize_`` keeps the values in order, exactly as ``reshape`` does, so the port
        rebinds the name to ``x.reshape(...)`` (API003's rebinding: a statement becomes
        ``x = x.reshape(...)``, ``y = x.resize_(...)`` becomes ``y = (x := x.reshape(...))``,
        ``x = x.resize_(...)`` simply ``x = x.reshape(...)``). Inside a function the
        rebinding only updates the local name, so it is flagged there (API003), unless the
        statement assigns the result to that same name. A receiver that is an attribute or
        an element is flagged. A ``resize_`` that changes the number of elements (PyTorch
        reallocates and leaves new elements uninitialised) raises in ``reshape``.
    """,
    seed=SEED,
    reference=REF,
    installed_note="Checked on 2.10: Tensor has no resize_; reshape takes sizes spread out or as one tuple.",
    example="""
        import torch
        images = torch.arange(24.0).reshape(4, 1, 2, 3)
        images.resize_(4, 1, 6)
        flat = images.resize_(images.shape[0], 6)
    """,
)


def _resize(site):
    if site.bound() is None and any(a.star for a in site.updated.args):
        return None
    recv = site.receiver_original
    new = site.updated.with_changes(func=site.updated.func.with_changes(attr=cst.Name("reshape")))
    holder = site.statement
    assign = next((s for s in getattr(holder, "body", ()) if isinstance(s, cst.Assign) and s.value is site.original),
                  None)
    if (assign is not None and isinstance(recv, cst.Name) and len(assign.targets) == 1
            and isinstance(assign.targets[0].target, cst.Name) and assign.targets[0].target.value == recv.value):
        site.edit(RESIZE, new, detail=".resize_(...) -> .reshape(...) (assigned to the same name)")
        return new
    rebound = _rebind(site, "Tensor.resize_", new)
    if rebound is None:
        return None
    site.edit(RESIZE, rebound, detail=".resize_(...) -> name rebound to .reshape(...)")
    return rebound


method("resize_", RESIZE, unambiguous=True, handler=_resize, returns=TENSOR)
