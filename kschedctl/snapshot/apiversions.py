"""What the API machinery of an older Kubernetes version does differently with the objects of a snapshot.

Three things change with the version a run follows (``kschedctl.kube.features``), and the refusal of
an apiVersion no release serves a kind as says what that version reads it as (``served_hint``):

* an API version that a release does not serve: its client scheme has no such kind, so an object of
  it cannot be decoded at all and the run is refused (``resource.k8s.io/v1``, the GA DRA API, is
  served from v1.34; v1.33 only had the beta versions);
* an API version served only with a gate on, and only in some releases: ``scheduling.k8s.io/v1alpha2``
  (PodGroup, Workload) exists in v1.36 alone, ``v1beta1`` and ``v1alpha3`` (which replaced it) from
  v1.37, each only with ``GenericWorkload`` on (the API server serves the group only then), so a
  file holding such an object is refused unless the run's release serves its version and has that
  gate (the refusal of a version a release no longer serves names those it serves instead); a live
  server that listed it serves it, so objects it returned are kept;
* a field behind a gate that is off: on create the API server drops it before it stores the
  object (``dropDisabledFields`` in ``pkg/api/pod/util.go``), so the scheduler never sees it. Pod-level
  ``spec.resources`` is such a field (PodLevelResources, alpha and off in v1.33), and so is a
  container's ``volumeMounts[].bindMountOptions`` (VolumeBindMountOptions, alpha and off in v1.37).

Read the other way, what a cluster's API server serves and stores tells which of those gates it
runs with (``gates_shown``): a snapshot holding PodGroup objects, or pods that kept
``spec.schedulingGroup``, comes from a server with ``GenericWorkload`` on, whatever the version's
defaults say. A run given no value for such a gate follows the cluster (``follow_note`` says so),
whether the snapshot is a file or a live server: one rule for both.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from kschedctl.apivalidation import API_VERSIONS
from kschedctl.kube.features import Features
from kschedctl.kube.gates import GENERIC_WORKLOAD, POD_LEVEL_RESOURCES, VOLUME_BIND_MOUNT_OPTIONS

#: API versions of kinds the scheduler reads, and the first minor whose scheme registers them.
SERVED_SINCE: Mapping[str, int] = {"resource.k8s.io/v1": 34}
@dataclass(frozen=True)
class GatedVersion:
    """An API version the API server serves only in the releases ``since``..``until`` (None: still
    served) and only with ``gate`` on."""

    since: int
    until: int | None
    gate: str

    def exists_in(self, minor: int) -> bool:
        return self.since <= minor and (self.until is None or minor <= self.until)


#: API versions served only with a gate on: the pod-group API, alpha in v1.36 (v1alpha2), beta (v1beta1)
#: and alpha (v1alpha3) from v1.37, which dropped v1alpha2.
SERVED_WITH_GATE: Mapping[str, GatedVersion] = {
    "scheduling.k8s.io/v1alpha2": GatedVersion(36, 36, GENERIC_WORKLOAD),
    "scheduling.k8s.io/v1beta1": GatedVersion(37, None, GENERIC_WORKLOAD),
    "scheduling.k8s.io/v1alpha3": GatedVersion(37, None, GENERIC_WORKLOAD),
}
#: Where client-go's scheme of those releases registers its kinds (named in the decoding error).
_SCHEME = "k8s.io/client-go/kubernetes/scheme/register.go:84"


def version_refusal(kind: str, api_version: Any, features: Features, *, listed: bool = False) -> str | None:
    """The decoding error for an object whose apiVersion ``features``' release does not serve; None if served.

    ``listed``: the object came from a live server's list, so that server serves its gated API version."""
    if not isinstance(api_version, str):
        return None
    gated = SERVED_WITH_GATE.get(api_version)
    if gated is not None:
        return None if listed else gated_refusal(kind, api_version, features, gated)
    since = SERVED_SINCE.get(api_version)
    if since is None or features.minor >= since:
        return None
    return (
        f'no kind "{kind}" is registered for version "{api_version}" in scheme "{_SCHEME}" '
        f"(this API version does not exist in kube-scheduler/apiserver {features.release})"
    )


def gated_refusal(kind: str, api_version: str, features: Features, gated: GatedVersion) -> str | None:
    """The API server's answer to an object of an API version it serves only in some releases with a gate on."""
    exists = gated.exists_in(features.minor)
    if exists and features.enabled(gated.gate):
        return None
    if exists:
        why = f"kube-apiserver {features.release} serves it only with the {gated.gate} feature gate on"
    else:
        why = f"kube-apiserver {features.release} does not have this API version"
        group = api_version.split("/", 1)[0]
        instead = [v for v, g in SERVED_WITH_GATE.items() if v.startswith(group + "/") and g.exists_in(features.minor)]
        if gated.until is not None and features.minor > gated.until and instead:
            why += f": it was removed after v1.{gated.until}; kube-apiserver {features.release} serves {kind} as {' and '.join(instead)}"
    return f'no matches for kind "{kind}" in version "{api_version}" ({why})'


def _exists_in(api_version: str, minor: int) -> bool:
    """Whether v1.<minor>'s API server has ``api_version`` at all (with its gate on, for a gated one)."""
    gated = SERVED_WITH_GATE.get(api_version)
    return gated.exists_in(minor) if gated is not None else SERVED_SINCE.get(api_version, 0) <= minor


def served_hint(kind: str, features: Features) -> str | None:
    """What ``features``' release reads ``kind`` as, for the refusal of an object of another apiVersion
    (None for a kind the scheduler does not read): the apiVersion, and when that release's API server
    does not serve it (or only with a gate on), since when it does."""
    versions = API_VERSIONS.get(kind)
    if not versions:
        return None
    release = features.release
    now = [v for v in versions if version_refusal(kind, v, features) is None]
    if now:
        return f"kube-scheduler {release} reads {kind} as {' or '.join(now)}"
    gated_now = [v for v in versions if _exists_in(v, features.minor)]  # there, but behind a gate that is off
    if gated_now:
        gate = SERVED_WITH_GATE[gated_now[0]].gate
        return (f"kube-scheduler {release} reads {kind} as {' or '.join(gated_now)}, which kube-apiserver {release} "
                f"serves only with the {gate} feature gate on")
    version = next((v for v in versions if not _exists_in(v, features.minor) and _later(v, features.minor)), versions[0])
    gated = SERVED_WITH_GATE.get(version)
    since = gated.since if gated is not None else SERVED_SINCE.get(version, features.minor)
    with_gate = f", with the {gated.gate} feature gate on" if gated is not None else ""
    return (
        f"kschedctl reads {kind} as {version}, which kube-apiserver {release} does not serve: "
        f"it comes with v1.{since}{with_gate}"
    )


def _later(api_version: str, minor: int) -> bool:
    """Whether ``api_version`` comes with a release after v1.<minor>."""
    gated = SERVED_WITH_GATE.get(api_version)
    return (gated.since if gated is not None else SERVED_SINCE.get(api_version, 0)) > minor


#: Pod spec fields the API server drops on create when their gate is off (``dropDisabledFields``).
GATED_POD_FIELDS: Mapping[str, str] = {"resources": POD_LEVEL_RESOURCES, "schedulingGroup": GENERIC_WORKLOAD}
#: Fields of a container's volume mounts it drops likewise (every container, init and ephemeral one).
GATED_MOUNT_FIELDS: Mapping[str, str] = {"bindMountOptions": VOLUME_BIND_MOUNT_OPTIONS}
_CONTAINER_LISTS = ("initContainers", "containers", "ephemeralContainers")


def _mount_field(field: str) -> str:
    """How a note names a volume-mount field (below ``spec.``)."""
    return f"containers[*].volumeMounts[*].{field}"


def _mounts_with(spec: dict[str, Any], field: str) -> bool:
    """Whether a volume mount of some container has ``field`` (fields of the wrong type are the validator's)."""
    for key in _CONTAINER_LISTS:
        containers = spec.get(key)
        for c in containers if isinstance(containers, list) else []:
            mounts = c.get("volumeMounts") if isinstance(c, dict) else None
            if isinstance(mounts, list) and any(isinstance(m, dict) and field in m for m in mounts):
                return True
    return False


def _without_mount_fields(spec: dict[str, Any], fields: set[str]) -> dict[str, Any]:
    """``spec`` with ``fields`` taken out of every container's volume mounts (copies where they go)."""
    out = dict(spec)
    for key in _CONTAINER_LISTS:
        containers = spec.get(key)
        if not isinstance(containers, list):
            continue
        out[key] = [
            {**c, "volumeMounts": [
                {k: v for k, v in m.items() if k not in fields} if isinstance(m, dict) else m for m in c["volumeMounts"]
            ]} if isinstance(c, dict) and isinstance(c.get("volumeMounts"), list) else c
            for c in containers
        ]
    return out


def has_gated_field(spec: dict[str, Any]) -> bool:
    """Whether a pod's ``spec`` has a field that some release's gates drop (``drop_disabled_fields``) or that
    shows a gate on (``gates_shown``)."""
    return any(f in spec for f in GATED_POD_FIELDS) or any(_mounts_with(spec, f) for f in GATED_MOUNT_FIELDS)


def drop_disabled_fields(kind: str, obj: dict[str, Any], features: Features) -> dict[str, Any]:
    """``obj`` as the API server stores it when gates its fields need are off (a copy when anything goes)."""
    if kind != "Pod":
        return obj
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return obj
    dropped = {f for f, gate in GATED_POD_FIELDS.items() if f in spec and not features.enabled(gate)}
    mounts = {f for f, gate in GATED_MOUNT_FIELDS.items() if not features.enabled(gate) and _mounts_with(spec, f)}
    if not dropped and not mounts:
        return obj
    kept = {k: v for k, v in spec.items() if k not in dropped}
    return {**obj, "spec": _without_mount_fields(kept, mounts) if mounts else kept}


def dropped_fields(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """The gated spec fields ``drop_disabled_fields`` took out of a pod (a mount field as ``_mount_field``
    names it)."""
    if before is after:
        return []
    spec, kept = before.get("spec") or {}, after.get("spec") or {}
    out = [f for f in GATED_POD_FIELDS if f in spec and f not in kept]
    out += [_mount_field(f) for f in GATED_MOUNT_FIELDS if _mounts_with(spec, f) and not _mounts_with(kept, f)]
    return out


def dropped_field_note(pods: int, features: Features, name: str = "resources", *, listed: bool = False) -> str:
    """The note on pods whose gated field was dropped; ``listed``: the pods came from a live server, which kept
    the field, so it runs with the gate on while this run has it off."""
    gate = {**GATED_POD_FIELDS, **{_mount_field(f): g for f, g in GATED_MOUNT_FIELDS.items()}}[name]
    if listed:
        return (
            f"spec.{name} dropped from {pods} pod(s): {gate} is off in this run, but the cluster's API server kept the "
            f"field, so it runs with {gate} on (and its kube-scheduler most likely too): the run's gates differ from "
            "the cluster's"
        )
    return (
        f"spec.{name} dropped from {pods} pod(s): {gate} is off in {features.release}, "
        "and the API server drops the field of a disabled gate on create"
    )


# --------------------------------------------------------------------------- what a cluster shows of its gates


def candidate_gates(features: Features) -> set[str]:
    """The gates a cluster's objects could show on while ``features`` has them off: those of
    ``SERVED_WITH_GATE`` (of a version its release has), ``GATED_POD_FIELDS`` and ``GATED_MOUNT_FIELDS``
    that its release registers."""
    served = {g.gate for g in SERVED_WITH_GATE.values() if g.exists_in(features.minor)}
    out = served | set(GATED_POD_FIELDS.values()) | set(GATED_MOUNT_FIELDS.values())
    return {g for g in out if g in features.gates and not features.enabled(g)}


def served_gate_versions(features: Features) -> dict[str, str]:
    """The API versions whose being served would show a gate ``features`` has off: version -> gate."""
    wanted = candidate_gates(features)
    return {v: g.gate for v, g in SERVED_WITH_GATE.items() if g.gate in wanted and g.exists_in(features.minor)}


def gates_shown(objects: Iterable[Mapping[str, Any]], features: Features) -> dict[str, str]:
    """The gates off in ``features`` that the API server which stored ``objects`` evidently runs with, each
    with what shows it: objects of an API version it serves only with the gate on, pods that kept a field
    it drops when the gate is off."""
    look = GateLook(features)
    if look.wanted:
        for obj in objects:
            look.see(obj)
    return look.shown()


class GateLook:
    """``gates_shown`` one object at a time (``see``), for a reader that builds the model of the same objects
    as it goes: what it found so far is ``shown()``."""

    def __init__(self, features: Features) -> None:
        #: The gates looked for (``candidate_gates``): none, and ``see`` need not be called.
        self.wanted = candidate_gates(features)
        self._versions = served_gate_versions(features) if self.wanted else {}
        self._fields = [(n, g) for n, g in GATED_POD_FIELDS.items() if g in self.wanted]
        self._mounts = [(n, g) for n, g in GATED_MOUNT_FIELDS.items() if g in self.wanted]
        self._seen: dict[str, Counter[str]] = {}

    def see(self, obj: Mapping[str, Any]) -> None:
        """Note what ``obj`` (an object as stored) shows."""
        kind, version = obj.get("kind"), obj.get("apiVersion")
        gate = self._versions.get(version) if isinstance(version, str) else None
        if gate is not None:
            self._seen.setdefault(gate, Counter())[f"{kind} object(s) of {version}"] += 1
        spec = obj.get("spec") if kind == "Pod" else None
        if isinstance(spec, dict):
            for name, field_gate in self._fields:
                if name in spec:
                    self._seen.setdefault(field_gate, Counter())[f"pod(s) that kept spec.{name}"] += 1
            for name, field_gate in self._mounts:
                if _mounts_with(spec, name):
                    self._seen.setdefault(field_gate, Counter())[f"pod(s) that kept spec.{_mount_field(name)}"] += 1

    def shown(self) -> dict[str, str]:
        """Each gate the objects seen so far show, with what shows it."""
        return {gate: ", ".join(f"{n} {what}" for what, n in found.items()) for gate, found in self._seen.items()}


def follow_note(features: Features, shown: Mapping[str, str]) -> str:
    """The note of a run that turned on the gates a cluster shows (``shown``: gate -> what shows it), which
    ``features`` (the version's defaults) had off."""
    names = sorted(shown)
    gates = ", ".join(names)
    what = "; ".join(f"{g}: {shown[g]}" for g in names) if len(names) > 1 else shown[names[0]]
    flags = ",".join(f"{g}=false" for g in names)
    return (
        f"the cluster's API server runs with {gates} on, which kube-apiserver {features.release} has off by default "
        f"({what}: served and stored only with the gate on); this run turns {gates} on as well, as the cluster's "
        f"kube-scheduler most likely runs with it (--feature-gates {flags} follows the defaults instead); gates "
        "the API does not show keep their defaults"
    )
