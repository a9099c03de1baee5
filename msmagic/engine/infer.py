"""Stage: receiver kinds, and what they are ahead of the walk.

:class:`KindScope` is what the engine knows a value is at a point of the cell: the kinds
bound in the enclosing scopes (names, ``self.x`` attributes of classes, loop and
comprehension targets), and the kind of any expression built from them (a call of a
mapped API returns what its entry declares, a call of a user function what the function
returns, a Module called gives a tensor, a NumPy function an array...). The walk
(``walk.Walker``) is a KindScope.

The walk visits a function before the calls that follow its definition, so on its own
it could only give a function's parameters the kinds written inside it. :func:`infer`
runs first: a pass over the statements (no node is rebuilt) records, for every function
the cell or an earlier cell defines (methods of user classes included), the kinds of the
arguments at each call site; the parameters take the kinds their call sites agree on;
the bodies are walked with them (their own calls are call sites too) and each function
returns the kind its ``return`` statements agree on; until nothing changes. A parameter
whose call sites disagree, or that no call site passes, stays unknown, and
:meth:`KindScope.why_unknown` says so for the findings rules raise where the meaning of
an API depends on what its receiver is.

What is known per function (:class:`FunctionFacts`) lives in the session: a call in a
later cell adds to the call sites of a function an earlier cell defined, and the
pipeline then ports that function again with the kinds it now knows.
"""

from __future__ import annotations

from typing import Optional, Union

import libcst as cst

from msmagic.engine import spec as S
from msmagic.engine.build import descendants
from msmagic.engine.kinds import (
    BATCH_ITERABLES, CONFLICT_BASE, INT, LIST, NDARRAY, PARAMS, TENSOR, Kind, join, tuple_elements, tuple_kind,
)
from msmagic.engine.names import param_names, positional_params, target_names

#: what iterating a loader/dataset yields: a batch, whatever the loop target's shape
#: (tensors, or tuples of tensors)
BATCH = "batch"
#: what calling a Module gives: a tensor, or a tuple (an LSTM's ``out, (h, c)``): a
#: name bound to it is a tensor, the parts of a tuple target are unknown
MODULE_OUTPUT = "module output"
#: builtins whose result holds the elements of their first argument
_ELEMENT_BUILTINS = frozenset({"list", "tuple", "reversed", "sorted", "iter", "set"})
#: how many times :func:`infer` walks the cell and the bodies at most (kinds flow from a
#: call site into a body, out through its return, into the next call site...)
_ROUNDS = 4
_COMPREHENSIONS = frozenset({cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp})
#: comparisons that compare a tensor element by element (``pred == y`` is a tensor)
_ELEMENTWISE_COMPARISONS = frozenset({cst.Equal, cst.NotEqual, cst.LessThan, cst.LessThanEqual,
                                      cst.GreaterThan, cst.GreaterThanEqual})


class ClassInfo:
    """A class the cell (or an earlier cell) defines: whether it is a torch Module, its
    bases (by name), its attributes' kinds (``self.x = ...`` in its methods) and the
    names of the methods its body defines."""

    __slots__ = ("name", "is_module", "attrs", "bases", "methods")

    def __init__(self, name: str, is_module: bool, bases: tuple = ()):
        self.name = name
        self.is_module = is_module
        self.attrs: dict = {}
        self.bases = bases
        self.methods: frozenset = frozenset()


class FunctionFacts:
    """What is known of one user function: the kinds passed at its call sites, the
    parameter kinds they agree on, and the kind it returns."""

    __slots__ = ("key", "node", "positional", "names", "defaults", "method", "earlier", "sites",
                 "params", "returns", "ported_with", "source")

    def __init__(self, key: str, node: cst.FunctionDef, method: bool):
        self.key = key
        self.node = node
        #: parameter names, positional order first (``self`` of a method included)
        self.positional = positional_params(node.params)
        self.names = param_names(node.params)
        self.defaults = {p.name.value for p in (*node.params.posonly_params, *node.params.params,
                                                *node.params.kwonly_params) if p.default is not None}
        self.method = method
        #: call sites seen by earlier ports: caller -> frozenset of sites, each a frozenset
        #: of (parameter, kind) pairs; the caller is a function's key, or a cell's
        #: top level ("<cell N>"), so walking a caller again replaces what it passed
        self.earlier: dict = {}
        #: call sites of the port being made: caller -> [{parameter: kind or None}]
        self.sites: dict = {}
        #: parameter -> the kind every call site passes ("conflict:..." when they disagree)
        self.params: dict = {}
        self.returns: Optional[Kind] = None
        #: the parameter kinds the port of the body used (``params`` at that time): a later
        #: cell whose calls change ``params`` ports the function again
        self.ported_with: Optional[dict] = None
        #: the function's source, for a port of it in a later cell
        self.source: str = ""

    @property
    def name(self) -> str:
        return self.key.rpartition(".")[2]

    def settle(self) -> bool:
        """Join the call sites' kinds into ``params``; True when ``params`` changed."""
        sites = [dict(site) for caller, group in self.earlier.items() if caller not in self.sites
                 for site in group]
        sites += [site for group in self.sites.values() for site in group]
        new: dict = {}
        if sites:
            for name in self.names:
                kind = join([site.get(name) for site in sites])
                if kind is not None:
                    new[name] = kind
        changed = new != self.params
        self.params = new
        return changed

    def known(self, name: str) -> Optional[Kind]:
        """The kind a parameter has in the body: None when unknown or disputed."""
        kind = self.params.get(name)
        return None if kind is None or kind.base == CONFLICT_BASE else kind

    def learn_sites(self) -> None:
        """Keep this port's call sites for later cells (replacing what the same callers
        passed before)."""
        for caller, group in self.sites.items():
            self.earlier[caller] = frozenset(frozenset(site.items()) for site in group)
        self.sites = {}


def describe(kind) -> str:
    """A kind as a finding names it: "a tensor", "a Linear", "a NumPy array"."""
    if kind is None:
        return "an unknown value"
    if kind.base == "module":
        return f"a {kind.detail.rpartition('.')[2]}" if kind.detail else "a module"
    if kind.base == "object":
        return f"a {kind.detail} object" if kind.detail else "an object"
    if kind == NDARRAY:
        return "a NumPy array"
    if kind.base == "list":
        return f"a list of {describe(kind.item)[2:]}s" if kind.item else "a list"
    text = str(kind)
    return f"an {text}" if text[:1] in "aeiou" else f"a {text}"


class KindScope:
    """Kinds of names and expressions at the point being visited (see the module
    docstring). Uses ``state`` (the port: bindings, classes, imports) and ``facts`` (the
    :class:`FunctionTable`)."""

    def _init_scope(self, state, facts: "FunctionTable") -> None:
        self.state = state
        self.facts = facts
        self._shadow: list[set[str]] = []
        top = facts.top_kinds
        self.scopes: list[dict] = [LiveScope(top, top._live) if isinstance(top, LiveScope) else dict(top)]
        self.classes: list[ClassInfo] = []
        #: (scope, FunctionFacts or None) of each function being visited, innermost last
        self.function_scopes: list[tuple[dict, Optional[FunctionFacts]]] = []
        #: id(node) -> (node, kind); the node is kept so that its id is not reused by a
        #: node a rule builds later (whose kind would then be looked up wrongly)
        self._kind_cache: dict[int, tuple] = {}

    # ------------------------------------------------------------ names
    def resolve(self, node) -> Optional[str]:
        """The qualified torch name an expression refers to, or None."""
        if type(node) is cst.Name:
            name = node.value
            if name not in self.state.bindings:
                return None
            for shadow in self._shadow:
                if name in shadow:
                    return None
            return self.state.bindings[name]
        if type(node) is cst.Attribute:
            base = self.resolve(node.value)
            return f"{base}.{node.attr.value}" if base else None
        return None

    def lookup(self, name: str) -> Optional[Kind]:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        return None

    def bind(self, name: str, kind) -> None:
        self.scopes[-1][name] = kind if kind is None else Kind.of(kind)

    def bind_target(self, target, kind) -> None:
        """Bind an assignment or loop target to a value of ``kind``: a Kind, a tuple of
        element structures (``zip``, ``enumerate``), :data:`BATCH`, or None."""
        t = type(target)
        if kind == MODULE_OUTPUT:
            kind = TENSOR if t is cst.Name else None
        if t is cst.Name:
            self.bind(target.value, kind if isinstance(kind, Kind) else None)
            if self._shadow and target.value in self.state.bindings:
                # a function-local assignment hides the import from here on
                self._shadow[-1].add(target.value)
        elif (t is cst.Attribute and type(target.value) is cst.Name
              and target.value.value == "self" and self.classes):
            self.classes[-1].attrs[target.attr.value] = kind if isinstance(kind, Kind) else None
        elif t is cst.Tuple or t is cst.List:
            elements = [el.value for el in target.elements]
            starred = any(type(e) is cst.StarredElement for e in elements)
            if kind == BATCH or (kind == TENSOR and not starred):
                # a batch of a loader (tensors), or a tensor unpacked along its first axis
                for e in elements:
                    self.bind_target(e, TENSOR)
                return
            if tuple_elements(kind) is not None:  # ``a, b = f()`` where f returns ``x, y``
                kind = tuple_elements(kind)
            parts = kind if isinstance(kind, tuple) and len(kind) == len(elements) and not starred else None
            for i, e in enumerate(elements):
                self.bind_target(e, parts[i] if parts else None)
        elif t is cst.StarredElement:
            for n in target_names(target):
                self.bind(n, None)

    def assigned_kind(self, value):
        """The kind to bind an assignment's targets to: :data:`MODULE_OUTPUT` for a call
        of a Module, else the value's kind."""
        kind = self.kind_of(value)
        if kind == TENSOR and type(value) is cst.Call and type(value.func) in (cst.Name, cst.Attribute):
            fk = self.kind_of(value.func)
            if fk is not None and fk.base == "module":
                return MODULE_OUTPUT
        return kind

    # ------------------------------------------------------------ kinds
    def kind_of(self, node) -> Optional[Kind]:
        """What an (original) expression is: a Kind, or None when unknown."""
        hit = self._kind_cache.get(id(node))
        if hit is not None and hit[0] is node:
            return hit[1]
        kind = self._kind_of(node)
        self._kind_cache[id(node)] = (node, kind)
        return kind

    def _kind_of(self, node) -> Optional[Kind]:  # noqa: C901 - one case per node type
        t = type(node)
        if t is cst.Name:
            if node.value in self.state.module_classes:
                return Kind.make("class", node.value)
            return self.lookup(node.value)
        if t is cst.Attribute:
            return self._attribute_kind(node)
        if t is cst.Call:
            return self._call_kind(node)
        if t is cst.BinaryOperation:
            left, right = self.kind_of(node.left), self.kind_of(node.right)
            if TENSOR in (left, right):
                return TENSOR
            if NDARRAY in (left, right):
                return NDARRAY
            if (type(node.operator) is cst.Add and left is not None and right is not None
                    and left.base == "list" and right.base == "list"):
                return join([left, right])
            return None
        if t is cst.UnaryOperation:
            return self.kind_of(node.expression)
        if t is cst.IfExp:  # ``[] if self.bias is None else [self.bias]``: a list either way
            kinds = [self.kind_of(node.body), self.kind_of(node.orelse)]
            return join(kinds) if all(k is not None and k.base == "list" for k in kinds) else None
        if t is cst.Comparison and len(node.comparisons) == 1 \
                and type(node.comparisons[0].operator) in _ELEMENTWISE_COMPARISONS:
            kinds = (self.kind_of(node.left), self.kind_of(node.comparisons[0].comparator))
            return TENSOR if TENSOR in kinds else NDARRAY if NDARRAY in kinds else None
        if t is cst.Subscript:
            base = self.kind_of(node.value)
            if base == TENSOR or base == NDARRAY:
                return base
            parts = tuple_elements(base)
            if parts is not None and len(node.slice) == 1 and type(node.slice[0].slice) is cst.Index \
                    and type(node.slice[0].slice.value) is cst.Integer:
                i = int(node.slice[0].slice.value.value)
                return parts[i] if i < len(parts) else None
            if (base is not None and base.base == "list" and len(node.slice) == 1
                    and type(node.slice[0].slice) is cst.Index):
                return base.item
            return None
        if t is cst.Tuple and node.elements and all(type(el) is cst.Element for el in node.elements):
            return tuple_kind(self.kind_of(el.value) for el in node.elements)
        if t is cst.List:
            kinds = [self.kind_of(el.value) if type(el) is cst.Element else None for el in node.elements]
            item = join(kinds) if kinds else None
            return Kind.make("list", item) if item is not None and item.base != CONFLICT_BASE else LIST
        if t is cst.ListComp:
            self.enter_comprehension(node.for_in)
            try:
                item = self.kind_of(node.elt)
            finally:
                self.scopes.pop()
            return Kind.make("list", item) if item is not None else LIST
        return None

    def _attribute_kind(self, node: cst.Attribute) -> Optional[Kind]:
        qual = self.resolve(node)
        if qual:
            entry = S.APIS.get(qual)
            return entry.returns if entry and entry.attr else None
        if type(node.value) is cst.Name and node.value.value == "self" and self.classes:
            return self._attr_kind(self.classes[-1], node.attr.value)
        base = self.kind_of(node.value)
        if base is not None and base.base in ("module", "object") and base.detail:
            info = self.state.class_infos.get(base.detail)
            if info is not None:
                return self._attr_kind(info, node.attr.value)
        if base == TENSOR and node.attr.value in ("T", "mT", "data", "grad", "real", "imag"):
            return TENSOR
        if base == NDARRAY:
            return NDARRAY if node.attr.value in ("T", "real", "imag") else None
        for m in S.MEMBERS.get(node.attr.value, ()):
            if m.returns and S.kind_matches(m.receiver, base):
                return m.returns
        return None

    def _attr_kind(self, info: ClassInfo, attr: str) -> Optional[Kind]:
        seen = set()
        while info is not None and info.name not in seen:
            seen.add(info.name)
            if attr in info.attrs:
                return info.attrs[attr]
            info = next((self.state.class_infos[b] for b in info.bases if b in self.state.class_infos), None)
        return None

    def _call_kind(self, node: cst.Call) -> Optional[Kind]:  # noqa: C901
        func = node.func
        qual = self.resolve(func)
        if qual:
            entry = S.APIS.get(qual)
            return entry.returns if entry else None
        fk = self.kind_of(func)
        if fk is not None:
            base = fk.base
            if base == "class":
                return Kind.make("module", fk.detail)
            if base == "module":
                return TENSOR
            if base == "type":
                return Kind.make("object", fk.detail)
            if base == "function":
                facts = self.facts.get(fk.detail)
                return facts.returns if facts is not None else None
            if base == "object" and fk.detail:
                facts = self.facts.method(self.state.class_infos, fk.detail, "__call__")
                return facts.returns if facts is not None else None
        if type(func) is cst.Attribute:
            recv = self.kind_of(func.value)
            name = func.attr.value
            if recv is not None and recv.base in ("object", "module") and recv.detail in self.state.class_infos:
                facts = self.facts.method(self.state.class_infos, recv.detail, name)
                if facts is not None or recv.base == "object":
                    return facts.returns if facts is not None else None
            if recv is None and self._numpy(func.value):
                return None if name in ("seed", "set_state") else NDARRAY
            if recv == NDARRAY:
                return NDARRAY if name not in ("tolist", "item") else None
            for m in S.METHODS.get(name, ()):
                if S.kind_matches(m.receiver, recv):
                    return recv if m.returns == "same" else m.returns
            return None
        if type(func) is cst.Name and fk is None and func.value not in self.state.class_infos:
            builtin = func.value
            if builtin in ("len", "int", "round"):
                return INT
            if builtin in ("list", "tuple", "sorted") and node.args:
                item = self.element_kind(node.args[0].value)
                return Kind.make("list", item) if isinstance(item, Kind) else LIST
        return None

    def _numpy(self, node) -> bool:
        """Is ``node`` NumPy or one of its modules (``np``, ``np.random``, ``numpy.linalg``)?"""
        while type(node) is cst.Attribute:
            node = node.value
        if type(node) is not cst.Name or self.lookup(node.value) is not None:
            return False
        qual = self.state.cell_imports.get(node.value) or self.state.session.imported.get(node.value, "")
        return qual == "numpy" or qual.startswith("numpy.")

    # ------------------------------------------------------------ iteration
    def element_kind(self, node) -> Union[Kind, tuple, str, None]:
        """What iterating ``node`` yields: a Kind, a tuple of element structures (``zip``,
        ``enumerate``, ``.named_parameters()``), :data:`BATCH`, or None."""
        kind = self.kind_of(node)
        if kind is not None:
            if kind == PARAMS:
                return TENSOR
            if kind.base == "named" and kind.item is not None:
                return (None, kind.item)
            if kind.base in ("iter", "list"):
                return kind.item
            if kind in BATCH_ITERABLES:
                return BATCH
            if kind == TENSOR or kind == NDARRAY:
                return kind
            return None
        t = type(node)
        if t is cst.Call and type(node.func) is cst.Name and node.func.value not in self.state.class_infos \
                and self.lookup(node.func.value) is None:
            name = node.func.value
            args = [a.value for a in node.args if a.keyword is None and not a.star]
            if name == "zip" and args:
                return tuple(self.element_kind(a) for a in args)
            if name == "enumerate" and args:
                return (INT, self.element_kind(args[0]))
            if name == "range":
                return INT
            if name in _ELEMENT_BUILTINS and args:
                return self.element_kind(args[0])
        if t is cst.List or t is cst.Tuple:
            kinds = [self.kind_of(el.value) if type(el) is cst.Element else None for el in node.elements]
            return join(kinds) if kinds else None
        return None

    def enter_comprehension(self, for_in: cst.CompFor) -> None:
        """Push a scope binding the targets of a comprehension's ``for`` clauses (the
        caller pops it)."""
        self.scopes.append({})
        while for_in is not None:
            self.bind_target(for_in.target, self.element_kind(for_in.iter))
            for_in = for_in.inner_for_in

    # ------------------------------------------------------------ functions
    def enter_function(self, node: cst.FunctionDef, facts: Optional[FunctionFacts]) -> dict:
        """Push the scope of a function: its parameters with the kinds their call sites
        agree on (a Module's ``forward`` takes tensors, a method's first parameter is
        the instance)."""
        names = param_names(node.params)
        self._shadow.append({p for p in names if p in self.state.bindings})
        scope: dict = {p: (facts.known(p) if facts is not None else None) for p in names}
        in_method = bool(self.classes) and not self.function_scopes
        if in_method:
            info = self.classes[-1]
            positional = positional_params(node.params)
            if info.is_module and node.name.value in ("forward", "__call__"):
                for p in positional[1:]:
                    scope[p] = scope[p] or TENSOR
            if positional and not info.is_module and not _decorated_static(node):
                scope[positional[0]] = Kind.make("object", info.name)
        self.scopes.append(scope)
        self.function_scopes.append((scope, facts))
        return scope

    def leave_function(self) -> None:
        self.function_scopes.pop()
        self.scopes.pop()
        self._shadow.pop()

    def _parameter_of(self, node) -> tuple[str, Optional[FunctionFacts]]:
        """(name, FunctionFacts) when ``node`` reads a parameter of an enclosing function
        (through attributes, subscripts and calls: ``x.data[0]``), else ("", None)."""
        while type(node) in (cst.Attribute, cst.Subscript, cst.Call):
            node = node.func if type(node) is cst.Call else node.value
        if type(node) is not cst.Name:
            return "", None
        name = node.value
        for scope in reversed(self.scopes):
            if name in scope:
                owner = next((facts for fscope, facts in self.function_scopes if fscope is scope), None)
                return (name, owner) if owner is not None and name in owner.names else ("", None)
        return "", None

    def disputed(self, node) -> bool:
        """Is ``node`` a parameter whose call sites pass values of different kinds?"""
        name, owner = self._parameter_of(node)
        kind = owner.params.get(name) if owner is not None else None
        return kind is not None and kind.base == CONFLICT_BASE and node is not None

    def why_unknown(self, node) -> str:
        """Why the kind of ``node`` is unknown, when that is worth saying: the parameter
        of a function whose call sites disagree, or that no call site passes."""
        name, owner = self._parameter_of(node)
        if owner is None:
            return ""
        fn = owner.name
        kind = owner.params.get(name)
        if kind is not None and kind.base == CONFLICT_BASE:
            kinds = " and ".join(describe(Kind.of(k)) for k in kind.detail.split("|"))
            return f"{name} is a parameter of {fn}(), whose calls pass {kinds}"
        if not any(owner.sites.values()) and not owner.earlier:
            return f"{name} is a parameter of {fn}(), and no call of {fn}() shows what it is"
        return ""


def _decorated_static(node: cst.FunctionDef) -> bool:
    return any(type(d.decorator) is cst.Name and d.decorator.value in ("staticmethod", "classmethod")
               for d in node.decorators)


class LiveScope(dict):
    """The cell's outermost scope: what earlier ported cells bound, and, for a name they
    did not type, what the object a live namespace holds under it is (``live(name)``,
    given by the magics: a notebook's earlier cells really ran). Static kinds win where
    both answer."""

    def __init__(self, kinds: dict, live):
        super().__init__(kinds)
        self._live = live
        self._asked: dict = {}
        #: names the cell binds: what the namespace holds under them is from before
        self._bound: set = set()

    def __setitem__(self, name, kind) -> None:
        self._bound.add(name)
        dict.__setitem__(self, name, kind)

    def _from_live(self, name):
        if name in self._bound:
            return None
        if name not in self._asked:
            self._asked[name] = Kind.of(self._live(name) or "") or None
        return self._asked[name]

    def __contains__(self, name) -> bool:
        if dict.get(self, name) is not None:
            return True
        return self._from_live(name) is not None or dict.__contains__(self, name)

    def __getitem__(self, name):
        value = dict.get(self, name)
        return value if value is not None else self._from_live(name)


class FunctionTable:
    """The user functions a port knows: the cell's and the session's, by key (``train``,
    ``Net.forward``, ``get_collate_fn.collate_fn``), with the kinds the cell starts from."""

    def __init__(self, session):
        self.functions: dict[str, FunctionFacts] = dict(session.function_facts)
        self.by_node: dict[int, FunctionFacts] = {}
        #: call sites of later cells, known ahead (a whole notebook ported at once)
        self.hints: dict = session.call_site_hints
        #: the caller that the top level of this cell is, for the call sites it makes
        session.ports += 1
        self.top_caller = f"<cell {session.ports}>"
        #: the kinds the cell starts from: what earlier cells bound (and what the live
        #: namespace holds, under names they did not type)
        kinds = {k: (v if v is None else Kind.of(v)) for k, v in session.kinds.items()}
        self.top_kinds: dict = LiveScope(kinds, session.live) if session.live is not None else kinds

    def get(self, key: str) -> Optional[FunctionFacts]:
        return self.functions.get(key)

    def method(self, class_infos: dict, cls: str, name: str) -> Optional[FunctionFacts]:
        """A method of a user class, looked up through its bases."""
        seen = set()
        while cls and cls not in seen:
            seen.add(cls)
            facts = self.functions.get(f"{cls}.{name}")
            if facts is not None:
                return facts
            info = class_infos.get(cls)
            cls = next((b for b in info.bases if b in class_infos), "") if info is not None else ""
        return None

    def define(self, key: str, node: cst.FunctionDef, method: bool) -> FunctionFacts:
        """The facts of a ``def`` of the cell. A function an earlier cell defined under
        the same name keeps the call sites later cells showed: they are calls of the
        name, and tell what the new definition receives too."""
        facts = self.by_node.get(id(node))
        if facts is None:
            facts = FunctionFacts(key, node, method)
            earlier = self.functions.get(key)
            if earlier is not None and earlier.node is not node:
                facts.earlier.update(earlier.earlier)
            for caller, group in self.hints.get(key, {}).items():
                facts.earlier.setdefault(caller, group)
            self.functions[key] = facts
            self.by_node[id(node)] = facts
        return facts

    def for_def(self, node) -> Optional[FunctionFacts]:
        return self.by_node.get(id(node))


class Scanner(KindScope):
    """The pass :func:`infer` makes: scopes and kinds as the walk keeps them, call sites
    recorded, nothing rebuilt."""

    def __init__(self, state, facts: FunctionTable, top_scope: Optional[dict] = None):
        self._init_scope(state, facts)
        if top_scope is not None:  # a body sees the names the cell's top level binds
            self.scopes[0] = top_scope
        self._returns: list[list] = []

    # ------------------------------------------------------------ statements
    def scan_body(self, body) -> None:
        for stmt in body:
            self.scan_statement(stmt)

    def scan_statement(self, stmt) -> None:  # noqa: C901 - one case per statement type
        t = type(stmt)
        if t is cst.SimpleStatementLine:
            for small in stmt.body:
                self._small(small)
        elif t is cst.FunctionDef:
            self._define(stmt)
        elif t is cst.ClassDef:
            self._class(stmt)
        elif t is cst.For:
            self._calls_in(stmt.iter)
            self.bind_target(stmt.target, self.element_kind(stmt.iter))
            self._suite(stmt.body)
            if stmt.orelse is not None:
                self._suite(stmt.orelse.body)
        elif t is cst.If:
            node = stmt
            while type(node) is cst.If:
                self._calls_in(node.test)
                self._suite(node.body)
                node = node.orelse
            if node is not None:
                self._suite(node.body)
        elif t is cst.While:
            self._calls_in(stmt.test)
            self._suite(stmt.body)
        elif t is cst.With:
            for item in stmt.items:
                self._calls_in(item.item)
                if item.asname is not None:
                    self.bind_target(item.asname.name, None)
            self._suite(stmt.body)
        elif t is cst.Try or t is cst.TryStar:
            self._suite(stmt.body)
            for h in stmt.handlers:
                self._suite(h.body)
            for part in (stmt.orelse, stmt.finalbody):
                if part is not None:
                    self._suite(part.body)

    def _suite(self, suite) -> None:
        if type(suite) is cst.IndentedBlock:
            self.scan_body(suite.body)
        else:  # a one-line suite: ``if x: y = 1``
            for small in suite.body:
                self._small(small)

    def _small(self, small) -> None:
        t = type(small)
        if t is cst.Assign:
            self._calls_in(small.value)
            kind = self.assigned_kind(small.value)
            for target in small.targets:
                self.bind_target(target.target, kind)
        elif t is cst.AnnAssign:
            if small.value is not None:
                self._calls_in(small.value)
                self.bind_target(small.target, self.assigned_kind(small.value))
        elif t is cst.AugAssign or t is cst.Expr:
            self._calls_in(small.value)
        elif t is cst.Return:
            if small.value is not None:
                self._calls_in(small.value)
                if self._returns:
                    self._returns[-1].append(self.kind_of(small.value))

    # ------------------------------------------------------------ definitions
    def _define(self, node: cst.FunctionDef) -> None:
        in_method = bool(self.classes) and not self.function_scopes
        if in_method:
            key = f"{self.classes[-1].name}.{node.name.value}"
        else:
            outer = self.function_scopes[-1][1] if self.function_scopes else None
            key = f"{outer.key}.{node.name.value}" if outer is not None else node.name.value
        self.facts.define(key, node, in_method)
        if not in_method:
            self.bind(node.name.value, Kind.make("function", key))

    def _class(self, node: cst.ClassDef) -> None:
        info = class_info(self, node)
        if not info.is_module:
            self.bind(node.name.value, Kind.make("type", node.name.value))
        body = node.body.body if type(node.body) is cst.IndentedBlock else ()
        self.classes.append(info)
        self.scopes.append({})
        for stmt in body:
            if type(stmt) is cst.FunctionDef:
                self._define(stmt)
            else:
                self.scan_statement(stmt)
        self.scopes.pop()
        self.classes.pop()

    def scan_function(self, facts: FunctionFacts, info: Optional[ClassInfo]) -> None:
        """Walk a function's body with the parameter kinds its call sites agree on; its
        return kind is what its ``return`` statements agree on."""
        if info is not None:
            self.classes.append(info)
        self.enter_function(facts.node, facts)
        self._returns.append([])
        body = facts.node.body.body if type(facts.node.body) is cst.IndentedBlock else ()
        for stmt in body:
            self.scan_statement(stmt)
        returns = self._returns.pop()
        kind = join(returns) if returns else None
        facts.returns = None if kind is not None and kind.base == CONFLICT_BASE else kind
        self.leave_function()
        if info is not None:
            self.classes.pop()

    # ------------------------------------------------------------ call sites
    def _calls_in(self, expr) -> None:
        """Record the call sites of user functions in an expression (those inside
        comprehensions and lambdas too, with what this pass knows there)."""
        for node in descendants(expr):
            if type(node) is cst.Call:
                self._site(node)

    def _site(self, call: cst.Call) -> None:
        func = call.func
        facts, bound_method = None, False
        infos = self.state.class_infos
        fk = self.kind_of(func) if type(func) in (cst.Name, cst.Attribute) else None
        if fk is not None:
            if fk.base == "function":
                facts = self.facts.get(fk.detail)
            elif fk.base in ("type", "class"):
                facts, bound_method = self.facts.method(infos, fk.detail, "__init__"), True
            elif fk.base == "object" and fk.detail:
                facts, bound_method = self.facts.method(infos, fk.detail, "__call__"), True
        elif type(func) is cst.Attribute:
            recv = self.kind_of(func.value)
            if recv is not None and recv.base in ("object", "module") and recv.detail in infos:
                facts, bound_method = self.facts.method(infos, recv.detail, func.attr.value), True
        if facts is None:
            return
        params = facts.positional[1:] if bound_method and facts.method else facts.positional
        kinds: dict = {}
        for i, arg in enumerate(call.args):
            if arg.star:
                return  # ``f(*args)`` / ``f(**kw)``: which parameter gets what is unknown
            if arg.keyword is not None:
                if arg.keyword.value in facts.names:
                    kinds[arg.keyword.value] = self.kind_of(arg.value)
            elif i < len(params):
                kinds[params[i]] = self.kind_of(arg.value)
        caller = self.function_scopes[-1][1] if self.function_scopes else None
        key = caller.key if caller is not None else self.facts.top_caller
        facts.sites.setdefault(key, []).append(kinds)


def class_info(scope: KindScope, node: cst.ClassDef) -> ClassInfo:
    """The :class:`ClassInfo` of a class definition (made once per port and kept in the
    port's ``class_infos``); its attributes start from its user base classes'."""
    state = scope.state
    name = node.name.value
    bases = tuple(b.value.value for b in node.bases if type(b.value) is cst.Name)
    is_module = any(
        scope.resolve(b.value) == "torch.nn.Module"
        or (type(b.value) is cst.Name and b.value.value in state.module_classes)
        for b in node.bases
    )
    info = state.class_infos.get(name)
    if info is None or info.is_module != is_module or info.bases != bases or name not in state.defined_classes:
        info = ClassInfo(name, is_module, bases)
        state.class_infos[name] = info
        state.defined_classes.add(name)
    info.methods = frozenset(s.name.value for s in node.body.body if type(s) is cst.FunctionDef)
    if is_module:
        state.module_classes.add(name)
    else:
        state.module_classes.discard(name)
    return info


def infer(state, module: cst.Module, facts: FunctionTable) -> None:
    """Give the functions of ``facts`` their parameter and return kinds (see the module
    docstring). Costs nothing for a cell that defines no function or class and calls no
    earlier cell's function.

    Each round walks the cell's top level, then each function body with the parameter
    kinds its call sites agree on so far; a caller walked again replaces the call sites it
    made before, so kinds only get more precise, and the rounds stop when a round changes
    no parameter or return kind."""
    if not facts.functions and not any(type(s) in (cst.FunctionDef, cst.ClassDef) for s in module.body):
        return
    for _ in range(_ROUNDS):
        before = {key: (dict(f.params), f.returns) for key, f in facts.functions.items()}
        _forget_calls_of(facts, facts.top_caller)
        top = Scanner(state, facts)
        top.scan_body(module.body)
        for f in list(facts.functions.values()):
            if id(f.node) not in facts.by_node and not f.sites:
                continue  # an earlier cell's function this cell does not call
            f.settle()
            _forget_calls_of(facts, f.key)
            body = Scanner(state, facts, top.scopes[0])
            body.scan_function(f, state.class_infos.get(f.key.partition(".")[0]) if f.method else None)
        for f in facts.functions.values():
            f.settle()
        if before == {key: (f.params, f.returns) for key, f in facts.functions.items()}:
            break


def _forget_calls_of(facts: FunctionTable, caller: str) -> None:
    """Drop the call sites ``caller`` made in this port (it is about to be walked again)."""
    for f in facts.functions.values():
        f.sites.pop(caller, None)
