"""What changed in kube-scheduler from one minor version to the next, as kschedctl reproduces it.

``kschedctl diff-versions`` shows what a pod's cycle does differently under two versions; this
table is what it names as the cause of each difference. Two kinds of entries:

* rules that changed with no feature gate (a message, a status code, a score formula, the
  tie-break): one entry per row of ``kube.rules``, the same row the code that holds both rules
  asks (``Features.follows``), so what is switched and what is cited are one thing;
* feature gates the scheduler reads (``GATE_EFFECTS``), whose effect applies whenever the two
  runs' effective values differ: a default that flipped between the versions
  (``kube.gate_tables``) or a ``--feature-gates`` override.

Each entry names the plugins and extension points whose results it can change, the kinds of
difference it can make there (another outcome, another status code, other scores, other words
only), its words in both directions (an upgrade brings it, a downgrade goes back before it) and
a trigger: what must be present in the pod, the cluster or the two cycles for the entry to
matter at all. A difference found in two traces is attributed only to entries that touch the
part that differs, can make that kind of difference, and whose trigger is present.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from kschedctl.framework.podgroups import pod_group_name
from kschedctl.kube import gates, rules
from kschedctl.kube.features import Features
from kschedctl.kube.versions import gate_specs
from kschedctl.snapshot.cluster import Cluster
from kschedctl.snapshot.model import Pod

#: Extension points (and two cycle-level parts) a change can touch, as ``diff-versions`` names them.
PRE_ENQUEUE = "preEnqueue"
PRE_FILTER = "preFilter"
FILTER = "filter"
SCORE = "score"
POST_FILTER = "postFilter"
#: Which of the top-scoring nodes is selected (no plugin).
SELECTION = "selection"
#: The loop across pods (``simulate``), not one cycle.
BATCHING = "batching"
#: Permit, whose statuses go into the PodScheduled message of a pod-group cycle.
PERMIT = "permit"

#: The kinds of difference between two cycles, most telling first: another outcome or Filter verdict
#: (feasible or not on a node, the node selected, the preemption), another status code for the same
#: verdict (Unschedulable or UnschedulableAndUnresolvable: whether preemption tries the node), other
#: scores for the same decision, other words only.
OUTCOME = "outcome"
CODE = "code"
SCORE_KIND = "score"
MESSAGE = "message"
KINDS = (OUTCOME, CODE, SCORE_KIND, MESSAGE)
ANY_KIND = frozenset(KINDS)

#: The objects of Dynamic Resource Allocation a cluster may hold.
DRA_KINDS = ("DeviceClass", "ResourceSlice", "ResourceClaim", "ResourceClaimTemplate")


@dataclass(frozen=True)
class Evidence:
    """What a change's trigger looks at: the pod, the cluster, and what either side's cycle showed."""

    pod: Pod
    cluster: Cluster
    #: (plugin, status code) of every rejection, of a node at Filter or of the pod at PreEnqueue/PreFilter.
    rejections: frozenset[tuple[str, str]] = frozenset()
    #: Plugins whose PreFilter ran and did not skip.
    prefiltered: frozenset[str] = frozenset()
    #: Plugins that gave some node a weighted score other than 0.
    scored: frozenset[str] = frozenset()
    #: PostFilter plugins whose answer went into the PodScheduled message (no node was nominated).
    post_filter_words: frozenset[str] = frozenset()
    #: Several nodes shared the top total.
    tie: bool = False

    def rejected_by(self, plugin: str, code: str | None = None) -> bool:
        return any(p == plugin and (code is None or c == code) for p, c in self.rejections)


@dataclass(frozen=True)
class Trigger:
    """When a change can matter: ``text`` in words (shown beside the change), ``test`` over the evidence."""

    text: str
    test: Callable[[Evidence], bool]

    def __call__(self, evidence: Evidence) -> bool:
        return self.test(evidence)


def _rejected(text: str, plugin: str, code: str | None = None) -> Trigger:
    return Trigger(text, lambda e: e.rejected_by(plugin, code))


def _has_claims(pod: Pod) -> bool:
    return bool(pod.resource_claims)


def _dra_in_use(e: Evidence) -> bool:
    return _has_claims(e.pod) or any(e.cluster.of_kind(k) for k in DRA_KINDS)


def _claimless_post_filter(e: Evidence) -> bool:
    return not _has_claims(e.pod) and "DynamicResources" in e.post_filter_words


def _sidecar_host_ports(e: Evidence) -> bool:
    return any(c.is_sidecar and any(p.host_port for p in c.ports)
               for pod in (e.pod, *e.cluster.pods) for c in pod.init_containers)


def _pod_level_resources(e: Evidence) -> bool:
    return any(p.pod_requests is not None or p.pod_limits is not None for p in (e.pod, *e.cluster.pods))


def _claims_volumes(e: Evidence) -> bool:
    return any("persistentVolumeClaim" in v or "ephemeral" in v for v in e.pod.volumes)


def _in_pod_group(e: Evidence) -> bool:
    return pod_group_name(e.pod) is not None


def _all_pods(e: Evidence) -> tuple[Pod, ...]:
    return (e.pod, *e.cluster.pods)


def _has_image_volume(e: Evidence) -> bool:
    return any(isinstance(v.get("image"), dict) for v in e.pod.volumes)


def _resize_status(pod: Pod) -> bool:
    """The pod's status says something of an in-place resize: a container's (or init container's)
    ``resources`` or ``allocatedResources``, the pod's own, or an infeasible resize."""
    statuses = (*pod.container_statuses, *pod.init_container_statuses)
    return (pod.resize_infeasible or pod.status_resources is not None or pod.status_allocated is not None
            or any("resources" in s or "allocatedResources" in s for s in statuses))


def _resizing(e: Evidence) -> bool:
    return any(_resize_status(p) for p in _all_pods(e))


def _pod_level_status(e: Evidence) -> bool:
    return any(p.status_resources is not None or p.status_allocated is not None for p in _all_pods(e))


def _bind_mount_options(e: Evidence) -> bool:
    spec = e.pod.raw.get("spec")
    spec = spec if isinstance(spec, dict) else {}
    for key in ("containers", "initContainers", "ephemeralContainers"):
        containers = spec.get(key)
        for c in containers if isinstance(containers, list) else []:
            mounts = c.get("volumeMounts") if isinstance(c, dict) else None
            if isinstance(mounts, list) and any(isinstance(m, dict) and m.get("bindMountOptions") for m in mounts):
                return True
    return False


def _gated_nominated(e: Evidence) -> bool:
    return any(not p.node_name and p.nominated_node_name and p.scheduling_gates for p in e.cluster.pods)


def _driver_must_be_installed(e: Evidence) -> bool:
    return bool(e.pod.volumes) and any(
        d.spec.get("preventPodSchedulingIfMissing") is True for d in e.cluster.of_kind("CSIDriver")
    )


def _tainted_device(e: Evidence) -> bool:
    if not _has_claims(e.pod):
        return False
    if e.cluster.of_kind("DeviceTaintRule"):
        return True
    for s in e.cluster.of_kind("ResourceSlice"):
        devices = s.spec.get("devices")
        if any(isinstance(d, dict) and d.get("taints") for d in (devices if isinstance(devices, list) else [])):
            return True
    return False


def _taint_rules(e: Evidence) -> bool:
    return _has_claims(e.pod) and bool(e.cluster.of_kind("DeviceTaintRule"))


TAINT_REJECTED = _rejected("a taint rejected a node (TaintToleration)", "TaintToleration")
FIT_UNRESOLVABLE = _rejected("NodeResourcesFit rejected a node as UnschedulableAndUnresolvable", "NodeResourcesFit",
                             "UnschedulableAndUnresolvable")
VOLUME_RESTRICTED = _rejected("VolumeRestrictions rejected the pod or a node", "VolumeRestrictions")
SIDECAR_HOST_PORTS = Trigger("a sidecar (restartable init) container has a host port, in the pod or on a node",
                             _sidecar_host_ports)
DRA_IN_USE = Trigger("the pod has ResourceClaims or the cluster holds DRA objects", _dra_in_use)
CLAIMLESS_POST_FILTER = Trigger("the pod has no ResourceClaims and DynamicResources' PostFilter answer is in the "
                                "PodScheduled message", _claimless_post_filter)
TIE = Trigger("several nodes share the top total", lambda e: e.tie)
BALANCE_SCORED = Trigger("NodeResourcesBalancedAllocation scored a node",
                         lambda e: "NodeResourcesBalancedAllocation" in e.scored)
FEATURES_NEEDED = Trigger("NodeDeclaredFeatures checked the pod (it needs a feature a node declares)",
                          lambda e: "NodeDeclaredFeatures" in e.prefiltered or e.rejected_by("NodeDeclaredFeatures"))
POD_LEVEL_RESOURCES = Trigger("a pod has spec.resources (pod-level requests or limits)", _pod_level_resources)
POD_GROUP = Trigger("the pod belongs to a PodGroup", _in_pod_group)
VOLUMES_TO_BIND = Trigger("the pod has a PersistentVolumeClaim or ephemeral volume", _claims_volumes)
IMAGE_VOLUMES = Trigger("the pod has an image volume", _has_image_volume)
RESIZING = Trigger("a pod's status shows an in-place resize (status.resources or allocatedResources, of a container "
                   "or of the pod, or an infeasible resize)", _resizing)
POD_LEVEL_STATUS = Trigger("a pod has its own status.resources or status.allocatedResources", _pod_level_status)
BIND_MOUNT_OPTIONS = Trigger("a container of the pod mounts a volume with bindMountOptions", _bind_mount_options)
GATED_NOMINATED = Trigger("a pod with scheduling gates has status.nominatedNodeName", _gated_nominated)
DRIVER_MUST_BE_INSTALLED = Trigger("the pod has volumes and a CSIDriver sets preventPodSchedulingIfMissing",
                                   _driver_must_be_installed)
TAINTED_DEVICE = Trigger("the pod has ResourceClaims and a device is tainted (in its ResourceSlice or by a "
                         "DeviceTaintRule)", _tainted_device)
TAINT_RULES = Trigger("the pod has ResourceClaims and the cluster holds DeviceTaintRules", _taint_rules)
NEVER_IN_ONE_CYCLE = Trigger("several pods scheduled in one loop (simulate); never one cycle", lambda e: False)


_DRA = ("DynamicResources",)
_FIT_BALANCE = ("NodeResourcesFit", "NodeResourcesBalancedAllocation")
#: The plugins whose results the requests of the pods on a node feed, preemption's included.
_REQUESTS_READ = (*_FIT_BALANCE, "DefaultPreemption")
#: The plugins whose Filter reads the pods on a node (and so the nominated pods added there), and preemption.
_NOMINATED_PODS_READ = ("NodeResourcesFit", "NodePorts", "InterPodAffinity", "PodTopologySpread", "VolumeRestrictions",
                        "NodeVolumeLimits", "DynamicResources", "DefaultPreemption")


@dataclass(frozen=True)
class RuleChange:
    """One change: the version that brought it (or, for a gate, whose value differs), what it touches,
    when it matters, and its words. ``undone``: B runs older rules than A, so the change is gone there."""

    minor: int
    name: str
    kind: str  # "rule" or "gate"
    plugins: tuple[str, ...]
    points: tuple[str, ...]
    text: str
    #: The words going back before ``minor`` (a downgrade).
    back_text: str = ""
    trigger: Trigger = dataclasses.field(default=Trigger("always", lambda e: True), compare=False)
    #: The kinds of difference (``KINDS``) it can make.
    makes: frozenset[str] = ANY_KIND
    undone: bool = False

    def touches(self, plugin: str, point: str) -> bool:
        """Whether this change can alter ``plugin``'s result at ``point`` ("" plugin: the cycle itself)."""
        return point in self.points and (plugin in self.plugins or (not plugin and not self.plugins))

    def explains(self, plugin: str, point: str, kind: str) -> bool:
        """Whether this change can make a difference of ``kind`` in ``plugin``'s result at ``point``."""
        return kind in self.makes and self.touches(plugin, point)

    def going_back(self) -> RuleChange:
        """The change as a downgrade sees it: B goes back before ``minor``."""
        return dataclasses.replace(self, text=self.back_text or self.text, back_text=self.text, undone=not self.undone)

    def line(self) -> str:
        return f"back before v1.{self.minor}: {self.text}" if self.undone else f"v1.{self.minor}: {self.text}"

    def to_dict(self) -> dict[str, object]:
        return {"version": f"v1.{self.minor}", "name": self.name, "kind": self.kind, "plugins": list(self.plugins),
                "points": list(self.points), "text": self.text, "undone": self.undone, "trigger": self.trigger.text}


def _rule(row: rules.VersionRule, plugins: tuple[str, ...], points: tuple[str, ...], text: str, back_text: str,
          trigger: Trigger, makes: Iterable[str] = KINDS) -> RuleChange:
    return RuleChange(row.since, row.name, "rule", plugins, points, text, back_text, trigger, frozenset(makes))


#: Rules that changed with no gate, by the version that brought them.
RULES: tuple[RuleChange, ...] = (
    _rule(rules.TAINT_TOLERATION_MESSAGE, ("TaintToleration",), (FILTER,),
          "TaintToleration's Filter reason no longer quotes the untolerated taint",
          "TaintToleration's Filter reason quotes the untolerated taint again", TAINT_REJECTED, (MESSAGE,)),
    _rule(rules.FIT_UNRESOLVABLE, ("NodeResourcesFit",), (FILTER, POST_FILTER),
          "NodeResourcesFit rejects a request above a node's whole allocatable as UnschedulableAndUnresolvable, "
          "so preemption no longer tries that node",
          "NodeResourcesFit rejects a request above a node's whole allocatable as Unschedulable again, "
          "so preemption tries that node again", FIT_UNRESOLVABLE, (CODE, OUTCOME)),
    _rule(rules.READ_WRITE_ONCE_POD_MESSAGE, ("VolumeRestrictions",), (PRE_FILTER, FILTER),
          "VolumeRestrictions words a ReadWriteOncePod conflict differently",
          "VolumeRestrictions words a ReadWriteOncePod conflict as it did before", VOLUME_RESTRICTED, (MESSAGE,)),
    _rule(rules.NODE_PORTS_SIDECARS, ("NodePorts",), (PRE_FILTER, FILTER),
          "NodePorts counts the host ports of sidecar (restartable init) containers",
          "NodePorts ignores the host ports of sidecar (restartable init) containers again", SIDECAR_HOST_PORTS),
    _rule(rules.DYNAMIC_RESOURCES_SCORE, ("DynamicResources",), (SCORE,),
          "DynamicResources scores nodes (weight 2 in the default profile)",
          "DynamicResources does not score nodes", DRA_IN_USE, (SCORE_KIND,)),
    _rule(rules.DETERMINISTIC_TIE_BREAK, (), (SELECTION,),
          "of the nodes with the top total, the first in the score heap is selected, not one at random",
          "of the nodes with the top total, one is selected at random again", TIE, (OUTCOME,)),
    _rule(rules.BALANCED_ALLOCATION_CHANGE, ("NodeResourcesBalancedAllocation",), (SCORE,),
          "NodeResourcesBalancedAllocation scores the change in balance the pod makes, not the balance after it",
          "NodeResourcesBalancedAllocation scores the balance after the pod again, not the change it makes",
          BALANCE_SCORED, (SCORE_KIND,)),
    _rule(rules.NODE_DECLARED_FEATURES_TABLE, ("NodeDeclaredFeatures",), (PRE_FILTER, FILTER),
          "NodeDeclaredFeatures checks the node features v1.36 defines",
          "NodeDeclaredFeatures checks the node features v1.35 defines", FEATURES_NEEDED),
    _rule(rules.POD_GROUP_CYCLE, ("GangScheduling",), (PRE_ENQUEUE, PRE_FILTER),
          "with GenericWorkload on, a PodGroup's pods are scheduled in one pod-group cycle (its placements "
          "generated and scored as a whole)",
          "there is no pod-group cycle: a PodGroup's pods are scheduled one by one", POD_GROUP),
    _rule(rules.PERMIT_WAIT_MESSAGE, ("GangScheduling",), (PERMIT,),
          "a pod a Permit plugin made wait keeps that plugin's reason in its status, and the pod's name is no longer "
          "quoted (a gang's members read \"waiting for minCount pods from a gang to be scheduled, one or more plugins "
          "asked to wait and no plugin rejected pod\")",
          "a pod a Permit plugin made wait is told only that one or more plugins asked it to wait, its name quoted",
          POD_GROUP, (MESSAGE,)),
    _rule(rules.IMAGE_LOCALITY_IMAGE_VOLUMES, ("ImageLocality",), (SCORE,),
          "ImageLocality adds the images of the pod's image volumes to what it sums (its threshold still counts "
          "the containers only)",
          "ImageLocality sums the containers' images only again, not the image volumes'", IMAGE_VOLUMES,
          (SCORE_KIND,)),
    _rule(rules.GANG_SCHEDULING_BY_GENERIC_WORKLOAD, ("GangScheduling",), (PRE_ENQUEUE, PRE_FILTER),
          "GangScheduling joins the default profile with GenericWorkload (the GangScheduling gate is gone)",
          "GangScheduling joins the default profile with the GangScheduling gate again, not with GenericWorkload",
          POD_GROUP),
    _rule(rules.POD_GROUP_POST_FILTER, ("DefaultPreemption",), (POST_FILTER,),
          "a PodGroup that cannot be scheduled has an extension point of its own, podGroupPostFilter, where "
          "DefaultPreemption preempts for the group as a whole (kschedctl reads the configuration field but does "
          "not run the extension point)",
          "there is no podGroupPostFilter extension point", POD_GROUP, (OUTCOME,)),
    _rule(rules.RESIZE_REQUESTS_MAX_OF_TOTALS, _REQUESTS_READ, (FILTER, SCORE, POST_FILTER),
          "a pod being resized in place requests the largest of its spec, actuated and allocated totals, not the "
          "sum of each container's largest (init containers' status counts; while a resize is infeasible a "
          "container without status counts nothing)",
          "a pod being resized in place requests the sum of each container's largest of spec, actuated and "
          "allocated again", RESIZING),
    _rule(rules.IMAGE_LOCALITY_VOLUME_THRESHOLD, ("ImageLocality",), (SCORE,),
          "ImageLocality's threshold counts the pod's image volumes too, so an image volume scores no higher than "
          "the same image in a container",
          "ImageLocality's threshold counts the containers only again, not the image volumes", IMAGE_VOLUMES,
          (SCORE_KIND,)),
    _rule(rules.NODE_DECLARED_FEATURES_BIND_MOUNTS, ("NodeDeclaredFeatures",), (PRE_FILTER, FILTER),
          "NodeDeclaredFeatures checks the node features v1.37 defines: a pod that mounts a volume with "
          "bindMountOptions needs a node that declares VolumeBindMountOptions",
          "NodeDeclaredFeatures checks the node features v1.36 defines: bindMountOptions needs no node feature",
          BIND_MOUNT_OPTIONS),
    _rule(rules.GATED_PODS_NOMINATED, _NOMINATED_PODS_READ, (FILTER, POST_FILTER),
          "a gated pod's nomination reserves its space: lower and equal priority pods are filtered as if it ran "
          "on its nominated node",
          "a gated pod's nomination reserves nothing again: the scheduling queue keeps it from the nominator",
          GATED_NOMINATED),
)


@dataclass(frozen=True)
class GateEffect:
    """What turning a gate on does to some plugins' results (``on``), what turning it off does (``off``),
    and when that can matter."""

    plugins: tuple[str, ...]
    points: tuple[str, ...]
    on: str
    off: str
    trigger: Trigger
    makes: frozenset[str] = ANY_KIND


#: The gates the scheduler's rules read, each with its effects (most have one).
GATE_EFFECTS: Mapping[str, tuple[GateEffect, ...]] = MappingProxyType({
    gates.DYNAMIC_RESOURCE_ALLOCATION: (
        GateEffect(_DRA, (PRE_ENQUEUE, PRE_FILTER, FILTER, SCORE, POST_FILTER),
                   "DynamicResources joins the default profile (ResourceClaims are allocated)",
                   "DynamicResources leaves the default profile (ResourceClaims are not allocated)", DRA_IN_USE),
        GateEffect(_DRA, (POST_FILTER,),
                   "DynamicResources joins the default profile; for a pod without ResourceClaims its PostFilter only "
                   'adds "no new claims to deallocate" to the PodScheduled message',
                   "DynamicResources leaves the default profile; for a pod without ResourceClaims only "
                   '"no new claims to deallocate" leaves the PodScheduled message',
                   CLAIMLESS_POST_FILTER, frozenset({MESSAGE})),
    ),
    gates.POD_LEVEL_RESOURCES: (GateEffect(
        _FIT_BALANCE, (PRE_FILTER, FILTER, SCORE),
        "a pod's spec.resources (pod-level requests) count instead of the sum of its containers'",
        "a pod's spec.resources is dropped: the sum of its containers' requests counts", POD_LEVEL_RESOURCES),),
    gates.NODE_DECLARED_FEATURES: (GateEffect(
        ("NodeDeclaredFeatures",), (PRE_FILTER, FILTER),
        "NodeDeclaredFeatures joins the default profile: a node must declare the features a pod needs",
        "NodeDeclaredFeatures leaves the default profile: no node is checked for the features a pod needs",
        FEATURES_NEEDED),),
    gates.OPPORTUNISTIC_BATCHING: (GateEffect(
        (), (BATCHING,), "a cycle's sorted scores are reused for the next pod with the same signature",
        "every pod's cycle scores the nodes anew", NEVER_IN_ONE_CYCLE),),
    gates.GANG_SCHEDULING: (GateEffect(
        ("GangScheduling",), (PRE_ENQUEUE, PRE_FILTER), "pods of a PodGroup are scheduled together",
        "pods of a PodGroup are scheduled one by one", POD_GROUP),),
    gates.GENERIC_WORKLOAD: (GateEffect(
        ("GangScheduling",), (PRE_ENQUEUE, PRE_FILTER), "Workload objects group pods",
        "Workload objects no longer group pods", POD_GROUP),),
    gates.TOPOLOGY_AWARE_WORKLOAD_SCHEDULING: (GateEffect(
        ("NodeResourcesFit",), (SCORE,), "a pod group's placement is scored as a whole",
        "a pod group's placement is no longer scored as a whole", POD_GROUP), GateEffect(
        ("DefaultPreemption",), (POST_FILTER,),
        "a pod of a PodGroup with scheduling constraints does not preempt (placement-based pod group scheduling)",
        "a pod of a PodGroup with scheduling constraints may preempt again", POD_GROUP)),
    gates.STORAGE_CAPACITY_SCORING: (GateEffect(
        ("VolumeBinding",), (SCORE,),
        "VolumeBinding scores nodes by the storage utilization the pod's volumes would cause there",
        "VolumeBinding does not score nodes", VOLUMES_TO_BIND),),
    gates.IN_PLACE_POD_LEVEL_RESOURCES_VERTICAL_SCALING: (GateEffect(
        _REQUESTS_READ, (FILTER, SCORE, POST_FILTER),
        "a running pod's own status.resources and status.allocatedResources (an in-place resize of its pod-level "
        "resources) count in its requests",
        "a running pod's own status.resources and status.allocatedResources no longer count in its requests",
        POD_LEVEL_STATUS),),
    gates.VOLUME_LIMIT_SCALING: (GateEffect(
        ("NodeVolumeLimits",), (FILTER,),
        "NodeVolumeLimits rejects a node whose CSINode lacks a driver of the pod's volumes whose CSIDriver sets "
        "preventPodSchedulingIfMissing",
        "NodeVolumeLimits no longer checks that the pod's CSI drivers are installed on the node",
        DRIVER_MUST_BE_INSTALLED),),
    gates.DRA_DEVICE_TAINTS: (GateEffect(
        _DRA, (FILTER,),
        "DynamicResources does not allocate a device with a NoSchedule or NoExecute taint the request does not "
        "tolerate",
        "DynamicResources ignores device taints", TAINTED_DEVICE),),
    gates.DRA_DEVICE_TAINT_RULES: (GateEffect(
        _DRA, (FILTER,),
        "DynamicResources counts the taints of DeviceTaintRules on the devices they select",
        "DynamicResources ignores DeviceTaintRules", TAINT_RULES),),
})


def _default(gate: str, minor: int) -> bool:
    spec = gate_specs(minor).get(gate)
    return spec is not None and spec.default


def _gate_change(gate: str, a: Features, b: Features) -> tuple[int, str, bool]:
    """When the gate's value changed (the version whose default flipped), why ("on by default" or, when
    ``--feature-gates`` set it, "on (--feature-gates)"), and whether B went back before that version."""
    vb = b.enabled(gate)
    state = "on" if vb else "off"
    defaults = a.enabled(gate) == _default(gate, a.minor) and vb == _default(gate, b.minor)
    if not defaults:
        return b.minor, f"{gate} is {state} (--feature-gates)", False
    low, high = sorted((a.minor, b.minor))
    flipped = next((m for m in range(low + 1, high + 1) if _default(gate, m) != _default(gate, m - 1)), high)
    return flipped, f"{gate} is {state} by default", b.minor < a.minor


def gate_changes(a: Features, b: Features) -> list[RuleChange]:
    """The gates the scheduler reads whose effective values differ between ``a`` and ``b``: one entry per effect."""
    out = []
    for gate, effects in GATE_EFFECTS.items():
        if a.enabled(gate) == b.enabled(gate):
            continue
        minor, state, undone = _gate_change(gate, a, b)
        on = b.enabled(gate)
        for e in effects:
            text, other = (e.on, e.off) if on else (e.off, e.on)
            out.append(RuleChange(minor, gate, "gate", e.plugins, e.points, f"{state}: {text}",
                                  f"{gate} is {'off' if on else 'on'}: {other}", e.trigger, e.makes, undone))
    return sorted(out, key=lambda ch: ch.minor)


def changes_between(a: Features, b: Features) -> list[RuleChange]:
    """Every change from ``a``'s rules to ``b``'s: the rules of the versions in between (worded as going
    back when ``b`` is older) and the gates whose values differ."""
    low, high = sorted((a.minor, b.minor))
    rules = [r for r in RULES if low < r.minor <= high]
    if b.minor < a.minor:
        rules = [r.going_back() for r in rules]
    return sorted(rules + gate_changes(a, b), key=lambda ch: ch.minor)


def attribute(changes: Iterable[RuleChange], parts: Iterable[tuple[str, str, str]],
              evidence: Evidence | None = None) -> list[RuleChange]:
    """The changes that can explain any of ``parts`` ((plugin, point, kind of difference) where two traces
    differ) and, given ``evidence``, whose trigger is present; in order."""
    wanted = list(parts)
    return [c for c in changes if (evidence is None or c.trigger(evidence)) and any(c.explains(*p) for p in wanted)]
