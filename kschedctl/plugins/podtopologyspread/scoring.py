"""PodTopologySpread's soft half: PreScore state, Score and NormalizeScore.

PreScore collects the ``ScheduleAnyway`` constraints (or the defaults), the
domains present among the feasible nodes, and — over *all* nodes of the
snapshot — the matching pods per such domain. Hostname constraints are counted
per node in Score instead. A node's raw score is
``round(sum(count * log(domains + 2) + maxSkew - 1))`` (fewer matching pods is
better), and NormalizeScore flips it to ``100 * (max + min - s) / max`` with
integer division. Nodes lacking a topology key are "ignored" and get 0, except
that system-default spreading only requires the keys it can use.

Upstream model: ``pkg/scheduler/framework/plugins/podtopologyspread/scoring.go``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kschedctl.framework.interfaces import NodeScore
from kschedctl.framework.status import MAX_NODE_SCORE
from kschedctl.framework.types import NodeInfo
from kschedctl.kube.topology import HOSTNAME_LABEL
from kschedctl.plugins.helper import go_round
from kschedctl.plugins.podtopologyspread.common import (
    Constraint,
    count_matching_pods,
    node_has_all_keys,
    node_included,
    required_node_affinity,
)
from kschedctl.snapshot.model import Pod

if TYPE_CHECKING:
    from kschedctl.plugins.podtopologyspread.indexed import DomainLayout

INVALID_SCORE = -1
MAX_INT64 = 2**63 - 1


@dataclass(slots=True)
class PreScoreState:
    """Per-cycle data of the soft constraints (``preScoreState``). Never changed after PreScore."""

    constraints: list[Constraint] = field(default_factory=list)
    #: Feasible nodes missing some topology key (scored 0).
    ignored_nodes: set[str] = field(default_factory=set)
    #: Per constraint: topology value -> matching pods (hostname constraints stay empty).
    topology_value_to_pod_counts: list[dict[str, int]] = field(default_factory=list)
    topology_normalizing_weight: list[float] = field(default_factory=list)
    #: Per constraint, matching pods per node, counted from the snapshot's match counts (fast
    #: paths), valid for the NodeInfos of ``node_map``; None: Score counts each node's pods.
    per_node: list[dict[NodeInfo, int]] | None = None
    node_map: dict[str, NodeInfo] | None = None

    def clone(self) -> PreScoreState:
        return self

    def describe(self) -> dict[str, Any]:
        cs = []
        for i, c in enumerate(self.constraints):
            d = c.describe()
            d["topologyNormalizingWeight"] = self.topology_normalizing_weight[i] if self.topology_normalizing_weight else None
            d["podCounts"] = (
                None if c.topology_key == HOSTNAME_LABEL else dict(sorted(self.topology_value_to_pod_counts[i].items()))
            )
            cs.append(d)
        return {"constraints": cs, "ignoredNodes": sorted(self.ignored_nodes)}



def topology_normalizing_weight(size: int) -> float:
    return math.log(float(size + 2))


def score_for_count(cnt: int, max_skew: int, weight: float) -> float:
    return float(cnt) * weight + float(max_skew - 1)


def compute_pre_score_state(
    pod: Pod,
    constraints: list[Constraint],
    filtered: list[NodeInfo],
    all_nodes: list[NodeInfo],
    require_all_topologies: bool,
    per_node: list[dict[NodeInfo, int]] | None = None,
    node_map: dict[str, NodeInfo] | None = None,
    layout: DomainLayout | None = None,
) -> PreScoreState:
    """``initPreScoreState`` plus the per-domain counting over all nodes (``per_node``: the
    matching pods of each node already counted, see ``PreScoreState``; ``layout``, with it: the
    nodes of ``all_nodes`` that take part and their domains, so that only nodes with matching
    pods are visited)."""
    s = PreScoreState(constraints=constraints, per_node=per_node, node_map=node_map)
    if not constraints:
        return s
    counts: list[dict[str, int]] = [{} for _ in constraints]
    s.topology_value_to_pod_counts = counts
    topo_size = [0] * len(constraints)
    complete = layout.complete if layout is not None else None
    for ni in filtered:
        labels = ni.node.labels
        if require_all_topologies and not (ni in complete if complete is not None else node_has_all_keys(labels, constraints)):
            s.ignored_nodes.add(ni.node.name)
            continue
        for i, c in enumerate(constraints):
            if c.topology_key == HOSTNAME_LABEL:
                continue
            value = labels.get(c.topology_key, "")
            if value not in counts[i]:
                counts[i][value] = 0
                topo_size[i] += 1
    for i, c in enumerate(constraints):
        sz = topo_size[i]
        if c.topology_key == HOSTNAME_LABEL:
            sz = len(filtered) - len(s.ignored_nodes)
        s.topology_normalizing_weight.append(topology_normalizing_weight(sz))

    if per_node is not None and layout is not None:
        for i, m in enumerate(counts):
            if not m:
                continue  # no feasible node has a domain of it (hostname constraints)
            domain_of = layout.domain_of[i]
            for ni, n in per_node[i].items():
                domain = domain_of.get(ni)
                if domain is not None and domain in m:
                    m[domain] += n
        return s
    affinity = required_node_affinity(pod)
    ns = pod.namespace
    for ni in all_nodes:
        node = ni.node
        labels = node.labels
        if require_all_topologies and not node_has_all_keys(labels, constraints):
            continue
        for i, c in enumerate(constraints):
            if not node_included(c, pod, node, affinity):
                continue
            value = labels.get(c.topology_key, "")
            m = counts[i]
            if value not in m:
                continue  # no feasible node in this domain (hostname constraints always land here)
            m[value] += per_node[i].get(ni, 0) if per_node is not None else count_matching_pods(ni.pods, c.selector, ns)
    return s


def score_node(s: PreScoreState, pod: Pod, ni: NodeInfo) -> int:
    node = ni.node
    if node.name in s.ignored_nodes:
        return 0
    labels = node.labels
    score = 0.0
    for i, c in enumerate(s.constraints):
        tp_val = labels.get(c.topology_key)
        if tp_val is None:
            continue
        if c.topology_key == HOSTNAME_LABEL:
            if s.per_node is not None and s.node_map is not None and s.node_map.get(node.name) is ni:
                cnt = s.per_node[i].get(ni, 0)
            else:
                cnt = count_matching_pods(ni.pods, c.selector, pod.namespace)
        else:
            cnt = s.topology_value_to_pod_counts[i][tp_val]
        score += score_for_count(cnt, c.max_skew, s.topology_normalizing_weight[i])
    return go_round(score)


def explain_score(s: PreScoreState, pod: Pod, ni: NodeInfo) -> dict[str, Any]:
    """How one node's raw score is made up (for the explain trace)."""
    node = ni.node
    if node.name in s.ignored_nodes:
        return {"ignored": True, "reason": "node lacks a topology key of the constraints", "raw": 0}
    parts = []
    total = 0.0
    for i, c in enumerate(s.constraints):
        tp_val = node.labels.get(c.topology_key)
        if tp_val is None:
            parts.append({"topologyKey": c.topology_key, "topologyValue": None, "contribution": 0.0})
            continue
        if c.topology_key == HOSTNAME_LABEL:
            cnt = count_matching_pods(ni.pods, c.selector, pod.namespace)
        else:
            cnt = s.topology_value_to_pod_counts[i][tp_val]
        part = score_for_count(cnt, c.max_skew, s.topology_normalizing_weight[i])
        total += part
        parts.append(
            {
                "topologyKey": c.topology_key,
                "topologyValue": tp_val,
                "matchingPods": cnt,
                "weight": s.topology_normalizing_weight[i],
                "maxSkew": c.max_skew,
                "contribution": part,
            }
        )
    return {"ignored": False, "constraints": parts, "sum": total, "raw": go_round(total)}


def normalize_values(s: PreScoreState, names: list[str], scores: list[int]) -> None:
    """``normalize`` on plain lists (names and scores in the same order), in place."""
    ignored = s.ignored_nodes
    counted = [v for n, v in zip(names, scores, strict=True) if n not in ignored] if ignored else scores
    min_score = min(counted, default=MAX_INT64)
    max_score = max(0, max(counted, default=0))
    for k, (n, v) in enumerate(zip(names, scores, strict=True)):
        if (ignored and n in ignored) or v == INVALID_SCORE:
            scores[k] = 0
        elif max_score == 0:
            scores[k] = MAX_NODE_SCORE
        else:
            scores[k] = MAX_NODE_SCORE * (max_score + min_score - v) // max_score


def normalize(s: PreScoreState, scores: list[NodeScore]) -> None:
    min_score = MAX_INT64
    max_score = 0
    for ns in scores:
        if ns.name in s.ignored_nodes:
            ns.score = INVALID_SCORE
            continue
        if ns.score < min_score:
            min_score = ns.score
        if ns.score > max_score:
            max_score = ns.score
    for ns in scores:
        if ns.score == INVALID_SCORE:
            ns.score = 0
            continue
        if max_score == 0:
            ns.score = MAX_NODE_SCORE
            continue
        # All operands are non-negative here, so floor division equals Go's truncation.
        ns.score = MAX_NODE_SCORE * (max_score + min_score - ns.score) // max_score
