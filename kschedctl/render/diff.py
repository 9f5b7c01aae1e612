"""Terminal and markdown output of ``diff-profiles`` and ``diff-versions`` (reads ``DiffReport.to_dict()``).

Both renderers say the same things in the same order: which configuration is A and which
is B, one decision row per pod, then for each pod that differs (or the only pod) the Filter
verdicts that change and the per-plugin scores on the nodes each side selects, and last the
summary line. A comparison of two versions adds, per pod, every difference in words and the rule
changes it is attributed to (``whatif.versions``).
"""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.text import Text
from tabulate import tabulate

from kschedctl.render.layout import Column, print_table

CHANGE_WORDS = {
    "same": "same",
    "node-changed": "node changes",
    "becomes-unschedulable": "becomes unschedulable",
    "becomes-schedulable": "becomes schedulable",
    "preemption-changed": "preemption changes",
    "outcome-changed": "outcome changes",
}
_CHANGE_STYLE = {
    "same": "",
    "node-changed": "yellow",
    "becomes-unschedulable": "red",
    "becomes-schedulable": "green",
    "preemption-changed": "yellow",
    "outcome-changed": "yellow",
}
MAX_DECISION_ROWS = 200


def decision_words(d: dict[str, Any]) -> str:
    outcome = d["outcome"]
    if outcome == "scheduled":
        cands = d.get("candidates") or []
        tie = f" (tie of {len(cands)})" if len(cands) > 1 else ""
        return f"{d['node']}{tie}"
    if outcome == "unschedulable" and d.get("nominatedNode"):
        return f"unschedulable; preempts {len(d['victims'])} on {d['nominatedNode']}"
    return str(outcome)


def change_words(p: dict[str, Any]) -> str:
    words = CHANGE_WORDS.get(p["change"], p["change"])
    if p["change"] == "same" and p["feasibilityChanges"]:
        return "same node, Filter verdicts change"
    if p["change"] == "same" and p.get("differences"):
        return "same decision, scores or messages change"
    return words


def attribution_lines(p: dict[str, Any]) -> list[str]:
    """A version comparison's differences and the rule changes behind them (empty for other comparisons)."""
    att = p.get("attribution")
    if not p.get("differences") or att is None:
        return []
    lines = ["What changes: " + "; ".join(p["differences"])]
    lines += [f"because {c['line']}" for c in att["changes"]]
    if att["unexplained"]:
        lines.append("not attributed to a rule change kschedctl knows: " + ", ".join(att["unexplained"]))
    elif not att["changes"]:
        lines.append("no plugin result differs: the difference comes from the cycle itself")
    return lines


def summary_line(report: dict[str, Any]) -> str:
    s = report["summary"]
    if not s["pods"]:
        return "no pods compared"
    parts = [
        f"{s['nodeChanged']} change node",
        f"{s['becomeUnschedulable']} become unschedulable",
        f"{s['becomeSchedulable']} become schedulable",
    ]
    if s["preemptionChanged"]:
        parts.append(f"{s['preemptionChanged']} preempt differently")
    if s["outcomeChanged"]:
        parts.append(f"{s['outcomeChanged']} change outcome otherwise")
    if s["feasibilityOnly"]:
        parts.append(f"{s['feasibilityOnly']} keep their decision but Filter verdicts change")
    if s.get("otherOnly"):
        parts.append(f"{s['otherOnly']} keep their decision but scores or messages change")
    parts.append(f"{s['unchanged']} unchanged")
    pods = "1 pod" if s["pods"] == 1 else f"{s['pods']} pods"
    return f"{pods}: " + ", ".join(parts)


def _weights(p: dict[str, Any]) -> str:
    wa = p["a"]["weight"] if p["a"] else None
    wb = p["b"]["weight"] if p["b"] else None
    if wa == wb:
        return f"w{wa}"
    return f"w{'–' if wa is None else wa}→{'–' if wb is None else wb}"


def score_cell(p: dict[str, Any] | None) -> str:
    """``weightedA → weightedB (±delta)`` of one plugin on one node; – where a side did not score."""
    if p is None:
        return ""
    a = p["a"]["weighted"] if p["a"] else "–"
    b = p["b"]["weighted"] if p["b"] else "–"
    d = p["delta"]
    return f"{a} → {b} ({d:+d})"


def _total_cell(n: dict[str, Any]) -> str:
    a = "–" if n["totalA"] is None else n["totalA"]
    b = "–" if n["totalB"] is None else n["totalB"]
    d = n["delta"]
    return f"{a} → {b}" + ("" if d is None else f" ({d:+d})")


def score_rows(scores: list[dict[str, Any]], node_header_sep: str = " ") -> tuple[list[str], list[list[str]]]:
    """Header and rows of the score comparison: one row per plugin, one column per node that matters."""
    headers = ["plugin (weight A→B)"] + [
        f"{n['node']}{node_header_sep}(chosen by {' and '.join(n['selectedBy'])})" for n in scores
    ]
    plugins: list[str] = []
    weights: dict[str, str] = {}
    for n in scores:
        for p in n["plugins"]:
            if p["plugin"] not in plugins:
                plugins.append(p["plugin"])
                weights[p["plugin"]] = _weights(p)
    rows: list[list[str]] = []
    for name in plugins:
        row = [f"{name} ({weights[name]})"]
        for n in scores:
            row.append(score_cell(next((p for p in n["plugins"] if p["plugin"] == name), None)))
        rows.append(row)
    rows.append(["total", *[_total_cell(n) for n in scores]])
    return headers, rows


def _detail_pods(report: dict[str, Any]) -> list[dict[str, Any]]:
    pods = report["pods"]
    if len(pods) == 1:
        return pods
    return [p for p in pods if p["differs"]]


def _compared_filters(p: dict[str, Any]) -> bool:
    """Whether both sides ran Filter (a gated or ignored pod has no verdicts to compare)."""
    return all(p[side]["outcome"] not in ("gated", "ignored", "error") for side in ("a", "b"))


def _side_lines(report: dict[str, Any]) -> list[str]:
    return [f"A: {report['a']['label']}", f"B: {report['b']['label']}"]


# --------------------------------------------------------------------------- terminal


DECISION_COLUMNS = (Column("pod", keep=True), Column("A", min_width=12), Column("B", min_width=12), Column("change", min_width=12))


def render_diff_table(report: dict[str, Any], console: Console, notes_console: Console | None = None) -> None:
    """The comparison on ``console``; notes (per pod, prefixed with the pod, and the report's) on
    ``notes_console`` (stderr from the CLI)."""
    notes = notes_console or console
    for line in _side_lines(report):
        console.print(Text(line), overflow="fold")
    pods = report["pods"]
    if pods:
        rows = [
            [
                Text(p["pod"]),
                Text(decision_words(p["a"])),
                Text(decision_words(p["b"])),
                Text(change_words(p), style=_CHANGE_STYLE.get(p["change"], "")),
            ]
            for p in pods[:MAX_DECISION_ROWS]
        ]
        print_table(console, "Decisions", DECISION_COLUMNS, rows)
        if len(pods) > MAX_DECISION_ROWS:
            console.print(f"… {len(pods) - MAX_DECISION_ROWS} more pods (use -o json to see all)")
    for p in _detail_pods(report):
        console.print()
        console.print(Text(f"{p['pod']}: {decision_words(p['a'])} → {decision_words(p['b'])}", style="bold"))
        if p.get("workload"):
            console.print(Text(f"representative pod of {p['workload']}"), overflow="fold")
        for side in ("a", "b"):
            d = p[side]
            if d.get("fitError"):
                console.print(Text(f"{side.upper()} FitError: {d['fitError']}"), overflow="fold")
            if d.get("error"):
                console.print(Text(f"{side.upper()} error: {d['error']}"), overflow="fold")
            if d.get("note"):
                console.print(Text(f"{side.upper()}: {d['note']}"), overflow="fold")
        if p["feasibilityChanges"]:
            cols = [Column("node", keep=True), Column("A", min_width=16), Column("B", min_width=16)]
            changes = [[Text(f["node"]), Text(f["a"]), Text(f["b"])] for f in p["feasibilityChanges"]]
            print_table(console, "Filter verdicts that change", cols, changes)
        elif _compared_filters(p):
            console.print("Filter verdicts: no change")
        if p["scores"]:
            headers, score_table = score_rows(p["scores"], node_header_sep="\n")
            cols = [Column(h, keep=True) for h in headers]
            print_table(console, "Scores on the chosen nodes (weighted, A → B)", cols, [[Text(c) for c in r] for r in score_table])
        for line in attribution_lines(p):
            console.print(Text(line), overflow="fold")
        for n in p["notes"]:
            notes.print(Text(f"note: {p['pod']}: {n}"))
    console.print()
    console.print(Text(summary_line(report), style="bold"))
    for n in report["notes"]:
        notes.print(Text(f"note: {n}"))


# --------------------------------------------------------------------------- markdown


def render_diff_markdown(report: dict[str, Any]) -> str:
    out: list[str] = [f"### {report.get('title', 'kschedctl diff-profiles')}", ""]
    out += [f"- **{line[0]}**{line[1:]}" for line in _side_lines(report)]
    out.append("")
    pods = report["pods"]
    if pods:
        rows = [[f"`{p['pod']}`", decision_words(p["a"]), decision_words(p["b"]), change_words(p)] for p in pods]
        out += [tabulate(rows, headers=["pod", "A", "B", "change"], tablefmt="github"), ""]
    for p in _detail_pods(report):
        out += [f"#### `{p['pod']}`: {decision_words(p['a'])} → {decision_words(p['b'])}", ""]
        if p.get("workload"):
            out += [f"Representative pod of {p['workload']}.", ""]
        for side in ("a", "b"):
            d = p[side]
            if d.get("fitError"):
                out += [f"{side.upper()} FitError:", "", "```", d["fitError"], "```", ""]
            if d.get("error"):
                out += [f"{side.upper()} error: {d['error']}", ""]
            if d.get("note"):
                out += [f"{side.upper()}: {d['note']}", ""]
        if p["feasibilityChanges"]:
            rows = [[f["node"], f["a"], f["b"]] for f in p["feasibilityChanges"]]
            out += ["Filter verdicts that change:", "", tabulate(rows, headers=["node", "A", "B"], tablefmt="github"), ""]
        elif _compared_filters(p):
            out += ["Filter verdicts: no change", ""]
        if p["scores"]:
            headers, rows = score_rows(p["scores"])
            out += ["Scores on the chosen nodes (weighted, A → B):", "", tabulate(rows, headers=headers, tablefmt="github"), ""]
        attributed = attribution_lines(p)
        out += [f"- {line}" for line in attributed] + ([""] if attributed else [])
        out += [f"_{n}_" for n in p["notes"]]
        if p["notes"]:
            out.append("")
    out += [f"**{summary_line(report)}**", ""]
    out += [f"_note: {n}_" for n in report["notes"]]
    return "\n".join(out).rstrip() + "\n"
