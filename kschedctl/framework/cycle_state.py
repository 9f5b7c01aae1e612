"""CycleState: per-cycle data that PreFilter/PreScore plugins leave for Filter/Score.

Keys are typed (``StateKey[T]``) so a plugin reads back exactly what it wrote.
``clone()`` copies each value that knows how to clone itself, which is what
nominated-pod evaluation and preemption's what-if runs need.

Upstream model: ``k8s.io/kube-scheduler framework/cycle_state.go``.
"""

from __future__ import annotations

from typing import Any, Generic, Protocol, TypeVar, cast

T = TypeVar("T")


class StateData(Protocol):
    def clone(self) -> StateData: ...


class StateKey(Generic[T]):
    """A typed key. Two keys with the same name are still different keys."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"StateKey({self.name})"


class CycleState:
    __slots__ = ("_data", "skip_filter_plugins", "skip_score_plugins")

    def __init__(self) -> None:
        self._data: dict[StateKey[Any], Any] = {}
        self.skip_filter_plugins: set[str] = set()
        self.skip_score_plugins: set[str] = set()

    def write(self, key: StateKey[T], value: T) -> None:
        self._data[key] = value

    def read(self, key: StateKey[T]) -> T:
        """Return the value; ``KeyError`` when the PreFilter/PreScore that writes it did not run."""
        return cast(T, self._data[key])

    def get(self, key: StateKey[T]) -> T | None:
        return cast("T | None", self._data.get(key))

    def delete(self, key: StateKey[Any]) -> None:
        self._data.pop(key, None)

    def clone(self) -> CycleState:
        c = CycleState()
        for k, v in self._data.items():
            c._data[k] = v.clone() if hasattr(v, "clone") else v
        c.skip_filter_plugins = set(self.skip_filter_plugins)
        c.skip_score_plugins = set(self.skip_score_plugins)
        return c
