"""The scheduling rules v1.37 changed, each beside v1.36's: resize-aware pod requests, ImageLocality's image
volumes, VolumeLimitScaling in NodeVolumeLimits, device taints and DeviceTaintRules in DynamicResources, the
v1.37 table of NodeDeclaredFeatures (and the API server dropping ``bindMountOptions`` while its gate is
off), and the space a gated pod's nomination reserves.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest

from kschedctl.framework.cycle_state import CycleState
from kschedctl.framework.nodeinfos import Snapshot
from kschedctl.framework.resources import ResizeRule, calculate_pod_resource, pod_requests, resize_rule
from kschedctl.framework.runtime import Framework
from kschedctl.framework.status import Code, Status
from kschedctl.kube.features import Features
from kschedctl.kube.quantity import parse_quantity
from kschedctl.kube.versions import resolve_features
from kschedctl.plugins import imagelocality, in_tree_registry, nodedeclaredfeatures, nodevolumelimits
from kschedctl.plugins.dynamicresources import plugin as dynamicresources
from kschedctl.plugins.noderesources import fit
from kschedctl.snapshot.apiversions import gates_shown
from kschedctl.snapshot.loader import build_cluster, parse_documents
from kschedctl.snapshot.model import KubeObject
from tests.builders import (
    FakeHandle,
    PodBuilder,
    load_config,
    make_cluster,
    make_node,
    make_object,
    make_pod,
    make_snapshot,
    schedule,
)
from tests.plugins.storage_objects import csi_node, pv, pvc
from tests.plugins.test_dynamicresources import (
    DRIVER,
    claim,
    device_class,
    exactly,
    gpu,
    pod_with,
    resource_slice,
)

V135 = resolve_features(35)
V136 = resolve_features(36)
V137 = resolve_features(37)
V137_WITHOUT_POD_LEVEL_STATUS = resolve_features(37, {"InPlacePodLevelResourcesVerticalScaling": False})
V137_BIND_MOUNTS = resolve_features(37, {"VolumeBindMountOptions": True})
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


# ------------------------------------------------------------------------------------------------ ImageLocality


def _image_scores(features: Features, pod: PodBuilder, images: list[tuple[str, int]]) -> tuple[int, int]:
    node = make_node("n1")
    for name, size in images:
        node.image(name, size=size)
    snap = make_snapshot([node], features=features)
    pl = imagelocality.new(None, FakeHandle(snap, features=features))
    p = pod.build()
    ni = snap.get("n1")
    assert ni is not None
    score, _ = pl.score(CycleState(), p, ni)
    [listed], _ = pl.score_nodes(CycleState(), p, [ni])
    return score, listed


WITH_VOLUME = make_pod("p").image("app:1").volume({"name": "models", "image": {"reference": "models:v1"}})


@pytest.mark.parametrize(
    ("features", "images", "score"),
    [
        # v1.35: the volume's image is not looked at: 500MiB of 1000MiB
        pytest.param(V135, [("app:1", 500 * MB), ("models:v1", 800 * MB)], 100 * 477 // 977, id="v1.35-containers-only"),
        # v1.36: 1300MiB summed, but clamped to one container's 1000MiB
        pytest.param(V136, [("app:1", 500 * MB), ("models:v1", 800 * MB)], 100, id="v1.36-volume-summed"),
        # v1.37: 1300MiB of two images' 2000MiB
        pytest.param(V137, [("app:1", 500 * MB), ("models:v1", 800 * MB)], 100 * 1277 // 1977, id="v1.37-volume-counted"),
        # the volume's image absent from the node still raises the threshold from v1.37
        pytest.param(V136, [("app:1", 500 * MB)], 100 * 477 // 977, id="v1.36-volume-image-absent"),
        pytest.param(V137, [("app:1", 500 * MB)], 100 * 477 // 1977, id="v1.37-volume-image-absent"),
    ],
)
def test_image_locality_and_image_volumes(features: Features, images: list[tuple[str, int]], score: int) -> None:
    assert _image_scores(features, WITH_VOLUME, images) == (score, score)


def test_image_volume_reference_is_normalized() -> None:
    pod = make_pod("p").image("app:1").volume({"name": "m", "image": {"reference": "models"}})
    assert _image_scores(V137, pod, [("models:latest", 3000 * MB)]) == (100 * (2000 - 23) // 1977,) * 2


# ------------------------------------------------------------------------------------------------ NodeVolumeLimits


def _csi_driver(name: str, prevent: bool | None) -> KubeObject:
    spec = {} if prevent is None else {"preventPodSchedulingIfMissing": prevent}
    return make_object("CSIDriver", name, spec=spec)


EBS = "ebs.csi.aws.com"
CLAIM = [pvc("data", volume="pv-data"), pv("pv-data", source={"csi": {"driver": EBS, "volumeHandle": "vol-1"}})]
NOT_INSTALLED = Status.unschedulable(f"{EBS} CSI driver is not installed on the node")


def _volume_limits(features: Features, objects: list[KubeObject]) -> Status:
    snap = make_snapshot([make_node("n1")], [], objects, features=features)
    pl = nodevolumelimits.new(None, FakeHandle(snap, features=features))
    pod = make_pod("p").pvc("data").build()
    state = CycleState()
    pl.pre_filter(state, pod, [])
    ni = snap.get("n1")
    assert ni is not None
    return pl.filter(state, pod, ni)


V136_SCALING = resolve_features(36, {"VolumeLimitScaling": True})


@pytest.mark.parametrize(
    ("features", "objects", "status"),
    [
        pytest.param(V136, [*CLAIM, _csi_driver(EBS, True)], Status(), id="v1.36-gate-off-not-checked"),
        pytest.param(V136_SCALING, [*CLAIM, _csi_driver(EBS, True)], NOT_INSTALLED, id="v1.36-gate-on-no-csinode"),
        pytest.param(V137, [*CLAIM, _csi_driver(EBS, True)], NOT_INSTALLED, id="v1.37-no-csinode"),
        pytest.param(V137, [*CLAIM, _csi_driver(EBS, True), csi_node("n1", {"other.csi": None})], NOT_INSTALLED,
                     id="v1.37-csinode-without-the-driver"),
        pytest.param(V137, [*CLAIM, _csi_driver(EBS, True), csi_node("n1", {EBS: None})], Status(),
                     id="v1.37-driver-installed-no-limit"),
        pytest.param(V137, [*CLAIM, _csi_driver(EBS, True), csi_node("n1", {EBS: 0})],
                     Status.unschedulable(nodevolumelimits.ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED),
                     id="v1.37-installed-then-the-limit"),
        pytest.param(V137, [*CLAIM, _csi_driver(EBS, False)], Status(), id="v1.37-driver-does-not-opt-in"),
        pytest.param(V137, [*CLAIM, _csi_driver(EBS, None)], Status(), id="v1.37-field-unset"),
        pytest.param(V137, CLAIM, Status(), id="v1.37-no-csidriver-taken-as-installed"),
    ],
)
def test_volume_limit_scaling(features: Features, objects: list[KubeObject], status: Status) -> None:
    got = _volume_limits(features, objects)
    assert (got.code, got.reasons) == (status.code, status.reasons)


# ------------------------------------------------------------------------------------------------ DynamicResources


def _dra_filters(features: Features, objects: list[KubeObject], pod: PodBuilder) -> dict[str, str]:
    snap = make_snapshot([make_node("n1"), make_node("n2")], [], objects, features=features)
    pl = dynamicresources.new(None, FakeHandle(snap, features=features))
    p = pod.build()
    state = CycleState()
    _, st = pl.pre_filter(state, p, snap.node_info_list)
    assert st.is_success()
    out = {}
    for ni in snap.node_info_list:
        out[ni.name] = pl.filter(state, p, ni).code.label
    return out


def _tainted(name: str, effect: str = "NoSchedule", key: str = "broken") -> dict[str, Any]:
    return gpu(name, taints=[{"key": key, "value": "yes", "effect": effect}])


def _rule(**selector: str) -> KubeObject:
    return make_object("DeviceTaintRule", "maintenance", apiVersion="resource.k8s.io/v1", spec={
        "deviceSelector": selector, "taint": {"key": "maintenance", "effect": "NoExecute"}})


def _tolerating(**toleration: str) -> list[KubeObject]:
    return [claim("c", exactly(tolerations=[toleration]))]


SLICES = [resource_slice("s1", [_tainted("gpu-0")], "n1"), resource_slice("s2", [gpu("gpu-0")], "n2")]
OK, NO = "Success", "UnschedulableAndUnresolvable"
V135_V136 = [pytest.param(V135, id="v1.35"), pytest.param(V136, id="v1.36"), pytest.param(V137, id="v1.37")]


@pytest.mark.parametrize(
    ("features", "objects", "want"),
    [
        # DRADeviceTaints: alpha and off in v1.35, on from v1.36
        pytest.param(V135, [device_class(), *SLICES, claim("c")], {"n1": OK, "n2": OK}, id="v1.35-taints-ignored"),
        pytest.param(V136, [device_class(), *SLICES, claim("c")], {"n1": NO, "n2": OK}, id="v1.36-taint-blocks"),
        pytest.param(V137, [device_class(), *SLICES, claim("c")], {"n1": NO, "n2": OK}, id="v1.37-taint-blocks"),
        pytest.param(V137, [device_class(), *SLICES, *_tolerating(key="broken", operator="Exists")],
                     {"n1": OK, "n2": OK}, id="tolerated-by-key"),
        pytest.param(V137, [device_class(), *SLICES, *_tolerating(key="broken", value="no")],
                     {"n1": NO, "n2": OK}, id="other-value-not-tolerated"),
        pytest.param(V137, [device_class(), *SLICES, *_tolerating(operator="Exists", effect="NoExecute")],
                     {"n1": NO, "n2": OK}, id="other-effect-not-tolerated"),
        pytest.param(V137, [device_class(), resource_slice("s1", [_tainted("gpu-0", "None")], "n1"), claim("c")],
                     {"n1": OK, "n2": NO}, id="effect-none-does-not-block"),
        # DRADeviceTaintRules: beta and off in v1.36, GA and on in v1.37
        pytest.param(V136, [device_class(), resource_slice("s2", [gpu("gpu-0")], "n2"), _rule(driver=DRIVER), claim("c")],
                     {"n1": NO, "n2": OK}, id="v1.36-rule-ignored"),
        pytest.param(V137, [device_class(), resource_slice("s2", [gpu("gpu-0")], "n2"), _rule(driver=DRIVER), claim("c")],
                     {"n1": NO, "n2": NO}, id="v1.37-rule-taints-the-driver"),
        pytest.param(V137, [device_class(), resource_slice("s2", [gpu("gpu-0")], "n2"), _rule(pool="n1"), claim("c")],
                     {"n1": NO, "n2": OK}, id="v1.37-rule-for-another-pool"),
        pytest.param(V137, [device_class(), resource_slice("s2", [gpu("gpu-0"), gpu("gpu-1")], "n2"),
                            _rule(device="gpu-0"), claim("c")],
                     {"n1": NO, "n2": OK}, id="v1.37-rule-for-one-device"),
        pytest.param(V137, [device_class(), resource_slice("s2", [gpu("gpu-0")], "n2"), _rule(device="gpu-0"),
                            *_tolerating(key="maintenance", operator="Exists")],
                     {"n1": NO, "n2": OK}, id="v1.37-rule-taint-tolerated"),
    ],
)
def test_device_taints_follow_their_gates(features: Features, objects: list[KubeObject], want: dict[str, str]) -> None:
    assert _dra_filters(features, objects, pod_with("c")) == want


# ------------------------------------------------------------------------------------------------ NodeDeclaredFeatures


def _bind_mounts(key: str) -> dict[str, Any]:
    mount = {"name": "d", "mountPath": "/d", "bindMountOptions": ["noexec"]}
    return {key: [{"name": "c", "image": "app", "volumeMounts": [mount]}]}


@pytest.mark.parametrize(
    ("spec", "needs"),
    [
        pytest.param(_bind_mounts("containers"), True, id="container"),
        pytest.param({**_bind_mounts("initContainers"), "containers": [{"name": "app"}]}, True, id="init-container"),
        pytest.param({**_bind_mounts("ephemeralContainers"), "containers": [{"name": "app"}]}, True, id="ephemeral"),
        pytest.param({"containers": [{"name": "c", "volumeMounts": [{"name": "d", "bindMountOptions": []}]}]}, False,
                     id="empty-options"),
        pytest.param({"containers": [{"name": "c", "volumeMounts": [{"name": "d", "mountPath": "/d"}]}]}, False,
                     id="no-options"),
    ],
)
def test_volume_bind_mount_options_is_inferred_from_v1_37(spec: dict[str, Any], needs: bool) -> None:
    v136, v137 = (nodedeclaredfeatures.table_for(f) for f in (V136, V137))
    assert v136.required(spec) == frozenset()
    assert v137.required(spec) == (frozenset({"VolumeBindMountOptions"}) if needs else frozenset())


@pytest.mark.parametrize(
    ("features", "declared", "code"),
    [
        pytest.param(V136, [], Code.SKIP, id="v1.36-nothing-needed"),
        pytest.param(V137, [], Code.UNSCHEDULABLE_AND_UNRESOLVABLE, id="v1.37-node-without-the-feature"),
        pytest.param(V137, ["VolumeBindMountOptions"], Code.SUCCESS, id="v1.37-node-declares-it"),
    ],
)
def test_node_declared_features_and_bind_mounts(features: Features, declared: list[str], code: Code) -> None:
    pl = nodedeclaredfeatures.new(None, FakeHandle(features=features))
    pod = make_pod("p").set("spec.containers", _bind_mounts("containers")["containers"]).build()
    state = CycleState()
    _, st = pl.pre_filter(state, pod, [])
    if code == Code.SKIP:
        assert st.code == Code.SKIP
        return
    node = make_snapshot([make_node("n1").set("status.declaredFeatures", declared)], features=features).get("n1")
    assert node is not None
    got = pl.filter(state, pod, node)
    assert got.code == code
    if code != Code.SUCCESS:
        assert got.reasons == [nodedeclaredfeatures.ERR_REASON]


BIND_MOUNT_POD = """
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: default}
spec:
  containers:
  - name: app
    image: app
    volumeMounts: [{name: d, mountPath: /d, bindMountOptions: [noexec]}]
  volumes: [{name: d, emptyDir: {}}]
"""


@pytest.mark.parametrize(
    ("features", "kept"),
    [pytest.param(V136, False, id="v1.36-no-such-field"), pytest.param(V137, False, id="v1.37-gate-off"),
     pytest.param(V137_BIND_MOUNTS, True, id="v1.37-gate-on")],
)
def test_the_api_server_keeps_bind_mount_options_only_with_their_gate(features: Features, kept: bool) -> None:
    cluster = build_cluster(parse_documents("p.yaml", BIND_MOUNT_POD), features=features)
    [pod] = cluster.pods
    assert ("bindMountOptions" in pod.raw["spec"]["containers"][0]["volumeMounts"][0]) is kept
    note = (f"spec.containers[*].volumeMounts[*].bindMountOptions dropped from 1 pod(s): VolumeBindMountOptions is off in "
            f"{features.release}, and the API server drops the field of a disabled gate on create")
    assert (note in cluster.notes) is not kept
    needed = nodedeclaredfeatures.table_for(features).required(pod.raw["spec"])
    assert needed == (frozenset({"VolumeBindMountOptions"}) if kept else frozenset())


def test_a_stored_bind_mount_option_shows_its_gate_on() -> None:
    [doc] = parse_documents("p.yaml", BIND_MOUNT_POD)
    shown = "1 pod(s) that kept spec.containers[*].volumeMounts[*].bindMountOptions"
    assert gates_shown([doc.obj], V137) == {"VolumeBindMountOptions": shown}
    assert gates_shown([doc.obj], V137_BIND_MOUNTS) == {}
    assert gates_shown([doc.obj], V136) == {}  # v1.36 has no such gate


def test_the_other_new_features_are_never_needed_and_only_widen_the_bitmap() -> None:
    v136, v137 = (nodedeclaredfeatures.table_for(f) for f in (V136, V137))
    assert len(v137.names) == len(v136.names) + 4
    assert v137.names == sorted(v137.names)
    declared = ["DRANodeAllocatableResources", "InPlacePodVerticalScalingMemoryBackedVolumes", "VolumeBindMountOptions"]
    assert v136.declared(declared) == frozenset()
    assert v137.declared(declared) == frozenset(declared)


# ------------------------------------------------------------------------------------------------ gated nominated pods


NODES = [make_node("n1").alloc(cpu="4", memory="8Gi", pods="10")]


@pytest.mark.parametrize(
    ("features", "gated", "outcome"),
    [
        pytest.param(V136, True, "scheduled", id="v1.36-gated-nomination-reserves-nothing"),
        pytest.param(V137, True, "unschedulable", id="v1.37-gated-nomination-reserves"),
        pytest.param(V136, False, "unschedulable", id="v1.36-ungated-nomination-reserves"),
        pytest.param(V137, False, "unschedulable", id="v1.37-ungated-nomination-reserves"),
    ],
)
def test_a_gated_pods_nomination(features: Features, gated: bool, outcome: str) -> None:
    nominated = make_pod("nominated").req(cpu="3").priority(100).nominated("n1")
    if gated:
        nominated.gate("example.com/wait")
    trace = schedule(make_pod("p").req(cpu="2").priority(10), nodes=NODES, pods=[nominated], features=features)
    assert trace.outcome == outcome


def test_a_gated_pods_nomination_is_not_among_the_nominated_pods_of_v1_36() -> None:
    cluster = make_cluster(NODES, [make_pod("nominated").gate("wait").nominated("n1"), make_pod("plain").nominated("n1")])
    for features, names in ((V136, ["plain"]), (V137, ["nominated", "plain"])):
        config = load_config(None, features=features)
        fw = Framework(config.profiles[0], in_tree_registry(), Snapshot(cluster, features=features))
        assert sorted(pi.pod.name for pi in fw.nominated_pods_for_node("n1")) == names
        assert fw.filtering.has_nominated_pods(fw.snapshot.node_info_map["n1"])
