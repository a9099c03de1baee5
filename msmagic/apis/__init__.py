"""The API mapping table as data, and the records that prove it.

Three files live here:

* ``table.json``: the bulk of the mappings. One entry per PyTorch API, keyed by its
  public name (``torch.sin``, ``Tensor.sin``, ``Tensor.add_``,
  ``torch.nn.functional.pad``). A same-signature mapping is one short entry
  (``{"target": "mindspore.ops.sin"}``); renamed, dropped, defaulted and unsupported
  arguments, a result cast and in-place handling are fields with one spelling each
  (see :mod:`msmagic.rules.api_table`, which loads the file into the engine's tables).
  Entries that need logic are written by hand in the rule modules and live in the same
  engine tables (``msmagic.engine.spec``).
* ``verification.json``: what ``make verify-apis`` (:mod:`msmagic.apis.harness`)
  found by running every entry on PyTorch's own sample inputs (``op_db``,
  ``module_db``), hand-written cases and the rule examples, stamped with the torch and
  MindSpore versions it ran on.
* ``signatures.json``: the parameters the installed MindSpore accepts for every API the
  port can emit, and PyTorch's parameter order for every API it maps
  (:mod:`msmagic.apis.signatures` writes it; the port checks emitted calls against it).
* :mod:`msmagic.apis.catalog` joins both into the listing that ``python -m msmagic
  apis`` prints and ``docs/api_coverage.md`` is generated from.

:mod:`msmagic.apis.deprecations` lists what the installed MindSpore marks deprecated that
the port still reaches (and why), and keeps MindSpore's warnings about its own internals
off a ported cell's output.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

HERE = Path(__file__).resolve().parent
TABLE_PATH = HERE / "table.json"
RECORDS_PATH = HERE / "verification.json"
SIGNATURES_PATH = HERE / "signatures.json"


@lru_cache(maxsize=1)
def table() -> dict:
    """The mapping entries of ``table.json`` (key -> fields)."""
    if not TABLE_PATH.exists():
        return {}
    return json.loads(TABLE_PATH.read_text())


@lru_cache(maxsize=1)
def verification() -> dict:
    """``{"versions": {...}, "records": {key: record}}`` from ``verification.json``."""
    if not RECORDS_PATH.exists():
        return {"versions": {}, "records": {}}
    return json.loads(RECORDS_PATH.read_text())


def record(key: str):
    """The verification record of one entry, or None."""
    return verification()["records"].get(key)


@lru_cache(maxsize=1)
def signature_data() -> dict:
    """``{"versions", "mindspore": {target: [overload, ...] | None}, "missing": [...],
    "torch": {key: [overload, ...] | None}}`` from ``signatures.json``."""
    if not SIGNATURES_PATH.exists():
        return {"versions": {}, "mindspore": {}, "missing": [], "torch": {}}
    return json.loads(SIGNATURES_PATH.read_text())


#: parameter kinds of a parsed overload (SPREAD: positional or keyword, a list of ints
#: that also takes its ints spread out, ``x.tile(2, 1)``)
POSITIONAL_ONLY, EITHER, KEYWORD_ONLY, VAR_POSITIONAL, VAR_KEYWORD, SPREAD = (
    "positional", "either", "keyword", "varargs", "varkw", "spread")


def parse_overload(text: str) -> tuple:
    """``"low, high, size, seed=, *, dtype="`` -> ((name, kind, has_default), ...);
    has_default is None where the file says it is unknown (``name?``, ``name+``)."""
    params: list = []
    keyword_only = False
    for part in (p for p in text.split(", ") if p):
        if part == "/":
            params = [(n, POSITIONAL_ONLY, d) for n, _, d in params]
        elif part == "*":
            keyword_only = True
        elif part.startswith("**"):
            params.append((part[2:], VAR_KEYWORD, True))
        elif part.startswith("*"):
            params.append((part[1:], VAR_POSITIONAL, True))
            keyword_only = True
        elif part.endswith("+"):
            params.append((part[:-1], SPREAD, None))
        else:
            default = True if part.endswith("=") else None if part.endswith("?") else False
            params.append((part.rstrip("=?"), KEYWORD_ONLY if keyword_only else EITHER, default))
    return tuple(params)


@lru_cache(maxsize=None)
def mindspore_overloads(target: str):
    """The parsed overloads of a MindSpore target (``mindspore.ops.rand``, ``Tensor.sum``);
    None when the file has nothing to check it against."""
    found = signature_data()["mindspore"].get(target)
    return tuple(parse_overload(o) for o in found) if found else None


@lru_cache(maxsize=None)
def torch_overloads(key: str):
    """The parsed overloads of a PyTorch API with an entry (``torch.rand``, ``Tensor.sum``)."""
    found = signature_data()["torch"].get(key)
    return tuple(parse_overload(o) for o in found) if found else None
