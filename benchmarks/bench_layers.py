"""The cost of layer drill-down: ``msmagic.parity`` with and without it.

While a statement that calls modules runs, parity records every layer call on the
PyTorch side (input, output, updated buffers; at most ``layers.MAX_CALLS`` calls per
layer and ``layers.MAX_BYTES`` per statement) and compares each MindSpore layer call
with it as it returns (:mod:`msmagic.parity_check.layers`). This script measures what
that costs, on the two shapes the issue names:

* ``resnet``: a ResNet-style CNN of 8 residual blocks (51 layer modules, 61 calls per
  forward pass), 3 SGD training steps on a 16x3x32x32 batch, then an evaluation pass;
* ``transformer``: two ``nn.TransformerEncoderLayer`` blocks (d_model 64, 4 heads) and a
  linear head, 3 Adam steps on a 16x20 token batch, then an evaluation pass;
* and, to show how the cost grows with the run's length, the resnet cell with 3, 12 and
  48 training steps (only the first ``MAX_CALLS`` calls of each layer are copied).

For each: the median of 3 parity runs with ``layers=True`` divided by the median of 3
with ``layers=False`` (the same process, alternating, after a warm-up run of each; one
run each for the longer resnet cells), and, for the first two, the peak memory (max RSS)
of a fresh process running each once.

Target (issue 19): time ratio <= 1.3, peak memory ratio <= 1.2.
Run: ``.venv/bin/python benchmarks/bench_layers.py`` (``--quick``: one run each, no
memory processes).
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

RESNET = textwrap.dedent("""
    import torch, torch.nn as nn, torch.nn.functional as F
    torch.manual_seed(0)
    class Block(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False)
            self.bn1 = nn.BatchNorm2d(cout)
            self.conv2 = nn.Conv2d(cout, cout, 3, padding=1, bias=False)
            self.bn2 = nn.BatchNorm2d(cout)
            self.short = nn.Sequential()
            if stride != 1 or cin != cout:
                self.short = nn.Sequential(nn.Conv2d(cin, cout, 1, stride=stride, bias=False), nn.BatchNorm2d(cout))
        def forward(self, x):
            out = F.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            return F.relu(out + self.short(x))
    class ResNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU())
            self.layer1 = nn.Sequential(Block(16, 16, 1), Block(16, 16, 1))
            self.layer2 = nn.Sequential(Block(16, 32, 2), Block(32, 32, 1))
            self.layer3 = nn.Sequential(Block(32, 64, 2), Block(64, 64, 1))
            self.layer4 = nn.Sequential(Block(64, 64, 1), Block(64, 64, 1))
            self.pool = nn.AdaptiveAvgPool2d(1)
            self.fc = nn.Linear(64, 10)
        def forward(self, x):
            x = self.layer4(self.layer3(self.layer2(self.layer1(self.stem(x)))))
            return self.fc(torch.flatten(self.pool(x), 1))
    model = ResNet()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    inputs, labels = torch.randn(16, 3, 32, 32), torch.randint(0, 10, (16,))
""").lstrip()

TRANSFORMER = textwrap.dedent("""
    import torch, torch.nn as nn, torch.nn.functional as F
    torch.manual_seed(0)
    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(100, 64)
            self.blocks = nn.ModuleList([nn.TransformerEncoderLayer(64, 4, 128, dropout=0.0, batch_first=True)
                                         for _ in range(2)])
            self.norm = nn.LayerNorm(64)
            self.head = nn.Linear(64, 5)
        def forward(self, tokens):
            x = self.embed(tokens)
            for block in self.blocks:
                x = block(x)
            return self.head(self.norm(x).mean(dim=1))
    model = Encoder()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    inputs, labels = torch.randint(0, 100, (16, 20)), torch.randint(0, 5, (16,))
""").lstrip()

# what both cells end with: STEPS training steps, then an evaluation pass
TRAIN = textwrap.dedent("""
    for step in range(STEPS):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(inputs), labels)
        loss.backward()
        optimizer.step()
    model.eval()
    with torch.no_grad():
        logits = model(inputs)
""").lstrip()

CASES = {"resnet": (RESNET, 3), "transformer": (TRANSFORMER, 3), "resnet x12": (RESNET, 12),
         "resnet x48": (RESNET, 48)}


def cell(case: str) -> str:
    source, steps = CASES[case]
    return source + TRAIN.replace("STEPS", str(steps))


def one_run(case: str, layers: bool):
    import msmagic

    t0 = time.perf_counter()
    report = msmagic.parity(cell(case), layers=layers, progress=None, user_ns={"__name__": "__main__"},
                            shadow={"__name__": "__main__"})
    return time.perf_counter() - t0, report


def time_case(case: str, repeat: int, warm_up: bool = True) -> dict:
    if warm_up:  # imports, kernels, MindSpore's first-call compilation
        one_run(case, True)
        one_run(case, False)
    on, off = [], []
    report = None
    for _ in range(repeat):
        t, report = one_run(case, True)
        on.append(t)
        t, _ = one_run(case, False)
        off.append(t)
    layers = report.layers
    return {
        "with": statistics.median(on), "without": statistics.median(off),
        "ratio": statistics.median(on) / statistics.median(off),
        "verdict": report.summary(),
        "layer calls": layers.calls if layers else 0, "compared": layers.compared if layers else 0,
        "first divergent layer": layers.first.where if layers and layers.first else None,
    }


MEMORY = """
import resource, sys, json
sys.path.insert(0, {root!r})
from benchmarks.bench_layers import one_run
one_run({case!r}, {layers!r})
print(json.dumps(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss))
"""


def memory_case(case: str) -> dict:
    peaks = {}
    for layers in (True, False):
        out = subprocess.run([sys.executable, "-c", MEMORY.format(root=str(ROOT), case=case, layers=layers)],
                             capture_output=True, text=True, check=True)
        peaks[layers] = json.loads(out.stdout.strip().splitlines()[-1]) / 1024  # MiB
    return {"with MiB": peaks[True], "without MiB": peaks[False], "ratio": peaks[True] / peaks[False]}


def main() -> None:
    quick = "--quick" in sys.argv
    repeat = 1 if quick else 3
    print(f"layer drill-down cost (median of {repeat}; ratio = with / without)")
    for case in CASES:
        growth = case.startswith("resnet x")  # the resnet cell is warm; one run each
        r = time_case(case, 1 if growth else repeat, warm_up=not growth)
        print(f"  {case:12s} time {r['with']:6.2f} s / {r['without']:6.2f} s = {r['ratio']:.2f}x  "
              f"({r['compared']} of {r['layer calls']} layer calls compared; {r['verdict']}; "
              f"first divergent layer: {r['first divergent layer']})")
        if not quick and case in ("resnet", "transformer"):
            m = memory_case(case)
            print(f"  {'':12s} peak memory {m['with MiB']:.0f} MiB / {m['without MiB']:.0f} MiB = {m['ratio']:.2f}x")


if __name__ == "__main__":
    main()
