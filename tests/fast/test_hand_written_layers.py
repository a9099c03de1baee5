"""Hand-written layers (HWL001, HWL002, HWL003, TRN001) and slot assignment (IDX011), as text:
what the port writes for makemore-style classes with a ``parameters()`` method, their
manual training loop, and a tensor assigned into an indexed slot."""

import pytest

from tests.fast.codemod import assert_ports, dedent, edit_ids, finding_ids, port

LINEAR = """
    import torch
    import torch.nn.functional as F

    class Linear:
        def __init__(self, fan_in, fan_out, bias=True):
            self.weight = torch.randn((fan_in, fan_out)) / fan_in**0.5
            self.bias = torch.zeros(fan_out) if bias else None
            self.out = None

        def __call__(self, x):
            self.out = x @ self.weight
            if self.bias is not None:
                self.out += self.bias
            return self.out

        def parameters(self):
            return [self.weight] + ([] if self.bias is None else [self.bias])

"""

LINEAR_MS = """
    import mindspore
    import mindspore.ops as F

    class Linear:
        def __init__(self, fan_in, fan_out, bias=True):
            self.weight = mindspore.Parameter(mindspore.ops.randn((fan_in, fan_out)) / fan_in**0.5)
            self.bias = mindspore.Parameter(mindspore.ops.zeros(fan_out)) if bias else None
            self.out = None

        def __call__(self, x):
            self.out = x @ self.weight
            if self.bias is not None:
                self.out += self.bias
            return self.out

        def parameters(self):
            return [self.weight] + ([] if self.bias is None else [self.bias])

"""


def test_a_layer_and_its_manual_training_loop():
    assert_ports(
        LINEAR + """
    layers = [Linear(3, 8), Linear(8, 2)]
    with torch.no_grad():
        layers[-1].weight *= 0.1
    parameters = [p for layer in layers for p in layer.parameters()]
    for p in parameters:
        p.requires_grad = True
    for i in range(10):
        x = X
        for layer in layers:
            x = layer(x)
        loss = F.cross_entropy(x, Y)
        for p in parameters:
            p.grad = None
        loss.backward()
        for p in parameters:
            p.data += -0.1 * p.grad
""",
        LINEAR_MS + """
    layers = [Linear(3, 8), Linear(8, 2)]
    F.assign(layers[-1].weight, layers[-1].weight * 0.1)
    parameters = [p for layer in layers for p in layer.parameters()]
    for p in parameters:
        p.requires_grad = True
    def forward_fn(x):
        for layer in layers:
            x = layer(x)
        loss = F.cross_entropy(x, Y)
        return loss, x
    grad_fn = mindspore.value_and_grad(forward_fn, None, parameters, has_aux=True)
    for i in range(10):
        x = X
        (loss, x), grads = grad_fn(x)
        for p, p_grad in zip(parameters, grads):
            F.assign(p, p + (-0.1 * p_grad))
""",
        edits={"FUN006", "FUN009", "FUN011", "HWL001", "HWL002", "IMP001", "NGR001", "TRN001"},
    )


def test_a_class_whose_parameters_are_not_made_by_a_factory_is_left_alone():
    result = port(LINEAR.replace("torch.randn((fan_in, fan_out)) / fan_in**0.5", "make_weight(fan_in, fan_out)")
                  + """
    model = Linear(3, 2)
    parameters = model.parameters()
    for p in parameters:
        p.requires_grad = True
    for i in range(3):
        loss = model(X).pow(2).mean()
        for p in parameters:
            p.grad = None
        loss.backward()
        for p in parameters:
            p.data += -0.1 * p.grad
""")
    assert "mindspore.Parameter(" not in result.code and "grad_fn" not in result.code
    assert "TRN004" in finding_ids(result)


def test_a_module_attribute_updated_in_place_is_not_rewritten():
    """HWL002 concerns plain objects: a Cell updates its Parameter attributes in place."""
    source = LINEAR + """
    net = torch.nn.Linear(3, 2)
    with torch.no_grad():
        net.weight *= 0.1
"""
    assert "net.weight *= 0.1" in port(source).code


def test_a_tensor_assigned_into_a_row_loses_leading_ones():
    assert_ports(
        """
            import torch
            rows = torch.zeros(4, 3)
            for i in range(4):
                rows[i] = net(x[[i]])
                rows[i, 0] = 2 * i
                rows[i + 1:] = 0.5
        """,
        """
            import mindspore
            rows = mindspore.ops.zeros((4, 3))

            def without_leading_ones(value, slot):
                \"\"\"The value PyTorch writes into tensor[index]: one with more dimensions than the slot
                loses its leading size-1 dimensions (MindSpore raises for them instead).\"\"\"
                ndim = getattr(slot, "ndim", 0)
                while getattr(value, "ndim", 0) > ndim and value.shape[0] == 1:
                    value = value[0]
                return value

            for i in range(4):
                rows[i] = without_leading_ones(net(x[[i]]), rows[i])
                rows[i, 0] = 2 * i
                rows[i + 1:] = 0.5
        """,
        edits={"FUN009", "IDX011", "IMP001"},
    )


def test_a_slot_with_a_call_in_its_index_is_left_alone():
    code = port("import torch\nrows = torch.zeros(4, 3)\nrows[pick()] = net(x)\n").code
    assert "without_leading_ones" not in code


def test_a_function_whose_call_sites_disagree_on_the_list_is_flagged():
    """``train(model, params)`` called once with the layer's list and once with something
    else: the port cannot tell the list holds Parameters, so the backward is flagged
    rather than differentiated silently to zeros."""
    source = LINEAR + """
    def train(model, params, steps):
        for i in range(steps):
            loss = model(X).pow(2).mean()
            for p in params:
                p.grad = None
            loss.backward()
            for p in params:
                p.data += -0.1 * p.grad

    model = Linear(3, 2)
    train(model, model.parameters(), 3)
    train(model, {"w": 1}, 3)
"""
    result = port(source)
    assert "grad_fn" not in result.code
    assert "TRN004" in finding_ids(result)
    agreed = port(source.replace('train(model, {"w": 1}, 3)', "train(model, model.parameters(), 5)"))
    assert "grad_fn = mindspore.value_and_grad(forward_fn, None, params)" in agreed.code


def test_a_row_of_a_tensor_made_in_an_earlier_cell():
    from msmagic.engine.session import PortSession

    session = PortSession()
    port("import torch\nrows = torch.zeros(4, 3)\n", session=session)
    code = port("for i in range(4):\n    rows[i] = net(x[[i]])\n", session=session).code
    assert "rows[i] = without_leading_ones(net(x[[i]]), rows[i])" in code


TRAIN_MIXED = """
for i in range(3):
    emb = C[idx]
    x = emb
    for layer in layers:
        x = layer(x)
    loss = x.sum()
    for p in parameters:
        p.grad = None
    loss.backward()
    for p in parameters:
        p.data += -0.1 * p.grad
"""


def test_a_tensor_listed_with_the_layers_parameters_becomes_a_parameter():
    """HWL003: ``[C] + [p for layer in layers ...]``: C is made a Parameter where the list
    is built, and the forward function starts at ``emb = C[idx]``."""
    from msmagic.engine.session import PortSession

    session = PortSession()
    made = port(dedent(LINEAR) + "C = torch.randn((5, 2))\nidx = torch.tensor([1, 3])\nlayers = [Linear(2, 3)]\n"
                "parameters = [C] + [p for layer in layers for p in layer.parameters()]\n", session=session)
    assert "C = mindspore.Parameter(C)\nparameters = [C] + [p for layer in layers" in made.code
    assert "HWL003" in edit_ids(made)
    trained = port(TRAIN_MIXED, session=session)
    assert "def forward_fn():\n    emb = C[idx]" in trained.code, trained.code
    assert "value_and_grad(forward_fn, None, parameters" in trained.code
    assert not {i for i in finding_ids(trained) if i.startswith(("TRN", "GRD"))}
    assert port(made.code).code == made.code  # porting again changes nothing


def test_a_list_rebound_in_a_later_cell_is_no_longer_trained_as_parameters():
    """``parameters`` held ``[C] + [layers' parameters]`` in one cell and plain tensors
    from the next: the training step of a third cell is not differentiated over it as
    Parameters (that would give zeros silently)."""
    from msmagic.engine.session import PortSession

    session = PortSession()
    port(dedent(LINEAR) + "C = torch.randn((5, 2))\nlayers = [Linear(2, 3)]\n"
         "parameters = [C] + [p for layer in layers for p in layer.parameters()]\n", session=session)
    port("W = torch.randn((2, 3))\nparameters = [C, W]\n", session=session)
    second = port(TRAIN_MIXED, session=session)
    assert "value_and_grad(forward_fn, None, parameters" not in second.code


@pytest.mark.parametrize("listed", [
    "[C, W] + [p for layer in layers for p in layer.parameters()]",
    "[p for layer in layers for p in layer.parameters()] + [C] + [W]",
])
def test_tensors_listed_in_any_order_beside_the_layers_parameters(listed):
    result = port(dedent(LINEAR) + "C = torch.randn((5, 2))\nW = torch.randn((3, 3))\nlayers = [Linear(2, 3)]\n"
                  f"parameters = {listed}\n")
    assert f"C = mindspore.Parameter(C)\nW = mindspore.Parameter(W)\nparameters = {listed}\n" in result.code


def test_a_list_with_an_expression_beside_the_layers_parameters_is_left_alone():
    """``[C * 2] + [...]`` holds a computed tensor, not a name the forward pass reads."""
    result = port(dedent(LINEAR) + "C = torch.randn((5, 2))\nlayers = [Linear(2, 3)]\n"
                  "parameters = [C * 2] + [p for layer in layers for p in layer.parameters()]\n")
    assert "mindspore.Parameter(C" not in result.code
