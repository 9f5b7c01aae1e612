"""Time ``kschedctl explain pod`` on one big generated cluster (15,000 nodes by default), cold and warm.

Issue 29's table: a cluster of ``--nodes`` nodes and ten pods a node (``--pods``) built by
``gen_cluster.py`` (the perf corpus's, seed 1) into ``--cache`` (``~/.cache/kschedctl-bench``), in
both file forms kschedctl reads: the plain YAML ``kubectl get -o yaml``-style output, and a
``kschedctl snapshot`` file (JSON behind ``#`` comment lines, one object a line, written by the
snapshot writer itself and so signed as a live snapshot is: ``snapshot/vouch.py``). For each, ``kschedctl explain pod -f pod.yaml --config config.yaml -o json`` of the perf
corpus's ``c5000-plain-p100`` pod (``percentageOfNodesToScore: 100``: every node filtered and
scored) runs as a subprocess ``--repeat`` times:

  * cold: a fresh, empty snapshot cache (``XDG_CACHE_HOME``): the first explain of a new snapshot;
  * warm: the same command again, with the cache the cold run filled;

with wall time, CPU time and peak RSS of each run, and the load average beside it (the machine may be
busy: compare figures measured in one run). Every run's JSON output must be the same, or the bench
fails.

Go: when ``ksched-oracle`` is given (``--go-bin``, ``$KSCHED_ORACLE`` or ``~/oracle/bin``), the real
framework's load and cycle (``-bench``) on the same YAML, and kschedctl's figures as ratios to its
load + cycle; otherwise the Go figures ``--go-bin`` gave on this machine kind (``GO_STATED``), named
as such.

    python3 bench/big.py [--nodes 15000] [--pods N] [--repeat 2] [--go-bin PATH] [--json FILE]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from run import REPO, GoTiming, Run, find_oracle, find_perf_dir, machine_line, oracle_bench, run_kschedctl

#: Go's load + cycle as ``--go-bin`` timed it on this machine kind (2 cores), for runs without a Go binary:
#: {nodes: (seconds low, seconds high, peak RSS, source)}.
GO_STATED: dict[int, tuple[float, float, str, str]] = {
    15000: (17.1, 18.2, "2.9 GB", "ksched-oracle (v1.35.4) timed by bench/big.py on this machine kind, 2026-11-28, load 0.9-1.3"),
    65000: (91.5, 91.5, "10.8 GB", "ksched-oracle (v1.35.4) timed by bench/big.py on this machine kind, 2026-11-28, load 1.5"),
}
SCENARIO = "c5000-plain-p100"


def generate(perf: Path, cache: Path, nodes: int, pods: int) -> tuple[Path, Path]:
    """The cluster as gen_cluster.py writes it (YAML) and as a ``kschedctl snapshot`` file of the same objects."""
    cache.mkdir(parents=True, exist_ok=True)
    yaml_file = cache / f"cluster-{nodes}-{pods}.yaml"
    snap_file = cache / f"cluster-{nodes}-{pods}.signed-snapshot.yaml"
    if not yaml_file.is_file():
        tmp = yaml_file.with_suffix(".yaml.tmp")
        subprocess.run([sys.executable, str(perf / "gen_cluster.py"), str(nodes), str(pods), str(tmp)], check=True,
                       stdout=subprocess.DEVNULL)
        tmp.replace(yaml_file)
    if not snap_file.is_file():
        # What `kschedctl snapshot` writes: its writer, one list per resource in its order, the header signed.
        code = (
            "import sys\n"
            "from kschedctl.snapshot.loader import iter_documents\n"
            "from kschedctl.snapshot.source import RESOURCES\n"
            "from kschedctl.snapshot.writer import SnapshotWriter\n"
            "by_kind = {}\n"
            "for d in iter_documents([sys.argv[1]]):\n"
            "    by_kind.setdefault(d.obj['kind'], []).append(d.obj)\n"
            "header = ['kschedctl snapshot of ' + sys.argv[1] + ' (bench/big.py)']\n"
            "with SnapshotWriter(sys.argv[2], header=header, server_version=None, as_json=False) as w:\n"
            "    for res in RESOURCES:\n"
            "        w.take(res, [by_kind.pop(res.kind, [])])\n"
            "assert not by_kind, sorted(by_kind)\n"
        )
        tmp = snap_file.with_suffix(".tmp")
        env = {**os.environ, "PYTHONPATH": str(REPO), "KSCHEDCTL_NO_CACHE": "1"}
        subprocess.run([sys.executable, "-c", code, str(yaml_file), str(tmp)], check=True, env=env)
        tmp.replace(snap_file)
    return yaml_file, snap_file


def loadavg() -> str:
    try:
        return Path("/proc/loadavg").read_text().split()[0]
    except OSError:
        return "?"


def explain(perf: Path, snapshot: Path, cache_home: Path) -> tuple[Run, str]:
    d = perf / SCENARIO
    args = ["explain", "pod", "-f", str(d / "pod.yaml"), "--snapshot", str(snapshot), "--config", str(d / "config.yaml"),
            "-o", "json"]
    load = loadavg()
    return run_kschedctl(args, cache_home, f"explain on {snapshot.name}"), load


def time_go(oracle: Path, perf: Path, cluster: Path, cache: Path) -> GoTiming | None:
    """``ksched-oracle -bench 5`` on the cluster."""
    files: dict[str, Path | None] = {"pod.yaml": perf / SCENARIO / "pod.yaml", "config.yaml": perf / SCENARIO / "config.yaml",
                                     "cluster.yaml": cluster}
    return oracle_bench(oracle, cache / "go-big", files, 5, "ksched-oracle")


def measure(perf: Path, files: dict[str, Path], repeat: int) -> tuple[dict[str, list[dict[str, Any]]], set[str]]:
    """Per file form, ``repeat`` (cold, warm) pairs; and the digests of every output (one expected)."""
    rows: dict[str, list[dict[str, Any]]] = {}
    outputs: set[str] = set()
    for form, f in files.items():
        for _ in range(repeat):
            home = Path(tempfile.mkdtemp(prefix="kschedctl-big-xdg-"))
            try:
                pair: dict[str, Any] = {}
                for mode in ("cold", "warm"):
                    run, load = explain(perf, f, home)
                    outputs.add(hashlib.sha256(run.stdout).hexdigest())
                    pair[mode] = {"secs": run.secs, "cpu": run.cpu, "rss_mb": run.rss_mb, "load": load}
                    print(f"{form} {mode}: {run.secs:.1f} s (CPU {run.cpu:.1f} s), {run.rss_mb} MB, load {load}",
                          file=sys.stderr, flush=True)
            finally:
                shutil.rmtree(home, ignore_errors=True)
            rows.setdefault(form, []).append(pair)
    return rows, outputs


def span(values: list[float], fmt: str = "{:.1f}") -> str:
    lo, hi = min(values), max(values)
    return fmt.format(lo) if fmt.format(lo) == fmt.format(hi) else f"{fmt.format(lo)}-{fmt.format(hi)}"


def table(rows: dict[str, list[dict[str, Any]]], go: GoTiming | None, nodes: int) -> str:
    stated = GO_STATED.get(nodes)
    if go is not None:
        go_low = go_high = go.load_s + go.cycle_ms / 1000
        go_text = f"{go_low:.1f} s (load {go.load_s:.1f} s + cycle {go.cycle_ms:.0f} ms, timed now), peak RSS {go.rss_mb} MB"
    elif stated is not None:
        go_low, go_high = stated[0], stated[1]
        go_text = f"{go_low}-{go_high} s, {stated[2]} ({stated[3]})"
    else:
        go_low = go_high = 0.0
        go_text = "not measured (give --go-bin)"
    lines = [
        "| file | cold (no cache) | warm (cache) | peak RSS cold / warm | load average |",
        "|---|---|---|---|---|",
    ]
    for form, pairs in rows.items():
        cells = []
        for mode in ("cold", "warm"):
            secs = [p[mode]["secs"] for p in pairs]
            cpu = [p[mode]["cpu"] for p in pairs]
            text = f"{span(secs)} s (CPU {span(cpu)} s)"
            if go_low:
                text += f" = {span([s / go_high for s in secs] + [s / go_low for s in secs], '{:.2f}')}x Go"
            cells.append(text)
        rss = " / ".join(span([float(p[m]["rss_mb"]) for p in pairs], "{:.0f}") + " MB" for m in ("cold", "warm"))
        loads = ", ".join(p[m]["load"] for p in pairs for m in ("cold", "warm"))
        lines.append(f"| {form} | {cells[0]} | {cells[1]} | {rss} | {loads} |")
    lines.append("")
    lines.append(f"Go load + cycle: {go_text}.")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, default=15000, help="nodes of the generated cluster (default 15000)")
    ap.add_argument("--pods", type=int, help="bound pods (default: ten a node)")
    ap.add_argument("--repeat", type=int, default=2, help="cold+warm pairs per file form (default 2)")
    ap.add_argument("--perf", help="scenario directory (default: ../shared/perf, else bench/perf)")
    ap.add_argument("--cache", default=str(Path.home() / ".cache" / "kschedctl-bench"), help="where generated clusters go")
    ap.add_argument("--forms", nargs="*", default=["yaml", "snapshot"], help="file forms to time: yaml, snapshot")
    ap.add_argument("--go-bin", help="ksched-oracle binary (default: $KSCHED_ORACLE or ~/oracle/bin/ksched-oracle)")
    ap.add_argument("--json", help="also write the measurements to this file")
    args = ap.parse_args(argv)

    perf = find_perf_dir(args.perf)
    cache = Path(args.cache).expanduser()
    pods = args.pods if args.pods is not None else 10 * args.nodes
    yaml_file, snap_file = generate(perf, cache, args.nodes, pods)
    files = {f: p for f, p in (("yaml", yaml_file), ("snapshot", snap_file)) if f in args.forms}
    oracle = find_oracle(args.go_bin)
    go = time_go(oracle, perf, yaml_file, cache) if oracle is not None else None
    rows, outputs = measure(perf, files, args.repeat)
    if len(outputs) != 1:
        raise SystemExit(f"the runs printed {len(outputs)} different traces: every run must print the same one")
    print(f"`kschedctl explain pod -o json`, {args.nodes} nodes / {pods} pods ({SCENARIO}'s pod and config):")
    print(machine_line(perf, oracle))
    print()
    print(table(rows, go, args.nodes))
    if args.json:
        Path(args.json).write_text(json.dumps({"nodes": args.nodes, "pods": pods, "rows": rows, "go": go._asdict() if go else None}, indent=1))


if __name__ == "__main__":
    main()
