"""The fuzz benchmark's instrument (``benchmarks/fuzz_cells.py``): its mutations meant to
keep a cell valid do (IPython's transform + compile is the reference), and its check of
bytes outside touched statements sees a changed line the port did not report."""

import os
import random
import subprocess
import sys

import pytest

from benchmarks import fuzz_cells as F
import msmagic

CELLS = [
    "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n"
    "# a model\nclass Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
    "        self.fc = nn.Linear(4, 8)  # layer\n        self.drop = nn.Dropout(0.1)\n\n"
    "    def forward(self, x):\n        return F.relu(self.fc(x))\n",
    "model = Net()\noptimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
    "for step in range(3):\n    x = torch.randn(2, 4)\n    loss = torch.nn.functional.mse_loss(\n"
    "        model(x), torch.zeros(2, 8)\n    )\n    optimizer.zero_grad()\n    loss.backward()\n"
    "    optimizer.step()\nprint(loss.item())",
    'x = torch.tensor([[1.0, 2.0]])\ny = torch.cat((x, x), 0)\ndoc = """\n  text\n"""\nz = F.softmax(y, dim=1)\n',
]

#: the mutations that keep a valid cell valid; ``indent_first`` does not (IPython removes a
#: margin only when every line has it) and ``token_random`` is not meant to
KEEPING = [name for phase in F.PHASES for name in phase if name != "indent_first"]


@pytest.mark.parametrize("name", KEEPING)
def test_mutation_keeps_the_cell_valid(name):
    applied = 0
    for cell in CELLS:
        assert F.ipython_python(cell) is not None
        for seed in range(8):
            out = F.MUTATIONS[name](cell, random.Random(seed))
            if out is None:
                continue
            applied += 1
            assert out != cell, (name, seed)
            assert F.ipython_python(out) is not None, (name, seed, out)
    assert applied, f"{name} applied to none of the sample cells"


def test_ipython_reference_checks_a_time_magic_body():
    assert F.ipython_python("%%time\nx = 1\n") is not None
    assert F.ipython_python("%%time\nx = = 1\n") is None
    assert F.ipython_python("    x = 1\ny = 2\n") is None  # first line indented more


def test_fuzz_cell_is_repeatable_for_a_seed():
    one = [F.fuzz_cell(CELLS[1], random.Random(7)) for _ in range(2)]
    assert one[0] == one[1]
    assert one[0][1] and all(k in F.MUTATIONS or k == "none" for k in one[0][1])


def test_the_same_seed_fuzzes_the_same_cells_in_another_process():
    """A before and an after run compare only when they fuzz the same cells: nothing may
    depend on the process's string hashing (PYTHONHASHSEED)."""
    script = ("import random, json; from benchmarks import fuzz_cells as F; "
              "from tests.fast.test_fuzz_mutations import CELLS; "
              "print(json.dumps([F.fuzz_cell(c, random.Random(s)) for s in range(20) for c in CELLS]))")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    outs = []
    for hash_seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed, "PYTHONPATH": root}
        outs.append(subprocess.run([sys.executable, "-c", script], cwd=root, env=env, text=True,
                                   capture_output=True, check=True).stdout)
    assert outs[0] == outs[1]


def test_changed_outside_sees_an_unreported_change():
    result = msmagic.port("import torch\n# keep me\nx = 1\ny = torch.sqrt(x)\n")
    assert F.changed_outside(result) == []
    result.code = result.code.replace("# keep me", "# kept?")
    assert F.changed_outside(result) == [2]


def test_comments_are_counted_whatever_the_line_ends():
    assert F.comments("a = 1  # one\r# two\rb = 2\r") == {"# one": 1, "# two": 1}
