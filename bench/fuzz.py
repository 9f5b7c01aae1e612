"""Randomized scenarios judged by the reference: find where kschedctl and kube-scheduler v1.35.4 disagree.

Each case takes a scenario of the corpus (tests/conformance, tests/sequences or tests/extenders),
applies a few random mutations of bench/fuzz_mutate.py (new seeds of the same generator family:
other node counts, sizes, labels, taints, requests, selectors, spread constraints, affinity terms,
priorities, PDBs, nominated pods, DRA objects, volumes, configurations), asks the reference
(``ksched-oracle``, see /work/shared/oracle/README.md) for its answer and compares kschedctl's,
both the fast paths and the reference per-node path (``Framework(fast_paths=False)``).

    python bench/fuzz.py conformance --per-source 3 --seed 1 -j 2 --keep /tmp/fuzz-keep
    python bench/fuzz.py conformance --family 'topology-spread|pod-affinity' --per-source 20
    python bench/fuzz.py sequences --per-source 10 --seed 7
    python bench/fuzz.py extenders --per-source 20 --seed 3

Every case ends as one of: ``agree``; ``disagree`` (fast path, reference path or both; the
scenario is kept under --keep with the reference's expected file and the mutations made);
``known`` (a disagreement already understood, see ``known_quirk``); ``unstable`` (the reference
gave different answers in three runs: what upstream leaves to chance, left out); ``rejected``
(kschedctl refused the input as the API server would, a mutation made it invalid; or both refused
it); ``oracle-error`` (the reference refused what kschedctl accepted); ``crash`` (kschedctl raised:
always a bug). A summary per family is
printed at the end and every case is appended to --log as one JSON line.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from collections import Counter, defaultdict
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("KSCHEDCTL_NO_CACHE", "1")

import fuzz_mutate  # noqa: E402
import yaml  # noqa: E402
from fuzz_mutate import Scenario, mutate, seq_pending_in_cluster  # noqa: E402

ORACLE = os.environ.get("ORACLE_BIN", str(Path.home() / "oracle/bin/ksched-oracle"))
FAMILY = re.compile(r"^(?:dev|own)-(?:ext-)?[0-9]+-(.+)$")
_LOOPBACK = re.compile(r"(https?://)(?:127\.0\.0\.1|localhost)(?::\d+)?")


def family_of(name: str) -> str:
    m = FAMILY.match(name)
    return m.group(1) if m else name


def _load_all(path: Path) -> list[Any]:
    with path.open() as f:
        return [d for d in yaml.load_all(f, Loader=yaml.CSafeLoader) if d is not None]


def load_scenario(d: Path, kind: str) -> Scenario:
    cluster = _load_all(d / "cluster.yaml")
    pods = _load_all(d / ("pods.yaml" if kind == "sequence" else "pod.yaml"))
    config = _load_all(d / "config.yaml")[0] if (d / "config.yaml").is_file() else None
    ext = json.loads((d / "extender.json").read_text()) if (d / "extender.json").is_file() else None
    return Scenario(kind, cluster, pods, config, ext)


def write_scenario(scn: Scenario, d: Path, port: int | None = None) -> None:
    d.mkdir(parents=True, exist_ok=True)
    dump = yaml.CSafeDumper
    (d / "cluster.yaml").write_text(yaml.dump_all(scn.cluster, Dumper=dump, sort_keys=False))
    name = "pods.yaml" if scn.kind == "sequence" else "pod.yaml"
    (d / name).write_text(yaml.dump_all(scn.pods, Dumper=dump, sort_keys=False))
    if scn.config is not None:
        text = yaml.dump(scn.config, Dumper=dump, sort_keys=False)
        if port is not None:
            text = _LOOPBACK.sub(lambda m: f"{m.group(1)}127.0.0.1:{port}", text)
        (d / "config.yaml").write_text(text)
    if scn.extender is not None:
        (d / "extender.json").write_text(json.dumps(scn.extender, indent=2, sort_keys=True) + "\n")
    (d / "MUTATIONS.txt").write_text("\n".join(scn.log) + "\n")


def oracle(d: Path, sequence: bool) -> tuple[dict[str, Any] | None, str]:
    args = [ORACLE, "-o", "-"]
    args += ["-sequence"] if sequence else ["-bind-wait", "1s"]
    try:
        r = subprocess.run([*args, str(d)], capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        return None, "timeout"
    if r.returncode != 0:
        return None, (r.stderr.strip().splitlines() or ["?"])[-1]
    return json.loads(r.stdout), ""


def _stable_view(exp: dict[str, Any], sequence: bool) -> Any:
    from kschedctl.check.runner import comparable

    if sequence:
        return [{k: p.get(k) for k in ("pod", "node", "fitError", "nominatedNodeName", "victims")} for p in exp.get("placements") or []]
    out = comparable(exp)
    out = {k: v for k, v in out.items() if k not in ("notes", "preBind", "bind", "k8sVersion")}
    if isinstance(out.get("extenders"), list):
        out["extenders"] = json.dumps(out["extenders"], sort_keys=True)
    return json.dumps(out, sort_keys=True)


_BINARY_FRACTION = re.compile(r"^[0-9]*\.[0-9]+(Ki|Mi|Gi|Ti|Pi|Ei)$")


_PARTIAL_SCORE = re.compile(r"^(score|totals)\.|^selected:")
_SKIPPED_SCORES = re.compile(r"^totals\.|^selected:")


def known_quirk(d: Path, exp: dict[str, Any], sequence: bool, details: list[str]) -> str | None:
    """Disagreements already understood and left as they are (bench/fuzz-known/ has one scenario of each)."""
    if sequence:
        return None
    if str(exp.get("fitError") or "").startswith("running Score plugins:") and all(
        _PARTIAL_SCORE.match(x) for x in details
    ):
        # a Score plugin's error cancels upstream's parallel Score pass: which calls finished first (and so what
        # the reference's recorder turns into scores, totals and a selection) is goroutine timing
        return "reference records the part of a Score pass an error cancelled (goroutine timing)"
    if exp.get("filter") == {} and exp.get("selected") and not exp.get("preFilterNodeNames"):
        # every Filter plugin of the profile was skipped by its PreFilter: upstream's nodes all pass, but the
        # reference's recorder only sees nodes a Filter plugin was called on, so it records none
        return "reference records no node when every Filter plugin is skipped"
    if exp.get("selected") is None and not exp.get("totals") and exp.get("bind") and all(
        _SKIPPED_SCORES.match(x) for x in details
    ):
        # every Score plugin's PreScore returned Skip: upstream still totals each feasible node (0) and picks one
        # of them, but the reference derives totals and the selection from the Score calls it recorded (none)
        return "reference records no totals or selection when every Score plugin was skipped"
    pods = _load_all(d / "pod.yaml")
    spec = (pods[0].get("spec") or {}) if pods else {}
    pod_level = ((spec.get("resources") or {}).get("requests") or {})
    if spec.get("overhead") and any(_BINARY_FRACTION.match(str(v)) for v in pod_level.values()):
        # upstream's PodRequests adds the overhead into the pod's own spec quantity when that quantity is an
        # inf.Dec (a fraction with a binary suffix): the request grows by the overhead at each call
        return "upstream adds the overhead into a fractional pod-level request in place (inf.Dec aliasing)"
    return None


def _outcome(exp: dict[str, Any], sequence: bool) -> str:
    """A short digest of the reference's answer (to see how far mutations moved the source's)."""
    if sequence:
        return ";".join(f"{p.get('node')}|{p.get('nominatedNodeName')}" for p in exp.get("placements") or [])
    pf = exp.get("postFilter") or {}
    sel = exp.get("selected") or {}
    return f"{sorted(sel.get('candidates') or [])}|{exp.get('fitError')}|{pf.get('nominatedNodeName')}|{pf.get('victims')}"


EXTENDER_VIEW = ("preEnqueue", "preFilter", "preFilterNodeNames", "filter", "postFilter", "preScore", "score", "fitError")


def extender_view(trace: dict[str, Any]) -> dict[str, Any]:
    """What ksched-oracle records of a cycle with extenders: the plugins' verdicts and scores only (a node an
    extender rejected passed every plugin), the PostFilter result and the FitError (which extenders shape)."""
    out = {k: trace.get(k) for k in EXTENDER_VIEW}
    out["filter"] = {n: (v if v.get("plugin") else {"code": "Success"}) for n, v in (trace.get("filter") or {}).items()}
    return out


def run_kschedctl(d: Path, fast: bool) -> tuple[str, list[str]]:
    """("agree"|"disagree"|"rejected"|"crash", details) of kschedctl on the scenario dir."""
    from kschedctl.check.runner import run_scenario
    from kschedctl.errors import InputError
    from kschedctl.framework.runtime import Framework

    defaults = Framework.__init__.__kwdefaults__
    assert defaults is not None
    old = defaults["fast_paths"]
    defaults["fast_paths"] = fast
    try:
        res = run_scenario(d)
    except InputError as e:
        return "rejected", [str(e)]
    except Exception as e:  # a crash is a finding
        if type(e).__name__ in ("ConfigError", "UsageError"):
            return "rejected", [f"{type(e).__name__}: {e}"]
        return "crash", [f"{type(e).__name__}: {e}", traceback.format_exc()[-2000:]]
    finally:
        defaults["fast_paths"] = old
    diffs = res.differences
    if (d / "extender.json").is_file() and res.actual is not None:
        from kschedctl.check.scenario import compare, load_expected

        diffs = compare(extender_view(load_expected(d)), extender_view(res.actual), exact=True)
    if not diffs:
        return "agree", []
    return "disagree", [str(x)[:600] for x in diffs]


def run_case(case: dict[str, Any]) -> dict[str, Any]:
    src = Path(case["source"])
    kind = case["kind"]
    rng = random.Random(case["seed"])
    scn = load_scenario(src, "sequence" if kind == "sequences" else "extender" if kind == "extenders" else "conformance")
    mutate(rng, scn, rng.choice(case["mutations"]), extra=_extra(case.get("pending"), case.get("favour")))
    out: dict[str, Any] = {"family": family_of(src.name), "source": src.name, "seed": case["seed"], "mutations": scn.log}
    t = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="fuzz-") as tmp:
        d = Path(tmp) / f"fz-{src.name}-{case['seed']}"
        server = None
        try:
            if kind == "extenders":
                from tests.extender_server import ExtenderServer

                server = ExtenderServer.from_spec(copy.deepcopy(scn.extender or {}))
                server.__enter__()
            write_scenario(scn, d, server.port if server else None)
            out.update(_judge(d, kind == "sequences", case))
        finally:
            if server is not None:
                server.__exit__(None, None, None)
    out["seconds"] = round(time.perf_counter() - t, 2)
    exp_file = src / ("expected-sequence.json" if kind == "sequences" else "expected.json")
    if "outcome" in out and exp_file.is_file():
        out["moved"] = out["outcome"] != _outcome(json.loads(exp_file.read_text()), kind == "sequences")
    return out


def _judge(d: Path, sequence: bool, case: dict[str, Any]) -> dict[str, Any]:
    exp_name = "expected-sequence.json" if sequence else "expected.json"
    # kschedctl refuses what the API server would: check that first (no reference run needed)
    from kschedctl.errors import InputError

    try:
        from kschedctl.snapshot.loader import load_cluster, load_pods

        load_cluster([str(d / "cluster.yaml")])
        load_pods(str(d / ("pods.yaml" if sequence else "pod.yaml")))
    except InputError as e:
        return {"status": "rejected", "details": [str(e)]}
    exp, err = oracle(d, sequence)
    if exp is None:
        # the reference refused the scenario (a configuration kube-scheduler rejects, mostly): so must kschedctl
        st, det = run_kschedctl(d, True)
        if st == "rejected":
            return {"status": "rejected", "details": [f"both refuse: {err}", *det[:1]]}
        return {"status": "oracle-error", "details": [err, f"kschedctl: {st}", *det[:3]]}
    (d / exp_name).write_text(json.dumps(exp, indent=2) + "\n")
    outcome = _outcome(exp, sequence)
    fast, fdet = run_kschedctl(d, True)
    ref, rdet = run_kschedctl(d, False)
    if fast in ("rejected", "crash"):
        return {"status": fast, "details": fdet}
    if ref == "crash":
        return {"status": "crash", "details": rdet, "path": "reference"}
    if fast == "agree" and ref == "agree":
        return {"status": "agree", "outcome": outcome}
    # disagreement: is the reference stable?
    view = _stable_view(exp, sequence)
    for _ in range(2):
        again, _ = oracle(d, sequence)
        if again is None or _stable_view(again, sequence) != view:
            return {"status": "unstable", "details": (fdet or rdet)[:12]}
    quirk = known_quirk(d, exp, sequence, fdet + rdet)
    if quirk:
        return {"status": "known", "details": [quirk, *(fdet or rdet)[:12]]}
    status = {"fast": fast, "reference": ref}
    kept = None
    if case.get("keep"):
        kept = Path(case["keep"]) / d.name
        if kept.exists():
            shutil.rmtree(kept)
        shutil.copytree(d, kept)
        (kept / "DIFF.txt").write_text("fast path:\n" + "\n".join(fdet) + "\n\nreference path:\n" + "\n".join(rdet) + "\n")
    return {"status": "disagree", "paths": status, "details": (fdet or rdet)[:12], "kept": str(kept) if kept else None}


def _extra(pending: bool | None, favour: str | None) -> list[tuple[float, Any]]:
    """Mutations added to the menu: pending pods in cluster.yaml (sequences), a favoured mutation by name."""
    extra: list[tuple[float, Any]] = [(1.5, seq_pending_in_cluster)] if pending else []
    if favour:
        extra.append((8.0, getattr(fuzz_mutate, favour)))
    return extra


def replay(args: argparse.Namespace) -> None:
    """One case again, written out (no reference run): to study a finding by hand."""
    name, seed = args.replay
    src = next(d for d in sources(args.kind, None) if d.name == name)
    kind = {"sequences": "sequence", "extenders": "extender"}.get(args.kind, "conformance")
    scn = load_scenario(src, kind)
    rng = random.Random(int(seed))
    mutate(rng, scn, rng.choice([int(x) for x in args.mutations.split(",")]), extra=_extra(args.pending, args.favour))
    out = Path(args.keep or ".") / f"fz-{name}-{seed}"
    write_scenario(scn, out)
    print(out)


def sources(kind: str, family: str | None) -> list[Path]:
    base = ROOT / "tests" / {"conformance": "conformance", "sequences": "sequences", "extenders": "extenders"}[kind]
    out = []
    for d in sorted(base.iterdir()):
        if not d.is_dir() or not (d / "cluster.yaml").is_file():
            continue
        if family and not re.search(family, d.name):
            continue
        if kind == "conformance" and d.name.startswith("own-1"):
            continue  # partial expectations of plugin errors
        out.append(d)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("kind", choices=["conformance", "sequences", "extenders"])
    ap.add_argument("--family", help="regular expression on the source scenario's directory name")
    ap.add_argument("--per-source", type=int, default=2, help="cases per corpus scenario")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--mutations", default="1,2,3,4", help="how many mutations a case applies (a choice)")
    ap.add_argument("--pending", action="store_true", help="sequences: also make pods of cluster.yaml pending")
    ap.add_argument("--favour", metavar="MUTATION", help="a mutation of bench/fuzz_mutate.py to pick far more often (pod_crowd, pdb, ...)")
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("--keep", help="keep disagreeing scenarios here")
    ap.add_argument("--log", help="append every case as a JSON line")
    ap.add_argument("--limit", type=int, default=0, help="stop after this many cases")
    ap.add_argument("--replay", nargs=2, metavar=("SOURCE", "SEED"),
                    help="write the case of this corpus scenario and seed into --keep (with --mutations, --pending, --favour as run)")
    args = ap.parse_args()
    if args.replay:
        replay(args)
        return
    srcs = sources(args.kind, args.family)
    muts = [int(x) for x in args.mutations.split(",")]
    cases = []
    for i in range(args.per_source):
        for s in srcs:
            cases.append({"source": str(s), "kind": args.kind, "seed": args.seed * 1_000_003 + len(cases),
                          "mutations": muts, "keep": args.keep, "pending": args.pending, "favour": args.favour, "round": i})
    random.Random(args.seed).shuffle(cases)
    if args.limit:
        cases = cases[: args.limit]
    if args.keep:
        Path(args.keep).mkdir(parents=True, exist_ok=True)
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    log = open(args.log, "a") if args.log else None  # noqa: SIM115
    t0 = time.perf_counter()
    with ProcessPoolExecutor(args.jobs) as pool, contextlib.ExitStack() as stack:
        if log:
            stack.callback(log.close)
        for n, res in enumerate(pool.map(run_case, cases, chunksize=1), 1):
            counts[res["family"]][res["status"]] += 1
            if log:
                log.write(json.dumps(res) + "\n")
                log.flush()
            if res["status"] in ("disagree", "crash"):
                print(f"[{n}/{len(cases)}] {res['status'].upper()} {res['source']} seed={res['seed']}: "
                      f"{(res.get('details') or ['?'])[0][:300]}", file=sys.stderr)
                for m in res["mutations"]:
                    print(f"      {m[:200]}", file=sys.stderr)
            elif n % 50 == 0:
                print(f"[{n}/{len(cases)}] {time.perf_counter() - t0:.0f}s", file=sys.stderr)
    total: Counter[str] = Counter()
    print(f"{'family':50s} " + " ".join(f"{s:>9s}" for s in STATUSES))
    for fam in sorted(counts):
        total.update(counts[fam])
        print(f"{fam:50s} " + " ".join(f"{counts[fam][s]:9d}" for s in STATUSES))
    print(f"{'TOTAL':50s} " + " ".join(f"{total[s]:9d}" for s in STATUSES))


STATUSES = ("agree", "disagree", "known", "unstable", "rejected", "oracle-error", "crash")

if __name__ == "__main__":
    main()
