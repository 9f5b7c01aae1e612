"""PodDisruptionBudgets and pod groups the API server refuses are refused at load, in its words
(issue 27 §2): one row per input, each breaking one field of an otherwise valid object, the whole
message expected; the drain and the gang cycle are checked through the command line (exit 2, one
line naming the file, the object and the field, no traceback), and the IntOrString percent parser
gets property tests.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from kschedctl.apivalidation.fielderrors import Errors
from kschedctl.apivalidation.policy import int_or_percent, parse_percent
from kschedctl.errors import InputError
from kschedctl.kube.features import Features
from kschedctl.kube.versions import resolve_features
from kschedctl.snapshot.loader import build_cluster, parse_documents
from tests.test_bad_input import dump, node, run
from tests.test_refusals import assert_refused

PERCENT = (
    "a valid percent string must be a numeric string followed by an ending '%' "
    "(e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')"
)

#: v1.36 with pod groups served (GenericWorkload) and the gang plugin on.
V136 = resolve_features(36, {"GenericWorkload": True, "GangScheduling": True})

V137 = resolve_features(37, {"GenericWorkload": True})


def pdb(spec: dict[str, Any], status: dict[str, Any] | None = None) -> dict[str, Any]:
    raw: dict[str, Any] = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "pdb", "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"app": "web"}}, **spec},
    }
    if status is not None:
        raw["status"] = status
    return raw


def pod_group(spec: dict[str, Any], api_version: str = "scheduling.k8s.io/v1alpha2") -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": "PodGroup", "metadata": {"name": "pg", "namespace": "default"}, "spec": spec}


def member(group: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default"},
        "spec": {"schedulingGroup": group, "containers": [{"name": "c", "image": "x"}]},
    }


BUDGETS = [
    ({"minAvailable": "abc"}, None, f'spec.minAvailable: Invalid value: "abc": {PERCENT}'),
    ({"minAvailable": -1}, None, "spec.minAvailable: Invalid value: -1: must be greater than or equal to 0"),
    ({"minAvailable": "150%"}, None, 'spec.minAvailable: Invalid value: "150%": must not be greater than 100%'),
    ({"minAvailable": "-5%"}, None, f'spec.minAvailable: Invalid value: "-5%": {PERCENT}'),
    ({"maxUnavailable": "lots"}, None, f'spec.maxUnavailable: Invalid value: "lots": {PERCENT}'),
    (
        {"minAvailable": 1, "maxUnavailable": "50%"},
        None,
        'spec: Invalid value: {"MinAvailable":1,"Selector":{"matchLabels":{"app":"web"}},"MaxUnavailable":"50%",'
        '"UnhealthyPodEvictionPolicy":null}: minAvailable and maxUnavailable cannot be both set',
    ),
    (
        {"minAvailable": 1},
        {"disruptionsAllowed": -3},
        "status.disruptionsAllowed: Invalid value: -3: must be greater than or equal to 0",
    ),
    (
        {"minAvailable": 1, "selector": {"matchExpressions": [{"key": "app", "operator": "Bogus", "values": ["web"]}]}},
        None,
        'spec.selector.matchExpressions[0].operator: Invalid value: "Bogus": not a valid selector operator',
    ),
]


def as_v133(message: str) -> str:
    """v1.33's apimachinery printed a string IntOrString as the Go struct (``%#v``), not as JSON."""
    return re.sub(
        r'^(spec\.(?:minAvailable|maxUnavailable)): Invalid value: "([^"]*)"',
        r'\1: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:"\2"}',
        message,
    )


@pytest.mark.parametrize(("spec", "status", "message"), BUDGETS)
@pytest.mark.parametrize("minor", [33, 34, 35, 36, 37])
def test_budgets_the_api_server_refuses(spec: dict[str, Any], status: dict[str, Any] | None, message: str, minor: int) -> None:
    text = yaml.safe_dump(pdb(spec, status))
    with pytest.raises(InputError) as e:
        build_cluster(parse_documents("c.yaml", text), features=resolve_features(minor))
    expected = as_v133(message) if minor == 33 else message
    assert str(e.value) == f"c.yaml: document 1: PodDisruptionBudget default/pdb: {expected}"


def test_v133_prints_a_bad_percent_as_the_go_struct() -> None:
    text = yaml.safe_dump(pdb({"minAvailable": "abc"}))
    with pytest.raises(InputError) as e:
        build_cluster(parse_documents("c.yaml", text), features=resolve_features(33))
    assert 'spec.minAvailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:"abc"}: a valid percent' in str(e.value)


@pytest.mark.parametrize("spec", [{"minAvailable": 0}, {"minAvailable": "100%"}, {"maxUnavailable": "0%"}, {"maxUnavailable": 3}])
def test_budgets_the_api_server_accepts(spec: dict[str, Any]) -> None:
    build_cluster(parse_documents("c.yaml", yaml.safe_dump(pdb(spec, {"disruptionsAllowed": 0}))))


GROUPS = [
    ({"schedulingPolicy": {"gang": {"minCount": 0}}}, "spec.schedulingPolicy.gang.minCount: Required value"),
    (
        {"schedulingPolicy": {"gang": {"minCount": -2}}},
        "spec.schedulingPolicy.gang.minCount: Invalid value: -2: must be greater than or equal to 1",
    ),
    (
        {"schedulingPolicy": {"gang": {"minCount": "two"}}},
        'spec.schedulingPolicy.gang.minCount: Invalid value: "two": must be an integer, not a string',
    ),
    ({}, 'spec.schedulingPolicy: Invalid value: "": must specify one of: `basic`, `gang`'),
    (
        {"schedulingPolicy": {"basic": {}, "gang": {"minCount": 2}}},
        'spec.schedulingPolicy: Invalid value: "{basic, gang}": must specify exactly one of: `basic`, `gang`',
    ),
]


@pytest.mark.parametrize(("spec", "message"), GROUPS)
@pytest.mark.parametrize(("features", "api_version"), [(V136, "scheduling.k8s.io/v1alpha2"), (V137, "scheduling.k8s.io/v1beta1")])
def test_pod_groups_the_api_server_refuses(spec: dict[str, Any], message: str, features: Features, api_version: str) -> None:
    with pytest.raises(InputError) as e:
        build_cluster(parse_documents("c.yaml", yaml.safe_dump(pod_group(spec, api_version))), features=features)
    assert str(e.value) == f"c.yaml: document 1: PodGroup default/pg: {message}"


def test_a_pod_scheduling_group_must_name_its_group() -> None:
    with pytest.raises(InputError) as e:
        build_cluster(parse_documents("c.yaml", yaml.safe_dump(member({}))), features=V136)
    assert str(e.value) == (
        "c.yaml: document 1: Pod default/p: spec.schedulingGroup.podGroupName: Invalid value: null: must specify one of: `podGroupName`"
    )


def test_valid_pod_groups_load() -> None:
    docs = [pod_group({"schedulingPolicy": {"gang": {"minCount": 1}}}), member({"podGroupName": "pg"})]
    build_cluster(parse_documents("c.yaml", yaml.safe_dump_all(docs)), features=V136)
    build_cluster(parse_documents("c.yaml", yaml.safe_dump(pod_group({"schedulingPolicy": {"basic": {}}}))), features=V136)


# ------------------------------------------------------------------------------------ the command line


def test_a_drain_against_a_budget_with_a_bogus_operator_is_refused(tmp_path: Path) -> None:
    bad = pdb({"minAvailable": 1, "selector": {"matchExpressions": [{"key": "app", "operator": "Bogus", "values": ["web"]}]}})
    web = member({"podGroupName": "pg"})
    del web["spec"]["schedulingGroup"]
    web["metadata"]["labels"] = {"app": "web"}
    web["spec"]["nodeName"] = "n1"
    snapshot = dump(tmp_path / "cluster.yaml", node("n1"), web, bad)
    r = run("simulate", "--snapshot", snapshot, "--drain", "n1", "--force")
    assert_refused(
        r,
        f"error: {snapshot}: document 3: PodDisruptionBudget default/pdb: "
        'spec.selector.matchExpressions[0].operator: Invalid value: "Bogus": not a valid selector operator',
    )
    assert "Traceback" not in r.output


def test_a_gang_with_a_word_for_min_count_is_refused(tmp_path: Path) -> None:
    snapshot = dump(tmp_path / "cluster.yaml", node("n1"), pod_group({"schedulingPolicy": {"gang": {"minCount": "two"}}}))
    pod_file = dump(tmp_path / "pod.yaml", member({"podGroupName": "pg"}))
    r = run("explain", "pod", "-f", pod_file, "--snapshot", snapshot, "--kube-version", "1.36",
            "--feature-gates", "GenericWorkload=true,GangScheduling=true")
    assert_refused(
        r,
        f"error: {snapshot}: document 2: PodGroup default/pg: "
        'spec.schedulingPolicy.gang.minCount: Invalid value: "two": must be an integer, not a string',
    )
    assert "Traceback" not in r.output and "please report" not in r.output


# ------------------------------------------------------------------------------------ percent parser


@given(st.integers(min_value=0, max_value=10**30))
def test_every_digit_string_with_a_percent_sign_parses(n: int) -> None:
    assert parse_percent(f"{n}%") == n
    assert parse_percent(f"{n:05d}%") == n


@given(st.text())
def test_parse_percent_accepts_exactly_the_api_servers_pattern(text: str) -> None:
    matches = re.fullmatch(r"[0-9]+%", text, flags=re.ASCII) is not None
    assert (parse_percent(text) is not None) == matches


@given(st.one_of(st.integers(min_value=-(2**31), max_value=2**31 - 1), st.text(), st.integers(0, 1000).map(lambda n: f"{n}%")))
def test_int_or_percent_refuses_exactly_the_bad_values(value: int | str) -> None:
    errs: Errors = []
    int_or_percent(value, "spec.minAvailable", errs)
    if isinstance(value, int):
        good = value >= 0
    else:
        pct = parse_percent(value)
        good = pct is not None and pct <= 100
    assert (not errs) == good
    assert all(e.field == "spec.minAvailable" for e in errs)
    assert len(errs) <= 1
