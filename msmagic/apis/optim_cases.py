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

# --- optimizers with a scheduler: the assigned rate reaches the compiled update

_train_case("torch.optim.AdamW", "torch.optim.AdamW(model.parameters(), lr=0.05)", 5,
            "lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.5)")
_train_case("torch.optim.NAdam", "torch.optim.NAdam(model.parameters(), lr=0.05)", 5,
            "lr_scheduler.ExponentialLR(optimizer, gamma=0.7)")
_train_case("torch.optim.ASGD", "torch.optim.ASGD(model.parameters(), lr=0.1)", 5,
            "lr_scheduler.LinearLR(optimizer, start_factor=0.2, total_iters=3)")
_train_case("torch.optim.Rprop", "torch.optim.Rprop(model.parameters(), lr=0.05)", 5,
            "lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)")


# --- schedulers: the rate the optimizer holds after each epoch


def _sched_case(key: str, make: str, epochs: int = 6, optimizer: str = "SGD") -> None:
    case(key, f"""
        import torch
        import torch.nn as nn
        from torch.optim import lr_scheduler

        model = nn.Linear(2, 1)
        optimizer = torch.optim.{optimizer}(model.parameters(), lr=0.1)
        scheduler = {make}
        first = optimizer.param_groups[0]["lr"]
        rates = []
        for epoch in range({epochs}):
            scheduler.step()
            rates.append(optimizer.param_groups[0]["lr"])
        last = scheduler.get_last_lr()[0]
    """)


_P = "torch.optim.lr_scheduler."
_sched_case(_P + "ConstantLR", "lr_scheduler.ConstantLR(optimizer)", 7)
_sched_case(_P + "ConstantLR", "lr_scheduler.ConstantLR(optimizer, factor=0.5, total_iters=2)")
_sched_case(_P + "ConstantLR", "lr_scheduler.ConstantLR(optimizer, 0.25, 3)", optimizer="Adam")
_sched_case(_P + "LinearLR", "lr_scheduler.LinearLR(optimizer)", 7)
_sched_case(_P + "LinearLR", "lr_scheduler.LinearLR(optimizer, start_factor=1.0, end_factor=0.1, total_iters=4)")
_sched_case(_P + "LinearLR", "lr_scheduler.LinearLR(optimizer, 0.5, total_iters=3)", optimizer="AdamW")
_sched_case(_P + "PolynomialLR", "lr_scheduler.PolynomialLR(optimizer)", 7)
_sched_case(_P + "PolynomialLR", "lr_scheduler.PolynomialLR(optimizer, total_iters=4, power=2.0)")
_sched_case(_P + "PolynomialLR", "lr_scheduler.PolynomialLR(optimizer, 3, 0.5)", optimizer="RMSprop")
_sched_case(_P + "MultiplicativeLR", "lr_scheduler.MultiplicativeLR(optimizer, lr_lambda=lambda e: 0.9)")
_sched_case(_P + "MultiplicativeLR", "lr_scheduler.MultiplicativeLR(optimizer, lambda e: 1.0 / (e + 1))",
            optimizer="Adagrad")
_sched_case(_P + "CosineAnnealingWarmRestarts", "lr_scheduler.CosineAnnealingWarmRestarts(optimizer, T_0=3)", 10)
_sched_case(_P + "CosineAnnealingWarmRestarts",
            "lr_scheduler.CosineAnnealingWarmRestarts(optimizer, T_0=2, T_mult=2, eta_min=0.01)", 16)
_sched_case(_P + "CosineAnnealingWarmRestarts",
            "lr_scheduler.CosineAnnealingWarmRestarts(optimizer, 1, 3)", 15, optimizer="NAdam")
_sched_case(_P + "StepLR", "lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)", optimizer="Adadelta")
_sched_case(_P + "CosineAnnealingLR", "lr_scheduler.CosineAnnealingLR(optimizer, T_max=4)", optimizer="Adamax")
_sched_case(_P + "LambdaLR", "lr_scheduler.LambdaLR(optimizer, lambda e: 0.9 ** e)", optimizer="RAdam")

# ReduceLROnPlateau, CyclicLR and OneCycleLR: msmagic/apis/misc_cases.py
for _name, _args in (("SequentialLR", "optimizer, [first, second], milestones=[2]"),
                     ("ChainedScheduler", "[first, second]")):
    flagged(_P + _name, f"""
        import torch
        import torch.nn as nn
        from torch.optim import lr_scheduler
        model = nn.Linear(2, 1)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        first = lr_scheduler.ConstantLR(optimizer, factor=0.5, total_iters=2)
        second = lr_scheduler.ExponentialLR(optimizer, gamma=0.9)
        scheduler = lr_scheduler.{_name}({_args})
    """)
