"""Time kschedctl on the benchmark snapshot: load, and one explain for a plain pod and for a pod
with anti-affinity + topology spread, with percentageOfNodesToScore at its default (adaptive) and 100.

    python bench/generate.py && python bench/run.py
Prints a markdown table (the README's figures come from it). Wall-clock, best of --repeat runs.
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

from kschedctl.config import default_config
from kschedctl.explain.cycle import explain_pod
from kschedctl.snapshot.loader import load_cluster, load_pods


def best_of(n: int, fn):  # type: ignore[no-untyped-def]
    best = float("inf")
    result = None
    for _ in range(n):
        t = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t)
    return best, result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--dir", default="bench/out")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    d = Path(args.dir)
    load_s, cluster = best_of(1, lambda: load_cluster([str(d / "cluster.json")]))
    rows = [("load snapshot (JSON)", f"{load_s:.2f} s", f"{len(cluster.nodes)} nodes, {len(cluster.pods)} pods")]
    for label, pod_file in (("plain pod", "pod-plain.json"), ("anti-affinity + spread pod", "pod-spread.json")):
        for pct in (0, 100):
            cfg = default_config()
            cfg.percentage_of_nodes_to_score = pct
            pod = load_pods(str(d / pod_file))[0]
            secs, trace = best_of(args.repeat, lambda pod=pod, cfg=cfg: explain_pod(cluster, pod, cfg))
            what = f"{len(trace.filter)} nodes filtered, {len(trace.totals)} scored, outcome {trace.outcome}"
            rows.append((f"explain {label}, percentageOfNodesToScore={pct or 'default (adaptive)'}", f"{secs * 1000:.0f} ms", what))
    print(f"machine: {platform.machine()}, {platform.python_implementation()} {platform.python_version()}, "
          f"{json.dumps(platform.uname().system)}")
    print("| step | time | detail |\n|---|---|---|")
    for r in rows:
        print(f"| {r[0]} | {r[1]} | {r[2]} |")


if __name__ == "__main__":
    main()
