"""Label selectors: semantics table and properties (hypothesis) of the parsers."""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kschedctl.errors import InputError
from kschedctl.kube.selectors import (
    EVERYTHING,
    NOTHING,
    Requirement,
    Selector,
    parse_label_selector,
    parse_selector_string,
)


@pytest.mark.parametrize(
    ("raw", "labels", "matches"),
    [
        (None, {"a": "1"}, False),  # a nil selector selects nothing
        ({}, {"a": "1"}, True),  # an empty one selects everything
        ({"matchLabels": {"a": "1"}}, {"a": "1", "b": "2"}, True),
        ({"matchLabels": {"a": "1"}}, {"a": "2"}, False),
        ({"matchExpressions": [{"key": "a", "operator": "NotIn", "values": ["1"]}]}, {}, True),
        ({"matchExpressions": [{"key": "a", "operator": "DoesNotExist"}]}, {"b": "1"}, True),
        ({"matchExpressions": [{"key": "a", "operator": "Exists"}]}, {"a": ""}, True),
        ({"matchExpressions": [{"key": "a", "operator": "In", "values": ["1", "2"]}]}, {"a": "2"}, True),
    ],
)
def test_label_selector_semantics(raw: object, labels: dict[str, str], matches: bool) -> None:
    assert parse_label_selector(raw).matches(labels) is matches


@pytest.mark.parametrize(
    "raw",
    [
        {"matchExpressions": [{"key": "a", "operator": "In", "values": []}]},
        {"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]},
        {"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["1"]}]},
        {"matchLabels": ["a"]},
    ],
)
def test_invalid_label_selectors(raw: object) -> None:
    with pytest.raises(InputError):
        parse_label_selector(raw)


KEYS = st.sampled_from(["app", "tier", "example.com/team", "k8s.io/zone"])
VALUES = st.sampled_from(["a", "b", "web", "x-1", "v1.2"])
REQUIREMENTS = st.one_of(
    st.builds(lambda k, v: Requirement(k, "In", (v,)), KEYS, VALUES),
    st.builds(lambda k, v: Requirement(k, "NotIn", (v,)), KEYS, VALUES),
    st.builds(lambda k, vs: Requirement(k, "In", tuple(sorted(set(vs)))), KEYS, st.lists(VALUES, min_size=2, max_size=3)),
    st.builds(lambda k, vs: Requirement(k, "NotIn", tuple(sorted(set(vs)))), KEYS, st.lists(VALUES, min_size=2, max_size=3)),
    st.builds(lambda k: Requirement(k, "Exists"), KEYS),
    st.builds(lambda k: Requirement(k, "DoesNotExist"), KEYS),
)
LABELS = st.dictionaries(KEYS, VALUES, max_size=4)


@given(st.lists(REQUIREMENTS, min_size=1, max_size=4), st.lists(LABELS, min_size=1, max_size=5))
def test_selector_string_roundtrip(reqs: list[Requirement], label_sets: list[dict[str, str]]) -> None:
    """Printing a selector kubectl-style and parsing it back selects exactly the same label sets."""
    sel = Selector(tuple(reqs))
    parsed = parse_selector_string(str(sel))
    for labels in label_sets:
        assert parsed.matches(labels) == sel.matches(labels)


@given(st.dictionaries(KEYS, VALUES, max_size=4), LABELS)
def test_match_labels_is_subset_test(match_labels: dict[str, str], labels: dict[str, str]) -> None:
    sel = parse_label_selector({"matchLabels": match_labels})
    assert sel.matches(labels) == all(labels.get(k) == v for k, v in match_labels.items())


@given(LABELS)
def test_everything_and_nothing(labels: dict[str, str]) -> None:
    assert EVERYTHING.matches(labels) and not NOTHING.matches(labels)


@given(st.text(alphabet="ab=!,() in", max_size=12))
def test_selector_string_never_crashes(text: str) -> None:
    with contextlib.suppress(InputError):
        parse_selector_string(text)
