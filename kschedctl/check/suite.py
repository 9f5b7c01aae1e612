"""The scenario loop of ``kschedctl check``: every scenario run once, bad input kept as that scenario's error.

The loop lives here and nowhere else, so how scenarios are run (one after another in this
process, or spread over worker processes by ``kschedctl.parallel``, with the same results in
the same order) is decided in one place. What every scenario shares
is read once by the caller and handed in as ``Shared``: the plugin registry, the cluster of
scenarios without cluster.yaml (``--snapshot`` or the live cluster), the configuration of
scenarios without config.yaml (``--config``, as each version a scenario runs as loads it) and the
version each scenario follows (``check.versions``). A scenario whose input is bad (a file that does
not parse, an object the API server would refuse, an invalid configuration) does not stop the
others: its result carries the error (``kschedctl check`` then exits 2), as a test framework
reports an error in one test and runs the rest.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from kschedctl.check.runner import run_scenario
from kschedctl.check.scenario import ScenarioResult
from kschedctl.check.versions import ScenarioVersions
from kschedctl.config.types import SchedulerConfig
from kschedctl.errors import KschedctlError
from kschedctl.framework.registry import Registry
from kschedctl.kube.features import Features
from kschedctl.parallel import run_jobs
from kschedctl.snapshot.cluster import Cluster

#: Progress of the loop: (scenarios done, scenarios in all).
Progress = Callable[[int, int], None]

#: Fewer scenarios than this run one after another: starting workers would cost more than they save.
MIN_PARALLEL_SCENARIOS = 8


@dataclass
class Shared:
    """What every scenario of one ``check`` run is given."""

    registry: Registry | None = None
    #: The cluster of scenarios without cluster.yaml.
    cluster: Cluster | None = None
    #: The configuration of scenarios without config.yaml, per minor version a scenario runs as
    #: (``--config`` loaded as that version loads it; none: kube-scheduler's defaults).
    configs: Mapping[int, SchedulerConfig] = field(default_factory=dict)
    #: The version and feature gates each scenario runs under (its expected-v1.XX file when it has one).
    versions: ScenarioVersions = field(default_factory=ScenarioVersions)


def run_one(d: Path, shared: Shared) -> ScenarioResult:
    """One scenario, timed, with the version it ran as; bad input becomes the result's error instead of an exception."""
    start = time.perf_counter()
    features: Features | None = None
    try:
        features = shared.versions.of(d)
        config = shared.configs.get(features.minor)
        result = run_scenario(d, shared.registry, cluster=shared.cluster, config=config, features=features)
    except KschedctlError as e:
        result = ScenarioResult(d.name, str(d), False, error=str(e), exception=e)
    result.features = features
    result.seconds = time.perf_counter() - start
    return result


def run_suite(
    scenarios: list[Path], shared: Shared, progress: Progress | None = None, *, jobs: int | None = None
) -> list[ScenarioResult]:
    """Every scenario's result, in the order given; on ``jobs`` worker processes (None: the usable CPUs,
    1: one after another in this process) when there are enough scenarios (``kschedctl.parallel``)."""
    return run_jobs(partial(run_one, shared=shared), scenarios, jobs=jobs, min_jobs=MIN_PARALLEL_SCENARIOS, progress=progress)
