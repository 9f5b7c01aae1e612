"""Output of ``kschedctl explain pending``: one row per pending pod, as a table or markdown.

Reads only the rows' plain dictionaries (``PendingRow.to_dict()``), like every renderer.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from rich.console import Console
from rich.text import Text
from tabulate import tabulate

from kschedctl.render.layout import Column, print_table
from kschedctl.render.remedies import remedy_headline

HEADERS = ("pod", "verdict (FitError)", "dominant reason", "nearest node", "preemption dry run")
#: The table's columns: the pod name whole; the verdict (a FitError, often long) gets the most room.
COLUMNS = (
    Column(HEADERS[0], keep=True),
    Column(HEADERS[1], min_width=32),
    Column(HEADERS[2], min_width=14),
    Column(HEADERS[3], min_width=14),
    Column(HEADERS[4], min_width=12),
)
NONE = "—"


def verdict_text(row: dict[str, Any]) -> str:
    outcome = row["outcome"]
    if outcome == "scheduled":
        return f"fits now: would be bound to {row['selectedNode']}" + _order_words(row)
    if outcome == "gated":
        c = row.get("podScheduled")
        return "gated at PreEnqueue (no scheduling cycle)" + (f"; PodScheduled False, {c['reason']}: {c['message']}" if c else "")
    if outcome in ("ignored", "error"):
        return f"{outcome}: {row['message']}"
    return str(row["fitError"] or outcome)


def _order_words(row: dict[str, Any]) -> str:
    """What node order or queue order leave open for the row, in its verdict cell (the full line is
    in ``orderDependence.line`` and in ``explain pod``)."""
    dep = row.get("orderDependence")
    if not dep:
        return ""
    return f" ({dep['line']})"


def dominant_text(row: dict[str, Any]) -> str:
    reason = row["dominantReason"]
    if not reason:
        return NONE
    n = row["dominantNodes"]
    return f"{reason} ({n} node{'s' if n != 1 else ''})" if n is not None else str(reason)


def nearest_text(row: dict[str, Any]) -> str:
    nodes = row["nearestNodes"]
    if not nodes:
        return NONE
    rejections = row["nearestRejections"]
    what = "; ".join(f"{r['plugin']}: {', '.join(r['reasons'])}" if r["reasons"] else r["plugin"] for r in rejections)
    k = len(rejections)
    text = f"{nodes[0]} — rejected by {k} plugin{'s' if k != 1 else ''}" + (f" ({what})" if what else "")
    if len(nodes) > 1:
        text += f" (+{len(nodes) - 1} more as near)"
    return text


def preemption_text(row: dict[str, Any]) -> str:
    p = row["preemption"]
    wait = row.get("nominatedNodeWait")
    if wait:
        victims = wait["terminatingVictims"]
        then = {True: "; fits there then", False: "; still does not fit there then"}.get(wait.get("fitsOnceGone"), "")
        return f"no: nominated to {wait['name']}, waiting for {len(victims)} victim{'s' if len(victims) != 1 else ''} to terminate ({', '.join(victims)}){then}"
    if p is None:
        return NONE
    if p["wouldPlace"]:
        n = len(p["victims"])
        return f"yes: nominate {p['nominatedNode']}, evict {n} pod{'s' if n != 1 else ''}"
    return "no"


def summary(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "no pending pods"
    by = Counter(r["outcome"] for r in rows)
    words = {"unschedulable": "unschedulable", "scheduled": "fit now", "gated": "gated", "error": "error", "ignored": "other scheduler"}
    parts = [f"{by[k]} {w}" for k, w in words.items() if by[k]]
    return f"{len(rows)} pending pod{'s' if len(rows) != 1 else ''}: " + ", ".join(parts)


def fix_text(row: dict[str, Any]) -> str:
    """A row's best remedy in one cell: the change and where the re-run placed the pod."""
    found = row.get("remedies")
    if found is None:
        return NONE
    search = row.get("remediesSearch") or {}
    helpful = [r for r in found if r["helps"]]
    if not helpful:
        text = "no single change found" + (" (search cut short: its budget ran out)" if search.get("notTried") else "")
    else:
        more = f" (+{len(helpful) - 1} more)" if len(helpful) > 1 else ""
        text = f"{remedy_headline(helpful[0])} → {helpful[0]['verdict']['text']}{more}"
    return text + shared_words(search)


def shared_words(search: dict[str, Any]) -> str:
    """What a pod's remedy search says it shares with identical pods (none: empty)."""
    same = search.get("sameAs")
    if same:
        return f" [same as {same['pod']}: {same['reason']}]"
    n = len(search.get("sharedWith") or [])
    return f" [also answers {n} identical pod{'s' if n != 1 else ''}]" if n else ""


FIX_HEADER = "what would make it fit (verified)"


def headers(rows: list[dict[str, Any]]) -> list[str]:
    """The columns; ``--fix`` (rows carrying ``remedies``) adds the best verified remedy."""
    return [*HEADERS, FIX_HEADER] if any("remedies" in r for r in rows) else list(HEADERS)


def cells(row: dict[str, Any], fix: bool = False) -> list[str]:
    pod = f"{row['pod']} (pod group {row['podGroup']})" if row.get("podGroup") else row["pod"]
    out = [pod, verdict_text(row), dominant_text(row), nearest_text(row), preemption_text(row)]
    if fix:
        out.append(fix_text(row))
    return out


def render_pending_table(rows: list[dict[str, Any]], console: Console) -> None:
    fix = len(headers(rows)) > len(HEADERS)
    if rows:
        columns = [*COLUMNS, Column(FIX_HEADER, min_width=20)] if fix else list(COLUMNS)
        table_rows = []
        for r in rows:
            style = {"unschedulable": "red", "gated": "yellow", "scheduled": "green"}.get(r["outcome"], "")
            first, *rest = cells(r, fix)  # Text, not str: reasons hold [brackets] that rich would read as markup
            table_rows.append([Text(first, style=style), *(Text(c) for c in rest)])
        print_table(console, "Pending pods", columns, table_rows)
    console.print(Text(summary(rows)))


def render_pending_markdown(rows: list[dict[str, Any]]) -> str:
    out = ["### kschedctl: pending pods", ""]
    if rows:
        fix = len(headers(rows)) > len(HEADERS)
        out += [tabulate([cells(r, fix) for r in rows], headers=headers(rows), tablefmt="github"), ""]
    out.append(summary(rows))
    return "\n".join(out) + "\n"
