"""APIs notebooks use around the model code: ``torch.signal.windows``, ``torch.testing``
assertions, ``torch.multiprocessing.cpu_count`` and ``torch.nn.attention.sdpa_kernel``."""

from __future__ import annotations

import libcst as cst

from msmagic.engine.spec import api, module, statement_hook
from msmagic.rules._util import unwrap_with
from msmagic.rules.registry import register

GROUP = "Utilities"
REF = "r2.4.10/api_mapping/pytorch_api_mapping.md"
WIN = "torch.signal.windows."

register(
    "MSC001",
    "torch.signal.windows become NumPy formulas wrapped in a MindSpore tensor",
    group=GROUP,
    why="""
        ``torch.signal.windows`` holds SciPy-style windows that are symmetric by default
        (``sym=True``), unlike ``torch.hann_window`` and MindSpore's ``ops.hann_window``,
        ``hamming_window`` and ``blackman_window``, which are periodic by default and have
        no ``cosine``, ``exponential``, ``gaussian`` or ``general_cosine`` counterpart. The
        port writes PyTorch's own formula with NumPy (``general_cosine``: the sum of
        ``(-1)**i * a[i] * cos(2 * pi * i * n / (M - 1))``, ``M`` instead of ``M - 1`` when
        ``sym=False``; ``hann``, ``hamming``, ``general_hamming`` and ``blackman`` are
        general cosines with ``a = [0.5, 0.5]``, ``[0.54, 0.46]``, ``[alpha, 1 - alpha]``,
        ``[0.42, 0.5, 0.08]``; ``cosine``, ``exponential`` and ``gaussian`` their own
        formulas) and wraps it as ``mindspore.Tensor(values, dtype)``, float32 unless
        ``dtype=`` says otherwise. PyTorch computes in the requested dtype and NumPy in
        float64 before the cast, so values agree to the dtype's rounding. ``device=`` is
        dropped (DEV003); ``requires_grad=True`` and ``layout=`` are flagged, and
        ``exponential`` with ``center=`` but no ``sym=False`` (which PyTorch refuses) too.
    """,
    seed="seeds/002 API Comparison › functional APIs",
    reference=REF,
    installed_note="""
        MindSpore 2.10's ``ops.hann_window(window_length, periodic=True)`` matches
        ``torch.signal.windows.hann(M, sym=False)`` only; the port does not use it so that
        one formula covers every window and both ``sym`` values.
    """,
    example="""
        import torch
        w = torch.signal.windows.hann(8)
        g = torch.signal.windows.gaussian(7, std=1.5, sym=False)
    """,
)

_COSINE_SUM = ("numpy.sum([(-1) ** i * c * numpy.cos(i * numpy.arange(M) * (2 * math.pi / (M - 1 if sym else M))) "
               "for i, c in enumerate(a)], axis=0) if M > 1 else numpy.ones(M)")
#: window -> (PyTorch keyword-only parameters with their defaults, lambda parameters, body)
_WINDOWS = {
    "general_cosine": ({"a": None}, "M, sym, a", _COSINE_SUM),
    "general_hamming": ({"alpha": "0.54"}, "M, sym, alpha", f"(lambda a: {_COSINE_SUM})([alpha, 1.0 - alpha])"),
    "hann": ({}, "M, sym", f"(lambda a: {_COSINE_SUM})([0.5, 0.5])"),
    "hamming": ({}, "M, sym", f"(lambda a: {_COSINE_SUM})([0.54, 0.46])"),
    "blackman": ({}, "M, sym", f"(lambda a: {_COSINE_SUM})([0.42, 0.5, 0.08])"),
    "cosine": ({}, "M, sym",
               "numpy.sin((numpy.arange(M) + 0.5) * (math.pi / (M + 1 if not sym and M > 1 else M))) "
               "if M > 0 else numpy.zeros(0)"),
    "exponential": ({"center": "None", "tau": "1.0"}, "M, sym, center, tau",
                    "numpy.exp(-numpy.abs((numpy.arange(M) - (center if center is not None else "
                    "(M if not sym and M > 1 else M - 1) / 2.0)) / tau))"),
    "gaussian": ({"std": "1.0"}, "M, sym, std",
                 "numpy.exp(-((numpy.arange(M) - (M if not sym and M > 1 else M - 1) / 2.0) "
                 "/ (std * math.sqrt(2))) ** 2)"),
}


def _window(name):
    extra, params, body = _WINDOWS[name]

    def handler(site):
        bound = site.bound()
        if bound is None:
            site.finding("MSC001", f"{site.api}(*args) cannot be ported", comment="*args not ported")
            return None
        given = {}
        for pname, arg, _ in bound:
            if pname == "device":
                site.edit("DEV003", None, detail="device= dropped")
                continue
            if pname in ("layout", "requires_grad") or pname is None:
                site.finding("MSC001", f"{site.api}: {pname or 'argument'}= is not ported",
                             comment=f"{pname}= not ported")
                return None
            given[pname] = site.code(arg.value).strip()
        if name == "exponential" and "center" in given and site.literal(site.parse(given.get("sym", "True")), None) \
                is not False:
            site.finding("MSC001", "exponential(center=...) needs sym=False (PyTorch raises otherwise)",
                         comment="center= with sym=True raises in PyTorch")
            return None
        values = [given.get("M")]
        for p, default in [("sym", "True"), *extra.items()]:
            values.append(given.get(p, default))
        if any(v is None for v in values):
            site.finding("MSC001", f"{site.api}: a required argument is missing", comment="argument missing")
            return None
        site.require_import("numpy")
        site.require_import("math")
        tensor = site.code(site.ref("mindspore.Tensor")).strip()
        dtype = given.get("dtype") or site.code(site.ref("mindspore.float32")).strip()
        new = site.parse(f"{tensor}((lambda {params}: {body})({', '.join(values)}), {dtype})")
        site.edit("MSC001", new, detail=f"{name} window -> NumPy formula as mindspore.Tensor")
        return new

    return handler


module("torch.signal.windows", None)  # `from torch.signal import windows`: each use is ported
for _name, (_extra, _params, _body) in _WINDOWS.items():
    api(WIN + _name, rule="MSC001",
        sig=("M", "sym", *_extra, "dtype", "layout", "device", "requires_grad"),
        handler=_window(_name), returns="tensor")


register(
    "MSC002",
    "assert_close becomes numpy's assert_allclose with PyTorch's tolerances",
    group=GROUP,
    why="""
        ``torch.testing.assert_close(actual, expected)`` raises AssertionError unless every
        element satisfies ``|actual - expected| <= atol + rtol * |expected|``, with
        tolerances chosen by dtype when omitted (float32: rtol 1.3e-6, atol 1e-5;
        float64: 1e-7 and 1e-7; float16: 1e-3 and 1e-5; bfloat16: 1.6e-2 and 1e-5; integers
        and bool: exact), NaNs unequal unless ``equal_nan=True``, and the same shape and
        dtype required. NumPy's ``assert_allclose`` applies the same inequality; the port
        calls it through a small helper, ``assert_close``, written into the cell, that takes
        the arrays (``Tensor.asnumpy()``), picks PyTorch's default tolerances from the
        dtype, passes ``equal_nan`` (NumPy's default is True, PyTorch's False) and first
        checks that shape and dtype match, as PyTorch does (``check_dtype=True``; NumPy
        1.26's ``assert_allclose`` would broadcast and has no ``strict=``). Python
        scalars count as float64 / int64, as in PyTorch. Giving only one of ``rtol`` and
        ``atol`` (PyTorch raises) and the other keyword arguments (``check_dtype=False``,
        ``msg=``...) are flagged. The deprecated ``torch.testing.assert_allclose`` differs
        (NaNs equal by default, no dtype check) and is not ported.
    """,
    seed="seeds/002 API Comparison › functional APIs",
    reference=REF,
    example="""
        import torch
        x = torch.tensor([1.0, 2.0, 3.0])
        torch.testing.assert_close(x * 2, torch.tensor([2.0, 4.0, 6.0]))
        torch.testing.assert_close(x, x + 1e-3, rtol=0.0, atol=1e-2)
        ok = True
    """,
)

_ASSERT_CLOSE = '''\
def {name}(actual, expected, rtol=None, atol=None, equal_nan=False):
    """torch.testing.assert_close: PyTorch's default tolerances by dtype (msmagic MSC002)."""
    actual = actual.asnumpy() if isinstance(actual, mindspore.Tensor) else numpy.asarray(actual)
    expected = expected.asnumpy() if isinstance(expected, mindspore.Tensor) else numpy.asarray(expected)
    if rtol is None and atol is None:
        tolerances = {{"float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5), "float32": (1.3e-6, 1e-5),
                      "float64": (1e-7, 1e-7), "complex64": (1.3e-6, 1e-5), "complex128": (1e-7, 1e-7)}}
        rtol, atol = tolerances.get(str(actual.dtype), (0.0, 0.0))
    if actual.shape != expected.shape or actual.dtype != expected.dtype:
        raise AssertionError(f"shape or dtype differ: {{actual.shape}} {{actual.dtype}} != {{expected.shape}} {{expected.dtype}}")
    numpy.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan)
'''


def _assert_close(site):
    bound = site.bound()
    if bound is None:
        site.finding("MSC002", f"{site.api}(*args) cannot be ported", comment="*args not ported")
        return None
    given = {n: a for n, a, _ in bound}
    other = [n for n in given if n not in ("actual", "expected", "rtol", "atol", "equal_nan")]
    if other or ("rtol" in given) != ("atol" in given) or "expected" not in given:
        site.finding("MSC002", f"{site.api}: only actual, expected, rtol and atol together, and equal_nan are "
                     f"ported (got {', '.join(other) or 'one of rtol/atol'})", comment="arguments not ported")
        return None
    site.require_import("numpy")
    site.ref("mindspore.Tensor")  # the helper names mindspore.Tensor
    name = site.define("assert_close", lambda n: _ASSERT_CLOSE.format(name=n))
    args = ", ".join(site.code(a.value).strip() if n in ("actual", "expected") else f"{n}={site.code(a.value).strip()}"
                     for n, a in given.items())
    new = site.parse(f"{name}({args})")
    site.edit("MSC002", new, detail="assert_close -> numpy.testing.assert_allclose with PyTorch's tolerances")
    return new


module("torch.testing", None)  # `import torch.testing`: each use is ported or flagged
api("torch.testing.assert_close", rule="MSC002",
    sig=("actual", "expected", "allow_subclasses", "rtol", "atol", "equal_nan", "check_device", "check_dtype",
         "check_layout", "check_stride", "msg"),
    handler=_assert_close, returns=None)


register(
    "MSC003",
    "torch.multiprocessing.cpu_count() is os.cpu_count()",
    group=GROUP,
    why="""
        ``torch.multiprocessing`` re-exports Python's ``multiprocessing``, whose
        ``cpu_count()`` is ``os.cpu_count()`` (raising NotImplementedError where that is
        None). Notebooks use it to size ``num_workers``; the port calls ``os.cpu_count()``,
        which needs no PyTorch.
    """,
    seed="seeds/002 API Comparison › functional APIs",
    reference=REF,
    example="""
        import torch
        workers = min(4, torch.multiprocessing.cpu_count())
    """,
)


def _cpu_count(site):
    site.require_import("os")
    new = site.parse("os.cpu_count()")
    site.edit("MSC003", new, detail="cpu_count() -> os.cpu_count()")
    return new


api("torch.multiprocessing.cpu_count", rule="MSC003", sig=(), handler=_cpu_count, returns=None)


register(
    "MSC004",
    "with sdpa_kernel(...) and with torch.cuda.amp.autocast() are unwrapped",
    group=GROUP,
    why="""
        ``torch.nn.attention.sdpa_kernel(backends)`` only chooses which PyTorch kernel
        computes ``scaled_dot_product_attention`` (flash, memory-efficient, math); every
        kernel computes the same attention, and MindSpore has no such choice, so the
        ``with`` line goes and its body stays (the ``SDPBackend`` arguments go with it).
        ``torch.cuda.amp.autocast()`` runs the CUDA operations of its body in float16;
        on a CPU run PyTorch disables it (with a warning) and the body computes in
        float32, which is what the unwrapped body does in MindSpore. MindSpore's mixed
        precision is not a context manager: it is set on the network
        (``mindspore.amp.auto_mixed_precision(net, "O1")``) with loss scaling by
        ``mindspore.amp.DynamicLossScaler``; so the unwrapping is reported (the results
        of a GPU run of the PyTorch code, in float16, differ from the port's float32
        ones). ``torch.cuda.amp.GradScaler`` is flagged: its ``scale``/``step``/
        ``update`` protocol wraps PyTorch's backward and optimizer step.
    """,
    seed="seeds/002 API Comparison › functional APIs",
    reference=REF,
    example="""
        import torch
        from torch.nn.attention import SDPBackend, sdpa_kernel

        x = torch.ones(2, 3)
        with sdpa_kernel(SDPBackend.MATH):
            y = x * 2
        with sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.MATH]):
            z = y + 1
    """,
)

_NOOP_CONTEXTS = ("torch.nn.attention.sdpa_kernel", "torch.cuda.amp.autocast",
                  "torch.cuda.amp.autocast_mode.autocast")
_AUTOCAST_NOTE = ("torch.cuda.amp.autocast() unwrapped: on a CPU run PyTorch disables it too, but on a GPU "
                  "PyTorch computes its body in float16; MindSpore sets mixed precision on the network "
                  "(mindspore.amp.auto_mixed_precision(net, 'O1'))")


def _noop_context(site):
    holder = site.statement
    call = site.original
    if isinstance(call, cst.Call) and isinstance(holder, cst.With) and any(i.item is call for i in holder.items):
        if "autocast" in site.api:
            site.finding("MSC004", _AUTOCAST_NOTE, comment="autocast removed; MindSpore computes in float32 here")
        site.edit("MSC004", None, detail=f"with {site.api}(...): unwrapped")
        return site.updated
    site.finding("MSC004", f"{site.api} is ported only as the context manager of a with statement",
                 comment=f"{site.api} outside a with statement is not ported")
    return None


def _sdp_backend(site):
    """``SDPBackend.MATH`` inside ``sdpa_kernel(...)``: goes with the unwrapped ``with``."""
    if any(site.resolve(c.func) == "torch.nn.attention.sdpa_kernel" for c in site.enclosing_calls):
        return site.updated
    site.finding("MSC004", f"{site.api} outside sdpa_kernel(...): MindSpore has no attention kernel choice",
                 comment=f"{site.api} has no MindSpore counterpart")
    return site.torch_ref(site.api)


for _qual in _NOOP_CONTEXTS:
    api(_qual, rule="MSC004", handler=_noop_context, attr=True)
module("torch.nn.attention", None)  # `import torch.nn.attention`: each use is ported
api("torch.nn.attention.SDPBackend", rule="MSC004", handler=_sdp_backend, attr=True, returns=None)
for _member in ("MATH", "FLASH_ATTENTION", "EFFICIENT_ATTENTION", "CUDNN_ATTENTION"):
    api(f"torch.nn.attention.SDPBackend.{_member}", rule="MSC004", handler=_sdp_backend, attr=True, returns=None)


def _is_noop_context(ctx, node) -> bool:
    return isinstance(node, cst.Call) and ctx.resolve(node.func) in _NOOP_CONTEXTS


@statement_hook("MSC004", cst.With)
def _unwrap_noop(ctx, original: cst.With, updated):
    return unwrap_with(ctx, original, updated, _is_noop_context)
