"""NodeDeclaredFeatures: inert with its gate off; with it on, PreFilter infers the pod's required
features (Skip without any), Filter wants them all in the node's declared features (v1.36's bitmap
rules and message, v1.35's named-feature message), SignPod and the queueing hints."""

from __future__ import annotations

from typing import Any

import pytest

from kschedctl.explain.cycle import explain_pod
from kschedctl.framework.cycle_state import CycleState
from kschedctl.framework.signers import FEATURES
from kschedctl.framework.status import Code
from kschedctl.kube.features import Features
from kschedctl.kube.versions import DEFAULT_FEATURES, resolve_features
from kschedctl.plugins import in_tree_registry
from kschedctl.plugins import nodedeclaredfeatures as ndf
from tests.builders import (
    FakeHandle,
    NodeBuilder,
    PodBuilder,
    load_config,
    make_cluster,
    make_node,
    make_pod,
    node_info,
)

V136 = resolve_features(36, {"NodeDeclaredFeatures": True})
V135_ON = resolve_features(35, {"NodeDeclaredFeatures": True})
# v1.36 refuses the gate off while the gates that depend on it stay on: all of them off, as a user must
V136_OFF = resolve_features(36, dict.fromkeys((
    "NodeDeclaredFeatures", "ExtendWebSocketsToKubelet", "InPlacePodLevelResourcesVerticalScaling",
    "InPlacePodVerticalScalingInitContainers", "RestartAllContainersOnContainerExits"), False))

RESTART_ALL = "RestartAllContainersOnContainerExits"
USERNS_HOSTNET = "UserNamespacesHostNetworkSupport"


def _pl(features: Features = V136) -> ndf.NodeDeclaredFeatures:
    return ndf.new(None, FakeHandle(features=features))


def restart_all(init: bool = False) -> PodBuilder:
    rules = [{"action": "RestartAllContainers", "exitCodes": {"operator": "In", "values": [42]}}]
    key = "spec.initContainers" if init else "spec.containers"
    return make_pod().set(key, [{"name": "c", "image": "x", "restartPolicyRules": rules}])


def host_net_userns(host_users: Any = False) -> PodBuilder:
    return make_pod().set("spec.hostNetwork", True).set("spec.hostUsers", host_users)


def declaring(*features: str) -> NodeBuilder:
    return make_node("n1").set("status.declaredFeatures", list(features))


@pytest.mark.parametrize(
    ("pod", "features", "code"),
    [
        pytest.param(make_pod(), V136, Code.SKIP, id="plain-pod"),
        pytest.param(restart_all(), V136, Code.SUCCESS, id="restart-all-containers"),
        pytest.param(restart_all(init=True), V136, Code.SUCCESS, id="restart-all-from-init-container"),
        pytest.param(
            make_pod().set("spec.containers", [{"name": "c", "restartPolicyRules": [{"action": "Restart"}]}]),
            V136, Code.SKIP, id="other-restart-action",
        ),
        pytest.param(host_net_userns(), V136, Code.SUCCESS, id="host-network-user-namespace"),
        pytest.param(host_net_userns(True), V136, Code.SKIP, id="host-users-true"),
        pytest.param(make_pod().set("spec.hostNetwork", True), V136, Code.SKIP, id="host-users-unset"),
        # v1.35 did not know UserNamespacesHostNetworkSupport.
        pytest.param(host_net_userns(), V135_ON, Code.SKIP, id="v135-no-userns-feature"),
        pytest.param(restart_all(), V135_ON, Code.SUCCESS, id="v135-restart-all"),
        # Gate off: always Skip.
        pytest.param(restart_all(), DEFAULT_FEATURES, Code.SKIP, id="gate-off-v135"),
        pytest.param(restart_all(), V136_OFF, Code.SKIP, id="gate-off-v136"),
    ],
)
def test_pre_filter(pod: PodBuilder, features: Features, code: Code) -> None:
    r, st = _pl(features).pre_filter(CycleState(), pod.build(), [])
    assert r is None
    assert st.code == code


V135_REASON = "node declared features check failed - unsatisfied requirements: "


@pytest.mark.parametrize(
    ("pod", "node", "features", "code", "reasons"),
    [
        pytest.param(restart_all(), declaring(RESTART_ALL), V136, Code.SUCCESS, [], id="declared"),
        pytest.param(restart_all(), declaring(), V136, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [ndf.ERR_REASON], id="none-declared"),
        pytest.param(restart_all(), make_node("n1"), V136, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [ndf.ERR_REASON], id="no-field"),
        pytest.param(
            restart_all(), declaring("ExtendWebSocketsToKubelet", RESTART_ALL, "ZUnknown"), V136, Code.SUCCESS, [],
            id="unknown-names-ignored",
        ),
        pytest.param(
            host_net_userns(), declaring(RESTART_ALL), V136, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [ndf.ERR_REASON],
            id="other-feature-declared",
        ),
        # v1.36 maps the list with one walk that assumes it sorted (the API server sorts it):
        # out of order, a feature listed before a later-sorting one is missed.
        pytest.param(
            restart_all(), declaring(USERNS_HOSTNET, RESTART_ALL), V136, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [ndf.ERR_REASON],
            id="unsorted-list",
        ),
        pytest.param(restart_all(), declaring(USERNS_HOSTNET, RESTART_ALL), V135_ON, Code.SUCCESS, [], id="v135-set"),
        pytest.param(
            restart_all(), declaring(), V135_ON, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [V135_REASON + RESTART_ALL],
            id="v135-message",
        ),
    ],
)
def test_filter(pod: PodBuilder, node: NodeBuilder, features: Features, code: Code, reasons: list[str]) -> None:
    pl = _pl(features)
    st = CycleState()
    p = pod.build()
    assert pl.pre_filter(st, p, [])[1].is_success()
    s = pl.filter(st, p, node_info(node))
    assert (s.code, s.reasons) == (code, reasons)


def test_filter_without_pre_filter_state() -> None:
    s = _pl().filter(CycleState(), restart_all().build(), node_info(declaring()))
    assert s.code == Code.ERROR
    assert "not found" in s.message()


def test_gate_off_filter_passes() -> None:
    assert _pl(V136_OFF).filter(CycleState(), restart_all().build(), node_info(declaring())).is_success()


@pytest.mark.parametrize(
    ("pod", "features", "value"),
    [
        # v1.36: one 0/1 per known feature, names sorted (ExtendWebSockets.., InPlacePodLevel..,
        # InPlacePodVerticalScalingInitContainers, RestartAll.., UserNamespacesHostNetwork..).
        pytest.param(make_pod(), V136, "00000", id="v136-none"),
        pytest.param(restart_all(), V136, "00010", id="v136-restart-all"),
        pytest.param(host_net_userns(), V136, "00001", id="v136-userns"),
        pytest.param(restart_all(), V135_ON, [RESTART_ALL], id="v135-names"),
        pytest.param(make_pod(), V135_ON, [], id="v135-none"),
    ],
)
def test_sign_pod(pod: PodBuilder, features: Features, value: Any) -> None:
    fragments, st = _pl(features).sign_pod(pod.build())
    assert st.is_success()
    assert fragments is not None
    assert [(f.key, f.value) for f in fragments] == [(FEATURES, value)]


def test_in_the_registry() -> None:
    assert "NodeDeclaredFeatures" in in_tree_registry()


@pytest.mark.parametrize(
    ("pod", "feasible"),
    [
        pytest.param(make_pod().req(cpu="100m"), ["a", "b"], id="no-requirements"),
        pytest.param(restart_all(), ["b"], id="needs-restart-all"),
    ],
)
def test_in_a_v136_cycle(pod: PodBuilder, feasible: list[str]) -> None:
    cfg = load_config({
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": "default-scheduler",
                      "plugins": {"multiPoint": {"enabled": [{"name": "NodeDeclaredFeatures"}]}}}],
    })
    for p in cfg.profiles:
        p.features = V136
    nodes = [make_node("a"), make_node("b").set("status.declaredFeatures", [RESTART_ALL])]
    trace = explain_pod(make_cluster(nodes, [], []), pod.build(), cfg, in_tree_registry()).to_dict()
    assert trace["feasibleNodes"] == feasible
    entry = [e for e in trace["preFilter"] if e["plugin"] == "NodeDeclaredFeatures"]
    assert [e["code"] for e in entry] == (["Skip"] if feasible == ["a", "b"] else ["Success"])
    if feasible == ["b"]:
        assert trace["filter"]["a"] == {"code": "UnschedulableAndUnresolvable", "plugin": "NodeDeclaredFeatures",
                                        "reasons": [ndf.ERR_REASON]}
