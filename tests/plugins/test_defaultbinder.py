"""DefaultBinder: Bind is a dry run that records the v1.Binding kube-scheduler would POST."""

from __future__ import annotations

from kschedctl.framework.cycle_state import CycleState
from kschedctl.framework.interfaces import extension_points_of
from kschedctl.framework.status import Code
from kschedctl.plugins import defaultbinder as db
from tests.builders import FakeHandle, make_pod


def test_binding_for() -> None:
    pod = make_pod("web", "shop").uid("1234-abcd").build()
    pl = db.new(None, FakeHandle())
    assert pl.binding_for(pod, "node-1") == {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": "web", "namespace": "shop", "uid": "1234-abcd"},
        "target": {"kind": "Node", "name": "node-1"},
    }


def test_bind_succeeds() -> None:
    pl = db.new(None, FakeHandle())
    st = pl.bind(CycleState(), make_pod("a").build(), "n1")
    assert st.code == Code.SUCCESS and st.reasons == []


def test_only_bind() -> None:
    pl = db.new(None, FakeHandle())
    assert pl.name == "DefaultBinder"
    assert extension_points_of(pl) == ["bind"]
