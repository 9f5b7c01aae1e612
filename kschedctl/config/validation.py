"""kube-scheduler's validation of KubeSchedulerConfiguration (``apis/config/validation``).

Two layers, as in kube-scheduler:

* ``validate_configuration``: ``ValidateKubeSchedulerConfiguration`` on the
  defaulted configuration. Paths are rooted at the document
  (``profiles[0].pluginConfig[1].args.hardPodAffinityWeight``); the result is
  one aggregate line.
* ``validate_plugin_instantiation``: the args checks each plugin's ``New``
  repeats with a nil path when the framework is built. It matters for
  NodeResourcesFit: ``validatePluginConfig`` registers its validator under the
  key "NodeResourcesFitArgs", which never matches a plugin name, so kube-scheduler
  only rejects bad NodeResourcesFit args when it instantiates the plugin
  (``initializing plugin "NodeResourcesFit": scoringStrategy...``).

Messages, paths, value printing and error order follow the Go code (v1.35,
apimachinery v0.35). Where Go iterates a map (the per-extension-point invalid
plugin check, the framework's plugin instantiation) the order is random in Go;
here it is fixed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kschedctl.apivalidation import label_value_errors, parse_go_int64, qualified_name_errors
from kschedctl.config.decode import ARGS_TYPES, args_types
from kschedctl.config.defaults import DefaultedConfig, DefaultedProfile
from kschedctl.config.field import (
    DUPLICATE,
    FieldError,
    GoJSON,
    RawJSON,
    aggregate,
    child,
    duplicate,
    forbidden,
    go_duration_string,
    go_json,
    index,
    invalid,
    key,
    not_supported,
    required,
)
from kschedctl.framework.profile import EXTENSION_POINT_FIELDS, PluginSet
from kschedctl.kube import gates
from kschedctl.kube.features import Features


def _label_name(value: str, path: str) -> list[FieldError]:
    """``metav1validation.ValidateLabelName``: one error per problem."""
    return [invalid(path, value, m) for m in qualified_name_errors(value)]


def is_extended_resource_name(name: str) -> bool:
    """``v1helper.IsExtendedResourceName``."""
    if "/" not in name or "kubernetes.io/" in name or name.startswith("requests."):
        return False
    return not qualified_name_errors("requests." + name)


# ---------------------------------------------------------------------------------------------
# plugin args (validation_pluginargs.go); ``path`` None is Go's nil *field.Path


def _shape_errors(shape: list[dict[str, Any]], path: str) -> list[FieldError]:
    """``validateFunctionShape``."""
    if not shape:
        return [required(path, "at least one point must be specified")]
    errs: list[FieldError] = []
    for i in range(1, len(shape)):
        if shape[i - 1].get("utilization", 0) >= shape[i].get("utilization", 0):
            errs.append(
                invalid(
                    child(index(path, i), "utilization"),
                    shape[i].get("utilization", 0),
                    "values must be sorted in increasing order",
                )
            )
            break
    for i, p in enumerate(shape):
        u, s = p.get("utilization", 0), p.get("score", 0)
        if u < 0 or u > 100:
            errs.append(invalid(child(index(path, i), "utilization"), u, "not in valid range [0, 100]"))
        if s < 0 or s > 10:
            errs.append(invalid(child(index(path, i), "score"), s, "not in valid range [0, 10]"))
    return errs


def validate_default_preemption_args(path: str | None, args: dict[str, Any]) -> list[FieldError]:
    errs: list[FieldError] = []
    pct_path, abs_path = child(path, "minCandidateNodesPercentage"), child(path, "minCandidateNodesAbsolute")
    pct, absolute = args.get("minCandidateNodesPercentage", 0), args.get("minCandidateNodesAbsolute", 0)
    if pct < 0 or pct > 100:
        errs.append(invalid(pct_path, pct, "not in valid range [0, 100]"))
    if absolute < 0:
        errs.append(invalid(abs_path, absolute, "not in valid range [0, inf)"))
    if pct == 0 and absolute == 0:
        errs.append(invalid(pct_path, pct, "cannot be zero at the same time as minCandidateNodesAbsolute"))
        errs.append(
            invalid(abs_path, absolute, "cannot be zero at the same time as minCandidateNodesPercentage")
        )
    return errs


def validate_inter_pod_affinity_args(path: str | None, args: dict[str, Any]) -> list[FieldError]:
    w = args.get("hardPodAffinityWeight", 0)
    if w < 0 or w > 100:
        return [invalid(child(path, "hardPodAffinityWeight"), w, "not in valid range [0, 100]")]
    return []


def validate_pod_topology_spread_args(path: str | None, args: dict[str, Any]) -> list[FieldError]:
    errs: list[FieldError] = []
    constraints: list[dict[str, Any]] = args.get("defaultConstraints") or []
    dtype = args.get("defaultingType", "")
    dpath = child(path, "defaultingType")
    if dtype not in ("System", "List"):
        errs.append(not_supported(dpath, GoJSON(dtype), ["System", "List"]))
    elif dtype == "System" and constraints:
        errs.append(invalid(dpath, GoJSON(dtype), "when .defaultConstraints are not empty"))
    cpath = child(path, "defaultConstraints")
    for i, c in enumerate(constraints):
        p = index(cpath, i)
        skew = c.get("maxSkew", 0)
        if skew <= 0:
            errs.append(invalid(child(p, "maxSkew"), skew, "not in valid range (0, inf)"))
        tkey = c.get("topologyKey", "")
        if not tkey:
            errs.append(required(child(p, "topologyKey"), "can not be empty"))
        else:
            errs.extend(_label_name(tkey, child(p, "topologyKey")))
        when = c.get("whenUnsatisfiable", "")
        if not when:
            errs.append(required(child(p, "whenUnsatisfiable"), "can not be empty"))
        elif when not in ("DoNotSchedule", "ScheduleAnyway"):
            errs.append(
                not_supported(
                    child(p, "whenUnsatisfiable"), GoJSON(when), ["DoNotSchedule", "ScheduleAnyway"]
                )
            )
        if c.get("labelSelector") is not None:
            errs.append(
                forbidden(
                    child(p, "labelSelector"),
                    "constraint must not define a selector, as they deduced for each pod",
                )
            )
        for other in constraints[:i]:
            if other.get("topologyKey", "") == tkey and other.get("whenUnsatisfiable", "") == when:
                errs.append(duplicate(p, f"{{{tkey}, {when}}}"))
                break
    return errs


def validate_node_resources_balanced_allocation_args(
    path: str | None, args: dict[str, Any]
) -> list[FieldError]:
    errs: list[FieldError] = []
    seen: set[str] = set()
    rpath = child(path, "resources")
    for i, r in enumerate(args.get("resources") or []):
        name = r.get("name", "")
        if name in seen:
            errs.append(duplicate(child(index(rpath, i), "name"), name))
        else:
            seen.add(name)
        w = r.get("weight", 0)
        if w != 1:
            errs.append(invalid(child(index(rpath, i), "weight"), w, "must be 1"))
    return errs


def validate_node_resources_fit_args(path: str | None, args: dict[str, Any]) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, res in enumerate(args.get("ignoredResources") or []):
        errs.extend(_label_name(res, index(child(path, "ignoredResources"), i)))
    for i, group in enumerate(args.get("ignoredResourceGroups") or []):
        p = index(child(path, "ignoredResourceGroups"), i)
        if "/" in group:
            errs.append(invalid(p, group, "resource group name can't contain '/'"))
        errs.extend(_label_name(group, p))
    st = args.get("scoringStrategy")
    spath = child(path, "scoringStrategy")
    if st is not None:
        stype = st.get("type", "")
        if stype not in ("LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"):
            errs.append(
                not_supported(
                    child(spath, "type"),
                    GoJSON(stype),
                    ["LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"],
                )
            )
        for i, r in enumerate(st.get("resources") or []):
            w = r.get("weight", 0)
            if w <= 0 or w > 100:
                errs.append(
                    invalid(
                        child(index(child(spath, "resources"), i), "weight"),
                        w,
                        f"resource weight of {r.get('name', '')} not in valid range (0, 100]",
                    )
                )
        rtcr = st.get("requestedToCapacityRatio")
        if rtcr is not None:
            errs.extend(_shape_errors(rtcr.get("shape") or [], child(spath, "shape")))
    return errs


def validate_volume_binding_args(path: str | None, args: dict[str, Any], features: Features) -> list[FieldError]:
    errs: list[FieldError] = []
    t = args.get("bindTimeoutSeconds", 0)
    if t < 0:
        errs.append(
            invalid(
                child(path, "bindTimeoutSeconds"),
                t,
                "invalid BindTimeoutSeconds, should not be a negative value",
            )
        )
    shape = args.get("shape")
    if features.enabled(gates.STORAGE_CAPACITY_SCORING):
        errs.extend(_shape_errors(shape or [], child(path, "shape")))
    elif shape is not None:
        internal = [{"Utilization": p.get("utilization", 0), "Score": p.get("score", 0)} for p in shape]
        errs.append(
            invalid(
                child(path, "shape"),
                GoJSON(internal),
                "unexpected field `shape`, remove it or turn on the feature gate StorageCapacityScoring",
            )
        )
    return errs


def validate_dynamic_resources_args(path: str | None, args: dict[str, Any], features: Features) -> list[FieldError]:
    errs: list[FieldError] = []
    ft = args.get("filterTimeout")
    if features.enabled(gates.DRA_SCHEDULER_FILTER_TIMEOUT):
        if ft is not None and ft < 0:
            errs.append(
                invalid(child(path, "filterTimeout"), go_duration_string(ft), "must be zero or positive")
            )
    elif ft is not None:
        errs.append(
            forbidden(child(path, "filterTimeout"), "DRASchedulingFilterTimeout feature gate is disabled")
        )
    bt = args.get("bindingTimeout")
    if features.enabled(gates.DRA_DEVICE_BINDING_CONDITIONS) and features.enabled(gates.DRA_RESOURCE_CLAIM_DEVICE_STATUS):
        if bt is not None and bt < 1_000_000_000:
            errs.append(
                invalid(child(path, "bindingTimeout"), go_duration_string(bt), "must be at least 1 second")
            )
    elif bt is not None:
        errs.append(
            forbidden(
                child(path, "bindingTimeout"),
                "DRADeviceBindingConditions or DRAResourceClaimDeviceStatus feature gate is disabled",
            )
        )
    return errs


_SELECTOR_OPERATORS = ["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"]


def _go_parse_int64_ok(s: str) -> bool:
    return parse_go_int64(s) is not None


def _requirement_errors(expr: dict[str, Any], path: str) -> list[FieldError]:
    """``labels.NewRequirement`` with the node selector operator already mapped."""
    errs: list[FieldError] = []
    k = expr.get("key", "")
    op = expr.get("operator", "")
    values = expr.get("values")
    vals: list[str] = values or []
    key_msgs = qualified_name_errors(k)
    if key_msgs:
        errs.append(invalid(child(path, "key"), k, "; ".join(key_msgs)))
    vpath = child(path, "values")
    if op in ("In", "NotIn"):
        if not vals:
            errs.append(
                invalid(vpath, GoJSON(values), "for 'in', 'notin' operators, values set can't be empty")
            )
    elif op in ("Exists", "DoesNotExist"):
        if vals:
            errs.append(
                invalid(vpath, GoJSON(values), "values set must be empty for exists and does not exist")
            )
    elif op in ("Gt", "Lt"):
        if len(vals) != 1:
            errs.append(
                invalid(vpath, GoJSON(values), "for 'Gt', 'Lt' operators, exactly one value is required")
            )
        for i, v in enumerate(vals):
            if not _go_parse_int64_ok(v):
                errs.append(
                    invalid(index(vpath, i), v, "for 'Gt', 'Lt' operators, the value must be an integer")
                )
    for i, v in enumerate(vals):
        msgs = label_value_errors(v)
        if msgs:
            errs.append(invalid(key(index(vpath, i), k), v, "; ".join(msgs)))
    # ToAggregate de-duplicates identical messages
    out: list[FieldError] = []
    for e in errs:
        if str(e) not in {str(x) for x in out}:
            out.append(e)
    return out


def _node_selector_term_errors(term: dict[str, Any], path: str) -> list[FieldError]:
    """``newNodeSelectorTerm``'s parse errors."""
    errs: list[FieldError] = []
    exprs = term.get("matchExpressions") or []
    if exprs:
        p = child(path, "matchExpressions")
        for i, expr in enumerate(exprs):
            ep = index(p, i)
            op = expr.get("operator", "")
            if op not in _SELECTOR_OPERATORS:
                errs.append(not_supported(child(ep, "operator"), GoJSON(op), _SELECTOR_OPERATORS))
                continue
            errs.extend(_requirement_errors(expr, ep))
    fields = term.get("matchFields") or []
    if fields:
        p = child(path, "matchFields")
        for i, expr in enumerate(fields):
            ep = index(p, i)
            op = expr.get("operator", "")
            if op in ("In", "NotIn"):
                values = expr.get("values")
                if len(values or []) != 1:
                    errs.append(invalid(child(ep, "values"), GoJSON(values), "must have one element"))
            else:
                errs.append(not_supported(child(ep, "operator"), GoJSON(op), ["In", "NotIn"]))
    return errs


def _empty_term(term: dict[str, Any]) -> bool:
    return not term.get("matchExpressions") and not term.get("matchFields")


def validate_node_affinity_args(path: str | None, args: dict[str, Any]) -> list[FieldError]:
    aff = args.get("addedAffinity")
    if aff is None:
        return []
    errs: list[FieldError] = []
    ns = aff.get("requiredDuringSchedulingIgnoredDuringExecution")
    if ns is not None:
        base = child(
            child(path, "addedAffinity", "requiredDuringSchedulingIgnoredDuringExecution"),
            "nodeSelectorTerms",
        )
        for i, term in enumerate(ns.get("nodeSelectorTerms") or []):
            if _empty_term(term):
                continue
            errs.extend(_node_selector_term_errors(term, index(base, i)))
    terms = aff.get("preferredDuringSchedulingIgnoredDuringExecution") or []
    base = child(path, "addedAffinity", "preferredDuringSchedulingIgnoredDuringExecution")
    for i, t in enumerate(terms):
        pref = t.get("preference") or {}
        if t.get("weight", 0) == 0 or _empty_term(pref):
            continue
        errs.extend(_node_selector_term_errors(pref, index(base, i)))
    return errs


#: ``validatePluginConfig``'s table. NodeResourcesFit is registered under the wrong key in Go
#: ("NodeResourcesFitArgs"), so its args are not checked here (see module docstring).
#: A validator of one plugin's args: the field path (None: the plugin's ``New``), the args, the run's
#: version and gates (which only VolumeBinding's and DynamicResources' rules read).
ArgsValidator = Callable[[str | None, dict[str, Any], Features], list[FieldError]]


def _ungated(validate: Callable[[str | None, dict[str, Any]], list[FieldError]]) -> ArgsValidator:
    """A validator whose rules no feature gate changes, in the shape every validator has."""
    return lambda path, args, _features: validate(path, args)


CONFIG_ARGS_VALIDATORS: dict[str, ArgsValidator] = {
    "DefaultPreemption": _ungated(validate_default_preemption_args),
    "InterPodAffinity": _ungated(validate_inter_pod_affinity_args),
    "NodeAffinity": _ungated(validate_node_affinity_args),
    "NodeResourcesBalancedAllocation": _ungated(validate_node_resources_balanced_allocation_args),
    "NodeResourcesFitArgs": _ungated(validate_node_resources_fit_args),
    "PodTopologySpread": _ungated(validate_pod_topology_spread_args),
    "VolumeBinding": validate_volume_binding_args,
    "DynamicResources": validate_dynamic_resources_args,
}
#: What each in-tree plugin's ``New`` validates (nil path) when the framework is built.
PLUGIN_ARGS_VALIDATORS: dict[str, ArgsValidator] = {
    **{name: v for name, v in CONFIG_ARGS_VALIDATORS.items() if name != "NodeResourcesFitArgs"},
    "NodeResourcesFit": _ungated(validate_node_resources_fit_args),
}


def _run_validator(name: str, path: str | None, args: dict[str, Any], features: Features) -> list[FieldError]:
    table = PLUGIN_ARGS_VALIDATORS if path is None else CONFIG_ARGS_VALIDATORS
    return table[name](path, args, features)


# ---------------------------------------------------------------------------------------------
# validation.go

#: Plugins removed from (or never valid in) each component config version, oldest first.
INVALID_PLUGINS_BY_VERSION: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("kubescheduler.config.k8s.io/v1", ("AzureDiskLimits", "CinderLimits", "EBSLimits", "GCEPDLimits")),
)
#: ``stagesToPluginSet`` (MultiPoint is not checked by Go).
_STAGES = tuple(f for f in EXTENSION_POINT_FIELDS if f != "multiPoint")


def _invalid_plugin_version(api_version: str, name: str) -> str | None:
    for version, plugins in INVALID_PLUGINS_BY_VERSION:
        if name in plugins:
            return version
        if api_version == version:
            break
    return None


def _invalid_plugin_detail(invalid_version: str, api_version: str) -> str:
    return (
        f'was invalid in version "{invalid_version}" (KubeSchedulerConfiguration is version "{api_version}")'
    )


def _percentage(path: str, value: int | None) -> list[FieldError]:
    if value is not None and (value < 0 or value > 100):
        return [invalid(path, value, "not in valid range [0-100]")]
    return []


def _validate_profile(
    path: str, api_version: str, prof: DefaultedProfile, features: Features
) -> list[FieldError]:
    # validatePluginConfig's table is the version's: a plugin without an args kind there is not checked
    unregistered = frozenset(ARGS_TYPES) - frozenset(args_types(features.minor))
    errs: list[FieldError] = []
    if not prof.scheduler_name:
        errs.append(required(child(path, "schedulerName")))
    errs.extend(_percentage(child(path, "percentageOfNodesToScore"), prof.percentage_of_nodes_to_score))
    plugins_path = child(path, "plugins")
    for stage in _STAGES:
        for i, ref in enumerate(prof.plugins.sets[stage].enabled):
            version = _invalid_plugin_version(api_version, ref.name)
            if version is not None:
                errs.append(
                    invalid(
                        index(child(plugins_path, stage, "enabled"), i),
                        ref.name,
                        _invalid_plugin_detail(version, api_version),
                    )
                )
    seen: set[str] = set()
    for i, pc in enumerate(prof.plugin_config):
        pc_path = index(child(path, "pluginConfig"), i)
        if pc.name in seen:
            errs.append(duplicate(pc_path, pc.name))
        else:
            seen.add(pc.name)
        version = _invalid_plugin_version(api_version, pc.name)
        if version is not None:
            errs.append(invalid(pc_path, pc.name, _invalid_plugin_detail(version, api_version)))
            continue
        validator = CONFIG_ARGS_VALIDATORS.get(pc.name)
        if validator is None or pc.name in unregistered:
            continue
        if not pc.known:
            # args that did not decode into the validator's type (only "NodeResourcesFitArgs" can get here)
            errs.append(
                invalid(
                    child(pc_path, "args"),
                    RawJSON(go_json(pc.args, sort_keys=True)),
                    "has to match plugin args",
                )
            )
            continue
        errs.extend(_run_validator(pc.name, child(pc_path, "args"), pc.args, features))
    return errs


def _internal_plugin_set(ps: PluginSet) -> GoJSON:
    """How Go's json.Marshal prints an internal ``config.PluginSet`` (no JSON tags; nil lists are null)."""
    enabled = [{"Name": r.name, "Weight": r.weight} for r in ps.enabled] or None
    disabled = [{"Name": n, "Weight": 0} for n in ps.disabled] or None
    return GoJSON({"Enabled": enabled, "Disabled": disabled})


def _same_plugin_set(a: PluginSet, b: PluginSet) -> bool:
    return [(r.name, r.weight) for r in a.enabled] == [(r.name, r.weight) for r in b.enabled] and list(
        a.disabled
    ) == list(b.disabled)


def _validate_common_queue_sort(profiles: list[DefaultedProfile]) -> list[FieldError]:
    errs: list[FieldError] = []
    canon = profiles[0].plugins.sets["queueSort"]
    qs_name = canon.enabled[0].name if canon.enabled else ""
    if len(canon.enabled) > 1:
        errs.append(
            invalid(
                "profiles[0].plugins.queueSort.Enabled",
                len(canon.enabled),
                "only one queue sort plugin can be enabled",
            )
        )
    qs_args: Any = None
    for pc in profiles[0].plugin_config:
        if qs_name and pc.name == qs_name:
            qs_args = pc.args
    for i in range(1, len(profiles)):
        curr = profiles[i].plugins.sets["queueSort"]
        if not _same_plugin_set(canon, curr):
            errs.append(
                invalid(
                    f"profiles[{i}].plugins.queueSort",
                    _internal_plugin_set(curr),
                    "must be the same for all profiles",
                )
            )
        for pc in profiles[i].plugin_config:
            if pc.name == qs_name and pc.args != qs_args:
                errs.append(
                    invalid(
                        f"profiles[{i}].pluginConfig.args",
                        RawJSON(go_json(pc.args, sort_keys=True)),
                        "queueSort must be the same for all profiles",
                    )
                )
    return errs


def _validate_extenders(extenders: list[dict[str, Any]]) -> list[FieldError]:
    errs: list[FieldError] = []
    binders = 0
    managed: set[str] = set()
    for i, ext in enumerate(extenders):
        p = f"extenders[{i}]"
        if ext.get("prioritizeVerb") and ext.get("weight", 0) <= 0:
            errs.append(
                invalid(child(p, "weight"), ext.get("weight", 0), "must have a positive weight applied to it")
            )
        if ext.get("bindVerb"):
            binders += 1
        for j, res in enumerate(ext.get("managedResources") or []):
            np = child(index(child(p, "managedResources"), j), "name")
            name = res.get("name", "")
            msgs = qualified_name_errors(name)
            if msgs:
                errs.extend(invalid(np, GoJSON(name), m) for m in msgs)
            elif not is_extended_resource_name(name):
                errs.append(invalid(np, name, "is an invalid extended resource name"))
            if name in managed:
                errs.append(invalid(np, name, "duplicate extender managed resource name"))
            managed.add(name)
    if binders > 1:
        errs.append(
            invalid(
                "extenders",
                f"found {binders} extenders implementing bind",
                "only one extender can implement bind",
            )
        )
    return errs


def _validate_leader_election(le: dict[str, Any]) -> list[FieldError]:
    """``componentbasevalidation.ValidateLeaderElectionConfiguration`` plus the scheduler's lease-only rule."""
    errs: list[FieldError] = []
    if le.get("leaderElect"):
        lease, renew, retry = le.get("leaseDuration", 0), le.get("renewDeadline", 0), le.get("retryPeriod", 0)
        if lease <= 0:
            errs.append(
                invalid(
                    "leaderElection.leaseDuration", go_duration_string(lease), "must be greater than zero"
                )
            )
        if renew <= 0:
            errs.append(
                invalid(
                    "leaderElection.renewDeadline", go_duration_string(renew), "must be greater than zero"
                )
            )
        if retry <= 0:
            errs.append(
                invalid("leaderElection.retryPeriod", go_duration_string(retry), "must be greater than zero")
            )
        if lease <= renew:
            errs.append(
                invalid(
                    "leaderElection.leaseDuration",
                    go_duration_string(renew),
                    "must be greater than `RenewDeadline`",
                )
            )
        for name in ("resourceLock", "resourceNamespace", "resourceName"):
            if not le.get(name):
                errs.append(required(f"leaderElection.{name}"))
        if le.get("resourceLock") != "leases":
            errs.append(
                invalid(
                    "leaderElection.resourceLock",
                    le.get("resourceLock", ""),
                    'resourceLock value must be "leases"',
                )
            )
    return errs


def validate_configuration(cfg: DefaultedConfig) -> list[FieldError]:
    """``ValidateKubeSchedulerConfiguration``: every error, in Go's order."""
    errs: list[FieldError] = []
    burst = cfg.client_connection.get("burst", 0)
    if burst < 0:
        errs.append(invalid("clientConnection.burst", burst, "must be non-negative"))
    errs.extend(_validate_leader_election(cfg.leader_election))
    if cfg.parallelism <= 0:
        errs.append(invalid("parallelism", cfg.parallelism, "should be an integer value greater than zero"))
    if not cfg.profiles:
        errs.append(required("profiles"))
    else:
        existing: dict[str, int] = {}
        for i, prof in enumerate(cfg.profiles):
            path = f"profiles[{i}]"
            errs.extend(_validate_profile(path, cfg.api_version, prof, cfg.features))
            if prof.scheduler_name in existing:
                # Go passes the *field.Path of the first occurrence, which json.Marshal prints as {}:
                # name the duplicated value and where it first appears instead.
                first = existing[prof.scheduler_name]
                errs.append(
                    FieldError(
                        DUPLICATE,
                        child(path, "schedulerName"),
                        prof.scheduler_name,
                        f"profiles[{first}] has the same schedulerName",
                    )
                )
            existing[prof.scheduler_name] = i
        errs.extend(_validate_common_queue_sort(cfg.profiles))
    errs.extend(_percentage("percentageOfNodesToScore", cfg.percentage_of_nodes_to_score))
    if cfg.pod_initial_backoff_seconds <= 0:
        errs.append(
            invalid("podInitialBackoffSeconds", cfg.pod_initial_backoff_seconds, "must be greater than 0")
        )
    if cfg.pod_max_backoff_seconds < cfg.pod_initial_backoff_seconds:
        errs.append(
            invalid(
                "podMaxBackoffSeconds",
                cfg.pod_max_backoff_seconds,
                "must be greater than or equal to PodInitialBackoffSeconds",
            )
        )
    errs.extend(_validate_extenders(cfg.extenders))
    return errs


def plugins_needed(prof: DefaultedProfile) -> list[str]:
    """Plugins the framework instantiates for a profile, in first-mention order."""
    names: list[str] = []
    for ps in prof.plugins.sets.values():
        for ref in ps.enabled:
            if ref.name not in names:
                names.append(ref.name)
    return names


def validate_plugin_instantiation(cfg: DefaultedConfig) -> str | None:
    """The first args error a plugin's ``New`` reports when kube-scheduler builds its profiles.

    Returns the complete message kube-scheduler fails with, or None.
    """
    for prof in cfg.profiles:
        args_by_name: dict[str, Any] = {}
        for pc in prof.plugin_config:
            if pc.known:
                args_by_name.setdefault(pc.name, pc.args)
        for name in plugins_needed(prof):
            validator = PLUGIN_ARGS_VALIDATORS.get(name)
            args = args_by_name.get(name)
            if validator is None or args is None:
                continue
            errs = _run_validator(name, None, args, cfg.features)
            if errs:
                return (
                    f"initializing profiles: creating profile for scheduler name {prof.scheduler_name}: "
                    f'initializing plugin "{name}": {aggregate(errs)}'
                )
    return None
