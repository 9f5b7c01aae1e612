"""bench/big.py works: at a tiny size it builds both file forms, runs explain cold and warm on each, and
prints the table (every run printing the same trace). Nothing here is timed: the figures are the
bench's business (docs/benchmark.md)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from kschedctl.snapshot import vouch

BIG = Path(__file__).parent.parent / "bench" / "big.py"


def test_the_bench_runs_at_a_tiny_size(tmp_path: Path) -> None:
    out = tmp_path / "figures.json"
    proc = subprocess.run(
        [sys.executable, str(BIG), "--nodes", "20", "--repeat", "1", "--cache", str(tmp_path / "cache"), "--json", str(out)],
        capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    assert "| yaml |" in proc.stdout and "| snapshot |" in proc.stdout
    assert "not measured (give --go-bin)" in proc.stdout or "timed now" in proc.stdout
    figures = json.loads(out.read_text())
    assert figures["nodes"] == 20 and figures["pods"] == 200
    assert set(figures["rows"]) == {"yaml", "snapshot"}
    snapshot = (tmp_path / "cache" / "cluster-20-200.signed-snapshot.yaml").read_text()
    assert snapshot.startswith("# kschedctl snapshot") and '"kind": "List"' in snapshot.splitlines()[1]
    assert vouch.vouched(snapshot)  # as `kschedctl snapshot` writes it: signed
