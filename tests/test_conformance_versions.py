"""Agreement with the real kube-scheduler of the other supported versions on the conformance corpus.

Every dev scenario has, beside ``expected.json`` (v1.35.4), the answer of v1.33.5, v1.34.2 and v1.36.2
(``expected-v1.XX.json``, default feature gates of that version; a ``{"refused": ...}`` file when that
version's API machinery refuses the input). ``check``'s runner runs the scenario under that version
and compares with that file. The sequences have v1.36.2's answer too (``expected-sequence-v1.36.json``);
older versions break ties at random, so their sequences have no single answer.

103 dev scenarios (those with storage objects, and controls) also have the answer of v1.36.2 with the
alpha gate StorageCapacityScoring turned on (``expected-v1.36-scs.json``), which the runner picks for a
run with that gate on.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kschedctl.check.runner import discover_scenarios, run_scenario
from kschedctl.check.scenario import EXPECTED_NAMES, versioned_names
from kschedctl.kube.features import Features
from kschedctl.kube.versions import resolve_features

ROOT = Path(__file__).parent
SCENARIOS = [d for d in discover_scenarios([str(ROOT / "conformance")]) if d.name.startswith("dev-")]
SEQUENCES = [d for d in discover_scenarios([str(ROOT / "sequences")]) if (d / "expected-sequence-v1.36.json").is_file()]
FEATURES = {33: resolve_features(33), 34: resolve_features(34), 36: resolve_features(36)}
SCS_FILE = "expected-v1.36-scs.json"
SCS_FEATURES = resolve_features(36, {"StorageCapacityScoring": True})
SCS_SCENARIOS = [d for d in SCENARIOS if (d / SCS_FILE).is_file()]
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
    assert len(SCS_SCENARIOS) == 103


def test_expectation_files_follow_version_and_changed_gates() -> None:
    assert versioned_names(EXPECTED_NAMES, resolve_features(35)) == EXPECTED_NAMES
    assert versioned_names(EXPECTED_NAMES, FEATURES[36])[:2] == ("expected-v1.36.json", "expected-v1.36.yaml")
    scs = versioned_names(EXPECTED_NAMES, SCS_FEATURES)
    assert scs[:4] == (SCS_FILE, "expected-v1.36-scs.yaml", "expected-v1.36-scs.yml", "expected-v1.36.json")
    assert scs[-3:] == EXPECTED_NAMES
    assert versioned_names(EXPECTED_NAMES, resolve_features(35, {"StorageCapacityScoring": True}))[0] == "expected-v1.35-scs.json"
    off = versioned_names(EXPECTED_NAMES, resolve_features(36, {"StorageCapacityScoring": True, "DRASchedulerFilterTimeout": False}))
    assert off[0] == "expected-v1.36-nodrasft-scs.json"


def _check(scenario: Path, features: Features, expected_name: str | None = None) -> None:
    result = run_scenario(scenario, features=features)
    assert result.expected_file is not None
    if expected_name is None:
        assert f"-v1.{features.minor}." in result.expected_file
    else:
        assert Path(result.expected_file).name == expected_name
    assert result.error is None, result.error
    assert result.passed, "\n".join(str(d) for d in result.differences[:20])


@pytest.mark.parametrize(("scenario", "minor"), CASES)
def test_scenario_agrees(scenario: Path, minor: int) -> None:
    _check(scenario, FEATURES[minor])


@pytest.mark.parametrize("scenario", SEQUENCES, ids=[d.name for d in SEQUENCES])
def test_sequence_agrees_v1_36(scenario: Path) -> None:
    _check(scenario, FEATURES[36])


@pytest.mark.parametrize("scenario", SCS_SCENARIOS, ids=[d.name for d in SCS_SCENARIOS])
def test_scenario_agrees_v1_36_storage_capacity_scoring(scenario: Path) -> None:
    _check(scenario, SCS_FEATURES, SCS_FILE)
