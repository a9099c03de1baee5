"""Stage: import planning. What each torch import becomes, how generated code refers to
a MindSpore object (``ref``: through a name already in scope, or a queued import), and
the rewriting of the cell's own import statements.
"""

from __future__ import annotations

import re
from typing import Optional

import libcst as cst

from msmagic.engine import spec as S
from msmagic.engine.build import attr_chain, code, parse_statement
from msmagic.engine.names import MARKER, dotted, is_torch

IMPORT_RULE = "IMP001"
UNMAPPED_RULE = "GEN001"


class ImportPlan:
    """Names on the MindSpore side of the cell and the imports the port adds."""

    def __init__(self, bindings: dict[str, str], mindspore_names: dict[str, str], identifiers: frozenset,
                 positions: Optional[dict] = None):
        self.bindings = bindings
        #: input local name -> the top-level statement of the cell that first imports it
        self.positions: dict = dict(positions or {})
        #: output local name -> that statement (names earlier cells bound: absent)
        self.out_positions: dict = {}
        #: the top-level statement being ported (the walker keeps it current)
        self.at: int = -1
        #: local name -> fully qualified MindSpore name, bound on the MindSpore side
        self.out_names: dict[str, str] = dict(mindspore_names)
        #: input local name -> the local its import binds after the port (torch -> mindspore)
        self.renamed: dict[str, str] = {}
        self.kept_torch_locals: set[str] = set()
        self.added: list[tuple[str, str, str]] = []  # (kind, module, name)
        self.keep_torch_import = False
        #: ecosystem packages (torchvision...) kept for calls left as they are
        self.kept_roots: list[str] = []
        self.inserted: list = []
        #: identifiers the cell uses as names (not attributes): a name is free when absent
        self._identifiers = identifiers
        self._plan()

    def _plan(self) -> None:
        # Earlier cells' imports count as ported too: the MindSpore side of the notebook
        # ran their ports, so ``nn`` there is mindspore.nn.
        for local, qual in self.bindings.items():
            target = import_target(qual)
            if target is not None:
                if local == qual:  # "import torch" / "import torch.nn" bind "torch"
                    out_local = target.split(".")[0]
                    target = out_local
                else:
                    out_local = out_local_name(local, qual.rsplit(".", 1)[-1],
                                               target.rsplit(".", 1)[-1], qual)
                self.out_names[out_local] = target
                self.renamed[local] = out_local
                if local in self.positions:
                    self.out_positions[out_local] = self.positions[local]
            elif qual in S.MODULES or qual in S.APIS:
                continue  # removed; uses reach their targets through added imports
            else:
                self.kept_torch_locals.add(local)

    def ref(self, target: str, prefer: Optional[str] = None) -> cst.BaseExpression:
        """An expression naming the MindSpore object ``target`` (adding an import when
        nothing in scope reaches it). ``prefer``: the local name the user spelled the
        PyTorch original with, used when it still reaches the target."""
        parts = target.split(".")
        if parts[:2] == ["mindspore", "scipy"] and len(parts) >= 3:
            # a subpackage that ``import mindspore`` does not load
            self.need("import", ".".join(parts[:3]), "")
        prefer = self.renamed.get(prefer, prefer)
        if prefer is not None and prefer in self.out_names:
            qual = self.out_names[prefer]
            if target == qual or target.startswith(qual + "."):
                return attr_chain(prefer, target[len(qual):].split(".")[1:])
        by_qual = {}
        for local, qual in self.out_names.items():
            if self.out_positions.get(local, -1) > self.at >= 0:
                continue  # imported by a later statement of the cell (``import ... as F`` further down)
            by_qual.setdefault(qual, local)
        for i in range(len(parts), 0, -1):
            local = by_qual.get(".".join(parts[:i]))
            if local is not None:
                if i == 1 and self._initializer_name(parts):
                    break  # `from mindspore.common.initializer import X` reads better
                return attr_chain(local, parts[i:])
        local, rest = self._add_import(parts)
        return attr_chain(local, rest)

    def name_free(self, name: str) -> bool:
        if name in self.out_names:
            return self.out_names[name].startswith("mindspore")
        return name not in self._identifiers

    def _initializer_name(self, parts: list[str]) -> bool:
        return len(parts) == 4 and parts[1:3] == ["common", "initializer"] and self.name_free(parts[3])

    def _add_import(self, parts: list[str]) -> tuple[str, list[str]]:
        if len(parts) >= 3 and parts[1] in ("nn", "ops") and self.name_free(parts[1]):
            self.need("from", "mindspore", parts[1])
            self.out_names[parts[1]] = f"mindspore.{parts[1]}"
            return parts[1], parts[2:]
        if self._initializer_name(parts):
            self.need("from", "mindspore.common.initializer", parts[3])
            self.out_names[parts[3]] = ".".join(parts)
            return parts[3], []
        self.need("import", "mindspore", "")
        self.out_names.setdefault("mindspore", "mindspore")
        return "mindspore", parts[1:]

    def need(self, kind: str, module: str, name: str) -> None:
        """Queue ``import module`` (kind "import") or ``from module import name``."""
        key = (kind, module, name)
        if key not in self.added:
            self.added.append(key)

    def torch_ref(self, qual: str) -> cst.BaseExpression:
        """Refer to a PyTorch object that stays PyTorch (no mapping): ``torch.x.y`` (or
        ``torchvision.x.y``: its import is kept)."""
        root, *rest = qual.split(".")
        if root == "torch":
            self.keep_torch_import = True
        elif root not in self.kept_roots:
            self.kept_roots.append(root)
        return attr_chain(root, rest)

    def insert(self, module: cst.Module) -> cst.Module:
        """The module with the queued imports after its leading imports."""
        lines: list[cst.SimpleStatementLine] = []
        plain = [k for k in self.added if k[0] == "import"]
        froms: dict[str, list[str]] = {}
        for kind, mod, name in self.added:
            if kind == "from":
                froms.setdefault(mod, []).append(name)
        for _, mod, _ in plain:
            lines.append(parse_statement(f"import {mod}\n"))
        for mod, names in froms.items():
            lines.append(parse_statement(f"from {mod} import {', '.join(names)}\n"))
        if self.keep_torch_import and _mentions(module, "torch"):
            lines.append(
                parse_statement(f"import torch  {MARKER} kept for the PyTorch calls flagged below\n")
            )
        for root in self.kept_roots:
            lines.append(parse_statement(f"import {root}  {MARKER} kept for the calls flagged below\n"))
        if not lines:
            return module
        self.inserted = lines
        body = list(module.body)
        at = insertion_index(body)
        return module.with_changes(body=body[:at] + lines + body[at:])


def _mentions(node: cst.CSTNode, name: str) -> bool:
    """Does the tree use the name ``name`` (a rule may have dropped the code that kept
    a PyTorch reference)?"""
    stack = [node]
    while stack:
        n = stack.pop()
        if type(n) is cst.Name and n.value == name:
            return True
        stack.extend(n.children)
    return False


def identifiers(text: str) -> frozenset:
    """Every identifier the text uses other than as an attribute (``x`` in ``x.y``)."""
    return frozenset(re.findall(r"(?<![\w.])[A-Za-z_]\w*", text))


def import_target(qual: str) -> Optional[str]:
    """What ``import``/``from ... import`` of ``qual`` becomes (None: removed/kept)."""
    if qual in S.MODULES:
        return S.MODULES[qual]
    entry = S.APIS.get(qual)
    return entry.target if entry is not None else None


def out_local_name(local: str, name: str, tname: str, full: str) -> str:
    """Local name a name import binds after the port: the user's alias if any, else
    the MindSpore name (``from torch.nn import Linear`` -> ``from mindspore.nn import
    Dense``)."""
    if local != name:
        return local
    return tname if full not in S.MODULES else local


def insertion_index(body: list) -> int:
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


def rewrite_import(ctx, node: cst.Import):
    """``import torch.nn as nn`` -> ``import mindspore.nn as nn`` (or removed, or kept
    and flagged when the module has no counterpart)."""
    keep: list[cst.ImportAlias] = []
    new_lines: list[str] = []
    changed = False
    for alias in node.names:
        full = dotted(alias.name)
        if not is_torch(full):
            keep.append(alias)
            continue
        changed = True
        target = import_target(full)
        asname = alias.asname.name.value if alias.asname else None
        if target is None and full not in S.MODULES:
            # a torch module msmagic has no mapping for: keep it, flagged
            keep.append(alias)
            ctx.finding(
                UNMAPPED_RULE, f"no MindSpore counterpart is known for module {full}; the import was kept",
                node=node, api=full, comment=f"{full} kept (no MindSpore counterpart)",
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
        stmts.append(node.with_changes(names=_join_aliases(keep)))
    for line in new_lines:
        stmts.append(parse_statement(line + "\n").body[0])
    detail = "; ".join(new_lines) if new_lines else "removed (no MindSpore module)"
    ctx.edit(IMPORT_RULE, stmts[0] if stmts else None, node=node, api="import", detail=detail)
    return _replace_small(stmts)


def rewrite_import_from(ctx, node: cst.ImportFrom):
    """``from torch.nn import Linear`` -> ``from mindspore.nn import Dense``."""
    if node.relative or node.module is None:
        return node
    base = dotted(node.module)
    if not is_torch(base) or isinstance(node.names, cst.ImportStar):
        if is_torch(base):
            ctx.finding(UNMAPPED_RULE, "star imports from torch cannot be ported name by name",
                        node=node, api=base)
        return node
    kept: list[cst.ImportAlias] = []
    groups: dict[str, list[str]] = {}
    for alias in node.names:
        name = alias.name.value if isinstance(alias.name, cst.Name) else dotted(alias.name)
        local = alias.asname.name.value if alias.asname else name
        full = f"{base}.{name}"
        target = import_target(full)
        if target is None:
            if full in S.MODULES or full in S.APIS:
                continue
            kept.append(alias)
            ctx.finding(
                UNMAPPED_RULE, f"no MindSpore mapping is known for {full}; its import was kept as PyTorch",
                node=node, api=full, comment=f"{full} kept as PyTorch",
            )
            continue
        mod, tname = target.rsplit(".", 1) if "." in target else ("", target)
        if not mod:
            groups.setdefault("", []).append(target if local == target else f"{target} as {local}")
            continue
        out_local = out_local_name(local, name, tname, full)
        groups.setdefault(mod, []).append(tname if out_local == tname else f"{tname} as {out_local}")
    stmts: list = []
    if kept:
        stmts.append(node.with_changes(names=_join_aliases(kept)))
    for mod, names in groups.items():
        if mod == "":
            for n in names:
                stmts.append(parse_statement(f"import {n}\n").body[0])
        else:
            stmts.append(parse_statement(f"from {mod} import {', '.join(names)}\n").body[0])
    new_text = "; ".join(code(s) for s in stmts if s is not node)
    ctx.edit(IMPORT_RULE, stmts[0] if stmts else None, node=node, api="import",
             detail=new_text or "removed (nothing to import on the MindSpore side)")
    return _replace_small(stmts)


def _join_aliases(aliases: list[cst.ImportAlias]) -> list[cst.ImportAlias]:
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
