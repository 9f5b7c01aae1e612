"""NodePorts: a pod's host ports must be free on the node.

PreFilter collects the pod's host ports (containers and restartable init
containers, ``hostPort > 0``) and returns Skip when there are none, which also
skips Filter. Filter checks each wanted (hostIP, protocol, port) against the
ports the node's pods already use with kube-scheduler's rule: 0.0.0.0 (or an
empty hostIP) conflicts with the same protocol/port on any IP, a specific IP
conflicts with itself and with 0.0.0.0. A conflict is plain Unschedulable, so
preemption may free the port.
"""

from __future__ import annotations

from kschedctl.framework import signers
from kschedctl.framework.cycle_state import CycleState, StateKey
from kschedctl.framework.interfaces import Handle, NodeVerdict, PreFilterResult
from kschedctl.framework.signers import SignFragment
from kschedctl.framework.status import Code, Status
from kschedctl.framework.types import HostPortInfo, NodeInfo, host_ports
from kschedctl.framework.verdict import NodeVerdictFilter
from kschedctl.kube.rules import NODE_PORTS_SIDECARS
from kschedctl.snapshot.model import Pod

NAME = "NodePorts"

ERR_REASON = "node(s) didn't have free ports for the requested pod ports"

_STATE_NAME = "PreFilter" + NAME


class _PreFilterState(tuple[tuple[str, str, int], ...]):
    """The pod's wanted (hostIP, protocol, hostPort) triples (immutable, shared on clone)."""

    def clone(self) -> _PreFilterState:
        return self


PRE_FILTER_KEY: StateKey[_PreFilterState] = StateKey(_STATE_NAME)


def fits_ports(want: tuple[tuple[str, str, int], ...] | list[tuple[str, str, int]], used: HostPortInfo) -> bool:
    return not any(used.check_conflict(ip, proto, port) for ip, proto, port in want)


def container_host_ports(pod: Pod) -> list[tuple[str, str, int]]:
    """v1.33's host ports of a pod: its containers' only (node_ports.go's getContainerPorts there, and
    NodeInfo's used ports alike); sidecars' host ports count from v1.34 (``host_ports``)."""
    return [(p.host_ip, p.protocol, p.host_port) for c in pod.containers for p in c.ports if p.host_port > 0]


def _container_used_ports(node_info: NodeInfo) -> HostPortInfo:
    """The node's used ports as v1.33 counts them (``container_host_ports`` of every pod on it)."""
    used = HostPortInfo()
    for pi in node_info.pods:
        for ip, proto, port in container_host_ports(pi.pod):
            used.add(ip, proto, port)
    return used


def _used_ports(node_info: NodeInfo) -> HostPortInfo:
    """The host ports in use on the node, sidecars' included (v1.34 and later)."""
    return node_info.used_ports


def fits(pod: Pod, node_info: NodeInfo) -> bool:
    """Whether the pod's host ports are free on the node (without cycle state)."""
    return fits_ports(host_ports(pod), node_info.used_ports)


class NodePorts(NodeVerdictFilter):
    name = NAME
    #: Sidecars' host ports count (from v1.34); v1.33 reads containers' only.
    sidecar_ports = True

    def pre_filter(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> tuple[PreFilterResult | None, Status]:
        want = host_ports(pod) if self.sidecar_ports else container_host_ports(pod)
        if not want:
            return None, Status.skip()
        state.write(PRE_FILTER_KEY, _PreFilterState(want))
        return None, Status()

    def pre_filter_extensions(self) -> None:
        return None

    def node_verdict(self, state: CycleState, pod: Pod) -> NodeVerdict:
        """Filter: a node where one of the pod's host ports is taken is rejected (Unschedulable)."""
        want = state.get(PRE_FILTER_KEY)
        if want is None:
            return lambda node_info: Status.as_error(f'reading "{_STATE_NAME}" from cycleState: not found')
        used_ports = _used_ports if self.sidecar_ports else _container_used_ports

        def verdict(node_info: NodeInfo) -> Status | None:
            return None if fits_ports(want, used_ports(node_info)) else Status(Code.UNSCHEDULABLE, ERR_REASON)

        return verdict

    def sign_pod(self, pod: Pod) -> tuple[list[SignFragment] | None, Status]:
        """OpportunisticBatching: the verdict depends on the pod's host ports only."""
        return [SignFragment(signers.HOST_PORTS, signers.host_ports(pod))], Status()


def new(args: None, handle: Handle) -> NodePorts:
    plugin = NodePorts()
    plugin.sidecar_ports = handle.features.follows(NODE_PORTS_SIDECARS)
    return plugin
