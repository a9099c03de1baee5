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


# --------------------------------------------------------------------------- directory runs: symlinks


TORCH_PY = "import torch\nx = torch.ones(2)\n"
PORTED_PY = "import mindspore\nx = mindspore.ops.ones(2)\n"


def test_directory_run_does_not_follow_symlinks_out_of_the_directory(tmp_path):
    outside = tmp_path / "outside"
    (outside / "more").mkdir(parents=True)
    (outside / "victim.py").write_text(TORCH_PY)
    (outside / "more" / "other.py").write_text(TORCH_PY)
    src = tmp_path / "src"
    src.mkdir()
    (src / "a.py").write_text(TORCH_PY)
    (src / "link.py").symlink_to(outside / "victim.py")
    (src / "linked_folder").symlink_to(outside / "more")
    proc = cli_proc("port", src, "--in-place")
    assert proc.returncode == 0, proc.stderr
    assert (outside / "victim.py").read_text() == TORCH_PY
    assert (outside / "more" / "other.py").read_text() == TORCH_PY
    assert listing(outside) == ["more", "victim.py"] and listing(outside / "more") == ["other.py"]
    assert (src / "a.py").read_text() == PORTED_PY
    lines = proc.stderr.decode().splitlines()
    assert f"{src / 'link.py'}: skipped (a symbolic link to {outside / 'victim.py'}, outside {src}; " \
           "--follow-symlinks ports it)" in lines
    assert f"{src / 'linked_folder'}: skipped (a symbolic link to the directory {outside / 'more'}, " \
           f"outside {src}; --follow-symlinks ports what it holds)" in lines
    assert f"wrote {src / 'a.py'} (backup {src / 'a.py.bak'})" in lines and "wrote" not in proc.stderr.decode().replace(f"wrote {src / 'a.py'}", "")

    # asked for: the targets are ported where they are, the links stay links
    (src / "loop").symlink_to(src)  # a cycle is not walked round
    proc = cli_proc("port", src, "--in-place", "--follow-symlinks")
    assert proc.returncode == 0, proc.stderr
    assert (outside / "victim.py").read_text() == PORTED_PY
    assert (outside / "more" / "other.py").read_text() == PORTED_PY
    assert listing(outside) == ["more", "victim.py", "victim.py.bak"]
    assert (src / "link.py").is_symlink() and (src / "linked_folder").is_symlink()
    assert f"{src / 'loop'}: skipped (a symbolic link to the directory {src}, which holds it)" in proc.stderr.decode()


def test_symlink_inside_the_directory_is_ported_once(tmp_path):
    src = tmp_path / "src"
    (src / "sub").mkdir(parents=True)
    (src / "a.py").write_text(TORCH_PY)
    (src / "alias.py").symlink_to("a.py")
    (src / "sub" / "b.py").write_text(TORCH_PY)
    (src / "z_sub").symlink_to("sub")
    code, _, stderr = run("port", src, "--in-place")
    assert code == 0, stderr
    assert (src / "a.py").read_text() == PORTED_PY and (src / "sub" / "b.py").read_text() == PORTED_PY
    assert os.readlink(src / "alias.py") == "a.py"
    assert listing(src) == ["a.py", "a.py.bak", "alias.py", "sub", "z_sub"]
    assert listing(src / "sub") == ["b.py", "b.py.bak"]
    assert f"{src / 'alias.py'}: skipped (the same file as {src / 'a.py'}, which is ported (once))" in stderr
    assert "msmagic: 2 files, 2 cells ported" in stderr

    # followed, the linked folder's files are still ported once, under their own names
    (src / "a.py").write_text(TORCH_PY)
    (src / "sub" / "b.py").write_text(TORCH_PY)
    code, stdout, stderr = run("port", src, "--check", "--follow-symlinks", "--format", "json")
    assert code == 0, stderr
    doc = json.loads(stdout)
    assert [f["path"] for f in doc["files"]] == [str(src / "a.py"), str(src / "sub" / "b.py")]
    assert doc["skipped"] == [
        {"path": str(src / "alias.py"), "reason": f"the same file as {src / 'a.py'}, which is ported (once)"},
        {"path": str(src / "z_sub" / "b.py"),
         "reason": f"the same file as {src / 'sub' / 'b.py'}, which is ported (once)"}]


# --------------------------------------------------------------------------- directory runs: staging


def cli_proc_file_size_limit(*argv, max_bytes):
    """The CLI in a subprocess that may write no file beyond *max_bytes* (RLIMIT_FSIZE): a
    larger write fails with EFBIG, a real write error like a full disk's."""
    import resource

    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (max_bytes, max_bytes))

    env = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONDONTWRITEBYTECODE="1")
    return subprocess.run([sys.executable, "-m", "msmagic", *map(str, argv)], capture_output=True,
                          env=env, timeout=120, preexec_fn=limit)


def test_write_error_midway_through_a_directory_writes_nothing(tmp_path):
    from benchmarks import kill_in_place

    src = tmp_path / "src"
    src.mkdir()
    (src / "a.py").write_text(TORCH_PY)
    big = kill_in_place.build_notebook(src / "b.ipynb", 256 * 1024)
    (src / "c.py").write_text(TORCH_PY)
    before = {p.name: p.read_bytes() for p in src.iterdir()}

    proc = cli_proc_file_size_limit("port", src, "--in-place", max_bytes=64 * 1024)
    assert proc.returncode == 2
    assert proc.stderr.decode() == f"error: {os.path.realpath(src / 'b.ipynb')}: File too large\n"
    assert {p.name: p.read_bytes() for p in src.iterdir()} == before  # no file, backup or temporary

    out = tmp_path / "out"
    proc = cli_proc_file_size_limit("port", src, "-o", out, max_bytes=64 * 1024)
    assert proc.returncode == 2
    assert proc.stderr.decode() == f"error: {out / 'b.ipynb'}: File too large\n"
    assert not out.exists()  # the folder it made is gone too

    proc = cli_proc("port", src, "--in-place")  # with room, all of it
    assert proc.returncode == 0, proc.stderr
    assert (src / "b.ipynb.bak").read_bytes() == big and (src / "c.py").read_text() == PORTED_PY


def test_rename_failing_midway_names_what_was_written_and_exits_4(tmp_path, monkeypatch):
    src = tmp_path / "src"
    src.mkdir()
    for name in ("a.py", "b.py", "c.py"):
        (src / name).write_text(TORCH_PY)
    out = tmp_path / "out"
    out.mkdir()
    (out / "b.py").write_text("old\n")
    real_replace = os.replace

    def b_becomes_a_folder(tmp, target):
        if Path(target) == out / "b.py":  # something else puts a folder there meanwhile
            (out / "b.py").unlink()
            (out / "b.py").mkdir()
            (out / "b.py" / "keep").write_text("")
        return real_replace(tmp, target)  # a real EISDIR from the OS

    monkeypatch.setattr(cli.os, "replace", b_becomes_a_folder)
    code, _, stderr = run("port", src, "-o", out, "--force")
    assert code == cli.EXIT_WRITTEN_IN_PART == 4
    assert stderr == (f"wrote {out / 'a.py'}\n"
                      f"error: {out / 'b.py'}: Is a directory; 1 of 3 files were written (listed above), "
                      "the others are untouched\n")
    assert listing(out) == ["a.py", "b.py"] and (out / "a.py").read_text() == PORTED_PY
    assert listing(out / "b.py") == ["keep"]


def test_file_saved_while_a_directory_is_written_stops_there_and_exits_4(tmp_path, monkeypatch):
    src = tmp_path / "src"
    src.mkdir()
    for name in ("a.py", "b.py"):
        (src / name).write_text(TORCH_PY)
    real_replace = os.replace

    def user_saves_b(tmp, target):
        result = real_replace(tmp, target)
        if Path(target) == src / "a.py":
            (src / "b.py").write_text(TORCH_PY + "y = 1  # saved meanwhile\n")
        return result

    monkeypatch.setattr(cli.os, "replace", user_saves_b)
    code, _, stderr = run("port", src, "--in-place", "--quiet")
    assert code == 4
    assert stderr == (f"wrote {src / 'a.py'} (backup {src / 'a.py.bak'})\n"
                      f"error: {src / 'b.py'}: changed on disk while it was being ported; not written "
                      "(run the port again); 1 of 2 files were written (listed above), the others are untouched\n")
    assert (src / "b.py").read_text() == TORCH_PY + "y = 1  # saved meanwhile\n"
    assert listing(src) == ["a.py", "a.py.bak", "b.py"]


# --------------------------------------------------------------------------- temporary files


def temporaries(folder: Path) -> list:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(cli.TEMP_SUFFIX))


def start_port_and_wait_for_a_change(nb: Path):
    """A ``port NB --in-place`` subprocess, returned once a new name appears beside NB."""
    from benchmarks import kill_in_place

    before = {p.name for p in nb.parent.iterdir()}
    proc = subprocess.Popen(kill_in_place._command(nb), env=kill_in_place._env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    while proc.poll() is None and {p.name for p in nb.parent.iterdir()} <= before:
        pass
    assert proc.poll() is None, proc.communicate()
    return proc


def test_next_run_removes_temporaries_of_killed_runs_but_not_of_running_ones(tmp_path):
    from benchmarks import kill_in_place

    nb = tmp_path / kill_in_place.NAME
    original = kill_in_place.build_notebook(nb, 3 * 2**20)
    stopped = start_port_and_wait_for_a_change(nb)  # a run still going
    stopped.send_signal(signal.SIGSTOP)
    try:
        live = temporaries(tmp_path)
        assert live and all(name.startswith(f".nb.ipynb.{stopped.pid}.") for name in live)
        killed = start_port_and_wait_for_a_change(nb)  # a run killed while writing
        killed.kill()
        killed.communicate()
        dead = [name for name in temporaries(tmp_path) if name not in live]
        assert len(dead) == 1 and dead[0].startswith(f".nb.ipynb.{killed.pid}.")

        proc = cli_proc("port", nb, "--in-place")
        assert proc.returncode == 0, proc.stderr
        assert f"removed {tmp_path / dead[0]} (a temporary file left by an interrupted run)".encode() in proc.stderr
        assert temporaries(tmp_path) == live
    finally:
        stopped.send_signal(signal.SIGCONT)
    _, stderr = stopped.communicate(timeout=120)
    assert stopped.returncode == 2  # the notebook it read was ported meanwhile: it writes nothing
    assert stderr == (f"error: {nb}: changed on disk while it was being ported; not written "
                      "(run the port again)\n").encode()
    assert listing(tmp_path) == ["nb.ipynb", "nb.ipynb.bak"]
    assert (tmp_path / "nb.ipynb.bak").read_bytes() == original


SIGINT_SWEEP = r'''
import io, json, os, signal, sys, tempfile
from pathlib import Path
from msmagic import cli

os.fsync = lambda fd: None  # durability is not what is tested here; on a busy disk it is slow
fd, scratch = tempfile.mkstemp()  # tempfile's first call takes a lock a KeyboardInterrupt can strand
os.close(fd)
os.unlink(scratch)
folder = Path(sys.argv[1])
original = {"a.py": "import torch\nx = torch.ones(2)\n", "b.py": "import torch\ny = torch.zeros(3)\n"}
watched = {os.path.realpath(cli.__file__), os.path.realpath(tempfile.__file__)}
results, k = [], 1
while True:
    for p in folder.iterdir():
        p.unlink()
    for name, text in original.items():
        (folder / name).write_text(text)
    state = {"armed": False, "lines": 0, "sent": False}

    def local(frame, event, arg):
        if event == "return" and frame.f_code.co_name == "_write":
            state["armed"] = False  # the writing is over
        if event == "line" and state["armed"] and not state["sent"]:
            state["lines"] += 1
            if state["lines"] == k:
                state["sent"] = True
                os.kill(os.getpid(), signal.SIGINT)  # a real SIGINT at the k-th line written
        return local

    def tracer(frame, event, arg):
        if frame.f_code is tempfile.mkstemp.__code__:
            state["armed"] = True  # from the first temporary file to the end of _write
        if os.path.realpath(frame.f_code.co_filename) in watched:
            return local
        return None

    sys.settrace(tracer)
    try:
        code = cli.main(["port", str(folder), "--in-place", "--quiet"], stdout=io.StringIO(), stderr=io.StringIO())
    finally:
        sys.settrace(None)
    names = sorted(p.name for p in folder.iterdir())
    complete = all((folder / n).read_text() in (t, t.replace("torch.ones(2)", "mindspore.ops.ones(2)")
                   .replace("torch.zeros(3)", "mindspore.ops.zeros(3)").replace("import torch", "import mindspore"))
                   for n, t in original.items())
    backups = all((folder / n).read_text() == original[n[:-4]] for n in names if n.endswith(".bak"))
    results.append({"k": k, "sent": state["sent"], "code": code, "names": names,
                    "complete": complete and backups})
    if not state["sent"]:
        break
    k += 1
print(json.dumps(results))
'''


def test_sigint_at_any_moment_of_writing_leaves_no_temporary_file(tmp_path):
    """A real SIGINT at every line of the writing code in turn (a directory, --in-place)."""
    folder = tmp_path / "src"
    folder.mkdir()
    proc = subprocess.run([sys.executable, "-c", SIGINT_SWEEP, str(folder)], capture_output=True,
                          env=dict(os.environ, PYTHONPATH=str(ROOT)), timeout=600)
    assert proc.returncode == 0, proc.stderr
    results = json.loads(proc.stdout)
    assert len(results) > 50 and not results[-1]["sent"] and results[-1]["code"] == 0
    assert results[-1]["names"] == ["a.py", "a.py.bak", "b.py", "b.py.bak"]
    left = [(r["k"], r["names"]) for r in results if any(n.endswith(cli.TEMP_SUFFIX) for n in r["names"])]
    assert left == []
    assert all(r["complete"] for r in results)
    assert {r["code"] for r in results[:-1]} == {130}
