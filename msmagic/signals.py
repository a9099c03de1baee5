"""Keep Ctrl-C a KeyboardInterrupt once MindSpore has run.

MindSpore 2.x installs a native SIGINT handler from each worker thread it starts (its
``SignalGuard``: the first operation, every compiled graph, every gradient step); that
handler sends the process SIGTERM, so Ctrl-C kills terminal IPython, a Jupyter kernel or a
script instead of raising KeyboardInterrupt. Python still reports its own handler through
``signal.getsignal``, so :func:`restore_sigint` installs that handler again at the C level.

msmagic calls it after every step and comparison of a parity run, when a run ends, and
(in IPython, with the extension loaded) after every cell once MindSpore is imported. While
MindSpore itself executes a statement, the handler it installs can be in place: Ctrl-C
landing exactly then still ends the process.
"""

from __future__ import annotations

import signal
import sys
import threading

__all__ = ["restore_sigint", "restore_after_cell"]


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


def restore_after_cell(*_args) -> None:
    """IPython ``post_run_cell`` callback: undo MindSpore's SIGINT handler after any cell,
    plain or not, once MindSpore has been imported."""
    if "mindspore" in sys.modules:
        restore_sigint()
