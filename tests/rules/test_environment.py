"""Environment idioms (DEV006, DEV008, UTL005-UTL008), executed: the port runs without
torch, computes what PyTorch computed, and a notebook cell running twice does not raise."""

import os
import subprocess
import sys

import numpy as np

import msmagic
from msmagic.parity_check import run_pair

from .support import check, src

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

SEEDING_CELL = src("""
    import torch
    seed = 42
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed(seed)
        torch.cuda.manual_seed_all(seed)
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False
    torch.use_deterministic_algorithms(True)
    x = torch.rand(3)
""")


def _run_fresh(script: str) -> str:
    env = dict(os.environ, GLOG_v="3", PYTHONPATH=ROOT)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout


def test_seeding_cell_runs_twice_in_one_process_and_sets_determinism():
    """In a fresh process, after a kernel ran: the ported seeding cell runs twice (a
    notebook re-running it) without MindSpore's "can not be set repeatedly", torch is
    unimportable, and deterministic computing is on."""
    ported = msmagic.port(SEEDING_CELL).code
    assert "torch" not in ported.replace("mindspore", "")
    stdout = _run_fresh(src(f"""
        import sys
        sys.modules["torch"] = None  # the port must not need torch
        import mindspore
        (mindspore.Tensor([1.0]) + 1).asnumpy()
        code = {ported!r}
        first, second = {{}}, {{}}
        exec(code, first)
        exec(code, second)
        print(mindspore.get_context("deterministic"))
        print((first["x"] == second["x"]).all())
    """))
    assert stdout.split() == ["ON", "True"]  # set_seed repeats the draws


def test_seeding_cell_parity():
    run = run_pair(SEEDING_CELL)
    assert run.torch_error is None and run.ms_error is None, run.explain()
    assert run.agree("seed", "x"), run.explain()
    assert not run.port.unsupported


def test_accelerator_device_pick_runs_and_matches():
    run = check(src("""
        import torch
        import torch.nn as nn
        device = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"
        dev = torch.device("cuda" if torch.cuda.is_available() else "mps" if torch.backends.mps.is_available() else "cpu")
        torch.manual_seed(0)
        model = nn.Linear(3, 2).to(device)
        x = torch.ones(4, 3).to(dev)
        y = model(x)
        n = torch.cuda.device_count()
        on_gpu = torch.accelerator.is_available()
        index = torch.cuda.current_device() if torch.cuda.is_available() else 0
    """), "y", "n", "on_gpu", "index", rule="DEV006")
    assert run.ms_ns["device"] == "cpu" and run.ms_ns["dev"] == "CPU"
    assert "import torch" not in run.port.code


def test_device_name_and_computed_device_on_the_mindspore_side():
    code = msmagic.port(src("""
        import torch
        name = torch.cuda.get_device_name(0)
        wanted = "cpu"
        dev = torch.device(wanted)
    """)).code
    ns = {}
    exec(compile(code, "<port>", "exec"), ns)
    assert ns["name"] == "CPU" and ns["dev"] == "CPU"


def test_module_constants_are_the_same_floats():
    run = check(src("""
        import torch
        x = torch.linspace(-5, 5, 7)
        y = x.clamp(min=-torch.inf, max=torch.pi)
        z = torch.exp(x) * torch.e
        w = torch.where(x > 0, x, torch.tensor(torch.nan))
        inf_is_inf = torch.inf == float("inf")
    """), "y", "z", "inf_is_inf", rule="UTL005")
    assert np.isnan(run.ms_ns["w"].asnumpy()[0])


def test_print_options_shape_how_a_mindspore_tensor_prints():
    code = msmagic.port(src("""
        import torch
        torch.set_printoptions(precision=2, sci_mode=False)
        x = torch.tensor([1.23456, 2e-8, 3.5])
        shown = str(x)
        torch.set_printoptions(profile="short")
        short = str(torch.arange(2000.0))
        torch.set_printoptions(profile="default")
    """)).code
    ns = {}
    exec(compile(code, "<port>", "exec"), ns)
    assert ns["shown"] == "[1.23 0.   3.5 ]"
    assert ns["short"] == "[   0.    1. ... 1998. 1999.]"


def test_default_dtype_and_thread_count():
    run = check(src("""
        import torch
        torch.set_num_threads(2)
        torch.set_default_dtype(torch.float32)
        dt = torch.get_default_dtype()
        x = torch.zeros(2, 3, dtype=dt) + 1.5
        is_f32 = dt == torch.float32
    """), "x", "is_f32", rule="UTL007")
    assert not run.port.unsupported


def test_onnx_export_writes_the_file(tmp_path):
    code = msmagic.port(src(f"""
        import torch
        import torch.nn as nn
        torch.manual_seed(0)
        model = nn.Linear(3, 2)
        dummy = torch.ones(1, 3)
        torch.onnx.export(model, dummy, {str(tmp_path / "model.onnx")!r}, input_names=["x"])
    """)).code
    ns = {}
    exec(compile(code, "<port>", "exec"), ns)
    assert (tmp_path / "model.onnx").stat().st_size > 0
