"""DefaultBinder: the Bind step, as a dry run.

kube-scheduler binds by POSTing a ``v1.Binding`` (the pod's namespace, name and
UID, target Node) to the pod's ``binding`` subresource. kschedctl never writes to
a cluster: Bind succeeds without side effects, and the trace shows the Binding it
would have sent, which ``binding_for`` builds for any pod and node.

Upstream model: ``pkg/scheduler/framework/plugins/defaultbinder/default_binder.go``.
"""

from __future__ import annotations

from typing import Any

from kschedctl.framework.cycle_state import CycleState
from kschedctl.framework.interfaces import Handle
from kschedctl.framework.status import Status
from kschedctl.snapshot.model import Pod

NAME = "DefaultBinder"


def binding_for(pod: Pod, node_name: str) -> dict[str, Any]:
    """The ``v1.Binding`` kube-scheduler would create for this pod and node."""
    return {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": pod.name, "namespace": pod.namespace, "uid": pod.uid},
        "target": {"kind": "Node", "name": node_name},
    }


class DefaultBinder:
    name = NAME

    def __init__(self, handle: Handle) -> None:
        self.handle = handle

    def binding_for(self, pod: Pod, node_name: str) -> dict[str, Any]:
        return binding_for(pod, node_name)

    def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        return Status()


def new(args: None, handle: Handle) -> DefaultBinder:
    return DefaultBinder(handle)
