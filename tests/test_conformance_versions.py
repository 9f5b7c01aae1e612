"""Agreement with the real kube-scheduler of the other supported versions on the conformance corpus.

Every dev scenario has, beside ``expected.json`` (v1.35.4), the answer of v1.33.5, v1.34.2 and v1.36.2
(``expected-v1.XX.json``, default feature gates of that version; a ``{"refused": ...}`` file when that
version's API machinery refuses the input). ``check``'s runner runs the scenario under that version
and compares with that file. The sequences have v1.36.2's answer too (``expected-sequence-v1.36.json``);
older versions break ties at random, so their sequences have no single answer.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kschedctl.check.runner import discover_scenarios, run_scenario
from kschedctl.kube.features import Features
from kschedctl.kube.versions import resolve_features

ROOT = Path(__file__).parent
SCENARIOS = [d for d in discover_scenarios([str(ROOT / "conformance")]) if d.name.startswith("dev-")]
SEQUENCES = [d for d in discover_scenarios([str(ROOT / "sequences")]) if (d / "expected-sequence-v1.36.json").is_file()]
FEATURES = {33: resolve_features(33), 34: resolve_features(34), 36: resolve_features(36)}
CASES = [
    pytest.param(d, minor, id=f"v1.{minor}-{d.name}")
    for minor in FEATURES
    for d in SCENARIOS
]


def test_every_dev_scenario_has_each_version() -> None:
    assert len(SCENARIOS) == 428
    for minor in FEATURES:
        assert all((d / f"expected-v1.{minor}.json").is_file() for d in SCENARIOS)
    refused = [d for d in SCENARIOS if '"refused"' in (d / "expected-v1.33.json").read_text()]
    assert len(refused) == 16
    assert len(SEQUENCES) == 30


def _check(scenario: Path, features: Features) -> None:
    result = run_scenario(scenario, features=features)
    assert result.expected_file is not None and f"-v1.{features.minor}." in result.expected_file
    assert result.error is None, result.error
    assert result.passed, "\n".join(str(d) for d in result.differences[:20])


@pytest.mark.parametrize(("scenario", "minor"), CASES)
def test_scenario_agrees(scenario: Path, minor: int) -> None:
    _check(scenario, FEATURES[minor])


@pytest.mark.parametrize("scenario", SEQUENCES, ids=[d.name for d in SEQUENCES])
def test_sequence_agrees_v1_36(scenario: Path) -> None:
    _check(scenario, FEATURES[36])
