"""Wording shared by the table and markdown renderers, so both say the same thing."""

from __future__ import annotations

from typing import Any

from kschedctl.explain.uncertainty import names_capped

PASS = "✓"
FAIL = "✗"
NOT_RUN = "·"
GI = 1024**3


def fmt_cpu(milli: int | float) -> str:
    """CPU in cores, the unit of every human-readable output (2.15, 0.125, 4); JSON keeps millicores."""
    return f"{milli / 1000:.3f}".rstrip("0").rstrip(".") or "0"


def fmt_mem(b: int | float) -> str:
    """Memory in GiB with one decimal (30.0Gi)."""
    return f"{b / GI:.1f}Gi"


def gates_shown(t: dict[str, Any]) -> str:
    """The feature gates a run changed from its version's defaults (``featureGates``), for a header."""
    gates = t.get("featureGates") or {}
    if not gates:
        return ""
    return "   feature gates: " + ",".join(f"{n}={str(v).lower()}" for n, v in gates.items())


def only_feasible_node(t: dict[str, Any]) -> bool:
    """kube-scheduler found exactly one feasible node, so it ran neither PreScore nor Score."""
    return len(t.get("feasibleNodes") or []) == 1 and not t.get("score") and not t.get("totals")


def selected_words(t: dict[str, Any]) -> str:
    """Why the selected node won: its score among the candidates, or that nothing was scored."""
    sel = t.get("selected") or {}
    if only_feasible_node(t):
        return "the only feasible node: nothing is scored"
    return f"max score {sel.get('maxScore')}; candidates: {', '.join(sel.get('candidates', []))}"


def headline(t: dict[str, Any]) -> str:
    outcome = t.get("outcome")
    pod = t["pod"]
    if outcome == "gated":
        return f"{pod}: gated at PreEnqueue, never enters a scheduling cycle"
    if outcome == "error":
        return f"{pod}: scheduling cycle error: {t.get('error')}"
    sel = t.get("selected")
    if outcome == "scheduled" and sel:
        cands = sel["candidates"]
        if len(cands) > 1:
            return f"{pod}: schedulable; {len(cands)} nodes tie at {sel['maxScore']} ({names_capped(cands)})"
        # an early stop: the dry run's node is one of several the real search could end on; or the order its
        # pod-group cycle took pods of its group in
        possible = t.get("possibleNodes") or []
        grouped = "podGroupOrder" in ((t.get("orderDependence") or {}).get("reasons") or [])
        decides = "the order inside its pod group decides" if grouped else "node order decides"
        more = f"; {len(possible)} nodes could be chosen ({decides})" if len(possible) > 1 else ""
        if only_feasible_node(t) and more:
            return f"{pod}: schedulable on {cands[0]} (the first feasible node found: nothing is scored){more}"
        if only_feasible_node(t):
            return f"{pod}: schedulable on {cands[0]} (the only feasible node: nothing is scored)"
        return f"{pod}: schedulable on {cands[0]} (score {sel['maxScore']}){more}"
    return f"{pod}: unschedulable"


def filter_columns(t: dict[str, Any]) -> list[str]:
    """Filter plugins that ran (those whose PreFilter returned Skip are listed separately)."""
    d = t["details"]
    skipped = set(d.get("skippedFilterPlugins", []))
    return [p for p in d.get("filterPlugins", []) if p not in skipped]


def skipped_filter_line(t: dict[str, Any]) -> str | None:
    skipped = [p for p in t["details"].get("filterPlugins", []) if p in set(t["details"].get("skippedFilterPlugins", []))]
    if not skipped:
        return None
    return "Filter not run (their PreFilter returned Skip): " + ", ".join(skipped)


def filter_cells(t: dict[str, Any], node: str) -> list[str]:
    """One row of the node x filter-plugin matrix."""
    plugins = filter_columns(t)
    verdict = t["filter"][node]
    failed = verdict.get("plugin")
    cells: list[str] = []
    seen_fail = False
    for p in plugins:
        if seen_fail:
            cells.append(NOT_RUN)
        elif p == failed:
            cells.append(f"{FAIL} " + "; ".join(verdict.get("reasons", [])))
            seen_fail = True
        else:
            cells.append(PASS)
    return cells


def score_cell(s: dict[str, Any], node: str) -> str:
    raw = s["raw"].get(node)
    norm = s["normalized"].get(node)
    w = s["weight"]
    weighted = s["weighted"].get(node)
    if raw is None:
        return ""
    if norm is None:  # the cycle failed before NormalizeScore
        return f"{raw}"
    if weighted is None:  # the cycle failed before this score was weighted
        shown = f"{raw}→{norm}" if raw != norm else f"{raw}"
        return f"{shown} {FAIL}" if not 0 <= norm <= 100 else shown  # ✗: the out-of-range score that ended it
    if raw == norm:
        return f"{raw}×{w}={weighted}"
    return f"{raw}→{norm}×{w}={weighted}"


def ranked_nodes(t: dict[str, Any]) -> list[str]:
    """Scored nodes, best total first; when scoring failed part way (no totals), the nodes that got a
    score, in the order they were scored."""
    totals: dict[str, int] = t.get("totals") or {}
    if totals:
        return sorted(totals, key=lambda n: (-totals[n], n))
    scored: list[str] = []
    for s in (t.get("score") or {}).values():
        scored.extend(n for n in s["raw"] if n not in scored)
    return scored


def status_line(records: list[dict[str, Any]]) -> str:
    return ", ".join(f"{r['plugin']}={r['code']}" + (f" ({'; '.join(r['reasons'])})" if r.get("reasons") else "") for r in records)


def extender_rows(t: dict[str, Any]) -> list[list[str]]:
    """One row per extender call: extender, verb, outcome, what it answered (or the error)."""
    rows: list[list[str]] = []
    for c in t.get("extenders") or []:
        verb = c["verb"]
        if c.get("error"):
            result = c["error"]
        elif verb == "filter" and "passed" in c:
            parts = [f"passed: {', '.join(c['passed']) or '(none)'}"]
            for key, label in (("failedNodes", "failed"), ("failedAndUnresolvableNodes", "unresolvable")):
                for node, msg in (c.get(key) or {}).items():
                    parts.append(f"{label} {node}: {msg}")
            result = "; ".join(parts)
        elif verb == "prioritize" and "scores" in c:
            w = c.get("weight", 0)
            result = ", ".join(
                f"{n}={s}×{w}×10={(c.get('weighted') or {}).get(n, s * w * 10)}" for n, s in c["scores"].items()
            )
        elif verb == "preempt" and "victims" in c:
            result = "; ".join(f"{n}: {', '.join(v)}" for n, v in c["victims"].items()) or "(no candidates)"
        elif verb == "bind" and "request" in c:
            result = "would send " + ", ".join(f"{k}={v}" for k, v in c["request"].items())
        else:
            result = ""
        path_verb = c["url"].rsplit("/", 1)[-1]
        rows.append([c["extender"], verb if path_verb == verb else f"{verb} (/{path_verb})", c["outcome"], result])
    return rows


def extender_score_columns(t: dict[str, Any]) -> list[tuple[str, dict[str, str]]]:
    """Score-table columns for the extenders that prioritized: (title, node -> cell)."""
    cols: list[tuple[str, dict[str, str]]] = []
    for c in t.get("extenders") or []:
        if c["verb"] != "prioritize" or c["outcome"] != "called" or "weighted" not in c:
            continue
        w = c.get("weight", 0)
        cells = {n: f"{s}×{w}×10={c['weighted'].get(n, 0)}" for n, s in c["scores"].items()}
        cols.append((f"extender {c['extender']}", cells))
    return cols


def post_bind_line(t: dict[str, Any]) -> str | None:
    recs = t.get("postBind") or []
    if not recs:
        return None
    parts = []
    for r in recs:
        what = r.get("note") or (f"error: {r['error']}" if r.get("error") else "ran")
        parts.append(f"{r['plugin']}: {what}")
    return "PostBind: " + "; ".join(parts)


def compact(obj: Any, limit: int = 400) -> str:
    """A plugin's explanation as one readable line (``-o json`` keeps the full structure)."""

    def walk(o: Any) -> str:
        if isinstance(o, dict):
            parts = [f"{k}={walk(v)}" for k, v in o.items() if v not in (None, [], {}, "")]
            return "{" + ", ".join(parts) + "}" if len(parts) > 1 else (parts[0] if parts else "{}")
        if isinstance(o, list):
            return "[" + "; ".join(walk(v) for v in o) + "]"
        if isinstance(o, bool):
            return "true" if o else "false"
        if isinstance(o, float):
            return f"{o:.3g}"
        return str(o)

    text = walk(obj)
    return text if len(text) <= limit else text[: limit - 1] + "…"


# --------------------------------------------------------------------------- pod groups (v1.36)


def placement_generate_rows(t: dict[str, Any]) -> list[list[str]]:
    """plugin, code, parent placement, the placements generated (and reasons), per PlacementGenerate run."""
    return [
        [r["plugin"], r["code"], r["parent"], ", ".join(r["placements"]) or "(none)", "; ".join(r.get("reasons", []))]
        for r in t.get("placementGenerate") or []
    ]


def placement_score_rows(t: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """The placement × plugin matrix of PlacementScore, like Score's node × plugin one (best total first)."""
    scores: dict[str, Any] = t.get("placementScore") or {}
    placements = list(dict.fromkeys(p for s in scores.values() for p in s["raw"]))
    totals = {p: sum(s["weighted"].get(p, 0) for s in scores.values()) for p in placements}
    headers = ["placement", *[f"{name} (weight {s['weight']})" for name, s in scores.items()], "total"]
    ranked = sorted(placements, key=lambda p: -totals[p])
    return headers, [[p, *[score_cell(s, p) for s in scores.values()], str(totals[p])] for p in ranked]


def pod_group_line(t: dict[str, Any]) -> str | None:
    """One line on the pod group the cycle scheduled together (None: no pod-group cycle)."""
    g = (t.get("details") or {}).get("podGroup")
    if not g:
        return None
    gang = f"gang minCount {g['minCount']}" if g.get("minCount") is not None else "basic policy"
    placed = ", ".join(f"{p} → {n}" for p, n in g["assignments"].items()) or "none placed"
    status = g["status"] + (f": {g['message']}" if g.get("message") else "")
    return f"Pod group {g['name']} ({gang}; {len(g['pods'])} pod(s) scheduled together): {placed}; group {status}"


def nominated_wait_line(t: dict[str, Any]) -> str | None:
    """A nominated pod's node and the preemption victims still terminating there, in one line."""
    wait = t.get("nominatedNodeWait")
    if not wait:
        return None
    victims = wait["terminatingVictims"]
    text = (
        f"Nominated node {wait['name']} (status.nominatedNodeName): {len(victims)} preemption "
        f"victim{'s' if len(victims) != 1 else ''} still terminating there: {', '.join(victims)}"
    )
    if wait.get("preemptionWaits"):
        text += "; kube-scheduler does not preempt again until they are gone, and tries this node first"
    if "fitsOnceGone" in wait:
        text += "; once they are gone the pod " + ("fits there" if wait["fitsOnceGone"] else "still does not fit there")
    return text + "."


def pod_scheduled_line(t: dict[str, Any]) -> str | None:
    """The PodScheduled condition a pod has although no cycle wrote it (a gated pod's, from the API server)."""
    c = t.get("podScheduled")
    if not c:
        return None
    return f"PodScheduled condition: status {c['status']}, reason {c['reason']}: {c['message']}"


def order_line(t: dict[str, Any]) -> str | None:
    """What node order, chance or queue order leave open, and what is certain (one line)."""
    dep = t.get("orderDependence")
    return str(dep["line"]) if dep else None
