"""The mapping table as one listing: every entry of the engine's tables (the data
table and the hand-written rule entries) joined with its verification record.

``python -m msmagic apis [--format text|markdown|json]`` prints it and
``docs/api_coverage.md`` is generated from it (``make verify-apis`` or
``python -m msmagic.apis.catalog``); a test fails when the committed page is stale.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Optional

from msmagic import apis

DOCS_PATH = Path(__file__).resolve().parents[2] / "docs" / "api_coverage.md"

FAMILIES = (
    "torch functions", "Tensor methods", "Tensor attributes", "Tensor operators", "nn.functional", "nn layers",
    "linalg", "special", "fft", "nn.init", "optim", "distributions", "dtypes", "autograd and utilities",
    "Module and optimizer methods",
)
#: key -> (what it becomes, rule): ported by statement-level rules, verified by cases
STATEMENT_APIS = {
    "Tensor.backward": ("mindspore.grad / mindspore.value_and_grad", "GRD001"),
    "Tensor.grad": ("the gradients mindspore.grad returns", "GRD005"),
    "Optimizer.zero_grad": ("(removed: value_and_grad returns fresh gradients)", "TRN001"),
    "Optimizer.step": ("optimizer(grads)", "TRN001"),
}
#: key -> what the port keeps: Python protocols of a tensor (``len(x)``, ``x[i] = v``) that
#: MindSpore's Tensor implements with PyTorch's results; kept as written, verified by cases
PROTOCOLS = {
    "Tensor.__len__": "len(x)", "Tensor.__bool__": "bool(x)", "Tensor.__int__": "int(x)",
    "Tensor.__float__": "float(x)", "Tensor.__index__": "seq[x]", "Tensor.__array__": "numpy.asarray(x)",
    "Tensor.__setitem__": "x[idx] = v",
    "Tensor.__iter__": "for row in x", "Tensor.__contains__": "v in x",
}
_LABELS = {"tensor": "Tensor", "module": "Module", "optimizer": "Optimizer", "scheduler": "LRScheduler",
           "any": "object", "distribution": "Distribution", "device": "Device"}


@dataclass
class Entry:
    key: str
    family: str
    target: str
    rule: str
    status: str
    source: str = ""
    dtypes: dict = field(default_factory=dict)
    patterns: list = field(default_factory=list)
    note: str = ""
    flagged: str = ""
    inplace: bool = False
    table: bool = False
    #: the largest |MindSpore - PyTorch| measured on the samples that verified it (None:
    #: nothing numeric compared, e.g. a random draw checked for shape and dtype)
    max_error: Optional[float] = None


def family(key: str) -> str:
    if key.startswith("Tensor."):
        return "Tensor methods"
    if key.startswith(("Module.", "Optimizer.", "LRScheduler.", "object.")):
        return "Module and optimizer methods"
    parts = key.split(".")
    if key.startswith("torch.nn.functional."):
        return "nn.functional"
    if key.startswith("torch.nn.init."):
        return "nn.init"
    if key.startswith("torch.nn.") and len(parts) == 3 and parts[2][:1].isupper():
        return "nn layers"
    for fam in ("linalg", "special", "fft"):
        if key.startswith(f"torch.{fam}."):
            return fam
    if key.startswith("torch.optim"):
        return "optim"
    if key.startswith(("torch.distributions.", "Distribution.")):
        return "distributions"
    if len(parts) == 2 and parts[0] == "torch":
        return "torch functions"
    return "autograd and utilities"


def _status(rec: Optional[dict]) -> str:
    if rec is None:
        return "unverified"
    # "flagged": every sample hit a finding of the port itself (the rule flags these uses)
    return {"verified": "verified", "differs": "failing", "raises": "failing", "flagged": "flagged",
            "untested": "unverified"}.get(rec["status"], rec["status"])


def entries() -> list[Entry]:
    """Every mapping the engine knows, with its verification status."""
    from msmagic.engine import spec as S
    from msmagic.rules.api_table import keep_member
    from msmagic.rules.registry import _load

    _load()
    from msmagic.rules.registry import RULES

    finding_only = {r.id for r in RULES.values() if r.finding_only}
    table = apis.table()
    records = apis.verification()["records"]
    out: dict[str, Entry] = {}

    def add(key, target, rule, is_table, fields=None, attr=False, member=False):
        fields = fields or {}
        rec = records.get(key)
        fam = family(key)
        if member and fam == "Tensor methods":
            fam = "Tensor attributes"
        if attr and fam == "torch functions":
            fam = "dtypes" if key.split(".")[-1] in _DTYPES else "autograd and utilities"
        e = Entry(key=key, family=fam, target=target or "(rule logic)", rule=rule,
                  status=_status(rec), source=(rec or {}).get("source", ""),
                  dtypes=(rec or {}).get("dtypes", {}), patterns=(rec or {}).get("patterns", []),
                  note=fields.get("note", "") or ((rec or {}).get("error", "") if _status(rec) != "verified" else ""),
                  flagged=fields.get("flagged", "") or fields.get("caveat", ""),
                  inplace=bool(fields.get("inplace")), table=is_table,
                  max_error=(rec or {}).get("max_error"))
        if e.flagged:
            e.status = "flagged"
            if not fields.get("caveat"):  # a caveat is ported, with its finding
                e.target = "(left as PyTorch)"
        elif rec is None and rule in finding_only:
            e.status = "flagged"  # its rule only ever reports: nothing is emitted
            e.target = "(finding)"
            e.flagged = RULES[rule].title
        out.setdefault(key, e)

    for key, a in S.APIS.items():
        fields = table.get(key) if getattr(a, "table_key", None) == key else None
        add(key, a.target, a.rule, fields is not None, fields, attr=a.attr)
    for name, specs in S.METHODS.items():
        for m in specs:
            key = f"{_LABELS.get(m.receiver, m.receiver.split(':')[0].capitalize())}.{name}"
            fields = table.get(key) if getattr(m, "table_key", None) == key else None
            target = m.target or (name if m.handler is None else None)
            add(key, target, m.rule, fields is not None, fields)
    from msmagic.apis.samples import OPERATORS

    # APIs the statement-level rules port (no table entry: the whole statement changes)
    for key, (target, rule) in STATEMENT_APIS.items():
        add(key, target, rule, False)

    for key, kept in PROTOCOLS.items():
        add(key, f"(kept: {kept})", "API002", False)
        out[key].family = "Tensor operators"
    for key, (_, template) in OPERATORS.items():
        op = template.format("y", x="x")
        add(key, f"(kept: {op})", "API002", False)
        out[key].family = "Tensor operators"
    for name, specs in S.MEMBERS.items():
        for m in specs:
            label = _LABELS.get(m.receiver.split(":")[0], "object")
            add(f"{label}.{name}", m.target or (name if m.handler in (None, keep_member) else None), m.rule, False,
                member=True)
    return sorted(out.values(), key=lambda e: (FAMILIES.index(e.family), e.key))


_DTYPES = {"float16", "float32", "float64", "bfloat16", "int8", "int16", "int32", "int64", "uint8", "bool",
           "float", "double", "half", "long", "int", "short", "complex64", "complex128", "cfloat"}


def counts(rows: Optional[list] = None) -> dict:
    rows = rows if rows is not None else entries()
    out = {f: {"verified": 0, "flagged": 0, "failing": 0, "unverified": 0, "total": 0} for f in FAMILIES}
    for e in rows:
        c = out[e.family]
        c[e.status if e.status in c else "unverified"] += 1
        c["total"] += 1
    return out


def module_path_aliases(rows) -> set:
    """Keys that are another spelling of a listed public name through the defining
    module (``torch.distributions.normal.Normal`` for ``torch.distributions.Normal``):
    one API, counted once in the distinct total."""
    keys = {e.key for e in rows}
    out = set()
    for k in keys:
        parts = k.split(".")
        if len(parts) >= 4 and ".".join(parts[:-2] + parts[-1:]) in keys:
            out.add(k)
    return out


def distinct_verified(rows) -> int:
    aliases = module_path_aliases(rows)
    return sum(1 for e in rows if e.status == "verified" and e.key not in aliases)


def summary_text(seconds: Optional[float] = None) -> str:
    rows = entries()
    c = counts(rows)
    lines = [f"{'family':<30} {'verified':>8} {'flagged':>8} {'failing':>8} {'unverif.':>8} {'total':>6}"]
    tot = {"verified": 0, "flagged": 0, "failing": 0, "unverified": 0, "total": 0}
    for fam in FAMILIES:
        x = c[fam]
        if not x["total"]:
            continue
        lines.append(f"{fam:<30} {x['verified']:>8} {x['flagged']:>8} {x['failing']:>8} {x['unverified']:>8} "
                     f"{x['total']:>6}")
        for k in tot:
            tot[k] += x[k]
    lines.append(f"{'all':<30} {tot['verified']:>8} {tot['flagged']:>8} {tot['failing']:>8} "
                 f"{tot['unverified']:>8} {tot['total']:>6}")
    lines.append(f"distinct verified APIs (module-path spellings merged): {distinct_verified(rows)}")
    v = apis.verification()["versions"]
    lines.append(f"verified on torch {v.get('torch', '?')}, MindSpore {v.get('mindspore', '?')}"
                 + (f"; run time {seconds:.0f} s" if seconds is not None else ""))
    return "\n".join(lines)


def _patterns(e: Entry) -> str:
    if not e.patterns:
        return ""
    parts = []
    for p in e.patterns[:4]:
        kw = "".join(f", {k}=" for k in p["keywords"])
        parts.append(f"({p['positional']} pos{kw})")
    more = f" +{len(e.patterns) - 4}" if len(e.patterns) > 4 else ""
    return " ".join(parts) + more


def _dtypes(e: Entry) -> str:
    """``float32, int64 (partly raises), bool: raises``: per dtype, whether every sample
    passed, some did, or none did (and how the others failed)."""
    out = []
    for d, w in e.dtypes.items():
        kind = w.split(":")[0]
        out.append(d if w == "ok" else f"{d} ({kind})" if kind.startswith("partly") else f"{d}: {kind}")
    return ", ".join(out)


def _error(e: Entry) -> str:
    """The measured max |d| (``0`` when every compared value was identical)."""
    if e.max_error is None:
        return "-"
    return "0" if e.max_error == 0 else f"{e.max_error:.1e}"


def render_text(rows: Optional[list] = None) -> str:
    rows = rows if rows is not None else entries()
    out = []
    for e in rows:
        out.append(f"{e.key:<44} {e.target:<40} {e.status:<10} {e.rule:<7} {_error(e):>8}  {_dtypes(e)}"
                   + (f"  [{e.flagged or e.note}]" if (e.flagged or e.note) else ""))
    return "\n".join(out) + "\n\n" + summary_text() + "\n"


def render_markdown(rows: Optional[list] = None) -> str:
    rows = rows if rows is not None else entries()
    c = counts(rows)
    v = apis.verification()["versions"]
    out = [
        "# API coverage",
        "",
        "<!-- generated by `make verify-apis` (python -m msmagic.apis.catalog); do not edit -->",
        "",
        "Every PyTorch API msmagic maps, the MindSpore API it becomes, and what running both "
        f"frameworks found (torch {v.get('torch', '?')}, MindSpore {v.get('mindspore', '?')}, CPU). "
        "**verified**: PyTorch's own samples (`op_db`, `module_db`), a hand-written case or a rule "
        "example gave the same values, shapes and dtypes; the dtypes and argument patterns column says "
        "on what. **flagged**: always reported with a finding, for the reason given: left as PyTorch, or ported "
        "where only a corner case the port cannot see differs (the MindSpore column names it). **failing**: the "
        "mapping is emitted but its verification failed. **unverified**: no execution covers it yet. "
        "A call outside the verified patterns is ported with an API006 finding. "
        "**max |d|**: the largest absolute difference between the two frameworks' values measured on "
        "those samples (`-`: nothing numeric was compared, such as a random draw checked for shape and "
        "dtype); every comparison is made at `%%ms_parity`'s own tolerance (rtol = atol = 1e-5), so a "
        "verified entry is one parity does not report as differing. "
        "The same listing: `python -m msmagic apis`.",
        "",
        "| family | verified | flagged | failing | unverified | total |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    tot = dict.fromkeys(("verified", "flagged", "failing", "unverified", "total"), 0)
    for fam in FAMILIES:
        x = c[fam]
        if x["total"]:
            out.append(f"| {fam} | {x['verified']} | {x['flagged']} | {x['failing']} | {x['unverified']} | "
                       f"{x['total']} |")
            for k in tot:
                tot[k] += x[k]
    out.append(f"| **all** | {tot['verified']} | {tot['flagged']} | {tot['failing']} | {tot['unverified']} | "
               f"{tot['total']} |")
    out += ["", f"Distinct verified APIs, counting module-path spellings such as "
            f"`torch.distributions.normal.Normal` once: **{distinct_verified(rows)}**."]
    for fam in FAMILIES:
        fam_rows = [e for e in rows if e.family == fam]
        if not fam_rows:
            continue
        out += ["", f"## {fam}", "",
                "| PyTorch | MindSpore | status | rule | max \\|d\\| | dtypes | argument patterns | note |",
                "| --- | --- | --- | --- | ---: | --- | --- | --- |"]
        for e in fam_rows:
            note = (e.flagged or e.note or "").replace("|", "\\|").replace("\n", " ")[:160]
            out.append(f"| `{e.key}` | `{e.target}` | {e.status} | {e.rule} | {_error(e)} | {_dtypes(e)} | "
                       f"{_patterns(e)} | {note} |")
    return "\n".join(out) + "\n"


def namespace(target: str) -> str:
    """Which MindSpore namespace an entry targets: ``mindspore.mint`` (the PyTorch-like
    API, used only where the classic one has no faithful equivalent and mint's CPU kernel
    verified), ``mindspore.ops``, ``mindspore.nn``, another ``mindspore.*`` module,
    ``Tensor`` (a method), or ``""`` (rule logic, left as PyTorch, a finding)."""
    if target.startswith("mindspore."):
        parts = target.split(".")
        return ".".join(parts[:2]) if len(parts) > 2 else target
    if target and not target.startswith("(") and "." not in target:
        return "Tensor"
    return ""


def render_json(rows: Optional[list] = None) -> str:
    rows = rows if rows is not None else entries()
    return json.dumps({"versions": apis.verification()["versions"], "counts": counts(rows),
                       "entries": [{**asdict(e), "namespace": namespace(e.target)} for e in rows]},
                      indent=1) + "\n"


def write_docs() -> None:
    DOCS_PATH.write_text(render_markdown())


if __name__ == "__main__":
    write_docs()
    print(f"wrote {DOCS_PATH}")
