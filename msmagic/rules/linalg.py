"""Linear algebra and special functions written with MindSpore ops (rules LNA*).

``torch.special`` and ``torch.linalg`` functions that MindSpore 2.10 has no same-named
function for, or whose same-named function computes something else, are ported to a
short formula of MindSpore ops that computes PyTorch's values (each verified by the
harness on PyTorch's op_db samples or on the cases of ``msmagic/apis/linalg_cases.py``).
A formula that names an argument more than once is written as a lambda applied to the
arguments, so that each argument is evaluated once, as in the original call.
"""

from __future__ import annotations

import libcst as cst

from msmagic.engine.build import parse_expression
from msmagic.engine.spec import TENSOR, api, method
from msmagic.rules.registry import register

GROUP = "Linear algebra and special functions"
SEED = "seeds/002 API Comparison › functional APIs"
REF = "r2.4.10/api_mapping/pytorch_api_mapping.md"

_CODE = cst.Module(body=[])

register(
    "LNA001",
    "Special functions MindSpore lacks become formulas of MindSpore ops",
    group=GROUP,
    seed=SEED,
    reference=REF,
    why="""
        ``torch.special`` has functions MindSpore 2.10 does not: ``ndtr`` (the standard
        normal CDF) is ``0.5 * erfc(-x / sqrt(2))``; ``log_ndtr`` is the log of that, with
        the asymptotic series of the tail below -10 (where ``erfc`` underflows);
        ``erfcx`` (``exp(x**2) * erfc(x)``) is computed in float64 up to 5 and by its
        asymptotic series beyond (where the product underflows); ``entr`` is
        ``-x * log(x)`` with 0 at 0 and -inf below; ``xlog1py`` is ``x * log1p(y)`` with 0
        where ``x`` is 0 (unless ``y`` is NaN); ``spherical_bessel_j0`` is ``sin(x) / x``
        with 1 at 0 and 0 at infinity. MindSpore's ``bessel_y0``/``y1``/``k0``/``k1``/``k0e``/
        ``k1e`` give -inf or inf for a negative input where PyTorch gives NaN (and
        ``bessel_y1(0)`` NaN where PyTorch gives -inf): the port writes those values with
        ``ops.where``. ``log_ndtr`` and ``erfcx`` are computed in float64
        and cast to the dtype PyTorch gives (``(x * 1.0).dtype``: float32 for an integer
        input, the input's own floating dtype otherwise). ``ops.polygamma`` takes the order ``n`` as a
        tensor, not a Python int: the port wraps it.
    """,
    installed_note="""
        Verified on 2.10 (CPU) against torch 2.13 on op_db samples and on a grid from -40
        to 40 with infinities and NaN, in float32 and float64, at rtol = atol = 1e-5.
    """,
    example="""
        import torch
        x = torch.linspace(-3, 3, 7)
        n = torch.special.ndtr(x)
        ln = torch.special.log_ndtr(x)
        ex = torch.special.erfcx(x)
        en = torch.special.entr(torch.tensor([0.0, 0.5, 1.0, 2.0]))
        xl = torch.special.xlog1py(x, x.abs())
        j0 = torch.special.spherical_bessel_j0(x)
        pg = torch.special.polygamma(1, x.abs() + 0.5)
    """,
)

register(
    "LNA002",
    "torch.linalg functions MindSpore lacks (eigvalsh, solve...) as formulas",
    group=GROUP,
    seed=SEED,
    reference=REF,
    why="""
        ``torch.linalg.eigvalsh`` is ``mindspore.scipy.linalg.eigh(A, eigvals_only=True)``
        (``UPLO`` becomes ``lower``) on each matrix of the batch (it takes one matrix, and
        aborts the process on an empty one: an empty input gives the empty result); ``svdvals`` is ``ops.svd(A, compute_uv=False)``;
        ``multi_dot([a, b, c])`` is a chain of ``ops.matmul`` (a list written in the
        call; another iterable is flagged); ``solve(A, B)`` is the ``MatrixSolve``
        primitive, with ``B`` taken as a batch of vectors where PyTorch takes it so;
        ``solve_triangular(A, B, upper=)`` is ``MatrixTriangularSolve(lower=not upper)``;
        ``vander(x, N=)`` is ``x[..., None] ** arange(N)`` (MindSpore's ``ops.vander``
        gives decreasing powers, like NumPy's); ``matrix_rank(A)`` counts the singular
        values above PyTorch's default tolerance ``max(m, n) * eps * largest``;
        ``lu_factor(A)`` is ``mindspore.scipy.linalg.lu_factor`` on each matrix of the
        batch with its 0-based pivots made 1-based (square matrices: MindSpore raises on
        others; the result is a plain tuple, so ``LU, pivots = ...`` works and ``.LU``
        does not); ``lu_solve(LU, pivots, B)`` is ``ops.lu_solve(B, LU, pivots)``;
        ``cond`` is ``ops.cond`` with its result cast to PyTorch's dtype (MindSpore gives
        float32 for a float64 input); ``tensorinv`` and ``tensorsolve`` solve the matrix
        problem of the reshaped tensors (``ops.inverse``, ``MatrixSolve``).
        Arguments these formulas do not cover (``left=False``, ``unitriangular=True``,
        tolerances of ``matrix_rank``, ``hermitian=True``, ``driver=``, ``out=``) leave
        the call as PyTorch with a finding.
    """,
    installed_note="""
        Verified on 2.10 (CPU) against torch 2.13 on op_db samples at rtol = atol = 1e-5.
    """,
    example="""
        import torch
        a = torch.tensor([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])
        b = torch.tensor([[1.0, 2.0], [0.5, -1.0], [2.0, 0.0]])
        w = torch.linalg.eigvalsh(a)
        s = torch.linalg.svdvals(a)
        m = torch.linalg.multi_dot([a, a, b])
        x = torch.linalg.solve(a, b)
        v = torch.linalg.solve(a, b[:, 0])
        t = torch.linalg.solve_triangular(a.triu(), b, upper=True)
        vd = torch.linalg.vander(torch.tensor([1.0, 2.0, 3.0]))
        r = torch.linalg.matrix_rank(a)
    """,
)


def _code(node) -> str:
    return _CODE.code_for_node(node)


def _names(node):
    while isinstance(node, cst.Attribute):
        node = node.value
    return [node] if isinstance(node, cst.Name) else []


def _simple(node) -> bool:
    """An expression that may be written more than once: a name, an attribute chain, a
    number."""
    if isinstance(node, cst.Name):
        return True
    if isinstance(node, cst.Attribute):
        return _simple(node.value)
    if isinstance(node, (cst.Integer, cst.Float, cst.SimpleString)):
        return True
    if isinstance(node, cst.UnaryOperation) and isinstance(node.expression, (cst.Integer, cst.Float)):
        return True
    return False


def formula(torch: str, rule: str, sig: tuple, template: str, *, defaults=None, literal=None,
            accept=None, returns=TENSOR, detail: str = "") -> None:
    """Port ``torch`` to ``template`` (a Python expression with ``{param}`` for each
    PyTorch parameter of ``sig``, ``{ops}`` and ``{ms}`` for MindSpore's modules).

    ``defaults``: parameter -> source text when the call omits it (a parameter with no
    default must be given). ``literal``: parameter -> function of the literal value
    giving its source text (the call is flagged when the value is not a literal).
    ``accept``: parameter -> predicate on the literal value (other values are flagged)."""
    defaults = defaults or {}
    literal = literal or {}
    accept = accept or {}

    def handler(site):
        bound = site.bound()
        if bound is None:
            site.finding(rule, f"{torch}: *args/**kwargs cannot be ported", comment=f"{torch} not ported")
            return None
        given = {}
        for name, arg, _ in bound:
            if name not in sig:
                site.finding(rule, f"{torch}: argument {name or 'extra'}= has no MindSpore form here",
                             comment=f"{torch} not ported")
                return None
            given[name] = arg.value
        values = {}
        for name in sig:
            if name in accept:
                node = given.get(name)
                value = None if node is None else site.literal(node, _MISSING)
                if node is not None and (value is _MISSING or not accept[name](value)):
                    site.finding(rule, f"{torch}: {name}={_code(node)} is not ported",
                                 comment=f"{torch} not ported")
                    return None
                continue
            if name in literal:
                node = given.get(name)
                value = site.literal(node, _MISSING) if node is not None else None
                if value is _MISSING:
                    site.finding(rule, f"{torch}: {name}= must be a literal", comment=f"{torch} not ported")
                    return None
                text = literal[name](value)
                if text is None:
                    site.finding(rule, f"{torch}: {name}={value!r} is not ported", comment=f"{torch} not ported")
                    return None
                values[name] = text
                continue
            explicit_none = (name in given and name in defaults and isinstance(given[name], cst.Name)
                             and given[name].value == "None")  # PyTorch's default, spelled out
            if name in given and not explicit_none:
                values[name] = given[name]
            elif name in defaults:
                values[name] = _Later(defaults[name])
            else:
                site.finding(rule, f"{torch}: {name} is required", comment=f"{torch} not ported")
                return None
        ops = _code(site.ref("mindspore.ops"))
        ms = _code(site.ref("mindspore"))
        sl = _code(site.ref("mindspore.scipy.linalg")) if "{sl}" in template else ""
        texts, lam_params, lam_args = {}, [], []
        # a lambda parameter must not hide a name an argument written as it is uses
        used = {n.value for v in values.values() if isinstance(v, cst.CSTNode) and _simple(v)
                for n in _names(v)}
        for name, v in values.items():
            if isinstance(v, _Later):
                continue
            if isinstance(v, str):
                texts[name] = v
                continue
            many = template.count("{" + name + "}") > 1
            if many and not _simple(v):
                short = _SHORT.get(name, name)
                while short in used:
                    short += "_"
                lam_params.append(short)
                lam_args.append(_code(v))
                texts[name] = short
            else:
                texts[name] = _code(v) if _simple(v) else f"({_code(v)})"
        for name, v in values.items():
            if isinstance(v, _Later):  # a default written with the other arguments
                text = v.template.format(ops=ops, ms=ms, sl=sl, **texts)
                texts[name] = text if text.isidentifier() or text.isdigit() else f"({text})"
        body = template.format(ops=ops, ms=ms, sl=sl, **texts)
        if lam_params:
            body = f"(lambda {', '.join(lam_params)}: {body})({', '.join(lam_args)})"
        new = parse_expression(body)
        site.edit(rule, new, detail=detail or f"{torch} -> formula of MindSpore ops")
        return new

    api(torch, rule=rule, sig=sig, handler=handler, returns=returns)


_MISSING = object()
#: the lambda parameter written for a PyTorch parameter (``input`` is a builtin's name)
_SHORT = {"input": "x", "other": "y"}


class _Later:
    """A default written in terms of the other arguments (``{x}.shape[-1]``)."""

    def __init__(self, template: str) -> None:
        self.template = template


def _multi_dot(site):
    """``multi_dot([a, b, c])`` -> ``ops.matmul(ops.matmul(a, b), c)``."""
    bound = site.bound()
    seq = bound[0][1].value if bound and len(bound) == 1 and bound[0][0] == "tensors" else None
    if not isinstance(seq, (cst.List, cst.Tuple)) or len(seq.elements) < 2 or any(
            isinstance(e, cst.StarredElement) for e in seq.elements):
        site.finding("LNA002", "multi_dot: only a list or tuple of two or more tensors written in "
                     "the call is ported", comment="torch.linalg.multi_dot not ported")
        return None
    new = seq.elements[0].value
    for e in seq.elements[1:]:
        new = cst.Call(func=site.ref("mindspore.ops.matmul"), args=[cst.Arg(new), cst.Arg(e.value)])
    site.edit("LNA002", new, detail="multi_dot -> a chain of mindspore.ops.matmul")
    return new


api("torch.linalg.multi_dot", rule="LNA002", sig=("tensors",), handler=_multi_dot, returns=TENSOR)

# ----------------------------------------------------------------------------- LNA001

_R2 = "0.7071067811865476"  # 1 / sqrt(2)
formula("torch.special.ndtr", "LNA001", ("input",),
        "0.5 * {ops}.erfc(-{input} * " + _R2 + ")")
# computed in float64 (where erfc underflows only below -37); below -20 the asymptotic
# series of the tail: -x^2/2 - log(-x) - log(2 pi)/2 + log(1 - 1/x^2 + 3/x^4)
formula("torch.special.log_ndtr", "LNA001", ("input",),
        "(lambda t: {ops}.where(t < -20, -0.5 * t * t - {ops}.log(-t) - 0.9189385332046727"
        " + {ops}.log1p(3 * t ** -4 - t ** -2), {ops}.log(0.5 * {ops}.erfc(t * -" + _R2 + "))))"
        "({input}.astype({ms}.float64)).astype(({input} * 1.0).dtype)")
# exp(x^2) * erfc(x) in float64 (exp overflows above 26.6); above 26 the asymptotic series
# 1 / (x sqrt(pi)) * (1 - 1/(2 x^2) + 3/(4 x^4))
formula("torch.special.erfcx", "LNA001", ("input",),
        "(lambda t: {ops}.where(t > 26, (1 - 0.5 * t ** -2 + 0.75 * t ** -4) / (t * 1.772453850905516), "
        "{ops}.exp(t * t) * {ops}.erfc(t)))({input}.astype({ms}.float64)).astype(({input} * 1.0).dtype)")
formula("torch.special.entr", "LNA001", ("input",),
        "{ops}.where({input} > 0, -{input} * {ops}.log({input}), "
        "{ops}.where({input} == 0, {ops}.zeros_like({input}), {input} * float('inf')))")
formula("torch.special.xlog1py", "LNA001", ("input", "other"),
        "{ops}.where(({input} == 0) & ~{ops}.isnan({other}), {ops}.zeros_like({input} * {other}), "
        "{input} * {ops}.log1p({other}))")
formula("torch.special.spherical_bessel_j0", "LNA001", ("input",),
        "{ops}.where({input} == 0, {ops}.ones_like({input}), {ops}.where({ops}.isinf({input}), "
        "{ops}.zeros_like({input}), {ops}.sin({input}) / {input}))")
for _key in ("torch.special.polygamma", "torch.polygamma"):
    formula(_key, "LNA001", ("n", "input"),
            "{ops}.polygamma({ms}.tensor({n}, {ms}.int64), {input})")

# ----------------------------------------------------------------------------- LNA002

# mindspore.scipy.linalg.eigh takes one matrix (and aborts the process on an empty one)
formula("torch.linalg.eigvalsh", "LNA002", ("A", "UPLO"),
        "({ops}.zeros({A}.shape[:-1], {A}.dtype) if {A}.size == 0 else {ops}.stack([{sl}.eigh("
        "m_, lower={UPLO}, eigvals_only=True) for m_ in {A}.reshape((-1,) + {A}.shape[-2:])])"
        ".reshape({A}.shape[:-1]))",
        literal={"UPLO": lambda v: {"L": "True", "U": "False", None: "True"}.get(v)})
formula("torch.linalg.svdvals", "LNA002", ("A", "driver"),
        "{ops}.svd({A}, compute_uv=False)", accept={"driver": lambda v: v is None})
formula("torch.linalg.solve", "LNA002", ("A", "B", "left"),
        "({ops}.MatrixSolve()({A}, {B}.unsqueeze(-1)).squeeze(-1) if {B}.ndim == 1 or ({B}.ndim == "
        "{A}.ndim - 1 and {B}.shape == {A}.shape[:-1]) else {ops}.MatrixSolve()({A}, {B}))",
        accept={"left": lambda v: v is True})
formula("torch.linalg.solve_triangular", "LNA002", ("A", "B", "upper", "left", "unitriangular"),
        "{ops}.MatrixTriangularSolve(lower={upper})({A}, {B})",
        literal={"upper": lambda v: {True: "False", False: "True"}.get(v)},
        accept={"left": lambda v: v is True, "unitriangular": lambda v: v is False})
formula("torch.linalg.vander", "LNA002", ("x", "N"),
        "{x}.unsqueeze(-1) ** {ops}.arange({N}).astype({x}.dtype)",
        defaults={"N": "{x}.shape[-1]"})
formula("torch.linalg.matrix_rank", "LNA002", ("A", "tol", "atol", "rtol", "hermitian"),
        "(lambda s: (s > s.max(axis=-1, keepdims=True) * max({A}.shape[-2:]) * "
        "(1.1920928955078125e-07 if {A}.dtype == {ms}.float32 else 2.220446049250313e-16))"
        ".sum(-1).astype({ms}.int64))({ops}.svd({A}, compute_uv=False))",
        accept={"tol": lambda v: v is None, "atol": lambda v: v is None, "rtol": lambda v: v is None,
                "hermitian": lambda v: v is False})

# ----------------------------------------------------------------------------- LNA003

register(
    "LNA003",
    "signbit: MindSpore's ops.signbit says False for -0.0",
    group=GROUP,
    seed=SEED,
    reference=REF,
    why="""
        ``torch.signbit`` tests the sign bit, so ``signbit(-0.0)`` is True; MindSpore
        2.10's ``ops.signbit`` (and ``Tensor.signbit``) compares with 0 and says False
        for -0.0. The port writes ``(x < 0) | ((x == 0) & (1 / x < 0))``: ``1 / -0.0`` is
        -inf, so a negative zero is told from a positive one. A NaN whose sign bit is set
        (``-float('nan')``) still gives False where PyTorch gives True: MindSpore 2.10 has
        no op that reads a float's bits.
    """,
    installed_note="""
        Verified on 2.10 (CPU): ``ops.signbit(Tensor([-0.0]))`` is False; the formula gives
        PyTorch's values on op_db's samples and on signed zeros, in float16/32/64 and int64.
    """,
    example="""
        import torch
        z = torch.tensor([-0.0, 0.0, -1.5, 2.0, float("-inf")])
        s = torch.signbit(z)
        t = z.signbit()
    """,
)

_SIGNBIT = "({x} < 0) | (({x} == 0) & (1 / {x} < 0))"
formula("torch.signbit", "LNA003", ("input",), _SIGNBIT.replace("{x}", "{input}"))


def _signbit_method(site):
    recv = site.receiver
    if site.updated.args:
        return None
    text = _code(recv) if _simple(recv) else "x"
    new = parse_expression(_SIGNBIT.format(x=text) if _simple(recv) else
                           f"(lambda x: {_SIGNBIT.format(x='x')})({_code(recv)})")
    site.edit("LNA003", new, detail="x.signbit() -> a comparison that tells -0.0 from 0.0")
    return new


method("signbit", "LNA003", unambiguous=True, handler=_signbit_method, returns=TENSOR)

# ----------------------------------------------------------------------------- LNA004

register(
    "LNA004",
    "abs of a complex tensor: MindSpore keeps the complex dtype",
    group=GROUP,
    seed=SEED,
    reference=REF,
    why="""
        ``torch.abs`` of a complex tensor is a real tensor (float32 for complex64,
        float64 for complex128). MindSpore 2.10's ``ops.abs`` and ``Tensor.abs`` return
        the magnitudes in the complex dtype (``2.236+0j``): a ``.mean()`` or a comparison
        after it stays complex. Where the port sees that the operand is complex (the
        result of a ``torch.fft`` transform that returns complex values, ``torch.complex``,
        ``torch.polar`` or ``torch.view_as_complex`` written in the call), it takes the
        real part of MindSpore's result: ``ops.abs(z).real()``. ``abs`` of a complex
        tensor held in a variable cannot be seen by the port: ``%%ms_parity`` reports the
        dtype (complex128 against float64) there.
    """,
    installed_note="""
        Verified on 2.10 (CPU): ``ops.abs`` of complex128 is Complex128 with the
        magnitudes as real parts; ``.real()`` of it is Float64 with PyTorch's values.
    """,
    example="""
        import torch
        s = torch.tensor([1.0, -2.0, 0.5, 3.0, 0.0, 1.5], dtype=torch.float64)
        mag = torch.abs(torch.fft.fft(s))
        mag2 = torch.fft.rfft(s).abs().mean()
    """,
)

#: PyTorch calls whose result is complex (by the last two parts of their dotted name)
_COMPLEX_CALLS = {f"fft.{n}" for n in ("fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft",
                                       "rfft2", "rfftn", "ihfft", "ihfft2", "ihfftn")} | {
    "torch.complex", "torch.polar", "torch.view_as_complex"}


def _dotted(node) -> str:
    parts = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if isinstance(node, cst.Name):
        parts.append(node.value)
    return ".".join(reversed(parts))


def complex_call(node) -> bool:
    """Is ``node`` (PyTorch source) a call whose result is complex?"""
    if not isinstance(node, cst.Call):
        return False
    name = _dotted(node.func)
    return ".".join(name.split(".")[-2:]) in _COMPLEX_CALLS or name in _COMPLEX_CALLS

# torch.linalg.lu_solve(LU, pivots, B) is ops.lu_solve(B, LU, pivots) (PyTorch's 1-based pivots)
formula("torch.linalg.lu_solve", "LNA002", ("LU", "pivots", "B", "left", "adjoint"),
        "{ops}.lu_solve({B}, {LU}, {pivots})",
        accept={"left": lambda v: v is True, "adjoint": lambda v: v is False})
# ops.cond returns float32 for a float64 input
formula("torch.linalg.cond", "LNA002", ("A", "p"),
        "{ops}.cond({A}, {p}).astype({ms}.float64 if {A}.dtype in ({ms}.float64, {ms}.complex128) "
        "else {ms}.float32)", defaults={"p": "None"})
# mindspore.scipy.linalg.lu_factor takes one matrix, with 0-based pivots (PyTorch's are 1-based)
formula("torch.linalg.lu_factor", "LNA002", ("A", "pivot"),
        "(lambda fs: ({ops}.stack([f[0] for f in fs]).reshape({A}.shape), ({ops}.stack([f[1] for f in fs]) + 1)"
        ".reshape({A}.shape[:-2] + (-1,))))([{sl}.lu_factor(m_) for m_ in {A}.reshape((-1,) + {A}.shape[-2:])])",
        accept={"pivot": lambda v: v is True}, returns="tuple")

# MindSpore's Bessel functions of the second kind give -inf/inf below 0 where PyTorch gives
# NaN (and bessel_y1 gives NaN at 0 where PyTorch gives -inf): the same values elsewhere
for _torch, _ms in (("bessel_y0", "bessel_y0"), ("modified_bessel_k0", "bessel_k0"),
                    ("modified_bessel_k1", "bessel_k1"), ("scaled_modified_bessel_k0", "bessel_k0e"),
                    ("scaled_modified_bessel_k1", "bessel_k1e")):
    formula(f"torch.special.{_torch}", "LNA001", ("input",),
            "{ops}.where({input} < 0, {ops}.full_like({input}, float('nan')), {ops}." + _ms + "({input}))")
formula("torch.special.bessel_y1", "LNA001", ("input",),
        "{ops}.where({input} < 0, {ops}.full_like({input}, float('nan')), {ops}.where({input} == 0, "
        "{ops}.full_like({input}, float('-inf')), {ops}.bessel_y1({input})))")

# tensorinv / tensorsolve: the matrix problem of the reshaped tensors
formula("torch.linalg.tensorinv", "LNA002", ("A", "ind"),
        "{ops}.inverse({A}.reshape(-1, {A}[(0,) * {ind}].size)).reshape({A}.shape[{ind}:] + {A}.shape[:{ind}])",
        defaults={"ind": "2"})
formula("torch.linalg.tensorsolve", "LNA002", ("A", "B", "dims"),
        "{ops}.MatrixSolve()({A}.reshape({B}.size, -1), {B}.reshape(-1, 1)).reshape({A}.shape[{B}.ndim:])",
        accept={"dims": lambda v: v is None})
