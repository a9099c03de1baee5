"""%%ms_parity and %ms_shadow through a real IPython shell.

Most tests swap the parity runner (msmagic.parity_check.parity) for a recording fake, so they check
the magic's own wiring: options, errors, display, the PyTorch-side traceback, the
returned value. The tests at the end use the real runner (and torch/mindspore).
"""

from __future__ import annotations

import builtins
import types

import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output

from msmagic.errors import PortError, PortSyntaxError
from msmagic.magics import MsMagic, ShadowSummary
from msmagic.parity_check import MATCH, ParityOptions, ParityReport, Row, StatementError
from msmagic.result import PortResult
from tests.test_magics import _run_fresh



TORCH_CELL = "import torch\nimport torch.nn as nn\nlayer = nn.Linear(3, 4)\n"

LINEAR_CELL = """\
import torch
import torch.nn as nn
torch.manual_seed(0)
model = nn.Linear(3, 2)
x = torch.randn(4, 3)
y = model(x)
"""


@pytest.fixture
def ip():
    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "msmagic")
    yield shell
    shell.run_line_magic("unload_ext", "msmagic")
    shell.config.pop("MsMagic", None)
    assert "ms_parity" not in shell.magics_manager.magics["cell"]
    assert "ms_shadow" not in shell.magics_manager.magics["line"]


def instance(shell) -> MsMagic:
    return shell.magics_manager.registry["MsMagic"]


class FakeDeviceError(PortError):
    pass


class FakeRunner:
    """Stands in for msmagic.parity_check's runner: records the calls, returns ``report``."""

    def __init__(self):
        self.calls: list[tuple[str, dict]] = []
        self.error: BaseException | None = None
        self.report: ParityReport | None = None
        self.shadow: dict = {"__builtins__": builtins}

    def parity(self, source, options=None, **kw):
        self.calls.append((source, options, kw))
        if self.error is not None:
            raise self.error
        if self.report is not None:
            return self.report
        return ParityReport(
            port=PortResult(source=source, code=source.replace("torch", "mindspore")),
            rows=[Row("layer.weight", MATCH, (4, 3), "torch.float32", (4, 3), "Float32", 0.0, 0.0, 2)],
        )

    def shadow_namespace(self):
        return self.shadow


@pytest.fixture
def fake(monkeypatch):
    runner = FakeRunner()
    import msmagic.parity_check as package

    monkeypatch.setattr(package, "parity", runner.parity)
    monkeypatch.setattr(package, "shadow_namespace", runner.shadow_namespace)
    monkeypatch.setattr(package, "ParityDeviceError", FakeDeviceError)
    return runner


def _raise_in_statement(code: str) -> BaseException:
    """Like the runner: exec a statement under a pseudo file name and keep the exception."""
    try:
        exec(compile(code, "<pytorch statement 2>", "exec"), {})
    except BaseException as exc:  # noqa: BLE001
        return exc
    raise AssertionError("did not raise")


# ----------------------------------------------------------------------------- loading


def test_load_registers_parity_and_shadow(ip):
    assert ip.magics_manager.magics["cell"]["ms_parity"].__self__ is instance(ip)
    assert ip.magics_manager.magics["line"]["ms_shadow"].__self__ is instance(ip)


def test_load_ext_imports_neither_framework_nor_the_runner():
    out = _run_fresh(
        """
        import sys
        from IPython.core.interactiveshell import InteractiveShell
        from IPython.utils.capture import capture_output
        ip = InteractiveShell.instance()
        ip.run_line_magic("load_ext", "msmagic")
        print("ms_parity" in ip.magics_manager.magics["cell"], "ms_shadow" in ip.magics_manager.magics["line"])
        with capture_output():
            ip.run_cell_magic("ms_parity", "-h", "x = 1\\n")
        print(sorted(m for m in ("torch", "mindspore", "msmagic.parity_check", "msmagic.parity_check.run") if m in sys.modules))
        """
    )
    assert out.splitlines() == ["True True", "[]"]


# ----------------------------------------------------------------------------- arguments


def test_help_prints_usage_and_runs_nothing(ip, fake):
    with capture_output() as c:
        ip.run_cell_magic("ms_parity", "-h", TORCH_CELL)
    assert c.stdout.lstrip().startswith("%%ms_parity [-h]")
    for opt in ("--device {CPU,GPU,Ascend}", "--rtol FLOAT", "--atol FLOAT", "--seed INT",
                "--timeout SECONDS", "--no-sync", "--against VAR", "-o NAME", "--view {split,unified}"):
        assert opt in c.stdout
    assert c.outputs == [] and fake.calls == []


@pytest.mark.parametrize(
    "line, match",
    [
        ("--device TPU", "invalid choice"),
        ("--device cpu", "invalid choice"),
        ("--rtol -1", "--rtol must be a number >= 0"),
        ("--atol -0.5", "--atol must be a number >= 0"),
        ("--rtol nan", "--rtol must be"),
        ("--rtol abc", "invalid float"),
        ("--seed 1.5", "invalid int"),
        ("--timeout 0", "--timeout must be a positive"),
        ("--timeout -2", "--timeout must be a positive"),
        ("--view sideways", "invalid choice"),
        ("--bogus", "unrecognized"),
        ("-o", "expected one argument"),
    ],
)
def test_bad_options_are_usage_errors(ip, fake, line, match):
    with pytest.raises(UsageError, match=match):
        ip.run_cell_magic("ms_parity", line, TORCH_CELL)
    assert fake.calls == []


@pytest.mark.parametrize("name", ["1bad", "not-a-name", "class", "a.b"])
def test_output_name_must_be_an_identifier(ip, fake, name):
    with pytest.raises(UsageError, match="identifier"):
        ip.run_cell_magic("ms_parity", f"-o {name}", TORCH_CELL)
    assert fake.calls == []


def test_against_needs_an_existing_variable_with_code(ip, fake):
    ip.user_ns.pop("nothing_here", None)
    with pytest.raises(UsageError, match="no variable named 'nothing_here'"):
        ip.run_cell_magic("ms_parity", "--against nothing_here", TORCH_CELL)
    ip.user_ns["not_code"] = 42
    with pytest.raises(UsageError, match="a str or a PortResult.*not int"):
        ip.run_cell_magic("ms_parity", "--against not_code", TORCH_CELL)
    ip.user_ns["no_str_code"] = types.SimpleNamespace(code=b"bytes")
    with pytest.raises(UsageError, match="--against no_str_code"):
        ip.run_cell_magic("ms_parity", "--against no_str_code", TORCH_CELL)
    assert fake.calls == []
    for name in ("not_code", "no_str_code"):
        del ip.user_ns[name]


def test_bad_option_in_a_cell_shows_no_traceback(ip, fake):
    with capture_output() as c:
        result = ip.run_cell(f"%%ms_parity --device TPU\n{TORCH_CELL}")
    assert isinstance(result.error_in_exec, UsageError)
    assert "UsageError:" in c.stderr and "Traceback" not in c.stdout + c.stderr


# ----------------------------------------------------------------------------- wiring


def test_defaults_are_passed_to_the_runner(ip, fake):
    with capture_output():
        ip.run_cell_magic("ms_parity", "-o rep", TORCH_CELL)
    source, options, kw = fake.calls[0]
    assert source == TORCH_CELL
    assert options == ParityOptions() == ParityOptions(
        device="CPU", rtol=1e-5, atol=1e-5, seed=None, timeout=None, sync=True, against=None)
    assert kw == dict(user_ns=ip.user_ns, shadow=fake.shadow, session=kw["session"], progress="auto")
    assert kw["user_ns"] is ip.user_ns and kw["shadow"] is fake.shadow
    # the view is presentation: the magic puts it on the report, the runner never sees it
    assert ip.user_ns.pop("rep").options["view"] == "split"
    # the same PortSession %%ms_port uses
    assert kw["session"] is instance(ip)._get_session()


def test_options_are_passed_to_the_runner(ip, fake):
    ip.user_ns["ms_code"] = "import mindspore\n"
    ip.user_ns["ported"] = PortResult(source="x", code="y = 1\n")
    with capture_output():
        ip.run_cell_magic(
            "ms_parity",
            "--device Ascend --rtol 0.01 --atol 0 --seed 3 --timeout 2.5 --no-sync --against ms_code --view unified",
            TORCH_CELL,
        )
        ip.run_cell_magic("ms_parity", "--against ported", TORCH_CELL)
    opts = fake.calls[0][1]
    assert (opts.device, opts.rtol, opts.atol, opts.seed, opts.timeout, opts.sync) == (
        "Ascend", 0.01, 0.0, 3, 2.5, False)
    assert opts.against == "import mindspore\n"
    assert fake.calls[1][1].against == "y = 1\n"  # a PortResult: its code
    del ip.user_ns["ms_code"], ip.user_ns["ported"]


def test_config_device_is_the_default_and_the_option_wins(ip, fake):
    ip.run_line_magic("config", 'MsMagic.device = "GPU"')
    with capture_output():
        ip.run_cell_magic("ms_parity", "", TORCH_CELL)
        ip.run_cell_magic("ms_parity", "--device CPU", TORCH_CELL)
    assert [c[1].device for c in fake.calls] == ["GPU", "CPU"]


def test_displays_the_report_and_stores_it(ip, fake):
    before = set(ip.user_ns)
    with capture_output() as c:
        returned = ip.run_cell_magic("ms_parity", "-o rep", TORCH_CELL)
    assert returned is None
    assert set(ip.user_ns) == before | {"rep"}
    rep = ip.user_ns.pop("rep")
    assert isinstance(rep, ParityReport) and rep.ok
    assert len(c.outputs) == 1
    data = c.outputs[0].data
    assert data["text/plain"].startswith("msmagic parity: all 1 compared values match  [ok]")
    assert 'class="msm-parity-table"' in data["text/html"] and "msm-pill-ok" in data["text/html"]
    assert c.stdout == "" and c.stderr == ""


def test_the_cells_value_is_returned(ip, fake):
    fake.report = ParityReport(port=PortResult(source="1 + 1\n", code="1 + 1\n"), value=2)
    with capture_output() as c:
        result = ip.run_cell("%%ms_parity\n1 + 1\n", store_history=True)
    assert result.result == 2  # shown as Out[] by the displayhook
    assert len(c.outputs) == 1 and "msm-parity" in c.outputs[0].data["text/html"]


def test_syntax_error_becomes_a_usage_error(ip, fake):
    fake.error = PortSyntaxError("'(' was never closed", 2, 7)
    with pytest.raises(UsageError) as info:
        ip.run_cell_magic("ms_parity", "", "x = 1\ny = f(\n")
    assert str(info.value) == "line 3, column 7: '(' was never closed\n    y = f(\n          ^"
    assert info.value.__suppress_context__


def test_unavailable_device_becomes_a_one_line_usage_error(ip, fake):
    fake.error = FakeDeviceError("device GPU is not available here;\navailable: CPU")
    with pytest.raises(UsageError) as info:
        ip.run_cell_magic("ms_parity", "--device GPU", TORCH_CELL)
    assert str(info.value) == "device GPU is not available here; available: CPU"


def test_a_runner_bug_is_a_one_line_usage_error(ip, fake):
    fake.error = RuntimeError("oops\nsecond line")
    with capture_output() as c:
        result = ip.run_cell(f"%%ms_parity\n{TORCH_CELL}")
    assert isinstance(result.error_in_exec, UsageError)
    assert "bug in msmagic" in str(result.error_in_exec) and "RuntimeError: oops second line" in str(result.error_in_exec)
    assert "Traceback" not in c.stdout + c.stderr


def test_ctrl_c_in_the_runner_fails_the_cell_like_a_plain_cell(ip, fake):
    fake.error = KeyboardInterrupt()
    with capture_output() as c:
        result = ip.run_cell(f"%%ms_parity\n{TORCH_CELL}")
    assert type(result.error_in_exec) is KeyboardInterrupt
    assert "KeyboardInterrupt" in c.stdout + c.stderr and "parity_check" not in c.stdout + c.stderr


def test_interrupted_report_is_shown_then_the_cell_fails(ip, fake):
    fake.report = ParityReport(port=PortResult(source="x\n", code="x\n"), interrupted=True, value=5)
    with capture_output() as c:
        result = ip.run_cell("%%ms_parity\nx\n")
    assert type(result.error_in_exec) is KeyboardInterrupt and result.result is None
    assert "Interrupted (Ctrl-C)" in c.outputs[0].data["text/html"]


def test_pytorch_error_is_shown_once_like_a_cell_error(ip, fake):
    exc = _raise_in_statement("a = 1\nb = a / 0\n")
    err = StatementError("PyTorch", 1, (2, 3), "ZeroDivisionError", "division by zero",
                         "ZeroDivisionError: division by zero", exception=exc)
    fake.report = ParityReport(port=PortResult(source="x = 1\na = 1\nb = a / 0\n", code="x = 1\na = 1\nb = a / 0\n"),
                               torch_error=err, value=3)
    with capture_output() as c:
        result = ip.run_cell("%%ms_parity\nx = 1\na = 1\nb = a / 0\n")
    out = c.stdout + c.stderr
    assert out.count("Traceback") == 1
    assert "ZeroDivisionError" in out and "<pytorch statement 2>" in out
    assert "_raise_in_statement" not in out  # the runner's own frame is not shown
    assert result.result is None  # no Out[] after an error
    assert len(c.outputs) == 1 and "msm-error-pytorch" in c.outputs[0].data["text/html"]


def test_pytorch_error_without_the_exception_prints_the_readable_traceback(ip, fake):
    err = StatementError("PyTorch", 0, (1, 1), "NameError", "name 'q' is not defined",
                         "NameError: name 'q' is not defined\n")
    fake.report = ParityReport(port=PortResult(source="q\n", code="q\n"), torch_error=err)
    with capture_output() as c:
        ip.run_cell("%%ms_parity\nq\n")
    assert c.stderr == "NameError: name 'q' is not defined\n"


# ----------------------------------------------------------------------------- %ms_shadow


def test_shadow_summary_value_and_clear(ip, fake):
    fake.shadow.update(layer=[1, 2], n=3, __name__="__msmagic_mindspore__")
    summary = ip.run_line_magic("ms_shadow", "")
    assert isinstance(summary, ShadowSummary)
    assert summary.names == {"layer": "list", "n": "int"}
    assert repr(summary).splitlines() == ["MindSpore shadow namespace: 2 names", "  layer  list", "  n      int"]
    assert "<code>layer</code>" in summary._repr_html_()
    assert ip.run_line_magic("ms_shadow", "n") == 3
    with pytest.raises(UsageError, match="'nope' is not in the shadow namespace.*layer, n"):
        ip.run_line_magic("ms_shadow", "nope")
    with capture_output() as c:
        assert ip.run_line_magic("ms_shadow", "--clear") is None
    assert c.stdout == "ms_shadow: cleared 2 names\n"
    assert fake.shadow == {"__builtins__": builtins, "__name__": "__msmagic_mindspore__"}
    assert repr(ip.run_line_magic("ms_shadow", "")) == "MindSpore shadow namespace: empty"


def test_shadow_help(ip, fake):
    with capture_output() as c:
        ip.run_line_magic("ms_shadow", "-h")
    assert c.stdout.lstrip().startswith("%ms_shadow [-h] [--clear] [name]")
    assert "--clear" in c.stdout and "NAME" in c.stdout


# ----------------------------------------------------------------------------- real runner


@pytest.fixture
def clean_shadow():
    yield
    from msmagic.parity_check import shadow_namespace

    shadow = shadow_namespace()
    kept = {k: shadow[k] for k in ("__builtins__", "__name__") if k in shadow}
    shadow.clear()
    shadow.update(kept)


def test_real_linear_cell(ip, clean_shadow):
    with capture_output() as c:
        ip.run_cell_magic("ms_parity", "-o rep", LINEAR_CELL)
    rep = ip.user_ns.pop("rep")
    assert isinstance(rep, ParityReport)
    assert rep.ok, rep.summary()
    assert rep.row("y").status == MATCH
    data = c.outputs[0].data
    assert 'class="msm-parity-table"' in data["text/html"] and "msm-pill-ok" in data["text/html"]
    assert data["text/plain"].startswith("msmagic parity: ")
    # the PyTorch side ran in the user namespace
    assert type(ip.user_ns["y"]).__module__.startswith("torch")


def test_real_unavailable_device_lists_cpu(ip, clean_shadow):
    try:
        with capture_output():
            ip.run_cell_magic("ms_parity", "--device GPU", LINEAR_CELL)
    except UsageError as err:
        assert "CPU" in str(err) and "\n" not in str(err)
    else:
        pytest.skip("MindSpore has a GPU here")
    with pytest.raises(UsageError, match="CPU"):
        ip.run_cell_magic("ms_parity", "--device Ascend", LINEAR_CELL)


def test_real_pytorch_error_shows_traceback_once_and_the_report(ip, clean_shadow):
    cell = "import torch\nx = torch.ones(2)\ny = x.reshape(3)\n"
    with capture_output() as c:
        result = ip.run_cell(f"%%ms_parity -o rep\n{cell}")
    assert result.error_in_exec is None or not isinstance(result.error_in_exec, UsageError)
    out = c.stdout + c.stderr
    assert out.count("Traceback") == 1 and "RuntimeError" in out
    rep = ip.user_ns.pop("rep")
    assert rep.torch_error is not None and rep.torch_error.type == "RuntimeError"
    assert len(c.outputs) == 1 and "msm-error" in c.outputs[0].data["text/html"]


def test_real_shadow_after_a_parity_cell_and_clear(ip, clean_shadow):
    with capture_output():
        ip.run_cell_magic("ms_parity", "", LINEAR_CELL)
    summary = ip.run_line_magic("ms_shadow", "")
    assert "model" in summary and "y" in summary
    assert "mindspore" in summary.names["model"].lower()
    assert type(ip.run_line_magic("ms_shadow", "y")).__module__.startswith("mindspore")
    with capture_output():
        ip.run_line_magic("ms_shadow", "--clear")
    from msmagic.parity_check import shadow_namespace

    assert [k for k in shadow_namespace() if not k.startswith("__")] == []
    assert len(ip.run_line_magic("ms_shadow", "")) == 0
