"""Renderers: text/plain, text/html, the widget and the mimebundle dispatch.

PortResults are built by hand here (the edit log is the contract), so these tests do
not depend on what the engine ports today.
"""

from __future__ import annotations

import re
import types

import pytest

from msmagic.render import compute_hunks, mimebundle
from msmagic.render.html import render_html
from msmagic.render.text import render_text
from msmagic.result import Edit, Finding, PortResult, Statement
from msmagic.rules import registry
from msmagic.rules.registry import Rule

WIDGET = "application/vnd.jupyter.widget-view+json"

# Two hunks far apart: imports at the top, the layer and forward() further down.
SOURCE = """\
import torch
import torch.nn as nn

SIZE = 3
OUT = 4
SCALE = 2
SHIFT = 1
NAME = "<script>alert('x')</script>"

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(SIZE, OUT)

    def forward(self, x):
        return self.fc(x).cuda()
"""

CODE = """\
import mindspore
import mindspore.nn as nn

SIZE = 3
OUT = 4
SCALE = 2
SHIFT = 1
NAME = "<script>alert('x')</script>"

class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(SIZE, OUT)

    def construct(self, x):
        # msmagic: TSTMSC Tensor.cuda has no MindSpore counterpart
        return self.fc(x).cuda()
"""

TEST_RULES = {
    "TSTIMP": Rule(
        id="TSTIMP",
        title="torch imports become mindspore imports",
        why="`torch.nn` layers live in `mindspore.nn`; the alias is kept.",
        seed="seeds/002 Basic Logic",
        example="import torch.nn as nn",
        group="Imports",
        reference="r2.4.10/api_mapping/pytorch_api_mapping.md",
    ),
    "TSTLAY": Rule(
        id="TSTLAY",
        title="Linear becomes Dense",
        why="MindSpore names the fully connected layer `nn.Dense` <b>and</b> initialises it differently.",
        seed="seeds/004 Network Basic Unit",
        example="nn.Linear(3, 4)",
        group="Layers",
        installed_note="Installed Dense takes has_bias, not bias.",
    ),
    "TSTCEL": Rule(
        id="TSTCEL",
        title="Module becomes Cell",
        why="A MindSpore network is a Cell and runs construct().",
        seed="seeds/004 Network Basic Unit: Cell",
        example="class N(nn.Module): pass",
        group="Cells",
    ),
    "TSTMSC": Rule(
        id="TSTMSC",
        title="CUDA device calls",
        why="MindSpore picks the device with set_context, not per tensor.",
        seed="seeds/002 Device",
        example="x.cuda()",
        group="Devices",
        finding_only=True,
    ),
}


@pytest.fixture(autouse=True)
def test_rules(monkeypatch):
    """Put the test rules into the registry for one test only."""
    try:
        registry._load()
    except Exception:  # the lead's rule modules may be mid-edit; our rules suffice
        pass
    for rule in TEST_RULES.values():
        monkeypatch.setitem(registry.RULES, rule.id, rule)


def make_result(**options) -> PortResult:
    return PortResult(
        source=SOURCE,
        code=CODE,
        edits=[
            Edit("TSTIMP", "torch imports become mindspore imports", (1, 1), (1, 1), api="torch", statement=0),
            Edit("TSTIMP", "torch imports become mindspore imports", (2, 2), (2, 2), api="torch.nn", statement=1),
            Edit("TSTCEL", "Module becomes Cell", (10, 10), (10, 10), api="torch.nn.Module", statement=8),
            Edit(
                "TSTLAY",
                "Linear becomes Dense",
                (13, 13),
                (13, 13),
                api="torch.nn.Linear",
                detail="in_features/out_features kept positionally",
                statement=8,
            ),
            Edit("TSTCEL", "Module becomes Cell", (15, 15), (15, 15), api="forward", detail="forward -> construct", statement=8),
        ],
        unsupported=[
            Finding(16, 25, "Tensor.cuda", "TSTMSC", "MindSpore sets the device globally", out_line=16, statement=8)
        ],
        notes=["Ported for the classic `mindspore.nn` API."],
        statements=[
            Statement(0, (1, 1), (1, 1)),
            Statement(1, (2, 2), (2, 2)),
            Statement(8, (10, 16), (10, 17)),
        ],
        options=dict(options),
    )


def hunk_blocks(html: str) -> list[str]:
    """The HTML of each msm-hunk, in order."""
    parts = html.split('<div class="msm-hunk"')[1:]
    return [p.split('<div class="msm-hunk"')[0] for p in parts]


def badge_ids(block: str) -> list[str]:
    return re.findall(r'<details class="msm-badge[^"]*" data-rule="([^"]+)"', block)


# ----------------------------------------------------------------------------- hunks


def test_hunks_match_the_unified_diff():
    result = make_result()
    hunks, unplaced = compute_hunks(result)
    headers = [line for line in result.diff().splitlines() if line.startswith("@@")]
    assert [h.header for h in hunks] == headers
    assert len(hunks) == 2
    assert unplaced == []
    assert hunks[0].rule_ids == ["TSTIMP"]
    assert hunks[1].rule_ids == ["TSTCEL", "TSTLAY", "TSTMSC"]


# ----------------------------------------------------------------------------- mimebundle


def test_mimebundle_outside_a_kernel_has_text_and_html():
    result = make_result()
    bundle = mimebundle(result)
    assert set(bundle) == {"text/plain", "text/html"}
    assert bundle["text/plain"] == render_text(result)
    assert bundle["text/html"] == render_html(result)
    # PortResult routes IPython's display through the same function
    assert result._repr_mimebundle_() == bundle


def test_mimebundle_include_and_exclude():
    result = make_result()
    assert set(mimebundle(result, include=["text/plain"])) == {"text/plain"}
    assert set(mimebundle(result, exclude=["text/html"])) == {"text/plain"}
    assert mimebundle(result, include=["image/png"]) == {}


def _fake_kernel_shell(monkeypatch):
    import IPython

    shell = types.SimpleNamespace(kernel=object())
    monkeypatch.setattr(IPython, "get_ipython", lambda: shell)
    return shell


def test_mimebundle_inside_a_kernel_adds_the_widget_view(monkeypatch):
    pytest.importorskip("ipywidgets")
    _fake_kernel_shell(monkeypatch)
    bundle = mimebundle(make_result())
    assert set(bundle) == {"text/plain", "text/html", WIDGET}
    assert bundle[WIDGET]["model_id"]
    assert set(mimebundle(make_result(), exclude=[WIDGET])) == {"text/plain", "text/html"}
    # a quiet result is only code: nothing to toggle
    assert WIDGET not in mimebundle(make_result(quiet=True))


def test_no_widget_in_a_shell_without_kernel(monkeypatch):
    import IPython

    monkeypatch.setattr(IPython, "get_ipython", lambda: types.SimpleNamespace())
    assert WIDGET not in mimebundle(make_result())


def test_dispatch_uses_the_objects_own_render_methods(monkeypatch):
    class Report:
        def _render_text(self, color=False):
            return f"report color={color}"

        def _render_html(self):
            return "<p>report</p>"

    bundle = mimebundle(Report())
    assert bundle == {"text/plain": "report color=False", "text/html": "<p>report</p>"}
    # an object nothing knows how to render still gets text/plain
    assert mimebundle(object(), include=["text/plain", "text/html"]).keys() == {"text/plain"}


def test_registered_renderers_cover_subclasses():
    class Special(PortResult):
        pass

    result = Special(source=SOURCE, code=CODE)
    assert "msmagic port: 0 edits" in mimebundle(result)["text/plain"]


# ----------------------------------------------------------------------------- text/plain


def test_text_has_header_diff_rules_findings_notes():
    text = render_text(make_result())
    lines = text.splitlines()
    assert lines[0] == "msmagic port: 5 edits by 4 rules, 1 finding"
    assert "-import torch.nn as nn" in lines
    assert "+import mindspore.nn as nn" in lines
    assert "-        self.fc = nn.Linear(SIZE, OUT)" in lines
    assert "+        self.fc = nn.Dense(SIZE, OUT)" in lines
    rule_lines = [line for line in lines if " rules: " in line]
    assert rule_lines == [
        "@@ -1,5 +1,5 @@ rules: TSTIMP torch imports become mindspore imports",
        "@@ -7,10 +7,11 @@ rules: TSTCEL Module becomes Cell; TSTLAY Linear becomes Dense; "
        "TSTMSC CUDA device calls",
    ]
    assert "  16:25 TSTMSC Tensor.cuda \u2014 MindSpore sets the device globally" in lines
    assert "  - Ported for the classic `mindspore.nn` API." in lines
    assert "\x1b[" not in text


def test_text_color_only_when_asked():
    colored = render_text(make_result(), color=True)
    assert "\x1b[31m-import torch\x1b[0m" in colored
    assert "\x1b[32m+import mindspore\x1b[0m" in colored


def test_text_quiet_is_only_the_code():
    assert render_text(make_result(quiet=True)) == CODE


def test_text_without_changes():
    result = PortResult(source="x = 1\n", code="x = 1\n", notes=["No PyTorch found in this cell."])
    text = render_text(result)
    assert text.splitlines()[:2] == ["msmagic port: 0 edits by 0 rules, 0 findings", "(no changes)"]
    assert "No PyTorch found" in text


# ----------------------------------------------------------------------------- text/html


def test_html_badges_follow_the_hunks():
    html = render_html(make_result())
    blocks = hunk_blocks(html)
    assert len(blocks) == 2
    assert badge_ids(blocks[0]) == ["TSTIMP"]
    assert badge_ids(blocks[1]) == ["TSTCEL", "TSTLAY", "TSTMSC"]
    assert "torch imports become mindspore imports" in blocks[0]
    assert "Linear becomes Dense" in blocks[1] and "Linear becomes Dense" not in blocks[0]


def test_html_badge_details_explain_the_rule():
    block = hunk_blocks(render_html(make_result()))[1]
    lay = block.split('data-rule="TSTLAY"')[1].split("</details>")[0]
    assert "<summary>" in lay
    assert 'class="msm-explanation"' in lay
    # the why, with `code` marked up and HTML in it escaped
    assert "MindSpore names the fully connected layer <code>nn.Dense</code> &lt;b&gt;and&lt;/b&gt;" in lay
    assert "Installed Dense takes has_bias, not bias." in lay
    assert "seeds/004 Network Basic Unit" in lay
    assert "torch.nn.Linear" in lay and "in_features/out_features kept positionally" in lay
    # the finding-only rule explains the finding
    msc = block.split('data-rule="TSTMSC"')[1].split("</details>")[0]
    assert "msm-badge-finding" in block.split('data-rule="TSTMSC"')[0].rsplit("<details", 1)[1]
    assert "MindSpore sets the device globally" in msc


def test_html_missing_rule_shows_id_and_edit_title(monkeypatch):
    monkeypatch.delitem(registry.RULES, "TSTLAY")
    block = hunk_blocks(render_html(make_result()))[1]
    lay = block.split('data-rule="TSTLAY"')[1].split("</details>")[0]
    assert "Linear becomes Dense" in lay
    assert "initialises it differently" not in lay


def _code_cell(html: str, side: str, line: int) -> str:
    match = re.search(rf'<td class="([^"]*)"[^>]* data-{side}="{line}"[^>]*>', html)
    assert match, f"no {side} cell for line {line}"
    return match.group(1)


@pytest.mark.parametrize("view", ["split", "unified"])
def test_html_marks_finding_lines(view):
    html = render_html(make_result(), view=view)
    assert "msm-finding-line" in _code_cell(html, "new", 16)  # the # msmagic: comment
    assert "msm-finding-line" in _code_cell(html, "old", 16)  # the .cuda() call typed
    assert "msm-finding-line" not in _code_cell(html, "new", 13)
    assert "msm-finding-line" not in _code_cell(html, "old", 13)
    assert "\u26a0" in html
    # the findings table
    table = html.split('<table class="msm-findings">')[1].split("</table>")[0]
    cells = re.findall(r"<td[^>]*>(.*?)</td>", table)
    assert cells[:2] == ["16", "25"]
    assert "Tensor.cuda" in cells[2] and "TSTMSC" in cells[3]
    assert cells[4] == "MindSpore sets the device globally"


def test_html_views():
    split = render_html(make_result())
    unified = render_html(make_result(), view="unified")
    assert "msm-view-split" in split and "msm-diff-split" in split
    assert "msm-view-unified" not in split and "msm-diff-unified" not in split
    assert "msm-view-unified" in unified and "msm-diff-unified" in unified
    assert "msm-diff-split" not in unified
    # split: PyTorch | MindSpore on one row, aligned by the opcodes
    rows = re.findall(r'<tr class="msm-row msm-row-replace">.*?</tr>', split)
    row = [r for r in rows if 'data-old="13"' in r]
    assert len(row) == 1 and 'data-new="13"' in row[0]
    assert 'nn.<span class="msm-chg">Linear</span>' in row[0]
    assert 'nn.<span class="msm-chg">Dense</span>' in row[0]
    # unified: one column with -/+ signs
    assert re.search(r'<td class="msm-sign msm-del">-</td><td class="msm-code msm-del" data-old="2">', unified)
    assert re.search(r'<td class="msm-sign msm-add">\+</td><td class="msm-code msm-add" data-new="2">', unified)
    # the option picks the default view; the argument wins over it
    assert "msm-view-unified" in render_html(make_result(view="unified"))
    assert "msm-view-split" in render_html(make_result(view="unified"), view="split")
    assert "msm-view-split" in render_html(make_result(view="bogus"))
    with pytest.raises(ValueError):
        render_html(make_result(), view="sideways")


def test_html_escapes_code_and_text():
    result = make_result()
    result.notes.append("<img src=x onerror=alert(1)>")
    html = render_html(result)
    assert "<script>" not in html
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in html
    assert "<img" not in html
    for view in ("split", "unified"):
        assert "<script" not in render_html(result, view=view).lower()


def test_html_is_self_contained():
    html = render_html(make_result()) + render_html(make_result(), view="unified")
    assert not re.search(r"\b(?:src|href)\s*=", html)
    assert "http://" not in html and "https://" not in html
    assert "@import" not in html and "url(" not in html
    assert html.count("<style>") == 2


def test_html_has_copyable_code_and_notes():
    html = render_html(make_result())
    block = html.split('<details class="msm-code-block">')[1].split("</details>")[0]
    pre = re.search(r"<pre[^>]*>(.*?)</pre>", block, re.S).group(1)
    import html as html_lib

    assert html_lib.unescape(pre) == CODE
    assert '<ul class="msm-notes">' in html and "<code>mindspore.nn</code>" in html
    assert "msmagic port: 5 edits, 4 rules, 1 finding" in html


def test_html_quiet_and_no_change():
    quiet = render_html(make_result(quiet=True))
    assert 'class="msm-hunk"' not in quiet and "<pre" in quiet
    same = render_html(PortResult(source="x = 1\n", code="x = 1\n"))
    assert 'class="msm-hunk"' not in same and "No changes" in same


def test_edit_outside_every_hunk_is_still_shown():
    result = make_result()
    result.edits.append(Edit("TSTCEL", "Module becomes Cell", (5, 5), (5, 5), api="torch.nn.Module"))
    hunks, unplaced = compute_hunks(result)
    assert [e.before for e in unplaced] == [(5, 5)]
    html = render_html(result)
    assert "Mapped without a visible change" in html
    assert "mapped without a visible change, rules: TSTCEL Module becomes Cell" in render_text(result)


# ----------------------------------------------------------------------------- widget


def test_widget_toggles_between_views():
    pytest.importorskip("ipywidgets")
    from msmagic.render.widget import make_widget

    box = make_widget(make_result(view="unified"))
    toggle, body = box.children
    assert "msm-widget" in box._dom_classes
    assert "msm-view-toggle" in toggle._dom_classes
    assert toggle.value == "unified"
    assert "msm-view-unified" in body.value
    toggle.value = "split"
    assert "msm-view-split" in body.value and "msm-view-unified" not in body.value
    assert '<details class="msm-badge"' in body.value


# ----------------------------------------------------------------------------- with the engine


def test_real_port_renders():
    from msmagic.engine.pipeline import port

    result = port("import torch\nimport torch.nn as nn\nx = torch.ones(2, 3)\n")
    bundle = mimebundle(result)
    assert bundle["text/plain"].startswith("msmagic port: ")
    assert "msm-root" in bundle["text/html"]
    for rule_id in {e.rule_id for e in result.edits}:
        assert f'data-rule="{rule_id}"' in bundle["text/html"]


def test_text_plain_is_coloured_only_in_a_terminal_ipython(monkeypatch):
    import IPython
    from IPython.terminal.interactiveshell import TerminalInteractiveShell

    monkeypatch.delenv("NO_COLOR", raising=False)
    terminal = TerminalInteractiveShell.__new__(TerminalInteractiveShell)
    monkeypatch.setattr(IPython, "get_ipython", lambda: terminal)
    assert "\x1b[31m-import torch\x1b[0m" in mimebundle(make_result())["text/plain"]
    assert "\x1b[" not in mimebundle(make_result())["text/html"]
    monkeypatch.setenv("NO_COLOR", "1")
    assert "\x1b[" not in mimebundle(make_result())["text/plain"]
    monkeypatch.delenv("NO_COLOR")
    monkeypatch.setattr(IPython, "get_ipython", lambda: types.SimpleNamespace(colors="neutral"))
    assert "\x1b[" not in mimebundle(make_result())["text/plain"]


def test_unified_marks_a_finding_on_an_unchanged_line():
    result = make_result()
    # a finding whose comment sits on an unchanged output line (line 12: super().__init__())
    result.unsupported.append(Finding(12, 9, "super", "TSTCEL", "checked by hand", out_line=12))
    html = render_html(result, view="unified")
    cell = re.search(r'<td class="([^"]*)" data-old="12" data-new="12">', html)
    assert cell and "msm-finding-line" in cell.group(1)


def test_every_rule_explanation_renders_its_code_spans():
    # explanations use reST ``code`` (possibly across a line break) and Markdown `code`
    from msmagic.render.html import _prose
    from msmagic.rules.registry import all_rules

    for rule in all_rules():
        for text in (rule.why, rule.installed_note):
            if text:
                html = _prose(text)
                assert "`" not in html, (rule.id, html)
                assert html.count("<code>") == html.count("</code>")
