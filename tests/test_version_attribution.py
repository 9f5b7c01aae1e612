"""``diff-versions``' attribution, piece by piece: the kind of each difference and the trigger of each change.

Two cycles can differ in an outcome (a node feasible on one side only, another decision), in a status
code only (the same rejection, Unschedulable on one side and UnschedulableAndUnresolvable on the other:
preemption tries the node on one side only), in scores, or in words only. A rule change of
``config.changes`` is cited only where its trigger is present in the pod, the cluster or the two
cycles; each trigger is tested here with evidence that has it and evidence that does not, and the
table of rows is checked to cover every rule and gate effect.
"""

from __future__ import annotations

from typing import Any

import pytest

from kschedctl.config import changes as c
from kschedctl.explain.trace import Trace
from kschedctl.kube.versions import resolve_features
from kschedctl.whatif.diff import SAME, Decision, FeasibilityChange, NodeScores, PodDiff, verdict_kind
from kschedctl.whatif.versions import differences, record_kind
from tests.builders import make_cluster, make_node, make_object, make_pod

U, UAU = "Unschedulable", "UnschedulableAndUnresolvable"


# --------------------------------------------------------------------------- kinds of difference


@pytest.mark.parametrize(
    ("feasible_a", "feasible_b", "code_a", "code_b", "kind"),
    [
        (True, False, None, U, c.OUTCOME),  # feasible on A only
        (False, True, UAU, None, c.OUTCOME),
        (None, False, None, U, c.OUTCOME),  # evaluated on B only
        (False, False, U, UAU, c.CODE),  # preemption stops trying the node
        (False, False, UAU, U, c.CODE),
        (False, False, U, U, c.MESSAGE),  # the same rejection in other words
        (False, False, UAU, UAU, c.MESSAGE),
        (False, False, None, None, c.MESSAGE),  # left out by PreFilter on both sides, worded differently
    ],
)
def test_kind_of_a_filter_verdict_difference(feasible_a: bool | None, feasible_b: bool | None, code_a: str | None,
                                             code_b: str | None, kind: str) -> None:
    assert verdict_kind(feasible_a, feasible_b, code_a, code_b) == kind
    assert FeasibilityChange("n", "a", "b", feasible_a, feasible_b, code_a, code_b).kind == kind


@pytest.mark.parametrize(
    ("a", "b", "kind"),
    [
        (("Success", ()), (U, ("no",)), c.OUTCOME),  # let through on A only
        (None, (UAU, ("no",)), c.OUTCOME),  # ran on B only, and rejected
        ((U, ("x",)), (UAU, ("x",)), c.CODE),
        ((U, ("x",)), (U, ("y",)), c.MESSAGE),
        (("Skip", ()), ("Success", ("note",)), c.CODE),  # neither rejects: another code, no other outcome
    ],
)
def test_kind_of_a_pre_filter_status_difference(a: Any, b: Any, kind: str) -> None:
    assert record_kind(a, b) == kind


def _diff(change: str = SAME, feasibility: tuple[FeasibilityChange, ...] = (), *, a: Decision | None = None,
          b: Decision | None = None, totals: tuple[int, int] | None = None) -> PodDiff:
    da = a or Decision("unschedulable", "default-scheduler", fit_error="0/2 nodes are available")
    db = b or Decision("unschedulable", "default-scheduler", fit_error="0/2 nodes are available")
    d = PodDiff("ns/p", None, da, db, change, list(feasibility))
    if totals is not None:
        d.scores = [NodeScores("n1", ["A", "B"], *totals)]
    return d


_FLIP = FeasibilityChange("n1", "feasible", "NodePorts: node(s) didn't have free ports", True, False, None, U)
_CODE = FeasibilityChange("n1", "NodeResourcesFit: Insufficient cpu", "NodeResourcesFit: Insufficient cpu",
                          False, False, U, UAU)
_WORDS = FeasibilityChange("n2", "TaintToleration: node(s) had untolerated taint {a: b}",
                           "TaintToleration: node(s) had untolerated taint(s)", False, False, UAU, UAU)


@pytest.mark.parametrize(
    ("diff", "kinds", "pod_kind"),
    [
        (_diff(), [], None),
        (_diff(feasibility=(_WORDS,)), [c.MESSAGE], c.MESSAGE),
        (_diff(feasibility=(_CODE,)), [c.CODE], c.CODE),
        (_diff(feasibility=(_CODE, _WORDS)), [c.CODE, c.MESSAGE], c.CODE),
        (_diff(feasibility=(_FLIP, _WORDS)), [c.OUTCOME, c.MESSAGE], c.OUTCOME),
        (_diff(a=Decision("scheduled", "p", node="n1"), b=Decision("scheduled", "p", node="n1"), totals=(10, 12)),
         [c.SCORE_KIND], c.SCORE_KIND),
        (_diff("node-changed", a=Decision("scheduled", "p", node="n1"), b=Decision("scheduled", "p", node="n2")),
         [c.OUTCOME], c.OUTCOME),
        (_diff(b=Decision("unschedulable", "default-scheduler", fit_error="0/2 nodes: other words")),
         [c.MESSAGE], c.MESSAGE),
    ],
    ids=["nothing", "words", "code", "code-and-words", "flip", "scores", "node", "fit-error"],
)
def test_differences_are_kept_apart_by_kind(diff: PodDiff, kinds: list[str], pod_kind: str | None) -> None:
    t = Trace("ns/p", "default-scheduler")
    diff.by_kind = differences(diff, t, t)
    assert list(diff.by_kind) == kinds
    assert diff.kind == pod_kind
    assert diff.differs == bool(kinds)


def test_a_code_difference_says_what_it_does_to_preemption() -> None:
    t = Trace("ns/p", "default-scheduler")
    (words,) = differences(_diff(feasibility=(_CODE,)), t, t)[c.CODE]
    assert words == ("NodeResourcesFit rejects 1 node(s) (n1) as UnschedulableAndUnresolvable, not Unschedulable: "
                     "preemption no longer tries them")
    back = FeasibilityChange("n1", _CODE.b, _CODE.a, False, False, UAU, U)
    (words,) = differences(_diff(feasibility=(back,)), t, t)[c.CODE]
    assert words.endswith("as Unschedulable, not UnschedulableAndUnresolvable: preemption now tries them")


def test_without_words_by_kind_a_comparison_of_profiles_takes_its_kind_from_the_verdicts() -> None:
    assert _diff(feasibility=(_WORDS, _CODE)).kind == c.CODE
    assert _diff("node-changed").kind == c.OUTCOME
    assert _diff().kind is None


# --------------------------------------------------------------------------- triggers


def _evidence(pod: Any = None, cluster: Any = None, **facts: Any) -> c.Evidence:
    return c.Evidence((pod or make_pod("p")).build(), cluster or make_cluster([make_node("n1")]), **facts)


SIDECAR_WITH_PORT = [{"name": "proxy", "image": "envoy", "restartPolicy": "Always",
                      "ports": [{"containerPort": 8080, "hostPort": 8080, "protocol": "TCP"}]}]
DRA_CLUSTER = make_cluster([make_node("n1")], objects=[make_object("DeviceClass", "gpu.example.com")])

IMAGE_VOLUME_POD = make_pod("p").volume({"name": "models", "image": {"reference": "models:v1"}})
#: A running pod with a container whose resize is pending (allocated above its spec).
RESIZED = make_pod("running").req(cpu="1").set("status.containerStatuses", [
    {"name": "c0", "allocatedResources": {"cpu": "2"}, "resources": {"requests": {"cpu": "1"}}}])
INFEASIBLE = [{"type": "PodResizePending", "status": "True", "reason": "Infeasible"}]
BIND_MOUNTS = {"name": "app", "image": "app", "volumeMounts": [{"name": "d", "mountPath": "/d", "bindMountOptions": ["noexec"]}]}
CLAIMING = make_pod("p").resource_claim("gpu", claim_name="gpu")
TAINTED_SLICE = make_cluster([make_node("n1")], objects=[make_object("ResourceSlice", "s1", spec={
    "driver": "gpu.example.com", "pool": {"name": "n1"}, "nodeName": "n1",
    "devices": [{"name": "g0", "taints": [{"key": "broken", "effect": "NoSchedule"}]}]})])
TAINT_RULE = make_cluster([make_node("n1")], objects=[make_object("DeviceTaintRule", "maintenance", spec={
    "deviceSelector": {"driver": "gpu.example.com"}, "taint": {"key": "maintenance", "effect": "NoSchedule"}})])

#: (rule or gate name, which of its effects, evidence with the trigger, evidence without it).
TRIGGERS: list[tuple[str, int, c.Evidence, c.Evidence]] = [
    ("TaintTolerationMessage", 0, _evidence(rejections=frozenset({("TaintToleration", UAU)})),
     _evidence(rejections=frozenset({("NodeResourcesFit", U)}))),
    ("FitUnresolvable", 0, _evidence(rejections=frozenset({("NodeResourcesFit", UAU)})),
     _evidence(rejections=frozenset({("NodeResourcesFit", U)}))),
    ("ReadWriteOncePodMessage", 0, _evidence(rejections=frozenset({("VolumeRestrictions", U)})), _evidence()),
    ("NodePortsSidecars", 0, _evidence(make_pod("p").set("spec.initContainers", SIDECAR_WITH_PORT)),
     _evidence(make_pod("p").init_container("proxy", sidecar=True).host_port(80))),
    ("NodePortsSidecars", 0, _evidence(cluster=make_cluster(
        [make_node("n1")], [make_pod("running").node("n1").set("spec.initContainers", SIDECAR_WITH_PORT)])),
     _evidence()),
    ("DynamicResourcesScore", 0, _evidence(make_pod("p").resource_claim("gpu", claim_name="gpu")), _evidence()),
    ("DynamicResourcesScore", 0, _evidence(cluster=DRA_CLUSTER), _evidence()),
    ("DeterministicTieBreak", 0, _evidence(tie=True), _evidence()),
    ("BalancedAllocationChange", 0, _evidence(scored=frozenset({"NodeResourcesBalancedAllocation"})),
     _evidence(scored=frozenset({"NodeResourcesFit"}))),
    ("NodeDeclaredFeaturesTable", 0, _evidence(prefiltered=frozenset({"NodeDeclaredFeatures"})), _evidence()),
    ("DynamicResourceAllocation", 0, _evidence(make_pod("p").resource_claim("gpu", claim_name="gpu")),
     _evidence(post_filter_words=frozenset({"DynamicResources"}))),
    ("DynamicResourceAllocation", 0, _evidence(cluster=DRA_CLUSTER), _evidence()),
    ("DynamicResourceAllocation", 1, _evidence(post_filter_words=frozenset({"DynamicResources"})),
     _evidence(make_pod("p").resource_claim("gpu", claim_name="gpu"), post_filter_words=frozenset({"DynamicResources"}))),
    ("PodLevelResources", 0, _evidence(make_pod("p").pod_level({"cpu": "1"})), _evidence(make_pod("p").req(cpu="1"))),
    ("NodeDeclaredFeatures", 0, _evidence(rejections=frozenset({("NodeDeclaredFeatures", UAU)})), _evidence()),
    ("OpportunisticBatching", 0, _evidence(tie=True), _evidence()),  # never one cycle's doing: no positive case
    ("GangScheduling", 0, _evidence(make_pod("p").set("spec.schedulingGroup", {"podGroupName": "g"})), _evidence()),
    ("GenericWorkload", 0, _evidence(make_pod("p").set("spec.schedulingGroup", {"podGroupName": "g"})), _evidence()),
    ("PodGroupCycle", 0, _evidence(make_pod("p").set("spec.schedulingGroup", {"podGroupName": "g"})), _evidence()),
    ("GangSchedulingByGenericWorkload", 0, _evidence(make_pod("p").set("spec.schedulingGroup", {"podGroupName": "g"})),
     _evidence()),
    ("PodGroupPostFilter", 0, _evidence(make_pod("p").set("spec.schedulingGroup", {"podGroupName": "g"})), _evidence()),
    ("TopologyAwareWorkloadScheduling", 0, _evidence(make_pod("p").set("spec.schedulingGroup", {"podGroupName": "g"})),
     _evidence()),
    ("TopologyAwareWorkloadScheduling", 1, _evidence(make_pod("p").set("spec.schedulingGroup", {"podGroupName": "g"})),
     _evidence()),
    ("PermitWaitMessage", 0, _evidence(make_pod("p").set("spec.schedulingGroup", {"podGroupName": "g"})), _evidence()),
    ("StorageCapacityScoring", 0, _evidence(make_pod("p").pvc("data")), _evidence()),
    ("ImageLocalityImageVolumes", 0, _evidence(IMAGE_VOLUME_POD), _evidence(make_pod("p").pvc("data"))),
    ("ImageLocalityVolumeThreshold", 0, _evidence(IMAGE_VOLUME_POD), _evidence(make_pod("p").image("app:1"))),
    ("ResizeRequestsMaxOfTotals", 0, _evidence(cluster=make_cluster([make_node("n1")], [RESIZED.node("n1")])),
     _evidence(cluster=make_cluster([make_node("n1")], [make_pod("running").node("n1").req(cpu="1")]))),
    ("ResizeRequestsMaxOfTotals", 0, _evidence(make_pod("p").set("status.conditions", INFEASIBLE)), _evidence()),
    ("InPlacePodLevelResourcesVerticalScaling", 0,
     _evidence(cluster=make_cluster([make_node("n1")], [make_pod("running").node("n1").set(
         "status.allocatedResources", {"cpu": "2"})])),
     _evidence(cluster=make_cluster([make_node("n1")], [RESIZED.node("n1")]))),
    ("NodeDeclaredFeaturesBindMounts", 0, _evidence(make_pod("p").set("spec.containers", [BIND_MOUNTS])),
     _evidence(make_pod("p").set("spec.containers", [{**BIND_MOUNTS, "volumeMounts": [{"name": "d", "mountPath": "/d"}]}]))),
    ("GatedPodsNominated", 0, _evidence(cluster=make_cluster([make_node("n1")], [make_pod("g").gate("x").nominated("n1")])),
     _evidence(cluster=make_cluster([make_node("n1")], [make_pod("g").nominated("n1"), make_pod("h").gate("x")]))),
    ("VolumeLimitScaling", 0, _evidence(make_pod("p").pvc("data"), make_cluster([make_node("n1")], objects=[
        make_object("CSIDriver", "ebs.csi.aws.com", spec={"preventPodSchedulingIfMissing": True})])),
     _evidence(make_pod("p").pvc("data"), make_cluster([make_node("n1")], objects=[
         make_object("CSIDriver", "ebs.csi.aws.com", spec={"preventPodSchedulingIfMissing": False})]))),
    ("DRADeviceTaints", 0, _evidence(CLAIMING, TAINTED_SLICE), _evidence(make_pod("p"), TAINTED_SLICE)),
    ("DRADeviceTaints", 0, _evidence(CLAIMING, TAINT_RULE), _evidence(CLAIMING, DRA_CLUSTER)),
    ("DRADeviceTaintRules", 0, _evidence(CLAIMING, TAINT_RULE), _evidence(CLAIMING, TAINTED_SLICE)),
]


def _trigger(name: str, effect: int) -> c.Trigger:
    rule = next((r for r in c.RULES if r.name == name), None)
    return rule.trigger if rule is not None else c.GATE_EFFECTS[name][effect].trigger


@pytest.mark.parametrize(("name", "effect", "present", "absent"), TRIGGERS,
                         ids=[f"{n}-{e}-{i}" for i, (n, e, _, _) in enumerate(TRIGGERS)])
def test_each_change_is_cited_only_where_its_trigger_is_present(name: str, effect: int, present: c.Evidence,
                                                                absent: c.Evidence) -> None:
    trigger = _trigger(name, effect)
    assert trigger(present) is (name != "OpportunisticBatching")
    assert trigger(absent) is False
    assert trigger.text


def test_every_rule_and_gate_effect_has_its_trigger_tested() -> None:
    tested = {(name, effect) for name, effect, _, _ in TRIGGERS}
    every = {(r.name, 0) for r in c.RULES} | {(g, i) for g, effects in c.GATE_EFFECTS.items() for i in range(len(effects))}
    assert tested == every


def test_attribution_needs_the_trigger_the_part_and_the_kind() -> None:
    (taint,) = [r for r in c.RULES if r.name == "TaintTolerationMessage"]
    words = [("TaintToleration", c.FILTER, c.MESSAGE)]
    rejected = _evidence(rejections=frozenset({("TaintToleration", UAU)}))
    assert c.attribute([taint], words, rejected) == [taint]
    assert c.attribute([taint], words, _evidence()) == []  # no taint rejected anything
    assert c.attribute([taint], [("TaintToleration", c.FILTER, c.OUTCOME)], rejected) == []  # words can't flip a verdict
    assert c.attribute([taint], [("NodeResourcesFit", c.FILTER, c.MESSAGE)], rejected) == []


# --------------------------------------------------------------------------- direction


@pytest.mark.parametrize(
    ("a", "b", "name", "line"),
    [
        (33, 36, "TaintTolerationMessage", "v1.34: TaintToleration's Filter reason no longer quotes the untolerated taint"),
        (36, 33, "TaintTolerationMessage", "back before v1.34: TaintToleration's Filter reason quotes the untolerated taint again"),
        (36, 34, "BalancedAllocationChange", "back before v1.36: NodeResourcesBalancedAllocation scores the balance after the "
                                             "pod again, not the change it makes"),
        (33, 34, "DynamicResourceAllocation", "v1.34: DynamicResourceAllocation is on by default: DynamicResources joins the "
                                              "default profile (ResourceClaims are allocated)"),
        (35, 33, "DynamicResourceAllocation", "back before v1.34: DynamicResourceAllocation is off by default: DynamicResources "
                                              "leaves the default profile (ResourceClaims are not allocated)"),
    ],
)
def test_a_downgrade_is_worded_as_going_back(a: int, b: int, name: str, line: str) -> None:
    change = next(ch for ch in c.changes_between(resolve_features(a), resolve_features(b)) if ch.name == name)
    assert change.line() == line
    assert change.undone is (b < a)
    assert change.to_dict()["undone"] is (b < a)


def test_a_gate_turned_off_by_flag_says_off() -> None:
    (change,) = c.changes_between(resolve_features(35), resolve_features(35, {"PodLevelResources": False}))
    assert change.line() == ("v1.35: PodLevelResources is off (--feature-gates): a pod's spec.resources is dropped: "
                             "the sum of its containers' requests counts")
