"""``explain pending``: every pending pod of a namespace (or all) matching a selector, one row each.

The rows are ``explain.pending``'s (its cycles, run in worker processes when asked); this use case
chooses the pods, says when the namespace has none but others do, with ``--fix`` adds each
pod's best single change (``whatif.causes``), and with ``--scale-up`` each node group's answer for
the unschedulable pods (``whatif.scaleup_groups``). The result groups its rows by cause for ``render/``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kschedctl.usecases.request import ClusterRequest, Hooks
from kschedctl.whatif import DEFAULT_MAX_NEW_NODES

if TYPE_CHECKING:
    from kschedctl.config.types import SchedulerConfig
    from kschedctl.kube.selectors import Selector
    from kschedctl.snapshot.model import Pod


@dataclass(kw_only=True)
class PendingRequest(ClusterRequest):
    """``explain pending``: every pending pod of a namespace (None: all) matching a selector."""

    config: SchedulerConfig
    namespace: str | None = None
    selector: Selector | None = None
    #: Also search each pod's best single change (``--fix``).
    fix: bool = False
    #: Worker processes (None: the usable CPUs; 1: one after another here).
    jobs: int | None = None
    #: Also ask each node group whether one new node would take each unschedulable pod (``--scale-up``).
    scale_up: bool = False
    #: With ``scale_up``: the most new nodes of one group the least-count search tries.
    max_new_nodes: int = DEFAULT_MAX_NEW_NODES


@dataclass
class PendingResult:
    """One row per pending pod (``PendingRow.to_dict``) and, with ``fix``, the remedy search's totals."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    search: dict[str, Any] | None = None
    #: With ``--scale-up``: ``ScaleUpReport.to_dict()`` (each row also carries its ``scaleUp`` line).
    scale_up: dict[str, Any] | None = None

    def groups(self) -> list[dict[str, Any]]:
        """The rows grouped by the cause that blocks them."""
        from kschedctl.whatif.causes import group_by_cause

        return [g.to_dict() for g in group_by_cause(self.rows)]


def explain_pending(request: PendingRequest, hooks: Hooks | None = None) -> PendingResult:
    """The rows of every chosen pending pod (a note when the namespace has none but others do)."""
    from kschedctl.explain.pending import pending_rows
    from kschedctl.whatif.causes import attach_remedies

    hooks = hooks or Hooks()
    request.noted_order(hooks)
    ns, sel, cluster = request.namespace, request.selector, request.cluster
    pods = [
        p
        for p in cluster.pending_pods()
        if (ns is None or p.namespace == ns) and (sel is None or sel.matches(p.labels))
    ]
    if not pods and ns is not None and sel is None:
        from kschedctl.snapshot.source import pending_elsewhere

        elsewhere = pending_elsewhere(cluster, ns)
        if elsewhere:
            hooks.note(elsewhere)
    progress = hooks.progress.counter("explaining pending pods")
    rows = pending_rows(cluster, pods, request.config, request.registry, progress=progress, jobs=request.jobs)
    result = PendingResult([r.to_dict() for r in rows])
    if request.fix:
        result.search = attach_remedies(result.rows, cluster, pods, request.config, request.registry, jobs=request.jobs,
                                        progress=hooks.progress.counter("verifying remedies"))
    if request.scale_up:
        result.scale_up = _scale_up(request, pods, result.rows, hooks)
    return result


#: The line of a row ``--scale-up`` does not analyse, by its outcome.
NOT_ANALYSED = {
    "gated": "gated at PreEnqueue: no scheduling attempt, so no scale-up either until its gates are removed",
    "ignored": "not this scheduler's pod: not analysed",
    "error": "its scheduling cycle ended in an error: not analysed",
}


def _scale_up(request: PendingRequest, pods: list[Pod], rows: list[dict[str, Any]], hooks: Hooks) -> dict[str, Any]:
    """Each node group's answer for the rows' pods that are unschedulable, or that fit alone but not after the
    pods queued before them; every row gets its ``scaleUp`` line."""
    from kschedctl.whatif.scaleup_groups import scale_up_report

    by_key = {p.key: p for p in pods}
    asked = [r for r in rows if r["outcome"] in ("unschedulable", "scheduled") and r["pod"] in by_key]
    asked_keys = {r["pod"] for r in asked}
    skipped = [(r["pod"], NOT_ANALYSED.get(r["outcome"], f"{r['outcome']}: not analysed")) for r in rows
               if r["pod"] not in asked_keys]
    report = scale_up_report(request.cluster, request.config, request.registry, [by_key[r["pod"]] for r in asked],
                             fits_now=[r["pod"] for r in asked if r["outcome"] == "scheduled"], skipped=skipped,
                             max_new_nodes=request.max_new_nodes, progress=hooks.progress.counter("asking node groups"))
    for r in rows:
        line = report.pod(r["pod"])
        if line is not None:
            r["scaleUp"] = line.to_dict()
    return report.to_dict()
