"""Run a PyTorch cell and its MindSpore port side by side and compare what they bound.

This is the engine room of parity checking. ``run_pair`` executes the two versions top-level
statement by top-level statement (the port's ``statements`` links say which output
statements came from which input statement). After each step it synchronises:

* a PyTorch module bound to a name whose MindSpore value is a Cell gets its parameters
  and buffers copied into that Cell (by structure: Linear/Dense weight and bias,
  BatchNorm weight/bias/running stats -> gamma/beta/moving_mean/moving_variance,
  Embedding weight -> embedding_table, ...), once, when the name is bound to a new
  module, so random initialisation does not show up as a difference while training
  still does;
* a value bound by a statement the port tagged ``random`` (``torch.randn``...) is copied
  to the MindSpore side.

Everything else is compared, never overwritten. torch and mindspore are imported here,
lazily, never by ``%load_ext`` or ``%%ms_port``.
"""

from __future__ import annotations

import ast
import contextlib
import io
import math
import signal
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Optional

MATCH = "match"
DIFFERS = "differs"
ONLY_TORCH = "only on PyTorch side"
ONLY_MS = "only on MindSpore side"
NOT_COMPARABLE = "not comparable"

_SKIP_BUFFERS = {"num_batches_tracked"}


@dataclass
class Row:
    name: str
    status: str
    torch_shape: Optional[tuple] = None
    torch_dtype: str = ""
    ms_shape: Optional[tuple] = None
    ms_dtype: str = ""
    max_abs: Optional[float] = None
    max_rel: Optional[float] = None
    statement: int = -1  # input statement that last bound the name
    note: str = ""


@dataclass
class PairRun:
    port: Any
    torch_ns: dict
    ms_ns: dict
    rows: list[Row] = field(default_factory=list)
    synchronised: list[str] = field(default_factory=list)
    sync_reasons: dict = field(default_factory=dict)
    torch_error: Optional[BaseException] = None
    ms_error: Optional[BaseException] = None
    torch_error_statement: Optional[int] = None
    ms_error_statement: Optional[int] = None
    timings: dict = field(default_factory=lambda: {"torch": 0.0, "mindspore": 0.0})
    #: first step after which a compared value differed, with those rows
    first_divergence: Optional[tuple[int, list[Row]]] = None
    interrupted: bool = False
    timed_out: Optional[str] = None  # "PyTorch" / "MindSpore"
    steps: list = field(default_factory=list)
    #: the value of the cell's last expression on the PyTorch side
    value: Any = None
    #: what the MindSpore side printed
    ms_stdout: Any = field(default_factory=io.StringIO)

    @property
    def error_statement(self) -> Optional[int]:
        return self.torch_error_statement if self.torch_error else self.ms_error_statement

    def row(self, name: str) -> Row:
        for r in self.rows:
            if r.name == name:
                return r
        raise KeyError(f"{name} was not compared; compared: {[r.name for r in self.rows]}")

    def agree(self, *names: str) -> bool:
        return all(self.row(n).status == MATCH for n in names)

    def explain(self) -> str:
        lines = [f"{r.name}: {r.status} max|d|={r.max_abs} rel={r.max_rel} "
                 f"torch={r.torch_shape}/{r.torch_dtype} ms={r.ms_shape}/{r.ms_dtype} {r.note}"
                 for r in self.rows]
        if self.torch_error:
            lines.append(f"torch error: {self.torch_error!r}")
        if self.ms_error:
            lines.append(f"mindspore error: {self.ms_error!r}")
        return "\n".join(lines) + "\n--- MindSpore code ---\n" + (self.port.code if self.port else "")


OUTPUT_NAME = "<cell output>"


def run_pair(
    torch_src: str,
    *,
    ms_src: Optional[str] = None,
    names: Optional[list[str]] = None,
    sync: bool = True,
    rtol: float = 1e-5,
    atol: float = 1e-6,
    torch_ns: Optional[dict] = None,
    ms_ns: Optional[dict] = None,
) -> PairRun:
    """Port ``torch_src`` (or take ``ms_src``), run both in lockstep in fresh namespaces
    (or the given ones), compare.

    ``names``: compare only these (default: every name a statement binds, plus the
    parameters and buffers of every module bound by name).
    """
    import msmagic

    result = msmagic.port(torch_src)
    steps = plan_steps(torch_src, result, ms_src)
    tns = torch_ns if torch_ns is not None else {"__name__": "__msmagic_torch__"}
    mns = ms_ns if ms_ns is not None else {"__name__": "__msmagic_mindspore__"}
    run = execute(steps, tns, mns, port=result if ms_src is None else None,
                  sync=sync, rtol=rtol, atol=atol, names=names)
    run.port = result if ms_src is None else None
    return run


# ----------------------------------------------------------------------------- steps


@dataclass
class Step:
    """One top-level statement of the cell and the MindSpore code it became."""

    index: int
    torch_code: str  # Python to execute (IPython syntax already transformed)
    ms_code: str
    bound: list[str]
    torch_lines: tuple[int, int]
    ms_lines: Optional[tuple[int, int]]
    text: str  # the statement as the user wrote it
    ms_code_start: Optional[int] = None  # output line the MindSpore chunk starts on
    names: frozenset = frozenset()  # identifiers the statement mentions
    expression: bool = False  # a lone expression (its value is the cell's output if last)


def plan_steps(source: str, port, against: Optional[str] = None) -> list[Step]:
    """Pair the cell's top-level statements with the MindSpore code each became, using
    the port's statement links (or, for explicit MindSpore code, statement order)."""
    src_lines = source.splitlines(keepends=True)
    links = list(port.statements) if port is not None else []
    if not links:
        links = [(rng, rng) for rng in _statement_ranges(source)]
        ms_text = source if against is None else against
    else:
        links = [(s.before, s.after) for s in links]
        ms_text = port.code if against is None else against
    ms_lines_all = ms_text.splitlines(keepends=True)
    steps: list[Step] = []
    if against is not None:
        ms_ranges = _statement_ranges(against)
        pairs = []
        for i in range(max(len(links), len(ms_ranges))):
            before = links[i][0] if i < len(links) else None
            after = ms_ranges[i] if i < len(ms_ranges) else None
            pairs.append((before, after))
        links = pairs
        extra: list[int] = []
    else:
        used = set()
        for _, after in links:
            if after:
                used.update(range(after[0], after[1] + 1))
        # output lines linked to no input statement (added imports) run before the
        # first linked statement after them
        extra = [i for i in range(1, len(ms_lines_all) + 1) if i not in used and ms_lines_all[i - 1].strip()]
    for index, (before, after) in enumerate(links):
        text = "".join(src_lines[before[0] - 1: before[1]]) if before else ""
        mcode = ""
        ms_start = None
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
        bound, names, expression = _analyse(text)
        if mcode:
            mbound, _, _ = _analyse(mcode)
            bound = sorted(set(bound) | set(mbound))
        steps.append(Step(index, _python(text), _python(mcode, "mindspore"), bound, before or (0, 0), after, text,
                          ms_start, frozenset(names), expression))
    if extra and steps:
        last = steps[-1]
        last.ms_code += _python("".join(ms_lines_all[i - 1] for i in extra), "mindspore")
    return steps


def _statement_ranges(text: str) -> list[tuple[int, int]]:
    from msmagic.engine.ipython import mask

    tree = ast.parse(mask(text).text)
    out = []
    for node in tree.body:
        start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
        if out and out[-1][1] >= start:  # "a = 1; b = 2": one line, one step
            out[-1] = (out[-1][0], max(out[-1][1], node.end_lineno))
        else:
            out.append((start, node.end_lineno))
    return out


def _analyse(text: str) -> tuple[list[str], set[str], bool]:
    """Names a statement binds, names it mentions, and whether it is a lone expression."""
    from msmagic.engine.ipython import mask

    if not text.strip():
        return [], set(), False
    try:
        tree = ast.parse(mask(text).text)
    except SyntaxError:
        return [], set(), False
    bound: set[str] = set()
    for node in tree.body:
        bound |= _bound_names(node)
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    expression = len(tree.body) == 1 and isinstance(tree.body[0], ast.Expr)
    return sorted(bound), names, expression


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


# ----------------------------------------------------------------------------- running


class SideTimeout(BaseException):
    """A side ran past its time budget (BaseException: user code can't swallow it)."""


@contextmanager
def _alarm(seconds: Optional[float]):
    """Raise SideTimeout in this (main) thread after ``seconds``; no-op elsewhere."""
    if seconds is None or threading.current_thread() is not threading.main_thread():
        yield
        return
    if seconds <= 0:
        raise SideTimeout()

    def _fire(signum, frame):
        raise SideTimeout()

    previous = signal.signal(signal.SIGALRM, _fire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def execute(
    steps: list[Step],
    tns: dict,
    mns: dict,
    *,
    port=None,
    sync: bool = True,
    rtol: float = 1e-5,
    atol: float = 1e-6,
    names: Optional[list[str]] = None,
    timeout: Optional[float] = None,
    each_step: bool = False,
    keep_output: bool = False,
    filenames: tuple[str, str] = ("<PyTorch cell>", "<MindSpore code>"),
) -> PairRun:
    """Run the steps on both sides in lockstep.

    A PyTorch failure stops both sides (the cell failed, as it would have alone); a
    MindSpore failure stops only the MindSpore side, so the PyTorch namespace ends as the
    plain cell leaves it. ``timeout``: seconds each side may run in all.
    ``each_step``: compare what each step bound (and the modules it mentions) right
    after it, to find the first divergence. ``keep_output``: a last lone expression is
    evaluated on both sides, compared as ``<cell output>`` and kept as ``run.value``.
    """
    run = PairRun(port=port, torch_ns=tns, ms_ns=mns, steps=steps)
    random_stmts = {e.statement for e in (port.edits if port else []) if "random" in e.tags}
    bound_by: dict[str, int] = {}
    synced_modules: dict[str, int] = {}
    #: random draws copied across: reported as synchronised, not compared (unless a
    #: later statement rebinds the name)
    synced_values: dict[str, int] = {}
    budget = {"torch": timeout, "mindspore": timeout}
    ms_alive = True
    outputs: dict[str, Any] = {}
    for step in steps:
        last_expr = keep_output and step is steps[-1] and step.expression
        if step.torch_code:
            try:
                value = _run_side(_at_line(step.torch_code, step.torch_lines), tns,
                                  filenames[0], run, "torch", budget, last_expr)
            except SideTimeout:
                run.timed_out = "PyTorch"
                break
            except KeyboardInterrupt:
                run.interrupted = True
                break
            except BaseException as exc:  # noqa: BLE001 - reported, not raised
                run.torch_error, run.torch_error_statement = exc, step.index
                break
            if last_expr:
                outputs["torch"] = run.value = value
        if step.ms_code and ms_alive:
            try:
                value = _run_side(_at_line(step.ms_code, step.ms_lines, step.ms_code_start), mns,
                                  filenames[1], run, "mindspore", budget, last_expr)
                if last_expr:
                    outputs["mindspore"] = value
            except SideTimeout:
                run.timed_out, ms_alive = "MindSpore", False
            except KeyboardInterrupt:
                run.interrupted = True
                break
            except BaseException as exc:  # noqa: BLE001
                run.ms_error, run.ms_error_statement, ms_alive = exc, step.index, False
        for n in step.bound:
            bound_by[n] = step.index
        if not ms_alive:
            continue
        if sync:
            for n in step.bound:
                if n in tns and n in mns and _is_torch_module(tns[n]) and _is_cell(mns[n]):
                    if synced_modules.get(n) != id(tns[n]):
                        sync_module(tns[n], mns[n])
                        synced_modules[n] = id(tns[n])
                        run.synchronised.append(n)
                        run.sync_reasons[n] = "parameters and buffers copied as initialised"
                elif step.index in random_stmts and n in tns and _is_tensor_like(tns[n]):
                    drawn = mns.get(n)
                    mns[n] = to_mindspore(tns[n])
                    run.synchronised.append(n)
                    synced_values[n] = step.index
                    # the values are copied, but the MindSpore draw must have had the
                    # same shape and dtype: a mismatch is a porting error worth a row
                    mismatch = _draw_mismatch(n, tns[n], drawn, step.index)
                    if mismatch is not None:
                        run.rows.append(mismatch)
                    run.sync_reasons[n] = "random values copied"
        if each_step and run.first_divergence is None:
            watch = {n for n in step.bound if synced_values.get(n) != step.index}
            watch |= {n for n in step.names if n in synced_modules}
            rows = []
            for n in sorted(watch):
                if not n.startswith("_"):
                    rows.extend(compare_name(n, tns, mns, rtol, atol, step.index))
            bad = [r for r in rows if r.status != MATCH]
            if bad:
                run.first_divergence = (step.index, bad)
    if names is None:
        wanted = [n for n in bound_by if synced_values.get(n) != bound_by[n]]
        # modules the cell used without rebinding them (a training loop updates
        # ``model`` in place): judged by their parameters after the cell ran
        used = set().union(*(step.names for step in steps)) if steps else set()
        wanted += sorted(
            n for n in used - set(bound_by)
            if n in tns and n in mns and _is_torch_module(tns[n]) and _is_cell(mns[n])
        )
    else:
        wanted = names
    for n in wanted:
        if not n.startswith("_"):
            run.rows.extend(compare_name(n, tns, mns, rtol, atol, bound_by.get(n, -1)))
    if "torch" in outputs and "mindspore" in outputs and _comparable(outputs["torch"]):
        row = compare_values(OUTPUT_NAME, outputs["torch"], outputs["mindspore"], rtol, atol,
                             steps[-1].index)
        run.rows.append(row)
        if row.status != MATCH and run.first_divergence is None and each_step:
            run.first_divergence = (steps[-1].index, [row])
    return run


def _at_line(code: str, lines, start: Optional[int] = None) -> str:
    """Pad ``code`` with blank lines so tracebacks show the line numbers it has in the cell."""
    first = start if start is not None else (lines[0] if lines else 1)
    return "\n" * max(first - 1, 0) + code


def _draw_mismatch(name: str, torch_value, ms_value, statement: int) -> Optional[Row]:
    t_arr = to_numpy(torch_value)
    m_arr = to_numpy(ms_value) if ms_value is not None else None
    if t_arr is None or m_arr is None:
        return None
    if t_arr.shape == m_arr.shape and _kind(str(t_arr.dtype)) == _kind(str(m_arr.dtype)):
        return None
    return Row(name, DIFFERS, tuple(t_arr.shape), _dtype(torch_value), tuple(m_arr.shape),
               _dtype(ms_value), statement=statement,
               note="random values synchronised, but the MindSpore draw had another shape or dtype")


def _run_side(code: str, ns: dict, filename: str, run: PairRun, side: str, budget: dict,
              want_value: bool):
    left = budget[side]
    t0 = time.perf_counter()
    # the PyTorch side prints like the plain cell; what the MindSpore side prints is kept
    # for the report instead of appearing twice in the notebook
    out = contextlib.redirect_stdout(run.ms_stdout) if side == "mindspore" else contextlib.nullcontext()
    try:
        with _alarm(left), out:
            if want_value:
                tree = ast.parse(code)
                *head, last = tree.body
                if head:
                    exec(compile(ast.Module(head, []), filename, "exec"), ns)
                return eval(compile(ast.Expression(last.value), filename, "eval"), ns)
            exec(compile(code, filename, "exec"), ns)
            return None
    finally:
        spent = time.perf_counter() - t0
        run.timings[side] += spent
        if left is not None:
            budget[side] = left - spent


def _bound_names(node: ast.stmt) -> set[str]:
    names: set[str] = set()

    def targets(t):
        if isinstance(t, ast.Name):
            names.add(t.id)
        elif isinstance(t, (ast.Tuple, ast.List)):
            for e in t.elts:
                targets(e)
        elif isinstance(t, ast.Starred):
            targets(t.value)

    if isinstance(node, ast.Assign):
        for t in node.targets:
            targets(t)
    elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
        targets(node.target)
    elif isinstance(node, (ast.For, ast.AsyncFor)):
        targets(node.target)
        for sub in node.body + node.orelse:
            names |= _bound_names(sub)
    elif isinstance(node, (ast.If, ast.While, ast.With, ast.Try)):
        for sub in getattr(node, "body", []) + getattr(node, "orelse", []):
            names |= _bound_names(sub)
        for h in getattr(node, "handlers", []):
            for sub in h.body:
                names |= _bound_names(sub)
        for sub in getattr(node, "finalbody", []):
            names |= _bound_names(sub)
    return names


# ----------------------------------------------------------------------------- values


def _is_torch_module(v) -> bool:
    try:
        import torch
    except ImportError:  # pragma: no cover
        return False
    return isinstance(v, torch.nn.Module)


def _is_cell(v) -> bool:
    try:
        import mindspore
    except ImportError:  # pragma: no cover
        return False
    return isinstance(v, mindspore.nn.Cell)


def _is_tensor_like(v) -> bool:
    return to_numpy(v) is not None


def to_numpy(v):
    """A NumPy array for a tensor of either framework or an array; None otherwise."""
    import numpy as np

    mod = type(v).__module__
    if mod.startswith("torch") and hasattr(v, "detach"):  # not torch.device/dtype
        t = v.detach().cpu()
        if str(t.dtype) == "torch.bfloat16":
            t = t.float()
        return t.numpy()
    # a MindSpore Parameter's class is created dynamically: its __module__ is "abc"
    if hasattr(v, "asnumpy"):
        return v.asnumpy()
    if isinstance(v, np.ndarray):
        return v
    if isinstance(v, np.generic):
        return np.asarray(v)
    return None


def to_mindspore(v):
    import mindspore

    arr = to_numpy(v)
    return mindspore.Tensor(arr) if arr is not None else v


def sync_module(tmod, cell) -> list[str]:
    """Copy a torch module's parameters and buffers into the matching MindSpore Cell."""
    import mindspore

    copied = []
    ms_state = _ms_state(cell)
    for name, value in _torch_state(tmod):
        ms_name = ms_name_for(tmod, name)
        p = ms_state.get(ms_name)
        if p is None:
            continue
        arr = value.detach().cpu().numpy()
        if tuple(p.shape) != arr.shape:
            if p.size != arr.size:
                continue
            arr = arr.reshape(p.shape)
        data = mindspore.Tensor(arr, dtype=p.dtype)
        if hasattr(p, "set_data"):
            p.set_data(data)
        else:  # a registered buffer is a plain Tensor
            p.assign_value(data)
        copied.append(name)
    return copied


def _ms_state(cell) -> dict:
    """MindSpore parameters and (2.x Cells have them) registered buffers, by name."""
    state = dict(cell.parameters_and_names())
    if hasattr(cell, "named_buffers"):
        for name, buf in cell.named_buffers():
            state.setdefault(name, buf)
    return state


def _torch_state(tmod):
    for name, p in tmod.named_parameters():
        yield name, p
    for name, b in tmod.named_buffers():
        if name.rsplit(".", 1)[-1] not in _SKIP_BUFFERS and b is not None:
            yield name, b


def ms_name_for(tmod, torch_name: str) -> str:
    """The MindSpore parameter name of the torch parameter/buffer ``torch_name``, from
    the ``params`` of the mapping entries of the layers on its path: a parent's map may
    rename a child layer (``linear1`` -> ``dense1``), the owner's renames the leaf."""
    *path, leaf = torch_name.split(".")
    out, owner = [], tmod
    for part in path:
        params = _layer_params(type(owner))
        out.append(params.get(part, part) if isinstance(params, dict) else part)
        owner = owner.get_submodule(part)
    params = _layer_params(type(owner))
    if callable(params):
        leaf = params(owner, leaf)
    elif params:
        leaf = params.get(leaf, leaf)
    return ".".join(out + [leaf])


def _layer_params(cls):
    """The ``params`` map of the mapping entry for a torch layer class (or its torch
    base class, for user subclasses of a torch layer)."""
    from msmagic.engine import spec
    from msmagic.rules.registry import _load

    _load()
    for klass in cls.__mro__:
        if klass.__module__.startswith("torch.nn"):
            entry = spec.APIS.get(f"torch.nn.{klass.__name__}")
            if entry is not None and entry.params is not None:
                return entry.params
    return None


def compare_name(name, tns, mns, rtol, atol, statement) -> list[Row]:
    if name not in tns and name not in mns:
        return []
    if name not in mns:
        return [Row(name, ONLY_TORCH, statement=statement)] if _comparable(tns[name]) else []
    if name not in tns:
        return [Row(name, ONLY_MS, statement=statement)] if _comparable(mns[name]) else []
    tv, mv = tns[name], mns[name]
    if type(tv).__module__.startswith("torch.optim") and _is_cell(mv):
        return []  # optimizers (Cells in MindSpore) show through the parameters they update
    if type(tv).__module__.startswith("torch.distributions") and _is_cell(mv):
        return []  # a distribution (a parameterless Cell in MindSpore) shows through its values
    if _is_torch_module(tv) or _is_cell(mv):
        if _is_torch_module(tv) and _is_cell(mv):
            return compare_module(name, tv, mv, rtol, atol, statement)
        if _is_torch_module(tv) and next(_torch_state(tv), None) is None:
            return []  # a stateless layer (a loss, an activation): nothing to compare
        if _is_torch_module(tv) and not list(tv.parameters()) and callable(mv) and not _is_cell(mv):
            return []  # a loss ported to a function (its weight is a constant): compared by its values
        return [Row(name, NOT_COMPARABLE, statement=statement, note="module on one side only")]
    if not (_comparable(tv) or _comparable(mv)):
        return []
    return [compare_values(name, tv, mv, rtol, atol, statement)]


def compare_module(name, tmod, cell, rtol, atol, statement) -> list[Row]:
    rows = []
    ms_params = _ms_state(cell)
    for pname, value in _torch_state(tmod):
        ms_name = ms_name_for(tmod, pname)
        full = f"{name}.{pname}"
        if ms_name not in ms_params:
            rows.append(Row(full, ONLY_TORCH, statement=statement, note=f"no MindSpore parameter {ms_name}"))
            continue
        mv = ms_params[ms_name]
        arr_t, arr_m = to_numpy(value), mv.asnumpy()
        if arr_t.shape != arr_m.shape and arr_t.size == arr_m.size:
            arr_m = arr_m.reshape(arr_t.shape)
        rows.append(compare_values(full, arr_t, arr_m, rtol, atol, statement,
                                   shapes=(tuple(value.shape), tuple(mv.shape)),
                                   dtypes=(str(value.dtype), str(mv.dtype))))
    return rows


def _comparable(v) -> bool:
    if isinstance(v, bool) or isinstance(v, (int, float)):
        return True
    if to_numpy(v) is not None:
        return True
    if isinstance(v, (list, tuple)):
        return len(v) > 0 and all(_comparable(x) for x in v)
    if isinstance(v, dict):
        return len(v) > 0 and all(_comparable(x) for x in v.values())
    return False


def _flatten(v, prefix=""):
    if isinstance(v, dict):
        for k in v:
            yield from _flatten(v[k], f"{prefix}[{k!r}]")
    elif isinstance(v, (list, tuple)) and not hasattr(v, "shape"):
        for i, x in enumerate(v):
            yield from _flatten(x, f"{prefix}[{i}]")
    else:
        yield prefix, v


def compare_values(name, tv, mv, rtol, atol, statement=-1, shapes=None, dtypes=None) -> Row:
    import numpy as np

    tparts, mparts = list(_flatten(tv)), list(_flatten(mv))
    tshape = shapes[0] if shapes else _shape(tv)
    mshape = shapes[1] if shapes else _shape(mv)
    tdt = dtypes[0] if dtypes else _dtype(tv)
    mdt = dtypes[1] if dtypes else _dtype(mv)
    row = Row(name, MATCH, tshape, tdt, mshape, mdt, statement=statement)
    if [p for p, _ in tparts] != [p for p, _ in mparts]:
        row.status, row.note = NOT_COMPARABLE, "different structure"
        return row
    max_abs = 0.0
    max_rel = 0.0
    ok = True
    for (_, a), (_, b) in zip(tparts, mparts):
        xa, xb = _as_array(a), _as_array(b)
        if xa is None or xb is None:
            if a != b:
                ok = False
            continue
        if xa.shape != xb.shape:
            row.status, row.note = DIFFERS, f"shape {xa.shape} vs {xb.shape}"
            return row
        if xa.dtype == bool or xb.dtype == bool:
            xa, xb = xa.astype(np.int64), xb.astype(np.int64)
        if not (np.issubdtype(xa.dtype, np.number) and np.issubdtype(xb.dtype, np.number)):
            ok = ok and bool(np.all(xa == xb))
            continue
        fa, fb = xa.astype(np.float64), xb.astype(np.float64)
        if fa.size:
            with np.errstate(invalid="ignore"):
                d = np.abs(fa - fb)
            same = (np.isnan(fa) & np.isnan(fb)) | (fa == fb)  # equal infinities too
            d = np.where(same, 0.0, d)
            max_abs = max(max_abs, float(np.nanmax(d)) if not np.all(np.isnan(d)) else math.inf)
            denom = np.maximum(np.abs(fa), 1e-12)
            max_rel = max(max_rel, float(np.nanmax(d / denom)))
            if not np.all(d <= atol + rtol * np.abs(fa)) or np.any(np.isnan(fa) != np.isnan(fb)):
                ok = False
    row.max_abs, row.max_rel = max_abs, max_rel
    if not ok:
        row.status = DIFFERS
    if tdt and mdt and _kind(tdt) != _kind(mdt):
        row.status = DIFFERS
        row.note = (row.note + f" dtype {tdt} vs {mdt}").strip()
    return row


def _as_array(v):
    import numpy as np

    arr = to_numpy(v)
    if arr is not None:
        return np.asarray(arr)
    if isinstance(v, (bool, int, float)):
        return np.asarray(v)
    return None


def _shape(v):
    if hasattr(v, "shape"):
        return tuple(v.shape)
    if isinstance(v, (list, tuple)):
        return (len(v),)
    return ()


def _dtype(v) -> str:
    if hasattr(v, "dtype"):
        return str(v.dtype)
    if isinstance(v, tuple):  # torch.Size is a tuple
        return "tuple"
    return type(v).__name__


def _kind(dtype: str) -> str:
    """float32 / Float32 / torch.float32 -> 'float32'; python types stay as they are."""
    d = dtype.lower().replace("torch.", "").replace("mindspore.", "")
    return {"float": "float", "int": "int", "bool": "bool", "bool_": "bool"}.get(d, d)
