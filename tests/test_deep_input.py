"""Deep, indented and stacked-magic cells: valid Python CPython compiles ports (no
RecursionError), input CPython rejects is a PortSyntaxError with a position, and what
the port cannot do is a documented one-line exception."""

import ast
import gc
import sys
import threading

import pytest

import msmagic
from msmagic.engine import deep
from msmagic.engine import pipeline
from msmagic.errors import PortLimitError, PortOutputError, PortSyntaxError

HEAD = "import torch\nx = torch.ones(3)\n"


def elif_chain(n):
    branches = [f"elif a == {i}:\n    y = torch.zeros({i})" for i in range(1, n)]
    return HEAD + "a = 0\nif a == 0:\n    y = torch.zeros(1)\n" + "\n".join(branches) + "\n"


def deep_shapes():
    """(name, cell): each as deep as the issue reports failing, or deeper."""
    return [
        ("elif chain of 1,000 branches", elif_chain(1000)),
        ("sum of 1,000 terms", HEAD + "y = " + " + ".join(["x"] * 1000) + "\n"),
        ("sum of 400 ported calls", HEAD + "y = " + " + ".join(["torch.abs(x)"] * 400) + "\n"),
        ("199 nested calls", HEAD + "y = " + "torch.abs(" * 199 + "x" + ")" * 199 + "\n"),
        ("199 nested lists", HEAD + "y = torch.tensor(" + "[" * 198 + "1" + "]" * 198 + ")\n"),
        ("chain of 400 method calls", HEAD + "y = x" + ".abs()" * 400 + "\n"),
        ("3,000-term and chain", HEAD + "y = " + " and ".join(["x.sum()"] * 3000) + "\n"),
        ("3,000 concatenated strings", HEAD + "y = (" + " ".join(["'a'"] * 3000) + ")\n"),
    ]


@pytest.mark.parametrize("name,cell", deep_shapes(), ids=[n for n, _ in deep_shapes()])
def test_deep_valid_python_ports(name, cell):
    compile(cell, "<cell>", "exec")  # CPython itself accepts the cell
    result = msmagic.port(cell)
    assert "torch" not in result.code
    assert "mindspore" in result.code
    ast.parse(result.code)
    assert msmagic.port(result.code).code == result.code


def test_deep_port_rewrites_every_branch():
    result = msmagic.port(elif_chain(1000))
    assert result.code.count("mindspore.ops.zeros(") == 1000
    assert len(result.statements) == 4


def test_more_than_201_nested_parentheses_is_rejected_like_cpython():
    cell = "import torch\ny = " + "(" * 201 + "torch.ones(1)" + ")" * 201 + "\n"
    with pytest.raises(SyntaxError, match="too many nested parentheses"):
        compile(cell, "<cell>", "exec", ast.PyCF_ONLY_AST)
    with pytest.raises(PortSyntaxError) as err:
        msmagic.port(cell)
    assert (err.value.line, err.value.column) == (2, 205)
    assert err.value.message == "too many nested parentheses"
    assert "\n" not in str(err.value)


@pytest.fixture
def default_limit():
    """Python's default recursion limit: other tests' libraries (hypothesis, torch) may
    have raised it in this process."""
    before = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)
    yield
    sys.setrecursionlimit(before)


def test_nesting_past_cpythons_limit_is_a_syntax_error(default_limit):
    cell = HEAD + "y = " + " + ".join(["x"] * 4000) + "\n"
    with pytest.raises(RecursionError):
        compile(cell, "<cell>", "exec", ast.PyCF_ONLY_AST)
    with pytest.raises(PortSyntaxError) as err:
        msmagic.port(cell)
    assert (err.value.line, err.value.column) == (1, 1)
    assert "nested too deeply for Python" in err.value.message
    assert "\n" not in str(err.value)


def test_recursion_in_the_port_is_a_limit_error(monkeypatch, default_limit):
    monkeypatch.setattr(deep, "RECURSION_LIMIT", 1000)  # no more than the default
    cell = HEAD + "y = " + " + ".join(["x"] * 1200) + "\n"
    compile(cell, "<cell>", "exec")
    with pytest.raises(PortLimitError, match="nested too deeply for msmagic") as err:
        msmagic.port(cell)
    assert err.value.__cause__ is None and err.value.__suppress_context__


def _recurse(n):
    return 0 if n == 0 else 1 + _recurse(n - 1)


def test_the_worker_alone_holds_the_raised_limit(default_limit):
    """The worker recurses 5,000 frames deep while the interpreter's limit, which every
    other thread is held to, stays at 1,000."""
    assert deep.run(lambda: (sys.getrecursionlimit(), _recurse(5000))) == (1000, 5000)
    assert sys.getrecursionlimit() == 1000
    with pytest.raises(RecursionError):
        _recurse(5000)


def test_output_that_does_not_parse_is_reported(monkeypatch):
    monkeypatch.setattr(pipeline, "unmask", lambda text, masked: text + "    y = (\n")
    with pytest.raises(PortOutputError) as err:
        msmagic.port(HEAD)
    assert err.value.line == 3
    assert "does not parse" in str(err.value) and "\n" not in str(err.value)


def test_port_keeps_recursion_limit_and_gc_state():
    limit = sys.getrecursionlimit()
    msmagic.port(elif_chain(300))
    assert sys.getrecursionlimit() == limit
    assert gc.isenabled()
    gc.disable()
    try:
        msmagic.port(HEAD)
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_exceptions_come_back_from_the_worker_as_raised():
    with pytest.raises(TypeError, match="takes the cell's source as a str"):
        msmagic.port(b"import torch\n")
    with pytest.raises(PortSyntaxError) as err:
        msmagic.port("import torch\nx = torch.ones(3\n")
    assert (err.value.line, err.value.column) == (2, 15)


def test_ports_from_several_threads():
    results = {}

    def one(i):
        results[i] = msmagic.port(HEAD + f"y = torch.zeros({i})\n").code

    threads = [threading.Thread(target=one, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == {i: f"import mindspore\nx = mindspore.ops.ones(3)\ny = mindspore.ops.zeros({i})\n"
                       for i in range(4)}


def _indented(text, margin):
    return "".join(margin + line if line.strip() else line for line in text.splitlines(True))


INDENTED_BODY = (
    "import torch\n"
    "s = '''\n"
    "text\n"
    "\n"
    "  more text\n"
    "'''\n"
    "x = torch.ones(3)  # a comment\n"
    "%time y = torch.zeros(2)\n"
    "!ls\n"
    "\n"
    "for i in range(2):\n"
    "    print(s, i)\n"
)


@pytest.mark.parametrize("margin", ["    ", "\t", "  "])
def test_uniformly_indented_cell_ports_with_its_margin(margin):
    cell = _indented(INDENTED_BODY, margin)
    flat = msmagic.port(INDENTED_BODY)
    result = msmagic.port(cell)
    assert result.source == cell
    assert result.code == _indented(flat.code, margin)
    out = result.code.split("\n")
    assert out[1:6] == cell.split("\n")[1:6]  # the string's lines, byte for byte
    assert out[-4:] == cell.split("\n")[-4:]
    assert f"{margin}%time y = mindspore.ops.zeros(2)" in out
    assert [e.before for e in result.edits] == [e.before for e in flat.edits]
    assert msmagic.port(result.code).code == result.code


def test_indented_cell_positions_include_the_margin():
    body = "import torch\nimport torch.nn as nn\nmodel = nn.Linear(3, 2)\nmodel.load_state_dict(torch.load(path))\n"
    flat = msmagic.port(body).unsupported
    shifted = msmagic.port(_indented(body, "   ")).unsupported
    assert flat and [(f.line, f.column + 3) for f in flat] == [(f.line, f.column) for f in shifted]
    with pytest.raises(PortSyntaxError) as err:
        msmagic.port("    import torch\n    x = torch.ones(3\n")
    assert (err.value.line, err.value.column) == (2, 19)


def test_indented_cell_with_crlf_and_leading_blank_line():
    cell = "\r\n    import torch\r\n    x = torch.ones(3)\r\n"
    assert msmagic.port(cell).code == "\r\n    import mindspore\r\n    x = mindspore.ops.ones(3)\r\n"


def test_unevenly_indented_cell_is_still_an_error():
    with pytest.raises(PortSyntaxError, match="unexpected indent|unindent"):
        msmagic.port("    import torch\n  x = torch.ones(3)\n")


@pytest.mark.parametrize("prefix", ["%time %timeit ", "%time %timeit -n 3 -r 2 ", "%timeit -q %time ",
                                    "%time %prun -q "])
def test_stacked_timing_magics(prefix):
    cell = f"import torch\n{prefix}x = torch.ones(3).sum()\ny = x\n"
    assert msmagic.port(cell).code == f"import mindspore\n{prefix}x = mindspore.ops.ones(3).sum()\ny = x\n"


# A thread that recurses through C code (json.dumps and repr of deeply nested lists)
# while deep cells are ported: under the interpreter's limit it gets RecursionError; had
# the port raised that limit, its ordinary 8 MiB stack would overflow (SIGSEGV).
OTHER_THREAD_RECURSES = r'''
import json, sys, threading
import msmagic

nested = []
for _ in range(300_000):
    nested = [nested]
cell = "import torch\nx = torch.ones(3)\ny = " + " + ".join(["x"] * 1500) + "\n"
ported = threading.Event()
seen = {"limits": set(), "recursion_errors": 0, "ported": 0}


def port():
    try:
        for _ in range(3):
            seen["ported"] += msmagic.port(cell).code.count(" + x") == 1499
    finally:
        ported.set()


def recurse():
    while not ported.is_set():
        seen["limits"].add(sys.getrecursionlimit())
        for dump in (json.dumps, repr):
            try:
                dump(nested)
            except RecursionError:
                seen["recursion_errors"] += 1


threading.stack_size(8 * 1024 * 1024)
recursing = threading.Thread(target=recurse)
threading.stack_size(0)
porting = threading.Thread(target=port)
recursing.start()
porting.start()
porting.join()
recursing.join()
print(seen["ported"], sorted(seen["limits"]), seen["recursion_errors"] > 0, sys.getrecursionlimit())
'''


def test_other_threads_keep_the_recursion_limit_while_a_deep_cell_ports(tmp_path):
    import os
    import subprocess

    script = tmp_path / "other_thread.py"
    script.write_text(OTHER_THREAD_RECURSES)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=600)
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    # all three ported; the other thread saw only the interpreter's limit and hit it
    assert done.stdout.split("\n")[-2] == "3 [1000] True 1000"
