"""NodeName: a pod naming its node fits only that node; Filter only in v1.35."""

from __future__ import annotations

import pytest

from kschedctl.framework.cycle_state import CycleState
from kschedctl.framework.interfaces import extension_points_of
from kschedctl.framework.status import Code
from kschedctl.plugins import nodename as nn
from tests.builders import FakeHandle, PodBuilder, make_node, make_pod, node_info


@pytest.mark.parametrize(
    ("pod", "node", "code", "reasons"),
    [
        pytest.param(make_pod(), "n1", Code.SUCCESS, [], id="no-node-name"),
        pytest.param(make_pod().set("spec.nodeName", "n1"), "n1", Code.SUCCESS, [], id="same-node"),
        pytest.param(
            make_pod().set("spec.nodeName", "n2"), "n1", Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            ["node(s) didn't match the requested node name"], id="other-node",
        ),
        pytest.param(
            make_pod().set("spec.nodeName", "N1"), "n1", Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            ["node(s) didn't match the requested node name"], id="case-sensitive",
        ),
    ],
)
def test_filter(pod: PodBuilder, node: str, code: Code, reasons: list[str]) -> None:
    st = nn.new(None, FakeHandle()).filter(CycleState(), pod.build(), node_info(make_node(node)))
    assert st.code == code
    assert st.reasons == reasons


def test_no_pre_filter_in_v1_35() -> None:
    assert extension_points_of(nn.new(None, FakeHandle())) == ["filter"]
