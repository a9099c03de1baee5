"""Helpers for the real-browser test: a throwaway JupyterLab server and a headless
Chromium driven by Playwright.

Nothing here downloads anything: Chromium is the system one (Debian ``chromium``,
``apt-get install -y chromium``; override the path with ``MSMAGIC_CHROMIUM``) and
Playwright is the pip package, used only as a driver (``playwright install`` is never
run). JupyterLab is started with no token, on a free loopback port, with its news feed,
update check and PyPI extension manager switched off, and with its config, data,
runtime, settings and workspace directories inside the test's temporary directory.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]
INSTALL_HINT = (
    "install chromium: apt-get install -y chromium (Debian package; never `playwright "
    "install`), and the test extras: pip install -c constraints.txt -e '.[test]' "
    "(playwright, jupyterlab); or point MSMAGIC_CHROMIUM at a Chromium binary"
)


def chromium_path() -> str:
    return os.environ.get("MSMAGIC_CHROMIUM") or DEFAULT_CHROMIUM


def missing_requirements() -> list[str]:
    """What the browser test lacks on this machine (empty when it can run)."""
    missing = []
    exe = chromium_path()
    if not (os.path.isfile(exe) and os.access(exe, os.X_OK)):
        missing.append(f"no Chromium executable at {exe}")
    for module in ("playwright", "jupyterlab"):
        try:
            __import__(module)
        except ImportError:
            missing.append(f"Python package {module!r} is not installed")
    return missing


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _write_json(path: Path, data) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1))


class LabServer:
    def __init__(self, proc: subprocess.Popen, url: str, log: Path) -> None:
        self.proc = proc
        self.url = url
        self.log = log

    def log_tail(self, n: int = 4000) -> str:
        try:
            return self.log.read_text(errors="replace")[-n:]
        except OSError:
            return ""


def _status_ok(url: str) -> bool:
    try:
        with urllib.request.urlopen(url + "api/status", timeout=2) as r:
            return r.status == 200
    except (urllib.error.URLError, OSError, ValueError):
        return False


def _stop(proc: subprocess.Popen, timeout: float = 15.0) -> None:
    """SIGINT twice (JupyterLab's clean shutdown: it stops its kernels), then SIGTERM,
    then SIGKILL of its process group, each after a bounded wait."""
    if proc.poll() is not None:
        return
    for sig, wait in ((signal.SIGINT, 0.5), (signal.SIGINT, timeout), (signal.SIGTERM, 5.0)):
        try:
            proc.send_signal(sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(wait)
            return
        except subprocess.TimeoutExpired:
            continue
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()
    proc.wait(5)


@contextmanager
def jupyterlab(root: Path, state: Path, startup_timeout: float = 60.0):
    """Run JupyterLab serving ``root``; yields a :class:`LabServer`. ``state`` holds
    its config/data/runtime/settings dirs and its log."""
    env = dict(os.environ)
    for name in ("config", "data", "runtime", "settings", "workspaces"):
        (state / name).mkdir(parents=True, exist_ok=True)
    env.update(
        JUPYTER_CONFIG_DIR=str(state / "config"),
        JUPYTER_DATA_DIR=str(state / "data"),
        JUPYTER_RUNTIME_DIR=str(state / "runtime"),
        JUPYTERLAB_SETTINGS_DIR=str(state / "settings"),
        JUPYTERLAB_WORKSPACES_DIR=str(state / "workspaces"),
        JUPYTER_PLATFORM_DIRS="1",
        # the kernel inherits this: the msmagic under test is this checkout's
        PYTHONPATH=os.pathsep.join([str(REPO)] + [p for p in [env.get("PYTHONPATH")] if p]),
        GLOG_v=env.get("GLOG_v", "3"),
        PYTHONUNBUFFERED="1",
    )
    # User settings: never ask about (or fetch) Jupyter news.
    _write_json(
        state / "settings" / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings",
        {"fetchNews": "false", "checkForUpdates": False},
    )
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    cmd = [
        sys.executable, "-m", "jupyterlab",
        "--no-browser",
        "--ServerApp.open_browser=False",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        "--IdentityProvider.token=",
        "--ServerApp.password=",
        "--ServerApp.disable_check_xsrf=True",
        f"--ServerApp.root_dir={root}",
        "--ServerApp.terminals_enabled=False",
        "--LabApp.news_url=None",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        "--LabApp.extension_manager=readonly",
    ]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-root")  # CI runs as root
    log = state / "jupyterlab.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            cmd, cwd=str(root), env=env, stdout=out, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL, start_new_session=True,
        )
    server = LabServer(proc, url, log)
    try:
        deadline = time.monotonic() + startup_timeout
        while not _status_ok(url):
            if proc.poll() is not None:
                raise RuntimeError(
                    f"JupyterLab exited with code {proc.returncode} before it answered "
                    f"{url}api/status; log:\n{server.log_tail()}"
                )
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"JupyterLab did not answer {url}api/status within {startup_timeout:.0f} s; "
                    f"log:\n{server.log_tail()}"
                )
            time.sleep(0.25)
        yield server
    finally:
        _stop(proc)


def save_copy(src: Path, dst: Path) -> None:
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dst)
