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
from msmagic.engine.line_ends import lf
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
        #: name -> (findings of the port of that ``def`` as (rule id, API), names of the
        #: functions it calls): a later cell's call of it is flagged (GEN004)
        self.function_findings: dict = {}
        #: names earlier cells bound to modules (``import numpy as np``): no tensor
        self.module_names: set[str] = set()
        #: user Module classes -> their attribute kinds
        self.class_infos: dict = {}
        #: user functions of earlier ported cells (``engine.infer.FunctionFacts``) by key:
        #: their call sites, parameter and return kinds
        self.function_facts: dict = {}
        #: function key -> call sites (frozensets of (parameter, kind)) that later cells
        #: of the notebook make, when they are known ahead (the CLI ports a notebook
        #: twice when a later cell's calls tell what an earlier cell's function receives)
        self.call_site_hints: dict = {}
        #: name -> kind spelling (or None) of the object a live namespace holds under the
        #: name: set by the magics, where the notebook's earlier cells really ran
        self.live = None
        #: how many cells were ported with this session (names each cell's call sites)
        self.ports = 0
        #: local name -> qualified name of every module earlier cells imported
        #: (``np`` -> ``numpy``)
        self.imported: dict[str, str] = {}
        #: PyTorch layer (qualified name) -> parameter-name map, for every layer the
        #: session's ported cells construct (parity synchronises parameters through it)
        self.module_params: dict = {}
        #: what rules keep about earlier ported cells: rule key -> {name -> fact} (a
        #: tensor made to require gradients in one cell and differentiated in the next);
        #: a name a later cell rebinds is dropped from every table (``forget``)
        self.memory: dict[str, dict] = {}

    def hints(self) -> dict:
        """The call sites this session saw, per function: hints for another session
        porting the same cells again (see ``call_site_hints``)."""
        return {key: dict(facts.earlier) for key, facts in self.function_facts.items() if facts.earlier}

    def learn(self, source: str) -> None:
        """Record the imports of a cell the user ran (tolerant of any input)."""
        try:
            module = cst.parse_module(mask(lf(source)).text)
        except Exception:  # an unparseable earlier cell teaches nothing
            return
        self.learn_imports(collect_imports(module))
        self.module_names |= module_aliases(module)

    def forget(self, name: str) -> None:
        """A cell bound ``name`` to something the port knows nothing about."""
        self.definitions.pop(name, None)
        self.functions.pop(name, None)
        self.function_findings.pop(name, None)
        self.kinds.pop(name, None)
        for facts in self.memory.values():
            facts.pop(name, None)

    def learn_imports(self, imports: dict) -> None:
        """Record a cell's imports (local name -> qualified name)."""
        self.imported.update(imports)
        for name, qual in imports.items():
            if is_torch(qual):
                self.torch_names[name] = qual
            elif name in self.torch_names:
                # rebound to something else by a later import
                del self.torch_names[name]
