"""Properties of the input parsers: YAML/JSON documents, duplicate keys, names and label keys, quantities.

Whatever text a user feeds the loader, the only exception out of it is an InputError (one line);
duplicate keys are found exactly when a mapping repeats a key; the fast paths of the name rules
agree with apimachinery's patterns.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
import yaml
from hypothesis import example, given, settings
from hypothesis import strategies as st

from kschedctl.apivalidation import (
    label_value_errors,
    name_is_dns1035_label,
    name_is_dns_label,
    name_is_dns_subdomain,
    qualified_name_errors,
    validate_quantity_value,
)
from kschedctl.errors import InputError
from kschedctl.snapshot.loader import parse_documents

# apimachinery's patterns, written out again here (anchored) as the reference.
DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
DNS1035 = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
LABEL_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")

NAMEISH = st.text(alphabet="abz09-._/AZ ", max_size=80) | st.text(alphabet="ab-.", min_size=60, max_size=300)


def reference_qualified_name_ok(v: str) -> bool:
    parts = v.split("/")
    if len(parts) > 2:
        return False
    name = parts[-1]
    if len(parts) == 2:
        prefix = parts[0]
        if not prefix or len(prefix.encode()) > 253 or not DNS_SUBDOMAIN.match(prefix):
            return False
    return 0 < len(name.encode()) <= 63 and bool(LABEL_NAME.match(name))


@given(NAMEISH)
def test_name_rules_agree_with_apimachinery(v: str) -> None:
    assert (not name_is_dns_subdomain(v)) == (len(v) <= 253 and bool(DNS_SUBDOMAIN.match(v)))
    assert (not name_is_dns_label(v)) == (len(v) <= 63 and bool(DNS_LABEL.match(v)))
    assert (not name_is_dns1035_label(v)) == (len(v) <= 63 and bool(DNS1035.match(v)))
    assert (not qualified_name_errors(v)) == reference_qualified_name_ok(v)
    assert (not label_value_errors(v)) == (len(v.encode()) <= 63 and bool(LABEL_VALUE.match(v)))


@given(st.text(max_size=200))
@settings(max_examples=300)
def test_any_text_is_documents_or_one_input_error(text: str) -> None:
    try:
        docs = list(parse_documents("f.yaml", text))
    except InputError as e:
        assert str(e).startswith("f.yaml: ")
        assert "\n" not in str(e)
        return
    assert all(isinstance(d.obj, dict) for d in docs)


@given(st.lists(st.sampled_from(["a", "b", "c", "d"]), min_size=1, max_size=6), st.booleans())
def test_duplicate_keys_are_found_exactly_when_a_key_repeats(keys: list[str], nested: bool) -> None:
    body = "".join(f"{'  ' if nested else ''}{k}: {i}\n" for i, k in enumerate(keys))
    text = "kind: Node\nmetadata:\n  name: n\nspec:\n" + body if nested else "kind: Node\n" + body
    repeats = len(set(keys)) < len(keys) or (not nested and "kind" in keys)
    try:
        docs = list(parse_documents("f.yaml", text))
    except InputError as e:
        assert repeats, str(e)
        assert "already set in map" in str(e)
        return
    assert not repeats
    assert len(docs) == 1


@given(st.lists(st.sampled_from(["a", "b", "c"]), min_size=0, max_size=3))
def test_merge_keys_may_override_without_being_duplicates(keys: list[str]) -> None:
    own = "".join(f"  {k}: own\n" for k in dict.fromkeys(keys))
    text = "base: &b {a: 1, b: 2}\nkind: Node\nmerged:\n  <<: *b\n" + own
    (doc,) = parse_documents("f.yaml", text)
    assert doc.obj["merged"] == {**{"a": 1, "b": 2}, **dict.fromkeys(keys, "own")}


@pytest.mark.parametrize(
    "text", ["[" * 100_000 + "]" * 100_000, '{"a":' * 100_000 + "1" + "}" * 100_000, "x: " + "[" * 100_000]
)
def test_deep_nesting_is_one_input_error(text: str) -> None:
    with pytest.raises(InputError) as e:
        list(parse_documents("f", text))
    assert "nested too deeply" in str(e.value) or "exceeded maximum nesting depth" in str(e.value)


QUANTITY = st.builds(
    lambda sign, num, suffix: f"{sign}{num}{suffix}",
    st.sampled_from(["", "-", "+"]),
    st.integers(min_value=0, max_value=10**20).map(str) | st.decimals(min_value=0, max_value=10**6, places=3).map(str),
    st.sampled_from(["", "m", "k", "M", "G", "Ki", "Mi", "Gi", "Ei", "E", "e3", "e400"]),
)


@given(st.sampled_from(["cpu", "memory", "pods", "example.com/gpu"]), QUANTITY)
def test_quantity_problems(resource: str, text: str) -> None:
    errs: list[Any] = []
    q = validate_quantity_value(resource, text, "f", errs)
    if q is None:
        assert errs == []
        return
    messages = [e.detail for e in errs]
    assert ("must be greater than or equal to 0" in messages) == (q < 0)
    too_big = (q * 1000 if resource == "cpu" else q) > (2**63 - 1) // 100
    assert any("overflows" in m for m in messages) == (too_big and q >= 0)
    integer = resource in ("pods", "example.com/gpu")
    assert ("must be an integer" in messages) == (integer and q >= 0 and (q * 1000) % 1000 != 0 and not _ceil_whole(q))


def _ceil_whole(q: Any) -> bool:
    """``MilliValue()`` rounds up: a value within a thousandth below a whole number counts as whole."""
    import math

    return math.ceil(q * 1000) % 1000 == 0


def test_yaml_documents_keep_timestamps_as_text() -> None:
    (doc,) = parse_documents("f.yaml", "kind: Pod\nmetadata: {name: p, creationTimestamp: 2025-01-02T03:04:05Z}\n")
    assert doc.obj["metadata"]["creationTimestamp"] == "2025-01-02T03:04:05Z"
    assert yaml.safe_load("t: 2025-01-02T03:04:05Z")["t"] != "2025-01-02T03:04:05Z"  # what the loader avoids


@pytest.mark.parametrize("text", [
    "kind: Pod\nmetadata:\n  name: p\n  annotations:\n    x: =\n",  # the line reader's form
    "kind: Pod\nmetadata: {name: p, annotations: {x: =}}  # a comment sends it to PyYAML\n",
])
def test_a_plain_equals_sign_is_a_string(text: str) -> None:
    """YAML 1.1's "=" value key: PyYAML's safe loader has no constructor for it and refused the file;
    Kubernetes' YAML reader takes it as the string "="."""
    (doc,) = parse_documents("f.yaml", text)
    assert doc.obj["metadata"]["annotations"] == {"x": "="}


# --------------------------------------------------------------------------- a value of the wrong type anywhere


def _rich_pod() -> dict[str, Any]:
    from tests.builders import make_pod

    return (
        make_pod("web")
        .label("app", "web")
        .annotation("a", "b")
        .owner("ReplicaSet", "web-1")
        .req(cpu="100m", memory="64Mi")
        .lim(cpu="1")
        .host_port(80)
        .init_container("init", cpu="10m")
        .toleration("k", "v", "NoSchedule")
        .node_selector(zone="a")
        .node_affinity_required([{"key": "zone", "operator": "In", "values": ["a"]}])
        .node_affinity_preferred(5, [{"key": "disk", "operator": "Exists"}])
        .pod_affinity("required", "zone", {"app": "db"})
        .pod_affinity("preferred", "zone", {"app": "web"}, anti=True, weight=3)
        .spread(1, "zone", match_labels={"app": "web"}, minDomains=2)
        .gate("g")
        .pvc("data")
        .priority(0)
        .raw
    )


def _paths(obj: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix] if prefix else []
    if isinstance(obj, dict):
        for k, v in obj.items():
            out.extend(_paths(v, (*prefix, k)))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out.extend(_paths(v, (*prefix, i)))
    return out


POD_PATHS = _paths(_rich_pod())
ODD_VALUES = st.sampled_from([None, 0, -1, 1.5, True, "x", "", [], ["x"], [1], {}, {"a": 1}, {"a": None}])


@given(st.sampled_from(POD_PATHS), ODD_VALUES)
@settings(max_examples=300, deadline=None)
def test_a_wrong_value_anywhere_in_a_pod_is_an_answer_or_one_input_error(path: tuple[Any, ...], value: Any) -> None:
    from kschedctl.config import default_config
    from kschedctl.explain.cycle import explain_pod
    from kschedctl.snapshot.loader import Document, admit_pod, build_object
    from tests.builders import make_cluster, make_node

    raw = _rich_pod()
    cur: Any = raw
    for p in path[:-1]:
        cur = cur[p]
    cur[path[-1]] = value
    cluster = make_cluster([make_node("n1").label("zone", "a")])
    try:
        pod = build_object(Document("pod.yaml", 1, raw))
        if pod is None:  # the kind was changed to one the scheduler does not read
            return
        admit_pod(cluster, pod, "pod.yaml")  # type: ignore[arg-type]
    except InputError as e:
        assert "\n" not in str(e) and str(e).startswith("pod.yaml: ")
        return
    explain_pod(cluster, pod, default_config())  # type: ignore[arg-type]


def _rich_node() -> dict[str, Any]:
    from tests.builders import make_node

    raw = make_node("n1").zone("a").alloc(cpu="4", memory="8Gi", pods="110", ephemeral_storage="10Gi").raw
    raw["spec"]["taints"] = [{"key": "k", "value": "v", "effect": "PreferNoSchedule"}]
    raw["spec"]["unschedulable"] = False
    raw["status"]["capacity"] = {"cpu": "4", "memory": "8Gi", "pods": "110"}
    raw["status"]["images"] = [{"names": ["busybox:latest"], "sizeBytes": 1000}]
    raw["status"]["conditions"] = [{"type": "Ready", "status": "True"}]
    return raw


NODE_PATHS = _paths(_rich_node())


@given(st.sampled_from(NODE_PATHS), ODD_VALUES)
@settings(max_examples=200, deadline=None)
def test_a_wrong_value_anywhere_in_a_node_is_an_answer_or_one_input_error(path: tuple[Any, ...], value: Any) -> None:
    from kschedctl.config import default_config
    from kschedctl.explain.cycle import explain_pod
    from kschedctl.snapshot.loader import Document, build_cluster
    from tests.builders import make_pod

    raw = _rich_node()
    cur: Any = raw
    for p in path[:-1]:
        cur = cur[p]
    cur[path[-1]] = value
    try:
        cluster = build_cluster([Document("cluster.yaml", 1, raw)])
    except InputError as e:
        assert "\n" not in str(e) and str(e).startswith("cluster.yaml: ")
        return
    explain_pod(cluster, make_pod("web").req(cpu="100m").image("busybox:latest").build(), default_config())


# --------------------------------------------------------------------------- the quick path for containers

_names = st.sampled_from(["c", "main", "side-car", "Bad_Name", "a" * 64, "", "c2"])
_amounts = st.sampled_from(["100m", "1", "2", "1Gi", "512Mi", "-1", "1e400", "abc", 3, 0.5, True, None, "0"])
_resource_names = st.sampled_from(["cpu", "memory", "ephemeral-storage", "nvidia.com/gpu", "hugepages-2Mi", "pods", "bad name"])
_resource_maps = st.dictionaries(_resource_names, _amounts, max_size=3)
_resources = st.one_of(
    st.fixed_dictionaries({}, optional={"requests": st.one_of(_resource_maps, st.just("x")), "limits": _resource_maps}),
    st.just("not a mapping"),
)
_containers = st.fixed_dictionaries(
    {},
    optional={
        "name": st.one_of(_names, st.just(7)),
        "image": st.one_of(st.just("registry.example/app:1"), st.just(3)),
        "resources": _resources,
        "ports": st.just([{"containerPort": 80}]),
        "restartPolicy": st.just("Always"),
        "command": st.just(["sh"]),
    },
)


_good = st.dictionaries(st.sampled_from(["cpu", "memory", "ephemeral-storage", "nvidia.com/gpu", "hugepages-2Mi", "pods"]),
                        st.sampled_from(["100m", "1", "2", "250m", "1Gi", "512Mi", "0", 1]), max_size=2)
_typical = st.fixed_dictionaries(
    {"name": st.sampled_from(["c", "main", "c2"])},
    optional={"image": st.just("img:1"), "resources": st.fixed_dictionaries({}, optional={"requests": _good, "limits": _good})},
)


_limited = st.fixed_dictionaries(
    {"name": st.just("c"), "resources": st.fixed_dictionaries({"requests": _good, "limits": _good})}
)


@settings(max_examples=1000, deadline=None)
@given(
    st.one_of(st.lists(st.one_of(_typical, _limited, _containers, st.just("x")), max_size=3), st.none(), st.just({})),
    st.booleans(),
)
@example([{"name": "c", "resources": {"requests": {"cpu": "2"}, "limits": {"cpu": "1"}}}], False)
@example([{"name": "c", "resources": {"requests": {"nvidia.com/gpu": "1"}}}], False)
@example([{"name": "c"}, {"name": "c"}], False)
def test_the_quick_container_check_reports_what_the_full_one_does(containers: Any, init: bool) -> None:
    """``validate_pod_spec`` decides common containers without the full walk: never another verdict."""
    import kschedctl.apivalidation.pod as v

    spec: dict[str, Any] = {"containers": containers}
    if init:
        spec["initContainers"] = [{"name": "c", "image": "i", "restartPolicy": "Always"}]
    quick: list[Any] = []
    v.validate_pod_spec(spec, "spec", quick)
    full: list[Any] = []
    real = v._clean_containers
    try:
        v._clean_containers = lambda containers, names: False  # type: ignore[assignment]
        v.validate_pod_spec(spec, "spec", full)
    finally:
        v._clean_containers = real
    assert [str(e) for e in quick] == [str(e) for e in full]
