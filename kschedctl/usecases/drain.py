"""``simulate --drain`` / ``--scale-down``: nodes drained as kubectl drain does, their pods' replacements placed.

The eviction plan and the run are ``whatif.drain``'s; this use case sets the start-up node order
and drains the nodes named or selected together, or removes the nodes a selector picks one at a
time (``scale_down``); with ``runs`` (``--runs``) it repeats the drain under random start-up orders
and reports the range of where the replacements land (``whatif.runs``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kschedctl.usecases.request import ClusterRequest, Hooks

if TYPE_CHECKING:
    from kschedctl.config.types import SchedulerConfig
    from kschedctl.kube.selectors import Selector
    from kschedctl.snapshot.cluster import Cluster
    from kschedctl.whatif.drain import DrainFlags, DrainResult, ScaleDownResult
    from kschedctl.whatif.placements import RunOptions, SimulationResult
    from kschedctl.whatif.runs import RunsReport


@dataclass(kw_only=True)
class DrainRequest(ClusterRequest):
    """``simulate --drain``: the nodes named (``nodes``) or selected (``selector``) drained together; or,
    with ``scale_down``, the nodes it selects removed one at a time (at most ``count``; 0: all)."""

    config: SchedulerConfig
    nodes: list[str] = field(default_factory=list)
    selector: Selector | None = None
    scale_down: Selector | None = None
    count: int = 0
    flags: DrainFlags | None = None
    options: RunOptions | None = None
    #: How many runs of the drain, each with random start-up orders (``--runs``; 1: one run).
    runs: int = 1
    group_by: str | None = None


def drain(request: DrainRequest, hooks: Hooks | None = None) -> DrainResult | ScaleDownResult | RunsReport:
    """The drain (eviction plan, then the replacements through the loop) or the scale-down search; with
    ``runs`` > 1, the range of outcomes of that many drains."""
    from kschedctl.whatif.drain import DrainFlags, drained_nodes, run_drain, scale_down

    hooks = hooks or Hooks()
    if request.runs > 1:
        return _runs(request, hooks)
    request.noted_order(hooks)
    flags = request.flags or DrainFlags()
    hooks.progress.phase("building NodeInfos")
    progress = hooks.progress.counter("placing replacements")
    if request.scale_down is not None:
        return scale_down(request.cluster, request.config, request.scale_down, flags, request.registry,
                          count=request.count, options=request.options, progress=progress)
    nodes = drained_nodes(request.cluster, request.nodes, request.selector)
    return run_drain(request.cluster, request.config, nodes, flags, request.registry, options=request.options,
                     progress=progress)


def _runs(request: DrainRequest, hooks: Hooks) -> RunsReport:
    """``--drain ... --runs N``: the drain N times, each with random node and start-up queue orders, and the
    range of where the replacements land; a drain that evictions refuse or block fails in every run."""
    from kschedctl.whatif.drain import DrainFlags, drained_nodes, run_drain
    from kschedctl.whatif.placements import SimulationResult
    from kschedctl.whatif.runs import DrainTally, run_many

    nodes = drained_nodes(request.cluster, request.nodes, request.selector)
    stuck: list[str] = []
    succeeded: list[bool] = []
    tally = DrainTally(list(nodes))

    def one(cluster: Cluster) -> SimulationResult:
        result = run_drain(cluster, request.config, nodes, request.flags or DrainFlags(), request.registry, options=request.options)
        succeeded.append(result.succeeded)
        tally.add(result.succeeded, len(result.landings), len(result.landings) - len(result.not_placed),
                  (e.pod for e in result.lost), result.verdict())
        if (result.refused or result.blocked) and not stuck:
            stuck.append(f"{len(result.refused) + len(result.blocked)} pod(s) cannot be evicted, in every run (see --drain without --runs)")
        return result.simulation or SimulationResult("pods", len(cluster.nodes))

    seed = request.node_order.seed if request.node_order is not None else None
    report = run_many(request.cluster, request.runs, one, seed=seed, group_by=request.group_by,
                      progress=hooks.progress.counter("simulating runs"))
    report.failures = stuck
    report.drain = tally.to_dict()
    for outcome, ok in zip(report.runs, succeeded, strict=True):
        outcome.all_placed = ok  # a drain succeeds when its replacements land; pending pods are not its own
    return report
