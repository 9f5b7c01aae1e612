"""The runs behind ``explain pod``, ``explain pending``, ``diff-profiles`` and ``simulate``: one request, one call.

Each command of the CLI parses its options, reads the cluster and the configuration, and hands
them here as a named request (an ``explain.request.ClusterRequest``); the function picks the pods,
runs the analysis (the cycle of ``explain/``, the comparison of ``whatif.diff``, the loop of
``whatif.simulate``), adds what the command asked for on top (margins, remedies, cause groups)
and returns plain results for ``render/`` to show. The explain commands live here rather than in
``explain/`` because what they add on top of the cycle (remedies, causes) is what-if analysis.

``drain_nodes`` drains nodes (``simulate --drain``) or searches how many of a group can go
(``simulate --scale-down``): ``whatif.drain``'s plan and run. ``simulate_runs`` and ``drain_runs``
repeat a simulation or a drain under random start-up orders (``--runs``, ``whatif.runs``); every
entry point first sets the request's ``--node-order`` on its cluster (``startup_order``).

``diff_sides`` compares any two ``Side`` values: two configurations or two profiles today, and
equally two versions of the scheduler (sides whose configurations carry different
``SchedulerConfig.features``).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from kschedctl.errors import InputError, UsageError
from kschedctl.explain.request import ClusterRequest, Hooks

if TYPE_CHECKING:
    from kschedctl.config.types import SchedulerConfig
    from kschedctl.explain.trace import Trace
    from kschedctl.kube.selectors import Selector
    from kschedctl.snapshot.cluster import Cluster
    from kschedctl.snapshot.model import Pod
    from kschedctl.snapshot.nodeorder import StartupOrder
    from kschedctl.whatif.diff import DiffReport, Side
    from kschedctl.whatif.drain import DrainFlags, DrainResult, ScaleDownResult
    from kschedctl.whatif.runs import RunsReport
    from kschedctl.whatif.simulate import RunOptions, SimulationResult
    from kschedctl.whatif.workloads import Manifests


def read_manifests(paths: list[str], cluster: Cluster) -> Manifests:
    """The workloads and other objects of pod files (``-f``), an error naming the files when one is bad."""
    from kschedctl.snapshot.loader import iter_documents
    from kschedctl.whatif.workloads import parse_manifests

    try:
        return parse_manifests(iter_documents(paths), cluster)
    except InputError as e:
        if e.source is None:
            raise e.located(source=", ".join("<stdin>" if p == "-" else p for p in paths)) from None
        raise


def named_pod(request: ClusterRequest, namespace: str, name: str) -> Pod:
    """The pod ``namespace/name`` of the request's cluster, or an error saying where else it is."""
    from kschedctl.snapshot.source import pod_not_found

    found = request.cluster.pod(namespace, name)
    if found is None:
        raise pod_not_found(request.cluster, namespace, name, request.source)
    return found


def startup_order(request: ClusterRequest) -> tuple[StartupOrder, list[str]]:
    """The request's ``--node-order`` resolved for its cluster and set on it, so every snapshot the run
    builds follows it; with the notes that say which order it is."""
    from kschedctl.snapshot.nodeorder import NodeOrderSpec

    order, notes = (request.node_order or NodeOrderSpec()).resolve(request.cluster.nodes)
    request.cluster.startup = order
    return order, notes


def _noted_order(request: ClusterRequest, hooks: Hooks) -> StartupOrder:
    """``startup_order``, its notes to ``hooks``."""
    order, notes = startup_order(request)
    for n in notes:
        hooks.note(n)
    return order


# --------------------------------------------------------------------------- explain pod


@dataclass(kw_only=True)
class ExplainPodRequest(ClusterRequest):
    """``explain pod``: one pod by name, or every pod of a file, each through one cycle."""

    config: SchedulerConfig
    #: A pod of the cluster (in ``namespace``), or else the pods of ``filename`` (- for stdin).
    name: str | None = None
    namespace: str = "default"
    filename: str | None = None
    #: Record every plugin's and node's details (wide, JSON and YAML output).
    details: bool = False
    #: Also search single changes that make the pod fit (``--fix``).
    fix: bool = False
    #: The node the selected one is compared with (``--compare``; None: the runner-up).
    compare: str | None = None


@dataclass
class ExplainResult:
    """Each explained pod's trace, and its document (the trace with margin and remedies added)."""

    traces: list[Trace] = field(default_factory=list)
    documents: list[dict[str, Any]] = field(default_factory=list)

    @property
    def schedulable(self) -> bool:
        return all(t.schedulable for t in self.traces)


def pods_to_explain(request: ExplainPodRequest, hooks: Hooks) -> list[Pod]:
    """The named pod, or the pods of the file admitted to the cluster (admission's notes to ``hooks``)."""
    from kschedctl.snapshot.loader import admit_pod, load_pods

    if request.filename is None:
        assert request.name is not None
        return [named_pod(request, request.namespace, request.name)]
    filename = request.filename
    pods = load_pods(filename, features=request.config.features)
    for p in pods:
        for n in admit_pod(request.cluster, p, "<stdin>" if filename == "-" else filename):
            hooks.note(n)
    if len(pods) > 1:
        hooks.note(f"{filename} holds {len(pods)} pods: each is explained against the snapshot as it is "
                   "(to place them one after another, use kschedctl simulate)")
    return pods


def explain_pods(request: ExplainPodRequest, hooks: Hooks | None = None) -> ExplainResult:
    """One scheduling cycle per pod, a bound pod explained as if it were pending, margin and remedies added."""
    from kschedctl.explain.cycle import explain_pod
    from kschedctl.explain.order import assess
    from kschedctl.explain.pending import as_pending
    from kschedctl.kube.versions import version_fields
    from kschedctl.whatif.remedies import annotate_trace

    hooks = hooks or Hooks()
    result = ExplainResult()
    order = _noted_order(request, hooks)
    for pod in pods_to_explain(request, hooks):
        bound_to = pod.node_name
        if bound_to:
            pod = as_pending(pod)
        trace = explain_pod(request.cluster, pod, request.config, request.registry, details=request.details,
                            on_phase=hooks.progress.phase, after=assess)
        if bound_to:
            trace.notes.append(f"the pod is bound to {bound_to}; explained as if it were pending (its own placement removed)")
        data = {**version_fields(request.config.features), **trace.to_dict()}
        if not order.by_name:
            data["nodeOrder"] = order.to_dict()
        if request.fix or request.compare:
            hooks.progress.phase("verifying remedies")
        annotate_trace(data, trace, request.cluster, pod, request.config, request.registry,
                       fix=request.fix, compare=request.compare)
        result.traces.append(trace)
        result.documents.append(data)
    return result


# --------------------------------------------------------------------------- explain pending


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


@dataclass
class PendingResult:
    """One row per pending pod (``PendingRow.to_dict``) and, with ``fix``, the remedy search's totals."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    search: dict[str, Any] | None = None

    def groups(self) -> list[dict[str, Any]]:
        """The rows grouped by the cause that blocks them."""
        from kschedctl.whatif.causes import group_by_cause

        return [g.to_dict() for g in group_by_cause(self.rows)]


def explain_pending(request: PendingRequest, hooks: Hooks | None = None) -> PendingResult:
    """The rows of every chosen pending pod (a note when the namespace has none but others do)."""
    from kschedctl.explain.pending import pending_rows
    from kschedctl.whatif.causes import attach_remedies

    hooks = hooks or Hooks()
    _noted_order(request, hooks)
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
        hooks.progress.phase("verifying remedies")
        result.search = attach_remedies(result.rows, cluster, pods, request.config, request.registry, jobs=request.jobs)
    return result


# --------------------------------------------------------------------------- diff-profiles


@dataclass(kw_only=True)
class DiffRequest(ClusterRequest):
    """Two sides (configurations, profiles, versions) and the pods to compare them on: a pod by name,
    the pods of files (one representative pod per workload), or every pending pod."""

    a: Side
    b: Side
    name: str | None = None
    #: The named pod's namespace; for ``pending``, the namespace to take them from (None: all).
    namespace: str | None = None
    filenames: list[str] = field(default_factory=list)
    pending: bool = False
    jobs: int | None = None


def pods_to_compare(request: DiffRequest) -> tuple[Cluster, list[tuple[Pod, str | None]], list[str]]:
    """The cluster to compare on (with the files' objects added), each pod with its workload, and notes."""
    from kschedctl.explain.pending import as_pending
    from kschedctl.whatif.workloads import PodFactory

    cluster, ns = request.cluster, request.namespace
    if request.name is not None:
        found = named_pod(request, ns or "default", request.name)
        if not found.node_name:
            return cluster, [(found, None)], []
        note = f"the pod is bound to {found.node_name}; compared as if it were pending"
        return cluster, [(as_pending(found), None)], [note]
    if request.pending:
        pods: list[tuple[Pod, str | None]] = [(p, None) for p in cluster.pending_pods() if ns is None or p.namespace == ns]
        return cluster, pods, [] if pods else ["no pending pods" + (f' in namespace "{ns}"' if ns else "")]
    manifests = read_manifests(request.filenames, cluster)
    factory = PodFactory(manifests, cluster)
    pods = [(pod, None if w.kind == "Pod" else w.display) for w in manifests.workloads for pod in factory.pods(w, 1)]
    return factory.cluster, pods, list(manifests.notes)


def diff_sides(request: DiffRequest, hooks: Hooks | None = None) -> DiffReport:
    """What each side decides for every pod, and where they differ (see ``whatif.diff``)."""
    from kschedctl.whatif.diff import diff_pods
    from kschedctl.whatif.versions import VersionAttribution

    hooks = hooks or Hooks()
    cluster, pods, notes = pods_to_compare(request)
    progress = hooks.progress.counter("comparing pods")
    fa, fb = request.a.config.features, request.b.config.features
    versions = (fa.minor, dict(fa.gates)) != (fb.minor, dict(fb.gates))
    report = diff_pods(cluster, request.a, request.b, pods, request.registry, strict=request.name is not None,
                       progress=progress, jobs=request.jobs, annotate=VersionAttribution(fa, fb, cluster) if versions else None)
    report.notes[:0] = notes
    return report


# --------------------------------------------------------------------------- simulate


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
    #: ``simulate_runs``: how many runs, each with random start-up orders (``--runs``).
    runs: int = 1
    #: ``simulate_runs``: the node label whose values are the node groups counted (None: a node-pool label).
    group_by: str | None = None


def simulate_pods(request: SimulateRequest, hooks: Hooks | None = None) -> SimulationResult:
    """Read the files against the cluster and run the loop (or the ``--max`` search) over their pods."""
    hooks = hooks or Hooks()
    order, order_notes = startup_order(request)
    manifests = read_manifests(request.filenames, request.cluster)
    hooks.progress.phase("building NodeInfos")
    result = _simulate_max(request, manifests, hooks) if request.max_copies else _simulate_run(request, manifests, hooks)
    # the manifests' notes include what admitting each workload's first pod said (pods are made lazily)
    result.notes[:0] = manifests.notes + request.notes + order_notes
    result.startup = order
    return result


def simulate_runs(request: SimulateRequest, hooks: Hooks | None = None) -> RunsReport:
    """``--runs N``: the run N times, each with random node and start-up queue orders drawn from the
    request's seed, and the range of their outcomes (``whatif.runs``)."""
    from kschedctl.whatif.runs import run_many

    hooks = hooks or Hooks()
    manifests = read_manifests(request.filenames, request.cluster)
    quiet = Hooks(note=hooks.note)

    def one(cluster: Cluster) -> SimulationResult:
        run = replace(request, cluster=cluster)
        return _simulate_max(run, manifests, quiet) if request.max_copies else _simulate_run(run, manifests, quiet)

    seed = request.node_order.seed if request.node_order is not None else None
    report = run_many(request.cluster, request.runs, one, seed=seed, group_by=request.group_by,
                      progress=hooks.progress.counter("simulating runs"))
    report.notes[:0] = list(dict.fromkeys(manifests.notes)) + request.notes
    return report


def _simulate_max(request: SimulateRequest, manifests: Manifests, hooks: Hooks) -> SimulationResult:
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


def _simulate_run(request: SimulateRequest, manifests: Manifests, hooks: Hooks) -> SimulationResult:
    """The pods of the files (workloads expanded as their controllers would, lazily) through the loop."""
    from kschedctl.whatif.simulate import simulate_streams, workload_streams
    from kschedctl.whatif.workloads import PodFactory

    factory = PodFactory(manifests, request.cluster, private=True)
    streams, excluded = workload_streams(manifests, factory, request.replicas)
    if not any(s.count for s in streams):
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


# --------------------------------------------------------------------------- simulate --drain / --scale-down


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
    #: ``drain_runs``: how many runs of the drain, each with random start-up orders (``--runs``).
    runs: int = 1
    group_by: str | None = None


def drain_runs(request: DrainRequest, hooks: Hooks | None = None) -> RunsReport:
    """``--drain ... --runs N``: the drain N times, each with random node and start-up queue orders, and the
    range of where the replacements land (``whatif.runs``); a drain that evictions refuse or block fails in every run."""
    from kschedctl.whatif.drain import DrainFlags, drained_nodes, run_drain
    from kschedctl.whatif.runs import run_many
    from kschedctl.whatif.simulate import SimulationResult

    hooks = hooks or Hooks()
    nodes = drained_nodes(request.cluster, request.nodes, request.selector)
    stuck: list[str] = []
    succeeded: list[bool] = []

    def one(cluster: Cluster) -> SimulationResult:
        result = run_drain(cluster, request.config, nodes, request.flags or DrainFlags(), request.registry, options=request.options)
        succeeded.append(result.succeeded)
        if (result.refused or result.blocked) and not stuck:
            stuck.append(f"{len(result.refused) + len(result.blocked)} pod(s) cannot be evicted, in every run (see --drain without --runs)")
        return result.simulation or SimulationResult("pods", len(cluster.nodes))

    seed = request.node_order.seed if request.node_order is not None else None
    report = run_many(request.cluster, request.runs, one, seed=seed, group_by=request.group_by,
                      progress=hooks.progress.counter("simulating runs"))
    report.failures = stuck
    for outcome, ok in zip(report.runs, succeeded, strict=True):
        outcome.all_placed = ok  # a drain succeeds when its replacements land; pending pods are not its own
    return report


def drain_nodes(request: DrainRequest, hooks: Hooks | None = None) -> DrainResult | ScaleDownResult:
    """The drain (eviction plan, then the replacements through the loop) or the scale-down search."""
    from kschedctl.whatif.drain import DrainFlags, drained_nodes, run_drain, scale_down

    hooks = hooks or Hooks()
    _noted_order(request, hooks)
    flags = request.flags or DrainFlags()
    hooks.progress.phase("building NodeInfos")
    progress = hooks.progress.counter("placing replacements")
    if request.scale_down is not None:
        return scale_down(request.cluster, request.config, request.scale_down, flags, request.registry,
                          count=request.count, options=request.options, progress=progress)
    nodes = drained_nodes(request.cluster, request.nodes, request.selector)
    return run_drain(request.cluster, request.config, nodes, flags, request.registry, options=request.options,
                     progress=progress)
