"""v1.36's and v1.37's pod groups end to end: PodGroup objects in snapshots (files, live), the configuration
extension points, and the pod-group cycle ``explain`` runs with the gates on (``explain/podgroup.py``).

The plugins on their own are tested in tests/plugins/test_podgroups.py."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from kschedctl.config.types import SchedulerConfig
from kschedctl.errors import ConfigError, InputError
from kschedctl.explain.pending import pending_rows
from kschedctl.framework.nodeinfos import Snapshot
from kschedctl.framework.registry import Registry, probe
from kschedctl.framework.runtime import Framework
from kschedctl.kube.features import Features
from kschedctl.kube.versions import resolve_features
from kschedctl.plugins import in_tree_registry
from kschedctl.render.markdown import render_trace_markdown
from kschedctl.render.pending import render_pending_table
from kschedctl.render.table import render_trace
from kschedctl.snapshot.cluster import Cluster
from kschedctl.snapshot.live import LiveSource
from kschedctl.snapshot.loader import build_cluster, parse_documents
from kschedctl.snapshot.model import KubeObject
from kschedctl.testing import (
    PodBuilder,
    SnapshotHandle,
    load_config,
    make_cluster,
    make_node,
    make_object,
    make_pod,
    schedule,
)
from kschedctl.whatif.causes import group_by_cause
from tests.apiserver import RECORDINGS, RecordedAPIServer, load_rules, recording_name

GATES = {"GenericWorkload": True, "GangScheduling": True, "TopologyAwareWorkloadScheduling": True}
V136_ON = resolve_features(36, GATES)
#: v1.37 has no GangScheduling gate: GenericWorkload brings the GangScheduling plugin.
V137_ON = resolve_features(37, {"GenericWorkload": True, "TopologyAwareWorkloadScheduling": True})

POD_GROUP = """apiVersion: scheduling.k8s.io/v1alpha2
kind: PodGroup
metadata: {name: pg, namespace: default}
spec:
  schedulingPolicy: {gang: {minCount: 2}}
"""
MEMBER = """apiVersion: v1
kind: Pod
metadata: {name: p, namespace: default}
spec:
  schedulingGroup: {podGroupName: pg}
  containers: [{name: c, image: x}]
"""


# ------------------------------------------------------------------------------------ snapshot: files


@pytest.mark.parametrize(
    ("features", "why"),
    [
        (resolve_features(35), "kube-apiserver v1.35.4 does not have this API version"),
        (resolve_features(36), "serves it only with the GenericWorkload feature gate on"),
    ],
)
def test_pod_groups_are_refused_where_the_api_server_does_not_serve_them(features: Features, why: str) -> None:
    with pytest.raises(InputError) as e:
        build_cluster(parse_documents("c.yaml", POD_GROUP), features=features)
    assert e.value.message.startswith('no matches for kind "PodGroup" in version "scheduling.k8s.io/v1alpha2" (')
    assert why in e.value.message
    assert e.value.field == "apiVersion"


@pytest.mark.parametrize(
    ("features", "hint"),
    [
        (V136_ON, "kube-scheduler v1.36.2 reads PodGroup as scheduling.k8s.io/v1alpha2"),
        (resolve_features(36), "kube-scheduler v1.36.2 reads PodGroup as scheduling.k8s.io/v1alpha2, which kube-apiserver "
                               "v1.36.2 serves only with the GenericWorkload feature gate on"),
        (resolve_features(35), "kschedctl reads PodGroup as scheduling.k8s.io/v1alpha2, which kube-apiserver v1.35.4 does "
                               "not serve: it comes with v1.36, with the GenericWorkload feature gate on"),
        (V137_ON, "kube-scheduler v1.37.2 reads PodGroup as scheduling.k8s.io/v1beta1 or scheduling.k8s.io/v1alpha3"),
        (resolve_features(37), "kube-scheduler v1.37.2 reads PodGroup as scheduling.k8s.io/v1beta1 or scheduling.k8s.io/v1alpha3, "
                               "which kube-apiserver v1.37.2 serves only with the GenericWorkload feature gate on"),
    ],
)
def test_a_pod_group_of_another_api_version_is_refused_naming_the_version_in_use(features: Features, hint: str) -> None:
    """An apiVersion no release serves PodGroup as: the refusal says what the run's release reads instead."""
    with pytest.raises(InputError) as e:
        build_cluster(parse_documents("c.yaml", POD_GROUP.replace("v1alpha2", "v1alpha1")), features=features)
    assert e.value.message == f'no matches for kind "PodGroup" in version "scheduling.k8s.io/v1alpha1" ({hint})'
    assert e.value.field == "apiVersion" and "v1.35" not in hint.replace("v1.35.4", "")


def test_a_pod_group_of_another_api_version_is_refused_by_the_cli_as_the_version_runs(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from kschedctl.cli.main import app

    cluster = tmp_path / "cluster.yaml"
    node = "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: '4', memory: 8Gi, pods: '110'}}\n"
    cluster.write_text(node + "---\n" + POD_GROUP.replace("v1alpha2", "v1alpha1") + "---\n" + MEMBER)
    r = CliRunner().invoke(app, ["explain", "pending", "-A", "--snapshot", str(cluster), "--kube-version", "1.36",
                                 "--feature-gates", "GenericWorkload=true"])
    assert r.exit_code == 2, r.output
    assert r.output.strip() == (
        f'error: {cluster}: document 2: PodGroup default/pg: apiVersion: no matches for kind "PodGroup" in version '
        '"scheduling.k8s.io/v1alpha1" (kube-scheduler v1.36.2 reads PodGroup as scheduling.k8s.io/v1alpha2)'
    )


def test_pod_groups_are_read_with_generic_workload_on() -> None:
    cluster = build_cluster(parse_documents("c.yaml", POD_GROUP), features=V136_ON)
    pg = cluster.get("PodGroup", "default", "pg")
    assert pg is not None and pg.raw["spec"]["schedulingPolicy"] == {"gang": {"minCount": 2}}


def test_pod_groups_a_server_listed_are_kept() -> None:
    """A live server that listed them serves them, whatever version the run follows."""
    cluster = build_cluster(parse_documents("c.yaml", POD_GROUP), validate=False, features=resolve_features(35))
    assert cluster.get("PodGroup", "default", "pg") is not None


@pytest.mark.parametrize(("features", "kept"), [(resolve_features(35), False), (resolve_features(36), False), (V136_ON, True)])
def test_scheduling_group_is_dropped_when_generic_workload_is_off(features: Features, kept: bool) -> None:
    cluster = build_cluster(parse_documents("c.yaml", MEMBER), features=features)
    [pod] = cluster.pods
    assert ("schedulingGroup" in pod.raw["spec"]) is kept
    assert any("spec.schedulingGroup dropped from 1 pod(s): GenericWorkload is off" in n for n in cluster.notes) is not kept


# ------------------------------------------------------------------------------------ snapshot: live


def _load_live(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, recordings: Path) -> list[str]:
    notes: list[str] = []
    with RecordedAPIServer(recordings=recordings) as srv:
        monkeypatch.setenv("KUBECONFIG", str(srv.kubeconfig(tmp_path / "kubeconfig")))
        monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
        cluster = LiveSource().load(warn=notes.append)
    notes.append(f"podgroups: {len(cluster.of_kind('PodGroup'))}")
    return notes


def test_live_read_of_a_server_without_pod_groups_says_nothing_about_them(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    notes = _load_live(monkeypatch, tmp_path, RECORDINGS)
    assert notes[-1] == "podgroups: 0"
    assert not any("podgroups" in n for n in notes[:-1])


def test_live_read_lists_pod_groups_when_the_server_serves_them(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    recordings = tmp_path / "recordings"
    shutil.copytree(RECORDINGS, recordings)
    item = {"metadata": {"name": "pg", "namespace": "shop"}, "spec": {"schedulingPolicy": {"gang": {"minCount": 2}}}}
    answer = {"kind": "PodGroupList", "apiVersion": "scheduling.k8s.io/v1alpha2", "metadata": {}, "items": [item]}
    (recordings / recording_name("/apis/scheduling.k8s.io/v1alpha2/podgroups")).write_text(json.dumps(answer))
    assert _load_live(monkeypatch, tmp_path, recordings)[-1] == "podgroups: 1"


# ------------------------------------------------------------------------------------ configuration


def _config(extra: str) -> str:
    return f"""apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
{extra}"""


PLACEMENT_SCORE = "    placementScore: {enabled: [{name: NodeResourcesFit, weight: 3}]}\n"


def test_placement_extension_points_are_unknown_fields_before_v1_36() -> None:
    with pytest.raises(ConfigError) as e:
        load_config(_config(PLACEMENT_SCORE), features=resolve_features(35))
    assert 'unknown field "profiles[0].plugins.placementScore"' in str(e.value)
    load_config(_config(PLACEMENT_SCORE), features=resolve_features(36))


def framework_for(config: SchedulerConfig, cluster: Cluster, reg: Registry | None = None) -> Framework:
    return Framework(config.profiles[0], reg or in_tree_registry(), Snapshot(cluster, features=config.features))


def _lists(features: Features, config: str | None = None) -> dict[str, object]:
    fw = framework_for(load_config(config, features=features), make_cluster([make_node("n1")]))
    return {
        "placementGenerate": fw.plugins.names("placementGenerate"),
        "placementScore": fw.plugins.names("placementScore"),
        "weights": fw.plugins.placement_score_weights,
    }


@pytest.mark.parametrize(
    ("features", "config", "want"),
    [
        (resolve_features(35), None, {"placementGenerate": [], "placementScore": [], "weights": {}}),
        (
            resolve_features(36),  # gates off: NodeResourcesFit still implements PlacementScore (MultiPoint)
            None,
            {"placementGenerate": [], "placementScore": ["NodeResourcesFit"], "weights": {"NodeResourcesFit": 1}},
        ),
        (
            V136_ON,
            None,
            {
                "placementGenerate": ["TopologyPlacementGenerator"],
                "placementScore": ["NodeResourcesFit", "PodGroupPodsCount"],
                "weights": {"NodeResourcesFit": 1, "PodGroupPodsCount": 1},
            },
        ),
        (
            V136_ON,
            _config(PLACEMENT_SCORE),
            {
                "placementGenerate": ["TopologyPlacementGenerator"],
                "placementScore": ["NodeResourcesFit", "PodGroupPodsCount"],
                "weights": {"NodeResourcesFit": 3, "PodGroupPodsCount": 1},
            },
        ),
    ],
)
def test_placement_plugin_lists(features: Features, config: str | None, want: dict[str, object]) -> None:
    assert _lists(features, config) == want


def test_at_most_one_placement_generator() -> None:
    generators = "    placementGenerate: {enabled: [{name: TopologyPlacementGenerator}, {name: Fake}]}\n"
    fake = type("Fake", (), {"name": "Fake", "generate_placements": lambda self, g, p: ([p], None)})
    reg = in_tree_registry()
    reg.register("Fake", lambda args, handle: fake())
    with pytest.raises(ConfigError, match="at most one placement generate plugin is allowed for profile"):
        framework_for(load_config(_config(generators), reg=reg, features=V136_ON), make_cluster([make_node("n1")]), reg)


# ------------------------------------------------------------------------------------ the pod-group cycle


def _pod_group(min_count: int, topology: str | None = "zone") -> KubeObject:
    spec: dict[str, Any] = {"schedulingPolicy": {"gang": {"minCount": min_count}}}
    if topology:
        spec["schedulingConstraints"] = {"topology": [{"key": topology}]}
    return make_object("PodGroup", "pg", "default", apiVersion="scheduling.k8s.io/v1alpha2", spec=spec)


def _member(name: str, cpu: str = "1") -> PodBuilder:
    return make_pod(name).req(cpu=cpu).set("spec.schedulingGroup", {"podGroupName": "pg"})


ZONED = [
    make_node("a1").label("zone", "a").alloc(cpu="4", memory="8Gi", pods="110"),
    make_node("a2").label("zone", "a").alloc(cpu="4", memory="8Gi", pods="110"),
    make_node("b1").label("zone", "b").alloc(cpu="8", memory="8Gi", pods="110"),
]


def _gang(features: Features, min_count: int = 2, second_cpu: str = "1", topology: str | None = "zone") -> dict[str, Any]:
    p1, p2 = _member("p1"), _member("p2", second_cpu)
    return schedule(p1, nodes=ZONED, pods=[p1, p2], objects=[_pod_group(min_count, topology)], features=features).to_dict()


def test_gang_of_two_on_two_zones() -> None:
    """The reference's hand check: placements a and b generated, both feasible, scored by
    NodeResourcesFit and PodGroupPodsCount; PreFilter..Permit ran once per placement."""
    t = _gang(V136_ON)
    assert t["outcome"] == "scheduled"
    assert t["placementGenerate"] == [
        {"plugin": "TopologyPlacementGenerator", "code": "Success", "reasons": [], "parent": "<3 nodes>", "placements": ["a", "b"]}
    ]
    assert set(t["placementScore"]) == {"NodeResourcesFit", "PodGroupPodsCount"}
    assert t["placementScore"]["PodGroupPodsCount"] == {
        "weight": 1,
        "raw": {"a": 2, "b": 2},
        "normalized": {"a": 100, "b": 100},
        "weighted": {"a": 100, "b": 100},
    }
    fit = t["placementScore"]["NodeResourcesFit"]
    best = max(fit["weighted"], key=lambda p: fit["weighted"][p])
    assert [r["plugin"] for r in t["permit"]] == ["GangScheduling", "GangScheduling"]  # one run per placement
    # p2's arrival completed minCount: it entered the queue first and p1 (held at PreEnqueue) right after, so
    # the cycle takes p2 first and p1 completes the gang each time
    assert {r["code"] for r in t["permit"]} == {"Success"}
    assert len(t["reserve"]) == 2 * len([r for r in t["reserve"] if r["plugin"] == "VolumeBinding"]) == 4
    assert [r["plugin"] for r in t["preFilter"]].count("NodeResourcesFit") == 2
    assert set(t["filter"]) == {"a1", "a2", "b1"}  # the last run per node
    group = t["details"]["podGroup"]
    assert group["permit"] == {"default/p2": "Wait", "default/p1": "Success"}
    assert group["pods"] == ["default/p2", "default/p1"]
    assert {ZONED_ZONE[n] for n in group["assignments"].values()} == {best}
    assert t["selected"]["candidates"] == [group["assignments"]["default/p1"]]
    assert t["bind"] and t["bind"][0]["plugin"] == "DefaultBinder"


ZONED_ZONE = {"a1": "a", "a2": "a", "b1": "b"}


def test_gang_waits_at_permit_when_a_member_fits_nowhere() -> None:
    t = _gang(V136_ON, second_cpu="100")
    assert t["outcome"] == "unschedulable"
    # the pod's status is its Permit's: v1.36's RunPermitPlugins keeps GangScheduling's reason and adds its own,
    # without the pod's name (the PodScheduled condition of a real v1.36.2 control plane)
    assert t["fitError"] == (
        "pod group is unschedulable, waiting for minCount pods from a gang to be scheduled, one or more plugins asked "
        "to wait and no plugin rejected pod"
    )
    assert t["permit"][-1]["reasons"] == ["waiting for minCount pods from a gang to be scheduled"]
    assert "placementScore" not in t  # no placement was feasible
    assert t["details"]["podGroup"]["message"] == (
        "0/2 placements are available, first placement status: pod group is unschedulable"
    )
    assert any("waits at Permit" in n and "1 more pod(s) of the group are missing" in n for n in t["notes"])


def test_default_algorithm_without_topology_aware_scheduling() -> None:
    t = _gang(resolve_features(36, {"GenericWorkload": True, "GangScheduling": True}))
    assert t["outcome"] == "scheduled"
    assert "placementGenerate" not in t and "placementScore" not in t
    assert [r["code"] for r in t["permit"]] == ["Success"]  # p2 went first (its arrival released p1)


def test_no_topology_constraint_is_one_placement_of_every_node() -> None:
    t = _gang(V136_ON, topology=None)
    assert t["placementGenerate"][0]["placements"] == ["<3 nodes>"]
    assert "placementScore" not in t  # a single feasible placement is not scored


@pytest.mark.parametrize("features", [resolve_features(35), resolve_features(36)], ids=["v1.35", "v1.36-gates-off"])
def test_gates_off_schedule_group_members_alone(features: Features) -> None:
    t = _gang(features)
    assert t["outcome"] == "scheduled"
    assert "placementGenerate" not in t and "podGroup" not in t["details"]
    assert not t["permit"] or all(r["plugin"] != "GangScheduling" for r in t["permit"])


# ------------------------------------------------------------------------------------ rendering


def _table(t: dict[str, Any], wide: bool = False) -> str:
    console = Console(record=True, width=160, color_system=None)
    render_trace(t, console, wide=wide)
    return console.export_text()


@pytest.mark.parametrize("render", [_table, lambda t: _table(t, wide=True), render_trace_markdown], ids=["table", "wide", "markdown"])
def test_placements_are_rendered_like_filter_and_score(render: Callable[[dict[str, Any]], str]) -> None:
    out = render(_gang(V136_ON))
    assert "PlacementGenerate" in out and "TopologyPlacementGenerator" in out and "a, b" in out
    assert "PlacementScore" in out and "PodGroupPodsCount (weight 1)" in out and "2→100" in out
    assert "Pod group default/pg (gang minCount 2; 2 pod(s) scheduled together)" in out


def test_no_placement_sections_without_a_pod_group_cycle() -> None:
    t = _gang(resolve_features(36))
    assert "Placement" not in _table(t) and "Placement" not in render_trace_markdown(t)


# ------------------------------------------------------------------------------------ explain pending


def _pending(features: Features) -> list[dict[str, Any]]:
    x1, z1, y = _member("x1"), _member("z1"), make_pod("y").req(cpu="1")
    cluster = make_cluster(ZONED, [x1, z1, y], [_pod_group(2)])
    config = load_config(features=features)
    return [r.to_dict() for r in pending_rows(cluster, cluster.pending_pods(), config, jobs=1)]


@pytest.mark.parametrize(
    ("features", "order", "groups"),
    [
        (V136_ON, ["default/x1", "default/z1", "default/y"], [["default/x1", "default/z1"], ["default/y"]]),
        (resolve_features(36), ["default/x1", "default/y", "default/z1"], [["default/x1", "default/y", "default/z1"]]),
    ],
    ids=["gates-on", "gates-off"],
)
def test_explain_pending_keeps_a_groups_pods_together(
    features: Features, order: list[str], groups: list[list[str]]
) -> None:
    rows = _pending(features)
    assert [r["pod"] for r in rows] == order
    assert [r.get("podGroup") for r in rows if r["pod"] != "default/y"] == (
        ["default/pg", "default/pg"] if features is V136_ON else [None, None]
    )
    by_cause = group_by_cause(rows)
    assert sorted(g.pods for g in by_cause) == sorted(groups)
    if features is V136_ON:
        assert any(g.cause.startswith("pod group default/pg: ") for g in by_cause)
        console = Console(record=True, width=200, color_system=None)
        render_pending_table(rows, console)
        assert "default/x1 (pod group default/pg)" in console.export_text()


def test_live_read_goes_on_when_the_role_does_not_grant_pod_groups(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    rules = load_rules()
    for rule in rules:
        rule["resources"] = [r for r in rule.get("resources", []) if r != "podgroups"]
    notes: list[str] = []
    with RecordedAPIServer(rules=rules) as srv:
        monkeypatch.setenv("KUBECONFIG", str(srv.kubeconfig(tmp_path / "kubeconfig")))
        monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
        cluster = LiveSource().load(warn=notes.append)
    assert cluster.nodes and not cluster.of_kind("PodGroup")
    assert any('cannot list resource "podgroups"' in n and "the snapshot has no PodGroup objects" in n for n in notes)


@pytest.mark.parametrize(("minor", "want"), [(35, []), (36, ["placementScore"])])
def test_plugins_listing_names_the_placement_points_from_v1_36(minor: int, want: list[str]) -> None:
    fit = in_tree_registry().get("NodeResourcesFit")
    assert fit is not None
    handle = SnapshotHandle(make_cluster([make_node("n1")]), features=resolve_features(minor))
    points, _ = probe(fit, handle)
    assert [p for p in points if p.startswith("placement")] == want


def test_members_held_at_pre_enqueue_stay_with_their_group() -> None:
    """minCount 3 with two pods: GangScheduling's PreEnqueue holds both; they are still one group."""
    x1, z1 = _member("x1"), _member("z1")
    cluster = make_cluster(ZONED, [x1, z1], [_pod_group(3)])
    rows = [r.to_dict() for r in pending_rows(cluster, cluster.pending_pods(), load_config(features=V136_ON), jobs=1)]
    assert [(r["outcome"], r.get("podGroup")) for r in rows] == [("gated", "default/pg"), ("gated", "default/pg")]
    assert rows[0]["dominantReason"] == "GangScheduling: waiting for minCount pods from a gang to appear in scheduling queue"
    [group] = group_by_cause(rows)
    assert group.pods == ["default/x1", "default/z1"]


# ------------------------------------------------------------------------------------ v1.37: beta API, GenericWorkload

#: A PodGroup as v1.37 serves it: workloadRef instead of podGroupTemplateRef, disruptionMode a struct.
POD_GROUP_V1BETA1 = """apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata: {name: pg, namespace: default}
spec:
  workloadRef: {workloadName: training, templateName: workers}
  disruptionMode: {all: {}}
  schedulingPolicy: {gang: {minCount: 2}}
  schedulingConstraints: {topology: [{key: zone}]}
"""


@pytest.mark.parametrize(
    ("api_version", "features", "why"),
    [
        ("v1alpha2", V137_ON, "kube-apiserver v1.37.2 does not have this API version: it was removed after v1.36; "
                              "kube-apiserver v1.37.2 serves PodGroup as scheduling.k8s.io/v1beta1 and scheduling.k8s.io/v1alpha3"),
        ("v1beta1", V136_ON, "kube-apiserver v1.36.2 does not have this API version"),
        ("v1alpha3", V136_ON, "kube-apiserver v1.36.2 does not have this API version"),
        ("v1beta1", resolve_features(37), "kube-apiserver v1.37.2 serves it only with the GenericWorkload feature gate on"),
        ("v1alpha3", resolve_features(37), "kube-apiserver v1.37.2 serves it only with the GenericWorkload feature gate on"),
    ],
)
def test_each_release_serves_its_own_pod_group_versions(api_version: str, features: Features, why: str) -> None:
    text = POD_GROUP.replace("scheduling.k8s.io/v1alpha2", f"scheduling.k8s.io/{api_version}")
    with pytest.raises(InputError) as e:
        build_cluster(parse_documents("c.yaml", text), features=features)
    assert e.value.message == f'no matches for kind "PodGroup" in version "scheduling.k8s.io/{api_version}" ({why})'
    assert e.value.field == "apiVersion"


@pytest.mark.parametrize("api_version", ["v1beta1", "v1alpha3"])
def test_v1_37_reads_its_pod_groups_with_generic_workload_on(api_version: str) -> None:
    text = POD_GROUP_V1BETA1.replace("v1beta1", api_version)
    cluster = build_cluster(parse_documents("c.yaml", text), features=V137_ON)
    pg = cluster.get("PodGroup", "default", "pg")
    assert pg is not None and pg.raw["spec"]["disruptionMode"] == {"all": {}}


def _same_cycle(t: dict[str, Any]) -> dict[str, Any]:
    """A trace without what names its version (and the builders' uid counter in the Binding)."""
    out = {k: v for k, v in t.items() if k != "k8sVersion"}
    out["notes"] = t["notes"][1:]  # "default configuration (kube-scheduler v1.3x)"
    out["details"] = {**t["details"], "binding": {**t["details"]["binding"], "metadata": {}}}
    return out


def test_v1_37_pod_group_cycle_with_generic_workload() -> None:
    """v1.37: GenericWorkload alone brings GangScheduling (the GangScheduling gate is gone); a v1beta1
    PodGroup's gang and topology are read as v1alpha2's were, and the cycle goes as in v1.36 with
    StorageCapacityScoring on (v1.37's default)."""
    p1, p2 = _member("p1"), _member("p2")
    [pg] = build_cluster(parse_documents("c.yaml", POD_GROUP_V1BETA1), features=V137_ON).of_kind("PodGroup")
    t = schedule(p1, nodes=ZONED, pods=[p1, p2], objects=[pg], features=V137_ON).to_dict()
    assert t["k8sVersion"] == "v1.37.2"
    assert [r["plugin"] for r in t["permit"]] == ["GangScheduling", "GangScheduling"]
    assert _same_cycle(t) == _same_cycle(_gang(resolve_features(36, {**GATES, "StorageCapacityScoring": True})))


def test_live_read_of_a_v1_37_server_lists_v1beta1_pod_groups(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    recordings = tmp_path / "recordings"
    shutil.copytree(RECORDINGS, recordings)
    item = {"metadata": {"name": "pg", "namespace": "shop"}, "spec": {"schedulingPolicy": {"gang": {"minCount": 2}}}}
    answer = {"kind": "PodGroupList", "apiVersion": "scheduling.k8s.io/v1beta1", "metadata": {}, "items": [item]}
    (recordings / recording_name("/apis/scheduling.k8s.io/v1beta1/podgroups")).write_text(json.dumps(answer))
    assert _load_live(monkeypatch, tmp_path, recordings)[-1] == "podgroups: 1"


POD_GROUP_POST_FILTER = "    podGroupPostFilter: {disabled: [{name: '*'}]}\n"


def test_pod_group_post_filter_is_an_unknown_field_before_v1_37() -> None:
    with pytest.raises(ConfigError) as e:
        load_config(_config(POD_GROUP_POST_FILTER), features=resolve_features(36))
    assert 'unknown field "profiles[0].plugins.podGroupPostFilter"' in str(e.value)
    cfg = load_config(_config(POD_GROUP_POST_FILTER), features=resolve_features(37))
    assert cfg.profiles[0].plugins["podGroupPostFilter"].disabled == ["*"]
    assert framework_for(cfg, make_cluster([make_node("n1")])).plugins.names("podGroupPostFilter") == []


@pytest.mark.parametrize(
    ("plugin", "message"),
    [
        ("DefaultPreemption", 'plugin "DefaultPreemption" extends PodGroupPostFilterPlugin in kube-scheduler v1.37.2, '
                              "but kschedctl does not reproduce what it does there: remove it from podGroupPostFilter"),
        ("NodeName", 'plugin "NodeName" does not extend PodGroupPostFilterPlugin plugin'),
        ("NoSuchPlugin", 'PodGroupPostFilterPlugin "NoSuchPlugin" does not exist'),
    ],
)
def test_plugins_enabled_at_pod_group_post_filter(plugin: str, message: str) -> None:
    text = _config(f"    podGroupPostFilter: {{enabled: [{{name: {plugin}}}]}}\n")
    with pytest.raises(ConfigError) as e:
        framework_for(load_config(text, features=V137_ON), make_cluster([make_node("n1")]))
    assert message in str(e.value)
