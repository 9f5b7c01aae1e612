"""What the API server refuses beyond create validation when a pod changes: the Priority admission
plugin's rule on create, and the pod update rule (a live pod's spec is nearly immutable).

``explain --fix`` prints patches for pods. A patch is only worth printing if the API server takes the
object it makes: re-creating a pod whose patch sets ``priorityClassName`` but keeps the ``priority``
admission filled in for the old class is refused ("the integer value of priority (0) must not be
provided in pod spec..."), and most changes to an existing pod's spec are refused outright, so the
pod must be re-created (or its controller's template patched).

Upstream model: ``plugin/pkg/admission/priority/admission.go`` (``admitPod`` on create) and
``pkg/apis/core/validation/validation.go`` (``ValidatePodUpdate``, the fields it lets change).
"""

from __future__ import annotations

import copy
from typing import Any

#: ``updatablePodSpecFields`` of validation.go, as the update error lists them.
UPDATABLE_POD_SPEC_FIELDS = (
    "`spec.containers[*].image`",
    "`spec.initContainers[*].image`",
    "`spec.activeDeadlineSeconds`",
    "`spec.tolerations` (only additions to existing tolerations)",
    "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)",
)
DEFAULT_PREEMPTION_POLICY = "PreemptLowerPriority"


def priority_admission_error(spec: dict[str, Any], classes: dict[str, dict[str, Any]]) -> str | None:
    """Why the Priority admission plugin refuses to create a pod of ``spec`` (None: it admits it).

    ``classes``: the cluster's PriorityClass manifests by name (the bootstrap ``system-`` classes
    included). The plugin computes the priority (and
    preemption policy) from the named class, or the global default class, or 0; a pod that already
    states a different one is refused."""
    name = spec.get("priorityClassName") or ""
    if name:
        pc = classes.get(name)
        if pc is None:
            return f"no PriorityClass with name {name} was found"
    else:
        pc = next((c for c in classes.values() if c.get("globalDefault")), None)
    priority = int((pc or {}).get("value") or 0)
    policy = str((pc or {}).get("preemptionPolicy") or DEFAULT_PREEMPTION_POLICY)
    stated = spec.get("priority")
    if stated is not None and stated != priority:
        return (f"the integer value of priority ({stated}) must not be provided in pod spec; priority admission "
                f"controller computed {priority} from the given PriorityClass name")
    stated_policy = spec.get("preemptionPolicy")
    if stated_policy is not None and stated_policy != policy:
        return (f"the string value of PreemptionPolicy ({stated_policy}) must not be provided in pod spec; priority "
                f"admission controller computed {policy} from the given PriorityClass name")
    return None


def _without_updatable(spec: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(spec)
    for key in ("activeDeadlineSeconds", "terminationGracePeriodSeconds", "tolerations"):
        out.pop(key, None)
    for key in ("containers", "initContainers"):
        for c in out.get(key) or []:
            if isinstance(c, dict):
                c.pop("image", None)
    return out


def pod_update_error(old: dict[str, Any], new: dict[str, Any]) -> str | None:
    """Why the API server refuses to update pod ``old`` (a manifest) to ``new`` in place (None: it takes
    it). Worded as ``ValidatePodUpdate`` words it, without the spec diff it appends."""
    old_spec, new_spec = old.get("spec") or {}, new.get("spec") or {}
    removed = [t for t in old_spec.get("tolerations") or [] if t not in (new_spec.get("tolerations") or [])]
    if _without_updatable(old_spec) != _without_updatable(new_spec) or removed:
        return f"spec: Forbidden: pod updates may not change fields other than {','.join(UPDATABLE_POD_SPEC_FIELDS)}"
    return None
