"""Kind inference across functions and cells (engine/infer.py): a function's parameters
take the kinds of the arguments at its call sites, functions return what their ``return``
statements agree on, loop and comprehension targets the elements of what they iterate;
where call sites disagree or none is known, a use whose meaning depends on the kind is
flagged with the reason. Text in, text out: neither framework is imported."""

import msmagic
from msmagic.engine.session import PortSession
from tests.fast.codemod import assert_ports, dedent, finding_ids

NLL_INDEX = "-input[list(range(target.shape[0])), target].mean()"


def _session(*cells):
    session = PortSession()
    for cell in cells:
        msmagic.port(dedent(cell), session=session)
    return session


def test_parameter_takes_the_kind_of_a_call_after_the_definition():
    assert_ports(
        """
            import torch
            def nll(input, target):
                return -input[range(target.shape[0]), target].mean()
            logits = torch.randn(4, 5)
            loss = nll(logits, torch.tensor([1, 2, 0, 3]))
        """,
        f"""
            import mindspore
            def nll(input, target):
                return {NLL_INDEX}
            logits = mindspore.ops.randn(4, 5)
            loss = nll(logits, mindspore.Tensor([1, 2, 0, 3]))
        """,
        edits={"IMP001", "IDX010", "FUN011", "DAT001"},
    )


def test_keyword_arguments_type_the_parameters_they_name():
    result = msmagic.port(dedent("""
        import torch
        def nll(input, target):
            return -input[range(target.shape[0]), target].mean()
        loss = nll(target=torch.tensor([1, 0]), input=torch.randn(2, 3))
    """))
    assert NLL_INDEX in result.code, result.code
    assert not result.unsupported


def test_star_arguments_leave_the_parameters_unknown_and_flagged():
    # (a range index is ported whatever the receiver is; std's correction needs a tensor)
    result = msmagic.port(dedent("""
        import torch
        def nll(input, target):
            return -input.std(0).mean()
        args = (torch.randn(2, 3), torch.tensor([1, 0]))
        loss = nll(*args)
    """))
    assert "input.std(0)" in result.code
    assert finding_ids(result) == {"GEN002", "GEN004"}  # the call of the flagged function too
    assert "no call of nll() shows what it is" in result.unsupported[0].reason
    assert [(f.rule_id, f.line) for f in result.unsupported] == [("GEN002", 3), ("GEN004", 5)]


def test_kinds_flow_through_a_chain_of_calls_and_returns():
    assert_ports(
        """
            import torch
            def scores(model, x):
                return model(x)
            def pick(logits, target):
                return logits[range(target.shape[0]), target]
            def loss_of(model, x, target):
                out = scores(model, x)
                return -pick(out, target).mean()
            net = torch.nn.Linear(3, 4)
            loss = loss_of(net, torch.randn(2, 3), torch.tensor([1, 3]))
        """,
        """
            import mindspore
            def scores(model, x):
                return model(x)
            def pick(logits, target):
                return logits[list(range(target.shape[0])), target]
            def loss_of(model, x, target):
                out = scores(model, x)
                return -pick(out, target).mean()
            net = mindspore.nn.Dense(3, 4)
            loss = loss_of(net, mindspore.ops.randn(2, 3), mindspore.Tensor([1, 3]))
        """,
        edits={"IMP001", "IDX010", "LAY001", "FUN011", "DAT001"},
    )


def test_call_sites_that_disagree_are_flagged_and_nothing_is_guessed():
    result = msmagic.port(dedent("""
        import numpy as np
        import torch
        def center(x):
            return x - x.mean(dim=0)
        a = center(torch.randn(4, 3))
        b = center(np.ones((4, 3)))
    """))
    assert "x.mean(dim=0)" in result.code  # not ported on a guess
    finding, *calls = result.unsupported
    assert finding.rule_id == "GEN002" and finding.line == 4
    assert [(f.rule_id, f.line) for f in calls] == [("GEN004", 5), ("GEN004", 6)]  # both calls
    assert "whose calls pass a NumPy array and a tensor" in finding.reason, finding.reason


def test_a_parameter_no_call_shows_is_flagged_where_the_meaning_differs():
    result = msmagic.port(dedent("""
        import torch
        def grow(t):
            return t.as_strided((2,), (1,)), t.share_memory_()
    """))
    assert finding_ids(result) == {"GEN002"}
    assert len(result.unsupported) == 2
    assert all("t is a parameter of grow(), and no call of grow() shows what it is" in f.reason
               for f in result.unsupported)


def test_method_parameters_take_the_kinds_of_calls_through_the_instance():
    result = msmagic.port(dedent("""
        import torch
        class Picker:
            def __init__(self, k):
                self.k = k
            def pick(self, logits, target):
                return logits[range(self.k), target]
            def __call__(self, logits, target):
                return -self.pick(logits, target).mean()
        picker = Picker(2)
        loss = picker(torch.randn(2, 3), torch.tensor([0, 2]))
    """))
    assert "logits[list(range(self.k)), target]" in result.code, result.code
    assert not result.unsupported


def test_a_user_class_that_is_no_module_keeps_its_methods():
    result = msmagic.port(dedent("""
        import torch
        class Linear:
            def __init__(self, fan_in, fan_out, bias=True):
                self.weight = torch.randn((fan_in, fan_out)) / fan_in**0.5
                self.bias = torch.zeros(fan_out) if bias else None
            def __call__(self, x):
                self.out = x @ self.weight
                if self.bias is not None:
                    self.out += self.bias
                return self.out
            def parameters(self):
                return [self.weight] + ([] if self.bias is None else [self.bias])
        class Tanh:
            def __call__(self, x):
                self.out = torch.tanh(x)
                return self.out
            def parameters(self):
                return []
        layers = [Linear(3, 4), Tanh(), Linear(4, 2)]
        parameters = [p for layer in layers for p in layer.parameters()]
        n = sum(p.nelement() for p in parameters)
        h = layers[0](torch.randn(5, 3)).view(-1)
    """))
    assert "layer.parameters()" in result.code and "get_parameters" not in result.code, result.code
    assert "def parameters(self):" in result.code
    assert ".view(-1)" in result.code
    assert not result.unsupported, result.unsupported


def test_loop_targets_take_the_elements_of_zip_and_enumerate():
    assert_ports(
        """
            import torch
            xs = [torch.randn(2, 3), torch.randn(2, 3)]
            ts = [torch.tensor([0, 1]), torch.tensor([2, 1])]
            total = 0
            for i, (x, t) in enumerate(zip(xs, ts)):
                total = total + x[range(2), t].sum()
        """,
        """
            import mindspore
            xs = [mindspore.ops.randn(2, 3), mindspore.ops.randn(2, 3)]
            ts = [mindspore.Tensor([0, 1]), mindspore.Tensor([2, 1])]
            total = 0
            for i, (x, t) in enumerate(zip(xs, ts)):
                total = total + x[list(range(2)), t].sum()
        """,
        edits={"IMP001", "IDX010", "FUN011", "DAT001"},
    )


def test_comprehension_targets_take_the_elements_they_iterate():
    result = msmagic.port(dedent("""
        import torch
        rows = [torch.randn(3, 4) for _ in range(2)]
        picked = [r[range(3), torch.tensor([0, 1, 2])] for r in rows]
        n = sum(p.numel() for p in torch.nn.Linear(2, 3).parameters())
    """))
    assert "r[list(range(3))" in result.code, result.code
    assert not result.unsupported


def test_a_later_cell_ports_an_earlier_function_again_with_what_it_passes():
    session = _session("import torch\n")
    first = msmagic.port(dedent("""
        def nll(input, target):
            return -input[range(target.shape[0]), target].mean() + input.std(0).sum()
    """), session=session)
    assert finding_ids(first) == {"GEN002"}  # nothing calls it yet: std flagged
    later = msmagic.port(dedent("""
        logits = torch.randn(4, 5)
        loss = nll(logits, torch.tensor([1, 2, 0, 3]))
    """), session=session)
    (revision,) = later.revised
    assert revision.name == "nll"
    assert revision.kinds == {"input": "tensor", "target": "tensor"}
    assert NLL_INDEX in revision.result.code and "input.std(0, ddof=1)" in revision.result.code
    assert not revision.result.unsupported
    assert any("Ported again" in note and "nll()" in note for note in later.notes)
    # the same call again changes nothing more
    again = msmagic.port("loss = nll(logits, torch.tensor([1, 2, 0, 3]))\n", session=session)
    assert not again.revised


def test_revisions_reach_the_functions_an_earlier_function_calls():
    session = _session("import torch\n", """
        def pick(logits, target):
            return logits[range(target.shape[0]), target]
    """, """
        def nll(input, target):
            return -pick(input, target).mean()
    """)
    later = msmagic.port("loss = nll(torch.randn(2, 3), torch.tensor([0, 2]))\n", session=session)
    assert [r.name for r in later.revised] == ["pick", "nll"] or \
        sorted(r.name for r in later.revised) == ["nll", "pick"]
    pick = next(r for r in later.revised if r.name == "pick")
    assert "logits[list(range(target.shape[0])), target]" in pick.result.code


def test_a_function_defined_again_keeps_the_calls_later_cells_made():
    session = _session("import torch\n", """
        def nll(input, target):
            return -input[range(target.shape[0]), target].mean()
    """, "loss = nll(torch.randn(2, 3), torch.tensor([0, 2]))\n")
    again = msmagic.port(dedent("""
        def nll(input, target):
            return -input[range(target.shape[0]), target].mean()
    """), session=session)
    assert NLL_INDEX in again.code and not again.unsupported


def test_numpy_values_are_not_tensors():
    result = msmagic.port(dedent("""
        import numpy as np
        import torch
        a = np.random.rand(4, 3)
        v = a.var()
        s = a.std(axis=0)
        idx = a[range(2)]
    """))
    assert "a.var()" in result.code and "a.std(axis=0)" in result.code
    assert "a[range(2)]" in result.code
    assert not result.unsupported


def test_a_module_output_unpacked_leaves_the_parts_unknown():
    # an LSTM returns (output, (h, c)): a name bound to a call of a module is a tensor,
    # the parts of a tuple target are not assumed to be
    result = msmagic.port(dedent("""
        import torch
        net = torch.nn.LSTM(3, 4)
        out, h = net(torch.randn(5, 1, 3))
        h2 = h.as_strided((1,), (1,))
    """))
    assert finding_ids(result) == {"GEN002"}, result.unsupported


def test_a_returned_tuple_keeps_its_kinds_in_a_later_cell():
    """``losses, model = main(3)`` in a cell after the one defining ``main``, and an index
    into the tuple: ``model`` is a module there too (its eval() and state_dict() port)."""
    session = _session("import torch\nimport torch.nn as nn\n", """
        def main(width):
            model = nn.Linear(2, width)
            return [1.0], model
    """)
    later = msmagic.port(dedent("""
        losses, model = main(3)
        model.eval()
        other = main(4)[1]
        other.train()
    """), session=session)
    assert "model.set_train(False)" in later.code and "other.set_train()" in later.code, later.code
    assert not later.unsupported


def test_a_method_a_user_class_defines_is_not_guessed_to_be_the_modules():
    """``.parameters()`` on an unknown receiver is Module.parameters, unless a plain
    class of the notebook (this cell or an earlier one) defines ``parameters`` too."""
    layers = """
        import torch
        class Linear:
            def __init__(self, n):
                self.weight = torch.randn(n, n)
            def parameters(self):
                return [self.weight]
    """
    gather = """
        def gather(layers):
            return [p for layer in layers for p in layer.parameters()]
    """
    for session, cell in ((None, dedent(layers) + dedent(gather)),
                          (_session(layers), "import torch\n" + dedent(gather))):
        result = msmagic.port(cell, session=session)
        line = next(ln for ln in result.code.splitlines() if "for layer in layers" in ln)
        assert "layer.parameters()]  # msmagic: GEN002 the notebook's class Linear defines .parameters() too" \
            in line, result.code
        assert finding_ids(result) == {"GEN002"}
    # no such class: the receiver is taken for a Module, as before
    result = msmagic.port("import torch\n" + dedent(gather))
    assert "layer.get_parameters()" in result.code and not result.unsupported
