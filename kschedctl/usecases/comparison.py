"""What ``diff-profiles`` and ``diff-versions`` share: the pods a comparison runs on, and the comparison.

Both commands compare two ``Side`` values (``whatif.diff``) on the same pods: a pod by name (a
bound one compared as if it were pending), the pods of files (one representative pod per
workload, the files' other objects added to the cluster), or every pending pod. They differ in
their sides (two configurations or profiles under one version; one configuration under two
versions) and in what is added to each difference (``diff_versions`` attributes it to the rule
changes between the versions); each has its own module and entry point on top of this one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kschedctl.usecases.request import ClusterRequest, Hooks

if TYPE_CHECKING:
    from kschedctl.snapshot.cluster import Cluster
    from kschedctl.snapshot.model import Pod
    from kschedctl.whatif.diff import Annotate, DiffReport, Side


@dataclass(kw_only=True)
class ComparisonRequest(ClusterRequest):
    """Two sides and the pods to compare them on: a pod by name, the pods of files (one representative
    pod per workload), or every pending pod."""

    a: Side
    b: Side
    name: str | None = None
    #: The named pod's namespace; for ``pending``, the namespace to take them from (None: all).
    namespace: str | None = None
    filenames: list[str] = field(default_factory=list)
    pending: bool = False
    jobs: int | None = None


def _pods_to_compare(request: ComparisonRequest) -> tuple[Cluster, list[tuple[Pod, str | None]], list[str]]:
    """The cluster to compare on (with the files' objects added), each pod with its workload, and notes."""
    from kschedctl.explain.pending import as_pending
    from kschedctl.whatif.workloads import PodFactory

    cluster, ns = request.cluster, request.namespace
    if request.name is not None:
        found = request.named_pod(ns or "default", request.name)
        if not found.node_name:
            return cluster, [(found, None)], []
        note = f"the pod is bound to {found.node_name}; compared as if it were pending"
        return cluster, [(as_pending(found), None)], [note]
    if request.pending:
        pods: list[tuple[Pod, str | None]] = [(p, None) for p in cluster.pending_pods() if ns is None or p.namespace == ns]
        return cluster, pods, [] if pods else ["no pending pods" + (f' in namespace "{ns}"' if ns else "")]
    manifests = request.read_manifests(request.filenames)
    factory = PodFactory(manifests, cluster)
    pods = [(pod, None if w.kind == "Pod" else w.display) for w in manifests.workloads for pod in factory.pods(w, 1)]
    return factory.cluster, pods, list(manifests.notes)


def compare(request: ComparisonRequest, hooks: Hooks, annotate: Callable[[Cluster], Annotate] | None = None) -> DiffReport:
    """What each side decides for every pod, and where they differ (``whatif.diff``); ``annotate`` makes,
    for the cluster compared on, what fills in each pod's difference."""
    from kschedctl.whatif.diff import diff_pods

    cluster, pods, notes = _pods_to_compare(request)
    progress = hooks.progress.counter("comparing pods")
    report = diff_pods(cluster, request.a, request.b, pods, request.registry, strict=request.name is not None,
                       progress=progress, jobs=request.jobs, annotate=annotate(cluster) if annotate is not None else None)
    report.notes[:0] = notes
    return report
