"""Which rules a scheduling run follows: the Kubernetes minor version and its feature gates.

kube-scheduler hands every in-tree plugin a ``feature.Features`` value built from the
process's feature gates (``pkg/scheduler/framework/plugins/feature/feature.go``), and most
differences between Kubernetes versions reach the scheduler that way: a gate whose default
flipped. A few rules changed with no gate (a message text, a status code, a score formula);
plugins that hold both rules side by side test ``minor`` for those.

This module is a leaf: the per-version tables that fill it live in ``kschedctl.kube.versions``.
Plugins read it from their handle (``handle.features``); the default is v1.35 with its default
gates, so code that builds a plugin without choosing a version keeps v1.35's behaviour.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

#: v1.35's default values of the gates the scheduler's rules read (the full per-version tables,
#: every gate a kube-scheduler of that version accepts, are in ``kschedctl.kube.versions``).
V135_GATES: Mapping[str, bool] = MappingProxyType(
    {
        "DynamicResourceAllocation": True,
        "PodLevelResources": True,
        "NodeDeclaredFeatures": False,
        "OpportunisticBatching": True,
        "GangScheduling": False,
        "GenericWorkload": False,
        "TopologyAwareWorkloadScheduling": False,
    }
)


@dataclass(frozen=True)
class Features:
    """The Kubernetes minor version (33 for v1.33) and the effective feature gates of one run."""

    minor: int = 35
    gates: Mapping[str, bool] = field(default_factory=lambda: V135_GATES)
    #: The patch release the rules are taken from (for headers and ``kubeVersion``), e.g. "v1.35.4".
    release: str = "v1.35.4"

    def enabled(self, gate: str) -> bool:
        """Whether ``gate`` is on (a gate this run does not know is off)."""
        return bool(self.gates.get(gate, False))

    def at_least(self, minor: int) -> bool:
        """Whether the rules are those of v1.<minor> or later."""
        return self.minor >= minor

    def __reduce__(self) -> tuple[object, tuple[int, dict[str, bool], str]]:
        """Pickled as its three values (a read-only mapping does not pickle), so a result that carries the
        version it ran as comes back from a worker process."""
        return _features, (self.minor, dict(self.gates), self.release)


def _features(minor: int, gates: dict[str, bool], release: str) -> Features:
    """A Features made again from its pickled values, the gates read-only again."""
    return Features(minor, MappingProxyType(gates), release)


#: v1.35.4 with its default gates: what every run uses unless a version is chosen.
DEFAULT_FEATURES = Features()
