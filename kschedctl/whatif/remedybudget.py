"""How much work a remedy search may do (``Budget``), and the count of what it did (``BudgetMeter``).

A search (``whatif.remedies``) re-runs whole scheduling cycles and makes Filter probes; both are
counted, and so is the wall clock. The meter refuses (``OutOfBudget``) the first step over any of
the three limits; the search then lists the kinds of change it did not try.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field, replace
from typing import Any

from kschedctl.parallel import WARM_UP_FRACTION

SECONDS_ENV = "KSCHEDCTL_FIX_SECONDS"
TOTAL_SECONDS_ENV = "KSCHEDCTL_FIX_TOTAL_SECONDS"
#: Without ``KSCHEDCTL_FIX_TOTAL_SECONDS``, several pods' searches get this many times one pod's seconds.
TOTAL_PODS = 4


def _env_seconds(name: str, default: float) -> float:
    try:
        return max(0.0, float(os.environ.get(name, default)))
    except ValueError:
        return default


@dataclass(frozen=True)
class Budget:
    """How much work one pod's search may do."""

    reruns: int = 60  # full scheduling cycles
    probes: int = 600  # Filter passes of a binary search or of a copy count
    #: Wall-clock seconds per pod: 1, or ``KSCHEDCTL_FIX_SECONDS`` (the test suite raises it, so that
    #: a loaded machine cannot cut a search short that the two counted limits above would finish).
    seconds: float = field(default_factory=lambda: _env_seconds(SECONDS_ENV, 1.0))
    #: Wall-clock seconds for the searches of several pods together (``explain pending --fix``): each
    #: pod gets at most its share (``share``). ``KSCHEDCTL_FIX_TOTAL_SECONDS``, else ``TOTAL_PODS`` × seconds.
    total_seconds: float | None = None

    def total(self) -> float:
        if self.total_seconds is not None:
            return self.total_seconds
        return _env_seconds(TOTAL_SECONDS_ENV, TOTAL_PODS * self.seconds)

    def share(self, pods: int, workers: int) -> Budget:
        """This budget for one of ``pods`` searches run on ``workers`` processes within ``total()`` seconds
        (with several workers, the first search runs before they start: ``parallel.run_jobs``)."""
        if pods <= 0:
            return replace(self, total_seconds=self.total())
        first = max(1, pods // WARM_UP_FRACTION) if workers > 1 else 0
        in_a_row = first + -(-(pods - first) // max(1, workers))
        return replace(self, seconds=round(min(self.seconds, self.total() / in_a_row), 3), total_seconds=self.total())

    def text(self) -> str:
        return f"{self.reruns} cycle re-runs, {self.probes} Filter probes, {self.seconds:g} s per pod"

    def to_dict(self) -> dict[str, Any]:
        return {"reruns": self.reruns, "probes": self.probes, "seconds": self.seconds}


class OutOfBudget(Exception):
    """A step the budget has no room for: the search stops there."""


class BudgetMeter:
    """What one pod's search has spent of its ``Budget``: cycle re-runs, Filter probes, seconds."""

    def __init__(self, budget: Budget) -> None:
        self.budget = budget
        self.started = time.monotonic()
        self.reruns = 0
        self.probes = 0

    def spend(self, what: str) -> None:
        """Count one ``"rerun"`` or one ``"probe"``; ``OutOfBudget`` (nothing counted) when the budget
        has none left or the search's time is up."""
        over_time = time.monotonic() - self.started > self.budget.seconds
        if over_time or (what == "rerun" and self.reruns >= self.budget.reruns) or (
            what == "probe" and self.probes >= self.budget.probes
        ):
            raise OutOfBudget
        if what == "rerun":
            self.reruns += 1
        else:
            self.probes += 1

    def seconds(self) -> float:
        """Seconds since the search started."""
        return time.monotonic() - self.started
