"""Memory of ``%%ms_parity`` on a cell that makes large tensors, against the cell's own.

The cell makes two float32 tensors of ``--side`` x ``--side`` (8192: 256 MB each) and a
scalar from them. Each figure is measured in a fresh process, after the imports and a
warm-up run, as the growth of the resident set over the cell (``VmHWM`` reset through
``/proc/self/clear_refs``, then read back):

* the cell's own peak, run bare in PyTorch;
* the peak of ``%%ms_parity`` on it in a real IPython shell, and the ratio  [<= 3x];
* what stays resident after the report (both sides keep their values: the user
  namespace and the MindSpore shadow namespace), and after deleting the names and
  ``%ms_shadow --clear``  [only MindSpore's own memory pool, see below];
* for scale, what bare MindSpore keeps after deleting the same two tensors (its CPU
  memory pool keeps freed blocks: msmagic has no hold on them).

Run: ``.venv/bin/python benchmarks/bench_parity_memory.py [--side 8192] [--repo PATH]``.
``--repo`` runs the msmagic found in PATH (e.g. a git worktree of an older commit).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CELL = """import torch
a = torch.ones({side}, {side})
b = a * 2
s = float(b.sum())
"""


def _mib(key: str) -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key):
                return int(line.split()[1]) / 1024
    raise KeyError(key)


def _reset_peak() -> None:
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


def child(mode: str, side: int) -> dict:
    """One measurement in this (fresh) process, in MiB over the resident set before."""
    cell = CELL.format(side=side)
    if mode == "torch":
        import torch  # noqa: F401

        exec(CELL.format(side=4), {})
        gc.collect()
        _reset_peak()
        base = _mib("VmRSS")
        ns: dict = {}
        exec(cell, ns)
        return {"peak": _mib("VmHWM") - base}
    if mode == "mindspore":
        import mindspore
        from mindspore import ops

        (ops.ones((4,), mindspore.float32) * 2).asnumpy()
        gc.collect()
        base = _mib("VmRSS")
        a = ops.ones((side, side), mindspore.float32)
        b = a * 2
        float(b.sum().asnumpy())
        del a, b
        gc.collect()
        return {"kept_after_del": _mib("VmRSS") - base}
    from IPython.testing.globalipapp import start_ipython

    ip = start_ipython()
    ip.run_line_magic("load_ext", "msmagic")
    ip.run_cell_magic("ms_parity", "", CELL.format(side=4))
    gc.collect()
    _reset_peak()
    base = _mib("VmRSS")
    ip.run_cell_magic("ms_parity", "", cell)
    peak = _mib("VmHWM") - base
    gc.collect()
    after = _mib("VmRSS") - base
    for name in ("a", "b", "s"):
        ip.user_ns.pop(name, None)
    ip.run_line_magic("ms_shadow", "--clear")
    gc.collect()
    return {"peak": peak, "after_report": after, "after_clearing": _mib("VmRSS") - base}


def measure(mode: str, side: int, repo: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=str(repo))
    out = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--child", mode, "--side", str(side)],
        env=env, capture_output=True, text=True, check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--side", type=int, default=8192)
    ap.add_argument("--repo", type=Path, default=ROOT)
    ap.add_argument("--child", choices=["torch", "mindspore", "parity"])
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child, args.side)))
        return
    tensor = args.side * args.side * 4 / 2**20
    bare = measure("torch", args.side, args.repo)
    ms = measure("mindspore", args.side, args.repo)
    par = measure("parity", args.side, args.repo)
    print(f"two float32 tensors of {tensor:.0f} MiB each; msmagic from {args.repo}")
    print(f"  cell alone (PyTorch) peak:        {bare['peak']:8.0f} MiB")
    print(f"  %%ms_parity peak:                 {par['peak']:8.0f} MiB  ({par['peak'] / bare['peak']:.2f}x the cell's)  [<= 3x]")
    print(f"  resident after the report:        {par['after_report']:8.0f} MiB  (both sides keep their values)")
    print(f"  after deleting both sides' names: {par['after_clearing']:8.0f} MiB")
    print(f"  bare MindSpore keeps after del:   {ms['kept_after_del']:8.0f} MiB  (its memory pool)")


if __name__ == "__main__":
    main()
