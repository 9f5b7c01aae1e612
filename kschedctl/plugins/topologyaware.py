"""TopologyPlacementGenerator (v1.36, alpha): one placement per topology domain of a pod group.

Upstream: ``pkg/scheduler/framework/plugins/topologyaware/topology_placement.go``. A
PlacementGenerate plugin. The PodGroup's first ``schedulingConstraints.topology`` key decides:
without one the parent placement is returned as is; with one, the parent's nodes are split by
their value of that label (nodes without it are left out), one placement per value named after
it. When some pods of the group are already scheduled, only their domain is offered (an Error
when they span several domains or sit on a node without the label). It is in the default plugins
only with ``TopologyAwareWorkloadScheduling`` on; only a pod-group cycle calls it.
"""

from __future__ import annotations

from typing import Any

from kschedctl.framework.interfaces import Handle
from kschedctl.framework.podgroups import Placement, PodGroup, group_state
from kschedctl.framework.status import Status

NAME = "TopologyPlacementGenerator"


class TopologyPlacementGenerator:
    """The TopologyPlacementGenerator plugin (PlacementGenerate)."""

    name = NAME

    def __init__(self, handle: Handle) -> None:
        self.handle = handle

    def _scheduled_domain(self, pod_group: PodGroup, key: str) -> tuple[str | None, str | None]:
        """(domain of the group's scheduled pods or None, error message or None)."""
        state = group_state(self.handle.snapshot, pod_group.namespace, pod_group.name)
        domain: str | None = None
        for pod in state.scheduled_pods():
            ni = self.handle.snapshot.node_info_map.get(pod.node_name)
            if ni is None:
                return None, f"getting node for pod {pod.key}: node {pod.node_name!r} not found"
            value = ni.node.labels.get(key)
            if value is None:
                return None, f"no topology domain found for pod {pod.key}"
            if domain is not None and domain != value:
                return None, f"more than 1 domain found for pod group: {domain}, {value}"
            domain = value
        return domain, None

    def generate_placements(self, pod_group: PodGroup, parent: Placement) -> tuple[list[Placement], Status]:
        if not pod_group.topology_keys:
            return [parent], Status()
        key = pod_group.topology_keys[0]
        required, err = self._scheduled_domain(pod_group, key)
        if err is not None:
            return [], Status.as_error(f"cannot determine domain for already scheduled pods: {err}")
        by_domain: dict[str, list[Any]] = {}
        for ni in parent.nodes:
            value = ni.node.labels.get(key)
            if value is not None and (required is None or value == required):
                by_domain.setdefault(value, []).append(ni)
        # upstream ranges over a map: the order of the placements is not defined; sorted here
        return [Placement(nodes, name) for name, nodes in sorted(by_domain.items())], Status()


def new(args: None, handle: Handle) -> TopologyPlacementGenerator:
    return TopologyPlacementGenerator(handle)
