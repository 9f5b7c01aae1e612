"""The in-tree plugins of kube-scheduler v1.35, one module each.

Every plugin module exposes ``NAME`` and ``new(args, handle)``; this module only
maps names to modules, so importing kschedctl does not import every plugin.
``registry_for`` adds the out-of-tree plugins (installed entry points of the
group ``kschedctl.plugins`` and ``--plugin-module`` modules) to the in-tree ones.

Upstream model: ``pkg/scheduler/framework/plugins/registry.go``.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from typing import Any

from kschedctl.config.args import ARGS_MODELS
from kschedctl.framework.interfaces import Handle, Plugin
from kschedctl.framework.registry import Registry, load_entry_points, load_plugin_module

#: Plugin name -> module implementing it.
IN_TREE_MODULES: dict[str, str] = {
    "SchedulingGates": "kschedctl.plugins.schedulinggates",
    "PrioritySort": "kschedctl.plugins.queuesort",
    "NodeUnschedulable": "kschedctl.plugins.nodeunschedulable",
    "NodeName": "kschedctl.plugins.nodename",
    "TaintToleration": "kschedctl.plugins.tainttoleration",
    "NodeAffinity": "kschedctl.plugins.nodeaffinity",
    "NodePorts": "kschedctl.plugins.nodeports",
    "NodeResourcesFit": "kschedctl.plugins.noderesources.fit",
    "NodeResourcesBalancedAllocation": "kschedctl.plugins.noderesources.balanced_allocation",
    "ImageLocality": "kschedctl.plugins.imagelocality",
    "DefaultBinder": "kschedctl.plugins.defaultbinder",
    "VolumeRestrictions": "kschedctl.plugins.volumerestrictions",
    "NodeVolumeLimits": "kschedctl.plugins.nodevolumelimits",
    "VolumeBinding": "kschedctl.plugins.volumebinding.plugin",
    "VolumeZone": "kschedctl.plugins.volumezone",
    "PodTopologySpread": "kschedctl.plugins.podtopologyspread.plugin",
    "InterPodAffinity": "kschedctl.plugins.interpodaffinity.plugin",
    "DynamicResources": "kschedctl.plugins.dynamicresources.plugin",
    "DefaultPreemption": "kschedctl.plugins.defaultpreemption.plugin",
    # in the registry of v1.35 and v1.36 alike; it acts only with its gate on (v1.36's default)
    "NodeDeclaredFeatures": "kschedctl.plugins.nodedeclaredfeatures",
    # the pod-group plugins (alpha gates, off by default); only GangScheduling runs outside a
    # pod-group cycle, which kschedctl does not run yet (kschedctl.framework.podgroups)
    "GangScheduling": "kschedctl.plugins.gangscheduling",
    "TopologyPlacementGenerator": "kschedctl.plugins.topologyaware",
    "PodGroupPodsCount": "kschedctl.plugins.podgrouppodscount",
}


def _lazy_factory(module: str) -> Any:
    def factory(args: Any, handle: Handle) -> Plugin:
        mod = importlib.import_module(module)
        return mod.new(args, handle)

    return factory


def in_tree_registry() -> Registry:
    r = Registry()
    for name, module in IN_TREE_MODULES.items():
        r.register(name, _lazy_factory(module), source="in-tree", args_model=ARGS_MODELS.get(name), module=module)
    return r


def registry_for(plugin_modules: Iterable[str] = (), *, entry_points: bool = True) -> Registry:
    """The in-tree plugins, the installed entry-point plugins, then the ``--plugin-module`` ones."""
    r = in_tree_registry()
    if entry_points:
        load_entry_points(r)
    for module in plugin_modules:
        load_plugin_module(r, module)
    return r
