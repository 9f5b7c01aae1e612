"""Field helpers every kind shares: JSON type checks, object metadata (name, namespace, labels,
annotations, owner references) and the scalar field checks of ``core/validation/validation.go``.

The field helpers (``mapping_field``, ``text_field``...) are the other modules' building blocks and
are not re-exported by the package; the caches keep the values snapshots repeat (label pairs,
namespaces) so that validating 50,000 pods stays cheap.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from kschedctl.apivalidation.fielderrors import Errors, FieldError, invalid, required, undecodable
from kschedctl.kube.goformat import GoJSON
from kschedctl.kube.names import label_value_errors, name_is_dns_label, qualified_name_errors

#: (key, value) label pairs and other strings already found valid: snapshots repeat them.
_valid_labels: set[tuple[str, str]] = set()


_valid_keys: set[str] = set()


_valid_namespaces: set[str] = set()


CACHE_LIMIT = 200_000


def remember(cache: set[Any], item: Any) -> None:
    if len(cache) < CACHE_LIMIT:
        cache.add(item)


# -- JSON types: the API server decodes into Go types and refuses a value of another JSON type

_JSON_KINDS = {bool: "a boolean", int: "a number", float: "a number", str: "a string", list: "a list", dict: "a mapping"}


def json_kind_name(v: Any) -> str:
    """What a value is, in a user's words: ``a list``, ``a mapping``, ``a string``..."""
    return _JSON_KINDS.get(type(v), type(v).__name__)


def wrong_type(v: Any, path: str, want: str, errs: Errors) -> None:
    got = json_kind_name(v)
    errs.append(invalid(path, v if isinstance(v, str | int | float) else GoJSON(v), f"must be {want}, not {got}"))


def list_field(v: Any, path: str, errs: Errors) -> list[Any]:
    """A list field (absent: empty); another type is reported."""
    if isinstance(v, list):
        return v
    if v is not None:
        wrong_type(v, path, "a list", errs)
    return []


def mapping_field(v: Any, path: str, errs: Errors) -> dict[str, Any] | None:
    """A mapping field (absent: None); another type is reported."""
    if isinstance(v, dict):
        return v
    if v is not None:
        wrong_type(v, path, "a mapping", errs)
    return None


def text_field(v: Any, path: str, errs: Errors) -> str:
    """A string field (absent: ""); another type is reported."""
    if isinstance(v, str):
        return v
    if v is not None:
        wrong_type(v, path, "a string", errs)
    return ""


def string_list_field(v: Any, path: str, errs: Errors) -> list[str]:
    out = []
    for i, item in enumerate(list_field(v, path, errs)):
        if isinstance(item, str):
            out.append(item)
        else:
            wrong_type(item, f"{path}[{i}]", "a string", errs)
    return out


def integer_field(v: Any, path: str, errs: Errors) -> int | None:
    if isinstance(v, int) and not isinstance(v, bool):
        return v
    if v is not None:
        wrong_type(v, path, "an integer", errs)
    return None


_INDEX = re.compile(r"\[[^\]]*\]")


def int32_field(v: Any, path: str, struct: str, errs: Errors) -> int | None:
    """An int32 field (``struct``: the Go struct holding it): a number outside int32 never reaches
    validation, the API server's JSON decoder refuses it, in encoding/json's words (the field named
    by its JSON path without indices)."""
    n = integer_field(v, path, errs)
    if n is not None and not -(1 << 31) <= n < 1 << 31:
        go_field = _INDEX.sub("", path)
        errs.append(undecodable(path, f"json: cannot unmarshal number {n} into Go struct field {struct}.{go_field} of type int32"))
        return None
    return n


def validate_labels(labels: Any, path: str, errs: Errors) -> None:
    """``ValidateLabels``: every key a qualified name, every value a label value (strings, both)."""
    labels = mapping_field(labels, path, errs)
    if labels is None:
        return
    for k, v in labels.items():
        if not isinstance(v, str):
            if v is not None:
                wrong_type(v, f"{path}[{k}]", 'a string (quote it: "...")', errs)
            continue
        if (k, v) in _valid_labels:
            continue
        ok = True
        for m in qualified_name_errors(str(k)):
            errs.append(invalid(path, str(k), m))
            ok = False
        for m in label_value_errors(v):
            errs.append(invalid(path, v, m))
            ok = False
        if ok and isinstance(k, str):
            remember(_valid_labels, (k, v))


def validate_label_name(key: Any, path: str, errs: Errors) -> None:
    """``ValidateLabelName``."""
    if not isinstance(key, str) or key in _valid_keys:
        return
    msgs = qualified_name_errors(key)
    for m in msgs:
        errs.append(invalid(path, key, m))
    if not msgs:
        remember(_valid_keys, key)


def validate_annotations(annotations: Any, path: str, errs: Errors) -> None:
    annotations = mapping_field(annotations, path, errs)
    if annotations is None:
        return
    total = 0
    for k, v in annotations.items():
        if not isinstance(v, str | None):
            wrong_type(v, f"{path}[{k}]", 'a string (quote it: "...")', errs)
            continue
        if not isinstance(k, str):
            continue
        total += len(k) + (len(v) if isinstance(v, str) else 0)
        if k in _valid_keys:
            continue
        msgs = qualified_name_errors(k.lower())
        for m in msgs:
            errs.append(invalid(path, k, m))
        if not msgs:
            remember(_valid_keys, k)
    if total > 262144:
        errs.append(FieldError("Too long", path, "", "may not be more than 262144 bytes"))


def namespace_name_errors(ns: str) -> list[str]:
    if ns in _valid_namespaces:
        return []
    msgs = name_is_dns_label(ns)
    if not msgs:
        remember(_valid_namespaces, ns)
    return msgs


def validate_object_meta(
    md: Any,
    namespaced: bool,
    name_fn: Callable[[str], list[str]],
    errs: Errors,
    path: str = "metadata",
    *,
    labels: bool = True,
) -> None:
    """``ValidateObjectMeta`` on create (name, namespace, labels, annotations, owner references).

    ``labels``: also labels and annotations (for the kinds whose labels the scheduler reads)."""
    md = mapping_field(md, path, errs)
    if md is None:
        return
    name = md.get("name")
    if not name and not md.get("generateName"):
        errs.append(required(f"{path}.name", "name or generateName is required"))
    elif text_field(name, f"{path}.name", errs):
        for m in name_fn(name):
            errs.append(invalid(f"{path}.name", name, m))
    ns = text_field(md.get("namespace"), f"{path}.namespace", errs)
    if namespaced and ns:
        for m in namespace_name_errors(ns):
            errs.append(invalid(f"{path}.namespace", ns, m))
    if labels and "labels" in md:
        validate_labels(md["labels"], f"{path}.labels", errs)
    if labels and "annotations" in md:
        validate_annotations(md["annotations"], f"{path}.annotations", errs)
    if "ownerReferences" in md:
        _validate_owner_references(list_field(md["ownerReferences"], f"{path}.ownerReferences", errs), f"{path}.ownerReferences", errs)
    for key in ("uid", "creationTimestamp", "resourceVersion", "generateName"):
        v = md.get(key)
        if v is not None and not isinstance(v, str):
            wrong_type(v, f"{path}.{key}", "a string", errs)


def _validate_owner_references(refs: list[Any], path: str, errs: Errors) -> None:
    controllers = []
    for i, ref in enumerate(refs):
        if mapping_field(ref, f"{path}[{i}]", errs) is None:
            continue
        api_version = str(ref.get("apiVersion") or "")
        if not api_version.rpartition("/")[2]:
            errs.append(invalid(f"{path}.apiVersion", api_version, "version must not be empty"))
        for key, what in (("kind", "kind"), ("name", "name"), ("uid", "uid")):
            if not ref.get(key):
                errs.append(invalid(f"{path}.{key}", str(ref.get(key) or ""), f"{what} must not be empty"))
        if ref.get("controller") is True:
            controllers.append(f"{ref.get('kind')}/{ref.get('name')}")
    if len(controllers) > 1:
        errs.append(
            invalid(
                path,
                GoJSON(refs),
                "Only one reference can have Controller set to true. Found \"true\" in references for "
                + " and ".join(controllers),
            )
        )


def name_field_validator(validator: Callable[[str], list[str]]) -> Callable[[Any, str, Errors], None]:
    def check(value: Any, path: str, errs: Errors) -> None:
        if text_field(value, path, errs):
            errs.extend(invalid(path, value, m) for m in validator(value))

    return check


def validate_string(v: Any, path: str, errs: Errors) -> None:
    text_field(v, path, errs)


def validate_bool(v: Any, path: str, errs: Errors) -> None:
    if v is not None and not isinstance(v, bool):
        wrong_type(v, path, "true or false", errs)
