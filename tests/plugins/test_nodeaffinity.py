"""NodeAffinity: PreFilter Skip/result rules, Filter reasons, preferred scoring, addedAffinity, selector corner cases."""

from __future__ import annotations

from typing import Any

import pytest

from kschedctl.config.args import NodeAffinityArgs
from kschedctl.errors import ConfigError
from kschedctl.framework.cycle_state import CycleState
from kschedctl.framework.interfaces import NodeScore, extension_points_of
from kschedctl.framework.status import Code
from kschedctl.kube.selectors import parse_go_int64, parse_node_selector_term
from kschedctl.plugins import nodeaffinity as na
from tests.builders import FakeHandle, NodeBuilder, PodBuilder, make_node, make_pod, node_info

POD_REASON = "node(s) didn't match Pod's node affinity/selector"
ENFORCED_REASON = "node(s) didn't match scheduler-enforced node affinity"


def _pl(added: dict[str, Any] | None = None) -> na.NodeAffinity:
    if added is None:
        return na.new(None, FakeHandle())
    return na.new(NodeAffinityArgs.model_validate({"addedAffinity": added}), FakeHandle())


def expr(key: str, op: str, *values: str) -> dict[str, Any]:
    e: dict[str, Any] = {"key": key, "operator": op}
    if values:
        e["values"] = list(values)
    return e


def name_in(*names: str) -> dict[str, Any]:
    return {"key": "metadata.name", "operator": "In", "values": list(names)}


def required(*terms: dict[str, Any]) -> PodBuilder:
    """A pod whose required node affinity has these raw terms ({"matchExpressions": [...], "matchFields": [...]})."""
    return make_pod().set(
        "spec.affinity", {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}}}
    )


def preferred(*items: tuple[int, dict[str, Any]]) -> PodBuilder:
    return make_pod().set(
        "spec.affinity",
        {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": w, "preference": t} for w, t in items]}},
    )


ADDED_REQUIRED = {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": [expr("pool", "In", "batch")]}]}}
ADDED_PREFERRED = {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 3, "preference": {"matchExpressions": [expr("ssd", "Exists")]}}]}


# --------------------------------------------------------------------------- PreFilter


@pytest.mark.parametrize(
    ("pod", "added", "code", "names", "reasons"),
    [
        pytest.param(make_pod(), None, Code.SKIP, None, [], id="nothing-to-do"),
        pytest.param(make_pod().set("spec.nodeSelector", {}), None, Code.SUCCESS, None, [], id="empty-node-selector-present"),
        pytest.param(make_pod().node_selector(disk="ssd"), None, Code.SUCCESS, None, [], id="node-selector"),
        pytest.param(make_pod(), ADDED_REQUIRED, Code.SUCCESS, None, [], id="added-required"),
        pytest.param(make_pod(), ADDED_PREFERRED, Code.SKIP, None, [], id="added-preferred-only"),
        pytest.param(preferred((1, {"matchExpressions": [expr("a", "Exists")]})), None, Code.SKIP, None, [], id="pod-preferred-only"),
        pytest.param(required(), None, Code.SUCCESS, None, [], id="no-terms"),
        pytest.param(required({"matchExpressions": [expr("a", "Exists")]}), None, Code.SUCCESS, None, [], id="expressions-only"),
        pytest.param(
            required({"matchFields": [name_in("a", "b")]}, {"matchFields": [name_in("c")]}),
            None, Code.SUCCESS, {"a", "b", "c"}, [], id="names-union-of-terms",
        ),
        pytest.param(
            required({"matchFields": [name_in("a", "b"), name_in("b", "c")], "matchExpressions": [expr("x", "Exists")]}),
            None, Code.SUCCESS, {"b"}, [], id="names-intersect-within-term",
        ),
        pytest.param(
            required({"matchFields": [name_in("a")]}, {"matchExpressions": [expr("x", "Exists")]}),
            None, Code.SUCCESS, None, [], id="one-term-without-names",
        ),
        pytest.param(
            required({"matchFields": [name_in("a")]}, {}), None, Code.SUCCESS, None, [], id="empty-term-means-all",
        ),
        pytest.param(
            required({"matchFields": [{"key": "metadata.name", "operator": "NotIn", "values": ["a"]}]}),
            None, Code.SUCCESS, None, [], id="notin-does-not-narrow",
        ),
        pytest.param(
            required({"matchFields": [name_in("a"), name_in("b")]}),
            None, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, None, ["pod affinity terms conflict"], id="conflict",
        ),
    ],
)
def test_pre_filter(
    pod: PodBuilder, added: dict[str, Any] | None, code: Code, names: set[str] | None, reasons: list[str]
) -> None:
    r, st = _pl(added).pre_filter(CycleState(), pod.build(), [])
    assert st.code == code
    assert st.reasons == reasons
    assert (r.node_names if r is not None else None) == names


# --------------------------------------------------------------------------- Filter


@pytest.mark.parametrize(
    ("pod", "node", "added", "reason"),
    [
        pytest.param(make_pod().node_selector(disk="ssd"), make_node().label("disk", "ssd"), None, None, id="selector-match"),
        pytest.param(make_pod().node_selector(disk="ssd"), make_node().label("disk", "hdd"), None, POD_REASON, id="selector-mismatch"),
        pytest.param(make_pod().node_selector(disk=""), make_node(), None, POD_REASON, id="selector-empty-value-needs-key"),
        pytest.param(make_pod().node_selector(disk=""), make_node().label("disk", ""), None, None, id="selector-empty-value"),
        pytest.param(make_pod().set("spec.nodeSelector", {}), make_node(), None, None, id="empty-selector-matches"),
        # nodeSelector AND required affinity.
        pytest.param(
            required({"matchExpressions": [expr("zone", "In", "a", "b")]}).node_selector(disk="ssd"),
            make_node().label("zone", "b"), None, POD_REASON, id="selector-and-affinity",
        ),
        pytest.param(required(), make_node(), None, POD_REASON, id="no-terms-match-nothing"),
        pytest.param(required({}), make_node(), None, POD_REASON, id="empty-term-matches-nothing"),
        pytest.param(required({"matchExpressions": [expr("zone", "NotIn", "a")]}), make_node(), None, None, id="notin-missing-key"),
        pytest.param(required({"matchExpressions": [expr("zone", "DoesNotExist")]}), make_node().label("zone", "a"), None, POD_REASON, id="doesnotexist"),
        pytest.param(
            required({"matchExpressions": [expr("zone", "In", "x")]}, {"matchExpressions": [expr("gpu", "Exists")]}),
            make_node().label("gpu", "1"), None, None, id="terms-ored",
        ),
        pytest.param(required({"matchExpressions": [expr("cores", "Gt", "4")]}), make_node().label("cores", "08"), None, None, id="gt"),
        pytest.param(required({"matchExpressions": [expr("cores", "Gt", "8")]}), make_node().label("cores", "8"), None, POD_REASON, id="gt-strict"),
        pytest.param(required({"matchExpressions": [expr("cores", "Lt", "8")]}), make_node().label("cores", "+7"), None, None, id="lt-signed-label"),
        pytest.param(required({"matchExpressions": [expr("cores", "Gt", "1")]}), make_node().label("cores", " 5"), None, POD_REASON, id="gt-space-not-int"),
        pytest.param(required({"matchExpressions": [expr("cores", "Gt", "1")]}), make_node().label("cores", "5_0"), None, POD_REASON, id="gt-underscore-not-int"),
        pytest.param(required({"matchExpressions": [expr("cores", "Gt", "1")]}), make_node(), None, POD_REASON, id="gt-missing-label"),
        # Invalid terms never match; a valid sibling term still can.
        pytest.param(required({"matchExpressions": [expr("cores", "Gt", "x")]}), make_node().label("cores", "5"), None, POD_REASON, id="gt-non-int-value"),
        pytest.param(required({"matchExpressions": [expr("cores", "Gt", "1", "2")]}), make_node().label("cores", "5"), None, POD_REASON, id="gt-two-values"),
        pytest.param(required({"matchExpressions": [expr("cores", "Gt", "-1")]}), make_node().label("cores", "5"), None, POD_REASON, id="gt-negative-invalid-label-value"),
        pytest.param(required({"matchExpressions": [expr("a", "In")]}), make_node().label("a", ""), None, POD_REASON, id="in-without-values"),
        pytest.param(required({"matchExpressions": [expr("a", "Exists", "x")]}), make_node().label("a", "x"), None, POD_REASON, id="exists-with-values"),
        pytest.param(required({"matchExpressions": [expr("bad key", "Exists")]}), make_node().label("bad key", "x"), None, POD_REASON, id="invalid-key"),
        pytest.param(required({"matchExpressions": [expr("a", "Foo", "x")]}), make_node().label("a", "x"), None, POD_REASON, id="unknown-operator"),
        pytest.param(
            required({"matchExpressions": [expr("a", "Exists"), expr("b", "In", "has space")]}, {"matchExpressions": [expr("a", "Exists")]}),
            make_node().label("a", "1").label("b", "has space"), None, None, id="invalid-term-valid-sibling",
        ),
        # matchFields: metadata.name In/NotIn with one value; other keys read as "".
        pytest.param(required({"matchFields": [name_in("node")]}), make_node("node"), None, None, id="fields-name-in"),
        pytest.param(required({"matchFields": [name_in("other")]}), make_node("node"), None, POD_REASON, id="fields-name-other"),
        pytest.param(
            required({"matchFields": [{"key": "metadata.name", "operator": "NotIn", "values": ["node"]}]}),
            make_node("node"), None, POD_REASON, id="fields-name-notin",
        ),
        pytest.param(required({"matchFields": [name_in("node", "x")]}), make_node("node"), None, POD_REASON, id="fields-two-values-invalid"),
        pytest.param(
            required({"matchFields": [{"key": "metadata.name", "operator": "Exists"}]}), make_node("node"), None, POD_REASON,
            id="fields-exists-invalid",
        ),
        pytest.param(
            required({"matchFields": [{"key": "spec.other", "operator": "In", "values": [""]}]}), make_node("node"), None, None,
            id="fields-unknown-key-reads-empty",
        ),
        pytest.param(
            required({"matchFields": [name_in("node")], "matchExpressions": [expr("zone", "Exists")]}),
            make_node("node"), None, POD_REASON, id="fields-and-expressions",
        ),
        # addedAffinity is checked first and has its own reason.
        pytest.param(make_pod(), make_node().label("pool", "web"), ADDED_REQUIRED, ENFORCED_REASON, id="added-mismatch"),
        pytest.param(make_pod().node_selector(x="y"), make_node(), ADDED_REQUIRED, ENFORCED_REASON, id="added-before-pod"),
        pytest.param(make_pod().node_selector(x="y"), make_node().label("pool", "batch"), ADDED_REQUIRED, POD_REASON, id="added-ok-pod-not"),
        pytest.param(make_pod(), make_node().label("pool", "batch"), ADDED_REQUIRED, None, id="added-match"),
        pytest.param(
            make_pod(), make_node(), {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": []}},
            ENFORCED_REASON, id="added-without-terms-rejects-all",
        ),
    ],
)
def test_filter(pod: PodBuilder, node: NodeBuilder, added: dict[str, Any] | None, reason: str | None) -> None:
    pl = _pl(added)
    p = pod.build()
    state = CycleState()
    _, pst = pl.pre_filter(state, p, [])
    assert pst.code in (Code.SUCCESS, Code.UNSCHEDULABLE_AND_UNRESOLVABLE)
    st = pl.filter(state, p, node_info(node))
    if reason is None:
        assert st.code == Code.SUCCESS, st
    else:
        assert st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        assert st.reasons == [reason]


def test_filter_without_pre_filter_state_recomputes() -> None:
    st = _pl().filter(CycleState(), make_pod().node_selector(a="b").build(), node_info(make_node()))
    assert (st.code, st.reasons) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [POD_REASON])


# --------------------------------------------------------------------------- PreScore / Score


ZONE_A = {"matchExpressions": [expr("zone", "In", "a")]}
SSD = {"matchExpressions": [expr("disk", "In", "ssd")]}


@pytest.mark.parametrize(
    ("pod", "added", "nodes", "raw", "normalized"),
    [
        pytest.param(
            preferred((10, ZONE_A), (5, SSD)),
            None,
            [make_node("n1").label("zone", "a").label("disk", "ssd"), make_node("n2").label("zone", "a"), make_node("n3").label("disk", "ssd"), make_node("n4")],
            [15, 10, 5, 0], [100, 66, 33, 0], id="sum-of-weights",
        ),
        pytest.param(
            preferred((0, ZONE_A), (4, {})), None, [make_node("n1").label("zone", "a")], [0], [0], id="zero-weight-and-empty-ignored",
        ),
        pytest.param(
            preferred((7, {"matchFields": [name_in("n2")]})), None, [make_node("n1"), make_node("n2")], [0, 7], [0, 100], id="fields-preference",
        ),
        pytest.param(
            make_pod(), ADDED_PREFERRED, [make_node("n1").label("ssd", ""), make_node("n2")], [3, 0], [100, 0], id="added-preferred",
        ),
        pytest.param(
            preferred((2, ZONE_A)), ADDED_PREFERRED, [make_node("n1").label("ssd", "1").label("zone", "a"), make_node("n2").label("zone", "a")],
            [5, 2], [100, 40], id="added-plus-pod",
        ),
        pytest.param(
            make_pod().set("spec.affinity", {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": []}}),
            None, [make_node("n1")], [0], [0], id="empty-list-present",
        ),
        pytest.param(
            preferred((0, {"matchExpressions": [expr("a", "Gt", "x")]})), None, [make_node("n1")], [0], [0], id="invalid-zero-weight-ignored",
        ),
    ],
)
def test_score(
    pod: PodBuilder, added: dict[str, Any] | None, nodes: list[NodeBuilder], raw: list[int], normalized: list[int]
) -> None:
    pl = _pl(added)
    p = pod.build()
    nis = [node_info(n) for n in nodes]
    state = CycleState()
    assert pl.pre_score(state, p, nis).code == Code.SUCCESS
    scores = []
    for ni in nis:
        v, st = pl.score(state, p, ni)
        assert st.is_success()
        scores.append(NodeScore(ni.name, v))
    assert [s.score for s in scores] == raw
    assert pl.normalize_score(state, p, scores).is_success()
    assert [s.score for s in scores] == normalized


@pytest.mark.parametrize(
    ("pod", "added"),
    [
        pytest.param(make_pod(), None, id="nothing"),
        pytest.param(make_pod().node_selector(a="b"), ADDED_REQUIRED, id="required-only"),
        pytest.param(required({"matchExpressions": [expr("a", "Exists")]}), None, id="pod-required-only"),
    ],
)
def test_pre_score_skip(pod: PodBuilder, added: dict[str, Any] | None) -> None:
    assert _pl(added).pre_score(CycleState(), pod.build(), []).code == Code.SKIP


@pytest.mark.parametrize(
    ("pod", "message"),
    [
        pytest.param(
            preferred((5, ZONE_A), (5, {"matchExpressions": [expr("cores", "Gt", "x")]})),
            "[1].matchExpressions[0].values[0]: Invalid value: \"x\": for 'Gt', 'Lt' operators, the value must be an integer",
            id="gt-not-integer",
        ),
        pytest.param(
            preferred((5, {"matchExpressions": [expr("a", "In")], "matchFields": [{"key": "metadata.name", "operator": "Exists"}]})),
            "[[0].matchExpressions[0].values: Invalid value: []string(nil): for 'in', 'notin' operators, values set can't be empty, "
            '[0].matchFields[0].operator: Unsupported value: "Exists": supported values: "In", "NotIn"]',
            id="two-errors-aggregated",
        ),
        pytest.param(
            preferred((1, {"matchExpressions": [expr("a", "Foo")]})),
            '[0].matchExpressions[0].operator: Unsupported value: "Foo": supported values: '
            '"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"',
            id="unknown-operator",
        ),
    ],
)
def test_pre_score_invalid_preferred_is_error(pod: PodBuilder, message: str) -> None:
    st = _pl().pre_score(CycleState(), pod.build(), [])
    assert st.code == Code.ERROR
    assert st.reasons == [message]


def test_invalid_added_affinity_is_config_error() -> None:
    bad = {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": [expr("a", "Gt", "x")]}]}}
    with pytest.raises(ConfigError, match=r"addedAffinity\.requiredDuringSchedulingIgnoredDuringExecution\.nodeSelectorTerms\[0\]"):
        _pl(bad)


def test_extension_points() -> None:
    pl = _pl()
    assert extension_points_of(pl) == ["preFilter", "filter", "preScore", "score"]
    assert pl.pre_filter_extensions() is None
    assert pl.score_extensions() is pl


# --------------------------------------------------------------------------- selector helpers


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("5", 5), ("-5", -5), ("+5", 5), ("007", 7), (" 5", None), ("5 ", None), ("5_0", None), ("0x10", None),
        ("", None), ("٥", None), ("9223372036854775807", 2**63 - 1), ("9223372036854775808", None),
    ],
)
def test_parse_go_int64(text: str, want: int | None) -> None:
    assert parse_go_int64(text) == want


def test_term_errors_keep_go_paths() -> None:
    t = parse_node_selector_term({"matchExpressions": [expr("ok", "Exists"), expr("-bad", "In", "v")]}, "x")
    assert not t.valid
    assert t.error_messages("p")[0].startswith('p.matchExpressions[1].key: Invalid value: "-bad": name part must consist of')
