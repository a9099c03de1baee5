"""Ctrl-C stays a KeyboardInterrupt after MindSpore ran: real SIGINTs to real processes.

MindSpore installs a native SIGINT handler that sends the process SIGTERM (see
msmagic.signals). The control run shows that handler ending a plain script with
status -15; under msmagic the same signal gives KeyboardInterrupt, in a script using
msmagic.parity() and in terminal IPython under a pseudo-terminal.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

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


def _interrupt_while_sleeping(script: str, cwd) -> tuple[int, str]:
    """Run ``script``, send it SIGINT once it sleeps; its exit status and output."""
    proc = subprocess.Popen([PYTHON, "-c", textwrap.dedent(script)], cwd=cwd, env=_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines = []
    try:
        deadline = time.monotonic() + 120
        for line in proc.stdout:
            lines.append(line)
            if line.strip() == "sleeping":
                time.sleep(0.5)  # inside time.sleep, after MindSpore's threads settled
                os.kill(proc.pid, signal.SIGINT)
                break
            assert time.monotonic() < deadline, "".join(lines)
        rest, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode, "".join(lines) + rest


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
        assert child.isalive()
        child.sendline("exit")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0 and child.signalstatus is None
