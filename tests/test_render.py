"""Renderers: text/plain, text/html, the widget and the mimebundle dispatch.

PortResults are built by hand here (the edit log is the contract), so these tests do
not depend on what the engine ports today.
"""

from __future__ import annotations

import re
import types
from html.parser import HTMLParser

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


def view_html(html: str, view: str = "split") -> str:
    """The HTML of one layout's ``<details>``."""
    start = html.index(f'<details class="msm-view msm-view-{view}"')
    rest = html[start:]
    other = [rest.find('<details class="msm-view ', 1), rest.find('<div class="msm-section"')]
    ends = [i for i in other if i > 0]
    return rest[: min(ends)] if ends else rest


def hunk_blocks(html: str, view: str = "split") -> list[str]:
    """The HTML of each msm-hunk of one layout, in order."""
    parts = view_html(html, view).split('<div class="msm-hunk"')[1:]
    return [p.split('<div class="msm-hunk"')[0] for p in parts]


class _Cells(HTMLParser):
    """Every element of the given class: (tag, attributes, text inside)."""

    def __init__(self, cls: str) -> None:
        super().__init__(convert_charrefs=True)
        self.cls = cls
        self.found: list[list] = []
        self.stack: list = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag in ("col", "br", "img", "input"):
            return
        hit = self.cls in (attrs.get("class") or "").split()
        if hit:
            self.found.append([tag, attrs, ""])
        self.stack.append(hit)

    def handle_endtag(self, tag):
        if tag in ("col", "br", "img", "input"):
            return
        if self.stack:
            self.stack.pop()

    def handle_data(self, data):
        depth = [i for i, hit in enumerate(self.stack) if hit]
        if depth:
            # text belongs to every open element of the class (they do not nest here)
            self.found[-1][2] += data


def elements(html: str, cls: str) -> list[list]:
    parser = _Cells(cls)
    parser.feed(html)
    return parser.found


def style_of(attrs: dict) -> dict:
    return {
        k.strip(): v.strip()
        for k, _, v in (d.partition(":") for d in (attrs.get("style") or "").split(";"))
        if k.strip()
    }


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


def test_mimebundle_inside_a_kernel_has_no_widget_view(monkeypatch):
    # what a notebook saves must render without the kernel: no widget model to lose
    pytest.importorskip("ipywidgets")
    _fake_kernel_shell(monkeypatch)
    bundle = mimebundle(make_result())
    assert set(bundle) == {"text/plain", "text/html"}
    assert 'class="msm-view msm-view-split"' in bundle["text/html"]
    assert 'class="msm-view msm-view-unified"' in bundle["text/html"]
    assert set(mimebundle(make_result(quiet=True))) == {"text/plain", "text/html"}


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
    assert "<summary " in lay
    assert 'class="msm-explanation"' in lay
    # the why, with `code` marked up and HTML in it escaped
    assert "MindSpore names the fully connected layer <code>nn.Dense</code> &lt;b&gt;and&lt;/b&gt;" in lay
    assert "Installed Dense takes has_bias, not bias." in lay
    assert "seeds/004 Network Basic Unit" in lay
    # the seed and the reference are links a user can follow
    assert (
        '<a href="https://www.mindspore.cn/docs/en/r2.4.10/migration_guide/model_development/'
        'model_and_cell.html"' in lay
    )
    assert "More: <code>python -m msmagic rules TSTLAY</code>" in lay
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
    table = html.split('<table class="msm-findings"')[1].split("</table>")[0]
    cells = re.findall(r"<td[^>]*>(.*?)</td>", table)
    assert cells[:2] == ["16", "25"]
    assert "Tensor.cuda" in cells[2] and "TSTMSC" in cells[3]
    assert cells[4] == "MindSpore sets the device globally"


def test_html_holds_both_views_and_opens_the_chosen_one():
    def opened(html):
        return re.findall(r'<details class="msm-view msm-view-(\w+)"[^>]*?( open)?>', html)

    split = render_html(make_result())
    unified = render_html(make_result(), view="unified")
    assert opened(split) == [("split", " open"), ("unified", "")]
    assert opened(unified) == [("split", ""), ("unified", " open")]
    assert "msm-diff-unified" not in view_html(split, "split")
    assert "msm-diff-split" not in view_html(split, "unified")
    # split: PyTorch | MindSpore on one row, aligned by the opcodes
    rows = re.findall(r'<tr class="msm-row msm-row-replace">.*?</tr>', view_html(split, "split"))
    row = [r for r in rows if 'data-old="13"' in r]
    assert len(row) == 1 and 'data-new="13"' in row[0]
    assert re.search(r'nn\.<span class="msm-chg" style="[^"]*rgba\(248, 81, 73[^"]*">Linear</span>', row[0])
    assert re.search(r'nn\.<span class="msm-chg" style="[^"]*rgba\(46, 160, 67[^"]*">Dense</span>', row[0])
    # unified: one column with -/+ signs
    uni = view_html(split, "unified")
    assert re.search(r'<td class="msm-sign msm-del" style="[^"]*">-</td><td class="msm-code msm-del" data-old="2"', uni)
    assert re.search(r'<td class="msm-sign msm-add" style="[^"]*">\+</td><td class="msm-code msm-add" data-new="2"', uni)
    # the option picks the open view; the argument wins over it
    assert opened(render_html(make_result(view="unified")))[1] == ("unified", " open")
    assert opened(render_html(make_result(view="unified"), view="split"))[0] == ("split", " open")
    assert opened(render_html(make_result(view="bogus")))[0] == ("split", " open")
    with pytest.raises(ValueError):
        render_html(make_result(), view="sideways")


@pytest.mark.parametrize("view", ["split", "unified"])
def test_code_lines_carry_their_style_inline(view):
    """Untrusted notebooks drop <style>: each code cell says white-space:pre, monospace
    comes from its table, and -/+ colours are inline; its text is the line, indentation
    included."""
    html = view_html(render_html(make_result()), view)
    for table in elements(html, "msm-diff"):
        assert "monospace" in style_of(table[1])["font-family"]
    cells = elements(html, "msm-code")
    assert len(cells) >= 10
    old, new = SOURCE.splitlines(), CODE.splitlines()
    for _, attrs, text in cells:
        style = style_of(attrs)
        assert style["white-space"] == "pre" and style["text-align"] == "left"
        classes = attrs["class"].split()
        if "msm-del" in classes:
            assert style["background-color"].startswith("rgba(248, 81, 73")
        elif "msm-add" in classes:
            assert style["background-color"].startswith("rgba(46, 160, 67")
        if "data-old" in attrs and "msm-empty" not in classes:
            assert text == old[int(attrs["data-old"]) - 1]
        elif "data-new" in attrs and "msm-empty" not in classes:
            assert text == new[int(attrs["data-new"]) - 1]
    indented = [t for _, a, t in cells if t.startswith("        return")]
    assert indented, "the indented return lines are shown with their indentation"


def test_code_is_highlighted_with_inline_colours():
    html = view_html(render_html(make_result()), "split")
    row = next(c for c in elements(html, "msm-code") if c[1].get("data-new") == "10")
    assert row[2] == "class Net(nn.Cell):"
    cell_html = re.search(r'data-new="10"[^>]*>(.*?)</td>', html).group(1)
    assert re.search(r'<span style="color:[^"]+">class </span>', cell_html)  # blanks join the word before
    assert re.search(r'<span style="color:[^"]+">Net</span>', cell_html)


def test_rules_are_marked_next_to_the_lines_they_rewrote():
    html = render_html(make_result())
    for view in ("split", "unified"):
        block = hunk_blocks(html, view)[1]
        marks = re.findall(
            r'<span class="msm-rule-mark" data-rule="(\w+)" title="([^"]*)"[^>]*>\w+</span>', block
        )
        assert ("TSTLAY", "TSTLAY: Linear becomes Dense") in marks
        assert ("TSTCEL", "TSTCEL: Module becomes Cell") in marks
        # the mark sits in the row of MindSpore line 13, where nn.Dense was written
        row = next(r for r in re.findall(r"<tr .*?</tr>", block) if 'data-new="13"' in r)
        assert 'data-rule="TSTLAY"' in row and 'data-rule="TSTCEL"' not in row
        # the full badge list is there, collapsed, in the hunk head
        head = re.search(r'<details class="msm-hunk-rules"[^>]*>(.*?)</summary>', block).group(1)
        assert "Explain 3 rules" in head
        assert '<details class="msm-hunk-rules" style="[^"]*" open' not in block


def test_reference_links_point_at_mindspores_pages():
    from msmagic.render.html import reference_links

    base = "https://www.mindspore.cn/docs/en/r2.4.10/note/api_mapping/"
    assert reference_links("r2.4.10/api_mapping/pytorch_diff/max.md; pytorch_diff/tensor_max.md") == [
        ("r2.4.10/api_mapping/pytorch_diff/max.md", base + "pytorch_diff/max.html"),
        ("pytorch_diff/tensor_max.md", base + "pytorch_diff/tensor_max.html"),
    ]
    assert reference_links("r2.4.10/api_mapping/pytorch_api_mapping.md (torch.optim)") == [
        ("r2.4.10/api_mapping/pytorch_api_mapping.md", base + "pytorch_api_mapping.html"),
        (" (torch.optim)", None),
    ]
    assert reference_links("r2.4.10/api_mapping/pytorch_diff/leaky_relu.md; LeakyReLU.md")[1] == (
        "LeakyReLU.md", base + "pytorch_diff/LeakyReLU.html"
    )
    assert reference_links("somewhere else") == [("somewhere else", None)]
    lay = render_html(make_result()).split('data-rule="TSTIMP"')[1].split("</details>")[0]
    assert f'<a href="{base}pytorch_api_mapping.html" target="_blank" rel="noopener"' in lay


def test_html_escapes_code_and_text():
    result = make_result()
    result.notes.append("<img src=x onerror=alert(1)>")
    html = render_html(result)
    assert "<script>" not in html
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in re.sub(r"<span[^>]*>|</span>", "", html)
    assert "<img" not in html
    for view in ("split", "unified"):
        assert "<script" not in render_html(result, view=view).lower()


def test_html_is_self_contained():
    html = render_html(make_result()) + render_html(make_result(), view="unified")
    assert not re.search(r"\bsrc\s*=", html)
    assert "<script" not in html.lower()
    assert "@import" not in html and "url(" not in html
    assert html.count("<style>") == 2
    # links only, to the public MindSpore / migration-guide pages
    hosts = set(re.findall(r'href="https://([^/"]+)/', html))
    assert hosts and hosts <= {"www.mindspore.cn", "gitee.com"}, hosts
    assert not re.search(r'href="(?!https://)', html)


def test_html_has_copyable_code_and_notes():
    import html as html_lib

    html = render_html(make_result())
    block = html.split('<details class="msm-code-block"')[1].split("</details>")[0]
    pre = re.search(r"<pre[^>]*>(.*?)</pre>", block, re.S).group(1)
    assert html_lib.unescape(re.sub(r"<[^>]+>", "", pre)) == CODE
    assert style_of(elements(block, "msm-code-pre")[0][1])["white-space"] == "pre"
    # the Copy button is hidden inline; only the <style> block (trusted output, where its
    # onclick also survives) shows it
    button = elements(block, "msm-copy")[0][1]
    assert style_of(button)["display"] == "none"
    assert "navigator.clipboard.writeText" in button["onclick"]
    assert re.search(r"\.msm-copy \{ display: inline-block !important; \}", html)
    assert '<ul class="msm-notes"' in html and "<code>mindspore.nn</code>" in html
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
    assert re.search(r'<details class="msm-view msm-view-unified"[^>]* open>', body.value)
    toggle.value = "split"
    assert re.search(r'<details class="msm-view msm-view-split"[^>]* open>', body.value)
    assert not re.search(r'<details class="msm-view msm-view-unified"[^>]* open>', body.value)
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
    cell = re.search(r'<td class="([^"]*)" data-old="12" data-new="12" style="[^"]*">', html)
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


# ----------------------------------------------------------------------------- nbconvert


LOOP_CELL = """\
import torch
import torch.nn as nn

layer = nn.Linear(3, 4)
for step in range(3):
    x = torch.ones(2, 3)
    if step:
        y = layer(x).cuda()
    total = torch.sum(x)
"""


def test_nbconvert_html_keeps_every_code_lines_indentation(tmp_path):
    """``jupyter nbconvert --to html`` of a saved port output: every code line of the
    diff (both views) and of the code block is its line, leading spaces included, in an
    element whose inline style says ``white-space: pre``."""
    import html as html_lib
    import subprocess
    import sys

    import nbformat

    from msmagic.engine.pipeline import port

    result = port(LOOP_CELL)
    assert any(line.startswith("        ") for line in result.code.splitlines())
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("%%ms_port\n" + LOOP_CELL)
    cell.outputs = [nbformat.v4.new_output("display_data", data=mimebundle(result))]
    nb.cells = [cell]
    path = tmp_path / "saved.ipynb"
    nbformat.write(nb, str(path))
    done = subprocess.run(
        [sys.executable, "-m", "nbconvert", "--to", "html", str(path)],
        capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    page = (tmp_path / "saved.html").read_text()
    assert "widget-view+json" not in page

    old, new = LOOP_CELL.splitlines(), result.code.splitlines()
    cells = elements(page, "msm-code")
    seen = set()
    for _, attrs, text in cells:
        assert style_of(attrs)["white-space"] == "pre", attrs
        classes = attrs["class"].split()
        if "msm-empty" in classes:
            continue
        if "data-new" in attrs:
            assert text == new[int(attrs["data-new"]) - 1], (attrs, text)
            seen.add(("new", int(attrs["data-new"])))
        else:
            assert text == old[int(attrs["data-old"]) - 1], (attrs, text)
            seen.add(("old", int(attrs["data-old"])))
    # the changed loop-body lines are there, at their indentation
    deep_new = {i + 1 for i, line in enumerate(new) if line.startswith("        ")}
    assert deep_new and deep_new <= {n for side, n in seen if side == "new"}
    (pre_attrs, pre_text) = [(a, t) for _, a, t in elements(page, "msm-code-pre")][0]
    assert style_of(pre_attrs)["white-space"] == "pre"
    assert html_lib.unescape(pre_text) == result.code
