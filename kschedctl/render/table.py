"""Rich terminal output of a trace: one section per extension point.

Colour is used only when stdout is a terminal and NO_COLOR is unset (rich's own rule).
"""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from kschedctl.render.common import (
    compact,
    extender_rows,
    extender_score_columns,
    filter_cells,
    filter_columns,
    headline,
    post_bind_line,
    ranked_nodes,
    score_cell,
    skipped_filter_line,
    status_line,
)

MAX_ROWS = 30

_CODE_STYLE = {
    "Success": "green",
    "Skip": "dim",
    "Unschedulable": "yellow",
    "UnschedulableAndUnresolvable": "red",
    "Error": "bold red",
    "Wait": "cyan",
    "Pending": "cyan",
}


def _status_table(title: str, records: list[dict[str, Any]]) -> Table:
    tbl = Table(title=title, title_justify="left", show_lines=False)
    tbl.add_column("plugin")
    tbl.add_column("code")
    tbl.add_column("reasons")
    for r in records:
        tbl.add_row(r["plugin"], Text(r["code"], style=_CODE_STYLE.get(r["code"], "")), "; ".join(r.get("reasons", [])))
    return tbl


def render_trace(t: dict[str, Any], console: Console, *, wide: bool = False) -> None:
    d = t["details"]
    outcome = t.get("outcome")
    style = {"scheduled": "bold green", "unschedulable": "bold red", "gated": "bold yellow"}.get(str(outcome), "bold")
    console.print(Text(headline(t), style=style))
    console.print(f"profile: {t['profile']}   nodes: {d['numAllNodes']}   kube-scheduler {t['k8sVersion']}")

    console.print(_status_table("PreEnqueue", t["preEnqueue"]))
    if outcome == "gated":
        _notes(t, console)
        return
    if t["preFilter"]:
        console.print(_status_table("PreFilter", t["preFilter"]))
    if t["preFilterNodeNames"] is not None:
        console.print(f"PreFilter narrowed the nodes to: {', '.join(t['preFilterNodeNames']) or '(none)'}")

    if t["filter"]:
        plugins = filter_columns(t)
        tbl = Table(title="Filter (node × plugin, first rejection wins)", title_justify="left")
        tbl.add_column("node")
        for p in plugins:
            tbl.add_column(p, overflow="fold")
        nodes = list(t["filter"])
        shown = nodes if wide else nodes[:MAX_ROWS]
        for n in shown:
            verdict = t["filter"][n]
            name_style = "green" if verdict["code"] == "Success" else "red"
            tbl.add_row(Text(n, style=name_style), *filter_cells(t, n))
        console.print(tbl)
        if skipped_filter_line(t):
            console.print(skipped_filter_line(t))
        if len(shown) < len(nodes):
            console.print(f"… {len(nodes) - len(shown)} more nodes evaluated (use -o wide or -o json to see all)")
        if d.get("numNodesToFind") and d["numNodesToFind"] < d["numAllNodes"]:
            console.print(
                f"Filtering stopped after {d['numNodesToFind']} feasible nodes (percentageOfNodesToScore); "
                f"{len(nodes)} of {d['numAllNodes']} nodes were evaluated."
            )
    if t.get("extenders"):
        et = Table(title="Extenders (HTTP calls, in order)", title_justify="left")
        for col in ("extender", "verb", "outcome", "answer"):
            et.add_column(col, overflow="fold")
        for row in extender_rows(t):
            et.add_row(*row)
        console.print(et)
    if t["postFilter"]:
        pf = t["postFilter"]
        console.print(_status_table("PostFilter", d["postFilter"]["perPlugin"] if d.get("postFilter") else []))
        if pf["nominatedNodeName"]:
            prios = (d.get("postFilter") or {}).get("victimPriorities", {})
            console.print(
                Text(f"Preemption dry run: would nominate {pf['nominatedNodeName']} and evict {len(pf['victims'])} pod(s)", style="bold")
            )
            vt = Table(title="Victims (most important first; nothing is evicted)", title_justify="left")
            vt.add_column("pod")
            vt.add_column("priority", justify="right")
            for v in pf["victims"]:
                vt.add_row(v, str(prios.get(v, "")))
            console.print(vt)

    if t["preScore"]:
        console.print(_status_table("PreScore", t["preScore"]))
    if t["score"] or extender_score_columns(t):
        tbl = Table(title="Score (raw→normalized×weight=weighted)", title_justify="left")
        tbl.add_column("node")
        for p in t["score"]:
            tbl.add_column(f"{p}\n(weight {t['score'][p]['weight']})", justify="right")
        ext_cols = extender_score_columns(t)
        for title, _cells in ext_cols:
            tbl.add_column(title, justify="right", overflow="fold")
        tbl.add_column("total", justify="right")
        ranked = ranked_nodes(t)
        shown = ranked if wide else ranked[:MAX_ROWS]
        cands = set((t.get("selected") or {}).get("candidates", []))
        for n in shown:
            tbl.add_row(
                Text(n, style="bold green" if n in cands else ""),
                *[score_cell(t["score"][p], n) for p in t["score"]],
                *[cells.get(n, "") for _title, cells in ext_cols],
                Text(str(t["totals"].get(n, "")), style="bold" if n in cands else ""),
            )
        console.print(tbl)
        if len(shown) < len(ranked):
            console.print(f"… {len(ranked) - len(shown)} more scored nodes")
    sel = t.get("selected")
    if sel:
        console.print(Text(f"Selected: {t['details'].get('selectedNode')}  (max score {sel['maxScore']}; candidates: {', '.join(sel['candidates'])})", style="bold green"))
        if d.get("tieBreak"):
            console.print(d["tieBreak"])
        for title, key in (("Reserve", "reserve"), ("Permit", "permit"), ("PreBind", "preBind"), ("Bind", "bind")):
            if t[key]:
                console.print(f"{title}: {status_line(t[key])}")
        if d.get("binding"):
            b = d["binding"]
            console.print(f"Would create Binding {b['metadata']['namespace']}/{b['metadata']['name']} → node {b['target']['name']} (not sent: kschedctl never writes)")
        if post_bind_line(t):
            console.print(post_bind_line(t), markup=False, highlight=False)
    if t["fitError"]:
        console.print(Text("FitError (PodScheduled condition message):", style="bold red"))
        console.print(t["fitError"], markup=False, highlight=False)
    if t.get("error"):
        console.print(Text(f"error: {t['error']}", style="bold red"))
    if wide:
        _wide_details(t, console)
    _notes(t, console)


def _wide_details(t: dict[str, Any], console: Console) -> None:
    nodes = t["details"].get("nodes") or {}
    if nodes:
        tbl = Table(title="Nodes (allocatable / requested)", title_justify="left")
        for c in ("node", "cpu (m)", "memory", "pods", "taints"):
            tbl.add_column(c)
        for n, info in nodes.items():
            a, r = info["allocatable"], info["requested"]
            tbl.add_row(
                n,
                f"{r.get('cpu', 0)}/{a.get('cpu', 0)}",
                f"{_gib(r.get('memory', 0))}/{_gib(a.get('memory', 0))}",
                f"{info['pods']}/{a.get('pods', 0)}",
                ", ".join(info["taints"]) + (" (cordoned)" if info["unschedulable"] else ""),
            )
        console.print(tbl)
    for plugin, detail in (t["details"].get("plugins") or {}).items():
        tbl = Table(title=f"{plugin}: why (full structure in -o json)", title_justify="left")
        tbl.add_column("scope")
        tbl.add_column("detail", overflow="fold")
        for phase, value in (detail.get("cycle") or {}).items():
            if value:
                tbl.add_row(f"cycle: {phase}", compact(value))
        for node, value in (detail.get("nodes") or {}).items():
            tbl.add_row(node, compact(value))
        if detail.get("error"):
            tbl.add_row("error", str(detail["error"]))
        console.print(tbl)


def _gib(v: int) -> str:
    return f"{v / 2**30:.1f}Gi"


def _notes(t: dict[str, Any], console: Console) -> None:
    for n in t.get("notes", []):
        console.print(Text(f"note: {n}", style="dim"))
