"""Time the commands that spread their pods or scenarios over worker processes, with ``--jobs 1`` and ``--jobs N``.

* ``kschedctl check tests/conformance -o json``: the scenario corpus of this repository;
* ``kschedctl explain pending -A -o json`` and ``kschedctl diff-profiles --pending --config
  profiles/bin-packing.yaml -o json`` on a perf cluster (``bench/run.py``'s generated c500 or
  c5000, JSON) with ``--pending`` pending pods added: copies of the perf pods, pods asking for
  more than any node has (the preemption dry run and the nearest-node analysis run), pods whose
  node selector no node matches, and gated pods.

Each command runs as a subprocess (wall and CPU time, the children's included); the outputs of
the two runs must be byte for byte the same. The machine may be busy: the load average before
each table is printed, and only runs measured together should be compared.

    python3 bench/parallel.py [--cluster c5000] [--pending 24] [--jobs 2]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

from run import find_perf_dir, generate, read_scenarios  # noqa: E402

MAIN = "import sys; from kschedctl.cli.main import run; sys.argv[0] = 'kschedctl'; run()"


def pending_pods(n: int, perf: Path) -> list[dict[str, Any]]:
    """``n`` pending pods, a mix of what fits and what does not, named deterministically."""
    import yaml

    plain = yaml.safe_load((perf / "c500-plain-p100" / "pod.yaml").read_text())
    spread = yaml.safe_load((perf / "c500-spread-p100" / "pod.yaml").read_text())
    out = []
    for i in range(n):
        kind = ("plain", "spread", "huge", "selector", "plain", "gated")[i % 6]
        pod = json.loads(json.dumps(spread if kind == "spread" else plain))
        pod["metadata"]["name"] = f"pending-{kind}-{i:03d}"
        pod["metadata"]["uid"] = f"uid-pending-{i:03d}"
        pod["status"] = {"phase": "Pending"}
        requests = pod["spec"]["containers"][0]["resources"]["requests"]
        if kind == "huge":
            requests["cpu"] = "64"  # more than any node: preemption cannot help
        elif kind == "selector":
            pod["spec"]["nodeSelector"] = {"disktype": "nvme"}
        elif kind == "gated":
            pod["spec"]["schedulingGates"] = [{"name": "example.com/hold"}]
        else:
            requests["cpu"] = f"{250 * (1 + i % 4)}m"
        out.append(pod)
    return out


def with_pending(cluster_json: Path, n: int, perf: Path) -> Path:
    path = cluster_json.with_name(f"{cluster_json.stem}-pending{n}.json")
    if not path.is_file():
        doc = json.loads(cluster_json.read_text())
        doc["items"].extend(pending_pods(n, perf))
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(doc))
        tmp.replace(path)
    return path


def run(args: list[str]) -> tuple[float, float, bytes]:
    """(wall seconds, CPU seconds of the command and its workers, stdout)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    t = time.perf_counter()
    p = subprocess.run([sys.executable, "-c", MAIN, *args], cwd=REPO, env=env, capture_output=True)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode not in (0, 1):
        raise SystemExit(f"kschedctl {' '.join(args)} failed: {p.stderr.decode()[-500:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, p.stdout


def compare(label: str, args: list[str], jobs: int) -> tuple[str, float, float, float, float, bool]:
    w1, c1, out1 = run([*args, "--jobs", "1"])
    wn, cn, outn = run([*args, "--jobs", str(jobs)])
    return label, w1, c1, wn, cn, out1 == outn


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--perf", help="scenario directory (default: ../shared/perf, else bench/perf)")
    ap.add_argument("--cache", default=str(Path.home() / ".cache" / "kschedctl-bench"))
    ap.add_argument("--cluster", default="c5000", help="c500 or c5000")
    ap.add_argument("--pending", type=int, default=24, help="pending pods added to the cluster")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--no-check", action="store_true")
    args = ap.parse_args()

    perf = find_perf_dir(args.perf)
    scenarios = [s for s in read_scenarios(perf, []) if s.name.startswith(args.cluster + "-")][:1]
    if not scenarios:
        raise SystemExit(f"no perf scenario of cluster {args.cluster}")
    generate(perf, Path(args.cache).expanduser(), scenarios)
    snapshot = with_pending(scenarios[0].json_file, args.pending, perf)

    rows = []
    load = os.getloadavg()[0]
    if not args.no_check:
        rows.append(compare("check tests/conformance (scenarios)", ["check", "tests/conformance", "-o", "json"], args.jobs))
    rows.append(compare(f"explain pending -A, {args.cluster} + {args.pending} pending pods",
                        ["explain", "pending", "-A", "--snapshot", str(snapshot), "-o", "json"], args.jobs))
    rows.append(compare(f"diff-profiles --pending, {args.cluster} + {args.pending} pending pods",
                        ["diff-profiles", "--pending", "--snapshot", str(snapshot), "--config",
                         str(REPO / "profiles" / "bin-packing.yaml"), "-o", "json"], args.jobs))
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, {platform.python_implementation()} "
          f"{platform.python_version()}; load average before: {load:.2f}")
    print()
    print(f"| command | --jobs 1 | --jobs {args.jobs} | speed-up | same output |")
    print("|---|---|---|---|---|")
    for label, w1, c1, wn, cn, same in rows:
        print(f"| {label} | {w1:.1f} s (CPU {c1:.1f} s) | {wn:.1f} s (CPU {cn:.1f} s) | {w1 / wn:.2f}x | {'yes' if same else 'NO'} |")


if __name__ == "__main__":
    main()
