"""Running the filtering extension points of a profile: PreFilter (and its AddPod/RemovePod
extensions), Filter, and PostFilter.

Each ``run_*`` method returns what the real runtime returns *and* the per-plugin statuses, so
the explain trace can show every step. Filter has two paths: the per-node path
(``run_filter_plugins``) is the reference; ``run_filter_plugins_for_nodes`` runs the plugins over
node lists, through their ``filter_nodes`` where they have one (``PluginLists.filter_paths``), and
declines (None) whenever it meets something only the per-node path reports exactly.

Upstream model: ``pkg/scheduler/framework/runtime/framework.go`` (``RunPreFilterPlugins``,
``RunFilterPlugins``, ``RunFilterPluginsWithNominatedPods``, ``RunPostFilterPlugins``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from kschedctl.framework.cycle_state import CycleState
from kschedctl.framework.interfaces import FilterPlugin, NodeToStatus, PostFilterResult, PreFilterResult
from kschedctl.framework.nodeinfos import Snapshot
from kschedctl.framework.plugincalls import (
    Failed,
    PluginCalls,
    as_is,
    check_result_and_status,
    check_status,
    no_result,
)
from kschedctl.framework.pluginlists import PluginLists
from kschedctl.framework.status import REJECTED_CODES, Code, PluginStatus, Status, quote_name
from kschedctl.framework.types import NodeInfo, PodInfo
from kschedctl.snapshot.model import Pod


@dataclass
class PreFilterOutcome:
    result: PreFilterResult | None
    status: Status
    records: list[PluginStatus]
    #: Plugins that returned a node set (or rejected): FitError's "didn't satisfy plugin(s)".
    unschedulable_plugins: set[str]


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


class FilterPoints:
    """PreFilter, Filter and PostFilter of one profile's plugins, over one snapshot."""

    def __init__(
        self, plugins: PluginLists, calls: PluginCalls, snapshot: Snapshot, nominated: Callable[[str], list[PodInfo]]
    ) -> None:
        """``nominated``: the pods nominated to a node whose nomination counts (the queue's nominator)."""
        self.plugins = plugins
        self.calls = calls
        self.snapshot = snapshot
        self.nominated = nominated

    # PreFilter ---------------------------------------------------------------------------
    def run_pre_filter(self, state: CycleState, pod: Pod) -> PreFilterOutcome:
        nodes = self.snapshot.node_info_list
        records: list[PluginStatus] = []
        skip: set[str] = set()
        result: PreFilterResult | None = None
        with_nodes: list[str] = []
        return_status = Status()
        try:
            for pl in self.plugins.pre_filter_plugins:
                r, s = self.calls.call(
                    pl, "PreFilter", None, check_result_and_status, no_result, pl.pre_filter, state, pod, nodes
                )
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
                    err = Status(Code.ERROR, f"running PreFilter plugin {quote_name(pl.name)}: {s.message()}", plugin=pl.name)
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
        for pl in self.plugins.pre_filter_plugins:
            if pl.name in state.skip_filter_plugins:
                continue
            ext = self.calls.call(pl, which, node_info.name, as_is, Failed, pl.pre_filter_extensions)
            if ext is None:
                continue
            if isinstance(ext, Failed):  # pre_filter_extensions() itself raised
                st = ext.status
            else:
                call = ext.add_pod if which == "AddPod" else ext.remove_pod
                st = self.calls.call(pl, which, node_info.name, check_status, as_is, call, state, pod, other, node_info)
            if not st.is_success():
                return Status(Code.ERROR, f"running {which} on PreFilter plugin {quote_name(pl.name)}: {st.message()}")
        return Status()

    # Filter ------------------------------------------------------------------------------
    def run_filter_plugins(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        skip = state.skip_filter_plugins
        for pl in self.plugins.filter_plugins:
            if pl.name in skip:
                continue
            st = self.run_filter_plugin(pl, state, pod, node_info)
            if not st.is_success():
                if not st.is_rejected():
                    # reasons: what the plugin returned (the node's Filter verdict);
                    # error: the framework's wrapped error, which ends the cycle
                    st = Status(Code.ERROR, *st.reasons, error=f"running {quote_name(pl.name)} filter plugin: {st.message()}")
                st.plugin = pl.name
                return st
        return Status()

    def has_nominated_pods(self, node_info: NodeInfo) -> bool:
        return bool(self.nominated(node_info.name))

    def all_filters_batched(self, state: CycleState) -> bool:
        """Every Filter plugin that runs in this cycle has ``filter_nodes``."""
        return self.plugins.unbatched_filters <= state.skip_filter_plugins

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
            for pl, batch in self.plugins.filter_paths:
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
                    elif type(st) is Status and st.code in REJECTED_CODES:
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
        return self.calls.call(pl, "Filter", node_info.name, check_status, as_is, pl.filter, state, pod, node_info)

    def run_filter_plugins_with_nominated_pods(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        """Filters with equal-or-higher priority nominated pods added, then (if that passed) without."""
        nominated = self.nominated(node_info.name)
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
        for pl in self.plugins.post_filter_plugins:
            r, s = self.calls.call(
                pl, "PostFilter", None, check_result_and_status, no_result, pl.post_filter, state, pod, filtered
            )
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
