"""The framework runtime: builds a profile's plugin lists and runs extension points.

This follows kube-scheduler's ``frameworkImpl``: explicit extension-point lists
first, then MultiPoint expansion with its precedence rules; one queue-sort
plugin; at least one bind plugin; score weights from the Score list, then
MultiPoint, 1 when unset. Each ``run_*`` method returns what the real runtime
returns *and* the per-plugin statuses, so the explain trace can show every step.

Every plugin method is called through ``Framework._call``: an exception a plugin raises
(or a result of the wrong type) becomes that plugin's Error status at that extension point,
exactly as if a Go plugin had returned the error, and then takes the path such a status takes
upstream, with upstream's wrapping (``running Score plugins: plugin "X" failed with: ...``).
The exception itself is kept as a ``PluginFailure`` (``framework/failures.py``) for the trace's
notes and for ``--debug``.

The plugin lists are typed by extension point (``filter_plugins: list[FilterPlugin]``, ...), and
which plugins also implement the optional batch protocols of ``framework/interfaces.py``
(``filter_nodes``, ``score_nodes``, ``normalize_scores``) is decided once, when the Framework is
built (``filter_paths``, ``score_paths``). With ``fast_paths`` the Filter and Score points run
through them over node lists; the per-node path stays the reference, taken when ``fast_paths`` is
off and whenever a batch call meets something only the per-node path reports exactly.

Upstream model: ``pkg/scheduler/framework/runtime/framework.go``.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

from kschedctl.errors import ConfigError
from kschedctl.framework import failures
from kschedctl.framework.cycle_state import CycleState
from kschedctl.framework.interfaces import (
    BatchFilterPlugin,
    BatchScoreExtensions,
    BatchScorePlugin,
    BindPlugin,
    FilterPlugin,
    NodeScore,
    NodeToStatus,
    PermitPlugin,
    Plugin,
    PostBindPlugin,
    PostFilterPlugin,
    PostFilterResult,
    PreBindPlugin,
    PreEnqueuePlugin,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    QueueSortPlugin,
    ReservePlugin,
    ScoreExtensions,
    ScorePlugin,
    implements,
)
from kschedctl.framework.nodeinfos import Snapshot
from kschedctl.framework.profile import EXTENSION_INTERFACES, PLACEMENT_EXTENSION_POINTS, Profile
from kschedctl.framework.registry import Registry, plugin_args
from kschedctl.framework.status import MAX_NODE_SCORE, MAX_TOTAL_SCORE, MIN_NODE_SCORE, Code, Status
from kschedctl.framework.types import NodeInfo, PodInfo
from kschedctl.kube.rules import POD_GROUP_CYCLE
from kschedctl.snapshot.cluster import Cluster
from kschedctl.snapshot.model import Pod

T = TypeVar("T")


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
    #: The whole-list path's scores as lists over ``names`` (raw, normalized, weighted), per plugin, instead
    #: of the dicts above: who needs a plugin's scores by node makes the dicts (``explain.trace.PluginScores``).
    names: list[str] = field(default_factory=list)
    columns: dict[str, tuple[list[int], list[int], list[int]]] = field(default_factory=dict)
    totals: dict[str, int] = field(default_factory=dict)
    #: When a score was out of range: which plugin gave it to which node (upstream's message names neither node nor raw value).
    detail: str | None = None


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


def _status(result: Any) -> Status:
    if not isinstance(result, Status):
        raise TypeError(f"returned {result!r}, not a Status")
    return result


def _result_and_status(result: Any) -> Any:
    if not (isinstance(result, tuple) and len(result) == 2 and isinstance(result[1], Status)):
        raise TypeError(f"returned {result!r}, not a (result, Status) pair")
    return result


def _score_and_status(result: Any) -> tuple[int, Status]:
    _result_and_status(result)
    try:
        return operator.index(result[0]), result[1]
    except TypeError:
        raise TypeError(f"returned the score {result[0]!r}, not an integer") from None


def _status_and_timeout(result: Any) -> Any:
    if not (isinstance(result, tuple) and len(result) == 2 and isinstance(result[0], Status)):
        raise TypeError(f"returned {result!r}, not a (Status, timeout) pair")
    return result


def _as_is(result: Any) -> Any:
    return result


@dataclass(frozen=True, slots=True)
class _Failed:
    """What ``_call`` returns for a method whose result is not a Status when the plugin raised."""

    status: Status


def _pair(st: Status) -> tuple[None, Status]:
    return None, st


def _zero_score(st: Status) -> tuple[int, Status]:
    return 0, st


#: A Filter plugin's whole-list filter: ``BatchFilterPlugin.filter_nodes``.
FilterNodes = Callable[[CycleState, Pod, list[NodeInfo]], list[Status | None]]


@dataclass(frozen=True, slots=True)
class ScorePath:
    """How the whole-list Score path runs one Score plugin, decided when the Framework is built."""

    plugin: ScorePlugin
    #: ``BatchScorePlugin.score_nodes``, or None: ``score`` node by node.
    score_nodes: Callable[[CycleState, Pod, list[NodeInfo]], tuple[list[int], Status]] | None
    #: The plugin's ScoreExtensions when it normalizes plain lists (``BatchScoreExtensions``); used
    #: while ``score_extensions()`` still returns that object, else ``normalize_score`` on NodeScores.
    batch_ext: BatchScoreExtensions | None


def _batch_extensions(pl: ScorePlugin) -> BatchScoreExtensions | None:
    try:
        ext = pl.score_extensions()
    except Exception:  # the per-node path reports it when a cycle calls it
        return None
    return ext if isinstance(ext, BatchScoreExtensions) else None


class Framework:
    """A profile's plugins, ready to run (``framework.Framework`` / ``fwk.Handle``)."""

    def __init__(self, profile: Profile, registry: Registry, snapshot: Snapshot, *, fast_paths: bool = True) -> None:
        self.profile = profile
        self.profile_name = profile.scheduler_name
        self.percentage_of_nodes_to_score = profile.percentage_of_nodes_to_score
        self._snapshot = snapshot
        #: Let plugins work on whole node lists (``filter_nodes``, ``score_nodes``, ``normalize_scores``
        #: and their indexed PreFilter/PreScore) where they can; False runs the reference path, every
        #: plugin node by node. Both give the same trace (tests/test_fast_paths.py).
        self.fast_paths = fast_paths
        #: The Kubernetes version and feature gates the plugins follow (``Handle.features``).
        self.features = profile.features
        #: The configured extenders (``Handle.Extenders()``), set by the cycle that runs this framework.
        self.extenders: list[Any] = []
        plugins = profile.plugins
        needed: list[str] = []
        for ps in plugins.sets.values():
            for ref in ps.enabled:
                if ref.name not in needed:
                    needed.append(ref.name)
        self.plugins_map: dict[str, Plugin] = {}
        #: Exceptions plugins raised (turned into Error statuses), oldest first; the cycle takes them.
        self.failures: list[failures.PluginFailure] = []
        self._in_tree: set[str] = set()
        for name in needed:
            entry = registry.get(name)
            if entry is None:
                continue  # reported below as "does not exist" where it is used
            if entry.source == "in-tree":
                self._in_tree.add(name)
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
        self.lists: dict[str, list[Plugin]] = {ep: [] for ep in PLACEMENT_EXTENSION_POINTS}
        # the placement extension points exist from v1.36 (getExtensionPoints lists them last)
        interfaces = [(ep, i) for ep, i in EXTENSION_INTERFACES if self.features.follows(POD_GROUP_CYCLE) or ep not in self.lists]
        for ep, iface in interfaces:
            self.lists[ep] = self._explicit_list(ep, iface)
        if plugins["multiPoint"].enabled:
            for ep, iface in interfaces:
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
        self._type_lists()
        self.placement_score_weights = self._placement_score_weights() if self.features.follows(POD_GROUP_CYCLE) else {}

    def _placement_score_weights(self) -> dict[str, int]:
        """v1.36's checks of the pod-group extension points: one generator at most, and the
        PlacementScore weights (validated apart from the Score ones)."""
        if len(self.lists["placementGenerate"]) > 1:
            raise ConfigError(
                f"at most one placement generate plugin is allowed for profile with scheduler name {q(self.profile_name)}"
            )
        weights: dict[str, int] = {}
        total = 0
        plugins = self.profile.plugins
        for ref in plugins["placementScore"].enabled + plugins["multiPoint"].enabled:
            pl = self.plugins_map.get(ref.name)
            if pl is None or not implements(pl, "placementScore") or ref.name in weights:
                continue
            weights[ref.name] = w = ref.weight or 1
            if w * MAX_NODE_SCORE > MAX_TOTAL_SCORE - total:
                raise ConfigError("placement score plugins: total score of Score plugins could overflow")
            total += w * MAX_NODE_SCORE
        for pl in self.lists["placementScore"]:
            if weights.get(pl.name, 0) == 0:
                raise ConfigError(f"placement score plugin {q(pl.name)} is not configured with weight")
        return weights

    # construction helpers ---------------------------------------------------------------
    def _type_lists(self) -> None:
        """The lists by extension point, typed (each holds only plugins that implement its method,
        checked by ``_explicit_list`` / ``_expand_multipoint``), and the path each Filter and Score
        plugin takes on the fast path: decided here, once per plugin."""
        lists = self.lists
        self.pre_enqueue_plugins = cast("list[PreEnqueuePlugin]", lists["preEnqueue"])
        self.queue_sort_plugins = cast("list[QueueSortPlugin]", lists["queueSort"])
        self.pre_filter_plugins = cast("list[PreFilterPlugin]", lists["preFilter"])
        self.filter_plugins = cast("list[FilterPlugin]", lists["filter"])
        self.post_filter_plugins = cast("list[PostFilterPlugin]", lists["postFilter"])
        self.pre_score_plugins = cast("list[PreScorePlugin]", lists["preScore"])
        self.score_plugins = cast("list[ScorePlugin]", lists["score"])
        self.reserve_plugins = cast("list[ReservePlugin]", lists["reserve"])
        self.permit_plugins = cast("list[PermitPlugin]", lists["permit"])
        self.pre_bind_plugins = cast("list[PreBindPlugin]", lists["preBind"])
        self.bind_plugins = cast("list[BindPlugin]", lists["bind"])
        self.post_bind_plugins = cast("list[PostBindPlugin]", lists["postBind"])
        #: Filter plugins with their ``filter_nodes`` (None: ``filter`` node by node).
        self.filter_paths: list[tuple[FilterPlugin, FilterNodes | None]] = [
            (pl, pl.filter_nodes if isinstance(pl, BatchFilterPlugin) else None) for pl in self.filter_plugins
        ]
        self._unbatched_filters = frozenset(pl.name for pl, batch in self.filter_paths if batch is None)
        self.score_paths: list[ScorePath] = [
            ScorePath(pl, pl.score_nodes if isinstance(pl, BatchScorePlugin) else None, _batch_extensions(pl))
            for pl in self.score_plugins
        ]

    def _explicit_list(self, ep: str, iface: str) -> list[Plugin]:
        out: list[Plugin] = []
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

    # calling plugins ------------------------------------------------------------------------
    def _call(
        self,
        pl: Plugin,
        point: str,
        node: str | None,
        check: Callable[[Any], T],
        on_error: Callable[[Status], T],
        method: Callable[..., Any],
        *args: Any,
    ) -> T:
        """Call one plugin method; ``check`` validates (and returns) its result. An exception (or a
        result ``check`` rejects) becomes the plugin's Error status, passed to ``on_error``."""
        try:
            return check(method(*args))
        except Exception as e:
            failure = failures.PluginFailure.of(pl.name, point, node, e, in_tree=pl.name in self._in_tree)
            self.failures.append(failure)
            failures.report(failure)
            return on_error(Status(Code.ERROR, failure.exception, plugin=pl.name, error=failure.exception))

    def take_failures(self) -> list[failures.PluginFailure]:
        """The exceptions recorded since the last call (a cycle's), and forget them."""
        out, self.failures = self.failures, []
        return out

    # Handle -----------------------------------------------------------------------------
    @property
    def snapshot(self) -> Snapshot:
        return self._snapshot

    @property
    def cluster(self) -> Cluster:
        return self._snapshot.cluster

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
        for pl in self.pre_enqueue_plugins:
            st = self._call(pl, "PreEnqueue", None, _status, _as_is, pl.pre_enqueue, pod)
            if not st.is_success():
                st.plugin = pl.name
                if not st.is_rejected():
                    st = Status(Code.ERROR, *st.reasons, plugin=pl.name)
                out.append(PluginStatus(pl.name, st))
                break
            out.append(PluginStatus(pl.name, st))
        return out

    def queue_sort_less(self, a: Pod, b: Pod) -> bool:
        """``Less`` of the profile's QueueSort plugin. It has no error path upstream: a plugin that
        raises is recorded in ``failures`` and the pair counts as not ordered."""
        pl = self.queue_sort_plugins[0]
        return self._call(pl, "QueueSort", None, bool, lambda st: False, pl.less, a, b)

    # PreFilter ---------------------------------------------------------------------------
    def run_pre_filter(self, state: CycleState, pod: Pod) -> PreFilterOutcome:
        nodes = self._snapshot.node_info_list
        records: list[PluginStatus] = []
        skip: set[str] = set()
        result: PreFilterResult | None = None
        with_nodes: list[str] = []
        return_status = Status()
        try:
            for pl in self.pre_filter_plugins:
                r, s = self._call(pl, "PreFilter", None, _result_and_status, _pair, pl.pre_filter, state, pod, nodes)
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
        for pl in self.pre_filter_plugins:
            if pl.name in state.skip_filter_plugins:
                continue
            ext = self._call(pl, which, node_info.name, _as_is, _Failed, pl.pre_filter_extensions)
            if ext is None:
                continue
            if isinstance(ext, _Failed):  # pre_filter_extensions() itself raised
                st = ext.status
            else:
                call = ext.add_pod if which == "AddPod" else ext.remove_pod
                st = self._call(pl, which, node_info.name, _status, _as_is, call, state, pod, other, node_info)
            if not st.is_success():
                return Status(Code.ERROR, f"running {which} on PreFilter plugin {q(pl.name)}: {st.message()}")
        return Status()

    # Filter ------------------------------------------------------------------------------
    def run_filter_plugins(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        skip = state.skip_filter_plugins
        for pl in self.filter_plugins:
            if pl.name in skip:
                continue
            st = self.run_filter_plugin(pl, state, pod, node_info)
            if not st.is_success():
                if not st.is_rejected():
                    # reasons: what the plugin returned (the node's Filter verdict);
                    # error: the framework's wrapped error, which ends the cycle
                    st = Status(Code.ERROR, *st.reasons, error=f"running {q(pl.name)} filter plugin: {st.message()}")
                st.plugin = pl.name
                return st
        return Status()

    def has_nominated_pods(self, node_info: NodeInfo) -> bool:
        return bool(self._snapshot.nominated_pods_for_node(node_info.name))

    def all_filters_batched(self, state: CycleState) -> bool:
        """Every Filter plugin that runs in this cycle has ``filter_nodes``."""
        return self._unbatched_filters <= state.skip_filter_plugins

    def run_filter_plugins_for_nodes(
        self, state: CycleState, pod: Pod, nodes: list[NodeInfo]
    ) -> list[Status | None] | None:
        """``run_filter_plugins`` for a list of nodes without nominated pods: the same status for each
        (None for Success, which the caller makes a ``Status()`` of when it keeps one).

        Plugins run one after another over the nodes not rejected yet, through their
        ``filter_nodes`` when they have one (``filter_paths``; their ``filter`` node by node otherwise). Filters must
        not depend on the order in which nodes are filtered (upstream runs them in parallel), so
        the verdicts are the node-by-node loop's. Only the ordinary case is handled here: when a
        plugin raises, returns something else than a Success or a rejection, or a batch answer
        has the wrong length, the result is None and the caller takes the reference path, which
        reports that exactly (where, on which node, with which wording).
        """
        out: list[Status | None] = [None] * len(nodes)
        alive = list(range(len(nodes)))
        skip = state.skip_filter_plugins
        try:
            for pl, batch in self.filter_paths:
                if not alive:
                    break
                if pl.name in skip:
                    continue
                sub = nodes if len(alive) == len(nodes) else [nodes[i] for i in alive]
                if batch is not None:
                    statuses = batch(state, pod, sub)  # None stands for Success
                else:
                    statuses = [pl.filter(state, pod, ni) for ni in sub]
                    if None in statuses:  # not a Status: a bug the reference path reports
                        return None
                if len(statuses) != len(sub):
                    return None
                if statuses.count(None) == len(statuses):
                    continue  # every node passed
                still: list[int] = []
                for i, st in zip(alive, statuses, strict=True):
                    if st is None or (type(st) is Status and st.code == Code.SUCCESS):
                        still.append(i)
                    elif type(st) is Status and st.is_rejected():
                        st.plugin = pl.name
                        out[i] = st
                    else:
                        return None
                alive = still
        except Exception:  # the reference path reports it against the right node
            return None
        return out  # the nodes still alive passed every plugin: None

    def run_filter_plugin(self, pl: FilterPlugin, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        """One Filter plugin on one node, its status as returned (an exception: its Error status)."""
        return self._call(pl, "Filter", node_info.name, _status, _as_is, pl.filter, state, pod, node_info)

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
        for pl in self.post_filter_plugins:
            r, s = self._call(pl, "PostFilter", None, _result_and_status, _pair, pl.post_filter, state, pod, filtered)
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
            for pl in self.pre_score_plugins:
                s = self._call(pl, "PreScore", None, _status, _as_is, pl.pre_score, state, pod, nodes)
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
        """Score, NormalizeScore and weights. Like upstream's per-node loop, each node is scored by
        every plugin in order and the first failure ends the point; the raw (and normalized)
        scores returned until then stay in the outcome for the trace."""
        if self.fast_paths:
            fast = self._run_score_lists(state, pod, nodes)
            if fast is not None:
                return fast
        plugins = [pl for pl in self.score_plugins if pl.name not in state.skip_score_plugins]
        out = ScoreOutcome(Status())
        out.plugins = [pl.name for pl in plugins]
        out.weights = {pl.name: self.score_weights[pl.name] for pl in plugins}
        lists: dict[str, list[NodeScore]] = {pl.name: [] for pl in plugins}
        for ni in nodes:
            for pl in plugins:
                v, st = self._call(pl, "Score", ni.name, _score_and_status, _zero_score, pl.score, state, pod, ni)
                if not st.is_success():
                    msg = f"running Score plugins: plugin {q(pl.name)} failed with: {st.message()}"
                    out.status = Status(Code.ERROR, msg, plugin=pl.name)
                    return out
                lists[pl.name].append(NodeScore(ni.name, v))
                out.raw.setdefault(pl.name, {})[ni.name] = v
        for pl in plugins:
            ext: ScoreExtensions | _Failed | None = self._call(
                pl, "NormalizeScore", None, _as_is, _Failed, pl.score_extensions
            )
            st = ext.status if isinstance(ext, _Failed) else Status()
            if ext is not None and not isinstance(ext, _Failed):
                st = self._call(pl, "NormalizeScore", None, _status, _as_is, ext.normalize_score, state, pod, lists[pl.name])
            if not st.is_success():
                msg = f"running Normalize on Score plugins: plugin {q(pl.name)} failed with: {st.message()}"
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
                        f"applying score defaultWeights on Score plugins: plugin {q(pl.name)} returns an invalid score "
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
        paths = [p for p in self.score_paths if p.plugin.name not in skip]
        out = ScoreOutcome(Status())
        out.plugins = [p.plugin.name for p in paths]
        out.weights = {name: self.score_weights[name] for name in out.plugins}
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

    # Reserve / Permit / PreBind / Bind ----------------------------------------------------------
    def run_reserve(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status, list[PluginStatus]]:
        records: list[PluginStatus] = []
        for pl in self.reserve_plugins:
            s = self._call(pl, "Reserve", node_name, _status, _as_is, pl.reserve, state, pod, node_name)
            records.append(PluginStatus(pl.name, s))
            if not s.is_success():
                s.plugin = pl.name
                if not s.is_rejected():
                    s = Status(Code.ERROR, f"running Reserve plugin {q(pl.name)}: {s.message()}", plugin=pl.name)
                return s, records
        return Status(), records

    def run_unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """Unreserve in reverse order; it cannot fail upstream, so an exception is only recorded."""
        for pl in reversed(self.reserve_plugins):
            self._call(pl, "Unreserve", node_name, _as_is, _as_is, pl.unreserve, state, pod, node_name)

    def run_permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status, list[PluginStatus]]:
        records: list[PluginStatus] = []
        waiting = False
        for pl in self.permit_plugins:
            s, _timeout = self._call(
                pl, "Permit", node_name, _status_and_timeout, lambda st: (st, 0.0), pl.permit, state, pod, node_name
            )
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
        for pl in self.pre_bind_plugins:
            pre = getattr(pl, "pre_bind_pre_flight", None)
            s = Status()
            if pre is not None:
                s = self._call(pl, "PreBindPreFlight", node_name, _status, _as_is, pre, state, pod, node_name)
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
        for pl in self.pre_bind_plugins:
            if pl.name in skipped:
                records.append(PluginStatus(pl.name, Status.skip()))
                continue
            s = self._call(pl, "PreBind", node_name, _status, _as_is, pl.pre_bind, state, pod, node_name)
            records.append(PluginStatus(pl.name, s))
            if not s.is_success():
                if s.is_rejected():
                    return s.with_plugin(pl.name), records
                return Status(Code.ERROR, f"running PreBind plugin {q(pl.name)}: {s.message()}", plugin=pl.name), records
        return Status(), records

    def run_bind(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status, list[PluginStatus]]:
        """Bind plugins in order until one does not return Skip."""
        records: list[PluginStatus] = []
        status = Status(Code.SKIP)
        for pl in self.bind_plugins:
            status = self._call(pl, "Bind", node_name, _status, _as_is, pl.bind, state, pod, node_name)
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
        for pl in self.post_bind_plugins:
            rec: dict[str, Any] = {"plugin": pl.name}
            said = self._call(pl, "PostBind", node_name, _as_is, _Failed, pl.post_bind, state, pod, node_name)
            if isinstance(said, _Failed):  # it raised
                rec["error"] = said.status.message()
            elif said is not None:
                rec["note"] = str(said)
            records.append(rec)
        return records


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
