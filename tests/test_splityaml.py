"""A big YAML text read in two processes gives exactly the documents one reading gives, or is read whole.

``splityaml`` cuts a text where ``simpleyaml``'s reading is the concatenation of the pieces'
readings. The property held here, on generated multi-document and List texts at every place a cut
can be made: both pieces are read (``load_simple`` gives documents for each) exactly when the whole
text is, and then their documents joined are the whole text's. Then the fork itself, forced and
refused, a child that fails, and the loader's errors (message, document number) through both ways.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from kschedctl.errors import InputError
from kschedctl.snapshot import forked, loader, splityaml
from kschedctl.snapshot.simpleyaml import load_simple
from kschedctl.snapshot.splityaml import Cut, find_cut
from tests.test_simpleyaml import LINES, same
from tests.yaml_objects import YAMLISH, objects

GEN_CLUSTER = Path(__file__).resolve().parent.parent / "bench" / "perf" / "gen_cluster.py"

LIST_HEAD = "apiVersion: v1\nitems:\n"
LIST_TAIL = 'kind: List\nmetadata:\n  resourceVersion: ""\n'


def every_cut(text: str) -> list[Cut]:
    """Each cut ``find_cut`` makes when aimed at each line start, any share each side."""
    cuts: list[Cut] = []
    at = 0
    while at < len(text):
        cut = find_cut(text, at / len(text), 0)
        if cut is not None and cut not in cuts:
            cuts.append(cut)
        at = text.find("\n", at) + 1 or len(text)
    return cuts


def read_in_pieces(text: str, cut: Cut) -> list[Any] | None:
    """Both pieces read in this process and joined; None when either is left to PyYAML."""
    first, second = load_simple(cut.first(text)), load_simple(cut.second(text))
    if first is None or second is None:
        return None
    return cut.join(first, second)


def assert_pieces_agree(text: str) -> list[Cut]:
    whole = load_simple(text)
    cuts = every_cut(text)
    for cut in cuts:
        assert 0 < cut.at < len(text) and text[cut.at - 1] == "\n", cut
        assert text.startswith("---" if not cut.items else "- ", cut.at), cut
        got = read_in_pieces(text, cut)
        assert (got is None) == (whole is None), (text, cut, got, whole)
        if whole is not None:
            assert same(got, whole), (text, cut)
    return cuts


@settings(max_examples=300, deadline=None)
@given(st.lists(objects, min_size=2, max_size=5), st.sampled_from([None, False]), st.booleans())
def test_multi_document_texts_read_in_pieces_as_whole(
    docs: list[Any], flow: bool | None, start: bool
) -> None:
    text = yaml.safe_dump_all(docs, default_flow_style=flow, allow_unicode=True, explicit_start=start)
    assert assert_pieces_agree(text)


@settings(max_examples=500, deadline=None)
@given(st.lists(st.one_of(LINES, st.lists(YAMLISH, max_size=2)), min_size=2, max_size=5))
def test_random_documents_read_in_pieces_as_whole_or_left_to_pyyaml(chunks: list[list[str]]) -> None:
    assert_pieces_agree("\n---\n".join("\n".join(c) for c in chunks) + "\n")


@settings(max_examples=300, deadline=None)
@given(
    st.lists(objects, min_size=2, max_size=6), st.sampled_from(["", LIST_TAIL, "kind: List\n", "items: []\n"])
)
def test_list_texts_read_in_pieces_as_whole(items: list[Any], tail: str) -> None:
    text = LIST_HEAD + yaml.safe_dump(items, default_flow_style=False, allow_unicode=True) + tail
    assert_pieces_agree(text)


@settings(max_examples=1000, deadline=None)
@given(
    st.lists(st.one_of(LINES, st.lists(YAMLISH, max_size=1)), min_size=2, max_size=6),
    st.sampled_from(["", LIST_TAIL]),
)
def test_random_list_items_read_in_pieces_as_whole_or_left_to_pyyaml(
    entries: list[list[str]], tail: str
) -> None:
    """Items made of random lines (nested lists, block scalars, odd indentation, errors), each behind ``- ``."""
    items = "".join("- " + "\n".join(lines) + "\n" for lines in entries)
    assert_pieces_agree(LIST_HEAD + items + tail)


BOUNDARY_LIST = """apiVersion: v1
items:
- kind: ConfigMap
  data:
    script: |
      - not an item
      ---
      items:
    other: |-
      x

      - nor this
  list:
  - a
  - b: 1
  -
    - c
- a scalar item
-
  kind: Pod
  spec:
    containers:
    - name: c
      args:
      - -v
# a comment at column 0
- kind: Pod
  metadata: {name: p}

- last
kind: List
metadata:
  resourceVersion: ""
"""


def test_no_cut_inside_a_block_scalar_or_a_nested_list() -> None:
    whole = load_simple(BOUNDARY_LIST)
    assert whole is not None
    cuts = assert_pieces_agree(BOUNDARY_LIST)
    items = [BOUNDARY_LIST.index(f"\n{line}") + 1 for line in ("- a scalar item", "- kind: Pod", "- last")]
    assert sorted(c.at for c in cuts) == items  # not the first item, nor '-' alone on its line
    assert all(c.resume == BOUNDARY_LIST.index("kind: List") for c in cuts)


@pytest.mark.parametrize(
    "text",
    [
        "a: 1\n",
        "- a\n- b\n",
        "apiVersion: v1\nitems:\n  - a\n  - b\nkind: List\n",  # items not at column 0
        " apiVersion: v1\nitems:\n- a\n- b\n",
        "a: |\n  x\n  ---\n  y\nb: 1\n",  # '---' only inside a block scalar
    ],
)
def test_texts_without_a_place_to_cut(text: str) -> None:
    assert every_cut(text) == []


def test_a_cut_takes_a_share_of_the_text_each_side() -> None:
    text = "a: 1\n---\n" + "b: 2\n" * 100
    assert find_cut(text) is None
    assert find_cut(text, 0.5, 0) == Cut(5, len(text), items=False)


def generated_cluster(tmp_path: Path, nodes: int = 30, pods: int = 200) -> str:
    out = tmp_path / "c.yaml"
    subprocess.run(
        [sys.executable, str(GEN_CLUSTER), str(nodes), str(pods), str(out)], check=True, capture_output=True
    )
    return out.read_text()


def cluster_text(tmp_path: Path, form: str) -> str:
    """A generated cluster as separate documents (``form`` "documents") or as one List ("list")."""
    text = generated_cluster(tmp_path)
    return as_list(text) if form == "list" else text


def as_list(text: str) -> str:
    """The documents of a multi-document text as one ``kubectl get -o yaml`` List."""
    docs = [d for d in yaml.safe_load_all(text) if d is not None]
    return LIST_HEAD + yaml.safe_dump(docs, default_flow_style=False, sort_keys=False) + LIST_TAIL


@pytest.fixture
def forced(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The fork taken for any text (the pids it made are listed)."""
    pids: list[int] = []
    real_fork = os.fork

    def fork() -> int:
        pid = real_fork()
        if pid:
            pids.append(pid)
        return pid

    monkeypatch.setattr(splityaml, "MIN_SIZE", 0)
    monkeypatch.setattr(forked, "pays", lambda since=None: True)
    monkeypatch.setattr(os, "fork", fork)
    return pids


def no_child_left() -> bool:
    try:
        os.waitpid(-1, os.WNOHANG)
    except ChildProcessError:
        return True
    return False


@pytest.mark.parametrize("form", ["documents", "list"])
def test_the_fork_forced_reads_the_same_documents(tmp_path: Path, forced: list[int], form: str) -> None:
    text = cluster_text(tmp_path, form)
    whole = load_simple(text)
    assert whole is not None
    got = splityaml.load(text)
    assert len(forced) == 1
    assert same(got, whole)
    assert no_child_left()


def test_the_fallback_forced_reads_in_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = generated_cluster(tmp_path)
    monkeypatch.setattr(splityaml, "MIN_SIZE", 0)
    monkeypatch.setattr(forked, "pays", lambda since=None: False)
    monkeypatch.setattr(os, "fork", lambda: pytest.fail("forked"))
    assert same(splityaml.load(text), load_simple(text))


def test_small_texts_are_read_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(forked, "pays", lambda since=None: pytest.fail("asked"))
    assert splityaml.load("a: 1\n---\nb: 2\n") == [{"a": 1}, {"b": 2}]


def test_no_fork_while_another_thread_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = generated_cluster(tmp_path)
    monkeypatch.setattr(splityaml, "MIN_SIZE", 0)
    monkeypatch.setattr(forked, "available", lambda since=None: True)
    monkeypatch.setattr(os, "fork", lambda: pytest.fail("forked"))
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        assert same(splityaml.load(text), load_simple(text))
    finally:
        stop.set()
        thread.join()


def _exit_in_child(code: int) -> Any:
    parent = os.getpid()

    def read(text: str) -> list[Any] | None:
        if os.getpid() != parent:
            if code < 0:
                os.kill(os.getpid(), -code)
            os._exit(code)
        return load_simple(text)

    return read


@pytest.mark.parametrize("code", [0, 1, -signal.SIGKILL])
def test_a_child_that_fails_hands_nothing_over(tmp_path: Path, code: int) -> None:
    text = generated_cluster(tmp_path)
    cut = find_cut(text)
    assert cut is not None
    assert splityaml.load_cut(text, cut, _exit_in_child(code)) is None
    assert no_child_left()


def test_a_child_that_raises_hands_nothing_over(tmp_path: Path) -> None:
    text = generated_cluster(tmp_path)
    cut = find_cut(text)
    assert cut is not None
    parent = os.getpid()

    def read(piece: str) -> list[Any] | None:
        if os.getpid() != parent:
            raise RuntimeError("child")
        return load_simple(piece)

    assert splityaml.load_cut(text, cut, read) is None
    assert no_child_left()


def test_a_failed_child_means_one_reading_in_process(
    tmp_path: Path, forced: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    text = generated_cluster(tmp_path)
    monkeypatch.setattr(splityaml, "load_cut", lambda text, cut: None)
    assert same(splityaml.load(text), load_simple(text))


def test_a_first_piece_left_to_pyyaml_stops_the_child(tmp_path: Path, forced: list[int]) -> None:
    text = generated_cluster(tmp_path)
    text = text.replace("kind: Node", "kind:\tNode", 1)  # a tab: not simpleyaml's
    assert splityaml.load(text) is None
    assert len(forced) == 1
    assert no_child_left()


ERRORS = [
    ("kind: Pod\n", "kind: Pod\nkind: Pod\n"),  # a key set twice: PyYAML's message, line and document
    ("  name: ", "  name: [unclosed "),  # a syntax error
    ("kind: Pod\n", "kind: 12\n"),  # not a kind the loader takes
]


@pytest.mark.parametrize(("old", "new"), ERRORS)
@pytest.mark.parametrize("form", ["documents", "list"])
def test_errors_in_the_second_piece_are_the_same_either_way(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, old: str, new: str, form: str
) -> None:
    text = cluster_text(tmp_path, form)
    cut = find_cut(text)
    assert cut is not None
    at = text.rindex(old)
    assert at > cut.at
    text = text[:at] + new + text[at + len(old) :]
    monkeypatch.setattr(splityaml, "MIN_SIZE", 0)
    errors = []
    for fork in (False, True):
        monkeypatch.setattr(forked, "pays", lambda since=None, fork=fork: fork)
        with pytest.raises(InputError) as e:
            for doc in loader.parse_documents("c.yaml", text):
                loader.build_object(doc)
        errors.append(str(e.value))
    assert errors[0] == errors[1]
    assert no_child_left()


def test_no_process_to_fork_means_one_reading_in_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = generated_cluster(tmp_path)

    def refuse() -> int:
        raise OSError("no process left")

    monkeypatch.setattr(splityaml, "MIN_SIZE", 0)
    monkeypatch.setattr(forked, "pays", lambda since=None: True)
    monkeypatch.setattr(os, "fork", refuse)
    assert same(splityaml.load(text), load_simple(text))


def test_a_child_reaped_by_the_system_still_hands_its_piece_over(tmp_path: Path, forced: list[int]) -> None:
    text = generated_cluster(tmp_path)
    before = signal.signal(
        signal.SIGCHLD, signal.SIG_IGN
    )  # children reaped as they end: no status to wait for
    try:
        assert same(splityaml.load(text), load_simple(text))
    finally:
        signal.signal(signal.SIGCHLD, before)
    assert len(forced) == 1
    assert no_child_left()
