"""Fault injection: SIGKILL ``python -m msmagic port NB --in-place`` at random moments.

Each trial copies a large generated notebook (default ~36 MiB: torch cells to port, plus
cells the port leaves alone whose stream outputs make up the size) into an empty
directory, starts the port in a subprocess and kills it with SIGKILL, either

* (even trials) at the k-th change seen in the directory (a name appearing or
  disappearing, a size changing; k = 1..6 in turn), polling the directory as fast as
  Python can, or
* (odd trials) after a random delay between 0 and 1.1 x the time an uninterrupted run takes.

After the kill, the notebook must be byte for byte either the original or the complete
ported file (computed once by an uninterrupted run), and valid JSON; every backup
(``NB.ipynb.bak``, ``NB.ipynb.bak.N``) must be byte for byte the original. A trial that
meets all of this survived.

With ``--rerun`` each trial then runs the port again, uninterrupted, as a user would after
a kill, and counts the temporary files (``*.msmagic-tmp``) still there afterwards: the next
run on a target removes those a killed run left.

Run: ``.venv/bin/python benchmarks/kill_in_place.py [--trials 200] [--mib 36] [--seed 0] [--rerun]``.
It prints the trials, how many survived, and where the kills landed.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NAME = "nb.ipynb"


def build_notebook(path: Path, size: int, torch_cells: int = 40) -> bytes:
    """Write a notebook of about *size* bytes to *path*; its bytes.

    Odd cells are torch cells the port rewrites (their outputs are cleared); even cells
    print and keep outputs that make up the size, so the port is quick and the write large.
    """
    import nbformat
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

    def notebook(filler: int) -> bytes:
        rng = random.Random(size)
        line = "loss {:.6f} accuracy {:.4f} step {}\n"
        cells = [new_markdown_cell("# A long training log"),
                 new_code_cell("import torch\nimport torch.nn as nn", execution_count=1)]
        for i in range(torch_cells):
            cells.append(new_code_cell(
                f"layer{i} = nn.Linear({i + 1}, {i + 2})\nx{i} = torch.ones(2, {i + 1})\ny{i} = layer{i}(x{i})",
                execution_count=2 * i + 2, outputs=[new_output("stream", name="stdout", text="ok\n")]))
            text, n = [], 0
            while n < filler:
                row = line.format(rng.random(), rng.random(), n)
                text.append(row)
                n += len(row)
            cells.append(new_code_cell(f"print(log{i})", execution_count=2 * i + 3,
                                       outputs=[new_output("stream", name="stdout", text="".join(text))]))
        return (nbformat.writes(new_notebook(cells=cells)) + "\n").encode("utf-8")

    filler = max(size // torch_cells, 1)
    data = notebook(filler)
    data = notebook(max(int(filler * size / len(data)), 1))  # the JSON layout adds ~25%
    path.write_bytes(data)
    return data


def _command(target: Path) -> list:
    return [sys.executable, "-m", "msmagic", "port", str(target), "--in-place", "--quiet"]


def _env() -> dict:
    return dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))


def _snapshot(directory: Path) -> tuple:
    entries = []
    with os.scandir(directory) as it:
        for entry in it:
            try:
                entries.append((entry.name, entry.stat().st_size))
            except OSError:  # removed between listing and stat
                entries.append((entry.name, -1))
    return tuple(sorted(entries))


@dataclass
class Reference:
    original: bytes
    ported: bytes
    seconds: float  # an uninterrupted run, start to exit


def reference(original: bytes, workdir: Path) -> Reference:
    """The ported bytes and the run time of an uninterrupted port of *original*."""
    _reset(workdir, original)
    start = time.perf_counter()
    proc = subprocess.run(_command(workdir / NAME), env=_env(), capture_output=True, text=True, timeout=600)
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(f"the uninterrupted port failed ({proc.returncode}): {proc.stderr.strip()}")
    ported = (workdir / NAME).read_bytes()
    if ported == original:
        raise RuntimeError("the port changed nothing; the notebook needs torch cells")
    return Reference(original, ported, seconds)


def _reset(workdir: Path, original: bytes) -> None:
    for entry in workdir.iterdir():
        entry.unlink()
    (workdir / NAME).write_bytes(original)


@dataclass
class Outcome:
    survived: bool
    target: str  # "original", "ported" or what was wrong
    backups: int
    leftovers: int  # temporary files left by the killed process
    how: str
    exited_first: bool  # the port finished before the kill
    left_after_rerun: int = -1  # temporary files left once the port ran again (-1: not run)


def trial(ref: Reference, workdir: Path, k: int = 0, delay: float = 0.0, rerun: bool = False) -> Outcome:
    """One SIGKILL, at the *k*-th change seen in the directory or (k=0) after *delay*
    seconds; what the directory holds afterwards."""
    _reset(workdir, ref.original)
    before = _snapshot(workdir)
    how = f"change {k}" if k else f"delay {delay:.3f} s"
    proc = subprocess.Popen(_command(workdir / NAME), env=_env(),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if k:
        seen = 0
        while proc.poll() is None:
            now = _snapshot(workdir)
            if now != before:
                before = now
                seen += 1
                if seen == k:
                    break
    else:
        deadline = time.perf_counter() + delay
        while proc.poll() is None and time.perf_counter() < deadline:
            time.sleep(0.001)
    exited_first = proc.poll() is not None
    if not exited_first:
        proc.send_signal(signal.SIGKILL)
    proc.wait()

    data = (workdir / NAME).read_bytes()
    if data == ref.original:
        state = "original"
    elif data == ref.ported:
        state = "ported"
    else:
        state = f"neither original nor ported ({len(data)} bytes)"
    ok = state in ("original", "ported")
    try:
        json.loads(data)
    except ValueError:
        ok = False
        state += ", not JSON"
    names = [p.name for p in workdir.iterdir()]
    backups = [n for n in names if n == NAME + ".bak" or n.startswith(NAME + ".bak.")]
    for name in backups:
        if (workdir / name).read_bytes() != ref.original:
            ok = False
            state += f", {name} is not the original"
    leftovers = [n for n in names if n != NAME and n not in backups]
    left_after_rerun = -1
    if rerun:
        subprocess.run(_command(workdir / NAME), env=_env(), capture_output=True, timeout=600)
        left_after_rerun = sum(p.name.endswith(".msmagic-tmp") for p in workdir.iterdir())
    return Outcome(ok, state, len(backups), len(leftovers), how, exited_first, left_after_rerun)


def run(trials: int, size: int, seed: int, workdir: Path, log=None, rerun: bool = False) -> list:
    rng = random.Random(seed)
    source = workdir / "source"
    work = workdir / "work"
    source.mkdir(exist_ok=True)
    work.mkdir(exist_ok=True)
    original = build_notebook(source / NAME, size)
    ref = reference(original, work)
    if log:
        log(f"notebook {len(original) / 2**20:.1f} MiB, ported {len(ref.ported) / 2**20:.1f} MiB, "
            f"uninterrupted port {ref.seconds:.2f} s")
    outcomes = []
    for i in range(trials):
        # even trials watch the directory (k = 1..6 in turn), odd ones wait a random time
        if i % 2 == 0:
            outcome = trial(ref, work, k=1 + (i // 2) % 6, rerun=rerun)
        else:
            outcome = trial(ref, work, delay=rng.uniform(0, 1.1 * ref.seconds), rerun=rerun)
        outcomes.append(outcome)
        if log and not outcome.survived:
            log(f"trial {i + 1} ({outcome.how}): {outcome.target}")
    return outcomes


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=200)
    parser.add_argument("--mib", type=float, default=36.0, help="notebook size in MiB")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--dir", help="work here instead of a temporary directory")
    parser.add_argument("--rerun", action="store_true",
                        help="after each kill, port again and count the temporary files left")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="msmagic-kill-") as tmp:
        workdir = Path(args.dir or tmp)
        workdir.mkdir(parents=True, exist_ok=True)
        outcomes = run(args.trials, int(args.mib * 2**20), args.seed, workdir, log=print, rerun=args.rerun)
        if args.dir:
            shutil.rmtree(workdir / "work", ignore_errors=True)
    survived = sum(o.survived for o in outcomes)
    killed = [o for o in outcomes if not o.exited_first]
    print(f"trials {len(outcomes)}, survived {survived}")
    print(f"killed before the port finished: {len(killed)}; "
          f"target found: {dict(Counter(o.target for o in killed))}; "
          f"with a backup: {sum(o.backups > 0 for o in killed)}; "
          f"with a temporary file left: {sum(o.leftovers > 0 for o in killed)}")
    if args.rerun:
        print(f"temporary files left after the next run: {sum(o.left_after_rerun for o in outcomes)} "
              f"(in {sum(o.left_after_rerun > 0 for o in outcomes)} of {len(outcomes)} trials)")
    return 0 if survived == len(outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
