"""ImageLocality: prefer nodes that already hold the pod's container images.

Score only (no PreScore, no NormalizeScore). For every init container and every
container (duplicates count again), and from v1.36 every image volume
(``spec.volumes[].image.reference``), the image name is normalized by appending
``:latest`` when it has no tag after its last ``/`` (digests keep their ``@sha256:``
and are left alone; no registry or ``library/`` prefix is added), then looked up
among the node's reported image names as given. Each image found adds its size
scaled by how widespread it is (size * nodesHavingIt / totalNodes, in float64,
truncated). The sum is clamped to [23MiB, 1000MiB * number of images] and mapped
linearly onto 0..100 with integer division.

Two rules changed with no gate (``kube.rules``): v1.36 added image volumes to the sum
(ImageLocalityImageVolumes) while the threshold still counted the containers only, so an
image volume could lift a node above what the same image in a container would; v1.37
counts the image volumes in the threshold too (ImageLocalityVolumeThreshold).

Upstream model: ``pkg/scheduler/framework/plugins/imagelocality/image_locality.go``.
"""

from __future__ import annotations

from dataclasses import dataclass

from kschedctl.framework import signers
from kschedctl.framework.cycle_state import CycleState
from kschedctl.framework.interfaces import Handle
from kschedctl.framework.signers import SignFragment
from kschedctl.framework.status import MAX_NODE_SCORE, Status
from kschedctl.framework.types import ImageStateSummary, NodeInfo
from kschedctl.kube.features import Features
from kschedctl.kube.rules import IMAGE_LOCALITY_IMAGE_VOLUMES, IMAGE_LOCALITY_VOLUME_THRESHOLD
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


def volume_images(pod: Pod) -> list[str]:
    """The references of the pod's image volumes (a volume with an ``image`` source), as given."""
    out: list[str] = []
    for v in pod.volumes:
        image = v.get("image")
        if isinstance(image, dict):
            out.append(str(image.get("reference") or ""))
    return out


@dataclass(frozen=True)
class ImageRules:
    """What a version's ImageLocality reads of a pod: which images it sums, how many the threshold counts."""

    #: v1.36: image volumes add to the sum.
    volumes_in_sum: bool
    #: v1.37: image volumes count in the threshold too.
    volumes_in_threshold: bool

    @classmethod
    def of(cls, features: Features) -> ImageRules:
        return cls(features.follows(IMAGE_LOCALITY_IMAGE_VOLUMES), features.follows(IMAGE_LOCALITY_VOLUME_THRESHOLD))

    def images(self, pod: Pod) -> list[str]:
        """The normalized names summed: init containers', containers' and perhaps image volumes'."""
        names = [c.image for c in (*pod.init_containers, *pod.containers)]
        if self.volumes_in_sum:
            names.extend(volume_images(pod))
        return [normalized_image_name(n) for n in names]

    def threshold_count(self, pod: Pod) -> int:
        """How many images the max threshold is scaled by."""
        n = len(pod.init_containers) + len(pod.containers)
        return n + len(volume_images(pod)) if self.volumes_in_threshold else n


def sum_image_scores(node_info: NodeInfo, images: list[str], total_num_nodes: int) -> int:
    """The spread-scaled sizes of ``images`` (normalized names) that the node holds."""
    states = node_info.image_states
    total = 0
    for image in images:
        st = states.get(image)
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
        self.rules = ImageRules.of(handle.features)

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status]:
        total_nodes = len(self.handle.snapshot.node_info_list)
        image_scores = sum_image_scores(node_info, self.rules.images(pod), total_nodes)
        return calculate_priority(image_scores, self.rules.threshold_count(pod)), Status()

    def score_extensions(self) -> None:
        return None

    def sign_pod(self, pod: Pod) -> tuple[list[SignFragment] | None, Status]:
        """OpportunisticBatching: the score depends on the pod's (normalized) image names only."""
        return [SignFragment(signers.IMAGE_NAMES, signers.image_names(pod))], Status()

    def score_nodes(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> tuple[list[int], Status]:
        """``score`` for a list of nodes: the image names are normalized once."""
        total_nodes = len(self.handle.snapshot.node_info_list)
        images = self.rules.images(pod)
        n_images = self.rules.threshold_count(pod)
        none_held = calculate_priority(0, n_images)
        out: list[int] = []
        for ni in nodes:
            total = sum_image_scores(ni, images, total_nodes) if ni.image_states else 0
            out.append(calculate_priority(total, n_images) if total else none_held)
        return out, Status()


def new(args: None, handle: Handle) -> ImageLocality:
    return ImageLocality(handle)
