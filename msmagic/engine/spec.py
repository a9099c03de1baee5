"""Declarative mapping entries (the PaConvert idea).

Most PyTorch APIs port by a table entry: a MindSpore target, argument renames, values
that must be transformed, arguments that are dropped (with a rule explaining why) and
arguments that have no MindSpore equivalent. Hard cases attach a ``handler``: a function
of a :class:`msmagic.engine.core.Site` returning the replacement expression.

Three tables:

* ``APIS``: fully qualified PyTorch names (``torch.nn.Linear``, ``torch.float32``),
  reached through the cell's imports.
* ``METHODS``: methods called on a value (``x.size(0)``, ``model.eval()``), chosen by
  what the receiver is known to be.
* ``MEMBERS``: attributes read from a value (``bn.running_mean``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Union

#: Kinds of values the engine tracks. "module:<torch class>" and "module:<user class>"
#: refine "module".
TENSOR = "tensor"
MODULE = "module"
OPTIMIZER = "optimizer"
PARAMS = "params"  # an iterable of parameters (model.parameters())
#: kinds whose iteration yields tensors or tuples of tensors (batches)
BATCH_ITERABLES = {"loader", "dataset"}

Handler = Callable[[Any], Any]


@dataclass
class Api:
    torch: str
    target: Optional[str] = None
    rule: str = ""
    #: PyTorch parameter names in positional order (to bind positional arguments).
    sig: tuple = ()
    #: MindSpore parameter names in positional order: an argument stays positional when
    #: its MindSpore name sits at the same position; otherwise it becomes a keyword.
    ms_sig: Optional[tuple] = None
    rename: dict = field(default_factory=dict)
    #: MindSpore keyword -> source text, added when the PyTorch argument is absent
    #: because the two frameworks' defaults differ. Value: (text, rule id) or text.
    defaults: dict = field(default_factory=dict)
    #: PyTorch parameter -> fn(site, arg) returning a new value expression, or None
    #: when the fn reported a finding itself (the argument is then kept unchanged).
    values: dict = field(default_factory=dict)
    #: PyTorch parameter -> rule id explaining why MindSpore needs no such argument.
    drop: dict = field(default_factory=dict)
    #: PyTorch parameter -> reason it cannot be ported; or (predicate(site, arg), reason)
    #: where the predicate says whether this particular value is a problem.
    unsupported: dict = field(default_factory=dict)
    handler: Optional[Handler] = None
    #: The kind of value the call (or attribute) produces, for receiver typing.
    returns: Optional[str] = None
    #: The call draws random numbers: its result is synchronised by the parity runner.
    random: bool = False
    #: An attribute (``torch.float32``) rather than something called.
    attr: bool = False
    detail: str = ""
    #: For a layer: how its parameter and buffer names map to the MindSpore Cell's. A
    #: dict of leaf names (``{"weight": "gamma"}``) or ``fn(torch_module, name) -> name``
    #: for nested or renamed structures (``bn2d.gamma``, ``rnn.w_ih_list.0``). Parity
    #: synchronises and compares parameters through this, never through a table of its own.
    params: Any = None


@dataclass
class Method:
    name: str
    rule: str
    #: What the receiver must be: "tensor", "module", "optimizer" or "any".
    receiver: str = TENSOR
    #: Port even when the receiver's kind is unknown: True, or fn(site) -> bool looking
    #: at the call's shape (argument count, keyword names).
    unambiguous: Union[bool, Callable[[Any], bool]] = False
    #: Simple rename of the method (``numpy`` -> ``asnumpy``).
    target: Optional[str] = None
    sig: tuple = ()
    ms_sig: Optional[tuple] = None
    rename: dict = field(default_factory=dict)
    defaults: dict = field(default_factory=dict)
    values: dict = field(default_factory=dict)
    drop: dict = field(default_factory=dict)
    unsupported: dict = field(default_factory=dict)
    handler: Optional[Handler] = None
    #: Kind of the result; "same" means the receiver's kind.
    returns: Optional[str] = TENSOR
    random: bool = False
    detail: str = ""


@dataclass
class Member:
    """An attribute read on a value: ``bn.running_mean`` -> ``bn.moving_mean``."""

    name: str
    rule: str
    receiver: str = "any"
    target: Optional[str] = None
    handler: Optional[Handler] = None
    unambiguous: bool = False
    returns: Optional[str] = None
    detail: str = ""


APIS: dict[str, Api] = {}
METHODS: dict[str, list[Method]] = {}
MEMBERS: dict[str, list[Member]] = {}

#: PyTorch module path -> MindSpore module path, for ``import torch.nn as nn`` style
#: imports. ``None``: the module has no single counterpart; its import is removed and
#: each name used from it is reached through the MindSpore target's own import.
MODULES: dict[str, Optional[str]] = {}


#: Tensor method names that statement-level rules port (``loss.backward()``): a tensor
#: receiver with one of these names is not an unknown method.
HANDLED_BY_STATEMENT_RULES: set[str] = set()


#: libcst operator class (``cst.BitInvert``) -> fn(transformer, original node): operators
#: are kept as written, and a rule may flag a use whose verification found a difference
OPERATOR_HOOKS: dict = {}


def handled_by_statement_rules(*names: str) -> None:
    HANDLED_BY_STATEMENT_RULES.update(names)


def api(torch: str, target: Optional[str] = None, **kw) -> Api:
    entry = Api(torch=torch, target=target, **kw)
    if torch in APIS:
        raise ValueError(f"{torch} mapped twice")
    APIS[torch] = entry
    return entry


def method(name: str, rule: str, **kw) -> Method:
    entry = Method(name=name, rule=rule, **kw)
    METHODS.setdefault(name, []).append(entry)
    return entry


def member(name: str, rule: str, **kw) -> Member:
    entry = Member(name=name, rule=rule, **kw)
    MEMBERS.setdefault(name, []).append(entry)
    return entry


def module(torch: str, target: Optional[str]) -> None:
    MODULES[torch] = target


def kind_matches(required: str, kind: Optional[str]) -> bool:
    """Does a value of ``kind`` satisfy a spec requiring ``required``?"""
    if kind is None:
        return False
    if required == "any":
        return True
    if kind == required:
        return True
    # "module:torch.nn.BatchNorm2d" satisfies "module" and a "module:torch.nn.BatchNorm"
    # prefix requirement.
    return kind.startswith(required + ":") or (":" in required and kind.startswith(required))
