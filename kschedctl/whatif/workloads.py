"""Pods from manifests: what the workload controllers would create, as the scheduler would see it.

``simulate`` and ``diff-profiles`` accept pods *and* workloads (Deployment, ReplicaSet,
StatefulSet, Job, or a bare Pod used as a template with ``--replicas``). A scheduler never
sees a workload, only the pods its controller creates, so this module builds those pods:

* names ``<workload>-<i>`` (StatefulSet: ``<sts>-<ordinal>``), labels and annotations from the
  template plus the labels the controller adds (``pod-template-hash``, ``controller-revision-hash``,
  ``statefulset.kubernetes.io/pod-name``, the Job labels);
* an ``ownerReference`` to the controlling object, and that object in the cluster, because the
  default topology spreading of PodTopologySpread selects a pod's siblings through its owning
  ReplicaSet or StatefulSet (a Deployment's pods are owned by a synthetic ReplicaSet
  ``<deployment>-<hash>``, as the Deployment controller does);
* a StatefulSet's ``volumeClaimTemplates`` as PersistentVolumeClaims ``<claim>-<sts>-<ordinal>``
  (Pending, with the cluster's default StorageClass when none is named) and the pod volumes
  that use them;
* for ``resourceClaimTemplateName`` entries whose ResourceClaimTemplate is in the pod file, what
  the resourceclaim controller creates: a ResourceClaim ``<pod>-<claim>-<suffix>`` owned by the
  pod, named in the pod's ``status.resourceClaimStatuses``;
* the API server's defaulting, by constructing through ``kschedctl.snapshot.model.Pod`` and
  ``Cluster.default_priority``, exactly as the loader does.

Other objects in the same files that the scheduler reads (Services, PVCs, PDBs,
PriorityClasses...) are added to the cluster the what-if runs against. No I/O here: the caller
parses the files into ``Document``s.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from kschedctl.errors import InputError
from kschedctl.kube.features import Features
from kschedctl.kube.versions import DEFAULT_FEATURES
from kschedctl.snapshot.cluster import KNOWN_KINDS, Cluster
from kschedctl.snapshot.loader import Document, admit_pod, check_object
from kschedctl.snapshot.model import KubeObject, Pod

#: Kinds this module expands, with the apiVersion their ownerReferences carry.
WORKLOAD_KINDS: dict[str, str] = {
    "Pod": "v1",
    "Deployment": "apps/v1",
    "ReplicaSet": "apps/v1",
    "StatefulSet": "apps/v1",
    "Job": "batch/v1",
}

UID_PREFIX = "kschedctl-whatif"
DEFAULT_STORAGE_CLASS_ANNOTATION = "storageclass.kubernetes.io/is-default-class"
#: k8s.io/apimachinery's SafeEncodeString alphabet (no vowels, no confusable digits).
_SAFE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


def _safe_encode(s: str) -> str:
    return "".join(_SAFE_ALPHABET[ord(ch) % len(_SAFE_ALPHABET)] for ch in s)


def template_hash(template: dict[str, Any]) -> str:
    """A stable short hash of a pod template, spelled like ``pod-template-hash`` values.

    The controllers hash Go's printed form of the template, which cannot be reproduced here;
    this is an FNV-1a hash of its JSON: stable across runs, different per template.
    """
    h = 0x811C9DC5
    for b in json.dumps(template, sort_keys=True, default=str).encode():
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    return _safe_encode(str(h))


def _mapping(value: Any, what: str, where: dict[str, Any]) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InputError("must be a mapping", field=what, **where)
    return value


def _count(value: Any, what: str, where: dict[str, Any], default: int) -> int:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InputError(f"must be a non-negative integer, got {value!r}", field=what, **where)
    return value


@dataclass
class Workload:
    """One Pod or workload manifest, ready to produce the pods its controller would create."""

    kind: str
    name: str
    namespace: str
    raw: dict[str, Any]
    #: How many pods the manifest asks for (``replicas``, a Job's parallelism; 1 for a Pod).
    replicas: int
    source: str = ""
    document: int = 0
    #: The workload's ``spec`` (a Pod's own spec), validated as a mapping.
    spec: dict[str, Any] = field(default_factory=dict)
    #: The controlling object the pods point at (added to the cluster when it is not there).
    owner: KubeObject | None = None
    template_meta: dict[str, Any] = field(default_factory=dict)
    template_spec: dict[str, Any] = field(default_factory=dict)
    #: Labels the controller adds to every pod.
    controller_labels: dict[str, str] = field(default_factory=dict)
    #: A bare Pod used as a template: copies ``<pod>-<i>`` instead of the pod itself.
    as_template: bool = False
    notes: list[str] = field(default_factory=list)

    @property
    def display(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name}"

    def _where(self) -> dict[str, Any]:
        return {"source": self.source or None, "document": self.document or None, "obj": self.display}

    # -- pods -----------------------------------------------------------------------------------
    def pod_names(self, cluster: Cluster, count: int | None, taken: set[str]) -> Iterator[tuple[int, str]]:
        """(index, name) of the pods to create: ``count`` of them, or without end when None.

        Names already used in the cluster or by pods generated earlier in the run are skipped
        (StatefulSet ordinals that exist are pods the controller would not create again).
        """
        if self.kind == "Pod" and not self.as_template:
            yield 0, self.name
            return
        start = 0
        if self.kind == "StatefulSet":
            ordinals = _mapping(self.spec.get("ordinals"), "spec.ordinals", self._where())
            start = _count(ordinals.get("start"), "spec.ordinals.start", self._where(), 0)
        made = 0
        i = start
        while count is None or made < count:
            name = f"{self.name}-{i}"
            key = f"{self.namespace}/{name}"
            if key not in taken and cluster.pod(self.namespace, name) is None:
                taken.add(key)
                made += 1
                yield i, name
            i += 1

    def build_pod(
        self, index: int, name: str, cluster: Cluster, claim_templates: dict[str, KubeObject] | None = None
    ) -> tuple[Pod, list[KubeObject]]:
        """The pod named ``name`` (the ``index``-th of the workload) and the claims it needs created
        (``claim_templates``: the ResourceClaimTemplates of the pod file, by namespace/name)."""
        if self.kind == "Pod" and not self.as_template:
            raw = copy.deepcopy(self.raw)
            raw.setdefault("metadata", {})["namespace"] = self.namespace
            return self._pod(raw), []
        meta: dict[str, Any] = {
            "name": name,
            "namespace": self.namespace,
            "uid": f"{UID_PREFIX}-{self.namespace}-{name}",
            "labels": {**_str_map(self.template_meta.get("labels")), **self.controller_labels},
        }
        annotations = _str_map(self.template_meta.get("annotations"))
        spec = copy.deepcopy(self.template_spec)
        claims: list[KubeObject] = []
        if self.kind == "Pod":
            owners = self.raw.get("metadata", {}).get("ownerReferences")
            if owners:
                meta["ownerReferences"] = copy.deepcopy(owners)
        elif self.owner is not None:
            meta["ownerReferences"] = [
                {
                    "apiVersion": self.owner.api_version,
                    "kind": self.owner.kind,
                    "name": self.owner.name,
                    "uid": self.owner.meta.uid,
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ]
        if self.kind == "StatefulSet":
            meta["labels"]["statefulset.kubernetes.io/pod-name"] = name
            meta["labels"]["apps.kubernetes.io/pod-index"] = str(index)
            claims = self._claims_for(index, spec, cluster)
        elif self.kind == "Job":
            mode = self.spec.get("completionMode")
            if mode == "Indexed":
                annotations["batch.kubernetes.io/job-completion-index"] = str(index)
                meta["labels"]["batch.kubernetes.io/job-completion-index"] = str(index)
        if annotations:
            meta["annotations"] = annotations
        raw = {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": {"phase": "Pending"}}
        claims.extend(self._resource_claims_for(raw, claim_templates or {}))
        return self._pod(raw), claims

    def _pod(self, raw: dict[str, Any]) -> Pod:
        try:
            return Pod.from_raw(raw)
        except InputError as e:
            raise e.located(**self._where()) from None

    def _claims_for(self, ordinal: int, spec: dict[str, Any], cluster: Cluster) -> list[KubeObject]:
        """``volumeClaimTemplates`` -> PVCs ``<template>-<sts>-<ordinal>`` and the pod volumes using them."""
        where = self._where()
        templates = self.spec.get("volumeClaimTemplates") or []
        if not isinstance(templates, list):
            raise InputError("must be a list", field="spec.volumeClaimTemplates", **where)
        out: list[KubeObject] = []
        volumes = [v for v in spec.get("volumes") or [] if isinstance(v, dict)]
        for i, t in enumerate(templates):
            t = _mapping(t, f"spec.volumeClaimTemplates[{i}]", where)
            tname = str(_mapping(t.get("metadata"), f"spec.volumeClaimTemplates[{i}].metadata", where).get("name") or "")
            if not tname:
                raise InputError("needs metadata.name", field=f"spec.volumeClaimTemplates[{i}]", **where)
            claim = f"{tname}-{self.name}-{ordinal}"
            volumes = [v for v in volumes if v.get("name") != tname]
            volumes.append({"name": tname, "persistentVolumeClaim": {"claimName": claim}})
            if cluster.get("PersistentVolumeClaim", self.namespace, claim) is not None:
                continue  # the claim of an earlier incarnation: the controller reuses it
            pvc_spec = copy.deepcopy(_mapping(t.get("spec"), f"spec.volumeClaimTemplates[{i}].spec", where))
            if "storageClassName" not in pvc_spec:
                default_class = default_storage_class(cluster)
                if default_class:
                    pvc_spec["storageClassName"] = default_class
            pvc_spec.setdefault("volumeMode", "Filesystem")
            selector = self.spec.get("selector") or {}
            labels = _str_map(selector.get("matchLabels")) if isinstance(selector, dict) else {}
            out.append(
                KubeObject(
                    {
                        "apiVersion": "v1",
                        "kind": "PersistentVolumeClaim",
                        "metadata": {
                            "name": claim,
                            "namespace": self.namespace,
                            "uid": f"{UID_PREFIX}-pvc-{self.namespace}-{claim}",
                            "labels": labels,
                        },
                        "spec": pvc_spec,
                        "status": {"phase": "Pending"},
                    },
                    "PersistentVolumeClaim",
                    True,
                )
            )
        if templates:
            spec["volumes"] = volumes
        return out


    def _resource_claims_for(self, raw: dict[str, Any], templates: dict[str, KubeObject]) -> list[KubeObject]:
        """The resourceclaim controller's work for a new pod: one ResourceClaim per ``resourceClaimTemplateName``
        entry whose template is in the pod file, owned by the pod and named in its ``resourceClaimStatuses``.
        Without the template the pod stays as the scheduler would first see it (waiting for its claim)."""
        meta, spec = raw["metadata"], raw["spec"]
        entries = spec.get("resourceClaims")
        out: list[KubeObject] = []
        statuses: list[dict[str, Any]] = []
        for i, entry in enumerate(entries if isinstance(entries, list) else []):
            entry = _mapping(entry, f"spec.template.spec.resourceClaims[{i}]", self._where())
            tname = entry.get("resourceClaimTemplateName")
            template = templates.get(f"{self.namespace}/{tname}") if tname else None
            if template is None:
                continue
            claim_name = f"{meta['name']}-{entry.get('name', '')}-{template_hash({'pod': meta['name'], 'claim': entry.get('name')})[:5]}"
            tmeta = _mapping(template.spec.get("metadata"), "spec.metadata", {"source": "ResourceClaimTemplate " + template.key})
            out.append(
                KubeObject(
                    {
                        "apiVersion": "resource.k8s.io/v1",
                        "kind": "ResourceClaim",
                        "metadata": {
                            "name": claim_name,
                            "namespace": self.namespace,
                            "uid": f"{UID_PREFIX}-resourceclaim-{self.namespace}-{claim_name}",
                            "resourceVersion": "1",
                            "labels": _str_map(tmeta.get("labels")),
                            "annotations": {
                                **_str_map(tmeta.get("annotations")),
                                "resource.kubernetes.io/pod-claim-name": str(entry.get("name", "")),
                            },
                            "ownerReferences": [
                                {"apiVersion": "v1", "kind": "Pod", "name": meta["name"], "uid": meta["uid"],
                                 "controller": True, "blockOwnerDeletion": True}
                            ],
                        },
                        "spec": copy.deepcopy(template.spec.get("spec") or {}),
                    },
                    "ResourceClaim",
                    True,
                )
            )
            statuses.append({"name": entry.get("name"), "resourceClaimName": claim_name})
        if statuses:
            raw["status"]["resourceClaimStatuses"] = statuses
        return out


def _str_map(value: Any) -> dict[str, str]:
    if not isinstance(value, dict):
        return {}
    return {str(k): "" if v is None else str(v) for k, v in value.items()}


def default_storage_class(cluster: Cluster) -> str:
    """The DefaultStorageClass admission plugin's choice: the newest class marked default."""
    marked = [
        sc
        for sc in cluster.of_kind("StorageClass")
        if str(sc.meta.annotations.get(DEFAULT_STORAGE_CLASS_ANNOTATION, "")).lower() == "true"
    ]
    if not marked:
        return ""
    marked.sort(key=lambda sc: (sc.meta.creation_timestamp, sc.name))
    return marked[-1].name


def parse_workload(doc: Document, cluster: Cluster, features: Features = DEFAULT_FEATURES) -> Workload:
    """One Pod/Deployment/ReplicaSet/StatefulSet/Job document -> a Workload (validated; an apiVersion
    refused with what ``features``' release reads the kind as)."""
    obj = doc.obj
    kind = str(obj.get("kind"))
    where: dict[str, Any] = {"source": doc.source, "document": doc.index}
    check_object(doc, workload=kind != "Pod", features=features)  # what the API server would refuse
    md = _mapping(obj.get("metadata"), "metadata", where)
    name = str(md.get("name") or "")
    if not name:
        raise InputError("document has no metadata.name", field="metadata.name", **where)
    namespace = str(md.get("namespace") or "default")
    w = Workload(kind, name, namespace, obj, 1, doc.source, doc.index)
    where["obj"] = w.display
    if kind == "Pod":
        w.template_meta = md
        w.template_spec = w.spec = _mapping(obj.get("spec"), "spec", where)
        w._pod(copy.deepcopy({**obj, "metadata": {**md, "namespace": namespace}}))  # validate early
        return w
    spec = w.spec = _mapping(obj.get("spec"), "spec", where)
    template = _mapping(spec.get("template"), "spec.template", where)
    if not template:
        raise InputError(f"a {kind} needs a pod template", field="spec.template", **where)
    w.template_meta = _mapping(template.get("metadata"), "spec.template.metadata", where)
    w.template_spec = _mapping(template.get("spec"), "spec.template.spec", where)
    uid = str(md.get("uid") or f"{UID_PREFIX}-{kind.lower()}-{namespace}-{name}")
    if kind == "Job":
        parallelism = _count(spec.get("parallelism"), "spec.parallelism", where, 1)
        completions = spec.get("completions")
        if completions is not None:
            parallelism = min(parallelism, _count(completions, "spec.completions", where, 1))
        if spec.get("suspend"):
            w.notes.append(f"{w.display} is suspended: its controller creates no pods")
            parallelism = 0
        w.replicas = parallelism
        w.controller_labels = {
            "batch.kubernetes.io/controller-uid": uid,
            "batch.kubernetes.io/job-name": name,
            "controller-uid": uid,
            "job-name": name,
        }
        w.owner = KubeObject(
            {"apiVersion": "batch/v1", "kind": "Job", "metadata": {**md, "namespace": namespace, "uid": uid}, "spec": spec},
            "Job",
            True,
        )
        return w
    w.replicas = _count(spec.get("replicas"), "spec.replicas", where, 1)
    if kind == "Deployment":
        tmpl_hash = template_hash(template)
        rs_name = f"{name}-{tmpl_hash}"
        w.controller_labels = {"pod-template-hash": tmpl_hash}
        selector = copy.deepcopy(_mapping(spec.get("selector"), "spec.selector", where))
        selector["matchLabels"] = {**_str_map(selector.get("matchLabels")), "pod-template-hash": tmpl_hash}
        w.owner = cluster.get("ReplicaSet", namespace, rs_name) or KubeObject(
            {
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "metadata": {
                    "name": rs_name,
                    "namespace": namespace,
                    "uid": f"{UID_PREFIX}-replicaset-{namespace}-{rs_name}",
                    "labels": {**_str_map(w.template_meta.get("labels")), "pod-template-hash": tmpl_hash},
                    "ownerReferences": [
                        {"apiVersion": "apps/v1", "kind": "Deployment", "name": name, "uid": uid, "controller": True}
                    ],
                },
                "spec": {"replicas": w.replicas, "selector": selector, "template": template},
            },
            "ReplicaSet",
            True,
        )
        return w
    # ReplicaSet, StatefulSet: the object itself controls the pods.
    existing = cluster.get(kind, namespace, name)
    if kind == "StatefulSet":
        w.controller_labels = {"controller-revision-hash": f"{name}-{template_hash(template)}"}
    w.owner = existing or KubeObject({**obj, "metadata": {**md, "namespace": namespace, "uid": uid}}, kind, True)
    return w


@dataclass
class Manifests:
    """What a pod file holds: the workloads to expand and the other objects to add to the cluster."""

    workloads: list[Workload] = field(default_factory=list)
    objects: list[KubeObject] = field(default_factory=list)
    #: ResourceClaimTemplates of the pod file, by namespace/name (the claims of new pods are made from them).
    claim_templates: dict[str, KubeObject] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def parse_manifests(docs: Iterable[Document], cluster: Cluster, features: Features = DEFAULT_FEATURES) -> Manifests:
    """Sort the documents of pod files into workloads and other objects the scheduler reads (checked as
    ``features``' API server would)."""
    out = Manifests()
    skipped: dict[str, int] = {}
    for doc in docs:
        kind = doc.obj.get("kind")
        if not isinstance(kind, str) or not kind:
            raise InputError("document has no kind", source=doc.source, document=doc.index, field="kind")
        if kind in WORKLOAD_KINDS:
            out.workloads.append(parse_workload(doc, cluster, features))
        elif kind == "ResourceClaimTemplate":
            t = KubeObject(doc.obj, kind, True)
            if not t.name:
                raise InputError("document has no metadata.name", source=doc.source, document=doc.index, field="metadata.name")
            out.claim_templates[t.key] = t
        elif kind in KNOWN_KINDS and kind != "Node":
            md = doc.obj.get("metadata")
            if not isinstance(md, dict) or not md.get("name"):
                raise InputError("document has no metadata.name", source=doc.source, document=doc.index, field="metadata.name")
            check_object(doc, features=features)
            out.objects.append(KubeObject(doc.obj, kind, KNOWN_KINDS[kind]))
        else:
            skipped[kind] = skipped.get(kind, 0) + 1
    for kind, n in sorted(skipped.items()):
        why = "nodes belong in --snapshot" if kind == "Node" else "not a workload and not read by the scheduler"
        out.notes.append(f"skipped {n} {kind} object(s) of the pod file: {why}")
    for w in out.workloads:
        out.notes.extend(w.notes)
    if not out.workloads:
        kinds = ", ".join(WORKLOAD_KINDS)
        raise InputError(f"no pod or workload found (expected one of: {kinds})")
    return out


def extend_cluster(cluster: Cluster, objects: Iterable[KubeObject], *, always_copy: bool = False) -> Cluster:
    """A new Cluster with the same nodes, pods and objects plus ``objects`` (same key: replaced).

    The original stays untouched; nothing is deep-copied. Without objects to add (and without
    ``always_copy``) the cluster itself is returned.
    """
    extra = list(objects)
    if not extra and not always_copy:
        return cluster
    return cluster.copy_with(objects=extra)


def owner_objects(manifests: Manifests, cluster: Cluster) -> list[KubeObject]:
    """The file's objects plus each workload's controlling object that the cluster does not have yet."""
    out = list(manifests.objects)
    for w in manifests.workloads:
        o = w.owner
        if o is None or o.kind == "Job":
            continue  # default spreading does not look at Jobs
        if cluster.get(o.kind, o.namespace, o.name) is not o:
            out.append(o)
    return out


def needs_claims(w: Workload) -> bool:
    return w.kind == "StatefulSet" and bool(w.spec.get("volumeClaimTemplates"))


class PodFactory:
    """Creates the workloads' pods one by one against a private copy of the cluster.

    The copy holds the pod file's objects and the workloads' controlling objects, and
    receives each new pod's claims (StatefulSet PVCs, ResourceClaims from templates) as the
    pod is created, so plugins that read the cluster (default spreading, volume binding,
    DynamicResources) see them. Pods are created lazily: a simulation that owns the copy
    (``private``) writes its own changes to the same cluster, so claims made later are there.
    """

    def __init__(self, manifests: Manifests, cluster: Cluster, *, private: bool = False) -> None:
        """``private``: always work on a copy of ``cluster`` (a simulation that writes to it owns it)."""
        self.manifests = manifests
        extra = owner_objects(manifests, cluster)
        private = private or bool(manifests.claim_templates) or any(needs_claims(w) for w in manifests.workloads)
        self.cluster = extend_cluster(cluster, extra, always_copy=private)
        self.taken: set[str] = set()
        self.admitted: set[int] = set()

    def pods(self, w: Workload, count: int | None) -> Iterator[Pod]:
        """``count`` pods of ``w`` (None: without end; a bare Pod that is no template: itself, once)."""
        for index, name in w.pod_names(self.cluster, count, self.taken):
            pod, claims = w.build_pod(index, name, self.cluster, self.manifests.claim_templates)
            if id(w) not in self.admitted:  # every pod of a workload has the template's admission outcome
                self.admitted.add(id(w))
                self.manifests.notes.extend(admit_pod(self.cluster, pod, w.source or None))
            for c in claims:
                self.cluster.add_object(c)
            self.cluster.default_priority(pod)
            yield pod
