"""PodDisruptionBudgets as the API server checks them (``pkg/apis/policy/validation``): the drain
simulation reads ``minAvailable``/``maxUnavailable``, the selector and ``status.disruptionsAllowed``,
so a budget the API server would refuse must be refused here rather than read as some other budget.

The IntOrString rules (``apps/validation``'s positive int-or-percent and not-over-100% checks,
apimachinery's percent pattern) live here too, as ``int_or_percent``. The rules and details are the
same in every release kschedctl follows (v1.33-v1.37); the bad value is not: apimachinery v0.33
printed a struct value with Go's ``%#v`` (``intstr.IntOrString{Type:1, IntVal:0, StrVal:"abc"}``),
v0.34 and later print its JSON (``"abc"``). v1.33's both-set message prints the spec's pointers as
memory addresses, which no one can reproduce: there kschedctl shows the JSON form too.
"""

from __future__ import annotations

import re
from typing import Any

from kschedctl.apivalidation.common import int32_field, mapping_field, wrong_type
from kschedctl.apivalidation.fielderrors import Errors, invalid, not_supported
from kschedctl.apivalidation.scheduling import validate_label_selector
from kschedctl.kube.goformat import RawJSON, go_json, go_quote

#: apimachinery's percent shape: ASCII digits then one '%', nothing else (Go's ``$`` ends the text).
_PERCENT = re.compile(r"[0-9]+%")

PERCENT_DETAIL = (
    "a valid percent string must be a numeric string followed by an ending '%' "
    "(e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')"
)

NEGATIVE_DETAIL = "must be greater than or equal to 0"

OVER_100_DETAIL = "must not be greater than 100%"

_EVICTION_POLICIES = ("AlwaysAllow", "IfHealthyBudget")

_STATUS_COUNTS = ("disruptionsAllowed", "currentHealthy", "desiredHealthy", "expectedPods")


def parse_percent(text: str) -> int | None:
    """The number a valid percent string stands for ("93%" -> 93); None when the API server would
    refuse the string as a percent."""
    if _PERCENT.fullmatch(text) is None:
        return None
    return int(text[:-1])


#: The first minor release whose field errors print a struct value as JSON rather than ``%#v``.
JSON_VALUES_FROM = 34


def _shown_percent(text: str, minor: int) -> str | RawJSON:
    """A string IntOrString as the release's field error prints it."""
    if minor >= JSON_VALUES_FROM:
        return text
    return RawJSON(f"intstr.IntOrString{{Type:1, IntVal:0, StrVal:{go_quote(text)}}}")


def int_or_percent(value: Any, path: str, errs: Errors, minor: int = JSON_VALUES_FROM) -> None:
    """A non-negative int32 or a percent string of at most 100% (a budget's minAvailable and
    maxUnavailable); anything else is appended to ``errs`` as v1.``minor``'s API server words it."""
    if isinstance(value, str):
        pct = parse_percent(value)
        if pct is None:
            errs.append(invalid(path, _shown_percent(value, minor), PERCENT_DETAIL))
        elif pct > 100:
            errs.append(invalid(path, _shown_percent(value, minor), OVER_100_DETAIL))
    elif isinstance(value, int) and not isinstance(value, bool):
        n = int32_field(value, path, "PodDisruptionBudgetSpec", errs)
        if n is not None and n < 0:
            errs.append(invalid(path, n, NEGATIVE_DETAIL))
    else:
        wrong_type(value, path, "an integer or a percent string", errs)


def _selector_json(sel: Any) -> Any:
    """A selector as ``metav1.LabelSelector`` marshals it (empty parts left out, map keys sorted)."""
    if not isinstance(sel, dict):
        return None
    out: dict[str, Any] = {}
    if sel.get("matchLabels"):
        out["matchLabels"] = dict(sorted(sel["matchLabels"].items()))
    exprs = []
    for rq in sel.get("matchExpressions") or []:
        item: dict[str, Any] = {"key": rq.get("key", ""), "operator": rq.get("operator", "")}
        if rq.get("values"):
            item["values"] = rq["values"]
        exprs.append(item)
    if exprs:
        out["matchExpressions"] = exprs
    return out


def _spec_json(spec: dict[str, Any]) -> RawJSON:
    """The internal spec as ``json.Marshal`` prints it in the both-set error: Go field names, in order."""
    shown = {
        "MinAvailable": spec.get("minAvailable"),
        "Selector": _selector_json(spec.get("selector")),
        "MaxUnavailable": spec.get("maxUnavailable"),
        "UnhealthyPodEvictionPolicy": spec.get("unhealthyPodEvictionPolicy"),
    }
    return RawJSON(go_json(shown))


def validate_pdb_spec(spec: Any, path: str, errs: Errors, minor: int = JSON_VALUES_FROM) -> None:
    """``ValidatePodDisruptionBudgetSpec`` on create (invalid label values refused), worded as v1.``minor``."""
    if spec is None:
        spec = {}
    if mapping_field(spec, path, errs) is None:
        return
    low, high = spec.get("minAvailable"), spec.get("maxUnavailable")
    if low is not None and high is not None:
        errs.append(invalid(path, _spec_json(spec), "minAvailable and maxUnavailable cannot be both set"))
    if low is not None:
        int_or_percent(low, f"{path}.minAvailable", errs, minor)
    if high is not None:
        int_or_percent(high, f"{path}.maxUnavailable", errs, minor)
    validate_label_selector(spec.get("selector"), f"{path}.selector", errs)
    policy = spec.get("unhealthyPodEvictionPolicy")
    if policy is not None and policy not in _EVICTION_POLICIES:
        errs.append(not_supported(f"{path}.unhealthyPodEvictionPolicy", policy, _EVICTION_POLICIES))


def validate_pdb_status(status: Any, path: str, errs: Errors) -> None:
    """``ValidatePodDisruptionBudgetStatusUpdate`` (policy/v1): the counts are never negative.

    A create resets the status, but a snapshot holds the status the controller last wrote, which
    the API server checked on that update."""
    if mapping_field(status, path, errs) is None:
        return
    for key in _STATUS_COUNTS:
        n = int32_field(status.get(key), f"{path}.{key}", "PodDisruptionBudgetStatus", errs)
        if n is not None and n < 0:
            errs.append(invalid(f"{path}.{key}", n, NEGATIVE_DETAIL))


def validate_pdb(raw: dict[str, Any], errs: Errors, minor: int = JSON_VALUES_FROM) -> None:
    """A PodDisruptionBudget's spec, then its status, worded as v1.``minor``'s API server."""
    validate_pdb_spec(raw.get("spec"), "spec", errs, minor)
    validate_pdb_status(raw.get("status"), "status", errs)
