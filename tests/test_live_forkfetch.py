"""A live read by a second process (snapshot/forkfetch.py) builds the Cluster the in-process read builds.

Whichever pages the reader decodes itself and whichever it hands over undecoded, the objects, their
order, the notes, the progress and the errors are the in-process read's; a list that starts again
after objects of it were built, or a reader that dies, leaves the read to the main process.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kschedctl.errors import ClusterAccessError
from kschedctl.snapshot import forked, forkfetch
from kschedctl.snapshot.cluster import Cluster
from kschedctl.snapshot.live import Forbidden, LiveCluster, LiveOptions, LiveSource
from tests.apiserver import RecordedAPIServer, load_rules

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the reader is forked: Linux only")

#: forkfetch.AHEAD: never hand a page over undecoded, hand over every page but the last, the default.
NEVER, ALWAYS = 0, 10**9




@pytest.fixture
def generated(live_bench: ModuleType, isolated: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """bench/live.py's server (it pages at any size) with 30 nodes and 205 pods: many pages of 20."""
    with live_bench.FakeAPIServer(live_bench.generate(30, 200, 5)) as srv:
        monkeypatch.setenv("KUBECONFIG", str(live_bench.kubeconfig(isolated / "kubeconfig", srv.url)))
        yield srv


@pytest.fixture
def isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "absent-kubeconfig"))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    return tmp_path


def served(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, **modes: Any) -> Iterator[RecordedAPIServer]:
    with RecordedAPIServer(**modes) as srv:
        monkeypatch.setenv("KUBECONFIG", str(srv.kubeconfig(tmp_path / "kubeconfig")))
        yield srv


@pytest.fixture
def server(isolated: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[RecordedAPIServer]:
    yield from served(monkeypatch, isolated)


def load(by_reader: bool, monkeypatch: pytest.MonkeyPatch, chunk_size: int = 100) -> tuple[Cluster, list[str], list[Any]]:
    """The cluster, warnings and progress events of one load, by the reader or in-process."""
    monkeypatch.setattr(forked, "available", lambda since=None: by_reader)
    warnings: list[str] = []
    events: list[Any] = []
    cluster = LiveSource(LiveOptions(chunk_size=chunk_size)).load(
        warn=warnings.append, progress=lambda *e: events.append(e)
    )
    return cluster, warnings, events


def summary(cluster: Cluster) -> Any:
    return (
        [n.raw for n in cluster.nodes],
        [p.raw for p in cluster.pods],
        sorted((o.kind, o.namespace or "", o.name) for objs in cluster.objects.values() for o in objs),
        cluster.notes,
        cluster.pods_listed,
    )


@pytest.mark.parametrize("ahead", [NEVER, ALWAYS, forkfetch.AHEAD], ids=["decoded", "handed-over", "shared"])
def test_the_forked_read_builds_the_in_process_cluster(ahead: int, generated: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    inproc, inproc_warnings, inproc_events = load(False, monkeypatch, chunk_size=20)
    monkeypatch.setattr(forkfetch, "AHEAD", ahead)
    forked, warnings, events = load(True, monkeypatch, chunk_size=20)
    assert summary(forked) == summary(inproc)
    assert len(forked.pods) == 205 and len(forked.nodes) == 30
    assert warnings == inproc_warnings and events == inproc_events and ("pods", 205, 205) in events


def test_the_recorded_server_reads_the_same_either_way(server: RecordedAPIServer, monkeypatch: pytest.MonkeyPatch) -> None:
    inproc, inproc_warnings, _ = load(False, monkeypatch)
    forked, warnings, _ = load(True, monkeypatch)
    assert summary(forked) == summary(inproc) and warnings == inproc_warnings and len(forked.pods) == 150


def test_a_page_handed_over_is_decoded_and_redacted_here(generated: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(forkfetch, "AHEAD", ALWAYS)
    decoded: list[str] = []
    original = LiveCluster.decode_page

    def spy(self: LiveCluster, res: Any, body: bytes) -> list[dict[str, Any]]:
        decoded.append(res.kind)
        return original(self, res, body)

    monkeypatch.setattr(LiveCluster, "decode_page", spy)
    cluster, _, _ = load(True, monkeypatch, chunk_size=20)
    assert decoded.count("Pod") == 10  # 205 pods in pages of 20: all but the last handed over
    assert all("managedFields" not in p.raw["metadata"] for p in cluster.pods)


def test_the_read_notes_come_first_as_in_process(isolated: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for _ in served(monkeypatch, isolated, unserved=("/apis/resource.k8s.io/",)):
        inproc, inproc_warnings, _ = load(False, monkeypatch)
        forked, warnings, _ = load(True, monkeypatch)
    assert warnings == inproc_warnings and forked.notes == inproc.notes
    assert warnings[0].startswith("the server does not serve resourceslices.resource.k8s.io")


def test_a_list_that_starts_again_is_read_again_in_process(isolated: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An expired continue token after pods were built: the main process reads the whole cluster again."""
    for srv in served(monkeypatch, isolated, expire_continue_once=True):
        cluster, _, _ = load(True, monkeypatch, chunk_size=100)
        pod_lists = [("continue" in s.query) for s in srv.seen if s.path == "/api/v1/pods"]
    assert len(cluster.pods) == len({p.key for p in cluster.pods}) == 150
    # the reader's first page and its expired token, ..., then this process's two pages (the reader, stopped when
    # it said its list started again, may or may not have asked for more)
    assert pod_lists[:2] == [False, True] and pod_lists[-2:] == [False, True] and len(pod_lists) >= 4


def test_the_readers_error_is_raised_here(isolated: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rules = load_rules()
    for rule in rules:
        if "pods" in (rule.get("resources") or []):
            rule["resources"] = [r for r in rule["resources"] if r != "pods"]
    for _ in served(monkeypatch, isolated, rules=rules):
        with pytest.raises(Forbidden) as forked:
            load(True, monkeypatch)
        with pytest.raises(Forbidden) as inproc:
            load(False, monkeypatch)
    assert str(forked.value) == str(inproc.value) and 'cannot list resource "pods"' in str(forked.value)


def test_a_reader_that_dies_leaves_the_read_to_this_process(server: RecordedAPIServer, monkeypatch: pytest.MonkeyPatch) -> None:
    parent = os.getpid()
    original = LiveCluster.read_in_fork

    def dies(self: LiveCluster, *args: Any) -> None:
        if os.getpid() != parent:
            os._exit(3)
        original(self, *args)

    monkeypatch.setattr(LiveCluster, "read_in_fork", dies)
    cluster, _, _ = load(True, monkeypatch)
    assert len(cluster.pods) == 150


def test_a_reader_that_fails_on_its_own_leaves_the_read_to_this_process(
    server: RecordedAPIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    parent = os.getpid()
    original = os.pwrite

    def no_room(fd: int, data: bytes, at: int) -> int:
        if os.getpid() != parent:
            raise OSError(28, "No space left on device")
        return original(fd, data, at)

    monkeypatch.setattr(os, "pwrite", no_room)
    cluster, _, _ = load(True, monkeypatch)
    assert len(cluster.pods) == 150


def test_a_reader_that_cannot_start_leaves_the_read_to_this_process(
    server: RecordedAPIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from multiprocessing.process import BaseProcess

    def cannot_fork(self: BaseProcess) -> None:
        raise OSError(12, "Cannot allocate memory")

    monkeypatch.setattr(BaseProcess, "start", cannot_fork)
    cluster, _, _ = load(True, monkeypatch)
    assert len(cluster.pods) == 150


def test_an_error_that_does_not_pickle_comes_as_its_line() -> None:
    class Odd(Exception):
        def __init__(self, a: str, b: str) -> None:
            super().__init__(f"{a} {b}")

    import pickle

    e = pickle.loads(forkfetch._error_pickled(Odd("no", "pickle")))
    assert isinstance(e, ClusterAccessError) and str(e) == "no pickle"


def test_a_list_to_redact_is_decoded_without_its_managed_fields() -> None:
    from kschedctl.snapshot.live import Request

    req = Request("/api/v1/pods", "list", "pods")
    managed = (
        '"managedFields":[{"manager":"kubectl","operation":"Update","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":'
        '{"f:labels":{".":{},"f:a]b":{}}},"f:spec":{"k:{\\"name\\":\\"c\\"}":{"v:\\"]\\\\\\"":{}}}}},{"manager":"x"}]'
    )
    pod = (
        '{"metadata":{"name":"p",' + managed + ',"annotations":{"note":",\\"managedFields\\":[1]"}},'
        '"spec":{"template":{"metadata":{"name":"t",' + managed + '}}}}'
    )
    body = ('{"kind":"PodList","metadata":{},"items":[' + pod + "," + pod + "]}").encode()
    whole = LiveCluster.decode(req, body)
    lean = LiveCluster.decode_list(req, body)
    for item in whole["items"]:  # what the cut leaves out: every ObjectMeta's managedFields, nothing else
        del item["metadata"]["managedFields"]
        del item["spec"]["template"]["metadata"]["managedFields"]
    assert lean == whole
    assert lean["items"][0]["metadata"]["annotations"]["note"] == ',"managedFields":[1]'
    # entries holding an array (none do): the cut leaves no JSON, and the whole body is decoded
    odd = b'{"items":[{"metadata":{"name":"p","managedFields":[{"a":["b"]}]}}]}'
    assert LiveCluster.decode_list(req, odd) == LiveCluster.decode(req, odd)


#: Strings a managedFields entry or an object may hold: brackets, quotes, backslashes and the key itself.
_TRICKY = st.lists(st.sampled_from(['"', "\\", "]", "[", "a", "\\\\", '\\"', "\n", ',"managedFields":[', "é"]),
                   max_size=8).map("".join)
_ENTRY = st.dictionaries(_TRICKY, st.one_of(_TRICKY, st.dictionaries(_TRICKY, st.just({}), max_size=3)), max_size=3)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(_TRICKY, st.lists(_ENTRY, max_size=3), _TRICKY), min_size=1, max_size=4), st.booleans())
def test_the_managed_fields_cut_is_the_regular_expressions(objects: list[tuple[str, list[Any], str]], ascii: bool) -> None:
    """On a list as a server writes it (compact JSON), the cut found by searching the bytes is the
    regular expression's, and leaves every object but its managedFields."""
    import json

    from kschedctl.snapshot.live import MANAGED_FIELDS, Request, cut_managed_fields

    items = [{"metadata": {"name": name, "managedFields": managed, "labels": {"x": label}}, "spec": {"note": label}}
             for name, managed, label in objects]
    body = json.dumps({"kind": "PodList", "items": items}, separators=(",", ":"), ensure_ascii=ascii).encode()
    assert cut_managed_fields(body) == MANAGED_FIELDS.sub(b"", body)
    lean = LiveCluster.decode_list(Request("/api/v1/pods", "list", "pods"), body)
    for item in items:
        del item["metadata"]["managedFields"]
    assert lean["items"] == items
