"""Rules that only report: what msmagic cannot port faithfully is flagged, never guessed."""

from msmagic.apis.names import receiver_methods
from msmagic.engine.spec import receiver_methods as declare_receiver_methods
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
        y = torch.special.erfcx(torch.ones(3))
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
        Notebooks define a function in one cell (``def save(): torch.save(net, path)``)
        and call it in a later one. When the function's port carries findings, the
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
        def save(net):
            torch.save(net, "net.pt")
        save(torch.nn.Linear(2, 2))
    """,
)
