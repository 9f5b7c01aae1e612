"""The ``--plugin-module`` option and the plugin registry a command runs with.

Every command that reads a KubeSchedulerConfiguration or lists plugins (``explain pod``,
``explain pending``, ``check``, ``diff-profiles``, ``simulate``, ``plugins``) takes
``--plugin-module`` and builds its registry with ``build_registry``, the one way: the
in-tree plugins, the plugins installed distributions offer in the entry-point group
``kschedctl.plugins``, then the modules named with ``--plugin-module``. The command then
hands that registry to everything that reads the configuration or builds a Framework, so a
configuration naming an out-of-tree plugin runs the same in every command
(tests/test_plugin_commands.py checks each one). Declared here, apart from ``common.py``, so that
any command module can import it without an import cycle; this module imports only typer.
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
