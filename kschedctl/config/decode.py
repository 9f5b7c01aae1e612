"""Strict decoding of a KubeSchedulerConfiguration document, as kube-scheduler's codec does it.

kube-scheduler decodes its ``--config`` file with a strict, case-sensitive JSON
decoder over the v1 Go types: a value of the wrong JSON type is a fatal
``json: cannot unmarshal ...`` error, and unknown or duplicated fields are
collected into one ``strict decoding error: ...``. Plugin args of the in-tree
kinds are decoded the same way, separately, so their messages are prefixed with
``decoding .profiles[i].pluginConfig[j]: decoding args for plugin X:``.

This module holds the Go type schema (field names, Go type names for messages)
and returns the document as plain Python data: known fields only, integers as
``int``, durations as nanoseconds, absent or ``null`` fields left out.
Out-of-tree plugin args are passed through untouched.
"""

from __future__ import annotations

import copy
import datetime
from dataclasses import dataclass, field
from typing import Any

from kschedctl.config.field import DurationError, go_float, go_json, go_quote, parse_go_duration
from kschedctl.framework.profile import (
    EXTENSION_POINT_FIELDS,
    PLACEMENT_EXTENSION_POINTS,
    POD_GROUP_POST_FILTER_FIELD,
)
from kschedctl.kube.goformat import json_kind

GROUP = "kubescheduler.config.k8s.io"
API_VERSION = f"{GROUP}/v1"
KIND = "KubeSchedulerConfiguration"
#: Versions of the configuration API kube-scheduler no longer reads, with the release that removed them.
REMOVED_VERSIONS = {f"{GROUP}/v1beta2": "v1.28", f"{GROUP}/v1beta3": "v1.29"}

_INT_BITS = {"int32": 32, "int64": 64}


@dataclass(frozen=True)
class GoType:
    """One Go type of the v1 API: its JSON kind and the name Go prints in type errors."""

    kind: str  # int, float, bool, string, bytes, duration, raw, struct, list, map
    go: str
    struct: str = ""
    fields: dict[str, GoType] = field(default_factory=dict)
    elem: GoType | None = None


def _scalar(kind: str, go: str) -> GoType:
    return GoType(kind, go)


INT32 = _scalar("int", "int32")
INT64 = _scalar("int", "int64")
FLOAT32 = _scalar("float", "float32")
BOOL = _scalar("bool", "bool")
STRING = _scalar("string", "string")
BYTES = _scalar("bytes", "[]uint8")
DURATION = _scalar("duration", "v1.Duration")
RAW = _scalar("raw", "runtime.RawExtension")


def _named_string(go: str) -> GoType:
    return GoType("string", go)


def _struct(pkg: str, name: str, fields: dict[str, GoType]) -> GoType:
    return GoType("struct", f"{pkg}.{name}", name, fields)


def _list(elem: GoType) -> GoType:
    return GoType("list", f"[]{elem.go}", elem=elem)


def _map(elem: GoType) -> GoType:
    return GoType("map", f"map[string]{elem.go}", elem=elem)


_TYPE_META = {"apiVersion": STRING, "kind": STRING}

# --- core/v1 and meta/v1 pieces used by plugin args -----------------------------------------
_LABEL_SELECTOR = _struct(
    "v1",
    "LabelSelector",
    {
        "matchLabels": _map(STRING),
        "matchExpressions": _list(
            _struct(
                "v1",
                "LabelSelectorRequirement",
                {
                    "key": STRING,
                    "operator": _named_string("v1.LabelSelectorOperator"),
                    "values": _list(STRING),
                },
            )
        ),
    },
)
_TOPOLOGY_SPREAD_CONSTRAINT = _struct(
    "v1",
    "TopologySpreadConstraint",
    {
        "maxSkew": INT32,
        "topologyKey": STRING,
        "whenUnsatisfiable": _named_string("v1.UnsatisfiableConstraintAction"),
        "labelSelector": _LABEL_SELECTOR,
        "minDomains": INT32,
        "nodeAffinityPolicy": _named_string("v1.NodeInclusionPolicy"),
        "nodeTaintsPolicy": _named_string("v1.NodeInclusionPolicy"),
        "matchLabelKeys": _list(STRING),
    },
)
_NODE_SELECTOR_REQUIREMENT = _struct(
    "v1",
    "NodeSelectorRequirement",
    {"key": STRING, "operator": _named_string("v1.NodeSelectorOperator"), "values": _list(STRING)},
)
_NODE_SELECTOR_TERM = _struct(
    "v1",
    "NodeSelectorTerm",
    {"matchExpressions": _list(_NODE_SELECTOR_REQUIREMENT), "matchFields": _list(_NODE_SELECTOR_REQUIREMENT)},
)
_NODE_AFFINITY = _struct(
    "v1",
    "NodeAffinity",
    {
        "requiredDuringSchedulingIgnoredDuringExecution": _struct(
            "v1", "NodeSelector", {"nodeSelectorTerms": _list(_NODE_SELECTOR_TERM)}
        ),
        "preferredDuringSchedulingIgnoredDuringExecution": _list(
            _struct("v1", "PreferredSchedulingTerm", {"weight": INT32, "preference": _NODE_SELECTOR_TERM})
        ),
    },
)

# --- plugin args (kubescheduler.config.k8s.io/v1) ---------------------------------------------
_RESOURCE_SPEC = _struct("v1", "ResourceSpec", {"name": STRING, "weight": INT64})
_SHAPE_POINT = _struct("v1", "UtilizationShapePoint", {"utilization": INT32, "score": INT32})

ARGS_TYPES: dict[str, GoType] = {
    "DefaultPreemption": _struct(
        "v1",
        "DefaultPreemptionArgs",
        {**_TYPE_META, "minCandidateNodesPercentage": INT32, "minCandidateNodesAbsolute": INT32},
    ),
    "InterPodAffinity": _struct(
        "v1",
        "InterPodAffinityArgs",
        {**_TYPE_META, "hardPodAffinityWeight": INT32, "ignorePreferredTermsOfExistingPods": BOOL},
    ),
    "NodeResourcesFit": _struct(
        "v1",
        "NodeResourcesFitArgs",
        {
            **_TYPE_META,
            "ignoredResources": _list(STRING),
            "ignoredResourceGroups": _list(STRING),
            "scoringStrategy": _struct(
                "v1",
                "ScoringStrategy",
                {
                    "type": _named_string("v1.ScoringStrategyType"),
                    "resources": _list(_RESOURCE_SPEC),
                    "requestedToCapacityRatio": _struct(
                        "v1", "RequestedToCapacityRatioParam", {"shape": _list(_SHAPE_POINT)}
                    ),
                },
            ),
        },
    ),
    "PodTopologySpread": _struct(
        "v1",
        "PodTopologySpreadArgs",
        {
            **_TYPE_META,
            "defaultConstraints": _list(_TOPOLOGY_SPREAD_CONSTRAINT),
            "defaultingType": _named_string("v1.PodTopologySpreadConstraintsDefaulting"),
        },
    ),
    "NodeResourcesBalancedAllocation": _struct(
        "v1", "NodeResourcesBalancedAllocationArgs", {**_TYPE_META, "resources": _list(_RESOURCE_SPEC)}
    ),
    "VolumeBinding": _struct(
        "v1", "VolumeBindingArgs", {**_TYPE_META, "bindTimeoutSeconds": INT64, "shape": _list(_SHAPE_POINT)}
    ),
    "NodeAffinity": _struct("v1", "NodeAffinityArgs", {**_TYPE_META, "addedAffinity": _NODE_AFFINITY}),
    "DynamicResources": _struct(
        "v1", "DynamicResourcesArgs", {**_TYPE_META, "filterTimeout": DURATION, "bindingTimeout": DURATION}
    ),
}
#: Kinds registered in kube-scheduler's scheme for kubescheduler.config.k8s.io/v1.
REGISTERED_KINDS = {KIND} | {f"{name}Args" for name in ARGS_TYPES}

#: DynamicResourcesArgs as v1.34's kube-scheduler/config/v1 has it (bindingTimeout came in v1.35);
#: v1.33 has no DynamicResourcesArgs at all. The other args kinds are the same in every supported version.
_DYNAMIC_RESOURCES_ARGS_V134 = _struct("v1", "DynamicResourcesArgs", {**_TYPE_META, "filterTimeout": DURATION})


def args_types(minor: int) -> dict[str, GoType]:
    """The plugin args kinds v1.<minor> registers, by plugin name."""
    if minor >= 35:
        return ARGS_TYPES
    out = {n: t for n, t in ARGS_TYPES.items() if n != "DynamicResources"}
    if minor == 34:
        out["DynamicResources"] = _DYNAMIC_RESOURCES_ARGS_V134
    return out


def registered_kinds(types: dict[str, GoType]) -> set[str]:
    return {KIND} | {f"{name}Args" for name in types}

# --- KubeSchedulerConfiguration -------------------------------------------------------------------
_PLUGIN = _struct("v1", "Plugin", {"name": STRING, "weight": INT32})
_PLUGIN_SET = _struct("v1", "PluginSet", {"enabled": _list(_PLUGIN), "disabled": _list(_PLUGIN)})
EXTENSION_POINTS = EXTENSION_POINT_FIELDS
_PLUGINS = _struct("v1", "Plugins", dict.fromkeys(EXTENSION_POINTS, _PLUGIN_SET))
#: v1.36's Plugins: no podGroupPostFilter (strict decoding calls it an unknown field).
_PLUGINS_V136 = _struct("v1", "Plugins", dict.fromkeys((ep for ep in EXTENSION_POINTS if ep != POD_GROUP_POST_FILTER_FIELD), _PLUGIN_SET))
#: v1.33-v1.35's Plugins: no placementGenerate/placementScore either.
_PLUGINS_V135 = _struct(
    "v1",
    "Plugins",
    dict.fromkeys((ep for ep in _PLUGINS_V136.fields if ep not in PLACEMENT_EXTENSION_POINTS), _PLUGIN_SET),
)
_PLUGIN_CONFIG = _struct("v1", "PluginConfig", {"name": STRING, "args": RAW})


def _profile(plugins: GoType) -> GoType:
    return _struct(
        "v1",
        "KubeSchedulerProfile",
        {
            "schedulerName": STRING,
            "percentageOfNodesToScore": INT32,
            "plugins": plugins,
            "pluginConfig": _list(_PLUGIN_CONFIG),
        },
    )


_PROFILE = _profile(_PLUGINS_V135)
_EXTENDER = _struct(
    "v1",
    "Extender",
    {
        "urlPrefix": STRING,
        "filterVerb": STRING,
        "preemptVerb": STRING,
        "prioritizeVerb": STRING,
        "weight": INT64,
        "bindVerb": STRING,
        "enableHTTPS": BOOL,
        "tlsConfig": _struct(
            "v1",
            "ExtenderTLSConfig",
            {
                "insecure": BOOL,
                "serverName": STRING,
                "certFile": STRING,
                "keyFile": STRING,
                "caFile": STRING,
                "certData": BYTES,
                "keyData": BYTES,
                "caData": BYTES,
            },
        ),
        "httpTimeout": DURATION,
        "nodeCacheCapable": BOOL,
        "managedResources": _list(
            _struct("v1", "ExtenderManagedResource", {"name": STRING, "ignoredByScheduler": BOOL})
        ),
        "ignorable": BOOL,
    },
)
CONFIGURATION = _struct(
    "v1",
    "KubeSchedulerConfiguration",
    {
        **_TYPE_META,
        "parallelism": INT32,
        "leaderElection": _struct(
            "v1alpha1",
            "LeaderElectionConfiguration",
            {
                "leaderElect": BOOL,
                "leaseDuration": DURATION,
                "renewDeadline": DURATION,
                "retryPeriod": DURATION,
                "resourceLock": STRING,
                "resourceName": STRING,
                "resourceNamespace": STRING,
            },
        ),
        "clientConnection": _struct(
            "v1alpha1",
            "ClientConnectionConfiguration",
            {
                "kubeconfig": STRING,
                "acceptContentTypes": STRING,
                "contentType": STRING,
                "qps": FLOAT32,
                "burst": INT32,
            },
        ),
        "enableProfiling": BOOL,
        "enableContentionProfiling": BOOL,
        "percentageOfNodesToScore": INT32,
        "podInitialBackoffSeconds": INT64,
        "podMaxBackoffSeconds": INT64,
        "profiles": _list(_PROFILE),
        "extenders": _list(_EXTENDER),
        "delayCacheUntilActive": BOOL,
    },
)
#: v1.36's KubeSchedulerConfiguration: its profiles' plugins have the two placement extension points.
CONFIGURATION_V136 = GoType(
    CONFIGURATION.kind,
    CONFIGURATION.go,
    CONFIGURATION.struct,
    {**CONFIGURATION.fields, "profiles": _list(_profile(_PLUGINS_V136))},
)
#: v1.37's: podGroupPostFilter too.
CONFIGURATION_V137 = GoType(
    CONFIGURATION.kind,
    CONFIGURATION.go,
    CONFIGURATION.struct,
    {**CONFIGURATION.fields, "profiles": _list(_profile(_PLUGINS))},
)


def configuration_type(minor: int) -> GoType:
    """The KubeSchedulerConfiguration type v1.<minor> decodes."""
    if minor >= 37:
        return CONFIGURATION_V137
    return CONFIGURATION_V136 if minor >= 36 else CONFIGURATION


class DecodeError(Exception):
    """A document kube-scheduler would refuse to decode; ``str()`` is the one-line message.

    ``field`` is the offending field's path in the document (with indices) when there is one.
    The message keeps kube-scheduler's own words (what users search for), after a plain
    statement of the problem where Go's wording is about Go rather than the file.
    """

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


class _KindMismatch(DecodeError):
    """Plugin args of another registered kind (Go reports it without the "decoding args" prefix)."""


# ---------------------------------------------------------------------------------------------
# YAML -> JSON normalisation (what sigs.k8s.io/yaml's YAMLToJSON produces)


def to_json_value(v: Any) -> Any:
    """Turn a PyYAML value into the value Go would see after YAML -> JSON conversion."""
    if isinstance(v, dict):
        return {_json_key(k): to_json_value(x) for k, x in v.items()}
    if isinstance(v, list | tuple):
        return [to_json_value(x) for x in v]
    if isinstance(v, float) and v.is_integer() and abs(v) < 2**63:
        # JSON marshalling of a float64 holding an integer prints it without a fraction.
        return int(v)
    if isinstance(v, datetime.datetime | datetime.date):
        return v.isoformat()
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    return v


def _json_key(k: Any) -> str:
    if isinstance(k, bool):
        return "true" if k else "false"
    if k is None:
        return "null"
    if isinstance(k, float):
        return go_float(k)
    return str(k)


def _number_literal(v: int | float) -> str:
    return str(v) if isinstance(v, int) else go_float(v)


# ---------------------------------------------------------------------------------------------
# the decoder


class _Decoder:
    """One ``UnmarshalStrict`` run: first type error wins, strict errors are all collected."""

    def __init__(self) -> None:
        self.type_error: str | None = None
        #: The path (with indices) of the field of the first type error.
        self.type_error_field: str | None = None
        self.strict: list[str] = []
        #: The strict-error path of the value being decoded (set by ``decode``).
        self._path = ""

    def _type_error(self, value_desc: str, t: GoType, struct: str, stack: list[str]) -> None:
        if self.type_error is not None:
            return
        if struct or stack:
            go = f"json: cannot unmarshal {value_desc} into Go struct field {struct}.{'.'.join(stack)} of type {t.go}"
        else:
            go = f"json: cannot unmarshal {value_desc} into Go value of type {t.go}"
        self.type_error = f"got {_article(value_desc)}, want {_WANTED.get(t.kind, t.go)} (kube-scheduler: {go})"
        self.type_error_field = self._path or None

    def _strict(self, msg: str) -> None:
        if msg not in self.strict and len(self.strict) < 100:
            self.strict.append(msg)

    def decode(self, v: Any, t: GoType, spath: str, struct: str, stack: list[str]) -> Any:
        """Decode ``v`` as ``t``. ``spath`` is the strict-error path, ``struct``/``stack`` the type-error context."""
        if v is None:
            return None
        self._path = spath
        k = t.kind
        if k == "raw":
            return copy.deepcopy(v)
        if k == "struct":
            if not isinstance(v, dict):
                self._type_error(json_kind(v), t, struct, stack)
                return None
            out: dict[str, Any] = {}
            for name, item in v.items():
                ft = t.fields.get(name)
                if ft is None:
                    self._strict(f'unknown field "{spath + "." + name if spath else name}"')
                    continue
                sub = f"{spath}.{name}" if spath else name
                dv = self.decode(item, ft, sub, t.struct, [*stack, name])
                if dv is not None:
                    out[name] = dv
            return out
        if k == "list":
            if not isinstance(v, list):
                self._type_error(json_kind(v), t, struct, stack)
                return None
            assert t.elem is not None
            items = []
            for i, item in enumerate(v):
                dv = self.decode(item, t.elem, f"{spath}[{i}]", struct, stack)
                items.append(_zero(t.elem) if dv is None else dv)
            return items
        if k == "map":
            if not isinstance(v, dict):
                self._type_error(json_kind(v), t, struct, stack)
                return None
            assert t.elem is not None
            m: dict[str, Any] = {}
            for name, item in v.items():
                dv = self.decode(item, t.elem, f"{spath}.{name}" if spath else name, struct, stack)
                m[name] = _zero(t.elem) if dv is None else dv
            return m
        if k == "int":
            if isinstance(v, bool) or not isinstance(v, int | float):
                self._type_error(json_kind(v), t, struct, stack)
                return None
            bits = _INT_BITS[t.go]
            if isinstance(v, float) or not (-(1 << (bits - 1)) <= v < (1 << (bits - 1))):
                self._type_error(f"number {_number_literal(v)}", t, struct, stack)
                return None
            return int(v)
        if k == "float":
            if isinstance(v, bool) or not isinstance(v, int | float):
                self._type_error(json_kind(v), t, struct, stack)
                return None
            return float(v)
        if k == "bool":
            if not isinstance(v, bool):
                self._type_error(json_kind(v), t, struct, stack)
                return None
            return v
        if k in ("string", "bytes"):
            if not isinstance(v, str):
                self._type_error(json_kind(v), t, struct, stack)
                return None
            return v
        if k == "duration":
            if not isinstance(v, str):
                self._type_error(json_kind(v), STRING, "", [])
                return None
            try:
                return parse_go_duration(v)
            except DurationError as e:
                if self.type_error is None:
                    self.type_error = f"want a duration such as 30s or 1m30s ({e})"
                    self.type_error_field = spath or None
                return None
        raise AssertionError(f"unknown schema kind {k}")


#: What each kind of Go value must be given as, in a user's words.
_WANTED = {
    "int": "an integer",
    "float": "a number",
    "bool": "true or false",
    "string": "a string",
    "bytes": "a base64 string",
    "duration": "a duration string such as 30s",
    "struct": "a mapping",
    "map": "a mapping",
    "list": "a list",
}


def _article(value_desc: str) -> str:
    """``string`` -> ``a string``, ``number 2.5`` -> ``2.5`` (a number that does not fit)."""
    if value_desc.startswith("number "):
        return value_desc[len("number ") :]
    return {"object": "a mapping", "array": "a list", "bool": "true/false"}.get(value_desc, f"a {value_desc}")


def _zero(t: GoType) -> Any:
    return {"int": 0, "float": 0.0, "bool": False, "string": "", "bytes": "", "duration": 0}.get(
        t.kind, {} if t.kind in ("struct", "map") else ([] if t.kind == "list" else None)
    )


def _strict_error(errors: list[str]) -> str:
    return "strict decoding error: " + ", ".join(errors)


def _interpret(doc: Any, where: str = "") -> tuple[str, str]:
    """``SimpleMetaFactory.Interpret``: the apiVersion and kind of a JSON document."""
    if doc is None:
        return "", ""
    if not isinstance(doc, dict):
        raise DecodeError(
            f"got {_article(json_kind(doc))}, want a mapping with apiVersion and kind "
            "(kube-scheduler: couldn't get version/kind; json parse error)",
            where or None,
        )
    out = []
    for name in ("apiVersion", "kind"):
        v = doc.get(name)
        if v is not None and not isinstance(v, str):
            raise DecodeError(
                f"got {_article(json_kind(v))}, want a string (kube-scheduler: couldn't get version/kind; "
                f"json parse error: json: cannot unmarshal {json_kind(v)} into Go struct field .{name} of type string)",
                f"{where}.{name}" if where else name,
            )
        out.append(v or "")
    return out[0], out[1]


def _no_kind(kind: str, version: str) -> str:
    """Go's "no kind ... is registered" (without the Go source path it names), with what would be read."""
    msg = f"no kind {go_quote(kind)} is registered for version {go_quote(version)}"
    if version != API_VERSION:
        removed = REMOVED_VERSIONS.get(version)
        msg += f": kube-scheduler v1.35 reads only {API_VERSION}"
        if removed:
            msg += f" ({version.rpartition('/')[2]} was removed in {removed}; see the KubeSchedulerConfiguration migration notes)"
    else:
        msg += f": kube-scheduler reads {KIND} (with plugin args of the kinds <Plugin>Args)"
    return msg


def decode_configuration(doc: Any, duplicate_keys: list[str] | None, minor: int) -> dict[str, Any]:
    """Decode a KubeSchedulerConfiguration document; raise DecodeError with Go's message.

    ``duplicate_keys`` are the YAML duplicate-key complaints found while reading
    the file (they are strict errors in Go). The result keeps in-tree plugin args
    decoded (under ``args``) and out-of-tree args raw; which plugins have args kinds
    is v1.<minor>'s (``args_types``).
    """
    types = args_types(minor)
    kinds = registered_kinds(types)
    doc = to_json_value(doc)
    api_version, kind = _interpret(doc)
    if not kind:
        raise DecodeError(f"Object 'Kind' is missing in '{go_json(doc)}'")
    if not api_version:
        raise DecodeError(f"Object 'apiVersion' is missing in '{go_json(doc)}'")
    if api_version != API_VERSION or kind not in REGISTERED_KINDS:
        raise DecodeError(_no_kind(kind, api_version), "apiVersion" if api_version != API_VERSION else "kind")
    if kind != KIND:
        raise DecodeError(f"couldn't decode as KubeSchedulerConfiguration, got {API_VERSION}, Kind={kind}: ", "kind")

    dec = _Decoder()
    out = dec.decode(doc, configuration_type(minor), "", "", [])
    if dec.type_error is not None:
        raise DecodeError(dec.type_error, dec.type_error_field)
    strict: list[str] = []
    if duplicate_keys:
        strict.append(
            "error converting YAML to JSON: yaml: unmarshal errors:"
            + "".join(" " + d for d in duplicate_keys)
        )
    strict.extend(dec.strict)

    # DecodeNestedObjects: the args of every pluginConfig entry with an in-tree kind.
    for i, prof in enumerate(out.get("profiles") or []):
        for j, pc in enumerate(prof.get("pluginConfig") or []):
            name = pc.get("name", "")
            t = types.get(name)
            if t is None:
                continue  # out-of-tree (or no args kind): kept raw
            where = f"decoding .profiles[{i}].pluginConfig[{j}]"
            args_path = f"profiles[{i}].pluginConfig[{j}].args"
            raw = pc.get("args")
            try:
                args, nested = _decode_args(name, raw, t, kinds)
            except _KindMismatch as e:  # the path replaces Go's "decoding .profiles[i].pluginConfig[j]: "
                raise DecodeError(str(e), f"{args_path}.kind") from None
            except DecodeError as e:
                inner = f"{args_path}.{e.field}" if e.field else args_path
                raise DecodeError(f"decoding args for plugin {name}: {e}", inner) from None
            pc["args"] = args
            if nested:
                strict.append(
                    f"{where}: strict decoding error: decoding args for plugin {name}: {_strict_error(nested)}"
                )
    if strict:
        raise DecodeError(_strict_error(strict))
    return out


def _decode_args(
    name: str, raw: Any, t: GoType, kinds: set[str] = REGISTERED_KINDS
) -> tuple[dict[str, Any], list[str]]:
    """Decode one plugin's args as its v1 kind; returns (args, strict errors)."""
    want_kind = f"{name}Args"
    api_version, kind = _interpret(raw)
    api_version = api_version or API_VERSION
    kind = kind or want_kind
    if api_version != API_VERSION or kind not in kinds:
        raise DecodeError(_no_kind(kind, api_version), "apiVersion" if api_version != API_VERSION else "kind")
    if kind != want_kind:
        # Go decodes into the other registered kind, then refuses the group-kind mismatch.
        raise _KindMismatch(
            f"args for plugin {name} were not of type {want_kind}.{GROUP}, got {kind}.{GROUP}"
        )
    dec = _Decoder()
    out = dec.decode(raw if raw is not None else {}, t, "", "", [])
    if dec.type_error is not None:
        raise DecodeError(dec.type_error, dec.type_error_field)
    return out if out is not None else {}, dec.strict
