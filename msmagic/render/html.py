"""text/html rendering of a PortResult, readable wherever the saved notebook is opened.

What a notebook saves is this HTML, so it carries its own meaning without a kernel,
without a widget manager and without a stylesheet:

* Every style that carries meaning (monospace, left alignment, the colours of removed
  and added lines, changed words, finding lines, indentation) is an inline ``style=``
  attribute. JupyterLab's sanitizer (untrusted notebooks) keeps those and drops
  ``<style>``, ``<script>`` and event handlers. The one ``<style>`` block (:data:`STYLE`)
  only adds polish where it survives (trusted notebooks, nbconvert): focus rings and
  the copy button.
* Each code line is one element with inline ``white-space:pre``, so indentation never
  depends on CSS that a front end may drop.
* Both layouts are in the HTML: the Split and Unified views are two ``<details>``
  elements (the result's ``view`` option, or the ``view`` argument, opens one of them),
  so switching needs no kernel and an opened rule explanation stays open.
* Rules sit on the lines they explain: the gutter next to a line shows the id of each
  rule that rewrote it, and each hunk has a collapsed "Explain" list of its rule badges
  (``<details>``: the rule's why, its edits and findings, links to MindSpore's docs).
* The diff sits in a pane with its own horizontal scrollbar: the output never grows
  wider than the cell.
* The MindSpore code block is a ``<pre>`` (select and copy); a Copy button is shown
  only where the ``<style>`` block survives, which is also where its ``onclick`` runs,
  so an untrusted notebook never shows a button that cannot work.
* Code is highlighted with Pygments' Python lexer into inline-coloured spans.

Stable class names (tests and the browser tests rely on them): ``msm-root``,
``msm-view`` (with ``msm-view-split`` / ``msm-view-unified``), ``msm-pane``,
``msm-hunk``, ``msm-hunk-rules``, ``msm-badge``, ``msm-explanation``, ``msm-rule-mark``,
``msm-code``, ``msm-finding-line``, ``msm-findings``, ``msm-notes``, ``msm-code-block``,
``msm-copy``. :data:`S` holds the inline styles, for other renderers to share.
"""

from __future__ import annotations

import difflib
import functools
import re
from html import escape
from typing import Optional

from . import (
    MAX_DIFF_ROWS,
    VIEWS,
    compute_hunks,
    counts,
    plural,
    resolve_view,
    rule_info,
    rule_title,
    shown_hunks,
    split_lines,
)

#: Plain CSS values only: JupyterLab's sanitizer rejects ``var(...)`` in inline styles.
MONO = "Menlo, Consolas, 'DejaVu Sans Mono', monospace"
SANS = "system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif"
BORDER = "1px solid rgba(128, 128, 128, 0.35)"
DEL_BG = "rgba(248, 81, 73, 0.17)"
ADD_BG = "rgba(46, 160, 67, 0.19)"
DEL_CHG_BG = "rgba(248, 81, 73, 0.42)"
ADD_CHG_BG = "rgba(46, 160, 67, 0.45)"
EMPTY_BG = "rgba(128, 128, 128, 0.07)"
FINDING_BAR = "inset 3px 0 0 rgba(222, 150, 0, 0.95)"

#: Inline styles by role. Each is a complete ``style`` attribute value.
S = {
    "root": f"font-family: {SANS}; font-size: 13px; line-height: 1.45; text-align: left; "
    "max-width: 100%; min-width: 0; box-sizing: border-box",
    "title": f"padding: 5px 10px; border: {BORDER}; border-radius: 4px; "
    "background-color: rgba(128, 128, 128, 0.12); overflow-wrap: anywhere",
    "title_main": "font-weight: 600; margin-right: 14px",
    "title_sub": "opacity: 0.75",
    "view": "margin: 8px 0; max-width: 100%",
    "view_summary": "cursor: pointer; font-weight: 600; padding: 2px 0",
    "hunk": f"margin: 8px 0; border: {BORDER}; border-radius: 4px; max-width: 100%; "
    "box-sizing: border-box",
    "hunk_head": f"padding: 4px 6px; background-color: rgba(128, 128, 128, 0.10); "
    f"border-bottom: {BORDER}; overflow-wrap: anywhere",
    "hunk_range": f"font-family: {MONO}; font-size: 12px; opacity: 0.7; margin-right: 8px",
    "hunk_rules": "display: inline",
    "hunk_rules_summary": "cursor: pointer; display: inline",
    "badges": "margin: 4px 0 0",
    "pane": "overflow-x: auto; max-width: 100%",
    "table": "border-collapse: collapse; border-spacing: 0; border: 0; margin: 0; width: 100%; "
    f"table-layout: auto; font-family: {MONO}; font-size: 12.5px; line-height: 1.45",
    "th": "text-align: left; font-weight: 600; font-size: 12px; padding: 2px 6px; opacity: 0.8; "
    f"border: 0; border-bottom: {BORDER}; white-space: nowrap",
    # cells of the diff tables: the table sets the monospace font; rows are one line high
    "ln": "padding: 0 6px; text-align: right; opacity: 0.55; white-space: nowrap",
    "mark": "padding: 0 2px; text-align: center; white-space: nowrap; color: #d98e00",
    "sign": "padding: 0 4px; text-align: left; opacity: 0.8; white-space: pre",
    "code": "padding: 0 6px; text-align: left; white-space: pre",
    "gap": "padding: 0; border-left: " + BORDER,
    "rule_mark": f"font-family: {MONO}; font-size: 10.5px; padding: 0 4px; margin-right: 2px; "
    "border-radius: 8px; border: 1px solid rgba(86, 125, 235, 0.55); "
    "background-color: rgba(86, 125, 235, 0.16); color: inherit; white-space: nowrap",
    "badge": "display: inline-block; vertical-align: top; max-width: 100%; box-sizing: border-box; "
    "margin: 2px 4px 2px 0; border: 1px solid rgba(86, 125, 235, 0.55); border-radius: 6px; "
    "background-color: rgba(86, 125, 235, 0.10)",
    "badge_finding": "display: inline-block; vertical-align: top; max-width: 100%; "
    "box-sizing: border-box; margin: 2px 4px 2px 0; border: 1px solid rgba(222, 150, 0, 0.7); "
    "border-radius: 6px; background-color: rgba(222, 150, 0, 0.13)",
    "badge_summary": "cursor: pointer; padding: 1px 8px",
    "rule_id": f"font-family: {MONO}; font-weight: 700; margin-right: 6px",
    "explanation": "padding: 4px 12px 8px; border-top: 1px solid rgba(86, 125, 235, 0.35); "
    "white-space: normal; overflow-wrap: anywhere",
    "meta": "opacity: 0.75; font-size: 0.92em",
    "installed": "border-left: 3px solid rgba(222, 150, 0, 0.8); padding-left: 8px",
    "section": "margin: 10px 0 4px; font-weight: 600",
    "findings": "border-collapse: collapse; border: 0; margin: 0; width: 100%; table-layout: auto; "
    "font-size: inherit",
    "findings_cell": "text-align: left; vertical-align: top; padding: 3px 8px; border: 0; "
    f"border-bottom: {BORDER}; overflow-wrap: anywhere",
    "findings_num": "text-align: right; vertical-align: top; padding: 3px 8px; border: 0; "
    f"border-bottom: {BORDER}; white-space: nowrap; width: 3em",
    "list": "margin: 4px 0; padding-left: 20px",
    "nochange": "padding: 6px 10px; opacity: 0.8",
    "code_block": "margin-top: 10px; max-width: 100%",
    "code_summary": "cursor: pointer; font-weight: 600",
    "pre": f"font-family: {MONO}; font-size: 12.5px; line-height: 1.45; margin: 4px 0; "
    f"padding: 8px 10px; border: {BORDER}; border-radius: 4px; "
    "background-color: rgba(128, 128, 128, 0.08); white-space: pre; overflow-x: auto; "
    "max-width: 100%; box-sizing: border-box; text-align: left; user-select: text; color: inherit",
    "copy": "display: none; cursor: pointer; margin: 4px 0 0; padding: 1px 10px; font-size: 12px; "
    f"border: {BORDER}; border-radius: 4px; background-color: rgba(128, 128, 128, 0.12); "
    "color: inherit",
    "link": "color: inherit; text-decoration: underline",
}
S = {k: re.sub(r"\s*([:;,])\s*", r"\1", v) for k, v in S.items()}

#: Polish only (dropped in untrusted notebooks): focus rings, hover, the copy button.
STYLE = """<style>
.msm-root summary:focus-visible, .msm-root a:focus-visible, .msm-root button:focus-visible {
  outline: 2px solid #2f7fe0; outline-offset: 1px; border-radius: 3px; }
.msm-root summary:hover { text-decoration: underline dotted; }
.msm-root .msm-copy { display: inline-block !important; }
.msm-root table.msm-diff tbody tr:hover { background: transparent; }
.msm-root table.msm-diff tbody tr, .msm-root table.msm-findings tbody tr { background: transparent; }
</style>"""

#: Runs only where the button survives with its handler: trusted output, nbconvert HTML.
_COPY_JS = (
    "navigator.clipboard.writeText(this.parentNode.querySelector('pre').innerText)"
    ".then(() => { this.textContent = 'Copied'; }, "
    "() => { this.textContent = 'Copy failed: select the code below'; })"
)

_BACKTICK = re.compile(r"``(.+?)``|`([^`]+)`", re.S)  # reST ``code`` and Markdown `code`


def _e(text) -> str:
    return escape(str(text), quote=True)


def _prose(text: str) -> str:
    """Escape, turn `code` into <code>, blank lines into paragraphs."""
    paras = [p.strip() for p in re.split(r"\n\s*\n", text.strip()) if p.strip()]
    return "".join(
        '<p style="margin: 4px 0">'
        + _BACKTICK.sub(lambda m: f"<code>{m.group(1) or m.group(2)}</code>", _e(p))
        + "</p>"
        for p in paras
    )


def _range(r) -> str:
    a, b = r
    if b < a:
        return "none"
    return f"{a}" if a == b else f"{a}\u2013{b}"


# --------------------------------------------------------------------------- references

MINDSPORE_DOCS = "https://www.mindspore.cn/docs/en/{version}/note/{path}.html"

#: Seeds of the migration guide whose public page is known.
SEED_URLS = {
    "seeds/002": "https://gitee.com/mindspore/docs/blob/master/docs/mindspore/source_en/"
    "migration_guide/typical_api_comparision.md",
    "seeds/004": "https://www.mindspore.cn/docs/en/r2.4.10/migration_guide/model_development/"
    "model_and_cell.html",
}

_REF_PATH = re.compile(r"^(r\d+(?:\.\d+)*)/((?:[\w.-]+/)*)([\w.-]+)\.md$")
_REF_BARE = re.compile(r"^((?:[\w.-]+/)*)([\w.-]+)\.md$")


def reference_links(reference: str) -> list[tuple[str, Optional[str]]]:
    """(text, URL or None) for each part of a rule's ``reference``: paths of MindSpore's
    docs sources (``r2.4.10/api_mapping/pytorch_diff/Dropout.md``, also a bare
    ``LeakyReLU.md`` after one of them) become their page on mindspore.cn; a
    parenthesised note stays text."""
    out: list[tuple[str, Optional[str]]] = []
    version, folder = None, ""
    for part in (p.strip() for p in reference.split(";")):
        if not part:
            continue
        path, _, note = part.partition(" (")
        note = f" ({note}" if note else ""
        m = _REF_PATH.match(path)
        url = None
        if m and m.group(2).startswith("api_mapping/"):
            version, folder = m.group(1), m.group(2)
            url = MINDSPORE_DOCS.format(version=version, path=f"{folder}{m.group(3)}")
        elif version and _REF_BARE.match(path):
            b = _REF_BARE.match(path)
            sub = b.group(1)
            base = folder
            if sub and folder.endswith(sub):
                base = folder[: -len(sub)]
            elif sub:
                base = folder.split("/", 1)[0] + "/" if "/" in folder else folder
            url = MINDSPORE_DOCS.format(version=version, path=f"{base}{sub}{b.group(2)}")
        if url:
            out.append((path, url))
            if note:
                out.append((note, None))
        else:
            out.append((part, None))
    return out


def _link(text: str, url: Optional[str]) -> str:
    if not url:
        return _e(text)
    return f'<a href="{_e(url)}" target="_blank" rel="noopener" style="{S["link"]}">{_e(text)}</a>'


def _seed_html(seed: str) -> str:
    """Each ``seeds/NNN section`` of a rule's seed, linked where its page is known."""
    out = []
    for part in (p.strip() for p in seed.split(";")):
        if part:
            out.append(_link(part, SEED_URLS.get(part.split()[0])))
    return "; ".join(out)


def _reference_html(reference: str) -> str:
    out = []
    for text, url in reference_links(reference):
        if out and url:
            out.append("; ")
        out.append(_link(text, url))
    return "".join(out)


# --------------------------------------------------------------------------- highlighting

_TOKEN_STYLES: list = []


def _token_styles() -> list:
    if not _TOKEN_STYLES:
        from pygments import token as t

        # mid-tone colours that read on light and dark themes
        _TOKEN_STYLES.extend(
            [
                (t.Comment, "color: #808a8f; font-style: italic"),
                (t.String, "color: #2e9d48"),
                (t.Number, "color: #d9720b"),
                (t.Keyword.Constant, "color: #d9720b"),
                (t.Keyword, "color: #a65fd9; font-weight: 600"),
                (t.Operator.Word, "color: #a65fd9; font-weight: 600"),
                (t.Name.Builtin, "color: #2b8fd6"),
                (t.Name.Function, "color: #2f7fe0"),
                (t.Name.Class, "color: #2f7fe0; font-weight: 600"),
                (t.Name.Decorator, "color: #b07d00"),
            ]
        )
    return _TOKEN_STYLES


@functools.lru_cache(maxsize=64)
def _highlighted(text: str) -> Optional[tuple]:
    """Per line of ``text`` (as :func:`split_lines` cuts it), a tuple of (inline style,
    text) segments; ``None`` when Pygments is missing or its lines do not match."""
    try:
        from pygments.lexers import PythonLexer
    except ImportError:
        return None
    styles = _token_styles()
    style_of: dict = {}  # token type -> its style, looked up once per type
    lexer = PythonLexer(stripnl=False, stripall=False, ensurenl=False)
    lines: list[list] = [[]]
    try:
        for ttype, value in lexer.get_tokens(text):
            style = style_of.get(ttype)
            if style is None:
                style = style_of[ttype] = next((s for tt, s in styles if ttype in tt), "")
            pieces = value.split("\n")
            for k, piece in enumerate(pieces):
                if k:
                    lines.append([])
                if piece:
                    lines[-1].append((style, piece))
    except Exception:
        return None
    got = ["".join(p for _, p in segs) for segs in lines]
    want = split_lines(text)
    if got[: len(want)] != want or any(got[len(want):]):
        return None
    return tuple(tuple(segs) for segs in lines[: len(want)])


#: (lines, their highlighting) of the last few line lists asked for, by identity: a
#: table asks for each of its rows, and joining and hashing the whole text per row made
#: rendering quadratic in the cell's length.
_LINES_HIGHLIGHTED: list = []


#: Longer code is shown without colours: highlighting is the bulk of the rendering
#: time and of the output's size, and a cell this long is summarised anyway.
MAX_HIGHLIGHT_LINES = 1000


def _lines_highlighted(lines: list[str]) -> Optional[tuple]:
    for cached, hl in _LINES_HIGHLIGHTED:
        if cached is lines:
            return hl
    hl = _highlighted("\n".join(lines)) if len(lines) <= MAX_HIGHLIGHT_LINES else None
    _LINES_HIGHLIGHTED.insert(0, (lines, hl))
    del _LINES_HIGHLIGHTED[4:]
    return hl


def _segments(lines: list[str], index: int) -> list:
    hl = _lines_highlighted(lines)
    if hl is None or index >= len(hl):
        return [("", lines[index])]
    return list(hl[index])


def code_html(segments, changed=(), changed_bg: str = "") -> str:
    """HTML of one code line: ``segments`` of (inline style, text), with the character
    ranges in ``changed`` wrapped as ``msm-chg`` on ``changed_bg``.

    No text node is only whitespace: a run of blanks is joined to the piece before it,
    or, as indentation, to the piece after it. HTML tools such as the BeautifulSoup pass
    of ``jupyter nbconvert --to html`` collapse whitespace-only text outside ``<pre>`` to
    one space, which would cost a code line its indentation."""
    pieces: list[list] = []  # [style, changed, text]
    pos = 0
    for style, text in segments:
        start, end = pos, pos + len(text)
        pos = end
        cuts = sorted({start, end} | {x for r in changed for x in r if start < x < end})
        for a, b in zip(cuts, cuts[1:]):
            hit = any(r0 <= a and b <= r1 for r0, r1 in changed)
            pieces.append([style, hit, text[a - start : b - start]])
    merged: list[list] = []
    indent = ""
    for style, hit, text in pieces:
        if not text.strip():
            if merged:
                merged[-1][2] += text
            else:
                indent += text
            continue
        merged.append([style, hit, indent + text])
        indent = ""
    if indent:
        merged.append(["", False, indent])
    out = []
    for style, hit, text in merged:
        piece = _e(text)
        if hit:
            st = "; ".join(x for x in (style, f"background-color: {changed_bg}; border-radius: 2px") if x)
            out.append(f'<span class="msm-chg" style="{st}">{piece}</span>')
        elif style:
            out.append(f'<span style="{style}">{piece}</span>')
        else:
            out.append(piece)
    return "".join(out)


_TOKEN = re.compile(r"\w+|\s+|[^\w\s]")


def _intraline(a: str, b: str) -> tuple[list, list]:
    """Character ranges of the changed words of ``a`` and of ``b``."""
    if len(a) > 2000 or len(b) > 2000:
        return [], []
    ta, tb = _TOKEN.findall(a), _TOKEN.findall(b)
    sm = difflib.SequenceMatcher(None, ta, tb, autojunk=False)
    if sm.ratio() < 0.3:
        return [], []
    off_a = [0]
    for tok in ta:
        off_a.append(off_a[-1] + len(tok))
    off_b = [0]
    for tok in tb:
        off_b.append(off_b[-1] + len(tok))
    ra, rb = [], []
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag == "equal":
            continue
        if i2 > i1:
            ra.append((off_a[i1], off_a[i2]))
        if j2 > j1:
            rb.append((off_b[j1], off_b[j2]))
    return ra, rb


# --------------------------------------------------------------------------- badges


def hunk_badges(result, hunk) -> list[str]:
    """One badge per rule touching ``hunk``: its edits there and the findings on its lines."""
    badges = []
    for rid in hunk.rule_ids:
        edits = [e for e in hunk.edits if e.rule_id == rid]
        findings = [f for f in hunk.findings if f.rule_id == rid]
        badges.append(_badge(rid, edits, findings))
    return badges


def _badge(rule_id: str, edits: list, findings: list) -> str:
    rule = rule_info(rule_id)
    title = rule_title(rule_id, edits) or rule_title(rule_id)
    cls, style = ("msm-badge", S["badge"]) if edits else ("msm-badge msm-badge-finding", S["badge_finding"])
    body = []
    if rule is not None and getattr(rule, "why", ""):
        body.append(f'<div class="msm-why">{_prose(rule.why)}</div>')
    if rule is not None and getattr(rule, "installed_note", ""):
        body.append(
            f'<div class="msm-installed-note" style="{S["installed"]}">'
            '<p style="margin: 4px 0"><b>Installed MindSpore:</b></p>'
            f"{_prose(rule.installed_note)}</div>"
        )
    items = []
    for e in edits:
        what = f"<code>{_e(e.api)}</code>" if e.api else _e(e.title or rule_id)
        detail = f" \u2014 {_e(e.detail)}" if e.detail else ""
        where = (
            f' <span class="msm-meta" style="{S["meta"]}">(PyTorch line {_range(e.before)} \u2192 '
            f"MindSpore line {_range(e.after)})</span>"
        )
        items.append(f'<li class="msm-edit">{what}{detail}{where}</li>')
    for f in findings:
        api = f"<code>{_e(f.api)}</code> " if f.api else ""
        items.append(
            f'<li class="msm-finding-item">\u26a0 {api}{_e(f.reason)} '
            f'<span class="msm-meta" style="{S["meta"]}">(line {f.line}, column {f.column})</span></li>'
        )
    if items:
        body.append(f'<ul class="msm-edit-list" style="{S["list"]}">{"".join(items)}</ul>')
    meta = []
    if rule is not None:
        if getattr(rule, "seed", ""):
            meta.append(f"Source: {_seed_html(rule.seed)}")
        if getattr(rule, "reference", ""):
            meta.append(f"MindSpore docs: {_reference_html(rule.reference)}")
        verified = getattr(rule, "verified_on", None) or {}
        if verified:
            meta.append(
                "Verified on " + ", ".join(f"{_e(k)} {_e(v)}" for k, v in sorted(verified.items()))
            )
        meta.append(f"More: <code>python -m msmagic rules {_e(rule_id)}</code>")
    if meta:
        sep = " \u00b7 "
        body.append(f'<p class="msm-meta msm-seed" style="{S["meta"]}; margin: 4px 0">{sep.join(meta)}</p>')
    return (
        f'<details class="{cls}" data-rule="{_e(rule_id)}" style="{style}">'
        f'<summary style="{S["badge_summary"]}"><span class="msm-rule-id" style="{S["rule_id"]}">'
        f'{_e(rule_id)}</span><span class="msm-rule-title">{_e(title)}</span></summary>'
        f'<div class="msm-explanation" style="{S["explanation"]}">{"".join(body)}</div></details>'
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


class RuleMarks:
    """Rule ids to show in the gutter, by line: an edit is marked on the first MindSpore
    line it wrote, or on its first PyTorch line when it wrote none."""

    def __init__(self, edits) -> None:
        self.old: dict[int, list] = {}
        self.new: dict[int, list] = {}
        for e in edits:
            a, b = e.after
            if b >= a and a > 0:
                ids = self.new.setdefault(a, [])
            else:
                ids = self.old.setdefault(e.before[0], [])
            if e.rule_id not in ids:
                ids.append(e.rule_id)

    def get(self, side: str, line: Optional[int]) -> list:
        if line is None:
            return []
        return (self.old if side == "old" else self.new).get(line, [])


def _mark_td(findings: list, kind: str = "", rules=()) -> str:
    cls = f"msm-mark {kind}" if kind else "msm-mark"
    parts = []
    for rid in rules:
        title = rule_title(rid)
        tip = f"{rid}: {title}" if title else rid
        parts.append(
            f'<span class="msm-rule-mark" data-rule="{_e(rid)}" title="{_e(tip)}" '
            f'style="{S["rule_mark"]}">{_e(rid)}</span>'
        )
    title = ""
    if findings:
        tip = "\n".join(f"{f.line}:{f.column} {f.rule_id} {f.api} \u2014 {f.reason}" for f in findings)
        title = f' title="{_e(tip)}"'
        parts.append("\u26a0")
    return f'<td class="{cls}"{title} style="{S["mark"]}">{"".join(parts)}</td>'


_KIND_BG = {"msm-del": DEL_BG, "msm-add": ADD_BG, "msm-empty": EMPTY_BG}


def _code_td(
    kind: str, side: str, line: Optional[int], html_text: str, findings: list, new_line=None
) -> str:
    """A code cell; ``data-old``/``data-new`` give its line number on each side. The
    inline style carries monospace, ``white-space: pre`` and the line's colours."""
    classes = ["msm-code"]
    if kind:
        classes.append(kind)
    style = S["code"]
    if kind in _KIND_BG:
        style += f"; background-color: {_KIND_BG[kind]}"
    if findings:
        classes.append("msm-finding-line")
        style += f"; box-shadow: {FINDING_BAR}"
    attr = f' data-{side}="{line}"' if line is not None else ""
    if new_line is not None:
        attr += f' data-new="{new_line}"'
    return f'<td class="{" ".join(classes)}"{attr} style="{style}">{html_text}</td>'


def _td(cls: str, style: str, text="") -> str:
    return f'<td class="{cls}" style="{style}">{text}</td>'


def _pairs(old: list[str], new: list[str], opcodes):
    """(tag, old line no or None, old html, new line no or None, new html) per aligned row."""
    for tag, i1, i2, j1, j2 in opcodes:
        if tag == "equal":
            for k in range(i2 - i1):
                yield (
                    tag,
                    i1 + k + 1,
                    code_html(_segments(old, i1 + k)),
                    j1 + k + 1,
                    code_html(_segments(new, j1 + k)),
                )
            continue
        n = max(i2 - i1, j2 - j1)
        for k in range(n):
            i = i1 + k if i1 + k < i2 else None
            j = j1 + k if j1 + k < j2 else None
            ra, rb = _intraline(old[i], new[j]) if i is not None and j is not None else ([], [])
            a = code_html(_segments(old, i), ra, DEL_CHG_BG) if i is not None else ""
            b = code_html(_segments(new, j), rb, ADD_CHG_BG) if j is not None else ""
            yield tag, None if i is None else i + 1, a, None if j is None else j + 1, b


_NARROW = '<col style="width:1%">'


def _table_open(cls: str) -> str:
    cols = {
        "msm-diff-split": _NARROW * 2 + "<col>" + '<col style="width:6px">' + _NARROW * 2 + "<col>",
        "msm-diff-unified": _NARROW * 4 + "<col>",
    }[cls]
    return f'<table class="msm-diff {cls}" style="{S["table"]}"><colgroup>{cols}</colgroup>'


def _split_table(old, new, opcodes, marks: _Marks, rules: Optional[RuleMarks] = None) -> str:
    rules = rules or RuleMarks(())
    th = S["th"]
    rows = [
        _table_open("msm-diff-split"),
        f'<thead><tr><th colspan="3" style="{th}">PyTorch</th>'
        f'<th class="msm-split-gap" style="{S["gap"]}"></th>'
        f'<th colspan="3" style="{th}">MindSpore</th></tr></thead><tbody>',
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
            + _td("msm-ln", S["ln"], "" if i is None else i)
            + _mark_td(fa, rules=rules.get("old", i))
            + _code_td(kind_a, "old", i, a, fa)
            + _td("msm-split-gap", S["gap"])
            + _td("msm-ln", S["ln"], "" if j is None else j)
            + _mark_td(fb, rules=rules.get("new", j))
            + _code_td(kind_b, "new", j, b, fb)
            + "</tr>"
        )
    rows.append("</tbody></table>")
    return "".join(rows)


def _unified_table(old, new, opcodes, marks: _Marks, rules: Optional[RuleMarks] = None) -> str:
    rules = rules or RuleMarks(())
    rows = [_table_open("msm-diff-unified"), "<tbody>"]

    def row(kind, sign, i, j, text, side, line, findings, new_line=None, rule_ids=()):
        cls = f"msm-row msm-row-{kind[4:]}" if kind else "msm-row msm-row-equal"
        k = f" {kind}" if kind else ""
        bg = f"; background-color: {_KIND_BG[kind]}" if kind in _KIND_BG else ""
        return (
            f'<tr class="{cls}">'
            + _td(f"msm-ln{k}", S["ln"] + bg, "" if i is None else i)
            + _td(f"msm-ln{k}", S["ln"] + bg, "" if j is None else j)
            + _mark_td(findings, kind, rule_ids)
            + _td(f"msm-sign{k}", S["sign"] + bg, sign)
            + _code_td(kind, side, line, text, findings, new_line)
            + "</tr>"
        )

    for tag, i1, i2, j1, j2 in opcodes:
        if tag == "equal":
            for k in range(i2 - i1):
                i, j = i1 + k + 1, j1 + k + 1
                found = marks.get("old", i) + marks.get("new", j)
                ids = list(dict.fromkeys(rules.get("old", i) + rules.get("new", j)))
                rows.append(
                    row("", " ", i, j, code_html(_segments(old, i - 1)), "old", i, found, j, ids)
                )
            continue
        dels, adds = list(range(i1, i2)), list(range(j1, j2))
        ranges_old: dict[int, list] = {i: [] for i in dels}
        ranges_new: dict[int, list] = {j: [] for j in adds}
        for i, j in zip(dels, adds):
            ranges_old[i], ranges_new[j] = _intraline(old[i], new[j])
        for i in dels:
            text = code_html(_segments(old, i), ranges_old[i], DEL_CHG_BG)
            rows.append(
                row("msm-del", "-", i + 1, None, text, "old", i + 1, marks.get("old", i + 1),
                    rule_ids=rules.get("old", i + 1))
            )
        for j in adds:
            text = code_html(_segments(new, j), ranges_new[j], ADD_CHG_BG)
            rows.append(
                row("msm-add", "+", None, j + 1, text, "new", j + 1, marks.get("new", j + 1),
                    rule_ids=rules.get("new", j + 1))
            )
    rows.append("</tbody></table>")
    return "".join(rows)


# --------------------------------------------------------------------------- page


def code_only_html(code: str, copy: bool = False) -> str:
    """The code as a highlighted ``<pre>``; with ``copy``, a Copy button above it that is
    shown only where the ``<style>`` block (and so its ``onclick``) survives."""
    lines = split_lines(code)
    body = "\n".join(code_html(_segments(lines, k)) for k in range(len(lines)))
    if code.endswith("\n"):
        body += "\n"
    pre = f'<pre class="msm-code-pre" style="{S["pre"]}">{body}</pre>'
    if not copy:
        return pre
    button = (
        f'<button class="msm-copy" type="button" title="Copy the MindSpore code" '
        f'onclick="{_e(_COPY_JS)}" style="{S["copy"]}">Copy</button>'
    )
    return button + pre


def code_block_html(code: str, label: str = "MindSpore code", open_: bool = False) -> str:
    """The collapsible code block with its Copy button."""
    n = len(split_lines(code))
    attr = " open" if open_ else ""
    return (
        f'<details class="msm-code-block" style="{S["code_block"]}"{attr}>'
        f'<summary style="{S["code_summary"]}">{_e(label)} ({plural(n, "line")}) '
        f'<span style="{S["meta"]}; font-weight: normal">select to copy</span></summary>'
        f"{code_only_html(code, copy=True)}</details>"
    )


def _findings_table(result) -> str:
    rows = []
    num, cell = S["findings_num"], S["findings_cell"]
    for f in sorted(result.unsupported, key=lambda f: (f.line, f.column)):
        title = rule_title(f.rule_id)
        rows.append(
            "<tr>"
            f'<td class="msm-num" style="{num}">{f.line}</td>'
            f'<td class="msm-num" style="{num}">{f.column}</td>'
            f'<td style="{cell}"><code>{_e(f.api)}</code></td>'
            f'<td style="{cell}"><span class="msm-mono" title="{_e(title)}" '
            f'style="font-family: {MONO}">{_e(f.rule_id)}</span></td>'
            f'<td style="{cell}">{_e(f.reason)}</td></tr>'
        )
    head = "".join(
        f'<th style="{S["th"]}">{h}</th>' for h in ("Line", "Column", "API", "Rule", "Reason")
    )
    return (
        f'<div class="msm-section" style="{S["section"]}">Findings ({len(result.unsupported)})</div>'
        f'<table class="msm-findings" style="{S["findings"]}"><thead><tr>{head}</tr></thead>'
        f'<tbody>{"".join(rows)}</tbody></table>'
    )


def hunk_html(result, hunk, table_html: str, extra_class: str = "") -> str:
    """One hunk: its range, a collapsed list of its rule badges, and its table in a
    horizontally scrolling pane."""
    (a1, a2), (b1, b2) = hunk.old_range, hunk.new_range
    badges = hunk_badges(result, hunk)
    rules = ""
    if badges:
        ids = " ".join(
            f'<span class="msm-rule-mark" style="{S["rule_mark"]}">{_e(r)}</span>' for r in hunk.rule_ids
        )
        rules = (
            f'<details class="msm-hunk-rules" style="{S["hunk_rules"]}">'
            f'<summary style="{S["hunk_rules_summary"]}">Explain {plural(len(badges), "rule")}: {ids}'
            f'</summary><div class="msm-badges" style="{S["badges"]}">{"".join(badges)}</div></details>'
        )
    cls = f"msm-hunk {extra_class}".strip()
    return (
        f'<div class="{cls}" data-hunk="{hunk.index}" data-old="{a1 + 1}-{a2}" '
        f'data-new="{b1 + 1}-{b2}" data-rules="{_e(" ".join(hunk.rule_ids))}" style="{S["hunk"]}">'
        f'<div class="msm-hunk-head" style="{S["hunk_head"]}">'
        f'<span class="msm-hunk-range" style="{S["hunk_range"]}">{_e(hunk.header)}</span>{rules}</div>'
        f'<div class="msm-pane" style="{S["pane"]}">{table_html}</div></div>'
    )


_VIEW_LABELS = {
    "split": "Split view: PyTorch and MindSpore side by side",
    "unified": "Unified view: one column of -/+ lines",
}


def render_html(result, view: Optional[str] = None) -> str:
    """The text/html view. Both layouts are included, each in a ``<details>``; ``view``
    ("split" or "unified"; default: the result's ``view`` option, else split) is the one
    that starts open."""
    if result.options.get("quiet"):
        return STYLE + f'<div class="msm-root" style="{S["root"]}">{code_only_html(result.code, copy=True)}</div>'
    view = resolve_view(result, view)
    old, new = split_lines(result.source), split_lines(result.code)
    hunks, unplaced = compute_hunks(result, autojunk=False)
    marks = _Marks(result.unsupported)
    n_edits, n_rules, n_findings = counts(result)

    parts = [STYLE, f'<div class="msm-root" data-view="{view}" style="{S["root"]}">']
    parts.append(
        f'<div class="msm-title" style="{S["title"]}">'
        f'<span class="msm-title-main" style="{S["title_main"]}">msmagic port: '
        f'{plural(n_edits, "edit")}, {plural(n_rules, "rule")}, {plural(n_findings, "finding")}</span>'
        f'<span class="msm-title-sub" style="{S["title_sub"]}">PyTorch \u2192 MindSpore</span></div>'
    )
    if not hunks:
        parts.append(
            f'<div class="msm-nochange" style="{S["nochange"]}">No changes: msmagic left this cell as it was.</div>'
        )
    else:
        shown, more_hunks, more_rows = shown_hunks(hunks)
        more = ""
        if more_rows:
            more = (
                f'<div class="msm-more" style="{S["nochange"]}">'
                f'{plural(more_rows, "more diff line")} in {plural(more_hunks, "hunk")} not shown '
                f"(the diff is cut at {MAX_DIFF_ROWS:,} lines). The whole MindSpore code is in "
                "the code block below, to select and copy.</div>"
            )
        for v in VIEWS:
            table = _split_table if v == "split" else _unified_table
            body = "".join(
                hunk_html(result, h, table(old, new, h.opcodes, marks, RuleMarks(h.edits)))
                for h in shown
            ) + more
            attr = " open" if v == view else ""
            parts.append(
                f'<details class="msm-view msm-view-{v}" data-view="{v}" style="{S["view"]}"{attr}>'
                f'<summary style="{S["view_summary"]}">{_VIEW_LABELS[v]}</summary>{body}</details>'
            )
    if unplaced:
        ids = list(dict.fromkeys(e.rule_id for e in unplaced))
        badges = "".join(_badge(rid, [e for e in unplaced if e.rule_id == rid], []) for rid in ids)
        parts.append(
            f'<div class="msm-section" style="{S["section"]}">Mapped without a visible change '
            "(same spelling, now MindSpore)</div>"
            f'<div class="msm-badges msm-unplaced" style="{S["badges"]}">{badges}</div>'
        )
    if result.unsupported:
        parts.append(_findings_table(result))
    if result.notes:
        items = "".join(f"<li>{_prose(n)}</li>" for n in result.notes)
        parts.append(
            f'<div class="msm-section" style="{S["section"]}">Notes</div>'
            f'<ul class="msm-notes" style="{S["list"]}">{items}</ul>'
        )
    parts.append(code_block_html(result.code))
    for rev in getattr(result, "revised", ()):
        parts.append(code_block_html(rev.result.code, label=f"{rev.name}() ported again"))
    parts.append("</div>")
    return "".join(parts)
