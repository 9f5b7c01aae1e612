"""Proving a candidate change with the real scheduler: a whole cycle re-run on the changed pod or
cluster (``CycleProof``), or Filter probes (``FilterProbes``) where a number is searched for.

A change is verified only if its printed patch applies as written: the patch is applied to the
stored object and checked as the API server would (``whatif.patchcheck``), and the cycle re-runs
on the result. Nothing given to the search is changed: pods and nodes are changed on deep copies,
and a changed node goes into a new Cluster that shares the other (read-only) objects. The cycles
only read their snapshot, so the cluster's snapshot is built once and shared, and a changed
cluster's snapshot shares the NodeInfos of the nodes it did not change (``SearchSnapshots``).
Every re-run and probe is counted against the search's budget (``whatif.remedybudget``).
"""

from __future__ import annotations

import copy

from kschedctl.config.types import SchedulerConfig
from kschedctl.explain.cycle import explain_pod, run_cycle
from kschedctl.explain.nearest import analyse_filters
from kschedctl.explain.pending import Snapshots
from kschedctl.explain.trace import Trace
from kschedctl.framework.cycle_state import CycleState
from kschedctl.framework.nodeinfos import Snapshot
from kschedctl.framework.registry import Registry
from kschedctl.framework.runtime import Framework
from kschedctl.framework.types import NodeInfo
from kschedctl.kube.features import Features
from kschedctl.snapshot.cluster import Cluster
from kschedctl.snapshot.model import Node, Pod
from kschedctl.whatif.changes import Change
from kschedctl.whatif.patchcheck import PatchCheck, check_new_node, check_node_patch, check_pod_patch
from kschedctl.whatif.remedybudget import BudgetMeter, OutOfBudget
from kschedctl.whatif.remedyreport import Verdict

#: At most this many copies are counted on a new node.
MAX_COPIES = 110
#: Nodes a Filter probe checks at once (it stops at the first chunk with a feasible node).
PROBE_CHUNK = 512


class SearchSnapshots:
    """The snapshots one pod's search reads: the cluster's without the pod, and those of changed copies."""

    def __init__(self, cluster: Cluster, pod: Pod, features: Features, snapshots: Snapshots | None = None) -> None:
        """``features``: the version of the search's runs; ``snapshots``: the cluster's snapshots (for that
        version), shared by the searches of several pods of one cluster."""
        self.cluster = cluster
        self.pod = pod
        self.snapshots = snapshots if snapshots is not None else Snapshots(cluster, features)
        self._base: Snapshot | None = None

    def base(self) -> Snapshot:
        """The cluster's snapshot without the pod, built once and only read (by cycles and probes)."""
        if self._base is None:
            self._base = self.snapshots.without(self.pod)
        return self._base

    def of(self, cluster: Cluster) -> Snapshot:
        """The snapshot ``explain_pod`` would build for the pod on ``cluster`` (the search's cluster, or a
        copy of it with changed nodes): the NodeInfos of unchanged nodes are the base snapshot's."""
        if cluster is self.cluster:
            return self.base()
        base = self.base()
        return Snapshot(cluster, features=self.snapshots.features, exclude_pod_uids=(self.pod.uid,), reuse=base)


class _SearchStep:
    """What every way of checking a change works from: the search's snapshots (its cluster and pod), the
    configuration and registry the cycles run with, and the meter the budget is spent on."""

    def __init__(
        self, snapshots: SearchSnapshots, config: SchedulerConfig, registry: Registry, meter: BudgetMeter
    ) -> None:
        self.snapshots = snapshots
        self.cluster = snapshots.cluster
        self.pod = snapshots.pod
        self.config = config
        self.registry = registry
        self.meter = meter


class CycleProof(_SearchStep):
    """A change's verdict: its patch checked, then the whole scheduling cycle re-run on the result."""

    def pod_copy(self) -> Pod:
        return Pod.from_raw(copy.deepcopy(self.pod.raw))

    def cycle(self, cluster: Cluster, pod: Pod) -> Trace:
        """``explain_pod`` of ``pod`` on ``cluster``, on the snapshot ``SearchSnapshots.of`` gives."""
        profile = self.config.profile_for(pod.scheduler_name)
        if profile is None:
            return explain_pod(cluster, pod, self.config, self.registry)  # which says why not
        cluster.default_priority(pod)
        return run_cycle(Framework(profile, self.registry, self.snapshots.of(cluster)), pod, self.config)

    def verify(self, change: Change) -> tuple[Verdict, PatchCheck]:
        """Apply the change's patch to the stored object and check it as the API server would; then re-run
        the whole cycle on the patched pod (or the changed cluster): the verdict is what it concludes
        (``refused`` when the API server would refuse the patch; no cycle runs then)."""
        check = self.check_patch(change)
        if check.refused:
            return Verdict("refused", reason=check.refused[0]), check
        self.meter.spend("rerun")
        cluster = self.cluster.copy_with(nodes=[change.node]) if change.node is not None else self.cluster
        pod = Pod.from_raw(check.applied) if change.pod is not None and check.applied is not None else self.pod_copy()
        return Verdict.of(self.cycle(cluster, pod)), check

    def check_patch(self, change: Change) -> PatchCheck:
        """The change's patch applied to what it targets: the stored pod, the stored node, or a new node."""
        if change.pod is not None:
            return check_pod_patch(self.cluster, self.pod, change.patch, self.snapshots.snapshots.features.minor)
        assert change.node is not None
        stored = self.cluster.node(change.node.name)
        if stored is None:
            return check_new_node(change.node, self.snapshots.snapshots.features.minor)
        return check_node_patch(stored, change.patch, change.command, self.snapshots.snapshots.features.minor)


class FilterProbes(_SearchStep):
    """Questions the real PreFilter and Filter answer for changed copies of the pod, one probe each."""

    def __init__(
        self, snapshots: SearchSnapshots, config: SchedulerConfig, registry: Registry, meter: BudgetMeter
    ) -> None:
        super().__init__(snapshots, config, registry, meter)
        self._framework: Framework | None = None

    def fits_somewhere(self, pod: Pod) -> bool:
        """One probe: the real PreFilter, then the real Filter node by node until one passes."""
        self.meter.spend("probe")
        fw = self._probe_framework()
        self.cluster.default_priority(pod)
        state = CycleState()
        pre = fw.filtering.run_pre_filter(state, pod)
        if not pre.status.is_success():
            return False
        allowed = pre.result.node_names if pre.result is not None else None
        nodes = [ni for ni in fw.snapshot.node_info_list if allowed is None or ni.name in allowed]
        for start in range(0, len(nodes), PROBE_CHUNK):
            if self._any_passes(fw, state, pod, nodes[start:start + PROBE_CHUNK]):
                return True
        return False

    @staticmethod
    def _any_passes(fw: Framework, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> bool:
        """Whether the real Filter passes one of ``nodes``: nodes without nominated pods through the
        framework's whole-list path (the same verdicts), the others (and all, when that path declines)
        one by one with their nominated pods."""
        plain = [ni for ni in nodes if not fw.filtering.has_nominated_pods(ni)]
        statuses = fw.filtering.run_filter_plugins_for_nodes(state, pod, plain) if plain else []
        if statuses is None:
            plain, statuses = [], []
        if any(st is None for st in statuses):
            return True
        done = {ni.name for ni in plain}
        return any(fw.filtering.run_filter_plugins_with_nominated_pods(state, pod, ni).is_success()
                   for ni in nodes if ni.name not in done)

    def _probe_framework(self) -> Framework:
        if self._framework is None:
            profile = self.config.profile_for(self.pod.scheduler_name)
            assert profile is not None
            self._framework = Framework(profile, self.registry, self.snapshots.base())
        return self._framework

    def copies_on(self, node: Node) -> tuple[int, bool]:
        """How many copies of the pod the (new) node takes: copies placed one by one through the real Filter."""
        cluster = self.cluster.copy_with(nodes=[node])
        snapshot = self.snapshots.of(cluster)  # the copies are assumed only on the new node, which it does not share
        profile = self.config.profile_for(self.pod.scheduler_name)
        assert profile is not None
        fw = Framework(profile, self.registry, snapshot)
        ni = snapshot.get(node.name)
        assert ni is not None
        n = 0
        while n < MAX_COPIES:
            try:
                self.meter.spend("probe")
            except OutOfBudget:
                return n, True
            pod = self._numbered_copy(n)
            cluster.default_priority(pod)
            state = CycleState()
            pre = fw.filtering.run_pre_filter(state, pod)
            allowed = pre.result.node_names if pre.result is not None else None
            if not pre.status.is_success() or (allowed is not None and node.name not in allowed):
                break
            if not fw.filtering.run_filter_plugins_with_nominated_pods(state, pod, ni).is_success():
                break
            pod.node_name = node.name
            snapshot.assume(pod, node.name)
            n += 1
        return n, n >= MAX_COPIES

    def _numbered_copy(self, i: int) -> Pod:
        raw = copy.deepcopy(self.pod.raw)
        md = raw.setdefault("metadata", {})
        md["name"] = f"{self.pod.name}-copy-{i}"
        md["uid"] = f"kschedctl-copy-{i}-{self.pod.uid}"
        raw.setdefault("status", {}).pop("nominatedNodeName", None)
        return Pod.from_raw(raw)

    def still_rejected(self, pod: Pod, plugin: str) -> set[str]:
        """The nodes ``plugin`` rejects for ``pod`` (one probe: that plugin's real Filter on every node)."""
        self.meter.spend("probe")
        after = analyse_filters(self.cluster, pod, self.config, self.registry, snapshot=self.snapshots.base(),
                                only=frozenset({plugin}))
        return {n.node for n in after.nodes if any(r.plugin == plugin for r in n.rejections)}
