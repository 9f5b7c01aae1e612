"""Terminal and markdown output of ``diff-profiles`` and ``diff-versions`` (reads ``DiffReport.to_dict()``).

Both renderers say the same things in the same order: which configuration is A and which
is B, one decision row per pod, then for each pod that differs (or the only pod) the Filter
verdicts that change (each with its kind: the verdict flips, only the status code changes and
with it whether preemption tries the node, or only the words do) and the per-plugin scores on
the nodes each side selects, and last the summary line. A comparison of two versions adds, per
pod, every difference in words under its kind and, under each kind, the rule changes it is
attributed to (``whatif.versions``); one of the same version and gates on both sides is one line.

The terminal's default is the short answer, as ``explain pod``'s (``render.table``): the tables
become a line or two each (or, for versions, the words by kind alone), a pod alike on both sides
is its decision row, one pod's decisions are its first line, and with several pods each rule change
is said once after them; ``wide`` prints every table. Markdown is the whole report.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.text import Text
from tabulate import tabulate

from kschedctl.render.layout import Column, print_indented, print_table

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


#: The change column of a pod whose decision stays, by the most telling kind of difference.
SAME_DECISION_WORDS = {
    "outcome": "same decision, a Filter verdict flips",
    "code": "same decision, status codes change",
    "score": "same decision, scores change",
    "message": "same decision, messages only",
}
#: What a kind of difference is called where a pod's differences are listed.
KIND_HEADINGS = {
    "outcome": "Outcome changes",
    "code": "Status codes change",
    "score": "Scores change",
    "message": "Messages change (words only)",
}
#: The kinds of difference of a Filter verdict, in the "Filter verdicts that change" table.
_VERDICT_KIND_WORDS = {"outcome": "verdict", "code": "status code and words", "message": "words only"}
#: What a change of status code does to preemption (A's code, B's code).
_CODE_EFFECT = {
    ("Unschedulable", "UnschedulableAndUnresolvable"): "preemption no longer tries it",
    ("UnschedulableAndUnresolvable", "Unschedulable"): "preemption now tries it",
}


def change_words(p: dict[str, Any]) -> str:
    if p["change"] != "same":
        return CHANGE_WORDS.get(p["change"], p["change"])
    return SAME_DECISION_WORDS.get(p.get("kind") or "", "same")


def _home_kind(change: dict[str, Any], by_kind: dict[str, list[str]]) -> str:
    """The kind a cited change is listed under: the most telling one it explains that has words."""
    return next((k for k in change.get("explains", []) if k in by_kind), list(by_kind)[-1])


def attribution_lines(p: dict[str, Any], *, cite: bool = True) -> list[str]:
    """A version comparison's differences, one line per kind, each followed (with ``cite``) by the rule changes
    behind it (indented by two spaces); empty for other comparisons."""
    att, by_kind = p.get("attribution"), p.get("byKind")
    if not by_kind or att is None:
        return []
    cited: dict[str, list[str]] = {}
    for ch in att["changes"]:
        cited.setdefault(_home_kind(ch, by_kind), []).append(f"  because {ch['line']}")
    lines: list[str] = []
    for kind, words in by_kind.items():
        lines.append(f"{KIND_HEADINGS.get(kind, kind)}: " + "; ".join(words))
        lines += cited.get(kind, []) if cite else []
    if att["unexplained"]:
        lines.append("not attributed to a rule change kschedctl knows: " + ", ".join(att["unexplained"]))
    elif not att["changes"]:
        lines.append("no plugin result differs: the difference comes from the cycle itself")
    return lines


def summary_line(report: dict[str, Any]) -> str:
    s = report["summary"]
    if not s["pods"]:
        return "no pods compared"
    decisions = ("nodeChanged", "becomeUnschedulable", "becomeSchedulable", "preemptionChanged", "outcomeChanged")
    parts = [
        f"{s['nodeChanged']} change node",
        f"{s['becomeUnschedulable']} become unschedulable",
        f"{s['becomeSchedulable']} become schedulable",
    ]
    if s["preemptionChanged"]:
        parts.append(f"{s['preemptionChanged']} preempt differently")
    if s["outcomeChanged"]:
        parts.append(f"{s['outcomeChanged']} change outcome otherwise")
    kinds = s.get("byKind") or {}
    others = {
        "outcome": (kinds.get("outcome", 0) - sum(s[k] for k in decisions), "keep their decision but a Filter verdict flips"),
        "code": (kinds.get("code", 0), "keep their verdicts but status codes change"),
        "score": (kinds.get("score", 0), "keep their decision but scores change"),
        "message": (kinds.get("message", 0), "differ in messages only"),
    }
    parts += [f"{n} {words}" for n, words in others.values() if n]
    parts.append(f"{s['unchanged']} unchanged")
    pods = "1 pod" if s["pods"] == 1 else f"{s['pods']} pods"
    return f"{pods}: " + ", ".join(parts)


def _plugin(verdict: str) -> str:
    return verdict.split(":", 1)[0]


def verdict_rows(p: dict[str, Any]) -> list[list[str]]:
    """The Filter verdicts that change other than by their status code alone: node, A's and B's verdict,
    and the kind of difference (the verdict flips, or the words only)."""
    rows = []
    for f in p["feasibilityChanges"]:
        kind = f.get("kind") or "outcome"
        if kind == "code" and f["a"] == f["b"]:
            continue  # in code_rows
        rows.append([f["node"], f["a"], f["b"], _VERDICT_KIND_WORDS.get(kind, kind)])
    return rows


def code_rows(p: dict[str, Any]) -> list[list[str]]:
    """The status codes that change, one row per plugin and pair of codes: the nodes, the plugin, A's and
    B's code."""
    groups: dict[tuple[str, str, str], list[str]] = {}
    for f in p["feasibilityChanges"]:
        if f.get("kind") == "code":
            groups.setdefault((_plugin(f["b"]), f["codeA"], f["codeB"]), []).append(f["node"])
    return [[", ".join(sorted(nodes)), plugin, a, b] for (plugin, a, b), nodes in groups.items()]


def code_title(rows: list[list[str]]) -> str:
    """The title of the status codes table: what each change of code does to preemption."""
    effects = sorted({_CODE_EFFECT[(r[2], r[3])] for r in rows if (r[2], r[3]) in _CODE_EFFECT})
    return "Status codes that change" + (f" ({'; '.join(effects).replace(' it', ' these nodes')})" if effects else "")


def same_sides_line(report: dict[str, Any]) -> str | None:
    """The one line of a comparison whose sides are the same (``diff-versions`` of one version and gates)."""
    return str(report["notes"][0]) if report.get("sameSides") and report.get("notes") else None


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
#: The last line of the short answer: where the rest is.
DIFF_WIDE_HINT = "(every table, both FitErrors: -o wide; every field: -o json)"
#: Groups of changed Filter verdicts, and plugins whose scores moved, the short answer names before "N more".
MAX_SHORT_ITEMS = 3


def render_diff_table(
    report: dict[str, Any], console: Console, notes_console: Console | None = None, *, wide: bool = False
) -> None:
    """The comparison on ``console``; notes (per pod, prefixed with the pod, and the report's) on
    ``notes_console`` (stderr from the CLI). By default each pod that differs is a few lines (its decisions,
    what changes, why); ``wide`` adds the tables (Filter verdicts, status codes, per-plugin scores) and
    both FitErrors."""
    notes = notes_console or console
    same = same_sides_line(report)
    if same is not None:
        console.print(Text(same), overflow="fold")
        return
    for line in _side_lines(report):
        console.print(Text(line), overflow="fold")
    pods = report["pods"]
    if len(pods) > 1 or (pods and wide):  # one pod's short answer says its decisions in its own first line
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
    detailed = _detail_pods(report) if wide else [p for p in _detail_pods(report) if p["differs"] or (p["scores"] and _moved(p))]
    cite = wide or len(pods) == 1  # else each rule change once, after the pods
    for i, p in enumerate(detailed):
        if (cite or i == 0) and (len(pods) > 1 or wide):
            console.print()
        _render_pod(p, console, wide, cite, alone=len(pods) == 1 and not wide)
        for n in p["notes"]:
            notes.print(Text(f"note: {p['pod']}: {n}"))
    if len(pods) == 1 and not (wide or detailed):  # the same on both sides: one line
        p = pods[0]
        console.print(Text(f"{p['pod']}: {decision_words(p['a'])} → {decision_words(p['b'])} ({change_words(p)})"), overflow="fold")
    if not cite:
        _render_rule_changes(detailed, console)
    console.print()
    console.print(Text(summary_line(report), style="bold"))
    if detailed and not wide:
        console.print(Text(DIFF_WIDE_HINT, style="dim"), overflow="fold")
    for n in report["notes"]:
        notes.print(Text(f"note: {n}"))


def _render_pod(p: dict[str, Any], console: Console, wide: bool, cite: bool = True, alone: bool = False) -> None:
    """One pod's differences: its decisions, the Filter verdicts, the scores, and (versions) why. Without
    ``cite`` (the short answer for several pods) its lines are indented under its name, the rule changes
    are left for after the pods, and an unchanged Filter pass goes unsaid. ``alone``: no decisions table
    was printed, so the first line says what changes."""

    def say(line: str) -> None:
        if cite:
            console.print(Text(line), overflow="fold")
        else:
            print_indented(console, Text(line), indent=2)

    head = Text(f"{p['pod']}: {decision_words(p['a'])} → {decision_words(p['b'])}", style="bold")
    if alone:
        head.append(" (")
        head.append(change_words(p), style=_CHANGE_STYLE.get(p["change"], ""))
        head.append(")")
    console.print(head, overflow="fold")
    if p.get("workload"):
        say(f"representative pod of {p['workload']}")
    for side in ("a", "b"):
        for line in _side_detail(p, side, wide):
            say(line)
    if cite and not p["feasibilityChanges"] and _compared_filters(p):
        say("Filter verdicts: no change")
    attributed = bool(p.get("byKind")) and p.get("attribution") is not None
    if wide:
        _print_tables(p, console)
    elif not attributed:  # a version comparison says all of it by kind, below
        for line in [*_short_verdict_lines(p), *_short_score_lines(p)]:
            say(line)
    for line in attribution_lines(p, cite=cite):
        if line.startswith(" "):
            print_indented(console, Text(line.strip()), indent=2)
        else:
            say(line)


def _render_rule_changes(pods: list[dict[str, Any]], console: Console) -> None:
    """The rule changes behind the pods' differences, each once, with the number of pods it explains."""
    count: dict[str, int] = {}
    for p in pods:
        for line in dict.fromkeys(ch["line"] for ch in (p.get("attribution") or {}).get("changes", [])):
            count[line] = count.get(line, 0) + 1
    if not count:
        return
    console.print()
    console.print(Text("Because of these rule changes", style="bold"))
    for line, n in count.items():
        print_indented(console, Text(f"{line} ({n} pod{'s' if n != 1 else ''})"), indent=2)


def _side_detail(p: dict[str, Any], side: str, wide: bool) -> list[str]:
    """A side's FitError, error and note. The short answer keeps a FitError only where the outcomes differ
    (``explain pod`` gives it whole)."""
    d, other = p[side], p["b" if side == "a" else "a"]
    name = side.upper()
    out = []
    if d.get("fitError") and (wide or d["outcome"] != other["outcome"]):
        out.append(f"{name} FitError: {d['fitError']}")
    if d.get("error"):
        out.append(f"{name} error: {d['error']}")
    if d.get("note"):
        out.append(f"{name}: {d['note']}")
    return out


def _print_tables(p: dict[str, Any], console: Console) -> None:
    verdicts, codes = verdict_rows(p), code_rows(p)
    if verdicts:
        cols = [Column("node", keep=True), Column("A", min_width=16), Column("B", min_width=16),
                Column("difference", min_width=10)]
        print_table(console, "Filter verdicts that change", cols, [[Text(c) for c in r] for r in verdicts])
    if codes:
        cols = [Column("nodes", min_width=16), Column("plugin", keep=True), Column("A", keep=True), Column("B", keep=True)]
        print_table(console, code_title(codes), cols, [[Text(c) for c in r] for r in codes])
    if p["scores"]:
        headers, score_table = score_rows(p["scores"], node_header_sep="\n")
        cols = [Column(h, keep=True) for h in headers]
        print_table(console, "Scores on the chosen nodes (weighted, A → B)", cols, [[Text(c) for c in r] for r in score_table])


def _names(names: list[str]) -> str:
    shown = ", ".join(names[:MAX_SHORT_ITEMS])
    return shown + (f" and {len(names) - MAX_SHORT_ITEMS} more" if len(names) > MAX_SHORT_ITEMS else "")


def _short_verdict_lines(p: dict[str, Any]) -> list[str]:
    """The Filter verdicts that change, one line per pair of verdicts (the nodes named), and the status codes
    that change, one line per plugin and pair of codes."""
    groups: dict[tuple[str, str, str], list[str]] = {}
    for node, a, b, kind in verdict_rows(p):
        groups.setdefault((a, b, kind), []).append(node)
    out = [f"Filter verdict{'' if kind == 'verdict' else f' ({kind})'} changes on {_names(sorted(nodes))}: A {a} → B {b}"
           for (a, b, kind), nodes in list(groups.items())[:MAX_SHORT_ITEMS]]
    if len(groups) > MAX_SHORT_ITEMS:
        out.append(f"… {len(groups) - MAX_SHORT_ITEMS} more changes of Filter verdicts")
    codes = code_rows(p)
    effects = {(r[2], r[3]): _CODE_EFFECT.get((r[2], r[3])) for r in codes}
    for nodes, plugin, a, b in codes:
        effect = effects[(a, b)]
        n = len(nodes.split(", "))
        out.append(f"Status code of {plugin} changes on {n} node{'s' if n != 1 else ''} ({_names(nodes.split(', '))}): "
                   f"{a} → {b}" + (f" ({effect})" if effect else ""))
    return out


def _moved(p: dict[str, Any]) -> list[tuple[str, str, list[int]]]:
    """The plugins whose weighted score changes on a chosen node: (name, weights, delta per node), the largest first."""
    scores = p["scores"]
    found: dict[str, tuple[str, list[int]]] = {}
    for i, n in enumerate(scores):
        if n["totalA"] is None or n["totalB"] is None:
            continue  # scored on one side only: nothing moved
        for q in n["plugins"]:
            _weights_text, deltas = found.setdefault(q["plugin"], (_weights(q), [0] * len(scores)))
            deltas[i] = q["delta"]
    moved = [(name, w, d) for name, (w, d) in found.items() if any(d)]
    return sorted(moved, key=lambda m: -max(abs(x) for x in m[2]))


def _short_score_lines(p: dict[str, Any]) -> list[str]:
    """The totals on the chosen nodes and the plugins that moved them most (with their weights, where a
    configuration's change shows)."""
    scores = p["scores"]
    moved = _moved(p)
    if not scores or not (moved or p["change"] != "same"):
        return []
    totals = "; ".join(f"{n['node']} (chosen by {' and '.join(n['selectedBy'])}) {_total_cell(n)}" for n in scores)
    if not moved:
        return [f"Scores (weighted, A → B): {totals}"]
    parts = [f"{name} ({w}) " + ", ".join(f"{d:+d}" for d in deltas) for name, w, deltas in moved[:MAX_SHORT_ITEMS]]
    more = f"; {len(moved) - MAX_SHORT_ITEMS} more" if len(moved) > MAX_SHORT_ITEMS else ""
    return [f"Scores (weighted, A → B): {totals}", "moved most by: " + "; ".join(parts) + more]


# --------------------------------------------------------------------------- markdown


def render_diff_markdown(report: dict[str, Any]) -> str:
    out: list[str] = [f"### {report.get('title', 'kschedctl diff-profiles')}", ""]
    same = same_sides_line(report)
    if same is not None:
        return "\n".join([*out, same]) + "\n"
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
        verdicts, codes = verdict_rows(p), code_rows(p)
        if verdicts:
            out += ["Filter verdicts that change:", "",
                    tabulate(verdicts, headers=["node", "A", "B", "difference"], tablefmt="github"), ""]
        if codes:
            out += [f"{code_title(codes)}:", "", tabulate(codes, headers=["nodes", "plugin", "A", "B"], tablefmt="github"), ""]
        if not p["feasibilityChanges"] and _compared_filters(p):
            out += ["Filter verdicts: no change", ""]
        if p["scores"]:
            headers, rows = score_rows(p["scores"])
            out += ["Scores on the chosen nodes (weighted, A → B):", "", tabulate(rows, headers=headers, tablefmt="github"), ""]
        attributed = attribution_lines(p)
        out += [f"  - {line.strip()}" if line.startswith(" ") else f"- {line}" for line in attributed]
        out += [""] if attributed else []
        out += [f"_{n}_" for n in p["notes"]]
        if p["notes"]:
            out.append("")
    out += [f"**{summary_line(report)}**", ""]
    out += [f"_note: {n}_" for n in report["notes"]]
    return "\n".join(out).rstrip() + "\n"
