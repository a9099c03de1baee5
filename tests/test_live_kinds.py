"""The live namespace's objects and static inference give a name the same kind where
both answer (``msmagic.live``): a notebook's cells run for real in an IPython shell,
the same cells are ported with one session, and every name both can type is compared.
A name only the live namespace can type (bound by a plain cell the port never saw)
ports as the object it holds."""

import textwrap

import pytest

import msmagic
from msmagic.engine.session import PortSession
from msmagic.live import live_kind

CELLS = [
    """
    import numpy as np
    import torch
    import torch.nn as nn
    from torch.utils.data import DataLoader, TensorDataset
    """,
    """
    x = torch.randn(8, 4)
    y = torch.randint(0, 3, (8,))
    w = torch.zeros(4, 3, requires_grad=True)
    arr = np.random.rand(3, 2)
    arr2 = np.zeros(5)
    params = [torch.randn(2), torch.randn(3)]
    ds = TensorDataset(x, y)
    loader = DataLoader(ds, batch_size=4)
    """,
    """
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 3)
        def forward(self, x):
            return self.fc(x)
    net = Net()
    seq = nn.Sequential(nn.Linear(4, 3), nn.ReLU())
    lin = nn.Linear(4, 3)
    loss_fn = nn.CrossEntropyLoss()
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1)
    out = net(x)
    """,
]


@pytest.fixture
def shell():
    from IPython.core.interactiveshell import InteractiveShell

    sh = InteractiveShell.instance()
    sh.reset(new_session=False)
    yield sh
    sh.reset(new_session=False)


def test_static_and_live_kinds_agree_where_both_answer(shell):
    session = PortSession()
    for cell in CELLS:
        cell = textwrap.dedent(cell)
        assert shell.run_cell(cell).success
        msmagic.port(cell, session=session)
    both = 0
    for name, static in session.kinds.items():
        live = live_kind(shell.user_ns, name)
        if static is None or live is None:
            continue
        both += 1
        assert str(static) == live, (name, static, live)
    assert both >= 14, both
    # and the live namespace types what static inference leaves unknown
    assert live_kind(shell.user_ns, "out") == "tensor"


def test_a_name_a_plain_cell_bound_ports_as_the_object_it_holds(shell):
    shell.run_line_magic("load_ext", "msmagic")
    try:
        shell.run_cell("import torch\nimport numpy as np\nt = torch.ones(2, 3)\na = np.ones((2, 3))",
                       store_history=True)
        shell.run_cell("%%ms_port -o r --quiet\nu = t[range(2)]\nb = a[range(2)]\nv = t.transpose(0, 1)\n",
                       store_history=True)
        r = shell.user_ns["r"]
    finally:
        shell.run_line_magic("unload_ext", "msmagic")
    assert "u = t[list(range(2))]" in r.code  # a tensor: the index is ported
    assert "b = a[range(2)]" in r.code  # a NumPy array: left as it is
    assert "t.swapaxes(0, 1)" in r.code
    assert not r.unsupported, r.unsupported
