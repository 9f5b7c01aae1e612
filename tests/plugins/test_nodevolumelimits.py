"""NodeVolumeLimits: per-driver CSI attach limits from CSINode, shared volumes counted once."""

from __future__ import annotations

from typing import Any

import pytest

from kschedctl.framework.cycle_state import CycleState
from kschedctl.framework.status import Code, Status
from kschedctl.plugins import nodevolumelimits as nvl
from kschedctl.plugins.volumebinding import csitranslation as csi
from kschedctl.snapshot.model import KubeObject
from tests.builders import FakeHandle, PodBuilder, make_node, make_pod, make_snapshot, node_info
from tests.plugins.storage_objects import csi_node, pv, pvc, storage_class

DRIVER = "csi.example.com"
EBS_DRIVER = "ebs.csi.aws.com"
EXCEEDED = nvl.ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED


def bound(name: str, handle: str = "", driver: str = DRIVER) -> list[KubeObject]:
    """A claim bound to a CSI PV with the given handle."""
    return [
        pvc(name, volume=f"pv-{name}"),
        pv(f"pv-{name}", source={"csi": {"driver": driver, "volumeHandle": handle or f"h-{name}"}}),
    ]


def ebs_inline(vid: str, name: str = "disk") -> dict[str, Any]:
    return {"name": name, "awsElasticBlockStore": {"volumeID": vid}}


def _check(
    pod: PodBuilder, existing: list[PodBuilder], objects: list[KubeObject], csinode: KubeObject | None
) -> tuple[Status, Status]:
    objs = list(objects) + ([csinode] if csinode is not None else [])
    snap = make_snapshot([make_node("n1")], [], objs)
    pl = nvl.new(None, FakeHandle(snap))
    state = CycleState()
    p = pod.build()
    _, pre = pl.pre_filter(state, p, [])
    ni = node_info(make_node("n1"), *existing)
    return pre, pl.filter(state, p, ni)


@pytest.mark.parametrize(
    ("pod", "code"),
    [
        pytest.param(make_pod(), Code.SKIP, id="no-volumes"),
        pytest.param(make_pod().volume({"name": "c", "configMap": {"name": "x"}}), Code.SKIP, id="configmap"),
        pytest.param(make_pod().volume({"name": "e", "emptyDir": {}}), Code.SKIP, id="emptydir"),
        pytest.param(make_pod().pvc("data"), Code.SUCCESS, id="claim"),
        pytest.param(make_pod().volume({"name": "s", "ephemeral": {}}), Code.SUCCESS, id="generic-ephemeral"),
        pytest.param(make_pod().volume(ebs_inline("vol-1")), Code.SUCCESS, id="inline-migratable"),
        pytest.param(
            make_pod().volume({"name": "f", "azureFile": {"secretName": "s", "shareName": "x"}}), Code.SUCCESS,
            id="inline-azure-file",
        ),
        pytest.param(make_pod().volume({"name": "n", "nfs": {"server": "s", "path": "/"}}), Code.SKIP, id="nfs"),
    ],
)
def test_pre_filter(pod: PodBuilder, code: Code) -> None:
    pl = nvl.new(None, FakeHandle())
    _, st = pl.pre_filter(CycleState(), pod.build(), [])
    assert st.code == code


def _existing(*claims: str) -> PodBuilder:
    b = make_pod("existing-" + "-".join(claims))
    for c in claims:
        b.pvc(c)
    return b


@pytest.mark.parametrize(
    ("pod", "existing", "objects", "csinode", "ok"),
    [
        pytest.param(make_pod().pvc("new"), [_existing("a", "b")], bound("new") + bound("a") + bound("b"), None, True, id="no-csinode"),
        pytest.param(
            make_pod().pvc("new"), [_existing("a", "b")], bound("new") + bound("a") + bound("b"),
            csi_node("n1", {DRIVER: None}), True, id="driver-without-limit",
        ),
        pytest.param(
            make_pod().pvc("new"), [_existing("a", "b")], bound("new") + bound("a") + bound("b"),
            csi_node("n1", {DRIVER: 2}), False, id="over-limit",
        ),
        pytest.param(
            make_pod().pvc("new"), [_existing("a")], bound("new") + bound("a"), csi_node("n1", {DRIVER: 2}), True, id="exactly-at-limit"
        ),
        pytest.param(
            make_pod().pvc("new"), [_existing("a", "b")], bound("new", driver="other.csi") + bound("a") + bound("b"),
            csi_node("n1", {DRIVER: 2}), True, id="other-driver-unlimited",
        ),
        pytest.param(
            make_pod().pvc("a"), [_existing("a", "b")], bound("a") + bound("b"), csi_node("n1", {DRIVER: 2}), True, id="shared-volume-counts-once"
        ),
        pytest.param(
            make_pod().pvc("new"), [_existing("a", "b")], bound("new", handle="h-a") + bound("a") + bound("b"),
            csi_node("n1", {DRIVER: 2}), True, id="same-handle-through-another-claim",
        ),
        pytest.param(
            make_pod().pvc("new"), [_existing("a", "gone")], bound("new") + bound("a"), csi_node("n1", {DRIVER: 1}), False,
            id="existing-missing-claim-ignored-but-a-counts",
        ),
        pytest.param(
            make_pod().pvc("new"), [_existing("a", "gone")], bound("new") + bound("a"), csi_node("n1", {DRIVER: 2}), True,
            id="existing-missing-claim-ignored",
        ),
        pytest.param(
            make_pod().pvc("new"), [_existing("a")], [pvc("new", sc="fast"), storage_class("fast", provisioner=DRIVER), *bound("a")],
            csi_node("n1", {DRIVER: 1}), False, id="unbound-counts-through-class",
        ),
        pytest.param(
            make_pod().pvc("new"), [_existing("a")], [pvc("new", sc="fast"), *bound("a")],
            csi_node("n1", {DRIVER: 1}), True, id="unbound-class-missing-not-counted",
        ),
        pytest.param(
            make_pod().pvc("new"), [_existing("a")], [pvc("new", sc=None), *bound("a")],
            csi_node("n1", {DRIVER: 1}), True, id="unbound-no-class-not-counted",
        ),
        pytest.param(
            make_pod().pvc("new"), [_existing("a")], [pvc("new", volume="missing-pv", sc="fast"), storage_class("fast", provisioner=DRIVER), *bound("a")],
            csi_node("n1", {DRIVER: 1}), False, id="pv-missing-falls-back-to-class",
        ),
        pytest.param(
            make_pod().pvc("new"), [_existing("a")],
            [pvc("new", sc="gp2"), storage_class("gp2", provisioner="kubernetes.io/aws-ebs"), *bound("a", driver=EBS_DRIVER)],
            csi_node("n1", {EBS_DRIVER: 1}), False, id="in-tree-provisioner-counts-as-csi",
        ),
        pytest.param(
            make_pod().pvc("new"), [_existing("a")],
            [pvc("new", volume="pv-new"), pv("pv-new", source={"nfs": {"server": "s", "path": "/"}}), *bound("a")],
            csi_node("n1", {DRIVER: 1}), True, id="non-csi-pv-not-counted",
        ),
    ],
)
def test_filter(
    pod: PodBuilder, existing: list[PodBuilder], objects: list[KubeObject], csinode: KubeObject | None, ok: bool
) -> None:
    _, got = _check(pod, existing, objects, csinode)
    if ok:
        assert got.is_success(), got
    else:
        assert (got.code, got.reasons) == (Code.UNSCHEDULABLE, [EXCEEDED])


def test_in_tree_pv_translated_to_csi() -> None:
    def objects(new_id: str) -> list[KubeObject]:
        return [
            pvc("new", volume="pv-new"),
            pv("pv-new", source={"awsElasticBlockStore": {"volumeID": new_id}}),
            *bound("a", handle="vol-0abc", driver=EBS_DRIVER),
        ]

    # the in-tree PV is the same EBS volume as the existing CSI one: shared, so it fits at the limit
    _, got = _check(make_pod().pvc("new"), [_existing("a")], objects("aws://us-east-1a/vol-0abc"), csi_node("n1", {EBS_DRIVER: 1}))
    assert got.is_success()
    # another EBS volume counts against ebs.csi.aws.com
    _, got = _check(make_pod().pvc("new"), [_existing("a")], objects("vol-0new"), csi_node("n1", {EBS_DRIVER: 1}))
    assert got.reasons == [EXCEEDED]
    _, got = _check(make_pod().pvc("new"), [_existing("a")], objects("vol-0new"), csi_node("n1", {EBS_DRIVER: 2}))
    assert got.is_success()
    # an EBS id that cannot be translated is not counted
    _, got = _check(make_pod().pvc("new"), [_existing("a")], objects("aws://zone/bad"), csi_node("n1", {EBS_DRIVER: 1}))
    assert got.is_success()


def test_inline_in_tree_volumes() -> None:
    node = csi_node("n1", {EBS_DRIVER: 1})
    existing = make_pod("old").volume(ebs_inline("vol-1"))
    # a different EBS volume: 1 + 1 > 1
    _, got = _check(make_pod().volume(ebs_inline("vol-2")), [existing], [], node)
    assert got.reasons == [EXCEEDED]
    # the same EBS volume is shared, not counted twice
    _, got = _check(make_pod().volume(ebs_inline("vol-1")), [existing], [], node)
    assert got.is_success()
    # without a CSINode nothing is migrated, so nothing is counted
    _, got = _check(make_pod().volume(ebs_inline("vol-2")), [existing], [], None)
    assert got.is_success()


def test_portworx_needs_the_migrated_annotation() -> None:
    px = "pxd.portworx.com"

    def vol(vid: str) -> dict[str, Any]:
        return {"name": "px", "portworxVolume": {"volumeID": vid}}

    existing = make_pod("old").volume(vol("p1"))
    _, got = _check(make_pod().volume(vol("p2")), [existing], [], csi_node("n1", {px: 1}))
    assert got.is_success()
    _, got = _check(
        make_pod().volume(vol("p2")), [existing], [], csi_node("n1", {px: 1}, migrated="kubernetes.io/portworx-volume")
    )
    assert got.reasons == [EXCEEDED]


def test_generic_ephemeral_volumes() -> None:
    eph = {"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}}
    sc = storage_class("fast", provisioner=DRIVER)
    node = csi_node("n1", {DRIVER: 1})
    owned = pvc("web-scratch", sc="fast", owner_uid="web-uid")
    _, got = _check(make_pod("web").uid("web-uid").volume(eph), [_existing("a")], [owned, sc, *bound("a")], node)
    assert got.reasons == [EXCEEDED]
    foreign = pvc("web-scratch", sc="fast", owner_uid="other")
    _, got = _check(make_pod("web").uid("web-uid").volume(eph), [_existing("a")], [foreign, sc, *bound("a")], node)
    assert (got.code, got.reasons) == (
        Code.ERROR,
        ["PVC default/web-scratch was not created for pod default/web (pod is not owner)"],
    )


def test_new_pod_claim_missing_is_unresolvable() -> None:
    _, got = _check(make_pod().pvc("data"), [], [], csi_node("n1", {DRIVER: 1}))
    assert (got.code, got.reasons) == (
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        ['looking up PVC default/data: persistentvolumeclaim "data" not found'],
    )


def test_volume_attachments_count() -> None:
    va = KubeObject(
        {
            "kind": "VolumeAttachment",
            "metadata": {"name": "va1"},
            "spec": {"attacher": DRIVER, "nodeName": "n1", "source": {"persistentVolumeName": "pv-x"}},
        },
        "VolumeAttachment",
        False,
    )
    objects = [*bound("new"), pv("pv-x", source={"csi": {"driver": DRIVER, "volumeHandle": "hx"}}), va]
    _, got = _check(make_pod().pvc("new"), [], objects, csi_node("n1", {DRIVER: 1}))
    assert got.reasons == [EXCEEDED]
    _, got = _check(make_pod().pvc("new"), [], objects, csi_node("n1", {DRIVER: 2}))
    assert got.is_success()


@pytest.mark.parametrize(
    ("spec", "labels", "driver", "handle"),
    [
        pytest.param({"awsElasticBlockStore": {"volumeID": "vol-1"}}, {}, EBS_DRIVER, "vol-1", id="ebs-bare"),
        pytest.param({"awsElasticBlockStore": {"volumeID": "aws://us-east-1a/vol-1"}}, {}, EBS_DRIVER, "vol-1", id="ebs-url"),
        pytest.param(
            {"gcePersistentDisk": {"pdName": "d"}}, {"topology.kubernetes.io/zone": "us-central1-a"},
            "pd.csi.storage.gke.io", "projects/UNSPECIFIED/zones/us-central1-a/disks/d", id="gce-zonal",
        ),
        pytest.param(
            {"gcePersistentDisk": {"pdName": "d"}}, {"topology.kubernetes.io/zone": "us-central1-a__us-central1-b"},
            "pd.csi.storage.gke.io", "projects/UNSPECIFIED/regions/us-central1/disks/d", id="gce-regional",
        ),
        pytest.param(
            {"gcePersistentDisk": {"pdName": "d"}}, {}, "pd.csi.storage.gke.io",
            "projects/UNSPECIFIED/zones/UNSPECIFIED/disks/d", id="gce-unknown-zone",
        ),
        pytest.param({"azureDisk": {"diskURI": "/sub/x", "kind": "Managed"}}, {}, "disk.csi.azure.com", "/sub/x", id="azure-disk"),
        pytest.param({"cinder": {"volumeID": "c1"}}, {}, "cinder.csi.openstack.org", "c1", id="cinder"),
    ],
)
def test_translation(spec: dict[str, Any], labels: dict[str, str], driver: str, handle: str) -> None:
    got = csi.translate_pv(spec, labels)
    assert (got.driver, got.volume_handle) == (driver, handle)


@pytest.mark.parametrize(
    "spec",
    [
        pytest.param({"awsElasticBlockStore": {"volumeID": "aws://us-east-1a/bad"}}, id="ebs-bad-id"),
        pytest.param({"azureDisk": {"diskURI": "/sub/x", "kind": "Shared"}}, id="azure-shared"),
        pytest.param({"gcePersistentDisk": {"pdName": "d"}, "_labels": "zone-a__zone-b"}, id="gce-bad-zones"),
    ],
)
def test_translation_errors(spec: dict[str, Any]) -> None:
    labels = {"topology.kubernetes.io/zone": spec.pop("_labels")} if "_labels" in spec else {}
    with pytest.raises(csi.TranslationError):
        csi.translate_pv(spec, labels)


def test_extension_points() -> None:
    pl = nvl.new(None, FakeHandle())
    assert pl.pre_filter_extensions() is None
    assert not hasattr(pl, "score") and not hasattr(pl, "reserve")


def test_explain_node() -> None:
    objects = bound("new") + bound("a") + bound("b")
    snap = make_snapshot([make_node("n1")], [], [*objects, csi_node("n1", {DRIVER: 2})])
    pl = nvl.new(None, FakeHandle(snap))
    state = CycleState()
    pod = make_pod().pvc("new").build()
    pl.pre_filter(state, pod, [])
    got = pl.explain_node(state, pod, node_info(make_node("n1"), _existing("a", "b")))
    assert got == {"csiNode": True, "drivers": [{"driver": DRIVER, "limit": 2, "attached": 2, "new": 1}]}
    assert pl.explain_node(CycleState(), make_pod().build(), node_info(make_node("n1"))) == {}
