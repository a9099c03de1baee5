"""%%ms_port through a real IPython shell.

Most tests swap the engine for a recording fake (put into sys.modules), so they check
the magic's own wiring whatever the engine ports today. The tests at the end use
the real engine.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
import types

import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output

import msmagic
from msmagic.errors import PortSyntaxError
from msmagic.magics import MsMagic
from msmagic.result import Edit, PortResult

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


TORCH_CELL = "import torch\nimport torch.nn as nn\nlayer = nn.Linear(3, 4)\n"


def get_ipython():
    return InteractiveShell.instance()


@pytest.fixture
def ip():
    shell = get_ipython()
    shell.run_line_magic("load_ext", "msmagic")
    yield shell
    shell.run_line_magic("unload_ext", "msmagic")
    # %config writes into the shell's config, which a reloaded MsMagic would read
    shell.config.pop("MsMagic", None)
    # the next test gets a fresh MsMagic with the default configuration
    assert "ms_port" not in shell.magics_manager.magics["cell"]


class FakeSession:
    def __init__(self):
        self.learned: list[str] = []

    def learn(self, source):
        self.learned.append(source)


class FakeEngine:
    """Stands in for msmagic.engine.pipeline.port and msmagic.engine.session.PortSession."""

    def __init__(self):
        self.calls: list[tuple[str, dict]] = []
        self.error: PortSyntaxError | None = None

    def port(self, source, *, session=None, **options):
        self.calls.append((source, dict(options, session=session)))
        if self.error is not None:
            raise self.error
        code = source.replace("torch", "mindspore").replace("Linear", "Dense")
        edits = []
        if code != source:
            edits.append(Edit("IMP001", "PyTorch imports become MindSpore imports", (1, 1), (1, 1), api="torch"))
        return PortResult(source=source, code=code, edits=edits, options=dict(options))


@pytest.fixture
def fake(monkeypatch):
    engine = FakeEngine()
    core = types.ModuleType("msmagic.engine.pipeline")
    core.port = engine.port
    session = types.ModuleType("msmagic.engine.session")
    session.PortSession = FakeSession
    monkeypatch.setitem(sys.modules, "msmagic.engine.pipeline", core)
    monkeypatch.setitem(sys.modules, "msmagic.engine.session", session)
    return engine


def instance(shell) -> MsMagic:
    return shell.magics_manager.registry["MsMagic"]


# ----------------------------------------------------------------------------- loading


def test_load_twice_registers_once(ip):
    first = instance(ip)
    ip.run_line_magic("load_ext", "msmagic")  # "already loaded"
    msmagic.load_ipython_extension(ip)  # a direct second call is harmless too
    assert instance(ip) is first
    assert sum(isinstance(c, MsMagic) for c in ip.configurables) == 1
    assert ip.magics_manager.magics["cell"]["ms_port"].__self__ is first


def test_unload_removes_the_magic():
    shell = get_ipython()
    shell.run_line_magic("load_ext", "msmagic")
    assert "ms_port" in shell.magics_manager.magics["cell"]
    shell.run_line_magic("unload_ext", "msmagic")
    assert "ms_port" not in shell.magics_manager.magics["cell"]
    assert not any(isinstance(c, MsMagic) for c in shell.configurables)
    with pytest.raises(UsageError, match="ms_port"):
        shell.run_cell_magic("ms_port", "", "x = 1\n")
    # and it comes back
    shell.run_line_magic("load_ext", "msmagic")
    assert "ms_port" in shell.magics_manager.magics["cell"]
    shell.run_line_magic("unload_ext", "msmagic")


def _run_fresh(code: str) -> str:
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_load_ext_imports_no_framework_and_no_engine():
    out = _run_fresh(
        """
        import sys, time
        from IPython.core.interactiveshell import InteractiveShell
        ip = InteractiveShell.instance()
        t = time.perf_counter()
        ip.run_line_magic("load_ext", "msmagic")
        print("seconds", time.perf_counter() - t)
        print("ms_port" in ip.magics_manager.magics["cell"])
        print(sorted(m for m in ("torch", "mindspore", "libcst", "msmagic.engine.pipeline") if m in sys.modules))
        """
    )
    lines = out.splitlines()
    assert lines[1:] == ["True", "[]"]


def test_port_imports_neither_torch_nor_mindspore():
    out = _run_fresh(
        """
        import sys
        from IPython.core.interactiveshell import InteractiveShell
        from IPython.utils.capture import capture_output
        ip = InteractiveShell.instance()
        ip.run_line_magic("load_ext", "msmagic")
        with capture_output() as c:
            ip.run_cell_magic("ms_port", "-o r", %r)
        print(type(ip.user_ns["r"]).__name__, len(c.outputs))
        print(sorted(m for m in ("torch", "mindspore") if m in sys.modules))
        """
        % TORCH_CELL
    )
    assert out.splitlines() == ["PortResult 1", "[]"]


# ----------------------------------------------------------------------------- arguments


def test_help_prints_usage_and_does_not_port(ip, fake):
    with capture_output() as c:
        ip.run_cell_magic("ms_port", "-h", TORCH_CELL)
    assert "%%ms_port [-h] [--insert] [-o NAME]" in c.stdout
    assert "--view" in c.stdout and "--quiet" in c.stdout
    assert c.outputs == []
    assert fake.calls == []


@pytest.mark.parametrize("line", ["--bogus", "-x", "--view sideways", "-o", "extra words"])
def test_bad_options_are_usage_errors(ip, fake, line):
    with pytest.raises(UsageError):
        ip.run_cell_magic("ms_port", line, TORCH_CELL)
    assert fake.calls == []


@pytest.mark.parametrize("name", ["1bad", "not-a-name", "class", "a.b"])
def test_output_name_must_be_an_identifier(ip, fake, name):
    with pytest.raises(UsageError, match="identifier"):
        ip.run_cell_magic("ms_port", f"-o {name}", TORCH_CELL)
    assert fake.calls == []


def test_bad_option_in_a_cell_shows_no_traceback(ip, fake):
    with capture_output() as c:
        result = ip.run_cell(f"%%ms_port --bogus\n{TORCH_CELL}")
    assert isinstance(result.error_in_exec, UsageError)
    assert "UsageError: unrecognized arguments: --bogus" in c.stderr
    assert "Traceback" not in c.stdout + c.stderr


# ----------------------------------------------------------------------------- porting


def test_output_stores_the_result_and_nothing_else(ip, fake):
    before = set(ip.user_ns)
    with capture_output():
        ip.run_cell_magic("ms_port", "-o res", TORCH_CELL)
    assert set(ip.user_ns) == before | {"res"}
    res = ip.user_ns.pop("res")
    assert isinstance(res, PortResult)
    assert res.source == TORCH_CELL and "mindspore.nn" in res.code
    # without -o the namespace is left alone
    before = set(ip.user_ns)
    with capture_output():
        ip.run_cell_magic("ms_port", "", TORCH_CELL)
    assert set(ip.user_ns) == before


def test_display_has_text_and_html(ip, fake):
    with capture_output() as c:
        returned = ip.run_cell_magic("ms_port", "", TORCH_CELL)
    assert returned is None  # nothing lands in Out / _
    assert len(c.outputs) == 1
    data = c.outputs[0].data
    assert data["text/plain"].startswith("msmagic port: 1 edit by 1 rule, 0 findings")
    assert "+import mindspore.nn as nn" in data["text/plain"]
    assert re.search(r'<details class="msm-view msm-view-split"[^>]* open>', data["text/html"])
    assert 'data-rule="IMP001"' in data["text/html"]


def test_insert_puts_the_code_in_the_next_cell(ip, fake, monkeypatch):
    calls = []
    monkeypatch.setattr(ip, "set_next_input", lambda s, replace=False: calls.append((s, replace)))
    with capture_output():
        ip.run_cell_magic("ms_port", "--insert", TORCH_CELL)
    assert calls == [(TORCH_CELL.replace("torch", "mindspore").replace("Linear", "Dense"), False)]
    with capture_output():
        ip.run_cell_magic("ms_port", "", TORCH_CELL)
    assert len(calls) == 1


def test_quiet_shows_only_the_code(ip, fake):
    with capture_output() as c:
        ip.run_cell_magic("ms_port", "--quiet", TORCH_CELL)
    data = c.outputs[0].data
    assert data["text/plain"] == fake.port(TORCH_CELL).code
    assert data["text/html"].startswith("<pre") and "msm-hunk" not in data["text/html"]
    # presentation is the magic's: port() gets the cell and the session only
    assert set(fake.calls[0][1]) == {"session"}


def test_config_view_is_honoured_and_the_option_wins(ip, fake):
    ip.run_line_magic("config", 'MsMagic.view = "unified"')
    assert instance(ip).view == "unified"
    with capture_output() as c:
        ip.run_cell_magic("ms_port", "-o r", TORCH_CELL)
    assert ip.user_ns.pop("r").options["view"] == "unified"
    assert re.search(r'<details class="msm-view msm-view-unified"[^>]* open>', c.outputs[0].data["text/html"])
    assert "view" not in fake.calls[-1][1]
    with capture_output() as c:
        ip.run_cell_magic("ms_port", "--view split", TORCH_CELL)
    assert re.search(r'<details class="msm-view msm-view-split"[^>]* open>', c.outputs[0].data["text/html"])
    ip.run_line_magic("config", "MsMagic.quiet = True")
    with capture_output() as c:
        ip.run_cell_magic("ms_port", "", TORCH_CELL)
    assert "msm-hunk" not in c.outputs[0].data["text/html"]


def test_config_traits():
    traits = MsMagic.class_traits(config=True)
    assert set(traits) >= {"view", "quiet", "device", "strict"}
    assert traits["view"].default_value == "split"
    assert traits["device"].values == ["CPU", "GPU", "Ascend"]
    assert traits["strict"].default_value is False
    assert all(traits[name].help for name in ("view", "quiet", "device", "strict"))


def test_syntax_error_becomes_a_usage_error(ip, fake):
    fake.error = PortSyntaxError("'(' was never closed", 2, 7)
    with pytest.raises(UsageError) as info:
        ip.run_cell_magic("ms_port", "", "x = 1\ny = f(\n")
    # the %%ms_port line is line 1 in the editor: body line 2 is line 3
    assert str(info.value) == "line 3, column 7: '(' was never closed\n    y = f(\n          ^"
    assert info.value.__cause__ is None and info.value.__suppress_context__


def test_session_learns_each_earlier_cell_once(ip, fake):
    ip.run_cell("import torch.nn as nn", store_history=True)
    with capture_output():
        ip.run_cell("%%ms_port\nlayer = nn.Linear(3, 4)\n", store_history=True)
    session = fake.calls[0][1]["session"]
    assert isinstance(session, FakeSession)
    assert "import torch.nn as nn" in session.learned
    # the cell being ported is not learned before it is ported...
    assert not any("run_cell_magic" in s for s in session.learned)
    assert session.learned[-1] == "layer = nn.Linear(3, 4)\n"  # ...but after it
    n = len(session.learned)
    ip.run_cell("import torch.nn.functional as F", store_history=True)
    with capture_output():
        ip.run_cell("%%ms_port\ny = F.relu(x)\n", store_history=True)
    assert fake.calls[1][1]["session"] is session
    assert session.learned[n:] == ["import torch.nn.functional as F", "y = F.relu(x)\n"]


# ----------------------------------------------------------------------------- real engine


def test_real_syntax_error_cell_prints_no_traceback(ip):
    with capture_output() as c:
        result = ip.run_cell("%%ms_port\nimport torch\nx = torch.ones(2,\n")
    assert isinstance(result.error_in_exec, UsageError)
    assert c.stderr == ("UsageError: line 3, column 15: '(' was never closed\n"
                        "    x = torch.ones(2,\n                  ^\n")
    assert "Traceback" not in c.stdout + c.stderr
    assert c.outputs == []


def test_real_port_through_the_magic(ip):
    with capture_output() as c:
        ip.run_cell_magic("ms_port", "-o r", TORCH_CELL)
    r = ip.user_ns.pop("r")
    assert isinstance(r, PortResult)
    assert "import mindspore" in r.code
    data = c.outputs[0].data
    assert set(data) >= {"text/plain", "text/html"}
    assert data["text/plain"].startswith("msmagic port: ")


# ----------------------------------------------------------------------------- cell magics below ours


def test_real_port_keeps_a_time_line_above_the_ported_body(ip):
    with capture_output():
        ip.run_cell_magic("ms_port", "-o r", "%%time\n" + TORCH_CELL)
    r = ip.user_ns.pop("r")
    assert r.code == "%%time\nimport mindspore\nimport mindspore.nn as nn\nlayer = nn.Dense(3, 4)\n"


def test_imports_of_a_cell_run_under_time_are_learned(ip):
    ip.run_cell("%%time\nimport torch.nn as nn\n", store_history=True)
    with capture_output():
        ip.run_cell("%%ms_port -o r\nlayer = nn.Linear(3, 4)\n", store_history=True)
    assert ip.user_ns.pop("r").code == "layer = nn.Dense(3, 4)\n"


def test_cell_body_of_history_entries():
    from msmagic.magics import _cell_body

    assert _cell_body("get_ipython().run_cell_magic('time', '', 'import torch\\n')\n") == "import torch\n"
    assert _cell_body("get_ipython().run_cell_magic('capture', 'c', '%%time\\nimport torch')") == "import torch"
    assert _cell_body("get_ipython().run_cell_magic('bash', '', 'ls')") \
        == "get_ipython().run_cell_magic('bash', '', 'ls')"
    assert _cell_body("x = 1") == "x = 1"


def test_parity_runs_a_cell_with_a_time_line(ip):
    with capture_output() as c:
        ip.run_cell_magic("ms_parity", "-o rep", "%%time\nimport torch\nx = torch.ones(2)\n")
    rep = ip.user_ns.pop("rep")
    assert rep.ok and rep.torch_error is None, rep
    assert "%%time ran the cell once on each side" in c.stdout
    assert rep.port.code.startswith("%%time\nimport mindspore\n")


def test_parity_under_capture_binds_the_captured_output(ip):
    with capture_output() as c:
        ip.run_cell_magic("ms_parity", "-o rep", "%%capture cap\nimport torch\nx = torch.ones(2)\nprint('noisy')\n")
    rep, cap = ip.user_ns.pop("rep"), ip.user_ns.pop("cap")
    assert rep.ok, rep
    assert "noisy" in cap.stdout and "noisy" not in c.stdout


def test_parity_refuses_a_cell_magic_that_does_not_run_python(ip):
    with capture_output():
        with pytest.raises(UsageError, match="cannot run a %%bash cell"):
            ip.run_cell_magic("ms_parity", "", "%%bash\necho hi\n")
