"""What a notebook's earlier cells tell the port of a later cell.

A notebook usually imports torch in its first cell and uses ``nn`` and ``F`` in later
ones. The extension keeps one :class:`PortSession` per shell and lets it ``learn``
every cell the user ran, so names are resolved through earlier cells' imports. It also
remembers what earlier ports bound on the MindSpore side (so imports are not added
again) and which classes are PyTorch modules.
"""

from __future__ import annotations

import libcst as cst

from msmagic.engine.ipython import mask

MARKER = "# msmagic:"


class PortSession:
    def __init__(self) -> None:
        #: local name -> fully qualified torch name, from earlier cells' imports
        self.torch_names: dict[str, str] = {}
        #: local name -> fully qualified MindSpore name, bound by earlier ports
        self.mindspore_names: dict[str, str] = {}
        #: user classes (by name) known to be torch.nn.Module subclasses
        self.module_classes: set[str] = set()
        #: what earlier ported cells bound at top level: name -> kind ("tensor",
        #: "module:Net", "optimizer", ...), so a later cell's ``model.eval()`` or
        #: ``scheduler.step()`` is typed like it would be in one cell
        self.kinds: dict = {}
        #: name -> the original call that last bound it (``scheduler = StepLR(opt, ...)``)
        self.definitions: dict = {}
        #: user Module classes -> their attribute kinds
        self.class_infos: dict = {}

    def learn(self, source: str) -> None:
        """Record the imports of a cell the user ran (tolerant of any input)."""
        try:
            module = cst.parse_module(mask(source).text)
        except Exception:  # an unparseable earlier cell teaches nothing
            return
        self.learn_imports(collect_imports(module))

    def learn_imports(self, imports: dict) -> None:
        """Record a cell's imports (local name -> qualified name)."""
        for name, qual in imports.items():
            if qual.split(".")[0] == "torch":
                self.torch_names[name] = qual
            elif name in self.torch_names:
                # rebound to something else by a later import
                del self.torch_names[name]


def collect_imports(module: cst.Module) -> dict[str, str]:
    """local name -> fully qualified imported name, for imports at the top level of a
    cell and directly inside top-level ``if``/``try``/``with`` blocks."""
    found: dict[str, str] = {}
    for stmt in _top_statements(module.body):
        if isinstance(stmt, cst.Import):
            for alias in stmt.names:
                full = dotted(alias.name)
                if alias.asname is not None:
                    found[alias.asname.name.value] = full
                else:
                    root = full.split(".")[0]
                    found[root] = root
        elif isinstance(stmt, cst.ImportFrom) and not stmt.relative:
            if stmt.module is None or isinstance(stmt.names, cst.ImportStar):
                continue
            base = dotted(stmt.module)
            for alias in stmt.names:
                name = alias.name.value if isinstance(alias.name, cst.Name) else dotted(alias.name)
                local = alias.asname.name.value if alias.asname is not None else name
                found[local] = f"{base}.{name}"
    return found


def _top_statements(body):
    for stmt in body:
        if isinstance(stmt, cst.SimpleStatementLine):
            comment = stmt.trailing_whitespace.comment
            if comment is not None and MARKER in comment.value:
                continue  # an import msmagic kept on purpose binds nothing to port
            yield from stmt.body
        elif isinstance(stmt, (cst.If, cst.Try, cst.With)):
            inner = stmt.body
            if isinstance(inner, cst.IndentedBlock):
                yield from _top_statements(inner.body)
            if isinstance(stmt, cst.If) and stmt.orelse is not None:
                orelse = stmt.orelse
                if isinstance(orelse.body, cst.IndentedBlock):
                    yield from _top_statements(orelse.body.body)
            if isinstance(stmt, cst.Try):
                for handler in stmt.handlers:
                    if isinstance(handler.body, cst.IndentedBlock):
                        yield from _top_statements(handler.body.body)


def dotted(node) -> str:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return f"{dotted(node.value)}.{node.attr.value}"
    raise TypeError(type(node).__name__)
