"""``simulate``: the pods of files through the scheduling loop, one after another, as kube-scheduler does.

The loop is ``whatif.simulate``'s; this use case reads the files against the cluster (workloads
expanded lazily into the pods their controllers would create), sets the start-up node order, and
runs the loop once, or copies of one template until one does not fit (``--max``), or, with
``runs`` (``--runs``), the run again and again under random start-up orders (``whatif.runs``), or,
with ``add_nodes`` (``--add-nodes T=N|auto``), the run on the cluster with new nodes like T added,
probing counts for the least that places every pod (``whatif.scaleup``).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from kschedctl.errors import UsageError
from kschedctl.usecases.request import ClusterRequest, Hooks
from kschedctl.whatif import DEFAULT_MAX_NEW_NODES

if TYPE_CHECKING:
    from kschedctl.config.types import SchedulerConfig
    from kschedctl.snapshot.cluster import Cluster
    from kschedctl.whatif.placements import RunOptions, SimulationResult
    from kschedctl.whatif.runs import RunsReport
    from kschedctl.whatif.scaleup import AddNodes
    from kschedctl.whatif.workloads import Manifests


@dataclass(kw_only=True)
class SimulateRequest(ClusterRequest):
    """``simulate``: the pods of files through the scheduling loop, or (``max_copies``) copies of one
    template until one does not fit."""

    config: SchedulerConfig
    filenames: list[str]
    #: Pods per workload instead of its replicas (not with ``max_copies``).
    replicas: int | None = None
    max_copies: bool = False
    #: With ``max_copies``: stop after this many pods (0: no limit).
    limit: int = 0
    options: RunOptions | None = None
    #: The caller's notes, shown after those of the files.
    notes: list[str] = field(default_factory=list)
    #: How many runs, each with random start-up orders (``--runs``; 1: one run in the requested order).
    runs: int = 1
    #: With ``runs``: the node label whose values are the node groups counted (None: a node-pool label).
    group_by: str | None = None
    #: ``--add-nodes``: new nodes like existing ones, a count each or ``auto`` (the least placing every pod).
    add_nodes: list[AddNodes] = field(default_factory=list)
    #: With an ``auto`` count: the largest count tried (``--max-new-nodes``).
    max_new_nodes: int = DEFAULT_MAX_NEW_NODES


def simulate(request: SimulateRequest, hooks: Hooks | None = None) -> SimulationResult | RunsReport:
    """One run of the loop (or the ``--max`` search) over the files' pods; with ``runs`` > 1, the range of
    outcomes of that many runs; with ``add_nodes``, the run with the new nodes (its ``add_nodes`` says how
    many, and what the search for the least count found)."""
    hooks = hooks or Hooks()
    if request.runs > 1:
        return _runs(request, hooks)
    order, order_notes = request.startup_order()
    manifests = _manifests(request)
    hooks.progress.phase("building NodeInfos")
    if request.add_nodes:
        result = _scale_up(request, manifests, hooks)
    else:
        result = _max(request, manifests, hooks) if request.max_copies else _run(request, manifests, hooks)
    # the manifests' notes include what admitting each workload's first pod said (pods are made lazily;
    # each probe of --add-nodes made them again)
    file_notes = list(dict.fromkeys(manifests.notes)) if request.add_nodes else manifests.notes
    result.notes[:0] = file_notes + request.notes + order_notes
    result.startup = order
    return result


def _manifests(request: SimulateRequest) -> Manifests:
    """The pod files read; with ``--add-nodes`` they may be none (the snapshot's pending pods are then the pods
    placed)."""
    from kschedctl.whatif.workloads import Manifests

    if request.add_nodes and not request.filenames:
        return Manifests()
    return request.read_manifests(request.filenames, request.config.features)


def _runs(request: SimulateRequest, hooks: Hooks) -> RunsReport:
    """``--runs N``: the run N times, each with random node and start-up queue orders drawn from the
    request's seed, and the range of their outcomes (``whatif.runs``)."""
    from kschedctl.whatif.runs import run_many

    manifests = request.read_manifests(request.filenames, request.config.features)
    quiet = Hooks(note=hooks.note)

    def one(cluster: Cluster) -> SimulationResult:
        run = replace(request, cluster=cluster)
        return _max(run, manifests, quiet) if request.max_copies else _run(run, manifests, quiet)

    seed = request.node_order.seed if request.node_order is not None else None
    report = run_many(request.cluster, request.runs, one, seed=seed, group_by=request.group_by,
                      progress=hooks.progress.counter("simulating runs"))
    report.notes[:0] = list(dict.fromkeys(manifests.notes)) + request.notes
    return report


def _max(request: SimulateRequest, manifests: Manifests, hooks: Hooks) -> SimulationResult:
    """``--max``: copies of the one pod or workload template until one does not fit (or ``limit``)."""
    from kschedctl.whatif.simulate import simulate_max
    from kschedctl.whatif.workloads import PodFactory

    if len(manifests.workloads) != 1:
        raise UsageError(f"--max needs exactly one pod or workload template, the files hold {len(manifests.workloads)}")
    w = manifests.workloads[0]
    w.as_template = True
    factory = PodFactory(manifests, request.cluster, private=True)
    return simulate_max(
        factory.cluster,
        request.config,
        factory.pods(w, None),
        request.registry,
        workload=w.display,
        limit=request.limit,
        batching=request.options.batching if request.options is not None else True,
        pending=request.options.pending if request.options is not None else True,
        owns_cluster=True,
        progress=hooks.progress.counter("placing copies"),
    )


def _scale_up(request: SimulateRequest, manifests: Manifests, hooks: Hooks) -> SimulationResult:
    """``--add-nodes``: the run on the cluster with the new nodes, each count tried a run of its own."""
    from kschedctl.whatif.scaleup import scale_up

    if not request.filenames and request.options is not None and not request.options.pending:
        raise UsageError("--add-nodes without -f places the snapshot's pending pods: it does not go with --no-pending")
    quiet = Hooks(note=hooks.note)
    counter = hooks.progress.counter("probing counts of new nodes")
    probes = 0

    def one(cluster: Cluster) -> SimulationResult:
        nonlocal probes
        probes += 1
        counter(probes, None)
        return _run(replace(request, cluster=cluster), manifests, quiet, allow_none=True)

    result = scale_up(request.cluster, request.add_nodes, one, max_new_nodes=request.max_new_nodes, source=request.source)
    if not request.cluster.startup.by_name:
        result.notes.append(
            "the new nodes are not in the --node-order: they join the node tree after the nodes it orders (by name, "
            "with any other node it does not name), as nodes added after the scheduler started"
        )
    return result


def _run(request: SimulateRequest, manifests: Manifests, hooks: Hooks, *, allow_none: bool = False) -> SimulationResult:
    """The pods of the files (workloads expanded as their controllers would, lazily) through the loop."""
    from kschedctl.whatif.simulate import simulate_streams, workload_streams
    from kschedctl.whatif.workloads import PodFactory

    factory = PodFactory(manifests, request.cluster, private=True)
    streams, excluded = workload_streams(manifests, factory, request.replicas)
    if not allow_none and not any(s.count for s in streams):
        raise UsageError("the workloads ask for no pods (replicas 0)")
    return simulate_streams(
        factory.cluster,
        request.config,
        streams,
        request.registry,
        options=request.options,
        exclude_pod_uids=excluded,
        owns_cluster=True,
        progress=hooks.progress.counter("scheduling pods"),
    )
