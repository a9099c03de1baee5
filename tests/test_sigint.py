"""Ctrl-C stays a KeyboardInterrupt while and after MindSpore runs: real SIGINTs to real
processes.

MindSpore installs a native SIGINT handler that sends the process SIGTERM (see
msmagic.signals). The control runs show that handler ending a plain script, and a parity
run without msmagic's SIGTERM handler, with status -15; under msmagic the same signal gives
KeyboardInterrupt, in a script using msmagic.parity() (after a run, and while MindSpore
executes a training loop), in terminal IPython under a pseudo-terminal and in a Jupyter
kernel (tests/test_kernel_interrupt.py).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from benchmarks import interrupt_parity

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PYTHON = sys.executable

TRAINING_CELL = """\
import torch
import torch.nn as nn
torch.manual_seed(0)
model = nn.Linear(3, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(4, 3)
for _ in range(3):
    loss = model(x).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
"""

# sleeps in Python after the MindSpore work, says when, and reports how SIGINT ended it
SLEEP_AND_REPORT = """
print("sleeping", flush=True)
try:
    time.sleep(45)
    print("slept through", flush=True)
except KeyboardInterrupt:
    print("KeyboardInterrupt caught", flush=True)
    sys.exit(0)
"""

PARITY_SCRIPT = f"""
import sys, time
import msmagic
report = msmagic.parity({TRAINING_CELL!r})
print("parity ok" if report.ok else report.summary(), flush=True)
{SLEEP_AND_REPORT}
"""

# the same MindSpore work without msmagic: MindSpore's handler is left in place
CONTROL_SCRIPT = f"""
import sys, time
import mindspore, numpy as np
net = mindspore.nn.Dense(3, 2)
opt = mindspore.nn.SGD(net.trainable_params(), 0.1)
x = mindspore.Tensor(np.ones((4, 3), np.float32))
grad = mindspore.value_and_grad(lambda x: (net(x) ** 2).mean(), None, net.trainable_params())
for _ in range(3):
    loss, grads = grad(x)
    opt(grads)
print(float(loss), flush=True)
{SLEEP_AND_REPORT}
"""


def _env():
    return dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""), GLOG_v="3")


def _interrupt_at(args: list, marker: str, delay: float, cwd, timeout: float) -> tuple[int, str]:
    """Run ``python *args``; once it prints the line ``marker``, wait ``delay`` s and send
    it SIGINT. Its exit status and output."""
    proc = subprocess.Popen([PYTHON, *args], cwd=cwd, env=_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines = []
    try:
        deadline = time.monotonic() + 120
        for line in proc.stdout:
            lines.append(line)
            if line.strip() == marker:
                time.sleep(delay)
                os.kill(proc.pid, signal.SIGINT)
                break
            assert time.monotonic() < deadline, "".join(lines)
        rest, _ = proc.communicate(timeout=timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode, "".join(lines) + rest


def _interrupt_while_sleeping(script: str, cwd) -> tuple[int, str]:
    """Run ``script``, send it SIGINT once it sleeps (after MindSpore's threads settled)."""
    return _interrupt_at(["-c", textwrap.dedent(script)], "sleeping", 0.5, cwd, 60)


def test_sigint_after_parity_in_a_script_is_a_keyboard_interrupt(tmp_path):
    status, out = _interrupt_while_sleeping(PARITY_SCRIPT, tmp_path)
    assert "parity ok" in out, out
    assert status == 0 and "KeyboardInterrupt caught" in out, (status, out)


INTERRUPTED_SCRIPT = """
import sys
import msmagic
cell = (
    "import time\\nimport torch\\nx = torch.ones(2) * 3\\n"
    "print('sleeping', flush=True)\\ntime.sleep(45)\\ny = x * 2\\n"
)
report = msmagic.parity(cell)
print("interrupted" if report.interrupted else "not interrupted", flush=True)
print("compared:", [(r.name, r.status) for r in report.rows], flush=True)
"""


def test_sigint_during_a_parity_run_stops_it_with_a_report(tmp_path):
    """SIGINT while the PyTorch side sleeps, after the MindSpore side ran a statement."""
    status, out = _interrupt_while_sleeping(INTERRUPTED_SCRIPT, tmp_path)
    assert status == 0, (status, out)
    assert "\ninterrupted\n" in out and "compared: [('x', 'match')]" in out, out


def test_control_mindspore_alone_is_killed_by_sigint(tmp_path):
    """What the test above guards against: without msmagic, SIGINT after MindSpore ran
    ends the process by SIGTERM instead of raising KeyboardInterrupt."""
    status, out = _interrupt_while_sleeping(CONTROL_SCRIPT, tmp_path)
    assert "sleeping" in out, out
    assert status == -signal.SIGTERM and "KeyboardInterrupt caught" not in out, (status, out)


def _c_sigint_handler() -> int:
    """The address of the SIGINT handler installed at the C level (Linux, glibc:
    ``sa_handler`` is the first field of ``struct sigaction``)."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    buffer = ctypes.create_string_buffer(512)  # larger than any struct sigaction
    assert libc.sigaction(signal.SIGINT, None, buffer) == 0
    return ctypes.c_void_p.from_buffer(buffer).value or 0


PLAIN_MINDSPORE_CELL = """\
import mindspore, numpy as np
net = mindspore.nn.Dense(3, 2)
opt = mindspore.nn.SGD(net.trainable_params(), 0.1)
grad = mindspore.value_and_grad(lambda x: (net(x) ** 2).mean(), None, net.trainable_params())
loss, grads = grad(mindspore.Tensor(np.ones((4, 3), np.float32)))
opt(grads)
float(loss)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads struct sigaction (Linux)")
def test_the_extension_restores_python_handler_after_a_plain_mindspore_cell(tmp_path, monkeypatch):
    from IPython.core.interactiveshell import InteractiveShell

    monkeypatch.chdir(tmp_path)
    signal.signal(signal.SIGINT, signal.getsignal(signal.SIGINT))
    python_handler = _c_sigint_handler()
    ip = InteractiveShell.instance()
    try:
        assert ip.run_cell(PLAIN_MINDSPORE_CELL).success
        # without the extension, MindSpore's handler is left in place
        assert _c_sigint_handler() != python_handler
        ip.run_line_magic("load_ext", "msmagic")
        assert ip.run_cell(PLAIN_MINDSPORE_CELL).success
        assert _c_sigint_handler() == python_handler
        ip.run_line_magic("unload_ext", "msmagic")
        assert ip.run_cell(PLAIN_MINDSPORE_CELL).success
        assert _c_sigint_handler() != python_handler  # the callback left with the extension
    finally:
        signal.signal(signal.SIGINT, signal.getsignal(signal.SIGINT))
        ip.reset(new_session=False)


def _have_pty() -> bool:
    try:
        import pexpect  # noqa: F401

        master, slave = os.openpty()
    except (ImportError, OSError, AttributeError):
        return False
    os.close(master)
    os.close(slave)
    return True


@pytest.mark.skipif(not _have_pty(), reason="needs a pseudo-terminal and pexpect")
def test_terminal_ipython_survives_ctrl_c_after_parity(tmp_path):
    import pexpect

    child = pexpect.spawn(
        PYTHON, ["-m", "IPython", "--simple-prompt", "--no-banner", "--colors=NoColor",
                 "--HistoryManager.enabled=False"],
        cwd=str(tmp_path), env=_env(), encoding="utf-8", timeout=90, dimensions=(50, 200),
    )
    try:
        child.expect(r"In \[1\]: ")
        child.sendline("%load_ext msmagic")
        child.expect(r"In \[2\]: ")
        lines = ["%%ms_parity -o rep"] + TRAINING_CELL.splitlines()
        for line in lines:
            child.sendline(line)
        child.sendline("")  # ends the indented block
        child.sendline("")  # ends the cell
        child.expect(r"In \[3\]: ")
        child.sendline("print('ok' if rep.ok else rep.summary())")
        child.expect(r"\r\nok\r\n")
        child.expect(r"In \[4\]: ")
        # a plain cell that runs MindSpore too (the extension restores the handler after it)
        child.sendline("import mindspore; _ = mindspore.ops.ones(2).asnumpy()")
        child.expect(r"In \[5\]: ")
        child.sendline("import time; print('sleeping'); time.sleep(45)")
        child.expect(r"\r\nsleeping\r\n")
        time.sleep(0.5)
        child.sendintr()  # Ctrl-C from the terminal: SIGINT to IPython
        child.expect("KeyboardInterrupt")
        child.expect(r"In \[6\]: ")
        child.sendline("print(1+1)")
        child.expect(r"\r\n2\r\n")
        # Ctrl-C while a plain cell's MindSpore loop executes (MindSpore's handler in place)
        child.expect(r"In \[7\]: ")
        child.sendline("print('looping'); x = mindspore.ops.ones((64, 64))")
        child.sendline("for _ in range(10**7): x = mindspore.ops.matmul(x, x) * 0.01")
        child.sendline("")
        child.expect(r"\r\nlooping\r\n")
        child.expect(r"In \[8\]: ")
        time.sleep(1.5)
        child.sendintr()
        child.expect("KeyboardInterrupt")
        child.expect(r"In \[9\]: ")
        child.sendline("print(float(mindspore.ops.ones(3).sum()))")  # MindSpore still computes
        child.expect(r"\r\n3\.0\r\n")
        assert child.isalive()
        child.sendline("exit")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0 and child.signalstatus is None


# A parity run whose last statement is a training loop that ends after 21 steps on the
# PyTorch side and runs on (100,000 steps) on the MindSpore side. ``_run_side`` is wrapped to
# say on stdout when the MindSpore side of that loop starts, so the signal below lands
# while MindSpore executes; the signal itself is real.
LOOP_CELL = interrupt_parity.CELL

# the benchmark's script: ``_run_side`` announces the MindSpore side of the loop on stdout
DURING_MINDSPORE_SCRIPT = interrupt_parity.SCRIPT


def _interrupt_during_mindspore(mode: str, delay: float, cwd) -> tuple[int, str]:
    """SIGINT ``delay`` s into the MindSpore side of the loop."""
    return _interrupt_at(["-c", DURING_MINDSPORE_SCRIPT, mode], "mindspore side of the loop",
                         delay, cwd, 120)


@pytest.mark.timeout(600)
def test_sigint_while_mindspore_executes_stops_the_parity_run_with_a_report(tmp_path):
    """Three real SIGINTs at different points of MindSpore's training loop: each run
    stops with a report of what was compared before the loop (the model's parameters were
    copied across, not compared); none kills the process."""
    for delay in (0.3, 1.1, 2.4):
        status, out = _interrupt_during_mindspore("msmagic", delay, tmp_path)
        assert status == 0, (delay, status, out)
        assert "outcome: report, interrupted\n" in out, (delay, out)
        # the statements before the loop were compared on both sides
        assert "compared: ['x', 'y']" in out, out


@pytest.mark.timeout(300)
def test_control_sigint_while_mindspore_executes_kills_a_run_without_the_sigterm_handler(tmp_path):
    """The same signal with msmagic's SIGTERM handler left out ends the process (-15):
    what the test above guards against."""
    status, out = _interrupt_during_mindspore("control", 1.1, tmp_path)
    assert "mindspore side of the loop" in out, out
    assert status == -signal.SIGTERM and "outcome:" not in out, (status, out)


EXTERNAL_SIGTERM_SCRIPT = """
import sys, time
import mindspore, numpy as np
from msmagic.signals import interrupts_from_mindspore, restore_sigint
net = mindspore.nn.Dense(3, 2)
_ = net(mindspore.Tensor(np.ones((4, 3), np.float32))).asnumpy()
restore_sigint()
with interrupts_from_mindspore() as active:
    print("sleeping" if active else "not active", flush=True)
    try:
        time.sleep(45)
        print("slept through", flush=True)
    except KeyboardInterrupt:
        print("KeyboardInterrupt caught", flush=True)
"""


def test_a_sigterm_from_outside_still_ends_the_process(tmp_path):
    """While msmagic's SIGTERM handler is active and Python's SIGINT handler is in place,
    a SIGTERM is someone else's: the process ends as it would have without msmagic."""
    proc = subprocess.Popen([PYTHON, "-c", EXTERNAL_SIGTERM_SCRIPT], cwd=tmp_path, env=_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        line = proc.stdout.readline()
        assert line.strip() == "sleeping", line
        time.sleep(0.3)
        proc.terminate()
        out, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == -signal.SIGTERM and "KeyboardInterrupt" not in out, (proc.returncode, out)


def test_sigint_owner_names_the_library_that_handles_sigint():
    from msmagic.signals import sigint_owner

    if not sys.platform.startswith("linux"):
        pytest.skip("reads struct sigaction (Linux)")
    signal.signal(signal.SIGINT, signal.getsignal(signal.SIGINT))
    owner = sigint_owner()
    assert owner is not None and "python" in owner.lower(), owner
