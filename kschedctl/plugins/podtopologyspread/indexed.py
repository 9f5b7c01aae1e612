"""PodTopologySpread's fast paths: counts from the snapshot's indexes, domains kept per snapshot.

The reference (``filtering.compute_pre_filter_state`` and ``scoring.compute_pre_score_state``
without these arguments) walks every node and counts its matching pods one by one. With the
framework's fast paths (chosen once when the plugin is built), PreFilter and PreScore take
instead, per constraint, the matching pods of every node from the snapshot's match counts
(``matching_pods_per_node``) and which nodes take part with their domains from a layout the
snapshot keeps across cycles (``DomainLayouts``); the counts per domain are the same sums.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kschedctl.plugins.podtopologyspread.common import (
    HONOR,
    Constraint,
    node_has_all_keys,
    node_included,
    required_node_affinity,
)

if TYPE_CHECKING:
    from kschedctl.framework.nodeinfos import Snapshot
    from kschedctl.framework.podindex import MatchCounts
    from kschedctl.framework.types import NodeInfo, PodInfo
    from kschedctl.kube.selectors import Selector
    from kschedctl.snapshot.model import Pod


class DomainLayout:
    """For some constraints and one incoming pod's inclusion context: the nodes that take part
    in each constraint and their domain (``labels.get(key, "")``), and the domains in the order
    the node list first shows them (the order the per-domain counts are built in).

    It depends only on nodes (labels, taints) and on what ``layout_key`` names of the pod, so a
    snapshot keeps it for every later cycle (see ``DomainLayouts``)."""

    __slots__ = ("complete", "domain_of", "domains")

    def __init__(self, pod: Pod, constraints: list[Constraint], nodes: list[NodeInfo], require_all: bool) -> None:
        affinity = required_node_affinity(pod)
        #: Nodes carrying every constraint's topology key.
        self.complete: set[NodeInfo] = set()
        self.domain_of: list[dict[NodeInfo, str]] = [{} for _ in constraints]
        for ni in nodes:
            node = ni.node
            labels = node.labels
            if node_has_all_keys(labels, constraints):
                self.complete.add(ni)
            elif require_all:
                continue
            for i, c in enumerate(constraints):
                if node_included(c, pod, node, affinity):
                    self.domain_of[i][ni] = labels.get(c.topology_key, "")
        self.domains: list[list[str]] = [list(dict.fromkeys(d.values())) for d in self.domain_of]


def layout_key(pod: Pod, constraints: list[Constraint], require_all: bool) -> tuple[Any, ...]:
    """What a ``DomainLayout`` depends on: the constraints' keys and policies, and the pod's
    required node affinity and tolerations where a policy honours them."""
    aff: tuple[Any, ...] | None = None
    if any(c.node_affinity_policy == HONOR for c in constraints):
        required = pod.affinity.node_required if pod.affinity is not None else None
        aff = (tuple(sorted(pod.node_selector.items())), required)
    tolerations = tuple(pod.tolerations) if any(c.node_taints_policy == HONOR for c in constraints) else None
    keys = tuple((c.topology_key, c.node_affinity_policy, c.node_taints_policy) for c in constraints)
    return keys, require_all, aff, tolerations


class DomainLayouts:
    """A snapshot's ``DomainLayout`` per ``layout_key`` (nodes do not change during a run, so
    assume/forget leave them as they are)."""

    __slots__ = ("_layouts", "_nodes")

    MAX_ENTRIES = 64

    def __init__(self, nodes: list[NodeInfo]) -> None:
        self._nodes = nodes
        self._layouts: dict[tuple[Any, ...], DomainLayout] = {}

    def get(self, pod: Pod, constraints: list[Constraint], require_all: bool) -> DomainLayout:
        key = layout_key(pod, constraints, require_all)
        layout = self._layouts.get(key)
        if layout is None:
            if len(self._layouts) >= self.MAX_ENTRIES:
                self._layouts.clear()
            layout = self._layouts[key] = DomainLayout(pod, constraints, self._nodes, require_all)
        return layout

    def pod_added(self, pi: PodInfo, ni: NodeInfo) -> None:
        """Pods do not change which nodes take part, nor their domains."""

    def pod_removed(self, pi: PodInfo, ni: NodeInfo) -> None:
        """See ``pod_added``."""


def matching_pods_per_node(counts: MatchCounts, selector: Selector, namespace: str) -> dict[NodeInfo, int]:
    """``count_matching_pods`` for every node of the snapshot at once, from its match counts:
    NodeInfo -> matching pods (nodes without any are left out; the dict is the snapshot's own)."""
    if selector.empty:
        return {}
    return counts.per_node((namespace,), selector, live_only=True)


def indexed_counts(
    snap: Snapshot, pod: Pod, constraints: list[Constraint], require_all: bool
) -> tuple[list[dict[NodeInfo, int]], DomainLayout]:
    """Per constraint, the matching pods per node of the snapshot (from its match counts), and
    the snapshot's nodes' domains for these constraints."""
    counts = snap.match_counts()
    per_node = [matching_pods_per_node(counts, c.selector, pod.namespace) for c in constraints]
    layouts = snap.derived("PodTopologySpreadLayouts", lambda s: DomainLayouts(s.node_info_list))
    return per_node, layouts.get(pod, constraints, require_all)
