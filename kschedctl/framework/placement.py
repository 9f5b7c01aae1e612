"""The two extension points of v1.36's pod-group cycle: PlacementGenerate and PlacementScore.

Upstream: ``RunPlacementGeneratePlugins`` / ``RunPlacementScorePlugins`` in
``pkg/scheduler/framework/runtime/framework.go`` (v1.36.2) and ``findBestPlacement`` in
``schedule_one_podgroup.go``. They run only in a pod-group cycle (gates ``GenericWorkload`` and
``TopologyAwareWorkloadScheduling``), which ``kschedctl.explain.podgroup`` runs; these functions
take the plugin lists and weights as arguments (the runtime builds them from the configuration).

* PlacementGenerate: at most one plugin; it splits the parent placement (every node) into
  placements. No plugin: the parent alone. None generated: Unschedulable
  "no feasible placements found".
* PlacementScore: every plugin scores every placement's assignments, plugins with a
  normalization rescale their scores, each score (which must then be within 0..100) is
  multiplied by the plugin's weight and summed. The best total wins; upstream breaks ties at
  random, so ``best_placements`` returns the whole tie set.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kschedctl.framework.podgroups import Placement, PodGroup, PodGroupAssignments
from kschedctl.framework.status import MAX_NODE_SCORE, Code, Status

MIN_SCORE = 0


def run_placement_generate(
    plugins: Sequence[Any], pod_group: PodGroup, nodes: list[Any]
) -> tuple[list[Placement], Status]:
    """The placements to try, from the profile's PlacementGenerate plugin (if any)."""
    parent = Placement(list(nodes))
    if not plugins:
        return [parent], Status()
    pl = plugins[0]
    placements, st = pl.generate_placements(pod_group, parent)
    if not st.is_success():
        return [], st.with_plugin(pl.name)
    if not placements:
        return [], Status(Code.UNSCHEDULABLE, "no feasible placements found").with_plugin(pl.name)
    return placements, Status()


@dataclass
class PlacementScores:
    """One placement's weighted score per plugin and their total (``fwk.PlacementPluginScores``)."""

    placement: Placement
    scores: dict[str, int] = field(default_factory=dict)
    total: int = 0


def run_placement_score(
    plugins: Sequence[Any],
    weights: Mapping[str, int],
    pod_group: PodGroup,
    assignments: list[PodGroupAssignments],
    columns: dict[str, tuple[list[int], list[int]]] | None = None,
) -> tuple[list[PlacementScores], Status]:
    """Score every placement's assignments with every PlacementScore plugin (weighted); ``columns``
    receives each plugin's raw and normalized scores (in the order of ``assignments``) for a trace."""
    raw: dict[str, list[int]] = {}
    for pl in plugins:
        col: list[int] = []
        for a in assignments:
            s, st = pl.score_placement(pod_group, a)
            if not st.is_success():
                return [], Status.as_error(f'running PlacementScore plugins: plugin "{pl.name}" failed with: {st.message()}')
            col.append(s)
        raw[pl.name] = col
    raw_copy = {name: list(col) for name, col in raw.items()}
    for pl in plugins:
        normalize = getattr(pl, "normalize_placement_scores", None)
        if normalize is None:
            continue
        st = normalize(pod_group, raw[pl.name])
        if not st.is_success():
            return [], Status.as_error(
                f'running NormalizePlacementScore on PlacementScore plugins: plugin "{pl.name}" failed with: {st.message()}'
            )
    if columns is not None:
        columns.update({name: (raw_copy[name], raw[name]) for name in raw})
    out: list[PlacementScores] = []
    for i, a in enumerate(assignments):
        ps = PlacementScores(a.placement)
        for pl in plugins:
            s = raw[pl.name][i]
            if not MIN_SCORE <= s <= MAX_NODE_SCORE:
                return [], Status.as_error(
                    f'applying score defaultWeights on PlacementScore plugins: plugin "{pl.name}" returns an invalid '
                    f"score {s}, it should in the range of [{MIN_SCORE}, {MAX_NODE_SCORE}] after normalizing"
                )
            ps.scores[pl.name] = s * weights.get(pl.name, 1)
            ps.total += ps.scores[pl.name]
        out.append(ps)
    return out, Status()


def best_placements(scores: list[PlacementScores]) -> list[Placement]:
    """The placements with the highest total (upstream picks one of them at random)."""
    if not scores:
        return []
    top = max(s.total for s in scores)
    return [s.placement for s in scores if s.total == top]
