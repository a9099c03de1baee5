#!/usr/bin/env python
"""Run the demo notebooks headlessly and summarise what they printed.

    python scripts/run_demo.py [NOTEBOOK.ipynb ...]

With no arguments every ``demo_notebooks/*.ipynb`` runs, in name order. Each notebook
runs in a fresh kernel started with *this* interpreter (``sys.executable``), through a
kernelspec written to a temporary directory, so the user's own Jupyter kernels are
neither used nor touched. For each notebook ``demo_output/`` receives the executed
notebook and a self-contained HTML export (no scripts or styles fetched from the
network). A text summary of every code cell's output goes to stdout.

Exits 1 if any cell raised (cells tagged ``raises-exception`` are allowed to).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import time
import traceback
from pathlib import Path

import jinja2
import nbformat
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import KernelManager
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError
from nbconvert import HTMLExporter
from traitlets.config import Config

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK_DIR = ROOT / "demo_notebooks"
OUTPUT_DIR = ROOT / "demo_output"
KERNEL_NAME = "msmagic-demo"
CELL_TIMEOUT = 600  # seconds, per cell

MAX_LINES = 40
MAX_CHARS = 4000
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")

# The "lab" template minus everything it would load from a CDN (require.js, MathJax,
# mermaid, the widget manager). Widgets fall back to their text/html or text/plain
# representation, so the page renders offline.
_OFFLINE_TEMPLATE = """\
{%- extends 'lab/index.html.j2' -%}
{%- block html_head_js -%}{%- endblock html_head_js -%}
{%- block jupyter_widgets -%}{%- endblock jupyter_widgets -%}
{%- block html_head_js_mathjax -%}{%- endblock html_head_js_mathjax -%}
{%- block html_head_js_mermaidjs -%}{%- endblock html_head_js_mermaidjs -%}
"""
_HTML_PRIORITY = [
    "text/html",
    "text/markdown",
    "image/svg+xml",
    "image/png",
    "image/jpeg",
    "text/latex",
    "text/plain",
]


def write_kernelspec(directory: Path) -> None:
    """Write the ``msmagic-demo`` kernelspec (this interpreter) into ``directory``."""
    spec_dir = directory / KERNEL_NAME
    spec_dir.mkdir(parents=True)
    spec = {
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": f"msmagic demo ({sys.executable})",
        "language": "python",
        "metadata": {"debugger": False},
        # The kernel imports msmagic from this checkout even when run outside the venv.
        "env": {"PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))},
    }
    (spec_dir / "kernel.json").write_text(json.dumps(spec, indent=1))


def _html_exporter() -> HTMLExporter:
    # Config, not attributes: the output-type filter reads it from its parent's config.
    config = Config({"NbConvertBase": {"display_data_priority": list(_HTML_PRIORITY)}})
    return HTMLExporter(
        config=config,
        extra_loaders=[jinja2.DictLoader({"msmagic_offline.html.j2": _OFFLINE_TEMPLATE})],
        template_file="msmagic_offline.html.j2",
        embed_images=True,
    )


def _clip(text: str) -> str:
    text = ANSI.sub("", text).rstrip("\n")
    lines = text.splitlines()
    clipped = False
    if len(lines) > MAX_LINES:
        lines = lines[:MAX_LINES]
        clipped = True
    text = "\n".join(lines)
    if len(text) > MAX_CHARS:
        text = text[:MAX_CHARS]
        clipped = True
    if clipped:
        text += "\n... (truncated; full output in demo_output/)"
    return text


def _indent(text: str, prefix: str = "    ") -> str:
    return "\n".join(prefix + line for line in text.splitlines()) if text else prefix.rstrip()


def _summarise(nb, name: str) -> tuple[str, int]:
    """Text summary of the executed notebook and the number of unexpected errors."""
    out = [f"=== {name} ==="]
    errors = 0
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        first = cell.source.strip().splitlines()[0] if cell.source.strip() else "(empty)"
        count = cell.get("execution_count")
        ran = f"[{count}]" if count is not None else "(not run)"
        out.append(f"--- cell {index} {ran}: {first[:100]}")
        expected = "raises-exception" in cell.get("metadata", {}).get("tags", [])
        for output in cell.get("outputs", []):
            kind = output.get("output_type")
            if kind == "stream":
                label = "stderr" if output.get("name") == "stderr" else "stdout"
                out.append(f"  [{label}]")
                out.append(_indent(_clip(output.get("text", ""))))
            elif kind in ("execute_result", "display_data"):
                data = output.get("data", {})
                text = data.get("text/plain")
                kinds = ", ".join(sorted(k for k in data if k != "text/plain"))
                label = "result" if kind == "execute_result" else "display"
                out.append(f"  [{label}]" + (f" (also: {kinds})" if kinds else ""))
                if text is not None:
                    out.append(_indent(_clip(text)))
            elif kind == "error":
                if not expected:
                    errors += 1
                tag = "error (expected)" if expected else "ERROR"
                out.append(f"  [{tag}] {output.get('ename')}: {output.get('evalue')}")
                out.append(_indent(_clip("\n".join(output.get("traceback", [])))))
    return "\n".join(out), errors


def execute_notebook(path: Path, kernel_dirs: list[str]):
    """Execute one notebook in a fresh kernel of the ``msmagic-demo`` kernelspec.

    Returns ``(nb, failure, seconds)``: the executed notebook, a one-line description
    of why execution stopped early (None if every cell ran) and the run time.
    """
    nb = nbformat.read(path, as_version=4)
    km = KernelManager(
        kernel_name=KERNEL_NAME,
        kernel_spec_manager=KernelSpecManager(kernel_dirs=kernel_dirs),
    )
    client = NotebookClient(
        nb,
        km=km,
        kernel_name=KERNEL_NAME,
        timeout=CELL_TIMEOUT,
        allow_errors=False,
        record_timing=True,
        resources={"metadata": {"path": str(path.parent)}},
    )
    started = time.monotonic()
    failure = None
    try:
        client.execute()
    except CellExecutionError as exc:
        # A failed cell does not always leave an error output (IPython reports a
        # UsageError, e.g. an unknown magic, on stderr), so the exception counts itself.
        failure = f"execution stopped: {exc.ename}: {exc.evalue}".strip()
    except Exception as exc:  # kernel died, timeout, ...: keep going with the others
        failure = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    finally:
        # nbclient leaves a kernel manager it was handed running; stop the kernel here.
        if km.has_kernel:
            km.shutdown_kernel(now=True)
    return nb, failure, time.monotonic() - started


def run_notebook(path: Path, kernel_dirs: list[str], exporter: HTMLExporter) -> int:
    """Execute one notebook, write its outputs, print its summary; return error count."""
    nb, failure, elapsed = execute_notebook(path, kernel_dirs)

    OUTPUT_DIR.mkdir(exist_ok=True)
    executed = OUTPUT_DIR / path.name
    nbformat.write(nb, executed)
    body, _ = exporter.from_notebook_node(nb, resources={"metadata": {"name": path.stem}})
    html = OUTPUT_DIR / (path.stem + ".html")
    html.write_text(body, encoding="utf-8")

    summary, errors = _summarise(nb, path.name)
    print(summary)
    if failure:
        print(f"  [ERROR] notebook did not finish: {failure}")
    ok = errors == 0 and failure is None
    status = "OK" if ok else f"FAILED ({max(errors, 1)} error(s))"
    print(f"=== {path.name}: {status} in {elapsed:.1f}s -> {executed.relative_to(ROOT)}, "
          f"{html.relative_to(ROOT)}\n", flush=True)
    return 0 if ok else max(errors, 1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="*", type=Path,
                        help="notebooks to run (default: demo_notebooks/*.ipynb)")
    args = parser.parse_args(argv)

    notebooks = [p.resolve() for p in args.notebooks] or sorted(NOTEBOOK_DIR.glob("*.ipynb"))
    if not notebooks:
        print(f"run_demo: no notebooks found in {NOTEBOOK_DIR}", file=sys.stderr)
        return 1
    missing = [p for p in notebooks if not p.is_file()]
    if missing:
        print("run_demo: no such notebook: " + ", ".join(map(str, missing)), file=sys.stderr)
        return 1

    exporter = _html_exporter()
    failed = []
    with tempfile.TemporaryDirectory(prefix="msmagic-kernels-") as tmp:
        write_kernelspec(Path(tmp))
        for path in notebooks:
            if run_notebook(path, [tmp], exporter):
                failed.append(path.name)

    print(f"run_demo: {len(notebooks) - len(failed)} of {len(notebooks)} notebooks ran cleanly")
    if failed:
        print("run_demo: failed: " + ", ".join(failed), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
