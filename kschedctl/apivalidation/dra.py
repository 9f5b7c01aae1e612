"""Dynamic Resource Allocation objects as the API server validates them on create: the CEL device
selectors of DeviceClasses and ResourceClaims must compile (``resource/validation/validation.go``,
``validateSelector``), so a snapshot holding one that does not is refused when it is loaded, not only
when a pod happens to use it.

An expression kschedctl's CEL cannot compile although cel-go might (``CelUnsupported``) is left to the
DynamicResources plugin, which reports it when it is used; each distinct expression is compiled once.
"""

from __future__ import annotations

from typing import Any

from kschedctl.apivalidation.common import list_field, mapping_field, text_field
from kschedctl.apivalidation.fielderrors import Errors, invalid, required
from kschedctl.kube.cel import CelCompileError, CelUnsupported, compile_expression

#: The compile error of each expression seen ("" when it compiles, or kschedctl cannot tell).
_verdicts: dict[str, str] = {}


def _compile_error(expression: str) -> str:
    verdict = _verdicts.get(expression)
    if verdict is None:
        try:
            compile_expression(expression)
            verdict = ""
        except CelUnsupported:
            verdict = ""
        except CelCompileError as e:
            verdict = str(e).splitlines()[0]  # cel-go's message, without the source excerpt under it
        _verdicts[expression] = verdict
    return verdict


def _validate_selectors(selectors: Any, path: str, errs: Errors) -> None:
    for i, sel in enumerate(list_field(selectors, path, errs)):
        sp = f"{path}[{i}]"
        if mapping_field(sel, sp, errs) is None:
            continue
        cel = mapping_field(sel.get("cel"), f"{sp}.cel", errs)
        if cel is None:
            errs.append(required(f"{sp}.cel"))
            continue
        expression = text_field(cel.get("expression"), f"{sp}.cel.expression", errs)
        detail = _compile_error(expression)
        if detail:
            errs.append(invalid(f"{sp}.cel.expression", expression, detail))


def validate_device_class(raw: dict[str, Any], errs: Errors) -> None:
    spec = mapping_field(raw.get("spec"), "spec", errs)
    if spec is not None and "selectors" in spec:
        _validate_selectors(spec["selectors"], "spec.selectors", errs)


def validate_resource_claim(raw: dict[str, Any], errs: Errors) -> None:
    """The selectors of every request: ``exactly`` and each ``firstAvailable`` alternative (and the
    requests of the v1beta1 shape, which hold them directly)."""
    spec = mapping_field(raw.get("spec"), "spec", errs)
    devices = mapping_field(spec.get("devices"), "spec.devices", errs) if spec is not None else None
    if devices is None:
        return
    for i, rq in enumerate(list_field(devices.get("requests"), "spec.devices.requests", errs)):
        rp = f"spec.devices.requests[{i}]"
        if mapping_field(rq, rp, errs) is None:
            continue
        if "selectors" in rq:
            _validate_selectors(rq["selectors"], f"{rp}.selectors", errs)
        exactly = mapping_field(rq.get("exactly"), f"{rp}.exactly", errs)
        if exactly is not None and "selectors" in exactly:
            _validate_selectors(exactly["selectors"], f"{rp}.exactly.selectors", errs)
        for j, sub in enumerate(list_field(rq.get("firstAvailable"), f"{rp}.firstAvailable", errs)):
            if mapping_field(sub, f"{rp}.firstAvailable[{j}]", errs) is not None and "selectors" in sub:
                _validate_selectors(sub["selectors"], f"{rp}.firstAvailable[{j}].selectors", errs)
