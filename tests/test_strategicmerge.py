"""Strategic merge patches (``kschedctl.snapshot.strategicmerge``): what ``kubectl patch`` does to a pod,
a pod template or a node, as tables, and the laws any patch obeys, as properties over generated pods."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kschedctl.snapshot.strategicmerge import PatchError, apply, diff, merge_keys

POD: dict[str, Any] = {
    "metadata": {"name": "web", "labels": {"app": "web", "tier": "front"}},
    "spec": {
        "priority": 0,
        "nodeSelector": {"disktype": "ssd", "zone": "a"},
        "tolerations": [{"key": "a", "operator": "Exists"}],
        "containers": [
            {"name": "app", "image": "app:1", "resources": {"requests": {"cpu": "2", "memory": "1Gi"}},
             "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
             "ports": [{"containerPort": 80}, {"containerPort": 443, "name": "tls"}]},
            {"name": "side", "image": "side:1"},
        ],
        "volumes": [{"name": "data", "emptyDir": {}}],
        "topologySpreadConstraints": [{"topologyKey": "zone", "maxSkew": 1, "whenUnsatisfiable": "DoNotSchedule"}],
    },
}

#: (name, patch, the changed part of the spec as a function of a copy of POD's)
CASES: list[tuple[str, dict[str, Any], Any]] = [
    ("empty patch", {}, lambda s: None),
    ("scalar set", {"spec": {"priorityClassName": "high"}}, lambda s: s.update(priorityClassName="high")),
    ("null deletes", {"spec": {"priority": None, "priorityClassName": "high"}},
     lambda s: (s.pop("priority"), s.update(priorityClassName="high"))),
    ("null on a missing key", {"spec": {"preemptionPolicy": None}}, lambda s: None),
    ("map merges", {"spec": {"nodeSelector": {"zone": "b"}}}, lambda s: s["nodeSelector"].update(zone="b")),
    ("map key deleted", {"spec": {"nodeSelector": {"disktype": None}}}, lambda s: s["nodeSelector"].pop("disktype")),
    ("containers merge by name", {"spec": {"containers": [{"name": "app", "resources": {"requests": {"cpu": "1"}}}]}},
     lambda s: s["containers"][0]["resources"]["requests"].update(cpu="1")),
    ("a new container is appended", {"spec": {"containers": [{"name": "new", "image": "n:1"}]}},
     lambda s: s["containers"].append({"name": "new", "image": "n:1"})),
    ("env merges by name", {"spec": {"containers": [{"name": "app", "env": [{"name": "B", "value": "3"}, {"name": "C", "value": "4"}]}]}},
     lambda s: s["containers"][0].update(env=[{"name": "A", "value": "1"}, {"name": "B", "value": "3"}, {"name": "C", "value": "4"}])),
    ("ports merge by containerPort", {"spec": {"containers": [{"name": "app", "ports": [{"containerPort": 443, "name": "https"}]}]}},
     lambda s: s["containers"][0]["ports"][1].update(name="https")),
    ("$patch: delete in a merged list", {"spec": {"containers": [{"name": "side", "$patch": "delete"}]}},
     lambda s: s["containers"].pop(1)),
    ("$patch: replace in a merged list", {"spec": {"volumes": [{"$patch": "replace"}, {"name": "other", "emptyDir": {}}]}},
     lambda s: s.update(volumes=[{"name": "other", "emptyDir": {}}])),
    ("$patch: replace on a map", {"spec": {"nodeSelector": {"$patch": "replace", "pool": "x"}}},
     lambda s: s.update(nodeSelector={"pool": "x"})),
    ("$patch: delete on a map", {"spec": {"nodeSelector": {"$patch": "delete"}}}, lambda s: s.pop("nodeSelector")),
    ("tolerations are replaced", {"spec": {"tolerations": [{"key": "b", "operator": "Exists"}]}},
     lambda s: s.update(tolerations=[{"key": "b", "operator": "Exists"}])),
    ("spread merges by topologyKey", {"spec": {"topologySpreadConstraints": [{"topologyKey": "zone", "maxSkew": 3}]}},
     lambda s: s["topologySpreadConstraints"][0].update(maxSkew=3)),
    ("a new map drops its nulls", {"spec": {"affinity": {"nodeAffinity": {"x": None, "y": 1}}}},
     lambda s: s.update(affinity={"nodeAffinity": {"y": 1}})),
    ("$setElementOrder is accepted", {"spec": {"$setElementOrder/containers": [{"name": "app"}, {"name": "side"}]}},
     lambda s: None),
    ("$retainKeys keeps only those keys", {"spec": {"volumes": [{"name": "data", "$retainKeys": ["name", "hostPath"],
                                                                 "hostPath": {"path": "/d"}}]}},
     lambda s: s.update(volumes=[{"name": "data", "hostPath": {"path": "/d"}}])),
]


@pytest.mark.parametrize(("name", "patch", "change"), CASES, ids=[c[0] for c in CASES])
def test_apply(name: str, patch: dict[str, Any], change: Any) -> None:
    before = copy.deepcopy(POD)
    want = copy.deepcopy(POD)
    change(want["spec"])
    assert apply(POD, patch, "Pod") == want
    assert before == POD  # nothing given is changed
    assert apply(apply(POD, patch, "Pod"), patch, "Pod") == want  # applying it twice changes nothing more


def test_template_and_node_paths() -> None:
    deploy = {"spec": {"template": {"spec": copy.deepcopy(POD["spec"])}}}
    out = apply(deploy, {"spec": {"template": {"spec": {"containers": [{"name": "side", "image": "side:2"}]}}}}, "Deployment")
    assert [c["image"] for c in out["spec"]["template"]["spec"]["containers"]] == ["app:1", "side:2"]
    node = {"spec": {"taints": [{"key": "a", "effect": "NoSchedule"}, {"key": "b", "effect": "NoSchedule"}]}}
    assert apply(node, {"spec": {"taints": [{"key": "b", "effect": "NoSchedule"}]}}, "Node") == {
        "spec": {"taints": [{"key": "b", "effect": "NoSchedule"}]}}  # taints have no merge key: replaced
    assert "spec.template.spec.containers[].env" in merge_keys("Deployment")
    assert "spec.containers" not in merge_keys("Node")


@pytest.mark.parametrize(
    ("patch", "message"),
    [
        ({"spec": {"containers": [{"image": "x"}]}}, "does not contain declared merge key: name"),
        ({"spec": {"$bogus": 1}}, "unknown patch directive $bogus"),
        ({"spec": {"$patch": "explode"}}, "Unknown patch type: explode"),
        ({"spec": {"containers": ["app"]}}, "merging a list of str values"),
    ],
)
def test_refused_patches(patch: dict[str, Any], message: str) -> None:
    with pytest.raises(PatchError, match=message.replace("$", r"\$")):
        apply(POD, patch, "Pod")


def test_diff_table() -> None:
    b = copy.deepcopy(POD)
    b["spec"].pop("priority")
    b["spec"]["priorityClassName"] = "high"
    b["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "1"
    b["spec"]["containers"].pop(1)
    assert diff(POD, b, "Pod") == {"spec": {
        "priority": None, "priorityClassName": "high",
        "containers": [{"name": "app", "resources": {"requests": {"cpu": "1"}}}, {"$patch": "delete", "name": "side"}],
    }}
    swapped = copy.deepcopy(POD)
    swapped["spec"]["containers"].reverse()  # merging keeps the old order: only a replace says it
    assert diff(POD, swapped, "Pod")["spec"]["containers"][0] == {"$patch": "replace"}
    assert apply(POD, diff(POD, swapped, "Pod"), "Pod") == swapped
    assert diff(POD, POD, "Pod") == {}


# --------------------------------------------------------------------------- properties

_names = st.sampled_from(["a", "b", "c", "d"])
_scalars = st.one_of(st.integers(-3, 3), st.sampled_from(["x", "y", "1Gi", ""]), st.booleans())
_labels = st.dictionaries(_names, st.sampled_from(["x", "y", "z"]), max_size=3)
_env = st.lists(st.fixed_dictionaries({"name": _names, "value": st.sampled_from(["1", "2"])}), max_size=3,
                unique_by=lambda e: e["name"])
_container = st.fixed_dictionaries(
    {"name": _names, "image": st.sampled_from(["i:1", "i:2"])},
    optional={"env": _env, "resources": st.fixed_dictionaries({}, optional={"requests": _labels, "limits": _labels})},
)
_spec = st.fixed_dictionaries(
    {"containers": st.lists(_container, min_size=1, max_size=3, unique_by=lambda c: c["name"])},
    optional={
        "priority": st.integers(0, 5),
        "nodeSelector": _labels,
        "tolerations": st.lists(st.fixed_dictionaries({"key": _names, "operator": st.just("Exists")}), max_size=2),
        "schedulerName": _scalars,
    },
)
pods = st.fixed_dictionaries({"metadata": st.fixed_dictionaries({"name": st.just("p"), "labels": _labels}), "spec": _spec})


@settings(max_examples=150, deadline=None)
@given(pods)
def test_empty_patch_is_identity(pod: dict[str, Any]) -> None:
    assert apply(pod, {}, "Pod") == pod


@settings(max_examples=150, deadline=None)
@given(pods, pods)
def test_apply_of_diff_gives_the_target(a: dict[str, Any], b: dict[str, Any]) -> None:
    patch = diff(a, b, "Pod")
    assert apply(a, patch, "Pod") == b
    assert diff(apply(a, patch, "Pod"), b, "Pod") == {}  # stable: nothing left to change


@settings(max_examples=150, deadline=None)
@given(pods, pods)
def test_applying_a_patch_twice_is_applying_it_once(a: dict[str, Any], b: dict[str, Any]) -> None:
    patch = diff(a, b, "Pod")
    once = apply(a, patch, "Pod")
    assert apply(once, patch, "Pod") == once


@settings(max_examples=100, deadline=None)
@given(pods, st.sampled_from(["priority", "nodeSelector", "tolerations", "schedulerName", "containers"]))
def test_null_deletes(pod: dict[str, Any], key: str) -> None:
    out = apply(pod, {"spec": {key: None}}, "Pod")
    assert key not in out["spec"]
    assert {k: v for k, v in out["spec"].items()} == {k: v for k, v in pod["spec"].items() if k != key}
