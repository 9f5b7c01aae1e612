"""NodePorts: PreFilter Skip without host ports; Filter with the 0.0.0.0 / specific-IP conflict rule."""

from __future__ import annotations

import pytest

from kschedctl.framework.cycle_state import CycleState
from kschedctl.framework.interfaces import extension_points_of
from kschedctl.framework.status import Code
from kschedctl.plugins import nodeports as np_
from tests.builders import FakeHandle, PodBuilder, make_node, make_pod, node_info

REASON = "node(s) didn't have free ports for the requested pod ports"


def _pl() -> np_.NodePorts:
    return np_.new(None, FakeHandle())


@pytest.mark.parametrize(
    ("pod", "code"),
    [
        pytest.param(make_pod(), Code.SKIP, id="no-ports"),
        pytest.param(make_pod().set("spec.containers", [{"name": "c", "ports": [{"containerPort": 80}]}]), Code.SKIP, id="container-port-only"),
        pytest.param(make_pod().host_port(8080), Code.SUCCESS, id="host-port"),
        # A plain init container's ports do not count; a sidecar's do.
        pytest.param(
            make_pod().set("spec.initContainers", [{"name": "i", "ports": [{"containerPort": 9, "hostPort": 9}]}]),
            Code.SKIP, id="init-container-ignored",
        ),
        pytest.param(
            make_pod().set(
                "spec.initContainers",
                [{"name": "i", "restartPolicy": "Always", "ports": [{"containerPort": 9, "hostPort": 9}]}],
            ),
            Code.SUCCESS, id="sidecar-counts",
        ),
        # hostNetwork: host ports default to the container ports.
        pytest.param(
            make_pod().set("spec.hostNetwork", True).set("spec.containers", [{"name": "c", "ports": [{"containerPort": 53}]}]),
            Code.SUCCESS, id="host-network",
        ),
    ],
)
def test_pre_filter(pod: PodBuilder, code: Code) -> None:
    r, st = _pl().pre_filter(CycleState(), pod.build(), [])
    assert r is None
    assert st.code == code


@pytest.mark.parametrize(
    ("pod", "existing", "code"),
    [
        pytest.param(make_pod().host_port(80), [], Code.SUCCESS, id="empty-node"),
        pytest.param(make_pod().host_port(80), [make_pod("e").host_port(80)], Code.UNSCHEDULABLE, id="same-port"),
        pytest.param(make_pod().host_port(80), [make_pod("e").host_port(81)], Code.SUCCESS, id="other-port"),
        pytest.param(make_pod().host_port(53, "UDP"), [make_pod("e").host_port(53, "TCP")], Code.SUCCESS, id="other-protocol"),
        pytest.param(make_pod().host_port(53, "UDP"), [make_pod("e").host_port(53, "UDP")], Code.UNSCHEDULABLE, id="same-udp"),
        pytest.param(
            make_pod().host_port(80, host_ip="10.0.0.1"), [make_pod("e").host_port(80, host_ip="10.0.0.2")],
            Code.SUCCESS, id="different-specific-ips",
        ),
        pytest.param(
            make_pod().host_port(80, host_ip="10.0.0.1"), [make_pod("e").host_port(80, host_ip="10.0.0.1")],
            Code.UNSCHEDULABLE, id="same-specific-ip",
        ),
        pytest.param(
            make_pod().host_port(80, host_ip="10.0.0.1"), [make_pod("e").host_port(80)],
            Code.UNSCHEDULABLE, id="specific-vs-wildcard-used",
        ),
        pytest.param(
            make_pod().host_port(80), [make_pod("e").host_port(80, host_ip="10.0.0.1")],
            Code.UNSCHEDULABLE, id="wildcard-vs-specific-used",
        ),
        pytest.param(
            make_pod().host_port(80, host_ip="0.0.0.0"), [make_pod("e").host_port(80, host_ip="192.168.1.1")],
            Code.UNSCHEDULABLE, id="explicit-wildcard",
        ),
        pytest.param(
            make_pod().host_port(80).host_port(443), [make_pod("e").host_port(443)], Code.UNSCHEDULABLE, id="second-port-conflicts",
        ),
    ],
)
def test_filter(pod: PodBuilder, existing: list[PodBuilder], code: Code) -> None:
    pl = _pl()
    p = pod.build()
    state = CycleState()
    _, st = pl.pre_filter(state, p, [])
    assert st.is_success()
    f = pl.filter(state, p, node_info(make_node("n1"), *existing))
    assert f.code == code
    assert f.reasons == ([] if code == Code.SUCCESS else [REASON])


def test_filter_without_pre_filter_is_error() -> None:
    st = _pl().filter(CycleState(), make_pod().host_port(80).build(), node_info(make_node()))
    assert st.code == Code.ERROR
    assert st.reasons == ['reading "PreFilterNodePorts" from cycleState: not found']


def test_extension_points() -> None:
    pl = _pl()
    assert extension_points_of(pl) == ["preFilter", "filter"]
    assert pl.pre_filter_extensions() is None
