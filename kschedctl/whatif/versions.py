"""The same pods under two Kubernetes versions: ``kschedctl diff-versions``.

A comparison of two versions is a ``whatif.diff`` comparison whose sides carry different
``Features``; this module adds what such a comparison owes the reader on top of the decision,
Filter and score tables of ``diff-profiles``, keeping apart the kinds of difference
(``config.changes.KINDS``), because they matter very differently:

* another outcome: the decision (node, schedulable or not, preemption nomination and victims),
  a node feasible on one side only, the choice among tied nodes;
* another status code for the same verdict: a node rejected as Unschedulable on one side and
  UnschedulableAndUnresolvable on the other is one that preemption tries on one side only;
* other scores for the same decision: the totals on the nodes either side selects;
* other words only: a Filter reason, the PodScheduled message (the FitError).

Each difference is put in words under its kind. The parts of the two traces that differ are
found as (plugin, extension point, kind) triples: PreEnqueue and PreFilter results, the Filter
status of each node, the per-plugin scores on the nodes both sides scored, the PostFilter outcome
(and, where no node was nominated, the PostFilter answers that make up the PodScheduled message),
and the selection among tied nodes. The rule changes between the versions (``config.changes``)
that can make that kind of difference in that part, and whose trigger is present in the pod, the
cluster or the traces, are the attribution; a differing part no change explains is listed as
unexplained rather than guessed.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from kschedctl.config import changes
from kschedctl.explain.trace import Trace
from kschedctl.kube.features import Features
from kschedctl.snapshot.cluster import Cluster
from kschedctl.snapshot.model import Pod
from kschedctl.whatif.diff import FeasibilityChange, PodDiff, verdict_kind

#: A part of two traces that differs: (plugin, extension point, kind of difference).
Part = tuple[str, str, str]

#: A plugin that ran on one side only and let the pod through changed nothing there.
_HARMLESS = (("Success", ()), ("Skip", ()))
_REJECTING = ("Unschedulable", "UnschedulableAndUnresolvable", "Pending", "Error")


def _records(records: list[Any]) -> dict[str, tuple[str, tuple[str, ...]]]:
    return {r.plugin: (r.status.code.label, tuple(r.status.reasons)) for r in records}


def record_kind(a: tuple[str, tuple[str, ...]] | None, b: tuple[str, tuple[str, ...]] | None) -> str:
    """The kind of difference between two statuses of one plugin at PreEnqueue or PreFilter (None: it did
    not run): the pod let through on one side only is another outcome."""
    ca, cb = (a or ("Success", ()))[0], (b or ("Success", ()))[0]
    if (ca in _REJECTING) != (cb in _REJECTING):
        return changes.OUTCOME
    return changes.CODE if ca != cb else changes.MESSAGE


def _record_parts(ra: list[Any], rb: list[Any], point: str) -> set[Part]:
    a, b = _records(ra), _records(rb)
    out = set()
    for p in set(a) | set(b):
        va, vb = a.get(p), b.get(p)
        if va != vb and not (None in (va, vb) and (va or vb) in _HARMLESS):
            out.add((p, point, record_kind(va, vb)))
    return out


def _filter_parts(ta: Trace, tb: Trace) -> set[Part]:
    """Filter plugins whose verdict on some node differs, with the kind of that difference."""
    out: set[Part] = set()
    for node in set(ta.filter) & set(tb.filter):
        sa, sb = ta.filter[node].status, tb.filter[node].status
        if (sa.code, tuple(sa.reasons), sa.plugin) == (sb.code, tuple(sb.reasons), sb.plugin):
            continue
        fa, fb = sa.is_success(), sb.is_success()
        kind = verdict_kind(fa, fb, None if fa else sa.code.label, None if fb else sb.code.label)
        out.update((s.plugin, changes.FILTER, kind) for s in (sa, sb) if s.plugin)
    return out


def _code_plugins(ta: Trace, tb: Trace) -> set[str]:
    """Filter plugins whose status code (or whose rejecting plugin) on some node differs."""
    out: set[str] = set()
    for node in set(ta.filter) & set(tb.filter):
        sa, sb = ta.filter[node].status, tb.filter[node].status
        if (sa.code, sa.plugin) != (sb.code, sb.plugin):
            out.update(s.plugin for s in (sa, sb) if s.plugin)
    return out


def _score_parts(ta: Trace, tb: Trace) -> set[Part]:
    """Score plugins whose raw or weighted score differs on a node both sides scored, or that only one side ran."""
    out: set[Part] = set()
    for plugin in set(ta.score) | set(tb.score):
        sa, sb = ta.score.get(plugin), tb.score.get(plugin)
        if sa is None or sb is None:
            if any((sa or sb).weighted.values()):  # type: ignore[union-attr]
                out.add((plugin, changes.SCORE, changes.SCORE_KIND))
            continue
        common = set(sa.raw) & set(sb.raw)
        if any(sa.raw[n] != sb.raw[n] or sa.weighted.get(n) != sb.weighted.get(n) for n in common):
            out.add((plugin, changes.SCORE, changes.SCORE_KIND))
    return out


def _nomination(t: Trace) -> tuple[str | None, list[str]] | None:
    pf = t.post_filter
    return (pf.nominated_node_name, pf.victims) if pf else None


def _post_filter_parts(ta: Trace, tb: Trace) -> set[Part]:
    """PostFilter plugins whose result differs. A preemption outcome that differs is another outcome;
    where both sides nominate alike, the plugins' answers are not seen, and where neither nominates they
    are words of the PodScheduled message. Preemption tries the nodes Filter rejected as resolvable, so
    where Filter codes differ, a preemption result that differs is those Filter plugins' doing."""
    pa, pb = ta.post_filter, tb.post_filter
    outcome = _nomination(ta) != _nomination(tb)
    nominated = any(pf is not None and pf.nominated_node_name for pf in (pa, pb))
    out: set[Part] = set()
    if outcome or not nominated:
        kind = changes.OUTCOME if outcome else changes.MESSAGE
        records = _record_parts(pa.per_plugin if pa else [], pb.per_plugin if pb else [], changes.POST_FILTER)
        out = {(p, point, kind) for p, point, _ in records}
    if outcome:
        out.add(((pa or pb).plugin, changes.POST_FILTER, changes.OUTCOME))  # type: ignore[union-attr]
    preemption = {p for p, _, _ in out} - {"DynamicResources"}
    codes = _code_plugins(ta, tb)
    if preemption and codes:
        out = {part for part in out if part[0] not in preemption}
        out |= {(p, changes.POST_FILTER, changes.OUTCOME if outcome else changes.CODE) for p in codes}
    return out


def _selection_parts(ta: Trace, tb: Trace) -> set[Part]:
    """The selection among the top totals, when the two versions break a tie differently."""
    if ta.tie_rule != tb.tie_rule and (len(ta.candidates) > 1 or len(tb.candidates) > 1):
        return {("", changes.SELECTION, changes.OUTCOME)}
    return set()


def differing_parts(ta: Trace, tb: Trace) -> list[Part]:
    """Every (plugin, extension point, kind) whose result differs between the two traces, sorted."""
    parts = (
        _record_parts(ta.pre_enqueue, tb.pre_enqueue, changes.PRE_ENQUEUE)
        | _record_parts(ta.pre_filter, tb.pre_filter, changes.PRE_FILTER)
        | _filter_parts(ta, tb)
        | _score_parts(ta, tb)
        | _post_filter_parts(ta, tb)
        | _selection_parts(ta, tb)
    )
    return sorted(parts, key=lambda p: (p[1], p[0], changes.KINDS.index(p[2])))


def evidence(pod: Pod, cluster: Cluster, ta: Trace, tb: Trace) -> changes.Evidence:
    """What the triggers of ``config.changes`` look at, from the pod, the cluster and both traces."""
    rejections: set[tuple[str, str]] = set()
    prefiltered: set[str] = set()
    scored: set[str] = set()
    words: set[str] = set()
    for t in (ta, tb):
        rejections.update((v.status.plugin, v.status.code.label) for v in t.filter.values()
                          if v.status.plugin and not v.status.is_success())
        for r in (*t.pre_enqueue, *t.pre_filter):
            if r.status.is_rejected():
                rejections.add((r.plugin, r.status.code.label))
        prefiltered.update(r.plugin for r in t.pre_filter if not r.status.is_skip())
        scored.update(p for p, s in t.score.items() if any(s.weighted.values()))
        if t.post_filter is not None and not t.post_filter.nominated_node_name:
            words.update(r.plugin for r in t.post_filter.per_plugin if r.status.reasons)
    tie = len(ta.candidates) > 1 or len(tb.candidates) > 1
    return changes.Evidence(pod, cluster, frozenset(rejections), frozenset(prefiltered), frozenset(scored),
                      frozenset(words), tie)


# --------------------------------------------------------------------------- in words


def _nodes(names: list[str], most: int = 3) -> str:
    names = sorted(names)
    shown = ", ".join(names[:most])
    return f"{len(names)} node(s) ({shown}{', …' if len(names) > most else ''})"


#: What a change of status code (A's, B's) does to preemption.
_PREEMPTION_EFFECT = {("Unschedulable", "UnschedulableAndUnresolvable"): ": preemption no longer tries them",
                      ("UnschedulableAndUnresolvable", "Unschedulable"): ": preemption now tries them"}


def _code_words(group: list[FeasibilityChange]) -> str:
    f = group[0]
    plugin = f.b.split(":", 1)[0]
    effect = _PREEMPTION_EFFECT.get((f.code_a or "", f.code_b or ""), "")
    return f"{plugin} rejects {_nodes([g.node for g in group])} as {f.code_b}, not {f.code_a}{effect}"


def _verdict_words(d: PodDiff) -> dict[str, list[str]]:
    """The Filter verdicts that differ, in words by kind: flips, codes (grouped by plugin and codes), words."""
    out: dict[str, list[str]] = defaultdict(list)
    flips = [f for f in d.feasibility if f.kind == changes.OUTCOME]
    if flips:
        out[changes.OUTCOME].append(f"Filter verdict flips on {_nodes([f.node for f in flips])}")
    codes: dict[tuple[str, str | None, str | None], list[FeasibilityChange]] = defaultdict(list)
    for f in d.feasibility:
        if f.kind == changes.CODE:
            codes[(f.b.split(":", 1)[0], f.code_a, f.code_b)].append(f)
    out[changes.CODE] += [_code_words(group) for group in codes.values()]
    reasons: dict[str, list[str]] = defaultdict(list)
    for f in d.feasibility:
        if f.kind == changes.MESSAGE:
            reasons[f.b.split(":", 1)[0]].append(f.node)
    out[changes.MESSAGE] += [f"{plugin}'s reason on {_nodes(nodes)}" for plugin, nodes in reasons.items()]
    return out


def differences(d: PodDiff, ta: Trace, tb: Trace) -> dict[str, list[str]]:
    """What changes for the pod, in words, by kind: the decision, preemption and Filter verdicts (outcome),
    status codes, totals (score), Filter reasons and the PodScheduled message (message). Kinds without a
    difference are left out."""
    out: dict[str, list[str]] = defaultdict(list)
    a, b = d.a, d.b
    if a.summary() != b.summary():
        out[changes.OUTCOME].append(f"decision: {a.summary()} → {b.summary()}")
    if (a.nominated_node, a.victims) != (b.nominated_node, b.victims):
        out[changes.OUTCOME].append(f"preemption: {_preemption(a.nominated_node, a.victims)} → "
                              f"{_preemption(b.nominated_node, b.victims)}")
    if _selection_parts(ta, tb):
        out[changes.OUTCOME].append(f"the choice among tied nodes: {_ties(a.candidates, ta.tie_rule)} → "
                              f"{_ties(b.candidates, tb.tie_rule)}")
    for kind, words in _verdict_words(d).items():
        out[kind] += words
    for ns in d.scores:
        if ns.delta:
            out[changes.SCORE_KIND].append(f"total on {ns.node}: {ns.total_a} → {ns.total_b} ({ns.delta:+d})")
    if a.fit_error != b.fit_error:
        counted = out.get(changes.CODE) and not (a.nominated_node or b.nominated_node)
        follows = " (its preemption counts follow the status codes)" if counted else ""
        out[changes.MESSAGE].append(f"PodScheduled message (FitError) differs{follows}")
    return {k: out[k] for k in changes.KINDS if out.get(k)}


def _ties(candidates: list[str], rule: str) -> str:
    if len(candidates) < 2:
        return candidates[0] if candidates else "none"
    return f"{'one at random' if rule == 'random' else 'the first'} of {', '.join(candidates)}"


def _preemption(node: str | None, victims: list[str]) -> str:
    return f"{len(victims)} victim(s) on {node}" if node else "none"


def same_rules(a: Features, b: Features) -> str | None:
    """The sentence saying that both sides run one version with the same gates, so that nothing can differ;
    None when their rules differ."""
    if (a.minor, dict(a.gates)) != (b.minor, dict(b.gates)):
        return None
    return (f"--from and --to are both kube-scheduler {a.release} with the same feature gates: nothing can "
            "differ (give another --to)")


class VersionAttribution:
    """Fills a version comparison's ``PodDiff``: its differences by kind and the rule changes behind them,
    each cited only where its trigger is present for the pod (``config.changes``)."""

    def __init__(self, a: Features, b: Features, cluster: Cluster) -> None:
        self.changes = changes.changes_between(a, b)
        self.cluster = cluster

    def __call__(self, d: PodDiff, pod: Pod, ta: Trace, tb: Trace) -> None:
        parts = differing_parts(ta, tb)
        d.by_kind = differences(d, ta, tb)
        found = changes.attribute(self.changes, parts, evidence(pod, self.cluster, ta, tb))
        explained = [p for p in parts if any(ch.explains(*p) for ch in found)]
        d.attribution = {
            "changes": [{**ch.to_dict(), "line": ch.line(), "explains": _explains(ch, parts)} for ch in found],
            "parts": _part_words(parts),
            "unexplained": _part_words([p for p in parts if p not in explained], kinds=True),
        }


def _explains(change: changes.RuleChange, parts: list[Part]) -> list[str]:
    """The kinds of difference ``change`` explains among ``parts``, most telling first."""
    kinds = {kind for p, point, kind in parts if change.explains(p, point, kind)}
    return [k for k in changes.KINDS if k in kinds]


def _part_words(parts: list[Part], kinds: bool = False) -> list[str]:
    """Each (plugin, point) once, in words: "filter TaintToleration" (with ``kinds``: "filter TaintToleration
    (message)", each kind apart)."""
    out: list[str] = []
    for plugin, point, kind in parts:
        words = f"{point} {plugin}".strip() if plugin else point
        words += f" ({kind})" if kinds else ""
        if words not in out:
            out.append(words)
    return out
