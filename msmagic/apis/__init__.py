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
