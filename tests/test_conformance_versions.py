"""Agreement with the real kube-scheduler of the other supported versions on the conformance corpus.

Every dev scenario has, beside ``expected.json`` (v1.35.4), the answer of v1.33.5, v1.34.2 and v1.36.2
(``expected-v1.XX.json``, default feature gates of that version; a ``{"refused": ...}`` file when that
version's API machinery refuses the input). ``check``'s runner runs the scenario under that version
and compares with that file. The sequences have v1.36.2's answer too (``expected-sequence-v1.36.json``);
older versions break ties at random, so their sequences have no single answer.

103 dev scenarios (those with storage objects, and controls) also have the answer of v1.36.2 with the
alpha gate StorageCapacityScoring turned on (``expected-v1.36-scs.json``), which the runner picks for a
run with that gate on.

There is no real v1.37 kube-scheduler here to ask. v1.37 turns StorageCapacityScoring on by default and
changes nothing else these 103 scenarios reach, so v1.37 with its default gates must give v1.36.2's
answer with that gate on: each is run under v1.37 against a copy whose ``expected-v1.37.json`` is its
``expected-v1.36-scs.json``. A scenario that another v1.37 change does reach is listed in
``V1_37_CHANGES`` with the change, and tested for that change instead.
"""

from __future__ import annotations

import shutil
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


#: Scenarios among the 103 whose v1.37 answer differs from v1.36.2's with StorageCapacityScoring, and the
#: v1.37 change (other than that gate's default) that makes the difference.
V1_37_CHANGES: dict[str, str] = {}
V1_37_CASES = [
    pytest.param(d, id=d.name, marks=pytest.mark.xfail(reason=V1_37_CHANGES[d.name], strict=True))
    if d.name in V1_37_CHANGES else pytest.param(d, id=d.name)
    for d in SCS_SCENARIOS
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


#: The other gates the scheduler's rules read whose default v1.37 flips, and what a scenario must hold for
#: them to matter (none of the 103 holds it).
V1_37_OTHER_GATES = {"VolumeLimitScaling": "preventPodSchedulingIfMissing", "DRADeviceTaintRules": "DeviceTaintRule"}


def test_v1_37_differs_from_v1_36_by_storage_capacity_scoring_alone() -> None:
    """The premise of the next test: between v1.36.2 with StorageCapacityScoring on and v1.37's defaults, the
    gates the scheduler's rules read have the same values, but for two that need what no scenario has (a
    CSIDriver that sets preventPodSchedulingIfMissing, a DeviceTaintRule)."""
    from kschedctl.kube import gates

    v137 = resolve_features(37)
    moved = {g for g in gates.READ_BY_RULES if g in v137.gates and SCS_FEATURES.enabled(g) != v137.enabled(g)}
    assert moved == set(V1_37_OTHER_GATES)
    assert v137.enabled(gates.STORAGE_CAPACITY_SCORING)
    for d in SCS_SCENARIOS:
        text = "".join(f.read_text() for f in d.glob("*.yaml"))
        assert not any(needs in text for needs in V1_37_OTHER_GATES.values()), d.name


@pytest.mark.parametrize("scenario", V1_37_CASES)
def test_scenario_agrees_v1_37_with_v1_36_storage_capacity_scoring(scenario: Path, tmp_path: Path) -> None:
    """v1.37 with its default gates gives v1.36.2's answer with StorageCapacityScoring on."""
    copy = tmp_path / scenario.name
    shutil.copytree(scenario, copy, ignore=shutil.ignore_patterns("expected*"))
    shutil.copyfile(scenario / SCS_FILE, copy / "expected-v1.37.json")
    _check(copy, resolve_features(37), "expected-v1.37.json")
