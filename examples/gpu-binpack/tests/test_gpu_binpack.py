"""Tests of the GPUBinPack example plugin: its methods alone, then inside kschedctl's scheduling cycle.

Everything comes from kschedctl's public test helpers (``kschedctl.testing``): pods and nodes
with GPUs, a NodeInfo with GPUs in use, a Handle, a configuration from text, one call that runs
a whole cycle and returns its trace.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from kschedctl_gpu_binpack import plugin as gpu
from pydantic import ValidationError

from kschedctl.errors import ConfigError
from kschedctl.framework.cycle_state import CycleState
from kschedctl.framework.interfaces import extension_points_of
from kschedctl.framework.status import MAX_NODE_SCORE, Code
from kschedctl.testing import (
    NodeBuilder,
    SnapshotHandle,
    load_config,
    make_node,
    make_pod,
    node_info,
    schedule,
)

DEMO = Path(__file__).parent.parent / "demo"

CONFIG = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      enabled: [{name: GPUBinPack, weight: 5}]
"""


def new(**args: str) -> gpu.GPUBinPack:
    return gpu.new(gpu.GPUBinPackArgs.model_validate(args), SnapshotHandle())


# the plugin alone -----------------------------------------------------------------------------------


def test_extension_points() -> None:
    assert extension_points_of(new()) == ["preFilter", "filter", "preScore", "score"]


def test_args_model() -> None:
    assert gpu.GPUBinPackArgs().resource == "nvidia.com/gpu"
    assert gpu.GPUBinPackArgs.model_validate({"maintenanceLabel": "x"}).maintenance_label == "x"
    with pytest.raises(ValidationError):
        gpu.GPUBinPackArgs.model_validate({"maintenanceLabels": "typo"})
    with pytest.raises(ValidationError):
        gpu.GPUBinPackArgs.model_validate({"resource": ""})


@pytest.mark.parametrize(("gpus", "code"), [(0, Code.SKIP), (1, Code.SUCCESS), (4, Code.SUCCESS)])
def test_pre_filter_skips_pods_without_gpus(gpus: int, code: Code) -> None:
    pod = make_pod("p").req(cpu="1")
    if gpus:
        pod.gpus(gpus)
    result, status = new().pre_filter(CycleState(), pod.build(), [])
    assert result is None and status.code == code


@pytest.mark.parametrize(
    ("labels", "code"),
    [
        ({}, Code.SUCCESS),
        ({"gpu.example.com/maintenance": "true"}, Code.UNSCHEDULABLE_AND_UNRESOLVABLE),
        ({"gpu.example.com/maintenance": ""}, Code.UNSCHEDULABLE_AND_UNRESOLVABLE),  # any value
        ({"other/label": "true"}, Code.SUCCESS),
    ],
)
def test_filter_rejects_nodes_in_maintenance(labels: dict[str, str], code: Code) -> None:
    ni = node_info(make_node("g").gpus(4).labels(**labels))
    status = new().filter(CycleState(), make_pod("p").gpus(1).build(), ni)
    assert status.code == code
    if code != Code.SUCCESS:
        assert status.reasons == [gpu.ERR_MAINTENANCE]


def test_filter_uses_the_configured_label() -> None:
    ni = node_info(make_node("g").gpus(4).labels(drain="now"))
    assert new(maintenanceLabel="drain").filter(CycleState(), make_pod("p").gpus(1).build(), ni).code == (
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    )


@pytest.mark.parametrize(
    ("gpus", "in_use", "wanted", "score"),
    [
        (4, [], 1, 25),
        (4, [2, 1], 1, MAX_NODE_SCORE),  # the pod fills the node: the best bin
        (8, [6], 1, 87),  # 7/8, rounded down
        (8, [], 2, 25),
        (0, [], 1, 0),  # a node without GPUs
    ],
)
def test_score_bin_packs(gpus: int, in_use: list[int], wanted: int, score: int) -> None:
    node = make_node("g").gpus(gpus) if gpus else make_node("g")
    ni = node_info(node, *[make_pod(f"run-{i}").gpus(n) for i, n in enumerate(in_use)])
    assert ni.requested.scalar.get("nvidia.com/gpu", 0) == sum(in_use)
    pl = new()
    pod = make_pod("p").gpus(wanted).build()
    state = CycleState()
    pl.pre_filter(state, pod, [])
    value, status = pl.score(state, pod, ni)
    assert (value, status.is_success()) == (score, True)


def test_score_without_pre_filter_state_reads_the_pod() -> None:
    """Enabled at Score only (no PreFilter in the configuration), the plugin still knows the request."""
    ni = node_info(make_node("g").gpus(4), make_pod("a").gpus(1))
    score, status = new().score(CycleState(), make_pod("p").gpus(1).build(), ni)
    assert (score, status.is_success()) == (50, True)


def test_pre_score_skips_pods_without_gpus() -> None:
    assert new().pre_score(CycleState(), make_pod("p").req(cpu="1").build(), []).code == Code.SKIP
    assert new().pre_score(CycleState(), make_pod("p").gpus(1).build(), []).code == Code.SUCCESS


# in a scheduling cycle ---------------------------------------------------------------------------------


def gpu_nodes() -> list[NodeBuilder]:
    return [
        make_node("busy").gpus(4),
        make_node("idle").gpus(4),
        make_node("maint").gpus(8).label("gpu.example.com/maintenance", "true"),
        make_node("cpu"),
    ]


def test_cycle_packs_onto_the_busiest_gpu_node() -> None:
    trace = schedule(
        make_pod("infer").req(cpu="1").gpus(1),
        CONFIG,
        nodes=gpu_nodes(),
        pods=[make_pod("train").req(cpu="1").gpus(2).node("busy")],
        plugins=[gpu],
    )
    assert trace.selected_node == "busy"
    assert trace.filter["maint"].status.reasons == [gpu.ERR_MAINTENANCE]
    assert trace.filter["cpu"].status.plugin == "NodeResourcesFit"  # Insufficient nvidia.com/gpu
    assert trace.score["GPUBinPack"].raw == {"busy": 75, "idle": 25}
    assert trace.score["GPUBinPack"].weighted == {"busy": 375, "idle": 125}


def test_cycle_for_a_pod_without_gpus_skips_the_plugin() -> None:
    trace = schedule(make_pod("web").req(cpu="1"), CONFIG, nodes=gpu_nodes(), plugins=[gpu])
    assert "GPUBinPack" in trace.skipped_filter_plugins
    assert "GPUBinPack" not in trace.score
    assert trace.to_dict()["preScore"][-1] == {"plugin": "GPUBinPack", "code": "Skip", "reasons": []}


def test_fit_error_counts_the_maintenance_nodes() -> None:
    trace = schedule(make_pod("big").gpus(8), CONFIG, nodes=gpu_nodes(), plugins=[gpu])
    assert trace.fit_error is not None
    assert trace.fit_error.startswith(
        "0/4 nodes are available: 1 node(s) had GPUs in maintenance, 3 Insufficient nvidia.com/gpu."
    )


def test_args_are_validated_when_the_configuration_is_read() -> None:
    bad = CONFIG + "  pluginConfig:\n  - name: GPUBinPack\n    args: {maintenanceLabels: x}\n"
    with pytest.raises(ConfigError, match=r'initializing plugin "GPUBinPack": args.maintenanceLabels: Extra inputs'):
        load_config(bad, plugins=[gpu])
    good = load_config(CONFIG + "  pluginConfig:\n  - name: GPUBinPack\n    args: {resource: example.com/tpu}\n", plugins=[gpu])
    args = good.profiles[0].args("GPUBinPack")
    assert isinstance(args, gpu.GPUBinPackArgs) and args.resource == "example.com/tpu"


def test_demo() -> None:
    """The demo of examples/gpu-binpack/demo: a configuration file (a Path), a snapshot as text."""
    pod = yaml.safe_load((DEMO / "pod.yaml").read_text())
    trace = schedule(pod, DEMO / "config.yaml", cluster=(DEMO / "cluster.yaml").read_text(), plugins=[gpu])
    assert trace.selected_node == "gpu-a0"
    assert trace.to_dict()["score"]["GPUBinPack"]["raw"] == {"gpu-a0": 100, "gpu-a1": 25, "gpu-b1": 87}
