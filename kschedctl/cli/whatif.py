"""The what-if commands, ``diff-profiles`` and ``simulate``: option parsing, file reading, exit codes.

The analyses live in ``kschedctl.whatif`` and the output in ``kschedctl.render.diff`` /
``kschedctl.render.simulate``; this module only connects them to the command line. It
registers its commands on the shared ``app`` when imported (see the command-module block at
the end of ``kschedctl.cli.app``).
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from kschedctl.cli.app import EXIT_NO, EXIT_OK, app, guarded, notes_console, stdout_console, worker_jobs
from kschedctl.cli.options import (
    ContextOpt,
    JobsOpt,
    KubeconfigOpt,
    LiveSnapshotOpt,
    NamespaceOpt,
    RequestTimeoutOpt,
    complete_pod_names,
    live_options,
)
from kschedctl.cli.plugin_opts import PluginModuleOpt, build_registry
from kschedctl.errors import UsageError

if TYPE_CHECKING:
    from kschedctl.config.types import SchedulerConfig
    from kschedctl.framework.registry import Registry
    from kschedctl.snapshot.cluster import Cluster
    from kschedctl.snapshot.source import Source
    from kschedctl.whatif.diff import Side
    from kschedctl.whatif.simulate import RunOptions, SimulationResult
    from kschedctl.whatif.workloads import Manifests


class WhatIfOutput(StrEnum):
    table = "table"
    json = "json"
    yaml = "yaml"
    markdown = "markdown"


OutputOpt = Annotated[WhatIfOutput, typer.Option("--output", "-o", metavar="FORMAT", help="table, json, yaml or markdown.")]


def _open(snapshot: list[str] | None, kubeconfig: str | None, context: str | None, timeout: str | None) -> Source:
    """Snapshot files, or the live cluster without --snapshot, exactly as ``explain pod`` reads them."""
    from kschedctl.cli.live import open_source

    return open_source(snapshot, live_options(kubeconfig, context, timeout))


def _read(source: Source) -> Cluster:
    from kschedctl.cli.live import read_cluster

    return read_cluster(source)


def _read_manifests(paths: list[str], cluster: Cluster) -> Manifests:
    from kschedctl.errors import InputError
    from kschedctl.snapshot.loader import iter_documents
    from kschedctl.whatif.workloads import parse_manifests

    try:
        return parse_manifests(iter_documents(paths), cluster)
    except InputError as e:
        if e.source is None:
            raise e.located(source=", ".join("<stdin>" if p == "-" else p for p in paths)) from None
        raise


def _emit(data: dict[str, Any], output: WhatIfOutput, table: Any, markdown: Any) -> None:
    from kschedctl.cli.progress import done
    from kschedctl.render.data import emit

    done()
    emit(data, output.value, table=lambda d: table(d, stdout_console(), notes_console()), markdown=markdown)


# --------------------------------------------------------------------------- diff-profiles


def build_sides(configs: list[str], profiles: list[str], registry: Registry | None = None) -> tuple[Side, Side]:
    """The two sides from the ``--config`` and ``--profile`` options (see the command's help);
    ``registry``: the plugins the configurations may name (see ``build_registry``)."""
    from kschedctl.config import default_config, load_config
    from kschedctl.whatif.diff import Side

    if len(configs) > 2 or len(profiles) > 2:
        raise UsageError("give at most two --config and at most two --profile")
    if not configs and len(profiles) < 2:
        raise UsageError("nothing to compare: give two --config, or one --config, or two --profile")
    loaded = [(c, load_config(c, registry)) for c in configs]
    if len(loaded) == 2:
        (la, ca), (lb, cb) = loaded
    elif len(loaded) == 1 and len(profiles) == 2:
        (la, ca), (lb, cb) = loaded[0], loaded[0]
    else:
        (la, ca) = ("default configuration of kube-scheduler v1.35", default_config())
        (lb, cb) = loaded[0] if loaded else (la, ca)
    pa = profiles[0] if profiles else None
    pb = profiles[-1] if profiles else None
    for side_name, label, cfg, prof in (("A", la, ca, pa), ("B", lb, cb, pb)):
        if prof is not None and cfg.profile_for(prof) is None:
            have = ", ".join(f'"{p.scheduler_name}"' for p in cfg.profiles)
            raise UsageError(f'--profile {prof}: side {side_name} ({label}) has no profile "{prof}"; its profiles: {have}')
    label_a = f"{la} (profile {pa})" if pa else la
    label_b = f"{lb} (profile {pb})" if pb else lb
    return Side("A", label_a, ca, pa), Side("B", label_b, cb, pb)


@app.command("diff-profiles")
def diff_profiles_cmd(
    name: Annotated[
        str | None, typer.Argument(metavar="NAME", help="Name of a pod in the snapshot or the live cluster.", autocompletion=complete_pod_names)
    ] = None,
    namespace: NamespaceOpt = None,
    filename: Annotated[
        list[str] | None,
        typer.Option("--filename", "-f", metavar="FILE", help="Pods or workloads (one representative pod each); - for stdin. Repeatable."),
    ] = None,
    pending: Annotated[
        bool, typer.Option("--pending", help="Every pending pod (of the namespace when -n is given).")
    ] = False,
    snapshot: LiveSnapshotOpt = None,
    config: Annotated[
        list[str] | None,
        typer.Option("--config", "-c", metavar="FILE", help="KubeSchedulerConfiguration of side A, then of side B. Repeatable (at most 2)."),
    ] = None,
    profile: Annotated[
        list[str] | None,
        typer.Option("--profile", "-p", metavar="NAME", help="schedulerName of the profile to use (one for both sides, or A then B)."),
    ] = None,
    output: OutputOpt = WhatIfOutput.table,
    kubeconfig: KubeconfigOpt = None,
    context: ContextOpt = None,
    request_timeout: RequestTimeoutOpt = None,
    plugin_module: PluginModuleOpt = None,
    jobs: JobsOpt = None,
) -> None:
    """Compare what two scheduler configurations (or two profiles of one) decide for the same pods.

    Sides: two --config (A, B); one --config with two --profile (two profiles of it); one --config
    alone (A is the v1.35 default configuration); two --profile alone (profiles of the default
    configuration). Without --profile each pod uses its spec.schedulerName.

    Per pod: the decision of each side, the nodes whose Filter verdict changes, and the per-plugin
    scores on the node each side selects. A pod differs when its decision or a Filter verdict
    changes; score changes alone do not count.

    Exit status: 0 no pod differs, 1 some pod differs, 2 bad input or usage.
    """

    def body() -> int:
        from kschedctl.cli.progress import current
        from kschedctl.render.diff import render_diff_markdown, render_diff_table
        from kschedctl.snapshot.loader import read_stdin_once
        from kschedctl.whatif.diff import diff_pods
        from kschedctl.whatif.workloads import PodFactory

        chosen = sum([name is not None, bool(filename), pending])
        if chosen != 1:
            raise UsageError("give exactly one of: a pod NAME (with -n), -f FILE, or --pending")
        read_stdin_once(("-f", filename or []), ("--snapshot", snapshot or []))
        registry = build_registry(plugin_module)
        a, b = build_sides(list(config or []), list(profile or []), registry)
        source = _open(snapshot, kubeconfig, context, request_timeout)
        ns = namespace or source.default_namespace()
        if name is not None:
            source.require_pod(ns, name)
        cluster = _read(source)
        pods: list[tuple[Any, str | None]] = []
        notes: list[str] = []
        if name is not None:
            found = cluster.pod(ns, name)
            if found is None:
                from kschedctl.snapshot.source import pod_not_found

                raise pod_not_found(cluster, ns, name, source.description)
            if found.node_name:
                from kschedctl.explain.pending import as_pending

                notes.append(f"the pod is bound to {found.node_name}; compared as if it were pending")
                found = as_pending(found)
            pods = [(found, None)]
        elif pending:
            pods = [(p, None) for p in cluster.pending_pods() if namespace is None or p.namespace == namespace]
            if not pods:
                notes.append("no pending pods" + (f' in namespace "{namespace}"' if namespace else ""))
        else:
            manifests = _read_manifests(list(filename or []), cluster)
            factory = PodFactory(manifests, cluster)
            cluster = factory.cluster
            for w in manifests.workloads:
                for pod in factory.pods(w, 1):
                    pods.append((pod, None if w.kind == "Pod" else w.display))
            notes.extend(manifests.notes)
        progress = current().counter("comparing pods")
        report = diff_pods(cluster, a, b, pods, registry, strict=name is not None, progress=progress, jobs=worker_jobs(jobs))
        report.notes[:0] = notes
        _emit(report.to_dict(), output, render_diff_table, render_diff_markdown)
        return EXIT_NO if report.differs else EXIT_OK

    guarded(body)


# --------------------------------------------------------------------------- simulate


FilenameOpt = Annotated[
    list[str],
    typer.Option("--filename", "-f", metavar="FILE", help="Pods or workloads (Deployment, ReplicaSet, StatefulSet, Job); - for stdin. Repeatable."),
]
ConfigFileOpt = Annotated[
    Path | None, typer.Option("--config", "-c", metavar="FILE", help="KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1).")
]
ReplicasOpt = Annotated[
    int | None,
    typer.Option("--replicas", min=0, metavar="N", help="Pods per workload instead of its replicas; a bare Pod becomes a template."),
]
MaxOpt = Annotated[bool, typer.Option("--max", help="Place copies of the one pod/workload template until one does not fit.")]
LimitOpt = Annotated[int, typer.Option("--limit", min=0, metavar="N", help="With --max: stop after this many pods (0: no limit).")]
ReportPreemptionOpt = Annotated[
    bool,
    typer.Option("--report-preemption", help="Only report what DefaultPreemption would do: no victim is deleted and no pod nominated."),
]
RetryNominatedOpt = Annotated[
    bool,
    typer.Option("--retry-nominated", help="After every pod had its attempt, schedule each pod that preemption nominated once more."),
]
DeprecatedPreemptionOpt = Annotated[
    bool, typer.Option("--preemption", hidden=True, help="Deprecated: preemption is applied by default; same as --retry-nominated.")
]
NoBatchingOpt = Annotated[
    bool, typer.Option("--no-batching", help="Turn OpportunisticBatching off (as --feature-gates=OpportunisticBatching=false).")
]
MaxPodsOpt = Annotated[int, typer.Option("--max-pods", min=0, metavar="N", help="Stop after this many pods in queue order (0: no cap).")]
NoPendingOpt = Annotated[
    bool,
    typer.Option(
        "--no-pending",
        help="Leave the snapshot's pending pods out (by default they are scheduled too, queued first as at "
        "scheduler start): only the pods of -f.",
    ),
]

DEPRECATED_PREEMPTION_NOTE = (
    "--preemption is deprecated: preemption is applied by default now (victims deleted, the pod nominated); "
    "it is read as --retry-nominated, which schedules nominated pods again after the run"
)


@app.command("simulate")
def simulate_cmd(
    filename: FilenameOpt,
    snapshot: LiveSnapshotOpt = None,
    config: ConfigFileOpt = None,
    replicas: ReplicasOpt = None,
    max_: MaxOpt = False,
    limit: LimitOpt = 0,
    report_preemption: ReportPreemptionOpt = False,
    retry_nominated: RetryNominatedOpt = False,
    preemption: DeprecatedPreemptionOpt = False,
    no_batching: NoBatchingOpt = False,
    max_pods: MaxPodsOpt = 10_000,
    no_pending: NoPendingOpt = False,
    output: OutputOpt = WhatIfOutput.table,
    kubeconfig: KubeconfigOpt = None,
    context: ContextOpt = None,
    request_timeout: RequestTimeoutOpt = None,
    plugin_module: PluginModuleOpt = None,
) -> None:
    """Schedule a set of pods one after another, as kube-scheduler's scheduling loop does.

    Pods are taken in queue order (priority, then creation time, then file order), one attempt
    each, after the snapshot's pending pods at equal priority (see --no-pending); workloads are
    expanded into the pods their controllers would create. Each placement is
    seen by the next cycle; OpportunisticBatching reuses a cycle's sorted scores for the next pod
    with the same signature; a preemption deletes its victims and nominates the pod, which is not
    retried (see --report-preemption, --retry-nominated). Reports each pod's node, the first pod
    that does not fit with its FitError, and what each node received.

    Exit status: 0 every pod was scheduled (with --max: the count was found), 1 some pod was not
    scheduled, 2 bad input or usage.
    """

    def body() -> int:
        from kschedctl.cli.progress import current
        from kschedctl.config import load_config
        from kschedctl.render.simulate import render_simulation_markdown, render_simulation_table
        from kschedctl.snapshot.loader import read_stdin_once
        from kschedctl.whatif.simulate import APPLY, REPORT, RunOptions

        read_stdin_once(("-f", filename), ("--snapshot", snapshot or []))
        _check_simulate_flags(replicas, max_, limit, report_preemption, retry_nominated or preemption)
        registry = build_registry(plugin_module)
        cfg = load_config(str(config) if config else None, registry)
        cluster = _read(_open(snapshot, kubeconfig, context, request_timeout))
        manifests = _read_manifests(filename, cluster)
        current().phase("building NodeInfos")
        if max_:
            result = _simulate_max(manifests, cluster, cfg, registry, limit=limit, batching=not no_batching)
        else:
            options = RunOptions(
                preemption=REPORT if report_preemption else APPLY,
                retry_nominated=retry_nominated or preemption,
                batching=not no_batching,
                max_pods=max_pods,
                pending=not no_pending,
            )
            result = _simulate_run(manifests, cluster, cfg, registry, replicas, options)
        # the manifests' notes include what admitting each workload's first pod said (pods are made lazily)
        result.notes[:0] = manifests.notes + ([DEPRECATED_PREEMPTION_NOTE] if preemption else [])
        _emit(result.to_dict(), output, render_simulation_table, render_simulation_markdown)
        if result.error:
            return EXIT_NO
        return EXIT_OK if max_ or result.all_placed else EXIT_NO

    guarded(body)


def _check_simulate_flags(replicas: int | None, max_: bool, limit: int, report_preemption: bool, retry: bool) -> None:
    """Refuse flags that contradict each other, saying why."""
    if max_ and replicas is not None:
        raise UsageError("--max and --replicas do not go together: --max finds the number of replicas")
    if limit and not max_:
        raise UsageError("--limit goes with --max")
    if report_preemption and retry:
        raise UsageError("--report-preemption nominates no pod, so there is nothing to retry (--retry-nominated)")
    if max_ and retry:
        raise UsageError("--max counts the copies that fit without preemption; --retry-nominated does not apply")


def _simulate_max(
    manifests: Manifests, cluster: Cluster, cfg: SchedulerConfig, registry: Registry, *, limit: int, batching: bool
) -> SimulationResult:
    """``--max``: copies of the one pod or workload template until one does not fit (or ``limit``)."""
    from kschedctl.cli.progress import current
    from kschedctl.whatif.simulate import simulate_max
    from kschedctl.whatif.workloads import PodFactory

    if len(manifests.workloads) != 1:
        raise UsageError(f"--max needs exactly one pod or workload template, the files hold {len(manifests.workloads)}")
    w = manifests.workloads[0]
    w.as_template = True
    factory = PodFactory(manifests, cluster, private=True)
    return simulate_max(
        factory.cluster,
        cfg,
        factory.pods(w, None),
        registry,
        workload=w.display,
        limit=limit,
        batching=batching,
        owns_cluster=True,
        progress=current().counter("placing copies"),
    )


def _simulate_run(
    manifests: Manifests,
    cluster: Cluster,
    cfg: SchedulerConfig,
    registry: Registry,
    replicas: int | None,
    options: RunOptions,
) -> SimulationResult:
    """The pods of the files (workloads expanded as their controllers would, lazily) through the loop."""
    from kschedctl.cli.progress import current
    from kschedctl.whatif.simulate import simulate_streams, workload_streams
    from kschedctl.whatif.workloads import PodFactory

    factory = PodFactory(manifests, cluster, private=True)
    streams, excluded = workload_streams(manifests, factory, replicas)
    if not any(s.count for s in streams):
        raise UsageError("the workloads ask for no pods (replicas 0)")
    return simulate_streams(
        factory.cluster,
        cfg,
        streams,
        registry,
        options=options,
        exclude_pod_uids=excluded,
        owns_cluster=True,
        progress=current().counter("scheduling pods"),
    )
