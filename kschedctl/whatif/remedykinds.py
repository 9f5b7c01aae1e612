"""The candidate changes of a remedy search, kind by kind, each verified as it is made.

A kind of change is tried only where the per-node statuses point to it (``Rejections``: which
Filter plugin rejects the pod on which node, from ``explain.nearest.analyse_filters``).
``PodChanges`` changes the pod (a toleration, a lower request, a relaxed node affinity or spread
constraint, a dropped pod (anti-)affinity term, a higher PriorityClass); ``ClusterChanges``
changes a node or adds one (uncordon, remove a taint, label, add a node like an existing group).
Every candidate goes to ``CycleProof.verify`` and lands in the report with its verdict; numbers
(the largest request that fits, the smallest maxSkew that fits, the copies a new node takes) are
searched with ``FilterProbes``, each probe the real PreFilter + Filter.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from fractions import Fraction

from kschedctl.explain.nearest import FilterAnalysis, Rejection
from kschedctl.explain.trace import Trace
from kschedctl.framework.resources import Resource
from kschedctl.kube.selectors import parse_node_selector_term
from kschedctl.plugins.defaultpreemption.plugin import NO_VICTIMS_MSG
from kschedctl.plugins.interpodaffinity.filtering import (
    ERR_REASON_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH,
)
from kschedctl.snapshot.cluster import Cluster
from kschedctl.snapshot.model import Node, Pod, Taint, tolerations_tolerate
from kschedctl.whatif import changes as ch
from kschedctl.whatif.changes import Change
from kschedctl.whatif.remedyproof import CycleProof, FilterProbes
from kschedctl.whatif.remedyreport import Remedy, RemedyReport

#: Nodes tried per node-side kind (the nearest first).
NODES_PER_KIND = 3
#: Node groups tried for "add a node".
GROUPS_TRIED = 4
_FILTER_EFFECTS = ("NoSchedule", "NoExecute")


class Rejections:
    """Who rejects the pod where: every Filter plugin asked about every node (a ``FilterAnalysis``)."""

    def __init__(self, analysis: FilterAnalysis, cluster: Cluster) -> None:
        self.analysis = analysis
        self.cluster = cluster

    def plugins(self) -> set[str]:
        """The plugins that reject the pod on some node (or at PreFilter)."""
        out = {r.plugin for n in self.analysis.nodes for r in n.rejections}
        pre = self.analysis.pre_filter_rejection
        if pre is not None and pre.plugin:
            out.add(pre.plugin)
        return out

    def nodes(self, plugin: str) -> Iterator[tuple[Node, list[Rejection]]]:
        """Nodes some rejection of ``plugin`` blocks, fewest other rejections first."""
        nodes = [n for n in self.analysis.nodes if any(r.plugin == plugin for r in n.rejections)]
        nodes.sort(key=lambda n: len(n.rejections))
        for n in nodes:
            node = self.cluster.node(n.node)
            if node is not None:
                yield node, n.rejections

    def node_names(self, plugin: str) -> list[str]:
        """The names of the nodes ``plugin`` rejects, in the analysis's order."""
        return [n.node for n in self.analysis.nodes if any(r.plugin == plugin for r in n.rejections)]

    def reasons(self, plugin: str) -> Counter[str]:
        """How many nodes each reason of ``plugin`` rejects."""
        out: Counter[str] = Counter()
        for n in self.analysis.nodes:
            for r in n.rejections:
                if r.plugin == plugin:
                    out.update(set(r.reasons))
        return out


class _Changes:
    """What both sides share: the pod, the cluster, the rejections, the proofs, and the report they fill."""

    def __init__(
        self, rejections: Rejections, proof: CycleProof, probes: FilterProbes, report: RemedyReport, before_rank: int
    ) -> None:
        self.rejections = rejections
        self.proof = proof
        self.probes = probes
        self.report = report
        self.pod = proof.pod
        self.cluster = proof.cluster
        #: The rank of the verdict before any change (``Verdict.rank``): a change helps when it does better.
        self.before_rank = before_rank

    def verify(self, change: Change) -> Remedy:
        """The change with the verdict of the cycle re-run on it, added to the report."""
        verdict, check = self.proof.verify(change)
        helps = verdict.rank < self.before_rank or (change.kind == "priority-class" and verdict.rank < 2)
        remedy = Remedy(change.kind, change.text, change.target, change.patch, verdict, helps, change.command,
                        dict(change.detail), check)
        self.report.remedies.append(remedy)
        return remedy

    def _try_nodes(
        self, changes: Iterator[Change], *, tries: int = NODES_PER_KIND, keep: int = 1,
        on_help: Callable[[Change, Remedy], None] | None = None,
    ) -> None:
        """Verify changes until ``keep`` of them help; keep the first failure only when none does."""
        failed: Remedy | None = None
        helped = 0
        for i, change in enumerate(changes):
            if i >= tries:
                break
            r = self.verify(change)
            if not r.helps:
                if failed is None and not helped:
                    failed = r
                else:
                    self.report.remedies.remove(r)
                continue
            if on_help is not None:
                on_help(change, r)
            if failed is not None:
                self.report.remedies.remove(failed)
                failed = None
            helped += 1
            if helped >= keep:
                return

    def _untolerated(self, node: Node) -> list[Taint]:
        return [t for t in node.taints if t.effect in _FILTER_EFFECTS and not tolerations_tolerate(self.pod.tolerations, t)]


class ClusterChanges(_Changes):
    """Changes to a node, or a new node: each verified on a changed copy of the cluster."""

    def try_uncordon(self) -> None:
        self._try_nodes(ch.uncordon(node) for node, _ in self.rejections.nodes("NodeUnschedulable"))

    def try_remove_taints(self) -> None:
        def changes() -> Iterator[Change]:
            for node, _ in self.rejections.nodes("TaintToleration"):
                taints = [t for t in self._untolerated(node) if t.key != ch.UNSCHEDULABLE_TAINT]
                if len(taints) == 1 and not node.unschedulable:
                    yield ch.remove_taint(node, taints[0])

        self._try_nodes(changes())

    def try_label_nodes(self) -> None:
        def changes() -> Iterator[Change]:
            for node, rejections in self.rejections.nodes("NodeAffinity"):
                labels = labels_needed(self.pod, node)
                if labels and len(rejections) == 1:
                    yield ch.label_node(node, labels)

        self._try_nodes(changes())

    def try_add_node(self) -> None:
        groups = ch.node_groups(self.cluster)
        analysis = self.rejections.analysis
        near = {n.node: len([r for r in n.rejections if r.plugin != "NodeUnschedulable"]) for n in analysis.nodes}
        groups.sort(key=lambda g: (min(near.get(n.name, 99) for n in g.nodes), -len(g.nodes)))
        taken = {n.name for n in self.cluster.nodes}

        def count_copies(change: Change, r: Remedy) -> None:
            assert change.node is not None
            r.detail["copies"], r.detail["copiesCapped"] = self.probes.copies_on(change.node)

        self._try_nodes((ch.new_node_like(g, taken) for g in groups), tries=GROUPS_TRIED, keep=2, on_help=count_copies)


class PodChanges(_Changes):
    """Changes to the pod: each verified by re-running the cycle on the patched pod."""

    def __init__(
        self, rejections: Rejections, proof: CycleProof, probes: FilterProbes, report: RemedyReport, before_rank: int,
        trace: Trace,
    ) -> None:
        super().__init__(rejections, proof, probes, report, before_rank)
        #: The cycle before any change (its PostFilter says whether a higher priority can help).
        self.trace = trace

    def try_tolerations(self) -> None:
        counts: Counter[Taint] = Counter()
        for node, _ in self.rejections.nodes("TaintToleration"):
            counts.update(t for t in self._untolerated(node) if t.key != ch.UNSCHEDULABLE_TAINT)
        for taint, _ in counts.most_common(4):
            change = ch.add_toleration(self.pod, taint)
            r = self.verify(change)
            assert change.pod is not None
            r.detail["opensNodes"] = self._opened(change.pod, "TaintToleration")

    def _opened(self, pod: Pod, plugin: str) -> list[str]:
        """Nodes ``plugin`` rejected before and does not reject for the changed pod (the real Filter)."""
        still = self.probes.still_rejected(pod, plugin)
        return [name for name in self.rejections.node_names(plugin) if name not in still]

    def try_lower_requests(self) -> None:
        reasons = self.rejections.reasons("NodeResourcesFit")
        for reason, _ in sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0])):
            if not reason.startswith("Insufficient "):
                continue
            resource = reason.removeprefix("Insufficient ")
            site = ch.request_site(self.pod, resource)
            if site is None:
                self.report.notes.append(f"{resource} is not requested by a regular container: no request to lower")
                continue

            def fits(units: int, site: ch.RequestSite = site) -> bool:
                return self.probes.fits_somewhere(_pod_of(ch.set_request(self.pod, site, ch.quantity_text(units, site.resource))))

            units = largest_fitting(int(site.current / ch.request_unit(resource)), fits, hint=self._room_hint(site))
            if units is None:
                self.report.notes.append(
                    f"lowering the {resource} request alone does not make the pod fit any node "
                    "(searched down to 0 with the real Filter)")
                continue
            self.verify(ch.set_request(self.pod, site, ch.quantity_text(units, resource)))

    def _room_hint(self, site: ch.RequestSite) -> int | None:
        """A guess of the largest request at ``site`` that fits somewhere (in ``request_unit`` steps): the
        most free room of that resource on a node, less what the pod's other regular containers ask. It
        only orders the binary search's first probes; the answer is what the real Filter says."""
        name = site.resource
        nodes = self.proof.snapshots.base().node_info_list
        free = max((_amount(ni.allocatable, name) - _amount(ni.requested, name) for ni in nodes), default=None)
        if free is None:
            return None
        others = sum((c.requests.get(name, Fraction(0)) for c in self.pod.containers if c.name != site.container), Fraction(0))
        scale = Fraction(1, 1000) if name == "cpu" else Fraction(1)
        return int((free * scale - others) / ch.request_unit(name))

    def try_node_affinity(self) -> None:
        for key, want in self.pod.node_selector.items():
            self.verify(ch.drop_node_selector_key(self.pod, key))
            value = self._common_node_value(key, exclude={want})
            if value is not None:
                self.verify(ch.set_node_selector_value(self.pod, key, value))
        for ti, term in enumerate(ch.required_node_terms(self.pod)):
            for ei, expr in enumerate(term.get("matchExpressions") or []):
                change = ch.drop_node_expression(self.pod, ti, ei)
                if change is not None:
                    self.verify(change)
                if isinstance(expr, dict) and expr.get("operator") == "In":
                    value = self._common_node_value(str(expr.get("key")), exclude=set(expr.get("values") or []))
                    if value is not None:
                        self.verify(ch.add_node_expression_value(self.pod, ti, ei, value))

    def _common_node_value(self, key: str, exclude: set[str]) -> str | None:
        """The most common value of label ``key`` among nodes NodeAffinity rejects (and no other plugin)."""
        values: Counter[str] = Counter()
        for node, rejections in self.rejections.nodes("NodeAffinity"):
            if len(rejections) == 1 and key in node.labels and node.labels[key] not in exclude:
                values[node.labels[key]] += 1
        return values.most_common(1)[0][0] if values else None

    def try_spread(self) -> None:
        for i, c in enumerate(self.pod.topology_spread_constraints):
            if c.when_unsatisfiable != "DoNotSchedule":
                continue
            self.verify(ch.spread_change(self.pod, i, schedule_anyway=True))
            top = c.max_skew + len(self.cluster.pods) + 1

            def fits(skew: int, i: int = i) -> bool:
                return self.probes.fits_somewhere(_pod_of(ch.spread_change(self.pod, i, max_skew=skew)))

            skew = smallest_fitting(c.max_skew + 1, top, fits)
            if skew is not None:
                self.verify(ch.spread_change(self.pod, i, max_skew=skew))

    def try_pod_affinity(self) -> None:
        reasons = self.rejections.reasons("InterPodAffinity")
        aff = self.pod.affinity
        if aff is None:
            return
        if ERR_REASON_AFFINITY_RULES_NOT_MATCH in reasons:
            for i in range(len(aff.pod_affinity_required)):
                self.verify(ch.drop_pod_affinity_term(self.pod, False, i))
        if ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH in reasons:
            for i in range(len(aff.pod_anti_affinity_required)):
                self.verify(ch.drop_pod_affinity_term(self.pod, True, i))

    def try_priority(self) -> None:
        pf = self.trace.post_filter
        if pf is None or NO_VICTIMS_MSG not in pf.status.message():
            return  # preemption was not helpful on any node: a higher priority changes nothing
        mine = self.pod.effective_priority
        classes = sorted(
            (int(pc.raw.get("value") or 0), pc.name)
            for pc in self.cluster.of_kind("PriorityClass")
            if int(pc.raw.get("value") or 0) > mine
            and (not pc.name.startswith("system-") or self.pod.namespace == "kube-system")
            and pc.raw.get("preemptionPolicy") != "Never"
        )
        self._try_nodes(ch.set_priority_class(self.pod, name, value) for value, name in classes)


def _pod_of(change: Change) -> Pod:
    assert change.pod is not None
    return change.pod


def _amount(res: Resource, name: str) -> int:
    """One resource of a ``Resource`` in its integer unit (millicores for cpu)."""
    if name == "cpu":
        return res.milli_cpu
    if name == "memory":
        return res.memory
    if name == "ephemeral-storage":
        return res.ephemeral_storage
    return res.scalar.get(name, 0)


def largest_fitting(current: int, fits: Callable[[int], bool], hint: int | None = None) -> int | None:
    """The largest value below ``current`` for which ``fits`` holds (monotone: smaller fits better).

    ``hint``, a guess of the answer, is probed first (and the value above it): a good guess ends the
    search in two probes, a wrong one still narrows it; the answer is the same either way."""
    if current <= 0:
        return None
    hi = current - 1
    if fits(hi):
        return hi
    lo: int | None = None
    if hint is not None and 0 <= hint < hi:
        if not fits(hint):
            hi = hint
        elif hint + 1 == hi or not fits(hint + 1):
            return hint
        else:
            lo = hint + 1
    if lo is None:
        if not fits(0):
            return None
        lo = 0  # fits(lo) holds, fits(hi) does not
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if fits(mid):
            lo = mid
        else:
            hi = mid
    return lo


def smallest_fitting(lo: int, hi: int, fits: Callable[[int], bool]) -> int | None:
    """The smallest value in [lo, hi] for which ``fits`` holds (monotone: larger fits better).

    The range is wide (a maxSkew up to the number of pods) and the answer usually near its bottom:
    steps doubling from ``lo`` find a fitting bound first, then the search halves below it."""
    if lo > hi or not fits(hi):
        return None
    if fits(lo):
        return lo
    step = 1
    while lo + step < hi:  # fits(hi) holds, fits(lo) does not
        if fits(lo + step):
            hi = lo + step
            break
        lo += step
        step *= 2
    while hi - lo > 1:  # fits(hi) holds, fits(lo) does not
        mid = (lo + hi) // 2
        if fits(mid):
            hi = mid
        else:
            lo = mid
    return hi


def labels_needed(pod: Pod, node: Node) -> dict[str, str] | None:
    """Labels that would make ``node`` match the pod's nodeSelector and one required term (In/Exists only)."""
    need = {k: v for k, v in pod.node_selector.items() if node.labels.get(k) != v}
    terms = ch.required_node_terms(pod)
    if not terms:
        return need or None
    best: dict[str, str] | None = None
    for i, term in enumerate(terms):
        extra = dict(need)
        for e in term.get("matchExpressions") or []:
            key, op, values = str(e.get("key")), e.get("operator"), e.get("values") or []
            if op == "In" and node.labels.get(key) not in values:
                extra[key] = str(values[0]) if key not in extra else extra[key]
            elif op == "Exists" and key not in node.labels:
                extra.setdefault(key, "")
        labels = {**node.labels, **extra}
        parsed = parse_node_selector_term(term, f"nodeSelectorTerms[{i}]")
        fits = parsed.matches(labels, node.name) and all(labels.get(k) == v for k, v in pod.node_selector.items())
        if fits and (best is None or len(extra) < len(best)):
            best = extra
    return best or None
