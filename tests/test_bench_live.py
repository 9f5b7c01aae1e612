"""bench/live.py works: its API server pages as a real one does, and the whole bench runs at a tiny size.

Nothing here is timed; the figures are the bench's business (docs/benchmark.md).
"""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from kschedctl.snapshot.live import LiveCluster, LiveOptions
from kschedctl.snapshot.source import POD


def get(url: str) -> dict[str, Any]:
    with urllib.request.urlopen(url) as r:
        return dict(json.loads(r.read()))


def test_the_server_pages_like_a_kube_apiserver(live_bench: ModuleType) -> None:
    cluster = live_bench.generate(5, 12, 2)
    with live_bench.FakeAPIServer(cluster) as srv:
        pages = [get(f"{srv.url}/api/v1/pods?limit=5")]
        while pages[-1]["metadata"].get("continue"):
            token = pages[-1]["metadata"]["continue"]
            pages.append(get(f"{srv.url}/api/v1/pods?limit=5&continue={token}"))
        assert [len(p["items"]) for p in pages] == [5, 5, 4]
        assert [p["metadata"].get("remainingItemCount") for p in pages] == [9, 4, None]
        assert pages[0]["kind"] == "PodList" and pages[0]["apiVersion"] == "v1"
        assert get(f"{srv.url}/apis/apps/v1/statefulsets?limit=500")["items"] == []
        assert get(f"{srv.url}/version")["gitVersion"].startswith("v1.")
        ns, name = cluster.pending
        assert get(f"{srv.url}/api/v1/namespaces/{ns}/pods/{name}")["metadata"]["name"] == name


def test_the_pending_pods_fit_nowhere_for_several_causes(live_bench: ModuleType) -> None:
    """Each pending workload has its own cause (``--fix`` has a different search to run for each); the
    drained node is cordoned and has no other taint, so uncordoning it is the pinned pod's whole remedy."""
    cluster = live_bench.generate(40, 20, 6)
    pending = [p for p in cluster.lists["/api/v1/pods"] if "nodeName" not in p["spec"]]
    assert [p["metadata"]["name"].split("-")[0] for p in pending] == ["render", "cache", "gpu", "ingress", "local", "big"]
    drained = [n for n in cluster.lists["/api/v1/nodes"] if n["spec"].get("unschedulable")]
    assert len(drained) == 1 and [t["key"] for t in drained[0]["spec"]["taints"]] == ["node.kubernetes.io/unschedulable"]
    pinned = pending[4]["spec"]["nodeSelector"]["kubernetes.io/hostname"]
    assert pinned == drained[0]["metadata"]["name"]


def test_kschedctl_reads_the_generated_pods_through_the_pages(
    live_bench: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cluster = live_bench.generate(5, 12, 2)
    with live_bench.FakeAPIServer(cluster) as srv:
        monkeypatch.setenv("KUBECONFIG", str(live_bench.kubeconfig(tmp_path / "kubeconfig", srv.url)))
        items = LiveCluster(LiveOptions(chunk_size=5)).list_items(POD)
    assert items is not None
    assert [i["metadata"]["uid"] for i in items] == [p["metadata"]["uid"] for p in cluster.lists["/api/v1/pods"]]
    assert all("managedFields" not in i["metadata"] for i in items)


def test_the_bench_runs_at_a_tiny_size(live_bench: ModuleType, capsys: pytest.CaptureFixture[str]) -> None:
    assert live_bench.main(["--nodes", "4", "--pods", "10", "--pending", "1", "--json"]) == 0
    results = json.loads(capsys.readouterr().out)
    assert results["raw"]["objects"] == results["generated"]["objects"]
    assert {row["command"] for row in results["targets"]} == {t.command for t in live_bench.TARGETS.values()}
    for key in live_bench.TARGETS:
        assert results[key]["seconds"] > 0 and results[key]["rss_mb"] > 0
    assert results["snapshot"]["file_bytes"] > 0
    fix = results["explain-pending-fix"]
    assert fix["pods"] == fix["searched"] == 1 and 0 <= fix["helped"] <= 1
