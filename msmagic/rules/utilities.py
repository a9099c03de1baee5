"""Utilities: functional autograd (jacobian, hessian, vjp, jvp), small tensor helpers
(allclose, bucketize, as_tensor), module constants, print options, process settings,
ONNX export and packed sequences."""

import libcst as cst

from msmagic.engine.spec import TENSOR, api, statement_hook
from msmagic.rules.registry import register

GROUP = "Utilities"
SEED = "seeds/002 API Comparison › functional APIs"
REF = "r2.4.10/api_mapping/pytorch_api_mapping.md"
AF = "torch.autograd.functional"

register(
    "UTL001",
    "jacobian/hessian/vjp/jvp become mindspore.jacrev/jacfwd/vjp/jvp",
    group=GROUP,
    why="""
        MindSpore differentiates functions the same way: ``jacobian(f, x)`` is
        ``mindspore.jacrev(f)(x)`` (``jacfwd`` for ``strategy="forward-mode"``), and for a
        tuple of inputs ``mindspore.jacrev(f, grad_position=(0, 1, ...))(*inputs)`` returns
        the tuple of Jacobians PyTorch returns. ``hessian(f, x)`` is
        ``mindspore.jacfwd(mindspore.jacrev(f))(x)``. ``jvp(f, x, v)`` returns the same
        ``(output, jvp)`` pair as ``mindspore.jvp(f, x, v)``. ``mindspore.vjp(f, x)``
        returns the output and a function of ``v`` giving a tuple of gradients, so
        ``vjp(f, x, v)`` becomes ``(lambda out, fn: (out, fn(v)[0]))(*mindspore.vjp(f, x))``.
        ``create_graph``, ``strict`` and ``vectorize`` only tune PyTorch's tape and are
        dropped; inputs the port cannot see as one tensor or a tuple literal, and ``vjp``
        without ``v``, are flagged.
    """,
    seed=SEED,
    reference=REF,
    installed_note="""
        Verified on 2.10: jacrev, jacfwd, jacfwd(jacrev) and jvp give PyTorch's values;
        mindspore.vjp(f, x)[1](v) returns a 1-tuple.
    """,
    example="""
        import torch
        from torch.autograd.functional import jacobian, hessian, jvp, vjp
        x = torch.tensor([1.0, 2.0, 3.0])
        v = torch.tensor([1.0, 0.5, -1.0])
        J = jacobian(torch.sin, x)
        H = hessian(torch.sum, x)
        out, jv = jvp(torch.exp, x, v)
        out2, vj = vjp(torch.sin, x, v)
    """,
)

register(
    "UTL002",
    "allclose via ops.isclose; bucketize cast to int64; as_tensor",
    group=GROUP,
    why="""
        ``torch.allclose(a, b, rtol, atol, equal_nan)`` returns a Python bool; MindSpore has
        no ``ops.allclose`` on 2.10, and ``ops.isclose`` takes the same parameters, so the
        port is ``bool(ops.isclose(a, b, ...).all())``. ``ops.bucketize(input, boundaries,
        right=)`` matches ``torch.bucketize`` but returns int32: the port casts to int64
        unless ``out_int32=True``. ``torch.as_tensor(data, dtype)`` becomes ``mindspore.tensor(data, dtype)``
        (a copy: MindSpore never shares a NumPy array's memory here); ``device=`` is
        dropped.
    """,
    seed=SEED,
    reference=REF,
    example="""
        import torch
        a = torch.tensor([1.0, 2.0, 3.0])
        same = torch.allclose(a, a + 1e-7)
        near = torch.allclose(a, a + 0.1, atol=0.2)
        b = torch.bucketize(torch.tensor([0.5, 2.0, 3.5]), a, right=True)
        c = torch.as_tensor([1.0, 2.0], dtype=torch.float64)
    """,
)


def _kw(name, value):
    return cst.Arg(keyword=cst.Name(name), value=value,
                   equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                                         whitespace_after=cst.SimpleWhitespace("")))


def _args(*args):
    out = []
    for i, a in enumerate(args):
        last = i == len(args) - 1
        out.append(a if last else a.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))))
    return out


_TAPE = ("create_graph", "strict", "vectorize", "outer_jacobian_strategy")


def _bind(site, name):
    bound = site.bound()
    if bound is None:
        site.finding("UTL001", f"{name}(*args) cannot be ported", comment="*args not ported")
        return None
    args = {}
    for n, a, _ in bound:
        if n in _TAPE:
            site.edit("UTL001", None, detail=f"{n}= dropped")
            continue
        args[n] = a
    return args


def _inputs(site, arg):
    """("tensor", node) or ("tuple", [nodes]) or None (flagged)."""
    value = arg.value
    if isinstance(value, (cst.Tuple, cst.List)) and not any(isinstance(e, cst.StarredElement)
                                                            for e in value.elements):
        return "tuple", [e.value for e in value.elements]
    original = site.original.args[list(site.updated.args).index(arg)].value
    if site.kind_of(original) == TENSOR:
        return "tensor", value
    site.finding("UTL001", "inputs must be one tensor or a tuple literal of tensors for the port "
                 "to choose between f(x) and f(*inputs)", comment="inputs not known as tensor/tuple")
    return None


def _differentiate(site, transform: str, fn, inputs):
    kind, nodes = inputs
    if kind == "tensor":
        return cst.Call(func=cst.Call(func=site.ref(transform), args=[cst.Arg(fn)]), args=[cst.Arg(nodes)])
    positions = cst.Tuple([cst.Element(cst.Integer(str(i))) for i in range(len(nodes))]
                          if len(nodes) != 1 else [cst.Element(cst.Integer("0"), comma=cst.Comma())])
    inner = cst.Call(func=site.ref(transform), args=_args(cst.Arg(fn), _kw("grad_position", positions)))
    return cst.Call(func=inner, args=_args(*[cst.Arg(n) for n in nodes]))


def _jacobian(site):
    args = _bind(site, "jacobian")
    if args is None or "func" not in args or "inputs" not in args:
        return None
    inputs = _inputs(site, args["inputs"])
    if inputs is None:
        return None
    strategy = args.get("strategy")
    mode = site.literal(strategy.value, None) if strategy is not None else "reverse-mode"
    if mode not in ("reverse-mode", "forward-mode"):
        site.finding("UTL001", "strategy= is not a literal", comment="strategy not known")
        return None
    target = "mindspore.jacrev" if mode == "reverse-mode" else "mindspore.jacfwd"
    new = _differentiate(site, target, args["func"].value, inputs)
    site.edit("UTL001", new, detail=f"jacobian -> {target}")
    return new


def _hessian(site):
    args = _bind(site, "hessian")
    if args is None or "func" not in args or "inputs" not in args:
        return None
    inputs = _inputs(site, args["inputs"])
    if inputs is None:
        return None
    if inputs[0] != "tensor":
        site.finding("UTL001", "hessian of several inputs (a tuple of tuples) is not ported",
                     comment="hessian of several inputs not ported")
        return None
    inner = cst.Call(func=site.ref("mindspore.jacrev"), args=[cst.Arg(args["func"].value)])
    new = cst.Call(func=cst.Call(func=site.ref("mindspore.jacfwd"), args=[cst.Arg(inner)]),
                   args=[cst.Arg(inputs[1])])
    site.edit("UTL001", new, detail="hessian -> mindspore.jacfwd(mindspore.jacrev(f))")
    return new


def _jvp(site):
    args = _bind(site, "jvp")
    if args is None or "func" not in args or "inputs" not in args or "v" not in args:
        if args is not None:
            site.finding("UTL001", "jvp without v is not ported", comment="pass v explicitly")
        return None
    new = cst.Call(func=site.ref("mindspore.jvp"),
                   args=_args(cst.Arg(args["func"].value), cst.Arg(args["inputs"].value),
                              cst.Arg(args["v"].value)))
    site.edit("UTL001", new, detail="jvp -> mindspore.jvp")
    return new


def _vjp(site):
    args = _bind(site, "vjp")
    if args is None:
        return None
    if "func" not in args or "inputs" not in args or "v" not in args:
        site.finding("UTL001", "vjp without v is not ported", comment="pass v explicitly")
        return None
    inputs = _inputs(site, args["inputs"])
    if inputs is None:
        return None
    kind, nodes = inputs
    ms_vjp_args = [cst.Arg(args["func"].value)] + ([cst.Arg(nodes)] if kind == "tensor"
                                                   else [cst.Arg(n) for n in nodes])
    call = cst.Call(func=site.ref("mindspore.vjp"), args=_args(*ms_vjp_args))
    v = site.code(args["v"].value).strip()
    pick = "[0]" if kind == "tensor" else ""
    lam = site.parse(f"(lambda _out, _fn: (_out, _fn({v}){pick}))")
    new = cst.Call(func=lam, args=[cst.Arg(call, star="*")])
    site.edit("UTL001", new, detail="vjp -> mindspore.vjp; (out, fn) -> (out, fn(v))")
    return new


for _name, _sig, _handler in (
    ("jacobian", ("func", "inputs", "create_graph", "strict", "vectorize", "strategy"), _jacobian),
    ("hessian", ("func", "inputs", "create_graph", "strict", "vectorize",
                 "outer_jacobian_strategy"), _hessian),
    ("jvp", ("func", "inputs", "v", "create_graph", "strict"), _jvp),
    ("vjp", ("func", "inputs", "v", "create_graph", "strict"), _vjp),
):
    api(f"{AF}.{_name}", rule="UTL001", sig=_sig, handler=_handler)


# --- allclose, bucketize, as_tensor (UTL002)

def _allclose(site):
    bound = site.bound()
    if bound is None:
        return None
    new = cst.Call(func=site.ref("mindspore.ops.isclose"), args=site.updated.args)
    new = cst.Call(func=cst.Name("bool"),
                   args=[cst.Arg(cst.Call(func=cst.Attribute(value=new, attr=cst.Name("all"))))])
    site.edit("UTL002", new, detail="allclose -> bool(ops.isclose(...).all())")
    return new


api("torch.allclose", rule="UTL002", sig=("input", "other", "rtol", "atol", "equal_nan"),
    handler=_allclose, returns="bool")


def _bucketize(site):
    bound = site.bound()
    if bound is None:
        return None
    out32 = site.arg("out_int32")
    call = site.updated
    if out32 is not None:
        call = call.with_changes(args=[a for a in call.args if a is not out32])
        call = call.with_changes(args=[a.with_changes(comma=cst.MaybeSentinel.DEFAULT)
                                       if i == len(call.args) - 1 else a
                                       for i, a in enumerate(call.args)])
    new = call.with_changes(func=site.ref("mindspore.ops.bucketize"))
    if out32 is not None:
        flag = site.literal(out32.value, None)
        if flag is None:
            site.finding("UTL002", "out_int32= is not a literal", comment="out_int32 not known")

    if out32 is None or site.literal(out32.value, None) is False:
        # ops.bucketize returns int32 where PyTorch gives int64
        new = cst.Call(func=cst.Attribute(value=new, attr=cst.Name("astype")),
                       args=[cst.Arg(site.ref("mindspore.int64"))])
    site.edit("UTL002", new, detail="bucketize -> mindspore.ops.bucketize")
    return new


api("torch.bucketize", rule="UTL002", sig=("input", "boundaries"), handler=_bucketize,
    returns=TENSOR)
api("torch.as_tensor", "mindspore.tensor", rule="UTL002", sig=("data", "dtype", "device"),
    drop={"device": "UTL002"}, returns=TENSOR)


register(
    "UTL003",
    "pad_sequence is written out as a definition; parameters_to_vector with ops.cat",
    group=GROUP,
    why="""
        MindSpore 2.10 has no ``pad_sequence`` and no ``parameters_to_vector``. Both are
        short compositions of ops that compute the same values. ``pad_sequence(sequences,
        batch_first=False, padding_value=0.0, padding_side="right")`` becomes a
        definition of the same name and parameters, put before the first statement that
        uses it, so every argument (a ``padding_value`` the collate function gets from a
        factory, a variable ``batch_first``) is passed on as written: it pads each
        sequence's first axis to the longest with ``ops.pad`` (on the right, or on the left
        for ``padding_side="left"``; the tensors keep their dtype, an int64 batch of token
        ids stays int64) and stacks them on axis 0 for ``batch_first`` or 1.
        ``parameters_to_vector(params)`` concatenates the flattened parameters with
        ``ops.cat``.
    """,
    seed="seeds/002 API Comparison › nn APIs",
    reference="r2.4.10/api_mapping/pytorch_api_mapping.md (torch.nn.utils)",
    installed_note="""
        Verified on 2.10: mindspore has no pad_sequence or parameters_to_vector;
        ``ops.pad`` keeps an int64 or bool tensor's dtype and casts the padding value to it
        (2.7 pads an int64 tensor with 2, as PyTorch's pad_sequence does).
    """,
    example="""
        import torch
        from torch.nn.utils.rnn import pad_sequence
        seqs = [torch.ones(3, 2), torch.full((1, 2), 2.0), torch.zeros(2, 2)]
        padded = pad_sequence(seqs, batch_first=True, padding_value=-1.0)
        time_major = pad_sequence(seqs)
        pad_index = 1
        ids = pad_sequence([torch.tensor([5, 6, 7]), torch.tensor([8])], batch_first=True,
                           padding_value=pad_index)
        left = pad_sequence(seqs, batch_first=True, padding_side="left")
    """,
)


_PAD_SEQUENCE = ("torch.nn.utils.rnn.pad_sequence",)


def _pad_sequence_source(site):
    pad = site.code(site.ref("mindspore.ops.pad"))
    stack = site.code(site.ref("mindspore.ops.stack"))
    return lambda name: (
        f'def {name}(sequences, batch_first=False, padding_value=0.0, padding_side="right"):\n'
        f'    """PyTorch\'s pad_sequence: the sequences padded along their first axis to the longest, stacked."""\n'
        f"    sequences = list(sequences)\n"
        f"    longest = max(s.shape[0] for s in sequences)\n"
        f"    padded = []\n"
        f"    for s in sequences:\n"
        f"        extra = longest - s.shape[0]\n"
        f'        widths = (0, extra) if padding_side == "right" else (extra, 0)\n'
        f"        padded.append({pad}(s, (0, 0) * (s.ndim - 1) + widths, value=padding_value))\n"
        f"    return {stack}(padded, axis=0 if batch_first else 1)\n"
    )


def _pad_sequence(site):
    if site.bound() is None or site.arg("sequences") is None:
        site.finding("UTL003", "pad_sequence(*args) cannot be ported", comment="pad_sequence not ported")
        return None
    name = site.define("pad_sequence", _pad_sequence_source(site), _PAD_SEQUENCE)
    new = site.updated.with_changes(func=cst.Name(name))
    site.edit("UTL003", new, detail="pad_sequence -> a definition (ops.pad + ops.stack)")
    return new


def _parameters_to_vector(site):
    params = site.arg("parameters")
    if site.bound() is None or params is None:
        return None
    cat = site.code(site.ref("mindspore.ops.cat"))
    new = site.parse(f"{cat}([p.reshape(-1) for p in {site.code(params.value).strip()}])")
    site.edit("UTL003", new, detail="parameters_to_vector -> ops.cat of the flattened parameters")
    return new


for _q in ("torch.nn.utils.rnn.pad_sequence",):
    api(_q, rule="UTL003", sig=("sequences", "batch_first", "padding_value", "padding_side"),
        handler=_pad_sequence, returns=TENSOR)
for _q in ("torch.nn.utils.parameters_to_vector", "torch.nn.utils.convert_parameters.parameters_to_vector"):
    api(_q, rule="UTL003", sig=("parameters",), handler=_parameters_to_vector, returns=TENSOR)


register(
    "UTL004",
    "torch.__version__ becomes mindspore.__version__; a version check is flagged",
    group=GROUP,
    why="""
        Notebooks print ``torch.__version__`` to record what they ran on; the port runs on
        MindSpore, so it prints ``mindspore.__version__`` instead, which is the version
        that matters for the ported code. Where the version is used for anything but
        showing it (a comparison, ``.split``, ``packaging.version.parse``), the two
        numberings mean different things (PyTorch 2.13 against MindSpore 2.10): the port
        still reads MindSpore's version, so the code runs, and the line is flagged so the
        check can be rewritten for what it guards on MindSpore. Showing it means: the whole
        expression statement of a notebook line, or anywhere inside a ``print(...)`` call.
    """,
    seed="seeds/002 Basic Logic",
    reference=REF,
    example="""
        import torch
        print("running on", torch.__version__)
        x = torch.ones(2)
    """,
)


def _shown(site) -> bool:
    """Is the value only shown: the whole expression statement, or inside print()?"""
    holder = site.statement
    if isinstance(holder, cst.SimpleStatementLine) and any(
        isinstance(s, cst.Expr) and s.value is site.original for s in holder.body
    ):
        return True
    return any(isinstance(c.func, cst.Name) and c.func.value == "print" for c in site.enclosing_calls)


def _version(site):
    new = site.ref("mindspore.__version__")
    site.edit("UTL004", new, detail="torch.__version__ -> mindspore.__version__")
    if not _shown(site):
        site.finding(
            "UTL004",
            "torch.__version__ now reads MindSpore's version (2.10.x), not PyTorch's; a check "
            "written against PyTorch's numbering must be rewritten for what it guards on MindSpore",
            comment="this is MindSpore's version now; review the version check",
        )
    return new


api("torch.__version__", "mindspore.__version__", rule="UTL004", attr=True, handler=_version,
    returns=None)


# ----------------------------------------------------------------------------- constants

register(
    "UTL005",
    "torch.inf, torch.nan, torch.pi and torch.e become the math constants",
    group=GROUP,
    why="""
        PyTorch's module constants are plain Python floats (``torch.inf is math.inf``,
        ``torch.pi == math.pi``), not tensors, and MindSpore has no such names. Python's
        ``math`` module holds the same values, so they become ``math.inf``, ``math.nan``,
        ``math.pi`` and ``math.e`` (``import math`` is added once when the cell lacks it).
    """,
    seed="seeds/002 Basic Logic",
    reference=REF,
    example="""
        import torch
        x = torch.tensor([1.0, -2.0])
        y = x.clamp(min=-torch.inf, max=torch.pi)
        z = x * torch.e
        missing = torch.isnan(torch.tensor([torch.nan, 1.0]))
    """,
)

_CONSTANTS = {"inf": "inf", "nan": "nan", "pi": "pi", "e": "e"}


def _constant(site):
    name = site.api.rsplit(".", 1)[-1]
    math = site.require_import("math")
    new = cst.Attribute(value=cst.Name(math), attr=cst.Name(_CONSTANTS[name]))
    site.edit("UTL005", new, detail=f"{site.api} -> math.{_CONSTANTS[name]} (the same float)")
    return new


for _name in _CONSTANTS:
    api(f"torch.{_name}", rule="UTL005", attr=True, handler=_constant, returns=None)


# ----------------------------------------------------------------------------- printing

register(
    "UTL006",
    "torch.set_printoptions becomes numpy.set_printoptions",
    group=GROUP,
    why="""
        A MindSpore tensor prints (``print(t)``, ``str(t)``) through NumPy, so NumPy's print
        options shape it: ``precision``, ``threshold``, ``edgeitems`` and ``linewidth`` have
        the same names and meanings there, and ``sci_mode=False`` is NumPy's
        ``suppress=True``. A ``profile`` is written out as the options PyTorch gives it
        (``"full"``: no summarising). ``sci_mode=True`` has no NumPy counterpart (NumPy
        chooses) and is dropped. The options also apply to NumPy arrays, and MindSpore's
        ``repr`` (what a notebook shows for a bare ``t``) keeps its own format.
    """,
    seed="seeds/002 Basic Logic",
    reference=REF,
    installed_note="""
        Checked on 2.10: ``print`` of a Tensor follows ``numpy.set_printoptions(precision=2,
        suppress=True)``, threshold and edgeitems included; ``repr`` does not.
    """,
    example="""
        import torch
        torch.set_printoptions(precision=2, sci_mode=False)
        x = torch.tensor([1.23456, 2e-8])
        print(x)
    """,
)

#: PyTorch's print profiles (torch/_tensor_str.py)
_PROFILES = {"default": dict(precision="4", threshold="1000", edgeitems="3", linewidth="80"),
             "short": dict(precision="2", threshold="1000", edgeitems="2", linewidth="80"),
             "full": dict(precision="4", threshold="sys.maxsize", edgeitems="3", linewidth="80")}


def _set_printoptions(site):
    bound = site.bound()
    if bound is None:
        return None
    options: dict = {}
    notes = []
    for name, arg, _ in bound:
        text = site.code(arg.value).strip()
        if name == "profile":
            profile = site.literal(arg.value)
            if profile not in _PROFILES:
                site.finding("UTL006", f"profile={text}: only a literal 'default', 'short' or 'full' is ported",
                             comment="profile not ported")
                continue
            options = {**_PROFILES[profile], **options}
        elif name == "sci_mode":
            value = site.literal(arg.value, "?")
            if value is False:
                options["suppress"] = "True"
            elif value is not None:
                notes.append(f"sci_mode={text} dropped (NumPy chooses)")
        elif name in ("precision", "threshold", "edgeitems", "linewidth"):
            options[name] = text
        else:
            site.finding("UTL006", f"{name}= has no NumPy print option", comment=f"{name}= dropped")
    if "sys.maxsize" in options.values():
        site.require_import("sys")
    numpy = site.require_import("numpy")
    args = ", ".join(f"{k}={v}" for k, v in options.items())
    new = site.parse(f"{numpy}.set_printoptions({args})")
    site.edit("UTL006", new, detail="; ".join(["torch.set_printoptions -> numpy.set_printoptions"] + notes))
    return new


api("torch.set_printoptions", rule="UTL006",
    sig=("precision", "threshold", "edgeitems", "linewidth", "profile", "sci_mode"),
    handler=_set_printoptions, returns=None)


# ----------------------------------------------------------------------------- process settings

register(
    "UTL007",
    "Process settings: default dtype, thread count",
    group=GROUP,
    why="""
        MindSpore creates floating-point tensors as float32 and has no setting to change
        that, so ``torch.get_default_dtype()`` is ``mindspore.float32`` and
        ``torch.set_default_dtype(torch.float32)`` is removed. Another default dtype
        cannot be ported: the call is removed and flagged, since the tensors the cell
        creates stay float32 (pass ``dtype=`` where it matters). ``torch.set_num_threads
        (n)`` only tunes speed; MindSpore's counterpart,
        ``mindspore.device_context.cpu.threads_num(n)``, may be called once per process and
        raises when a notebook cell runs again, so the call is removed (the results are the
        same).
    """,
    seed="seeds/002 Basic Logic",
    reference=REF,
    installed_note="""
        Checked on 2.10: a second ``device_context.cpu.threads_num`` call raises
        RuntimeError ("can not be set repeatedly").
    """,
    example="""
        import torch
        torch.set_num_threads(2)
        torch.set_default_dtype(torch.float32)
        dtype = torch.get_default_dtype()
        x = torch.zeros(2, dtype=dtype)
    """,
)


def _removed_statement(site, rule: str, detail: str) -> bool:
    """Remove the statement the call is (its comments move to the next line); False when
    the call's value is used or the line holds more."""
    line = site.statement
    if not site.is_statement or len(line.body) != 1:
        return False
    before, after = site.siblings()

    def replace(updated):
        if not (before or after):
            return updated.with_changes(body=[cst.Pass()])
        lines = list(updated.leading_lines)
        comment = updated.trailing_whitespace.comment
        if comment is not None:
            lines.append(cst.EmptyLine(indent=True, whitespace=cst.SimpleWhitespace(""), comment=comment))
        site.carry_lines(lines)
        return cst.RemovalSentinel.REMOVE

    site.replace_line(replace)
    site.edit(rule, None, detail=detail)
    return True


def _set_num_threads(site):
    if not _removed_statement(site, "UTL007", f"{site.api}(...) removed: a speed setting MindSpore takes once per "
                                              "process (mindspore.device_context.cpu.threads_num)"):
        site.finding("UTL007", f"{site.api}(...) whose value is used: it returns None", comment="returns None")
        return cst.Name("None")
    return site.updated


def _get_default_dtype(site):
    new = site.ref("mindspore.float32")
    site.edit("UTL007", new, detail=f"{site.api}() -> mindspore.float32 (MindSpore's one default)")
    return new


def _set_default_dtype(site):
    original = site.original.args[0].value if site.original.args else None
    if original is not None and site.resolve(original) in ("torch.float32", "torch.float"):
        if _removed_statement(site, "UTL007", f"{site.api}(torch.float32) removed: MindSpore's floating "
                                              "tensors are float32"):
            return site.updated
    new = cst.Name("None")  # what it returns; a statement of its own becomes ``pass``
    if site.is_statement and len(site.statement.body) == 1:
        site.replace_line(lambda line: line.with_changes(body=[cst.Pass()]))
    site.edit("UTL007", new, detail=f"{site.api}(...) removed")
    site.finding("UTL007", f"{site.api}({site.code(original).strip() if original is not None else ''}): MindSpore "
                 "has no default dtype setting; its floating-point tensors stay float32 (pass dtype= where it "
                 "matters)", comment="default dtype stays float32 in MindSpore")
    return new


api("torch.set_num_threads", rule="UTL007", sig=("int",), handler=_set_num_threads, returns=None)
api("torch.get_default_dtype", rule="UTL007", sig=(), handler=_get_default_dtype, returns="dtype")
api("torch.set_default_dtype", rule="UTL007", sig=("d",), handler=_set_default_dtype, returns=None)


# ----------------------------------------------------------------------------- ONNX

register(
    "UTL008",
    "torch.onnx.export becomes mindspore.export(..., file_format=\"ONNX\"), flagged",
    group=GROUP,
    why="""
        MindSpore exports a Cell to ONNX with ``mindspore.export(net, *inputs,
        file_name=..., file_format="ONNX")``: the model and its example inputs (PyTorch's
        ``args``, a tensor or a tuple of them, spread out) and the file name
        (``.onnx`` is added when missing). PyTorch's export options (``input_names``,
        ``output_names``, ``dynamic_axes``, ``opset_version``...) have no counterpart there
        and are dropped, and MindSpore's exporter does not handle every network PyTorch's
        does, so the call is always flagged: check the file it writes.
    """,
    seed="seeds/002 Other APIs",
    reference=REF,
    installed_note="""
        Checked on 2.10 (CPU): exporting an ``nn.Dense`` writes ``m.onnx``; exporting the same
        Cell a second time in the process failed inside MindSpore's graph compiler.
    """,
    example="""
        import torch
        import torch.nn as nn
        import onnxscript  # what PyTorch's exporter runs on (MindSpore's needs nothing)
        model = nn.Linear(3, 2)
        dummy = torch.ones(1, 3)
        torch.onnx.export(model, dummy, "model.onnx", input_names=["x"])
    """,
)


def _onnx_export(site):
    bound = site.bound()
    model, args, f = site.arg("model"), site.arg("args"), site.arg("f")
    if bound is None or model is None or args is None or f is None:
        site.finding("UTL008", "torch.onnx.export needs the model, its example inputs and a file name here",
                     comment="export by hand with mindspore.export")
        return None
    inputs = site.code(args.value).strip()
    if isinstance(args.value, cst.Tuple):
        spread = ", ".join(site.code(e.value).strip() for e in args.value.elements)
    elif site.kind_of(_original_value(site, "args")) == TENSOR:
        spread = inputs
    else:
        spread = f"*({inputs} if isinstance({inputs}, tuple) else ({inputs},))"
    dropped = [n for n, _, _ in bound if n not in ("model", "args", "f")]
    new = site.parse(f"{site.code(site.ref('mindspore.export')).strip()}({site.code(model.value).strip()}, {spread}, "
                     f"file_name={site.code(f.value).strip()}, file_format=\"ONNX\")")
    site.edit("UTL008", new, detail="torch.onnx.export -> mindspore.export(..., file_format=\"ONNX\")")
    site.finding("UTL008", "exported by mindspore.export(..., file_format=\"ONNX\"): check the file"
                 + (f"; {', '.join(d + '=' for d in dropped)} dropped (no MindSpore option)" if dropped else ""),
                 comment="ONNX export by MindSpore; check the file")
    return new


def _original_value(site, name: str):
    for (pname, _, positional), orig in zip(site.bound() or (), site.original.args):
        if pname == name:
            return orig.value
    return None


api("torch.onnx.export", rule="UTL008", sig=("model", "args", "f"), handler=_onnx_export, returns=None)


# ----------------------------------------------------------------------------- packed sequences

register(
    "UTL009",
    "Packed sequences: an RNN on pack_padded_sequence runs with seq_length",
    group=GROUP,
    why="""
        PyTorch hands a recurrent layer a batch of padded sequences of different lengths
        as a ``PackedSequence`` (``pack_padded_sequence(x, lengths, batch_first=...,
        enforce_sorted=...)``), so each sequence stops at its own length: the final
        states ``h_n``/``c_n`` are those after each sequence's last real step (and, for a
        bidirectional layer, the backward pass starts there), and ``pad_packed_sequence``
        turns the output back into a padded batch with ``padding_value`` after each length.
        MindSpore has no packed sequences. Its ``nn.GRU``/``RNN`` take the lengths as
        ``seq_length=`` with the same effect (the outputs after a sequence's length are
        zero); ``nn.LSTM`` does too, but on CPU its ``seq_length`` path is a step-by-step
        loop some 30 times slower than its fused kernel, so for an LSTM the sequences of
        each length run together, cut to that length, and the outputs and final states
        are put back in the batch's order (exactly what packing computes). So the port
        writes three definitions: ``pack_padded_sequence`` keeps the padded batch (batch
        first) and the lengths (an int64 tensor; unsorted lengths raise as in PyTorch
        when ``enforce_sorted``), a layer called on such a value runs as
        ``run_packed(layer, packed, hx)`` (in the layer's own ``batch_first`` layout,
        returning the output with its lengths and the final state), and
        ``pad_packed_sequence`` cuts the output to the longest length (or
        ``total_length``), fills what lies after each length with ``padding_value`` and
        returns it (time first unless ``batch_first``) with the lengths. The fields of a
        PackedSequence (``.data``, ``.batch_sizes``) have no counterpart.
    """,
    seed="seeds/002 API Comparison › nn APIs",
    reference="r2.4.10/api_mapping/pytorch_diff/LSTM.md",
    installed_note="""
        Verified on 2.10 (CPU): nn.LSTM/GRU/RNN with seq_length (int64 or int32) give
        PyTorch's packed h_n (and c_n) and padded output to 1e-6 for batch_first
        True/False, bidirectional and two layers, with unsorted lengths; the output
        after each length is zero. The LSTM's seq_length path took 100 s for a forward
        pass its fused kernel makes in 3 s (hidden 300, two bidirectional layers, 16
        sequences of up to 50 steps); grouping by length took 7 s.
    """,
    example="""
        import torch
        import torch.nn as nn
        class Encoder(nn.Module):
            def __init__(self):
                super().__init__()
                self.lstm = nn.LSTM(3, 4, batch_first=True, bidirectional=True)
            def forward(self, x, lengths):
                packed = nn.utils.rnn.pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
                packed_output, (hidden, cell) = self.lstm(packed)
                output, output_lengths = nn.utils.rnn.pad_packed_sequence(packed_output)
                return output, hidden, output_lengths
        model = Encoder()
        x = torch.randn(3, 5, 3)
        output, hidden, output_lengths = model(x, torch.tensor([2, 4, 3]))
    """,
)

PACKED = "packed"  # kind of a ported PackedSequence: (padded batch, batch first; lengths)
_PACK = ("torch.nn.utils.rnn.pack_padded_sequence",)
_UNPACK = ("torch.nn.utils.rnn.pad_packed_sequence",)


def _pack_source(site):
    tensor = site.code(site.ref("mindspore.Tensor"))
    int64 = site.code(site.ref("mindspore.int64"))
    return lambda name: (
        f"def {name}(input, lengths, batch_first=False, enforce_sorted=True):\n"
        f'    """PyTorch\'s packed sequence for MindSpore\'s recurrent layers: the padded batch (batch first) and the lengths."""\n'
        f"    lengths = {tensor}(lengths, {int64})\n"
        f"    if enforce_sorted and bool((lengths[1:] > lengths[:-1]).any()):\n"
        f'        raise RuntimeError("`lengths` array must be sorted in decreasing order when `enforce_sorted` is True.")\n'
        f"    return (input if batch_first else input.swapaxes(0, 1)), lengths\n"
    )


def _run_packed_source(site):
    lstm = site.code(site.ref("mindspore.nn.LSTM"))
    tensor = site.code(site.ref("mindspore.Tensor"))
    pad = site.code(site.ref("mindspore.ops.pad"))
    concat = site.code(site.ref("mindspore.ops.concat"))
    return lambda name: (
        f"def {name}(rnn, packed, hx=None):\n"
        f'    """A recurrent layer on a packed sequence: each sequence stops at its own length."""\n'
        f"    data, lengths = packed\n"
        f"    if not isinstance(rnn, {lstm}):  # GRU, RNN: seq_length does it\n"
        f"        output, state = rnn(data if rnn.batch_first else data.swapaxes(0, 1), hx, seq_length=lengths)\n"
        f"        return (output if rnn.batch_first else output.swapaxes(0, 1), lengths), state\n"
        f"    # LSTM: the sequences of each length run together (seq_length is a slow step-by-step loop)\n"
        f"    rows, outputs, hs, cs = [], [], [], []\n"
        f"    for n in sorted(set(lengths.tolist())):\n"
        f"        group = [r for r, length in enumerate(lengths.tolist()) if length == n]\n"
        f"        index = {tensor}(group)\n"
        f"        x = data[index, :n]\n"
        f"        state = None if hx is None else (hx[0][:, index], hx[1][:, index])\n"
        f"        output, (h, c) = rnn(x if rnn.batch_first else x.swapaxes(0, 1), state)\n"
        f"        output = output if rnn.batch_first else output.swapaxes(0, 1)\n"
        f"        outputs.append({pad}(output, (0, 0, 0, data.shape[1] - n)))\n"
        f"        hs.append(h)\n"
        f"        cs.append(c)\n"
        f"        rows += group\n"
        f"    back = {tensor}(sorted(range(len(rows)), key=rows.__getitem__))\n"
        f"    return ({concat}(outputs)[back], lengths), ({concat}(hs, 1)[:, back], {concat}(cs, 1)[:, back])\n"
    )


def _unpack_source(site):
    arange = site.code(site.ref("mindspore.ops.arange"))
    pad = site.code(site.ref("mindspore.ops.pad"))
    return lambda name: (
        f"def {name}(sequence, batch_first=False, padding_value=0.0, total_length=None):\n"
        f'    """PyTorch\'s pad_packed_sequence: the padded batch up to the longest length (or total_length), and the lengths."""\n'
        f"    data, lengths = sequence\n"
        f"    steps = int(lengths.max()) if total_length is None else total_length\n"
        f"    if steps > data.shape[1]:\n"
        f"        data = {pad}(data, (0, 0) * (data.ndim - 2) + (0, steps - data.shape[1]))\n"
        f"    data = data[:, :steps]\n"
        f"    mask = {arange}(steps).reshape(1, steps) < lengths.reshape(-1, 1)\n"
        f"    data = data.masked_fill(~mask.reshape(mask.shape + (1,) * (data.ndim - 2)), padding_value)\n"
        f"    return (data if batch_first else data.swapaxes(0, 1)), lengths\n"
    )


def _pack(site):
    if site.bound() is None or site.arg("input") is None or site.arg("lengths") is None:
        site.finding("UTL009", "pack_padded_sequence needs its input and lengths as arguments",
                     comment="pack_padded_sequence not ported")
        return None
    site.scratch("UTL009")["packed"] = True
    name = site.define("pack_padded_sequence", _pack_source(site), _PACK)
    new = site.updated.with_changes(func=cst.Name(name))
    site.edit("UTL009", new, detail="pack_padded_sequence -> (padded batch, lengths) for seq_length")
    return new


def _unpack(site):
    if site.bound() is None or site.arg("sequence") is None:
        site.finding("UTL009", "pad_packed_sequence needs its sequence as an argument",
                     comment="pad_packed_sequence not ported")
        return None
    name = site.define("pad_packed_sequence", _unpack_source(site), _UNPACK)
    new = site.updated.with_changes(func=cst.Name(name))
    site.edit("UTL009", new, detail="pad_packed_sequence -> the padded batch cut to the lengths")
    return new


api("torch.nn.utils.rnn.pack_padded_sequence", rule="UTL009",
    sig=("input", "lengths", "batch_first", "enforce_sorted"), handler=_pack, returns=PACKED)
api("torch.nn.utils.rnn.pad_packed_sequence", rule="UTL009",
    sig=("sequence", "batch_first", "padding_value", "total_length"), handler=_unpack, returns=None)


def _calls(node, out: list) -> list:
    """Every Call under ``node``."""
    if type(node) is cst.Call:
        out.append(node)
    for child in node.children:
        _calls(child, out)
    return out


class _Replace(cst.CSTTransformer):
    def __init__(self, new: dict):
        super().__init__()
        self.new = new

    def leave_Call(self, original, updated):
        return self.new.get(id(original), updated)


@statement_hook("UTL009", cst.SimpleStatementLine)
def _packed_calls(ctx, original, updated):
    """``self.lstm(packed, hx)`` with ``packed`` from pack_padded_sequence ->
    ``run_packed(self.lstm, packed, hx)``."""
    if not ctx.scratch("UTL009"):
        return updated
    new = {}
    for call in _calls(original, []):
        first = call.args[0] if call.args else None
        if (first is None or first.keyword is not None or first.star or ctx.resolve(call.func)
                or ctx.kind_of(first.value) != PACKED):
            continue
        ported = ctx.updated_of(call)
        name = ctx.define("run_packed", _run_packed_source(ctx))
        args = [cst.Arg(ported.func, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
                *ported.args]
        new[id(ported)] = replacement = cst.Call(func=cst.Name(name), args=args)
        ctx.edit("UTL009", replacement, node=call, api="PackedSequence",
                 detail=f"{ctx.code(call.func).strip()}(packed) -> run_packed(...): seq_length=lengths")
    return updated.visit(_Replace(new)) if new else updated
