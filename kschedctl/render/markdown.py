"""Markdown output of a trace, for pasting into a pull-request comment."""

from __future__ import annotations

from typing import Any

from tabulate import tabulate

from kschedctl.render.common import (
    extender_rows,
    extender_score_columns,
    filter_cells,
    filter_columns,
    gates_shown,
    headline,
    nominated_wait_line,
    order_line,
    placement_generate_rows,
    placement_score_rows,
    pod_group_line,
    pod_scheduled_line,
    post_bind_line,
    ranked_nodes,
    score_cell,
    skipped_filter_line,
)

MAX_ROWS = 30


def _status_rows(records: list[dict[str, Any]]) -> str:
    return tabulate(
        [[r["plugin"], r["code"], "; ".join(r.get("reasons", []))] for r in records],
        headers=["plugin", "code", "reasons"],
        tablefmt="github",
    )


def render_trace_markdown(t: dict[str, Any]) -> str:
    d = t["details"]
    out: list[str] = [f"### kschedctl: {headline(t)}", ""]
    out.append(f"Profile `{t['profile']}`, {d['numAllNodes']} nodes, kube-scheduler {t['k8sVersion']}{gates_shown(t)}.")
    out.append("")
    if t["preEnqueue"]:
        out += ["#### PreEnqueue", "", _status_rows(t["preEnqueue"]), ""]
    if pod_scheduled_line(t):
        out += [f"**{pod_scheduled_line(t)}**", ""]
    if t.get("placementGenerate"):
        headers = ["plugin", "code", "parent", "placements", "reasons"]
        out += ["#### PlacementGenerate", "", tabulate(placement_generate_rows(t), headers=headers, tablefmt="github"), ""]
    if t["preFilter"]:
        out += ["#### PreFilter", "", _status_rows(t["preFilter"]), ""]
    if t["filter"]:
        plugins = filter_columns(t)
        nodes = list(t["filter"])[:MAX_ROWS]
        rows = [[n, *filter_cells(t, n)] for n in nodes]
        out += ["#### Filter", "", tabulate(rows, headers=["node", *plugins], tablefmt="github"), ""]
        if skipped_filter_line(t):
            out += [f"_{skipped_filter_line(t)}_", ""]
        if len(t["filter"]) > len(nodes):
            out += [f"_… {len(t['filter']) - len(nodes)} more nodes_", ""]
    if t.get("extenders"):
        headers = ["extender", "verb", "outcome", "answer"]
        out += ["#### Extenders", "", tabulate(extender_rows(t), headers=headers, tablefmt="github"), ""]
    if t["postFilter"]:
        pf = t["postFilter"]
        out += ["#### PostFilter", "", f"`{pf['plugin']}`: {pf['code']} — {'; '.join(pf['reasons'])}", ""]
        if pf["nominatedNodeName"]:
            out += [f"Preemption dry run would nominate **{pf['nominatedNodeName']}** and evict: " + ", ".join(f"`{v}`" for v in pf["victims"]), ""]
    if nominated_wait_line(t):
        out += [str(nominated_wait_line(t)), ""]
    ext_cols = extender_score_columns(t)
    if t["score"] or ext_cols:
        ranked = ranked_nodes(t)[:MAX_ROWS]
        headers = ["node", *[f"{p} (w{s['weight']})" for p, s in t["score"].items()], *[c for c, _ in ext_cols], "total"]
        rows = [
            [n, *[score_cell(s, n) for s in t["score"].values()], *[cells.get(n, "") for _, cells in ext_cols], t["totals"].get(n, "")]
            for n in ranked
        ]
        out += ["#### Score", "", tabulate(rows, headers=headers, tablefmt="github"), ""]
    if t.get("placementScore"):
        headers, rows = placement_score_rows(t)
        out += ["#### PlacementScore", "", tabulate(rows, headers=headers, tablefmt="github"), ""]
    if pod_group_line(t):
        out += [str(pod_group_line(t)), ""]
    sel = t.get("selected")
    if sel:
        out += [f"**Selected:** `{t['details'].get('selectedNode')}` (max score {sel['maxScore']}; candidates: {', '.join(f'`{c}`' for c in sel['candidates'])})", ""]
        if order_line(t):
            out += [f"**{order_line(t)}**", ""]
        elif d.get("tieBreak"):
            out += [d["tieBreak"], ""]
        if post_bind_line(t):
            out += [str(post_bind_line(t)), ""]
    elif order_line(t):
        out += [f"**{order_line(t)}**", ""]
    if t["fitError"]:
        out += ["**FitError:**", "", "```", t["fitError"], "```", ""]
    if t.get("error"):
        out += [f"**Error:** {t['error']}", ""]
    return "\n".join(out).rstrip() + "\n"
