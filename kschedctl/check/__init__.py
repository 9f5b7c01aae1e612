"""Scheduling regression tests: run scenarios and compare with (partial) expectations."""

from kschedctl.check.runner import discover_scenarios, run_scenario
from kschedctl.check.scenario import Difference, ScenarioResult, compare

__all__ = ["Difference", "ScenarioResult", "compare", "discover_scenarios", "run_scenario"]
