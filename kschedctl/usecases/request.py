"""What every use case is given, and how it reports while it works: the base of the request types.

Each command of the CLI parses its options into a named request and hands it to the one entry
point of its use case (``kschedctl.usecases``), then renders the result. The requests share
``Request`` (the plugins a run may use), and those that run against one cluster ``ClusterRequest``
(the cluster as the command read it, what it was read from, the start-up node order), which also
answers what every such run asks of its cluster: a pod by name, the node order set on it, the
manifests of files read against it. The version and feature gates a run follows travel with its
configuration (``SchedulerConfig.features``), which the CLI loads in one place
(``cli.options.SchedulerOptions``), so a choice of version reaches every request through its
configuration(s): one per run, one per side of a comparison.

Notes and progress go through ``Hooks``, so the use cases stay free of presentation: the CLI
passes stderr notes and its progress line, tests and library callers pass nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from kschedctl.errors import InputError
from kschedctl.kube.features import Features
from kschedctl.kube.versions import DEFAULT_FEATURES

if TYPE_CHECKING:
    from kschedctl.framework.registry import Registry
    from kschedctl.snapshot.cluster import Cluster
    from kschedctl.snapshot.model import Pod
    from kschedctl.snapshot.nodeorder import NodeOrderSpec, StartupOrder
    from kschedctl.whatif.workloads import Manifests

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

    def named_pod(self, namespace: str, name: str) -> Pod:
        """The pod ``namespace/name`` of the cluster, or an error saying where else it is."""
        from kschedctl.snapshot.source import pod_not_found

        found = self.cluster.pod(namespace, name)
        if found is None:
            raise pod_not_found(self.cluster, namespace, name, self.source)
        return found

    def startup_order(self) -> tuple[StartupOrder, list[str]]:
        """The ``--node-order`` resolved for the cluster and set on it, so every snapshot the run builds
        follows it; with the notes that say which order it is."""
        from kschedctl.snapshot.nodeorder import NodeOrderSpec

        order, notes = (self.node_order or NodeOrderSpec()).resolve(self.cluster.nodes)
        self.cluster.startup = order
        return order, notes

    def noted_order(self, hooks: Hooks) -> StartupOrder:
        """``startup_order``, its notes to ``hooks``."""
        order, notes = self.startup_order()
        for n in notes:
            hooks.note(n)
        return order

    def read_manifests(self, paths: list[str], features: Features = DEFAULT_FEATURES) -> Manifests:
        """The workloads and other objects of pod files (``-f``) read against the cluster (as ``features``'
        API server reads them), an error naming the files when one is bad."""
        from kschedctl.snapshot.loader import iter_documents
        from kschedctl.whatif.workloads import parse_manifests

        try:
            return parse_manifests(iter_documents(paths), self.cluster, features)
        except InputError as e:
            if e.source is None:
                raise e.located(source=", ".join("<stdin>" if p == "-" else p for p in paths)) from None
            raise
