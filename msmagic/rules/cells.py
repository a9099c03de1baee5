"""Modules become Cells: the class base, ``forward``, containers, the Module methods that
walk children and parameters, and training mode (PyTorch modules start in training
mode, MindSpore Cells in inference mode)."""

import re

import libcst as cst

from msmagic.engine.build import STATEMENT_TYPES, descendants, parse_expression
from msmagic.engine.build import code as _code
from msmagic.engine.spec import api, class_hook, function_hook, method, statement_hook
from msmagic.rules.registry import register

GROUP = "Modules and Cells"
MODE_GROUP = "Training mode"
NB = "seeds/004 Network Basic Unit: Cell"
REF = "r2.4.10/api_mapping/pytorch_api_mapping.md"

register(
    "CEL001",
    "nn.Module becomes nn.Cell",
    group=GROUP,
    why="""
        MindSpore's building block for networks is ``mindspore.nn.Cell``; it plays the role of
        ``torch.nn.Module``: attributes that are Cells become sub-cells, attributes that are
        Parameters become the cell's parameters, and calling the cell runs its computation.
        So a class deriving from ``nn.Module`` derives from ``nn.Cell`` instead, and
        ``isinstance(m, nn.Module)`` checks become checks against ``nn.Cell``. Call
        ``super().__init__()`` before assigning layers, exactly as in PyTorch. The method
        holding the computation is renamed as well (rule CEL002), and ported classes are put
        in training mode at the end of ``__init__`` (rule MOD001).
    """,
    seed="seeds/004 Network Basic Unit: Cell; seeds/002 nn APIs › nn.Module",
    reference=REF,
    example="""
        import torch
        import torch.nn as nn

        class Double(nn.Module):
            def forward(self, x):
                return x * 2

        net = Double()
        y = net(torch.ones(2, 3))
    """,
)

register(
    "CEL002",
    "forward becomes construct",
    group=GROUP,
    why="""
        Calling a PyTorch module runs its ``forward`` method; calling a MindSpore Cell runs its
        ``construct`` method, and ``Cell`` has no ``forward`` at all. A ``forward`` left in a
        ported class would never be called: ``net(x)`` would reach the base ``construct`` and
        fail. The method definition is renamed, and so are explicit calls to it
        (``self.forward(x)``, ``super().forward(x)``, ``model.forward(x)`` on a known
        module). Keep ``construct`` free of Python features MindSpore's graph mode cannot
        compile if you later switch from the default PyNative mode.
    """,
    seed=NB,
    reference=REF,
    example="""
        import torch
        import torch.nn as nn

        class AddOne(nn.Module):
            def forward(self, x):
                return x + 1

        net = AddOne()
        y = net.forward(torch.zeros(2))
    """,
)

register(
    "CEL003",
    "Sequential, ModuleList, ModuleDict become SequentialCell, CellList, CellDict",
    group=GROUP,
    why="""
        MindSpore's containers have other names: ``SequentialCell`` (positional layers, a
        list of layers or an ``OrderedDict`` of named layers, like ``Sequential``),
        ``CellList`` and ``CellDict``. Child names, and therefore parameter names such as
        ``0.weight`` or ``enc.weight``, are the same as PyTorch's. Two traps are handled:
        PyTorch's ``modules=`` keyword is passed positionally, because ``CellList`` and
        ``CellDict`` silently ignore an unknown keyword and come out empty; and ``CellDict``
        refuses containers (``SequentialCell``, ``CellList``, ``CellDict``) and ``None`` as
        values, which ``ModuleDict`` accepts. A ``ModuleDict`` given a container (nanoGPT's
        ``nn.ModuleDict(dict(wte=..., h=nn.ModuleList([...])))``) becomes ``ModuleDict``, a
        Cell defined in the cell that holds any cells under their keys (``d["h"]`` and
        ``d.h`` both work, and parameter names stay ``h.0.weight``); so does one given a
        ``None`` value. A container built
        outside a Module subclass is also put in training mode (rule MOD003).
    """,
    seed="seeds/004 Submodule Management",
    reference="r2.4.10/api_mapping/pytorch_diff/SequentialCell.md; r2.4.10/api_mapping/pytorch_diff/CellDict.md",
    installed_note="""
        Checked on MindSpore 2.10: ``CellList(modules=[...])`` and ``CellDict(modules={...})``
        build an empty container without an error (the keyword is swallowed by ``**kwargs``).
    """,
    example="""
        import torch
        import torch.nn as nn

        model = nn.Sequential(nn.Linear(4, 3), nn.ReLU())
        heads = nn.ModuleList([nn.Linear(3, 2), nn.Linear(3, 1)])
        x = torch.ones(2, 4)
        h = model(x)
        out = heads[0](h)
    """,
)

register(
    "CEL004",
    "Child and parameter walks use Cell's names",
    group=GROUP,
    why="""
        Cell offers the same walks as Module under other names: ``named_children()`` is
        ``name_cells().items()``, ``children()`` is ``cells()``, ``named_modules()`` is
        ``cells_and_names()`` (the cell itself first, with name ``''``), ``modules()`` is a
        generator over ``cells_and_names()``, ``named_parameters()`` is
        ``parameters_and_names()`` and ``parameters()`` is ``get_parameters()``; PyTorch's
        ``prefix=``/``recurse=`` become ``name_prefix=``/``expand=``. Names and order match
        PyTorch for Linear/Conv layers, containers and user classes. Watch two things:
        ``name_cells().items()`` and ``cells()`` are dictionary views, not iterators (use
        ``iter()`` before ``next()``), and MindSpore keeps BatchNorm running statistics as
        non-trainable Parameters (``moving_mean``, ``moving_variance``), so parameter walks
        and counts on models with BatchNorm include values that PyTorch keeps as buffers.
    """,
    seed="seeds/004 Parameters Management › Parameter Obtaining; seeds/004 Submodule Management",
    reference=REF,
    example="""
        import torch.nn as nn

        model = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))
        names = [n for n, _ in model.named_parameters()]
        children = [n for n, _ in model.named_children()]
        n_params = sum(p.numel() for p in model.parameters())
    """,
)

register(
    "CEL005",
    "add_module becomes insert_child_to_cell",
    group=GROUP,
    why="""
        Registering a child under a computed name is ``add_module(name, module)`` (or
        ``register_module``) in PyTorch and ``insert_child_to_cell(child_name, child_cell)``
        in MindSpore. The child then appears in the cell's child and parameter walks under
        that name, just as in PyTorch. One exception: ``SequentialCell`` runs only the
        children given to its constructor or to ``append()``, so a child inserted into it
        would be registered but never run. On a known Sequential the call becomes
        ``append(module)`` (the child is then named by its index, which is flagged); on a
        receiver of unknown type the call is flagged for you to check.
    """,
    seed="seeds/004 Submodule Management",
    reference=REF,
    installed_note="""
        Checked on MindSpore 2.10: ``SequentialCell.construct`` iterates the list its
        constructor and ``append()`` maintain; ``insert_child_to_cell`` on a SequentialCell
        registers the child and its parameters but the child is not run.
    """,
    example="""
        import torch
        import torch.nn as nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                for i in range(2):
                    self.add_module(f"fc{i}", nn.Linear(3, 3))

            def forward(self, x):
                return self.fc1(self.fc0(x))

        net = Net()
        y = net(torch.ones(2, 3))
    """,
)

register(
    "CEL006",
    "state_dict becomes parameters_dict, load_state_dict becomes load_param_into_net",
    group=GROUP,
    why="""
        A Cell's ``parameters_dict()`` is an ordered mapping from parameter name to
        Parameter, the counterpart of ``state_dict()``; loading is the function
        ``mindspore.load_param_into_net(net, params)``, which copies values into the cell's
        Parameters. msmagic passes ``strict_load=True``: without it MindSpore also matches
        parameters by name suffix, which PyTorch never does. Its result is the pair
        (parameters not loaded, entries not used), the same order as PyTorch's
        ``(missing_keys, unexpected_keys)``, but a mismatch is only reported there, never
        raised, so PyTorch's default ``strict=True`` is flagged: check the returned lists.
        Values must be Parameters (a ``parameters_dict()`` result), and keys of
        BatchNorm layers differ (``gamma``/``beta``/``moving_mean``/``moving_variance``).
    """,
    seed="seeds/004 Parameters Management › Parameter Saving and Loading",
    reference=REF,
    installed_note="""
        Checked on MindSpore 2.10: ``load_param_into_net(net, d)`` with the default
        ``strict_load=False`` loads ``x.weight`` into a parameter named ``weight`` (suffix
        match); with ``strict_load=True`` only exact names load. A dict of plain Tensors is
        rejected with a TypeError.
    """,
    example="""
        import torch.nn as nn

        src = nn.Linear(3, 2)
        dst = nn.Linear(3, 2)
        sd = src.state_dict()
        keys = list(sd.keys())
        missing, unexpected = dst.load_state_dict(sd, strict=False)
    """,
)

register(
    "MOD001",
    "Module subclasses are put in training mode at the end of __init__",
    group=MODE_GROUP,
    why="""
        A new PyTorch module is in training mode: dropout drops and BatchNorm normalises with
        batch statistics until ``eval()`` is called. A new MindSpore Cell is in inference
        mode until ``set_train()`` is called, so a model that a PyTorch notebook never
        switches to training mode would silently stop dropping activations after the port.
        ``self.set_train()`` is therefore appended to the ``__init__`` of every ported
        Module subclass; it switches the cell and all children created so far, and returns
        the cell; a direct subclass without ``__init__`` gets a three-line one doing this. A
        later ``model.eval()`` (ported to ``set_train(False)``) still works as in PyTorch.
        If ``__init__`` itself switches a child's mode, the appended call would override
        that and is flagged.
    """,
    seed="seeds/002 nn APIs › nn.Module; seeds/002 nn APIs › nn.Dropout; seeds/004 Training and Evaluation Mode Switching",
    reference="r2.4.10/api_mapping/pytorch_diff/Dropout.md",
    example="""
        import torch
        import torch.nn as nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 2)

            def forward(self, x):
                return self.fc(x)

        net = Net()
        flag = net.training
    """,
)

register(
    "MOD002",
    "train() and eval() become set_train(...)",
    group=MODE_GROUP,
    why="""
        MindSpore switches modes with one method: ``set_train(True)`` for training and
        ``set_train(False)`` for inference, recursively over children, returning the cell
        like ``train()``/``eval()`` do. ``train()``, ``train(mode)`` and ``eval()`` are
        rewritten to it. The mode is read through the same attribute in both frameworks,
        ``cell.training``, so code reading ``self.training`` (for example
        ``F.dropout(x, p, training=self.training)``) needs no change. Dropout and BatchNorm
        change behaviour with the mode exactly as in PyTorch.
    """,
    seed="seeds/004 Training and Evaluation Mode Switching",
    reference=REF,
    example="""
        import torch.nn as nn

        model = nn.Sequential(nn.Linear(4, 2), nn.Dropout(0.5))
        model.eval()
        flag_eval = model.training
        model.train()
        flag_train = model.training
    """,
)

register(
    "MOD003",
    "Mode-dependent layers built outside a Module get .set_train()",
    group=MODE_GROUP,
    why="""
        Dropout and BatchNorm layers and the containers holding layers start in training
        mode in PyTorch but in inference mode in MindSpore. Inside a Module subclass's
        ``__init__`` rule MOD001 covers them; a layer built anywhere else (top-level
        notebook code, a factory function, a ``forward``) would behave differently after
        the port, e.g. ``drop = nn.Dropout(0.5); y = drop(x)`` would return ``x``
        unchanged. Such a layer gets ``.set_train()`` chained (it returns the cell), so it
        starts in training mode as in PyTorch. Inside a container's arguments the chain is
        left to the container, which sets its children recursively.
    """,
    seed="seeds/002 nn APIs › nn.Dropout; seeds/002 nn APIs › nn.BatchNorm2d",
    reference="r2.4.10/api_mapping/pytorch_diff/Dropout.md",
    example="""
        import torch.nn as nn

        model = nn.Sequential(nn.Linear(4, 2), nn.Dropout(0.5))
        flag = model.training
    """,
)


register(
    "MOD004",
    "A layer built inside forward draws new weights at every call",
    group=GROUP,
    finding_only=True,
    why="""
        ``nn.Linear(512, 768)(context)`` or ``nn.LayerNorm(d)(x)`` written inside
        ``forward`` builds a new layer, with freshly drawn random weights, every time the
        model runs: the layer is not one of the model's parameters, so the optimizer never
        trains it and every call computes with other weights. Both frameworks do exactly
        that, so the port is faithful, but their random generators differ: the MindSpore
        side draws other weights than PyTorch, and every output computed through such a
        layer differs (parity cannot give the MindSpore layer PyTorch's weights, because
        the layer exists only during the call). It is usually a slip in the PyTorch code
        (the graykode tutorials build their output projection and LayerNorm this way):
        build the layer once in ``__init__`` (``self.proj = nn.Linear(...)``) and call
        ``self.proj`` in ``forward``; then it is trained and parity compares it. The call
        in ``forward`` is flagged, and so is each top-level statement of this and later
        cells that runs such a model (directly, or through a class or function that holds
        or calls it).
    """,
    seed=NB,
    reference=REF,
    example="""
        import torch
        import torch.nn as nn
        class Block(nn.Module):
            def forward(self, x):
                return nn.Linear(4, 4)(x).relu()
        block = Block()
        out = block(torch.randn(2, 4))
    """,
)

#: layer classes (by prefix of the torch.nn name) whose weights are drawn at random when
#: built (norm layers start from ones and zeros in both frameworks: built anew they agree)
_RANDOM_WEIGHTS = ("Linear", "Bilinear", "LazyLinear", "Conv", "LazyConv", "Embedding", "RNN", "LSTM", "GRU",
                   "MultiheadAttention", "Transformer")


def _random_layer(ctx, call: cst.Call):
    qual = ctx.resolve(call.func) if isinstance(call.func, (cst.Name, cst.Attribute)) else None
    if not qual or not qual.startswith("torch.nn.") or qual.count(".") != 2:
        return None
    return qual if qual.split(".")[-1].startswith(_RANDOM_WEIGHTS) else None


def _fresh_layer_owners(ctx) -> dict:
    """What runs a forward that builds a random layer at every call, for this cell and the
    later ones: name -> (what it builds, "class" / "instance" / "function"); a class holding
    or calling such a class is one too, and so are the names bound to their instances and
    the functions that use them."""
    return ctx.session_memory("layers_built_in_forward")


def _name_words(node) -> set:
    return set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", _code(node)))


@statement_hook("MOD004", cst.SimpleStatementLine)
def _layer_built_in_forward(ctx, original, updated):
    """Flag a layer with random weights built by a line of a Module's ``forward`` (the
    lines inside its compound statements are visited on their own)."""
    fns = ctx.functions
    if not (ctx.in_module_class and len(fns) == 1 and fns[0].name.value == "forward"):
        return updated
    for n in descendants(original):
        if type(n) is cst.Call:
            qual = _random_layer(ctx, n)
            if qual is None:
                continue
            layer = qual.split(".")[-1]
            ctx.finding("MOD004", f"{layer}(...) is built inside forward: it draws new random weights at every "
                        "call and is never trained; MindSpore draws other weights than PyTorch, so what it "
                        "computes differs (build it once in __init__)",
                        node=n, api=qual, comment=f"{layer} built at every forward call: new random weights")
            ctx.scratch("MOD004").setdefault(ctx.classes[-1].name, f"{qual} in {ctx.classes[-1].name}.forward")
    return updated


@statement_hook("MOD004", *STATEMENT_TYPES)
def _runs_a_model_building_layers(ctx, original, updated):
    """Remember the classes whose forward builds a random layer (and those holding them),
    the names bound to their instances and the functions using them; flag each top-level
    statement that runs one (``model(x)``, ``train(model)``)."""
    if ctx.depth != 0:
        return updated
    owners = _fresh_layer_owners(ctx)
    if isinstance(original, cst.ClassDef):
        name = original.name.value
        owners.pop(name, None)  # the name now holds this class
        built = ctx.scratch("MOD004").get(name)
        held = sorted(_name_words(original) & {k for k, (_, role) in owners.items() if role == "class"})
        if built is None and held:
            built = f"{owners[held[0]][0]}, through {held[0]}"
        if built is not None:
            owners[name] = (built, "class")
        return updated
    if not owners:
        return updated
    words = _name_words(original) & set(owners)
    if isinstance(original, cst.FunctionDef):  # a function that runs one runs it too
        owners.pop(original.name.value, None)
        if words:
            owners[original.name.value] = (owners[sorted(words)[0]][0], "function")
        return updated
    made_here = False
    for small in descendants(original):  # model = BERT(): model is one (in an `if` block too)
        if type(small) is cst.Assign:
            value = small.value
            made = (owners[value.func.value][0] if isinstance(value, cst.Call) and type(value.func) is cst.Name
                    and owners.get(value.func.value, ("", ""))[1] == "class" else None)
            for t in small.targets:
                if isinstance(t.target, cst.Name):
                    if made is not None:
                        owners[t.target.value] = (made, "instance")
                    elif owners.get(t.target.value, ("", ""))[1] == "instance":
                        owners.pop(t.target.value)  # the name now holds something else
            made_here = made_here or made is not None
    if made_here and isinstance(original, cst.SimpleStatementLine):
        return updated
    if not words:
        return updated
    runs = [n.func.value for n in descendants(original) if type(n) is cst.Call and type(n.func) is cst.Name
            and owners.get(n.func.value, ("", ""))[1] in ("instance", "function")]
    if runs:
        built = owners[runs[0]][0]
        what = (f"runs {runs[0]}, whose forward" if owners[runs[0]][1] == "instance"
                else f"calls {runs[0]}, which runs a model whose forward")
        ctx.finding("MOD004", f"{what} builds a layer with random weights at every call ({built}): they are "
                    "drawn anew each time, and MindSpore draws other weights than PyTorch, so the results here "
                    "differ", node=original, api=built.split(" ")[0],
                    comment="runs a model that builds a layer at every forward call")
    return updated


# ------------------------------------------------------------------ training mode

_CHAIN = "set_train"


def train_mode(site, new):
    """Chain ``.set_train()`` on ``new``, a mode-dependent layer (Dropout, BatchNorm,
    container) being built, unless it is built in a Module subclass's ``__init__``, which
    MOD001 ends with ``self.set_train()``. For layer rules of other groups too."""
    functions = site.functions
    if site.in_module_class and len(functions) == 1 and functions[0].name.value == "__init__":
        return new
    if site.inside_call_to(_CONTAINERS):
        return new  # the container's own set_train() reaches its children
    chained = cst.Call(func=cst.Attribute(value=new, attr=cst.Name(_CHAIN)))
    site.edit("MOD003", chained, detail=".set_train() chained: PyTorch layers start in training mode")
    return chained


# ------------------------------------------------------------------ containers

_CONTAINERS = {
    "torch.nn.Sequential": "mindspore.nn.SequentialCell",
    "torch.nn.ModuleList": "mindspore.nn.CellList",
    "torch.nn.ModuleDict": "mindspore.nn.CellDict",
}
_CONTAINER_KINDS = {"module:" + q for q in _CONTAINERS}


def _container(site):
    target = _CONTAINERS[site.api]
    args = []
    for a in site.updated.args:
        if a.keyword is not None and a.keyword.value == "modules":
            a = a.with_changes(keyword=None, equal=cst.MaybeSentinel.DEFAULT)
            site.changes.append("modules= passed positionally")
        args.append(a)
    func = site.ref(target)
    if site.api == "torch.nn.ModuleDict" and _check_dict_values(site):
        func = cst.Name(_module_dict_class(site))
        target = f"{func.value}, a Cell holding any cells (CellDict refuses containers)"
    new = site.updated.with_changes(func=func, args=args)
    site.edit("CEL003", new, detail=site.describe(f"{site.api} -> {target}"))
    return train_mode(site, new)


def _dict_items(value) -> list:
    """The value expressions of a ModuleDict's argument: a dict display, ``dict(k=v, ...)``
    or a list/tuple of (key, value) pairs; [] when they cannot be read."""
    if isinstance(value, cst.Dict):
        return [el.value for el in value.elements if isinstance(el, cst.DictElement)]
    if isinstance(value, (cst.List, cst.Tuple)):
        return [el.value.elements[1].value for el in value.elements
                if isinstance(el.value, cst.Tuple) and len(el.value.elements) == 2]
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == "dict":
        items = [a.value for a in value.args if a.keyword is not None]
        if len(value.args) == 1 and value.args[0].keyword is None:
            items += _dict_items(value.args[0].value)
        return items
    return []


def _check_dict_values(site) -> bool:
    """True when a value is a container or None, which CellDict refuses (TypeError, checked
    on MindSpore 2.10): the dict then becomes the defined class, which holds both."""
    if not site.original.args:
        return False
    return any((isinstance(item, cst.Name) and item.value == "None") or site.kind_of(item) in _CONTAINER_KINDS
               for item in _dict_items(site.original.args[0].value))


def _module_dict_class(site) -> str:
    cell = site.code(site.ref("mindspore.nn.Cell"))
    return site.define("ModuleDict", lambda n: (
        f"class {n}({cell}):\n"
        f'    """PyTorch\'s nn.ModuleDict: named child cells of any kind, None included\n'
        f'    (MindSpore\'s CellDict refuses SequentialCell, CellList, CellDict and None)."""\n'
        f"\n"
        f"    def __init__(self, modules=None):\n"
        f"        super().__init__()\n"
        f"        if modules is not None:\n"
        f"            self.update(modules)\n"
        f"\n"
        f"    def update(self, modules):\n"
        f"        for key, cell in dict(modules).items():\n"
        f"            self[key] = cell\n"
        f"\n"
        f"    def __getitem__(self, key):\n"
        f"        return self._cells[key]\n"
        f"\n"
        f"    def __setitem__(self, key, cell):\n"
        f"        self.insert_child_to_cell(key, cell)\n"
        f"\n"
        f"    def __delitem__(self, key):\n"
        f"        del self._cells[key]\n"
        f"\n"
        f"    def __contains__(self, key):\n"
        f"        return key in self._cells\n"
        f"\n"
        f"    def __len__(self):\n"
        f"        return len(self._cells)\n"
        f"\n"
        f"    def __iter__(self):\n"
        f"        return iter(self._cells)\n"
        f"\n"
        f"    def keys(self):\n"
        f"        return self._cells.keys()\n"
        f"\n"
        f"    def values(self):\n"
        f"        return self._cells.values()\n"
        f"\n"
        f"    def items(self):\n"
        f"        return self._cells.items()\n"
    ), ("torch.nn.ModuleDict",))


for _torch in _CONTAINERS:
    api(_torch, _CONTAINERS[_torch], rule="CEL003", handler=_container,
        returns="module:" + _torch)

api("torch.nn.Module", "mindspore.nn.Cell", rule="CEL001", attr=True)


# ------------------------------------------------------------------ forward / __init__

def _self_or_super(site) -> bool:
    """``self.forward(...)`` / ``super().forward(...)`` inside a Module subclass."""
    recv = site.receiver_original
    if not site.in_module_class:
        return False
    if isinstance(recv, cst.Name):
        return recv.value == "self"
    return isinstance(recv, cst.Call) and isinstance(recv.func, cst.Name) and recv.func.value == "super"


method("forward", "CEL002", receiver="module", target="construct", unambiguous=_self_or_super,
       returns="tensor")


@function_hook("CEL002")
def _module_hook(ctx, original, updated):
    name = original.name.value
    if name == "forward":
        new = updated.with_changes(name=cst.Name("construct"))
        ctx.edit("CEL002", new.name, node=original.name, api="torch.nn.Module.forward",
                 detail="def forward -> def construct")
        return new
    if name == "__init__":
        return _append_set_train(ctx, original, updated)
    return updated


def _append_set_train(ctx, original, updated):
    params = list(original.params.params)
    if not params or not isinstance(updated.body, cst.IndentedBlock):
        return updated
    owner = params[0].name.value
    stmt = cst.SimpleStatementLine(body=[cst.Expr(parse_expression(f"{owner}.{_CHAIN}()"))])
    new = updated.with_changes(body=updated.body.with_changes(body=[*updated.body.body, stmt]))
    ctx.edit("MOD001", stmt, node=original.name, api="torch.nn.Module.__init__",
             detail=f"{owner}.{_CHAIN}() appended: PyTorch modules start in training mode")
    if ctx.methods_called & {"train", "eval"}:
        ctx.finding(
            "MOD001", f"__init__ switches a mode itself (train()/eval()); the appended {owner}.{_CHAIN}() "
            "runs last and puts every child in training mode; move it above that call",
            node=original.name, api="torch.nn.Module.__init__",
            comment=f"appended {owner}.{_CHAIN}() overrides the mode set in __init__",
        )
    return new


@class_hook("MOD001")
def _init_if_missing(ctx, original, updated):
    """A direct ``nn.Module`` subclass without ``__init__`` gets one that sets the mode
    (a subclass of a ported class inherits the set_train() of its base's ``__init__``)."""
    body = updated.body
    if not isinstance(body, cst.IndentedBlock):
        return updated
    if any(isinstance(s, cst.FunctionDef) and s.name.value == "__init__" for s in body.body):
        return updated
    if not any(ctx.resolve(b.value) == "torch.nn.Module" for b in original.bases):
        return updated
    init = ctx.parse_statement(f"def __init__(self):\n    super().__init__()\n    self.{_CHAIN}()\n")
    stmts = list(body.body)
    at = next((i for i, s in enumerate(stmts) if isinstance(s, cst.FunctionDef)), len(stmts))
    if at < len(stmts):  # the new method takes the spacing above the first method
        init = init.with_changes(leading_lines=stmts[at].leading_lines)
        stmts[at] = stmts[at].with_changes(leading_lines=[cst.EmptyLine(indent=False)])
    stmts.insert(at, init)
    ctx.edit("MOD001", init, node=original.name, api="torch.nn.Module.__init__",
             detail=f"__init__ calling self.{_CHAIN}() added: PyTorch modules start in training mode")
    return updated.with_changes(body=body.with_changes(body=stmts))




# ------------------------------------------------------------------ module methods

def _no_args(site) -> bool:
    return not site.original.args


def _mode_call(site) -> bool:
    """``.train()`` / ``.train(True|False)`` / ``.train(mode=...)``."""
    args = site.original.args
    if not args:
        return True
    return len(args) == 1 and isinstance(site.literal(args[0].value), bool)


def _eval(site):
    new = site.updated.with_changes(
        func=site.updated.func.with_changes(attr=cst.Name(_CHAIN)),
        args=[cst.Arg(cst.Name("False"))],
    )
    site.edit("MOD002", new, detail=".eval() -> .set_train(False)")
    return new


method("train", "MOD002", receiver="module", target="set_train", sig=("mode",),
       unambiguous=_mode_call, returns="same")
method("eval", "MOD002", receiver="module", handler=_eval, unambiguous=_no_args,
       returns="same")


def _named_children(site):
    recv = site.receiver
    new = cst.Call(func=cst.Attribute(
        value=cst.Call(func=cst.Attribute(value=recv, attr=cst.Name("name_cells"))),
        attr=cst.Name("items"),
    ))
    site.edit("CEL004", new, detail=".named_children() -> .name_cells().items()")
    return new


def _modules(site):
    recv = site.code(site.receiver)
    new = site.parse(f"(cell for _, cell in {recv}.cells_and_names())")
    site.edit("CEL004", new, detail=".modules() -> generator over .cells_and_names()")
    return new


_REMOVE_DUPLICATE = (
    lambda site, arg: site.literal(arg.value, False) is not True,
    "MindSpore always lists a shared Parameter or Cell once; there is no switch to list "
    "duplicates",
)

method("parameters", "CEL004", receiver="module", target="get_parameters", sig=("recurse",),
       rename={"recurse": "expand"}, unambiguous=_no_args, returns="params")
method("named_parameters", "CEL004", receiver="module", target="parameters_and_names",
       sig=("prefix", "recurse", "remove_duplicate"),
       rename={"prefix": "name_prefix", "recurse": "expand"},
       unsupported={"remove_duplicate": _REMOVE_DUPLICATE},
       unambiguous=True, returns="named:tensor")
method("named_children", "CEL004", receiver="module", handler=_named_children,
       unambiguous=_no_args, returns="named:module")
method("children", "CEL004", receiver="module", target="cells", returns="iter:module")
method("named_modules", "CEL004", receiver="module", target="cells_and_names",
       sig=("memo", "prefix", "remove_duplicate"), rename={"prefix": "name_prefix"},
       unsupported={
           "memo": "cells_and_names has a `cells` set of already visited cells, but "
                   "PyTorch's memo semantics are not verified against it",
           "remove_duplicate": _REMOVE_DUPLICATE,
       },
       unambiguous=True, returns="named:module")
method("modules", "CEL004", receiver="module", handler=_modules, returns="iter:module")
# Cells of 2.10 have PyTorch's buffer API (verified by cases): kept as written
method("buffers", "CEL004", receiver="module", returns="iter:tensor")
method("named_buffers", "CEL004", receiver="module", returns="named:tensor")


def _add_module_shape(site) -> bool:
    """Two arguments, the first a string (literal or f-string), or a call on ``self``."""
    args = site.original.args
    strings = (cst.SimpleString, cst.FormattedString, cst.ConcatenatedString)
    return len(args) == 2 and (isinstance(args[0].value, strings) or _self_or_super(site))


def _add_module(site):
    """insert_child_to_cell, except on a SequentialCell: its construct runs the list
    built by __init__/append, so an inserted child would never run (MindSpore 2.10)."""
    kind = site.kind_of(site.receiver_original)
    if kind == "module:torch.nn.Sequential":
        child = site.arg("module")
        if child is None:
            return None
        new = site.updated.with_changes(
            func=site.updated.func.with_changes(attr=cst.Name("append")),
            args=[child.with_changes(keyword=None, equal=cst.MaybeSentinel.DEFAULT,
                                     comma=cst.MaybeSentinel.DEFAULT)],
        )
        name = site.arg("name")
        label = site.code(name.value).strip() if name is not None else "its name"
        site.edit("CEL005", new, detail=f".{site.original.func.attr.value}() on a Sequential -> .append()")
        site.finding("CEL005", "SequentialCell only runs children given to its constructor or "
                     f"append(); the child is appended and named by its index, not {label}",
                     comment="appended: child named by its index")
        return new
    new = site.apply(func=site.updated.func.with_changes(attr=cst.Name("insert_child_to_cell")))
    site.edit("CEL005", new, detail=site.describe(f".{site.original.func.attr.value}() -> .insert_child_to_cell()"))
    if kind is None and not _self_or_super(site):
        site.finding("CEL005", "if the receiver is a Sequential, use append(): SequentialCell "
                     "never runs a child added with insert_child_to_cell",
                     comment="on a SequentialCell use append()")
    return new


for _name in ("add_module", "register_module"):
    method(_name, "CEL005", receiver="module", handler=_add_module,
           sig=("name", "module"), rename={"name": "child_name", "module": "child_cell"},
           unambiguous=_add_module_shape, returns=None)


method("state_dict", "CEL006", receiver="module", target="parameters_dict",
       sig=("destination", "prefix", "keep_vars"),
       unsupported={
           "destination": "parameters_dict() always returns a new OrderedDict",
           "prefix": "parameters_dict() has no key prefix",
           "keep_vars": "parameters_dict() always returns the Parameters themselves",
       },
       returns=None)


def _load_state_dict(site):
    bound = site.bound()
    if bound is None:
        site.finding("GEN003", "arguments passed with * or ** cannot be checked against "
                     "load_param_into_net", comment="*args/**kwargs not checked")
        return None
    sd = None
    strict = True
    for name, arg, _ in bound:
        if name == "state_dict":
            sd = arg.value
        elif name == "strict":
            strict = site.literal(arg.value, True)
        else:
            site.finding("CEL006", f"{name}=: load_param_into_net has no such option",
                         comment=f"{name}= has no MindSpore equivalent, removed")
    if sd is None:
        return None
    new = cst.Call(func=site.ref("mindspore.load_param_into_net"), args=[
        cst.Arg(site.receiver, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
        cst.Arg(sd, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
        cst.Arg(cst.Name("True"), keyword=cst.Name("strict_load"),
                equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                                      whitespace_after=cst.SimpleWhitespace(""))),
    ])
    site.edit("CEL006", new, detail=".load_state_dict(sd) -> mindspore.load_param_into_net(net, sd, strict_load=True)")
    if strict is not False:
        site.finding(
            "CEL006",
            "strict=True: PyTorch raises on missing or unexpected keys; load_param_into_net only "
            "returns them as (not loaded, not used) lists",
            comment="mismatched keys are returned, not raised",
        )
    return new


method("load_state_dict", "CEL006", receiver="module", handler=_load_state_dict,
       sig=("state_dict", "strict", "assign"), returns=None)
