"""``diff-versions``: what two Kubernetes versions' kube-scheduler decide for the same pods.

The sides are one configuration as each version loads it (their ``SchedulerConfig.features``
differ); the pods and the comparison are ``usecases.comparison``'s, and each pod's difference is
put in words by kind and attributed to the rule changes between the versions
(``whatif.versions``). Sides of the same version and gates cannot differ and are compared without
attribution (the command says so in one line instead: ``whatif.versions.same_rules``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from kschedctl.usecases.comparison import ComparisonRequest, compare
from kschedctl.usecases.request import Hooks

if TYPE_CHECKING:
    from kschedctl.snapshot.cluster import Cluster
    from kschedctl.whatif.diff import DiffReport
    from kschedctl.whatif.versions import VersionAttribution


@dataclass(kw_only=True)
class DiffVersionsRequest(ComparisonRequest):
    """One configuration under two versions (and gates) as sides A and B, and the pods to compare them on."""


def diff_versions(request: DiffVersionsRequest, hooks: Hooks | None = None) -> DiffReport:
    """Where the two versions decide differently for every pod, and which rule changes explain it."""
    from kschedctl.whatif.versions import VersionAttribution, same_rules

    fa, fb = request.a.config.features, request.b.config.features

    def attribution(cluster: Cluster) -> VersionAttribution:
        return VersionAttribution(fa, fb, cluster)

    return compare(request, hooks or Hooks(), None if same_rules(fa, fb) else attribution)
