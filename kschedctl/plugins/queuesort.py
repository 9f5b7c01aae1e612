"""PrioritySort: the order in which the scheduling queue pops pods.

Higher priority first (a pod without a resolved priority counts as 0); among equal
priorities the pod that entered the queue earlier wins. kschedctl has no queue,
so the pod's ``metadata.creationTimestamp`` stands in for the time it was queued
(a pod without one counts as the zero time, i.e. earliest), except for pods that were
already pending when a simulated run began (``Pod.queued_at_start``): the scheduler's
informers queued those at start-up, before any pod created afterwards, in the order of
their initial list. Ties leave ``less`` false both ways, as upstream.

Upstream model: ``pkg/scheduler/framework/plugins/queuesort/priority_sort.go``.
"""

from __future__ import annotations

from datetime import UTC, datetime

from kschedctl.framework.interfaces import Handle
from kschedctl.snapshot.model import Pod

NAME = "PrioritySort"

_ZERO_TIME = datetime.min.replace(tzinfo=UTC)


def queue_timestamp(pod: Pod) -> datetime:
    """When the pod is taken to have been queued: its creationTimestamp (RFC 3339), else the zero time."""
    ts = pod.meta.creation_timestamp
    if not ts:
        return _ZERO_TIME
    try:
        parsed = datetime.fromisoformat(ts)
    except ValueError:
        return _ZERO_TIME
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed


def queue_arrival(pod: Pod) -> tuple[int, int, datetime]:
    """When the pod entered the queue, as a key: pods queued at start-up first, by their position in
    the initial list; then pods created later, by their queue timestamp."""
    if pod.queued_at_start is not None:
        return 0, pod.queued_at_start, _ZERO_TIME
    return 1, 0, queue_timestamp(pod)


class PrioritySort:
    name = NAME

    def less(self, a: Pod, b: Pod) -> bool:
        pa = a.effective_priority
        pb = b.effective_priority
        return pa > pb or (pa == pb and queue_arrival(a) < queue_arrival(b))

    def sort_key(self, pod: Pod) -> tuple[int, tuple[int, int, datetime]]:
        """A key that orders pods exactly as ``less`` does (for merging streams already in queue order)."""
        return -pod.effective_priority, queue_arrival(pod)


def new(args: None, handle: Handle) -> PrioritySort:
    return PrioritySort()
