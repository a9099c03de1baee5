"""``python -m msmagic port|rules``: outputs, reports, exit codes and error messages."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output, new_raw_cell

from msmagic.cli import main
from msmagic.rules.registry import all_rules, get_rule

ROOT = Path(__file__).resolve().parent.parent

PY_SOURCE = "import torch\nimport torch.nn as nn\n\nlayer = nn.Linear(3, 4)\nx = torch.ones(2, 3)\n"
PY_FINDING = PY_SOURCE + "y = torch.unsupported_thing(x)\n"

MARKDOWN = "## Markdown *stays*\n\nwith `torch.nn.Linear`  \nand trailing spaces\n"
CELL3 = "%%ms_port\n%time layer = nn.Linear(3, 4)\nx = torch.ones(2, 3)\ny = torch.unsupported_thing(x)"


def run(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = main([str(a) for a in argv], stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def cli(*argv, cwd=None):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run(
        [sys.executable, "-m", "msmagic", *map(str, argv)],
        capture_output=True, text=True, cwd=cwd, env=env, timeout=300,
    )


@pytest.fixture
def notebook(tmp_path):
    nb = new_notebook(cells=[
        new_code_cell("import torch\nimport torch.nn as nn\n%load_ext msmagic", execution_count=1),
        new_markdown_cell(MARKDOWN),
        new_code_cell(CELL3, execution_count=3,
                      outputs=[new_output("stream", name="stdout", text="torch output\n")]),
        new_raw_cell("raw torch.nn.Linear text"),
        new_code_cell("!echo hi\nprint(1)", execution_count=4,
                      outputs=[new_output("stream", name="stdout", text="1\n")]),
        new_code_cell("%%bash\necho torch.nn.Linear(", execution_count=5),
    ])
    path = tmp_path / "nb.ipynb"
    nbformat.write(nb, path)
    return path


# --------------------------------------------------------------------------- .py


def test_py_port_to_stdout_via_subprocess(tmp_path):
    src = tmp_path / "model.py"
    src.write_text(PY_SOURCE)
    proc = cli("port", src)
    assert proc.returncode == 0, proc.stderr
    assert "import mindspore.nn as nn" in proc.stdout
    assert "layer = nn.Dense(3, 4)" in proc.stdout
    assert "x = mindspore.ops.ones((2, 3))" in proc.stdout
    assert "torch" not in proc.stdout
    # the report is on stderr, not mixed into the code
    assert "LAY001 Linear becomes Dense with has_bias" in proc.stderr
    assert "msmagic: 1 file, 1 cell ported" in proc.stderr
    assert "LAY001" not in proc.stdout
    assert src.read_text() == PY_SOURCE  # nothing overwritten


def test_py_output_file_and_refusal_to_overwrite(tmp_path):
    src = tmp_path / "model.py"
    src.write_text(PY_SOURCE)
    out = tmp_path / "model_ms.py"
    code, stdout, stderr = run("port", src, "-o", out)
    assert code == 0
    assert stdout == ""
    assert "nn.Dense(3, 4)" in out.read_text()
    assert f"wrote {out}" in stderr

    out.write_text("keep me\n")
    code, _, stderr = run("port", src, "-o", out)
    assert code == 2
    assert stderr == f"error: {out}: exists; pass --force to overwrite it\n"
    assert out.read_text() == "keep me\n"

    code, _, _ = run("port", src, "-o", out, "--force")
    assert code == 0 and "nn.Dense(3, 4)" in out.read_text()

    code, _, stderr = run("port", src, "-o", src)
    assert code == 2 and "would overwrite the input" in stderr
    assert src.read_text() == PY_SOURCE


def test_check_exit_codes(tmp_path):
    clean = tmp_path / "clean.py"
    clean.write_text(PY_SOURCE)
    dirty = tmp_path / "dirty.py"
    dirty.write_text(PY_FINDING)

    code, stdout, stderr = run("port", clean, "--check")
    assert code == 0
    assert stdout == ""  # --check reports only
    assert "0 findings" in stderr

    code, stdout, stderr = run("port", dirty, "--check")
    assert code == 1
    assert stdout == ""
    assert "finding 6:5 GEN001 torch.unsupported_thing:" in stderr

    code, stdout, stderr = run("port", dirty, "--check", "--quiet")
    assert code == 1 and stdout == ""
    assert stderr == "msmagic: 1 finding(s)\n"

    # without --check findings do not fail the run
    code, stdout, _ = run("port", dirty)
    assert code == 0 and "# msmagic: GEN001" in stdout


def test_in_place_keeps_every_original_in_numbered_backups(tmp_path):
    src = tmp_path / "model.py"
    src.write_text(PY_SOURCE)
    code, stdout, stderr = run("port", src, "--in-place")
    assert code == 0 and stdout == ""
    backup = tmp_path / "model.py.bak"
    assert backup.read_text() == PY_SOURCE
    ported = src.read_text()
    assert "nn.Dense(3, 4)" in ported
    assert f"wrote {src} (backup {backup})" in stderr

    # a second original: PATH.bak is kept, the new original goes to PATH.bak.1
    second = PY_SOURCE.replace("3, 4", "5, 6")
    src.write_text(second)
    code, _, stderr = run("port", src, "--in-place")
    assert code == 0
    assert "nn.Dense(5, 6)" in src.read_text()
    assert backup.read_text() == PY_SOURCE
    assert (tmp_path / "model.py.bak.1").read_text() == second
    assert f"wrote {src} (backup {tmp_path / 'model.py.bak.1'})" in stderr

    # --force changes nothing about backups: the earlier ones stay, a third is added
    third = PY_SOURCE.replace("3, 4", "7, 8")
    src.write_text(third)
    code, _, _ = run("port", src, "--in-place", "--force")
    assert code == 0 and "nn.Dense(7, 8)" in src.read_text()
    assert backup.read_text() == PY_SOURCE
    assert (tmp_path / "model.py.bak.1").read_text() == second
    assert (tmp_path / "model.py.bak.2").read_text() == third
    # no temporary file is left behind
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "model.py", "model.py.bak", "model.py.bak.1", "model.py.bak.2"]

    code, _, stderr = run("port", src, "--in-place", "-o", tmp_path / "x.py")
    assert code == 2 and stderr == "error: -o and --in-place cannot be combined\n"
    assert not (tmp_path / "x.py").exists()


def test_json_report(tmp_path):
    src = tmp_path / "dirty.py"
    src.write_text(PY_FINDING)
    code, stdout, stderr = run("port", src, "--format", "json")
    assert code == 0 and stderr == ""
    doc = json.loads(stdout)
    (entry,) = doc["files"]
    assert entry["path"] == str(src) and "nn.Dense(3, 4)" in entry["code"]
    (cell,) = entry["cells"]
    assert {"id": "LAY001", "title": "Linear becomes Dense with has_bias"} in cell["rules"]
    finding = {
        "path": str(src), "cell": None, "line": 6, "column": 5, "rule": "GEN001", "api": "torch.unsupported_thing",
        "reason": "no MindSpore mapping is known for torch.unsupported_thing; it was left as PyTorch",
    }
    # the whole run's list says where each finding is; a cell's list, inside its cell, does
    # not repeat it (the realworld runner adds the cell number itself)
    assert doc["findings"] == [finding]
    assert cell["findings"] == [{k: v for k, v in finding.items() if k not in ("path", "cell")}]
    assert doc["errors"] == []
    assert doc["counts"] == {"files": 1, "cells_ported": 1, "cells_skipped": 0, "cells_not_valid_python": 0,
                             "edits": cell["edits"], "findings": 1}
    # the number of edits (the key earlier versions and ../shared/realworld read), and each
    # edit: its rule, and the lines it read and wrote
    assert cell["edits"] == len(cell["edit_list"]) > 0
    lay = [e for e in cell["edit_list"] if e["rule"] == "LAY001"]
    assert lay == [{"rule": "LAY001", "title": "Linear becomes Dense with has_bias", "api": "torch.nn.Linear",
                    "detail": "torch.nn.Linear -> mindspore.nn.Dense", "input_lines": [4, 4],
                    "output_lines": lay[0]["output_lines"]}]
    first, last = lay[0]["output_lines"]
    assert first == last and entry["code"].splitlines()[first - 1] == "layer = nn.Dense(3, 4)"
    assert PY_FINDING.splitlines()[3] == "layer = nn.Linear(3, 4)"


def test_json_edit_lines_count_the_cell_magic_line(notebook):
    code, stdout, _ = run("port", notebook, "--format", "json", "-o", notebook.with_name("out.ipynb"))
    assert code == 0
    doc = json.loads(stdout)
    cells = {c["cell"]: c for c in doc["files"][0]["cells"]}
    assert cells[6] == {"cell": 6, "skipped": True, "rules": [], "edits": 0, "edit_list": [], "findings": [],
                        "note": "%%bash cell left as it is"}
    ported = nbformat.read(notebook.with_name("out.ipynb"), as_version=4).cells[2].source.splitlines()
    (lay,) = [e for e in cells[3]["edit_list"] if e["rule"] == "LAY001"]
    # line 2 of the cell as stored (line 1 is %%ms_port), in and out
    assert lay["input_lines"] == [2, 2] and CELL3.splitlines()[1] == "%time layer = nn.Linear(3, 4)"
    assert ported[lay["output_lines"][0] - 1] == "%time layer = nn.Dense(3, 4)"
    assert [(f["cell"], f["line"], f["column"]) for f in doc["findings"]] == [(3, 4, 5)]
    assert doc["findings"] == [{"path": str(notebook), "cell": 3, **f} for f in cells[3]["findings"]]
    assert doc["counts"]["cells_ported"] == 3 and doc["counts"]["cells_skipped"] == 1


# --------------------------------------------------------------------------- notebooks


def test_notebook_port_one_session_markdown_and_magics_kept(notebook, tmp_path):
    before = notebook.read_bytes()
    out = tmp_path / "ported.ipynb"
    code, stdout, stderr = run("port", notebook, "-o", out)
    assert code == 0, stderr
    assert stdout == ""
    original = nbformat.read(notebook, as_version=4)
    ported = nbformat.read(out, as_version=4)
    nbformat.validate(ported)
    assert [c.cell_type for c in ported.cells] == [c.cell_type for c in original.cells]

    c1, md, c3, raw, c5, c6 = ported.cells
    assert c1.source == "import mindspore\nimport mindspore.nn as nn\n%load_ext msmagic"
    # nn and torch were imported in cell 1 only: cell 3 resolves them through the session
    lines = c3.source.splitlines()
    assert lines[0] == "%%ms_port"  # the cell magic stays the first line
    assert "%time layer = nn.Dense(3, 4)" in lines
    assert "x = mindspore.ops.ones((2, 3))" in lines
    assert c3.outputs == [] and c3.execution_count is None  # stale PyTorch outputs cleared
    # markdown and raw cells byte-identical, unchanged code cells keep their outputs
    assert md.source == MARKDOWN
    assert raw.source == "raw torch.nn.Linear text"
    assert c5.source == "!echo hi\nprint(1)" and c5.outputs[0]["text"] == "1\n"
    assert c6.source == "%%bash\necho torch.nn.Linear("  # not Python: left alone
    # the markdown source is byte-identical in the file too
    raw_json = json.loads(out.read_text())
    assert "".join(raw_json["cells"][1]["source"]) == MARKDOWN

    assert f"{notebook} cell 1: 2 edits, 0 findings" in stderr
    # the finding's line counts the %%ms_port line, as the user sees the cell
    assert f"{notebook} cell 3: " in stderr
    assert "finding 4:5 GEN001 torch.unsupported_thing:" in stderr
    assert f"{notebook} cell 5: unchanged" in stderr
    assert f"{notebook} cell 6: skipped (%%bash cell left as it is)" in stderr
    assert f"{notebook} cell 2" not in stderr  # markdown is not reported
    assert notebook.read_bytes() == before  # the input is never touched


def test_notebook_without_output_prints_percent_listing(notebook):
    code, stdout, _ = run("port", notebook)
    assert code == 0
    assert stdout.startswith(f"# msmagic port of {notebook}\n")
    assert "# %% cell 3\n%%ms_port\n" in stdout
    assert "# %% [markdown] cell 2\n# ## Markdown *stays*\n" in stdout
    assert "%time layer = nn.Dense(3, 4)" in stdout


BAD_CELL = "%%time\nx = 1\ny = (2 +"


def _with_bad_cell(notebook):
    nb = nbformat.read(notebook, as_version=4)
    nb.cells.insert(2, new_code_cell(BAD_CELL, execution_count=2,
                                     outputs=[new_output("stream", name="stdout", text="kept\n")]))
    nbformat.write(nb, notebook)
    return nb


def test_a_cell_that_does_not_parse_is_left_as_it_is_and_the_rest_is_ported(notebook, tmp_path):
    _with_bad_cell(notebook)
    out = tmp_path / "ported.ipynb"
    code, stdout, stderr = run("port", notebook, "-o", out)
    assert code == 3 and stdout == ""
    # one line: file, cell, line within the cell (the %%time line is line 1), column
    line = f"error: {notebook} cell 3:3:5: '(' was never closed (cell left as it is)\n"
    assert line in stderr and stderr.count("error:") == 1
    assert "1 cell not valid Python (left as it is)" in stderr and f"wrote {out}" in stderr
    cells = nbformat.read(out, as_version=4).cells
    assert cells[0].source == "import mindspore\nimport mindspore.nn as nn\n%load_ext msmagic"
    assert cells[2].source == BAD_CELL and cells[2].outputs[0]["text"] == "kept\n"
    assert "%time layer = nn.Dense(3, 4)" in cells[3].source  # ported after the bad cell
    # --quiet hides the report, not the error; --check with findings still says 3
    code, stdout, stderr = run("port", notebook, "--check", "--quiet")
    assert (code, stdout, stderr) == (3, "", line)


def test_a_cell_that_does_not_parse_in_place_and_in_json(notebook):
    nb = _with_bad_cell(notebook)
    proc = cli("port", notebook, "--in-place", "--format", "json")
    assert proc.returncode == 3
    assert proc.stderr == f"error: {notebook} cell 3:3:5: '(' was never closed (cell left as it is)\n"
    doc = json.loads(proc.stdout)
    error = {"path": str(notebook), "cell": 3, "line": 3, "column": 5, "message": "'(' was never closed"}
    assert doc["errors"] == [error]
    (cell3,) = [c for c in doc["files"][0]["cells"] if c["cell"] == 3]
    assert cell3 == {"cell": 3, "skipped": True, "rules": [], "edits": 0, "edit_list": [], "findings": [],
                     "note": "not valid Python; left as it is", "error": error}
    assert doc["counts"]["cells_not_valid_python"] == 1 and doc["backups"] == [f"{notebook}.bak"]
    assert nbformat.read(f"{notebook}.bak", as_version=4) == nb
    ported = nbformat.read(notebook, as_version=4).cells
    assert ported[2].source == BAD_CELL and "nn.Dense" in ported[3].source


def test_a_directory_with_a_cell_that_does_not_parse_is_ported_and_written(notebook, tmp_path):
    src = tmp_path / "project"
    src.mkdir()
    (src / "model.py").write_text(PY_SOURCE)
    _with_bad_cell(notebook)
    notebook.rename(src / "nb.ipynb")
    out = tmp_path / "mirror"
    code, _, stderr = run("port", src, "-o", out)
    assert code == 3
    assert f"error: {src / 'nb.ipynb'} cell 3:3:5: '(' was never closed (cell left as it is)\n" in stderr
    assert "nn.Dense(3, 4)" in (out / "model.py").read_text()
    assert nbformat.read(out / "nb.ipynb", as_version=4).cells[2].source == BAD_CELL


def test_a_notebook_whose_only_code_does_not_parse_is_not_written(tmp_path):
    path = tmp_path / "bad.ipynb"
    nbformat.write(new_notebook(cells=[new_code_cell("import torch\nx = torch.ones(2,")]), path)
    before = path.read_bytes()
    code, _, stderr = run("port", path, "--in-place")
    assert code == 3 and path.read_bytes() == before
    assert stderr.startswith(f"error: {path} cell 1:2:15: '(' was never closed (cell left as it is)\n")
    assert f"{path}: nothing to port; not written, no backup" in stderr
    assert not (tmp_path / "bad.ipynb.bak").exists()


@pytest.mark.parametrize(
    "content, message",
    [
        ("not json", "invalid notebook: not JSON (Expecting value: line 1 column 1 (char 0))"),
        ("[1, 2]", "invalid notebook: the top level is a JSON list, not an object"),
        ('{"cells": []}', "invalid notebook: no integer 'nbformat' version"),
        ('{"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": 3}',
         "invalid notebook: 'cells' is not a list"),
    ],
)
def test_invalid_notebooks(tmp_path, content, message):
    bad = tmp_path / "bad.ipynb"
    bad.write_text(content)
    code, stdout, stderr = run("port", bad)
    assert (code, stdout) == (2, "")
    assert stderr == f"error: {bad}: {message}\n"


def test_nbformat_validation_error_names_the_cell(tmp_path):
    bad = tmp_path / "bad.ipynb"
    bad.write_text(json.dumps({
        "nbformat": 4, "nbformat_minor": 4, "metadata": {},
        "cells": [
            {"cell_type": "markdown", "metadata": {}, "source": "x"},
            {"cell_type": "code", "metadata": {}, "source": "x", "outputs": 5, "execution_count": None},
        ],
    }))
    code, _, stderr = run("port", bad)
    assert code == 2
    assert stderr == f"error: {bad} cell 2: invalid notebook: 5 is not of type 'array'\n"


def test_path_errors(tmp_path):
    missing = tmp_path / "missing.py"
    code, _, stderr = run("port", missing)
    assert (code, stderr) == (2, f"error: {missing}: no such file or directory\n")

    txt = tmp_path / "notes.txt"
    txt.write_text("torch")
    code, _, stderr = run("port", txt)
    assert (code, stderr) == (2, f"error: {txt}: unsupported file type '.txt'; expected .py or .ipynb\n")

    bad = tmp_path / "bad.py"
    bad.write_text("x = 1\ndef f(:\n")
    code, _, stderr = run("port", bad)
    assert code == 2
    assert stderr == f"error: {bad}:2:7: invalid syntax\n"

    empty = tmp_path / "empty"
    empty.mkdir()
    code, _, stderr = run("port", empty, "--check")
    assert (code, stderr) == (2, f"error: {empty}: no .py or .ipynb files in this directory\n")


def test_syntax_error_exit_2_via_subprocess(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("y = (2 +\n")
    proc = cli("port", bad)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr == f"error: {bad}:1:5: '(' was never closed\n"


# --------------------------------------------------------------------------- directories


def test_directory_mirror(tmp_path, notebook):
    src = tmp_path / "project"
    (src / "pkg").mkdir(parents=True)
    (src / ".hidden").mkdir()
    (src / "b.py").write_text(PY_SOURCE)
    (src / "pkg" / "a.py").write_text(PY_FINDING)
    (src / ".hidden" / "c.py").write_text(PY_SOURCE)
    (src / "README.txt").write_text("not ported")
    notebook.rename(src / "pkg" / "nb.ipynb")

    code, _, stderr = run("port", src)
    assert code == 2
    assert stderr == f"error: {src}: is a directory; give -o DIR, --in-place or --check\n"

    out = tmp_path / "mirror"
    code, stdout, stderr = run("port", src, "-o", out)
    assert code == 0 and stdout == ""
    written = sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file())
    assert written == ["b.py", "pkg/a.py", "pkg/nb.ipynb"]
    assert "nn.Dense(3, 4)" in (out / "b.py").read_text()
    assert "# msmagic: GEN001" in (out / "pkg" / "a.py").read_text()
    nbformat.validate(nbformat.read(out / "pkg" / "nb.ipynb", as_version=4))
    # files in sorted order, the notebook's cells reported one by one
    order = [stderr.index(f"{src / name}") for name in ("b.py", "pkg/a.py", "pkg/nb.ipynb cell 1")]
    assert order == sorted(order)
    assert "msmagic: 3 files, 5 cells ported" in stderr

    # a second run would overwrite: refused before anything is written
    (out / "pkg" / "a.py").write_text("mine\n")
    code, _, stderr = run("port", src, "-o", out)
    assert code == 2 and stderr == f"error: {out / 'b.py'}: exists; pass --force to overwrite it\n"
    assert (out / "pkg" / "a.py").read_text() == "mine\n"

    code, _, _ = run("port", src, "--check", "--quiet")
    assert code == 1  # pkg/a.py and the notebook have findings


def test_progress_forced_and_off_when_not_a_tty(notebook):
    code, _, stderr = run("port", notebook, "--check", "--progress")
    assert code == 1
    # one update per code cell (4 of them), the last one full
    assert stderr.count("\rporting [") == 4
    assert "\rporting [" + "#" * 6 + "-" * 18 + "] 1/4 cells" in stderr
    assert "\rporting [" + "#" * 24 + "] 4/4 cells" in stderr
    code, _, stderr = run("port", notebook, "--check")
    assert "porting [" not in stderr


# --------------------------------------------------------------------------- rules, help


def test_rules_listing_contains_every_id():
    code, stdout, _ = run("rules")
    assert code == 0
    listed = [line.split()[0] for line in stdout.splitlines()[:-1]]
    assert listed == [r.id for r in all_rules()]
    lay = next(line for line in stdout.splitlines() if line.startswith("LAY001 "))
    assert "Layers" in lay and lay.endswith("Linear becomes Dense with has_bias")
    assert stdout.splitlines()[-1].startswith(f"{len(all_rules())} rules")


def test_rules_one_rule_in_full():
    rule = get_rule("LAY001")
    proc = cli("rules", "LAY001")
    assert proc.returncode == 0
    assert proc.stdout.startswith(f"LAY001: {rule.title}\ngroup: Layers\n")
    # the why, verbatim modulo indentation
    first_why_line = rule.why.splitlines()[0]
    assert "    " + first_why_line in proc.stdout
    assert f"seed: {rule.seed}" in proc.stdout
    assert "fc = nn.Linear(4, 3, False)" in proc.stdout

    code, stdout, _ = run("rules", "lay001", "--format", "json")
    assert code == 0 and json.loads(stdout)["why"] == rule.why

    code, stdout, _ = run("rules", "LAY001", "--format", "markdown")
    assert stdout.startswith("### LAY001\n\n**Linear becomes Dense with has_bias**")
    assert "nn.Dense(4, 3, has_bias=False)" in stdout


def test_rules_formats_and_unknown_id():
    code, stdout, _ = run("rules", "--format", "json")
    assert [r["id"] for r in json.loads(stdout)] == [r.id for r in all_rules()]
    code, stdout, _ = run("rules", "--format", "markdown")
    assert stdout.splitlines()[0] == "| id | group | title |"
    assert len(stdout.splitlines()) == 2 + len(all_rules())
    code, stdout, stderr = run("rules", "NOPE999")
    assert (code, stdout) == (2, "")
    assert stderr == "error: no rule 'NOPE999'; `python -m msmagic rules` lists them\n"


def test_help_and_version():
    proc = cli("--help")
    assert proc.returncode == 0 and "port" in proc.stdout and "rules" in proc.stdout
    proc = cli("port", "--help")
    assert proc.returncode == 0
    assert "--check" in proc.stdout and "--in-place" in proc.stdout and "PATH.bak" in proc.stdout
    assert '"# %% cell N"' in proc.stdout
    import msmagic

    proc = cli("--version")
    assert (proc.returncode, proc.stdout) == (0, f"msmagic {msmagic.__version__}\n")
    code, _, stderr = run()
    assert code == 2 and "usage:" in stderr
