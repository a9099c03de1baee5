"""Checkpoints: the cell saves to and loads from files under the test's tmp_path (bound
as ``path`` on both sides); after the round trip the loaded model has the saved
parameters and computes the same outputs as PyTorch's (rtol 1e-5, atol 1e-6)."""

import ast
import os

import numpy as np

import msmagic
from msmagic.parity_check import run_pair
from tests.rules.support import findings, rules, src

HEAD = "import torch\nimport torch.nn as nn\n"


def _pair(body, path, **kw):
    """``path`` on each side lies in its own folder: the two sides run statement by
    statement in turn and must not overwrite each other's file."""
    sides = {}
    for side in ("torch", "ms"):
        (path.parent / side).mkdir(exist_ok=True)
        sides[side] = {"path": str(path.parent / side / path.name)}
    run = run_pair(HEAD + src(body), torch_ns=sides["torch"], ms_ns=sides["ms"], **kw)
    assert run.torch_error is None and run.ms_error is None, run.explain()
    ast.parse(run.port.code)
    return run


def _same_params(ms_a, ms_b):
    a, b = dict(ms_a.parameters_and_names()), dict(ms_b.parameters_and_names())
    assert a.keys() == b.keys()
    return all(np.array_equal(a[k].asnumpy(), b[k].asnumpy()) for k in a)


def test_save_load_round_trip_linear(tmp_path):
    run = _pair("""
        src = nn.Linear(4, 3)
        torch.save(src.state_dict(), path)
        dst = nn.Linear(4, 3)
        before = dst(torch.ones(2, 4))
        dst.load_state_dict(torch.load(path))
        out = dst(torch.ones(2, 4))
    """, tmp_path / "model.pt")
    assert run.agree("out", "dst.weight", "dst.bias", "before"), run.explain()
    assert _same_params(run.ms_ns["src"], run.ms_ns["dst"])
    assert not np.allclose(run.torch_ns["before"].detach().numpy(), run.torch_ns["out"].detach().numpy())
    code = run.port.code
    assert "mindspore.save_checkpoint(src, path)" in code
    assert "mindspore.load_param_into_net(dst, mindspore.load_checkpoint(path if path.endswith('.ckpt') " \
           "else path + '.ckpt'), strict_load=True)" in code
    assert {"CKP001", "CKP002", "CEL006"} <= rules(run)
    assert (tmp_path / "ms" / "model.pt.ckpt").exists()  # MindSpore's own suffix


def test_round_trip_with_batchnorm_two_step_load(tmp_path):
    # running statistics are saved as moving_mean/moving_variance and restored
    run = _pair("""
        net = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))
        x = torch.arange(15.).reshape(5, 3) / 7
        y_train = net(x)
        torch.save(net.state_dict(), path)
        fresh = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))
        state = torch.load(path, map_location="cpu", weights_only=True)
        result = fresh.load_state_dict(state, strict=False)
        fresh.eval()
        y_eval = fresh(x)
        mean = fresh[1].running_mean
    """, tmp_path / "bn.ckpt", atol=1e-5)  # BatchNorm outputs are O(1)
    assert run.agree("y_train", "y_eval", "mean"), run.explain()
    assert _same_params(run.ms_ns["net"], run.ms_ns["fresh"])
    assert not np.allclose(run.torch_ns["mean"].numpy(), 0)
    assert "mindspore.load_checkpoint(path if" in run.port.code  # a variable: suffix at run time
    assert "map_location" not in run.port.code and "weights_only" not in run.port.code


def test_literal_file_name_gets_the_suffix(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    run = _pair("""
        a = nn.Linear(2, 2)
        torch.save(a.state_dict(), "weights.pth")
        b = nn.Linear(2, 2)
        b.load_state_dict(torch.load("weights.pth"))
        kept = nn.Linear(2, 2)
        torch.save(kept.state_dict(), "kept.ckpt")
    """, tmp_path / "unused")
    assert run.agree("b.weight", "b.bias"), run.explain()
    code = run.port.code
    assert "mindspore.save_checkpoint(a, 'weights.pth.ckpt')" in code
    assert "mindspore.load_checkpoint('weights.pth.ckpt')" in code
    assert 'mindspore.save_checkpoint(kept, "kept.ckpt")' in code  # already .ckpt: unchanged
    assert (tmp_path / "weights.pth.ckpt").exists() and (tmp_path / "kept.ckpt").exists()


def test_dict_of_tensors(tmp_path):
    run = _pair("""
        w = torch.arange(6.).reshape(2, 3)
        b = torch.ones(3)
        torch.save({"w": w, "b": b}, path)
        w2 = torch.load(path)["w"]
    """, tmp_path / "tensors.pt")
    assert run.agree("w2"), run.explain()
    assert 'mindspore.save_checkpoint([{"name": "w", "data": w}, {"name": "b", "data": b}], path)' \
        in run.port.code


def test_optimizer_state_round_trip(tmp_path):
    run = _pair("""
        model = nn.Linear(2, 1)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
        torch.save(optimizer.state_dict(), path)
        sd = optimizer.state_dict()
        restored = torch.optim.SGD(model.parameters(), lr=0.5, momentum=0.9)
        restored.load_state_dict(torch.load(path))
        lr = restored.param_groups[0]["lr"]
    """, tmp_path / "opt.pt")
    assert run.agree("lr"), run.explain()
    assert abs(run.torch_ns["lr"] - 0.01) < 1e-9
    code = run.port.code
    assert "mindspore.save_checkpoint(optimizer, path)" in code
    assert "sd = optimizer.parameters_dict()" in code
    assert "mindspore.load_param_into_net(restored, mindspore.load_checkpoint(" in code
    assert "CKP003" in rules(run) and not run.port.unsupported
    ms_sd = run.ms_ns["sd"]
    assert {"learning_rate", "global_step"} <= set(ms_sd)  # the optimizer's state Parameters


def test_experimental_optimizer_state_loads_but_its_rate_is_flagged(tmp_path):
    run = _pair("""
        model = nn.Linear(2, 1)
        optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
        torch.save(optimizer.state_dict(), path)
        restored = torch.optim.Adam(model.parameters(), lr=0.5)
        restored.load_state_dict(torch.load(path))
        lr = restored.param_groups[0]["lr"]
    """, tmp_path / "opt.pt")
    assert run.ms_error is None, run.explain()
    assert "mindspore.load_param_into_net(restored, mindspore.load_checkpoint(" in run.port.code
    # the experimental optimizer's rate is not in the checkpoint: it stays 0.5, and says so
    assert run.row("lr").status != "match" and abs(float(run.ms_ns["lr"]) - 0.5) < 1e-6
    [finding] = run.port.unsupported
    assert finding.rule_id == "CKP003" and 'param_groups[i]["lr"]' in finding.reason
    assert "# msmagic: CKP003 learning rates are not restored" in run.port.code


def _flagged(body, rule):
    res = msmagic.port(HEAD + src(body))
    assert rule in {f.rule_id for f in res.unsupported}, res.unsupported
    assert f"# msmagic: {rule}" in res.code
    ast.parse(res.code)
    return res


def test_modules_saved_whole_and_options_are_flagged():
    # a module saved whole writes its parameters (CKP006); reading the file into another
    # name builds its constructor again, or is flagged at that load when there is none
    res = msmagic.port(HEAD + "model = nn.Linear(2, 2)\ntorch.save(model, 'm.pt')\nother = torch.load('m.pt')\n")
    assert "mindspore.save_checkpoint(model, 'm.pt.ckpt')" in res.code
    assert "other = load_into(nn.Dense(2, 2), 'm.pt.ckpt')" in res.code and not res.unsupported
    res = msmagic.port(HEAD + "def make():\n    return nn.Linear(2, 2)\nmodel = make()\n"
                       "torch.save(model, 'm.pt')\nother = torch.load('m.pt')\n")
    assert [(f.rule_id, f.api) for f in res.unsupported] == [("CKP001", "torch.load")]
    _flagged("import pickle\nsd = torch.load('m.pt', pickle_module=pickle)\n", "CKP002")
    # a computed name is evaluated once (it used to be flagged for double evaluation)
    res = msmagic.port(HEAD + "sd = torch.load(make_path())\n")
    assert "mindspore.load_checkpoint(make_path().removesuffix('.ckpt') + '.ckpt')" in res.code
    assert not res.unsupported


def test_dict_checkpoint_round_trip_through_a_file_name(tmp_path):
    """The udacity/uvadlc idiom: a dict of settings and the state dict, saved under the
    name a state dict was saved under before, read back by a function."""
    run = _pair("""
        model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
        torch.save(model.state_dict(), path)
        first = torch.load(path)
        checkpoint = {"input_size": 4, "output_size": 3,
                      "hidden_layers": [each.weight.shape[0] for each in model if hasattr(each, "weight")],
                      "state_dict": model.state_dict()}
        torch.save(checkpoint, path)

        def load_checkpoint(filepath):
            checkpoint = torch.load(filepath)
            model = nn.Sequential(nn.Linear(checkpoint["input_size"], checkpoint["hidden_layers"][0]),
                                  nn.ReLU(), nn.Linear(checkpoint["hidden_layers"][0], checkpoint["output_size"]))
            model.load_state_dict(checkpoint["state_dict"])
            return model

        restored = load_checkpoint(path)
        y = restored(torch.ones(2, 4))
        n_first = len(first)
        sizes = checkpoint["hidden_layers"]
    """, tmp_path / "checkpoint.pth")
    assert "CKP004" in rules(run) and "CKP001" in rules(run)
    for name in ("y", "n_first", "sizes"):
        assert run.row(name).status == "match", run.explain()


def test_dict_checkpoint_through_open_files_and_buffers(tmp_path):
    run = _pair("""
        import io
        net = nn.Linear(3, 2)
        checkpoint = {"n_hidden": 2, "tokens": ("a", "b"), "state_dict": net.state_dict()}
        with open(path, "wb") as f:
            torch.save(checkpoint, f)
        with open(path, "rb") as f:
            loaded = torch.load(f)
        again = nn.Linear(3, loaded["n_hidden"])
        again.load_state_dict(loaded["state_dict"])
        y = again(torch.ones(1, 3))
        tokens = list(loaded["tokens"])
        buf = io.BytesIO()
        torch.save({"w": torch.ones(2), "epoch": 3}, buf)
        buf.seek(0)
        back = torch.load(buf)
        w, epoch = back["w"], back["epoch"]
    """, tmp_path / "rnn.net")
    assert not findings(run) - {"CEL006"}, run.port.unsupported
    for name in ("y", "w", "epoch"):
        assert run.row(name).status == "match", run.explain()


def test_a_saved_state_dict_variable_saves_its_module(tmp_path):
    run = _pair("""
        model = nn.Linear(2, 3)
        state_dict = model.state_dict()
        torch.save(state_dict, path)
        new_model = nn.Linear(2, 3)
        new_model.load_state_dict(torch.load(path))
        y = new_model(torch.ones(1, 2))
    """, tmp_path / "our_model.tar")
    assert "mindspore.save_checkpoint(model, path)" in run.port.code
    assert run.row("y").status == "match", run.explain()


def test_port_is_idempotent(tmp_path):
    res = msmagic.port(HEAD + "m = nn.Linear(2, 2)\ntorch.save(m.state_dict(), path)\n"
                       "m.load_state_dict(torch.load(path))\n")
    again = msmagic.port(res.code)
    assert again.code == res.code and not again.edits
    assert not findings(type("R", (), {"port": again})())


def test_round_trip_through_pathlib_paths(tmp_path):
    from pathlib import Path

    sides = {}
    for side in ("torch", "ms"):
        (tmp_path / side).mkdir()
        sides[side] = {"folder": Path(tmp_path / side)}
    run = run_pair(HEAD + src("""
        src = nn.Linear(4, 3)
        file = folder / "model.pt"
        torch.save(src.state_dict(), file)
        dst = nn.Linear(4, 3)
        dst.load_state_dict(torch.load(file))
        out = dst(torch.ones(2, 4))
        again = nn.Linear(4, 3)
        again.load_state_dict(torch.load(folder / "model.pt"))
        out2 = again(torch.ones(2, 4))
    """), torch_ns=sides["torch"], ms_ns=sides["ms"])
    assert run.torch_error is None and run.ms_error is None, run.explain()
    assert run.agree("out", "out2"), run.explain()
    assert _same_params(run.ms_ns["src"], run.ms_ns["dst"])
    code = run.port.code
    assert "mindspore.save_checkpoint(src, str(file))" in code
    assert "mindspore.load_checkpoint(str(file).removesuffix('.ckpt') + '.ckpt')" in code
    assert (tmp_path / "ms" / "model.pt.ckpt").exists()


def test_existence_tests_of_a_checkpoint_name_see_the_mindspore_checkpoint(tmp_path):
    """``os.path.isfile(path)`` before and after ``torch.save(..., path)``: the port's
    checkpoint is ``path + '.ckpt'``, found by the ported test (CKP005)."""
    run = _pair("""
        import os
        model = nn.Linear(3, 2)
        before = os.path.isfile(path)
        torch.save(model.state_dict(), path)
        after = os.path.isfile(path)
        if os.path.exists(path):
            model.load_state_dict(torch.load(path))
            loaded = 1
        y = model(torch.ones(1, 3))
    """, tmp_path / "linear.pt")
    assert "CKP005" in rules(run)
    assert "before = checkpoint_exists(path, os.path.isfile)" in run.port.code
    assert "if checkpoint_exists(path, os.path.exists):" in run.port.code
    for side in (run.torch_ns, run.ms_ns):
        assert side["before"] is False and side["after"] is True and side["loaded"] == 1
    assert run.agree("before", "after", "loaded", "y"), run.explain()
    assert msmagic.port(run.port.code).code == run.port.code


def test_other_existence_tests_are_left_alone():
    code = src("""
        import os
        import torch
        data_ok = os.path.isfile("data.csv")
        def f(model, path, other):
            torch.save(model.state_dict(), path)
            return os.path.exists(other)
    """)
    out = msmagic.port(code).code
    assert 'data_ok = os.path.isfile("data.csv")' in out and "return os.path.exists(other)" in out
    assert "checkpoint_exists" not in out


# uvadlc tutorial 3: the file name comes from a helper, the save and the load sit in
# functions receiving the model and the path, a later cell trains only when no
# checkpoint is there and asserts it is there before loading
CHECKPOINT_HELPERS = src("""
    import os
    import json
    import torch
    import torch.nn as nn

    CHECKPOINT_PATH = "saved_models"

    def _get_config_file(model_path, model_name):
        return os.path.join(model_path, model_name + ".config")

    def _get_model_file(model_path, model_name):
        return os.path.join(model_path, model_name + ".tar")

    def load_model(model_path, model_name, net):
        config_file, model_file = _get_config_file(model_path, model_name), _get_model_file(model_path, model_name)
        assert os.path.isfile(config_file), "no config"
        assert os.path.isfile(model_file), f"Could not find the model file {model_file}"
        net.load_state_dict(torch.load(model_file, map_location="cpu"))
        return net

    def save_model(model, model_path, model_name):
        os.makedirs(model_path, exist_ok=True)
        config_file, model_file = _get_config_file(model_path, model_name), _get_model_file(model_path, model_name)
        with open(config_file, "w") as f:
            json.dump({"n": 3}, f)
        torch.save(model.state_dict(), model_file)
""")

TRAIN_OR_LOAD = src("""
    def train_or_load(net, model_name, overwrite=False):
        file_exists = os.path.isfile(_get_model_file(CHECKPOINT_PATH, model_name))
        if file_exists and not overwrite:
            trained = False
        else:
            save_model(net, CHECKPOINT_PATH, model_name)
            trained = True
        load_model(CHECKPOINT_PATH, model_name, net=net)
        return trained
""")


def test_checkpoint_helpers_in_functions_across_cells(parity_shell, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    cells = [CHECKPOINT_HELPERS, TRAIN_OR_LOAD, src("""
        torch.manual_seed(0)
        net = nn.Linear(3, 2)
        first = train_or_load(net, "linear")
        fresh = nn.Linear(3, 2)
        second = train_or_load(fresh, "linear")
        y = fresh(torch.ones(1, 3)) - net(torch.ones(1, 3))
    """)]
    for i, cell in enumerate(cells):
        parity_shell.run_cell_magic("ms_parity", f"-o report_{i}", cell)
    report = parity_shell.user_ns["report_2"]
    assert report.ms_error is None and report.torch_error is None, report.summary()
    for name in ("first", "second", "y"):
        assert report.row(name).status == "match", report.summary()
    shadow = msmagic.shadow_namespace()
    assert (shadow["first"], shadow["second"]) == (True, False)
    assert (parity_shell.user_ns["first"], parity_shell.user_ns["second"]) == (True, False)
    assert float(abs(shadow["y"]).max()) == 0  # the fresh model loaded the saved weights
    assert sorted(os.listdir(tmp_path / "saved_models")) == ["linear.config", "linear.tar"]
    assert "checkpoint_exists(model_file, os.path.isfile)" in parity_shell.user_ns["report_0"].port.code
    assert "checkpoint_exists(_get_model_file(CHECKPOINT_PATH, model_name), os.path.isfile)" in \
        parity_shell.user_ns["report_1"].port.code


def test_checkpoint_helpers_in_one_file_run_without_torch(tmp_path, monkeypatch):
    """The whole notebook ported at once and run on MindSpore alone."""
    monkeypatch.chdir(tmp_path)
    source = CHECKPOINT_HELPERS + TRAIN_OR_LOAD + src("""
        net = nn.Linear(3, 2)
        first = train_or_load(net, "linear")
        fresh = nn.Linear(3, 2)
        second = train_or_load(fresh, "linear")
        y = fresh(torch.ones(1, 3)) - net(torch.ones(1, 3))
    """)
    code = msmagic.port(source).code
    assert "import torch" not in code
    ns = {}
    exec(compile(code, "ported", "exec"), ns)
    assert (ns["first"], ns["second"]) == (True, False)
    assert float(abs(ns["y"]).max()) == 0
    assert sorted(os.listdir(tmp_path / "saved_models")) == ["linear.config", "linear.tar.ckpt"]


def test_a_later_cell_calling_a_function_that_loads_a_whole_module_is_flagged_where_it_fails(tmp_path, monkeypatch):
    """morvan's save/reload tutorial: ``def save(): torch.save(net1, 'net.pkl')`` in one
    cell, ``save()`` in the next (the net's parameters are saved: MindSpore cannot pickle a
    Cell), then ``net2 = torch.load('net.pkl')`` in a function a later cell calls: MindSpore
    reads a dict of parameters there and fails; that call (not only the definition)
    carries the finding."""
    from msmagic.engine.session import PortSession

    monkeypatch.chdir(tmp_path)
    session, ns, shadow = PortSession(), {"__name__": "__main__"}, {"__name__": "__shadow__"}
    first = msmagic.parity(src("""
        import torch
        def build(width):
            return torch.nn.Sequential(torch.nn.Linear(1, width), torch.nn.ReLU(), torch.nn.Linear(width, 1))
        net1 = build(10)  # built by a function of the notebook: no constructor to build again
        def save():
            torch.save(net1, 'net.pkl')  # save entire net
            torch.save(net1.state_dict(), 'net_params.pkl')
    """), user_ns=ns, shadow=shadow, session=session, progress=None)
    assert not first.port.unsupported  # the whole net is saved as its parameters (CKP006)
    later = msmagic.parity("# save net1\nsave()\n", user_ns=ns, shadow=shadow, session=session, progress=None)
    assert later.torch_error is None and later.ms_error is None
    # restore_net reads the file into another name: PyTorch gets the module, MindSpore its
    # parameters; the call that fails carries the finding
    restore = msmagic.parity(src("""
        def restore_net():
            net2 = torch.load('net.pkl', weights_only=False)
            return net2(torch.ones(2, 1))
    """), user_ns=ns, shadow=shadow, session=session, progress=None)
    assert [f.rule_id for f in restore.port.unsupported] == ["CKP001"]
    called = msmagic.parity("# restore\nprediction = restore_net()\n", user_ns=ns, shadow=shadow, session=session,
                            progress=None)
    assert called.torch_error is None and called.ms_error is not None
    assert called.ms_error.lines[0] == 2
    assert [(f.rule_id, f.line, f.statement) for f in called.port.unsupported] == [("GEN004", 2, 0)]
    assert "restore_net()" in called.port.unsupported[0].reason and "CKP001" in called.port.unsupported[0].reason
