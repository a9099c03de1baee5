"""Every demo notebook runs cleanly in a fresh kernel, and its parity reports say what
the notebook's text claims.

The notebooks are executed exactly as ``make demo`` executes them: through
``scripts/run_demo.py``'s kernelspec (this interpreter) and nbclient. Each ``%%ms_parity
-o NAME`` cell's displayed verdict (``[ok]`` or ``[differs]``) is checked against the
expectations below, which restate the notebooks' markdown.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK_DIR = ROOT / "demo_notebooks"

_spec = importlib.util.spec_from_file_location("msmagic_run_demo", ROOT / "scripts" / "run_demo.py")
run_demo = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(run_demo)

NOTEBOOKS = sorted(p.name for p in NOTEBOOK_DIR.glob("*.ipynb"))

_OK, _DIFFERS = "ok", "differs"
# For each notebook: the verdict of every ``%%ms_parity -o NAME`` cell, as the notebook's
# markdown describes it. A notebook listed here must bind exactly these reports.
EXPECTED_VERDICTS: dict[str, dict[str, str]] = {
    "01_port_a_cnn_classifier.ipynb": {},
    "02_parity_residual_network.ipynb": {
        "report": _OK,
        "second": _OK,
        "slip": _DIFFERS,  # hand port keeps momentum=0.1
        "fixed": _OK,
        "layered": _DIFFERS,  # hand port with one ReLU missing: the layer is named
    },
    "03_train_a_classifier_end_to_end.ipynb": {
        "data_report": _OK,
        "model_report": "nothing compared",  # the model is copied across; the training compares it
        "train_report": _OK,
        "eval_report": _OK,
        "course_report": _OK,
        "grad_report": _OK,
    },
    "04_autograd_walkthrough.ipynb": {
        name: _OK
        for name in (
            "backward_report", "autograd_backward_report", "aux_report", "vjp_report",
            "grad_single_report", "grad_multi_report", "no_grad_report", "retain_report",
            "second_report", "function_report", "frozen_report",
        )
    },
    "05_migration_pitfalls.ipynb": {
        "dropout_report": _OK,
        "naive_dropout_report": _DIFFERS,
        "batchnorm_report": _OK,
        "naive_batchnorm_report": _DIFFERS,
        "conv_report": _OK,
        "naive_conv_report": _DIFFERS,
        "mode_report": _OK,
        "naive_mode_report": _DIFFERS,
        "pool_report": _OK,
        "naive_pool_report": _DIFFERS,
        "init_report": _OK,
        "nn_init_report": _OK,
        "transpose_report": _OK,
        "naive_transpose_report": _OK,  # MindSpore 2.10's Tensor.transpose takes two axes
        "flatten_report": _OK,
        "naive_flatten_report": _DIFFERS,
        "softmax_report": _DIFFERS,  # implicit axis: flagged, not ported
    },
}

_OUTPUT_NAME = re.compile(r"(?:^|\s)(?:-o|--output)\s+([A-Za-z_]\w*)")
_VERDICT = re.compile(r"^msmagic parity\b[^\n]*?\s\[(\w[\w ]*)\]")


def _stdout(cell) -> str:
    return "".join(o.get("text", "") for o in cell.get("outputs", [])
                   if o.get("output_type") == "stream" and o.get("name") == "stdout")


def _errors(nb) -> list[str]:
    out = []
    for index, cell in enumerate(nb.cells):
        for o in cell.get("outputs", []):
            if o.get("output_type") == "error":
                out.append(f"cell {index}: {o.get('ename')}: {o.get('evalue')}")
    return out


def _parity_verdicts(nb) -> dict[str, str]:
    """``{NAME: verdict}`` for every ``%%ms_parity -o NAME`` cell, from its displayed report."""
    verdicts = {}
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code" or not cell.source.startswith("%%ms_parity"):
            continue
        match = _OUTPUT_NAME.search(cell.source.splitlines()[0])
        assert match, f"cell {index}: every %%ms_parity cell in a demo binds its report with -o"
        shown = [o["data"]["text/plain"] for o in cell.outputs
                 if o.get("output_type") == "display_data" and "text/plain" in o.get("data", {})]
        assert shown, f"cell {index} ({match.group(1)}) displayed no report"
        # the live progress line comes first; the report is the last display
        verdict = _VERDICT.match(shown[-1])
        assert verdict, f"cell {index}: unexpected report text {shown[-1][:200]!r}"
        verdicts[match.group(1)] = verdict.group(1)
    return verdicts


@pytest.fixture(scope="module")
def kernel_dirs(tmp_path_factory):
    directory = tmp_path_factory.mktemp("kernels")
    run_demo.write_kernelspec(directory)
    return [str(directory)]


@pytest.fixture(scope="module")
def executed(kernel_dirs):
    cache: dict = {}

    def run(name):
        if name not in cache:
            nb, failure, _ = run_demo.execute_notebook(NOTEBOOK_DIR / name, kernel_dirs)
            cache[name] = (nb, failure)
        return cache[name]

    return run


def test_every_demo_notebook_has_expectations():
    assert len(NOTEBOOKS) >= 5
    assert sorted(EXPECTED_VERDICTS) == NOTEBOOKS


def test_demo_notebooks_store_no_outputs():
    import nbformat

    for name in NOTEBOOKS:
        nb = nbformat.read(NOTEBOOK_DIR / name, as_version=4)
        nbformat.validate(nb)
        for cell in nb.cells:
            assert cell.get("id"), f"{name}: a cell has no id"
            if cell.cell_type == "code":
                assert cell.outputs == [] and cell.execution_count is None, f"{name}: stored outputs"


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_demo_notebook_runs_cleanly(name, executed):
    nb, failure = executed(name)
    assert failure is None, f"{name}: {failure}"
    assert _errors(nb) == []
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.execution_count is not None for c in code), f"{name}: a cell did not run"
    assert _parity_verdicts(nb) == EXPECTED_VERDICTS[name]


def test_port_notebook_shows_the_diff_and_findings(executed):
    nb, _ = executed("01_port_a_cnn_classifier.ipynb")
    port_cell = next(c for c in nb.cells if c.cell_type == "code" and c.source.startswith("%%ms_port"))
    data = next(o["data"] for o in port_cell.outputs if o.get("output_type") == "display_data")
    assert "application/vnd.jupyter.widget-view+json" not in data
    assert 'class="msm-badge"' in data["text/html"]
    assert "unsupported" in "".join(_stdout(c) for c in nb.cells if c.cell_type == "code")


def test_autograd_walkthrough_prints_the_seed_values(executed):
    nb, _ = executed("04_autograd_walkthrough.ipynb")
    text = "".join(_stdout(c) for c in nb.cells if c.cell_type == "code")
    assert "dz/dx = 2.0  dz/dy = 1.0" in text
    assert "dy/dx = 12.0  d2y/dx2 = 12.0" in text
    assert "custom gradient: [0.0, 1.0, 4.0]" in text
    assert "frozen layer unchanged: True" in text
    assert "DIFFERS" not in text


def test_pitfalls_notebook_shows_each_pitfall(executed):
    nb, _ = executed("05_migration_pitfalls.ipynb")
    text = "".join(_stdout(c) for c in nb.cells if c.cell_type == "code")
    # Dropout: PyTorch drops ~20 % and scales kept values by 1/0.8
    fraction = float(re.search(r"PyTorch zeroes ([0-9.]+) of the inputs; kept values become 1\.25", text).group(1))
    assert 0.18 < fraction < 0.22
    assert "zero fraction: differs | kept value: differs" in text
    assert "features shape: PyTorch (1, 8, 14, 14) vs naive MindSpore (1, 8, 16, 16)" in text
    assert "the naive port drops 0.00" in text
    assert "shapes: (1, 1, 4, 4) vs (1, 1, 7, 7)" in text
    assert "shapes: (24,) vs (2, 12)" in text
    assert "explicit: match | implicit: differs" in text
    assert "FUN005" in text


def test_training_notebook_shows_progress_timing_and_the_loss_curve(executed):
    """The end-to-end training notebook's training cell: the progress line ended as a
    summary, the report's timing breakdown, and a chart of both sides' losses."""
    nb, failure = executed("03_train_a_classifier_end_to_end.ipynb")
    assert failure is None, failure
    cell = next(c for c in nb.cells if c.cell_type == "code" and "-o train_report" in c.source)
    shown = [o["data"] for o in cell.outputs if o.get("output_type") == "display_data"]
    assert re.fullmatch(r"msmagic parity: ran \d+ statements on each side in [\d.]+ s \(report below\)",
                        shown[0]["text/plain"]), shown[0]["text/plain"]
    report = shown[-1]
    timing = next(l for l in report["text/plain"].splitlines() if l.startswith("time: "))
    assert all(part in timing for part in ("PyTorch", "MindSpore", "sync and compare", "total")), timing
    assert "losses: PyTorch" in report["text/plain"]
    assert 'class="msm-chart" data-name="losses"' in report["text/html"]
