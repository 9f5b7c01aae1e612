"""``render.data.to_json`` writes what ``json.dumps(data, indent=2, default=str)`` writes, character for character."""

from __future__ import annotations

import json
from enum import IntEnum, StrEnum
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kschedctl.render.data import to_json


class Opaque:
    def __str__(self) -> str:
        return "opaque ✓"


class Kind(StrEnum):
    A = "a"


class Level(IntEnum):
    HIGH = 3


scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True, allow_infinity=True), st.text(),
    st.just(Opaque()), st.sampled_from([Kind.A, Level.HIGH]),
)
keys = st.one_of(st.text(), st.integers(), st.floats(), st.booleans(), st.none(), st.just(Kind.A))
values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.tuples(inner, inner), st.dictionaries(keys, inner, max_size=4)),
    max_leaves=30,
)


@settings(max_examples=500, deadline=None)
@given(values)
def test_the_same_text_as_json_dumps(data: Any) -> None:
    assert to_json(data) == json.dumps(data, indent=2, sort_keys=False, default=str)


def test_a_trace_of_the_demo() -> None:
    from kschedctl.config import default_config
    from kschedctl.explain.cycle import explain_pod
    from kschedctl.snapshot.loader import load_cluster

    cluster = load_cluster([str(Path(__file__).parent.parent / "fixtures" / "demo" / "cluster.yaml")])
    pod = cluster.pod("shop", "web-7d9f-pending")
    assert pod is not None
    data = explain_pod(cluster, pod, default_config(), details=True).to_dict()
    assert to_json(data) == json.dumps(data, indent=2, sort_keys=False, default=str)


def test_what_json_refuses_is_refused() -> None:
    loop: list[Any] = []
    loop.append(loop)
    with pytest.raises(ValueError, match="Circular reference detected"):
        to_json(loop)
    with pytest.raises(TypeError, match="keys must be str, int, float, bool or None, not tuple"):
        to_json({(1, 2): 3})
