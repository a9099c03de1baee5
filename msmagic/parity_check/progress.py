"""Live progress of a parity run: statement k of n, which side, elapsed time.

In a Jupyter kernel a display handle shows one line, updated in place at most every
``INTERVAL`` seconds, and ends as a line saying what the run took (the report follows
it). Elsewhere (terminal IPython, scripts) nothing is shown unless stderr is a terminal,
where one line is rewritten with a carriage return and cleared at the end.
"""

from __future__ import annotations

import sys
import threading
import time
from html import escape
from typing import Callable, Optional

__all__ = ["Progress", "default_progress", "INTERVAL"]

#: seconds between two updates of the progress line
INTERVAL = 0.2


def _in_kernel() -> bool:
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


class Progress:
    """A callable ``progress(k, n, stage, step)`` for :func:`msmagic.parity_check.run.execute`
    that writes through ``show(text, final)`` no more often than every ``INTERVAL`` s.

    With ``tick`` (seconds), a daemon thread writes the current line again when nothing
    was written for that long, so the elapsed time keeps moving while one long statement
    (a training loop) runs; ``finish`` stops it."""

    def __init__(self, show: Callable[[str, bool], None], clock=time.perf_counter,
                 tick: Optional[float] = None) -> None:
        self.show = show
        self.clock = clock
        self.started = clock()
        self.last = None
        self.updates = 0
        self.current = None  # (k, n, stage, step) of the latest call
        self._lock = threading.Lock()
        self._done = threading.Event()
        if tick:
            threading.Thread(target=self._ticker, args=(tick,), daemon=True,
                             name="msmagic-parity-progress").start()

    def text(self, k: int, n: int, stage: str, step) -> str:
        elapsed = self.clock() - self.started
        where = ""
        lines = getattr(step, "torch_lines", None)
        if lines:
            where = f" (line {lines[0]})" if lines[0] == lines[1] else f" (lines {lines[0]}-{lines[1]})"
        if stage == "comparing" and step is None:
            return f"msmagic parity: comparing what the cell bound, {elapsed:.1f} s"
        return f"msmagic parity: statement {min(k + 1, n)} of {n}{where}, {stage}, {elapsed:.1f} s"

    def __call__(self, k: int, n: int, stage: str, step) -> None:
        self.current = (k, n, stage, step)
        now = self.clock()
        if self.last is not None and now - self.last < INTERVAL:
            return
        self._write(now)

    def _write(self, now: float) -> None:
        with self._lock:
            if self._done.is_set() or self.current is None:
                return
            self.last = now
            self.updates += 1
            self.show(self.text(*self.current), False)

    def _ticker(self, tick: float) -> None:
        while not self._done.wait(tick):
            now = self.clock()
            if self.last is None or now - self.last >= tick:
                try:
                    self._write(now)
                except Exception:  # noqa: BLE001 - a display that went away: stop quietly
                    return

    def stop(self) -> None:
        """No more lines from the ticker (the run ended, or failed)."""
        self._done.set()

    def finish(self, summary: str) -> None:
        with self._lock:
            self._done.set()
            if self.updates:
                self.show(summary, True)


def default_progress() -> Optional[Progress]:
    """The progress display for where this runs: a display handle in a kernel, a
    rewritten stderr line on a terminal, else None."""
    if _in_kernel():
        from IPython.display import display

        handle = None

        def show(text: str, final: bool) -> None:
            nonlocal handle
            bundle = {
                "text/plain": text,
                "text/html": f'<div class="msm-progress" style="font-family: monospace; '
                f'opacity: {0.7 if final else 1}; padding: 2px 0">{escape(text)}</div>',
            }
            if handle is None:
                handle = display(bundle, raw=True, display_id=True)
            else:
                handle.update(bundle, raw=True)

        return Progress(show, tick=1.0)
    stream = sys.stderr
    if getattr(stream, "isatty", lambda: False)():
        width = [0]

        def show_tty(text: str, final: bool) -> None:
            pad = max(width[0] - len(text), 0)
            stream.write("\r" + ("" if final else text) + " " * (pad if not final else width[0]) + "\r")
            stream.flush()
            width[0] = len(text)

        return Progress(show_tty, tick=1.0)
    return None
