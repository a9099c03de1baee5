"""The parity run's progress line: what it says and how often it is written (no
framework imported; the line in a real kernel is tested in tests/test_kernel_progress.py)."""

from __future__ import annotations

from types import SimpleNamespace

from msmagic.parity_check.progress import INTERVAL, Progress


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_progress_names_the_statement_its_lines_the_side_and_the_time():
    clock, shown = Clock(), []
    progress = Progress(lambda text, final: shown.append((text, final)), clock=clock)
    clock.now += 1.25
    progress(2, 7, "MindSpore", SimpleNamespace(torch_lines=(4, 9)))
    assert shown == [("msmagic parity: statement 3 of 7 (lines 4-9), MindSpore, 1.2 s", False)]
    clock.now += 1.0
    progress(7, 7, "comparing", None)
    assert shown[-1] == ("msmagic parity: comparing what the cell bound, 2.2 s", False)
    progress.finish("done")
    assert shown[-1] == ("done", True)


def test_progress_is_written_at_most_every_interval():
    clock, shown = Clock(), []
    progress = Progress(lambda text, final: shown.append(text), clock=clock)
    for k in range(1000):  # a thousand calls in 1 s of (fake) time
        clock.now += 0.001
        progress(k, 1000, "PyTorch", SimpleNamespace(torch_lines=(k + 1, k + 1)))
    assert int(1.0 / INTERVAL) - 1 <= len(shown) <= int(1.0 / INTERVAL) + 1
    assert shown[0].startswith("msmagic parity: statement 1 of 1000 (line 1), PyTorch")


def test_nothing_is_shown_at_the_end_of_a_run_that_showed_nothing():
    shown = []
    Progress(lambda text, final: shown.append(text)).finish("done")
    assert shown == []
