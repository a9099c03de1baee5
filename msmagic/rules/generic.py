"""Rules that only report: what msmagic cannot port faithfully is flagged, never guessed."""

import libcst as cst

from msmagic.apis.names import receiver_methods
from msmagic.engine.build import code as _code
from msmagic.engine.build import descendants
from msmagic.engine.spec import receiver_methods as declare_receiver_methods
from msmagic.engine.spec import statement_hook
from msmagic.rules.registry import register

GROUP = "General"

register(
    "GEN001",
    "PyTorch API with no known MindSpore mapping",
    group=GROUP,
    finding_only=True,
    why="""
        msmagic only rewrites an API when a mapping for it has been verified by running
        both frameworks on the installed versions. Anything else is left as PyTorch
        (``torch.`` is imported again for it) and flagged, so the cell stays runnable and
        the gap is visible instead of silently computing something different. Look the
        API up in MindSpore's PyTorch API mapping table and port it by hand.
    """,
    seed="seeds/002 API Comparison › functional APIs (mapping table)",
    example="""
        import torch
        y = torch.special.airy_ai(torch.ones(3))
    """,
)

register(
    "GEN002",
    "Method call on a value of unknown type",
    group=GROUP,
    finding_only=True,
    why="""
        Tensor and Module methods are rewritten only when msmagic knows the receiver is a
        tensor or a module (it was created by a PyTorch call, is a ``forward`` argument,
        a layer attribute, a loop variable over a loader, the parameter of a function every
        call of which passes a tensor, a name an earlier cell bound...) or when the method
        name and call shape cannot belong to anything else. Otherwise the call is left
        unchanged and flagged: porting it on a guess could change a NumPy array or a user
        object (``a.std()`` is the population deviation in NumPy, the sample deviation in
        PyTorch). A call the port would keep as written anyway is right for any receiver and
        is not flagged. A method only PyTorch's Tensor, Module or Optimizer has
        (``t.new(...)``, ``t.resize_(...)``, ``opt.add_param_group(...)``) is flagged on a
        value msmagic cannot type, since it fails in MindSpore if the value is what it
        seems. The finding says why the kind is unknown: a function parameter no call
        shows, or whose calls pass different kinds (a tensor here, a NumPy array there).
    """,
    seed="seeds/004 Network Basic Unit: Cell",
    example="""
        import torch
        def spread(t):
            return t.std()
    """,
)

for _cls, _names in receiver_methods().items():
    declare_receiver_methods(_cls, _names, "GEN002")

register(
    "GEN003",
    "Arguments passed with * or ** are not checked",
    group=GROUP,
    finding_only=True,
    why="""
        When arguments arrive through ``*args`` or ``**kwargs`` msmagic cannot see their
        names, so it cannot rename them or check their defaults against the MindSpore
        API. The call's target is ported, the arguments are not; check them by hand. Where
        the port rewrites the call around its arguments (``scatter_add(**args)`` becomes a
        function taking ``dim``, ``index`` and ``src`` in order), it cannot be ported at
        all: the call is left as written and flagged.
    """,
    seed="seeds/002 API Comparison",
    example="""
        import torch.nn as nn
        cfg = dict(in_features=4, out_features=2, bias=False)
        layer = nn.Linear(**cfg)
    """,
)

register(
    "GEN004",
    "Call of a function whose port is flagged",
    group=GROUP,
    finding_only=True,
    why="""
        Notebooks define a function in one cell (``def scaled(x): return
        torch.special.airy_ai(x) * 2``, an API with no MindSpore mapping) and call it in a
        later one. When the function's port carries findings, the
        ``# msmagic:`` comments sit in its definition, but the statement that fails or
        differs when the cell runs is the call. So a top-level statement that calls such a
        function, directly or through the functions it calls (``fit()`` calling
        ``loss_batch()``), is flagged too: the finding names the chain of calls and the
        rules flagged inside. Port the flagged lines of the definition by hand (or follow
        their comments) and run its cell again; the call is then no longer flagged.
    """,
    seed="seeds/002 API Comparison",
    example="""
        import torch
        def scaled(x):
            return torch.special.airy_ai(x) * 2
        y = scaled(torch.ones(3))
    """,
)

register(
    "GEN005",
    "A PyTorch class or function picked by name at run time",
    group=GROUP,
    finding_only=True,
    why="""
        ``getattr(nn, rnn_type)(ninp, nhid, nlayers, dropout=dropout)`` (PyTorch's
        word-language-model example chooses LSTM or GRU by a command-line flag) names the
        class only when the code runs. The port maps ``nn`` to ``mindspore.nn`` but cannot
        see which class is meant, so it can neither check that MindSpore has a class of that
        name (``mindspore.nn.Linear`` does not exist: it is ``Dense``) nor map its arguments
        (``bias=`` is ``has_bias=`` in MindSpore's LSTM). The call is left as written and
        flagged; where the name is one of a few known classes, construct each one
        explicitly so the port can map it.
    """,
    seed="seeds/002 API Comparison",
    example="""
        import torch.nn as nn
        rnn_type = "GRU"
        rnn = getattr(nn, rnn_type)(4, 8, 2)
    """,
)


def picked_by_name(ctx, node) -> bool:
    """Is ``node`` a call ``getattr(<a torch module>, <name>)``?"""
    return (type(node) is cst.Call and type(node.func) is cst.Name and node.func.value == "getattr"
            and len(node.args) >= 2 and (ctx.resolve(node.args[0].value) or "").split(".")[0] == "torch")


@statement_hook("GEN005", cst.SimpleStatementLine)
def _picked_by_name(ctx, original, updated):
    if "getattr(" not in _code(original) or not ctx.torch_in_scope:
        return updated
    for n in descendants(original):
        if picked_by_name(ctx, n):
            module = ctx.resolve(n.args[0].value)
            ctx.finding("GEN005", f"getattr({_code(n.args[0].value).strip()}, {_code(n.args[1].value).strip()}) picks "
                        f"a member of {module} by name at run time: the port cannot map it or its arguments to "
                        "MindSpore", node=n, api=f"{module}.<getattr>",
                        comment="picked by name at run time; not ported")
    return updated
