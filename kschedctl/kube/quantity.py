"""Kubernetes resource quantities, parsed exactly.

kube-scheduler works with ``Quantity.MilliValue()`` for CPU and ``Quantity.Value()``
for everything else, both rounding *up* after summing exact values. We keep
quantities as exact ``Fraction`` values and round only where the scheduler does.

Why not ``kubernetes.utils.parse_quantity``: it accepts strings the API server
rejects (``"nan"``, ``"1_000"``, surrounding blanks), importing it costs a quarter
of a second of start-up, and only the live-cluster module may import
``kubernetes`` (see tests/test_layering.py).

Upstream model: ``k8s.io/apimachinery pkg/api/resource/quantity.go``.
"""

from __future__ import annotations

import functools
import math
import re
from fractions import Fraction

#: Amounts by resource name (``v1.ResourceList``), exact.
ResourceList = dict[str, Fraction]

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 1000),
    "": Fraction(1),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
}
_QUANTITY = re.compile(
    r"^(?P<sign>[+-]?)(?P<num>[0-9]+(?:\.[0-9]*)?|\.[0-9]+)"
    r"(?:(?P<bin>Ki|Mi|Gi|Ti|Pi|Ei)|[eE](?P<exp>[+-]?[0-9]+)|(?P<dec>[numkMGTPE]?))$"
)


_MAX_BINARY = Fraction(2**63 - 1)


class QuantityError(ValueError):
    """The text is not a Kubernetes quantity."""


def parse_quantity(value: object) -> Fraction:
    """Parse ``"500m"``, ``"1Gi"``, ``"1e3"``, ``2`` or ``0.5`` into an exact Fraction."""
    if type(value) is str:
        return _parse_text(value)
    return _parse_other(value)


def _parse_other(value: object) -> Fraction:
    if isinstance(value, bool):
        raise QuantityError(f"quantities must match the regular expression: {value!r}")
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise QuantityError(f"quantities must match the regular expression: {value!r}")
        return Fraction(repr(value)) if "e" not in repr(value) else Fraction(value)
    if not isinstance(value, str):
        raise QuantityError(f"quantities must be strings or numbers, not {type(value).__name__}")
    return _parse_text(value)


@functools.lru_cache(maxsize=8192)
def _parse_text(value: str) -> Fraction:
    """Parse one quantity string (cached: snapshots repeat the same few values)."""
    m = _QUANTITY.match(value)
    if m is None:
        raise QuantityError(f"quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$': {value!r}")
    number = Fraction(m.group("num"))
    if m.group("sign") == "-":
        number = -number
    if m.group("bin"):
        # ParseQuantity caps a binary-SI amount at the largest int64 (decimal ones are not capped).
        return min(number * _BINARY[m.group("bin")], _MAX_BINARY)
    if m.group("exp") is not None:
        exp = int(m.group("exp"))
        return number * (Fraction(10) ** exp)
    return number * _DECIMAL[m.group("dec") or ""]


def milli_value(q: Fraction) -> int:
    """``Quantity.MilliValue()``: thousandths, rounded up."""
    return math.ceil(q * 1000)


def value(q: Fraction) -> int:
    """``Quantity.Value()``: whole units, rounded up."""
    return math.ceil(q)


def format_quantity(q: Fraction, resource: str = "") -> str:
    """A short human form: millicores for cpu, binary units for memory-like values."""
    if resource == "cpu":
        m = milli_value(q)
        return f"{m // 1000}" if m % 1000 == 0 else f"{m}m"
    v = value(q)
    for suffix, base in (("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10)):
        if v and v % base == 0:
            return f"{v // base}{suffix}"
    return str(v)
