"""Stage: the edit log with positions. Rules log edits and findings against input nodes
while the walk runs; positions are computed once, at the end, only for the nodes that
were logged: one code generation pass over the input and one over the output
(:class:`Tracker`), not ``PositionProvider`` over every node (1.7x a parse here).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Optional

import libcst as cst
from libcst._nodes.internal import CodegenState

from msmagic.result import Edit, Finding


@dataclass
class Record:
    """An edit or finding before positions are known."""

    rule_id: str
    node: cst.CSTNode  # original (input) node
    statement: int
    new: Optional[cst.CSTNode] = None  # node in the output tree
    api: str = ""
    detail: str = ""
    reason: str = ""
    tags: frozenset = frozenset()
    finding: bool = False
    holder: Optional[cst.CSTNode] = None  # updated statement holding the change


class EditLog:
    """The records of one port, and the ``# msmagic:`` comments findings put on lines."""

    def __init__(self):
        self._records: list[Record] = []
        #: id(original node) -> its records, so forgetting and lookups cost what they touch
        self._by_node: dict[int, list[Record]] = {}
        self._forgotten: set[int] = set()  # id(record)
        #: id(original statement) -> records logged while it was ported
        self.by_holder: dict[int, list[Record]] = {}
        #: id(original statement) -> comment texts for its line
        self.comments: dict[int, list[str]] = {}
        #: id(record) -> (id(original statement), its comment), to take a forgotten finding's back
        self._comment_of: dict[int, tuple[int, str]] = {}
        #: top-level statement index -> its findings, in the order they were logged
        self._findings_of: dict[int, list[Record]] = {}

    @property
    def records(self) -> list[Record]:
        """The records not forgotten, in the order they were logged."""
        if not self._forgotten:
            return self._records
        return [r for r in self._records if id(r) not in self._forgotten]

    def add(self, record: Record, holder: Optional[cst.CSTNode], comment: str = "") -> Record:
        self._records.append(record)
        self._by_node.setdefault(id(record.node), []).append(record)
        if record.finding:
            self._findings_of.setdefault(record.statement, []).append(record)
        if holder is not None:
            self.by_holder.setdefault(id(holder), []).append(record)
            if comment:
                self.comments.setdefault(id(holder), []).append(comment)
                self._comment_of[id(record)] = (id(holder), comment)
        return record

    def forget(self, nodes, *, findings_too: bool = False) -> None:
        """Drop the records of these original nodes (what they became was dropped)."""
        for node in nodes:
            for r in self._by_node.get(id(node), ()):
                if findings_too or not r.finding:
                    self._forgotten.add(id(r))
                    holder, comment = self._comment_of.pop(id(r), (None, None))
                    if comment is not None and comment in self.comments.get(holder, ()):
                        self.comments[holder].remove(comment)

    def findings_of(self, statement: int) -> list[Record]:
        """The findings (not forgotten) logged while top-level statement ``statement``
        was ported."""
        return [r for r in self._findings_of.get(statement, ()) if id(r) not in self._forgotten]

    def has_finding(self, node) -> bool:
        return any(r.finding and id(r) not in self._forgotten for r in self._by_node.get(id(node), ()))


_NO_CONTEXT = contextlib.nullcontext()


class Tracker(CodegenState):
    """Code generation that notes where chosen nodes start and end (line, column)."""

    @classmethod
    def run(cls, module: cst.Module, wanted: set[int]) -> "Tracker":
        state = cls(default_indent=module.default_indent, default_newline=module.default_newline)
        state.wanted = wanted
        state.starts = {}
        state.ends = {}
        state._scanned = 0
        state._line = 1
        state._col = 0
        module._codegen(state)
        state.code = "".join(state.tokens)
        return state

    def _pos(self) -> tuple[int, int]:
        toks = self.tokens
        line, col = self._line, self._col
        for i in range(self._scanned, len(toks)):
            t = toks[i]
            nl = t.count("\n")
            if nl:
                line += nl
                col = len(t) - t.rfind("\n") - 1
            else:
                col += len(t)
        self._scanned = len(toks)
        self._line, self._col = line, col
        return line, col

    def record_syntactic_position(self, node, *, start_node=None, end_node=None):
        # libcst's version is a @contextmanager entered for every node; positions here
        # come from before/after_codegen, so one reusable no-op context is enough
        return _NO_CONTEXT

    def before_codegen(self, node) -> None:
        if id(node) in self.wanted:
            self.starts[id(node)] = self._pos()

    def after_codegen(self, node) -> None:
        if id(node) in self.wanted:
            self.ends[id(node)] = self._pos()

    def span(self, node) -> Optional[tuple[int, int]]:
        s = self.starts.get(id(node))
        e = self.ends.get(id(node))
        if s is None or e is None:
            return None
        lead = len(getattr(node, "leading_lines", ()) or ())
        start = s[0] + lead
        end = e[0] - 1 if (e[1] == 0 and e[0] > start) else e[0]
        return (start, max(start, end))

    def statement_range(self, stmt: cst.CSTNode) -> tuple[int, int]:
        start = self.starts.get(id(stmt))
        end = self.ends.get(id(stmt))
        if start is None or end is None:
            return (1, 1)
        lead = len(getattr(stmt, "leading_lines", ()))
        s = start[0] + lead
        e = end[0] - 1 if end[1] == 0 else end[0]
        return (s, max(s, e))


def positions(
    log: EditLog, module: cst.Module, new_module: cst.Module, inserted: list,
    top_origin: dict[int, int], title,
) -> tuple[str, list[tuple[int, int]], dict[int, tuple[int, int]], list[Edit], list[Finding]]:
    """(output code, input statement ranges, output range per input statement, edits,
    findings) with line positions."""
    records = log.records
    top_in = list(module.body)
    in_wanted = {id(r.node) for r in records}
    in_wanted.update(id(s) for s in top_in)
    in_pos = Tracker.run(module, in_wanted)

    top_out = list(new_module.body)
    out_wanted = {id(r.new) for r in records if r.new is not None}
    out_wanted.update(id(r.holder) for r in records if r.holder is not None)
    out_wanted.update(id(s) for s in top_out)
    out_pos = Tracker.run(new_module, out_wanted)

    in_ranges = [in_pos.statement_range(s) for s in top_in]
    links_after: dict[int, list[tuple[int, int]]] = {}
    for s in top_out:
        idx = top_origin.get(id(s))
        if idx is not None:
            links_after.setdefault(idx, []).append(out_pos.statement_range(s))
    after_of = {i: (rs[0][0], rs[-1][1]) for i, rs in links_after.items()}

    edits: list[Edit] = []
    findings: list[Finding] = []
    for r in records:
        before = in_pos.span(r.node)
        if before is None:
            before = in_ranges[r.statement] if 0 <= r.statement < len(in_ranges) else (1, 1)
        after = out_pos.span(r.new) if r.new is not None else None
        if after is None and r.holder is not None:
            after = out_pos.span(r.holder)
        if after is None:
            after = after_of.get(r.statement) or (before[0], before[0])
        if r.finding:
            start = in_pos.starts.get(id(r.node))
            col = start[1] + 1 if start else 1
            findings.append(Finding(before[0], col, r.api, r.rule_id, r.reason, after[0], r.statement))
        else:
            edits.append(Edit(
                rule_id=r.rule_id, title=title(r.rule_id), before=before, after=after,
                api=r.api, detail=r.detail, statement=r.statement, tags=r.tags,
            ))
    # Added imports are edits of the import rule, anchored on the insertion point.
    rngs = [rng for rng in (out_pos.span(s) for s in inserted) if rng]
    if rngs:
        anchor_in = in_ranges[0][0] if in_ranges else 1
        edits.append(Edit(
            "IMP001", title("IMP001"), (anchor_in, anchor_in), (rngs[0][0], rngs[-1][1]),
            api="import",
            detail="added " + "; ".join(new_module.code_for_node(s).strip() for s in inserted),
        ))
    edits.sort(key=lambda e: (e.after[0], e.before[0]))
    findings.sort(key=lambda f: (f.line, f.column))
    return out_pos.code, in_ranges, after_of, edits, findings
