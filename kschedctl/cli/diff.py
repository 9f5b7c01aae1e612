"""``kschedctl diff-profiles``: option parsing, the two sides, exit codes.

The comparison runs below the CLI (``whatif.run.diff_sides`` over ``whatif.diff``), the output is
``kschedctl.render.diff``'s. ``build_sides`` turns ``--config``/``--profile`` into the two
``Side`` values; a command comparing other sides (two versions of one configuration) builds its
own and calls the same ``diff_sides``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from kschedctl.cli.common import (
    EXIT_NO,
    EXIT_OK,
    WhatIfOutput,
    WhatIfOutputOpt,
    emit_report,
    guarded,
    worker_jobs,
)
from kschedctl.cli.options import (
    ClusterOptions,
    ContextOpt,
    FeatureGatesOpt,
    JobsOpt,
    KubeconfigOpt,
    KubeVersionOpt,
    LiveSnapshotOpt,
    NamespaceOpt,
    RequestTimeoutOpt,
    SchedulerOptions,
    VersionOptions,
    complete_pod_names,
)
from kschedctl.cli.plugin_opts import PluginModuleOpt
from kschedctl.cli.sources import hooks, open_for_pod, read_cluster
from kschedctl.errors import UsageError

if TYPE_CHECKING:
    from kschedctl.whatif.diff import Side


def build_sides(configs: list[str], profiles: list[str], setup: SchedulerOptions) -> tuple[Side, Side]:
    """The two sides from the ``--config`` and ``--profile`` options (see the command's help), each
    configuration loaded by ``setup`` (with the plugins it may name)."""
    from kschedctl.config import default_config
    from kschedctl.whatif.diff import Side

    if len(configs) > 2 or len(profiles) > 2:
        raise UsageError("give at most two --config and at most two --profile")
    if not configs and len(profiles) < 2:
        raise UsageError("nothing to compare: give two --config, or one --config, or two --profile")
    loaded = [(c, setup.config(c)) for c in configs]
    if len(loaded) == 2:
        (la, ca), (lb, cb) = loaded
    elif len(loaded) == 1 and len(profiles) == 2:
        (la, ca), (lb, cb) = loaded[0], loaded[0]
    else:
        (la, ca) = (f"default configuration of kube-scheduler v1.{setup.features.minor}", default_config(setup.features))
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
    output: WhatIfOutputOpt = WhatIfOutput.table,
    kubeconfig: KubeconfigOpt = None,
    context: ContextOpt = None,
    request_timeout: RequestTimeoutOpt = None,
    plugin_module: PluginModuleOpt = None,
    jobs: JobsOpt = None,
    kube_version: KubeVersionOpt = None,
    feature_gates: FeatureGatesOpt = None,
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
        from kschedctl.render.diff import render_diff_markdown, render_diff_table
        from kschedctl.snapshot.loader import read_stdin_once
        from kschedctl.whatif.run import DiffRequest, diff_sides

        if sum([name is not None, bool(filename), pending]) != 1:
            raise UsageError("give exactly one of: a pod NAME (with -n), -f FILE, or --pending")
        read_stdin_once(("-f", filename or []), ("--snapshot", snapshot or []))
        versions = VersionOptions(kube_version, feature_gates)
        source, ns = open_for_pod(ClusterOptions(snapshot, kubeconfig, context, request_timeout), namespace, name)
        setup = SchedulerOptions(plugin_module, versions, source)
        a, b = build_sides(list(config or []), list(profile or []), setup)
        request = DiffRequest(
            registry=setup.registry, cluster=read_cluster(source, setup), source=source.description, a=a, b=b, name=name,
            namespace=ns if name is not None else namespace, filenames=list(filename or []), pending=pending,
            jobs=worker_jobs(jobs),
        )
        report = diff_sides(request, hooks())
        emit_report(report.to_dict(), output, render_diff_table, render_diff_markdown, setup.features)
        return EXIT_NO if report.differs else EXIT_OK

    guarded(body)
