"""Helpers shared by the rule tests."""

import textwrap

import libcst as cst
import mindspore as ms
import torch

import msmagic
from msmagic.parity_check import run_pair


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


def check(src, *names, rule=None, atol=1e-5):
    """Port ``src``, run both sides, and assert: no errors, ``names`` match in value and
    shape, ``rule`` logged an edit, the output parses and porting it again is a no-op."""
    run = run_pair(src, atol=atol)
    assert run.torch_error is None and run.ms_error is None, run.explain()
    for n in names:
        row = run.row(n)
        assert row.status == "match", run.explain()
        assert row.torch_shape == row.ms_shape, run.explain()
    if rule:
        assert rule in {e.rule_id for e in run.port.edits}, run.port.edits
    cst.parse_module(run.port.code)
    assert msmagic.port(run.port.code).code == run.port.code  # porting again changes nothing
    return run


def flagged(src, rule, comment):
    """Port ``src`` and assert ``rule`` reported a finding, commented in parseable code."""
    r = msmagic.port(src)
    assert rule in [f.rule_id for f in r.unsupported], r.unsupported
    assert comment in r.code, r.code
    cst.parse_module(r.code)
    return r


def parity_cells(shell, cells, options: str = "") -> tuple[list, list]:
    """Run each cell under ``%%ms_parity`` in ``shell`` as a user does, one after the
    other; (reports, what each cell printed). Every report must be ok, or compare nothing
    because what the cell built was copied across."""
    from IPython.utils.capture import capture_output

    reports, printed = [], []
    for i, cell in enumerate(cells):
        with capture_output() as captured:
            shell.run_cell_magic("ms_parity", f"-o report_{i} {options}".strip(), cell)
        rep = shell.user_ns[f"report_{i}"]
        reports.append(rep)
        printed.append(captured.stdout)
        # a cell that only builds modules compares nothing: they were copied across
        settled = rep.ok or (rep.verdict[0] == "empty" and rep.synchronised)
        assert settled, (i, rep.summary(), [(r.name, r.status, r.max_abs) for r in rep.rows if r.status != "match"], rep.notes, captured.stdout[-300:])
    return reports, printed
