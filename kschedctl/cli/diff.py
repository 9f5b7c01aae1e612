"""``kschedctl diff-profiles`` and ``kschedctl diff-versions``: option parsing, the two sides, exit codes.

The comparisons run below the CLI (``usecases.diff_profiles``, ``usecases.diff_versions``, over
``whatif.diff``), the output is ``kschedctl.render.diff``'s. ``build_sides`` turns
``--config``/``--profile`` into the two ``Side`` values; ``version_sides`` loads one configuration
as ``--from`` and ``--to`` load it, for ``diff-versions`` (whose use case adds the attribution to
the rule changes between the versions). ``ComparedPods`` holds the pod options both commands share.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, TypeVar

import typer

from kschedctl.cli.common import (
    EXIT_NO,
    EXIT_OK,
    Output,
    emit_report,
    guarded,
    worker_jobs,
)
from kschedctl.cli.options import (
    AllNamespacesOpt,
    ClusterOptions,
    ConfigOpt,
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
    from collections.abc import Callable

    from kschedctl.kube.features import Features
    from kschedctl.snapshot.source import Source
    from kschedctl.usecases.comparison import ComparisonRequest
    from kschedctl.whatif.diff import Side

DiffOutputOpt = Annotated[
    Output,
    typer.Option("--output", "-o", metavar="FORMAT",
                 help="table (the short answer), wide (with the per-plugin tables), json, yaml or markdown."),
]

#: The kind of comparison a request is built for (``diff-profiles``' or ``diff-versions``').
Compared = TypeVar("Compared", bound="ComparisonRequest")


PodNameArg = Annotated[
    str | None, typer.Argument(metavar="NAME", help="Name of a pod in the snapshot or the live cluster.", autocompletion=complete_pod_names)
]
PodFilesOpt = Annotated[
    list[str] | None,
    typer.Option("--filename", "-f", metavar="FILE", help="Pods or workloads (one representative pod each); - for stdin. Repeatable."),
]
PendingOpt = Annotated[
    bool, typer.Option("--pending", help="Every pending pod: of the namespace with -n, of every namespace without it (or with -A).")
]


@dataclass(frozen=True)
class ComparedPods:
    """The pods a comparison runs on (one NAME, ``-f`` files, or ``--pending`` of ``-n NS`` or of every
    namespace, ``-A`` or no ``-n``) and where they are."""

    name: str | None
    namespace: str | None
    filenames: list[str]
    pending: bool
    where: ClusterOptions
    all_namespaces: bool = False

    def open(self) -> tuple[Source, str]:
        """The options checked, then the source opened (the named pod checked first)."""
        from kschedctl.snapshot.loader import read_stdin_once

        if sum([self.name is not None, bool(self.filenames), self.pending]) != 1:
            raise UsageError("give exactly one of: a pod NAME (with -n), -f FILE, or --pending")
        if self.all_namespaces and not self.pending:
            raise UsageError("-A goes with --pending (every pending pod of every namespace)")
        if self.all_namespaces and self.namespace:
            raise UsageError("give -n NAMESPACE or -A, not both")
        read_stdin_once(("-f", self.filenames), ("--snapshot", self.where.snapshot or []))
        return open_for_pod(self.where, self.namespace, self.name)

    def request(self, kind: type[Compared], sides: tuple[Side, Side], source: Source, ns: str, setup: SchedulerOptions,
                jobs: int | None, features: Features) -> Compared:
        """The request (of the ``kind`` of comparison) comparing ``sides`` on these pods, the cluster read as
        ``features``' version reads it."""
        return kind(
            registry=setup.registry, cluster=read_cluster(source, features), source=source.description, a=sides[0],
            b=sides[1], name=self.name, namespace=ns if self.name is not None else self.namespace,
            filenames=self.filenames, pending=self.pending, jobs=worker_jobs(jobs),
        )


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
    name: PodNameArg = None,
    namespace: NamespaceOpt = None,
    filename: PodFilesOpt = None,
    pending: PendingOpt = False,
    all_namespaces: AllNamespacesOpt = False,
    snapshot: LiveSnapshotOpt = None,
    config: Annotated[
        list[str] | None,
        typer.Option("--config", "-c", metavar="FILE", help="KubeSchedulerConfiguration of side A, then of side B. Repeatable (at most 2)."),
    ] = None,
    profile: Annotated[
        list[str] | None,
        typer.Option("--profile", "-p", metavar="NAME", help="schedulerName of the profile to use (one for both sides, or A then B)."),
    ] = None,
    output: DiffOutputOpt = Output.table,
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
    changes; score changes alone do not count. The default is short: per differing pod, the verdicts
    that change and the plugins that moved the totals most; -o wide adds every table.

    Exit status: 0 no pod differs, 1 some pod differs, 2 bad input or usage.
    """

    def body() -> int:
        from kschedctl.render.diff import render_diff_markdown
        from kschedctl.usecases.diff_profiles import DiffProfilesRequest, diff_profiles

        versions = VersionOptions(kube_version, feature_gates)
        where = ClusterOptions(snapshot, kubeconfig, context, request_timeout)
        pods = ComparedPods(name, namespace, list(filename or []), pending, where, all_namespaces)
        source, ns = pods.open()
        setup = SchedulerOptions(plugin_module, versions, source)
        sides = build_sides(list(config or []), list(profile or []), setup)
        report = diff_profiles(pods.request(DiffProfilesRequest, sides, source, ns, setup, jobs, setup.features), hooks())
        emit_report(report.to_dict(), output, diff_table(output), render_diff_markdown, setup.features)
        return EXIT_NO if report.differs else EXIT_OK

    guarded(body)


def version_sides(
    config: str | None, profile: str | None, versions: tuple[str | None, str], setup: SchedulerOptions
) -> tuple[Side, Side]:
    """The two sides of ``diff-versions``: one configuration (None: the defaults) loaded as each version
    loads it; ``--from`` defaults to the version ``setup`` chose for the cluster."""
    from kschedctl.config import load_config
    from kschedctl.whatif.diff import Side

    from_, to = versions
    gates = setup.versions.feature_gates
    fa = VersionOptions(from_, gates, "--from").features() if from_ is not None else setup.features
    fb = VersionOptions(to, gates, "--to").features()
    sides = []
    for name, features in (("A", fa), ("B", fb)):
        cfg = load_config(config, setup.registry, features)
        label = f"kube-scheduler {features.release}, " + (str(config) if config else "default configuration")
        if profile is not None and cfg.profile_for(profile) is None:
            raise UsageError(f'--profile {profile}: {label} has no profile "{profile}"')
        sides.append(Side(name, label + (f" (profile {profile})" if profile else ""), cfg, profile))
    return sides[0], sides[1]


def diff_versions_cmd(
    name: PodNameArg = None,
    to: Annotated[str, typer.Option("--to", metavar="VERSION", help="The version to compare with: 1.33, 1.34, 1.35, 1.36 or 1.37.")] = "",
    from_: Annotated[
        str | None,
        typer.Option("--from", metavar="VERSION", help="The version compared from (default: the cluster's, as --kube-version's default)."),
    ] = None,
    namespace: NamespaceOpt = None,
    filename: PodFilesOpt = None,
    pending: PendingOpt = False,
    all_namespaces: AllNamespacesOpt = False,
    snapshot: LiveSnapshotOpt = None,
    config: ConfigOpt = None,
    profile: Annotated[str | None, typer.Option("--profile", "-p", metavar="NAME", help="schedulerName of the profile to use.")] = None,
    output: DiffOutputOpt = Output.table,
    kubeconfig: KubeconfigOpt = None,
    context: ContextOpt = None,
    request_timeout: RequestTimeoutOpt = None,
    plugin_module: PluginModuleOpt = None,
    jobs: JobsOpt = None,
    feature_gates: FeatureGatesOpt = None,
) -> None:
    """Compare what two Kubernetes versions' kube-scheduler decide for the same pods (what an upgrade changes).

    The same configuration (--config, else each version's defaults) and cluster under --from and --to
    (--feature-gates applies to both, and to reading the cluster). Per pod: the decision of each version, the
    nodes whose Filter verdict changes, the scores on the node each selects, and every difference in words by
    kind: the outcome (node, preemption, a node feasible on one side only), a status code (whether preemption
    tries a node), scores, or messages only; under each, the rule changes between the versions that caused it,
    e.g. "v1.36: NodeResourcesBalancedAllocation scores the change in balance the pod makes" (from 1.36 to 1.35:
    "back before v1.36: ..."). A pod differs when any of these changes. The same version on both sides is said
    in one line. The default is short (the differences in words, each rule change once); -o wide adds the
    Filter verdict, status code and per-plugin score tables.

    Exit status: 0 no pod differs, 1 some pod differs, 2 bad input or usage.
    """

    def body() -> int:
        from kschedctl.render.diff import render_diff_markdown
        from kschedctl.usecases.diff_versions import DiffVersionsRequest, diff_versions
        from kschedctl.whatif.versions import same_rules

        if not to:
            raise UsageError("give --to VERSION (1.33, 1.34, 1.35, 1.36 or 1.37)")
        # both checked before anything is read; the gates apply to both versions
        VersionOptions(to, feature_gates, "--to"), VersionOptions(from_, feature_gates, "--from")
        where = ClusterOptions(snapshot, kubeconfig, context, request_timeout)
        pods = ComparedPods(name, namespace, list(filename or []), pending, where, all_namespaces)
        source, ns = pods.open()
        setup = SchedulerOptions(plugin_module, VersionOptions(from_, feature_gates, "--from"), source)
        sides = version_sides(str(config) if config else None, profile, (from_, to), setup)
        same = same_rules(sides[0].config.features, sides[1].config.features)
        if same is not None:
            emit_report({"title": "kschedctl diff-versions", **same_sides_report(sides, same)}, output,
                        diff_table(output), render_diff_markdown)
            return EXIT_OK
        report = diff_versions(pods.request(DiffVersionsRequest, sides, source, ns, setup, jobs, newer(*sides)), hooks())
        emit_report({"title": "kschedctl diff-versions", **report.to_dict()}, output, diff_table(output), render_diff_markdown)
        return EXIT_NO if report.differs else EXIT_OK

    guarded(body)


def same_sides_report(sides: tuple[Side, Side], sentence: str) -> dict[str, object]:
    """What ``diff-versions`` answers when both sides run one version with the same gates: the sides and the
    sentence, no pod compared (``render.diff`` prints the sentence alone)."""
    return {"a": sides[0].to_dict(), "b": sides[1].to_dict(), "sameSides": True, "differs": False, "pods": [],
            "notes": [sentence]}


def newer(a: Side, b: Side) -> Features:
    """The version the cluster is read as: the newer of the two (it serves every API kind the older one
    does, so objects only the newer version's apiserver accepts are still read)."""
    return max((a, b), key=lambda s: s.config.features.minor).config.features


def diff_table(output: Output) -> Callable[..., None]:
    """The terminal renderer of a comparison: the short answer, or with ``-o wide`` every table."""
    from kschedctl.render.diff import render_diff_table

    wide = output == Output.wide
    return lambda report, console, notes: render_diff_table(report, console, notes, wide=wide)
