"""NodeResourcesFit: Filter reasons/codes, PreFilter/PreScore statuses, the three scoring strategies."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kschedctl.config.args import NodeResourcesFitArgs
from kschedctl.framework.cycle_state import CycleState
from kschedctl.framework.status import Code, Status
from kschedctl.framework.types import NodeInfo
from kschedctl.plugins.helper import go_round
from kschedctl.plugins.noderesources import fit
from tests.builders import FakeHandle, NodeBuilder, PodBuilder, make_node, make_pod, node_info


def _plugin(args: dict[str, Any] | None = None) -> fit.Fit:
    model = None if args is None else NodeResourcesFitArgs.model_validate(args)
    return fit.new(model, FakeHandle())


def run_filter(pod: PodBuilder, ni: NodeInfo, args: dict[str, Any] | None = None) -> Status:
    pl = _plugin(args)
    p = pod.build()
    st = CycleState()
    result, s = pl.pre_filter(st, p, [ni])
    assert result is None and s.is_success()
    return pl.filter(st, p, ni)


def run_score(pod: PodBuilder, ni: NodeInfo, args: dict[str, Any] | None = None) -> int:
    pl = _plugin(args)
    p = pod.build()
    st = CycleState()
    assert pl.pre_score(st, p, [ni]).code == Code.SUCCESS
    v, s = pl.score(st, p, ni)
    assert s.is_success()
    return v


def existing(cpu: str = "", memory: str = "", extra: dict[str, str] | None = None) -> PodBuilder:
    """A pod already on the node with these requests (none at all when empty)."""
    b = make_pod(f"existing-{cpu}-{memory}")
    req: dict[str, str] = {}
    if cpu:
        req["cpu"] = cpu
    if memory:
        req["memory"] = memory
    req.update(extra or {})
    return b.res(req) if req else b


def node(extra: dict[str, str] | None = None, pods: str = "110") -> NodeBuilder:
    """Node n1 with 4 cpu, 16Gi memory, ``pods`` pods, plus ``extra`` allocatable."""
    alloc = {"cpu": "4", "memory": "16Gi", "pods": pods}
    alloc.update(extra or {})
    return make_node("n1").set("status.allocatable", alloc)


U = Code.UNSCHEDULABLE
UU = Code.UNSCHEDULABLE_AND_UNRESOLVABLE


# ---------------------------------------------------------------------------------------------
# Filter
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("pod", "ni", "args", "code", "reasons"),
    [
        pytest.param(make_pod().req(cpu="1", memory="1Gi"), node_info(node(), existing("2", "2Gi")), None, Code.SUCCESS, [], id="fits"),
        pytest.param(make_pod().req(cpu="1"), node_info(node(), existing("3500m")), None, U, ["Insufficient cpu"], id="cpu-short"),
        pytest.param(make_pod().req(cpu="5"), node_info(node()), None, UU, ["Insufficient cpu"], id="cpu-over-allocatable"),
        pytest.param(
            make_pod().req(cpu="2", memory="2Gi"),
            node_info(node(), existing("3", "15Gi")),
            None,
            U,
            ["Insufficient cpu", "Insufficient memory"],
            id="cpu-and-memory",
        ),
        pytest.param(
            make_pod().req(cpu="2", memory="17Gi"),
            node_info(node(), existing("3", "1Gi")),
            None,
            UU,
            ["Insufficient cpu", "Insufficient memory"],
            id="one-unresolvable-makes-status-unresolvable",
        ),
        pytest.param(make_pod(), node_info(node(pods="1"), existing()), None, U, ["Too many pods"], id="too-many-pods"),
        pytest.param(
            make_pod().req(cpu="8"),
            node_info(node(pods="1"), existing()),
            None,
            UU,
            ["Too many pods", "Insufficient cpu"],
            id="pods-then-cpu",
        ),
        pytest.param(make_pod(), node_info(node(pods="0")), None, U, ["Too many pods"], id="zero-pods-allowed"),
        pytest.param(
            make_pod().req(ephemeral_storage="1Gi"),
            node_info(node()),
            None,
            UU,
            ["Insufficient ephemeral-storage"],
            id="ephemeral-storage-absent-on-node",
        ),
        pytest.param(
            make_pod().req(ephemeral_storage="6Gi"),
            node_info(node({"ephemeral-storage": "10Gi"}), existing(extra={"ephemeral-storage": "5Gi"})),
            None,
            U,
            ["Insufficient ephemeral-storage"],
            id="ephemeral-storage-short",
        ),
        pytest.param(
            make_pod().res({"example.com/foo": "1"}),
            node_info(node()),
            None,
            UU,
            ["Insufficient example.com/foo"],
            id="extended-absent-on-node",
        ),
        pytest.param(
            make_pod().res({"example.com/foo": "1"}),
            node_info(node()),
            {"ignoredResources": ["example.com/foo"]},
            Code.SUCCESS,
            [],
            id="extended-ignored-by-name",
        ),
        pytest.param(
            make_pod().res({"example.com/foo": "1"}),
            node_info(node()),
            {"ignoredResourceGroups": ["example.com"]},
            Code.SUCCESS,
            [],
            id="extended-ignored-by-group",
        ),
        pytest.param(
            make_pod().res({"example.com/foo": "1"}),
            node_info(node()),
            {"ignoredResourceGroups": ["example"]},
            UU,
            ["Insufficient example.com/foo"],
            id="group-must-match-whole-prefix",
        ),
        pytest.param(
            make_pod().res({"hugepages-2Mi": "4Mi"}),
            node_info(node()),
            {"ignoredResources": ["hugepages-2Mi"]},
            UU,
            ["Insufficient hugepages-2Mi"],
            id="hugepages-never-ignored",
        ),
        pytest.param(
            make_pod().res({"hugepages-2Mi": "4Mi"}),
            node_info(node({"hugepages-2Mi": "8Mi"}), existing(extra={"hugepages-2Mi": "6Mi"})),
            None,
            U,
            ["Insufficient hugepages-2Mi"],
            id="hugepages-short",
        ),
        pytest.param(
            make_pod().res({"nvidia.com/gpu": "2"}),
            node_info(node({"nvidia.com/gpu": "2"}), existing(extra={"nvidia.com/gpu": "1"})),
            None,
            U,
            ["Insufficient nvidia.com/gpu"],
            id="gpu-short",
        ),
        pytest.param(
            make_pod().res({"nvidia.com/gpu": "1"}),
            node_info(node({"nvidia.com/gpu": "2"}), existing(extra={"nvidia.com/gpu": "1"})),
            None,
            Code.SUCCESS,
            [],
            id="gpu-fits",
        ),
        pytest.param(
            make_pod().res({"example.com/foo": "0"}),
            node_info(node()),
            None,
            Code.SUCCESS,
            [],
            id="zero-extended-request-skipped",
        ),
        pytest.param(make_pod(), node_info(node(), existing("4", "16Gi")), None, Code.SUCCESS, [], id="besteffort-on-full-node"),
        pytest.param(
            make_pod().req(cpu="1").init_container("init", cpu="3"),
            node_info(node(), existing("2")),
            None,
            U,
            ["Insufficient cpu"],
            id="init-container-peak",
        ),
        pytest.param(
            make_pod().req(cpu="1").init_container("init", cpu="1500m"),
            node_info(node(), existing("2")),
            None,
            Code.SUCCESS,
            [],
            id="init-container-fits",
        ),
        pytest.param(
            make_pod().req(cpu="1").init_container("side", sidecar=True, cpu="1500m"),
            node_info(node(), existing("2")),
            None,
            U,
            ["Insufficient cpu"],
            id="sidecar-adds-to-containers",
        ),
        pytest.param(
            make_pod().req(cpu="1500m").overhead(cpu="600m"),
            node_info(node(), existing("2")),
            None,
            U,
            ["Insufficient cpu"],
            id="overhead-counted",
        ),
        pytest.param(
            make_pod().req(cpu="1").pod_level(requests={"cpu": "3"}),
            node_info(node(), existing("2")),
            None,
            U,
            ["Insufficient cpu"],
            id="pod-level-requests-win",
        ),
        pytest.param(
            make_pod().req(cpu="3").pod_level(requests={"memory": "1Gi"}),
            node_info(node(), existing("2")),
            None,
            U,
            ["Insufficient cpu"],
            id="pod-level-memory-keeps-container-cpu",
        ),
    ],
)
def test_filter(pod: PodBuilder, ni: NodeInfo, args: dict[str, Any] | None, code: Code, reasons: list[str]) -> None:
    s = run_filter(pod, ni, args)
    assert s.code == code
    assert s.reasons == reasons


def test_filter_two_extended_resources_reports_both() -> None:
    s = run_filter(make_pod().res({"example.com/a": "1", "example.com/b": "1"}), node_info(node({"example.com/a": "1"})))
    assert s.code == UU
    assert s.reasons == ["Insufficient example.com/b"]
    s = run_filter(make_pod().res({"example.com/a": "2", "example.com/b": "1"}), node_info(node({"example.com/a": "1"})))
    assert sorted(s.reasons) == ["Insufficient example.com/a", "Insufficient example.com/b"]


def test_filter_without_pre_filter_is_an_error() -> None:
    pl = _plugin()
    s = pl.filter(CycleState(), make_pod().build(), node_info(node()))
    assert s.code == Code.ERROR
    assert s.message() == 'error reading "PreFilterNodeResourcesFit" from cycleState: not found'


def test_pre_filter_ignores_resize_status() -> None:
    # A pending pod whose status reports larger actuated requests: PreFilter uses the spec only.
    pod = make_pod().req(cpu="1").set(
        "status.containerStatuses", [{"name": "c0", "resources": {"requests": {"cpu": "3"}}}]
    )
    assert run_filter(pod, node_info(node(), existing("2"))).is_success()


def test_fits_helper() -> None:
    short = fit.fits(make_pod().req(cpu="5", memory="1Gi").build(), node_info(node(), existing("1")))
    assert [(s.resource, s.requested, s.used, s.capacity, s.unresolvable) for s in short] == [
        ("cpu", 5000, 1000, 4000, True)
    ]


def test_plugin_shape() -> None:
    pl = _plugin()
    assert pl.name == "NodeResourcesFit"
    assert pl.pre_filter_extensions() is None
    assert pl.score_extensions() is None
    assert pl.scorer.name == "LeastAllocated"


# ---------------------------------------------------------------------------------------------
# Score
# ---------------------------------------------------------------------------------------------
MOST = {"scoringStrategy": {"type": "MostAllocated"}}


def rtcr(shape: list[tuple[int, int]], resources: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    st: dict[str, Any] = {
        "type": "RequestedToCapacityRatio",
        "requestedToCapacityRatio": {"shape": [{"utilization": u, "score": s} for u, s in shape]},
    }
    if resources is not None:
        st["resources"] = resources
    return {"scoringStrategy": st}


@pytest.mark.parametrize(
    ("pod", "ni", "args", "want"),
    [
        # LeastAllocated (default): cpu (4000-2000)*100/4000=50, memory 8Gi of 16Gi = 50.
        pytest.param(make_pod().req(cpu="1", memory="4Gi"), node_info(node(), existing("1", "4Gi")), None, 50, id="least-half"),
        # Best-effort pod counts 100m / 200Mi: cpu 97, memory 98 -> 97.
        pytest.param(make_pod(), node_info(node()), None, 97, id="least-nonzero-defaults"),
        # An existing pod without requests counts 100m / 200Mi on the node: cpu 72, memory 92 -> 82.
        pytest.param(make_pod().req(cpu="1", memory="1Gi"), node_info(node(), existing()), None, 82, id="least-node-nonzero"),
        # cpu 50, memory 93: (50+93)/2 = 71.
        pytest.param(make_pod().req(cpu="2", memory="1Gi"), node_info(node()), None, 71, id="least-default-weights"),
        # cpu weight 3: (150+93)/4 = 60.
        pytest.param(
            make_pod().req(cpu="2", memory="1Gi"),
            node_info(node()),
            {"scoringStrategy": {"type": "LeastAllocated", "resources": [{"name": "cpu", "weight": 3}, {"name": "memory", "weight": 1}]}},
            60,
            id="least-weighted",
        ),
        # Over-committed cpu scores 0: (0 + 93) / 2 = 46.
        pytest.param(make_pod().req(cpu="2", memory="1Gi"), node_info(node(), existing("3")), None, 46, id="least-overcommitted"),
        # MostAllocated: cpu 50, memory 6 -> 28.
        pytest.param(make_pod().req(cpu="2", memory="1Gi"), node_info(node()), MOST, 28, id="most"),
        # Capped at capacity: cpu 100, memory 6 -> 53.
        pytest.param(make_pod().req(cpu="2", memory="1Gi"), node_info(node(), existing("3")), MOST, 53, id="most-capped"),
        # Score ignores the incoming pod's pod-level requests (NewFit leaves its scorer's
        # PodLevelResources flag off): the container's 100m / 200Mi defaults count: cpu 2, memory 1 -> 1.
        pytest.param(make_pod().pod_level(requests={"cpu": "2"}), node_info(node()), MOST, 1, id="most-pod-level-ignored"),
        # ... and the overhead still counts: cpu (100m+1900m) 50, memory (200Mi+824Mi) 6 -> 28.
        pytest.param(
            make_pod().pod_level(requests={"cpu": "3", "memory": "8Gi"}).overhead(cpu="1900m", memory="824Mi"),
            node_info(node()),
            MOST,
            28,
            id="most-pod-level-ignored-overhead-counts",
        ),
        # The node side honours pod-level requests of the pods already there: pod-level cpu 2
        # (no cpu default), memory 200Mi default: cpu (4000-3000)/4000 25, memory 92 -> 58.
        pytest.param(
            make_pod().req(cpu="1", memory="1Gi"),
            node_info(node(), make_pod("existing-lvl").pod_level(requests={"cpu": "2"})),
            None,
            58,
            id="least-node-pod-level",
        ),
        # Extended resource the pod requests: cpu 50, foo 25 -> 37.
        pytest.param(
            make_pod().res({"cpu": "2", "example.com/foo": "1"}),
            node_info(node({"example.com/foo": "4"})),
            {"scoringStrategy": {"type": "MostAllocated", "resources": [{"name": "cpu"}, {"name": "example.com/foo"}]}},
            37,
            id="most-extended",
        ),
        # Not requested by the pod: the extended resource is left out (explicit cpu 0 gets no default).
        pytest.param(
            make_pod().res({"cpu": "2"}),
            node_info(node({"example.com/foo": "4"}), existing("0", extra={"example.com/foo": "4"})),
            {"scoringStrategy": {"type": "MostAllocated", "resources": [{"name": "cpu"}, {"name": "example.com/foo"}]}},
            50,
            id="most-extended-not-requested",
        ),
        # Requested but the node does not have it: left out.
        pytest.param(
            make_pod().res({"cpu": "2", "example.com/foo": "1"}),
            node_info(node()),
            {"scoringStrategy": {"type": "MostAllocated", "resources": [{"name": "cpu"}, {"name": "example.com/foo"}]}},
            50,
            id="most-extended-absent",
        ),
        # ephemeral-storage with no allocatable on the node is skipped.
        pytest.param(
            make_pod().req(cpu="2", ephemeral_storage="1Gi"),
            node_info(node()),
            {"scoringStrategy": {"type": "MostAllocated", "resources": [{"name": "cpu"}, {"name": "ephemeral-storage"}]}},
            50,
            id="most-ephemeral-absent",
        ),
        # ephemeral-storage uses plain requests; not requested still counts (native resource): cpu 50, eph 0 -> 25.
        pytest.param(
            make_pod().req(cpu="2"),
            node_info(node({"ephemeral-storage": "10Gi"})),
            {"scoringStrategy": {"type": "MostAllocated", "resources": [{"name": "cpu"}, {"name": "ephemeral-storage"}]}},
            25,
            id="most-ephemeral-zero",
        ),
        # RequestedToCapacityRatio, increasing shape: cpu util 25 -> 25, memory util 6 -> 6; 31/2 = 15.5 rounds to 16.
        pytest.param(make_pod().req(cpu="1", memory="1Gi"), node_info(node()), rtcr([(0, 0), (100, 10)]), 16, id="rtcr-rounds-half-up"),
        # Decreasing shape: 75 and 94 -> 84.5 -> 85.
        pytest.param(make_pod().req(cpu="1", memory="1Gi"), node_info(node()), rtcr([(0, 10), (100, 0)]), 85, id="rtcr-decreasing"),
        # A resource scoring 0 is not counted in the weight sum: cpu util 75 -> 50, memory 0 excluded.
        pytest.param(make_pod().req(cpu="3", memory="1Gi"), node_info(node()), rtcr([(50, 0), (100, 10)]), 50, id="rtcr-zero-excluded"),
        # Everything scores 0 -> 0.
        pytest.param(make_pod().req(cpu="1", memory="1Gi"), node_info(node()), rtcr([(50, 0), (100, 10)]), 0, id="rtcr-all-zero"),
        # Over capacity uses the score at 100% utilization.
        pytest.param(
            make_pod().req(cpu="2"),
            node_info(node(), existing("3")),
            rtcr([(0, 0), (50, 5), (100, 8)], [{"name": "cpu", "weight": 1}]),
            80,
            id="rtcr-over-capacity",
        ),
        # Multi-segment interpolation with integer division: util 60 -> 50 + (80-50)*(60-50)/(100-50) = 56.
        pytest.param(
            make_pod().req(cpu="2400m"),
            node_info(node()),
            rtcr([(0, 0), (50, 5), (100, 8)], [{"name": "cpu", "weight": 1}]),
            56,
            id="rtcr-interpolate",
        ),
    ],
)
def test_score(pod: PodBuilder, ni: NodeInfo, args: dict[str, Any] | None, want: int) -> None:
    assert run_score(pod, ni, args) == want


def test_score_without_pre_score_computes_requests() -> None:
    pl = _plugin()
    v, s = pl.score(CycleState(), make_pod().req(cpu="1", memory="4Gi").build(), node_info(node(), existing("1", "4Gi")))
    assert (v, s.code) == (50, Code.SUCCESS)


def test_pre_score_is_success_for_besteffort() -> None:
    pl = _plugin()
    assert pl.pre_score(CycleState(), make_pod().build(), []).code == Code.SUCCESS


def test_score_uses_sidecar_and_init_nonzero_defaults() -> None:
    # Non-zero defaults apply per container, init containers included:
    # containers: c0 (none -> 100m); init peak 1 cpu. Request = max(100m, 1000m) = 1000m -> cpu 75.
    pod = make_pod().init_container("init", cpu="1")
    assert run_score(pod, node_info(node()), {"scoringStrategy": {"type": "LeastAllocated", "resources": [{"name": "cpu"}]}}) == 75


# ---------------------------------------------------------------------------------------------
# construction / validation
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("args", "error"),
    [
        ({"scoringStrategy": {"type": "Bogus"}}, "Unsupported value"),
        ({"scoringStrategy": {"type": "LeastAllocated", "resources": [{"name": "cpu", "weight": 101}]}}, "not in valid range (0, 100]"),
        ({"scoringStrategy": {"type": "LeastAllocated", "resources": [{"name": "cpu", "weight": -1}]}}, "not in valid range (0, 100]"),
        ({"ignoredResourceGroups": ["example.com/foo"]}, "can't contain '/'"),
        ({"ignoredResources": ["bad name"]}, "ignoredResources[0]"),
        ({"scoringStrategy": {"type": "RequestedToCapacityRatio", "requestedToCapacityRatio": {"shape": []}}}, "at least one point"),
        ({"scoringStrategy": {"type": "RequestedToCapacityRatio"}}, "shape"),
        (rtcr([(50, 0), (50, 10)]), "sorted in increasing order"),
        (rtcr([(0, 0), (100, 11)]), "not in valid range [0, 10]"),
        (rtcr([(0, 0), (101, 1)]), "not in valid range [0, 100]"),
    ],
)
def test_invalid_args(args: dict[str, Any], error: str) -> None:
    with pytest.raises(ValueError) as ei:
        _plugin(args)
    assert error in str(ei.value)


def test_defaults_applied() -> None:
    pl = _plugin({"scoringStrategy": {"type": "MostAllocated", "resources": []}})
    assert [(r.name, r.weight) for r in pl.scorer.resources] == [("cpu", 1), ("memory", 1)]
    pl = _plugin({"scoringStrategy": {"type": "MostAllocated", "resources": [{"name": "cpu", "weight": 0}]}})
    assert [(r.name, r.weight) for r in pl.scorer.resources] == [("cpu", 1)]
    assert _plugin().scorer.name == "LeastAllocated"
    assert _plugin({"scoringStrategy": {"type": "MostAllocated"}}).scorer.name == "MostAllocated"


@pytest.mark.parametrize(("x", "want"), [(0.5, 1), (1.5, 2), (2.5, 3), (2.4999, 2), (0.0, 0), (-0.5, -1), (7.0, 7)])
def test_go_round(x: float, want: int) -> None:
    assert go_round(x) == want


_AMOUNTS = st.sampled_from(["", "0", "100m", "1", "3500m", "4", "5", "64"])
_MEMORY = st.sampled_from(["", "0", "1Gi", "15Gi", "16Gi", "17Gi", "1Ti"])
_STORAGE = st.sampled_from(["", "1Gi", "95Gi", "200Gi"])


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(["1", "2", "110"]), st.lists(st.tuples(_AMOUNTS, _MEMORY), max_size=3)),
             min_size=1, max_size=6),
    st.tuples(_AMOUNTS, _MEMORY, _STORAGE),
    st.booleans(),
)
def test_the_whole_list_filter_words_each_shortage_as_the_per_node_verdict(
    nodes: list[tuple[str, list[tuple[str, str]]]], request: tuple[str, str, str], unresolvable: bool
) -> None:
    """``fit_statuses`` gives a node short of room the status the per-node verdict gives it (reasons,
    their order, the code under either rule for a request above the whole allocatable)."""
    from kschedctl.plugins.noderesources.indexed import fit_statuses

    infos = [
        node_info(make_node(f"n{i}").set("status.allocatable", {"cpu": "4", "memory": "16Gi", "pods": pods,
                                                               "ephemeral-storage": "100Gi"}),
                  *[existing(cpu, mem).set("metadata.name", f"e{i}-{j}") for j, (cpu, mem) in enumerate(on)])
        for i, (pods, on) in enumerate(nodes)
    ]
    cpu, mem, eph = request
    pod = make_pod("p").req(**{k: v for k, v in (("cpu", cpu), ("memory", mem), ("ephemeral_storage", eph)) if v})
    pl = _plugin()
    pl.unresolvable = unresolvable
    state = CycleState()
    pl.pre_filter(state, pod.build(), infos)
    req = state.get(fit._PRE_FILTER_KEY)
    assert req is not None
    got = fit_statuses(req, infos, pl._verdict, unresolvable)
    want = [pl._verdict(req, ni) for ni in infos]
    assert [None if s is None else (s.code, s.reasons) for s in got] == [
        None if s is None else (s.code, s.reasons) for s in want
    ]
