"""Where every command's cluster comes from, and how reading it is shown.

``--snapshot`` files, else the live cluster the kubeconfig names (``open_source``); the source is
loaded on the command's progress line with its notes on stderr (``read_cluster``). ``hooks()``
hands the use cases the same two channels (notes, progress) for the work that follows. Only the
presentation lives here; talking to the API server is ``kschedctl.snapshot.live``'s job.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kschedctl.cli.common import note
from kschedctl.kube.features import Features
from kschedctl.kube.versions import DEFAULT_FEATURES

if TYPE_CHECKING:
    from kschedctl.cli.options import ClusterOptions
    from kschedctl.snapshot.cluster import Cluster
    from kschedctl.snapshot.source import Source
    from kschedctl.usecases.request import Hooks


def open_source(where: ClusterOptions) -> Source:
    """Snapshot files when ``--snapshot`` is given, else the live cluster the kubeconfig names."""
    if where.snapshot:
        from kschedctl.snapshot.source import FileSource

        where.check()
        source = FileSource(where.snapshot)
        source.look_ahead()  # (a big file's checks on the second core while the command sets up)
        return source
    options = where.live()
    from kschedctl.snapshot.live import LiveSource, NoClusterConfigured

    try:
        return LiveSource(options)
    except NoClusterConfigured as e:
        raise NoClusterConfigured(f"{e}; give --snapshot FILE to work from a snapshot file") from None


def read_cluster(source: Source, features: Features = DEFAULT_FEATURES) -> Cluster:
    """Load the source as ``features``' version reads it (``SchedulerOptions.features``), on the command's
    progress line (``cli.progress``); its notes follow."""
    from kschedctl.cli.progress import current

    notes: list[str] = []
    act = current()
    act.phase(f"loading {source.description}")
    cluster = source.load(warn=notes.append, progress=act.listing, features=features)
    for n in notes:
        note(n)
    return cluster


def hooks() -> Hooks:
    """Notes on stderr and the running command's progress line, for the use cases' entry points."""
    from kschedctl.cli.progress import current
    from kschedctl.usecases.request import Hooks

    return Hooks(note=note, progress=current())


def open_for_pod(where: ClusterOptions, namespace: str | None, name: str | None) -> tuple[Source, str]:
    """The source and the namespace (``-n``, else the source's default), the named pod checked first (one
    GET on a live cluster), so that a wrong name fails before anything else is read."""
    source = open_source(where)
    ns = namespace or source.default_namespace()
    if name is not None:
        source.require_pod(ns, name)
    return source, ns
