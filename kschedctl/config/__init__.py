"""Load a KubeSchedulerConfiguration (``kubescheduler.config.k8s.io/v1``) the way kube-scheduler does.

The pipeline mirrors kube-scheduler's: read the YAML (or JSON) file, decode it
strictly into the v1 types (``decode``), apply defaulting and plugin-set
merging (``defaults``), validate (``validation``), and finally turn the result
into the plain ``SchedulerConfig`` the framework runtime consumes. Every
rejection is a ``ConfigError`` whose message is kube-scheduler's own text,
prefixed with the file name when there is one.

Public API: ``load_config(path | None, registry, features=...)``,
``parse_config(data, source, registry, features=...)``, ``default_config(features)``.
``features`` (``kschedctl.kube.versions.resolve_features``) chooses the version and
feature gates whose defaults (plugin set, weights, args) and validation apply; it is
v1.35.4 with its default gates unless given, and the result (``SchedulerConfig.features``,
every ``Profile.features``) carries it to the plugins. Given a plugin ``registry`` (with
out-of-tree plugins), ``load_config``/``parse_config`` also validate the args of every
enabled out-of-tree plugin against that plugin's own ``ARGS_MODEL``.

Upstream model: ``pkg/scheduler/apis/config/scheme/scheme.go and apis/config/latest/latest.go``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import yaml
from pydantic import BaseModel, ValidationError

from kschedctl.config.args import ARGS_MODELS
from kschedctl.config.decode import API_VERSION, KIND, DecodeError, decode_configuration
from kschedctl.config.defaults import DefaultedConfig, DefaultedProfile, PluginConfigEntry, set_defaults
from kschedctl.config.field import aggregate, go_duration_string
from kschedctl.config.types import SchedulerConfig
from kschedctl.config.validation import plugins_needed, validate_configuration, validate_plugin_instantiation
from kschedctl.errors import NESTED_TOO_DEEPLY, ConfigError
from kschedctl.framework.profile import EXTENSION_INTERFACES, Extender, Profile
from kschedctl.kube.features import Features
from kschedctl.kube.versions import DEFAULT_FEATURES

if TYPE_CHECKING:
    from kschedctl.framework.registry import Registry

__all__ = ["default_config", "load_config", "parse_config"]

_DEFAULT_SOURCE = "<config>"
_DEFAULT_EXTENDER_TIMEOUT_SECONDS = 5.0


def default_config(features: Features = DEFAULT_FEATURES) -> SchedulerConfig:
    """The default configuration (what kube-scheduler runs without ``--config``) of ``features``' version."""
    return _resolve({"apiVersion": API_VERSION, "kind": KIND}, None, None, features=features)


def parse_config(
    data: dict[str, Any],
    source: str = _DEFAULT_SOURCE,
    registry: Registry | None = None,
    features: Features = DEFAULT_FEATURES,
) -> SchedulerConfig:
    """Decode, default and validate an already parsed KubeSchedulerConfiguration document."""
    return _resolve(data, source, None, registry, features)


def load_config(
    path: str | None, registry: Registry | None = None, features: Features = DEFAULT_FEATURES
) -> SchedulerConfig:
    """Read a KubeSchedulerConfiguration file; None gives the default configuration.

    ``registry``: the plugins kschedctl runs with; out-of-tree ones get their args validated.
    ``features``: the version and gates whose defaulting and validation apply (v1.35 by default)."""
    if path is None:
        return default_config(features)
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        reason = (e.strerror or str(e)).lower()
        raise ConfigError(f"open {path}: {reason}") from None
    except UnicodeDecodeError as e:
        raise ConfigError(
            f"{path}: error converting YAML to JSON: yaml: invalid UTF-8 ({e.reason})"
        ) from None
    try:
        data, duplicates = _read_yaml(text, path)
        return _resolve(data, path, duplicates, registry, features)
    except RecursionError:  # Python's stack is shallower than Go's 10000 levels: refused here sooner
        raise ConfigError(f"{path}: error converting YAML to JSON: yaml: {NESTED_TOO_DEEPLY}") from None


# ---------------------------------------------------------------------------------------------


class _Loader(yaml.SafeLoader):
    """A SafeLoader that notes duplicate mapping keys (kube-scheduler's strict YAML rejects them)."""

    duplicates: list[str]

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            try:
                k = self.construct_object(key_node, deep=True)
            except yaml.YAMLError:
                continue
            try:
                hashable = k in seen
            except TypeError:
                continue
            if hashable:
                shown = f'"{k}"' if isinstance(k, str) else str(k)
                self.duplicates.append(f"line {key_node.start_mark.line + 1}: key {shown} already set in map")
            seen.add(k)
        return super().construct_mapping(node, deep=deep)


def _read_yaml(text: str, source: str) -> tuple[Any, list[str]]:
    """The first YAML document of ``text`` and its duplicate-key complaints."""
    loader = _Loader(text)
    loader.duplicates = []
    try:
        data = loader.get_data() if loader.check_data() else None
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        line = f"line {mark.line + 1}: " if mark is not None else ""
        problem = e.problem or e.context or "invalid YAML"
        raise ConfigError(f"{source}: error converting YAML to JSON: yaml: {line}{problem}") from None
    except yaml.YAMLError as e:
        raise ConfigError(f"{source}: error converting YAML to JSON: yaml: {e}") from None
    finally:
        loader.dispose()
    return data, loader.duplicates


def _fail(source: str | None, message: str, field: str | None = None) -> ConfigError:
    """The one line: ``<file>: <field>: <message>`` (the file when there is one, the field when known)."""
    prefix = f"{source}: " if source and source != _DEFAULT_SOURCE else ""
    if field and not message.startswith(field + ":"):
        prefix += f"{field}: "
    return ConfigError(prefix + message)


def _resolve(
    data: Any,
    source: str | None,
    duplicates: list[str] | None,
    registry: Registry | None = None,
    features: Features = DEFAULT_FEATURES,
) -> SchedulerConfig:
    try:
        doc = decode_configuration(data, duplicates, features.minor)
    except DecodeError as e:
        raise _fail(source, str(e), e.field) from None
    cfg = set_defaults(doc, features)
    errors = validate_configuration(cfg)
    if errors:
        raise _fail(source, aggregate(errors))
    ext_error = _apply_extender_ignored_resources(cfg)
    if ext_error is not None:
        raise _fail(source, ext_error)
    init_error = validate_plugin_instantiation(cfg)
    if init_error is not None:
        raise _fail(source, init_error)
    return _build(cfg, source, registry, doc, features)


def _args_model(entry: PluginConfigEntry) -> BaseModel | dict[str, Any]:
    """The args handed to a plugin: an instance of its args model when kschedctl has one (the
    in-tree plugins with args), else the raw args (an out-of-tree plugin's, which ``_out_of_tree_args``
    turns into its ARGS_MODEL when it has one). Raises ValidationError for args the model refuses."""
    model = ARGS_MODELS.get(entry.name)
    if not entry.known:
        raw = entry.args
        data = raw if isinstance(raw, dict) else ({} if raw is None else {"args": raw})
        # an in-tree plugin whose args kind this version does not register (v1.33's DynamicResources):
        # its args as written, decoded into the model its plugin takes
        return data if model is None else model.model_validate(data)
    args = dict(entry.args)
    if entry.name == "DynamicResources":
        for k in ("filterTimeout", "bindingTimeout"):
            if args.get(k) is not None:
                args[k] = go_duration_string(args[k])
    elif entry.name == "NodeResourcesFit":
        st = args.get("scoringStrategy")
        if st is not None and "type" not in st:
            # Go leaves an unset type empty (it does not default it when a strategy is given)
            args["scoringStrategy"] = {**st, "type": ""}
    return ARGS_MODELS[entry.name].model_validate(args)


def _profile_args(p: DefaultedProfile, source: str | None) -> dict[str, BaseModel | dict[str, Any]]:
    """The args of the profile's ``pluginConfig`` entries by plugin name (the first entry of a name wins),
    failing as kube-scheduler does when the constructor of a plugin the profile builds rejects its args.
    A plugin the profile does not enable is never built: args its model refuses are left out."""
    from kschedctl.framework.registry import args_problems

    plugin_config: dict[str, BaseModel | dict[str, Any]] = {}
    for entry in p.plugin_config:
        if entry.name in plugin_config:
            continue
        try:
            plugin_config[entry.name] = _args_model(entry)
        except ValidationError as e:
            if entry.name in plugins_needed(p):
                raise _fail(source, _init_failure(p, entry.name, args_problems(e))) from None
    return plugin_config


def _init_failure(p: DefaultedProfile, name: str, problem: str) -> str:
    """kube-scheduler's message when building the profile's plugin ``name`` fails."""
    return (
        f"initializing profiles: creating profile for scheduler name {p.scheduler_name}: "
        f'initializing plugin "{name}": {problem}'
    )


def _apply_extender_ignored_resources(cfg: DefaultedConfig) -> str | None:
    """``buildExtenders``: managed resources marked ``ignoredByScheduler`` become NodeResourcesFit's
    ``ignoredResources`` in every profile, replacing what the profile configured (the extenders'
    list takes precedence). A profile without NodeResourcesFit args makes kube-scheduler fail to
    start; the message is returned."""
    ignored = [
        str(r.get("name", ""))
        for ext in cfg.extenders
        for r in ext.get("managedResources") or []
        if r.get("ignoredByScheduler")
    ]
    if not ignored:
        return None
    for prof in cfg.profiles:
        entry = next((pc for pc in prof.plugin_config if pc.name == "NodeResourcesFit"), None)
        if entry is None or not isinstance(entry.args, dict):
            return "couldn't build extenders: can't find NodeResourcesFitArgs in plugin config"
        entry.args["ignoredResources"] = list(ignored)
    return None


def _extender(raw: dict[str, Any]) -> Extender:
    timeout = raw.get("httpTimeout") or 0
    return Extender(
        url_prefix=raw.get("urlPrefix", ""),
        filter_verb=raw.get("filterVerb", ""),
        preempt_verb=raw.get("preemptVerb", ""),
        prioritize_verb=raw.get("prioritizeVerb", ""),
        bind_verb=raw.get("bindVerb", ""),
        weight=raw.get("weight", 0),
        enable_https=raw.get("enableHTTPS", False),
        http_timeout_seconds=timeout / 1e9 if timeout else _DEFAULT_EXTENDER_TIMEOUT_SECONDS,
        node_cache_capable=raw.get("nodeCacheCapable", False),
        managed_resources=[dict(m) for m in raw.get("managedResources") or []],
        ignorable=raw.get("ignorable", False),
    )


def _out_of_tree_args(
    p: DefaultedProfile, plugin_config: dict[str, BaseModel | dict[str, Any]], registry: Registry, source: str | None
) -> None:
    """Validate (and default) the args of the profile's enabled out-of-tree plugins with their ARGS_MODEL,
    failing as kube-scheduler does when a plugin's constructor rejects its args."""
    from kschedctl.framework.registry import plugin_args

    for name in plugins_needed(p):
        entry = registry.get(name)
        if entry is None or entry.source == "in-tree" or entry.args_model is None:
            continue
        try:
            plugin_config[name] = plugin_args(entry, plugin_config.get(name))
        except ValueError as e:
            raise _fail(source, _init_failure(p, name, str(e))) from None


def _user_index(doc: dict[str, Any] | None, i: int, ep: str, name: str) -> str:
    """Where the user's file enables ``name`` at ``ep`` (``profiles[0].plugins.score.enabled[1]``)."""
    base = f"profiles[{i}].plugins.{ep}.enabled"
    try:
        enabled = doc["profiles"][i]["plugins"][ep]["enabled"]  # type: ignore[index]
        j = [e.get("name") for e in enabled].index(name)
    except (KeyError, IndexError, TypeError, ValueError, AttributeError):
        return base
    return f"{base}[{j}].name"


def _check_plugins_exist(
    p: DefaultedProfile, i: int, registry: Registry, source: str | None, doc: dict[str, Any] | None, minor: int
) -> None:
    """kube-scheduler's "<Interface> "<name>" does not exist", naming the field and what to do about it.

    Go checks the explicit extension points first, in the framework's order, then MultiPoint
    (reported under the first extension point it expands into).
    """
    import difflib

    candidates = [(ep, iface) for ep, iface in EXTENSION_INTERFACES] + [("multiPoint", "PreFilterPlugin")]
    for ep, iface in candidates:
        for ref in p.plugins.sets[ep].enabled:
            if ref.name in registry:
                continue
            close = difflib.get_close_matches(ref.name, registry.names(), n=1, cutoff=0.75)
            hint = f'did you mean "{close[0]}"? If' if close else "if"
            raise _fail(
                source,
                f'{iface} "{ref.name}" does not exist: it is not a kube-scheduler v1.{minor} plugin and no out-of-tree plugin '
                f"of that name is registered; {hint} it is an out-of-tree plugin, install the distribution that provides "
                "it (entry-point group kschedctl.plugins) or pass --plugin-module pkg.module (or path/to/plugin.py)",
                _user_index(doc, i, ep, ref.name),
            )


def _check_plugins_unique(
    p: DefaultedProfile, i: int, registry: Registry, source: str | None, doc: dict[str, Any] | None
) -> None:
    """The framework's "plugin ... already registered as ..." for a plugin enabled twice at one extension
    point, naming the second entry. Go checks the extension points in the framework's order and stops at
    a plugin that does not extend its point (left to the framework to report, as it words it)."""
    from kschedctl.framework.interfaces import implements

    for ep, iface in EXTENSION_INTERFACES:
        seen: set[str] = set()
        for ref in p.plugins.sets[ep].enabled:
            entry = registry.get(ref.name)
            if entry is not None and isinstance(entry.factory, type) and not implements(entry.factory, ep):
                return
            if ref.name in seen:
                raise _fail(source, f'plugin "{ref.name}" already registered as "{iface}"', _second_entry(doc, i, ep, ref.name))
            seen.add(ref.name)


def _second_entry(doc: dict[str, Any] | None, i: int, ep: str, name: str) -> str:
    """Where the user's file enables ``name`` at ``ep`` a second time (``profiles[0].plugins.score.enabled[1]``)."""
    base = f"profiles[{i}].plugins.{ep}.enabled"
    try:
        enabled = doc["profiles"][i]["plugins"][ep]["enabled"]  # type: ignore[index]
        j = [k for k, e in enumerate(enabled) if e.get("name") == name][1]
    except (KeyError, IndexError, TypeError, AttributeError):
        return base
    return f"{base}[{j}]"


def _build(
    cfg: DefaultedConfig,
    source: str | None,
    registry: Registry | None = None,
    doc: dict[str, Any] | None = None,
    features: Features = DEFAULT_FEATURES,
) -> SchedulerConfig:
    profiles = []
    for i, p in enumerate(cfg.profiles):
        plugin_config = _profile_args(p, source)
        if registry is not None:
            _out_of_tree_args(p, plugin_config, registry, source)
            _check_plugins_exist(p, i, registry, source, doc, features.minor)
            _check_plugins_unique(p, i, registry, source, doc)
        profiles.append(Profile(p.scheduler_name, p.plugins, plugin_config, p.percentage_of_nodes_to_score, features))
    return SchedulerConfig(
        profiles,
        percentage_of_nodes_to_score=cfg.percentage_of_nodes_to_score,
        parallelism=cfg.parallelism,
        extenders=[_extender(e) for e in cfg.extenders],
        source=source,
        features=features,
    )
