"""Commands for live clusters: ``kschedctl snapshot`` and ``kschedctl explain pending``.

Also the pieces ``explain pod`` shares with them: choosing the Source (snapshot
files with ``--snapshot``, else the live cluster), and reading it with notes and
a progress bar on stderr. Only the presentation lives here; talking to the API
server is ``kschedctl.snapshot.live``'s job.
"""

from __future__ import annotations

import sys
from types import TracebackType
from typing import TYPE_CHECKING, Annotated, Any

import typer

from kschedctl.cli.app import (
    EXIT_NO,
    EXIT_OK,
    CheckOutput,
    ConfigOpt,
    app,
    err,
    explain_app,
    guarded,
    stdout_console,
    worker_jobs,
)
from kschedctl.cli.options import (
    AllNamespacesOpt,
    ChunkSizeOpt,
    ContextOpt,
    JobsOpt,
    KubeconfigOpt,
    LiveSnapshotOpt,
    NamespaceOpt,
    RequestTimeoutOpt,
    SelectorOpt,
    live_options,
)
from kschedctl.cli.plugin_opts import PluginModuleOpt, build_registry
from kschedctl.errors import UsageError

if TYPE_CHECKING:  # imported when a command runs: --help and other commands do without them
    from rich.console import Console
    from rich.progress import Progress, TaskID

    from kschedctl.snapshot.cluster import Cluster
    from kschedctl.snapshot.live import LiveOptions
    from kschedctl.snapshot.source import Source


class ProgressBar:
    """A progress callback drawing one bar per resource on stderr, only when stderr is a terminal.

    Bars are transient: they vanish when listing ends, leaving stderr to the notes.
    """

    def __init__(self, console: Console | None = None) -> None:
        if console is None:
            from rich.console import Console

            console = Console(stderr=True)
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
                TextColumn("listing {task.description}"),
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


def note(message: str) -> None:
    err(f"note: {message}")


def open_source(snapshot: list[str] | None, options: LiveOptions) -> Source:
    """Snapshot files when ``--snapshot`` is given, else the live cluster the kubeconfig names."""
    if snapshot:
        from kschedctl.snapshot.source import FileSource

        return FileSource(snapshot)
    from kschedctl.snapshot.live import LiveSource, NoClusterConfigured

    try:
        return LiveSource(options)
    except NoClusterConfigured as e:
        raise NoClusterConfigured(f"{e}; give --snapshot FILE to work from a snapshot file") from None


def read_cluster(source: Source) -> Cluster:
    """Load the source, on the command's progress line (``cli.progress``); its notes follow."""
    from kschedctl.cli.progress import current

    notes: list[str] = []
    act = current()
    act.phase(f"loading {source.description}")
    cluster = source.load(warn=notes.append, progress=act.listing)
    for n in notes:
        note(n)
    return cluster


# --------------------------------------------------------------------------- snapshot


@app.command("snapshot")
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
        from kschedctl.snapshot.live import LiveSource, version_note
        from kschedctl.snapshot.selectors import parse_selector_string
        from kschedctl.snapshot.source import REDACTED

        if namespace and all_namespaces:
            raise UsageError("give -n NAMESPACE or -A, not both")
        if selector:
            parse_selector_string(selector)
        source = LiveSource(live_options(kubeconfig, context, request_timeout, chunk_size=chunk_size, redact=not no_redact))
        with ProgressBar() as bar:
            fetched = source.fetch(namespace=namespace, pod_selector=selector, progress=bar)
        for n in fetched.notes:
            note(n)
        if version_note(fetched.server_version):
            note(str(version_note(fetched.server_version)))
        if namespace:
            note(f'only the namespaced objects of namespace "{namespace}": pods of other namespaces are missing, so '
                 "node usage, spreading and affinity can differ from what the scheduler sees")
        if selector:
            note(f'only pods matching "{selector}": the others are missing from node usage, spreading and affinity')
        doc = fetched.as_list()
        header = [
            f"kschedctl snapshot of {source.description}"
            + (f", Kubernetes {fetched.server_version}" if fetched.server_version else ""),
            f"taken {_now()}; "
            + ("nothing redacted (--no-redact)" if no_redact else f"redacted: {REDACTED}"),
            "read it back with: kschedctl explain pod NAME -n NAMESPACE --snapshot FILE",
        ]
        text = _serialise(doc, header, as_json=output_file.endswith(".json"))
        if output_file == "-":
            sys.stdout.write(text)
        else:
            try:
                with open(output_file, "w", encoding="utf-8") as f:
                    f.write(text)
            except OSError as e:
                raise UsageError(f"cannot write {output_file}: {e.strerror or e}") from None
            counts = fetched.counts()
            err(f"wrote {sum(counts.values())} objects of {len([c for c in counts.values() if c])} kinds to {output_file}")
        return EXIT_OK

    guarded(body)


def _now() -> str:
    from datetime import UTC, datetime

    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _serialise(doc: dict[str, Any], header: list[str], *, as_json: bool) -> str:
    if as_json:
        import json

        return json.dumps(doc, indent=1) + "\n"
    from kschedctl.render.data import to_yaml

    return "".join(f"# {h}\n" for h in header) + to_yaml(doc)


# --------------------------------------------------------------------------- explain pending


@explain_app.command("pending")
def explain_pending_cmd(
    namespace: NamespaceOpt = None,
    all_namespaces: AllNamespacesOpt = False,
    selector: SelectorOpt = None,
    snapshot: LiveSnapshotOpt = None,
    config: ConfigOpt = None,
    output: Annotated[CheckOutput, typer.Option("--output", "-o", metavar="FORMAT", help="table, json, yaml or markdown.")] = CheckOutput.table,
    kubeconfig: KubeconfigOpt = None,
    context: ContextOpt = None,
    request_timeout: RequestTimeoutOpt = None,
    chunk_size: ChunkSizeOpt = 500,
    fix: Annotated[
        bool, typer.Option("--fix", help="Add each pod's best single change that makes it fit, verified by re-running the cycle.")
    ] = False,
    by: Annotated[
        str | None,
        typer.Option("--by", metavar="GROUPING", help="cause: group pods by cause (default for tables); pod: one row per pod (default for json/yaml)."),
    ] = None,
    plugin_module: PluginModuleOpt = None,
    jobs: JobsOpt = None,
) -> None:
    """Every pending pod: its FitError, the reason blocking it on most nodes, the nearest node (rejected
    by the fewest Filter plugins) and whether a preemption dry run would place it; grouped by cause.

    Exit status: 0 no pod is pending, 1 some pod is pending, 2 bad input or the cluster could not be read.
    """

    def body() -> int:
        from kschedctl.cli.progress import current, done
        from kschedctl.config import load_config
        from kschedctl.explain.pending import pending_rows
        from kschedctl.snapshot.selectors import parse_selector_string
        from kschedctl.whatif.causes import attach_remedies, group_by_cause

        if namespace and all_namespaces:
            raise UsageError("give -n NAMESPACE or -A, not both")
        if by not in (None, "cause", "pod"):
            raise UsageError(f"--by: expected cause or pod, got {by!r}")
        sel = parse_selector_string(selector) if selector else None
        source = open_source(snapshot, live_options(kubeconfig, context, request_timeout, chunk_size=chunk_size))
        ns = None if all_namespaces else (namespace or source.default_namespace())
        registry = build_registry(plugin_module)
        cfg = load_config(str(config) if config else None, registry)
        cluster = read_cluster(source)
        pods = [
            p
            for p in cluster.pending_pods()
            if (ns is None or p.namespace == ns) and (sel is None or sel.matches(p.labels))
        ]
        if not pods and ns is not None and sel is None:
            from kschedctl.snapshot.source import pending_elsewhere

            elsewhere = pending_elsewhere(cluster, ns)
            if elsewhere:
                note(elsewhere)
        progress = current().counter("explaining pending pods")
        rows = [r.to_dict() for r in pending_rows(cluster, pods, cfg, registry, progress=progress, jobs=worker_jobs(jobs))]
        if fix:
            current().phase("verifying remedies")
        search = attach_remedies(rows, cluster, pods, cfg, registry) if fix else None
        done()
        grouped = by == "cause" or (by is None and output.value in ("table", "markdown"))
        if grouped:
            emit_groups([g.to_dict() for g in group_by_cause(rows)], output.value, search)
        else:
            from kschedctl.render.data import emit
            from kschedctl.render.pending import render_pending_markdown, render_pending_table

            def table(r: list[dict[str, Any]]) -> None:
                render_pending_table(r, stdout_console())
                if search is not None:
                    from kschedctl.render.causes import search_summary

                    stdout_console().print(search_summary(search))

            emit(rows, output.value, table=table, markdown=render_pending_markdown)
        return EXIT_OK if not rows else EXIT_NO

    guarded(body)


def emit_groups(groups: list[dict[str, Any]], fmt: str, search: dict[str, Any] | None) -> None:
    from kschedctl.render.causes import render_groups_markdown, render_groups_table
    from kschedctl.render.data import emit

    emit(groups, fmt, table=lambda g: render_groups_table(g, stdout_console(), search),
         markdown=lambda g: render_groups_markdown(g, search))
