"""Stage: the tree walk. One libcst pass over the cell: calls, attributes and names are
ported from the mapping tables (``engine.spec``), receiver kinds are tracked through
assignments and loops, and rule hooks run on statements, module-class methods, module
classes and operators. Rules are handed a :class:`~msmagic.engine.context.Context`.
"""

from __future__ import annotations

import functools
from typing import Optional

import libcst as cst

from msmagic.engine import spec as S
from msmagic.engine.build import EXPRESSION_TYPES, STATEMENT_TYPES, TOKEN_TYPES, child_fields
from msmagic.engine.context import Context
from msmagic.engine.edits import EditLog, Record
from msmagic.engine.imports import UNMAPPED_RULE, rewrite_import, rewrite_import_from
from msmagic.engine.kinds import Kind
from msmagic.engine.names import MARKER, param_names, positional_params, root_name, same_ref, target_names

UNKNOWN_RECEIVER_RULE = "GEN002"
UNKNOWN_METHOD_RULE = "API005"


class ClassInfo:
    """A class the cell defines: whether it is a torch Module, its attributes' kinds."""

    __slots__ = ("name", "is_module", "attrs")

    def __init__(self, name: str, is_module: bool):
        self.name = name
        self.is_module = is_module
        self.attrs: dict = {}


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


class Walker(cst.CSTTransformer):
    def __init__(self, state):
        super().__init__()
        #: the port being made (``pipeline.PortState``): cell, session, names, imports
        self.state = state
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
        self._shadow: list[set[str]] = []
        self.scopes: list[dict] = [
            {k: (v if v is None else Kind.of(v)) for k, v in state.session.kinds.items()}
        ]
        self.classes: list[ClassInfo] = []
        self.functions: list[cst.FunctionDef] = []
        self.updated: dict[int, cst.CSTNode] = {}
        self._kind_cache: dict[int, Optional[str]] = {}
        self.line_hooks: dict[int, list] = {}  # id(original line) -> [fn(updated line)]

    # ------------------------------------------------------------ bookkeeping
    def on_visit(self, node: cst.CSTNode) -> bool:
        kind = type(node)
        if kind is cst.IndentedBlock or kind is cst.Module:
            self.blocks.append([node.body, {id(s): i for i, s in enumerate(node.body)}, -1])
        elif kind in STATEMENT_TYPES:
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
                    self.orphan_lines.extend(result.leading_lines)
                    self.edit_log.by_holder.pop(id(original), None)
                    return cst.RemovalSentinel.REMOVE
                result = result.with_changes(body=[cst.Pass()])
            elif isinstance(result, cst.RemovalSentinel) and self.depth > 0:
                result = original.with_changes(body=[cst.Pass()]) if isinstance(original, cst.SimpleStatementLine) else result
            if self.depth == 0 and self.orphan_lines and isinstance(result, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
                result = result.with_changes(leading_lines=[*self.orphan_lines, *result.leading_lines])
                self.orphan_lines = []
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
            recs = self.edit_log.by_holder.pop(id(original), ())
            anchor = _first_node(result)
            for r in recs:
                r.holder = anchor
            if self.depth == 0:
                for node in _flatten(result):
                    self.top_origin[id(node)] = self.top_index
        return result

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
    def resolve(self, node) -> Optional[str]:
        if isinstance(node, cst.Name):
            name = node.value
            if name not in self.state.bindings:
                return None
            for shadow in self._shadow:
                if name in shadow:
                    return None
            return self.state.bindings[name]
        if isinstance(node, cst.Attribute):
            base = self.resolve(node.value)
            return f"{base}.{node.attr.value}" if base else None
        return None

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

    def lookup(self, name: str) -> Optional[str]:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        return None

    def bind(self, name: str, kind) -> None:
        self.scopes[-1][name] = kind if kind is None else Kind.of(kind)

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
            if node.value in self.state.module_classes:
                return Kind.make("class", node.value)
            return self.lookup(node.value)
        if isinstance(node, cst.Attribute):
            qual = self.resolve(node)
            if qual:
                entry = S.APIS.get(qual)
                return entry.returns if entry and entry.attr else None
            if isinstance(node.value, cst.Name) and node.value.value == "self" and self.classes:
                return self.classes[-1].attrs.get(node.attr.value)
            base = self.kind_of(node.value)
            if base is not None and base.base == "module":
                info = self.state.class_infos.get(base.detail)
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
            if fk is not None and fk.base == "class":
                return Kind.make("module", fk.detail)
            if fk is not None and fk.base == "module":
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
                isinstance(base.value, cst.Name) and base.value.value in self.state.module_classes
            ):
                is_module = True
        info = ClassInfo(node.name.value, is_module)
        if is_module:
            self.state.module_classes.add(node.name.value)
            parent = next(
                (self.state.class_infos[b.value.value] for b in node.bases
                 if isinstance(b.value, cst.Name) and b.value.value in self.state.class_infos),
                None,
            )
            if parent:
                info.attrs.update(parent.attrs)
        self.state.class_infos[node.name.value] = info
        self.classes.append(info)
        self.scopes.append({})
        return True

    def leave_ClassDef(self, original, updated):
        info = self.classes.pop()
        self.scopes.pop()
        if info.is_module:
            for hook in S.CLASS_HOOKS:
                updated = hook(Context(self, original, updated), original, updated)
        self.bind(original.name.value, None)
        return updated

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        self._non_load.add(id(node.name))
        params = param_names(node.params)
        self._shadow.append({p for p in params if p in self.state.bindings})
        scope: dict[str, Optional[str]] = {p: None for p in params}
        in_method = bool(self.classes) and not self.functions
        if in_method and self.classes[-1].is_module and node.name.value in ("forward", "__call__"):
            for p in positional_params(node.params)[1:]:
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
            for hook in S.FUNCTION_HOOKS:
                updated = hook(Context(self, original, updated), original, updated)
        return updated

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
            if self._shadow and target.value in self.state.bindings:
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
        elif (kind is not None and kind.base == "named" and kind.item in (S.TENSOR, S.MODULE)
              and isinstance(t, cst.Tuple) and len(t.elements) == 2):
            last = t.elements[1].value
            if isinstance(last, cst.Name):
                self.bind(last.value, kind.item)
        elif kind is not None and kind.base == "iter" and kind.item == S.MODULE and isinstance(t, cst.Name):
            self.bind(t.value, S.MODULE)
        elif kind in S.BATCH_ITERABLES:
            # batches of a data loader / dataset: tensors, or tuples of tensors
            for n in target_names(t):
                self.bind(n, S.TENSOR)
        else:
            for n in target_names(t):
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
        """A method on a value known to be a tensor with no verified entry: flagged."""
        name = original.func.attr.value
        if name in S.HANDLED_BY_STATEMENT_RULES or name.startswith("__"):
            return
        if self.kind_of(original.func.value) != S.TENSOR:
            return
        self.context(original).finding(
            UNKNOWN_METHOD_RULE,
            f"Tensor.{name} has no verified MindSpore mapping (the method is missing or computed "
            "something else on PyTorch's samples); left unchanged",
            api=f"Tensor.{name}", comment=f"Tensor.{name} not verified for MindSpore",
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
            for m in specs:
                site = self.context(original, updated, m, f"{m.receiver}.{name}")
                ok = m.unambiguous(site) if callable(m.unambiguous) else m.unambiguous
                if ok:
                    chosen = m
                    break
            if chosen is None:
                receivers = " or ".join(dict.fromkeys(m.receiver for m in specs))
                if specs and all(_is_torch_only(m) for m in specs):
                    self.context(original).finding(
                        UNKNOWN_RECEIVER_RULE,
                        f"cannot tell whether the receiver of .{name}() is a {receivers}; left unchanged",
                        api=f".{name}()",
                    )
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
        """A torch object used as a value (not called): ``torch.float32``, ``nn.Module``."""
        if qual in S.MODULES:
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
        e = site.entry
        if isinstance(e, S.Api):
            if e.handler is not None:
                out = e.handler(site)
                if out is None:  # the handler could not port it: keep PyTorch, flagged
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
            return site.updated if out is None else out
        func = site.updated.func
        if e.target:
            func = func.with_changes(attr=cst.Name(e.target))
        new = site.apply(func=func)
        renamed = bool(e.target and e.target != e.name)
        if renamed or site.changes:
            base = f".{e.name}() -> .{e.target}()" if renamed else ""
            site.edit(e.rule, new, detail=site.describe(base))
        return new

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


def _is_torch_only(m: S.Method) -> bool:
    return m.receiver in (S.TENSOR, S.MODULE, S.OPTIMIZER) and not m.unambiguous


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
