"""Fast before/after tier: port text in, expected text and rule ids out.

Imports neither torch nor mindspore (checked by ``test_no_frameworks.py`` and by the
session-finish guard in ``conftest.py``), so the whole tier runs in a few seconds.
"""
