"""The rules that changed between versions with no feature gate: each plugin keeps both, keyed on the
version that switched, and reads the version once when it is built."""

from __future__ import annotations

import pytest

from kschedctl.framework.cycle_state import CycleState
from kschedctl.framework.interfaces import extension_points_of
from kschedctl.framework.status import Code
from kschedctl.kube.features import Features
from kschedctl.kube.versions import resolve_features
from kschedctl.plugins import nodeports, tainttoleration, volumerestrictions
from kschedctl.plugins.dynamicresources import plugin as dynamicresources
from kschedctl.plugins.noderesources import fit
from kschedctl.plugins.volumerestrictions import ERR_REASON_RWOP_CONFLICT, ERR_REASON_RWOP_CONFLICT_V133
from kschedctl.testing import SnapshotHandle
from tests.builders import make_node, make_pod, node_info

V133, V134, V135 = (resolve_features(m) for m in (33, 34, 35))


@pytest.mark.parametrize(
    ("features", "key", "value", "reason"),
    [
        pytest.param(V133, "dedicated", "gpu", "node(s) had untolerated taint {dedicated: gpu}", id="v1.33-names-key-value"),
        pytest.param(V133, "maint", "", "node(s) had untolerated taint {maint: }", id="v1.33-empty-value"),
        pytest.param(V134, "dedicated", "gpu", "node(s) had untolerated taint(s)", id="v1.34-fixed-text"),
        pytest.param(V135, "dedicated", "gpu", "node(s) had untolerated taint(s)", id="v1.35-fixed-text"),
    ],
)
def test_taint_toleration_reason(features: Features, key: str, value: str, reason: str) -> None:
    pl = tainttoleration.new(None, SnapshotHandle(features=features))
    ni = node_info(make_node().taint(key, value, "NoExecute"))
    pod = make_pod().build()
    st = pl.filter(CycleState(), pod, ni)
    assert (st.code, st.reasons) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [reason])
    [listed] = pl.filter_nodes(CycleState(), pod, [ni])
    assert listed is not None and listed.reasons == [reason]


@pytest.mark.parametrize(
    ("features", "request_cpu", "code"),
    [
        pytest.param(V133, "8", Code.UNSCHEDULABLE, id="v1.33-above-allocatable-is-resolvable"),
        pytest.param(V134, "8", Code.UNSCHEDULABLE_AND_UNRESOLVABLE, id="v1.34-above-allocatable-unresolvable"),
        pytest.param(V135, "8", Code.UNSCHEDULABLE_AND_UNRESOLVABLE, id="v1.35-above-allocatable-unresolvable"),
        pytest.param(V133, "3", Code.UNSCHEDULABLE, id="v1.33-short-of-free"),
        pytest.param(V135, "3", Code.UNSCHEDULABLE, id="v1.35-short-of-free"),
    ],
)
def test_fit_code_for_a_request_above_allocatable(features: Features, request_cpu: str, code: Code) -> None:
    pl = fit.new(None, SnapshotHandle(features=features))
    node = make_node().alloc(cpu="4")
    ni = node_info(node, make_pod("busy").req(cpu="2"))
    pod = make_pod().req(cpu=request_cpu).build()
    state = CycleState()
    pl.pre_filter(state, pod, [ni])
    assert pl.filter(state, pod, ni).code == code
    [listed] = pl.filter_nodes(state, pod, [ni])
    assert listed is not None and listed.code == code


@pytest.mark.parametrize(
    ("features", "reason"),
    [
        pytest.param(V133, ERR_REASON_RWOP_CONFLICT_V133, id="v1.33"),
        pytest.param(V134, ERR_REASON_RWOP_CONFLICT, id="v1.34"),
        pytest.param(V135, ERR_REASON_RWOP_CONFLICT, id="v1.35"),
    ],
)
def test_volume_restrictions_rwop_reason(features: Features, reason: str) -> None:
    assert volumerestrictions.new(None, SnapshotHandle(features=features)).rwop_reason == reason


SIDECAR_PORT = [{"name": "s", "restartPolicy": "Always", "ports": [{"containerPort": 9, "hostPort": 9}]}]


@pytest.mark.parametrize(
    ("features", "code"),
    [pytest.param(V133, Code.SKIP, id="v1.33-sidecar-ignored"), pytest.param(V134, Code.SUCCESS, id="v1.34-sidecar-counts")],
)
def test_node_ports_sidecar_ports_of_the_pod(features: Features, code: Code) -> None:
    pl = nodeports.new(None, SnapshotHandle(features=features))
    pod = make_pod().set("spec.initContainers", SIDECAR_PORT).build()
    _, st = pl.pre_filter(CycleState(), pod, [])
    assert st.code == code


@pytest.mark.parametrize(
    ("features", "code"),
    [pytest.param(V133, Code.SUCCESS, id="v1.33-sidecar-port-free"), pytest.param(V135, Code.UNSCHEDULABLE, id="v1.35-sidecar-port-used")],
)
def test_node_ports_sidecar_ports_on_the_node(features: Features, code: Code) -> None:
    pl = nodeports.new(None, SnapshotHandle(features=features))
    ni = node_info(make_node(), make_pod("other").set("spec.initContainers", SIDECAR_PORT))
    pod = make_pod().host_port(9).build()
    state = CycleState()
    pl.pre_filter(state, pod, [ni])
    assert pl.filter(state, pod, ni).code == code
    [listed] = pl.filter_nodes(state, pod, [ni])
    assert (Code.SUCCESS if listed is None else listed.code) == code


@pytest.mark.parametrize(
    ("features", "scores"),
    [pytest.param(V133, False, id="v1.33"), pytest.param(V134, False, id="v1.34"), pytest.param(V135, True, id="v1.35")],
)
def test_dynamic_resources_scores_from_v1_35(features: Features, scores: bool) -> None:
    pl = dynamicresources.new(None, SnapshotHandle(features=features))
    points = extension_points_of(pl)
    assert ("score" in points) == scores
    assert {"preEnqueue", "preFilter", "filter", "postFilter", "reserve", "preBind"} <= set(points)
