"""The same pods under two Kubernetes versions: ``kschedctl diff-versions``.

A comparison of two versions is a ``whatif.diff`` comparison whose sides carry different
``Features``; this module adds what such a comparison owes the reader on top of the decision,
Filter and score tables of ``diff-profiles``:

* every difference, in words: the node, the totals on the nodes either side selects, the
  PodScheduled message (the FitError), the preemption victims;
* the parts of the two traces that differ, as (plugin, extension point) pairs: PreEnqueue and
  PreFilter results, the Filter status of each node (code and reasons), the per-plugin scores
  on the nodes both sides scored, the PostFilter outcome, and the selection among tied nodes;
* the rule changes between the versions (``config.changes``) that touch those parts: the
  attribution. A differing part no change touches is listed as unexplained rather than guessed.
"""

from __future__ import annotations

from typing import Any

from kschedctl.config import changes as c
from kschedctl.explain.trace import Trace
from kschedctl.kube.features import Features
from kschedctl.snapshot.cluster import Cluster
from kschedctl.whatif.diff import PodDiff


def _records(records: list[Any]) -> dict[str, tuple[str, tuple[str, ...]]]:
    return {r.plugin: (r.status.code.label, tuple(r.status.reasons)) for r in records}


#: A plugin that ran on one side only and let the pod through changed nothing there.
_HARMLESS = (("Success", ()), ("Skip", ()))


def _record_parts(ra: list[Any], rb: list[Any], point: str) -> set[tuple[str, str]]:
    a, b = _records(ra), _records(rb)
    out = set()
    for p in set(a) | set(b):
        va, vb = a.get(p), b.get(p)
        if va != vb and not (None in (va, vb) and (va or vb) in _HARMLESS):
            out.add((p, point))
    return out


def _filter_parts(ta: Trace, tb: Trace, *, codes_only: bool = False) -> set[tuple[str, str]]:
    """Filter plugins whose verdict (code or reasons; with ``codes_only`` the code) on some node differs."""
    out: set[tuple[str, str]] = set()
    for node in set(ta.filter) & set(tb.filter):
        sa, sb = ta.filter[node].status, tb.filter[node].status
        key = (lambda s: (s.code, s.plugin)) if codes_only else (lambda s: (s.code, tuple(s.reasons), s.plugin))
        if key(sa) != key(sb):
            out.update((s.plugin, c.FILTER) for s in (sa, sb) if s.plugin)
    return out


def _score_parts(ta: Trace, tb: Trace) -> set[tuple[str, str]]:
    """Score plugins whose raw or weighted score differs on a node both sides scored, or that only one side ran."""
    out: set[tuple[str, str]] = set()
    for plugin in set(ta.score) | set(tb.score):
        sa, sb = ta.score.get(plugin), tb.score.get(plugin)
        if sa is None or sb is None:
            if any((sa or sb).weighted.values()):  # type: ignore[union-attr]
                out.add((plugin, c.SCORE))
            continue
        common = set(sa.raw) & set(sb.raw)
        if any(sa.raw[n] != sb.raw[n] or sa.weighted.get(n) != sb.weighted.get(n) for n in common):
            out.add((plugin, c.SCORE))
    return out


def _post_filter_parts(ta: Trace, tb: Trace) -> set[tuple[str, str]]:
    """PostFilter plugins whose status differs. Preemption tries the nodes Filter rejected as resolvable,
    so where Filter codes differ, a preemption result that differs is those Filter plugins' doing."""
    pa, pb = ta.post_filter, tb.post_filter
    out = _record_parts(pa.per_plugin if pa else [], pb.per_plugin if pb else [], c.POST_FILTER)
    if (pa and (pa.nominated_node_name, pa.victims)) != (pb and (pb.nominated_node_name, pb.victims)):
        out.add(((pa or pb).plugin, c.POST_FILTER))  # type: ignore[union-attr]
    preemption = {p for p, _ in out} - {"DynamicResources"}
    codes = _filter_parts(ta, tb, codes_only=True)
    if preemption and codes:
        out = {part for part in out if part[0] not in preemption} | {(p, c.POST_FILTER) for p, _ in codes}
    return out


def _selection_parts(ta: Trace, tb: Trace) -> set[tuple[str, str]]:
    """The selection among the top totals, when the two versions break a tie differently."""
    if ta.tie_rule != tb.tie_rule and (len(ta.candidates) > 1 or len(tb.candidates) > 1):
        return {("", c.SELECTION)}
    return set()


def differing_parts(ta: Trace, tb: Trace) -> list[tuple[str, str]]:
    """Every (plugin, extension point) whose result differs between the two traces, sorted."""
    parts = (
        _record_parts(ta.pre_enqueue, tb.pre_enqueue, c.PRE_ENQUEUE)
        | _record_parts(ta.pre_filter, tb.pre_filter, c.PRE_FILTER)
        | _filter_parts(ta, tb)
        | _score_parts(ta, tb)
        | _post_filter_parts(ta, tb)
        | _selection_parts(ta, tb)
    )
    return sorted(parts, key=lambda p: (p[1], p[0]))


def differences(d: PodDiff) -> list[str]:
    """What changes for the pod, in words: node, totals, PodScheduled message, preemption victims."""
    out: list[str] = []
    a, b = d.a, d.b
    if a.summary() != b.summary():
        out.append(f"decision: {a.summary()} → {b.summary()}")
    for ns in d.scores:
        if ns.delta:
            out.append(f"total on {ns.node}: {ns.total_a} → {ns.total_b} ({ns.delta:+d})")
    if a.fit_error != b.fit_error:
        out.append("PodScheduled message (FitError) differs")
    if (a.nominated_node, a.victims) != (b.nominated_node, b.victims):
        out.append(f"preemption: {_preemption(a.nominated_node, a.victims)} → {_preemption(b.nominated_node, b.victims)}")
    if d.feasibility:
        out.append(f"Filter verdict differs on {len(d.feasibility)} node(s)")
    return out


def _preemption(node: str | None, victims: list[str]) -> str:
    return f"{len(victims)} victim(s) on {node}" if node else "none"


class VersionAttribution:
    """Fills a version comparison's ``PodDiff``: its differences and the rule changes behind them.

    A gate change that cannot matter for the cluster is left out: PodLevelResources when no pod
    has pod-level resources (``spec.resources``)."""

    def __init__(self, a: Features, b: Features, cluster: Cluster) -> None:
        used = {"PodLevelResources": any((p.raw.get("spec") or {}).get("resources") for p in cluster.pods)}
        self.changes = [ch for ch in c.changes_between(a, b) if used.get(ch.name, True)]

    def __call__(self, d: PodDiff, ta: Trace, tb: Trace) -> None:
        d.differences = differences(d)
        parts = differing_parts(ta, tb)
        found = c.attribute(self.changes, parts)
        explained = [p for p in parts if any(ch.touches(*p) for ch in found)]
        d.attribution = {
            "changes": [{**ch.to_dict(), "line": ch.line()} for ch in found],
            "parts": [_part_words(p) for p in parts],
            "unexplained": [_part_words(p) for p in parts if p not in explained],
        }


def _part_words(part: tuple[str, str]) -> str:
    plugin, point = part
    return f"{point} {plugin}".strip() if plugin else point
