"""How check results are shown: a table (or JSON/YAML/markdown) and the closing "N passed, M failed" line."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text
from tabulate import tabulate

from kschedctl.check.runner import ScenarioResult
from kschedctl.render.data import to_json, to_yaml

MAX_DIFFS_SHOWN = 5


def summary_line(results: list[ScenarioResult]) -> str:
    passed = sum(1 for r in results if r.passed)
    return f"{passed} passed, {len(results) - passed} failed"


def _what(r: ScenarioResult) -> str:
    if r.error:
        return f"error: {r.error}"
    shown = [str(d) for d in r.differences[:MAX_DIFFS_SHOWN]]
    if len(r.differences) > MAX_DIFFS_SHOWN:
        shown.append(f"… {len(r.differences) - MAX_DIFFS_SHOWN} more differences")
    return "\n".join(shown)


def render_check(results: list[ScenarioResult], fmt: str, console: Console) -> None:
    if fmt == "json":
        print(to_json([r.to_dict() for r in results]))
        print(summary_line(results))
        return
    if fmt == "yaml":
        print(to_yaml([r.to_dict() for r in results]), end="")
        print(summary_line(results))
        return
    if fmt == "markdown":
        rows = [[r.name, "pass" if r.passed else "FAIL", _what(r).replace("\n", "<br>")] for r in results]
        print(tabulate(rows, headers=["scenario", "result", "differences"], tablefmt="github"))
        print()
        print(summary_line(results))
        return
    tbl = Table(title="kschedctl check", title_justify="left")
    tbl.add_column("scenario")
    tbl.add_column("result")
    tbl.add_column("what differed", overflow="fold")
    for r in results:
        tbl.add_row(r.name, Text("pass", style="green") if r.passed else Text("FAIL", style="bold red"), _what(r))
    console.print(tbl)
    console.print(summary_line(results), markup=False, highlight=False)
