"""Stage: plan. The steps parity runs, from the port's statement plan.

The port returns, per top-level input statement, its input lines, the output lines it
became, the names it binds and reads, whether it is a lone expression and its tags
(``PortResult.statements``). A :class:`Step` pairs a statement with the code to run on
each side. Nothing here parses the cell: explicit MindSpore code (``--against``) is
planned by the engine (:func:`msmagic.engine.plan.plan_code`) and paired with the
cell's statements in order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from msmagic.errors import PortSyntaxError

__all__ = ["Step", "plan_steps", "plan_against"]


@dataclass
class Step:
    """One top-level statement of the cell and the MindSpore code it became."""

    index: int
    torch_code: str  # Python to execute (IPython syntax already transformed)
    ms_code: str
    bound: list[str]  # names bound at the top level, on either side
    torch_lines: tuple[int, int]
    ms_lines: Optional[tuple[int, int]]
    text: str  # the statement as the user wrote it
    ms_code_start: Optional[int] = None  # output line the MindSpore chunk starts on
    names: frozenset = frozenset()  # identifiers the statement mentions
    expression: bool = False  # a lone expression (its value is the cell's output if last)
    tags: frozenset = frozenset()  # "random": the statement draws random numbers
    #: lines at the start of ms_code that precede the statement's own output (imports
    #: the port added); the rest is the statement
    ms_head: int = 0
    #: a top-level loop's plan (``msmagic.result.Loop``): run in lockstep by :mod:`.loops`
    loop: object = None


def plan_against(code: str) -> list:
    """The plan of explicit MindSpore code; :class:`PortSyntaxError` if it is not Python."""
    from msmagic.engine.plan import plan_code

    try:
        return plan_code(code)
    except SyntaxError as err:
        raise PortSyntaxError(f"in the MindSpore code: {err.msg}", err.lineno or 1, err.offset or 1) from None
    except (ValueError, RecursionError) as err:
        raise PortSyntaxError(f"in the MindSpore code: {err}", 1, 1) from None


def plan_steps(source: str, port, against: Optional[str] = None, against_plan: Optional[list] = None) -> list[Step]:
    """Pair the cell's statements (``port.statements``) with the MindSpore code each
    became, or, for explicit MindSpore code ``against``, with its statements in order."""
    statements = list(port.statements) if port is not None else []
    src_lines = source.splitlines(keepends=True)
    if against is not None:
        ms_plan = against_plan if against_plan is not None else plan_against(against)
        return _paired(statements, ms_plan, src_lines, against.splitlines(keepends=True))
    ms_lines_all = port.code.splitlines(keepends=True)
    used: set[int] = set()
    for s in statements:
        if s.after:
            used.update(range(s.after[0], s.after[1] + 1))
    # output lines linked to no input statement (added imports) run before the first
    # linked statement after them
    extra = [i for i in range(1, len(ms_lines_all) + 1) if i not in used and ms_lines_all[i - 1].strip()]
    steps: list[Step] = []
    for s in statements:
        text = _chunk(src_lines, s.before)
        mcode = ""
        ms_start = None
        after = s.after
        if after:
            pre = [i for i in extra if i < after[0]]
            extra = [i for i in extra if i >= after[0]]
            if pre and pre == list(range(pre[0], after[0])):
                ms_start = pre[0]  # contiguous: keep the real line numbers
                mcode = "".join(ms_lines_all[pre[0] - 1: after[1]])
            else:
                mcode = "".join(ms_lines_all[i - 1] for i in pre)
                mcode += "".join(ms_lines_all[after[0] - 1: after[1]])
                ms_start = after[0] - len(pre)
        steps.append(Step(
            s.index, _python(text), _python(mcode, "mindspore"), sorted(s.binds), s.before, after, text,
            ms_start, frozenset(s.reads), s.expression, frozenset(s.tags),
            ms_head=(after[0] - ms_start) if after else 0, loop=s.loop,
        ))
    if extra and steps:
        last = steps[-1]
        last.ms_code += _python("".join(ms_lines_all[i - 1] for i in extra), "mindspore")
    return steps


def _paired(statements: list, ms_plan: list, src_lines: list[str], ms_lines_all: list[str]) -> list[Step]:
    """Explicit MindSpore code: the cell's statements and the explicit ones are lined up
    by the names they bind (``model = nn.Linear`` with ``model = nn.Dense``; statements
    binding nothing, such as imports, with each other), keeping both orders and pairing
    as many names as possible; each statement of the cell runs
    with the explicit statements from after the previous pair up to its own (helpers the
    explicit code defines on the way, a forward function or ``grad_fn``, and imports run
    with the next paired statement). Explicit statements after the last pair run as
    steps of their own."""
    n, m = len(statements), len(ms_plan)
    tb = [set(st.binds) for st in statements]
    mb = [set(st.binds) for st in ms_plan]

    def weight(i: int, k: int) -> float:
        # two statements that bind nothing (imports) pair too, below any shared name
        return len(tb[i] & mb[k]) or (0.5 if not tb[i] and not mb[k] else 0)

    # best[i][k]: the most names paired between statements[i:] and ms_plan[k:]
    best = [[0.0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        for k in range(m - 1, -1, -1):
            shared = weight(i, k)
            best[i][k] = max(best[i + 1][k], best[i][k + 1],
                             best[i + 1][k + 1] + shared if shared else 0)
    pairs: dict[int, int] = {}
    i = k = 0
    while i < n and k < m:
        shared = weight(i, k)
        if shared and best[i][k] == best[i + 1][k + 1] + shared:
            pairs[i], i, k = k, i + 1, k + 1
        elif best[i][k] == best[i + 1][k]:
            i += 1
        else:
            k += 1
    steps = []
    j = 0
    for i, st in enumerate(statements):
        end = pairs[i] + 1 if i in pairs else j
        steps.append(_paired_step(i, st, ms_plan[j:end], src_lines, ms_lines_all))
        j = end
    for k in range(j, m):
        steps.append(_paired_step(len(steps), None, [ms_plan[k]], src_lines, ms_lines_all))
    return steps


def _paired_step(i: int, s, ms: list, src_lines: list[str], ms_lines_all: list[str]) -> Step:
    text = _chunk(src_lines, s.before) if s else ""
    lines = (ms[0].before[0], ms[-1].before[1]) if ms else None
    mcode = _chunk(ms_lines_all, lines) if ms else ""
    bound = set(s.binds if s else ())
    for m in ms:
        bound |= set(m.binds)
    return Step(
        i, _python(text), _python(mcode, "mindspore"), sorted(bound),
        s.before if s else (0, 0), lines, text,
        None, frozenset(s.reads) if s else frozenset(), bool(s and s.expression),
        frozenset(s.tags) if s else frozenset(),
    )



def _chunk(lines: list[str], rng) -> str:
    return "".join(lines[rng[0] - 1: rng[1]]) if rng else ""


def _python(text: str, side: str = "torch") -> str:
    """The Python to run for a statement that may hold IPython syntax.

    ``%time stmt`` runs ``stmt`` (timing is not what parity compares). Other IPython
    lines (``!pip ...``, ``%matplotlib``) run once, on the PyTorch side, through the
    running IPython shell; elsewhere they become ``pass``.
    """
    from msmagic.engine.ipython import mask

    masked = mask(text) if text else None
    if masked is None or not masked.changed:
        return text
    shell = _shell() if side == "torch" else None
    lines = masked.text.split("\n")
    for i, line in enumerate(lines):
        key = line.strip()
        if key in masked.restore:
            indent = line[: len(line) - len(line.lstrip())]
            original = masked.restore[key]
            if shell is not None:
                code = shell.transform_cell(original.strip()).strip()
                lines[i] = indent + code.replace("get_ipython()", "__import__('IPython').get_ipython()")
            else:
                lines[i] = indent + "pass"
    return "\n".join(lines)


def _shell():
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover
        return None
    return get_ipython()
