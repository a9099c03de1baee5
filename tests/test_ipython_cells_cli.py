"""The CLI, in a subprocess, ports every variant of the cell shapes IPython runs
(``tests/fast/test_ipython_cells.py``) to code IPython runs, with the torch statements
rewritten and every other line byte for byte; porting its output again changes nothing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.fast.test_ipython_cells import VARIANTS, assert_ported

ROOT = Path(__file__).resolve().parents[1]


def _cli(*argv):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "msmagic", "port", *map(str, argv), "--quiet"],
                          capture_output=True, env=env, timeout=300)


def test_cli_ports_every_variant_and_the_port_again_changes_nothing(tmp_path):
    src, out, again = tmp_path / "cells", tmp_path / "out", tmp_path / "again"
    src.mkdir()
    names = {}  # file -> the variant it holds
    for n, (ident, cell, _, _) in enumerate(VARIANTS):
        if ident.startswith("first statement indented more (CR)"):
            continue  # IPython's reading of a CR cell: a .py file is read by Python, which refuses it
        names[f"cell_{n:03d}.py"] = ident
        (src / f"cell_{n:03d}.py").write_bytes(cell.encode("utf-8"))
    done = _cli(src, "-o", out)
    assert done.returncode == 0, done.stderr.decode()
    for name, ident in names.items():
        source = (src / name).read_bytes().decode("utf-8")
        code = (out / name).read_bytes().decode("utf-8")
        assert_ported(source, code)
    done = _cli(out, "-o", again)
    assert done.returncode == 0, done.stderr.decode()
    for name in names:
        assert (again / name).read_bytes() == (out / name).read_bytes(), names[name]
