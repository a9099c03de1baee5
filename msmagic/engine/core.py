"""The port engine: one libcst pass over a cell, driven by the mapping tables.

Flow of ``port(source)``:

1. IPython syntax is set aside (``engine.ipython``) and the cell is parsed with libcst;
   a syntax error becomes :class:`PortSyntaxError` with the user's line and column.
2. Names are resolved through the cell's imports and the session's (earlier cells).
   Full libcst scope analysis is not used: on a 2,000-line file it cost more than the
   parse itself, and the cell's imports say everything the port needs.
3. :class:`PortTransformer` rewrites calls, attributes, imports and module classes from
   the tables in ``engine.spec``; every change is logged against a rule id.
4. Positions are computed only for the nodes that were edited, by one code generation
   pass over the input and one over the output (``_Tracker``), not by
   ``PositionProvider`` over every node (which cost 1.7x a parse here).
"""

from __future__ import annotations

import ast
import contextlib
import functools
import re
from dataclasses import dataclass, field
from typing import Any, Optional

import libcst as cst
from libcst._nodes.internal import CodegenState

from msmagic.engine import spec as S
from msmagic.engine.ipython import mask, unmask
from msmagic.engine.session import MARKER, PortSession, collect_imports, dotted
from msmagic.errors import PortSyntaxError
from msmagic.result import Edit, Finding, PortResult, StatementLink

UNMAPPED_RULE = "GEN001"
UNKNOWN_RECEIVER_RULE = "GEN002"
STAR_ARGS_RULE = "GEN003"
UNKNOWN_METHOD_RULE = "API005"
IMPORT_RULE = "IMP001"
NO_TORCH_NOTE = "No PyTorch found in this cell: nothing to port."
_OPTIONS = {"session", "view", "quiet"}


def port(source: str, *, session: Optional[PortSession] = None, **options: Any) -> PortResult:
    """Port a PyTorch cell to MindSpore. See :class:`msmagic.result.PortResult`."""
    from msmagic import rules  # noqa: F401  (fills the tables)

    unknown = set(options) - _OPTIONS
    if unknown:
        raise TypeError(f"port() got unknown options: {', '.join(sorted(unknown))}")
    if not isinstance(source, str):
        raise TypeError("port() takes the cell's source as a str")
    masked = mask(source)
    try:
        module = cst.parse_module(masked.text)
    except cst.ParserSyntaxError as exc:
        raise _syntax_error(exc, masked) from None
    except (SyntaxError, ValueError, RecursionError) as exc:  # pragma: no cover - parser edge
        raise PortSyntaxError(str(exc), 1, 1) from None
    session = session or PortSession()
    engine = _Engine(module, masked.text, session)
    result = engine.run()
    code = unmask(result.code, masked)
    # positions on lines whose %time prefix was set aside move right by the prefix
    findings = [
        _shift_finding(f, masked.prefixes) for f in result.unsupported
    ]
    out = PortResult(
        source=source,
        code=code,
        edits=result.edits,
        unsupported=findings,
        notes=result.notes,
        statements=result.statements,
        options={k: v for k, v in options.items() if k != "session"},
    )
    session.learn_imports(engine.cell_imports)
    session.mindspore_names.update(engine.out_names)
    session.module_classes.update(engine.module_classes)
    session.kinds.update(engine.module_kinds)
    session.definitions.update(_top_level_calls(module))
    session.class_infos.update(engine.class_infos)
    return out


def _shift_finding(f: Finding, prefixes: dict) -> Finding:
    prefix = prefixes.get(f.line - 1)
    if not prefix:
        return f
    return Finding(f.line, f.column + len(prefix), f.api, f.rule_id, f.reason, f.out_line, f.statement)


def _syntax_error(exc: cst.ParserSyntaxError, masked) -> PortSyntaxError:
    line, col = exc.raw_line, exc.raw_column + 1
    # Prefer CPython's message and position where it has one: it is what users know.
    try:
        ast.parse(masked.text)
    except SyntaxError as err:
        if err.lineno:
            line, col = err.lineno, (err.offset or 1)
        message = err.msg
    else:  # libcst rejected something CPython accepts (rare)
        message = exc.message
    prefix = masked.prefixes.get(line - 1)
    if prefix:
        col += len(prefix)
    return PortSyntaxError(message, line, col)


# --------------------------------------------------------------------------- engine


@dataclass
class _Record:
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


@dataclass
class _ClassInfo:
    name: str
    is_module: bool
    attrs: dict = field(default_factory=dict)


class _Engine:
    def __init__(self, module: cst.Module, text: str, session: PortSession):
        self.module = module
        self.text = text
        self.session = session
        imports = collect_imports(module)
        self.cell_imports = imports
        bindings = dict(session.torch_names)
        for name in _top_level_rebinds(module):
            if name not in imports:
                bindings.pop(name, None)
        for local, qual in imports.items():
            if qual.split(".")[0] == "torch":
                bindings[local] = qual
            else:
                bindings.pop(local, None)
        self.bindings = bindings
        self.out_names: dict[str, str] = dict(session.mindspore_names)
        self.module_classes: set[str] = set(session.module_classes)
        self.records: list[_Record] = []
        self.notes: list[str] = []
        self.added_imports: list[tuple[str, str, str]] = []  # (kind, module, name)
        self.keep_torch_import = False
        self.kept_torch_locals: set[str] = set()
        #: input local name -> the local its import binds after the port (torch -> mindspore)
        self.renamed: dict[str, str] = {}
        self.class_infos: dict[str, _ClassInfo] = dict(session.class_infos)
        #: kinds of the cell's top-level names after the port (for the session)
        self.module_kinds: dict[str, Optional[str]] = {}

    # ---------------------------------------------------------------- running
    def run(self) -> PortResult:
        if not self.bindings:
            return PortResult(source=self.text, code=self.text, notes=[NO_TORCH_NOTE])
        self._plan_imports()
        transformer = PortTransformer(self)
        new_module = self.module.visit(transformer)
        self.module_kinds = transformer.scopes[0]
        new_module = self._insert_imports(new_module)
        return self._finish(new_module, transformer)

    # ---------------------------------------------------------------- imports
    def _plan_imports(self) -> None:
        """Decide what each torch import becomes, so uses can refer to the result."""
        # Earlier cells' imports count as ported too: the MindSpore side of the notebook
        # ran their ports, so ``nn`` there is mindspore.nn.
        for local, qual in self.bindings.items():
            target = self.import_target(qual)
            if target is not None:
                if local == qual:  # "import torch" / "import torch.nn" bind "torch"
                    out_local = target.split(".")[0]
                    target = out_local
                else:
                    out_local = e_out_local(self, local, qual.rsplit(".", 1)[-1],
                                            target.rsplit(".", 1)[-1], qual)
                self.out_names[out_local] = target
                self.renamed[local] = out_local
            elif qual in S.MODULES or qual in S.APIS:
                continue  # removed; uses reach their targets through added imports
            else:
                self.kept_torch_locals.add(local)

    def import_target(self, qual: str) -> Optional[str]:
        """What ``import``/``from ... import`` of ``qual`` becomes (None: removed/kept)."""
        if qual in S.MODULES:
            return S.MODULES[qual]
        entry = S.APIS.get(qual)
        return entry.target if entry is not None else None

    def ref(self, target: str, prefer: Optional[str] = None) -> cst.BaseExpression:
        """An expression naming the MindSpore object ``target`` (adding an import when
        nothing in scope reaches it). ``prefer``: the local name the user spelled the
        PyTorch original with, used when it still reaches the target."""
        parts = target.split(".")
        prefer = self.renamed.get(prefer, prefer)
        if prefer is not None and prefer in self.out_names:
            qual = self.out_names[prefer]
            if target == qual or target.startswith(qual + "."):
                return _attr_chain(prefer, target[len(qual):].split(".")[1:])
        by_qual = {}
        for local, qual in self.out_names.items():
            by_qual.setdefault(qual, local)
        for i in range(len(parts), 0, -1):
            local = by_qual.get(".".join(parts[:i]))
            if local is not None:
                if i == 1 and self._initializer_name(parts):
                    break  # `from mindspore.common.initializer import X` reads better
                return _attr_chain(local, parts[i:])
        local, rest = self._add_import(parts)
        return _attr_chain(local, rest)

    def _name_free(self, name: str) -> bool:
        if name in self.out_names:
            return self.out_names[name].startswith("mindspore")
        return re.search(rf"(?<![\w.]){re.escape(name)}\b", self.text) is None

    def _initializer_name(self, parts: list[str]) -> bool:
        return len(parts) == 4 and parts[1:3] == ["common", "initializer"] and self._name_free(parts[3])

    def _add_import(self, parts: list[str]) -> tuple[str, list[str]]:
        if len(parts) >= 3 and parts[1] in ("nn", "ops") and self._name_free(parts[1]):
            self._need("from", "mindspore", parts[1])
            self.out_names[parts[1]] = f"mindspore.{parts[1]}"
            return parts[1], parts[2:]
        if self._initializer_name(parts):
            self._need("from", "mindspore.common.initializer", parts[3])
            self.out_names[parts[3]] = ".".join(parts)
            return parts[3], []
        self._need("import", "mindspore", "")
        self.out_names.setdefault("mindspore", "mindspore")
        return "mindspore", parts[1:]

    def _need(self, kind: str, module: str, name: str) -> None:
        key = (kind, module, name)
        if key not in self.added_imports:
            self.added_imports.append(key)

    def torch_ref(self, qual: str) -> cst.BaseExpression:
        """Refer to a PyTorch object that stays PyTorch (no mapping): ``torch.x.y``."""
        self.keep_torch_import = True
        return _attr_chain("torch", qual.split(".")[1:])

    def _insert_imports(self, module: cst.Module) -> cst.Module:
        lines: list[cst.SimpleStatementLine] = []
        plain = [k for k in self.added_imports if k[0] == "import"]
        froms: dict[str, list[str]] = {}
        for kind, mod, name in self.added_imports:
            if kind == "from":
                froms.setdefault(mod, []).append(name)
        for _, mod, _ in plain:
            lines.append(parse_statement(f"import {mod}\n"))
        for mod, names in froms.items():
            lines.append(parse_statement(f"from {mod} import {', '.join(names)}\n"))
        if self.keep_torch_import:
            lines.append(
                parse_statement(f"import torch  {MARKER} kept for the PyTorch calls flagged below\n")
            )
        if not lines:
            return module
        self.inserted = lines
        body = list(module.body)
        at = _import_insertion_index(body)
        return module.with_changes(body=body[:at] + lines + body[at:])

    # ---------------------------------------------------------------- results
    def _finish(self, new_module: cst.Module, transformer: "PortTransformer") -> PortResult:
        in_wanted = {id(r.node) for r in self.records}
        top_in = list(self.module.body)
        in_wanted.update(id(s) for s in top_in)
        in_pos = _Tracker.run(self.module, in_wanted)

        out_wanted = {id(r.new) for r in self.records if r.new is not None}
        out_wanted.update(id(r.holder) for r in self.records if r.holder is not None)
        top_out = list(new_module.body)
        out_wanted.update(id(s) for s in top_out)
        out_pos = _Tracker.run(new_module, out_wanted)
        code = out_pos.code

        in_ranges = [_stmt_range(in_pos, s) for s in top_in]
        origin = transformer.top_origin  # id(output top statement) -> input index
        out_ranges: dict[int, tuple[int, int]] = {}
        links_after: dict[int, list[tuple[int, int]]] = {}
        for s in top_out:
            idx = origin.get(id(s))
            rng = _stmt_range(out_pos, s)
            if idx is not None:
                links_after.setdefault(idx, []).append(rng)
            out_ranges[id(s)] = rng
        statements = []
        for i, rng in enumerate(in_ranges):
            after = links_after.get(i)
            statements.append(
                StatementLink(i, rng, (after[0][0], after[-1][1]) if after else None)
            )

        edits: list[Edit] = []
        findings: list[Finding] = []
        for r in self.records:
            before = in_pos.span(r.node)
            if before is None:
                before = in_ranges[r.statement] if 0 <= r.statement < len(in_ranges) else (1, 1)
            after = None
            if r.new is not None:
                after = out_pos.span(r.new)
            if after is None and r.holder is not None:
                after = out_pos.span(r.holder)
            if after is None:
                link = statements[r.statement].after if 0 <= r.statement < len(statements) else None
                after = link or (before[0], before[0])
            if r.finding:
                start = in_pos.starts.get(id(r.node))
                col = start[1] + 1 if start else 1
                findings.append(
                    Finding(before[0], col, r.api, r.rule_id, r.reason, after[0], r.statement)
                )
            else:
                edits.append(
                    Edit(
                        rule_id=r.rule_id,
                        title=_title(r.rule_id),
                        before=before,
                        after=after,
                        api=r.api,
                        detail=r.detail,
                        statement=r.statement,
                        tags=r.tags,
                    )
                )
        # Added imports are edits of the import rule, anchored on the insertion point.
        inserted = getattr(self, "inserted", [])
        if inserted:
            rngs = [out_pos.span(s) for s in inserted]
            rngs = [r for r in rngs if r]
            if rngs:
                at = rngs[0][0]
                anchor_in = in_ranges[0][0] if in_ranges else 1
                edits.append(
                    Edit(
                        IMPORT_RULE,
                        _title(IMPORT_RULE),
                        (anchor_in, anchor_in),
                        (at, rngs[-1][1]),
                        api="import",
                        detail="added " + "; ".join(
                            new_module.code_for_node(s).strip() for s in inserted
                        ),
                    )
                )
        edits.sort(key=lambda e: (e.after[0], e.before[0]))
        findings.sort(key=lambda f: (f.line, f.column))
        notes = list(self.notes)
        if not edits and not findings:
            notes.append("Nothing in this cell needs porting: it is already MindSpore-compatible.")
        return PortResult(
            source=self.text, code=code, edits=edits, unsupported=findings, notes=notes,
            statements=statements,
        )


def _title(rule_id: str) -> str:
    from msmagic.rules.registry import RULES

    rule = RULES.get(rule_id)
    return rule.title if rule else rule_id


def _stmt_range(pos: "_Tracker", stmt: cst.CSTNode) -> tuple[int, int]:
    start = pos.starts.get(id(stmt))
    end = pos.ends.get(id(stmt))
    if start is None or end is None:
        return (1, 1)
    lead = len(getattr(stmt, "leading_lines", ()))
    s = start[0] + lead
    e = end[0] - 1 if end[1] == 0 else end[0]
    return (s, max(s, e))


def _import_insertion_index(body: list) -> int:
    """After the leading block of imports (and a docstring, and IPython lines such as a
    ``%%ms_port`` or ``%matplotlib`` line, which must stay first)."""
    at = 0
    for i, stmt in enumerate(body):
        if isinstance(stmt, cst.SimpleStatementLine) and all(
            isinstance(s, (cst.Import, cst.ImportFrom))
            or (isinstance(s, cst.Expr) and isinstance(s.value, cst.SimpleString) and i == 0)
            or (isinstance(s, cst.Expr) and isinstance(s.value, cst.Name)
                and s.value.value.startswith("__msmagic_ipython_"))
            for s in stmt.body
        ):
            at = i + 1
            continue
        break
    return at


def _top_level_calls(module: cst.Module) -> dict:
    """name -> the call of a top-level ``name = call(...)`` statement (original node)."""
    out = {}
    for stmt in module.body:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if (isinstance(small, cst.Assign) and len(small.targets) == 1
                        and isinstance(small.targets[0].target, cst.Name)
                        and isinstance(small.value, cst.Call)):
                    out[small.targets[0].target.value] = small.value
    return out


def _top_level_rebinds(module: cst.Module) -> set[str]:
    names: set[str] = set()
    for stmt in module.body:
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            names.add(stmt.name.value)
        elif isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                targets = []
                if isinstance(small, cst.Assign):
                    targets = [t.target for t in small.targets]
                elif isinstance(small, (cst.AnnAssign, cst.AugAssign)):
                    targets = [small.target]
                for t in targets:
                    names.update(_target_names(t))
        elif isinstance(stmt, cst.For):
            names.update(_target_names(stmt.target))
    return names


def _target_names(t) -> set[str]:
    if isinstance(t, cst.Name):
        return {t.value}
    if isinstance(t, (cst.Tuple, cst.List)):
        out = set()
        for el in t.elements:
            out |= _target_names(el.value)
        return out
    if isinstance(t, cst.StarredElement):
        return _target_names(t.value)
    return set()


def _attr_chain(root: str, rest: list[str]) -> cst.BaseExpression:
    node: cst.BaseExpression = cst.Name(root)
    for part in rest:
        node = cst.Attribute(value=node, attr=cst.Name(part))
    return node


def _is_class_name(target: str) -> bool:
    last = target.rsplit(".", 1)[-1]
    return last[:1].isupper()


# --------------------------------------------------------------------------- positions


_NO_CONTEXT = contextlib.nullcontext()


class _Tracker(CodegenState):
    """Code generation that notes where chosen nodes start and end (line, column)."""

    @classmethod
    def run(cls, module: cst.Module, wanted: set[int]) -> "_Tracker":
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


# --------------------------------------------------------------------------- transformer


def _subclasses(base) -> frozenset:
    out, todo = set(), [base]
    while todo:
        for sub in todo.pop().__subclasses__():
            todo.append(sub)
            if not getattr(sub, "__abstractmethods__", None):
                out.add(sub)
    return frozenset(out)


_STATEMENTS = _subclasses(cst.BaseCompoundStatement) | {cst.SimpleStatementLine}
_EXPRESSIONS = _subclasses(cst.BaseExpression)


@functools.lru_cache(maxsize=None)
def _dispatch(cls, prefix: str, node_type):
    """``cls.visit_Call`` / ``cls.leave_Call`` for a node type, looked up once (libcst's
    own dispatch formats and looks the name up for every node)."""
    return getattr(cls, f"{prefix}{node_type.__name__}", None)


class PortTransformer(cst.CSTTransformer):
    def __init__(self, engine: _Engine):
        super().__init__()
        self.e = engine
        self.top_index = -1
        self.depth = 0
        self.top_origin: dict[int, int] = {}
        #: original statements (lines and compound statements) enclosing the node being
        #: ported, innermost last; ``depth`` is how many there are
        self.holders: list[cst.CSTNode] = []
        self._orphan_lines: list = []
        self._method_calls: list[set[str]] = []
        #: enclosing blocks (module body, indented blocks), innermost last:
        #: [original statements, id -> index, index of the statement being ported]
        self.blocks: list[list] = []
        #: original Call nodes enclosing the node being left, innermost last
        self.calls: list[cst.Call] = []
        self.function_method_calls: set[str] = set()
        self._comments: dict[int, list[str]] = {}
        self._holder_records: dict[int, list[_Record]] = {}
        self._skip: set[int] = set()  # nodes handled by a parent (call funcs, chains)
        self._non_load: set[int] = set()
        self._shadow: list[set[str]] = []
        self.scopes: list[dict[str, str]] = [dict(engine.session.kinds)]
        self.classes: list[_ClassInfo] = []
        self.functions: list[cst.FunctionDef] = []
        self.updated: dict[int, cst.CSTNode] = {}
        self._kind_cache: dict[int, Optional[str]] = {}
        self._line_hooks: dict[int, list] = {}  # id(original line) -> [fn(updated line)]
        #: per-port scratch state for rules, one dict per rule module (``scratch["autograd"]``):
        #: what a rule computes per original statement is computed once and looked up
        self.scratch: dict[str, dict] = {}

    # ------------------------------------------------------------ bookkeeping
    def on_visit(self, node: cst.CSTNode) -> bool:
        kind = type(node)
        if kind is cst.IndentedBlock or kind is cst.Module:
            self.blocks.append([node.body, {id(s): i for i, s in enumerate(node.body)}, -1])
        elif kind in _STATEMENTS:
            if self.depth == 0:
                self.top_index += 1
            self.depth += 1
            self.holders.append(node)
            block = self.blocks[-1] if self.blocks else None
            if block is not None and id(node) in block[1]:
                block[2] = block[1][id(node)]
            if isinstance(node, cst.SimpleStatementLine):
                comment = node.trailing_whitespace.comment
                if comment is not None and MARKER in comment.value:
                    return False  # flagged by an earlier port: leave the line alone
        visit = _dispatch(type(self), "visit_", kind)
        return True if visit is None else visit(self, node) is not False

    # The transformer defines no per-field visitors (visit_Call_func...): skip libcst's
    # name lookup for them, done for every field of every node otherwise.
    def on_visit_attribute(self, node, attribute) -> None:
        return None

    def on_leave_attribute(self, original_node, attribute) -> None:
        return None

    def on_leave(self, original: cst.CSTNode, updated: cst.CSTNode):
        leave = _dispatch(type(self), "leave_", type(original))
        result = updated if leave is None else leave(self, original, updated)
        kind = type(original)
        if kind in _EXPRESSIONS:
            self.updated[id(original)] = result
        elif kind is cst.IndentedBlock or kind is cst.Module:
            self.blocks.pop()
        elif kind in _STATEMENTS:
            self.holders.pop()
            self.depth -= 1
            if isinstance(result, cst.SimpleStatementLine) and not result.body:
                if self.depth == 0:
                    self._orphan_lines.extend(result.leading_lines)
                    self._holder_records.pop(id(original), None)
                    return cst.RemovalSentinel.REMOVE
                result = result.with_changes(body=[cst.Pass()])
            elif isinstance(result, cst.RemovalSentinel) and self.depth > 0:
                result = original.with_changes(body=[cst.Pass()]) if isinstance(original, cst.SimpleStatementLine) else result
            if self.depth == 0 and self._orphan_lines and isinstance(result, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
                result = result.with_changes(leading_lines=[*self._orphan_lines, *result.leading_lines])
                self._orphan_lines = []
            result = self._apply_comments(original, result)
            hooks = STATEMENT_HOOKS.get(kind)
            if hooks and isinstance(result, cst.CSTNode):
                self.holders.append(original)  # records made by hooks belong here
                for hook in hooks:
                    result = hook(self, original, result)
                    if not isinstance(result, cst.CSTNode):
                        break  # a FlattenSentinel / removal ends the chain
                self.holders.pop()
                if id(original) in self._comments:  # findings raised by the hooks
                    if isinstance(result, cst.FlattenSentinel):
                        nodes = list(result.nodes)
                        nodes[-1] = self._apply_comments(original, nodes[-1])
                        result = cst.FlattenSentinel(nodes)
                    else:
                        result = self._apply_comments(original, result)
            for hook in self._line_hooks.pop(id(original), ()):
                if isinstance(result, cst.SimpleStatementLine):
                    result = hook(result)
            recs = self._holder_records.pop(id(original), ())
            anchor = _first_node(result)
            for r in recs:
                r.holder = anchor
            if self.depth == 0:
                for node in _flatten(result):
                    self.top_origin[id(node)] = self.top_index
        return result

    def _apply_comments(self, original, result):
        msgs = self._comments.pop(id(original), None)
        if not msgs or not isinstance(result, cst.CSTNode):
            return result
        text = f"{MARKER} " + "; ".join(dict.fromkeys(msgs))
        if isinstance(result, cst.SimpleStatementLine):
            tw = result.trailing_whitespace
            if tw.comment is not None and text in tw.comment.value:
                return result
            value = f"{tw.comment.value}  {text}" if tw.comment else text
            return result.with_changes(
                trailing_whitespace=tw.with_changes(
                    whitespace=tw.whitespace if tw.comment else cst.SimpleWhitespace("  "),
                    comment=cst.Comment(value),
                )
            )
        body = getattr(result, "body", None)
        if isinstance(body, cst.IndentedBlock):
            hdr = body.header
            if hdr.comment is not None and text in hdr.comment.value:
                return result
            value = f"{hdr.comment.value}  {text}" if hdr.comment else text
            return result.with_changes(
                body=body.with_changes(
                    header=hdr.with_changes(
                        whitespace=hdr.whitespace if hdr.comment else cst.SimpleWhitespace("  "),
                        comment=cst.Comment(value),
                    )
                )
            )
        return result

    # ------------------------------------------------------------ records
    def record(self, rule: str, node: cst.CSTNode, new=None, *, api="", detail="", tags=()):
        r = _Record(rule, node, self.top_index, new=new, api=api, detail=detail, tags=frozenset(tags))
        self.e.records.append(r)
        if self.holders:
            self._holder_records.setdefault(id(self.holders[-1]), []).append(r)
        return r

    def finding(self, rule: str, node: cst.CSTNode, api: str, reason: str, comment: str = ""):
        r = _Record(rule, node, self.top_index, api=api, reason=reason, finding=True)
        self.e.records.append(r)
        if self.holders:
            holder = self.holders[-1]
            self._holder_records.setdefault(id(holder), []).append(r)
            self._comments.setdefault(id(holder), []).append(f"{rule} {comment or reason}")
        return r

    # ------------------------------------------------------------ names
    def resolve(self, node) -> Optional[str]:
        if isinstance(node, cst.Name):
            name = node.value
            if name not in self.e.bindings:
                return None
            for shadow in self._shadow:
                if name in shadow:
                    return None
            return self.e.bindings[name]
        if isinstance(node, cst.Attribute):
            base = self.resolve(node.value)
            return f"{base}.{node.attr.value}" if base else None
        return None

    @property
    def torch_in_scope(self) -> bool:
        return bool(self.e.bindings)

    @property
    def in_module_class(self) -> bool:
        return bool(self.classes) and self.classes[-1].is_module

    def siblings(self, depth: int = -1) -> tuple[list, list]:
        """Original statements before and after the current statement of a block
        (``depth`` -1: the innermost)."""
        if not self.blocks:
            return [], []
        body, _, index = self.blocks[depth]
        if index < 0:
            return [], list(body)
        return list(body[:index]), list(body[index + 1:])

    def lookup(self, name: str) -> Optional[str]:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        return None

    def bind(self, name: str, kind: Optional[str]) -> None:
        self.scopes[-1][name] = kind

    # ------------------------------------------------------------ kinds
    def kind_of(self, node) -> Optional[str]:
        key = id(node)
        if key in self._kind_cache:
            return self._kind_cache[key]
        kind = self._kind_of(node)
        self._kind_cache[key] = kind
        return kind

    def _kind_of(self, node) -> Optional[str]:
        if isinstance(node, cst.Name):
            if node.value in self.e.module_classes:
                return "class:" + node.value
            return self.lookup(node.value)
        if isinstance(node, cst.Attribute):
            qual = self.resolve(node)
            if qual:
                entry = S.APIS.get(qual)
                return entry.returns if entry and entry.attr else None
            if isinstance(node.value, cst.Name) and node.value.value == "self" and self.classes:
                return self.classes[-1].attrs.get(node.attr.value)
            base = self.kind_of(node.value)
            if base and base.startswith("module:"):
                info = self.e.class_infos.get(base[7:])
                if info:
                    return info.attrs.get(node.attr.value)
            if base == S.TENSOR and node.attr.value in ("T", "mT", "data", "grad", "real", "imag"):
                return S.TENSOR
            for m in S.MEMBERS.get(node.attr.value, ()):
                if m.returns and S.kind_matches(m.receiver, base):
                    return m.returns
            return None
        if isinstance(node, cst.Call):
            func = node.func
            qual = self.resolve(func)
            if qual:
                entry = S.APIS.get(qual)
                return entry.returns if entry else None
            fk = self.kind_of(func)
            if fk and fk.startswith("class:"):
                return "module:" + fk[6:]
            if fk and fk.startswith("module"):
                return S.TENSOR
            if isinstance(func, cst.Attribute):
                recv = self.kind_of(func.value)
                for m in S.METHODS.get(func.attr.value, ()):
                    if S.kind_matches(m.receiver, recv):
                        return recv if m.returns == "same" else m.returns
            return None
        if isinstance(node, cst.BinaryOperation):
            left, right = self.kind_of(node.left), self.kind_of(node.right)
            return S.TENSOR if S.TENSOR in (left, right) else None
        if isinstance(node, cst.UnaryOperation):
            return self.kind_of(node.expression)
        if isinstance(node, cst.Subscript):
            return S.TENSOR if self.kind_of(node.value) == S.TENSOR else None
        return None

    # ------------------------------------------------------------ scopes & classes
    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        self._non_load.add(id(node.name))
        is_module = False
        for base in node.bases:
            qual = self.resolve(base.value)
            if qual == "torch.nn.Module" or (
                isinstance(base.value, cst.Name) and base.value.value in self.e.module_classes
            ):
                is_module = True
        info = _ClassInfo(node.name.value, is_module)
        if is_module:
            self.e.module_classes.add(node.name.value)
            parent = next(
                (self.e.class_infos[b.value.value] for b in node.bases
                 if isinstance(b.value, cst.Name) and b.value.value in self.e.class_infos),
                None,
            )
            if parent:
                info.attrs.update(parent.attrs)
        self.e.class_infos[node.name.value] = info
        self.classes.append(info)
        self.scopes.append({})
        return True

    def leave_ClassDef(self, original, updated):
        info = self.classes.pop()
        self.scopes.pop()
        if info.is_module:
            for hook in CLASS_HOOKS:
                updated = hook(self, original, updated)
        self.bind(original.name.value, None)
        return updated

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        self._non_load.add(id(node.name))
        params = _param_names(node.params)
        self._shadow.append({p for p in params if p in self.e.bindings})
        scope: dict[str, Optional[str]] = {p: None for p in params}
        in_method = bool(self.classes) and not self.functions
        if in_method and self.classes[-1].is_module and node.name.value in ("forward", "__call__"):
            for p in _positional_params(node.params)[1:]:
                scope[p] = S.TENSOR
        self.functions.append(node)
        self.scopes.append(scope)
        self._method_calls.append(set())
        return True

    def leave_FunctionDef(self, original, updated):
        self._shadow.pop()
        self.scopes.pop()
        self.functions.pop()
        #: names of the methods the function just left calls (``x.train()`` -> "train"),
        #: for hooks that would otherwise walk the body again
        self.function_method_calls = self._method_calls.pop()
        if self._method_calls:
            self._method_calls[-1] |= self.function_method_calls
        if self.classes and not self.functions and self.classes[-1].is_module:
            for hook in FUNCTION_HOOKS:
                updated = hook(self, original, updated)
        return updated

    def visit_Lambda(self, node):
        self._shadow.append(_param_names(node.params))
        return True

    def leave_Lambda(self, original, updated):
        self._shadow.pop()
        return updated

    def visit_Param(self, node):
        self._non_load.add(id(node.name))
        return True

    def visit_Arg(self, node):
        if node.keyword is not None:
            self._non_load.add(id(node.keyword))
        return True

    def carry_lines(self, lines) -> None:
        """Keep the comment/blank lines of a top-level statement a rule removes: they move
        to the next statement (or the end of the cell)."""
        self._orphan_lines.extend(lines)

    def leave_Module(self, original, updated):
        if self._orphan_lines:
            updated = updated.with_changes(footer=[*self._orphan_lines, *updated.footer])
        return updated

    def visit_Import(self, node) -> bool:
        return False

    def visit_ImportFrom(self, node) -> bool:
        return False

    def leave_Import(self, original, updated):
        return _rewrite_import(self, original)

    def leave_ImportFrom(self, original, updated):
        return _rewrite_import_from(self, original)

    # ------------------------------------------------------------ kinds from assignments
    def leave_Assign(self, original, updated):
        kind = self.kind_of(original.value)
        for t in original.targets:
            self._bind_target(t.target, kind)
        return updated

    def leave_AnnAssign(self, original, updated):
        if original.value is not None:
            self._bind_target(original.target, self.kind_of(original.value))
        return updated

    def _bind_target(self, target, kind) -> None:
        if isinstance(target, cst.Name):
            self.bind(target.value, kind)
            if self._shadow and target.value in self.e.bindings:
                # a function-local assignment hides the import from here on
                self._shadow[-1].add(target.value)
        elif (
            isinstance(target, cst.Attribute)
            and isinstance(target.value, cst.Name)
            and target.value.value == "self"
            and self.classes
        ):
            self.classes[-1].attrs[target.attr.value] = kind
        elif isinstance(target, (cst.Tuple, cst.List)):
            for el in target.elements:
                self._bind_target(el.value, None)

    def visit_For(self, node: cst.For) -> bool:
        kind = self.kind_of(node.iter)
        t = node.target
        if kind == S.PARAMS and isinstance(t, cst.Name):
            self.bind(t.value, S.TENSOR)
        elif kind in ("named:" + S.TENSOR, "named:" + S.MODULE) and isinstance(t, cst.Tuple) and len(t.elements) == 2:
            last = t.elements[1].value
            if isinstance(last, cst.Name):
                self.bind(last.value, kind[6:])
        elif kind == "iter:" + S.MODULE and isinstance(t, cst.Name):
            self.bind(t.value, S.MODULE)
        elif kind in S.BATCH_ITERABLES:
            # batches of a data loader / dataset: tensors, or tuples of tensors
            for n in _target_names(t):
                self.bind(n, S.TENSOR)
        else:
            for n in _target_names(t):
                self.bind(n, None)
        return True

    # ------------------------------------------------------------ expressions
    def visit_Call(self, node: cst.Call) -> bool:
        self._skip.add(id(node.func))
        self.calls.append(node)
        return True

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        self._skip.add(id(node.value))
        self._non_load.add(id(node.attr))
        return True

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        self.calls.pop()  # handlers see the calls enclosing this one
        if self._method_calls and type(original.func) is cst.Attribute:
            self._method_calls[-1].add(original.func.attr.value)
        qual = self.resolve(original.func)
        if qual:
            entry = S.APIS.get(qual)
            if entry is None:
                return self.unmapped(original, updated, qual, call=True)
            return Site(self, original, updated, entry, qual).run()
        func = original.func
        if isinstance(func, cst.Attribute) and self.torch_in_scope:
            specs = S.METHODS.get(func.attr.value)
            if specs:
                return self._method(original, updated, specs)
            self._unknown_tensor_method(original)
        return updated

    def _unknown_tensor_method(self, original: cst.Call) -> None:
        """A method on a value known to be a tensor with no verified entry: flagged."""
        name = original.func.attr.value
        if name in S.HANDLED_BY_STATEMENT_RULES or name.startswith("__"):
            return
        if self.kind_of(original.func.value) != S.TENSOR:
            return
        self.finding(
            UNKNOWN_METHOD_RULE, original, f"Tensor.{name}",
            f"Tensor.{name} has no verified MindSpore mapping (the method is missing or computed "
            "something else on PyTorch's samples); left unchanged",
            comment=f"Tensor.{name} not verified for MindSpore",
        )

    def _method(self, original: cst.Call, updated: cst.Call, specs: list[S.Method]):
        recv_kind = self.kind_of(original.func.value)
        name = original.func.attr.value
        chosen = None
        for m in specs:
            if S.kind_matches(m.receiver, recv_kind):
                chosen = m
                break
        if chosen is None and recv_kind is None:
            for m in specs:
                site = Site(self, original, updated, m, f"{m.receiver}.{name}")
                ok = m.unambiguous(site) if callable(m.unambiguous) else m.unambiguous
                if ok:
                    chosen = m
                    break
            if chosen is None:
                receivers = " or ".join(dict.fromkeys(m.receiver for m in specs))
                if specs and all(_is_torch_only(m) for m in specs):
                    self.finding(
                        UNKNOWN_RECEIVER_RULE, original, f".{name}()",
                        f"cannot tell whether the receiver of .{name}() is a {receivers}; left unchanged",
                    )
                return updated
        if chosen is None:
            if recv_kind == S.TENSOR:
                self._unknown_tensor_method(original)
            return updated
        label = {"tensor": "Tensor", "module": "Module", "optimizer": "Optimizer"}.get(chosen.receiver, "")
        return Site(self, original, updated, chosen, f"{label}.{name}" if label else f".{name}").run()

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute):
        if id(original) in self._skip:
            return updated
        qual = self.resolve(original)
        if qual:
            return self._qualified_ref(original, updated, qual)
        if not self.torch_in_scope:
            return updated
        members = S.MEMBERS.get(original.attr.value)
        if not members:
            return updated
        recv = self.kind_of(original.value)
        for m in members:
            if S.kind_matches(m.receiver, recv) or (recv is None and m.unambiguous):
                site = Site(self, original, updated, m, f".{m.name}")
                if m.handler is not None:
                    out = m.handler(site)
                    return updated if out is None else out
                if m.target:
                    new = updated.with_changes(attr=cst.Name(m.target))
                    site.edit(m.rule, new, detail=m.detail or f".{m.name} -> .{m.target}")
                    return new
        return updated

    def leave_UnaryOperation(self, original, updated):
        """Operators are kept as written; a rule may flag one (``spec.OPERATOR_HOOKS``)."""
        hook = S.OPERATOR_HOOKS.get(type(original.operator))
        if hook is not None and self.torch_in_scope:
            hook(self, original)
        return updated

    def leave_Name(self, original: cst.Name, updated: cst.Name):
        if id(original) in self._skip or id(original) in self._non_load:
            return updated
        if original.value not in self.e.bindings:
            return updated
        qual = self.resolve(original)
        if not qual:
            return updated
        if qual in S.MODULES or original.value in self.e.kept_torch_locals:
            return updated
        return self._qualified_ref(original, updated, qual)

    def _qualified_ref(self, original, updated, qual: str):
        """A torch object used as a value (not called): ``torch.float32``, ``nn.Module``."""
        if qual in S.MODULES:
            target = S.MODULES[qual]
            if target is None:
                return self.unmapped(original, updated, qual, call=False)
            new = self.e.ref(target)
            return new
        entry = S.APIS.get(qual)
        if entry is None:
            return self.unmapped(original, updated, qual, call=False)
        site = Site(self, original, updated, entry, qual)
        if entry.attr and entry.handler is not None:
            out = entry.handler(site)
            return updated if out is None else out
        if entry.target is None:
            return self.unmapped(original, updated, qual, call=False)
        new = self.e.ref(entry.target, prefer=_root_name(original))
        if not entry.attr and (entry.rename or entry.values or entry.defaults or entry.handler):
            site.edit(entry.rule, new, detail=f"{qual} -> {entry.target}")
            self.finding(
                entry.rule, original, qual,
                f"{qual} is used without being called here; its arguments will not be ported where it is called",
                comment=f"{qual} referenced, arguments not ported",
            )
            return new
        if not _same_ref(new, updated):
            site.edit(entry.rule, new, detail=f"{qual} -> {entry.target}")
        return new

    def unmapped(self, original, updated, qual: str, *, call: bool):
        """A PyTorch API with no entry in the tables: keep it PyTorch, say so."""
        root_local = _root_name(original.func if call else original)
        self.finding(
            UNMAPPED_RULE, original, qual,
            f"no MindSpore mapping is known for {qual}; it was left as PyTorch",
            comment=f"{qual} has no known MindSpore mapping; left as PyTorch",
        )
        if root_local in self.e.kept_torch_locals:
            return updated
        ref = self.e.torch_ref(qual)
        return updated.with_changes(func=ref) if call else ref


FUNCTION_HOOKS: list = []  # fn(transformer, original FunctionDef, updated) -> FunctionDef
#: statement type (cst.For, cst.With, ...) -> hooks fn(transformer, original, updated)
#: returning the new statement, a FlattenSentinel of statements, or a RemovalSentinel.
#: They run after the statement's children were ported.
STATEMENT_HOOKS: dict = {}
CLASS_HOOKS: list = []  # fn(transformer, original ClassDef, updated) -> ClassDef (Module subclasses)


def _is_torch_only(m: S.Method) -> bool:
    return m.receiver in (S.TENSOR, S.MODULE, S.OPTIMIZER) and not m.unambiguous


def _root_name(node) -> Optional[str]:
    while isinstance(node, cst.Attribute):
        node = node.value
    return node.value if isinstance(node, cst.Name) else None


def _first_node(result):
    if isinstance(result, cst.FlattenSentinel):
        nodes = list(result.nodes)
        result = nodes[0] if nodes else None
    if isinstance(result, cst.SimpleStatementLine) and result.body:
        return result.body[0]
    return result if isinstance(result, cst.CSTNode) else None


def _flatten(result):
    if isinstance(result, cst.FlattenSentinel):
        return list(result.nodes)
    if isinstance(result, cst.CSTNode):
        return [result]
    return []


def _param_names(params: cst.Parameters) -> set[str]:
    out = {p.name.value for p in params.params}
    out |= {p.name.value for p in params.posonly_params}
    out |= {p.name.value for p in params.kwonly_params}
    if isinstance(params.star_arg, cst.Param):
        out.add(params.star_arg.name.value)
    if params.star_kwarg is not None:
        out.add(params.star_kwarg.name.value)
    return out


def _positional_params(params: cst.Parameters) -> list[str]:
    return [p.name.value for p in list(params.posonly_params) + list(params.params)]


def _code(node) -> str:
    return _EMPTY_MODULE.code_for_node(node)


_EMPTY_MODULE = cst.Module(body=[])


@functools.lru_cache(maxsize=2048)
def parse_expression(text: str) -> cst.BaseExpression:
    """libcst nodes are immutable, so a parsed snippet can be shared between edits."""
    return cst.parse_expression(text)


@functools.lru_cache(maxsize=512)
def parse_statement(text: str):
    return cst.parse_statement(text)


def _same_ref(a, b) -> bool:
    try:
        return dotted(a) == dotted(b)
    except TypeError:
        return False


# --------------------------------------------------------------------------- sites


class Site:
    """What a handler sees: the call (or attribute) being ported and helpers to port it."""

    def __init__(self, t: PortTransformer, original, updated, entry, api: str):
        self.t = t
        self.original = original
        self.updated = updated
        self.entry = entry
        self.api = api
        self.changes: list[str] = []

    # -- context
    @property
    def in_module_class(self) -> bool:
        return self.t.in_module_class

    def siblings(self) -> tuple[list, list]:
        """Original statements before and after the statement holding this node, in
        the innermost block (module body or indented block)."""
        return self.t.siblings()

    def earlier_definition(self, name: str):
        """The original call that bound ``name`` at the top level of an earlier ported
        cell of this session (``scheduler = StepLR(opt, ...)``), or None."""
        return self.t.e.session.definitions.get(name)

    @property
    def statement(self):
        """The original statement line (or compound statement) holding this node."""
        return self.t.holders[-1] if self.t.holders else None

    def require_import(self, module: str) -> str:
        """Make ``import <module>`` (a standard-library module the generated code uses)
        available once; returns the name to refer to it by."""
        e = self.t.e
        if e.cell_imports.get(module) != module:
            e._need("import", module, "")
        return module

    def inside_call_to(self, apis) -> bool:
        """Is this node an argument (at any depth) of a call to one of ``apis``?"""
        return any(self.t.resolve(c.func) in apis for c in self.t.calls)

    @property
    def at_top_level(self) -> bool:
        return not self.t.functions and not self.t.classes

    @property
    def is_statement(self) -> bool:
        """The call is a whole expression statement: its value is not used."""
        holder = self.t.holders[-1] if self.t.holders else None
        return isinstance(holder, cst.SimpleStatementLine) and any(
            isinstance(s, cst.Expr) and s.value is self.original for s in holder.body
        )

    def kind_of(self, original_node) -> Optional[str]:
        return self.t.kind_of(original_node)

    def updated_of(self, original_node):
        return self.t.updated.get(id(original_node), original_node)

    @property
    def receiver(self):
        """The (already ported) receiver of a method call or member access."""
        node = self.updated.func.value if isinstance(self.updated, cst.Call) else self.updated.value
        return node

    @property
    def receiver_original(self):
        return self.original.func.value if isinstance(self.original, cst.Call) else self.original.value

    # -- building
    def ref(self, target: str) -> cst.BaseExpression:
        node = self.original.func if isinstance(self.original, cst.Call) else self.original
        return self.t.e.ref(target, prefer=_root_name(node))

    @staticmethod
    def parse(text: str) -> cst.BaseExpression:
        return parse_expression(text)

    @staticmethod
    def code(node) -> str:
        return _code(node)

    @staticmethod
    def literal(node, default=None):
        """The Python value of a literal expression, or ``default``."""
        try:
            return ast.literal_eval(_code(node).strip())
        except Exception:
            return default

    def edit(self, rule: str, new=None, *, detail: str = "", tags=()):
        tags = set(tags)
        if getattr(self.entry, "random", False):
            tags.add("random")
        return self.t.record(rule, self.original, new, api=self.api, detail=detail, tags=tags)

    def finding(self, rule: str, reason: str, *, api: str = "", comment: str = ""):
        return self.t.finding(rule, self.original, api or self.api, reason, comment)

    def on_line(self, fn) -> bool:
        """Have ``fn(updated line)`` return the replacement (a statement or a
        ``FlattenSentinel`` of statements) of the simple statement line holding this
        call, once that line is ported. False when the call is not in one."""
        holder = self.t.holders[-1] if self.t.holders else None
        if not isinstance(holder, cst.SimpleStatementLine):
            return False
        self.t._line_hooks.setdefault(id(holder), []).append(fn)
        return True

    def discard(self, *original_nodes) -> None:
        """Forget the edits logged for these nodes: the handler dropped what they became
        (``x.detach().cpu().numpy()`` -> ``x.asnumpy()``)."""
        gone = {id(n) for n in original_nodes}
        self.t.e.records[:] = [r for r in self.t.e.records if r.finding or id(r.node) not in gone]

    # -- arguments
    def bound(self) -> Optional[list[tuple[Optional[str], cst.Arg, bool]]]:
        """(PyTorch parameter name, updated Arg, passed positionally) for each argument;
        ``None`` when ``*args``/``**kwargs`` make binding impossible."""
        sig = self.entry.sig
        out = []
        pos = 0
        for arg in self.updated.args:
            if arg.star:
                return None
            if arg.keyword is None:
                name = sig[pos] if pos < len(sig) else None
                pos += 1
                out.append((name, arg, True))
            else:
                out.append((arg.keyword.value, arg, False))
        return out

    def arg(self, name: str) -> Optional[cst.Arg]:
        bound = self.bound() or []
        for p, a, _ in bound:
            if p == name:
                return a
        return None

    def apply(self, func=None) -> cst.Call:
        """Apply the entry's declarative part to the call; returns the new call."""
        e = self.entry
        call = self.updated
        bound = self.bound()
        has_arg_rules = bool(e.rename or e.values or e.drop or e.unsupported or e.defaults)
        if bound is None:
            if has_arg_rules:
                self.finding(
                    STAR_ARGS_RULE,
                    f"arguments passed with * or ** cannot be checked against {self.api}'s "
                    "MindSpore counterpart",
                    comment="*args/**kwargs not checked",
                )
            return call.with_changes(func=func) if func is not None else call
        ms_sig = e.ms_sig if e.ms_sig is not None else tuple(e.rename.get(p, p) for p in e.sig)
        new_args: list[cst.Arg] = []
        present = set()
        positional_ok = True
        for name, arg, positional in bound:
            present.add(name)
            if name in e.drop:
                self.changes.append(f"dropped {name}=")
                self.edit(e.drop[name], None, detail=f"{name}= dropped: {self.code(arg.value).strip()}")
                continue
            if name in e.unsupported:
                spec = e.unsupported[name]
                pred, reason = spec if isinstance(spec, tuple) else (None, spec)
                if pred is None or pred(self, arg):
                    self.finding(
                        e.rule, f"{name}={self.code(arg.value).strip()}: {reason}",
                        comment=f"{name}= has no MindSpore equivalent, removed",
                    )
                    continue
                if name not in e.values:  # a harmless value (PyTorch's default):
                    # MindSpore has no such parameter, so passing it on would raise
                    self.changes.append(f"dropped {name}= (default value)")
                    continue
                # otherwise the value transform below decides
            out_name = e.rename.get(name, name) if name else None
            value = arg.value
            if name in e.values:
                new_value = e.values[name](self, arg)
                if isinstance(new_value, tuple):  # (new keyword, value)
                    out_name, new_value = new_value
                if new_value is False:  # the transform removed the argument
                    continue
                if new_value is not None and new_value is not arg.value:
                    value = new_value
                    if not any(c.startswith(f"{name} ") for c in self.changes):
                        self.changes.append(f"{name} value ported")
            keep_pos = (
                positional
                and positional_ok
                and out_name is not None
                and len(new_args) < len(ms_sig)
                and ms_sig[len(new_args)] == out_name
            ) or (positional and out_name is None)
            if out_name != name and name is not None and not keep_pos:
                self.changes.append(f"{name}= -> {out_name}=")
            if keep_pos:
                new_args.append(arg.with_changes(value=value))
            else:
                positional_ok = False
                new_args.append(
                    arg.with_changes(
                        keyword=cst.Name(out_name),
                        value=value,
                        equal=cst.AssignEqual(
                            whitespace_before=cst.SimpleWhitespace(""),
                            whitespace_after=cst.SimpleWhitespace(""),
                        ),
                    )
                )
        for ms_name, default in e.defaults.items():
            text, rule = default if isinstance(default, tuple) else (default, e.rule)
            torch_names = {p for p, m in e.rename.items() if m == ms_name} | {ms_name}
            if present & torch_names:
                continue
            if any(a.keyword is not None and a.keyword.value == ms_name for a in new_args):
                continue
            new_args.append(
                cst.Arg(
                    keyword=cst.Name(ms_name),
                    value=parse_expression(text),
                    equal=cst.AssignEqual(
                        whitespace_before=cst.SimpleWhitespace(""),
                        whitespace_after=cst.SimpleWhitespace(""),
                    ),
                )
            )
            self.changes.append(f"added {ms_name}={text}")
            if rule != e.rule:
                self.edit(rule, None, detail=f"added {ms_name}={text}")
        new_args = _fix_commas(new_args, call.args)
        changes = {"args": new_args}
        if func is not None:
            changes["func"] = func
        return call.with_changes(**changes)

    def run(self):
        e = self.entry
        if isinstance(e, S.Api):
            if e.handler is not None:
                out = e.handler(self)
                if out is None:  # the handler could not port it: keep PyTorch, flagged
                    if not any(r.finding and r.node is self.original for r in self.t.e.records):
                        return self.t.unmapped(self.original, self.updated, self.api, call=True)
                    return self._keep_torch()
                return out
            if e.target is None:
                return self.t.unmapped(self.original, self.updated, self.api, call=True)
            new = self.apply(func=self.ref(e.target))
            # logged even when the text did not change (``F.relu`` with F now
            # mindspore.ops): the call was recognised and its mapping verified
            self.edit(e.rule, new, detail=self.describe(f"{self.api} -> {e.target}"))
            return new
        # Method
        if e.handler is not None:
            out = e.handler(self)
            return self.updated if out is None else out
        func = self.updated.func
        if e.target:
            func = func.with_changes(attr=cst.Name(e.target))
        new = self.apply(func=func)
        renamed = bool(e.target and e.target != e.name)
        if renamed or self.changes:
            base = f".{e.name}() -> .{e.target}()" if renamed else ""
            self.edit(e.rule, new, detail=self.describe(base))
        return new

    def _keep_torch(self):
        root = _root_name(self.original.func)
        if root in self.t.e.kept_torch_locals:
            return self.updated
        return self.updated.with_changes(func=self.t.e.torch_ref(self.api))

    def describe(self, base: str = "") -> str:
        parts = ([base] if base else []) + self.changes
        return "; ".join(parts)


def _fix_commas(new_args: list[cst.Arg], old_args) -> list[cst.Arg]:
    """Separators between arguments; the last argument keeps the call's original
    trailing-comma style, so multi-line calls stay multi-line."""
    if not new_args:
        return new_args
    old_args = list(old_args)
    trailing = old_args[-1].comma if old_args else cst.MaybeSentinel.DEFAULT
    sep = next(
        (a.comma for a in old_args[:-1] if isinstance(a.comma, cst.Comma)),
        cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")),
    )
    if isinstance(trailing, cst.Comma) and "\n" in _code(trailing) and not any(
        "\n" in _code(a.comma) for a in old_args[:-1] if isinstance(a.comma, cst.Comma)
    ):
        sep = trailing  # one argument per line, closing bracket on its own line
    out = []
    for i, a in enumerate(new_args):
        if i == len(new_args) - 1:
            out.append(a.with_changes(comma=trailing))
        elif isinstance(a.comma, cst.Comma) and a.comma is not trailing:
            out.append(a)
        else:
            out.append(a.with_changes(comma=sep))
    return out


# --------------------------------------------------------------------------- imports


def _rewrite_import(t: PortTransformer, node: cst.Import):
    e = t.e
    keep: list[cst.ImportAlias] = []
    new_lines: list[str] = []
    changed = False
    for alias in node.names:
        full = dotted(alias.name)
        if full.split(".")[0] != "torch":
            keep.append(alias)
            continue
        changed = True
        target = e.import_target(full)
        asname = alias.asname.name.value if alias.asname else None
        if target is None and full not in S.MODULES:
            # a torch module msmagic has no mapping for: keep it, flagged
            keep.append(alias)
            t.finding(
                UNMAPPED_RULE, node, full,
                f"no MindSpore counterpart is known for module {full}; the import was kept",
                comment=f"{full} kept (no MindSpore counterpart)",
            )
            changed = keep != list(node.names) and changed
            continue
        if target is None:
            continue  # removed: uses reach their targets through added imports
        if asname:
            new_lines.append(f"import {target} as {asname}")
        else:
            new_lines.append(f"import {target}")
    if not changed:
        return node
    stmts: list = []
    if keep:
        stmts.append(node.with_changes(names=_fix_alias_commas(keep)))
    for line in new_lines:
        stmts.append(parse_statement(line + "\n").body[0])
    detail = "; ".join(new_lines) if new_lines else "removed (no MindSpore module)"
    t.record(IMPORT_RULE, node, stmts[0] if stmts else None, api="import", detail=detail)
    return _replace_small(stmts)


def _rewrite_import_from(t: PortTransformer, node: cst.ImportFrom):
    e = t.e
    if node.relative or node.module is None:
        return node
    base = dotted(node.module)
    if base.split(".")[0] != "torch" or isinstance(node.names, cst.ImportStar):
        if base.split(".")[0] == "torch":
            t.finding(UNMAPPED_RULE, node, base, "star imports from torch cannot be ported name by name")
        return node
    kept: list[cst.ImportAlias] = []
    groups: dict[str, list[str]] = {}
    for alias in node.names:
        name = alias.name.value if isinstance(alias.name, cst.Name) else dotted(alias.name)
        local = alias.asname.name.value if alias.asname else name
        full = f"{base}.{name}"
        target = e.import_target(full)
        if target is None:
            if full in S.MODULES or full in S.APIS:
                continue
            kept.append(alias)
            t.finding(
                UNMAPPED_RULE, node, full,
                f"no MindSpore mapping is known for {full}; its import was kept as PyTorch",
                comment=f"{full} kept as PyTorch",
            )
            continue
        mod, tname = target.rsplit(".", 1) if "." in target else ("", target)
        if not mod:
            groups.setdefault("", []).append(target if local == target else f"{target} as {local}")
            continue
        out_local = e_out_local(e, local, name, tname, full)
        groups.setdefault(mod, []).append(tname if out_local == tname else f"{tname} as {out_local}")
    stmts: list = []
    if kept:
        stmts.append(node.with_changes(names=_fix_alias_commas(kept)))
    for mod, names in groups.items():
        if mod == "":
            for n in names:
                stmts.append(parse_statement(f"import {n}\n").body[0])
        else:
            stmts.append(parse_statement(f"from {mod} import {', '.join(names)}\n").body[0])
    new_text = "; ".join(_code(s) for s in stmts if s is not node)
    t.record(IMPORT_RULE, node, stmts[0] if stmts else None, api="import",
             detail=new_text or "removed (nothing to import on the MindSpore side)")
    return _replace_small(stmts)


def e_out_local(e: _Engine, local: str, name: str, tname: str, full: str) -> str:
    """Local name a name import binds after the port: the user's alias if any, else
    the MindSpore name (``from torch.nn import Linear`` -> ``from mindspore.nn import
    Dense``)."""
    if local != name:
        return local
    return tname if full not in S.MODULES else local


def _fix_alias_commas(aliases: list[cst.ImportAlias]) -> list[cst.ImportAlias]:
    out = []
    for i, a in enumerate(aliases):
        if i == len(aliases) - 1:
            out.append(a.with_changes(comma=cst.MaybeSentinel.DEFAULT))
        else:
            out.append(a if isinstance(a.comma, cst.Comma) else a.with_changes(
                comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))))
    return out


def _replace_small(stmts: list):
    """Replace one small statement (an import) by zero or more."""
    if not stmts:
        return cst.RemovalSentinel.REMOVE
    if len(stmts) == 1:
        return stmts[0]
    return cst.FlattenSentinel(stmts)
