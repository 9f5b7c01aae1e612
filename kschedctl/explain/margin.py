"""Why this node: the margin between the selected node and the runner-up (or a node the user names).

kube-scheduler picks the node with the highest total of weighted plugin scores. The question
after "where" is "why there and not on that other node": per Score plugin, the weighted score
on each of the two nodes and the difference; which plugins decided it (the fewest plugins, the
largest advantage first, whose advantage alone covers the margin: without them the other node
would have tied or won); and, when the two totals are equal, that the node lost on a tie and how
v1.35 breaks ties (a heap pop over the feasible list, not a random pick, unless extenders
scored). A node that Filter rejected has no score: its rejecting plugin and reasons are given
instead. Everything is read from the Trace; nothing is run again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kschedctl.errors import UsageError
from kschedctl.explain.trace import Trace
from kschedctl.snapshot.cluster import Cluster

EXTENDERS = "extenders"


@dataclass
class PluginMargin:
    plugin: str
    weight: int | None
    selected: int
    other: int

    @property
    def diff(self) -> int:
        return self.selected - self.other

    def to_dict(self) -> dict[str, Any]:
        return {"plugin": self.plugin, "weight": self.weight, "selected": self.selected, "other": self.other,
                "difference": self.diff}


@dataclass
class Margin:
    """The selected node against one other node."""

    selected: str | None
    other: str | None
    #: True when the other node was named by the user (``--compare``), False for the runner-up.
    compared: bool = False
    selected_total: int | None = None
    other_total: int | None = None
    rows: list[PluginMargin] = field(default_factory=list)
    deciding: list[str] = field(default_factory=list)
    tie: bool = False
    tie_note: str | None = None
    #: For another node that Filter rejected: the rejecting plugin, its status code and reasons.
    rejected: dict[str, Any] | None = None
    note: str | None = None

    @property
    def difference(self) -> int | None:
        if self.selected_total is None or self.other_total is None:
            return None
        return self.selected_total - self.other_total

    def to_dict(self) -> dict[str, Any]:
        return {
            "selected": self.selected,
            "other": self.other,
            "compared": self.compared,
            "selectedTotal": self.selected_total,
            "otherTotal": self.other_total,
            "difference": self.difference,
            "plugins": [r.to_dict() for r in self.rows],
            "decidedBy": list(self.deciding),
            "tie": self.tie,
            "tieNote": self.tie_note,
            "rejected": self.rejected,
            "note": self.note,
        }


def runner_up(trace: Trace) -> str | None:
    """The best scored node other than the selected one (equal totals: by name). In a pod-group cycle only the
    nodes of the pod's run in the placement kept compete (the trace holds the totals of every placement tried)."""
    scored = trace.totals if trace.pod_group is None else [n for n in trace.totals if n in trace.feasible_nodes]
    ranked = sorted((n for n in scored if n != trace.selected_node), key=lambda n: (-trace.totals[n], n))
    return ranked[0] if ranked else None


def annotate_margin(data: dict[str, Any], trace: Trace, cluster: Cluster, compare: str | None = None) -> None:
    """Add "why this node" (``details.margin``) to a trace's dictionary (``compare``: a node of ``cluster``)."""
    if compare is not None and cluster.node(compare) is None:
        raise UsageError(f'--compare: node "{compare}" is not in the snapshot')
    m = margin(trace, compare)
    data["details"]["margin"] = m.to_dict() if m is not None else None


def margin(trace: Trace, compare: str | None = None) -> Margin | None:
    """The margin of the selected node over ``compare`` (default: the runner-up); None if nothing to say."""
    sel = trace.selected_node if trace.schedulable else None
    # unscored: the only feasible node (in a pod-group cycle, of the pod's run in the placement kept)
    unscored = sel is not None and sel not in trace.totals
    other = compare or (None if unscored else runner_up(trace))
    m = Margin(sel, other, compared=compare is not None)
    if compare is not None and compare == sel:
        m.note = f"{compare} is the selected node"
        return m
    if other is None:
        if sel is None:
            return None
        m.note = ("it was the only feasible node: kube-scheduler did not score, there is no runner-up"
                  if len(trace.feasible_nodes) == 1 else "no other node was scored")
        return m
    if other not in trace.totals:
        _not_scored(trace, m, other)
        return m
    if sel is None:
        m.note = f"the pod was not scheduled: {other} has total {trace.totals[other]}"
        return m
    if unscored:
        m.note = f"{sel} was the only feasible node: kube-scheduler did not score it"
        return m
    _compare_scores(trace, m, sel, other)
    return m


def _not_scored(trace: Trace, m: Margin, other: str) -> None:
    verdict = trace.filter.get(other)
    if verdict is not None and not verdict.status.is_success():
        st = verdict.status
        by = f"extender {verdict.extender}" if verdict.extender else st.plugin
        m.rejected = {"plugin": by, "code": st.code.label, "reasons": list(st.reasons) or [st.message()]}
    elif trace.pre_filter_node_names is not None and other not in trace.pre_filter_node_names:
        m.rejected = {"plugin": "PreFilter", "code": "UnschedulableAndUnresolvable",
                      "reasons": ["not among the nodes PreFilter narrowed the search to"]}
    elif other in trace.feasible_nodes:
        m.note = f"{other} was feasible but not scored (exactly one node was feasible)"
    else:
        m.note = (f"{other} was not evaluated: the Filter pass stopped after finding "
                  f"{trace.num_nodes_to_find} feasible nodes (percentageOfNodesToScore)")


def _compare_scores(trace: Trace, m: Margin, sel: str, other: str) -> None:
    m.selected_total, m.other_total = trace.totals[sel], trace.totals[other]
    for name, s in trace.score.items():
        m.rows.append(PluginMargin(name, s.weight, s.weighted.get(sel, 0), s.weighted.get(other, 0)))
    ext_sel = m.selected_total - sum(r.selected for r in m.rows)
    ext_other = m.other_total - sum(r.other for r in m.rows)
    if ext_sel or ext_other:
        m.rows.append(PluginMargin(EXTENDERS, None, ext_sel, ext_other))
    diff = m.selected_total - m.other_total
    if diff > 0:
        covered = 0
        for r in sorted((r for r in m.rows if r.diff > 0), key=lambda r: (-r.diff, r.plugin)):
            m.deciding.append(r.plugin)
            covered += r.diff
            if covered >= diff:
                break
        return
    m.tie = True
    if trace.order is not None and trace.order.tie:  # explain's order line says how, once
        m.tie_note = f"{other} lost on a tie with {sel} (both total {m.selected_total}); which of them wins cannot be known from outside, as said above."
        return
    how = trace.tie_break or (
        "kube-scheduler v1.35 does not pick among equal totals at random (only extender scores add a random "
        "tie-breaker): it pops a heap built from the feasible list, whose order depends on which parallel Filter "
        f"goroutine finished first; this dry run's order yields {sel}."
    )
    m.tie_note = f"{other} lost on a tie with {sel} (both total {m.selected_total}). {how}"
