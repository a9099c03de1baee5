"""Help from every form a user types, and syntax errors placed as the editor shows them.

`%%ms_port -h` with or without a body, `%ms_port -h` as a line magic, `%%ms_port?` and
`%ms_port?`, the same for %%ms_parity and %ms_shadow, run through a real IPython shell
(and a real kernel through nbclient); the text checked is what the user sees.
"""

from __future__ import annotations

import os
import re

import nbformat
import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output

from msmagic.errors import PortSyntaxError, source_excerpt
from msmagic.magics import _give_empty_cells_a_body

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

USAGE = {
    "ms_port": "%%ms_port [-h] [--insert] [-o NAME] [--view {split,unified}] [--quiet]",
    "ms_parity": "%%ms_parity [-h] [--device {CPU,GPU,Ascend}] [--rtol FLOAT]",
    "ms_shadow": "%ms_shadow [-h] [--clear] [name]",
}
OPTIONS = {
    "ms_port": ("--insert", "-o NAME, --output NAME", "--view", "--quiet", "-h, --help"),
    "ms_parity": ("--device", "--rtol FLOAT", "--atol FLOAT", "--seed INT", "--timeout SECONDS",
                  "--no-sync", "--against VAR", "-o NAME, --output NAME", "-h, --help"),
    "ms_shadow": ("--clear", "name", "-h, --help"),
}


@pytest.fixture
def ip(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "msmagic")
    yield shell
    shell.run_line_magic("unload_ext", "msmagic")


def run(ip, cell, store_history=False):
    with capture_output() as c:
        result = ip.run_cell(cell, store_history=store_history)
    return result, c


def assert_help(name, text):
    assert text.lstrip().startswith(USAGE[name]), text[:200]
    for option in OPTIONS[name]:
        assert option in text, option


# ----------------------------------------------------------------------------- help


@pytest.mark.parametrize("name", ["ms_port", "ms_parity"])
@pytest.mark.parametrize("cell", [
    "%%{name} -h",                                   # nothing below the magic line
    "%%{name} -h\n",
    "%%{name} --help\n\n",
    "%%{name} -h\nran_the_cell = 1\n",               # with a body: the body is not run
    "%%{name} -o out --help\nran_the_cell = 1\n",     # -h among other options
    "%{name} -h",                                    # as a line magic
    "%{name} --help",
    "\n%%{name} -h",                                 # a blank line above the magic
])
def test_every_help_form_prints_the_help_and_runs_nothing(ip, name, cell):
    result, c = run(ip, cell.format(name=name))
    assert result.success, result.error_in_exec
    assert_help(name, c.stdout)
    assert c.stderr == "" and c.outputs == []
    assert "ran_the_cell" not in ip.user_ns and "out" not in ip.user_ns


@pytest.mark.parametrize("cell", ["%ms_shadow -h", "%ms_shadow --help", "%%ms_shadow -h", "%%ms_shadow -h\nx\n"])
def test_shadow_help_in_both_forms(ip, cell):
    result, c = run(ip, cell)
    assert result.success and c.stderr == ""
    assert_help("ms_shadow", c.stdout)


@pytest.mark.parametrize("name, cell", [
    ("ms_port", "%%ms_port?"), ("ms_port", "%ms_port?"),
    ("ms_parity", "%%ms_parity?"), ("ms_parity", "%ms_parity?"),
    ("ms_shadow", "%ms_shadow?"),
])
def test_question_mark_shows_the_argument_list(ip, name, cell):
    result, c = run(ip, cell)
    assert result.success
    shown = re.sub(r"\x1b\[[0-9;]*m", "", c.stdout)  # IPython colours the headings
    assert "not found" not in shown
    # IPython's page: "Docstring:", the usage as a reST block ("::"), the docstring, the options
    assert_help(name, shown.partition("Docstring:")[2].replace("::\n", "", 1))


@pytest.mark.parametrize("cell, message", [
    ("%ms_port", "%ms_port is a cell magic: put %%ms_port (two %) on the first line of a cell, "
                 "with the PyTorch code to port below it; %ms_port -h lists the options"),
    ("%ms_port -o r", "%ms_port is a cell magic: put %%ms_port (two %) on the first line of a cell, "
                      "with the PyTorch code to port below it; %ms_port -h lists the options"),
    ("%ms_parity --seed 1", "%ms_parity is a cell magic: put %%ms_parity (two %) on the first line of a "
                            "cell, with the PyTorch code to run below it; %ms_parity -h lists the options"),
    ("%%ms_shadow\nx\n", "%ms_shadow is a line magic (one %): write %ms_shadow, %ms_shadow NAME or "
                         "%ms_shadow --clear on a line of its own; %ms_shadow -h lists the options"),
    ("%%ms_port", "%%ms_port: the cell is empty; put the PyTorch code to port below the %%ms_port line"),
    ("%%ms_port -o r\n\n", "%%ms_port: the cell is empty; put the PyTorch code to port below the %%ms_port line"),
    ("%%ms_parity", "%%ms_parity: the cell is empty; put the PyTorch code to run below the %%ms_parity line"),
])
def test_the_wrong_form_says_in_one_line_how_to_use_it(ip, cell, message):
    result, c = run(ip, cell)
    assert isinstance(result.error_in_exec, UsageError)
    assert c.stderr == f"UsageError: {message}\n"
    assert c.stdout == "" and "r" not in ip.user_ns


def test_a_terminal_still_waits_for_the_lines_below_a_magic_line(ip):
    check = ip.input_transformer_manager.check_complete
    for typed in ("%%ms_port", "%%ms_port -h", "%%ms_parity\n"):
        assert check(typed) == check("%%time\n") == ("incomplete", 0), typed


def test_unload_takes_the_empty_cell_handling_away(ip):
    ip.run_line_magic("unload_ext", "msmagic")
    try:
        result, c = run(ip, "%%ms_port -h")
        assert isinstance(result.error_in_exec, UsageError)
        assert "Cell magic `%%ms_port` not found" in c.stderr
        assert _give_empty_cells_a_body not in ip.input_transformers_cleanup
    finally:
        ip.run_line_magic("load_ext", "msmagic")


# ----------------------------------------------------------------------------- syntax errors


# (cell, whether IPython keeps it in the history as a kernel does, what the user sees)
SYNTAX_CASES = [
    ("%%ms_port\nimport torch\nx = 1\ny = (1, \n", False,
     "line 4, column 5: '(' was never closed\n    y = (1, \n        ^"),
    ("%%ms_port\nimport torch\nx = 1\ny = (1, \n", True,
     "line 4, column 5: '(' was never closed\n    y = (1, \n        ^"),
    # an indented body: the column is the editor's
    ("%%ms_port\n    x = 1\n    y = (\n", True,
     "line 3, column 9: '(' was never closed\n        y = (\n            ^"),
    # a line number inside CPython's message moves too
    ("%%ms_port\nif x:\nprint(1)\n", False,
     "line 3, column 1: expected an indented block after 'if' statement on line 2\n    print(1)\n    ^"),
    ("%%ms_port\nx = [1, 2\ny = 3)\n", True,
     "line 3, column 6: closing parenthesis ')' does not match opening parenthesis '[' on line 2\n"
     "    y = 3)\n         ^"),
    # %%time below %%ms_port is part of the ported cell
    ("%%ms_port\n%%time\nx = 1\nx = (2,\n", True,
     "line 4, column 5: '(' was never closed\n    x = (2,\n        ^"),
    # %%time above %%ms_port, blank lines above it, a whole cell indented: found in the
    # cell as the kernel keeps it
    ("%%time\n%%ms_port\nx = (1,\n", True,
     "line 3, column 5: '(' was never closed\n    x = (1,\n        ^"),
    ("\n\n%%ms_port\nx = 1\nx = )\n", True,
     "line 5, column 5: unmatched ')'\n    x = )\n        ^"),
    ("  %%ms_port\n  x = 1\n  x = )\n", True,
     "line 3, column 7: unmatched ')'\n      x = )\n          ^"),
    # a tab before the column is kept in the caret line, so the caret lines up
    ("%%ms_port\nif x:\n\ty = (1,\n", True,
     "line 3, column 6: '(' was never closed\n    \ty = (1,\n    \t    ^"),
    ("%%ms_parity\nimport torch\nx = torch.ones(2,\n", True,
     "line 3, column 15: '(' was never closed\n    x = torch.ones(2,\n                  ^"),
]


@pytest.mark.parametrize("cell, store_history, shown", SYNTAX_CASES)
def test_syntax_errors_give_the_editors_line_and_a_caret(ip, cell, store_history, shown):
    result, c = run(ip, cell, store_history)
    assert isinstance(result.error_in_exec, UsageError)
    assert str(result.error_in_exec) == shown
    assert c.stderr.endswith(f"UsageError: {shown}\n")
    assert "Traceback" not in c.stdout + c.stderr and c.outputs == []


def test_without_a_kept_input_the_body_follows_the_magic_line(ip):
    # a run IPython does not keep in its history (ip.run_cell's default): the position
    # cannot count lines above the %%ms_port line, so it counts the magic line only
    result, _ = run(ip, "%%time\n%%ms_port\nx = (1,\n", store_history=False)
    assert str(result.error_in_exec).startswith("line 2, column 5: '(' was never closed")


def test_moved_error_keeps_the_message_and_shifts_its_line_numbers():
    err = PortSyntaxError("'(' on line 1 does not match ']' on line 3", 3, 4)
    moved = err.moved(2, 1)
    assert (moved.line, moved.column) == (5, 5)
    assert moved.message == "'(' on line 3 does not match ']' on line 5"
    assert err.moved() is err


def test_source_excerpt_cuts_long_lines_around_the_column():
    line = "x = f(" + ", ".join(f"a{i}" for i in range(100)) + ", ]"
    column = len(line)  # the "]"
    text, caret = source_excerpt(line, column).split("\n")
    assert text.startswith("    ...") and len(text) <= 4 + 3 + 100
    assert text[caret.index("^")] == "]"
    text, caret = source_excerpt("y = 1", 1).split("\n")
    assert (text, caret) == ("    y = 1", "    ^")
    assert source_excerpt("   ", 2) == ""


# ----------------------------------------------------------------------------- in a kernel


def test_help_and_syntax_errors_in_a_real_kernel(tmp_path, monkeypatch):
    """What a notebook user sees: nbclient runs the cells in a real kernel."""
    pytest.importorskip("nbclient")
    from nbclient import NotebookClient

    monkeypatch.setenv("PYTHONPATH", ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(s) for s in [
        "%load_ext msmagic",
        "%%ms_port -h",
        "%ms_parity -h",
        "%ms_port",
        "%%time\n%%ms_port\nimport torch\nx = (1,\n",
        "  %%ms_port\n  x = 1\n  y = )\n",
    ]]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    NotebookClient(nb, timeout=120, kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": str(tmp_path)}}).execute()

    def streams(cell, name):
        return "".join(o.text for o in cell.outputs if o.output_type == "stream" and o.name == name)

    assert_help("ms_port", streams(nb.cells[1], "stdout"))
    assert_help("ms_parity", streams(nb.cells[2], "stdout"))
    assert streams(nb.cells[1], "stderr") == streams(nb.cells[2], "stderr") == ""
    assert streams(nb.cells[3], "stderr").startswith("UsageError: %ms_port is a cell magic: put %%ms_port")
    # the kernel keeps each cell: the %%time line above counts, as in the editor
    assert streams(nb.cells[4], "stderr") == \
        "UsageError: line 4, column 5: '(' was never closed\n    x = (1,\n        ^\n"
    assert streams(nb.cells[5], "stderr") == "UsageError: line 3, column 7: unmatched ')'\n      y = )\n          ^\n"
