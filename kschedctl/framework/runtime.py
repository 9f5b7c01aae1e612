"""The framework runtime: one profile's plugins, ready to run, and the Handle they are given.

A ``Framework`` is composed of parts, each in its own module:

* ``plugins`` (``framework/pluginlists.py``): the profile's plugins built from the registry and
  sorted into typed lists per extension point, with their score weights and batch paths;
* ``calls`` (``framework/plugincalls.py``): every plugin method is called through it, so that an
  exception a plugin raises becomes its Error status and is kept as a ``PluginFailure``;
* one runner per group of extension points: ``queueing`` (PreEnqueue, QueueSort, and the
  ``nominator`` of the scheduling queue, ``framework/queueing.py``), ``filtering`` (PreFilter, Filter, PostFilter,
  ``framework/filtering.py``), ``scoring`` (PreScore, Score, ``framework/scoring.py``) and
  ``binding`` (Reserve, Permit, PreBind, Bind, PostBind, ``framework/binding.py``).

The Framework itself is what a plugin's ``new(args, handle)`` receives (``interfaces.Handle``):
the snapshot, the cluster, the features, the extenders, the nominated pods that count, and the few
runs a plugin may start itself (Filter with nominated pods, the PreFilter extensions), which it hands
to ``filtering``.

Upstream model: ``pkg/scheduler/framework/runtime/framework.go``.
"""

from __future__ import annotations

from typing import Any

from kschedctl.framework.binding import BindingPoints
from kschedctl.framework.cycle_state import CycleState
from kschedctl.framework.filtering import FilterPoints
from kschedctl.framework.nodeinfos import Snapshot
from kschedctl.framework.plugincalls import PluginCalls
from kschedctl.framework.pluginlists import PluginLists
from kschedctl.framework.profile import Profile
from kschedctl.framework.queueing import Nominator, QueueingPoints
from kschedctl.framework.registry import Registry
from kschedctl.framework.resources import resize_rule
from kschedctl.framework.scoring import ScorePoints
from kschedctl.framework.status import Status
from kschedctl.framework.types import NodeInfo, PodInfo
from kschedctl.snapshot.cluster import Cluster
from kschedctl.snapshot.model import Pod


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
        if snapshot.resize_rule != resize_rule(self.features):
            raise ValueError(f"the snapshot's NodeInfos follow other rules than {self.features.release}'s "
                             "(build it with the run's features)")
        #: The configured extenders (``Handle.Extenders()``), set by the cycle that runs this framework.
        self.extenders: list[Any] = []
        #: The plugins (each built with this Framework as its handle), by name and by extension point.
        self.plugins = PluginLists(profile, registry, self)
        self.calls = PluginCalls(self.plugins.in_tree)
        self.queueing = QueueingPoints(self.plugins, self.calls)
        self.nominator = Nominator(snapshot, self.queueing, self.features)
        self.filtering = FilterPoints(self.plugins, self.calls, snapshot, self.nominator.pods_for_node)
        self.scoring = ScorePoints(self.plugins, self.calls, fast_paths)
        self.binding = BindingPoints(self.plugins, self.calls, profile.features)

    @property
    def snapshot(self) -> Snapshot:
        return self._snapshot

    @property
    def cluster(self) -> Cluster:
        return self._snapshot.cluster

    # what a plugin may run itself (``interfaces.Handle``) ---------------------------------------
    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]:
        return self.nominator.pods_for_node(node_name)

    def run_filter_plugins_with_nominated_pods(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        return self.filtering.run_filter_plugins_with_nominated_pods(state, pod, node_info)

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod: Pod, pod_info_to_add: PodInfo, node_info: NodeInfo
    ) -> Status:
        return self.filtering.run_pre_filter_extension_add_pod(state, pod, pod_info_to_add, node_info)

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod: Pod, pod_info_to_remove: PodInfo, node_info: NodeInfo
    ) -> Status:
        return self.filtering.run_pre_filter_extension_remove_pod(state, pod, pod_info_to_remove, node_info)
