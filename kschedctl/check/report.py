"""What a check run concluded: each scenario's outcome, the counts, the exit status, a failure's lines.

Bad input of a scenario is an error, not a failure: it is counted apart and makes the exit
status 2. How the results are shown (table, markdown, the closing lines of a CI log) is
``render.check``'s job; the JUnit report (``check.junit``) reads the same outcomes.
"""

from __future__ import annotations

from kschedctl.check.scenario import ScenarioResult

#: Differences listed per failed scenario after the counts line (-o json lists them all).
MAX_DIFFS_LISTED = 50


def outcome(r: ScenarioResult) -> str:
    """pass, FAIL, ERROR (bad input) or updated (failed, and its expectation was rewritten)."""
    if r.error:
        return "ERROR"
    if r.passed:
        return "pass"
    return "updated" if r.updated else "FAIL"


def counts(results: list[ScenarioResult]) -> dict[str, int]:
    out = {"pass": 0, "FAIL": 0, "ERROR": 0, "updated": 0}
    for r in results:
        out[outcome(r)] += 1
    return out


def exit_status(results: list[ScenarioResult]) -> int:
    """2 when a scenario had bad input, else 1 when one failed (and was not updated), else 0."""
    c = counts(results)
    return 2 if c["ERROR"] else 1 if c["FAIL"] else 0


def failure_lines(r: ScenarioResult, limit: int = MAX_DIFFS_LISTED) -> list[str]:
    """Every difference of a failed scenario (up to ``limit``), and what ``--update`` did not do."""
    lines = [str(d) for d in r.differences[:limit]]
    if len(r.differences) > limit:
        lines.append(f"… {len(r.differences) - limit} more differences (-o json lists them all)")
    if r.update and not r.update.get("written"):
        lines.append(f"not updated: {r.update['reason']}")
    return lines
