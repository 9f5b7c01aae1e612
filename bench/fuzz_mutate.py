"""Mutations of corpus scenarios for bench/fuzz.py: new seeds of the same generator families.

A scenario is its documents (cluster.yaml, the pod or pods to schedule, config.yaml and, for
extender scenarios, extender.json). Each mutation changes one thing the way the families vary:
node sizes, labels, taints and cordons; bound pods moved, cloned, removed, relabelled, resized,
reprioritised, terminating or nominated; the incoming pod's requests, priority, tolerations,
selectors, node and pod (anti-)affinity terms, spread constraints, ports, gates, overhead and
sidecars; PodDisruptionBudgets; DRA slices, claims and classes; volumes and storage capacity; and
the configuration (strategies, weights, percentageOfNodesToScore, disabled plugins, plugin args);
nodes crowded with equal pods across namespaces (preemption victims among equals).
A generic mutation changes any leaf to a value of the same field seen elsewhere in the scenario
(or a nearby number), so every field the corpus uses is varied. ``repair`` then restores what the
API server would insist on (operators and their values, limits >= requests, …); what is still
invalid is refused by kschedctl and counted apart by the driver. Standard library and PyYAML only
(plus kschedctl's quantity parser).
"""

from __future__ import annotations

import copy
import random
import re
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from kschedctl.kube.quantity import QuantityError, format_quantity, parse_quantity

Doc = dict[str, Any]
Path_ = tuple[Any, ...]


@dataclass
class Scenario:
    """The documents of one scenario, as plain data."""

    kind: str  # "conformance" | "sequence" | "extender"
    cluster: list[Doc]
    pods: list[Doc]  # pod.yaml (one pod) or pods.yaml (many)
    config: Doc | None
    extender: Doc | None = None
    log: list[str] = field(default_factory=list)

    def nodes(self) -> list[Doc]:
        return [d for d in self.cluster if d.get("kind") == "Node"]

    def node_names(self) -> list[str]:
        return [n["metadata"]["name"] for n in self.nodes()]

    def of_kind(self, kind: str) -> list[Doc]:
        return [d for d in self.cluster if d.get("kind") == kind]

    def bound_pods(self) -> list[Doc]:
        return [d for d in self.cluster if d.get("kind") == "Pod" and (d.get("spec") or {}).get("nodeName")]

    def cluster_pods(self) -> list[Doc]:
        return self.of_kind("Pod")


# ---------------------------------------------------------------------------------------------
# helpers


def _spec(d: Doc) -> Doc:
    return d.setdefault("spec", {}) if isinstance(d.get("spec"), dict) or "spec" not in d else d["spec"]


def _meta(d: Doc) -> Doc:
    return d.setdefault("metadata", {})


def _labels(d: Doc) -> dict[str, str]:
    m = _meta(d)
    if not isinstance(m.get("labels"), dict):
        m["labels"] = {}
    return m["labels"]


def _relabel(rng: random.Random, kind: str, obj: Doc, keys: list[str], pools: Pools) -> str | None:
    """Remove one of ``keys`` from the object's labels (sometimes) or set it to a value from the pools."""
    if not keys:
        return None
    labels = _labels(obj)
    key = rng.choice(keys)
    if key in labels and rng.random() < 0.3:
        del labels[key]
        return f"{kind} {obj['metadata']['name']} label {key} removed"
    labels[key] = pools.label_value(rng, key)
    return f"{kind} {obj['metadata']['name']} label {key}={labels[key]}"


def _containers(pod: Doc) -> list[Doc]:
    return [c for c in (_spec(pod).get("containers") or []) if isinstance(c, dict)]


def walk(x: Any, path: Path_ = ()) -> Iterator[tuple[Path_, Any]]:
    """Every node of a document with its path (leaves and containers)."""
    yield path, x
    if isinstance(x, dict):
        for k, v in list(x.items()):
            yield from walk(v, (*path, k))
    elif isinstance(x, list):
        for i, v in enumerate(list(x)):
            yield from walk(v, (*path, i))


def get(x: Any, path: Path_) -> Any:
    for p in path:
        x = x[p]
    return x


def last_key(path: Path_) -> str:
    for p in reversed(path):
        if isinstance(p, str):
            return p
    return ""


QUANTITY = re.compile(r"^[0-9]+(\.[0-9]+)?(m|k|Ki|Mi|Gi|Ti|M|G|T)?$")
RESOURCE_PARENTS = {"requests", "limits", "allocatable", "capacity", "overhead"}


def scale_quantity(v: Any, factor: Fraction, resource: str = "") -> Any:
    """``v`` times ``factor``, written as a quantity of the same kind (int stays int)."""
    try:
        q = parse_quantity(v)
    except (QuantityError, ValueError, TypeError):
        return v
    new = q * factor
    if isinstance(v, int) and not isinstance(v, bool):
        return max(0, int(new))
    if resource in ("pods",) or resource.startswith(("nvidia.com/", "example.com/", "amd.com/")) or "/" in resource:
        return str(max(0, int(new)))
    if resource == "cpu":
        milli = max(0, int(new * 1000))
        return odd_format(milli, "cpu") if _RNG.random() < 0.3 else f"{milli}m"
    if _RNG.random() < 0.3:
        return odd_format(max(0, int(new)), resource)
    return format_quantity(Fraction(max(0, int(new))), resource)


def odd_format(amount: int, resource: str) -> str:
    """The same (or nearly the same) amount written another way: decimals, SI or binary suffixes, exponents."""
    r = _RNG.random()
    if resource == "cpu":  # amount in millicores
        if r < 0.3:
            return f"{amount / 1000:g}"
        if r < 0.5:
            return f"{amount / 1000:.4f}"  # e.g. 1.2500 (or a value that rounds up to the next millicore)
        if r < 0.7:
            return f"{amount * 1000}u"
        if r < 0.85:
            return f"{amount}e-3"
        return f"{amount * 1_000_000}n"
    if r < 0.25:
        return f"{amount / (1 << 30):.3f}Gi"
    if r < 0.5:
        return f"{amount // 1000}k"
    if r < 0.7:
        return f"{amount / 1e9:.2f}G"
    if r < 0.85:
        return f"{amount / 1e6:.1f}M"
    return f"{amount / 1e6:.0f}e6"


#: The case's random source (``mutate`` sets it), for helpers called without one.
_RNG = random.Random(0)

FACTORS = [Fraction(0), Fraction(1, 4), Fraction(1, 2), Fraction(3, 4), Fraction(9, 10), Fraction(11, 10),
           Fraction(5, 4), Fraction(3, 2), Fraction(2), Fraction(3), Fraction(8)]


class Pools:
    """Values seen in the scenario, per field: what a mutation picks from."""

    def __init__(self, scn: Scenario) -> None:
        self.by_key: dict[str, set[Any]] = defaultdict(set)
        self.label_values: dict[str, set[str]] = defaultdict(set)
        self.node_label_keys: set[str] = set()
        self.pod_label_keys: set[str] = set()
        self.taints: list[Doc] = []
        docs = [*scn.cluster, *scn.pods, *([scn.config] if scn.config else [])]
        for d in docs:
            for path, v in walk(d):
                k = last_key(path)
                if isinstance(v, str | int | bool) and not isinstance(v, dict | list):
                    self.by_key[k].add(v)
                if isinstance(v, dict) and k in ("labels", "matchLabels", "nodeSelector"):
                    for lk, lv in v.items():
                        if isinstance(lv, str):
                            self.label_values[lk].add(lv)
                if isinstance(v, dict) and "key" in v and isinstance(v.get("values"), list):
                    for lv in v["values"]:
                        self.label_values[str(v["key"])].add(str(lv))
        for n in scn.nodes():
            self.node_label_keys.update(_labels(n))
            self.taints.extend(t for t in (_spec(n).get("taints") or []) if isinstance(t, dict))
        for p in [*scn.cluster_pods(), *scn.pods]:
            self.pod_label_keys.update(_labels(p))
        self.node_names = scn.node_names()
        self.namespaces = sorted({_meta(d).get("name") for d in scn.of_kind("Namespace")} - {None})
        self.priority_classes = sorted({_meta(d).get("name") for d in scn.of_kind("PriorityClass")} - {None})
        self.profiles = sorted({p.get("schedulerName") or "default-scheduler"
                                for p in ((scn.config or {}).get("profiles") or [{}]) if isinstance(p, dict)})

    def label_value(self, rng: random.Random, key: str) -> str:
        vals = sorted(self.label_values.get(key) or [])
        if vals and rng.random() < 0.85:
            return rng.choice(vals)
        return rng.choice(["fz-a", "fz-b", "1", "2", "true"])


ENUMS: dict[str, list[Any]] = {
    "effect": ["NoSchedule", "PreferNoSchedule", "NoExecute"],
    "whenUnsatisfiable": ["DoNotSchedule", "ScheduleAnyway"],
    "nodeAffinityPolicy": ["Honor", "Ignore"],
    "nodeTaintsPolicy": ["Honor", "Ignore"],
    "preemptionPolicy": ["PreemptLowerPriority", "Never"],
    "volumeBindingMode": ["Immediate", "WaitForFirstConsumer"],
    "allocationMode": ["ExactCount", "All"],
    "protocol": ["TCP", "UDP", "SCTP"],
    "defaultingType": ["System", "List"],
    "phase": ["Running", "Pending", "Running", "Succeeded"],
    "restartPolicy": ["Always", "OnFailure", "Never"],
}
ACCESS_MODES = ["ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod"]
SKIP_KEYS = {
    "apiVersion", "kind", "uid", "resourceVersion", "generation", "generateName", "creationTimestamp",
    "terminationMessagePath", "terminationMessagePolicy", "dnsPolicy", "imagePullPolicy", "serviceAccount",
    "serviceAccountName", "mountPath", "path", "defaultMode", "expirationSeconds", "lastTransitionTime",
    "message", "reason", "observedGeneration", "name", "fieldPath", "kubeconfig", "leaderElect", "qosClass",
    "blockOwnerDeletion", "controller", "enableServiceLinks", "readOnly", "sizeBytes", "hostIP", "podIP",
    "ip", "type", "status", "claimName", "resourceClaimName", "volumeName", "secretName",
    "configMap", "key_", "mountPropagation", "subPath", "containerPort", "targetPort", "port", "clusterIP",
}


def _int_mutation(rng: random.Random, k: str, v: int, pool: set[Any]) -> int:
    ints = sorted(x for x in pool if isinstance(x, int) and not isinstance(x, bool))
    if ints and rng.random() < 0.4:
        return rng.choice(ints)
    choices = [v - 1, v + 1, v * 2, v // 2, 0, 1, 2, 3]
    out = rng.choice(choices)
    lo = {"maxSkew": 1, "minDomains": 1, "weight": 1, "count": 1, "score": 0, "utilization": 0}.get(k, 0)
    hi = {"weight": 100, "percentageOfNodesToScore": 100, "utilization": 100, "score": 10,
          "hardPodAffinityWeight": 100}.get(k, 1 << 30)
    if k == "priority":
        return rng.choice([*ints, v - 1, v + 1, 0, 1000, -1, 2000000000]) if ints else v + rng.choice([-1000, 1000])
    return min(hi, max(lo, out))


def pick_doc(rng: random.Random, scn: Scenario) -> tuple[str, Doc]:
    """A document to change: the incoming pod(s) or the config often, else a kind of the cluster first
    (so the few PVs, PDBs or DRA objects are picked as often as the many nodes and pods), then one of it."""
    r = rng.random()
    if r < 0.4 and scn.pods:
        return "pod", rng.choice(scn.pods)
    if r < 0.5 and scn.config:
        return "config", scn.config
    kinds = sorted({d.get("kind", "") for d in scn.cluster} - {"Service"})
    if not kinds:
        return "pod", rng.choice(scn.pods)
    kind = rng.choice(kinds)
    return "cluster", rng.choice([d for d in scn.cluster if d.get("kind") == kind])


def mutate_leaf(rng: random.Random, scn: Scenario, pools: Pools) -> str | None:
    """Change one leaf of any document to a value of the same field seen elsewhere, or nearby."""
    where, doc = pick_doc(rng, scn)
    leaves = [(p, v) for p, v in walk(doc) if p and not isinstance(v, dict | list)
              and last_key(p) not in SKIP_KEYS and "annotations" not in p and "managedFields" not in p
              and "ownerReferences" not in p and "conditions" not in p and not (p[0] == "metadata" and p[-1] == "namespace" and where == "pod")]
    if not leaves:
        return None
    path, v = rng.choice(leaves)
    k = last_key(path)
    parent = get(doc, path[:-1])
    new: Any = v
    in_labels = len(path) >= 2 and isinstance(path[-1], str) and last_key(path[:-1]) in ("labels", "matchLabels", "nodeSelector")
    if in_labels:
        new = pools.label_value(rng, str(path[-1]))
    elif isinstance(path[-1], int) and k == "values" and isinstance(get(doc, path[:-2]), dict):
        new = pools.label_value(rng, str(get(doc, path[:-2]).get("key")))
    elif isinstance(v, bool):
        new = not v
    elif k in ENUMS:
        new = rng.choice(ENUMS[k])
    elif k == "accessModes" or (isinstance(path[-1], int) and k == "accessModes"):
        new = rng.choice(ACCESS_MODES)
    elif k == "operator":
        if "effect" in parent or "tolerationSeconds" in parent or last_key(path[:-2]) == "tolerations":
            new = rng.choice(["Exists", "Equal"])
        elif any(s in path for s in ("nodeSelectorTerms", "preference", "matchFields")):
            new = rng.choice(["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"])
        else:
            new = rng.choice(["In", "NotIn", "Exists", "DoesNotExist"])
    elif k in ("topologyKey",):
        new = rng.choice(sorted(pools.node_label_keys | {"kubernetes.io/hostname", "topology.kubernetes.io/zone"}))
    elif k == "key" and isinstance(parent, dict) and ("effect" in parent or "operator" in parent):
        keys = sorted(pools.node_label_keys) if "values" in parent or ("operator" in parent and "effect" not in parent) else sorted({t.get("key") for t in pools.taints} - {None})
        if not keys:
            return None
        new = rng.choice(keys)
    elif k in ("nodeName", "nominatedNodeName") and pools.node_names:
        new = rng.choice(pools.node_names)
    elif k == "priorityClassName" and pools.priority_classes:
        new = rng.choice(pools.priority_classes)
    elif k == "schedulerName" and pools.profiles:
        new = rng.choice(pools.profiles)
    elif k == "expression":
        new = rng.choice(cel_expressions(scn))
    elif isinstance(v, int):
        new = _int_mutation(rng, k, v, pools.by_key.get(k, set()))
    elif isinstance(v, str) and (last_key(path[:-1]) in RESOURCE_PARENTS or k in ("storage", "capacity", "maximumVolumeSize", "value", "sizeLimit")) and QUANTITY.match(v):
        res = path[-1] if isinstance(path[-1], str) else ""
        new = scale_quantity(v, rng.choice(FACTORS), res)
    elif isinstance(v, str):
        pool = sorted(x for x in pools.by_key.get(k, set()) if isinstance(x, str) and x != v)
        if not pool:
            return None
        new = rng.choice(pool)
    if new == v:
        return None
    parent[path[-1]] = new
    return f"leaf {where}:{_doc_name(doc)}.{'.'.join(map(str, path))}: {v!r} -> {new!r}"


def _doc_name(d: Doc) -> str:
    return f"{d.get('kind', '?')}/{(d.get('metadata') or {}).get('name', '')}"


DROP_DENY = {"apiVersion", "kind", "metadata", "spec", "name", "containers", "image", "selector", "key",
             "topologyKey", "labelSelector", "nodeSelectorTerms", "preference", "podAffinityTerm", "driver",
             "pool", "devices", "exactly", "deviceClassName", "requests", "operator", "maxSkew",
             "whenUnsatisfiable", "effect", "weight", "storageClassName", "claimName", "volumeMounts",
             "persistentVolumeClaim", "resourceClaims", "profiles", "schedulerName", "plugins", "args",
             "nodeTopology", "resources", "allocatable", "capacity", "values", "shape", "scoringStrategy",
             "accessModes", "volumes", "uid", "namespace"}
DROP_LIST_PARENTS = {"tolerations", "taints", "nodeSelectorTerms", "matchExpressions", "topologySpreadConstraints",
                     "preferredDuringSchedulingIgnoredDuringExecution", "requiredDuringSchedulingIgnoredDuringExecution",
                     "ports", "values", "devices", "initContainers", "containers", "schedulingGates", "images",
                     "matchLabelKeys", "mismatchLabelKeys", "namespaces", "defaultConstraints", "resources",
                     "enabled", "disabled", "pluginConfig", "selectors", "reservedFor", "names"}


def drop_something(rng: random.Random, scn: Scenario, pools: Pools) -> str | None:
    """Remove an optional key or a list element (a taint, a toleration, a term, a value, ...)."""
    _, doc = pick_doc(rng, scn)
    cands: list[Path_] = []
    for p, _ in walk(doc):
        if not p or "managedFields" in p or "annotations" in p or "ownerReferences" in p:
            continue
        if isinstance(p[-1], int):
            lst = get(doc, p[:-1])
            if last_key(p) in DROP_LIST_PARENTS and (len(lst) > 1 or last_key(p) not in ("containers", "values", "nodeSelectorTerms", "devices")):
                cands.append(p)
        elif p[-1] not in DROP_DENY and len(p) >= 2:
            cands.append(p)
    if not cands:
        return None
    p = rng.choice(cands)
    parent = get(doc, p[:-1])
    old = parent[p[-1]]
    del parent[p[-1]]
    return f"drop {_doc_name(doc)}.{'.'.join(map(str, p))} (was {_short(old)})"


def _short(v: Any) -> str:
    s = repr(v)
    return s if len(s) < 80 else s[:77] + "..."


def dup_something(rng: random.Random, scn: Scenario, pools: Pools) -> str | None:
    """Duplicate a list element (a term, a constraint, a toleration, a device, ...) with a fresh name."""
    groups: list[Doc] = [*scn.pods, *scn.pods, *[d for d in scn.cluster if d.get("kind") not in ("Namespace", "Pod", "Node")]]
    doc = rng.choice(groups)
    cands = [p for p, _ in walk(doc) if p and isinstance(p[-1], int) and last_key(p) in DROP_LIST_PARENTS - {"containers", "initContainers", "values", "names"}]
    if not cands:
        return None
    p = rng.choice(cands)
    lst = get(doc, p[:-1])
    item = copy.deepcopy(lst[p[-1]])
    if isinstance(item, dict) and "name" in item:
        item["name"] = f"{item['name']}-fz{rng.randrange(100)}"
    if isinstance(item, dict) and "hostPort" in item:
        item["hostPort"] = int(item["hostPort"]) + 1
    lst.insert(rng.randrange(len(lst) + 1), item)
    return f"dup {_doc_name(doc)}.{'.'.join(map(str, p))}"


# ---------------------------------------------------------------------------------------------
# nodes


def _fresh(rng: random.Random, base: str) -> str:
    return f"{base[:40]}-fz{rng.randrange(10**9)}"


def node_resources(rng: random.Random, scn: Scenario, pools: Pools) -> str | None:
    nodes = scn.nodes()
    if not nodes:
        return None
    n = rng.choice(nodes)
    st = n.setdefault("status", {})
    alloc = st.get("allocatable") or st.get("capacity") or {}
    if not alloc:
        return None
    res = rng.choice(sorted(alloc))
    f = rng.choice(FACTORS[1:])
    for k in ("allocatable", "capacity"):
        if isinstance(st.get(k), dict) and res in st[k]:
            st[k][res] = scale_quantity(st[k][res], f, res)
    return f"node {n['metadata']['name']} {res} x{f}"


def node_label(rng: random.Random, scn: Scenario, pools: Pools) -> str | None:
    nodes = scn.nodes()
    if not nodes:
        return None
    return _relabel(rng, "node", rng.choice(nodes), sorted(pools.node_label_keys - {"kubernetes.io/hostname"}), pools)


def node_taint(rng: random.Random, scn: Scenario, pools: Pools) -> str | None:
    nodes = scn.nodes()
    if not nodes:
        return None
    n = rng.choice(nodes)
    spec = _spec(n)
    taints = spec.setdefault("taints", [])
    r = rng.random()
    if taints and r < 0.35:
        t = taints.pop(rng.randrange(len(taints)))
        if not taints:
            del spec["taints"]
        return f"node {n['metadata']['name']} untaint {t}"
    if taints and r < 0.5:
        t = rng.choice(taints)
        t["effect"] = rng.choice(ENUMS["effect"])
        return f"node {n['metadata']['name']} taint effect {t}"
    # a taint from elsewhere, one the pod tolerates, or a new one
    tols = [t for p in scn.pods for t in (_spec(p).get("tolerations") or []) if isinstance(t, dict) and t.get("key")]
    options: list[Doc] = [copy.deepcopy(t) for t in pools.taints]
    for t in tols:
        options.append({k: v for k, v in {"key": t["key"], "value": t.get("value"),
                                          "effect": t.get("effect") or rng.choice(ENUMS["effect"])}.items() if v})
    options.append({"key": rng.choice(["dedicated", "fz/taint", "node.kubernetes.io/disk-pressure"]),
                    "value": rng.choice(["", "x", "gpu"]), "effect": rng.choice(ENUMS["effect"])})
    t = rng.choice(options)
    if not t.get("value"):
        t.pop("value", None)
    t.pop("timeAdded", None)
    if any(x.get("key") == t.get("key") and x.get("effect") == t.get("effect") for x in taints):
        return None
    taints.append(t)
    return f"node {n['metadata']['name']} taint {t}"


def node_cordon(rng: random.Random, scn: Scenario, pools: Pools) -> str | None:
    nodes = scn.nodes()
    if not nodes:
        return None
    n = rng.choice(nodes)
    spec = _spec(n)
    if spec.get("unschedulable"):
        spec.pop("unschedulable")
        spec["taints"] = [t for t in spec.get("taints") or [] if t.get("key") != "node.kubernetes.io/unschedulable"]
        return f"uncordon {n['metadata']['name']}"
    spec["unschedulable"] = True
    if rng.random() < 0.7:
        spec.setdefault("taints", []).append({"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"})
    return f"cordon {n['metadata']['name']}"


def node_clone(rng: random.Random, scn: Scenario, pools: Pools) -> str | None:
    nodes = scn.nodes()
    if not nodes or len(nodes) >= 99:
        return None
    src = rng.choice(nodes)
    n = copy.deepcopy(src)
    name = _fresh(rng, src["metadata"]["name"])
    n["metadata"]["name"] = name
    n["metadata"]["uid"] = f"fz-{rng.randrange(1 << 30):x}"
    labels = _labels(n)
    if "kubernetes.io/hostname" in labels:
        labels["kubernetes.io/hostname"] = name
    if rng.random() < 0.4 and "topology.kubernetes.io/zone" in labels:
        labels["topology.kubernetes.io/zone"] = pools.label_value(rng, "topology.kubernetes.io/zone")
    scn.cluster.insert(scn.cluster.index(src) + 1, n)
    # sometimes copy its DRA slices too
    for s in scn.of_kind("ResourceSlice"):
        if _spec(s).get("nodeName") == src["metadata"]["name"] and rng.random() < 0.7:
            s2 = copy.deepcopy(s)
            s2["metadata"]["name"] = _fresh(rng, s["metadata"]["name"])
            s2["spec"]["nodeName"] = name
            if isinstance(s2["spec"].get("pool"), dict):
                s2["spec"]["pool"]["name"] = name
            s2["metadata"].pop("ownerReferences", None)
            scn.cluster.append(s2)
    return f"clone node {src['metadata']['name']} as {name}"


def scale_out(rng: random.Random, scn: Scenario, pools: Pools) -> str | None:
    """Many more nodes (100 to 300): numFeasibleNodesToFind, the adaptive percentage and the node rotation
    come into play. Half the time parallelism 1 makes upstream's early stop deterministic."""
    nodes = scn.nodes()
    if not nodes or len(nodes) >= 100:
        return None
    target = rng.choice([100, 110, 130, 180, 260])
    zones = sorted(pools.label_values.get("topology.kubernetes.io/zone") or [])
    while len(scn.nodes()) < target:
        src = rng.choice(nodes)
        n = copy.deepcopy(src)
        name = f"{src['metadata']['name'][:40]}-x{len(scn.nodes())}"
        n["metadata"]["name"] = name
        n["metadata"]["uid"] = f"fz-{rng.randrange(1 << 40):x}"
        labels = _labels(n)
        if "kubernetes.io/hostname" in labels:
            labels["kubernetes.io/hostname"] = name
        if zones and "topology.kubernetes.io/zone" in labels:
            labels["topology.kubernetes.io/zone"] = rng.choice(zones)
        scn.cluster.append(n)
        for p in [q for q in scn.bound_pods() if q["spec"]["nodeName"] == src["metadata"]["name"]]:
            if rng.random() < 0.5 and not _spec(p).get("volumes") and not _spec(p).get("resourceClaims"):
                q = copy.deepcopy(p)
                _new_pod_name(rng, q)
                q["spec"]["nodeName"] = name
                scn.cluster.append(q)
    if rng.random() < 0.5:
        _config(scn)["parallelism"] = 1
    return f"scale out to {target} nodes (parallelism {(scn.config or {}).get('parallelism', 16)})"


def pod_start_time(rng: random.Random, scn: Scenario, pools: Pools) -> str | None:
    """Start times decide preemption ties (the latest-started victims' node is kept)."""
    pods = scn.bound_pods()
    if not pods:
        return None
    p = rng.choice(pods)
    st = p.setdefault("status", {})
    st["startTime"] = f"2025-{rng.randrange(1, 13):02d}-{rng.randrange(1, 28):02d}T{rng.randrange(24):02d}:00:00Z"
    if rng.random() < 0.2:
        st.pop("startTime")
    return f"pod {p['metadata']['name']} startTime={st.get('startTime')}"


def node_remove(rng: random.Random, scn: Scenario, pools: Pools) -> str | None:
    nodes = scn.nodes()
    if len(nodes) < 2:
        return None
    n = rng.choice(nodes)
    name = n["metadata"]["name"]
    scn.cluster.remove(n)
    others = [x["metadata"]["name"] for x in scn.nodes()]
    keep = rng.random() < 0.5
    for p in list(scn.cluster_pods()):
        if _spec(p).get("nodeName") == name:
            if keep:
                p["spec"]["nodeName"] = rng.choice(others)
            else:
                scn.cluster.remove(p)
        if (p.get("status") or {}).get("nominatedNodeName") == name:
            p["status"]["nominatedNodeName"] = rng.choice(others)
    for s in list(scn.of_kind("ResourceSlice")):
        if _spec(s).get("nodeName") == name:
            scn.cluster.remove(s)
    for c in scn.of_kind("CSINode"):
        if _meta(c).get("name") == name:
            scn.cluster.remove(c)
    return f"remove node {name} (its pods {'moved' if keep else 'removed'})"


def node_images(rng: random.Random, scn: Scenario, pools: Pools) -> str | None:
    nodes = scn.nodes()
    imgs = [c.get("image") for p in scn.pods for c in _containers(p) if c.get("image")]
    if not nodes or not imgs:
        return None
    n = rng.choice(nodes)
    st = n.setdefault("status", {})
    images = st.setdefault("images", [])
    img = rng.choice(imgs)
    if any(img in (i.get("names") or []) for i in images):
        images[:] = [i for i in images if img not in (i.get("names") or [])]
        return f"node {n['metadata']['name']} drops image {img}"
    images.append({"names": [img], "sizeBytes": rng.choice([5, 23, 200, 500, 900, 1200]) * 1024 * 1024})
    return f"node {n['metadata']['name']} has image {img}"


# ---------------------------------------------------------------------------------------------
# pods in the cluster


def _new_pod_name(rng: random.Random, p: Doc) -> None:
    m = p["metadata"]
    m["name"] = _fresh(rng, m["name"])
    m["uid"] = f"fz-{rng.randrange(1 << 40):x}"


def pod_move(rng: random.Random, scn: Scenario, pools: Pools) -> str | None:
    pods = scn.bound_pods()
    if not pods or not pools.node_names:
        return None
    p = rng.choice(pods)
    p["spec"]["nodeName"] = rng.choice(pools.node_names)
    return f"move pod {p['metadata']['name']} to {p['spec']['nodeName']}"


def pod_clone(rng: random.Random, scn: Scenario, pools: Pools) -> str | None:
    pods = scn.bound_pods()
    if not pods or not pools.node_names:
        return None
    src = rng.choice(pods)
    # a pod using a PVC or a claim stays single: cloning it would share volumes
    if any("persistentVolumeClaim" in v for v in _spec(src).get("volumes") or []) or _spec(src).get("resourceClaims"):
        return None
    out = []
    for _ in range(rng.choice([1, 1, 2, 4])):
        p = copy.deepcopy(src)
        _new_pod_name(rng, p)
        if rng.random() < 0.6:
            p["spec"]["nodeName"] = rng.choice(pools.node_names)
        scn.cluster.append(p)
        out.append(f"{p['metadata']['name']}@{p['spec']['nodeName']}")
    return f"clone pod {src['metadata']['name']}: {', '.join(out)}"


def pod_crowd(rng: random.Random, scn: Scenario, pools: Pools) -> str | None:
    """Many equal pods on one node, written out of list order and spread over namespaces whose names prefix
    one another: preemption's victims among equals follow the cache's list order (namespace, then name)
    and, from 13 on, Go's unstable sort. The incoming pod usually outranks them."""
    pods = [p for p in scn.bound_pods() if not _spec(p).get("volumes") and not _spec(p).get("resourceClaims")]
    if not pods:
        return None
    src = rng.choice(pods)
    ns = _meta(src).get("namespace") or "default"
    spaces = [ns, f"{ns[:60]}-b", f"{ns[:60]}-b-c"]
    prio = rng.choice([-10, 0, 0, 50])
    start = (src.get("status") or {}).get("startTime") or "2025-01-01T00:00:00Z"
    n = rng.choice([6, 12, 13, 16, 24, 40])
    for _ in range(n):
        q = copy.deepcopy(src)
        _new_pod_name(rng, q)
        _meta(q)["namespace"] = rng.choice(spaces)
        _meta(q).pop("ownerReferences", None)
        spec = _spec(q)
        spec.pop("priorityClassName", None)
        spec["priority"] = prio
        if rng.random() < 0.2:
            q.setdefault("status", {})["startTime"] = "2025-01-02T00:00:00Z"
        else:
            q.setdefault("status", {})["startTime"] = start
        scn.cluster.insert(rng.randrange(len(scn.cluster) + 1), q)
    if scn.pods and rng.random() < 0.8:
        _crowd_preemptor(rng, scn, scn.pods[0], src["spec"]["nodeName"])
    return f"crowd node {src['spec']['nodeName']} with {n} copies of {src['metadata']['name']} (priority {prio})"


def _crowd_preemptor(rng: random.Random, scn: Scenario, pod: Doc, node_name: str) -> None:
    """The incoming pod outranks the crowd and, half the time, needs most of the crowded node's CPU there."""
    spec = _spec(pod)
    spec.pop("priorityClassName", None)
    spec["priority"] = 100000
    node = next((n for n in scn.nodes() if n["metadata"]["name"] == node_name), None)
    cpu = ((node or {}).get("status") or {}).get("allocatable", {}).get("cpu")
    if node is None or cpu is None or rng.random() < 0.5 or not _containers(pod):
        return
    want = Fraction(parse_quantity(cpu)) * rng.choice([Fraction(1, 2), Fraction(7, 10), Fraction(9, 10)])
    res = _containers(pod)[0].setdefault("resources", {})
    res.setdefault("requests", {})["cpu"] = format_quantity(Fraction(int(want * 1000), 1000), "cpu")
    res.pop("limits", None)
    host = _labels(node).get("kubernetes.io/hostname")
    if host and rng.random() < 0.7:
        spec["nodeSelector"] = {"kubernetes.io/hostname": host}


def pod_remove(rng: random.Random, scn: Scenario, pools: Pools) -> str | None:
    pods = scn.cluster_pods()
    if not pods:
        return None
    p = rng.choice(pods)
    scn.cluster.remove(p)
    return f"remove pod {p['metadata']['name']}"


def pod_resources(rng: random.Random, scn: Scenario, pools: Pools, *, incoming: bool = False) -> str | None:
    pods = scn.pods if incoming else scn.cluster_pods()
    if not pods:
        return None
    p = rng.choice(pods)
    spec = _spec(p)
    holders: list[Doc] = [c.setdefault("resources", {}) for c in [*_containers(p), *[c for c in spec.get("initContainers") or [] if isinstance(c, dict)]]]
    if isinstance(spec.get("resources"), dict):
        holders.append(spec["resources"])
    if not holders:
        return None
    h = rng.choice(holders)
    r = rng.random()
    if r < 0.2:
        # a resource the nodes have that the pod does not ask for yet
        node_res = sorted({k for n in scn.nodes() for k in ((n.get("status") or {}).get("allocatable") or {})})
        res = rng.choice(node_res or ["cpu"])
        amount = {"cpu": rng.choice(["100m", "500m", "2", "7"]), "memory": rng.choice(["64Mi", "1Gi", "6Gi"]),
                  "pods": None, "ephemeral-storage": rng.choice(["1Gi", "20Gi"])}.get(res, rng.choice(["1", "2", "3"]))
        if amount is None:
            return None
        h.setdefault("requests", {})[res] = amount
        if "/" in res or res.startswith("hugepages"):
            h.setdefault("limits", {})[res] = amount
        return f"pod {p['metadata']['name']} requests {res}={amount}"
    f = rng.choice(FACTORS)
    changed = []
    for part in ("requests", "limits"):
        for res, v in list((h.get(part) or {}).items()):
            h[part][res] = scale_quantity(v, f, res)
            changed.append(res)
    return f"pod {p['metadata']['name']} resources x{f} ({','.join(sorted(set(changed)))})" if changed else None


def pod_labels(rng: random.Random, scn: Scenario, pools: Pools, *, incoming: bool = False) -> str | None:
    pods = scn.pods if incoming else scn.cluster_pods()
    if not pods:
        return None
    return _relabel(rng, "pod", rng.choice(pods), sorted(pools.pod_label_keys), pools)


def pod_terminating(rng: random.Random, scn: Scenario, pools: Pools) -> str | None:
    pods = scn.bound_pods()
    if not pods:
        return None
    p = rng.choice(pods)
    m = p["metadata"]
    if m.get("deletionTimestamp"):
        del m["deletionTimestamp"]
        return f"pod {m['name']} no longer terminating"
    m["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    m.setdefault("deletionGracePeriodSeconds", 30)
    return f"pod {m['name']} terminating"


def set_priority(rng: random.Random, scn: Scenario, p: Doc, pools: Pools) -> str:
    spec = _spec(p)
    if pools.priority_classes and rng.random() < 0.6:
        spec["priorityClassName"] = rng.choice(pools.priority_classes)
        spec.pop("priority", None)
        return f"pod {p['metadata']['name']} priorityClassName={spec['priorityClassName']}"
    spec.pop("priorityClassName", None)
    spec["priority"] = rng.choice([0, 0, 10, 100, 1000, 5000, 100000, -5])
    return f"pod {p['metadata']['name']} priority={spec['priority']}"


def pod_priority(rng: random.Random, scn: Scenario, pools: Pools, *, incoming: bool = False) -> str | None:
    pods = scn.pods if incoming else scn.cluster_pods()
    if not pods:
        return None
    p = rng.choice(pods)
    if incoming and rng.random() < 0.15:
        spec = _spec(p)
        spec["preemptionPolicy"] = "Never" if spec.get("preemptionPolicy") != "Never" else "PreemptLowerPriority"
        return f"pod {p['metadata']['name']} preemptionPolicy={spec['preemptionPolicy']}"
    return set_priority(rng, scn, p, pools)


def pod_nominate(rng: random.Random, scn: Scenario, pools: Pools) -> str | None:
    """A pod of the cluster becomes pending, nominated to a node (or loses its nomination)."""
    if scn.kind == "sequence":
        return None
    pods = scn.cluster_pods()
    if not pods or not pools.node_names:
        return None
    p = rng.choice(pods)
    st = p.setdefault("status", {})
    node = rng.choice(pools.node_names)
    if st.get("nominatedNodeName") and rng.random() < 0.4:
        del st["nominatedNodeName"]
        return f"pod {p['metadata']['name']} no longer nominated"
    p["spec"].pop("nodeName", None)
    st["phase"] = "Pending"
    st["nominatedNodeName"] = node
    return f"pod {p['metadata']['name']} pending, nominated to {node}"


# ---------------------------------------------------------------------------------------------
# the incoming pod


def in_tolerations(rng: random.Random, scn: Scenario, pools: Pools) -> str | None:
    p = rng.choice(scn.pods)
    spec = _spec(p)
    tols = spec.setdefault("tolerations", [])
    if tols and rng.random() < 0.3:
        t = tols.pop(rng.randrange(len(tols)))
        return f"pod drops toleration {t}"
    if pools.taints and rng.random() < 0.8:
        t = rng.choice(pools.taints)
        r = rng.random()
        if r < 0.5:
            tol = {"key": t.get("key"), "operator": "Equal", "value": t.get("value", ""), "effect": t.get("effect")}
        elif r < 0.8:
            tol = {"key": t.get("key"), "operator": "Exists"}
            if rng.random() < 0.5:
                tol["effect"] = t.get("effect")
        else:
            tol = {"key": t.get("key"), "operator": "Equal", "value": "other", "effect": t.get("effect")}
    else:
        tol = {"operator": "Exists"} if rng.random() < 0.3 else {"key": "fz", "operator": "Exists", "effect": "NoSchedule"}
    tols.append({k: v for k, v in tol.items() if v is not None})
    return f"pod tolerates {tols[-1]}"


def _expr(rng: random.Random, pools: Pools, keys: list[str], ops: list[str]) -> Doc:
    key = rng.choice(keys)
    op = rng.choice(ops)
    e: Doc = {"key": key, "operator": op}
    if op in ("In", "NotIn"):
        e["values"] = sorted({pools.label_value(rng, key) for _ in range(rng.choice([1, 1, 2, 3]))})
    elif op in ("Gt", "Lt"):
        e["values"] = [str(rng.choice([0, 1, 2, 4, 8, 16, 100]))]
    return e


NODE_OPS = ["In", "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"]
LABEL_OPS = ["In", "In", "NotIn", "Exists", "DoesNotExist"]


def in_node_selector(rng: random.Random, scn: Scenario, pools: Pools) -> str | None:
    p = rng.choice(scn.pods)
    spec = _spec(p)
    sel = spec.setdefault("nodeSelector", {})
    if sel and rng.random() < 0.3:
        k = rng.choice(sorted(sel))
        del sel[k]
        if not sel:
            del spec["nodeSelector"]
        return f"pod nodeSelector drops {k}"
    keys = sorted(pools.node_label_keys)
    if not keys:
        return None
    k = rng.choice(keys)
    sel[k] = pools.label_value(rng, k)
    return f"pod nodeSelector {k}={sel[k]}"


def in_node_affinity(rng: random.Random, scn: Scenario, pools: Pools) -> str | None:
    p = rng.choice(scn.pods)
    aff = _spec(p).setdefault("affinity", {}).setdefault("nodeAffinity", {})
    keys = sorted(pools.node_label_keys)
    if not keys:
        return None
    if rng.random() < 0.5:
        req = aff.setdefault("requiredDuringSchedulingIgnoredDuringExecution", {"nodeSelectorTerms": []})
        terms = req.setdefault("nodeSelectorTerms", [])
        if terms and rng.random() < 0.6:
            t = rng.choice(terms)
            t.setdefault("matchExpressions", []).append(_expr(rng, pools, keys, NODE_OPS))
            return f"pod required node term + {t['matchExpressions'][-1]}"
        if rng.random() < 0.1:
            terms.append({"matchFields": [{"key": "metadata.name", "operator": rng.choice(["In", "NotIn"]),
                                           "values": [rng.choice(pools.node_names)]}]})
        else:
            terms.append({"matchExpressions": [_expr(rng, pools, keys, NODE_OPS)]})
        return f"pod required node terms: {len(terms)}"
    pref = aff.setdefault("preferredDuringSchedulingIgnoredDuringExecution", [])
    pref.append({"weight": rng.choice([1, 5, 10, 50, 100]),
                 "preference": {"matchExpressions": [_expr(rng, pools, keys, NODE_OPS) for _ in range(rng.choice([1, 1, 2]))]}})
    return f"pod preferred node term {pref[-1]}"


def _label_selector(rng: random.Random, scn: Scenario, pools: Pools) -> Doc:
    pods = [*scn.cluster_pods(), *scn.pods]
    src = rng.choice(pods)
    labels = {k: v for k, v in _labels(src).items() if k != "pod-template-hash" or rng.random() < 0.2}
    if labels and rng.random() < 0.7:
        ks = rng.sample(sorted(labels), k=min(len(labels), rng.choice([1, 1, 2])))
        return {"matchLabels": {k: labels[k] for k in ks}}
    keys = sorted(pools.pod_label_keys) or ["app"]
    return {"matchExpressions": [_expr(rng, pools, keys, LABEL_OPS)]}


def in_pod_affinity(rng: random.Random, scn: Scenario, pools: Pools) -> str | None:
    p = rng.choice(scn.pods)
    aff = _spec(p).setdefault("affinity", {})
    kind = rng.choice(["podAffinity", "podAntiAffinity"])
    a = aff.setdefault(kind, {})
    topo = rng.choice(sorted(pools.node_label_keys | {"kubernetes.io/hostname", "topology.kubernetes.io/zone"}))
    term: Doc = {"labelSelector": _label_selector(rng, scn, pools), "topologyKey": topo}
    r = rng.random()
    if r < 0.15 and pools.namespaces:
        term["namespaces"] = rng.sample(pools.namespaces, k=min(len(pools.namespaces), rng.choice([1, 2])))
    elif r < 0.3:
        nsl = sorted({(k, v) for n in scn.of_kind("Namespace") for k, v in _labels(n).items()})
        term["namespaceSelector"] = {} if not nsl or rng.random() < 0.3 else {"matchLabels": dict([rng.choice(nsl)])}
    if rng.random() < 0.1 and _labels(p):
        term["matchLabelKeys"] = [rng.choice(sorted(_labels(p)))]
    if rng.random() < 0.5:
        a.setdefault("requiredDuringSchedulingIgnoredDuringExecution", []).append(term)
        return f"pod {kind} required {term}"
    a.setdefault("preferredDuringSchedulingIgnoredDuringExecution", []).append(
        {"weight": rng.choice([1, 10, 50, 100]), "podAffinityTerm": term})
    return f"pod {kind} preferred {term}"


def in_spread(rng: random.Random, scn: Scenario, pools: Pools) -> str | None:
    p = rng.choice(scn.pods)
    spec = _spec(p)
    tsc = spec.setdefault("topologySpreadConstraints", [])
    if tsc and rng.random() < 0.6:
        c = rng.choice(tsc)
        what = rng.choice(["maxSkew", "whenUnsatisfiable", "minDomains", "topologyKey", "nodeAffinityPolicy",
                           "nodeTaintsPolicy", "matchLabelKeys", "labelSelector"])
        if what == "maxSkew":
            c["maxSkew"] = rng.choice([1, 1, 2, 3, 5])
        elif what == "whenUnsatisfiable":
            c["whenUnsatisfiable"] = rng.choice(ENUMS["whenUnsatisfiable"])
        elif what == "minDomains":
            c["minDomains"] = rng.choice([1, 2, 3, 4, 6])
            c["whenUnsatisfiable"] = "DoNotSchedule"
        elif what == "topologyKey":
            c["topologyKey"] = rng.choice(sorted(pools.node_label_keys | {"kubernetes.io/hostname"}))
        elif what in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
            c[what] = rng.choice(["Honor", "Ignore"])
        elif what == "matchLabelKeys":
            if not _labels(p):
                return None
            c["matchLabelKeys"] = [rng.choice(sorted(_labels(p)))]
        else:
            c["labelSelector"] = _label_selector(rng, scn, pools)
        return f"pod spread constraint {what} -> {c.get(what)}"
    topo = rng.choice(sorted(pools.node_label_keys | {"kubernetes.io/hostname", "topology.kubernetes.io/zone"}))
    c = {"maxSkew": rng.choice([1, 1, 2]), "topologyKey": topo,
         "whenUnsatisfiable": rng.choice(ENUMS["whenUnsatisfiable"]),
         "labelSelector": {"matchLabels": dict(list(_labels(p).items())[:1])} if _labels(p) and rng.random() < 0.7
         else _label_selector(rng, scn, pools)}
    tsc.append(c)
    return f"pod spread + {c}"


def in_ports(rng: random.Random, scn: Scenario, pools: Pools) -> str | None:
    p = rng.choice(scn.pods)
    used = sorted({int(pt["hostPort"]) for q in scn.cluster_pods() for c in _containers(q)
                   for pt in c.get("ports") or [] if isinstance(pt, dict) and pt.get("hostPort")})
    port = rng.choice([*used, 8080, 9100]) if used else rng.choice([8080, 9100, 443])
    c = rng.choice(_containers(p))
    entry: Doc = {"containerPort": port, "hostPort": port, "protocol": rng.choice(["TCP", "TCP", "UDP"])}
    if rng.random() < 0.2:
        entry["hostIP"] = rng.choice(["10.0.0.1", "0.0.0.0", "127.0.0.1"])
    c.setdefault("ports", []).append(entry)
    return f"pod hostPort {entry}"


def in_gates(rng: random.Random, scn: Scenario, pools: Pools) -> str | None:
    p = rng.choice(scn.pods)
    spec = _spec(p)
    if spec.get("schedulingGates"):
        spec.pop("schedulingGates")
        return "pod ungated"
    if rng.random() < 0.5:
        return None
    spec["schedulingGates"] = [{"name": "example.com/fz-gate"}]
    return "pod gated"


def in_shape(rng: random.Random, scn: Scenario, pools: Pools) -> str | None:
    """Overhead, an init container, a sidecar, or pod-level resources."""
    p = rng.choice(scn.pods)
    spec = _spec(p)
    r = rng.random()
    if r < 0.25:
        spec["overhead"] = {"cpu": rng.choice(["100m", "250m", "1"]), "memory": rng.choice(["64Mi", "512Mi"])}
        return f"pod overhead {spec['overhead']}"
    if r < 0.7:
        sidecar = rng.random() < 0.5
        c: Doc = {"name": f"fz-init-{rng.randrange(100)}", "image": "busybox:1.36",
                  "resources": {"requests": {"cpu": rng.choice(["100m", "1", "3"]), "memory": rng.choice(["64Mi", "2Gi"])}}}
        if sidecar:
            c["restartPolicy"] = "Always"
        spec.setdefault("initContainers", []).append(c)
        return f"pod {'sidecar' if sidecar else 'init container'} {c['resources']['requests']}"
    res: Doc = {"requests": {"cpu": rng.choice(["500m", "2", "6"]), "memory": rng.choice(["256Mi", "4Gi"])}}
    if rng.random() < 0.5:
        res["limits"] = dict(res["requests"])
    spec["resources"] = res
    return f"pod-level resources {res}"


def incoming(fn: Callable[..., str | None]) -> Callable[[random.Random, Scenario, Pools], str | None]:
    def run(rng: random.Random, scn: Scenario, pools: Pools) -> str | None:
        return fn(rng, scn, pools, incoming=True)
    run.__name__ = f"in_{fn.__name__}"
    return run


# ---------------------------------------------------------------------------------------------
# PDBs, DRA, storage


def pdb(rng: random.Random, scn: Scenario, pools: Pools) -> str | None:
    pdbs = scn.of_kind("PodDisruptionBudget")
    if pdbs and rng.random() < 0.6:
        d = rng.choice(pdbs)
        st = d.setdefault("status", {})
        st["disruptionsAllowed"] = rng.choice([0, 0, 1, 2, 5])
        return f"pdb {d['metadata']['name']} disruptionsAllowed={st['disruptionsAllowed']}"
    pods = scn.bound_pods()
    if not pods:
        return None
    src = rng.choice(pods)
    labels = _labels(src)
    if not labels:
        return None
    k = rng.choice(sorted(labels))
    d = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
         "metadata": {"name": _fresh(rng, "pdb"), "namespace": _meta(src).get("namespace", "default")},
         "spec": {"minAvailable": 1, "selector": {"matchLabels": {k: labels[k]}}},
         "status": {"disruptionsAllowed": rng.choice([0, 0, 1, 2]), "currentHealthy": 1, "desiredHealthy": 1,
                    "expectedPods": 1}}
    scn.cluster.append(d)
    return f"pdb for {k}={labels[k]} disruptionsAllowed={d['status']['disruptionsAllowed']}"


def cel_expressions(scn: Scenario) -> list[str]:
    out = ['device.driver == "gpu.nvidia.com"', "true"]
    for s in scn.of_kind("ResourceSlice"):
        drv = _spec(s).get("driver")
        if drv:
            out.append(f'device.driver == "{drv}"')
        for dev in _spec(s).get("devices") or []:
            for an, av in (dev.get("attributes") or {}).items():
                for t, v in av.items():
                    if t == "string":
                        out.append(f'device.attributes["{drv}"].{an} == "{v}"')
                    elif t == "int":
                        out.append(f'device.attributes["{drv}"].{an} >= {v}')
                    elif t == "bool":
                        out.append(f'device.attributes["{drv}"].{an}')
            for cn, cv in (dev.get("capacity") or {}).items():
                if isinstance(cv, dict) and "value" in cv:
                    out.append(f'device.capacity["{drv}"].{cn}.compareTo(quantity("{cv["value"]}")) >= 0')
    return sorted(set(out))


def dra(rng: random.Random, scn: Scenario, pools: Pools) -> str | None:
    slices = scn.of_kind("ResourceSlice")
    claims = scn.of_kind("ResourceClaim")
    classes = scn.of_kind("DeviceClass")
    r = rng.random()
    if slices and r < 0.3:
        s = rng.choice(slices)
        devs = _spec(s).get("devices") or []
        if devs and rng.random() < 0.5:
            dev = copy.deepcopy(rng.choice(devs))
            dev["name"] = f"{dev['name']}-fz{rng.randrange(1000)}"
            devs.append(dev)
            return f"slice {s['metadata']['name']} + device {dev['name']}"
        if len(devs) > 1:
            devs.pop(rng.randrange(len(devs)))
            return f"slice {s['metadata']['name']} - device"
        s["spec"]["nodeName"] = rng.choice(pools.node_names)
        if isinstance(s["spec"].get("pool"), dict):
            s["spec"]["pool"]["name"] = s["spec"]["nodeName"]
        return f"slice {s['metadata']['name']} moves to {s['spec']['nodeName']}"
    if classes and r < 0.5:
        c = rng.choice(classes)
        c.setdefault("spec", {})["selectors"] = [{"cel": {"expression": rng.choice(cel_expressions(scn))}}]
        return f"class {c['metadata']['name']} selector {c['spec']['selectors']}"
    if claims:
        c = rng.choice(claims)
        reqs = (((c.get("spec") or {}).get("devices") or {}).get("requests")) or []
        r2 = rng.random()
        if reqs and r2 < 0.15 and "exactly" in reqs[0]:
            # a prioritized list: the request becomes its first subrequest, with an alternative after it
            ex = reqs[0].pop("exactly")
            alt = {"deviceClassName": rng.choice([d["metadata"]["name"] for d in classes] or [ex.get("deviceClassName")]),
                   "allocationMode": "ExactCount", "count": rng.choice([1, 2])}
            subs = [{"name": "first", **ex}, {"name": "second", **alt}]
            if rng.random() < 0.3:
                subs.reverse()
            reqs[0]["firstAvailable"] = subs
            return f"claim {c['metadata']['name']} firstAvailable {subs}"
        if reqs and r2 < 0.3:
            r = copy.deepcopy(reqs[0])
            r["name"] = f"{r.get('name', 'req')}-fz{rng.randrange(100)}"
            reqs.append(r)
            return f"claim {c['metadata']['name']} + request {r['name']}"
        if reqs and r2 < 0.4 and "exactly" in reqs[0]:
            reqs[0]["exactly"]["allocationMode"] = "All"
            reqs[0]["exactly"].pop("count", None)
            return f"claim {c['metadata']['name']} allocationMode All"
        if reqs and rng.random() < 0.6:
            ex = reqs[0].get("exactly") or {}
            if rng.random() < 0.5:
                ex["count"] = rng.choice([1, 2, 3])
                ex["allocationMode"] = "ExactCount"
            else:
                ex["selectors"] = [{"cel": {"expression": rng.choice(cel_expressions(scn))}}]
            return f"claim {c['metadata']['name']} request {ex}"
        if c.get("status", {}).get("allocation"):
            c["status"].pop("allocation")
            c["status"].pop("reservedFor", None)
            return f"claim {c['metadata']['name']} deallocated"
    return None


def storage(rng: random.Random, scn: Scenario, pools: Pools) -> str | None:
    caps = scn.of_kind("CSIStorageCapacity")
    pvcs = scn.of_kind("PersistentVolumeClaim")
    pvs = scn.of_kind("PersistentVolume")
    r = rng.random()
    if caps and r < 0.4:
        c = rng.choice(caps)
        k = rng.choice(["capacity", "maximumVolumeSize"])
        if k in c:
            c[k] = scale_quantity(c[k], rng.choice(FACTORS[1:]), "storage")
        elif rng.random() < 0.5 and "capacity" in c:
            c["maximumVolumeSize"] = c["capacity"]
        else:
            return None
        return f"csi capacity {c['metadata']['name']} {k}={c.get(k)}"
    if pvcs and r < 0.7:
        c = rng.choice(pvcs)
        req = ((c.get("spec") or {}).get("resources") or {}).get("requests") or {}
        if "storage" in req:
            req["storage"] = scale_quantity(req["storage"], rng.choice(FACTORS[1:]), "storage")
            return f"pvc {c['metadata']['name']} storage={req['storage']}"
    if pvs:
        pv = rng.choice(pvs)
        labels = _labels(pv)
        for k in sorted(labels):
            if "zone" in k or "region" in k:
                labels[k] = pools.label_value(rng, k)
                return f"pv {pv['metadata']['name']} {k}={labels[k]}"
    return None


# ---------------------------------------------------------------------------------------------
# configuration

SCORE_PLUGINS = ["NodeResourcesFit", "NodeResourcesBalancedAllocation", "ImageLocality", "InterPodAffinity",
                 "NodeAffinity", "PodTopologySpread", "TaintToleration", "VolumeBinding", "DynamicResources"]
FILTER_PLUGINS = ["NodePorts", "NodeAffinity", "TaintToleration", "PodTopologySpread", "InterPodAffinity",
                  "NodeUnschedulable", "VolumeRestrictions", "NodeVolumeLimits", "VolumeZone"]


def _config(scn: Scenario) -> Doc:
    if scn.config is None:
        scn.config = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
        if scn.kind == "sequence":
            scn.config["parallelism"] = 1
    return scn.config


def _profile(rng: random.Random, scn: Scenario) -> Doc:
    cfg = _config(scn)
    profiles = cfg.setdefault("profiles", [])
    names = {_spec_name(p) for p in profiles}
    want = {(_spec(p).get("schedulerName") or "default-scheduler") for p in scn.pods}
    for p in profiles:
        if _spec_name(p) in want:
            return p
    if not profiles or rng.random() < 0.8:
        name = sorted(want)[0] if want else "default-scheduler"
        if name in names:
            return next(p for p in profiles if _spec_name(p) == name)
        prof = {"schedulerName": name}
        profiles.append(prof)
        return prof
    return rng.choice(profiles)


def _spec_name(p: Doc) -> str:
    return str(p.get("schedulerName") or "default-scheduler")


def _plugin_args(prof: Doc, name: str) -> Doc:
    pcs = prof.setdefault("pluginConfig", [])
    for pc in pcs:
        if pc.get("name") == name:
            return pc.setdefault("args", {})
    pc = {"name": name, "args": {}}
    pcs.append(pc)
    return pc["args"]


PRE_FILTER_PLUGINS = ["NodeAffinity", "NodePorts", "NodeResourcesFit", "VolumeRestrictions", "NodeVolumeLimits",
                      "VolumeBinding", "VolumeZone", "PodTopologySpread", "InterPodAffinity", "DynamicResources"]
PRE_SCORE_PLUGINS = ["TaintToleration", "NodeAffinity", "NodeResourcesFit", "NodeResourcesBalancedAllocation",
                     "VolumeBinding", "PodTopologySpread", "InterPodAffinity", "DynamicResources"]


def plugin_sets(rng: random.Random, scn: Scenario, pools: Pools) -> str | None:
    """Plugin lists as profiles write them: ``disabled: '*'`` and a custom order, the same plugin under
    multiPoint and a point with other weights, weight 0, a point's own list beside multiPoint."""
    prof = _profile(rng, scn)
    plugins = prof.setdefault("plugins", {})
    r = rng.random()
    point, names = rng.choice([("filter", FILTER_PLUGINS), ("score", SCORE_PLUGINS), ("preFilter", PRE_FILTER_PLUGINS),
                               ("preScore", PRE_SCORE_PLUGINS)])
    if r < 0.4:
        chosen = rng.sample(names, k=rng.randrange(1, len(names) + 1))
        entry: list[Doc] = []
        for n in chosen:
            e: Doc = {"name": n}
            if point == "score" and rng.random() < 0.7:
                e["weight"] = rng.choice([0, 1, 2, 5, 10])
            entry.append(e)
        plugins[point] = {"disabled": [{"name": "*"}], "enabled": entry}
        return f"{point}: disabled *, enabled {entry}"
    if r < 0.7:
        name = rng.choice(SCORE_PLUGINS)
        mp = plugins.setdefault("multiPoint", {}).setdefault("enabled", [])
        mp.append({"name": name, "weight": rng.choice([0, 1, 3, 7])})
        if rng.random() < 0.6:
            sc = plugins.setdefault("score", {}).setdefault("enabled", [])
            sc.append({"name": name, "weight": rng.choice([0, 2, 4])})
        return f"multiPoint/score weights for {name}: {plugins}"
    name = rng.choice(names)
    plugins.setdefault(point, {}).setdefault("disabled", []).append({"name": name})
    if rng.random() < 0.5:
        plugins[point].setdefault("enabled", []).append({"name": name, **({"weight": rng.choice([1, 4])} if point == "score" else {})})
        return f"{point}: {name} disabled then enabled again (moves to the end)"
    return f"{point}: disable {name}"


def config_mutation(rng: random.Random, scn: Scenario, pools: Pools) -> str | None:
    r = rng.random()
    cfg = _config(scn)
    if r < 0.15:
        v = rng.choice([0, 1, 5, 10, 30, 50, 70, 100])
        if rng.random() < 0.5:
            cfg["percentageOfNodesToScore"] = v
            return f"percentageOfNodesToScore={v}"
        _profile(rng, scn)["percentageOfNodesToScore"] = v
        return f"profile percentageOfNodesToScore={v}"
    prof = _profile(rng, scn)
    if r < 0.35:
        args = _plugin_args(prof, "NodeResourcesFit")
        t = rng.choice(["LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"])
        strat: Doc = {"type": t}
        res_names = ["cpu", "memory", *sorted({k for n in scn.nodes() for k in ((n.get("status") or {}).get("allocatable") or {})
                                               if "/" in k or k == "ephemeral-storage"})]
        strat["resources"] = [{"name": n, "weight": rng.choice([1, 1, 2, 3, 5])}
                              for n in rng.sample(res_names, k=rng.choice([1, 2, min(3, len(res_names))]))]
        if t == "RequestedToCapacityRatio":
            pts = sorted(rng.sample(range(0, 101, 10), k=rng.choice([2, 3])))
            strat["requestedToCapacityRatio"] = {"shape": [{"utilization": u, "score": rng.randrange(11)} for u in pts]}
        args["scoringStrategy"] = strat
        return f"NodeResourcesFit {strat}"
    plugins = prof.setdefault("plugins", {})
    if r < 0.5:
        name = rng.choice(SCORE_PLUGINS)
        enabled = plugins.setdefault("score", {}).setdefault("enabled", [])
        enabled[:] = [e for e in enabled if e.get("name") != name]
        enabled.append({"name": name, "weight": rng.choice([1, 2, 3, 5, 10, 50])})
        return f"score weight {enabled[-1]}"
    if r < 0.62:
        point, name = (("score", rng.choice(SCORE_PLUGINS)) if rng.random() < 0.5
                       else ("filter", rng.choice(FILTER_PLUGINS)) if rng.random() < 0.7
                       else ("multiPoint", rng.choice(FILTER_PLUGINS)))
        plugins.setdefault(point, {}).setdefault("disabled", []).append({"name": name})
        return f"disable {point} {name}"
    if r < 0.72:
        args = _plugin_args(prof, "InterPodAffinity")
        if rng.random() < 0.6:
            args["hardPodAffinityWeight"] = rng.choice([0, 1, 10, 50, 100])
        else:
            args["ignorePreferredTermsOfExistingPods"] = rng.random() < 0.7
        return f"InterPodAffinity args {args}"
    if r < 0.82:
        args = _plugin_args(prof, "PodTopologySpread")
        args["defaultingType"] = "List"
        args["defaultConstraints"] = [] if rng.random() < 0.3 else [
            {"maxSkew": rng.choice([1, 2, 3]), "topologyKey": rng.choice(["kubernetes.io/hostname", "topology.kubernetes.io/zone"]),
             "whenUnsatisfiable": rng.choice(ENUMS["whenUnsatisfiable"])} for _ in range(rng.choice([1, 1, 2]))]
        tks = [c["topologyKey"] for c in args["defaultConstraints"]]
        if len(tks) != len(set(tks)):
            args["defaultConstraints"] = args["defaultConstraints"][:1]
        return f"PodTopologySpread args {args}"
    if r < 0.9:
        args = _plugin_args(prof, "NodeResourcesBalancedAllocation")
        res = ["cpu", "memory", *sorted({k for n in scn.nodes() for k in ((n.get("status") or {}).get("allocatable") or {})
                                         if "/" in k or k == "ephemeral-storage"})]
        args["resources"] = [{"name": n, "weight": 1} for n in rng.sample(res, k=rng.choice([1, 2, min(3, len(res))]))]
        return f"BalancedAllocation args {args}"
    if r < 0.95:
        args = _plugin_args(prof, "NodeResourcesFit")
        ext = sorted({k for n in scn.nodes() for k in ((n.get("status") or {}).get("allocatable") or {}) if "/" in k})
        if not ext:
            return None
        if rng.random() < 0.5:
            args["ignoredResources"] = [rng.choice(ext)]
        else:
            args["ignoredResourceGroups"] = [rng.choice(ext).split("/")[0]]
        return f"NodeResourcesFit args {args}"
    keys = sorted(pools.node_label_keys)
    if not keys:
        return None
    args = _plugin_args(prof, "NodeAffinity")
    aff: Doc = {}
    if rng.random() < 0.5:
        aff["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": [{"matchExpressions": [_expr(rng, pools, keys, NODE_OPS)]}]}
    else:
        aff["preferredDuringSchedulingIgnoredDuringExecution"] = [{"weight": rng.choice([1, 10, 100]), "preference": {"matchExpressions": [_expr(rng, pools, keys, NODE_OPS)]}}]
    args["addedAffinity"] = aff
    return f"NodeAffinity addedAffinity {aff}"


# ---------------------------------------------------------------------------------------------
# sequences and extenders


def seq_pods(rng: random.Random, scn: Scenario, pools: Pools) -> str | None:
    """pods.yaml: more or fewer replicas, or a workload's replicas with another priority."""
    if len(scn.pods) < 1:
        return None
    r = rng.random()
    if r < 0.4:
        src = rng.choice(scn.pods)
        n = rng.choice([1, 2, 3, 6])
        for _ in range(n):
            p = copy.deepcopy(src)
            _new_pod_name(rng, p)
            scn.pods.insert(scn.pods.index(src) + 1, p)
        return f"pods.yaml: {n} more copies of {src['metadata']['name']}"
    if r < 0.7 and len(scn.pods) > 1:
        p = scn.pods.pop(rng.randrange(len(scn.pods)))
        return f"pods.yaml: drop {p['metadata']['name']}"
    p = rng.choice(scn.pods)
    return set_priority(rng, scn, p, pools)


def seq_order(rng: random.Random, scn: Scenario, pools: Pools) -> str | None:
    """Creation order: timestamps swapped, equal, or removed (the queue breaks ties by creation)."""
    if len(scn.pods) < 2:
        return None
    r = rng.random()
    a, b = rng.sample(scn.pods, 2)
    ma, mb = _meta(a), _meta(b)
    if r < 0.5:
        ma["creationTimestamp"], mb["creationTimestamp"] = mb.get("creationTimestamp"), ma.get("creationTimestamp")
        return f"swap creation times of {ma['name']} and {mb['name']}"
    if r < 0.8:
        mb["creationTimestamp"] = ma.get("creationTimestamp")
        return f"{mb['name']} created with {ma['name']}"
    ma.pop("creationTimestamp", None)
    return f"{ma['name']} without creationTimestamp"


def seq_profiles(rng: random.Random, scn: Scenario, pools: Pools) -> str | None:
    """A second profile (another strategy or weights) and some pods that name it."""
    cfg = _config(scn)
    profiles = cfg.setdefault("profiles", [{"schedulerName": "default-scheduler"}])
    if len(profiles) < 2:
        second: Doc = {"schedulerName": "fz-second"}
        if rng.random() < 0.6:
            second["pluginConfig"] = [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {
                "type": "MostAllocated", "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]}}}]
        if rng.random() < 0.5:
            second["plugins"] = {"score": {"enabled": [{"name": rng.choice(SCORE_PLUGINS[:7]), "weight": rng.choice([2, 5, 10])}]}}
        profiles.append(second)
    name = _spec_name(profiles[-1])
    chosen = rng.sample(scn.pods, k=max(1, len(scn.pods) // rng.choice([2, 3, 4])))
    for p in chosen:
        _spec(p)["schedulerName"] = name
    return f"{len(chosen)} pods use profile {name}"


def seq_pending_in_cluster(rng: random.Random, scn: Scenario, pools: Pools) -> str | None:
    """Pods of cluster.yaml without a node: pending before the scheduler starts."""
    if scn.kind != "sequence" or not scn.pods:
        return None
    r = rng.random()
    if r < 0.5 and len(scn.pods) > 1:
        p = scn.pods.pop(rng.randrange(len(scn.pods)))
        scn.cluster.append(p)
        return f"pod {p['metadata']['name']} pending in cluster.yaml"
    pods = scn.bound_pods()
    if not pods:
        return None
    p = rng.choice(pods)
    del p["spec"]["nodeName"]
    p.setdefault("status", {})["phase"] = "Pending"
    if rng.random() < 0.3 and pools.node_names:
        p["status"]["nominatedNodeName"] = rng.choice(pools.node_names)
    return f"bound pod {p['metadata']['name']} now pending in cluster.yaml"


def extender_mutation(rng: random.Random, scn: Scenario, pools: Pools) -> str | None:
    ext = scn.extender
    cfg = scn.config
    if ext is None or cfg is None:
        return None
    descs = list((ext.get("byPath") or {"": ext}).values())
    d = rng.choice(descs)
    exts = cfg.get("extenders") or []
    r = rng.random()
    nodes = pools.node_names
    if r < 0.3 and nodes:
        f = d.setdefault("filter", {})
        which = rng.choice(["reject", "unresolvable"])
        m = f.setdefault(which, {})
        n = rng.choice(nodes)
        if n in m:
            del m[n]
        else:
            m[n] = rng.choice(["rack power budget exceeded", "node is drained", "license seat unavailable on node"])
        return f"extender {which} {n}"
    if r < 0.5 and nodes:
        pr = d.setdefault("prioritize", {})
        n = rng.choice(nodes)
        pr[n] = rng.randrange(11)
        return f"extender prioritize {n}={pr[n]}"
    if r < 0.6:
        if d.get("error"):
            d.pop("error")
            return "extender error removed"
        d["error"] = rng.choice(["filter", "filter-http", "prioritize"])
        return f"extender error {d['error']}"
    if exts:
        e = rng.choice(exts)
        k = rng.choice(["weight", "ignorable", "nodeCacheCapable", "filterVerb", "prioritizeVerb", "managedResources"])
        if k == "weight":
            e["weight"] = rng.choice([1, 2, 3, 5, 10])
        elif k in ("ignorable", "nodeCacheCapable"):
            e[k] = not e.get(k, False)
            if k == "nodeCacheCapable":
                d["nodeCacheCapable"] = e[k]
        elif k in ("filterVerb", "prioritizeVerb"):
            if e.get(k):
                e.pop(k)
                if k == "prioritizeVerb":
                    e.pop("weight", None)
            else:
                e[k] = "filter" if k == "filterVerb" else "prioritize"
                if k == "prioritizeVerb":
                    e["weight"] = rng.choice([1, 2, 5])
        else:
            res = sorted({k2 for p in scn.pods for c in _containers(p) for k2 in ((c.get("resources") or {}).get("requests") or {})})
            if not res:
                return None
            e["managedResources"] = [{"name": rng.choice(res), "ignoredByScheduler": rng.random() < 0.5}]
        return f"extender config {k}={e.get(k)}"
    return None


# ---------------------------------------------------------------------------------------------
# the menu and the repair pass

Mutation = Callable[[random.Random, Scenario, Pools], "str | None"]
MUTATIONS: list[tuple[float, Mutation, frozenset[str]]] = [
    (4, mutate_leaf, frozenset({"conformance", "sequence", "extender"})),
    (1, drop_something, frozenset({"conformance", "sequence", "extender"})),
    (0.5, dup_something, frozenset({"conformance", "sequence", "extender"})),
    (2, node_resources, frozenset({"conformance", "sequence", "extender"})),
    (1.5, node_label, frozenset({"conformance", "sequence", "extender"})),
    (1.5, node_taint, frozenset({"conformance", "sequence", "extender"})),
    (0.7, node_cordon, frozenset({"conformance", "sequence", "extender"})),
    (1, node_clone, frozenset({"conformance", "sequence", "extender"})),
    (0.7, node_remove, frozenset({"conformance", "sequence", "extender"})),
    (0.25, scale_out, frozenset({"conformance", "sequence"})),
    (0.5, pod_start_time, frozenset({"conformance", "sequence"})),
    (0.4, node_images, frozenset({"conformance", "extender"})),
    (1.2, pod_move, frozenset({"conformance", "sequence", "extender"})),
    (1.2, pod_clone, frozenset({"conformance", "sequence", "extender"})),
    (0.7, pod_remove, frozenset({"conformance", "sequence", "extender"})),
    (0.6, pod_crowd, frozenset({"conformance", "sequence"})),
    (1, pod_resources, frozenset({"conformance", "sequence", "extender"})),
    (1, pod_labels, frozenset({"conformance", "sequence"})),
    (0.5, pod_terminating, frozenset({"conformance", "sequence"})),
    (1, pod_priority, frozenset({"conformance", "sequence"})),
    (0.8, pod_nominate, frozenset({"conformance"})),
    (2, incoming(pod_resources), frozenset({"conformance", "sequence", "extender"})),
    (0.6, incoming(pod_labels), frozenset({"conformance", "sequence"})),
    (1.2, incoming(pod_priority), frozenset({"conformance", "sequence"})),
    (1, in_tolerations, frozenset({"conformance", "sequence", "extender"})),
    (0.8, in_node_selector, frozenset({"conformance", "sequence"})),
    (1, in_node_affinity, frozenset({"conformance", "sequence"})),
    (1.2, in_pod_affinity, frozenset({"conformance", "sequence"})),
    (1.5, in_spread, frozenset({"conformance", "sequence"})),
    (0.5, in_ports, frozenset({"conformance", "sequence"})),
    (0.2, in_gates, frozenset({"conformance"})),
    (0.6, in_shape, frozenset({"conformance", "sequence"})),
    (0.8, pdb, frozenset({"conformance", "sequence"})),
    (1, dra, frozenset({"conformance", "sequence"})),
    (1, storage, frozenset({"conformance"})),
    (2, config_mutation, frozenset({"conformance", "sequence", "extender"})),
    (0.8, plugin_sets, frozenset({"conformance", "sequence"})),
    (1.5, seq_pods, frozenset({"sequence"})),
    (0.7, seq_order, frozenset({"sequence"})),
    (0.5, seq_profiles, frozenset({"sequence"})),
    (3, extender_mutation, frozenset({"extender"})),
]


def mutate(rng: random.Random, scn: Scenario, n: int, *, extra: list[tuple[float, Mutation]] = ()) -> None:  # type: ignore[assignment]
    """Apply ``n`` applicable mutations (each retried a few times when it has nothing to change)."""
    global _RNG
    _RNG = rng
    menu = [(w, f) for w, f, kinds in MUTATIONS if scn.kind in kinds] + list(extra)
    weights = [w for w, _ in menu]
    done = 0
    tries = 0
    while done < n and tries < n * 10:
        tries += 1
        _, fn = rng.choices(menu, weights=weights)[0]
        pools = Pools(scn)
        try:
            desc = fn(rng, scn, pools)
        except (KeyError, IndexError, TypeError, AttributeError, ValueError):
            desc = None
        if desc:
            scn.log.append(f"{fn.__name__}: {desc}")
            done += 1
    repair(scn)


def _repair_expr(e: Doc, node: bool) -> None:
    op = e.get("operator")
    if op in ("Exists", "DoesNotExist"):
        e.pop("values", None)
    elif op in ("In", "NotIn"):
        if not e.get("values"):
            e["values"] = ["fz-a"]
    elif op in ("Gt", "Lt"):
        vals = e.get("values") or []
        if len(vals) != 1 or not re.fullmatch(r"-?[0-9]+", str(vals[0])):
            e["values"] = ["2"]


def _repair_resources(res: Doc) -> None:
    req = res.get("requests") or {}
    lim = res.get("limits") or {}
    for k in list(req):
        if k in lim:
            try:
                if "/" in k or k.startswith("hugepages"):
                    req[k] = lim[k]
                elif parse_quantity(req[k]) > parse_quantity(lim[k]):
                    lim[k] = req[k]
            except (QuantityError, ValueError, TypeError):
                pass


def _repair_label_keys(term: Doc) -> None:
    """matchLabelKeys may not name a key the labelSelector already has."""
    if not term.get("matchLabelKeys"):
        return
    sel = set((term.get("labelSelector") or {}).get("matchLabels") or {})
    sel |= {e.get("key") for e in ((term.get("labelSelector") or {}).get("matchExpressions") or [])}
    keys = [k for k in term["matchLabelKeys"] if k not in sel]
    if keys:
        term["matchLabelKeys"] = keys
    else:
        del term["matchLabelKeys"]


def repair(scn: Scenario) -> None:
    """What the API server would insist on, restored after the mutations."""
    for d in [*scn.cluster, *scn.pods, *([scn.config] if scn.config else [])]:
        for path, v in list(walk(d)):
            if not isinstance(v, dict) or not path or not isinstance(path[-1], int):
                continue
            k = last_key(path)
            if k in ("matchExpressions", "matchFields"):
                _repair_expr(v, True)
            elif k == "tolerations":
                if v.get("operator") == "Exists":
                    v.pop("value", None)
                if not v.get("key") and v.get("operator") != "Exists":
                    v["operator"] = "Exists"
                    v.pop("value", None)
                if v.get("tolerationSeconds") is not None and v.get("effect") != "NoExecute":
                    v.pop("tolerationSeconds")
            elif k == "topologySpreadConstraints":
                if v.get("minDomains") is not None and v.get("whenUnsatisfiable") != "DoNotSchedule":
                    v.pop("minDomains")
            elif k in ("containers", "initContainers") and isinstance(v.get("resources"), dict):
                _repair_resources(v["resources"])
        spec = d.get("spec")
        if d.get("kind") == "Pod" and isinstance(spec, dict) and isinstance(spec.get("resources"), dict):
            _repair_resources(spec["resources"])
    for p in [*scn.pods, *scn.cluster_pods()]:
        spec = _spec(p)
        tsc = spec.get("topologySpreadConstraints")
        if tsc:
            seen: set[tuple[str, str]] = set()
            keep = []
            for c in tsc:
                key = (c.get("topologyKey"), c.get("whenUnsatisfiable"))
                if key not in seen:
                    seen.add(key)
                    keep.append(c)
            spec["topologySpreadConstraints"] = keep
            for c in keep:
                _repair_label_keys(c)
        for kind in ("podAffinity", "podAntiAffinity"):
            a = (spec.get("affinity") or {}).get(kind) or {}
            terms = [*(a.get("requiredDuringSchedulingIgnoredDuringExecution") or []),
                     *[t.get("podAffinityTerm") or {} for t in a.get("preferredDuringSchedulingIgnoredDuringExecution") or []]]
            for t in terms:
                _repair_label_keys(t)
        nsel = spec.get("nodeSelector")
        if isinstance(nsel, dict) and not nsel:
            del spec["nodeSelector"]
        if spec.get("priorityClassName") and spec.get("priority") is not None:
            spec.pop("priority")
    # the pod's schedulerName must name a profile
    if scn.config and scn.config.get("profiles"):
        names = [_spec_name(p) for p in scn.config["profiles"]]
        for p in scn.pods:
            if (_spec(p).get("schedulerName") or "default-scheduler") not in names:
                _spec(p)["schedulerName"] = names[0]
