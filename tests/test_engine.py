"""The port engine's mechanics: name resolution, formatting, IPython syntax, errors."""

import ast
import difflib
import textwrap

import pytest

import msmagic
from msmagic.engine.session import PortSession
from msmagic.errors import PortSyntaxError
from msmagic.parity_check import run_pair


def src(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


# ---------------------------------------------------------------- import forms

IMPORT_FORMS = [
    # (PyTorch cell, expected import line, expected construction)
    ("import torch\nlayer = torch.nn.Linear(4, 3)\n",
     "import mindspore\n", "mindspore.nn.Dense(4, 3"),
    ("import torch as T\nlayer = T.nn.Linear(4, 3)\n",
     "import mindspore as T\n", "T.nn.Dense(4, 3"),
    ("import torch.nn as nn\nlayer = nn.Linear(4, 3)\n",
     "import mindspore.nn as nn\n", "nn.Dense(4, 3"),
    ("from torch import nn\nlayer = nn.Linear(4, 3)\n",
     "from mindspore import nn\n", "nn.Dense(4, 3"),
    ("from torch.nn import Linear as L\nlayer = L(4, 3)\n",
     "from mindspore.nn import Dense as L\n", "L(4, 3"),
    ("from torch.nn import Linear\nlayer = Linear(4, 3)\n",
     "from mindspore.nn import Dense\n", "Dense(4, 3"),
]


@pytest.mark.parametrize("cell, import_line, construction", IMPORT_FORMS)
def test_import_forms_resolve_and_run(cell, import_line, construction):
    cell = "import numpy as np\n" + cell + (
        "import torch\nx = torch.tensor(np.arange(8, dtype=np.float32).reshape(2, 4))\n"
        "y = layer(x)\n"
    )
    run = run_pair(cell)
    assert import_line in run.port.code
    assert construction in run.port.code
    assert run.ms_error is None and run.torch_error is None, run.explain()
    assert run.agree("y", "layer.weight", "layer.bias"), run.explain()


def test_functional_module_alias():
    res = msmagic.port(
        "import torch\nfrom torch.nn import functional as F\nx = torch.ones(2)\ny = F.relu(x)\n"
    )
    assert "from mindspore import ops as F\n" in res.code
    assert "y = F.relu(x)\n" in res.code


def test_optimizer_from_import():
    res = msmagic.port("from torch.optim import SGD\n")
    assert res.code == "from mindspore.nn import SGD\n"
    assert [e.rule_id for e in res.edits] == ["IMP001"]


def test_module_without_counterpart_is_removed_keeping_comments():
    cell = src("""
        import torch.nn as nn
        # the optimizer module
        import torch.optim as optim
        opt = optim.SGD(nn.Linear(2, 2).parameters(), lr=0.1)
    """)
    res = msmagic.port(cell)
    assert "import torch.optim" not in res.code
    assert "# the optimizer module\nopt = nn.SGD(" in res.code


def test_added_import_goes_after_the_cells_imports_once():
    cell = src("""
        import numpy as np
        import torch.nn.functional as F
        a = F.relu
        b = F.relu
    """)
    res = msmagic.port(cell)
    assert res.code.count("import mindspore.ops as F") == 1
    ast.parse(res.code)


# ---------------------------------------------------------------- lookalikes


def test_user_variable_named_nn_is_left_alone():
    cell = src("""
        import types
        nn = types.SimpleNamespace(Linear=lambda a, b: (a, b))
        layer = nn.Linear(4, 3)
    """)
    res = msmagic.port(cell)
    assert res.code == cell
    assert res.edits == [] and res.unsupported == []


def test_os_rename_is_not_torch():
    cell = "import os\nimport torch\nos.rename('a', 'b')\nx = torch.ones(2)\n"
    res = msmagic.port(cell)
    assert "os.rename('a', 'b')\n" in res.code


def test_session_name_shadowed_by_cell_assignment():
    session = PortSession()
    session.learn("import torch.nn as nn")
    cell = "nn = object()\nlayer = nn.Linear(4, 3)\n"
    res = msmagic.port(cell, session=session)
    assert res.code == cell


def test_function_parameter_shadows_import():
    cell = src("""
        import torch.nn.functional as F
        def apply(F, x):
            return F.relu(x)
        y = F.relu
    """)
    res = msmagic.port(cell)
    assert "def apply(F, x):\n    return F.relu(x)\n" in res.code
    assert "import mindspore.ops as F" in res.code


def test_earlier_cells_imports_resolve_names():
    session = PortSession()
    session.learn("import torch\nimport torch.nn as nn\n%matplotlib inline")
    res = msmagic.port("layer = nn.Linear(4, 3)\n", session=session)
    assert res.code == "layer = nn.Dense(4, 3)\n"


# ---------------------------------------------------------------- formatting


def test_untouched_code_is_byte_for_byte():
    cell = src("""
        import torch   # the framework
        import torch.nn as nn


        def helper( a,b ):   # odd spacing stays
            '''Docstring stays.'''
            return a+b  # comment


        layer = nn.Linear(4,
                          3)  # wrapped call
        value = helper( 1,2 )
    """)
    res = msmagic.port(cell)
    changed_in = set()
    for tag, i1, i2, _, _ in difflib.SequenceMatcher(
        None, cell.splitlines(), res.code.splitlines()
    ).get_opcodes():
        if tag != "equal":
            changed_in.update(range(i1, i2))
    kept = [l for i, l in enumerate(cell.splitlines()) if i not in changed_in]
    for line in (
        "def helper( a,b ):   # odd spacing stays",
        "    '''Docstring stays.'''",
        "    return a+b  # comment",
        "value = helper( 1,2 )",
    ):
        assert line in kept
    assert "import mindspore   # the framework" in res.code
    assert "3)  # wrapped call" in res.code


def test_edit_line_ranges_cover_multiline_calls():
    cell = "import torch.nn as nn\nlayer = nn.Linear(\n    4,\n    3,\n)\n"
    res = msmagic.port(cell)
    edit = next(e for e in res.edits if e.api == "torch.nn.Linear")
    assert edit.before == (2, 5)
    assert edit.after[0] == 2 and edit.after[1] >= 5
    assert res.code.splitlines()[edit.after[0] - 1].startswith("layer = nn.Dense(")


def test_statement_links():
    cell = "import torch.optim as optim\nimport torch\nx = torch.ones(2, 2)\n"
    res = msmagic.port(cell)
    assert [s.index for s in res.statements] == [0, 1, 2]
    assert res.statements[0].after is None
    assert res.statements[2].before == (3, 3)
    out_line = res.code.splitlines()[res.statements[2].after[0] - 1]
    assert out_line.startswith("x = ")


# ---------------------------------------------------------------- IPython syntax


def test_ipython_syntax_survives_the_port():
    cell = src("""
        import torch
        %time x = torch.ones(2, 3)
        !echo hello
        x?
        files = !ls
        for i in range(2):
            %timeit y = torch.ones(2, 3)
    """)
    res = msmagic.port(cell)
    lines = res.code.splitlines()
    assert any(l.startswith("%time x = mindspore.ops.") for l in lines), res.code
    assert "!echo hello" in lines
    assert "x?" in lines
    assert "files = !ls" in lines
    assert any(l.startswith("    %timeit y = mindspore.ops.") for l in lines), res.code
    assert res.unsupported == []


def test_modulo_and_not_equal_continuations_are_python():
    cell = "import torch\nx = (3\n     % 2)\ny = (1\n     != 2)\n"
    res = msmagic.port(cell)
    assert res.code.endswith("x = (3\n     % 2)\ny = (1\n     != 2)\n")


# ---------------------------------------------------------------- no torch, idempotence


def test_cell_without_pytorch_is_unchanged_with_a_note():
    cell = "import numpy as np\nx = np.ones(3).sum()\n"
    res = msmagic.port(cell)
    assert res.code == cell
    assert res.edits == [] and res.unsupported == []
    assert any("No PyTorch" in n for n in res.notes)


def test_porting_ported_code_changes_nothing():
    cell = src("""
        import torch
        import torch.nn as nn
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 2)
            def forward(self, x):
                return self.fc(x).view(x.size(0), -1)
        net = Net()
        x = torch.zeros(3, 4)
        y = torch.special.airy_ai(x)
    """)
    once = msmagic.port(cell)
    twice = msmagic.port(once.code)
    assert twice.code == once.code
    assert twice.edits == []


# ---------------------------------------------------------------- findings and errors


def test_unmapped_api_is_kept_as_pytorch_and_flagged():
    cell = "import torch\nx = torch.ones(3)\ny = torch.special.airy_ai(x)\n"
    res = msmagic.port(cell)
    (finding,) = [f for f in res.unsupported if f.rule_id == "GEN001"]
    assert (finding.line, finding.column) == (3, 5)
    assert finding.api == "torch.special.airy_ai"
    assert "import torch  # msmagic:" in res.code
    flagged = res.code.splitlines()[finding.out_line - 1]
    assert flagged.startswith("y = torch.special.airy_ai(x)  # msmagic: GEN001")
    ast.parse(res.code)


def test_star_kwargs_are_flagged():
    res = msmagic.port("import torch.nn as nn\ncfg = {}\nlayer = nn.Linear(**cfg)\n")
    assert any(f.rule_id == "GEN003" for f in res.unsupported)
    assert "nn.Dense(**cfg)" in res.code


@pytest.mark.parametrize(
    "cell, line, col",
    [
        ("import torch\nx = (1,\n", 2, 5),
        ("x = 1\ndef f(:\n    pass\n", 2, 7),
        ("%time x = (\n", 1, 11),
    ],
)
def test_syntax_error_has_line_and_column(cell, line, col):
    with pytest.raises(PortSyntaxError) as info:
        msmagic.port(cell)
    assert (info.value.line, info.value.column) == (line, col)
    assert f"line {line}, column {col}" in str(info.value)


def test_non_string_input_is_a_type_error():
    with pytest.raises(TypeError):
        msmagic.port(b"import torch")


def test_added_imports_go_below_a_leading_cell_magic_line():
    res = msmagic.port("%%time\nimport torch\ny = torch.special.airy_ai(torch.ones(2))\n")
    assert res.code.splitlines()[0] == "%%time"
    assert "import torch  # msmagic:" in res.code
