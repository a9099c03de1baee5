"""Kernel -> Interrupt during a parity run, in a real Jupyter kernel.

The test starts an IPython kernel with jupyter_client, runs a ``%%ms_parity`` cell whose
training loop runs on while MindSpore executes it, and interrupts the kernel the way
JupyterLab's Interrupt button does (``KernelManager.interrupt_kernel``: a real SIGINT).
MindSpore's native SIGINT handler would end the kernel ("Kernel Restarting... appears to
have died"); with msmagic the cell fails with KeyboardInterrupt, the partial report shows,
and the kernel goes on computing with both frameworks. A plain cell's MindSpore loop is
interrupted the same way.
"""

from __future__ import annotations

import os
import queue
import sys
import time

import pytest

from tests.test_sigint import LOOP_CELL, ROOT

pytestmark = pytest.mark.timeout(600)

jupyter_client = pytest.importorskip("jupyter_client")
pytest.importorskip("ipykernel")

# says (with a folder) when the MindSpore side of the loop starts, so the interrupt lands
# while MindSpore executes; the signal itself is the real one. A folder, not a file: what
# the MindSpore side writes goes to parity's shadow folder, but folders are made for real
ANNOUNCE = """
import pathlib
from msmagic.parity_check import run as _R
_original_run_side = _R._run_side

def _announced(code, *args):
    if "for step in" in code and "mindspore" in args:
        pathlib.Path("mindspore-side-started").mkdir(exist_ok=True)
    return _original_run_side(code, *args)

_R._run_side = _announced
"""

PLAIN_LOOP = """\
import pathlib, mindspore
x = mindspore.ops.ones((64, 64))
pathlib.Path("plain-loop-started").touch()
for _ in range(10**7):
    x = mindspore.ops.matmul(x, x) * 0.01
"""


class Kernel:
    """A started kernel and its client; ``run`` executes a cell and collects its output."""

    def __init__(self, cwd) -> None:
        env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""),
                   GLOG_v="3")
        self.manager = jupyter_client.KernelManager(kernel_name="python3")
        self.manager.start_kernel(cwd=str(cwd), env=env)
        self.client = self.manager.client()
        self.client.start_channels()
        self.client.wait_for_ready(timeout=120)

    def submit(self, code: str) -> str:
        return self.client.execute(code, store_history=True)

    def collect(self, msg_id: str, timeout: float = 300) -> tuple[dict, list[dict]]:
        """The execute_reply content and the iopub messages of ``msg_id``."""
        deadline = time.monotonic() + timeout
        outputs = []
        while True:
            remaining = deadline - time.monotonic()
            assert remaining > 0, f"no idle status within {timeout} s: {outputs}"
            try:
                msg = self.client.get_iopub_msg(timeout=remaining)
            except queue.Empty:
                continue
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
                break
            outputs.append(msg)
        # replies to other requests may come first: wait_for_ready repeats its
        # kernel_info request while a slow kernel starts, and each one is answered
        while True:
            reply = self.client.get_shell_msg(timeout=60)
            if reply["parent_header"].get("msg_id") == msg_id:
                return reply["content"], outputs

    def run(self, code: str, timeout: float = 300):
        return self.collect(self.submit(code), timeout)

    def close(self) -> None:
        self.client.stop_channels()
        self.manager.shutdown_kernel(now=True)


def _text(outputs: list[dict]) -> str:
    parts = []
    for msg in outputs:
        content = msg["content"]
        if msg["msg_type"] == "stream":
            parts.append(content["text"])
        elif msg["msg_type"] in ("display_data", "execute_result", "update_display_data"):
            parts.append(content["data"].get("text/plain", ""))
            parts.append(content["data"].get("text/html", ""))
        elif msg["msg_type"] == "error":
            parts.append(content["ename"])
    return "\n".join(parts)


def _wait_for(path, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert time.monotonic() < deadline, f"{path.name} never appeared"
        time.sleep(0.05)


@pytest.fixture()
def kernel(tmp_path):
    k = Kernel(tmp_path)
    try:
        yield k
    finally:
        k.close()


def test_interrupting_a_parity_run_keeps_the_kernel_and_shows_the_partial_report(kernel, tmp_path):
    reply, _ = kernel.run("%load_ext msmagic\n" + ANNOUNCE)
    assert reply["status"] == "ok", reply
    msg_id = kernel.submit("%%ms_parity -o rep\n" + LOOP_CELL)
    _wait_for(tmp_path / "mindspore-side-started")
    time.sleep(1.0)  # MindSpore is in the middle of its training steps
    kernel.manager.interrupt_kernel()
    reply, outputs = kernel.collect(msg_id)
    # the cell failed as a plain cell fails on Ctrl-C, and said what it compared
    assert reply["status"] == "error" and reply["ename"] == "KeyboardInterrupt", reply
    shown = _text(outputs)
    assert "interrupted" in shown.lower(), shown
    assert kernel.manager.is_alive()
    # the same kernel goes on: the report object, and both frameworks still compute
    reply, outputs = kernel.run(
        "import torch, mindspore\n"
        "print(rep.interrupted, sorted(r.name for r in rep.rows if r.status == 'match'))\n"
        "print(float(torch.ones(3).sum()), float(mindspore.ops.ones(3).sum()))"
    )
    assert reply["status"] == "ok", reply
    assert "True ['x', 'y']\n3.0 3.0\n" in _text(outputs), _text(outputs)


def test_interrupting_a_plain_mindspore_loop_keeps_the_kernel(kernel, tmp_path):
    reply, _ = kernel.run("%load_ext msmagic")
    assert reply["status"] == "ok", reply
    msg_id = kernel.submit(PLAIN_LOOP)
    _wait_for(tmp_path / "plain-loop-started")
    time.sleep(1.0)
    kernel.manager.interrupt_kernel()
    reply, _ = kernel.collect(msg_id)
    assert reply["status"] == "error" and reply["ename"] == "KeyboardInterrupt", reply
    assert kernel.manager.is_alive()
    reply, outputs = kernel.run("print(float(mindspore.ops.ones(3).sum()))")
    assert reply["status"] == "ok" and "3.0" in _text(outputs), (reply, _text(outputs))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="MindSpore's handler (Linux)")
def test_control_without_the_extension_the_interrupt_kills_the_kernel(kernel, tmp_path):
    """What the tests above guard against: the same interrupt of a plain MindSpore loop
    without msmagic ends the kernel process."""
    msg_id = kernel.submit(PLAIN_LOOP)
    _wait_for(tmp_path / "plain-loop-started")
    time.sleep(1.0)
    kernel.manager.interrupt_kernel()
    deadline = time.monotonic() + 60
    while kernel.manager.is_alive() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not kernel.manager.is_alive(), msg_id
