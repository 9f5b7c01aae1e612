"""``simulate --add-nodes T=N|auto`` and ``--max-new-nodes``: the options, read and checked.

The run itself is ``usecases.simulate`` over ``whatif.scaleup``; this module turns the flags into
``AddNodes`` and refuses what they cannot mean, one line naming the flag (exit 2).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated

import typer

from kschedctl.errors import UsageError

if TYPE_CHECKING:
    from kschedctl.whatif.scaleup import AddNodes

#: The largest count of new nodes a flag may ask for (Kubernetes supports clusters of up to 5,000 nodes).
MOST_NEW_NODES = 5000
AUTO = "auto"

AddNodesOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--add-nodes",
        metavar="NODE=N",
        help="Add N new nodes like the existing node NODE (as cluster-autoscaler builds them from a node group's "
        "template node: its labels, taints but the cordon and node-condition ones, capacity, DaemonSet and mirror "
        "pods) before placing the pods; NODE=auto: the least N that places every pod. Repeatable, one node per flag; "
        "-f is optional (the snapshot's pending pods are placed).",
    ),
]
MaxNewNodesOpt = Annotated[
    int | None,
    typer.Option("--max-new-nodes", metavar="M", help="With --add-nodes NODE=auto: try at most M new nodes (default 100)."),
]


@dataclass
class ScaleUpArgs:
    """The ``--add-nodes`` flags, read."""

    specs: list[AddNodes] = field(default_factory=list)
    max_new_nodes: int = 100

    def __bool__(self) -> bool:
        return bool(self.specs)

    def check(self, max_: bool, runs: int | None, drain: bool) -> None:
        """Refuse what ``--add-nodes`` does not combine with."""
        if not self.specs:
            return
        if max_:
            raise UsageError("--add-nodes places the pods of -f (and the pending ones) once: it does not go with --max")
        if runs is not None:
            raise UsageError("--add-nodes does not go with --runs")
        if drain:
            raise UsageError("--add-nodes does not go with --drain, --drain-selector or --scale-down")


def scale_up_args(values: list[str] | None, max_new_nodes: int | None) -> ScaleUpArgs:
    """``--add-nodes`` and ``--max-new-nodes`` read; a malformed flag is a usage error naming it."""
    specs = [parse_add_nodes(v) for v in values or []]
    if max_new_nodes is not None:
        if max_new_nodes < 0 or max_new_nodes > MOST_NEW_NODES:
            raise UsageError(f"--max-new-nodes {max_new_nodes}: give a count of nodes from 0 to {MOST_NEW_NODES}")
        if not any(s.auto for s in specs):
            raise UsageError("--max-new-nodes goes with --add-nodes NODE=auto")
    return ScaleUpArgs(specs, 100 if max_new_nodes is None else max_new_nodes)


def parse_add_nodes(value: str) -> AddNodes:
    """One ``NODE=N`` or ``NODE=auto``."""
    from kschedctl.whatif.scaleup import AddNodes

    name, sep, count = (x.strip() for x in value.partition("="))
    if not sep or not name or not count:
        raise UsageError(f"--add-nodes {value!r}: give NODE=N or NODE=auto (NODE an existing node, N a count of new nodes)")
    if count == AUTO:
        return AddNodes(name, None)
    if not re.fullmatch(r"[0-9]+", count) or int(count) > MOST_NEW_NODES:
        raise UsageError(f"--add-nodes {value}: {count!r} is not a count of new nodes: give an integer from 0 to "
                         f"{MOST_NEW_NODES}, or auto")
    return AddNodes(name, int(count))
