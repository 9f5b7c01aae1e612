"""Scale-up what-if: the run with N new nodes like node T added, and the least N that places every pod.

``simulate --add-nodes T=N`` asks where the pods go once N nodes of T's node group join the cluster
(the nodes as ``whatif.nodetemplate`` builds them); ``--add-nodes T=auto`` asks for the least N in
0..M (``--max-new-nodes``) for which every pod is scheduled (not merely nominated). Each question is
answered by the real scheduling loop, one run per count tried (a *probe*), through the ``run``
callable the use case gives (the pods of ``-f`` and the snapshot's pending pods, as ``simulate``
places them).

The goal of the search (``places_every_pod``): every pod the scheduler tries is scheduled; gated pods
and pods of another scheduler, which no count of nodes places, are left out (``simulate``'s exit
status still counts them: 1 while a gated pod stays pending).

The search for the least count: probe 0; then 1, 2, 4, 8 ... (capped at M) until a count places
every pod; then a binary search between the last count that did not and the first that did. It
ends with a count L that places every pod and the count L-1, probed too, that does not: that is the
least count when more nodes never place fewer pods (true of the judged corpus; not guaranteed in
general: preemption and spreading may make a larger count place fewer pods, and a count between the
probes then goes unseen). A count is never probed twice (``Prober`` keeps each run).

What stays the same between probes is built once: the cluster as read (each probe shares its Node
and bound Pod objects, whose cached PodInfos the probe's snapshot reuses; only the pending pods,
which a run writes its placements onto, are fresh copies, as ``whatif.runs`` makes them), the new
nodes and their DaemonSet/mirror pod copies (built once for the largest count; a probe takes the
first N), the parsed pod files and the scheduler configuration (the caller's ``run``).

Several ``--add-nodes`` flags: the fixed counts are added in every probe; the ``auto`` templates are
searched one at a time, in flag order, while the later ``auto`` templates add no node and the earlier
ones keep the count their search found (the maximum when none was found).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from kschedctl.errors import UsageError
from kschedctl.snapshot.cluster import Cluster
from kschedctl.whatif import DEFAULT_MAX_NEW_NODES
from kschedctl.whatif.nodetemplate import NewNodes, new_nodes, with_new_nodes
from kschedctl.whatif.placements import IGNORED, AddedNodes, SimulationResult
from kschedctl.whatif.runs import fresh_cluster

#: ``--max-new-nodes``' default.


@dataclass(frozen=True)
class AddNodes:
    """One ``--add-nodes T=N`` (``count`` None: ``T=auto``)."""

    template: str
    count: int | None

    @property
    def auto(self) -> bool:
        return self.count is None


def first_nodes(group: NewNodes, count: int) -> NewNodes:
    """The first ``count`` nodes of ``group`` and their starting pods (what ``new_nodes`` builds for ``count``)."""
    nodes = group.nodes[:count]
    names = {n.name for n in nodes}
    return NewNodes(group.template, nodes, tuple(p for p in group.pods if p.node_name in names))


#: The outcomes no count of new nodes changes: a pod with scheduling gates never enters the queue, and
#: a pod of another scheduler is not this scheduler's to place (cluster-autoscaler skips both too).
OUT_OF_REACH = ("gated", IGNORED)


def places_every_pod(result: SimulationResult) -> bool:
    """The search's goal: every pod the scheduler tries is scheduled (not left unschedulable, nor only
    nominated by preemption, nor counted as an identical copy of one that did not fit, nor past
    ``--max-pods``); gated pods and pods of another scheduler are left out (``OUT_OF_REACH``)."""
    if result.not_tried or result.capped:
        return False
    return all(p.placed for p in result.final_attempts if p.outcome not in OUT_OF_REACH)


class Prober:
    """The runs with given counts of new nodes per template, each made once."""

    def __init__(self, cluster: Cluster, groups: Sequence[NewNodes], run: Callable[[Cluster], SimulationResult]) -> None:
        self.cluster = cluster
        self.groups = list(groups)
        self.run = run
        self.results: dict[tuple[int, ...], SimulationResult] = {}

    def __call__(self, counts: tuple[int, ...]) -> SimulationResult:
        result = self.results.get(counts)
        if result is None:
            added = [first_nodes(g, c) for g, c in zip(self.groups, counts, strict=True)]
            result = self.results[counts] = self.run(with_new_nodes(fresh_cluster(self.cluster), added))
        return result

    @property
    def probes(self) -> int:
        return len(self.results)


def least_count(places_all: Callable[[int], bool], most: int, start: int = 1) -> int | None:
    """The least count in 0..``most`` for which ``places_all`` holds (None: not even ``most``). After 0, the
    search starts at ``start`` and steps away from it in doubling steps, up while counts fail, down while
    they hold, then halves the gap between the last count that failed and the least that held (exact
    when it holds for every count from the least on; see the module doc). From ``start`` 1 it probes
    1, 2, 4, 8 ... and then bisects."""
    if places_all(0):
        return 0
    if most < 1:
        return None
    start = max(1, min(start, most))
    failed, placed, step = 0, start, 1
    if places_all(start):
        while placed - step > failed:
            if not places_all(placed - step):
                failed = placed - step
                break
            placed, step = placed - step, step * 2
    else:
        failed = start
        while True:
            n = min(failed + step, most)
            if n <= failed:
                return None
            if places_all(n):
                placed = n
                break
            failed, step = n, step * 2
    while placed - failed > 1:
        mid = (failed + placed) // 2
        if places_all(mid):
            placed = mid
        else:
            failed = mid
    return placed


def scale_up(
    cluster: Cluster,
    specs: Sequence[AddNodes],
    run: Callable[[Cluster], SimulationResult],
    *,
    max_new_nodes: int = DEFAULT_MAX_NEW_NODES,
    source: str = "the snapshot",
) -> SimulationResult:
    """The run with the new nodes of ``specs`` added (``auto`` counts searched, see the module doc), its
    result carrying ``add_nodes``: per template, the count, the search and the new nodes' names."""
    groups = _groups(cluster, specs, max_new_nodes, source)
    probe = Prober(cluster, groups, run)
    counts = [s.count or 0 for s in specs]
    searched: dict[int, tuple[int | None, int]] = {}
    for i, spec in enumerate(specs):
        if spec.auto:
            before = probe.probes

            def places_all(n: int, i: int = i) -> bool:
                return places_every_pod(probe(_with(counts, i, n)))

            least = least_count(places_all, max_new_nodes)
            counts[i] = max_new_nodes if least is None else least
            searched[i] = (least, probe.probes - before)
    result = probe(tuple(counts))
    result.add_nodes = [
        AddedNodes(s.template, counts[i], first_nodes(groups[i], counts[i]).names, auto=s.auto,
                   least=searched[i][0] if s.auto else None, searched_up_to=max_new_nodes if s.auto else None,
                   probes=searched[i][1] if s.auto else 0)
        for i, s in enumerate(specs)
    ]
    result.probes = probe.probes
    _note_left_out(result, specs)
    return result


def _with(counts: list[int], i: int, n: int) -> tuple[int, ...]:
    """``counts`` with the ``i``-th replaced by ``n``."""
    return (*counts[:i], n, *counts[i + 1:])


def _note_left_out(result: SimulationResult, specs: Sequence[AddNodes]) -> None:
    """A note naming the pods the search did not count (``OUT_OF_REACH``), when there was a search."""
    left_out = [p.pod for p in result.final_attempts if p.outcome in OUT_OF_REACH]
    if left_out and any(s.auto for s in specs):
        result.notes.append(
            f"{len(left_out)} pod(s) gated or of another scheduler are left out of the search (no count of new nodes "
            f"places them): {', '.join(left_out[:5])}{' ...' if len(left_out) > 5 else ''}"
        )


def _groups(cluster: Cluster, specs: Sequence[AddNodes], max_new_nodes: int, source: str) -> list[NewNodes]:
    """Per flag, the new nodes of its largest count (names distinct across flags); an unknown template or
    one given twice is a usage error."""
    groups: list[NewNodes] = []
    taken: set[str] = set()
    seen: set[str] = set()
    for s in specs:
        template = cluster.node(s.template)
        if template is None:
            raise UsageError(f"--add-nodes {s.template}={'auto' if s.auto else s.count}: {source} has no node "
                             f"{s.template} (the template must be one of its nodes)")
        if s.template in seen:
            raise UsageError(f"--add-nodes: {s.template} is given twice; one flag per template")
        seen.add(s.template)
        group = new_nodes(cluster, template, max_new_nodes if s.count is None else s.count, taken)
        taken.update(group.names)
        groups.append(group)
    return groups
