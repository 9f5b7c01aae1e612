"""SchedulingGates: PreEnqueue rejects gated pods with Go's %v rendering of the gate names."""

from __future__ import annotations

import pytest

from kschedctl.framework.interfaces import extension_points_of
from kschedctl.framework.status import Code
from kschedctl.plugins import schedulinggates as sg
from tests.builders import FakeHandle, PodBuilder, make_pod


@pytest.mark.parametrize(
    ("pod", "code", "reasons"),
    [
        pytest.param(make_pod(), Code.SUCCESS, [], id="no-gates"),
        pytest.param(make_pod().set("spec.schedulingGates", []), Code.SUCCESS, [], id="empty-list"),
        pytest.param(
            make_pod().gate("example.com/quota"),
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            ["waiting for scheduling gates: [example.com/quota]"],
            id="one-gate",
        ),
        pytest.param(
            make_pod().gate("a").gate("b").gate("c"),
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            ["waiting for scheduling gates: [a b c]"],
            id="several-gates-in-order",
        ),
    ],
)
def test_pre_enqueue(pod: PodBuilder, code: Code, reasons: list[str]) -> None:
    st = sg.new(None, FakeHandle()).pre_enqueue(pod.build())
    assert st.code == code
    assert st.reasons == reasons


def test_only_pre_enqueue() -> None:
    pl = sg.new(None, FakeHandle())
    assert pl.name == "SchedulingGates"
    assert extension_points_of(pl) == ["preEnqueue"]
