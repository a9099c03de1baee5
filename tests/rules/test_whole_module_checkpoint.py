"""CKP006, executed: a whole module saved with ``torch.save(model, f)`` and loaded back
into the same name (PyTorch's word-language-model example restores its best model this
way). The port saves the Cell's parameters and loads them into the Cell the name holds;
the restored model computes what PyTorch's restored model computes, under the spellings
and in the places real code uses. A module loaded into another name stays flagged."""

import pytest

import msmagic
from msmagic.engine.session import PortSession
from tests.rules.support import parity_cells, run_pair, src

SETUP = src("""
    import os
    import tempfile
    import torch
    import torch.nn as nn

    def make():
        return nn.Sequential(nn.Embedding(10, 4), nn.Linear(4, 6), nn.ReLU(), nn.Linear(6, 10))

    save_path = os.path.join(tempfile.mkdtemp(), "model.pt")
    torch.manual_seed(0)
    model = make()
    x = torch.randint(0, 10, (5, 2))
""")

# a class of the notebook's own: pickle finds it in the notebook's ``__main__`` (the
# magics' namespace), not in run_pair's namespaces
NET = src("""
    import os
    import tempfile
    import torch
    import torch.nn as nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = nn.Embedding(10, 4)
            self.rnn = nn.LSTM(4, 6)
            self.decoder = nn.Linear(6, 10)

        def forward(self, x):
            out, _ = self.rnn(self.encoder(x))
            return self.decoder(out)

    def make():
        return Net()

    save_path = os.path.join(tempfile.mkdtemp(), "model.pt")
    torch.manual_seed(0)
    model = make()
    x = torch.randint(0, 10, (5, 2))
""")

SAVE = {
    "file": "with open(save_path, 'wb') as f:\n    torch.save(model, f)\n",
    "keywords": "with open(save_path, 'wb') as f:\n    torch.save(obj=model, f=f)\n",
    "path": "torch.save(model, save_path)\n",
}
LOAD = {
    "file": "with open(save_path, 'rb') as f:\n    model = torch.load(f, weights_only=False)\n",
    "keywords": "with open(save_path, 'rb') as f:\n    model = torch.load(f=f, weights_only=False)\n",
    "path": "model = torch.load(save_path, weights_only=False)\n",
}
# the model changes between saving and loading: a new model with other weights
CHANGE = "saved = model(x)\nmodel = make()\nchanged = model(x)\n"
AFTER = "restored = model(x)\n"


@pytest.mark.parametrize("spelling", sorted(SAVE))
def test_a_whole_module_loaded_back_into_its_name_is_the_saved_module(spelling):
    source = SETUP + SAVE[spelling] + CHANGE + LOAD[spelling] + AFTER
    result = msmagic.port(source)
    assert "CKP006" in {e.rule_id for e in result.edits}
    assert not {f.rule_id for f in result.unsupported} & {"CKP001", "CKP004"}, result.unsupported
    run = run_pair(source, rtol=1e-5, atol=1e-6)
    assert run.torch_error is None and run.ms_error is None, run.explain()
    assert run.agree("saved", "restored"), run.explain()
    import numpy as np

    from msmagic.parity_check import to_numpy
    np.testing.assert_allclose(to_numpy(run.ms_ns["restored"]), to_numpy(run.ms_ns["saved"]), rtol=1e-6)
    assert np.abs(to_numpy(run.ms_ns["changed"]) - to_numpy(run.ms_ns["saved"])).max() > 1e-3


def test_saved_in_one_cell_and_loaded_in_a_later_one(parity_shell):
    """The training cell saves the best model, a later cell restores it (under
    ``%%ms_parity``, as the example's notebook form runs)."""
    reports, _ = parity_cells(parity_shell, [NET, SAVE["file"] + CHANGE, LOAD["file"] + AFTER])
    assert reports[2].row("restored").status == "match"
    assert "CKP006" in {e.rule_id for e in reports[2].port.edits}


def test_a_whole_module_saved_and_loaded_inside_functions():
    """morvan's save/restore tutorial shape with the same name: functions that save and
    restore the global model."""
    source = SETUP + src("""
        def save():
            torch.save(model, save_path)

        def restore():
            global model
            model = torch.load(save_path, weights_only=False)

        save()
        saved = model(x)
        model = make()
        restore()
        restored = model(x)
    """)
    result = msmagic.port(source)
    assert [e.rule_id for e in result.edits].count("CKP006") == 2 and not result.unsupported, result.unsupported
    run = run_pair(source, rtol=1e-5, atol=1e-6)
    assert run.torch_error is None and run.ms_error is None, run.explain()
    assert run.agree("saved", "restored"), run.explain()


def test_a_whole_module_loaded_into_another_name_stays_flagged():
    """``net2 = torch.load(...)`` has no Cell to load into (morvan's restore_net)."""
    session = PortSession()
    msmagic.port(SETUP + SAVE["path"], session=session)
    result = msmagic.port("net2 = torch.load(save_path, weights_only=False)\n", session=session)
    assert "CKP001" in {f.rule_id for f in result.unsupported}
    assert "CKP006" not in {e.rule_id for e in result.edits}


MORVAN = src("""
    import torch
    torch.manual_seed(1)
    x = torch.unsqueeze(torch.linspace(-1, 1, 20), dim=1)
    y = x.pow(2)

    def save():
        net1 = torch.nn.Sequential(
            torch.nn.Linear(1, 10),
            torch.nn.ReLU(),
            torch.nn.Linear(10, 1)
        )
        optimizer = torch.optim.SGD(net1.parameters(), lr=0.5)
        for t in range(5):
            loss = torch.nn.functional.mse_loss(net1(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        torch.save(net1, 'net.pkl')  # save entire net
        return net1(x)

    def restore_net():
        net2 = torch.load('net.pkl', weights_only=False)
        return net2(x)
""")


def test_a_whole_module_restored_into_another_name_is_built_again(tmp_path, monkeypatch):
    """morvan's save/reload tutorial: the net is built, trained and saved whole in one
    function and restored into another name in another: the saved module's constructor
    (PyTorch layers and literals only) builds the Cell the parameters are loaded into."""
    monkeypatch.chdir(tmp_path)
    source = MORVAN + "trained = save()\nrestored = restore_net()\n"
    result = msmagic.port(source)
    assert [e.rule_id for e in result.edits].count("CKP006") == 2 and not result.unsupported, result.unsupported
    assert "net2 = load_into(mindspore.nn.SequentialCell(" in result.code
    run = run_pair(source, rtol=1e-5, atol=1e-6)
    assert run.torch_error is None and run.ms_error is None, run.explain()
    assert run.agree("trained", "restored"), run.explain()


def test_a_module_built_by_another_file_name_is_not_built_again():
    """The restore reads another file than the one the module was saved to: nothing says
    which architecture it holds; flagged."""
    result = msmagic.port(MORVAN.replace("torch.load('net.pkl'", "torch.load('other.pkl'"))
    assert "CKP001" in {f.rule_id for f in result.unsupported}
    assert "net2 = load_into(" not in result.code
