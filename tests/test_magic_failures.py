"""%%ms_parity fails when the plain cell would have failed, runs top-level ``await`` like a
plain cell, and refuses bad option values up front with one line.

The notebook tests run real notebooks in a real kernel through nbclient, as CI
(nbval, papermill) would; the others drive IPython's InteractiveShell in this process.
"""

from __future__ import annotations

import math
import os

import nbformat
import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output

from msmagic.parity_check import ParityOptions, ParityReport
from msmagic.parity_check.options import MAX_SEED, OptionError

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

TORCH_FAILS = "import torch\nx = torch.ones(2)\ny = x.reshape(3)\n"
# the port of this cell fails on the MindSpore side only (MindSpore has no `no_such_op`)
MINDSPORE_FAILS = "import torch\nx = torch.ones(2)\n"
MINDSPORE_CODE = "import mindspore\nx = mindspore.ops.no_such_op(2)\n"


@pytest.fixture
def ip(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # MindSpore writes rank_0/ into the working directory
    shell = InteractiveShell.instance()
    shell.reset(new_session=False)
    shell.run_line_magic("load_ext", "msmagic")
    yield shell
    shell.run_line_magic("unload_ext", "msmagic")
    shell.reset(new_session=False)
    from msmagic.parity_check import shadow_namespace

    shadow = shadow_namespace()
    kept = {k: shadow[k] for k in ("__builtins__", "__name__") if k in shadow}
    shadow.clear()
    shadow.update(kept)


# ----------------------------------------------------------------------------- failures


def test_pytorch_error_shows_the_report_then_fails_the_cell(ip):
    with capture_output() as c:
        result = ip.run_cell(f"%%ms_parity -o rep\n{TORCH_FAILS}")
    assert type(result.error_in_exec) is RuntimeError
    assert "shape '[3]' is invalid for input of size 2" in str(result.error_in_exec)
    assert result.result is None  # no Out[] after an error
    rep = ip.user_ns.pop("rep")
    assert rep.torch_error.type == "RuntimeError" and rep.torch_error.statement == 2
    # the report is shown, and the error once, from the cell's own line, not msmagic's
    assert len(c.outputs) == 1 and "msm-error-pytorch" in c.outputs[0].data["text/html"]
    shown = c.stdout + c.stderr
    assert shown.count("Traceback") == 1
    assert "y = x.reshape(3)" in shown and "PyTorch cell>" in shown
    assert "parity_check" not in shown and "magics.py" not in shown
    # the PyTorch side ran in the user's namespace up to the failing line, as a plain cell
    assert ip.user_ns["x"].tolist() == [1.0, 1.0] and "y" not in ip.user_ns


def test_sys_exit_on_the_pytorch_side_fails_the_cell_like_a_plain_cell(ip):
    with capture_output(), pytest.warns(UserWarning, match="To exit"):
        plain = ip.run_cell("import sys\nsys.exit(3)\n")
        result = ip.run_cell("%%ms_parity -o rep\nimport sys\nimport torch\nx = torch.ones(2)\nsys.exit(3)\n")
    assert type(plain.error_in_exec) is SystemExit
    assert type(result.error_in_exec) is SystemExit and result.error_in_exec.code == 3
    assert ip.user_ns.pop("rep").torch_error.type == "SystemExit"


def test_a_mindspore_only_failure_is_a_report_not_an_error(ip):
    ip.user_ns["ms_code"] = MINDSPORE_CODE
    with capture_output() as c:
        result = ip.run_cell(f"%%ms_parity --against ms_code -o rep\n{MINDSPORE_FAILS}")
    assert result.error_in_exec is None and result.success
    rep = ip.user_ns.pop("rep")
    assert rep.torch_error is None and rep.ms_error.type == "AttributeError"
    assert "msm-error-mindspore" in c.outputs[0].data["text/html"]
    assert "Traceback" not in c.stdout + c.stderr


def _notebook(cells):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(src) for src in cells]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    return nb


def _execute(nb, folder):
    from nbclient import NotebookClient

    client = NotebookClient(nb, timeout=120, kernel_name="python3", allow_errors=False,
                            resources={"metadata": {"path": str(folder)}})
    return client.execute()


def test_nbclient_stops_at_a_failing_parity_cell(tmp_path, monkeypatch):
    pytest.importorskip("nbclient")
    from nbclient.exceptions import CellExecutionError

    # the kernel imports msmagic from this checkout
    monkeypatch.setenv("PYTHONPATH", ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    nb = _notebook([
        "%load_ext msmagic",
        f"ms_code = {MINDSPORE_CODE!r}",
        f"%%ms_parity --against ms_code\n{MINDSPORE_FAILS}",
        "%%ms_parity -o awaited\nimport asyncio\nimport torch\nawait asyncio.sleep(0)\nz = torch.ones(2)\n",
        "open('after_mindspore_failure.txt', 'w').write(f'ran {awaited.ok}')",
        f"%%ms_parity\n{TORCH_FAILS}",
        "open('after_pytorch_failure.txt', 'w').write('ran')",
    ])
    with pytest.raises(CellExecutionError) as info:
        _execute(nb, tmp_path)
    assert info.value.ename == "RuntimeError"
    assert "shape '[3]' is invalid for input of size 2" in info.value.evalue
    # a MindSpore-only failure is a report: the run went on past it (and top-level await
    # ran inside the kernel's event loop) ...
    assert (tmp_path / "after_mindspore_failure.txt").read_text() == "ran True"
    # ... and stopped at the cell whose PyTorch side raised
    assert not (tmp_path / "after_pytorch_failure.txt").exists()
    errors = [o for o in nb.cells[5].outputs if o.output_type == "error"]
    assert [e.ename for e in errors] == ["RuntimeError"]
    assert any("msm-parity" in o.get("data", {}).get("text/html", "") for o in nb.cells[5].outputs)
    assert not [o for o in nb.cells[2].outputs if o.output_type == "error"]


def test_nbclient_stops_at_sys_exit_in_a_parity_cell(tmp_path, monkeypatch):
    pytest.importorskip("nbclient")
    from nbclient.exceptions import CellExecutionError

    # the kernel imports msmagic from this checkout
    monkeypatch.setenv("PYTHONPATH", ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    nb = _notebook([
        "%load_ext msmagic",
        "%%ms_parity\nimport sys\nimport torch\nx = torch.ones(2)\nsys.exit(1)\n",
        "open('after_exit.txt', 'w').write('ran')",
    ])
    with pytest.raises(CellExecutionError) as info:
        _execute(nb, tmp_path)
    assert info.value.ename == "SystemExit"
    assert not (tmp_path / "after_exit.txt").exists()


# ----------------------------------------------------------------------------- --strict

# the MindSpore code computes twice PyTorch's x: the cell diverges at statement 2
MINDSPORE_DIFFERS = "import mindspore\nx = mindspore.ops.ones(2) * 2\n"
STRICT_DIVERGED = ("%%ms_parity strict check failed: 1 statement diverged; 1 of 1 compared values "
                   "differ; first after statement 2 (line 2): x")


def test_strict_fails_a_diverging_cell_after_the_report(ip):
    ip.user_ns["ms_code"] = MINDSPORE_DIFFERS
    with capture_output() as c:
        result = ip.run_cell(f"%%ms_parity --against ms_code --strict -o rep\n{MINDSPORE_FAILS}")
    assert type(result.error_in_exec) is UsageError
    assert str(result.error_in_exec) == STRICT_DIVERGED
    assert not ip.user_ns.pop("rep").ok
    # the report is shown, then the one line, with no traceback
    assert len(c.outputs) == 1 and "msm-parity" in c.outputs[0].data["text/html"]
    assert "Traceback" not in c.stdout + c.stderr
    assert ip.user_ns["x"].tolist() == [1.0, 1.0]  # the PyTorch side ran as a plain cell
    with capture_output():
        plain = ip.run_cell(f"%%ms_parity --against ms_code\n{MINDSPORE_FAILS}")
    assert plain.error_in_exec is None and plain.success


def test_strict_fails_a_mindspore_side_error(ip):
    ip.user_ns["ms_code"] = MINDSPORE_CODE
    with capture_output() as c:
        result = ip.run_cell(f"%%ms_parity --against ms_code --strict\n{MINDSPORE_FAILS}")
    assert type(result.error_in_exec) is UsageError
    assert str(result.error_in_exec).startswith(
        "%%ms_parity strict check failed: 1 statement failed on the MindSpore side (statement 2, "
        "line 2: AttributeError: ")
    assert "no_such_op" in str(result.error_in_exec) and "\n" not in str(result.error_in_exec)
    assert "msm-error-mindspore" in c.outputs[0].data["text/html"]
    assert "Traceback" not in c.stdout + c.stderr


def test_strict_fails_a_side_stopped_by_timeout(ip):
    cell = "import time\nimport torch\nx = torch.ones(2)\ntime.sleep(30)\n"
    with capture_output():
        result = ip.run_cell(f"%%ms_parity --strict --timeout 1 -o rep\n{cell}")
    assert ip.user_ns.pop("rep").timed_out == "PyTorch"
    assert str(result.error_in_exec) == "%%ms_parity strict check failed: the PyTorch side ran past --timeout"


# the port flags the call it keeps as PyTorch (MindSpore has no airy_ai), which never runs
FLAGGED_MATCHES = "import torch\ndef f(t):\n    return torch.special.airy_ai(t)\nx = torch.ones(2)\n"


def test_strict_from_config_and_no_strict_for_one_cell(ip):
    ip.user_ns["ms_code"] = MINDSPORE_DIFFERS
    ip.run_line_magic("config", "MsMagic.strict = True")
    with capture_output():
        diverged = ip.run_cell(f"%%ms_parity --against ms_code\n{MINDSPORE_FAILS}")
        exempt = ip.run_cell(f"%%ms_parity --against ms_code --no-strict\n{MINDSPORE_FAILS}")
        flagged = ip.run_cell(f"%%ms_parity -o rep\n{FLAGGED_MATCHES}")
    assert str(diverged.error_in_exec) == STRICT_DIVERGED
    assert exempt.error_in_exec is None
    rep = ip.user_ns.pop("rep")
    assert [f.api for f in rep.port.unsupported] == ["torch.special.airy_ai"]
    assert flagged.error_in_exec is None and rep.ok and rep.row("x").status == "match"


def test_nbclient_fails_a_diverging_cell_under_strict_only(tmp_path, monkeypatch):
    pytest.importorskip("nbclient")
    from nbclient.exceptions import CellExecutionError

    # the kernel imports msmagic from this checkout
    monkeypatch.setenv("PYTHONPATH", ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    diverging = f"%%ms_parity --against ms_code\n{MINDSPORE_FAILS}"
    nb = _notebook([
        "%load_ext msmagic",
        f"ms_code = {MINDSPORE_DIFFERS!r}",
        diverging,
        "%config MsMagic.strict = True",
        "%%ms_parity\nimport torch\nz = torch.ones(2)\n",
        "open('before_strict_failure.txt', 'w').write('ran')",
        diverging,
        "open('after_strict_failure.txt', 'w').write('ran')",
    ])
    with pytest.raises(CellExecutionError) as info:
        _execute(nb, tmp_path)
    assert info.value.ename == "UsageError"
    assert info.value.evalue == STRICT_DIVERGED
    # without --strict the diverging cell passed; the matching cell passed under it ...
    assert not [o for o in nb.cells[2].outputs if o.output_type == "error"]
    assert (tmp_path / "before_strict_failure.txt").read_text() == "ran"
    # ... and the run stopped at the diverging cell, its report shown
    assert not (tmp_path / "after_strict_failure.txt").exists()
    assert any("msm-parity" in o.get("data", {}).get("text/html", "") for o in nb.cells[6].outputs)


# ----------------------------------------------------------------------------- await


def test_top_level_await_runs_on_both_sides(ip):
    cell = "import asyncio\nimport torch\nawait asyncio.sleep(0)\nx = torch.ones(2)\n"
    with capture_output():
        plain = ip.run_cell(cell)
        result = ip.run_cell(f"%%ms_parity -o rep\n{cell}")
    assert plain.error_in_exec is None
    assert result.error_in_exec is None
    rep = ip.user_ns.pop("rep")
    assert rep.torch_error is None and rep.ms_error is None, rep.summary()
    assert [r.name for r in rep.rows] == ["x"] and rep.ok


def test_an_awaited_last_expression_is_the_cells_value(ip):
    cell = (
        "import asyncio\nimport torch\n"
        "async def make(n):\n    await asyncio.sleep(0.01)\n    return torch.arange(n) * 2.0\n"
        "await make(3)\n"
    )
    with capture_output():
        result = ip.run_cell(f"%%ms_parity -o rep\n{cell}")
    assert result.error_in_exec is None
    assert result.result.tolist() == [0.0, 2.0, 4.0]
    rep = ip.user_ns.pop("rep")
    assert rep.row("<cell output>").status == "match", rep.summary()


def test_await_works_while_an_event_loop_runs_in_the_thread(ip):
    """In a Jupyter kernel the magic is called from inside the kernel's running loop."""
    import asyncio

    cell = "import asyncio\nimport torch\nawait asyncio.sleep(0)\nx = torch.ones(3)\n"

    async def in_kernel_loop():
        with capture_output():
            return ip.run_cell(f"%%ms_parity -o rep\n{cell}")

    result = asyncio.run(in_kernel_loop())
    assert result.error_in_exec is None
    rep = ip.user_ns.pop("rep")
    assert rep.ok and rep.row("x").torch_shape == (3,), rep.summary()


def test_await_in_the_api():
    import msmagic

    rep = msmagic.parity("import asyncio\nimport torch\nawait asyncio.sleep(0)\nx = torch.zeros(2)\n")
    assert rep.torch_error is None and rep.ms_error is None and rep.ok, rep.summary()


# ----------------------------------------------------------------------------- options


def test_timeout_inf_means_no_limit():
    assert ParityOptions(timeout=math.inf).timeout is None
    assert ParityOptions(timeout=float("inf")) == ParityOptions()
    assert ParityOptions(timeout=2).timeout == 2.0


@pytest.mark.parametrize(
    "timeout, message",
    [
        (float("nan"), "timeout must be a positive number of seconds, not nan"),
        (-1, "timeout must be a positive number of seconds, not -1"),
        (-math.inf, "timeout must be a positive number of seconds, not -inf"),
        (0, "timeout must be a positive number of seconds, not 0"),
        (1e300, "timeout must be at most 1e+09 seconds (inf for no limit), not 1e+300"),
        ("5", "timeout must be a positive number of seconds, not '5'"),
    ],
)
def test_bad_timeouts_are_refused(timeout, message):
    with pytest.raises(OptionError) as info:
        ParityOptions(timeout=timeout)
    assert str(info.value) == message


def test_seed_range():
    import numpy as np

    assert ParityOptions(seed=0).seed == 0
    assert ParityOptions(seed=MAX_SEED).seed == 2**32 - 1
    assert ParityOptions(seed=np.int64(7)).seed == 7 and type(ParityOptions(seed=np.int64(7)).seed) is int
    for bad in (-5, 2**32, -(2**70)):
        with pytest.raises(OptionError, match=rf"^seed must be from 0 to 4294967295 \(2\*\*32 - 1\), not {bad}$"):
            ParityOptions(seed=bad)
    with pytest.raises(OptionError, match=r"^seed must be an integer, not 1.5$"):
        ParityOptions(seed=1.5)


def test_api_refuses_a_negative_seed_before_running():
    import msmagic

    with pytest.raises(OptionError, match="seed must be from 0 to 4294967295"):
        msmagic.parity("x = 1\n", seed=-5)


def test_the_largest_seed_runs(ip):
    with capture_output():
        result = ip.run_cell(f"%%ms_parity --seed {MAX_SEED} -o rep\nimport torch\nx = torch.randn(3)\n")
    assert result.error_in_exec is None
    assert ip.user_ns.pop("rep").ok


@pytest.mark.parametrize(
    "line, message",
    [
        ("--timeout inf -o rep", None),
        ("--timeout nan", "--timeout must be a positive number of seconds, not nan"),
        ("--timeout -3", "--timeout must be a positive number of seconds, not -3.0"),
        ("--timeout 1e999", None),  # argparse reads 1e999 as inf: no limit
        ("--timeout 1e300", "--timeout must be at most 1e+09 seconds (inf for no limit), not 1e+300"),
        ("--seed -5", "--seed must be from 0 to 4294967295 (2**32 - 1), not -5"),
        ("--seed 4294967296", "--seed must be from 0 to 4294967295 (2**32 - 1), not 4294967296"),
        ('--against "x', "cannot read the options '--against \"x': no closing quotation"),
        ("--against 'x", "cannot read the options \"--against 'x\": no closing quotation"),
    ],
)
def test_option_lines(ip, line, message):
    with capture_output() as c:
        result = ip.run_cell(f"%%ms_parity {line}\nimport torch\nx = torch.ones(2)\n")
    if message is None:
        assert result.error_in_exec is None
        if "-o rep" in line:
            assert isinstance(ip.user_ns.pop("rep"), ParityReport)
        return
    assert isinstance(result.error_in_exec, UsageError)
    assert str(result.error_in_exec) == message
    # one line, no traceback, and nothing ran
    assert c.stderr.strip() == f"UsageError: {message}" and "Traceback" not in c.stdout
    assert "x" not in ip.user_ns


def test_unclosed_quotes_in_the_other_magics(ip):
    for kind, name in (("cell", "ms_port"), ("line", "ms_shadow")):
        with capture_output() as c:
            cell = '%%ms_port -o "r\nx = 1\n' if kind == "cell" else '%ms_shadow "r\n'
            result = ip.run_cell(cell)
        assert isinstance(result.error_in_exec, UsageError), name
        assert "no closing quotation" in str(result.error_in_exec)
        assert len(c.stderr.strip().splitlines()) == 1 and "Traceback" not in c.stdout + c.stderr


def test_an_unclosed_quote_in_a_capture_line_below_parity(ip):
    with capture_output():
        result = ip.run_cell('%%ms_parity\n%%capture "out\nimport torch\nx = torch.ones(2)\n')
    assert isinstance(result.error_in_exec, UsageError)
    assert str(result.error_in_exec).startswith('%%capture "out: cannot read the options')
