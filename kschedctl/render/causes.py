"""Output of ``explain pending`` grouped by cause (the default table), and the remedy cells of its rows.

Reads ``CauseGroup.to_dict()`` dictionaries and the rows' ``remedies`` entries. It builds on the
per-pod table of ``render/pending.py`` (its summary line and the remedy cell), which never
imports this module.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.text import Text
from tabulate import tabulate

from kschedctl.render.layout import Column, print_table
from kschedctl.render.pending import NONE, summary
from kschedctl.render.remedies import indented, remedy_headline

MAX_NAMES = 5
HEADERS = ("cause", "pods", "preemption dry run", "shared fix (verified by re-running the cycle)")


def _pods_text(g: dict[str, Any], sep: str = "\n") -> str:
    names = g["pods"][:MAX_NAMES]
    rest = len(g["pods"]) - len(names)
    more = [f"(+{rest} more)"] if rest else []
    if sep == "\n":
        return "\n".join([f"{g['count']} pod{'s' if g['count'] != 1 else ''}:", *names, *more])
    return f"{g['count']}: " + ", ".join([*names, *more])


def _preemption_text(g: dict[str, Any]) -> str:
    if g["outcome"] != "unschedulable":
        return NONE
    n = g["preemptionWouldPlace"]
    text = f"would place {n} of {g['count']}" if n else "would place none"
    waiting = sum(1 for r in g["rows"] if r.get("nominatedNodeWait"))
    if waiting:
        text += f"; {waiting} already nominated, waiting for victims to terminate (--by pod names them)"
    return text


def _shared_text(g: dict[str, Any], searched: bool) -> str:
    r = g["sharedRemedy"]
    if r is None:
        if not (searched and g["outcome"] == "unschedulable"):
            return NONE
        cut = sum(1 for row in g["rows"] if (row.get("remediesSearch") or {}).get("notTried"))
        # a search its budget cut short may have missed the change the others share
        return f"none shared by every pod (the search was cut short for {cut}: its budget ran out)" if cut else "none shared by every pod"
    return f"{remedy_headline(r)} → {r['verdict']['text']}{_room_words(g, r)}"


def _room_words(g: dict[str, Any], r: dict[str, Any]) -> str:
    """How far a shared fix was verified: each pod on its own. A new node says how many of the group it
    holds; any other fix, where the group holds identical pods (whose controller's template one patch
    changes for all), says it was verified for one of them."""
    d = r.get("detail") or {}
    c, n = d.get("copies"), g["count"]
    first = [((row.get("remediesSearch") or {}).get("sameAs") or {}).get("pod") or row["pod"] for row in g["rows"]]
    copies = max((first.count(k) for k in set(first)), default=0)
    if r["kind"] == "add-node" and isinstance(c, int) and not d.get("copiesCapped") and 0 < c < n:
        if len(set(first)) == 1:  # identical pods: the copies counted are copies of every one of them
            return f"; one such node has room for {c} of the {n} identical pods: {-(-n // c)} for all"
        return f"; one such node has room for {c} cop{'ies' if c != 1 else 'y'} of one pod, not for all {n}"
    if copies > 1 and r["kind"] != "add-node":
        return f" (verified for one of {copies} identical pods, not for all at once)"
    return ""


def group_cells(g: dict[str, Any], searched: bool, sep: str = "\n") -> list[str]:
    cause = g["cause"] if g["outcome"] in ("unschedulable", "scheduled") else f"{g['outcome']}: {g['cause']}"
    open_ = sum(1 for r in g["rows"] if r.get("orderDependence"))
    if open_:
        cause += f" (where: decided by node or queue order for {open_}; --by pod says how)"
    cells = [cause, _pods_text(g, sep), _preemption_text(g)]
    return [*cells, _shared_text(g, searched)] if searched else cells


def groups_summary(groups: list[dict[str, Any]]) -> str:
    """``render.pending.summary`` of the pods, plus the number of causes."""
    text = summary([row for g in groups for row in g["rows"]])
    return f"{text}; {len(groups)} cause{'s' if len(groups) != 1 else ''}" if groups else text


def _render_stacked(groups: list[dict[str, Any]], console: Console, searched: bool) -> None:
    for g in groups:
        style = {"unschedulable": "red", "gated": "yellow", "scheduled": "green"}.get(g["outcome"], "")
        cause, _pods, preemption, *shared = group_cells(g, searched, ", ")
        console.print(Text(f"• {cause}", style=f"bold {style}".strip()), overflow="fold")
        pods = ", ".join(g["pods"][:MAX_NAMES]) + (f" (+{g['count'] - MAX_NAMES} more)" if g["count"] > MAX_NAMES else "")
        for label, value in ((f"pods ({g['count']})", pods), ("preemption dry run", preemption),
                             *(("shared fix", v) for v in shared)):
            if value != NONE:
                indented(console, f"{label}: {value}", 2, hang=2)


def render_groups_table(groups: list[dict[str, Any]], console: Console, search: dict[str, Any] | None) -> None:
    """A table when it fits the console (pod names whole), else one block per cause."""
    if groups:
        searched = search is not None
        cols = [Column("cause", min_width=30), Column("pods", keep=True), Column("preemption dry run", min_width=12)]
        if searched:
            cols.append(Column(HEADERS[3], min_width=30))
        rows = []
        for g in groups:
            style = {"unschedulable": "red", "gated": "yellow", "scheduled": "green"}.get(g["outcome"], "")
            first, *rest = group_cells(g, searched)
            rows.append([Text(first, style=style), *(Text(c) for c in rest)])
        print_table(console, "Pending pods by cause", cols, rows, stacked=lambda c, _cols, _rows: _render_stacked(groups, c, searched))
    console.print(Text(groups_summary(groups)), overflow="fold")
    if search is not None:
        console.print(Text(search_summary(search), style="dim"), overflow="fold")


def render_groups_markdown(groups: list[dict[str, Any]], search: dict[str, Any] | None) -> str:
    out = ["### kschedctl: pending pods by cause", ""]
    if groups:
        headers = HEADERS if search is not None else HEADERS[:3]
        rows = [group_cells(g, search is not None, ", ") for g in groups]
        out += [tabulate(rows, headers=list(headers), tablefmt="github"), ""]
    out.append(groups_summary(groups))
    if search is not None:
        out += ["", f"_{search_summary(search)}_"]
    return "\n".join(out) + "\n"


def search_summary(search: dict[str, Any]) -> str:
    total = f" ({search['totalSeconds']:g} s in all)" if search.get("totalSeconds") is not None else ""
    shared = search.get("sharedAnswers") or 0
    searches = search.get("searches")
    twins = (f"; {searches} search{'es' if searches != 1 else ''}, {shared} pod{'s' if shared != 1 else ''} answered by "
             "an identical pod's search (same spec and owner)") if shared else ""
    return (f"Remedies: each verified by re-running the cycle; budget {search['budgetText']}{total}; used "
            f"{search['reruns']} cycle re-runs and {search['probes']} Filter probes in {search['seconds']:.2f} s{twins}.")
