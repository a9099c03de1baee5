"""Every cell IPython runs is accepted: the shapes a fuzzer found refused (issue 21).

A cell is valid when IPython's own transform (``TransformerManager().transform_cell``)
followed by ``compile`` succeeds. Each shape below is generated with LF, CRLF and
lone-CR line ends, with and without a last line end, with and without an IPython line,
and every variant IPython accepts must port -- through ``msmagic.port``, through
``%%ms_port`` in a real IPython shell and through the CLI in a subprocess
(``tests/test_ipython_cells_cli.py``) -- to code
IPython accepts, that ports to itself, that has its torch statements rewritten and that
keeps every other line byte for byte, line end included. No framework is imported.
"""

from __future__ import annotations

import ast
import re
import unicodedata

import pytest
from IPython.core.inputtransformer2 import TransformerManager
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output

import msmagic
from msmagic.engine.ipython import mask, unmask
from msmagic.engine.session import PortSession

#: shape -> its lines; the lines naming torch outside a comment or string are rewritten,
#: every other line is kept byte for byte
SHAPES = {
    # IPython removes the margin all lines share: the first line may be indented more
    "first line indented more": ["        # note", "    import torch", "    x = torch.ones(2)", "    y = x + 1"],
    # with lone CR line ends IPython's dedent sees one line: the first line's margin goes
    "first statement indented more (CR)": ["    import torch", "x = torch.ones(2)", "y = x + 1"],
    "%%time over an indented body": ["%%time", "    import torch", "    x = torch.ones(2)", "    y = x + 1"],
    "%%time over a deeper first line": ["%%time", "      # note", "    import torch", "    x = torch.ones(2)"],
    "stacked cell magics over an indented body": ["%%time", "%%capture out", "  import torch", "  x = torch.ones(2)"],
    "help lines": ["import torch", "x = torch.ones(2)", "?x", "y = x + 1", "x?"],
    # CPython compares columns: a tab under a space indents further; libcst refused it
    "a tab under spaces": ["import torch", "if True:", " if True:", "\t x = torch.ones(2)", "\t y = x + 1", "z = 1"],
    "tabs then spaces": ["import torch", "if True:", "\tx = torch.ones(2)", "\tif x is not None:", "\t    y = x + 1"],
    "comments ending the cell": ["import torch", "if True:", "    x = torch.ones(2)", "    # a", "  # b", "# c"],
    "fullwidth names": ["import torch", "x = ｔｏｒｃｈ.ones(2)", "ｙ = ｘ + 1  # ｔｏｒｃｈ", "s = 'ｔｏｒｃｈ'"],
}
LINE_ENDS = {"LF": "\n", "CRLF": "\r\n", "CR": "\r"}
IPYTHON_LINE = "!echo hi"

_TM = TransformerManager()
_PARTS = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


#: cell magics that run their body as a cell: IPython transforms and compiles it then
_RUN_BODY = ("time", "timeit", "capture", "prun")


def ipython_runs(cell: str) -> bool:
    """IPython transforms and compiles the cell, and the body of a cell magic that runs
    it (``%%time``) too."""
    try:
        compile(_TM.transform_cell(cell), "<cell>", "exec")
    except (SyntaxError, ValueError):
        return False
    lines = cell.splitlines(keepends=True)  # as IPython's cell_magic splits the cell
    while lines and not lines[0].strip():
        lines.pop(0)
    magic = re.match(r"%%(\w+)", lines[0]) if lines else None
    if magic and magic.group(1) in _RUN_BODY:
        return ipython_runs("".join(lines[1:]))
    return True


def rewritten(line: str) -> bool:
    """Whether the port rewrites ``line``: it names torch (as Python reads names)
    outside a comment and a string."""
    code = line.split("#")[0].split("'")[0]
    return "torch" in unicodedata.normalize("NFKC", code)


def variants():
    """(id, cell, lines, line end) for every variant of every shape IPython runs."""
    out = []
    for shape, lines in SHAPES.items():
        valid = 0
        for end_name, end in LINE_ENDS.items():
            for last in ("end", "no end"):
                for extra in (False, True):
                    body = list(lines)
                    if extra:  # an IPython line above the last, at its indentation
                        indent = re.match(r"[ \t]*", body[-1]).group()
                        body.insert(len(body) - 1, indent + IPYTHON_LINE)
                    cell = end.join(body) + (end if last == "end" else "")
                    if ipython_runs(cell):
                        valid += 1
                        ident = f"{shape}-{end_name}-{last}" + ("-ipython" if extra else "")
                        out.append((ident, cell, body, end))
        assert valid, f"no variant of {shape!r} is valid for IPython: the shape tests nothing"
    return out


VARIANTS = variants()


def parts(text: str) -> list:
    """``text``'s lines, each with its line end."""
    return _PARTS.findall(text)


def assert_ported(source: str, code: str) -> None:
    """``code`` (the port of ``source``) runs in IPython, has its torch statements
    rewritten and keeps every other line of ``source`` byte for byte, in order."""
    assert ipython_runs(code), code
    assert "mindspore" in code, code
    for line in parts(code):
        assert not rewritten(line) or "mindspore" in line, (line, code)
    out = parts(code)
    at = 0
    for line in parts(source):
        if rewritten(line):
            continue
        assert line in out[at:], (line, code)
        at = out.index(line, at) + 1


def test_the_shapes_give_valid_variants_with_every_line_end():
    # the generated set holds CR, CRLF and LF cells of every shape IPython runs
    ends = {ident.split("-")[1] for ident, *_ in VARIANTS}
    assert ends == {"LF", "CRLF", "CR"}
    assert len(VARIANTS) >= 3 * len(SHAPES)


@pytest.mark.parametrize("ident,cell,lines,end", VARIANTS, ids=[v[0] for v in VARIANTS])
def test_port_accepts_what_ipython_runs(ident, cell, lines, end):
    code = msmagic.port(cell).code
    assert_ported(cell, code)
    assert msmagic.port(code).code == code


@pytest.mark.parametrize("end", LINE_ENDS.values(), ids=LINE_ENDS.keys())
def test_rewritten_lines_keep_their_place_and_line_end(end):
    cell = end.join(["        # note", "    import torch", "    x = torch.ones(2)", "    y = x + 1", ""])
    assert msmagic.port(cell).code == end.join(
        ["        # note", "    import mindspore", "    x = mindspore.ops.ones(2)", "    y = x + 1", ""])


def test_time_over_an_indented_body_keeps_the_body_margin():
    cell = "%%time\n    import torch\n    x = torch.ones(2)\n"
    assert msmagic.port(cell).code == "%%time\n    import mindspore\n    x = mindspore.ops.ones(2)\n"


def test_a_syntax_error_in_an_indented_time_body_is_where_the_user_sees_it():
    with pytest.raises(msmagic.PortSyntaxError) as err:
        msmagic.port("%%time\n    import torch\n    x = torch.ones(2,\n")
    # the "(" on line 3, counted with the margin IPython removed
    assert (err.value.line, err.value.column, err.value.message) == (3, 19, "'(' was never closed")


def test_a_tab_under_spaces_keeps_its_indentation_on_a_rewritten_line():
    cell = "import torch\nif True:\n if True:\n\t x = torch.ones(2)\n\t y = x\nz = 1\n"
    assert msmagic.port(cell).code == (
        "import mindspore\nif True:\n if True:\n\t x = mindspore.ops.ones(2)\n\t y = x\nz = 1\n")


def test_fullwidth_names_are_read_as_python_reads_them():
    cell = "import torch\nｘ = ｔｏｒｃｈ.ones(2)  # ｔｏｒｃｈ\nｙ = ｆ(ｔｏｒｃｈ.zeros(3), 'ｔｏｒｃｈ')\n"
    # the names the port writes are ASCII; the ones it leaves, comments and strings are as written
    assert msmagic.port(cell).code == (
        "import mindspore\nｘ = mindspore.ops.ones(2)  # ｔｏｒｃｈ\nｙ = ｆ(mindspore.ops.zeros(3), 'ｔｏｒｃｈ')\n")


def test_a_fullwidth_import_alias_is_the_module():
    cell = "import ｔｏｒｃｈ.nn as ｎｎ\nm = ｎｎ.Linear(2, 3)\n"
    assert msmagic.port(cell).code == "import mindspore.nn as ｎｎ\nm = ｎｎ.Dense(2, 3)\n"


def test_a_name_that_normalises_to_a_keyword_stays_a_name():
    cell = "import torch\nｉｍｐｏｒｔ = torch.ones(2)\n"
    assert msmagic.port(cell).code == "import mindspore\nｉｍｐｏｒｔ = mindspore.ops.ones(2)\n"


@pytest.mark.parametrize("end", LINE_ENDS.values(), ids=LINE_ENDS.keys())
@pytest.mark.parametrize("comments", [["# a", "    # c"], ["    # c"]], ids=["two", "one indented"])
def test_time_over_a_comment_only_body_ports_to_itself_in_a_session(comments, end):
    session = PortSession()
    session.learn("import torch\n")
    cell = end.join(["%%time", *comments, ""])
    code = cell
    for _ in range(3):  # each port of the output used to add one placeholder line
        code = msmagic.port(code, session=session).code
        assert code == cell


# ------------------------------------------------------------------ %%ms_port in a shell


@pytest.fixture
def ip():
    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "msmagic")
    yield shell
    shell.run_line_magic("unload_ext", "msmagic")
    shell.config.pop("MsMagic", None)


def _ms_port(ip, cell: str, end: str):
    with capture_output():
        result = ip.run_cell(f"%%ms_port -o r --quiet{end}{cell}")
    assert result.success, result.error_in_exec or result.error_before_exec
    return ip.user_ns.pop("r")


@pytest.mark.parametrize("ident,cell,lines,end", VARIANTS, ids=[v[0] for v in VARIANTS])
def test_ms_port_accepts_what_ipython_runs(ip, ident, cell, lines, end):
    r = _ms_port(ip, cell, end)
    # the body IPython hands the magic (it adds a last "\n" when the cell has none)
    assert r.source in (cell, cell + "\n")
    assert_ported(r.source, r.code)
    assert _ms_port(ip, r.code, end).code == r.code


def test_ms_port_over_time_over_a_comment_only_body_leaks_no_placeholder(ip):
    _ms_port(ip, "import torch\n", "\n")
    cell = "%%time\n# a\n    # c\n"
    for _ in range(3):
        assert _ms_port(ip, cell, "\n").code == cell


@pytest.mark.parametrize("help_line", ["?x", "x?", "x??", "?x.shape"])
def test_help_lines_ending_in_cr_are_set_aside(help_line):
    # what parity and the session's import learning read: the cell as written
    cell = f"import torch\r\n{help_line}\r\nx = 1\r\n"
    masked = mask(cell)
    assert masked.restore == {"__msmagic_ipython_0__": help_line + "\r"}
    ast.parse(masked.text)
    assert unmask(masked.text, masked) == cell


def test_a_lone_cr_cell_whose_first_line_is_indented_more_gets_a_line_written_above_it():
    """IPython dedents a lone-CR cell's first line alone. When the port writes a line
    above that first line (an import the port needs), the first line is no longer first:
    it goes to the margin with the rest, and the new line is not indented either (before,
    both kept the first line's indentation and IPython read an unexpected indent)."""
    session = PortSession()
    msmagic.port("import torch\nimport torch.nn as nn\n", session=session)
    cell = "\r".join(["  class A(nn.Module):", "    def __init__(self):", "        super().__init__()",
                      "        self.e = nn.Embedding(3, 4)", ""])
    assert ipython_runs(cell)
    code = msmagic.port(cell, session=session).code
    assert ipython_runs(code), code
    assert code.split("\r")[:2] == ["from mindspore.common.initializer import Normal", "class A(nn.Cell):"]
    assert code.split("\r")[2:4] == ["    def __init__(self):", "        super().__init__()"]
