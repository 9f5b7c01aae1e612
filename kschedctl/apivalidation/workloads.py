"""Workload manifests (Deployment, ReplicaSet, StatefulSet, Job) as ``simulate`` and ``diff-profiles``
read them: the selector, the replica count and the pod template (``apps/validation``, ``batch/validation``).
"""

from __future__ import annotations

from typing import Any

from kschedctl.apivalidation.common import (
    int32_field,
    validate_annotations,
    validate_labels,
    validate_object_meta,
)
from kschedctl.apivalidation.fielderrors import Errors, invalid, required
from kschedctl.apivalidation.pod import validate_pod_spec
from kschedctl.apivalidation.scheduling import validate_label_selector
from kschedctl.errors import InputError
from kschedctl.kube.goformat import GoJSON
from kschedctl.kube.names import name_is_dns_subdomain

#: Workload kinds ``simulate`` and ``diff-profiles`` expand (validated only when read as workloads).
WORKLOAD_KINDS = ("Deployment", "ReplicaSet", "StatefulSet", "Job")


def validate_workload(kind: str, raw: dict[str, Any]) -> Errors:
    """A workload manifest of ``-f`` as the API server would validate it on create."""
    errs: Errors = []
    validate_object_meta(raw.get("metadata"), True, name_is_dns_subdomain, errs)
    _workload_errors(kind, raw, errs)
    return errs


def _workload_errors(kind: str, raw: dict[str, Any], errs: Errors) -> None:
    """A Deployment/ReplicaSet/StatefulSet/Job as ``simulate`` reads it: selector, replicas, template."""
    spec = raw.get("spec")
    if not isinstance(spec, dict):
        errs.append(required("spec.template"))
        return
    replicas = int32_field(spec.get("replicas"), "spec.replicas", f"{kind}Spec", errs)
    if replicas is not None and replicas < 0:
        errs.append(invalid("spec.replicas", replicas, "must be greater than or equal to 0"))
    template = spec.get("template")
    tmeta = template.get("metadata") if isinstance(template, dict) else None
    tlabels = tmeta.get("labels") if isinstance(tmeta, dict) else None
    selector = spec.get("selector")
    if kind != "Job":
        if selector is None:
            errs.append(required("spec.selector"))
        elif isinstance(selector, dict):
            validate_label_selector(selector, "spec.selector", errs)
            if not selector.get("matchLabels") and not selector.get("matchExpressions"):
                errs.append(invalid("spec.selector", GoJSON(selector), f"empty selector is invalid for {kind.lower()}"))
            elif isinstance(template, dict) and not _selector_matches(selector, tlabels if isinstance(tlabels, dict) else {}):
                errs.append(
                    invalid("spec.template.metadata.labels", GoJSON(tlabels or {}), "`selector` does not match template `labels`")
                )
    if not isinstance(template, dict):
        errs.append(required("spec.template"))
        return
    validate_object_meta_template(tmeta, errs)
    validate_pod_spec(template.get("spec"), "spec.template.spec", errs)


def validate_object_meta_template(md: Any, errs: Errors) -> None:
    if isinstance(md, dict):
        validate_labels(md.get("labels"), "spec.template.metadata.labels", errs)
        validate_annotations(md.get("annotations"), "spec.template.metadata.annotations", errs)


def _selector_matches(selector: dict[str, Any], labels: dict[str, Any]) -> bool:
    """Whether the workload's selector selects its own template's labels (a bad selector: reported apart)."""
    # Imported here, not at the top: selectors imports this package's leaf (names), and importing
    # that runs this package's __init__, which imports this module before selectors is complete.
    from kschedctl.kube.selectors import parse_label_selector

    try:
        return parse_label_selector(selector).matches({str(k): str(v) for k, v in labels.items()})
    except InputError:
        return True
