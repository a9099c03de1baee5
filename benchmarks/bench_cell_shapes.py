"""What reading a cell as IPython does costs: port time of one realistic 60-line cell
written plainly, with CRLF and with lone-CR line ends, with a tab under spaces in a
block, with fullwidth names, and below ``%%time`` with an indented body (median of
repeated ports, fresh session each), and how many of the generated valid shape
variants of ``tests/fast/test_ipython_cells.py`` port (``port()`` path).

    PYTHONPATH=. python benchmarks/bench_cell_shapes.py

Run it with PYTHONPATH at another checkout to compare (the shape variants come from
this checkout's tests).
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parents[1]))

import msmagic  # noqa: E402
from msmagic.engine.session import PortSession  # noqa: E402

BLOCK = """\
x{i} = torch.ones(4, 3)
w{i} = torch.zeros(3, 2)
if x{i}.sum() > 0:
    y{i} = torch.matmul(x{i}, w{i})
    z{i} = y{i}.sum(dim=1)
else:
    z{i} = torch.zeros(4)
"""
PLAIN = "import torch\n" + "".join(BLOCK.format(i=i) for i in range(8)) + "print(z0)\n"
TAB = PLAIN.replace("if x0.sum() > 0:\n    y0", "if x0.sum() > 0:\n if True:\n\t y0").replace(
    "\n    z0 = y0.sum(dim=1)", "\n\t z0 = y0.sum(dim=1)")
CELLS = {
    "plain (LF)": PLAIN,
    "CRLF": PLAIN.replace("\n", "\r\n"),
    "lone CR": PLAIN.replace("\n", "\r"),
    "a tab under spaces": TAB,
    "fullwidth names": PLAIN.replace("x0 = torch.ones", "ｘ0 = ｔｏｒｃｈ.ones"),
    "%%time over an indented body": "%%time\n" + "".join("    " + l + "\n" for l in PLAIN.splitlines()),
}


def median_ms(cell: str, repeat: int = 40) -> float:
    msmagic.port(cell, session=PortSession())  # warm-up
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        msmagic.port(cell, session=PortSession())
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def main() -> None:
    print(f"msmagic from {Path(msmagic.__file__).parent}")
    for name, cell in CELLS.items():
        try:
            print(f"{name:32s} {median_ms(cell):7.2f} ms  ({cell.count(chr(10)) or cell.count(chr(13))} lines)")
        except msmagic.PortError as err:
            print(f"{name:32s} refused: {err}")
    from tests.fast.test_ipython_cells import VARIANTS, assert_ported

    ok = 0
    for _, cell, _, _ in VARIANTS:
        try:
            code = msmagic.port(cell).code
            assert_ported(cell, code)
            assert msmagic.port(code).code == code
        except (msmagic.PortError, AssertionError):
            continue
        ok += 1
    print(f"valid shape variants ported (rewritten, untouched lines kept, idempotent): {ok}/{len(VARIANTS)}")


if __name__ == "__main__":
    main()
