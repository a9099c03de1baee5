"""Hand-written layers trained by hand (HWL001, HWL002 with TRN001), executed: makemore
parts 3 and 5 write ``Linear``, ``BatchNorm1d``, ``Tanh``, ``Embedding`` and
``Sequential`` as plain classes with a ``parameters()`` method, collect the parameters
into a list, mark them ``requires_grad`` and train with ``p.data += -lr * p.grad``. Both
sides run from the same initial weights and the losses and every trained tensor must
agree, wherever the code puts the pieces: one cell, later cells under ``%%ms_parity``,
a function receiving the model and the list, the list built by ``model.parameters()``
or by a comprehension over the layers."""

import textwrap

import numpy as np
import pytest

import msmagic
from msmagic.parity_check import run_pair, to_numpy
from tests.rules.support import findings, parity_cells, src

LAYERS = src("""
    import torch
    import torch.nn.functional as F

    class Linear:
        def __init__(self, fan_in, fan_out, bias=True):
            self.weight = torch.randn((fan_in, fan_out)) / fan_in**0.5  # kaiming init
            self.bias = torch.zeros(fan_out) if bias else None

        def __call__(self, x):
            self.out = x @ self.weight
            if self.bias is not None:
                self.out += self.bias
            return self.out

        def parameters(self):
            return [self.weight] + ([] if self.bias is None else [self.bias])

    class BatchNorm1d:
        def __init__(self, dim, eps=1e-5, momentum=0.1):
            self.eps = eps
            self.momentum = momentum
            self.training = True
            self.gamma = torch.ones(dim)
            self.beta = torch.zeros(dim)
            self.running_mean = torch.zeros(dim)
            self.running_var = torch.ones(dim)

        def __call__(self, x):
            if self.training:
                xmean = x.mean(0, keepdim=True)
                xvar = x.var(0, keepdim=True)
            else:
                xmean = self.running_mean
                xvar = self.running_var
            xhat = (x - xmean) / torch.sqrt(xvar + self.eps)
            self.out = self.gamma * xhat + self.beta
            if self.training:
                with torch.no_grad():
                    self.running_mean = (1 - self.momentum) * self.running_mean + self.momentum * xmean
                    self.running_var = (1 - self.momentum) * self.running_var + self.momentum * xvar
            return self.out

        def parameters(self):
            return [self.gamma, self.beta]

    class Relu:
        def __call__(self, x):
            self.out = torch.relu(x)
            return self.out

        def parameters(self):
            return []

    class Embedding:
        def __init__(self, num_embeddings, embedding_dim):
            self.weight = torch.randn((num_embeddings, embedding_dim))

        def __call__(self, IX):
            self.out = self.weight[IX]
            return self.out

        def parameters(self):
            return [self.weight]

    class Flatten:
        def __call__(self, x):
            self.out = x.view(x.shape[0], -1)
            return self.out

        def parameters(self):
            return []

    class Sequential:
        def __init__(self, layers):
            self.layers = layers

        def __call__(self, x):
            for layer in self.layers:
                x = layer(x)
            self.out = x
            return self.out

        def parameters(self):
            return [p for layer in self.layers for p in layer.parameters()]
""")

DATA = src("""
    g = torch.Generator().manual_seed(7)
    Xtr = torch.randint(0, 11, (64, 3), generator=g)
    Ytr = (Xtr.sum(1) % 11)
""")

MODEL = src("""
    torch.manual_seed(42)
    model = Sequential([
        Embedding(11, 4), Flatten(),
        Linear(12, 16, bias=False), BatchNorm1d(16), Relu(),
        Linear(16, 11),
    ])
    with torch.no_grad():
        model.layers[-1].weight *= 0.1  # last layer less confident
    parameters = model.parameters()
    for p in parameters:
        p.requires_grad = True
""")

TRAIN = src("""
    lossi = []
    for i in range(6):
        ix = torch.randint(0, Xtr.shape[0], (16,))
        Xb, Yb = Xtr[ix], Ytr[ix]
        logits = model(Xb)
        loss = F.cross_entropy(logits, Yb)
        for p in parameters:
            p.grad = None
        loss.backward()
        lr = 0.1 if i < 4 else 0.01
        for p in parameters:
            p.data += -lr * p.grad
        lossi.append(loss.item())
""")

EVAL = src("""
    for layer in model.layers:
        layer.training = False
    logits = model(Xtr[:8])
    val = F.cross_entropy(logits, Ytr[:8]).item()
""")


def _weights(ns) -> list:
    return [to_numpy(t) for layer in ns["model"].layers for t in layer.parameters()]


def _trained_alike(torch_ns, ms_ns, rtol=1e-4, atol=1e-5):
    got, want = _weights(ms_ns), _weights(torch_ns)
    assert len(got) == len(want) == 6
    for k, (a, b) in enumerate(zip(got, want)):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg=f"parameter {k}")


def _run(source):
    run = run_pair(source, rtol=1e-4, atol=1e-5)
    assert run.torch_error is None and run.ms_error is None, run.explain()
    assert msmagic.port(run.port.code).code == run.port.code  # porting again changes nothing
    assert not [f for f in findings(run) if f.startswith(("TRN", "GRD", "HWL"))], run.port.unsupported
    return run


def test_makemore_wavenet_layers_trained_by_hand_in_one_cell():
    run = _run(LAYERS + DATA + MODEL + TRAIN + EVAL)
    assert run.agree("lossi", "val"), run.explain()
    assert run.torch_ns["lossi"][-1] < run.torch_ns["lossi"][0]  # it trained
    _trained_alike(run.torch_ns, run.ms_ns)
    code = run.port.code
    assert "self.weight = mindspore.Parameter(mindspore.ops.randn((fan_in, fan_out)) / fan_in**0.5)" in code
    assert "self.bias = mindspore.Parameter(mindspore.ops.zeros(fan_out)) if bias else None" in code
    assert "self.running_mean = mindspore.ops.zeros(dim)" in code  # a buffer: not in parameters()
    assert "F.assign(model.layers[-1].weight, model.layers[-1].weight * 0.1)" in code  # F: mindspore.ops
    assert "mindspore.value_and_grad(forward_fn, None, parameters, has_aux=True)" in code
    assert "for p, p_grad in zip(parameters, grads):" in code


def test_the_scaled_last_layer_is_the_tensor_the_list_trains():
    """HWL002: ``*=`` on a Parameter held by a plain object would rebind the attribute to a
    new tensor; the list would train the old one and the forward pass read the new."""
    run = _run(LAYERS + DATA + MODEL + "scaled = parameters[-2] * 1.0\n" + TRAIN)
    assert run.agree("scaled", "lossi"), run.explain()
    layer = run.ms_ns["model"].layers[-1]
    assert layer.weight is run.ms_ns["parameters"][-2]
    _trained_alike(run.torch_ns, run.ms_ns)


PART3_MODEL = src("""
    torch.manual_seed(42)
    layers = [
        Embedding(11, 4), Flatten(),
        Linear(12, 16, bias=False), BatchNorm1d(16), Relu(),
        Linear(16, 11),
    ]
    with torch.no_grad():
        layers[-1].weight *= 0.1
    parameters = [p for layer in layers for p in layer.parameters()]
    for p in parameters:
        p.requires_grad = True
""")


def test_part3_layers_list_and_a_comprehension_of_their_parameters():
    """makemore part 3: a plain list of layers, ``parameters = [p for layer in layers for p
    in layer.parameters()]``, the forward pass a loop over the layers, the gradients reset
    in the update loop."""
    train = src("""
        lossi = []
        for i in range(6):
            ix = torch.randint(0, Xtr.shape[0], (16,))
            Xb, Yb = Xtr[ix], Ytr[ix]
            x = Xb
            for layer in layers:
                x = layer(x)
            loss = F.cross_entropy(x, Yb)
            loss.backward()
            for p in parameters:
                p.data -= 0.1 * p.grad
                p.grad = None
            lossi.append(loss.item())
    """)
    run = _run(LAYERS + DATA + PART3_MODEL + train)
    assert run.agree("lossi"), run.explain()
    got = [to_numpy(p) for p in run.ms_ns["parameters"]]
    want = [to_numpy(p) for p in run.torch_ns["parameters"]]
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


def test_training_in_a_function_that_receives_the_model_and_the_list():
    train = src("""
        def train(model, params, X, Y, steps, lr=0.1):
            losses = []
            for i in range(steps):
                ix = torch.randint(0, X.shape[0], (16,))
                logits = model(X[ix])
                loss = F.cross_entropy(logits, Y[ix])
                for p in params:
                    p.grad = None
                loss.backward()
                for p in params:
                    p.data += -lr * p.grad
                losses.append(loss.item())
            return losses

        lossi = train(model, parameters, Xtr, Ytr, 6)
    """)
    run = _run(LAYERS + DATA + MODEL + train)
    assert run.agree("lossi"), run.explain()
    _trained_alike(run.torch_ns, run.ms_ns)


def test_the_update_loop_over_model_parameters_directly():
    train = src("""
        lossi = []
        for i in range(6):
            logits = model(Xtr[:16])
            loss = F.cross_entropy(logits, Ytr[:16])
            for p in model.parameters():
                p.grad = None
            loss.backward()
            for p in model.parameters():
                p.data += -0.1 * p.grad
            lossi.append(loss.item())
    """)
    run = _run(LAYERS + DATA + MODEL + train)
    assert "zip(model.parameters(), grads)" in run.port.code
    assert run.agree("lossi"), run.explain()
    _trained_alike(run.torch_ns, run.ms_ns)


def test_layers_model_and_training_in_separate_cells(parity_shell):
    """A notebook: the classes in one cell, the model in the next, training in a third and
    evaluation in a fourth, each under ``%%ms_parity``."""
    reports, _ = parity_cells(parity_shell, [LAYERS + DATA, MODEL, TRAIN, EVAL])
    ns, shadow = parity_shell.user_ns, msmagic.shadow_namespace()
    assert reports[2].row("lossi").status == "match" and len(shadow["lossi"]) == 6
    assert reports[3].row("val").status == "match"
    _trained_alike(ns, shadow)
    assert "zip(parameters, grads)" in reports[2].port.code
    assert not [f for f in reports[2].port.unsupported if f.rule_id.startswith(("TRN", "GRD"))]


def test_a_layer_holding_a_tensor_it_was_given_is_flagged_not_trained_silently():
    """``self.weight = weight`` (a tensor made elsewhere): the port cannot make that a
    Parameter, so the gradients of the list would be zeros in MindSpore; the backward is
    flagged instead, and the class is left as it was."""
    source = src("""
        import torch
        import torch.nn.functional as F

        class Given:
            def __init__(self, weight):
                self.weight = weight

            def __call__(self, x):
                return x @ self.weight

            def parameters(self):
                return [self.weight]

        torch.manual_seed(0)
        layer = Given(torch.randn(3, 2))
        parameters = layer.parameters()
        for p in parameters:
            p.requires_grad = True
        x = torch.randn(5, 3)
        for i in range(3):
            loss = layer(x).pow(2).mean()
            for p in parameters:
                p.grad = None
            loss.backward()
            for p in parameters:
                p.data += -0.1 * p.grad
    """)
    result = msmagic.port(source)
    assert "mindspore.Parameter" not in result.code
    flagged = {(f.rule_id, f.api) for f in result.unsupported}
    assert ("TRN004", ".backward()") in flagged


@pytest.mark.parametrize("scale", ["0.1 * torch.randn(fan_in, fan_out)", "torch.randn(fan_in, fan_out) * 0.1"])
def test_a_scaled_factory_on_either_side_is_a_parameter(scale):
    source = LAYERS.replace("torch.randn((fan_in, fan_out)) / fan_in**0.5", scale) + DATA + MODEL + TRAIN
    run = _run(source)
    assert run.agree("lossi"), run.explain()
    _trained_alike(run.torch_ns, run.ms_ns)


def test_a_training_function_defined_before_any_call_is_ported_again_at_its_first_call(parity_shell):
    """The function comes a cell before its call: ported knowing nothing of ``params``
    (flagged), then ported again when the next cell's call shows the layer's list, and
    the call trains the layers as PyTorch does."""
    define = src("""
        def train(model, params, X, Y, steps, lr=0.1):
            losses = []
            for i in range(steps):
                logits = model(X)
                loss = F.cross_entropy(logits, Y)
                for p in params:
                    p.grad = None
                loss.backward()
                for p in params:
                    p.data += -lr * p.grad
                losses.append(loss.item())
            return losses

        steps = 5
    """)
    call = "lossi = train(model, parameters, Xtr[:32], Ytr[:32], 5)\n"
    reports, _ = parity_cells(parity_shell, [LAYERS + DATA, MODEL, define, call])
    ns, shadow = parity_shell.user_ns, msmagic.shadow_namespace()
    assert reports[3].row("lossi").status == "match"
    assert "train" in " ".join(reports[3].notes)  # defined anew on the MindSpore side
    _trained_alike(ns, shadow)


def test_an_aliased_torch_and_tensors_made_with_requires_grad_in_the_layer():
    """``import torch as T``, ``requires_grad=True`` at creation (no marking loop), the
    update ``p -= 0.1 * p.grad`` under no_grad with ``p.grad.zero_()`` in the loop over
    ``net.parameters()``: trained alike, and no finding for the dropped requires_grad (the
    Parameter is what is differentiated)."""
    source = src("""
        import torch as T

        class Layer:
            def __init__(self, n_in, n_out):
                self.W = T.randn(n_in, n_out, requires_grad=True)
                self.b = T.zeros(n_out, requires_grad=True)

            def __call__(self, x):
                return T.relu(x @ self.W + self.b)

            def parameters(self):
                return [self.W, self.b]

        T.manual_seed(0)
        net = Layer(3, 2)
        X = T.randn(8, 3)
        Y = T.randn(8, 2)
        losses = []
        for step in range(5):
            loss = ((net(X) - Y) ** 2).mean()
            loss.backward()
            with T.no_grad():
                for p in net.parameters():
                    p -= 0.1 * p.grad
                    p.grad.zero_()
            losses.append(loss.item())
        W, b = net.W * 1.0, net.b * 1.0
    """)
    run = run_pair(source, rtol=1e-5, atol=1e-6)
    assert run.torch_error is None and run.ms_error is None, run.explain()
    assert run.agree("losses", "W", "b"), run.explain()
    assert not run.port.unsupported, run.port.unsupported
    assert "zip(net.parameters(), grads)" in run.port.code


def test_a_layer_called_before_the_loop_over_the_others_is_inside_the_forward_pass():
    """``emb = layers[0](Xb)`` before ``for layer in layers[1:]``: the embedding's weight is
    read there, so the forward function starts there (left outside, its gradient would be
    zeros and the embedding would not train, while the losses still agree for a while)."""
    train = src("""
        lossi = []
        for i in range(6):
            ix = torch.randint(0, Xtr.shape[0], (16,))
            Xb, Yb = Xtr[ix], Ytr[ix]
            emb = layers[0](Xb)
            x = emb.view(emb.shape[0], -1)
            for layer in layers[1:]:
                x = layer(x)
            loss = F.cross_entropy(x, Yb)
            for p in parameters:
                p.grad = None
            loss.backward()
            for p in parameters:
                p.data += -0.1 * p.grad
            lossi.append(loss.item())
    """)
    run = _run(LAYERS + DATA + PART3_MODEL.replace("Embedding(11, 4), Flatten(),", "Embedding(11, 4),") + train)
    assert run.agree("lossi"), run.explain()
    for a, b in zip(run.ms_ns["parameters"], run.torch_ns["parameters"]):
        np.testing.assert_allclose(to_numpy(a), to_numpy(b), rtol=1e-4, atol=1e-5)
    assert "    emb = layers[0](Xb)\n" in run.port.code.split("def forward_fn")[1].split("grad_fn")[0]


PART3_TABLE = src("""
    torch.manual_seed(42)
    C = torch.randn((11, 4))
""")

PART3_LAYERS = src("""
    layers = [
        Flatten(),
        Linear(12, 16, bias=False), BatchNorm1d(16), Relu(),
        Linear(16, 11),
    ]
    with torch.no_grad():
        layers[-1].weight *= 0.1
    parameters = [C] + [p for layer in layers for p in layer.parameters()]
    for p in parameters:
        p.requires_grad = True
""")

PART3_TRAIN = src("""
    lossi = []
    for i in range(6):
        ix = torch.randint(0, Xtr.shape[0], (16,))
        Xb, Yb = Xtr[ix], Ytr[ix]
        emb = C[Xb]
        x = emb.view(emb.shape[0], -1)
        for layer in layers:
            x = layer(x)
        loss = F.cross_entropy(x, Yb)
        for p in parameters:
            p.grad = None
        loss.backward()
        lr = 0.1 if i < 4 else 0.01
        for p in parameters:
            p.data += -lr * p.grad
        lossi.append(loss.item())
""")


def _table_trained_alike(torch_ns, ms_ns):
    want = [to_numpy(p) for p in torch_ns["parameters"]]
    got = [to_numpy(p) for p in ms_ns["parameters"]]
    assert len(got) == len(want) == 6
    for k, (a, b) in enumerate(zip(got, want)):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5, err_msg=f"parameter {k}")
    # the embedding table trained (a plain tensor among the weights would get zeros)
    assert np.abs(to_numpy(ms_ns["C"]) - to_numpy(ms_ns["C0"])).max() > 1e-3


def test_part3_an_embedding_table_listed_beside_the_layers_parameters_trains():
    """makemore part 3: ``parameters = [C] + [p for layer in layers for p in
    layer.parameters()]`` with ``emb = C[Xb]`` first in the forward pass. C becomes a
    Parameter where the list is built (HWL003) and the forward function starts at it:
    before, the step was flagged and the port failed at ``loss.backward()``."""
    run = _run(LAYERS + DATA + PART3_TABLE + "C0 = C.clone()\n" + PART3_LAYERS + PART3_TRAIN)
    assert run.agree("lossi"), run.explain()
    _table_trained_alike(run.torch_ns, run.ms_ns)
    assert "C = mindspore.Parameter(C)" in run.port.code


def test_part3_table_layers_and_training_in_three_cells(parity_shell):
    """The table made in one cell, the layers and the list in the next, training in a
    third, each under ``%%ms_parity``."""
    reports, _ = parity_cells(parity_shell, [LAYERS + DATA + PART3_TABLE + "C0 = C.clone()\n", PART3_LAYERS,
                                             PART3_TRAIN])
    ns, shadow = parity_shell.user_ns, msmagic.shadow_namespace()
    assert reports[2].row("lossi").status == "match" and len(shadow["lossi"]) == 6
    _table_trained_alike(ns, shadow)
    assert not [f for r in reports for f in r.port.unsupported if f.rule_id.startswith(("TRN", "GRD", "HWL"))]


def test_a_list_of_a_tensor_and_layers_trained_in_a_function():
    """The training step in a function that receives the list and reads the table."""
    train = ("def fit(params, steps):\n" + textwrap.indent(PART3_TRAIN.replace("parameters", "params")
                                                            .replace("range(6)", "range(steps)"), "    ")
             + "    return lossi\nlossi = fit(parameters, 6)\n")
    run = _run(LAYERS + DATA + PART3_TABLE + "C0 = C.clone()\n" + PART3_LAYERS + train)
    assert run.agree("lossi"), run.explain()
    _table_trained_alike(run.torch_ns, run.ms_ns)
