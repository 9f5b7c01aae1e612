"""The framework runtime: builds a profile's plugin lists and runs extension points.

This follows kube-scheduler's ``frameworkImpl``: explicit extension-point lists
first, then MultiPoint expansion with its precedence rules; one queue-sort
plugin; at least one bind plugin; score weights from the Score list, then
MultiPoint, 1 when unset. Each ``run_*`` method returns what the real runtime
returns *and* the per-plugin statuses, so the explain trace can show every step.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kschedctl.config.types import Profile
from kschedctl.errors import ConfigError
from kschedctl.framework.cycle_state import CycleState
from kschedctl.framework.interfaces import (
    NodeScore,
    NodeToStatus,
    PostFilterResult,
    PreFilterResult,
    implements,
)
from kschedctl.framework.registry import Registry, plugin_args
from kschedctl.framework.snapshot import Snapshot
from kschedctl.framework.status import MAX_NODE_SCORE, MAX_TOTAL_SCORE, MIN_NODE_SCORE, Code, Status
from kschedctl.framework.types import NodeInfo, PodInfo
from kschedctl.snapshot.cluster import Cluster
from kschedctl.snapshot.model import Pod

#: kube-scheduler's getExtensionPoints order: (config field, Go interface name).
_EXTENSION_ORDER = (
    ("preFilter", "PreFilterPlugin"),
    ("filter", "FilterPlugin"),
    ("postFilter", "PostFilterPlugin"),
    ("reserve", "ReservePlugin"),
    ("preScore", "PreScorePlugin"),
    ("score", "ScorePlugin"),
    ("preBind", "PreBindPlugin"),
    ("bind", "BindPlugin"),
    ("postBind", "PostBindPlugin"),
    ("permit", "PermitPlugin"),
    ("preEnqueue", "PreEnqueuePlugin"),
    ("queueSort", "QueueSortPlugin"),
)


@dataclass(slots=True)
class PluginStatus:
    """One plugin's status at one extension point, for the trace."""

    plugin: str
    status: Status

    def to_dict(self) -> dict[str, Any]:
        return {"plugin": self.plugin, "code": self.status.code.label, "reasons": list(self.status.reasons)}


@dataclass
class PreFilterOutcome:
    result: PreFilterResult | None
    status: Status
    records: list[PluginStatus]
    #: Plugins that returned a node set (or rejected): FitError's "didn't satisfy plugin(s)".
    unschedulable_plugins: set[str]


@dataclass
class ScoreOutcome:
    status: Status
    plugins: list[str] = field(default_factory=list)
    weights: dict[str, int] = field(default_factory=dict)
    raw: dict[str, dict[str, int]] = field(default_factory=dict)
    normalized: dict[str, dict[str, int]] = field(default_factory=dict)
    weighted: dict[str, dict[str, int]] = field(default_factory=dict)
    totals: dict[str, int] = field(default_factory=dict)


def q(s: str) -> str:
    """Go's ``%q`` for the plain names in messages: double quotes."""
    return f'"{s}"'


def merge_pre_filter_results(a: PreFilterResult | None, b: PreFilterResult | None) -> PreFilterResult | None:
    """``PreFilterResult.Merge``: None (or node_names None) means all nodes; otherwise intersect."""
    a_all = a is None or a.all_nodes()
    b_all = b is None or b.all_nodes()
    if a_all and b_all:
        return None
    if a_all:
        return PreFilterResult(set(b.node_names or ()))  # type: ignore[union-attr]
    if b_all:
        return PreFilterResult(set(a.node_names or ()))  # type: ignore[union-attr]
    return PreFilterResult((a.node_names or set()) & (b.node_names or set()))  # type: ignore[union-attr]


class Framework:
    """A profile's plugins, ready to run (``framework.Framework`` / ``fwk.Handle``)."""

    def __init__(self, profile: Profile, registry: Registry, snapshot: Snapshot) -> None:
        self.profile = profile
        self.profile_name = profile.scheduler_name
        self.percentage_of_nodes_to_score = profile.percentage_of_nodes_to_score
        self._snapshot = snapshot
        #: The configured extenders (``Handle.Extenders()``), set by the cycle that runs this framework.
        self.extenders: list[Any] = []
        plugins = profile.plugins
        needed: list[str] = []
        for ps in plugins.sets.values():
            for ref in ps.enabled:
                if ref.name not in needed:
                    needed.append(ref.name)
        self.plugins_map: dict[str, Any] = {}
        for name in needed:
            entry = registry.get(name)
            if entry is None:
                continue  # reported below as "does not exist" where it is used
            try:  # an out-of-tree plugin gets its own args model (in-tree args pass through)
                args = plugin_args(entry, profile.args(name))
            except ValueError as e:
                raise ConfigError(f"initializing plugin {q(name)}: {e}") from None
            try:
                self.plugins_map[name] = entry.factory(args, self)
            except ConfigError:
                raise
            except Exception as e:  # a plugin that cannot be built is a configuration problem
                raise ConfigError(f"initializing plugin {q(name)}: {e}") from e
        self.lists: dict[str, list[Any]] = {}
        for ep, iface in _EXTENSION_ORDER:
            self.lists[ep] = self._explicit_list(ep, iface)
        if plugins["multiPoint"].enabled:
            for ep, iface in _EXTENSION_ORDER:
                self._expand_multipoint(ep, iface)
        if len(self.lists["queueSort"]) != 1:
            raise ConfigError(
                f"only one queue sort plugin required for profile with scheduler name {q(self.profile_name)}, "
                f"but got {len(self.lists['queueSort'])}"
            )
        if not self.lists["bind"]:
            raise ConfigError(f"at least one bind plugin is needed for profile with scheduler name {q(self.profile_name)}")
        self.score_weights: dict[str, int] = {}
        total = 0
        for ref in plugins["score"].enabled + plugins["multiPoint"].enabled:
            pl = self.plugins_map.get(ref.name)
            if pl is None or not implements(pl, "score") or ref.name in self.score_weights:
                continue
            w = ref.weight or 1
            self.score_weights[ref.name] = w
            if w * MAX_NODE_SCORE > MAX_TOTAL_SCORE - total:
                raise ConfigError("total score of Score plugins could overflow")
            total += w * MAX_NODE_SCORE
        for pl in self.lists["score"]:
            if self.score_weights.get(pl.name, 0) == 0:
                raise ConfigError(f"score plugin {q(pl.name)} is not configured with weight")

    # construction helpers ---------------------------------------------------------------
    def _explicit_list(self, ep: str, iface: str) -> list[Any]:
        out: list[Any] = []
        seen: set[str] = set()
        for ref in self.profile.plugins[ep].enabled:
            pl = self.plugins_map.get(ref.name)
            if pl is None:
                raise ConfigError(f"{iface} {q(ref.name)} does not exist")
            if not implements(pl, ep):
                raise ConfigError(f"plugin {q(ref.name)} does not extend {iface} plugin")
            if ref.name in seen:
                raise ConfigError(f"plugin {q(ref.name)} already registered as {q(iface)}")
            seen.add(ref.name)
            out.append(pl)
        return out

    def _expand_multipoint(self, ep: str, iface: str) -> None:
        ps = self.profile.plugins[ep]
        enabled = [r.name for r in ps.enabled]
        disabled = set(ps.disabled)
        if "*" in disabled:
            return
        multipoint: list[str] = []
        overrides: list[str] = []
        for ref in self.profile.plugins["multiPoint"].enabled:
            pl = self.plugins_map.get(ref.name)
            if pl is None:
                raise ConfigError(f"{iface} {q(ref.name)} does not exist")
            if not implements(pl, ep) or ref.name in disabled:
                continue
            if ref.name in enabled:
                if ref.name not in overrides:
                    overrides.append(ref.name)
                continue
            if ref.name in multipoint:
                raise ConfigError(f"plugin {q(ref.name)} already registered as {q(iface)}")
            multipoint.append(ref.name)
        ordered = [n for n in enabled if n in overrides]
        ordered += multipoint
        ordered += [n for n in enabled if n not in overrides]
        self.lists[ep] = [self.plugins_map[n] for n in ordered]

    # Handle -----------------------------------------------------------------------------
    @property
    def snapshot(self) -> Snapshot:
        return self._snapshot

    @property
    def cluster(self) -> Cluster:
        return self._snapshot.cluster

    def set_snapshot(self, snapshot: Snapshot) -> None:
        self._snapshot = snapshot

    def plugin_names(self, ep: str) -> list[str]:
        return [p.name for p in self.lists[ep]]

    def has_filter_plugins(self) -> bool:
        return bool(self.lists["filter"])

    def has_score_plugins(self) -> bool:
        return bool(self.lists["score"])

    def has_post_filter_plugins(self) -> bool:
        return bool(self.lists["postFilter"])

    # PreEnqueue / QueueSort ---------------------------------------------------------------
    def run_pre_enqueue(self, pod: Pod) -> list[PluginStatus]:
        """Profile order, stopping at the first plugin that does not return Success."""
        out: list[PluginStatus] = []
        for pl in self.lists["preEnqueue"]:
            st = pl.pre_enqueue(pod)
            if not st.is_success():
                st.plugin = pl.name
                if not st.is_rejected():
                    st = Status(Code.ERROR, *st.reasons, plugin=pl.name)
                out.append(PluginStatus(pl.name, st))
                break
            out.append(PluginStatus(pl.name, st))
        return out

    def queue_sort_less(self, a: Pod, b: Pod) -> bool:
        return bool(self.lists["queueSort"][0].less(a, b))

    # PreFilter ---------------------------------------------------------------------------
    def run_pre_filter(self, state: CycleState, pod: Pod) -> PreFilterOutcome:
        nodes = self._snapshot.node_info_list
        records: list[PluginStatus] = []
        skip: set[str] = set()
        result: PreFilterResult | None = None
        with_nodes: list[str] = []
        return_status = Status()
        try:
            for pl in self.lists["preFilter"]:
                r, s = pl.pre_filter(state, pod, nodes)
                records.append(PluginStatus(pl.name, s))
                if s.is_skip():
                    skip.add(pl.name)
                    continue
                if not s.is_success():
                    s.plugin = pl.name
                    if s.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                        return PreFilterOutcome(None, s, records, {pl.name})
                    if s.code == Code.UNSCHEDULABLE:
                        return_status = s
                        continue
                    err = Status(Code.ERROR, f"running PreFilter plugin {q(pl.name)}: {s.message()}", plugin=pl.name)
                    return PreFilterOutcome(None, err, records, set())
                if r is not None and not r.all_nodes() and pl.name not in with_nodes:
                    with_nodes.append(pl.name)
                result = merge_pre_filter_results(result, r)
                if result is not None and not result.node_names:
                    names = sorted(with_nodes)
                    if len(names) == 1:
                        msg = f"node(s) didn't satisfy plugin {names[0]}"
                    else:
                        msg = f"node(s) didn't satisfy plugin(s) [{' '.join(names)}] simultaneously"
                    return PreFilterOutcome(result, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, msg), records, set(names))
        finally:
            state.skip_filter_plugins = skip
        unsched = set(with_nodes)
        if return_status.code == Code.UNSCHEDULABLE:
            unsched = {return_status.plugin}
        return PreFilterOutcome(result, return_status, records, unsched)

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod: Pod, pod_info_to_add: PodInfo, node_info: NodeInfo
    ) -> Status:
        return self._run_pre_filter_extension("AddPod", state, pod, pod_info_to_add, node_info)

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod: Pod, pod_info_to_remove: PodInfo, node_info: NodeInfo
    ) -> Status:
        return self._run_pre_filter_extension("RemovePod", state, pod, pod_info_to_remove, node_info)

    def _run_pre_filter_extension(
        self, which: str, state: CycleState, pod: Pod, other: PodInfo, node_info: NodeInfo
    ) -> Status:
        """AddPod/RemovePod of every PreFilter plugin that ran (not skipped) and has extensions."""
        for pl in self.lists["preFilter"]:
            if pl.name in state.skip_filter_plugins:
                continue
            ext = pl.pre_filter_extensions()
            if ext is None:
                continue
            call = ext.add_pod if which == "AddPod" else ext.remove_pod
            st = call(state, pod, other, node_info)
            if not st.is_success():
                return Status(Code.ERROR, f"running {which} on PreFilter plugin {q(pl.name)}: {st.message()}")
        return Status()

    # Filter ------------------------------------------------------------------------------
    def run_filter_plugins(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        skip = state.skip_filter_plugins
        for pl in self.lists["filter"]:
            if pl.name in skip:
                continue
            st = pl.filter(state, pod, node_info)
            if not st.is_success():
                if not st.is_rejected():
                    # reasons: what the plugin returned (the node's Filter verdict);
                    # error: the framework's wrapped error, which ends the cycle
                    st = Status(Code.ERROR, *st.reasons, error=f"running {q(pl.name)} filter plugin: {st.message()}")
                st.plugin = pl.name
                return st
        return Status()

    def run_filter_plugins_with_nominated_pods(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        """Filters with equal-or-higher priority nominated pods added, then (if that passed) without."""
        nominated = self._snapshot.nominated_pods_for_node(node_info.name)
        if nominated:
            added = False
            ni2: NodeInfo | None = None
            st2: CycleState | None = None
            prio = pod.effective_priority
            for pi in nominated:
                if pi.pod.effective_priority >= prio and pi.pod.uid != pod.uid:
                    if ni2 is None or st2 is None:
                        ni2 = node_info.snapshot()
                        st2 = state.clone()
                    ni2.add_pod_info(pi)
                    s = self.run_pre_filter_extension_add_pod(st2, pod, pi, ni2)
                    if not s.is_success():
                        return s
                    added = True
            if added and ni2 is not None and st2 is not None:
                status = self.run_filter_plugins(st2, pod, ni2)
                if not status.is_success():
                    return status
        return self.run_filter_plugins(state, pod, node_info)

    # PostFilter ----------------------------------------------------------------------------
    def run_post_filter(
        self, state: CycleState, pod: Pod, filtered: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status, list[PluginStatus]]:
        records: list[PluginStatus] = []
        result: PostFilterResult | None = None
        reasons: list[str] = []
        rejector = ""
        for pl in self.lists["postFilter"]:
            r, s = pl.post_filter(state, pod, filtered)
            records.append(PluginStatus(pl.name, s))
            if s.is_success():
                return r, s.with_plugin(pl.name), records
            if s.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                return r, s.with_plugin(pl.name), records
            if not s.is_rejected():
                return None, Status(Code.ERROR, *s.reasons, plugin=pl.name), records
            if (r is not None and r.mode != "Noop") or (r is not None and result is None and (r.victims or r.details)):
                result = r
            reasons.extend(s.reasons)
            if not rejector:
                rejector = pl.name
        return result, Status(Code.UNSCHEDULABLE, *reasons, plugin=rejector), records

    # PreScore / Score -----------------------------------------------------------------------
    def run_pre_score(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> tuple[Status, list[PluginStatus]]:
        records: list[PluginStatus] = []
        skip: set[str] = set()
        try:
            for pl in self.lists["preScore"]:
                s = pl.pre_score(state, pod, nodes)
                records.append(PluginStatus(pl.name, s))
                if s.is_skip():
                    skip.add(pl.name)
                    continue
                if not s.is_success():
                    return Status(Code.ERROR, f"running PreScore plugin {q(pl.name)}: {s.message()}", plugin=pl.name), records
        finally:
            state.skip_score_plugins = skip
        return Status(), records

    def run_score(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> ScoreOutcome:
        plugins = [pl for pl in self.lists["score"] if pl.name not in state.skip_score_plugins]
        out = ScoreOutcome(Status())
        out.plugins = [pl.name for pl in plugins]
        out.weights = {pl.name: self.score_weights[pl.name] for pl in plugins}
        lists: dict[str, list[NodeScore]] = {}
        for pl in plugins:
            scores: list[NodeScore] = []
            for ni in nodes:
                v, st = pl.score(state, pod, ni)
                if not st.is_success():
                    out.status = Status(Code.ERROR, f"running Score plugins: plugin {q(pl.name)} failed with: {st.message()}")
                    return out
                scores.append(NodeScore(ni.name, int(v)))
            lists[pl.name] = scores
            out.raw[pl.name] = {s.name: s.score for s in scores}
        for pl in plugins:
            ext = pl.score_extensions()
            if ext is not None:
                st = ext.normalize_score(state, pod, lists[pl.name])
                if not st.is_success():
                    out.status = Status(
                        Code.ERROR, f"running Normalize on Score plugins: plugin {q(pl.name)} failed with: {st.message()}"
                    )
                    return out
            out.normalized[pl.name] = {s.name: s.score for s in lists[pl.name]}
        totals = {ni.name: 0 for ni in nodes}
        for pl in plugins:
            w = out.weights[pl.name]
            weighted: dict[str, int] = {}
            for s in lists[pl.name]:
                if s.score > MAX_NODE_SCORE or s.score < MIN_NODE_SCORE:
                    out.status = Status(
                        Code.ERROR,
                        f"applying score defaultWeights on Score plugins: plugin {q(pl.name)} returns an invalid score "
                        f"{s.score}, it should in the range of [{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] after normalizing",
                    )
                    return out
                weighted[s.name] = s.score * w
                totals[s.name] += s.score * w
            out.weighted[pl.name] = weighted
        out.totals = totals
        return out

    # Reserve / Permit / PreBind / Bind ----------------------------------------------------------
    def run_reserve(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status, list[PluginStatus]]:
        records: list[PluginStatus] = []
        for pl in self.lists["reserve"]:
            s = pl.reserve(state, pod, node_name)
            records.append(PluginStatus(pl.name, s))
            if not s.is_success():
                s.plugin = pl.name
                if not s.is_rejected():
                    s = Status(Code.ERROR, f"running Reserve plugin {q(pl.name)}: {s.message()}", plugin=pl.name)
                return s, records
        return Status(), records

    def run_unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        for pl in reversed(self.lists["reserve"]):
            pl.unreserve(state, pod, node_name)

    def run_permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status, list[PluginStatus]]:
        records: list[PluginStatus] = []
        waiting = False
        for pl in self.lists["permit"]:
            s, _timeout = pl.permit(state, pod, node_name)
            records.append(PluginStatus(pl.name, s))
            if s.is_success():
                continue
            if s.is_rejected():
                return s.with_plugin(pl.name), records
            if s.is_wait():
                waiting = True
                continue
            return Status(Code.ERROR, f"running Permit plugin {q(pl.name)}: {s.message()}", plugin=pl.name), records
        if waiting:
            return Status(Code.WAIT, f"one or more plugins asked to wait and no plugin rejected pod {q(pod.name)}"), records
        return Status(), records

    def run_pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status, list[PluginStatus]]:
        """PreBindPreFlight of every plugin first (``RunPreBindPreFlights``), then PreBind of those
        whose pre-flight did not Skip; an Error is wrapped as upstream words it."""
        records: list[PluginStatus] = []
        skipped: set[str] = set()
        for pl in self.lists["preBind"]:
            pre = getattr(pl, "pre_bind_pre_flight", None)
            s = pre(state, pod, node_name) if pre is not None else Status()
            if s.code == Code.ERROR:
                records.append(PluginStatus(pl.name, s))
                return Status(Code.ERROR, f"running PreBindPreFlight {q(pl.name)}: {s.message()}"), records
            if s.is_skip():
                skipped.add(pl.name)
            elif not s.is_success():
                records.append(PluginStatus(pl.name, s))
                return Status(
                    Code.ERROR,
                    f"PreBindPreFlight {pl.name} returned {q(s.code.label)}, which is unsupported. "
                    "It is supposed to return Success, Skip, or Error status",
                ), records
        for pl in self.lists["preBind"]:
            if pl.name in skipped:
                records.append(PluginStatus(pl.name, Status.skip()))
                continue
            s = pl.pre_bind(state, pod, node_name)
            records.append(PluginStatus(pl.name, s))
            if not s.is_success():
                if s.is_rejected():
                    return s.with_plugin(pl.name), records
                return Status(Code.ERROR, f"running PreBind plugin {q(pl.name)}: {s.message()}", plugin=pl.name), records
        return Status(), records

    def run_bind(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status, list[PluginStatus]]:
        records: list[PluginStatus] = []
        status = Status(Code.SKIP)
        for pl in self.lists["bind"]:
            status = pl.bind(state, pod, node_name)
            records.append(PluginStatus(pl.name, status))
            if status.is_skip():
                continue
            if not status.is_success() and not status.is_rejected():
                return Status(Code.ERROR, f"running Bind plugin {q(pl.name)}: {status.message()}", plugin=pl.name), records
            return status.with_plugin(pl.name), records
        return status, records

    def run_post_bind(self, state: CycleState, pod: Pod, node_name: str) -> list[dict[str, Any]]:
        """Every PostBind plugin in order. PostBind cannot fail upstream; a plugin may return a
        sentence saying what it did (in a dry run: would do), which is kept for the trace, and an
        exception is recorded rather than ending the cycle."""
        records: list[dict[str, Any]] = []
        for pl in self.lists["postBind"]:
            rec: dict[str, Any] = {"plugin": pl.name}
            try:
                said = pl.post_bind(state, pod, node_name)
            except Exception as e:  # PostBind has no error path upstream: show it, carry on
                rec["error"] = f"{type(e).__name__}: {e}"
            else:
                if said is not None:
                    rec["note"] = str(said)
            records.append(rec)
        return records

