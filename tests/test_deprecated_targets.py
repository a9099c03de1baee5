"""The port avoids what the installed MindSpore marks deprecated.

MindSpore marks an API deprecated in three ways: its ``deprecated`` decorator (a warning
on MindSpore's logger the first time the function is called or the class constructed),
a ``logger.warning(... deprecated ...)`` in the function's body, and its docstring ("This
interface is deprecated and will be removed after version ..."). Two checks:

* every MindSpore name the port can write (mapping targets of the table and the rules,
  the fully qualified names the rule modules emit, what each handler writes for a call
  with one tensor, and every name in the ported rule examples) is resolved on the
  installed MindSpore and must carry none of these marks, except those in
  ``msmagic.apis.deprecations.KNOWN_TARGETS`` (each with its reason);
* every rule example is ported and its MindSpore code executed in a fresh interpreter,
  with Python warnings and MindSpore's logger captured (stderr too, where MindSpore's
  native code logs): the only deprecation messages allowed are the ``INTERNAL`` ones,
  mostly MindSpore's own internals inside a non-deprecated API, for which the installed
  version has no alternative that runs on CPU.

Both lists are checked in the other direction as well: an entry that no longer applies
(the mark or the message is gone) fails, so the lists cannot go stale.
"""

from __future__ import annotations

import ast
import glob
import importlib
import inspect
import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from msmagic.apis.deprecations import INTERNAL, KNOWN_TARGETS, internal_name

ROOT = Path(__file__).resolve().parent.parent

# ----------------------------------------------------------------------------- static


def _deprecated_wrapper_code():
    """The code object of the function MindSpore's ``deprecated`` decorator wraps with:
    every decorated function or ``__init__`` shares it."""
    from mindspore.common import _decorator

    return _decorator.deprecated("0", None)(lambda: None).__code__


#: "is deprecated", not "will be deprecated in the future" (a notice, not yet a mark)
_DOC_MARK = re.compile(r"(this (?:interface|api|class|operator)|`([\w.]+)`)\s+is\s+deprecated"
                       r"|is deprecated from version", re.IGNORECASE)


def marks(obj, wrapper_code) -> list:
    """How MindSpore marks ``obj`` deprecated (empty when it does not)."""
    found = []
    funcs = [obj]
    if inspect.isclass(obj):
        funcs = [obj.__dict__.get("__init__"), obj.__dict__.get("__new__")]
    for f in funcs:
        f = getattr(f, "__func__", f)
        if getattr(f, "__code__", None) is wrapper_code:
            cells = dict(zip(f.__code__.co_freevars, (c.cell_contents for c in f.__closure__)))
            found.append(f"decorator: deprecated from {cells.get('version')}, use {cells.get('substitute')}")
    doc = inspect.getdoc(obj) or ""
    for m in _DOC_MARK.finditer(doc):
        quoted = m.group(2)  # "`shape` is deprecated": a parameter, unless it names the API
        if quoted and quoted.split(".")[-1] != getattr(obj, "__name__", None):
            continue
        found.append("docstring: " + " ".join(doc[max(0, m.start() - 30):m.end() + 40].split()))
        break
    if callable(obj) and not inspect.ismodule(obj):
        try:
            body = inspect.getsource(obj.__init__ if inspect.isclass(obj) else obj)
        except (OSError, TypeError):
            body = ""
        for line in body.splitlines():
            low = line.lower()
            # a warning about the API itself, not about one of its parameters or settings
            if "warning(" in low and "deprecat" in low and "parameter" not in low and "environment" not in low:
                found.append("logs: " + line.strip()[:120])
    return found


def resolve(dotted: str):
    """The object a dotted MindSpore name names, or None."""
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        try:
            for p in parts[i:]:
                obj = getattr(obj, p)
        except AttributeError:
            return None
        return obj
    return None


_RECEIVERS = {"tensor": "mindspore.Tensor", "module": "mindspore.nn.Cell"}


def mapping_targets() -> dict:
    """Dotted MindSpore name -> where the port writes it: targets of the API table and
    the rules' mappings, and the fully qualified names the rule modules emit."""
    from msmagic import rules  # noqa: F401  (installs the rules' entries)
    from msmagic.engine import spec

    names: dict = {}
    for key, entry in spec.APIS.items():
        if entry.target:
            names.setdefault(entry.target, set()).add(f"{key} ({entry.rule})")
    for name, methods in spec.METHODS.items():
        for m in methods:
            if not m.target:
                continue
            base = _RECEIVERS.get(str(m.receiver))
            dotted = m.target if "." in m.target else (f"{base}.{m.target}" if base else None)
            if dotted:
                names.setdefault(dotted, set()).add(f".{name}() ({m.rule})")
    for path in sorted(glob.glob(str(ROOT / "msmagic" / "rules" / "*.py"))):
        for node in ast.walk(ast.parse(Path(path).read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Constant) and isinstance(node.value, str)
                    and re.fullmatch(r"mindspore(\.[A-Za-z_]\w*)+", node.value)):
                names.setdefault(node.value, set()).add(Path(path).name)
    return names


def handler_names() -> dict:
    """Names the rules' handlers write for each PyTorch function, found by porting a call
    with one tensor argument (handlers build some targets from parts, such as
    ``f"mindspore.ops.{name}"``)."""
    import msmagic
    from msmagic.engine import spec

    names: dict = {}
    for key, entry in spec.APIS.items():
        if entry.attr or entry.handler is None or not key.startswith("torch."):
            continue
        code = msmagic.port(f"import torch\nx = torch.ones(2, 2)\ny = {key}(x)\n").code
        for n in example_names(code):
            names.setdefault(n, set()).add(f"{key}(x)")
    return names


def example_names(code: str) -> set:
    """Dotted MindSpore names a ported cell refers to (through its imports)."""
    tree = ast.parse(code)
    alias = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] == "mindspore":
                    alias[a.asname or a.name.split(".")[0]] = a.name if a.asname else "mindspore"
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "mindspore":
            for a in node.names:
                alias[a.asname or a.name] = f"{node.module}.{a.name}"
    found = set(alias.values())
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            chain, cur = [], node
            while isinstance(cur, ast.Attribute):
                chain.append(cur.attr)
                cur = cur.value
            if isinstance(cur, ast.Name) and cur.id in alias:
                found.add(".".join([alias[cur.id], *reversed(chain)]))
    return found


def test_example_names_follow_imports():
    code = textwrap.dedent("""
        import mindspore
        import mindspore.nn as nn
        from mindspore.experimental.optim import Adam as A
        x = mindspore.ops.randn(2).abs()
        layer = nn.Dense(2, 3)
        opt = A(layer.trainable_params())
    """)
    assert example_names(code) >= {"mindspore.ops.randn", "mindspore.nn.Dense",
                                   "mindspore.experimental.optim.Adam"}


def test_marks_recognise_each_way_mindspore_deprecates():
    import mindspore

    wrapper = _deprecated_wrapper_code()
    assert any(m.startswith("decorator") for m in marks(mindspore.ops.randint, wrapper))
    assert any(m.startswith("decorator") for m in marks(mindspore.ops.FusedSparseAdam, wrapper))
    assert any(m.startswith("docstring") for m in marks(mindspore.ops.is_tensor, wrapper))
    assert any(m.startswith("logs") for m in marks(mindspore.ops.matrix_determinant, wrapper))
    assert marks(mindspore.ops.randn, wrapper) == [] and marks(mindspore.nn.Dense, wrapper) == []
    assert marks(mindspore.experimental.optim.Adam, wrapper) == []


def _rule_example_ports() -> dict:
    import msmagic
    from msmagic.rules import registry

    return {r.id: msmagic.port(r.example).code for r in registry.all_rules() if r.example}


def test_no_target_the_port_writes_is_marked_deprecated():
    wrapper = _deprecated_wrapper_code()
    names = mapping_targets()
    for n, where in handler_names().items():
        names.setdefault(n, set()).update(where)
    for rule_id, code in _rule_example_ports().items():
        for n in example_names(code):
            names.setdefault(n, set()).add(f"example {rule_id}")
    resolved = {n: resolve(n) for n in names}
    assert sum(o is not None for o in resolved.values()) > 700  # the enumeration found the table
    marked = {n: marks(o, wrapper) for n, o in resolved.items() if o is not None}
    marked = {n: m for n, m in marked.items() if m}
    unexpected = {n: (m, sorted(names[n])[:3]) for n, m in marked.items() if n not in KNOWN_TARGETS}
    assert not unexpected, "\n".join(f"{n}: {m} (written for {w})" for n, (m, w) in unexpected.items())
    stale = [n for n in KNOWN_TARGETS if n not in marked]
    assert not stale, f"no longer written or no longer deprecated: {stale}"


# ----------------------------------------------------------------------------- executed

_RUNNER = r'''
import contextlib, io, json, logging, sys, warnings
import msmagic
from msmagic.rules import registry
import mindspore
from mindspore import log as mslog
from mindspore.common import _decorator

class Capture(logging.Handler):
    def __init__(self):
        super().__init__()
        self.messages = []
    def emit(self, record):
        self.messages.append(record.getMessage())

capture = Capture()
mslog._get_logger().addHandler(capture)
out = {}
cells = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {r.id: r.example for r in registry.all_rules() if r.example}
for name, source in cells.items():
    code = msmagic.port(source).code
    _decorator.DEPRECATE_SET.clear()  # MindSpore warns once per process and name
    capture.messages.clear()
    print(f"=== {name}", file=sys.stderr, flush=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                exec(compile(code, f"<{name}>", "exec"), {"__name__": "__main__"})
            error = None
        except Exception as exc:  # flagged lines stay PyTorch; the run goes as far as it can
            error = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"[:160]
    messages = [m for m in capture.messages if "deprecat" in m.lower()]
    messages += [f"{w.category.__name__}: {w.message}" for w in caught if "deprecat" in str(w.message).lower()
                 or issubclass(w.category, DeprecationWarning)]
    out[name] = {"messages": messages, "error": error}
print("RESULT " + json.dumps(out), flush=True)
'''

#: a PyTorch cell whose port makes MindSpore log each ``INTERNAL`` name, for the names no
#: rule example reaches (run in a fresh interpreter: "Eps" is logged when a module loads)
_TRIGGERS = [
    "import torch\nx = torch.linalg.pinv(torch.ones(3, 2))\n",
    "import torch\nx = torch.diag_embed(torch.ones(2, 3))\n",
    "import torch\nx = torch.rand_like(torch.ones(2))\n",
    "import torch\nx = torch.addmv(torch.ones(2, dtype=torch.int64), torch.ones(2, 3, dtype=torch.int64), "
    "torch.ones(3, dtype=torch.int64))\n",
    "import torch\nimport torch.nn as nn\nimport torch.optim as optim\nmodel = nn.Linear(2, 1)\n"
    "opt = optim.Adagrad(model.parameters(), lr=0.1)\nloss = model(torch.ones(1, 2)).sum()\nloss.backward()\n"
    "opt.step()\n",
]


def _execute(cwd, cells=None):
    """Port and run ``cells`` (default: every rule example) in a fresh interpreter:
    ({name: {"messages", "error"}}, stderr)."""
    # GLOG_v=2: MindSpore's default level, where its warnings show (the suite sets 3)
    env = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONWARNINGS="default", GLOG_v="2")
    argv = [sys.executable, "-c", _RUNNER] + ([json.dumps(cells)] if cells else [])
    proc = subprocess.run(argv, capture_output=True, text=True, cwd=cwd, env=env, timeout=240)
    line = next((l for l in proc.stdout.splitlines() if l.startswith("RESULT ")), None)
    assert proc.returncode == 0 and line, proc.stderr[-3000:]
    return json.loads(line[len("RESULT "):]), proc.stderr


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    return _execute(tmp_path_factory.mktemp("deprecations"))  # MindSpore writes rank_0/ into the cwd


def test_rule_examples_run_without_deprecation_messages(executed):
    results, _ = executed
    from msmagic.rules import registry

    assert len(results) == sum(1 for r in registry.all_rules() if r.example)
    # most examples run to the end: the check saw the MindSpore code the port writes
    assert sum(r["error"] is None for r in results.values()) > 0.8 * len(results)
    unexpected = {}
    for rule_id, r in results.items():
        for message in r["messages"]:
            if internal_name(message) is None:
                unexpected.setdefault(rule_id, []).append(message)
    assert not unexpected, json.dumps(unexpected, indent=1)


def test_stderr_has_no_other_deprecation_message(executed):
    """What MindSpore's native code logs reaches stderr only; every deprecation line
    there is one of the internals listed."""
    _, stderr = executed
    rule, lines = None, {}
    for line in stderr.splitlines():
        if line.startswith("=== "):
            rule = line[4:]
        elif "deprecat" in line.lower():
            lines.setdefault(rule, []).append(line)
    unexpected = {r: [l for l in ls if internal_name(l) is None] for r, ls in lines.items()}
    unexpected = {r: ls for r, ls in unexpected.items() if ls}
    assert not unexpected, json.dumps(unexpected, indent=1)


def test_adam_ports_no_longer_warn_about_fused_sparse_adam(executed):
    """The warning users saw: torch.optim.Adam with weight decay became nn.Adam, whose
    constructor builds the deprecated FusedSparseAdam primitive."""
    results, stderr = executed
    assert results["OPT003"]["error"] is None and results["OPT003"]["messages"] == []
    assert "FusedSparseAdam" not in stderr


def test_every_listed_internal_still_warns(executed, tmp_path):
    results, stderr = executed
    triggered, trigger_stderr = _execute(tmp_path, {f"trigger {i}": c for i, c in enumerate(_TRIGGERS)})
    assert all(r["error"] is None for r in triggered.values()), triggered
    messages = [m for r in [*results.values(), *triggered.values()] for m in r["messages"]]
    seen = {internal_name(m) for m in messages + (stderr + trigger_stderr).splitlines()} - {None}
    assert seen == set(INTERNAL), f"listed but not seen: {set(INTERNAL) - seen}"


def test_internal_warnings_keeps_only_the_listed_internals_off_the_output(tmp_path):
    """The hook a runner of ported cells uses: MindSpore's own UniformReal warning is
    collected for a note, a deprecated API the port never writes still shows."""
    script = textwrap.dedent("""
        import mindspore
        from mindspore import ops
        from msmagic.apis.deprecations import internal_warnings
        with internal_warnings() as names:
            ops.rand(3).asnumpy()
            ops.matrix_determinant(ops.eye(2, 2, mindspore.float32)).asnumpy()
        print("NAMES", names)
    """)
    env = dict(os.environ, PYTHONPATH=str(ROOT), GLOG_v="2")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path,
                          env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "NAMES ['UniformReal']" in proc.stdout
    deprecations = [l for l in proc.stderr.splitlines() if "is deprecated" in l]
    assert len(deprecations) == 1 and "matrix_determinant is deprecated" in deprecations[0], proc.stderr[-2000:]
