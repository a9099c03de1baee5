"""The API table: the bulk mappings of ``msmagic/apis/table.json`` and the port-time
policy that the verification records drive.

Each entry of the table is data. The fields, each with one spelling:

``target``      MindSpore function (``mindspore.ops.sin``) or, for ``Tensor.*`` keys,
                the MindSpore Tensor method name (``sin``).
``rule``        the rule that explains the entry (default by family, below).
``sig``         PyTorch parameter names in positional order (for renames and drops).
``ms_sig``      MindSpore parameter names in positional order.
``rename``      PyTorch parameter -> MindSpore parameter.
``drop``        PyTorch parameter -> rule id explaining why MindSpore needs no such argument.
``defaults``    MindSpore keyword -> source text written when PyTorch's default differs.
``unsupported`` PyTorch parameter -> why it cannot be ported (flagged and removed).
``cast``        dtype the result is cast to (``"int64"``), or a list with one dtype (or
                null) per element of a tuple result.
``fields``      names of a named-tuple result (``["values", "indices"]``).
``inplace``     ``"rebind"``: the in-place method becomes its out-of-place form and the
                name is rebound (``x.add_(y)`` -> ``x = x.add(y)``).
``pack``        the PyTorch API takes ``*size``; spread-out sizes become one tuple.
``returns``     kind of the result for receiver typing (default ``"tensor"``).
``random``      the API draws random numbers (parity copies its values across).
``flagged``     the installed MindSpore has no faithful counterpart: the reason. The call
                is left as PyTorch with a finding.
``caveat``      the counterpart differs only in a corner case the port cannot see (an empty
                inner dimension): the reason. The call is ported, with a finding (API006).
``note``        what the verification found that a user should know.

Port-time policy (from ``verification.json``): a table mapping is emitted silently only
for an argument pattern (number of positional arguments, keyword names) it was verified
with; any other pattern is ported and flagged. An entry whose verification found a
dtype that MindSpore computes differently is ported and flagged with that dtype.
"""

from __future__ import annotations

import libcst as cst

from msmagic import apis
from msmagic.engine import build as B
from msmagic.engine import spec as S
from msmagic.rules._util import pack_positional
from msmagic.rules.registry import register

GROUP = "API table"
REF = "r2.4.10/api_mapping/pytorch_api_mapping.md"

FUNCTION_RULE = "API001"
METHOD_RULE = "API002"
INPLACE_RULE = "API003"
CAST_RULE = "API004"
UNKNOWN_METHOD_RULE = "API005"
PATTERN_RULE = "API006"
FLAGGED_RULE = "API007"
SIGNATURE_RULE = "API008"  # engine.arguments checks emitted calls under this id

register(
    FUNCTION_RULE,
    "Functions whose MindSpore counterpart was verified on PyTorch's samples",
    group=GROUP,
    why="""
        These PyTorch functions (``torch.*``, ``torch.nn.functional.*``, ``torch.linalg.*``,
        ``torch.special.*``, ``torch.fft.*``) have a function in ``mindspore.ops`` that
        takes the same arguments and, run on PyTorch's own test samples
        (``op_db``), gave the same values, shapes and dtypes on the installed versions.
        Only the module changes. Each entry lists the argument patterns and dtypes it was
        verified with (``python -m msmagic apis``); a call with another pattern is still
        ported but flagged (API006), because the two libraries often disagree exactly on
        the rarely used arguments.
    """,
    seed="seeds/002 API Comparison › functional APIs (mapping table)",
    reference=REF,
    installed_note="""
        The table is generated and checked by ``make verify-apis`` against torch 2.13.0
        and MindSpore 2.10.0 on CPU; MindSpore's mapping tables list many of these
        functions as consistent, and the entries kept are those the installed version
        confirmed.
    """,
    example="""
        import torch
        x = torch.linspace(-1, 1, 6).reshape(2, 3)
        y = torch.logaddexp(x, x * 2)
        z = torch.hypot(x, y)
    """,
)

register(
    METHOD_RULE,
    "Tensor methods MindSpore's Tensor has with PyTorch's behaviour",
    group=GROUP,
    why="""
        ``mindspore.Tensor`` has many methods with PyTorch's names. Name alone proves
        nothing: several behave differently on the installed version (another result
        dtype, a tuple instead of a tensor, an in-place method that leaves the tensor
        unchanged). The methods in the table were run on PyTorch's test samples and gave
        PyTorch's values, shapes and dtypes, so they are kept as they are (or renamed,
        where MindSpore spells them differently). A method on a tensor that is not in the
        table is flagged (API005), never passed through unverified. A method kept as
        written is right whatever its receiver is, so it is not flagged (GEN002) where the
        port cannot tell whether the receiver is a tensor (``labels.eq(pred.view_as(labels))``
        in a function); nor are names only tensors have (``topk``, ``chunk``, ``view_as``...),
        which are ported there too. Python operators on tensors (``+``, ``//``, ``%``,
        ``@``, comparisons, ``x[idx]``...) are kept as written; they were run on PyTorch's
        samples too and are listed with the methods.
    """,
    seed="seeds/002 API Comparison › Tensor/Parameter",
    reference=REF,
    example="""
        import torch
        x = torch.linspace(-1, 1, 6).reshape(2, 3)
        y = x.abs().cumsum(1)
        z = x.clamp(min=0).prod(0)
    """,
)

register(
    INPLACE_RULE,
    "In-place Tensor methods become the out-of-place method and a rebinding",
    group=GROUP,
    why="""
        PyTorch's in-place methods (``x.add_(y)``, ``x.exp_()``) overwrite the tensor's
        memory. On the installed MindSpore CPU build many of the same-named methods exist
        but leave the tensor unchanged, so a faithful port computes the out-of-place form
        and rebinds the name: ``x = x.add(y)``. Inside an expression the rebinding is an
        assignment expression (``(x := x.add(y))``). The caveat is aliasing: another name
        for the same tensor (``z = x`` earlier, a function's caller, a list holding it)
        keeps the old values in MindSpore where PyTorch would have updated it. Inside a
        function the port is flagged for that reason, and an in-place call on an attribute
        or an element (``self.w.add_(...)``) is flagged and left unchanged.
    """,
    seed="seeds/002 API Comparison › Tensor/Parameter",
    reference=REF,
    installed_note="""
        Verified on 2.10 (CPU): ``x.add_(1)``, ``x.sub_(1)``, ``x.div_(2)``, ``x.exp_()``
        and ``x.floor_divide_(2)`` return a new tensor and leave ``x`` unchanged.
    """,
    example="""
        import torch
        x = torch.linspace(-1, 1, 6)
        x.mul_(3)
        x.exp_()
        y = x
    """,
)

register(
    CAST_RULE,
    "Index results are cast to PyTorch's int64",
    group=GROUP,
    why="""
        PyTorch returns indices (``argsort``, ``sort``, ``topk``, ``argmin``...) and counts as
        int64. The installed MindSpore returns int32 for several of them. The values are
        the same, but the dtype travels: int32 indices concatenated with int64 ones,
        compared, saved or used as class labels change behaviour. The port casts the
        index result to int64 (``.astype(mindspore.int64)``); for a (values, indices)
        tuple only the indices are cast.
    """,
    seed="seeds/002 API Comparison › functional APIs",
    reference=REF,
    installed_note="Verified on 2.10 (CPU): ops.argsort, ops.sort and ops.topk return int32 indices.",
    example="""
        import torch
        x = torch.tensor([[3.0, 1.0, 2.0], [0.5, 4.0, -1.0]])
        order = torch.argsort(x, dim=1)
        values, idx = torch.sort(x, dim=1, descending=True)
    """,
)

register(
    UNKNOWN_METHOD_RULE,
    "Tensor method with no verified MindSpore mapping",
    group=GROUP,
    finding_only=True,
    why="""
        The receiver is known to be a tensor, but the method is not in the verified table:
        either ``mindspore.Tensor`` has no such method, or it has one that computed
        something else on PyTorch's samples. The call is left as written and flagged, so
        the cell stays readable and the gap is visible. ``python -m msmagic apis``
        lists what is verified; port the call by hand with the ops listed there.
    """,
    seed="seeds/002 API Comparison › Tensor/Parameter",
    reference=REF,
    example="""
        import torch
        x = torch.ones(3)
        y = x.frobnicate()
    """,
)

register(
    PATTERN_RULE,
    "Mapping not verified for this argument pattern or dtype",
    group=GROUP,
    finding_only=True,
    why="""
        The mapping was verified by running both frameworks on PyTorch's samples, but not
        with the arguments this call passes (a keyword, or more positional arguments,
        than any verified sample used), or the verification found a dtype where
        MindSpore computes something else. The call is ported and flagged: check the
        result for this case, or run the cell under ``%%ms_parity``. Operators are kept as
        written and verified the same way (``x + y``, ``x // y``, ``x[idx]``...); the one
        that differs on 2.10 is ``~`` on an integer tensor (a logical not in MindSpore), so
        ``~t`` is flagged unless ``t`` is visibly a comparison.
    """,
    seed="seeds/002 API Comparison",
    reference=REF,
    example="""
        import torch
        x = torch.arange(6.0).reshape(2, 3)
        y = torch.logaddexp(x, x, out=None)
    """,
)

register(
    FLAGGED_RULE,
    "PyTorch APIs the installed MindSpore computes differently",
    group=GROUP,
    finding_only=True,
    why="""
        MindSpore has an API with the same name, but on the installed version it does not
        compute what PyTorch computes (another result shape or kind, complex values
        handled differently, a property that returns another type). Porting by name would
        be silently wrong, so the call is left as PyTorch and flagged with what differs.
    """,
    seed="seeds/002 API Comparison",
    reference=REF,
    example="""
        import torch
        x = torch.tensor([[1.0, 3.0], [2.0, 0.5]])
        m = x.diag()
    """,
)

register(
    SIGNATURE_RULE,
    "Arguments are checked against the installed MindSpore's signature of the target",
    group=GROUP,
    why="""
        A mapping that takes "the same arguments" is verified with the argument spellings
        PyTorch's samples use, but real code also passes the others: ``torch.rand(size=(3,
        4))``, ``torch.matmul(a, b, out=y)``, ``x.sum(dim=1, keepdim=True)``,
        ``torch.randint(0, 5, (3,), generator=g)``. Each emitted call is checked, at port
        time, against the parameters the installed MindSpore accepts for its target (read
        from MindSpore itself into ``msmagic/apis/signatures.json``; the port imports
        neither framework). What PyTorch's own signature says maps is mapped: a keyword
        MindSpore takes at the same position is passed by position or by MindSpore's name
        for it (``size=`` of ``torch.rand`` fills ``ops.rand(*size)``), and ``out=y``
        becomes a rebinding, because MindSpore functions return new tensors:
        ``y = ops.matmul(a, b)`` as a statement, ``(y := ops.matmul(a, b))`` where the
        value is used too. ``generator=`` is removed (RNG003: MindSpore's functions draw
        from the global seed). Any other argument MindSpore would reject with a TypeError
        is removed and flagged, so the cell runs and the difference is visible. Inside a
        function ``out=`` rebinds only the local name, which is flagged (another
        reference to the tensor, the caller's, keeps its old values).
    """,
    seed="seeds/002 API Comparison",
    reference=REF,
    installed_note="""
        MindSpore 2.10's Tensor methods are dispatched by C++ overloads (``Tensor.sum``
        takes ``dim=, keepdim=, *, dtype=`` or ``axis=, dtype=, keepdims=, initial=``); the
        generator reads them from the list MindSpore's argument parser prints for a call it
        rejects, since ``inspect`` sees no signature there.
    """,
    example="""
        import torch
        a = torch.linspace(-1, 1, 6).reshape(2, 3)
        b = torch.linspace(0, 1, 12).reshape(3, 4)
        y = torch.empty(2, 4)
        torch.matmul(a, b, out=y)
        r = torch.rand(size=(2, 3))
    """,
)

_RULE_BY_SHAPE = {"function": FUNCTION_RULE, "method": METHOD_RULE}


def entry_rule(key: str, fields: dict) -> str:
    if fields.get("rule"):
        return fields["rule"]
    if fields.get("flagged"):
        return FLAGGED_RULE
    if fields.get("inplace"):
        return INPLACE_RULE
    if fields.get("cast"):
        return CAST_RULE
    return METHOD_RULE if key.startswith("Tensor.") else FUNCTION_RULE


# ----------------------------------------------------------------------------- policy


def check_pattern(site, key: str) -> None:
    """Flag a call whose argument pattern or dtype the verification did not cover."""
    rec = apis.record(key)
    if not rec or rec.get("status") != "verified":
        return
    bound = site.bound()
    if bound is None:
        return  # *args/**kwargs: GEN003 says so
    positional = sum(1 for _, _, pos in bound if pos)  # a function's input counts, a receiver not
    keywords = {name for name, _, pos in bound if not pos}
    ok = rec.get("patterns", [])
    allowed_kw = set().union(*(set(p["keywords"]) for p in ok)) if ok else set()
    max_pos = max((p["positional"] for p in ok), default=0)
    extra = sorted(keywords - allowed_kw)
    if extra or positional > max_pos:
        what = f"keyword {', '.join(e + '=' for e in extra)}" if extra else f"{positional} positional arguments"
        site.finding(PATTERN_RULE, f"{key} was verified on PyTorch's samples, but not with {what}: "
                     "check the result for this call", comment=f"{key}: {what} not verified")
        return
    silent = {d: why for d, why in rec.get("dtypes", {}).items() if why.startswith(("differs", "partly differs"))}
    if silent:
        dts = ", ".join(f"{d} ({why})" for d, why in sorted(silent.items()))
        site.finding(PATTERN_RULE, f"{key}: MindSpore computes something else for {dts}; verified for "
                     f"{', '.join(d for d, w in sorted(rec['dtypes'].items()) if w == 'ok')}",
                     comment=f"{key}: some dtypes differ")


# ----------------------------------------------------------------------------- building


def _kw(name: str, value) -> cst.Arg:
    return cst.Arg(keyword=cst.Name(name), value=value,
                   equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                                         whitespace_after=cst.SimpleWhitespace("")))


def cast_result(site, new, cast):
    """``call.astype(mindspore.int64)``; for a tuple result, only the listed elements."""
    if isinstance(cast, str):
        return cst.Call(func=cst.Attribute(value=new, attr=cst.Name("astype")),
                        args=[cst.Arg(site.ref(f"mindspore.{cast}"))])
    names = [f"r{i}" for i in range(len(cast))]
    parts = []
    for n, c in zip(names, cast):
        parts.append(f"{n}.astype({site.code(site.ref(f'mindspore.{c}'))})" if c else n)
    lam = site.parse(f"(lambda {', '.join(names)}: ({', '.join(parts)}))")
    return cst.Call(func=lam, args=[cst.Arg(new, star="*")])


def _shared_with(site, name: str) -> str:
    """What else holds the memory of tensor ``name``, so that rebinding the name after an
    in-place update would leave it behind: the element of a container a ``for`` loop
    hands out, or the NumPy array ``torch.from_numpy`` wrapped. "" when nothing known."""
    for stmt in site.enclosing_statements[:-1]:
        if isinstance(stmt, cst.For) and B.binds(stmt, name, header_only=True):
            return "is an element of the container the loop iterates"
    value = site.assigned_call(name)
    if value is not None and site.resolve(value.func) == "torch.from_numpy":
        return "shares its memory with the NumPy array torch.from_numpy wrapped"
    return ""


def _rebind(site, key: str, new, recv=None, rule: str = INPLACE_RULE):
    """``x.add_(y)`` -> ``x = x.add(y)`` (a statement) or ``(x := x.add(y))``; ``recv``:
    the (original) tensor updated, by default the receiver (``torch.abs_(x)``: its first
    argument)."""
    recv = site.receiver_original if recv is None else recv
    if not isinstance(recv, cst.Name):
        site.finding(rule, f"{key} on {site.code(recv).strip()}: MindSpore's in-place method "
                     "does not update the tensor and an attribute or element cannot be rebound "
                     "faithfully; assign the out-of-place result yourself",
                     comment=f"{key}: in-place update not ported")
        return None
    name = recv.value
    shared = _shared_with(site, name)
    if shared:
        site.finding(rule, f"{key} is ported as `{name} = ...`, but {name} {shared}: that one "
                     "keeps the old values (MindSpore 2.10's in-place methods return a new tensor on CPU "
                     "and leave the receiver as it was)",
                     comment=f"{key}: rebinding updates only the name {name}")
    elif not site.at_top_level:
        site.finding(rule, f"{key} inside a function is ported as `{name} = ...`: only this name "
                     "is updated, other references to the tensor (the caller's) keep the old values",
                     comment=f"{key}: rebinding updates only the local name")
    if site.is_statement:
        def assign(line):
            body = []
            for stmt in line.body:
                if isinstance(stmt, cst.Expr) and stmt.value is new:
                    stmt = cst.Assign(targets=[cst.AssignTarget(cst.Name(name))], value=new,
                                      semicolon=stmt.semicolon)
                body.append(stmt)
            return line.with_changes(body=body)

        site.replace_line(assign)
        return new
    return cst.NamedExpr(target=cst.Name(name), value=new,
                         lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def make_handler(key: str, fields: dict):
    is_method = key.startswith("Tensor.")
    rule = entry_rule(key, fields)
    target = fields.get("target")

    def handler(site):
        if fields.get("flagged"):
            site.finding(FLAGGED_RULE, f"{key}: {fields['flagged']}", comment=f"{key} not ported: differs in MindSpore")
            return None
        if fields.get("caveat"):
            site.finding(PATTERN_RULE, f"{key}: {fields['caveat']}", comment=f"{key}: check the corner case")
        else:
            check_pattern(site, key)
        if is_method and target.startswith("mindspore."):
            # the function form: MindSpore's Tensor lacks the method or gets it wrong,
            # the op is right: ``x.mv(v)`` -> ``mindspore.ops.mv(x, v)``
            call = site.apply(func=site.ref(target))
            first = cst.Arg(site.receiver, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
                            if call.args else cst.MaybeSentinel.DEFAULT)
            new = call.with_changes(args=[first, *call.args])
        else:
            if is_method:
                func = site.updated.func
                if target and target != key.rsplit(".", 1)[-1]:
                    func = func.with_changes(attr=cst.Name(target))
            else:
                func = site.ref(target)
            new = site.apply(func=func)
        if fields.get("pack"):
            new = pack_positional(new)
        if fields.get("cast"):
            new = cast_result(site, new, fields["cast"])
            site.changes.append(f"result cast to {fields['cast']}")
        if fields.get("inplace") == "rebind":
            rebound = _rebind(site, key, new)
            if rebound is None:
                return site.updated
            new = rebound
            site.changes.append("in-place: name rebound")
        # logged even without a visible change: the badge names the verified mapping
        name = key.rsplit(".", 1)[-1]
        if not is_method:
            base = f"{key} -> {target}"
        elif target.startswith("mindspore."):
            base = f".{name}() -> {target}(x, ...)"
        else:
            base = f".{name}() -> .{target}()" if target != name else ""
        site.edit(rule, new, detail=site.describe(base))
        return new

    return handler


def _is_layer(key: str) -> bool:
    parts = key.split(".")
    return len(parts) == 3 and parts[:2] == ["torch", "nn"] and parts[2][:1].isupper()


def _fields_to_spec(key: str, fields: dict) -> dict:
    return dict(
        rule=entry_rule(key, fields),
        sig=tuple(fields.get("sig", ())),
        ms_sig=tuple(fields["ms_sig"]) if "ms_sig" in fields else None,
        rename=dict(fields.get("rename", {})),
        defaults=dict(fields.get("defaults", {})),
        drop=dict(fields.get("drop", {})),
        unsupported=dict(fields.get("unsupported", {})),
        handler=make_handler(key, fields),
        returns=fields.get("returns", f"module:{key}" if _is_layer(key) else S.TENSOR),
        random=bool(fields.get("random", False)),
    )


#: Tensor methods no common other type (ndarray, list, dict, str, a pandas frame) has:
#: ported even when the port cannot tell what the receiver is
TORCH_ONLY_METHODS = frozenset({"topk", "chunk", "view_as", "expand_as", "index_select", "narrow",
                                "masked_fill", "masked_select", "unsqueeze", "flip", "roll"})
#: fields that make the port change a method call's text
_CHANGING = ("rename", "defaults", "drop", "unsupported", "values", "cast", "inplace", "pack", "flagged")


def keeps_call(name: str, fields: dict) -> bool:
    """Does the table entry leave ``x.name(...)`` as written? Then the call is right
    whatever ``x`` is: a tensor (the verified same method) or any other value."""
    return fields.get("target") == name and not any(fields.get(f) for f in _CHANGING)


def build(key: str, fields: dict):
    """The engine entry (``Api`` or ``Method``) for one table entry."""
    spec = _fields_to_spec(key, fields)
    if key.startswith("Tensor."):
        name = key.split(".", 1)[1]
        # a receiver of unknown kind: a call kept as written, or a method only tensors
        # have, needs no guess (GEN002 is for the others)
        unambiguous = not fields.get("flagged") and (name in TORCH_ONLY_METHODS or keeps_call(name, fields))
        entry = S.Method(name=name, receiver=S.TENSOR, target=fields.get("target"), unambiguous=unambiguous,
                         **spec)
    else:
        entry = S.Api(torch=key, target=fields.get("target"), **spec)
    entry.fields = tuple(fields.get("fields", ()))
    entry.table_key = key
    return entry


# ----------------------------------------------------------------------------- members


def _real(site):
    """``x.real`` is a method in MindSpore 2.10: read as an attribute it is a bound method."""
    new = cst.Call(func=site.updated)
    site.edit(METHOD_RULE, new, detail=".real -> .real()")
    return new


def _flag_member(reason: str):
    def handler(site):
        if site.enclosing_calls:  # an argument of a call (``.to(x.device)``): that call's rule decides
            return None
        name = site.original.attr.value
        site.finding(FLAGGED_RULE, f"Tensor.{name}: {reason}", api=f"Tensor.{name}",
                     comment=f"Tensor.{name} differs in MindSpore")
        return None

    return handler


def keep_member(site):
    """Handler of an attribute that reads the same in MindSpore: nothing to change."""
    return None


# Tensor attributes that read the same on 2.10 (verified by cases): kept as they are.
for _name in ("shape", "ndim", "T", "mT", "itemsize", "nbytes", "dtype"):
    S.member(_name, METHOD_RULE, receiver=S.TENSOR, handler=keep_member,
             returns=S.TENSOR if _name in ("T", "mT") else None)
S.member("real", METHOD_RULE, receiver=S.TENSOR, handler=_real, returns=S.TENSOR)
S.member("imag", FLAGGED_RULE, receiver=S.TENSOR, returns=S.TENSOR, handler=_flag_member(
    "a method in MindSpore 2.10 (and PyTorch refuses .imag of a real tensor); call x.imag() for complex x"))
S.member("device", FLAGGED_RULE, receiver=S.TENSOR, handler=_flag_member(
    "MindSpore 2.10 returns a string ('CPU') where PyTorch returns a torch.device; "
    "a MindSpore tensor has no per-tensor device"))
for _name in ("H", "mH"):
    S.member(_name, FLAGGED_RULE, receiver=S.TENSOR, returns=S.TENSOR, handler=_flag_member(
        "MindSpore 2.10 transposes without conjugating: the same for real tensors only"))


@S.operator_hook(PATTERN_RULE, cst.BitInvert)
def _invert(ctx, node) -> None:
    """``~t`` is kept, but on 2.10 MindSpore's ``~`` of an integer tensor is a logical not
    (bool result) where PyTorch's is a bitwise not: flagged unless the operand is visibly
    boolean (a comparison)."""
    if not isinstance(node.expression, cst.Comparison) and ctx.kind_of(node.expression) == S.TENSOR:
        ctx.finding(PATTERN_RULE,
                    "~ on a tensor: verified for bool tensors only; on an integer tensor MindSpore 2.10 "
                    "computes a logical not (bool result) where PyTorch computes a bitwise not",
                    api="Tensor.__invert__", comment="~ verified for bool tensors only")


def table_entries(table: dict) -> list:
    """The engine entries of the table's APIs that no hand-written rule maps."""
    apis = {e.torch for e in S.DECLARED if isinstance(e, S.Api)}
    methods = {e.name for e in S.DECLARED
               if isinstance(e, S.Method) and e.receiver in (S.TENSOR, "any")}
    out = []
    for key, fields in sorted(table.items()):
        entry = build(key, fields)
        if isinstance(entry, S.Method):
            if entry.name in methods:
                continue
            methods.add(entry.name)
        elif key in apis:
            continue
        out.append(entry)
    return out
