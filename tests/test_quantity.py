"""Quantity parsing: table cases and properties (hypothesis)."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kschedctl.kube.quantity import QuantityError, milli_value, parse_quantity, value


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1", Fraction(1)),
        ("500m", Fraction(1, 2)),
        ("7910m", Fraction(791, 100)),
        ("1Ki", Fraction(1024)),
        ("59844434Ki", Fraction(59844434 * 1024)),
        ("1.5Gi", Fraction(3 * 2**29)),
        ("1e3", Fraction(1000)),
        ("1E-3", Fraction(1, 1000)),
        ("100n", Fraction(1, 10**7)),
        ("2u", Fraction(2, 10**6)),
        ("1k", Fraction(1000)),
        ("3M", Fraction(3 * 10**6)),
        ("+5", Fraction(5)),
        ("-1", Fraction(-1)),
        (".5", Fraction(1, 2)),
        ("5.", Fraction(5)),
        (2, Fraction(2)),
        (0.5, Fraction(1, 2)),
        ("111743999999", Fraction(111743999999)),
    ],
)
def test_parse(text: object, expected: Fraction) -> None:
    assert parse_quantity(text) == expected


@pytest.mark.parametrize("bad", ["", "abc", "1_000", " 1", "1 ", "nan", "1Kb", "1ki", "1mi", "--1", "1.2.3", "Mi", True, None, [1]])
def test_rejects(bad: object) -> None:
    with pytest.raises(QuantityError):
        parse_quantity(bad)


@pytest.mark.parametrize(
    ("text", "milli", "val"),
    [("100m", 100, 1), ("1", 1000, 1), ("0.1m", 1, 1), ("1.0001", 1001, 2), ("0", 0, 0), ("1Mi", 1048576000, 1048576)],
)
def test_rounding_up(text: str, milli: int, val: int) -> None:
    q = parse_quantity(text)
    assert milli_value(q) == milli
    assert value(q) == val


@given(st.integers(min_value=0, max_value=10**15), st.sampled_from(["", "m", "k", "M", "G", "Ki", "Mi", "Gi", "Ti"]))
def test_integer_with_suffix_roundtrip(n: int, suffix: str) -> None:
    mult = {"": 1, "m": Fraction(1, 1000), "k": 1000, "M": 10**6, "G": 10**9, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40}
    exact = n * Fraction(mult[suffix])
    # ParseQuantity caps binary-SI amounts at the largest int64
    assert parse_quantity(f"{n}{suffix}") == (min(exact, 2**63 - 1) if suffix.endswith("i") else exact)


@given(st.integers(min_value=0, max_value=10**9), st.integers(min_value=0, max_value=999))
def test_decimal_millis(whole: int, frac: int) -> None:
    q = parse_quantity(f"{whole}.{frac:03d}")
    assert milli_value(q) == whole * 1000 + frac


@given(st.text(alphabet="0123456789.eEkKMGTPimnu+-_ ", max_size=8))
def test_never_crashes(text: str) -> None:
    try:
        q = parse_quantity(text)
    except QuantityError:
        return
    assert isinstance(q, Fraction)
