"""Helpers shared by the rule tests."""

import textwrap

import mindspore as ms
import torch

from msmagic.lockstep import run_pair


def src(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def rule_list(port) -> list:
    """Rule ids of a PortResult's edits, in order, with repeats (for counting)."""
    return [e.rule_id for e in port.edits]


def rules(run) -> set:
    return {e.rule_id for e in run.port.edits}


def findings(run) -> set:
    return {f.rule_id for f in run.port.unsupported}


def run_with_inputs(source, inputs, check=True, **kw):
    """run_pair with the same NumPy arrays bound on both sides (as torch / MindSpore
    tensors); asserts both sides ran when ``check``."""
    run = run_pair(
        source,
        torch_ns={k: torch.tensor(v) for k, v in inputs.items()},
        ms_ns={k: ms.Tensor(v) for k, v in inputs.items()},
        **kw,
    )
    if check:
        assert run.torch_error is None and run.ms_error is None, run.explain()
    return run
