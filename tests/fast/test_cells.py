"""Modules (CEL, MOD, INI, PRC001): nn.Module subclasses become Cells; containers, walks, init and precision."""

import msmagic
from tests.fast.codemod import assert_ports
from tests.fast.codemod import dedent as dedent_text


def test_module_becomes_cell_with_construct():
    assert_ports(
        """
            import torch
            import torch.nn as nn
            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Linear(4, 2)

                def forward(self, x):
                    return self.fc(x)

            net = Net()
        """,
        """
            import mindspore
            import mindspore.nn as nn
            class Net(nn.Cell):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Dense(4, 2)
                    self.set_train()

                def construct(self, x):
                    return self.fc(x)

            net = Net()
        """,
        edits={"CEL001", "CEL002", "IMP001", "LAY001", "MOD001"},
    )


def test_module_without_init_gets_one():
    assert_ports(
        """
            import torch.nn as nn
            class Double(nn.Module):
                def forward(self, x):
                    return x * 2
        """,
        """
            import mindspore.nn as nn
            class Double(nn.Cell):
                def __init__(self):
                    super().__init__()
                    self.set_train()

                def construct(self, x):
                    return x * 2
        """,
        edits={"CEL001", "CEL002", "IMP001", "MOD001"},
    )


def test_forward_calls_become_construct():
    assert_ports(
        """
            import torch.nn as nn
            class Twice(nn.Module):
                def forward(self, x):
                    return x * 2

            class Sub(Twice):
                def forward(self, x):
                    return super().forward(x) + self.forward(x)

            y = Sub().forward(x)
        """,
        """
            import mindspore.nn as nn
            class Twice(nn.Cell):
                def __init__(self):
                    super().__init__()
                    self.set_train()

                def construct(self, x):
                    return x * 2

            class Sub(Twice):
                def construct(self, x):
                    return super().construct(x) + self.construct(x)

            y = Sub().construct(x)
        """,
        edits={"CEL001", "CEL002", "IMP001", "MOD001"},
    )


def test_containers_renamed():
    assert_ports(
        """
            import torch.nn as nn
            model = nn.Sequential(nn.Linear(4, 3), nn.ReLU())
            heads = nn.ModuleList([nn.Linear(3, 2), nn.Linear(3, 1)])
            branches = nn.ModuleDict({'a': nn.ReLU(), 'b': nn.Sigmoid()})
        """,
        """
            import mindspore.nn as nn
            model = nn.SequentialCell(nn.Dense(4, 3), nn.ReLU()).set_train()
            heads = nn.CellList([nn.Dense(3, 2), nn.Dense(3, 1)]).set_train()
            branches = nn.CellDict({'a': nn.ReLU(), 'b': nn.Sigmoid()}).set_train()
        """,
        edits={"CEL003", "FUN013", "IMP001", "LAY001", "MOD003"},
    )


def test_containers_inside_a_module_get_no_set_train():
    assert_ports(
        """
            import torch.nn as nn
            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.body = nn.Sequential(nn.Linear(8, 8), nn.ReLU())
                    self.heads = nn.ModuleList([nn.Linear(8, 2)])

                def forward(self, x):
                    return self.heads[0](self.body(x))
        """,
        """
            import mindspore.nn as nn
            class Net(nn.Cell):
                def __init__(self):
                    super().__init__()
                    self.body = nn.SequentialCell(nn.Dense(8, 8), nn.ReLU())
                    self.heads = nn.CellList([nn.Dense(8, 2)])
                    self.set_train()

                def construct(self, x):
                    return self.heads[0](self.body(x))
        """,
        edits={"CEL001", "CEL002", "CEL003", "FUN013", "IMP001", "LAY001", "MOD001"},
    )


def test_parameter_and_child_walks():
    assert_ports(
        """
            import torch.nn as nn
            model = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))
            names = [n for n, _ in model.named_parameters()]
            children = [n for n, _ in model.named_children()]
            n_params = sum(p.numel() for p in model.parameters())
            mods = list(model.modules())
        """,
        """
            import mindspore.nn as nn
            model = nn.SequentialCell(nn.Dense(4, 3), nn.ReLU(), nn.Dense(3, 2)).set_train()
            names = [n for n, _ in model.parameters_and_names()]
            children = [n for n, _ in model.name_cells().items()]
            n_params = sum(p.numel() for p in model.get_parameters())
            mods = list((cell for _, cell in model.cells_and_names()))
        """,
        edits={"CEL003", "CEL004", "FUN013", "IMP001", "LAY001", "MOD003", "TNS001"},
    )


def test_add_module_becomes_insert_child_to_cell():
    assert_ports(
        """
            import torch.nn as nn
            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    for i in range(2):
                        self.add_module(f"fc{i}", nn.Linear(3, 3))

                def forward(self, x):
                    return self.fc1(self.fc0(x))
        """,
        """
            import mindspore.nn as nn
            class Net(nn.Cell):
                def __init__(self):
                    super().__init__()
                    for i in range(2):
                        self.insert_child_to_cell(f"fc{i}", nn.Dense(3, 3))
                    self.set_train()

                def construct(self, x):
                    return self.fc1(self.fc0(x))
        """,
        edits={"CEL001", "CEL002", "CEL005", "IMP001", "LAY001", "MOD001"},
    )


def test_state_dict_and_load_state_dict():
    assert_ports(
        """
            import torch.nn as nn
            src = nn.Linear(3, 2)
            dst = nn.Linear(3, 2)
            sd = src.state_dict()
            missing, unexpected = dst.load_state_dict(sd, strict=False)
        """,
        """
            import mindspore.nn as nn
            import mindspore
            src = nn.Dense(3, 2)
            dst = nn.Dense(3, 2)
            sd = src.parameters_dict()
            missing, unexpected = mindspore.load_param_into_net(dst, sd, strict_load=True)
        """,
        edits={"CEL006", "IMP001", "LAY001"},
    )


def test_register_buffer_kept():
    assert_ports(
        """
            import torch
            import torch.nn as nn
            class Offset(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.register_buffer("offset", torch.tensor([1.0, -1.0]))

                def forward(self, x):
                    return x + self.offset
        """,
        """
            import mindspore
            import mindspore.nn as nn
            class Offset(nn.Cell):
                def __init__(self):
                    super().__init__()
                    self.register_buffer("offset", mindspore.Tensor([1.0, -1.0]))
                    self.set_train()

                def construct(self, x):
                    return x + self.offset
        """,
        edits={"CEL001", "CEL002", "DAT001", "IMP001", "MOD001"},
    )


def test_parameter_attribute_in_module():
    assert_ports(
        """
            import torch
            import torch.nn as nn
            class Scale(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.w = nn.Parameter(torch.ones(3))

                def forward(self, x):
                    return x * self.w
        """,
        """
            import mindspore
            import mindspore.nn as nn
            class Scale(nn.Cell):
                def __init__(self):
                    super().__init__()
                    self.w = mindspore.Parameter(mindspore.ops.ones(3))
                    self.set_train()

                def construct(self, x):
                    return x * self.w
        """,
        edits={"CEL001", "CEL002", "DAT004", "FUN009", "IMP001", "MOD001"},
    )


def test_model_half_becomes_to_float16():
    assert_ports(
        """
            import torch.nn as nn
            model = nn.Linear(3, 2)
            model.half()
            net = model.double()
        """,
        """
            import mindspore.nn as nn
            import mindspore
            model = nn.Dense(3, 2)
            model.to(mindspore.float16)
            net = model.to(mindspore.float64)
        """,
        edits={"IMP001", "LAY001", "PRC001"},
    )


def test_init_constant_and_zeros():
    assert_ports(
        """
            import torch.nn as nn
            layer = nn.Linear(4, 3)
            nn.init.constant_(layer.weight, 0.5)
            nn.init.zeros_(layer.bias)
        """,
        """
            import mindspore.nn as nn
            from mindspore.common.initializer import initializer, Constant, Zero
            layer = nn.Dense(4, 3)
            layer.weight.set_data(initializer(Constant(value=0.5), layer.weight.shape, layer.weight.dtype))
            layer.bias.set_data(initializer(Zero(), layer.bias.shape, layer.bias.dtype))
        """,
        edits={"IMP001", "INI001", "LAY001"},
    )


def test_init_kaiming_becomes_he():
    assert_ports(
        """
            import torch.nn as nn
            layer = nn.Linear(4, 3)
            nn.init.kaiming_uniform_(layer.weight, mode='fan_in', nonlinearity='relu')
            nn.init.kaiming_normal_(layer.weight)
        """,
        """
            import mindspore.nn as nn
            from mindspore.common.initializer import initializer, HeUniform, HeNormal
            layer = nn.Dense(4, 3)
            layer.weight.set_data(initializer(HeUniform(mode='fan_in', nonlinearity='relu'), layer.weight.shape, layer.weight.dtype))
            layer.weight.set_data(initializer(HeNormal(), layer.weight.shape, layer.weight.dtype))
        """,
        edits={"IMP001", "INI002", "LAY001"},
    )


def test_init_normal_sigma_first():
    assert_ports(
        """
            import torch.nn as nn
            layer = nn.Linear(4, 3)
            nn.init.normal_(layer.weight, std=0.02)
            nn.init.trunc_normal_(layer.weight, std=0.02)
        """,
        """
            import mindspore.nn as nn
            from mindspore.common.initializer import initializer, Normal, TruncatedNormal
            layer = nn.Dense(4, 3)
            layer.weight.set_data(initializer(Normal(sigma=0.02), layer.weight.shape, layer.weight.dtype))
            layer.weight.set_data(initializer(TruncatedNormal(sigma=0.02), layer.weight.shape, layer.weight.dtype))
        """,
        edits={"IMP001", "INI003", "LAY001"},
    )


def test_init_uniform_shifted():
    assert_ports(
        """
            import torch.nn as nn
            layer = nn.Linear(4, 3)
            nn.init.uniform_(layer.weight)
            nn.init.uniform_(layer.bias, -0.1, 0.1)
        """,
        """
            import mindspore.nn as nn
            from mindspore.common.initializer import initializer, Uniform
            layer = nn.Dense(4, 3)
            layer.weight.set_data(initializer(Uniform(scale=0.5), layer.weight.shape, layer.weight.dtype).init_data() + 0.5)
            layer.bias.set_data(initializer(Uniform(scale=0.1), layer.bias.shape, layer.bias.dtype))
        """,
        edits={"IMP001", "INI004", "LAY001"},
    )


def test_init_xavier():
    assert_ports(
        """
            import torch.nn as nn
            layer = nn.Linear(4, 3)
            nn.init.xavier_uniform_(layer.weight)
            nn.init.xavier_normal_(layer.weight, gain=2.0)
        """,
        """
            import mindspore.nn as nn
            from mindspore.common.initializer import initializer, XavierUniform, XavierNormal
            layer = nn.Dense(4, 3)
            layer.weight.set_data(initializer(XavierUniform(), layer.weight.shape, layer.weight.dtype))
            layer.weight.set_data(initializer(XavierNormal(gain=2.0), layer.weight.shape, layer.weight.dtype))
        """,
        edits={"IMP001", "INI001", "LAY001"},
    )


def test_calculate_gain_evaluated():
    assert_ports(
        """
            import torch.nn as nn
            relu_gain = nn.init.calculate_gain('relu')
            leaky_gain = nn.init.calculate_gain('leaky_relu', 0.2)
        """,
        """
            import mindspore.nn as nn
            relu_gain = 1.4142135623730951
            leaky_gain = 1.3867504905630728
        """,
        edits={"IMP001", "INI005"},
    )


def test_init_in_module_apply_loop():
    assert_ports(
        """
            import torch.nn as nn
            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Linear(4, 2)
                    nn.init.zeros_(self.fc.bias)

                def forward(self, x):
                    return self.fc(x)
        """,
        """
            import mindspore.nn as nn
            from mindspore.common.initializer import initializer, Zero
            class Net(nn.Cell):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Dense(4, 2)
                    self.fc.bias.set_data(initializer(Zero(), self.fc.bias.shape, self.fc.bias.dtype))
                    self.set_train()

                def construct(self, x):
                    return self.fc(x)
        """,
        edits={"CEL001", "CEL002", "IMP001", "INI001", "LAY001", "MOD001"},
    )


def test_children_walk_becomes_cells():
    assert_ports(
        """
            import torch.nn as nn
            m = nn.Sequential(nn.Linear(2, 2))
            kids = list(m.children())
        """,
        """
            import mindspore.nn as nn
            m = nn.SequentialCell(nn.Dense(2, 2)).set_train()
            kids = list(m.cells())
        """,
        edits={"CEL003", "CEL004", "IMP001", "LAY001", "MOD003"},
    )


GRAYKODE_ATTENTION = """
    import torch
    import torch.nn as nn
    class MultiHeadAttention(nn.Module):
        def __init__(self):
            super().__init__()
            self.W_Q = nn.Linear(8, 8)
        def forward(self, Q):
            context = self.W_Q(Q)
            if Q.dim() == 3:
                context = nn.Linear(8, 8)(context)
            return nn.LayerNorm(8)(context + Q)
    class EncoderLayer(nn.Module):
        def __init__(self):
            super().__init__()
            self.enc_self_attn = MultiHeadAttention()
        def forward(self, x):
            return self.enc_self_attn(x)
"""


def test_a_random_layer_built_inside_forward_is_flagged_where_it_is_built_and_run():
    from msmagic.engine.session import PortSession

    from tests.fast.codemod import dedent

    session = PortSession()
    first = msmagic.port(dedent(GRAYKODE_ATTENTION), session=session)
    flagged = [f for f in first.unsupported if f.rule_id == "MOD004"]
    # the Linear (random weights), not the LayerNorm (ones and zeros in both frameworks)
    assert [(f.line, f.api) for f in flagged] == [(10, "torch.nn.Linear")], first.unsupported
    line = first.code.splitlines()[10]
    assert "nn.Dense(8, 8)(context)  # msmagic: MOD004 Linear built at every forward call" in line
    later = msmagic.port(dedent("""
        model = EncoderLayer()
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        def evaluate(m, x):
            return m(x)
        def run(x):
            return model(x)
        out = model(torch.ones(2, 3, 8))
        for step in range(2):
            y = run(torch.ones(2, 3, 8))
        x = torch.ones(3)
    """), session=session)
    where = sorted((f.line, f.reason.split(",")[0]) for f in later.unsupported if f.rule_id == "MOD004")
    assert where == [(7, "runs model"), (8, "calls run")], later.unsupported
    assert "torch.nn.Linear in MultiHeadAttention.forward, through MultiHeadAttention" in later.unsupported[0].reason
    # graykode's whole script under ``if __name__ == '__main__':`` (one statement)
    script = msmagic.port(dedent("""
        if __name__ == '__main__':
            net = EncoderLayer()
            for epoch in range(2):
                out = net(torch.ones(2, 3, 8))
    """), session=session)
    assert [(f.line, f.reason.split(",")[0]) for f in script.unsupported] == [(1, "runs net")], script.unsupported
    # a class of the same name without the layer: nothing more is flagged
    again = msmagic.port(dedent("""
        class EncoderLayer(nn.Module):
            def forward(self, x):
                return x
        model = EncoderLayer()
        out = model(torch.ones(2))
    """), session=session)
    assert not again.unsupported, again.unsupported


def test_a_module_dict_of_containers_becomes_the_defined_module_dict():
    """CellDict refuses containers and None; the dict(...) spelling nanoGPT and makemore
    use is read like a dict display."""
    result = msmagic.port(dedent_text("""
        import torch.nn as nn
        blocks = nn.ModuleDict(dict(wte=nn.Embedding(5, 2), h=nn.ModuleList([nn.Linear(2, 2)])))
        plain = nn.ModuleDict({"a": nn.Linear(2, 2)})
    """))
    lines = result.code.splitlines()
    assert "class ModuleDict(nn.Cell):" in lines
    assert any(ln.startswith("blocks = ModuleDict(dict(wte=nn.Embedding(") and ln.endswith(".set_train()")
               for ln in lines), result.code
    assert "plain = nn.CellDict({\"a\": nn.Dense(2, 2)}).set_train()" in lines
    assert not result.unsupported
    assert msmagic.port(result.code).code == result.code
