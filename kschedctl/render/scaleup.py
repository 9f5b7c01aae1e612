"""Output of ``--scale-up`` (``explain pending``, ``explain pod``): each pod's autoscaler-style line and
each node group's answer, as tables or markdown.

Reads only ``ScaleUpReport.to_dict()`` and the rows' (or the trace's) ``scaleUp`` entries.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.text import Text
from tabulate import tabulate

from kschedctl.render.layout import Column, print_table

NONE = "—"
#: At most this many pod names in a cell.
MAX_NAMES = 5
PODS_TITLE = "Scale-up: would one new node of a node group take the pod? (its PreFilter and Filter plugins)"
GROUPS_TITLE = "Node groups: one new node each (built from the template node), and the least new nodes"
GROUP_HEADERS = ("node group (template)", "takes", "least new nodes", "rejects (first plugin)")
#: The same headers, in a table: narrow ones for the short cells.
GROUP_TABLE_HEADERS = ("node group\n(template)", "takes", "least new nodes", "rejects (first plugin)")
EXIT_NOTE = ("a pod a scale-up would place still counts as unschedulable: the exit status is as without "
             "--scale-up")


def least_text(g: dict[str, Any]) -> str:
    """The least count in words: ``1 (2 probes)``, ``none up to 100 (9 probes)``, or — when it takes no pod."""
    if not g["takes"]:
        return NONE
    probes = f"{g['probes']} probe{'s' if g['probes'] != 1 else ''}"
    if g["least"] is None:
        return f"none up to {g['searchedUpTo']} ({probes})"
    return f"{g['least']} ({probes})"


def rejects_text(g: dict[str, Any], sep: str = "\n", *, one_pod: bool = False) -> str:
    """The group's rejections by plugin and reason, each with the pod it rejects or how many (``one_pod``:
    the report is of one pod, named elsewhere)."""
    by: dict[tuple[str, str], list[str]] = {}
    for r in g["rejects"]:
        by.setdefault((r["plugin"], r["reason"]), []).append(r["pod"])
    lines = []
    for (plugin, reason), pods in by.items():
        who = "" if one_pod else f" ({pods[0]})" if len(pods) == 1 else f" ({len(pods)} pods)"
        lines.append(f"{plugin}: {reason}{who}")
    return sep.join(lines) or NONE


def names_text(names: list[str], sep: str = "\n") -> str:
    shown = names[:MAX_NAMES]
    more = [f"(+{len(names) - len(shown)} more)"] if len(names) > len(shown) else []
    return sep.join([*shown, *more]) or NONE


def group_cells(g: dict[str, Any], sep: str = "\n", *, one_pod: bool = False) -> list[str]:
    takes = ("yes" if g["takes"] else "no") if one_pod else names_text(g["takes"], sep)
    return [f"{g['group']}{sep}({g['template']})", takes, least_text(g), rejects_text(g, sep, one_pod=one_pod)]


def _group_columns() -> list[Column]:
    h = GROUP_TABLE_HEADERS
    return [Column(h[0], keep=True), Column(h[1], keep=True), Column(h[2], keep=True), Column(h[3], min_width=30)]


def render_groups(report: dict[str, Any], console: Console, *, one_pod: bool = False) -> None:
    """The node groups' table (nothing when no group was asked: no pod to analyse)."""
    if report["groups"]:
        rows = [[Text(c) for c in group_cells(g, one_pod=one_pod)] for g in report["groups"]]
        print_table(console, GROUPS_TITLE, _group_columns(), rows)


def summary(report: dict[str, Any]) -> str:
    """How many analysed pods a scale-up would place, and the least counts of the groups that take some."""
    analysed = [p for p in report["pods"] if p["analysed"]]
    if not analysed:
        return "Scale-up: no unschedulable pod to analyse"
    helped = sum(1 for p in analysed if p["groups"])
    counts = [f"{g['group']}: {g['least']}" for g in report["groups"] if g["least"] is not None]
    least = f"; least new nodes per group: {', '.join(counts)}" if counts else ""
    n = len(analysed)
    return f"Scale-up: {helped} of the {n} pod{'s' if n != 1 else ''} no existing node takes would trigger one{least}"


def pod_lines(groups: list[dict[str, Any]]) -> list[tuple[str, list[str], str]]:
    """(cause, pods, line): per cause, its pods that share a line (in the cause's pod order)."""
    out: list[tuple[str, list[str], str]] = []
    for g in groups:
        by_line: dict[str, list[str]] = {}
        for row in g["rows"]:
            line = row.get("scaleUp")
            if line is not None:
                text = line["message"] + (f" ({line['note']})" if line.get("note") else "")
                by_line.setdefault(text, []).append(row["pod"])
        out.extend((g["cause"], pods, message) for message, pods in by_line.items())
    return out


def _pods_cell(pods: list[str], sep: str = "\n") -> str:
    head = f"{len(pods)} pod{'s' if len(pods) != 1 else ''}:"
    return head + sep + names_text(pods, sep) if len(pods) > 1 else pods[0]


def render_pending_scale_up(report: dict[str, Any], groups: list[dict[str, Any]], console: Console) -> None:
    """``explain pending --scale-up``: under each cause, its pods by their line; then the node groups."""
    rows: list[list[Text]] = []
    last = None
    for cause, pods, message in pod_lines(groups):
        rows.append([Text(cause if cause != last else ""), Text(_pods_cell(pods)), Text(message)])
        last = cause
    console.print()
    if rows:
        cols = [Column("cause", min_width=16), Column("pods", keep=True), Column("scale-up", min_width=30)]
        print_table(console, PODS_TITLE, cols, rows)
    render_groups(report, console)
    console.print(Text(summary(report)), overflow="fold")
    console.print(Text(EXIT_NOTE, style="dim"), overflow="fold")


def render_pod_scale_up(data: dict[str, Any], console: Console) -> None:
    """``explain pod --scale-up``: the pod's line, then the node groups."""
    console.print()
    note = f" ({data['note']})" if data.get("note") else ""
    console.print(Text(f"Scale-up: {data['message']}{note}"), overflow="fold")
    render_groups(data, console, one_pod=True)


def pending_scale_up_markdown(report: dict[str, Any], groups: list[dict[str, Any]]) -> str:
    out = ["", "### kschedctl: scale-up", ""]
    rows = [[cause, _pods_cell(pods, ", "), message] for cause, pods, message in pod_lines(groups)]
    if rows:
        out += [tabulate(rows, headers=["cause", "pods", "scale-up"], tablefmt="github"), ""]
    out += [groups_markdown(report), summary(report), "", f"_{EXIT_NOTE}_"]
    return "\n".join(out) + "\n"


def pod_scale_up_markdown(data: dict[str, Any]) -> str:
    note = f" ({data['note']})" if data.get("note") else ""
    return "\n".join(["", "### Scale-up", "", data["message"] + note, "", groups_markdown(data, one_pod=True)])


def groups_markdown(report: dict[str, Any], *, one_pod: bool = False) -> str:
    if not report["groups"]:
        return ""
    rows = [group_cells(g, "<br>", one_pod=one_pod) for g in report["groups"]]
    return tabulate(rows, headers=list(GROUP_HEADERS), tablefmt="github") + "\n"
