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
GROUP_TABLE_HEADERS = ("node group\n(template)", "takes", "least new\nnodes", "rejects (first plugin)")
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
    return f"Scale-up: {helped} of {len(analysed)} unschedulable pod(s) would trigger one{least}"


def render_pending_scale_up(report: dict[str, Any], groups: list[dict[str, Any]], console: Console) -> None:
    """``explain pending --scale-up``: each pod's line under its cause, then the node groups."""
    rows: list[list[Text]] = []
    for g in groups:
        for i, row in enumerate(g["rows"]):
            line = row.get("scaleUp")
            if line is not None:
                rows.append([Text(g["cause"] if i == 0 else ""), Text(row["pod"]), Text(line["message"])])
    console.print()
    if rows:
        cols = [Column("cause", min_width=16), Column("pod", keep=True), Column("scale-up", min_width=30)]
        print_table(console, PODS_TITLE, cols, rows)
    render_groups(report, console)
    console.print(Text(summary(report)), overflow="fold")
    console.print(Text(EXIT_NOTE, style="dim"), overflow="fold")


def render_pod_scale_up(data: dict[str, Any], console: Console) -> None:
    """``explain pod --scale-up``: the pod's line, then the node groups."""
    console.print()
    console.print(Text(f"Scale-up: {data['message']}"), overflow="fold")
    render_groups(data, console, one_pod=True)


def pending_scale_up_markdown(report: dict[str, Any], groups: list[dict[str, Any]]) -> str:
    out = ["", "### kschedctl: scale-up", ""]
    rows = [[g["cause"], row["pod"], row["scaleUp"]["message"]] for g in groups for row in g["rows"] if row.get("scaleUp")]
    if rows:
        out += [tabulate(rows, headers=["cause", "pod", "scale-up"], tablefmt="github"), ""]
    out += [groups_markdown(report), summary(report), "", f"_{EXIT_NOTE}_"]
    return "\n".join(out) + "\n"


def pod_scale_up_markdown(data: dict[str, Any]) -> str:
    return "\n".join(["", "### Scale-up", "", data["message"], "", groups_markdown(data, one_pod=True)])


def groups_markdown(report: dict[str, Any], *, one_pod: bool = False) -> str:
    if not report["groups"]:
        return ""
    rows = [group_cells(g, "<br>", one_pod=one_pod) for g in report["groups"]]
    return tabulate(rows, headers=list(GROUP_HEADERS), tablefmt="github") + "\n"
