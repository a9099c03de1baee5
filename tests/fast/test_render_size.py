"""A big cell renders in time linear in its length, and its output stays readable: the
diff is summarised beyond ``MAX_DIFF_ROWS`` rows (the first rows, then how many more),
while the whole MindSpore code stays in the output to copy. (The timings are in
``benchmarks/bench_render.py``; these tests check what is shown.)"""

from __future__ import annotations

import difflib
import html
import re

import msmagic

from msmagic.render import MAX_DIFF_ROWS, Hunk, LineMatcher, compute_hunks
from msmagic.render import html as render_html_module
from msmagic.render.html import render_html
from msmagic.render.text import render_text
from msmagic.result import Edit, Finding, PortResult

UNCHANGED = 7


def big_result(n: int) -> PortResult:
    """``n`` blocks of seven distinct unchanged lines and one ported line: ``n`` hunks of
    3 + 2 + 3 unified rows (the last one 3 + 2), a finding on every tenth ported line."""
    source, code, edits, findings = [], [], [], []
    for i in range(n):
        for k in range(UNCHANGED):
            source.append(f"a{i}_{k} = {k}")
            code.append(f"a{i}_{k} = {k}")
        source.append(f"x{i} = torch.ones(2)")
        code.append(f"x{i} = mindspore.ops.ones(2)")
        line = len(source)
        edits.append(Edit("TSTONE", "ones", (line, line), (line, line), api="torch.ones"))
        if i % 10 == 0:
            findings.append(Finding(line, 5, "torch.ones", "TSTFND", "checked by hand", out_line=line))
    return PortResult(
        source="\n".join(source) + "\n", code="\n".join(code) + "\n", edits=edits, unsupported=findings
    )


def _code_block_text(page: str) -> str:
    pre = re.search(r'<details class="msm-code-block".*?<pre[^>]*>(.*?)</pre>', page, re.S).group(1)
    return html.unescape(re.sub(r"<[^>]+>", "", pre))


def test_a_big_cell_is_summarised_and_its_code_stays_complete(monkeypatch):
    monkeypatch.setattr(render_html_module, "MAX_HIGHLIGHT_LINES", 0)  # colours: below
    n = 300
    result = big_result(n)
    total = 8 * (n - 1) + 5
    shown = MAX_DIFF_ROWS // 8  # whole hunks of 8 rows fill the rows exactly
    assert MAX_DIFF_ROWS % 8 == 0 and total > MAX_DIFF_ROWS

    page = render_html(result)
    unified = page[page.index('class="msm-view msm-view-unified"'):]
    assert unified.count('<tr class="msm-row') == MAX_DIFF_ROWS
    assert page.count('class="msm-hunk"') == 2 * shown
    more = f"{total - MAX_DIFF_ROWS} more diff lines in {n - shown} hunks not shown"
    assert page.count(more) == 2  # under each view
    assert _code_block_text(page) == result.code
    assert len(page) < 2_500_000

    text = render_text(result)
    assert text.count("\n+x") == shown and text.count("\n-x") == shown
    assert f"... {more}" in text
    assert text.count(" rules: TSTONE") == shown
    assert len(text) < 100_000


def test_a_cell_under_the_limit_is_shown_whole():
    result = big_result(20)
    page = render_html(result)
    assert "msm-more" not in page
    assert _code_block_text(page) == result.code
    assert 'style="color: #d9720b"' in page  # highlighted (numbers)
    assert page.count('class="msm-hunk"') == 2 * 20
    text = render_text(result)
    assert text.splitlines()[2:] [: len(result.diff().splitlines())] == result.diff().splitlines()
    assert "not shown" not in text


def test_hunks_place_edits_and_findings_as_meets_does():
    """The binary search over hunks places every edit and finding where checking each
    hunk with ``Hunk.meets`` does, multi-line and unplaced ones included."""
    result = big_result(40)
    result.edits.append(Edit("TSTSPAN", "span", (6, 30), (6, 30)))  # meets hunks 0..3
    result.edits.append(Edit("TSTNONE", "same spelling", (3, 3), (3, 3)))  # an unchanged line
    result.unsupported.append(Finding(0, 0, "x", "TSTNOWHERE", "no line"))
    hunks, unplaced = compute_hunks(result)

    def meets(h: Hunk, old, new) -> bool:
        return h.meets(tuple(old), tuple(new))

    for h in hunks:
        assert h.edits == [e for e in result.edits if meets(h, e.before, e.after)]
        def pos(f):
            return ((f.line, f.line) if f.line else (1, 0)), ((f.out_line, f.out_line) if f.out_line else (1, 0))
        assert h.findings == [f for f in result.unsupported if meets(h, *pos(f))]
    assert [e.rule_id for e in unplaced] == ["TSTNONE"]
    assert [e.rule_id for e in hunks[2].edits] == ["TSTONE", "TSTSPAN"]
    assert hunks[0].finding_rules == ["TSTFND"] and hunks[1].finding_rules == []


def _replay(old, new, opcodes):
    out = []
    for tag, i1, i2, j1, j2 in opcodes:
        if tag == "equal":
            assert old[i1:i2] == new[j1:j2]
            out += old[i1:i2]
        else:
            out += new[j1:j2]
    return out


def test_line_matcher_is_difflib_on_small_input_and_aligns_big_input():
    small_old = ["import torch", "", "x = torch.ones(2)", "", "y = 1", ""] * 20
    small_new = ["import mindspore", "", "x = ops.ones(2)", "", "y = 1", ""] * 20
    for junk in (True, False):
        assert LineMatcher(None, small_old, small_new, autojunk=junk).get_opcodes() == difflib.SequenceMatcher(
            None, small_old, small_new, autojunk=junk
        ).get_opcodes()

    result = big_result(1000)  # 8,000 lines: difflib alone recursed once per hunk
    old, new = result.source.splitlines(), result.code.splitlines()
    for junk in (True, False):
        opcodes = LineMatcher(None, old, new, autojunk=junk).get_opcodes()
        assert _replay(old, new, opcodes) == new
        assert sum(i2 - i1 for tag, i1, i2, _, _ in opcodes if tag == "equal") == UNCHANGED * 1000
        assert sum(1 for tag, *_ in opcodes if tag == "replace") == 1000


def test_the_results_unified_diff_is_difflibs_and_linear_on_a_big_cell():
    """``PortResult.diff()`` aligns with :class:`LineMatcher`: on a small cell the text
    is ``difflib.unified_diff``'s exactly; on a cell of thousands of hunks it still
    replays (every ``-``/`` `` line is the source in order, every ``+``/`` `` the port)."""
    small = msmagic.port("import torch\nx = torch.ones(2)\n\ny = 1\nz = torch.zeros(3)\n")
    want = "".join(difflib.unified_diff(small.source.splitlines(keepends=True),
                                        small.code.splitlines(keepends=True),
                                        fromfile="pytorch", tofile="mindspore", n=3))
    assert small.diff() == want and "@@ -1,5 +1,5 @@" in want
    for n in (0, 1, 7):
        assert small.diff(n) == "".join(difflib.unified_diff(
            small.source.splitlines(keepends=True), small.code.splitlines(keepends=True),
            fromfile="pytorch", tofile="mindspore", n=n))
    lines = ["import torch"]
    for i in range(3000):
        lines += [f"a{i} = torch.ones({i % 5 + 1})", f"b{i} = {i}", f"c{i} = b{i} + 1"]
    big = msmagic.port("\n".join(lines) + "\n")
    text = big.diff(0)
    body = [line for line in text.splitlines(keepends=True)[2:] if not line.startswith("@@")]
    assert text.count("@@ -") == 3000  # the import and a0 are one hunk
    removed = [line[1:] for line in body if line[0] == "-"]
    added = [line[1:] for line in body if line[0] == "+"]
    assert removed == [line + "\n" for line in lines if "torch" in line]
    assert len(added) == len(removed) and all("mindspore" in line for line in added)
