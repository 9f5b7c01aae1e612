"""The pods on a snapshot's nodes by namespace and by label, each with the NodeInfo it is on.

PodTopologySpread and InterPodAffinity count, every cycle, the pods that match a label
selector per topology domain. Walking every pod of a large cluster for that costs far more
than the few pods that can match: a pod can only match a selector with a requirement
``key In (values)`` if it carries one of those labels. ``PodIndex.candidates`` returns the
pods of some namespaces that may match a selector (a superset: callers still apply the full
rule), looked up by the selector's most selective ``In`` requirement, or every pod of those
namespaces when it has none. The lists follow no particular order: callers only count.

A ``Snapshot`` builds the index on first use and keeps it up to date when a simulation
assumes or forgets a pod (``pod_added`` / ``pod_removed``).

``MatchCounts`` goes one step further for the selectors cycles keep asking about (a
simulation places copies of one pod, each cycle counting the same selectors): the number of
matching pods per node, computed once per (namespaces, selector) from the index and then
changed by one when a pod is assumed or forgotten, instead of being counted again each cycle.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from kschedctl.kube.selectors import Requirement, Selector

if TYPE_CHECKING:
    from kschedctl.framework.types import NodeInfo, PodInfo

Entry = tuple["PodInfo", "NodeInfo"]


class _Namespace:
    __slots__ = ("by_label", "entries")

    def __init__(self) -> None:
        self.entries: list[Entry] = []
        self.by_label: dict[tuple[str, str], list[Entry]] | None = None  # built on first use

    def labels(self) -> dict[tuple[str, str], list[Entry]]:
        idx = self.by_label
        if idx is None:
            idx = {}
            for e in self.entries:
                for kv in e[0].pod.meta.labels.items():
                    lst = idx.get(kv)
                    if lst is None:
                        idx[kv] = [e]
                    else:
                        lst.append(e)
            self.by_label = idx
        return idx


class PodIndex:
    """Pods by namespace, and within a namespace by (label key, value)."""

    __slots__ = ("_namespaces",)

    def __init__(self, nodes: Iterable[NodeInfo]) -> None:
        self._namespaces: dict[str, _Namespace] = {}
        get = self._namespaces.get
        for ni in nodes:
            for pi in ni.pods:
                ns = pi.pod.meta.namespace
                nsx = get(ns)
                if nsx is None:
                    nsx = self._namespaces[ns] = _Namespace()
                nsx.entries.append((pi, ni))

    def namespaces(self) -> list[str]:
        """Every namespace that has a pod on a node."""
        return list(self._namespaces)

    def candidates(self, namespaces: Iterable[str], selector: Selector) -> list[Entry]:
        """The pods of these namespaces that may match ``selector`` (a superset of those that do)."""
        if selector.nothing:
            return []
        out: list[Entry] = []
        for ns in namespaces:
            nsx = self._namespaces.get(ns)
            if nsx is not None:
                out.extend(_narrowed(nsx, selector)[0])
        return out

    def matching(self, namespaces: Iterable[str], selector: Selector) -> list[Entry]:
        """The pods of these namespaces whose labels match ``selector`` (``selector.matches``)."""
        if selector.nothing:
            return []
        out: list[Entry] = []
        for ns in namespaces:
            nsx = self._namespaces.get(ns)
            if nsx is None:
                continue
            entries, used = _narrowed(nsx, selector)
            rest = [r for r in selector.requirements if r is not used]
            if not rest:
                out.extend(entries)
            else:
                out.extend(e for e in entries if all(r.matches(e[0].pod.meta.labels) for r in rest))
        return out

    # keeping up with assume / forget -------------------------------------------------------------
    def pod_added(self, pi: PodInfo, ni: NodeInfo) -> None:
        ns = pi.pod.meta.namespace
        nsx = self._namespaces.get(ns)
        if nsx is None:
            nsx = self._namespaces[ns] = _Namespace()
        e = (pi, ni)
        nsx.entries.append(e)
        if nsx.by_label is not None:
            for kv in pi.pod.meta.labels.items():
                nsx.by_label.setdefault(kv, []).append(e)

    def pod_removed(self, pi: PodInfo, ni: NodeInfo) -> None:
        nsx = self._namespaces.get(pi.pod.meta.namespace)
        if nsx is None:
            return
        uid = pi.pod.meta.uid
        lists = [nsx.entries]
        if nsx.by_label is not None:
            lists.extend(nsx.by_label.get(kv, []) for kv in pi.pod.meta.labels.items())
        for lst in lists:
            for k, (p, n) in enumerate(lst):
                if n is ni and p.pod.meta.uid == uid:
                    del lst[k]
                    break


class MatchCounts:
    """Per (namespaces, selector) asked for: how many pods of those namespaces on each node the
    selector matches (``live_only``: terminating pods left out), kept current by assume/forget.

    The dicts returned are the live counts (NodeInfo -> count, nodes without a match absent):
    callers read them within a cycle and never change them."""

    __slots__ = ("_entries", "_index")

    #: Distinct (namespaces, selector) pairs kept; the oldest goes first beyond this.
    MAX_ENTRIES = 256

    def __init__(self, index: PodIndex) -> None:
        self._index = index
        self._entries: dict[tuple[frozenset[str], Selector, bool], dict[NodeInfo, int]] = {}

    def per_node(self, namespaces: Iterable[str], selector: Selector, *, live_only: bool) -> dict[NodeInfo, int]:
        """Matching pods per node (``PodIndex.matching`` counted by node)."""
        key = (frozenset(namespaces), selector, live_only)
        counts = self._entries.get(key)
        if counts is None:
            counts = {}
            for pi, ni in self._index.matching(key[0], selector):
                if live_only and pi.pod.meta.deletion_timestamp is not None:
                    continue
                counts[ni] = counts.get(ni, 0) + 1
            if len(self._entries) >= self.MAX_ENTRIES:
                del self._entries[next(iter(self._entries))]
            self._entries[key] = counts
        return counts

    def pod_added(self, pi: PodInfo, ni: NodeInfo) -> None:
        self._update(pi, ni, 1)

    def pod_removed(self, pi: PodInfo, ni: NodeInfo) -> None:
        self._update(pi, ni, -1)

    def _update(self, pi: PodInfo, ni: NodeInfo, delta: int) -> None:
        meta = pi.pod.meta
        for (namespaces, selector, live_only), counts in self._entries.items():
            if meta.namespace not in namespaces or not selector.matches(meta.labels):
                continue
            if live_only and meta.deletion_timestamp is not None:
                continue
            n = counts.get(ni, 0) + delta
            if n:
                counts[ni] = n
            else:
                del counts[ni]


def _narrowed(nsx: _Namespace, selector: Selector) -> tuple[list[Entry], Requirement | None]:
    """The entries carrying a label the selector's most selective ``In`` requirement asks for,
    and that requirement (which they all meet); every entry and None without such a requirement."""
    best: list[list[Entry]] | None = None
    best_size = 0
    used: Requirement | None = None
    for r in selector.requirements:
        if r.operator != "In":
            continue
        idx = nsx.labels()
        lists = [idx.get((r.key, v), []) for v in dict.fromkeys(r.values)]
        size = sum(len(lst) for lst in lists)
        if best is None or size < best_size:
            best, best_size, used = lists, size, r
    if best is None:
        return nsx.entries, None
    if len(best) == 1:
        return best[0], used
    return [e for lst in best for e in lst], used
