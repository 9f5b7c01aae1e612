"""Pod signatures: the parts of a pod that plugins say decide their verdicts and scores.

kube-scheduler v1.35's OpportunisticBatching (beta, on by default) reuses the sorted scores
of one scheduling cycle for the next pod when both pods have the same *signature*. Each
Filter/Score plugin contributes fragments (``SignPod``), or declares the pod unsignable. Two
signatures are equal exactly when upstream's JSON encodings of the fragment map are equal,
so the signers below keep what that encoding keeps and drop what it drops: order is ignored
where upstream sorts (tolerations, volumes, host ports, node-affinity terms, image names),
``configMap`` and ``secret`` volumes are left out, and an absent field differs from an empty
one (``null`` versus ``{}`` in JSON).

The key names are upstream's signer names; values are canonical JSON text, so a signature
is a plain string that compares as upstream's bytes do.

Upstream model: ``k8s.io/kube-scheduler framework/signers.go``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kschedctl.snapshot.model import Pod

IMAGE_NAMES = "v1.Pod.Spec.CanonicalImageNames()"
LABELS = "v1.Pod.Labels"
NODE_NAME = "v1.Pod.Spec.NodeName"
NODE_AFFINITY = "v1.Pod.Spec.Affinity.NodeAffinity"
NODE_SELECTOR = "v1.Pod.Spec.Affinity.NodeSelector"
HOST_PORTS = "v1.Pod.Spec.HostPorts()"
FEATURES = "v1.Pod.Spec.RequiredFeatures()"
RESOURCES = "v1.Pod.Spec.ContainerRequestsAndOverheads()"
SCHEDULER_NAME = "v1.Pod.Spec.SchedulerName"
TOLERATIONS = "v1.Pod.Spec.Tolerations"
VOLUMES = "v1.Pod.Spec.Volumes.NonSyntheticSources()"


@dataclass(frozen=True, slots=True)
class SignFragment:
    """One part of a pod's signature (``fwk.SignFragment``): a signer name and its value."""

    key: str
    value: Any


def canonical(value: Any) -> str:
    """JSON text with sorted keys: equal exactly when the values are equal."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


def _spec(pod: Pod) -> dict[str, Any]:
    spec = pod.raw.get("spec")
    return spec if isinstance(spec, dict) else {}


def _containers(pod: Pod) -> list[dict[str, Any]]:
    spec = _spec(pod)
    out: list[dict[str, Any]] = []
    for key in ("containers", "initContainers"):
        items = spec.get(key)
        if isinstance(items, list):
            out.extend(c for c in items if isinstance(c, dict))
    return out


def host_ports(pod: Pod) -> list[int]:
    """``HostPortsSigner``: the distinct non-zero host ports of all containers, ascending."""
    ports: set[int] = set()
    for c in pod.containers + pod.init_containers:
        for p in c.ports:
            if p.host_port:
                ports.add(p.host_port)
    return sorted(ports)


def tolerations(pod: Pod) -> list[Any]:
    """``TolerationsSigner``: the tolerations ordered by key, then value (stable, as Go's sort of few items)."""
    raw = _spec(pod).get("tolerations")
    items = [t for t in raw if isinstance(t, dict)] if isinstance(raw, list) else []
    items.sort(key=lambda t: (str(t.get("key") or ""), str(t.get("value") or "")))
    # every field of v1.Toleration is omitempty: an empty string and an absent field encode alike
    return [{k: v for k, v in t.items() if v is not None and v != ""} for t in items]


def volumes(pod: Pod) -> list[str]:
    """``VolumesSigner``: every volume source except configMap and secret ones, name left out, sorted."""
    out: list[str] = []
    for v in pod.volumes:
        if v.get("configMap") is not None or v.get("secret") is not None:
            continue
        out.append(canonical(_drop_nulls({k: x for k, x in v.items() if k != "name"})))
    return sorted(out)


def _requirements(reqs: Any) -> list[str]:
    out: list[str] = []
    for r in reqs if isinstance(reqs, list) else []:
        if not isinstance(r, dict):
            continue
        r = _drop_nulls(r)
        if isinstance(r.get("values"), list):
            r = {**r, "values": sorted(str(v) for v in r["values"])}
        out.append(canonical(r))
    return sorted(out)


def _term(term: Any) -> dict[str, list[str]]:
    t = term if isinstance(term, dict) else {}
    return {"MatchExpressions": _requirements(t.get("matchExpressions")), "MatchFields": _requirements(t.get("matchFields"))}


def node_affinity(pod: Pod) -> Any:
    """``NodeAffinitySigner``: required terms and preferred terms, each order-insensitive; None without one."""
    affinity = _spec(pod).get("affinity")
    na = affinity.get("nodeAffinity") if isinstance(affinity, dict) else None
    if not isinstance(na, dict):
        return None
    preferred = na.get("preferredDuringSchedulingIgnoredDuringExecution")
    pref = sorted(
        canonical({"Weight": p.get("weight", 0), "Preference": _term(p.get("preference"))})
        for p in (preferred if isinstance(preferred, list) else [])
        if isinstance(p, dict)
    )
    required = na.get("requiredDuringSchedulingIgnoredDuringExecution")
    terms = required.get("nodeSelectorTerms") if isinstance(required, dict) else None
    req = sorted(canonical(_term(t)) for t in (terms if isinstance(terms, list) else []))
    return {"Required": req, "Preferred": pref}


def node_selector(pod: Pod) -> Any:
    """``pod.Spec.NodeSelector`` as JSON sees it (absent: null)."""
    return _spec(pod).get("nodeSelector")


def labels(pod: Pod) -> Any:
    """``pod.Labels`` as JSON sees it (absent: null)."""
    md = pod.raw.get("metadata")
    return md.get("labels") if isinstance(md, dict) else None


def image_names(pod: Pod) -> list[str]:
    """The distinct normalized image names of all containers (``:latest`` added when untagged), sorted."""
    names: set[str] = set()
    for c in _containers(pod):
        image = str(c.get("image") or "")
        if image.rfind(":") <= image.rfind("/"):
            image += ":latest"
        names.add(image)
    return sorted(names)


def _drop_nulls(d: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if v is not None}
