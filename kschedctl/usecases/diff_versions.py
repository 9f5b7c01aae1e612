"""``diff-versions``: what two Kubernetes versions' kube-scheduler decide for the same pods.

The sides are one configuration as each version loads it (their ``SchedulerConfig.features``
differ); the pods and the comparison are ``usecases.comparison``'s, and each pod's difference is
put in words by kind and attributed to the rule changes between the versions
(``whatif.versions``). Sides of the same version and gates cannot differ: ``same_sides`` says so
in one sentence, for the command to answer without comparing anything.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from kschedctl.usecases.comparison import ComparisonRequest, compare
from kschedctl.usecases.request import Hooks

if TYPE_CHECKING:
    from kschedctl.kube.features import Features
    from kschedctl.snapshot.cluster import Cluster
    from kschedctl.whatif.diff import DiffReport, Side
    from kschedctl.whatif.versions import VersionAttribution


@dataclass(kw_only=True)
class DiffVersionsRequest(ComparisonRequest):
    """One configuration under two versions (and gates) as sides A and B, and the pods to compare them on."""


def _same_rules(fa: Features, fb: Features) -> bool:
    return (fa.minor, dict(fa.gates)) == (fb.minor, dict(fb.gates))


def same_sides(a: Side, b: Side) -> str | None:
    """The sentence saying that both sides run one version with the same gates (so nothing can differ);
    None when they differ."""
    fa, fb = a.config.features, b.config.features
    if not _same_rules(fa, fb):
        return None
    return (f"--from and --to are both kube-scheduler {fa.release} with the same feature gates: nothing can "
            "differ (give another --to, or --feature-gates for B)")


def diff_versions(request: DiffVersionsRequest, hooks: Hooks | None = None) -> DiffReport:
    """Where the two versions decide differently for every pod, and which rule changes explain it."""
    from kschedctl.whatif.versions import VersionAttribution

    fa, fb = request.a.config.features, request.b.config.features

    def attribution(cluster: Cluster) -> VersionAttribution:
        return VersionAttribution(fa, fb, cluster)

    return compare(request, hooks or Hooks(), None if _same_rules(fa, fb) else attribution)
