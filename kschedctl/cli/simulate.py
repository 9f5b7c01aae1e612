"""``kschedctl simulate``: its options as named types, the flag checks, exit codes.

The loop runs below the CLI (``usecases.simulate`` over ``whatif.simulate``), and so does a drain
(``--drain``, ``--scale-down``: ``usecases.drain`` over ``whatif.drain``, its options in
``cli.drain_opts``); the output is ``kschedctl.render``'s (``simulate``, ``drain``, ``runs``). This
module only connects them to the command line: each run calls one of the two use cases.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from kschedctl.cli.common import EXIT_NO, EXIT_OK, WhatIfOutput, WhatIfOutputOpt, emit_report, guarded
from kschedctl.cli.drain_opts import (
    CountOpt,
    DeleteEmptydirOpt,
    DisableEvictionOpt,
    DrainArgs,
    DrainOpt,
    DrainSelectorOpt,
    DrainTimeoutOpt,
    ForceOpt,
    IgnoreDaemonsetsOpt,
    ScaleDownOpt,
)
from kschedctl.cli.options import (
    ClusterOptions,
    ContextOpt,
    FeatureGatesOpt,
    KubeconfigOpt,
    KubeVersionOpt,
    LiveSnapshotOpt,
    NodeOrderOpt,
    RequestTimeoutOpt,
    SchedulerOptions,
    SeedOpt,
    VersionOptions,
)
from kschedctl.cli.plugin_opts import PluginModuleOpt
from kschedctl.cli.scaleup_opts import AddNodesOpt, MaxNewNodesOpt, ScaleUpArgs, scale_up_args
from kschedctl.cli.sources import hooks, open_source, read_cluster
from kschedctl.errors import UsageError

if TYPE_CHECKING:
    from kschedctl.kube.features import Features
    from kschedctl.snapshot.nodeorder import NodeOrderSpec
    from kschedctl.usecases.drain import DrainRequest
    from kschedctl.usecases.simulate import SimulateRequest
    from kschedctl.whatif.placements import RunOptions


FilenameOpt = Annotated[
    list[str] | None,
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

RunsOpt = Annotated[
    int | None,
    typer.Option(
        "--runs",
        min=2,
        metavar="N",
        help="Run the simulation N times, each with random node and start-up queue orders (from --seed), and show "
        "the range of outcomes: pods placed and preempted, per zone and node group, and the pods whose outcome changes.",
    ),
]
GroupByOpt = Annotated[
    str | None,
    typer.Option(
        "--group-by",
        metavar="LABEL",
        help="With --runs: the node label whose values are the node groups counted (default: the first node-pool "
        "label the nodes carry: karpenter.sh/nodepool, eks.amazonaws.com/nodegroup, cloud.google.com/gke-nodepool, "
        "kubernetes.azure.com/agentpool, node.kubernetes.io/instance-type); a label no node carries gives a note "
        "and no per-group counts, as kubectl -L shows an empty column.",
    ),
]

DEPRECATED_PREEMPTION_NOTE = (
    "--preemption is deprecated: preemption is applied by default now (victims deleted, the pod nominated); "
    "it is read as --retry-nominated, which schedules nominated pods again after the run"
)


def simulate_cmd(
    filename: FilenameOpt = None,
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
    output: WhatIfOutputOpt = WhatIfOutput.table,
    kubeconfig: KubeconfigOpt = None,
    context: ContextOpt = None,
    request_timeout: RequestTimeoutOpt = None,
    plugin_module: PluginModuleOpt = None,
    drain: DrainOpt = [],  # noqa: B006 (typer reads the default; it is never mutated)
    drain_selector: DrainSelectorOpt = None,
    ignore_daemonsets: IgnoreDaemonsetsOpt = False,
    delete_emptydir_data: DeleteEmptydirOpt = False,
    force: ForceOpt = False,
    disable_eviction: DisableEvictionOpt = False,
    drain_timeout: DrainTimeoutOpt = None,
    scale_down: ScaleDownOpt = None,
    count: CountOpt = 0,
    kube_version: KubeVersionOpt = None,
    feature_gates: FeatureGatesOpt = None,
    node_order_: NodeOrderOpt = "name",
    seed: SeedOpt = None,
    runs: RunsOpt = None,
    group_by: GroupByOpt = None,
    add_nodes: AddNodesOpt = None,
    max_new_nodes: MaxNewNodesOpt = None,
) -> None:
    """Schedule a set of pods one after another, as kube-scheduler's scheduling loop does.

    Pods are taken in queue order (priority, then creation time, then file order), one attempt
    each, after the snapshot's pending pods at equal priority (see --no-pending); workloads are
    expanded into the pods their controllers would create. Each placement is
    seen by the next cycle; OpportunisticBatching reuses a cycle's sorted scores for the next pod
    with the same signature; a preemption deletes its victims and nominates the pod, which is not
    retried (see --report-preemption, --retry-nominated). Reports each pod's node, the first pod
    that does not fit with its FitError, and what each node received.

    --drain NODE / --drain-selector: the nodes are cordoned and their pods evicted as kubectl drain
    does (DaemonSet and mirror pods stay; PodDisruptionBudgets, --delete-emptydir-data, --force,
    --disable-eviction); the replacements controllers create are placed by the same loop, and evictions a
    budget refuses are retried in rounds as kubectl does (--timeout).
    --scale-down SELECTOR removes the group's nodes one at a time, least requested first.

    --node-order name|random|FILE: the order the scheduler was handed the nodes (and, random, the pending
    pods) when it started, which decides ties and early stops; --runs N repeats the run with random orders
    (with --drain: of where the replacements land) and shows the range of outcomes.

    --add-nodes NODE=N adds N new nodes like NODE (named NODE-new-1..N) before the run; NODE=auto finds
    the least N up to --max-new-nodes (100) that places every pod (each count tried is a run of the loop).

    Exit status: 0 every pod was scheduled (with --max: the count was found; with --drain: the drain
    succeeds with every replacement placed; with --runs: so in every run), 1 otherwise, 2 bad input or usage.
    """

    def body() -> int:
        from kschedctl.usecases.simulate import SimulateRequest

        drains = DrainArgs(drain, drain_selector, scale_down, count, delete_emptydir_data, force, disable_eviction, ignore_daemonsets,
                           drain_timeout)
        files, scale = filename or [], scale_up_args(add_nodes, max_new_nodes)
        _check_inputs(files, snapshot or [], drains, max_, scale, runs)
        _check_simulate_flags(replicas, max_, limit, report_preemption, retry_nominated or preemption)
        source = open_source(ClusterOptions(snapshot, kubeconfig, context, request_timeout))
        setup = SchedulerOptions(plugin_module, VersionOptions(kube_version, feature_gates), source)
        cfg, cluster = setup.config(config), read_cluster(source, setup.features)
        options = _run_options(report_preemption, retry_nominated or preemption, no_batching, max_pods, no_pending)
        order = _node_order(node_order_, seed, runs, group_by, bool(drains.scale_down))
        if drains.wanted:
            return _drain_and_report(drains.request(cluster, cfg, setup.registry, options, order, runs, group_by), output)
        request = SimulateRequest(
            registry=setup.registry, config=cfg, cluster=cluster, filenames=files, replicas=replicas,
            max_copies=max_, limit=limit, options=options, notes=[DEPRECATED_PREEMPTION_NOTE] if preemption else [],
            node_order=order, runs=runs or 1, group_by=group_by, add_nodes=scale.specs, max_new_nodes=scale.max_new_nodes,
            source=source.description,
        )
        return _simulate_and_report(request, output, setup.features)

    guarded(body)


def _simulate_and_report(request: SimulateRequest, output: WhatIfOutput, features: Features) -> int:
    """One run or, with ``--runs``, several (``usecases.simulate``): the report, the exit status."""
    from kschedctl.usecases.simulate import simulate
    from kschedctl.whatif.runs import RunsReport

    result = simulate(request, hooks())
    if isinstance(result, RunsReport):
        from kschedctl.render.runs import render_runs_markdown, render_runs_table

        emit_report(result.to_dict(), output, render_runs_table, render_runs_markdown, features)
        return EXIT_OK if request.max_copies or result.succeeded else EXIT_NO
    from kschedctl.render.simulate import render_simulation_markdown, render_simulation_table

    emit_report(result.to_dict(), output, render_simulation_table, render_simulation_markdown, features)
    return EXIT_NO if result.error or not (request.max_copies or result.all_placed) else EXIT_OK


def _drain_and_report(request: DrainRequest, output: WhatIfOutput) -> int:
    """Drain (or scale down) once or, with ``--runs``, several times (``usecases.drain``); print the report
    (headed by the configuration's Kubernetes version). 0 when the drain succeeds with every pod placed
    (in every run), else 1."""
    from kschedctl.usecases.drain import drain
    from kschedctl.whatif.drain import DrainResult
    from kschedctl.whatif.runs import RunsReport

    result = drain(request, hooks())
    features = request.config.features
    if isinstance(result, RunsReport):
        from kschedctl.render.runs import render_runs_markdown, render_runs_table

        emit_report(result.to_dict(), output, render_runs_table, render_runs_markdown, features)
    elif isinstance(result, DrainResult):
        from kschedctl.render.drain import render_drain_markdown, render_drain_table

        emit_report(result.to_dict(), output, render_drain_table, render_drain_markdown, features)
    else:
        from kschedctl.render.drain import render_scale_down_markdown, render_scale_down_table

        emit_report(result.to_dict(), output, render_scale_down_table, render_scale_down_markdown, features)
    return EXIT_OK if result.succeeded else EXIT_NO


def _node_order(value: str, seed: int | None, runs: int | None, group_by: str | None, scale_down: bool) -> NodeOrderSpec:
    """``--node-order`` and ``--seed``, checked with ``--runs`` (which draws random orders itself)."""
    from kschedctl.cli.options import node_order
    from kschedctl.snapshot.nodeorder import NAME, RANDOM, NodeOrderSpec

    if group_by is not None and runs is None:
        raise UsageError("--group-by goes with --runs")
    if runs is None:
        return node_order(value, seed)
    if scale_down:
        raise UsageError("--runs repeats a run of the pods of -f, --max or --drain: it does not go with --scale-down")
    if value not in (NAME, RANDOM):
        raise UsageError("--runs draws a random node order for each run: it does not go with --node-order FILE")
    return NodeOrderSpec(RANDOM, seed)


def _check_inputs(files: list[str], snapshot: list[str], drains: DrainArgs, max_: bool, scale: ScaleUpArgs,
                  runs: int | None) -> None:
    """Standard input read once; pods to place (with --add-nodes, the pending pods are enough) or nodes to
    drain, not both."""
    from kschedctl.snapshot.loader import read_stdin_once

    read_stdin_once(("-f", files), ("--snapshot", snapshot))
    scale.check(max_, runs, drains.wanted)
    drains.check(files or [f"--add-nodes {s.template}" for s in scale.specs], max_)


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


def _run_options(report_preemption: bool, retry: bool, no_batching: bool, max_pods: int, no_pending: bool) -> RunOptions:
    """The loop's options from the flags (``--max`` reads only ``batching``)."""
    from kschedctl.whatif.placements import APPLY, REPORT, RunOptions

    return RunOptions(
        preemption=REPORT if report_preemption else APPLY,
        retry_nominated=retry,
        batching=not no_batching,
        max_pods=max_pods,
        pending=not no_pending,
    )
