"""Receiver kinds: what the engine knows a value is (a tensor, a module of some class,
an optimizer, the pairs ``named_parameters()`` yields...).

A :class:`Kind` is a small value type: a ``base`` ("tensor", "module", "class",
"named"...) and an optional ``detail`` (the layer or user class for "module", the item
kind for "named"/"iter"). It is parsed once, where a mapping entry declares it
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
        """What iterating a "named:..." / "iter:..." value yields (the second element
        of each pair for "named")."""
        return Kind.of(self.detail) if self.base in ("named", "iter") and self.detail else None

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


TENSOR = Kind.of("tensor")
MODULE = Kind.of("module")
OPTIMIZER = Kind.of("optimizer")
PARAMS = Kind.of("params")  # an iterable of parameters (model.parameters())
#: kinds whose iteration yields tensors or tuples of tensors (batches)
BATCH_ITERABLES = frozenset({Kind.of("loader"), Kind.of("dataset")})
