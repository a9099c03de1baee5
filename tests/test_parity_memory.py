"""``%%ms_parity`` on a cell with large tensors stays within 3x the cell's own peak
memory, and keeps nothing of them after the report beyond the two sides' values.

Measured as users meet it: a real IPython shell in a fresh process
(``benchmarks/bench_parity_memory.py --child``), the resident set's growth over the
cell. The cell makes two 64 MiB float32 tensors; comparing them in float64 all at once
took some 9x the cell's peak."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "benchmarks" / "bench_parity_memory.py"
SIDE = 4096
PAIR_MIB = 2 * SIDE * SIDE * 4 / 2**20  # the cell's two tensors


def _measure(mode: str) -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run(
        [sys.executable, str(BENCH), "--child", mode, "--side", str(SIDE)],
        env=env, capture_output=True, text=True, timeout=600,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_parity_memory_stays_within_three_times_the_cells_and_is_released():
    bare = _measure("torch")
    assert 0.9 * PAIR_MIB < bare["peak"] < 1.5 * PAIR_MIB
    parity = _measure("parity")
    assert parity["peak"] <= 3 * bare["peak"], (parity, bare)
    # after the report: the PyTorch values and their MindSpore copies, nothing more
    assert parity["after_report"] < 2.5 * PAIR_MIB, parity
    # names deleted on both sides: at most what MindSpore's memory pool keeps (the pair)
    assert parity["after_clearing"] < 1.5 * PAIR_MIB, parity
