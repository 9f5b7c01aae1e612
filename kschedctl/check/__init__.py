"""Scheduling regression tests: run scenarios and compare with (partial) expectations."""

from kschedctl.check.runner import Difference, ScenarioResult, compare, discover_scenarios, run_scenario

__all__ = ["Difference", "ScenarioResult", "compare", "discover_scenarios", "run_scenario"]
