"""Training-loop shapes of course notebooks (TRN001, TRN004, TRN005, TRN006 with NGR001):
the course loop (train and test in one epoch iteration), a step at the top level of a
cell, manual SGD over a model's parameters, no-op steps, and the shapes that are flagged
at the line where the rewrite fails."""

from msmagic.engine.session import PortSession
from tests.fast.codemod import assert_ports, port


def test_course_loop_with_inference_mode_test_pass_and_formatted_tensors():
    """The test pass under inference_mode is unwrapped into the loop body (one statement
    becomes three): the training step is still rewritten, and format specs on tensors
    go through .item()."""
    assert_ports(
        """
            import torch
            import torch.nn as nn
            model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
            loss_fn = nn.CrossEntropyLoss()
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            for epoch in range(5):
                model.train()
                y_logits = model(X)
                loss = loss_fn(y_logits, y)
                acc = (y_logits.argmax(dim=1) == y).float().mean()
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                model.eval()
                with torch.inference_mode():
                    test_logits = model(X_test)
                    test_loss = loss_fn(test_logits, y_test)
                print(f"Epoch: {epoch} | Loss: {loss:.5f}, Acc: {acc:.2%} | Test loss: {test_loss:.5f}")
        """,
        """
            import mindspore
            import mindspore.nn as nn
            import functools
            model = nn.SequentialCell(nn.Dense(4, 8), nn.ReLU(), nn.Dense(8, 2)).set_train()
            loss_fn = functools.partial(mindspore.ops.cross_entropy)
            optimizer = mindspore.nn.SGD(model.trainable_params(), learning_rate=0.1)
            def forward_fn():
                y_logits = model(X)
                loss = loss_fn(y_logits, y)
                return loss, y_logits
            grad_fn = mindspore.value_and_grad(forward_fn, None, optimizer.parameters, has_aux=True)
            for epoch in range(5):
                model.set_train()
                (loss, y_logits), grads = grad_fn()
                acc = (y_logits.argmax(dim=1) == y).float().mean()
                optimizer(grads)
                model.set_train(False)
                test_logits = model(X_test)
                test_loss = loss_fn(test_logits, y_test)
                print(f"Epoch: {epoch} | Loss: {loss.item():.5f}, Acc: {acc.item():.2%} | Test loss: {test_loss.item():.5f}")
        """,
        edits={"CEL003", "FUN013", "FUN015", "IMP001", "LAY001", "MOD002", "MOD003", "NGR001", "OPT001",
               "OPT002", "TRN001", "TRN005"},
    )


def test_no_grad_block_before_the_step_keeps_its_comment():
    assert_ports(
        """
            import torch
            import torch.nn as nn
            model = nn.Linear(3, 1)
            optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
            for epoch in range(3):
                with torch.no_grad():  # baseline before the step
                    before = model(X).mean()
                optimizer.zero_grad()
                loss = (model(X) - y).pow(2).mean()
                loss.backward()
                optimizer.step()
        """,
        """
            import mindspore
            import mindspore.nn as nn
            model = nn.Dense(3, 1)
            optimizer = mindspore.experimental.optim.AdamW(model.trainable_params(), lr=0.01, weight_decay=0.0)
            def forward_fn():
                loss = (model(X) - y).pow(2).mean()
                return loss
            grad_fn = mindspore.value_and_grad(forward_fn, None, optimizer.parameters)
            for epoch in range(3):
                # baseline before the step
                before = model(X).mean()
                loss, grads = grad_fn()
                optimizer(grads)
        """,
        edits={"API002", "IMP001", "LAY001", "NGR001", "OPT002", "OPT003", "TRN001"},
    )


def test_statements_removed_by_another_rule_in_the_loop_body():
    assert_ports(
        """
            import torch
            import torch.nn as nn
            model = nn.Linear(3, 1)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            for epoch in range(3):
                optimizer.zero_grad()
                loss = (model(X) - y).pow(2).mean()
                loss.backward()
                optimizer.step()
                torch.set_grad_enabled(False)
                val = model(X).mean()
                torch.set_grad_enabled(True)
        """,
        """
            import mindspore
            import mindspore.nn as nn
            model = nn.Dense(3, 1)
            optimizer = mindspore.nn.SGD(model.trainable_params(), learning_rate=0.1)
            def forward_fn():
                loss = (model(X) - y).pow(2).mean()
                return loss
            grad_fn = mindspore.value_and_grad(forward_fn, None, optimizer.parameters)
            for epoch in range(3):
                loss, grads = grad_fn()
                optimizer(grads)
                val = model(X).mean()
        """,
        edits={"API002", "IMP001", "LAY001", "NGR003", "OPT001", "OPT002", "TRN001"},
    )


def test_step_in_a_function_with_an_eval_pass_after_it():
    assert_ports(
        """
            import torch
            import torch.nn as nn
            model = nn.Linear(3, 2)
            loss_fn = nn.CrossEntropyLoss()
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            def train_step(xb, yb):
                model.train()
                optimizer.zero_grad()
                logits = model(xb)
                loss = loss_fn(logits, yb)
                loss.backward()
                optimizer.step()
                model.eval()
                with torch.no_grad():
                    acc = (model(xb).argmax(1) == yb).float().mean()
                return f"{loss:.4f} {acc:.1%}"
        """,
        """
            import mindspore
            import mindspore.nn as nn
            import functools
            model = nn.Dense(3, 2)
            loss_fn = functools.partial(mindspore.ops.cross_entropy)
            optimizer = mindspore.nn.SGD(model.trainable_params(), learning_rate=0.1)
            def forward_fn(xb, yb):
                logits = model(xb)
                loss = loss_fn(logits, yb)
                return loss, logits
            grad_fn = mindspore.value_and_grad(forward_fn, None, optimizer.parameters, has_aux=True)
            def train_step(xb, yb):
                model.set_train()
                (loss, logits), grads = grad_fn(xb, yb)
                optimizer(grads)
                model.set_train(False)
                acc = (model(xb).argmax(1) == yb).float().mean()
                return f"{loss.item():.4f} {acc.item():.1%}"
        """,
        edits={"FUN015", "IMP001", "LAY001", "MOD002", "NGR001", "OPT001", "OPT002", "TRN001", "TRN005"},
    )


def test_one_step_at_the_top_level_of_a_cell():
    """The forward statements move into forward_fn (the data and the model stay where
    they are); a statement between the forward pass and backward() follows the step."""
    assert_ports(
        """
            import torch
            import torch.nn as nn
            model = nn.Linear(3, 1)
            loss_fn = nn.MSELoss()
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            X = torch.ones(4, 3)
            y = torch.zeros(4, 1)

            # one step
            pred = model(X)
            loss = loss_fn(pred, y)
            print(f"loss before the step: {loss:.4f}")
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        """,
        """
            import mindspore
            import mindspore.nn as nn
            model = nn.Dense(3, 1)
            loss_fn = nn.MSELoss()
            optimizer = mindspore.nn.SGD(model.trainable_params(), learning_rate=0.1)
            X = mindspore.ops.ones((4, 3))
            y = mindspore.ops.zeros((4, 1))

            # one step
            def forward_fn():
                pred = model(X)
                loss = loss_fn(pred, y)
                return loss, pred
            grad_fn = mindspore.value_and_grad(forward_fn, None, optimizer.parameters, has_aux=True)
            (loss, pred), grads = grad_fn()
            print(f"loss before the step: {loss.item():.4f}")
            optimizer(grads)
        """,
        edits={"FUN009", "FUN014", "IMP001", "LAY001", "OPT001", "OPT002", "TRN001", "TRN005"},
    )


def test_top_level_forward_rebinding_its_input_takes_it_as_a_parameter():
    assert_ports(
        """
            import torch
            import torch.nn as nn
            model = nn.Linear(3, 1)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            pred = model(X)
            X = X * 2
            loss = (pred - model(X)).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        """,
        """
            import mindspore
            import mindspore.nn as nn
            model = nn.Dense(3, 1)
            optimizer = mindspore.nn.SGD(model.trainable_params(), learning_rate=0.1)
            def forward_fn(X):
                pred = model(X)
                X = X * 2
                loss = (pred - model(X)).pow(2).mean()
                return loss, pred, X
            grad_fn = mindspore.value_and_grad(forward_fn, None, optimizer.parameters, has_aux=True)
            (loss, pred, X), grads = grad_fn(X)
            optimizer(grads)
        """,
        edits={"API002", "IMP001", "LAY001", "OPT001", "OPT002", "TRN001"},
    )


def test_top_level_statement_changing_the_forward_pass_is_flagged():
    r = assert_ports(
        """
            import torch
            import torch.nn as nn
            model = nn.Linear(3, 1)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            pred = model(X)
            model.eval()
            loss = (pred - model(X)).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        """,
        """
            import mindspore
            import mindspore.nn as nn
            model = nn.Dense(3, 1)
            optimizer = mindspore.nn.SGD(model.trainable_params(), learning_rate=0.1)
            pred = model(X)
            model.set_train(False)
            loss = (pred - model(X)).pow(2).mean()
            loss.backward()  # msmagic: TRN004 training step not rewritten; see rule TRN004
            optimizer.step()  # msmagic: TRN004 step() of gradients not ported; see rule TRN004
        """,
        edits={"API002", "IMP001", "LAY001", "MOD002", "OPT001", "OPT002", "TRN001"},
        findings={"TRN004"},
    )
    # re-deriving pred in a function would run the model in eval mode: not done
    assert "`model.eval()` sits between the forward pass and backward()" in r.unsupported[0].reason


def test_backward_in_a_later_cell_than_the_forward_re_derives_it():
    session = PortSession()
    assert_ports(
        """
            import torch
            import torch.nn as nn
            model = nn.Linear(3, 1)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            loss = model(torch.ones(2, 3)).sum()
        """,
        """
            import mindspore
            import mindspore.nn as nn
            model = nn.Dense(3, 1)
            optimizer = mindspore.nn.SGD(model.trainable_params(), learning_rate=0.1)
            loss = model(mindspore.ops.ones((2, 3))).sum()
        """,
        session=session,
        idempotent=False,
    )
    assert_ports(
        """
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        """,
        """
            def _loss_fn():
                loss = model(mindspore.ops.ones((2, 3))).sum()
                return loss
            _model_grads = mindspore.grad(_loss_fn, None, optimizer.parameters)()
            optimizer(_model_grads)
        """,
        edits={"TRN001"},
        findings=set(),
        session=session,
        idempotent=False,
    )


def test_backward_in_a_later_cell_after_the_model_changed_is_flagged():
    session = PortSession()
    port("import torch\nimport torch.nn as nn\nmodel = nn.Linear(3, 1)\n"
         "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\nloss = model(torch.ones(2, 3)).sum()\n",
         session=session)
    port("optimizer.zero_grad()\nloss.backward()\noptimizer.step()\n", session=session)
    # the step changed the weights: the loss computed before it cannot be re-derived
    r = port("loss.backward()\n", session=session)
    assert [f.rule_id for f in r.unsupported] == ["TRN004"] and "loss.backward()  # msmagic: TRN004" in r.code


def test_manual_sgd_over_the_parameters_becomes_assign_from_the_gradients():
    assert_ports(
        """
            import torch
            import torch.nn as nn
            model = nn.Linear(3, 1)
            lr = 0.1
            for epoch in range(3):
                loss = (model(X) - y).pow(2).mean()
                loss.backward()
                with torch.no_grad():
                    for p in model.parameters():
                        p -= lr * p.grad
                    model.zero_grad()
        """,
        """
            import mindspore
            import mindspore.nn as nn
            model = nn.Dense(3, 1)
            lr = 0.1
            def forward_fn():
                loss = (model(X) - y).pow(2).mean()
                return loss
            grad_fn = mindspore.value_and_grad(forward_fn, None, model.trainable_params())
            for epoch in range(3):
                loss, grads = grad_fn()
                for p, p_grad in zip(model.trainable_params(), grads):
                    mindspore.ops.assign(p, p - (lr * p_grad))
        """,
        edits={"API002", "IMP001", "LAY001", "NGR001", "TRN001"},
    )


def test_manual_sgd_with_data_and_per_parameter_zeroing():
    assert_ports(
        """
            import torch
            import torch.nn as nn
            model = nn.Linear(3, 1)
            for epoch in range(3):
                loss = (model(X) - y).pow(2).mean()
                loss.backward()
                for param in model.parameters():
                    param.data -= 0.05 * param.grad.data
                    param.grad.data.zero_()
        """,
        """
            import mindspore
            import mindspore.nn as nn
            model = nn.Dense(3, 1)
            def forward_fn():
                loss = (model(X) - y).pow(2).mean()
                return loss
            grad_fn = mindspore.value_and_grad(forward_fn, None, model.trainable_params())
            for epoch in range(3):
                loss, grads = grad_fn()
                for param, param_grad in zip(model.trainable_params(), grads):
                    mindspore.ops.assign(param, param - (0.05 * param_grad))
        """,
        edits=None,
    )


def test_manual_sgd_without_zeroing_is_flagged_at_the_backward():
    """PyTorch adds each iteration's gradient to .grad: no port."""
    r = assert_ports(
        """
            import torch
            import torch.nn as nn
            model = nn.Linear(3, 1)
            for epoch in range(3):
                loss = (model(X) - y).pow(2).mean()
                loss.backward()
                with torch.no_grad():
                    for p in model.parameters():
                        p -= 0.1 * p.grad
        """,
        """
            import mindspore
            import mindspore.nn as nn
            model = nn.Dense(3, 1)
            for epoch in range(3):
                loss = (model(X) - y).pow(2).mean()
                loss.backward()  # msmagic: TRN004 backward() not ported: no optimizer.step() in this block; use mindspore.value_and_grad
                for p in model.get_parameters():
                    p -= 0.1 * p.grad  # msmagic: TRN004 p.grad not ported
        """,
        edits={"API002", "CEL004", "IMP001", "LAY001", "NGR001"},
        findings={"TRN004"},
    )
    assert "ops.assign(p, p - lr * g)" in r.unsupported[0].reason


def test_manual_sgd_on_requires_grad_tensors_is_left_to_the_autograd_rules():
    """No TRN004 on the loop: the autograd rules port the backward and the .grad reads."""
    assert_ports(
        """
            import torch
            w = torch.zeros(3, 1, requires_grad=True)
            for i in range(3):
                loss = ((X @ w - y) ** 2).mean()
                loss.backward()
                with torch.no_grad():
                    w -= 0.1 * w.grad
                    w.grad.zero_()
        """,
        """
            import mindspore
            w = mindspore.ops.zeros((3, 1))
            for i in range(3):
                loss = ((X @ w - y) ** 2).mean()
                def _loss_fn(w):
                    loss = ((X @ w - y) ** 2).mean()
                    return loss
                _w_grad = mindspore.grad(_loss_fn, grad_position=0)(w)
                mindspore.ops.assign(w, w - (0.1 * _w_grad))
                _w_grad = mindspore.ops.zeros_like(_w_grad)
        """,
        edits=None,
    )


def test_backward_on_a_module_output_is_flagged_at_its_line():
    r = assert_ports(
        """
            import torch
            import torch.nn as nn
            model = nn.Linear(3, 2)
            out = model(torch.ones(4, 3))
            out.backward(torch.ones_like(out))
            gw = model.weight.grad
        """,
        """
            import mindspore
            import mindspore.nn as nn
            model = nn.Dense(3, 2)
            out = model(mindspore.ops.ones((4, 3)))
            out.backward(mindspore.ops.ones_like(out))  # msmagic: TRN004 backward() not ported: no optimizer.step() in this block; use mindspore.value_and_grad
            gw = model.weight.grad  # msmagic: TRN004 model.weight.grad not ported
        """,
        edits=None,
        findings={"TRN004"},
    )
    assert r.unsupported[0].reason.startswith("out.backward() with no optimizer.step()")


def test_backward_with_no_leaf_and_no_optimizer_gives_the_models_gradients():
    assert_ports(
        """
            import torch
            import torch.nn as nn
            model = nn.Linear(3, 1)
            loss = model(torch.ones(2, 3)).sum()
            loss.backward()
            gw = model.weight.grad
        """,
        """
            import mindspore
            import mindspore.nn as nn
            model = nn.Dense(3, 1)
            loss = model(mindspore.ops.ones((2, 3))).sum()
            def _loss_fn():
                loss = model(mindspore.ops.ones((2, 3))).sum()
                return loss
            _model_grads = mindspore.grad(_loss_fn, None, model.trainable_params())()
            _grad_of = dict(zip(model.trainable_params(), _model_grads))
            gw = _grad_of[model.weight]
        """,
        edits=None,
        findings=set(),
    )


def test_backward_of_a_model_with_dropout_is_flagged():
    r = port("import torch\nimport torch.nn as nn\n"
             "model = nn.Sequential(nn.Linear(3, 4), nn.Dropout(0.5), nn.Linear(4, 1))\n"
             "loss = model(torch.ones(2, 3)).sum()\nloss.backward()\n")
    assert [f.rule_id for f in r.unsupported] == ["TRN004"]  # re-deriving it would draw another mask


def test_gradient_accumulation_over_batches_is_flagged_at_each_line():
    r = assert_ports(
        """
            import torch
            import torch.nn as nn
            model = nn.Linear(3, 1)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            optimizer.zero_grad()
            for xb, yb in batches:
                loss = (model(xb) - yb).pow(2).mean() / 4
                loss.backward()
            optimizer.step()
        """,
        """
            import mindspore
            import mindspore.nn as nn
            model = nn.Dense(3, 1)
            optimizer = mindspore.nn.SGD(model.trainable_params(), learning_rate=0.1)
            for xb, yb in batches:
                loss = (model(xb) - yb).pow(2).mean() / 4
                loss.backward()  # msmagic: TRN004 backward() not ported: no optimizer.step() in this block; use mindspore.value_and_grad
            optimizer.step()  # msmagic: TRN004 step() of gradients not ported; see rule TRN004
        """,
        edits=None,
        findings={"TRN004"},
    )
    assert [f.line for f in r.unsupported] == [8, 9]  # zero_grad() has nothing to do in MindSpore


def test_steps_in_a_scheduler_demo_without_backward_are_removed():
    assert_ports(
        """
            import torch
            import torch.nn as nn
            model = nn.Linear(3, 2)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
            optimizer.zero_grad()
            lrs = []
            for epoch in range(5):
                optimizer.step()
                scheduler.step()
                lrs.append(scheduler.get_last_lr()[0])
        """,
        """
            import mindspore
            import mindspore.nn as nn
            import itertools
            model = nn.Dense(3, 2)
            optimizer = mindspore.nn.SGD(model.trainable_params(), learning_rate=0.1)
            scheduler = map(lambda epoch, lr=float(optimizer.learning_rate), step_size=2, gamma=0.5: lr * gamma ** (epoch // step_size), itertools.count())
            mindspore.ops.assign(optimizer.learning_rate, next(scheduler))
            lrs = []
            for epoch in range(5):
                mindspore.ops.assign(optimizer.learning_rate, next(scheduler))
                lrs.append([float(optimizer.learning_rate)][0])
        """,
        edits={"IMP001", "LAY001", "OPT001", "OPT002", "SCH001", "SCH002", "SCH005", "TRN006"},
    )


def test_a_block_of_no_op_steps_keeps_a_pass():
    assert_ports(
        """
            import torch
            import torch.nn as nn
            model = nn.Linear(3, 2)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            for epoch in range(2):
                optimizer.zero_grad()
                optimizer.step()
        """,
        """
            import mindspore
            import mindspore.nn as nn
            model = nn.Dense(3, 2)
            optimizer = mindspore.nn.SGD(model.trainable_params(), learning_rate=0.1)
            for epoch in range(2):
                pass
        """,
        edits=["IMP001", "IMP001", "LAY001", "OPT002", "OPT001", "TRN006", "TRN006"],
    )


def test_format_specs_on_tensors_in_str_format_and_f_strings():
    """Only tensors with a spec change: `{}` and `!r` keep the tensor, a Python number
    (`loss.item()`) keeps its value."""
    assert_ports(
        """
            import torch
            import torch.nn as nn
            model = nn.Linear(3, 1)
            x = torch.ones(2, 3)
            loss = model(x).pow(2).mean()
            total = loss.item()
            correct = 0
            correct += (model(x) > 0).sum()
            print("loss {:.4f} ({}) {:>8}".format(loss, loss, total))
            print("{0:.2f} {0}".format(loss), f"{total:.3f}", f"{loss!r:>40}", f"{loss}")
            print(f"{100 * correct / 2:.1f} %")
        """,
        """
            import mindspore
            import mindspore.nn as nn
            model = nn.Dense(3, 1)
            x = mindspore.ops.ones((2, 3))
            loss = model(x).pow(2).mean()
            total = loss.item()
            correct = 0
            correct += (model(x) > 0).sum()
            print("loss {:.4f} ({}) {:>8}".format(loss.item(), loss, total))
            print("{0:.2f} {0}".format(loss.item()), f"{total:.3f}", f"{loss!r:>40}", f"{loss}")
            print(f"{(100 * correct / 2).item():.1f} %")
        """,
        edits=None,
    )


def test_format_specs_on_values_of_unknown_kind():
    assert_ports(
        """
            import torch
            test_losses = [torch.tensor(0.5)]
            correct = torch.tensor([1, 0]).sum()
            def report(loss, hits):
                print("Test Loss: {:.3f}.. {:d} {}".format(loss, hits, loss))
                print(f"{loss:.2%} {hits=:d} {loss!r:>4} {len(test_losses):d} {loss.item():.2f}")
            line = "{:.3f}".format(test_losses[-1]) + format(correct, "03d")
        """,
        """
            import mindspore
            import operator
            test_losses = [mindspore.Tensor(0.5)]
            correct = mindspore.Tensor([1, 0]).sum()
            def report(loss, hits):
                print("Test Loss: {:.3f}.. {:d} {}".format(float(loss), operator.index(hits), loss))
                print(f"{float(loss):.2%} hits={operator.index(hits):d} {loss!r:>4} {len(test_losses):d} {loss.item():.2f}")
            line = "{:.3f}".format(test_losses[-1].item()) + format(correct.item(), "03d")
        """,
        edits={"IMP001", "DAT001", "TRN005", "TNS001"},
    )
