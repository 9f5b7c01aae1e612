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


def test_bind_succeeds_and_records() -> None:
    pl = db.new(None, FakeHandle())
    a = make_pod("a").build()
    b = make_pod("b", "other").build()
    assert pl.last_binding is None
    st = pl.bind(CycleState(), a, "n1")
    assert st.code == Code.SUCCESS and st.reasons == []
    st = pl.bind(CycleState(), b, "n2")
    assert st.code == Code.SUCCESS
    assert pl.last_binding == db.binding_for(b, "n2")
    assert pl.bindings == {"default/a": db.binding_for(a, "n1"), "other/b": db.binding_for(b, "n2")}


def test_only_bind() -> None:
    pl = db.new(None, FakeHandle())
    assert pl.name == "DefaultBinder"
    assert extension_points_of(pl) == ["bind"]
