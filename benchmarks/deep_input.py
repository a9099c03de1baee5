"""Deep input: how deep a cell the port handles, and the recursion limit other threads
see while it runs.

For each shape (a sum of n terms, an ``elif`` chain of n branches, a chain of n method
calls) it finds the largest n CPython itself compiles under the interpreter's recursion
limit, called from a shallow frame (a bisection on ``compile``), then ports the cells of
depth n - 80, n - 40, n - 20 and n and prints what each gave and how long it took (the
port judges what CPython accepts from a few frames deeper, so it stops a few dozen levels
short of n, and not always at the same level: the bound is not sharp), and the recursion
limits a second thread read while the ports ran (every 0.1 ms).

Run: ``.venv/bin/python benchmarks/deep_input.py``.
"""

from __future__ import annotations

import sys
import threading
import time

import msmagic
from msmagic.errors import PortError

HEAD = "import torch\nx = torch.ones(3)\n"
SHAPES = {
    "sum of n terms": lambda n: HEAD + "y = " + " + ".join(["x"] * n) + "\n",
    "elif chain of n branches": lambda n: HEAD + "a = 0\nif a == 0:\n    y = torch.zeros(0)\n" + "".join(
        f"elif a == {i}:\n    y = torch.zeros({i})\n" for i in range(1, n)),
    "chain of n method calls": lambda n: HEAD + "y = x" + ".abs()" * n + "\n",
}


def compiles(cell: str) -> bool:
    try:
        compile(cell, "<cell>", "exec")
    except (SyntaxError, RecursionError, MemoryError):
        return False
    return True


def deepest(works, lo: int, hi: int) -> int:
    """The largest n in lo..hi for which works(n) (works(lo) holds)."""
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if works(mid):
            lo = mid
        else:
            hi = mid - 1
    return lo


def port(cell: str) -> tuple[str, float]:
    start = time.perf_counter()
    try:
        msmagic.port(cell)
        outcome = "ported"
    except PortError as err:
        outcome = f"{type(err).__name__}: {str(err)[:90]}"
    return outcome, time.perf_counter() - start


def main() -> None:
    print(f"Python {sys.version.split()[0]}, recursion limit {sys.getrecursionlimit()}")
    seen: set = set()
    stop = threading.Event()

    def watch():
        while not stop.is_set():
            seen.add(sys.getrecursionlimit())
            time.sleep(0.0001)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        for name, make in SHAPES.items():
            n = deepest(lambda k: compiles(make(k)), 1, 1 << 15)
            print(f"{name}: CPython compiles n <= {n}", flush=True)
            for k in (n - 80, n - 40, n - 20, n):
                outcome, took = port(make(k))
                print(f"  n={k}: {outcome} ({took:.1f} s)", flush=True)
    finally:
        stop.set()
        watcher.join()
    print(f"recursion limits another thread saw during the ports: {sorted(seen)}")


if __name__ == "__main__":
    main()
