"""Progress on stderr for commands that can take seconds: loading, building NodeInfos, cycles done / total.

Shown only when stderr is a terminal, and only once a step has lasted ``DELAY`` seconds (a
quick command draws nothing); transient (the line vanishes when the work ends) and never on
stdout, so ``-o json|yaml`` output and pipes are untouched. One line: a spinner, the step, a
bar and ``done/total`` when the step is counted, and the time the step has taken.

Every command body runs inside ``running()`` (see ``cli.common.guarded``), which makes an Activity
the ``current()`` one; nothing is drawn until the command names a step with ``phase()`` (or a
``counter()`` callback first reports), and ``done()`` removes the line before results are printed.
Notes written to stderr meanwhile appear above the line.

``KSCHEDCTL_PROGRESS_DELAY`` (seconds) overrides the delay; the tests set it to 0.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import TracebackType
from typing import TYPE_CHECKING

from kschedctl.snapshot.forked import harmless

if TYPE_CHECKING:
    from rich.console import Console, RenderableType
    from rich.progress import Progress, ProgressColumn, TaskID

#: Seconds a step lasts before the progress line appears.
DELAY = 0.5


def _delay() -> float:
    try:
        return max(0.0, float(os.environ.get("KSCHEDCTL_PROGRESS_DELAY", DELAY)))
    except ValueError:
        return DELAY


def _counted_columns() -> tuple[ProgressColumn, ProgressColumn]:
    """A bar and ``done/total`` for counted steps; for a step without a total only what is done so far
    (a spinner says enough for the others)."""
    from rich.progress import BarColumn, MofNCompleteColumn, ProgressColumn, Task
    from rich.text import Text

    class OnlyCounted(ProgressColumn):
        def __init__(self, column: ProgressColumn, uncounted: Callable[[Task], str]) -> None:
            super().__init__()
            self.column = column
            self.uncounted = uncounted

        def render(self, task: Task) -> RenderableType:
            return Text(self.uncounted(task)) if task.total is None else self.column.render(task)

    def so_far(task: Task) -> str:
        return f"{int(task.completed)}" if task.completed else ""

    return OnlyCounted(BarColumn(), lambda task: ""), OnlyCounted(MofNCompleteColumn(), so_far)


class Activity:
    """A progress line on stderr. ``phase()`` names the current step (with a total when it is
    counted), ``count()`` moves it on, ``counter()`` makes a ``(done, total)`` callback for the
    core, ``listing`` is the callback a live Source reports pages to. When stderr is not a
    terminal (or ``enabled`` is False) every method does nothing."""

    def __init__(self, console: Console | None = None, *, enabled: bool | None = None) -> None:
        if console is None and enabled is not False:
            from kschedctl.cli.streams import plain_console

            console = plain_console(stderr=True)
        self.enabled = bool(console is not None and console.is_terminal) if enabled is None else enabled
        self.console = console
        self._progress: Progress | None = None
        self._task: TaskID | None = None
        self._label: str | None = None
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None
        self._started = False
        self._stopped = False

    def __enter__(self) -> Activity:
        if self.enabled and self.console is not None:
            from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

            bar, count = _counted_columns()
            self._progress = Progress(
                SpinnerColumn(),
                TextColumn("{task.description}", markup=False),  # the step names files: data, not markup
                bar,
                count,
                TimeElapsedColumn(),
                console=self.console,
                transient=True,
                redirect_stdout=False,  # results are printed once the line is gone; notes (stderr) go above it
            )
        return self

    def __exit__(self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()

    def _schedule_start(self) -> None:
        delay = _delay()
        if delay == 0:
            self._start()
        else:
            self._timer = threading.Timer(delay, self._start)
            self._timer.daemon = True
            self._timer.start()
            harmless([self._timer])

    def _start(self) -> None:
        with self._lock:
            if self._progress is not None and not self._stopped and not self._started:
                before = set(threading.enumerate())
                self._progress.start()
                harmless(set(threading.enumerate()) - before)  # (its refresh thread: a load may still fork)
                self._started = True

    def stop(self) -> None:
        """Remove the line for good (before results are printed)."""
        if self._timer is not None:
            self._timer.cancel()
        with self._lock:
            self._stopped = True
            if self._progress is not None and self._started:
                self._progress.stop()
                self._started = False

    def phase(self, description: str, total: int | None = None) -> None:
        """Start a step: what is being done, and how many units it has when that is known."""
        if self._progress is None or self._stopped:
            return
        self._label = description
        if self._task is None:
            self._task = self._progress.add_task(description, total=total)
            self._schedule_start()
        else:
            self._progress.reset(self._task, description=description, total=total, completed=0)
            if total is None:  # reset keeps the last step's total ("0/20"): this step has none yet
                next(t for t in self._progress.tasks if t.id == self._task).total = None

    def count(self, done: int, total: int | None = None) -> None:
        """``done`` units of the current step are finished (of ``total``, when known)."""
        if self._progress is None or self._task is None or self._stopped:
            return
        if total is None:
            self._progress.update(self._task, completed=done)
        else:
            self._progress.update(self._task, completed=done, total=total)

    def counter(self, description: str) -> Callable[[int, int | None], None]:
        """A ``(done, total)`` callback for a counted step named ``description``."""

        def update(done: int, total: int | None) -> None:
            if self._label != description:
                self.phase(description, total)
            self.count(done, total)

        return update

    def listing(self, resource: str, done: int, total: int | None) -> None:
        """The live Source's progress callback: items listed so far of one resource."""
        label = f"listing {resource}"
        if self._label != label:
            self.phase(label, total)
        self.count(done, total)


_current: list[Activity] = []


@contextmanager
def running() -> Iterator[Activity]:
    """Run a command body with an Activity as the ``current()`` one."""
    with Activity() as act:
        _current.append(act)
        try:
            yield act
        finally:
            _current.remove(act)


def current() -> Activity:
    """The running command's Activity (outside a command: one that draws nothing)."""
    return _current[-1] if _current else Activity(enabled=False)


def done() -> None:
    """The work is over: remove the progress line before results are printed."""
    current().stop()
