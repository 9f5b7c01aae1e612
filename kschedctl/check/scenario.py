"""What every kind of ``kschedctl check`` scenario shares: results, the comparison with an expectation,
and a scenario directory's files (expectations, its own cluster or the shared one, its configuration).

Single-pod scenarios (``kschedctl.check.runner``) and sequence scenarios
(``kschedctl.check.sequence``) both build on this module; it imports neither, so the runner can
dispatch to the sequence runner without the two importing each other.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kschedctl.config import load_config
from kschedctl.config.types import SchedulerConfig
from kschedctl.errors import ConfigError, InputError
from kschedctl.framework.registry import Registry
from kschedctl.kube.features import Features
from kschedctl.kube.versions import DEFAULT_FEATURES, changed_gates, version_fields
from kschedctl.snapshot.cluster import Cluster
from kschedctl.snapshot.loader import iter_documents, load_cluster

INFORMATIONAL = frozenset({"k8sVersion", "notes", "preBind", "bind"})
EXPECTED_NAMES = ("expected.json", "expected.yaml", "expected.yml")


@dataclass
class Difference:
    path: str
    expected: Any
    actual: Any

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "expected": self.expected, "actual": self.actual}

    def __str__(self) -> str:
        return f"{self.path}: expected {json.dumps(self.expected)}, got {json.dumps(self.actual)}"


@dataclass
class ScenarioResult:
    name: str
    path: str
    passed: bool
    differences: list[Difference] = field(default_factory=list)
    actual: dict[str, Any] | None = None
    #: Bad input of this scenario (``kschedctl.check.suite`` records it; ``run_scenario`` raises).
    error: str | None = None
    exception: Exception | None = field(default=None, repr=False, compare=False)
    #: The expectation file compared with, and whether it was written by the reference (``k8sVersion``).
    expected_file: str | None = None
    reference: bool = False
    #: The result could not be compared: the run ended in an error the expectation does not foresee.
    unforeseen_error: bool = False
    #: That error's line (a plugin's Error status, a failed cycle): ``error`` of ``-o json``, JUnit's ``<error>``.
    run_error: str | None = None
    seconds: float = 0.0
    #: What ``check --update`` did with the expectation (``kschedctl.check.update``).
    update: dict[str, Any] | None = None
    #: The version and gates the scenario ran under (None: it could not be told, its input being bad).
    features: Features | None = None

    def to_dict(self) -> dict[str, Any]:
        out = {
            "name": self.name,
            "path": self.path,
            "file": self.expected_file,
            **(version_fields(self.features) if self.features is not None else {"kubeVersion": None}),
            "passed": self.passed,
            "differences": [d.to_dict() for d in self.differences],
            "error": self.error or self.run_error,
            "actual": self.actual,
        }
        if self.update is not None:
            out["update"] = self.update
        return out

    @property
    def updated(self) -> bool:
        return bool(self.update and self.update.get("written"))


def compare(expected: Any, actual: Any, path: str = "", *, exact: bool = False) -> list[Difference]:
    """Differences between an expectation and the actual trace (partial unless ``exact``)."""
    diffs: list[Difference] = []
    if isinstance(expected, dict) and isinstance(actual, dict):
        for k, v in expected.items():
            if not path and k in INFORMATIONAL:
                continue
            sub = f"{path}.{k}" if path else str(k)
            if k not in actual:
                diffs.append(Difference(sub, v, None))
                continue
            diffs.extend(compare(v, actual[k], sub, exact=exact))
        if exact and path:
            for k in actual:
                if k not in expected:
                    diffs.append(Difference(f"{path}.{k}", None, actual[k]))
        return diffs
    if expected != actual:
        diffs.append(Difference(path or "<root>", expected, actual))
    return diffs


def has_cluster(d: Path) -> bool:
    """Whether the scenario brings its own cluster; without one it is checked against ``--snapshot`` or the live cluster."""
    return (d / "cluster.yaml").is_file()


def expected_file(d: Path, names: tuple[str, ...] = EXPECTED_NAMES) -> Path:
    for name in names:
        if (d / name).is_file():
            return d / name
    raise InputError(f"no {names[0]} or {names[1]}", source=str(d))


def load_expected(d: Path, names: tuple[str, ...] = EXPECTED_NAMES) -> dict[str, Any]:
    """The scenario's expectations; a file that does not parse is bad input (one line naming it)."""
    f = expected_file(d, names)
    docs = [doc.obj for doc in iter_documents([str(f)])]
    if len(docs) != 1:
        raise InputError(f"expectations must be one mapping, the file holds {len(docs)} documents", source=str(f))
    return docs[0]


def gate_tag(gate: str, enabled: bool) -> str:
    """A gate's short name in an expectation file's name: its capitals in lower case
    (StorageCapacityScoring=true is ``scs``), with ``no`` before it when the gate is turned off."""
    initials = "".join(c for c in gate if c.isupper()).lower()
    return initials if enabled else "no" + initials


def versioned_names(names: tuple[str, ...], features: Features) -> tuple[str, ...]:
    """The expectation files to look for under ``features``, first found wins.

    When ``--feature-gates`` moved gates away from the version's defaults, the answer of that version
    with those gates comes first (``expected-v1.36-scs.json`` for v1.36 with StorageCapacityScoring=true:
    the version, then each changed gate's ``gate_tag`` in name order); then the version's own
    (``expected-v1.33.json`` beside ``expected.json``; v1.35, the default, has none); then the usual ones."""
    own = () if features.minor == DEFAULT_FEATURES.minor else tuple(n.replace(".", f"-v1.{features.minor}.", 1) for n in names)
    gates = changed_gates(features)
    if not gates:
        return own + names
    tag = f"-v1.{features.minor}-" + "-".join(gate_tag(g, on) for g, on in gates.items())
    gated = tuple(n.replace(".", tag + ".", 1) for n in names)
    return gated + own + names


def scenario_cluster(d: Path, cluster: Cluster | None, features: Features = DEFAULT_FEATURES) -> Cluster:
    """The scenario's own cluster.yaml (read as ``features``' API server would), else a copy of the shared
    ``cluster`` (``--snapshot`` or the live cluster) that this scenario may add to (the namespace of its
    pod) without the others seeing it."""
    if has_cluster(d):
        return load_cluster([str(d / "cluster.yaml")], features=features)
    if cluster is None:
        raise InputError("no cluster.yaml: check this scenario against --snapshot FILE or the live cluster", source=str(d))
    return cluster.copy_with()


def scenario_config(
    d: Path, registry: Registry | None, default: SchedulerConfig | None, features: Features = DEFAULT_FEATURES
) -> SchedulerConfig:
    """The scenario's own config.yaml, else ``default`` (``check --config``), else kube-scheduler's defaults."""
    cfg_path = d / "config.yaml"
    if cfg_path.is_file() or default is None:
        return load_config(str(cfg_path) if cfg_path.is_file() else None, registry, features)
    return default


def refused_result(d: Path, exp_file: Path, refused: Any, run: Callable[[], ScenarioResult]) -> ScenarioResult:
    """A scenario whose expectation is a refusal: it agrees when reading its input fails with that message."""
    try:
        outcome = run()
    except (InputError, ConfigError) as e:
        got = e.message if isinstance(e, InputError) else str(e)
        diffs = [] if got == refused else [Difference("refused", refused, got)]
        return ScenarioResult(d.name, str(d), not diffs, diffs, {"refused": got}, expected_file=str(exp_file), reference=True)
    diffs = [Difference("refused", refused, None)]
    return ScenarioResult(d.name, str(d), False, diffs, outcome.actual, expected_file=str(exp_file), reference=True)
