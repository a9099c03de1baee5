"""Deep input: the port runs where valid Python of any depth CPython accepts fits.

CPython reads a cell nested up to three times its recursion limit deep (a sum of
~3,000 terms, an ``elif`` chain of ~3,000 branches); libcst's parser, its code
generator and the engine's walk recurse several Python frames per level of the tree,
so such a cell needs far more frames than the default limit of 1,000 allows. The port
therefore runs in one worker thread, started once with a large stack, and that thread
alone holds a raised recursion limit while a port runs (:class:`_ThreadLimit`).

``sys.setrecursionlimit`` is one limit for the whole interpreter: raising it lets every
other thread recurse as deep, and a thread recursing through C code (``repr`` or
``json.dumps`` of deeply nested lists) then overflows its ordinary stack and the
process dies of SIGSEGV instead of raising RecursionError. The process's limit is
therefore never changed. CPython 3.11 checks each thread against the limit it holds in
its own thread state (the interpreter's limit is only copied there), so the worker
raises its own copy and sets it back after each port; what CPython itself accepts is
still judged under the interpreter's limit, as in any other thread. (So are the
engine's later ``ast.parse`` calls on parts of the cell, from a few frames deeper: a
cell within ~1% of CPython's bound can be a PortLimitError; a sum of 2,944 terms
ports, CPython's bound is 2,984; ``benchmarks/deep_input.py``.) Where that thread
state cannot be found and checked (another Python version), or no thread can be
started (a platform without settable thread stacks, or no memory for one), the port
runs under the limit as it is, and a cell too deep for it is a PortLimitError.
"""

from __future__ import annotations

import contextvars
import os
import queue
import sys
import threading
from typing import Any, Callable, Optional

#: the worker thread's stack; the deepest cell CPython accepts under the default
#: limit needs ~16 MiB of it, a C-level Python frame about 0.5 KiB
STACK_BYTES = 256 * 1024 * 1024
#: the recursion limit the worker thread holds while a port runs: the deepest cells
#: CPython accepts under the default limit need ~6,000 frames (a 2,900-term sum, a
#: 1,400-call method chain); the stack holds ~500,000
RECURSION_LIMIT = 100_000


class _Job:
    __slots__ = ("call", "context", "done", "result", "error")

    def __init__(self, call: Callable[[], Any]):
        self.call = call
        self.context = contextvars.copy_context()
        self.done = threading.Event()
        self.result: Any = None
        self.error: Optional[BaseException] = None


_jobs: "queue.SimpleQueue[_Job]" = queue.SimpleQueue()
_start_lock = threading.Lock()
_worker: Optional[threading.Thread] = None
_unavailable = False
#: how often a caller waiting for the worker wakes: a signal sent to the process may
#: be taken by the worker thread, and Python runs handlers only in the main thread
_POLL_SECONDS = 0.05


def run(call: Callable[[], Any]) -> Any:
    """``call()`` in the deep worker: its result, or the exception it raised (the same
    object). Runs ``call`` in place when already in the worker, or when no worker can
    be started."""
    if threading.current_thread() is _worker or not _ensure_worker():
        return call()
    job = _Job(call)
    _jobs.put(job)
    while not job.done.wait(_POLL_SECONDS):
        pass  # the main thread runs its signal handlers (Ctrl-C) between waits
    if job.error is not None:
        error, job.error = job.error, None
        try:
            raise error
        finally:
            del error
    return job.result


def _ensure_worker() -> bool:
    global _worker, _unavailable
    if _worker is not None and _worker.is_alive():
        return True
    with _start_lock:
        if _unavailable:
            return False
        if _worker is not None and _worker.is_alive():
            return True
        try:
            previous = threading.stack_size(STACK_BYTES)
        except (ValueError, RuntimeError):  # no settable stack size here
            _unavailable = True
            return False
        try:
            thread = threading.Thread(target=_serve, name="msmagic-port", daemon=True)
            thread.start()
        except (RuntimeError, MemoryError):  # no thread of that size can start
            _unavailable = True
            return False
        finally:
            threading.stack_size(previous)
        _worker = thread
        return True


def _serve() -> None:
    limit = _ThreadLimit.of_this_thread()
    while True:
        job = _jobs.get()
        if limit is not None:
            limit.raise_to(RECURSION_LIMIT)
        try:
            job.result = job.context.run(job.call)
        except BaseException as exc:  # handed to the caller as it is
            job.error = exc
        finally:
            if limit is not None:
                limit.restore()
            job.done.set()
            del job


class _ThreadLimit:
    """The recursion limit one thread holds, apart from the interpreter's.

    CPython 3.11 keeps in each thread state ``recursion_remaining`` and
    ``recursion_limit``, two ints after three pointers and two ints
    (``Include/cpython/pystate.h``): a call counts ``recursion_remaining`` down, and only
    at 0 is the thread's depth checked against the interpreter's limit, which
    ``sys.setrecursionlimit`` sets (copying it into every thread state). Raising one
    thread's pair lets that thread, and no other, recurse deeper; setting it back to
    the interpreter's limit (keeping the depth) undoes that. The layout is checked
    before it is used: the limit read must be the interpreter's, and one more Python
    frame must count ``recursion_remaining`` down by exactly one."""

    __slots__ = ("_counters",)

    def __init__(self, counters) -> None:
        self._counters = counters  # ctypes c_int[2]: recursion_remaining, recursion_limit

    @classmethod
    def of_this_thread(cls) -> "Optional[_ThreadLimit]":
        """The calling thread's limit; None where its thread state is not laid out as in
        CPython 3.11."""
        if sys.implementation.name != "cpython" or sys.version_info[:2] != (3, 11):
            return None
        try:
            import ctypes

            state = ctypes.PYFUNCTYPE(ctypes.c_void_p)(("PyThreadState_Get", ctypes.pythonapi))()
            offset = 3 * ctypes.sizeof(ctypes.c_void_p) + 2 * ctypes.sizeof(ctypes.c_int)
            counters = (ctypes.c_int * 2).from_address(state + offset)
        except (ImportError, AttributeError, OSError, TypeError, ValueError):
            return None
        remaining, limit = counters[0], counters[1]
        if limit != sys.getrecursionlimit() or not 0 < remaining < limit:
            return None
        if _remaining_one_frame_down(counters) != remaining - 1 or counters[0] != remaining:
            return None
        return cls(counters)

    def raise_to(self, limit: int) -> None:
        """Let this thread recurse up to ``limit`` frames (at least the interpreter's)."""
        self._set(max(limit, sys.getrecursionlimit()))

    def restore(self) -> None:
        """This thread's limit is the interpreter's again."""
        self._set(sys.getrecursionlimit())

    def _set(self, limit: int) -> None:
        remaining, held = self._counters[0], self._counters[1]
        self._counters[1] = limit
        self._counters[0] = limit - (held - remaining)  # the depth stays as it is


def _remaining_one_frame_down(counters) -> int:
    return counters[0]


def _forget_worker() -> None:
    """In a forked child: the worker thread did not come along; the next port starts
    one of its own."""
    global _worker, _jobs, _start_lock
    _worker = None
    _jobs = queue.SimpleQueue()
    _start_lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_worker)
