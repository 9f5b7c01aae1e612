"""VolumeBinding: claim sorting in PreFilter, per-node binding/provisioning in Filter, Reserve/PreBind."""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any

import pytest

from kschedctl.config.args import VolumeBindingArgs
from kschedctl.errors import ConfigError
from kschedctl.framework.cycle_state import CycleState
from kschedctl.framework.status import Code, Status
from kschedctl.kube.selectors import NodeSelector
from kschedctl.plugins.volumebinding import binder as vb
from kschedctl.plugins.volumebinding import plugin as vbmod
from kschedctl.plugins.volumebinding.plugin import STATE_KEY, VolumeBinding
from kschedctl.plugins.volumebinding.storage import (
    access_modes,
    claim_class,
    claim_request,
    claim_selector,
    volume_bound_to_claim,
    volume_capacity,
    volume_class,
    volume_mode,
)
from kschedctl.snapshot.model import KubeObject, Pod
from tests.builders import FakeHandle, NodeBuilder, PodBuilder, make_node, make_pod, make_snapshot, node_info
from tests.plugins.storage_objects import capacity, csi_driver, csi_node, pv, pvc, storage_class, zone_in

ZONE = "topology.kubernetes.io/zone"
NODE_CONFLICT = vb.ERR_REASON_NODE_CONFLICT
BIND_CONFLICT = vb.ERR_REASON_BIND_CONFLICT
NO_SPACE = vb.ERR_REASON_NOT_ENOUGH_SPACE
PV_MISSING = vb.ERR_REASON_PV_NOT_EXIST

WFFC = storage_class("standard")
NO_PROVISIONER = storage_class("standard", provisioner="kubernetes.io/no-provisioner")


def _setup(pod: PodBuilder, objects: list[KubeObject]) -> tuple[VolumeBinding, CycleState, Pod, Status]:
    snap = make_snapshot([make_node("n1")], [], objects)
    pl = vbmod.new(None, FakeHandle(snap))
    state = CycleState()
    p = pod.build()
    _, st = pl.pre_filter(state, p, snap.node_info_list)
    return pl, state, p, st


def zone_node(zone: str, name: str = "n1", **labels: str) -> NodeBuilder:
    return make_node(name).labels(**{ZONE: zone}, **labels)


def _ephemeral(name: str = "scratch") -> dict[str, Any]:
    return {"name": name, "ephemeral": {"volumeClaimTemplate": {"spec": {"accessModes": ["ReadWriteOnce"]}}}}


@pytest.mark.parametrize(
    ("pod", "objects", "code", "reasons"),
    [
        pytest.param(make_pod(), [], Code.SKIP, [], id="no-claims"),
        pytest.param(make_pod().volume({"name": "c", "configMap": {"name": "x"}}), [], Code.SKIP, [], id="no-claim-volumes"),
        pytest.param(
            make_pod().pvc("data"), [], Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            ['persistentvolumeclaim "data" not found'], id="claim-missing",
        ),
        pytest.param(
            make_pod("web").volume(_ephemeral()), [], Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            ['waiting for ephemeral volume controller to create the persistentvolumeclaim "web-scratch"'],
            id="ephemeral-claim-missing",
        ),
        pytest.param(
            make_pod("web").uid("pod-uid").volume(_ephemeral()), [pvc("web-scratch", owner_uid="someone-else")],
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            ["PVC default/web-scratch was not created for pod default/web (pod is not owner)"], id="ephemeral-not-owned",
        ),
        pytest.param(
            make_pod("web").uid("pod-uid").volume(_ephemeral()), [pvc("web-scratch", owner_uid="pod-uid"), WFFC],
            Code.SUCCESS, [], id="ephemeral-owned",
        ),
        pytest.param(
            make_pod().pvc("data"), [pvc("data", volume="pv1", phase="Lost")], Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            ['persistentvolumeclaim "data" bound to non-existent persistentvolume "pv1"'], id="claim-lost",
        ),
        pytest.param(
            make_pod().pvc("data"), [pvc("data", volume="pv1", deleting=True)], Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            ['persistentvolumeclaim "data" is being deleted'], id="claim-deleting",
        ),
        pytest.param(
            make_pod().pvc("data"), [pvc("data"), storage_class("standard", mode="Immediate")],
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ["pod has unbound immediate PersistentVolumeClaims"], id="unbound-immediate",
        ),
        pytest.param(
            make_pod().pvc("data"), [pvc("data")], Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            ["pod has unbound immediate PersistentVolumeClaims"], id="class-missing-counts-as-immediate",
        ),
        pytest.param(
            make_pod().pvc("data"), [pvc("data", sc=None)], Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            ["pod has unbound immediate PersistentVolumeClaims"], id="no-class",
        ),
        pytest.param(
            make_pod().pvc("data"), [pvc("data", volume="pv1", bound=False), WFFC], Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            ["pod has unbound immediate PersistentVolumeClaims"], id="prebound-not-completed",
        ),
        pytest.param(make_pod().pvc("data"), [pvc("data"), WFFC], Code.SUCCESS, [], id="unbound-wffc"),
        pytest.param(make_pod().pvc("data"), [pvc("data", volume="pv1"), pv("pv1")], Code.SUCCESS, [], id="bound"),
    ],
)
def test_pre_filter(pod: PodBuilder, objects: list[KubeObject], code: Code, reasons: list[str]) -> None:
    _, _, _, st = _setup(pod, objects)
    assert st.code == code
    assert st.reasons == reasons


def _filter(pod: PodBuilder, objects: list[KubeObject], node: NodeBuilder) -> tuple[VolumeBinding, CycleState, Status]:
    pl, state, p, st = _setup(pod, objects)
    assert st.is_success(), st
    return pl, state, pl.filter(state, p, node_info(node))


def _pod_volumes_for(state: CycleState, node_name: str) -> vb.PodVolumes | None:
    """The bindings and provisions Filter found for a node, as the cycle state keeps them."""
    s = state.get(STATE_KEY)
    if s is None or s.pod_volumes_by_node is None:
        return None
    return s.pod_volumes_by_node.get(node_name)


@pytest.mark.parametrize(
    ("objects", "node", "reasons"),
    [
        pytest.param([pvc("data", volume="pv1"), pv("pv1", affinity=[zone_in("a")])], zone_node("a"), [], id="bound-affinity-ok"),
        pytest.param(
            [pvc("data", volume="pv1"), pv("pv1", affinity=[zone_in("a")])], zone_node("b"), [NODE_CONFLICT], id="bound-affinity-mismatch"
        ),
        pytest.param([pvc("data", volume="pv1"), pv("pv1")], zone_node("b"), [], id="bound-no-affinity"),
        pytest.param(
            [pvc("data", volume="pv1"), pv("pv1", affinity=[zone_in("x"), zone_in("a")])], zone_node("a"), [], id="terms-ored"
        ),
        pytest.param([pvc("data", volume="pv1")], zone_node("a"), [PV_MISSING], id="bound-pv-missing"),
        pytest.param(
            [
                pvc("data", volume="pv1"),
                pv("pv1", affinity=[]),
            ],
            zone_node("a"), [NODE_CONFLICT], id="empty-required-matches-nothing",
        ),
    ],
)
def test_filter_bound(objects: list[KubeObject], node: NodeBuilder, reasons: list[str]) -> None:
    _, _, got = _filter(make_pod().pvc("data"), objects, node)
    assert got.reasons == reasons
    assert got.code == (Code.SUCCESS if not reasons else Code.UNSCHEDULABLE_AND_UNRESOLVABLE)


def test_pv_affinity_match_fields_are_ignored() -> None:
    # The PV affinity check only knows the node's labels: with no node name the
    # metadata.name field requirement is not evaluated, so the term admits any node.
    p = pv("pv1")
    p.raw["spec"]["nodeAffinity"] = {
        "required": {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]}
    }
    _, _, got = _filter(make_pod().pvc("data"), [pvc("data", volume="pv1"), p], make_node("n2"))
    assert got.is_success()


@pytest.mark.parametrize(
    ("objects", "node", "reasons", "chosen"),
    [
        pytest.param([pvc("data"), NO_PROVISIONER, pv("pv1", affinity=[zone_in("a")])], zone_node("a"), [], ["pv1"], id="static-fit"),
        pytest.param(
            [pvc("data"), NO_PROVISIONER, pv("pv1", affinity=[zone_in("a")])], zone_node("b"), [BIND_CONFLICT], None,
            id="static-wrong-zone-no-provisioner",
        ),
        pytest.param(
            [pvc("data", size="5Gi"), NO_PROVISIONER, pv("big", size="100Gi"), pv("small", size="5Gi"), pv("tiny", size="1Gi")],
            make_node("n1"), [], ["small"], id="smallest-fit",
        ),
        pytest.param(
            [pvc("data"), NO_PROVISIONER, pv("pv1", phase="Bound")], make_node("n1"), [BIND_CONFLICT], None, id="pv-not-available"
        ),
        pytest.param(
            [pvc("data"), NO_PROVISIONER, pv("pv1", sc="other")], make_node("n1"), [BIND_CONFLICT], None, id="pv-other-class"
        ),
        pytest.param(
            [pvc("data", modes=("ReadWriteMany",)), NO_PROVISIONER, pv("pv1")], make_node("n1"), [BIND_CONFLICT], None,
            id="access-modes",
        ),
        pytest.param(
            [pvc("data", volume_mode="Block"), NO_PROVISIONER, pv("pv1")], make_node("n1"), [BIND_CONFLICT], None,
            id="volume-mode",
        ),
        pytest.param(
            [pvc("data", size="20Gi"), NO_PROVISIONER, pv("pv1", size="10Gi")], make_node("n1"), [BIND_CONFLICT], None,
            id="too-small",
        ),
        pytest.param(
            [pvc("data", selector={"matchLabels": {"tier": "gold"}}), NO_PROVISIONER, pv("pv1"), pv("pv2", labels={"tier": "gold"})],
            make_node("n1"), [], ["pv2"], id="selector",
        ),
        pytest.param(
            [pvc("data"), NO_PROVISIONER, pv("pv1", claim=("default", "other"))], make_node("n1"), [BIND_CONFLICT], None,
            id="pv-claimed-by-other",
        ),
        pytest.param(
            [pvc("data"), NO_PROVISIONER, pv("small", size="1Gi"), pv("pre", size="50Gi", phase="Released", claim=("default", "data"))],
            make_node("n1"), [], ["pre"], id="prebound-pv-wins",
        ),
        pytest.param(
            [pvc("data"), NO_PROVISIONER, pv("pre", claim=("default", "data"), affinity=[zone_in("b")]), pv("other")],
            zone_node("a"), [BIND_CONFLICT], None, id="prebound-pv-elsewhere",
        ),
        pytest.param([pvc("data"), WFFC], make_node("n1"), [], [], id="dynamic-provisioning"),
        pytest.param(
            [pvc("data", annotations={"volume.kubernetes.io/selected-node": "n2"}), WFFC, pv("pv1")],
            make_node("n1"), [BIND_CONFLICT], None, id="selected-other-node",
        ),
        pytest.param(
            [pvc("data", annotations={"volume.kubernetes.io/selected-node": "n1"}), NO_PROVISIONER, pv("pv1")],
            make_node("n1"), [BIND_CONFLICT], None, id="selected-this-node-needs-provisioner",
        ),
        pytest.param(
            [pvc("data"), storage_class("standard", allowed=[[(ZONE, ["a", "b"])]])], zone_node("c"), [BIND_CONFLICT], None,
            id="allowed-topologies-mismatch",
        ),
        pytest.param(
            [pvc("data"), storage_class("standard", allowed=[[(ZONE, ["c"])], [(ZONE, ["a"])]])], zone_node("a"), [], [],
            id="allowed-topologies-ored",
        ),
    ],
)
def test_filter_delayed(objects: list[KubeObject], node: NodeBuilder, reasons: list[str], chosen: list[str] | None) -> None:
    _, state, got = _filter(make_pod().pvc("data"), objects, node)
    assert got.reasons == reasons
    if chosen is not None:
        vols = _pod_volumes_for(state, "n1")
        assert vols is not None
        assert [b.pv.name for b in vols.static_bindings] == chosen
        assert len(vols.dynamic_provisions) == (0 if chosen else 1)


def test_two_claims_do_not_share_a_pv() -> None:
    objects = [pvc("a", size="1Gi"), pvc("b", size="2Gi"), NO_PROVISIONER, pv("pv1", size="5Gi")]
    _, _, got = _filter(make_pod().pvc("a").pvc("b"), objects, make_node("n1"))
    assert got.reasons == [BIND_CONFLICT]
    objects.append(pv("pv2", size="2Gi"))
    _, state, got = _filter(make_pod().pvc("a").pvc("b"), objects, make_node("n1"))
    assert got.is_success()
    vols = _pod_volumes_for(state, "n1")
    assert vols is not None
    # claims are matched smallest request first: "a" (1Gi) takes the 2Gi PV, "b" the 5Gi one
    assert sorted((b.pvc.name, b.pv.name) for b in vols.static_bindings) == [("a", "pv2"), ("b", "pv1")]


def test_bound_and_unbound_reasons_accumulate_in_order() -> None:
    objects = [
        pvc("old", volume="pv-old"),
        pv("pv-old", affinity=[zone_in("a")], phase="Bound"),
        pvc("new"),
        NO_PROVISIONER,
    ]
    _, _, got = _filter(make_pod().pvc("old").pvc("new"), objects, zone_node("b"))
    assert got.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert got.reasons == [NODE_CONFLICT, BIND_CONFLICT]


CAP = "cap.example.com"


@pytest.mark.parametrize(
    ("objects", "node", "ok"),
    [
        pytest.param([csi_driver(CAP, True), capacity("c1", "fast", capacity="10Gi", topology={ZONE: "a"})], zone_node("a"), True, id="enough"),
        pytest.param([csi_driver(CAP, True), capacity("c1", "fast", capacity="4Gi", topology={ZONE: "a"})], zone_node("a"), False, id="too-little"),
        pytest.param([csi_driver(CAP, True), capacity("c1", "fast", capacity="10Gi", topology={ZONE: "b"})], zone_node("a"), False, id="other-zone"),
        pytest.param([csi_driver(CAP, True), capacity("c1", "fast", capacity="10Gi")], zone_node("a"), False, id="no-topology"),
        pytest.param([csi_driver(CAP, True), capacity("c1", "slow", capacity="10Gi", topology={ZONE: "a"})], zone_node("a"), False, id="other-class"),
        pytest.param(
            [csi_driver(CAP, True), capacity("c1", "fast", capacity="100Gi", maximum="4Gi", topology={ZONE: "a"})],
            zone_node("a"), False, id="maximum-volume-size-wins",
        ),
        pytest.param(
            [csi_driver(CAP, True), capacity("c1", "fast", capacity="1Gi", maximum="5Gi", topology={ZONE: "a"})],
            zone_node("a"), True, id="maximum-volume-size-enough",
        ),
        pytest.param(
            [csi_driver(CAP, True), capacity("c1", "fast", capacity="5Gi", topology={ZONE: "a"})], zone_node("a"), True, id="exactly-enough"
        ),
        pytest.param([csi_driver(CAP, True)], zone_node("a"), False, id="no-capacity-objects"),
        pytest.param([csi_driver(CAP, False)], zone_node("a"), True, id="driver-does-not-opt-in"),
        pytest.param([csi_driver(CAP)], zone_node("a"), True, id="driver-unset"),
        pytest.param([], zone_node("a"), True, id="no-csidriver-object"),
    ],
)
def test_storage_capacity(objects: list[KubeObject], node: NodeBuilder, ok: bool) -> None:
    base = [pvc("data", sc="fast", size="5Gi"), storage_class("fast", provisioner=CAP)]
    _, _, got = _filter(make_pod().pvc("data"), base + objects, node)
    if ok:
        assert got.is_success()
    else:
        assert (got.code, got.reasons) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [NO_SPACE])


def test_storage_capacity_not_checked_without_request() -> None:
    objects = [pvc("data", sc="fast", size=None), storage_class("fast", provisioner=CAP), csi_driver(CAP, True)]
    _, _, got = _filter(make_pod().pvc("data"), objects, zone_node("a"))
    assert got.is_success()


EBS = {"awsElasticBlockStore": {"volumeID": "vol-123", "fsType": "ext4"}}


@pytest.mark.parametrize(
    ("pv_obj", "migrated", "labels", "ok"),
    [
        # not migrated on the node: the in-tree affinity is checked as written
        pytest.param(pv("pv1", source=EBS, affinity=[zone_in("a")]), "", {ZONE: "a"}, True, id="not-migrated"),
        # migrated: the zone requirement moves to the CSI driver's topology key
        pytest.param(pv("pv1", source=EBS, affinity=[zone_in("a")]), "kubernetes.io/aws-ebs", {ZONE: "a"}, False, id="migrated-needs-csi-key"),
        pytest.param(
            pv("pv1", source=EBS, affinity=[zone_in("a")]), "kubernetes.io/aws-ebs",
            {ZONE: "a", "topology.ebs.csi.aws.com/zone": "a"}, True, id="migrated-csi-key",
        ),
        # a PV with only a zone label gains a requirement on the CSI key
        pytest.param(
            pv("pv1", source=EBS, labels={ZONE: "a"}), "kubernetes.io/aws-ebs", {"topology.ebs.csi.aws.com/zone": "b"}, False,
            id="migrated-label-only",
        ),
        pytest.param(pv("pv1", source=EBS, labels={ZONE: "a"}), "", {"topology.ebs.csi.aws.com/zone": "b"}, True, id="label-only-not-migrated"),
    ],
)
def test_migrated_in_tree_pv(pv_obj: KubeObject, migrated: str, labels: dict[str, str], ok: bool) -> None:
    objects = [pvc("data", volume="pv1"), pv_obj, csi_node("n1", {"ebs.csi.aws.com": 25}, migrated=migrated)]
    _, _, got = _filter(make_pod().pvc("data"), objects, make_node("n1").labels(**labels))
    assert got.is_success() if ok else got.reasons == [NODE_CONFLICT]


def test_reserve_and_pre_bind() -> None:
    # everything bound: nothing to do at PreBind
    pl, state, pod, _ = _setup(make_pod().pvc("data"), [pvc("data", volume="pv1"), pv("pv1")])
    assert pl.filter(state, pod, node_info(make_node("n1"))).is_success()
    assert pl.reserve(state, pod, "n1").is_success()
    assert pl.pre_bind_pre_flight(state, pod, "n1").code == Code.SKIP
    assert pl.pre_bind(state, pod, "n1").is_success()
    pl.unreserve(state, pod, "n1")

    # an unbound claim: PreBind has work to do on the chosen node
    pl, state, pod, _ = _setup(make_pod().pvc("data"), [pvc("data"), WFFC])
    assert pl.filter(state, pod, node_info(make_node("n1"))).is_success()
    assert pl.reserve(state, pod, "n1").is_success()
    assert pl.pre_bind_pre_flight(state, pod, "n1").code == Code.SUCCESS
    assert pl.pre_bind(state, pod, "n1").is_success()

    # a node Filter never accepted
    pl, state, pod, _ = _setup(make_pod().pvc("data"), [pvc("data"), WFFC])
    assert pl.reserve(state, pod, "n9").is_success()  # no volumes recorded for it: counts as all bound
    pl, state, pod, _ = _setup(make_pod().pvc("data"), [pvc("data"), WFFC])
    state.get(vbmod.STATE_KEY).all_bound = False  # type: ignore[union-attr]
    got = pl.pre_bind_pre_flight(state, pod, "n9")
    assert (got.code, got.reasons) == (Code.ERROR, ['no pod volume found for node "n9"'])


def test_pod_without_claims() -> None:
    pl, state, pod, st = _setup(make_pod(), [])
    assert st.code == Code.SKIP
    assert pl.reserve(state, pod, "n1").is_success()
    assert pl.pre_bind_pre_flight(state, pod, "n1").code == Code.SKIP
    assert pl.pre_score(state, pod, []).code == Code.SKIP


def test_score_is_inert_without_storage_capacity_scoring() -> None:
    pl, state, pod, _ = _setup(make_pod().pvc("data"), [pvc("data"), NO_PROVISIONER, pv("pv1")])
    assert pl.filter(state, pod, node_info(make_node("n1"))).is_success()
    assert pl.pre_score(state, pod, []).code == Code.SKIP
    score, st = pl.score(state, pod, node_info(make_node("n1")))
    assert (score, st.code) == (0, Code.SUCCESS)
    assert pl.score_extensions() is None
    assert pl.pre_filter_extensions() is None


def test_filter_without_state_is_an_error() -> None:
    pl = vbmod.new(None, FakeHandle())
    got = pl.filter(CycleState(), make_pod().build(), node_info(make_node("n1")))
    assert (got.code, got.reasons) == (Code.ERROR, ["not found"])


def test_args_validation() -> None:
    with pytest.raises(ConfigError):
        vbmod.new(VolumeBindingArgs.model_validate({"bindTimeoutSeconds": -1}), FakeHandle())
    with pytest.raises(ConfigError):
        vbmod.new(VolumeBindingArgs.model_validate({"shape": [{"utilization": 0, "score": 10}]}), FakeHandle())
    assert vbmod.new(VolumeBindingArgs.model_validate({"bindTimeoutSeconds": 30}), FakeHandle()).args.bind_timeout_seconds == 30


def node_affinity_matches(selector: NodeSelector | None, node_labels: Mapping[str, str]) -> bool:
    """``CheckNodeAffinity`` for the oracle: only the node's labels are known to it; with no node
    name, ``matchFields`` requirements are not evaluated at all."""
    return selector is None or selector.matches(node_labels, "")


def find_matching_volume(
    claim: KubeObject,
    volumes: list[KubeObject],
    node_labels: Mapping[str, str],
    excluded: set[str],
    affinity_of: Any,
) -> KubeObject | None:
    """The oracle: ``FindMatchingVolume`` on the scheduler path as upstream's linear scan (a node is
    given, delayed binding), against which the binder's per-cycle plan is checked.

    A PV pre-bound to the claim wins at once (or rules the node out when its node
    affinity does not admit it); otherwise the smallest available PV of the
    claim's class that satisfies size, mode, attributes class, selector, node
    affinity and access modes. ``affinity_of(vol)`` returns the PV's parsed node
    affinity (cached by the caller).
    """
    requested = claim_request(claim)
    requested_class = claim_class(claim)
    selector = claim_selector(claim)
    claim_vac = str(claim.spec.get("volumeAttributesClassName") or "")
    claim_mode = volume_mode(claim)
    claim_modes = access_modes(claim)
    smallest: KubeObject | None = None
    smallest_qty = Fraction(0)
    for vol in volumes:
        if vol.name in excluded:
            continue
        has_ref = isinstance(vol.spec.get("claimRef"), dict)
        bound_here = volume_bound_to_claim(vol, claim)
        if has_ref and not bound_here:
            continue
        qty = volume_capacity(vol)
        if qty < requested:
            continue
        if volume_mode(vol) != claim_mode:
            continue
        if str(vol.spec.get("volumeAttributesClassName") or "") != claim_vac:
            continue
        if vol.meta.deletion_timestamp is not None:
            continue
        affinity_ok = node_affinity_matches(affinity_of(vol), node_labels)
        if bound_here:
            return vol if affinity_ok else None
        if str((vol.status if isinstance(vol.status, dict) else {}).get("phase") or "") != "Available":
            continue
        if selector is not None and not selector.matches(vol.labels):
            continue
        if volume_class(vol) != requested_class:
            continue
        if not affinity_ok:
            continue
        pv_modes = set(access_modes(vol))
        if any(m not in pv_modes for m in claim_modes):
            continue
        if smallest is None or smallest_qty > qty:
            smallest = vol
            smallest_qty = qty
    return smallest


def test_indexed_matching_agrees_with_the_plain_scan() -> None:
    """The per-cycle plan (candidates grouped by node affinity) picks what upstream's linear scan picks."""
    import random

    rng = random.Random(7)
    zones = ["a", "b", "c"]
    for _ in range(200):
        volumes = []
        for i in range(rng.randint(0, 12)):
            claim = None
            r = rng.random()
            if r < 0.1:
                claim = ("default", "data")
            elif r < 0.2:
                claim = ("default", "other")
            volumes.append(
                pv(
                    f"pv{i}",
                    size=f"{rng.choice([1, 2, 2, 5, 10])}Gi",
                    affinity=None if rng.random() < 0.3 else [zone_in(rng.choice(zones))],
                    phase=rng.choice(["Available", "Available", "Bound", "Released"]),
                    claim=claim,
                    labels={"tier": rng.choice(["gold", "silver"])},
                    modes=rng.choice([("ReadWriteOnce",), ("ReadWriteOnce", "ReadOnlyMany"), ("ReadWriteMany",)]),
                )
            )
        claim_obj = pvc(
            "data",
            size=f"{rng.choice([1, 2, 3])}Gi",
            selector=rng.choice([None, {"matchLabels": {"tier": "gold"}}]),
        )
        binder = vb.VolumeBinder(make_snapshot([], [], [claim_obj, *volumes]).cluster)
        excluded = {v.name for v in volumes if rng.random() < 0.15}
        plan = binder._plan(claim_obj, volumes)
        for z in zones:
            labels = {ZONE: z}
            want = find_matching_volume(claim_obj, volumes, labels, excluded, binder.pv_affinity)
            got = binder._pick_volume(plan, labels, excluded)
            assert (got.name if got else None) == (want.name if want else None)


def test_explain() -> None:
    objects = [pvc("old", volume="pv-old"), pv("pv-old", affinity=[zone_in("a")], phase="Bound"), pvc("new"), WFFC]
    pl, state, pod, _ = _setup(make_pod().pvc("old").pvc("new"), objects)
    cycle = pl.explain(state)
    assert cycle["boundClaims"] == [{"claim": "default/old", "volume": "pv-old"}]
    assert [c["claim"] for c in cycle["delayedClaims"]] == ["default/new"]
    node = pl.explain_node(state, pod, node_info(zone_node("b")))
    assert node["reasons"] == [NODE_CONFLICT]
    assert node["boundClaims"][0]["nodeAffinity"] == "does not match"
    ok = pl.explain_node(state, pod, node_info(zone_node("a")))
    assert ok["reasons"] == [] and [d["claim"] for d in ok["dynamicProvisions"]] == ["default/new"]
    skipped_pl, skipped_state, skipped_pod, _ = _setup(make_pod(), [])
    assert skipped_pl.explain(skipped_state) == {}
    assert skipped_pl.explain_node(skipped_state, skipped_pod, node_info(make_node("n1"))) == {}
