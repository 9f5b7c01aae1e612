"""SchedulingGates: hold back a pod that still carries ``spec.schedulingGates``.

A gated pod never enters a scheduling cycle: PreEnqueue rejects it with
UnschedulableAndUnresolvable and a message listing the gate names the way Go
prints a string slice (``[a b]``). The plugin has no other extension point.

Upstream model: ``pkg/scheduler/framework/plugins/schedulinggates/scheduling_gates.go``.
"""

from __future__ import annotations

from kschedctl.framework.interfaces import Handle
from kschedctl.framework.status import Status
from kschedctl.snapshot.model import Pod

NAME = "SchedulingGates"


def gates_message(gates: list[str]) -> str:
    """The rejection message; ``[...]`` with space-separated names is Go's ``%v`` of a ``[]string``."""
    return f"waiting for scheduling gates: [{' '.join(gates)}]"


class SchedulingGates:
    name = NAME

    def pre_enqueue(self, pod: Pod) -> Status:
        if not pod.scheduling_gates:
            return Status()
        return Status.unresolvable(gates_message(list(pod.scheduling_gates)))


def new(args: None, handle: Handle) -> SchedulingGates:
    return SchedulingGates()
