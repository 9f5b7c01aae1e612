"""The part of csi-translation-lib the scheduler uses: in-tree volumes seen as CSI volumes.

Several in-tree volume types (GCE PD, AWS EBS, Cinder, Azure Disk, Portworx, and
for name lookups Azure File and vSphere) have CSI drivers they migrate to. The
scheduler translates such a PV (or inline pod volume) to know which CSI driver and
volume handle it counts against (NodeVolumeLimits) and which topology key its node
affinity uses once migrated (VolumeBinding). Only what those decisions depend on
is modelled: the driver name, the volume handle and the node-affinity rewrite.

Upstream model: ``k8s.io/csi-translation-lib translate.go and plugins/``.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlparse

from kschedctl.kube.topology import BETA_REGION_LABEL, BETA_ZONE_LABEL, REGION_LABEL, ZONE_LABEL
from kschedctl.plugins.volumebinding.storage import (
    MULTI_ZONE_DELIMITER,
)

GCE_PD_PLUGIN = "kubernetes.io/gce-pd"
AWS_EBS_PLUGIN = "kubernetes.io/aws-ebs"
CINDER_PLUGIN = "kubernetes.io/cinder"
AZURE_DISK_PLUGIN = "kubernetes.io/azure-disk"
AZURE_FILE_PLUGIN = "kubernetes.io/azure-file"
VSPHERE_PLUGIN = "kubernetes.io/vsphere-volume"
PORTWORX_PLUGIN = "kubernetes.io/portworx-volume"


@dataclass(frozen=True, slots=True)
class InTreePlugin:
    in_tree_name: str
    csi_driver: str
    #: The volume source field of a PV spec / pod volume this plugin handles.
    source_field: str
    #: The CSI driver's zonal topology key ("" when translation keeps topology as is).
    topology_key: str


#: The translators csi-translation-lib registers.
IN_TREE_PLUGINS: tuple[InTreePlugin, ...] = (
    InTreePlugin(GCE_PD_PLUGIN, "pd.csi.storage.gke.io", "gcePersistentDisk", "topology.gke.io/zone"),
    InTreePlugin(AWS_EBS_PLUGIN, "ebs.csi.aws.com", "awsElasticBlockStore", "topology.ebs.csi.aws.com/zone"),
    InTreePlugin(CINDER_PLUGIN, "cinder.csi.openstack.org", "cinder", "topology.cinder.csi.openstack.org/zone"),
    InTreePlugin(AZURE_DISK_PLUGIN, "disk.csi.azure.com", "azureDisk", ""),
    InTreePlugin(AZURE_FILE_PLUGIN, "file.csi.azure.com", "azureFile", ""),
    InTreePlugin(VSPHERE_PLUGIN, "csi.vsphere.vmware.com", "vsphereVolume", "topology.csi.vmware.com/zone"),
    InTreePlugin(PORTWORX_PLUGIN, "pxd.portworx.com", "portworxVolume", ""),
)
_BY_NAME = {p.in_tree_name: p for p in IN_TREE_PLUGINS}

#: Plugins whose CSI migration the scheduler honours (CSIMigrationPortworx is on by default in v1.35).
MIGRATION_ON_PLUGINS = frozenset({AWS_EBS_PLUGIN, GCE_PD_PLUGIN, AZURE_DISK_PLUGIN, CINDER_PLUGIN, PORTWORX_PLUGIN})

_UNSPECIFIED = "UNSPECIFIED"
_AWS_VOLUME_ID = re.compile(r"^vol-[^/]*$")


class TranslationError(Exception):
    """The in-tree volume cannot be expressed as a CSI volume."""


@dataclass(frozen=True, slots=True)
class CSIVolume:
    driver: str
    volume_handle: str


def _plugin_for(spec_or_volume: Mapping[str, Any]) -> InTreePlugin | None:
    for p in IN_TREE_PLUGINS:
        if spec_or_volume.get(p.source_field) is not None:
            return p
    return None


def pv_plugin(pv_spec: Mapping[str, Any]) -> InTreePlugin | None:
    """The translator that supports this PV (``IsPVMigratable`` / ``GetInTreePluginNameFromSpec``)."""
    return _plugin_for(pv_spec)


def inline_plugin(volume: Mapping[str, Any]) -> InTreePlugin | None:
    """The translator that supports this inline pod volume (``IsInlineMigratable``)."""
    return _plugin_for(volume)


def is_migratable_plugin_name(name: str) -> bool:
    return name in _BY_NAME


def csi_driver_for(in_tree_name: str) -> str | None:
    p = _BY_NAME.get(in_tree_name)
    return p.csi_driver if p else None


def _src(obj: Mapping[str, Any], field: str) -> dict[str, Any]:
    s = obj.get(field)
    return s if isinstance(s, dict) else {}


def _ebs_volume_id(kubernetes_id: str) -> str:
    if not kubernetes_id.startswith("aws://"):
        return kubernetes_id
    try:
        url = urlparse(kubernetes_id)
    except ValueError as e:
        raise TranslationError(f"Invalid disk name ({kubernetes_id}): {e}") from None
    aws_id = url.path.strip("/")
    if not _AWS_VOLUME_ID.match(aws_id):
        raise TranslationError(f"Invalid format for AWS volume ({kubernetes_id})")
    return aws_id


def _gce_region_from_zones(zones: list[str]) -> str:
    regions: set[str] = set()
    for zone in zones:
        parts = zone.split("-")
        if len(parts) != 3:
            raise TranslationError(f"zone in unexpected format, expected: {{locale}}-{{region}}-{{zone}}, got: {zone}")
        regions.add("-".join(parts[:2]))
    if len(regions) != 1:
        raise TranslationError(f"multiple or no regions gotten from zones, got: {sorted(regions)}")
    return next(iter(regions))


def _azure_disk_check(src: Mapping[str, Any]) -> None:
    kind = src.get("kind")
    if kind is not None and str(kind).lower() != "managed":
        raise TranslationError(f"kind({kind}) is not supported in csi migration")


def _handle(plugin: InTreePlugin, src: Mapping[str, Any], pv_labels: Mapping[str, str] | None) -> str:
    """The CSI volume handle of an in-tree source (``pv_labels`` is None for inline volumes)."""
    name = plugin.in_tree_name
    if name == AWS_EBS_PLUGIN:
        return _ebs_volume_id(str(src.get("volumeID") or ""))
    if name == GCE_PD_PLUGIN:
        pd = str(src.get("pdName") or "")
        if pv_labels is None:
            return f"projects/{_UNSPECIFIED}/zones/{_UNSPECIFIED}/disks/{pd}"
        label = pv_labels.get(BETA_ZONE_LABEL) or pv_labels.get(ZONE_LABEL) or ""
        zones = label.split(MULTI_ZONE_DELIMITER)
        if len(zones) == 1 and zones[0]:
            return f"projects/{_UNSPECIFIED}/zones/{zones[0]}/disks/{pd}"
        if len(zones) > 1:
            return f"projects/{_UNSPECIFIED}/regions/{_gce_region_from_zones(zones)}/disks/{pd}"
        return f"projects/{_UNSPECIFIED}/zones/{_UNSPECIFIED}/disks/{pd}"
    if name == AZURE_DISK_PLUGIN:
        _azure_disk_check(src)
        return str(src.get("diskURI") or "")
    if name in (CINDER_PLUGIN, PORTWORX_PLUGIN):
        return str(src.get("volumeID") or "")
    if name == VSPHERE_PLUGIN:
        return str(src.get("volumePath") or "")
    raise TranslationError(f"translation of {name} volumes is not modelled")


def translate_inline(volume: Mapping[str, Any]) -> CSIVolume:
    """``TranslateInTreeInlineVolumeToCSI``: driver and handle of an inline in-tree volume."""
    plugin = inline_plugin(volume)
    if plugin is None:
        raise TranslationError(f"could not find in-tree plugin translation logic for {volume.get('name', '')!r}")
    return CSIVolume(plugin.csi_driver, _handle(plugin, _src(volume, plugin.source_field), None))


def translate_pv(pv_spec: Mapping[str, Any], pv_labels: Mapping[str, str]) -> CSIVolume:
    """``TranslateInTreePVToCSI``: driver and handle of an in-tree PV."""
    plugin = pv_plugin(pv_spec)
    if plugin is None:
        raise TranslationError("could not find in-tree plugin translation logic")
    return CSIVolume(plugin.csi_driver, _handle(plugin, _src(pv_spec, plugin.source_field), pv_labels))


# --------------------------------------------------------------------------- topology rewrite


def _terms(node_affinity: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    if not isinstance(node_affinity, dict):
        return []
    req = node_affinity.get("required")
    if not isinstance(req, dict):
        return []
    terms = req.get("nodeSelectorTerms")
    return [t for t in terms if isinstance(t, dict)] if isinstance(terms, list) else []


def _exprs(term: dict[str, Any]) -> list[dict[str, Any]]:
    exprs = term.get("matchExpressions")
    return [e for e in exprs if isinstance(e, dict)] if isinstance(exprs, list) else []


def _key_in_affinity(node_affinity: Mapping[str, Any] | None, key: str) -> bool:
    return any(e.get("key") == key for t in _terms(node_affinity) for e in _exprs(t))


def _values_for(node_affinity: Mapping[str, Any] | None, key: str) -> list[str]:
    vals: set[str] = set()
    for t in _terms(node_affinity):
        for e in _exprs(t):
            if e.get("key") == key:
                vals.update(str(v) for v in e.get("values") or [])
    return sorted(vals)


def _replace_key(node_affinity: dict[str, Any], old: str, new: str) -> None:
    for t in _terms(node_affinity):
        for e in _exprs(t):
            if e.get("key") == old:
                e["key"] = new


def _topology_labels(node_affinity: Mapping[str, Any] | None, pv_labels: Mapping[str, str]) -> tuple[str, str]:
    if _key_in_affinity(node_affinity, ZONE_LABEL):
        return ZONE_LABEL, REGION_LABEL
    if _key_in_affinity(node_affinity, BETA_ZONE_LABEL):
        return BETA_ZONE_LABEL, BETA_REGION_LABEL
    if ZONE_LABEL in pv_labels:
        return ZONE_LABEL, REGION_LABEL
    if BETA_ZONE_LABEL in pv_labels:
        return BETA_ZONE_LABEL, BETA_REGION_LABEL
    return ZONE_LABEL, REGION_LABEL


def translate_node_affinity(
    node_affinity: Mapping[str, Any] | None, pv_labels: Mapping[str, str], csi_topology_key: str
) -> dict[str, Any] | None:
    """The PV's node affinity after migration to a CSI driver with a zonal topology key.

    Zone requirements switch to the driver's key; a PV with only a zone label gains
    a requirement on that key in every term; beta region requirements become GA.
    """
    na: dict[str, Any] | None = copy.deepcopy(dict(node_affinity)) if isinstance(node_affinity, dict) else None
    zone_label, region_label = _topology_labels(na, pv_labels)
    zones = _values_for(na, zone_label)
    if zones and na is not None:
        _replace_key(na, zone_label, csi_topology_key)
    elif zone_label in pv_labels:
        filtered = sorted({z.strip() for z in pv_labels[zone_label].split(MULTI_ZONE_DELIMITER) if z.strip()})
        if filtered:
            if na is None:
                na = {}
            req = na.get("required")
            if not isinstance(req, dict):
                req = {}
                na["required"] = req
            terms = req.get("nodeSelectorTerms")
            if not isinstance(terms, list) or not terms:
                terms = [{}]
                req["nodeSelectorTerms"] = terms
            for t in terms:
                if not isinstance(t, dict):
                    continue
                exprs = t.get("matchExpressions")
                if not isinstance(exprs, list):
                    exprs = []
                    t["matchExpressions"] = exprs
                exprs.append({"key": csi_topology_key, "operator": "In", "values": list(filtered)})
    if region_label == BETA_REGION_LABEL and na is not None and _values_for(na, region_label):
        _replace_key(na, region_label, REGION_LABEL)
    return na
