"""How check results are shown: a table (or JSON/YAML/markdown) and the closing "N passed, M failed" line."""

from __future__ import annotations

from rich.console import Console
from rich.text import Text
from tabulate import tabulate

from kschedctl.check.runner import ScenarioResult
from kschedctl.render.data import to_json, to_yaml
from kschedctl.render.layout import Column, print_table

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


def render_check(results: list[ScenarioResult], fmt: str, console: Console, summary_console: Console | None = None) -> None:
    """The results in ``fmt``; ``-o json|yaml`` print one document and the summary line on ``summary_console``
    (stderr from the CLI), so that stdout parses as a whole."""
    if fmt in ("json", "yaml"):
        doc = [r.to_dict() for r in results]
        print(to_json(doc) if fmt == "json" else to_yaml(doc).rstrip("\n"))
        (summary_console or console).print(Text(summary_line(results)))
        return
    if fmt == "markdown":
        rows = [[r.name, "pass" if r.passed else "FAIL", _what(r).replace("\n", "<br>")] for r in results]
        print(tabulate(rows, headers=["scenario", "result", "differences"], tablefmt="github"))
        print()
        print(summary_line(results))
        return
    cols = [Column("scenario", keep=True), Column("result", keep=True), Column("what differed", min_width=20)]
    table: list[list[str | Text]] = [[r.name, Text("pass", style="green") if r.passed else Text("FAIL", style="bold red"), _what(r)] for r in results]
    print_table(console, "kschedctl check", cols, table)
    console.print(Text(summary_line(results)))
