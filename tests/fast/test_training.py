"""Training (TRN, OPT, SCH): loops become value_and_grad + optimizer(grads); optimizers and schedulers."""

from tests.fast.codemod import assert_ports


def test_sgd_loop_with_aux_prediction():
    assert_ports(
        """
            import torch
            import torch.nn as nn
            model = nn.Linear(3, 1)
            loss_fn = nn.MSELoss()
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
            model.train()
            for step in range(6):
                optimizer.zero_grad()
                pred = model(X)
                loss = loss_fn(pred, y)
                loss.backward()
                optimizer.step()
        """,
        """
            import mindspore
            import mindspore.nn as nn
            model = nn.Dense(3, 1)
            loss_fn = nn.MSELoss()
            optimizer = mindspore.nn.SGD(model.trainable_params(), learning_rate=0.1, momentum=0.9)
            model.set_train()
            def forward_fn():
                pred = model(X)
                loss = loss_fn(pred, y)
                return loss, pred
            grad_fn = mindspore.value_and_grad(forward_fn, None, optimizer.parameters, has_aux=True)
            for step in range(6):
                (loss, pred), grads = grad_fn()
                optimizer(grads)
        """,
        edits={"FUN014", "IMP001", "LAY001", "MOD002", "OPT001", "OPT002", "TRN001"},
    )


def test_loop_without_aux_and_zero_grad_last():
    assert_ports(
        """
            import torch
            import torch.nn as nn
            model = nn.Linear(3, 1)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            for step in range(6):
                loss = ((model(X) - y) ** 2).mean()
                loss.backward()
                optimizer.step()
                optimizer.zero_grad()
        """,
        """
            import mindspore
            import mindspore.nn as nn
            model = nn.Dense(3, 1)
            optimizer = mindspore.nn.SGD(model.trainable_params(), learning_rate=0.1)
            def forward_fn():
                loss = ((model(X) - y) ** 2).mean()
                return loss
            grad_fn = mindspore.value_and_grad(forward_fn, None, optimizer.parameters)
            for step in range(6):
                loss, grads = grad_fn()
                optimizer(grads)
        """,
        edits={"IMP001", "LAY001", "OPT001", "OPT002", "TRN001"},
    )


def test_nested_loops_over_batches():
    assert_ports(
        """
            import torch
            import torch.nn as nn
            model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
            criterion = nn.CrossEntropyLoss()
            optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
            for epoch in range(3):
                for xb, yb in batches:
                    optimizer.zero_grad()
                    logits = model(xb)
                    loss = criterion(logits, yb)
                    loss.backward()
                    optimizer.step()
                    history.append(loss.item())
        """,
        """
            import mindspore
            import mindspore.nn as nn
            import functools
            model = nn.SequentialCell(nn.Dense(4, 8), nn.ReLU(), nn.Dense(8, 3)).set_train()
            criterion = functools.partial(mindspore.ops.cross_entropy)
            optimizer = mindspore.nn.Adam(model.trainable_params(), learning_rate=0.01)
            def forward_fn(xb, yb):
                logits = model(xb)
                loss = criterion(logits, yb)
                return loss, logits
            grad_fn = mindspore.value_and_grad(forward_fn, None, optimizer.parameters, has_aux=True)
            for epoch in range(3):
                for xb, yb in batches:
                    (loss, logits), grads = grad_fn(xb, yb)
                    optimizer(grads)
                    history.append(loss.item())
        """,
        edits={"CEL003", "FUN013", "FUN015", "IMP001", "LAY001", "MOD003", "OPT002", "OPT003", "TNS001", "TRN001"},
    )


def test_clip_grad_norm_clips_grads():
    assert_ports(
        """
            import torch
            import torch.nn as nn
            model = nn.Linear(2, 1)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
            for step in range(3):
                optimizer.zero_grad()
                loss = ((model(X) - y) ** 2).mean()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                optimizer.step()
        """,
        """
            import mindspore
            import mindspore.nn as nn
            model = nn.Dense(2, 1)
            optimizer = mindspore.nn.SGD(model.trainable_params(), learning_rate=0.05)
            def forward_fn():
                loss = ((model(X) - y) ** 2).mean()
                return loss
            grad_fn = mindspore.value_and_grad(forward_fn, None, optimizer.parameters)
            for step in range(3):
                loss, grads = grad_fn()
                grads = mindspore.ops.clip_by_global_norm(grads, 1.0)
                optimizer(grads)
        """,
        edits={"IMP001", "LAY001", "OPT001", "OPT002", "TRN001", "TRN002"},
    )


def test_clip_grad_value():
    assert_ports(
        """
            import torch
            import torch.nn as nn
            model = nn.Linear(2, 1)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
            for step in range(3):
                optimizer.zero_grad()
                loss = model(X).sum()
                loss.backward()
                nn.utils.clip_grad_value_(model.parameters(), 0.5)
                optimizer.step()
        """,
        """
            import mindspore
            import mindspore.nn as nn
            model = nn.Dense(2, 1)
            optimizer = mindspore.nn.SGD(model.trainable_params(), learning_rate=0.05)
            def forward_fn():
                loss = model(X).sum()
                return loss
            grad_fn = mindspore.value_and_grad(forward_fn, None, optimizer.parameters)
            for step in range(3):
                loss, grads = grad_fn()
                grads = mindspore.ops.clip_by_value(grads, -(0.5), 0.5)
                optimizer(grads)
        """,
        edits={"IMP001", "LAY001", "OPT001", "OPT002", "TRN001", "TRN002"},
    )


def test_two_backwards_differentiate_the_sum():
    assert_ports(
        """
            import torch
            import torch.nn as nn
            model = nn.Linear(2, 2)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            for step in range(3):
                optimizer.zero_grad()
                out = model(X)
                loss1 = out.pow(2).mean()
                loss2 = out.abs().mean()
                loss1.backward(retain_graph=True)
                loss2.backward()
                optimizer.step()
        """,
        """
            import mindspore
            import mindspore.nn as nn
            model = nn.Dense(2, 2)
            optimizer = mindspore.nn.SGD(model.trainable_params(), learning_rate=0.1)
            def forward_fn():
                out = model(X)
                loss1 = out.pow(2).mean()
                loss2 = out.abs().mean()
                return loss1 + loss2, loss1, loss2, out
            grad_fn = mindspore.value_and_grad(forward_fn, None, optimizer.parameters, has_aux=True)
            for step in range(3):
                (_, loss1, loss2, out), grads = grad_fn()
                optimizer(grads)
        """,
        edits={"API002", "IMP001", "LAY001", "OPT001", "OPT002", "TRN001", "TRN003"},
    )


def test_conditional_step_is_flagged():
    assert_ports(
        """
            import torch
            import torch.nn as nn
            model = nn.Linear(2, 1)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            for i in range(4):
                loss = model(X).mean() / 2
                loss.backward()
                if i % 2 == 1:
                    optimizer.step()
                    optimizer.zero_grad()
        """,
        """
            import mindspore
            import mindspore.nn as nn
            model = nn.Dense(2, 1)
            optimizer = mindspore.nn.SGD(model.trainable_params(), learning_rate=0.1)
            for i in range(4):
                loss = model(X).mean() / 2
                loss.backward()  # msmagic: TRN004 backward() not ported: no optimizer.step() in this block; use mindspore.value_and_grad
                if i % 2 == 1:
                    optimizer.step()  # msmagic: TRN004 step without backward here; port the gradient computation by hand
                    optimizer.zero_grad()
        """,
        edits={"IMP001", "LAY001", "OPT001", "OPT002"},
        findings={"TRN004"},
    )


def test_sgd_learning_rate_and_nesterov():
    assert_ports(
        """
            import torch
            import torch.nn as nn
            model = nn.Linear(4, 2)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, nesterov=True)
        """,
        """
            import mindspore
            import mindspore.nn as nn
            model = nn.Dense(4, 2)
            optimizer = mindspore.nn.SGD(model.trainable_params(), learning_rate=0.05, momentum=0.9, nesterov=True)
        """,
        edits={"IMP001", "LAY001", "OPT001", "OPT002"},
    )


def test_sgd_positional_lr():
    assert_ports(
        """
            import torch
            import torch.nn as nn
            model = nn.Linear(4, 2)
            optimizer = torch.optim.SGD(model.parameters(), 0.01)
        """,
        """
            import mindspore
            import mindspore.nn as nn
            model = nn.Dense(4, 2)
            optimizer = mindspore.nn.SGD(model.trainable_params(), 0.01)
        """,
        edits={"IMP001", "LAY001", "OPT001", "OPT002"},
    )


def test_filtered_parameters_become_trainable_params():
    assert_ports(
        """
            import torch
            import torch.nn as nn
            model = nn.Linear(4, 2)
            optimizer = torch.optim.SGD(filter(lambda p: p.requires_grad, model.parameters()), lr=0.1)
        """,
        """
            import mindspore
            import mindspore.nn as nn
            model = nn.Dense(4, 2)
            optimizer = mindspore.nn.SGD(model.trainable_params(), learning_rate=0.1)
        """,
        edits={"IMP001", "LAY001", "OPT001", "OPT002"},
    )


def test_adam_betas_split():
    assert_ports(
        """
            import torch
            import torch.nn as nn
            model = nn.Linear(4, 2)
            optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, betas=(0.8, 0.99), eps=1e-7)
        """,
        """
            import mindspore
            import mindspore.nn as nn
            model = nn.Dense(4, 2)
            optimizer = mindspore.nn.Adam(model.trainable_params(), learning_rate=1e-3, beta1=0.8, beta2=0.99, eps=1e-7)
        """,
        edits={"IMP001", "LAY001", "OPT002", "OPT003"},
    )


def test_adam_default_lr_written_out():
    assert_ports(
        """
            import torch
            import torch.nn as nn
            model = nn.Linear(4, 2)
            optimizer = torch.optim.Adam(model.parameters())
        """,
        """
            import mindspore
            import mindspore.nn as nn
            model = nn.Dense(4, 2)
            optimizer = mindspore.nn.Adam(model.trainable_params(), learning_rate=0.001)
        """,
        edits={"IMP001", "LAY001", "OPT002", "OPT003"},
    )


def test_adamw_becomes_experimental():
    assert_ports(
        """
            import torch
            import torch.nn as nn
            model = nn.Linear(4, 2)
            optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.05)
        """,
        """
            import mindspore
            import mindspore.nn as nn
            model = nn.Dense(4, 2)
            optimizer = mindspore.experimental.optim.AdamW(model.trainable_params(), lr=1e-3, weight_decay=0.05)
        """,
        edits={"IMP001", "LAY001", "OPT002", "OPT004"},
    )


def test_rmsprop_becomes_experimental():
    assert_ports(
        """
            import torch
            import torch.nn as nn
            model = nn.Linear(4, 2)
            optimizer = torch.optim.RMSprop(model.parameters(), lr=0.01, momentum=0.9)
        """,
        """
            import mindspore
            import mindspore.nn as nn
            model = nn.Dense(4, 2)
            optimizer = mindspore.experimental.optim.RMSprop(model.trainable_params(), lr=0.01, momentum=0.9)
        """,
        edits={"IMP001", "LAY001", "OPT002", "OPT005"},
    )


def test_adagrad_becomes_experimental():
    assert_ports(
        """
            import torch
            import torch.nn as nn
            model = nn.Linear(4, 2)
            optimizer = torch.optim.Adagrad(model.parameters(), lr=0.05, lr_decay=0.01)
        """,
        """
            import mindspore
            import mindspore.nn as nn
            model = nn.Dense(4, 2)
            optimizer = mindspore.experimental.optim.Adagrad(model.trainable_params(), lr=0.05, lr_decay=0.01)
        """,
        edits={"IMP001", "LAY001", "OPT002", "OPT008"},
    )


def test_nadam_keeps_arguments():
    assert_ports(
        """
            import torch
            import torch.nn as nn
            model = nn.Linear(4, 2)
            optimizer = torch.optim.NAdam(model.parameters(), lr=0.01, betas=(0.8, 0.99), momentum_decay=0.01)
        """,
        """
            import mindspore
            import mindspore.nn as nn
            model = nn.Dense(4, 2)
            optimizer = mindspore.experimental.optim.NAdam(model.trainable_params(), lr=0.01, betas=(0.8, 0.99), momentum_decay=0.01)
        """,
        edits={"IMP001", "LAY001", "OPT002", "OPT009"},
    )


def test_parameter_groups_kept():
    assert_ports(
        """
            import torch
            import torch.nn as nn
            model = nn.Sequential(nn.Linear(4, 3), nn.Linear(3, 2))
            optimizer = torch.optim.SGD([{'params': model[0].parameters(), 'lr': 0.01}, {'params': model[1].parameters()}], lr=0.1, momentum=0.9)
        """,
        """
            import mindspore
            import mindspore.nn as nn
            model = nn.SequentialCell(nn.Dense(4, 3), nn.Dense(3, 2)).set_train()
            optimizer = mindspore.nn.SGD([{'params': model[0].trainable_params(), 'lr': 0.01}, {'params': model[1].trainable_params()}], learning_rate=0.1, momentum=0.9)
        """,
        edits={"CEL003", "IMP001", "LAY001", "MOD003", "OPT001", "OPT002", "OPT006"},
    )


def test_weight_decay_wraps_parameters_in_a_group():
    assert_ports(
        """
            import torch
            import torch.nn as nn
            model = nn.Linear(4, 2)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1, weight_decay=1e-4)
        """,
        """
            import mindspore
            import mindspore.nn as nn
            model = nn.Dense(4, 2)
            optimizer = mindspore.nn.SGD([{"params": model.trainable_params()}], learning_rate=0.1, weight_decay=1e-4)
        """,
        edits={"IMP001", "LAY001", "OPT001", "OPT002", "OPT007"},
    )


def test_param_group_lr_read():
    assert_ports(
        """
            import torch
            import torch.nn as nn
            model = nn.Linear(4, 2)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
            lr = optimizer.param_groups[0]['lr']
        """,
        """
            import mindspore
            import mindspore.nn as nn
            model = nn.Dense(4, 2)
            optimizer = mindspore.nn.SGD(model.trainable_params(), learning_rate=0.05)
            lr = float(optimizer.learning_rate)
        """,
        edits={"IMP001", "LAY001", "OPT001", "OPT002", "SCH005"},
    )


def test_step_lr_closed_form():
    assert_ports(
        """
            import torch
            import torch.nn as nn
            model = nn.Linear(4, 2)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
            for epoch in range(5):
                scheduler.step()
                rates.append(scheduler.get_last_lr()[0])
        """,
        """
            import mindspore
            import mindspore.nn as nn
            import itertools
            model = nn.Dense(4, 2)
            optimizer = mindspore.nn.SGD(model.trainable_params(), learning_rate=0.1)
            scheduler = map(lambda epoch, lr=float(optimizer.learning_rate), step_size=2, gamma=0.5: lr * gamma ** (epoch // step_size), itertools.count())
            mindspore.ops.assign(optimizer.learning_rate, next(scheduler))
            for epoch in range(5):
                mindspore.ops.assign(optimizer.learning_rate, next(scheduler))
                rates.append([float(optimizer.learning_rate)][0])
        """,
        edits={"IMP001", "LAY001", "OPT001", "OPT002", "SCH001", "SCH002", "SCH005"},
    )


def test_exponential_lr():
    assert_ports(
        """
            import torch
            import torch.nn as nn
            model = nn.Linear(4, 2)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            scheduler = torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma=0.5)
            scheduler.step()
        """,
        """
            import mindspore
            import mindspore.nn as nn
            import itertools
            model = nn.Dense(4, 2)
            optimizer = mindspore.nn.SGD(model.trainable_params(), learning_rate=0.1)
            scheduler = map(lambda epoch, lr=float(optimizer.learning_rate), gamma=0.5: lr * gamma ** epoch, itertools.count())
            mindspore.ops.assign(optimizer.learning_rate, next(scheduler))
            mindspore.ops.assign(optimizer.learning_rate, next(scheduler))
        """,
        edits={"IMP001", "LAY001", "OPT001", "OPT002", "SCH001", "SCH002"},
    )


def test_multistep_lr():
    assert_ports(
        """
            import torch
            import torch.nn as nn
            model = nn.Linear(4, 2)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=[2, 4], gamma=0.1)
        """,
        """
            import mindspore
            import mindspore.nn as nn
            import itertools
            model = nn.Dense(4, 2)
            optimizer = mindspore.nn.SGD(model.trainable_params(), learning_rate=0.1)
            scheduler = map(lambda epoch, lr=float(optimizer.learning_rate), milestones=[2, 4], gamma=0.1: lr * gamma ** sum(epoch >= m for m in milestones), itertools.count())
            mindspore.ops.assign(optimizer.learning_rate, next(scheduler))
        """,
        edits={"IMP001", "LAY001", "OPT001", "OPT002", "SCH002"},
    )


def test_cosine_annealing_lr():
    assert_ports(
        """
            import torch
            import torch.nn as nn
            model = nn.Linear(4, 2)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=4, eta_min=0.01)
        """,
        """
            import mindspore
            import mindspore.nn as nn
            import itertools
            import math
            model = nn.Dense(4, 2)
            optimizer = mindspore.nn.SGD(model.trainable_params(), learning_rate=0.1)
            scheduler = map(lambda epoch, lr=float(optimizer.learning_rate), T_max=4, eta_min=0.01: eta_min + (lr - eta_min) * (1 + math.cos(math.pi * epoch / T_max)) / 2, itertools.count())
            mindspore.ops.assign(optimizer.learning_rate, next(scheduler))
        """,
        edits={"IMP001", "LAY001", "OPT001", "OPT002", "SCH003"},
    )


def test_lambda_lr():
    assert_ports(
        """
            import torch
            import torch.nn as nn
            model = nn.Linear(4, 2)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lr_lambda=lambda e: 1 / (e + 1))
        """,
        """
            import mindspore
            import mindspore.nn as nn
            import itertools
            model = nn.Dense(4, 2)
            optimizer = mindspore.nn.SGD(model.trainable_params(), learning_rate=0.1)
            scheduler = map(lambda epoch, lr=float(optimizer.learning_rate), lr_lambda=lambda e: 1 / (e + 1): lr * lr_lambda(epoch), itertools.count())
            mindspore.ops.assign(optimizer.learning_rate, next(scheduler))
        """,
        edits={"IMP001", "LAY001", "OPT001", "OPT002", "SCH004"},
    )


def test_linear_lr():
    assert_ports(
        """
            import torch
            import torch.nn as nn
            model = nn.Linear(4, 2)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            scheduler = torch.optim.lr_scheduler.LinearLR(optimizer, start_factor=0.25, total_iters=3)
        """,
        """
            import mindspore
            import mindspore.nn as nn
            import itertools
            model = nn.Dense(4, 2)
            optimizer = mindspore.nn.SGD(model.trainable_params(), learning_rate=0.1)
            scheduler = map(lambda epoch, lr=float(optimizer.learning_rate), start_factor=0.25, end_factor=1.0, total_iters=3: lr * (start_factor + (end_factor - start_factor) * min(epoch, total_iters) / total_iters), itertools.count())
            mindspore.ops.assign(optimizer.learning_rate, next(scheduler))
        """,
        edits={"IMP001", "LAY001", "OPT001", "OPT002", "SCH008"},
    )


def test_scheduler_with_experimental_optimizer():
    assert_ports(
        """
            import torch
            import torch.nn as nn
            model = nn.Linear(4, 2)
            optimizer = torch.optim.AdamW(model.parameters(), lr=0.1)
            scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.5)
            scheduler.step()
            lr = optimizer.param_groups[0]['lr']
        """,
        """
            import mindspore
            import mindspore.nn as nn
            import itertools
            model = nn.Dense(4, 2)
            optimizer = mindspore.experimental.optim.AdamW(model.trainable_params(), lr=0.1)
            scheduler = map(lambda epoch, lr=float(optimizer.param_groups[0]["lr"]), step_size=1, gamma=0.5: lr * gamma ** (epoch // step_size), itertools.count())
            mindspore.ops.assign(optimizer.param_groups[0]["lr"], next(scheduler))
            mindspore.ops.assign(optimizer.param_groups[0]["lr"], next(scheduler))
            lr = float(optimizer.param_groups[0]["lr"])
        """,
        edits={"IMP001", "LAY001", "OPT002", "OPT004", "SCH001", "SCH002", "SCH005", "SCH007"},
    )


def test_reduce_lr_on_plateau_is_flagged():
    assert_ports(
        """
            import torch
            import torch.nn as nn
            model = nn.Linear(4, 2)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, factor=0.5, patience=2)
        """,
        """
            import mindspore
            import mindspore.nn as nn
            import torch  # msmagic: kept for the PyTorch calls flagged below
            model = nn.Dense(4, 2)
            optimizer = mindspore.nn.SGD(model.trainable_params(), learning_rate=0.1)
            scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, factor=0.5, patience=2)  # msmagic: SCH011 ReduceLROnPlateau not ported; see rule SCH011
        """,
        edits={"IMP001", "LAY001", "OPT001", "OPT002"},
        findings={"SCH011"},
    )


def test_weight_decay_schedule_is_flagged():
    assert_ports(
        """
            import torch
            import torch.nn as nn
            model = nn.Linear(4, 2)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1, weight_decay=0.1)
            for group in optimizer.param_groups:
                group['weight_decay'] *= 0.5
        """,
        """
            import mindspore
            import mindspore.nn as nn
            model = nn.Dense(4, 2)
            optimizer = mindspore.nn.SGD([{"params": model.trainable_params()}], learning_rate=0.1, weight_decay=0.1)
            for group in optimizer.param_groups:  # msmagic: SCH006 param_groups has no MindSpore counterpart; see rule SCH006
                group['weight_decay'] *= 0.5
        """,
        edits={"IMP001", "LAY001", "OPT001", "OPT002", "OPT007"},
        findings={"SCH006"},
    )


def test_train_and_eval_become_set_train():
    assert_ports(
        """
            import torch
            import torch.nn as nn
            model = nn.Linear(4, 2)
            model.eval()
            flag = model.training
            model.train()
            model.train(False)
        """,
        """
            import mindspore
            import mindspore.nn as nn
            model = nn.Dense(4, 2)
            model.set_train(False)
            flag = model.training
            model.set_train()
            model.set_train(False)
        """,
        edits={"IMP001", "LAY001", "MOD002"},
    )


def test_experimental_optimizer_groups_keep_settings():
    assert_ports(
        """
            import torch
            import torch.nn as nn
            model = nn.Sequential(nn.Linear(4, 3), nn.Linear(3, 2))
            optimizer = torch.optim.AdamW([{'params': model[0].parameters(), 'betas': (0.8, 0.9)}, {'params': model[1].parameters()}], lr=0.01)
        """,
        """
            import mindspore
            import mindspore.nn as nn
            model = nn.SequentialCell(nn.Dense(4, 3), nn.Dense(3, 2)).set_train()
            optimizer = mindspore.experimental.optim.AdamW([{'params': model[0].trainable_params(), 'betas': (0.8, 0.9)}, {'params': model[1].trainable_params()}], lr=0.01)
        """,
        edits={"CEL003", "IMP001", "LAY001", "MOD003", "OPT002", "OPT004", "OPT010"},
    )


def test_multiplicative_lr():
    assert_ports(
        """
            import torch
            import torch.nn as nn
            model = nn.Linear(4, 2)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            scheduler = torch.optim.lr_scheduler.MultiplicativeLR(optimizer, lr_lambda=lambda e: 0.9)
        """,
        """
            import mindspore
            import mindspore.nn as nn
            import itertools
            import math
            model = nn.Dense(4, 2)
            optimizer = mindspore.nn.SGD(model.trainable_params(), learning_rate=0.1)
            scheduler = map(lambda epoch, lr=float(optimizer.learning_rate), lr_lambda=lambda e: 0.9: lr * math.prod(lr_lambda(k) for k in range(1, epoch + 1)), itertools.count())
            mindspore.ops.assign(optimizer.learning_rate, next(scheduler))
        """,
        edits={"IMP001", "LAY001", "OPT001", "OPT002", "SCH009"},
    )


def test_cosine_warm_restarts():
    assert_ports(
        """
            import torch
            import torch.nn as nn
            model = nn.Linear(4, 2)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            scheduler = torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(optimizer, T_0=2, T_mult=2)
        """,
        """
            import mindspore
            import mindspore.nn as nn
            import itertools
            import math
            model = nn.Dense(4, 2)
            optimizer = mindspore.nn.SGD(model.trainable_params(), learning_rate=0.1)
            scheduler = map(lambda epoch, lr=float(optimizer.learning_rate), T_0=2, T_mult=2, eta_min=0.0: (lambda n: eta_min + (lr - eta_min) * (1 + math.cos(math.pi * (epoch - T_0 * (T_mult ** n - 1) // (T_mult - 1)) / (T_0 * T_mult ** n))) / 2)(sum(T_0 * (T_mult ** k - 1) // (T_mult - 1) <= epoch for k in range(1, epoch.bit_length() + 2))), itertools.count())
            mindspore.ops.assign(optimizer.learning_rate, next(scheduler))
        """,
        edits={"IMP001", "LAY001", "OPT001", "OPT002", "SCH010"},
    )
