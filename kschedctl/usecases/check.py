"""``kschedctl check``: the scenarios through the scenario loop, then ``--update``.

The CLI finds the scenarios, reads once what they share (the ``--config`` configuration, the
cluster of scenarios without cluster.yaml, the version each scenario follows: ``check.versions``)
and hands them here as a ``CheckRequest``; the loop is ``check.suite``'s, the rewriting of
expectations ``check.update``'s. The results come back for ``render.check`` to show and
``check.junit`` to write.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from kschedctl.check.versions import ScenarioVersions
from kschedctl.usecases.request import Hooks, Request

if TYPE_CHECKING:
    from kschedctl.check.scenario import ScenarioResult
    from kschedctl.config.types import SchedulerConfig
    from kschedctl.snapshot.cluster import Cluster


@dataclass(kw_only=True)
class CheckRequest(Request):
    """The scenario directories to run, and what they share."""

    scenarios: list[Path]
    #: The cluster of scenarios without cluster.yaml.
    cluster: Cluster | None = None
    #: The configuration of scenarios without config.yaml, per minor version they run as (none:
    #: kube-scheduler's defaults).
    configs: Mapping[int, SchedulerConfig] = field(default_factory=dict)
    #: Rewrite failing expectations (``--update``) inside these paths (the ones the user gave).
    update: bool = False
    paths: list[str] = field(default_factory=list)
    #: Worker processes (None: the usable CPUs; 1: one after another here).
    jobs: int | None = None
    #: The version and gates each scenario runs under (``check.versions``: ``--kube-version``, else the
    #: version its cluster records, with ``--feature-gates``).
    versions: ScenarioVersions = field(default_factory=ScenarioVersions)


def run_check(request: CheckRequest, hooks: Hooks | None = None) -> list[ScenarioResult]:
    """Every scenario's result in the order given, expectations rewritten with ``update``."""
    from kschedctl.check.suite import Shared, run_suite
    from kschedctl.check.update import apply_updates

    hooks = hooks or Hooks()
    shared = Shared(request.registry, cluster=request.cluster, configs=request.configs, versions=request.versions)
    results = run_suite(request.scenarios, shared, hooks.progress.counter("running scenarios"), jobs=request.jobs)
    if request.update:
        apply_updates(results, request.paths)
    return results
