"""Which node group would scale up for a pending pod, and how many new nodes each group needs: ``--scale-up``.

cluster-autoscaler decides a scale-up by asking the scheduler's Filter plugins whether a node built
from a group's template would take a pending pod; when no group would, it says why in one line
(``pod didn't trigger scale-up: 2 node(s) didn't match Pod's node affinity/selector, ...``: each
reason of the groups' rejections, counted over the groups). This module asks the same question of
the real framework of this project, with the pod's profile and version: for each node group
(``whatif.changes.node_groups``) one new node is built from the group's template node as the
autoscaler builds it (``whatif.nodetemplate``: labels, kept taints, allocatable, the template's
DaemonSet and mirror pods copied), the pod's PreFilter runs against the cluster with that node added
(inter-pod affinity and topology spreading read the whole cluster) and its Filter plugins against
the new node. The first plugin that rejects it, with its reasons, is the group's answer.

Which pods are asked about: the unschedulable ones, and those an existing node takes when each is
asked about alone but that the loop without new nodes does not bind (the pods queued before them take
the room): cluster-autoscaler, too, first places on the existing nodes what fits there.

Then, per group, the least number of new nodes that places every pending pod one new node of the
group would take: each count is probed with the real scheduling loop (``whatif.simulate``'s
``Simulator``: every pending pod in queue order, one attempt each, preemption applied), and a pod
counts as placed only when it is bound, not when it is only nominated. A probe stops as soon as its
answer is known (a pod of the group's not bound, or all of them bound and no pod left to pop with a
higher priority, whose preemption could evict one), and the run without new nodes is shared by every
group.
The search starts at cluster-autoscaler's binpacking estimate (the pods still unplaced, first fit onto
new nodes by their requests), steps away from it by doubling steps, then halves the last gap: that assumes more new nodes never place fewer of
these pods (true of the shared scale-up corpus; a count is reported only after a probe placed them
all). The search is separate from ``simulate --add-nodes``'s on purpose: it answers another question
(per group, for the pods the group can take) and the two can be merged later.
"""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from kschedctl.config.types import SchedulerConfig
from kschedctl.framework.cycle_state import CycleState
from kschedctl.framework.nodeinfos import Snapshot
from kschedctl.framework.registry import Registry
from kschedctl.framework.resources import PODS, calculate_pod_resource
from kschedctl.framework.runtime import Framework
from kschedctl.framework.status import Status
from kschedctl.snapshot.cluster import Cluster
from kschedctl.snapshot.model import Pod
from kschedctl.whatif import DEFAULT_MAX_NEW_NODES
from kschedctl.whatif.changes import NodeGroup, node_groups
from kschedctl.whatif.nodetemplate import NewNodes, new_nodes, with_new_nodes
from kschedctl.whatif.placements import Placement, RunOptions
from kschedctl.whatif.podqueue import PodStream
from kschedctl.whatif.scaleup import least_count
from kschedctl.whatif.simulate import Simulator

#: ``--max-new-nodes``' default: the most new nodes of one group the least-count search tries.
NO_SCALE_UP = "pod didn't trigger scale-up: "


@dataclass(frozen=True)
class Rejection:
    """Why one new node of a group does not take a pod: the first plugin that rejects it and its reasons."""

    pod: str
    plugin: str
    reasons: tuple[str, ...]

    @property
    def reason(self) -> str:
        return ", ".join(self.reasons)

    def to_dict(self) -> dict[str, Any]:
        return {"pod": self.pod, "plugin": self.plugin, "reason": self.reason}


@dataclass
class GroupScaleUp:
    """One node group: the pods one new node of it takes, those it rejects, and the least new nodes that
    place every pod it takes (None: no count up to ``searched_up_to`` does, or no pod to place)."""

    group: str
    template: str
    size: int
    takes: list[str] = field(default_factory=list)
    rejects: list[Rejection] = field(default_factory=list)
    least: int | None = None
    searched_up_to: int = 0
    probes: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {"group": self.group, "template": self.template, "groupSize": self.size, "takes": list(self.takes),
                "rejects": [r.to_dict() for r in self.rejects], "least": self.least,
                "searchedUpTo": self.searched_up_to, "probes": self.probes}


@dataclass
class PodScaleUp:
    """One pending pod: the groups one new node of which would take it, and the autoscaler-style line."""

    pod: str
    groups: list[str] = field(default_factory=list)
    rejections: list[tuple[str, Rejection]] = field(default_factory=list)
    #: Why the pod was not analysed (it fits now, it is gated...); None: it was.
    skipped: str | None = None
    #: What else the line needs said (a pod that fits alone but not after the pods queued before it).
    note: str | None = None

    @property
    def message(self) -> str:
        if self.skipped is not None:
            return self.skipped
        if self.groups:
            return f"pod would trigger scale-up: {' or '.join(self.groups)}"
        return NO_SCALE_UP + reasons_message(r for _, r in self.rejections)

    def to_dict(self) -> dict[str, Any]:
        out = {"pod": self.pod, "analysed": self.skipped is None, "message": self.message, "groups": list(self.groups)}
        return {**out, "note": self.note} if self.note else out


@dataclass
class ScaleUpReport:
    """Every group's answer and every analysed pod's line (in the order the pods were given)."""

    groups: list[GroupScaleUp]
    pods: list[PodScaleUp]
    max_new_nodes: int
    _by_key: dict[str, PodScaleUp] = field(default_factory=dict, repr=False)

    def pod(self, key: str) -> PodScaleUp | None:
        if len(self._by_key) != len(self.pods):
            self._by_key = {p.pod: p for p in self.pods}
        return self._by_key.get(key)

    def to_dict(self) -> dict[str, Any]:
        return {"maxNewNodes": self.max_new_nodes, "groups": [g.to_dict() for g in self.groups],
                "pods": [p.to_dict() for p in self.pods]}


def reasons_message(rejections: Iterable[Rejection]) -> str:
    """cluster-autoscaler's aggregation: each reason counted over the groups that gave it, ``N reason``,
    sorted, joined with ", " (the count is of node groups, each judged by its template node)."""
    counts: Counter[str] = Counter(reason for r in rejections for reason in dict.fromkeys(r.reasons))
    return ", ".join(sorted(f"{n} {reason}" for reason, n in counts.items())) or "no node group"


# --------------------------------------------------------------------------- one new node per group


class OneNewNode:
    """The cluster with one new node of a group, and the framework (per profile) that asks its plugins."""

    def __init__(self, cluster: Cluster, group: NodeGroup, config: SchedulerConfig, registry: Registry,
                 pods: list[Pod]) -> None:
        added = new_nodes(cluster, group.template, 1)
        self.node = added.nodes[0].name
        self.cluster = with_new_nodes(cluster, [added])
        self.config = config
        self.registry = registry
        self.pods = pods
        self._frameworks: dict[str, Framework] = {}

    def _framework(self, pod: Pod) -> Framework | None:
        fw = self._frameworks.get(pod.scheduler_name)
        if fw is None:
            profile = self.config.profile_for(pod.scheduler_name)
            if profile is None:
                return None
            snapshot = Snapshot(self.cluster, features=profile.features, exclude_pod_uids=[p.uid for p in self.pods])
            for p in self.pods:
                held = self.cluster.pod(p.namespace, p.name)
                if held is None or held.uid != p.uid or held.node_name:
                    snapshot.created_pods[p.uid] = p  # not pending in the cluster: the scheduler learns it now
            fw = Framework(profile, self.registry, snapshot)
            self._frameworks[pod.scheduler_name] = fw
        return fw

    def nodes_for(self, pods: Iterable[Pod]) -> int:
        """How many nodes like the new one (its DaemonSet copies on it) ``pods`` fill by their requests alone,
        first fit in the order given, as cluster-autoscaler's binpacking estimate counts them (at least 1):
        where the least-count search starts."""
        fw = next(iter(self._frameworks.values()), None)
        ni = fw.snapshot.get(self.node) if fw is not None else None
        if ni is None:
            return 1
        empty = {PODS: ni.allocatable.get(PODS) - len(ni.pods)}
        bins: list[dict[str, int]] = []
        for pod in pods:
            demand = {**calculate_pod_resource(pod, ni.resize_rule).resource.as_dict(), PODS: 1}
            for name in demand.keys() - empty.keys():
                empty[name] = ni.allocatable.get(name) - ni.requested.get(name)
            if any(amount > empty[name] for name, amount in demand.items()):
                continue  # not even an empty node holds it by requests: no bin counts it
            free = next((b for b in bins if all(amount <= b.get(name, empty[name]) for name, amount in demand.items())), None)
            if free is None:
                free = {}
                bins.append(free)
            for name, amount in demand.items():
                free[name] = free.get(name, empty[name]) - amount
        return max(1, len(bins))

    def rejection(self, pod: Pod) -> Rejection | None:
        """None when the new node takes ``pod`` (its PreFilter, then its Filter plugins on the new node);
        else the first plugin that rejects it."""
        fw = self._framework(pod)
        if fw is None:
            return Rejection(pod.key, "", (f'no profile has schedulerName "{pod.scheduler_name}"',))
        self.cluster.default_priority(pod)
        state = CycleState()
        pre = fw.filtering.run_pre_filter(state, pod)
        if not pre.status.is_success():
            return _rejection(pod, pre.status, "PreFilter")
        if pre.result is not None and not pre.result.all_nodes() and self.node not in (pre.result.node_names or ()):
            names = sorted(pre.unschedulable_plugins) or ["PreFilter"]
            return Rejection(pod.key, names[0], (f"node(s) didn't satisfy plugin {names[0]}",))
        ni = fw.snapshot.get(self.node)
        assert ni is not None
        st = fw.filtering.run_filter_plugins_with_nominated_pods(state, pod, ni)
        return None if st.is_success() else _rejection(pod, st, "Filter")


def _rejection(pod: Pod, st: Status, where: str) -> Rejection:
    reasons = tuple(st.reasons) or ((st.error,) if st.error else (f"rejected at {where}",))
    return Rejection(pod.key, st.plugin or where, reasons)


# --------------------------------------------------------------------------- the least count


def loop_placed(cluster: Cluster, config: SchedulerConfig, registry: Registry, extra: list[Pod],
                added: NewNodes | None = None, want: set[str] | None = None) -> set[str]:
    """The pods the real loop binds and no later preemption evicts (keys): every pending pod of ``cluster`` in
    queue order, then ``extra`` (pods not pending in it), on the cluster with the ``added`` nodes; nothing
    given is changed.

    With ``want`` the run stops as soon as its answer for ``want`` is known: at the first pod of ``want`` that
    is not bound (one attempt each), or once every pod of it is bound and no pod left in the queue has a
    higher priority than one of them (only such a pod's preemption could evict it)."""
    run = with_new_nodes(cluster, [added]) if added is not None else cluster
    excluded = {p.uid for p in extra}
    # the loop binds and nominates the Pod objects it schedules: each run gets its own copies
    run = run.copy_with(pods=[copy.deepcopy(p) if not p.node_name or p.uid in excluded else p for p in run.pods])
    sim = Simulator(run, config, registry, options=RunOptions(pending=True), exclude_pod_uids=excluded, owns_cluster=True)
    streams = sim.queued_at_start() + [PodStream([copy.deepcopy(p)]) for p in extra]
    sim.enqueue_pod_groups(streams)
    queue = sim.queue(streams)
    done: list[Placement] = []
    left = set(want) if want is not None else set()
    watching = want is not None  # off: the run goes to the end
    while (item := queue.pop()) is not None:
        pod, i = item
        placements = sim.schedule_popped(pod, len(done) + 1, streams[i].workload, queue=queue)
        done.extend(placements)
        if not watching:
            continue
        if any(p.pod in left and not p.placed for p in placements):
            break
        left.difference_update(p.pod for p in placements)
        if not left:
            assert want is not None
            if not _may_evict(streams, done, want):
                break
            watching = False  # a pod still queued may evict one of them: its answer is the end's
    return {p.pod for p in done if p.placed and p.evicted_by is None}


def _may_evict(streams: list[PodStream], done: list[Placement], want: set[str]) -> bool:
    """Whether a pod still in the queue has a higher priority than a pod of ``want`` (the queue pops by
    priority first, but a QueueSort plugin of a profile's own may not)."""
    popped = {p.pod for p in done}
    queued = [p.priority for s in streams if isinstance(s.pods, list) for p in s.pods if p.key not in popped]
    wanted = [p.priority for s in streams if isinstance(s.pods, list) for p in s.pods if p.key in want]
    return bool(queued and wanted) and max(q or 0 for q in queued) > min(w or 0 for w in wanted)


class LeastSearch:
    """The least number of new nodes of one group that places ``want`` (pod keys): each probe is the real
    loop over every pending pod (plus ``extra``, pods not pending in the cluster) on the cluster with
    that many new nodes of the template."""

    def __init__(self, cluster: Cluster, group: NodeGroup, config: SchedulerConfig, registry: Registry,
                 extra: list[Pod], want: set[str], baseline: dict[int, set[str]] | None = None) -> None:
        """``baseline``: the pods the loop places without new nodes, shared by the searches of every group
        (filled by the first that needs it)."""
        self.cluster = cluster
        self.group = group
        self.config = config
        self.registry = registry
        self.extra = extra
        self.want = want
        self.baseline = baseline if baseline is not None else {}
        self.probes = 0
        self._seen: dict[int, bool] = {}

    def places_all(self, count: int) -> bool:
        """One probe (once per count; no new node: once for every group): the loop with ``count`` new nodes."""
        if count not in self._seen:
            if count == 0 and 0 in self.baseline:
                placed = self.baseline[0]
            else:
                placed = self.placed(count)
                if count == 0:
                    self.baseline[0] = placed
            self._seen[count] = self.want <= placed
        return self._seen[count]

    def placed(self, count: int) -> set[str]:
        """The pods the real loop binds on the cluster with ``count`` new nodes of the group (one probe): as far
        as the answer for the group's pods needs; without new nodes, all (the groups share that run)."""
        if not count:  # shared by every group: not counted as a probe of this one
            return loop_placed(self.cluster, self.config, self.registry, self.extra)
        self.probes += 1
        added = new_nodes(self.cluster, self.group.template, count)
        return loop_placed(self.cluster, self.config, self.registry, self.extra, added, self.want)

    def least(self, most: int, guess: Callable[[set[str]], int] | None = None) -> int | None:
        """The least count in 0..``most`` that places them all (None: none does), searched as
        ``whatif.scaleup.least_count`` searches, from ``guess`` (given the pods placed without new nodes;
        else 1)."""
        if self.places_all(0):
            return 0
        start = guess(self.baseline.get(0, set())) if guess is not None else 1
        return least_count(self.places_all, most, start)


# --------------------------------------------------------------------------- the report


def scale_up_report(
    cluster: Cluster,
    config: SchedulerConfig,
    registry: Registry | None,
    pods: list[Pod],
    *,
    fits_now: Iterable[str] = (),
    skipped: Iterable[tuple[str, str]] = (),
    max_new_nodes: int = DEFAULT_MAX_NEW_NODES,
    progress: Callable[[int, int | None], None] | None = None,
) -> ScaleUpReport:
    """Each node group's verdict on each of ``pods`` (pending pods, in the order to report them) and its least
    count; ``skipped``: pods not analysed, each with the line that says why.

    ``fits_now``: the keys of the pods of ``pods`` an existing node takes when each is asked about alone.
    As cluster-autoscaler first places the pending pods it can on the existing nodes, they are only
    analysed when the loop without new nodes does not bind them (the pods queued before them took the room);
    the others are skipped. Pods of ``pods`` that are not pending in ``cluster`` (a file's, or a bound pod
    explained as pending) join the loop's queue as new pods. Without a pod to analyse no group is asked."""
    if registry is None:
        from kschedctl.plugins import in_tree_registry

        registry = in_tree_registry()
    extra = [p for p in pods if not _pending_in(cluster, p)]
    baseline: dict[int, set[str]] = {}
    lines = {p.key: PodScaleUp(p.key) for p in pods}
    alone = set(fits_now) & set(lines)
    if alone:
        baseline[0] = loop_placed(cluster, config, registry, extra)
        for key in alone:
            if key in baseline[0]:
                lines[key].skipped = "fits an existing node now: no scale-up needed"
            else:
                lines[key].note = "fits an existing node alone, but the pods queued before it take the room"
    wanted = [p for p in pods if lines[p.key].skipped is None]
    groups = node_groups(cluster) if wanted else []
    out: list[GroupScaleUp] = []
    for i, group in enumerate(groups):
        g = _ask_group(cluster, group, config, registry, pods, wanted, extra, baseline, max_new_nodes)
        for key in g.takes:
            lines[key].groups.append(group.name)
        for r in g.rejects:
            lines[r.pod].rejections.append((group.name, r))
        out.append(g)
        if progress is not None:
            progress(i + 1, len(groups))
    skipped_lines = [PodScaleUp(key, skipped=why) for key, why in skipped]
    return ScaleUpReport(out, list(lines.values()) + skipped_lines, max_new_nodes)


def _ask_group(cluster: Cluster, group: NodeGroup, config: SchedulerConfig, registry: Registry, pods: list[Pod],
               wanted: list[Pod], extra: list[Pod], baseline: dict[int, set[str]], most: int) -> GroupScaleUp:
    """One group: one new node's verdict on each pod of ``wanted``, then the least count for those it takes."""
    g = GroupScaleUp(group.name, group.template.name, len(group.nodes))
    probe = OneNewNode(cluster, group, config, registry, pods)
    for pod in wanted:
        r = probe.rejection(pod)
        if r is None:
            g.takes.append(pod.key)
        else:
            g.rejects.append(r)
    if g.takes:
        takers = [p for p in wanted if p.key in g.takes]
        search = LeastSearch(cluster, group, config, registry, extra, set(g.takes), baseline)
        g.least = search.least(most, lambda placed: probe.nodes_for(p for p in takers if p.key not in placed))
        g.searched_up_to, g.probes = most, search.probes
    return g


def _pending_in(cluster: Cluster, pod: Pod) -> bool:
    held = cluster.pod(pod.namespace, pod.name)
    return held is not None and held.uid == pod.uid and not held.node_name
