"""Test builders: ``make_pod("web").req(cpu="500m").toleration(...)`` instead of YAML walls.

Builders produce the raw Kubernetes dictionaries and run them through the same
model constructors (and API-server defaulting) the loader uses, so unit tests
exercise exactly what a snapshot file would.
"""

from __future__ import annotations

import copy
import itertools
from typing import Any

from kschedctl.framework.snapshot import Snapshot
from kschedctl.framework.types import NodeInfo
from kschedctl.snapshot.cluster import KNOWN_KINDS, Cluster
from kschedctl.snapshot.model import KubeObject, Node, Pod

_uid = itertools.count(1)


class PodBuilder:
    def __init__(self, name: str, namespace: str = "default") -> None:
        self.raw: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace, "uid": f"uid-{name}-{next(_uid)}", "labels": {}},
            "spec": {"containers": [{"name": "c0", "image": "busybox"}]},
            "status": {"phase": "Pending"},
        }

    # metadata --------------------------------------------------------------------
    def ns(self, namespace: str) -> PodBuilder:
        self.raw["metadata"]["namespace"] = namespace
        return self

    def uid(self, uid: str) -> PodBuilder:
        self.raw["metadata"]["uid"] = uid
        return self

    def label(self, key: str, value: str) -> PodBuilder:
        self.raw["metadata"]["labels"][key] = value
        return self

    def labels(self, **labels: str) -> PodBuilder:
        self.raw["metadata"]["labels"].update(labels)
        return self

    def annotation(self, key: str, value: str) -> PodBuilder:
        self.raw["metadata"].setdefault("annotations", {})[key] = value
        return self

    def owner(self, kind: str, name: str, uid: str = "", controller: bool = True) -> PodBuilder:
        self.raw["metadata"].setdefault("ownerReferences", []).append(
            {"apiVersion": "apps/v1", "kind": kind, "name": name, "uid": uid or f"uid-{name}", "controller": controller}
        )
        return self

    def created(self, ts: str) -> PodBuilder:
        self.raw["metadata"]["creationTimestamp"] = ts
        return self

    # spec ------------------------------------------------------------------------
    @property
    def spec(self) -> dict[str, Any]:
        return self.raw["spec"]  # type: ignore[no-any-return]

    def container(self, name: str = "", image: str = "busybox", **requests: str) -> PodBuilder:
        """Add a container (the first call replaces the default container)."""
        cs = self.spec["containers"]
        if len(cs) == 1 and cs[0]["name"] == "c0" and "resources" not in cs[0] and not getattr(self, "_touched", False):
            cs.clear()
        self._touched = True
        c: dict[str, Any] = {"name": name or f"c{len(cs)}", "image": image}
        if requests:
            c["resources"] = {"requests": dict(requests)}
        cs.append(c)
        return self

    def req(self, **requests: str) -> PodBuilder:
        """Set requests on the last container (``ephemeral_storage`` -> ``ephemeral-storage``)."""
        c = self.spec["containers"][-1]
        c.setdefault("resources", {}).setdefault("requests", {}).update(_names(requests))
        self._touched = True
        return self

    def lim(self, **limits: str) -> PodBuilder:
        c = self.spec["containers"][-1]
        c.setdefault("resources", {}).setdefault("limits", {}).update(_names(limits))
        self._touched = True
        return self

    def res(self, requests: dict[str, str]) -> PodBuilder:
        """Requests with arbitrary resource names (``nvidia.com/gpu``)."""
        c = self.spec["containers"][-1]
        c.setdefault("resources", {}).setdefault("requests", {}).update(requests)
        self._touched = True
        return self

    def init_container(self, name: str = "init", sidecar: bool = False, **requests: str) -> PodBuilder:
        c: dict[str, Any] = {"name": name, "image": "busybox"}
        if requests:
            c["resources"] = {"requests": _names(requests)}
        if sidecar:
            c["restartPolicy"] = "Always"
        self.spec.setdefault("initContainers", []).append(c)
        return self

    def pod_level(self, requests: dict[str, str] | None = None, limits: dict[str, str] | None = None) -> PodBuilder:
        r: dict[str, Any] = {}
        if requests:
            r["requests"] = requests
        if limits:
            r["limits"] = limits
        self.spec["resources"] = r
        return self

    def overhead(self, **res: str) -> PodBuilder:
        self.spec["overhead"] = _names(res)
        return self

    def image(self, image: str) -> PodBuilder:
        self.spec["containers"][-1]["image"] = image
        return self

    def host_port(self, port: int, protocol: str = "TCP", host_ip: str = "", container_port: int | None = None) -> PodBuilder:
        c = self.spec["containers"][-1]
        p: dict[str, Any] = {"containerPort": container_port or port, "hostPort": port, "protocol": protocol}
        if host_ip:
            p["hostIP"] = host_ip
        c.setdefault("ports", []).append(p)
        return self

    def node(self, node_name: str) -> PodBuilder:
        self.spec["nodeName"] = node_name
        self.raw["status"]["phase"] = "Running"
        return self

    def nominated(self, node_name: str) -> PodBuilder:
        self.raw["status"]["nominatedNodeName"] = node_name
        return self

    def phase(self, phase: str) -> PodBuilder:
        self.raw["status"]["phase"] = phase
        return self

    def priority(self, value: int, preemption_policy: str | None = None) -> PodBuilder:
        self.spec["priority"] = value
        if preemption_policy:
            self.spec["preemptionPolicy"] = preemption_policy
        return self

    def priority_class(self, name: str) -> PodBuilder:
        self.spec["priorityClassName"] = name
        return self

    def scheduler(self, name: str) -> PodBuilder:
        self.spec["schedulerName"] = name
        return self

    def node_selector(self, **labels: str) -> PodBuilder:
        self.spec.setdefault("nodeSelector", {}).update(labels)
        return self

    def toleration(self, key: str = "", value: str = "", effect: str = "", operator: str = "Equal") -> PodBuilder:
        t: dict[str, Any] = {"operator": operator}
        if key:
            t["key"] = key
        if value:
            t["value"] = value
        if effect:
            t["effect"] = effect
        self.spec.setdefault("tolerations", []).append(t)
        return self

    def gate(self, name: str) -> PodBuilder:
        self.spec.setdefault("schedulingGates", []).append({"name": name})
        return self

    def node_affinity_required(self, *terms: list[dict[str, Any]]) -> PodBuilder:
        """Each term is a list of matchExpressions dicts: ``{"key":..,"operator":..,"values":[..]}``."""
        na = self.spec.setdefault("affinity", {}).setdefault("nodeAffinity", {})
        na["requiredDuringSchedulingIgnoredDuringExecution"] = {
            "nodeSelectorTerms": [{"matchExpressions": list(t)} for t in terms]
        }
        return self

    def node_affinity_preferred(self, weight: int, expressions: list[dict[str, Any]]) -> PodBuilder:
        na = self.spec.setdefault("affinity", {}).setdefault("nodeAffinity", {})
        na.setdefault("preferredDuringSchedulingIgnoredDuringExecution", []).append(
            {"weight": weight, "preference": {"matchExpressions": expressions}}
        )
        return self

    def pod_affinity(
        self,
        kind: str,
        topology_key: str,
        match_labels: dict[str, str] | None = None,
        *,
        anti: bool = False,
        weight: int | None = None,
        namespaces: list[str] | None = None,
        namespace_selector: dict[str, Any] | None = None,
        label_selector: dict[str, Any] | None = None,
    ) -> PodBuilder:
        """``kind`` is "required" or "preferred"."""
        key = "podAntiAffinity" if anti else "podAffinity"
        pa = self.spec.setdefault("affinity", {}).setdefault(key, {})
        term: dict[str, Any] = {"topologyKey": topology_key}
        if label_selector is not None:
            term["labelSelector"] = label_selector
        elif match_labels is not None:
            term["labelSelector"] = {"matchLabels": match_labels}
        if namespaces is not None:
            term["namespaces"] = namespaces
        if namespace_selector is not None:
            term["namespaceSelector"] = namespace_selector
        if kind == "required":
            pa.setdefault("requiredDuringSchedulingIgnoredDuringExecution", []).append(term)
        else:
            pa.setdefault("preferredDuringSchedulingIgnoredDuringExecution", []).append(
                {"weight": weight or 1, "podAffinityTerm": term}
            )
        return self

    def spread(
        self,
        max_skew: int,
        topology_key: str,
        when: str = "DoNotSchedule",
        match_labels: dict[str, str] | None = None,
        **extra: Any,
    ) -> PodBuilder:
        c: dict[str, Any] = {"maxSkew": max_skew, "topologyKey": topology_key, "whenUnsatisfiable": when}
        if match_labels is not None:
            c["labelSelector"] = {"matchLabels": match_labels}
        c.update(extra)
        self.spec.setdefault("topologySpreadConstraints", []).append(c)
        return self

    def volume(self, volume: dict[str, Any]) -> PodBuilder:
        self.spec.setdefault("volumes", []).append(volume)
        return self

    def pvc(self, claim: str, name: str = "", read_only: bool = False) -> PodBuilder:
        v: dict[str, Any] = {"name": name or claim, "persistentVolumeClaim": {"claimName": claim}}
        if read_only:
            v["persistentVolumeClaim"]["readOnly"] = True
        return self.volume(v)

    def resource_claim(self, name: str, claim_name: str | None = None, template: str | None = None) -> PodBuilder:
        rc: dict[str, Any] = {"name": name}
        if claim_name:
            rc["resourceClaimName"] = claim_name
        if template:
            rc["resourceClaimTemplateName"] = template
        self.spec.setdefault("resourceClaims", []).append(rc)
        return self

    def set(self, path: str, value: Any) -> PodBuilder:
        """Escape hatch: set any dotted path in the raw object (``spec.hostNetwork``)."""
        _set_path(self.raw, path, value)
        return self

    def build(self) -> Pod:
        return Pod(copy.deepcopy(self.raw))


class NodeBuilder:
    def __init__(self, name: str) -> None:
        self.raw: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": name, "uid": f"uid-node-{name}", "labels": {"kubernetes.io/hostname": name}},
            "spec": {},
            "status": {"allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110"}, "images": []},
        }

    def label(self, key: str, value: str) -> NodeBuilder:
        self.raw["metadata"]["labels"][key] = value
        return self

    def labels(self, **labels: str) -> NodeBuilder:
        self.raw["metadata"]["labels"].update(labels)
        return self

    def zone(self, zone: str, region: str = "") -> NodeBuilder:
        self.label("topology.kubernetes.io/zone", zone)
        if region:
            self.label("topology.kubernetes.io/region", region)
        return self

    def alloc(self, **res: str) -> NodeBuilder:
        """Replace allocatable (``ephemeral_storage`` -> ``ephemeral-storage``)."""
        self.raw["status"]["allocatable"] = _names(res)
        return self

    def alloc_extra(self, resources: dict[str, str]) -> NodeBuilder:
        self.raw["status"]["allocatable"].update(resources)
        return self

    def taint(self, key: str, value: str = "", effect: str = "NoSchedule") -> NodeBuilder:
        t: dict[str, Any] = {"key": key, "effect": effect}
        if value:
            t["value"] = value
        self.raw["spec"].setdefault("taints", []).append(t)
        return self

    def unschedulable(self, flag: bool = True) -> NodeBuilder:
        self.raw["spec"]["unschedulable"] = flag
        return self

    def image(self, *names: str, size: int) -> NodeBuilder:
        self.raw["status"]["images"].append({"names": list(names), "sizeBytes": size})
        return self

    def set(self, path: str, value: Any) -> NodeBuilder:
        _set_path(self.raw, path, value)
        return self

    def build(self) -> Node:
        return Node(copy.deepcopy(self.raw))


def make_pod(name: str = "pod", namespace: str = "default") -> PodBuilder:
    return PodBuilder(name, namespace)


def make_node(name: str = "node") -> NodeBuilder:
    return NodeBuilder(name)


def make_object(kind: str, name: str, namespace: str = "", **fields: Any) -> KubeObject:
    """Any other kind: ``make_object("PersistentVolumeClaim", "data", "default", spec={...})``."""
    raw: dict[str, Any] = {"kind": kind, "metadata": {"name": name}}
    if namespace:
        raw["metadata"]["namespace"] = namespace
    if "labels" in fields:
        raw["metadata"]["labels"] = fields.pop("labels")
    raw.update(fields)
    return KubeObject(raw, kind, KNOWN_KINDS.get(kind, bool(namespace)))


def make_cluster(
    nodes: list[Node | NodeBuilder] = (),  # type: ignore[assignment]
    pods: list[Pod | PodBuilder] = (),  # type: ignore[assignment]
    objects: list[KubeObject] = (),  # type: ignore[assignment]
) -> Cluster:
    c = Cluster()
    for n in nodes:
        c.add_node(n.build() if isinstance(n, NodeBuilder) else n)
    for p in pods:
        c.add_pod(p.build() if isinstance(p, PodBuilder) else p)
    for o in objects:
        c.add_object(o)
    c.finish()
    return c


def make_snapshot(
    nodes: list[Node | NodeBuilder] = (),  # type: ignore[assignment]
    pods: list[Pod | PodBuilder] = (),  # type: ignore[assignment]
    objects: list[KubeObject] = (),  # type: ignore[assignment]
) -> Snapshot:
    return Snapshot(make_cluster(nodes, pods, objects))


def node_info(node: Node | NodeBuilder, *pods: Pod | PodBuilder) -> NodeInfo:
    """A NodeInfo with the given pods on it (their nodeName is set to the node)."""
    n = node.build() if isinstance(node, NodeBuilder) else node
    ni = NodeInfo(n)
    for p in pods:
        pod = p.node(n.name).build() if isinstance(p, PodBuilder) else p
        ni.add_pod(pod)
    return ni


class FakeHandle:
    """A Handle over a snapshot, for plugins that read the cluster (tests only)."""

    def __init__(self, snapshot: Snapshot | None = None) -> None:
        self._snapshot = snapshot or Snapshot(Cluster())

    @property
    def snapshot(self) -> Snapshot:
        return self._snapshot

    @property
    def cluster(self) -> Cluster:
        return self._snapshot.cluster

    def run_filter_plugins_with_nominated_pods(self, state: Any, pod: Pod, node_info: NodeInfo) -> Any:
        raise NotImplementedError

    def run_pre_filter_extension_add_pod(self, state: Any, pod: Pod, pi: Any, ni: NodeInfo) -> Any:
        raise NotImplementedError

    def run_pre_filter_extension_remove_pod(self, state: Any, pod: Pod, pi: Any, ni: NodeInfo) -> Any:
        raise NotImplementedError


def _names(d: dict[str, str]) -> dict[str, str]:
    return {k.replace("_", "-"): v for k, v in d.items()}


def _set_path(raw: dict[str, Any], path: str, value: Any) -> None:
    parts = path.split(".")
    cur = raw
    for p in parts[:-1]:
        cur = cur.setdefault(p, {})
    cur[parts[-1]] = value
