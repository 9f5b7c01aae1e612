"""InterPodAffinity's counting from the snapshot's indexes (the fast paths).

The walks of ``filtering`` (PreFilter) and ``scoring`` (PreScore) visit every pod, or
every pod with affinity terms, of the cluster; the functions here give the same counts
while visiting only what can match:

* the incoming pod's terms select existing pods: ``PodIndex.matching`` gives the pods of
  the term's namespaces that its selector matches, found by a label the selector requires;
* existing pods' terms select the incoming pod: ``TermIndex`` files every term of the pods
  with affinity (required anti-affinity for Filter; required affinity and the preferred
  terms for Score) under one ``key=value`` its selector requires, so the terms that can
  match the incoming pod are found from the incoming pod's own labels.

What is found still goes through ``AffinityTerm.matches`` (or the index's equivalent) and the
node's topology label, exactly as in the walks; counts are sums, so the order pods are visited
in does not matter, and n pods of one node add n times one contribution.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from kschedctl.framework.types import AffinityTerm, NodeInfo, PodInfo
from kschedctl.plugins.interpodaffinity.filtering import Counts
from kschedctl.plugins.interpodaffinity.scoring import PreScoreState, ScoreMap, _int32

if TYPE_CHECKING:
    from kschedctl.framework.nodeinfos import Snapshot
    from kschedctl.framework.podindex import PodIndex
    from kschedctl.snapshot.model import Pod

REQUIRED_ANTI_AFFINITY = 0
REQUIRED_AFFINITY = 1
PREFERRED_AFFINITY = 2
PREFERRED_ANTI_AFFINITY = 3

#: (term, weight, the existing pod's PodInfo, its node)
TermEntry = tuple[AffinityTerm, int, PodInfo, NodeInfo]
_NO_LABELS: dict[str, str] = {}


def _terms_of(pi: PodInfo) -> list[tuple[int, AffinityTerm, int]]:
    out = [(REQUIRED_ANTI_AFFINITY, t, 0) for t in pi.required_anti_affinity_terms]
    out += [(REQUIRED_AFFINITY, t, 0) for t in pi.required_affinity_terms]
    out += [(PREFERRED_AFFINITY, w.term, w.weight) for w in pi.preferred_affinity_terms]
    out += [(PREFERRED_ANTI_AFFINITY, w.term, w.weight) for w in pi.preferred_anti_affinity_terms]
    return out


class TermIndex:
    """The (anti-)affinity terms of the pods on the snapshot's nodes, by kind and by one
    ``(key, value)`` their selector requires (``unfiled``: terms without an ``In`` requirement)."""

    __slots__ = ("filed", "unfiled")

    def __init__(self, nodes: Iterable[NodeInfo]) -> None:
        self.filed: list[dict[tuple[str, str], list[TermEntry]]] = [{} for _ in range(4)]
        self.unfiled: list[list[TermEntry]] = [[] for _ in range(4)]
        for ni in nodes:
            for pi in ni.pods_with_affinity:
                self.pod_added(pi, ni)

    @classmethod
    def of(cls, snapshot: Snapshot) -> TermIndex:
        return snapshot.derived("InterPodAffinityTerms", lambda s: cls(s.node_info_list))

    def candidates(self, kind: int, labels: dict[str, str]) -> list[TermEntry]:
        """Terms of this kind that may match a pod with these labels (a superset)."""
        filed = self.filed[kind]
        out = list(self.unfiled[kind])
        if filed:
            for kv in labels.items():
                found = filed.get(kv)
                if found:
                    out.extend(found)
        return out

    def pod_added(self, pi: PodInfo, ni: NodeInfo) -> None:
        for kind, t, w in _terms_of(pi):
            if t.selector.nothing:
                continue  # matches no pod
            entry = (t, w, pi, ni)
            req = next((r for r in t.selector.requirements if r.operator == "In"), None)
            if req is None:
                self.unfiled[kind].append(entry)
            else:
                for v in dict.fromkeys(req.values):
                    self.filed[kind].setdefault((req.key, v), []).append(entry)

    def pod_removed(self, pi: PodInfo, ni: NodeInfo) -> None:
        uid = pi.pod.uid
        for kind in range(4):
            lists = [self.unfiled[kind], *self.filed[kind].values()]
            for lst in lists:
                lst[:] = [e for e in lst if not (e[3] is ni and e[2].pod.uid == uid)]


def term_namespaces(t: AffinityTerm, index: PodIndex) -> Iterable[str]:
    """The namespaces whose pods ``t.matches(pod, None)`` can accept."""
    if t.namespace_selector.matches(_NO_LABELS):
        return index.namespaces()
    return t.namespaces


def existing_anti_affinity_counts(terms: TermIndex, pod: Pod, ns_labels: dict[str, str] | None) -> Counts:
    """``count_existing_anti_affinity`` over every node with such pods."""
    counts: Counts = {}
    for t, _, _, ni in terms.candidates(REQUIRED_ANTI_AFFINITY, pod.labels):
        labels = ni.node.labels
        tk = t.topology_key
        if tk in labels and t.matches(pod, ns_labels):
            pair = (tk, labels[tk])
            counts[pair] = counts.get(pair, 0) + 1
    return counts


def incoming_term_counts(
    snapshot: Snapshot, affinity_terms: list[AffinityTerm], anti_affinity_terms: list[AffinityTerm]
) -> tuple[Counts, Counts]:
    """``count_incoming_terms`` over every node of the snapshot."""
    index = snapshot.pod_index()
    aff: Counts = {}
    anti: Counts = {}
    if affinity_terms:
        first, rest = affinity_terms[0], affinity_terms[1:]
        for pi, ni in index.matching(term_namespaces(first, index), first.selector):
            if all(t.matches(pi.pod, None) for t in rest):
                labels = ni.node.labels
                for t in affinity_terms:
                    tk = t.topology_key
                    if tk in labels:
                        pair = (tk, labels[tk])
                        aff[pair] = aff.get(pair, 0) + 1
    for t in anti_affinity_terms:
        tk = t.topology_key
        for ni, n in snapshot.match_counts().per_node(term_namespaces(t, index), t.selector, live_only=False).items():
            labels = ni.node.labels
            if tk in labels:
                pair = (tk, labels[tk])
                anti[pair] = anti.get(pair, 0) + n
    return aff, anti


def _add(m: ScoreMap, tk: str, tv: str, w: int) -> None:
    d = m.get(tk)
    if d is None:
        d = m[tk] = {}
    d[tv] = d.get(tv, 0) + w


def topology_score(s: PreScoreState, snapshot: Snapshot) -> ScoreMap:
    """``build_topology_score`` (PreScore's sums per topology domain) from the snapshot's indexes."""
    m: ScoreMap = {}
    terms = TermIndex.of(snapshot)
    if s.has_constraints:  # every existing pod is visited: the incoming pod's preferred terms
        index = snapshot.pod_index()
        counts = snapshot.match_counts()
        for weighted, multiplier in ((s.preferred_affinity_terms, 1), (s.preferred_anti_affinity_terms, -1)):
            for wt in weighted:
                t = wt.term
                tk = t.topology_key
                w = _int32(wt.weight * multiplier)
                d = m.get(tk)
                if d is None:
                    d = m[tk] = {}
                for ni, n in counts.per_node(term_namespaces(t, index), t.selector, live_only=False).items():
                    tv = ni.node.labels.get(tk)
                    if tv is not None:
                        d[tv] = d.get(tv, 0) + w * n  # n contributions of w each
                if not d:
                    del m[tk]
    incoming = s.pod
    ns_labels = s.namespace_labels
    kinds = [(PREFERRED_AFFINITY, 1), (PREFERRED_ANTI_AFFINITY, -1)]
    if s.hard_pod_affinity_weight > 0:
        kinds.insert(0, (REQUIRED_AFFINITY, 1))
    for kind, multiplier in kinds:
        for t, weight, _, ni in terms.candidates(kind, incoming.labels):
            labels = ni.node.labels
            tk = t.topology_key
            if tk in labels and t.matches(incoming, ns_labels):
                w = s.hard_pod_affinity_weight if kind == REQUIRED_AFFINITY else weight
                _add(m, tk, labels[tk], _int32(w * multiplier))
    return m
