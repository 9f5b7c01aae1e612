"""Running the extension points of the scheduling queue: PreEnqueue (may the pod enter activeQ?) and
QueueSort (which pod comes out first?) of a profile's plugins; and the queue's nominator (which
nominated pods reserve their node's space).

Upstream model: ``pkg/scheduler/framework/runtime/framework.go`` (``RunPreEnqueuePlugins``,
``QueueSortFunc``) and ``pkg/scheduler/backend/queue/nominator.go``.
"""

from __future__ import annotations

from kschedctl.framework.nodeinfos import Snapshot
from kschedctl.framework.plugincalls import PluginCalls, as_is, check_status
from kschedctl.framework.pluginlists import PluginLists
from kschedctl.framework.status import Code, PluginStatus, Status
from kschedctl.framework.types import PodInfo
from kschedctl.kube.features import Features
from kschedctl.kube.rules import GATED_PODS_NOMINATED
from kschedctl.snapshot.model import Pod


class QueueingPoints:
    """PreEnqueue and QueueSort of one profile's plugins."""

    def __init__(self, plugins: PluginLists, calls: PluginCalls) -> None:
        self.plugins = plugins
        self.calls = calls

    def run_pre_enqueue(self, pod: Pod) -> list[PluginStatus]:
        """Profile order, stopping at the first plugin that does not return Success."""
        out: list[PluginStatus] = []
        for pl in self.plugins.pre_enqueue_plugins:
            st = self.calls.call(pl, "PreEnqueue", None, check_status, as_is, pl.pre_enqueue, pod)
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
        raises is recorded in the calls' ``failures`` and the pair counts as not ordered."""
        pl = self.plugins.queue_sort_plugins[0]
        return self.calls.call(pl, "QueueSort", None, bool, lambda st: False, pl.less, a, b)


class Nominator:
    """The scheduling queue's nominator (``NominatedPodsForNode``): the pods nominated to a node whose
    nomination reserves its space. The snapshot holds every unbound pod with a nominated node; from
    v1.37 the queue stores each one's nomination before PreEnqueue, but up to v1.36 a pod the queue
    kept out at PreEnqueue (a gated pod) never reached the nominator, so it reserved nothing. Such a
    pod's PreEnqueue is asked of this profile's plugins."""

    def __init__(self, snapshot: Snapshot, queueing: QueueingPoints, features: Features) -> None:
        self.snapshot = snapshot
        self.queueing = queueing
        self.gated_count = features.follows(GATED_PODS_NOMINATED)

    def pods_for_node(self, node_name: str) -> list[PodInfo]:
        pods = self.snapshot.nominated_pods_for_node(node_name)
        if not pods or self.gated_count:
            return pods
        return [pi for pi in pods if not self._kept_out(pi.pod)]

    def _kept_out(self, pod: Pod) -> bool:
        statuses = self.queueing.run_pre_enqueue(pod)
        return bool(statuses) and not statuses[-1].status.is_success()
