"""Gradient checkpointing (RCP001) before and after: the call becomes the function's."""

from tests.fast.codemod import assert_ports


def test_checkpoint_becomes_the_call_and_keeps_the_functions_keywords():
    assert_ports(
        """
            import torch
            from torch.utils.checkpoint import checkpoint
            def forward_block(block, x):
                return checkpoint(block, x, mask, use_reentrant=False, scale=2.0)
        """,
        """
            import mindspore
            def forward_block(block, x):
                return block(x, mask, scale=2.0)
        """,
        edits={"IMP001", "RCP001"},
    )


def test_reentrant_and_opaque_checkpoints_are_flagged():
    assert_ports(
        """
            import torch.utils.checkpoint
            y = torch.utils.checkpoint.checkpoint(layer, x)
            z = torch.utils.checkpoint.checkpoint(*pieces)
        """,
        """
            import torch  # msmagic: kept for the PyTorch calls flagged below
            y = layer(x)  # msmagic: RCP001 reentrant checkpoint: gradients may differ when no input requires grad
            z = torch.utils.checkpoint.checkpoint(*pieces)  # msmagic: RCP001 checkpoint not ported
        """,
        edits={"IMP001", "RCP001"},
        findings={"RCP001"},
    )


def test_checkpoint_sequential_is_written_out_and_flagged_when_reentrant():
    from tests.fast.codemod import dedent, port

    result = port(dedent("""
        import torch
        from torch.utils.checkpoint import checkpoint_sequential
        y = checkpoint_sequential(model, 2, x, use_reentrant=False)
        z = checkpoint_sequential(model, 2, y)
    """))
    assert "def checkpoint_sequential(functions, segments, input):" in result.code
    assert "y = checkpoint_sequential(model, 2, x)\n" in result.code
    assert "z = checkpoint_sequential(model, 2, y)  # msmagic: RCP001 reentrant" in result.code
    assert [f.rule_id for f in result.unsupported] == ["RCP001"]
