"""The signatures of what the port emits, read from the installed versions.

``signatures.json`` holds, for every MindSpore API the port can write (the targets of
the mapping entries, the Tensor methods of the entries on tensors and the MindSpore
names the rule modules ``ref`` by a literal), the parameters the installed MindSpore
accepts, and for every PyTorch API with an entry, PyTorch's parameter order. The port
never imports either framework: at port time :mod:`msmagic.engine.arguments` reads the
file to check each emitted call's keywords and positional count (rule API008).

``python -m msmagic.apis.signatures`` regenerates it (``make docs`` runs it; it takes
seconds). ``tests/test_signatures.py`` fails when the file misses a target the port can
emit or lists one it no longer emits.

An overload is one string in Python's own notation with one mark for defaults:
``low, high, size, seed=, *, dtype=`` (``name=``: has a default, ``name?``: the default
is unknown, which is what MindSpore's C++ Tensor methods report, ``name+``: a list of
ints that also takes its ints spread out as positional arguments, ``/``, ``*``,
``*args`` and ``**kwargs`` as in Python). Where the source cannot be introspected, the entry is
``null``: nothing is checked.

Sources: MindSpore functions and classes by ``inspect.signature`` (a class: its
``__init__``); MindSpore Tensor methods written in Python the same way, those dispatched
by C++ by the overload list MindSpore's own argument parser prints for a call it rejects,
else by their docstring's signature lines; PyTorch by ``inspect.signature`` for Python functions and classes, by
the ATen schemas of its C++ functions (the names its argument parser binds), else by the
signature lines of its docstrings.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import json
import re
from pathlib import Path
from typing import Optional

from msmagic import apis

RULES_DIR = Path(__file__).resolve().parent.parent / "rules"
TENSOR = "Tensor."


# ----------------------------------------------------------------------------- what is emitted


def _ref_literals() -> set[str]:
    """MindSpore names the rule modules pass to ``ref`` as a string literal."""
    out = set()
    for path in sorted(RULES_DIR.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "ref" and node.args
                    and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)
                    and node.args[0].value.startswith("mindspore.")):
                out.add(node.args[0].value)
    return out


def emitted_targets() -> list[str]:
    """Every MindSpore API the port can write as a call: ``mindspore.ops.rand``,
    ``mindspore.nn.Dense``, ``Tensor.sum`` (a method of a MindSpore tensor)."""
    from msmagic.engine import spec as S
    from msmagic.rules.registry import _load

    _load()
    out = set(_ref_literals())
    for entry in S.APIS.values():
        if not entry.attr and entry.target:
            out.add(entry.target)
    for name, specs in S.METHODS.items():
        for m in specs:
            fields = apis.table().get(getattr(m, "table_key", ""), {})
            if m.receiver != S.TENSOR or fields.get("flagged"):
                continue  # a flagged table entry stays PyTorch
            if m.target:
                out.add(m.target if m.target.startswith("mindspore.") else TENSOR + m.target)
            else:
                out.add(TENSOR + name)  # the method keeps its name (a handler may rewrite it)
    return sorted(out)


def mapped_apis() -> list[str]:
    """The PyTorch APIs with an entry that is called: ``torch.rand``, ``Tensor.sum``."""
    from msmagic.engine import spec as S
    from msmagic.rules.registry import _load

    _load()
    out = {key for key, entry in S.APIS.items() if not entry.attr}
    out |= {TENSOR + name for name, specs in S.METHODS.items() if any(m.receiver == S.TENSOR for m in specs)}
    return sorted(out)


# ----------------------------------------------------------------------------- notation


def format_signature(sig: inspect.Signature, skip_first: bool = False) -> str:
    """``inspect.Signature`` -> the file's notation."""
    params = list(sig.parameters.values())[1 if skip_first else 0:]
    out: list[str] = []
    kw_marked = False
    for i, p in enumerate(params):
        if p.kind is p.KEYWORD_ONLY and not kw_marked:
            out.append("*")
            kw_marked = True
        if p.kind is p.VAR_POSITIONAL:
            out.append(f"*{p.name}")
            kw_marked = True
        elif p.kind is p.VAR_KEYWORD:
            out.append(f"**{p.name}")
        else:
            out.append(p.name + ("=" if p.default is not p.empty else ""))
        nxt = params[i + 1] if i + 1 < len(params) else None
        if p.kind is p.POSITIONAL_ONLY and (nxt is None or nxt.kind is not p.POSITIONAL_ONLY):
            out.append("/")
    return ", ".join(out)


def _split_top(text: str) -> list[str]:
    """Split at commas outside brackets and quotes."""
    parts, depth, cur, quote = [], 0, [], ""
    for ch in text:
        if quote:
            cur.append(ch)
            if ch == quote:
                quote = ""
            continue
        if ch in "'\"":
            quote = ch
        elif ch in "([{<":
            depth += 1
        elif ch in ")]}>":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
            continue
        cur.append(ch)
    if "".join(cur).strip():
        parts.append("".join(cur).strip())
    return parts


def _from_text(params: str, unknown_defaults: bool = False) -> Optional[str]:
    """A parameter list as documentation writes it (``low=0, high, size, \\*, dtype=None``;
    ``int high, tuple of ints size``; ``dim=<None, int>``) -> the file's notation.
    ``unknown_defaults``: MindSpore's argument parser's list (``dims=<tuple of int>``),
    which shows no defaults; there the one positional parameter of an overload that is a
    list of ints also takes the ints spread out (``x.tile(2, 1)``), marked ``dims+``."""
    out = []
    ints = set()
    for part in _split_top(params.replace("\\", "")):
        if "list of int" in part or "tuple of int" in part:
            ints.add(len(out))
        if part in ("*", "/"):
            out.append(part)
            continue
        name, eq, _ = part.partition("=")
        name = name.partition(":")[0].strip()  # ``input: Tensor``
        name = name.split()[-1] if name else ""  # ``int high``
        if name.startswith("**"):
            out.append(name)
            continue
        if name.startswith("*"):
            out.append(name)
            continue
        if not name.isidentifier():
            return None
        out.append(name + ("?" if unknown_defaults else "=" if eq else ""))
    positional = [i for i, p in enumerate(out) if not p.startswith("*") and p != "/"]
    if "*" in out:
        positional = [i for i in positional if i < out.index("*")]
    if unknown_defaults and len(positional) == 1 and positional[0] in ints:
        out[positional[0]] = out[positional[0]].rstrip("?") + "+"
    return ", ".join(out)


def _doc_lines(obj, name: str) -> list[str]:
    """The signature lines of a docstring: ``name(...) -> ...`` and ``.. method:: ...``."""
    doc = inspect.getdoc(obj) or ""
    pattern = re.compile(
        r"^\s*(?:\.\. (?:function|method)::\s*)?(?:Tensor\.)?" + re.escape(name) + r"\((.*)\)\s*(?:->.*)?$")
    out = []
    for line in doc.splitlines():
        m = pattern.match(line)
        if m and ("->" in line or line.lstrip().startswith("..") or line.rstrip().endswith(")")):
            text = _from_text(m.group(1))
            if text is not None and text not in out:
                out.append(text)
    return out


# ----------------------------------------------------------------------------- MindSpore


def _resolve(qual: str):
    parts = qual.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for p in parts[i:]:
            obj = getattr(obj, p)
        return obj
    raise ImportError(qual)


_PROBE = "__msmagic_probe__"
_CALLING = re.compile(r'^"Tensor\.(\w+)\((.*)\)"\s*$')


def _probe_overloads(name: str) -> list[str]:
    """The overloads MindSpore's C++ argument parser lists when a call is rejected."""
    import mindspore
    import numpy

    tensor = mindspore.Tensor(numpy.ones((2, 3), numpy.float32))
    try:
        getattr(tensor, name)(**{_PROBE: 1})
    except Exception as exc:  # noqa: BLE001 - the message is what we read
        message = str(exc)
    else:
        return []
    out = []
    for line in message.splitlines():
        m = _CALLING.match(line.strip())
        if m and m.group(1) == name:
            text = _from_text(m.group(2), unknown_defaults=True)
            if text is not None and text not in out:
                out.append(text)
    return out


def _with_doc_defaults(overloads: list[str], documented: list[str]) -> list[str]:
    """Probe overloads (defaults unknown) take their defaults from the documented
    overload with the same parameter names, where there is one."""
    by_names = {}
    for doc in documented:
        by_names.setdefault(tuple(p.rstrip("=") for p in doc.split(", ")), doc)
    out = []
    for o in overloads:
        doc = by_names.get(tuple(p.rstrip("?+") for p in o.split(", ")))
        if doc is None:
            out.append(o)
            continue
        # the documented defaults, the parser's spread marks
        out.append(", ".join(d.rstrip("=") + "+" if p.endswith("+") else d
                             for p, d in zip(o.split(", "), doc.split(", "))))
    return out


def mindspore_signature(target: str):
    """The overloads of one MindSpore target; None when it cannot be introspected;
    "missing" when the installed MindSpore has no such API."""
    import mindspore

    if target.startswith(TENSOR):
        name = target[len(TENSOR):]
        attr = inspect.getattr_static(mindspore.Tensor, name, None)
        if attr is None:
            return "missing"
        func = getattr(mindspore.Tensor, name)
        if inspect.isfunction(func):
            return [format_signature(inspect.signature(func), skip_first=True)]
        if not callable(func):
            return None
        documented = _doc_lines(func, name)
        probed = _probe_overloads(name)
        if probed:
            return _with_doc_defaults(probed, documented)
        return documented or None
    try:
        obj = _resolve(target)
    except (ImportError, AttributeError):
        return "missing"
    if not callable(obj):
        return None
    try:
        return [format_signature(inspect.signature(obj))]
    except (TypeError, ValueError):
        return _doc_lines(obj, target.rsplit(".", 1)[-1]) or None


# ----------------------------------------------------------------------------- PyTorch


def _aten_overloads(name: str, method: bool) -> list[str]:
    """The overloads of a C++ PyTorch function from its ATen schemas (the names Python's
    argument parser binds; ``self`` is ``input`` for a function and the receiver of a
    method)."""
    import torch

    out = []
    for schema in torch._C._jit_get_schemas_for_operator(f"aten::{name}"):
        args = list(schema.arguments)
        is_self = bool(args) and args[0].name == "self"
        if (is_self and not str(args[0].type).startswith("Tensor")) or (method and not is_self):
            continue  # a TorchScript-only overload (``sum(int[] self)``), or no method
        parts, kw_marked = [], False
        for i, a in enumerate(args):
            if method and i == 0 and a.name == "self":
                continue
            if a.kwarg_only and not kw_marked:
                parts.append("*")
                kw_marked = True
            pname = "input" if a.name == "self" else a.name
            parts.append(pname + ("=" if a.has_default_value() else ""))
        text = ", ".join(parts)
        if text not in out:
            out.append(text)
    return out


def torch_signature(key: str):
    """PyTorch's overloads of one API with an entry: ``inspect`` for Python functions
    and classes, the ATen schemas for C++ functions, else the docstring."""
    import torch

    method = key.startswith(TENSOR)
    if method:
        name = key[len(TENSOR):]
        obj = getattr(torch.Tensor, name, None)
    else:
        try:
            obj = _resolve(key)
        except (ImportError, AttributeError):
            return None
        name = key.rsplit(".", 1)[-1]
    if obj is None or not callable(obj):
        return None
    if inspect.isfunction(obj) or inspect.isclass(obj):
        try:
            sig = inspect.signature(obj)
        except (TypeError, ValueError):
            sig = None
        if sig is not None:
            first = next(iter(sig.parameters.values()), None)
            return [format_signature(sig, skip_first=method and first is not None and first.name == "self")]
    aten = _aten_overloads(name, method)
    if aten:
        return aten
    documented = _doc_lines(obj, name)
    if documented:
        return documented
    # a C++ function without a schema or docstring: the stand-in PyTorch's tests use
    stand_in = torch.overrides.get_testing_overrides().get(obj)
    if stand_in is None:
        return None
    return [format_signature(inspect.signature(stand_in), skip_first=method)]  # its first: the tensor


# ----------------------------------------------------------------------------- the file


def generate() -> dict:
    import mindspore
    import torch

    ms_sigs, missing = {}, []
    for target in emitted_targets():
        sig = mindspore_signature(target)
        if sig == "missing":
            missing.append(target)
            sig = None
        ms_sigs[target] = sig
    torch_sigs = {key: torch_signature(key) for key in mapped_apis()}
    return {
        "versions": {"mindspore": mindspore.__version__, "torch": torch.__version__.split("+")[0]},
        "mindspore": ms_sigs,
        "missing": missing,
        "torch": torch_sigs,
    }


def write() -> dict:
    data = generate()
    apis.SIGNATURES_PATH.write_text(json.dumps(data, indent=0, sort_keys=True) + "\n")
    for cached in (apis.signature_data, apis.mindspore_overloads, apis.torch_overloads):
        cached.cache_clear()
    return data


if __name__ == "__main__":
    data = write()
    known = sum(1 for v in data["mindspore"].values() if v)
    print(f"wrote {apis.SIGNATURES_PATH}: {len(data['mindspore'])} MindSpore targets ({known} with "
          f"signatures, {len(data['missing'])} missing), {len(data['torch'])} PyTorch APIs")
