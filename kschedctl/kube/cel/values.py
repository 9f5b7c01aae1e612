"""The values CEL expressions compute with, beyond Python's own: uint, quantity, semver, DRA's maps.

A CEL ``int`` is a Python int, a ``double`` a float, a ``string`` a str, ``bytes`` bytes, a list a
list and a map a dict; this module adds the types Python lacks (:class:`Uint`, the Kubernetes
:class:`Quantity` and :class:`Semver`, the :class:`DefaultingMap` of device attributes and
capacities), cel-go's names of all of them (for error texts) and the 64-bit range checks. The
parser (literals), the operators, the function library and the ``device`` variable all build
these values, so they live apart from each of them.
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Any

from kschedctl.kube.cel.errors import CelError

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
UINT64_MAX = 2**64 - 1


class Uint(int):
    """A CEL ``uint`` (Python ints are CEL ``int``)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"{int(self)}u"


class Quantity:
    """A Kubernetes ``resource.Quantity`` as the CEL quantity library sees it (exact value)."""

    __slots__ = ("value",)

    def __init__(self, value: Fraction) -> None:
        self.value = value

    def __repr__(self) -> str:
        return f"Quantity({self.value})"


_SEMVER_NUM = r"(?:0|[1-9][0-9]*)"
_SEMVER_ID = r"(?:[0-9A-Za-z-]+)"
_SEMVER_RE = re.compile(
    rf"^({_SEMVER_NUM})\.({_SEMVER_NUM})\.({_SEMVER_NUM})"
    rf"(?:-({_SEMVER_ID}(?:\.{_SEMVER_ID})*))?(?:\+({_SEMVER_ID}(?:\.{_SEMVER_ID})*))?$"
)


class Semver:
    """A semantic version (blang/semver rules: pre-release ordering, build metadata ignored)."""

    __slots__ = ("build", "major", "minor", "patch", "pre")

    def __init__(self, major: int, minor: int, patch: int, pre: tuple[str, ...] = (), build: tuple[str, ...] = ()) -> None:
        self.major = major
        self.minor = minor
        self.patch = patch
        self.pre = pre
        self.build = build

    @classmethod
    def parse(cls, text: str) -> Semver:
        m = _SEMVER_RE.match(text)
        if m is None:
            raise ValueError(f"invalid semantic version {text!r}")
        pre = tuple(m.group(4).split(".")) if m.group(4) else ()
        for p in pre:
            if p.isdigit() and len(p) > 1 and p.startswith("0"):
                raise ValueError(f"Numeric PreRelease version must not contain leading zeroes {p!r}")
        build = tuple(m.group(5).split(".")) if m.group(5) else ()
        return cls(int(m.group(1)), int(m.group(2)), int(m.group(3)), pre, build)

    def compare(self, other: Semver) -> int:
        a = (self.major, self.minor, self.patch)
        b = (other.major, other.minor, other.patch)
        if a != b:
            return -1 if a < b else 1
        if not self.pre and not other.pre:
            return 0
        if not self.pre:
            return 1
        if not other.pre:
            return -1
        for x, y in zip(self.pre, other.pre, strict=False):
            if x == y:
                continue
            xn, yn = x.isdigit(), y.isdigit()
            if xn and yn:
                return -1 if int(x) < int(y) else 1
            if xn:
                return -1
            if yn:
                return 1
            return -1 if x < y else 1
        if len(self.pre) == len(other.pre):
            return 0
        return -1 if len(self.pre) < len(other.pre) else 1

    def __repr__(self) -> str:
        s = f"{self.major}.{self.minor}.{self.patch}"
        if self.pre:
            s += "-" + ".".join(self.pre)
        return f"Semver({s})"


class DefaultingMap(dict):
    """A map whose lookups of unknown keys yield an empty map (DRA's attribute/capacity maps).

    Presence tests through ``has()`` therefore always succeed, while ``in`` and
    ``size()`` see the real keys, as with the Kubernetes implementation.
    """

    __slots__ = ()


EMPTY: dict[Any, Any] = {}


def type_name(v: Any) -> str:
    """cel-go's name of a value's type (used in error texts)."""
    if v is None:
        return "null_type"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, Uint):
        return "uint"
    if isinstance(v, int):
        return "int"
    if isinstance(v, float):
        return "double"
    if isinstance(v, str):
        return "string"
    if isinstance(v, bytes):
        return "bytes"
    if isinstance(v, list):
        return "list"
    if isinstance(v, dict):
        return "map"
    if isinstance(v, Quantity):
        return "kubernetes.Quantity"
    if isinstance(v, Semver):
        return "kubernetes.Semver"
    return type(v).__name__


def is_num(v: Any) -> bool:
    """A CEL number: int, uint or double (bools are not numbers)."""
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def check_int(v: int) -> int:
    """An int result, or the overflow error outside the 64-bit range."""
    if v < INT64_MIN or v > INT64_MAX:
        raise CelError("integer overflow")
    return v


def check_uint(v: int) -> Uint:
    """A uint result, or the overflow error outside the unsigned 64-bit range."""
    if v < 0 or v > UINT64_MAX:
        raise CelError("unsigned integer overflow")
    return Uint(v)
