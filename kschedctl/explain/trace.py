"""The result object of a dry run: every renderer and the JSON/YAML output read it.

``Trace.to_dict()`` carries every key of the conformance schema
(shared/conformance/README.md) with the same meaning, plus extra keys that explain
*why* (per-node detail, the node order, the tie-break, the would-be Binding).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from itertools import chain
from typing import Any

from kschedctl import K8S_VERSION
from kschedctl.explain.uncertainty import OrderDependence
from kschedctl.framework.batch import BatchRecord
from kschedctl.framework.extender import ExtenderCall
from kschedctl.framework.failures import PluginFailure
from kschedctl.framework.status import Code, PluginStatus, Status


@dataclass(slots=True)
class NodeVerdict:
    """The Filter outcome of one node: a plugin's, or a filtering extender's (which names no plugin)."""

    node: str
    status: Status
    #: The extender (urlPrefix) that rejected a node the Filter plugins let through.
    extender: str | None = None

    def to_dict(self) -> dict[str, Any]:
        if self.status.is_success():
            return {"code": "Success"}
        if self.extender is not None:
            return {"code": self.status.code.label, "reasons": list(self.status.reasons)}
        return {"code": self.status.code.label, "plugin": self.status.plugin, "reasons": list(self.status.reasons)}


class PluginScores:
    """One Score plugin's weight and its raw, normalized and weighted score per node (dicts by node
    name). From the whole-list path they arrive as lists over the node names and the dicts are made
    when first read: a simulation reads none of them."""

    __slots__ = ("_lists", "_names", "_normalized", "_raw", "_weighted", "weight")

    def __init__(self, weight: int, raw: dict[str, int], normalized: dict[str, int], weighted: dict[str, int]) -> None:
        self.weight = weight
        self._raw: dict[str, int] | None = raw
        self._normalized: dict[str, int] | None = normalized
        self._weighted: dict[str, int] | None = weighted
        self._names: list[str] = []
        self._lists: tuple[list[int], list[int], list[int]] = ([], [], [])

    @classmethod
    def of_columns(
        cls, weight: int, names: list[str], raw: list[int], normalized: list[int], weighted: list[int]
    ) -> PluginScores:
        ps = cls(weight, {}, {}, {})
        ps._raw = ps._normalized = ps._weighted = None
        ps._names = names
        ps._lists = (raw, normalized, weighted)
        return ps

    def _column(self, k: int) -> dict[str, int]:
        return dict(zip(self._names, self._lists[k], strict=True))

    @property
    def raw(self) -> dict[str, int]:
        if self._raw is None:
            self._raw = self._column(0)
        return self._raw

    @property
    def normalized(self) -> dict[str, int]:
        if self._normalized is None:
            self._normalized = self._column(1)
        return self._normalized

    @property
    def weighted(self) -> dict[str, int]:
        if self._weighted is None:
            self._weighted = self._column(2)
        return self._weighted

    def to_dict(self) -> dict[str, Any]:
        return {"weight": self.weight, "raw": self.raw, "normalized": self.normalized, "weighted": self.weighted}


@dataclass
class PostFilterRecord:
    plugin: str
    status: Status
    nominated_node_name: str | None
    victims: list[str]
    victim_priorities: dict[str, int] = field(default_factory=dict)
    per_plugin: list[PluginStatus] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)
    #: PostFilter asked to clear the pod's nominatedNodeName (mode Override, no node): preemption cannot help.
    clears_nomination: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "plugin": self.plugin,
            "code": self.status.code.label,
            "reasons": list(self.status.reasons),
            "nominatedNodeName": self.nominated_node_name,
            "victims": list(self.victims),
        }


@dataclass
class Trace:
    pod: str
    profile: str
    pre_enqueue: list[PluginStatus] = field(default_factory=list)
    pre_filter: list[PluginStatus] = field(default_factory=list)
    pre_filter_node_names: list[str] | None = None
    feasible_nodes: list[str] = field(default_factory=list)
    post_filter: PostFilterRecord | None = None
    pre_score: list[PluginStatus] = field(default_factory=list)
    score: dict[str, PluginScores] = field(default_factory=dict)
    totals: dict[str, int] = field(default_factory=dict)
    max_score: int | None = None
    candidates: list[str] = field(default_factory=list)
    selected_node: str | None = None
    fit_error: str | None = None
    reserve: list[PluginStatus] = field(default_factory=list)
    permit: list[PluginStatus] = field(default_factory=list)
    pre_bind: list[PluginStatus] = field(default_factory=list)
    bind: list[PluginStatus] = field(default_factory=list)
    #: PostBind plugins that ran after Bind: ``{"plugin", "note"?, "error"?}`` (they must not write).
    post_bind: list[dict[str, Any]] = field(default_factory=list)
    #: Every extender request of the cycle, in the order made (or deliberately not made).
    extender_calls: list[ExtenderCall] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: Set when the cycle ended in an internal error (a plugin returned Error).
    error: str | None = None
    # explanation extras -------------------------------------------------------------
    gated: bool = False
    num_all_nodes: int = 0
    num_nodes_to_find: int = 0
    evaluated_order: list[str] = field(default_factory=list)
    nominated_node_tried: str | None = None
    binding: dict[str, Any] | None = None
    node_details: dict[str, dict[str, Any]] = field(default_factory=dict)
    plugin_details: dict[str, Any] = field(default_factory=dict)
    tie_break: str | None = None
    #: How the version breaks a tie among the top totals: "first" (v1.35 on: the first of its score heap,
    #: no chance involved) or "random" (up to v1.34: a random one of ``candidates``).
    tie_rule: str = "first"
    #: A tie broken at random because extenders scored: the top nodes an extender answered for.
    random_tie_nodes: list[str] = field(default_factory=list)
    #: The release whose rules the cycle followed (``Features.release``).
    k8s_version: str = K8S_VERSION
    filter_plugins: list[str] = field(default_factory=list)
    skipped_filter_plugins: list[str] = field(default_factory=list)
    #: Nodes the main Filter pass processed (feasible + rejected), by which kube-scheduler advances
    #: ``nextStartNodeIndex``; 0 when the cycle stopped before it (PreFilter, nominated node).
    processed_nodes: int = 0
    #: Exceptions plugins raised in this cycle (each became the plugin's Error status); tracebacks for --debug.
    plugin_failures: list[PluginFailure] = field(default_factory=list)
    #: A node that passed Filter after numFeasibleNodesToFind were found: evaluated, then dropped.
    dropped_feasible: str | None = None
    #: OpportunisticBatching in a simulation: the node hint offered, and what the cycle stored.
    batch: BatchRecord | None = None
    #: The pod was placed on the batch's node hint, without scoring.
    batched: bool = False
    #: ``filter``'s verdicts so far, and the Filter pass's (node names, statuses; None: Success) not made
    #: into verdicts yet: a simulation reads neither, so thousands of nodes a cycle cost it nothing.
    #: v1.36's pod-group cycle (``kschedctl.explain.podgroup``): what PlacementGenerate made of the
    #: nodes (``{"plugin", "code", "reasons", "parent", "placements"}`` per run), how each placement
    #: scored (per PlacementScore plugin, keyed by placement name), and the group's story.
    placement_generate: list[dict[str, Any]] = field(default_factory=list)
    placement_score: dict[str, PluginScores] = field(default_factory=dict)
    pod_group: dict[str, Any] | None = None
    #: Nodes the main Filter pass could visit (those PreFilter allowed); 0 when it did not run.
    searchable_nodes: int = 0
    #: What node order, chance and queue order leave open (``kschedctl.explain.order``), and the nodes
    #: that could be chosen; None when not assessed (only ``explain`` assesses it).
    order: OrderDependence | None = None
    possible_nodes: list[str] | None = None
    #: A nominated pod's node and the preemption victims still terminating there.
    nominated_wait: dict[str, Any] | None = None
    #: The PodScheduled condition the pod has although no cycle wrote it (a gated pod: the API server's).
    pod_scheduled: dict[str, str] | None = None
    _verdicts: dict[str, NodeVerdict] = field(default_factory=dict, repr=False, compare=False)
    _pending: list[tuple[list[str], list[Status | None]]] = field(default_factory=list, repr=False, compare=False)

    @property
    def filter(self) -> dict[str, NodeVerdict]:
        """Each evaluated node's Filter verdict, in the order the nodes were evaluated."""
        if self._pending:
            verdicts = self._verdicts
            for names, statuses in self._pending:
                for name, st in zip(names, statuses, strict=True):
                    verdicts[name] = NodeVerdict(name, Status() if st is None else st)
            self._pending.clear()
        return self._verdicts

    @filter.setter
    def filter(self, verdicts: dict[str, NodeVerdict]) -> None:
        self._pending.clear()
        self._verdicts = verdicts

    def filter_reasons(self) -> tuple[Counter[str], int]:
        """How many of ``filter``'s verdicts give each reason (every verdict but Success), and how many
        verdicts there are; counted from the recorded statuses without making the verdicts when each
        node was recorded once (the Filter pass's way), else from ``filter``."""
        chunks = self._pending
        evaluated = sum(len(names) for names, _ in chunks)
        if self._verdicts or len(set().union(*(names for names, _ in chunks))) != evaluated:
            verdicts = self.filter.values()
            counts = Counter(chain.from_iterable(v.status.reasons for v in verdicts if not v.status.is_success()))
            return counts, len(verdicts)
        success = Code.SUCCESS
        counts = Counter(chain.from_iterable(
            st.reasons for _, statuses in chunks for st in statuses if st is not None and st.code != success
        ))
        return counts, evaluated

    def has_filter_verdicts(self) -> bool:
        """``bool(self.filter)``, without making the verdicts."""
        return bool(self._verdicts) or any(names for names, _ in self._pending)

    def record_filter(self, names: list[str], statuses: list[Status | None]) -> None:
        """The verdicts of these nodes, in this order (None: Success), after those recorded so far."""
        if names:
            self._pending.append((names, statuses))

    @property
    def schedulable(self) -> bool:
        return self.selected_node is not None and self.error is None and self.fit_error is None

    @property
    def outcome(self) -> str:
        if self.error:
            return "error"
        if self.gated:
            return "gated"
        if self.schedulable:
            return "scheduled"
        return "unschedulable"

    def to_dict(self) -> dict[str, Any]:
        out = self._to_dict()
        if self.possible_nodes is not None:  # beside "selected", as explain assessed it
            out = _after(out, "selected", {
                "possibleNodes": list(self.possible_nodes),
                "orderDependence": self.order.to_dict() if self.order is not None else None,
            })
        if self.nominated_wait is not None:
            out = _after(out, "postFilter", {"nominatedNodeWait": dict(self.nominated_wait)})
        if self.pod_scheduled is not None:
            out = _after(out, "outcome", {"podScheduled": dict(self.pod_scheduled)})
        if self.placement_generate:  # as the v1.36 reference: only when the pod-group cycle ran them
            out["placementGenerate"] = [dict(r) for r in self.placement_generate]
        if self.placement_score:
            out["placementScore"] = {p: s.to_dict() for p, s in self.placement_score.items()}
        if self.pod_group is not None:
            out["details"]["podGroup"] = self.pod_group
        return out

    def _to_dict(self) -> dict[str, Any]:
        selected = None
        if self.candidates:
            selected = {"maxScore": self.max_score or 0, "candidates": list(self.candidates)}
        return {
            "k8sVersion": self.k8s_version,
            "pod": self.pod,
            "profile": self.profile,
            "outcome": self.outcome,
            "preEnqueue": [r.to_dict() for r in self.pre_enqueue],
            "preFilter": [r.to_dict() for r in self.pre_filter],
            "preFilterNodeNames": self.pre_filter_node_names,
            "filter": {n: v.to_dict() for n, v in self.filter.items()},
            "feasibleNodes": list(self.feasible_nodes),
            "postFilter": self.post_filter.to_dict() if self.post_filter else None,
            "preScore": [r.to_dict() for r in self.pre_score],
            "score": {p: s.to_dict() for p, s in self.score.items()},
            "totals": dict(self.totals),
            "selected": selected,
            "fitError": self.fit_error,
            "reserve": [r.to_dict() for r in self.reserve],
            "permit": [r.to_dict() for r in self.permit],
            "preBind": [r.to_dict() for r in self.pre_bind],
            "bind": [r.to_dict() for r in self.bind],
            "postBind": [dict(r) for r in self.post_bind],
            "extenders": [c.to_dict() for c in self.extender_calls],
            "notes": list(self.notes),
            "error": self.error,
            "details": {
                "numAllNodes": self.num_all_nodes,
                "numNodesToFind": self.num_nodes_to_find,
                "evaluationOrder": list(self.evaluated_order),
                "nominatedNodeTried": self.nominated_node_tried,
                "selectedNode": self.selected_node,
                "tieBreak": self.tie_break,
                "tieRule": self.tie_rule,
                "filterPlugins": list(self.filter_plugins),
                "skippedFilterPlugins": list(self.skipped_filter_plugins),
                "binding": self.binding,
                "batch": self.batch.to_dict() if self.batch else None,
                "postFilter": (
                    {
                        "perPlugin": [r.to_dict() for r in self.post_filter.per_plugin],
                        "victimPriorities": self.post_filter.victim_priorities,
                        **self.post_filter.details,
                    }
                    if self.post_filter
                    else None
                ),
                "nodes": self.node_details,
                "plugins": self.plugin_details,
                "pluginExceptions": [
                    {"plugin": f.plugin, "extensionPoint": f.extension_point, "node": f.node, "exception": f.exception}
                    for f in self.plugin_failures
                ],
            },
        }


def _after(d: dict[str, Any], key: str, extra: dict[str, Any]) -> dict[str, Any]:
    """``d`` with ``extra``'s keys right after ``key`` (JSON keeps the order: related keys side by side)."""
    out: dict[str, Any] = {}
    for k, v in d.items():
        out[k] = v
        if k == key:
            out.update(extra)
    return out
