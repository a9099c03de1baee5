"""Deep input: the port runs where valid Python of any depth CPython accepts fits.

CPython reads a cell nested up to three times its recursion limit deep (a sum of
~3,000 terms, an ``elif`` chain of ~3,000 branches); libcst's parser, its code
generator and the engine's walk recurse several Python frames per level of the tree,
so such a cell needs far more frames than the default limit of 1,000 allows. The port
therefore runs in one worker thread, started once with a large stack, under a raised
recursion limit; the limit is set back when the port returns. What CPython itself
accepts is still judged under the limit as it was (:func:`caller_limit`).

Python's recursion limit is one per interpreter, so other threads see the raised
limit while a port runs. When no such thread can be started (a platform without
settable thread stacks, or no memory for one) the port runs in the calling thread
under the limits it has.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import queue
import sys
import threading
from typing import Any, Callable, Iterator, Optional

#: the worker thread's stack; the deepest cell CPython accepts under the default
#: limit needs ~16 MiB of it, a C-level Python frame about 0.5 KiB
STACK_BYTES = 256 * 1024 * 1024
#: the recursion limit while a port runs: the deepest cells CPython accepts under the
#: default limit need ~6,000 frames (a 2,900-term sum, a 1,400-call method chain);
#: the stack holds ~500,000
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
_local = threading.local()  # in the worker: the limit before the port raised it
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


@contextlib.contextmanager
def caller_limit() -> Iterator[None]:
    """Within a port: the recursion limit as it was before the port raised it, so input
    is accepted as deep as CPython itself would accept it, and no deeper."""
    limit = getattr(_local, "limit", None)
    if limit is None or threading.current_thread() is not _worker:
        yield
        return
    raised = sys.getrecursionlimit()
    sys.setrecursionlimit(limit)
    try:
        yield
    finally:
        sys.setrecursionlimit(raised)


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
    while True:
        job = _jobs.get()
        _local.limit = limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(RECURSION_LIMIT, limit))
        try:
            job.result = job.context.run(job.call)
        except BaseException as exc:  # handed to the caller as it is
            job.error = exc
        finally:
            sys.setrecursionlimit(limit)
            _local.limit = None
            job.done.set()
            del job


def _forget_worker() -> None:
    """In a forked child: the worker thread did not come along; the next port starts
    one of its own."""
    global _worker, _jobs, _start_lock
    _worker = None
    _jobs = queue.SimpleQueue()
    _start_lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_worker)
