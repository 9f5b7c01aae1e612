"""Generate the benchmark snapshot: 5,000 nodes and 50,000 pods in 3 zones.

Mixed node sizes, a tainted GPU pool, a cordoned node every 500, labels for pools and
disks, and pods of many apps (some with preferred anti-affinity and spread constraints)
so that InterPodAffinity and PodTopologySpread have real work. Deterministic.

    python bench/generate.py --nodes 5000 --pods 50000 --out bench/out/cluster.json
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path
from typing import Any

ZONES = ("zone-a", "zone-b", "zone-c")
SIZES = (("4", "16Gi"), ("8", "32Gi"), ("16", "64Gi"), ("32", "128Gi"))


def make_nodes(n: int, rng: random.Random) -> list[dict[str, Any]]:
    out = []
    for i in range(n):
        zone = ZONES[i % 3]
        cpu, mem = SIZES[rng.randrange(len(SIZES))]
        gpu = i % 50 == 0
        labels = {
            "kubernetes.io/hostname": f"node-{i:05d}",
            "kubernetes.io/os": "linux",
            "topology.kubernetes.io/region": "bench",
            "topology.kubernetes.io/zone": zone,
            "pool": "gpu" if gpu else rng.choice(("general", "general", "memory")),
            "disktype": rng.choice(("ssd", "hdd")),
        }
        alloc = {"cpu": cpu, "memory": mem, "pods": "110", "ephemeral-storage": "200Gi"}
        spec: dict[str, Any] = {}
        if gpu:
            alloc["nvidia.com/gpu"] = "4"
            spec["taints"] = [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]
        if i % 500 == 499:
            spec["unschedulable"] = True
            spec.setdefault("taints", []).append({"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"})
        out.append({
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": f"node-{i:05d}", "uid": f"node-uid-{i}", "labels": labels},
            "spec": spec,
            "status": {"capacity": alloc, "allocatable": alloc,
                       "images": [{"names": [f"registry.example.com/app-{k}:1.0"], "sizeBytes": 200_000_000 + k} for k in range(i % 5)]},
        })
    return out


def make_pod(i: int, node: str | None, app: str, rng: random.Random, *, affinity: bool = False) -> dict[str, Any]:
    p: dict[str, Any] = {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": f"{app}-{i:06d}", "namespace": f"ns-{i % 20}", "uid": f"pod-uid-{i}",
                     "labels": {"app": app, "tier": rng.choice(("web", "api", "batch"))},
                     "creationTimestamp": "2026-11-01T00:00:00Z"},
        "spec": {"containers": [{"name": "main", "image": f"registry.example.com/{app}:1.0",
                                 "resources": {"requests": {"cpu": f"{rng.choice((50, 100, 250, 500))}m",
                                                            "memory": f"{rng.choice((64, 128, 256, 512))}Mi"}}}]},
        "status": {"phase": "Running" if node else "Pending"},
    }
    if node:
        p["spec"]["nodeName"] = node
    if affinity:
        p["spec"]["affinity"] = {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 50, "podAffinityTerm": {"topologyKey": "kubernetes.io/hostname",
                                              "labelSelector": {"matchLabels": {"app": app}}}}]}}
        p["spec"]["topologySpreadConstraints"] = [
            {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "ScheduleAnyway",
             "labelSelector": {"matchLabels": {"app": app}}}]
    return p


def generate(nodes: int, pods: int, seed: int = 7) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    ns = make_nodes(nodes, rng)
    names = [n["metadata"]["name"] for n in ns if not n["spec"].get("taints")]
    objs: list[dict[str, Any]] = list(ns)
    for i in range(20):
        objs.append({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": f"ns-{i}", "labels": {"team": f"t{i % 4}"}}})
    for i in range(pods):
        app = f"app-{i % 400}"
        objs.append(make_pod(i, names[rng.randrange(len(names))], app, rng, affinity=(i % 10 == 0)))
    return objs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--pods", type=int, default=50000)
    ap.add_argument("--out", default="bench/out/cluster.json")
    args = ap.parse_args()
    objs = generate(args.nodes, args.pods)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": objs}))
    rng = random.Random(99)
    plain = make_pod(10**6, None, "bench-plain", rng)
    spread = make_pod(10**6 + 1, None, "app-7", rng, affinity=True)
    (out.parent / "pod-plain.json").write_text(json.dumps(plain))
    (out.parent / "pod-spread.json").write_text(json.dumps(spread))
    print(f"wrote {out} ({len(objs)} objects)")


if __name__ == "__main__":
    main()
