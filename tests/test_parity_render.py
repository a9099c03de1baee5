"""Rendering of ParityReport: text/plain, text/html, the widget and the mimebundle.

Reports are built by hand around a real port (the engine is fast and complete), so
these tests need neither torch nor mindspore and do not depend on the runner.
"""

from __future__ import annotations

import html as html_lib
import re

import pytest

import msmagic
from msmagic.parity_check.compare import DIFFERS, MATCH, NOT_COMPARABLE, ONLY_MS, ONLY_TORCH, Row
from msmagic.parity_check.report import Divergence, ParityReport, StatementError
from msmagic.render import mimebundle, rule_info
from msmagic.render.parity import (
    format_number,
    make_parity_widget,
    render_parity_text,
)
from msmagic.render.parity import render_parity_html as styled_parity_html
from msmagic.result import PortResult, Statement

_STYLE_ATTR = re.compile(r' style="[^"]*"')


def render_parity_html(report, view=None) -> str:
    """The parity HTML without its inline ``style`` attributes: the structure tests below
    read classes and text; test_html_meaning_survives_without_the_stylesheet checks the
    styles."""
    return _STYLE_ATTR.sub("", styled_parity_html(report, view=view))

# Changes on lines 1-5 (one diff hunk, with context up to line 8); lines 9-12 unchanged.
SOURCE = """\
import torch
import torch.nn as nn
torch.manual_seed(0)
layer = nn.Linear(3, 4)
x = torch.randn(2, 3)
y = layer(x)
label = "<b>&amp;</b>"
a = 1
b = 2
c = 3
d = 4
z = y * 2
"""


@pytest.fixture(scope="module")
def port() -> PortResult:
    return msmagic.port(SOURCE)


def rows() -> list[Row]:
    return [
        Row("layer.weight", MATCH, (4, 3), "torch.float32", (4, 3), "Float32", 0.0, 0.0, 3),
        Row("layer.bias", MATCH, (4,), "torch.float32", (4,), "Float32", 3.1e-07, 2.5e-06, 3),
        Row("y", DIFFERS, (2, 4), "torch.float32", (2, 4), "Float32", 0.0123, 0.5, 5),
        Row("z", ONLY_TORCH, (2, 4), "torch.float32", None, "", None, None, 11),
        Row("w", ONLY_MS, None, "", (3,), "Int64", None, None, 11),
        Row("label", NOT_COMPARABLE, (2,), "list", (2,), "tuple", None, None, 6, note="different structure"),
    ]


def make_report(port, **kw) -> ParityReport:
    fields = dict(
        port=port,
        rows=rows(),
        synchronised=["layer (parameters)", "x"],
        bridged=["data"],
        first_divergence=Divergence(3, (4, 4), (4, 4), ["layer.bias"], ["LAY001"], max_abs=0.25),
        timings={"PyTorch": 0.0123, "MindSpore": 0.5, "total": 1.25},
        notes=["Values bound by `print` are not compared <i>"],
        options={"seed": 7},
    )
    fields.update(kw)
    return ParityReport(**fields)


def ms_error(statement=5, lines=(6, 6)) -> StatementError:
    return StatementError(
        side="MindSpore",
        statement=statement,
        lines=lines,
        type="TypeError",
        message="unsupported operand <Tensor> & 'int'",
        traceback=(
            "\x1b[31mTraceback\x1b[0m (most recent call last):\n"
            '  File "<mindspore statement 6>", line 1, in <module>\n'
            "TypeError: unsupported operand <Tensor> & 'int'\n"
        ),
    )


def torch_error() -> StatementError:
    return StatementError(
        side="PyTorch",
        statement=5,
        lines=(6, 6),
        type="RuntimeError",
        message="mat1 and mat2 shapes cannot be multiplied",
        traceback='  File "<pytorch statement 6>", line 1\nRuntimeError: mat1 and mat2 shapes cannot be multiplied',
    )


def block(html: str, cls: str, end: str) -> str:
    start = html.index(f'class="{cls}')
    return html[start : html.index(end, start) + len(end)]


def marked(html: str, mark: str) -> list[tuple[str, int]]:
    """(side, line) of every diff code cell with class ``mark``."""
    out = []
    for classes, attrs in re.findall(r'<td class="(msm-code[^"]*)"(?: title="[^"]*")?((?: data-\w+="\d+")*)(?: style="[^"]*")?>', html):
        if mark in classes.split():
            out += [(side, int(n)) for side, n in re.findall(r'data-(old|new)="(\d+)"', attrs)]
    return sorted(set(out))


# ----------------------------------------------------------------------------- numbers


@pytest.mark.parametrize(
    "value, text",
    [(None, "\u2014"), (0.0, "0"), (3.1e-07, "3.1e-07"), (0.0123, "0.0123"), (0.5, "0.5"),
     (12345678.0, "1.2e+07"), (float("inf"), "inf"), (float("nan"), "nan"), (2, "2")],
)
def test_numbers_are_formatted_compactly(value, text):
    assert format_number(value) == text


# ----------------------------------------------------------------------------- text/plain


def test_text_has_summary_table_divergence_synced_timings_notes(port):
    text = render_parity_text(make_report(port))
    lines = text.splitlines()
    assert lines[0].startswith("msmagic parity: ")
    assert "[differs]" in lines[0] and "device CPU" in lines[0] and "seed 7" in lines[0]
    header = next(l for l in lines if l.startswith("name "))
    for col in ("PyTorch", "MindSpore", "max |\u0394|", "max rel \u0394", "status"):
        assert col in header
    status_col = header.index("status")
    # plain values first, then module parameters; the MindSpore-only name is listed apart
    shown = [r for r in rows() if r.status != ONLY_MS]
    shown = [r for r in shown if "." not in r.name] + [r for r in shown if "." in r.name]
    table = lines[lines.index(header) + 1 : lines.index(header) + 1 + len(shown)]
    for line, row in zip(table, shown):
        assert line.startswith(row.name + " ")
        assert line[status_col:].startswith(row.status)  # aligned
    assert [line.split()[0] for line in table] == ["y", "z", "label", "layer.weight", "layer.bias"]
    assert "(4, 3) torch.float32" in table[3] and "(4, 3) Float32" in table[3]
    assert "3.1e-07" in table[4] and "0.0123" in table[0]
    assert "not comparable (different structure)" in table[2]
    assert "only in the MindSpore code (not compared): w" in text
    assert "first divergence: statement 4 (PyTorch line 4 -> MindSpore line 4): layer.bias" in text
    assert "  - layer = nn.Linear(3, 4)" in text and "  + layer = nn.Dense(3, 4)" in text
    assert f"rule LAY001 {rule_info('LAY001').title}" in text
    assert "synchronised, not compared:\n  - layer (parameters)\n  - x\n" in text
    assert "bridged from your namespace: data" in text
    assert "time: PyTorch 12.3 ms, MindSpore 500 ms, total 1.25 s" in text
    assert "  - Values bound by `print` are not compared <i>" in text
    assert "\x1b[" not in text


def test_text_errors_have_statement_and_readable_traceback(port):
    text = render_parity_text(make_report(port, ms_error=ms_error(), first_divergence=None))
    assert text.splitlines()[0].startswith("msmagic parity: MindSpore side failed: TypeError  [error]")
    assert "MindSpore raised TypeError at statement 6 (line 6): unsupported operand <Tensor> & 'int'" in text
    assert "  > y = layer(x)" in text
    assert '  File "<mindspore statement 6>", line 1, in <module>' in text
    assert "\x1b[" not in text  # ANSI colours of the traceback dropped without colour


def test_text_colour_only_when_asked(port):
    report = make_report(port)
    assert "\x1b[" not in render_parity_text(report)
    coloured = render_parity_text(report, color=True)
    assert "\x1b[31mdiffers\x1b[0m" in coloured and "\x1b[32mmatch\x1b[0m" in coloured


def test_text_without_rows_or_divergence(port):
    text = render_parity_text(ParityReport(port=port))
    assert text.splitlines()[0] == (
        "msmagic parity: nothing compared  [nothing compared]  (device CPU, rtol 1e-05, atol 1e-05)"
    )
    assert "first divergence" not in text


# ----------------------------------------------------------------------------- text/html


@pytest.mark.parametrize(
    "kw, pill",
    [
        (dict(first_divergence=None), "differs"),
        (dict(rows=[rows()[0]], first_divergence=None), "ok"),
        (dict(rows=[], first_divergence=None), "empty"),
        (dict(rows=[rows()[0]]), "differs"),  # matched in the end, diverged on the way
        (dict(ms_error="err"), "error"),
        (dict(torch_error="err"), "error"),
        (dict(interrupted=True), "error"),
        (dict(timed_out="MindSpore"), "error"),
    ],
)
def test_html_status_pill(port, kw, pill):
    if kw.get("ms_error") == "err":
        kw["ms_error"] = ms_error()
    if kw.get("torch_error") == "err":
        kw["torch_error"] = torch_error()
    report = make_report(port, **kw)
    html = render_parity_html(report)
    assert f'<span class="msm-pill msm-pill-{pill}">' in html
    assert f'data-status="{pill}"' in html
    assert html_lib.escape(report.summary(), quote=True) in html


def test_html_table_has_every_row_with_its_status_class(port):
    html = render_parity_html(make_report(port))
    table = block(html, "msm-parity-table", "</table>")
    trs = re.findall(r'<tr class="(msm-status-[\w-]+)" data-name="([^"]+)"', table)
    # the cell's values first, then module parameters; ``w`` (MindSpore only) is listed apart
    assert trs == [
        ("msm-status-differs", "y"),
        ("msm-status-only", "z"),
        ("msm-status-not-comparable", "label"),
        ("msm-status-match", "layer.weight"),
        ("msm-status-match", "layer.bias"),
    ]
    assert re.search(r'class="msm-ms-only"[^>]*>Only in the MindSpore code.*<code>w</code>', html)
    for head in ("Name", "PyTorch", "MindSpore", "max |\u0394|", "max rel \u0394", "Status", "Note"):
        assert f">{head}</th>" in table
    assert "(4, 3) torch.float32" in table and "(4, 3) Float32" in table
    assert ">3.1e-07</td>" in table and ">2.5e-06</td>" in table and ">0.0123</td>" in table
    assert ">only on PyTorch side</td>" in table and ">only on MindSpore side</td>" not in table
    assert ">different structure</td>" in table
    # the Line column gives the input lines of the statement that bound the name
    assert re.search(r'data-name="y".*?<td class="msm-line">6</td>', table)
    # colour-coded in the style sheet
    for cls in ("match", "differs", "only", "not-comparable"):
        assert f"tr.msm-status-{cls}" in html


def test_html_first_divergence_names_statement_values_and_rules(port):
    assert any(e.rule_id == "LAY001" and e.statement == 3 for e in port.edits)
    html = render_parity_html(make_report(port))
    div = block(html, "msm-first-divergence", '<div class="msm-section">Synchronised')
    assert "First divergence: statement 4, PyTorch line 4 \u2192 MindSpore line 4" in div
    assert "<code>layer.bias</code>" in div and "0.25" in div
    assert "layer = nn.Linear(3, 4)" in div and "layer = nn.Dense(3, 4)" in div
    badges = re.findall(r'<details class="msm-badge[^"]*" data-rule="([^"]+)"', div)
    assert badges == ["LAY001"]
    rule = rule_info("LAY001")
    assert html_lib.escape(rule.title, quote=True) in div
    assert '<div class="msm-explanation"' in div and "<summary" in div
    first_words = " ".join(re.sub(r"`+", "", rule.why).split()[:2])
    assert first_words in re.sub(r"<[^>]+>", "", div)


def test_html_divergence_without_rules_says_so(port):
    report = make_report(port, first_divergence=Divergence(10, (12, 12), (12, 12), ["z"], []))
    div = block(render_parity_html(report), "msm-first-divergence", '<div class="msm-section">Synch')
    assert "No rule changed this statement" in div
    assert "msm-badge" not in div


@pytest.mark.parametrize("view", ["split", "unified"])
def test_html_marks_divergence_lines_in_the_diff(port, view):
    html = render_parity_html(make_report(port), view=view)
    diff = html[html.index('class="msm-parity-diff"') :]
    assert f"msm-view-{view}" in html
    assert marked(diff, "msm-divergence") == [("new", 4), ("old", 4)]
    hunk = diff[diff.index('class="msm-hunk msm-has-divergence"') :]
    assert 'data-rule="LAY001"' in hunk.split("</table>")[0]


def test_html_shows_an_unchanged_divergence_statement_outside_the_hunks(port):
    # line 12 is far from every change: the plain port diff does not show it
    report = make_report(port, first_divergence=Divergence(11, (12, 12), (12, 12), ["z"], []))
    html = render_parity_html(report)
    diff = html[html.index('class="msm-parity-diff"') :]
    assert marked(diff, "msm-divergence") == [("new", 12), ("old", 12)]
    assert 'class="msm-hunk msm-context msm-has-divergence" data-old="12-12" data-new="12-12"' in diff
    assert diff.index('class="msm-hunk msm-context') > diff.index('class="msm-hunk"')  # in line order
    # the unified view shows it too
    unified = render_parity_html(report, view="unified")
    assert marked(unified, "msm-divergence") == [("new", 12), ("old", 12)]


def test_html_errors_next_to_their_statement(port):
    report = make_report(port, ms_error=ms_error(), torch_error=torch_error(), first_divergence=None)
    html = render_parity_html(report)
    ms = block(html, "msm-error msm-error-mindspore", "</pre></div>")
    assert 'data-side="MindSpore"' in ms and 'data-lines="6"' in ms
    assert "MindSpore raised <code>TypeError</code> at statement 6 (line 6)" in ms
    assert "y = layer(x)" in ms  # the statement's code
    assert "unsupported operand &lt;Tensor&gt; &amp; &#x27;int&#x27;" in ms
    tb = re.search(r'<pre class="msm-traceback">(.*?)</pre>', ms, re.S).group(1)
    assert "\x1b" not in tb and tb.startswith("Traceback (most recent call last):")
    assert "&lt;mindspore statement 6&gt;" in tb
    pt = block(html, "msm-error msm-error-pytorch", "</pre></div>")
    assert "PyTorch raised <code>RuntimeError</code>" in pt and "mat1 and mat2" in pt
    # and the statements are marked in the diff (PyTorch on the left, MindSpore on the right)
    assert marked(html, "msm-error-line") == [("new", 6), ("old", 6)]


def test_html_synced_bridged_timings_notes(port):
    html = render_parity_html(make_report(port, timings={"torch": 0.002, "mindspore": 0.0004},
                                          synchronised=["layer (parameters)", "x", "w: random values copied"]))
    synced = block(html, "msm-synced", "</ul>")
    assert "<li><code>layer (parameters)</code></li>" in synced and "<li><code>x</code></li>" in synced
    assert '<li><code>w</code> <span class="msm-meta">random values copied</span></li>' in synced
    assert "Synchronised: copied, not compared" in html
    assert "<li><code>data</code></li>" in block(html, "msm-bridged", "</ul>")
    timings = block(html, "msm-timings", "</div></div>")
    assert "<b>PyTorch</b> 2 ms" in timings and "<b>MindSpore</b> 0.4 ms" in timings
    assert "total" not in timings
    notes = block(html, "msm-parity-notes", "</ul>")
    assert "<code>print</code>" in notes and "&lt;i&gt;" in notes


def test_html_banners_for_timeout_and_interrupt(port):
    html = render_parity_html(make_report(port, timed_out="MindSpore", options={"timeout": 2.5}))
    assert "The MindSpore side ran past --timeout (2.5 s) and was stopped" in html
    assert "timeout 2.5 s" in html
    assert "Interrupted (Ctrl-C)" in render_parity_html(make_report(port, interrupted=True))


def test_html_escapes_everything(port):
    report = make_report(
        port,
        rows=[Row("<script>alert(1)</script>", DIFFERS, (1,), "<dtype>", (1,), "x", 1.0, 1.0, 6, note="<b>")],
        first_divergence=Divergence(6, (7, 7), (7, 7), ["<script>"], []),
        synchronised=["<img src=x>"],
        ms_error=ms_error(),
    )
    html = render_parity_html(report)
    assert "<script" not in html.lower() and "<img" not in html
    assert '<td class="msm-note">&lt;b&gt;</td>' in html and "&lt;dtype&gt;" in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    # the cell's own code: escaped once, in the excerpt and in the diff
    assert "label = &quot;&lt;b&gt;&amp;amp;&lt;/b&gt;&quot;" in html


@pytest.mark.parametrize("view", ["split", "unified"])
def test_html_is_self_contained(port, view):
    html = render_parity_html(make_report(port, ms_error=ms_error()), view=view)
    assert not re.search(r"\bsrc\s*=", html)
    # links only: rule badges point at MindSpore's docs and the migration guide
    assert not re.search(r'href="(?!https://(?:www\.mindspore\.cn|gitee\.com)/)', html)
    assert "http://" not in html
    assert "@import" not in html and "url(" not in html
    assert html.count("<style>") == 1 and "<script" not in html


def test_html_view_defaults(port):
    assert "msm-view-split" in render_parity_html(make_report(port))
    assert "msm-view-unified" in render_parity_html(make_report(port, options={"view": "unified"}))
    with pytest.raises(ValueError):
        render_parity_html(make_report(port), view="sideways")


def test_html_against_diffs_the_explicit_code(port):
    explicit = "import mindspore\nlayer = mindspore.nn.Dense(3, 4)\n"
    # the runner hands the explicit code as the port result's code, with the plan of
    # what ran: each input statement paired with the explicit statement it ran with ...
    as_port = PortResult(source=SOURCE, code=explicit, statements=[
        Statement(i, (i + 1, i + 1), (i + 1, i + 1) if i < 2 else None) for i in range(12)])
    report = make_report(port=as_port, against=True, first_divergence=Divergence(3, (4, 4), (2, 2), ["layer.bias"], []))
    html = render_parity_html(report)
    assert "PyTorch vs explicit MindSpore code (--against)" in html
    assert "PyTorch \u2192 explicit MindSpore code (--against)" in html
    assert "mindspore.nn.Dense(3, 4)" in html
    assert ("new", 2) in marked(html, "msm-divergence")
    # the Line column comes from the PyTorch cell
    assert re.search(r'data-name="y".*?<td class="msm-line">6</td>', html)
    assert "(against explicit MindSpore code)" in render_parity_text(report).splitlines()[0]
    # ... or keep the port and put the code into the options
    report2 = make_report(port, against=True, options={"against_code": explicit}, first_divergence=None)
    html2 = render_parity_html(report2)
    assert "mindspore.nn.Dense(3, 4)" in re.sub(r"<[^>]+>", "", html2)  # code is highlighted
    assert 'data-rule="LAY001"' not in html2


# ----------------------------------------------------------------------------- dispatch, widget


def test_mimebundle_uses_the_parity_renderers(port):
    report = make_report(port)
    bundle = mimebundle(report)
    assert set(bundle) == {"text/plain", "text/html"}
    assert bundle["text/plain"] == render_parity_text(report)
    assert bundle["text/html"] == styled_parity_html(report)
    assert report._repr_mimebundle_() == bundle


def test_widget_toggles_the_diff_view(port):
    pytest.importorskip("ipywidgets")
    box = make_parity_widget(make_report(port, options={"view": "unified"}))
    toggle, body = box.children
    assert "msm-parity-widget" in box._dom_classes and "msm-view-toggle" in toggle._dom_classes
    assert toggle.value == "unified" and "msm-view-unified" in body.value
    assert "msm-parity-table" in body.value
    toggle.value = "split"
    assert "msm-view-split" in body.value and "msm-divergence" in body.value


def test_one_verdict_from_the_rows_the_table_shows(port):
    """A name only the MindSpore code binds neither fails the run nor makes a divergence;
    a divergence on the way makes the verdict differ even when the last values match."""
    helper = Row("grads", ONLY_MS, None, "", (3,), "Float32", None, None, 5)
    ok = make_report(port, rows=[rows()[0], helper], first_divergence=None)
    assert ok.verdict == ("ok", "ok") and ok.ok and ok.summary() == "all 1 compared values match"
    assert ok.ms_only == ["grads"] and [r.name for r in ok.compared_rows] == ["layer.weight"]
    diverged = make_report(port, rows=[rows()[0]])
    assert diverged.verdict[0] == "differs" and not diverged.ok
    assert diverged.summary() == "1 match; but layer.bias differed after statement 4 on the way"
    for report in (ok, diverged):
        html = styled_parity_html(report)
        kind = report.verdict[0]
        assert f'data-status="{kind}"' in html and f"msm-pill msm-pill-{kind}" in html
        assert render_parity_text(report).splitlines()[0].endswith(
            f"[{report.verdict[1]}]  (device CPU, rtol 1e-05, atol 1e-05, seed 7)")


def test_html_meaning_survives_without_the_stylesheet(port):
    """JupyterLab drops the <style> block of an untrusted notebook: alignment, status
    colours, the pill and marked diff lines are inline styles."""
    html = styled_parity_html(make_report(port))
    body = re.sub(r"<style>.*?</style>", "", html, flags=re.S)
    assert re.search(r'<span class="msm-pill msm-pill-differs" style="[^"]*background-color:rgba\(248', body)
    status = re.search(r'data-name="y".*?<td class="msm-status" style="([^"]*)"', body).group(1)
    assert "text-align:left" in status and "background-color:rgba(248, 81, 73, 0.26)" in status
    number = re.search(r'data-name="y".*?<td class="msm-num msm-mono" style="([^"]*)"', body).group(1)
    assert "text-align:right" in number
    assert re.search(r'class="msm-first-divergence" style="[^"]*border-left:4px solid', body)
    marked_td = re.search(r'<td class="msm-code[^"]*msm-divergence[^"]*"[^>]*style="([^"]*)"', body).group(1)
    assert marked_td.rstrip(";").endswith("box-shadow:inset 3px 0 0 rgba(248, 81, 73, 0.95)")


def test_a_sequence_gets_a_chart_of_both_sides_and_their_difference(port):
    t = [1.0 / (k + 1) for k in range(300)]
    m = [v + (1e-3 if k == 299 else 0.0) for k, v in enumerate(t)]  # the last point is always drawn
    row = Row("losses", DIFFERS, (300,), "list", (300,), "list", 1e-3, 6.6e-3, 5, series=(t, m))
    report = make_report(port, rows=[row] + rows()[:1], first_divergence=None)
    html = styled_parity_html(report)
    chart = block(html, "msm-chart", "</div></div>")
    assert 'data-name="losses"' in chart and "120 of 300 points shown" in chart
    strips = re.findall(r'<span style="display:inline-block;width:78px[^"]*">([^<]+)</span>', chart)
    assert strips == ["PyTorch", "MindSpore", "|\u0394|"]
    bars = re.findall(r'height:(\d+)px"></span>', chart)
    assert len(bars) == 3 * 120
    # the difference strip is flat but for the one point that differs
    delta = [int(h) for h in bars[240:]]
    assert delta.count(18) == 1 and set(delta) == {1, 18}
    assert "<svg" not in chart and "<script" not in chart
    text = render_parity_text(report)
    assert "  losses: PyTorch   \u2588" in text and "MindSpore \u2588" in text
    # module parameters get no chart
    assert 'data-name="layer.weight"' not in "".join(re.findall(r'class="msm-chart"[^>]*>', html))
