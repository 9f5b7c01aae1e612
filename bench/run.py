"""Time kschedctl on the benchmark snapshot.

Phases, as a user of ``kschedctl explain`` pays them:
  1. load: read the snapshot file into the cluster model (with API-server defaulting);
  2. snapshot: build the scheduler's NodeInfos (per-node aggregates) once per explain;
  3. cycle: one scheduling cycle (PreFilter .. Bind) for a plain pod and for a pod with
     preferred anti-affinity + topology spread, at the adaptive default percentageOfNodesToScore
     and at 100.
    python3 bench/generate.py && python3 bench/run.py
Prints a markdown table (the README's figures come from it). Wall-clock, best of --repeat runs.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kschedctl.config import default_config
from kschedctl.explain.cycle import run_cycle
from kschedctl.framework.runtime import Framework
from kschedctl.framework.snapshot import Snapshot
from kschedctl.plugins import in_tree_registry
from kschedctl.snapshot.loader import load_cluster, load_pods

T = TypeVar("T")


def best_of(n: int, fn: Callable[[], T]) -> tuple[float, T]:
    best = float("inf")
    result: T | None = None
    for _ in range(n):
        t = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t)
    assert result is not None
    return best, result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--dir", default="bench/out")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--yaml", action="store_true", help="also time loading the same snapshot written as YAML (slow)")
    args = ap.parse_args()
    d = Path(args.dir)
    load_s, cluster = best_of(1, lambda: load_cluster([str(d / "cluster.json")]))
    rows = [("load snapshot file (JSON, 26 MB)", f"{load_s:.2f} s", f"{len(cluster.nodes)} nodes, {len(cluster.pods)} pods")]
    if args.yaml:
        import json

        from kschedctl.render.data import to_yaml

        yaml_file = d / "cluster.yaml"
        yaml_file.write_text(to_yaml(json.loads((d / "cluster.json").read_text())))
        yaml_s, _ = best_of(1, lambda: load_cluster([str(yaml_file)]))
        rows.append(("load the same snapshot as YAML (PyYAML C loader)", f"{yaml_s:.1f} s", "27 MB of YAML"))
    pods = {label: load_pods(str(d / f))[0] for label, f in (("plain pod", "pod-plain.json"), ("anti-affinity + spread pod", "pod-spread.json"))}
    for p in pods.values():
        cluster.default_priority(p)
    Snapshot(cluster)  # first build computes and caches each pod's requests
    snap_s, snapshot = best_of(args.repeat, lambda: Snapshot(cluster))
    rows.append(("build NodeInfos (once per explain)", f"{snap_s * 1000:.0f} ms", "per-node aggregates of 50,000 pods"))
    registry = in_tree_registry()
    for label, pod in pods.items():
        for pct in (0, 100):
            cfg = default_config()
            cfg.percentage_of_nodes_to_score = pct
            fw = Framework(cfg.profiles[0], registry, snapshot)
            secs, trace = best_of(args.repeat, lambda fw=fw, pod=pod, cfg=cfg: run_cycle(fw, pod, cfg))
            what = f"{len(trace.filter)} nodes filtered, {len(trace.totals)} scored, {trace.outcome}"
            rows.append((f"scheduling cycle, {label}, percentageOfNodesToScore={pct or 'adaptive'}", f"{secs * 1000:.0f} ms", what))
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, {platform.python_implementation()} {platform.python_version()}")
    print("| step | time | detail |\n|---|---|---|")
    for r in rows:
        print(f"| {r[0]} | {r[1]} | {r[2]} |")


if __name__ == "__main__":
    main()
