"""Draining nodes: which pods leave, which stay or are refused, and where the evicted ones land.

``kschedctl simulate --drain NODE`` answers "can I drain these nodes?" in two steps:

* the eviction plan (``plan_drain``), the rules ``kubectl drain`` applies to the pods of each node
  (staging ``k8s.io/kubectl/pkg/drain/filters.go``, in its filter order) and then the Eviction
  API's budget check (``pkg/registry/core/pod/storage/eviction.go``): DaemonSet pods and mirror
  pods (the annotation, or a Node as controller, as the kubelet makes them) stay; a pod with emptyDir data is refused without ``--delete-emptydir-data``, a pod without
  a controller without ``--force``, and where a pod is refused kubectl evicts nothing else from
  that node (``GetPodsForDeletion`` returned errors); an eviction that would take a PodDisruptionBudget below zero
  disruptions is refused (``--disable-eviction`` deletes instead, as kubectl's flag does, and
  consults no budget). Budgets are spent in eviction order: drained nodes by name, their pods by
  namespace/name (kubectl evicts all of a node's pods at once: which pod of a controller goes
  first is not known from outside). A budget without status is computed from the pods.
* the rounds: kubectl retries a refused eviction every 5 s (until ``--timeout``). Between rounds the
  replacements are placed, a placed one counts as healthy (the real kubelet must start it and its
  readiness pass) and every budget is recomputed as the disruption controller does
  (``budget_status``); the refused evictions are retried in the same order. A budget blocks only
  when a round lets nothing go (``maxUnavailable: 0``, a budget at its floor whose replacements
  do not fit), or when ``--timeout`` allows no more rounds (one per retry).
* the run: the cluster with the drained nodes cordoned and the evicted pods gone; each evicted
  pod whose controller re-creates it (ReplicaSet, StatefulSet, Job, ReplicationController) comes
  back as a new pending pod made from the evicted one (a snapshot rarely holds the controllers,
  and the pod is what their template produced): a new uid, a new name from the controller's
  ``generateName`` (a StatefulSet pod keeps its own), creationTimestamp one second apart in
  eviction order; the real loop of ``whatif.simulate`` then places them (and the snapshot's
  pending pods, queued first) exactly as ``simulate -f`` places pods. Pods without a controller
  are lost. After each round the loop is run again over every replacement so far, in creation
  order, on the cluster without every pod evicted so far (an approximation: the real scheduler
  placed the earlier replacements while the later-evicted pods still stood on the cordoned node).

``scale_down`` removes nodes of a group one at a time, least requested first (cluster-autoscaler's
order), each removal a drain of every node taken so far, and stops at the first that fails.
"""

from __future__ import annotations

import copy
import hashlib
import uuid
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from kschedctl.config.types import SchedulerConfig
from kschedctl.errors import InputError, UsageError
from kschedctl.framework.registry import Registry
from kschedctl.kube.features import Features
from kschedctl.kube.selectors import Selector, parse_label_selector
from kschedctl.snapshot.cluster import Cluster
from kschedctl.snapshot.model import KubeObject, Node, Pod
from kschedctl.whatif.placements import Placement, RunOptions, SimulationResult

#: Hears pods done / total, as ``simulate_streams``' progress does.
Progress = Callable[[int, int | None], None]

#: Controllers that create a replacement for an evicted pod.
RECREATING_KINDS = ("ReplicaSet", "StatefulSet", "Job", "ReplicationController")
MIRROR_ANNOTATION = "kubernetes.io/config.mirror"
#: kubectl drain waits this long before it retries an eviction a budget refused (429).
RETRY_SECONDS = 5
#: The letters generated names end with (apimachinery's SafeEncodeString alphabet, as ``whatif.workloads``).
NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"

STAYS = "stays"
EVICTED = "evicted"
REFUSED = "refused"
BLOCKED = "blocked"

EMPTYDIR_REFUSAL = "emptyDir data: refused without --delete-emptydir-data"
UNMANAGED_REFUSAL = "no controller: refused without --force"
NODE_REFUSED = "not evicted: kubectl drain evicts nothing on a node where it refuses a pod"


@dataclass
class DrainFlags:
    """The ``kubectl drain`` flags the plan honours (``--ignore-daemonsets`` is implied)."""

    delete_emptydir_data: bool = False
    force: bool = False
    #: Delete instead of evicting: no PodDisruptionBudget is consulted.
    disable_eviction: bool = False
    #: ``--timeout`` in seconds (None: kubectl's default, 0s, waits forever).
    timeout: float | None = None

    def to_dict(self) -> dict[str, bool]:
        return {"deleteEmptydirData": self.delete_emptydir_data, "force": self.force, "disableEviction": self.disable_eviction}

    @property
    def max_rounds(self) -> int | None:
        """The rounds of evictions that fit in ``timeout``: the first at once, then one per 5 s retry (None: no limit)."""
        return None if self.timeout is None else 1 + int(self.timeout // RETRY_SECONDS)


@dataclass
class BudgetBlock:
    """A PodDisruptionBudget that refused an eviction."""

    budget: str  # namespace/name
    disruptions_allowed: int
    message: str

    def to_dict(self) -> dict[str, Any]:
        return {"budget": self.budget, "disruptionsAllowed": self.disruptions_allowed, "message": self.message}


@dataclass
class Eviction:
    """What the drain does with one pod of a drained node."""

    pod: str
    node: str
    action: str  # stays | evicted | refused | blocked
    reason: str = ""
    #: The controlling object, "Kind name" in the pod's namespace (None: the pod declares no controller).
    controller: str | None = None
    #: The pending pod its controller creates instead (namespace/name), when it does.
    recreated_as: str | None = None
    block: BudgetBlock | None = None
    #: The round of kubectl's retries in which the eviction went through (1: at once; 0: not evicted).
    round: int = 0

    @property
    def lost(self) -> bool:
        return self.action == EVICTED and self.recreated_as is None

    def to_dict(self) -> dict[str, Any]:
        return {
            "pod": self.pod,
            "node": self.node,
            "action": self.action,
            "reason": self.reason,
            "controller": self.controller,
            "recreatedAs": self.recreated_as,
            "blockedBy": self.block.to_dict() if self.block else None,
            "round": self.round,
        }


# --------------------------------------------------------------------------- the eviction rules


def controller_of(pod: Pod) -> dict[str, Any] | None:
    """``metav1.GetControllerOf``: the owner reference marked as controller."""
    return pod.meta.controller_ref()


def _controller_label(pod: Pod) -> str | None:
    ref = controller_of(pod)
    return f"{ref.get('kind')} {ref.get('name')}" if ref else None


def filter_pod(pod: Pod, flags: DrainFlags) -> tuple[str, str]:
    """kubectl drain's filters in their order: (action, reason); the first filter that keeps a pod decides."""
    ref = controller_of(pod)
    if ref is not None and ref.get("kind") == "DaemonSet" and ref.get("apiVersion") == "apps/v1":
        return STAYS, "DaemonSet pod (--ignore-daemonsets)"
    if MIRROR_ANNOTATION in pod.meta.annotations or (ref is not None and ref.get("kind") == "Node" and ref.get("apiVersion") == "v1"):
        return STAYS, "mirror pod (the kubelet's)"  # the kubelet makes a static pod's mirror owned by its Node
    if any(isinstance(v, dict) and "emptyDir" in v for v in pod.volumes) and not flags.delete_emptydir_data:
        return REFUSED, EMPTYDIR_REFUSAL
    if ref is None and not flags.force:
        return REFUSED, UNMANAGED_REFUSAL
    return EVICTED, ""


@dataclass
class Budget:
    """A PodDisruptionBudget as the Eviction API reads it, with the disruptions this drain spent."""

    obj: KubeObject
    selector: Selector | None
    allowed: int
    current: int = 0
    desired: int = 0
    #: The status was computed here (the budget had none, or a later round of the drain).
    computed: bool = False

    @classmethod
    def of(cls, obj: KubeObject, cluster: Cluster | None = None) -> Budget:
        """The budget with its status; without one (and with ``cluster``), computed as the disruption controller would."""
        raw_sel = obj.spec.get("selector")
        sel: Selector | None = None
        if raw_sel is not None:  # a nil selector matches nothing; an empty one matches every pod
            try:
                sel = parse_label_selector(raw_sel, "spec.selector")
            except InputError:
                sel = None
        status = obj.status
        budget = cls(obj, sel, _int(status.get("disruptionsAllowed")), _int(status.get("currentHealthy")),
                     _int(status.get("desiredHealthy")))
        if not status and cluster is not None:
            budget.recompute(PodCensus.of(cluster))
        return budget

    def covers(self, pod: Pod) -> bool:
        return self.obj.namespace == pod.namespace and self.selector is not None and self.selector.matches(pod.labels)

    def recompute(self, census: PodCensus) -> None:
        """The disruption controller's status from the pods as they are now."""
        matching = [(pod, healthy) for pod, healthy in census.pods if self.covers(pod)]
        pods = [pod for pod, _ in matching]
        scale = census.expected_scale(pods)
        s = budget_status(self.obj.spec, len(pods), sum(1 for _, h in matching if h), scale)
        self.current, self.desired, self.allowed = s.current_healthy, s.desired_healthy, s.disruptions_allowed
        self.computed = True

    def spend(self, pod: Pod) -> BudgetBlock | None:
        """``checkAndDecrement`` after the unhealthy-pod rules: None when the eviction may go ahead."""
        key = self.obj.key
        if not _pod_ready(pod):
            policy = self.obj.spec.get("unhealthyPodEvictionPolicy")
            if policy == "AlwaysAllow" or (self.current >= self.desired and self.desired > 0):
                return None  # an unready pod does not count as a disruption
        generation = _int(self.obj.raw.get("metadata", {}).get("generation"))
        if not self.computed and _int(self.obj.status.get("observedGeneration")) < generation:
            return BudgetBlock(key, self.allowed, f"the disruption controller has not observed {key} yet (429, retried)")
        if self.allowed <= 0:
            return BudgetBlock(key, self.allowed, self._refusal())
        self.allowed -= 1
        return None

    def _refusal(self) -> str:
        name = self.obj.name
        if self.allowed < 0:
            return f"the disruption budget {name} allows a negative number of disruptions"
        if self.current <= self.desired:
            return f"The disruption budget {name} needs {self.desired} healthy pods and has {self.current} currently"
        return f"The disruption budget {name} does not allow evicting pods currently"


@dataclass(frozen=True)
class BudgetStatus:
    """What the disruption controller writes into a budget's status."""

    expected_pods: int
    current_healthy: int
    desired_healthy: int
    disruptions_allowed: int


def budget_status(spec: dict[str, Any], pods: int, healthy: int, scale: int | None) -> BudgetStatus:
    """The disruption controller's arithmetic: ``pods`` match the selector, ``healthy`` of them ready,
    ``scale`` the sum of their controllers' replicas (None: unknown, the matching pods' count stands in).

    maxUnavailable and a percentage minAvailable count against the controllers' scale (percentages
    rounded up), an integer minAvailable against the pods, neither field expects nothing; disruptionsAllowed = currentHealthy -
    desiredHealthy, never below 0, and 0 when no pod is expected."""
    expected, desired = 0, 0  # neither field: nothing is expected, so nothing is allowed
    if spec.get("maxUnavailable") is not None:
        expected = pods if scale is None else scale
        desired = max(0, expected - _scaled(spec["maxUnavailable"], expected))
    elif spec.get("minAvailable") is not None:
        value = spec["minAvailable"]
        if isinstance(value, str) and value.endswith("%"):
            expected = pods if scale is None else scale
            desired = _scaled(value, expected)
        else:
            expected, desired = pods, _int(value)
    allowed = healthy - desired if expected > 0 else 0
    return BudgetStatus(expected, healthy, desired, max(0, allowed))


def _scaled(value: Any, total: int) -> int:
    """An int-or-percent against ``total``, a percentage rounded up."""
    if isinstance(value, str) and value.endswith("%"):
        return -(-_int(value[:-1]) * total // 100)
    return _int(value)


@dataclass
class PodCensus:
    """The pods a budget may match, each with whether it counts as healthy, and the controllers' replicas."""

    pods: list[tuple[Pod, bool]]
    #: "namespace/Kind/name" -> replicas, for the controllers the snapshot holds.
    replicas: dict[str, int] = field(default_factory=dict)
    #: ReplicaSet "namespace/name" -> its Deployment's "namespace/Deployment/name".
    owners: dict[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, cluster: Cluster, gone: Collection[str] = (), placed: Iterable[Pod] = (),
           pending: Iterable[Pod] = ()) -> PodCensus:
        """``cluster``'s pods less ``gone`` (healthy when bound, not terminating and ready), ``placed``
        replacements (counted healthy) and ``pending`` ones (not healthy)."""
        pods = [(p, bool(p.node_name) and p.meta.deletion_timestamp is None and _pod_ready(p))
                for p in cluster.pods if p.key not in gone and p.phase not in ("Succeeded", "Failed")]
        pods += [(p, True) for p in placed] + [(p, False) for p in pending]
        census = cls(pods)
        for kind in ("Deployment", "ReplicaSet", "StatefulSet", "ReplicationController"):
            for obj in cluster.of_kind(kind):
                census.replicas[f"{obj.namespace}/{kind}/{obj.name}"] = _int(obj.spec.get("replicas", 1))
                ref = obj.meta.controller_ref() if kind == "ReplicaSet" else None
                if ref is not None and ref.get("kind") == "Deployment":
                    census.owners[f"{obj.namespace}/{obj.name}"] = f"{obj.namespace}/Deployment/{ref.get('name')}"
        return census

    def expected_scale(self, pods: list[Pod]) -> int | None:
        """The sum of the matching pods' controllers' replicas; None when a pod's controller is not in the snapshot."""
        seen: dict[str, int] = {}
        for pod in pods:
            ref = controller_of(pod)
            if ref is None:
                continue  # the controller lists such a pod as unmanaged
            key = f"{pod.namespace}/{ref.get('kind')}/{ref.get('name')}"
            key = self.owners.get(f"{pod.namespace}/{ref.get('name')}", key) if ref.get("kind") == "ReplicaSet" else key
            if key not in self.replicas:
                return None
            seen[key] = self.replicas[key]
        return sum(seen.values())


def _int(value: Any) -> int:
    try:
        return int(value or 0)
    except (TypeError, ValueError):
        return 0


def _pod_ready(pod: Pod) -> bool:
    """``IsPodReady``; a snapshot without conditions says nothing against it (taken as ready)."""
    conditions = (pod.raw.get("status") or {}).get("conditions")
    if not isinstance(conditions, list):
        return True
    for c in conditions:
        if isinstance(c, dict) and c.get("type") == "Ready":
            return c.get("status") == "True"
    return True


def check_budgets(pod: Pod, budgets: list[Budget]) -> BudgetBlock | None:
    """The Eviction API's budget check for one pod (terminal, pending and terminating pods skip it)."""
    if pod.phase in ("Succeeded", "Failed", "Pending") or pod.meta.deletion_timestamp is not None:
        return None
    matching = [b for b in budgets if b.covers(pod)]
    if len(matching) > 1:
        names = ", ".join(b.obj.key for b in matching)
        return BudgetBlock(names, min(b.allowed for b in matching),
                           "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.")
    return matching[0].spend(pod) if matching else None


# --------------------------------------------------------------------------- the plan


@dataclass
class DrainPlan:
    """Every pod of the drained nodes with its fate, and the pending pods that replace the evicted ones."""

    nodes: list[str]
    flags: DrainFlags
    evictions: list[Eviction] = field(default_factory=list)
    #: The replacements' manifests, in eviction order (creationTimestamp one second apart).
    recreated: list[dict[str, Any]] = field(default_factory=list)
    #: Replacement pod key -> its controller ("Kind name").
    controllers: dict[str, str] = field(default_factory=dict)
    #: The pods evicted in each round of kubectl's retries (round 1: the first attempt).
    rounds: list[list[str]] = field(default_factory=list)
    budgets: list[Budget] = field(default_factory=list)
    #: The drained nodes' pods by key, and every pod key in use (replacement names avoid them).
    pods: dict[str, Pod] = field(default_factory=dict)
    taken: set[str] = field(default_factory=set)

    @property
    def evicted_keys(self) -> set[str]:
        return {e.pod for e in self.evictions if e.action == EVICTED}


def drained_nodes(cluster: Cluster, names: Iterable[str], selector: Selector | None) -> list[str]:
    """The nodes named or selected, by name; an unknown name or a selector matching nothing is bad input."""
    out: set[str] = set()
    for name in names:
        if cluster.node(name) is None:
            raise InputError(f'node "{name}" is not in the cluster')
        out.add(name)
    if selector is not None:
        chosen = [n.name for n in cluster.nodes if selector.matches(n.labels)]
        if not chosen:
            raise InputError(f'no node matches the selector "{selector}"')
        out.update(chosen)
    if not out:
        raise UsageError("name the nodes to drain: --drain NODE or --drain-selector SELECTOR")
    return sorted(out)


def plan_drain(cluster: Cluster, nodes: list[str], flags: DrainFlags, now: datetime) -> DrainPlan:
    """The first round of the drain of ``nodes`` (sorted): pods of each by namespace/name, budgets spent in
    that order (a budget without status computed from the pods); ``retry_blocked`` runs the next rounds."""
    plan = DrainPlan(list(nodes), flags, taken={p.key for p in cluster.pods})
    if not flags.disable_eviction:
        plan.budgets = [Budget.of(o, cluster) for o in cluster.of_kind("PodDisruptionBudget")]
    on_node: dict[str, list[Pod]] = {}
    for p in cluster.bound_pods():
        on_node.setdefault(p.node_name, []).append(p)
    plan.rounds.append([])
    for node in nodes:
        pods = sorted(on_node.get(node, []), key=lambda p: (p.namespace, p.name))
        filtered = [(pod, *filter_pod(pod, flags)) for pod in pods]
        refused = any(action == REFUSED for _, action, _ in filtered)
        for pod, action, reason in filtered:
            plan.pods[pod.key] = pod
            e = Eviction(pod.key, node, action, reason, _controller_label(pod))
            plan.evictions.append(e)
            if action == EVICTED and refused:  # GetPodsForDeletion returned errors: nothing is evicted there
                e.action, e.reason = STAYS, NODE_REFUSED
            elif action == EVICTED:
                _evict_or_block(plan, e, now)
    return plan


def _evict_or_block(plan: DrainPlan, e: Eviction, now: datetime) -> None:
    """The Eviction API's answer for ``e`` in the current round: evicted (and re-created) or blocked."""
    pod = plan.pods[e.pod]
    e.block = check_budgets(pod, plan.budgets)
    if e.block is not None:
        e.action, e.reason = BLOCKED, e.block.message
        return
    e.action, e.reason, e.round = EVICTED, "", len(plan.rounds)
    plan.rounds[-1].append(e.pod)
    _recreate(plan, pod, e, plan.taken, now)


def retry_blocked(plan: DrainPlan, census: PodCensus, now: datetime) -> bool:
    """The next round: every budget recomputed from ``census``, the blocked evictions retried in order;
    True when one went through."""
    for budget in plan.budgets:
        budget.recompute(census)
    plan.rounds.append([])
    for e in plan.evictions:
        if e.action == BLOCKED:
            _evict_or_block(plan, e, now + timedelta(seconds=RETRY_SECONDS * (len(plan.rounds) - 1)))
    return bool(plan.rounds[-1])


def census_after(cluster: Cluster, plan: DrainPlan, sim: SimulationResult | None) -> PodCensus:
    """The pods after a round: the evicted gone, their replacements healthy when placed (as if the kubelet
    started them and they became ready), pending when not."""
    final = {p.pod: p for p in sim.placements} if sim else {}
    placed = {key for key, p in final.items() if p.placed}
    replacements = [Pod(raw) for raw in plan.recreated]
    return PodCensus.of(cluster, plan.evicted_keys, [p for p in replacements if p.key in placed],
                        [p for p in replacements if p.key not in placed])


def _recreate(plan: DrainPlan, pod: Pod, e: Eviction, taken: set[str], now: datetime) -> None:
    """The replacement the pod's controller creates, or the reason there is none."""
    ref = controller_of(pod)
    if ref is None:
        e.reason = "no controller: lost (--force)"
        return
    if ref.get("kind") not in RECREATING_KINDS:
        e.reason = f"controller kind {ref.get('kind')} is not modelled: not re-created here"
        return
    raw = replacement(pod, ref, taken, now + timedelta(seconds=len(plan.recreated)))
    md = raw["metadata"]
    key = f"{md['namespace']}/{md['name']}"
    taken.add(key)
    e.recreated_as = key
    plan.recreated.append(raw)
    plan.controllers[key] = str(e.controller)


def replacement(pod: Pod, ref: dict[str, Any], taken: set[str], created: datetime) -> dict[str, Any]:
    """The pending pod a controller creates for ``pod``: its spec without the node, no status, a new
    identity (a StatefulSet pod keeps its name), ``created`` as creationTimestamp."""
    raw = copy.deepcopy(pod.raw)
    md = raw.setdefault("metadata", {})
    for k in ("resourceVersion", "managedFields", "deletionTimestamp", "deletionGracePeriodSeconds"):
        md.pop(k, None)
    raw.pop("status", None)
    (raw.get("spec") or {}).pop("nodeName", None)
    md["namespace"] = pod.namespace
    md["uid"] = str(uuid.uuid5(uuid.NAMESPACE_URL, f"kschedctl-drain/{pod.uid}"))
    md["creationTimestamp"] = created.strftime("%Y-%m-%dT%H:%M:%SZ")
    if ref.get("kind") != "StatefulSet":
        md["name"] = _new_name(pod, str(md.get("generateName") or f"{ref.get('name')}-"), taken)
    return raw


def _new_name(pod: Pod, prefix: str, taken: set[str]) -> str:
    """``generateName`` plus five characters, stable for the same pod (derived from its uid)."""
    for attempt in range(100):
        digest = hashlib.sha256(f"{pod.uid}/{attempt}".encode()).digest()
        name = prefix + "".join(NAME_ALPHABET[b % len(NAME_ALPHABET)] for b in digest[:5])
        if f"{pod.namespace}/{name}" not in taken:
            return name
    raise InputError(f"no free name for the replacement of {pod.key}")  # pragma: no cover


# --------------------------------------------------------------------------- the cluster after the drain


def drained_cluster(cluster: Cluster, cordon: Iterable[str], remove_pods: set[str], remove_nodes: Iterable[str] = ()) -> Cluster:
    """A copy of ``cluster`` with ``cordon`` unschedulable, ``remove_nodes`` and their pods gone, ``remove_pods`` gone.

    Deep-copied: a run writes nominations and nodes to the pods it schedules."""
    cordoned, removed = set(cordon), set(remove_nodes)
    return cluster.copy_with(
        nodes=[_cordoned(n) for n in cluster.nodes if n.name in cordoned and n.name not in removed],
        drop_nodes=removed,
        pods=[copy.deepcopy(p) for p in cluster.pods if p.key not in remove_pods and p.node_name not in removed],
    )


def _cordoned(node: Node) -> Node:
    """``kubectl cordon``: the node with ``spec.unschedulable: true``."""
    raw = copy.deepcopy(node.raw)
    raw.setdefault("spec", {})["unschedulable"] = True
    return Node(raw)


# --------------------------------------------------------------------------- the run


@dataclass
class Landing:
    """Where one re-created pod went."""

    pod: str
    evicted: str
    node: str  # the drained node it left
    controller: str
    placement: Placement | None

    def to_dict(self) -> dict[str, Any]:
        p = self.placement
        return {
            "pod": self.pod,
            "evicted": self.evicted,
            "from": self.node,
            "controller": self.controller,
            "outcome": p.outcome if p else "not tried",
            "node": p.node if p else None,
            "fitError": p.fit_error if p else None,
            "nominatedNodeName": p.nominated_node_name if p else None,
            "victims": list(p.preemption.victims) if p and p.preemption else [],
            "tiedWith": [c for c in p.candidates if c != p.node] if p and p.placed and len(p.candidates) > 1 else [],
        }


@dataclass
class DrainResult:
    plan: DrainPlan
    simulation: SimulationResult | None
    landings: list[Landing] = field(default_factory=list)
    #: The nodes are deleted (a scale-down), not cordoned.
    removed: bool = False
    notes: list[str] = field(default_factory=list)
    #: ``--timeout`` ended kubectl's retries while budgets could still have let pods go.
    timed_out: bool = False

    @property
    def refused(self) -> list[Eviction]:
        return [e for e in self.plan.evictions if e.action == REFUSED]

    @property
    def blocked(self) -> list[Eviction]:
        return [e for e in self.plan.evictions if e.action == BLOCKED]

    @property
    def lost(self) -> list[Eviction]:
        return [e for e in self.plan.evictions if e.lost]

    @property
    def not_placed(self) -> list[Landing]:
        return [ln for ln in self.landings if ln.placement is None or not ln.placement.placed]

    @property
    def succeeded(self) -> bool:
        """Every pod left its node and every replacement was placed."""
        return not self.refused and not self.blocked and not self.not_placed

    def kubectl_outcome(self) -> str:
        """What ``kubectl drain`` itself reports: it waits for the evicted pods to go, not for their replacements."""
        if self.refused:
            return "kubectl drain fails (exit 1): it refuses pods"
        if self.blocked and self.plan.flags.timeout:
            return (f"kubectl drain fails (exit 1) when --timeout {self.plan.flags.timeout:g}s passes, having retried the "
                    f"blocked evictions every {RETRY_SECONDS}s")
        if self.blocked:
            return f"kubectl drain does not finish: it retries the blocked evictions every {RETRY_SECONDS}s until interrupted"
        pending = len(self.not_placed)
        tail = f"; the cluster is left with {pending} replacement(s) Pending (FitError below)" if pending else ""
        return "kubectl drain reports success (exit 0)" + tail

    def verdict(self) -> str:
        nodes = ", ".join(self.plan.nodes)
        reasons: list[str] = []
        refused = self.refused
        if refused:
            flags = sorted({"--delete-emptydir-data" if e.reason == EMPTYDIR_REFUSAL else "--force" for e in refused})
            reasons.append(f"kubectl drain refuses {len(refused)} pod(s) (allowed by {' '.join(flags)})")
        blocked = self.blocked
        if blocked:
            budgets = sorted({e.block.budget for e in blocked if e.block})
            reasons.append(f"{len(blocked)} eviction(s) blocked by PodDisruptionBudget {', '.join(budgets)}")
        missing = self.not_placed
        if missing:
            reasons.append(f"{len(missing)} re-created pod(s) do not fit")
        lost = self.lost
        tail = f"; {len(lost)} pod(s) without a controller are lost" if lost else ""
        if not reasons:
            return f"drain possible: {nodes}; every evicted pod's replacement is placed{tail}"
        return f"drain of {nodes} not possible: " + "; ".join(reasons) + tail

    def to_dict(self) -> dict[str, Any]:
        blocks = [{"pod": e.pod, **e.block.to_dict()} for e in self.blocked if e.block]
        return {
            "drained": list(self.plan.nodes),
            "removed": self.removed,
            "flags": self.plan.flags.to_dict(),
            "verdict": self.verdict(),
            "succeeded": self.succeeded,
            "pods": [e.to_dict() for e in self.plan.evictions],
            "landings": [ln.to_dict() for ln in self.landings],
            "blockingBudgets": blocks,
            "timeoutSeconds": self.plan.flags.timeout,
            "rounds": [{"round": i, "evicted": list(keys)} for i, keys in enumerate(self.plan.rounds, 1)],
            "computedBudgets": [b.obj.key for b in self.plan.budgets if not b.obj.status],
            "kubectl": self.kubectl_outcome(),
            "lost": [e.pod for e in self.lost],
            "pendingAtStart": [
                {"pod": p.pod, "outcome": p.outcome, "node": p.node, "nominatedNodeName": p.nominated_node_name}
                for p in (self.simulation.placements if self.simulation else []) if p.pending_at_start
            ],
            "simulation": self.simulation.to_dict() if self.simulation else None,
            "notes": list(self.notes),
        }


def run_drain(
    cluster: Cluster,
    config: SchedulerConfig,
    nodes: list[str],
    flags: DrainFlags,
    registry: Registry | None = None,
    *,
    options: RunOptions | None = None,
    now: datetime | None = None,
    remove: bool = False,
    progress: Progress | None = None,
) -> DrainResult:
    """Plan the drain of ``nodes``, then schedule the replacements on what is left (``remove``: the nodes
    are deleted rather than cordoned, as a scale-down does)."""
    start = now or datetime.now(UTC).replace(microsecond=0)
    plan = plan_drain(cluster, nodes, flags, start)
    result = DrainResult(plan, None, removed=remove)

    def place() -> None:
        after = drained_cluster(cluster, [] if remove else nodes, plan.evicted_keys, nodes if remove else ())
        if plan.recreated:
            result.simulation = _schedule(after, config, plan, registry, options, progress)

    place()
    while plan.budgets and any(e.action == BLOCKED for e in plan.evictions):
        if flags.max_rounds is not None and len(plan.rounds) >= flags.max_rounds:
            result.timed_out = True
            break
        if not retry_blocked(plan, census_after(cluster, plan, result.simulation), start):
            plan.rounds.pop()  # no progress: the budgets block for good
            break
        place()
    final = {p.pod: p for p in result.simulation.placements} if result.simulation else {}
    for e in plan.evictions:
        if e.recreated_as is not None:
            result.landings.append(Landing(e.recreated_as, e.pod, e.node, str(e.controller), final.get(e.recreated_as)))
    if any(ln.placement and ln.placement.placed and len(ln.placement.candidates) > 1 for ln in result.landings):
        result.notes.append("a tie among candidate nodes decided some landings (tiedWith): node order chose, "
                            "and kube-scheduler's parallel filtering may choose another of them")
    result.notes += _round_notes(result)
    return result


def _round_notes(result: DrainResult) -> list[str]:
    """What the rounds assume, and what kubectl says when its replacements stay pending."""
    plan, notes = result.plan, []
    computed = [b.obj.key for b in plan.budgets if not b.obj.status]
    if computed:
        notes.append(f"PodDisruptionBudget {', '.join(computed)} has no status: computed from the pods and their controllers "
                     "as the disruption controller would (expectedPods from the controllers' replicas the snapshot holds, "
                     "else the matching pods)")
    if len(plan.rounds) > 1:
        done = "; ".join(f"round {i}: {', '.join(_name(k) for k in keys) or '-'}" for i, keys in enumerate(plan.rounds, 1))
        notes.append(f"kubectl drain retries an eviction a budget refuses every {RETRY_SECONDS}s: {len(plan.rounds)} rounds "
                     f"({done}); between rounds a placed replacement counts as healthy, which the real kubelet must earn "
                     "(started and ready), so a round takes at least 5s and longer as the pods start")
    if len(plan.rounds) > 1 or (result.blocked and any(plan.rounds)):
        notes.append("kubectl evicts every pod of a node at once and retries each refused one: which pod of a controller "
                     "goes first is not known from outside; kschedctl spends a budget in pod name order")
    if result.timed_out:
        notes.append(f"--timeout {plan.flags.timeout:g}s: {plan.flags.max_rounds} round(s) fit (the first at once, one per "
                     f"{RETRY_SECONDS}s retry, each replacement taken as ready by then); the budgets would allow more later")
    if not result.refused and not result.blocked and result.not_placed:
        notes.append(f"{result.kubectl_outcome()}: kubectl waits for the evicted pods to go, not for their replacements")
    return notes


def _name(key: str) -> str:
    return key.split("/", 1)[-1]


def _schedule(after: Cluster, config: SchedulerConfig, plan: DrainPlan, registry: Registry | None,
              options: RunOptions | None, progress: Progress | None) -> SimulationResult:
    """The replacements through the loop exactly as ``simulate -f`` runs bare pods (the snapshot's pending pods first)."""
    from kschedctl.snapshot.loader import Document
    from kschedctl.whatif.simulate import simulate_streams, workload_streams
    from kschedctl.whatif.workloads import PodFactory, parse_manifests

    docs = [Document("<drain>", i, raw) for i, raw in enumerate(plan.recreated, 1)]
    manifests = parse_manifests(docs, after)
    factory = PodFactory(manifests, after, private=True)
    streams, excluded = workload_streams(manifests, factory)
    for stream, raw in zip(streams, plan.recreated, strict=True):
        md = raw["metadata"]
        stream.workload = plan.controllers[f"{md['namespace']}/{md['name']}"]
    sim = simulate_streams(factory.cluster, config, streams, registry, options=options or RunOptions(),
                           exclude_pod_uids=excluded, owns_cluster=True, progress=progress)
    sim.notes[:0] = manifests.notes
    return sim


# --------------------------------------------------------------------------- scale-down


@dataclass
class ScaleDownResult:
    """How many nodes of a group can go, one at a time, and the drain that stopped the search."""

    group: str
    #: The candidates in removal order, each with its utilization (the larger of cpu and memory requested / allocatable).
    candidates: list[tuple[str, float]]
    removable: list[str] = field(default_factory=list)
    #: The last successful removal's drain (of every node taken so far).
    last_success: DrainResult | None = None
    #: The drain that failed: the next node could not go.
    stopped_by: DrainResult | None = None
    blocked_node: str | None = None
    limit: int = 0

    @property
    def succeeded(self) -> bool:
        """Every candidate (or ``limit`` of them) can go."""
        wanted = min(self.limit, len(self.candidates)) if self.limit else len(self.candidates)
        return len(self.removable) >= wanted and self.stopped_by is None

    def verdict(self) -> str:
        n = len(self.removable)
        head = f"{n} of {len(self.candidates)} node(s) of {self.group} can be removed"
        if self.stopped_by is None:
            return head + (f" (--count {self.limit})" if self.limit and n == self.limit else "")
        why = self.stopped_by.verdict().split(": ", 1)[-1]
        return f"{head}; the next, {self.blocked_node}, cannot: {why}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "group": self.group,
            "candidates": [{"node": n, "utilization": round(u, 4)} for n, u in self.candidates],
            "removable": list(self.removable),
            "blockedNode": self.blocked_node,
            "verdict": self.verdict(),
            "succeeded": self.succeeded,
            "lastDrain": self.last_success.to_dict() if self.last_success else None,
            "stoppedBy": self.stopped_by.to_dict() if self.stopped_by else None,
        }


def utilization(cluster: Cluster, names: Iterable[str], features: Features) -> dict[str, float]:
    """cluster-autoscaler's node utilization: the larger of cpu and memory requests over allocatable
    (the requests counted by the rules of ``features``' version)."""
    from kschedctl.framework.nodeinfos import Snapshot

    snap = Snapshot(cluster, features=features)
    out: dict[str, float] = {}
    for name in names:
        ni = snap.node_info_map[name]
        req, alloc = ni.requested, ni.allocatable
        cpu = req.milli_cpu / alloc.milli_cpu if alloc.milli_cpu else 0.0
        mem = req.memory / alloc.memory if alloc.memory else 0.0
        out[name] = max(cpu, mem)
    return out


def scale_down(
    cluster: Cluster,
    config: SchedulerConfig,
    group: Selector,
    flags: DrainFlags,
    registry: Registry | None = None,
    *,
    count: int = 0,
    options: RunOptions | None = None,
    now: datetime | None = None,
    progress: Progress | None = None,
) -> ScaleDownResult:
    """Remove the group's nodes least requested first, each step a drain of every node taken so far (the nodes
    deleted, their pods' replacements placed on the rest), until one fails or ``count`` are gone."""
    names = [n.name for n in cluster.nodes if group.matches(n.labels)]
    if not names:
        raise InputError(f'no node matches the selector "{group}"')
    used = utilization(cluster, names, config.features)
    order = sorted(names, key=lambda n: (used[n], n))
    result = ScaleDownResult(str(group), [(n, used[n]) for n in order], limit=count)
    for i, name in enumerate(order):
        if count and i >= count:
            break
        drain = run_drain(cluster, config, order[: i + 1], flags, registry, options=options, now=now, remove=True,
                          progress=progress)
        if not drain.succeeded:
            result.stopped_by, result.blocked_node = drain, name
            break
        result.removable.append(name)
        result.last_success = drain
    return result
