"""Rendering time of ``%%ms_port``'s output (text/plain and text/html) against the
number of changed lines, and how it grows.

The cell is ``N`` changed lines (``x{i} = torch.ones(2)``, each ported), each followed
by seven unchanged lines, so the diff has ``N`` hunks: the shape whose rendering grew
quadratically (``difflib`` recursing once per hunk, each edit and finding checked against
every hunk, the whole text joined and hashed once per displayed line). With
``--repeated`` the unchanged lines are all the same line (``a = 1``), the shape that
made ``SequenceMatcher(autojunk=False)`` cubic.

Each cell is ported once (not timed); the figure is ``mimebundle(result)``, best of
``--repeat`` runs. Printed: the time per size, the growth factor per size step =
(time ratio) / (changed-line ratio)  [target <= 1.3; 1.0 is linear], and the size of the
HTML (bounded: beyond ``MAX_DIFF_ROWS`` rows the diff is summarised).

Run: ``.venv/bin/python benchmarks/bench_render.py [--sizes 2000,4000,20000]
[--repeated] [--repeat 1] [--repo PATH]``. ``--repo`` renders with the msmagic found in
PATH (e.g. a git worktree of an older commit); a size is abandoned after ``--limit``
seconds (printed as such).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

_CHILD = r"""
import json, sys, time
from msmagic.engine.pipeline import port
from msmagic.render import mimebundle
n, repeated, repeat = int(sys.argv[1]), sys.argv[2] == "1", int(sys.argv[3])
lines = ["import torch"]
for i in range(n):
    lines.append(f"x{i} = torch.ones(2)")
    lines += ["a = 1"] * 7 if repeated else [f"a{i}_{k} = {k}" for k in range(7)]
result = port("\n".join(lines) + "\n")
best = None
for _ in range(repeat):
    t = time.perf_counter()
    bundle = mimebundle(result)
    took = time.perf_counter() - t
    best = took if best is None else min(best, took)
print(json.dumps({"seconds": best, "html_bytes": len(bundle["text/html"]),
                  "text_bytes": len(bundle["text/plain"]), "lines": len(lines)}))
"""


def measure(n: int, repeated: bool, repeat: int, repo: Path, limit: float):
    env = dict(os.environ, PYTHONPATH=str(repo))
    try:
        out = subprocess.run(
            [sys.executable, "-c", _CHILD, str(n), "1" if repeated else "0", str(repeat)],
            env=env, cwd=str(repo), capture_output=True, text=True, timeout=limit, check=True,
        )
    except subprocess.TimeoutExpired:
        return None
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="2000,4000,20000")
    ap.add_argument("--repeated", action="store_true")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--repo", type=Path, default=ROOT)
    ap.add_argument("--limit", type=float, default=600.0, help="seconds per size")
    args = ap.parse_args(argv)
    sizes = [int(x) for x in args.sizes.split(",")]
    shape = "repeated unchanged lines" if args.repeated else "distinct unchanged lines"
    print(f"render of N changed lines, 8 lines each ({shape}); msmagic from {args.repo}")
    prev = None
    for n in sizes:
        got = measure(n, args.repeated, args.repeat, args.repo, args.limit)
        if got is None:
            print(f"  N={n:>6}: not finished in {args.limit:.0f} s")
            prev = None
            continue
        line = (
            f"  N={n:>6} ({got['lines']:>6} lines): render {got['seconds']:7.2f} s, "
            f"html {got['html_bytes'] / 1e6:6.2f} MB, text {got['text_bytes'] / 1e6:5.2f} MB"
        )
        if prev is not None:
            growth = (got["seconds"] / prev[1]) / (n / prev[0])
            line += f", growth factor vs N={prev[0]}: {growth:.2f}"
        print(line)
        prev = (n, got["seconds"])


if __name__ == "__main__":
    main()
