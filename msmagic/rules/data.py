"""Data objects: tensors, parameters, dtypes and shape queries. MindSpore keeps two data
objects, Tensor and Parameter, where PyTorch has Tensor, Variable, Parameter and buffers."""

import libcst as cst

from msmagic.engine import build
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
        (float64 stays float64 in both), so no explicit dtype is added, with one
        exception: from Python complex numbers (``torch.tensor([1 + 2j, 3j])``) PyTorch
        builds complex64, the complex type of its float32 default, and MindSpore
        complex128, so ``dtype=mindspore.complex64`` is written out there. ``device=`` and
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
    "torch.from_numpy becomes mindspore.from_numpy",
    group=GROUP,
    why="""
        Both wrap a NumPy array without copying it: the tensor keeps the array's dtype and
        shares its memory, so writing to the array afterwards changes the tensor in both
        frameworks (verified on the installed versions). Use ``mindspore.Tensor(array)``
        instead when you want a copy that later writes to the array cannot reach.
        ``mindspore.Tensor.from_numpy`` does the same, but MindSpore 2.10 marks it
        deprecated.
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
        ported code is unambiguous. The type of them all, ``torch.dtype`` (in annotations
        and ``isinstance`` checks), is ``mindspore.Type``. Tensor cast methods (``.float()``, ``.long()``,
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


register(
    "DAT007",
    "Legacy constructors: torch.Tensor(data), LongTensor(n)... -> Tensor / ops.zeros",
    group=GROUP,
    why="""
        The legacy constructors take either data or sizes: ``torch.Tensor`` is the float32
        one, ``torch.LongTensor``, ``FloatTensor``... name their dtype.
        ``torch.Tensor([[1, 2], [3, 4]])`` or ``torch.LongTensor([1, 2])`` (a list, tuple,
        slice, array or tensor) builds a tensor of that dtype from the data:
        ``mindspore.Tensor(data, mindspore.float32)`` casts the same way (a float64 array
        becomes float32; floats cast to an integer dtype are truncated towards zero).
        ``torch.Tensor(2, 3)`` or ``torch.LongTensor(n)`` with an int ``n`` builds an
        *uninitialised* tensor of that shape, whose values the program must overwrite: it
        becomes ``mindspore.ops.zeros((2, 3), mindspore.float32)``, flagged, because a value
        read before it is written was arbitrary in PyTorch and is 0 here. A single name is
        classified by what it was last assigned in the enclosing blocks (``n = 0``,
        ``n += len(words)``: a size; a list, an array or a slice ``data[:-1]``: data); when
        that is not visible it is ported as data and flagged. ``device=`` is dropped (DEV003); other
        keyword arguments are flagged. As a type, ``x.type(torch.LongTensor)`` casts: the
        argument becomes ``mindspore.int64``; other uses as a type (``isinstance``) are
        flagged (compare ``x.dtype``); ``torch.Tensor`` as a type is ``mindspore.Tensor``
        (DAT001).
    """,
    seed=SEED,
    reference=REF,
    example="""
        import torch
        import numpy as np
        ids = torch.LongTensor([3, 1, 2])
        weights = torch.FloatTensor([[0.5, 1.5]])
        points = torch.Tensor(np.linspace(0, 1, 4)).unsqueeze(0)
        tokens = 0
        for line in ["a b", "c"]:
            tokens += len(line.split())
        buffer = torch.LongTensor(tokens)
        for i in range(tokens):
            buffer[i] = 7 * i
        as_long = torch.tensor([1.7, -2.2]).type(torch.LongTensor)
    """,
)


def _tensor_mapped(site):
    """``map(torch.tensor, (x_train, y_train, ...))`` (the nn tutorial): each item is data
    (an array or a list), which ``mindspore.Tensor`` turns into a tensor of the same dtype;
    elsewhere a reference is flagged (arguments given later are not ported)."""
    calls = site.enclosing_calls
    call = calls[-1] if calls else None
    if not (call is not None and isinstance(call.func, cst.Name) and call.func.value == "map"
            and len(call.args) >= 2 and call.args[0].value is site.original and call.args[0].keyword is None):
        return None
    new = site.ref("mindspore.Tensor")
    site.edit("DAT001", new, detail="map(torch.tensor, ...) -> map(mindspore.Tensor, ...): each item is data")
    return new


def _complex_literal(site):
    """``torch.tensor([1 + 2j, 3j])`` without ``dtype=``: PyTorch builds complex64 (the
    complex type of its float32 default), ``mindspore.Tensor`` complex128 from Python
    complex numbers; the port writes ``dtype=mindspore.complex64``. Other calls get the
    plain port."""
    import libcst.matchers as m

    new = site.apply(func=site.ref("mindspore.Tensor"))
    data = site.arg("data") if site.bound() is not None else None
    if (data is None or site.arg("dtype") is not None or not new.args
            or not m.findall(data.value, m.Imaginary())):
        site.edit("DAT001", new, detail=site.describe("torch.tensor -> mindspore.Tensor"))
        return new
    new = new.with_changes(args=[*new.args[:-1], new.args[-1].with_changes(
        comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
        cst.Arg(keyword=cst.Name("dtype"), value=site.ref("mindspore.complex64"),
                equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                                      whitespace_after=cst.SimpleWhitespace("")))])
    site.edit("DAT001", new, detail="complex literal data: dtype=mindspore.complex64 written out (PyTorch's "
              "default complex type; MindSpore makes complex128 from Python complex numbers)")
    return new


api("torch.tensor", "mindspore.Tensor", rule="DAT001", sig=("data",),
    rename={"data": "input_data"}, ms_sig=("input_data", "dtype"),
    drop={"device": DEVICE_ARG_RULE, "pin_memory": DEVICE_ARG_RULE, "requires_grad": "DAT001"},
    as_value=_tensor_mapped, handler=_complex_literal, returns="tensor")
api("torch.from_numpy", "mindspore.from_numpy", rule="DAT002", returns="tensor")


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
# the type of the dtype objects (``dt: torch.dtype``, ``isinstance(x, torch.dtype)``)
api("torch.dtype", "mindspore.Type", rule="DAT005", attr=True, returns=None)

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
    ``mindspore.Tensor``. Called, it is PyTorch's legacy constructor, the float32 typed
    constructor (DAT007): float32 from data, an uninitialised tensor from a shape."""
    if isinstance(site.original, cst.Call):
        return _typed_tensor(site)
    new = site.ref("mindspore.Tensor")
    site.edit("DAT001", new, detail="torch.Tensor (the type) -> mindspore.Tensor")
    return new


# Called, it makes a tensor (DAT007); read as a type, the kind is not looked at.
api("torch.Tensor", "mindspore.Tensor", rule="DAT001", attr=True, handler=_tensor_type, returns="tensor")


# ----------------------------------------------------------------------------- typed constructors

TYPED_TENSORS = {
    "Tensor": "float32", "FloatTensor": "float32", "DoubleTensor": "float64", "HalfTensor": "float16",
    "BFloat16Tensor": "bfloat16", "LongTensor": "int64", "IntTensor": "int32",
    "ShortTensor": "int16", "CharTensor": "int8", "ByteTensor": "uint8", "BoolTensor": "bool_",
}
_SIZE, _DATA = "size", "data"


def _int_like(node) -> bool:
    if isinstance(node, cst.Integer):
        return True
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value in ("len", "int"):
        return True
    if isinstance(node, cst.BinaryOperation) and not isinstance(node.operator, cst.Divide):
        return _int_like(node.left) and _int_like(node.right)
    return isinstance(node, cst.UnaryOperation) and _int_like(node.expression)


def _data_like(node) -> bool:
    if isinstance(node, (cst.List, cst.Tuple, cst.ListComp)):
        return True
    if isinstance(node, cst.Subscript):  # a slice of something (``data[:-1]``) is a sequence
        return any(isinstance(e.slice, cst.Slice) for e in node.slice)
    if not isinstance(node, cst.Call):
        return False
    func = build.code(node.func).strip()
    return func in ("list", "tuple", "sorted") or func.startswith(("np.", "numpy."))


def _small(small, name: str, found: list) -> None:
    if isinstance(small, cst.Assign) and any(
            isinstance(t.target, cst.Name) and t.target.value == name for t in small.targets):
        found.append(_SIZE if _int_like(small.value) else _DATA if _data_like(small.value) else None)
    elif isinstance(small, cst.AugAssign) and isinstance(small.target, cst.Name) and small.target.value == name:
        if not (found and found[-1] == _SIZE and _int_like(small.value)):
            found.append(None)  # ``n += 1`` keeps an int an int; anything else: unknown


def _assigned(stmt, name: str, found: list) -> None:
    """What ``stmt`` (and the blocks inside it, in order) assigns to ``name``: appends
    _SIZE, _DATA or None per assignment."""
    if isinstance(stmt, cst.SimpleStatementLine):
        for small in stmt.body:
            _small(small, name, found)
        return
    if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
        return
    body = getattr(stmt, "body", None)
    if isinstance(body, cst.BaseSuite):
        for inner in body.body:
            if isinstance(inner, cst.BaseSmallStatement):
                _small(inner, name, found)
            else:
                _assigned(inner, name, found)
    for handler in getattr(stmt, "handlers", ()):
        _assigned(handler, name, found)
    for part in ("orelse", "finalbody"):
        inner = getattr(stmt, part, None)
        if inner is not None:
            _assigned(inner, name, found)


def _name_is(site, name: str):
    """_SIZE / _DATA: what ``name`` was last assigned before this statement in the
    enclosing blocks (innermost first); None when that cannot be seen."""
    for body, index in reversed(site.blocks):
        found: list = []
        for stmt in body[:max(index, 0)]:
            _assigned(stmt, name, found)
        if found:
            return found[-1]
    return None


def _in_type_call(site) -> bool:
    calls = site.enclosing_calls
    if not calls:
        return False
    call = calls[-1]
    return (isinstance(call.func, cst.Attribute) and call.func.attr.value == "type"
            and any(a.value is site.original for a in call.args))


def _mapped_over_data(site) -> bool:
    """``map(torch.LongTensor, zip(*batch))``: the typed constructor applied to each tuple
    ``zip`` yields (or each list of a list display / comprehension): data, never a size."""
    calls = site.enclosing_calls
    if not calls:
        return False
    call = calls[-1]
    if not (isinstance(call.func, cst.Name) and call.func.value == "map" and len(call.args) == 2
            and call.args[0].value is site.original and call.args[0].keyword is None):
        return False
    items = call.args[1].value
    if isinstance(items, cst.Call) and isinstance(items.func, cst.Name) and items.func.value == "zip":
        return True
    if isinstance(items, (cst.List, cst.Tuple)):
        return bool(items.elements) and all(isinstance(e.value, (cst.List, cst.Tuple)) for e in items.elements)
    return isinstance(items, cst.ListComp) and isinstance(items.elt, (cst.List, cst.Tuple))


def _typed_tensor(site):
    name = site.api.rsplit(".", 1)[-1]
    dtype = TYPED_TENSORS[name]
    if not isinstance(site.original, cst.Call):
        if _in_type_call(site):
            new = site.ref(f"mindspore.{dtype}")
            site.edit("DAT007", new, detail=f"x.type(torch.{name}) -> x.type(mindspore.{dtype})")
            return new
        if _mapped_over_data(site):
            tensor, dt = site.code(site.ref("mindspore.Tensor")), site.code(site.ref(f"mindspore.{dtype}"))
            new = site.parse(f"lambda data: {tensor}(data, {dt})")
            site.edit("DAT007", new, detail=f"map(torch.{name}, zip(...)) -> map(lambda data: "
                                            f"mindspore.Tensor(data, mindspore.{dtype}), ...): each item is data")
            return new
        site.finding("DAT007", f"torch.{name} used as a type: MindSpore has one Tensor class; "
                     f"compare x.dtype == mindspore.{dtype}", comment=f"torch.{name} as a type")
        return site.torch_ref(site.api)  # kept PyTorch, with its import
    args = list(site.updated.args)
    device = [a for a in args if a.keyword is not None and a.keyword.value == "device"]
    if device:  # every MindSpore tensor lives on the process's device target
        site.edit(DEVICE_ARG_RULE, None, detail=f"device={site.code(device[0].value).strip()} dropped")
        args = [a for a in args if a not in device]
    if any(a.keyword is not None or a.star for a in args):
        site.finding("DAT007", f"torch.{name}(...) with keyword or * arguments: write "
                     f"mindspore.Tensor(data, mindspore.{dtype}) or mindspore.ops.zeros(shape, "
                     f"mindspore.{dtype})", comment=f"torch.{name}(...) not ported")
        return None
    originals = [a for a in site.original.args if a.keyword is None or a.keyword.value != "device"]
    kind = _SIZE
    if len(args) == 1:
        arg = originals[0].value
        if _int_like(arg):
            kind = _SIZE
        elif _data_like(arg) or site.kind_of(arg) == "tensor":
            kind = _DATA
        elif isinstance(arg, cst.Name):
            kind = _name_is(site, arg.value)
        else:
            kind = None
    dt = site.code(site.ref(f"mindspore.{dtype}"))
    if kind == _SIZE:
        zeros = site.code(site.ref("mindspore.ops.zeros"))
        sizes = [site.code(a.value).strip() for a in args]
        shape = sizes[0] if len(sizes) == 1 else f"({', '.join(sizes)})" if sizes else "0"
        new = site.parse(f"{zeros}({shape}, {dt})")
        site.edit("DAT007", new, detail=f"torch.{name}(sizes) -> ops.zeros (uninitialised in PyTorch)")
        if sizes:  # torch.Tensor() is empty: nothing uninitialised
            site.finding("DAT007", f"torch.{name}({', '.join(sizes)}) is uninitialised memory in PyTorch (any "
                         "values); the port fills it with zeros: values read before they are written differ",
                         comment=f"torch.{name}(sizes) was uninitialised in PyTorch; zeros here")
        return new
    tensor = site.code(site.ref("mindspore.Tensor"))
    new = site.parse(f"{tensor}({site.code(args[0].value).strip()}, {dt})")
    site.edit("DAT007", new, detail=f"torch.{name}(data) -> mindspore.Tensor(data, mindspore.{dtype})")
    if kind is None:
        site.finding("DAT007", f"torch.{name}(n) with an int n is an uninitialised tensor of n "
                     f"elements, with data a tensor of it: ported as data; if it is a size write "
                     f"mindspore.ops.zeros(n, mindspore.{dtype})", comment=f"torch.{name}(x): x taken as data")
    return new


for _name in TYPED_TENSORS:
    if _name != "Tensor":  # torch.Tensor is also the type (DAT001, above)
        api(f"torch.{_name}", rule="DAT007", attr=True, handler=_typed_tensor, returns="tensor")
