"""Independent jobs of one command spread over the usable cores, with the answer of the plain loop.

``explain pending``, ``check`` and ``diff-profiles --pending`` run one job per pod or scenario
(a scheduling cycle or a few), each independent of the others. ``run_jobs(fn, items)`` returns
what ``[fn(item) for item in items]`` returns, computed by worker processes:

* the results come back in the order of ``items``, whatever order the workers finish in;
* the first job (in that order) that raises is run again here, so the exception the caller
  sees, with its traceback, is the one the loop would raise, and no later job counts;
* plugin failures a job records (``framework.failures``: a plugin's exception turned into its
  Error status) are recorded here too, in job order, as the loop would have recorded them;
* workers are forked from this process: they see everything it has loaded (the cluster, the
  configuration, the plugin registry with its entry-point and ``--plugin-module`` plugins), so
  only job numbers travel to them and only results come back; the first job runs here before
  they are forked, so what it builds for every job (a snapshot's indexes, frameworks, modules
  imported on first use) is built once;
* the jobs run here, one after another, when ``jobs`` is 1, when there are fewer than
  ``min_jobs`` of them (a pool costs more than it saves), where processes cannot be forked
  (Windows; and macOS, where forking a process is unsafe), and for any chunk of jobs whose
  worker failed (a pool that cannot start, a worker killed, a result that cannot be sent back).

``jobs`` None or 0 means the usable CPUs (``usable_cpus``), as the ``--jobs`` option's default.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from kschedctl.framework.failures import PluginFailure, collecting, report

if TYPE_CHECKING:  # multiprocessing and concurrent.futures are imported when a pool is made (start-up)
    from concurrent.futures import Future

T = TypeVar("T")
R = TypeVar("R")

#: One job in this many runs here before the workers are forked (see ``run_jobs``).
WARM_UP_FRACTION = 20

#: Chunks per worker: small enough to balance jobs of unequal cost, large enough to keep the traffic low.
CHUNKS_PER_WORKER = 4

#: The job of the pool being run (set before the workers are forked, read by them).
_current: tuple[Callable[[Any], Any], Sequence[Any]] | None = None

#: One job's outcome as a worker sends it back: (it returned, its result, the plugin failures it recorded).
_Outcome = tuple[bool, Any, list[PluginFailure]]


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity mask where the platform has one)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def worker_count(jobs: int | None, n: int, min_jobs: int = 2) -> int:
    """How many processes ``n`` jobs get: ``jobs`` (None or 0: the usable CPUs), at most one per
    job, and 1 (no pool) below ``min_jobs`` jobs."""
    wanted = usable_cpus() if not jobs or jobs < 0 else jobs
    if n < max(2, min_jobs):
        return 1
    return max(1, min(wanted, n))


def _fork_context() -> Any:
    import multiprocessing

    if sys.platform == "darwin" or "fork" not in multiprocessing.get_all_start_methods():
        return None
    return multiprocessing.get_context("fork")


def _chunks(n: int, workers: int) -> list[tuple[int, int]]:
    size = max(1, -(-n // (workers * CHUNKS_PER_WORKER)))
    return [(a, min(n, a + size)) for a in range(0, n, size)]


def _run_chunk(start: int, stop: int) -> list[_Outcome]:
    """In a worker: jobs ``start``..``stop``, stopping at the first that raises (run again by the caller)."""
    assert _current is not None
    fn, items = _current
    out: list[_Outcome] = []
    for i in range(start, stop):
        failures: list[PluginFailure] = []
        try:
            with collecting(failures):
                result = fn(items[i])
        except Exception:
            out.append((False, None, []))
            break
        out.append((True, result, failures))
    return out


def run_jobs(
    fn: Callable[[T], R],
    items: Sequence[T],
    *,
    jobs: int | None = None,
    min_jobs: int = 2,
    warm_up: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> list[R]:
    """``[fn(item) for item in items]``, on ``jobs`` worker processes when that is worth it (see the
    module doc); ``progress`` hears jobs done / total as results arrive.

    The first ``warm_up`` jobs (default: one in ``WARM_UP_FRACTION``, at least one) run here before
    the workers are forked, so that what they build once for every later job (a snapshot's
    indexes, frameworks, modules imported on first use) is inherited instead of being built again
    by each worker."""
    n = len(items)
    if warm_up is None:
        warm_up = max(1, n // WARM_UP_FRACTION)
    workers = worker_count(jobs, n - warm_up, min_jobs)
    context = _fork_context() if workers > 1 else None
    if context is None:
        return _serial(fn, items, progress)
    results: list[R] = _serial(fn, items[:warm_up], None)
    if progress is not None and warm_up:
        progress(warm_up, n)
    rest = items[warm_up:]
    chunks = _chunks(len(rest), workers)

    def report_progress(done: int, total: int) -> None:
        if progress is not None:
            progress(warm_up + done, n)

    outcomes = _pooled(fn, rest, chunks, workers, context, report_progress)
    results.extend(_collect(fn, rest, chunks, outcomes))
    if progress is not None:  # the jobs run again here (a worker failed) were not counted as they finished
        progress(n, n)
    return results


def _collect(
    fn: Callable[[T], R], items: Sequence[T], chunks: list[tuple[int, int]], outcomes: dict[int, list[_Outcome] | None]
) -> list[R]:
    """The results in job order: the workers' (their plugin failures recorded here), and, for a job
    that raised or whose worker failed, the job run again here."""
    results: list[R] = []
    for start, stop in chunks:
        got = outcomes.get(start) or []
        for i in range(start, stop):
            k = i - start
            if k < len(got) and got[k][0]:
                _, result, failures = got[k]
                for f in failures:
                    report(f)
                results.append(result)
            else:  # raised, or its worker failed: the loop's own run (an exception propagates from here)
                results.append(fn(items[i]))
    return results


def _serial(fn: Callable[[T], R], items: Sequence[T], progress: Callable[[int, int], None] | None) -> list[R]:
    results: list[R] = []
    for item in items:
        results.append(fn(item))
        if progress is not None:
            progress(len(results), len(items))
    return results


def _pooled(
    fn: Callable[[Any], Any],
    items: Sequence[Any],
    chunks: list[tuple[int, int]],
    workers: int,
    context: Any,
    progress: Callable[[int, int], None] | None,
) -> dict[int, list[_Outcome] | None]:
    """Each chunk's outcomes by its first job (None: its worker failed, or the pool did not start)."""
    from concurrent.futures import ProcessPoolExecutor, as_completed

    global _current
    outcomes: dict[int, list[_Outcome] | None] = {}
    _current = (fn, items)
    try:
        pool = ProcessPoolExecutor(max_workers=workers, mp_context=context)
    except (OSError, ImportError, NotImplementedError, ValueError):
        _current = None
        return outcomes
    try:
        try:
            futures: dict[Future[list[_Outcome]], int] = {pool.submit(_run_chunk, a, b): a for a, b in chunks}
        except Exception:  # the workers could not be started: every chunk runs here
            return outcomes
        done = 0
        for fut in as_completed(futures):
            try:
                got = fut.result()
            except Exception:  # the worker died or the result could not come back: run the chunk here
                continue
            outcomes[futures[fut]] = got
            done += len(got)
            if progress is not None:
                progress(done, len(items))
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        _current = None
    return outcomes
