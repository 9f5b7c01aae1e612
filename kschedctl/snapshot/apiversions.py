"""What the API machinery of an older Kubernetes version does differently with the objects of a snapshot.

Two things change with the version a run follows (``kschedctl.framework.features``):

* an API version that a release does not serve: its client scheme has no such kind, so an object of
  it cannot be decoded at all and the run is refused (``resource.k8s.io/v1``, the GA DRA API, is
  served from v1.34; v1.33 only had the beta versions);
* a field behind a gate that is off: on create the API server drops it before it stores the
  object (``dropDisabledFields`` in ``pkg/api/pod/util.go``), so the scheduler never sees it. Pod-level
  ``spec.resources`` is such a field (PodLevelResources, alpha and off in v1.33).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kschedctl.framework.features import Features

#: API versions of kinds the scheduler reads, and the first minor whose scheme registers them.
SERVED_SINCE: Mapping[str, int] = {"resource.k8s.io/v1": 34}
#: Where client-go's scheme of those releases registers its kinds (named in the decoding error).
_SCHEME = "k8s.io/client-go/kubernetes/scheme/register.go:84"


def version_refusal(kind: str, api_version: Any, features: Features) -> str | None:
    """The decoding error for an object whose apiVersion ``features``' release does not serve; None if served."""
    if not isinstance(api_version, str):
        return None
    since = SERVED_SINCE.get(api_version)
    if since is None or features.minor >= since:
        return None
    return (
        f'no kind "{kind}" is registered for version "{api_version}" in scheme "{_SCHEME}" '
        f"(this API version does not exist in kube-scheduler/apiserver {features.release})"
    )


def drop_disabled_fields(kind: str, obj: dict[str, Any], features: Features) -> dict[str, Any]:
    """``obj`` as the API server stores it when gates its fields need are off (a copy when anything goes)."""
    if kind != "Pod" or features.enabled("PodLevelResources"):
        return obj
    spec = obj.get("spec")
    if not isinstance(spec, dict) or "resources" not in spec:
        return obj
    return {**obj, "spec": {k: v for k, v in spec.items() if k != "resources"}}


def dropped_field_note(pods: int, features: Features) -> str:
    return (
        f"spec.resources dropped from {pods} pod(s): PodLevelResources is off in {features.release}, "
        "and the API server drops the field of a disabled gate on create"
    )
