"""text/plain rendering of a PortResult: header, unified diff, rules per hunk,
findings, notes. Plain text unless ``color=True`` (terminal IPython)."""

from __future__ import annotations

from . import compute_hunks, counts, plural, rule_title

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

    diff = result.diff()
    if diff:
        lines.append("")
        lines.extend(_diff_lines(diff, color))
    else:
        lines.append("(no changes)")

    hunks, unplaced = compute_hunks(result)
    if any(h.rule_ids for h in hunks) or unplaced:
        lines.append("")
        for h in hunks:
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
