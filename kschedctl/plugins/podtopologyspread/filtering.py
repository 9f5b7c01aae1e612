"""PodTopologySpread's hard half: PreFilter state, Filter verdicts, and the add/remove-pod updates.

PreFilter counts, once per cycle, the pods matching each ``DoNotSchedule``
constraint per topology domain over all nodes that take part in the spreading,
and keeps for each constraint the two domains with the fewest matches (the
"critical paths"). Filter then only looks up the node's domain:
``matching + (1 if the pod matches its own selector) - global minimum`` must not
exceed ``maxSkew``, where the global minimum is 0 when fewer than ``minDomains``
domains exist. Nominated-pod evaluation and preemption change the counts through
``update_with_pod`` on a cloned state.

Upstream model: ``pkg/scheduler/framework/plugins/podtopologyspread/filtering.go``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kschedctl.framework.status import Code, Status
from kschedctl.framework.types import NodeInfo
from kschedctl.plugins.podtopologyspread.common import (
    Constraint,
    count_matching_pods,
    node_has_all_keys,
    node_included,
    required_node_affinity,
)
from kschedctl.snapshot.model import Node, Pod

if TYPE_CHECKING:
    from kschedctl.plugins.podtopologyspread.indexed import DomainLayout

MAX_INT32 = 2**31 - 1

#: Filter reasons (exact kube-scheduler strings).
ERR_REASON_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
ERR_REASON_NODE_LABEL_NOT_MATCH = ERR_REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"


class CriticalPaths:
    """The two domains with the fewest matching pods; slot 0 always holds the minimum seen."""

    __slots__ = ("num", "value")

    def __init__(self) -> None:
        self.value: list[str] = ["", ""]
        self.num: list[int] = [MAX_INT32, MAX_INT32]

    def copy(self) -> CriticalPaths:
        c = CriticalPaths()
        c.value = list(self.value)
        c.num = list(self.num)
        return c

    def update(self, tp_val: str, num: int) -> None:
        v, n = self.value, self.num
        if tp_val == v[0]:
            i = 0
        elif tp_val == v[1]:
            i = 1
        else:
            i = -1
        if i >= 0:
            n[i] = num
            if n[0] > n[1]:
                v[0], v[1] = v[1], v[0]
                n[0], n[1] = n[1], n[0]
        elif num < n[0]:
            v[1], n[1] = v[0], n[0]
            v[0], n[0] = tp_val, num
        elif num < n[1]:
            v[1], n[1] = tp_val, num

    def __repr__(self) -> str:
        return f"CriticalPaths({self.value[0]}={self.num[0]}, {self.value[1]}={self.num[1]})"


@dataclass(slots=True)
class PreFilterState:
    """Per-cycle counts of the hard constraints (``preFilterState``); cloned for what-if runs."""

    constraints: list[Constraint] = field(default_factory=list)
    critical_paths: list[CriticalPaths] = field(default_factory=list)
    #: Per constraint: topology value -> number of matching pods.
    tp_value_to_match_num: list[dict[str, int]] = field(default_factory=list)

    def clone(self) -> PreFilterState:
        return PreFilterState(
            constraints=self.constraints,  # never changed after PreFilter
            critical_paths=[p.copy() for p in self.critical_paths],
            tp_value_to_match_num=[dict(m) for m in self.tp_value_to_match_num],
        )

    def min_match_num(self, i: int, min_domains: int) -> int:
        """The global minimum for skew, 0 when fewer than ``minDomains`` domains are eligible."""
        if len(self.tp_value_to_match_num[i]) < min_domains:
            return 0
        return self.critical_paths[i].num[0]

    def describe(self) -> list[dict[str, Any]]:
        out = []
        for i, c in enumerate(self.constraints):
            d = c.describe()
            d["matchNum"] = dict(sorted(self.tp_value_to_match_num[i].items()))
            d["domains"] = len(self.tp_value_to_match_num[i])
            d["criticalPaths"] = [
                {"topologyValue": self.critical_paths[i].value[k], "matchNum": self.critical_paths[i].num[k]}
                for k in (0, 1)
            ]
            d["minMatchNum"] = self.min_match_num(i, c.min_domains)
            out.append(d)
        return out


def compute_pre_filter_state(
    pod: Pod,
    constraints: list[Constraint],
    nodes: list[NodeInfo],
    per_node: list[dict[NodeInfo, int]] | None = None,
    layout: DomainLayout | None = None,
) -> PreFilterState:
    """``calPreFilterState``: match counts per domain over every eligible node.

    ``per_node``: per constraint, the matching pods of each node already counted (from the
    snapshot's match counts); without it each node's pods are counted here. ``layout`` (with
    ``per_node``, for the same nodes): which nodes take part and their domains, so that only
    the nodes with matching pods are visited."""
    s = PreFilterState(
        constraints=constraints,
        critical_paths=[],
        tp_value_to_match_num=[{} for _ in constraints],
    )
    if not constraints:
        return s
    counts = s.tp_value_to_match_num
    if per_node is not None and layout is not None:
        for i in range(len(constraints)):
            m = counts[i] = dict.fromkeys(layout.domains[i], 0)  # every eligible domain, in node order
            domain_of = layout.domain_of[i]
            for ni, n in per_node[i].items():
                value = domain_of.get(ni)
                if value is not None:
                    m[value] += n
    else:
        _count_per_domain(pod, constraints, nodes, per_node, counts)
    for i in range(len(constraints)):
        paths = CriticalPaths()
        for value, num in counts[i].items():
            paths.update(value, num)
        s.critical_paths.append(paths)
    return s


def _count_per_domain(
    pod: Pod,
    constraints: list[Constraint],
    nodes: list[NodeInfo],
    per_node: list[dict[NodeInfo, int]] | None,
    counts: list[dict[str, int]],
) -> None:
    """The walk over every node: its matching pods added to its domain, per constraint."""
    affinity = required_node_affinity(pod)
    ns = pod.namespace
    for ni in nodes:
        node = ni.node
        labels = node.labels
        if not node_has_all_keys(labels, constraints):
            continue
        for i, c in enumerate(constraints):
            if not node_included(c, pod, node, affinity):
                continue
            value = labels[c.topology_key]
            m = counts[i]
            n = per_node[i].get(ni, 0) if per_node is not None else count_matching_pods(ni.pods, c.selector, ns)
            m[value] = m.get(value, 0) + n


def node_verdict(s: PreFilterState, pod: Pod) -> Callable[[NodeInfo], Status | None]:
    """``Filter``'s check of one node against every constraint, in order: the first constraint
    whose topology label the node lacks rejects it (UnschedulableAndUnresolvable), as does the
    first whose skew would exceed ``maxSkew`` (Unschedulable); None when the node passes. The
    per-constraint minimum and the pod's self-match do not depend on the node: computed once."""
    pod_labels = pod.labels
    checks = [
        (c.topology_key, s.min_match_num(i, c.min_domains), 1 if c.selector.matches(pod_labels) else 0, c.max_skew, s.tp_value_to_match_num[i])
        for i, c in enumerate(s.constraints)
    ]

    def verdict(node_info: NodeInfo) -> Status | None:
        labels = node_info.node.labels
        for key, min_match, self_match, max_skew, counts in checks:
            tp_val = labels.get(key)
            if tp_val is None:
                return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_NODE_LABEL_NOT_MATCH)
            if counts.get(tp_val, 0) + self_match - min_match > max_skew:
                return Status(Code.UNSCHEDULABLE, ERR_REASON_CONSTRAINTS_NOT_MATCH)
        return None

    return verdict


def explain_node(s: PreFilterState, pod: Pod, node: Node) -> list[dict[str, Any]]:
    """Per-constraint skew arithmetic for one node (for the explain trace)."""
    out: list[dict[str, Any]] = []
    for i, c in enumerate(s.constraints):
        tp_val = node.labels.get(c.topology_key)
        if tp_val is None:
            out.append({"topologyKey": c.topology_key, "topologyValue": None, "ok": False, "reason": "missing required label"})
            break
        min_match = s.min_match_num(i, c.min_domains)
        self_match = 1 if c.selector.matches(pod.labels) else 0
        match_num = s.tp_value_to_match_num[i].get(tp_val, 0)
        skew = match_num + self_match - min_match
        out.append(
            {
                "topologyKey": c.topology_key,
                "topologyValue": tp_val,
                "matchNum": match_num,
                "selfMatch": self_match,
                "minMatchNum": min_match,
                "skew": skew,
                "maxSkew": c.max_skew,
                "ok": skew <= c.max_skew,
            }
        )
        if skew > c.max_skew:
            break
    return out


def update_with_pod(s: PreFilterState, updated: Pod, preemptor: Pod, node: Node | None, delta: int) -> None:
    """``updateWithPod``: add (+1) or remove (-1) a pod's contribution on its node."""
    if updated.namespace != preemptor.namespace or node is None:
        return
    labels = node.labels
    if not node_has_all_keys(labels, s.constraints):
        return
    affinity = required_node_affinity(preemptor)
    pod_labels = updated.labels
    for i, c in enumerate(s.constraints):
        if not c.selector.matches(pod_labels):
            continue
        if not node_included(c, preemptor, node, affinity):
            continue
        v = labels[c.topology_key]
        m = s.tp_value_to_match_num[i]
        m[v] = m.get(v, 0) + delta
        s.critical_paths[i].update(v, m[v])
