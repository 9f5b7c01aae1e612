"""Identical pods: pods of one controller whose spec is the same, so that one remedy search answers for all.

A ReplicaSet of five pods that are too big makes five pending pods with one problem. Searched one
by one (``explain pending --fix``), the five searches split the shared budget five ways and, cut
short at different points, may answer differently for copies of the same pod. Pods are twins when
they are in the same namespace, have the same controller (its ownerReference's uid), and are the
same to the scheduler once what a controller or the API server sets per pod is left out: the name,
``generateName``'s suffix, uid, ``spec.nodeName``, ``spec.hostname`` and the labels a StatefulSet
gives each pod. Anything else that differs, volumes naming per-pod claims, a nomination, the
status of their resource claims, makes them different pods. A pod without a controller has no
twin: two bare pods with one spec are two decisions of their author.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from kschedctl.snapshot.model import Pod

#: Spec fields a controller or the API server sets per pod (not part of what the pods are).
PER_POD_SPEC = ("nodeName", "hostname")
#: Labels a controller sets per pod.
PER_POD_LABELS = ("statefulset.kubernetes.io/pod-name", "apps.kubernetes.io/pod-index")
#: Why twins share one answer, in the words the output uses.
TWIN_REASON = "identical spec and owner"


def twin_key(pod: Pod) -> str | None:
    """What a pod's twins share (equal keys: twins); None for a pod without a controller."""
    ref = pod.meta.controller_ref()
    if ref is None:
        return None
    spec = copy.deepcopy(pod.raw.get("spec") or {})
    for name in PER_POD_SPEC:
        spec.pop(name, None)
    labels = {k: v for k, v in pod.meta.labels.items() if k not in PER_POD_LABELS}
    status = pod.raw.get("status") or {}
    owner = [ref.get("kind"), ref.get("name"), ref.get("uid")]
    seen = [pod.namespace, owner, spec, labels, status.get("nominatedNodeName"), status.get("resourceClaimStatuses")]
    return json.dumps(seen, sort_keys=True, default=str)


def twins(pods: list[Pod]) -> dict[str, str]:
    """Each pod (by key) that is a twin of an earlier one of ``pods``, with the earlier one's key (the first
    of its twins, whose answer it takes)."""
    first: dict[str, str] = {}
    out: dict[str, str] = {}
    for pod in pods:
        key = twin_key(pod)
        if key is None:
            continue
        if key in first:
            out[pod.key] = first[key]
        else:
            first[key] = pod.key
    return out


def for_twin(found: dict[str, Any], twin: str, source: str) -> dict[str, Any]:
    """``source``'s search result (``RemedyReport.to_dict()``) as ``twin``'s answer: a copy whose pod-side
    remedies name the twin (their patches are the same: the pods' specs are), marked as shared."""
    out = copy.deepcopy(found)
    out["pod"] = twin
    for r in out.get("remedies", []):
        if r.get("side") == "pod" and r.get("target") == f"pod {source}":
            r["target"] = f"pod {twin}"
    out["sameAs"] = {"pod": source, "reason": TWIN_REASON}
    return out
