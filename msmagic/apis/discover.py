"""Growing the table from PyTorch's test database, by execution only.

``python -m msmagic.apis.discover`` (``make discover-apis``) proposes a candidate
mapping for every public ``op_db`` API the engine does not map yet:

* ``torch.X`` / ``torch.nn.functional.X`` / ``torch.special.X`` / ``torch.linalg.X`` /
  ``torch.fft.X`` -> ``mindspore.ops.X`` when it exists, with the parameter renames
  MindSpore's signature implies (``dim`` -> ``axis``, ``keepdim`` -> ``keep_dims``);
* ``Tensor.X`` -> MindSpore's ``Tensor.X``;
* ``Tensor.X_`` -> MindSpore's in-place method, else ``X`` with the name rebound.

Each candidate runs through the harness (:mod:`msmagic.apis.harness`). When its only
difference is an int32 index result, it is retried with a cast to int64. Candidates
that verify are written to ``table.json``; those MindSpore computes differently are
written as ``flagged`` entries with what differs, so the port says so instead of
guessing. Nothing is added that did not run.
"""

from __future__ import annotations

import inspect
import json
import re
import sys
import time

from msmagic import apis


def _ms_target(key: str):
    import mindspore
    from mindspore import ops

    name = key.rsplit(".", 1)[-1]
    if key.startswith("Tensor."):
        return name if hasattr(mindspore.Tensor, name) else None
    if hasattr(ops, name) and not inspect.isclass(getattr(ops, name)):
        return f"mindspore.ops.{name}"
    return None


def _renames(target: str) -> dict:
    """dim -> axis style renames that MindSpore's signature implies."""
    import importlib

    mod, _, name = target.rpartition(".")
    try:
        params = inspect.signature(getattr(importlib.import_module(mod), name)).parameters
    except (TypeError, ValueError, AttributeError):
        return {}
    out = {}
    if "dim" not in params and "axis" in params:
        out["dim"] = "axis"
    if "keepdim" not in params:
        for k in ("keep_dims", "keepdims"):
            if k in params:
                out["keepdim"] = k
    if "input" not in params:
        first = next(iter(params), None)
        if first and first not in ("dim", "axis"):
            out["input"] = first
    return out


DOCS_TABLE = ("r2.4.10/api_mapping/pytorch_api_mapping.md",)
_ROW = re.compile(r"^\|\s*\[(torch\.[\w.]+)\]\([^)]*\)\s*\|\s*\[(mindspore\.[\w.]+)\]")


def documented_targets() -> dict:
    """torch name -> MindSpore name, from MindSpore's own mapping table (a fact to
    verify, not to trust: the candidate is kept only if it runs the same)."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[3] / "shared" / "reference" / "mindspore-docs"
    out = {}
    for rel in DOCS_TABLE:
        path = root / rel
        if not path.exists():
            continue
        for line in path.read_text().splitlines():
            m = _ROW.match(line)
            if m:
                torch_name, ms_name = m.groups()
                if torch_name.startswith("torch.Tensor."):
                    torch_name = "Tensor." + torch_name[len("torch.Tensor."):]
                    ms_name = ms_name.rsplit(".", 1)[-1]
                out.setdefault(torch_name, ms_name)
    return out


def _exists(target: str) -> bool:
    import importlib

    mod, _, name = target.rpartition(".")
    try:
        return hasattr(importlib.import_module(mod), name)
    except ImportError:
        return False


def module_candidates(index: dict, docs: dict) -> dict:
    """Layers of module_db with a same-named (or documented) MindSpore layer."""
    import mindspore  # noqa: F401  (loaded before the layer lookups)

    from msmagic.apis import catalog

    known = {e.key for e in catalog.entries()}
    table = apis.table()
    out = {}
    for key in sorted(index):
        if key in known or (key in table and "flagged" not in table[key]):
            continue
        name = key.rsplit(".", 1)[-1]
        tries = []
        for target in (docs.get(key), f"mindspore.nn.{name}"):
            if target and target.startswith("mindspore.nn.") and _exists(target) and \
                    {"target": target} not in tries and table.get(key, {}).get("tried") != target:
                tries.append({"target": target})
        if tries:
            out[key] = tries
    return out


def generic_candidates(index: dict, docs: dict) -> dict:
    """APIs with no op_db samples: torch functions and Tensor methods that MindSpore's
    mapping table lists or that have a same-named MindSpore op, tried on generic samples."""
    import mindspore
    import torch
    from mindspore import ops

    from msmagic.apis import catalog, samples

    entries = catalog.entries()
    known = {e.key for e in entries}
    verified_ops = {e.key: e.target for e in entries
                    if e.status == "verified" and e.target.startswith("mindspore.ops.")}
    table = apis.table()
    names = set(docs)
    names |= {f"torch.{n}" for n in dir(torch) if not n.startswith("_") and hasattr(ops, n)}
    names |= {f"Tensor.{n}" for n in dir(torch.Tensor) if not n.startswith("_")
              and (hasattr(mindspore.Tensor, n) or f"torch.{n}" in verified_ops)}
    names = {n for n in names if (n.startswith("Tensor.") or n.count(".") == 1) and n not in index
             and n not in known and n not in table}
    from msmagic.engine.spec import HANDLED_BY_STATEMENT_RULES

    names = {n for n in names if n.rsplit(".", 1)[-1] not in HANDLED_BY_STATEMENT_RULES}
    forms = samples.generic_index(sorted(names))
    out = {}
    for key, form in forms.items():
        if form == "inplace":
            base = key[len("Tensor."):-1]
            if hasattr(mindspore.Tensor, base):
                out[key] = [{"target": base, "inplace": "rebind"}]
            if verified_ops.get(f"torch.{base}"):
                out.setdefault(key, []).append({"target": verified_ops[f"torch.{base}"], "inplace": "rebind"})
            continue
        target = docs.get(key) if key.startswith("torch.") else (docs.get(key) or key.split(".", 1)[1])
        if key.startswith("torch.") and not (target and _exists(target)):
            target = _ms_target(key)
        if key.startswith("Tensor.") and not hasattr(mindspore.Tensor, target or ""):
            target = verified_ops.get("torch." + key.split(".", 1)[1])  # the function form
            if not target:
                continue
        if target:
            fields = {"target": target}
            if key.startswith("torch."):
                ren = _renames(target)
                if ren:
                    fields["rename"] = ren
            out[key] = [fields]
    return out


#: PyTorch APIs whose MindSpore counterpart has another name or parameter order (from
#: MindSpore's mapping tables and its op list). Candidates only: each is kept if it runs
#: the same on PyTorch's samples.
ALIASES = {
    "torch.clamp_min": {"target": "mindspore.ops.clamp", "sig": ["input", "min"]},
    "torch.clamp_max": {"target": "mindspore.ops.clamp", "sig": ["input", "max"],
                        "ms_sig": ["input", "min", "max"]},
    "Tensor.clamp_min": {"target": "clamp", "sig": ["min"]},
    "Tensor.clamp_max": {"target": "clamp", "sig": ["max"], "ms_sig": ["min", "max"]},
    "Tensor.clamp_min_": {"target": "clamp", "sig": ["min"], "inplace": "rebind"},
    "Tensor.clamp_max_": {"target": "clamp", "sig": ["max"], "ms_sig": ["min", "max"], "inplace": "rebind"},
    "torch.special.i0e": {"target": "mindspore.ops.bessel_i0e"},
    "torch.special.i1": {"target": "mindspore.ops.bessel_i1"},
    "torch.special.i1e": {"target": "mindspore.ops.bessel_i1e"},
    "torch.special.modified_bessel_i0": {"target": "mindspore.ops.bessel_i0"},
    "torch.special.modified_bessel_i1": {"target": "mindspore.ops.bessel_i1"},
    "torch.special.modified_bessel_k0": {"target": "mindspore.ops.bessel_k0"},
    "torch.special.modified_bessel_k1": {"target": "mindspore.ops.bessel_k1"},
    "torch.special.scaled_modified_bessel_k0": {"target": "mindspore.ops.bessel_k0e"},
    "torch.special.scaled_modified_bessel_k1": {"target": "mindspore.ops.bessel_k1e"},
    "torch.special.spherical_bessel_j0": {"target": "mindspore.ops.bessel_j0"},
    "torch.tensordot": {"target": "mindspore.ops.tensor_dot", "sig": ["a", "b", "dims"],
                        "rename": {"a": "x1", "b": "x2", "dims": "axes"}},
    "torch.pinverse": {"target": "mindspore.ops.pinv", "sig": ["input", "rcond"]},
    "Tensor.pinverse": {"target": "mindspore.ops.pinv", "sig": ["rcond"]},
    "torch.matrix_exp": {"target": "mindspore.ops.matrix_exp"},
    "Tensor.matrix_exp": {"target": "mindspore.ops.matrix_exp"},
    "torch.nanquantile": {"target": "mindspore.ops.nanquantile", "rename": {"dim": "axis", "keepdim": "keepdims"}},
    "Tensor.nanquantile": {"target": "mindspore.ops.nanquantile", "rename": {"dim": "axis", "keepdim": "keepdims"}},
    "torch.trapezoid": {"target": "mindspore.ops.trapz"},
    "torch.empty_like": {"target": "mindspore.ops.zeros_like", "random": True},
    "torch.linalg.cholesky_ex": {"flagged": "MindSpore has no cholesky with an info output"},
}


def alias_candidates(index: dict) -> dict:
    from msmagic.apis import catalog

    known = {e.key for e in catalog.entries() if e.status == "verified"}
    return {k: [v] for k, v in ALIASES.items() if k in index and k not in known and "flagged" not in v}


def candidates(index: dict) -> dict:
    """key -> list of candidate field dicts to try in order."""
    import mindspore

    from msmagic.apis import catalog

    entries = catalog.entries()
    known = {e.key for e in entries}
    canonical_targets = {e.key: e.target for e in entries
                         if e.status == "verified" and e.target.startswith("mindspore.ops.")}
    table = apis.table()
    docs = documented_targets()
    out = {}
    from msmagic.apis.samples import torch_name as torch_name_of

    def twin(key):
        """The verified mindspore.ops target of the function twin of a Tensor method."""
        base = key[len("Tensor."):]
        base = base[:-1] if base.endswith("_") and not base.endswith("__") else base
        return canonical_targets.get(f"torch.{base}")

    for key, (op, form) in sorted(index.items()):
        if form == "function_inplace":  # torch.abs_(x): ported through torch.abs's own entry (TFN001)
            continue
        if key in known and not (key in table and "flagged" in table[key]):
            continue
        retry = key in table  # flagged by an earlier round: only new targets
        tries = []
        if form == "inplace":
            base = key[len("Tensor."):-1]
            if hasattr(mindspore.Tensor, base + "_") and not retry:
                tries.append({"target": base + "_"})
            if hasattr(mindspore.Tensor, base) and not retry:
                tries.append({"target": base, "inplace": "rebind"})
            if twin(key):
                tries.append({"target": twin(key), "inplace": "rebind"})
        else:
            same = _ms_target(key)
            doc = docs.get(key)
            canon = torch_name_of(op)
            if canon and canon != key and not key.startswith("Tensor."):
                # an alias (torch.special.expit of torch.sigmoid): the canonical op's target
                target = canonical_targets.get(canon)
                if target:
                    doc = doc if doc and _exists(doc) else target
            if doc and not key.startswith("Tensor.") and not _exists(doc):
                doc = None
            if doc and key.startswith("Tensor.") and not hasattr(mindspore.Tensor, doc):
                doc = None
            for target in (same, doc):
                if not target or any(t.get("target") == target for t in tries):
                    continue
                if retry and target == same:
                    continue
                fields = {"target": target}
                if not key.startswith("Tensor."):
                    ren = _renames(target)
                    if ren:
                        fields["rename"] = ren
                tries.append(fields)
        if key.startswith("Tensor.") and form != "inplace" and twin(key) and \
                not any(t.get("target") == twin(key) for t in tries):
            tries.append({"target": twin(key)})
        if tries:
            out[key] = tries
    return out


_INT32 = re.compile(r"^(?:\[(\d+)\]: )?dtype int32 where PyTorch gives int64")


def _cast_for(rec: dict, n_hint: int = 2):
    """The cast that fixes an int32-vs-int64 index result, or None."""
    reasons = [w for w in rec.get("dtypes", {}).values() if w.startswith("differs")]
    reasons += [p["status"] for p in rec.get("failing_patterns", []) if p["status"].startswith("differs")]
    casts = set()
    for why in reasons:
        m = _INT32.match(why.split(": ", 1)[1] if why.startswith("differs: ") else "")
        if not m:
            return None
        casts.add(m.group(1))
    if not casts:
        return None
    if casts == {None}:
        return "int64"
    idx = {int(c) for c in casts if c is not None}
    return [("int64" if i in idx else None) for i in range(max(idx) + 1)]


def main(argv=None) -> int:
    from msmagic.apis import harness, samples

    t0 = time.perf_counter()
    index = samples.op_index()
    cands = candidates(index)
    kinds = dict.fromkeys(cands, "op")
    mods = module_candidates(samples.module_index(), documented_targets())
    cands.update(mods)
    kinds.update(dict.fromkeys(mods, "module"))
    for k, v in alias_candidates(index).items():
        cands[k] = v + [t for t in cands.get(k, []) if t not in v]
        kinds[k] = "op"
    gen = generic_candidates(index, documented_targets())
    for k, v in gen.items():
        if k not in cands:
            cands[k] = v
            kinds[k] = "generic"
    print(f"{len(cands)} candidates from op_db, module_db and generic samples", flush=True)
    pool = harness.Pool(2)
    chosen: dict = {}
    results: dict = {}
    round_ = {k: 0 for k in cands}
    todo = {k: v[0] for k, v in cands.items()}
    while todo:
        jobs = [{"kind": kinds[k], "key": k, "fields": f} for k, f in todo.items()]
        res = pool.run(jobs, lambda d, n, r: print(f"  {d}/{n}", flush=True) if d % 50 == 0 else None)
        todo = {}
        for r in res:
            key = r["job"]["key"]
            fields = r["job"]["fields"]
            rec = r["result"][key]
            if rec["status"] == "verified":
                chosen[key] = fields
                results[key] = rec
                continue
            cast = _cast_for(rec) if "cast" not in fields else None
            if cast is not None:
                todo[key] = {**fields, "cast": cast}
                continue
            round_[key] += 1
            if round_[key] < len(cands[key]):
                todo[key] = cands[key][round_[key]]
                continue
            if rec["status"] in ("differs", "raises") and rec.get("error"):
                results[key] = rec
                chosen[key] = {"flagged": _reason(key, rec)}
    table = dict(apis.table())
    table.update(chosen)
    apis.TABLE_PATH.write_text(json.dumps(dict(sorted(table.items())), indent=1, sort_keys=True) + "\n")
    ok = sum(1 for f in chosen.values() if "flagged" not in f)
    print(f"added {ok} verified entries and {len(chosen) - ok} flagged ones in {time.perf_counter() - t0:.0f} s")
    return 0


def _reason(key: str, rec: dict) -> str:
    err = rec.get("error", "")
    kind, _, detail = err.partition(": ")
    if kind == "differs":
        return f"on the installed MindSpore the same-named API gives another result ({detail})"
    return f"the installed MindSpore's counterpart raises on CPU ({detail[:140]})"


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
