"""Plugin registry: plugin name -> factory(args, handle).

The in-tree registry is built in ``kschedctl.plugins``; out-of-tree plugins are
added to a copy of it (entry points or ``--plugin-module``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kschedctl.framework.interfaces import Handle, Plugin

PluginFactory = Callable[[Any, Handle], Plugin]


@dataclass(frozen=True)
class RegisteredPlugin:
    name: str
    factory: PluginFactory
    source: str = "in-tree"
    args_model: type | None = None


class Registry:
    def __init__(self) -> None:
        self._plugins: dict[str, RegisteredPlugin] = {}

    def register(
        self, name: str, factory: PluginFactory, *, source: str = "in-tree", args_model: type | None = None
    ) -> None:
        if name in self._plugins:
            raise ValueError(f"a plugin named {name!r} already exists")
        self._plugins[name] = RegisteredPlugin(name, factory, source, args_model)

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
