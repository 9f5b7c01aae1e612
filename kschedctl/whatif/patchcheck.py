"""Whether a remedy's patch applies as written: applied to the stored object, checked as the API server
would check the result, and said how it is applied (in place, by re-creating the pod, or through the
pod's controller).

``explain --fix`` proves a remedy by re-running the scheduling cycle on the changed pod or cluster.
That proof is only worth something if the printed patch makes that very change and the API server
takes it. So the patch is applied (``snapshot.strategicmerge``, as ``kubectl patch`` does) to the
stored manifest; the pod the cycle re-runs on is parsed from the result; and the result is
validated as on create (``apivalidation``) plus the Priority admission rule (a pod re-created with
another ``priorityClassName`` must not keep the old ``priority``). A live pod's spec is nearly
immutable (``apivalidation.admission.pod_update_error``): a bare pod is re-created with the patch
applied; a pod with a controller is changed through its controller's pod template, whose patched
spec is validated the same way when the snapshot holds the controller.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from kschedctl.apivalidation import validate_object, validate_pod_spec
from kschedctl.apivalidation.admission import pod_update_error, priority_admission_error
from kschedctl.snapshot import strategicmerge
from kschedctl.snapshot.cluster import SYSTEM_PRIORITY_CLASSES, Cluster
from kschedctl.snapshot.model import KubeObject, Node, Pod


@dataclass
class PatchCheck:
    """The patch applied to its target: the result, what the API server would refuse, how to apply it."""

    target: str
    how: str
    #: The patched manifest (for a pod: what the cycle re-runs on); None when the patch cannot apply.
    applied: dict[str, Any] | None = None
    refused: list[str] = field(default_factory=list)
    in_place: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"target": self.target, "how": self.how, "inPlace": self.in_place, "refused": list(self.refused)}


def _classes(cluster: Cluster) -> dict[str, dict[str, Any]]:
    out = {name: {"value": value} for name, value in SYSTEM_PRIORITY_CLASSES.items()}
    out.update({pc.name: pc.raw for pc in cluster.of_kind("PriorityClass")})
    return out


def _forbidden(kind: str, name: str, why: str) -> str:
    return f'{kind}s "{name}" is forbidden: {why}'


def _template_refusals(raw: dict[str, Any], classes: dict[str, dict[str, Any]], name: str) -> list[str]:
    """A controller's pod template: its spec validated, and Priority admission of the pods it makes."""
    spec = ((raw.get("spec") or {}).get("template") or {}).get("spec")
    errs: list[Any] = []
    validate_pod_spec(spec, "spec.template.spec", errs)
    out = [str(e) for e in errs]
    admission = priority_admission_error(spec if isinstance(spec, dict) else {}, classes)
    if admission is not None:
        out.append(_forbidden("pod", name, admission))
    return out


def _new(after: list[str], before: list[str]) -> list[str]:
    """The refusals the patch brings: an object the API server holds already passed them (a snapshot
    written by hand may not have)."""
    return [e for e in dict.fromkeys(after) if e not in before]


def _pod_refusals(raw: dict[str, Any], classes: dict[str, dict[str, Any]], name: str, minor: int) -> list[str]:
    """A pod manifest created as it stands: create validation, then Priority admission."""
    out = [str(e) for e in validate_object("Pod", raw, minor=minor)]
    admission = priority_admission_error(raw.get("spec") or {}, classes)
    return [*out, _forbidden("pod", name, admission)] if admission is not None else out


def controller_of(cluster: Cluster, pod: Pod) -> tuple[str, str, KubeObject | None] | None:
    """The pod's controller as a user changes it: (kind, name, its object when the snapshot holds it); a
    ReplicaSet's own controller (a Deployment) when it has one."""
    ref = pod.meta.controller_ref()
    if ref is None:
        return None
    kind, name = str(ref.get("kind") or ""), str(ref.get("name") or "")
    obj = cluster.get(kind, pod.namespace, name)
    if kind == "ReplicaSet" and obj is not None:
        up = obj.meta.controller_ref()
        if up is not None and up.get("kind") == "Deployment":
            kind, name = "Deployment", str(up.get("name") or "")
            obj = cluster.get(kind, pod.namespace, name)
    return kind, name, obj


def check_pod_patch(cluster: Cluster, pod: Pod, patch: dict[str, Any], minor: int) -> PatchCheck:
    """``patch`` applied to the stored pod (and to its controller's template, when it has one)."""
    owner = controller_of(cluster, pod)
    try:
        applied = strategicmerge.apply(pod.raw, patch, "Pod")
    except strategicmerge.PatchError as e:
        return PatchCheck(f"pod {pod.key}", "not applicable", refused=[str(e)])
    classes = _classes(cluster)
    refused = _new(_pod_refusals(applied, classes, pod.name, minor), _pod_refusals(pod.raw, classes, pod.name, minor))
    if owner is not None:
        return _through_controller(owner, pod, patch, applied, refused, classes)
    if pod_update_error(pod.raw, applied) is None:
        body = json.dumps(patch, separators=(",", ":"))
        how = f"kubectl patch pod {pod.name} -n {pod.namespace} -p '{body}'"
        return PatchCheck(f"pod {pod.key}", how, applied, refused, in_place=True)
    how = ("re-create the pod with the patch applied (kubectl get pod -o yaml, apply the patch, kubectl delete and "
           "kubectl create): the API server refuses this change to a live pod's spec")
    return PatchCheck(f"pod {pod.key}", how, applied, refused)


def _through_controller(
    owner: tuple[str, str, KubeObject | None], pod: Pod, patch: dict[str, Any], applied: dict[str, Any],
    refused: list[str], classes: dict[str, dict[str, Any]],
) -> PatchCheck:
    kind, name, obj = owner
    wrapped = {"spec": {"template": patch}}
    body = json.dumps(wrapped, separators=(",", ":"))
    how = (f"patch the pod template of its controller, {kind} {name} (the same patch under spec.template): "
           f"kubectl patch {kind.lower()} {name} -n {pod.namespace} -p '{body}'")
    target = f"{kind} {pod.namespace}/{name}"
    if obj is not None and kind in strategicmerge.POD_SPEC_AT:
        try:
            template = strategicmerge.apply(obj.raw, wrapped, kind)
        except strategicmerge.PatchError as e:
            return PatchCheck(target, how, applied, [*refused, str(e)])
        refused = [*refused, *_new(_template_refusals(template, classes, pod.name), _template_refusals(obj.raw, classes, pod.name))]
    return PatchCheck(target, how, applied, list(dict.fromkeys(refused)))


def check_node_patch(node: Node, patch: dict[str, Any], command: str | None, minor: int) -> PatchCheck:
    """A node patch applied to the stored node."""
    try:
        applied = strategicmerge.apply(node.raw, patch, "Node")
    except strategicmerge.PatchError as e:
        return PatchCheck(f"node {node.name}", "not applicable", refused=[str(e)])
    how = command or f"kubectl patch node {node.name} -p '{json.dumps(patch, separators=(',', ':'))}'"
    refused = _new([str(e) for e in validate_object("Node", applied, minor=minor)], [str(e) for e in validate_object("Node", node.raw, minor=minor)])
    return PatchCheck(f"node {node.name}", how, applied, refused, in_place=True)


def check_new_node(node: Node, minor: int) -> PatchCheck:
    """A node to add, shaped like its group's nodes: its manifest validated as on create."""
    return PatchCheck(f"new node {node.name}", "add a node of this shape (scale its node group)", node.raw,
                      [str(e) for e in validate_object("Node", node.raw, minor=minor)])
