"""InterPodAffinity's hard half: PreFilter counts, Filter verdicts, AddPod/RemovePod updates.

PreFilter walks the cluster once and counts, per topology pair (label key,
value) of the nodes the pods run on:

* ``existing_anti_affinity_counts``: existing pods whose *required anti-affinity*
  terms match the incoming pod (only nodes hosting such pods are walked);
* ``affinity_counts``: existing pods matching *all* of the incoming pod's
  required affinity terms (each term's topology pair is counted once per pod);
* ``anti_affinity_counts``: existing pods matching each of the incoming pod's
  required anti-affinity terms.

A pod on a node without a term's topology key is not counted at all. Filter then
only looks up the node's own topology pairs. The incoming pod's namespace
selectors are resolved against the Namespace objects once per cycle (see
``resolve_namespaces``); existing pods' selectors are matched against the labels
of the incoming pod's namespace.

Details for ``explain`` (which existing pods were counted in which domain) are
rebuilt on demand by running the same counting with a recorder over the nodes of
the domain asked about, so the normal path pays nothing for them.

Upstream model: ``pkg/scheduler/framework/plugins/interpodaffinity/filtering.go``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from kschedctl.framework.status import Code, Status
from kschedctl.framework.types import AffinityTerm, NodeInfo, PodInfo
from kschedctl.snapshot.model import KubeObject, Pod

#: Filter reasons (the exact kube-scheduler v1.35 strings).
ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH = "node(s) didn't satisfy existing pods anti-affinity rules"
ERR_REASON_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod affinity rules"
ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod anti-affinity rules"

TopologyPair = tuple[str, str]
Counts = dict[TopologyPair, int]

#: Detail recorder: (kind, topology key, topology value, counted pod, its node, term index).
Recorder = Callable[[str, str, str, Pod, str, int], None]

KIND_AFFINITY = "affinity"
KIND_ANTI_AFFINITY = "antiAffinity"
KIND_EXISTING_ANTI_AFFINITY = "existingAntiAffinity"


def resolve_namespaces(term: AffinityTerm, namespaces: Iterable[KubeObject]) -> AffinityTerm:
    """Add the names of the Namespace objects the term's namespaceSelector selects.

    An empty selector (all namespaces) is kept as it is. Otherwise the selected
    names join the term's namespace set, and the selector itself stays on the
    term: upstream v1.35 resets it on a copy of the term only, so the selector is
    still ORed in when matching, evaluated against an empty label set (which
    only a selector made of NotIn/DoesNotExist requirements matches). A nil
    selector selects no Namespace.
    """
    sel = term.namespace_selector
    if sel.empty:
        return term
    extra = {ns.name for ns in namespaces if sel.matches(ns.labels)}
    if not extra or extra <= term.namespaces:
        return term
    return AffinityTerm(
        namespaces=term.namespaces | extra,
        selector=term.selector,
        topology_key=term.topology_key,
        namespace_selector=sel,
    )


def pod_matches_all_terms(terms: list[AffinityTerm], pod: Pod) -> bool:
    """True when there is at least one term and the pod matches every one (nil namespace labels)."""
    if not terms:
        return False
    return all(t.matches(pod, None) for t in terms)


def _add(counts: Counts, labels: Mapping[str, str], key: str, value: int) -> None:
    """Change one pair's count; a pair whose count reaches zero is removed (counts may go negative)."""
    if key in labels:
        pair = (key, labels[key])
        n = counts.get(pair, 0) + value
        if n == 0:
            del counts[pair]
        else:
            counts[pair] = n


class PreFilterState:
    """What PreFilter leaves for Filter; ``clone`` copies the three count maps."""

    __slots__ = (
        "_detail",
        "affinity_counts",
        "affinity_terms",
        "anti_affinity_counts",
        "anti_affinity_terms",
        "anti_nodes",
        "existing_anti_affinity_counts",
        "namespace_labels",
        "nodes",
        "pod",
    )

    def __init__(
        self,
        pod: Pod,
        affinity_terms: list[AffinityTerm],
        anti_affinity_terms: list[AffinityTerm],
        namespace_labels: dict[str, str] | None,
        nodes: list[NodeInfo],
        anti_nodes: list[NodeInfo],
    ) -> None:
        self.pod = pod
        #: The incoming pod's required terms, namespace selectors resolved.
        self.affinity_terms = affinity_terms
        self.anti_affinity_terms = anti_affinity_terms
        #: Labels of the incoming pod's Namespace (None when there is no such object).
        self.namespace_labels = namespace_labels
        #: The node lists PreFilter walked (kept for ``explain``).
        self.nodes = nodes
        self.anti_nodes = anti_nodes
        self.existing_anti_affinity_counts: Counts = {}
        self.affinity_counts: Counts = {}
        self.anti_affinity_counts: Counts = {}
        #: explain: per topology domain (key, value), the counted pods by (kind, key, value)
        self._detail: dict[tuple[str, str], dict[tuple[str, str, str], list[dict[str, Any]]]] | None = None

    def clone(self) -> PreFilterState:
        c = PreFilterState.__new__(PreFilterState)
        c.pod = self.pod
        c.affinity_terms = self.affinity_terms
        c.anti_affinity_terms = self.anti_affinity_terms
        c.namespace_labels = self.namespace_labels
        c.nodes = self.nodes
        c.anti_nodes = self.anti_nodes
        c.existing_anti_affinity_counts = dict(self.existing_anti_affinity_counts)
        c.affinity_counts = dict(self.affinity_counts)
        c.anti_affinity_counts = dict(self.anti_affinity_counts)
        c._detail = None
        return c

    def update_with_pod(self, pi: PodInfo, node_info: NodeInfo, multiplier: int) -> None:
        """AddPod (+1) / RemovePod (-1): adjust the three maps for one pod on one node."""
        labels = node_info.node.labels
        incoming = self.pod
        for t in pi.required_anti_affinity_terms:
            if t.matches(incoming, self.namespace_labels):
                _add(self.existing_anti_affinity_counts, labels, t.topology_key, multiplier)
        other = pi.pod
        if pod_matches_all_terms(self.affinity_terms, other):
            for t in self.affinity_terms:
                _add(self.affinity_counts, labels, t.topology_key, multiplier)
        for t in self.anti_affinity_terms:
            if t.matches(other, None):
                _add(self.anti_affinity_counts, labels, t.topology_key, multiplier)
        self._detail = None


def count_existing_anti_affinity(
    pod: Pod, ns_labels: Mapping[str, str] | None, nodes: list[NodeInfo], record: Recorder | None = None
) -> Counts:
    """Existing pods' required anti-affinity terms that match the incoming pod, per topology pair."""
    counts: Counts = {}
    for ni in nodes:
        labels = ni.node.labels
        for epi in ni.pods_with_required_anti_affinity:
            for i, t in enumerate(epi.required_anti_affinity_terms):
                tk = t.topology_key
                if tk in labels and t.matches(pod, ns_labels):
                    pair = (tk, labels[tk])
                    counts[pair] = counts.get(pair, 0) + 1
                    if record is not None:
                        record(KIND_EXISTING_ANTI_AFFINITY, tk, labels[tk], epi.pod, ni.name, i)
    return counts


def count_incoming_terms(
    affinity_terms: list[AffinityTerm],
    anti_affinity_terms: list[AffinityTerm],
    nodes: list[NodeInfo],
    record: Recorder | None = None,
) -> tuple[Counts, Counts]:
    """Existing pods matching the incoming pod's required affinity (all terms) and anti-affinity terms."""
    aff: Counts = {}
    anti: Counts = {}
    if not affinity_terms and not anti_affinity_terms:
        return aff, anti
    for ni in nodes:
        labels = ni.node.labels
        for epi in ni.pods:
            other = epi.pod
            if affinity_terms and pod_matches_all_terms(affinity_terms, other):
                for i, t in enumerate(affinity_terms):
                    tk = t.topology_key
                    if tk in labels:
                        pair = (tk, labels[tk])
                        aff[pair] = aff.get(pair, 0) + 1
                        if record is not None:
                            record(KIND_AFFINITY, tk, labels[tk], other, ni.name, i)
            for i, t in enumerate(anti_affinity_terms):
                tk = t.topology_key
                if tk in labels and t.matches(other, None):
                    pair = (tk, labels[tk])
                    anti[pair] = anti.get(pair, 0) + 1
                    if record is not None:
                        record(KIND_ANTI_AFFINITY, tk, labels[tk], other, ni.name, i)
    return aff, anti


# ----------------------------------------------------------------------------------- Filter


def satisfy_existing_pods_anti_affinity(s: PreFilterState, labels: Mapping[str, str]) -> bool:
    counts = s.existing_anti_affinity_counts
    if counts:
        for kv in labels.items():
            if counts.get(kv, 0) > 0:
                return False
    return True


def satisfy_pod_anti_affinity(s: PreFilterState, labels: Mapping[str, str]) -> bool:
    counts = s.anti_affinity_counts
    if counts:
        for t in s.anti_affinity_terms:
            tk = t.topology_key
            if tk in labels and counts.get((tk, labels[tk]), 0) > 0:
                return False
    return True


def satisfy_pod_affinity(s: PreFilterState, labels: Mapping[str, str]) -> bool:
    pods_exist = True
    for t in s.affinity_terms:
        tk = t.topology_key
        if tk not in labels:
            return False  # every topology key must be on the node
        if s.affinity_counts.get((tk, labels[tk]), 0) <= 0:
            pods_exist = False
    if pods_exist:
        return True
    # "First of its group": nothing in the cluster matches yet, and the pod matches its own terms.
    return not s.affinity_counts and pod_matches_all_terms(s.affinity_terms, s.pod)


def filter_status(s: PreFilterState, node_info: NodeInfo) -> Status | None:
    """Filter's verdict on one node: None when it passes, else its status (a required affinity term
    unmet is UnschedulableAndUnresolvable; anti-affinity, which preemption may cure, Unschedulable)."""
    labels = node_info.node.labels
    if not satisfy_pod_affinity(s, labels):
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_AFFINITY_RULES_NOT_MATCH)
    if not satisfy_pod_anti_affinity(s, labels):
        return Status(Code.UNSCHEDULABLE, ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH)
    if not satisfy_existing_pods_anti_affinity(s, labels):
        return Status(Code.UNSCHEDULABLE, ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH)
    return None


# ----------------------------------------------------------------------------------- explain


def _domain_detail(s: PreFilterState, tk: str, tv: str) -> dict[tuple[str, str, str], list[dict[str, Any]]]:
    """The pods PreFilter counted in one topology domain, by (kind, key, value), in walk order.

    Only pods on nodes of the domain count there, so the walk is rerun over those nodes alone
    (with a recorder), once per domain asked about."""
    if s._detail is None:
        s._detail = {}
    found = s._detail.get((tk, tv))
    if found is not None:
        return found
    index: dict[tuple[str, str, str], list[dict[str, Any]]] = {}

    def record(kind: str, k: str, v: str, pod: Pod, node: str, term: int) -> None:
        if k == tk and v == tv:
            index.setdefault((kind, k, v), []).append({"pod": pod.key, "node": node, "term": term})

    def in_domain(nodes: list[NodeInfo]) -> list[NodeInfo]:
        return [ni for ni in nodes if ni.node.labels.get(tk) == tv]

    count_existing_anti_affinity(s.pod, s.namespace_labels, in_domain(s.anti_nodes), record)
    count_incoming_terms(s.affinity_terms, s.anti_affinity_terms, in_domain(s.nodes), record)
    s._detail[(tk, tv)] = index
    return index


def term_dict(t: AffinityTerm) -> dict[str, Any]:
    return {
        "topologyKey": t.topology_key,
        "labelSelector": str(t.selector),
        "namespaces": sorted(t.namespaces),
        "namespaceSelector": None if t.namespace_selector.nothing else str(t.namespace_selector),
    }


def explain_filter(s: PreFilterState, node_info: NodeInfo, limit: int = 50) -> dict[str, Any]:
    """Why Filter passes or rejects this node: per term the node's domain, the count and the pods counted.

    Pods are those PreFilter counted (at most ``limit`` per domain are listed;
    ``matchingPods`` is always the full count). Pods added later through AddPod
    (nominated pods, preemption what-ifs) change a cloned state, not this one.
    """
    labels = node_info.node.labels

    def domain(kind: str, counts: Counts, i: int, t: AffinityTerm) -> dict[str, Any]:
        tk = t.topology_key
        d: dict[str, Any] = {"term": i, **term_dict(t)}
        if tk not in labels:
            d.update(nodeValue=None, matchingPods=0, pods=[])
            return d
        tv = labels[tk]
        pods = [p for p in _domain_detail(s, tk, tv).get((kind, tk, tv), []) if p["term"] == i]
        d.update(nodeValue=tv, matchingPods=counts.get((tk, tv), 0), pods=pods[:limit])
        return d

    affinity = [domain(KIND_AFFINITY, s.affinity_counts, i, t) for i, t in enumerate(s.affinity_terms)]
    anti = [
        domain(KIND_ANTI_AFFINITY, s.anti_affinity_counts, i, t) for i, t in enumerate(s.anti_affinity_terms)
    ]
    existing: list[dict[str, Any]] = []
    if s.existing_anti_affinity_counts:
        for k, v in sorted(labels.items()):
            n = s.existing_anti_affinity_counts.get((k, v), 0)
            if n > 0:
                pods = _domain_detail(s, k, v).get((KIND_EXISTING_ANTI_AFFINITY, k, v), [])
                existing.append({"topologyKey": k, "value": v, "matchingPods": n, "pods": pods[:limit]})
    self_match = pod_matches_all_terms(s.affinity_terms, s.pod)
    verdict = filter_status(s, node_info)
    return {
        "affinity": {
            "terms": affinity,
            "anyPodMatchesInCluster": bool(s.affinity_counts),
            "podMatchesOwnTerms": self_match,
            "firstOfGroup": bool(s.affinity_terms) and not s.affinity_counts and self_match,
            "satisfied": satisfy_pod_affinity(s, labels),
        },
        "antiAffinity": {"terms": anti, "satisfied": satisfy_pod_anti_affinity(s, labels)},
        "existingPodsAntiAffinity": {
            "domains": existing,
            "satisfied": satisfy_existing_pods_anti_affinity(s, labels),
        },
        "reason": None if verdict is None else verdict.reasons[0],
    }
