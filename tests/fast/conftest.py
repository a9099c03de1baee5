"""Fast tier: before/after port tests that import neither torch nor mindspore.

Every test here is marked ``fast`` (``-m fast`` selects the tier within the whole
suite). When only this folder's tests were collected (``pytest tests/fast``), the
session fails if torch or mindspore ended up imported -- the tier must stay pure text.
``test_no_frameworks.py`` checks the same in a fresh interpreter, whatever was collected.
"""

import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
FRAMEWORKS = ("torch", "mindspore")


def pytest_configure(config):
    config.addinivalue_line("markers", "fast: before/after port tests without the frameworks")


def _in_tier(item) -> bool:
    folder = os.path.dirname(os.path.abspath(str(item.fspath)))
    return folder == HERE or folder.startswith(HERE + os.sep)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Mark the tier's tests, and note whether everything collected (before ``-m`` /
    ``-k`` deselect anything) is in the tier: only then is a loaded framework ours."""
    for item in items:
        if _in_tier(item):
            item.add_marker(pytest.mark.fast)
    config._fast_tier_only = bool(items) and all(_in_tier(item) for item in items)


def imported_frameworks() -> list:
    return sorted(m for m in sys.modules if m.split(".")[0] in FRAMEWORKS)


def pytest_sessionfinish(session, exitstatus):
    if not getattr(session.config, "_fast_tier_only", False):
        return  # other tests (the executed tier) import the frameworks on purpose
    loaded = imported_frameworks()
    if loaded:
        session.config._fast_tier_leak = loaded
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    loaded = getattr(config, "_fast_tier_leak", None)
    if loaded:
        terminalreporter.section("fast tier", sep="=", red=True, bold=True)
        terminalreporter.write_line(
            "tests/fast imported a framework (the tier must stay pure text): "
            + ", ".join(loaded[:5]) + (" ..." if len(loaded) > 5 else ""), red=True)
