"""What ``python -m msmagic port`` writes: atomically, with numbered backups, nothing when
nothing changes, and the file's own bytes (encoding, BOM, line ends, JSON layout) kept.
Also how it treats odd inputs: FIFOs, ASCII-only stdout, errors escaping the port."""

from __future__ import annotations

import io
import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from msmagic import cli
from msmagic.cli import main
from msmagic.errors import PortError

ROOT = Path(__file__).resolve().parent.parent

PY_LINES = ["import torch", "# a comment that stays", "x = torch.ones(2, 3)", "", "print(x)  # keep"]
PORTED_LINES = ["import mindspore", "# a comment that stays", "x = mindspore.ops.ones((2, 3))", "",
                "print(x)  # keep"]


def run(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = main([str(a) for a in argv], stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def cli_proc(*argv, env=None, timeout=120):
    full = dict(os.environ, PYTHONPATH=str(ROOT))
    full.update(env or {})
    return subprocess.run([sys.executable, "-m", "msmagic", *map(str, argv)],
                          capture_output=True, env=full, timeout=timeout)


def listing(folder: Path) -> list:
    return sorted(p.name for p in folder.iterdir())


# --------------------------------------------------------------------------- .py bytes


@pytest.mark.parametrize("newline", ["\r\n", "\r", "\n"])
@pytest.mark.parametrize("bom", [b"", b"\xef\xbb\xbf"])
def test_py_keeps_bom_and_line_ends(tmp_path, newline, bom):
    src = tmp_path / "model.py"
    original = bom + newline.join(PY_LINES + [""]).encode()
    src.write_bytes(original)
    code, _, stderr = run("port", src, "--in-place")
    assert code == 0, stderr
    assert src.read_bytes() == bom + newline.join(PORTED_LINES + [""]).encode()
    assert (tmp_path / "model.py.bak").read_bytes() == original


def test_py_mixed_line_ends_kept_line_by_line(tmp_path):
    src = tmp_path / "mixed.py"
    original = b"import torch\r\n# windows line\r\nx = torch.ones(2, 3)\ny = 1\r# old mac line\rz = 2"
    src.write_bytes(original)
    out = tmp_path / "out.py"
    code, _, stderr = run("port", src, "-o", out)
    assert code == 0, stderr
    # unchanged lines and lines rewritten in place keep their own line end (new lines
    # would take the most common one)
    assert out.read_bytes() == (b"import mindspore\r\n# windows line\r\nx = mindspore.ops.ones((2, 3))\n"
                                b"y = 1\r# old mac line\rz = 2")


def test_py_latin1_coding_declaration_is_honoured(tmp_path):
    src = tmp_path / "legacy.py"
    original = "# -*- coding: latin-1 -*-\n# caf\xe9 \xb5s\nimport torch\nx = torch.ones(2)\n".encode("latin-1")
    src.write_bytes(original)
    code, stdout, stderr = run("port", src)
    assert code == 0, stderr
    assert stdout == "# -*- coding: latin-1 -*-\n# caf\xe9 \xb5s\nimport mindspore\nx = mindspore.ops.ones(2)\n"
    code, _, stderr = run("port", src, "--in-place")
    assert code == 0, stderr
    assert src.read_bytes() == (
        "# -*- coding: latin-1 -*-\n# caf\xe9 \xb5s\nimport mindspore\nx = mindspore.ops.ones(2)\n"
    ).encode("latin-1")
    assert (tmp_path / "legacy.py.bak").read_bytes() == original


def test_py_bad_encodings_are_one_line_errors(tmp_path):
    no_cookie = tmp_path / "a.py"
    no_cookie.write_bytes(b"# caf\xe9\nimport torch\n")
    code, stdout, stderr = run("port", no_cookie, "--in-place")
    assert (code, stdout) == (2, "")
    assert stderr == (f"error: {no_cookie}: not valid UTF-8 text (invalid continuation byte at byte 5); "
                      "a file in another encoding needs a coding declaration (PEP 263)\n")

    unknown = tmp_path / "b.py"
    unknown.write_bytes(b"# coding: klingon\nimport torch\n")
    code, _, stderr = run("port", unknown)
    assert code == 2 and stderr == f"error: {unknown}: unknown encoding: klingon\n"
    assert listing(tmp_path) == ["a.py", "b.py"]


def test_py_with_nothing_to_port_is_not_written(tmp_path):
    src = tmp_path / "plain.py"
    src.write_bytes(b"import numpy as np\r\nx = np.ones(3)\r\n")
    os.utime(src, ns=(1_000_000_000, 1_000_000_000))
    code, _, stderr = run("port", src, "--in-place")
    assert code == 0
    assert f"{src}: nothing to port; not written, no backup" in stderr
    assert "wrote" not in stderr
    assert listing(tmp_path) == ["plain.py"]
    assert src.stat().st_mtime_ns == 1_000_000_000


def test_in_place_keeps_mode_and_symlink(tmp_path):
    real = tmp_path / "real.py"
    real.write_text("import torch\nx = torch.ones(2)\n")
    real.chmod(0o640)
    link = tmp_path / "link.py"
    link.symlink_to(real)
    code, _, stderr = run("port", link, "--in-place")
    assert code == 0, stderr
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert real.read_text() == "import mindspore\nx = mindspore.ops.ones(2)\n"
    assert stat.S_IMODE(real.stat().st_mode) == 0o640
    backup = tmp_path / "real.py.bak"
    assert backup.read_text() == "import torch\nx = torch.ones(2)\n"
    assert stat.S_IMODE(backup.stat().st_mode) == 0o640


def test_file_changed_while_porting_is_not_overwritten(tmp_path, monkeypatch):
    src = tmp_path / "model.py"
    src.write_text("import torch\nx = torch.ones(2)\n")
    real_port_job = cli._port_job

    def port_then_user_saves(job, *args):
        real_port_job(job, *args)
        src.write_text("import torch\nx = torch.ones(5)  # edited meanwhile\n")

    monkeypatch.setattr(cli, "_port_job", port_then_user_saves)
    code, _, stderr = run("port", src, "--in-place")
    assert code == 2
    assert stderr == f"error: {src}: changed on disk while it was being ported; not written (run the port again)\n"
    assert src.read_text() == "import torch\nx = torch.ones(5)  # edited meanwhile\n"
    assert listing(tmp_path) == ["model.py"]


def test_write_failure_leaves_target_and_no_temporary_file(tmp_path, monkeypatch):
    src = tmp_path / "model.py"
    src.write_text("import torch\nx = torch.ones(2)\n")

    def disk_full(src_path, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(cli.os, "replace", disk_full)
    code, _, stderr = run("port", src, "-o", tmp_path / "out.py")
    assert code == 2 and stderr == f"error: {tmp_path / 'out.py'}: No space left on device\n"
    assert listing(tmp_path) == ["model.py"]


# --------------------------------------------------------------------------- notebooks


def odd_layout_notebook(version_minor=4):
    """A format-4 notebook as some other tool might write it: keys in a non-canonical order,
    no cell ids, mixed source forms (a string and lists), outputs to clear."""
    cells = [
        {"source": "import torch\nx = torch.ones(2, 3)", "metadata": {"tags": ["a"]},
         "outputs": [{"output_type": "stream", "text": ["old\n"], "name": "stdout"}],
         "execution_count": 7, "cell_type": "code"},
        {"cell_type": "markdown", "source": ["caf\u00e9 \u2014 torch.nn\n", "text"], "metadata": {}},
        {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
         "source": ["import numpy as np\n", "a = np.ones(3)  # caf\u00e9"]},
        {"cell_type": "code", "execution_count": 3, "metadata": {}, "source": ["y = torch.zeros(4)"],
         "outputs": [{"output_type": "execute_result", "data": {"text/plain": ["tensor"]},
                      "metadata": {}, "execution_count": 3}]},
        {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": []},
    ]
    return {"nbformat_minor": version_minor, "cells": cells,
            "metadata": {"language_info": {"name": "python"}, "kernelspec": {"display_name": "Python 3", "name": "python3"}},
            "nbformat": 4}


def ported_odd_layout(nb):
    nb = json.loads(json.dumps(nb))
    c1, _, _, c4, _ = nb["cells"]
    c1.update(source="import mindspore\nx = mindspore.ops.ones((2, 3))", outputs=[], execution_count=None)
    c4.update(source=["y = mindspore.ops.zeros(4)"], outputs=[], execution_count=None)
    return nb


@pytest.mark.parametrize("dump", [
    dict(indent=2, ensure_ascii=True),
    dict(indent=4, ensure_ascii=False),
    dict(indent="\t", ensure_ascii=False),
    dict(separators=(",", ":"), ensure_ascii=False),
    dict(ensure_ascii=True),
], ids=["indent2-ascii", "indent4", "tabs", "minified", "one-line"])
def test_notebook_layout_kept_byte_for_byte(tmp_path, dump):
    nb = odd_layout_notebook()
    src = tmp_path / "odd.ipynb"
    src.write_text(json.dumps(nb, **dump), encoding="utf-8")  # no trailing newline
    code, _, stderr = run("port", src, "--in-place")
    assert code == 0, stderr
    assert src.read_text(encoding="utf-8") == json.dumps(ported_odd_layout(nb), **dump)
    new = json.loads(src.read_text(encoding="utf-8"))
    assert all("id" not in c for c in new["cells"])  # no ids added to a 4.4 notebook


def test_notebook_crlf_bom_and_escaped_slash_kept(tmp_path):
    nb = odd_layout_notebook()
    nb["cells"][1]["source"][1] = "see a/b"
    text = json.dumps(nb, indent=1, ensure_ascii=False).replace("\n", "\r\n") + "\r\n"
    text = text.replace("a/b", "a\\/b")  # an escape json.dumps never writes
    src = tmp_path / "win.ipynb"
    src.write_bytes(b"\xef\xbb\xbf" + text.encode("utf-8"))
    code, _, stderr = run("port", src, "--in-place")
    assert code == 0, stderr
    expected = json.dumps(ported_odd_layout(nb), indent=1, ensure_ascii=False).replace("\n", "\r\n") + "\r\n"
    expected = expected.replace("a/b", "a\\/b")
    assert src.read_bytes() == b"\xef\xbb\xbf" + expected.encode("utf-8")


def test_notebook_cells_with_ids_keep_them_and_untouched_lines_keep_their_escapes(tmp_path):
    nb = odd_layout_notebook(version_minor=5)
    for i, cell in enumerate(nb["cells"]):
        cell["id"] = f"cell-{i}"
    nb["cells"][0]["source"] = ["import torch\n", "s = 'caf\u00e9'\n", "x = torch.ones(2, 3)"]
    text = json.dumps(nb, indent=1, ensure_ascii=False)
    text = text.replace('"s = \'caf\u00e9\'\\n"', '"s = \'caf\\u00e9\'\\n"')  # one line escaped, one not
    src = tmp_path / "ids.ipynb"
    src.write_text(text, encoding="utf-8")
    out = tmp_path / "out.ipynb"
    code, _, stderr = run("port", src, "-o", out)
    assert code == 0, stderr
    written = out.read_text(encoding="utf-8")
    assert '"s = \'caf\\u00e9\'\\n"' in written  # the unchanged line keeps its escape
    assert [c["id"] for c in json.loads(written)["cells"]] == [f"cell-{i}" for i in range(5)]
    assert json.loads(written)["cells"][0]["source"] == [
        "import mindspore\n", "s = 'caf\u00e9'\n", "x = mindspore.ops.ones((2, 3))"]


def test_v3_notebook_ported_and_kept_v3(tmp_path):
    nb = {
        "metadata": {"name": "old"}, "nbformat": 3, "nbformat_minor": 0,
        "worksheets": [
            {"metadata": {}, "cells": [
                {"cell_type": "heading", "level": 1, "metadata": {}, "source": ["Old notebook"]},
                {"cell_type": "code", "collapsed": False, "input": ["import torch\n", "x = torch.ones(2)"],
                 "language": "python", "metadata": {}, "prompt_number": 1,
                 "outputs": [{"output_type": "stream", "stream": "stdout", "text": ["old\n"]}]},
            ]},
            {"metadata": {}, "cells": [
                {"cell_type": "code", "collapsed": False, "input": "torch.zeros(2)", "language": "julia",
                 "metadata": {}, "outputs": []},
                {"cell_type": "code", "collapsed": False, "input": "y = torch.zeros(3)",
                 "language": "python", "metadata": {}, "outputs": []},
            ]},
        ],
    }
    src = tmp_path / "v3.ipynb"
    src.write_text(json.dumps(nb, indent=1))
    code, stdout, stderr = run("port", src, "--in-place")
    assert code == 0, stderr
    expected = json.loads(json.dumps(nb))
    code_cell = expected["worksheets"][0]["cells"][1]
    code_cell.update(input=["import mindspore\n", "x = mindspore.ops.ones(2)"], outputs=[], prompt_number=None)
    expected["worksheets"][1]["cells"][1]["input"] = "y = mindspore.ops.zeros(3)"
    assert src.read_text() == json.dumps(expected, indent=1)
    assert f"{src} cell 3: skipped (julia cell left as it is)" in stderr
    assert f"{src} cell 4: 1 edit" in stderr


@pytest.mark.parametrize("content, message", [
    ('{"nbformat": true, "cells": []}', "invalid notebook: no integer 'nbformat' version"),
    ('{"nbformat": 4.0, "cells": []}', "invalid notebook: no integer 'nbformat' version"),
    ('{"nbformat": 5, "nbformat_minor": 0, "cells": []}',
     "notebook format 5 is not supported (msmagic reads formats 3 and 4)"),
    ('{"nbformat": 3, "nbformat_minor": 0, "cells": []}',
     "invalid notebook: 'worksheets' is not a list of worksheets with cells"),
    ("[" * 100_000 + "]" * 100_000, "invalid notebook: JSON nested too deeply"),
])
def test_more_invalid_notebooks(tmp_path, content, message):
    bad = tmp_path / "bad.ipynb"
    bad.write_text(content)
    code, stdout, stderr = run("port", bad, "--in-place")
    assert (code, stdout) == (2, "")
    assert stderr == f"error: {bad}: {message}\n"
    assert listing(tmp_path) == ["bad.ipynb"]


def test_notebook_with_nothing_to_port_is_not_written(tmp_path):
    nb = odd_layout_notebook()
    del nb["cells"][3], nb["cells"][0]
    src = tmp_path / "numpy.ipynb"
    src.write_text(json.dumps(nb, indent=2))
    other = tmp_path / "torch.py"
    other.write_text("import torch\n")
    code, _, stderr = run("port", tmp_path, "--in-place")
    assert code == 0, stderr
    assert src.read_text() == json.dumps(nb, indent=2)
    assert listing(tmp_path) == ["numpy.ipynb", "torch.py", "torch.py.bak"]
    assert f"{src}: nothing to port; not written, no backup" in stderr
    assert f"wrote {other} (backup {other}.bak)" in stderr


# --------------------------------------------------------------------------- odd inputs


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_fifo_is_skipped_in_a_directory_and_refused_alone(tmp_path):
    folder = tmp_path / "src"
    folder.mkdir()
    os.mkfifo(folder / "x.py")
    (folder / "y.py").write_text("import torch\nx = torch.ones(2)\n")
    # no process ever opens the FIFO for writing: reading it would block forever
    proc = cli_proc("port", folder, "--check", timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert f"{folder / 'x.py'}: skipped (a named pipe (FIFO), not a regular file)".encode() in proc.stderr
    assert b"msmagic: 1 file, 1 cell ported" in proc.stderr

    proc = cli_proc("port", folder / "x.py", timeout=60)
    assert proc.returncode == 2
    assert proc.stderr == (f"error: {folder / 'x.py'}: a named pipe (FIFO), not a regular file; "
                           "msmagic ports regular files only\n").encode()

    os.unlink(folder / "y.py")
    proc = cli_proc("port", folder, "--check", timeout=60)
    assert proc.returncode == 2
    assert proc.stderr == f"error: {folder}: no .py or .ipynb files in this directory\n".encode()


def test_fifo_swapped_in_after_listing_is_not_read(tmp_path):
    fifo = tmp_path / "late.py"
    os.mkfifo(fifo)
    with pytest.raises(cli.CliError, match="not a regular file; msmagic ports regular files only"):
        cli._read(fifo, str(fifo))


@pytest.mark.parametrize("env", [{"PYTHONIOENCODING": "ascii"}, {"LANG": "C", "LC_ALL": "C", "PYTHONIOENCODING": ""}],
                         ids=["PYTHONIOENCODING=ascii", "LANG=C"])
def test_ascii_only_stdout_does_not_raise(tmp_path, env):
    src = tmp_path / "caf\u00e9.py"
    src.write_text("# caf\u00e9 \u2014 \u6f22\u5b57\nimport torch\nx = torch.ones(2)\n", encoding="utf-8")
    proc = cli_proc("port", src, env=env)
    assert proc.returncode == 0, proc.stderr
    assert b"Traceback" not in proc.stderr
    assert b"import mindspore\nx = mindspore.ops.ones(2)\n" in proc.stdout
    if env.get("PYTHONIOENCODING") == "ascii":
        assert proc.stdout.startswith(b"# caf\\xe9 \\u2014 \\u6f22\\u5b57\n")
    proc = cli_proc("port", src, "--format", "json", env=env)
    assert proc.returncode == 0 and json.loads(proc.stdout)["files"][0]["code"].startswith("# caf\u00e9")


@pytest.mark.parametrize("error, message", [
    (RecursionError("maximum recursion depth exceeded"),
     "nested too deeply for msmagic to port (Python's recursion limit was reached); nothing was written"),
    (MemoryError(), "out of memory while porting; nothing was written"),
    (PortError("too deep for the port\nsecond line"), "too deep for the port"),
])
def test_errors_escaping_the_port_are_one_line(tmp_path, monkeypatch, error, message):
    import msmagic.engine.pipeline as pipeline

    def failing_port(source, *, session=None):
        raise error

    monkeypatch.setattr(pipeline, "port", failing_port)
    src = tmp_path / "deep.py"
    src.write_text("x = 1\n")
    code, stdout, stderr = run("port", src, "--in-place", "--check")
    assert (code, stdout) == (2, "")  # 2, not 1 (which --check uses for findings)
    assert stderr == f"error: {src}: {message}\n"
    assert listing(tmp_path) == ["deep.py"]


def test_unexpected_error_is_one_line(tmp_path, monkeypatch):
    def broken(*args):
        raise KeyError("cell")

    monkeypatch.setattr(cli, "_port_job", broken)
    src = tmp_path / "a.py"
    src.write_text("x = 1\n")
    code, _, stderr = run("port", src)
    assert code == 2
    assert stderr == ("error: internal error in msmagic: KeyError: 'cell' "
                      "(set MSMAGIC_TRACEBACK=1 to see the traceback)\n")


def test_deep_valid_input_via_subprocess_is_never_a_traceback(tmp_path):
    src = tmp_path / "deep.py"
    terms = " + ".join(f"x{i}" for i in range(400))
    chain = "if a == 0:\n    pass\n" + "".join(f"elif a == {i}:\n    pass\n" for i in range(1, 400))
    src.write_text(f"import torch\ny = {terms}\n{chain}z = torch.ones(2)\n")
    proc = cli_proc("port", src, "--check", timeout=300)
    assert b"Traceback" not in proc.stderr
    if proc.returncode == 2:  # the engine gave up: one line, naming the file
        assert proc.stderr.count(b"\n") == 1 and proc.stderr.startswith(f"error: {src}: ".encode())
    else:
        assert proc.returncode == 0 and b"msmagic: 1 file, 1 cell ported" in proc.stderr


# --------------------------------------------------------------------------- SIGKILL


def test_sigkill_during_in_place_leaves_original_or_complete_port(tmp_path):
    """>= 20 kills at random moments of ``port NB --in-place`` on a ~4 MiB notebook."""
    from benchmarks import kill_in_place

    start = time.monotonic()
    outcomes = kill_in_place.run(trials=20, size=3 * 2**20, seed=11, workdir=tmp_path)
    failed = [(i, o.how, o.target) for i, o in enumerate(outcomes) if not o.survived]
    assert len(outcomes) == 20 and failed == []
    killed = [o for o in outcomes if not o.exited_first]
    assert len(killed) >= 10
    # the first change is the backup's temporary file appearing: that kill lands while
    # files are being written, and leaves a temporary file or a backup behind
    first = outcomes[0]
    assert first.how == "change 1" and not first.exited_first and first.target == "original"
    assert first.leftovers or first.backups
    assert time.monotonic() - start < 120


@pytest.mark.parametrize("old", [["a = 1"], [], ["a = 1\n", "b = 2"]], ids=["one line", "empty", "two lines"])
@pytest.mark.parametrize("dump", [dict(indent=1), dict(indent=3), dict(separators=(",", ":")), dict()],
                         ids=["indent1", "indent3", "minified", "one-line"])
def test_new_source_list_follows_the_layout_around_it(old, dump):
    """A cell whose source grows or shrinks gets the list layout json.dumps would give it."""
    doc = {"cells": [{"cell_type": "code", "source": old}], "nbformat": 4}
    text = json.dumps(doc, **dump)
    start = text.index('"source": ' if "separators" not in dump else '"source":') + len('"source":')
    start = cli._ws(text, start)
    end = json.JSONDecoder().raw_decode(text, start)[1]
    new = "x = 1\ny = 2\nz = 3"
    compact = "," if "separators" in dump else ", "
    written, value = cli._source_json(text, (start, end), new, ensure_ascii=True, compact=compact)
    assert value == ["x = 1\n", "y = 2\n", "z = 3"]
    assert text[:start] + written + text[end:] == json.dumps(
        {"cells": [{"cell_type": "code", "source": value}], "nbformat": 4}, **dump)


def test_sigint_while_writing_is_one_line_and_leaves_no_temporary_file(tmp_path):
    from benchmarks import kill_in_place

    nb = tmp_path / kill_in_place.NAME
    original = kill_in_place.build_notebook(nb, 3 * 2**20)
    before = kill_in_place._snapshot(tmp_path)
    proc = subprocess.Popen(kill_in_place._command(nb), env=kill_in_place._env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    while proc.poll() is None and kill_in_place._snapshot(tmp_path) == before:
        pass  # the first change: the backup's temporary file appears
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr
    assert stderr == b"msmagic: interrupted; files already written are complete, the others untouched\n"
    assert nb.read_bytes() == original
    assert listing(tmp_path) in (["nb.ipynb"], ["nb.ipynb", "nb.ipynb.bak"])
    if (tmp_path / "nb.ipynb.bak").exists():
        assert (tmp_path / "nb.ipynb.bak").read_bytes() == original
