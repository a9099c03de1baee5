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
from msmagic.engine.names import collect_imports, is_torch, module_aliases


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
        #: name -> the original top-level ``def`` of an earlier ported cell
        self.functions: dict = {}
        #: names earlier cells bound to modules (``import numpy as np``): no tensor
        self.module_names: set[str] = set()
        #: user Module classes -> their attribute kinds
        self.class_infos: dict = {}
        #: PyTorch layer (qualified name) -> parameter-name map, for every layer the
        #: session's ported cells construct (parity synchronises parameters through it)
        self.module_params: dict = {}
        #: what rules keep about earlier ported cells: rule key -> {name -> fact} (a
        #: tensor made to require gradients in one cell and differentiated in the next);
        #: a name a later cell rebinds is dropped from every table (``forget``)
        self.memory: dict[str, dict] = {}

    def learn(self, source: str) -> None:
        """Record the imports of a cell the user ran (tolerant of any input)."""
        try:
            module = cst.parse_module(mask(source).text)
        except Exception:  # an unparseable earlier cell teaches nothing
            return
        self.learn_imports(collect_imports(module))
        self.module_names |= module_aliases(module)

    def forget(self, name: str) -> None:
        """A cell bound ``name`` to something the port knows nothing about."""
        self.definitions.pop(name, None)
        self.functions.pop(name, None)
        self.kinds.pop(name, None)
        for facts in self.memory.values():
            facts.pop(name, None)

    def learn_imports(self, imports: dict) -> None:
        """Record a cell's imports (local name -> qualified name)."""
        for name, qual in imports.items():
            if is_torch(qual):
                self.torch_names[name] = qual
            elif name in self.torch_names:
                # rebound to something else by a later import
                del self.torch_names[name]
