"""Pod requests as kube-scheduler computes them; the integer fast path must equal the exact path."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kschedctl.framework.resources import (
    DEFAULT_RESIZE_RULE,
    PodResourceMemo,
    _exact_pod_resource,
    calculate_pod_resource,
)
from tests.builders import make_pod


@pytest.mark.parametrize(
    ("builder", "cpu", "mem", "non0_cpu", "non0_mem"),
    [
        (make_pod().req(cpu="500m", memory="1Gi"), 500, 2**30, 500, 2**30),
        (make_pod().req(cpu="1"), 1000, 0, 1000, 200 * 2**20),
        (make_pod(), 0, 0, 100, 200 * 2**20),
        (make_pod().container("a", cpu="100m").container("b", memory="1Gi"), 100, 2**30, 200, 2**30 + 200 * 2**20),
        # init containers: max(sum of containers, each init container's peak)
        (make_pod().req(cpu="500m").init_container("i", cpu="2"), 2000, 0, 2000, 200 * 2**20),
        # sidecar: added to the containers and running during later init containers
        (make_pod().req(cpu="500m").init_container("s", sidecar=True, cpu="200m").init_container("i", cpu="1"), 1200, 0, 1200, 400 * 2**20),
        # overhead is added
        (make_pod().req(cpu="500m", memory="1Gi").overhead(cpu="250m", memory="120Mi"), 750, 2**30 + 120 * 2**20, 750, 2**30 + 120 * 2**20),
        # pod-level requests replace the container aggregate
        (make_pod().req(cpu="500m").pod_level(requests={"cpu": "2", "memory": "1Gi"}), 2000, 2**30, 2000, 2**30),
        # fractional millicores are summed before rounding up
        (make_pod().container("a", cpu="0.5m").container("b", cpu="0.5m"), 1, 0, 1, 400 * 2**20),
    ],
)
def test_pod_resource(builder, cpu: int, mem: int, non0_cpu: int, non0_mem: int) -> None:  # type: ignore[no-untyped-def]
    r = calculate_pod_resource(builder.build())
    assert (r.resource.milli_cpu, r.resource.memory, r.non0_cpu, r.non0_mem) == (cpu, mem, non0_cpu, non0_mem)


@given(
    st.lists(
        st.tuples(
            st.one_of(st.none(), st.integers(0, 64000).map(lambda m: f"{m}m"), st.sampled_from(["0.5m", "1.25", "3"])),
            st.one_of(st.none(), st.integers(0, 2**36).map(str), st.sampled_from(["1Gi", "1.5Mi", "0.5"])),
        ),
        min_size=1,
        max_size=4,
    )
)
def test_fast_path_equals_exact(containers: list[tuple[str | None, str | None]]) -> None:
    b = make_pod()
    for i, (cpu, mem) in enumerate(containers):
        req = {k: v for k, v in (("cpu", cpu), ("memory", mem)) if v is not None}
        b.container(f"c{i}", **req)
    pod = b.build()
    assert calculate_pod_resource(pod) == _exact_pod_resource(pod)


@given(
    st.lists(
        st.lists(
            st.tuples(st.sampled_from([None, "100m", "1", "0.5m"]), st.sampled_from([None, "1Gi", "0.5", "0"])),
            min_size=1,
            max_size=3,
        ),
        min_size=1,
        max_size=8,
    ),
    st.booleans(),
)
def test_memo_gives_each_pod_its_own_resource(pods: list[list[tuple[str | None, str | None]]], init: bool) -> None:
    """Pods whose quantities are the same objects (as in a loaded cluster) share a shape's sums; every
    pod still gets exactly ``calculate_pod_resource``'s answer, whatever the order and the containers' split."""
    canonical: dict[Fraction, Fraction] = {}
    built = []
    for containers in pods:
        b = make_pod()
        for i, (cpu, mem) in enumerate(containers):
            b.container(f"c{i}", **{k: v for k, v in (("cpu", cpu), ("memory", mem)) if v is not None})
        if init:
            b.init_container("i", cpu="2")
        pod = b.build()
        for c in pod.containers:
            c.requests.update({k: canonical.setdefault(q, q) for k, q in c.requests.items()})
        built.append(pod)
    memo = PodResourceMemo(DEFAULT_RESIZE_RULE)
    for pod in built + built[::-1]:
        assert memo.of(pod) == calculate_pod_resource(pod)


def test_memo_tells_no_container_from_one_without_requests() -> None:
    one = make_pod().build()
    none = make_pod().build()
    none.containers = []
    memo = PodResourceMemo(DEFAULT_RESIZE_RULE)
    assert memo.of(one) == calculate_pod_resource(one)
    assert memo.of(none) == calculate_pod_resource(none) != calculate_pod_resource(one)
