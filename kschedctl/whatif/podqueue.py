"""The run's scheduling queue (``activeQ``): pods come out in QueueSort order.

PrioritySort orders by higher priority first, then earlier queued, then file order. Pods, and the
copies workloads expand into, arrive as streams (``PodStream``), each already in queue order,
merged lazily: a workload's pods are created only when popped, so memory does not grow with the
pods still waiting. The snapshot's own pending pods are in the queue first (``queued_at_start``):
the scheduler's pod informer lists them when it starts, so they were queued before any pod created
afterwards.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import cmp_to_key
from typing import Any

from kschedctl.framework.nodeinfos import list_order
from kschedctl.snapshot.cluster import Cluster
from kschedctl.snapshot.model import Pod


@dataclass
class PodStream:
    """Pods already in queue order from one source: a Pod document, or the copies a workload's controller creates."""

    pods: Iterable[Pod]
    workload: str | None = None
    #: How many pods the stream yields (None: not known).
    count: int | None = None
    #: The copies are identical to the scheduler (same spec, labels and volumes; only names differ).
    identical: bool = False
    #: The pods name a PodGroup (``spec.schedulingGroup``): a run with v1.36's pod-group cycle creates them
    #: all before its first cycle, as a pod-group cycle takes the group's pods out of the queue together.
    pod_group: bool = False


class SchedulingQueue:
    """Pops pods in QueueSort order from streams that are each in queue order (``activeQ``).

    With a QueueSort plugin that gives a sort key (PrioritySort) the streams are merged lazily;
    otherwise up to ``limit`` pods of each stream are read and sorted with the plugin's ``less``.
    """

    def __init__(
        self,
        streams: list[PodStream],
        key: Callable[[Pod], Any] | None,
        less: Callable[[Pod, Pod], bool],
        limit: int = 0,
    ) -> None:
        self.streams = streams
        self.popped = [0] * len(streams)
        self.dropped: set[int] = set()
        self._iters: list[Iterator[Pod]] = [iter(s.pods) for s in streams]
        self._key = key
        self._heap: list[tuple[Any, int]] = []
        self._heads: dict[int, Pod] = {}
        self._sorted: Iterator[tuple[Pod, int]] | None = None
        #: Pods taken out of the queue before their turn (by uid): a pod-group cycle took them with another.
        self._taken: set[str] = set()
        if key is not None:
            for i in range(len(streams)):
                self._advance(i)
        else:
            items: list[tuple[Pod, int]] = []
            for i, it in enumerate(self._iters):
                for n, pod in enumerate(it):
                    if limit and n >= limit:
                        break
                    items.append((pod, i))

            def cmp(a: tuple[Pod, int], b: tuple[Pod, int]) -> int:
                return -1 if less(a[0], b[0]) else (1 if less(b[0], a[0]) else 0)

            self._sorted = iter(sorted(items, key=cmp_to_key(cmp)))

    def _advance(self, i: int) -> None:
        assert self._key is not None
        pod = next(self._iters[i], None)
        if pod is not None:
            self._heads[i] = pod
            heapq.heappush(self._heap, (self._key(pod), i))

    def pop(self) -> tuple[Pod, int] | None:
        if self._sorted is not None:
            for pod, i in self._sorted:
                if i not in self.dropped and pod.uid not in self._taken:
                    self.popped[i] += 1
                    return pod, i
            return None
        while self._heap:
            _, i = heapq.heappop(self._heap)
            pod = self._heads.pop(i)
            if i in self.dropped:
                continue
            self._advance(i)
            if pod.uid in self._taken:
                continue
            self.popped[i] += 1
            return pod, i
        return None

    def take(self, pod: Pod, i: int) -> None:
        """Take ``pod`` (of stream ``i``) out of the queue now (``PopSpecificPod``): it is not popped later."""
        self._taken.add(pod.uid)
        self.popped[i] += 1

    def drop(self, i: int) -> int:
        """Stop popping stream ``i``; how many of its pods were left (0 when not known)."""
        self.dropped.add(i)
        count = self.streams[i].count
        return max(0, count - self.popped[i]) if count is not None else 0

    def remaining(self) -> int | None:
        """Pods not popped yet, when every stream knows its count."""
        total = 0
        for i, s in enumerate(self.streams):
            if i in self.dropped:
                continue
            if s.count is None:
                return None
            total += max(0, s.count - self.popped[i])
        return total



def queued_at_start(cluster: Cluster, excluded: set[str]) -> list[PodStream]:
    """The snapshot's pending pods, one stream each, as the informers' initial list queued them when the
    scheduler started: in the API server's list order (by namespace, then name; a live read's own order),
    before every pod created afterwards. Pods the run schedules itself (``excluded``) and pods being deleted (the
    scheduler skips them) are left out; gated pods and pods of no profile stay out of activeQ.
    Like the run's own pods, these Pod objects take the node and nomination the run gives them."""
    pending = cluster.pending_pods()
    for pod in pending:
        pod.queued_at_start = None
    listed = cluster.startup.queue(pending if cluster.pods_listed else list_order(pending))
    pods = [p for p in listed if p.uid not in excluded and p.meta.deletion_timestamp is None]
    for i, pod in enumerate(pods):
        pod.queued_at_start = i
    return [PodStream([pod], None, 1) for pod in pods]
