"""``simulate --max`` schedules the snapshot's pending pods first, as kube-scheduler's queue does (and as
``--replicas`` does): the count of copies that fit is then the count ``--replicas N`` places for a large N.
``--no-pending`` leaves them out, and says so. On the demo cluster (``fixtures/demo/cluster.yaml``, whose
pending pods include a higher-priority one that preempts) with workloads of each kind: small web pods,
big-memory pods, one copy per node by self anti-affinity, and the demo's zone-spread ``cart``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from kschedctl.cli.main import app

ROOT = Path(__file__).parent.parent
DEMO = ROOT / "fixtures" / "demo" / "cluster.yaml"
runner = CliRunner()


def deployment(name: str, requests: dict[str, str], self_anti_affinity: bool = False) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": name, "image": f"example/{name}", "resources": {"requests": requests}}]}
    if self_anti_affinity:
        spec["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"app": name}}}]}}
    return {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": "default"},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": name}},
                 "template": {"metadata": {"labels": {"app": name}}, "spec": spec}},
    }


WORKLOADS = {
    "web": deployment("web", {"cpu": "250m", "memory": "256Mi"}),
    "big-memory": deployment("big-memory", {"cpu": "500m", "memory": "12Gi"}),
    "self-anti-affinity": deployment("self-anti-affinity", {"cpu": "100m", "memory": "128Mi"}, self_anti_affinity=True),
}


def simulate(f: Path, *args: str) -> dict[str, Any]:
    r = runner.invoke(app, ["simulate", "-f", str(f), "--snapshot", str(DEMO), "-o", "json", *args])
    assert r.exit_code in (0, 1), r.output
    return dict(json.loads(r.stdout))


def copies_placed(doc: dict[str, Any]) -> int:
    return sum(1 for p in doc["placements"] if p["outcome"] == "scheduled" and not p["pendingAtStart"])


@pytest.mark.parametrize("name", [*WORKLOADS, "cart"])
def test_max_counts_the_copies_the_real_loop_places_after_the_pending_pods(tmp_path: Path, name: str) -> None:
    f = ROOT / "fixtures" / "demo" / "cart.yaml"
    if name in WORKLOADS:
        f = tmp_path / f"{name}.yaml"
        f.write_text(yaml.safe_dump(WORKLOADS[name]))
    most = simulate(f, "--max")
    assert any(p["pendingAtStart"] for p in most["placements"])
    replicas = simulate(f, "--replicas", str(most["summary"]["placed"] + 20), "--max-pods", "0")
    assert most["summary"]["placed"] == copies_placed(replicas) > 0
    assert any("pending pod(s) were scheduled first" in n for n in most["notes"])


def test_max_without_pending_leaves_them_out_and_says_so() -> None:
    doc = simulate(ROOT / "fixtures" / "demo" / "cart.yaml", "--max", "--no-pending")
    assert not any(p["pendingAtStart"] for p in doc["placements"])
    assert doc["summary"]["placed"] == 8
    assert any("pending pod(s) of the snapshot are not scheduled in this run" in n for n in doc["notes"])
    assert simulate(ROOT / "fixtures" / "demo" / "cart.yaml", "--max")["summary"]["placed"] == 7
