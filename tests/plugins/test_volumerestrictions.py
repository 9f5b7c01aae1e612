"""VolumeRestrictions: inline disk conflicts and ReadWriteOncePod claims already in use."""

from __future__ import annotations

from typing import Any

import pytest

from kschedctl.framework.cycle_state import CycleState
from kschedctl.framework.status import Code
from kschedctl.framework.types import PodInfo
from kschedctl.plugins import volumerestrictions as vr
from kschedctl.snapshot.model import KubeObject
from tests.builders import FakeHandle, PodBuilder, make_node, make_pod, make_snapshot, node_info
from tests.plugins.storage_objects import pvc

RWOP = vr.ERR_REASON_RWOP_CONFLICT
DISK = vr.ERR_REASON_DISK_CONFLICT


def _vol(kind: str, **src: Any) -> dict[str, Any]:
    return {"name": f"v-{kind}", kind: src}


def gce(pd: str, ro: bool = False) -> dict[str, Any]:
    return _vol("gcePersistentDisk", pdName=pd, readOnly=ro)


def ebs(vid: str, ro: bool = False) -> dict[str, Any]:
    return _vol("awsElasticBlockStore", volumeID=vid, readOnly=ro)


def iscsi(iqn: str, ro: bool = False) -> dict[str, Any]:
    return _vol("iscsi", iqn=iqn, targetPortal="10.0.0.1:3260", lun=0, readOnly=ro)


def rbd(monitors: list[str], image: str, pool: str | None = None, ro: bool = False) -> dict[str, Any]:
    src: dict[str, Any] = {"monitors": monitors, "image": image, "readOnly": ro}
    if pool is not None:
        src["pool"] = pool
    return _vol("rbd", **src)


def _run(
    pod: PodBuilder, existing: list[PodBuilder], objects: list[KubeObject]
) -> tuple[vr.VolumeRestrictions, CycleState, Any, Any]:
    snap = make_snapshot([make_node("n1"), make_node("n2")], existing, objects)
    pl = vr.new(None, FakeHandle(snap))
    state = CycleState()
    p = pod.build()
    _, st = pl.pre_filter(state, p, snap.node_info_list)
    return pl, state, p, st


@pytest.mark.parametrize(
    ("pod", "existing", "objects", "code", "reasons"),
    [
        pytest.param(make_pod(), [], [], Code.SKIP, [], id="no-volumes"),
        pytest.param(make_pod().pvc("data"), [], [pvc("data")], Code.SKIP, [], id="rwo-claim"),
        pytest.param(
            make_pod().pvc("data"), [], [], Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            ['persistentvolumeclaim "data" not found'], id="claim-missing",
        ),
        pytest.param(
            make_pod().pvc("data"), [], [pvc("data", modes=("ReadWriteOncePod",))], Code.SKIP, [], id="rwop-free"
        ),
        pytest.param(
            make_pod().pvc("data"),
            [make_pod("user").pvc("data").node("n2")],
            [pvc("data", modes=("ReadWriteOncePod",))],
            Code.SUCCESS, [], id="rwop-in-use",
        ),
        pytest.param(
            make_pod().pvc("data"),
            [make_pod("user", "other").pvc("data").node("n2")],
            [pvc("data", modes=("ReadWriteOncePod",))],
            Code.SKIP, [], id="rwop-same-name-other-namespace",
        ),
        pytest.param(make_pod().volume(ebs("vol-1")), [], [], Code.SUCCESS, [], id="inline-disk-needs-check"),
        pytest.param(make_pod().volume({"name": "e", "emptyDir": {}}), [], [], Code.SKIP, [], id="emptydir"),
    ],
)
def test_pre_filter(
    pod: PodBuilder, existing: list[PodBuilder], objects: list[KubeObject], code: Code, reasons: list[str]
) -> None:
    _, _, _, st = _run(pod, existing, objects)
    assert st.code == code
    assert st.reasons == reasons


@pytest.mark.parametrize(
    ("new", "old", "conflict"),
    [
        pytest.param(gce("pd1"), gce("pd1"), True, id="gce-same-rw"),
        pytest.param(gce("pd1", ro=True), gce("pd1"), True, id="gce-one-ro"),
        pytest.param(gce("pd1", ro=True), gce("pd1", ro=True), False, id="gce-both-ro"),
        pytest.param(gce("pd1"), gce("pd2"), False, id="gce-other-disk"),
        pytest.param(ebs("vol-1", ro=True), ebs("vol-1", ro=True), True, id="ebs-both-ro-still-conflict"),
        pytest.param(ebs("vol-1"), ebs("vol-2"), False, id="ebs-other-volume"),
        pytest.param(iscsi("iqn.a"), iscsi("iqn.a", ro=True), True, id="iscsi-one-rw"),
        pytest.param(iscsi("iqn.a", ro=True), iscsi("iqn.a", ro=True), False, id="iscsi-both-ro"),
        pytest.param(iscsi("iqn.a"), iscsi("iqn.b"), False, id="iscsi-other-iqn"),
        pytest.param(rbd(["m1", "m2"], "img"), rbd(["m2", "m3"], "img"), True, id="rbd-monitor-overlap"),
        pytest.param(rbd(["m1"], "img"), rbd(["m2"], "img"), False, id="rbd-no-monitor-overlap"),
        pytest.param(rbd(["m1"], "img", pool="rbd"), rbd(["m1"], "img"), True, id="rbd-default-pool"),
        pytest.param(rbd(["m1"], "img", pool="a"), rbd(["m1"], "img", pool="b"), False, id="rbd-other-pool"),
        pytest.param(rbd(["m1"], "img", ro=True), rbd(["m1"], "img", ro=True), False, id="rbd-both-ro"),
        pytest.param(gce("pd1"), ebs("pd1"), False, id="different-kinds"),
    ],
)
def test_disk_conflicts(new: dict[str, Any], old: dict[str, Any], conflict: bool) -> None:
    pl, state, pod, st = _run(make_pod().volume(new), [], [])
    assert st.code == Code.SUCCESS
    ni = node_info(make_node("n1"), make_pod("old").volume(old))
    got = pl.filter(state, pod, ni)
    if conflict:
        assert (got.code, got.reasons) == (Code.UNSCHEDULABLE, [DISK])
    else:
        assert got.is_success()
    # a node without that pod is always fine
    assert pl.filter(state, pod, node_info(make_node("n2"))).is_success()


def test_rwop_in_use_fails_every_node_and_preemption_can_free_it() -> None:
    user = make_pod("user").pvc("data").node("n2")
    pl, state, pod, st = _run(make_pod().pvc("data"), [user], [pvc("data", modes=("ReadWriteOncePod",))])
    assert st.is_success()
    for name in ("n1", "n2"):
        got = pl.filter(state, pod, node_info(make_node(name)))
        assert (got.code, got.reasons) == (Code.UNSCHEDULABLE, [RWOP])
    # preemption's what-if removes the user: the claim is free again
    ext = pl.pre_filter_extensions()
    what_if = state.clone()
    assert ext.remove_pod(what_if, pod, PodInfo.of(user.build()), node_info(make_node("n2"))).is_success()
    assert pl.filter(what_if, pod, node_info(make_node("n1"))).is_success()
    # the original state is untouched by the clone
    assert not pl.filter(state, pod, node_info(make_node("n1"))).is_success()


def test_nominated_pod_with_the_claim_is_added() -> None:
    # The pod also has an inline disk, so PreFilter keeps the (zero) count in the state.
    pl, state, pod, st = _run(
        make_pod().pvc("data").volume(ebs("vol-9")), [], [pvc("data", modes=("ReadWriteOncePod",))]
    )
    assert st.is_success()
    assert pl.filter(state, pod, node_info(make_node("n1"))).is_success()
    nominated = make_pod("nominated").pvc("data").build()
    assert pl.pre_filter_extensions().add_pod(state, pod, PodInfo.of(nominated), node_info(make_node("n1"))).is_success()
    got = pl.filter(state, pod, node_info(make_node("n1")))
    assert (got.code, got.reasons) == (Code.UNSCHEDULABLE, [RWOP])


def test_disk_conflict_is_reported_before_rwop() -> None:
    user = make_pod("user").pvc("data").node("n2")
    pl, state, pod, _ = _run(make_pod().pvc("data").volume(ebs("vol-1")), [user], [pvc("data", modes=("ReadWriteOncePod",))])
    got = pl.filter(state, pod, node_info(make_node("n1"), make_pod("o").volume(ebs("vol-1"))))
    assert got.reasons == [DISK]


def test_filter_without_pre_filter_state_is_an_error() -> None:
    pl = vr.new(None, FakeHandle(make_snapshot([make_node("n1")])))
    got = pl.filter(CycleState(), make_pod().build(), node_info(make_node("n1")))
    assert got.code == Code.ERROR
    assert got.reasons == ['cannot read "PreFilterVolumeRestrictions" from cycleState']


def test_extension_points() -> None:
    pl = vr.new(None, FakeHandle())
    assert hasattr(pl, "pre_filter") and hasattr(pl, "filter")
    assert not hasattr(pl, "score") and not hasattr(pl, "pre_score") and not hasattr(pl, "reserve")


def test_explain() -> None:
    user = make_pod("user").pvc("data").node("n2")
    pl, state, pod, _ = _run(make_pod().pvc("data").volume(ebs("vol-1")), [user], [pvc("data", modes=("ReadWriteOncePod",))])
    assert pl.explain(state) == {"readWriteOncePodClaims": ["data"], "podsUsingThem": 1}
    got = pl.explain_node(state, pod, node_info(make_node("n1"), make_pod("o").volume(ebs("vol-1"))))
    assert got == {"diskConflicts": [{"volume": "v-awsElasticBlockStore", "pod": "default/o"}]}
