"""Property-based: any Python cell ports without crashing, to parseable, stable code."""

import ast
import textwrap

import hypothesmith
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import msmagic
from msmagic.errors import PortSyntaxError

TORCH_LINES = [
    "import torch",
    "import torch.nn as nn",
    "import torch.nn.functional as F",
    "from torch import optim",
    "x = torch.randn(4, 3)",
    "y = x.view(x.size(0), -1).permute(1, 0)",
    "m = nn.Linear(3, 2, bias=False)",
    "o = optim.SGD(m.parameters(), lr=0.1)",
    "z = F.softmax(x, dim=1).sum(dim=0, keepdim=True)",
    "class Net(nn.Module):\n    def forward(self, x):\n        return F.relu(x)",
    "m.eval()",
    "a = x.detach().cpu().numpy()",
    "%time b = torch.cat([x, x], dim=1)",
    "!echo hi",
    "q = torch.special.airy_ai(x)",
    "w = nn.Conv2d(3, 8, 3, padding='same')",
    "if x.size(0) > 2:\n    x = x.transpose(0, 1)",
    "for step in range(2):\n    o.zero_grad()\n    loss = m(x).sum()\n    loss.backward()\n    o.step()",
    "with torch.no_grad():\n    y = m(x)",
    "w = torch.tensor(1.0, requires_grad=True)\nq = w ** 2\nq.backward()\ng = w.grad",
    "s = torch.optim.lr_scheduler.StepLR(o, step_size=1)\ns.step()",
    "from torch.utils.data import TensorDataset, DataLoader\ndl = DataLoader(TensorDataset(x), batch_size=2)",
    "torch.save(m.state_dict(), 'm.pt')",
]

pytestmark = pytest.mark.filterwarnings("ignore::SyntaxWarning")

SETTINGS = settings(
    max_examples=150, deadline=None, suppress_health_check=list(HealthCheck)
)


def check(cell: str) -> None:
    try:
        once = msmagic.port(cell)
    except PortSyntaxError:
        return
    # a uniformly indented cell stays indented (IPython dedents it before running it)
    ast.parse(textwrap.dedent(_python_only(once.code)))
    twice = msmagic.port(once.code)
    assert twice.code == once.code


def _python_only(code: str) -> str:
    from msmagic.engine.ipython import mask

    return mask(code).text


@SETTINGS
@given(hypothesmith.from_grammar())
def test_generated_python_ports(cell):
    check(cell)


@SETTINGS
@given(st.lists(st.sampled_from(TORCH_LINES), min_size=1, max_size=12))
def test_mixed_torch_cells_port(lines):
    check("\n".join(lines) + "\n")


@SETTINGS
@given(
    st.lists(st.sampled_from(TORCH_LINES), min_size=1, max_size=8),
    st.integers(min_value=0, max_value=400),
    st.sampled_from(["", "(", ")", ":", "\n    ", "#", "'", "%", "!", "?", "\\"]),
)
def test_mutated_cells_never_crash(lines, position, junk):
    cell = "\n".join(lines) + "\n"
    position = position % (len(cell) + 1)
    check(cell[:position] + junk + cell[position:])
