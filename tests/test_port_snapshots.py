"""Ports are pinned byte for byte: every code cell of the demo notebooks and of the
real-world tutorials, ported in order with one session (as ``%%ms_port`` ports them),
must give exactly the code, edit log and findings recorded in ``tests/snapshots``.

A refactor of the engine or the rules must not change a single byte of these. When a
change is meant to alter a port, regenerate with ``MSMAGIC_UPDATE_SNAPSHOTS=1`` and
review the diff of the snapshot files.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import msmagic
from msmagic.engine.session import PortSession
from msmagic.errors import PortError

ROOT = Path(__file__).resolve().parent.parent
SNAPSHOTS = Path(__file__).resolve().parent / "snapshots"
REALWORLD = ROOT.parent / "shared" / "realworld" / "cases"

SOURCES = sorted((ROOT / "demo_notebooks").glob("*.ipynb"))


def _cells(path: Path) -> list[str]:
    if path.suffix == ".ipynb":
        nb = json.loads(path.read_text(encoding="utf-8"))
        return ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]
    return [path.read_text(encoding="utf-8")]


def _body(cell: str) -> str:
    """The cell as a cell magic receives it: without its ``%%`` line."""
    if cell.startswith("%%"):
        return cell.split("\n", 1)[1] if "\n" in cell else ""
    return cell


def port_all(path: Path) -> list[dict]:
    session = PortSession()
    out = []
    for cell in _cells(path):
        body = _body(cell)
        try:
            r = msmagic.port(body, session=session)
        except PortError as exc:
            out.append({"error": str(exc)})
            continue
        out.append({
            "code": r.code,
            "edits": [[e.rule_id, list(e.before), list(e.after), e.api, e.detail, e.statement,
                       sorted(e.tags)] for e in r.edits],
            "findings": [str(f) + f" -> {f.out_line} @{f.statement}" for f in r.unsupported],
            "statements": [[s.index, list(s.before), list(s.after) if s.after else None]
                           for s in r.statements],
            "notes": r.notes,
        })
        session.learn(cell)
    return out


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.name)
def test_port_is_byte_identical_to_snapshot(path):
    got = port_all(path)
    snap = SNAPSHOTS / (path.stem + ".json")
    if os.environ.get("MSMAGIC_UPDATE_SNAPSHOTS"):
        snap.write_text(json.dumps(got, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    want = json.loads(snap.read_text(encoding="utf-8"))
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        assert g == w, f"{path.name} code cell {i} ports differently from the snapshot"


def _rule_examples() -> list[dict]:
    from msmagic.rules.registry import all_rules

    out = []
    for rule in sorted(all_rules(), key=lambda r: r.id):
        try:
            r = msmagic.port(rule.example)
        except PortError as exc:
            out.append({"rule": rule.id, "error": str(exc)})
            continue
        out.append({"rule": rule.id, "code": r.code,
                    "edits": [[e.rule_id, list(e.before), list(e.after), e.detail] for e in r.edits],
                    "findings": [str(f) for f in r.unsupported]})
    return out


def test_rule_examples_port_as_in_snapshot():
    got = {d["rule"]: d for d in _rule_examples()}
    snap = SNAPSHOTS / "rule_examples.json"
    if os.environ.get("MSMAGIC_UPDATE_SNAPSHOTS"):
        snap.write_text(json.dumps(list(got.values()), indent=1, ensure_ascii=False) + "\n",
                        encoding="utf-8")
    want = {d["rule"]: d for d in json.loads(snap.read_text(encoding="utf-8"))}
    assert sorted(got) == sorted(want)
    for rule_id in want:
        assert got[rule_id] == want[rule_id], f"the example of {rule_id} ports differently"
