"""text/html rendering of a PortResult.

Self-contained: one inline ``<style>`` scoped under ``.msm-root``, no script, no
external assets. Colours come from JupyterLab's CSS variables with fallbacks that
inherit from the page, and the -/+ backgrounds are semi-transparent so the same HTML
reads on light and dark themes. Each rule badge is a ``<details>`` element, so the
explanation opens on click without JavaScript.

Stable class names (tests and browser tests rely on them): ``msm-root``,
``msm-view-split`` / ``msm-view-unified``, ``msm-hunk``, ``msm-badge``,
``msm-explanation``, ``msm-finding-line``, ``msm-findings``, ``msm-notes``,
``msm-code-block``.
"""

from __future__ import annotations

import difflib
import re
from html import escape
from typing import Optional

from . import (
    compute_hunks,
    counts,
    plural,
    resolve_view,
    rule_info,
    rule_title,
    split_lines,
)

MONO = "var(--jp-code-font-family, ui-monospace, SFMono-Regular, Menlo, Consolas, monospace)"
BORDER = "var(--jp-border-color2, rgba(128, 128, 128, 0.35))"

STYLE = f"""<style>
.msm-root {{ font-family: var(--jp-ui-font-family, system-ui, -apple-system, "Segoe UI", Roboto, sans-serif);
  font-size: var(--jp-ui-font-size1, 13px); line-height: 1.45;
  color: var(--jp-content-font-color1, inherit); max-width: 100%; }}
.msm-root code, .msm-root pre, .msm-root .msm-code, .msm-root .msm-mono, .msm-root .msm-ln,
  .msm-root .msm-sign {{ font-family: {MONO};
  font-size: var(--jp-code-font-size, 12.5px); }}
.msm-root .msm-title {{ display: flex; flex-wrap: wrap; gap: 4px 14px; align-items: baseline;
  padding: 5px 10px; border: 1px solid {BORDER}; border-radius: 4px;
  background: rgba(128, 128, 128, 0.12); }}
.msm-root .msm-title-main {{ font-weight: 600; }}
.msm-root .msm-title-sub {{ opacity: 0.75; }}
.msm-root .msm-hunk {{ margin: 8px 0; border: 1px solid {BORDER}; border-radius: 4px; overflow: hidden; }}
.msm-root .msm-hunk-head {{ display: flex; flex-wrap: wrap; gap: 4px 8px; align-items: flex-start;
  padding: 4px 6px; background: rgba(128, 128, 128, 0.10); border-bottom: 1px solid {BORDER}; }}
.msm-root .msm-hunk-range {{ opacity: 0.7; padding-top: 2px; }}
.msm-root .msm-badges {{ display: flex; flex-wrap: wrap; gap: 4px; flex: 1 1 auto; min-width: 0; }}
.msm-root .msm-badge {{ border: 1px solid rgba(86, 125, 235, 0.55); border-radius: 10px;
  background: rgba(86, 125, 235, 0.14); max-width: 100%; }}
.msm-root .msm-badge.msm-badge-finding {{ border-color: rgba(222, 150, 0, 0.7);
  background: rgba(222, 150, 0, 0.15); }}
.msm-root .msm-badge > summary {{ cursor: pointer; padding: 1px 9px; list-style: none; }}
.msm-root .msm-badge > summary::-webkit-details-marker {{ display: none; }}
.msm-root .msm-badge > summary::after {{ content: " \\25B8"; opacity: 0.6; }}
.msm-root .msm-badge[open] > summary::after {{ content: " \\25BE"; }}
.msm-root .msm-badge[open] {{ flex-basis: 100%; border-radius: 6px; }}
.msm-root .msm-rule-id {{ font-weight: 700; margin-right: 6px; }}
.msm-root .msm-explanation {{ padding: 4px 12px 8px; border-top: 1px solid rgba(86, 125, 235, 0.35); }}
.msm-root .msm-explanation p {{ margin: 4px 0; }}
.msm-root .msm-explanation ul {{ margin: 4px 0; padding-left: 20px; }}
.msm-root .msm-meta {{ opacity: 0.75; font-size: 0.92em; }}
.msm-root .msm-installed-note {{ border-left: 3px solid rgba(222, 150, 0, 0.8); padding-left: 8px; }}
.msm-root table.msm-diff, .msm-root table.msm-findings {{ font-size: inherit; margin: 0; border: 0; }}
.msm-root table.msm-diff {{ width: 100%; border-collapse: collapse; table-layout: fixed; }}
.msm-root table.msm-diff tbody tr, .msm-root table.msm-findings tbody tr {{ background: transparent; }}
.msm-root table.msm-diff th {{ text-align: left; font-weight: 600; font-size: 0.92em; padding: 2px 6px; opacity: 0.8;
  border-bottom: 1px solid {BORDER}; }}
.msm-root table.msm-diff td {{ padding: 0 6px; vertical-align: top; border: 0; line-height: 1.45; }}
.msm-root .msm-ln {{ width: 3em; text-align: right; opacity: 0.55; user-select: none; }}
.msm-root .msm-mark {{ width: 1.3em; text-align: center; color: #d98e00; user-select: none; cursor: default; }}
.msm-root .msm-sign {{ width: 1.1em; user-select: none; opacity: 0.8; }}
.msm-root td.msm-code {{ white-space: pre-wrap; overflow-wrap: anywhere; text-align: left; }}
.msm-root .msm-split-gap {{ width: 6px; border-left: 1px solid {BORDER}; }}
.msm-root td.msm-del {{ background: rgba(248, 81, 73, 0.17); }}
.msm-root td.msm-add {{ background: rgba(46, 160, 67, 0.19); }}
.msm-root .msm-del .msm-chg {{ background: rgba(248, 81, 73, 0.38); border-radius: 2px; }}
.msm-root .msm-add .msm-chg {{ background: rgba(46, 160, 67, 0.42); border-radius: 2px; }}
.msm-root .msm-empty {{ background: rgba(128, 128, 128, 0.07); }}
.msm-root td.msm-finding-line {{ box-shadow: inset 3px 0 0 rgba(222, 150, 0, 0.95); }}
.msm-root .msm-section {{ margin: 10px 0 4px; font-weight: 600; }}
.msm-root table.msm-findings {{ border-collapse: collapse; width: 100%; table-layout: auto; }}
.msm-root table.msm-findings th, .msm-root table.msm-findings td {{ text-align: left; vertical-align: top;
  padding: 3px 8px; border-bottom: 1px solid {BORDER}; }}
.msm-root table.msm-findings th {{ font-weight: 600; }}
.msm-root table.msm-findings td.msm-num {{ text-align: right; width: 3em; }}
.msm-root ul.msm-notes {{ margin: 4px 0; padding-left: 20px; }}
.msm-root .msm-nochange {{ padding: 6px 10px; opacity: 0.8; }}
.msm-root .msm-code-block {{ margin-top: 10px; }}
.msm-root .msm-code-block > summary {{ cursor: pointer; font-weight: 600; }}
.msm-root pre.msm-code-pre {{ margin: 4px 0; padding: 8px 10px; border: 1px solid {BORDER}; border-radius: 4px;
  background: rgba(128, 128, 128, 0.08); white-space: pre; overflow-x: auto; user-select: text;
  color: inherit; }}
</style>"""

_BACKTICK = re.compile(r"``(.+?)``|`([^`]+)`", re.S)  # reST ``code`` and Markdown `code`


def _e(text) -> str:
    return escape(str(text), quote=True)


def _prose(text: str) -> str:
    """Escape, turn `code` into <code>, blank lines into paragraphs."""
    paras = [p.strip() for p in re.split(r"\n\s*\n", text.strip()) if p.strip()]
    return "".join(
        "<p>" + _BACKTICK.sub(lambda m: f"<code>{m.group(1) or m.group(2)}</code>", _e(p)) + "</p>"
        for p in paras
    )


def _range(r) -> str:
    a, b = r
    if b < a:
        return "none"
    return f"{a}" if a == b else f"{a}\u2013{b}"


# --------------------------------------------------------------------------- badges


def hunk_badges(result, hunk) -> list[str]:
    """One badge per rule touching ``hunk``: its edits there and the findings on its lines."""
    badges = []
    for rid in hunk.rule_ids:
        edits = [e for e in hunk.edits if e.rule_id == rid]
        findings = [
            f
            for f in result.unsupported
            if f.rule_id == rid
            and hunk.meets(
                (f.line, f.line) if f.line else (1, 0),
                (f.out_line, f.out_line) if f.out_line else (1, 0),
            )
        ]
        badges.append(_badge(rid, edits, findings))
    return badges


def _badge(rule_id: str, edits: list, findings: list) -> str:
    rule = rule_info(rule_id)
    title = rule_title(rule_id, edits)
    if not title:
        title = rule_title(rule_id)
    cls = "msm-badge" if edits else "msm-badge msm-badge-finding"
    body = []
    if rule is not None and getattr(rule, "why", ""):
        body.append(f'<div class="msm-why">{_prose(rule.why)}</div>')
    if rule is not None and getattr(rule, "installed_note", ""):
        body.append(
            '<div class="msm-installed-note"><p><b>Installed MindSpore:</b></p>'
            f"{_prose(rule.installed_note)}</div>"
        )
    items = []
    for e in edits:
        what = f"<code>{_e(e.api)}</code>" if e.api else _e(e.title or rule_id)
        detail = f" \u2014 {_e(e.detail)}" if e.detail else ""
        where = (
            f' <span class="msm-meta">(PyTorch line {_range(e.before)} \u2192 '
            f"MindSpore line {_range(e.after)})</span>"
        )
        items.append(f'<li class="msm-edit">{what}{detail}{where}</li>')
    for f in findings:
        api = f"<code>{_e(f.api)}</code> " if f.api else ""
        items.append(
            f'<li class="msm-finding-item">\u26a0 {api}{_e(f.reason)} '
            f'<span class="msm-meta">(line {f.line}, column {f.column})</span></li>'
        )
    if items:
        body.append(f'<ul class="msm-edit-list">{"".join(items)}</ul>')
    meta = []
    if rule is not None:
        if getattr(rule, "seed", ""):
            meta.append(f"Source: {_e(rule.seed)}")
        if getattr(rule, "reference", ""):
            meta.append(f"Reference: {_e(rule.reference)}")
        verified = getattr(rule, "verified_on", None) or {}
        if verified:
            meta.append(
                "Verified on " + ", ".join(f"{_e(k)} {_e(v)}" for k, v in sorted(verified.items()))
            )
    if meta:
        sep = " \u00b7 "
        body.append(f'<p class="msm-meta msm-seed">{sep.join(meta)}</p>')
    return (
        f'<details class="{cls}" data-rule="{_e(rule_id)}">'
        f'<summary><span class="msm-rule-id msm-mono">{_e(rule_id)}</span>'
        f'<span class="msm-rule-title">{_e(title)}</span></summary>'
        f'<div class="msm-explanation">{"".join(body)}</div></details>'
    )


# --------------------------------------------------------------------------- diff rows


class _Marks:
    """Findings by input line and by output line."""

    def __init__(self, findings) -> None:
        self.old: dict[int, list] = {}
        self.new: dict[int, list] = {}
        for f in findings:
            if f.line:
                self.old.setdefault(f.line, []).append(f)
            if f.out_line:
                self.new.setdefault(f.out_line, []).append(f)

    def get(self, side: str, line: Optional[int]) -> list:
        if line is None:
            return []
        return (self.old if side == "old" else self.new).get(line, [])


_TOKEN = re.compile(r"\w+|\s+|[^\w\s]")


def _intraline(a: str, b: str) -> tuple[str, str]:
    """Escaped a and b with the changed words wrapped in msm-chg spans."""
    if len(a) > 2000 or len(b) > 2000:
        return _e(a), _e(b)
    ta, tb = _TOKEN.findall(a), _TOKEN.findall(b)
    sm = difflib.SequenceMatcher(None, ta, tb, autojunk=False)
    if sm.ratio() < 0.3:
        return _e(a), _e(b)
    out_a, out_b = [], []
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag == "equal":
            out_a.append(_e("".join(ta[i1:i2])))
            out_b.append(_e("".join(tb[j1:j2])))
            continue
        if i2 > i1:
            out_a.append(f'<span class="msm-chg">{_e("".join(ta[i1:i2]))}</span>')
        if j2 > j1:
            out_b.append(f'<span class="msm-chg">{_e("".join(tb[j1:j2]))}</span>')
    return "".join(out_a), "".join(out_b)


def _mark_td(findings: list, kind: str = "") -> str:
    cls = f"msm-mark {kind}" if kind else "msm-mark"
    if not findings:
        return f'<td class="{cls}"></td>'
    tip = "\n".join(f"{f.line}:{f.column} {f.rule_id} {f.api} \u2014 {f.reason}" for f in findings)
    return f'<td class="{cls}" title="{_e(tip)}">\u26a0</td>'


def _code_td(
    kind: str, side: str, line: Optional[int], html_text: str, findings: list, new_line=None
) -> str:
    """A code cell; ``data-old``/``data-new`` give its line number on each side."""
    classes = ["msm-code"]
    if kind:
        classes.append(kind)
    if findings:
        classes.append("msm-finding-line")
    attr = f' data-{side}="{line}"' if line is not None else ""
    if new_line is not None:
        attr += f' data-new="{new_line}"'
    return f'<td class="{" ".join(classes)}"{attr}>{html_text}</td>'


def _pairs(old: list[str], new: list[str], opcodes):
    """(tag, old line no or None, old html, new line no or None, new html) per aligned row."""
    for tag, i1, i2, j1, j2 in opcodes:
        if tag == "equal":
            for k in range(i2 - i1):
                t = _e(old[i1 + k])
                yield tag, i1 + k + 1, t, j1 + k + 1, t
            continue
        n = max(i2 - i1, j2 - j1)
        for k in range(n):
            i = i1 + k if i1 + k < i2 else None
            j = j1 + k if j1 + k < j2 else None
            if i is not None and j is not None:
                a, b = _intraline(old[i], new[j])
            else:
                a = _e(old[i]) if i is not None else ""
                b = _e(new[j]) if j is not None else ""
            yield (
                tag,
                None if i is None else i + 1,
                a,
                None if j is None else j + 1,
                b,
            )


def _split_table(old, new, opcodes, marks: _Marks) -> str:
    rows = [
        '<table class="msm-diff msm-diff-split"><colgroup>'
        '<col class="msm-ln"><col class="msm-mark"><col>'
        '<col class="msm-split-gap"><col class="msm-ln"><col class="msm-mark"><col>'
        "</colgroup>"
        '<thead><tr><th colspan="3">PyTorch</th><th class="msm-split-gap"></th>'
        '<th colspan="3">MindSpore</th></tr></thead><tbody>'
    ]
    for tag, i, a, j, b in _pairs(old, new, opcodes):
        if tag == "equal":
            kind_a = kind_b = ""
        else:
            kind_a = "msm-del" if i is not None else "msm-empty"
            kind_b = "msm-add" if j is not None else "msm-empty"
        fa, fb = marks.get("old", i), marks.get("new", j)
        rows.append(
            f'<tr class="msm-row msm-row-{tag}">'
            f'<td class="msm-ln">{"" if i is None else i}</td>{_mark_td(fa)}'
            f"{_code_td(kind_a, 'old', i, a, fa)}"
            '<td class="msm-split-gap"></td>'
            f'<td class="msm-ln">{"" if j is None else j}</td>{_mark_td(fb)}'
            f"{_code_td(kind_b, 'new', j, b, fb)}</tr>"
        )
    rows.append("</tbody></table>")
    return "".join(rows)


def _unified_table(old, new, opcodes, marks: _Marks) -> str:
    rows = [
        '<table class="msm-diff msm-diff-unified"><colgroup>'
        '<col class="msm-ln"><col class="msm-ln"><col class="msm-mark"><col class="msm-sign"><col>'
        "</colgroup><tbody>"
    ]

    def row(kind, sign, i, j, text, side, line, findings, new_line=None):
        cls = f"msm-row msm-row-{kind[4:]}" if kind else "msm-row msm-row-equal"
        k = f" {kind}" if kind else ""
        return (
            f'<tr class="{cls}"><td class="msm-ln{k}">{"" if i is None else i}</td>'
            f'<td class="msm-ln{k}">{"" if j is None else j}</td>{_mark_td(findings, kind)}'
            f'<td class="msm-sign{k}">{sign}</td>'
            f"{_code_td(kind, side, line, text, findings, new_line)}</tr>"
        )

    for tag, i1, i2, j1, j2 in opcodes:
        if tag == "equal":
            for k in range(i2 - i1):
                i, j = i1 + k + 1, j1 + k + 1
                found = marks.get("old", i) + marks.get("new", j)
                rows.append(row("", "&nbsp;", i, j, _e(old[i - 1]), "old", i, found, j))
            continue
        dels, adds = list(range(i1, i2)), list(range(j1, j2))
        html_old = {i: _e(old[i]) for i in dels}
        html_new = {j: _e(new[j]) for j in adds}
        for i, j in zip(dels, adds):
            html_old[i], html_new[j] = _intraline(old[i], new[j])
        for i in dels:
            rows.append(row("msm-del", "-", i + 1, None, html_old[i], "old", i + 1, marks.get("old", i + 1)))
        for j in adds:
            rows.append(row("msm-add", "+", None, j + 1, html_new[j], "new", j + 1, marks.get("new", j + 1)))
    rows.append("</tbody></table>")
    return "".join(rows)


# --------------------------------------------------------------------------- page


def code_only_html(code: str) -> str:
    return f'<pre class="msm-code-pre msm-quiet">{_e(code)}</pre>'


def _findings_table(result) -> str:
    rows = []
    for f in sorted(result.unsupported, key=lambda f: (f.line, f.column)):
        title = rule_title(f.rule_id)
        rows.append(
            "<tr>"
            f'<td class="msm-num">{f.line}</td><td class="msm-num">{f.column}</td>'
            f"<td><code>{_e(f.api)}</code></td>"
            f'<td><span class="msm-mono" title="{_e(title)}">{_e(f.rule_id)}</span></td>'
            f"<td>{_e(f.reason)}</td></tr>"
        )
    return (
        f'<div class="msm-section">Findings ({len(result.unsupported)})</div>'
        '<table class="msm-findings"><thead><tr><th>Line</th><th>Column</th><th>API</th>'
        f'<th>Rule</th><th>Reason</th></tr></thead><tbody>{"".join(rows)}</tbody></table>'
    )


def render_html(result, view: Optional[str] = None) -> str:
    """The text/html view; ``view`` is "split" or "unified" (default: the result's
    ``view`` option, else split). Only that view is in the HTML."""
    if result.options.get("quiet"):
        return STYLE + f'<div class="msm-root">{code_only_html(result.code)}</div>'
    view = resolve_view(result, view)
    old, new = split_lines(result.source), split_lines(result.code)
    hunks, unplaced = compute_hunks(result, autojunk=False)
    marks = _Marks(result.unsupported)
    n_edits, n_rules, n_findings = counts(result)

    parts = [STYLE, f'<div class="msm-root msm-view-{view}" data-view="{view}">']
    parts.append(
        '<div class="msm-title">'
        f'<span class="msm-title-main">msmagic port: {plural(n_edits, "edit")}, '
        f'{plural(n_rules, "rule")}, {plural(n_findings, "finding")}</span>'
        f'<span class="msm-title-sub">PyTorch \u2192 MindSpore \u00b7 {view} view</span></div>'
    )
    if not hunks:
        parts.append('<div class="msm-nochange">No changes: msmagic left this cell as it was.</div>')
    table = _split_table if view == "split" else _unified_table
    for h in hunks:
        (a1, a2), (b1, b2) = h.old_range, h.new_range
        badges = hunk_badges(result, h)
        parts.append(
            f'<div class="msm-hunk" data-hunk="{h.index}" data-old="{a1 + 1}-{a2}" '
            f'data-new="{b1 + 1}-{b2}" data-rules="{_e(" ".join(h.rule_ids))}">'
            f'<div class="msm-hunk-head"><span class="msm-hunk-range msm-mono">{_e(h.header)}</span>'
            f'<div class="msm-badges">{"".join(badges)}</div></div>'
            f"{table(old, new, h.opcodes, marks)}</div>"
        )
    if unplaced:
        ids = list(dict.fromkeys(e.rule_id for e in unplaced))
        badges = "".join(_badge(rid, [e for e in unplaced if e.rule_id == rid], []) for rid in ids)
        parts.append(
            '<div class="msm-section">Mapped without a visible change '
            '(same spelling, now MindSpore)</div>'
            f'<div class="msm-badges msm-unplaced">{badges}</div>'
        )
    if result.unsupported:
        parts.append(_findings_table(result))
    if result.notes:
        items = "".join(f"<li>{_prose(n)}</li>" for n in result.notes)
        parts.append(f'<div class="msm-section">Notes</div><ul class="msm-notes">{items}</ul>')
    n_lines = len(new)
    parts.append(
        '<details class="msm-code-block"><summary>MindSpore code '
        f'({plural(n_lines, "line")})</summary>{code_only_html(result.code)}</details>'
    )
    parts.append("</div>")
    return "".join(parts)
