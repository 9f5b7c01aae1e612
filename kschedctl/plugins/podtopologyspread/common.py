"""What the PodTopologySpread filter and score halves share.

Both halves turn a pod's ``topologySpreadConstraints`` (or, when it has none,
the configured default constraints) into ``Constraint`` values with a compiled
selector and the v1.35 defaults filled in (minDomains 1, nodeAffinityPolicy
Honor, nodeTaintsPolicy Ignore), decide which nodes take part in the spreading
(node inclusion policies), and count the matching pods on a node. The rules are
kube-scheduler v1.35.4's:

* ``matchLabelKeys``: the scheduler itself ANDs ``key In (pod's value)`` onto the
  selector for every listed key the incoming pod carries (keys it lacks are
  ignored). In v1.34+ the API server also merges them into ``labelSelector`` at
  pod creation (MatchLabelKeysInPodTopologySpreadSelectorMerge); doing it again
  here gives the same selection, so pod files with or without the API-server
  merge behave alike.
* default constraints apply only when the pod has no constraints of its own; they
  take their selector from the Services, ReplicationControllers, ReplicaSets and
  StatefulSets that select the pod (``helper.DefaultSelector``), and are dropped
  when that selector is empty.
* counting ignores terminating pods and pods of other namespaces, and an *empty*
  selector counts nothing (while it still "matches" the incoming pod itself).

Upstream model: ``pkg/scheduler/framework/plugins/podtopologyspread/common.go``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from kschedctl.errors import ConfigError
from kschedctl.framework.types import PodInfo
from kschedctl.kube.selectors import (
    EVERYTHING,
    Requirement,
    Selector,
    parse_label_selector,
    selector_from_set,
)
from kschedctl.kube.topology import HOSTNAME_LABEL, ZONE_LABEL
from kschedctl.snapshot.cluster import Cluster
from kschedctl.snapshot.model import Node, Pod, Taint, Toleration, TopologySpreadConstraint

DO_NOT_SCHEDULE = "DoNotSchedule"
SCHEDULE_ANYWAY = "ScheduleAnyway"
HONOR = "Honor"
IGNORE = "Ignore"


def _system_default(max_skew: int, topology_key: str) -> TopologySpreadConstraint:
    return TopologySpreadConstraint(
        max_skew=max_skew,
        topology_key=topology_key,
        when_unsatisfiable=SCHEDULE_ANYWAY,
        label_selector=parse_label_selector(None),
        min_domains=None,
        node_affinity_policy=None,
        node_taints_policy=None,
        match_label_keys=(),
    )


#: kube-scheduler's built-in defaults for ``defaultingType: System``.
SYSTEM_DEFAULT_CONSTRAINTS: tuple[TopologySpreadConstraint, ...] = (
    _system_default(3, HOSTNAME_LABEL),
    _system_default(5, ZONE_LABEL),
)


@dataclass(frozen=True, slots=True)
class Constraint:
    """A spread constraint as the plugin uses it: selector compiled, defaults applied."""

    max_skew: int
    topology_key: str
    selector: Selector
    min_domains: int
    node_affinity_policy: str
    node_taints_policy: str
    when_unsatisfiable: str

    def with_selector(self, selector: Selector) -> Constraint:
        return Constraint(
            self.max_skew,
            self.topology_key,
            selector,
            self.min_domains,
            self.node_affinity_policy,
            self.node_taints_policy,
            self.when_unsatisfiable,
        )

    def describe(self) -> dict[str, Any]:
        return {
            "topologyKey": self.topology_key,
            "maxSkew": self.max_skew,
            "minDomains": self.min_domains,
            "whenUnsatisfiable": self.when_unsatisfiable,
            "selector": str(self.selector),
            "nodeAffinityPolicy": self.node_affinity_policy,
            "nodeTaintsPolicy": self.node_taints_policy,
        }


# --------------------------------------------------------------------------- node inclusion


NodeMatcher = Callable[[Node], bool]


def required_node_affinity(pod: Pod) -> NodeMatcher:
    """``nodeaffinity.GetRequiredNodeAffinity(pod).Match`` (nodeSelector AND required node affinity)."""
    node_selector = pod.node_selector
    required = pod.affinity.node_required if pod.affinity is not None else None
    if not node_selector and required is None:
        return _always

    def match(node: Node) -> bool:
        labels = node.labels
        for k, v in node_selector.items():
            if labels.get(k) != v:
                return False
        if required is not None:
            return required.matches(labels, node.name)
        return True

    return match


def _always(node: Node) -> bool:
    return True


def _has_untolerated_no_schedule_taint(taints: Iterable[Taint], tolerations: list[Toleration]) -> bool:
    """``FindMatchingUntoleratedTaint`` restricted to NoSchedule/NoExecute taints."""
    for taint in taints:
        if taint.effect not in ("NoSchedule", "NoExecute"):
            continue
        if not any(t.tolerates(taint) for t in tolerations):
            return True
    return False


def node_included(c: Constraint, pod: Pod, node: Node, affinity: NodeMatcher) -> bool:
    """Whether the node counts for this constraint under its inclusion policies."""
    if c.node_affinity_policy == HONOR and not affinity(node):
        return False
    return not (c.node_taints_policy == HONOR and _has_untolerated_no_schedule_taint(node.taints, pod.tolerations))


def node_has_all_keys(labels: dict[str, str], constraints: list[Constraint]) -> bool:
    return all(c.topology_key in labels for c in constraints)


def count_matching_pods(pods: list[PodInfo], selector: Selector, namespace: str) -> int:
    """Matching pods of the namespace on a node; terminating pods and empty selectors count 0."""
    if selector.empty:
        return 0
    n = 0
    for pi in pods:
        p = pi.pod
        if p.meta.deletion_timestamp is not None or p.meta.namespace != namespace:
            continue
        if selector.matches(p.meta.labels):
            n += 1
    return n


# --------------------------------------------------------------------------- building constraints


def filter_constraints(
    constraints: Iterable[TopologySpreadConstraint], pod_labels: dict[str, str], action: str
) -> list[Constraint]:
    """The constraints with the given ``whenUnsatisfiable``, matchLabelKeys merged into the selector."""
    out: list[Constraint] = []
    for c in constraints:
        if c.when_unsatisfiable != action:
            continue
        selector = c.label_selector
        if c.match_label_keys:
            extra = [Requirement(k, "In", (pod_labels[k],)) for k in c.match_label_keys if k in pod_labels]
            if extra:
                # A nil selector (matches nothing) stays nil; otherwise the pairs are ANDed on.
                selector = selector if selector.nothing else Selector(tuple(sorted(extra, key=lambda r: r.key)) + selector.requirements)
        out.append(
            Constraint(
                max_skew=c.max_skew,
                topology_key=c.topology_key,
                selector=selector,
                min_domains=1 if c.min_domains is None else c.min_domains,
                node_affinity_policy=c.node_affinity_policy or HONOR,
                node_taints_policy=c.node_taints_policy or IGNORE,
                when_unsatisfiable=c.when_unsatisfiable,
            )
        )
    return out


def default_selector(pod: Pod, cluster: Cluster) -> Selector:
    """``helper.DefaultSelector``: what selects the pod among Services, RCs, ReplicaSets, StatefulSets."""
    label_set: dict[str, str] = {}
    for svc in cluster.of_kind("Service"):
        if svc.namespace != pod.namespace:
            continue
        sel = svc.spec.get("selector")
        if not isinstance(sel, dict):
            continue  # a Service without a selector selects nothing
        want = {str(k): "" if v is None else str(v) for k, v in sel.items()}
        if all(pod.labels.get(k) == v for k, v in want.items()):
            label_set.update(want)
    selector = selector_from_set(label_set)

    owner = pod.meta.controller_ref()
    if owner is None:
        return selector
    gvk = (str(owner.get("apiVersion") or ""), str(owner.get("kind") or ""))
    if gvk == ("v1", "ReplicationController"):
        rc = cluster.get("ReplicationController", pod.namespace, str(owner.get("name") or ""))
        if rc is not None:
            rc_sel = rc.spec.get("selector")
            if isinstance(rc_sel, dict):
                label_set.update({str(k): "" if v is None else str(v) for k, v in rc_sel.items()})
            selector = selector_from_set(label_set)
    elif gvk in (("apps/v1", "ReplicaSet"), ("apps/v1", "StatefulSet")):
        obj = cluster.get(gvk[1], pod.namespace, str(owner.get("name") or ""))
        if obj is not None:
            try:
                other = parse_label_selector(obj.spec.get("selector"))
            except Exception:
                other = None
            if other is not None and not other.nothing:
                selector = Selector(tuple(sorted(selector.requirements + other.requirements, key=lambda r: r.key)))
    return selector


# --------------------------------------------------------------------------- configuration


def parse_default_constraints(raw: list[dict[str, Any]]) -> list[TopologySpreadConstraint]:
    """Parse and validate ``PodTopologySpreadArgs.defaultConstraints`` as kube-scheduler does."""
    out: list[TopologySpreadConstraint] = []
    errs: list[str] = []
    seen: set[tuple[str, str]] = set()
    for i, c in enumerate(raw):
        path = f"defaultConstraints[{i}]"
        if not isinstance(c, dict):
            raise ConfigError(f"{path}: must be a topology spread constraint")
        max_skew = c.get("maxSkew")
        if not isinstance(max_skew, int) or isinstance(max_skew, bool) or max_skew <= 0:
            errs.append(f"{path}.maxSkew: Invalid value: {max_skew!r}: not in valid range (0, inf)")
            max_skew = 1
        key = str(c.get("topologyKey") or "")
        if not key:
            errs.append(f"{path}.topologyKey: Required value: can not be empty")
        when = str(c.get("whenUnsatisfiable") or "")
        if not when:
            errs.append(f"{path}.whenUnsatisfiable: Required value: can not be empty")
        elif when not in (DO_NOT_SCHEDULE, SCHEDULE_ANYWAY):
            errs.append(
                f'{path}.whenUnsatisfiable: Unsupported value: "{when}": supported values: "DoNotSchedule", "ScheduleAnyway"'
            )
        if c.get("labelSelector") is not None:
            errs.append(f"{path}.labelSelector: Forbidden: constraint must not define a selector, as they deduced for each pod")
        if (key, when) in seen:
            errs.append(f"defaultConstraints[{i}]: Duplicate value: {{{key!r}, {when!r}}}")
        seen.add((key, when))
        md = c.get("minDomains")
        mlk = c.get("matchLabelKeys") or []
        out.append(
            TopologySpreadConstraint(
                max_skew=int(max_skew),
                topology_key=key,
                when_unsatisfiable=when,
                label_selector=EVERYTHING,  # replaced by the pod's default selector
                min_domains=None if md is None else int(md),
                node_affinity_policy=None if c.get("nodeAffinityPolicy") is None else str(c["nodeAffinityPolicy"]),
                node_taints_policy=None if c.get("nodeTaintsPolicy") is None else str(c["nodeTaintsPolicy"]),
                match_label_keys=tuple(str(k) for k in mlk) if isinstance(mlk, list) else (),
            )
        )
    if errs:
        raise ConfigError("PodTopologySpreadArgs: " + ", ".join(errs))
    return out
