"""Receiver kinds: what the engine knows a value is (a tensor, a module of some class,
an optimizer, the pairs ``named_parameters()`` yields...).

A :class:`Kind` is a small value type: a ``base`` ("tensor", "module", "class",
"named"...) and an optional ``detail`` (the layer or user class for "module", the item
kind for "named"/"iter"/"list"). User code adds "function:<key>" (a user function),
"type:<class>" / "object:<class>" (a user class that is no Module, and its instances)
and "ndarray" (NumPy values). It is parsed once, where a mapping entry declares it
(``returns="module:torch.nn.Linear"``), and compares equal to that spelling, so entries
and rules can keep writing kinds as text.
"""

from __future__ import annotations

import functools
from typing import Optional, Union


class Kind(str):
    """``base`` or ``base:detail``; see the module docstring."""

    __slots__ = ()

    @staticmethod
    @functools.lru_cache(maxsize=None)
    def of(text: str) -> "Kind":
        return Kind(text)

    @staticmethod
    def make(base: str, detail: str = "") -> "Kind":
        return Kind.of(f"{base}:{detail}" if detail else base)

    @property
    def base(self) -> str:
        return self.partition(":")[0]

    @property
    def detail(self) -> str:
        return self.partition(":")[2]

    @property
    def item(self) -> Optional["Kind"]:
        """What iterating a "named:..." / "iter:..." / "list:..." value yields (the
        second element of each pair for "named")."""
        return Kind.of(self.detail) if self.base in ("named", "iter", "list") and self.detail else None

    def satisfies(self, required: Union[str, "Kind"]) -> bool:
        """Does a value of this kind satisfy an entry requiring ``required``?
        "module:torch.nn.BatchNorm2d" satisfies "module" and the prefix requirement
        "module:torch.nn.BatchNorm"; everything satisfies "any"."""
        if required == "any" or self == required:
            return True
        return self.startswith(required + ":") or (":" in required and self.startswith(required))


def kind(text: Optional[str]) -> Optional[Kind]:
    """The Kind for a declared spelling (None stays None)."""
    return None if text is None else Kind.of(text)


def kind_matches(required: str, value: Optional[str]) -> bool:
    return value is not None and Kind.of(value).satisfies(required)


def join(kinds) -> Optional[Kind]:
    """The kind every one of ``kinds`` is: the kind itself when they agree, "module" /
    "object" for modules / objects of different classes, None when one is unknown, and a
    "conflict:..." kind (listing them) when they disagree."""
    kinds = list(kinds)
    if not kinds or any(k is None for k in kinds):
        return None
    first = kinds[0]
    if all(k == first for k in kinds):
        return first
    bases = {k.base for k in kinds}
    if len(bases) == 1 and first.base in ("module", "object"):
        return Kind.of(first.base)
    if len(bases) == 1 and first.base == "list":
        item = join([k.item for k in kinds])
        return Kind.make("list", item) if item is not None and item.base != CONFLICT_BASE else LIST
    return Kind.make(CONFLICT_BASE, "|".join(sorted(set(kinds))))


#: the base of the kind :func:`join` gives values of disagreeing kinds
CONFLICT_BASE = "conflict"

TENSOR = Kind.of("tensor")
MODULE = Kind.of("module")
OPTIMIZER = Kind.of("optimizer")
PARAMS = Kind.of("params")  # an iterable of parameters (model.parameters())
INT = Kind.of("int")
NDARRAY = Kind.of("ndarray")  # a NumPy array or scalar: never ported as a tensor
LIST = Kind.of("list")  # a list of items of unknown kind ("list:tensor": of tensors)
#: a tuple display's kind: "tuple:tensor|?|module:Net" (one element kind each, "?" unknown)
TUPLE_BASE = "tuple"


def tuple_kind(kinds) -> Optional[Kind]:
    """The kind of a tuple of values of ``kinds`` (None when a tuple is nested or any
    spelling cannot be held)."""
    parts = []
    for k in kinds:
        if k is not None and (k.base == TUPLE_BASE or "|" in k):
            return None
        parts.append("?" if k is None else str(k))
    return Kind.make(TUPLE_BASE, "|".join(parts)) if parts else None


def tuple_elements(kind) -> Optional[tuple]:
    """The element kinds of a :func:`tuple_kind` (None for another kind)."""
    if kind is None or Kind.of(kind).base != TUPLE_BASE:
        return None
    return tuple(None if part == "?" else Kind.of(part) for part in Kind.of(kind).detail.split("|"))
#: kinds whose iteration yields tensors or tuples of tensors (batches)
BATCH_ITERABLES = frozenset({Kind.of("loader"), Kind.of("dataset")})
