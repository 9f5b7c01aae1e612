"""``kschedctl snapshot``: the live cluster written as a snapshot file that ``--snapshot`` reads back.

Listing the cluster is ``kschedctl.snapshot.live``'s job; this module draws the listing's
progress bars, prints its notes and writes the file with a header saying what it holds.
"""

from __future__ import annotations

from types import TracebackType
from typing import TYPE_CHECKING, Annotated

import typer

from kschedctl.cli.common import EXIT_OK, err, guarded, note
from kschedctl.cli.options import (
    ChunkSizeOpt,
    ClusterOptions,
    ContextOpt,
    KubeconfigOpt,
    RequestTimeoutOpt,
    SelectorOpt,
)
from kschedctl.errors import UsageError

if TYPE_CHECKING:  # imported when the command runs: --help and other commands do without them
    from rich.console import Console
    from rich.progress import Progress, TaskID

    from kschedctl.snapshot.source import Fetched
    from kschedctl.snapshot.writer import SnapshotWriter


class ProgressBar:
    """A progress callback drawing one bar per resource on stderr, only when stderr is a terminal.

    Bars are transient: they vanish when listing ends, leaving stderr to the notes.
    """

    def __init__(self, console: Console | None = None) -> None:
        if console is None:
            from kschedctl.cli.streams import plain_console

            console = plain_console(stderr=True)
        self.console = console
        self._progress: Progress | None = None
        self._tasks: dict[str, TaskID] = {}

    def __enter__(self) -> ProgressBar:
        return self

    def __exit__(self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None

    def __call__(self, resource: str, done: int, total: int | None) -> None:
        if not self.console.is_terminal:
            return
        if self._progress is None:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self._progress = Progress(
                TextColumn("listing {task.description}", markup=False),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=self.console,
                transient=True,
            )
            self._progress.start()
        task = self._tasks.get(resource)
        if task is None:
            task = self._tasks[resource] = self._progress.add_task(resource, total=total)
        self._progress.update(task, completed=done, total=total)


def _check_scope(namespace: str | None, all_namespaces: bool, selector: str | None) -> None:
    """-n and -A together, or a selector that does not parse: a UsageError before anything is read."""
    if namespace and all_namespaces:
        raise UsageError("give -n NAMESPACE or -A, not both")
    if selector:  # (imported only then: the selector parser loads the API validation rules)
        from kschedctl.kube.selectors import parse_selector_string

        parse_selector_string(selector)


def snapshot_cmd(
    output_file: Annotated[
        str, typer.Option("--output", "-o", metavar="FILE", help="Write here (.json: JSON, else YAML); - for stdout.")
    ] = "-",
    namespace: Annotated[
        str | None,
        typer.Option("--namespace", "-n", metavar="NAMESPACE", help="Only this namespace's namespaced objects (a partial snapshot)."),
    ] = None,
    all_namespaces: Annotated[bool, typer.Option("--all-namespaces", "-A", help="Every namespace (the default).")] = False,
    selector: SelectorOpt = None,
    no_redact: Annotated[
        bool,
        typer.Option("--no-redact", help="Keep container env values, last-applied-configuration annotations and managedFields."),
    ] = False,
    kubeconfig: KubeconfigOpt = None,
    context: ContextOpt = None,
    request_timeout: RequestTimeoutOpt = None,
    chunk_size: ChunkSizeOpt = 500,
) -> None:
    """Write the live cluster as a snapshot file that --snapshot reads back.

    Lists every kind kube-scheduler's plugins read (never Secrets or ConfigMaps), with GET requests only.
    Unlike kubectl the default is every namespace: scheduling depends on every pod. Exit status: 0 written,
    2 the cluster could not be read.
    """

    def body() -> int:
        from kschedctl.snapshot.live import LiveSource

        _check_scope(namespace, all_namespaces, selector)
        where = ClusterOptions(None, kubeconfig, context, request_timeout, chunk_size)
        source = LiveSource(where.live(redact=not no_redact))
        version = source.server_version()
        header = _header(source.description, version, no_redact)
        try:
            with _writer(output_file, header, version) as out, ProgressBar() as bar:
                fetched = source.fetch(namespace=namespace, pod_selector=selector, progress=bar, sink=out)
        except OSError as e:  # writing (listing turns its own failures into ClusterAccessError)
            raise UsageError(f"cannot write {output_file}: {e.strerror or e}") from None
        _notes(fetched, namespace, selector)
        if output_file != "-":
            counts = out.counts
            err(f"wrote {sum(counts.values())} objects of {len([c for c in counts.values() if c])} kinds to {output_file}")
        return EXIT_OK

    guarded(body)


def _writer(output_file: str, header: list[str], version: str | None) -> SnapshotWriter:
    """The snapshot file, written as the lists arrive (JSON when FILE ends in .json, else YAML)."""
    from kschedctl.snapshot.writer import SnapshotWriter

    return SnapshotWriter(output_file, header=header, server_version=version, as_json=output_file.endswith(".json"))


def _notes(fetched: Fetched, namespace: str | None, selector: str | None) -> None:
    """What listing said, the server's version if kschedctl models another, and what a partial snapshot lacks."""
    from kschedctl.snapshot.live import version_note

    for n in fetched.notes:
        note(n)
    if version_note(fetched.server_version):
        note(str(version_note(fetched.server_version)))
    if namespace:
        note(f'only the namespaced objects of namespace "{namespace}": pods of other namespaces are missing, so '
             "node usage, spreading and affinity can differ from what the scheduler sees")
    if selector:
        note(f'only pods matching "{selector}": the others are missing from node usage, spreading and affinity')


def _header(description: str, version: str | None, no_redact: bool) -> list[str]:
    from kschedctl.snapshot.source import REDACTED

    return [
        f"kschedctl snapshot of {description}" + (f", Kubernetes {version}" if version else ""),
        f"taken {_now()}; "
        + ("nothing redacted (--no-redact)" if no_redact else f"redacted: {REDACTED}"),
        "read it back with: kschedctl explain pod NAME -n NAMESPACE --snapshot FILE",
    ]


def _now() -> str:
    from datetime import UTC, datetime

    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
