"""What changed in kube-scheduler from one minor version to the next, as kschedctl reproduces it.

``kschedctl diff-versions`` shows what a pod's cycle does differently under two versions; this
table is what it names as the cause of each difference. Two kinds of entries:

* rules that changed with no feature gate (a message, a status code, a score formula, the
  tie-break), written here by hand, one per place where a plugin or the cycle tests
  ``Features.at_least`` (``plugins/tainttoleration.py``, ``plugins/noderesources/fit.py``,
  ``plugins/volumerestrictions.py``, ``plugins/nodeports.py``, ``plugins/dynamicresources``,
  ``plugins/noderesources/balanced_allocation.py``, ``plugins/nodedeclaredfeatures.py``,
  ``explain/cycle.py``);
* feature gates the scheduler reads (``GATE_EFFECTS``), whose effect applies whenever the two
  runs' effective values differ: a default that flipped between the versions
  (``kube.gate_tables``) or a ``--feature-gates`` override.

Each entry names the plugins and extension points whose results it can change, so a difference
found in two traces is attributed only to entries that touch the part that differs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from kschedctl.kube.features import Features
from kschedctl.kube.versions import gate_specs

#: Extension points (and two cycle-level parts) a change can touch, as ``diff-versions`` names them.
PRE_ENQUEUE = "preEnqueue"
PRE_FILTER = "preFilter"
FILTER = "filter"
SCORE = "score"
POST_FILTER = "postFilter"
#: Which of the top-scoring nodes is selected (no plugin).
SELECTION = "selection"
#: The loop across pods (``simulate``), not one cycle.
BATCHING = "batching"


@dataclass(frozen=True)
class RuleChange:
    """One change: the version that brought it (or, for a gate, whose value differs), what it touches."""

    minor: int
    name: str
    kind: str  # "rule" or "gate"
    plugins: tuple[str, ...]
    points: tuple[str, ...]
    text: str

    def touches(self, plugin: str, point: str) -> bool:
        """Whether this change can alter ``plugin``'s result at ``point`` ("" plugin: the cycle itself)."""
        return point in self.points and (plugin in self.plugins or (not plugin and not self.plugins))

    def line(self) -> str:
        return f"v1.{self.minor}: {self.text}"

    def to_dict(self) -> dict[str, object]:
        return {"version": f"v1.{self.minor}", "name": self.name, "kind": self.kind, "plugins": list(self.plugins),
                "points": list(self.points), "text": self.text}


#: Rules that changed with no gate, by the version that brought them.
RULES: tuple[RuleChange, ...] = (
    RuleChange(34, "TaintTolerationMessage", "rule", ("TaintToleration",), (FILTER,),
               "TaintToleration's Filter reason no longer quotes the untolerated taint"),
    RuleChange(34, "FitUnresolvable", "rule", ("NodeResourcesFit",), (FILTER, POST_FILTER),
               "NodeResourcesFit rejects a request above a node's whole allocatable as UnschedulableAndUnresolvable, "
               "so preemption no longer tries that node"),
    RuleChange(34, "ReadWriteOncePodMessage", "rule", ("VolumeRestrictions",), (PRE_FILTER, FILTER),
               "VolumeRestrictions words a ReadWriteOncePod conflict differently"),
    RuleChange(34, "NodePortsSidecars", "rule", ("NodePorts",), (PRE_FILTER, FILTER),
               "NodePorts counts the host ports of sidecar (restartable init) containers"),
    RuleChange(35, "DynamicResourcesScore", "rule", ("DynamicResources",), (SCORE,),
               "DynamicResources scores nodes (weight 2 in the default profile)"),
    RuleChange(35, "DeterministicTieBreak", "rule", (), (SELECTION,),
               "of the nodes with the top total, the first in the score heap is selected, not one at random"),
    RuleChange(36, "BalancedAllocationChange", "rule", ("NodeResourcesBalancedAllocation",), (SCORE,),
               "NodeResourcesBalancedAllocation scores the change in balance the pod makes, not the balance after it"),
    RuleChange(36, "NodeDeclaredFeaturesTable", "rule", ("NodeDeclaredFeatures",), (PRE_FILTER, FILTER),
               "NodeDeclaredFeatures checks the node features v1.36 defines"),
)

#: The gates the scheduler's rules read: the plugins and points each reaches, and what turning it on does.
GATE_EFFECTS: Mapping[str, tuple[tuple[str, ...], tuple[str, ...], str]] = MappingProxyType({
    "DynamicResourceAllocation": (("DynamicResources",), (PRE_ENQUEUE, PRE_FILTER, FILTER, SCORE, POST_FILTER),
                                  "DynamicResources joins the default profile (ResourceClaims are allocated)"),
    "PodLevelResources": (("NodeResourcesFit", "NodeResourcesBalancedAllocation"), (PRE_FILTER, FILTER, SCORE),
                          "a pod's spec.resources (pod-level requests) count instead of the sum of its containers'"),
    "NodeDeclaredFeatures": (("NodeDeclaredFeatures",), (PRE_FILTER, FILTER),
                             "NodeDeclaredFeatures joins the default profile: a node must declare the features a pod needs"),
    "OpportunisticBatching": ((), (BATCHING,),
                              "a cycle's sorted scores are reused for the next pod with the same signature"),
    "GangScheduling": (("GangScheduling",), (PRE_ENQUEUE, PRE_FILTER), "pods of a PodGroup are scheduled together"),
    "GenericWorkload": (("GangScheduling",), (PRE_ENQUEUE, PRE_FILTER), "Workload objects group pods"),
    "TopologyAwareWorkloadScheduling": (("NodeResourcesFit",), (SCORE,),
                                        "a pod group's placement is scored as a whole"),
    "StorageCapacityScoring": (("VolumeBinding",), (SCORE,),
                               "VolumeBinding scores nodes by the storage utilization the pod's volumes would cause there"),
})


def _default(gate: str, minor: int) -> bool:
    spec = gate_specs(minor).get(gate)
    return spec is not None and spec.default


def _gate_change(gate: str, a: Features, b: Features) -> tuple[int, str]:
    """When the gate's value changed (the version whose default flipped), and why: "on by default" or,
    when ``--feature-gates`` set it, "set by --feature-gates"."""
    vb = b.enabled(gate)
    defaults = a.enabled(gate) == _default(gate, a.minor) and vb == _default(gate, b.minor)
    if not defaults:
        return b.minor, f"{gate} is {'on' if vb else 'off'} (--feature-gates)"
    low, high = sorted((a.minor, b.minor))
    flipped = next((m for m in range(low + 1, high + 1) if _default(gate, m) != _default(gate, m - 1)), high)
    return flipped, f"{gate} is {'on' if _default(gate, flipped) else 'off'} by default"


def gate_changes(a: Features, b: Features) -> list[RuleChange]:
    """The gates the scheduler reads whose effective values differ between ``a`` and ``b``."""
    out = []
    for gate, (plugins, points, text) in GATE_EFFECTS.items():
        if a.enabled(gate) != b.enabled(gate):
            minor, state = _gate_change(gate, a, b)
            out.append(RuleChange(minor, gate, "gate", plugins, points, f"{state}: {text}"))
    return sorted(out, key=lambda ch: ch.minor)


def changes_between(a: Features, b: Features) -> list[RuleChange]:
    """Every change from ``a``'s rules to ``b``'s: the rules of the versions in between (either direction)
    and the gates whose values differ."""
    low, high = sorted((a.minor, b.minor))
    found = [r for r in RULES if low < r.minor <= high] + gate_changes(a, b)
    return sorted(found, key=lambda ch: ch.minor)


def attribute(changes: Iterable[RuleChange], parts: Iterable[tuple[str, str]]) -> list[RuleChange]:
    """The changes that touch any of ``parts`` ((plugin, point) pairs where two traces differ), in order."""
    wanted = list(parts)
    return [c for c in changes if any(c.touches(p, pt) for p, pt in wanted)]
