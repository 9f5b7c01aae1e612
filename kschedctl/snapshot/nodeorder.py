"""The order kube-scheduler was handed the nodes and pending pods when it started: ``--node-order``.

The scheduler's node tree (``pkg/scheduler/backend/cache/node_tree.go``) keeps, per zone, the
nodes in the order its informer delivered them, and lists them zone-interleaved (see
``framework.nodeinfos.node_tree_order``); its queue takes the pending pods of equal priority in
the order they were added at start-up. Both orders come from the informers' initial list, which
client-go's streaming list replays from a map: they change on every scheduler restart and cannot
be read from the API server. This module says which order a run assumes (``StartupOrder``, held by
the ``Cluster`` so every Snapshot built from it follows it):

* ``name``: nodes by name, pods by namespace/name (the API server's list order, kschedctl's default);
* ``random``: a random permutation of both, from a seed (printed, so a run can be repeated);
* a FILE: a plain list of node names (one a line, ``#`` comments), or the scheduler's own log at
  ``-v=2`` or higher, whose ``"Added node to NodeTree"`` / ``"Removed node from NodeTree"`` lines
  (klog text or JSON format) replay the tree; a restart (``"Starting Kubernetes Scheduler"``, or a
  node added again without a removal) starts a new tree, and the last one is the scheduler's.
"""

from __future__ import annotations

import json
import random
import re
import secrets
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kschedctl.errors import InputError, UsageError
from kschedctl.kube.names import dns1123_subdomain_errors
from kschedctl.kube.topology import zone_key

if TYPE_CHECKING:
    from kschedctl.snapshot.model import Node, Pod

NAME = "name"
RANDOM = "random"

ADDED = "Added node to NodeTree"
REMOVED = "Removed node from NodeTree"
STARTING = "Starting Kubernetes Scheduler"


@dataclass(frozen=True)
class StartupOrder:
    """The nodes' order of insertion into the node tree and the start-up queue's order of pending pods.

    ``nodes``: node names in insertion order (None: by name); nodes of the cluster it does not name
    follow in name order, as nodes added after the scheduler started. ``queue_seed``: the pending
    pods queued at start-up are shuffled with it (None: in list order). ``source`` and ``seed`` say
    where the order came from, for the output."""

    nodes: tuple[str, ...] | None = None
    queue_seed: int | None = None
    source: str = NAME
    seed: int | None = None

    def insertion(self, nodes: Iterable[Node]) -> list[Node]:
        """``nodes`` in the order the scheduler's informer added them to the node tree."""
        by_name = sorted(nodes, key=lambda n: n.name)
        if self.nodes is None:
            return by_name
        index = {name: i for i, name in enumerate(self.nodes)}
        return sorted(by_name, key=lambda n: index.get(n.name, len(index)))

    def queue(self, pods: list[Pod]) -> list[Pod]:
        """The pending pods in the order the queue took them at start-up (from their list order)."""
        if self.queue_seed is None:
            return pods
        out = list(pods)
        random.Random(self.queue_seed).shuffle(out)
        return out

    @property
    def by_name(self) -> bool:
        """The default: the API server's list order."""
        return self.source == NAME

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"order": self.source}
        if self.seed is not None:
            out["seed"] = self.seed
        return out


def random_order(nodes: Iterable[Node], seed: int) -> StartupOrder:
    """A random insertion order of ``nodes`` and a random start-up queue, both from ``seed``."""
    rng = random.Random(seed)
    names = sorted(n.name for n in nodes)
    rng.shuffle(names)
    return StartupOrder(tuple(names), rng.randrange(2**32), RANDOM, seed)


def new_seed() -> int:
    """A seed for a run that was given none (printed with the run, so it can be repeated)."""
    return secrets.randbelow(2**31)


# --------------------------------------------------------------------------- FILE


@dataclass
class OrderFile:
    """What a ``--node-order`` FILE says: the node tree's insertion order, zone by zone."""

    path: str
    #: "list" (one node name a line) or "log" (kube-scheduler's NodeTree lines).
    kind: str
    names: list[str] = field(default_factory=list)
    #: From a log: each node's zone key as the scheduler logged it.
    zones: dict[str, str] = field(default_factory=dict)
    #: From a log: how many scheduler starts it holds (the last one's tree is used).
    starts: int = 0


class NodeTree:
    """The node tree as the log's lines build it (``node_tree.go``'s addNode/removeNode)."""

    def __init__(self) -> None:
        self.zones: list[str] = []
        self.tree: dict[str, list[str]] = {}
        self.zone_of: dict[str, str] = {}

    def add(self, name: str, zone: str) -> None:
        if zone not in self.tree:
            self.zones.append(zone)
            self.tree[zone] = []
        self.tree[zone].append(name)
        self.zone_of[name] = zone

    def remove(self, name: str) -> None:
        zone = self.zone_of.pop(name, None)
        if zone is None:
            return  # the scheduler logs an error and changes nothing
        members = self.tree[zone]
        members.remove(name)
        if not members:
            del self.tree[zone]
            self.zones.remove(zone)

    def insertion_order(self) -> list[str]:
        """Node names zone by zone, each zone's in insertion order: inserting them in this order
        rebuilds the same tree (zones in the same first-seen order)."""
        return [name for zone in self.zones for name in self.tree[zone]]


_KV_RE = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*")')
_GO_ESCAPE_RE = re.compile(r'\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|[0-7]{3}|.)')
_SIMPLE_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v", "\\": "\\", '"': '"', "'": "'"}


def go_unquote(quoted: str) -> str:
    """The string a Go ``strconv.Quote`` wrote (klog's text format quotes string values so: the zone
    key's NUL separator is written ``\\x00``)."""
    body = quoted[1:-1] if len(quoted) >= 2 and quoted[0] == quoted[-1] == '"' else quoted

    def one(m: re.Match[str]) -> str:
        e = m[1]
        if e[0] in "xuU" and len(e) > 1:
            return chr(int(e[1:], 16))
        if len(e) == 3:
            return chr(int(e, 8))
        return _SIMPLE_ESCAPES.get(e, e)

    return _GO_ESCAPE_RE.sub(one, body)


def _text_event(line: str) -> tuple[str, str, str] | None:
    """(message, node, zone) of a klog text line this module reads, else None."""
    for msg in (ADDED, REMOVED, STARTING):
        at = line.find(f'"{msg}"')
        if at < 0:
            continue
        values = {k: go_unquote(v) for k, v in _KV_RE.findall(line[at + len(msg) + 2 :])}
        return msg, values.get("node", ""), values.get("zone", "")
    return None


def _json_event(line: str) -> tuple[str, str, str] | None:
    """(message, node, zone) of a JSON log line this module reads (``klog.KObj`` of a node is
    ``{"name": ...}``), else None."""
    start = line.find("{")
    if start < 0 or '"msg"' not in line:
        return None
    try:
        obj = json.loads(line[start:])
    except ValueError:
        return None
    if not isinstance(obj, dict) or obj.get("msg") not in (ADDED, REMOVED, STARTING):
        return None
    node = obj.get("node")
    name = node.get("name") if isinstance(node, dict) else node
    zone = obj.get("zone")
    return str(obj["msg"]), str(name or ""), str(zone or "")


def log_event(line: str) -> tuple[str, str, str] | None:
    """The NodeTree or start-up event a scheduler log line records (text or JSON format), else None."""
    if ADDED not in line and REMOVED not in line and STARTING not in line:
        return None
    event = _json_event(line) if "{" in line else None
    return event or _text_event(line)


def _bad_line(path: str, number: int, why: str) -> InputError:
    return InputError(why, source=path, obj=f"line {number}")


def parse_order_text(text: str, path: str) -> OrderFile:
    """A plain list of node names, or a kube-scheduler log with NodeTree lines (see the module doc)."""
    lines = text.splitlines()
    if any(log_event(line) is not None for line in lines):
        return _parse_log(lines, path)
    names: list[str] = []
    seen: dict[str, int] = {}  # name -> its line
    for number, line in enumerate(lines, 1):
        name = line.split("#", 1)[0].strip()
        if not name:
            continue
        if dns1123_subdomain_errors(name):
            raise _bad_line(path, number, f"neither a node name nor a kube-scheduler \"{ADDED}\" log line: {name[:60]!r}")
        if name in seen:
            raise _bad_line(path, number, f"{name} is listed already, on line {seen[name]}: a node joins the node tree once")
        seen[name] = number
        names.append(name)
    if not names:
        raise InputError("holds no node names (one a line) and no kube-scheduler NodeTree log lines", source=path)
    return OrderFile(path, "list", names)


def _parse_log(lines: Sequence[str], path: str) -> OrderFile:
    """The tree of the last scheduler start the log holds."""
    tree, fresh, starts = NodeTree(), True, 0  # starts: the trees that had a node added
    for number, line in enumerate(lines, 1):
        event = log_event(line)
        if event is None:
            continue
        msg, name, zone = event
        if msg == STARTING or (msg == ADDED and name in tree.zone_of):
            tree, fresh = NodeTree(), True
            if msg == STARTING:
                continue
        if not name:
            raise _bad_line(path, number, f'"{msg}" without a node name')
        if msg == ADDED:
            tree.add(name, zone)
            starts += fresh
            fresh = False
        else:
            tree.remove(name)
    if not starts:
        raise InputError(f'a kube-scheduler log without "{ADDED}" lines (the scheduler logs them at -v=2 and above)', source=path)
    order = tree.insertion_order()
    if not order:
        raise InputError("the last scheduler start the log records has no node left in its NodeTree", source=path)
    return OrderFile(path, "log", order, dict(tree.zone_of), starts)


def read_order_file(path: str) -> OrderFile:
    """``parse_order_text`` of the file at ``path``."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError as e:
        raise InputError(f"cannot read the node order: {e.strerror or e}", source=path) from None
    return parse_order_text(text, path)


# --------------------------------------------------------------------------- --node-order / --seed


@dataclass(frozen=True)
class NodeOrderSpec:
    """``--node-order name|random|FILE`` and ``--seed``, as given (checked by ``check``)."""

    value: str = NAME
    seed: int | None = None

    def check(self) -> None:
        if self.seed is not None and self.value != RANDOM:
            raise UsageError("--seed goes with --node-order random (and simulate --runs)")

    def resolve(self, nodes: Sequence[Node]) -> tuple[StartupOrder, list[str]]:
        """The order for a cluster of ``nodes`` and the notes that say what it is (and what a FILE did not match)."""
        self.check()
        if self.value == NAME:
            return StartupOrder(), []
        if self.value == RANDOM:
            seed = self.seed if self.seed is not None else new_seed()
            note = (f"node order: random (seed {seed}; --node-order random --seed {seed} repeats it): nodes joined the "
                    "node tree, and pending pods the start-up queue, in a shuffled order")
            return random_order(nodes, seed), [note]
        return file_order(read_order_file(self.value), nodes)


def _few(names: list[str], limit: int = 5) -> str:
    more = f" +{len(names) - limit}" if len(names) > limit else ""
    return ", ".join(names[:limit]) + more


def file_order(found: OrderFile, nodes: Sequence[Node]) -> tuple[StartupOrder, list[str]]:
    """The insertion order a FILE gives for a cluster of ``nodes``, with notes on the names that do not match."""
    present = {n.name: n for n in nodes}
    unknown = [n for n in found.names if n not in present]
    listed = set(found.names)
    missing = sorted(n for n in present if n not in listed)
    what = "the scheduler's node tree from the log" if found.kind == "log" else "the listed order"
    notes = [f"node order: {what} {found.path} ({len(found.names) - len(unknown)} of its {len(found.names)} node(s) "
             "in the snapshot)"]
    if found.starts > 1:
        notes.append(f"{found.path} records {found.starts} scheduler starts: the node tree of the last one is used")
    if unknown:
        notes.append(f"{len(unknown)} node(s) named in {found.path} are not in the snapshot (ignored): {_few(unknown)}")
    if missing:
        notes.append(f"{len(missing)} node(s) of the snapshot are not in {found.path}: they follow its nodes in name "
                     f"order, as nodes added after the scheduler started would: {_few(missing)}")
    moved = [n for n, z in found.zones.items() if n in present and zone_key(present[n].labels) != z]
    if moved:
        notes.append(f"{len(moved)} node(s) are in another zone in the snapshot than in {found.path}: the snapshot's "
                     f"zone is used: {_few(sorted(moved))}")
    names = tuple(n for n in found.names if n in present)
    return StartupOrder(names, None, found.path), notes
