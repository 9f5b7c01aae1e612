"""The Kubernetes versions kschedctl can explain, and the feature gates of each.

A kube-scheduler of one minor version differs from the next mostly through its feature gates:
which gates exist, which are on by default, which can no longer be switched. This module
turns a version ("1.33", "v1.36.2") and a ``--feature-gates`` value into the ``Features`` a run
follows, applying the rules of ``k8s.io/component-base/featuregate`` (``feature_gate.go``:
``Set`` parses the flag, ``SetFromMap`` checks every name against the gates the binary
registered, refuses to move a locked gate, expands ``AllAlpha``/``AllBeta`` and, from v1.35 on,
checks that an enabled gate's dependencies are enabled too). The tables themselves are data, in
``kschedctl.kube.gate_tables``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from kschedctl.errors import ConfigError
from kschedctl.kube import gate_tables
from kschedctl.kube.features import Features

#: The minor versions kschedctl reproduces, and the patch release each is taken from. v1.37 is named
#: after its latest patch release; its rules were read from v1.37's own sources at code freeze
#: (v0.37.0-beta.0, docs/versions.md says how it was checked).
RELEASES: Mapping[int, str] = MappingProxyType(
    {33: "v1.33.5", 34: "v1.34.2", 35: "v1.35.4", 36: "v1.36.2", 37: "v1.37.2"}
)
SUPPORTED_MINORS: tuple[int, ...] = tuple(sorted(RELEASES))
DEFAULT_MINOR = 35

_TABLES: Mapping[int, Mapping[str, gate_tables.Gate]] = MappingProxyType({
    33: gate_tables.GATES_V1_33,
    34: gate_tables.GATES_V1_34,
    35: gate_tables.GATES_V1_35,
    36: gate_tables.GATES_V1_36,
    37: gate_tables.GATES_V1_37,
})
_DEPENDENCIES: Mapping[int, Mapping[str, tuple[str, ...]]] = MappingProxyType({
    33: gate_tables.DEPENDENCIES_V1_33,
    34: gate_tables.DEPENDENCIES_V1_34,
    35: gate_tables.DEPENDENCIES_V1_35,
    36: gate_tables.DEPENDENCIES_V1_36,
    37: gate_tables.DEPENDENCIES_V1_37,
})

#: The two switches every gate set has: they move every alpha (beta) gate that was not set by name.
ALL_ALPHA = "AllAlpha"
ALL_BETA = "AllBeta"
_SPECIAL: Mapping[str, gate_tables.Gate] = MappingProxyType({ALL_ALPHA: (False, False, gate_tables.ALPHA), ALL_BETA: (False, False, gate_tables.BETA)})

_VERSION = re.compile(r"^v?(\d+)\.(\d+)(?:\.(\d+)(?:[-+][0-9A-Za-z.+-]+)?)?$")
_VERSION_WANTED = "want 1.MINOR or 1.MINOR.PATCH, e.g. 1.35"
#: What Go's ``strconv.ParseBool`` accepts.
_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})
_FALSE = frozenset({"0", "f", "F", "FALSE", "false", "False"})


class FeatureGateError(ConfigError):
    """A ``--feature-gates`` value kube-scheduler refuses; the message is its own text."""


class GateNotReproduced(FeatureGateError):
    """A gate kube-scheduler accepts and kschedctl refuses to turn on (``NOT_REPRODUCED_GATES``): the
    message is kschedctl's, saying what the gate does that kschedctl does not reproduce."""


#: Gates whose scheduler side kschedctl does not reproduce: a run with one on is refused rather than
#: explained by rules kube-scheduler does not follow then. (A release that lacks the gate refuses it as
#: unrecognized, as kube-scheduler does.)
NOT_REPRODUCED_GATES: Mapping[str, str] = MappingProxyType({
    "InPlacePodVerticalScalingSchedulerPreemption": (
        "with it on, kube-scheduler adds the DeferredPodScheduling plugin before NodeResourcesFit and schedules a "
        "pod whose in-place resize is deferred again, to preempt for it on its node; kschedctl has neither"
    ),
})


@dataclass(frozen=True)
class GateSpec:
    """One gate as a version registers it."""

    name: str
    default: bool
    locked: bool
    stage: str


def _supported_text() -> str:
    """The supported versions as a user reads them: "1.33, 1.34, 1.35, 1.36, 1.37"."""
    return ", ".join(f"1.{m}" for m in SUPPORTED_MINORS)


def unsupported_message(minor: int) -> str:
    return f"Kubernetes 1.{minor} is not supported: kschedctl explains kube-scheduler {_supported_text()}"


class VersionError(ConfigError):
    """A Kubernetes version that is not written as one: ``reason`` says what is wrong with ``text``."""

    def __init__(self, text: str, reason: str) -> None:
        self.text = text
        self.reason = reason
        super().__init__(f'invalid Kubernetes version "{text}": {reason}')


@dataclass(frozen=True)
class KubeVersion:
    """A well-formed Kubernetes version: "1.36" (no patch), "v1.36.2", "v1.36.2-eks-1a2b3c"."""

    minor: int
    patch: int | None


def parse_version(text: str) -> KubeVersion:
    """``text`` as a Kubernetes version: 1.MINOR or 1.MINOR.PATCH, with or without "v", and after a patch the
    pre-release or build suffix a server's ``gitVersion`` may carry. Numbers are written without leading
    zeros (as ``k8s.io/apimachinery``'s version parser wants them). Raises ``VersionError``."""
    t = text.strip()
    m = _VERSION.match(t)
    if m is None or m.group(1) != "1":
        raise VersionError(text, _VERSION_WANTED)
    numbers = [g for g in m.group(1, 2, 3) if g is not None]
    padded = [n for n in numbers if len(n) > 1 and n.startswith("0")]
    if padded:
        fixed = ".".join(str(int(n)) for n in numbers)
        raise VersionError(text, f'"{padded[0]}" starts with 0 (did you mean {fixed}?)')
    return KubeVersion(int(m.group(2)), None if m.group(3) is None else int(m.group(3)))


def parse_kube_version(text: str) -> int:
    """The minor version of "1.36", "1.36.2" or "v1.36": a supported one (``VersionError`` for a malformed
    version, ``ConfigError`` for one kschedctl does not explain). Any patch runs the minor's modelled one
    (``patch_note`` says so)."""
    minor = parse_version(text).minor
    if minor not in RELEASES:
        raise ConfigError(unsupported_message(minor))
    return minor


def patch_note(text: str | None) -> str | None:
    """When ``text`` names a patch release of a supported minor other than the one kschedctl models: what
    that patch runs as ("kschedctl follows kube-scheduler v1.35.4's rules for every v1.35 patch release")."""
    try:
        version = parse_version(text or "")
    except VersionError:
        return None
    modelled = RELEASES.get(version.minor)
    if modelled is None or version.patch is None or version.patch == parse_version(modelled).patch:
        return None
    return f"kschedctl follows kube-scheduler {modelled}'s rules for every v1.{version.minor} patch release"


def flag_refusal(flag: str, value: str, reason: str) -> str:
    """A command-line value refused, as Go's flag package words it."""
    return f'invalid argument "{value}" for "{flag}" flag: {reason}'


def nearest_supported(minor: int) -> int:
    """The supported minor closest to ``minor`` (for a live server outside the range)."""
    return min(SUPPORTED_MINORS, key=lambda m: (abs(m - minor), -m))


def gate_specs(minor: int) -> dict[str, GateSpec]:
    """Every gate ``--feature-gates`` of v1.<minor> accepts, with its default, lock and stage."""
    table = _table(minor)
    out = {n: GateSpec(n, *spec) for n, spec in _SPECIAL.items()}
    out.update((n, GateSpec(n, *spec)) for n, spec in table.items())
    return out


def default_gates(minor: int) -> dict[str, bool]:
    """Every gate of v1.<minor> at its default value."""
    return {n: s.default for n, s in gate_specs(minor).items()}


def _table(minor: int) -> Mapping[str, gate_tables.Gate]:
    table = _TABLES.get(minor)
    if table is None:
        raise ConfigError(unsupported_message(minor))
    return table


def _go_quote(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)


def parse_feature_gates(value: str) -> dict[str, bool]:
    """``featureGate.Set``'s parsing: "A=true,B=false" as a mapping, in the order given.

    Syntax only: whether the names exist is checked by ``resolve_features`` (for one version)."""
    out: dict[str, bool] = {}
    for item in value.split(","):
        if not item:
            continue
        key, sep, raw = item.partition("=")
        key = key.strip()
        if not sep:
            raise FeatureGateError(f"missing bool value for {key}")
        v = raw.strip()
        if v in _TRUE:
            out[key] = True
        elif v in _FALSE:
            out[key] = False
        else:
            raise FeatureGateError(
                f"invalid value of {key}={v}, err: strconv.ParseBool: parsing {_go_quote(v)}: invalid syntax"
            )
    return out


def _aggregate(errors: list[str]) -> str:
    """``utilerrors.NewAggregate(...).Error()``: one message alone, several in brackets (repeats once)."""
    unique = list(dict.fromkeys(errors))
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"


def _versions_text(minors: list[int]) -> str:
    """"v1.36", "v1.33 and v1.34", "v1.33, v1.34 and v1.36"."""
    names = [f"v1.{m}" for m in minors]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def unrecognized_gate(minor: int, name: str) -> str:
    """kube-scheduler's words for a gate v1.<minor> does not register, then which release was asked and
    where the gate does exist: the supported versions that have it, or the gate of another spelling."""
    message = f"unrecognized feature gate: {name} (kube-scheduler {RELEASES[minor]} has no such gate"
    elsewhere = [m for m in SUPPORTED_MINORS if m != minor and name in _TABLES[m]]
    if elsewhere:
        return f"{message}; it exists in {_versions_text(elsewhere)})"
    spelled = [n for n in gate_specs(minor) if n.lower() == name.lower()]
    return f"{message}; did you mean {spelled[0]}?)" if spelled else f"{message})"


def _apply_overrides(minor: int, overrides: Mapping[str, bool]) -> dict[str, bool]:
    """``unsafeSetFromMap``: the gates set by name, with ``AllAlpha``/``AllBeta`` expanded."""
    specs = gate_specs(minor)
    explicit: dict[str, bool] = {}
    errors: list[str] = []
    for name, value in overrides.items():
        spec = specs.get(name)
        if spec is None:
            # upstream stops at the first unknown name
            raise FeatureGateError(unrecognized_gate(minor, name))
        if spec.locked and spec.default != value:
            errors.append(
                f"cannot set feature gate {name} to {str(value).lower()}, feature is locked to {str(spec.default).lower()}"
            )
            continue
        explicit[name] = value
    if errors:
        raise FeatureGateError(_aggregate(errors))
    gates = {n: s.default for n, s in specs.items()}
    for switch, stage in ((ALL_ALPHA, gate_tables.ALPHA), (ALL_BETA, gate_tables.BETA)):
        if switch in explicit:
            for n, s in specs.items():
                if s.stage == stage and n not in explicit and n not in _SPECIAL:
                    gates[n] = explicit[switch]
    gates.update(explicit)
    return gates


def _check_dependencies(minor: int, gates: Mapping[str, bool]) -> None:
    """From v1.35, an enabled gate whose dependencies are not all enabled is refused."""
    errors = []
    for name, deps in sorted(_DEPENDENCIES[minor].items()):
        if not gates.get(name):
            continue
        off = [d for d in deps if not gates.get(d)]
        if off:
            errors.append(f"{name} is enabled, but depends on features that are disabled: [{' '.join(off)}]")
    if errors:
        raise FeatureGateError(_aggregate(errors))


def _refuse_not_reproduced(minor: int, gates: Mapping[str, bool], overrides: Mapping[str, bool]) -> None:
    """A gate of ``NOT_REPRODUCED_GATES`` turned on (by name, or by ``AllAlpha``/``AllBeta``) is refused."""
    for name, why in NOT_REPRODUCED_GATES.items():
        if gates.get(name):
            switch = ALL_ALPHA if gate_specs(minor)[name].stage == gate_tables.ALPHA else ALL_BETA
            how = "leave it off" if name in overrides else f"add {name}=false to keep {switch}'s other gates"
            raise GateNotReproduced(
                f"kschedctl does not reproduce feature gate {name} of kube-scheduler {RELEASES[minor]}: {why}; {how}"
            )


def resolve_features(minor: int = DEFAULT_MINOR, overrides: Mapping[str, bool] | None = None) -> Features:
    """The ``Features`` of v1.<minor> with ``overrides`` (``parse_feature_gates``' result) applied.

    ``gates`` holds every gate that version has. Raises ``FeatureGateError`` with kube-scheduler's
    words for an unknown or locked gate or a missing dependency, and ``GateNotReproduced`` for a gate
    turned on that kschedctl does not reproduce."""
    _table(minor)
    gates = _apply_overrides(minor, overrides or {})
    if overrides:
        _check_dependencies(minor, gates)
        _refuse_not_reproduced(minor, gates, overrides)
    return Features(minor=minor, gates=MappingProxyType(gates), release=RELEASES[minor])


#: v1.35.4 with its default gates: the rules a run follows when no version is chosen or detected.
DEFAULT_FEATURES: Features = resolve_features(DEFAULT_MINOR)


def server_minor(git_version: str | None) -> tuple[int | None, str | None]:
    """The minor version whose rules a cluster running ``git_version`` (GET /version's ``gitVersion``)
    is explained by, and a note when that is not the server's own minor (None, None: unknown version).

    Inside the supported range the server's minor is used; outside it the nearest supported one."""
    m = re.match(r"v?1\.(\d+)", (git_version or "").strip())
    if m is None:
        return None, None
    minor = int(m.group(1))
    if minor in RELEASES:
        return minor, None
    chosen = nearest_supported(minor)
    return chosen, (
        f"the API server runs Kubernetes {git_version}; kschedctl explains kube-scheduler {_supported_text()}: "
        f"using {RELEASES[chosen]}'s rules (the nearest; --kube-version chooses another)"
    )


def changed_gates(features: Features) -> dict[str, bool]:
    """The gates ``features`` sets away from its version's defaults (what ``--feature-gates`` changed)."""
    defaults = default_gates(features.minor) if features.minor in RELEASES else {}
    return {n: v for n, v in sorted(features.gates.items()) if n in defaults and defaults[n] != v}


def version_fields(features: Features) -> dict[str, object]:
    """``kubeVersion`` (and ``featureGates`` when some differ from the defaults) for a command's JSON/YAML."""
    out: dict[str, object] = {"kubeVersion": features.release}
    gates = changed_gates(features)
    if gates:
        out["featureGates"] = gates
    return out


def gates_text(features: Features) -> str:
    """The gates ``features`` sets away from its version's defaults as the flag writes them,
    "GangScheduling=true, GenericWorkload=true" ("" when none: for labels and headers)."""
    return ", ".join(f"{n}={str(v).lower()}" for n, v in changed_gates(features).items())


def version_line(features: Features) -> str:
    """The version and the changed gates, for a table or markdown header."""
    shown = gates_text(features)
    return f"kube-scheduler {features.release}" + (f"   feature gates: {shown}" if shown else "")
