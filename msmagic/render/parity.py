"""Rendering of a :class:`msmagic.parity_check.report.ParityReport` (what ``%%ms_parity`` shows).

Three views of the same data:

* :func:`render_parity_text` -- text/plain: summary, aligned table, first divergence with
  its rules, errors with their tracebacks, synchronised and bridged names, timings, notes;
* :func:`render_parity_html` -- text/html, self-contained like the port view (one inline
  ``<style>``, no script, no external assets, readable on light and dark themes): a
  status pill, the comparison table, the first divergence with the rule badges of that
  statement, errors next to the statement that raised them, and the port's diff with the
  divergence lines marked;
* :func:`make_parity_widget` -- core ipywidgets: the same HTML under a Split/Unified
  toggle for the embedded diff.

Stable class names (tests rely on them): ``msm-parity``, ``msm-pill`` +
``msm-pill-ok|differs|error|empty``, ``msm-parity-table``, ``msm-status-match|differs|
only|not-comparable``, ``msm-first-divergence``, ``msm-error``, ``msm-traceback``,
``msm-synced``, ``msm-bridged``, ``msm-timings``, ``msm-parity-notes``, ``msm-divergence``
(diff code cells of the first-divergence statement), ``msm-error-line`` (diff code cells
of a statement that raised), ``msm-context`` (an unchanged stretch of the cell shown
because it holds a marked statement).

Nothing here imports torch or mindspore.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import re
from typing import Any, Optional

from msmagic.parity_check.compare import (
    DIFFERS,
    MATCH,
    NOT_COMPARABLE,
    ONLY_MS,
    ONLY_TORCH,
    OUTPUT_NAME,
)

from msmagic.parity_check.layers import layer_table

from . import Hunk, VIEWS, compute_hunks, plural, resolve_view, rule_title, split_lines
from . import html as _html

__all__ = [
    "render_parity_text",
    "render_parity_html",
    "make_parity_widget",
    "status_class",
    "format_number",
]

_e = _html._e

# --------------------------------------------------------------------------- shared


_STATUS_CLASS = {
    MATCH: "match",
    DIFFERS: "differs",
    ONLY_TORCH: "only",
    ONLY_MS: "only",
    NOT_COMPARABLE: "not-comparable",
}

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def status_class(status: str) -> str:
    """``msm-status-…`` suffix for a row status: match, differs, only, not-comparable."""
    return _STATUS_CLASS.get(status, "not-comparable")


def format_number(x: Optional[float]) -> str:
    """Compact, readable: ``0``, ``0.25``, ``3.1e-07``, ``inf``; ``—`` when absent."""
    if x is None:
        return "\u2014"
    try:
        x = float(x)
    except (TypeError, ValueError):
        return str(x)
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if x == 0:
        return "0"
    if 1e-3 <= abs(x) < 1e4:
        return f"{x:.4g}"
    return f"{x:.1e}"


def _seconds(t) -> str:
    try:
        t = float(t)
    except (TypeError, ValueError):
        return str(t)
    if t <= 0:
        return "0 s"
    if t < 1:
        return f"{t * 1e3:.3g} ms"
    if t < 100:
        return f"{t:.3g} s"
    return f"{t:.0f} s"


def _shape(shape) -> str:
    if shape is None:
        return "\u2014"
    try:
        return "(" + ", ".join(str(int(d)) for d in shape) + ("," if len(shape) == 1 else "") + ")"
    except (TypeError, ValueError):
        return str(shape)


def _side(shape, dtype) -> str:
    if shape is None and not dtype:
        return "\u2014"
    parts = [_shape(shape)] if shape is not None else []
    if dtype:
        parts.append(str(dtype))
    return " ".join(parts)


def _range(r) -> str:
    if not r:
        return "?"
    a, b = r
    return f"{a}" if a == b else f"{a}\u2013{b}"


def _plain_range(r) -> str:
    if not r:
        return "?"
    a, b = r
    return f"{a}" if a == b else f"{a}-{b}"


def _lines_label(r) -> str:
    if not r:
        return "line ?"
    return f"line {r[0]}" if r[0] == r[1] else f"lines {r[0]}\u2013{r[1]}"


def _strip_ansi(text: str) -> str:
    return _ANSI.sub("", text or "")


#: the parts of a run's time, in the order shown; they add up to the total
_TIMING_PARTS = ("imports", "port", "PyTorch", "MindSpore", "sync and compare", "other")


def _timings(report) -> list[tuple[str, Any]]:
    """(label, seconds) of each part of the run's time that took any, then the total."""
    t = report.timings or {}
    out = []
    for label in _TIMING_PARTS:
        # a report built by hand may name the sides "torch" and "mindspore"
        v = t.get(label, t.get({"PyTorch": "torch", "MindSpore": "mindspore"}.get(label, label)))
        if v is not None and (v >= 0.0005 or label in ("PyTorch", "MindSpore")):
            out.append((label, v))
    if t.get("total") is not None:
        out.append(("total", t["total"]))
    return out


def ms_code(report) -> str:
    """The MindSpore code that ran: the port, or the explicit ``--against`` code."""
    port = report.port
    if getattr(report, "against", False):
        opts = getattr(report, "options", None) or {}
        for key in ("against_code", "ms_code", "against"):
            code = opts.get(key)
            if isinstance(code, str):
                return code
    return port.code if port is not None else ""


def _diff_source(report):
    """A PortResult-like object whose source -> code is what was compared.

    With ``--against`` the right-hand side is the explicit MindSpore code; the port's
    edits only apply when that code is the port's own code.
    """
    port = report.port
    code = ms_code(report)
    if port is None:
        return None
    if code == port.code and not getattr(report, "against", False):
        return port
    if code == port.code:
        # the runner put the explicit code into the port result itself
        return dataclasses.replace(port, notes=[], options=dict(port.options))
    return dataclasses.replace(port, code=code, edits=[], unsupported=[], notes=[], statements=[],
                               options=dict(port.options))


def _excerpt(text: str, r, limit: int = 8) -> list[str]:
    if not r or not text:
        return []
    lines = split_lines(text)
    a, b = max(1, r[0]), min(len(lines), r[1])
    chunk = lines[a - 1 : b]
    if len(chunk) > limit:
        chunk = chunk[: limit - 1] + [f"\u2026 ({len(chunk) - limit + 1} more lines)"]
    return chunk


def _statement_lines(report, index: int):
    """The input lines of statement ``index``, from the plan of what ran (the port's
    statements; with --against, those the runner paired with the explicit code): the
    same statement, and so the same line, the divergence box and the errors name."""
    port = report.port
    if port is None or index is None or index < 0:
        return None
    for statement in port.statements:
        if statement.index == index:
            return statement.before
    return None


def _divergence_edits(report, div) -> list:
    port = report.port
    if port is None:
        return []
    edits = [e for e in port.edits if e.statement == div.statement]
    if not edits and div.before:
        edits = port.edits_for_input_lines(*div.before)
    return edits


def _pill(report) -> tuple[str, str]:
    """(class suffix, label) for the header pill: the report's one verdict."""
    return report.verdict


def _settings(report) -> str:
    parts = [f"device {report.device}", f"rtol {report.rtol:g}", f"atol {report.atol:g}"]
    opts = report.options or {}
    if opts.get("seed") is not None:
        parts.append(f"seed {opts['seed']}")
    if opts.get("timeout") is not None:
        parts.append(f"timeout {opts['timeout']:g} s" if isinstance(opts["timeout"], (int, float)) else f"timeout {opts['timeout']}")
    if opts.get("sync") is False:
        parts.append("no sync")
    return ", ".join(parts)


def _errors(report) -> list:
    return [e for e in (report.torch_error, report.ms_error) if e is not None]


def _banners(report) -> list[str]:
    """Interrupt / timeout lines, unless the runner's notes already say so."""
    out = []
    notes = " ".join(report.notes or [])
    if report.interrupted and "Interrupted" not in notes:
        out.append("Interrupted (Ctrl-C): the comparison stopped early; values bound before that are shown.")
    if report.timed_out and "--timeout" not in notes:
        timeout = (report.options or {}).get("timeout")
        after = f" ({timeout:g} s)" if isinstance(timeout, (int, float)) else ""
        out.append(
            f"The {report.timed_out} side ran past --timeout{after} and was stopped; "
            "values bound before that are compared."
        )
    return out


# --------------------------------------------------------------------------- charts

#: the most sequence rows that get a chart
MAX_CHARTS = 6
#: the most bars a chart draws (the row's series is thinned further to this)
CHART_BARS = 120
_SPARK = "▁▂▃▄▅▆▇█"


def _charted(report) -> list:
    """The compared rows that hold a numeric sequence the cell bound (a list of losses, a
    1-D tensor; module parameters keep none): at most MAX_CHARTS."""
    rows = [r for r in report.compared_rows if getattr(r, "series", None) and r.name != OUTPUT_NAME]
    return rows[:MAX_CHARTS]


def _thin(values: list, n: int) -> list:
    if len(values) <= n:
        return list(values)
    step = (len(values) - 1) / (n - 1)
    return [values[round(i * step)] for i in range(n)]


def _finite(values) -> list:
    return [v for v in values if isinstance(v, (int, float)) and math.isfinite(v)]


def sparkline(values: list, width: int = 60) -> str:
    """One line of block characters for ``values`` (text/plain charts)."""
    values = _thin(values, width)
    finite = _finite(values)
    if not finite:
        return ""
    lo, hi = min(finite), max(finite)
    out = []
    for v in values:
        if not (isinstance(v, (int, float)) and math.isfinite(v)):
            out.append("?")
            continue
        k = 0 if hi == lo else round((v - lo) / (hi - lo) * (len(_SPARK) - 1))
        out.append(_SPARK[k])
    return "".join(out)


_SIDE_COLOURS = {"PyTorch": "rgb(86, 125, 235)", "MindSpore": "rgb(222, 130, 0)",
                 "|Δ|": "rgb(220, 60, 60)"}


def _bars(values: list, lo: float, hi: float, height: int, colour: str) -> str:
    """A strip of bars drawn with inline-styled spans (no SVG or script: JupyterLab's
    sanitizer keeps them in an untrusted notebook)."""
    bar = (f"display:inline-block;width:2px;margin-right:1px;vertical-align:bottom;"
           f"background-color:{colour}")
    parts = []
    for v in values:
        if not (isinstance(v, (int, float)) and math.isfinite(v)):
            h = height
            style = f"{bar};height:{h}px;opacity:0.3"
        else:
            h = 1 + (0 if hi == lo else round((v - lo) / (hi - lo) * (height - 1)))
            style = f"{bar};height:{h}px"
        parts.append(f'<span style="{style}"></span>')
    return (f'<span style="display:inline-block;height:{height}px;line-height:0;'
            f'white-space:nowrap;vertical-align:bottom">{"".join(parts)}</span>')


def _chart_html(row) -> str:
    """Both sides of a sequence on one scale, and their difference on its own."""
    t, m = (_thin(list(v), CHART_BARS) for v in row.series)
    finite = _finite(t) + _finite(m)
    if not finite:
        return ""
    lo, hi = min(finite), max(finite)
    delta = [abs(a - b) if math.isfinite(a) and math.isfinite(b) else float("nan") for a, b in zip(t, m)]
    dmax = max(_finite(delta) or [0.0])
    label = ("display:inline-block;width:78px;font-size:11px;opacity:0.8;vertical-align:bottom;"
             "text-align:left")
    scale = "font-size:11px;opacity:0.7;margin-left:6px;vertical-align:bottom;white-space:nowrap"
    strips = []
    for name, values, a, b, h, note in (
        ("PyTorch", t, lo, hi, 34, f"{format_number(lo)} … {format_number(hi)}"),
        ("MindSpore", m, lo, hi, 34, "same scale"),
        ("|Δ|", delta, 0.0, dmax, 18, f"0 … {format_number(dmax)}"),
    ):
        strips.append(
            f'<div style="margin:1px 0;white-space:nowrap"><span style="{label}">{_e(name)}</span>'
            f'{_bars(values, a, b, h, _SIDE_COLOURS[name])}<span style="{scale}">{_e(note)}</span></div>'
        )
    count = len(row.series[0])
    shown = f"{count} values" if count == len(t) else f"{len(t)} of {count} points shown"
    return (
        f'<div class="msm-chart" data-name="{_e(row.name)}" style="margin:6px 0;padding:4px 8px;'
        f'border:1px solid rgba(128, 128, 128, 0.35);border-radius:4px;overflow-x:auto;max-width:100%">'
        f'<div style="font-size:12px;margin-bottom:2px"><code>{_e(row.name)}</code> '
        f'<span style="opacity:0.75">({_e(shown)}, max |Δ| {_e(format_number(row.max_abs))})'
        f"</span></div>{''.join(strips)}</div>"
    )


# --------------------------------------------------------------------------- text/plain

_RESET = "\x1b[0m"
_TSTYLE = {
    "header": "\x1b[1m",
    "match": "\x1b[32m",
    "differs": "\x1b[31m",
    "only": "\x1b[33m",
    "not-comparable": "\x1b[2m",
    "ok": "\x1b[1;32m",
    "error": "\x1b[1;31m",
    "empty": "\x1b[1;33m",
    "rule": "\x1b[35m",
    "del": "\x1b[31m",
    "add": "\x1b[32m",
}


def _paint(text: str, style: str, color: bool) -> str:
    return f"{_TSTYLE[style]}{text}{_RESET}" if color and text else text


def _text_table(report, color: bool) -> list[str]:
    header = ["name", "PyTorch", "MindSpore", "max |\u0394|", "max rel \u0394", "status"]
    body = []
    rows = report.compared_rows
    for r in rows:
        status = r.status + (f" ({r.note})" if r.note else "")
        body.append(
            [
                r.name,
                _side(r.torch_shape, r.torch_dtype),
                _side(r.ms_shape, r.ms_dtype),
                format_number(r.max_abs),
                format_number(r.max_rel),
                status,
            ]
        )
    widths = [max(len(row[i]) for row in [header] + body) for i in range(len(header) - 1)]
    out = []
    for k, row in enumerate([header] + body):
        cells = []
        for i, cell in enumerate(row[:-1]):
            cells.append(cell.rjust(widths[i]) if i in (3, 4) and k else cell.ljust(widths[i]))
        last = row[-1]
        if k:
            last = _paint(last, status_class(rows[k - 1].status), color)
        out.append(("  ".join(cells) + "  " + last).rstrip())
    return out


def render_parity_text(report, color: bool = False) -> str:
    """The text/plain view of a ParityReport (ANSI colours only with ``color=True``)."""
    kind, label = _pill(report)
    title = "msmagic parity" + (" (against explicit MindSpore code)" if report.against else "")
    lines = [
        _paint(f"{title}: {report.summary()}", "header", color)
        + f"  [{_paint(label, kind, color)}]  ({_settings(report)})"
    ]
    for b in _banners(report):
        lines.append(b)

    if report.compared_rows:
        lines.append("")
        lines.extend(_text_table(report, color))
        for r in _charted(report):
            t, m = r.series
            lines.append(f"  {r.name}: PyTorch   {sparkline(t)}")
            lines.append(f"  {' ' * len(r.name)}  MindSpore {sparkline(m)}")
    if report.ms_only:
        lines.append("only in the MindSpore code (not compared): " + ", ".join(report.ms_only))

    div = report.first_divergence
    if div is not None:
        lines.append("")
        where = f"PyTorch line {_plain_range(div.before)}"
        if div.after:
            where += f" -> MindSpore line {_plain_range(div.after)}"
        names = ", ".join(div.names) if div.names else "?"
        extra = f", max |\u0394| {format_number(div.max_abs)}" if div.max_abs is not None else ""
        lines.append(f"first divergence: statement {div.statement + 1} ({where}): {names}{extra}")
        for text in _excerpt(report.port.source if report.port else "", div.before):
            lines.append("  " + _paint(f"- {text}", "del", color))
        for text in _excerpt(ms_code(report), div.after):
            lines.append("  " + _paint(f"+ {text}", "add", color))
        edits = _divergence_edits(report, div)
        if div.rule_ids:
            for rid in div.rule_ids:
                title_ = rule_title(rid, edits)
                lines.append("  rule " + _paint(f"{rid} {title_}".rstrip(), "rule", color))
                rule = _html.rule_info(rid)
                why = getattr(rule, "why", "") if rule is not None else ""
                if why:
                    for para in why.strip().splitlines():
                        lines.append(f"    {para}".rstrip())
        elif report.against:
            lines.append("  explicit MindSpore code: no port rule wrote this statement")
        else:
            lines.append("  no rule changed this statement")

    lines.extend(_layers_text(report, color))

    for err in _errors(report):
        lines.append("")
        lines.append(
            _paint(f"{err.side} raised {err.type}", "error", color)
            + f" at statement {err.statement + 1} ({_lines_label(err.lines)}): {err.message}"
        )
        if getattr(err, "unported", None):
            lines.append(_paint("  likely cause: ", "error", color) + err.cause())
        code = report.port.source if err.side == "PyTorch" and report.port else ms_code(report)
        for text in _excerpt(code, err.lines):
            lines.append(f"  > {text}")
        tb = err.traceback if color else _strip_ansi(err.traceback)
        if tb and tb.strip():
            for text in tb.rstrip().splitlines():
                lines.append(f"  {text}")

    if report.synchronised:
        lines.append("")
        lines.append("synchronised, not compared:")
        lines.extend(f"  - {s}" for s in report.synchronised)
    if report.bridged:
        lines.append(("" if report.synchronised else "\n") + "bridged from your namespace: " + ", ".join(report.bridged))
    timings = _timings(report)
    if timings:
        lines.append("time: " + ", ".join(f"{label} {_seconds(v)}" for label, v in timings))
    if report.notes:
        lines.append("")
        lines.append("notes:")
        for note in report.notes:
            lines.append(f"  - {note}")
    return "\n".join(lines)


def _layers_shown(report):
    """The layer report worth showing: one with a divergent layer, or the layers of a
    statement that diverged or failed (else None: everything matched)."""
    layers = getattr(report, "layers", None)
    if layers is None or not layers.rows:
        return None
    if layers.first is None and report.ok:
        return None
    return layers


def _depth(row) -> int:
    return row.path.count(".") + 1 if row.path else 0


def _gradient_summary(layers) -> str:
    grads = layers.gradients
    if not grads:
        return ""
    matched = [g for g in grads if g[2] == "match"]
    shown = "; ".join(f"{layer or '(top level)'} ({', '.join(leaves)}){'' if st == 'match' else f' [forward {st}]' if st else ''}"
                      for layer, leaves, st in grads[:6])
    more = f" and {len(grads) - 6} more" if len(grads) > 6 else ""
    text = (f"gradients differ in {plural(len(grads), 'layer')}: {shown}{more}. ")
    if matched:
        text += (f"The forward output matched in {len(matched)} of them: their gradients differ because the "
                 "gradient flowing back from a later layer does")
        if layers.first is not None:
            text += f" (the first forward divergence is {layers.first.where})"
        text += "."
    return text


def _layers_text(report, color: bool) -> list[str]:
    layers = _layers_shown(report)
    if layers is None:
        return []
    lines = ["", f"layers of statement {layers.statement + 1} ({layers.compared} of "
             f"{plural(layers.calls, 'layer call')} compared):"]
    first = layers.first
    if first is not None:
        lines.append("  " + _paint(layers.summary(), "error", color))
        if first.rule_ids:
            lines.append("    ported by " + ", ".join(first.rule_ids))
    else:
        lines.append("  no layer's output differs where its input matched (the difference comes from "
                     "outside the layers: a functional call, the loss or the data)")
    for note in layers.notes:
        lines.append(f"  {note}")
    rows = layer_table(layers)
    width = max((2 * _depth(r) + len(r.path or r.model) for r in rows), default=10) + 2
    for r in rows:
        label = ("  " * _depth(r) + (r.path.rsplit(".", 1)[-1] if r.path else r.model)).ljust(width)
        pair = f"{r.torch_class} → {r.ms_class or '-'}"
        call = f" (call {r.call + 1})" if r.call else ""
        lines.append(f"  {label} {pair:<34} {format_number(r.out_max_abs):>10}  {r.status or r.note}{call}")
    hidden = len(layer_table(layers, limit=None)) - len(rows)
    if hidden > 0:
        lines.append(f"  ... {plural(hidden, 'more row')}")
    grads = _gradient_summary(layers)
    if grads:
        lines.append("  " + grads)
    return lines


_LAYER_STATUS_STYLE = {
    "match": "status_match", "differs": "status_differs", "shape": "status_differs",
    "state differs": "status_differs", "follows": "status_only", "missing": "status_not-comparable",
    "random": "status_only",
}


def _layers_html(report) -> str:
    """The first divergent layer and the per-layer table, collapsed (a ``<details>``
    element: it opens without scripts, in an untrusted notebook too)."""
    layers = _layers_shown(report)
    if layers is None:
        return ""
    first = layers.first
    if first is not None:
        head = (f'First divergent layer: <code>{_e(first.where)}</code> ({_e(first.torch_class)} → '
                f'{_e(first.ms_class or "?")}), call {first.call + 1}: input max |Δ| '
                f'{_e(format_number(first.in_max_abs))}, output max |Δ| {_e(format_number(first.out_max_abs))}'
                + (f" — {_e(first.note)}" if first.note else ""))
        if first.rule_ids:
            head += " · ported by " + ", ".join(f"<code>{_e(r)}</code>" for r in first.rule_ids)
    else:
        head = ("No layer's output differs where its input matched: the difference comes from outside the "
                "layers (a functional call, the loss or the data).")
    # the table's font and the rows' rules are set once (cells inherit them); each cell
    # carries only its padding, so 40 rows stay a few kilobytes in a saved notebook
    th, num = P["th"], P["th"] + ";" + P["num"]
    cell, right = "padding:2px 8px", "padding:2px 8px;text-align:right;white-space:nowrap"
    line = "border-bottom:1px solid rgba(128,128,128,.25)"
    rows = layer_table(layers)
    noted = any(r.note for r in rows)
    body = []
    for r in rows:
        status = _LAYER_STATUS_STYLE.get(r.status)
        name = r.path.rsplit(".", 1)[-1] if r.path else r.model
        body.append(
            f'<tr class="msm-layer" data-path="{_e(r.where)}" data-status="{_e(r.status)}" style="{line}">'
            f'<td style="padding:2px 8px 2px {8 + 14 * _depth(r)}px" title="{_e(r.where)}">{_e(name)}</td>'
            f'<td style="{cell}">{_e(r.torch_class)} \u2192 {_e(r.ms_class or "-")}</td>'
            f'<td style="{right}">{r.call + 1}</td>'
            f'<td style="{right}">{_e(format_number(r.in_max_abs))}</td>'
            f'<td style="{right}">{_e(format_number(r.out_max_abs))}</td>'
            f'<td style="{cell}{";" + P[status] if status else ""}">{_e(r.status or "-")}</td>'
            + (f'<td style="{cell};font-family:inherit">{_e(r.note)}</td>' if noted else "") + "</tr>")
    hidden = len(layer_table(layers, limit=None)) - len(rows)
    if hidden > 0:
        body.append(f'<tr><td colspan="{7 if noted else 6}" style="{cell}">\u2026 {plural(hidden, "more row")} '
                    '(report.layers.rows holds every one)</td></tr>')
    table = (f'<table class="msm-layer-table" style="{P["table"]};{P["mono"]}"><thead><tr>'
             f'<th style="{th}">Layer</th><th style="{th}">PyTorch \u2192 MindSpore</th>'
             f'<th style="{num}">Call</th><th style="{num}">input max |\u0394|</th>'
             f'<th style="{num}">output max |\u0394|</th><th style="{th}">Status</th>'
             + (f'<th style="{th}">Note</th>' if noted else "")
             + f'</tr></thead><tbody>{"".join(body)}</tbody></table>')
    notes = "".join(f'<div class="msm-meta" style="{S["meta"]}">{_e(n)}</div>' for n in layers.notes)
    grads = _gradient_summary(layers)
    if grads:
        notes += f'<div class="msm-layer-gradients msm-meta" style="{S["meta"]}">{_e(grads)}</div>'
    return (f'<div class="msm-layers" style="{P["box"] if first is not None else S["meta"]}" '
            f'data-statement="{layers.statement}" data-first="{_e(first.where) if first else ""}">'
            f'<div class="msm-section" style="font-weight:600">Layers of statement {layers.statement + 1} '
            f'({layers.compared} of {plural(layers.calls, "layer call")} compared)</div>'
            f'<div class="msm-first-layer">{head}</div>{notes}'
            f'<details class="msm-layer-details"><summary style="cursor:pointer">Per-layer table '
            f'({len(rows)} rows)</summary><div style="{S["pane"]}">{table}</div></details></div>')


# --------------------------------------------------------------------------- text/html

PARITY_CSS = """
.msm-root .msm-pill { display: inline-block; padding: 0 9px; border-radius: 10px; font-weight: 700;
  font-size: 0.92em; border: 1px solid rgba(128, 128, 128, 0.5); }
.msm-root .msm-pill-ok { background: rgba(46, 160, 67, 0.22); border-color: rgba(46, 160, 67, 0.7); }
.msm-root .msm-pill-differs { background: rgba(248, 81, 73, 0.22); border-color: rgba(248, 81, 73, 0.7); }
.msm-root .msm-pill-error { background: rgba(248, 81, 73, 0.35); border-color: rgba(248, 81, 73, 0.9); }
.msm-root .msm-pill-empty { background: rgba(222, 150, 0, 0.2); border-color: rgba(222, 150, 0, 0.7); }
.msm-root .msm-banner { margin: 8px 0; padding: 5px 10px; border-left: 3px solid rgba(248, 81, 73, 0.9);
  background: rgba(248, 81, 73, 0.10); }
.msm-root table.msm-parity-table { border-collapse: collapse; width: 100%; table-layout: auto; margin: 8px 0;
  font-size: inherit; border: 0; }
.msm-root table.msm-parity-table th, .msm-root table.msm-parity-table td { text-align: left;
  vertical-align: top; padding: 3px 8px; border-bottom: 1px solid var(--jp-border-color2, rgba(128, 128, 128, 0.35)); }
.msm-root table.msm-parity-table th { font-weight: 600; }
.msm-root table.msm-parity-table td.msm-num, .msm-root table.msm-parity-table th.msm-num {
  text-align: right; white-space: nowrap; }
.msm-root table.msm-parity-table tbody tr { background: transparent; }
.msm-root table.msm-parity-table tr.msm-status-match td.msm-status { background: rgba(46, 160, 67, 0.16); }
.msm-root table.msm-parity-table tr.msm-status-differs td { background: rgba(248, 81, 73, 0.10); }
.msm-root table.msm-parity-table tr.msm-status-differs td.msm-status { background: rgba(248, 81, 73, 0.26);
  font-weight: 600; }
.msm-root table.msm-parity-table tr.msm-status-only td.msm-status { background: rgba(222, 150, 0, 0.22); }
.msm-root table.msm-parity-table tr.msm-status-not-comparable td.msm-status { background: rgba(128, 128, 128, 0.18); }
.msm-root table.msm-parity-table td.msm-status { white-space: nowrap; }
.msm-root .msm-first-divergence, .msm-root .msm-error { margin: 8px 0; padding: 6px 10px; border-radius: 4px;
  border: 1px solid rgba(248, 81, 73, 0.55); border-left-width: 4px; }
.msm-root .msm-first-divergence { background: rgba(248, 81, 73, 0.06); }
.msm-root .msm-error { background: rgba(248, 81, 73, 0.09); }
.msm-root .msm-first-divergence .msm-section, .msm-root .msm-error .msm-section { margin-top: 0; }
.msm-root pre.msm-excerpt, .msm-root pre.msm-traceback { margin: 4px 0; padding: 6px 8px; white-space: pre-wrap;
  overflow-wrap: anywhere; border: 1px solid var(--jp-border-color2, rgba(128, 128, 128, 0.35)); border-radius: 4px;
  background: rgba(128, 128, 128, 0.08); color: inherit; }
.msm-root .msm-excerpt .msm-side-label { opacity: 0.65; user-select: none; }
.msm-root .msm-error-message { font-weight: 600; }
.msm-root td.msm-code.msm-divergence { background: rgba(248, 81, 73, 0.22);
  box-shadow: inset 3px 0 0 rgba(248, 81, 73, 0.95); }
.msm-root td.msm-code.msm-error-line { box-shadow: inset 3px 0 0 rgba(248, 81, 73, 0.95);
  outline: 1px dashed rgba(248, 81, 73, 0.8); outline-offset: -1px; }
.msm-root .msm-hunk.msm-context .msm-hunk-head { font-style: italic; }
.msm-root ul.msm-synced, .msm-root ul.msm-bridged, .msm-root ul.msm-parity-notes { margin: 4px 0; padding-left: 20px; }
.msm-root .msm-timings { margin: 6px 0; display: flex; flex-wrap: wrap; gap: 4px 16px; }
.msm-root .msm-timings .msm-timing b { font-weight: 600; }
"""

STYLE = _html.STYLE.replace("</style>", PARITY_CSS + "</style>")

_RED = "rgba(248, 81, 73, {})"
#: inline styles: what carries meaning survives a sanitizer that drops the <style> block
P = {
    "pill": "display:inline-block;padding:0 9px;margin-right:8px;border-radius:10px;font-weight:700;"
    "font-size:0.92em;border:1px solid rgba(128, 128, 128, 0.5)",
    "pill_ok": "background-color:rgba(46, 160, 67, 0.22);border-color:rgba(46, 160, 67, 0.7)",
    "pill_differs": f"background-color:{_RED.format(0.22)};border-color:{_RED.format(0.7)}",
    "pill_error": f"background-color:{_RED.format(0.35)};border-color:{_RED.format(0.9)}",
    "pill_empty": "background-color:rgba(222, 150, 0, 0.2);border-color:rgba(222, 150, 0, 0.7)",
    "banner": f"margin:8px 0;padding:5px 10px;border-left:3px solid {_RED.format(0.9)};"
    f"background-color:{_RED.format(0.10)}",
    "table": "border-collapse:collapse;width:100%;table-layout:auto;margin:8px 0;font-size:inherit;border:0",
    "th": "text-align:left;vertical-align:top;padding:3px 8px;font-weight:600;"
    "border-bottom:1px solid rgba(128, 128, 128, 0.5)",
    "td": "text-align:left;vertical-align:top;padding:3px 8px;border-bottom:1px solid rgba(128, 128, 128, 0.25)",
    "num": "text-align:right;white-space:nowrap",
    "mono": f"font-family:{_html.MONO};font-size:12px",
    "status_match": "background-color:rgba(46, 160, 67, 0.16);white-space:nowrap",
    "status_differs": f"background-color:{_RED.format(0.26)};font-weight:600;white-space:nowrap",
    "status_only": "background-color:rgba(222, 150, 0, 0.22);white-space:nowrap",
    "status_not-comparable": "background-color:rgba(128, 128, 128, 0.18);white-space:nowrap",
    "box": f"margin:8px 0;padding:6px 10px;border-radius:4px;border:1px solid {_RED.format(0.55)};"
    f"border-left:4px solid {_RED.format(0.9)};background-color:{_RED.format(0.07)}",
    "excerpt": f"font-family:{_html.MONO};font-size:12px;margin:4px 0;padding:6px 8px;white-space:pre-wrap;"
    "overflow-wrap:anywhere;border:1px solid rgba(128, 128, 128, 0.35);border-radius:4px;"
    "background-color:rgba(128, 128, 128, 0.08);color:inherit;text-align:left",
    "list": "margin:4px 0;padding-left:20px",
    "timings": "margin:6px 0",
    "timing": "display:inline-block;margin-right:16px;white-space:nowrap",
    "divergence_line": f"background-color:{_RED.format(0.22)};box-shadow:inset 3px 0 0 {_RED.format(0.95)}",
    "error_line": f"box-shadow:inset 3px 0 0 {_RED.format(0.95)};outline:1px dashed {_RED.format(0.8)}",
}
S = _html.S


def _html_table(report) -> str:
    rows = report.compared_rows
    has_notes = any(r.note for r in rows)
    th, num = P["th"], P["th"] + ";" + P["num"]
    head = (
        f'<thead><tr><th style="{th}">Name</th><th style="{th}">Line</th><th style="{th}">PyTorch</th>'
        f'<th style="{th}">MindSpore</th><th class="msm-num" style="{num}">max |Δ|</th>'
        f'<th class="msm-num" style="{num}">max rel Δ</th><th style="{th}">Status</th>'
        + (f'<th style="{th}">Note</th>' if has_notes else "") + "</tr></thead>"
    )
    td, mono = P["td"], P["td"] + ";" + P["mono"]
    tdnum = mono + ";" + P["num"]
    body = []
    for r in rows:
        cls = status_class(r.status)
        where = _statement_lines(report, r.statement)
        exact = "" if r.max_abs is None else f' title="{_e(repr(r.max_abs))}"'
        exact_rel = "" if r.max_rel is None else f' title="{_e(repr(r.max_rel))}"'
        body.append(
            f'<tr class="msm-status-{cls}" data-name="{_e(r.name)}" data-status="{_e(r.status)}">'
            f'<td class="msm-name" style="{td}"><code>{_e(r.name)}</code></td>'
            f'<td class="msm-line" style="{td}">{_e(_range(where)) if where else ""}</td>'
            f'<td class="msm-mono" style="{mono}">{_e(_side(r.torch_shape, r.torch_dtype))}</td>'
            f'<td class="msm-mono" style="{mono}">{_e(_side(r.ms_shape, r.ms_dtype))}</td>'
            f'<td class="msm-num msm-mono" style="{tdnum}"{exact}>{_e(format_number(r.max_abs))}</td>'
            f'<td class="msm-num msm-mono" style="{tdnum}"{exact_rel}>{_e(format_number(r.max_rel))}</td>'
            f'<td class="msm-status" style="{td};{P["status_" + cls]}">{_e(r.status)}</td>'
            + (f'<td class="msm-note" style="{td}">{_e(r.note)}</td>' if has_notes else "")
            + "</tr>"
        )
    return (f'<div style="{S["pane"]}"><table class="msm-parity-table" style="{P["table"]}">'
            f'{head}<tbody>{"".join(body)}</tbody></table></div>')


def _excerpt_pre(text: str, r, label: str) -> str:
    lines = _excerpt(text, r)
    if not lines:
        return ""
    first = r[0]
    width = len(str(first + len(lines)))
    body = "\n".join(
        f'<span class="msm-side-label" style="opacity:0.65">{_e(str(first + k).rjust(width))} </span>{_e(t)}'
        for k, t in enumerate(lines)
    )
    return (
        f'<div class="msm-meta" style="{S["meta"]}">{_e(label)}, {_e(_lines_label(r))}</div>'
        f'<pre class="msm-excerpt" style="{P["excerpt"]}">{body}</pre>'
    )


def _divergence_html(report) -> str:
    div = report.first_divergence
    if div is None:
        return ""
    names = ", ".join(f"<code>{_e(n)}</code>" for n in div.names) or "?"
    extra = (
        f' <span class="msm-meta">(max |\u0394| {_e(format_number(div.max_abs))})</span>'
        if div.max_abs is not None
        else ""
    )
    parts = [
        f'<div class="msm-first-divergence" style="{P["box"]}" data-statement="{div.statement}" '
        f'data-old="{_e(_plain_range(div.before))}" data-new="{_e(_plain_range(div.after))}">',
        f'<div class="msm-section" style="font-weight:600">First divergence: statement {div.statement + 1}, '
        f"PyTorch {_e(_lines_label(div.before))}"
        + (f" \u2192 MindSpore {_e(_lines_label(div.after))}" if div.after else "")
        + "</div>",
        f"<div>After this statement {names} differ{'s' if len(div.names) == 1 else ''}.{extra}</div>",
        _excerpt_pre(report.port.source if report.port else "", div.before, "PyTorch"),
        _excerpt_pre(ms_code(report), div.after, "MindSpore") if div.after else "",
    ]
    edits = _divergence_edits(report, div)
    if div.rule_ids:
        badges = "".join(
            _html._badge(rid, [e for e in edits if e.rule_id == rid], []) for rid in div.rule_ids
        )
        parts.append(
            f'<div class="msm-meta">{plural(len(div.rule_ids), "rule")} changed this statement '
            "(click for the explanation):</div>"
            f'<div class="msm-badges msm-divergence-rules">{badges}</div>'
        )
    elif report.against:
        parts.append(
            '<div class="msm-meta">Explicit MindSpore code (--against): no port rule '
            "wrote this statement.</div>"
        )
    else:
        parts.append(
            '<div class="msm-meta">No rule changed this statement: the same code behaves '
            "differently in the two frameworks, or it uses a value that already differed.</div>"
        )
    parts.append("</div>")
    return "".join(parts)


def _error_html(report, err) -> str:
    side_key = "pytorch" if err.side == "PyTorch" else "mindspore"
    code = report.port.source if err.side == "PyTorch" and report.port else ms_code(report)
    tb = _strip_ansi(err.traceback).rstrip()
    return (
        f'<div class="msm-error msm-error-{side_key}" style="{P["box"]}" data-side="{_e(err.side)}" '
        f'data-statement="{err.statement}" data-lines="{_e(_plain_range(err.lines))}">'
        f'<div class="msm-section" style="font-weight:600">{_e(err.side)} raised <code>{_e(err.type)}</code> at statement '
        f"{err.statement + 1} ({_e(_lines_label(err.lines))})</div>"
        f"{_excerpt_pre(code, err.lines, err.side)}"
        f'<div class="msm-error-message"><code>{_e(err.type)}</code>: {_e(err.message)}</div>'
        + (f'<div class="msm-error-cause" style="{P["box"]}"><b>Likely cause:</b> {_e(err.cause())}</div>'
           if getattr(err, "unported", None) else "")
        + (f'<pre class="msm-traceback" style="{P["excerpt"]}">{_e(tb)}</pre>' if tb else "")
        + "</div>"
    )


def _synced_item(text: str) -> str:
    """``name: why`` (the runner's form) or a bare name."""
    name, sep, why = str(text).partition(": ")
    if sep and name and " " not in name:
        return f'<code>{_e(name)}</code> <span class="msm-meta">{_e(why)}</span>'
    return f"<code>{_e(text)}</code>"


def _timings_html(report) -> str:
    timings = _timings(report)
    if not timings:
        return ""
    items = "".join(
        f'<span class="msm-timing" data-side="{_e(label)}" style="{P["timing"]}">'
        f'<b>{_e(label)}</b> {_e(_seconds(v))}</span>'
        for label, v in timings
    )
    return f'<div class="msm-timings" style="{P["timings"]}">{items}</div>'


# ---- the embedded diff, with marked lines


class _LineMarks:
    def __init__(self) -> None:
        self.old: dict[int, set] = {}
        self.new: dict[int, set] = {}
        self.titles: dict[tuple[str, int], list[str]] = {}

    def add(self, side: str, r, cls: str, title: str) -> None:
        if not r:
            return
        table = self.old if side == "old" else self.new
        for line in range(r[0], r[1] + 1):
            table.setdefault(line, set()).add(cls)
            self.titles.setdefault((side, line), []).append(title)

    def __bool__(self) -> bool:
        return bool(self.old or self.new)


_CODE_TD = re.compile(r'<td class="(msm-code[^"]*)"((?: data-(?:old|new)="\d+")*)((?: style="[^"]*")?)>')
_DATA = re.compile(r'data-(old|new)="(\d+)"')


_MARK_STYLE = {"msm-divergence": "divergence_line", "msm-error-line": "error_line"}


def _apply_marks(table_html: str, marks: _LineMarks) -> str:
    if not marks:
        return table_html

    def sub(m: re.Match) -> str:
        classes, attrs = m.group(1), m.group(2)
        extra: set = set()
        titles: list[str] = []
        for side, num in _DATA.findall(attrs):
            line = int(num)
            extra |= (marks.old if side == "old" else marks.new).get(line, set())
            titles += marks.titles.get((side, line), [])
        if not extra:
            return m.group(0)
        cls = classes + "".join(f" {c}" for c in sorted(extra))
        title = "; ".join(dict.fromkeys(titles))
        mark = ";".join(P[_MARK_STYLE[c]] for c in sorted(extra) if c in _MARK_STYLE)
        style = m.group(3)
        if mark:  # after the line's own background, so the mark wins
            style = (style[:-1] + ";" + mark + '"') if style else f' style="{mark}"'
        return f'<td class="{cls}" title="{_e(title)}"{attrs}{style}>'

    return _CODE_TD.sub(sub, table_html)


def _context_hunks(result, hunks: list, marks: _LineMarks) -> list:
    """Hunks of unchanged lines holding marked lines that no diff hunk shows."""
    old, new = split_lines(result.source), split_lines(result.code)
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    old_to_new: dict[int, int] = {}
    new_to_old: dict[int, int] = {}
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            for k in range(i2 - i1):
                old_to_new[i1 + k + 1] = j1 + k + 1
                new_to_old[j1 + k + 1] = i1 + k + 1
    shown_old: set = set()
    shown_new: set = set()
    for h in hunks:
        for _, i1, i2, j1, j2 in h.opcodes:
            shown_old.update(range(i1 + 1, i2 + 1))
            shown_new.update(range(j1 + 1, j2 + 1))
    pairs: set = set()
    for line in marks.old:
        if line not in shown_old and line in old_to_new:
            pairs.add((line, old_to_new[line]))
    for line in marks.new:
        if line not in shown_new and line in new_to_old:
            pairs.add((new_to_old[line], line))
    runs: list[list[tuple[int, int]]] = []
    for o, n in sorted(pairs):
        if runs and runs[-1][-1] == (o - 1, n - 1):
            runs[-1].append((o, n))
        else:
            runs.append([(o, n)])
    return [
        Hunk(-1, [("equal", run[0][0] - 1, run[-1][0], run[0][1] - 1, run[-1][1])]) for run in runs
    ]


def _diff_html(report, view: str) -> str:
    result = _diff_source(report)
    if result is None:
        return ""
    old, new = split_lines(result.source), split_lines(result.code)
    hunks, unplaced = compute_hunks(result, autojunk=False)
    marks = _LineMarks()
    div = report.first_divergence
    if div is not None:
        title = "first divergence: " + ", ".join(div.names) + (" differs" if len(div.names) == 1 else " differ")
        marks.add("old", div.before, "msm-divergence", title)
        marks.add("new", div.after, "msm-divergence", title)
    for err in _errors(report):
        marks.add(
            "old" if err.side == "PyTorch" else "new",
            err.lines,
            "msm-error-line",
            f"{err.side} raised {err.type}: {err.message}",
        )
    findings = _html._Marks(result.unsupported)
    table = _html._split_table if view == "split" else _html._unified_table
    blocks = [(h.old_range[0], False, h) for h in hunks]
    blocks += [(h.old_range[0], True, h) for h in _context_hunks(result, hunks, marks)]
    blocks.sort(key=lambda b: (b[0], b[1]))

    against = bool(getattr(report, "against", False))
    right = "explicit MindSpore code (--against)" if against else "MindSpore port"
    parts = [
        f'<div class="msm-section msm-parity-diff-title">PyTorch \u2192 {right} '
        f'<span class="msm-meta">({view} view)</span></div>'
    ]
    if old == new:
        parts.append('<div class="msm-nochange">No changes: both sides ran the same code.</div>')
    for _, is_context, h in blocks:
        (a1, a2), (b1, b2) = h.old_range, h.new_range
        body = _apply_marks(table(old, new, h.opcodes, findings), marks)
        flags = []
        if "msm-divergence" in body:
            flags.append("msm-has-divergence")
        if "msm-error-line" in body:
            flags.append("msm-has-error")
        if is_context:
            parts.append(
                f'<div class="msm-hunk msm-context{"".join(" " + f for f in flags)}" '
                f'data-old="{a1 + 1}-{a2}" data-new="{b1 + 1}-{b2}">'
                '<div class="msm-hunk-head"><span class="msm-hunk-range msm-mono">'
                f"{_e(h.header)}</span><span class=\"msm-meta\">unchanged by the port</span></div>"
                f"{body}</div>"
            )
            continue
        badges = _html.hunk_badges(result, h)
        parts.append(
            f'<div class="msm-hunk{"".join(" " + f for f in flags)}" data-hunk="{h.index}" '
            f'data-old="{a1 + 1}-{a2}" data-new="{b1 + 1}-{b2}" data-rules="{_e(" ".join(h.rule_ids))}">'
            f'<div class="msm-hunk-head"><span class="msm-hunk-range msm-mono">{_e(h.header)}</span>'
            f'<div class="msm-badges">{"".join(badges)}</div></div>{body}</div>'
        )
    if unplaced:
        ids = list(dict.fromkeys(e.rule_id for e in unplaced))
        badges = "".join(_html._badge(rid, [e for e in unplaced if e.rule_id == rid], []) for rid in ids)
        parts.append(
            '<div class="msm-section">Mapped without a visible change '
            '(same spelling, now MindSpore)</div>'
            f'<div class="msm-badges msm-unplaced">{badges}</div>'
        )
    if result.unsupported:
        parts.append(_html._findings_table(result))
    parts.append(
        '<details class="msm-code-block"><summary>MindSpore code that ran '
        f'({plural(len(new), "line")})</summary>{_html.code_only_html(result.code)}</details>'
    )
    return f'<div class="msm-parity-diff">{"".join(parts)}</div>'


def render_parity_html(report, view: Optional[str] = None) -> str:
    """The text/html view; ``view`` ("split"/"unified", default: the report's ``view``
    option, else the port's, else split) is the layout of the embedded diff."""
    if view is None and not (report.options or {}).get("view") and report.port is not None:
        view = resolve_view(report.port, None)
    view = resolve_view(report, view)
    kind, label = _pill(report)
    what = "explicit MindSpore code (--against)" if report.against else "the MindSpore port"
    section = S["section"]
    parts = [
        STYLE,
        f'<div class="msm-root msm-parity msm-view-{view}" style="{S["root"]}" data-view="{view}" '
        f'data-status="{kind}">',
        f'<div class="msm-title msm-parity-title" style="{S["title"]}">'
        f'<span class="msm-pill msm-pill-{kind}" style="{P["pill"]};{P["pill_" + kind]}">{_e(label)}</span>'
        f'<span class="msm-title-main" style="{S["title_main"]}">msmagic parity: {_e(report.summary())}</span>'
        f'<span class="msm-title-sub" style="{S["title_sub"]}">PyTorch vs {what} \u00b7 '
        f"{_e(_settings(report))}</span></div>",
    ]
    for b in _banners(report):
        parts.append(f'<div class="msm-banner" style="{P["banner"]}">{_e(b)}</div>')
    compared = report.compared_rows
    if compared:
        counts = report.counts()
        summary = ", ".join(f"{n} {_e(status)}" for status, n in counts.items())
        parts.append(
            f'<div class="msm-section" style="{section}">Compared values ({len(compared)}: {summary})</div>'
            + _html_table(report)
        )
        parts.extend(_chart_html(r) for r in _charted(report))
    elif not _errors(report):
        parts.append(
            f'<div class="msm-nochange" style="{S["nochange"]}">Nothing compared: the cell bound no '
            "tensors, numbers or modules that both sides have.</div>"
        )
    if report.ms_only:
        names = ", ".join(f"<code>{_e(n)}</code>" for n in report.ms_only)
        parts.append(f'<div class="msm-ms-only" style="{S["meta"]}">Only in the MindSpore code, '
                     f"not compared (names the port introduced): {names}</div>")
    parts.append(_divergence_html(report))
    parts.append(_layers_html(report))
    errors = _errors(report)
    if errors:
        parts.append("".join(_error_html(report, err) for err in errors))
    if report.synchronised:
        items = "".join(f"<li>{_synced_item(s)}</li>" for s in report.synchronised)
        parts.append(
            f'<div class="msm-section" style="{section}">Synchronised: copied, not compared</div>'
            f'<div class="msm-meta" style="{S["meta"]}">Copied from PyTorch to MindSpore: random '
            "draws, freshly initialised parameters and gradients, which the two frameworks never "
            "produce identically. A module trained later in the cell is compared after that.</div>"
            f'<ul class="msm-synced" style="{P["list"]}">{items}</ul>'
        )
    if report.bridged:
        items = "".join(f"<li><code>{_e(s)}</code></li>" for s in report.bridged)
        parts.append(
            f'<div class="msm-section" style="{section}">Bridged from your namespace</div>'
            f'<ul class="msm-bridged" style="{P["list"]}">{items}</ul>'
        )
    timings = _timings_html(report)
    if timings:
        parts.append(f'<div class="msm-section" style="{section}">Run time</div>{timings}')
    if report.notes:
        items = "".join(f"<li>{_html._prose(n)}</li>" for n in report.notes)
        parts.append(f'<div class="msm-section" style="{section}">Notes</div>'
                     f'<ul class="msm-parity-notes" style="{P["list"]}">{items}</ul>')
    parts.append(_diff_html(report, view))
    parts.append("</div>")
    return "".join(parts)


# --------------------------------------------------------------------------- widget


def make_parity_widget(report, view: Optional[str] = None):
    """A VBox (classes ``msm-widget msm-parity-widget``): a Split/Unified toggle for the
    embedded diff above an HTML widget holding :func:`render_parity_html`."""
    from .widget import view_toggle_widget

    initial = view
    if initial is None:
        opt = (report.options or {}).get("view")
        if opt in VIEWS:
            initial = opt
        elif report.port is not None:
            initial = resolve_view(report.port, None)
        else:
            initial = "split"
    return view_toggle_widget(
        lambda v: render_parity_html(report, view=v), initial, classes=("msm-parity-widget",)
    )
