"""A snapshot's items read a line at a time (``snapshot/jsonlines.py``) are the items the whole text decodes
to, whatever the lines hold; a text that is not one item a line is read whole, from where the lines stopped."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kschedctl.errors import InputError
from kschedctl.kube.versions import resolve_features
from kschedctl.snapshot import jsonlines, loader
from kschedctl.snapshot.apiversions import candidate_gates
from kschedctl.snapshot.source import RESOURCES, FileSource
from kschedctl.snapshot.writer import SnapshotWriter
from tests.builders import make_node, make_pod

HEAD = '# a header\n{"apiVersion": "v1", "kind": "List", "metadata": {}, "items": ['


def layout(items: list[Any], head: str = HEAD) -> str:
    """The text the snapshot writer lays out: one item a line, commas between, ``]}`` on the last line."""
    body = ",\n".join(json.dumps(i, separators=(",", ":"), ensure_ascii=False) for i in items)
    return head + ("\n" + body if items else "") + "\n]}\n"


def streamed(text: str) -> list[Any] | None:
    """The items as ``listed_items`` gives them (None: not such a List), the whole text read by ``json``
    when it hands over."""
    start = text.index("{")
    found = jsonlines.listed_items(text, start, lambda: json.loads(text[start:])["items"])
    if found is None:
        return None
    items = list(found[1])
    for value, line in items:  # a line given with its item is one orjson reads as that item
        assert line is None or repr(orjson.loads(line)) == repr(value)
    return [value for value, _ in items]


def whole(text: str) -> list[Any]:
    return list(json.loads(text[text.index("{") :])["items"])


_scalars = st.none() | st.booleans() | st.integers(-(2**80), 2**80) | st.floats(allow_nan=False) | st.text(max_size=8)
_values = st.recursive(_scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3), max_leaves=12)
_items = st.lists(st.dictionaries(st.text(max_size=6), _values, max_size=4), max_size=6)


@given(_items)
def test_the_lines_give_the_items_json_gives(items: list[dict[str, Any]]) -> None:
    text = layout(items)
    assert streamed(text) == whole(text) == items


@pytest.mark.parametrize(
    "line, why",
    [
        ('{"big":1180591620717411303425}', "an integer beyond 64 bits: json reads it"),
        ('{"low":-9223372036854775809,"high":18446744073709551617}', "just beyond 64 bits, signed and not"),
        ('{"long":"12345678901234567890123"}', "a long run of digits in a string"),
        ('{"inf":1e400}', "a float beyond a double"),
        ('{"nan":NaN,"inf":-Infinity}', "json's literals"),
        ('{"s":"\\ud800 lone"}', "a lone surrogate"),
        ('{"a":1,"a":2}', "a key set twice: the last wins, as json"),
        ('  {"spaced" : [ 1 , 2 ] }  ', "spaces around"),
    ],
)
def test_lines_orjson_refuses_are_read_by_json(line: str, why: str) -> None:
    text = HEAD + '\n{"first":1},\n' + line + ',\n{"last":[]}\n]}\n'
    assert repr(streamed(text)) == repr(whole(text)), why


@pytest.mark.parametrize(
    "text",
    [
        HEAD + '\n{"a":1},\n{\n  "b": 2\n},\n{"c":3}\n]}\n',  # an item over several lines, after one that is not
        HEAD + '\n{"a":1},\n\n{"b":2}\n]}\n',  # an empty line
        HEAD + '\n{"a":1}\n,{"b":2}\n]}\n',  # the comma at the next line's start
        HEAD + '\n{"a":1},\n{"b":2}\n]\n}\n',  # the end over two lines
        HEAD + '\n{"a":1},\n[1, 2],\n{"b":2}\n]}\n',  # an item that is not an object
        HEAD + '\n{"a":1},\n{"b":2}]}\n',  # the end on the last item's line
    ],
)
def test_a_text_not_one_item_a_line_is_read_whole_from_there(text: str) -> None:
    assert streamed(text) == whole(text)


@pytest.mark.parametrize(
    "text",
    [
        '{"apiVersion": "v1", "kind": "List", "items": [{"a":1}]}',  # items on the List's line
        '{"apiVersion": "v1", "kind": "Pod", "metadata": {}, "items": [\n{"a":1}\n]}',  # not a List
        '{"kind": "List", "metadata": {"x": }, "items": [\n{"a":1}\n]}',  # a head that is not JSON
        '{"kind": "List"}\n',  # no items
    ],
)
def test_a_text_that_does_not_start_as_such_a_list_is_not_read_by_lines(text: str) -> None:
    assert streamed(text) is None


def test_an_empty_list() -> None:
    assert streamed(layout([])) == [] == whole(layout([]))


def documents(text: str, monkeypatch: pytest.MonkeyPatch, *, lines: bool) -> list[loader.Document]:
    monkeypatch.setattr(loader, "_trusted", lambda key, text, data=None: True)
    if not lines:
        monkeypatch.setattr(loader, "_streamed", lambda *_, **__: None)
    docs = list(loader.parse_documents("f.yaml", text))
    for d in docs:  # the text a document carries reads as its object
        assert d.text is None or orjson.loads(d.text) == d.obj
    return docs


@pytest.mark.parametrize(
    "head, items",
    [
        (HEAD, [make_node("n1").raw, make_pod("p").node("n1").raw]),
        ('{"apiVersion": "v1", "kind": "PodList", "metadata": {}, "items": [', [{"metadata": {"name": "no-kind"}}]),
        (HEAD, [{"kind": "List", "items": [make_node("inner").raw, {"kind": "List", "items": []}]}, make_node("n2").raw]),
    ],
)
def test_the_loader_gives_the_same_documents_read_by_lines_or_whole(
    head: str, items: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    text = layout(items, head)
    with monkeypatch.context() as m:
        by_lines = documents(text, m, lines=True)
    with monkeypatch.context() as m:
        read_whole = documents(text, m, lines=False)
    assert [dataclasses.replace(d, text=None) for d in by_lines] == read_whole and by_lines


@pytest.mark.parametrize("item, message", [("7", "items[1] must be a Kubernetes object")])
def test_an_item_that_is_no_object_is_the_same_error(item: str, message: str, monkeypatch: pytest.MonkeyPatch) -> None:
    text = HEAD + '\n{"kind":"Node","metadata":{"name":"a"}},\n' + item + "\n]}\n"
    errors = []
    for lines in (True, False):
        with monkeypatch.context() as m, pytest.raises(InputError) as e:
            documents(text, m, lines=lines)
        errors.append(str(e.value))
    assert errors[0] == errors[1] and message in errors[0]


def test_a_signed_snapshots_documents_are_not_kept_between_the_look_and_the_load(tmp_path: Path) -> None:
    """The look at which gates a signed snapshot shows reads it by lines and keeps nothing; a YAML file's
    documents are kept for the load, as read once."""
    signed = tmp_path / "s.yaml"
    with SnapshotWriter(str(signed), header=["h"], server_version=None, as_json=False) as w:
        for res in RESOURCES:
            if res.kind == "Node":
                w.take(res, [[make_node("n1").raw]])
    plain = tmp_path / "p.yaml"
    plain.write_text("apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n", encoding="utf-8")
    assert loader.streamable([str(signed)]) and not loader.streamable([str(plain)])
    assert not loader.streamable([str(signed), str(plain)])
    features = loader.DEFAULT_FEATURES
    assert candidate_gates(features)  # (else nothing is looked at)
    for path, kept in ((signed, False), (plain, True)):
        source = FileSource([str(path)])
        assert source.shown_gates(features) == {}
        assert (source._read is not None) == kept
        assert [n.name for n in source.load(features=features).nodes] == ["n1"]


def _signed(path: Path, *objects: dict[str, Any]) -> str:
    """A signed snapshot file of ``objects`` (Nodes and Pods), as ``kschedctl snapshot`` writes it."""
    with SnapshotWriter(str(path), header=["h"], server_version=None, as_json=False) as w:
        for res in RESOURCES:
            if res.kind in ("Node", "Pod"):
                w.take(res, [[o for o in objects if o["kind"] == res.kind]])
    return str(path)


def test_the_cluster_built_as_a_signed_snapshot_is_looked_at_is_the_one_loaded(tmp_path: Path) -> None:
    """One reading of a signed snapshot both shows the gates and builds the Cluster (its notes told at the
    load); a load with other gates builds its own."""
    pod = make_pod("p").node("n1").raw
    path = _signed(tmp_path / "s.yaml", make_node("n1").raw, pod, {**pod, "metadata": {**pod["metadata"], "name": "q"},
                                                                   "status": {"phase": "Succeeded"}})
    features = loader.DEFAULT_FEATURES
    source = FileSource([path])
    assert source.shown_gates(features) == {}
    built = source._built
    assert built is not None and built[0] == features
    notes: list[str] = []
    assert source.load(features=features, warn=notes.append) is built[1] and source._built is None
    assert notes == built[2] == built[1].notes
    other = resolve_features(features.minor, {next(iter(candidate_gates(features))): True})
    source = FileSource([path])
    source.shown_gates(features)
    again = source.load(features=other)
    assert source._built is None and again is not built[1] and [p.name for p in again.pods] == ["p"]


def test_a_signed_snapshots_pods_keep_their_line_and_read_back_as_written(tmp_path: Path) -> None:
    """A bound pod of a signed snapshot keeps its line instead of a packed copy of its manifest, and its
    manifest reads back as written, long numbers too (a line orjson may misread keeps a packed copy)."""
    plain = make_pod("p").node("n1").raw
    big = make_pod("big").node("n1").raw
    big["metadata"]["annotations"] = {"n": "1"}
    big["spec"]["activeDeadlineSeconds"] = 1180591620717411303425
    path = _signed(tmp_path / "s.yaml", make_node("n1").raw, plain, big)
    pods = {p.name: p for p in FileSource([path]).load(features=loader.DEFAULT_FEATURES).pods}
    assert isinstance(pods["p"]._packed, str) and isinstance(pods["big"]._packed, bytes)
    assert pods["p"].raw == plain and pods["big"].raw == big
