"""``kschedctl explain pod`` and ``kschedctl explain pending``: parse, call the use case, print.

The cycle and what the commands add to it (margins, remedies, cause groups) run below the CLI
(``usecases.explain_pod``, ``usecases.explain_pending``); the output is ``kschedctl.render``'s. ``cli.main`` registers both
commands on the ``explain`` group.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from kschedctl.cli.common import (
    EXIT_NO,
    EXIT_OK,
    CheckOutput,
    Output,
    after_title,
    deferred_notes,
    guarded,
    stdout_console,
    worker_jobs,
)
from kschedctl.cli.options import (
    AllNamespacesOpt,
    ChunkSizeOpt,
    ClusterOptions,
    ConfigOpt,
    ContextOpt,
    FeatureGatesOpt,
    JobsOpt,
    KubeconfigOpt,
    KubeVersionOpt,
    LiveSnapshotOpt,
    NamespaceOpt,
    NodeOrderOpt,
    RequestTimeoutOpt,
    SchedulerOptions,
    SeedOpt,
    SelectorOpt,
    VersionOptions,
    complete_pod_names,
    node_order,
)
from kschedctl.cli.plugin_opts import PluginModuleOpt
from kschedctl.cli.scaleup_opts import MaxNewNodesOpt, max_new_nodes_arg
from kschedctl.cli.sources import hooks, open_for_pod, open_source, read_cluster
from kschedctl.errors import UsageError

if TYPE_CHECKING:
    from kschedctl.usecases.explain_pending import PendingResult

ScaleUpOpt = Annotated[
    bool,
    typer.Option("--scale-up", help="Also ask each node group whether one new node (built from its template node) would "
                 "take the pod, and the least new nodes per group that place the pods it takes."),
]


def explain_pod_cmd(
    name: Annotated[
        str | None, typer.Argument(metavar="NAME", help="Name of a pod in the snapshot or the live cluster.", autocompletion=complete_pod_names)
    ] = None,
    namespace: NamespaceOpt = None,
    filename: Annotated[str | None, typer.Option("--filename", "-f", metavar="FILE", help="Pod manifest to schedule (- for stdin).")] = None,
    snapshot: LiveSnapshotOpt = None,
    config: ConfigOpt = None,
    output: Annotated[Output, typer.Option("--output", "-o", metavar="FORMAT", help="table, wide, json, yaml or markdown.")] = Output.table,
    kubeconfig: KubeconfigOpt = None,
    context: ContextOpt = None,
    request_timeout: RequestTimeoutOpt = None,
    plugin_module: PluginModuleOpt = None,
    fix: Annotated[
        bool,
        typer.Option("--fix", help="Also list single changes that would make the pod fit, each verified by re-running the cycle."),
    ] = False,
    compare: Annotated[
        str | None,
        typer.Option("--compare", metavar="NODE", help="Why the selected node won over NODE (default: the runner-up)."),
    ] = None,
    scale_up: ScaleUpOpt = False,
    max_new_nodes: MaxNewNodesOpt = None,
    kube_version: KubeVersionOpt = None,
    feature_gates: FeatureGatesOpt = None,
    node_order_: NodeOrderOpt = "name",
    seed: SeedOpt = None,
) -> None:
    """Dry-run one scheduling cycle for a pod and show every extension point.

    Without --snapshot the live cluster of the kubeconfig's context is read (GET requests only). A pod that
    is already bound is explained as if it were pending. A -f file with several pods explains each (like
    kubectl describe -f), each against the same snapshot; -o json/yaml then prints a list. Exit status: 0 schedulable, 1 unschedulable or
    gated (also when --scale-up finds a node group that would take it), 2 bad input or usage, or the cluster could not be read.
    """

    def body() -> int:
        from kschedctl.snapshot.loader import read_stdin_once
        from kschedctl.usecases.explain_pod import ExplainPodRequest, explain_pods

        if (name is None) == (filename is None):
            raise UsageError("give either a pod NAME (with -n) or -f FILE")
        read_stdin_once(("-f", [filename] if filename else []), ("--snapshot", snapshot or []))
        versions = VersionOptions(kube_version, feature_gates)
        source, ns = open_for_pod(ClusterOptions(snapshot, kubeconfig, context, request_timeout), namespace, name)
        setup = SchedulerOptions(plugin_module, versions, source)
        request = ExplainPodRequest(
            registry=setup.registry, config=setup.config(config), cluster=read_cluster(source, setup.features), source=source.description,
            name=name, namespace=ns, filename=filename, details=output in (Output.wide, Output.json, Output.yaml),
            fix=fix, compare=compare, node_order=node_order(node_order_, seed), scale_up=scale_up,
            max_new_nodes=max_new_nodes_arg(max_new_nodes, scale_up, "--scale-up"),
        )
        result = explain_pods(request, hooks())
        emit_explained(result.documents, output)
        return EXIT_OK if result.schedulable else EXIT_NO

    guarded(body)


def emit_explained(documents: list[dict[str, Any]], output: Output) -> None:
    """One trace after another; several pods with -o json/yaml as one document (a list)."""
    if len(documents) > 1 and output in (Output.json, Output.yaml):
        emit_traces(documents, output)
        return
    for i, data in enumerate(documents):
        if i:
            print()
        emit_trace(data, output)


def emit_traces(data: list[dict[str, Any]], output: Output) -> None:
    """Several traces (``-f`` with several pods) as one JSON/YAML document: a list."""
    from kschedctl.cli.progress import done
    from kschedctl.render.data import emit

    done()
    emit(data, output.value, table=lambda d: None)


def emit_trace(data: dict[str, Any], output: Output) -> None:
    from kschedctl.cli.progress import done
    from kschedctl.render.data import emit

    def table(d: dict[str, Any]) -> None:
        from kschedctl.render.remedies import render_whatif_sections
        from kschedctl.render.scaleup import render_pod_scale_up
        from kschedctl.render.table import WIDE_HINT, render_trace

        console = stdout_console()
        wide = output == Output.wide
        with deferred_notes() as notes:  # after the trace and its sections, never between them
            render_trace(d, console, wide=wide, notes_console=notes)
            render_whatif_sections(d, console, notes, wide=wide)
            if "scaleUp" in d:
                render_pod_scale_up(d["scaleUp"], console)
            if not wide:
                console.print(WIDE_HINT, style="dim", overflow="fold", markup=False, highlight=False)

    def markdown(d: dict[str, Any]) -> str:
        from kschedctl.render.markdown import render_trace_markdown
        from kschedctl.render.remedies import whatif_sections_markdown
        from kschedctl.render.scaleup import pod_scale_up_markdown

        scale_up = pod_scale_up_markdown(d["scaleUp"]) if "scaleUp" in d else ""
        return render_trace_markdown(d) + whatif_sections_markdown(d) + scale_up

    done()
    emit(data, output.value, table=table, markdown=markdown)


# --------------------------------------------------------------------------- explain pending


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
    scale_up: ScaleUpOpt = False,
    max_new_nodes: MaxNewNodesOpt = None,
    plugin_module: PluginModuleOpt = None,
    jobs: JobsOpt = None,
    kube_version: KubeVersionOpt = None,
    feature_gates: FeatureGatesOpt = None,
    node_order_: NodeOrderOpt = "name",
    seed: SeedOpt = None,
) -> None:
    """Every pending pod: its FitError, the reason blocking it on most nodes, the nearest node (rejected
    by the fewest Filter plugins) and whether a preemption dry run would place it; grouped by cause.

    With --scale-up, each unschedulable pod's cluster-autoscaler-style line (would one new node of some
    node group take it?) and per node group the least new nodes that place the pods it takes; -o json/yaml
    then prints an object: the pods (or causes) and scaleUp.

    Exit status: 0 no pod is pending, 1 some pod is pending (also when a scale-up would place it), 2 bad input
    or the cluster could not be read.
    """

    def body() -> int:
        from kschedctl.kube.selectors import parse_selector_string
        from kschedctl.kube.versions import version_line
        from kschedctl.usecases.explain_pending import PendingRequest, explain_pending

        if namespace and all_namespaces:
            raise UsageError("give -n NAMESPACE or -A, not both")
        if by not in (None, "cause", "pod"):
            raise UsageError(f"--by: expected cause or pod, got {by!r}")
        sel = parse_selector_string(selector) if selector else None
        versions = VersionOptions(kube_version, feature_gates)
        source = open_source(ClusterOptions(snapshot, kubeconfig, context, request_timeout, chunk_size))
        setup = SchedulerOptions(plugin_module, versions, source)
        request = PendingRequest(
            namespace=None if all_namespaces else (namespace or source.default_namespace()),
            registry=setup.registry, config=setup.config(config), cluster=read_cluster(source, setup.features), source=source.description,
            selector=sel, fix=fix, jobs=worker_jobs(jobs), node_order=node_order(node_order_, seed), scale_up=scale_up,
            max_new_nodes=max_new_nodes_arg(max_new_nodes, scale_up, "--scale-up"))
        result = explain_pending(request, hooks())
        emit_pending(result, output.value, grouped=by == "cause" or (by is None and output.value in ("table", "markdown")),
                     version=version_line(setup.features))
        return EXIT_OK if not result.rows else EXIT_NO

    guarded(body)


def emit_pending(result: PendingResult, fmt: str, *, grouped: bool, version: str | None = None) -> None:
    """The rows grouped by cause, or one row per pod; with ``--fix`` the remedy search's totals. ``version``
    (the run's kube-scheduler version and changed gates) heads a table or markdown. With ``--scale-up`` its
    sections follow; JSON and YAML are then one object: the rows (``pods``) or groups (``causes``) and ``scaleUp``."""
    from kschedctl.cli.progress import done
    from kschedctl.render.causes import render_groups_markdown, render_groups_table, search_summary
    from kschedctl.render.data import emit
    from kschedctl.render.pending import render_pending_markdown, render_pending_table
    from kschedctl.render.scaleup import pending_scale_up_markdown, render_pending_scale_up

    done()
    search = result.search
    scale_up = result.scale_up
    if version and fmt == "table":
        stdout_console().print(version, markup=False, highlight=False)

    def headed(text: str) -> str:
        return after_title(text, version) if version else text

    def scale_up_table() -> None:
        if scale_up is not None:
            render_pending_scale_up(scale_up, result.groups(), stdout_console())

    def scale_up_markdown() -> str:
        return pending_scale_up_markdown(scale_up, result.groups()) if scale_up is not None else ""

    if scale_up is not None and fmt in ("json", "yaml"):
        key, data = ("causes", result.groups()) if grouped else ("pods", result.rows)
        emit({key: data, "scaleUp": scale_up}, fmt, table=lambda d: None)
        return

    if grouped:
        def groups_table(g: list[dict[str, Any]]) -> None:
            render_groups_table(g, stdout_console(), search)
            scale_up_table()

        emit(result.groups(), fmt, table=groups_table,
             markdown=lambda g: headed(render_groups_markdown(g, search)) + scale_up_markdown())
        return

    def table(r: list[dict[str, Any]]) -> None:
        render_pending_table(r, stdout_console())
        if search is not None:
            stdout_console().print(search_summary(search))
        scale_up_table()

    emit(result.rows, fmt, table=table, markdown=lambda r: headed(render_pending_markdown(r)) + scale_up_markdown())
