"""NNF001-NNF004: functional APIs and layers ported as definitions of mindspore.ops,
in-place functional activations, ReflectionPad's padding attribute (text only)."""

from tests.fast.codemod import assert_ports, dedent, edit_ids, finding_ids, port


def test_functional_becomes_a_defined_function_with_pytorch_signature():
    result = port(dedent("""
        import torch
        import torch.nn.functional as F
        def attend(q, k, v):
            return F.scaled_dot_product_attention(q, k, v, is_causal=True)
        y = F.layer_norm(torch.ones(2, 4), (4,))
        z = F.layer_norm(torch.ones(2, 4), [4])
    """))
    code = result.code
    assert "def scaled_dot_product_attention(query, key, value, attn_mask=None" in code
    assert "return scaled_dot_product_attention(q, k, v, is_causal=True)" in code
    assert code.count("def layer_norm(") == 1  # defined once per cell
    assert "y = layer_norm(" in code and "z = layer_norm(" in code
    assert "torch" not in code.replace("PyTorch", "")
    assert "NNF001" in edit_ids(result) and not finding_ids(result)


def test_sdpa_dropout_is_flagged_as_random():
    result = port(dedent("""
        import torch.nn.functional as F
        def attend(q, k, v):
            return F.scaled_dot_product_attention(q, k, v, dropout_p=0.1)
    """))
    assert "NNF001" in finding_ids(result)
    assert "dropout_p=0.1" in result.code


def test_instance_norm_with_running_statistics_is_left_as_pytorch():
    result = port(dedent("""
        import torch.nn.functional as F
        def f(x, m, v):
            return F.instance_norm(x, m, v, use_input_stats=False)
    """))
    assert "NNF001" in finding_ids(result)
    assert "torch.nn.functional.instance_norm(x, m, v, use_input_stats=False)" in result.code


def test_layers_become_defined_cells():
    result = port(dedent("""
        import torch.nn as nn
        norm = nn.InstanceNorm2d(3, affine=True)
        loss = nn.KLDivLoss(reduction="batchmean", log_target=True)
        dist = nn.PairwiseDistance(p=1.0)
    """))
    code = result.code
    assert "class InstanceNorm2d(nn.Cell):" in code and "norm = InstanceNorm2d(3, affine=True)" in code
    assert "class KLDivLoss(nn.Cell):" in code and "def kl_div(" in code
    assert "dist = PairwiseDistance(p=1.0)" in code
    assert "NNF002" in edit_ids(result) and not finding_ids(result)


def test_instance_norm_tracking_running_stats_is_flagged():
    result = port(dedent("""
        import torch.nn as nn
        norm = nn.InstanceNorm1d(3, track_running_stats=True)
    """))
    assert "NNF002" in finding_ids(result)


def test_inplace_functional_activations_rebind():
    assert_ports(
        """
            import torch
            import torch.nn.functional as F
            x = torch.zeros(3)
            F.relu_(x)
            F.leaky_relu_(x)
            F.threshold_(x, 0.1, 2.0)
            y = F.hardtanh_(x, min_val=-0.5)
        """,
        """
            import mindspore
            import mindspore.ops as F
            x = mindspore.ops.zeros(3)
            x = F.relu(x)
            x = F.leaky_relu(x, alpha=0.01)
            x = F.threshold(x, 0.1, 2.0)
            y = (x := F.hardtanh(x, min_val=-0.5))
        """,
        edits={"IMP001", "FUN009", "NNF003"},
        findings=set(),
    )


def test_inplace_on_an_attribute_is_flagged():
    result = port(dedent("""
        import torch.nn.functional as F
        def f(self):
            F.relu_(self.h)
    """))
    assert "NNF003" in finding_ids(result)


def test_elu_inplace_with_other_alpha_is_left_as_pytorch():
    result = port(dedent("""
        import torch.nn.functional as F
        def f(x):
            F.elu_(x, alpha=0.5)
    """))
    assert "NNF003" in finding_ids(result) and "torch.nn.functional.elu_(x, alpha=0.5)" in result.code


def test_reflection_pad_padding_reads_as_pytorch_tuple_and_assignment_is_flagged():
    result = port(dedent("""
        import torch.nn as nn
        pad = nn.ReflectionPad2d((1, 2, 3, 4))
        p = pad.padding
        pad.padding = (0, 0, 0, 0)
    """))
    assert "p = tuple(v for pair in reversed(pad.padding) for v in pair)" in result.code
    assert "NNF004" in finding_ids(result)
