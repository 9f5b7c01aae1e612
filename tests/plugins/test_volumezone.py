"""VolumeZone: bound PVs' zone/region labels against the node's labels."""

from __future__ import annotations

import pytest

from kschedctl.framework.cycle_state import CycleState
from kschedctl.framework.status import Code
from kschedctl.plugins import volumezone as vz
from kschedctl.snapshot.model import KubeObject
from tests.builders import FakeHandle, NodeBuilder, PodBuilder, make_node, make_pod, make_snapshot, node_info
from tests.plugins.storage_objects import pv, pvc, storage_class

ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"
BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
BETA_REGION = "failure-domain.beta.kubernetes.io/region"
CONFLICT = vz.ERR_REASON_CONFLICT


def _plugin(objects: list[KubeObject]) -> vz.VolumeZone:
    return vz.new(None, FakeHandle(make_snapshot([make_node("n1")], [], objects)))


def _bound(labels: dict[str, str], claim: str = "data") -> list[KubeObject]:
    return [pvc(claim, volume=f"pv-{claim}"), pv(f"pv-{claim}", labels=labels)]


@pytest.mark.parametrize(
    ("pod", "objects", "code", "reasons"),
    [
        pytest.param(make_pod(), [], Code.SKIP, [], id="no-volumes"),
        pytest.param(make_pod().pvc("data"), _bound({}), Code.SKIP, [], id="pv-without-zone-labels"),
        pytest.param(make_pod().pvc("data"), _bound({ZONE: "a"}), Code.SUCCESS, [], id="pv-with-zone"),
        pytest.param(
            make_pod().pvc("data"), _bound({ZONE: "a__"}), Code.SKIP, [], id="malformed-zone-label-ignored"
        ),
        pytest.param(
            make_pod().pvc("data"), [], Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            ['persistentvolumeclaim "data" not found'], id="claim-missing",
        ),
        pytest.param(
            make_pod().pvc(""), [], Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            ["PersistentVolumeClaim had no name"], id="claim-without-name",
        ),
        pytest.param(
            make_pod().pvc("data"), [pvc("data", volume="gone")], Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            ['persistentvolume "gone" not found'], id="pv-missing",
        ),
        pytest.param(
            make_pod().pvc("data"), [pvc("data", sc=None)], Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            ["PersistentVolumeClaim had no pv name and storageClass name"], id="unbound-no-class",
        ),
        pytest.param(
            make_pod().pvc("data"), [pvc("data", sc="fast")], Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            ['storageclass.storage.k8s.io "fast" not found'], id="unbound-class-missing",
        ),
        pytest.param(
            make_pod().pvc("data"), [pvc("data", sc="fast"), storage_class("fast", mode="Immediate")],
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ["PersistentVolume had no name"], id="unbound-immediate",
        ),
        pytest.param(
            make_pod().pvc("data"), [pvc("data", sc="fast"), storage_class("fast", mode=None)],
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ["PersistentVolume had no name"], id="unbound-defaulted-immediate",
        ),
        pytest.param(
            make_pod().pvc("data"), [pvc("data", sc="fast"), storage_class("fast")], Code.SKIP, [],
            id="unbound-wait-for-first-consumer-skipped",
        ),
        pytest.param(
            make_pod().pvc("late").pvc("data"),
            [pvc("late", sc="fast"), storage_class("fast"), *_bound({ZONE: "a"})],
            Code.SUCCESS, [], id="wffc-and-bound",
        ),
    ],
)
def test_pre_filter(pod: PodBuilder, objects: list[KubeObject], code: Code, reasons: list[str]) -> None:
    p = pod.build()
    _, st = _plugin(objects).pre_filter(CycleState(), p, [])
    assert st.code == code
    assert st.reasons == reasons


@pytest.mark.parametrize(
    ("pv_labels", "node", "ok"),
    [
        pytest.param({ZONE: "a"}, make_node("n").labels(**{ZONE: "a"}), True, id="same-zone"),
        pytest.param({ZONE: "a"}, make_node("n").labels(**{ZONE: "b"}), False, id="other-zone"),
        pytest.param({ZONE: "a"}, make_node("n"), True, id="node-without-topology-labels"),
        pytest.param({ZONE: "a"}, make_node("n").labels(**{REGION: "r"}), False, id="node-has-region-only"),
        pytest.param({ZONE: "a__b"}, make_node("n").labels(**{ZONE: "b"}), True, id="multi-zone-value"),
        pytest.param({ZONE: " a __ b "}, make_node("n").labels(**{ZONE: "b"}), True, id="multi-zone-trimmed"),
        pytest.param({ZONE: "a", REGION: "r1"}, make_node("n").labels(**{ZONE: "a", REGION: "r2"}), False, id="region-mismatch"),
        pytest.param({BETA_ZONE: "a"}, make_node("n").labels(**{ZONE: "a"}), True, id="beta-pv-ga-node"),
        pytest.param({BETA_ZONE: "a"}, make_node("n").labels(**{BETA_ZONE: "a", ZONE: "b"}), True, id="beta-key-preferred"),
        pytest.param({ZONE: "a"}, make_node("n").labels(**{BETA_ZONE: "a"}), False, id="ga-pv-beta-node"),
        pytest.param({BETA_REGION: "r"}, make_node("n").labels(**{REGION: "r", ZONE: "x"}), True, id="beta-region"),
    ],
)
def test_filter(pv_labels: dict[str, str], node: NodeBuilder, ok: bool) -> None:
    pl = _plugin(_bound(pv_labels))
    state = CycleState()
    pod = make_pod().pvc("data").build()
    _, st = pl.pre_filter(state, pod, [])
    assert st.is_success()
    got = pl.filter(state, pod, node_info(node))
    if ok:
        assert got.is_success()
    else:
        assert (got.code, got.reasons) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [CONFLICT])


def test_every_pv_must_match() -> None:
    objects = [*_bound({ZONE: "a"}, "one"), *_bound({ZONE: "b"}, "two")]
    pl = _plugin(objects)
    state = CycleState()
    pod = make_pod().pvc("one").pvc("two").build()
    pl.pre_filter(state, pod, [])
    got = pl.filter(state, pod, node_info(make_node("n").labels(**{ZONE: "a"})))
    assert got.reasons == [CONFLICT]


def test_filter_without_state_recomputes() -> None:
    pl = _plugin(_bound({ZONE: "a"}))
    pod = make_pod().pvc("data").build()
    assert pl.filter(CycleState(), pod, node_info(make_node("n").labels(**{ZONE: "b"}))).reasons == [CONFLICT]
    assert pl.filter(CycleState(), make_pod().build(), node_info(make_node("n"))).is_success()
    missing = _plugin([]).filter(CycleState(), pod, node_info(make_node("n")))
    assert missing.reasons == ['persistentvolumeclaim "data" not found']


def test_extension_points() -> None:
    pl = _plugin([])
    assert pl.pre_filter_extensions() is None
    assert not hasattr(pl, "score") and not hasattr(pl, "pre_score")


def test_explain() -> None:
    pl = _plugin(_bound({ZONE: "a__b"}))
    state = CycleState()
    pod = make_pod().pvc("data").build()
    pl.pre_filter(state, pod, [])
    assert pl.explain(state) == {"volumeTopology": [{"volume": "pv-data", "key": ZONE, "values": ["a", "b"]}]}
    got = pl.explain_node(state, pod, node_info(make_node("n").labels(**{ZONE: "c"})))
    assert got["checks"] == [{"volume": "pv-data", "key": ZONE, "nodeValue": "c", "matches": False}]
    assert pl.explain_node(state, pod, node_info(make_node("n")))["unconstrainedNode"] is True
