"""VolumeBinding: can the pod's PersistentVolumeClaims be bound (or provisioned) for a node?

PreFilter sorts the pod's claims (skipping pods without claims and rejecting pods
whose immediate-binding claims are still unbound); Filter checks, per node, bound
claims' PV node affinity and finds PVs or provisioning room for delayed claims;
Reserve records whether anything is left to bind; PreBind would bind (a dry run
only reports that it would). Score needs the StorageCapacityScoring gate (alpha, off
by default in v1.35 and v1.36; read from ``handle.features``): without it PreScore
skips; with it PreScore never skips and every feasible node is scored by the storage
utilization the pod's volumes would cause there (``kschedctl.plugins.volumebinding.scorer``).

Upstream model: ``pkg/scheduler/framework/plugins/volumebinding/volume_binding.go``.
"""

from __future__ import annotations

import copy
from typing import Any

from kschedctl.config.args import VolumeBindingArgs
from kschedctl.errors import ConfigError
from kschedctl.framework import signers
from kschedctl.framework.cycle_state import CycleState, StateKey
from kschedctl.framework.interfaces import Handle, PreFilterResult, ScoreExtensions
from kschedctl.framework.signers import SignFragment
from kschedctl.framework.status import Code, Status
from kschedctl.framework.types import NodeInfo
from kschedctl.kube.gates import STORAGE_CAPACITY_SCORING
from kschedctl.plugins.volumebinding.binder import BinderError, PodVolumeClaims, PodVolumes, VolumeBinder
from kschedctl.plugins.volumebinding.scorer import (
    CapacityScorer,
    capacity_scorer,
    usage_by_class,
)
from kschedctl.plugins.volumebinding.storage import (
    ANN_SELECTED_NODE,
    PVC_RESOURCE,
    annotations_of,
    claim_class,
    claim_has_request,
    claim_name_for_volume,
    claim_request,
    claim_volume_name,
    ephemeral_owner_error,
    not_found,
    quantity_value,
    volume_capacity,
)
from kschedctl.snapshot.model import KubeObject, Pod

NAME = "VolumeBinding"
#: The args this plugin takes (decoded by kschedctl.config, which owns the model).
ARGS_MODEL = VolumeBindingArgs

ERR_UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"


class StateData:
    """What PreFilter learnt about the pod's claims and what Filter found per node.

    Shared (not copied) by clones, as upstream: per-node results only accumulate.
    """

    __slots__ = ("all_bound", "binder", "claims", "has_static_bindings", "pod_volumes_by_node")

    def __init__(
        self,
        claims: PodVolumeClaims | None = None,
        binder: VolumeBinder | None = None,
        with_nodes: bool = False,
    ) -> None:
        self.all_bound = False
        self.claims = claims
        self.binder = binder
        self.pod_volumes_by_node: dict[str, PodVolumes] | None = {} if with_nodes else None
        self.has_static_bindings = False

    def clone(self) -> StateData:
        return self


STATE_KEY: StateKey[StateData] = StateKey(NAME)


class VolumeBinding:
    name = NAME

    def __init__(self, args: VolumeBindingArgs, handle: Handle, scorer: CapacityScorer | None = None) -> None:
        self.args = args
        self.handle = handle
        #: Set only when StorageCapacityScoring is on; without it the plugin does not score.
        self.scorer = scorer

    # ------------------------------------------------------------------ PreFilter
    def _pod_has_pvcs(self, pod: Pod) -> tuple[bool, str | None]:
        """(pod has claims, why they cannot be used yet) — ``podHasPVCs``."""
        cluster = self.handle.cluster
        has = False
        for v in pod.volumes:
            claim = claim_name_for_volume(pod, v)
            if claim is None:
                continue
            name, ephemeral = claim
            has = True
            pvc = cluster.get("PersistentVolumeClaim", pod.namespace, name)
            if pvc is None:
                if ephemeral:
                    return has, f'waiting for ephemeral volume controller to create the persistentvolumeclaim "{name}"'
                return has, not_found(PVC_RESOURCE, name)
            if pvc.status.get("phase") == "Lost":
                return has, (
                    f'persistentvolumeclaim "{pvc.name}" bound to non-existent persistentvolume "{claim_volume_name(pvc)}"'
                )
            if pvc.meta.deletion_timestamp is not None:
                return has, f'persistentvolumeclaim "{pvc.name}" is being deleted'
            if ephemeral:
                err = ephemeral_owner_error(pod, pvc)
                if err is not None:
                    return has, err
        return has, None

    def pre_filter(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> tuple[PreFilterResult | None, Status]:
        has, err = self._pod_has_pvcs(pod)
        if err is not None:
            return None, Status.unresolvable(err)
        if not has:
            state.write(STATE_KEY, StateData())
            return None, Status.skip()
        binder = VolumeBinder(self.handle.cluster)
        try:
            claims = binder.pod_volume_claims(pod)
        except BinderError as e:
            return None, Status.as_error(str(e))
        if claims.unbound_immediate:
            return None, Status.unresolvable(ERR_UNBOUND_IMMEDIATE)
        claims.unbound_immediate = []
        state.write(STATE_KEY, StateData(claims, binder, with_nodes=True))
        return None, Status()

    def pre_filter_extensions(self) -> None:
        return None

    # ------------------------------------------------------------------ Filter
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        s = state.get(STATE_KEY)
        if s is None:
            return Status.as_error("not found")
        if s.claims is None or s.binder is None:
            return Status()
        try:
            volumes, reasons = s.binder.find_pod_volumes(pod, s.claims, node_info.node)
        except BinderError as e:
            return Status.as_error(str(e))
        if reasons:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, *reasons)
        if s.pod_volumes_by_node is None:
            s.pod_volumes_by_node = {}
        s.pod_volumes_by_node[node_info.name] = volumes
        s.has_static_bindings = s.has_static_bindings or bool(volumes.static_bindings)
        return Status()

    # ------------------------------------------------------------------ PreScore / Score
    def pre_score(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Status:
        if self.scorer is None:
            return Status.skip()
        if state.get(STATE_KEY) is None:
            return Status.as_error("not found")
        # With the gate on, every pod is scored, even one without claims (0 on every node).
        return Status()

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status]:
        if self.scorer is None:
            return 0, Status()
        s = state.get(STATE_KEY)
        if s is None:
            return 0, Status.as_error("not found")
        volumes = None if s.pod_volumes_by_node is None else s.pod_volumes_by_node.get(node_info.name)
        if volumes is None:
            return 0, Status()
        return self.scorer(usage_by_class(volumes)), Status()

    def score_extensions(self) -> ScoreExtensions | None:
        return None

    # ------------------------------------------------------------------ Reserve
    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        s = state.get(STATE_KEY)
        if s is None:
            return Status.as_error("not found")
        found = s.pod_volumes_by_node is not None and node_name in s.pod_volumes_by_node
        if found and s.binder is not None:
            s.all_bound = s.binder.pod_volumes_bound(pod)
        else:
            s.all_bound = True
        return Status()

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        # Nothing was assumed in a dry run, so there is nothing to revert.
        return None

    def assumed_objects(self, state: CycleState, pod: Pod, node_name: str) -> list[KubeObject]:
        """The claims and PVs as they would be once this pod's static bindings on ``node_name`` are made.

        The real scheduler assumes them in its volume cache at Reserve and writes them at PreBind; a
        simulation of successive pods applies them to its cluster so no later claim takes the same PV.
        """
        s = state.get(STATE_KEY)
        if s is None or s.pod_volumes_by_node is None or node_name not in s.pod_volumes_by_node:
            return []
        out: list[KubeObject] = []
        for b in s.pod_volumes_by_node[node_name].static_bindings:
            claim = copy.deepcopy(b.pvc.raw)
            claim.setdefault("spec", {})["volumeName"] = b.pv.name
            claim.setdefault("status", {})["phase"] = "Bound"
            claim.setdefault("metadata", {}).setdefault("annotations", {})["pv.kubernetes.io/bind-completed"] = "yes"
            volume = copy.deepcopy(b.pv.raw)
            volume.setdefault("spec", {})["claimRef"] = {
                "kind": "PersistentVolumeClaim",
                "apiVersion": "v1",
                "namespace": b.pvc.namespace,
                "name": b.pvc.name,
                "uid": b.pvc.meta.uid,
            }
            volume.setdefault("status", {})["phase"] = "Bound"
            out.append(KubeObject(claim, "PersistentVolumeClaim", True))
            out.append(KubeObject(volume, "PersistentVolume", False))
        return out

    # ------------------------------------------------------------------ PreBind
    def _pre_bind_status(self, state: CycleState, node_name: str, skip: bool) -> Status:
        s = state.get(STATE_KEY)
        if s is None:
            return Status.as_error("not found")
        if s.all_bound:
            return Status.skip() if skip else Status()
        if s.pod_volumes_by_node is None or node_name not in s.pod_volumes_by_node:
            return Status.as_error(f'no pod volume found for node "{node_name}"')
        return Status()

    def pre_bind_pre_flight(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        return self._pre_bind_status(state, node_name, skip=True)

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        # Upstream now writes the PV/PVC bindings and waits for the PV controller;
        # a dry run assumes that succeeds.
        return self._pre_bind_status(state, node_name, skip=False)

    # ------------------------------------------------------------------ explain
    def explain(self, state: CycleState) -> dict[str, Any]:
        """The pod's claims as PreFilter sorted them."""
        s = state.get(STATE_KEY)
        if s is None or s.claims is None:
            return {}
        c = s.claims
        return {
            "boundClaims": [{"claim": _key(p), "volume": claim_volume_name(p)} for p in c.bound],
            "delayedClaims": [
                {
                    "claim": _key(p),
                    "storageClass": claim_class(p),
                    "request": str(quantity_value(claim_request(p))) if claim_has_request(p) else None,
                    "selectedNode": annotations_of(p).get(ANN_SELECTED_NODE),
                    "volumesOfClass": len(c.unbound_volumes_delay.get(claim_class(p), [])),
                }
                for p in c.unbound_delay
            ],
        }

    def explain_node(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> dict[str, Any]:
        """Why this node can or cannot host the pod's volumes."""
        s = state.get(STATE_KEY)
        if s is None or s.claims is None or s.binder is None:
            return {}
        binder = s.binder
        csi_node = self.handle.cluster.get("CSINode", "", node_info.name)
        bound: list[dict[str, Any]] = []
        try:
            for p in s.claims.bound:
                pv = self.handle.cluster.get("PersistentVolume", "", claim_volume_name(p))
                entry: dict[str, Any] = {"claim": _key(p), "volume": claim_volume_name(p), "volumeExists": pv is not None}
                if pv is not None:
                    sel = binder.pv_affinity(pv, csi_node)
                    entry["nodeAffinity"] = "none" if sel is None else ("matches" if sel.matches(node_info.node.labels, "") else "does not match")
                bound.append(entry)
            volumes, reasons = binder.find_pod_volumes(pod, s.claims, node_info.node)
        except BinderError as e:
            return {"error": str(e)}
        return {
            "reasons": reasons,
            "boundClaims": bound,
            "staticBindings": [
                {"claim": _key(b.pvc), "volume": b.pv.name, "capacity": str(quantity_value(volume_capacity(b.pv)))}
                for b in volumes.static_bindings
            ],
            "dynamicProvisions": [
                {
                    "claim": _key(d.pvc),
                    "storageClass": claim_class(d.pvc),
                    "storageCapacity": None if d.node_capacity is None else d.node_capacity.key,
                }
                for d in volumes.dynamic_provisions
            ],
        }

    def sign_pod(self, pod: Pod) -> tuple[list[SignFragment] | None, Status]:
        """OpportunisticBatching: verdict and score depend on the pod's volume sources only."""
        return [SignFragment(signers.VOLUMES, signers.volumes(pod))], Status()


def _key(obj: KubeObject) -> str:
    return f"{obj.namespace}/{obj.name}"


def new(args: VolumeBindingArgs | None, handle: Handle) -> VolumeBinding:
    a = args if args is not None else VolumeBindingArgs()
    if a.bind_timeout_seconds < 0:
        raise ConfigError(
            f"bindTimeoutSeconds: Invalid value: {a.bind_timeout_seconds}: invalid BindTimeoutSeconds, should not be a negative value"
        )
    scoring = handle.features.enabled(STORAGE_CAPACITY_SCORING)
    if a.shape and not scoring:
        raise ConfigError("shape: Invalid value: unexpected field `shape`, remove it or turn on the feature gate StorageCapacityScoring")
    return VolumeBinding(a, handle, capacity_scorer(a.shape) if scoring else None)
