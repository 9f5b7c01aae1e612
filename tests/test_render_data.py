"""``render.data.to_json`` writes what ``json.dumps(data, indent=2, default=str)`` writes, character for character,
by either of its ways (orjson for plain results, the pure-Python pass for the rest)."""

from __future__ import annotations

import json
from enum import IntEnum, StrEnum
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kschedctl.render import data as render_data
from kschedctl.render.data import _orjson_text, _python_text, to_json


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


plain_scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.text(), st.floats())
plain_values = st.recursive(
    plain_scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.tuples(inner, inner), st.dictionaries(st.text(), inner, max_size=4)),
    max_leaves=30,
)


@settings(max_examples=500, deadline=None)
@given(values)
def test_the_same_text_as_json_dumps(data: Any) -> None:
    expected = json.dumps(data, indent=2, sort_keys=False, default=str)
    assert to_json(data) == expected
    assert _python_text(data) == expected


@settings(max_examples=500, deadline=None)
@given(plain_values)
def test_plain_results_the_same_text_both_ways(data: Any) -> None:
    """Strings (any character), integers (any size), floats (any), booleans, None, lists, tuples and dicts: orjson's text
    when it gives one, the pure-Python pass's otherwise, both json's."""
    expected = json.dumps(data, indent=2, sort_keys=False, default=str)
    fast = _orjson_text(data)
    assert fast is None or fast == expected
    assert _python_text(data) == expected


@pytest.mark.parametrize(
    ("data", "by_orjson"),
    [
        ({"a": [1, True, None, "x\n\u0001\"\\/"], "b": {}, "c": [], "d": ({"e": -5},)}, True),
        ({"a": "caf\u00e9"}, False),  # non-ASCII: json escapes it, orjson does not
        (["\x7f"], False),  # DEL: likewise
        ([1.5, -0.0, 0.0001, 1e16, 1.7976931348623157e308, 0.30000000000000004], True),
        ([1e-05], False),  # floats below 1e-4: json's own text (1e-05, 1e-07)
        ([-2.5e-07], False),
        ([float("nan")], False),  # NaN and infinities: json's names, orjson's null
        ([float("-inf")], False),
        ([2**64], False),  # beyond orjson's integers
        ({1: "a"}, False),  # keys json turns into strings
        ([Kind.A], False),  # subclasses of str and int
        ([Level.HIGH], False),
        ([Opaque()], False),  # default=str
    ],
)
def test_which_results_orjson_writes(data: Any, by_orjson: bool) -> None:
    expected = json.dumps(data, indent=2, sort_keys=False, default=str)
    assert (_orjson_text(data) is not None) == by_orjson
    assert to_json(data) == expected


def test_deep_nesting_is_left_to_the_python_pass() -> None:
    deep: Any = []
    for _ in range(400):
        deep = [deep]
    assert _orjson_text(deep) is None
    assert to_json(deep) == json.dumps(deep, indent=2)


@pytest.mark.parametrize("data", [{"a": [1, {"b": None}]}, {"a": [1e-05, "caf\u00e9"]}, "text"])
def test_write_json_prints_to_json(data: Any, capsys: pytest.CaptureFixture[str]) -> None:
    render_data.write_json(data)
    assert capsys.readouterr().out == json.dumps(data, indent=2, default=str) + "\n"


def test_a_trace_of_the_demo() -> None:
    from kschedctl.config import default_config
    from kschedctl.explain.cycle import explain_pod
    from kschedctl.snapshot.loader import load_cluster

    cluster = load_cluster([str(Path(__file__).parent.parent / "fixtures" / "demo" / "cluster.yaml")])
    pod = cluster.pod("shop", "web-7d9f-pending")
    assert pod is not None
    data = explain_pod(cluster, pod, default_config(), details=True).to_dict()
    assert to_json(data) == json.dumps(data, indent=2, sort_keys=False, default=str)
    assert _orjson_text(data) is not None  # a trace is plain: written by orjson


def test_what_json_refuses_is_refused() -> None:
    loop: list[Any] = []
    loop.append(loop)
    with pytest.raises(ValueError, match="Circular reference detected"):
        to_json(loop)
    with pytest.raises(TypeError, match="keys must be str, int, float, bool or None, not tuple"):
        to_json({(1, 2): 3})


def test_write_json_writes_orjsons_text_a_slice_at_a_time(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(render_data, "_SLICE", 7)
    data = {"nodes": {f"n{i}": {"code": "Success", "score": i} for i in range(20)}}
    render_data.write_json(data)
    assert capsys.readouterr().out == json.dumps(data, indent=2) + "\n"
