"""``--node-order FILE``: node lists and kube-scheduler's NodeTree log lines (klog text and JSON) read
into the node tree's insertion order, and that order applied to the Snapshot's node list."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kschedctl.errors import InputError, UsageError
from kschedctl.framework.nodeinfos import Snapshot
from kschedctl.kube.topology import zone_key
from kschedctl.snapshot.nodeorder import (
    NodeOrderSpec,
    NodeTree,
    StartupOrder,
    go_unquote,
    parse_order_text,
    random_order,
    read_order_file,
)
from tests.builders import make_cluster, make_node, make_pod

LOGS = Path(__file__).parent / "nodeorder"
#: The tree of the fixtures' last scheduler start: zone a holds n4, n5 (n1 removed), zone b n2, n3, n6.
FIXTURE_ORDER = ["n4", "n5", "n2", "n3", "n6"]
ZA, ZB = "r1:\x00:za", "r1:\x00:zb"


def text_line(msg: str, node: str, zone: str) -> str:
    """A klog text line as kube-scheduler writes it (``strconv.Quote`` for the zone key's NUL)."""
    quoted = json.dumps(zone).replace("\\u0000", "\\x00")
    line = 79 if msg.startswith("Removed") else 65
    return f'I1126 10:00:00.123456       1 node_tree.go:{line}] "{msg}" node="{node}" zone={quoted}'


def json_line(msg: str, node: str, zone: str) -> str:
    """A JSON-format log line (``klog.KObj`` of a node marshals as ``{"name": ...}``)."""
    return json.dumps({"ts": 1795687200123.456, "caller": "cache/node_tree.go:65", "msg": msg, "v": 2,
                       "node": {"name": node}, "zone": zone})


ADD, REMOVE, START = "Added node to NodeTree", "Removed node from NodeTree", "Starting Kubernetes Scheduler"
STARTING_TEXT = 'I1126 10:00:00.000118       1 server.go:175] "Starting Kubernetes Scheduler" version="v1.35.4"'


# --------------------------------------------------------------------------- the fixtures (a recorded-style log)


@pytest.mark.parametrize("name", ["scheduler-text.log", "scheduler-json.log"])
def test_recorded_log_gives_the_last_start_tree(name: str) -> None:
    found = read_order_file(str(LOGS / name))
    assert (found.kind, found.names, found.starts) == ("log", FIXTURE_ORDER, 2)
    assert found.zones == {"n4": ZA, "n5": ZA, "n2": ZB, "n3": ZB, "n6": ZB}


def fixture_cluster() -> list[object]:
    zone = {"n1": "za", "n2": "zb", "n3": "zb", "n4": "za", "n5": "za", "n6": "zb"}
    return [make_node(n).zone(z, region="r1") for n, z in sorted(zone.items())]


def test_log_order_makes_the_snapshot_list_the_scheduler_had() -> None:
    cluster = make_cluster(fixture_cluster())
    assert zone_key(cluster.node("n4").labels) == ZA  # kschedctl's zone key is upstream's, NUL and all
    order, notes = NodeOrderSpec(str(LOGS / "scheduler-text.log")).resolve(cluster.nodes)
    cluster.startup = order
    # zone a: n4 n5 then n1 (not in the tree: appended, as a node added later); zone b: n2 n3 n6; interleaved
    assert [ni.name for ni in Snapshot(cluster).node_info_list] == ["n4", "n2", "n5", "n3", "n1", "n6"]
    assert any("1 node(s) of the snapshot are not in" in n and "n1" in n for n in notes)
    assert any("2 scheduler starts" in n for n in notes)


def test_default_order_is_by_name_interleaved_by_zone() -> None:
    cluster = make_cluster(fixture_cluster())
    assert [ni.name for ni in Snapshot(cluster).node_info_list] == ["n1", "n2", "n4", "n3", "n5", "n6"]


# --------------------------------------------------------------------------- table tests


def test_restarts_are_counted() -> None:
    a, b = text_line(ADD, "a", "z"), text_line(ADD, "b", "z")
    assert parse_order_text(f"{a}\n{b}\n{a}\n", "log").starts == 2  # no start-up line: the re-added node says so
    assert parse_order_text(f"{STARTING_TEXT}\n{STARTING_TEXT}\n{a}\n", "log").starts == 1


@pytest.mark.parametrize(
    ("text", "kind", "names"),
    [
        ("n1\nn2\nn3\n", "list", ["n1", "n2", "n3"]),
        ("# from the scheduler log\n\nn2   \n  n1 # first zone\n", "list", ["n2", "n1"]),
        ("ip-10-0-1-7.ec2.internal\n", "list", ["ip-10-0-1-7.ec2.internal"]),
        # a NodeTree line makes it a log: every other line is ignored
        (f"some text\n{text_line(ADD, 'b', 'z')}\n{text_line(ADD, 'a', 'z')}\n", "log", ["b", "a"]),
        (f"{json_line(ADD, 'b', ZA)}\n{json_line(ADD, 'a', ZB)}\n{json_line(ADD, 'c', ZA)}\n", "log", ["b", "c", "a"]),
        # a restart by the start-up line, then by a node added again without its removal
        (f"{text_line(ADD, 'a', 'z')}\n{STARTING_TEXT}\n{text_line(ADD, 'b', 'z')}\n", "log", ["b"]),
        (f"{text_line(ADD, 'a', 'z')}\n{text_line(ADD, 'b', 'z')}\n{text_line(ADD, 'b', 'z')}\n", "log", ["b"]),
        # removal, then the node back at the end of its zone
        (f"{text_line(ADD, 'a', 'z')}\n{text_line(ADD, 'b', 'z')}\n{text_line(REMOVE, 'a', 'z')}\n"
         f"{text_line(ADD, 'a', 'z')}\n", "log", ["b", "a"]),
        # a zone emptied is forgotten: it comes back after the others
        (f"{text_line(ADD, 'a', 'z1')}\n{text_line(ADD, 'b', 'z2')}\n{text_line(REMOVE, 'a', 'z1')}\n"
         f"{text_line(ADD, 'c', 'z1')}\n", "log", ["b", "c"]),
        # CRI log files and kubectl logs --timestamps put a prefix before the line
        (f"2026-11-26T10:00:00.123456789Z stderr F {text_line(ADD, 'a', 'z')}\n", "log", ["a"]),
        (f"2026-11-26T10:00:00.123456789Z stderr F {json_line(ADD, 'a', 'z')}\n", "log", ["a"]),
        # braces in a text line's values do not make it JSON
        (text_line(ADD, "a", "{z}") + "\n", "log", ["a"]),
    ],
)
def test_parse_order_text(text: str, kind: str, names: list[str]) -> None:
    found = parse_order_text(text, "order.txt")
    assert (found.kind, found.names) == (kind, names)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("n1\nnot a node name\n", "order.txt: line 2: neither a node name nor a kube-scheduler"),
        ("\n# nothing\n", "order.txt: holds no node names"),
        ("n1\nn2\nn1  # again\n", "order.txt: line 3: n1 is listed already, on line 1: a node joins the node tree once"),
        ('{"kind": "List"}\n', "order.txt: line 1: neither a node name"),
        (f"{STARTING_TEXT}\nI1126 10:00:01.0 1 x.go:1] \"Sync completed\"\n", 'order.txt: a kube-scheduler log without "Added'),
        ('I1126 10:00:00.1 1 node_tree.go:65] "Added node to NodeTree" zone="z"\n', 'order.txt: line 1: "Added node to NodeTree" without'),
        (f"{text_line(ADD, 'a', 'z')}\n{STARTING_TEXT}\n", "order.txt: the last scheduler start the log records has no node"),
        # a text line whose values hold braces is still read as text
        ('I1126 10:00:00.1 1 node_tree.go:65] "Added node to NodeTree" node="" zone="{x}"\n', 'order.txt: line 1: "Added node'),
    ],
)
def test_bad_files_name_the_file_and_line(text: str, message: str) -> None:
    with pytest.raises(InputError) as e:
        parse_order_text(text, "order.txt")
    assert str(e.value).startswith(message)
    assert "\n" not in str(e.value)


@pytest.mark.parametrize(
    ("quoted", "plain"),
    [('"r:\\x00:z"', "r:\x00:z"), ('"a\\"b"', 'a"b'), ('"tab\\tend"', "tab\tend"), ('"\\u00e9t\\u00e9"', "été"), ('"é"', "é")],
)
def test_go_unquote(quoted: str, plain: str) -> None:
    assert go_unquote(quoted) == plain


def test_unreadable_file() -> None:
    with pytest.raises(InputError, match="cannot read the node order"):
        read_order_file("/nonexistent/order.txt")


# --------------------------------------------------------------------------- properties

node_names = st.sampled_from([f"n{i}" for i in range(8)])
zones = st.sampled_from(["", ZA, ZB, "r2:\x00:zc"])
events = st.lists(
    st.one_of(st.tuples(st.just(ADD), node_names, zones), st.tuples(st.just(REMOVE), node_names, zones),
              st.tuples(st.just(START), st.just(""), st.just(""))),
    min_size=1,
    max_size=40,
)


def reference_tree(evs: list[tuple[str, str, str]]) -> list[str]:
    """What the parser must give: the last start's tree, replayed the simple way. A zone keeps the
    place it took when its first node came while any node of it stays (a zone emptied by removals
    and filled again goes to the end), as node_tree.go keeps its zone list."""
    nodes: list[tuple[str, str]] = []
    zone_order: list[str] = []
    for msg, name, zone in evs:
        if msg == START or (msg == ADD and any(n == name for n, _ in nodes)):
            nodes, zone_order = [], []
            if msg == START:
                continue
        if msg == ADD:
            if zone not in zone_order:
                zone_order.append(zone)
            nodes.append((name, zone))
        else:
            nodes = [(n, z) for n, z in nodes if n != name]
            zone_order = [z for z in zone_order if any(nz == z for _, nz in nodes)]
    return [n for z in zone_order for n, nz in nodes if nz == z]


def render(msg: str, name: str, zone: str, as_json: bool) -> str:
    if msg == START:
        return json.dumps({"msg": START, "v": 0, "version": "v1.35.4"}) if as_json else STARTING_TEXT
    return json_line(msg, name, zone) if as_json else text_line(msg, name, zone)


@settings(max_examples=200, deadline=None)
@given(events, st.booleans())
def test_log_replays_like_the_reference(evs: list[tuple[str, str, str]], as_json: bool) -> None:
    expected = reference_tree(evs)
    text = "\n".join(["I1126 09:00:00.0 1 x.go:1] \"noise\""] + [render(*e, as_json) for e in evs])
    if not expected:
        with pytest.raises(InputError):
            parse_order_text(text, "log")
        return
    found = parse_order_text(text, "log")
    assert found.names == expected


LABEL = r"[a-z0-9]([a-z0-9-]{0,10}[a-z0-9])?"


@settings(max_examples=100, deadline=None)
@given(st.lists(st.from_regex(rf"{LABEL}(\.{LABEL}){{0,2}}", fullmatch=True), min_size=1, max_size=20, unique=True),
       st.lists(st.sampled_from(["", "# comment", "   "]), max_size=5))
def test_plain_list_round_trips(names: list[str], noise: list[str]) -> None:
    lines = noise + [f"  {n}  # node" if i % 2 else n for i, n in enumerate(names)]
    assert parse_order_text("\n".join(lines), "list").names == names


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(node_names, zones), min_size=1, max_size=30, unique_by=lambda t: t[0]))
def test_insertion_order_rebuilds_the_same_tree(adds: list[tuple[str, str]]) -> None:
    tree = NodeTree()
    for name, zone in adds:
        tree.add(name, zone)
    again = NodeTree()
    for name in tree.insertion_order():
        again.add(name, tree.zone_of[name])
    assert (again.zones, again.tree) == (tree.zones, tree.tree)


# --------------------------------------------------------------------------- the orders a run may take


def test_random_order_is_a_permutation_repeated_by_its_seed() -> None:
    cluster = make_cluster([make_node(f"n{i}") for i in range(30)])
    a, b = random_order(cluster.nodes, 7), random_order(cluster.nodes, 7)
    assert a == b and a.nodes is not None
    assert sorted(a.nodes) == sorted(n.name for n in cluster.nodes)
    assert a.nodes != random_order(cluster.nodes, 8).nodes
    assert a.to_dict() == {"order": "random", "seed": 7}


def test_random_without_seed_says_its_seed() -> None:
    cluster = make_cluster([make_node("a"), make_node("b")])
    order, notes = NodeOrderSpec("random").resolve(cluster.nodes)
    assert order.seed is not None and f"--seed {order.seed}" in notes[0]


def test_seed_goes_with_random() -> None:
    with pytest.raises(UsageError, match="--seed goes with --node-order random"):
        NodeOrderSpec("name", 3).check()


def test_file_names_not_in_the_snapshot_are_noted(tmp_path: Path) -> None:
    f = tmp_path / "order.txt"
    f.write_text("b\ngone-1\na\ngone-2\n")
    cluster = make_cluster([make_node("a"), make_node("b"), make_node("c")])
    order, notes = NodeOrderSpec(str(f)).resolve(cluster.nodes)
    assert order.nodes == ("b", "a")
    assert [n.name for n in order.insertion(cluster.nodes)] == ["b", "a", "c"]
    assert any("2 node(s) named in" in n and "gone-1, gone-2" in n for n in notes)
    assert any("1 node(s) of the snapshot are not in" in n for n in notes)


def test_queue_order_shuffles_only_with_a_seed() -> None:
    pods = [make_pod(f"p{i}").build() for i in range(10)]
    assert StartupOrder().queue(pods) == pods
    shuffled = StartupOrder(queue_seed=1).queue(pods)
    assert sorted(p.name for p in shuffled) == sorted(p.name for p in pods) and shuffled != pods
