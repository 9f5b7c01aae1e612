"""``explain pending`` by cause: pending pods grouped by what blocks them, with the fix they share.

A cluster with two hundred pending pods usually has a handful of reasons for it. Rows of
``explain pending`` (``PendingRow.to_dict()``) are grouped by their outcome and dominant reason
(the reason that rejects the pod on the most nodes); each group says how many pods it holds,
which, how many of them preemption would place, and, when ``--fix`` searched for remedies, the
remedy that helps every pod of the group (the same change: same kind and same patch), if one does.
Remedies come from ``whatif.remedies`` and are attached to the rows here, so the per-pod rows
(``--by pod``) carry them too.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kschedctl.config.types import SchedulerConfig
from kschedctl.explain.pending import MIN_PARALLEL_WORK, Snapshots
from kschedctl.framework.registry import Registry
from kschedctl.parallel import run_jobs, worker_count
from kschedctl.snapshot.cluster import Cluster
from kschedctl.snapshot.model import Pod
from kschedctl.whatif.remedies import find_remedies
from kschedctl.whatif.remedybudget import Budget
from kschedctl.whatif.twins import for_twin, twins


@dataclass
class CauseGroup:
    cause: str
    outcome: str
    pods: list[str] = field(default_factory=list)
    #: Pods of the group the preemption dry run would place.
    preemption: int = 0
    #: The remedy (as in ``Remedy.to_dict()``) that helps every pod of the group, if any.
    shared_remedy: dict[str, Any] | None = None
    rows: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "cause": self.cause,
            "outcome": self.outcome,
            "count": len(self.pods),
            "pods": list(self.pods),
            "preemptionWouldPlace": self.preemption,
            "sharedRemedy": self.shared_remedy,
            "rows": list(self.rows),
        }


def cause_of(row: dict[str, Any]) -> str:
    """The cause a pending row is grouped under."""
    outcome = row["outcome"]
    if outcome == "scheduled":
        return "fits now"
    if outcome in ("error", "ignored"):
        return f"{outcome}: {row.get('message') or ''}".rstrip(": ")
    return str(row.get("dominantReason") or outcome)


def group_by_cause(rows: list[dict[str, Any]]) -> list[CauseGroup]:
    """Groups in order of size (largest first), then cause; pods keep the rows' order."""
    groups: dict[tuple[str, str], CauseGroup] = {}
    for row in rows:
        group = row.get("podGroup")  # one pod-group cycle decided them all: kept together
        key = ("pod group", group) if group else (row["outcome"], cause_of(row))
        g = groups.get(key)
        if g is None:
            g = groups[key] = CauseGroup(f"pod group {group}: {cause_of(row)}", row["outcome"]) if group else CauseGroup(key[1], key[0])
        g.pods.append(row["pod"])
        g.rows.append(row)
        if (row.get("preemption") or {}).get("wouldPlace"):
            g.preemption += 1
    for (kind, group), g in groups.items():
        if kind == "pod group":
            g.cause = f"pod group {group}: {cause_of(_group_verdict_row(g.rows))}"
    out = sorted(groups.values(), key=lambda g: (-len(g.pods), g.outcome != "unschedulable", g.cause))
    for g in out:
        g.shared_remedy = shared_remedy(g.rows)
    return out


def _group_verdict_row(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The row that says why a pod group's cycle failed: a pod that fit but waited at Permit (the gang had
    too few pods it could schedule) or for a preemption, rather than a pod of it that did not fit."""
    held = ("waitedAtPermit", "waitingForPreemption")
    return next((r for r in rows if r.get("podGroupVerdict") in held), rows[0])


def _same_change(r: dict[str, Any]) -> str:
    return json.dumps([r["kind"], r["change"], r["patch"]], sort_keys=True)


def shared_remedy(rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The best-ranked remedy of the first pod that also helps every other pod of the group."""
    found = [row.get("remedies") for row in rows]
    if not found or any(f is None for f in found):
        return None
    helping = [{_same_change(r): r for r in f if r["helps"]} for f in found if f is not None]
    for key, remedy in helping[0].items():
        if all(key in h for h in helping[1:]):
            return remedy
    return None


#: Cycles one pod's remedy search runs, about (for deciding whether worker processes pay).
CYCLES_PER_SEARCH = 20


def attach_remedies(
    rows: list[dict[str, Any]],
    cluster: Cluster,
    pods: list[Pod],
    config: SchedulerConfig,
    registry: Registry | None = None,
    budget: Budget | None = None,
    *,
    jobs: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """Search remedies for every unschedulable row's pod (``progress`` hears searches done / total): ``row["remedies"]`` (the list, as ``explain pod
    --fix`` gives it) and ``row["remediesSearch"]`` (budget, use, notes); returns the totals. The pods'
    searches are independent: on ``jobs`` worker processes (None: the usable CPUs) when there is enough
    work, all on one snapshot of the cluster (built once, by the first search, before the workers fork).
    Identical pods (``whatif.twins``: same controller, same spec) share one search, the first one's: the
    others' ``remediesSearch`` says so (``sameAs``), the first one's names them (``sharedWith``), and the
    totals count the search once. Each search gets its share of the budget's total seconds
    (``Budget.share``), so that many pending pods cost a bounded time."""
    by_key = {p.key: p for p in pods}
    budget = budget or Budget()
    started = time.monotonic()
    todo = [row for row in rows if row["pod"] in by_key and row["outcome"] == "unschedulable"]
    same_as = twins([by_key[row["pod"]] for row in todo])
    searched = [row for row in todo if row["pod"] not in same_as]
    if len(searched) * max(1, len(cluster.nodes)) * CYCLES_PER_SEARCH < MIN_PARALLEL_WORK:
        jobs = 1
    snapshots = Snapshots(cluster, config.features)
    each = budget.share(len(searched), worker_count(jobs, len(searched)))

    def search(row: dict[str, Any]) -> dict[str, Any]:
        return find_remedies(cluster, by_key[row["pod"]], config, registry, budget=each, snapshots=snapshots).to_dict()

    results = dict(zip((row["pod"] for row in searched), run_jobs(search, searched, jobs=jobs, progress=progress), strict=True))
    _answer(todo, results, same_as)
    reruns = sum(found["used"]["reruns"] for found in results.values())
    probes = sum(found["used"]["probes"] for found in results.values())
    return {"budget": each.to_dict(), "budgetText": each.text(), "totalSeconds": each.total(), "reruns": reruns,
            "probes": probes, "seconds": round(time.monotonic() - started, 3), "searches": len(searched),
            "sharedAnswers": len(todo) - len(searched)}


def _answer(todo: list[dict[str, Any]], results: dict[str, dict[str, Any]], same_as: dict[str, str]) -> None:
    """Each row's ``remedies`` and ``remediesSearch``: its own search's, or its twin's (``same_as``)."""
    for row in todo:
        source = same_as.get(row["pod"])
        if source is None:
            found = dict(results[row["pod"]])
            shared = [pod for pod, first in same_as.items() if first == row["pod"]]
            if shared:
                found["sharedWith"] = shared
        else:
            found = for_twin(results[source], row["pod"], source)
        row["remedies"] = found.pop("remedies")
        row["remediesSearch"] = found
