"""The drain options of ``kschedctl simulate`` (``--drain``, ``--scale-down`` and kubectl drain's flags).

The command stays ``simulate`` (a drain is a simulation of the pods it evicts); this module holds
the options only the drain reads, as named types, and ``DrainArgs``, which checks them and turns
them into the request of ``usecases.drain``. Like ``options`` and ``plugin_opts`` it is a shared
CLI module, not a command: ``cli.simulate`` runs the drain and shows its result.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated

import typer

from kschedctl.errors import UsageError

if TYPE_CHECKING:
    from kschedctl.config.types import SchedulerConfig
    from kschedctl.framework.registry import Registry
    from kschedctl.snapshot.cluster import Cluster
    from kschedctl.snapshot.nodeorder import NodeOrderSpec
    from kschedctl.usecases.drain import DrainRequest
    from kschedctl.whatif.placements import RunOptions

DrainOpt = Annotated[
    list[str],
    typer.Option("--drain", metavar="NODE", help="Drain this node (repeatable): cordon it, evict its pods as kubectl drain does, "
                 "place their replacements."),
]
DrainSelectorOpt = Annotated[
    str | None, typer.Option("--drain-selector", metavar="SELECTOR", help="Drain every node matching this label selector.")
]
IgnoreDaemonsetsOpt = Annotated[
    bool, typer.Option("--ignore-daemonsets", help="Accepted as kubectl drain's; implied: DaemonSet pods always stay.")
]
DeleteEmptydirOpt = Annotated[
    bool, typer.Option("--delete-emptydir-data", help="As kubectl drain's: evict pods with emptyDir data (else refused).")
]
ForceOpt = Annotated[bool, typer.Option("--force", help="As kubectl drain's: evict pods without a controller (they are lost).")]
DisableEvictionOpt = Annotated[
    bool,
    typer.Option("--disable-eviction", help="As kubectl drain's: delete instead of evicting, so no PodDisruptionBudget is consulted."),
]
ScaleDownOpt = Annotated[
    str | None,
    typer.Option("--scale-down", metavar="SELECTOR", help="Remove this group's nodes one at a time, least requested first, "
                 "until one's pods do not all fit."),
]
DrainTimeoutOpt = Annotated[
    str | None,
    typer.Option("--timeout", metavar="DURATION", help="As kubectl drain's: how long it retries the evictions budgets refuse "
                 "(one round per 5s retry; 0s, the default: forever)."),
]
CountOpt = Annotated[int, typer.Option("--count", min=0, metavar="N", help="With --scale-down: try at most N nodes (0: all).")]


@dataclass
class DrainArgs:
    """The drain options of ``simulate`` as given."""

    nodes: list[str]
    selector: str | None
    scale_down: str | None
    count: int
    delete_emptydir_data: bool
    force: bool
    disable_eviction: bool
    #: Implied (DaemonSet pods always stay); accepted so that a kubectl drain command line reads the same.
    ignore_daemonsets: bool = False
    #: ``--timeout`` as given (a Go duration; None or 0s: kubectl waits forever).
    timeout: str | None = None

    @property
    def wanted(self) -> bool:
        return bool(self.nodes or self.selector or self.scale_down)

    def check(self, filenames: list[str], max_: bool) -> None:
        """Refuse drain flags without a drain, an empty selector, and what a drain does not combine with."""
        for flag, value in (("--drain-selector", self.selector), ("--scale-down", self.scale_down)):
            if value is not None and not value.strip():
                raise UsageError(f"{flag} is empty: an empty label selector would pick every node; give one such as "
                                 f"{flag} pool=spot")
        if not self.wanted:
            if (self.count or self.delete_emptydir_data or self.force or self.disable_eviction or self.ignore_daemonsets
                    or self.timeout is not None):
                raise UsageError("--count, --ignore-daemonsets, --delete-emptydir-data, --force, --disable-eviction and "
                                 "--timeout go with --drain, --drain-selector or --scale-down")
            if not filenames:
                raise UsageError("give the pods to place (-f FILE), or nodes to drain (--drain NODE, --drain-selector, --scale-down)")
            return
        if filenames or max_:
            raise UsageError("--drain, --drain-selector and --scale-down place the evicted pods' replacements: "
                             "they do not go with -f or --max")
        if self.scale_down and (self.nodes or self.selector):
            raise UsageError("--scale-down picks its own nodes: it does not go with --drain or --drain-selector")
        if self.count and not self.scale_down:
            raise UsageError("--count goes with --scale-down")

    def timeout_seconds(self) -> float | None:
        """``--timeout`` in seconds, None for kubectl's default (0s: no limit)."""
        from kschedctl.config.field import DurationError, parse_go_duration

        if self.timeout is None:
            return None
        try:
            ns = parse_go_duration(self.timeout)
        except DurationError as err:
            raise UsageError(f"invalid --timeout: {err}") from None
        if ns < 0:
            raise UsageError(f'invalid --timeout "{self.timeout}": must not be negative')
        return ns / 1e9 or None

    def request(self, cluster: Cluster, config: SchedulerConfig, registry: Registry, options: RunOptions,
                node_order: NodeOrderSpec | None = None, runs: int | None = None, group_by: str | None = None) -> DrainRequest:
        """The drain's request: the nodes named, the selectors parsed, kubectl drain's flags."""
        from kschedctl.kube.selectors import parse_selector_string
        from kschedctl.usecases.drain import DrainRequest
        from kschedctl.whatif.drain import DrainFlags

        return DrainRequest(
            registry=registry, config=config, cluster=cluster, nodes=list(self.nodes),
            selector=parse_selector_string(self.selector) if self.selector else None,
            scale_down=parse_selector_string(self.scale_down) if self.scale_down else None, count=self.count,
            flags=DrainFlags(self.delete_emptydir_data, self.force, self.disable_eviction, self.timeout_seconds()),
            options=options,
            node_order=node_order, runs=runs or 1, group_by=group_by,
        )
