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
        a finding. ``checkpoint_sequential(functions, segments, input)`` becomes a short
        definition that calls the modules (a ``SequentialCell``'s layers, or a list) one
        after the other on ``input``, the same reentrant rule applying.
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
    _reentrant_finding(site, reentrant)
    if kept:
        kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    func = args[0].value
    if not isinstance(func, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)) and not func.lpar:
        func = func.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])  # (lambda t: ...)(x)
    new = cst.Call(func=func, args=kept)
    site.edit("RCP001", new, detail="checkpoint(fn, *args) -> fn(*args) (no recomputation)")
    return new


def _reentrant_finding(site, reentrant) -> None:
    if reentrant is not False:
        how = "use_reentrant=True" if reentrant is True else (
            "no use_reentrant (reentrant is the installed PyTorch's default)" if reentrant is None else
            "use_reentrant not a literal")
        site.finding("RCP001", f"checkpoint with {how}: when no tensor argument requires gradients PyTorch "
                     "returns a result without gradients (the function's parameters get none); the port "
                     "differentiates through the function. Pass use_reentrant=False to match the port",
                     comment="reentrant checkpoint: gradients may differ when no input requires grad")


def _sequential_source(site):
    return lambda name: (
        f"def {name}(functions, segments, input):\n"
        f'    """Runs the modules one after the other (PyTorch\'s checkpoint_sequential, without\n'
        f'    its recomputation)."""\n'
        f"    if hasattr(functions, 'cells'):  # a SequentialCell: its layers\n"
        f"        functions = list(functions.cells())\n"
        f"    for function in functions:\n"
        f"        input = function(input)\n"
        f"    return input\n"
    )


def _checkpoint_sequential(site):
    args = list(site.updated.args)
    originals = list(site.original.args)
    positional = [a for a in args if a.keyword is None and not a.star]
    if len(positional) != 3 or any(a.star for a in args) or any(
            a.keyword is not None and a.keyword.value != "use_reentrant" for a in args):
        site.finding("RCP001", "checkpoint_sequential is ported for (functions, segments, input[, "
                     "use_reentrant=]) only", comment="checkpoint_sequential not ported")
        return None
    reentrant = None
    for arg, original in zip(args, originals):
        if arg.keyword is not None:
            reentrant = site.literal(original.value, None)
    _reentrant_finding(site, reentrant)
    name = site.define("checkpoint_sequential", _sequential_source(site),
                       ("torch.utils.checkpoint.checkpoint_sequential",))
    kept = [a.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))) for a in positional[:2]]
    kept.append(positional[2].with_changes(comma=cst.MaybeSentinel.DEFAULT))
    new = cst.Call(func=cst.Name(name), args=kept)
    site.edit("RCP001", new, detail="checkpoint_sequential -> the modules called in order")
    return new


module("torch.utils.checkpoint", None)
api("torch.utils.checkpoint.checkpoint", rule="RCP001", handler=_checkpoint, returns=None)
api("torch.utils.checkpoint.checkpoint_sequential", rule="RCP001", handler=_checkpoint_sequential,
    returns=None)
