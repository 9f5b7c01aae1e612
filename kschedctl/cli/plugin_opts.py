"""The ``--plugin-module`` option and the plugin registry a command runs with.

Every command that runs scheduling cycles (``explain pod``, ``check``, ``plugins``...)
builds the same registry: the in-tree plugins, the plugins installed distributions
offer in the entry-point group ``kschedctl.plugins``, then the modules named with
``--plugin-module``. Declared here, apart from ``app.py``, so that any command module
can import it without an import cycle; this module imports only typer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from kschedctl.framework.registry import Registry

PluginModuleOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--plugin-module",
        metavar="MODULE",
        help="Import an out-of-tree plugin module (pkg.mod exposing NAME and new(args, handle)). Repeatable. "
        "Installed plugins (entry-point group kschedctl.plugins) are loaded without it.",
    ),
]


def build_registry(plugin_modules: list[str] | None) -> Registry:
    """In-tree + entry-point plugins + ``--plugin-module`` ones (a bad module is a one-line error, exit 2)."""
    from kschedctl.plugins import registry_for

    return registry_for(plugin_modules or ())
