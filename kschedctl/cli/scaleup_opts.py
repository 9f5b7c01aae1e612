"""``simulate --add-nodes T=N|auto``, ``explain --scale-up`` and their ``--max-new-nodes``: the options, read and checked.

The runs themselves are ``usecases.simulate`` over ``whatif.scaleup`` and ``usecases.explain_*`` over
``whatif.scaleup_groups``; this module turns the flags into ``AddNodes`` and a count, and refuses what
they cannot mean, one line naming the flag (exit 2).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated

import typer

from kschedctl.errors import UsageError
from kschedctl.whatif import DEFAULT_MAX_NEW_NODES

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
    typer.Option("--max-new-nodes", metavar="M", help=f"With --add-nodes NODE=auto or --scale-up: try at most M new nodes of one template (default {DEFAULT_MAX_NEW_NODES})."),
]


@dataclass
class ScaleUpArgs:
    """The ``--add-nodes`` flags, read."""

    specs: list[AddNodes] = field(default_factory=list)
    max_new_nodes: int = DEFAULT_MAX_NEW_NODES

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
    return ScaleUpArgs(specs, max_new_nodes_arg(max_new_nodes, any(s.auto for s in specs), "--add-nodes NODE=auto"))


def max_new_nodes_arg(value: int | None, searched: bool, needs: str) -> int:
    """``--max-new-nodes`` checked (a count, and only where a least count is searched: ``needs`` names
    the flag that asks for one); the default when not given."""
    if value is None:
        return DEFAULT_MAX_NEW_NODES
    if value < 0 or value > MOST_NEW_NODES:
        raise UsageError(f"--max-new-nodes {value}: give a count of nodes from 0 to {MOST_NEW_NODES}")
    if not searched:
        raise UsageError(f"--max-new-nodes goes with {needs}")
    return value


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
