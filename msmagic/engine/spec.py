"""Mapping entries: what each PyTorch API, method and attribute becomes (the PaConvert
idea), and the hooks rules attach to statements. Declared by the rule modules, installed
into the engine's tables by the rules package in its one explicit rule order.

Most PyTorch APIs port by an entry: a MindSpore target and an :class:`ArgSpec` (argument
renames, values that must be transformed, arguments dropped with a rule explaining why,
arguments with no MindSpore equivalent, defaults that differ). Hard cases attach a
``handler``: a function of a :class:`msmagic.engine.context.Context` returning the
replacement expression (or None to keep the PyTorch code, flagged).

Tables, filled by :func:`install`:

* ``APIS``: fully qualified PyTorch names (``torch.nn.Linear``, ``torch.float32``),
  reached through the cell's imports.
* ``METHODS``: methods called on a value (``x.size(0)``, ``model.eval()``), chosen by
  what the receiver is known to be (its :class:`~msmagic.engine.kinds.Kind`).
* ``MEMBERS``: attributes read from a value (``bn.running_mean``).
* ``MODULES``: PyTorch module paths and their MindSpore counterpart.
* ``RECEIVER_ONLY_METHODS``: method names only PyTorch's Tensor / Module / Optimizer
  has, flagged when called on a value of unknown kind.
* ``STATEMENT_HOOKS`` / ``FUNCTION_HOOKS`` / ``CLASS_HOOKS`` / ``OPERATOR_HOOKS`` /
  ``SUBSCRIPT_HOOKS``: rule functions the walk calls on statements, module-class
  methods, module classes, operators and subscripts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Union

from msmagic.engine.kinds import (  # noqa: F401  (the kinds entries declare)
    BATCH_ITERABLES, MODULE, OPTIMIZER, PARAMS, TENSOR, Kind, kind, kind_matches,
)

Handler = Callable[[Any], Any]


@dataclass(kw_only=True)
class ArgSpec:
    """How a call's arguments port: one spelling for functions and methods alike."""

    #: PyTorch parameter names in positional order (to bind positional arguments).
    sig: tuple = ()
    #: MindSpore parameter names in positional order: an argument stays positional when
    #: its MindSpore name sits at the same position; otherwise it becomes a keyword.
    ms_sig: Optional[tuple] = None
    #: PyTorch parameter -> MindSpore parameter name.
    rename: dict = field(default_factory=dict)
    #: MindSpore keyword -> source text, added when the PyTorch argument is absent
    #: because the two frameworks' defaults differ. Value: (text, rule id) or text.
    defaults: dict = field(default_factory=dict)
    #: PyTorch parameter -> fn(context, arg) returning a new value expression, ``False``
    #: to remove the argument, a (keyword, value) pair, or None to keep it unchanged.
    values: dict = field(default_factory=dict)
    #: PyTorch parameter -> rule id explaining why MindSpore needs no such argument.
    drop: dict = field(default_factory=dict)
    #: PyTorch parameter -> reason it cannot be ported; or (predicate(context, arg), reason)
    #: where the predicate says whether this particular value is a problem.
    unsupported: dict = field(default_factory=dict)

    @property
    def has_arg_rules(self) -> bool:
        return bool(self.rename or self.values or self.drop or self.unsupported or self.defaults)


@dataclass(kw_only=True)
class Api(ArgSpec):
    torch: str
    target: Optional[str] = None
    rule: str = ""
    handler: Optional[Handler] = None
    #: The kind of value the call (or attribute) produces, for receiver typing.
    returns: Optional[Kind] = None
    #: The call draws random numbers: its result is synchronised by the parity runner.
    random: bool = False
    #: An attribute (``torch.float32``) rather than something called.
    attr: bool = False
    #: The API used as a value, not called (``ACTIVATION = torch.tanh``): fn(context)
    #: returning the expression that stands for it, or None for the plain target.
    as_value: Optional[Handler] = None
    detail: str = ""
    #: For a layer: how its parameter and buffer names map to the MindSpore Cell's. A
    #: dict of leaf names (``{"weight": "gamma"}``) or ``fn(torch_module, name) -> name``
    #: for nested or renamed structures (``bn2d.gamma``, ``rnn.w_ih_list.0``). The port
    #: hands it to parity in its statement plan.
    params: Any = None

    def __post_init__(self):
        self.returns = kind(self.returns)


@dataclass(kw_only=True)
class Method(ArgSpec):
    name: str
    rule: str
    #: What the receiver must be: "tensor", "module", "optimizer" or "any".
    receiver: Kind = TENSOR
    #: Port even when the receiver's kind is unknown: True, or fn(context) -> bool
    #: looking at the call's shape (argument count, keyword names).
    unambiguous: Union[bool, Callable[[Any], bool]] = False
    #: A receiver of unknown kind that ``unambiguous`` did not settle is flagged at the
    #: call: None decides by ``receiver`` (a tensor/module/optimizer method that is not
    #: ``unambiguous``); True for a method ported by the call's shape where that shape is
    #: PyTorch's, whose other calls still mean something else in MindSpore.
    flag_unknown: Optional[bool] = None
    #: Simple rename of the method (``numpy`` -> ``asnumpy``).
    target: Optional[str] = None
    handler: Optional[Handler] = None
    #: Kind of the result; "same" means the receiver's kind.
    returns: Optional[Kind] = TENSOR
    random: bool = False
    detail: str = ""

    def __post_init__(self):
        self.receiver = kind(self.receiver)
        self.returns = kind(self.returns)


@dataclass(kw_only=True)
class Member:
    """An attribute read on a value: ``bn.running_mean`` -> ``bn.moving_mean``."""

    name: str
    rule: str
    receiver: Kind = Kind.of("any")
    target: Optional[str] = None
    handler: Optional[Handler] = None
    unambiguous: bool = False
    returns: Optional[Kind] = None
    detail: str = ""

    def __post_init__(self):
        self.receiver = kind(self.receiver)
        self.returns = kind(self.returns)


@dataclass(kw_only=True)
class ModuleMap:
    """``import torch.nn as nn`` -> ``import mindspore.nn as nn``; target ``None``: the
    module has no single counterpart, its import is removed and each name used from it
    is reached through the MindSpore target's own import."""

    torch: str
    target: Optional[str]
    rule: str = "IMP001"


@dataclass(kw_only=True)
class Hook:
    """A rule function the walk calls. ``where``: "statement" (``node_types``: the
    statement classes, fn(context, original, updated) -> statement, FlattenSentinel or
    RemovalSentinel, called after the statement's children were ported), "function"
    (methods of a Module subclass, fn(context, original, updated) -> FunctionDef),
    "class" (Module subclasses, -> ClassDef), "operator" (``node_types``: libcst
    operator classes, fn(context, original) -> None: operators are kept as written, a
    rule may flag one) or "subscript" (``x[...]``, fn(context, original, updated) ->
    the new subscript)."""

    rule: str
    where: str
    fn: Callable
    node_types: tuple = ()


@dataclass(kw_only=True)
class ReceiverMethods:
    """Method names only PyTorch's ``cls`` ("Tensor", "Module", "Optimizer") has: called
    on a value of unknown kind with no mapping entry, ``rule`` flags the call."""

    cls: str
    names: frozenset
    rule: str


#: Every entry and hook the rule modules declared, in declaration order.
DECLARED: list = []

APIS: dict[str, Api] = {}
METHODS: dict[str, list[Method]] = {}
MEMBERS: dict[str, list[Member]] = {}
MODULES: dict[str, Optional[str]] = {}
STATEMENT_HOOKS: dict[type, list[Callable]] = {}
FUNCTION_HOOKS: list[Callable] = []
CLASS_HOOKS: list[Callable] = []
OPERATOR_HOOKS: dict[type, Callable] = {}
SUBSCRIPT_HOOKS: list[Callable] = []
#: method name -> (PyTorch classes having it that MindSpore's lack, rule): see ReceiverMethods
RECEIVER_ONLY_METHODS: dict[str, tuple[tuple[str, ...], str]] = {}

#: the method name of an entry for calls of a layer instance (``self.lstm(x, h)``), with
#: the layer's kind as receiver (``receiver="module:torch.nn.LSTM"``)
MODULE_CALL = "__call__"

#: Tensor method names that statement-level rules port (``loss.backward()``): a tensor
#: receiver with one of these names is not an unknown method.
HANDLED_BY_STATEMENT_RULES: set[str] = set()


def handled_by_statement_rules(*names: str) -> None:
    HANDLED_BY_STATEMENT_RULES.update(names)


def api(torch: str, target: Optional[str] = None, **kw) -> Api:
    entry = Api(torch=torch, target=target, **kw)
    DECLARED.append(entry)
    return entry


def method(name: str, rule: str, **kw) -> Method:
    entry = Method(name=name, rule=rule, **kw)
    DECLARED.append(entry)
    return entry


def member(name: str, rule: str, **kw) -> Member:
    entry = Member(name=name, rule=rule, **kw)
    DECLARED.append(entry)
    return entry


def receiver_methods(cls: str, names, rule: str) -> None:
    """Declare the methods only PyTorch's ``cls`` has (see :class:`ReceiverMethods`)."""
    DECLARED.append(ReceiverMethods(cls=cls, names=frozenset(names), rule=rule))


def module(torch: str, target: Optional[str]) -> None:
    DECLARED.append(ModuleMap(torch=torch, target=target))


def _hook(where: str):
    def declare(rule: str, *node_types):
        def deco(fn):
            DECLARED.append(Hook(rule=rule, where=where, fn=fn, node_types=node_types))
            return fn
        return deco
    declare.__doc__ = f"Decorator: declare a {where} hook of ``rule`` (see :class:`Hook`)."
    return declare


#: ``@statement_hook(rule, cst.For, ...)``, ``@function_hook(rule)``, ``@class_hook(rule)``,
#: ``@subscript_hook(rule)``, ``@operator_hook(rule, cst.BitInvert)``
statement_hook = _hook("statement")
function_hook = _hook("function")
class_hook = _hook("class")
subscript_hook = _hook("subscript")
operator_hook = _hook("operator")


def install(items) -> None:
    """Fill the tables anew from entries and hooks (the rules package passes them in
    rule order). An API mapped twice is an error: one rule owns each mapping."""
    for table in (APIS, METHODS, MEMBERS, MODULES, STATEMENT_HOOKS, OPERATOR_HOOKS):
        table.clear()
    FUNCTION_HOOKS.clear()
    CLASS_HOOKS.clear()
    SUBSCRIPT_HOOKS.clear()
    RECEIVER_ONLY_METHODS.clear()
    for item in items:
        if isinstance(item, Api):
            if item.torch in APIS:
                raise ValueError(f"{item.torch} mapped twice")
            APIS[item.torch] = item
        elif isinstance(item, Method):
            METHODS.setdefault(item.name, []).append(item)
        elif isinstance(item, Member):
            MEMBERS.setdefault(item.name, []).append(item)
        elif isinstance(item, ModuleMap):
            MODULES[item.torch] = item.target
        elif isinstance(item, ReceiverMethods):
            for name in item.names:
                classes, _ = RECEIVER_ONLY_METHODS.get(name, ((), ""))
                RECEIVER_ONLY_METHODS[name] = ((*classes, item.cls), item.rule)
        elif isinstance(item, Hook):
            if item.where == "statement":
                for t in item.node_types:
                    STATEMENT_HOOKS.setdefault(t, []).append(item.fn)
            elif item.where == "function":
                FUNCTION_HOOKS.append(item.fn)
            elif item.where == "class":
                CLASS_HOOKS.append(item.fn)
            elif item.where == "subscript":
                SUBSCRIPT_HOOKS.append(item.fn)
            elif item.where == "operator":
                for t in item.node_types:
                    OPERATOR_HOOKS[t] = item.fn
            else:  # pragma: no cover - a typo in a rule module
                raise ValueError(f"unknown hook place {item.where!r}")
