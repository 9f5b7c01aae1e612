"""The scheduling rules v1.37 changed, each beside v1.36's: resize-aware pod requests.

Until v1.37 is registered as a release, its rules are those of a ``Features`` built here: v1.36's default
gates with the defaults v1.37 flips that these rules read (VolumeLimitScaling and DRADeviceTaintRules on).
"""

from __future__ import annotations

from fractions import Fraction
from types import MappingProxyType
from typing import Any

import pytest

from kschedctl.framework.cycle_state import CycleState
from kschedctl.framework.resources import ResizeRule, calculate_pod_resource, pod_requests, resize_rule
from kschedctl.framework.runtime import Framework
from kschedctl.framework.status import Code
from kschedctl.kube.features import Features
from kschedctl.kube.quantity import parse_quantity
from kschedctl.kube.versions import resolve_features
from kschedctl.plugins.noderesources import fit
from tests.builders import (
    FakeHandle,
    PodBuilder,
    make_node,
    make_pod,
    make_snapshot,
)

V135 = resolve_features(35)
V136 = resolve_features(36)
V137 = Features(
    minor=37,
    gates=MappingProxyType({**V136.gates, "VolumeLimitScaling": True, "DRADeviceTaintRules": True}),
    release="v1.37.2",
)
V137_WITHOUT_POD_LEVEL_STATUS = Features(
    minor=37, gates=MappingProxyType({**V137.gates, "InPlacePodLevelResourcesVerticalScaling": False}), release="v1.37.2"
)
MB = 1024 * 1024


# ------------------------------------------------------------------------------------------------ pod requests


def _status(name: str, *, actuated: dict[str, str] | None = None, allocated: dict[str, str] | None = None) -> dict[str, Any]:
    s: dict[str, Any] = {"name": name}
    if actuated is not None:
        s["resources"] = {"requests": actuated}
    if allocated is not None:
        s["allocatedResources"] = allocated
    return s


INFEASIBLE = [{"type": "PodResizePending", "status": "True", "reason": "Infeasible"}]


def _two_containers(c1: str, c2: str) -> PodBuilder:
    return make_pod("resized").container("c1", cpu=c1).container("c2", cpu=c2)


#: (pod, its cpu request under v1.36's rule, under v1.37's, and what makes them differ).
REQUESTS: list[Any] = [
    pytest.param(
        _two_containers("1", "2").set("status.containerStatuses", [
            _status("c1", actuated={"cpu": "1"}, allocated={"cpu": "2"}),
            _status("c2", actuated={"cpu": "2"}, allocated={"cpu": "1"})]),
        "4", "3", id="max-of-sums-not-sum-of-maxes",
    ),
    pytest.param(
        make_pod("resized").container("app", cpu="1").set("spec.initContainers", [
            {"name": "setup", "image": "busybox", "resources": {"requests": {"cpu": "1"}}}]).set(
            "status.initContainerStatuses", [_status("setup", actuated={"cpu": "1"}, allocated={"cpu": "3"})]),
        "1", "3", id="init-container-status-counts",
    ),
    pytest.param(
        make_pod("resized").container("app", cpu="1").set(
            "status.containerStatuses", [_status("app", allocated={"cpu": "2"})]),
        "1", "2", id="allocated-without-resources-counts",
    ),
    pytest.param(
        _two_containers("4", "2").set("status.conditions", INFEASIBLE).set(
            "status.containerStatuses", [_status("c1", actuated={"cpu": "1"}, allocated={"cpu": "1"})]),
        "3", "1", id="infeasible-container-without-status-counts-nothing",
    ),
    pytest.param(
        _two_containers("1", "1").set("status.allocatedResources", {"cpu": "3"}).set(
            "status.resources", {"requests": {"cpu": "2"}}),
        "2", "3", id="pod-level-status-maps-are-the-totals",
    ),
    pytest.param(
        _two_containers("1", "2").set("status.containerStatuses", [
            _status("c1", actuated={"cpu": "1"}, allocated={"cpu": "1"}),
            _status("c2", actuated={"cpu": "2"}, allocated={"cpu": "2"})]),
        "3", "3", id="steady-state-agrees",
    ),
]


@pytest.mark.parametrize(("pod", "v136", "v137"), REQUESTS)
def test_a_resized_pods_requests(pod: PodBuilder, v136: str, v137: str) -> None:
    p = pod.build()
    assert pod_requests(p, rule=resize_rule(V136))["cpu"] == parse_quantity(v136)
    assert pod_requests(p, rule=resize_rule(V137))["cpu"] == parse_quantity(v137)
    assert calculate_pod_resource(p, resize_rule(V137)).resource.milli_cpu == int(parse_quantity(v137) * 1000)


def test_the_pod_level_status_maps_follow_their_gate() -> None:
    p = _two_containers("1", "1").set("status.allocatedResources", {"cpu": "3"}).set(
        "status.resources", {"requests": {"cpu": "2"}}).build()
    assert pod_requests(p, rule=resize_rule(V137_WITHOUT_POD_LEVEL_STATUS))["cpu"] == 2
    assert resize_rule(V137_WITHOUT_POD_LEVEL_STATUS) == ResizeRule(max_of_totals=True, pod_level_status=False)


def test_pod_level_requests_take_a_resource_only_the_status_has_from_v1_37() -> None:
    p = (
        make_pod("resized").container("app", cpu="1").pod_level({"cpu": "2"})
        .set("status.resources", {"requests": {"cpu": "2", "memory": "1Gi"}})
        .set("status.allocatedResources", {"cpu": "2"})
        .build()
    )
    v136, v137 = (pod_requests(p, rule=resize_rule(f)) for f in (V136, V137))
    assert (v136["cpu"], "memory" in v136) == (2, False)
    assert (v137["cpu"], v137["memory"]) == (2, parse_quantity("1Gi"))


def test_v1_36_pod_level_requests_count_the_pods_status_with_the_gate() -> None:
    p = make_pod("resized").container("app", cpu="1").pod_level({"cpu": "2"}).set(
        "status.resources", {"requests": {"cpu": "3"}}).build()
    assert pod_requests(p, rule=resize_rule(V136))["cpu"] == 3  # InPlacePodLevelResourcesVerticalScaling, beta on
    assert pod_requests(p, rule=resize_rule(V135))["cpu"] == 2  # alpha, off


def test_millicores_stay_exact() -> None:
    p = _two_containers("100m", "250m").set("status.containerStatuses", [
        _status("c1", actuated={"cpu": "100m"}, allocated={"cpu": "300m"}),
        _status("c2", actuated={"cpu": "250m"}, allocated={"cpu": "50m"})]).build()
    assert pod_requests(p, rule=resize_rule(V136))["cpu"] == Fraction(550, 1000)  # 300m + 250m
    assert pod_requests(p, rule=resize_rule(V137))["cpu"] == Fraction(350, 1000)  # every total is 350m


@pytest.mark.parametrize(
    ("features", "code"),
    [pytest.param(V136, Code.UNSCHEDULABLE, id="v1.36-4-cpus-used"), pytest.param(V137, Code.SUCCESS, id="v1.37-3-cpus-used")],
)
def test_fit_sees_a_resized_pod_as_its_version_counts_it(features: Features, code: Code) -> None:
    running = REQUESTS[0].values[0].node("n1")
    snap = make_snapshot([make_node("n1").alloc(cpu="4", memory="8Gi")], [running], features=features)
    pl = fit.new(None, FakeHandle(snap, features=features))
    pod = make_pod("incoming").req(cpu="1").build()
    state = CycleState()
    pl.pre_filter(state, pod, snap.node_info_list)
    ni = snap.get("n1")
    assert ni is not None
    assert pl.filter(state, pod, ni).code == code


def test_a_framework_refuses_a_snapshot_built_for_other_rules() -> None:
    with pytest.raises(ValueError, match=r"follow other rules than v1\.37\.2's"):
        FakeHandle(make_snapshot([make_node("n1")], features=V136), features=V137)
    assert isinstance(FakeHandle(make_snapshot([make_node("n1")], features=V137), features=V137), Framework)


