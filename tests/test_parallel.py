"""Jobs spread over worker processes give what the plain loop gives.

``kschedctl.parallel.run_jobs`` on its own (order, the first exception, plugin failures, a worker
that dies, a result that cannot come back, the serial fallbacks), then the three commands that use
it (``check``, ``explain pending``, ``diff-profiles --pending``): ``--jobs 2`` prints exactly what
``--jobs 1`` prints, also with an out-of-tree plugin found by entry point, by dotted module name
and by file path (the workers are forked, so they have the parent's registry).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from kschedctl import parallel
from kschedctl.check import suite
from kschedctl.cli.main import app
from kschedctl.config import parse_config
from kschedctl.errors import InputError
from kschedctl.explain import pending
from kschedctl.framework.failures import PluginFailure, collecting, report
from kschedctl.framework.registry import ENTRY_POINT_GROUP
from kschedctl.whatif import diff
from tests.builders import make_cluster, make_object
from tests.test_fast_paths import incoming_pod, scenarios

ROOT = Path(__file__).parent.parent
DEMO = ROOT / "fixtures" / "demo" / "cluster.yaml"
EXAMPLE = ROOT / "examples" / "gpu-binpack"
MODULE = "kschedctl_gpu_binpack.plugin"
runner = CliRunner()

forks = pytest.mark.skipif(parallel._fork_context() is None, reason="no fork on this platform: jobs always run here")


def _square(x: int) -> tuple[int, int]:
    return x * x, os.getpid()


# --------------------------------------------------------------------------- run_jobs


@forks
def test_results_come_back_in_order_from_other_processes() -> None:
    seen: list[tuple[int, int]] = []
    out = parallel.run_jobs(_square, list(range(40)), jobs=2, progress=lambda d, t: seen.append((d, t)))
    assert [v for v, _ in out] == [x * x for x in range(40)]
    # the first jobs (one in WARM_UP_FRACTION) warm up here, before the workers are forked
    warm = 40 // parallel.WARM_UP_FRACTION
    assert {pid for _, pid in out[:warm]} == {os.getpid()}
    assert os.getpid() not in {pid for _, pid in out[warm:]}
    assert seen[-1] == (40, 40) and [d for d, _ in seen] == sorted(d for d, _ in seen)


def test_one_job_small_work_or_no_fork_run_here(monkeypatch: pytest.MonkeyPatch) -> None:
    me = os.getpid()
    assert {pid for _, pid in parallel.run_jobs(_square, list(range(10)), jobs=1)} == {me}
    assert {pid for _, pid in parallel.run_jobs(_square, list(range(3)), jobs=2, min_jobs=4)} == {me}
    monkeypatch.setattr(parallel, "_fork_context", lambda: None)
    seen: list[tuple[int, int]] = []
    out = parallel.run_jobs(_square, list(range(10)), jobs=2, progress=lambda d, t: seen.append((d, t)))
    assert out == [(x * x, me) for x in range(10)]
    assert seen == [(d, 10) for d in range(1, 11)]


def test_worker_count() -> None:
    assert parallel.worker_count(1, 100) == 1
    assert parallel.worker_count(8, 3) == 3
    assert parallel.worker_count(None, 100) == parallel.usable_cpus()
    assert parallel.worker_count(0, 100) == parallel.usable_cpus()
    assert parallel.worker_count(4, 5, min_jobs=6) == 1


def _fails_at(x: int) -> int:
    if x == 7:
        raise InputError("bad seven", source="seven.yaml")
    if x == 13:
        raise ValueError("thirteen")
    report(PluginFailure("P", "Score", f"n{x}", "ValueError: x", "tb"))
    return x


@forks
def test_the_first_failing_job_raises_and_later_jobs_record_nothing() -> None:
    failures: list[PluginFailure] = []
    with collecting(failures), pytest.raises(InputError) as raised:
        parallel.run_jobs(_fails_at, list(range(20)), jobs=2)
    assert str(raised.value) == "seven.yaml: bad seven" and raised.value.source == "seven.yaml"
    assert raised.traceback[-1].name == "_fails_at"  # raised by the job run here, with its own traceback
    assert [f.node for f in failures] == [f"n{x}" for x in range(7)]


def _dies_in_a_worker(x: int) -> tuple[int, int]:
    if x == 5 and os.getpid() != PARENT:
        os._exit(3)
    return x, os.getpid()


PARENT = os.getpid()


@forks
def test_a_worker_that_dies_costs_time_not_results() -> None:
    out = parallel.run_jobs(_dies_in_a_worker, list(range(30)), jobs=2)
    assert [v for v, _ in out] == list(range(30))
    assert dict(out)[5] == PARENT  # its chunk was run here


@forks
def test_a_result_that_cannot_come_back_is_made_here() -> None:
    out = parallel.run_jobs(lambda x: (lambda: x), list(range(12)), jobs=2)  # functions do not pickle
    assert [f() for f in out] == list(range(12))


# --------------------------------------------------------------------------- the commands


@pytest.fixture
def small_work_too(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """Workers even for the demo's few pods and scenarios; yields the number of jobs that came from workers."""
    monkeypatch.setattr(pending, "MIN_PARALLEL_WORK", 0)
    monkeypatch.setattr(diff, "MIN_PARALLEL_WORK", 0)
    monkeypatch.setattr(suite, "MIN_PARALLEL_SCENARIOS", 0)
    pooled = parallel._pooled
    from_workers: list[int] = []

    def spy(*args: Any, **kwargs: Any) -> Any:
        outcomes = pooled(*args, **kwargs)
        from_workers.append(sum(len(o or []) for o in outcomes.values()))
        return outcomes

    monkeypatch.setattr(parallel, "_pooled", spy)
    yield from_workers


def both_ways(*args: str | Path) -> str:
    """The command's stdout with ``--jobs 1`` and ``--jobs 2``, which must be the same."""
    outputs = []
    for jobs in ("1", "2"):
        r = runner.invoke(app, [str(a) for a in args] + ["--jobs", jobs])
        assert r.exit_code in (0, 1), r.output
        outputs.append((r.exit_code, r.stdout))
    assert outputs[0] == outputs[1]
    return outputs[0][1]


@forks
@pytest.mark.parametrize("fmt", ["json", "table"])
def test_check_prints_the_same_with_workers(small_work_too: list[int], fmt: str) -> None:
    scenarios = sorted(p for p in (ROOT / "tests" / "conformance").iterdir() if p.is_dir())[:24]
    out = both_ways("check", *scenarios, "-o", fmt)
    assert small_work_too and small_work_too[-1] == 23  # all but the first, which warms up here
    if fmt == "json":
        assert [r["passed"] for r in json.loads(out)] == [True] * 24


@forks
def test_check_errors_of_a_scenario_stay_its_own(small_work_too: list[int], tmp_path: Path) -> None:
    good = sorted(p for p in (ROOT / "tests" / "conformance").iterdir() if p.is_dir())[:5]
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "cluster.yaml").write_text("kind: Node\napiVersion: v1\nmetadata: {name: n1}\n")
    (bad / "pod.yaml").write_text("kind: Pod\napiVersion: v1\nmetadata: {name: p}\nspec: {containers: [{name: c, image: i}], priority: x}\n")
    (bad / "expected.yaml").write_text("selected: {candidates: [n1]}\n")
    outputs = []
    for jobs in ("1", "2"):
        r = runner.invoke(app, ["check", *map(str, good), str(bad), "-o", "json", "--jobs", jobs])
        assert r.exit_code == 2
        outputs.append((r.stdout, r.stderr))
    assert outputs[0] == outputs[1]
    assert "bad" in outputs[0][1]


@forks
@pytest.mark.parametrize("fmt", ["json", "table"])
def test_explain_pending_prints_the_same_with_workers(small_work_too: list[int], fmt: str) -> None:
    both_ways("explain", "pending", "-A", "--snapshot", DEMO, "-o", fmt, "--by", "pod")
    assert small_work_too and small_work_too[-1] == 5


@forks
def test_diff_profiles_prints_the_same_with_workers(small_work_too: list[int]) -> None:
    out = both_ways("diff-profiles", "--pending", "--snapshot", DEMO, "--config", ROOT / "profiles" / "bin-packing.yaml",
                    "-o", "json")
    assert len(json.loads(out)["pods"]) == 6
    assert small_work_too and small_work_too[-1] == 5


@pytest.fixture(params=["entry-point", "dotted module", "file path"])
def plugin_found(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[str]:
    """The arguments a command needs to find the GPUBinPack example plugin, each way kschedctl finds plugins."""
    if request.param == "file path":
        return ["--plugin-module", str(EXAMPLE / "src" / "kschedctl_gpu_binpack" / "plugin.py")]
    monkeypatch.syspath_prepend(str(EXAMPLE / "src"))
    if request.param == "dotted module":
        return ["--plugin-module", MODULE]
    dist = tmp_path / "kschedctl_gpu_binpack-0.1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: kschedctl-gpu-binpack\nVersion: 0.1.0\n")
    (dist / "entry_points.txt").write_text(f"[{ENTRY_POINT_GROUP}]\nGPUBinPack = {MODULE}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    return []


def more_pending(cluster: Path, copies: int, into: Path) -> Path:
    """The snapshot with ``copies`` more copies of each of its pending pods (another name each)."""
    import yaml

    docs = [d for d in yaml.safe_load_all(cluster.read_text()) if d]
    extra = []
    for d in docs:
        if d.get("kind") == "Pod" and not d.get("spec", {}).get("nodeName"):
            for i in range(copies):
                c = json.loads(json.dumps(d))
                c["metadata"]["name"] += f"-copy{i}"
                c["metadata"].pop("uid", None)
                extra.append(c)
    into.write_text(yaml.safe_dump_all(docs + extra))
    return into


@forks
def test_out_of_tree_plugins_run_in_the_workers(small_work_too: list[int], plugin_found: list[str], tmp_path: Path) -> None:
    demo = EXAMPLE / "demo"
    snapshot = more_pending(demo / "cluster.yaml", 3, tmp_path / "cluster.yaml")
    common = ("--snapshot", snapshot, "--config", demo / "config.yaml", *plugin_found)
    rows = json.loads(both_ways("explain", "pending", "-n", "ml", *common, "-o", "json"))
    big = next(r for r in rows if r["pod"] == "ml/finetune-big")
    assert "1 node(s) had GPUs in maintenance" in big["fitError"]  # GPUBinPack's own Filter reason
    out = json.loads(both_ways("diff-profiles", "--pending", "-n", "ml", *common, "-o", "json"))
    assert {p["pod"]: p["change"] for p in out["pods"]}["ml/finetune-big"] == "becomes-unschedulable"
    assert small_work_too and min(small_work_too) > 0


# --------------------------------------------------------------------------- explain pending's shared snapshot


def rows_one_by_one(cluster: Any, pods: list[Any], config: Any) -> list[dict[str, Any]]:
    """The rows as ``explain pod`` makes them: a snapshot (and Framework) of its own for every pod."""
    return [pending.pending_row(cluster, p, config).to_dict() for p in sorted(pods, key=lambda p: p.key)]


def test_pending_rows_on_the_shared_snapshot_equal_one_snapshot_per_pod() -> None:
    from kschedctl.config import default_config
    from kschedctl.snapshot.loader import load_cluster

    cluster = load_cluster([str(DEMO)])
    pods = cluster.pending_pods()
    shared = [r.to_dict() for r in pending.pending_rows(cluster, pods, default_config(), jobs=1)]
    assert shared == rows_one_by_one(cluster, pods, default_config())


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(scenarios(), st.lists(incoming_pod(), min_size=1, max_size=4))
def test_pending_rows_on_random_clusters(scenario: Any, incoming: list[Any]) -> None:
    """Random clusters (bound, terminating and nominated pods) with pending pods: the shared snapshot
    gives every row that a snapshot per pod gives."""
    node_builders, pod_builders, first, raw_config, _ = scenario
    for i, p in enumerate([first, *incoming]):
        p.raw["metadata"]["name"] = f"pending-{i}"
        pod_builders.append(p)
    objects = [make_object("Namespace", "default", labels={"team": "t1"}), make_object("Namespace", "other")]
    cluster = make_cluster(node_builders, pod_builders, objects)
    config = parse_config(raw_config)
    pods = cluster.pending_pods()
    shared = [r.to_dict() for r in pending.pending_rows(cluster, pods, config, jobs=1)]
    assert shared == rows_one_by_one(cluster, pods, config)
