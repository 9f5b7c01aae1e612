"""The snapshot file as ``kschedctl snapshot`` streams it: JSON after comment lines, which is YAML too.

Whatever reads it — a YAML parser, ``json``, kschedctl's loader (which takes the JSON path) — must
get the same objects, however odd their strings; a list that starts again is written once; a read
that fails leaves no file behind (and an older file untouched).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from kschedctl.errors import InputError
from kschedctl.snapshot import loader, vouch, writer
from kschedctl.snapshot.loader import load_cluster, parse_documents
from kschedctl.snapshot.source import POD, RESOURCES
from kschedctl.snapshot.writer import SnapshotWriter, to_line
from tests.builders import make_node, make_pod

NODE = next(r for r in RESOURCES if r.kind == "Node")
_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

ODD_STRINGS = [
    "plain",
    "",
    "yes",  # a YAML 1.1 boolean when plain
    "0755",
    "1e5",
    "null",
    'quote " and backslash \\ and slash /',
    "tab\tnewline\ncarriage\r",
    "é ü 中文",
    "emoji 😀 astral",
    "NEL \x85 LS \u2028 PS \u2029",  # line breaks to YAML, ordinary characters to JSON
    "DEL \x7f C1 \x80 \x9f BOM \ufeff",  # not allowed raw in YAML
    "nonchar \ufffe \uffff",
    "\x00 NUL \x1f",
]


def annotated(text: str) -> dict[str, Any]:
    return make_pod("p").annotation("note", text).label("app", "web").node("n1").raw


@pytest.mark.parametrize("text", ODD_STRINGS)
def test_a_line_reads_the_same_as_yaml_and_as_json(text: str) -> None:
    obj = annotated(text)
    line = to_line(obj)
    assert "\n" not in line
    assert json.loads(line) == obj
    assert yaml.load(line, Loader=_Loader) == obj


@pytest.mark.parametrize(
    "value",
    [*ODD_STRINGS, 0, -7, 2**70, 1.5, 1e300, -0.0, True, False, None, [], {}, [1, [2, {"a": None}]], {"": {"b": []}}],
)
def test_the_page_encoder_writes_the_encoders_text(value: Any) -> None:
    """The writer's C encoder made once (``_ENCODE_OBJECT``) gives ``json``'s own text, byte for byte."""
    obj = {**annotated("x"), "value": value, "list": [value, {"k": value}]}
    assert writer._ENCODE_OBJECT(obj) == writer._ENCODE(obj) == json.dumps(obj, ensure_ascii=False)


@pytest.mark.parametrize(
    "value",
    [*ODD_STRINGS, 0, -7, 2**63 - 1, -(2**63), 1.5, 1e300, -0.0, True, None, [], {}, [1, [2, {"a": None}]], 2**70],
    ids=repr,
)
def test_a_page_reads_the_same_as_yaml_and_as_json(value: Any) -> None:
    """A page's lines (compact JSON from orjson; json's text for what orjson cannot write, such as an
    integer beyond 64 bits) read back to its objects, as YAML and as JSON, with no raw line break inside."""
    items = [{**annotated("x"), "value": value, "list": [value, {"k": value}]}, annotated("second")]
    data = writer.encode_items(items)
    assert data.count(b"\n") == 1 and (b'"kind":"Pod"' in data) == (value != 2**70)
    text = data.decode("utf-8")
    assert json.loads(f"[{text}]") == items
    if value != 1e300:  # (an exponent without a dot is a string to YAML 1.1, in json's text as in orjson's)
        assert yaml.load(f"[{text}]", Loader=_Loader) == items


def test_what_orjson_cannot_write_is_left_to_json() -> None:
    from kschedctl.snapshot import jsoncodec

    assert jsoncodec.dumps({"a": [1, "é"]}) == '{"a":[1,"é"]}'.encode()
    assert jsoncodec.dumps({"big": 2**70}) is None and jsoncodec.dumps({"s": "\ud800"}) is None


def write(path: Path, pages: dict[str, list[list[dict[str, Any]] | None]], *, as_json: bool = False) -> SnapshotWriter:
    with SnapshotWriter(str(path), header=["a header", "two lines"], server_version="v1.36.2", as_json=as_json) as w:
        for res in RESOURCES:
            if res.kind in pages:
                w.take(res, pages[res.kind])
    return w


@pytest.mark.parametrize("as_json", [False, True])
def test_the_file_is_one_list_for_yaml_json_and_the_loader(tmp_path: Path, as_json: bool) -> None:
    nodes = [make_node(f"n{i}").raw for i in range(3)]
    pods = [annotated(t) | {"metadata": {**annotated(t)["metadata"], "name": f"p{i}"}} for i, t in enumerate(ODD_STRINGS)]
    out = tmp_path / ("c.json" if as_json else "c.yaml")
    w = write(out, {"Node": [nodes[:2], nodes[2:]], "Pod": [pods[:5], [], pods[5:]]}, as_json=as_json)
    assert dict(w.counts) == {"Node": 3, "Pod": len(pods)}
    text = out.read_text(encoding="utf-8")
    assert text.startswith("{" if as_json else "# a header\n# two lines\n{")
    items = text[text.index(vouch.ITEMS) + len(vouch.ITEMS) :].encode()
    annotations = {"kschedctl.io/server-version": "v1.36.2", vouch.ANNOTATION: vouch.digest(items)}
    want = {"apiVersion": "v1", "kind": "List", "metadata": {"annotations": annotations}, "items": nodes + pods}
    assert yaml.load(text, Loader=_Loader) == want
    if as_json:
        assert json.loads(text) == want
    assert [d.obj for d in parse_documents(str(out), text)] == nodes + pods
    cluster = load_cluster([str(out)])
    assert len(cluster.nodes) == 3 and len(cluster.pods) == len(pods)


@pytest.mark.parametrize("as_json", [False, True])
def test_the_written_file_is_known_valid_to_its_first_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, as_json: bool
) -> None:
    """The API server validated what a snapshot holds: the file's first load (no cache) does not validate it
    again; an edited file no longer matches its digest and is validated as any other."""
    monkeypatch.setenv("KSCHEDCTL_NO_CACHE", "1")
    nodes = [make_node("n1").raw]
    pods = [make_pod(f"p{i}").node("n1").raw for i in range(3)]
    out = tmp_path / ("c.json" if as_json else "c.yaml")
    write(out, {"Node": [nodes], "Pod": [pods[:2], None, pods, []]})  # (a list that started again)
    text = out.read_text(encoding="utf-8")
    assert vouch.vouched(text)
    checked: list[str] = []
    monkeypatch.setattr(loader, "check_object", lambda doc, **kw: checked.append(doc.obj["kind"]))
    assert len(load_cluster([str(out)]).pods) == 3 and checked == []
    edited = text.replace('"name":"p0"', '"name":"p-0"')
    assert edited != text and not vouch.vouched(edited)
    out.write_text(edited, encoding="utf-8")
    assert len(load_cluster([str(out)]).pods) == 3 and checked == ["Node", "Pod", "Pod", "Pod"]


def test_a_file_without_the_digest_or_with_another_is_validated() -> None:
    items = '\n{"kind": "Pod"}\n]}\n'
    good = f'{{"apiVersion": "v1", "kind": "List", "metadata": {{"annotations": {{"{vouch.ANNOTATION}": "{vouch.digest(items.encode())}"}}}}, "items": [{items}'
    assert vouch.vouched(good) and vouch.vouched("# a comment\n" + good)
    assert not vouch.vouched(good.replace('"Pod"', '"Node"'))
    assert not vouch.vouched(good.replace(vouch.ANNOTATION, "other"))
    assert not vouch.vouched(good.replace(vouch.digest(items.encode()), vouch.PLACEHOLDER))
    assert not vouch.vouched(good.replace('"items": [', '"items":['))


def test_a_list_that_starts_again_is_written_once(tmp_path: Path) -> None:
    pods = [make_pod(f"p{i}").node("n0").raw for i in range(4)]
    out = tmp_path / "c.yaml"
    w = write(out, {"Node": [[make_node("n0").raw]], "Pod": [pods[:2], None, pods[:2], pods[2:]]})
    assert w.counts["Pod"] == 4
    items = yaml.load(out.read_text(), Loader=_Loader)["items"]
    assert [i["metadata"]["name"] for i in items] == ["n0", "p0", "p1", "p2", "p3"]


def test_an_empty_list_and_an_empty_snapshot(tmp_path: Path) -> None:
    out = tmp_path / "c.yaml"
    w = write(out, {"Node": [[]]})
    assert dict(w.counts) == {"Node": 0}
    assert yaml.load(out.read_text(), Loader=_Loader)["items"] == []


def _failing_pages() -> Any:
    yield [make_pod("p0").raw]
    raise OSError("connection reset")


def test_a_failed_read_leaves_the_old_file(tmp_path: Path) -> None:
    out = tmp_path / "c.yaml"
    out.write_text("the previous snapshot\n")
    with pytest.raises(OSError), SnapshotWriter(str(out), header=[], server_version=None, as_json=False) as w:
        w.take(POD, _failing_pages())
    assert out.read_text() == "the previous snapshot\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.yaml"]


def test_a_link_is_written_through_and_a_directory_refused(tmp_path: Path) -> None:
    real = tmp_path / "real.yaml"
    real.write_text("old\n")
    link = tmp_path / "link.yaml"
    link.symlink_to(real)
    write(link, {"Node": [[make_node("n0").raw]]})
    assert link.is_symlink() and yaml.load(real.read_text(), Loader=_Loader)["items"][0]["metadata"]["name"] == "n0"
    with pytest.raises(IsADirectoryError):
        write(tmp_path, {"Node": [[]]})


def test_standard_output_gets_the_whole_file_at_the_end(capsys: pytest.CaptureFixture[str]) -> None:
    with SnapshotWriter("-", header=["h"], server_version=None, as_json=False) as w:
        w.take(NODE, [[make_node("n0").raw]])
        assert capsys.readouterr().out == ""
    out = capsys.readouterr().out
    assert out.startswith("# h\n") and yaml.load(out, Loader=_Loader)["items"][0]["metadata"]["name"] == "n0"


@pytest.mark.parametrize(
    ("text", "json_path"),
    [
        ('# c\n{"kind": "Pod", "metadata": {"name": "a"}}\n', True),
        ('# c\n\n#   more\n{"kind": "Pod", "metadata": {"name": "a"}}\n', True),
        ("# c\n{kind: Pod, metadata: {name: a}}\n", False),  # flow YAML, not JSON
        ("# c\nkind: Pod\nmetadata: {name: a}\n", False),
        ('# c\n{"kind": "Pod", "metadata": {"name": "a"}}\n---\n{"kind": "Pod"}\n', False),  # two YAML documents
    ],
)
def test_json_behind_comments_or_yaml(monkeypatch: pytest.MonkeyPatch, text: str, json_path: bool) -> None:
    """JSON after comment lines is parsed as JSON; anything else (even what starts like it) as YAML, the same."""
    yaml_docs: list[str] = []
    parse_yaml = loader._parse_yaml

    def spy(source: str, text: str, key: str | None) -> Any:
        yaml_docs.append(text)
        return parse_yaml(source, text, key)

    monkeypatch.setattr(loader, "_parse_yaml", spy)
    docs = [d.obj for d in parse_documents("f.yaml", text)]
    assert docs == [d for d in yaml.load_all(text, Loader=_Loader) if d is not None]
    assert (yaml_docs == []) is json_path


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('# c\n{"kind": "Pod", "kind": "Pod"}\n', 'line 2: key "kind" already set in map'),
        ('# c\n{"kind": "List", "items": [}\n', "invalid YAML at line 2"),
    ],
)
def test_bad_json_behind_comments_is_reported_as_yaml(text: str, message: str) -> None:
    with pytest.raises(InputError) as e:
        list(parse_documents("f.yaml", text))
    assert message in str(e.value)
