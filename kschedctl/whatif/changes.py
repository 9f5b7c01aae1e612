"""Single changes to a pod or a node, each as a changed copy plus the patch a user would apply.

A remedy is only as good as its proof, and the proof is the real scheduling cycle run on the
changed object. So every change here is made on a deep copy of the object's raw manifest,
parsed again by the same model constructors a snapshot file goes through (API-server
defaulting included), and returned with the strategic-merge patch that makes the same change
on the real object. Nothing here touches the objects it was given: the caller's Pod, Node and
Cluster stay exactly as they were loaded.

Patches follow kubectl's strategic merge rules for these fields (``snapshot.strategicmerge``):
containers merge by name, ``topologySpreadConstraints`` by ``topologyKey``; tolerations,
node-selector terms, pod-affinity terms and node taints have no merge key, so their patch carries
the whole new list. ``whatif.patchcheck`` applies each patch to the stored object and the cycle is
re-run on that result, so the edit here and the patch must make the same change (tested).
"""

from __future__ import annotations

import copy
import itertools
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from kschedctl.framework.resources import is_extended_resource_name, is_hugepages
from kschedctl.kube.topology import HOSTNAME_LABEL, REGION_LABEL, ZONE_LABEL
from kschedctl.snapshot.cluster import Cluster
from kschedctl.snapshot.model import Node, Pod, Taint

UNSCHEDULABLE_TAINT = "node.kubernetes.io/unschedulable"
REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"

#: Labels that name a node's group, most specific first (cloud node pools, autoscalers, then the
#: instance type). The first one carried by every node defines the groups.
NODE_GROUP_LABELS = (
    "eks.amazonaws.com/nodegroup",
    "alpha.eksctl.io/nodegroup-name",
    "cloud.google.com/gke-nodepool",
    "kubernetes.azure.com/agentpool",
    "agentpool",
    "karpenter.sh/nodepool",
    "kops.k8s.io/instancegroup",
    "node-pool",
    "nodepool",
    "pool",
    "node.kubernetes.io/instance-type",
    "beta.kubernetes.io/instance-type",
)
#: Labels that differ from node to node of one group and so do not make its shape.
PER_NODE_LABELS = (HOSTNAME_LABEL, ZONE_LABEL, REGION_LABEL)


@dataclass
class Change:
    """One change: what it is in words, the changed copy, and the patch that makes it for real."""

    kind: str
    text: str
    #: "pod <ns>/<name>", "node <name>" or "new node <name>".
    target: str
    #: A strategic-merge patch (for a new node: the node's shape as a manifest fragment).
    patch: dict[str, Any]
    pod: Pod | None = None
    node: Node | None = None
    #: A kubectl command that makes the change, when one exists (nodes); pods are patched through
    #: their controller's template, so none is given for them.
    command: str | None = None
    detail: dict[str, Any] = field(default_factory=dict)


# --------------------------------------------------------------------------- pods


def changed_pod(pod: Pod, edit: Callable[[dict[str, Any]], None]) -> Pod:
    """A new Pod parsed from a deep copy of ``pod.raw`` after ``edit`` changed it."""
    raw = copy.deepcopy(pod.raw)
    raw.setdefault("spec", {})
    edit(raw)
    return Pod.from_raw(raw)


def _spec(raw: dict[str, Any]) -> dict[str, Any]:
    spec: dict[str, Any] = raw["spec"]
    return spec


@dataclass(frozen=True)
class RequestSite:
    """Where a pod's request of one resource can be lowered: pod-level or one regular container."""

    resource: str
    container: str | None  # None: spec.resources (pod-level requests)
    current: Fraction


def request_site(pod: Pod, resource: str) -> RequestSite | None:
    """Pod-level requests when they set ``resource``, else the regular container asking for the most."""
    pod_level = (_spec(pod.raw).get("resources") or {}).get("requests") or {}
    if pod.pod_requests and resource in pod.pod_requests and resource in pod_level:
        return RequestSite(resource, None, pod.pod_requests[resource])
    best = max(pod.containers, key=lambda c: c.requests.get(resource, Fraction(0)), default=None)
    if best is None or not best.requests.get(resource):
        return None
    return RequestSite(resource, best.name, best.requests[resource])


#: The step a request is searched in: millicores for cpu, MiB for byte-sized resources, else units.
def request_unit(resource: str) -> Fraction:
    if resource == "cpu":
        return Fraction(1, 1000)
    if resource in ("memory", "ephemeral-storage") or is_hugepages(resource):
        return Fraction(2**20)
    return Fraction(1)


def quantity_text(units: int, resource: str) -> str:
    """``units`` steps of ``request_unit(resource)`` written as a Kubernetes quantity."""
    if resource == "cpu":
        return f"{units // 1000}" if units % 1000 == 0 else f"{units}m"
    if request_unit(resource) == 2**20:
        return f"{units // 1024}Gi" if units and units % 1024 == 0 else f"{units}Mi"
    return str(units)


def _must_equal_limit(resource: str) -> bool:
    """Extended resources and hugepages cannot be overcommitted: their request equals their limit."""
    return is_extended_resource_name(resource) or is_hugepages(resource)


def set_request(pod: Pod, site: RequestSite, quantity: str) -> Change:
    """Lower (or set) one request at ``site``; the limit follows when the API requires them equal."""
    r = site.resource
    patch_res: dict[str, Any] = {"requests": {r: quantity}}

    def edit(raw: dict[str, Any]) -> None:
        spec = _spec(raw)
        if site.container is None:
            res = spec.setdefault("resources", {})
        else:
            c = next(c for c in spec["containers"] if c.get("name") == site.container)
            res = c.setdefault("resources", {})
        res.setdefault("requests", {})[r] = quantity
        if _must_equal_limit(r) and r in (res.get("limits") or {}):
            res["limits"][r] = quantity
            patch_res["limits"] = {r: quantity}

    new = changed_pod(pod, edit)
    patch: dict[str, Any]
    if site.container is None:
        patch = {"spec": {"resources": patch_res}}
        where = "the pod-level"
    else:
        patch = {"spec": {"containers": [{"name": site.container, "resources": patch_res}]}}
        where = f"container {site.container}'s"
    what = f"drop {where} {r} request (set it to 0)" if quantity in ("0", "0Mi") else f"lower {where} {r} request to {quantity}"
    return Change("lower-request", what, f"pod {pod.key}", patch, pod=new,
                  detail={"resource": r, "container": site.container, "value": quantity})


def taint_toleration(taint: Taint) -> dict[str, Any]:
    """The toleration that tolerates exactly this taint (key, value and effect)."""
    t: dict[str, Any] = {"key": taint.key}
    if taint.value:
        t.update(operator="Equal", value=taint.value)
    else:
        t["operator"] = "Exists"
    if taint.effect:
        t["effect"] = taint.effect
    return t


def add_toleration(pod: Pod, taint: Taint) -> Change:
    tol = taint_toleration(taint)
    tolerations: list[Any] = []

    def edit(raw: dict[str, Any]) -> None:
        spec = _spec(raw)
        spec["tolerations"] = [*(spec.get("tolerations") or []), tol]
        tolerations.extend(spec["tolerations"])

    new = changed_pod(pod, edit)
    return Change("add-toleration", f"tolerate taint {taint}", f"pod {pod.key}",
                  {"spec": {"tolerations": tolerations}}, pod=new, detail={"taint": str(taint)})


def drop_node_selector_key(pod: Pod, key: str) -> Change:
    def edit(raw: dict[str, Any]) -> None:
        sel = dict(_spec(raw).get("nodeSelector") or {})
        sel.pop(key, None)
        _spec(raw)["nodeSelector"] = sel

    value = pod.node_selector.get(key, "")
    return Change("relax-node-affinity", f"drop nodeSelector {key}={value}", f"pod {pod.key}",
                  {"spec": {"nodeSelector": {key: None}}}, pod=changed_pod(pod, edit), detail={"key": key})


def set_node_selector_value(pod: Pod, key: str, value: str) -> Change:
    def edit(raw: dict[str, Any]) -> None:
        _spec(raw).setdefault("nodeSelector", {})[key] = value

    return Change("relax-node-affinity", f"change nodeSelector {key}={pod.node_selector.get(key, '')} to {key}={value}",
                  f"pod {pod.key}", {"spec": {"nodeSelector": {key: value}}}, pod=changed_pod(pod, edit),
                  detail={"key": key, "value": value})


def required_node_terms(pod: Pod) -> list[dict[str, Any]]:
    """The raw ``nodeSelectorTerms`` of the pod's required node affinity ([] when there are none)."""
    na = ((_spec(pod.raw).get("affinity") or {}).get("nodeAffinity") or {}).get(REQUIRED) or {}
    terms = na.get("nodeSelectorTerms") or []
    return [t if isinstance(t, dict) else {} for t in terms]


def _expr_text(e: dict[str, Any]) -> str:
    values = e.get("values") or []
    return f"{e.get('key')} {e.get('operator')}" + (f" [{', '.join(str(v) for v in values)}]" if values else "")


def _set_required_terms(pod: Pod, terms: list[dict[str, Any]] | None, kind: str, text: str, detail: dict[str, Any]) -> Change:
    def edit(raw: dict[str, Any]) -> None:
        na = _spec(raw).setdefault("affinity", {}).setdefault("nodeAffinity", {})
        if terms is None:
            na.pop(REQUIRED, None)
        else:
            na[REQUIRED] = {"nodeSelectorTerms": copy.deepcopy(terms)}

    value: Any = None if terms is None else {"nodeSelectorTerms": terms}
    patch = {"spec": {"affinity": {"nodeAffinity": {REQUIRED: value}}}}
    return Change(kind, text, f"pod {pod.key}", patch, pod=changed_pod(pod, edit), detail=detail)


def drop_node_expression(pod: Pod, term: int, expr: int) -> Change | None:
    """Drop one matchExpression of one required term (the whole requirement when it is the only one).

    A term left with nothing selects no node, so dropping the last expression of one of several
    (ORed) terms would make the pod stricter: no change is offered then."""
    terms = copy.deepcopy(required_node_terms(pod))
    exprs = terms[term].get("matchExpressions") or []
    text = _expr_text(exprs[expr])
    del exprs[expr]
    detail = {"term": term, "expression": text}
    if exprs or terms[term].get("matchFields"):
        terms[term]["matchExpressions"] = exprs
        return _set_required_terms(pod, terms, "relax-node-affinity",
                                   f"drop required node affinity expression {text} (term {term})", detail)
    if len(terms) == 1:
        return _set_required_terms(pod, None, "relax-node-affinity",
                                   f"drop required node affinity ({text})", detail)
    return None


def add_node_expression_value(pod: Pod, term: int, expr: int, value: str) -> Change:
    terms = copy.deepcopy(required_node_terms(pod))
    e = terms[term]["matchExpressions"][expr]
    before = _expr_text(e)
    e["values"] = [*(e.get("values") or []), value]
    return _set_required_terms(pod, terms, "relax-node-affinity",
                               f"allow {e.get('key')}={value} in required node affinity ({before} → {_expr_text(e)})",
                               {"term": term, "expression": before, "value": value})


def spread_change(pod: Pod, index: int, *, max_skew: int | None = None, schedule_anyway: bool = False) -> Change:
    """Raise one topology spread constraint's maxSkew, or make it ScheduleAnyway."""
    raws = [dict(c) for c in _spec(pod.raw).get("topologySpreadConstraints") or []]
    c = raws[index]
    key = str(c.get("topologyKey") or "")
    if schedule_anyway:
        c["whenUnsatisfiable"] = "ScheduleAnyway"
        kind, text = "spread-schedule-anyway", f"make the {key} spread constraint ScheduleAnyway"
        elem: dict[str, Any] = {"topologyKey": key, "whenUnsatisfiable": "ScheduleAnyway"}
    else:
        kind, text = "spread-max-skew", f"raise the {key} spread constraint's maxSkew from {c.get('maxSkew')} to {max_skew}"
        c["maxSkew"] = max_skew
        elem = {"topologyKey": key, "maxSkew": max_skew}
    same_key = sum(1 for o in raws if o.get("topologyKey") == key)
    items: list[Any] = [elem] if same_key == 1 else [{"$patch": "replace"}, *raws]

    def edit(raw: dict[str, Any]) -> None:
        _spec(raw)["topologySpreadConstraints"] = raws

    return Change(kind, text, f"pod {pod.key}", {"spec": {"topologySpreadConstraints": items}},
                  pod=changed_pod(pod, edit), detail={"constraint": index, "topologyKey": key, "maxSkew": max_skew})


def drop_pod_affinity_term(pod: Pod, anti: bool, index: int) -> Change:
    field_name = "podAntiAffinity" if anti else "podAffinity"
    terms = list(((_spec(pod.raw).get("affinity") or {}).get(field_name) or {}).get(REQUIRED) or [])
    dropped = terms.pop(index)
    sel = (dropped.get("labelSelector") or {}) if isinstance(dropped, dict) else {}
    what = f"topologyKey {dropped.get('topologyKey')}" + (f", {_selector_text(sel)}" if sel else "")

    def edit(raw: dict[str, Any]) -> None:
        pa = _spec(raw).setdefault("affinity", {}).setdefault(field_name, {})
        if terms:
            pa[REQUIRED] = copy.deepcopy(terms)
        else:
            pa.pop(REQUIRED, None)

    kind = "drop-pod-anti-affinity-term" if anti else "drop-pod-affinity-term"
    label = "anti-affinity" if anti else "affinity"
    return Change(kind, f"drop required pod {label} term {index} ({what})", f"pod {pod.key}",
                  {"spec": {"affinity": {field_name: {REQUIRED: terms or None}}}}, pod=changed_pod(pod, edit),
                  detail={"term": index})


def _selector_text(sel: dict[str, Any]) -> str:
    parts = [f"{k}={v}" for k, v in (sel.get("matchLabels") or {}).items()]
    parts += [_expr_text(e) for e in sel.get("matchExpressions") or [] if isinstance(e, dict)]
    return ", ".join(parts)


def set_priority_class(pod: Pod, name: str, value: int) -> Change:
    """Use another PriorityClass: priority and preemptionPolicy are re-derived by admission.

    The Priority admission plugin refuses a pod that states a priority (or preemption policy) other
    than its class's, and a stored pod states the ones admission gave it for its old class: the
    patch deletes them (``null``) so that admission computes them again."""
    spec = _spec(pod.raw)
    patch: dict[str, Any] = {"priorityClassName": name}
    patch.update({k: None for k in ("priority", "preemptionPolicy") if k in spec})

    def edit(raw: dict[str, Any]) -> None:
        spec = _spec(raw)
        spec["priorityClassName"] = name
        spec.pop("priority", None)
        spec.pop("preemptionPolicy", None)

    return Change("priority-class", f"use PriorityClass {name} (priority {value}, now {pod.effective_priority})",
                  f"pod {pod.key}", {"spec": patch}, pod=changed_pod(pod, edit),
                  detail={"priorityClass": name, "priority": value})


# --------------------------------------------------------------------------- nodes


def changed_node(node: Node, edit: Callable[[dict[str, Any]], None]) -> Node:
    raw = copy.deepcopy(node.raw)
    raw.setdefault("spec", {})
    raw.setdefault("metadata", {})
    edit(raw)
    return Node(raw)


def _taint_dict(t: Taint) -> dict[str, Any]:
    d: dict[str, Any] = {"key": t.key}
    if t.value:
        d["value"] = t.value
    d["effect"] = t.effect
    return d


def uncordon(node: Node) -> Change:
    """``kubectl uncordon``: unschedulable off; the node lifecycle controller then drops its taint."""

    def edit(raw: dict[str, Any]) -> None:
        raw["spec"].pop("unschedulable", None)
        raw["spec"]["taints"] = [_taint_dict(t) for t in node.taints if t.key != UNSCHEDULABLE_TAINT]

    return Change("uncordon-node", f"uncordon node {node.name}", f"node {node.name}",
                  {"spec": {"unschedulable": False}}, node=changed_node(node, edit),
                  command=f"kubectl uncordon {node.name}")


def remove_taint(node: Node, taint: Taint) -> Change:
    remaining = [_taint_dict(t) for t in node.taints if t != taint]

    def edit(raw: dict[str, Any]) -> None:
        raw["spec"]["taints"] = remaining

    return Change("remove-taint", f"remove taint {taint} from node {node.name}", f"node {node.name}",
                  {"spec": {"taints": remaining or None}}, node=changed_node(node, edit),
                  command=f"kubectl taint node {node.name} {taint}-", detail={"taint": str(taint)})


def label_node(node: Node, labels: dict[str, str]) -> Change:
    def edit(raw: dict[str, Any]) -> None:
        raw["metadata"].setdefault("labels", {}).update(labels)

    pairs = " ".join(f"{k}={v}" for k, v in labels.items())
    overwrite = " --overwrite" if any(k in node.labels for k in labels) else ""
    return Change("label-node", f"label node {node.name} {pairs}", f"node {node.name}",
                  {"metadata": {"labels": dict(labels)}}, node=changed_node(node, edit),
                  command=f"kubectl label node {node.name} {pairs}{overwrite}", detail={"labels": dict(labels)})


@dataclass
class NodeGroup:
    """Nodes that share a group label value (or, without one, a shape); ``template`` is the most common."""

    name: str
    nodes: list[Node]
    template: Node


def _shape(node: Node) -> tuple[Any, ...]:
    labels = tuple(sorted((k, v) for k, v in node.labels.items() if k not in PER_NODE_LABELS))
    taints = tuple(sorted(str(t) for t in node.taints if t.key != UNSCHEDULABLE_TAINT))
    return tuple(sorted(node.allocatable.items())), taints, labels


def node_groups(cluster: Cluster) -> list[NodeGroup]:
    """The cluster's node groups, by the first well-known group label every node carries, else by shape."""
    key = next((k for k in NODE_GROUP_LABELS if cluster.nodes and all(k in n.labels for n in cluster.nodes)), None)
    members: dict[str, list[Node]] = {}
    for n in cluster.nodes:
        name = f"{key}={n.labels[key]}" if key else f"shape of {n.name}"
        if key is None:
            name = next((g for g, ns in members.items() if _shape(ns[0]) == _shape(n)), name)
        members.setdefault(name, []).append(n)
    out = []
    for name, nodes in members.items():
        common = Counter(_shape(n) for n in nodes).most_common(1)[0][0]
        out.append(NodeGroup(name, nodes, next(n for n in nodes if _shape(n) == common)))
    return out


def new_node_like(group: NodeGroup, taken: set[str]) -> Change:
    """One more node of ``group``: the template's labels, taints and allocatable, a fresh name, no images."""
    t = group.template
    base = f"{t.name}-new"
    name = next(f"{base}-{i}" for i in itertools.count(1) if f"{base}-{i}" not in taken)
    taints = [_taint_dict(x) for x in t.taints if x.key != UNSCHEDULABLE_TAINT]
    status = t.raw.get("status") or {}
    alloc = copy.deepcopy(status.get("allocatable") or status.get("capacity") or {})
    labels = dict(t.labels)
    if HOSTNAME_LABEL in labels:
        labels[HOSTNAME_LABEL] = name
    raw: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "uid": f"kschedctl-new-node-{name}", "labels": labels},
        "spec": {"taints": taints} if taints else {},
        "status": {
            "capacity": copy.deepcopy(status.get("capacity") or alloc),
            "allocatable": alloc,
            "conditions": copy.deepcopy(status.get("conditions") or []),
        },
    }
    shape = {"metadata": {"labels": labels}, "spec": {"taints": taints} if taints else {}, "status": {"allocatable": alloc}}
    return Change("add-node", f"add one node like {t.name} (node group {group.name})", f"new node {name}", shape,
                  node=Node(raw), detail={"group": group.name, "template": t.name, "groupSize": len(group.nodes)})
