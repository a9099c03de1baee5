"""Distributed rules (DDP001-DDP004): the single-process case runs both sides with
run_pair (PyTorch really joins a gloo group of one and wraps in DDP); the ported
init() is also run under msrun with one worker."""

import ast
import os
import socket
import subprocess
import sys

import msmagic
from tests.rules.support import findings, rules, run_pair, src


def _port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def record_rank(rank, path, scale):
    """A spawn target importable by PyTorch's spawned processes."""
    with open(path, "w") as f:
        f.write(str((rank + 1) * scale))


def test_single_process_ddp_computes_the_models_outputs():
    run = run_pair(src(f"""
        import torch
        import torch.nn as nn
        import torch.distributed as dist
        from torch.nn.parallel import DistributedDataParallel as DDP
        dist.init_process_group(backend="gloo", init_method="tcp://127.0.0.1:{_port()}", rank=0, world_size=1)
        rank = dist.get_rank()
        world = dist.get_world_size()
        net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
        model = DDP(net, device_ids=None)
        x = torch.arange(20.0).reshape(5, 4) / 10
        out = model(x)
        inner = model.module
        inner_out = inner(x)
        dist.destroy_process_group()
    """), names=["rank", "world", "x", "out", "inner_out", "net"])
    assert run.torch_error is None and run.ms_error is None, run.explain()
    assert run.agree("rank", "world", "out", "inner_out"), run.explain()
    code = run.port.code
    ast.parse(code)
    assert ("import os\n" in code and "if os.getenv('MS_ROLE'):  # started by msrun: one process per device\n"
            "    mindspore.communication.init()\n"
            "    mindspore.set_auto_parallel_context(parallel_mode=mindspore.ParallelMode.DATA_PARALLEL, "
            "gradients_mean=True)\n") in code
    assert "model = net  # msmagic: DDP002" in code and "inner = model\n" in code
    assert "if os.getenv('MS_ROLE'):  # started by msrun: one process per device\n" \
           "    mindspore.communication.release()\n" in code
    assert "world = mindspore.communication.get_group_size()" in code
    assert {"DDP001", "DDP002", "DDP003"} <= rules(run)
    assert findings(run) == {"DDP002"}  # the gradient-reducer instruction


def test_spawn_calls_the_function_once_as_rank_zero(tmp_path):
    """PyTorch spawns one process running record_rank(0, ...); the port calls it here."""
    run = run_pair(src("""
        import torch.multiprocessing as mp
        mp.spawn(record_rank, args=(path_t, 2.5), nprocs=1)
        value = float(open(path_t).read())
    """), torch_ns={"record_rank": record_rank, "path_t": str(tmp_path / "t.txt")},
        ms_ns={"record_rank": record_rank, "path_t": str(tmp_path / "m.txt")})
    assert run.torch_error is None and run.ms_error is None, run.explain()
    assert "record_rank(0, path_t, 2.5)  # msmagic: DDP004" in run.port.code
    assert run.agree("value"), run.explain()
    assert "DDP004" in rules(run) and "DDP004" in findings(run)
    finding = next(f for f in run.port.unsupported if f.rule_id == "DDP004")
    assert finding.line == 2 and "msrun --worker_num=1" in finding.reason


def test_spawn_with_args_variable_and_group_argument_flagged():
    port = msmagic.port(src("""
        import torch.distributed as dist
        import torch.multiprocessing as mp
        def main(rank, world):
            dist.init_process_group("nccl", rank=rank, world_size=world)
            r = dist.get_rank(group=grp)
        mp.spawn(main, args=spawn_args, nprocs=4, join=True)
    """))
    code = port.code
    ast.parse(code)
    assert "main(0, *spawn_args)" in code
    assert "    if os.getenv('MS_ROLE'):" in code  # the guard sits in the function body
    assert "r = mindspore.communication.get_rank()  # msmagic: DDP003" in code
    reasons = {f.rule_id: f.reason for f in port.unsupported}
    assert reasons["DDP003"].startswith("group=grp")
    assert "msrun --worker_num=4 --local_worker_num=4" in reasons["DDP004"]
    assert msmagic.port(code).code == code  # idempotent


def test_init_used_as_value_is_flagged():
    port = msmagic.port(src("""
        import torch.distributed as dist
        ok = dist.init_process_group("gloo") or True
    """))
    assert "ok = mindspore.communication.init() or True  # msmagic: DDP001" in port.code
    assert [f.rule_id for f in port.unsupported] == ["DDP001"]


def test_ported_init_runs_under_msrun(tmp_path):
    """Under msrun (one worker, CPU) the guard is taken and init() joins the job."""
    code = msmagic.port(src("""
        import torch.distributed as dist
        dist.init_process_group("gloo")
        print("RANK", dist.get_rank(), dist.get_world_size(), flush=True)
        dist.destroy_process_group()
    """)).code
    script = tmp_path / "job.py"
    script.write_text("import mindspore\nmindspore.set_device('CPU')\n" + code
                      + "print('MODE', mindspore.get_auto_parallel_context('parallel_mode'), flush=True)\n")
    bindir = os.path.dirname(sys.executable)
    env = dict(os.environ, PATH=bindir + os.pathsep + os.environ.get("PATH", ""), GLOG_v="3")
    out = subprocess.run(
        [os.path.join(bindir, "msrun"), "--worker_num=1", "--local_worker_num=1",
         f"--master_port={_port()}", f"--log_dir={tmp_path / 'logs'}", "--join=True", str(script)],
        capture_output=True, text=True, env=env, timeout=300, cwd=tmp_path)
    log = (tmp_path / "logs" / "worker_0.log").read_text()
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:] + log[-2000:]
    assert "RANK 0 1" in log and "MODE data_parallel" in log
