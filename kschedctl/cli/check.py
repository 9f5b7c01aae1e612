"""``kschedctl check``: scheduling regression tests, made to run in CI.

The command parses options, finds the scenarios, reads once what they share (the cluster of
scenarios without cluster.yaml, from ``--snapshot`` or the live cluster; the ``--config`` of
scenarios without config.yaml), hands them to ``usecases.check.run_check`` (the scenario loop and
``--update``), then renders (``render.check``) and writes the JUnit report (``--junit``).
Exit status: 0 every scenario passed (or was updated), 1 one failed, 2 bad input of a scenario
or of the command.
"""

from __future__ import annotations

import traceback
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from kschedctl.cli.common import (
    CheckOutput,
    debug,
    err,
    guarded,
    note,
    notes_console,
    stdout_console,
    worker_jobs,
)
from kschedctl.cli.options import (
    ClusterOptions,
    ContextOpt,
    FeatureGatesOpt,
    JobsOpt,
    KubeconfigOpt,
    KubeVersionOpt,
    RequestTimeoutOpt,
    SchedulerOptions,
    VersionOptions,
)
from kschedctl.cli.plugin_opts import PluginModuleOpt
from kschedctl.cli.sources import hooks, open_source, read_cluster

if TYPE_CHECKING:
    from kschedctl.check.runner import ScenarioResult
    from kschedctl.check.versions import ScenarioVersions
    from kschedctl.config.types import SchedulerConfig
    from kschedctl.kube.features import Features
    from kschedctl.snapshot.source import Source

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
            help="PATHs are changed files (as pre-commit passes them): check the scenarios they belong to, skip the others; "
            "a changed --config or --snapshot file checks every scenario below the current directory that uses it.",
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
    kube_version: KubeVersionOpt = None,
    feature_gates: FeatureGatesOpt = None,
    jobs: JobsOpt = None,
) -> None:
    """Run scheduling regression tests: each scenario has cluster.yaml, pod.yaml, optional config.yaml and
    expected.json/expected.yaml (partial: only the keys present are compared). A sequence scenario has
    pods.yaml (pods or workloads) instead of pod.yaml and expected-sequence.json/yaml: the pods are placed
    one after another as `simulate` does, and compared pod by pod. A scenario without cluster.yaml is
    checked against --snapshot, or else the live cluster.

    Each scenario runs as the version its cluster records (its cluster.yaml's, or that of --snapshot or the
    live cluster; else 1.35), as explain chooses; --kube-version runs every scenario as that version. A run
    is compared with the scenario's expected-v1.XX.json/yaml when it has one, else with expected.json/yaml.

    Prints a table, "N passed, M failed", then each failure with its differences. Exit status: 0 all
    passed (or were updated), 1 a scenario failed, 2 bad input (of a scenario: the others still run).
    """
    def body() -> int:
        from kschedctl.check.report import exit_status
        from kschedctl.check.runner import discover_scenarios
        from kschedctl.usecases.check import CheckRequest, run_check

        scenarios = discover_scenarios(paths, changed=changed)
        if changed:
            scenarios = _changed_shared(scenarios, paths, config, snapshot)
        versions = VersionOptions(kube_version, feature_gates)
        source = _shared_source(scenarios, ClusterOptions(snapshot, kubeconfig, context, request_timeout))
        setup = SchedulerOptions(plugin_module, versions, source)
        chosen = _scenario_versions(scenarios, setup, fixed=kube_version is not None)
        request = CheckRequest(
            scenarios=scenarios, registry=setup.registry, configs=_configs(config, chosen.used(scenarios), setup),
            cluster=read_cluster(source, setup.features) if source is not None else None,
            update=update, paths=paths, jobs=worker_jobs(jobs), versions=chosen,
        )
        results = run_check(request, hooks())
        _report(results, output, junit)
        return exit_status(results)

    guarded(body)


def _changed_shared(scenarios: list[Path], paths: list[str], config: Path | None, snapshot: list[str] | None) -> list[Path]:
    """``--changed``: add the scenarios that use a changed ``--config`` or ``--snapshot`` file, and say so;
    say so too when nothing is left to check."""
    from kschedctl.check.runner import users_of_shared

    users, notes = users_of_shared(paths, str(config) if config else None, list(snapshot or []))
    for line in notes:
        note(line)
    known = {d.resolve() for d in scenarios}
    scenarios = scenarios + [d for d in users if d.resolve() not in known]
    if not scenarios:
        note("no given path belongs to a scenario, nor is the --config or a --snapshot file: nothing to check")
    return scenarios


def _shared_source(scenarios: list[Path], where: ClusterOptions) -> Source | None:
    """Where the cluster of scenarios without cluster.yaml comes from: ``--snapshot`` files, else the live
    cluster; None when every scenario has its own."""
    from kschedctl.check.runner import has_cluster

    clusterless = [d for d in scenarios if not has_cluster(d)]
    if not clusterless:
        if where.snapshot:
            note("--snapshot is not used: every scenario has its own cluster.yaml")
        return None
    from kschedctl.snapshot.live import NoClusterConfigured

    try:
        return open_source(where)
    except NoClusterConfigured as e:
        more = f" (and {len(clusterless) - 1} more scenarios)" if len(clusterless) > 1 else ""
        raise NoClusterConfigured(f"{clusterless[0]}{more} has no cluster.yaml, and there is {e}") from None


def _scenario_versions(scenarios: list[Path], setup: SchedulerOptions, *, fixed: bool) -> ScenarioVersions:
    """The version each scenario follows, as ``explain`` would choose it for its cluster: ``--kube-version``
    for all (``fixed``); else a scenario's own cluster.yaml's recorded version, and for the others the
    shared cluster's (``setup.features``); else v1.35. A gate a chosen version lacks stops the command."""
    from kschedctl.check.versions import ScenarioVersions, choose_versions
    from kschedctl.kube.versions import DEFAULT_FEATURES

    if fixed:
        return ScenarioVersions(setup.features)
    shared = setup.features if setup.source is not None else DEFAULT_FEATURES
    return choose_versions(scenarios, shared, setup.versions.resolve, note)


def _configs(path: Path | None, used: list[Features], setup: SchedulerOptions) -> dict[int, SchedulerConfig]:
    """``--config`` (of scenarios without config.yaml) as each version the scenarios run as loads it (with no
    scenario, as ``setup``'s): a bad file stops the command before any scenario runs."""
    from kschedctl.config import load_config

    return {f.minor: load_config(str(path), setup.registry, f) for f in used or [setup.features]} if path else {}


def _report(results: list[ScenarioResult], output: CheckOutput, junit: Path | None) -> None:
    """Bad input on stderr, the results on stdout (with the version each scenario ran as, when it is not
    the default one), and the JUnit report when asked for."""
    from kschedctl.check.junit import write_junit
    from kschedctl.cli.progress import done
    from kschedctl.render.check import render_check

    done()
    _report_errors(results)
    render_check(results, output.value, stdout_console(), notes_console())
    if junit is not None:
        write_junit(str(junit), results)


def _report_errors(results: list[ScenarioResult]) -> None:
    """One line on stderr per scenario with bad input (its traceback too with ``--debug``)."""
    for r in results:
        if r.error:
            if debug.on and r.exception is not None:
                traceback.print_exception(r.exception)
            err(f"error: {r.error}")
