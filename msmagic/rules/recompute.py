"""Gradient checkpointing: ``torch.utils.checkpoint.checkpoint(fn, *args)`` trades memory
for a second forward pass; the values it returns are ``fn(*args)``'s."""

import libcst as cst

from msmagic.engine.spec import api, module
from msmagic.rules.registry import register

GROUP = "Gradient checkpointing"
REF = "r2.4.10/api_mapping/pytorch_api_mapping.md"

register(
    "RCP001",
    "checkpoint(fn, *args, use_reentrant=False) becomes fn(*args)",
    group=GROUP,
    why="""
        ``torch.utils.checkpoint.checkpoint(fn, *args, **kwargs)`` returns
        ``fn(*args, **kwargs)`` without keeping ``fn``'s intermediate activations: the
        backward pass runs ``fn`` again to rebuild them, with the random state it had the
        first time (``preserve_rng_state=True``), so values and gradients are those of a
        plain call. It saves memory only. The port calls ``fn(*args, **kwargs)``; the
        memory saving is lost (MindSpore's own counterpart is ``Cell.recompute()``, which
        marks a Cell, not a call). ``use_reentrant=False`` is PyTorch's recommended form
        and is ported silently. ``use_reentrant=True``, or no ``use_reentrant`` (reentrant
        is the default of the installed PyTorch), differs when no tensor argument requires
        gradients: PyTorch then returns a result without gradients (``fn``'s parameters get
        none, and a ``backward`` through it raises), where the port differentiates
        through ``fn``; so that call is ported with a finding. ``context_fn=``,
        ``preserve_rng_state=False`` (the recomputation draws new dropout masks),
        ``determinism_check``, ``debug`` and ``early_stop`` are dropped; the first two with
        a finding.
    """,
    seed="seeds/002 API Comparison › functional APIs (mapping table)",
    reference=REF,
    example="""
        import torch
        import torch.nn as nn
        from torch.utils.checkpoint import checkpoint
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.block = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
            def forward(self, x):
                return checkpoint(self.block, x, use_reentrant=False)
        torch.manual_seed(0)
        net = Net()
        y = net(torch.arange(6.0).reshape(2, 3))
    """,
)

_DROPPED = ("use_reentrant", "context_fn", "determinism_check", "debug", "early_stop", "preserve_rng_state")


def _checkpoint(site):
    args = list(site.updated.args)
    originals = list(site.original.args)
    if not args or args[0].keyword is not None or args[0].star:
        site.finding("RCP001", "checkpoint(...) without its function as the first positional argument is not "
                     "ported", comment="checkpoint not ported")
        return None
    kept, reentrant = [], None
    for arg, original in zip(args[1:], originals[1:]):
        name = arg.keyword.value if arg.keyword is not None else None
        if name not in _DROPPED:
            if arg.star == "**":
                site.finding("RCP001", f"checkpoint(..., {site.code(arg).strip()}): the unpacked keywords are "
                             "passed to the function; if they hold use_reentrant= or other checkpoint options "
                             "the call fails", comment="checkpoint **kwargs passed on")
            kept.append(arg)
            continue
        value = site.literal(original.value, None)
        if name == "use_reentrant":
            reentrant = value
        elif name == "preserve_rng_state" and value is not True:
            site.finding("RCP001", "preserve_rng_state=False: PyTorch's recomputation draws new random numbers "
                         "(dropout masks) for the backward pass; the port computes once, as with True",
                         comment="preserve_rng_state=False dropped")
        elif name == "context_fn":
            site.finding("RCP001", "context_fn=: the contexts PyTorch enters around the forward and the "
                         "recomputation are not entered by the port", comment="context_fn dropped")
    if reentrant is not False:
        how = "use_reentrant=True" if reentrant is True else (
            "no use_reentrant (reentrant is the installed PyTorch's default)" if reentrant is None else
            "use_reentrant not a literal")
        site.finding("RCP001", f"checkpoint with {how}: when no tensor argument requires gradients PyTorch "
                     "returns a result without gradients (the function's parameters get none); the port "
                     "differentiates through the function. Pass use_reentrant=False to match the port",
                     comment="reentrant checkpoint: gradients may differ when no input requires grad")
    if kept:
        kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    func = args[0].value
    if not isinstance(func, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)) and not func.lpar:
        func = func.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])  # (lambda t: ...)(x)
    new = cst.Call(func=func, args=kept)
    site.edit("RCP001", new, detail="checkpoint(fn, *args) -> fn(*args) (no recomputation)")
    return new


module("torch.utils.checkpoint", None)
api("torch.utils.checkpoint.checkpoint", rule="RCP001", handler=_checkpoint, returns=None)
