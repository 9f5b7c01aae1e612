"""The well-known topology labels (hostname, zone, region) and the zone key kube-scheduler derives from them.

The scheduler's node tree groups nodes by a key made of a node's region and zone labels
(``utilnode.GetZoneKey``); the same key is read back from its ``-v=2`` log when a node order is
replayed. Both the object model and the framework need it, so it lives on the ground floor and
takes plain labels.
"""

from __future__ import annotations

from collections.abc import Mapping

HOSTNAME_LABEL = "kubernetes.io/hostname"
ZONE_LABEL = "topology.kubernetes.io/zone"
REGION_LABEL = "topology.kubernetes.io/region"
BETA_ZONE_LABEL = "failure-domain.beta.kubernetes.io/zone"
BETA_REGION_LABEL = "failure-domain.beta.kubernetes.io/region"


def zone_key(labels: Mapping[str, str]) -> str:
    """Region and zone joined as the node tree keys them, or "" when a node has neither.

    The deprecated ``failure-domain.beta`` label is read first and wins whenever it is present,
    even with an empty value."""
    zone = labels[BETA_ZONE_LABEL] if BETA_ZONE_LABEL in labels else labels.get(ZONE_LABEL, "")
    region = labels[BETA_REGION_LABEL] if BETA_REGION_LABEL in labels else labels.get(REGION_LABEL, "")
    if not zone and not region:
        return ""
    return f"{region}:\x00:{zone}"
