"""Turning PyTorch's own test samples into small PyTorch snippets.

PyTorch ships its operator test database with the wheel:
``torch.testing._internal.common_methods_invocations.op_db`` (an ``OpInfo`` per
operator, with ``sample_inputs(device, dtype)``) and
``torch.testing._internal.common_modules.module_db`` (a ``ModuleInfo`` per layer, with
constructor and forward inputs). Importing them needs the ``expecttest`` package.

A sample becomes the code a user would write: tensors are bound to names ``a0``,
``a1``... (their values travel separately to each framework), everything else is
written as a literal. Samples holding values with no literal spelling (generators,
slices, callables, complex numbers) are skipped.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Optional

#: dtypes each entry is verified on, where the operator supports them
DTYPES = ("float32", "float64", "int64", "bool")
#: samples taken per operator and dtype: enough to cover the argument patterns
#: (dim=, keepdim=, broadcasting, scalars) while keeping the full run short
PER_DTYPE = 4
#: how many of an OpInfo's samples are looked at for argument patterns the first ones missed
SCAN_LIMIT = 40

FAMILY_PREFIXES = {
    "nn.functional.": "torch.nn.functional.",
    "linalg.": "torch.linalg.",
    "special.": "torch.special.",
    "fft.": "torch.fft.",
}


class Unwritable(Exception):
    """A sample value that has no literal spelling in a snippet."""


@dataclass
class Snippet:
    """``code`` calls the API on inputs ``a0``, ``a1``... given in ``tensors``.

    ``pattern`` is the call's argument pattern: number of positional arguments and the
    keyword names (the receiver of a method is not counted)."""

    code: str
    tensors: dict = field(default_factory=dict)
    positional: int = 0
    keywords: tuple = ()
    dtype: str = ""
    #: a tensor argument is 0-d (a scalar tensor)
    zero_dim: bool = False
    #: a tensor argument has no elements (``(5, 0) @ (0, 10)``)
    empty: bool = False


class _Writer:
    def __init__(self) -> None:
        self.tensors: dict[str, Any] = {}

    def value(self, v) -> str:
        import torch

        if isinstance(v, torch.Tensor):
            if v.is_complex() or v.layout != torch.strided or v.dtype in (torch.bfloat16, torch.float16):
                raise Unwritable("tensor kind")
            name = f"a{len(self.tensors)}"
            self.tensors[name] = v
            return name
        if isinstance(v, bool) or v is None:
            return repr(v)
        if isinstance(v, int):
            return repr(v)
        if isinstance(v, float):
            if math.isnan(v):
                return "float('nan')"
            if math.isinf(v):
                return "float('inf')" if v > 0 else "-float('inf')"
            return repr(v)
        if isinstance(v, str):
            return repr(v)
        if isinstance(v, torch.dtype):
            name = str(v).split(".")[-1]
            if name not in ("float32", "float64", "int64", "int32", "int16", "int8", "uint8", "bool", "float16"):
                raise Unwritable("dtype")
            return f"torch.{name}"
        if isinstance(v, torch.Size):
            return repr(tuple(v))
        if isinstance(v, slice):
            return f"slice({self.value(v.start)}, {self.value(v.stop)}, {self.value(v.step)})"
        if v is Ellipsis:
            return "..."
        if isinstance(v, (tuple, list)):
            inner = ", ".join(self.value(x) for x in v)
            if isinstance(v, tuple):
                return f"({inner},)" if len(v) == 1 else f"({inner})"
            return f"[{inner}]"
        raise Unwritable(type(v).__name__)


def torch_name(op) -> Optional[str]:
    """The public PyTorch function an OpInfo tests (``torch.sin``,
    ``torch.nn.functional.pad``), or None for private/internal ones."""
    name = op.name
    if name.startswith("_") or op.variant_test_name not in ("", "default"):
        return None
    for prefix, full in FAMILY_PREFIXES.items():
        if name.startswith(prefix):
            return full + name[len(prefix):]
    if "." in name:
        return None
    return f"torch.{name}"


def _settable_backend_flags() -> None:
    """Importing PyTorch's test samples (``common_utils``) forbids assigning
    ``torch.backends.cudnn`` flags outside its ``flags()`` context manager for the rest of
    the process; the code msmagic ports afterwards in that process (a seeding cell's
    ``torch.backends.cudnn.deterministic = True``) assigns them as in any notebook."""
    import torch.backends

    # the flag lives in the globals of torch/backends/__init__.py (torch.backends itself
    # is replaced by a module object of its own)
    torch.backends.flags_frozen.__globals__["__allow_nonbracketed_mutation_flag"] = True


def op_index() -> dict:
    """key (``torch.sin``, ``Tensor.sin``, ``Tensor.sin_``) -> (OpInfo, form)."""
    import torch
    from torch.testing._internal.common_methods_invocations import op_db

    _settable_backend_flags()

    out: dict = {}
    for op in op_db:
        fn = torch_name(op)
        if fn is None:
            continue
        if fn.count(".") == 1 and not callable(getattr(torch, fn.split(".")[1], None)):
            fn = None  # op "double" is Tensor.double; torch.double is a dtype
        else:
            out.setdefault(fn, (op, "function"))
        for alias in getattr(op, "aliases", ()) or ():
            aname = getattr(alias, "name", "")
            if not fn or not aname or aname.startswith("_"):
                continue
            full = None
            if "." not in aname:
                full = f"torch.{aname}"
            else:  # special.expit, nn.functional.sigmoid, linalg.det
                for prefix, fam in FAMILY_PREFIXES.items():
                    if aname.startswith(prefix):
                        full = fam + aname[len(prefix):]
            if full:
                out.setdefault(full, (op, "function"))
        base = op.name
        if "." not in base:
            if op.method_variant is not None:
                out.setdefault(f"Tensor.{base}", (op, "method"))
            if op.inplace_variant is not None and not base.endswith("_"):
                out.setdefault(f"Tensor.{base}_", (op, "inplace"))
                if callable(getattr(torch, base + "_", None)):  # torch.abs_(x): the function form
                    out.setdefault(f"torch.{base}_", (op, "function_inplace"))
            # aliases (arccos for acos, multiply for mul) share the op's samples
            for alias in getattr(op, "aliases", ()) or ():
                aname = getattr(alias, "name", "")
                if not aname or "." in aname or aname.startswith("_"):
                    continue
                if op.method_variant is not None and hasattr(torch.Tensor, aname):
                    out.setdefault(f"Tensor.{aname}", (op, "method"))
                if op.inplace_variant is not None and hasattr(torch.Tensor, aname + "_"):
                    out.setdefault(f"Tensor.{aname}_", (op, "inplace"))
                if op.inplace_variant is not None and callable(getattr(torch, aname + "_", None)):
                    out.setdefault(f"torch.{aname}_", (op, "function_inplace"))
    return out


def generic_index(keys) -> dict:
    """APIs no OpInfo samples: key -> form, for the generic samples below."""
    import torch

    out = {}
    for key in keys:
        name = key.rsplit(".", 1)[-1]
        if key.startswith("Tensor."):
            if hasattr(torch.Tensor, name) and callable(getattr(torch.Tensor, name)):
                out[key] = "inplace" if name.endswith("_") and not name.endswith("__") else "method"
        elif key.count(".") == 1 and callable(getattr(torch, name, None)) and not name[:1].isupper() \
                and not isinstance(getattr(torch, name), type):
            out[key] = "function"
    return out


def generic_snippets(key: str, form: str):
    """A few plain calls on ordinary tensors (one and two inputs, a scalar second
    argument) for APIs PyTorch's database has no samples for. Weaker than op_db: the
    record lists exactly these patterns, and other calls are flagged at port time."""
    import torch

    g = torch.Generator().manual_seed(0)
    shapes = [(3, 4)]
    made = {
        "float32": lambda: torch.rand(*shapes[0], generator=g) * 0.8 + 0.1,
        "float64": lambda: (torch.rand(*shapes[0], generator=g) * 0.8 + 0.1).double(),
        "int64": lambda: torch.randint(1, 6, shapes[0], generator=g),
    }
    name = key.rsplit(".", 1)[-1]
    for dtype, make in made.items():
        for nargs in (0, 1, "scalar"):
            x, y = make(), make()
            tensors = {"a0": x}
            if nargs == 1:
                tensors["a1"] = y
            extra = {0: [], 1: ["a1"], "scalar": ["2"]}[nargs]
            if form == "function":
                code = f"out = {key}({', '.join(['a0'] + extra)})"
                positional = 1 + len(extra)
            elif form == "method":
                code = f"out = a0.{name}({', '.join(extra)})"
                positional = len(extra)
            else:
                code = f"a0.{name}({', '.join(extra)})\nout = a0"
                positional = len(extra)
            yield Snippet(code=code, tensors=tensors, positional=positional, dtype=dtype)


def snippets_for(op, form: str, key: str, per_dtype: int = PER_DTYPE):
    """Snippets calling ``key`` on the OpInfo's samples, per supported dtype."""
    import torch

    supported = {str(d).split(".")[-1] for d in op.supported_dtypes("cpu")}
    for dtype in DTYPES:
        if dtype not in supported:
            continue
        try:
            samples = op.sample_inputs("cpu", getattr(torch, dtype), requires_grad=False)
            taken = extra = 0
            # argument patterns some non-0-d, non-empty sample has exercised: a default that
            # differs between the frameworks (a reduction of 'none' against 'mean') is
            # invisible on a 0-d input, so a pattern only 0-d samples showed is sought further
            shown: set = set()
            for n, sample in enumerate(samples):
                if (taken >= per_dtype and extra >= per_dtype) or n >= SCAN_LIMIT:
                    break
                snippet = _snippet(sample, form, key)
                if snippet is None:
                    continue
                pattern = (snippet.positional, snippet.keywords)
                full = not (snippet.zero_dim or snippet.empty)
                if taken < per_dtype:
                    taken += 1
                elif full and pattern not in shown:
                    extra += 1
                else:
                    continue
                if full:
                    shown.add(pattern)
                snippet.dtype = dtype
                yield snippet
        except Exception:  # a sample generator that fails on this build
            continue


def _snippet(sample, form: str, key: str) -> Optional[Snippet]:
    w = _Writer()
    try:
        inp = w.value(sample.input)
        args = [w.value(a) for a in sample.args]
        kwargs = [(k, w.value(v)) for k, v in sample.kwargs.items()]
    except Unwritable:
        return None
    call_args = ", ".join(args + [f"{k}={v}" for k, v in kwargs])
    name = key.rsplit(".", 1)[-1]
    if form in ("function", "function_inplace"):
        full = ", ".join([inp] + args + [f"{k}={v}" for k, v in kwargs])
        code = f"out = {key}({full})"
        if form == "function_inplace":  # torch.abs_(a0): the tensor updated is the result
            if not inp.startswith("a") or not inp[1:].isdigit():
                return None
            code = f"{key}({full})\nout = {inp}"
        positional = 1 + len(args)
    else:
        if not inp.startswith("a") or not inp[1:].isdigit():
            return None  # a method needs a tensor receiver
        if form == "method":
            code = f"out = {inp}.{name}({call_args})"
        else:
            code = f"{inp}.{name}({call_args})\nout = {inp}"
        positional = len(args)
    return Snippet(code=code, tensors=w.tensors, positional=positional,
                   keywords=tuple(sorted(k for k, _ in kwargs)),
                   zero_dim=_is_zero_dim(sample.input), empty=_is_empty(sample))


def _is_zero_dim(value) -> bool:
    import torch

    return isinstance(value, torch.Tensor) and value.dim() == 0


def _is_empty(sample) -> bool:
    """Does the sample's input or a positional argument have no elements?"""
    import torch

    def flat(values):  # a list of tensors (linalg.multi_dot's input) counts by its elements
        for v in values:
            if isinstance(v, (list, tuple)):
                yield from flat(v)
            else:
                yield v

    return any(isinstance(v, torch.Tensor) and v.numel() == 0 for v in flat((sample.input, *sample.args)))


def module_index() -> dict:
    """``torch.nn.Linear`` -> ModuleInfo."""
    from torch.testing._internal.common_modules import module_db

    _settable_backend_flags()

    out = {}
    for info in module_db:
        cls = info.module_cls
        if cls.__module__.startswith("torch.nn"):
            out.setdefault(f"torch.nn.{cls.__name__}", info)
    return out


def module_snippets(info, key: str, per_dtype: int = PER_DTYPE):
    """(snippet constructing ``layer`` and calling it into ``out``) per sample."""
    import torch

    for dtype in ("float32",):  # layers are built in float32, as notebooks build them
        try:
            inputs = info.module_inputs_func(info, device="cpu", dtype=getattr(torch, dtype),
                                             requires_grad=False, training=False)
        except Exception:
            continue
        taken = 0
        for mi in inputs:
            if taken >= per_dtype:
                break
            if mi.forward_input is None:
                continue
            w = _Writer()
            try:
                ctor = [w.value(a) for a in mi.constructor_input.args]
                ctor += [f"{k}={w.value(v)}" for k, v in mi.constructor_input.kwargs.items()]
                n_ctor = len(w.tensors)
                fwd = [w.value(a) for a in mi.forward_input.args]
                fwd += [f"{k}={w.value(v)}" for k, v in mi.forward_input.kwargs.items()]
            except Unwritable:
                continue
            if n_ctor:
                continue  # tensors in the constructor (weights): not a notebook shape
            if any(k in mi.constructor_input.kwargs for k in ("device", "dtype")):
                continue
            code = f"layer = {key}({', '.join(ctor)})\nout = layer({', '.join(fwd)})"
            taken += 1
            yield Snippet(code=code, tensors=w.tensors,
                          positional=len(mi.constructor_input.args),
                          keywords=tuple(sorted(mi.constructor_input.kwargs)), dtype=dtype,
                          zero_dim=any(_is_zero_dim(a) for a in mi.forward_input.args))


#: Python operators on tensors: msmagic keeps them as written, so MindSpore's operator
#: must compute what PyTorch's does. key -> (op_db name whose samples are used, template)
OPERATORS = {
    "Tensor.__add__": ("add", "{x} + {0}"), "Tensor.__sub__": ("sub", "{x} - {0}"),
    "Tensor.__mul__": ("mul", "{x} * {0}"), "Tensor.__truediv__": ("div", "{x} / {0}"),
    "Tensor.__floordiv__": ("floor_divide", "{x} // {0}"), "Tensor.__mod__": ("remainder", "{x} % {0}"),
    "Tensor.__pow__": ("pow", "{x} ** {0}"), "Tensor.__matmul__": ("matmul", "{x} @ {0}"),
    "Tensor.__eq__": ("eq", "{x} == {0}"), "Tensor.__ne__": ("ne", "{x} != {0}"),
    "Tensor.__lt__": ("lt", "{x} < {0}"), "Tensor.__le__": ("le", "{x} <= {0}"),
    "Tensor.__gt__": ("gt", "{x} > {0}"), "Tensor.__ge__": ("ge", "{x} >= {0}"),
    "Tensor.__and__": ("bitwise_and", "{x} & {0}"), "Tensor.__or__": ("bitwise_or", "{x} | {0}"),
    "Tensor.__xor__": ("bitwise_xor", "{x} ^ {0}"), "Tensor.__neg__": ("neg", "-{x}"),
    "Tensor.__abs__": ("abs", "abs({x})"), "Tensor.__invert__": ("bitwise_not", "~{x}"),
    "Tensor.__radd__": ("__radd__", "{0} + {x}"), "Tensor.__rsub__": ("__rsub__", "{0} - {x}"),
    "Tensor.__rmul__": ("__rmul__", "{0} * {x}"), "Tensor.__rtruediv__": ("__rdiv__", "{0} / {x}"),
    "Tensor.__rmod__": ("__rmod__", "{0} % {x}"), "Tensor.__rpow__": ("__rpow__", "{0} ** {x}"),
    "Tensor.__rmatmul__": ("__rmatmul__", "{0} @ {x}"), "Tensor.__rand__": ("__rand__", "{0} & {x}"),
    "Tensor.__ror__": ("__ror__", "{0} | {x}"), "Tensor.__rxor__": ("__rxor__", "{0} ^ {x}"),
    "Tensor.__getitem__": ("__getitem__", "{x}[{0}]"), "Tensor.__pos__": ("positive", "+{x}"),
}


def operator_snippets(key: str, per_dtype: int = PER_DTYPE):
    import torch
    from torch.testing._internal.common_methods_invocations import op_db

    _settable_backend_flags()
    base, template = OPERATORS[key]
    op = next(o for o in op_db if o.name == base and o.variant_test_name in ("", "default", "no_rounding_mode"))
    supported = {str(d).split(".")[-1] for d in op.supported_dtypes("cpu")}
    nargs = template.count("{0}")
    for dtype in DTYPES:
        if dtype not in supported:
            continue
        taken = 0
        try:
            for sample in op.sample_inputs("cpu", getattr(torch, dtype), requires_grad=False):
                if taken >= per_dtype:
                    break
                if sample.kwargs or len(sample.args) != nargs:
                    continue
                w = _Writer()
                try:
                    x = w.value(sample.input)
                    args = [w.value(a) for a in sample.args]
                except Unwritable:
                    continue
                code = "out = " + template.format(*args, x=x)
                taken += 1
                yield Snippet(code=code, tensors=w.tensors, positional=nargs, dtype=dtype,
                              zero_dim=_is_zero_dim(sample.input), empty=_is_empty(sample))
        except Exception:
            continue
