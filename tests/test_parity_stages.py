"""The parity package's stages: the plan comes from the port, the options are one
validated object, modules synchronise through the port's parameter-name maps, and
statements sharing a line are reported on that line everywhere."""

from __future__ import annotations

import dataclasses
import math
import re

import numpy as np
import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell

import msmagic
from msmagic.parity_check import (
    DIFFERS,
    MATCH,
    OptionError,
    ParityOptions,
    ParityReport,
    ms_name_for,
    run_pair,
    sync_module,
)
from msmagic.parity_check.plan import plan_steps
from msmagic.render import render_kind
from msmagic.render.parity import render_parity_html, render_parity_text


def run(cell, **kw):
    kw.setdefault("user_ns", {"__name__": "__main__"})
    kw.setdefault("shadow", {"__name__": "__shadow__"})
    return msmagic.parity(cell, **kw)


def line_column(html: str) -> dict[str, str]:
    """{row name: its Line cell} of the HTML comparison table."""
    html = re.sub(r' style="[^"]*"', "", html)  # the inline styles are render tests' business
    return dict(re.findall(r'<tr class="msm-status-[^"]*" data-name="([^"]+)"[^>]*>'
                           r'<td class="msm-name">.*?</td><td class="msm-line">([^<]*)</td>', html))


# ----------------------------------------------------------------------------- plan


SAME_LINE = "import torch\nx = torch.ones(2); y = x * 2\nz = y + 1\n"


def test_the_steps_are_the_ports_statements():
    port = msmagic.port(SAME_LINE)
    steps = plan_steps(SAME_LINE, port)
    assert [s.torch_lines for s in steps] == [s.before for s in port.statements] == [(1, 1), (2, 2), (3, 3)]
    assert steps[1].bound == ["x", "y"] and steps[1].text == "x = torch.ones(2); y = x * 2\n"
    assert steps[1].names == port.statements[1].reads


def test_parity_runs_from_the_plan_it_is_given(monkeypatch):
    # a port whose plan makes lines 2-3 one statement: parity follows it, it does not
    # parse the cell to find statements of its own
    real = msmagic.port

    def merged(source, **kw):
        result = real(source, **kw)
        first, second = result.statements[1], result.statements[2]
        joined = dataclasses.replace(
            first, before=(2, 3), after=(first.after[0], second.after[1]),
            binds=tuple(sorted(set(first.binds) | set(second.binds))), reads=first.reads | second.reads)
        result.statements = [result.statements[0], joined]
        return result

    monkeypatch.setattr(msmagic, "port", merged)
    report = run(SAME_LINE)
    assert report.ok, report.rows
    assert {r.name: r.statement for r in report.rows} == {"x": 1, "y": 1, "z": 1}
    assert line_column(render_parity_html(report)) == {"x": "2\u20133", "y": "2\u20133", "z": "2\u20133"}


def test_run_pair_runs_statements_sharing_a_line_as_one_step():
    pair = run_pair("import torch\na = torch.ones(2); b = a * 2\n")
    assert len(pair.steps) == 2 and pair.steps[1].bound == ["a", "b"]
    assert pair.agree("a", "b"), pair.explain()


# ----------------------------------------------------------------------------- one line


def test_statements_sharing_a_line_are_reported_on_that_line_everywhere():
    against = "import mindspore\nx = mindspore.ops.ones(2); y = x * 3\nz = y + 1\n"
    report = run(SAME_LINE, against=against)
    div = report.first_divergence
    assert (div.statement, div.before, div.after, div.names) == (1, (2, 2), (2, 2), ["y"])
    assert {r.name: r.statement for r in report.rows} == {"x": 1, "y": 1, "z": 2}
    assert report.row("y").status == DIFFERS and report.row("x").status == MATCH
    html = render_parity_html(report)
    # the table ...
    assert line_column(html) == {"x": "2", "y": "2", "z": "3"}
    # ... the divergence box ...
    box = html[html.index('class="msm-first-divergence"'):]
    box = box[: box.index("</div></div>")]
    assert 'data-old="2"' in box and "PyTorch line 2" in box
    # ... and the text
    assert "first divergence: statement 2 (PyTorch line 2 -> MindSpore line 2): y" in render_parity_text(report)


def test_a_cell_without_torch_numbers_its_statements_like_the_port():
    report = run("a = 1; b = 2\nc = a + b\n")
    assert report.ok, report.rows
    assert line_column(render_parity_html(report)) == {"a": "1", "b": "1", "c": "2"}


# ----------------------------------------------------------------------------- sync


BATCHNORM3D = """\
import torch
import torch.nn as nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm3d(3)
        nn.init.uniform_(self.bn.weight, 0.5, 2.0)
        nn.init.uniform_(self.bn.bias, -1.0, 1.0)
    def forward(self, x):
        return self.bn(x)
net = Net()
net.train()  # the forward updates the running statistics: the module is compared after it
x = torch.arange(3 * 2 * 2 * 2 * 2, dtype=torch.float32).reshape(2, 3, 2, 2, 2) / 10
y = net(x)
"""


def test_batchnorm3d_parameters_synchronise_in_parity():
    """MindSpore's BatchNorm3d keeps its parameters on an inner ``bn2d``: the port's
    map for the layer says so, and parity copies through it."""
    report = run(BATCHNORM3D)
    assert report.port.module_params["torch.nn.BatchNorm3d"]["weight"] == "bn2d.gamma"
    assert report.ok, [(r.name, r.status, r.note) for r in report.rows]
    for name in ("net.bn.weight", "net.bn.bias", "net.bn.running_mean", "net.bn.running_var", "y"):
        assert report.row(name).status == MATCH
    assert any(s.startswith("net: parameters") for s in report.synchronised)
    # the weights are drawn at random on each side: only the copy makes them agree
    unsynced = run(BATCHNORM3D, sync=False)
    assert unsynced.row("net.bn.weight").status == DIFFERS


def test_sync_goes_through_the_parameter_map_it_is_given():
    import mindspore
    import torch

    tmod = torch.nn.BatchNorm3d(3)
    torch.nn.init.uniform_(tmod.weight, 0.5, 2.0)
    cell = mindspore.nn.BatchNorm3d(3)
    params = msmagic.port("import torch\nbn = torch.nn.BatchNorm3d(3)\n").module_params
    assert ms_name_for(tmod, "weight", params) == "bn2d.gamma"
    assert ms_name_for(torch.nn.Sequential(tmod), "0.running_var", params) == "0.bn2d.moving_variance"
    # the map given is the one followed: one naming another parameter copies nothing there
    wrong = {"torch.nn.BatchNorm3d": {k: f"nowhere.{k}" for k in ("weight", "bias", "running_mean", "running_var")}}
    assert ms_name_for(tmod, "weight", wrong) == "nowhere.weight"
    assert sync_module(tmod, cell, wrong) == []
    assert sorted(sync_module(tmod, cell, params)) == ["bias", "running_mean", "running_var", "weight"]
    np.testing.assert_array_equal(cell.bn2d.gamma.asnumpy(), tmod.weight.detach().numpy())


def test_layers_built_inside_a_torch_layer_are_named_too():
    # the port names the TransformerEncoderLayer it constructs; the LayerNorms the layer
    # builds inside itself are named by their mapping entries (weight -> gamma)
    import torch

    layer = torch.nn.TransformerEncoderLayer(8, 2, 16, 0.0)
    params = msmagic.port("import torch\nlayer = torch.nn.TransformerEncoderLayer(8, 2, 16, 0.0)\n").module_params
    assert "torch.nn.LayerNorm" not in params
    assert ms_name_for(layer, "norm1.weight", params) == "norm1.gamma"
    assert ms_name_for(layer, "linear1.weight", params) == "dense1.weight"


def test_a_shuffled_loader_records_pytorchs_orders_only_while_parity_runs_it():
    import mindspore
    import torch
    from mindspore.dataset import dataloader as mdl
    from torch.utils.data import DataLoader, TensorDataset

    from msmagic.parity_check.sync import follow_order, link_shuffle, unlink

    loader = DataLoader(TensorDataset(torch.arange(10)), batch_size=4, shuffle=True)
    link, problem = link_shuffle("loader", loader)
    assert link is not None and problem == "" and link.size == 10
    assert loader.sampler.__class__.__name__ == "RandomSampler"  # what the user sees is unchanged
    list(loader)  # a plain run: nothing recorded
    assert not link.pending
    link.recording = True
    torch_epochs = [[int(v) for b in loader for v in b[0]] for _ in range(2)]
    link.recording = False
    assert [list(o) for o in link.pending] == torch_epochs and torch_epochs[0] != torch_epochs[1]
    ms_loader = mdl.DataLoader(mdl.TensorDataset(mindspore.ops.arange(10)), batch_size=4, shuffle=True)
    assert follow_order(ms_loader, link) == "" and len(ms_loader) == 3
    ms_epochs = [[int(v) for b in ms_loader for v in b[0].asnumpy()] for _ in range(2)]
    assert ms_epochs == torch_epochs and (link.taken, link.missed) == (2, 0)
    # another epoch on MindSpore alone: its own random order, counted
    assert sorted(int(v) for b in ms_loader for v in b[0].asnumpy()) == list(range(10))
    assert link.missed == 1
    # a loader over other rows cannot follow
    other = mdl.DataLoader(list(range(7)), batch_size=4)
    assert follow_order(other, link) == "samples 7 rows where PyTorch's samples 10"
    unlink(loader)
    assert type(loader.batch_sampler.sampler).__name__ == "RandomSampler"


def test_a_random_tensor_dataset_is_copied_and_a_mismatch_is_a_row():
    report = run("import torch\nfrom torch.utils.data import TensorDataset\n"
                 "ds = TensorDataset(torch.rand(6, 2), torch.randint(0, 3, (6,)))\n"
                 "rows = [(float(a.sum()), int(b)) for a, b in ds]\n")
    assert report.ok, report.rows
    assert "ds: random values copied (the TensorDataset's tensors)" in report.synchronised
    # explicit MindSpore code whose dataset has float64 data: copied, and reported
    against = ("import mindspore\npass\n"
               "ds = mindspore.dataset.dataloader.TensorDataset(mindspore.ops.rand(6, 2).double(), "
               "mindspore.ops.randint(0, 3, (6,)))\n"
               "rows = [(float(a.sum()), int(b)) for a, b in ds]\n")
    report = run("import torch\nfrom torch.utils.data import TensorDataset\n"
                 "ds = TensorDataset(torch.rand(6, 2), torch.randint(0, 3, (6,)))\n"
                 "rows = [(float(a.sum()), int(b)) for a, b in ds]\n", against=against)
    row = report.row("ds")
    assert row.status == DIFFERS and "tensor 0 of the MindSpore dataset had shape (6, 2) and dtype " \
        "Float64, PyTorch's (6, 2) and torch.float32" in row.note
    assert report.row("rows").status == MATCH


# ----------------------------------------------------------------------------- options


@pytest.mark.parametrize(
    "values, message",
    [
        (dict(rtol=-1), "rtol must be a number >= 0, not -1"),
        (dict(atol=math.nan), "atol must be a number >= 0, not nan"),
        (dict(rtol="1e-3"), "rtol must be a number >= 0, not '1e-3'"),
        (dict(timeout=0), "timeout must be a positive number of seconds, not 0"),
        (dict(seed=1.5), "seed must be an integer, not 1.5"),
        (dict(device="TPU"), "device must be one of CPU, GPU, Ascend, not 'TPU'"),
        (dict(sync="yes"), "sync must be True or False, not 'yes'"),
        (dict(against=42), "against must be MindSpore code, a str or a PortResult (with .code), not int"),
    ],
)
def test_bad_options_are_one_line_value_errors(values, message):
    with pytest.raises(OptionError) as info:
        ParityOptions.create(**values)
    assert isinstance(info.value, ValueError)
    assert str(info.value) == message and "\n" not in message
    assert info.value.option == next(iter(values))


def test_options_are_frozen_normalised_and_derived():
    port = msmagic.port("import torch\nx = torch.ones(2)\n")
    opts = ParityOptions.create(rtol=1, timeout=2, against=port, device=None)
    assert (opts.rtol, opts.timeout, opts.device, opts.against) == (1.0, 2.0, "CPU", port.code)
    assert isinstance(opts.rtol, float)
    with pytest.raises(dataclasses.FrozenInstanceError):
        opts.rtol = 2.0
    derived = ParityOptions.create(opts, atol=0)
    assert (derived.atol, derived.rtol, derived.against) == (0.0, 1.0, port.code)
    with pytest.raises(OptionError, match="atol"):
        ParityOptions.create(opts, atol=-1)
    with pytest.raises(TypeError, match="unknown parity option 'view'"):
        ParityOptions.create(view="split")


def test_the_api_and_the_magic_validate_through_the_same_object(monkeypatch):
    seen = []
    check = ParityOptions.__post_init__

    def recording(self):
        seen.append(self.rtol)
        check(self)

    monkeypatch.setattr(ParityOptions, "__post_init__", recording)
    ported = []
    monkeypatch.setattr(msmagic, "port", lambda *a, **k: ported.append(a))
    with pytest.raises(OptionError, match="^rtol must be a number >= 0, not -1$"):
        msmagic.parity("x = 1\n", rtol=-1)
    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "msmagic")
    try:
        with pytest.raises(UsageError, match=r"^--rtol must be a number >= 0, not -1\.0$"):
            ip.run_cell_magic("ms_parity", "--rtol -1", "x = 1\n")
    finally:
        ip.run_line_magic("unload_ext", "msmagic")
    assert seen == [-1, -1.0] and ported == []  # checked once each, before anything ran


# ----------------------------------------------------------------------------- package


def test_msmagic_parity_runs_the_parity_check():
    report = msmagic.parity("x = 1\ny = [x, 2.5]\n", user_ns={"__name__": "__main__"}, shadow={})
    assert isinstance(report, ParityReport) and report.ok
    assert render_kind(report) == "parity" and render_kind(report.port) == "port"


def test_an_infinite_sampler_is_recorded_as_the_loader_reads_it():
    """makemore's InfiniteDataLoader: RandomSampler(replacement=True, num_samples=int(1e10))
    read with next(): parity records the indices PyTorch took (it must not draw all 1e10
    first) and the MindSpore loader takes the same batches, in a class and a loop."""
    import time
    import textwrap

    source = textwrap.dedent("""
        import torch
        from torch.utils.data import DataLoader, TensorDataset
        class InfiniteDataLoader:
            def __init__(self, dataset, **kwargs):
                sampler = torch.utils.data.RandomSampler(dataset, replacement=True, num_samples=int(1e10))
                self.loader = DataLoader(dataset, sampler=sampler, **kwargs)
                self.data_iter = iter(self.loader)
            def next(self):
                return next(self.data_iter)
        data = TensorDataset(torch.arange(20).float().reshape(10, 2), torch.arange(10))
        batches = InfiniteDataLoader(data, batch_size=3)
        seen = []
        for step in range(5):
            X, Y = batches.next()
            seen.append(Y.tolist())
        total = X.sum()
    """)
    start = time.time()
    report = msmagic.parity(source)
    assert time.time() - start < 120
    assert report.row("seen").status == "match" and report.row("total").status == "match", report.summary()
    assert report.row("seen").torch_shape == (5,)
