"""Which rules a scheduling run follows: the Kubernetes minor version and its feature gates.

kube-scheduler hands every in-tree plugin a ``feature.Features`` value built from the
process's feature gates (``pkg/scheduler/framework/plugins/feature/feature.go``), and most
differences between Kubernetes versions reach the scheduler that way: a gate whose default
flipped. A few rules changed with no gate (a message text, a status code, a score formula);
each is a row of ``kube.rules``, and code that holds both rules side by side asks ``follows``.

Plugins read it from their handle (``handle.features``), which the framework is built with:
one value per run, as upstream passes ``feature.Features`` to each plugin's factory.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from kschedctl.kube import gate_tables
from kschedctl.kube.rules import VersionRule

#: Every gate some release in ``kube.gate_tables`` registers, and the two switches every gate set has.
KNOWN_GATES: frozenset[str] = frozenset({"AllAlpha", "AllBeta"}).union(
    *(table for name, table in vars(gate_tables).items() if name.startswith("GATES_V1_"))
)


@dataclass(frozen=True)
class Features:
    """The Kubernetes minor version (33 for v1.33) and the effective feature gates of one run.

    Made by ``kube.versions.resolve_features`` (``DEFAULT_FEATURES`` there is v1.35.4 with its
    default gates); ``gates`` holds every gate that release registers."""

    minor: int
    gates: Mapping[str, bool]
    #: The patch release the rules are taken from (for headers and ``kubeVersion``), e.g. "v1.35.4".
    release: str

    def enabled(self, gate: str) -> bool:
        """Whether ``gate`` (a ``kube.gates`` constant) is on; a gate this release does not have is off.

        A name that no supported release registers is a programming error, not an "off" gate."""
        if gate not in KNOWN_GATES:
            raise ValueError(f"{gate!r} is not a feature gate of any supported release")
        return bool(self.gates.get(gate, False))

    def follows(self, rule: VersionRule) -> bool:
        """Whether this run follows ``rule`` (a ``kube.rules`` row): its version brought it or a later one."""
        return self.minor >= rule.since

    def __reduce__(self) -> tuple[object, tuple[int, dict[str, bool], str]]:
        """Pickled as its three values (a read-only mapping does not pickle), so a result that carries the
        version it ran as comes back from a worker process."""
        return _features, (self.minor, dict(self.gates), self.release)


def _features(minor: int, gates: dict[str, bool], release: str) -> Features:
    """A Features made again from its pickled values, the gates read-only again."""
    return Features(minor, MappingProxyType(gates), release)
