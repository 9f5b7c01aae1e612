"""Plugin outcomes as values: ``Code`` and ``Status``, like kube-scheduler's ``fwk.Status``; the
``PluginStatus`` records the runtime keeps of them for the trace, and how the runtime's messages
quote the names in them (``quote_name``).

Upstream model: ``k8s.io/kube-scheduler framework/interface.go (Code, Status)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import Any


class Code(IntEnum):
    SUCCESS = 0
    ERROR = 1
    UNSCHEDULABLE = 2
    UNSCHEDULABLE_AND_UNRESOLVABLE = 3
    WAIT = 4
    SKIP = 5
    PENDING = 6

    @property
    def label(self) -> str:
        return _LABELS[self]


_LABELS = {
    Code.SUCCESS: "Success",
    Code.ERROR: "Error",
    Code.UNSCHEDULABLE: "Unschedulable",
    Code.UNSCHEDULABLE_AND_UNRESOLVABLE: "UnschedulableAndUnresolvable",
    Code.WAIT: "Wait",
    Code.SKIP: "Skip",
    Code.PENDING: "Pending",
}


#: The codes of a rejection (``Status.is_rejected``), for loops over thousands of statuses.
REJECTED_CODES = frozenset({Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.PENDING})


class Status:
    """The result of running one plugin. ``None`` is never used: success is ``Status()``."""

    __slots__ = ("code", "error", "plugin", "reasons")

    def __init__(self, code: Code = Code.SUCCESS, *reasons: str, plugin: str = "", error: str | None = None) -> None:
        self.code = code
        self.reasons: list[str] = list(reasons)
        self.plugin = plugin
        self.error = error

    # constructors ---------------------------------------------------------------
    @classmethod
    def success(cls) -> Status:
        return cls(Code.SUCCESS)

    @classmethod
    def skip(cls) -> Status:
        return cls(Code.SKIP)

    @classmethod
    def unschedulable(cls, *reasons: str) -> Status:
        return cls(Code.UNSCHEDULABLE, *reasons)

    @classmethod
    def unresolvable(cls, *reasons: str) -> Status:
        return cls(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, *reasons)

    @classmethod
    def as_error(cls, message: str) -> Status:
        return cls(Code.ERROR, message, error=message)

    # predicates -----------------------------------------------------------------
    def is_success(self) -> bool:
        return self.code == Code.SUCCESS

    def is_skip(self) -> bool:
        return self.code == Code.SKIP

    def is_wait(self) -> bool:
        return self.code == Code.WAIT

    def is_rejected(self) -> bool:
        return self.code in REJECTED_CODES

    def message(self) -> str:
        return ", ".join(self.reasons)

    def with_plugin(self, plugin: str) -> Status:
        self.plugin = plugin
        return self

    def to_dict(self) -> dict[str, object]:
        return {"code": self.code.label, "reasons": list(self.reasons)}

    def __repr__(self) -> str:
        extra = f" {self.reasons}" if self.reasons else ""
        who = f" [{self.plugin}]" if self.plugin else ""
        return f"Status({self.code.label}{extra}{who})"


@dataclass(slots=True)
class PluginStatus:
    """One plugin's status at one extension point, for the trace."""

    plugin: str
    status: Status

    def to_dict(self) -> dict[str, Any]:
        return {"plugin": self.plugin, "code": self.status.code.label, "reasons": list(self.status.reasons)}


def quote_name(name: str) -> str:
    """A plain name (a plugin's, a pod's, a profile's) in double quotes, as Go's ``%q`` prints it in the
    runtime's messages; such names need no escaping, so none is done."""
    return f'"{name}"'


MAX_NODE_SCORE = 100
MIN_NODE_SCORE = 0
MAX_TOTAL_SCORE = 2**63 - 1
