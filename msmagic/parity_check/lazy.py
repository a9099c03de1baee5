"""Stage: run. Errors MindSpore raises late, given to the statement that caused them.

MindSpore 2.10 runs operations asynchronously and raises some errors only when a value is
first read: ``Tensor.fill_`` (no CPU kernel for ``InplaceFillScalar``), ``Tensor.normal_``
(``InplaceNormal``)... The statement itself succeeds; the error comes when msmagic
compares the value, or in whichever later statement reads it first. So right after a
MindSpore statement runs, :func:`settle` reads what the statement may have changed in
place and its value (what it bound is read when it is compared, right after; once values
are no longer compared after each statement, it reads those too), and
:func:`deferred_errors` turns an error MindSpore raises while values are synchronised or
compared into the MindSpore side's error at the statement that produced them, instead of
a failure of msmagic.
"""

from __future__ import annotations

import functools
import os
from contextlib import contextmanager
from typing import Optional

__all__ = ["settle", "deferred_errors", "raised_by_mindspore", "raised_late"]

#: the note added to such an error (the report shows it with the error)
NOTE = ("(MindSpore raised this when the value was first read, after the statement ran: it "
        "runs this operation lazily)")


def settle(values: list) -> None:
    """Read every MindSpore tensor among ``values`` (in lists, tuples and dicts, and the
    parameters of Cells) once, so that an error MindSpore deferred to the first read is
    raised now. A tensor already computed costs a microsecond; otherwise this waits for
    MindSpore to compute it, which comparing it would wait for too."""
    import mindspore

    seen: set[int] = set()

    def visit(v, depth: int) -> None:
        if id(v) in seen or depth > 2:
            return
        seen.add(id(v))
        if isinstance(v, mindspore.Tensor):
            try:
                v.data_sync(True)
            except Exception as exc:  # noqa: BLE001 - any error here is MindSpore's
                _note(exc)
                raise
        elif isinstance(v, mindspore.nn.Cell):
            for p in v.get_parameters():
                visit(p, depth + 1)
        elif isinstance(v, (list, tuple)) and len(v) <= 64:
            for x in v:
                visit(x, depth + 1)
        elif isinstance(v, dict) and len(v) <= 64:
            for x in v.values():
                visit(x, depth + 1)

    for value in values:
        visit(value, 0)


@contextmanager
def deferred_errors(run, statement: int, state: Optional[dict] = None):
    """An error MindSpore raises while values are synchronised or compared is one it
    deferred: it becomes the MindSpore side's error at ``statement``, which produced the
    value (``run.ms_error``), and the MindSpore side stops there (``state["ms_alive"]``).
    Any other error is msmagic's and propagates."""
    try:
        yield
    except RuntimeError as exc:  # how MindSpore reports a kernel it cannot run
        if not raised_by_mindspore(exc):
            raise
        _note(exc)
        if run.ms_error is None:
            run.ms_error, run.ms_error_statement = exc, statement
        if state is not None:
            state["ms_alive"] = False


def raised_by_mindspore(exc: BaseException) -> bool:
    """The innermost frame of ``exc`` is MindSpore's own code."""
    tb = exc.__traceback__
    if tb is None:
        return False
    while tb.tb_next is not None:
        tb = tb.tb_next
    return tb.tb_frame.f_code.co_filename.startswith(_mindspore_folder())


def raised_late(exc: BaseException) -> bool:
    """``exc`` is an error MindSpore deferred, raised when msmagic read a value: none of
    the cell's frames raised it."""
    return getattr(exc, "_msmagic_lazy", False)


@functools.lru_cache(maxsize=1)
def _mindspore_folder() -> str:
    import mindspore

    return os.path.dirname(os.path.abspath(mindspore.__file__)) + os.sep


def _note(exc: BaseException) -> None:
    """Say in ``exc`` that MindSpore raised it late."""
    if raised_late(exc):
        return
    exc.add_note(NOTE)
    try:
        exc._msmagic_lazy = True
    except AttributeError:  # pragma: no cover - an exception without a __dict__
        pass
