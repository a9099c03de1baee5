"""Stage: declarative argument binding. A call's arguments are bound to the PyTorch
signature of its entry (``ArgSpec.sig``) and rewritten by the entry's one spelling of each
difference: renamed, value-transformed, dropped (with the rule that explains why),
unsupported (flagged) and defaults that differ between the frameworks. Functions and
methods share it.

Then the emitted call is checked against the installed MindSpore's signature of its
target (``msmagic/apis/signatures.json``, generated; rule API008): a keyword the target
does not take is mapped where PyTorch's signature says what it is (passed by position,
or by the target's own name at that position), ``out=`` becomes a rebinding of the name
(:func:`out_target`), ``generator=`` is dropped with its rule, and anything else is
removed with a finding, so the code stays runnable and the gap is visible.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from msmagic import apis
from msmagic.engine import build

STAR_ARGS_RULE = "GEN003"
SIGNATURE_RULE = "API008"
#: rule explaining why a ``generator=`` has no MindSpore counterpart
GENERATOR_RULE = "RNG003"


def bind(sig: tuple, args) -> Optional[list[tuple[Optional[str], cst.Arg, bool]]]:
    """(PyTorch parameter name, Arg, passed positionally) for each argument; ``None``
    when ``*args``/``**kwargs`` make binding impossible."""
    out = []
    pos = 0
    for arg in args:
        if arg.star:
            return None
        if arg.keyword is None:
            out.append((sig[pos] if pos < len(sig) else None, arg, True))
            pos += 1
        else:
            out.append((arg.keyword.value, arg, False))
    return out


def apply(ctx, func=None, spec=None) -> cst.Call:
    """The call of ``ctx`` (a :class:`~msmagic.engine.context.Context`) with its entry's
    argument spec (or ``spec``, another :class:`~msmagic.engine.spec.ArgSpec` for the same
    PyTorch call) applied; what changed is noted in ``ctx.changes`` and the edit log.
    (The call the entry finally emits is checked against its target's signature by
    :func:`check`, called by the walk.)"""
    e = spec if spec is not None else ctx.entry
    rule_id = getattr(e, "rule", "") or ctx.entry.rule
    call = ctx.updated
    bound = bind(e.sig, call.args)
    spread = None
    if (bound is None and call.args and call.args[-1].star == "**"
            and not any(a.star for a in call.args[:-1])):
        # f(x, **kw): the explicit arguments bind as usual; a default that differs goes
        # under the mapping, which still wins where it names the parameter
        # (**{"reduction": 'mean', **kw}); a key whose spelling or value changes cannot
        # be seen inside it, so such an entry is flagged (an unsupported key that passes
        # through is a TypeError in MindSpore, not a wrong value)
        spread = call.args[-1]
        bound = bind(e.sig, call.args[:-1])
        if e.rename or e.values or e.drop:
            ctx.finding(
                STAR_ARGS_RULE,
                f"the keys of a ** mapping cannot be checked against {ctx.api}'s MindSpore "
                "counterpart (renamed parameters pass through as written)",
                comment="*args/**kwargs not checked",
            )
    if bound is None:
        if e.has_arg_rules:
            ctx.finding(
                STAR_ARGS_RULE,
                f"arguments passed with * or ** cannot be checked against {ctx.api}'s "
                "MindSpore counterpart",
                comment="*args/**kwargs not checked",
            )
        return call.with_changes(func=func) if func is not None else call
    ms_sig = e.ms_sig if e.ms_sig is not None else tuple(e.rename.get(p, p) for p in e.sig)
    new_args: list[cst.Arg] = []
    present = set()
    positional_ok = True
    for name, arg, positional in bound:
        present.add(name)
        if name in e.drop:
            ctx.changes.append(f"dropped {name}=")
            ctx.edit(e.drop[name], None, detail=f"{name}= dropped: {ctx.code(arg.value).strip()}")
            build.carry_comments(new_args, arg)
            continue
        if name in e.unsupported:
            spec = e.unsupported[name]
            pred, reason = spec if isinstance(spec, tuple) else (None, spec)
            if pred is None or pred(ctx, arg):
                ctx.finding(
                    rule_id, f"{name}={ctx.code(arg.value).strip()}: {reason}",
                    comment=f"{name}= has no MindSpore equivalent, removed",
                )
                build.carry_comments(new_args, arg)
                continue
            if name not in e.values:  # a harmless value (PyTorch's default):
                # MindSpore has no such parameter, so passing it on would raise
                ctx.changes.append(f"dropped {name}= (default value)")
                build.carry_comments(new_args, arg)
                continue
            # otherwise the value transform below decides
        out_name = e.rename.get(name, name) if name else None
        value = arg.value
        if (out_name in e.defaults and name not in e.values and isinstance(value, cst.Name)
                and value.value == "None"):
            # ``dtype=None`` is PyTorch's default spelled out: the default MindSpore needs
            # written (not None, which MindSpore reads as its own default)
            default = e.defaults[out_name]
            text = default[0] if isinstance(default, tuple) else default
            value = build.parse_expression(text)
            ctx.changes.append(f"{name}=None is PyTorch's default: {out_name}={text}")
        if name in e.values:
            new_value = e.values[name](ctx, arg)
            if isinstance(new_value, tuple):  # (new keyword, value)
                out_name, new_value = new_value
            if new_value is False:  # the transform removed the argument
                build.carry_comments(new_args, arg)
                continue
            if new_value is not None and new_value is not arg.value:
                value = new_value
                if not any(c.startswith(f"{name} ") for c in ctx.changes):
                    ctx.changes.append(f"{name} value ported")
        keep_pos = (
            positional
            and positional_ok
            and out_name is not None
            and len(new_args) < len(ms_sig)
            and ms_sig[len(new_args)] == out_name
        ) or (positional and out_name is None)
        if out_name != name and name is not None and not keep_pos:
            ctx.changes.append(f"{name}= -> {out_name}=")
        if keep_pos:
            new_args.append(arg.with_changes(value=value))
        else:
            positional_ok = False
            new_args.append(arg.with_changes(keyword=cst.Name(out_name), value=value,
                                        equal=build.KEYWORD_EQUAL))
    under_spread = []
    for ms_name, default in e.defaults.items():
        text, rule = default if isinstance(default, tuple) else (default, rule_id)
        torch_names = {p for p, m in e.rename.items() if m == ms_name} | {ms_name}
        if present & torch_names:
            continue
        if any(a.keyword is not None and a.keyword.value == ms_name for a in new_args):
            continue
        if spread is not None:
            under_spread.append(cst.DictElement(cst.SimpleString(repr(ms_name)),
                                                build.parse_expression(text)))
            ctx.changes.append(f"added {ms_name}={text} unless the ** mapping names it")
        else:
            new_args.append(build.keyword_arg(ms_name, build.parse_expression(text)))
            ctx.changes.append(f"added {ms_name}={text}")
        if rule != rule_id:
            ctx.edit(rule, None, detail=f"added {ms_name}={text}")
    if spread is not None:
        if under_spread:
            spread = spread.with_changes(
                value=cst.Dict([*under_spread, cst.StarredDictElement(spread.value)]))
        new_args.append(spread)
    changes = {"args": build.join_args(new_args, call.args)}
    if func is not None:
        changes["func"] = func
    return call.with_changes(**changes)


# ----------------------------------------------------------------------------- signatures


def _positional_params(overload) -> list:
    return [p for p in overload if p[1] in (apis.POSITIONAL_ONLY, apis.EITHER, apis.SPREAD)]


def _takes_any_positionals(overload) -> bool:
    """``*args``, or one list of ints that takes its ints spread out (``x.tile(2, 1)``)."""
    return any(p[1] == apis.VAR_POSITIONAL for p in overload) or [
        p[1] for p in _positional_params(overload)] == [apis.SPREAD]


def _accepts_keyword(overload, name: str, n_positional: int) -> bool:
    positional = _positional_params(overload)
    for i, (pname, kind, _) in enumerate(positional):
        if pname == name:
            return kind in (apis.EITHER, apis.SPREAD) and i >= n_positional
    if any(p[0] == name and p[1] == apis.KEYWORD_ONLY for p in overload):
        return True
    return any(p[1] == apis.VAR_KEYWORD for p in overload)


def binds(overload, n_positional: int, keywords) -> bool:
    """Does a call with ``n_positional`` positional arguments and these keywords bind to
    the overload (no unknown keyword, not too many positionals, no known-required
    parameter left out)?"""
    positional = _positional_params(overload)
    if n_positional > len(positional) and not _takes_any_positionals(overload):
        return False
    if not all(_accepts_keyword(overload, k, n_positional) for k in keywords):
        return False
    for i, (pname, kind, default) in enumerate(positional):
        if i >= n_positional and default is False and pname not in keywords:
            return False
    return all(p[0] in keywords for p in overload if p[1] == apis.KEYWORD_ONLY and p[2] is False)


def _torch_position(ctx, name: str, offset: int) -> Optional[int]:
    """Where PyTorch's signature puts the parameter ``name``, counted in the MindSpore
    call (``offset``: 1 when a method's receiver became the call's first argument): from
    the entry's ``sig``, else from PyTorch's own signature."""
    sig = getattr(ctx.entry, "sig", ()) or ()
    if name in sig:
        return sig.index(name) + offset
    for overload in apis.torch_overloads(ctx.api) or ():
        names = [p[0] for p in _positional_params(overload)]
        if name in names:
            return names.index(name) + offset
        if any(p[0] == name and p[1] == apis.VAR_POSITIONAL for p in overload):
            return len(names) + offset  # ``x.repeat(repeats=...)`` for ``repeat(*repeats)``
    return None


def _torch_name(ctx, position: int, offset: int) -> Optional[str]:
    """The PyTorch parameter at a position of the MindSpore call."""
    position -= offset
    if position < 0:
        return None
    sig = getattr(ctx.entry, "sig", ()) or ()
    if position < len(sig):
        return sig[position]
    for overload in apis.torch_overloads(ctx.api) or ():
        names = [p[0] for p in _positional_params(overload)]
        if position < len(names):
            return names[position]
    return None


def _fit(ctx, overload, args: list, offset: int):
    """Rewrite the arguments to bind to ``overload``: ([new args], [changes],
    [(rule, reason, comment)], out value or None)."""
    positional = [a for a in args if a.keyword is None]
    keywords = [a for a in args if a.keyword is not None]
    params = _positional_params(overload)
    varargs = next((p[0] for p in overload if p[1] == apis.VAR_POSITIONAL), None)
    if varargs is None and _takes_any_positionals(overload):
        varargs = params[0][0]  # ``dims+``: the ints spread out fill it
    changes: list = []
    problems: list = []
    out = None
    # positionals beyond what the target takes: by keyword when it takes PyTorch's name
    if varargs is None and len(positional) > len(params):
        for i, arg in enumerate(positional[len(params):], start=len(params)):
            name = _torch_name(ctx, i, offset)
            text = build.code(arg.value).strip()
            if name is not None and _accepts_keyword(overload, name, len(params)) and name not in {
                    a.keyword.value for a in keywords}:
                keywords.insert(0, arg.with_changes(keyword=cst.Name(name), equal=build.KEYWORD_EQUAL))
                changes.append(f"positional {name} passed as {name}=")
            else:
                problems.append((SIGNATURE_RULE, f"{text} (positional argument {i + 1}"
                                 f"{f', {name}' if name else ''}): the MindSpore target takes no more "
                                 "positional arguments; removed", f"{name or 'argument'} removed"))
        positional = positional[:len(params)]
    # keywords in PyTorch's positional order, so each can take the next position
    where = {id(a): _torch_position(ctx, a.keyword.value, offset) for a in keywords}
    kept: list = []  # (index among the keywords, Arg): they keep the call's order
    for index, arg in sorted(enumerate(keywords), key=lambda ia: (where[id(ia[1])] is None, where[id(ia[1])] or 0,
                                                                    ia[0])):
        name = arg.keyword.value
        n_pos = len(positional)
        if _accepts_keyword(overload, name, n_pos):
            kept.append((index, arg))
            continue
        text = build.code(arg.value).strip()
        if name == "out":
            if isinstance(arg.value, cst.Name) and arg.value.value == "None":
                changes.append("out=None dropped")
            else:
                out = arg.value  # the walk binds the result to it
            continue
        if name == "generator":
            problems.append((GENERATOR_RULE, f"generator={text}: MindSpore's random functions draw from the "
                             "global seed (mindspore.set_seed), not from a Generator; removed",
                             "generator= removed, draws follow mindspore.set_seed"))
            continue
        if name == varargs and n_pos == len(params):
            positional.append(arg.with_changes(keyword=None, equal=cst.MaybeSentinel.DEFAULT))
            changes.append(f"{name}= passed by position (*{name})")
            continue
        slot = where[id(arg)]
        if slot is not None and slot == n_pos and (slot < len(params) or varargs is not None):
            positional.append(arg.with_changes(keyword=None, equal=cst.MaybeSentinel.DEFAULT))
            changes.append(f"{name}= passed by position")
            continue
        if (slot is not None and slot < len(params) and params[slot][1] in (apis.EITHER, apis.SPREAD)
                and slot >= n_pos and params[slot][0] not in {a.keyword.value for _, a in kept}):
            kept.append((index, arg.with_changes(keyword=cst.Name(params[slot][0]))))
            changes.append(f"{name}= -> {params[slot][0]}=")
            continue
        problems.append((SIGNATURE_RULE, f"{name}={text}: the MindSpore target has no such parameter; removed",
                         f"{name}= removed (no MindSpore parameter)"))
    return positional + [a for _, a in sorted(kept, key=lambda ia: ia[0])], changes, problems, out


def check(ctx, call: cst.Call, target: str) -> cst.Call:
    """``call`` (to the MindSpore ``target``) made to bind to the installed MindSpore's
    signature of the target: unchanged when it already does (or when the signature is
    unknown); otherwise its keywords and surplus positionals are mapped, or removed with
    a finding (API008). ``out=`` is removed and its value left in ``ctx.out`` (the walk
    binds the result to it)."""
    overloads = apis.mindspore_overloads(target)
    if overloads is None or any(a.star for a in call.args):
        return call
    # a method written as a function (``x.mv(v)`` -> ``ops.mv(x, v)``): its receiver is
    # the call's first argument, so PyTorch's positions count one more
    offset = 1 if getattr(ctx.entry, "receiver", None) == "tensor" and not target.startswith("Tensor.") else 0
    n_pos = sum(1 for a in call.args if a.keyword is None)
    keywords = [a.keyword.value for a in call.args if a.keyword is not None]
    if any(binds(o, n_pos, keywords) for o in overloads):
        return call
    best = None
    for overload in overloads:
        args, changes, problems, out = _fit(ctx, overload, list(call.args), offset)
        n = sum(1 for a in args if a.keyword is None)
        fits = binds(overload, n, [a.keyword.value for a in args if a.keyword is not None])
        score = (not fits, len(problems), len(changes))
        if best is None or score < best[0]:
            best = (score, args, changes, problems, out)
    _, args, changes, problems, out = best
    short = target.replace("mindspore.", "")
    for rule, reason, comment in problems:
        ctx.finding(rule, f"{ctx.api} -> {short}: {reason}", comment=comment)
    if not best[0][0] and not problems and not changes and out is None:
        return call
    if best[0][0]:  # still does not bind (a required parameter is missing)
        ctx.finding(SIGNATURE_RULE, f"{ctx.api} -> {short}: the call does not match MindSpore's signature "
                    f"({'; '.join(o and ', '.join(p[0] for p in o) or '(no arguments)' for o in overloads)}); "
                    "check its arguments", comment=f"arguments do not match {short}")
    if out is not None:
        ctx.out = out
    for change in changes:
        ctx.edit(SIGNATURE_RULE, None, detail=f"{ctx.api} -> {short}: {change}")
    return call.with_changes(args=build.join_args(args, call.args) if args else [])
