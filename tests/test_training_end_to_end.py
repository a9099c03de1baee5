"""A whole training notebook across cells, ported and checked with the parity runner:
data loader, model, CrossEntropyLoss, Adam, StepLR, training loop, evaluation."""

import msmagic
from msmagic.engine.session import PortSession
from msmagic.parity_check import MATCH

CELLS = [
    """
import torch
from torch.utils.data import TensorDataset, DataLoader
torch.manual_seed(0)
centers = torch.tensor([[2.0, 0.0], [-2.0, 0.0], [0.0, 2.5]])
labels = torch.arange(3).repeat_interleave(20)
points = centers[labels] + 0.8 * torch.randn(60, 2)
loader = DataLoader(TensorDataset(points, labels), batch_size=16, shuffle=False)
""",
    """
import torch.nn as nn
model = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 3))
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
""",
    """
model.train()
losses = []
rates = []
for epoch in range(4):
    for xb, yb in loader:
        optimizer.zero_grad()
        logits = model(xb)
        loss = criterion(logits, yb)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    scheduler.step()
    rates.append(optimizer.param_groups[0]["lr"])
""",
    """
model.eval()
with torch.no_grad():
    accuracy = (model(points).argmax(dim=1) == labels).float().mean().item()
""",
]


def test_training_notebook_matches_across_cells():
    # 16 Adam steps (experimental AdamW with weight_decay=0.0, OPT003), with the default
    # tolerance; parity runs the MindSpore steps on PyTorch's gradients after comparing them
    user_ns, shadow, session = {"__name__": "__main__"}, {"__name__": "__shadow__"}, PortSession()
    reports = [msmagic.parity(cell, user_ns=user_ns, shadow=shadow, session=session)
               for cell in CELLS]
    for report in reports:
        settled = report.ok or (report.verdict[0] == "empty" and report.synchronised)
        assert settled, (report.summary(), report.ms_error and report.ms_error.traceback)
    train = reports[2]
    assert len(user_ns["losses"]) == 16 and train.row("losses").status == MATCH
    assert user_ns["rates"] == [0.05, 0.025, 0.025, 0.0125]
    assert train.row("rates").status == MATCH
    assert train.row("model.2.weight").status == MATCH  # the trained weights
    rules = set(reports[0].port.rule_ids) | set(reports[1].port.rule_ids) | set(train.port.rule_ids)
    assert {"LDR001", "LDR002", "FUN015", "OPT003", "SCH002", "SCH001", "TRN001", "SCH005"} <= rules
    assert "NGR001" in reports[3].port.rule_ids
    assert user_ns["losses"][-1] < user_ns["losses"][0]
