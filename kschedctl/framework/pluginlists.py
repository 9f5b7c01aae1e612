"""A profile's plugins, built from the registry and sorted into typed lists per extension point.

This follows how kube-scheduler's ``frameworkImpl`` is built: explicit extension-point lists
first, then MultiPoint expansion with its precedence rules; one queue-sort plugin; at least one
bind plugin; score weights from the Score list, then MultiPoint, 1 when unset (and, from v1.36,
at most one placement generator and the PlacementScore weights, checked apart from the Score ones).

The lists are typed by extension point (``filter_plugins: list[FilterPlugin]``, ...), and which
plugins also implement the optional batch protocols of ``framework/interfaces.py``
(``filter_nodes``, ``score_nodes``, ``normalize_scores``) is decided here, once, when the profile is
built (``filter_paths``, ``score_paths``); the runners of the extension points
(``framework/filtering.py``, ``framework/scoring.py``) take those paths.

Upstream model: ``pkg/scheduler/framework/runtime/framework.go`` (``NewFramework``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import cast

from kschedctl.errors import ConfigError
from kschedctl.framework.cycle_state import CycleState
from kschedctl.framework.interfaces import (
    NOT_REPRODUCED_AT,
    BatchFilterPlugin,
    BatchScoreExtensions,
    BatchScorePlugin,
    BindPlugin,
    FilterPlugin,
    Handle,
    PermitPlugin,
    Plugin,
    PostBindPlugin,
    PostFilterPlugin,
    PreBindPlugin,
    PreEnqueuePlugin,
    PreFilterPlugin,
    PreScorePlugin,
    QueueSortPlugin,
    ReservePlugin,
    ScorePlugin,
    implements,
    point_exists,
)
from kschedctl.framework.profile import EXTENSION_INTERFACES, Profile
from kschedctl.framework.registry import Registry, plugin_args
from kschedctl.framework.status import MAX_NODE_SCORE, MAX_TOTAL_SCORE, Status, quote_name
from kschedctl.framework.types import NodeInfo
from kschedctl.kube.rules import POD_GROUP_CYCLE
from kschedctl.snapshot.model import Pod

#: A Filter plugin's whole-list filter: ``BatchFilterPlugin.filter_nodes``.
FilterNodes = Callable[[CycleState, Pod, list[NodeInfo]], list[Status | None]]


@dataclass(frozen=True, slots=True)
class ScorePath:
    """How the whole-list Score path runs one Score plugin, decided when the profile's plugins are built."""

    plugin: ScorePlugin
    #: ``BatchScorePlugin.score_nodes``, or None: ``score`` node by node.
    score_nodes: Callable[[CycleState, Pod, list[NodeInfo]], tuple[list[int], Status]] | None
    #: The plugin's ScoreExtensions when it normalizes plain lists (``BatchScoreExtensions``); used
    #: while ``score_extensions()`` still returns that object, else ``normalize_score`` on NodeScores.
    batch_ext: BatchScoreExtensions | None


def _batch_extensions(pl: ScorePlugin) -> BatchScoreExtensions | None:
    try:
        ext = pl.score_extensions()
    except Exception:  # the per-node path reports it when a cycle calls it
        return None
    return ext if isinstance(ext, BatchScoreExtensions) else None


class PluginLists:
    """A profile's plugins by name and by extension point, with their score weights and batch paths."""

    def __init__(self, profile: Profile, registry: Registry, handle: Handle) -> None:
        """Build every plugin the profile enables (each gets ``handle``); a ConfigError when the profile
        names a plugin that does not exist or does not fit where it is named, or is incomplete."""
        self.profile = profile
        self.profile_name = profile.scheduler_name
        self.features = profile.features
        #: The plugins by name (upstream's ``pluginsMap``).
        self.by_name: dict[str, Plugin] = {}
        #: The plugins that come with kschedctl (``framework.failures.PluginFailure.in_tree``).
        self.in_tree: frozenset[str] = frozenset()
        self._build(registry, handle)
        self.lists: dict[str, list[Plugin]] = self._sort_into_lists()
        self.score_weights: dict[str, int] = self._score_weights()
        self._type_lists()
        self.placement_score_weights = self._placement_score_weights() if self.features.follows(POD_GROUP_CYCLE) else {}

    def _build(self, registry: Registry, handle: Handle) -> None:
        """Each plugin the profile enables somewhere, once, in the order the profile first names it."""
        needed: list[str] = []
        for ps in self.profile.plugins.sets.values():
            for ref in ps.enabled:
                if ref.name not in needed:
                    needed.append(ref.name)
        in_tree: set[str] = set()
        for name in needed:
            entry = registry.get(name)
            if entry is None:
                continue  # reported by _sort_into_lists as "does not exist" where it is used
            if entry.source == "in-tree":
                in_tree.add(name)
            try:  # an out-of-tree plugin gets its own args model (in-tree args pass through)
                args = plugin_args(entry, self.profile.args(name))
            except ValueError as e:
                raise ConfigError(f"initializing plugin {quote_name(name)}: {e}") from None
            try:
                self.by_name[name] = entry.factory(args, handle)
            except ConfigError:
                raise
            except Exception as e:  # a plugin that cannot be built is a configuration problem
                raise ConfigError(f"initializing plugin {quote_name(name)}: {e}") from e
        self.in_tree = frozenset(in_tree)

    def _sort_into_lists(self) -> dict[str, list[Plugin]]:
        """The plugins of each extension point: its explicit list, then MultiPoint's; one QueueSort
        plugin and at least one Bind plugin."""
        lists: dict[str, list[Plugin]] = {ep: [] for ep, _ in EXTENSION_INTERFACES}
        # the placement extension points exist from v1.36, podGroupPostFilter from v1.37
        # (getExtensionPoints lists them last)
        interfaces = [(ep, i) for ep, i in EXTENSION_INTERFACES if point_exists(ep, self.features)]
        for ep, iface in interfaces:
            lists[ep] = self._explicit_list(ep, iface)
        if self.profile.plugins["multiPoint"].enabled:
            for ep, iface in interfaces:
                lists[ep] = self._expand_multipoint(ep, iface, lists[ep])
        if len(lists["queueSort"]) != 1:
            raise ConfigError(
                f"only one queue sort plugin required for profile with scheduler name {quote_name(self.profile_name)}, "
                f"but got {len(lists['queueSort'])}"
            )
        if not lists["bind"]:
            raise ConfigError(
                f"at least one bind plugin is needed for profile with scheduler name {quote_name(self.profile_name)}"
            )
        return lists

    def _explicit_list(self, ep: str, iface: str) -> list[Plugin]:
        out: list[Plugin] = []
        seen: set[str] = set()
        for ref in self.profile.plugins[ep].enabled:
            pl = self.by_name.get(ref.name)
            if pl is None:
                raise ConfigError(f"{iface} {quote_name(ref.name)} does not exist")
            if not implements(pl, ep) and ref.name in NOT_REPRODUCED_AT.get(ep, ()) and ref.name in self.in_tree:
                raise ConfigError(f"plugin {quote_name(ref.name)} extends {iface} in kube-scheduler {self.features.release}, "
                                  f"but kschedctl does not reproduce what it does there: remove it from {ep}")
            if not implements(pl, ep):
                raise ConfigError(f"plugin {quote_name(ref.name)} does not extend {iface} plugin")
            if ref.name in seen:
                raise ConfigError(f"plugin {quote_name(ref.name)} already registered as {quote_name(iface)}")
            seen.add(ref.name)
            out.append(pl)
        return out

    def _expand_multipoint(self, ep: str, iface: str, current: list[Plugin]) -> list[Plugin]:
        """The extension point's list with MultiPoint's plugins: those the point also names explicitly
        first, then the others of MultiPoint, then the rest of the explicit list."""
        ps = self.profile.plugins[ep]
        enabled = [r.name for r in ps.enabled]
        disabled = set(ps.disabled)
        if "*" in disabled:
            return current
        multipoint: list[str] = []
        overrides: list[str] = []
        for ref in self.profile.plugins["multiPoint"].enabled:
            pl = self.by_name.get(ref.name)
            if pl is None:
                raise ConfigError(f"{iface} {quote_name(ref.name)} does not exist")
            if not implements(pl, ep) or ref.name in disabled:
                continue
            if ref.name in enabled:
                if ref.name not in overrides:
                    overrides.append(ref.name)
                continue
            if ref.name in multipoint:
                raise ConfigError(f"plugin {quote_name(ref.name)} already registered as {quote_name(iface)}")
            multipoint.append(ref.name)
        ordered = [n for n in enabled if n in overrides]
        ordered += multipoint
        ordered += [n for n in enabled if n not in overrides]
        return [self.by_name[n] for n in ordered]

    def _score_weights(self) -> dict[str, int]:
        """The Score weights: the Score list's, then MultiPoint's, 1 when unset; their total must not overflow."""
        return self._weights("score", "", "score plugin")

    def _placement_score_weights(self) -> dict[str, int]:
        """v1.36's checks of the pod-group extension points: one generator at most, and the
        PlacementScore weights (validated apart from the Score ones)."""
        if len(self.lists["placementGenerate"]) > 1:
            raise ConfigError(
                "at most one placement generate plugin is allowed for profile with scheduler name "
                f"{quote_name(self.profile_name)}"
            )
        return self._weights("placementScore", "placement score plugins: ", "placement score plugin")

    def _weights(self, point: str, overflow_prefix: str, noun: str) -> dict[str, int]:
        """The weights of ``point``'s plugins: its own list's, then MultiPoint's (the first mention
        wins), 1 when unset; refused when their total could overflow or a plugin in use has none."""
        plugins = self.profile.plugins
        weights: dict[str, int] = {}
        total = 0
        for ref in plugins[point].enabled + plugins["multiPoint"].enabled:
            pl = self.by_name.get(ref.name)
            if pl is None or not implements(pl, point) or ref.name in weights:
                continue
            weights[ref.name] = w = ref.weight or 1
            if w * MAX_NODE_SCORE > MAX_TOTAL_SCORE - total:
                raise ConfigError(f"{overflow_prefix}total score of Score plugins could overflow")
            total += w * MAX_NODE_SCORE
        for pl in self.lists[point]:
            if weights.get(pl.name, 0) == 0:
                raise ConfigError(f"{noun} {quote_name(pl.name)} is not configured with weight")
        return weights

    def _type_lists(self) -> None:
        """The lists by extension point, typed (each holds only plugins that implement its method,
        checked by ``_explicit_list`` / ``_expand_multipoint``), and the path each Filter and Score
        plugin takes on the fast path: decided here, once per plugin."""
        lists = self.lists
        self.pre_enqueue_plugins = cast("list[PreEnqueuePlugin]", lists["preEnqueue"])
        self.queue_sort_plugins = cast("list[QueueSortPlugin]", lists["queueSort"])
        self.pre_filter_plugins = cast("list[PreFilterPlugin]", lists["preFilter"])
        self.filter_plugins = cast("list[FilterPlugin]", lists["filter"])
        self.post_filter_plugins = cast("list[PostFilterPlugin]", lists["postFilter"])
        self.pre_score_plugins = cast("list[PreScorePlugin]", lists["preScore"])
        self.score_plugins = cast("list[ScorePlugin]", lists["score"])
        self.reserve_plugins = cast("list[ReservePlugin]", lists["reserve"])
        self.permit_plugins = cast("list[PermitPlugin]", lists["permit"])
        self.pre_bind_plugins = cast("list[PreBindPlugin]", lists["preBind"])
        self.bind_plugins = cast("list[BindPlugin]", lists["bind"])
        self.post_bind_plugins = cast("list[PostBindPlugin]", lists["postBind"])
        #: Filter plugins with their ``filter_nodes`` (None: ``filter`` node by node).
        self.filter_paths: list[tuple[FilterPlugin, FilterNodes | None]] = [
            (pl, pl.filter_nodes if isinstance(pl, BatchFilterPlugin) else None) for pl in self.filter_plugins
        ]
        #: The Filter plugins without ``filter_nodes``.
        self.unbatched_filters = frozenset(pl.name for pl, batch in self.filter_paths if batch is None)
        self.score_paths: list[ScorePath] = [
            ScorePath(pl, pl.score_nodes if isinstance(pl, BatchScorePlugin) else None, _batch_extensions(pl))
            for pl in self.score_plugins
        ]

    # what the profile has (``ListPlugins``, ``HasFilterPlugins``, ...) ----------------------
    def names(self, ep: str) -> list[str]:
        """The names of the plugins at extension point ``ep``, in the order they run."""
        return [p.name for p in self.lists[ep]]

    def has_filter_plugins(self) -> bool:
        return bool(self.lists["filter"])

    def has_score_plugins(self) -> bool:
        return bool(self.lists["score"])

    def has_post_filter_plugins(self) -> bool:
        return bool(self.lists["postFilter"])
