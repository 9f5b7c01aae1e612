"""ImageLocality: prefer nodes that already hold the pod's container images.

Score only (no PreScore, no NormalizeScore). For every init container and every
container (duplicates count again), the image name is normalized by appending
``:latest`` when it has no tag after its last ``/`` (digests keep their ``@sha256:``
and are left alone; no registry or ``library/`` prefix is added), then looked up
among the node's reported image names as given. Each image found adds its size
scaled by how widespread it is (size * nodesHavingIt / totalNodes, in float64,
truncated). The sum is clamped to [23MiB, 1000MiB * number of containers incl.
init containers] and mapped linearly onto 0..100 with integer division.

Upstream model: ``pkg/scheduler/framework/plugins/imagelocality/image_locality.go``.
"""

from __future__ import annotations

from kschedctl.framework import signers
from kschedctl.framework.cycle_state import CycleState
from kschedctl.framework.interfaces import Handle
from kschedctl.framework.signers import SignFragment
from kschedctl.framework.status import MAX_NODE_SCORE, Status
from kschedctl.framework.types import ImageStateSummary, NodeInfo
from kschedctl.plugins.helper import go_div
from kschedctl.snapshot.model import Pod

NAME = "ImageLocality"

MB = 1024 * 1024
MIN_THRESHOLD = 23 * MB
MAX_CONTAINER_THRESHOLD = 1000 * MB


def normalized_image_name(name: str) -> str:
    """Append ``:latest`` when the name has no ``:`` after its last ``/``."""
    if name.rfind(":") <= name.rfind("/"):
        return name + ":latest"
    return name


def scaled_image_score(state: ImageStateSummary, total_num_nodes: int) -> int:
    spread = float(state.num_nodes) / float(total_num_nodes)
    return int(float(state.size) * spread)


def sum_image_scores(node_info: NodeInfo, pod: Pod, total_num_nodes: int) -> int:
    states = node_info.image_states
    total = 0
    for c in (*pod.init_containers, *pod.containers):
        st = states.get(normalized_image_name(c.image))
        if st is not None:
            total += scaled_image_score(st, total_num_nodes)
    return total


def calculate_priority(sum_scores: int, num_containers: int) -> int:
    max_threshold = MAX_CONTAINER_THRESHOLD * num_containers
    if sum_scores < MIN_THRESHOLD:
        sum_scores = MIN_THRESHOLD
    elif sum_scores > max_threshold:
        sum_scores = max_threshold
    return go_div(MAX_NODE_SCORE * (sum_scores - MIN_THRESHOLD), max_threshold - MIN_THRESHOLD)


class ImageLocality:
    name = NAME

    def __init__(self, handle: Handle) -> None:
        self.handle = handle

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status]:
        total_nodes = len(self.handle.snapshot.node_info_list)
        image_scores = sum_image_scores(node_info, pod, total_nodes)
        return calculate_priority(image_scores, len(pod.init_containers) + len(pod.containers)), Status()

    def score_extensions(self) -> None:
        return None

    def sign_pod(self, pod: Pod) -> tuple[list[SignFragment] | None, Status]:
        """OpportunisticBatching: the score depends on the pod's (normalized) image names only."""
        return [SignFragment(signers.IMAGE_NAMES, signers.image_names(pod))], Status()

    def score_nodes(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> tuple[list[int], Status]:
        """``score`` for a list of nodes: the image names are normalized once."""
        total_nodes = len(self.handle.snapshot.node_info_list)
        images = [normalized_image_name(c.image) for c in (*pod.init_containers, *pod.containers)]
        n_containers = len(images)
        none_held = calculate_priority(0, n_containers)
        out: list[int] = []
        for ni in nodes:
            states = ni.image_states
            total = 0
            if states:
                for image in images:
                    st = states.get(image)
                    if st is not None:
                        total += scaled_image_score(st, total_nodes)
            out.append(calculate_priority(total, n_containers) if total else none_held)
        return out, Status()


def new(args: None, handle: Handle) -> ImageLocality:
    return ImageLocality(handle)
