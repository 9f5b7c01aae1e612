"""How a scheduling cycle folds extender answers in, as kube-scheduler v1.35's ``schedule_one.go`` does.

``kschedctl.framework.extender`` talks to one extender; this module applies the
scheduler's rules around those calls:

* order (``buildExtenders``): non-ignorable extenders first, then the ignorable ones,
  each group in configuration order (``build_extenders``);
* filter (``findNodesThatPassExtenders``): after the Filter plugins, extenders in
  that order, each given the nodes the previous one let through; an
  extender not interested in the pod (``managedResources``) is passed over; a
  failing ignorable extender is skipped, any other failure ends the cycle with
  that error (kube-scheduler writes its text into the PodScheduled condition);
  failed nodes get an Unschedulable (or UnschedulableAndUnresolvable) status
  carrying the extender's message and no plugin, which the FitError histogram
  counts;
* prioritize (``prioritizeNodes``): every interested extender's score is scaled
  ``score × weight × (100 / 10)`` and added to the plugins' total; a failing
  extender gives no score (always ignored); every node an extender answered for
  gets a random tie-breaker, so equal totals are then settled at random;
* bind (``extendersBinding``): the first interested extender with a bind verb
  would bind instead of the Bind plugins; a dry run never calls it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kschedctl.framework.extender import (
    EXTENDER_SCORE_SCALE,
    ExtenderCall,
    ExtenderError,
    HTTPExtender,
    extender_url,
)
from kschedctl.framework.interfaces import NodeToStatus
from kschedctl.framework.status import Code, Status
from kschedctl.framework.types import NodeInfo
from kschedctl.snapshot.model import Pod


def _skip_record(ext: HTTPExtender, verb_kind: str, verb: str, outcome: str) -> None:
    ext.log.append(ExtenderCall(ext.name, verb_kind, extender_url(ext.url_prefix, verb), outcome=outcome))


def find_nodes_that_pass_extenders(
    extenders: list[HTTPExtender],
    pod: Pod,
    feasible: list[NodeInfo],
    statuses: NodeToStatus,
    notes: list[str],
    verdicts: dict[str, tuple[str, Status]] | None = None,
) -> list[NodeInfo]:
    """The nodes left after every filtering extender; raises ExtenderError for a non-ignorable failure.

    Every status an extender sets (in ``statuses``, which the FitError counts) is also put in
    ``verdicts`` when given, with the extender's name: the trace's Filter verdict of that node."""
    for ext in extenders:
        if not feasible:
            break
        if not ext.is_interested(pod):
            if ext.is_filter():
                _skip_record(ext, "filter", ext.filter_verb, "not interested")
            continue
        try:
            res = ext.filter(pod, feasible)
        except ExtenderError as e:
            if ext.is_ignorable():
                if e.call is not None:
                    e.call.outcome = "ignored"
                notes.append(f"extender {ext.name} failed its filter call and is ignorable, so it was skipped: {e}")
                continue
            raise
        rejected = {node: Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, msg) for node, msg in res.failed_and_unresolvable.items()}
        for node, msg in res.failed.items():
            if node not in rejected:  # the unresolvable verdict wins when an extender names a node in both maps
                rejected[node] = Status(Code.UNSCHEDULABLE, msg)
        for node, st in rejected.items():
            statuses.set(node, st)
            if verdicts is not None:
                verdicts[node] = (ext.name, st)
        if res.rebuilt:
            notes.append(
                f"extender {ext.name} returned full Node objects: as in v1.35, the nodes it let through go on as "
                "new NodeInfos built from those objects, without their pods (Score plugins see them empty)"
            )
        feasible = res.nodes
    return feasible


@dataclass
class ExtenderScores:
    """What the prioritizing extenders added: per-node totals, and the nodes given a random tie-breaker."""

    added: dict[str, int] = field(default_factory=dict)
    randomized: set[str] = field(default_factory=set)


def prioritize_with_extenders(
    extenders: list[HTTPExtender], pod: Pod, nodes: list[NodeInfo], notes: list[str]
) -> ExtenderScores:
    """``score × weight × 10`` from every interested extender, summed per node; failures give no score."""
    out = ExtenderScores()
    if not extenders or not nodes:
        return out
    by_host: dict[str, int] = {}
    answered: set[str] = set()
    for ext in extenders:
        if not ext.is_interested(pod):
            if ext.is_prioritizer():
                _skip_record(ext, "prioritize", ext.prioritize_verb, "not interested")
            continue
        try:
            scores, weight = ext.prioritize(pod, nodes)
        except ExtenderError as e:
            if e.call is not None:
                e.call.outcome = "ignored"
            notes.append(f"extender {ext.name} failed its prioritize call: it gives no score (always ignored): {e}")
            continue
        weighted: dict[str, int] = {}
        for host, score in scores:
            final = score * weight * EXTENDER_SCORE_SCALE
            by_host[host] = by_host.get(host, 0) + final
            weighted[host] = weighted.get(host, 0) + final
            answered.add(host)
        if ext.last_call is not None and ext.last_call.verb == "prioritize":
            ext.last_call.result["weighted"] = weighted
    for ni in nodes:
        if ni.name in answered:
            out.added[ni.name] = by_host[ni.name]
            out.randomized.add(ni.name)
    return out


def bind_extender(extenders: list[HTTPExtender], pod: Pod) -> HTTPExtender | None:
    """The extender that would bind this pod instead of the Bind plugins, if any."""
    for ext in extenders:
        if ext.is_binder() and ext.is_interested(pod):
            return ext
    return None
