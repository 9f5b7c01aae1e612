"""Tables fit the console: at 80, 100, 120, 200 and 20 columns no line is wider than the console,
node and plugin names are never cut, plugin names stay distinct, and no line ends in blanks.

The width comes from COLUMNS, which kschedctl honours also when stdout is not a terminal (CliRunner
here; a real pipe in test_cli_streams.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from kschedctl.cli.main import app
from kschedctl.render.layout import aliases
from kschedctl.render.table import WIDE_HINT

ROOT = Path(__file__).parent.parent
DEMO = str(ROOT / "fixtures" / "demo" / "cluster.yaml")
CART = str(ROOT / "fixtures" / "demo" / "cart.yaml")
WIDTHS = [20, 80, 100, 120, 200]
EXPLAIN = ["explain", "pod", "web-7d9f-pending", "-n", "shop", "--snapshot", DEMO]
#: Every extension point's table (the default is the short answer).
EXPLAIN_WIDE = [*EXPLAIN, "-o", "wide"]


def run(width: int, *args: str, input: str | None = None) -> Any:
    return CliRunner().invoke(app, list(args), env={"COLUMNS": str(width)}, input=input)


def trace(*args: str) -> dict[str, Any]:
    return dict(json.loads(CliRunner().invoke(app, [*args, "-o", "json"]).stdout))


def assert_fits(out: str, width: int) -> None:
    for line in out.splitlines():
        assert len(line) <= width, f"{len(line)} > {width}: {line!r}"
        assert line == line.rstrip(), f"trailing blanks: {line!r}"


def words(out: str) -> set[str]:
    return set(re.findall(r"[A-Za-z0-9][A-Za-z0-9.-]*", out))


@pytest.mark.parametrize("width", WIDTHS)
def test_explain_table_fits_and_keeps_names_whole(width: int) -> None:
    r = run(width, *EXPLAIN_WIDE)
    assert r.exit_code == 0, r.output
    out = r.stdout
    assert_fits(out, width)
    t = trace(*EXPLAIN)
    found = words(out)
    # every node Filter evaluated is named in full, and every score plugin (as a header, a row, or in
    # the alias legend); at 20 columns a name longer than the console has to be folded
    for name in [*t["filter"], *t["score"]]:
        if len(name) <= width:
            assert name in found, (name, width)
    # (the -o wide plugin details after the Nodes table shorten long structures on purpose: -o json has them)
    tables = out.split("Nodes (requested")[0]
    assert "…" not in "".join(line for line in tables.splitlines() if not line.startswith("…"))


@pytest.mark.parametrize("width", [80, 100, 120, 200])
def test_score_figures_are_never_cut(width: int) -> None:
    out = run(width, *EXPLAIN).stdout
    t = trace(*EXPLAIN)
    best = sorted(t["totals"], key=lambda n: (-t["totals"][n], n))[0]
    for plugin, s in t["score"].items():
        raw, norm, w, weighted = s["raw"][best], s["normalized"][best], s["weight"], s["weighted"][best]
        cell = f"{raw}×{w}={weighted}" if raw == norm else f"{raw}→{norm}×{w}={weighted}"
        assert cell in out, (plugin, cell, width)


def test_layout_adapts_to_the_width() -> None:
    at = {w: run(w, *EXPLAIN_WIDE).stdout for w in WIDTHS}
    # wide: the full matrix, plugin names as headers
    assert "NodeResourcesBalancedAllocation" in at[200] and "(weight 1)" in at[200]
    # 100-120: the matrix with short aliases and a legend naming each plugin once
    assert "NRBA = NodeResourcesBalancedAllocation" in at[120]
    assert "NRBA = NodeResourcesBalancedAllocation" in at[100]
    # 80: plugins as rows, the best nodes as columns
    assert "Score (raw→normalized×weight=weighted), nodes 1–3 of 9 by total" in at[80]
    assert "more scored nodes" in run(80, *EXPLAIN).stdout  # the short answer shows the best three
    # 80: Filter as one verdict per node (the matrix does not fit)
    assert "✗ TaintToleration: node(s) had untolerated taint(s)" in at[80]
    # 20: stacked, one block per node
    assert "memory-b0  total 873" in at[20]
    assert "PreScore" in at[20] and "TaintToleration:" in at[20] and "┃" not in at[20]


def test_wide_output_at_80_columns_shows_every_scored_node() -> None:
    r = run(80, *EXPLAIN, "-o", "wide")
    assert_fits(r.stdout, 80)
    assert "nodes 7–9 of 9 by total" in r.stdout
    for node in trace(*EXPLAIN)["totals"]:
        assert node in r.stdout


def test_aliases_are_short_and_distinct() -> None:
    names = ["NodeResourcesFit", "NodeResourcesBalancedAllocation", "NodeResourcesFoo", "GPUBinPack", "NodeName", "NodeNumber"]
    got = aliases(names)
    assert got["NodeResourcesFit"] == "NRF"
    assert got["NodeResourcesBalancedAllocation"] == "NRBA"
    assert got["GPUBinPack"] == "GBP"
    assert len(set(got.values())) == len(names)
    assert all(len(a) <= 6 for a in got.values())


@pytest.mark.parametrize("width", [20, 80])
@pytest.mark.parametrize(
    "args",
    [
        ["explain", "pending", "-A", "--snapshot", DEMO],
        ["simulate", "-f", CART, "--snapshot", DEMO, "--replicas", "9"],
        ["diff-profiles", "web-7d9f-pending", "-n", "shop", "--snapshot", DEMO,
         "--config", str(ROOT / "profiles" / "default.yaml"), "--config", str(ROOT / "profiles" / "bin-packing.yaml")],
        ["check", str(ROOT / "tests" / "conformance" / "dev-015-taint-toleration")],
        ["plugins"],
        ["explain", "pod", "checkout-pending", "-n", "shop", "--snapshot", DEMO],
        ["explain", "pod", "web-7d9f-pending", "-n", "shop", "--snapshot", DEMO, "-o", "wide"],
        ["simulate", "--drain", "general-b0", "--force", "--snapshot", DEMO, "--runs", "3", "--seed", "2"],
    ],
    ids=["pending", "simulate", "diff", "check", "plugins", "preemption", "wide", "runs"],
)
def test_every_table_fits(args: list[str], width: int) -> None:
    r = run(width, *args)
    assert r.exit_code in (0, 1), r.output
    assert r.stdout.strip()
    assert_fits(r.stdout, width)


def test_names_stay_whole_in_the_other_tables_at_80() -> None:
    pending = run(80, "explain", "pending", "-A", "--snapshot", DEMO).stdout
    for pod in ("batch/report-pending", "ml/notebook-pending", "ml/train-pending", "shop/canary-gated"):
        assert pod in pending
    plugins = run(80, "plugins").stdout
    assert "NodeResourcesBalancedAllocation" in words(plugins)
    diff = run(
        80, "diff-profiles", "web-7d9f-pending", "-n", "shop", "--snapshot", DEMO,
        "--config", str(ROOT / "profiles" / "default.yaml"), "--config", str(ROOT / "profiles" / "bin-packing.yaml"), "-o", "wide",
    ).stdout
    assert "NodeResourcesBalancedAllocation (w1)" in diff and "general-a2" in words(diff)


def test_wide_output_units_order_and_no_python_literals() -> None:
    out = run(200, *EXPLAIN, "-o", "wide").stdout
    assert "Nodes (requested / allocatable)" in out
    nodes_table = out.split("Nodes (requested / allocatable)", 1)[1]
    row = next(line for line in nodes_table.splitlines() if line.startswith("│ general-a0 "))
    assert "2.15 / 7.91" in row  # cpu in cores, requested then allocatable
    assert "4.8Gi / 30.0Gi" in row and "7 / 110" in row
    assert "False" not in out and "True" not in out and "ignored=false" in out
    # a "why" table only for plugins that have something to say, never an empty one
    titles = [line for line in out.splitlines() if ": why (full structure in -o json)" in line]
    assert titles and all("NodeResourcesFit" not in t for t in titles)
    for title in titles:
        after = out.split(title + "\n", 1)[1].splitlines()
        assert after[3].startswith("│ "), title  # top border, header, separator, then a row


def test_cpu_is_in_cores_in_simulate_too() -> None:
    out = run(200, "simulate", "-f", CART, "--snapshot", DEMO, "--replicas", "2", "--no-pending").stdout
    assert "cpu requested (cores)" in out
    assert "2.15 → 3.15 / 7.91" in out or "3.55 → 4.55 / 15.89" in out


def test_one_feasible_node_says_nothing_is_scored(tmp_path: Path) -> None:
    pod = {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "pinned", "namespace": "shop"},
        "spec": {"nodeSelector": {"kubernetes.io/hostname": "general-a0"},
                 "containers": [{"name": "c", "image": "nginx", "resources": {"requests": {"cpu": "100m"}}}]},
    }
    r = run(120, "explain", "pod", "-f", "-", "--snapshot", DEMO, input=yaml.safe_dump(pod))
    assert r.exit_code == 0, r.output
    first = r.stdout.splitlines()[0]
    assert first == "shop/pinned: schedulable on general-a0 (the only feasible node: nothing is scored)"
    assert "score 0" not in r.stdout and "max score" not in r.stdout
    assert "Selected: general-a0  (the only feasible node: nothing is scored)" in r.stdout


#: The demo's pending pods (README), each with the most lines its short answer may take at 100 columns.
DEMO_PODS = [
    (["web-7d9f-pending", "-n", "shop"], 30),  # schedulable
    (["checkout-pending", "-n", "shop"], 40),
    (["train-pending", "-n", "ml"], 40),
    (["notebook-pending", "-n", "ml"], 40),
    (["report-pending", "-n", "batch"], 40),
    (["canary-gated", "-n", "shop"], 40),
]


@pytest.mark.parametrize(("pod", "most"), DEMO_PODS, ids=lambda v: v[0] if isinstance(v, list) else "")
def test_the_default_answer_fits_a_screen(pod: list[str], most: int) -> None:
    """The default is the short answer: one screen at 100 columns; -o wide has every table."""
    args = ["explain", "pod", *pod, "--snapshot", DEMO]
    for width in (80, 100, 120):
        assert_fits(run(width, *args).stdout, width)
    short = run(100, *args).stdout
    assert len(short.splitlines()) <= most, short
    assert short.splitlines()[-1] == WIDE_HINT
    wide = run(100, *args, "-o", "wide").stdout
    assert "PreEnqueue" in wide and WIDE_HINT not in wide
    if "gated" not in pod[0]:  # (a gated pod stops at PreEnqueue: its short answer is the whole trace)
        assert "Filter (" in wide and "PreFilter" in wide and len(wide.splitlines()) > len(short.splitlines())
        assert "Filter: " in short and "PreFilter" not in short


#: The comparisons of the demo's pods the README shows, each with the most lines its short answer may take at
#: 100 columns: one pod in a screen; every pending pod in a table row each, plus only what differs.
DIFFS = [
    (["diff-versions", "web-7d9f-pending", "-n", "shop", "--from", "1.35", "--to", "1.36"], 20),
    (["diff-versions", "train-pending", "-n", "ml", "--from", "1.33", "--to", "1.34"], 20),
    (["diff-profiles", "web-7d9f-pending", "-n", "shop", "--config", "profiles/default.yaml",
      "--config", "profiles/bin-packing.yaml"], 20),
    (["diff-versions", "--pending", "-A", "--from", "1.35", "--to", "1.36"], 30),
    (["diff-versions", "--pending", "-A", "--from", "1.33", "--to", "1.36"], 60),
    (["diff-profiles", "--pending", "-A", "--config", "profiles/default.yaml", "--config", "profiles/bin-packing.yaml"], 25),
]


@pytest.mark.parametrize(("args", "most"), DIFFS, ids=lambda v: " ".join(v[:3]) if isinstance(v, list) else "")
def test_the_default_comparison_fits_a_screen(args: list[str], most: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """diff-versions and diff-profiles answer in short by default (the per-plugin tables are -o wide's); a pod
    the two sides treat alike is its row of the decisions table, nothing more."""
    from kschedctl.render.diff import DIFF_WIDE_HINT

    monkeypatch.chdir(ROOT)
    full = [*args, "--snapshot", DEMO]
    for width in (80, 100, 120):
        assert_fits(run(width, *full).stdout, width)
    short = run(100, *full).stdout
    lines = short.splitlines()
    assert len(lines) <= most, short
    assert lines[-1] == DIFF_WIDE_HINT and "Scores on the chosen nodes" not in short
    report = json.loads(run(100, *full, "-o", "json").stdout)
    for p in report["pods"]:
        if not p["differs"] and len(report["pods"]) > 1:
            assert sum(1 for line in lines if p["pod"] in line) == 1, p["pod"]  # its row only
    wide = run(100, *full, "-o", "wide").stdout
    assert DIFF_WIDE_HINT not in wide and len(wide.splitlines()) > len(lines)
