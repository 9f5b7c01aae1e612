"""``simulate_pods``: the tests' short way to run a simulation of single pods.

The CLI and the use cases simulate pod streams (``simulate_streams``: workloads, copies); many tests
only need "schedule these pods one after another in queue order", which this gives them.
"""

from __future__ import annotations

from kschedctl.config.types import SchedulerConfig
from kschedctl.snapshot.cluster import Cluster
from kschedctl.snapshot.model import Pod
from kschedctl.whatif.placements import RunOptions, SimulationResult
from kschedctl.whatif.podqueue import PodStream
from kschedctl.whatif.simulate import simulate_streams


def simulate_pods(
    cluster: Cluster, config: SchedulerConfig, pods: list[tuple[Pod, str | None]], *, options: RunOptions | None = None
) -> SimulationResult:
    """Schedule ``pods`` (each with the workload it belongs to) one after another in queue order."""
    streams = [PodStream([p], w, 1) for p, w in pods]
    return simulate_streams(cluster, config, streams, options=options, exclude_pod_uids=[p.uid for p, _ in pods])
