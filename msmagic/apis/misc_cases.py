"""Verification cases for the APIs notebooks use around the model code: per-batch
schedulers, torch.cuda housekeeping, autograd switches, signal windows, torch.testing
(imported by ``msmagic.apis.cases``)."""

from __future__ import annotations

from msmagic.apis.cases import case, flagged

_P = "torch.optim.lr_scheduler."


# --- per-batch schedulers: the rates after every step AND the parameters they trained


def _cycle_case(key: str, optimizer: str, make: str, steps: int) -> None:
    case(key, f"""
        import torch
        import torch.nn as nn
        from torch.optim import lr_scheduler

        X = torch.linspace(-1, 1, 12).reshape(6, 2)
        y = X.sum(1, keepdim=True) * 0.5 + 0.25
        model = nn.Linear(2, 1)
        loss_fn = nn.MSELoss()
        optimizer = {optimizer}
        scheduler = {make}
        first = optimizer.param_groups[0]["lr"]

        def train(steps):
            losses, rates = [], []
            for step in range(steps):
                optimizer.zero_grad()
                loss = loss_fn(model(X), y)
                loss.backward()
                optimizer.step()
                scheduler.step()
                losses.append(loss.item())
                rates.append(optimizer.param_groups[0]["lr"])
            return losses, rates

        losses, rates = train({steps})
        weight = model.weight
        bias = model.bias
    """)


_SGD = "torch.optim.SGD(model.parameters(), lr=0.1)"
_cycle_case(_P + "OneCycleLR", _SGD,
            "lr_scheduler.OneCycleLR(optimizer, max_lr=0.5, total_steps=10, cycle_momentum=False)", 10)
_cycle_case(_P + "OneCycleLR", "torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)",
            "lr_scheduler.OneCycleLR(optimizer, 0.3, epochs=3, steps_per_epoch=4, pct_start=0.25, "
            "anneal_strategy='linear', cycle_momentum=False, div_factor=10.0, final_div_factor=100.0)", 12)
_cycle_case(_P + "OneCycleLR", "torch.optim.AdamW(model.parameters(), lr=0.01)",
            "lr_scheduler.OneCycleLR(optimizer, max_lr=0.05, total_steps=12, cycle_momentum=False, "
            "three_phase=True)", 12)
_cycle_case(_P + "CyclicLR", _SGD,
            "lr_scheduler.CyclicLR(optimizer, base_lr=0.01, max_lr=0.2, step_size_up=3, cycle_momentum=False)", 14)
_cycle_case(_P + "CyclicLR", "torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)",
            "lr_scheduler.CyclicLR(optimizer, 0.01, 0.1, 2, 4, mode='triangular2', cycle_momentum=False)", 14)
_cycle_case(_P + "CyclicLR", "torch.optim.AdamW(model.parameters(), lr=0.01)",
            "lr_scheduler.CyclicLR(optimizer, 0.001, 0.05, step_size_up=3, mode='exp_range', gamma=0.9, "
            "cycle_momentum=False)", 10)
_cycle_case(_P + "CyclicLR", _SGD,
            "lr_scheduler.CyclicLR(optimizer, 0.01, 0.1, step_size_up=2, scale_fn=lambda x: 0.5 ** x, "
            "scale_mode='iterations', cycle_momentum=False)", 9)

# the default cycle_momentum=True also cycles the optimizer's momentum: flagged
for _name, _args in (("ReduceLROnPlateau", "factor=0.5"), ("CyclicLR", "base_lr=0.01, max_lr=0.1"),
                     ("OneCycleLR", "max_lr=0.1, total_steps=10")):
    flagged(_P + _name, f"""
        import torch
        import torch.nn as nn
        from torch.optim import lr_scheduler
        model = nn.Linear(2, 1)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        scheduler = lr_scheduler.{_name}(optimizer, {_args})
    """)
