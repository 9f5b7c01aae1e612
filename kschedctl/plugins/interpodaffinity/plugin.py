"""The InterPodAffinity plugin (kube-scheduler v1.35.4): pod affinity and anti-affinity.

Extension points, as upstream: PreFilter (+ AddPod/RemovePod extensions),
Filter, PreScore, Score (+ NormalizeScore). The hard rules live in
``filtering``, the soft ones in ``scoring``.

Rules worth knowing (all checked against v1.35):

* A term's namespaces default to the pod's own namespace only when both
  ``namespaces`` and ``namespaceSelector`` are absent. A nil namespaceSelector
  selects nothing; an empty one (``{}``) selects every namespace.
* ``matchLabelKeys`` / ``mismatchLabelKeys`` are not read by the scheduler: the
  API server merges them into ``labelSelector`` when the pod is created
  (MatchLabelKeysInPodAffinity, GA and locked on since v1.33). Pods read from a
  live cluster already carry the merged selector; the plugin ignores the keys.
* PreFilter returns Skip when no existing pod's required anti-affinity matches
  the pod and the pod has no required (anti-)affinity terms. PreScore returns
  Skip when nothing contributed to any topology domain, or when
  ``ignorePreferredTermsOfExistingPods`` is set and the pod has no preferred
  terms.

Explain support (not a kube-scheduler extension point):

* ``explain(state)`` returns ``{"preFilter": {...} | None, "preScore": {...} | None}``:
  the resolved terms of the incoming pod and the per-topology counts / sums
  (``None`` when that half did not run or returned Skip).
* ``explain_node(state, pod, node_info)`` returns ``{"filter": {...} | None,
  "score": {...} | None}`` for one node: for Filter, per required term the node's
  domain, how many pods matched there and which (pod, node, term), whether the
  "first of its group" rule applied, and the existing pods whose anti-affinity
  rejects the node; for Score, per topology key on the node the domain's sum and
  every contribution (existing pod, source term, signed weight). The pod lists
  are rebuilt per topology domain asked about (the same walk over the domain's
  nodes only), so the normal cycle pays nothing for them.

Upstream model: ``pkg/scheduler/framework/plugins/interpodaffinity/plugin.go``.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from kschedctl.config.args import InterPodAffinityArgs
from kschedctl.errors import ConfigError
from kschedctl.framework import signers
from kschedctl.framework.cycle_state import CycleState, StateKey
from kschedctl.framework.interfaces import Handle, NodeScore, NodeVerdict, PreFilterResult
from kschedctl.framework.signers import SignFragment
from kschedctl.framework.status import Status
from kschedctl.framework.types import NodeInfo, PodInfo, WeightedAffinityTerm
from kschedctl.framework.verdict import NodeVerdictFilter
from kschedctl.plugins.helper import use_fast_paths
from kschedctl.plugins.interpodaffinity.filtering import (
    Counts,
    PreFilterState,
    count_existing_anti_affinity,
    count_incoming_terms,
    explain_filter,
    filter_status,
    resolve_namespaces,
    term_dict,
)
from kschedctl.plugins.interpodaffinity.indexed import (
    TermIndex,
    existing_anti_affinity_counts,
    incoming_term_counts,
    topology_score,
)
from kschedctl.plugins.interpodaffinity.scoring import (
    PreScoreState,
    build_topology_score,
    explain_score,
    normalize,
    normalize_values,
    score_node,
)
from kschedctl.snapshot.model import Pod

NAME = "InterPodAffinity"
#: The args this plugin takes (decoded by kschedctl.config, which owns the model).
ARGS_MODEL = InterPodAffinityArgs

PRE_FILTER_STATE_KEY: StateKey[PreFilterState] = StateKey("PreFilter" + NAME)
PRE_SCORE_STATE_KEY: StateKey[PreScoreState] = StateKey("PreScore" + NAME)


def _pre_filter_state_missing() -> Status:
    return Status.as_error(f'error reading "{PRE_FILTER_STATE_KEY.name}" from cycleState: not found')


def _pre_score_state_missing() -> Status:
    return Status.as_error(f'failed to read "{PRE_SCORE_STATE_KEY.name}" from cycleState: not found')


def _counts_list(counts: Counts) -> list[dict[str, Any]]:
    return [{"topologyKey": k, "value": v, "count": n} for (k, v), n in sorted(counts.items())]


class InterPodAffinity(NodeVerdictFilter):
    """PreFilter/Filter/PreScore/Score of inter-pod (anti-)affinity."""

    def __init__(self, args: InterPodAffinityArgs, handle: Handle) -> None:
        self.name = NAME
        self.args = args
        self.handle = handle
        #: Count from the snapshot's indexes (``indexed``) rather than walk every pod: chosen once,
        #: by the framework that builds the plugin (``Framework.fast_paths``).
        self.indexed = use_fast_paths(handle)

    # PreFilter ---------------------------------------------------------------------------
    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: list[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status]:
        snap = self.handle.snapshot
        anti_nodes = list(snap.have_pods_with_required_anti_affinity_list)
        pi = PodInfo.of(pod)
        namespaces = snap.cluster.of_kind("Namespace")
        affinity_terms = [resolve_namespaces(t, namespaces) for t in pi.required_affinity_terms]
        anti_terms = [resolve_namespaces(t, namespaces) for t in pi.required_anti_affinity_terms]
        ns_labels = snap.namespace_labels(pod.namespace)
        s = PreFilterState(pod, affinity_terms, anti_terms, ns_labels, nodes, anti_nodes)
        if self.indexed:
            s.existing_anti_affinity_counts = existing_anti_affinity_counts(TermIndex.of(snap), pod, ns_labels)
            if affinity_terms or anti_terms:
                s.affinity_counts, s.anti_affinity_counts = incoming_term_counts(snap, affinity_terms, anti_terms)
        else:
            s.existing_anti_affinity_counts = count_existing_anti_affinity(pod, ns_labels, anti_nodes)
            s.affinity_counts, s.anti_affinity_counts = count_incoming_terms(affinity_terms, anti_terms, nodes)
        if not s.existing_anti_affinity_counts and not affinity_terms and not anti_terms:
            return None, Status.skip()
        state.write(PRE_FILTER_STATE_KEY, s)
        return None, Status()

    def pre_filter_extensions(self) -> InterPodAffinity:
        return self

    def add_pod(self, state: CycleState, pod: Pod, pod_info_to_add: PodInfo, node_info: NodeInfo) -> Status:
        s = state.get(PRE_FILTER_STATE_KEY)
        if s is None:
            return _pre_filter_state_missing()
        s.update_with_pod(pod_info_to_add, node_info, 1)
        return Status()

    def remove_pod(
        self, state: CycleState, pod: Pod, pod_info_to_remove: PodInfo, node_info: NodeInfo
    ) -> Status:
        s = state.get(PRE_FILTER_STATE_KEY)
        if s is None:
            return _pre_filter_state_missing()
        s.update_with_pod(pod_info_to_remove, node_info, -1)
        return Status()

    # Filter ------------------------------------------------------------------------------
    def node_verdict(self, state: CycleState, pod: Pod) -> NodeVerdict:
        """Filter: the node's domains against the PreFilter counts (``filtering.filter_status``)."""
        s = state.get(PRE_FILTER_STATE_KEY)
        if s is None:
            return lambda node_info: _pre_filter_state_missing()
        return partial(filter_status, s)

    # PreScore / Score --------------------------------------------------------------------
    def pre_score(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Status:
        aff = pod.affinity
        has_constraints = aff is not None and bool(
            aff.pod_affinity_preferred or aff.pod_anti_affinity_preferred
        )
        if self.args.ignore_preferred_terms_of_existing_pods and not has_constraints:
            return Status.skip()
        snap = self.handle.snapshot
        # The feasible list is not used: upstream walks the snapshot's nodes.
        walk = list(snap.node_info_list if has_constraints else snap.have_pods_with_affinity_list)
        pi = PodInfo.of(pod)
        namespaces = snap.cluster.of_kind("Namespace")
        preferred = [
            WeightedAffinityTerm(resolve_namespaces(w.term, namespaces), w.weight)
            for w in pi.preferred_affinity_terms
        ]
        preferred_anti = [
            WeightedAffinityTerm(resolve_namespaces(w.term, namespaces), w.weight)
            for w in pi.preferred_anti_affinity_terms
        ]
        s = PreScoreState(
            pod,
            preferred,
            preferred_anti,
            snap.namespace_labels(pod.namespace),
            self.args.hard_pod_affinity_weight,
            has_constraints,
            walk,
        )
        if self.indexed:
            s.topology_score = topology_score(s, snap)
        else:
            s.topology_score = build_topology_score(s)
        if not s.topology_score:
            return Status.skip()
        state.write(PRE_SCORE_STATE_KEY, s)
        return Status()

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status]:
        s = state.get(PRE_SCORE_STATE_KEY)
        if s is None:
            return 0, _pre_score_state_missing()
        return score_node(s, node_info), Status()

    def score_extensions(self) -> InterPodAffinity:
        return self

    def normalize_score(self, state: CycleState, pod: Pod, scores: list[NodeScore]) -> Status:
        s = state.get(PRE_SCORE_STATE_KEY)
        if s is None:
            return _pre_score_state_missing()
        normalize(s, scores)
        return Status()

    # whole node lists (same results as the per-node methods above) ----------------------
    def score_nodes(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> tuple[list[int], Status]:
        s = state.get(PRE_SCORE_STATE_KEY)
        if s is None:
            return [], _pre_score_state_missing()
        return [score_node(s, ni) for ni in nodes], Status()

    def normalize_scores(self, state: CycleState, pod: Pod, names: list[str], scores: list[int]) -> Status:
        s = state.get(PRE_SCORE_STATE_KEY)
        if s is None:
            return _pre_score_state_missing()
        normalize_values(s, scores)
        return Status()

    # explain -----------------------------------------------------------------------------
    def explain(self, state: CycleState) -> dict[str, Any]:
        """Cycle-wide view: resolved incoming terms and the per-topology counts / sums."""
        out: dict[str, Any] = {"preFilter": None, "preScore": None}
        fs = state.get(PRE_FILTER_STATE_KEY)
        if fs is not None:
            out["preFilter"] = {
                "requiredAffinityTerms": [term_dict(t) for t in fs.affinity_terms],
                "requiredAntiAffinityTerms": [term_dict(t) for t in fs.anti_affinity_terms],
                "namespaceLabels": fs.namespace_labels,
                "affinityCounts": _counts_list(fs.affinity_counts),
                "antiAffinityCounts": _counts_list(fs.anti_affinity_counts),
                "existingAntiAffinityCounts": _counts_list(fs.existing_anti_affinity_counts),
            }
        ss = state.get(PRE_SCORE_STATE_KEY)
        if ss is not None:
            out["preScore"] = {
                "preferredAffinityTerms": [
                    {"weight": w.weight, **term_dict(w.term)} for w in ss.preferred_affinity_terms
                ],
                "preferredAntiAffinityTerms": [
                    {"weight": w.weight, **term_dict(w.term)} for w in ss.preferred_anti_affinity_terms
                ],
                "hardPodAffinityWeight": ss.hard_pod_affinity_weight,
                "walkedAllPods": ss.has_constraints,
                "nodesWalked": len(ss.nodes),
                "topologyScore": [
                    {"topologyKey": k, "value": v, "score": n}
                    for k in sorted(ss.topology_score)
                    for v, n in sorted(ss.topology_score[k].items())
                ],
            }
        return out

    def explain_node(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> dict[str, Any]:
        """Per-node detail: which existing pods and terms decided the Filter verdict and the raw score."""
        fs = state.get(PRE_FILTER_STATE_KEY)
        ss = state.get(PRE_SCORE_STATE_KEY)
        return {
            "filter": None if fs is None else explain_filter(fs, node_info),
            "score": None if ss is None else explain_score(ss, node_info),
        }

    def sign_pod(self, pod: Pod) -> tuple[list[SignFragment] | None, Status]:
        """OpportunisticBatching: a pod with pod (anti-)affinity depends on other pods' placement and is
        not signable; otherwise its labels matter (existing pods' terms may select it), unless
        ``ignorePreferredTermsOfExistingPods`` is set."""
        aff = pod.affinity
        if aff is not None and (aff.has_pod_affinity or aff.has_pod_anti_affinity):
            return None, Status.unschedulable("pods with InterPodAffinity are not signable")
        if self.args.ignore_preferred_terms_of_existing_pods:
            return None, Status()
        return [SignFragment(signers.LABELS, signers.labels(pod))], Status()


def new(args: InterPodAffinityArgs | None, handle: Handle) -> InterPodAffinity:
    a = args if args is not None else InterPodAffinityArgs()
    w = a.hard_pod_affinity_weight
    if w < 0 or w > 100:
        raise ConfigError(f"hardPodAffinityWeight: Invalid value: {w}: not in valid range [0, 100]")
    return InterPodAffinity(a, handle)
