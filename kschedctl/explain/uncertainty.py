"""What a dry run cannot know about where kube-scheduler puts a pod, and what is certain all the same.

Seen from outside, several inputs of a real scheduling cycle are unknown: the scheduler's node
order (its node tree is filled from the API server's list, in an order that changes at every
restart), its ``nextStartNodeIndex`` (advanced by every earlier cycle), the order in which its
parallel Filter goroutines finish (``parallelism`` above 1 fills the feasible list in that order),
random tie-breaks (extender scores; every tie up to v1.34) and the queue order (whether a pod
nominated elsewhere is placed before this one; in which order a pod-group cycle takes pods of the
group that entered the queue together). ``OrderDependence`` records which of these
decided a dry run's answer and what holds whatever they are: the tie set; after an early stop
by percentageOfNodesToScore the feasible nodes over all nodes, the best of them and every node
that could top some window of the search; the nodes other pods' nominations hold; the outcomes
a pod group's cycle handed out among pods it could take in another order.
``kschedctl.explain.order`` fills it in; renderers show ``line()``, JSON carries ``to_dict()``.

The window rule (``could_top_a_window``): a search that stops at ``k`` feasible nodes keeps
some ``k`` of the ``F`` feasible ones, and their best wins; a node can win exactly when at
most ``F - k`` feasible nodes score strictly higher, judged by totals over all feasible nodes
(NormalizeScore over a smaller window can shift totals a little).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

TIE = "tie"
EARLY_STOP = "earlyStop"
NOMINATED_PODS = "nominatedPods"
POD_GROUP_ORDER = "podGroupOrder"

#: Node names a one-line summary shows before it gives a count of the rest.
SHOWN_NAMES = 5


def names_capped(names: list[str], shown: int = SHOWN_NAMES) -> str:
    """``a, b, c`` or ``a, b, c, d, e, … (+12 more)``."""
    if len(names) <= shown:
        return ", ".join(names)
    return ", ".join(names[:shown]) + f", … (+{len(names) - shown} more)"


def could_top_a_window(feasible: list[str], totals: dict[str, int], k: int) -> list[str]:
    """The feasible nodes that are the best (or tie for best) of some ``k`` of them, best first.

    Without totals (nothing is scored) any feasible node can be the one a search keeps."""
    if not totals:
        return sorted(feasible)
    slack = len(feasible) - k
    if slack < 0:
        return []
    # at most ``slack`` nodes above it: its total reaches the one ranked ``slack`` (0-based) from the top
    threshold = sorted((totals[n] for n in feasible), reverse=True)[slack]
    return sorted((n for n in feasible if totals[n] >= threshold), key=lambda n: (-totals[n], n))


@dataclass
class EarlyStop:
    """The search stopped at ``num_nodes_to_find`` feasible nodes, and the full search's answer."""

    num_nodes_to_find: int
    #: Nodes the search could visit (those PreFilter allowed) and the percentage that set the stop
    #: (None when nothing is scored: then the first feasible node is enough).
    searchable: int
    percentage: int | None
    adaptive: bool
    #: Feasible over every searchable node, the best of them (several on a tie) and its total.
    feasible: int = 0
    best: list[str] = field(default_factory=list)
    best_total: int | None = None
    #: Every node that could be chosen (``could_top_a_window``), best first.
    possible: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "numNodesToFind": self.num_nodes_to_find,
            "searchableNodes": self.searchable,
            "percentageOfNodesToScore": self.percentage,
            "adaptive": self.adaptive,
            "feasible": self.feasible,
            "bestIfAllSearched": list(self.best),
            "bestTotal": self.best_total,
            "possible": len(self.possible),
        }

    def certain(self) -> str:
        """What holds whatever the window was."""
        if self.percentage is None:
            return f"Certain: {self.feasible} of {self.searchable} feasible, any could be chosen: {names_capped(self.possible)}."
        best = ""
        if self.best:
            total = f" ({self.best_total})" if self.best_total is not None else ""
            best = f"; best of all: {names_capped(self.best)}{total}"
        return (
            f"Certain: {self.feasible} of {self.searchable} feasible{best}; {len(self.possible)} could be chosen: "
            f"{names_capped(self.possible)}."
        )


@dataclass
class HeldNode:
    """A node that fits the pod except for pods nominated to it (priority at least the pod's)."""

    node: str
    pods: list[str]

    def to_dict(self) -> dict[str, Any]:
        return {"node": self.node, "nominatedPods": list(self.pods)}


@dataclass
class GroupOrder:
    """Pods of one PodGroup that entered the scheduling queue together (the arrival of another pod of the
    group released them from PreEnqueue): their pod-group cycle takes them in an order set by a map
    inside kube-scheduler, and the outcomes it handed out in this dry run's order."""

    group: str
    #: The pods, in the order this dry run took them.
    pods: list[str]
    #: Where each went (None: not placed) and its verdict (``explain.podgroup``'s kinds).
    nodes: dict[str, str | None]
    verdicts: dict[str, str]
    #: The pods cannot be told apart (same spec, labels and priority): another order only hands the same
    #: outcomes out among them. Else another order may change the outcomes themselves.
    alike: bool

    def to_dict(self) -> dict[str, Any]:
        return {"podGroup": self.group, "pods": list(self.pods), "nodes": dict(self.nodes),
                "verdicts": dict(self.verdicts), "alike": self.alike}

    def words(self) -> str:
        outcomes = ", ".join(f"{_name(p)} {self._outcome(p)}" for p in self.pods)
        head = (f"pods {names_capped([_name(p) for p in self.pods])} of pod group {self.group} entered the scheduling "
                "queue together, so the order its cycle takes them in is set by a map inside kube-scheduler; "
                f"this dry run took them in that order: {outcomes}")
        if self.alike:
            return f"{head}; they are alike, so another order hands out the same outcomes, to other pods"
        return f"{head}; they differ, so another order may also change the outcomes"

    def _outcome(self, pod: str) -> str:
        node = self.nodes.get(pod)
        if node:
            return f"→ {node}"
        return {"waitedAtPermit": "waits at Permit", "unschedulable": "does not fit",
                "waitingForPreemption": "waits for a preemption", "preempting": "preempts"}.get(self.verdicts.get(pod, ""), "not placed")


def _name(key: str) -> str:
    return key.rpartition("/")[2]


@dataclass
class OrderDependence:
    """Why the dry run's answer is one of several, and the set of answers (``possible``)."""

    selected: str | None
    version: str
    parallelism: int
    reasons: list[str] = field(default_factory=list)
    possible: list[str] = field(default_factory=list)
    #: The nodes sharing the top total (``tie_total``); ``random``: "extender", "version" or None.
    tie: list[str] = field(default_factory=list)
    tie_total: int | None = None
    random: str | None = None
    early_stop: EarlyStop | None = None
    held: list[HeldNode] = field(default_factory=list)
    #: Where the pod would go if the held nodes were free (the nominated pods placed elsewhere or gone).
    if_released: list[str] = field(default_factory=list)
    #: The pods of its group the pod entered the queue with, and what the cycle gave each.
    group_order: GroupOrder | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "reasons": list(self.reasons),
            "parallelism": self.parallelism,
            "tie": {"nodes": list(self.tie), "total": self.tie_total, "random": self.random} if TIE in self.reasons else None,
            "earlyStop": self.early_stop.to_dict() if self.early_stop is not None else None,
            "nominatedPods": (
                {"heldNodes": [h.to_dict() for h in self.held], "ifReleased": list(self.if_released)}
                if NOMINATED_PODS in self.reasons
                else None
            ),
            **({"podGroupOrder": self.group_order.to_dict()} if self.group_order is not None else {}),
            "line": self.line(),
        }

    def line(self) -> str:
        """The one line a reader gets: what decides, then what is certain."""
        group = self.group_order.words() if self.group_order is not None else ""
        parts = [p for p in (self._tie_words(), self._early_words(), self._nominated_words(), group) if p]
        order = EARLY_STOP in self.reasons or (TIE in self.reasons and self.random is None)
        head = "Order decides" if order else ("Chance decides" if TIE in self.reasons else "Queue order decides")
        text = f"{head}: " + "; ".join(parts) + "."
        if self.early_stop is not None:
            text += " " + self.early_stop.certain()
        return text

    def _completion(self) -> str:
        if self.parallelism > 1:
            return f" and its {self.parallelism} parallel Filter workers"
        return ""

    def _tie_words(self) -> str:
        if TIE not in self.reasons or EARLY_STOP in self.reasons:
            return ""
        head = f"{len(self.tie)} nodes tie at total {self.tie_total}: {names_capped(self.tie)}"
        if self.random == "extender":
            return f"{head}; extender scores break the tie at random among {names_capped(self.possible)}"
        if self.random == "version":
            return f"{head}; kube-scheduler {self.version} picks one of them at random"
        return f"{head}; the first in kube-scheduler's feasible list wins, set by its node order{self._completion()}"

    def _early_words(self) -> str:
        e = self.early_stop
        if e is None:
            return ""
        if e.percentage is None:
            return (
                f"nothing is scored, so the first feasible node of {e.searchable} wins, set by kube-scheduler's "
                f"node order{self._completion()}"
            )
        how = f"adaptive {e.percentage}%" if e.adaptive else f"{e.percentage}%"
        return (
            f"the search stopped at {e.num_nodes_to_find} feasible of {e.searchable} nodes (percentageOfNodesToScore "
            f"{how}); which it saw is set by kube-scheduler's node order, nextStartNodeIndex{self._completion()}"
        )

    def _nominated_words(self) -> str:
        if NOMINATED_PODS not in self.reasons:
            return ""
        held = "; ".join(f"{h.node} is held for {names_capped(h.pods)}" for h in self.held)
        if self.selected:
            then = f"{names_capped(self.if_released)} would be chosen instead"
        else:
            then = f"the pod would fit, on {names_capped(self.if_released)}"
        they = "that pod is" if sum(len(h.pods) for h in self.held) == 1 else "those pods are"
        return (
            f"{held} (nominated there, priority at least this pod's); if {they} placed elsewhere or gone "
            f"before this pod's cycle, {then}"
        )
