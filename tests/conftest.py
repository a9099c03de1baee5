import os
import sys

# Quiet MindSpore's C++ logging in test output (2 = WARNING and above is hidden).
os.environ.setdefault("GLOG_v", "3")
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


import pytest


@pytest.fixture(autouse=True)
def _main_module_has_spec():
    """IPython's InteractiveShell (used by the magic tests) installs a __main__ module
    without ``__spec__``; torch.multiprocessing.spawn reads it, as it would in a real
    interpreter where __main__ always has one."""
    main = sys.modules.get("__main__")
    if main is not None and not hasattr(main, "__spec__"):
        main.__spec__ = None
    yield


@pytest.fixture
def parity_shell():
    """The IPython shell with msmagic loaded and an empty shadow namespace, reset after."""
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    shell.reset(new_session=False)
    shell.run_line_magic("load_ext", "msmagic")
    shell.run_line_magic("ms_shadow", "--clear")
    yield shell
    shell.run_line_magic("ms_shadow", "--clear")
    shell.run_line_magic("unload_ext", "msmagic")
    shell.reset(new_session=False)
