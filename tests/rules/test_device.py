"""Device rules (DEV001-DEV005): every port is executed on both sides with run_pair."""

import ast
import os
import subprocess
import sys

import msmagic
from msmagic.parity_check import run_pair
from tests.rules.support import rule_list as rules
from tests.rules.support import src

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_device_statement_becomes_target_and_guarded_set_device():
    run = run_pair(src("""
        import torch
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        has_gpu = torch.cuda.is_available()
        on_gpu = device == torch.device("cuda")
    """))
    code = run.port.code
    assert 'device = "GPU" if mindspore.device_context.gpu.is_available() else "CPU"\n' in code
    assert "if mindspore.get_current_device() != (device, 0):\n    mindspore.set_device(device)\n" in code
    assert 'on_gpu = device == "GPU"' in code
    assert {"DEV001", "DEV002"} <= set(rules(run.port))
    assert run.ms_error is None and run.torch_error is None, run.explain()
    assert run.agree("has_gpu", "on_gpu"), run.explain()
    assert run.ms_ns["device"] == "CPU"  # this machine has no GPU for MindSpore
    import mindspore

    assert mindspore.get_current_device().device_target == "CPU"


def test_guard_keeps_set_device_from_raising_after_kernels_ran():
    """In a fresh process: a kernel runs first (as in a notebook), then the ported cell
    runs twice. The guarded port must not raise; a bare set_device does."""
    ported = msmagic.port(src("""
        import torch
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    """)).code
    script = src(f"""
        import mindspore
        (mindspore.Tensor([1.0]) + 1).asnumpy()
        code = {ported!r}
        exec(code, {{}})
        exec(code, {{}})
        try:
            mindspore.set_device("CPU")
        except RuntimeError:
            print("bare set_device raises")
        print("ported ok")
    """)
    env = dict(os.environ, GLOG_v="3", PYTHONPATH=ROOT)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "bare set_device raises" in out.stdout and "ported ok" in out.stdout


def test_literal_device_index_goes_to_set_device():
    port = msmagic.port(src("""
        import torch
        device = torch.device("cuda:1")
        cpu = torch.device('cpu')
        first = torch.device("cuda", 0)
    """))
    assert "device = \"GPU\"\nif mindspore.get_current_device() != (device, 1):\n" \
           "    mindspore.set_device(device, 1)\n" in port.code
    assert "cpu = 'CPU'\n" in port.code
    assert "first = \"GPU\"\nif mindspore.get_current_device() != (first, 0):\n" in port.code
    assert not port.unsupported


def test_device_inside_a_function_is_guarded_at_its_indentation():
    run = run_pair(src("""
        import torch
        def pick():
            dev = torch.device("cpu")  # host
            return dev
        chosen = pick() == torch.device("cpu")
    """))
    assert ('    dev = "CPU"  # host\n    if mindspore.get_current_device() != (dev, 0):\n'
            '        mindspore.set_device(dev)\n') in run.port.code
    assert run.agree("chosen"), run.explain()


def test_device_findings_keep_torch_and_comment():
    port = msmagic.port(src("""
        import torch
        rank = 1
        a = torch.device(f"cuda:{rank}")
        b = torch.device("xpu")
        c = torch.device("cuda:1" if torch.cuda.is_available() else "cpu")
    """))
    found = [(f.line, f.rule_id) for f in port.unsupported]
    assert found == [(3, "DEV001"), (4, "DEV001"), (5, "DEV001")]
    assert 'a = torch.device(f"cuda:{rank}")  # msmagic: DEV001' in port.code
    assert "c = torch.device(" in port.code and "mindspore.set_device(" not in port.code
    ast.parse(port.code)


def test_device_from_a_variable_and_mps():
    """A device name computed at run time is mapped by name when the code runs; "mps"
    (MindSpore has no Metal target) is the CPU."""
    run = run_pair(src("""
        import torch
        name = "cpu"
        a = torch.device(name)
        b = torch.device("mps" if torch.backends.mps.is_available() else name)
        same = a == b
        x = torch.ones(2).to(a) * 3
    """))
    assert run.torch_error is None and run.ms_error is None, run.explain()
    assert run.agree("same", "x"), run.explain()
    assert run.ms_ns["a"] == "CPU" and not run.port.unsupported


def test_model_and_data_moves_removed_forward_matches():
    run = run_pair(src("""
        import torch
        import torch.nn as nn
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2)).to(device)
        x = torch.randn(3, 4).to(device)
        y = model(x)
        out = y.detach().cpu().numpy()
        if torch.cuda.is_available():
            model.cuda()
        host = y.cpu()
    """))
    code = run.port.code
    assert ".to(" not in code and ".cuda(" not in code and ".cpu(" not in code
    assert "model = nn.SequentialCell(" in code and code.count("model.") == 0
    assert "out = y.asnumpy()\n" in code and "host = y\n" in code
    assert rules(run.port).count("DEV004") == 4
    assert run.agree("y", "out", "host"), run.explain()


def test_cuda_and_cpu_with_arguments_are_removed():
    run = run_pair(src("""
        import torch
        t = torch.tensor([1.0, 2.0])
        a = t.cuda(0, non_blocking=True) if torch.cuda.is_available() else t.cpu()
        b = t.cpu() * 2
    """))
    assert "a = t if mindspore.device_context.gpu.is_available() else t\n" in run.port.code
    assert "b = t * 2\n" in run.port.code
    assert run.agree("a", "b"), run.explain()


def test_to_keeps_dtype_and_tensor_arguments():
    run = run_pair(src("""
        import torch
        device = torch.device("cpu")
        x = torch.tensor([[1.5, -2.25], [3.0, 4.5]])
        ref = torch.tensor([1, 2], dtype=torch.int32)
        a = x.to(device, torch.float16)
        b = x.to(device=device, dtype=torch.float64)
        c = x.to(torch.int32)
        d = x.to(ref)
        e = x.to("cpu", non_blocking=True)
        f = x.to(x.dtype)
    """))
    code = run.port.code
    assert "a = x.to(mindspore.float16)\n" in code
    assert "b = x.to(dtype=mindspore.float64)\n" in code
    assert "c = x.to(mindspore.int32)\n" in code
    assert "d = x.to(ref)\n" in code and "e = x\n" in code and "f = x.to(x.dtype)\n" in code
    assert run.agree("a", "b", "c", "d", "e", "f"), run.explain()
    assert run.row("a").ms_dtype == "Float16" and run.row("d").ms_dtype == "Int32"


def test_to_with_unrecognised_argument_is_flagged():
    # no call site says what target holds: a device or a dtype
    port = msmagic.port(src("""
        import torch
        def move(t, target):
            return t.to(target)
        y = move(torch.tensor([1.0]), get_target())
    """))
    assert [(f.line, f.rule_id) for f in port.unsupported] == [(3, "DEV004"), (4, "GEN004")]  # and its call
    assert "return t.to(target)  # msmagic: DEV004" in port.code
    ast.parse(port.code)


def test_device_keyword_dropped_from_factory():
    run = run_pair(src("""
        import torch
        device = torch.device("cpu")
        x = torch.tensor([1.0, 2.0], device=device, pin_memory=False)
    """))
    assert "x = mindspore.Tensor([1.0, 2.0])\n" in run.port.code
    assert rules(run.port).count("DEV003") == 2
    assert run.agree("x"), run.explain()


def test_numpy_chains_become_asnumpy():
    run = run_pair(src("""
        import torch
        import torch.nn as nn
        t = torch.tensor([1.5, -2.0, 0.25])
        w = nn.Parameter(torch.tensor([2.0, 3.0, 4.0]))
        a = t.detach().cpu().numpy()
        b = t.numpy()
        c = t.cpu().numpy()
        d = (w * t).detach().numpy()
    """))
    code = run.port.code
    assert "a = t.asnumpy()\nb = t.asnumpy()\nc = t.asnumpy()\nd = (w * t).asnumpy()\n" in code
    assert "stop_gradient" not in code
    assert "PRC002" not in rules(run.port)
    assert [e.detail for e in run.port.edits if e.rule_id == "DEV004"] == []
    assert rules(run.port).count("DEV005") == 4
    assert run.agree("a", "b", "c", "d"), run.explain()
    assert type(run.ms_ns["d"]).__module__ == "numpy"


def test_reporting_the_port_again_changes_nothing():
    first = msmagic.port(src("""
        import torch
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        x = torch.tensor([1.0, 2.0]).to(device)
        h = x.to(device, torch.float16)
        n = x.detach().cpu().numpy()
        r = torch.special.airy_ai(x)
    """))
    assert "import torch  # msmagic" in first.code  # torch stays in scope for the re-port
    again = msmagic.port(first.code)
    assert again.code == first.code
    assert not [e for e in again.edits if e.rule_id.startswith("DEV")]
    assert not [f for f in again.unsupported if f.rule_id.startswith("DEV")]


def test_device_count_and_mps_queries_answer_for_mindspore():
    run = run_pair(src("""
        import torch
        n_gpus = torch.cuda.device_count()
        use_mps = torch.backends.mps.is_available() or torch.backends.mps.is_built()
        device = "cuda" if n_gpus > 0 else "cpu"
    """))
    assert run.ms_error is None and run.torch_error is None, run.explain()
    assert "DEV006" in rules(run.port)
    assert "mindspore.device_context.gpu.device_count() if mindspore.device_context.gpu.is_available() else 0" \
        in run.port.code
    assert run.ms_ns["n_gpus"] == 0 and run.ms_ns["use_mps"] is False  # a CPU-only MindSpore
    assert run.torch_ns["n_gpus"] == run.ms_ns["n_gpus"] and run.ms_ns["device"] == "cpu"


def test_set_default_device_is_a_guarded_set_device():
    run = run_pair(src("""
        import torch
        torch.set_default_device("cpu")
        x = torch.ones(2, 3)
        device = torch.device("cpu")
        torch.set_default_device(device)
        y = x * 2
    """))
    assert run.ms_error is None and run.torch_error is None, run.explain()
    assert run.agree("x", "y"), run.explain()
    assert "DEV007" in rules(run.port) and "set_default_device" not in run.port.code
    import mindspore

    assert mindspore.get_current_device().device_target == "CPU"


def test_device_and_dtype_as_types_run_alike():
    """``torch.device``/``torch.dtype`` in annotations and isinstance checks become
    ``str``/``mindspore.Type``: the ported function gives PyTorch's answers."""
    run = run_pair(
        "import torch\n"
        "def describe(x: torch.Tensor, dev: torch.device, dt: torch.dtype = torch.float32) -> int:\n"
        "    return int(isinstance(dev, torch.device)) + 2 * int(isinstance(dt, torch.dtype))\n"
        "device = torch.device('cpu')\n"
        "code = describe(torch.ones(2), device, torch.float64)\n"
        "other = int(isinstance(torch.ones(2).dtype, torch.dtype))\n"
    )
    assert run.torch_error is None and run.ms_error is None, run.explain()
    assert run.torch_ns["code"] == 3 and run.agree("code", "other"), run.explain()
    assert "dev: str" in run.port.code and "mindspore.Type" in run.port.code


def test_to_with_a_dtype_every_call_site_passes_keeps_the_call():
    # the call sites say target holds a dtype: Tensor.to(dtype) is the same call in MindSpore
    run = run_pair(src("""
        import torch
        def move(t, target):
            return t.to(target)
        y = move(torch.tensor([1.5, 2.0]), torch.float16)
    """))
    assert not run.port.unsupported
    assert "return t.to(target)" in run.port.code
    y_torch, y_ms = run.torch_ns["y"], run.ms_ns["y"]
    assert str(y_torch.dtype) == "torch.float16" and str(y_ms.dtype) == "Float16"
    assert y_ms.asnumpy().tolist() == y_torch.numpy().tolist() == [1.5, 2.0]


def test_cuda_synchronize_before_reading_a_timer():
    """makemore's ``torch.cuda.synchronize()`` before ``time.time()``: MindSpore's runtime
    synchronize waits for its device's streams (and returns on CPU), so the port needs no
    torch, guarded or not, in a function too."""
    run = run_pair(src("""
        import time
        import torch
        def timed(x):
            t0 = time.time()
            y = x * 2
            if torch.cuda.is_available():
                torch.cuda.synchronize()
            return y, time.time() >= t0
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        y, later = timed(torch.ones(3))
    """))
    assert run.torch_error is None and run.ms_error is None, run.explain()
    assert "torch" not in run.port.code.replace("import mindspore", "") and "DEV006" in rules(run.port)
    assert run.row("y").status == "match" and run.ms_ns["later"] is True
    # unguarded (PyTorch raises without CUDA): MindSpore's call returns on CPU
    bare = msmagic.port("import torch\ntorch.cuda.synchronize()\n").code
    assert "torch" not in bare.replace("import mindspore", "")
    exec(compile(bare, "<port>", "exec"), {})
