"""``kschedctl plugins``: every plugin kschedctl can run, where it comes from and what it implements.

The listing is the registry the other commands use (in-tree plugins, installed
entry points of the group ``kschedctl.plugins``, ``--plugin-module`` modules). Each
plugin is built once with its default args over an empty cluster to read its
extension points from the methods it defines, as the runtime does. ``cli.main`` registers
the command.
"""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any

import typer

from kschedctl.cli.common import EXIT_OK, guarded, stdout_console
from kschedctl.cli.options import FeatureGatesOpt, KubeVersionOpt, VersionOptions
from kschedctl.cli.plugin_opts import PluginModuleOpt, build_registry

if TYPE_CHECKING:
    from kschedctl.framework.registry import RegisteredPlugin
    from kschedctl.kube.features import Features


class PluginsOutput(StrEnum):
    table = "table"
    json = "json"
    yaml = "yaml"
    markdown = "markdown"


def describe(entry: RegisteredPlugin) -> dict[str, Any]:
    """One row of the listing. ``file`` is where the plugin's class was actually loaded from;
    ``alsoOfferedBy`` an entry point naming a module that ``--plugin-module`` named too;
    ``metadata`` the entry point's distribution metadata (a stale ``*.egg-info`` left in a source
    tree after ``pip uninstall`` shows here)."""
    from kschedctl.framework.registry import probe
    from kschedctl.plugins import bare_framework

    row: dict[str, Any] = {"name": entry.name, "source": entry.source, "module": entry.module}
    try:  # over an empty cluster: enough to build a plugin and look at its methods
        row["extensionPoints"], row["file"] = probe(entry, bare_framework())
    except Exception as e:  # a plugin that cannot be built without a real cluster or args
        row["extensionPoints"] = None
        row["file"] = entry.origin or None
        row["error"] = f"cannot be built with default args: {type(e).__name__}: {e}"
    row["alsoOfferedBy"] = entry.also or None
    row["metadata"] = entry.metadata or None
    model = entry.args_model
    row["argsModel"] = f"{model.__module__}.{model.__qualname__}" if model is not None else None
    return row


def plugins_cmd(
    plugin_module: PluginModuleOpt = None,
    output: Annotated[PluginsOutput, typer.Option("--output", "-o", metavar="FORMAT", help="table, json, yaml or markdown.")] = PluginsOutput.table,
    kube_version: KubeVersionOpt = None,
    feature_gates: FeatureGatesOpt = None,
) -> None:
    """List every registered plugin: name, source (in-tree, entry point <distribution>, module), extension
    points and args model. Out-of-tree plugins are enabled and configured only in the KubeSchedulerConfiguration.

    With --kube-version or --feature-gates, also whether that version's default profile enables each
    plugin, and with which Score weight ("default" column, ``defaultProfile`` in JSON/YAML).

    Exit status: 0, or 2 when a plugin module cannot be loaded.
    """

    def body() -> int:
        rows = [describe(e) for e in build_registry(plugin_module).entries()]
        from kschedctl.render.data import emit

        if kube_version is not None or feature_gates is not None:
            add_defaults(rows, VersionOptions(kube_version, feature_gates).features())

        emit(rows, output.value, table=_table, markdown=_markdown)
        return EXIT_OK

    guarded(body)


def add_defaults(rows: list[dict[str, Any]], features: Features) -> None:
    """Each row's place in ``features``' default profile: "on (weight N)", "on" or "off"."""
    from kschedctl.config import default_config

    enabled = {r.name: r.weight for s in default_config(features).profiles[0].plugins.sets.values() for r in s.enabled}
    for row in rows:
        weight = enabled.get(row["name"])
        shown = "off" if row["name"] not in enabled else f"on (weight {weight})" if weight else "on"
        row["defaultProfile"] = {"kubeVersion": features.release, "enabled": shown}


HEADERS = ("name", "source", "extension points", "args model", "loaded from")


def _cells(r: dict[str, Any]) -> list[str]:
    eps = r["extensionPoints"]
    return [
        r["name"],
        r["source"] + (f" (also {r['alsoOfferedBy']})" if r.get("alsoOfferedBy") else ""),
        ", ".join(eps) if eps is not None else f"? ({r.get('error', '')})",
        (r["argsModel"] or "-").rsplit(".", 1)[-1],
        "-" if r["source"] == "in-tree" else _shown_path(r.get("file")),
        *([r["defaultProfile"]["enabled"]] if "defaultProfile" in r else []),
    ]


def _table(rows: list[dict[str, Any]]) -> None:
    from kschedctl.render.layout import Column, print_table

    cols = [
        Column("name", keep=True),
        Column("source", keep=True),
        Column("extension points", min_width=16),
        Column("args model", keep=True),
        Column("loaded from", keep=True),
    ]
    title = "Plugins"
    if rows and "defaultProfile" in rows[0]:
        cols.append(Column("default", keep=True))
        title += f" (default profile of kube-scheduler {rows[0]['defaultProfile']['kubeVersion']})"
    print_table(stdout_console(), title, cols, [_cells(r) for r in rows])


def _markdown(rows: list[dict[str, Any]]) -> str:
    from tabulate import tabulate

    headers = list(HEADERS) + (["default"] if rows and "defaultProfile" in rows[0] else [])
    body = tabulate([[f"`{c[0]}`", *c[1:]] for c in map(_cells, rows)], headers=headers, tablefmt="github")
    return f"### kschedctl plugins\n\n{body}\n"


def _shown_path(path: str | None) -> str:
    """A file under the working directory relative to it, others as they are."""
    import os

    if not path:
        return "?"
    rel = os.path.relpath(path)
    return rel if not rel.startswith("..") else path
