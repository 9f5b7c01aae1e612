"""Agreement with the real kube-scheduler v1.35.4 on every scenario of tests/conformance.

Each scenario runs through ``kschedctl check``'s runner (the same code path as the
CLI) and must agree on every field of expected.json. Per-plugin agreement is
printed at the end of the test run. ``dev-*`` come from the shared corpus;
``own-*`` were written for this project (pod-request rules: pod-level resources,
overhead, sidecars, resize status, each scoring strategy, preemption; cycles that
end in a plugin's Error) and their expected.json by the same v1.35.4 reference.
own-101 keeps only the deterministic part of the reference's trace (a partial
expectation): a Score error cancels upstream's parallel Score pass, so which raw
scores it recorded varies from run to run.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kschedctl.check.runner import discover_scenarios, run_scenario
from kschedctl.check.scenario import Difference
from tests.conftest import CONFORMANCE, CONFORMANCE_TOTAL

ROOT = Path(__file__).parent / "conformance"
SCENARIOS = discover_scenarios([str(ROOT)])


def _plugins_in(expected: dict) -> set[str]:
    names: set[str] = set()
    for key in ("preEnqueue", "preFilter", "preScore", "reserve"):
        names.update(r["plugin"] for r in expected.get(key) or [])
    names.update((expected.get("score") or {}).keys())
    for v in (expected.get("filter") or {}).values():
        if v.get("plugin"):
            names.add(v["plugin"])
    if expected.get("postFilter"):
        names.add("DefaultPreemption")
    return names


def _plugins_blamed(differences: list[Difference]) -> set[str]:
    """Plugins named in the differing paths (for the per-plugin agreement report)."""
    out: set[str] = set()
    for d in differences:
        parts = d.path.split(".")
        if parts[0] == "score" and len(parts) > 1:
            out.add(parts[1])
        elif parts[0] == "filter":
            for v in (d.expected, d.actual):
                if isinstance(v, dict) and v.get("plugin"):
                    out.add(str(v["plugin"]))
                elif isinstance(v, str) and len(parts) > 2 and parts[-1] == "plugin":
                    out.add(v)
    return out


def test_corpus_is_present() -> None:
    """The shared corpus (dev-*) is complete, and the project's own oracle-written scenarios are there."""
    names = [d.name for d in SCENARIOS]
    assert sum(n.startswith("dev-") for n in names) == 428
    assert sum(n.startswith("own-") for n in names) >= 25


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[d.name for d in SCENARIOS])
def test_scenario_agrees(scenario: Path) -> None:
    result = run_scenario(scenario)
    expected = json.loads((scenario / "expected.json").read_text())
    involved = _plugins_in(expected)
    blamed = _plugins_blamed(result.differences)
    CONFORMANCE_TOTAL[1] += 1
    if result.passed:
        CONFORMANCE_TOTAL[0] += 1
    for p in involved | blamed:
        CONFORMANCE[p][1] += 1
        if result.passed or p not in blamed:
            CONFORMANCE[p][0] += 1
    assert result.error is None, result.error
    assert result.passed, "\n".join(str(d) for d in result.differences[:20])
