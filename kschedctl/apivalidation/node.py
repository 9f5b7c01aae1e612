"""Node validation: its taints and its capacity and allocatable resource lists
(``core/validation/validation.go``, ``ValidateNode``).
"""

from __future__ import annotations

from typing import Any

from kschedctl.apivalidation.common import list_field, mapping_field, text_field, validate_label_name
from kschedctl.apivalidation.fielderrors import (
    DUPLICATE,
    Errors,
    FieldError,
    invalid,
    not_supported,
    required,
)
from kschedctl.apivalidation.resources import validate_resource_list
from kschedctl.apivalidation.scheduling import TAINT_EFFECTS
from kschedctl.kube.goformat import GoJSON
from kschedctl.kube.names import label_value_errors


def validate_taints(taints: Any, path: str, errs: Errors) -> None:
    """``validateNodeTaints``."""
    seen: set[tuple[str, str]] = set()
    for i, t in enumerate(list_field(taints, path, errs)):
        tp = f"{path}[{i}]"
        if mapping_field(t, tp, errs) is None:
            continue
        key = text_field(t.get("key"), f"{tp}.key", errs)
        validate_label_name(key, f"{tp}.key", errs)
        value = text_field(t.get("value"), f"{tp}.value", errs)
        msgs = label_value_errors(value)
        if msgs:
            errs.append(invalid(f"{tp}.value", value, ";".join(msgs)))
        effect = text_field(t.get("effect"), f"{tp}.effect", errs)
        if not effect:
            errs.append(required(f"{tp}.effect"))
        elif effect not in TAINT_EFFECTS:
            errs.append(not_supported(f"{tp}.effect", effect, TAINT_EFFECTS))
        pair = (key, effect)
        if pair in seen:
            errs.append(FieldError(DUPLICATE, tp, GoJSON(t), "taints must be unique by key and effect pair"))
            continue
        seen.add(pair)


def node_errors(raw: dict[str, Any], errs: Errors) -> None:
    spec = raw.get("spec")
    if isinstance(spec, dict) and spec.get("taints"):
        validate_taints(spec.get("taints"), "spec.taints", errs)
    status = raw.get("status")
    if isinstance(status, dict):
        validate_resource_list(status.get("capacity"), "status.capacity", errs)
        validate_resource_list(status.get("allocatable"), "status.allocatable", errs)
