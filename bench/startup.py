"""Time kschedctl's start-up: ``kschedctl --help`` and ``explain pod`` on the demo snapshot.

Each command runs ``--runs`` times as a subprocess (the console script's own code: ``from
kschedctl.cli.main import run``) and the median and the fastest run are printed, in two ways:

  * installed: with byte-code, as ``pip install`` leaves a package (compiled into a temporary
    ``PYTHONPYCACHEPREFIX`` by a first run, so nothing is written into the repository);
  * no byte-code: ``PYTHONDONTWRITEBYTECODE=1`` and no cache, so every module is compiled
    from source on every run (what an environment that forbids ``.pyc`` files pays).

Then ``python -X importtime`` of the explain command (installed way): the total import time
and the costliest top-level imports.

    python3 bench/startup.py [--runs 15]
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

MAIN = "import sys; from kschedctl.cli.main import run; sys.argv[0] = 'kschedctl'; run()"

COMMANDS = {
    "kschedctl --help": ["--help"],
    "kschedctl explain pod web-7d9f-pending -n shop --snapshot fixtures/demo/cluster.yaml": [
        "explain", "pod", "web-7d9f-pending", "-n", "shop", "--snapshot", "fixtures/demo/cluster.yaml",
    ],
}


def environment(pycache: Path | None) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "KSCHEDCTL_NO_CACHE": "1", "COLUMNS": "200"}
    env.pop("PYTHONPYCACHEPREFIX", None)
    if pycache is None:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    else:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(pycache)
    return env


def run(args: list[str], env: dict[str, str], extra: tuple[str, ...] = ()) -> tuple[float, str]:
    t = time.perf_counter()
    p = subprocess.run([sys.executable, *extra, "-c", MAIN, *args], cwd=REPO, env=env, capture_output=True, text=True)
    secs = time.perf_counter() - t
    if p.returncode not in (0, 1):
        raise SystemExit(f"kschedctl {' '.join(args)} failed: {p.stderr[-500:]}")
    return secs, p.stderr


def time_command(args: list[str], env: dict[str, str], runs: int) -> tuple[float, float]:
    run(args, env)  # warm-up (and, installed, the byte-code)
    times = [run(args, env)[0] for _ in range(runs)]
    return statistics.median(times), min(times)


def import_profile(args: list[str], env: dict[str, str], top: int) -> tuple[float, list[tuple[float, str]]]:
    """Total import time (ms) and the costliest top-level imports from ``-X importtime``."""
    _, err = run(args, env, ("-X", "importtime"))
    rows = []
    for line in err.splitlines():
        m = re.match(r"import time:\s*(\d+) \|\s*(\d+) \| (\S.*)$", line)  # top level: one space before the name
        if m:
            rows.append((int(m.group(2)) / 1000, m.group(3)))
    return sum(ms for ms, _ in rows), sorted(rows, reverse=True)[:top]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--top", type=int, default=8, help="top-level imports listed")
    args = ap.parse_args()
    pycache = Path(tempfile.mkdtemp(prefix="kschedctl-bench-pyc-"))
    try:
        rows = []
        for label, cmd in COMMANDS.items():
            inst = time_command(cmd, environment(pycache), args.runs)
            cold = time_command(cmd, environment(None), args.runs)
            rows.append((label, inst, cold))
        total, top = import_profile(COMMANDS[list(COMMANDS)[-1]], environment(pycache), args.top)
    finally:
        shutil.rmtree(pycache, ignore_errors=True)
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, {platform.python_implementation()} "
          f"{platform.python_version()}; {args.runs} runs each (median / fastest)")
    print()
    print("| command | installed (byte-code) | no byte-code (PYTHONDONTWRITEBYTECODE=1) |")
    print("|---|---|---|")
    for label, (im, imin), (cm, cmin) in rows:
        print(f"| `{label}` | {im:.2f} s / {imin:.2f} s | {cm:.2f} s / {cmin:.2f} s |")
    print()
    print(f"`python -X importtime` of the explain command (installed): {total:.0f} ms of imports; the costliest:")
    print()
    print(", ".join(f"{name} {ms:.0f} ms" for ms, name in top))


if __name__ == "__main__":
    main()
