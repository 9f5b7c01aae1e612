"""NodeDeclaredFeatures: a pod that needs a node capability goes only to nodes that declare it.

Kubelets publish the optional capabilities they have in ``node.status.declaredFeatures``
(sorted names). kube-scheduler infers from the pod's spec which of the capabilities it knows
the pod needs (``k8s.io/component-helpers/nodedeclaredfeatures``: each known feature says
whether a pod needs it to be scheduled) and filters out the nodes that do not declare all of
them. Upstream: ``pkg/scheduler/framework/plugins/nodedeclaredfeatures/nodedeclaredfeatures.go``.

The plugin is in the registry of v1.35 (alpha, gate off), v1.36 (beta, gate on, in the
default plugins) and v1.37 (GA, locked on). With the ``NodeDeclaredFeatures`` gate off it does
nothing: PreFilter returns Skip, Filter passes. With it on:

* PreFilter infers the pod's required features; none (the usual case) is Skip, which skips Filter;
* Filter: a node whose declared features miss one is UnschedulableAndUnresolvable (preemption
  cannot help);
* SignPod (OpportunisticBatching): the required features.

kschedctl does not model the cluster events that send a rejected pod back to the queue, so the
plugin has none to register (nor their queueing hints).

What changed between versions (the feature table, the message, the set's representation) is
in ``FeatureTable``, chosen once from ``handle.features``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from kschedctl.framework import signers
from kschedctl.framework.cycle_state import CycleState, StateKey
from kschedctl.framework.interfaces import Handle, PreFilterResult
from kschedctl.framework.signers import SignFragment
from kschedctl.framework.status import Code, Status
from kschedctl.framework.types import NodeInfo
from kschedctl.kube.features import Features
from kschedctl.kube.gates import NODE_DECLARED_FEATURES
from kschedctl.kube.rules import NODE_DECLARED_FEATURES_BIND_MOUNTS, NODE_DECLARED_FEATURES_TABLE
from kschedctl.snapshot.model import Pod

NAME = "NodeDeclaredFeatures"

#: v1.36's Filter reason (one fixed text; v1.35 named the missing features, see ``FeatureTable``).
ERR_REASON = "node(s) didn't match Pod's required features"

_STATE_NAME = "PreFilter" + NAME

Spec = dict[str, Any]


# --------------------------------------------------------------------------------------------
# what each known feature asks of a pod (``InferForScheduling``)
# --------------------------------------------------------------------------------------------
def _dicts(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def restarts_all_containers(spec: Spec) -> bool:
    """RestartAllContainersOnContainerExits: a container (or init container) rule restarts them all."""
    for c in _dicts(spec.get("containers")) + _dicts(spec.get("initContainers")):
        if any(r.get("action") == "RestartAllContainers" for r in _dicts(c.get("restartPolicyRules"))):
            return True
    return False


def host_network_in_user_namespace(spec: Spec) -> bool:
    """UserNamespacesHostNetworkSupport: host network together with ``hostUsers: false``."""
    return spec.get("hostNetwork") is True and spec.get("hostUsers") is False


def sets_bind_mount_options(spec: Spec) -> bool:
    """VolumeBindMountOptions: a container, init container or ephemeral container mounts a volume
    with ``bindMountOptions``."""
    for key in ("containers", "initContainers", "ephemeralContainers"):
        for c in _dicts(spec.get(key)):
            if any(m.get("bindMountOptions") for m in _dicts(c.get("volumeMounts"))):
                return True
    return False


def only_for_updates(spec: Spec) -> bool:
    """A feature that only matters to updates (resizes): never needed to schedule a pod."""
    return False


@dataclass(frozen=True)
class Feature:
    """One feature the scheduler knows: its name and whether a pod spec needs it to be scheduled."""

    name: str
    needed_by: Callable[[Spec], bool]


#: The known features of v1.35.4's component-helpers (``features.AllFeatures``).
V135_FEATURES = (
    Feature("RestartAllContainersOnContainerExits", restarts_all_containers),
    Feature("GuaranteedQoSPodCPUResize", only_for_updates),
    Feature("InPlacePodLevelResourcesVerticalScaling", only_for_updates),
)

#: The known features of v1.36.2's component-helpers.
V136_FEATURES = (
    Feature("RestartAllContainersOnContainerExits", restarts_all_containers),
    Feature("InPlacePodLevelResourcesVerticalScaling", only_for_updates),
    Feature("ExtendWebSocketsToKubelet", only_for_updates),
    Feature("InPlacePodVerticalScalingInitContainers", only_for_updates),
    Feature("UserNamespacesHostNetworkSupport", host_network_in_user_namespace),
)

#: The known features of v1.37's component-helpers: v1.36's and four more, of which only
#: VolumeBindMountOptions is ever needed to schedule a pod.
V137_FEATURES = (
    *V136_FEATURES,
    Feature("InPlacePodVerticalScalingMemoryBackedVolumes", only_for_updates),
    Feature("DRANodeAllocatableResources", only_for_updates),
    Feature("VolumeBindMountOptions", sets_bind_mount_options),
    Feature("DRAOptionalNodeOperations", only_for_updates),
)


class FeatureTable:
    """One version's known features and how its feature sets behave.

    v1.36 keeps a set as a bitmap over the known names sorted (``FeatureSet``): a node's list is
    mapped by one merge walk that drops unknown names, the Filter reason is fixed, and the
    signature is the bitmap as a string of 0/1. v1.35 keeps sets of names, names the missing
    features in the reason and signs with the sorted names.
    """

    def __init__(self, features: Sequence[Feature], *, bitmap: bool) -> None:
        self.features = sorted(features, key=lambda f: f.name)
        self.names = [f.name for f in self.features]
        self.bitmap = bitmap

    def required(self, spec: Spec) -> frozenset[str]:
        """The known features the pod needs (none of them has a maximum version in v1.35 to v1.37)."""
        return frozenset(f.name for f in self.features if f.needed_by(spec))

    def declared(self, declared: Sequence[Any]) -> frozenset[str]:
        """The node's declared features as the scheduler sees them."""
        if not self.bitmap:
            return frozenset(str(d) for d in declared)
        known: set[str] = set()
        i = j = 0  # v1.36's TryMap: one walk of two sorted lists; unknown names are passed over
        while i < len(declared) and j < len(self.names):
            d = str(declared[i])
            if d == self.names[j]:
                known.add(d)
                i += 1
                j += 1
            elif d < self.names[j]:
                i += 1
            else:
                j += 1
        return frozenset(known)

    def reason(self, missing: frozenset[str]) -> str:
        if self.bitmap:
            return ERR_REASON
        return "node declared features check failed - unsatisfied requirements: " + ", ".join(sorted(missing))

    def signature(self, required: frozenset[str]) -> str | list[str]:
        if self.bitmap:
            return "".join("1" if n in required else "0" for n in self.names)
        return sorted(required)


def table_for(features: Features) -> FeatureTable:
    if features.follows(NODE_DECLARED_FEATURES_BIND_MOUNTS):
        return FeatureTable(V137_FEATURES, bitmap=True)
    if features.follows(NODE_DECLARED_FEATURES_TABLE):
        return FeatureTable(V136_FEATURES, bitmap=True)
    return FeatureTable(V135_FEATURES, bitmap=False)


def _spec(obj: Any) -> Spec:
    spec = obj.get("spec") if isinstance(obj, dict) else None
    return spec if isinstance(spec, dict) else {}


def node_declared_features(raw_node: dict[str, Any]) -> list[Any]:
    """``status.declaredFeatures`` of a node object as listed (empty when absent)."""
    status = raw_node.get("status")
    value = status.get("declaredFeatures") if isinstance(status, dict) else None
    return value if isinstance(value, list) else []


class _PreFilterState(frozenset[str]):
    """The pod's required features (immutable, shared on clone)."""

    def clone(self) -> _PreFilterState:
        return self


PRE_FILTER_KEY: StateKey[_PreFilterState] = StateKey(_STATE_NAME)


class NodeDeclaredFeatures:
    """The NodeDeclaredFeatures plugin (PreFilter, Filter, SignPod, events)."""

    name = NAME

    def __init__(self, features: Features) -> None:
        self.enabled = features.enabled(NODE_DECLARED_FEATURES)
        self.table = table_for(features)

    def pre_filter(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> tuple[PreFilterResult | None, Status]:
        if not self.enabled:
            return None, Status.skip()
        reqs = self.table.required(_spec(pod.raw))
        if not reqs:
            return None, Status.skip()
        state.write(PRE_FILTER_KEY, _PreFilterState(reqs))
        return None, Status()

    def pre_filter_extensions(self) -> None:
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        if not self.enabled:
            return Status()
        reqs = state.get(PRE_FILTER_KEY)
        if reqs is None:
            return Status.as_error(f'error reading "{_STATE_NAME}" from cycle-state: not found')
        missing = reqs - self.table.declared(node_declared_features(node_info.node.raw))
        if missing:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, self.table.reason(missing))
        return Status()

    def sign_pod(self, pod: Pod) -> tuple[list[SignFragment] | None, Status]:
        """OpportunisticBatching: the verdict depends on the pod's required features only."""
        reqs = self.table.required(_spec(pod.raw))
        return [SignFragment(signers.FEATURES, self.table.signature(reqs))], Status()


def new(args: None, handle: Handle) -> NodeDeclaredFeatures:
    return NodeDeclaredFeatures(handle.features)
