"""Port speed: throughput on a ~2,000-line PyTorch file, latency on a 50-line cell,
the ratio to bare libcst parse+codegen of the same text, and ``%load_ext`` time.

Targets (issue 2): >= 10,000 lines/s, ratio <= 3, p50 <= 10 ms, load <= 100 ms.
The last rows port files of 50, 100 and 200 autograd cells (each with a ``backward``) and
show how time grows with size: linear growth keeps lines/s flat.
Run: ``.venv/bin/python benchmarks/bench_port.py``.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

MODEL = '''
class Block{i}(nn.Module):
    """A residual block ({i})."""

    def __init__(self, channels={c}, p=0.1):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, kernel_size=3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels, momentum=0.1)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)
        self.drop = nn.Dropout(p)

    def forward(self, x):
        identity = x
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.drop(self.bn2(self.conv2(out)))
        return F.relu(out + identity)


class Net{i}(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2d(3, {c}, 3, padding=1),
            nn.BatchNorm2d({c}),
            nn.ReLU(),
            nn.MaxPool2d(2),
        )
        self.blocks = nn.ModuleList([Block{i}({c}) for _ in range(2)])
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear({c}, num_classes)

    def forward(self, x):
        x = self.stem(x)
        for block in self.blocks:
            x = block(x)
        x = self.pool(x)
        x = x.view(x.size(0), -1)
        return self.fc(x)


model{i} = Net{i}().to(device)
for m in model{i}.modules():
    if isinstance(m, nn.Conv2d):
        nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
optimizer{i} = torch.optim.SGD(model{i}.parameters(), lr=0.01, momentum=0.9)
inputs{i} = torch.randn(8, 3, 32, 32)
logits{i} = model{i}(inputs{i})
probs{i} = F.softmax(logits{i}, dim=1)
top{i} = torch.argmax(probs{i}, dim=1)
summary{i} = torch.cat([logits{i}, probs{i}], dim=1).mean(dim=0, keepdim=True)
print(top{i}.detach().cpu().numpy(), summary{i}.size(1))
'''

HEADER = '''"""A long PyTorch notebook exported as a script."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.manual_seed(0)
'''


def big_file(lines: int = 2000) -> str:
    parts = [HEADER]
    i = 0
    while sum(p.count("\n") for p in parts) < lines:
        parts.append(MODEL.format(i=i, c=16 + 8 * (i % 4)))
        i += 1
    return "".join(parts)


def cell_50() -> str:
    text = HEADER + MODEL.format(i=0, c=16)
    return "\n".join(text.splitlines()[:50]) + "\n"


def timeit(fn, repeat: int) -> list[float]:
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def load_ext_time() -> float:
    code = (
        "import time\n"
        "from IPython.core.interactiveshell import InteractiveShell\n"
        "ip = InteractiveShell.instance()\n"
        "t0 = time.perf_counter()\n"
        "ip.run_line_magic('load_ext', 'msmagic')\n"
        "print(time.perf_counter() - t0)\n"
    )
    runs = []
    for _ in range(5):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             cwd=Path(__file__).resolve().parent.parent, check=True)
        runs.append(float(out.stdout.strip().splitlines()[-1]))
    return statistics.median(runs)


BACKWARD_CELL = """
x{i} = torch.randn(3, requires_grad=True)
w{i} = torch.ones(3, requires_grad=True)
y{i} = (x{i} * w{i}).sum()
z{i} = y{i} * 2 + x{i}.sum()
z{i}.backward()
g{i} = x{i}.grad
"""


def backward_growth() -> list[tuple[int, float]]:
    """(lines, seconds) for files of 50, 100 and 200 autograd cells: the shape whose cost
    grew quadratically (every backward re-read the statements before it)."""
    import msmagic

    out = []
    for cells in (50, 100, 200):
        text = "import torch\n" + "".join(BACKWARD_CELL.format(i=i) for i in range(cells))
        out.append((text.count("\n"), min(timeit(lambda: msmagic.port(text), 2))))
    return out


def main() -> None:
    import libcst as cst

    t0 = time.perf_counter()
    import msmagic

    msmagic.port("import torch\n")  # load the rule tables once, as a session would
    first = time.perf_counter() - t0
    text = big_file()
    n = text.count("\n")
    port_t = min(timeit(lambda: msmagic.port(text), 3))
    bare_t = min(timeit(lambda: cst.parse_module(text).code, 3))
    cell = cell_50()
    lat = sorted(timeit(lambda: msmagic.port(cell), 200))
    p50 = lat[len(lat) // 2]
    p95 = lat[int(len(lat) * 0.95)]
    load = load_ext_time()
    rows = [
        ("lines in the file", f"{n}", ""),
        ("port throughput", f"{n / port_t:,.0f} lines/s", ">= 10,000 lines/s"),
        ("bare libcst parse+codegen", f"{n / bare_t:,.0f} lines/s", "(baseline)"),
        ("ratio port / bare libcst", f"{port_t / bare_t:.2f}x", "<= 3"),
        ("50-line cell p50", f"{p50 * 1000:.1f} ms", "<= 10 ms"),
        ("50-line cell p95", f"{p95 * 1000:.1f} ms", ""),
        ("%load_ext msmagic", f"{load * 1000:.1f} ms", "<= 100 ms"),
        ("import + first port (tables load)", f"{first * 1000:.0f} ms", ""),
    ]
    growth = backward_growth()
    base_lines, base_t = growth[0]
    for lines, t in growth:
        rows.append((f"autograd cells, {lines} lines", f"{lines / t:,.0f} lines/s",
                     f"time x{t / base_t:.1f} for lines x{lines / base_lines:.1f}"))
    width = max(len(r[0]) for r in rows)
    for name, value, target in rows:
        print(f"{name:<{width}}  {value:>18}  {target}")


if __name__ == "__main__":
    main()
