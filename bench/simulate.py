"""Time ``kschedctl simulate --max``-style placement on the benchmark snapshot: how many pods per
second the simulation places when each placement is assumed before the next cycle.

    python bench/generate.py && python bench/simulate.py [--pods 200]

Copies of bench/out/pod-plain.json and bench/out/pod-spread.json (a bare Pod used as a
template) are placed one after another with the default configuration, as ``simulate -f POD
--max --limit N`` does. Building the Snapshot and the Framework is timed separately; the
pods/s figure covers the scheduling cycles only. Prints a markdown table for the README.
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kschedctl.config import default_config
from kschedctl.snapshot.loader import iter_documents, load_cluster
from kschedctl.whatif.simulate import simulate_max
from kschedctl.whatif.workloads import PodFactory, parse_manifests


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--dir", default="bench/out")
    ap.add_argument("--pods", type=int, default=200, help="pods to place per template")
    ap.add_argument("--profile", action="store_true", help="print a cProfile summary of the plain run")
    args = ap.parse_args()
    d = Path(args.dir)
    t = time.perf_counter()
    cluster = load_cluster([str(d / "cluster.json")])
    load_s = time.perf_counter() - t
    rows = [("load snapshot (JSON)", f"{load_s:.2f} s", f"{len(cluster.nodes)} nodes, {len(cluster.pods)} pods")]
    for label, pod_file in (("plain pod", "pod-plain.json"), ("anti-affinity + spread pod", "pod-spread.json")):
        manifests = parse_manifests(iter_documents([str(d / pod_file)]), cluster)
        w = manifests.workloads[0]
        w.as_template = True
        factory = PodFactory(manifests, cluster)
        cfg = default_config()
        t = time.perf_counter()
        pods = factory.pods(w, None)
        if args.profile and label == "plain pod":
            import cProfile
            import pstats

            prof = cProfile.Profile()
            result = prof.runcall(simulate_max, factory.cluster, cfg, pods, limit=args.pods)
            pstats.Stats(prof).sort_stats("tottime").print_stats(25)
        else:
            result = simulate_max(factory.cluster, cfg, pods, limit=args.pods)
        total = time.perf_counter() - t
        setup = total - result.elapsed_seconds
        rows.append((
            f"simulate {label} ×{len(result.placed)}",
            f"{result.pods_per_second:.1f} pods/s",
            f"{result.elapsed_seconds:.2f} s for {result.cycles} cycles, plus {setup:.2f} s to build the snapshot; "
            f"{len(result.nodes)} nodes received pods",
        ))
    print(f"machine: {platform.machine()}, {platform.python_implementation()} {platform.python_version()}")
    print("| step | rate | detail |\n|---|---|---|")
    for r in rows:
        print(f"| {r[0]} | {r[1]} | {r[2]} |")


if __name__ == "__main__":
    main()
