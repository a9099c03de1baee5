"""Keep Ctrl-C a KeyboardInterrupt while and after MindSpore runs.

MindSpore 2.x installs a native SIGINT handler (``mindspore::DefaultIntHandler`` in
``libmindspore_common``) from the worker threads it starts: the first operation, every
compiled graph, every gradient step. On Ctrl-C that handler sends the process SIGTERM, so
Ctrl-C ends terminal IPython, a Jupyter kernel or a script instead of raising
KeyboardInterrupt. Measured on MindSpore 2.10: a process that catches that SIGTERM goes on,
and MindSpore keeps computing correct values in it.

Two remedies, used together:

- :func:`restore_sigint` installs Python's own SIGINT handler again at the C level (Python
  still reports it through ``signal.getsignal``). msmagic calls it after every step and
  comparison of a parity run, when a run ends, and (in IPython, with the extension loaded)
  after every cell.
- :func:`interrupts_from_mindspore` covers the time MindSpore itself executes, when its
  handler may be back in place: while it is active, a SIGTERM that arrives while MindSpore's
  handler owns SIGINT is Ctrl-C passed on by that handler, and becomes KeyboardInterrupt.
  Any other SIGTERM (Python's SIGINT handler in place: someone else sent it) does what it
  did before: the previous SIGTERM handler runs, or the process ends. The handler that owns
  SIGINT is read with ``sigaction`` and named with ``dladdr`` (Linux and macOS); where that
  cannot be read, nothing is converted.

msmagic activates the second for a whole parity run and, with the extension loaded, for
every IPython cell.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from typing import Iterator, Optional

__all__ = [
    "restore_sigint",
    "restore_after_cell",
    "interrupts_from_mindspore",
    "sigint_owner",
    "cell_started",
]


def restore_sigint() -> bool:
    """Install again, at the C level, the SIGINT handler Python believes is in place.

    Only the main thread can set signal handlers; elsewhere, or when the handler was not
    installed from Python, nothing happens. True when the handler was installed.
    """
    if threading.current_thread() is not threading.main_thread():
        return False
    handler = signal.getsignal(signal.SIGINT)
    if handler is None:
        return False
    try:
        signal.signal(signal.SIGINT, handler)
    except (ValueError, OSError):
        return False
    return True


# ------------------------------------------------------------------ who owns SIGINT


_LIBC = None


def _libc():
    global _LIBC
    if _LIBC is None:
        import ctypes

        class DlInfo(ctypes.Structure):
            _fields_ = [
                ("dli_fname", ctypes.c_char_p),
                ("dli_fbase", ctypes.c_void_p),
                ("dli_sname", ctypes.c_char_p),
                ("dli_saddr", ctypes.c_void_p),
            ]

        libc = ctypes.CDLL(None, use_errno=True)
        libc.dladdr.argtypes = [ctypes.c_void_p, ctypes.POINTER(DlInfo)]
        _LIBC = (ctypes, libc, DlInfo)
    return _LIBC


def sigint_owner() -> Optional[str]:
    """The file name of the shared object whose function handles SIGINT at the C level
    (``libpython3.11.so.1.0``, ``libmindspore_common.so``; the executable's own name for a
    statically linked Python), or None when it is the default or ignore action or cannot
    be read (``sa_handler`` is the first field of ``struct sigaction`` on Linux and macOS).
    """
    if not (sys.platform.startswith("linux") or sys.platform == "darwin"):
        return None
    try:
        ctypes, libc, DlInfo = _libc()
        action = ctypes.create_string_buffer(512)  # larger than any struct sigaction
        if libc.sigaction(signal.SIGINT, None, action) != 0:
            return None
        address = ctypes.c_void_p.from_buffer(action).value or 0
        if address in (0, 1):  # SIG_DFL, SIG_IGN
            return None
        info = DlInfo()
        if not libc.dladdr(address, ctypes.byref(info)) or not info.dli_fname:
            return None
        return os.path.basename(os.fsdecode(info.dli_fname))
    except (OSError, AttributeError, TypeError, ValueError):
        return None


def _mindspore_owns_sigint() -> bool:
    owner = sigint_owner()
    return owner is not None and "mindspore" in owner


# ------------------------------------------------------------------ SIGTERM -> Ctrl-C


class _SigtermFromMindSpore:
    """A SIGTERM handler that turns MindSpore's forwarded Ctrl-C into KeyboardInterrupt
    and hands every other SIGTERM to ``previous``."""

    def __init__(self, previous) -> None:
        self.previous = previous

    def __call__(self, signum, frame):
        if _mindspore_owns_sigint():
            restore_sigint()  # a second Ctrl-C, or a real SIGTERM, is seen as itself
            raise KeyboardInterrupt()
        previous = self.previous
        if callable(previous):
            return previous(signum, frame)
        if previous == signal.SIG_IGN:
            return None
        # the default action (or a handler installed outside Python): end the process
        # the way SIGTERM would have
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.raise_signal(signal.SIGTERM)
        return None


@contextlib.contextmanager
def interrupts_from_mindspore() -> Iterator[bool]:
    """While active, Ctrl-C that MindSpore's SIGINT handler turns into SIGTERM raises
    KeyboardInterrupt in the main thread instead of ending the process. Yields whether it
    could be installed (only the main thread can set handlers). Nests; the previous
    SIGTERM handler is back on exit."""
    installed = _install()
    try:
        yield installed is not None
    finally:
        if installed is not None:
            _uninstall(installed)


def _install() -> Optional[_SigtermFromMindSpore]:
    if threading.current_thread() is not threading.main_thread():
        return None
    try:
        handler = _SigtermFromMindSpore(signal.getsignal(signal.SIGTERM))
        signal.signal(signal.SIGTERM, handler)
    except (ValueError, OSError):
        return None
    return handler


def _uninstall(handler: _SigtermFromMindSpore) -> None:
    if threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGTERM) is handler:
        previous = handler.previous
        try:
            signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)
        except (ValueError, OSError, TypeError):
            pass


# ------------------------------------------------------------------ IPython callbacks

_CELL_HANDLERS: list = []


def cell_started(*_args) -> None:
    """IPython ``pre_run_cell`` callback: Ctrl-C during any cell that runs MindSpore
    raises KeyboardInterrupt (see :func:`interrupts_from_mindspore`)."""
    while _CELL_HANDLERS:  # a cell whose post_run_cell never came
        _uninstall(_CELL_HANDLERS.pop())
    handler = _install()
    if handler is not None:
        _CELL_HANDLERS.append(handler)


def restore_after_cell(*_args) -> None:
    """IPython ``post_run_cell`` callback: undo MindSpore's SIGINT handler after any cell,
    plain or not, once MindSpore has been imported, and put the SIGTERM handler the cell
    started with back."""
    if "mindspore" in sys.modules:
        restore_sigint()
    while _CELL_HANDLERS:
        _uninstall(_CELL_HANDLERS.pop())
