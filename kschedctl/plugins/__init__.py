"""The in-tree plugins of kube-scheduler v1.33 to v1.36, and the registry that names them.

Every plugin has one shape. Its plugin module holds the plugin class, ``NAME``, ``ARGS_MODEL``
when it takes args (the model of ``kschedctl.config.args`` that configuration decodes its
``pluginConfig`` into) and ``new(args: <ArgsModel> | None, handle: Handle) -> <Plugin>``; a plugin
without args takes ``args: None``. A plugin of one module is ``plugins/<name>.py``; a plugin of
several is the package ``plugins/<name>/``, whose ``plugin.py`` is its plugin module and whose
``__init__.py`` holds only the package docstring. ``noderesources`` is the one package of two
plugins (NodeResourcesFit and NodeResourcesBalancedAllocation share its scorer): each has its
plugin module there, ``fit.py`` and ``balanced_allocation.py``.

This module only maps names to where plugins live, so importing kschedctl does not import every
plugin. ``registry_for`` adds the out-of-tree plugins (installed entry points of the group
``kschedctl.plugins`` and ``--plugin-module`` modules) to the in-tree ones. ``bare_framework`` is
the runtime's Framework with no plugins of its own: the Handle to build one plugin with by itself
(``kschedctl plugins`` probes every plugin over it; ``kschedctl.testing.SnapshotHandle`` is it).

Upstream model: ``pkg/scheduler/framework/plugins/registry.go``.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from types import ModuleType
from typing import TYPE_CHECKING, Any

from kschedctl.config.args import ARGS_MODELS
from kschedctl.framework.interfaces import Handle, Plugin
from kschedctl.framework.registry import PluginFactory, Registry, load_entry_points, load_plugin_module
from kschedctl.kube.features import Features
from kschedctl.kube.versions import DEFAULT_FEATURES

if TYPE_CHECKING:
    from kschedctl.framework.nodeinfos import Snapshot
    from kschedctl.framework.runtime import Framework

#: Plugin name -> where it lives: its module, or its package (whose plugin module is ``plugin``).
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
    "VolumeBinding": "kschedctl.plugins.volumebinding",
    "VolumeZone": "kschedctl.plugins.volumezone",
    "PodTopologySpread": "kschedctl.plugins.podtopologyspread",
    "InterPodAffinity": "kschedctl.plugins.interpodaffinity",
    "DynamicResources": "kschedctl.plugins.dynamicresources",
    "DefaultPreemption": "kschedctl.plugins.defaultpreemption",
    # in the registry of v1.35 and v1.36 alike; it acts only with its gate on (v1.36's default)
    "NodeDeclaredFeatures": "kschedctl.plugins.nodedeclaredfeatures",
    # the pod-group plugins (alpha gates, off by default); only GangScheduling runs outside a
    # pod-group cycle, which kschedctl does not run yet (kschedctl.framework.podgroups)
    "GangScheduling": "kschedctl.plugins.gangscheduling",
    "TopologyPlacementGenerator": "kschedctl.plugins.topologyaware",
    "PodGroupPodsCount": "kschedctl.plugins.podgrouppodscount",
}


def _lazy_factory(module: str, takes_args: bool) -> PluginFactory:
    """The factory of an in-tree plugin: imports its module when the plugin is first built. A plugin
    without args gets None, whatever a ``pluginConfig`` entry gives it (kube-scheduler's ignore theirs)."""

    def factory(args: Any, handle: Handle) -> Plugin:
        plugin: Plugin = plugin_module(module).new(args if takes_args else None, handle)
        return plugin

    return factory


def plugin_module(name: str) -> ModuleType:
    """The plugin module of the in-tree plugin at ``name`` (an ``IN_TREE_MODULES`` value): the module
    itself, or the ``plugin`` module of a package."""
    mod = importlib.import_module(name)
    return importlib.import_module(f"{name}.plugin") if hasattr(mod, "__path__") else mod


def in_tree_registry() -> Registry:
    r = Registry()
    for name, module in IN_TREE_MODULES.items():
        model = ARGS_MODELS.get(name)
        r.register(name, _lazy_factory(module, model is not None), source="in-tree", args_model=model, module=module)
    return r


def registry_for(plugin_modules: Iterable[str] = (), *, entry_points: bool = True) -> Registry:
    """The in-tree plugins, the installed entry-point plugins, then the ``--plugin-module`` ones."""
    r = in_tree_registry()
    if entry_points:
        load_entry_points(r)
    for module in plugin_modules:
        load_plugin_module(r, module)
    return r


def bare_framework(snapshot: Snapshot | None = None, features: Features = DEFAULT_FEATURES) -> Framework:
    """The runtime's Framework (the ``Handle`` plugins get) over ``snapshot`` (an empty cluster by default)
    with no plugins but the queue-sort and bind plugins every profile needs (PrioritySort, DefaultBinder):
    a Handle to build one plugin with by itself, as ``kschedctl plugins`` and ``kschedctl.testing`` do.
    Its ``run_*`` calls run no Filter or PreFilter plugin (they return Success), and plugins built over
    it take the reference paths, not the snapshot's indexes (``fast_paths`` off)."""
    # imported here: loading a plugin module (this package first) does not load the runtime
    from kschedctl.framework.nodeinfos import Snapshot
    from kschedctl.framework.profile import PluginRef, Plugins, Profile
    from kschedctl.framework.runtime import Framework
    from kschedctl.snapshot.cluster import Cluster

    plugins = Plugins()
    plugins["queueSort"].enabled = [PluginRef("PrioritySort")]
    plugins["bind"].enabled = [PluginRef("DefaultBinder")]
    profile = Profile("default-scheduler", plugins, features=features)
    over = snapshot if snapshot is not None else Snapshot(Cluster(), features=features)
    return Framework(profile, in_tree_registry(), over, fast_paths=False)
