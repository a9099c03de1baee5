"""The fast tier never imports torch or mindspore: porting is pure text. Checked in a
fresh interpreter, since this pytest process may have imported them for other tests."""

import os
import subprocess
import sys
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

SCRIPT = textwrap.dedent('''
    import sys
    import msmagic
    from msmagic.engine.session import PortSession
    from tests.fast import codemod
    import tests.fast.conftest as conftest

    session = PortSession()
    cells = [
        "import torch\\nimport torch.nn as nn\\nimport torch.nn.functional as F\\n",
        "model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Dropout(0.1))\\n"
        "optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)\\n"
        "for xb, yb in batches:\\n"
        "    optimizer.zero_grad()\\n"
        "    loss = F.cross_entropy(model(xb), yb)\\n"
        "    loss.backward()\\n"
        "    optimizer.step()\\n",
        "x = torch.tensor([1.0, 2.0], requires_grad=True)\\n"
        "y = (x ** 2).sum()\\ny.backward()\\ng = x.grad\\n",
        "torch.save(model.state_dict(), 'm.pt')\\ny = torch.einsum('ij->i', a)\\n",
    ]
    for cell in cells:
        msmagic.port(cell, session=session)
    codemod.assert_ports("import torch\\nx = torch.ones(2)\\n", "import mindspore\\nx = mindspore.ops.ones(2)\\n")
    loaded = conftest.imported_frameworks()
    assert not loaded, loaded
    print("ok")
''')


def test_porting_imports_neither_framework():
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip().endswith("ok")
