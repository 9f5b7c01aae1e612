"""Terminal and markdown output of ``simulate`` (reads ``SimulationResult.to_dict()``).

Order: a headline (how many pods were scheduled, or how many copies fit), one row per pod in
queue order, the first pod that does not fit with its FitError, then one row per node the run
changed (pods added and evicted, requests before → after against allocatable), and the speed.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.text import Text
from tabulate import tabulate

from kschedctl.render.common import fmt_cpu, fmt_mem
from kschedctl.render.layout import Column, print_table

MAX_ROWS = 40


def _usage(before: int, after: int, alloc: int, fmt: Any) -> str:
    pct = f" ({after * 100 // alloc}%)" if alloc else ""
    if before == after:
        return f"{fmt(after)} / {fmt(alloc)}{pct}"
    return f"{fmt(before)} → {fmt(after)} / {fmt(alloc)}{pct}"


def _short(key: str) -> str:
    return key.split("/", 1)[1] if "/" in key else key


def _names(keys: list[str], limit: int = 6) -> str:
    shown = [_short(k) for k in keys[:limit]]
    more = f" +{len(keys) - limit}" if len(keys) > limit else ""
    return ", ".join(shown) + more


def headline(r: dict[str, Any]) -> str:
    s = r["summary"]
    if r["mode"] == "max":
        wl = r["placements"][0]["workload"] if r["placements"] else None
        what = f"copies of {wl}" if wl else "copies"
        first = r["firstFailure"]
        tail = f"; copy {first['order']} does not fit" if first else f" ({s['stopReason']})"
        return f"{s['placed']} {what} fit on {r['numNodes']} nodes{tail}"
    parts = [f"{s['placed']} scheduled", f"{s['notPlaced']} not scheduled"]
    if s["victims"]:
        parts.append(f"{s['victims']} running pod(s) preempted")
    return f"{s['pods']} pods on {r['numNodes']} nodes, in queue order: " + ", ".join(parts)


def placement_note(p: dict[str, Any]) -> str:
    notes: list[str] = []
    pre = p.get("preemption")
    if pre:
        if pre["victims"]:
            what = f"{_names(pre['victims'])} on {pre['nominatedNode']}"
        else:
            what = f"nothing, nominated to {pre['nominatedNode']}"
        notes.append(f"preempted {what}" if pre["applied"] else f"would preempt {what} (apply with --preemption)")
    if p["outcome"] == "scheduled" and len(p.get("candidates") or []) > 1:
        notes.append(f"tie of {len(p['candidates'])}")
    if p["outcome"] not in ("scheduled", "unschedulable"):
        notes.extend(p.get("notes") or [])
        if p.get("error"):
            notes.append(str(p["error"]))
    return "; ".join(notes)


def placement_rows(r: dict[str, Any], limit: int | None) -> list[list[str]]:
    rows: list[list[str]] = []
    placements = r["placements"]
    shown = placements if limit is None else placements[:limit]
    for p in shown:
        where = p["node"] if p["outcome"] == "scheduled" else p["outcome"]
        rows.append([
            str(p["order"]),
            p["pod"],
            p.get("workload") or "",
            str(where),
            str(p["feasibleNodes"]) if p["outcome"] == "scheduled" else "",
            "" if p["score"] is None or p["feasibleNodes"] == 1 else str(p["score"]),
            placement_note(p),
        ])
    if limit is not None and len(placements) > limit:
        # keep the first failure visible even when the table is cut
        first = r["firstFailure"]
        if first is not None and first["order"] > limit:
            rows.append(["…", f"{first['order'] - limit - 1} more", "", "", "", "", ""])
            rows.append(placement_rows({"placements": [first], "firstFailure": None}, None)[0])
        else:
            rows.append(["…", f"{len(placements) - limit} more (use -o json to see all)", "", "", "", "", ""])
    return rows


def node_rows(r: dict[str, Any]) -> list[list[str]]:
    rows: list[list[str]] = []
    for n in r["nodes"]:
        a, b, alloc = n["requestedBefore"], n["requestedAfter"], n["allocatable"]
        other = []
        for res in sorted(set(a) | set(b)):
            if res in ("cpu", "memory", "pods", "ephemeral-storage"):
                continue
            if a.get(res, 0) != b.get(res, 0):
                other.append(f"{res} {a.get(res, 0)} → {b.get(res, 0)} / {alloc.get(res, 0)}")
        rows.append([
            n["node"],
            f"{n['podsBefore']} → {n['podsAfter']}",
            _names(n["added"]),
            _names(n["removed"]),
            _usage(a.get("cpu", 0), b.get("cpu", 0), alloc.get("cpu", 0), fmt_cpu),
            _usage(a.get("memory", 0), b.get("memory", 0), alloc.get("memory", 0), fmt_mem),
            "; ".join(other),
        ])
    return rows


NODE_HEADERS = ["node", "pods", "added", "evicted", "cpu requested (cores)", "memory requested", "other"]
PLACEMENT_HEADERS = ["#", "pod", "workload", "node", "feasible", "score", "note"]
#: Names and figures stay whole; lists and notes wrap.
_KEEP = {"#", "pod", "node", "pods", "feasible", "score"}


def _columns(headers: list[str]) -> list[Column]:
    return [Column(h, keep=h in _KEEP, min_width=0 if h in _KEEP else 12) for h in headers]


def speed_line(r: dict[str, Any]) -> str:
    t = r["timing"]
    return (
        f"{r['summary']['placed']} pods placed in {t['elapsedSeconds']:.2f} s "
        f"({t['podsPerSecond']:.0f} pods/s, {t['cycles']} scheduling cycles)"
    )


def _drop_empty_columns(headers: list[str], rows: list[list[str]], keep: int = 2) -> tuple[list[str], list[list[str]]]:
    cols = [i for i in range(len(headers)) if i < keep or any(row[i] for row in rows)]
    return [headers[i] for i in cols], [[row[i] for i in cols] for row in rows]


# --------------------------------------------------------------------------- terminal


def render_simulation_table(r: dict[str, Any], console: Console, notes_console: Console | None = None) -> None:
    first = r["firstFailure"]
    style = "bold green" if first is None else ("bold" if r["mode"] == "max" else "bold red")
    console.print(Text(headline(r), style=style))
    headers, rows = _drop_empty_columns(PLACEMENT_HEADERS, placement_rows(r, MAX_ROWS))
    print_table(console, "Placements (queue order)", _columns(headers), [[Text(c) for c in row] for row in rows])
    if first is not None:
        console.print(Text(f"First pod that does not fit: {first['pod']} ({first['outcome']})", style="bold"))
        if first.get("fitError"):
            console.print(Text(first["fitError"]), overflow="fold")
        for n in first.get("notes") or []:
            console.print(Text(n), overflow="fold")
    if r["nodes"]:
        headers, rows = _drop_empty_columns(NODE_HEADERS, node_rows(r))
        print_table(console, "Nodes changed by the run", _columns(headers), [[Text(c) for c in row] for row in rows])
    console.print(Text(speed_line(r)), overflow="fold")
    for n in r["notes"]:
        (notes_console or console).print(Text(f"note: {n}"))


# --------------------------------------------------------------------------- markdown


def render_simulation_markdown(r: dict[str, Any]) -> str:
    out = [f"### kschedctl simulate: {headline(r)}", ""]
    headers, rows = _drop_empty_columns(PLACEMENT_HEADERS, placement_rows(r, MAX_ROWS))
    out += [tabulate(rows, headers=headers, tablefmt="github"), ""]
    first = r["firstFailure"]
    if first is not None:
        out += [f"**First pod that does not fit:** `{first['pod']}` ({first['outcome']})", ""]
        if first.get("fitError"):
            out += ["```", first["fitError"], "```", ""]
    if r["nodes"]:
        headers, rows = _drop_empty_columns(NODE_HEADERS, node_rows(r))
        out += ["Nodes changed by the run:", "", tabulate(rows, headers=headers, tablefmt="github"), ""]
    out += [f"_{speed_line(r)}_", ""]
    out += [f"_note: {n}_" for n in r["notes"]]
    return "\n".join(out).rstrip() + "\n"
