"""A signed snapshot's items read by two processes (``jsonlines._halves``, ``loader._PodHalf``): a forked
process makes the pods of the text's second half while this one reads the first, and this one takes its
states in their place.

Whether the fork is used (forced here: ``forked.pays``, ``jsonlines.SPLIT`` 0) must not change anything
but the time: the same items in the same order, the same Cluster (every field, each pod's manifest), the
same notes and the same first error, whatever the second half holds (items the forked process does not
make, a line that is not one item, a forked process that fails); no process is left behind.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from kschedctl.snapshot import cache, forked, jsonlines
from kschedctl.snapshot.loader import load_cluster
from kschedctl.snapshot.source import RESOURCES
from kschedctl.snapshot.writer import SnapshotWriter
from tests.builders import make_node, make_pod
from tests.conftest import cache_every_text
from tests.test_load_aside import outcome

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork: Linux only")

CONFORMANCE = Path(__file__).parent / "conformance"
#: A sample of the corpus's clusters.
SCENARIOS = sorted(d for d in CONFORMANCE.iterdir() if (d / "cluster.yaml").is_file())[::17]
HEAD = '# a header\n{"apiVersion": "v1", "kind": "List", "metadata": {}, "items": ['


@pytest.fixture(autouse=True)
def every_text_split(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jsonlines, "SPLIT", 0)
    cache_every_text(tmp_path, monkeypatch)


class Doubled:
    """A ``jsonlines.Half`` that makes each item holding ``n`` into ``n`` doubled (and no other)."""

    def make(self, value: dict[str, Any], line: str) -> tuple[Any, ...] | None:
        if value.get("fail"):
            raise ValueError("cannot")
        return (value["n"] * 2,) if "n" in value else None

    def shared(self) -> Any:
        return "shared"

    def made(self, state: tuple[Any, ...], shared: Any, line: str) -> Any:
        assert shared == "shared" and json.loads(line)["n"] * 2 == state[0]
        return {"doubled": state[0]}


def items(text: str, half: jsonlines.Half | None) -> list[Any]:
    start = text.index("{")
    found = jsonlines.listed_items(text, start, lambda: json.loads(text[start:])["items"], half=half)
    assert found is not None
    return [value for value, _ in found[1]]


def doubled(value: Any) -> Any:
    """What ``Doubled`` makes of an item (itself, when it makes nothing of it)."""
    return {"doubled": value["n"] * 2} if isinstance(value, dict) and "n" in value and not value.get("fail") else value


@pytest.mark.parametrize(
    ("body", "some_made"),
    [
        ([f'{{"n":{i}}}' for i in range(10)], True),
        (['{"a":1}', '{"n":1}', '{"b":2}', '{"n":2}', '{"fail":1,"n":3}', '{"n":4}'], True),  # items it does not make
        (['{"n":1}', '{"n":2}', '{"n":3}', '{"n":4}', '{"n":5}', '{\n"n": 6}', '{"n":7}'], False),  # two lines
        (['{"n":1}', '{"n":2}', '{"n":3}', '{"n":4}', '{"n":12345678901234567890123}', '{"n":6}'], True),  # a long one
        (['{"n":1}', '{"n":2}'], False),  # (the second item starts before the split)
        (['{"n":1}'], False),
    ],
)
def test_the_second_half_made_elsewhere_is_what_this_process_makes_of_it(
    body: list[str], some_made: bool, forks: list[int]
) -> None:
    """Each item comes as it is, or made (the second half's, up to a line that is not one item), in order."""
    text = HEAD + "\n" + ",\n".join(body) + "\n]}\n"
    made, plain = items(text, Doubled()), items(text, None)
    assert len(made) == len(plain) and all(m in (v, doubled(v)) for m, v in zip(made, plain, strict=True))
    first = next((i for i, (m, v) in enumerate(zip(made, plain, strict=True)) if m != v), len(made))
    assert made[first:] == [doubled(v) for v in plain[first:]] or "\n" in "".join(body)
    assert (first < len(made)) == some_made
    assert forks


def test_a_forked_process_that_fails_leaves_every_item_to_this_one(monkeypatch: pytest.MonkeyPatch, forks: list[int]) -> None:
    text = HEAD + "\n" + ",\n".join(f'{{"n":{i}}}' for i in range(8)) + "\n]}\n"
    monkeypatch.setattr(jsonlines, "_made", lambda *args: 1 / 0)
    assert items(text, Doubled()) == items(text, None) and forks


def test_an_item_that_is_no_object_in_the_second_half_is_the_same_error(forks: list[int]) -> None:
    text = HEAD + "\n" + ",\n".join(['{"n":1}', '{"n":2}', '{"n":3}', "7", '{"n":5}']) + "\n]}\n"
    assert items(text, Doubled())[3] == 7 == items(text, None)[3]


def signed(path: Path, docs: list[dict[str, Any]]) -> Path:
    """A signed snapshot of ``docs`` (those of the kinds ``kschedctl snapshot`` lists), as it writes them."""
    with SnapshotWriter(str(path), header=["h"], server_version=None, as_json=False) as w:
        for res in RESOURCES:
            w.take(res, [[d for d in docs if d.get("kind") == res.kind]])
    return path


def load(path: Path, fork: bool, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, list[str]]:
    """``outcome`` of a load of ``path`` (the file read each time)."""
    monkeypatch.setattr(forked, "pays", lambda since=None: fork)
    monkeypatch.setattr(cache, "enabled", lambda: False)
    return outcome(lambda warn: load_cluster([str(path)], warn=warn))


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[d.name for d in SCENARIOS])
def test_a_signed_snapshot_is_the_same_cluster_both_ways(
    scenario: Path, forks: list[int], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import yaml

    docs = [d for d in yaml.safe_load_all((scenario / "cluster.yaml").read_text()) if isinstance(d, dict)]
    path = signed(tmp_path / "s.yaml", docs)
    here = load(path, False, monkeypatch)
    assert not forks
    assert load(path, True, monkeypatch) == here
    if sum(d.get("kind") == "Pod" for d in docs) > 1:
        assert forks


def test_pods_that_are_not_plain_and_errors_in_the_second_half(
    forks: list[int], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Pods the forked process leaves to this one (a gated field, a bad quantity) read the same; the first
    error is the same error."""
    pods = [make_pod(f"p{i}").node("n1").raw for i in range(12)]
    pods[7]["spec"]["resources"] = {"requests": {"cpu": "1"}}  # (a gated field: PodLevelResources)
    pods[9]["metadata"]["labels"] = {"app": "web"}
    docs = [make_node("n1").raw, *pods]
    path = signed(tmp_path / "s.yaml", docs)
    here = load(path, False, monkeypatch)
    assert load(path, True, monkeypatch) == here and forks
    pods[10]["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "lots"}}
    path = signed(tmp_path / "bad.yaml", [make_node("n1").raw, *pods])
    error = load(path, False, monkeypatch)
    assert error[0][0] == "InputError" and "lots" in error[0][1]
    assert load(path, True, monkeypatch) == error


@pytest.mark.parametrize("long_number", [False, True])
def test_what_the_look_ahead_finds_is_what_the_load_would(
    long_number: bool, forks: list[int], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """``look_ahead``'s process finds each file's key, whether it is signed and whether it holds long numbers
    as this process would; a file whose text is not its bytes as they are (a carriage return) is left to it."""
    from kschedctl.snapshot import loader

    monkeypatch.setattr(forked, "pays", lambda since=None: True)
    monkeypatch.setattr(loader, "_KEYS", {})
    monkeypatch.setattr(loader, "_FACTS", {})
    pod = make_pod("p").node("n1").raw
    if long_number:
        pod["spec"]["activeDeadlineSeconds"] = 1180591620717411303425
    path = signed(tmp_path / "s.yaml", [make_node("n1").raw, pod])
    edited = tmp_path / "edited.yaml"
    edited.write_text(path.read_text().replace('"n1"', '"n2"', 1))
    crlf = tmp_path / "crlf.yaml"
    crlf.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    files = [str(path), str(edited), str(crlf)]
    loader.look_ahead(files)
    assert len(forks) == 1
    loader._ahead()
    found = {p: loader._KEYS.get(loader._memo_key(p, loader._signature(p))) for p in files}
    assert found[str(crlf)] is None and all(found[p] for p in files[:2])
    facts = dict(loader._FACTS)
    monkeypatch.setattr(loader, "_KEYS", {})
    monkeypatch.setattr(loader, "_FACTS", {})
    for p in files[:2]:
        assert loader._file_key(p) == found[p]
        assert loader.streamable([p]) == (p == str(path))
    assert facts == loader._FACTS
    assert facts[found[str(path)], "long"] is long_number
