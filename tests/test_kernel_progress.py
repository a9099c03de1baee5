"""%%ms_parity in a real Jupyter kernel: the live progress line and the timing breakdown.

The progress line is a display updated in place (``update_display_data`` messages with
one display id) while the run goes, and ends as a line saying what ran; the report that
follows gives a timing breakdown whose parts add up to the total.
"""

from __future__ import annotations

import re

import pytest

from tests import test_kernel_interrupt
from tests.test_kernel_interrupt import _text

kernel = test_kernel_interrupt.kernel  # the fixture: a started kernel and its client

pytestmark = pytest.mark.timeout(600)

TRAINING = """\
%%ms_parity -o rep
import torch
import torch.nn as nn
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
x = torch.randn(64, 8)
y = torch.randn(64, 1)
losses = []
for step in range(150):
    loss = ((model(x) - y) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    losses.append(loss.item())
"""


def test_progress_updates_in_place_then_the_report_with_its_timing_breakdown(kernel):
    reply, _ = kernel.run("%load_ext msmagic")
    assert reply["status"] == "ok", reply
    reply, outputs = kernel.run(TRAINING)
    assert reply["status"] == "ok", (reply, _text(outputs))
    first = next(m for m in outputs if m["msg_type"] == "display_data")
    display_id = first["content"]["transient"]["display_id"]
    assert first["content"]["data"]["text/plain"].startswith("msmagic parity: statement 1 of 9")
    updates = [m["content"]["data"]["text/plain"] for m in outputs
               if m["msg_type"] == "update_display_data"
               and m["content"]["transient"]["display_id"] == display_id]
    assert any(re.match(r"msmagic parity: statement 9 of 9 \(lines 9-14\), MindSpore, \d", u)
               for u in updates), updates
    assert re.fullmatch(r"msmagic parity: ran 9 statements on each side in [\d.]+ s \(report below\)",
                        updates[-1]), updates[-1]
    # the report follows, as its own output
    report = [m for m in outputs if m["msg_type"] == "display_data"][-1]["content"]["data"]
    text = report["text/plain"]
    assert text.startswith("msmagic parity: all ") and "[ok]" in text.splitlines()[0], text
    assert "losses: PyTorch" in text and 'class="msm-chart" data-name="losses"' in report["text/html"]
    timing = next(line for line in text.splitlines() if line.startswith("time: "))
    for part in ("port", "PyTorch", "MindSpore", "sync and compare", "other", "total"):
        assert f" {part} " in timing or timing.startswith(f"time: {part} "), timing
    reply, outputs = kernel.run("print(round(sum(v for k, v in rep.timings.items() if k != 'total')"
                                " - rep.timings['total'], 9))")
    assert "0.0" in _text(outputs) or "-0.0" in _text(outputs), _text(outputs)
