"""The fast YAML loader gives exactly what PyYAML's safe loader (timestamps as strings) gives.

Differential tests: random objects dumped in random styles, random YAML-looking text, and a
table of the constructs the fast path hands back to PyYAML (anchors, merge keys, tags).
"""

from __future__ import annotations

import math
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from kschedctl.snapshot import yamldocs
from tests.yaml_objects import YAMLISH, objects


def same(a: Any, b: Any) -> bool:
    """Equal with the same types all the way down (True is not 1, NaN equals NaN)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return (math.isnan(a) and math.isnan(b)) or a == b
    if isinstance(a, dict):
        return len(a) == len(b) and all(same(k1, k2) and same(v1, v2) for (k1, v1), (k2, v2) in zip(a.items(), b.items(), strict=True))
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def outcome(text: str, fast: bool) -> tuple[str, Any]:
    """The documents and the duplicate keys noted, or the error."""
    loader = (yamldocs.FastLoader if fast else yamldocs.ReferenceLoader)(text)
    loader.duplicates = []
    try:
        docs = []
        while loader.check_data():
            docs.append((loader.get_data(), list(loader.duplicates)))
        return "ok", docs
    except yaml.YAMLError as e:
        return "error", f"{type(e).__name__}: {e}"
    finally:
        loader.dispose()


def assert_same_outcome(text: str) -> None:
    kind_f, fast = outcome(text, True)
    kind_r, ref = outcome(text, False)
    assert kind_f == kind_r, (text, fast, ref)
    if kind_f == "ok":
        assert same(fast, ref), (text, fast, ref)
    else:
        assert fast == ref


#: Texts whose YAML 1.1 implicit type is easy to get wrong.


@settings(max_examples=300, deadline=None)
@given(
    st.lists(objects, min_size=1, max_size=3),
    st.sampled_from([None, True, False]),
    st.sampled_from([None, "'", '"']),
)
def test_dumped_objects_load_the_same(docs: list[Any], flow: bool | None, style: str | None) -> None:
    text = yaml.safe_dump_all(docs, default_flow_style=flow, default_style=style, allow_unicode=True)
    assert_same_outcome(text)


DUPLICATES = st.lists(st.sampled_from(["a: 1\n", "a: 2\n", "b:\n  c: 1\n  c: 2\n", "d: {e: 1, e: 1}\n", "---\n"]), max_size=8)


@settings(max_examples=500, deadline=None)
@given(YAMLISH)
def test_random_text_loads_or_fails_the_same(text: str) -> None:
    assert_same_outcome(text)


@settings(max_examples=200, deadline=None)
@given(DUPLICATES)
def test_duplicate_keys_are_noted_the_same(parts: list[str]) -> None:
    assert_same_outcome("".join(parts))


@pytest.mark.parametrize(
    "text",
    [
        "a: &x [1, 2]\nb: *x\n",  # alias: shared object
        "base: &b {cpu: 1}\nmerged: {<<: *b, mem: 2}\n",  # merge key
        "x: {<<: [{a: 1}, {b: 2}], c: 3}\n",
        "=: equals\n",  # the '=' value key
        "? [a, b]\n: c\n",  # unhashable key: PyYAML's error
        "? {a: 1}\n: c\n",
        "bin: !!binary aGVsbG8=\n",
        "set: !!set {a, b}\n",
        "omap: !!omap [a: 1, b: 2]\n",
        "pairs: !!pairs [a: 1, a: 2]\n",
        "s: !!str 123\ni: !!int '7'\nf: !!float '1.5'\n",
        "ts: !!timestamp 2001-12-14\n",
        "t: 2001-12-14\n",
        "u: !unknown x\n",  # no constructor: error
        "dup: 1\ndup: 2\n",
        "a: {x: 1, x: 2}\nb: [{y: 1, y: 2}]\nb: 3\n",  # duplicates at two depths: PyYAML's order
        "a: {<<: {x: 1}, x: 2, x: 3}\n",
        "---\na: 1\n---\n---\nb: [x, {c: d}]\n...\n",
        "url: http://x/?a=b&c=d\nname: this & that\n",  # '&' that starts no anchor
        "a: &anchor\n  k: v\nb: *anchor\n",
        "key with spaces: value\n'quoted': \"double\"\n",
        "multi: |\n  line1\n  line2\nfolded: >\n  a\n  b\n",
    ],
)
def test_fallback_constructs_match_pyyaml(text: str) -> None:
    assert_same_outcome(text)


def test_recursive_nodes_come_out_as_pyyaml_makes_them() -> None:
    fast = yamldocs.load_all("r: &r [*r]\n")[0]["r"]
    assert fast[0] is fast


def test_aliases_share_one_object_as_pyyaml_does() -> None:
    doc = yamldocs.load_all("a: &x [1]\nb: *x\n")[0]
    assert doc["a"] is doc["b"]


def test_repeated_strings_are_one_object() -> None:
    docs = yamldocs.load_all("a: running\nb: running\n---\nc: running\n")
    assert docs[0]["a"] is docs[0]["b"] is docs[1]["c"]
