"""TaintToleration: Filter on NoSchedule/NoExecute taints; Score counts untolerated PreferNoSchedule taints, reversed."""

from __future__ import annotations

import pytest

from kschedctl.framework.cycle_state import CycleState
from kschedctl.framework.interfaces import NodeScore, extension_points_of
from kschedctl.framework.status import Code
from kschedctl.plugins import tainttoleration as tt
from tests.builders import FakeHandle, NodeBuilder, PodBuilder, make_node, make_pod, node_info

REASON = "node(s) had untolerated taint(s)"


def _pl() -> tt.TaintToleration:
    return tt.new(None, FakeHandle())


@pytest.mark.parametrize(
    ("pod", "node", "code"),
    [
        pytest.param(make_pod(), make_node(), Code.SUCCESS, id="no-taints"),
        pytest.param(make_pod(), make_node().taint("dedicated", "gpu", "NoSchedule"), Code.UNSCHEDULABLE_AND_UNRESOLVABLE, id="noschedule"),
        pytest.param(make_pod(), make_node().taint("maint", effect="NoExecute"), Code.UNSCHEDULABLE_AND_UNRESOLVABLE, id="noexecute"),
        pytest.param(make_pod(), make_node().taint("soft", effect="PreferNoSchedule"), Code.SUCCESS, id="prefer-is-not-filtered"),
        pytest.param(
            make_pod().toleration("dedicated", "gpu", "NoSchedule"),
            make_node().taint("dedicated", "gpu", "NoSchedule"), Code.SUCCESS, id="equal-toleration",
        ),
        pytest.param(
            make_pod().toleration("dedicated", "cpu", "NoSchedule"),
            make_node().taint("dedicated", "gpu", "NoSchedule"), Code.UNSCHEDULABLE_AND_UNRESOLVABLE, id="value-mismatch",
        ),
        pytest.param(
            make_pod().toleration("dedicated", operator="Exists"),
            make_node().taint("dedicated", "gpu", "NoSchedule").taint("dedicated", "x", "NoExecute"),
            Code.SUCCESS, id="exists-any-effect",
        ),
        pytest.param(
            make_pod().toleration("dedicated", "gpu", "NoSchedule"),
            make_node().taint("dedicated", "gpu", "NoSchedule").taint("other", effect="NoExecute"),
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE, id="second-taint-untolerated",
        ),
        pytest.param(
            make_pod().toleration("dedicated", "gpu", "NoExecute"),
            make_node().taint("dedicated", "gpu", "NoSchedule"), Code.UNSCHEDULABLE_AND_UNRESOLVABLE, id="effect-mismatch",
        ),
        pytest.param(make_pod().toleration(operator="Exists"), make_node().taint("a").taint("b", effect="NoExecute"), Code.SUCCESS, id="wildcard"),
        # Comparison operators are alpha (off) in v1.35: a Gt toleration tolerates nothing.
        pytest.param(
            make_pod().toleration("level", "1", "NoSchedule", operator="Gt"),
            make_node().taint("level", "5", "NoSchedule"), Code.UNSCHEDULABLE_AND_UNRESOLVABLE, id="gt-operator-disabled",
        ),
    ],
)
def test_filter(pod: PodBuilder, node: NodeBuilder, code: Code) -> None:
    st = _pl().filter(CycleState(), pod.build(), node_info(node))
    assert st.code == code
    assert st.reasons == ([] if code == Code.SUCCESS else [REASON])


def test_untolerated_taint_reports_first() -> None:
    n = make_node().taint("soft", effect="PreferNoSchedule").taint("a", "1").taint("b", effect="NoExecute").build()
    t = tt.untolerated_taint(n.taints, [])
    assert t is not None and str(t) == "a=1:NoSchedule"


@pytest.mark.parametrize(
    ("pod", "nodes", "raw", "normalized"),
    [
        pytest.param(
            make_pod(),
            [make_node("a"), make_node("b").taint("x", effect="PreferNoSchedule"),
             make_node("c").taint("x", effect="PreferNoSchedule").taint("y", effect="PreferNoSchedule")],
            [0, 1, 2], [100, 50, 0], id="count-and-reverse",
        ),
        pytest.param(
            make_pod(), [make_node("a"), make_node("b")], [0, 0], [100, 100], id="all-zero-gives-max",
        ),
        pytest.param(
            # NoSchedule taints are not counted by Score.
            make_pod(), [make_node("a").taint("x"), make_node("b").taint("y", effect="PreferNoSchedule")],
            [0, 1], [100, 0], id="only-prefer-counted",
        ),
        pytest.param(
            # A toleration with effect NoSchedule does not apply to PreferNoSchedule taints.
            make_pod().toleration("x", operator="Exists", effect="NoSchedule"),
            [make_node("a").taint("x", effect="PreferNoSchedule"), make_node("b")],
            [1, 0], [0, 100], id="noschedule-toleration-ignored",
        ),
        pytest.param(
            # Empty effect tolerates every effect, PreferNoSchedule included.
            make_pod().toleration("x", operator="Exists"),
            [make_node("a").taint("x", effect="PreferNoSchedule"), make_node("b").taint("z", effect="PreferNoSchedule")],
            [0, 1], [100, 0], id="empty-effect-toleration",
        ),
        pytest.param(
            make_pod().toleration("x", "v", "PreferNoSchedule"),
            [make_node("a").taint("x", "v", "PreferNoSchedule"), make_node("b").taint("x", "w", "PreferNoSchedule")],
            [0, 1], [100, 0], id="prefer-toleration-value",
        ),
        pytest.param(
            # 100*1/3 = 33 (integer division) then reversed: 67.
            make_pod(),
            [make_node("a").taint("p", effect="PreferNoSchedule"),
             make_node("b").taint("p", effect="PreferNoSchedule").taint("q", effect="PreferNoSchedule").taint("r", effect="PreferNoSchedule")],
            [1, 3], [67, 0], id="integer-division",
        ),
    ],
)
def test_score(pod: PodBuilder, nodes: list[NodeBuilder], raw: list[int], normalized: list[int]) -> None:
    pl = _pl()
    p = pod.build()
    nis = [node_info(n) for n in nodes]
    state = CycleState()
    st = pl.pre_score(state, p, nis)
    assert st.code == Code.SUCCESS  # never Skip
    scores = []
    for ni in nis:
        v, s = pl.score(state, p, ni)
        assert s.is_success()
        scores.append(NodeScore(ni.name, v))
    assert [s.score for s in scores] == raw
    ext = pl.score_extensions()
    assert ext is not None
    assert ext.normalize_score(state, p, scores).is_success()
    assert [s.score for s in scores] == normalized


def test_score_without_pre_score_is_error() -> None:
    v, st = _pl().score(CycleState(), make_pod().build(), node_info(make_node()))
    assert (v, st.code) == (0, Code.ERROR)
    assert st.reasons == ['failed to read "PreScoreTaintToleration" from cycleState: not found']


def test_extension_points() -> None:
    assert extension_points_of(_pl()) == ["filter", "preScore", "score"]
