"""Test helpers for plugin authors, and for kschedctl's own tests: build objects, run a cycle.

Plugins are tested against kschedctl's real types. This module builds them without YAML walls
and without kschedctl's internals (docs/plugin-api.md §7 walks through a plugin's tests):

* ``make_pod("web").req(cpu="500m").gpus(1)``, ``make_node("gpu-0").gpus(4)``, ``make_object(...)``:
  builders that produce the raw Kubernetes dictionaries and parse them as a snapshot file is
  parsed (API-server defaulting included); ``.build()`` gives the ``Pod`` / ``Node``.
* ``node_info(node, *pods)``: a ``NodeInfo`` with pods on it (their requests, GPUs included,
  add up in ``requested``), for calling Filter and Score directly.
* ``make_cluster(nodes, pods, objects)`` or ``cluster_from_yaml(text)``: a ``Cluster``;
  ``make_snapshot(...)``: the framework ``Snapshot`` over one.
* ``SnapshotHandle(cluster_or_snapshot)``: a ``Handle`` for ``new(args, handle)``, the runtime's own
  Framework over that snapshot, with no plugins of its own.
* ``load_config(text_or_dict_or_path, plugins=[...])``: a validated KubeSchedulerConfiguration
  (YAML text, a dict, or a ``pathlib.Path``), with the out-of-tree plugins' args checked
  against their ``ARGS_MODEL``; ``registry(*plugins)``: the in-tree plugins plus these.
* ``schedule(pod, config=..., nodes=..., pods=..., plugins=[...])``: one scheduling cycle, as
  ``kschedctl explain pod`` runs it, returning the ``Trace`` (``trace.selected_node``,
  ``trace.filter[node].status``, ``trace.score[plugin].raw``, ``trace.to_dict()`` for the JSON
  of ``-o json``).

``plugins`` arguments take plugin modules (the module objects, or dotted names to import);
entry points of installed distributions are not loaded, so a test sees only what it names.
"""

from __future__ import annotations

import copy
import importlib
import itertools
from collections.abc import Iterable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import yaml

from kschedctl.config.types import SchedulerConfig
from kschedctl.explain.trace import Trace
from kschedctl.framework.nodeinfos import Snapshot
from kschedctl.framework.registry import Registry, register_plugin_object
from kschedctl.framework.runtime import Framework
from kschedctl.framework.types import NodeInfo
from kschedctl.kube.features import Features
from kschedctl.kube.versions import DEFAULT_FEATURES
from kschedctl.snapshot.cluster import KNOWN_KINDS, Cluster
from kschedctl.snapshot.model import KubeObject, Node, Pod

__all__ = [
    "GPU",
    "NodeBuilder",
    "PodBuilder",
    "SnapshotHandle",
    "cluster_from_yaml",
    "load_config",
    "make_cluster",
    "make_node",
    "make_object",
    "make_pod",
    "make_snapshot",
    "node_info",
    "registry",
    "schedule",
]

#: The extended resource ``gpus()`` uses unless told otherwise.
GPU = "nvidia.com/gpu"

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
        spec: dict[str, Any] = self.raw["spec"]
        return spec

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

    def gpus(self, count: int, resource: str = GPU) -> PodBuilder:
        """Ask for ``count`` GPUs (an extended resource: the same request and limit) on the last container."""
        c = self.spec["containers"][-1]
        res = c.setdefault("resources", {})
        res.setdefault("requests", {})[resource] = str(count)
        res.setdefault("limits", {})[resource] = str(count)
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
        return Pod.from_raw(copy.deepcopy(self.raw))


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
        """Set these allocatable resources, keeping the others (``.alloc(cpu="16")`` keeps the default 16Gi of
        memory and 110 pods); ``ephemeral_storage`` -> ``ephemeral-storage``. ``alloc_only`` replaces them all."""
        self.raw["status"]["allocatable"].update(_names(res))
        return self

    def alloc_only(self, **res: str) -> NodeBuilder:
        """Replace allocatable by exactly these resources: any left out (memory, pods) are zero on the node."""
        self.raw["status"]["allocatable"] = _names(res)
        return self

    def alloc_extra(self, resources: dict[str, str]) -> NodeBuilder:
        """Add resources with arbitrary names to allocatable (``{"example.com/fpga": "2"}``)."""
        self.raw["status"]["allocatable"].update(resources)
        return self

    def gpus(self, count: int, resource: str = GPU) -> NodeBuilder:
        """``count`` GPUs in allocatable (the pods using them are added with ``node_info`` or ``make_cluster``)."""
        return self.alloc_extra({resource: str(count)})

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
    """Any other kind: ``make_object("PersistentVolumeClaim", "data", "default", spec={...})``;
    ``labels=`` and ``annotations=`` go into metadata, other fields (``apiVersion``, ``spec``...)
    into the object."""
    raw: dict[str, Any] = {"kind": kind, "metadata": {"name": name}}
    if namespace:
        raw["metadata"]["namespace"] = namespace
    for key in ("labels", "annotations"):
        if key in fields:
            raw["metadata"][key] = fields.pop(key)
    raw.update(fields)
    return KubeObject(raw, kind, KNOWN_KINDS.get(kind, bool(namespace)))


NodeLike = Node | NodeBuilder | dict[str, Any]
PodLike = Pod | PodBuilder | dict[str, Any]


def _node(n: NodeLike) -> Node:
    if isinstance(n, NodeBuilder):
        return n.build()
    return Node(copy.deepcopy(n)) if isinstance(n, dict) else n


def _pod(p: PodLike) -> Pod:
    if isinstance(p, PodBuilder):
        return p.build()
    return Pod.from_raw(copy.deepcopy(p)) if isinstance(p, dict) else p


def make_cluster(
    nodes: Sequence[NodeLike] = (),
    pods: Sequence[PodLike] = (),
    objects: Sequence[KubeObject] = (),
) -> Cluster:
    """A Cluster of these nodes, pods (a pod with ``.node(name)`` runs there) and other objects."""
    c = Cluster()
    for n in nodes:
        c.add_node(_node(n))
    for p in pods:
        c.add_pod(_pod(p))
    for o in objects:
        c.add_object(o)
    c.finish()
    return c


def cluster_from_yaml(text: str, *, source: str = "<yaml>") -> Cluster:
    """A Cluster from snapshot text (YAML documents, JSON, ``kind: List``), read as ``--snapshot`` reads files."""
    from kschedctl.snapshot.loader import build_cluster, parse_documents

    return build_cluster(parse_documents(source, text))


def make_snapshot(
    nodes: Sequence[NodeLike] = (),
    pods: Sequence[PodLike] = (),
    objects: Sequence[KubeObject] = (),
    features: Features = DEFAULT_FEATURES,
) -> Snapshot:
    """The framework's Snapshot (NodeInfos in kube-scheduler's node order) of ``make_cluster(...)``, for the
    version ``features`` (a plugin built over it must follow the same)."""
    return Snapshot(make_cluster(nodes, pods, objects), features=features)


def node_info(node: NodeLike, *pods: PodLike) -> NodeInfo:
    """A NodeInfo with the given pods on it (a builder's nodeName is set to the node): their requests
    add up in ``requested`` / ``non_zero_requested``, as on a node of a snapshot."""
    n = _node(node)
    ni = NodeInfo(n)
    for p in pods:
        ni.add_pod(p.node(n.name).build() if isinstance(p, PodBuilder) else _pod(p))
    return ni


def SnapshotHandle(source: Cluster | Snapshot | None = None, features: Features = DEFAULT_FEATURES) -> Framework:
    """A plugin's ``Handle`` over a snapshot, for building a plugin with ``new(args, handle)`` in a test:
    the runtime's own Framework (``kschedctl.plugins.bare_framework``), whose ``snapshot``, ``cluster`` and
    ``features`` are real. It runs no other plugin but the queue-sort and bind plugins every profile has,
    so ``run_filter_plugins_with_nominated_pods`` and the PreFilter extension calls return Success, and
    ``extenders`` is empty. To run a plugin together with others, use ``schedule``."""
    from kschedctl.plugins import bare_framework

    snapshot = source if isinstance(source, Snapshot) or source is None else Snapshot(source, features=features)
    return bare_framework(snapshot, features)


PluginLike = ModuleType | str | Any


def registry(*plugins: PluginLike) -> Registry:
    """The in-tree plugins plus these out-of-tree ones (modules, dotted module names, or any object
    with ``NAME`` and ``new``), as ``--plugin-module`` registers them."""
    from kschedctl.plugins import in_tree_registry

    r = in_tree_registry()
    for p in plugins:
        mod = importlib.import_module(p) if isinstance(p, str) else p
        name = getattr(mod, "__name__", type(mod).__name__)
        register_plugin_object(r, mod, source=f"module {name}", module=name)
    return r


ConfigLike = str | dict[str, Any] | Path | SchedulerConfig | None


def load_config(
    config: ConfigLike = None,
    plugins: Iterable[PluginLike] = (),
    *,
    reg: Registry | None = None,
    features: Features = DEFAULT_FEATURES,
) -> SchedulerConfig:
    """A KubeSchedulerConfiguration, defaulted and validated as ``--config`` is: YAML (or JSON) text,
    an already parsed dict, a ``pathlib.Path`` to a file, or None for the defaults. The args of
    the enabled ``plugins`` are validated with their ``ARGS_MODEL`` (a ``ConfigError`` when invalid).
    ``features``: the version and gates (``kschedctl.kube.versions.resolve_features``), v1.35 by default."""
    from kschedctl.config import load_config as load_file
    from kschedctl.config import parse_config

    if isinstance(config, SchedulerConfig):
        return config
    r = reg if reg is not None else registry(*plugins)
    if config is None or isinstance(config, Path):
        return load_file(None if config is None else str(config), r, features)
    data = yaml.safe_load(config) if isinstance(config, str) else copy.deepcopy(config)
    if not isinstance(data, dict):
        from kschedctl.errors import ConfigError

        raise ConfigError("a KubeSchedulerConfiguration must be a mapping")
    return parse_config(data, "<config>", r, features)


def schedule(
    pod: PodLike,
    config: ConfigLike = None,
    *,
    nodes: Sequence[NodeLike] = (),
    pods: Sequence[PodLike] = (),
    objects: Sequence[KubeObject] = (),
    cluster: Cluster | str | None = None,
    plugins: Iterable[PluginLike] = (),
    details: bool = False,
    features: Features = DEFAULT_FEATURES,
) -> Trace:
    """Run one scheduling cycle for ``pod`` as ``kschedctl explain pod`` does and return its Trace.

    The cluster is ``cluster`` (a Cluster, or snapshot YAML text) plus ``nodes``, ``pods`` and
    ``objects``; ``config`` as for ``load_config`` (None: the defaults); ``plugins`` the
    out-of-tree plugins the configuration may enable. ``details`` adds what ``-o json`` adds
    (per-node figures, the plugins' own ``explain``/``explain_node``). ``features``: the version
    the cycle follows (its configuration defaults and plugin rules), v1.35 by default."""
    from kschedctl.explain.cycle import explain_pod

    r = registry(*plugins)
    cfg = load_config(config, reg=r, features=features)
    base = cluster_from_yaml(cluster) if isinstance(cluster, str) else cluster
    if base is not None:  # a new Cluster: the caller's stays as it was
        nodes = [*base.nodes, *nodes]
        pods = [*base.pods, *pods]
        objects = [o for kind in base.objects.values() for o in kind] + list(objects)
    return explain_pod(make_cluster(nodes, pods, objects), _pod(pod), cfg, r, details=details)


#: Kept for kschedctl's own tests, which call it by this name.
FakeHandle = SnapshotHandle


def _names(d: dict[str, str]) -> dict[str, str]:
    return {k.replace("_", "-"): v for k, v in d.items()}


def _set_path(raw: dict[str, Any], path: str, value: Any) -> None:
    parts = path.split(".")
    cur = raw
    for p in parts[:-1]:
        cur = cur.setdefault(p, {})
    cur[parts[-1]] = value
