"""What every command's run is given, and how it reports while it works: the base of the request types.

Each command of the CLI parses its options into a named request and hands it to one entry point
below the CLI (``whatif.run.explain_pods``, ``explain_pending``, ``diff_sides``, ``simulate_pods``,
``check.run.run_check``), then prints the result. The requests share ``Request`` (the plugins a
run may use), and those that run against one cluster ``ClusterRequest`` (the cluster as the
command read it, and what it was read from). The version and
feature gates a run follows travel with its configuration (``SchedulerConfig.features``), which
the CLI loads in one place (``cli.options.SchedulerOptions``), so a choice of version reaches
every request through its configuration(s): one per run, one per side of a comparison.

Notes and progress go through ``Hooks``, so the entry points stay free of presentation: the CLI
passes stderr notes and its progress line, tests and library callers pass nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from kschedctl.framework.registry import Registry
    from kschedctl.snapshot.cluster import Cluster
    from kschedctl.snapshot.nodeorder import NodeOrderSpec

#: Progress of a counted step: (done, total).
Counter = Callable[[int, int | None], None]


class Progress(Protocol):
    """Where a run says which step it is in (the CLI's progress line, ``cli.progress.Activity``)."""

    def phase(self, description: str) -> None: ...

    def counter(self, description: str) -> Counter: ...


class Quiet:
    """Progress that shows nothing."""

    def phase(self, description: str) -> None:
        return None

    def counter(self, description: str) -> Counter:
        return lambda done, total: None


def _drop(message: str) -> None:
    return None


@dataclass
class Hooks:
    """How a run reports while it works: notes for the user, and the step it is in."""

    note: Callable[[str], None] = _drop
    progress: Progress = field(default_factory=Quiet)


@dataclass(kw_only=True)
class Request:
    """What every run is given, whichever command asks for it: the plugins it may run. A field that
    every command's run should follow (say, a choice of version handed to the loaders) goes here."""

    #: The plugins configurations may name (None: the in-tree ones).
    registry: Registry | None = None


@dataclass(kw_only=True)
class ClusterRequest(Request):
    """A run against one cluster the command read (snapshot files or the live cluster)."""

    cluster: Cluster
    #: What the cluster was read from, for messages ("not found in ...").
    source: str = "the snapshot"
    #: The order the scheduler was handed nodes and pending pods at start-up (``--node-order``; None: by name).
    node_order: NodeOrderSpec | None = None
