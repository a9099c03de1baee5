"""Stage: declarative argument binding. A call's arguments are bound to the PyTorch
signature of its entry (``ArgSpec.sig``) and rewritten by the entry's one spelling of each
difference: renamed, value-transformed, dropped (with the rule that explains why),
unsupported (flagged) and defaults that differ between the frameworks. Functions and
methods share it.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from msmagic.engine import build

STAR_ARGS_RULE = "GEN003"


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
    PyTorch call) applied; what changed is noted in ``ctx.changes`` and the edit log."""
    e = spec if spec is not None else ctx.entry
    rule_id = getattr(e, "rule", "") or ctx.entry.rule
    call = ctx.updated
    bound = bind(e.sig, call.args)
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
            continue
        if name in e.unsupported:
            spec = e.unsupported[name]
            pred, reason = spec if isinstance(spec, tuple) else (None, spec)
            if pred is None or pred(ctx, arg):
                ctx.finding(
                    rule_id, f"{name}={ctx.code(arg.value).strip()}: {reason}",
                    comment=f"{name}= has no MindSpore equivalent, removed",
                )
                continue
            if name not in e.values:  # a harmless value (PyTorch's default):
                # MindSpore has no such parameter, so passing it on would raise
                ctx.changes.append(f"dropped {name}= (default value)")
                continue
            # otherwise the value transform below decides
        out_name = e.rename.get(name, name) if name else None
        value = arg.value
        if name in e.values:
            new_value = e.values[name](ctx, arg)
            if isinstance(new_value, tuple):  # (new keyword, value)
                out_name, new_value = new_value
            if new_value is False:  # the transform removed the argument
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
    for ms_name, default in e.defaults.items():
        text, rule = default if isinstance(default, tuple) else (default, rule_id)
        torch_names = {p for p, m in e.rename.items() if m == ms_name} | {ms_name}
        if present & torch_names:
            continue
        if any(a.keyword is not None and a.keyword.value == ms_name for a in new_args):
            continue
        new_args.append(build.keyword_arg(ms_name, build.parse_expression(text)))
        ctx.changes.append(f"added {ms_name}={text}")
        if rule != rule_id:
            ctx.edit(rule, None, detail=f"added {ms_name}={text}")
    changes = {"args": build.join_args(new_args, call.args)}
    if func is not None:
        changes["func"] = func
    return call.with_changes(**changes)

