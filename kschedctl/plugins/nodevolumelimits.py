"""NodeVolumeLimits: a node's CSI drivers can attach only so many volumes.

Each CSI driver on a node may publish an attach limit (CSINode
``spec.drivers[].allocatable.count``). Filter counts, per driver, the distinct
volumes (driver + volume handle) the pods on the node already use, adds the new
pod's volumes that are not among them, and rejects the node when a driver would
exceed its limit. Volumes are found through claims (bound PVs, or the claim's
StorageClass provisioner while unbound), generic ephemeral volumes (the claim
named <pod>-<volume>, owned by the pod) and inline in-tree volumes migrated to
CSI on that node; in-tree PVs count against the CSI driver they migrate to.

With the VolumeLimitScaling gate (alpha and off in v1.36, beta and on in v1.37), before any limit
is checked, a node is rejected (Unschedulable, so preemption still tries it) when one of the
pod's new volumes has a driver whose CSIDriver object sets ``spec.preventPodSchedulingIfMissing``
and the node's CSINode does not list that driver (or the node has no CSINode). A driver without a
CSIDriver object is taken as installed.

Upstream model: ``pkg/scheduler/framework/plugins/nodevolumelimits/csi.go``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kschedctl.framework import signers
from kschedctl.framework.cycle_state import CycleState, StateKey
from kschedctl.framework.interfaces import Handle, PreFilterResult
from kschedctl.framework.signers import SignFragment
from kschedctl.framework.status import Status
from kschedctl.framework.types import NodeInfo
from kschedctl.kube.gates import VOLUME_LIMIT_SCALING
from kschedctl.plugins.volumebinding import csitranslation as csi
from kschedctl.plugins.volumebinding.storage import (
    PVC_RESOURCE,
    claim_class,
    claim_name_for_volume,
    claim_volume_name,
    ephemeral_owner_error,
    migrated_plugins,
    not_found,
)
from kschedctl.snapshot.cluster import Cluster
from kschedctl.snapshot.model import KubeObject, Pod

NAME = "NodeVolumeLimits"

ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED = "node(s) exceed max volume count"


def driver_not_installed(driver: str) -> str:
    """VolumeLimitScaling's reason for a node without a driver that must be there."""
    return f"{driver} CSI driver is not installed on the node"

#: Stands in for upstream's random per-plugin prefix of placeholder handles for unbound claims.
_UNBOUND_HANDLE_PREFIX = "kschedctl-unbound-claim"


class _LookupError(Exception):
    """A failure that makes Filter return a status (``not_found`` marks NotFound errors)."""

    def __init__(self, message: str, not_found: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.not_found = not_found


def is_csi_migration_on(csi_node: KubeObject | None, plugin_name: str) -> bool:
    """Whether the in-tree plugin counts as its CSI driver on this node."""
    if csi_node is None or not plugin_name:
        return False
    if plugin_name == csi.PORTWORX_PLUGIN:
        return plugin_name in migrated_plugins(csi_node)
    return plugin_name in (csi.AWS_EBS_PLUGIN, csi.GCE_PD_PLUGIN, csi.AZURE_DISK_PLUGIN, csi.CINDER_PLUGIN)


def csi_node_drivers(csi_node: KubeObject | None) -> set[str]:
    """The names of the drivers a CSINode lists (none without a CSINode)."""
    if csi_node is None:
        return set()
    drivers = csi_node.spec.get("drivers")
    return {str(d.get("name") or "") for d in drivers if isinstance(d, dict)} if isinstance(drivers, list) else set()


def volume_limits(csi_node: KubeObject | None) -> dict[str, int]:
    """Driver name -> attach limit, for the drivers of the CSINode that declare one."""
    out: dict[str, int] = {}
    if csi_node is None:
        return out
    drivers = csi_node.spec.get("drivers")
    for d in drivers if isinstance(drivers, list) else []:
        if not isinstance(d, dict):
            continue
        alloc = d.get("allocatable")
        if isinstance(alloc, dict) and alloc.get("count") is not None:
            try:
                out[str(d.get("name") or "")] = int(alloc["count"])
            except (TypeError, ValueError):
                continue
    return out


class _CycleCache:
    """Per-cycle memo of an existing pod's attachable volumes (they depend only on the
    pod, the cluster and whether the node has a CSINode / migrated Portworx)."""

    __slots__ = ("volumes",)

    def __init__(self) -> None:
        self.volumes: dict[tuple[str, bool, bool], dict[str, str] | _LookupError] = {}

    def clone(self) -> _CycleCache:
        return self


CACHE_KEY: StateKey[_CycleCache] = StateKey("PreFilter" + NAME + "/cache")


class CSILimits:
    name = NAME

    def __init__(self, handle: Handle) -> None:
        self.handle = handle
        #: VolumeLimitScaling: a driver whose CSIDriver asks for it must be installed on the node.
        self.drivers_must_be_installed = handle.features.enabled(VOLUME_LIMIT_SCALING)

    @property
    def cluster(self) -> Cluster:
        return self.handle.cluster

    # ------------------------------------------------------------------ PreFilter
    def pre_filter(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> tuple[PreFilterResult | None, Status]:
        for v in pod.volumes:
            if v.get("persistentVolumeClaim") is not None or v.get("ephemeral") is not None or csi.inline_plugin(v):
                state.write(CACHE_KEY, _CycleCache())
                return None, Status()
        return None, Status.skip()

    def pre_filter_extensions(self) -> None:
        return None

    # ------------------------------------------------------------------ Filter
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        if not pod.volumes:
            return Status()
        csi_node = self.cluster.get("CSINode", "", node_info.name)
        new_volumes: dict[str, str] = {}
        try:
            self.attachable_volumes(pod, csi_node, True, new_volumes)
        except _LookupError as e:
            return Status.unresolvable(e.message) if e.not_found else Status.as_error(e.message)
        if not new_volumes:
            return Status()
        if self.drivers_must_be_installed:
            missing = self.missing_driver(new_volumes.values(), csi_node)
            if missing is not None:
                return Status.unschedulable(driver_not_installed(missing))
        limits = volume_limits(csi_node)
        if not limits:
            return Status()
        cache = state.get(CACHE_KEY)
        if cache is None:
            cache = _CycleCache()
            state.write(CACHE_KEY, cache)
        sig = (csi_node is not None, csi.PORTWORX_PLUGIN in migrated_plugins(csi_node))
        attached: dict[str, str] = {}
        for pi in node_info.pods:
            existing = pi.pod
            if not existing.volumes:
                continue
            key = (existing.uid, *sig)
            got = cache.volumes.get(key)
            if got is None:
                vols: dict[str, str] = {}
                try:
                    self.attachable_volumes(existing, csi_node, False, vols)
                    got = vols
                except _LookupError as e:
                    got = e
                cache.volumes[key] = got
            if isinstance(got, _LookupError):
                return Status.as_error(got.message)
            attached.update(got)
        attached_count: dict[str, int] = {}
        for unique, driver in attached.items():
            new_volumes.pop(unique, None)  # a volume shared with a pod already there counts once
            attached_count[driver] = attached_count.get(driver, 0) + 1
        for unique, driver in self._volume_attachments(node_info.name).items():
            if unique not in attached:
                attached_count[driver] = attached_count.get(driver, 0) + 1
        new_count: dict[str, int] = {}
        for driver in new_volumes.values():
            new_count[driver] = new_count.get(driver, 0) + 1
        for driver, count in new_count.items():
            limit = limits.get(driver)
            if limit is not None and attached_count.get(driver, 0) + count > limit:
                return Status.unschedulable(ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED)
        return Status()

    def missing_driver(self, drivers: Iterable[str], csi_node: KubeObject | None) -> str | None:
        """The first of ``drivers`` (the pod's new volumes', in order) whose CSIDriver asks to be installed
        on a node (``spec.preventPodSchedulingIfMissing``) and that the node's CSINode does not list.
        Upstream walks a map, so with several such drivers the one named is any of them."""
        installed = csi_node_drivers(csi_node)
        for driver in dict.fromkeys(drivers):
            obj = self.cluster.get("CSIDriver", "", driver)
            if obj is None or obj.spec.get("preventPodSchedulingIfMissing") is not True:
                continue  # no CSIDriver: maybe not a CSI driver at all, so taken as installed
            if driver not in installed:
                return driver
        return None

    def explain_node(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> dict[str, Any]:
        """Per driver: the node's limit, volumes already attached and the pod's new ones."""
        if state.get(CACHE_KEY) is None or not pod.volumes:
            return {}
        csi_node = self.cluster.get("CSINode", "", node_info.name)
        new_volumes: dict[str, str] = {}
        attached: dict[str, str] = {}
        try:
            self.attachable_volumes(pod, csi_node, True, new_volumes)
            for pi in node_info.pods:
                self.attachable_volumes(pi.pod, csi_node, False, attached)
        except _LookupError as e:
            return {"error": e.message}
        attached.update({u: d for u, d in self._volume_attachments(node_info.name).items() if u not in attached})
        limits = volume_limits(csi_node)
        drivers = sorted(set(new_volumes.values()) | set(limits))
        return {
            "csiNode": csi_node is not None,
            "drivers": [
                {
                    "driver": d,
                    "limit": limits.get(d),
                    "attached": sum(1 for v in attached.values() if v == d),
                    "new": sum(1 for u, v in new_volumes.items() if v == d and u not in attached),
                }
                for d in drivers
            ],
        }

    # ------------------------------------------------------------------ counting
    def attachable_volumes(self, pod: Pod, csi_node: KubeObject | None, new_pod: bool, result: dict[str, str]) -> None:
        """Add the pod's CSI volumes to ``result`` as "driver/handle" -> driver."""
        cluster = self.cluster
        for v in pod.volumes:
            claim = claim_name_for_volume(pod, v)
            if claim is None:
                self._inline_volume(v, csi_node, result)
                continue
            name, ephemeral = claim
            if not name:
                raise _LookupError("PersistentVolumeClaim had no name")
            pvc = cluster.get("PersistentVolumeClaim", pod.namespace, name)
            if pvc is None:
                if new_pod:
                    raise _LookupError(
                        f"looking up PVC {pod.namespace}/{name}: {not_found(PVC_RESOURCE, name)}", not_found=True
                    )
                continue
            if ephemeral:
                err = ephemeral_owner_error(pod, pvc)
                if err is not None:
                    raise _LookupError(err)
            driver, handle = self._csi_driver_info(csi_node, pvc)
            if not driver or not handle:
                continue
            result[f"{driver}/{handle}"] = driver

    def _inline_volume(self, volume: dict[str, Any], csi_node: KubeObject | None, result: dict[str, str]) -> None:
        plugin = csi.inline_plugin(volume)
        if plugin is None or not is_csi_migration_on(csi_node, plugin.in_tree_name):
            return
        try:
            translated = csi.translate_inline(volume)
        except csi.TranslationError as e:
            raise _LookupError(f"converting volume({volume.get('name', '')}) from inline to csi: {e}") from None
        result[f"{plugin.csi_driver}/{translated.volume_handle}"] = plugin.csi_driver

    def _csi_driver_info(self, csi_node: KubeObject | None, pvc: KubeObject) -> tuple[str, str]:
        pv_name = claim_volume_name(pvc)
        if not pv_name:
            return self._csi_driver_info_from_class(csi_node, pvc)
        pv = self.cluster.get("PersistentVolume", "", pv_name)
        if pv is None:
            return self._csi_driver_info_from_class(csi_node, pvc)
        src = pv.spec.get("csi")
        if isinstance(src, dict):
            return str(src.get("driver") or ""), str(src.get("volumeHandle") or "")
        plugin = csi.pv_plugin(pv.spec)
        if plugin is None or not is_csi_migration_on(csi_node, plugin.in_tree_name):
            return "", ""
        try:
            translated = csi.translate_pv(pv.spec, pv.labels)
        except csi.TranslationError:
            return "", ""
        return translated.driver, translated.volume_handle

    def _csi_driver_info_from_class(self, csi_node: KubeObject | None, pvc: KubeObject) -> tuple[str, str]:
        sc_name = claim_class(pvc)
        if not sc_name:
            return "", ""
        sc = self.cluster.get("StorageClass", "", sc_name)
        if sc is None:
            return "", ""
        handle = f"{_UNBOUND_HANDLE_PREFIX}-{pvc.namespace}/{pvc.name}"
        provisioner = str(sc.raw.get("provisioner") or "")
        if csi.is_migratable_plugin_name(provisioner):
            if not is_csi_migration_on(csi_node, provisioner):
                return "", ""
            return csi.csi_driver_for(provisioner) or "", handle
        return provisioner, handle

    def _volume_attachments(self, node_name: str) -> dict[str, str]:
        """CSI volumes attached to the node per VolumeAttachment objects (when the snapshot has any)."""
        out: dict[str, str] = {}
        for va in self.cluster.of_kind("VolumeAttachment"):
            spec = va.spec
            if spec.get("nodeName") != node_name:
                continue
            attacher = str(spec.get("attacher") or "")
            source = spec.get("source")
            pv_name = source.get("persistentVolumeName") if isinstance(source, dict) else None
            if not attacher or not pv_name:
                continue
            pv = self.cluster.get("PersistentVolume", "", str(pv_name))
            if pv is None or not isinstance(pv.spec.get("csi"), dict):
                continue
            out[f"{attacher}/{pv.spec['csi'].get('volumeHandle') or ''}"] = attacher
        return out

    def sign_pod(self, pod: Pod) -> tuple[list[SignFragment] | None, Status]:
        """OpportunisticBatching: the verdict depends on the pod's volume sources only."""
        return [SignFragment(signers.VOLUMES, signers.volumes(pod))], Status()


def new(args: None, handle: Handle) -> CSILimits:
    return CSILimits(handle)
