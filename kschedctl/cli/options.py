"""The options commands share: kubectl's connection and scoping flags, ``--config``, ``--jobs``, and the
two objects commands gather them in.

``explain pod``, ``explain pending``, ``snapshot`` and the others take the same ``--kubeconfig``,
``--context``, ``--request-timeout``, ``-n``, ``-A`` and ``-l`` flags with the same meaning as
kubectl's; they are declared once here, with their shell completions (contexts from the
kubeconfig, namespaces and pending pods from the cluster). A command gathers the flags that say
where its cluster comes from in a ``ClusterOptions`` (opened by ``cli.sources``) and those that
set up the scheduler in a ``SchedulerOptions``, which loads every configuration a command runs
with, as the version and feature gates of its ``VersionOptions`` (``--kube-version``,
``--feature-gates``, else the cluster's own version) load them. This module imports only typer, so
``kschedctl --help`` stays fast.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from kschedctl.cli.plugin_opts import build_registry
from kschedctl.errors import UsageError

if TYPE_CHECKING:
    from kschedctl.config.types import SchedulerConfig
    from kschedctl.framework.registry import Registry
    from kschedctl.kube.features import Features
    from kschedctl.snapshot.live import LiveCluster, LiveOptions
    from kschedctl.snapshot.nodeorder import NodeOrderSpec
    from kschedctl.snapshot.source import Source

#: How long a shell completion may wait for the cluster before offering nothing (seconds), unless
#: ``KSCHEDCTL_COMPLETION_TIMEOUT`` says otherwise (0: no limit; the test suite raises it, so that a
#: loaded machine cannot turn a completion into nothing).
COMPLETION_TIMEOUT = 2.0
COMPLETION_TIMEOUT_ENV = "KSCHEDCTL_COMPLETION_TIMEOUT"


def completion_timeout() -> float:
    """``COMPLETION_TIMEOUT``, or the seconds ``KSCHEDCTL_COMPLETION_TIMEOUT`` gives (a bad value is ignored)."""
    try:
        return max(0.0, float(os.environ.get(COMPLETION_TIMEOUT_ENV, COMPLETION_TIMEOUT)))
    except ValueError:
        return COMPLETION_TIMEOUT


# --------------------------------------------------------------------------- completions


def complete_contexts(ctx: typer.Context, incomplete: str) -> list[str]:
    from kschedctl.snapshot.live import kubeconfig_contexts

    try:
        names, _ = kubeconfig_contexts(ctx.params.get("kubeconfig"))
    except Exception:
        return []
    return [n for n in names if n.startswith(incomplete)]


def _completion_cluster(ctx: typer.Context) -> LiveCluster | None:
    from kschedctl.snapshot.live import LiveCluster, LiveOptions

    try:
        return LiveCluster(
            LiveOptions(
                kubeconfig=ctx.params.get("kubeconfig"),
                context=ctx.params.get("context"),
                request_timeout=completion_timeout(),
                redact=True,
            )
        )
    except Exception:
        return None


def _completion_snapshot(ctx: typer.Context) -> list[tuple[str, str, bool]] | None:
    """(namespace, name, pending) of every pod in the ``--snapshot`` files given so far; None without
    ``--snapshot`` (stdin is not read while completing), [] when they cannot be read."""
    paths = [p for p in (ctx.params.get("snapshot") or []) if p != "-"]
    if not paths:
        return None
    from kschedctl.snapshot.loader import load_cluster

    try:
        cluster = load_cluster(paths)
    except Exception:
        return []
    return [(p.namespace, p.name, not p.node_name) for p in cluster.pods]


def complete_namespaces(ctx: typer.Context, incomplete: str) -> list[str]:
    from kschedctl.snapshot.source import RESOURCES

    pods = _completion_snapshot(ctx)
    if pods is not None:
        return sorted({ns for ns, _, _ in pods if ns.startswith(incomplete)})
    cluster = _completion_cluster(ctx)
    if cluster is None:
        return []
    try:
        items = cluster.list_items(next(r for r in RESOURCES if r.kind == "Namespace")) or []
    except Exception:
        return []
    names = sorted(str((i.get("metadata") or {}).get("name") or "") for i in items)
    return [n for n in names if n and n.startswith(incomplete)]


def complete_pod_names(ctx: typer.Context, incomplete: str) -> list[str]:
    """Pods of the namespace given so far (default: the context's, "default" for snapshot files), pending
    ones first: from the ``--snapshot`` files when given, else from the live cluster (a short timeout)."""
    from kschedctl.snapshot.source import POD

    snapshot_pods = _completion_snapshot(ctx)
    if snapshot_pods is not None:
        namespace = ctx.params.get("namespace") or "default"
        names = [(not pending, name) for ns, name, pending in snapshot_pods if ns == namespace and name.startswith(incomplete)]
        return [name for _, name in sorted(names)]
    cluster = _completion_cluster(ctx)
    if cluster is None:
        return []
    namespace = ctx.params.get("namespace") or cluster.namespace
    try:
        items = cluster.list_items(POD, namespace=namespace) or []
    except Exception:
        return []
    pending: list[str] = []
    bound: list[str] = []
    for i in items:
        name = str((i.get("metadata") or {}).get("name") or "")
        if name.startswith(incomplete):
            (bound if (i.get("spec") or {}).get("nodeName") else pending).append(name)
    return sorted(pending) + sorted(bound)


# --------------------------------------------------------------------------- options

LiveSnapshotOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--snapshot",
        "-s",
        metavar="PATH",
        help="Cluster snapshot: YAML/JSON file, kind: List, directory, or - for stdin. Repeatable. "
        "Without it, the live cluster of the kubeconfig's current context is read (nothing is written to it).",
    ),
]
NamespaceOpt = Annotated[
    str | None,
    typer.Option(
        "--namespace",
        "-n",
        metavar="NAMESPACE",
        help="Namespace (default: the kubeconfig context's namespace; 'default' for snapshot files).",
        autocompletion=complete_namespaces,
    ),
]
AllNamespacesOpt = Annotated[bool, typer.Option("--all-namespaces", "-A", help="All namespaces.")]
SelectorOpt = Annotated[
    str | None,
    typer.Option("--selector", "-l", metavar="SELECTOR", help="Label selector for pods, as kubectl's (app=web,tier!=db, env in (a,b))."),
]
KubeconfigOpt = Annotated[
    str | None,
    typer.Option("--kubeconfig", metavar="FILE", help="Kubeconfig file (default: KUBECONFIG, then ~/.kube/config, then in-cluster)."),
]
ContextOpt = Annotated[
    str | None,
    typer.Option("--context", metavar="CONTEXT", help="Kubeconfig context to use (default: the current context).", autocompletion=complete_contexts),
]
RequestTimeoutOpt = Annotated[
    str | None,
    typer.Option(
        "--request-timeout",
        metavar="DURATION",
        help="Give up on a request after this long: seconds, or a duration such as 5s, 1m, 500ms. 0 waits forever (the default).",
    ),
]
ConfigOpt = Annotated[
    Path | None,
    typer.Option("--config", "-c", metavar="FILE", help="KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1)."),
]
ChunkSizeOpt = Annotated[
    int,
    typer.Option("--chunk-size", min=1, metavar="N", help="List large collections in pages of this many objects (limit/continue)."),
]

JobsOpt = Annotated[
    int | None,
    typer.Option(
        "--jobs",
        "-j",
        min=0,
        metavar="N",
        help="Worker processes for the pods or scenarios (default: the usable CPUs; 1: one after another in this "
        "process). Small runs, and --debug, use one.",
    ),
]

_DURATION_RE = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)")
_UNIT = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_duration(text: str | None) -> float | None:
    """kubectl's ``--request-timeout``: a number of seconds or a Go duration; None (no timeout) for 0."""
    if text is None or text.strip() in ("", "0"):
        return None
    t = text.strip()
    try:
        seconds = float(t)
    except ValueError:
        pos, seconds = 0, 0.0
        for m in _DURATION_RE.finditer(t):
            if m.start() != pos:
                break
            seconds += float(m[1]) * _UNIT[m[2]]
            pos = m.end()
        if pos != len(t) or pos == 0:
            raise UsageError(
                f'invalid --request-timeout "{text}": give a number of seconds or a duration such as 5s, 1m, 500ms'
            ) from None
    if seconds < 0:
        raise UsageError(f'invalid --request-timeout "{text}": must not be negative')
    return seconds or None


def live_options(
    kubeconfig: str | None,
    context: str | None,
    request_timeout: str | None,
    *,
    chunk_size: int | None = None,
    redact: bool = True,
) -> LiveOptions:
    from kschedctl.snapshot.live import DEFAULT_CHUNK_SIZE, LiveOptions

    return LiveOptions(
        kubeconfig=kubeconfig,
        context=context,
        request_timeout=parse_duration(request_timeout),
        chunk_size=chunk_size or DEFAULT_CHUNK_SIZE,
        redact=redact,
    )


@dataclass(frozen=True)
class ClusterOptions:
    """Where a command's cluster comes from: ``--snapshot`` files, else the live cluster of kubectl's flags."""

    snapshot: list[str] | None = None
    kubeconfig: str | None = None
    context: str | None = None
    request_timeout: str | None = None
    chunk_size: int | None = None

    def live(self, *, redact: bool = True) -> LiveOptions:
        """The live-cluster options (``--request-timeout`` checked even when ``--snapshot`` is given: ``check``)."""
        return live_options(self.kubeconfig, self.context, self.request_timeout, chunk_size=self.chunk_size, redact=redact)

    def check(self) -> None:
        """Refuse a bad ``--request-timeout`` (given with ``--snapshot``, it is not used, but still wrong)."""
        parse_duration(self.request_timeout)


KubeVersionOpt = Annotated[
    str | None,
    typer.Option(
        "--kube-version",
        metavar="VERSION",
        help="Explain as kube-scheduler of this Kubernetes version does: 1.33, 1.34, 1.35, 1.36 or 1.37 (a patch such as "
        "1.36.2 is accepted). Default: the live cluster's version, or the one a kschedctl snapshot file records, else 1.35.",
    ),
]
FeatureGatesOpt = Annotated[
    str | None,
    typer.Option(
        "--feature-gates",
        metavar="GATES",
        help="Feature gates as kube-scheduler's flag takes them: A=true,B=false (default: the version's defaults).",
    ),
]


@dataclass(frozen=True)
class VersionOptions:
    """``--kube-version`` and ``--feature-gates``: which version's rules a command follows.

    Precedence: ``--kube-version``; else the version of the cluster the command reads (the live
    server's ``/version``, or the one a snapshot file records), the nearest supported one when it
    is outside 1.33-1.37 (with a note); else v1.35, the version kschedctl has been checked against
    longest. A patch release other than the one kschedctl models runs the modelled one of its minor,
    with a note. Both values are checked when given, before anything is read; ``flag`` is the
    option the version came from (``diff-versions``' ``--from`` and ``--to``), named when it is refused."""

    kube_version: str | None = None
    feature_gates: str | None = None
    flag: str = "--kube-version"

    def __post_init__(self) -> None:
        if self.kube_version is not None:
            self.resolve(self._minor())
        elif self.feature_gates:
            self._gates()  # the syntax; the names are checked once the version is known

    def _minor(self) -> int:
        """The minor of ``kube_version``; a malformed one refused naming the flag."""
        # (imported only here: the defaults' instance, made when this module loads, must not load the tables)
        from kschedctl.kube.versions import VersionError, flag_refusal, parse_kube_version

        assert self.kube_version is not None
        try:
            return parse_kube_version(self.kube_version)
        except VersionError as e:
            raise UsageError(flag_refusal(self.flag, self.kube_version, e.reason)) from None

    def _gates(self) -> dict[str, bool] | None:
        from kschedctl.kube.versions import FeatureGateError, parse_feature_gates

        try:
            return parse_feature_gates(self.feature_gates) if self.feature_gates else None
        except FeatureGateError as e:
            raise self._refused(e) from None

    def _refused(self, e: Exception) -> UsageError:
        from kschedctl.kube.versions import flag_refusal

        return UsageError(flag_refusal("--feature-gates", self.feature_gates or "", str(e)))

    def resolve(self, minor: int) -> Features:
        """The Features of v1.<minor> with ``--feature-gates`` applied (kube-scheduler's errors)."""
        from kschedctl.kube.versions import FeatureGateError, resolve_features

        try:
            return resolve_features(minor, self._gates())
        except FeatureGateError as e:
            raise self._refused(e) from None

    def features(self, source: Source | None = None, note: Callable[[str], None] | None = None) -> Features:
        """The Features of this run: the options', else ``source``'s version's (see the class), else v1.35's.
        ``note`` (default: a note on stderr) is told which rules run when that is not the version asked for.
        A gate ``--feature-gates`` does not set follows the cluster when what its API server serves and
        stores shows the gate on (``source.shown_gates``), as ``note`` is told."""
        from kschedctl.cli.common import note as stderr_note
        from kschedctl.kube.versions import DEFAULT_MINOR, patch_note, server_minor

        tell = note or stderr_note
        if self.kube_version is not None:
            features = self.resolve(self._minor())
            if tail := patch_note(self.kube_version):
                tell(f"{self.flag} {self.kube_version.strip()}: {tail}")
            return self._follow_cluster(features, source, tell)
        recorded = source.server_version() if source is not None else None
        minor, why = server_minor(recorded)
        if why:
            tell(why)
        elif source is not None and (tail := patch_note(recorded)):
            tell(f"{source.description}: Kubernetes {recorded}; {tail}")
        return self._follow_cluster(self.resolve(DEFAULT_MINOR if minor is None else minor), source, tell)

    def _follow_cluster(self, features: Features, source: Source | None, tell: Callable[[str], None]) -> Features:
        """``features`` with the gates the cluster shows on (and ``--feature-gates`` leaves alone) turned on."""
        from kschedctl.cli.progress import current
        from kschedctl.kube.versions import FeatureGateError, resolve_features
        from kschedctl.snapshot.apiversions import follow_note

        if source is None:
            return features
        given = self._gates() or {}
        current().phase(f"loading {source.description}")  # (a look at a file's objects may build the cluster)
        shown = {g: why for g, why in source.shown_gates(features).items() if g not in given}
        if not shown:
            return features
        try:
            followed = resolve_features(features.minor, {**given, **dict.fromkeys(shown, True)})
        except FeatureGateError:  # the gate needs others the cluster does not show: keep the defaults
            return features
        tell(follow_note(features, shown))
        return followed


@dataclass(frozen=True)
class SchedulerOptions:
    """How a command sets up the scheduler: the plugins (``--plugin-module``), the version and gates
    (``VersionOptions``, resolved once against the cluster ``source`` the command reads) and, through
    ``config()``, every KubeSchedulerConfiguration it runs with."""

    plugin_modules: list[str] | None = None
    versions: VersionOptions = VersionOptions()
    source: Source | None = None

    @cached_property
    def registry(self) -> Registry:
        """In-tree, installed and ``--plugin-module`` plugins (built once, on first use)."""
        return build_registry(self.plugin_modules)

    @cached_property
    def features(self) -> Features:
        """The version and gates every configuration and the cluster are loaded with (resolved once)."""
        return self.versions.features(self.source)

    def config(self, path: str | Path | None) -> SchedulerConfig:
        """The configuration of ``path`` (None: kube-scheduler's defaults), validated against ``registry``."""
        from kschedctl.config import load_config

        return load_config(str(path) if path else None, self.registry, self.features)


# --------------------------------------------------------------------------- node order

NodeOrderOpt = Annotated[
    str,
    typer.Option(
        "--node-order",
        metavar="ORDER",
        help="The order kube-scheduler was handed the nodes when it started, which decides ties and where a "
        "search stopped early (percentageOfNodesToScore): name (the default: by name, as the API server lists), "
        "random (with the pending pods' start-up queue shuffled too; see --seed), or FILE: one node name a line, "
        "or the scheduler's own log at -v=2 (its \"Added node to NodeTree\" lines, text or JSON).",
    ),
]
SeedOpt = Annotated[
    int | None,
    typer.Option(
        "--seed",
        min=0,
        metavar="N",
        help="Seed of --node-order random (and simulate --runs); without it one is drawn and printed, so a run can be repeated.",
    ),
]


def node_order(value: str, seed: int | None) -> NodeOrderSpec:
    """``--node-order`` and ``--seed`` for a request (checked now, the FILE read when the run starts)."""
    from kschedctl.snapshot.nodeorder import NodeOrderSpec

    spec = NodeOrderSpec(value, seed)
    spec.check()
    return spec
