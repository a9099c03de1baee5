"""Verification cases for torch.optim optimizers ported to ``mindspore.experimental.optim``
and for the closed-form learning-rate schedulers (imported by ``msmagic.apis.cases``).

Optimizer cases train a fixed tiny model for a few steps through the training-loop
rewrite and compare its parameters and losses; scheduler cases compare the rate the
optimizer holds after each epoch, and a few train with a scheduler to show the compiled
optimizer really uses the assigned rate."""

from __future__ import annotations

from msmagic.apis.cases import case, flagged


def _train_case(key: str, make: str, steps: int = 3, sched: str = "") -> None:
    sched_line = f"scheduler = {sched}" if sched else ""
    sched_step = "scheduler.step()" if sched else ""
    case(key, f"""
        import torch
        import torch.nn as nn
        from torch.optim import lr_scheduler

        X = torch.linspace(-1, 1, 12).reshape(6, 2)
        y = X.sum(1, keepdim=True) * 0.5 + 0.25
        model = nn.Linear(2, 1)
        loss_fn = nn.MSELoss()
        optimizer = {make}
        {sched_line}

        def train(steps):
            losses = []
            for step in range(steps):
                optimizer.zero_grad()
                loss = loss_fn(model(X), y)
                loss.backward()
                optimizer.step()
                {sched_step}
                losses.append(loss.item())
            return losses

        losses = train({steps})
        lr = optimizer.param_groups[0]["lr"]
    """)


# --- optimizers (mindspore.experimental.optim)

_train_case("torch.optim.AdamW", "torch.optim.AdamW(model.parameters(), lr=0.01)")
_train_case("torch.optim.AdamW", "torch.optim.AdamW(model.parameters(), lr=0.01, betas=(0.8, 0.99), "
                                 "weight_decay=0.1, amsgrad=True)", 5)
_train_case("torch.optim.RMSprop", "torch.optim.RMSprop(model.parameters(), lr=0.01, momentum=0.9, centered=True)", 5)
_train_case("torch.optim.RMSprop", "torch.optim.RMSprop(model.parameters(), 0.01, 0.9, weight_decay=0.1)")
_train_case("torch.optim.Adagrad", "torch.optim.Adagrad(model.parameters(), lr=0.1, lr_decay=0.1, "
                                   "initial_accumulator_value=0.1, eps=1e-6)", 5)
_train_case("torch.optim.Adadelta", "torch.optim.Adadelta(model.parameters())", 5)
_train_case("torch.optim.Adadelta", "torch.optim.Adadelta(model.parameters(), lr=0.5, rho=0.8, eps=1e-5, "
                                    "weight_decay=0.1)", 5)
_train_case("torch.optim.Adamax", "torch.optim.Adamax(model.parameters())", 5)
_train_case("torch.optim.Adamax", "torch.optim.Adamax(model.parameters(), lr=0.05, betas=(0.8, 0.9), "
                                  "weight_decay=0.1)", 5)
_train_case("torch.optim.NAdam", "torch.optim.NAdam(model.parameters(), lr=0.05)", 5)
_train_case("torch.optim.NAdam", "torch.optim.NAdam(model.parameters(), lr=0.05, betas=(0.8, 0.9), "
                                 "weight_decay=0.1, momentum_decay=0.01)", 5)
_train_case("torch.optim.RAdam", "torch.optim.RAdam(model.parameters(), lr=0.05)", 8)
_train_case("torch.optim.RAdam", "torch.optim.RAdam(model.parameters(), lr=0.05, weight_decay=0.1)", 8)
_train_case("torch.optim.ASGD", "torch.optim.ASGD(model.parameters(), lr=0.1)", 5)
_train_case("torch.optim.ASGD", "torch.optim.ASGD(model.parameters(), lr=0.1, lambd=0.01, alpha=0.5, t0=2, "
                                "weight_decay=0.1)", 5)
_train_case("torch.optim.Rprop", "torch.optim.Rprop(model.parameters())", 5)
_train_case("torch.optim.Rprop", "torch.optim.Rprop(model.parameters(), lr=0.05, etas=(0.3, 1.5), "
                                 "step_sizes=(1e-4, 0.1))", 5)

flagged("torch.optim.LBFGS", """
    import torch
    import torch.nn as nn
    model = nn.Linear(2, 1)
    optimizer = torch.optim.LBFGS(model.parameters(), lr=1)
""")
