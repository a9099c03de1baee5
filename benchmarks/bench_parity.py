"""Parity overhead: ``msmagic.parity`` against bare PyTorch + bare MindSpore runs.

Two cells: a small CNN forward pass on a 64x3x32x32 batch, and 3 training steps (the
MindSpore side of the training cell is explicit code passed with ``against``, since
training loops are ported by a later rule group). Both cells read the same fixed NumPy
batch (``IMAGES``, ``LABELS``) from the namespace, so the bare runs and the parity run
compute on identical data (parity bridges the arrays into its MindSpore namespace).
MindSpore's own random ops are not used: on CPU its training step ran about 20x slower
on ``ops.randn``/``ops.randint`` tensors than on the same values from NumPy, which would
make any ratio meaningless. For each, the time of one parity run
(port, both sides, synchronisation, comparison) is divided by the time of running the
PyTorch cell alone plus the MindSpore code alone. Peak memory (max RSS) is measured in
separate processes for the parity run and for the two bare runs.

The hand-written loops (50 and 200 iterations) run in lockstep iteration by iteration:
their ratio shows what recording and following the carried weights costs, and the two
lengths how it grows.

Target (issue 3): time ratio <= 1.2. Run: ``.venv/bin/python benchmarks/bench_parity.py``.
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

CNN_FORWARD = textwrap.dedent("""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class SmallCNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 16, 3, padding=1)
            self.bn1 = nn.BatchNorm2d(16)
            self.conv2 = nn.Conv2d(16, 32, 3, padding=1)
            self.bn2 = nn.BatchNorm2d(32)
            self.pool = nn.MaxPool2d(2)
            self.fc = nn.Linear(32 * 8 * 8, 10)

        def forward(self, x):
            x = self.pool(F.relu(self.bn1(self.conv1(x))))
            x = self.pool(F.relu(self.bn2(self.conv2(x))))
            return self.fc(x.view(x.size(0), -1))

    model = SmallCNN()
    model.eval()
    images = torch.tensor(IMAGES)
    logits = model(images)
""").lstrip()

TRAIN_TORCH = textwrap.dedent("""
    import torch
    import torch.nn as nn
    net = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Flatten(), nn.Linear(8 * 32 * 32, 10))
    images = torch.tensor(IMAGES)
    labels = torch.tensor(LABELS)
    optimizer = torch.optim.SGD(net.parameters(), lr=0.01)
    losses = []
    for step in range(3):
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(net(images), labels)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
""").lstrip()

TRAIN_MINDSPORE = textwrap.dedent("""
    import mindspore
    from mindspore import nn, ops
    net = nn.SequentialCell(nn.Conv2d(3, 8, 3, pad_mode='pad', padding=1, has_bias=True), nn.ReLU(), nn.Flatten(), nn.Dense(8 * 32 * 32, 10))
    images = mindspore.Tensor(IMAGES)
    labels = mindspore.Tensor(LABELS)
    optimizer = nn.SGD(net.trainable_params(), learning_rate=0.01)
    def forward(images, labels):
        return ops.cross_entropy(net(images), labels)
    grad_fn = mindspore.value_and_grad(forward, None, optimizer.parameters)
    losses = []
    for step in range(3):
        loss, grads = grad_fn(images, labels)
        optimizer(grads)
        losses.append(loss.item())
""").lstrip()

#: a loop updating weights by hand (jcjohnson's two-layer net): parity runs it iteration
#: by iteration, recording the carried weights on the PyTorch side and continuing the
#: MindSpore side from them (parity_check/loops.py); ``{n}`` iterations
HAND_LOOP = textwrap.dedent("""
    import torch
    x = torch.tensor(IMAGES.reshape(64, -1)[:, :500])
    y = torch.tensor(TARGETS)
    w1 = torch.tensor(W1)
    w2 = torch.tensor(W2)
    for t in range({n}):
        h = x.mm(w1)
        h_relu = h.clamp(min=0)
        y_pred = h_relu.mm(w2)
        loss = (y_pred - y).pow(2).sum()
        grad_y_pred = 2.0 * (y_pred - y)
        grad_w2 = h_relu.t().mm(grad_y_pred)
        grad_h = grad_y_pred.mm(w2.t()).clone()
        grad_h[h < 0] = 0
        grad_w1 = x.t().mm(grad_h)
        w1 -= 1e-6 * grad_w1
        w2 -= 1e-6 * grad_w2
""")


def data() -> dict:
    import numpy as np

    rng = np.random.default_rng(0)
    return {
        "IMAGES": rng.standard_normal((64, 3, 32, 32)).astype(np.float32),
        "LABELS": rng.integers(0, 10, 64).astype(np.int64),
        "TARGETS": rng.standard_normal((64, 10)).astype(np.float32),
        "W1": (rng.standard_normal((500, 100)) * 0.05).astype(np.float32),
        "W2": (rng.standard_normal((100, 10)) * 0.1).astype(np.float32),
    }


def namespace() -> dict:
    return {"__name__": "__bench__", **data()}


CASES = {
    "CNN forward 64x3x32x32": (CNN_FORWARD, None),
    "3 training steps": (TRAIN_TORCH, TRAIN_MINDSPORE),
    # the same loop at two lengths: how the lockstep's cost grows with the iterations
    "hand loop x50": (HAND_LOOP.format(n=50), None),
    "hand loop x200": (HAND_LOOP.format(n=200), None),
}


def _ms_code(torch_cell: str, against):
    import msmagic

    return against if against is not None else msmagic.port(torch_cell).code


def time_case(torch_cell: str, against, repeat: int = 5) -> dict:
    import msmagic

    ms_code = _ms_code(torch_cell, against)

    def bare_torch():
        exec(torch_cell, namespace())

    def bare_ms():
        exec(ms_code, namespace())

    def parity():
        report = msmagic.parity(torch_cell, against=against, user_ns=namespace(),
                                shadow={"__name__": "__bench_shadow__"}, rtol=1e-3, atol=1e-4)
        assert report.torch_error is None and report.ms_error is None, report.summary()
        return report

    for fn in (bare_torch, bare_ms, parity):  # warm up: imports, kernel compilation
        fn()
    samples = {"torch": [], "mindspore": [], "parity": []}
    for _ in range(repeat):
        for key, fn in (("torch", bare_torch), ("mindspore", bare_ms), ("parity", parity)):
            t0 = time.perf_counter()
            fn()
            samples[key].append(time.perf_counter() - t0)
    med = {k: statistics.median(v) for k, v in samples.items()}
    return {**med, "ok": parity().ok}


_MEMORY_SCRIPT = """
import resource, sys, json
sys.path.insert(0, {root!r})
import torch, mindspore, numpy  # both frameworks loaded in every measured process
from benchmarks.bench_parity import CASES, _ms_code, namespace
cell, against = CASES[{case!r}]
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
if {mode!r} == "bare":
    exec(cell, namespace())
    exec(_ms_code(cell, against), namespace())
else:
    import msmagic
    msmagic.parity(cell, against=against, user_ns=namespace(), shadow={{}})
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({{"base_kb": base, "peak_kb": peak}}))
"""


def memory_case(case: str) -> dict:
    out = {}
    for mode in ("bare", "parity"):
        script = _MEMORY_SCRIPT.format(root=str(ROOT), case=case, mode=mode)
        proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                              cwd=ROOT, check=True)
        out[mode] = json.loads(proc.stdout.strip().splitlines()[-1])
    return out


def main() -> None:
    print(f"{'cell':<24} {'PyTorch':>9} {'MindSpore':>10} {'sum':>9} {'parity':>9} {'ratio':>7}  "
          f"{'peak RSS bare':>14} {'peak RSS parity':>16} {'mem ratio':>9}")
    for case, (cell, against) in CASES.items():
        t = time_case(cell, against)
        m = memory_case(case)
        total = t["torch"] + t["mindspore"]
        bare_mb = m["bare"]["peak_kb"] / 1024
        par_mb = m["parity"]["peak_kb"] / 1024
        print(f"{case:<24} {t['torch'] * 1000:8.1f}ms {t['mindspore'] * 1000:9.1f}ms "
              f"{total * 1000:8.1f}ms {t['parity'] * 1000:8.1f}ms {t['parity'] / total:6.2f}x  "
              f"{bare_mb:12.0f}MB {par_mb:14.0f}MB {par_mb / bare_mb:8.2f}x"
              + ("" if t["ok"] else "   (values differ!)"))
    print("target: time ratio <= 1.2 (parity run / (bare PyTorch + bare MindSpore))")


if __name__ == "__main__":
    main()
