"""Emitted calls are checked against the installed MindSpore's signatures (API008).

``msmagic/apis/signatures.json`` is generated from the installed versions
(``python -m msmagic.apis.signatures``, run by ``make docs``): these tests fail when it
misses a target the port can emit, or lists one it no longer emits. The sweep ports every
mapped PyTorch API with its arguments spelled as keywords (PyTorch's own parameter
names, every overload) and checks that each emitted MindSpore call binds to the
target's signature, unless msmagic reported a finding on that line. Porting is text
only: neither framework is imported.
"""

from __future__ import annotations

import ast
import keyword

import pytest

from msmagic import apis
from msmagic.apis import signatures
from msmagic.engine import arguments
from msmagic.rules.registry import VERIFIED_ON

from .codemod import assert_ports, dedent, finding_ids, port


# ----------------------------------------------------------------------------- the data file


def test_signature_file_lists_exactly_the_emitted_targets():
    data = apis.signature_data()
    emitted = set(signatures.emitted_targets())
    missing = sorted(emitted - set(data["mindspore"]))
    gone = sorted(set(data["mindspore"]) - emitted)
    assert not missing and not gone, (
        f"signatures.json is stale (run python -m msmagic.apis.signatures): missing {missing[:10]}, "
        f"no longer emitted {gone[:10]}")
    assert sorted(data["torch"]) == signatures.mapped_apis(), "signatures.json is stale (PyTorch side)"


def test_signature_file_was_made_on_the_installed_versions():
    assert apis.signature_data()["versions"] == VERIFIED_ON


def test_signatures_hold_what_the_installed_versions_accept():
    """Spot checks of the generated data against what the installed versions do (checked
    by hand on MindSpore 2.10 / torch 2.13)."""
    assert apis.signature_data()["mindspore"]["mindspore.ops.rand"] == ["*size, dtype=, seed="]
    assert apis.signature_data()["mindspore"]["mindspore.ops.randint"] == ["low, high, size, seed=, *, dtype="]
    # C++ Tensor methods: the overloads MindSpore's argument parser lists
    assert apis.signature_data()["mindspore"]["Tensor.sum"] == ["dim=, keepdim=, *, dtype=",
                                                                "axis=, dtype=, keepdims=, initial="]
    assert "in_channels, out_channels" in apis.signature_data()["mindspore"]["mindspore.nn.Dense"][0]
    # PyTorch's C++ functions: their ATen schemas
    assert "low, high, size, *, generator, out" in apis.signature_data()["torch"]["torch.randint"]
    assert apis.signature_data()["torch"]["Tensor.view"] == ["size", "dtype"]


def test_parse_overload_notation():
    assert apis.parse_overload("a, /, b=, *, c?, **kw") == (
        ("a", apis.POSITIONAL_ONLY, False), ("b", apis.EITHER, True), ("c", apis.KEYWORD_ONLY, None),
        ("kw", apis.VAR_KEYWORD, True))
    assert apis.parse_overload("*size, dtype=") == (("size", apis.VAR_POSITIONAL, True),
                                                     ("dtype", apis.KEYWORD_ONLY, True))
    rand = apis.parse_overload("*size, dtype=, seed=")
    assert arguments.binds(rand, 2, ["dtype"]) and not arguments.binds(rand, 0, ["size"])
    randint = apis.parse_overload("low, high, size, seed=, *, dtype=")
    assert arguments.binds(randint, 3, []) and not arguments.binds(randint, 2, [])
    assert arguments.binds(randint, 1, ["high", "size"]) and not arguments.binds(randint, 0, ["high", "size"])


def test_table_renames_keep_pytorch_positions():
    """A table rename maps a PyTorch parameter to the MindSpore parameter at the same
    position (``torch.searchsorted``'s ``input`` is MindSpore's ``values``, not its
    ``sorted_sequence``): otherwise a keyword spelling would pass the wrong argument."""
    def position(overloads, name):
        for o in overloads or ():
            names = [p[0] for p in o if p[1] in (apis.POSITIONAL_ONLY, apis.EITHER)]
            if name in names:
                return names.index(name)
        return None

    wrong = []
    for key, fields in apis.table().items():
        target = fields.get("target")
        if not target or not fields.get("rename") or "ms_sig" in fields:
            continue
        tk = target if target.startswith("mindspore.") else f"Tensor.{target}"
        shift = 1 if key.startswith("Tensor.") and target.startswith("mindspore.") else 0
        for torch_name, ms_name in fields["rename"].items():
            sig = fields.get("sig", ())
            a = sig.index(torch_name) if torch_name in sig else position(apis.torch_overloads(key), torch_name)
            b = position(apis.mindspore_overloads(tk), ms_name)
            if a is not None and b is not None and a + shift != b:
                wrong.append((key, torch_name, ms_name))
    assert not wrong, wrong


# ----------------------------------------------------------------------------- the sweep


def _placeholder(name: str) -> str:
    return {"out": "o", "input": "x"}.get(name, f"v_{name}")


def _keyword_calls(key: str) -> list[str]:
    """``key`` called with PyTorch's parameters of each overload spelled as keywords."""
    out = []
    for overload in apis.torch_overloads(key) or ():
        names = [p[0] for p in overload
                 if p[1] in (apis.EITHER, apis.KEYWORD_ONLY, apis.VAR_POSITIONAL) and not keyword.iskeyword(p[0])
                 and not (p[1] == apis.VAR_POSITIONAL and key.startswith("torch.nn."))]  # Python *args
        args = ", ".join(f"{n}={_placeholder(n)}" for n in names)
        out.append(f"x.{key[len('Tensor.'):]}({args})" if key.startswith("Tensor.") else f"{key}({args})")
    return out


def _dotted(node):
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return [node.id, *reversed(parts)] if isinstance(node, ast.Name) else None


def _emitted_calls(code: str):
    """(line, MindSpore target, positional count, keywords) of each call of the port to
    a MindSpore API or a method of the tensor ``x``."""
    tree = ast.parse(code)
    names = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                names[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module:
            for a in node.names:
                names[a.asname or a.name] = f"{node.module}.{a.name}"
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or any(isinstance(a, ast.Starred) for a in node.args) \
                or any(k.arg is None for k in node.keywords):
            continue
        chain = _dotted(node.func)
        if not chain:
            continue
        if chain[0] == "x" and len(chain) == 2:
            target = f"Tensor.{chain[1]}"
        elif names.get(chain[0], "").startswith("mindspore"):
            target = ".".join([names[chain[0]], *chain[1:]])
        else:
            continue
        yield node.lineno, target, len(node.args), [k.arg for k in node.keywords]


def _sweep_keys():
    return [k for k in signatures.mapped_apis() if k.startswith(("torch.", "Tensor."))]


def test_every_mapped_api_with_keyword_arguments_binds_or_is_flagged():
    """No emitted call passes MindSpore an argument its signature rejects (a TypeError
    at run time) unless the line carries a finding."""
    lines = [call for key in _sweep_keys() for call in _keyword_calls(key)]
    assert len(lines) > 1500
    problems = []
    for start in range(0, len(lines), 150):
        chunk = lines[start:start + 150]
        src = "import torch\nx = torch.ones(2, 3)\n" + "".join(f"r = {c}\n" for c in chunk)
        result = port(src)
        flagged = {f.line for f in result.unsupported}
        out = result.code.splitlines()
        for line, target, n_pos, kws in _emitted_calls(result.code):
            overloads = apis.mindspore_overloads(target)
            if overloads is None or any(arguments.binds(o, n_pos, kws) for o in overloads):
                continue
            source_line = next((f.line for f in result.unsupported if f.out_line == line), None)
            if source_line in flagged:
                continue
            problems.append((out[line - 1], overloads))
    assert not problems, problems[:10]
