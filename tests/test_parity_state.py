"""What the two sides of %%ms_parity share besides their namespaces: Python's and NumPy's
random state, the module names, the files they write, errors MindSpore raises late, and
the state a failed cell leaves on the MindSpore side. Real %%ms_parity cells in a shell."""

import os
import random
import textwrap

import numpy as np
import pytest
import torch
from IPython.utils.capture import capture_output

import msmagic
from msmagic.parity_check import DIFFERS, MATCH, NOT_COMPARABLE


@pytest.fixture
def ip(parity_shell):
    return parity_shell


def src(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def parity_cell(ip, cell, options=""):
    """Run ``cell`` under %%ms_parity as a notebook cell (numbered In[n]); the report."""
    ip.user_ns.pop("rep", None)
    with capture_output():
        result = ip.run_cell(f"%%ms_parity -o rep {options}".rstrip() + "\n" + cell, store_history=True)
    assert result.error_before_exec is None
    assert "rep" in ip.user_ns, result.error_in_exec
    return ip.user_ns["rep"], result


def explain(rep) -> str:
    rows = [(r.name, r.status, r.max_abs, r.note) for r in rep.rows]
    error = rep.ms_error and rep.ms_error.traceback
    return f"{rep.summary()}\n{rows}\n{error}\n{rep.notes}"


def shadow():
    return msmagic.shadow_namespace()


# ----------------------------------------------------------------------------- random state


def test_python_random_is_the_same_on_both_sides_and_the_notebook_keeps_pytorchs_state(ip):
    cell = src("""
        import random
        import torch
        words = ["apple", "banana", "cherry", "date", "elder", "fig", "grape", "kiwi"]
        random.seed(42)
        random.shuffle(words)
        order = torch.tensor([len(w) * 10 + i for i, w in enumerate(words)])
        r = random.random()
        pick = random.choice(range(1000))
    """)
    rep, _ = parity_cell(ip, cell)
    after = random.getstate()
    assert rep.ok, explain(rep)
    assert [rep.row(n).status for n in ("order", "r", "pick")] == [MATCH] * 3
    assert shadow()["words"] == ip.user_ns["words"]
    plain: dict = {}
    exec(cell, plain)
    assert after == random.getstate()  # what the plain cell alone leaves
    assert ip.user_ns["words"] == plain["words"]


def test_numpy_global_draws_match_at_top_level_in_functions_and_loops(ip):
    np.random.seed(123)  # the notebook's state before the cell: the cell's first draw uses it
    cell = src("""
        import numpy as np
        import torch
        a = np.random.rand(4, 3)
        np.random.seed(7)
        indices = list(range(50))
        np.random.shuffle(indices)
        perm = np.random.permutation(10)
        def noise(n):
            return np.random.randn(n)
        total = np.zeros(3)
        for _ in range(4):
            total = total + noise(3)
        b = torch.from_numpy(a)
    """)
    rep, _ = parity_cell(ip, cell)
    after = np.random.get_state()
    assert rep.ok, explain(rep)
    for name in ("a", "indices", "perm", "total", "b"):
        assert rep.row(name).status == MATCH, explain(rep)
    assert shadow()["indices"] == ip.user_ns["indices"]
    np.random.seed(123)
    plain: dict = {}
    exec(cell, plain)
    assert np.array_equal(plain["a"], ip.user_ns["a"])
    expected = np.random.get_state()
    assert np.array_equal(after[1], expected[1]) and after[2] == expected[2]


def test_pytorch_calls_the_port_keeps_draw_from_the_same_torch_state(ip):
    """A port keeps PyTorch code it has no mapping for (SubsetRandomSampler): its draws
    come from torch's generator, which both sides share like NumPy's."""
    ip.user_ns["kept"] = src("""
        import mindspore
        import torch
        from torch.utils.data import SubsetRandomSampler
        sampler = SubsetRandomSampler(list(range(20)))
        order = mindspore.Tensor(list(sampler))
    """)
    cell = src("""
        import torch
        from torch.utils.data import SubsetRandomSampler
        sampler = SubsetRandomSampler(list(range(20)))
        order = torch.tensor(list(sampler))
    """)
    rep, _ = parity_cell(ip, cell, "--against kept")
    assert rep.ok, explain(rep)
    assert rep.row("order").status == MATCH


def test_generator_objects_take_pytorchs_state_in_the_cell_and_in_later_cells(ip):
    ip.run_cell("import numpy as np\nplain_rng = np.random.default_rng()\n")  # a plain cell
    first = src("""
        import random
        import numpy as np
        import torch
        rng = np.random.default_rng()
        pyrng = random.Random()
        draws = rng.normal(size=5)
        picks = torch.tensor(rng.integers(0, 100, size=4))
        k = pyrng.randint(0, 10**6)
        from_plain = plain_rng.random(4)
    """)
    rep, _ = parity_cell(ip, first)
    assert rep.ok, explain(rep)
    for name in ("draws", "picks", "k", "from_plain"):
        assert rep.row(name).status == MATCH, explain(rep)
    assert shadow()["rng"] is not ip.user_ns["rng"]  # each side has its own generator
    later, _ = parity_cell(ip, "more = rng.random(3)\nagain = plain_rng.random(2)\n")
    assert later.ok, explain(later)
    assert later.row("more").status == MATCH and later.row("again").status == MATCH


def test_model_apply_with_an_initialiser_drawing_with_torch_or_numpy(ip):
    build = src("""
        import numpy as np
        import torch
        import torch.nn as nn
        def init_normal(m):
            if isinstance(m, nn.Linear):
                nn.init.normal_(m.weight, std=0.02)
                nn.init.zeros_(m.bias)
        def init_numpy(m):
            if isinstance(m, nn.Linear):
                values = np.random.uniform(-0.1, 0.1, size=tuple(m.weight.shape)).astype(np.float32)
                m.weight.data = torch.from_numpy(values)
        model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
        model.apply(init_normal)
        out = model(torch.ones(3, 4))
    """)
    rep, _ = parity_cell(ip, build)
    assert rep.ok, explain(rep)
    assert rep.row("out").status == MATCH
    # a later cell: the module was copied in an earlier one
    rep, _ = parity_cell(ip, "model.apply(init_normal)\nout = model(torch.ones(3, 4))\n")
    assert rep.ok, explain(rep)
    assert any(s.startswith("model:") and "in-place random initialisation" in s for s in rep.synchronised)
    rep, _ = parity_cell(ip, "model.apply(init_numpy)\nout = model(torch.ones(3, 4))\n")
    assert rep.ok, explain(rep)
    assert rep.row("model.0.weight").status == MATCH  # NumPy drew the same values on each side


# ----------------------------------------------------------------------------- module names


def test_a_cell_under_the_main_guard_runs_on_both_sides(ip):
    cell = src("""
        import torch
        if __name__ == "__main__":
            z = torch.arange(4.0) * 3
            total = z.sum().item()
    """)
    rep, _ = parity_cell(ip, cell)
    assert rep.ok, explain(rep)
    assert rep.row("z").status == MATCH and rep.row("total").status == MATCH
    assert shadow()["__name__"] == "__main__" and "__builtins__" in shadow()


def test_mindspore_jit_resolves_globals_in_the_shadow_namespace(ip):
    ip.user_ns["ms_code"] = src("""
        import mindspore
        offset = 1
        @mindspore.jit
        def double(x):
            return x * 2 + offset
        y = double(mindspore.ops.ones(3))
    """)
    cell = src("""
        import torch
        offset = 1
        def double(x):
            return x * 2 + offset
        y = double(torch.ones(3))
    """)
    rep, _ = parity_cell(ip, cell, "--against ms_code")
    assert rep.ms_error is None, explain(rep)
    assert rep.ok and rep.row("y").status == MATCH, explain(rep)


# ----------------------------------------------------------------------------- files


@pytest.fixture
def in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_a_checkpoint_stays_pytorchs_and_the_mindspore_side_reads_its_own_later(ip, in_tmp):
    save = src("""
        import torch
        import torch.nn as nn
        model = nn.Linear(3, 2)
        torch.save(model.state_dict(), "model.pt")
    """)
    rep, _ = parity_cell(ip, save)
    assert rep.ms_error is None, explain(rep)
    assert sorted(os.listdir(in_tmp)) == ["model.pt"]  # no MindSpore file among the user's
    assert rep.row("file model.pt").status == MATCH, explain(rep)  # the tensors in both
    assert any("into its own folder" in n for n in rep.notes)
    load = src("""
        fresh = nn.Linear(3, 2)
        fresh.load_state_dict(torch.load("model.pt", weights_only=True))
        y = fresh(torch.ones(4, 3))
    """)
    rep, _ = parity_cell(ip, load)
    assert rep.ms_error is None, explain(rep)
    assert rep.row("y").status == MATCH, explain(rep)


def test_a_file_written_through_a_file_object_is_left_loadable(ip, in_tmp):
    cell = src("""
        import torch
        checkpoint = {"w": torch.arange(3.0), "n_hidden": 4}
        with open("rnn.net", "wb") as f:
            torch.save(checkpoint, f)
    """)
    parity_cell(ip, cell)
    loaded = torch.load(in_tmp / "rnn.net", weights_only=True)  # the PyTorch side's file
    assert torch.equal(loaded["w"], torch.arange(3.0))


def test_a_pytorch_save_the_port_kept_does_not_overwrite_the_users_file(ip, in_tmp):
    """torch.save of an object the port cannot map stays PyTorch on the MindSpore side and
    writes from native code: it must not replace the PyTorch side's file."""
    ip.user_ns["kept"] = src("""
        import mindspore
        import torch
        state = {"w": mindspore.ops.arange(3.0)}
        torch.save(state, "our_model.tar")
    """)
    cell = src("""
        import torch
        state = {"w": torch.arange(3.0)}
        torch.save(state, "our_model.tar")
    """)
    rep, _ = parity_cell(ip, cell, "--against kept")
    assert rep.ms_error is None, explain(rep)
    assert os.listdir(in_tmp) == ["our_model.tar"]
    loaded = torch.load(in_tmp / "our_model.tar", weights_only=True)
    assert torch.equal(loaded["w"], torch.arange(3.0))
    # what the MindSpore side wrote is no MindSpore checkpoint: located at the statement
    assert rep.row("file our_model.tar").status == NOT_COMPARABLE
    assert rep.first_divergence is not None and rep.first_divergence.statement == 2


def test_a_file_that_differs_diverges_at_the_statement_that_wrote_it(ip, in_tmp):
    ip.user_ns["ms_code"] = src("""
        import mindspore
        loss = 0.5
        with open("log.txt", "w") as f:
            f.write(f"loss {loss + 0.25}\\n")
        done = 1
    """)
    cell = src("""
        import torch
        loss = 0.5
        with open("log.txt", "w") as f:
            f.write(f"loss {loss}\\n")
        done = 1
    """)
    rep, _ = parity_cell(ip, cell, "--against ms_code")
    row = rep.row("file log.txt")
    assert row.status == DIFFERS and row.max_abs == pytest.approx(0.25), explain(rep)
    assert rep.first_divergence.statement == 2 and rep.first_divergence.names == ["file log.txt"]
    assert (in_tmp / "log.txt").read_text() == "loss 0.5\n"


def test_text_files_are_written_once_and_compared(ip, in_tmp):
    cell = src("""
        import torch
        x = torch.arange(4.0) / 3
        with open("log.txt", "a") as f:
            f.write(f"sum {x.sum().item():.6f}\\n")
        with open("out.txt", "w") as f:
            f.write("done")
    """)
    (in_tmp / "log.txt").write_text("header\n")
    rep, _ = parity_cell(ip, cell)
    assert rep.ok, explain(rep)
    assert (in_tmp / "log.txt").read_text() == "header\nsum 2.000000\n"  # appended once
    assert rep.row("file log.txt").status == MATCH and rep.row("file out.txt").status == MATCH
    rep, _ = parity_cell(ip, cell)  # the MindSpore side appends to its own copy
    assert rep.row("file log.txt").status == MATCH, explain(rep)
    assert (in_tmp / "log.txt").read_text().count("sum") == 2


def test_both_sides_create_one_folder_and_check_for_files_in_it(ip, in_tmp):
    cell = src("""
        import os
        import numpy as np
        import torch
        os.makedirs("ckpts")
        path = os.path.join("ckpts", "w.npy")
        w = torch.ones(3).numpy()
        if not os.path.isfile(path):
            np.save(path, w)
        found = os.path.isfile(path)
        listed = len(os.listdir("ckpts"))
    """)
    rep, _ = parity_cell(ip, cell)
    assert rep.ms_error is None, explain(rep)
    assert rep.ok, explain(rep)
    assert rep.row("found").status == MATCH and rep.row("listed").status == MATCH
    assert os.listdir(in_tmp / "ckpts") == ["w.npy"]


# ----------------------------------------------------------------------------- lazy errors


def test_an_error_mindspore_raises_when_a_value_is_read_is_the_statements(ip):
    # Tensor.fill_ has no CPU kernel in MindSpore 2.10; the error comes when t is read
    ip.user_ns["ms_code"] = src("""
        import mindspore
        t = mindspore.ops.zeros(3)
        t.fill_(1.0)
        s = t * 2
    """)
    cell = "import torch\nt = torch.zeros(3)\nt.fill_(1.0)\ns = t * 2\n"
    rep, result = parity_cell(ip, cell, "--against ms_code")
    assert result.error_in_exec is None  # a MindSpore-side failure: the cell succeeds
    assert rep.ms_error is not None and rep.torch_error is None, explain(rep)
    assert rep.ms_error.statement == 2 and rep.ms_error.type == "RuntimeError"
    assert rep.ms_error.lines == (3, 3)
    assert "InplaceFillScalar" in rep.ms_error.message
    assert torch.equal(ip.user_ns["s"], torch.full((3,), 2.0))


def test_a_lazy_error_after_a_divergence_is_still_the_statements_that_bound_the_value(ip):
    """After the first divergence values are no longer compared after each statement:
    the value a statement bound is read right after it all the same."""
    ip.user_ns["ms_code"] = src("""
        import mindspore
        a = mindspore.ops.ones(3) + 1
        t = mindspore.ops.zeros(3).fill_(1.0)
        s = t * 2
    """)
    cell = "import torch\na = torch.ones(3)\nt = torch.zeros(3).fill_(1.0)\ns = t * 2\n"
    rep, _ = parity_cell(ip, cell, "--against ms_code")
    assert rep.first_divergence is not None and rep.first_divergence.names == ["a"], explain(rep)
    assert rep.ms_error is not None and rep.ms_error.statement == 2, explain(rep)
    assert "InplaceFillScalar" in rep.ms_error.message


def test_a_lazy_error_in_a_modules_parameter_is_the_statements_that_changed_it(ip):
    parity_cell(ip, "import torch\nimport torch.nn as nn\nlayer = nn.Linear(3, 2)\n")
    ip.user_ns["ms_code"] = "layer.bias.data.fill_(0)\n"
    rep, result = parity_cell(ip, "layer.bias.data.fill_(0)\n", "--against ms_code")
    assert result.error_in_exec is None, result.error_in_exec
    assert rep.ms_error is not None and rep.ms_error.statement == 0, explain(rep)
    assert "InplaceFillScalar" in rep.ms_error.message


# ----------------------------------------------------------------------------- stale state


def test_a_later_cell_says_which_names_a_failed_cell_left_unset(ip):
    ip.user_ns["broken"] = src("""
        import mindspore
        import mindspore.nn as nn
        x = mindspore.ops.ones(3)
        y = x.sum() + not_defined_anywhere
        z = x * 2
        model = nn.Dense(3, 2)
    """)
    label = f"In[{ip.execution_count}]"  # the number the failing cell gets
    failed, _ = parity_cell(ip, src("""
        import torch
        import torch.nn as nn
        x = torch.ones(3)
        y = x.sum()
        z = x * 2
        model = nn.Linear(3, 2)
    """), "--against broken")
    assert failed.ms_error is not None and failed.ms_error.type == "NameError"
    rep, _ = parity_cell(ip, "w = z + 1\nout = model(x)\n")
    assert set(rep.stale) == {"z", "model"}, rep.stale
    assert all(label in why and "line 4" in why for why in rep.stale.values()), (label, rep.stale)
    [note] = [n for n in rep.notes if "did not finish on the MindSpore side" in n]
    assert "`z`" in note and "`model`" in note and label in note
    assert not any("from a plain cell" in n for n in rep.notes)  # it came from a parity cell
    # bound again by a cell that works: no longer stale
    parity_cell(ip, "model = nn.Linear(3, 2)\nz = x * 2\n")
    rep, _ = parity_cell(ip, "w = z + 1\nout = model(x)\n")
    assert rep.stale == {} and rep.ok, explain(rep)


def test_an_interrupted_mindspore_side_leaves_the_names_of_its_statement_stale(ip):
    ip.user_ns["stopped"] = src("""
        import mindspore
        def stop():
            raise KeyboardInterrupt  # Ctrl-C while the MindSpore side runs the statement
        x = mindspore.ops.ones(3)
        y = stop()
    """)
    _, result = parity_cell(ip, "import torch\nx = torch.ones(3)\ny = x * 2\n", "--against stopped")
    assert isinstance(result.error_in_exec, KeyboardInterrupt)
    rep, _ = parity_cell(ip, "w = y + 1\n")
    assert "y" in rep.stale and "interrupted" in rep.stale["y"], rep.stale


# ----------------------------------------------------------------------------- bridging


def test_a_parameter_from_a_plain_cell_arrives_as_a_mindspore_parameter(ip):
    import mindspore

    ip.run_cell("import torch\nw = torch.nn.Parameter(torch.ones(3))\n"
                "frozen = torch.nn.Parameter(torch.ones(2), requires_grad=False)\n")
    rep, _ = parity_cell(ip, "v = w * 2\nu = frozen + 1\n")
    assert rep.ok, explain(rep)
    assert isinstance(shadow()["w"], mindspore.Parameter) and shadow()["w"].requires_grad
    assert isinstance(shadow()["frozen"], mindspore.Parameter) and not shadow()["frozen"].requires_grad


def test_a_parameter_initialised_in_place_takes_pytorchs_values_and_stays_a_parameter(ip):
    import mindspore

    cell = src("""
        import torch
        import torch.nn as nn
        W = nn.Parameter(torch.zeros(3, 4))
        nn.init.xavier_uniform_(W)
        out = torch.ones(2, 3) @ W
    """)
    rep, _ = parity_cell(ip, cell)
    assert rep.ok, explain(rep)
    assert rep.row("out").status == MATCH
    assert isinstance(shadow()["W"], mindspore.Parameter)
    assert np.array_equal(shadow()["W"].asnumpy(), ip.user_ns["W"].detach().numpy())


# ----------------------------------------------------------------------------- earlier divergences


def test_values_an_earlier_cell_left_different_take_pytorchs_before_the_next_cell(ip):
    """Cell 1 diverges (here a hand port with another learning rate, as a dropout mask or a
    tolerance grown over a training loop would): it says so. Cell 2 only evaluates the
    model: it is checked on its own statements, with a note naming what was realigned."""
    setup = src("""
        import torch
        import torch.nn as nn
        torch.manual_seed(0)
        net = nn.Linear(3, 2)
        x = torch.randn(4, 3)
        scale = torch.ones(2)
    """)
    rep, _ = parity_cell(ip, setup)
    assert rep.ok, explain(rep)
    ip.user_ns["ms_train"] = src("""
        import mindspore
        opt = mindspore.nn.SGD(net.trainable_params(), learning_rate=0.3)
        grad_fn = mindspore.value_and_grad(lambda: net(x).sum(), None, opt.parameters)
        loss, grads = grad_fn()
        opt(grads)
        scale = scale * 3
    """)
    train = src("""
        opt = torch.optim.SGD(net.parameters(), lr=0.1)
        loss = net(x).sum()
        loss.backward()
        opt.step()
        scale = scale * 2
    """)
    rep, _ = parity_cell(ip, train, "--against ms_train")
    assert not rep.ok and rep.row("net.weight").status == DIFFERS, explain(rep)
    rep, _ = parity_cell(ip, "y = net(x) * scale\ntotal = y.sum()\n")
    assert rep.ok, explain(rep)
    assert set(rep.realigned) == {"net", "scale"}, rep.realigned
    assert rep.realigned["scale"] == pytest.approx(1.0)
    assert any("Already different when this cell started" in n and "`net`" in n for n in rep.notes)
    # the MindSpore module's parameters took PyTorch's values in place
    sh = shadow()
    np.testing.assert_allclose(sh["net"].weight.asnumpy(), ip.user_ns["net"].weight.detach().numpy(), rtol=1e-6)
    # nothing differed this time: no note
    rep, _ = parity_cell(ip, "z = net(x).mean()\n")
    assert rep.ok and not rep.realigned, explain(rep)


# ----------------------------------------------------------------------------- one-statement models


BUILD_AND_TRAIN = src("""
    import torch
    import torch.nn as nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(7, 3)
            self.out = nn.Linear(6, 7)

        def forward(self, x):
            return self.out(self.emb(x).view(-1, 6))

    def fit(steps):
        model = Net()
        optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
        criterion = nn.CrossEntropyLoss()
        x, y = torch.tensor([[1, 2], [3, 4], [5, 6]]), torch.tensor([3, 5, 0])
        for _ in range(steps):
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
        return model, loss.item()

    if __name__ == "__main__":
        model, final = fit(5)
        scores = model(torch.tensor([[1, 2]]))
""")


def test_a_model_built_and_trained_in_one_statement_starts_from_pytorchs_weights(ip):
    """A script's __main__ block (or a function) builds the model and trains it before the
    statement ends: the Cell takes the PyTorch module's weights at its first call."""
    rep, _ = parity_cell(ip, BUILD_AND_TRAIN)
    assert rep.ms_error is None and rep.ok, explain(rep)
    assert rep.row("final").status == MATCH and rep.row("scores").status == MATCH


def test_models_built_and_trained_one_after_another_in_a_loop_each_start_from_pytorchs(ip):
    """uvadlc tutorial 3 trains one model per activation function in a loop: each model is
    freed when the loop rebinds the name, and the next one may get its id; each must still
    take its own PyTorch weights (and the one the namespace held before is no exception)."""
    setup = src("""
        import torch
        import torch.nn as nn

        def fit(net, steps=3):
            opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
            x = torch.linspace(-1, 1, 12).reshape(4, 3)
            losses = []
            for _ in range(steps):
                opt.zero_grad()
                loss = (net(x) ** 2).mean()
                loss.backward()
                opt.step()
                losses.append(loss.item())
            return losses

        net = nn.Sequential(nn.Linear(3, 5), nn.Tanh(), nn.Linear(5, 1))
    """)
    rep, _ = parity_cell(ip, setup)
    assert rep.ms_error is None, explain(rep)
    rep, _ = parity_cell(ip, src("""
        all_losses = []
        for seed in range(5):
            torch.manual_seed(seed)
            net = nn.Sequential(nn.Linear(3, 5), nn.Tanh(), nn.Linear(5, 1))
            all_losses.append(fit(net))
    """))
    assert rep.ms_error is None and rep.ok, explain(rep)
    assert rep.row("all_losses").status == MATCH, explain(rep)
    first = [losses[0] for losses in ip.user_ns["all_losses"]]
    assert len(set(first)) == 5  # five models, each with its own weights
    np.testing.assert_allclose([losses[0] for losses in shadow()["all_losses"]], first, rtol=1e-5)


def test_a_loaded_state_dict_matches_at_top_level_and_in_a_function(ip, in_tmp):
    """torch.load gives an OrderedDict, MindSpore's load_checkpoint a dict: the same
    mapping, compared entry by entry (not a difference of type)."""
    save = src("""
        import torch
        import torch.nn as nn
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
        torch.save(model.state_dict(), "model.pt")
    """)
    rep, _ = parity_cell(ip, save)
    assert rep.ok, explain(rep)
    rep, _ = parity_cell(ip, 'state_dict = torch.load("model.pt")\n')
    row = rep.row("state_dict")
    assert row.status == MATCH and row.max_abs == 0, explain(rep)
    assert (row.torch_dtype, row.ms_dtype) == ("OrderedDict", "dict")
    restore = src("""
        def restore(net, path):
            sd = torch.load(path)
            net.load_state_dict(sd)
            return sd

        loaded = restore(model, "model.pt")
        y = model(torch.ones(2, 3))
    """)
    rep, _ = parity_cell(ip, restore)
    assert rep.ok, explain(rep)
    assert rep.row("loaded").status == MATCH and rep.row("y").status == MATCH, explain(rep)
    np.testing.assert_allclose(shadow()["y"].asnumpy(), ip.user_ns["y"].detach().numpy(), rtol=1e-6)


def test_a_state_dict_an_earlier_cell_left_different_keeps_its_parameters(ip, in_tmp):
    """Realigning a dict of MindSpore Parameters sets their values in place: it stays what
    load_param_into_net takes."""
    import mindspore

    save = src("""
        import torch
        import torch.nn as nn
        torch.manual_seed(0)
        model = nn.Linear(3, 2)
        torch.save(model.state_dict(), "model.pt")
    """)
    rep, _ = parity_cell(ip, save)
    assert rep.ok, explain(rep)
    ip.user_ns["ms_load"] = src("""
        import mindspore
        state_dict = mindspore.load_checkpoint("model.pt.ckpt")
        state_dict["weight"].set_data(state_dict["weight"] + 1)
    """)
    rep, _ = parity_cell(ip, 'state_dict = torch.load("model.pt")\n', "--against ms_load")
    assert rep.row("state_dict").status == DIFFERS, explain(rep)
    rep, _ = parity_cell(ip, "model.load_state_dict(state_dict)\ny = model(torch.ones(2, 3))\n")
    assert rep.ms_error is None and rep.ok, explain(rep)
    assert rep.realigned["state_dict"] == pytest.approx(1.0)
    sd = shadow()["state_dict"]
    assert isinstance(sd["weight"], mindspore.Parameter)
    np.testing.assert_allclose(sd["weight"].asnumpy(), ip.user_ns["model"].weight.detach().numpy(), rtol=1e-6)
    assert rep.row("y").status == MATCH, explain(rep)


def test_a_dict_checkpoint_is_compared_with_the_pickle_the_port_writes(ip, in_tmp):
    """torch.save of a dict checkpoint becomes pickle (CKP004): its settings and its state
    dict (through the parameter-name maps: BatchNorm's weight is gamma) are compared, at
    top level and inside a function receiving the model."""
    cell = src("""
        import torch
        import torch.nn as nn
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(4, 3), nn.BatchNorm1d(3))
        model(torch.randn(5, 4))
        checkpoint = {"input_size": 4, "hidden": [3], "name": "mlp", "state_dict": model.state_dict()}
        torch.save(checkpoint, "checkpoint.pth")

        def save(net, path, epochs):
            torch.save({"epochs": epochs, "state_dict": net.state_dict()}, path)

        save(model, "last.pth", 2)
    """)
    rep, _ = parity_cell(ip, cell)
    assert rep.ok, explain(rep)
    for name in ("file checkpoint.pth", "file last.pth"):
        row = rep.row(name)
        assert row.status == MATCH and row.max_abs < 1e-7, explain(rep)  # running_mean: 4e-9
    # every entry was compared: 3 settings + the Linear's 2 tensors + BatchNorm's 4
    assert rep.row("file checkpoint.pth").torch_shape == (3 + 2 + 4,), explain(rep)


def test_a_dict_checkpoint_with_another_value_differs_at_its_save(ip, in_tmp):
    ip.user_ns["ms_save"] = src("""
        import pathlib
        import pickle
        import mindspore
        model = mindspore.nn.Dense(2, 1)
        checkpoint = {"input_size": 3, "state_dict": model.parameters_dict()}
        pathlib.Path("checkpoint.pth").write_bytes(pickle.dumps(checkpoint))
    """)
    cell = src("""
        import torch
        import torch.nn as nn
        model = nn.Linear(2, 1)
        checkpoint = {"input_size": 2, "state_dict": model.state_dict()}
        torch.save(checkpoint, "checkpoint.pth")
    """)
    rep, _ = parity_cell(ip, cell, "--against ms_save")
    row = rep.row("file checkpoint.pth")
    assert row.status == DIFFERS and row.max_abs == pytest.approx(1.0), explain(rep)
    assert row.statement == 4, explain(rep)  # the statement that saved it


def test_a_conv1d_checkpoint_is_compared_in_pytorchs_layout(ip, in_tmp):
    """MindSpore's Conv1d weight has an axis of size one PyTorch's lacks: the saved
    checkpoints are compared in PyTorch's shape, from a training loop's function too."""
    cell = src("""
        import torch
        import torch.nn as nn
        torch.manual_seed(0)
        model = nn.Sequential(nn.Conv1d(4, 3, 2), nn.ReLU(), nn.Conv1d(3, 2, 3, padding=1))
        torch.save(model.state_dict(), "conv.pt")

        def keep_best(net, path):
            torch.save(net.state_dict(), path)

        keep_best(model, "best.pt")
    """)
    rep, _ = parity_cell(ip, cell)
    assert rep.ok, explain(rep)
    for name in ("file conv.pt", "file best.pt"):
        row = rep.row(name)
        assert row.status == MATCH and row.max_abs == 0 and row.torch_shape == (4,), explain(rep)


def test_a_list_of_models_and_their_optimizers_are_synchronised():
    """morvan's batch-normalization comparison: ``nets = [Net(False), Net(True)]`` (each
    initialised with nn.init.normal_) and ``opts = [Adam(net.parameters()) for net in
    nets]``: each model in the list starts from PyTorch's weights and each optimizer of
    the list steps in lockstep; before, the list was left alone and every value differed."""
    import textwrap

    import msmagic

    report = msmagic.parity(textwrap.dedent("""
        import torch
        import torch.nn as nn
        from torch.nn import init
        class Net(nn.Module):
            def __init__(self, bn):
                super().__init__()
                self.fcs = []
                for i in range(2):
                    fc = nn.Linear(1 if i == 0 else 4, 4)
                    setattr(self, 'fc%i' % i, fc)
                    init.normal_(fc.weight, mean=0., std=.1)
                    self.fcs.append(fc)
                self.bn = nn.BatchNorm1d(4, momentum=0.5) if bn else nn.Identity()
                self.predict = nn.Linear(4, 1)
            def forward(self, x):
                for fc in self.fcs:
                    x = torch.tanh(fc(x))
                return self.predict(self.bn(x))
        nets = [Net(False), Net(True)]
        opts = [torch.optim.Adam(net.parameters(), lr=0.02) for net in nets]
        x = torch.linspace(-1, 1, 16).reshape(16, 1)
        y = x.pow(2)
        losses = []
        for step in range(3):
            for m, opt in zip(nets, opts):
                loss = nn.functional.mse_loss(m(x), y)
                opt.zero_grad()
                loss.backward()
                opt.step()
                losses.append(loss.item())
    """))
    assert report.ok, report.summary()
    assert any(s.startswith("nets: parameters and buffers of its 2 modules") for s in report.synchronised)
    assert any(s.startswith("opts[1]: PyTorch's gradients used for 3 steps") for s in report.synchronised)
    assert report.row("losses").status == "match"


def test_objects_holding_tensors_a_failed_statement_read_are_stale(ip):
    """makemore's hand-written layers: the training loop (failing on the MindSpore side)
    updated the tensors of ``parameters`` and of the ``model`` object in place on the
    PyTorch side; a later cell reading ``model`` is told its MindSpore weights may be
    behind. A tensor the statement only read (``x``) is not."""
    ip.user_ns["broken"] = src("""
        import mindspore
        class Layer:
            def __init__(self):
                self.weight = mindspore.ops.ones(3)
        model = Layer()
        parameters = [model.weight]
        x = mindspore.ops.ones(3)
        for p in parameters:
            p.add_(x * not_defined_anywhere * model.weight)
    """)
    failed, _ = parity_cell(ip, src("""
        import torch
        class Layer:
            def __init__(self):
                self.weight = torch.ones(3)
        model = Layer()
        parameters = [model.weight]
        x = torch.ones(3)
        for p in parameters:
            p.add_(x * 0.5 * model.weight)
    """), "--against broken")
    assert failed.ms_error is not None and failed.ms_error.type == "NameError"
    rep, _ = parity_cell(ip, "w = model.weight * x\nq = parameters[0] + 1\n")
    assert {"model", "parameters"} <= set(rep.stale) and "x" not in rep.stale, rep.stale
