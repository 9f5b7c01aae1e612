"""Running the extension points after a node is chosen: Reserve (and Unreserve), Permit, PreBind,
Bind and PostBind of a profile's plugins.

A dry run binds nothing: Bind and PostBind plugins say what they would do, and each ``run_*``
method returns the status the real runtime would return with the per-plugin statuses for the trace.
A Permit that waits is worded as the version words it (``kube.rules.PERMIT_WAIT_MESSAGE``).

Upstream model: ``pkg/scheduler/framework/runtime/framework.go`` (``RunReservePluginsReserve``,
``RunPermitPlugins``, ``RunPreBindPlugins``, ``RunBindPlugins``, ``RunPostBindPlugins``).
"""

from __future__ import annotations

from typing import Any

from kschedctl.framework.cycle_state import CycleState
from kschedctl.framework.plugincalls import Failed, PluginCalls, as_is, check_status, check_status_and_timeout
from kschedctl.framework.pluginlists import PluginLists
from kschedctl.framework.status import Code, PluginStatus, Status, quote_name
from kschedctl.kube.features import Features
from kschedctl.kube.rules import PERMIT_WAIT_MESSAGE
from kschedctl.snapshot.model import Pod

#: What ``RunPermitPlugins`` says when a plugin asked the pod to wait and none rejected it.
PERMIT_WAITS = "one or more plugins asked to wait and no plugin rejected pod"


class BindingPoints:
    """Reserve, Permit, PreBind, Bind and PostBind of one profile's plugins."""

    def __init__(self, plugins: PluginLists, calls: PluginCalls, features: Features) -> None:
        self.plugins = plugins
        self.calls = calls
        self.features = features

    def run_reserve(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status, list[PluginStatus]]:
        records: list[PluginStatus] = []
        for pl in self.plugins.reserve_plugins:
            s = self.calls.call(pl, "Reserve", node_name, check_status, as_is, pl.reserve, state, pod, node_name)
            records.append(PluginStatus(pl.name, s))
            if not s.is_success():
                s.plugin = pl.name
                if not s.is_rejected():
                    s = Status(Code.ERROR, f"running Reserve plugin {quote_name(pl.name)}: {s.message()}", plugin=pl.name)
                return s, records
        return Status(), records

    def run_unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """Unreserve in reverse order; it cannot fail upstream, so an exception is only recorded."""
        for pl in reversed(self.plugins.reserve_plugins):
            self.calls.call(pl, "Unreserve", node_name, as_is, as_is, pl.unreserve, state, pod, node_name)

    def run_permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status, list[PluginStatus]]:
        records: list[PluginStatus] = []
        waiting: Status | None = None
        for pl in self.plugins.permit_plugins:
            s, _timeout = self.calls.call(
                pl, "Permit", node_name, check_status_and_timeout, lambda st: (st, 0.0), pl.permit, state, pod, node_name
            )
            records.append(PluginStatus(pl.name, s))
            if s.is_success():
                continue
            if s.is_rejected():
                return s.with_plugin(pl.name), records
            if s.is_wait():
                waiting = s
                continue
            return Status(Code.ERROR, f"running Permit plugin {quote_name(pl.name)}: {s.message()}", plugin=pl.name), records
        if waiting is None:
            return Status(), records
        if self.features.follows(PERMIT_WAIT_MESSAGE):  # the last waiting plugin's reasons, then the runtime's
            return Status(Code.WAIT, *waiting.reasons, PERMIT_WAITS), records
        return Status(Code.WAIT, f"{PERMIT_WAITS} {quote_name(pod.name)}"), records

    def run_pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status, list[PluginStatus]]:
        """PreBindPreFlight of every plugin first (``RunPreBindPreFlights``), then PreBind of those
        whose pre-flight did not Skip; an Error is wrapped as upstream words it."""
        records: list[PluginStatus] = []
        skipped: set[str] = set()
        for pl in self.plugins.pre_bind_plugins:
            pre = getattr(pl, "pre_bind_pre_flight", None)
            s = Status()
            if pre is not None:
                s = self.calls.call(pl, "PreBindPreFlight", node_name, check_status, as_is, pre, state, pod, node_name)
            if s.code == Code.ERROR:
                records.append(PluginStatus(pl.name, s))
                return Status(Code.ERROR, f"running PreBindPreFlight {quote_name(pl.name)}: {s.message()}"), records
            if s.is_skip():
                skipped.add(pl.name)
            elif not s.is_success():
                records.append(PluginStatus(pl.name, s))
                return Status(
                    Code.ERROR,
                    f"PreBindPreFlight {pl.name} returned {quote_name(s.code.label)}, which is unsupported. "
                    "It is supposed to return Success, Skip, or Error status",
                ), records
        for pl in self.plugins.pre_bind_plugins:
            if pl.name in skipped:
                records.append(PluginStatus(pl.name, Status.skip()))
                continue
            s = self.calls.call(pl, "PreBind", node_name, check_status, as_is, pl.pre_bind, state, pod, node_name)
            records.append(PluginStatus(pl.name, s))
            if not s.is_success():
                if s.is_rejected():
                    return s.with_plugin(pl.name), records
                return Status(Code.ERROR, f"running PreBind plugin {quote_name(pl.name)}: {s.message()}", plugin=pl.name), records
        return Status(), records

    def run_bind(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status, list[PluginStatus]]:
        """Bind plugins in order until one does not return Skip."""
        records: list[PluginStatus] = []
        status = Status(Code.SKIP)
        for pl in self.plugins.bind_plugins:
            status = self.calls.call(pl, "Bind", node_name, check_status, as_is, pl.bind, state, pod, node_name)
            records.append(PluginStatus(pl.name, status))
            if status.is_skip():
                continue
            if not status.is_success() and not status.is_rejected():
                msg = f"running Bind plugin {quote_name(pl.name)}: {status.message()}"
                return Status(Code.ERROR, msg, plugin=pl.name), records
            return status.with_plugin(pl.name), records
        return status, records

    def run_post_bind(self, state: CycleState, pod: Pod, node_name: str) -> list[dict[str, Any]]:
        """Every PostBind plugin in order. PostBind cannot fail upstream; a plugin may return a
        sentence saying what it did (in a dry run: would do), which is kept for the trace, and an
        exception is recorded rather than ending the cycle."""
        records: list[dict[str, Any]] = []
        for pl in self.plugins.post_bind_plugins:
            rec: dict[str, Any] = {"plugin": pl.name}
            said = self.calls.call(pl, "PostBind", node_name, as_is, Failed, pl.post_bind, state, pod, node_name)
            if isinstance(said, Failed):  # it raised
                rec["error"] = said.status.message()
            elif said is not None:
                rec["note"] = str(said)
            records.append(rec)
        return records
