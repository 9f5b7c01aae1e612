"""GangScheduling (v1.35/v1.36, alpha): a gang's pods wait for each other.

Upstream: ``pkg/scheduler/framework/plugins/gangscheduling/gangscheduling.go``. The plugin only
concerns pods that name a PodGroup (``spec.schedulingGroup.podGroupName``) whose policy is
``gang``:

* PreEnqueue keeps such a pod out of the active queue until its PodGroup exists, and until the
  group has at least ``minCount`` pods (UnschedulableAndUnresolvable);
* Permit makes the pod Wait (five minutes at most) while fewer than ``minCount`` pods of the
  group are scheduled (assigned or assumed); the pod that completes the quorum passes and, upstream,
  allows the waiting ones and activates the group's unscheduled pods (nothing waits in a dry run).

It is in the default plugins only with the ``GangScheduling`` gate on (off in v1.35 and v1.36), and
in v1.37, which has no such gate, only with ``GenericWorkload`` on (off).
The group state is ``framework.podgroups.group_state``: every pod of the group the cache knows
(the cluster's, and those created since, which kube-scheduler has in its queue as well: a
simulation's other pods, the other pods of an ``explain`` file) plus, in a pod-group cycle, the
group's pods the cycle assumed in the snapshot, as upstream reads the snapshot's copy then.
"""

from __future__ import annotations

from kschedctl.framework.cycle_state import CycleState
from kschedctl.framework.interfaces import Handle
from kschedctl.framework.podgroups import PodGroupState, find_pod_group, group_state, pod_group_name
from kschedctl.framework.status import Code, Status
from kschedctl.snapshot.model import Pod

NAME = "GangScheduling"

#: Permit's wait limit (``permitTimeoutDuration``).
PERMIT_TIMEOUT_SECONDS = 300.0

WAITING_FOR_MIN_COUNT = "waiting for minCount pods from a gang to appear in scheduling queue"
WAITING_FOR_QUORUM = "waiting for minCount pods from a gang to be scheduled"


def waiting_for_group(group: str) -> str:
    return f'waiting for pods\'s pod group "{group}" to appear in scheduling queue'


class GangScheduling:
    """The GangScheduling plugin (PreEnqueue, Permit)."""

    name = NAME

    def __init__(self, handle: Handle) -> None:
        self.handle = handle

    def _state(self, pod: Pod, group: str) -> PodGroupState:
        """The group's state as the cache (or, in a pod-group cycle, the snapshot) has it, the pod itself included."""
        return group_state(self.handle.snapshot, pod.namespace, group, pod)

    def pre_enqueue(self, pod: Pod) -> Status:
        group = pod_group_name(pod)
        if group is None:
            return Status()
        pg = find_pod_group(self.handle.cluster, pod.namespace, group)
        if pg is None:
            return Status.unresolvable(waiting_for_group(group))
        if pg.gang_min_count is None:
            return Status()
        if self._state(pod, group).all_pods_count() < pg.gang_min_count:
            return Status.unresolvable(WAITING_FOR_MIN_COUNT)
        return Status()

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status, float]:
        group = pod_group_name(pod)
        if group is None:
            return Status(), 0.0
        pg = find_pod_group(self.handle.cluster, pod.namespace, group)
        if pg is None:
            return Status.as_error(
                f'failed to get podGroup {pod.namespace}/{group}: podgroup.scheduling.k8s.io "{group}" not found'
            ), 0.0
        if pg.gang_min_count is None:
            return Status(), 0.0
        gang = self._state(pod, group)
        gang.assume(pod)  # Permit runs after the pod was assumed
        if gang.scheduled_pods_count() < pg.gang_min_count:
            return Status(Code.WAIT, WAITING_FOR_QUORUM), PERMIT_TIMEOUT_SECONDS
        return Status(), 0.0


def new(args: None, handle: Handle) -> GangScheduling:
    return GangScheduling(handle)
