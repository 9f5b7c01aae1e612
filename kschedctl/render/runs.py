"""Terminal and markdown output of ``simulate --runs N`` (reads ``whatif.runs.RunsReport.to_dict()``).

Order: a drain's verdict across the runs (``--drain``), a headline (runs, nodes, the seed), the range of the counts that matter (pods placed, not
placed, preempted, placements the order decided: min / median / max), the same per zone and per
node group, then the pods whose outcome is not the same in every run with how many runs gave each
outcome, and the notes.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.text import Text
from tabulate import tabulate

from kschedctl.render.layout import Column, print_table

#: Pods whose outcome changes, shown at most (the rest counted; -o json has them all).
MAX_CHANGES = 20

MEASURES = (
    ("placed", "pods placed"),
    ("notPlaced", "pods not placed"),
    ("preempted", "running pods preempted"),
    ("orderDependent", "placements decided by the order (tie, early stop)"),
)
SPREAD_HEADERS = ["", "min", "median", "max"]
#: Names and figures stay whole; the rest wraps.
_KEEP = {"pod", "zone", "group", "min", "median", "max"}
_FIGURES = {"min", "median", "max"}


def headline(r: dict[str, Any]) -> str:
    p = r["placed"]
    placed = f"{p['min']:,} pods placed in every run" if p["min"] == p["max"] else f"{p['min']:,} to {p['max']:,} pods placed"
    changes = len(r.get("changes") or [])
    moved = f", {changes} pod{'s' if changes != 1 else ''} with an outcome that changes" if changes else ", every outcome the same"
    return (f"{r['runs']} runs on {r['numNodes']:,} nodes with random node and start-up queue orders (seed {r['seed']}): "
            f"{placed}{moved}")


def _cells(s: dict[str, Any]) -> list[str]:
    return [f"{s['min']:,}", f"{s['median']:,}", f"{s['max']:,}"]


def measure_rows(r: dict[str, Any]) -> list[list[str]]:
    return [[label, *_cells(r[key])] for key, label in MEASURES]


def group_rows(groups: list[dict[str, Any]]) -> list[list[str]]:
    return [[g["name"], *_cells(g)] for g in groups]


def change_rows(r: dict[str, Any]) -> list[list[str]]:
    changes = r["changes"]
    rows = [[c["pod"], ", ".join(f"{o['outcome']} ×{o['runs']}" for o in c["outcomes"])] for c in changes[:MAX_CHANGES]]
    if len(changes) > MAX_CHANGES:
        rows.append(["…", f"{len(changes) - MAX_CHANGES} more pods (use -o json to see all)"])
    return rows


def _sections(r: dict[str, Any]) -> list[tuple[str, list[str], list[list[str]]]]:
    """(title, headers, rows) of each table, empty ones left out."""
    out = [("Across the runs", SPREAD_HEADERS, measure_rows(r))]
    if r["byZone"]:
        out.append((f"Pods placed per zone ({r['zoneLabel']})", ["zone", *SPREAD_HEADERS[1:]], group_rows(r["byZone"])))
    if r["byGroup"]:
        out.append((f"Pods placed per node group ({r['groupLabel']})", ["group", *SPREAD_HEADERS[1:]], group_rows(r["byGroup"])))
    changes = change_rows(r)
    if changes:
        out.append(("Pods whose outcome changes between runs", ["pod", "outcome (runs)"], changes))
    return out


def render_runs_table(r: dict[str, Any], console: Console, notes_console: Console | None = None) -> None:
    if r.get("drain"):
        console.print(Text(r["drain"]["verdict"], style="bold"))
    console.print(Text(headline(r), style="bold"))
    for f in r.get("failures") or []:
        console.print(Text(f, style="bold red"))
    for title, headers, rows in _sections(r):
        columns = [Column(h, keep=h in _KEEP, min_width=0 if h in _KEEP else 12, justify="right" if h in _FIGURES else "left")
                   for h in headers]
        print_table(console, title, columns, [[Text(c) for c in row] for row in rows])
    if not r["changes"]:
        console.print(Text("Every pod had the same outcome in every run."))
    for n in r["notes"]:
        (notes_console or console).print(Text(f"note: {n}"))


def render_runs_markdown(r: dict[str, Any]) -> str:
    out = [f"### kschedctl simulate --runs: {headline(r)}", ""]
    if r.get("drain"):
        out = [f"### kschedctl simulate --drain --runs: {r['drain']['verdict']}", "", f"{headline(r)}", ""]
    out += [f"**{f}**\n" for f in r.get("failures") or []]
    for title, headers, rows in _sections(r):
        out += [f"{title}:", "", tabulate(rows, headers=headers, tablefmt="github"), ""]
    if not r["changes"]:
        out += ["Every pod had the same outcome in every run.", ""]
    out += [f"_note: {n}_" for n in r["notes"]]
    return "\n".join(out).rstrip() + "\n"
