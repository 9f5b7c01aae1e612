"""Terminal and markdown output of ``simulate --drain`` and ``--scale-down`` (reads the results' ``to_dict()``).

Order: the verdict; per drained node, each of its pods with what the drain does to it (stays,
refused, blocked by a budget, evicted, in which round of kubectl's retries when there were
several) and where its replacement lands (or that it does not fit); the rounds; the budgets
that block; the FitError of each replacement that does not fit; the pods lost.
A scale-down first lists the candidates in removal order, then the drain that stopped it.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.text import Text
from tabulate import tabulate

from kschedctl.render.layout import Column, print_indented, print_table

HEADERS = ["pod", "controller", "drain", "lands on", "note"]
_COLUMNS = [Column("pod", keep=True), Column("controller", min_width=12), Column("drain", keep=True),
            Column("lands on", keep=True), Column("note", min_width=16)]


def _short(key: str) -> str:
    return key.split("/", 1)[1] if "/" in key else key


def _landing_note(ln: dict[str, Any]) -> str:
    notes: list[str] = []
    if ln["outcome"] == "scheduled" and ln["tiedWith"]:
        notes.append(f"tie with {', '.join(ln['tiedWith'][:3])}{' …' if len(ln['tiedWith']) > 3 else ''}: node order chose")
    if ln["nominatedNodeName"]:
        victims = f" after preempting {', '.join(_short(v) for v in ln['victims'])}" if ln["victims"] else ""
        notes.append(f"nominated to {ln['nominatedNodeName']}{victims}")
    if ln["outcome"] not in ("scheduled", "unschedulable"):
        notes.append(ln["outcome"])
    return "; ".join(notes)


def pod_rows(r: dict[str, Any], node: str) -> list[list[str]]:
    """One row per pod of ``node``: its controller, what the drain does, where the replacement lands."""
    landings = {ln["evicted"]: ln for ln in r["landings"]}
    rows: list[list[str]] = []
    for p in r["pods"]:
        if p["node"] != node:
            continue
        controller = p["controller"] or "-"
        if p["action"] != "evicted":
            note = p["reason"]
            if p["blockedBy"]:
                note = f"{p['blockedBy']['budget']} allows {p['blockedBy']['disruptionsAllowed']} disruption(s): {note}"
            rows.append([p["pod"], controller, p["action"], "", note])
            continue
        ln = landings.get(p["pod"])
        if ln is None:
            rows.append([p["pod"], controller, "evicted, lost", "", p["reason"]])
            continue
        where = ln["node"] if ln["outcome"] == "scheduled" else "does not fit"
        note = _landing_note(ln)
        if len(r.get("rounds") or []) > 1:
            note = "; ".join(x for x in (f"round {p['round']}", note) if x)
        rows.append([p["pod"], controller, f"→ {_short(ln['pod'])}", where, note])
    return rows


def _sections(r: dict[str, Any]) -> list[tuple[str, list[str]]]:
    """The text sections after the tables: budgets that block, FitErrors, lost pods."""
    out: list[tuple[str, list[str]]] = []
    rounds = r.get("rounds") or []
    if len(rounds) > 1:
        out.append(("Rounds of kubectl's retries (every 5s, while a budget refuses)", [
            f"round {x['round']}: {', '.join(_short(k) for k in x['evicted']) or 'nothing evicted'}" for x in rounds
        ]))
    if r["blockingBudgets"]:
        out.append(("PodDisruptionBudgets that block", [
            f"{b['budget']} (allows {b['disruptionsAllowed']} disruption(s)) blocks {b['pod']}: {b['message']}"
            for b in r["blockingBudgets"]
        ]))
    misfits = [ln for ln in r["landings"] if ln["outcome"] != "scheduled"]
    if misfits:
        out.append(("Replacements that do not fit (PodScheduled message)", [
            f"{ln['pod']} ({ln['controller']}): {ln['fitError'] or ln['outcome']}" for ln in misfits
        ]))
    if r["lost"]:
        out.append(("Lost (no controller re-creates them)", [", ".join(r["lost"])]))
    if r["pendingAtStart"]:
        out.append(("Pending pods of the snapshot, queued before the replacements", [", ".join(
            f"{p['pod']} → {_pending_outcome(p)}" for p in r["pendingAtStart"]
        )]))
    return out


def _pending_outcome(p: dict[str, Any]) -> str:
    if p["node"]:
        return str(p["node"])
    return f"nominated to {p['nominatedNodeName']}" if p.get("nominatedNodeName") else str(p["outcome"])


def _how(r: dict[str, Any]) -> str:
    return "removed" if r.get("removed") else "cordoned"


def _notes(r: dict[str, Any]) -> list[str]:
    sim = r.get("simulation") or {}
    return list(r["notes"]) + list(sim.get("notes") or [])


def render_drain_table(r: dict[str, Any], console: Console, notes_console: Console | None = None) -> None:
    console.print(Text(r["verdict"], style="bold green" if r["succeeded"] else "bold red"), overflow="fold")
    for node in r["drained"]:
        print_table(console, f"{node} ({_how(r)})", _COLUMNS, [[Text(c) for c in row] for row in pod_rows(r, node)])
    for title, lines in _sections(r):
        console.print(Text(title, style="bold"))
        for line in lines:
            print_indented(console, Text(line))
    for n in _notes(r):
        (notes_console or console).print(Text(f"note: {n}"), overflow="fold")


def render_drain_markdown(r: dict[str, Any]) -> str:
    out = [f"### kschedctl simulate --drain: {r['verdict']}", ""]
    for node in r["drained"]:
        out += [f"**{node}** ({_how(r)})", "", tabulate(pod_rows(r, node), headers=HEADERS, tablefmt="github"), ""]
    for title, lines in _sections(r):
        out += [f"**{title}**", ""] + [f"- {line}" for line in lines] + [""]
    out += [f"_note: {n}_" for n in _notes(r)]
    return "\n".join(out).rstrip() + "\n"


# --------------------------------------------------------------------------- scale-down


def candidate_rows(r: dict[str, Any]) -> list[list[str]]:
    removable = set(r["removable"])
    rows = []
    for i, c in enumerate(r["candidates"], 1):
        verdict = "can go" if c["node"] in removable else ("cannot go" if c["node"] == r["blockedNode"] else "not tried")
        rows.append([str(i), c["node"], f"{c['utilization'] * 100:.0f}%", verdict])
    return rows


_CANDIDATE_COLUMNS = [Column("#", keep=True), Column("node", keep=True), Column("requested", keep=True), Column("removal", keep=True)]


def render_scale_down_table(r: dict[str, Any], console: Console, notes_console: Console | None = None) -> None:
    console.print(Text(r["verdict"], style="bold green" if r["succeeded"] else "bold red"), overflow="fold")
    print_table(console, "Candidates, least requested first", _CANDIDATE_COLUMNS,
                [[Text(c) for c in row] for row in candidate_rows(r)])
    if r["stoppedBy"] is not None:
        console.print(Text(f"Removing {r['blockedNode']} too (with the nodes before it):", style="bold"))
        render_drain_table(r["stoppedBy"], console, notes_console)
    elif r["lastDrain"] is not None:
        console.print(Text(f"Removing {', '.join(r['removable'])}:", style="bold"))
        render_drain_table(r["lastDrain"], console, notes_console)


def render_scale_down_markdown(r: dict[str, Any]) -> str:
    headers = ["#", "node", "requested", "removal"]
    out = [f"### kschedctl simulate --scale-down: {r['verdict']}", "",
           tabulate(candidate_rows(r), headers=headers, tablefmt="github"), ""]
    if r["stoppedBy"] is not None:
        out += [f"Removing {r['blockedNode']} too (with the nodes before it):", "", render_drain_markdown(r["stoppedBy"])]
    elif r["lastDrain"] is not None:
        out += [f"Removing {', '.join(r['removable'])}:", "", render_drain_markdown(r["lastDrain"])]
    return "\n".join(out).rstrip() + "\n"
