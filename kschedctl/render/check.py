"""How check results are shown: a table (or JSON/YAML/markdown), then "N passed, M failed" and the failures.

The closing part is written for a CI log, read from the bottom: the counts line, then each
failed scenario with every difference (``FAIL name (path)``), so the reason a job failed is the
last thing printed. Bad input of a scenario is an error, not a failure: it is counted apart
(``1 error``), shown in the table and named on stderr by the CLI. ``check --update`` adds the
diff of every expectation it rewrote, and says why it left the others as they were. The
outcomes and counts themselves come from ``check.report``.
"""

from __future__ import annotations

from rich.console import Console
from rich.text import Text
from tabulate import tabulate

from kschedctl.check.report import counts, failure_lines, outcome
from kschedctl.check.scenario import ScenarioResult
from kschedctl.kube.versions import DEFAULT_FEATURES, gates_text, version_line
from kschedctl.render.data import to_json, to_yaml
from kschedctl.render.layout import Column, print_table

MAX_DIFFS_SHOWN = 5


def summary_line(results: list[ScenarioResult]) -> str:
    """``N passed, M failed``, then ``, K error(s)`` and ``, U updated`` when there are any."""
    c = counts(results)
    line = f"{c['pass']} passed, {c['FAIL']} failed"
    if c["ERROR"]:
        line += f", {c['ERROR']} error" + ("s" if c["ERROR"] > 1 else "")
    if c["updated"]:
        line += f", {c['updated']} updated"
    return line


def _what(r: ScenarioResult) -> str:
    if r.error:
        return f"error: {r.error}"
    shown = [str(d) for d in r.differences[:MAX_DIFFS_SHOWN]]
    if len(r.differences) > MAX_DIFFS_SHOWN:
        shown.append(f"… {len(r.differences) - MAX_DIFFS_SHOWN} more differences")
    return "\n".join(shown)


def failures_text(results: list[ScenarioResult]) -> str:
    """The block after the counts line: each scenario that could not run (bad input) with its error line,
    each failed scenario with its differences."""
    out: list[str] = []
    for r in results:
        if outcome(r) == "ERROR":
            out.append(f"ERROR {r.name} ({r.path}): {r.error}")
        elif outcome(r) == "FAIL":
            n = len(r.differences)
            out.append(f"FAIL {r.name} ({r.path}): {n} difference{'s' if n != 1 else ''}")
            out.extend(f"  {line}" for line in failure_lines(r))
    return "\n".join(out)


def updates_text(results: list[ScenarioResult]) -> str:
    """The diffs of the expectations ``--update`` rewrote."""
    out: list[str] = []
    for r in results:
        if r.updated and r.update is not None:
            out.append(r.update["diff"].rstrip("\n"))
            if r.update.get("note"):
                out.append(f"note: {r.update['file']}: {r.update['note']}")
    return "\n".join(out)


def _print_diff(console: Console, diff: str) -> None:
    for line in diff.splitlines():
        style = "green" if line.startswith("+") and not line.startswith("+++") else None
        style = "red" if line.startswith("-") and not line.startswith("---") else style
        console.print(Text(line, style=style or ""), soft_wrap=True)


def _version_cell(r: ScenarioResult, separator: str) -> str:
    """The release a scenario ran as, and the gates it changed ("" when its input was too bad to tell)."""
    if r.features is None:
        return ""
    gates = gates_text(r.features)
    return r.features.release + (f"{separator}{gates}" if gates else "")


def versions_shown(results: list[ScenarioResult]) -> tuple[str | None, bool]:
    """How a table or markdown report shows the versions the scenarios ran as: a header line when they all
    ran as one that is not the default (None when it is), or a column when they ran as several."""
    lines = {version_line(r.features) for r in results if r.features is not None}
    if len(lines) > 1:
        return None, True
    line = next(iter(lines), None)
    return (line if line is not None and line != version_line(DEFAULT_FEATURES) else None), False


def render_check(results: list[ScenarioResult], fmt: str, console: Console, summary_console: Console | None = None) -> None:
    """The results in ``fmt``; ``-o json|yaml`` print one document and the summary line on ``summary_console``
    (stderr from the CLI), so that stdout parses as a whole. The version each scenario ran as is each
    document's ``kubeVersion``, and heads the table (or is its column when the scenarios ran as several)."""
    if fmt in ("json", "yaml"):
        doc = [r.to_dict() for r in results]
        print(to_json(doc) if fmt == "json" else to_yaml(doc).rstrip("\n"))
        (summary_console or console).print(Text(summary_line(results)))
        return
    header, column = versions_shown(results)
    if header is not None:
        console.print(header + ("\n" if fmt == "markdown" else ""), markup=False)
    updates, failures = updates_text(results), failures_text(results)
    if fmt == "markdown":
        rows = [[r.name, *([_version_cell(r, "<br>")] if column else []), outcome(r), _what(r).replace("\n", "<br>")]
                for r in results]
        headers = ["scenario", *(["kube-scheduler"] if column else []), "result", "differences"]
        print(tabulate(rows, headers=headers, tablefmt="github"))
        if updates:
            print(f"\n```diff\n{updates}\n```")
        print()
        print(summary_line(results))
        return
    styles = {"pass": "green", "FAIL": "bold red", "ERROR": "bold red", "updated": "yellow"}
    cols = [Column("scenario", keep=True), *([Column("kube-scheduler", keep=True)] if column else []),
            Column("result", keep=True), Column("what differed", min_width=20)]
    table: list[list[str | Text]] = [
        [r.name, *([_version_cell(r, "\n")] if column else []), Text(outcome(r), style=styles[outcome(r)]), _what(r)]
        for r in results
    ]
    print_table(console, "kschedctl check", cols, table)
    if updates:
        _print_diff(console, updates)
    console.print(Text(summary_line(results)))
    if failures:
        console.print(Text(failures), soft_wrap=True)
