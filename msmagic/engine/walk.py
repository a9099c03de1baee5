"""Stage: the tree walk. One libcst pass over the cell: calls, attributes and names are
ported from the mapping tables (``engine.spec``), receiver kinds are tracked through
assignments and loops, and rule hooks run on statements, module-class methods, module
classes and operators. Rules are handed a :class:`~msmagic.engine.context.Context`.
"""

from __future__ import annotations

import functools
from typing import Optional

import libcst as cst

from msmagic.engine import arguments
from msmagic.engine import spec as S
from msmagic.engine.build import EXPRESSION_TYPES, STATEMENT_TYPES, TOKEN_TYPES, child_fields, comments_in, descendants
from msmagic.engine.context import Context
from msmagic.engine.edits import EditLog, Record
from msmagic.engine.imports import UNMAPPED_RULE, rewrite_import, rewrite_import_from
from msmagic.engine.infer import KindScope, class_info
from msmagic.engine.kinds import Kind
from msmagic.engine.names import MARKER, param_names, root_name, same_ref

UNKNOWN_RECEIVER_RULE = "GEN002"
UNKNOWN_METHOD_RULE = "API005"


# --------------------------------------------------------------------------- traversal
#
# libcst's own traversal visits every node, formatting tokens included (more than half
# the nodes of a cell are whitespace, commas, dots and parentheses), and rebuilds every
# node it leaves, changed or not. :func:`walk` visits the children that can hold code,
# in libcst's order, and keeps a node whose children all came back unchanged: on a
# 2,000-line cell that is half the nodes visited and most of the nodes never rebuilt.

#: what a removed single child becomes
_REMOVED = {"optional": None, "sentinel": cst.MaybeSentinel.DEFAULT}


def walk(node, walker: "Walker"):
    """Visit ``node`` with ``walker`` (its ``on_visit``/``on_leave``), like
    ``node.visit(walker)`` but skipping formatting tokens and reusing unchanged nodes."""
    if walker.on_visit(node):
        changes = None
        for name, how in child_fields(type(node)):
            value = getattr(node, name)
            if how != "many":
                if value is None or type(value) in TOKEN_TYPES or isinstance(value, cst.MaybeSentinel):
                    continue
                new = walk(value, walker)
                if new is value:
                    continue
                if isinstance(new, cst.RemovalSentinel):
                    new = _REMOVED[how]  # KeyError: a required child cannot be removed
            else:
                if not value or type(value[0]) in TOKEN_TYPES:
                    continue
                out, changed = [], False
                for item in value:
                    new_item = item if type(item) in TOKEN_TYPES else walk(item, walker)
                    if new_item is item:
                        out.append(item)
                        continue
                    changed = True
                    if isinstance(new_item, cst.FlattenSentinel):
                        out.extend(new_item.nodes)
                    elif not isinstance(new_item, cst.RemovalSentinel):
                        out.append(new_item)
                if not changed:
                    continue
                new = tuple(out)
            if changes is None:
                changes = {}
            changes[name] = new
        updated = node if changes is None else node.with_changes(**changes)
    else:
        updated = node
    return walker.on_leave(node, updated)


@functools.lru_cache(maxsize=None)
def _dispatch(cls, prefix: str, node_type):
    """``cls.visit_Call`` / ``cls.leave_Call`` for a node type, looked up once (libcst's
    own dispatch formats and looks the name up for every node)."""
    return getattr(cls, f"{prefix}{node_type.__name__}", None)


class Walker(KindScope, cst.CSTTransformer):
    def __init__(self, state):
        super().__init__()
        #: the port being made (``pipeline.PortState``): cell, session, names, imports
        self._init_scope(state, state.facts)
        self.edit_log: EditLog = state.edit_log
        self.top_index = -1
        self.depth = 0
        self.top_origin: dict[int, int] = {}
        #: original statements (lines and compound statements) enclosing the node being
        #: ported, innermost last; ``depth`` is how many there are
        self.holders: list[cst.CSTNode] = []
        self.orphan_lines: list = []
        #: id(original statement) or id(original block body) -> comment/blank lines a
        #: rule carried there from a statement it removed (``Context.carry_lines``)
        self.carried: dict[int, list] = {}
        self._method_calls: list[set[str]] = []
        #: enclosing blocks (module body, indented blocks), innermost last:
        #: [original statements, id -> index, index of the statement being ported]
        self.blocks: list[list] = []
        #: original Call nodes enclosing the node being left, innermost last
        self.calls: list[cst.Call] = []
        self.function_method_calls: set[str] = set()
        self._skip: set[int] = set()  # nodes handled by a parent (call funcs, chains)
        self._non_load: set[int] = set()
        self.functions: list[cst.FunctionDef] = []
        self.updated: dict[int, cst.CSTNode] = {}
        self.line_hooks: dict[int, list] = {}  # id(original line) -> [fn(updated line)]
        #: definitions (``Context.define``) to put before the top-level statement being ported
        self.definitions: list[cst.CSTNode] = []
        #: this cell's top-level functions: name -> (findings of its port as (rule id, API),
        #: names of the functions it calls); the session keeps those of earlier cells
        self.flagged_defs: dict[str, tuple] = {}

    # ------------------------------------------------------------ bookkeeping
    def on_visit(self, node: cst.CSTNode) -> bool:
        kind = type(node)
        if kind is cst.IndentedBlock or kind is cst.Module:
            self.blocks.append([node.body, {id(s): i for i, s in enumerate(node.body)}, -1])
        elif kind in STATEMENT_TYPES:
            if self.depth == 0:
                self.top_index += 1
                self.state.imports.at = self.top_index
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
        if kind in EXPRESSION_TYPES:
            self.updated[id(original)] = result
        elif kind is cst.IndentedBlock or kind is cst.Module:
            self.blocks.pop()
            tail = self.carried.pop(id(original.body), None) if self.carried else None
            if tail and isinstance(result, cst.IndentedBlock):
                result = result.with_changes(footer=[*tail, *result.footer])
        elif kind in STATEMENT_TYPES:
            self.holders.pop()
            self.depth -= 1
            lead = self.carried.pop(id(original), None) if self.carried else None
            if lead and isinstance(result, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
                result = result.with_changes(leading_lines=[*lead, *result.leading_lines])
            if isinstance(result, cst.SimpleStatementLine) and not result.body:
                if self.depth == 0:
                    # its comment lines, and the comment ending its line, go to the next
                    # statement (``import torch.optim as O  # note`` removed: "# note" stays)
                    self.orphan_lines.extend(result.leading_lines)
                    own = result.trailing_whitespace.comment
                    if own is not None:
                        self.orphan_lines.append(cst.EmptyLine(comment=own))
                    self.edit_log.by_holder.pop(id(original), None)
                    return cst.RemovalSentinel.REMOVE
                result = result.with_changes(body=[cst.Pass()])
            elif isinstance(result, cst.RemovalSentinel) and self.depth > 0:
                result = original.with_changes(body=[cst.Pass()]) if isinstance(original, cst.SimpleStatementLine) else result
            if self.depth == 0 and self.orphan_lines and isinstance(result, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
                result = result.with_changes(leading_lines=_joined_lines(self.orphan_lines, result.leading_lines))
                self.orphan_lines = []
            if self.depth == 0 and kind is not cst.FunctionDef and kind is not cst.ClassDef:
                self._flag_calls_of_flagged_functions(original)
            result = self._apply_comments(original, result)
            hooks = S.STATEMENT_HOOKS.get(kind)
            if hooks and isinstance(result, cst.CSTNode):
                self.holders.append(original)  # records made by hooks belong here
                for hook in hooks:
                    result = hook(Context(self, original, result), original, result)
                    if not isinstance(result, cst.CSTNode):
                        break  # a FlattenSentinel / removal ends the chain
                self.holders.pop()
                if id(original) in self.edit_log.comments:  # findings raised by the hooks
                    if isinstance(result, cst.FlattenSentinel):
                        nodes = list(result.nodes)
                        nodes[-1] = self._apply_comments(original, nodes[-1])
                        result = cst.FlattenSentinel(nodes)
                    else:
                        result = self._apply_comments(original, result)
            for hook in self.line_hooks.pop(id(original), ()):
                if isinstance(result, cst.SimpleStatementLine):
                    result = hook(result)
            if kind is cst.SimpleStatementLine and result is not original:
                result = _keep_inner_comments(original, result)
            if self.depth == 0 and kind is cst.FunctionDef:
                self.flagged_defs[original.name.value] = (
                    tuple((r.rule_id, r.api) for r in self.edit_log.findings_of(self.top_index)),
                    frozenset(_called_names(original.body)))
            recs = self.edit_log.by_holder.pop(id(original), ())
            anchor = _first_node(result)
            for r in recs:
                r.holder = anchor
            if self.depth == 0 and self.definitions:
                result = cst.FlattenSentinel(_after_definitions(self.definitions, _flatten(result)))
                self.definitions = []
            if self.depth == 0:
                for node in _flatten(result):
                    self.top_origin[id(node)] = self.top_index
        return result

    def _flag_calls_of_flagged_functions(self, original) -> None:
        """A top-level statement calling a function (of this cell or an earlier one) whose
        port carries findings, directly or through the functions it calls, gets a GEN004
        finding at the call: the statement that fails or differs at run time is this one,
        while the ``# msmagic:`` comments that say why sit in the function's definition."""
        if _marked(original):
            return  # flagged by an earlier port
        known = self.state.session.function_findings
        seen = set()
        for call in _calls_by_name(original):
            name = call.func.value
            if name in seen or (name not in self.flagged_defs and name not in known):
                continue
            seen.add(name)
            path, found = _flagged_path(name, self.flagged_defs, known)
            if not found:
                continue
            # the API's last name: the comment does not spell PyTorch's module paths again
            what = ", ".join(f"{rule} {api.rsplit('.', 1)[-1]}".strip() for rule, api in found[:4])
            more = f" and {len(found) - 4} more" if len(found) > 4 else ""
            via = " -> ".join(f"{n}()" for n in path)
            reason = (f"{via} runs code whose port is flagged ({what}{more}): what fails or differs "
                      f"there shows here; see the # msmagic: comments in {path[-1]}()'s definition")
            self.edit_log.add(Record("GEN004", call, self.top_index, api=f"{name}()", reason=reason,
                                     finding=True), original,
                              f"GEN004 {via} runs flagged code ({what}{more})")

    def _apply_comments(self, original, result):
        msgs = self.edit_log.comments.pop(id(original), None)
        if not msgs or not isinstance(result, cst.CSTNode):
            return result
        text = f"{MARKER} " + "; ".join(dict.fromkeys(msgs))
        if isinstance(result, cst.SimpleStatementLine):
            tw = _commented(result.trailing_whitespace, text)
            return result if tw is None else result.with_changes(trailing_whitespace=tw)
        body = getattr(result, "body", None)
        if isinstance(body, cst.IndentedBlock):
            header = _commented(body.header, text)
            return result if header is None else result.with_changes(
                body=body.with_changes(header=header))
        return result

    # ------------------------------------------------------------ records
    def log(self, record: Record, comment: str = "") -> Record:
        """Add a record (made by a :class:`Context`) to the edit log, held by the
        innermost statement being ported."""
        return self.edit_log.add(record, self.holders[-1] if self.holders else None, comment)

    def context(self, original, updated=None, entry=None, api: str = "") -> Context:
        return Context(self, original, updated, entry, api)

    # ------------------------------------------------------------ names
    @property
    def torch_in_scope(self) -> bool:
        return bool(self.state.bindings)

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

    # ------------------------------------------------------------ scopes & classes
    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        self._non_load.add(id(node.name))
        self.classes.append(class_info(self, node))
        self.scopes.append({})
        return True

    def leave_ClassDef(self, original, updated):
        info = self.classes.pop()
        self.scopes.pop()
        if info.is_module:
            for hook in S.CLASS_HOOKS:
                updated = hook(Context(self, original, updated), original, updated)
        self.bind(original.name.value, None if info.is_module else Kind.make("type", info.name))
        return updated

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        self._non_load.add(id(node.name))
        self.enter_function(node, self.facts.for_def(node))
        self.functions.append(node)
        self._method_calls.append(set())
        return True

    def leave_FunctionDef(self, original, updated):
        self.leave_function()
        self.functions.pop()
        #: names of the methods the function just left calls (``x.train()`` -> "train"),
        #: for hooks that would otherwise walk the body again
        self.function_method_calls = self._method_calls.pop()
        if self._method_calls:
            self._method_calls[-1] |= self.function_method_calls
        if self.classes and not self.functions and self.classes[-1].is_module:
            for hook in S.FUNCTION_HOOKS:
                updated = hook(Context(self, original, updated), original, updated)
        facts = self.facts.for_def(original)
        if facts is not None:
            facts.ported_with = dict(facts.params)
            if not (self.classes and not self.functions):  # a method is reached through its class
                self.bind(original.name.value, Kind.make("function", facts.key))
        return updated

    def visit_ListComp(self, node) -> bool:
        self.enter_comprehension(node.for_in)
        return True

    visit_SetComp = visit_GeneratorExp = visit_DictComp = visit_ListComp

    def leave_ListComp(self, original, updated):
        self.scopes.pop()
        return updated

    leave_SetComp = leave_GeneratorExp = leave_DictComp = leave_ListComp

    def visit_Lambda(self, node):
        self._shadow.append(param_names(node.params))
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
        self.orphan_lines.extend(lines)

    def leave_Module(self, original, updated):
        if self.orphan_lines:
            updated = updated.with_changes(footer=[*self.orphan_lines, *updated.footer])
        return updated

    def visit_Import(self, node) -> bool:
        return False

    def visit_ImportFrom(self, node) -> bool:
        return False

    def leave_Import(self, original, updated):
        return rewrite_import(self.context(original), original)

    def leave_ImportFrom(self, original, updated):
        return rewrite_import_from(self.context(original), original)

    # ------------------------------------------------------------ kinds from assignments
    def leave_Assign(self, original, updated):
        kind = self.assigned_kind(original.value)
        for t in original.targets:
            self.bind_target(t.target, kind)
        return updated

    def leave_AnnAssign(self, original, updated):
        if original.value is not None:
            self.bind_target(original.target, self.assigned_kind(original.value))
        return updated

    def visit_For(self, node: cst.For) -> bool:
        self.bind_target(node.target, self.element_kind(node.iter))
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
            return self.port_entry(self.context(original, updated, entry, qual))
        func = original.func
        if self.torch_in_scope and type(func) in (cst.Name, cst.Attribute):
            # a call of a layer instance (``self.lstm(x, h)``): entries named __call__; it
            # is no method of ``self`` (``self.inner`` is a layer, not Tensor.inner)
            kind = self.kind_of(func)
            if kind is not None and kind.base == "module":
                for m in S.METHODS.get(S.MODULE_CALL, ()):
                    if kind.detail and S.kind_matches(m.receiver, kind):
                        return self.port_entry(self.context(original, updated, m, f"{kind.detail}(...)"))
                return updated
        if isinstance(func, cst.Attribute) and self.torch_in_scope:
            specs = S.METHODS.get(func.attr.value)
            if specs:
                return self._method(original, updated, specs)
            self._unknown_tensor_method(original)
        return updated

    def _unknown_tensor_method(self, original: cst.Call) -> None:
        """A method with no verified entry: flagged on a value known to be a tensor, and
        on a value of unknown kind when only PyTorch's Tensor / Module / Optimizer has it."""
        name = original.func.attr.value
        if name in S.HANDLED_BY_STATEMENT_RULES or name.startswith("__"):
            return
        receiver = original.func.value
        kind = self.kind_of(receiver)
        if kind == S.TENSOR:
            self.context(original).finding(
                UNKNOWN_METHOD_RULE,
                f"Tensor.{name} has no verified MindSpore mapping (the method is missing or computed "
                "something else on PyTorch's samples); left unchanged",
                api=f"Tensor.{name}", comment=f"Tensor.{name} not verified for MindSpore",
            )
            return
        only = S.RECEIVER_ONLY_METHODS.get(name)
        if kind is not None or only is None or name in _TRAINING_STEP_METHODS:
            return
        if type(receiver) is cst.Name and receiver.value in self.state.module_names:
            return
        classes, rule = only
        self._flag_receiver(original, rule, name, " or ".join(classes),
                            f".{name}() is a method of PyTorch's {' and '.join(classes)} that "
                            "MindSpore's counterpart lacks")

    def user_class_with(self, method: str) -> Optional[str]:
        """The name of a user class (not a Module) of this cell or an earlier one that
        defines ``method``, or None."""
        for info in self.state.class_infos.values():
            if not info.is_module and method in info.methods:
                return info.name
        return None

    def _flag_receiver(self, original: cst.Call, rule: str, name: str, receivers: str, lead: str = "") -> None:
        """Flag a method call whose receiver's kind is unknown, saying why it is."""
        why = self.why_unknown(original.func.value)
        reason = f"cannot tell whether the receiver of .{name}() is a {receivers}"
        reason = f"{lead}; {reason}" if lead else reason
        self.context(original).finding(
            rule, f"{reason}{f' ({why})' if why else ''}; left unchanged", api=f".{name}()",
            comment=f"{reason}; left unchanged",
        )

    def _method(self, original: cst.Call, updated: cst.Call, specs: list[S.Method]):  # noqa: C901
        recv_kind = self.kind_of(original.func.value)
        name = original.func.attr.value
        chosen = None
        for m in specs:
            if S.kind_matches(m.receiver, recv_kind):
                chosen = m
                break
        if chosen is None and recv_kind is None and (
                _string_call(original) or (type(original.func.value) is cst.Name
                                           and original.func.value.value in self.state.module_names)):
            # ``line.split()``: a str method (a tensor's split takes a size); ``np.where``:
            # a function of an imported module
            return updated
        if chosen is None and recv_kind is None:
            # a parameter whose calls pass different kinds gets no port made on a guess;
            # nor does a method a user class of the notebook defines too (makemore's
            # hand-written layers each have ``parameters()``: ``layer.parameters()`` over
            # them is theirs, not a Module's)
            disputed = self.disputed(original.func.value)
            own = self.user_class_with(name)
            for m in () if disputed or own else specs:
                site = self.context(original, updated, m, f"{m.receiver}.{name}")
                ok = m.unambiguous(site) if callable(m.unambiguous) else m.unambiguous
                if ok:
                    chosen = m
                    break
            if chosen is None:
                receivers = " or ".join(dict.fromkeys(m.receiver for m in specs))
                if own:
                    self._flag_receiver(original, UNKNOWN_RECEIVER_RULE, name, receivers,
                                        f"the notebook's class {own} defines .{name}() too")
                elif specs and (disputed or all(_is_torch_only(m) for m in specs)):
                    self._flag_receiver(original, UNKNOWN_RECEIVER_RULE, name, receivers)
                return updated
        if chosen is None:
            if recv_kind == S.TENSOR:
                self._unknown_tensor_method(original)
            return updated
        label = {"tensor": "Tensor", "module": "Module", "optimizer": "Optimizer"}.get(chosen.receiver, "")
        return self.port_entry(self.context(original, updated, chosen, f"{label}.{name}" if label else f".{name}"))

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute):
        if id(original) in self._skip:
            # the head of a longer chain: a part of a torch name (``torch.nn`` in
            # ``torch.nn.Linear``) or a method being called stays to its parent; a member
            # read in the chain (``emb.weight`` in ``emb.weight.data``) is ported here
            if (self.calls and self.calls[-1].func is original) or self.resolve(original):
                return updated
            return self._member(original, updated)
        qual = self.resolve(original)
        if qual:
            return self._qualified_ref(original, updated, qual)
        return self._member(original, updated)

    def _member(self, original: cst.Attribute, updated: cst.Attribute):
        """An attribute read on a value: ported through its ``MEMBERS`` entry."""
        if not self.torch_in_scope:
            return updated
        members = S.MEMBERS.get(original.attr.value)
        if not members:
            return updated
        recv = self.kind_of(original.value)
        for m in members:
            if S.kind_matches(m.receiver, recv) or (recv is None and m.unambiguous):
                site = self.context(original, updated, m, f".{m.name}")
                if m.handler is not None:
                    out = m.handler(site)
                    return updated if out is None else out
                if m.target:
                    new = updated.with_changes(attr=cst.Name(m.target))
                    site.edit(m.rule, new, detail=m.detail or f".{m.name} -> .{m.target}")
                    return new
        return updated

    def leave_Subscript(self, original, updated):
        """``x[...]``: kept as written unless a rule's subscript hook rewrites the index."""
        if S.SUBSCRIPT_HOOKS and self.torch_in_scope:
            for hook in S.SUBSCRIPT_HOOKS:
                updated = hook(Context(self, original, updated), original, updated)
        return updated

    def leave_UnaryOperation(self, original, updated):
        """Operators are kept as written; a rule may flag one (``spec.OPERATOR_HOOKS``)."""
        hook = S.OPERATOR_HOOKS.get(type(original.operator))
        if hook is not None and self.torch_in_scope:
            hook(Context(self, original), original)
        return updated

    def leave_Name(self, original: cst.Name, updated: cst.Name):
        if id(original) in self._skip or id(original) in self._non_load:
            return updated
        if original.value not in self.state.bindings:
            return updated
        qual = self.resolve(original)
        if not qual:
            return updated
        if qual in S.MODULES or original.value in self.state.imports.kept_torch_locals:
            return updated
        return self._qualified_ref(original, updated, qual)

    def _qualified_ref(self, original, updated, qual: str):
        """A torch object used as a value (not called): ``torch.float32``, ``nn.Module``; a
        module with no counterpart whose use as a value a rule handles (``torch.backends``
        probed by ``hasattr``) goes to that rule's entry."""
        if qual in S.MODULES and (S.MODULES[qual] is not None or qual not in S.APIS):
            target = S.MODULES[qual]
            if target is None:
                return self.unmapped(original, updated, qual, call=False)
            new = self.state.imports.ref(target)
            return new
        entry = S.APIS.get(qual)
        if entry is None:
            return self.unmapped(original, updated, qual, call=False)
        site = self.context(original, updated, entry, qual)
        if entry.attr and entry.handler is not None:
            out = entry.handler(site)
            return updated if out is None else out
        if entry.as_value is not None:
            out = entry.as_value(site)
            if out is not None:
                return out
        if entry.target is None:
            return self.unmapped(original, updated, qual, call=False)
        new = self.state.imports.ref(entry.target, prefer=root_name(original))
        if not entry.attr and (entry.rename or entry.values or entry.defaults or entry.handler):
            site.edit(entry.rule, new, detail=f"{qual} -> {entry.target}")
            site.finding(
                entry.rule,
                f"{qual} is used without being called here; its arguments will not be ported where it is called",
                comment=f"{qual} referenced, arguments not ported",
            )
            return new
        if not same_ref(new, updated):
            site.edit(entry.rule, new, detail=f"{qual} -> {entry.target}")
        return new

    def unmapped(self, original, updated, qual: str, *, call: bool):
        """A PyTorch API with no entry in the tables: keep it PyTorch, say so."""
        root_local = root_name(original.func if call else original)
        self.context(original).finding(
            UNMAPPED_RULE, f"no MindSpore mapping is known for {qual}; it was left as PyTorch",
            api=qual, comment=f"{qual} has no known MindSpore mapping; left as PyTorch",
        )
        if root_local in self.state.imports.kept_torch_locals:
            return updated
        ref = self.state.imports.torch_ref(qual)
        return updated.with_changes(func=ref) if call else ref



    # ------------------------------------------------------------ entries
    def port_entry(self, site: Context):
        """Port a call or attribute through its mapping entry (``site.entry``)."""
        new = self._port_entry(site)
        if not (new is site.updated and self.edit_log.has_finding(site.original)):  # not declined
            new = self._check_emitted(site, new)
        if site.out is not None and new is not site.updated:
            new = self._bind_out(site, new)
        return new

    def _check_emitted(self, site: Context, new):
        """Check the calls the entry emitted (to a target it ``ref``-ed, or a method of
        its receiver) against the installed MindSpore's signatures; the ported arguments
        inside are not searched (their own entries checked them)."""
        if not isinstance(new, cst.CSTNode):
            return new
        stop = set()
        if type(site.updated) is cst.Call:
            stop = {id(a.value) for a in site.updated.args}
            if type(site.updated.func) is cst.Attribute:
                stop.add(id(site.updated.func.value))  # the receiver
        found = []

        def visit(node):
            if id(node) in stop:
                return
            if type(node) is cst.Call:
                target = site.target_of(node.func)
                if target is not None:
                    found.append((node, target))
            for child in node.children:
                visit(child)

        visit(new)
        for call, target in found:
            checked = arguments.check(site, call, target)
            if checked is not call:
                new = checked if call is new else new.deep_replace(call, checked)
        return new

    def _port_entry(self, site: Context):
        e = site.entry
        if isinstance(e, S.Api):
            if e.handler is not None:
                out = e.handler(site)
                if out is None:  # the handler could not port it: keep PyTorch, flagged
                    site.out = None
                    if self._unbound_star_arguments(site):
                        return self._keep_torch(site)
                    if not self.edit_log.has_finding(site.original):
                        return self.unmapped(site.original, site.updated, site.api, call=True)
                    return self._keep_torch(site)
                return out
            if e.target is None:
                return self.unmapped(site.original, site.updated, site.api, call=True)
            new = site.apply(func=site.ref(e.target))
            # logged even when the text did not change (``F.relu`` with F now
            # mindspore.ops): the call was recognised and its mapping verified
            site.edit(e.rule, new, detail=site.describe(f"{site.api} -> {e.target}"))
            return new
        # Method
        if e.handler is not None:
            out = e.handler(site)
            if out is None:
                self._unbound_star_arguments(site)
                return site.updated
            return out
        func = site.updated.func
        if e.target:
            func = func.with_changes(attr=cst.Name(e.target))
        new = site.apply(func=func)
        renamed = bool(e.target and e.target != e.name)
        if renamed or site.changes:
            base = f".{e.name}() -> .{e.target}()" if renamed else ""
            site.edit(e.rule, new, detail=site.describe(base))
        return new

    def _bind_out(self, site: Context, new):
        """``torch.matmul(a, b, out=y)``: MindSpore returns a new tensor, so the port binds
        it to ``y``: ``y = ops.matmul(a, b)`` as a statement, ``(y := ops.matmul(a, b))``
        where the value is used too."""
        target = site.out
        text = site.code(target).strip()
        rule = arguments.SIGNATURE_RULE
        if not site.at_top_level and isinstance(target, cst.Name):
            site.finding(rule, f"{site.api}(..., out={text}) inside a function is ported as `{text} = ...`: "
                         "only this name is bound to the result, other references to the tensor keep "
                         "their old values", comment=f"out={text}: only the name {text} is rebound")
        if site.is_statement:
            index = next(i for i, small in enumerate(site.statement.body)
                         if isinstance(small, cst.Expr) and small.value is site.original)

            def assign(line):
                body = list(line.body)
                small = body[index]
                if isinstance(small, cst.Expr):
                    body[index] = cst.Assign(targets=[cst.AssignTarget(target)], value=small.value,
                                             semicolon=small.semicolon)
                return line.with_changes(body=body)

            site.replace_line(assign)
            site.edit(rule, new, detail=f"out={text} -> {text} = ...")
            return new
        if isinstance(target, cst.Name):
            bound = cst.NamedExpr(target=target, value=new, lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
            site.edit(rule, bound, detail=f"out={text} -> ({text} := ...)")
            return bound
        site.finding(rule, f"{site.api}(..., out={text}) inside an expression: an attribute or element cannot "
                     f"be bound there; the result is used, {text} is not updated", comment=f"out={text} not written")
        return new

    def _unbound_star_arguments(self, site: Context) -> bool:
        """A handler that needs the arguments by name got ``*args``/``**kwargs`` and could
        not port the call: said once, at the call (True when that is why)."""
        if not any(a.star for a in site.updated.args) or self.edit_log.has_finding(site.original):
            return False
        site.finding(
            arguments.STAR_ARGS_RULE,
            f"{site.api} needs its arguments by name to be ported, and * or ** hides them here; "
            "the call was left as written (spell the arguments out, or port it by hand)",
            comment="*args/**kwargs hide the arguments; not ported",
        )
        return True

    def _keep_torch(self, site: Context):
        if root_name(site.original.func) in self.state.imports.kept_torch_locals:
            return site.updated
        return site.updated.with_changes(func=self.state.imports.torch_ref(site.api))


def _commented(tw: cst.TrailingWhitespace, text: str):
    """The line end with ``text`` added to its comment; None when it is there already."""
    if tw.comment is not None and text in tw.comment.value:
        return None
    return tw.with_changes(
        whitespace=tw.whitespace if tw.comment else cst.SimpleWhitespace("  "),
        comment=cst.Comment(f"{tw.comment.value}  {text}" if tw.comment else text),
    )


#: Optimizer/Module methods the training rules rewrite as part of a training step
_TRAINING_STEP_METHODS = frozenset({"zero_grad", "step"})


def _is_torch_only(m: S.Method) -> bool:
    if m.flag_unknown is not None:
        return m.flag_unknown
    return m.receiver in (S.TENSOR, S.MODULE, S.OPTIMIZER) and not m.unambiguous


def _first_node(result):
    if isinstance(result, cst.FlattenSentinel):
        nodes = list(result.nodes)
        result = nodes[0] if nodes else None
    if isinstance(result, cst.SimpleStatementLine) and result.body:
        return result.body[0]
    return result if isinstance(result, cst.CSTNode) else None


def _after_definitions(definitions: list, statements: list) -> list:
    """Definitions a rule added (``Context.define``) and the statement they precede,
    a blank line between each."""
    out = [d.with_changes(leading_lines=[cst.EmptyLine()]) for d in definitions]
    for stmt in statements:
        lead = list(stmt.leading_lines)
        if stmt is statements[0] and not (lead and isinstance(lead[0], cst.EmptyLine) and lead[0].comment is None):
            stmt = stmt.with_changes(leading_lines=[cst.EmptyLine(), *lead])
        out.append(stmt)
    return out


def _keep_inner_comments(original: cst.SimpleStatementLine, result):
    """A comment inside a statement a rule rewrote (``x.size(  # rows`` made
    ``x.shape[0]``) is never lost: what the new statement no longer holds goes on lines
    of its own above it. The engine's own marks (``__msmagic_...``) are left to the
    engine."""
    inner = [c.value for small in original.body for c in comments_in(small) if "__msmagic_" not in c.value]
    if not inner:
        return result
    nodes = _flatten(result)
    if not nodes:
        return result
    kept = [c.value for node in nodes for c in comments_in(node)]
    missing = []
    for text in inner:
        if text in kept:
            kept.remove(text)
        else:
            missing.append(text)
    if not missing:
        return result
    first = nodes[0]
    if not hasattr(first, "leading_lines"):
        return result
    lines = [*first.leading_lines, *(cst.EmptyLine(comment=cst.Comment(text)) for text in missing)]
    nodes[0] = first.with_changes(leading_lines=lines)
    return cst.FlattenSentinel(nodes) if isinstance(result, cst.FlattenSentinel) else nodes[0]


def _flatten(result):
    if isinstance(result, cst.FlattenSentinel):
        return list(result.nodes)
    if isinstance(result, cst.CSTNode):
        return [result]
    return []


def _string_call(call: cst.Call) -> bool:
    """A method call only a str can make: ``.split()`` with no argument or a string
    separator (``Tensor.split`` needs a size)."""
    if type(call.func) is not cst.Attribute or call.func.attr.value != "split":
        return False
    positional = [a for a in call.args if a.keyword is None]
    if any(a.star for a in call.args):
        return False
    if not positional:
        return all(a.keyword.value in ("sep", "maxsplit") for a in call.args)
    return isinstance(positional[0].value, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString))


def _called_names(node) -> set:
    """Names called as plain functions anywhere inside ``node`` (``f(...)``)."""
    return {c.func.value for c in _calls_by_name(node)}


def _calls_by_name(node) -> list:
    """The calls of a plain name inside ``node`` (``fit(...)``), in source order."""
    return [n for n in descendants(node) if type(n) is cst.Call and type(n.func) is cst.Name]


def _flagged_path(name: str, here: dict, earlier: dict) -> tuple[list, tuple]:
    """(the chain of calls from ``name`` to the first function found with findings, its
    findings); ``here`` (this cell's functions) wins over ``earlier`` (the session's)."""
    stack, seen = [[name]], {name}
    while stack:
        path = stack.pop(0)
        facts = here.get(path[-1]) or earlier.get(path[-1])
        if facts is None:
            continue
        found, callees = facts
        if found:
            return path, found
        for callee in sorted(callees):
            if callee not in seen:
                seen.add(callee)
                stack.append([*path, callee])
    return [name], ()


def _joined_lines(carried: list, lines) -> list:
    """The comment and blank lines of removed statements (``carried``) above a statement's
    own ``lines``. Blank lines that met where the statements were are one run, as long as
    the longer of the two: removing ``import torch.optim as O`` between blank lines keeps
    one separation, neither doubling it nor taking it away."""
    lines = list(lines)
    k1 = next((n for n, e in enumerate(reversed(carried)) if e.comment is not None), len(carried))
    k2 = next((n for n, e in enumerate(lines) if e.comment is not None), len(lines))
    if not k1 or not k2:
        return [*carried, *lines]
    if k2 >= k1:
        return [*carried[: len(carried) - k1], *lines]
    return [*carried, *lines[k2:]]


def _marked(statement) -> bool:
    """Does the statement's line (a compound statement's header) carry a ``# msmagic:``
    comment already?"""
    if isinstance(statement, cst.SimpleStatementLine):
        tw = statement.trailing_whitespace
    else:
        tw = getattr(getattr(statement, "body", None), "header", None)
    comment = getattr(tw, "comment", None)
    return comment is not None and MARKER in comment.value
