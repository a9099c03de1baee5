"""Fault injection: a real SIGINT (Ctrl-C) at random moments of a parity run.

Each trial runs, in a fresh Python process, ``msmagic.parity()`` on a training cell whose
loop runs 21 steps on the PyTorch side and on (until the signal) on the MindSpore side,
and sends the process SIGINT:

* (even trials) a random 0-3 s after the MindSpore side of the loop started, while
  MindSpore executes: MindSpore's own SIGINT handler is then in place and, without
  msmagic, ends the process with SIGTERM;
* (odd trials) a random moment between 0 and the time an uninterrupted port + the
  statements before the loop take: while the cell is ported, PyTorch runs, values are
  synchronised or compared.

A trial survived when the process ends normally with a report that says it was
interrupted (or, for a signal landing before the parity run started, with a
KeyboardInterrupt the script caught). ``--control`` runs the same trials with msmagic's
SIGTERM handler left out, to show what the handler changes.

Run: ``.venv/bin/python benchmarks/interrupt_parity.py [--trials 20] [--seed 0] [--control]``.
It prints each trial and the totals.
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CELL = """\
import torch
import torch.nn as nn
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(64, 16)
y = torch.randn(64, 1)
for step in range(100000):
    loss = ((model(x) - y) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step == 20 and type(loss).__module__.startswith("torch"):
        break
"""

SCRIPT = f"""
import contextlib, sys, time
started = time.perf_counter()
try:
    import msmagic
    import msmagic.signals
    from msmagic.parity_check import run as R
    if sys.argv[1] == "control":
        msmagic.signals.interrupts_from_mindspore = contextlib.nullcontext
    original = R._run_side

    def announced(code, *args):
        if "for step in" in code and "mindspore" in args:
            print("mindspore side of the loop", flush=True)
        return original(code, *args)

    R._run_side = announced
    print("started", flush=True)
    report = msmagic.parity({CELL!r}, timeout=600)
except KeyboardInterrupt:
    print("outcome: KeyboardInterrupt before the run", flush=True)
    sys.exit(0)
print("outcome:", "report, interrupted" if report.interrupted else "report, NOT interrupted", flush=True)
print("compared:", sorted(r.name for r in report.rows if r.status == "match"), flush=True)
"""


def trial(mode: str, during_mindspore: bool, delay: float) -> tuple[str, str]:
    """(where the signal landed, outcome) of one run."""
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
               GLOG_v="3")
    with tempfile.TemporaryDirectory() as cwd:
        proc = subprocess.Popen([sys.executable, "-c", SCRIPT, mode], cwd=cwd, env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        lines = []
        where = "never sent"
        try:
            wanted = "mindspore side of the loop" if during_mindspore else "started"
            for line in proc.stdout:
                lines.append(line)
                if line.strip() == wanted:
                    time.sleep(delay)
                    proc.send_signal(signal.SIGINT)
                    where = "MindSpore executing" if during_mindspore else "port/PyTorch/sync"
                    break
            rest, _ = proc.communicate(timeout=300)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    out = "".join(lines) + rest
    outcome = next((l.split(":", 1)[1].strip() for l in out.splitlines() if l.startswith("outcome:")),
                   None)
    if proc.returncode != 0:
        outcome = f"process ended by signal {-proc.returncode}" if proc.returncode < 0 \
            else f"exit status {proc.returncode}"
    return where, outcome or "no outcome printed"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--control", action="store_true",
                        help="leave msmagic's SIGTERM handler out")
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    mode = "control" if args.control else "msmagic"
    tally: Counter = Counter()
    survived = 0
    for k in range(args.trials):
        during = k % 2 == 0
        delay = rng.uniform(0, 3.0) if during else rng.uniform(0, 12.0)
        where, outcome = trial(mode, during, delay)
        ok = outcome in ("report, interrupted", "KeyboardInterrupt before the run")
        survived += ok
        tally[(where, outcome)] += 1
        print(f"trial {k + 1:3d}: +{delay:5.2f} s, {where:20s} -> {outcome}", flush=True)
    print(f"\n{mode}: {survived}/{args.trials} trials survived with a report or a caught "
          "KeyboardInterrupt")
    for (where, outcome), n in sorted(tally.items()):
        print(f"  {n:3d}  {where:20s} {outcome}")
    return 0 if survived == args.trials or args.control else 1


if __name__ == "__main__":
    sys.exit(main())
