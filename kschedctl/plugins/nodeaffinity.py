"""NodeAffinity: the pod's nodeSelector and node affinity, plus the profile's addedAffinity.

* PreFilter returns Skip (which also skips Filter) only when the pod has no
  required node affinity, no ``spec.nodeSelector`` (an empty but present map
  counts as present) and the profile adds no required affinity. Otherwise it
  succeeds, and narrows the candidate nodes when *every* required term pins node
  names with ``matchFields`` ``metadata.name In [...]`` (the names of one term
  intersect, the terms unite); an empty result is the UnschedulableAndUnresolvable
  "pod affinity terms conflict".
* Filter rejects (UnschedulableAndUnresolvable) a node that fails the profile's
  ``addedAffinity`` required selector ("scheduler-enforced") or the pod's
  nodeSelector/required terms. Terms that do not parse never match; their errors
  are ignored here, as upstream.
* PreScore returns Skip when neither the pod nor the profile has preferred terms
  (an empty but present list counts as present); a pod preferred term that does
  not parse (and has a non-zero weight) makes it an Error. Score sums the weights
  of the matching preferred terms (profile's and pod's; zero-weight and empty
  terms never count), and NormalizeScore scales to 0..100 by the highest score.

Upstream model: ``pkg/scheduler/framework/plugins/nodeaffinity/node_affinity.go``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kschedctl.config.args import NodeAffinityArgs
from kschedctl.errors import ConfigError
from kschedctl.framework import signers
from kschedctl.framework.cycle_state import CycleState, StateKey
from kschedctl.framework.interfaces import Handle, NodeScore, NodeVerdict, PreFilterResult
from kschedctl.framework.signers import SignFragment
from kschedctl.framework.status import MAX_NODE_SCORE, Code, Status
from kschedctl.framework.types import NodeInfo
from kschedctl.framework.verdict import NodeVerdictFilter
from kschedctl.kube.selectors import (
    NodeSelector,
    NodeSelectorTerm,
    aggregate_error_message,
    parse_node_selector,
    parse_node_selector_term,
)
from kschedctl.plugins.helper import default_normalize_score, default_normalize_scores
from kschedctl.snapshot.model import Node, Pod

NAME = "NodeAffinity"
#: The args this plugin takes (decoded by kschedctl.config, which owns the model).
ARGS_MODEL = NodeAffinityArgs

ERR_REASON_POD = "node(s) didn't match Pod's node affinity/selector"
ERR_REASON_ENFORCED = "node(s) didn't match scheduler-enforced node affinity"
ERR_REASON_CONFLICT = "pod affinity terms conflict"

_PRE_FILTER_NAME = "PreFilter" + NAME
_PRE_SCORE_NAME = "PreScore" + NAME


class PreferredTerms:
    """Weighted preferred terms ready to score: zero-weight and empty terms are dropped."""

    __slots__ = ("terms",)

    def __init__(self, terms: list[tuple[int, NodeSelectorTerm]]) -> None:
        self.terms = terms

    @classmethod
    def parse(cls, raw: list[Any], path: str) -> tuple[PreferredTerms | None, list[str]]:
        """Parse ``[]v1.PreferredSchedulingTerm``; returns (terms, errors) and terms is None on errors."""
        terms: list[tuple[int, NodeSelectorTerm]] = []
        errors: list[str] = []
        for i, item in enumerate(raw):
            item = item if isinstance(item, dict) else {}
            weight = _as_int(item.get("weight"))
            term = parse_node_selector_term(item.get("preference"), f"{path}[{i}].preference")
            if weight == 0 or term.is_empty:
                continue
            if term.errors:
                errors.extend(term.error_messages(f"{path}[{i}]"))
            else:
                terms.append((weight, term))
        if errors:
            return None, errors
        return cls(terms), []

    def score(self, node: Node) -> int:
        labels = node.labels
        name = node.name
        return sum(w for w, t in self.terms if t.matches(labels, name))


@dataclass(frozen=True, slots=True)
class RequiredNodeAffinity:
    """The pod's nodeSelector (exact label matches) and required node affinity, as Filter checks them."""

    node_selector: tuple[tuple[str, str], ...]
    required: NodeSelector | None

    @classmethod
    def of(cls, pod: Pod) -> RequiredNodeAffinity:
        aff = pod.affinity
        return cls(tuple(pod.node_selector.items()), aff.node_required if aff is not None else None)

    def matches(self, node: Node) -> bool:
        labels = node.labels
        for k, v in self.node_selector:
            if labels.get(k) != v:
                return False
        if self.required is not None:
            return self.required.matches(labels, node.name)
        return True

    def clone(self) -> RequiredNodeAffinity:
        return self


@dataclass(frozen=True, slots=True)
class _PreScoreState:
    preferred: PreferredTerms | None

    def clone(self) -> _PreScoreState:
        return self


PRE_FILTER_KEY: StateKey[RequiredNodeAffinity] = StateKey(_PRE_FILTER_NAME)
PRE_SCORE_KEY: StateKey[_PreScoreState] = StateKey(_PRE_SCORE_NAME)


def _as_int(v: Any) -> int:
    if isinstance(v, bool):
        return 0
    if isinstance(v, int):
        return v
    try:
        return int(str(v))
    except ValueError:
        return 0


def _raw_node_affinity(pod: Pod) -> dict[str, Any]:
    spec = pod.raw.get("spec")
    aff = spec.get("affinity") if isinstance(spec, dict) else None
    na = aff.get("nodeAffinity") if isinstance(aff, dict) else None
    return na if isinstance(na, dict) else {}


def _has_node_selector_field(pod: Pod) -> bool:
    """``pod.Spec.NodeSelector != nil``: present in the object, even when empty."""
    spec = pod.raw.get("spec")
    return isinstance(spec, dict) and spec.get("nodeSelector") is not None


def pod_preferred_terms(pod: Pod) -> tuple[PreferredTerms | None, str | None]:
    """The pod's preferred node affinity (None when the field is absent) or the parse error message."""
    raw = _raw_node_affinity(pod).get("preferredDuringSchedulingIgnoredDuringExecution")
    if raw is None:
        return None, None
    terms, errors = PreferredTerms.parse(raw if isinstance(raw, list) else [], "")
    if errors:
        return None, aggregate_error_message(errors)
    return terms, None


def pre_filter_node_names(required: NodeSelector) -> tuple[set[str] | None, bool]:
    """(names, conflict): the node names every term pins with matchFields metadata.name In, if all do."""
    names: set[str] | None = None
    for term in required.terms:
        term_names: set[str] | None = None
        for r in term.fields:
            if r.key == "metadata.name" and r.operator == "In":
                vals = set(r.values)
                term_names = vals if term_names is None else term_names & vals
        if term_names is None:
            return None, False
        names = set(term_names) if names is None else names | term_names
    if names is not None and not names:
        return None, True
    return (names or None), False


def _selector_verdict(selector: tuple[tuple[str, str], ...]) -> NodeVerdict:
    """The verdict of a pod with only a nodeSelector (no required terms, none added by the profile):
    ``RequiredNodeAffinity.matches`` on the node's labels, without its calls (pending pods at 5,000 nodes)."""

    def verdict(node_info: NodeInfo) -> Status | None:
        labels = node_info.node.labels
        for k, v in selector:
            if labels.get(k) != v:
                return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_POD)
        return None

    return verdict


class NodeAffinity(NodeVerdictFilter):
    name = NAME

    def __init__(self, added_required: NodeSelector | None, added_preferred: PreferredTerms | None) -> None:
        self.added_required = added_required
        self.added_preferred = added_preferred

    # PreFilter / Filter ------------------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> tuple[PreFilterResult | None, Status]:
        required = pod.affinity.node_required if pod.affinity is not None else None
        if required is None and self.added_required is None and not _has_node_selector_field(pod):
            return None, Status.skip()
        state.write(PRE_FILTER_KEY, RequiredNodeAffinity.of(pod))
        if required is None or not required.terms:
            return None, Status()
        names, conflict = pre_filter_node_names(required)
        if conflict:
            return None, Status.unresolvable(ERR_REASON_CONFLICT)
        if names:
            return PreFilterResult(names), Status()
        return None, Status()

    def pre_filter_extensions(self) -> None:
        return None

    def node_verdict(self, state: CycleState, pod: Pod) -> NodeVerdict:
        """Filter: the profile's added affinity first, then the pod's nodeSelector and required terms."""
        added = self.added_required
        req = state.get(PRE_FILTER_KEY)
        if req is None:
            req = RequiredNodeAffinity.of(pod)
        if added is None and req.required is None:
            return _selector_verdict(req.node_selector)

        def verdict(node_info: NodeInfo) -> Status | None:
            node = node_info.node
            if added is not None and not added.matches(node.labels, node.name):
                return Status.unresolvable(ERR_REASON_ENFORCED)
            return None if req.matches(node) else Status.unresolvable(ERR_REASON_POD)

        return verdict

    # PreScore / Score --------------------------------------------------------------------
    def pre_score(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Status:
        preferred, err = pod_preferred_terms(pod)
        if err is not None:
            return Status.as_error(err)
        if preferred is None and self.added_preferred is None:
            return Status.skip()
        state.write(PRE_SCORE_KEY, _PreScoreState(preferred))
        return Status()

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status]:
        node = node_info.node
        count = 0
        if self.added_preferred is not None:
            count += self.added_preferred.score(node)
        s = state.get(PRE_SCORE_KEY)
        if s is None:
            preferred, err = pod_preferred_terms(pod)
            if err is not None:
                return 0, Status.as_error(err)
            s = _PreScoreState(preferred)
        if s.preferred is not None:
            count += s.preferred.score(node)
        return count, Status()

    def score_extensions(self) -> NodeAffinity:
        return self

    def normalize_score(self, state: CycleState, pod: Pod, scores: list[NodeScore]) -> Status:
        return default_normalize_score(MAX_NODE_SCORE, False, scores)

    def sign_pod(self, pod: Pod) -> tuple[list[SignFragment] | None, Status]:
        """OpportunisticBatching: verdict and score depend on node affinity and nodeSelector only."""
        return [
            SignFragment(signers.NODE_AFFINITY, signers.node_affinity(pod)),
            SignFragment(signers.NODE_SELECTOR, signers.node_selector(pod)),
        ], Status()

    # whole node lists (same results as the per-node methods above) -----------------------------
    def score_nodes(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> tuple[list[int], Status]:
        s = state.get(PRE_SCORE_KEY)
        if s is None:
            preferred, err = pod_preferred_terms(pod)
            if err is not None:
                return [], Status.as_error(err)
            s = _PreScoreState(preferred)
        scorers = [t for t in (self.added_preferred, s.preferred) if t is not None]
        return [sum(t.score(ni.node) for t in scorers) for ni in nodes], Status()

    def normalize_scores(self, state: CycleState, pod: Pod, names: list[str], scores: list[int]) -> Status:
        return default_normalize_scores(MAX_NODE_SCORE, False, scores)


def parse_added_affinity(added: dict[str, Any] | None) -> tuple[NodeSelector | None, PreferredTerms | None]:
    """Parse ``NodeAffinityArgs.addedAffinity``; invalid terms are a configuration error, as upstream."""
    if not added:
        return None, None
    base = "addedAffinity"
    required: NodeSelector | None = None
    preferred: PreferredTerms | None = None
    errors: list[str] = []
    raw_req = added.get("requiredDuringSchedulingIgnoredDuringExecution")
    if raw_req is not None:
        path = f"{base}.requiredDuringSchedulingIgnoredDuringExecution"
        required = parse_node_selector(raw_req, path)
        errors.extend(required.error_messages(path))
    raw_pref = added.get("preferredDuringSchedulingIgnoredDuringExecution")
    if isinstance(raw_pref, list) and raw_pref:
        path = f"{base}.preferredDuringSchedulingIgnoredDuringExecution"
        preferred, pref_errors = PreferredTerms.parse(raw_pref, path)
        errors.extend(pref_errors)
    if errors:
        raise ConfigError(f"NodeAffinityArgs: {aggregate_error_message(errors)}")
    return required, preferred


def new(args: NodeAffinityArgs | None, handle: Handle) -> NodeAffinity:
    args = args or NodeAffinityArgs()
    required, preferred = parse_added_affinity(args.added_affinity)
    return NodeAffinity(required, preferred)
