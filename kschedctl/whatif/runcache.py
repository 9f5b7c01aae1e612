"""What a simulated run writes into its cluster and snapshot, as kube-scheduler's cache holds it, and
the record of what that did to each node.

``RunCache.assume`` is ``assume`` and the binding cycle: the pod joins its NodeInfo and the lists
plugins read (``Snapshot.assume``), and the objects plugins assumed for it (VolumeBinding's
claim-to-PV bindings, DynamicResources' allocated claims) replace their originals in the run's
Cluster before the next cycle, as the real loop waits for the binding to be seen. The caller's
Cluster is copied before the run first writes to it, unless the run owns it.
``RunCache.delete_victims`` deletes preemption's victims at once. ``NodeLedger`` keeps, per node,
the pods added and removed and the requests before the first change (``NodeChange``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kschedctl.framework.cycle_state import CycleState
from kschedctl.framework.nodeinfos import Snapshot
from kschedctl.framework.resources import Resource
from kschedctl.framework.runtime import Framework
from kschedctl.snapshot.cluster import Cluster
from kschedctl.snapshot.model import Pod
from kschedctl.whatif.placements import NodeChange, Placement
from kschedctl.whatif.workloads import extend_cluster


class NodeLedger:
    """What the run did to each node: pods added and removed, and the node as it was before."""

    def __init__(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot
        self._before: dict[str, tuple[Resource, int]] = {}
        self._added: dict[str, list[str]] = {}
        self._removed: dict[str, list[str]] = {}
        #: The attempt that placed each pod still on its node (to mark it when preemption evicts it).
        self._placed: dict[str, Placement] = {}

    def touch(self, node: str) -> None:
        """Keep the node's requests and pod count, before the run's first change to it."""
        if node not in self._before:
            ni = self.snapshot.node_info_map[node]
            self._before[node] = (ni.requested.clone(), len(ni.pods))

    def add(self, node: str, pod: str, placement: Placement) -> None:
        """``pod`` (a key) placed on ``node`` by ``placement``."""
        self._added.setdefault(node, []).append(pod)
        self._placed[pod] = placement

    def remove(self, node: str, pod: str, by: str) -> None:
        """``pod`` (a key) deleted from ``node`` by the preemption for pod ``by``."""
        self._removed.setdefault(node, []).append(pod)
        earlier = self._placed.pop(pod, None)
        if earlier is not None:
            earlier.evicted_by = by

    def changes(self) -> list[NodeChange]:
        out: list[NodeChange] = []
        for name in sorted(self._before):
            ni = self.snapshot.node_info_map[name]
            before, pods_before = self._before[name]
            out.append(
                NodeChange(
                    node=name,
                    added=list(self._added.get(name, [])),
                    removed=list(self._removed.get(name, [])),
                    allocatable=ni.allocatable.as_dict(),
                    requested_before=before.as_dict(),
                    requested_after=ni.requested.as_dict(),
                    pods_before=pods_before,
                    pods_after=len(ni.pods),
                )
            )
        return out


class RunCache:
    """The run's writes to its snapshot and cluster: pods assumed, objects plugins assumed, victims deleted."""

    def __init__(self, snapshot: Snapshot, owns_cluster: bool) -> None:
        """``owns_cluster``: the snapshot's cluster is the run's own (``PodFactory(private=True)``, which keeps
        adding the claims of pods it creates); otherwise it is copied before the run first writes to it."""
        self.snapshot = snapshot
        self.ledger = NodeLedger(snapshot)
        #: Limits of the model met during the run, reported once each.
        self.notes: list[str] = []
        #: Unbound claims of placed pods (VolumeBinding would bind them at PreBind).
        self._unbound_claims: set[str] = set()
        self._own_cluster = owns_cluster

    @property
    def cluster(self) -> Cluster:
        """The run's cluster: the one given, or its copy once the run wrote to it."""
        return self.snapshot.cluster

    def assume(
        self, fw: Framework, frameworks: Iterable[Framework], state: CycleState, pod: Pod, node: str, placement: Placement
    ) -> None:
        """``assume`` and the binding cycle: the pod on its node, its objects applied (``frameworks``: every
        profile's, whose plugins hear of the objects changed; ``state``: the pod's cycle)."""
        self.ledger.touch(node)
        self.snapshot.assume(pod, node)
        pod.node_name = node
        self.ledger.add(node, pod.key, placement)
        self._unbound_claims.update(self._unbound_claims_of(pod))
        self._apply_assumed_objects(fw, frameworks, state, pod, node)

    def _apply_assumed_objects(
        self, fw: Framework, frameworks: Iterable[Framework], state: CycleState, pod: Pod, node: str
    ) -> None:
        """Objects plugins assumed for the placed pod (VolumeBinding's PV bindings, DynamicResources'
        allocations) become part of the run's cluster before the next cycle, as the real scheduler's
        assume caches hold them until the informers see them written."""
        applied: list[Any] = []
        for pl in fw.plugins.by_name.values():
            assumed = getattr(pl, "assumed_objects", None)
            if assumed is None:
                continue
            for obj in assumed(state, pod, node):
                if not self._own_cluster:  # the caller's Cluster stays as it was
                    self.snapshot.cluster = extend_cluster(self.snapshot.cluster, [], always_copy=True)
                    self._own_cluster = True
                self.snapshot.cluster.add_object(obj)
                applied.append(obj)
        if not applied:
            return
        for f in frameworks:
            for pl in f.plugins.by_name.values():
                changed = getattr(pl, "objects_changed", None)
                if changed is not None:
                    changed(applied)
        if any(o.kind == "ResourceClaim" for o in applied):
            self.note(
                "devices allocated to placed pods' ResourceClaims are seen by later pods, as the scheduler's "
                "in-flight claim tracking does until the allocation is written"
            )

    def _unbound_claims_of(self, pod: Pod) -> list[str]:
        out: list[str] = []
        for v in pod.volumes:
            pvc = v.get("persistentVolumeClaim")
            if not isinstance(pvc, dict):
                continue
            claim = self.cluster.get("PersistentVolumeClaim", pod.namespace, str(pvc.get("claimName") or ""))
            if claim is not None and not claim.spec.get("volumeName"):
                out.append(claim.key)
        return out

    def check_unbound_claims(self, pod: Pod) -> None:
        """Note when ``pod`` uses a claim an earlier placed pod left unbound (provisioning is not modelled)."""
        if self._unbound_claims and any(k in self._unbound_claims for k in self._unbound_claims_of(pod)):
            self.note(
                "dynamic provisioning for placed pods (VolumeBinding) is not recorded: a claim that an earlier pod "
                "of the run would have had provisioned is still unbound for a later pod using it"
            )

    def delete_victims(self, pod: Pod, node: str, victims: list[str]) -> bool:
        """Delete ``victims`` (pod keys) from ``node`` for ``pod``'s preemption, those not already terminating;
        whether there was any to delete."""
        ni = self.snapshot.node_info_map[node]
        on_node = {pi.pod.key: pi.pod for pi in ni.pods}
        to_delete = [on_node[k] for k in victims if k in on_node and on_node[k].meta.deletion_timestamp is None]
        if not to_delete:
            return False
        self.ledger.touch(node)
        for victim in to_delete:
            if not self.snapshot.forget(victim, node):
                continue
            self.ledger.remove(node, victim.key, by=pod.key)
            if victim.resource_claims:
                self.note(
                    "the ResourceClaims of deleted victims stay allocated: the resourceclaim controller of a real "
                    "cluster would release them after the pods are gone"
                )
        self.note(
            "preemption victims are deleted at once (no graceful termination); a real cluster's controllers "
            "would then act: a ReplicaSet or StatefulSet re-creates its deleted pods (new pending pods), and the "
            "disruption controller lowers PodDisruptionBudgets' disruptionsAllowed, which later preemptions read "
            "(the run keeps PDB status as in the snapshot)"
        )
        return True

    def note(self, msg: str) -> None:
        if msg not in self.notes:
            self.notes.append(msg)
