"""ImageLocality: image-name normalization, spread scaling, thresholds scaled by the container count."""

from __future__ import annotations

import pytest

from kschedctl.framework.cycle_state import CycleState
from kschedctl.framework.interfaces import extension_points_of
from kschedctl.plugins import imagelocality as il
from tests.builders import FakeHandle, NodeBuilder, PodBuilder, make_node, make_pod, make_snapshot

MB = 1024 * 1024


@pytest.mark.parametrize(
    ("name", "want"),
    [
        pytest.param("nginx", "nginx:latest", id="bare"),
        pytest.param("nginx:1.25", "nginx:1.25", id="tagged"),
        pytest.param("library/nginx", "library/nginx:latest", id="path"),
        pytest.param("registry:5000/app", "registry:5000/app:latest", id="registry-port-no-tag"),
        pytest.param("registry:5000/app:v2", "registry:5000/app:v2", id="registry-port-tag"),
        pytest.param("app@sha256:0123", "app@sha256:0123", id="digest-untouched"),
        pytest.param("", ":latest", id="empty"),
    ],
)
def test_normalized_image_name(name: str, want: str) -> None:
    assert il.normalized_image_name(name) == want


def _image_pod(*images: str, init: tuple[str, ...] = ()) -> PodBuilder:
    p = make_pod().set("spec.containers", [{"name": f"c{i}", "image": im} for i, im in enumerate(images)])
    if init:
        p.set("spec.initContainers", [{"name": f"i{i}", "image": im} for i, im in enumerate(init)])
    return p


@pytest.mark.parametrize(
    ("pod", "nodes", "want"),
    [
        # 500MiB on 1 of 2 nodes -> 250MiB -> 100*(250-23)/(1000-23) MiB = 23.
        pytest.param(
            _image_pod("nginx:1.25"), [make_node("a").image("nginx:1.25", size=500 * MB), make_node("b")],
            {"a": 23, "b": 0}, id="spread-halves-size",
        ),
        # The pod's "nginx" becomes "nginx:latest"; node names are used as reported.
        pytest.param(
            _image_pod("nginx"), [make_node("a").image("nginx:latest", size=2000 * MB)], {"a": 100}, id="latest-added",
        ),
        pytest.param(
            _image_pod("nginx"), [make_node("a").image("docker.io/library/nginx:latest", size=2000 * MB)],
            {"a": 0}, id="no-registry-prefix-added",
        ),
        # Any of an image's names matches.
        pytest.param(
            _image_pod("app:v1"), [make_node("a").image("repo/app@sha256:1", "app:v1", size=2000 * MB)],
            {"a": 100}, id="second-name-matches",
        ),
        pytest.param(_image_pod("tiny:1"), [make_node("a").image("tiny:1", size=10 * MB)], {"a": 0}, id="below-min-threshold"),
        # Two containers: the max threshold doubles; 1000MiB -> 100*(1000-23)/(2000-23) = 49.
        pytest.param(
            _image_pod("big:1", "missing:1"), [make_node("a").image("big:1", size=1000 * MB)], {"a": 49}, id="two-containers",
        ),
        # The same image twice counts twice.
        pytest.param(
            _image_pod("big:1", "big:1"), [make_node("a").image("big:1", size=1000 * MB)], {"a": 100}, id="duplicate-image-counts-twice",
        ),
        # Init containers count in the sum and in the container count.
        pytest.param(
            _image_pod("missing:1", init=("big:1",)), [make_node("a").image("big:1", size=1000 * MB)], {"a": 49}, id="init-container",
        ),
        # 300MiB on 2 of 3 nodes -> 200MiB -> 18; the node without it gets 0.
        pytest.param(
            _image_pod("img:2"),
            [make_node("a").image("img:2", size=300 * MB), make_node("b").image("img:2", size=300 * MB), make_node("c")],
            {"a": 18, "b": 18, "c": 0}, id="two-of-three",
        ),
    ],
)
def test_score(pod: PodBuilder, nodes: list[NodeBuilder], want: dict[str, int]) -> None:
    snap = make_snapshot(nodes)
    pl = il.new(None, FakeHandle(snap))
    p = pod.build()
    got = {}
    for ni in snap.node_info_list:
        v, st = pl.score(CycleState(), p, ni)
        assert st.is_success()
        got[ni.name] = v
    assert got == want


def test_calculate_priority_bounds() -> None:
    assert il.calculate_priority(0, 1) == 0
    assert il.calculate_priority(23 * MB, 1) == 0
    assert il.calculate_priority(10_000 * MB, 1) == 100
    assert il.calculate_priority(10_000 * MB, 3) == 100


def test_score_only_without_normalize() -> None:
    pl = il.new(None, FakeHandle())
    assert extension_points_of(pl) == ["score"]
    assert pl.score_extensions() is None
