"""Terminal and markdown output of ``simulate`` (reads ``SimulationResult.to_dict()``).

Order: with ``--add-nodes``, the question and its answer (how many new nodes like which node, and
whether they place every pod); a headline (how many pods were scheduled, or how many copies fit), one row per attempt in
queue order (with what batching and preemption did), the first pod that does not fit with its
FitError, then one row per node the run changed (pods added and evicted, requests before → after
against allocatable), the time taken (a rate only when the run lasted long enough to measure one)
and the notes on what the run assumed.
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
        wl = next((p["workload"] for p in r["placements"] if not p.get("pendingAtStart")), None)
        what = f"copies of {wl}" if wl else "copies"
        first = r["firstFailure"]
        tail = f"; copy {s['placed'] + 1} does not fit" if first else f" ({s['stopReason']})"
        return f"{s['placed']} {what} fit on {r['numNodes']} nodes{tail}"
    parts = [f"{s['placed']:,} scheduled", f"{s['notPlaced']:,} not scheduled"]
    if s.get("nominated"):
        parts.append(f"{s['nominated']} nominated")
    if s.get("ignored"):
        parts.append(f"{s['ignored']:,} left to another scheduler (a schedulerName no profile has)")
    if s["victims"]:
        parts.append(f"{s['victims']} running pod(s) preempted")
    head = f"{s['pods']:,} pods on {r['numNodes']} nodes, in queue order: " + ", ".join(parts)
    if s.get("capped"):
        head += f" (stopped after {r['options']['maxPods']:,} pods: --max-pods)"
    return head


def _nodes(n: int) -> str:
    return f"{n} new node{'' if n == 1 else 's'}"


def scale_up_lines(r: dict[str, Any]) -> list[str]:
    """``--add-nodes``: per template, the count added, and for ``auto`` the answer of the search."""
    added = r.get("addNodes") or []
    pods = r["summary"]["pods"]
    others = " with the other new nodes" if len(added) > 1 else ""
    out: list[str] = []
    for a in added:
        like = f"like {a['template']}"
        if not a["auto"]:
            names = f": {_names(a['names'], 4)}" if a["names"] else ""
            out.append(f"{_nodes(a['count'])} {like} added{names}")
            continue
        searched = f"searched 0..{a['searchedUpTo']} in {a['probes']} probe{'' if a['probes'] == 1 else 's'}"
        if a["least"] is None:
            out.append(f"no count of new nodes {like} up to {a['searchedUpTo']} places all {pods:,} pods{others} ({searched}); "
                       f"the placements with {a['count']}:")
        else:
            verb = "places" if a["count"] == 1 else "place"
            out.append(f"{_nodes(a['count'])} {like} {verb} all {pods:,} pods{others} ({searched})")
    return out


def placement_note(p: dict[str, Any], retried: bool = False) -> str:
    notes: list[str] = []
    if p.get("pendingAtStart"):
        notes.append("pending in the snapshot")
    if p.get("attempt", 1) > 1:
        notes.append("second attempt")
    if p.get("batched"):
        notes.append("batch hint, not scored")
    pre = p.get("preemption")
    if pre:
        if pre["victims"]:
            what = f"{_names(pre['victims'])} on {pre['nominatedNode']}"
        else:
            what = f"nothing, nominated to {pre['nominatedNode']}"
        if pre["applied"]:
            tail = "" if retried else ", not retried"
            notes.append(f"preempted {what}; nominated to {pre['nominatedNode']}{tail}")
        else:
            notes.append(f"would preempt {what} (report only)")
    if p["outcome"] == "scheduled" and len(p.get("candidates") or []) > 1:
        notes.append(f"tie of {len(p['candidates'])}")
    if "earlyStop" in (p.get("orderDependent") or []):
        notes.append("search stopped early")
    if "podGroupOrder" in (p.get("orderDependent") or []):
        notes.append("the order inside its pod group decided")
    if p.get("evictedBy"):
        notes.append(f"evicted later by {_short(p['evictedBy'])}")
    if p["outcome"] not in ("scheduled", "unschedulable"):
        notes.extend(p.get("notes") or [])
        if p.get("error"):
            notes.append(str(p["error"]))
    return "; ".join(notes)


def _row(p: dict[str, Any], retried: bool = False) -> list[str]:
    where = p["node"] if p["outcome"] == "scheduled" else p["outcome"]
    scored = p["outcome"] == "scheduled" and p["score"] is not None and p["feasibleNodes"] != 1
    return [
        str(p["order"]),
        p["pod"],
        p.get("workload") or "",
        str(where),
        str(p["feasibleNodes"]) if p["outcome"] == "scheduled" else "",
        str(p["score"]) if scored else "",
        placement_note(p, retried),
    ]


def placement_rows(r: dict[str, Any], limit: int | None) -> list[list[str]]:
    placements = r["placements"]
    shown = placements if limit is None else placements[:limit]
    retried = bool((r.get("options") or {}).get("retryNominated"))
    rows = [_row(p, retried) for p in shown]
    if limit is not None and len(placements) > limit:
        # keep the first failure visible even when the table is cut
        first = r["firstFailure"]
        if first is not None and first["order"] > limit:
            rows.append(["…", f"{first['order'] - limit - 1} more", "", "", "", "", ""])
            rows.append(_row(first, retried))
        else:
            rows.append(["…", f"{len(placements) - limit} more (use -o json to see all)", "", "", "", "", ""])
    for sk in r.get("skipped") or []:
        rows.append([
            "…",
            f"{sk['count']:,} more cop{'y' if sk['count'] == 1 else 'ies'}",
            sk.get("workload") or "",
            "not tried",
            "",
            "",
            f"identical to {_short(sk['sameAs'])}, which does not fit; nothing changed since",
        ])
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


#: Below this, a rate in pods/s says more about the clock than about the run.
MIN_SECONDS_FOR_RATE = 1.0


def _duration(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms" if seconds < 1 else f"{seconds:.2f} s"


def speed_line(r: dict[str, Any]) -> str:
    t = r["timing"]
    line = f"{r['summary']['placed']:,} pods placed in {_duration(t['elapsedSeconds'])}"
    if t["elapsedSeconds"] >= MIN_SECONDS_FOR_RATE:
        return line + f" ({t['podsPerSecond']:.0f} pods/s, {t['cycles']:,} scheduling cycles)"
    return line + f" ({t['cycles']:,} scheduling cycles)"


def _failure(p: dict[str, Any]) -> str:
    pre = p.get("preemption")
    if pre and pre["applied"]:
        return f"{p['outcome']}; nominated to {pre['nominatedNode']} after preemption"
    return str(p["outcome"])


def _drop_empty_columns(headers: list[str], rows: list[list[str]], keep: int = 2) -> tuple[list[str], list[list[str]]]:
    cols = [i for i in range(len(headers)) if i < keep or any(row[i] for row in rows)]
    return [headers[i] for i in cols], [[row[i] for i in cols] for row in rows]


# --------------------------------------------------------------------------- terminal


def render_simulation_table(r: dict[str, Any], console: Console, notes_console: Console | None = None) -> None:
    first = r["firstFailure"]
    style = "bold green" if first is None else ("bold" if r["mode"] == "max" else "bold red")
    for line in scale_up_lines(r):
        console.print(Text(line, style="bold"))
    console.print(Text(headline(r), style=style))
    headers, rows = _drop_empty_columns(PLACEMENT_HEADERS, placement_rows(r, MAX_ROWS))
    print_table(console, "Placements (order of attempts)", _columns(headers), [[Text(c) for c in row] for row in rows])
    if first is not None:
        console.print(Text(f"First pod that does not fit: {first['pod']} ({_failure(first)})", style="bold"))
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
    out += [line for text in scale_up_lines(r) for line in (f"**{text}**", "")]
    headers, rows = _drop_empty_columns(PLACEMENT_HEADERS, placement_rows(r, MAX_ROWS))
    out += [tabulate(rows, headers=headers, tablefmt="github"), ""]
    first = r["firstFailure"]
    if first is not None:
        out += [f"**First pod that does not fit:** `{first['pod']}` ({_failure(first)})", ""]
        if first.get("fitError"):
            out += ["```", first["fitError"], "```", ""]
    if r["nodes"]:
        headers, rows = _drop_empty_columns(NODE_HEADERS, node_rows(r))
        out += ["Nodes changed by the run:", "", tabulate(rows, headers=headers, tablefmt="github"), ""]
    out += [f"_{speed_line(r)}_", ""]
    out += [f"_note: {n}_" for n in r["notes"]]
    return "\n".join(out).rstrip() + "\n"
