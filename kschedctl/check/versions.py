"""Which Kubernetes version, and which feature gates, each scenario of a ``kschedctl check`` run follows.

The precedence is ``explain``'s (``cli.options.VersionOptions``): ``--kube-version`` for every
scenario; else the version of the cluster a scenario runs against as that cluster records it (its
own cluster.yaml's ``kschedctl.io/server-version`` annotation, or the ``--snapshot`` files' / the
live server's version for a scenario without cluster.yaml), the nearest supported minor for one
outside 1.33-1.37; else v1.35. ``--feature-gates`` applies to whichever version a scenario follows.
The choice is made once before the scenarios run (``choose_versions``), so a gate a version does not
have is the command's error, worded by the caller; a cluster.yaml whose recorded version is not one
is that scenario's bad input, reported when it runs, while the other scenarios still run.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from kschedctl.check.scenario import has_cluster
from kschedctl.errors import InputError
from kschedctl.kube.features import Features
from kschedctl.kube.versions import DEFAULT_FEATURES, DEFAULT_MINOR, patch_note, server_minor
from kschedctl.snapshot.source import recorded_version


@dataclass
class ScenarioVersions:
    """The version and gates of each scenario: its own when its cluster.yaml chose one, else ``shared``."""

    #: The version of the scenarios without their own choice (``--kube-version``'s, or the shared cluster's).
    shared: Features = DEFAULT_FEATURES
    #: Per scenario directory: the version its cluster.yaml records, or why that record is bad input.
    own: dict[Path, Features | InputError] = field(default_factory=dict)

    def of(self, d: Path) -> Features:
        """The Features scenario ``d`` runs under; raises its bad input (a malformed recorded version)."""
        chosen = self.own.get(d, self.shared)
        if isinstance(chosen, InputError):
            raise chosen
        return chosen

    def used(self, scenarios: list[Path]) -> list[Features]:
        """The distinct Features ``scenarios`` run under, in the order first met."""
        out: dict[int, Features] = {}
        for d in scenarios:
            chosen = self.own.get(d, self.shared)
            if isinstance(chosen, Features):
                out.setdefault(chosen.minor, chosen)
        return list(out.values())


def choose_versions(
    scenarios: list[Path],
    shared: Features,
    resolve: Callable[[int], Features],
    note: Callable[[str], None],
) -> ScenarioVersions:
    """Each scenario with a cluster.yaml follows the version that file records (v1.35 when none); the
    others ``shared``. ``resolve`` gives a minor's Features with the run's gates (and words a refused
    gate); ``note`` is told when a recorded version runs as another release (outside 1.33-1.37, or a
    patch other than the one kschedctl models)."""
    versions = ScenarioVersions(shared)
    by_minor: dict[int, Features] = {}
    for d in scenarios:
        if not has_cluster(d):
            continue
        path = str(d / "cluster.yaml")
        try:
            recorded = recorded_version(path)
        except InputError as e:
            versions.own[d] = e
            continue
        minor, why = server_minor(recorded)
        if why:
            note(f"{path}: {why}")
        elif tail := patch_note(recorded):
            note(f"{path}: Kubernetes {recorded}; {tail}")
        minor = DEFAULT_MINOR if minor is None else minor
        if minor not in by_minor:
            by_minor[minor] = resolve(minor)
        versions.own[d] = by_minor[minor]
    return versions
