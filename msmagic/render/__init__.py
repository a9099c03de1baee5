"""Rendering of msmagic results for IPython/Jupyter.

:func:`mimebundle` is what ``PortResult._repr_mimebundle_`` returns. The dispatch is
generic so other result types (the parity report) can reuse it: an object may provide
``_render_text(color=False)``, ``_render_html()`` and ``_make_widget()``; otherwise its
``render_kind`` picks the renderers: a :class:`~msmagic.result.PortResult` ("port") is
rendered by :mod:`msmagic.render.text`, :mod:`msmagic.render.html` and
:mod:`msmagic.render.widget`, a ParityReport ("parity") by :mod:`msmagic.render.parity`.
Nothing here imports the result classes: they import this package to display themselves.

The bundle is ``text/plain`` and ``text/html`` only, never the ipywidgets view: a saved
notebook keeps exactly what was displayed, and a widget view reopened without its kernel
shows "Error displaying widget: model not found" (JupyterLab prefers the widget view to
the HTML next to it). The HTML is complete on its own (see :mod:`msmagic.render.html`):
both diff layouts as ``<details>``, the rule explanations, the findings and the code.
The widget (:mod:`msmagic.render.widget`) is still there for who displays it explicitly.

The renderers read only the edit log (``edits``, ``unsupported``, ``notes``) and the
rule registry (looked up by id, tolerating a missing rule); they know nothing about
individual rules.
"""

from __future__ import annotations

import bisect
import os
import sys
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from msmagic.lines import LineMatcher, group_body, group_header

TEXT = "text/plain"
HTML = "text/html"
WIDGET = "application/vnd.jupyter.widget-view+json"

VIEWS = ("split", "unified")

__all__ = [
    "mimebundle",
    "register_renderers",
    "render_kind",
    "rule_info",
    "compute_hunks",
    "Hunk",
    "LineMatcher",
    "MAX_DIFF_ROWS",
    "shown_hunks",
    "unified_diff_lines",
    "TEXT",
    "HTML",
    "WIDGET",
    "VIEWS",
]


# --------------------------------------------------------------------------- dispatch

#: render kind -> (text renderer, html renderer, widget factory); filled lazily.
_RENDERERS: dict[str, tuple[Callable, Callable, Optional[Callable]]] = {}


def register_renderers(
    kind: str,
    text: Callable[..., str],
    html: Callable[..., str],
    widget: Optional[Callable[..., Any]] = None,
) -> None:
    """Render objects whose ``render_kind`` is ``kind`` with these functions
    (``text(obj, color=False)``, ``html(obj)``, ``widget(obj)``)."""
    _RENDERERS[kind] = (text, html, widget)


def render_kind(result: Any) -> Optional[str]:
    """What kind of result this is: its class's ``render_kind`` (``"port"`` for a
    PortResult, ``"parity"`` for a ParityReport). No result class is imported: they
    are plain data below this package, and import it (lazily) only to display
    themselves."""
    kind = getattr(type(result), "render_kind", None)
    return kind if isinstance(kind, str) else None


def _builtin_renderers() -> None:
    if _RENDERERS:
        return

    from . import html as _html
    from . import text as _text

    def _widget(result):
        from .widget import make_widget

        return make_widget(result)

    register_renderers("port", _text.render_text, _html.render_html, _widget)

    def _parity_text(report, color=False):
        from .parity import render_parity_text

        return render_parity_text(report, color=color)

    def _parity_html(report):
        from .parity import render_parity_html

        return render_parity_html(report)

    def _parity_widget(report):
        from .parity import make_parity_widget

        return make_parity_widget(report)

    register_renderers("parity", _parity_text, _parity_html, _parity_widget)


def _lookup(result: Any) -> Optional[tuple]:
    _builtin_renderers()
    kind = render_kind(result)
    return _RENDERERS.get(kind) if kind is not None else None


def _render_text(result: Any, color: bool = False) -> str:
    method = getattr(result, "_render_text", None)
    if callable(method):
        return method(color=color)
    found = _lookup(result)
    if found is None:
        return repr(result)
    return found[0](result, color=color)


def _render_html(result: Any) -> Optional[str]:
    method = getattr(result, "_render_html", None)
    if callable(method):
        return method()
    found = _lookup(result)
    if found is None:
        return None
    return found[1](result)


def _make_widget(result: Any) -> Any:
    method = getattr(result, "_make_widget", None)
    if callable(method):
        return method()
    found = _lookup(result)
    if found is None or found[2] is None:
        return None
    return found[2](result)


def _get_ipython() -> Any:
    # Never import IPython just to learn that we are not inside it.
    mod = sys.modules.get("IPython")
    if mod is None:
        return None
    try:
        return mod.get_ipython()
    except Exception:
        return None


def _in_kernel() -> bool:
    ip = _get_ipython()
    return ip is not None and getattr(ip, "kernel", None) is not None


def _terminal_color() -> bool:
    """ANSI colour for text/plain only in a terminal IPython that has colours on."""
    if os.environ.get("NO_COLOR"):
        return False
    ip = _get_ipython()
    if ip is None:
        return False
    term = sys.modules.get("IPython.terminal.interactiveshell")
    cls = getattr(term, "TerminalInteractiveShell", None)
    if cls is None or not isinstance(ip, cls):
        return False
    return str(getattr(ip, "colors", "")).lower() != "nocolor"


def _quiet(result: Any) -> bool:
    options = getattr(result, "options", None)
    return bool(isinstance(options, dict) and options.get("quiet"))


def mimebundle(result: Any, include=None, exclude=None) -> dict:
    """The display data for ``result``: text/plain and text/html. The widget view is
    never included (see the module docstring); ``include``/``exclude`` filter the two."""
    include = set(include) if include else None
    exclude = set(exclude) if exclude else set()

    def wanted(mime: str) -> bool:
        return (include is None or mime in include) and mime not in exclude

    bundle: dict[str, Any] = {}
    if wanted(TEXT):
        bundle[TEXT] = _render_text(result, color=_terminal_color())
    if wanted(HTML):
        html = _render_html(result)
        if html is not None:
            bundle[HTML] = html
    return bundle


# --------------------------------------------------------------------------- shared helpers


def rule_info(rule_id: str) -> Any:
    """The registered rule with this id, or ``None`` if it is not (yet) available."""
    try:
        from msmagic.rules import registry
    except Exception:
        return None
    try:
        registry._load()
    except Exception:
        pass
    return registry.RULES.get(rule_id)


def split_lines(text: str) -> list[str]:
    """Lines without their endings, numbered as ``PortResult.diff()`` numbers them."""
    return text.splitlines()


def _overlaps(r: tuple[int, int], start: int, end: int) -> bool:
    """Does the 1-based inclusive range ``r`` meet ``start..end`` (empty if end < start)?"""
    if end < start or r[1] < r[0]:
        return False
    return r[0] <= end and r[1] >= start


@dataclass
class Hunk:
    """One hunk of the diff: SequenceMatcher opcodes (0-based, end-exclusive) plus the
    rules and findings whose lines meet its changed lines."""

    index: int
    opcodes: list
    edits: list = field(default_factory=list)
    #: rule ids of findings in this hunk whose rule made no edit here
    finding_rules: list = field(default_factory=list)
    #: the findings whose line meets this hunk's changed lines (set by compute_hunks)
    findings: list = field(default_factory=list)

    @property
    def old_range(self) -> tuple[int, int]:
        return self.opcodes[0][1], self.opcodes[-1][2]

    @property
    def new_range(self) -> tuple[int, int]:
        return self.opcodes[0][3], self.opcodes[-1][4]

    @property
    def header(self) -> str:
        return group_header(self.opcodes)

    def changed_old(self) -> list[tuple[int, int]]:
        """1-based inclusive ranges of changed input lines (may be empty ranges)."""
        return [(i1 + 1, i2) for tag, i1, i2, _, _ in self.opcodes if tag != "equal"]

    def changed_new(self) -> list[tuple[int, int]]:
        return [(j1 + 1, j2) for tag, _, _, j1, j2 in self.opcodes if tag != "equal"]

    def meets(self, old: tuple[int, int], new: tuple[int, int]) -> bool:
        return any(_overlaps(old, s, e) for s, e in self.changed_old()) or any(
            _overlaps(new, s, e) for s, e in self.changed_new()
        )

    @property
    def rule_ids(self) -> list[str]:
        seen: dict[str, None] = {}
        for e in self.edits:
            seen.setdefault(e.rule_id, None)
        for r in self.finding_rules:
            seen.setdefault(r, None)
        return list(seen)


def compute_hunks(result: Any, context: int = 3, autojunk: bool = True) -> tuple[list[Hunk], list]:
    """Hunks of ``result.source`` -> ``result.code`` and the edits that fall in none.

    With the default ``autojunk`` the hunks are exactly those of ``result.diff()`` (for
    cells under :data:`msmagic.lines.PLAIN_MATCH_LINES`; a bigger one is aligned by
    :class:`LineMatcher`). Edits and findings are placed by binary search over the
    hunks' changed ranges, so a cell with thousands of hunks costs no more per hunk.
    """
    old, new = split_lines(result.source), split_lines(result.code)
    matcher = LineMatcher(None, old, new, autojunk=autojunk)
    hunks = [Hunk(i, list(g)) for i, g in enumerate(matcher.get_grouped_opcodes(context))]
    if old == new:
        hunks = []
    find = _HunkIndex(hunks)
    unplaced = []
    for edit in result.edits:
        met = find(tuple(edit.before), tuple(edit.after))
        for k in met:
            hunks[k].edits.append(edit)
        if not met:
            unplaced.append(edit)
    seen = [{e.rule_id for e in h.edits} for h in hunks]
    for f in result.unsupported:
        pos_old = (f.line, f.line) if f.line else (1, 0)
        pos_new = (f.out_line, f.out_line) if f.out_line else (1, 0)
        for k in find(pos_old, pos_new):
            h = hunks[k]
            h.findings.append(f)
            if f.rule_id not in seen[k]:
                seen[k].add(f.rule_id)
                h.finding_rules.append(f.rule_id)
    return hunks, unplaced


class _HunkIndex:
    """Which hunks a pair of line ranges meets (as :meth:`Hunk.meets`), by binary
    search: the changed ranges of the hunks are disjoint and in order on each side."""

    def __init__(self, hunks: list) -> None:
        self.sides = []
        for changed in (Hunk.changed_old, Hunk.changed_new):
            ranges = [(s, e, k) for k, h in enumerate(hunks) for s, e in changed(h) if e >= s]
            self.sides.append((ranges, [e for _, e, _ in ranges]))

    def __call__(self, old: tuple[int, int], new: tuple[int, int]) -> list[int]:
        met: set = set()
        for (ranges, ends), (start, end) in zip(self.sides, (old, new)):
            if end < start:
                continue
            n = bisect.bisect_left(ends, start)
            while n < len(ranges) and ranges[n][0] <= end:
                met.add(ranges[n][2])
                n += 1
        return sorted(met)


#: A diff longer than this many rows (unified: context, removed and added lines) is
#: summarised: the first rows are shown, then how many more there are; the whole
#: MindSpore code stays in the output (the code block to select and copy).
MAX_DIFF_ROWS = 1000


def hunk_rows(hunk: Hunk) -> int:
    """The rows of ``hunk`` in the unified layout."""
    return sum(
        i2 - i1 if tag == "equal" else (i2 - i1) + (j2 - j1) for tag, i1, i2, j1, j2 in hunk.opcodes
    )


def shown_hunks(hunks: list, max_rows: int = MAX_DIFF_ROWS) -> tuple[list, int, int]:
    """The hunks to display within ``max_rows`` unified rows, the last one cut short if
    needed, then how many hunks are left out in whole or in part and how many rows."""
    shown: list = []
    rows = 0
    for k, h in enumerate(hunks):
        n = hunk_rows(h)
        if rows + n <= max_rows:
            shown.append(h)
            rows += n
            continue
        room = max_rows - rows
        cut = _cut_hunk(h, room) if room > 0 else None
        if cut is not None:
            shown.append(cut)
        hidden = sum(hunk_rows(x) for x in hunks[k:]) - (hunk_rows(cut) if cut is not None else 0)
        return shown, len(hunks) - k, hidden
    return shown, 0, 0


def _cut_hunk(hunk: Hunk, room: int) -> Optional[Hunk]:
    """The first ``room`` unified rows of ``hunk`` (whole lines of each opcode)."""
    opcodes = []
    for tag, i1, i2, j1, j2 in hunk.opcodes:
        if room <= 0:
            break
        if tag == "equal":
            k = min(i2 - i1, room)
            opcodes.append((tag, i1, i1 + k, j1, j1 + k))
            room -= k
            continue
        dels = min(i2 - i1, (room + 1) // 2 if j2 > j1 else room)
        adds = min(j2 - j1, room - dels)
        if dels or adds:
            opcodes.append((tag, i1, i1 + dels, j1, j1 + adds))
        room -= dels + adds
    if not opcodes:
        return None
    return Hunk(hunk.index, opcodes, hunk.edits, hunk.finding_rules, hunk.findings)


def unified_diff_lines(old: list, new: list, hunks: list) -> list[str]:
    """``result.diff()``'s lines for these hunks (``difflib.unified_diff``'s format)."""
    if not hunks:
        return []
    out = ["--- pytorch", "+++ mindspore"]
    for h in hunks:
        out.append(h.header)
        out.extend(group_body(old, new, h.opcodes))
    return out


def rule_title(rule_id: str, edits=()) -> str:
    """The edit's own title if it has one, else the registered rule's."""
    for e in edits:
        if e.rule_id == rule_id and e.title:
            return e.title
    rule = rule_info(rule_id)
    return getattr(rule, "title", "") if rule is not None else ""


def counts(result: Any) -> tuple[int, int, int]:
    return len(result.edits), len(result.rule_ids), len(result.unsupported)


def plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def resolve_view(result: Any, view: Optional[str]) -> str:
    """``view`` if given (must be one of VIEWS), else the result's option, else split."""
    if view is not None:
        if view not in VIEWS:
            raise ValueError(f"view must be one of {VIEWS}, not {view!r}")
        return view
    options = getattr(result, "options", None) or {}
    opt = options.get("view", "split")
    return opt if opt in VIEWS else "split"
