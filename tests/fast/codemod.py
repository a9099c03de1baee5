"""Before/after helpers for the fast tier, in the spirit of LibCST's ``CodemodTest``.

``assert_ports(before, after, edits=..., findings=...)`` dedents both texts, ports
``before`` with the public ``msmagic.port`` and compares the result with ``after``
byte for byte (a unified diff on mismatch), then checks the edit log's rule ids, the
findings' rule ids, that the output is valid Python and that porting the output again
changes nothing.

Only the public API is used (``msmagic.port`` and the ``PortResult`` fields), and
neither torch nor mindspore is imported: porting is pure text.
"""

from __future__ import annotations

import ast
import difflib
import textwrap
from collections.abc import Iterable
from typing import Optional

import msmagic

__all__ = ["assert_ports", "assert_unchanged", "dedent", "edit_ids", "finding_ids", "port"]


def dedent(text: str) -> str:
    """``textwrap.dedent`` without the leading newline of a triple-quoted literal."""
    return textwrap.dedent(text).lstrip("\n")


def port(source: str, **options) -> "msmagic.PortResult":
    return msmagic.port(source, **options)


def edit_ids(result) -> list:
    """Rule ids of the edit log, in order, with repeats."""
    return [e.rule_id for e in result.edits]


def finding_ids(result) -> set:
    return {f.rule_id for f in result.unsupported}


def _diff(expected: str, actual: str) -> str:
    return "".join(difflib.unified_diff(
        expected.splitlines(keepends=True), actual.splitlines(keepends=True),
        fromfile="expected", tofile="actual"))


def _show(result) -> str:
    lines = ["edits:"]
    lines += [f"  {e.rule_id} {e.before}->{e.after} {e.api} {e.detail}".rstrip() for e in result.edits]
    lines.append("findings:")
    lines += [f"  {f}" for f in result.unsupported]
    if result.notes:
        lines.append("notes:")
        lines += [f"  {n}" for n in result.notes]
    return "\n".join(lines)


def _check_ranges(result, source: str) -> None:
    """Edit line ranges are 1-based, inclusive and inside their texts; findings point
    into the input and at the output line that carries their ``# msmagic:`` comment.
    An edit of a removed statement (``Statement.after is None``) has no output lines
    of its own (its ``after`` repeats the input range), so only ``before`` is checked."""
    n_in = max(1, len(source.splitlines()))
    n_out = max(1, len(result.code.splitlines()))
    removed = {s.index for s in getattr(result, "statements", ()) if s.after is None}
    for e in result.edits:
        assert 1 <= e.before[0] <= e.before[1] <= n_in, (e, n_in)
        if e.statement not in removed:
            assert 1 <= e.after[0] <= e.after[1] <= n_out, (e, n_out)
    lines = result.code.splitlines()
    for f in result.unsupported:
        assert 1 <= f.line <= n_in and f.column >= 1, (f, n_in)
        # every finding is commented on its output line: "# msmagic: RULE ..."
        assert 1 <= f.out_line <= len(lines), (f, len(lines))
        comment = lines[f.out_line - 1].partition("# msmagic: ")[2]
        assert f.rule_id in comment, (f, lines[f.out_line - 1])


#: the source of a definition the port writes into the cell (``Context.define``), by the
#: placeholder line an expected text names it with: ``<definition softmax_in_float64>``
DEFINITIONS = {
    "softmax_in_float64": (
        'def softmax_in_float64(input, axis=-1, dtype=None, dim=None):\n'
        '    """softmax computed in float64 and rounded to float32: MindSpore\'s CPU float32\n'
        '    softmax is up to 2.4e-5 relative off (dim: PyTorch\'s name, from a ** mapping)."""\n'
        '    if dim is not None:\n'
        '        axis = dim\n'
        '    if dtype is not None:\n'
        '        input = input.astype(dtype)\n'
        '    if input.dtype != mindspore.float32:\n'
        '        return mindspore.ops.softmax(input, axis)\n'
        '    return mindspore.ops.softmax(input.astype(mindspore.float64), axis).astype(mindspore.float32)'
    ),
    "SoftmaxInFloat64": (
        'class SoftmaxInFloat64(nn.Cell):\n'
        '    """PyTorch\'s nn.Softmax computed in float64 and rounded to float32: MindSpore\'s\n'
        '    CPU float32 softmax is up to 2.4e-5 relative off."""\n'
        '\n'
        '    def __init__(self, axis=-1):\n'
        '        super().__init__()\n'
        '        self.axis = axis\n'
        '\n'
        '    def construct(self, input):\n'
        '        return softmax_in_float64(input, self.axis)'
    ),
}


def _with_definitions(text: str) -> str:
    """``text`` with each ``<definition NAME>`` line replaced by that definition's source."""
    lines = []
    for line in text.split("\n"):
        key = line.strip()
        if key.startswith("<definition ") and key.endswith(">"):
            lines.append(DEFINITIONS[key[len("<definition "):-1]])
        else:
            lines.append(line)
    return "\n".join(lines)


def assert_ports(
    before: str,
    after: str,
    *,
    edits: Optional[Iterable[str]] = None,
    findings: Optional[Iterable[str]] = None,
    idempotent: bool = True,
    dedent_text: bool = True,
    **options,
):
    """Port ``before`` and assert the output is exactly ``after``.

    ``edits``: the rule ids of the edit log -- a ``set`` compares the ids as a set, a
    ``list`` or ``tuple`` compares them in order with repeats; ``None`` skips the check.
    ``findings``: the set of rule ids of ``r.unsupported``; ``None`` means none expected.
    ``idempotent``: also assert that porting ``after`` again returns it unchanged.
    ``options`` go to ``msmagic.port`` (e.g. ``session=``). Returns the ``PortResult``.
    """
    if dedent_text:
        before, after = dedent(before), dedent(after)
    after = _with_definitions(after)
    result = msmagic.port(before, **options)
    if result.code != after:
        raise AssertionError(
            "ported code differs from the expected text:\n" + _diff(after, result.code)
            + "\n" + _show(result))
    ast.parse(result.code)
    if edits is not None:
        if isinstance(edits, (list, tuple)):
            assert edit_ids(result) == list(edits), _show(result)
        else:
            assert set(edit_ids(result)) == set(edits), _show(result)
    expected_findings = set() if findings is None else set(findings)
    assert finding_ids(result) == expected_findings, _show(result)
    _check_ranges(result, before)
    if idempotent:
        again = msmagic.port(after)
        if again.code != after:
            raise AssertionError("porting the output again changed it:\n" + _diff(after, again.code))
    return result


def assert_unchanged(source: str, *, dedent_text: bool = True, **options):
    """``source`` (already MindSpore, or plain Python) ports to itself with no edits
    and no findings."""
    if dedent_text:
        source = dedent(source)
    result = msmagic.port(source, **options)
    if result.code != source:
        raise AssertionError("code that needs no port was changed:\n" + _diff(source, result.code))
    assert not result.edits and not result.unsupported, _show(result)
    return result
