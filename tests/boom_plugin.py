"""Boom: a test plugin with a bug where its args say, for tests/test_plugin_errors.py.

Its ``pluginConfig`` args: ``points`` (the methods that misbehave, by extension point name:
``preEnqueue``, ``queueSort``, ``preFilter``, ``addPod``, ``removePod``, ``filter``,
``postFilter``, ``preScore``, ``score``, ``normalizeScore``, ``reserve``, ``unreserve``,
``permit``, ``preBindPreFlight``, ``preBind``, ``bind``, ``postBind``), ``node`` (misbehave only
there; every node when absent) and ``how`` (``raise``: ValueError("boom"); ``none``: return
None; ``score150``: Score returns 150) and ``reject`` (``["permit"]``: Permit rejects the pod). It implements every extension
point; the configuration enables it where a test wants it.
"""

from __future__ import annotations

from typing import Any

from kschedctl.framework.status import Status

NAME = "Boom"

_STATUS_METHODS = {
    "preEnqueue": "pre_enqueue",
    "filter": "filter",
    "preScore": "pre_score",
    "reserve": "reserve",
    "preBind": "pre_bind",
    "preBindPreFlight": "pre_bind_pre_flight",
    "bind": "bind",
}


class _Extensions:
    def __init__(self, boom: Boom) -> None:
        self.boom = boom

    def add_pod(self, state: Any, pod: Any, pod_info: Any, node_info: Any) -> Status:
        return self.boom.misbehave("addPod", node_info.name, Status())

    def remove_pod(self, state: Any, pod: Any, pod_info: Any, node_info: Any) -> Status:
        return self.boom.misbehave("removePod", node_info.name, Status())

    def normalize_score(self, state: Any, pod: Any, scores: Any) -> Status:
        return self.boom.misbehave("normalizeScore", None, Status())


class Boom:
    name = NAME

    def __init__(self, args: dict[str, Any]) -> None:
        self.points: list[str] = list(args.get("points", []))
        self.node: str | None = args.get("node")
        self.how: str = args.get("how", "raise")
        self.reject: list[str] = list(args.get("reject", []))

    def misbehave(self, point: str, node: str | None, result: Any) -> Any:
        if point in self.points and (self.node is None or node is None or node == self.node):
            if self.how == "raise":
                raise ValueError("boom")
            if self.how == "none":
                return None
        return result

    def pre_enqueue(self, pod: Any) -> Status:
        return self.misbehave("preEnqueue", None, Status())

    def less(self, a: Any, b: Any) -> bool:
        return bool(self.misbehave("queueSort", None, a.name < b.name))

    def pre_filter(self, state: Any, pod: Any, nodes: Any) -> Any:
        return self.misbehave("preFilter", None, (None, Status()))

    def pre_filter_extensions(self) -> _Extensions:
        return _Extensions(self)

    def filter(self, state: Any, pod: Any, node_info: Any) -> Status:
        return self.misbehave("filter", node_info.name, Status())

    def post_filter(self, state: Any, pod: Any, filtered: Any) -> Any:
        return self.misbehave("postFilter", None, (None, Status.unschedulable("Boom cannot help")))

    def pre_score(self, state: Any, pod: Any, nodes: Any) -> Status:
        return self.misbehave("preScore", None, Status())

    def score(self, state: Any, pod: Any, node_info: Any) -> Any:
        if self.how == "score150" and "score" in self.points and self.node in (None, node_info.name):
            return 150, Status()
        return self.misbehave("score", node_info.name, (10, Status()))

    def score_extensions(self) -> _Extensions | None:
        return _Extensions(self) if "normalizeScore" in self.points else None

    def reserve(self, state: Any, pod: Any, node_name: str) -> Status:
        return self.misbehave("reserve", node_name, Status())

    def unreserve(self, state: Any, pod: Any, node_name: str) -> None:
        self.misbehave("unreserve", node_name, None)

    def permit(self, state: Any, pod: Any, node_name: str) -> Any:
        if "permit" in self.reject:
            return Status.unschedulable("Boom says no"), 0
        return self.misbehave("permit", node_name, (Status(), 0))

    def pre_bind_pre_flight(self, state: Any, pod: Any, node_name: str) -> Status:
        return self.misbehave("preBindPreFlight", node_name, Status())

    def pre_bind(self, state: Any, pod: Any, node_name: str) -> Status:
        return self.misbehave("preBind", node_name, Status())

    def bind(self, state: Any, pod: Any, node_name: str) -> Status:
        return self.misbehave("bind", node_name, Status())

    def post_bind(self, state: Any, pod: Any, node_name: str) -> Any:
        return self.misbehave("postBind", node_name, "Boom would have done something")


def new(args: dict[str, Any] | None, handle: Any) -> Boom:
    return Boom(args or {})
