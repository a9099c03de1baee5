"""The one public object rules see: :class:`Context`.

A handler gets the context of the call or attribute it ports (``context.original`` /
``context.updated``, its mapping ``entry``); a hook gets the context of the statement,
method or class it runs on. Everything a rule may do goes through it: log an ``edit`` or
a ``finding``, ``ref`` a MindSpore object (queuing its import), ``require_import`` a
standard module, ``define`` a helper the generated code calls, take a ``fresh_name``, keep per-rule ``scratch`` state, look at the
current ``statement`` and its ``siblings``, ``replace_line``, ``forget`` logged edits.
Rules import nothing else from the engine but the mapping declarations
(``engine.spec``), the kinds (``engine.kinds``) and the builders (``engine.build``). The
marks of timed statements (``%time stmt``) that a rule moving statements must carry along
are read and written with the three functions this module passes on from the IPython
layer: :func:`timing_marks`, :func:`timing_dropped`, :func:`without_timing_marks`.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from msmagic.engine import arguments, build
from msmagic.engine.edits import Record
from msmagic.engine.ipython import timing_dropped, timing_marks, without_timing_marks  # noqa: F401 (for rules)
from msmagic.engine.names import root_name


def bind_arguments(sig: tuple, args) -> Optional[list[tuple[Optional[str], cst.Arg, bool]]]:
    """(parameter name, Arg, passed positionally) for each of ``args`` bound to the
    parameter names ``sig`` the way the engine binds PyTorch calls; ``None`` when
    ``*args``/``**kwargs`` make binding impossible. For rules that bind a call other than
    the one being ported (``Context.bound`` binds that one)."""
    return arguments.bind(sig, args)


class Context:
    def __init__(self, walker, original, updated=None, entry=None, api: str = ""):
        self._w = walker
        self.original = original
        self.updated = updated if updated is not None else original
        self.entry = entry
        self.api = api
        #: what :meth:`apply` changed, for the edit's detail
        self.changes: list[str] = []
        #: the ``out=`` value :meth:`apply` removed: the emitted call's result is bound to
        #: it where the entry's port is placed (``y = ops.matmul(a, b)``)
        self.out = None
        #: id(expression made by :meth:`ref`) -> (the expression, kept alive so its id is
        #: not reused, the MindSpore name it refers to)
        self._targets: dict[int, tuple] = {}

    # ------------------------------------------------------------------ where we are
    @property
    def statement(self):
        """The original statement line (or compound statement) holding this node."""
        holders = self._w.holders
        return holders[-1] if holders else None

    @property
    def times_statements(self) -> bool:
        """Does the cell time a statement (``%time stmt``, which the port sees as the
        statement with a comment naming its timing: ``engine.ipython.timing_marks``)?"""
        return "__msmagic_timed_" in self._w.state.text

    @property
    def enclosing_statements(self) -> tuple:
        """Original statements enclosing this node, outermost first (the last is
        :attr:`statement`)."""
        return tuple(self._w.holders)

    def siblings(self, depth: int = -1) -> tuple[list, list]:
        """Original statements before and after the current statement of a block
        (``depth`` -1: the innermost block; 0: the cell)."""
        return self._w.siblings(depth)

    @property
    def blocks(self) -> list[tuple[list, int]]:
        """(original statements, index of the one being ported) for each enclosing
        block, the cell first."""
        return [(body, index) for body, _, index in self._w.blocks]

    @property
    def depth(self) -> int:
        """How many statements enclose this node (1 at the cell's top level)."""
        return self._w.depth

    @property
    def functions(self) -> tuple:
        """Original function definitions enclosing this node, outermost first."""
        return tuple(self._w.functions)

    @property
    def classes(self) -> tuple:
        """Class infos (name, is_module, attribute kinds) enclosing this node."""
        return tuple(self._w.classes)

    @property
    def in_module_class(self) -> bool:
        return self._w.in_module_class

    @property
    def at_top_level(self) -> bool:
        return not self._w.functions and not self._w.classes

    @property
    def enclosing_calls(self) -> tuple:
        """Original calls this node is an argument of, innermost last."""
        return tuple(self._w.calls)

    def inside_call_to(self, apis) -> bool:
        """Is this node an argument (at any depth) of a call to one of ``apis``?"""
        return any(self._w.resolve(c.func) in apis for c in self._w.calls)

    @property
    def is_statement(self) -> bool:
        """The call is a whole expression statement: its value is not used."""
        holder = self.statement
        return isinstance(holder, cst.SimpleStatementLine) and any(
            isinstance(s, cst.Expr) and s.value is self.original for s in holder.body
        )

    @property
    def methods_called(self) -> set:
        """Names of the methods the function just ported calls (for function hooks)."""
        return self._w.function_method_calls

    @property
    def torch_in_scope(self) -> bool:
        return self._w.torch_in_scope

    def resolve(self, node) -> Optional[str]:
        """The qualified torch name an expression refers to, or None."""
        return self._w.resolve(node)

    def kind_of(self, original_node):
        """What the engine knows an (original) expression is: a Kind or None."""
        return self._w.kind_of(original_node)

    def why_unknown(self, original_node) -> str:
        """Why the kind of an (original) expression is unknown, when it is worth a
        finding's words: "x is a parameter of f(), whose calls pass a tensor and a NumPy
        array" / "... and no call of f() shows what it is"; else ""."""
        return self._w.why_unknown(original_node)

    def disputed(self, original_node) -> bool:
        """Is the expression a parameter whose calls pass values of different kinds?"""
        return self._w.disputed(original_node)

    def updated_of(self, original_node):
        """The ported form of an original expression already walked."""
        return self._w.updated.get(id(original_node), original_node)

    def earlier_definition(self, name: str):
        """The original call that bound ``name`` at the top level of an earlier ported
        cell of this session (``scheduler = StepLR(opt, ...)``), or None."""
        return self._w.state.session.definitions.get(name)

    def assigned_value(self, name: str):
        """The original expression last assigned to ``name`` (``name = ...``) before this
        statement in the enclosing blocks, else the call a top-level ``name = f(...)`` of
        an earlier ported cell assigned; None when there is none."""
        blocks = self.blocks
        for depth in range(len(blocks) - 1, -1, -1):
            body, index = blocks[depth]
            for stmt in reversed(body[:max(index, 0)]):
                if type(stmt) is not cst.SimpleStatementLine:
                    if build.binds(stmt, name):
                        return None  # bound in a loop, a with, a branch: not one known value
                    continue
                for small in reversed(stmt.body):
                    if type(small) is cst.Assign and any(
                            type(t.target) is cst.Name and t.target.value == name for t in small.targets):
                        return small.value
                    if build.binds(small, name):
                        return None
            if depth and build.binds(blocks[depth - 1][0][blocks[depth - 1][1]], name, header_only=True):
                return None  # the enclosing ``for name in ...`` / ``def f(name)`` binds it
        return self.earlier_definition(name)

    def assigned_call(self, name: str):
        """:meth:`assigned_value` when it is a call (``name = f(...)``), else None."""
        value = self.assigned_value(name)
        return value if type(value) is cst.Call else None

    def function_definition(self, name: str):
        """The original top-level ``def name(...)`` of this cell, else of an earlier
        ported cell of this session, or None."""
        for stmt in self._w.state.module.body:
            if type(stmt) is cst.FunctionDef and stmt.name.value == name:
                return stmt
        return self._w.state.session.functions.get(name)

    def method_definition(self, cls: str, name: str):
        """The original ``def name`` of the user class ``cls`` (or of a user base class),
        of this cell or an earlier ported one; None when unknown."""
        facts = self._w.facts.method(self._w.state.class_infos, cls, name)
        return facts.node if facts is not None else None

    @property
    def receiver(self):
        """The (already ported) receiver of a method call or member access."""
        return self.updated.func.value if isinstance(self.updated, cst.Call) else self.updated.value

    @property
    def receiver_original(self):
        return self.original.func.value if isinstance(self.original, cst.Call) else self.original.value

    # ------------------------------------------------------------------ building
    def ref(self, target: str) -> cst.BaseExpression:
        """An expression naming MindSpore's ``target``, importing it when needed."""
        node = self.original.func if isinstance(self.original, cst.Call) else self.original
        new = self._w.state.imports.ref(target, prefer=root_name(node))
        self._targets[id(new)] = (new, target)
        return new

    def target_of(self, func) -> Optional[str]:
        """The MindSpore API a callee expression of this context's port names: one made
        by :meth:`ref` (``mindspore.ops.rand``), or ``Tensor.<name>`` for a method called
        on this call's receiver when that is known to be a tensor; None otherwise."""
        found = self._targets.get(id(func))
        if found is not None and found[0] is func:
            return found[1]
        if (type(func) is cst.Attribute and type(self.updated) is cst.Call
                and type(self.updated.func) is cst.Attribute and func.value is self.updated.func.value
                and getattr(self.entry, "receiver", None) == "tensor"
                and self.kind_of(self.original.func.value) == "tensor"):
            return f"Tensor.{func.attr.value}"
        return None

    def torch_ref(self, qual: str) -> cst.BaseExpression:
        """``torch.x.y`` for something kept as PyTorch (keeps ``import torch``)."""
        return self._w.state.imports.torch_ref(qual)

    def require_import(self, module: str) -> str:
        """Make ``import <module>`` (a standard-library module the generated code uses)
        available once; returns the name to refer to it by."""
        state = self._w.state
        if state.cell_imports.get(module) != module:
            state.imports.need("import", module, "")
        return module

    def fresh_name(self, base: str) -> str:
        """A name no code of the cell uses and no rule took before: ``base``,
        ``base2``, ``base3``..."""
        return self._w.state.fresh_name(base)

    def define(self, base: str, make, stands_for=()) -> str:
        """The name of a definition the generated code calls (a class or function with
        no PyTorch in it, standing in for the PyTorch APIs ``stands_for``, by default
        the one being ported): the first time in the cell, ``make(name)`` writes its
        source, which goes before the top-level statement being ported; later calls
        return the same name. The name is ``base`` unless the cell uses it otherwise."""
        state = self._w.state
        name = state.defined.get(base)
        if name is None:
            name = state.defined[base] = state.definition_name(base, tuple(stands_for) or (self.api,))
            self._w.definitions.append(self.parse_statement(make(name)))
        return name

    def scratch(self, key: str) -> dict:
        """Per-port state of one rule (what it computes once and looks up)."""
        return self._w.state.scratch.setdefault(key, {})

    def session_memory(self, key: str) -> dict:
        """What one rule keeps across the cells of a session: {name -> fact}, kept by the
        rule as later cells rebind names (an unported cell binding a name drops it)."""
        return self._w.state.session.memory.setdefault(key, {})

    def parse_statement(self, text: str):
        """Parse generated code as a statement with the cell's indentation and newline."""
        return cst.parse_statement(text, config=self._w.state.module.config_for_parsing)

    parse = staticmethod(build.parse_expression)
    code = staticmethod(build.code)
    literal = staticmethod(build.literal)

    # ------------------------------------------------------------------ logging
    def edit(self, rule: str, new=None, *, node=None, api: Optional[str] = None,
             detail: str = "", tags=()) -> Record:
        """Log that ``rule`` changed ``node`` (default: this context's original) into
        ``new`` (a node of the output, for its position)."""
        tags = set(tags)
        if getattr(self.entry, "random", False):
            # which API draws: parity replays PyTorch's draws of the factories it knows
            tags.update(("random", f"random:{self.api}"))
        return self._w.log(Record(
            rule, node if node is not None else self.original, self._w.top_index, new=new,
            api=self.api if api is None else api, detail=detail, tags=frozenset(tags),
        ))

    def finding(self, rule: str, reason: str, *, node=None, api: str = "", comment: str = "") -> Record:
        """Report what could not be ported faithfully; the statement's line gets a
        ``# msmagic: <rule> <comment or reason>`` comment."""
        return self._w.log(
            Record(rule, node if node is not None else self.original, self._w.top_index,
                   api=api or self.api, reason=reason, finding=True),
            comment=f"{rule} {comment or reason}",
        )

    def forget(self, *original_nodes, findings_too: bool = False) -> None:
        """Forget the edits logged for these nodes: the rule dropped what they became
        (``x.detach().cpu().numpy()`` -> ``x.asnumpy()``)."""
        self._w.edit_log.forget(original_nodes, findings_too=findings_too)

    def replace_line(self, fn) -> bool:
        """Have ``fn(updated line)`` return the replacement (a statement or a
        ``FlattenSentinel`` of statements) of the simple statement line holding this
        node, once that line is ported. False when the node is not in one."""
        holder = self.statement
        if not isinstance(holder, cst.SimpleStatementLine):
            return False
        self._w.line_hooks.setdefault(id(holder), []).append(fn)
        return True

    def carry_lines(self, lines) -> None:
        """Keep the comment/blank lines of a statement a rule removes (or of a block it
        dissolves): they move above the next statement of the same block, or to the end
        of the block (of the cell, at the top level)."""
        lines = list(lines)
        if not lines:
            return
        if self.depth == 0:
            self._w.orphan_lines.extend(lines)
            return
        _, after = self.siblings()
        key = id(after[0]) if after else id(self._w.blocks[-1][0])
        self._w.carried.setdefault(key, []).extend(lines)

    # ------------------------------------------------------------------ arguments
    def bound(self) -> Optional[list[tuple[Optional[str], cst.Arg, bool]]]:
        """(PyTorch parameter name, updated Arg, passed positionally) for each argument;
        ``None`` when ``*args``/``**kwargs`` make binding impossible."""
        return arguments.bind(self.entry.sig, self.updated.args)

    def arg(self, name: str) -> Optional[cst.Arg]:
        for p, a, _ in self.bound() or []:
            if p == name:
                return a
        return None

    def apply(self, func=None, spec=None) -> cst.Call:
        """Apply the entry's :class:`~msmagic.engine.spec.ArgSpec` (or ``spec``, when one
        PyTorch call has two MindSpore forms) to the call; returns the new call (with
        ``func`` as its callee when given). Whatever the rule then emits, the calls in it
        to a target made by :meth:`ref` (or to a method of the receiver) are checked
        against the installed MindSpore's signatures by the walk."""
        return arguments.apply(self, func, spec)

    def describe(self, base: str = "") -> str:
        """The edit's detail: ``base`` and what :meth:`apply` changed."""
        return "; ".join(([base] if base else []) + self.changes)
