"""InterPodAffinity's soft half: PreScore's per-topology sums, Score, NormalizeScore.

PreScore builds one map ``topology key -> value -> score`` from existing pods
(on the nodes of the snapshot, not only the feasible ones):

* the incoming pod's preferred affinity / anti-affinity terms that an existing
  pod matches add / subtract the term's weight in the existing pod's domain;
* *symmetrically*, an existing pod's required affinity terms that the incoming
  pod matches add ``hardPodAffinityWeight``, and its preferred affinity /
  anti-affinity terms add / subtract their weight.

When the incoming pod has no preferred terms only nodes hosting pods with
(anti-)affinity are walked, and only those pods. A node's raw score is the sum
of the map entries for its own labels, so it can be negative; NormalizeScore
scales min..max to 0..100 with float64 math and truncation, as upstream.

``ignorePreferredTermsOfExistingPods`` only makes PreScore Skip pods without
preferred terms; when the incoming pod has some, existing pods' terms still
count (as upstream).

Upstream model: ``pkg/scheduler/framework/plugins/interpodaffinity/scoring.go``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from kschedctl.framework.interfaces import NodeScore
from kschedctl.framework.status import MAX_NODE_SCORE
from kschedctl.framework.types import AffinityTerm, NodeInfo, PodInfo, WeightedAffinityTerm
from kschedctl.snapshot.model import Pod

#: topology key -> topology value -> summed weight.
ScoreMap = dict[str, dict[str, int]]

#: Detail recorder: (source, topology key, value, signed weight, existing pod, its node, term index).
ScoreRecorder = Callable[[str, str, str, int, Pod, str, int], None]

SRC_INCOMING_PREFERRED_AFFINITY = "incomingPreferredAffinity"
SRC_INCOMING_PREFERRED_ANTI_AFFINITY = "incomingPreferredAntiAffinity"
SRC_EXISTING_REQUIRED_AFFINITY = "existingRequiredAffinity"
SRC_EXISTING_PREFERRED_AFFINITY = "existingPreferredAffinity"
SRC_EXISTING_PREFERRED_ANTI_AFFINITY = "existingPreferredAntiAffinity"

_MIN_INT64 = -(2**63)
_MAX_INT64 = 2**63 - 1


def _int32(v: int) -> int:
    """Go int32 arithmetic (weight * multiplier is computed in int32 upstream)."""
    v &= 0xFFFFFFFF
    return v - 0x100000000 if v >= 0x80000000 else v


class PreScoreState:
    """What PreScore leaves for Score/NormalizeScore (never changed afterwards: ``clone`` shares it)."""

    __slots__ = (
        "_detail",
        "hard_pod_affinity_weight",
        "has_constraints",
        "namespace_labels",
        "nodes",
        "pod",
        "preferred_affinity_terms",
        "preferred_anti_affinity_terms",
        "topology_score",
    )

    def __init__(
        self,
        pod: Pod,
        preferred_affinity_terms: list[WeightedAffinityTerm],
        preferred_anti_affinity_terms: list[WeightedAffinityTerm],
        namespace_labels: dict[str, str] | None,
        hard_pod_affinity_weight: int,
        has_constraints: bool,
        nodes: list[NodeInfo],
    ) -> None:
        self.pod = pod
        self.preferred_affinity_terms = preferred_affinity_terms
        self.preferred_anti_affinity_terms = preferred_anti_affinity_terms
        self.namespace_labels = namespace_labels
        self.hard_pod_affinity_weight = hard_pod_affinity_weight
        self.has_constraints = has_constraints
        #: The nodes PreScore walked (all nodes, or those hosting pods with affinity).
        self.nodes = nodes
        self.topology_score: ScoreMap = {}
        #: explain: per topology domain (key, value), the contributions to its sum
        self._detail: dict[tuple[str, str], list[dict[str, Any]]] | None = None

    def clone(self) -> PreScoreState:
        return self


class TopologyScoreWalk:
    """PreScore's sums per topology domain while existing pods are walked (upstream's ``scoreMap``),
    and, for explain, the recorder told of every contribution and the pod and node being walked."""

    __slots__ = ("existing", "m", "node", "record")

    def __init__(self, record: ScoreRecorder | None = None) -> None:
        self.m: ScoreMap = {}
        self.record = record
        self.existing: Pod | None = None
        self.node = ""

    def process_term(
        self, term: AffinityTerm, weight: int, pod: Pod, ns_labels: Mapping[str, str] | None,
        labels: Mapping[str, str], multiplier: int,
    ) -> tuple[str, str, int] | None:
        """Add ``weight * multiplier`` to the node's domain when the term matches the pod; what was added."""
        if not term.matches(pod, ns_labels):
            return None
        tk = term.topology_key
        tv = labels.get(tk)
        if tv is None:
            return None
        d = self.m.get(tk)
        if d is None:
            d = self.m[tk] = {}
        w = _int32(weight * multiplier)
        d[tv] = d.get(tv, 0) + w
        return tk, tv, w

    def process_terms(
        self, terms: list[WeightedAffinityTerm], pod: Pod, ns_labels: Mapping[str, str] | None,
        labels: Mapping[str, str], multiplier: int, source: str,
    ) -> None:
        for i, wt in enumerate(terms):
            added = self.process_term(wt.term, wt.weight, pod, ns_labels, labels, multiplier)
            if added is not None and self.record is not None:
                self.recorded(added, source, i)

    def recorded(self, added: tuple[str, str, int], source: str, index: int) -> None:
        assert self.record is not None and self.existing is not None
        tk, tv, w = added
        self.record(source, tk, tv, w, self.existing, self.node, index)


def process_existing_pod(s: PreScoreState, existing: PodInfo, node_info: NodeInfo, walk: TopologyScoreWalk) -> None:
    """Add one existing pod's contributions, in both directions, to the walk's sums."""
    labels = node_info.node.labels
    if not labels:
        return
    other = existing.pod
    incoming = s.pod
    ns_labels = s.namespace_labels
    walk.existing, walk.node = other, node_info.name
    # the incoming pod's preferred terms select the existing pod (their namespaces are resolved: no labels needed)
    walk.process_terms(s.preferred_affinity_terms, other, None, labels, 1, SRC_INCOMING_PREFERRED_AFFINITY)
    walk.process_terms(s.preferred_anti_affinity_terms, other, None, labels, -1, SRC_INCOMING_PREFERRED_ANTI_AFFINITY)
    # the existing pod's terms select the incoming pod: required affinity at the hard weight, then preferred
    hard = s.hard_pod_affinity_weight
    if hard > 0:
        for i, t in enumerate(existing.required_affinity_terms):
            added = walk.process_term(t, hard, incoming, ns_labels, labels, 1)
            if added is not None and walk.record is not None:
                walk.recorded(added, SRC_EXISTING_REQUIRED_AFFINITY, i)
    walk.process_terms(existing.preferred_affinity_terms, incoming, ns_labels, labels, 1, SRC_EXISTING_PREFERRED_AFFINITY)
    walk.process_terms(
        existing.preferred_anti_affinity_terms, incoming, ns_labels, labels, -1, SRC_EXISTING_PREFERRED_ANTI_AFFINITY
    )


def build_topology_score(
    s: PreScoreState, record: ScoreRecorder | None = None, nodes: list[NodeInfo] | None = None
) -> ScoreMap:
    """Walk the PreScore nodes, or some of them (all their pods when the incoming pod has preferred terms)."""
    walk = TopologyScoreWalk(record)
    for ni in s.nodes if nodes is None else nodes:
        pods = ni.pods if s.has_constraints else ni.pods_with_affinity
        for epi in pods:
            process_existing_pod(s, epi, ni, walk)
    return walk.m


def score_node(s: PreScoreState, node_info: NodeInfo) -> int:
    labels = node_info.node.labels
    total = 0
    for tk, values in s.topology_score.items():
        if tk in labels:
            total += values.get(labels[tk], 0)
    return total


def normalize_values(s: PreScoreState, scores: list[int]) -> None:
    """``normalize`` on a plain list of scores, in place."""
    if not s.topology_score or not scores:
        return
    lo = min(scores)
    hi = max(scores)
    diff = hi - lo
    scores[:] = [int(float(MAX_NODE_SCORE) * (float(v - lo) / float(diff))) if diff > 0 else 0 for v in scores]


def normalize(s: PreScoreState, scores: list[NodeScore]) -> None:
    """Min-max scaling to [0, MAX_NODE_SCORE]: float64 division and truncation, as upstream."""
    if not s.topology_score:
        return
    lo = _MAX_INT64
    hi = _MIN_INT64
    for ns in scores:
        if ns.score > hi:
            hi = ns.score
        if ns.score < lo:
            lo = ns.score
    diff = hi - lo
    for ns in scores:
        f = 0.0
        if diff > 0:
            f = float(MAX_NODE_SCORE) * (float(ns.score - lo) / float(diff))
        ns.score = int(f)


# ----------------------------------------------------------------------------------- explain


def _domain_detail(s: PreScoreState, tk: str, tv: str) -> list[dict[str, Any]]:
    """The contributions to one topology domain's sum, in walk order. Only pods on nodes of the
    domain contribute to it, so the walk is rerun over those nodes alone, once per domain."""
    if s._detail is None:
        s._detail = {}
    found = s._detail.get((tk, tv))
    if found is not None:
        return found
    entries: list[dict[str, Any]] = []

    def record(source: str, k: str, v: str, weight: int, pod: Pod, node: str, term: int) -> None:
        if k == tk and v == tv:
            entries.append({"pod": pod.key, "node": node, "source": source, "term": term, "weight": weight})

    build_topology_score(s, record, [ni for ni in s.nodes if ni.node.labels.get(tk) == tv])
    s._detail[(tk, tv)] = entries
    return entries


def explain_score(s: PreScoreState, node_info: NodeInfo, limit: int = 50) -> dict[str, Any]:
    """Why the node got its raw score: per topology key on the node, its value's sum and what added to it.

    Each contribution names the existing pod, the node it runs on, the source
    (the incoming pod's preferred (anti-)affinity term, or the existing pod's
    required affinity term weighted by hardPodAffinityWeight, or its preferred
    (anti-)affinity term), the term index and the signed weight. At most
    ``limit`` contributions are listed per domain (``contributions`` counts all).
    """
    labels = node_info.node.labels
    domains: list[dict[str, Any]] = []
    for tk in sorted(s.topology_score):
        if tk not in labels:
            continue
        tv = labels[tk]
        entries = _domain_detail(s, tk, tv)
        domains.append(
            {
                "topologyKey": tk,
                "value": tv,
                "score": s.topology_score[tk].get(tv, 0),
                "contributions": len(entries),
                "pods": entries[:limit],
            }
        )
    return {
        "raw": score_node(s, node_info),
        "hardPodAffinityWeight": s.hard_pod_affinity_weight,
        "walkedAllPods": s.has_constraints,
        "domains": domains,
    }
