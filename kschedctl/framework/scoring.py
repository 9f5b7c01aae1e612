"""Running the scoring extension points of a profile: PreScore, then Score, NormalizeScore and the weights.

``run_score`` keeps every step's scores in its ``ScoreOutcome`` so the explain trace can show
them. With ``fast_paths`` it first runs the plugins over the whole feasible list, through their
``score_nodes`` / ``normalize_scores`` where they have them (``PluginLists.score_paths``); the
per-node loop stays the reference, taken when ``fast_paths`` is off and whenever the list path
meets something only the per-node loop reports exactly.

Upstream model: ``pkg/scheduler/framework/runtime/framework.go`` (``RunPreScorePlugins``,
``RunScorePlugins``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kschedctl.framework.cycle_state import CycleState
from kschedctl.framework.interfaces import BatchScoreExtensions, NodeScore, ScoreExtensions, ScorePlugin
from kschedctl.framework.plugincalls import (
    Failed,
    PluginCalls,
    as_is,
    check_score_and_status,
    check_status,
    zero_score,
)
from kschedctl.framework.pluginlists import PluginLists, ScorePath
from kschedctl.framework.status import MAX_NODE_SCORE, MIN_NODE_SCORE, Code, PluginStatus, Status, quote_name
from kschedctl.framework.types import NodeInfo
from kschedctl.snapshot.model import Pod


@dataclass
class ScoreOutcome:
    status: Status
    plugins: list[str] = field(default_factory=list)
    weights: dict[str, int] = field(default_factory=dict)
    raw: dict[str, dict[str, int]] = field(default_factory=dict)
    normalized: dict[str, dict[str, int]] = field(default_factory=dict)
    weighted: dict[str, dict[str, int]] = field(default_factory=dict)
    #: The whole-list path's scores as lists over ``names`` (raw, normalized, weighted), per plugin, instead
    #: of the dicts above: who needs a plugin's scores by node makes the dicts (``explain.trace.PluginScores``).
    names: list[str] = field(default_factory=list)
    columns: dict[str, tuple[list[int], list[int], list[int]]] = field(default_factory=dict)
    totals: dict[str, int] = field(default_factory=dict)
    #: When a score was out of range: which plugin gave it to which node (upstream's message names neither node nor raw value).
    detail: str | None = None


class ScorePoints:
    """PreScore and Score of one profile's plugins."""

    def __init__(self, plugins: PluginLists, calls: PluginCalls, fast_paths: bool) -> None:
        self.plugins = plugins
        self.calls = calls
        #: Score through the whole-list path first (``Framework.fast_paths``).
        self.fast_paths = fast_paths

    def run_pre_score(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> tuple[Status, list[PluginStatus]]:
        records: list[PluginStatus] = []
        skip: set[str] = set()
        try:
            for pl in self.plugins.pre_score_plugins:
                s = self.calls.call(pl, "PreScore", None, check_status, as_is, pl.pre_score, state, pod, nodes)
                records.append(PluginStatus(pl.name, s))
                if s.is_skip():
                    skip.add(pl.name)
                    continue
                if not s.is_success():
                    return Status(Code.ERROR, f"running PreScore plugin {quote_name(pl.name)}: {s.message()}", plugin=pl.name), records
        finally:
            state.skip_score_plugins = skip
        return Status(), records

    def run_score(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> ScoreOutcome:
        """Score, NormalizeScore and weights. Like upstream's per-node loop, each node is scored by
        every plugin in order and the first failure ends the point; the raw (and normalized)
        scores returned until then stay in the outcome for the trace."""
        if self.fast_paths:
            fast = self._run_score_lists(state, pod, nodes)
            if fast is not None:
                return fast
        plugins = [pl for pl in self.plugins.score_plugins if pl.name not in state.skip_score_plugins]
        out = ScoreOutcome(Status())
        out.plugins = [pl.name for pl in plugins]
        out.weights = {pl.name: self.plugins.score_weights[pl.name] for pl in plugins}
        lists: dict[str, list[NodeScore]] = {pl.name: [] for pl in plugins}
        for ni in nodes:
            for pl in plugins:
                v, st = self.calls.call(pl, "Score", ni.name, check_score_and_status, zero_score, pl.score, state, pod, ni)
                if not st.is_success():
                    msg = f"running Score plugins: plugin {quote_name(pl.name)} failed with: {st.message()}"
                    out.status = Status(Code.ERROR, msg, plugin=pl.name)
                    return out
                lists[pl.name].append(NodeScore(ni.name, v))
                out.raw.setdefault(pl.name, {})[ni.name] = v
        for pl in plugins:
            ext: ScoreExtensions | Failed | None = self.calls.call(
                pl, "NormalizeScore", None, as_is, Failed, pl.score_extensions
            )
            st = ext.status if isinstance(ext, Failed) else Status()
            if ext is not None and not isinstance(ext, Failed):
                st = self.calls.call(
                    pl, "NormalizeScore", None, check_status, as_is, ext.normalize_score, state, pod, lists[pl.name]
                )
            if not st.is_success():
                msg = f"running Normalize on Score plugins: plugin {quote_name(pl.name)} failed with: {st.message()}"
                out.status = Status(Code.ERROR, msg, plugin=pl.name)
                return out
            out.normalized[pl.name] = {s.name: s.score for s in lists[pl.name]}
        return self._apply_weights(out, plugins, nodes)

    def _apply_weights(self, out: ScoreOutcome, plugins: list[ScorePlugin], nodes: list[NodeInfo]) -> ScoreOutcome:
        """Weighted scores and totals, node by node; a normalized score outside [0, 100] ends the point."""
        totals = {ni.name: 0 for ni in nodes}
        for ni in nodes:
            for pl in plugins:
                score = out.normalized[pl.name].get(ni.name, 0)
                if score > MAX_NODE_SCORE or score < MIN_NODE_SCORE:
                    out.status = Status(
                        Code.ERROR,
                        f"applying score defaultWeights on Score plugins: plugin {quote_name(pl.name)} returns an invalid score "
                        f"{score}, it should in the range of [{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] after normalizing",
                        plugin=pl.name,
                    )
                    raw = out.raw.get(pl.name, {}).get(ni.name)
                    out.detail = (
                        f"{pl.name} gave node {ni.name} the score {score}"
                        + (f" (raw score {raw})" if raw is not None and raw != score else "")
                        + f", outside [{MIN_NODE_SCORE}, {MAX_NODE_SCORE}]"
                    )
                    return out
                w = out.weights[pl.name]
                out.weighted.setdefault(pl.name, {})[ni.name] = score * w
                totals[ni.name] += score * w
        out.totals = totals
        return out

    def _run_score_lists(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> ScoreOutcome | None:
        """``run_score`` on plain lists: plugins' ``score_nodes`` / ``normalize_scores`` when they have
        them (``score_paths``; their per-node methods otherwise). Only the ordinary case: when a plugin
        raises, fails, returns something unexpected or a normalized score is out of range, None (the
        caller then takes the reference path, which reports that exactly)."""
        if not nodes:
            return None
        skip = state.skip_score_plugins
        paths = [p for p in self.plugins.score_paths if p.plugin.name not in skip]
        out = ScoreOutcome(Status())
        out.plugins = [p.plugin.name for p in paths]
        out.weights = {name: self.plugins.score_weights[name] for name in out.plugins}
        names = out.names = [ni.name for ni in nodes]
        columns: list[list[int]] = []
        try:
            for path in paths:
                pl = path.plugin
                raw = _raw_scores(path, state, pod, nodes)
                if raw is None:
                    return None
                raw = list(raw)  # the plugin's list stays the plugin's
                ext = pl.score_extensions()
                batch_ext = path.batch_ext if ext is path.batch_ext else None
                normalized = raw if ext is None else _normalized_scores(ext, batch_ext, state, pod, names, raw)
                if normalized is None:
                    return None
                if normalized and (min(normalized) < MIN_NODE_SCORE or max(normalized) > MAX_NODE_SCORE):
                    return None
                w = out.weights[pl.name]
                weighted = normalized if w == 1 else [v * w for v in normalized]
                out.columns[pl.name] = (raw, normalized, weighted)
                columns.append(weighted)
        except Exception:  # the reference path reports it
            return None
        totals = list(map(sum, zip(*columns, strict=True))) if columns else [0] * len(nodes)
        out.totals = dict(zip(names, totals, strict=True))
        return out


def _raw_scores(path: ScorePath, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> list[int] | None:
    """One plugin's raw scores for the nodes, or None when one failed or is not an int."""
    batch = path.score_nodes
    pl = path.plugin
    if batch is not None:
        scores, st = batch(state, pod, nodes)
        if type(st) is not Status or st.code != Code.SUCCESS or len(scores) != len(nodes):
            return None
        if set(map(type, scores)) <= {int}:
            return scores
        return None
    out: list[int] = []
    for ni in nodes:
        v, st = pl.score(state, pod, ni)
        if type(st) is not Status or st.code != Code.SUCCESS or type(v) is not int:
            return None
        out.append(v)
    return out


def _normalized_scores(
    ext: ScoreExtensions,
    batch: BatchScoreExtensions | None,
    state: CycleState,
    pod: Pod,
    names: list[str],
    scores: list[int],
) -> list[int] | None:
    """NormalizeScore on a list of scores (``normalize_scores`` in place; else through NodeScores)."""
    values = list(scores)
    if batch is not None:
        st = batch.normalize_scores(state, pod, names, values)
    else:
        node_scores = [NodeScore(n, v) for n, v in zip(names, scores, strict=True)]
        st = ext.normalize_score(state, pod, node_scores)
        if [s.name for s in node_scores] != names:
            return None
        values = [s.score for s in node_scores]
    if type(st) is not Status or st.code != Code.SUCCESS or len(values) != len(names):
        return None
    return values
