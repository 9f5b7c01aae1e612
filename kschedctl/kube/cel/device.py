"""The ``device`` variable of a DRA selector, built from a ResourceSlice device's attributes and capacity.

Selectors see a device as ``driver``, ``attributes`` and ``capacity``, the latter two keyed by the
qualified name's domain and then its identifier, and yielding an empty map for a domain the
device lacks. The DynamicResources plugin converts a slice's devices into this shape once and
evaluates every selector against it; capacity quantities are only converted when an expression
reads them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import Any

from kschedctl.kube.cel.values import DefaultingMap, Quantity


class _DeviceFields(dict):
    """The ``device`` variable; ``capacity`` is built on first use (quantities are costly to parse)."""

    __slots__ = ("_capacity",)

    def __init__(self, values: dict[str, Any], capacity: Callable[[], DefaultingMap]) -> None:
        super().__init__(values)
        self._capacity = capacity

    def __missing__(self, key: str) -> Any:
        if key != "capacity":
            raise KeyError(key)
        v = self._capacity()
        self[key] = v
        return v


def device_value(
    driver: str,
    attributes: Mapping[str, Any],
    capacity: Mapping[str, Fraction] | Callable[[], Mapping[str, Fraction]],
) -> dict[str, Any]:
    """The ``device`` variable: attribute and capacity names split into domain and id.

    ``attributes`` maps qualified names to already converted values (int, bool,
    str or :class:`Semver`); a name without a domain gets the driver's domain.
    ``capacity`` maps qualified names to exact quantities, or is a function
    returning that map when an expression first reads ``device.capacity``.
    """
    attrs: DefaultingMap = DefaultingMap()
    for name, value in attributes.items():
        domain, ident = split_qualified_name(name, driver)
        attrs.setdefault(domain, {})[ident] = value

    def caps() -> DefaultingMap:
        out: DefaultingMap = DefaultingMap()
        for name, q in (capacity() if callable(capacity) else capacity).items():
            domain, ident = split_qualified_name(name, driver)
            out.setdefault(domain, {})[ident] = Quantity(q)
        return out

    return _DeviceFields({"driver": driver, "attributes": attrs}, caps)


def split_qualified_name(name: str, default_domain: str) -> tuple[str, str]:
    """A qualified attribute or capacity name as (domain, identifier); no domain means ``default_domain``."""
    sep = name.find("/")
    if sep < 0:
        return default_domain, name
    return name[:sep], name[sep + 1 :]
