"""Shared fixtures, the per-plugin conformance agreement summary, and what keeps the tests off the clock."""

from __future__ import annotations

import importlib.util
import sys
from collections import defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

#: Hypothesis times each example (200 ms by default) and checks that generating data is not slow: both
#: measure the machine, not the code. Off for every property test (a test's own @settings may add more).
#: Examples are drawn from a seed fixed per test, so a run is repeatable and CI never meets an example no
#: earlier run met. Widening the search is a deliberate act: ``--hypothesis-profile=wide`` draws fresh
#: examples each run (``--hypothesis-seed=N`` then repeats one), and more of them where a test sets no count.
settings.register_profile(
    "no-clock", deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)
settings.register_profile(
    "wide", parent=settings.get_profile("no-clock"), derandomize=False, max_examples=1000
)
settings.load_profile("no-clock")

#: Filled by tests/test_conformance.py: plugin -> [scenarios agreeing, scenarios involving it].
CONFORMANCE: dict[str, list[int]] = defaultdict(lambda: [0, 0])
CONFORMANCE_TOTAL: list[int] = [0, 0]


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not CONFORMANCE_TOTAL[1]:
        return
    tr = terminalreporter
    tr.section("agreement with kube-scheduler v1.35.4 (tests/conformance)")
    tr.write_line(f"scenarios agreeing on every field: {CONFORMANCE_TOTAL[0]}/{CONFORMANCE_TOTAL[1]}")
    for plugin in sorted(CONFORMANCE):
        ok, n = CONFORMANCE[plugin]
        tr.write_line(f"  {plugin:34s} {ok}/{n}")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(autouse=True)
def _private_cache_dir(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test reads or writes the user's snapshot cache (~/.cache/kschedctl)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.getbasetemp() / "xdg-cache"))
    monkeypatch.delenv("KSCHEDCTL_NO_CACHE", raising=False)


@pytest.fixture(autouse=True)
def _fix_search_not_timed(monkeypatch: pytest.MonkeyPatch) -> None:
    """``--fix`` searches end by their counted limits (cycle re-runs, probes), never by the wall clock of a
    loaded machine: tests that expect a remedy would otherwise fail when the machine is busy."""
    monkeypatch.setenv("KSCHEDCTL_FIX_SECONDS", "120")


@pytest.fixture(autouse=True)
def _completion_not_timed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Shell completion asks the (local, recorded) API server with a limit of 2 s by default: a loaded
    machine would make it offer nothing. The tests give it a limit no answer comes near."""
    monkeypatch.setenv("KSCHEDCTL_COMPLETION_TIMEOUT", "120")


def script_module(path: Path, name: str) -> ModuleType:
    """The script at ``path`` (not in a package) imported as the module ``name``."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def live_bench() -> ModuleType:
    """bench/live.py as a module: its generated cluster and paging API server serve the live tests too."""
    return script_module(Path(__file__).parent.parent / "bench" / "live.py", "bench_live")


@pytest.fixture
def forks(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """The processes ``forked.Child`` forks during the test (each must be reaped by its end, and no background
    work left)."""
    from kschedctl.snapshot import forked
    from tests.test_forked import reaped

    pids: list[int] = []

    class Recorded(forked.Child):
        def __init__(self, work: Callable[[Callable[[Any], None]], None]) -> None:
            super().__init__(work)
            pids.append(self.pid)

    monkeypatch.setattr(forked, "Child", Recorded)
    yield pids
    assert not forked.background
    assert all(reaped(pid) for pid in pids)


def cache_every_text(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The snapshot cache on, for texts of any size, in a directory of the test's own."""
    from kschedctl.snapshot import cache

    monkeypatch.setattr(cache, "MIN_SIZE", 0)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv(cache.DISABLE_ENV, raising=False)
