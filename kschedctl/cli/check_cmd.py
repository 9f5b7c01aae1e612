"""``kschedctl check``: scheduling regression tests, made to run in CI.

The command parses options, reads once what every scenario shares (the cluster of scenarios
without cluster.yaml, from ``--snapshot`` or the live cluster; the ``--config`` of scenarios
without config.yaml), hands the scenarios to the one scenario loop (``kschedctl.check.suite``),
then rewrites expectations (``--update``), renders, and writes the JUnit report (``--junit``).
Exit status: 0 every scenario passed (or was updated), 1 one failed, 2 bad input of a scenario
or of the command.
"""

from __future__ import annotations

import traceback
from pathlib import Path
from typing import Annotated, Any

import typer

from kschedctl.cli.app import (
    CheckOutput,
    _state,
    app,
    err,
    guarded,
    note,
    notes_console,
    stdout_console,
    worker_jobs,
)
from kschedctl.cli.options import ContextOpt, JobsOpt, KubeconfigOpt, RequestTimeoutOpt, live_options
from kschedctl.cli.plugin_opts import PluginModuleOpt, build_registry

CheckSnapshotOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--snapshot",
        "-s",
        metavar="PATH",
        help="The cluster of scenarios without cluster.yaml: YAML/JSON file, kind: List, directory, or - for stdin. "
        "Repeatable. Without it they are checked against the live cluster of the kubeconfig's context "
        "(read once, GET requests only).",
    ),
]


@app.command()
def check(
    paths: Annotated[
        list[str],
        typer.Argument(metavar="PATH...", help="Scenario directories, folders holding them, or files inside a scenario directory."),
    ],
    output: Annotated[CheckOutput, typer.Option("--output", "-o", metavar="FORMAT", help="table, json, yaml or markdown.")] = CheckOutput.table,
    junit: Annotated[
        Path | None,
        typer.Option("--junit", metavar="FILE", help="Also write a JUnit XML report: one testcase per scenario (CI test reports)."),
    ] = None,
    update: Annotated[
        bool,
        typer.Option(
            "--update",
            help="Rewrite failing expectations from the results (only the keys each file has; never those kube-scheduler "
            "wrote, with k8sVersion) and print the diff.",
        ),
    ] = False,
    changed: Annotated[
        bool,
        typer.Option(
            "--changed",
            help="PATHs are changed files (as pre-commit passes them): check the scenarios they belong to, skip the others.",
        ),
    ] = False,
    snapshot: CheckSnapshotOpt = None,
    config: Annotated[
        Path | None,
        typer.Option("--config", "-c", metavar="FILE", help="KubeSchedulerConfiguration of scenarios without config.yaml."),
    ] = None,
    kubeconfig: KubeconfigOpt = None,
    context: ContextOpt = None,
    request_timeout: RequestTimeoutOpt = None,
    plugin_module: PluginModuleOpt = None,
    jobs: JobsOpt = None,
) -> None:
    """Run scheduling regression tests: each scenario has cluster.yaml, pod.yaml, optional config.yaml and
    expected.json/expected.yaml (partial: only the keys present are compared). A sequence scenario has
    pods.yaml (pods or workloads) instead of pod.yaml and expected-sequence.json/yaml: the pods are placed
    one after another as `simulate` does, and compared pod by pod. A scenario without cluster.yaml is
    checked against --snapshot, or else the live cluster.

    Prints a table, "N passed, M failed", then each failure with its differences. Exit status: 0 all
    passed (or were updated), 1 a scenario failed, 2 bad input (of a scenario: the others still run).
    """
    def body() -> int:
        from kschedctl.check.junit import write_junit
        from kschedctl.check.report import exit_status
        from kschedctl.check.runner import discover_scenarios, has_cluster
        from kschedctl.check.suite import Shared, run_suite
        from kschedctl.check.update import apply_updates
        from kschedctl.cli.progress import current, done
        from kschedctl.config import load_config
        from kschedctl.render.check import render_check

        scenarios = discover_scenarios(paths, changed=changed)
        if changed and not scenarios:
            note("no given path belongs to a scenario: nothing to check")
        registry = build_registry(plugin_module)
        shared = Shared(registry, config=load_config(str(config), registry) if config else None)
        clusterless = [d for d in scenarios if not has_cluster(d)]
        if clusterless:
            shared.cluster = _shared_cluster(clusterless, snapshot, kubeconfig, context, request_timeout)
        elif snapshot:
            note("--snapshot is not used: every scenario has its own cluster.yaml")
        results = run_suite(scenarios, shared, current().counter("running scenarios"), jobs=worker_jobs(jobs))
        if update:
            apply_updates(results, paths)
        done()
        _report_errors(results)
        render_check(results, output.value, stdout_console(), notes_console())
        if junit is not None:
            write_junit(str(junit), results)
        return exit_status(results)

    guarded(body)


def _shared_cluster(
    clusterless: list[Path], snapshot: list[str] | None, kubeconfig: str | None, context: str | None, timeout: str | None
) -> Any:
    """The cluster of scenarios without cluster.yaml, read once: ``--snapshot`` files, else the live cluster."""
    from kschedctl.cli.live import open_source, read_cluster
    from kschedctl.snapshot.live import NoClusterConfigured

    try:
        source = open_source(snapshot, live_options(kubeconfig, context, timeout))
    except NoClusterConfigured as e:
        more = f" (and {len(clusterless) - 1} more scenarios)" if len(clusterless) > 1 else ""
        raise NoClusterConfigured(f"{clusterless[0]}{more} has no cluster.yaml, and there is {e}") from None
    return read_cluster(source)


def _report_errors(results: list[Any]) -> None:
    """One line on stderr per scenario with bad input (its traceback too with ``--debug``)."""
    for r in results:
        if r.error:
            if _state["debug"] and r.exception is not None:
                traceback.print_exception(r.exception)
            err(f"error: {r.error}")
