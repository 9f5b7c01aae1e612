"""NodeUnschedulable: cordoned nodes reject pods unless they tolerate the unschedulable NoSchedule taint."""

from __future__ import annotations

import pytest

from kschedctl.framework.cycle_state import CycleState
from kschedctl.framework.interfaces import extension_points_of
from kschedctl.framework.status import Code
from kschedctl.plugins import nodeunschedulable as nu
from tests.builders import FakeHandle, NodeBuilder, PodBuilder, make_node, make_pod, node_info

KEY = "node.kubernetes.io/unschedulable"
REASON = "node(s) were unschedulable"


@pytest.mark.parametrize(
    ("pod", "node", "code", "reasons"),
    [
        pytest.param(make_pod(), make_node(), Code.SUCCESS, [], id="schedulable-node"),
        pytest.param(make_pod(), make_node().unschedulable(False), Code.SUCCESS, [], id="explicit-false"),
        pytest.param(make_pod(), make_node().unschedulable(), Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [REASON], id="cordoned"),
        pytest.param(
            make_pod().toleration(KEY, effect="NoSchedule", operator="Exists"),
            make_node().unschedulable(), Code.SUCCESS, [], id="tolerates-exists",
        ),
        # Equal with an empty value matches the value-less taint.
        pytest.param(make_pod().toleration(KEY, effect="NoSchedule"), make_node().unschedulable(), Code.SUCCESS, [], id="tolerates-equal-empty"),
        pytest.param(make_pod().toleration(operator="Exists"), make_node().unschedulable(), Code.SUCCESS, [], id="tolerate-everything"),
        pytest.param(make_pod().toleration(KEY, operator="Exists"), make_node().unschedulable(), Code.SUCCESS, [], id="any-effect"),
        pytest.param(
            make_pod().toleration(KEY, effect="NoExecute", operator="Exists"),
            make_node().unschedulable(), Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [REASON], id="wrong-effect",
        ),
        pytest.param(
            make_pod().toleration(KEY, value="true", effect="NoSchedule"),
            make_node().unschedulable(), Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [REASON], id="value-mismatch",
        ),
        # Only the flag matters: the taint on the node is TaintToleration's business.
        pytest.param(make_pod(), make_node().taint(KEY), Code.SUCCESS, [], id="taint-without-flag"),
    ],
)
def test_filter(pod: PodBuilder, node: NodeBuilder, code: Code, reasons: list[str]) -> None:
    st = nu.new(None, FakeHandle()).filter(CycleState(), pod.build(), node_info(node))
    assert st.code == code
    assert st.reasons == reasons


def test_only_filter() -> None:
    assert extension_points_of(nu.new(None, FakeHandle())) == ["filter"]
