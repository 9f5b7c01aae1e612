"""What the API server would refuse, worded as it words it: apimachinery's field errors and content
rules, and the create-time validation of the objects kube-scheduler reads.

kube-scheduler never sees an object the API server refused, so a snapshot or pod file holding
one has no faithful explanation: the loader rejects it with the API server's own message (the
text users search for), naming the file, the document and the field. The rules here are the
subset of ``k8s.io/kubernetes/pkg/apis/core/validation`` (v1.35) and apimachinery v0.35 that
covers every field the scheduler reads (names, labels, resources, affinity, tolerations, taints,
spreading, ports, gates, priority) plus the fields a person writing a manifest by hand gets
wrong most (a missing ``spec``, containers without name or image). Config validation and
selector parsing share the name and label rules, so they live here once too.

Validation runs on every object of a snapshot (50,000 pods), so the happy path is cheap:
precompiled patterns, no exceptions, and caches for the values snapshots repeat (label pairs,
namespaces, resource names). Objects read from a live cluster already passed the API server
and are not validated again.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

# --------------------------------------------------------------------------------------- Go values


@dataclass(frozen=True)
class GoJSON:
    """A bad value Go prints through ``json.Marshal``, given as ready-made JSON-able data."""

    data: Any


@dataclass(frozen=True)
class RawJSON:
    """A bad value whose JSON text is already known (e.g. a ``runtime.Unknown``'s raw bytes)."""

    text: str


_GO_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v"}


def go_quote(s: str) -> str:
    """``strconv.Quote``: double quotes, backslash escapes, printable Unicode kept as is."""
    out = ['"']
    for ch in s:
        if ch in ('"', "\\"):
            out.append("\\" + ch)
        elif ch in _GO_ESCAPES:
            out.append(_GO_ESCAPES[ch])
        elif ch.isprintable():
            out.append(ch)
        else:
            cp = ord(ch)
            if cp < 0x80:
                out.append(f"\\x{cp:02x}")
            elif cp <= 0xFFFF:
                out.append(f"\\u{cp:04x}")
            else:
                out.append(f"\\U{cp:08x}")
    out.append('"')
    return "".join(out)


def go_json(data: Any, sort_keys: bool = False) -> str:
    """``json.Marshal`` output: compact, HTML-sensitive characters escaped.

    ``sort_keys`` for data that went through a Go map (YAML converted to JSON), whose keys Go sorts.
    """
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False, sort_keys=sort_keys, default=str)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def go_float(v: float) -> str:
    """``%v`` of a float: shortest representation, Go style exponent."""
    if v == int(v) and abs(v) < 1e21:
        return str(int(v))
    r = repr(v)
    if "e" in r:
        mant, exp = r.split("e")
        sign = exp[0] if exp[0] in "+-" else "+"
        digits = exp.lstrip("+-").rjust(2, "0")
        r = f"{mant}e{sign}{digits}"
    return r


def render_value(v: Any) -> str:
    """How ``field.Error.ErrorBody`` prints a bad value (apimachinery v0.35)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return go_float(v)
    if isinstance(v, str):
        return go_quote(v)
    if isinstance(v, RawJSON):
        return v.text
    if isinstance(v, GoJSON):
        return go_json(v.data)
    return go_json(v)


# --------------------------------------------------------------------------------------- field errors

REQUIRED = "Required value"
INVALID = "Invalid value"
DUPLICATE = "Duplicate value"
NOT_SUPPORTED = "Unsupported value"
FORBIDDEN = "Forbidden"
NOT_FOUND = "Not found"

_NO_VALUE_TYPES = {REQUIRED, FORBIDDEN}


@dataclass(frozen=True)
class FieldError:
    """One ``field.Error``: a path, an error type, the offending value and a detail."""

    type: str
    field: str
    value: Any = None
    detail: str = ""

    def body(self) -> str:
        s = self.type if self.type in _NO_VALUE_TYPES else f"{self.type}: {render_value(self.value)}"
        if self.detail:
            s += f": {self.detail}"
        return s

    def __str__(self) -> str:
        return f"{self.field}: {self.body()}"


def required(path: str, detail: str = "") -> FieldError:
    return FieldError(REQUIRED, path, "", detail)


def invalid(path: str, value: Any, detail: str) -> FieldError:
    return FieldError(INVALID, path, value, detail)


def duplicate(path: str, value: Any) -> FieldError:
    return FieldError(DUPLICATE, path, value, "")


def forbidden(path: str, detail: str) -> FieldError:
    return FieldError(FORBIDDEN, path, "", detail)


def not_supported(path: str, value: Any, valid: Iterable[str]) -> FieldError:
    quoted = ", ".join(go_quote(v) for v in valid)
    return FieldError(NOT_SUPPORTED, path, value, f"supported values: {quoted}" if quoted else "")


def aggregate(errors: Iterable[object]) -> str:
    """``utilerrors.NewAggregate(...).Error()`` over already flattened errors.

    Identical messages are shown once; several distinct ones are bracketed and
    comma separated, exactly as Go prints them.
    """
    msgs: list[str] = []
    for e in errors:
        m = str(e)
        if m not in msgs:
            msgs.append(m)
    if not msgs:
        return ""
    if len(msgs) == 1:
        return msgs[0]
    return "[" + ", ".join(msgs) + "]"


# --------------------------------------------------------------------------------------- content rules

_LABEL_KEY_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_KEY_MSG = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
_LABEL_VALUE_FMT = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?"
_LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character"
)
_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character"
)
_DNS1123_SUBDOMAIN_FMT = _DNS1123_LABEL_FMT + "(\\." + _DNS1123_LABEL_FMT + ")*"
_DNS1123_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character"
)
_DNS1035_LABEL_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
_DNS1035_LABEL_MSG = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
    "alphabetic character, and end with an alphanumeric character"
)
_LABEL_KEY_RE = re.compile(_LABEL_KEY_FMT)
_LABEL_VALUE_RE = re.compile(_LABEL_VALUE_FMT)
_DNS1123_LABEL_RE = re.compile(_DNS1123_LABEL_FMT)
_DNS1123_SUBDOMAIN_RE = re.compile(_DNS1123_SUBDOMAIN_FMT)
_DNS1035_LABEL_RE = re.compile(_DNS1035_LABEL_FMT)
#: A whole qualified name (label key) in one pattern, for the fast path; the slow path words the errors.
_QUALIFIED_NAME_RE = re.compile(f"(?:{_DNS1123_SUBDOMAIN_FMT}/)?{_LABEL_KEY_FMT}")


def regex_error(msg: str, fmt: str, *examples: str) -> str:
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    out = msg + " (e.g. "
    for i, ex in enumerate(examples):
        if i > 0:
            out += " or "
        out += f"'{ex}', "
    return out + f"regex used for validation is '{fmt}')"


def utf8_len(s: str) -> int:
    return len(s.encode("utf-8"))


def dns1123_subdomain_errors(value: str) -> list[str]:
    """``content.IsDNS1123Subdomain`` (lengths in bytes), used for label key prefixes."""
    errs = []
    if utf8_len(value) > 253:
        errs.append("must be no more than 253 bytes")
    if not _DNS1123_SUBDOMAIN_RE.fullmatch(value):
        errs.append(regex_error(_DNS1123_SUBDOMAIN_MSG, _DNS1123_SUBDOMAIN_FMT, "example.com"))
    return errs


def qualified_name_errors(value: str) -> list[str]:
    """``IsQualifiedName`` (= ``content.IsLabelKey``)."""
    if len(value) <= 316 and _QUALIFIED_NAME_RE.fullmatch(value):
        prefix, _, name = value.rpartition("/")
        if len(name) <= 63 and len(prefix) <= 253:
            return []
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs.extend("prefix part " + m for m in dns1123_subdomain_errors(prefix))
    else:
        return [
            "a valid label key "
            + regex_error(_LABEL_KEY_MSG, _LABEL_KEY_FMT, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        errs.append("name part must be non-empty")
    elif utf8_len(name) > 63:
        errs.append("name part must be no more than 63 bytes")
    if not _LABEL_KEY_RE.fullmatch(name):
        errs.append(
            "name part " + regex_error(_LABEL_KEY_MSG, _LABEL_KEY_FMT, "MyName", "my.name", "123-abc")
        )
    return errs


def label_value_errors(value: str) -> list[str]:
    if len(value) <= 63 and _LABEL_VALUE_RE.fullmatch(value):
        return []
    errs = []
    if utf8_len(value) > 63:
        errs.append("must be no more than 63 bytes")
    if not _LABEL_VALUE_RE.fullmatch(value):
        errs.append(regex_error(_LABEL_VALUE_MSG, _LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return errs


def name_is_dns_subdomain(value: str) -> list[str]:
    """``NameIsDNSSubdomain`` (``validation.IsDNS1123Subdomain``): Pod, Node and most names."""
    if len(value) <= 253 and _DNS1123_SUBDOMAIN_RE.fullmatch(value):
        return []
    errs = []
    if len(value) > 253:
        errs.append("must be no more than 253 characters")
    if not _DNS1123_SUBDOMAIN_RE.fullmatch(value):
        errs.append(regex_error(_DNS1123_SUBDOMAIN_MSG, _DNS1123_SUBDOMAIN_FMT, "example.com"))
    return errs


def name_is_dns_label(value: str) -> list[str]:
    """``NameIsDNSLabel`` (``validation.IsDNS1123Label``): namespaces, container and volume names."""
    if len(value) <= 63 and _DNS1123_LABEL_RE.fullmatch(value):
        return []
    errs = []
    if len(value) > 63:
        errs.append("must be no more than 63 characters")
    if not _DNS1123_LABEL_RE.fullmatch(value):
        if _DNS1123_SUBDOMAIN_RE.fullmatch(value):
            errs.append("must not contain dots")
        else:
            errs.append(regex_error(_DNS1123_LABEL_MSG, _DNS1123_LABEL_FMT, "my-name", "123-abc"))
    return errs


def name_is_dns1035_label(value: str) -> list[str]:
    """``NameIsDNS1035Label``: Service names."""
    if len(value) <= 63 and _DNS1035_LABEL_RE.fullmatch(value):
        return []
    errs = []
    if len(value) > 63:
        errs.append("must be no more than 63 characters")
    if not _DNS1035_LABEL_RE.fullmatch(value):
        errs.append(regex_error(_DNS1035_LABEL_MSG, _DNS1035_LABEL_FMT, "my-name", "abc-123"))
    return errs


_INT_RE = re.compile(r"[+-]?[0-9]+")
_INT64_MIN = -(2**63)
_INT64_MAX = 2**63 - 1


def parse_go_int64(text: str) -> int | None:
    """``strconv.ParseInt(text, 10, 64)``: optional sign and ASCII digits only, int64 range; else None."""
    if not _INT_RE.fullmatch(text):
        return None
    v = int(text)
    if v < _INT64_MIN or v > _INT64_MAX:
        return None
    return v


# --------------------------------------------------------------------------------------- objects

#: One object's problems: appended to as they are found.
Errors = list[FieldError]

#: (key, value) label pairs and other strings already found valid: snapshots repeat them.
_valid_labels: set[tuple[str, str]] = set()
_valid_keys: set[str] = set()
_valid_namespaces: set[str] = set()
_CACHE_LIMIT = 200_000


def _remember(cache: set[Any], item: Any) -> None:
    if len(cache) < _CACHE_LIMIT:
        cache.add(item)


# -- JSON types: the API server decodes into Go types and refuses a value of another JSON type

_JSON_KINDS = {bool: "a boolean", int: "a number", float: "a number", str: "a string", list: "a list", dict: "a mapping"}


def wrong_type(v: Any, path: str, want: str, errs: Errors) -> None:
    got = _JSON_KINDS.get(type(v), type(v).__name__)
    errs.append(invalid(path, v if isinstance(v, str | int | float) else GoJSON(v), f"must be {want}, not {got}"))


def _seq(v: Any, path: str, errs: Errors) -> list[Any]:
    """A list field (absent: empty); another type is reported."""
    if isinstance(v, list):
        return v
    if v is not None:
        wrong_type(v, path, "a list", errs)
    return []


def _obj(v: Any, path: str, errs: Errors) -> dict[str, Any] | None:
    """A mapping field (absent: None); another type is reported."""
    if isinstance(v, dict):
        return v
    if v is not None:
        wrong_type(v, path, "a mapping", errs)
    return None


def _text(v: Any, path: str, errs: Errors) -> str:
    """A string field (absent: ""); another type is reported."""
    if isinstance(v, str):
        return v
    if v is not None:
        wrong_type(v, path, "a string", errs)
    return ""


def _strings(v: Any, path: str, errs: Errors) -> list[str]:
    out = []
    for i, item in enumerate(_seq(v, path, errs)):
        if isinstance(item, str):
            out.append(item)
        else:
            wrong_type(item, f"{path}[{i}]", "a string", errs)
    return out


def _integer(v: Any, path: str, errs: Errors) -> int | None:
    if isinstance(v, int) and not isinstance(v, bool):
        return v
    if v is not None:
        wrong_type(v, path, "an integer", errs)
    return None


def validate_labels(labels: Any, path: str, errs: Errors) -> None:
    """``ValidateLabels``: every key a qualified name, every value a label value (strings, both)."""
    labels = _obj(labels, path, errs)
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
            _remember(_valid_labels, (k, v))


def _label_name(key: Any, path: str, errs: Errors) -> None:
    """``ValidateLabelName``."""
    if not isinstance(key, str) or key in _valid_keys:
        return
    msgs = qualified_name_errors(key)
    for m in msgs:
        errs.append(invalid(path, key, m))
    if not msgs:
        _remember(_valid_keys, key)


def _validate_annotations(annotations: Any, path: str, errs: Errors) -> None:
    annotations = _obj(annotations, path, errs)
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
            _remember(_valid_keys, k)
    if total > 262144:
        errs.append(FieldError("Too long", path, "", "may not be more than 262144 bytes"))


def namespace_name_errors(ns: str) -> list[str]:
    if ns in _valid_namespaces:
        return []
    msgs = name_is_dns_label(ns)
    if not msgs:
        _remember(_valid_namespaces, ns)
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
    md = _obj(md, path, errs)
    if md is None:
        return
    name = md.get("name")
    if not name and not md.get("generateName"):
        errs.append(required(f"{path}.name", "name or generateName is required"))
    elif _text(name, f"{path}.name", errs):
        for m in name_fn(name):
            errs.append(invalid(f"{path}.name", name, m))
    ns = _text(md.get("namespace"), f"{path}.namespace", errs)
    if namespaced and ns:
        for m in namespace_name_errors(ns):
            errs.append(invalid(f"{path}.namespace", ns, m))
    if labels and "labels" in md:
        validate_labels(md["labels"], f"{path}.labels", errs)
    if labels and "annotations" in md:
        _validate_annotations(md["annotations"], f"{path}.annotations", errs)
    if "ownerReferences" in md:
        _validate_owner_references(_seq(md["ownerReferences"], f"{path}.ownerReferences", errs), f"{path}.ownerReferences", errs)
    for key in ("uid", "creationTimestamp", "resourceVersion", "generateName"):
        v = md.get(key)
        if v is not None and not isinstance(v, str):
            wrong_type(v, f"{path}.{key}", "a string", errs)


def _validate_owner_references(refs: list[Any], path: str, errs: Errors) -> None:
    controllers = []
    for i, ref in enumerate(refs):
        if _obj(ref, f"{path}[{i}]", errs) is None:
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


# -- resources ----------------------------------------------------------------------------------

#: ``IsIntegerResourceName``'s standard members.
_INTEGER_RESOURCES = frozenset(
    {
        "pods",
        "resourcequotas",
        "services",
        "replicationcontrollers",
        "secrets",
        "configmaps",
        "persistentvolumeclaims",
        "services.nodeports",
        "services.loadbalancers",
    }
)
_STANDARD_CONTAINER_RESOURCES = frozenset({"cpu", "memory", "ephemeral-storage"})
#: ``IsStandardResourceName`` (the quota and compute names a name without a domain may have).
_STANDARD_RESOURCES = frozenset(
    {
        "cpu",
        "memory",
        "ephemeral-storage",
        "requests.cpu",
        "requests.memory",
        "requests.ephemeral-storage",
        "limits.cpu",
        "limits.memory",
        "limits.ephemeral-storage",
        "storage",
        "requests.storage",
    }
    | _INTEGER_RESOURCES
)
_valid_container_resources: set[str] = set()
_INT64_MAX_FRACTION = Fraction(_INT64_MAX)


def is_native_resource(name: str) -> bool:
    return "/" not in name or "kubernetes.io/" in name


def is_extended_resource_name(name: str) -> bool:
    """``IsExtendedResourceName``."""
    if is_native_resource(name) or name.startswith("requests."):
        return False
    return not qualified_name_errors("requests." + name)


def is_hugepages(name: str) -> bool:
    return name.startswith("hugepages-")


def _container_resource_name_errors(name: str) -> list[str]:
    """``validateContainerResourceName``."""
    if name in _valid_container_resources:
        return []
    msgs = qualified_name_errors(name)
    if not msgs:
        if "/" not in name:
            if name not in _STANDARD_RESOURCES and not name.startswith(("hugepages-", "requests.hugepages-")):
                msgs.append("must be a standard resource type or fully qualified")
            if name not in _STANDARD_CONTAINER_RESOURCES and not is_hugepages(name):
                msgs.append("must be a standard resource for containers")
        elif not is_native_resource(name) and not is_extended_resource_name(name):
            msgs.append("doesn't follow extended resource name standard")
    if not msgs:
        _remember(_valid_container_resources, name)
    return msgs


def _quantity(raw: Any) -> Fraction | None:
    """The quantity's exact value, or None when it does not parse (the model reports that)."""
    from kschedctl.snapshot.quantity import QuantityError, parse_quantity

    try:
        return parse_quantity(raw)
    except QuantityError:
        return None


def _quantity_text(raw: Any) -> str:
    return raw if isinstance(raw, str) else go_float(raw) if isinstance(raw, float) else str(raw)


#: The largest amount kube-scheduler computes with safely: it counts in int64 and its scores
#: multiply ``(allocatable - requested)`` by 100 (``MaxNodeScore``).
SCHEDULER_MAX_AMOUNT = _INT64_MAX // 100


def overflow_detail(resource: str, q: Fraction) -> str | None:
    """Why kube-scheduler cannot count this quantity (its int64 arithmetic would overflow), or None.

    The API server accepts any non-negative quantity, but the scheduler reads cpu as
    ``MilliValue()`` and everything else as ``Value()``, both int64, and scores multiply them
    by 100: beyond that range Go computes garbage (``1e400`` cpu reads as -9223372036854775808m,
    a node with ``16Ei`` of memory scores 25 instead of 74), so no explanation of it would be
    faithful.
    """
    amount = q * 1000 if resource == "cpu" else q
    if amount <= SCHEDULER_MAX_AMOUNT:
        return None
    unit = "millicores" if resource == "cpu" else "units"
    return (
        f"the API server accepts it, but kube-scheduler counts {resource} in int64 {unit} and its scores multiply "
        f"by 100, which overflows above {SCHEDULER_MAX_AMOUNT}{'m' if resource == 'cpu' else ''}: "
        "kschedctl cannot model what it would do"
    )


#: (resource, raw quantity) -> (its value or None when it does not parse, problems without a path).
_quantity_verdicts: dict[tuple[str, Any], tuple[Fraction | None, tuple[str, ...]]] = {}


def _quantity_verdict(resource: str, raw: Any) -> tuple[Fraction | None, tuple[str, ...]]:
    """``ValidateResourceQuantityValue`` (non-negative; integer for integer resources) + the int64 range."""
    q = _quantity(raw)
    if q is None:
        return None, ()
    problems: list[str] = []
    if q < 0:
        problems.append("must be greater than or equal to 0")
    else:
        integer = resource in _INTEGER_RESOURCES or is_extended_resource_name(resource)
        if integer and q.denominator != 1 and math.ceil(q * 1000) % 1000:
            problems.append("must be an integer")
        detail = overflow_detail(resource, q)
        if detail is not None:
            problems.append(detail)
    return q, tuple(problems)


def _verdict(resource: str, raw: Any) -> tuple[Fraction | None, tuple[str, ...]] | None:
    try:
        verdict = _quantity_verdicts.get((resource, raw))
    except TypeError:  # an unhashable value: not a quantity at all
        return None
    if verdict is None:
        verdict = _quantity_verdict(resource, raw)
        if len(_quantity_verdicts) < _CACHE_LIMIT:
            _quantity_verdicts[(resource, raw)] = verdict
    return verdict


def validate_quantity_value(resource: str, raw: Any, path: str, errs: Errors) -> Fraction | None:
    """The quantity's value (None when it does not parse: the model reports that); its problems go to ``errs``."""
    verdict = _verdict(resource, raw)
    if verdict is None:
        return None
    q, problems = verdict
    for m in problems:
        errs.append(invalid(path, _quantity_text(raw), m))
    return q


def _resource_map(
    raw: Any, path: str, what: str, errs: Errors, pod_level: bool
) -> dict[str, Fraction | None]:
    """One ``limits``/``requests`` map: names and values checked, paths built only for a problem."""
    out: dict[str, Fraction | None] = {}
    raw = _obj(raw, f"{path}.{what}", errs)
    if raw is None:
        return out
    for name, value in raw.items():
        name = str(name)
        verdict = _verdict(name, value)
        q, problems = verdict if verdict is not None else (None, ())
        out[name] = q
        if problems or pod_level or name not in _valid_container_resources:
            p = f"{path}.{what}[{name}]"
            _resource_name(name, p, errs, pod_level)
            errs.extend(invalid(p, _quantity_text(value), m) for m in problems)
    return out


def _validate_resource_requirements(res: Any, path: str, errs: Errors, *, pod_level: bool = False) -> None:
    """``validateResourceRequirements`` for a container's (or the pod's) ``resources``."""
    res = _obj(res, path, errs)
    if res is None:
        return
    limits = res.get("limits")
    requests = res.get("requests")
    lim = _resource_map(limits, path, "limits", errs, pod_level) if limits is not None else {}
    if requests is None:
        return
    for name, q in _resource_map(requests, path, "requests", errs, pod_level).items():
        if name in lim:
            _request_within_limit(name, q, lim[name], requests[name], limits, path, errs)
        elif not is_native_resource(name) or is_hugepages(name):
            errs.append(required(f"{path}.limits", "Limit must be set for non overcommitable resources"))


def _request_within_limit(
    name: str, q: Fraction | None, limit: Fraction | None, raw: Any, limits: Any, path: str, errs: Errors
) -> None:
    if q is None or limit is None or q == limit:
        return
    shown = _quantity_text(limits[name])
    if not is_native_resource(name) or is_hugepages(name):
        errs.append(invalid(f"{path}.requests", _quantity_text(raw), f"must be equal to {name} limit of {shown}"))
    elif q > limit:
        errs.append(invalid(f"{path}.requests", _quantity_text(raw), f"must be less than or equal to {name} limit of {shown}"))


_POD_LEVEL_RESOURCES = ("cpu", "memory")


def _resource_name(name: str, path: str, errs: Errors, pod_level: bool) -> None:
    if pod_level:
        msgs = qualified_name_errors(name)
        if msgs:
            errs.extend(invalid(path, name, m) for m in msgs)
        elif name not in _POD_LEVEL_RESOURCES and not is_hugepages(name):
            errs.append(not_supported(path, name, ["cpu", "hugepages-", "memory"]))
        return
    errs.extend(invalid(path, name, m) for m in _container_resource_name_errors(name))


def validate_resource_list(raw: Any, path: str, errs: Errors) -> None:
    """A node's ``capacity``/``allocatable`` or a pod's ``overhead`` (``ValidateNodeResources``)."""
    raw = _obj(raw, path, errs)
    if raw is None:
        return
    for name, q in raw.items():
        validate_quantity_value(str(name), q, f"{path}.{name}", errs)


# -- containers ------------------------------------------------------------------------------------

_PROTOCOLS = ("SCTP", "TCP", "UDP")


def _port_errors(value: Any, path: str, errs: Errors) -> None:
    v = _integer(value, path, errs)
    if v is not None and not 1 <= v <= 65535:
        errs.append(invalid(path, v, "must be between 1 and 65535, inclusive"))


def _validate_ports(ports: Any, path: str, host_network: bool, errs: Errors) -> None:
    for i, p in enumerate(_seq(ports, path, errs)):
        pp = f"{path}[{i}]"
        if _obj(p, pp, errs) is None:
            continue
        cport = p.get("containerPort")
        if not cport:
            errs.append(required(f"{pp}.containerPort"))
        else:
            _port_errors(cport, f"{pp}.containerPort", errs)
        hport = p.get("hostPort")
        if hport:
            _port_errors(hport, f"{pp}.hostPort", errs)
            if host_network and cport and hport != cport:
                errs.append(invalid(f"{pp}.hostPort", hport, "must match `containerPort` when `hostNetwork` is true"))
        _text(p.get("hostIP"), f"{pp}.hostIP", errs)
        proto = p.get("protocol")
        if proto is not None and proto not in _PROTOCOLS:
            errs.append(not_supported(f"{pp}.protocol", proto, _PROTOCOLS))


def _validate_containers(containers: Any, path: str, spec: dict[str, Any], names: set[str], errs: Errors) -> None:
    init = path.endswith("initContainers")
    for i, c in enumerate(_seq(containers, path, errs)):
        cp = f"{path}[{i}]"
        if _obj(c, cp, errs) is None:
            continue
        name = c.get("name")
        if not name:
            errs.append(required(f"{cp}.name"))
        elif _text(name, f"{cp}.name", errs):
            if not (len(name) <= 63 and _DNS1123_LABEL_RE.fullmatch(name)):
                errs.extend(invalid(f"{cp}.name", name, m) for m in name_is_dns_label(name))
            if name in names:
                errs.append(duplicate(f"{cp}.name", name))
            names.add(name)
        # The API server also requires an image; the scheduler reads it only for ImageLocality, and
        # snapshots written by hand for scheduling questions often leave it out: not required here.
        _text(c.get("image"), f"{cp}.image", errs)
        if "resources" in c:
            _validate_resource_requirements(c["resources"], f"{cp}.resources", errs)
        if "ports" in c:
            _validate_ports(c["ports"], f"{cp}.ports", spec.get("hostNetwork") is True, errs)
        if "restartPolicy" in c:
            rp = c["restartPolicy"]
            if init and rp != "Always":
                errs.append(not_supported(f"{cp}.restartPolicy", rp, ["Always"]))
            elif not init and rp is not None:
                errs.append(forbidden(f"{cp}.restartPolicy", "may not be set for non-init containers"))


# -- affinity ----------------------------------------------------------------------------------------

_NODE_SELECTOR_OPS = frozenset({"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"})
_LABEL_SELECTOR_OPS = frozenset({"In", "NotIn", "Exists", "DoesNotExist"})


def _values_of(rq: dict[str, Any], path: str, errs: Errors) -> list[str]:
    return _strings(rq.get("values"), f"{path}.values", errs)


def _node_selector_requirement(rq: Any, path: str, allow_invalid_values: bool, errs: Errors) -> None:
    """``ValidateNodeSelectorRequirement``."""
    if _obj(rq, path, errs) is None:
        return
    op = rq.get("operator")
    values = _values_of(rq, path, errs)
    if op in ("In", "NotIn"):
        if not values:
            errs.append(required(f"{path}.values", "must be specified when `operator` is 'In' or 'NotIn'"))
    elif op in ("Exists", "DoesNotExist"):
        if values:
            errs.append(forbidden(f"{path}.values", "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
    elif op in ("Gt", "Lt"):
        if len(values) != 1:
            errs.append(required(f"{path}.values", "must be specified single value when `operator` is 'Lt' or 'Gt'"))
    else:
        errs.append(invalid(f"{path}.operator", "" if op is None else op, "not a valid selector operator"))
    _label_name(_text(rq.get("key"), f"{path}.key", errs), f"{path}.key", errs)
    if not allow_invalid_values:
        for j, v in enumerate(values):
            errs.extend(invalid(f"{path}.values[{j}]", v, m) for m in label_value_errors(v))


def _node_field_requirement(rq: Any, path: str, errs: Errors) -> None:
    """``ValidateNodeFieldSelectorRequirement``: only ``metadata.name`` In/NotIn one value."""
    if _obj(rq, path, errs) is None:
        return
    op = rq.get("operator")
    values = _values_of(rq, path, errs)
    if op in ("In", "NotIn"):
        if len(values) != 1:
            errs.append(required(f"{path}.values", "must be only one value when `operator` is 'In' or 'NotIn' for node field selector"))
    else:
        errs.append(invalid(f"{path}.operator", "" if op is None else op, "not a valid selector operator"))
    key = rq.get("key")
    if key != "metadata.name":
        errs.append(invalid(f"{path}.key", "" if key is None else key, "not a valid field selector key"))
    else:
        for j, v in enumerate(values):
            errs.extend(invalid(f"{path}.values[{j}]", v, m) for m in name_is_dns_subdomain(v))


def _node_selector_term(term: Any, path: str, allow_invalid_values: bool, errs: Errors) -> None:
    if _obj(term, path, errs) is None:
        return
    for j, rq in enumerate(_seq(term.get("matchExpressions"), f"{path}.matchExpressions", errs)):
        _node_selector_requirement(rq, f"{path}.matchExpressions[{j}]", allow_invalid_values, errs)
    for j, rq in enumerate(_seq(term.get("matchFields"), f"{path}.matchFields", errs)):
        _node_field_requirement(rq, f"{path}.matchFields[{j}]", errs)


def _weight(w: Any, path: str, errs: Errors) -> None:
    v = _integer(w, path, errs)
    if v is None and w is None:
        v = 0
    if v is not None and not 1 <= v <= 100:
        errs.append(invalid(path, v, "must be in the range 1-100"))


def validate_label_selector(sel: Any, path: str, errs: Errors) -> None:
    """``ValidateLabelSelector`` (invalid label values not allowed, as on create)."""
    if _obj(sel, path, errs) is None:
        return
    if "matchLabels" in sel:
        validate_labels(sel["matchLabels"], f"{path}.matchLabels", errs)
    for i, rq in enumerate(_seq(sel.get("matchExpressions"), f"{path}.matchExpressions", errs)):
        rp = f"{path}.matchExpressions[{i}]"
        if _obj(rq, rp, errs) is None:
            continue
        op = rq.get("operator")
        values = _values_of(rq, rp, errs)
        if op in ("In", "NotIn"):
            if not values:
                errs.append(required(f"{rp}.values", "must be specified when `operator` is 'In' or 'NotIn'"))
        elif op in ("Exists", "DoesNotExist"):
            if values:
                errs.append(forbidden(f"{rp}.values", "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
        else:
            errs.append(invalid(f"{rp}.operator", "" if op is None else op, "not a valid selector operator"))
        _label_name(_text(rq.get("key"), f"{rp}.key", errs), f"{rp}.key", errs)
        for j, v in enumerate(values):
            errs.extend(invalid(f"{rp}.values[{j}]", v, m) for m in label_value_errors(v))


def _pod_affinity_term(term: Any, path: str, errs: Errors) -> None:
    """``validatePodAffinityTerm``."""
    if _obj(term, path, errs) is None:
        return
    validate_label_selector(term.get("labelSelector"), f"{path}.labelSelector", errs)
    validate_label_selector(term.get("namespaceSelector"), f"{path}.namespaceSelector", errs)
    for ns in _strings(term.get("namespaces"), f"{path}.namespaces", errs):
        errs.extend(invalid(f"{path}.namespace", ns, m) for m in namespace_name_errors(ns))
    for keys in ("matchLabelKeys", "mismatchLabelKeys"):
        _strings(term.get(keys), f"{path}.{keys}", errs)
    key = _text(term.get("topologyKey"), f"{path}.topologyKey", errs)
    if not key:
        errs.append(required(f"{path}.topologyKey", "can not be empty"))
    _label_name(key, f"{path}.topologyKey", errs)


def _validate_affinity(aff: Any, path: str, errs: Errors) -> None:
    """``validateAffinity`` with the create-time options (no invalid label values in required terms)."""
    if _obj(aff, path, errs) is None:
        return
    np = f"{path}.nodeAffinity"
    na = _obj(aff.get("nodeAffinity"), np, errs)
    if na is not None:
        rp = f"{np}.requiredDuringSchedulingIgnoredDuringExecution"
        req = _obj(na.get("requiredDuringSchedulingIgnoredDuringExecution"), rp, errs)
        if req is not None:
            terms = _seq(req.get("nodeSelectorTerms"), f"{rp}.nodeSelectorTerms", errs)
            if not terms:
                errs.append(required(f"{rp}.nodeSelectorTerms", "must have at least one node selector term"))
            for i, t in enumerate(terms):
                _node_selector_term(t, f"{rp}.nodeSelectorTerms[{i}]", False, errs)
        pp = f"{np}.preferredDuringSchedulingIgnoredDuringExecution"
        for i, t in enumerate(_seq(na.get("preferredDuringSchedulingIgnoredDuringExecution"), pp, errs)):
            if _obj(t, f"{pp}[{i}]", errs) is not None:
                _weight(t.get("weight"), f"{pp}[{i}].weight", errs)
                _node_selector_term(t.get("preference"), f"{pp}[{i}].preference", True, errs)
    for kind in ("podAffinity", "podAntiAffinity"):
        pa = _obj(aff.get(kind), f"{path}.{kind}", errs)
        if pa is None:
            continue
        rp = f"{path}.{kind}.requiredDuringSchedulingIgnoredDuringExecution"
        for i, t in enumerate(_seq(pa.get("requiredDuringSchedulingIgnoredDuringExecution"), rp, errs)):
            _pod_affinity_term(t, f"{rp}[{i}]", errs)
        pp = f"{path}.{kind}.preferredDuringSchedulingIgnoredDuringExecution"
        for i, t in enumerate(_seq(pa.get("preferredDuringSchedulingIgnoredDuringExecution"), pp, errs)):
            if _obj(t, f"{pp}[{i}]", errs) is not None:
                _weight(t.get("weight"), f"{pp}[{i}].weight", errs)
                _pod_affinity_term(t.get("podAffinityTerm"), f"{pp}[{i}].podAffinityTerm", errs)


# -- tolerations, taints, spreading -----------------------------------------------------------------

_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")


def _validate_tolerations(tolerations: Any, path: str, errs: Errors) -> None:
    """``ValidateTolerations`` (comparison operators are an alpha gate, off)."""
    for i, t in enumerate(_seq(tolerations, path, errs)):
        tp = f"{path}[{i}]"
        if _obj(t, tp, errs) is None:
            continue
        key = _text(t.get("key"), f"{tp}.key", errs)
        op = _text(t.get("operator"), f"{tp}.operator", errs)
        value = _text(t.get("value"), f"{tp}.value", errs)
        effect = _text(t.get("effect"), f"{tp}.effect", errs)
        if key:
            _label_name(key, f"{tp}.key", errs)
        elif op != "Exists":
            errs.append(
                invalid(f"{tp}.operator", op, 'operator must be Exists when `key` is empty, which means "match all values and all keys"')
            )
        if _integer(t.get("tolerationSeconds"), f"{tp}.tolerationSeconds", errs) is not None and effect != "NoExecute":
            errs.append(invalid(f"{tp}.effect", effect, "effect must be 'NoExecute' when `tolerationSeconds` is set"))
        if op in ("Equal", ""):
            msgs = label_value_errors(value)
            if msgs:
                errs.append(invalid(f"{tp}.operator", value, ";".join(msgs)))
        elif op == "Exists":
            if value:
                errs.append(invalid(f"{tp}.operator", value, "value must be empty when `operator` is 'Exists'"))
        else:
            errs.append(not_supported(f"{tp}.operator", op, ["Equal", "Exists"]))
        if effect and effect not in _EFFECTS:
            errs.append(not_supported(f"{tp}.effect", effect, _EFFECTS))


def validate_taints(taints: Any, path: str, errs: Errors) -> None:
    """``validateNodeTaints``."""
    seen: set[tuple[str, str]] = set()
    for i, t in enumerate(_seq(taints, path, errs)):
        tp = f"{path}[{i}]"
        if _obj(t, tp, errs) is None:
            continue
        key = _text(t.get("key"), f"{tp}.key", errs)
        _label_name(key, f"{tp}.key", errs)
        value = _text(t.get("value"), f"{tp}.value", errs)
        msgs = label_value_errors(value)
        if msgs:
            errs.append(invalid(f"{tp}.value", value, ";".join(msgs)))
        effect = _text(t.get("effect"), f"{tp}.effect", errs)
        if not effect:
            errs.append(required(f"{tp}.effect"))
        elif effect not in _EFFECTS:
            errs.append(not_supported(f"{tp}.effect", effect, _EFFECTS))
        pair = (key, effect)
        if pair in seen:
            errs.append(FieldError(DUPLICATE, tp, GoJSON(t), "taints must be unique by key and effect pair"))
            continue
        seen.add(pair)


def _positive(v: Any, path: str, errs: Errors) -> None:
    n = _integer(v, path, errs)
    if n is not None and n <= 0:
        errs.append(invalid(path, n, "must be greater than zero"))


def _validate_spread(constraints: Any, path: str, errs: Errors) -> None:
    """``validateTopologySpreadConstraints``."""
    items = _seq(constraints, path, errs)
    for i, c in enumerate(items):
        cp = f"{path}[{i}]"
        if _obj(c, cp, errs) is None:
            continue
        skew = c.get("maxSkew")
        if skew is None:
            errs.append(invalid(f"{cp}.maxSkew", 0, "must be greater than zero"))
        else:
            _positive(skew, f"{cp}.maxSkew", errs)
        key = _text(c.get("topologyKey"), f"{cp}.topologyKey", errs)
        if not key:
            errs.append(required(f"{cp}.topologyKey", "can not be empty"))
        when = _text(c.get("whenUnsatisfiable"), f"{cp}.whenUnsatisfiable", errs)
        if when not in ("DoNotSchedule", "ScheduleAnyway"):
            errs.append(not_supported(f"{cp}.whenUnsatisfiable", when, ["DoNotSchedule", "ScheduleAnyway"]))
        for other in items[i + 1 :]:
            if isinstance(other, dict) and other.get("topologyKey") == key and (other.get("whenUnsatisfiable") or "") == when:
                errs.append(duplicate(f"{cp}.{{topologyKey, whenUnsatisfiable}}", f"{{{key}, {when}}}"))
                break
        md = c.get("minDomains")
        if md is not None:
            _positive(md, f"{cp}.minDomains", errs)
            if when != "DoNotSchedule":
                errs.append(invalid(f"{cp}.minDomains", md, f"can only use minDomains if whenUnsatisfiable=DoNotSchedule, not {when}"))
        for pol in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
            v = c.get(pol)
            if v is not None and v not in ("Honor", "Ignore"):
                errs.append(not_supported(f"{cp}.{pol}", v, ["Honor", "Ignore"]))
        _strings(c.get("matchLabelKeys"), f"{cp}.matchLabelKeys", errs)
        validate_label_selector(c.get("labelSelector"), f"{cp}.labelSelector", errs)


# -- pod spec ----------------------------------------------------------------------------------------


def _validate_gates(gates: Any, path: str, errs: Errors) -> None:
    seen: set[str] = set()
    for i, g in enumerate(_seq(gates, path, errs)):
        if _obj(g, f"{path}[{i}]", errs) is None:
            continue
        name = _text(g.get("name"), f"{path}[{i}].name", errs)
        if not name:
            errs.append(required(f"{path}[{i}]"))
        else:
            errs.extend(invalid(f"{path}[{i}]", name, m) for m in qualified_name_errors(name))
        if name in seen:
            errs.append(duplicate(f"{path}[{i}]", name))
        seen.add(name)


def _validate_volumes(volumes: Any, path: str, errs: Errors) -> None:
    seen: set[str] = set()
    for i, v in enumerate(_seq(volumes, path, errs)):
        vp = f"{path}[{i}]"
        if _obj(v, vp, errs) is None:
            continue
        name = v.get("name")
        if not name:
            errs.append(required(f"{vp}.name"))
        elif _text(name, f"{vp}.name", errs):
            errs.extend(invalid(f"{vp}.name", name, m) for m in name_is_dns_label(name))
            if name in seen:
                errs.append(duplicate(f"{vp}.name", name))
            seen.add(name)
        pvc = _obj(v.get("persistentVolumeClaim"), f"{vp}.persistentVolumeClaim", errs)
        if pvc is not None:
            if not pvc.get("claimName"):
                errs.append(required(f"{vp}.persistentVolumeClaim.claimName"))
            else:
                _text(pvc["claimName"], f"{vp}.persistentVolumeClaim.claimName", errs)


def _validate_resource_claims(claims: Any, path: str, errs: Errors) -> None:
    for i, c in enumerate(_seq(claims, path, errs)):
        cp = f"{path}[{i}]"
        if _obj(c, cp, errs) is None:
            continue
        name = _text(c.get("name"), f"{cp}.name", errs)
        if not name:
            errs.append(required(f"{cp}.name"))
        for key in ("resourceClaimName", "resourceClaimTemplateName"):
            _text(c.get(key), f"{cp}.{key}", errs)


def _validate_name_field(validator: Callable[[str], list[str]]) -> Callable[[Any, str, Errors], None]:
    def check(value: Any, path: str, errs: Errors) -> None:
        if _text(value, path, errs):
            errs.extend(invalid(path, value, m) for m in validator(value))

    return check


def _validate_preemption_policy(policy: Any, path: str, errs: Errors) -> None:
    if policy == "":
        errs.append(required(path))
    elif policy is not None and policy not in ("PreemptLowerPriority", "Never"):
        errs.append(not_supported(path, policy, ["PreemptLowerPriority", "Never"]))


def _validate_pod_resources(res: Any, path: str, errs: Errors) -> None:
    if res is not None:
        _validate_resource_requirements(res, path, errs, pod_level=True)


def _validate_string(v: Any, path: str, errs: Errors) -> None:
    _text(v, path, errs)


def _validate_integer(v: Any, path: str, errs: Errors) -> None:
    _integer(v, path, errs)


def _validate_bool(v: Any, path: str, errs: Errors) -> None:
    if v is not None and not isinstance(v, bool):
        wrong_type(v, path, "true or false", errs)


#: The pod spec fields validated, each with its check (fields absent from a spec cost nothing).
_POD_SPEC_FIELDS: dict[str, Callable[[Any, str, Errors], None]] = {
    "resources": _validate_pod_resources,
    "overhead": lambda v, p, e: validate_resource_list(v, p, e),
    "nodeSelector": lambda v, p, e: validate_labels(v, p, e),
    "affinity": lambda v, p, e: _validate_affinity(v, p, e),
    "schedulingGates": lambda v, p, e: _validate_gates(v, p, e),
    "topologySpreadConstraints": lambda v, p, e: _validate_spread(v, p, e),
    "tolerations": lambda v, p, e: _validate_tolerations(v, p, e),
    "volumes": lambda v, p, e: _validate_volumes(v, p, e),
    "resourceClaims": lambda v, p, e: _validate_resource_claims(v, p, e),
    "nodeName": _validate_name_field(name_is_dns_subdomain),
    "priorityClassName": _validate_name_field(name_is_dns_subdomain),
    "schedulerName": _validate_string,
    "priority": _validate_integer,
    "preemptionPolicy": _validate_preemption_policy,
    "hostNetwork": _validate_bool,
}


def _clean_requests(raw: Any) -> dict[str, Fraction | None] | None:
    """A ``requests``/``limits`` map of cpu, memory or ephemeral-storage amounts that are all valid
    quantities, with their values; None when it is anything else (the full check then looks)."""
    if type(raw) is not dict:
        return None
    out: dict[str, Fraction | None] = {}
    for name, value in raw.items():
        if name not in _STANDARD_CONTAINER_RESOURCES:
            return None
        verdict = _verdict(name, value)
        if verdict is None or verdict[0] is None or verdict[1]:
            return None
        out[name] = verdict[0]
    return out


def _clean_resources(res: Any) -> bool:
    """``_validate_resource_requirements`` would find nothing: standard resources only, valid amounts,
    no request above its limit. False when unsure."""
    if type(res) is not dict:
        return False
    limits = res.get("limits")
    lim = _clean_requests(limits) if limits is not None else {}
    requests = res.get("requests")
    req = _clean_requests(requests) if requests is not None else {}
    if lim is None or req is None:
        return False
    for name, q in req.items():
        limit = lim.get(name)
        if limit is not None and q is not None and q > limit:
            return False
    return True


#: Container fields ``_validate_containers`` reads that ``_clean_containers`` leaves to it.
_CONTAINER_FIELDS_CHECKED_IN_FULL = frozenset({"ports", "restartPolicy"})


def _clean_containers(containers: Any, names: set[str]) -> bool:
    """The common case of ``_validate_containers``, decided quickly: a non-empty list of mappings, each
    with a name (a DNS label, not taken), an image string if any, clean resources, and none of the
    fields only the full check reads. True (and the names added to ``names``) when the full check
    would report nothing; False when unsure, and the full check runs."""
    if type(containers) is not list or not containers:
        return False
    seen: set[str] = set()
    for c in containers:
        if type(c) is not dict:
            return False
        name = c.get("name")
        if type(name) is not str or not name or name in seen or name in names:
            return False
        if not (len(name) <= 63 and _DNS1123_LABEL_RE.fullmatch(name)):
            return False
        image = c.get("image")
        if image is not None and type(image) is not str:
            return False
        if "resources" in c and not _clean_resources(c["resources"]):
            return False
        if not _CONTAINER_FIELDS_CHECKED_IN_FULL.isdisjoint(c):
            return False
        seen.add(name)
    names.update(seen)
    return True


def validate_pod_spec(spec: Any, path: str, errs: Errors) -> None:
    """``ValidatePodSpec``, for the fields the scheduler reads and the ones hand-written manifests miss."""
    if spec is None:
        spec = {}
    elif not isinstance(spec, dict):
        return  # the model says it must be a mapping
    containers = spec.get("containers")
    names: set[str] = set()
    if not _clean_containers(containers, names):  # the usual pod is decided quickly; any other in full
        if not containers:
            errs.append(required(f"{path}.containers"))
        _validate_containers(containers, f"{path}.containers", spec, names, errs)
    if "initContainers" in spec:
        _validate_containers(spec["initContainers"], f"{path}.initContainers", spec, names, errs)
    for key, value in spec.items():
        check = _POD_SPEC_FIELDS.get(key)
        if check is not None:
            check(value, f"{path}.{key}", errs)


# -- per kind ------------------------------------------------------------------------------------------

#: The apiVersion each kind the scheduler reads is served at (v1.35), and the workloads ``simulate`` reads.
API_VERSIONS: dict[str, tuple[str, ...]] = {
    "Pod": ("v1",),
    "Node": ("v1",),
    "Namespace": ("v1",),
    "Service": ("v1",),
    "PersistentVolume": ("v1",),
    "PersistentVolumeClaim": ("v1",),
    "ReplicationController": ("v1",),
    "PriorityClass": ("scheduling.k8s.io/v1",),
    "ReplicaSet": ("apps/v1",),
    "StatefulSet": ("apps/v1",),
    "Deployment": ("apps/v1",),
    "Job": ("batch/v1",),
    "PodDisruptionBudget": ("policy/v1",),
    "StorageClass": ("storage.k8s.io/v1",),
    "CSINode": ("storage.k8s.io/v1",),
    "CSIDriver": ("storage.k8s.io/v1",),
    "CSIStorageCapacity": ("storage.k8s.io/v1",),
    "DeviceClass": ("resource.k8s.io/v1",),
    "ResourceSlice": ("resource.k8s.io/v1",),
    "ResourceClaim": ("resource.k8s.io/v1",),
    "PodGroup": ("scheduling.k8s.io/v1alpha2",),
}


def api_version_error(kind: str, api_version: Any) -> str | None:
    """kubectl's (and the API server's) answer to an apiVersion that does not serve ``kind``; None if fine.

    A missing apiVersion is accepted (kschedctl knows the kind's schema from ``kind`` alone).
    """
    served = API_VERSIONS.get(kind)
    if served is None or api_version is None or api_version in served:
        return None
    hint = f"kube-scheduler v1.35 reads {kind} as {' or '.join(served)}"
    return f'no matches for kind "{kind}" in version "{api_version}" ({hint})'


def _node_errors(raw: dict[str, Any], errs: Errors) -> None:
    spec = raw.get("spec")
    if isinstance(spec, dict) and spec.get("taints"):
        validate_taints(spec.get("taints"), "spec.taints", errs)
    status = raw.get("status")
    if isinstance(status, dict):
        validate_resource_list(status.get("capacity"), "status.capacity", errs)
        validate_resource_list(status.get("allocatable"), "status.allocatable", errs)


def _priority_class_errors(raw: dict[str, Any], errs: Errors) -> None:
    value = raw.get("value")
    name = str((raw.get("metadata") or {}).get("name") or "") if isinstance(raw.get("metadata"), dict) else ""
    if isinstance(value, int) and not isinstance(value, bool) and value > 1_000_000_000 and not name.startswith("system-"):
        errs.append(forbidden("value", "maximum allowed value of a user defined priority is 1000000000"))
    policy = raw.get("preemptionPolicy")
    if policy is not None and policy not in ("PreemptLowerPriority", "Never"):
        errs.append(not_supported("preemptionPolicy", policy, ["PreemptLowerPriority", "Never"]))


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
    replicas = spec.get("replicas")
    if isinstance(replicas, int) and not isinstance(replicas, bool) and replicas < 0:
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
        _validate_annotations(md.get("annotations"), "spec.template.metadata.annotations", errs)


def _selector_matches(selector: dict[str, Any], labels: dict[str, Any]) -> bool:
    """Whether the workload's selector selects its own template's labels (a bad selector: reported apart)."""
    from kschedctl.errors import InputError
    from kschedctl.snapshot.selectors import parse_label_selector

    try:
        return parse_label_selector(selector).matches({str(k): str(v) for k, v in labels.items()})
    except InputError:
        return True


#: Kinds whose names are DNS-1123 labels or DNS-1035 labels; every other kind: a DNS-1123 subdomain.
_NAME_RULES: dict[str, Callable[[str], list[str]]] = {
    "Namespace": name_is_dns_label,
    "Service": name_is_dns1035_label,
}
_NAMESPACED = frozenset(
    {
        "Pod",
        "Service",
        "PersistentVolumeClaim",
        "ReplicationController",
        "ReplicaSet",
        "StatefulSet",
        "Deployment",
        "Job",
        "PodDisruptionBudget",
        "CSIStorageCapacity",
        "ResourceClaim",
    }
)


#: Kinds whose labels the scheduler reads (affinity, spreading, namespaceSelectors, VolumeZone).
_LABELS_READ = frozenset({"Pod", "Node", "Namespace", "PersistentVolume"})


def validate_object(kind: str, raw: dict[str, Any]) -> Errors:
    """What the API server would refuse in this object on create (empty when nothing), in the fields
    the scheduler reads: the labels of the other kinds are not looked at."""
    errs: Errors = []
    name_rule = _NAME_RULES.get(kind, name_is_dns_subdomain)
    validate_object_meta(raw.get("metadata"), kind in _NAMESPACED, name_rule, errs, labels=kind in _LABELS_READ)
    if kind == "Pod":
        validate_pod_spec(raw.get("spec"), "spec", errs)
    elif kind == "Node":
        _node_errors(raw, errs)
    elif kind == "PriorityClass":
        _priority_class_errors(raw, errs)
    elif kind in ("ReplicaSet", "StatefulSet"):
        # A snapshot's controllers matter to the scheduler only through their selector (default
        # spreading); snapshots written by hand often leave the rest out.
        spec = raw.get("spec")
        if isinstance(spec, dict):
            validate_label_selector(spec.get("selector"), "spec.selector", errs)
    return errs


def first_error(errs: Errors) -> str:
    """The first problem as the API server words it, with how many more there are."""
    more = len({str(e) for e in errs}) - 1
    tail = f" (and {more} more problem{'s' if more > 1 else ''})" if more > 0 else ""
    return f"{errs[0]}{tail}"
