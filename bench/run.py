"""Time kschedctl against the real Go framework on the performance scenarios.

The scenarios are ``../shared/perf`` (found by walking up from this repository; ``--perf DIR``
names another place) or, without it, the copy in ``bench/perf``: each has ``pod.yaml``, an
optional ``config.yaml`` and ``CLUSTER``, the ``gen_cluster.py`` command that builds its cluster.
The clusters are generated once into a cache directory outside the repository
(``~/.cache/kschedctl-bench``), as YAML and as the same objects in one JSON ``kind: List``.

Per scenario, in this process (as ``kschedctl explain`` pays it):
  * load: the snapshot file into the cluster model, from YAML and from JSON (no snapshot cache);
  * NodeInfos: the scheduler's per-node aggregates, built once per explain;
  * cycle: the median of ``--runs`` warm scheduling cycles (PreFilter through Bind);
  * agrees: the trace equals ``expected.json`` of the real scheduler, when the scenario has one;
  * Go: the figures of ``perf/README.md`` and, when ``ksched-oracle`` is found (``--go-bin``,
    ``$KSCHED_ORACLE`` or ``~/oracle/bin``), the Go framework timed now (``-bench``) on the same files;
    the cycle ratio is kschedctl's median over Go's, both measured in this run.
And end to end, ``kschedctl explain pod -o json`` as a subprocess from the JSON and the YAML
snapshot, with a cold and a warm snapshot cache (a fresh ``XDG_CACHE_HOME``), with peak RSS.

``kschedctl simulate --replicas N`` (200 by default) of each scenario's pod as a template, under
the default configuration and the ``-p100`` one: pods per second (of the scheduling loop, as the
command reports it), wall time and peak RSS; and, for the default configuration, the peak RSS
of ``--replicas 1000000 --max-pods N``, which simulates the same N pods of a far larger workload
(the copies not reached are never made, so it should match).

The machine may be busy: repeat the run and compare ratios measured in one run.

    python3 bench/run.py [--scenarios c500] [--runs 15] [--no-go] [--no-e2e] [--no-simulate] [--replicas 200]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from kschedctl.check.scenario import compare  # noqa: E402
from kschedctl.config import default_config, load_config  # noqa: E402
from kschedctl.config.types import SchedulerConfig  # noqa: E402
from kschedctl.explain.cycle import run_cycle  # noqa: E402
from kschedctl.framework.nodeinfos import Snapshot  # noqa: E402
from kschedctl.framework.runtime import Framework  # noqa: E402
from kschedctl.plugins import in_tree_registry  # noqa: E402
from kschedctl.snapshot.cluster import Cluster  # noqa: E402
from kschedctl.snapshot.loader import iter_documents, load_cluster, load_pods  # noqa: E402
from kschedctl.snapshot.model import Pod  # noqa: E402


@dataclass
class Scenario:
    name: str
    directory: Path
    cluster_args: list[str]  # gen_cluster.py arguments without the output file
    config: Path | None
    expected: Path | None
    yaml_file: Path = Path()
    json_file: Path = Path()
    row: dict[str, Any] = field(default_factory=dict)


def find_perf_dir(given: str | None) -> Path:
    if given:
        return Path(given)
    for parent in REPO.parents:
        cand = parent / "shared" / "perf"
        if (cand / "gen_cluster.py").is_file():
            return cand
    return REPO / "bench" / "perf"


def read_scenarios(perf: Path, only: list[str]) -> list[Scenario]:
    out = []
    for d in sorted(p for p in perf.iterdir() if (p / "pod.yaml").is_file() and (p / "CLUSTER").is_file()):
        if only and not any(s in d.name for s in only):
            continue
        words = shlex.split((d / "CLUSTER").read_text())
        if not words or not words[0].endswith("gen_cluster.py") or len(words) < 4:
            raise SystemExit(f"{d / 'CLUSTER'}: expected 'gen_cluster.py NODES PODS OUT [SEED]'")
        args = words[1:3] + words[4:]  # drop the output file name
        cfg = d / "config.yaml"
        exp = d / "expected.json"
        out.append(Scenario(d.name, d, args, cfg if cfg.is_file() else None, exp if exp.is_file() else None))
    return out


def go_figures(perf: Path) -> dict[str, tuple[str, str]]:
    """``| scenario | Go load | Go cycle median |`` rows of perf/README.md."""
    rows: dict[str, tuple[str, str]] = {}
    readme = perf / "README.md"
    if not readme.is_file():
        readme = REPO / "bench" / "perf" / "README.md"
    for line in readme.read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and re.match(r"^c\d+-", cells[0]):
            rows[cells[0]] = (cells[1], cells[2])
    return rows


def ms_range(text: str) -> tuple[float, float] | None:
    """``"1.0-1.7 ms"`` -> (1.0, 1.7); ``"61 ms"`` -> (61, 61)."""
    m = re.match(r"^([\d.]+)(?:\s*-\s*([\d.]+))?\s*ms$", text)
    if m is None:
        return None
    lo = float(m.group(1))
    return lo, float(m.group(2) or lo)


def generate(perf: Path, cache: Path, scenarios: list[Scenario]) -> None:
    """Each distinct cluster once, as YAML (gen_cluster.py) and as a JSON List of the same objects."""
    cache.mkdir(parents=True, exist_ok=True)
    for s in scenarios:
        stem = "cluster-" + "-".join(s.cluster_args)
        s.yaml_file = cache / f"{stem}.yaml"
        s.json_file = cache / f"{stem}.json"
        if not s.yaml_file.is_file():
            tmp = s.yaml_file.with_suffix(".yaml.tmp")
            cmd = [sys.executable, str(perf / "gen_cluster.py"), *s.cluster_args[:2], str(tmp), *s.cluster_args[2:]]
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
            tmp.replace(s.yaml_file)
        if not s.json_file.is_file():
            items = [d.obj for d in iter_documents([str(s.yaml_file)])]
            tmp = s.json_file.with_suffix(".json.tmp")
            tmp.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
            tmp.replace(s.json_file)


def find_oracle(given: str | None) -> Path | None:
    for cand in (given, os.environ.get("KSCHED_ORACLE"), str(Path.home() / "oracle" / "bin" / "ksched-oracle")):
        if cand and Path(cand).is_file() and os.access(cand, os.X_OK):
            return Path(cand)
    return None


def time_go(oracle: Path, s: Scenario, cache: Path, runs: int) -> GoTiming | None:
    """``ksched-oracle -bench`` on the scenario's files."""
    files = {"pod.yaml": s.directory / "pod.yaml", "config.yaml": s.config, "cluster.yaml": s.yaml_file}
    return oracle_bench(oracle, cache / "go" / s.name, files, runs, f"ksched-oracle on {s.name}")


class GoTiming(NamedTuple):
    """What ``ksched-oracle -bench`` printed (its load, the median of its warm cycles) and its peak RSS."""

    load_s: float
    cycle_ms: float
    rss_mb: int


def oracle_bench(oracle: Path, d: Path, files: dict[str, Path | None], runs: int, what: str) -> GoTiming | None:
    """``ksched-oracle -bench RUNS`` on a directory ``d`` holding links to ``files`` (name -> file; None:
    left out); None, with a note, when it printed no timing."""
    d.mkdir(parents=True, exist_ok=True)
    for name, src in files.items():
        link = d / name
        if link.is_symlink() or link.exists():
            link.unlink()
        if src is not None:
            link.symlink_to(src.resolve())
    with tempfile.TemporaryFile("w+") as out_file:
        p = subprocess.Popen([str(oracle), "-bench", str(runs), "-o", os.devnull, str(d)], stdout=out_file,
                             stderr=subprocess.STDOUT, text=True)
        _, _, usage = os.wait4(p.pid, 0)
        p.returncode = 0  # (reaped by wait4)
        out_file.seek(0)
        out = out_file.read()
    load = re.search(r"load:\s*([\d.]+)\s*s", out)
    median = re.search(r"median\s*([\d.]+)\s*ms", out)
    if load is None or median is None:
        print(f"note: {what} printed no timing: {out.strip()[:200]}", file=sys.stderr)
        return None
    return GoTiming(float(load.group(1)), float(median.group(1)), usage.ru_maxrss // 1024)


def config_of(s: Scenario) -> SchedulerConfig:
    return load_config(str(s.config)) if s.config else default_config()


def timed(fn: Any) -> tuple[float, Any]:
    t = time.perf_counter()
    result = fn()
    return time.perf_counter() - t, result


def time_cycles(cluster: Cluster, s: Scenario, runs: int) -> None:
    pod: Pod = load_pods(str(s.directory / "pod.yaml"))[0]
    cfg = config_of(s)
    cluster.default_priority(pod)
    snap_s, snapshot = timed(lambda: Snapshot(cluster, exclude_pod_uids=(pod.uid,)))
    fw = Framework(cfg.profiles[0], in_tree_registry(), snapshot)
    trace = run_cycle(fw, pod, cfg)  # warm-up
    times = []
    for _ in range(runs):
        secs, trace = timed(lambda: run_cycle(fw, pod, cfg))
        times.append(secs)
    s.row["nodeinfos_ms"] = snap_s * 1000
    s.row["cycle_ms"] = statistics.median(times) * 1000
    s.row["evaluated"] = f"{len(trace.filter)} filtered, {len(trace.totals)} scored"
    if s.expected is not None:
        diffs = compare(json.loads(s.expected.read_text()), trace.to_dict(), exact=True)
        s.row["agrees"] = "yes" if not diffs else f"NO ({len(diffs)} differences, first: {diffs[0]})"


#: Runs ``python -m kschedctl ARGS`` and, at exit, writes the process's own peak RSS (VmHWM) to a file.
#: (The rusage of a child counts the parent's memory at fork time on Linux, so it cannot be used here.)
_RUN_WITH_HWM = """
import atexit, os, runpy, sys
def _hwm():
    try:
        with open("/proc/self/status") as f:
            kb = next(line.split()[1] for line in f if line.startswith("VmHWM:"))
    except (OSError, StopIteration):
        return
    with open(os.environ["KSCHEDCTL_BENCH_HWM"], "w") as out:
        out.write(kb)
atexit.register(_hwm)
sys.argv = ["kschedctl", *sys.argv[1:]]
runpy.run_module("kschedctl", run_name="__main__", alter_sys=True)
"""


@dataclass
class Run:
    """One ``kschedctl`` subprocess: wall seconds, peak RSS in MB, CPU seconds, stdout."""

    secs: float
    rss_mb: int
    cpu: float
    stdout: bytes


def run_kschedctl(args: list[str], cache_home: Path, what: str) -> Run:
    """``kschedctl ARGS`` as a subprocess with its own snapshot cache directory (exit status 0 or 1)."""
    hwm = cache_home / "hwm"
    env = {**os.environ, "XDG_CACHE_HOME": str(cache_home), "PYTHONPATH": str(REPO), "KSCHEDCTL_BENCH_HWM": str(hwm)}
    env.pop("KSCHEDCTL_NO_CACHE", None)
    with tempfile.TemporaryFile() as out:
        t = time.perf_counter()
        p = subprocess.Popen([sys.executable, "-c", _RUN_WITH_HWM, *args], stdout=out, stderr=subprocess.PIPE, env=env)
        assert p.stderr is not None
        errors = p.stderr.read()
        _, status, usage = os.wait4(p.pid, 0)  # CPU times are the child's own (its peak RSS is not)
        secs = time.perf_counter() - t
        out.seek(0)
        stdout = out.read()
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode not in (0, 1):
        raise SystemExit(f"{what} failed: {errors.decode()[-500:]}")
    rss_mb = int(hwm.read_text()) // 1024 if hwm.is_file() else -1
    return Run(secs, rss_mb, usage.ru_utime + usage.ru_stime, stdout)


def run_explain(s: Scenario, snapshot_file: Path, cache_home: Path) -> tuple[float, int, float]:
    """(seconds, peak RSS in MB, CPU seconds) of ``kschedctl explain pod -o json`` as a subprocess."""
    args = ["explain", "pod", "-f", str(s.directory / "pod.yaml"), "--snapshot", str(snapshot_file), "-o", "json"]
    if s.config:
        args += ["--config", str(s.config)]
    r = run_kschedctl(args, cache_home, f"explain on {s.name}")
    return r.secs, r.rss_mb, r.cpu


def time_e2e(s: Scenario) -> None:
    for kind, f in (("json", s.json_file), ("yaml", s.yaml_file)):
        home = Path(tempfile.mkdtemp(prefix="kschedctl-bench-xdg-"))
        try:
            cold = run_explain(s, f, home)
            warm = run_explain(s, f, home)
        finally:
            shutil.rmtree(home, ignore_errors=True)
        s.row[f"e2e_{kind}"] = (cold, warm)


@dataclass
class SimulateCase:
    """``kschedctl simulate`` of one perf pod as a template, on one cluster, under one configuration."""

    name: str  # e.g. c500-plain-default
    pod: Path
    snapshot: Path
    config: Path | None
    row: dict[str, Any] = field(default_factory=dict)


def simulate_cases(scenarios: list[Scenario]) -> list[SimulateCase]:
    """Each distinct (cluster, pod) of the scenarios under the default configuration and under the
    ``percentageOfNodesToScore: 100`` one of its ``-p100`` scenario."""
    by_pod: dict[tuple[Path, str], list[Scenario]] = {}
    for s in scenarios:
        by_pod.setdefault((s.json_file, (s.directory / "pod.yaml").read_text()), []).append(s)
    cases: list[SimulateCase] = []
    for group in by_pod.values():
        base = re.sub(r"-(p100|default)$", "", group[0].name)
        cases.append(SimulateCase(f"{base}-default", group[0].directory / "pod.yaml", group[0].json_file, None))
        p100 = next((s for s in group if s.name.endswith("-p100") and s.config), None)
        if p100 is not None:
            cases.append(SimulateCase(f"{base}-p100", p100.directory / "pod.yaml", p100.json_file, p100.config))
    return cases


def run_simulate(case: SimulateCase, replicas: int, max_pods: int | None = None) -> tuple[Run, dict[str, Any]]:
    """``kschedctl simulate -f POD --replicas N -o json`` (JSON snapshot) and its JSON result."""
    args = ["simulate", "-f", str(case.pod), "--snapshot", str(case.snapshot), "--replicas", str(replicas), "-o", "json"]
    if case.config:
        args += ["--config", str(case.config)]
    if max_pods is not None:
        args += ["--max-pods", str(max_pods)]
    home = Path(tempfile.mkdtemp(prefix="kschedctl-bench-xdg-"))
    try:
        r = run_kschedctl(args, home, f"simulate on {case.name}")
    finally:
        shutil.rmtree(home, ignore_errors=True)
    return r, json.loads(r.stdout)


def time_simulations(cases: list[SimulateCase], replicas: int, big: int) -> None:
    """Pods per second of each case, and peak RSS with ``replicas`` copies and with ``big`` copies of
    which the same ``replicas`` are simulated (``--max-pods``): the pods not reached cost no memory."""
    for case in cases:
        r, result = run_simulate(case, replicas)
        case.row.update(
            placed=result["summary"]["placed"],
            pods=result["summary"]["pods"],
            cycles_s=result["timing"]["elapsedSeconds"],
            rate=result["timing"]["podsPerSecond"],
            wall_s=r.secs,
            rss_mb=r.rss_mb,
        )
        if big and case.name.endswith("-default"):
            r_big, result_big = run_simulate(case, big, max_pods=replicas)
            case.row.update(big_rss_mb=r_big.rss_mb, big_placed=result_big["summary"]["placed"])


def print_simulations(cases: list[SimulateCase], replicas: int, big: int) -> None:
    print(f"`kschedctl simulate -f pod.yaml --replicas {replicas} -o json` (subprocess, JSON snapshot; the rate covers the "
          "scheduling cycles, as the command reports it; wall time includes loading):")
    print()
    print(f"| scenario | placed | pods/s | cycles | wall | peak RSS | peak RSS, --replicas {big:,} --max-pods {replicas} |")
    print("|---|---|---|---|---|---|---|")
    for c in cases:
        r = c.row
        big_cell = f"{r['big_rss_mb']} MB ({r['big_placed']} placed)" if "big_rss_mb" in r else "–"
        print(f"| {c.name} | {r['placed']}/{r['pods']} | {r['rate']:.0f} | {r['cycles_s']:.2f} s | {r['wall_s']:.2f} s "
              f"| {r['rss_mb']} MB | {big_cell} |")


def fmt_ratio(ours: float | None, go: float | None) -> str:
    return f"{ours / go:.1f}x" if ours is not None and go else "–"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--perf", help="scenario directory (default: ../shared/perf, else bench/perf)")
    ap.add_argument("--cache", default=str(Path.home() / ".cache" / "kschedctl-bench"), help="where generated clusters go")
    ap.add_argument("--scenarios", nargs="*", default=[], help="only scenarios whose name contains one of these")
    ap.add_argument("--runs", type=int, default=15, help="warm cycles per scenario (Go: -bench 20)")
    ap.add_argument("--go-bin", help="ksched-oracle binary (default: $KSCHED_ORACLE or ~/oracle/bin/ksched-oracle)")
    ap.add_argument("--no-go", action="store_true", help="do not time the Go framework now")
    ap.add_argument("--no-e2e", action="store_true", help="skip the end-to-end explain runs")
    ap.add_argument("--no-simulate", action="store_true", help="skip the simulate runs")
    ap.add_argument("--only-simulate", action="store_true", help="only the simulate runs (bench/simulate.py)")
    ap.add_argument("--replicas", type=int, default=200, help="copies of each pod simulate places (default 200)")
    ap.add_argument("--big-replicas", type=int, default=1_000_000,
                    help="copies asked for in the memory run, of which --replicas are simulated (0: no memory run)")
    ap.add_argument("--json", help="also write the measurements to this file")
    args = ap.parse_args(argv)

    perf = find_perf_dir(args.perf)
    cache = Path(args.cache).expanduser()
    scenarios = read_scenarios(perf, args.scenarios)
    generate(perf, cache, scenarios)
    readme_go = go_figures(perf)
    oracle = None if args.no_go else find_oracle(args.go_bin)

    if args.only_simulate:
        cases = simulate_cases(scenarios)
        time_simulations(cases, args.replicas, args.big_replicas)
        print(machine_line(perf, None, go_column=False))
        print()
        print_simulations(cases, args.replicas, args.big_replicas)
        return
    by_cluster: dict[Path, list[Scenario]] = {}
    for s in scenarios:
        by_cluster.setdefault(s.yaml_file, []).append(s)
    os.environ["KSCHEDCTL_NO_CACHE"] = "1"  # in-process loads parse (and leave the user's cache alone)
    for yaml_file, group in by_cluster.items():
        yaml_s, _ = timed(lambda yaml_file=yaml_file: load_cluster([str(yaml_file)]))
        json_s, cluster = timed(lambda group=group: load_cluster([str(group[0].json_file)]))
        for s in group:
            s.row.update(load_yaml_s=yaml_s, load_json_s=json_s, nodes=len(cluster.nodes), pods=len(cluster.pods))
            if oracle is not None:
                go = time_go(oracle, s, cache, 20)
                if go is not None:
                    s.row["go_load_s"], s.row["go_cycle_ms"] = go.load_s, go.cycle_ms
            time_cycles(cluster, s, args.runs)
        del cluster
    if not args.no_e2e:
        for s in scenarios:
            time_e2e(s)
    cases = [] if args.no_simulate else simulate_cases(scenarios)
    time_simulations(cases, args.replicas, args.big_replicas)

    print(machine_line(perf, oracle))
    print()
    print("| scenario | Go load (README / now) | Go cycle (README / now) | load YAML / JSON | NodeInfos | cycle (median) "
          "| cycle ratio (now / README) | agrees with Go |")
    print("|---|---|---|---|---|---|---|---|")
    for s in scenarios:
        r = s.row
        readme = readme_go.get(s.name)
        go_now_load = f"{r['go_load_s']:.1f} s" if "go_load_s" in r else "–"
        go_now_cycle = f"{r['go_cycle_ms']:.1f} ms" if "go_cycle_ms" in r else "–"
        rng = ms_range(readme[1]) if readme else None
        readme_ratio = "–"
        if rng is not None:
            hi, lo = r["cycle_ms"] / rng[0], r["cycle_ms"] / rng[1]
            readme_ratio = f"{lo:.1f}x" if abs(hi - lo) < 0.05 else f"{lo:.1f}-{hi:.1f}x"
        print(
            f"| {s.name} | {readme[0] if readme else '–'} / {go_now_load} | {readme[1] if readme else '–'} / {go_now_cycle} "
            f"| {r['load_yaml_s']:.2f} s / {r['load_json_s']:.2f} s | {r['nodeinfos_ms']:.0f} ms | {r['cycle_ms']:.1f} ms "
            f"| {fmt_ratio(r['cycle_ms'], r.get('go_cycle_ms'))} / {readme_ratio} | {r.get('agrees', '–')} |"
        )
    if not args.no_e2e:
        print()
        print("`kschedctl explain pod -o json` end to end (subprocess; wall time, CPU time in brackets; cold = empty "
              "snapshot cache, warm = the second run):")
        print()
        print("| scenario | JSON cold | JSON warm | YAML cold | YAML warm | peak RSS (JSON / YAML, cold) |")
        print("|---|---|---|---|---|---|")
        for s in scenarios:
            (jc, jw), (yc, yw) = s.row["e2e_json"], s.row["e2e_yaml"]
            cells = " | ".join(f"{r[0]:.2f} s ({r[2]:.2f})" for r in (jc, jw, yc, yw))
            print(f"| {s.name} | {cells} | {jc[1]} MB / {yc[1]} MB |")
    if cases:
        print()
        print_simulations(cases, args.replicas, args.big_replicas)
    if args.json:
        rows = {s.name: s.row for s in scenarios} | {f"simulate {c.name}": c.row for c in cases}
        Path(args.json).write_text(json.dumps(rows, indent=1, default=str))


def machine_line(perf: Path, oracle: Path | None, *, go_column: bool = True) -> str:
    go = f"; Go timed now: {'yes' if oracle else 'no'}" if go_column else ""
    return (f"machine: {platform.machine()}, {os.cpu_count()} cores, {platform.python_implementation()} "
            f"{platform.python_version()}; scenarios from {perf}{go}")


if __name__ == "__main__":
    main()
