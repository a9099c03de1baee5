"""Hand-written layers: user classes that are no ``nn.Module`` but hold their own tensors
and list them in a ``parameters()`` method (makemore's ``Linear``, ``BatchNorm1d``,
``Embedding``, ``Sequential``), trained by hand (``for p in parameters: p.data += -lr *
p.grad``).

MindSpore differentiates a function with respect to *Parameters* it reads, wherever they
live (``value_and_grad(fn, None, weights)``); a plain tensor read through an object's
attribute gets a gradient of zeros, silently. So the tensors such a class lists in
``parameters()`` are created as ``mindspore.Parameter`` (HWL001), an in-place update of
one of them keeps the Parameter (HWL002), and the training rules (TRN001) then compute
the gradients of the list the notebook trains; a plain tensor that list also holds
(``[C] + [p for layer in layers ...]``) is made a Parameter where the list is built
(HWL003). What the port knows about each class is kept for later cells
(:func:`layer_classes`)."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from msmagic.engine.build import code as _code
from msmagic.engine.build import parse_expression as build_expression
from msmagic.engine.kinds import TENSOR
from msmagic.engine.spec import statement_hook
from msmagic.rules.registry import register

GROUP = "Autograd and training"
SEED = "seeds/002 Gradient Derivation"

register(
    "HWL001",
    "A hand-written layer's tensors become Parameters",
    group=GROUP,
    why="""
        Teaching notebooks write their own layers as plain classes (``class Linear:`` with
        ``self.weight = torch.randn(...)`` in ``__init__``, ``__call__`` and a
        ``parameters()`` method returning ``[self.weight, self.bias]``), collect
        ``parameters = model.parameters()``, mark them with ``p.requires_grad = True`` and
        train by hand. PyTorch records the operations on any tensor that requires
        gradients. MindSpore differentiates a function only with respect to its inputs or
        to ``Parameter`` objects it reads (``mindspore.value_and_grad(fn, None,
        weights)``): a plain tensor read through ``self.weight`` gets a gradient of zeros,
        without an error. So every tensor a class lists in ``parameters()`` is created as
        ``mindspore.Parameter(...)`` in ``__init__`` (a ``None`` branch, ``torch.zeros(n)
        if bias else None``, stays ``None``). A Parameter computes like a tensor and takes
        ``requires_grad = True``. The port does this only when ``parameters()`` is built
        from ``self.<name>`` attributes and other objects' ``parameters()`` (a
        ``Sequential`` of such layers) and each of those attributes is created in
        ``__init__`` from a PyTorch tensor factory; otherwise the class is left as it is
        and the training step that would need it is flagged (TRN004).
    """,
    seed=f"{SEED} (a function is differentiated with respect to Parameters)",
    reference="r2.4.10/api_mapping/pytorch_api_mapping.md (torch.Tensor.requires_grad_)",
    example="""
        import torch

        class Linear:
            def __init__(self, fan_in, fan_out, bias=True):
                self.weight = torch.randn((fan_in, fan_out)) / fan_in**0.5
                self.bias = torch.zeros(fan_out) if bias else None

            def __call__(self, x):
                self.out = x @ self.weight
                if self.bias is not None:
                    self.out += self.bias
                return self.out

            def parameters(self):
                return [self.weight] + ([] if self.bias is None else [self.bias])

        torch.manual_seed(0)
        layer = Linear(3, 2)
        x = torch.ones(4, 3)
        y = layer(x)
        n_params = sum(p.numel() for p in layer.parameters())
    """,
)

register(
    "HWL002",
    "An in-place update of a hand-written layer's Parameter becomes ops.assign",
    group=GROUP,
    why="""
        ``layer.weight *= 0.1`` (under ``torch.no_grad()``, to make the last layer less
        confident) changes the tensor in place in PyTorch, so the list from
        ``parameters()`` and every other reference see the new values. On a MindSpore
        Parameter held by a plain object, ``*=`` computes a new tensor and rebinds the
        attribute to it: the attribute is then no Parameter, the list still holds the old
        one, and training would neither see the scaling nor move the weight the forward
        pass reads. The update becomes ``mindspore.ops.assign(layer.weight, layer.weight
        * 0.1)``, which writes into the Parameter. It applies to the attributes that
        HWL001 made Parameters (their names, on any receiver that is not a Module: a
        Module's Parameter attribute is updated in place by MindSpore's ``Cell``).
    """,
    seed=f"{SEED} (in-place updates of Parameters)",
    reference="r2.4.10/api_mapping/pytorch_api_mapping.md (mindspore.ops.assign)",
    example="""
        import torch

        class Linear:
            def __init__(self, fan_in, fan_out):
                self.weight = torch.ones((fan_in, fan_out))

            def __call__(self, x):
                return x @ self.weight

            def parameters(self):
                return [self.weight]

        layers = [Linear(3, 2)]
        params = [p for layer in layers for p in layer.parameters()]
        with torch.no_grad():
            layers[-1].weight *= 0.1
        first = params[0] * 1.0
        y = layers[-1](torch.ones(1, 3))
    """,
)

register(
    "HWL003",
    "A tensor listed beside hand-written layers' parameters becomes a Parameter",
    group=GROUP,
    why="""
        makemore's batch-norm lesson keeps the embedding table outside the layers:
        ``parameters = [C] + [p for layer in layers for p in layer.parameters()]``, and its
        forward pass starts with ``emb = C[Xb]``. The layers' tensors are Parameters
        (HWL001), and MindSpore differentiates the training step with respect to the
        Parameters in that list; ``C`` is a plain tensor, and a plain tensor among
        ``value_and_grad``'s weights gets a gradient of zeros, without an error (checked on
        MindSpore 2.10): the table would never train. So, where such a list is built, each
        plain tensor it names is made a Parameter first (``C = mindspore.Parameter(C)``,
        same values; a Parameter computes like a tensor), and the statements that read it
        belong to the forward pass. The port does this only for a list made of the
        ``parameters()`` of hand-written layers and lists of names that hold tensors.
    """,
    seed=f"{SEED} (a function is differentiated with respect to Parameters)",
    reference="r2.4.10/api_mapping/pytorch_api_mapping.md (torch.Tensor.requires_grad_)",
    example="""
        import torch

        class Linear:
            def __init__(self, fan_in, fan_out):
                self.weight = torch.randn((fan_in, fan_out)) / fan_in**0.5

            def __call__(self, x):
                return x @ self.weight

            def parameters(self):
                return [self.weight]

        torch.manual_seed(0)
        C = torch.randn((5, 2))
        layers = [Linear(2, 3)]
        parameters = [C] + [p for layer in layers for p in layer.parameters()]
        y = layers[0](C[torch.tensor([1, 3])])
        total = sum(p.sum() for p in parameters)
    """,
)

#: the session memory key: class name -> frozenset of its Parameter attributes, or None
#: for a class with a ``parameters()`` method the port could not make Parameters of
_MEMORY = "hand_written_layers"
#: the session memory key of :func:`mixed_lists`
_LISTS = "hand_written_lists"
#: in-place operator -> (the binary operator, the name of PyTorch's method)
_INPLACE = {cst.AddAssign: ("+", "add"), cst.SubtractAssign: ("-", "sub"), cst.MultiplyAssign: ("*", "mul"),
            cst.DivideAssign: ("/", "div")}


def _returned(method: cst.FunctionDef) -> Optional[cst.BaseExpression]:
    """The expression of a method whose body is (a docstring, comments and) one return."""
    body = [s for s in method.body.body] if isinstance(method.body, cst.IndentedBlock) else []
    stmts = [s for s in body if not (isinstance(s, cst.SimpleStatementLine) and len(s.body) == 1
                                     and isinstance(s.body[0], cst.Expr)
                                     and isinstance(s.body[0].value, cst.SimpleString))]
    if len(stmts) != 1 or not isinstance(stmts[0], cst.SimpleStatementLine) or len(stmts[0].body) != 1:
        return None
    small = stmts[0].body[0]
    return small.value if isinstance(small, cst.Return) and small.value is not None else None


def _self_attr(node) -> Optional[str]:
    if (isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == "self"):
        return node.attr.value
    return None


def delegates_to_parameters(node) -> bool:
    """``[p for layer in self.layers for p in layer.parameters()]``: the parameters of
    other objects (their classes say what those are)."""
    if not isinstance(node, (cst.ListComp, cst.GeneratorExp)) or not isinstance(node.elt, cst.Name):
        return False
    inner = node.for_in
    while inner.inner_for_in is not None:
        inner = inner.inner_for_in
    it = inner.iter
    return (isinstance(inner.target, cst.Name) and inner.target.value == node.elt.value and not inner.ifs
            and isinstance(it, cst.Call) and not it.args and isinstance(it.func, cst.Attribute)
            and it.func.attr.value == "parameters")


def _listed(node, out: set) -> bool:
    """Collect the ``self.<name>`` attributes a ``parameters()`` expression lists; False
    for a form the port does not read."""
    if isinstance(node, cst.List):
        for e in node.elements:
            name = _self_attr(e.value) if isinstance(e, cst.Element) else None
            if name is None:
                return False
            out.add(name)
        return True
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Add):
        return _listed(node.left, out) and _listed(node.right, out)
    if isinstance(node, cst.IfExp):
        return _listed(node.body, out) and _listed(node.orelse, out)
    return delegates_to_parameters(node)


def _is_tensor_factory(ctx, node) -> bool:
    """A PyTorch tensor factory call, possibly scaled (``torch.randn(...) / n**0.5``,
    ``0.01 * torch.randn(...)``)."""
    if isinstance(node, cst.BinaryOperation):
        return _is_tensor_factory(ctx, node.left) or _is_tensor_factory(ctx, node.right)
    if isinstance(node, cst.Call):
        qual = ctx.resolve(node.func) or ""
        return qual.startswith("torch.") and qual.rsplit(".", 1)[-1][:1].islower()
    return False


def _branches(node) -> list:
    """The values an assignment may bind: both branches of a conditional expression."""
    if isinstance(node, cst.IfExp):
        return _branches(node.body) + _branches(node.orelse)
    return [node]


def _is_none(node) -> bool:
    return isinstance(node, cst.Name) and node.value == "None"


def class_facts(ctx, cls: cst.ClassDef) -> Optional[frozenset]:
    """For a class with a ``parameters()`` method and no base class: the attributes it
    lists there when each is created in ``__init__`` from a tensor factory (or None), and
    assigned nowhere else; None for a class whose parameters the port cannot make
    Parameters; :data:`NOT_A_LAYER` for any other class. Computed once per class."""
    memo = ctx.scratch("hand_written_layers").setdefault("classes", {})
    if id(cls) in memo:
        return memo[id(cls)]
    memo[id(cls)] = found = _class_facts(ctx, cls)
    return found


#: what :func:`class_facts` returns for a class that is no hand-written layer
NOT_A_LAYER = frozenset({"<not a layer>"})


def _class_facts(ctx, cls: cst.ClassDef) -> Optional[frozenset]:
    if any(not (isinstance(b.value, cst.Name) and b.value.value == "object") for b in cls.bases):
        return NOT_A_LAYER
    methods = {s.name.value: s for s in cls.body.body if isinstance(s, cst.FunctionDef)} \
        if isinstance(cls.body, cst.IndentedBlock) else {}
    if "parameters" not in methods:
        return NOT_A_LAYER
    returned = _returned(methods["parameters"])
    attrs: set = set()
    if returned is None or not _listed(returned, attrs):
        return None
    made: set = set()
    for name, fdef in methods.items():
        for node in _assignments(fdef):
            for t in node.targets:
                attr = _self_attr(t.target)
                if attr not in attrs:
                    continue
                ok = name == "__init__" and len(node.targets) == 1 and all(
                    _is_none(v) or _is_tensor_factory(ctx, v) for v in _branches(node.value))
                if not ok:
                    return None
                made.add(attr)
    return frozenset(attrs) if made == attrs else None


def _assignments(fdef):
    """The ``Assign`` nodes of a function's statement lines, nested blocks included."""
    stack = [fdef.body]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.SimpleStatementLine):
            yield from (s for s in node.body if isinstance(s, cst.Assign))
        elif isinstance(node, (cst.IndentedBlock, cst.SimpleStatementSuite)):
            stack.extend(node.body)
        elif isinstance(node, cst.BaseCompoundStatement) and not isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            stack.append(node.body)
            orelse = getattr(node, "orelse", None)
            if orelse is not None:
                stack.append(orelse.body if not isinstance(orelse, cst.If) else orelse)
            for h in getattr(node, "handlers", ()) or ():
                stack.append(h.body)


def layer_classes(ctx) -> dict:
    """The hand-written layer classes of this session so far: name -> the attributes made
    Parameters, or None for one whose parameters stay plain tensors."""
    return ctx.session_memory(_MEMORY)


def trains_parameters(ctx) -> bool:
    """Do the ``parameters()`` of every hand-written layer class of the session return
    Parameters (so a list built from them can be differentiated)?"""
    classes = layer_classes(ctx)
    return bool(classes) and all(v is not None for v in classes.values())


def _enclosing_class(ctx) -> Optional[cst.ClassDef]:
    for s in reversed(ctx.enclosing_statements):
        if isinstance(s, cst.ClassDef):
            return s
    return None


@statement_hook("HWL001", cst.ClassDef)
def _remember_class(ctx, original, updated):
    facts = class_facts(ctx, original)
    classes = layer_classes(ctx)
    if facts is NOT_A_LAYER:
        classes.pop(original.name.value, None)  # the name now holds another class
    elif not ctx.classes and not ctx.functions:
        classes[original.name.value] = facts
    return updated


class _Wrap(cst.CSTTransformer):
    """Wrap the non-None branches of an assigned value in ``mindspore.Parameter(...)``."""

    def __init__(self, parameter: str):
        super().__init__()
        self.parameter = parameter

    def wrap(self, node):
        if isinstance(node, cst.IfExp):
            return node.with_changes(body=self.wrap(node.body), orelse=self.wrap(node.orelse))
        if _is_none(node):
            return node
        return build_expression(f"{self.parameter}({_code(node).strip()})")


def made_parameter(ctx, statement) -> Optional[str]:
    """The attribute a statement ``self.<name> = ...`` of a hand-written layer's
    ``__init__`` makes a Parameter (HWL001), or None. (A factory's ``requires_grad=True``
    there needs no finding: the Parameter is differentiated.)"""
    if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1
            and isinstance(statement.body[0], cst.Assign) and len(statement.body[0].targets) == 1):
        return None
    attr = _self_attr(statement.body[0].targets[0].target)
    if attr is None or not ctx.functions or ctx.functions[-1].name.value != "__init__":
        return None
    cls = _enclosing_class(ctx)
    facts = class_facts(ctx, cls) if cls is not None else None
    return attr if facts and facts is not NOT_A_LAYER and attr in facts else None


@statement_hook("HWL001", cst.SimpleStatementLine)
def _parameter_attribute(ctx, original, updated):
    if not isinstance(updated, cst.SimpleStatementLine) or len(updated.body) != 1 \
            or not isinstance(updated.body[0], cst.Assign):
        return updated
    attr = made_parameter(ctx, original)
    if attr is None:
        return updated
    cls = _enclosing_class(ctx)
    wrapper = _Wrap(_code(ctx.ref("mindspore.Parameter")).strip())
    new = updated.with_changes(body=[updated.body[0].with_changes(value=wrapper.wrap(updated.body[0].value))])
    ctx.edit("HWL001", new, node=original, api="torch.Tensor",
             detail=f"self.{attr} of {cls.name.value} (listed in its parameters()) -> mindspore.Parameter")
    return new


def parameter_attributes(ctx) -> frozenset:
    """The attribute names the hand-written layer classes of the session made Parameters
    (this cell's classes included, also before their definition ends)."""
    names = set()
    for v in layer_classes(ctx).values():
        names |= v or set()
    cls = _enclosing_class(ctx)
    if cls is not None:
        facts = class_facts(ctx, cls)
        if facts and facts is not NOT_A_LAYER:
            names |= facts
    return frozenset(names)


@statement_hook("HWL002", cst.SimpleStatementLine)
def _inplace_update(ctx, original, updated):
    if len(original.body) != 1 or not isinstance(original.body[0], cst.AugAssign) \
            or not isinstance(updated, cst.SimpleStatementLine) or len(updated.body) != 1 \
            or not isinstance(updated.body[0], cst.AugAssign):
        return updated
    small = original.body[0]
    op, method = _INPLACE.get(type(small.operator), (None, None))
    target = small.target
    if op is None or not isinstance(target, cst.Attribute) or target.attr.value not in parameter_attributes(ctx):
        return updated
    kind = ctx.kind_of(target.value)
    if kind is not None and kind.base != "object":
        return updated  # a Module's Parameter (Cell updates it in place) or anything else known
    new_target = _code(updated.body[0].target).strip()
    value_node = updated.body[0].value
    value = _code(value_node).strip()
    if not isinstance(value_node, (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.Integer, cst.Float)):
        value = f"({value})"
    assign = _code(ctx.ref("mindspore.ops.assign")).strip()
    new = updated.with_changes(body=[cst.Expr(build_expression(
        f"{assign}({new_target}, {new_target} {op} {value})"))])
    ctx.edit("HWL002", new, node=original, api=f"Tensor.__i{method}__",
             detail=f"{new_target} {op}= ... -> {assign}({new_target}, {new_target} {op} (...))")
    return new


def mixed_lists(ctx) -> dict:
    """The lists HWL003 found in this session so far: the name bound at the top level to a
    list of hand-written layers' parameters and tensors -> the names of those tensors (made
    Parameters)."""
    return ctx.session_memory(_LISTS)


def listed_tensors(ctx, value) -> Optional[list]:
    """``[C] + [p for layer in layers for p in layer.parameters()]``: the names of the
    tensors a list of hand-written layers' parameters also holds; None for another form,
    or for no such name."""
    parts: list = []

    def flatten(node) -> None:
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Add):
            flatten(node.left)
            flatten(node.right)
        else:
            parts.append(node)

    flatten(value)
    if not any(delegates_to_parameters(p) for p in parts):
        return None
    names: list = []
    for part in parts:
        if delegates_to_parameters(part):
            continue
        if not isinstance(part, cst.List):
            return None
        for e in part.elements:
            kind = ctx.kind_of(e.value) if isinstance(e, cst.Element) and isinstance(e.value, cst.Name) else None
            if kind is None or kind.base != TENSOR:
                return None
            names.append(e.value.value)
    return names or None


@statement_hook("HWL003", cst.SimpleStatementLine)
def _listed_tensor(ctx, original, updated):
    if len(original.body) != 1 or not isinstance(original.body[0], cst.Assign) \
            or len(original.body[0].targets) != 1 or ctx.classes:
        return updated
    target = original.body[0].targets[0].target
    names = listed_tensors(ctx, original.body[0].value) if trains_parameters(ctx) else None
    if not names:
        if isinstance(target, cst.Name) and not ctx.functions:
            mixed_lists(ctx).pop(target.value, None)  # the name holds something else now
        return updated
    parameter = _code(ctx.ref("mindspore.Parameter")).strip()
    made = [cst.parse_statement(f"{n} = {parameter}({n})\n") for n in dict.fromkeys(names)]
    made[0] = made[0].with_changes(leading_lines=updated.leading_lines)
    new = cst.FlattenSentinel([*made, updated.with_changes(leading_lines=())])
    if isinstance(target, cst.Name) and not ctx.functions:
        mixed_lists(ctx)[target.value] = tuple(dict.fromkeys(names))
    ctx.edit("HWL003", new, node=original, api="torch.Tensor",
             detail=f"{', '.join(dict.fromkeys(names))} (listed with the layers' parameters) -> mindspore.Parameter")
    return new
