"""Plugin registry: plugin name -> factory(args, handle), plus the loaders for out-of-tree plugins.

The in-tree registry is built in ``kschedctl.plugins``; out-of-tree plugins are
added to a copy of it, exactly as kube-scheduler merges an out-of-tree registry
into its in-tree one. An out-of-tree plugin is a Python module (or any object)
with ``NAME``, ``new(args, handle)`` and optionally ``ARGS_MODEL`` (a pydantic
model for its ``pluginConfig`` args); it is found through the entry-point group
``kschedctl.plugins`` of installed distributions, or named on the command line
(``--plugin-module pkg.mod``). docs/plugin-api.md describes the contract.

Upstream model: ``pkg/scheduler/framework/runtime/registry.go``.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import inspect
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from kschedctl.errors import ConfigError
from kschedctl.framework.interfaces import Handle, Plugin, extension_points_of
from kschedctl.framework.watchdog import unwrapped, watched

PluginFactory = Callable[[Any, Handle], Plugin]

#: Entry-point group that installed distributions use to offer plugins.
ENTRY_POINT_GROUP = "kschedctl.plugins"


@dataclass(frozen=True)
class RegisteredPlugin:
    name: str
    factory: PluginFactory
    source: str = "in-tree"
    args_model: type | None = None
    #: The module implementing the plugin (shown by ``kschedctl plugins``).
    module: str = ""
    #: The file ``new`` was loaded from (out-of-tree plugins): where the code really came from.
    origin: str = ""
    #: Another way the same module was offered, e.g. an entry point also naming a ``--plugin-module``.
    also: str = ""
    #: An entry point's distribution metadata (its .dist-info or .egg-info directory).
    metadata: str = ""


class Registry:
    def __init__(self) -> None:
        self._plugins: dict[str, RegisteredPlugin] = {}

    def register(
        self,
        name: str,
        factory: PluginFactory,
        *,
        source: str = "in-tree",
        args_model: type | None = None,
        module: str = "",
        origin: str = "",
        metadata: str = "",
    ) -> None:
        if name in self._plugins:
            raise ValueError(f"a plugin named {name} already exists")
        self._plugins[name] = RegisteredPlugin(
            name, factory, source, args_model, module, origin=origin, metadata=metadata
        )

    def update(self, entry: RegisteredPlugin) -> None:
        """Replace the registration of ``entry.name`` (kept in its place in the listing)."""
        self._plugins[entry.name] = entry

    def get(self, name: str) -> RegisteredPlugin | None:
        return self._plugins.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self._plugins

    def names(self) -> list[str]:
        return list(self._plugins)

    def entries(self) -> list[RegisteredPlugin]:
        return list(self._plugins.values())

    def copy(self) -> Registry:
        r = Registry()
        r._plugins = dict(self._plugins)
        return r


# out-of-tree loading ----------------------------------------------------------------------------


#: Methods an extension point's interface requires beside the one that marks it (Go's compiler refuses a
#: plugin without them; kschedctl refuses it when it is loaded or built, never midway through a cycle).
REQUIRED_METHODS = {"pre_filter": ("pre_filter_extensions",), "score": ("score_extensions",), "reserve": ("unreserve",)}


def check_plugin(plugin: Any, name: str, module: str) -> None:
    """A plugin object (or class) keeps the contract: its ``name`` is the module's NAME, and each extension
    point it implements has every method the interface requires. Raises ConfigError naming both."""
    own = getattr(plugin, "name", None)
    if isinstance(own, str) and own != name:
        raise ConfigError(
            f'plugin module {module}: NAME is "{name}" but its plugin\'s name is "{own}": they must be the same '
            "(the configuration enables the plugin by NAME, statuses and traces name it by .name)"
        )
    for marker, required in REQUIRED_METHODS.items():
        if callable(getattr(plugin, marker, None)):
            for method in required:
                if not callable(getattr(plugin, method, None)):
                    raise ConfigError(
                        f'plugin module {module}: plugin "{name}" defines {marker} but not {method}, which its '
                        f"extension point requires (return None from it when there is nothing to add)"
                    )


def _factory_of(new: Callable[..., Any], name: str, module: str) -> PluginFactory:
    """The factory of an out-of-tree plugin: built by ``new``, checked, and behind its watchdog."""

    def factory(args: Any, handle: Handle) -> Plugin:
        plugin: Plugin = new(args, handle)
        check_plugin(plugin, name, module)
        out: Plugin = watched(plugin, name)
        return out

    return factory


def register_plugin_object(registry: Registry, obj: Any, *, source: str, module: str, metadata: str = "") -> str:
    """Register what a plugin module exposes (``NAME``, ``new``, optional ``ARGS_MODEL``); returns NAME.

    Registering the same module twice (an installed entry point also named with
    ``--plugin-module``) is harmless; a different plugin with a taken name is an error.
    """
    name = getattr(obj, "NAME", None)
    new = getattr(obj, "new", None)
    args_model = getattr(obj, "ARGS_MODEL", None)
    if not isinstance(name, str) or not name:
        raise ConfigError(f"plugin module {module}: NAME must be a non-empty string (the plugin's name)")
    if not callable(new):
        raise ConfigError(f"plugin module {module}: it must define new(args, handle) returning the plugin")
    if args_model is not None and not (isinstance(args_model, type) and issubclass(args_model, BaseModel)):
        raise ConfigError(f"plugin module {module}: ARGS_MODEL must be a pydantic BaseModel subclass")
    if isinstance(new, type):  # new is the plugin class: its contract can be checked before it is built
        check_plugin(new, name, module)
    existing = registry.get(name)
    if existing is not None:
        if existing.module == module and existing.source != "in-tree":
            if source.startswith(("module ", "file ")) and not existing.source.startswith(("module ", "file ")):
                # named with --plugin-module: that is how it is loaded, whatever metadata also offers it
                registry.update(replace(existing, source=source, also=existing.source))
            return name
        where = f" ({existing.source})" if existing.source else ""
        raise ConfigError(f"plugin module {module}: a plugin named {name} already exists{where}")
    registry.register(
        name,
        _factory_of(new, name, module),
        source=source,
        args_model=args_model,
        module=module,
        origin=source_file(new) or "",
        metadata=metadata,
    )
    return name


def source_file(obj: Any) -> str | None:
    """The file a class or function was defined in (None for builtins and the like)."""
    try:
        return inspect.getsourcefile(obj) or inspect.getfile(obj)
    except TypeError:
        return None


def _is_path(spec: str) -> bool:
    return spec.endswith(".py") or "/" in spec or os.sep in spec or (os.altsep or "/") in spec


def _module_name_of(path: Path) -> tuple[Path, str]:
    """The directory to put on ``sys.path`` and the dotted name a file or package directory imports as.

    A file inside packages (directories with ``__init__.py``) imports as a member of them, so its
    relative imports work: ``src/pkg/plugin.py`` -> (``src``, ``pkg.plugin``).
    """
    parts = [] if path.name == "__init__.py" else [path.stem if path.is_file() else path.name]
    root = path.parent
    while (root / "__init__.py").is_file():
        parts.insert(0, root.name)
        root = root.parent
    return root, ".".join(parts)


def _import_path(spec: str) -> tuple[Any, str]:
    """Import the plugin module at a file path (``path/to/plugin.py``) or package directory."""
    path = Path(spec).expanduser()
    if not path.exists():
        raise ConfigError(f"--plugin-module {spec}: no such file or directory")
    path = path.resolve()
    if path.is_dir() and not (path / "__init__.py").is_file():
        raise ConfigError(f"--plugin-module {spec}: a directory must be a Python package (with __init__.py)")
    if path.is_file() and path.suffix != ".py":
        raise ConfigError(f"--plugin-module {spec}: not a Python file (.py)")
    root, dotted = _module_name_of(path)
    loaded = sys.modules.get(dotted)
    origin = getattr(loaded, "__file__", None)
    target = path / "__init__.py" if path.is_dir() else path
    if loaded is not None and origin and Path(origin).resolve() != target:
        raise ConfigError(f"--plugin-module {spec}: a different module named {dotted} is already imported (from {origin})")
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    try:
        return importlib.import_module(dotted), dotted
    except Exception as e:  # whatever the module raised while importing
        raise ConfigError(f"--plugin-module {spec}: cannot import it: {type(e).__name__}: {e}") from e


def _split_object(spec: str) -> tuple[str, str | None]:
    """``pkg.mod:object`` (as an entry point names one) -> (``pkg.mod``, ``object``); without ``:`` no object."""
    head, sep, tail = spec.rpartition(":")
    if sep and head and tail and all(part.isidentifier() for part in tail.split(".")):
        return head, tail
    return spec, None


def _attribute(mod: Any, dotted: str, spec: str) -> Any:
    obj = mod
    for part in dotted.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise ConfigError(f"--plugin-module {spec}: {getattr(mod, '__name__', mod)} has no attribute {dotted}") from None
    return obj


def load_plugin_module(registry: Registry, spec: str) -> str:
    """``--plugin-module pkg.mod``, ``pkg.mod:object`` (as entry points name it), ``path/to/plugin.py`` or
    ``path/to/plugin.py:object``: import it, register the plugin it (or its object) exposes."""
    target, attr = _split_object(spec)
    if attr is not None:
        mod, dotted = _import_path(target) if _is_path(target) else (_import_module(target, spec), target)
        where = "file" if _is_path(target) else "module"
        return register_plugin_object(registry, _attribute(mod, attr, spec), source=f"{where} {spec}", module=dotted)
    if _is_path(spec):
        mod, dotted = _import_path(spec)
        return register_plugin_object(registry, mod, source=f"file {spec}", module=dotted)
    return register_plugin_object(registry, _import_module(spec, spec), source=f"module {spec}", module=spec)


def _import_module(name: str, spec: str) -> Any:
    """``importlib.import_module(name)``, a failure a one-line ConfigError naming ``spec``."""
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as e:
        if e.name is not None and name.startswith(e.name):
            raise ConfigError(
                f"--plugin-module {spec}: no module named {e.name!r} on the Python path: give a module installed "
                "or on PYTHONPATH (pkg.module), or the path of its file (path/to/plugin.py)"
            ) from e
        raise ConfigError(f"--plugin-module {spec}: cannot import it: {type(e).__name__}: {e}") from e
    except Exception as e:  # whatever the module raised while importing
        raise ConfigError(f"--plugin-module {spec}: cannot import it: {type(e).__name__}: {e}") from e


def load_entry_points(registry: Registry, group: str = ENTRY_POINT_GROUP) -> list[str]:
    """Register the plugins that installed distributions offer in the entry-point group; returns their names."""
    names: list[str] = []
    for ep in sorted(importlib.metadata.entry_points(group=group), key=lambda e: (e.name, e.value)):
        dist = getattr(ep, "dist", None)
        dist_name = f"{dist.name} {dist.version}" if dist is not None else "?"
        try:
            obj = ep.load()
        except Exception as e:
            raise ConfigError(
                f"entry point {ep.name} = {ep.value} (group {group}, distribution {dist_name}): "
                f"cannot load it: {type(e).__name__}: {e}"
            ) from e
        module = ep.value.split(":", 1)[0].strip()
        metadata = getattr(dist, "_path", None)  # the .dist-info/.egg-info directory; no public accessor
        names.append(
            register_plugin_object(
                registry, obj, source=f"entry point {dist_name}", module=module, metadata=str(metadata or "")
            )
        )
    return names


# args ------------------------------------------------------------------------------------------------


def plugin_args(entry: RegisteredPlugin, raw: Any) -> Any:
    """An out-of-tree plugin's args as an instance of its ``ARGS_MODEL`` (validated; None means defaults).

    In-tree plugins, plugins without a model and args that already are model instances pass
    through unchanged. ``kind``/``apiVersion`` are dropped unless the model declares them.
    Raises ValueError with a one-line message naming the offending fields.
    """
    model = entry.args_model
    if model is None or entry.source == "in-tree" or not issubclass(model, BaseModel) or isinstance(raw, model):
        return raw
    data = {} if raw is None else raw
    if isinstance(data, dict):
        declared = set(model.model_fields) | {f.alias for f in model.model_fields.values() if f.alias}
        data = {k: v for k, v in data.items() if k not in ("kind", "apiVersion") or k in declared}
    try:
        return model.model_validate(data)
    except ValidationError as e:
        raise ValueError(args_problems(e)) from None


def args_problems(e: ValidationError) -> str:
    """A validation error of args as one line naming the offending fields (``args.labl: Extra inputs ...``)."""
    problems = []
    for err in e.errors():
        loc = ".".join(str(p) for p in err.get("loc", ()))
        problems.append(f"args.{loc}: {err['msg']}" if loc else f"args: {err['msg']}")
    return "; ".join(problems)


# introspection ------------------------------------------------------------------------------------


def default_args(entry: RegisteredPlugin) -> Any:
    """What a plugin gets without ``pluginConfig``: its args model's defaults, or None."""
    model = entry.args_model
    if model is not None and issubclass(model, BaseModel):
        try:
            return model.model_validate({})
        except ValidationError:
            return None
    return None


def probe(entry: RegisteredPlugin, handle: Handle) -> tuple[list[str], str | None]:
    """Build the plugin once (default args): the extension points its methods implement, and the
    file its class was loaded from (what ran, whatever metadata or option named the module)."""
    plugin = unwrapped(entry.factory(default_args(entry), handle))
    cls = type(plugin)
    where = source_file(cls) if cls.__module__ not in ("builtins", "types") else None
    return extension_points_of(plugin, handle.features), where or entry.origin or None
