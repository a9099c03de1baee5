"""text/plain rendering of a PortResult: header, unified diff, rules per hunk,
findings, notes. Plain text unless ``color=True`` (terminal IPython)."""

from __future__ import annotations

from . import (
    MAX_DIFF_ROWS,
    compute_hunks,
    counts,
    plural,
    rule_title,
    shown_hunks,
    split_lines,
    unified_diff_lines,
)

_RESET = "\x1b[0m"
_STYLES = {
    "header": "\x1b[1m",
    "file": "\x1b[1m",
    "hunk": "\x1b[36m",
    "del": "\x1b[31m",
    "add": "\x1b[32m",
    "rule": "\x1b[35m",
    "finding": "\x1b[33m",
}


def _paint(text: str, style: str, color: bool) -> str:
    return f"{_STYLES[style]}{text}{_RESET}" if color and text else text


def header(result) -> str:
    n_edits, n_rules, n_findings = counts(result)
    return (
        f"msmagic port: {plural(n_edits, 'edit')} by {plural(n_rules, 'rule')}, "
        f"{plural(n_findings, 'finding')}"
    )


def _diff_lines(diff: str, color: bool) -> list[str]:
    out = []
    for line in diff.splitlines():
        if not color:
            out.append(line)
        elif line.startswith(("---", "+++")):
            out.append(_paint(line, "file", color))
        elif line.startswith("@@"):
            out.append(_paint(line, "hunk", color))
        elif line.startswith("-"):
            out.append(_paint(line, "del", color))
        elif line.startswith("+"):
            out.append(_paint(line, "add", color))
        else:
            out.append(line)
    return out


def _rules_line(rule_ids, edits) -> str:
    return "; ".join(
        f"{rid} {rule_title(rid, edits)}".rstrip() for rid in rule_ids
    )


def render_text(result, color: bool = False) -> str:
    """The text/plain view. With ``options["quiet"]`` only the MindSpore code."""
    if result.options.get("quiet"):
        return result.code
    lines = [_paint(header(result), "header", color)]

    hunks, unplaced = compute_hunks(result)
    shown, more_hunks, more_rows = shown_hunks(hunks)
    diff = unified_diff_lines(split_lines(result.source), split_lines(result.code), shown)
    if diff:
        lines.append("")
        lines.extend(_diff_lines("\n".join(diff), color))
        if more_rows:
            lines.append(
                f"... {plural(more_rows, 'more diff line')} in {plural(more_hunks, 'hunk')} not shown "
                f"(the diff is cut at {MAX_DIFF_ROWS} lines); the whole MindSpore code is the "
                "result's .code (%%ms_port -o NAME keeps the result, --insert puts the code in a new cell)"
            )
    else:
        lines.append("(no changes)")

    if any(h.rule_ids for h in shown) or unplaced:
        lines.append("")
        for h in shown:
            if h.rule_ids:
                lines.append(
                    f"{_paint(h.header, 'hunk', color)} rules: "
                    f"{_paint(_rules_line(h.rule_ids, h.edits), 'rule', color)}"
                )
        if unplaced:
            ids = list(dict.fromkeys(e.rule_id for e in unplaced))
            lines.append(
                f"mapped without a visible change, rules: {_paint(_rules_line(ids, unplaced), 'rule', color)}"
            )

    if result.unsupported:
        lines.append("")
        lines.append(_paint("findings:", "finding", color))
        for f in sorted(result.unsupported, key=lambda f: (f.line, f.column)):
            lines.append(f"  {f.line}:{f.column} {f.rule_id} {f.api} \u2014 {f.reason}")

    if result.notes:
        lines.append("")
        lines.append("notes:")
        for note in result.notes:
            lines.append(f"  - {note}")
    for rev in getattr(result, "revised", ()):
        lines.append("")
        lines.append(_paint(f"{rev.name}() ported again:", "header", color))
        lines.extend(f"    {line}" for line in rev.result.code.rstrip("\n").splitlines())
    return "\n".join(lines)
