"""PrioritySort: higher priority first, then the earlier creationTimestamp (standing in for queue time)."""

from __future__ import annotations

import pytest

from kschedctl.framework.interfaces import extension_points_of
from kschedctl.plugins import queuesort as qs
from tests.builders import FakeHandle, PodBuilder, make_pod

T0 = "2024-05-01T10:00:00Z"
T1 = "2024-05-01T10:00:01Z"


@pytest.mark.parametrize(
    ("a", "b", "want"),
    [
        pytest.param(make_pod("a").priority(10), make_pod("b").priority(5), True, id="higher-priority-first"),
        pytest.param(make_pod("a").priority(5), make_pod("b").priority(10), False, id="lower-priority-later"),
        pytest.param(make_pod("a").created(T1).priority(10), make_pod("b").created(T0), True, id="priority-beats-time"),
        pytest.param(make_pod("a").created(T0), make_pod("b").created(T1), True, id="equal-priority-earlier-first"),
        pytest.param(make_pod("a").created(T1), make_pod("b").created(T0), False, id="equal-priority-later"),
        pytest.param(make_pod("a").created(T0), make_pod("b").created(T0), False, id="full-tie-not-less"),
        # A nil priority is 0; a negative priority sorts after it.
        pytest.param(make_pod("a"), make_pod("b").priority(-1), True, id="nil-priority-is-zero"),
        # No creationTimestamp: the zero time, earlier than any real one.
        pytest.param(make_pod("a"), make_pod("b").created(T0), True, id="missing-timestamp-earliest"),
        pytest.param(
            make_pod("a").created("2024-05-01T12:00:00+02:00"), make_pod("b").created("2024-05-01T10:30:00Z"), True,
            id="timezone-offsets-compared-as-instants",
        ),
    ],
)
def test_less(a: PodBuilder, b: PodBuilder, want: bool) -> None:
    assert qs.new(None, FakeHandle()).less(a.build(), b.build()) is want


def test_only_queue_sort() -> None:
    pl = qs.new(None, FakeHandle())
    assert pl.name == "PrioritySort"
    assert extension_points_of(pl) == ["queueSort"]
