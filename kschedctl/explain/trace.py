"""The result object of a dry run: every renderer and the JSON/YAML output read it.

``Trace.to_dict()`` carries every key of the conformance schema
(shared/conformance/README.md) with the same meaning, plus extra keys that explain
*why* (per-node detail, the node order, the tie-break, the would-be Binding).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kschedctl import K8S_VERSION
from kschedctl.framework.batch import BatchRecord
from kschedctl.framework.extender import ExtenderCall
from kschedctl.framework.failures import PluginFailure
from kschedctl.framework.runtime import PluginStatus
from kschedctl.framework.status import Status


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


@dataclass
class PluginScores:
    weight: int
    raw: dict[str, int]
    normalized: dict[str, int]
    weighted: dict[str, int]

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
    filter: dict[str, NodeVerdict] = field(default_factory=dict)
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
        selected = None
        if self.candidates:
            selected = {"maxScore": self.max_score or 0, "candidates": list(self.candidates)}
        return {
            "k8sVersion": K8S_VERSION,
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
