"""The port, stage by stage: ``port(source)`` runs the pipeline and returns a
:class:`~msmagic.result.PortResult`.

1. ``ipython``: IPython syntax is set aside; ``ast`` reads the cell (a syntax error
   becomes :class:`PortSyntaxError` with CPython's message, line and column) and
   ``plan`` takes each top-level statement's facts. A cell with no PyTorch in scope
   stops here: it costs what reading it costs.
2. ``names``: libcst parses the cell; names are resolved through its imports and the
   session's (earlier cells).
3. ``imports``: what each torch import becomes; generated code refers to MindSpore
   objects through it.
4. ``walk``: one libcst pass ports calls, attributes, imports and module classes from
   the mapping tables (``spec``), and runs the rules' hooks; rules see a ``Context``.
5. ``edits``: positions of the logged edits and findings; ``plan``: the statement plan
   parity runs from.

The port runs in ``deep``'s worker thread, so a cell as deeply nested as CPython
accepts ports; what goes past the port's own limits is a :class:`PortLimitError`.
Ported code that would not parse is a :class:`PortOutputError`, never a result. A cell
is read as IPython reads it before it runs it: with LF line ends (each line of the
output gets its own back, ``line_ends``) and without the indentation all its non-blank
lines share (IPython removes it, the cell magic's body apart from the magic's line:
``%%time`` over an indented body runs); that margin is put back on every non-blank line.
"""

from __future__ import annotations

import ast
import gc
import os
import re
from typing import Optional

import libcst as cst

from msmagic.engine import deep, plan
from msmagic.engine import spec as S
from msmagic.engine.edits import EditLog, positions
from msmagic.engine.imports import ImportPlan, identifiers
from msmagic.engine.infer import FunctionTable, describe, infer
from msmagic.engine.kinds import CONFLICT_BASE, Kind
from msmagic.engine.ipython import WRITES_FILE, cell_magic, mask, unmask
from msmagic.engine.ipython import _align as align_lines
from msmagic.engine.line_ends import lf, restore_line_ends
from msmagic.engine.names import (
    TORCH_ROOTS,
    collect_imports,
    import_positions,
    module_aliases,
    top_level_calls,
    top_level_functions,
    torch_bindings,
)
from msmagic.engine.session import PortSession
from msmagic.engine.walk import Walker, walk
from msmagic.errors import PortLimitError, PortOutputError, PortSyntaxError
from msmagic.result import Finding, Loop, PortResult, Revision

NO_TORCH_NOTE = "No PyTorch found in this cell: nothing to port."
NOTHING_TO_PORT_NOTE = "Nothing in this cell needs porting: it is already MindSpore-compatible."
_TORCH_WORD = re.compile(r"\b(?:" + "|".join(sorted(TORCH_ROOTS)) + r")\b")


def port(source: str, *, session: Optional[PortSession] = None) -> PortResult:
    """Port a PyTorch cell to MindSpore. See :class:`msmagic.result.PortResult`."""
    from msmagic import rules  # noqa: F401  (installs the rules' tables)

    # A port allocates hundreds of thousands of small tree nodes that form no cycles:
    # the cyclic collector's full passes over them cost a third of the time on long
    # cells and grow with the cell. It is paused for the port and restored after.
    paused = gc.isenabled()
    gc.disable()
    try:
        return deep.run(lambda: _port_within_limits(source, session))
    finally:
        if paused:
            gc.enable()


def _port_within_limits(source: str, session: Optional[PortSession]) -> PortResult:
    """The port in the deep worker: running out of recursion or memory there is a
    :class:`PortLimitError`, never a raw ``RecursionError``."""
    try:
        return _port_line_ends(source, session)
    except RecursionError:
        raise PortLimitError("the cell is nested too deeply for msmagic to port "
                             "(the port's recursion limit was reached)") from None
    except MemoryError:
        raise PortLimitError("msmagic ran out of memory porting the cell") from None


def _port_line_ends(source: str, session: Optional[PortSession]) -> PortResult:
    """A cell with CR or CRLF line ends is ported with LF ones, as Python and IPython
    read it (the port finds IPython lines, margins and comment tails at ``\\n``); each
    line of the output gets back its own line end."""
    if not isinstance(source, str):
        raise TypeError("port() takes the cell's source as a str")
    if "\r" not in source:
        return _port_indented(source, session)
    read = lf(source)
    if "\n" in source[:-1]:  # IPython adds a last "\n" to a cell without one
        result = _port_indented(read, session)
    else:  # lone CR line ends: IPython dedents the first line alone
        try:
            result = _port_first_line_dedented(read, session)
        except PortSyntaxError:
            result = _port_indented(read, session)  # a shared margin: IPython refuses it
    result.source = source
    result.code = source if result.code == read else restore_line_ends(source, result.code)
    return result


def _port_first_line_dedented(source: str, session: Optional[PortSession]) -> PortResult:
    """A cell written with lone CR line ends (``source`` is it read with LF ones) as
    IPython runs it: its dedent (``textwrap``'s) sees one line, so the body's first line
    alone loses its indentation (``"    import torch\\rx = 1"`` runs). The port of that
    line gets it back when the port kept it in one line that is still the first; else
    (a line the port wrote above it, an import) it is left at the margin, where it runs
    too. Raises the syntax error of the cell read as LF lines when that
    does not help."""
    lines = source.split("\n")
    start = _body_start(lines)
    first = next((i for i in range(start, len(lines)) if lines[i].strip()), None)
    indent = lines[first][: len(lines[first]) - len(lines[first].lstrip(" \t"))] if first is not None else ""
    if not indent:
        return _port_indented(source, session)  # raises the error
    lines[first] = lines[first][len(indent):]
    try:
        result = _port(("\n".join(lines)), session)
    except PortSyntaxError:
        return _port_indented(source, session)  # raises the error of the cell as written
    out = result.code.split("\n")
    at = align_lines(lines, out).get(first)
    start_out = _body_start(out)
    first_out = next((i for i in range(start_out, len(out)) if out[i].strip()), None)
    if at is not None and at == first_out:  # still the first line: IPython strips it there
        out[at] = indent + out[at]
    result.code = "\n".join(out)
    result.source = source
    return result


def _port_indented(source: str, session: Optional[PortSession]) -> PortResult:
    """The cell without the indentation IPython removes before it runs it: the margin
    its non-blank lines share (the first may be indented more: a comment), or, below a
    cell magic that runs its body as Python (``%%time``), the body's own margin. It is
    ported without it and the margin is put back on every non-blank line of the body."""
    lines = source.split("\n")
    start = _body_start(lines)
    margin = _margin(lines[start:])
    if not margin:
        return _port(source, session)
    try:  # the margin may uncover a cell magic, whose body has a margin of its own
        result = _port_indented("\n".join(lines[:start] + _dedent(lines[start:], margin)), session)
    except PortSyntaxError as err:
        shift = len(margin) if start < err.line <= len(lines) and lines[err.line - 1].strip() else 0
        raise PortSyntaxError(err.message, err.line, err.column + shift) from None
    result.source = source
    out = result.code.split("\n")
    # the output's body starts below its cell-magic lines, as the input's does
    out_start = _body_start(out) if start else 0
    result.code = "\n".join(out[:out_start] + _indent(out[out_start:], margin))
    result.unsupported = [
        Finding(f.line, f.column + len(margin), f.api, f.rule_id, f.reason, f.out_line, f.statement)
        if f.line > start else f
        for f in result.unsupported
    ]
    return result


def _body_start(lines: list) -> int:
    """0-based index of the first line of the body IPython removes the margin of: below
    the cell magics (stacked: ``%%time`` over ``%%capture``) that run their body as
    Python, else 0."""
    start = 0
    while True:
        header = cell_magic("\n".join(lines[start:]))
        if header is None or header.python_body is not True or header.name in WRITES_FILE:
            return start
        start += header.index + 1


def _margin(lines: list) -> str:
    """The indentation all the non-blank ``lines`` start with: what IPython removes
    (``textwrap.dedent``'s common margin), "" when there is none."""
    margin = None
    for line in lines:
        if not line.strip():
            continue
        indent = line[: len(line) - len(line.lstrip(" \t"))]
        margin = indent if margin is None else os.path.commonprefix([margin, indent])
        if not margin:
            return ""
    return margin or ""


def _dedent(lines: list, margin: str) -> list:
    """``lines`` without ``margin`` on the non-blank ones (blank lines, inside a string
    too, keep what they have)."""
    return [line[len(margin):] if line.strip() else line for line in lines]


def _indent(lines: list, margin: str) -> list:
    return [margin + line if line.strip() else line for line in lines]


def _port(source: str, session: Optional[PortSession]) -> PortResult:
    masked = mask(source)
    try:  # under the interpreter's recursion limit: what CPython rejects is rejected here too
        tree = ast.parse(masked.text)
    except SyntaxError as err:
        raise _syntax_error(err, masked) from None
    except RecursionError as exc:
        raise PortSyntaxError(f"the cell is nested too deeply for Python ({exc})", 1, 1) from None
    except MemoryError:  # CPython's parser reports deep nesting so
        raise PortSyntaxError("the cell is nested too deeply for Python's parser (MemoryError)",
                              1, 1) from None
    except ValueError as exc:
        raise PortSyntaxError(str(exc), 1, 1) from None
    facts = plan.statement_facts(tree)
    loops = plan.loop_facts(tree, masked.text)
    session = session if session is not None else PortSession()
    session.module_names.update(  # ``import numpy as np`` in a cell without torch too
        (a.asname or a.name.split(".")[0]) for s in tree.body if isinstance(s, ast.Import) for a in s.names)
    del tree  # the facts are all the port needs of it: free it before libcst's tree
    if not session.torch_names and _TORCH_WORD.search(masked.text) is None:
        return _untouched(source, facts, session, [NO_TORCH_NOTE], loops)
    try:
        module = cst.parse_module(masked.text)
    except cst.ParserSyntaxError as exc:  # libcst rejects what CPython accepts (rare)
        raise PortSyntaxError(exc.message, exc.raw_line, exc.raw_column + 1) from None
    except (SyntaxError, ValueError) as exc:  # pragma: no cover - parser edge
        raise PortSyntaxError(str(exc), 1, 1) from None
    state = PortState(module, masked.text, session)
    if not state.bindings:
        return _untouched(source, facts, session, [NO_TORCH_NOTE], loops)
    infer(state, module, state.facts)
    walker = Walker(state)
    table_keys = [f.key for f in state.facts.by_node.values()]
    new_module = walk(module, walker)
    new_module = state.imports.insert(new_module)
    code, in_ranges, after_of, edits, findings = positions(
        state.edit_log, module, new_module, state.imports.inserted, walker.top_origin, _title,
    )
    out = unmask(code, masked)
    statements, module_params = _plan(state, facts, in_ranges, after_of, code, loops)
    notes = [] if edits or findings else [NOTHING_TO_PORT_NOTE]
    learned = (state.cell_imports, state.imports.out_names, state.module_classes, walker.scopes[0],
               top_level_calls(module), top_level_functions(module), state.module_names, state.class_infos,
               _learned_functions(state.facts, module), walker.flagged_defs)
    # the trees are not needed any more: free them before parsing the output once more
    del state, walker, module, new_module
    if out != source:
        _check_parses(out)
    imports, out_names, module_classes, kinds, calls, functions, module_names, class_infos, facts, flagged = learned
    session.learn_imports(imports)
    session.mindspore_names.update(out_names)
    session.module_classes.update(module_classes)
    session.kinds.update(kinds)
    session.definitions.update(calls)
    session.functions.update(functions)
    session.function_findings.update(flagged)
    session.module_names |= module_names
    session.class_infos.update(class_infos)
    session.function_facts.update(facts)
    session.module_params.update(module_params)
    revised = _revise(session, set(facts) - set(table_keys))
    if revised:
        notes.append(revision_note(revised))
    return PortResult(
        source=source,
        code=out,
        edits=edits,
        # positions on lines whose %time prefix was set aside move right by the prefix
        unsupported=[_shift_finding(f, masked.prefixes) for f in findings],
        notes=notes,
        statements=statements,
        module_params=dict(session.module_params),
        revised=revised,
    )


def _revise(session: PortSession, earlier: set) -> list:
    """Port again the top-level functions of earlier cells whose parameter kinds this
    cell's calls changed (they were ported knowing less); each revision may change what
    the functions it calls receive, so theirs follow."""
    out: list = []
    for _ in range(len(earlier) + 1):
        todo = [f for key, f in session.function_facts.items()
                if key in earlier and not f.method and "." not in key and f.source
                and f.ported_with is not None and f.params != f.ported_with]
        if not todo:
            break
        facts = todo[0]
        ports = session.ports  # a revision is no cell: the cells' call-site names stay
        result = _port(facts.source, session)
        session.ports = ports
        out.append(Revision(facts.key, {k: str(v) for k, v in facts.params.items()}, result))
        out.extend(result.revised)
        result.revised = []
    return out


def revision_note(revised: list) -> str:
    """The note a port with revisions carries: which functions, and what they now know."""
    parts = []
    for rev in revised:
        kinds = ", ".join(f"{p} is {describe(Kind.of(k))}" for p, k in sorted(rev.kinds.items())
                          if not k.startswith(CONFLICT_BASE))
        parts.append(f"{rev.name}() ({kinds})" if kinds else f"{rev.name}()")
    return ("Ported again for what this cell passes them (defined in an earlier cell, ported then "
            "without knowing what their parameters are): " + "; ".join(parts)
            + ". Their new code is shown below; %%ms_parity runs it.")


def _check_parses(code: str) -> None:
    """Raise :class:`PortOutputError` rather than return ported code that does not
    parse (IPython syntax set aside, as for the input)."""
    masked = mask(code)
    if masked.verbatim is not None:
        return
    try:
        ast.parse(masked.text)
    except SyntaxError as err:
        line, col = err.lineno or 1, err.offset or 1
        raise PortOutputError(err.msg, line, col + len(masked.prefixes.get(line - 1, ""))) from None
    except (RecursionError, MemoryError):
        raise PortLimitError("the ported code is nested too deeply for Python") from None


class PortState:
    """One port in progress: the cell, its session, its names, its imports, its edit
    log, the classes it defines and the rules' scratch state."""

    def __init__(self, module: cst.Module, text: str, session: PortSession):
        self.module = module
        self.text = text
        self.session = session
        self.cell_imports = collect_imports(module)
        #: names bound to modules by ``import`` (this cell and earlier ones): no tensor
        self.module_names = module_aliases(module) | session.module_names
        #: local name -> qualified torch name, for every name of the cell reaching torch
        self.bindings = torch_bindings(module, self.cell_imports, session.torch_names)
        self._identifiers = identifiers(text)
        self.imports = ImportPlan(self.bindings, session.mindspore_names, self._identifiers,
                                  import_positions(module))
        self.edit_log = EditLog()
        self.module_classes: set[str] = set(session.module_classes)
        self.class_infos: dict = dict(session.class_infos)
        #: classes this cell defines (their ClassInfo is made anew by this port)
        self.defined_classes: set[str] = set()
        #: the user functions known to the port: the cell's and earlier cells'
        self.facts = FunctionTable(session)
        #: per-port scratch state of the rules (``Context.scratch``)
        self.scratch: dict[str, dict] = {}
        self._fresh: set[str] = set()
        #: definitions the generated code calls (``Context.define``): key -> name given
        self.defined: dict[str, str] = {}

    def definition_name(self, base: str, apis) -> str:
        """A name for a definition standing in for the PyTorch ``apis``: ``base`` when
        neither the cell nor an earlier cell's top level uses it, or when it is one of
        those APIs' own (removed) import; else a fresh one."""
        session = self.session
        taken = (base in self._identifiers or base in session.kinds or base in session.functions
                 or base in session.class_infos)
        if base not in self._fresh and (not taken or self.bindings.get(base) in apis):
            self._fresh.add(base)
            return base
        name, n = base, 1
        while name in self._fresh or name in self._identifiers or name in session.kinds \
                or name in session.functions or name in session.class_infos:
            n += 1
            name = f"{base}{n}"
        self._fresh.add(name)
        return name

    def fresh_name(self, base: str) -> str:
        name, n = base, 1
        while name in self._fresh or name in self._identifiers:
            n += 1
            name = f"{base}{n}"
        self._fresh.add(name)
        return name


def _plan(state: PortState, facts: list, in_ranges: list, after_of: dict, code: str, loops: dict):
    tags: dict[int, set] = {}
    modules: dict[int, dict] = {}
    records = state.edit_log.records
    for r in records:
        if r.tags:
            tags.setdefault(r.statement, set()).update(r.tags)
        entry = S.APIS.get(r.api) if r.api and not r.finding else None
        if entry is not None and entry.params is not None:
            modules.setdefault(r.statement, {})[r.api] = entry.params
    changed = {r.statement for r in records if not r.finding}
    if len(facts) != len(in_ranges):  # pragma: no cover - ast and libcst disagree
        facts = [(rng, frozenset(), frozenset(), False) for rng in in_ranges]
    # libcst's ranges: a block's trailing comment lines belong to the block
    facts = [(rng, *f[1:]) for rng, f in zip(in_ranges, facts)]
    loop_of = {i: plan.loop_of(f, code, after_of.get(i)) for i, f in loops.items()}
    statements = plan.build(facts, plan.out_binds(code, after_of, changed), after_of, tags, modules,
                            {i: lp for i, lp in loop_of.items() if lp is not None})
    return statements, {k: v for m in modules.values() for k, v in m.items()}


def _learned_functions(table: FunctionTable, module: cst.Module) -> dict:
    """The user functions the session keeps after a port: the cell's (with their source,
    for a later cell that ports them again) and the call sites the cell added to earlier
    cells' functions."""
    for facts in table.functions.values():
        facts.learn_sites()
    for facts in table.by_node.values():
        facts.source = module.code_for_node(facts.node)
    return dict(table.functions)


def _untouched(source: str, facts: list, session: PortSession, notes: list, loops: dict) -> PortResult:
    """The result for a cell the port leaves as it is (no PyTorch in scope)."""
    for _, binds, _, _ in facts:
        for name in binds:  # what earlier cells bound under these names is gone
            session.forget(name)
    return PortResult(
        source=source, code=source, notes=notes,
        statements=plan.build(facts, {}, {i: f[0] for i, f in enumerate(facts)}, {}, {},
                              {i: Loop(kind, carried, span, span, lines, needs)
                               for i, (kind, carried, span, lines, needs) in loops.items()}),
        module_params=dict(session.module_params),
    )


def _shift_finding(f: Finding, prefixes: dict) -> Finding:
    prefix = prefixes.get(f.line - 1)
    if not prefix:
        return f
    return Finding(f.line, f.column + len(prefix), f.api, f.rule_id, f.reason, f.out_line, f.statement)


def _syntax_error(err: SyntaxError, masked) -> PortSyntaxError:
    """CPython's message and position: what users know from a traceback."""
    line, col = err.lineno or 1, err.offset or 1
    prefix = masked.prefixes.get(line - 1)
    if prefix:
        col += len(prefix)
    return PortSyntaxError(err.msg, line, col)


def _title(rule_id: str) -> str:
    from msmagic.rules.registry import RULES

    rule = RULES.get(rule_id)
    return rule.title if rule else rule_id
