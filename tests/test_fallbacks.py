"""Where the ipywidgets view is not rendered, msmagic's results still show usefully.

* nbconvert HTML export: every output is text/plain + text/html, never a widget view,
  so there is no widget state for nbconvert (or a reopened notebook) to miss.
* The optional widget (``make_widget``) uses only core ipywidgets models and loads nothing.
* Terminal IPython: text/plain is a coloured unified diff plus the findings, and plain
  when colours are off or NO_COLOR is set.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import msmagic
from msmagic.render import HTML, TEXT
from msmagic.render.text import render_text
from msmagic.render.widget import make_widget

ROOT = Path(__file__).resolve().parent.parent
ANSI = re.compile(r"\x1b\[[0-9;]*m")
CORE_MODULES = {"@jupyter-widgets/controls", "@jupyter-widgets/base"}

PORT_CELL = """\
%%ms_port
import torch
import torch.nn as nn
layer = nn.Linear(3, 4)
y = torch.unsupported_thing(1)"""

PARITY_CELL = """\
%%ms_parity
import torch
import torch.nn as nn
torch.manual_seed(0)
layer = nn.Linear(3, 4)
x = torch.ones(2, 3)
y = layer(x)"""

SOURCE = "import torch\nimport torch.nn as nn\nm = nn.Linear(3, 4)\ny = torch.unsupported_thing(1)\n"


# --------------------------------------------------------------------------- nbconvert


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    """A notebook with a %%ms_port and a %%ms_parity cell, run by nbclient in a kernel
    started with this interpreter (as scripts/run_demo.py does)."""
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import KernelManager
    from nbclient import NotebookClient
    from nbformat.v4 import new_code_cell, new_notebook

    tmp = tmp_path_factory.mktemp("kernels")
    spec = tmp / "msmagic-fallback"
    spec.mkdir()
    env = {"PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "msmagic fallback test", "language": "python", "env": env,
    }))
    nb = new_notebook(cells=[
        new_code_cell("%load_ext msmagic"), new_code_cell(PORT_CELL), new_code_cell(PARITY_CELL),
    ])
    km = KernelManager(kernel_name="msmagic-fallback",
                       kernel_spec_manager=KernelSpecManager(kernel_dirs=[str(tmp)]))
    client = NotebookClient(nb, km=km, kernel_name="msmagic-fallback", timeout=600)
    try:
        client.execute()
    finally:
        if km.has_kernel:
            km.shutdown_kernel(now=True)
    return nb


def _outputs(nb, index):
    """The cell's one result display (a parity cell's live progress line, ended as a
    summary, comes before it)."""
    outs = [o for o in nb.cells[index].outputs if o.output_type in ("display_data", "execute_result")]
    progress = [o for o in outs if o.data.get(TEXT, "").startswith("msmagic parity: ran ")]
    assert len(progress) == (index == 2), outs
    outs = [o for o in outs if o not in progress]
    assert len(outs) == 1, nb.cells[index].outputs
    return outs[0]


def test_kernel_outputs_are_text_plain_and_text_html_only(executed):
    for index in (1, 2):
        data = _outputs(executed, index).data
        assert set(data) == {TEXT, HTML}
    assert "LAY001" in _outputs(executed, 1).data[TEXT]
    assert 'class="msm-parity-table' in _outputs(executed, 2).data[HTML]


def _export(nb, **config):
    from nbconvert import HTMLExporter
    from traitlets.config import Config

    exporter = HTMLExporter(config=Config(config)) if config else HTMLExporter()
    body, _ = exporter.from_notebook_node(nb)
    return body


def _assert_static_results(body):
    # the port's diff table, its rule badges as <details> with the explanation...
    assert '<table class="msm-diff' in body
    badges = re.findall(r'<details class="msm-badge[^"]*".*?</details>', body, re.S)
    assert badges, "no rule badges in the export"
    lay = next(b for b in badges if "LAY001" in b)
    assert "Linear becomes Dense with has_bias" in lay
    assert "the same layer under other names" in lay  # from the rule's why
    assert "GEN001" in body and "torch.unsupported_thing" in body
    # ...and the parity table with status cells
    assert '<table class="msm-parity-table' in body
    assert re.search(r'class="[^"]*msm-status-match', body)


def test_nbconvert_without_widget_state_shows_text_html(executed):
    """A notebook saved without widget state (JupyterLab's default) or exported offline:
    nbconvert's default priority skips the widget view and shows the text/html."""
    import copy

    nb = copy.deepcopy(executed)
    nb.metadata.pop("widgets", None)
    body = _export(nb)
    assert '<script type="application/vnd.jupyter.widget-view+json">' not in body
    _assert_static_results(body)


def test_nbconvert_default_export_shows_the_static_view(executed):
    """No widget state is stored, so the default exporter has nothing but the text/html."""
    state = executed.metadata.get("widgets", {}).get("application/vnd.jupyter.widget-state+json", {})
    assert not state.get("state")
    body = _export(executed)
    assert '<script type="application/vnd.jupyter.widget-view+json">' not in body
    _assert_static_results(body)


# --------------------------------------------------------------------------- the optional widget


def _walk(widget):
    yield widget
    for child in getattr(widget, "children", ()) or ():
        yield from _walk(child)
    for name in ("style", "layout"):
        sub = getattr(widget, name, None)
        if sub is not None and hasattr(sub, "_model_module"):
            yield sub


def test_port_widget_tree_uses_core_models_and_loads_nothing():
    result = msmagic.port(SOURCE)
    box = make_widget(result)
    seen = list(_walk(box))
    assert len(seen) >= 3
    for w in seen:
        assert w._model_module in CORE_MODULES, (type(w).__name__, w._model_module)
        assert w._view_module in CORE_MODULES | {None}, (type(w).__name__, w._view_module)
    html = "".join(getattr(w, "value", "") for w in seen if isinstance(getattr(w, "value", None), str))
    for text in (html, result._repr_mimebundle_()[HTML]):
        assert "<script" not in text.lower()
        assert "require(" not in text
        assert not re.search(r"src=[\"']?(?:https?:)?//", text), "loads from the network"
        assert "cdn" not in text.lower() and "unpkg" not in text.lower()


def test_a_kernel_gets_text_html_and_no_widget_view(monkeypatch):
    import msmagic.render as render

    monkeypatch.setattr(render, "_in_kernel", lambda: True)
    bundle = msmagic.port(SOURCE)._repr_mimebundle_()
    assert set(bundle) == {TEXT, HTML}
    assert '<details class="msm-badge' in bundle[HTML]
    assert not bundle[TEXT].startswith("\x1b")  # not a terminal: no ANSI in a notebook


# --------------------------------------------------------------------------- terminal


def test_render_text_colour_and_plain():
    result = msmagic.port(SOURCE)
    coloured = render_text(result, color=True)
    lines = coloured.splitlines()
    assert "\x1b[31m-m = nn.Linear(3, 4)\x1b[0m" in lines
    assert "\x1b[32m+m = nn.Dense(3, 4)\x1b[0m" in lines
    assert any(l.startswith("\x1b[36m@@ -1,4 +1,5 @@") for l in lines)
    assert "\x1b[33mfindings:\x1b[0m" in lines
    assert any("4:5 GEN001 torch.unsupported_thing" in l for l in lines)
    plain = render_text(result)
    assert not ANSI.search(plain)
    assert ANSI.sub("", coloured) == plain


TERMINAL_SCRIPT = textwrap.dedent(
    """
    import sys
    from IPython.terminal.interactiveshell import TerminalInteractiveShell
    shell = TerminalInteractiveShell.instance()
    if len(sys.argv) > 1:
        shell.colors = sys.argv[1]
    shell.run_cell("import msmagic")
    shell.run_cell("%load_ext msmagic")
    print("=== result")
    shell.run_cell({code!r})
    print("=== magic")
    shell.run_cell({cell!r})
    """
).format(code=f"msmagic.port({SOURCE!r})", cell=PORT_CELL)


def _terminal(*args, **env):
    proc = subprocess.run(
        [sys.executable, "-c", TERMINAL_SCRIPT, *args],
        capture_output=True, text=True, timeout=300,
        env={**{k: v for k, v in os.environ.items() if k != "NO_COLOR"},
             "PYTHONPATH": str(ROOT), **env},
    )
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "=== result" in out and "=== magic" in out, out
    return out.split("=== magic")


def test_terminal_ipython_shows_coloured_diff_and_findings():
    result_out, magic_out = _terminal()
    assert "\x1b[31m-m = nn.Linear(3, 4)\x1b[0m" in result_out
    assert "\x1b[31m-layer = nn.Linear(3, 4)\x1b[0m" in magic_out
    for out in (result_out, magic_out):
        assert "\x1b[32m+" in out and "nn.Dense(3, 4)" in out
        assert "\x1b[33mfindings:\x1b[0m" in out
        assert "GEN001 torch.unsupported_thing" in out
        assert "<details" not in out and "<table" not in out  # the terminal shows text/plain


@pytest.mark.parametrize("args, env", [(("nocolor",), {}), ((), {"NO_COLOR": "1"})])
def test_terminal_ipython_without_colour_has_no_ansi(args, env):
    result_out, magic_out = _terminal(*args, **env)
    assert "\n-m = nn.Linear(3, 4)\n" in result_out
    assert "\n-layer = nn.Linear(3, 4)\n" in magic_out
    for out in (result_out, magic_out):
        assert "findings:" in out and "GEN001 torch.unsupported_thing" in out
        assert not ANSI.search(out), out[:500]
