"""Running the extension points of the scheduling queue: PreEnqueue (may the pod enter activeQ?) and
QueueSort (which pod comes out first?) of a profile's plugins.

Upstream model: ``pkg/scheduler/framework/runtime/framework.go`` (``RunPreEnqueuePlugins``,
``QueueSortFunc``).
"""

from __future__ import annotations

from kschedctl.framework.plugincalls import PluginCalls, as_is, check_status
from kschedctl.framework.pluginlists import PluginLists
from kschedctl.framework.status import Code, PluginStatus, Status
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
